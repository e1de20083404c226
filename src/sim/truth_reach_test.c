/* Truth: the optimal plan (weft_synth_optimal) simulated at 1 GiB comes
 * close to the exact bound, and closer with deeper pipelining.
 *
 * The optimal plan is a packing of trees whose per-link load equals the
 * bound exactly, so with every link busy all the time it would run at the
 * bound. The simulator pipelines by slices: slice s of an op waits for
 * slice s of its deps (store and forward per slice), so a tree of depth D
 * loses about D slice times while the pipeline fills and drains, and
 * max-min sharing between trees adds a tail. The issue asks for 99 % of
 * the bound on a100:2 and mi250:2; what this model reaches is below
 * (docs/sim.md "Reaching the bound" has more slices, measured with weft
 * sim; the test keeps to what runs in a few seconds, also under ASan):
 *
 *   a100:2 allgather,     32 / 128 slices: 96.20 % / 99.17 %  (99 %: met)
 *   a100:2 reducescatter, 32 slices: 82.76 %   (128: 95.04 %)
 *   a100:2 allreduce,     32 slices: 86.52 %   (128: 96.00 %, 512: 98.96 %)
 *   mi250:2 allgather,    16 slices: 81.63 %   (32: 90.02 %, 64: 94.5 %,
 *                         512: 99.21 %, checked by tests/cli/sim_reach.sh)
 *
 * The floors below are those figures rounded down: they fail if the model
 * or the plans get worse. Reaching 99 % everywhere within a test's time
 * needs cut-through forwarding in the engine (docs/sim.md). */
#include <string.h>

#include "base/testing.h"
#include "weft/sim.h"
#include "weft/synth.h"

/* algbw of the optimal plan of coll on spec at 1 GiB with P slices, as a
 * fraction of the bound; -1 on failure. */
static double reach(const char *spec, weft_coll coll, uint32_t slices)
{
    weft_topo *t = NULL;
    weft_plan *p = NULL;
    weft_optimal info;
    memset(&info, 0, sizeof info);
    weft_diag d;
    double frac = -1;
    if (weft_topo_from_spec(spec, NULL, &t, &d) ||
        weft_synth_optimal(t, coll, NULL, &p, &info, &d)) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        goto done;
    }
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    o.slices = slices;
    weft_sim_result r;
    if (weft_sim_plan(t, p, 1ull << 30, &o, &r, &d)) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        goto done;
    }
    frac = r.algbw_gbps / weft_rat_to_double(info.bound);
    printf("%s %s, %u slices: %.3f GB/s of %.3f GB/s = %.2f %%\n", spec, weft_coll_name(coll),
           slices, r.algbw_gbps, weft_rat_to_double(info.bound), 100 * frac);
    /* Physics first: never above the bound. */
    CHECK(frac <= 1 + 1e-9);
    CHECK(r.conservation_err <= 1e-9);
done:
    weft_optimal_fini(&info);
    weft_plan_free(p);
    weft_topo_free(t);
    return frac;
}

int main(void)
{
    double ag32 = reach("a100:2", WEFT_COLL_ALLGATHER, 32);
    double ag128 = reach("a100:2", WEFT_COLL_ALLGATHER, 128);
    CHECK(ag128 >= 0.99);
    CHECK(ag32 > 0 && ag32 < ag128); /* deeper pipelining gets closer */
    CHECK(reach("a100:2", WEFT_COLL_REDUCESCATTER, 32) >= 0.82);
    CHECK(reach("a100:2", WEFT_COLL_ALLREDUCE, 32) >= 0.86);
    CHECK(reach("mi250:2", WEFT_COLL_ALLGATHER, 16) >= 0.81);
    return weft_test_done();
}
