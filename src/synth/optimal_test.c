/* The optimal schedule on the fabrics of the issue: the exact throughputs
 * it must reach (allgather algbw, GB/s), the tree counts behind them, the
 * plan verifying with its routes checked against the fabric, its per-link
 * throughput equal to the bound exactly, real-data execution, the errors
 * for fabrics it cannot serve, and allocation failures. */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "weft/synth.h"

static void rat_text(weft_rat r, char *buf, size_t size)
{
    weft_rat_format(r, buf, size);
}

/* Which construction check_plan asks for: the general tree packing
 * (this file's subject) or the default, which tries the structured one
 * first (optimal_rail_test.c tests that one in depth). */
static bool use_structure;

/* Builds, verifies, costs and (when exec) executes; checks the throughput
 * is `want` both as reported and as the cost model measures it, and
 * returns the info through *info when not NULL. */
static void check_plan(const char *spec, weft_coll coll, uint32_t K, const char *want, bool exec,
                       weft_optimal *info_out)
{
    weft_topo *t = weft__test_topo_spec(spec);
    CHECK(t != NULL);
    if (!t)
        return;
    weft_optimal_opts o;
    weft_optimal_opts_init(&o);
    o.trees_per_root = K;
    o.use_structure = use_structure;
    weft_plan *p = NULL;
    weft_optimal info;
    weft_diag d;
    weft_err e = weft_synth_optimal(t, coll, &o, &p, &info, &d);
    if (e)
        fprintf(stderr, "%s %s K=%u%s: %s\n", spec, weft_coll_name(coll), K,
                use_structure ? "" : " (general)", d.msg);
    CHECK_ERR(e, WEFT_OK);
    if (e) {
        weft_topo_free(t);
        return;
    }
    char got[64], cost[64];
    rat_text(info.algbw, got, sizeof got);
    CHECK_STR(got, want);
    if (weft_plan_verify(p, t, &d)) {
        fprintf(stderr, "%s %s K=%u: verify: %s\n", spec, weft_coll_name(coll), K, d.msg);
        CHECK(false);
    }
    weft_plan_cost c;
    CHECK_ERR(weft_plan_cost_get(p, t, &c, &d), WEFT_OK);
    rat_text(c.algbw, cost, sizeof cost);
    CHECK_STR(cost, want);
    if (K == 0)
        CHECK(weft_rat_eq(info.algbw, info.bound));
    uint32_t nr = weft_topo_num_ranks(t);
    for (uint32_t ph = 0; ph < info.n_phases; ph++) {
        /* Every root's groups hold exactly k trees, each spanning. */
        for (uint32_t r = 0; r < nr; r++) {
            uint64_t sum = 0;
            for (uint32_t i = 0; i < info.phase[ph].n_trees; i++) {
                const weft_optimal_tree *tr = &info.phase[ph].trees[i];
                CHECK_INT(tr->n_edges, nr - 1);
                if (tr->root.v == r)
                    sum += tr->mult;
            }
            CHECK_INT(sum, info.phase[ph].k);
        }
    }
    if (exec) {
        weft_exec_result *want_r = NULL, *got_r = NULL;
        weft_exec_opts eo;
        weft_exec_opts_init(&eo);
        eo.elems_per_chunk = 2;
        CHECK_ERR(weft_exec_reference(p, 2, &want_r), WEFT_OK);
        CHECK_ERR(weft_plan_exec(p, &eo, &got_r, &d), WEFT_OK);
        CHECK(want_r && got_r && weft_exec_compare(got_r, want_r, &d));
        weft_exec_result_free(want_r);
        weft_exec_result_free(got_r);
    }
    if (info_out)
        *info_out = info;
    else
        weft_optimal_fini(&info);
    weft_plan_free(p);
    weft_topo_free(t);
}

static void test_issue_figures(void)
{
    weft_optimal info;
    check_plan("a100:1", WEFT_COLL_ALLGATHER, 0, "2400/7", true, NULL);
    memset(&info, 0, sizeof info);
    check_plan("a100:2", WEFT_COLL_ALLGATHER, 0, "1040/3", true, &info);
    /* r = 65/3 per rank: NVLink 300 carries 180 of k = 13 trees, NIC 25 carries 15. */
    CHECK_INT(info.phase[0].k, 13);
    char u[64];
    rat_text(info.phase[0].U, u, sizeof u);
    CHECK_STR(u, "3/5");
    weft_optimal_fini(&info);
    check_plan("a100:2", WEFT_COLL_ALLGATHER, 1, "2400/7", true, NULL);
    check_plan("mi250:1", WEFT_COLL_ALLGATHER, 0, "2400/7", true, NULL);
    /* a100:4: r = 25/3 per rank, one tree per rank; NVLink carries 36
     * trees, a NIC link 3. */
    memset(&info, 0, sizeof info);
    check_plan("a100:4", WEFT_COLL_ALLGATHER, 0, "800/3", true, &info);
    CHECK_INT(info.phase[0].k, 1);
    rat_text(info.phase[0].U, u, sizeof u);
    CHECK_STR(u, "3/25");
    CHECK_INT(info.phase[0].n_trees, 32);
    weft_optimal_fini(&info);
    /* mi250:2: r = 166/15 per rank, k = 83; a 16 GB/s link to the switch
     * carries 120 trees. */
    memset(&info, 0, sizeof info);
    check_plan("mi250:2", WEFT_COLL_ALLGATHER, 0, "5312/15", false, &info);
    CHECK_INT(info.phase[0].k, 83);
    rat_text(info.phase[0].U, u, sizeof u);
    CHECK_STR(u, "15/2");
    weft_optimal_fini(&info);
    /* One tree per rank: the best rate with K = 1 is 10 GB/s per rank. */
    memset(&info, 0, sizeof info);
    check_plan("mi250:2", WEFT_COLL_ALLGATHER, 1, "320", true, &info);
    CHECK_INT(info.phase[0].k, 1);
    CHECK_INT(info.phase[0].n_trees, 32);
    rat_text(info.bound, u, sizeof u);
    CHECK_STR(u, "5312/15");
    weft_optimal_fini(&info);
}

