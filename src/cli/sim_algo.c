/* Building and simulating one algorithm for weft sim. See sim_algo.h. */
#include "cli/sim_algo.h"

#include <stdlib.h>
#include <string.h>

static bool ring_coll(weft_coll c)
{
    return c == WEFT_COLL_ALLGATHER || c == WEFT_COLL_REDUCESCATTER || c == WEFT_COLL_ALLREDUCE;
}

weft_err cli_sim_algo_build(cli_sim_algo *a, const weft_topo *t, const char *name,
                            weft_coll coll, bool need_plan, weft_diag *d)
{
    memset(a, 0, sizeof *a);
    a->name = name;
    a->coll = coll;
    if (strcmp(name, "ring") == 0 && ring_coll(coll) && !need_plan) {
        uint32_t n = weft_topo_num_ranks(t);
        uint32_t *order = malloc((n ? n : 1) * sizeof *order);
        if (!order)
            return weft_diag_code(d, WEFT_ENOMEM);
        weft_err e = weft_classic_ring_order(t, order, d);
        if (e) {
            free(order);
            return e;
        }
        a->ring = order;
        return WEFT_OK;
    }
    if (strcmp(name, "optimal") == 0)
        return weft_synth_optimal(t, coll, NULL, &a->plan, NULL, d);
    return weft_synth_classic(t, name, coll, (weft_rank){0}, &a->plan, d);
}

void cli_sim_algo_from_plan(cli_sim_algo *a, weft_plan *p)
{
    memset(a, 0, sizeof *a);
    a->name = "plan";
    a->coll = weft_plan_get_info(p)->coll;
    a->plan = p;
}

weft_err cli_sim_algo_run(const cli_sim_algo *a, const weft_topo *t, uint64_t size,
                          const weft_sim_opts *o, weft_sim_result *out, weft_diag *d)
{
    if (a->ring)
        return weft_sim_ring_order(t, a->coll, a->ring, size, o, out, d);
    return weft_sim_plan(t, a->plan, size, o, out, d);
}

void cli_sim_algo_fini(cli_sim_algo *a)
{
    free(a->ring);
    weft_plan_free(a->plan);
    a->ring = NULL;
    a->plan = NULL;
}
