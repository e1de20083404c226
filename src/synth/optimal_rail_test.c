/* The rail-hierarchical optimal schedule: on h100 fabrics of 5 or more
 * boxes it is chosen, verifies against the fabric, and its cost-model
 * throughput equals the exact bound (as fractions) for allgather,
 * reduce-scatter and allreduce; its trees are the rail chains and box
 * fan-outs; on mi250:4 the box part is the box's own tree packing; real data gives the right sums;
 * where it falls short of the bound, or the fabric has no equal boxes, the general packing builds
 * the plan, reaches the bound, and the note says why; allocation failures. */
#include <string.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "weft/synth.h"

static void check_rat(weft_rat got, const char *want)
{
    char buf[64];
    weft_rat_format(got, buf, sizeof buf);
    CHECK_STR(buf, want);
}

/* Builds coll on t with default options, checks the path taken and its
 * note, that the plan verifies against the fabric, and that both the
 * reported and the cost-model throughput are `want`, equal to the bound.
 * Returns the plan (caller frees) and the info through *info. */
static weft_plan *build(weft_topo *t, weft_coll coll, const weft_optimal_opts *o,
                        weft_optimal_method method, const char *note, const char *want,
                        weft_optimal *info)
{
    weft_plan *p = NULL;
    weft_diag d;
    memset(info, 0, sizeof *info);
    weft_err e = weft_synth_optimal(t, coll, o, &p, info, &d);
    if (e)
        fprintf(stderr, "%s: %s\n", weft_coll_name(coll), d.msg);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        return NULL;
    CHECK_STR(weft_optimal_method_name(info->method), weft_optimal_method_name(method));
    CHECK_STR(info->structure_note, note);
    check_rat(info->algbw, want);
    check_rat(info->bound, want);
    e = weft_plan_verify(p, t, &d);
    if (e)
        fprintf(stderr, "verify: %s\n", d.msg);
    CHECK_ERR(e, WEFT_OK);
    weft_plan_cost c;
    CHECK_ERR(weft_plan_cost_get(p, t, &c, &d), WEFT_OK);
    check_rat(c.algbw, want);
    return p;
}

static void test_h100(const char *spec, const char *note, const char *ag, const char *ar)
{
    weft_topo *t = weft__test_topo_spec(spec);
    CHECK(t != NULL);
    if (!t)
        return;
    uint32_t n = weft_topo_num_ranks(t), boxes = n / 8;
    static const weft_coll colls[] = {WEFT_COLL_ALLGATHER, WEFT_COLL_REDUCESCATTER,
                                      WEFT_COLL_ALLREDUCE};
    for (size_t i = 0; i < 3; i++) {
        weft_optimal info;
        weft_plan *p = build(t, colls[i], NULL, WEFT_OPTIMAL_RAIL, note,
                             colls[i] == WEFT_COLL_ALLREDUCE ? ar : ag, &info);
        if (!p)
            continue;
        /* B (B - 1) rail transfers per rail and 7 B per rank in the boxes. */
        uint32_t per = 8 * boxes * (boxes - 1) + n * 7 * boxes;
        CHECK_INT(weft_plan_num_ops(p), per * (colls[i] == WEFT_COLL_ALLREDUCE ? 2 : 1));
        CHECK_INT(info.n_phases, colls[i] == WEFT_COLL_ALLREDUCE ? 2 : 1);
        for (uint32_t k = 0; k < info.n_phases; k++) {
            const weft_optimal_phase *ph = &info.phase[k];
            CHECK_INT(ph->k, 1);
            CHECK_INT(ph->n_trees, n);
            check_rat(ph->algbw, ag);
            CHECK_INT(ph->trees[0].n_edges, n - 1);
            CHECK_INT(ph->trees[0].mult, 1);
        }
        /* The allgather tree of rank 0: rail 0 as a chain (0 -> 8 -> 16
         * ...), then rank 0 to the 7 others of box 0. */
        const weft_optimal_tree *tr = &info.phase[info.n_phases - 1].trees[0];
        CHECK_INT(tr->root.v, 0);
        if (colls[i] != WEFT_COLL_REDUCESCATTER) {
            CHECK_INT(tr->from[0], 0);
            CHECK_INT(tr->to[0], 8);
            CHECK_INT(tr->from[boxes - 2], 8 * (boxes - 2));
            CHECK_INT(tr->to[boxes - 2], 8 * (boxes - 1));
            CHECK_INT(tr->from[boxes - 1], 0);
            CHECK_INT(tr->to[boxes - 1], 1);
            CHECK_INT(tr->from[n - 2], 8 * (boxes - 1));
            CHECK_INT(tr->to[n - 2], 8 * (boxes - 1) + 7);
        }
        if (colls[i] == WEFT_COLL_REDUCESCATTER) {
            /* Reduce-scatter into rank 0: box 1 reduces into rank 8
             * first, the last edge is rank 8 (B-1) -> rank 0. */
            const weft_optimal_tree *rs = &info.phase[0].trees[0];
            CHECK_INT(rs->from[0], 9);
            CHECK_INT(rs->to[0], 8);
            CHECK_INT(rs->from[n - 2], 8 * (boxes - 1));
            CHECK_INT(rs->to[n - 2], 0);
        }
        weft_optimal_fini(&info);
        weft_plan_free(p);
    }
    weft_topo_free(t);
}

