/* The verifier: correct plans of every collective pass; every kind of error,
 * hazards included, is reported with its exact message; large generated
 * rings verify quickly. */
#include <time.h>

#include "base/testing.h"
#include "plan/testplans.h"
#include "weft/plan.h"

static weft_plan *parse(const char *text)
{
    weft_plan *p = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_plan_parse(text, strlen(text), "t.plan", &p, &d) != WEFT_OK)
        fprintf(stderr, "parse failed: %s\n", d.msg);
    return p;
}

/* Verifies text and checks the exact message ("" for success). */
static void expect(const char *text, const weft_topo *topo, const char *msg, int line)
{
    weft_plan *p = parse(text);
    if (!p) {
        CHECK(p != NULL);
        return;
    }
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_plan_verify(p, topo, &d);
    if (msg[0] == '\0') {
        if (e != WEFT_OK)
            fprintf(stderr, "line %d: unexpected failure: %s\n", line, d.msg);
        CHECK_ERR(e, WEFT_OK);
    } else {
        if (e != WEFT_EVERIFY)
            fprintf(stderr, "line %d: expected failure\n", line);
        CHECK_ERR(e, WEFT_EVERIFY);
        if (strcmp(d.msg, msg) != 0)
            fprintf(stderr, "line %d:\n", line);
        CHECK_STR(d.msg, msg);
    }
    weft_plan_free(p);
}

#define EXPECT(text, msg) expect(text, NULL, msg, __LINE__)
#define EXPECT_TOPO(text, topo, msg) expect(text, topo, msg, __LINE__)

static void test_good(void)
{
    for (size_t i = 0; i < sizeof weft__good_plans / sizeof weft__good_plans[0]; i++) {
        weft_plan *p = parse(weft__good_plans[i].text);
        CHECK(p != NULL);
        if (!p)
            continue;
        weft_diag d;
        weft_diag_clear(&d);
        weft_err e = weft_plan_verify(p, NULL, &d);
        if (e)
            fprintf(stderr, "%s: %s\n", weft__good_plans[i].name, d.msg);
        CHECK_ERR(e, WEFT_OK);
        weft_plan_free(p);
    }
}

#define AG3 "weft-plan 1\ncoll allgather\nranks 3\nchunks 1\n"
#define AR2 "weft-plan 1\ncoll allreduce\nranks 2\nchunks 1\n"
#define AR3 "weft-plan 1\ncoll allreduce\nranks 3\nchunks 1\n"

static void test_structure(void)
{
    EXPECT(AG3 "op 0 copy 0:out[0] 5:out[0]\n",
           "op 0 (rank 0 -> rank 5, out[0]): destination rank 5 does not exist (the plan has 3 "
           "ranks)");
    EXPECT(AG3 "op 0 nop 3\n",
           "op 0 (nop on rank 3): rank 3 does not exist (the plan has 3 ranks)");
    EXPECT(AG3 "op 0 copy 0:out[2] 1:out[2] n=2\n",
           "op 0 (rank 0 -> rank 1, out[2..3]): source out[2..3] is outside rank 0's out buffer "
           "(3 slots)");
    EXPECT(AG3 "op 0 copy 0:out[0] 1:scratch[0]\n",
           "op 0 (rank 0 -> rank 1, out[0] -> scratch[0]): destination scratch[0] is outside rank "
           "1's scratch buffer (0 slots)");
    EXPECT(AG3 "op 0 copy 0:in[0] 0:out[0]\n",
           "op 0 (rank 0 -> rank 0, in[0] -> out[0]): reads and writes overlapping slots on rank "
           "0");
    EXPECT(AG3 "op 0 copy 0:out[0] 1:out[0] deps=1\nop 1 copy 1:out[1] 2:out[1] deps=0\n",
           "op 0 (rank 0 -> rank 1, out[0]): dependency cycle: op 0 waits for op 1, which waits "
           "for op 0");
    EXPECT(AG3 "op 0 copy 0:out[0] 1:out[0]\nop 1 copy 1:out[1] 2:out[1] deps=1\n",
           "op 1 (rank 1 -> rank 2, out[1]): depends on itself");
    EXPECT(AG3 "op 0 copy 0:out[0] 1:out[0]\nop 1 copy 1:out[1] 2:out[1] deps=2\n"
               "op 2 copy 2:out[2] 0:out[2] deps=3\nop 3 nop 1 deps=1\n",
           "op 1 (rank 1 -> rank 2, out[1]): dependency cycle: op 1 waits for op 2, which waits "
           "for op 3, which waits for op 1");

    /* A dep on an op that does not exist can only be built through the API
     * (the parser refuses it). */
    weft_plan *p = parse(AG3 "op 0 copy 0:out[0] 1:out[0]\n");
    uint32_t bad = 7;
    CHECK_ERR(weft_plan_set_deps(p, 0, &bad, 1), WEFT_OK);
    weft_diag d;
    CHECK_ERR(weft_plan_verify(p, NULL, &d), WEFT_EVERIFY);
    CHECK_STR(d.msg, "op 0 (rank 0 -> rank 1, out[0]): depends on op 7, which does not exist (the "
                     "plan has 1 ops)");
    weft_plan_free(p);
}

