/* The sweep: every valid parallelism of a job on one fabric, predicted and
 * ranked. Simulations repeat across configurations (the same groups and
 * sizes), so the context's cache answers most of them. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "work/work_internal.h"

static int by_time(const void *x, const void *y)
{
    const weft_sweep_entry *a = x, *b = y;
    if (a->res.fits != b->res.fits)
        return a->res.fits ? -1 : 1;
    if (a->res.step_s != b->res.step_s)
        return a->res.step_s < b->res.step_s ? -1 : 1;
    /* Ties: the smaller memory, then the order of enumeration. */
    if (a->res.counts.mem_total != b->res.counts.mem_total)
        return a->res.counts.mem_total < b->res.counts.mem_total ? -1 : 1;
    return 0;
}

/* Ranks of the host of rank 0: the largest TP worth trying. */
static uint32_t host_ranks(const weft_topo *t)
{
    uint32_t n = weft_topo_num_ranks(t), k = 0;
    int32_t h0 = weft_topo_node_host(t, weft_topo_rank_node(t, (weft_rank){0}));
    if (h0 < 0)
        return n;
    for (uint32_t r = 0; r < n; r++)
        k += weft_topo_node_host(t, weft_topo_rank_node(t, (weft_rank){r})) == h0;
    return k;
}

weft_err weft_work_sweep(weft_work_ctx *c, const weft_model *m0, const weft_parallel *base,
                         weft_sweep_entry **out, size_t *n, weft_diag *d)
{
    weft_model m = *m0;
    weft_model_complete(&m);
    uint32_t ranks = c->ranks, tpmax = host_ranks(c->topo);
    weft_sweep_entry *e = NULL;
    size_t len = 0, cap = 0;
    static const uint32_t mbs[] = {1, 2, 4, 8}, vs[] = {1, 2, 4};
    for (uint32_t tp = 1; tp <= tpmax; tp *= 2)
        for (uint32_t pp = 1; pp <= m.layers && pp <= ranks; pp++) {
            if (m.layers % pp || ranks % (tp * pp))
                continue;
            for (uint32_t cp = 1; cp <= 8; cp *= 2)
                for (uint32_t ep = 1; ep <= (m.experts ? m.experts : 1); ep *= 2)
                    for (size_t vi = 0; vi < sizeof vs / sizeof *vs; vi++)
                        for (size_t mi = 0; mi < sizeof mbs / sizeof *mbs; mi++)
                            for (int rc = 0; rc <= WEFT_RECOMPUTE_FULL; rc++) {
                                weft_parallel p = *base;
                                p.tp = tp;
                                p.pp = pp;
                                p.cp = cp;
                                p.ep = ep;
                                p.sp = tp > 1;
                                /* The overlap where there is TP to overlap. */
                                p.tp_comm_overlap = base->tp_comm_overlap && tp > 1;
                                p.micro_batch = mbs[mi];
                                p.recompute = (weft_recompute)rc;
                                p.layers_per_vstage = 0;
                                if (vs[vi] > 1) {
                                    uint32_t lps = m.layers / pp;
                                    if (pp == 1 || lps % vs[vi])
                                        continue;
                                    p.layers_per_vstage = lps / vs[vi];
                                }
                                weft_counts cnt;
                                if (weft_work_counts(&m, &p, ranks, &cnt, NULL))
                                    continue;
                                if (len == cap &&
                                    weft__grow((void **)&e, &cap, len + 1, sizeof *e)) {
                                    weft__free(e);
                                    return weft_diag_code(d, WEFT_ENOMEM);
                                }
                                if (!weft__work_prec_ok(c->gpu, p.prec))
                                    continue; /* fp8 on a GPU without it */
                                if (!weft__work_fits(c->gpu, &cnt)) {
                                    /* Ranked after those that fit, by memory, not
                                     * predicted (most of a large model's space). */
                                    memset(&e[len].res, 0, sizeof e[len].res);
                                    e[len].res.counts = cnt;
                                    e[len].par = p;
                                    len++;
                                    continue;
                                }
                                weft_err err =
                                    weft_work_step(c, &m, &p, false, NULL, &e[len].res, d);
                                if (err == WEFT_EINVAL) /* a combination the step refuses */
                                    continue;
                                if (err) {
                                    weft__free(e);
                                    return err;
                                }
                                e[len].par = p;
                                len++;
                            }
        }
    if (len)
        qsort(e, len, sizeof *e, by_time);
    *out = e;
    *n = len;
    return WEFT_OK;
}

void weft_work_sweep_free(weft_sweep_entry *e)
{
    weft__free(e);
}
