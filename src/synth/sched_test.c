/* The schedule registry (weft/synth.h, "The schedule registry"): every
 * classic row and the others are in it, once; what each builds is what
 * weft_sched_build builds (every row, every collective, on a100:2 and a
 * direct-connect torus); the candidate lists are exactly the ones the
 * ranking paths used before there was a registry; bad spellings and
 * collectives get the errors the contract names. */
#include <string.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "weft/synth.h"
#include "weft/tuning.h"

static void test_rows(void)
{
    /* optimal, bfb, and the compressed and sparse rows (sparse-ag,
     * quant-2shot, sparse-hash, sparse-range, hier-quant). */
    CHECK_INT(weft_sched_count(), weft_classic_count() + 7);
    for (size_t i = 0; i < weft_sched_count(); i++) {
        weft_sched_info in;
        CHECK(weft_sched_get(i, &in));
        CHECK(in.name && *in.name && in.summary && *in.summary && in.colls);
        for (size_t j = 0; j < i; j++) {
            weft_sched_info other;
            weft_sched_get(j, &other);
            CHECK(strcmp(in.name, other.name) != 0);
        }
        if (i < weft_classic_count())
            CHECK_STR(in.name, weft_classic_get(i)->name);
    }
    weft_sched_info in;
    CHECK(!weft_sched_get(weft_sched_count(), &in));
    CHECK(weft_sched_known("optimal") && weft_sched_known("bfb") && weft_sched_known("rings:4"));
    CHECK(!weft_sched_known("rings:0") && !weft_sched_known("nope") && !weft_sched_known(""));
    CHECK(weft_sched_supports("optimal", WEFT_COLL_ALLTOALL, true));
    CHECK(!weft_sched_supports("optimal", WEFT_COLL_BROADCAST, false));
    CHECK(weft_sched_supports("bfb", WEFT_COLL_ALLREDUCE, false));
    CHECK(!weft_sched_supports("bfb", WEFT_COLL_ALLTOALL, false));
    CHECK(weft_sched_supports("flash", WEFT_COLL_ALLTOALL, true));
    CHECK(!weft_sched_supports("ring", WEFT_COLL_ALLREDUCE, true)); /* no matrix */
    CHECK(!weft_sched_supports("ring", (weft_coll)99, false));
    CHECK(weft_sched_supports("sparse-hash", WEFT_COLL_ALLREDUCE, false));
    CHECK(!weft_sched_supports("sparse-hash", WEFT_COLL_ALLGATHER, false));
    CHECK(weft_sched_supports("sparse-ag", WEFT_COLL_ALLGATHER, false));
    CHECK(weft_sched_supports("quant-2shot", WEFT_COLL_ALLREDUCE, false));
}

/* The lists the ranking paths draw from: weft tune's and the runtime's
 * candidates (those before the registry, and rings:auto, whose K the
 * fabric decides, so that tune ranks what --compare ranks), and
 * --compare's for allreduce and all-to-all (as before the registry). */
static void test_candidates(void)
{
    static const char *const runtime[] = {
        "ring", "biring", "rings:auto", "dbtree",   "binomial", "hd",    "rabenseifner",
        "rd",   "bruck",  "direct",     "pairwise", "hier",     "flash", "optimal"};
    size_t n = sizeof runtime / sizeof *runtime;
    CHECK_INT(weft_tuning_candidate_count(), n);
    for (size_t i = 0; i < n; i++)
        CHECK_STR(weft_tuning_candidate(i), runtime[i]);
    CHECK(weft_tuning_candidate_supports("optimal", WEFT_COLL_ALLREDUCE));
    CHECK(!weft_tuning_candidate_supports("optimal", WEFT_COLL_ALLTOALL));
    CHECK(!weft_tuning_candidate_supports("nccl", WEFT_COLL_ALLREDUCE));
    CHECK(!weft_tuning_candidate_supports("rings:4", WEFT_COLL_ALLREDUCE));
    CHECK(weft_tuning_candidate_supports("rings:auto", WEFT_COLL_ALLREDUCE));

    const char *got[64];
    static const char *const allreduce[] = {"ring",   "biring", "rings:auto",   "rings:4",
                                            "dbtree", "hd",     "rabenseifner", "rd",
                                            "hier",   "nccl",   "optimal"};
    size_t k = weft_sched_candidates(WEFT_COLL_ALLREDUCE, false, WEFT_SCHED_FOR_COMPARE, got, 64);
    CHECK_INT(k, sizeof allreduce / sizeof *allreduce);
    for (size_t i = 0; i < k && i < sizeof allreduce / sizeof *allreduce; i++)
        CHECK_STR(got[i], allreduce[i]);
    static const char *const alltoall[] = {"bruck", "direct", "pairwise", "hier",
                                           "flash", "nccl",   "optimal"};
    k = weft_sched_candidates(WEFT_COLL_ALLTOALL, true, WEFT_SCHED_FOR_COMPARE, got, 64);
    /* nccl is listed with a matrix too: its build says why it has no
     * alltoallv plan, and --compare prints that. */
    CHECK_INT(k, sizeof alltoall / sizeof *alltoall);
    k = weft_sched_candidates(WEFT_COLL_ALLTOALL, false, WEFT_SCHED_FOR_COMPARE, got, 64);
    CHECK_INT(k, sizeof alltoall / sizeof *alltoall);
    for (size_t i = 0; i < k && i < sizeof alltoall / sizeof *alltoall; i++)
        CHECK_STR(got[i], alltoall[i]);
    /* cap is respected. */
    CHECK_INT(weft_sched_candidates(WEFT_COLL_ALLREDUCE, false, WEFT_SCHED_FOR_COMPARE, got, 3), 3);
}