static void test_values(void)
{
    EXPECT(AG3 "op 0 copy 1:out[0] 2:out[0]\n",
           "op 0 (rank 1 -> rank 2, out[0]): rank 1 reads out[0], which holds no data");
    EXPECT(AG3 "op 0 reduce 0:out[0] 1:out[0]\n",
           "op 0 (rank 0 -> rank 1, out[0]): rank 1's out[0] holds no data to reduce into");
    EXPECT("weft-plan 1\ncoll allreduce\nranks 2\nchunks 2\nop 0 reduce 0:out[0] 1:out[1]\n",
           "op 0 (rank 0 -> rank 1, out[0] -> out[1]): reduces chunk 0 into rank 1's out[1], "
           "which holds chunk 1");
    EXPECT(AR2 "op 0 reduce 0:out[0] 1:out[0]\nop 1 reduce 0:out[0] 1:out[0] deps=0\n",
           "op 1 (rank 0 -> rank 1, out[0]): the contribution of rank 0 to chunk 0 would be "
           "reduced twice");
    /* The postcondition. */
    EXPECT(AR2 "op 0 reduce 0:out[0] 1:out[0]\n",
           "rank 0 out[0] (chunk 0) lacks the contribution of rank 1 at the end");
    EXPECT("weft-plan 1\ncoll allgather\nranks 2\nchunks 1\n",
           "rank 0 out[1] holds no data at the end (expected chunk 1)");
    EXPECT("weft-plan 1\ncoll allreduce\nranks 1\nchunks 2\nop 0 copy 0:out[0] 0:out[1]\n",
           "rank 0 out[1] holds chunk 0 at the end, expected chunk 1");
    EXPECT("weft-plan 1\ncoll reduce\nranks 3\nroot 2\nchunks 1\n"
           "op 0 reduce 0:in[0] 1:in[0]\nop 1 reduce 1:in[0] 2:in[0] deps=0\n",
           "");
    EXPECT("weft-plan 1\ncoll reduce\nranks 3\nroot 2\nchunks 1\n"
           "op 0 reduce 0:in[0] 1:in[0]\n",
           "rank 2 out[0] (chunk 0) lacks the contribution of rank 0 at the end");
    EXPECT("weft-plan 1\ncoll broadcast\nranks 2\nroot 1\nchunks 1\nop 0 copy 0:out[0] "
           "1:out[0]\n",
           "op 0 (rank 0 -> rank 1, out[0]): rank 0 reads out[0], which holds no data");
    EXPECT("weft-plan 1\ncoll alltoall\nranks 2\nchunks 1\ninplace no\n"
           "op 0 copy 0:in[0] 0:out[0]\nop 1 copy 0:in[1] 1:out[1]\n"
           "op 2 copy 1:in[0] 0:out[1]\nop 3 copy 1:in[1] 1:out[0]\n",
           "rank 1 out[0] holds chunk 3 at the end, expected chunk 1");
}

