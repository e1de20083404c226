/* The all-to-all schedules (direct, pairwise, bruck, hier, flash) on the
 * fabrics of issue 14: every plan verifies with its fabric, the real-data
 * executor gives the reference byte for byte, the cost model gives the
 * throughput limits worked out by hand, flash runs the BvN rounds of the
 * box matrix one after another, and fabrics without boxes get an error
 * that says why. */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "synth/classic_internal.h"
#include "topo/testing_topo.h"
#include "weft/synth.h"
#include "weft/traffic.h"

static const char *const fabrics[] = {"switch:8", "switch:13", "ring:5", "torus:4x4", "a100:2",
                                      "h100:2",   "mi250:2",   "dgx1",   "clos",      "a100:3"};
static const char *const algos[] = {"direct", "pairwise", "bruck", "hier", "flash"};

/* True when the fabric has boxes (hier and flash apply). */
static bool has_boxes(const char *spec)
{
    if (strcmp(spec, "interleaved") == 0)
        return true;
    return strchr(spec, ':') ? strncmp(spec, "a100", 4) == 0 || strncmp(spec, "h100", 4) == 0 ||
                                   strncmp(spec, "mi250", 5) == 0
                             : strcmp(spec, "clos") == 0;
}

static void check_one(const weft_topo *t, const char *spec, const char *algo)
{
    weft_plan *p = NULL;
    weft_diag d;
    weft_err e = weft_synth_classic(t, algo, WEFT_COLL_ALLTOALL, (weft_rank){0}, &p, &d);
    bool boxes_only = strcmp(algo, "hier") == 0 || strcmp(algo, "flash") == 0;
    if (boxes_only && !has_boxes(spec)) {
        CHECK_ERR(e, WEFT_ETOPO);
        CHECK_CONTAINS(d.msg, "all-to-all needs boxes: at least two hosts (host=) of equal size");
        return;
    }
    CHECK_ERR(e, WEFT_OK);
    if (e) {
        fprintf(stderr, "%s %s: %s\n", spec, algo, d.msg);
        return;
    }
    weft_err ve = weft_plan_verify(p, t, &d);
    CHECK_ERR(ve, WEFT_OK);
    if (ve)
        fprintf(stderr, "%s %s: verify: %s\n", spec, algo, d.msg);
    for (uint64_t seed = 1; !ve && seed <= 2; seed++) {
        weft_exec_opts o;
        weft_exec_opts_init(&o);
        o.elems_per_chunk = 2;
        o.seed = seed;
        o.threads = seed == 2 ? 3 : 1;
        weft_err xe = weft_plan_exec_check(p, &o, &d);
        CHECK_ERR(xe, WEFT_OK);
        if (xe)
            fprintf(stderr, "%s %s seed %llu: exec: %s\n", spec, algo, (unsigned long long)seed,
                    d.msg);
    }
    weft_plan_free(p);
}

/* The plan's exact limit and step count. */
static void check_limit(const char *spec, const char *algo, int64_t num, int64_t den,
                        uint32_t steps)
{
    weft_topo *t = weft__test_topo_spec(spec);
    weft_plan *p = NULL;
    weft_diag d;
    weft_plan_cost cost;
    memset(&cost, 0, sizeof cost);
    CHECK(t != NULL);
    weft_err e =
        t ? weft_synth_classic(t, algo, WEFT_COLL_ALLTOALL, (weft_rank){0}, &p, &d) : WEFT_ENOMEM;
    if (!e)
        e = weft_plan_cost_get(p, t, &cost, &d);
    CHECK_ERR(e, WEFT_OK);
    weft_rat want;
    weft_rat_make(num, den, &want);
    if (!e && !weft_rat_eq(cost.algbw, want)) {
        char g[64];
        weft_rat_format(cost.algbw, g, sizeof g);
        fprintf(stderr, "%s %s: algbw %s, expected %lld/%lld\n", spec, algo, g, (long long)num,
                (long long)den);
    }
    CHECK(!e && weft_rat_eq(cost.algbw, want));
    if (steps)
        CHECK_INT(cost.steps, steps);
    weft_plan_free(p);
    weft_topo_free(t);
}