/* Real data through the allreduce of h100:5 (40 ranks, 3120 transfers). */
static void test_exec(void)
{
    weft_topo *t = weft__test_topo_spec("h100:5");
    CHECK(t != NULL);
    if (!t)
        return;
    weft_optimal info;
    weft_plan *p = build(t, WEFT_COLL_ALLREDUCE, NULL, WEFT_OPTIMAL_RAIL,
                         "rail: 5 boxes of 8 ranks; a ring along each rail between boxes, direct "
                         "sends inside each box",
                         "250", &info);
    if (p) {
        weft_exec_opts o;
        weft_exec_opts_init(&o);
        o.elems_per_chunk = 2;
        o.seed = 7;
        weft_exec_result *got = NULL, *want = NULL;
        weft_diag d;
        CHECK_ERR(weft_plan_exec(p, &o, &got, &d), WEFT_OK);
        CHECK_ERR(weft_exec_reference(p, 2, &want), WEFT_OK);
        CHECK(got && want && weft_exec_compare(got, want, &d));
        weft_exec_result_free(got);
        weft_exec_result_free(want);
    }
    weft_optimal_fini(&info);
    weft_plan_free(p);
    weft_topo_free(t);
}

/* Where the construction does not reach the bound, or does not apply, the
 * packing builds the plan and reaches the bound; the note says why. */
static void test_fallback(void)
{
    weft_optimal info;
    weft_topo *t = weft__test_topo_spec("a100:2");
    CHECK(t != NULL);
    weft_plan *p = t ? build(t, WEFT_COLL_ALLGATHER, NULL, WEFT_OPTIMAL_PACKING,
                             "rail: the rail-hierarchical allgather (2 boxes of 8 ranks) reaches "
                             "2400/7 GB/s, below the bound 1040/3",
                             "1040/3", &info)
                     : NULL;
    if (p)
        CHECK_INT(info.phase[0].k, 13);
    weft_optimal_fini(&info);
    weft_plan_free(p);
    weft_topo_free(t);

    /* Hosts of 2 and 1 ranks: no equal boxes. */
    t = weft__test_topo_text(
        "node a0 compute host=a\nnode a1 compute host=a\nnode b0 compute host=b\n"
        "node s switch\nduplex a0 s 10GB/s\nduplex a1 s 10GB/s\nduplex b0 s 20GB/s\n");
    CHECK(t != NULL);
    p = t ? build(t, WEFT_COLL_ALLGATHER, NULL, WEFT_OPTIMAL_PACKING,
                  "rail: hosts hold different numbers of ranks (2 and 1)", "15", &info)
          : NULL;
    weft_optimal_fini(&info);
    weft_plan_free(p);
    weft_topo_free(t);

    /* Some ranks with a host, some without. */
    t = weft__test_topo_text("node a0 compute host=a\nnode x compute\nnode s switch\n"
                             "duplex a0 s 10GB/s\nduplex x s 10GB/s\n");
    CHECK(t != NULL);
    p = t ? build(t, WEFT_COLL_REDUCESCATTER, NULL, WEFT_OPTIMAL_PACKING,
                  "rail: 1 of 2 ranks have a host, the others none", "20", &info)
          : NULL;
    weft_optimal_fini(&info);
    weft_plan_free(p);
    weft_topo_free(t);

    /* A ring: one box, direct sends cross the ring's links twice. */
    t = weft__test_topo_spec("biring:6");
    CHECK(t != NULL);
    p = t ? build(t, WEFT_COLL_ALLGATHER, NULL, WEFT_OPTIMAL_PACKING,
                  "rail: the rail-hierarchical allgather (one box of 6 ranks) reaches 400/3 GB/s, "
                  "below "
                  "the bound 240",
                  "240", &info)
          : NULL;
    weft_optimal_fini(&info);
    weft_plan_free(p);
    weft_topo_free(t);
}

