/* Every classic algorithm x collective on the fabrics of the issue: the plan
 * verifies (with routes checked against the fabric), the real-data executor
 * gives the reference result byte for byte under several orders, and the
 * cost model gives the exact throughput limits worked out by hand. */
#include <stdlib.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "weft/synth.h"

static const char *const fabrics[] = {"ring:8", "switch:16", "torus:4x4", "a100:2",
                                      "dgx1",   "ring:7",    "switch:13", "switch:2",
                                      "ring:3", "h100:2",    "full:6"};
static const char *const algos[] = {"ring",     "biring",       "rings:3", "dbtree",     "binomial",
                                    "hd",       "rabenseifner", "rd",      "bruck",      "direct",
                                    "pairwise", "hier",         "nccl",    "rings:auto", "relay:1",
                                    "relay:3",  "relay:auto"};

/* Builds, verifies and executes one combination; returns false on failure
 * (after reporting it). */
static bool check_one(const weft_topo *t, const char *spec, const char *algo, weft_coll coll,
                      uint32_t root)
{
    weft_plan *p = NULL;
    weft_diag d;
    weft_err e = weft_synth_classic(t, algo, coll, (weft_rank){root}, &p, &d);
    if (e == WEFT_ETOPO && strcmp(algo, "hier") == 0)
        return true; /* hostless fabric: checked separately */
    if (e) {
        fprintf(stderr, "%s %s %s: build failed: %s\n", spec, algo, weft_coll_name(coll), d.msg);
        return false;
    }
    bool ok = true;
    if (weft_plan_verify(p, t, &d)) {
        fprintf(stderr, "%s %s %s: verify: %s\n", spec, algo, weft_coll_name(coll), d.msg);
        ok = false;
    }
    weft_exec_result *want = NULL;
    if (ok && weft_exec_reference(p, 3, &want))
        ok = false;
    for (uint64_t seed = 1; ok && seed <= 3; seed++) {
        weft_exec_opts o;
        weft_exec_opts_init(&o);
        o.elems_per_chunk = 3;
        o.seed = seed;
        o.threads = seed == 3 ? 4 : 1;
        weft_exec_result *got = NULL;
        if (weft_plan_exec(p, &o, &got, &d) || !weft_exec_compare(got, want, &d)) {
            fprintf(stderr, "%s %s %s seed %llu: exec: %s\n", spec, algo, weft_coll_name(coll),
                    (unsigned long long)seed, d.msg);
            ok = false;
        }
        weft_exec_result_free(got);
    }
    weft_exec_result_free(want);
    weft_plan_cost cost;
    if (ok && weft_plan_cost_get(p, t, &cost, &d)) {
        fprintf(stderr, "%s %s %s: cost: %s\n", spec, algo, weft_coll_name(coll), d.msg);
        ok = false;
    }
    if (ok && (!cost.has_busiest || cost.algbw.num <= 0 || cost.steps == 0))
        ok = false;
    double secs = 0;
    if (ok && (weft_plan_alpha_beta(p, t, 1 << 20, &secs, &d) || !(secs > 0))) {
        fprintf(stderr, "%s %s %s: alpha-beta failed\n", spec, algo, weft_coll_name(coll));
        ok = false;
    }
    weft_plan_free(p);
    return ok;
}

static weft_rat algbw_of(const char *spec, const char *algo, weft_coll coll)
{
    weft_rat none = {-1, 1};
    weft_topo *t = weft__test_topo_spec(spec);
    weft_plan *p = NULL;
    weft_diag d;
    weft_plan_cost cost;
    if (!t || weft_synth_classic(t, algo, coll, (weft_rank){0}, &p, &d) ||
        weft_plan_cost_get(p, t, &cost, &d)) {
        weft_plan_free(p);
        weft_topo_free(t);
        return none;
    }
    weft_plan_free(p);
    weft_topo_free(t);
    return cost.algbw;
}