/* The plan verifies with its fabric and then executes byte-exact; a
 * verify failure is reported as "SPEC WHAT: verify: reason". */
static void check_verify_exec(const weft_plan *p, const weft_topo *t, const char *spec,
                              const char *what)
{
    weft_diag d;
    weft_err ve = weft_plan_verify(p, t, &d);
    CHECK_ERR(ve, WEFT_OK);
    if (ve)
        fprintf(stderr, "%s %s: verify: %s\n", spec, what, d.msg);
    else
        CHECK_ERR(weft_plan_exec_check(p, NULL, &d), WEFT_OK);
}

/* Flash with a skewed matrix (every block non-empty, so the plan verifies
 * as a plain all-to-all): one hot destination receives 20 times more, and
 * rows differ. The plan must verify and execute whatever the balancing
 * and rounds decided. */
static void check_flash_skewed(const char *spec)
{
    weft_topo *t = weft__test_topo_spec(spec);
    CHECK(t != NULL);
    if (!t)
        return;
    uint32_t n = weft_topo_num_ranks(t);
    uint64_t *m = calloc((size_t)n * n, sizeof *m);
    for (uint32_t s = 0; s < n; s++)
        for (uint32_t d = 0; d < n; d++)
            m[(size_t)s * n + d] = (1 + (s * 7 + d * 3) % 5) * (d == 3 ? 20 : 1) * (s % 4 + 1);
    synth_ctx c = {.topo = t, .coll = WEFT_COLL_ALLTOALL, .n = n};
    weft_diag d;
    c.d = &d;
    weft_plan *p = NULL;
    CHECK_ERR(synth_hosts_init(&c.hosts, t), WEFT_OK);
    weft_err e = synth_flash_plan(&c, m, &p);
    CHECK_ERR(e, WEFT_OK);
    if (!e)
        check_verify_exec(p, t, spec, "flash skewed");
    weft_plan_free(p);
    synth_hosts_fini(&c.hosts);
    free(m);
    weft_topo_free(t);
}

/* Flash with every block cut into C chunks placed into the rounds one by
 * one (synth_flash_plan_split), as an alltoallv plan of the skewed matrix
 * above with some blocks empty: it has C chunks per block, verifies and
 * executes byte-exact whatever rounds the pieces fell into, and a block's
 * pieces may be in different rounds, so it has more inter-box ops than
 * the plan of whole blocks. */
static void check_flash_split(const char *spec, uint32_t split)
{
    weft_topo *t = weft__test_topo_spec(spec);
    CHECK(t != NULL);
    if (!t)
        return;
    uint32_t n = weft_topo_num_ranks(t);
    weft_traffic tm;
    weft_diag d;
    CHECK_ERR(weft_traffic_new(n, &tm, &d), WEFT_OK);
    for (uint32_t s = 0; s < n; s++)
        for (uint32_t r = 0; r < n; r++)
            tm.bytes[(size_t)s * n + r] =
                (s + r) % 6 == 0
                    ? 0
                    : (1 + (s * 7 + r * 3) % 5) * (r == 3 ? 20 : 1) * (s % 4 + 1) * 1000;
    synth_ctx c = {.topo = t, .coll = WEFT_COLL_ALLTOALL, .n = n};
    c.d = &d;
    CHECK_ERR(synth_hosts_init(&c.hosts, t), WEFT_OK);
    weft_plan *whole = NULL, *p = NULL;
    CHECK_ERR(synth_flash_plan_split(&c, tm.bytes, 1, &whole), WEFT_OK);
    weft_err e = synth_flash_plan_split(&c, tm.bytes, split, &p);
    CHECK_ERR(e, WEFT_OK);
    if (!e && whole) {
        CHECK_INT(weft_plan_get_info(p)->chunks, split);
        CHECK(weft_plan_num_ops(p) > weft_plan_num_ops(whole));
        CHECK_ERR(weft_plan_set_traffic(p, &tm, &d), WEFT_OK);
        char what[32];
        snprintf(what, sizeof what, "flash split %u", split);
        check_verify_exec(p, t, spec, what);
    }
    weft_plan_free(p);
    weft_plan_free(whole);
    synth_hosts_fini(&c.hosts);
    weft_traffic_free(&tm);
    weft_topo_free(t);
}

