/* The idle time of a step's link groups (weft_work_idle, weft/work.h): the
 * loads weft__work_step_links records, merged per group into busy
 * intervals in whole nanoseconds (as the trace draws them) and clipped to
 * the step [0, step_ns]; idle is the complement, so busy + idle = step
 * exactly. The idle intervals are what a background class (GEMINI's
 * checkpoint traffic, Wang et al., SOSP'23, Sec. 5: checkpoints sent in
 * the gaps of training traffic) could use at the group's bandwidth. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "work/work_internal.h"

static int lspan_cmp(const void *a, const void *b)
{
    const weft__lspan *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t ? 1 : y->delta - x->delta;
}

/* GB/s out of box h: nic, every link from a node of host h to a node of
 * no or another host; NVLink, every link from a rank of host h to a
 * switch or compute node of host h. */
static double group_bw(const weft_topo *t, int32_t h, bool nic)
{
    double sum = 0;
    for (uint32_t l = 0; l < weft_topo_num_links(t); l++) {
        weft_link_id id = {l};
        weft_node_id a = weft_topo_link_src(t, id), b = weft_topo_link_dst(t, id);
        if (weft_topo_node_host(t, a) != h)
            continue;
        int32_t hb = weft_topo_node_host(t, b);
        weft_rank r;
        if (nic ? hb != h
                : hb == h && weft_topo_node_rank(t, a, &r) &&
                      weft_topo_node_kind(t, b) != WEFT_NODE_NIC)
            sum += weft_rat_to_double(weft_topo_link_bw(t, id));
    }
    return sum;
}

/* One group: busy = union of its spans clipped to [0, step]; its idle
 * intervals into g. Every change at one nanosecond is taken together, as
 * the trace's tracks take it, so the intervals are the trace's gaps. */
static weft_err group_idle(weft__ltrack *tr, int64_t step, weft_idle_group *g)
{
    qsort(tr->s, tr->n, sizeof *tr->s, lspan_cmp);
    size_t cap = 0;
    int64_t busy = 0, from = 0; /* the current busy or idle period began at from */
    int32_t depth = 0;
    for (size_t i = 0; i <= tr->n;) {
        bool end = i == tr->n;
        int64_t now = end ? step : llround(tr->s[i].t * 1e9);
        int32_t was = depth;
        while (i < tr->n && llround(tr->s[i].t * 1e9) == now)
            depth += tr->s[i++].delta;
        now = now < 0 ? 0 : now > step ? step : now;
        if (end || (was == 0 && depth > 0)) { /* an idle period ends */
            if (now > from) {
                if (weft__grow((void **)&g->iv, &cap, g->n + 1, sizeof *g->iv))
                    return WEFT_ENOMEM;
                g->iv[g->n][0] = from * 1e-9;
                g->iv[g->n][1] = now * 1e-9;
                g->n++;
                g->idle_ns += now - from;
            }
            from = now;
            if (end)
                break;
        } else if (was > 0 && depth == 0) { /* a busy period ends */
            busy += now - from;
            from = now;
        }
    }
    g->busy_ns = busy;
    return WEFT_OK;
}

void weft_work_ctx_set_trace_idle(weft_work_ctx *c, bool on)
{
    c->trace_idle = on;
}

void weft_idle_profile_fini(weft_idle_profile *p)
{
    for (size_t i = 0; p->g && i < p->n; i++)
        weft__free(p->g[i].iv);
    weft__free(p->g);
    memset(p, 0, sizeof *p);
}

weft_err weft_work_idle(weft_work_ctx *c, const weft_parallel *p, const weft_step_result *r,
                        weft_idle_profile *out, weft_diag *d)
{
    memset(out, 0, sizeof *out);
    weft__links L;
    weft_err err = weft__work_step_links(c, p, r->counts.dp, r, &L);
    if (!err) {
        out->step_ns = llround(r->step_s * 1e9);
        out->g = weft__calloc(L.nlg + 1, sizeof *out->g);
        err = out->g ? WEFT_OK : WEFT_ENOMEM;
    }
    uint32_t *per_box = err ? NULL : weft__calloc(L.nbox + 1, sizeof *per_box);
    if (!err && !per_box)
        err = WEFT_ENOMEM;
    for (uint32_t q = 0; !err && q < c->ranks; q++)
        if (++per_box[L.box_of[q]] > out->ranks_per_box)
            out->ranks_per_box = per_box[L.box_of[q]];
    weft__free(per_box);
    for (uint32_t i = 0; !err && i < L.nlg; i++) {
        weft_idle_group *g = &out->g[out->n++];
        g->host = L.box_host[i / 2];
        g->nic = i % 2;
        snprintf(g->name, sizeof g->name, "b%d.%s", g->host, g->nic ? "nic" : "nvlink");
        g->bw_gbs = group_bw(c->topo, g->host, g->nic);
        err = group_idle(&L.tr[i], out->step_ns, g);
        g->idle_bytes = g->bw_gbs * 1e9 * (double)g->idle_ns * 1e-9;
    }
    weft__links_fini(&L);
    if (err) {
        weft_idle_profile_fini(out);
        return weft_diag_code(d, err);
    }
    return WEFT_OK;
}