static void check_algbw(const char *spec, const char *algo, weft_coll coll, int64_t num,
                        int64_t den)
{
    weft_rat got = algbw_of(spec, algo, coll), want;
    weft_rat_make(num, den, &want);
    char g[64], w[64];
    weft_rat_format(got, g, sizeof g);
    weft_rat_format(want, w, sizeof w);
    if (!weft_rat_eq(got, want))
        fprintf(stderr, "%s %s %s: algbw %s, expected %s\n", spec, algo, weft_coll_name(coll), g,
                w);
    CHECK(weft_rat_eq(got, want));
}

/* Allocation-failure sweep: every algorithm family's builder returns
 * WEFT_ENOMEM and frees everything when any allocation fails. */
typedef struct oom_case {
    const weft_topo *t;
    const char *algo;
    weft_coll coll;
    weft_plan *p;
} oom_case;

static weft_err oom_ctor(void *arg)
{
    oom_case *c = arg;
    weft_diag d;
    return weft_synth_classic(c->t, c->algo, c->coll, (weft_rank){1}, &c->p, &d);
}

static void oom_dtor(void *arg)
{
    oom_case *c = arg;
    weft_plan_free(c->p);
    c->p = NULL;
}

static void check_oom(void)
{
    weft_topo *t = weft__test_topo_spec("h100:2");
    if (!t)
        return;
    const struct {
        const char *algo;
        weft_coll coll;
    } cases[] = {{"rings:2", WEFT_COLL_ALLREDUCE}, {"dbtree", WEFT_COLL_BROADCAST},
                 {"binomial", WEFT_COLL_REDUCE},   {"hd", WEFT_COLL_REDUCESCATTER},
                 {"rd", WEFT_COLL_ALLREDUCE},      {"bruck", WEFT_COLL_ALLGATHER},
                 {"pairwise", WEFT_COLL_ALLTOALL}, {"hier", WEFT_COLL_ALLGATHER}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        oom_case c = {t, cases[i].algo, cases[i].coll, NULL};
        CHECK(weft_test_oom_sweep(cases[i].algo, oom_ctor, oom_dtor, &c) > 3);
    }
    weft_topo_free(t);
}