/* mi250:4: boxes of 16 GCDs joined by direct xGMI links, one IB switch.
 * The box schedule is box 0's own tree packing (k = 3); with the IB ring
 * the whole is exact. */
static void test_mi250(void)
{
    weft_topo *t = weft__test_topo_spec("mi250:4");
    CHECK(t != NULL);
    if (!t)
        return;
    static const char *note = "rail: 4 boxes of 16 ranks; a ring along each rail between boxes, "
                              "the box's own tree packing inside each box";
    static const weft_coll colls[] = {WEFT_COLL_ALLGATHER, WEFT_COLL_REDUCESCATTER,
                                      WEFT_COLL_ALLREDUCE};
    for (size_t i = 0; i < 3; i++) {
        weft_optimal info;
        weft_plan *p = build(t, colls[i], NULL, WEFT_OPTIMAL_RAIL, note,
                             colls[i] == WEFT_COLL_ALLREDUCE ? "512/3" : "1024/3", &info);
        for (uint32_t k = 0; p && k < info.n_phases; k++) {
            const weft_optimal_phase *ph = &info.phase[k];
            CHECK_INT(ph->k, 3);
            check_rat(ph->U, "9/16");
            uint32_t mult = 0;
            for (uint32_t q = 0; q < ph->n_trees; q++) {
                CHECK_INT(ph->trees[q].n_edges, 63);
                mult += ph->trees[q].mult;
            }
            CHECK_INT(mult, 64 * 3);
        }
        weft_optimal_fini(&info);
        weft_plan_free(p);
    }
    weft_topo_free(t);
}

/* Boxes whose ranks meet only outside the box: no box schedule. */
static void test_box_unreachable(void)
{
    weft_topo *t =
        weft__test_topo_text("node a0 compute host=a\nnode a1 compute host=a\n"
                             "node b0 compute host=b\nnode b1 compute host=b\nnode s switch\n"
                             "duplex a0 s 10GB/s\nduplex a1 s 10GB/s\nduplex b0 s 10GB/s\n"
                             "duplex b1 s 10GB/s\n");
    CHECK(t != NULL);
    weft_optimal info;
    weft_plan *p = t ? build(t, WEFT_COLL_ALLGATHER, NULL, WEFT_OPTIMAL_PACKING,
                             "rail: box 0 alone has no optimal schedule (rank 0 (a0) cannot reach "
                             "rank 1 (a1): no path of links leads from one to the other, so no "
                             "collective over all ranks can complete)",
                             "40/3", &info)
                     : NULL;
    weft_optimal_fini(&info);
    weft_plan_free(p);
    weft_topo_free(t);
}

/* The options: use_structure off always packs (no note); one tree per
 * root is what the construction builds, so K = 1 keeps it and K = 2 packs. */
static void test_options(void)
{
    weft_topo *t = weft__test_topo_spec("h100:1");
    CHECK(t != NULL);
    if (!t)
        return;
    weft_optimal_opts o;
    weft_optimal_opts_init(&o);
    CHECK(o.use_structure);
    weft_optimal info;
    weft_plan *p = build(t, WEFT_COLL_ALLGATHER, &o, WEFT_OPTIMAL_RAIL,
                         "rail: one box of 8 ranks; direct sends", "3600/7", &info);
    weft_optimal_fini(&info);
    weft_plan_free(p);
    o.use_structure = false;
    p = build(t, WEFT_COLL_ALLGATHER, &o, WEFT_OPTIMAL_PACKING, "", "3600/7", &info);
    weft_optimal_fini(&info);
    weft_plan_free(p);
    o.use_structure = true;
    o.trees_per_root = 1;
    p = build(t, WEFT_COLL_REDUCESCATTER, &o, WEFT_OPTIMAL_RAIL,
              "rail: one box of 8 ranks; direct sends", "3600/7", &info);
    weft_optimal_fini(&info);
    weft_plan_free(p);
    o.trees_per_root = 2;
    p = build(t, WEFT_COLL_REDUCESCATTER, &o, WEFT_OPTIMAL_PACKING, "", "3600/7", &info);
    if (p)
        CHECK_INT(info.phase[0].k, 2);
    weft_optimal_fini(&info);
    weft_plan_free(p);
    weft_topo_free(t);
}

