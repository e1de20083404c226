/* A step's collectives chosen per group by weft_choose (weft/work.h,
 * WEFT_WORK_COLL_BEST; docs/step.md, "Choosing each group's collective"):
 * the step as a ranking path, ranking what `weft sim --compare` ranks. */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "weft/choose.h"
#include "work/work_internal.h"

/* A plan's most ops when a group's schedules are ranked: weft sim's
 * default --max-ops (src/cli/sim_algo.h, CLI_SIM_MAX_OPS: a ring
 * allreduce on 1,024 ranks, about 0.5 GB), so that the step and `weft sim
 * --compare` leave out the same plans. */
#define CHOOSE_MAX_OPS 2097152u

void weft_work_ctx_set_coll_algo(weft_work_ctx *c, weft_work_coll_algo a)
{
    c->coll_algo = a;
}

const weft_work_choice *weft_work_choices(const weft_work_ctx *c, size_t *n)
{
    *n = c->choices_n;
    return c->choices;
}

bool weft__work_chooses(const weft_work_ctx *c, weft_coll coll, bool p2p)
{
    return c->coll_algo == WEFT_WORK_COLL_BEST && !p2p &&
           (coll == WEFT_COLL_ALLGATHER || coll == WEFT_COLL_REDUCESCATTER ||
            coll == WEFT_COLL_ALLREDUCE || coll == WEFT_COLL_ALLTOALL);
}

/* The fastest schedule of coll of `size` on the fabric of ranks g[0 ..
 * gs): its label and time. */
static weft_err choose_group(weft_work_ctx *c, weft_coll coll, const uint32_t *g, uint32_t gs,
                             uint64_t size, char *label, size_t len, double *time_s, weft_diag *d)
{
    weft_topo *sub = NULL;
    const weft_topo *t = c->topo;
    if (gs < c->ranks) {
        weft_err e = weft_topo_subset(c->topo, g, gs, &sub, d);
        if (e)
            return e;
        t = sub;
    }
    weft_choose_opts o;
    weft_choose_opts_init(&o, t);
    o.sim = c->opts;
    o.innet = true;
    o.max_ops = CHOOSE_MAX_OPS;
    weft_ranking r;
    weft_err e = weft_choose(t, coll, &size, 1, &o, &r, d);
    if (!e) {
        const weft_choice *best = weft_ranking_best(&r, 0);
        if (!best) {
            e = weft_diag_set(d, WEFT_EUNSUPPORTED,
                              "no schedule builds %s on a group of %u ranks (%s: %.400s)",
                              weft_coll_name(coll), gs, r.n ? r.c[0].name : "none",
                              r.n ? r.c[0].why : "no candidate");
        } else {
            snprintf(label, len, "%s", best->label[0]);
            *time_s = best->res[0].time_s;
        }
        weft_ranking_fini(&r);
    }
    weft_topo_free(sub);
    return e;
}

weft_err weft__work_choose_s(weft_work_ctx *c, weft_coll coll, const uint32_t *pos, uint32_t n,
                             uint32_t gs, uint64_t size, double *out, weft_diag *d)
{
    weft_work_choice ch;
    memset(&ch, 0, sizeof ch);
    ch.coll = coll;
    ch.bytes = size;
    ch.ranks = gs;
    ch.groups = n / gs;
    for (uint32_t g0 = 0; g0 + gs <= n; g0 += gs) {
        char label[sizeof ch.algo];
        double t = 0;
        weft_err e = choose_group(c, coll, pos + g0, gs, size, label, sizeof label, &t, d);
        if (e)
            return e;
        if (g0 == 0 || t > ch.time_s) {
            ch.time_s = t;
            snprintf(ch.algo, sizeof ch.algo, "%s", label);
        }
    }
    *out = ch.time_s;
    for (size_t i = 0; i < c->choices_n; i++) {
        const weft_work_choice *x = &c->choices[i];
        if (x->coll == ch.coll && x->bytes == ch.bytes && x->ranks == ch.ranks &&
            x->groups == ch.groups && strcmp(x->algo, ch.algo) == 0 && x->time_s == ch.time_s)
            return WEFT_OK;
    }
    if (weft__grow((void **)&c->choices, &c->choices_cap, c->choices_n + 1, sizeof *c->choices))
        return weft_diag_code(d, WEFT_ENOMEM);
    c->choices[c->choices_n++] = ch;
    return WEFT_OK;
}
