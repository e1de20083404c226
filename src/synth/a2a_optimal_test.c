/* The optimal all-to-all plan (weft_synth_a2a_optimal): it verifies against
 * the fabric (routes follow real links) and its exact throughput limit
 * (weft_plan_cost_get, the busiest link's load) equals the certified bound,
 * on switches, boxes with NICs, NVLink meshes (relays through other GPUs),
 * tori and one-way rings. */
#include <string.h>

#include "base/testing.h"
#include "weft/plan.h"
#include "weft/synth.h"

static void check(const char *spec, const char *want)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_preset(spec, &t, &d), WEFT_OK);
    if (!t)
        return;
    weft_plan *p = NULL;
    weft_a2a_bound b;
    weft_err e = weft_synth_a2a_optimal(t, &p, &b, &d);
    if (e)
        fprintf(stderr, "%s: %s\n", spec, d.msg);
    CHECK_ERR(e, WEFT_OK);
    if (!e) {
        CHECK_STR(b.algbw_exact, want);
        e = weft_plan_verify(p, t, &d);
        if (e)
            fprintf(stderr, "%s: verify: %s\n", spec, d.msg);
        CHECK_ERR(e, WEFT_OK);
        weft_plan_cost cost;
        CHECK_ERR(weft_plan_cost_get(p, t, &cost, &d), WEFT_OK);
        char got[64];
        weft_rat_format_exact(cost.algbw, got, sizeof got);
        CHECK_STR(got, want);
        uint32_t nr = weft_topo_num_ranks(t);
        CHECK_INT(weft_plan_num_ops(p), (uint64_t)nr * nr);
        weft_plan_free(p);
        weft_a2a_bound_fini(&b);
    }
    weft_topo_free(t);
}

int main(void)
{
    check("switch:4,bw=30", "40");
    check("a100:2", "50");
    check("dgx1", "75");
    check("torus:4x4", "200");
    check("ring:4", "200/3");
    check("mi250:2", "32");
    return weft_test_done();
}