static void test_other_collectives(void)
{
    check_plan("a100:2", WEFT_COLL_REDUCESCATTER, 0, "1040/3", true, NULL);
    check_plan("a100:2", WEFT_COLL_ALLREDUCE, 0, "520/3", true, NULL);
    /* The larger fabrics scale the same way for every collective. */
    check_plan("a100:4", WEFT_COLL_REDUCESCATTER, 0, "800/3", false, NULL);
    check_plan("a100:4", WEFT_COLL_ALLREDUCE, 0, "400/3", false, NULL);
    check_plan("mi250:2", WEFT_COLL_REDUCESCATTER, 0, "5312/15", false, NULL);
    check_plan("mi250:2", WEFT_COLL_ALLREDUCE, 0, "2656/15", false, NULL);
    check_plan("ring:5", WEFT_COLL_ALLREDUCE, 2, "125/2", true, NULL);
}

static void test_errors(void)
{
    weft_diag d;
    weft_plan *p = NULL;
    weft_topo *t = weft__test_topo_spec("ring:4");
    CHECK_ERR(weft_synth_optimal(t, WEFT_COLL_BROADCAST, NULL, &p, NULL, &d), WEFT_EUNSUPPORTED);
    CHECK_STR(d.msg, "optimal: no optimal schedule for broadcast (it builds allgather, "
                     "reducescatter and allreduce)");
    weft_topo_free(t);
    t = weft__test_topo_text("node a compute\nnode b compute\nnode c compute\nnode s switch\n"
                             "link a s 10GB/s\nlink b s 10GB/s\nlink c s 10GB/s\n"
                             "link s a 10GB/s\nlink s b 10GB/s\nlink s c 5GB/s\nlink c a 5GB/s\n");
    CHECK(t != NULL);
    CHECK_ERR(weft_synth_optimal(t, WEFT_COLL_ALLGATHER, NULL, &p, NULL, &d), WEFT_ETOPO);
    CHECK_STR(d.msg, "optimal: switch 's' forwards more bandwidth one way than the other (in != "
                     "out); tree packing needs every forwarding node balanced "
                     "(docs/optimal.md), use a classic algorithm here");
    CHECK(p == NULL);
    weft_topo_free(t);
    t = weft__test_topo_text("node a compute\nnode b compute\nnode c compute\n"
                             "duplex a b 10GB/s\nlink b c 10GB/s\n");
    CHECK_ERR(weft_synth_optimal(t, WEFT_COLL_ALLGATHER, NULL, &p, NULL, &d), WEFT_ETOPO);
    CHECK_CONTAINS(d.msg, "cannot reach");
    CHECK(p == NULL);
    weft_topo_free(t);
}

typedef struct oom_arg {
    weft_topo *t;
    weft_plan *p;
    weft_optimal info;
} oom_arg;

static weft_err ctor(void *arg)
{
    oom_arg *a = arg;
    weft_optimal_opts o;
    weft_optimal_opts_init(&o);
    o.use_structure = false; /* the packing's failure paths (the rail's: optimal_rail_test) */
    return weft_synth_optimal(a->t, WEFT_COLL_ALLREDUCE, &o, &a->p, &a->info, NULL);
}

static void dtor(void *arg)
{
    oom_arg *a = arg;
    weft_plan_free(a->p);
    weft_optimal_fini(&a->info);
}

/* The issue's figures as a user gets them (structure first). */
static void test_default_path(void)
{
    use_structure = true;
    check_plan("a100:1", WEFT_COLL_ALLGATHER, 0, "2400/7", false, NULL);
    check_plan("a100:2", WEFT_COLL_ALLGATHER, 0, "1040/3", false, NULL);
    check_plan("a100:2", WEFT_COLL_ALLGATHER, 1, "2400/7", false, NULL);
    check_plan("a100:4", WEFT_COLL_ALLGATHER, 0, "800/3", false, NULL);
    check_plan("mi250:1", WEFT_COLL_ALLGATHER, 0, "2400/7", false, NULL);
    /* mi250:2 has no rails: the default path packs trees as above. */
    use_structure = false;
}

int main(void)
{
    test_issue_figures();
    test_default_path();
    test_other_collectives();
    test_errors();
    oom_arg a = {.t = weft__test_topo_spec("switch:3")};
    if (a.t)
        CHECK(weft_test_oom_sweep("optimal switch:3", ctor, dtor, &a) > 10);
    weft_topo_free(a.t);
    /* A switch and a NIC to split, one-way links, groups that split
     * (reduce-scatter k = 7 in 10 groups), remembered cuts and a re-laid
     * packing network. */
    a = (oom_arg){
        .t = weft__test_topo_text("node r0 compute\nnode r1 compute\nnode r2 compute\n"
                                  "node r3 compute\nnode s switch\nnode n0 nic\n"
                                  "duplex r0 s 20GB/s\nduplex r1 s 20GB/s\nduplex r2 s 20GB/s\n"
                                  "duplex r3 n0 25GB/s\nduplex n0 s 25GB/s\nduplex r0 r1 20GB/s\n"
                                  "link r2 r3 15GB/s\nlink r3 r0 15GB/s\n")};
    if (a.t)
        CHECK(weft_test_oom_sweep("optimal switch+nic", ctor, dtor, &a) > 50);
    weft_topo_free(a.t);
    return weft_test_done();
}