static void test_hazards(void)
{
    /* A read not ordered after the op that delivers its data. */
    EXPECT(AG3 "op 0 copy 0:out[0] 1:out[0]\n"
               "op 1 copy 1:out[1] 2:out[1]\n"
               "op 2 copy 2:out[2] 0:out[2]\n"
               "op 3 copy 1:out[0] 2:out[0]\n"
               "op 4 copy 2:out[1] 0:out[1] deps=1\n"
               "op 5 copy 0:out[2] 1:out[2] deps=2\n",
           "op 3 (rank 1 -> rank 2, out[0]): rank 1 reads out[0] before op 0 has delivered it");
    /* Two unordered writes of one slot, even of the same value. */
    EXPECT("weft-plan 1\ncoll broadcast\nranks 3\nroot 0\nchunks 1\n"
           "op 0 copy 0:out[0] 2:out[0]\n"
           "op 1 copy 0:out[0] 1:out[0]\n"
           "op 2 copy 1:out[0] 2:out[0] deps=1\n",
           "op 2 (rank 1 -> rank 2, out[0]): rank 2 writes out[0] while op 0 may still be "
           "writing it (no dependency orders them)");
    /* Two reduces into one slot without a dep: the sum is right in either
     * order, but they race on the slot. */
    EXPECT(AR3 "op 0 reduce 0:out[0] 2:out[0]\n"
               "op 1 reduce 1:out[0] 2:out[0]\n"
               "op 2 copy 2:out[0] 0:out[0] deps=0,1\n"
               "op 3 copy 2:out[0] 1:out[0] deps=0,1\n",
           "op 1 (rank 1 -> rank 2, out[0]): rank 2 reads out[0] before op 0 has delivered it");
    /* A reduce-scatter whose second hop lacks its dep: it works when op 0
     * happens to run first. */
    EXPECT("weft-plan 1\ncoll reducescatter\nranks 3\nchunks 1\n"
           "op 0 reduce 0:in[2] 1:in[2]\n"
           "op 1 reduce 1:in[2] 2:in[2]\n"
           "op 2 reduce 1:in[0] 2:in[0]\n"
           "op 3 reduce 2:in[0] 0:in[0] deps=2\n"
           "op 4 reduce 2:in[1] 0:in[1]\n"
           "op 5 reduce 0:in[1] 1:in[1] deps=4\n",
           "op 1 (rank 1 -> rank 2, in[2]): rank 1 reads in[2] before op 0 has delivered it");
    /* A write that may overtake an earlier read of the same slot. */
    EXPECT("weft-plan 1\ncoll allreduce\nranks 2\nchunks 1\nscratch 1\n"
           "op 0 copy 0:out[0] 1:scratch[0]\n"
           "op 1 reduce 1:out[0] 0:out[0]\n"
           "op 2 reduce 1:scratch[0] 1:out[0] deps=0,1\n"
           "op 3 copy 1:out[0] 0:out[0] deps=2\n",
           "op 1 (rank 1 -> rank 0, out[0]): rank 0 overwrites out[0] while op 0 may still be "
           "reading it (no dependency orders them)");
    /* Ordered through a chain of other ops is enough. */
    EXPECT("weft-plan 1\ncoll allreduce\nranks 2\nchunks 1\nscratch 1\n"
           "op 0 copy 0:out[0] 1:scratch[0]\n"
           "op 1 nop 1 deps=0\n"
           "op 2 nop 0 deps=1\n"
           "op 3 reduce 1:out[0] 0:out[0] deps=2\n"
           "op 4 reduce 1:scratch[0] 1:out[0] deps=0\n"
           "op 5 copy 1:out[0] 0:out[0] deps=4\n",
           "op 4 (rank 1 -> rank 1, scratch[0] -> out[0]): rank 1 overwrites out[0] while op 3 "
           "may still be reading it (no dependency orders them)");
    EXPECT("weft-plan 1\ncoll allreduce\nranks 2\nchunks 1\nscratch 1\n"
           "op 0 copy 0:out[0] 1:scratch[0]\n"
           "op 1 nop 1 deps=0\n"
           "op 2 nop 0 deps=1\n"
           "op 3 reduce 1:out[0] 0:out[0] deps=2\n"
           "op 4 reduce 1:scratch[0] 1:out[0] deps=3\n"
           "op 5 copy 1:out[0] 0:out[0] deps=4\n",
           "");
}

