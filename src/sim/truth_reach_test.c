/* Truth: the optimal plan (weft_synth_optimal) simulated at 1 GiB reaches
 * the exact bound (issue #5: at least 99 % of the bound's algbw on a100:2
 * and mi250:2).
 *
 * The optimal plan is a packing of trees whose per-link load equals the
 * bound exactly, so with every link busy all the time it runs at the
 * bound. Store and forward per slice (the default) loses about D slice
 * times on a tree of depth D while the pipeline fills and drains:
 *
 *   a100:2 allgather,     32 / 128 slices: 96.20 % / 99.17 %
 *   a100:2 reducescatter, 32 slices: 82.76 %   (128: 95.04 %)
 *   a100:2 allreduce,     32 slices: 86.52 %   (512: 98.96 %, 35 s)
 *   mi250:2 allgather,    16 slices: 81.63 %   (512: 99.21 %, 15 s)
 *
 * Cut-through forwarding (weft_sim_opts.cut_through, the limit of
 * infinitely many slices) streams every tree at once: measured 100.00 %
 * for all six (the presets have no latency, and every link is busy from
 * start to end), in well under a second each. The cut-through floors are
 * the 99 %; the store-and-forward floors are the figures above
 * rounded down. All fail if the model or the plans get worse. */
#include <string.h>

#include "base/testing.h"
#include "weft/sim.h"
#include "weft/synth.h"

/* algbw of the optimal plan of coll on spec at 1 GiB with P slices, cut
 * through or not, as a fraction of the bound; -1 on failure. */
static double reach(const char *spec, weft_coll coll, uint32_t slices, bool cut_through)
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
    o.cut_through = cut_through;
    weft_sim_result r;
    if (weft_sim_plan(t, p, 1ull << 30, &o, &r, &d)) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        goto done;
    }
    frac = r.algbw_gbps / weft_rat_to_double(info.bound);
    printf("%s %s, %u slices%s: %.3f GB/s of %.3f GB/s = %.4f %% (%llu events)\n", spec,
           weft_coll_name(coll), slices, cut_through ? ", cut through" : "", r.algbw_gbps,
           weft_rat_to_double(info.bound), 100 * frac, (unsigned long long)r.events);
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
    static const char *const specs[] = {"a100:2", "mi250:2"};
    static const weft_coll colls[] = {WEFT_COLL_ALLGATHER, WEFT_COLL_REDUCESCATTER,
                                      WEFT_COLL_ALLREDUCE};
    for (size_t s = 0; s < 2; s++)
        for (size_t c = 0; c < 3; c++)
            CHECK(reach(specs[s], colls[c], 1, true) >= 0.99);
    /* Cut-through with slices: each slice streams too, and still reaches. */
    CHECK(reach("a100:2", WEFT_COLL_ALLREDUCE, 4, true) >= 0.99);
    /* Store and forward per slice, for contrast: short of the bound, and
     * closer with deeper pipelining. */
    double ag32 = reach("a100:2", WEFT_COLL_ALLGATHER, 32, false);
    CHECK(ag32 >= 0.96 && ag32 < 0.99);
    CHECK(reach("a100:2", WEFT_COLL_REDUCESCATTER, 32, false) >= 0.82);
    CHECK(reach("a100:2", WEFT_COLL_ALLREDUCE, 32, false) >= 0.86);
    CHECK(reach("mi250:2", WEFT_COLL_ALLGATHER, 16, false) >= 0.81);
    return weft_test_done();
}