/* One tree per root on mi250:4: the box schedule is asked for one tree
 * per local root, the whole then falls short of the bound, and the
 * packing gives the best rate with one tree. */
static void test_one_tree(void)
{
    weft_topo *t = weft__test_topo_spec("mi250:4");
    CHECK(t != NULL);
    if (!t)
        return;
    weft_optimal_opts o;
    weft_optimal_opts_init(&o);
    o.trees_per_root = 1;
    weft_optimal info;
    weft_plan *p = NULL;
    weft_diag d;
    CHECK_ERR(weft_synth_optimal(t, WEFT_COLL_ALLGATHER, &o, &p, &info, &d), WEFT_OK);
    if (p) {
        CHECK_INT(info.method, WEFT_OPTIMAL_PACKING);
        CHECK_STR(info.structure_note, "rail: the rail-hierarchical allgather (4 boxes of 16 "
                                       "ranks) reaches 800/3 GB/s, below the bound 1024/3");
        CHECK_INT(info.phase[0].k, 1);
        check_rat(info.algbw, "320");
        CHECK_ERR(weft_plan_verify(p, t, &d), WEFT_OK);
    }
    weft_optimal_fini(&info);
    weft_plan_free(p);
    weft_topo_free(t);
}

typedef struct oom_arg {
    weft_topo *t;
    weft_coll coll;
    weft_plan *p;
    weft_optimal info;
} oom_arg;

static weft_err ctor(void *arg)
{
    oom_arg *a = arg;
    return weft_synth_optimal(a->t, a->coll, NULL, &a->p, &a->info, NULL);
}

static void dtor(void *arg)
{
    oom_arg *a = arg;
    CHECK_INT(a->info.method, WEFT_OPTIMAL_RAIL);
    weft_plan_free(a->p);
    weft_optimal_fini(&a->info);
}

int main(void)
{
    test_h100("h100:8",
              "rail: 8 boxes of 8 ranks; a ring along each rail between boxes, direct sends inside "
              "each box",
              "3200/7", "1600/7");
    test_h100("h100:16",
              "rail: 16 boxes of 8 ranks; a ring along each rail between boxes, direct sends "
              "inside each box",
              "1280/3", "640/3");
    test_mi250();
    test_exec();
    test_fallback();
    test_box_unreachable();
    test_options();
    test_one_tree();
    /* Three boxes of two ranks behind a switch, one rail switch per local
     * rank: small, but with a box schedule and rails. */
    oom_arg a = {.t = weft__test_topo_text(
                     "node a0 compute host=a\nnode a1 compute host=a\nnode as switch host=a\n"
                     "node b0 compute host=b\nnode b1 compute host=b\nnode bs switch host=b\n"
                     "node c0 compute host=c\nnode c1 compute host=c\nnode cs switch host=c\n"
                     "node r0 switch\nnode r1 switch\n"
                     "duplex a0 as 100GB/s\nduplex a1 as 100GB/s\nduplex b0 bs 100GB/s\n"
                     "duplex b1 bs 100GB/s\nduplex c0 cs 100GB/s\nduplex c1 cs 100GB/s\n"
                     "duplex a0 r0 10GB/s\nduplex b0 r0 10GB/s\nduplex c0 r0 10GB/s\n"
                     "duplex a1 r1 10GB/s\nduplex b1 r1 10GB/s\nduplex c1 r1 10GB/s\n"),
                 .coll = WEFT_COLL_ALLREDUCE};
    if (a.t)
        CHECK(weft_test_oom_sweep("rail 3x2 allreduce", ctor, dtor, &a) > 10);
    weft_topo_free(a.t);
    return weft_test_done();
}