static weft_topo *line_topo(void)
{
    /* gpu0 - sw0 - gpu1 and gpu0 - sw1 - gpu1, duplex. */
    weft_topo_builder *b;
    weft_node_id g0, g1, s0, s1;
    weft_topo *t = NULL;
    weft_diag d;
    if (weft_topo_builder_new(&b))
        return NULL;
    weft_topo_builder_add_node(b, "gpu0", WEFT_NODE_COMPUTE, NULL, &g0);
    weft_topo_builder_add_node(b, "gpu1", WEFT_NODE_COMPUTE, NULL, &g1);
    weft_topo_builder_add_node(b, "sw0", WEFT_NODE_SWITCH, NULL, &s0);
    weft_topo_builder_add_node(b, "sw1", WEFT_NODE_SWITCH, NULL, &s1);
    weft_topo_builder_add_duplex(b, g0, s0, weft_rat_int(10), weft_rat_int(0));
    weft_topo_builder_add_duplex(b, g1, s0, weft_rat_int(10), weft_rat_int(0));
    weft_topo_builder_add_duplex(b, g0, s1, weft_rat_int(10), weft_rat_int(0));
    weft_topo_builder_add_link(b, s1, g1, weft_rat_int(10), weft_rat_int(0));
    weft_topo_build(b, &t, &d);
    return t;
}

#define AG2 "weft-plan 1\ncoll allgather\nranks 2\nchunks 1\n"
#define AG2_BACK "op 1 copy 1:out[1] 0:out[1]\n"

static void test_routes(void)
{
    weft_topo *t = line_topo();
    CHECK(t != NULL);
    EXPECT_TOPO(
        AG2 "op 0 copy 0:out[0] 1:out[0] path=1/2:gpu0,sw0,gpu1 path=1/2:gpu0,sw1,gpu1\n" AG2_BACK,
        t, "");
    /* Shares are checked without a topology too. */
    EXPECT(AG2 "op 0 copy 0:out[0] 1:out[0] path=1/2:gpu0,sw0,gpu1\n" AG2_BACK,
           "op 0 (rank 0 -> rank 1, out[0]): route shares sum to 1/2, not 1");
    EXPECT(AG2
           "op 0 copy 0:out[0] 1:out[0] path=3/2:gpu0,sw0,gpu1 path=-1/2:gpu0,sw1,gpu1\n" AG2_BACK,
           "op 0 (rank 0 -> rank 1, out[0]): route path 2 has share -1/2; shares must be "
           "positive");
    EXPECT_TOPO(AG2 "op 0 copy 0:out[0] 1:out[0] path=1:gpu0,sw9,gpu1\n" AG2_BACK, t,
                "op 0 (rank 0 -> rank 1, out[0]): route path 1 names node 'sw9', which the "
                "topology does not have");
    EXPECT_TOPO(AG2 "op 0 copy 0:out[0] 1:out[0] path=1:sw0,gpu1\n" AG2_BACK, t,
                "op 0 (rank 0 -> rank 1, out[0]): route path 1 starts at sw0, not at rank 0's "
                "node gpu0");
    EXPECT_TOPO(AG2 "op 0 copy 0:out[0] 1:out[0] path=1:gpu0,sw0\n" AG2_BACK, t,
                "op 0 (rank 0 -> rank 1, out[0]): route path 1 ends at sw0, not at rank 1's node "
                "gpu1");
    EXPECT_TOPO(AG2 "op 0 copy 0:out[0] 1:out[0]\n"
                    "op 1 copy 1:out[1] 0:out[1] path=1:gpu1,sw1,gpu0\n",
                t,
                "op 1 (rank 1 -> rank 0, out[1]): route path 1 uses a link gpu1 -> sw1, which the "
                "topology does not have");
    EXPECT_TOPO(AG2 "op 0 copy 0:out[0] 1:out[0] path=1:gpu0,gpu1\n" AG2_BACK, t,
                "op 0 (rank 0 -> rank 1, out[0]): route path 1 uses a link gpu0 -> gpu1, which "
                "the topology does not have");
    EXPECT("weft-plan 1\ncoll allgather\nranks 2\nchunks 1\nscratch 1\n"
           "op 0 copy 0:out[0] 0:scratch[0] path=1:gpu0,gpu1\n",
           "op 0 (rank 0 -> rank 0, out[0] -> scratch[0]): a local op cannot have a route");
    EXPECT_TOPO(AG3, t, "the plan has 3 ranks but the topology has 2");
    weft_topo_free(t);
}