int main(void)
{
    check_oom();
    int combos = 0;
    for (size_t f = 0; f < sizeof fabrics / sizeof *fabrics; f++) {
        weft_topo *t = weft__test_topo_spec(fabrics[f]);
        CHECK(t != NULL);
        if (!t)
            continue;
        uint32_t n = weft_topo_num_ranks(t);
        for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
            for (int c = 0; c < WEFT__COLL_COUNT; c++) {
                if (!weft_classic_supports(algos[a], (weft_coll)c))
                    continue;
                uint32_t roots = weft_coll_has_root((weft_coll)c) ? 2 : 1;
                for (uint32_t r = 0; r < roots; r++) {
                    /* Rooted collectives: root 0 and a root in the middle. */
                    CHECK(
                        check_one(t, fabrics[f], algos[a], (weft_coll)c, r ? (n / 2 + 1) % n : 0));
                    combos++;
                }
            }
        }
        weft_topo_free(t);
    }
    printf("classic: %d algorithm x collective x fabric combinations checked\n", combos);

    /* Throughput limits worked out by hand (bandwidth 100 GB/s). Ring
     * allgather on N ranks sends (N-1)/N of the data over every link. */
    check_algbw("switch:16", "ring", WEFT_COLL_ALLGATHER, 1600, 15);
    check_algbw("switch:16", "ring", WEFT_COLL_REDUCESCATTER, 1600, 15);
    check_algbw("switch:16", "ring", WEFT_COLL_ALLREDUCE, 800, 15);
    check_algbw("ring:8", "ring", WEFT_COLL_ALLGATHER, 800, 7);
    check_algbw("ring:7", "ring", WEFT_COLL_ALLREDUCE, 700, 12);
    /* biring on a unidirectional ring: the reverse ring forwards every hop
     * over N-1 links: the first ring's links carry (N-1)/2N each plus the
     * second ring's (N-1)(N-1)/2N. */
    check_algbw("ring:8", "biring", WEFT_COLL_ALLGATHER, 1600, 56);
    /* On a bidirectional ring both directions are used. */
    check_algbw("biring:8", "biring", WEFT_COLL_ALLGATHER, 1600, 7);
    /* a100:2: the ring crosses boxes twice, each time over one NIC at 25
     * GB/s carrying 15/16 of the data. */
    check_algbw("a100:2", "ring", WEFT_COLL_ALLGATHER, 80, 3);
    /* Broadcast chain: every link carries the whole data once. */
    check_algbw("switch:16", "ring", WEFT_COLL_BROADCAST, 100, 1);
    /* Direct all-to-all on a switch: each rank sends (N-1)/N of its input. */
    check_algbw("switch:16", "direct", WEFT_COLL_ALLTOALL, 1600, 15);

    /* Relayed broadcast on a100:2 (8 GPUs per box, each with its own
     * 25 GB/s NIC, 300 GB/s into NVSwitch). relay:1 leaves through the
     * root's NIC alone; relay:2 through two NICs, half the data each;
     * relay:auto through all eight, 1/8 each, and then the root's NVLink
     * limits: it sends 7 chunks of 1/8 to the relaying host-mates and its
     * own chunk to the 7 others, 7/4 of the data. */
    check_algbw("a100:2", "relay:1", WEFT_COLL_BROADCAST, 25, 1);
    check_algbw("a100:2", "relay:2", WEFT_COLL_BROADCAST, 50, 1);
    check_algbw("a100:2", "relay:auto", WEFT_COLL_BROADCAST, 1200, 7);
    /* Reduce takes the same hops backwards: the same limits, on the
     * reverse links. */
    check_algbw("a100:2", "relay:1", WEFT_COLL_REDUCE, 25, 1);
    check_algbw("a100:2", "relay:2", WEFT_COLL_REDUCE, 50, 1);
    check_algbw("a100:2", "relay:auto", WEFT_COLL_REDUCE, 1200, 7);

    /* Errors. */
    weft_topo *t = weft__test_topo_spec("ring:8");
    weft_plan *p = NULL;
    weft_diag d;
    CHECK_ERR(weft_synth_classic(t, "nosuch", WEFT_COLL_ALLGATHER, (weft_rank){0}, &p, &d),
              WEFT_ENOENT);
    CHECK_STR(d.msg, "unknown algorithm 'nosuch' (weft plan --list lists them)");
    CHECK_ERR(weft_synth_classic(t, "bruck", WEFT_COLL_ALLREDUCE, (weft_rank){0}, &p, &d),
              WEFT_EUNSUPPORTED);
    CHECK_STR(d.msg, "algorithm 'bruck' does not build allreduce (it builds: allgather, alltoall)");
    CHECK_ERR(weft_synth_classic(t, "rings:0", WEFT_COLL_ALLGATHER, (weft_rank){0}, &p, &d),
              WEFT_EINVAL);
    CHECK_STR(d.msg, "rings:0: K must be an integer from 1 to 64");
    CHECK_ERR(weft_synth_classic(t, "ring", WEFT_COLL_BROADCAST, (weft_rank){8}, &p, &d),
              WEFT_EINVAL);
    CHECK_STR(d.msg, "root 8 is not a rank (the fabric has 8 ranks)");
    CHECK_ERR(weft_synth_classic(t, "hier", WEFT_COLL_ALLREDUCE, (weft_rank){0}, &p, &d),
              WEFT_ETOPO);
    CHECK_CONTAINS(d.msg, "hier needs at least two hosts");
    weft_topo_free(t);
    return weft_test_done();
}
