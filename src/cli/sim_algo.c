/* Building and simulating one algorithm for weft sim. See sim_algo.h. */
#include "cli/sim_algo.h"
#include "cli/fabric.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cli_max_ops_parse(const char *text, uint32_t *out)
{
    if (!text) {
        *out = CLI_SIM_MAX_OPS;
        return true;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (*text < '0' || *text > '9' || *end || errno || v == 0 || v > WEFT_PLAN_MAX_OPS)
        return false;
    *out = (uint32_t)v;
    return true;
}

weft_err cli_build_limited(const weft_topo *t, const char *name, weft_coll coll, weft_rank root,
                           uint32_t max_ops, const weft_optimal_opts *oo, weft_plan **out,
                           weft_optimal *opt, weft_diag *d)
{
    return weft_choose_build(t, name, coll, root, max_ops, "--max-ops", oo, out, opt, d);
}

weft_err cli_build_traffic(const weft_topo *t, const char *name, const weft_traffic *m,
                           uint32_t max_ops, weft_plan **out, weft_diag *d)
{
    return weft_choose_build_traffic(t, name, m, max_ops, "--max-ops", out, d);
}

weft_err cli_sim_algo_build(cli_sim_algo *a, const weft_topo *t, const char *name, weft_coll coll,
                            bool need_plan, uint32_t max_ops, weft_diag *d)
{
    return weft_candidate_build(a, t, name, coll, need_plan, max_ops, "--max-ops", d);
}

bool cli_sim_needs_plan(const weft_sim_opts *o)
{
    /* Cut-through is simulated for plans only. The runtime model's FIFO
     * streams (a stream's slices queue, one message cost per dependent
     * step) are the symmetric ring's too, so it needs no plan there. */
    return o->cut_through;
}

void cli_sim_model_text(const weft_sim_opts *o, char *buf, size_t len)
{
    char sl[64];
    if (o->slice_bytes)
        snprintf(sl, sizeof sl, "slices of %llu bytes", (unsigned long long)o->slice_bytes);
    else
        snprintf(sl, sizeof sl, "%u slice%s per transfer", o->slices, o->slices == 1 ? "" : "s");
    switch (o->model) {
    case WEFT_SIM_GPU:
        snprintf(buf, len, "model gpu (NCCL protocols)%s%s", o->slice_bytes ? ", " : "",
                 o->slice_bytes ? sl : "");
        break;
    case WEFT_SIM_RUNTIME:
        snprintf(buf, len, "model runtime (%s)%s%s",
                 o->whole && !o->slice_bytes ? "whole messages, as weft runs compressed and sparse "
                                               "collectives"
                                             : "weft's executor",
                 o->slice_bytes ? ", " : "", o->slice_bytes ? sl : "");
        break;
    default:
        snprintf(buf, len, "model fluid, %s, alpha %g s%s", sl, o->alpha_s,
                 o->cut_through ? ", cut through" : "");
    }
}