/* A ring allreduce on n ranks, n chunks: n-1 reduce steps then n-1 copy
 * steps. Each op depends on the op that delivered its data; with seq, also
 * on the previous op sent by the same rank (two deps per op). */
static weft_plan *ring_allreduce(uint32_t n, bool seq)
{
    weft_plan_info info = {WEFT_COLL_ALLREDUCE, n, {0}, n, 0, true};
    weft_plan *p;
    if (weft_plan_new(&info, &p))
        return NULL;
    for (uint32_t phase = 0; phase < 2; phase++) {
        for (uint32_t k = 0; k + 1 < n; k++) {
            for (uint32_t r = 0; r < n; r++) {
                uint32_t step = phase * (n - 1) + k;
                uint32_t chunk = phase == 0 ? (r + n - k) % n : (r + 1 + n - k) % n;
                weft_op op = {phase ? WEFT_OP_COPY : WEFT_OP_REDUCE,
                              {r},
                              {(r + 1) % n},
                              WEFT_BUF_OUT,
                              WEFT_BUF_OUT,
                              chunk,
                              chunk,
                              1,
                              0};
                uint32_t deps[2], nd = 0;
                if (step > 0)
                    deps[nd++] = (step - 1) * n + (r + n - 1) % n;
                if (seq && step > 0)
                    deps[nd++] = (step - 1) * n + r;
                if (weft_plan_add_op(p, &op, deps, nd, NULL)) {
                    weft_plan_free(p);
                    return NULL;
                }
            }
        }
    }
    return p;
}

static void test_rings(void)
{
    for (int seq = 0; seq < 2; seq++) {
        weft_plan *p = ring_allreduce(64, seq);
        CHECK(p != NULL);
        CHECK_INT(weft_plan_num_ops(p), 2 * 64 * 63);
        weft_diag d;
        weft_diag_clear(&d);
        CHECK_ERR(weft_plan_verify(p, NULL, &d), WEFT_OK);
        /* Dropping the data dep of one op of the copy phase breaks it. */
        uint32_t victim = 63 * 64 + 5 * 64 + 10;
        CHECK_ERR(weft_plan_remove_dep(p, victim, 0), WEFT_OK);
        CHECK_ERR(weft_plan_verify(p, NULL, &d), WEFT_EVERIFY);
        CHECK_STR(d.msg, seq ? "op 4362 (rank 10 -> rank 11, out[6]): rank 10 reads out[6] "
                               "before op 4297 has delivered it"
                             : "op 4362 (rank 10 -> rank 11, out[6]): rank 10 reads out[6] "
                               "before op 4297 has delivered it");
        weft_plan_free(p);
    }
    /* A 256-rank ring (130,560 ops) with two deps per op stays fast (a
     * smaller one under the sanitizers, which are much slower). */
#ifdef WEFT_SANITIZE
    weft_plan *p = ring_allreduce(48, true);
#else
    weft_plan *p = ring_allreduce(256, true);
#endif
    clock_t t0 = clock();
    CHECK_ERR(weft_plan_verify(p, NULL, NULL), WEFT_OK);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    printf("verify ring allreduce, %u ops, 2 deps each: %.3f s\n", weft_plan_num_ops(p), secs);
    CHECK(secs < 20);
    weft_plan_free(p);
}

int main(void)
{
    test_good();
    test_structure();
    test_values();
    test_hazards();
    test_routes();
    test_rings();
    return weft_test_done();
}