/* flash:K without a matrix (every block equal): each block's K chunks all
 * move (a uniform block once weighed 1, so its chunks past the first were
 * empty and never sent), the plan verifies and executes byte-exact. */
static void check_flash_split_uniform(const char *spec, uint32_t split)
{
    weft_topo *t = weft__test_topo_spec(spec);
    CHECK(t != NULL);
    if (!t)
        return;
    weft_plan *p = NULL;
    weft_diag d;
    char algo[32];
    snprintf(algo, sizeof algo, "flash:%u", split);
    weft_err e = weft_synth_classic(t, algo, WEFT_COLL_ALLTOALL, (weft_rank){0}, &p, &d);
    CHECK_ERR(e, WEFT_OK);
    if (!e) {
        CHECK_INT(weft_plan_get_info(p)->chunks, split);
        check_verify_exec(p, t, spec, algo);
    }
    weft_plan_free(p);
    weft_topo_free(t);
}

/* Boxes whose ranks are not consecutive ids (host A holds ranks 0, 2, 4):
 * messages between boxes are cut into runs, and every schedule still
 * verifies and executes. */
static const char interleaved[] =
    "node g0 compute host=A\nnode g1 compute host=B\nnode g2 compute host=A\n"
    "node g3 compute host=B\nnode g4 compute host=A\nnode g5 compute host=B\n"
    "node swA switch\nnode swB switch\nnode core switch\n"
    "duplex g0 swA 300GB/s\nduplex g2 swA 300GB/s\nduplex g4 swA 300GB/s\n"
    "duplex g1 swB 300GB/s\nduplex g3 swB 300GB/s\nduplex g5 swB 300GB/s\n"
    "duplex g0 core 25GB/s\nduplex g1 core 25GB/s\nduplex g2 core 25GB/s\n"
    "duplex g3 core 25GB/s\nduplex g4 core 25GB/s\nduplex g5 core 25GB/s\n";

static void check_interleaved(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_parse(interleaved, sizeof interleaved - 1, "interleaved", &t, &d), WEFT_OK);
    for (size_t a = 0; t && a < sizeof algos / sizeof *algos; a++)
        check_one(t, "interleaved", algos[a]);
    weft_topo_free(t);
}

/* Alltoallv (a2a-core's weft_synth_classic_traffic): a hand-checkable hot
 * destination on a100:2. Every rank of box b0 sends X bytes to b1.gpu3 and
 * nothing else (N = 16, so the plan's size is 8X/16 = X/2). hier gathers
 * the 8 blocks at b0.gpu3 and sends 8X on rail 3: 8X/25 s per GB, algbw
 * (X/2)/(8X/25) = 25/16 GB/s. flash keeps every block on its own rail (X
 * each, as balancing asks: 8X/8) and b1's ranks hand them to b1.gpu3 over
 * NVLink (7X at 300 GB/s, under X/25): algbw (X/2)/(X/25) = 25/2. */
static weft_rat skew_limit(const weft_topo *t, const char *algo, const weft_traffic *m)
{
    weft_rat none = {-1, 1};
    weft_plan *p = NULL;
    weft_diag d;
    weft_plan_cost cost;
    weft_err e = weft_synth_classic_traffic(t, algo, m, 0, &p, &d);
    if (!e)
        e = weft_plan_verify(p, t, &d);
    if (!e)
        e = weft_plan_cost_get(p, t, &cost, &d);
    weft_plan_free(p);
    if (e) {
        fprintf(stderr, "%s with traffic: %s\n", algo, d.msg);
        return none;
    }
    return cost.algbw;
}