/* Every candidate builds on a100:2 (boxes) for every collective it
 * supports, and the plan is the builder's own (it verifies and is for
 * that collective); bfb builds on a torus and is refused on a100:2 with
 * the switch named. */
static void test_build(void)
{
    weft_topo *t = weft__test_topo_spec("a100:2"), *torus = weft__test_topo_spec("torus:4x4");
    if (!t || !torus) {
        CHECK(!"fabrics");
        return;
    }
    weft_diag d;
    for (int c = 0; c < WEFT__COLL_COUNT; c++) {
        const char *got[64];
        size_t k = weft_sched_candidates((weft_coll)c, false, WEFT_SCHED_FOR_COMPARE, got, 64);
        for (size_t i = 0; i < k; i++) {
            weft_sched_args a;
            weft_sched_args_init(&a, (weft_coll)c);
            weft_plan *p = NULL;
            weft_err e = weft_sched_build(t, got[i], &a, &p, &d);
            if (e)
                printf("  %s %s: %s\n", got[i], weft_coll_name((weft_coll)c), d.msg);
            CHECK_ERR(e, WEFT_OK);
            if (!p)
                continue;
            CHECK_INT(weft_plan_get_info(p)->coll, c);
            CHECK_ERR(weft_plan_verify(p, t, &d), WEFT_OK);
            weft_plan_free(p);
        }
    }
    weft_sched_args a;
    weft_sched_args_init(&a, WEFT_COLL_ALLGATHER);
    weft_plan *p = NULL;
    weft_bfb info;
    a.bfb_out = &info;
    CHECK_ERR(weft_sched_build(torus, "bfb", &a, &p, &d), WEFT_OK);
    CHECK_INT(info.steps, 4); /* the 4x4 torus's diameter */
    weft_plan_free(p);
    p = NULL;
    CHECK_ERR(weft_sched_build(t, "bfb", &a, &p, &d), WEFT_ETOPO);
    CHECK(p == NULL);
    /* Errors. */
    CHECK_ERR(weft_sched_build(t, "nope", &a, &p, &d), WEFT_ENOENT);
    CHECK_STR(d.msg, "unknown algorithm 'nope' (weft plan --list lists them)");
    CHECK_ERR(weft_sched_build(t, "rings:99", &a, &p, &d), WEFT_EINVAL);
    weft_sched_args_init(&a, WEFT_COLL_BROADCAST);
    CHECK_ERR(weft_sched_build(t, "optimal", &a, &p, &d), WEFT_EUNSUPPORTED);
    CHECK(strncmp(d.msg, "optimal: no optimal schedule for broadcast", 42) == 0);
    CHECK_ERR(weft_sched_build(torus, "bfb", &a, &p, &d), WEFT_EUNSUPPORTED);
    CHECK_STR(d.msg, "algorithm 'bfb' does not build broadcast (it builds: allgather, "
                     "reducescatter, allreduce)");
    CHECK_ERR(weft_sched_build(t, "dbtree", &a, &p, &d), WEFT_OK);
    weft_plan_free(p);
    p = NULL;
    /* A limit is kept, and named. */
    weft_sched_args_init(&a, WEFT_COLL_ALLREDUCE);
    a.max_ops = 10;
    CHECK_ERR(weft_sched_build(t, "optimal", &a, &p, &d), WEFT_ELIMIT);
    CHECK(strstr(d.msg, "more than 10 (the limit)") != NULL);
    CHECK(p == NULL);
    weft_topo_free(t);
    weft_topo_free(torus);
}

int main(void)
{
    test_rows();
    test_candidates();
    test_build();
    return weft_test_done();
}