static void check_hot_destination(void)
{
    weft_topo *t = weft__test_topo_spec("a100:2");
    weft_traffic m = {0};
    CHECK(t != NULL);
    CHECK_ERR(weft_traffic_new(16, &m, NULL), WEFT_OK);
    if (!t || !m.bytes) {
        weft_topo_free(t);
        return;
    }
    for (uint32_t s = 0; s < 8; s++)
        m.bytes[s * 16 + 11] = 1048576; /* b1.gpu3 is rank 11 */
    weft_rat want;
    weft_rat_make(25, 2, &want);
    CHECK(weft_rat_eq(skew_limit(t, "flash", &m), want));
    weft_rat_make(25, 16, &want);
    CHECK(weft_rat_eq(skew_limit(t, "hier", &m), want));
    weft_traffic_free(&m);
    weft_topo_free(t);
}

/* Every schedule takes a MoE-like matrix with empty blocks (alltoallv):
 * the plan verifies (0-byte blocks need not arrive) and the executor
 * agrees. */
static void check_traffic_all(const char *spec)
{
    weft_topo *t = weft__test_topo_spec(spec);
    CHECK(t != NULL);
    if (!t)
        return;
    uint32_t n = weft_topo_num_ranks(t);
    weft_traffic m = {0};
    CHECK_ERR(weft_traffic_new(n, &m, NULL), WEFT_OK);
    uint64_t st = 12345;
    for (uint32_t s = 0; s < n && m.bytes; s++)
        for (uint32_t d = 0; d < n; d++) {
            uint64_t r = weft_test_rng(&st);
            /* a third empty, rank 1 hot */
            m.bytes[(size_t)s * n + d] = r % 3 == 0 ? 0 : (r >> 8) % 5000 * (d == 1 ? 9 : 1);
        }
    for (size_t a = 0; m.bytes && a < sizeof algos / sizeof *algos; a++) {
        weft_plan *p = NULL;
        weft_diag d;
        weft_err e = weft_synth_classic_traffic(t, algos[a], &m, 0, &p, &d);
        bool boxes_only = strcmp(algos[a], "hier") == 0 || strcmp(algos[a], "flash") == 0;
        if (boxes_only && !has_boxes(spec)) {
            CHECK_ERR(e, WEFT_ETOPO);
            continue;
        }
        CHECK_ERR(e, WEFT_OK);
        if (!e) {
            char what[48];
            snprintf(what, sizeof what, "%s with traffic", algos[a]);
            check_verify_exec(p, t, spec, what);
        }
        weft_plan_free(p);
    }
    weft_traffic_free(&m);
    weft_topo_free(t);
}

typedef struct oom_case {
    const weft_topo *t;
    const char *algo;
    weft_plan *p;
} oom_case;

static weft_err oom_ctor(void *arg)
{
    oom_case *c = arg;
    weft_diag d;
    return weft_synth_classic(c->t, c->algo, WEFT_COLL_ALLTOALL, (weft_rank){0}, &c->p, &d);
}

static void oom_dtor(void *arg)
{
    oom_case *c = arg;
    weft_plan_free(c->p);
    c->p = NULL;
}

int main(void)
{
    for (size_t f = 0; f < sizeof fabrics / sizeof *fabrics; f++) {
        weft_topo *t = weft__test_topo_spec(fabrics[f]);
        CHECK(t != NULL);
        for (size_t a = 0; t && a < sizeof algos / sizeof *algos; a++)
            check_one(t, fabrics[f], algos[a]);
        weft_topo_free(t);
    }

    check_interleaved();
    check_hot_destination();
    check_traffic_all("a100:2");
    check_traffic_all("a100:3");
    check_traffic_all("clos");
    check_traffic_all("switch:8");
    check_flash_skewed("a100:2");
    check_flash_skewed("a100:4");
    check_flash_skewed("clos");
    check_flash_skewed("mi250:2");
    check_flash_split("a100:4", 4);
    check_flash_split("clos", 3);
    check_flash_split_uniform("a100:2", 2);
    check_flash_split_uniform("a100:4", 3);
    check_flash_split_uniform("clos", 4);

    /* Uniform all-to-all of S bytes per rank on B boxes of L ranks with one
     * NIC of b GB/s per rank: a rank sends S (N-L)/N out of its box, over
     * its own NIC in hier and flash (rail i to rail i), so the limit is
     * b N / (N - L). a100:2: 25 x 16 / 8 = 50; a100:4: 25 x 32 / 24 =
     * 100/3; h100:2 (50 GB/s NICs): 100; clos (4 hosts of 8, 50 GB/s
     * NICs): 50 x 32 / 24 = 200/3. Flash on B boxes runs B-1 rounds and a
     * scatter: B steps; hier gathers, then sends: 2. */
    check_limit("a100:2", "flash", 50, 1, 2);
    check_limit("a100:2", "hier", 50, 1, 2);
    check_limit("a100:4", "flash", 100, 3, 4);
    check_limit("a100:4", "hier", 100, 3, 2);
    check_limit("h100:2", "flash", 100, 1, 2);
    check_limit("clos", "flash", 200, 3, 4);
    check_limit("clos", "hier", 200, 3, 2);
    /* Bruck on a switch of N = 2^k ranks at 100 GB/s: every step sends
     * half of a rank's blocks (S/2) up its link, k steps: 200/k. On 13
     * ranks the four steps send 6, 6, 5 and 5 blocks of S/13: 22 S/13 per
     * link, 1300/22 = 650/11. */
    check_limit("switch:8", "bruck", 200, 3, 3);
    check_limit("switch:16", "bruck", 50, 1, 4);
    check_limit("switch:13", "bruck", 650, 11, 4);
    /* Direct on a switch of 16: (N-1)/N of S per link. */
    check_limit("switch:16", "direct", 1600, 15, 1);

    /* Errors name why the fabric does not fit. */
    weft_topo *t = weft__test_topo_spec("dgx1");
    weft_plan *p = NULL;
    weft_diag d;
    CHECK_ERR(weft_synth_classic(t, "flash", WEFT_COLL_ALLTOALL, (weft_rank){0}, &p, &d),
              WEFT_ETOPO);
    CHECK_STR(d.msg, "flash all-to-all needs boxes: at least two hosts (host=) of equal size "
                     "with more than one rank each; this fabric has 1 host group");
    CHECK_ERR(weft_synth_classic(t, "flash", WEFT_COLL_ALLREDUCE, (weft_rank){0}, &p, &d),
              WEFT_EUNSUPPORTED);
    CHECK_STR(d.msg, "algorithm 'flash' does not build allreduce (it builds: alltoall)");
    weft_topo_free(t);
    t = weft__test_topo_spec("switch:4");
    CHECK_ERR(weft_synth_classic(t, "hier", WEFT_COLL_ALLTOALL, (weft_rank){0}, &p, &d),
              WEFT_ETOPO);
    CHECK_STR(d.msg, "hier all-to-all needs boxes: at least two hosts (host=) of equal size "
                     "with more than one rank each; this fabric has 4 host groups of one rank "
                     "(no boxes)");
    weft_topo_free(t);

    /* Allocation failures unwind in every new builder. */
    t = weft__test_topo_spec("a100:2");
    const char *oom_algos[] = {"bruck", "hier", "flash"};
    for (size_t i = 0; t && i < 3; i++) {
        oom_case c = {t, oom_algos[i], NULL};
        CHECK(weft_test_oom_sweep(oom_algos[i], oom_ctor, oom_dtor, &c) > 3);
    }
    weft_topo_free(t);
    return weft_test_done();
}
