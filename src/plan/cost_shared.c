/* The time estimate with link sharing (weft_plan_shared_time; the model is
 * stated in weft/plan.h, "Cost on a topology").
 *
 * Steps: ops that move data are put in steps by their depth in the
 * dependency graph (levels(), a counting sort). The ops of one step are
 * taken to run at once, so each link carries the sum of their bytes, and
 * under max-min sharing the ops on a link end about together: an op's
 * stage is alpha + its route latency + max(its own bytes alone, the step's
 * bytes on its busiest link) / P. The pipelined critical path over those
 * stages (pipelined_path) sees ops of one step that do not share links run
 * side by side, and independent chains (the two trees of dbtree) separately.
 *
 * Link: the busiest link's bytes over the whole plan / its bandwidth, plus
 * the pipelined path of alpha + latency alone. Pipelining overlaps steps,
 * and then ops of different steps share links, which the steps term does
 * not see. For a ring pipelined in P slices this term is the simulator's
 * time exactly.
 *
 * The estimate is the larger of the two. Cost: O(ops + deps + route
 * entries + links) time and O(ops + links) memory; routes are shared with
 * the other cost models (cost_internal.h). */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "plan/cost_internal.h"
#include "plan/plan_internal.h"
#include "weft/exec_model.h"

void weft_plan_shared_opts_init(weft_plan_shared_opts *o)
{
    memset(o, 0, sizeof *o);
    o->slices = 1;
}

void weft_plan_shared_opts_exec(weft_plan_shared_opts *o, const weft_plan *p, double size_bytes)
{
    weft_plan_shared_opts_init(o);
    double chunk = size_bytes / (double)weft_plan_size_chunks(p);
    o->slices = weft_exec_slices(chunk >= 0 && chunk < 1.8e19 ? (uint64_t)chunk : 0);
}

/* Per-run arrays. `coef` and `step_bytes` are indexed by link and kept
 * zero between uses (their users reset the entries they touched). */
typedef struct shared_run {
    weft__cost_ctx c;
    uint32_t *topo, *level, *by_level, *level_start, *fill;
    double *stage, *fixed; /* per op: one slice's time; its alpha + latency */
    double *head, *tail;   /* per op: longest paths (pipelined_path) */
    double *coef;          /* one op's share per link */
    uint32_t *op_links;    /* the links of coef in use */
    uint64_t *in_op;       /* per link: the stamp of the op_route call that last listed it */
    uint64_t stamp;        /* 2 calls per op: never wraps */
    double *step_bytes;    /* one step's bytes per link */
    uint32_t *step_links;
    uint32_t *in_step; /* per link: 1 + the last step that listed it (with size 0
                          every byte count is 0, so values cannot tell) */
    double *total;     /* the plan's bytes per link */
    double *opb;       /* an alltoallv plan's bytes per op, else NULL */
} shared_run;

static void run_fini(shared_run *r)
{
    weft__cost_ctx_fini(&r->c);
    weft__free(r->topo);
    weft__free(r->fill);
    weft__free(r->stage);
    weft__free(r->fixed);
    weft__free(r->head);
    weft__free(r->tail);
    weft__free(r->level);
    weft__free(r->by_level);
    weft__free(r->level_start);
    weft__free(r->coef);
    weft__free(r->op_links);
    weft__free(r->in_op);
    weft__free(r->opb);
    weft__free(r->step_bytes);
    weft__free(r->step_links);
    weft__free(r->in_step);
    weft__free(r->total);
}

/* One op's use of the links: coef[l] (share of its bytes on l) for the
 * links listed in op_links[0 .. *n), its latency and the time per byte it
 * needs alone (max over its links of share / bandwidth). */
static weft_err op_route(shared_run *r, uint32_t id, uint32_t *n, double *lat_s, double *s_per_byte)
{
    weft__cost_ctx *c = &r->c;
    const weft_op *op = &c->p->ops[id];
    uint32_t npaths = weft_plan_op_num_paths(c->p, id), k = 0;
    *n = 0;
    r->stamp++;
    *lat_s = 0;
    *s_per_byte = 0;
    if (npaths == 0) {
        const weft__cost_route *pr;
        weft_err e = weft__cost_pair(c, op->src_rank.v, op->dst_rank.v, &pr);
        if (e)
            return e;
        for (uint32_t i = 0; i < pr->n; i++) {
            uint32_t l = c->link[pr->first + i];
            if (r->in_op[l] != r->stamp) {
                r->in_op[l] = r->stamp;
                r->op_links[(*n)++] = l;
            }
            r->coef[l] += c->fracd[pr->first + i];
        }
        *lat_s = pr->lat_s;
        *s_per_byte = pr->flow_s_per_byte;
        return WEFT_OK;
    }
    for (; k < npaths; k++) {
        double share = weft_rat_to_double(weft_plan_path_share(c->p, id, k)), lat = 0;
        uint32_t len = weft_plan_path_len(c->p, id, k);
        for (uint32_t h = 0; h + 1 < len; h++) {
            uint32_t l;
            weft_err e = weft__cost_path_link(c, id, k, h, &l);
            if (e)
                return e;
            if (r->in_op[l] != r->stamp) {
                r->in_op[l] = r->stamp;
                r->op_links[(*n)++] = l;
            }
            r->coef[l] += share;
            lat += weft_rat_to_double(weft_topo_link_lat(c->t, (weft_link_id){l})) * 1e-9;
        }
        *lat_s = lat > *lat_s ? lat : *lat_s;
    }
    for (uint32_t i = 0; i < *n; i++) {
        uint32_t l = r->op_links[i];
        double s = r->coef[l] / weft__cost_link_bw(c->t, l);
        *s_per_byte = s > *s_per_byte ? s : *s_per_byte;
    }
    return WEFT_OK;
}

/* Steps by depth: level[v] = 1 + the deepest dep for an op that moves data,
 * the deepest dep for one that does not; by_level lists the moving ops
 * grouped by level: level k + 1 is by_level[level_start[k] .. level_start[k+1]). */
static weft_err levels(shared_run *r, uint32_t *nlevels, weft_diag *d)
{
    const weft_plan *p = r->c.p;
    weft_err e = weft__plan_topo_order(p, r->topo, NULL, d);
    if (e)
        return e;
    uint32_t top = 0;
    for (uint32_t i = 0; i < p->nops; i++) {
        uint32_t v = r->topo[i], nd, lv = 0;
        const uint32_t *deps = weft_plan_op_deps(p, v, &nd);
        for (uint32_t k = 0; k < nd; k++)
            lv = r->level[deps[k]] > lv ? r->level[deps[k]] : lv;
        r->level[v] = lv + weft__cost_moves_data(&p->ops[v]);
        top = r->level[v] > top ? r->level[v] : top;
    }
    r->level_start = weft__calloc((size_t)top + 1, sizeof *r->level_start);
    r->fill = weft__malloc(((size_t)top + 1) * sizeof *r->fill);
    if (!r->level_start || !r->fill)
        return weft_diag_code(d, WEFT_ENOMEM);
    for (uint32_t v = 0; v < p->nops; v++)
        if (weft__cost_moves_data(&p->ops[v]))
            r->level_start[r->level[v] - 1]++;
    uint32_t sum = 0;
    for (uint32_t k = 0; k < top; k++) {
        uint32_t cnt = r->level_start[k];
        r->level_start[k] = sum;
        sum += cnt;
    }
    r->level_start[top] = sum;
    /* Fill in op id order; fill[k] runs from the start of level k + 1. */
    memcpy(r->fill, r->level_start, (size_t)top * sizeof *r->fill);
    for (uint32_t v = 0; v < p->nops; v++)
        if (weft__cost_moves_data(&p->ops[v]))
            r->by_level[r->fill[r->level[v] - 1]++] = v;
    *nlevels = top;
    return WEFT_OK;
}

/* The pipelined critical path for per-op slice times stage[]: with P
 * slices, slice s of op v ends at max(slice s of its deps, slice s-1 of v)
 * + stage[v], so the last slice ends at the max over dependency paths of
 * (sum of stages + (P - 1) x the path's largest stage), which is the max
 * over ops w of (the longest path through w + (P - 1) x stage[w]). head[v]:
 * the longest path ending with v; tail[v]: the longest after v. */
static double pipelined_path(shared_run *r, const double *stage, double P)
{
    const weft_plan *p = r->c.p;
    double best = 0;
    for (uint32_t i = 0; i < p->nops; i++) {
        uint32_t v = r->topo[i], nd;
        const uint32_t *deps = weft_plan_op_deps(p, v, &nd);
        double h = 0;
        for (uint32_t j = 0; j < nd; j++)
            h = r->head[deps[j]] > h ? r->head[deps[j]] : h;
        r->head[v] = h + stage[v];
        r->tail[v] = 0;
    }
    for (uint32_t i = p->nops; i-- > 0;) {
        uint32_t v = r->topo[i], nd;
        const uint32_t *deps = weft_plan_op_deps(p, v, &nd);
        for (uint32_t j = 0; j < nd; j++) {
            double tl = r->tail[v] + stage[v];
            r->tail[deps[j]] = tl > r->tail[deps[j]] ? tl : r->tail[deps[j]];
        }
        double through = r->head[v] + r->tail[v] + (P - 1) * stage[v];
        best = through > best ? through : best;
    }
    return best;
}

weft_err weft_plan_shared_time(const weft_plan *p, const weft_topo *t, double size_bytes,
                               const weft_plan_shared_opts *o, weft_plan_shared *out, weft_diag *d)
{
    weft_plan_shared_opts def;
    if (!o) {
        weft_plan_shared_opts_init(&def);
        o = &def;
    }
    if (o->slices < 1 || !(o->alpha_s >= 0) || !(size_bytes >= 0))
        return weft_diag_set(d, WEFT_EINVAL,
                             "shared-link estimate: slices must be >= 1 (got %u), alpha and size "
                             ">= 0 (got %g s, %g B)",
                             o->slices, o->alpha_s, size_bytes);
    shared_run r;
    memset(&r, 0, sizeof r);
    weft_err e = weft__cost_ctx_init(&r.c, p, t, d);
    if (e)
        goto done;
    uint32_t nl = weft_topo_num_links(t);
    size_t nops1 = (size_t)p->nops + 1, nl1 = (size_t)nl + 1;
    r.topo = weft__malloc(nops1 * sizeof *r.topo);
    r.stage = weft__malloc(nops1 * sizeof *r.stage);
    r.fixed = weft__malloc(nops1 * sizeof *r.fixed);
    r.head = weft__malloc(nops1 * sizeof *r.head);
    r.tail = weft__malloc(nops1 * sizeof *r.tail);
    r.level = weft__malloc(nops1 * sizeof *r.level);
    r.by_level = weft__malloc(nops1 * sizeof *r.by_level);
    r.coef = weft__calloc(nl1, sizeof *r.coef);
    r.op_links = weft__malloc(nl1 * sizeof *r.op_links);
    r.in_op = weft__calloc(nl1, sizeof *r.in_op);
    r.step_bytes = weft__calloc(nl1, sizeof *r.step_bytes);
    r.step_links = weft__malloc(nl1 * sizeof *r.step_links);
    r.in_step = weft__calloc(nl1, sizeof *r.in_step);
    r.total = weft__calloc(nl1, sizeof *r.total);
    if (!r.topo || !r.stage || !r.fixed || !r.head || !r.tail || !r.level || !r.by_level ||
        !r.coef || !r.op_links || !r.in_op || !r.step_bytes || !r.step_links || !r.in_step ||
        !r.total) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto done;
    }
    uint32_t nlev = 0;
    if ((e = levels(&r, &nlev, d)))
        goto done;
    double chunk = size_bytes / (double)weft_plan_size_chunks(p), P = o->slices;
    if (weft_plan_sized(p)) {
        r.opb = weft__malloc(((size_t)p->nops + 1) * sizeof *r.opb);
        e = r.opb ? weft_plan_op_bytes_at(p, size_bytes, r.opb, d) : weft_diag_code(d, WEFT_ENOMEM);
        if (e)
            goto done;
    }
    for (uint32_t v = 0; v < p->nops; v++)
        r.stage[v] = r.fixed[v] = o->alpha_s; /* local ops and nops: alpha only */
    for (uint32_t k = 0; k < nlev; k++) {
        uint32_t nstep = 0;
        /* The step's bytes per link... */
        for (uint32_t i = r.level_start[k]; i < r.level_start[k + 1]; i++) {
            uint32_t v = r.by_level[i], n;
            double op_lat, spb, bytes = r.opb ? r.opb[v] : chunk * p->ops[v].count;
            if ((e = op_route(&r, v, &n, &op_lat, &spb)))
                goto done;
            for (uint32_t j = 0; j < n; j++) {
                uint32_t l = r.op_links[j];
                if (r.in_step[l] != k + 1) {
                    r.in_step[l] = k + 1;
                    r.step_links[nstep++] = l;
                }
                r.step_bytes[l] += bytes * r.coef[l];
                r.total[l] += bytes * r.coef[l];
                r.coef[l] = 0;
            }
        }
        /* ...then each op of the step lasts until its busiest link has
         * carried the step's bytes (fair sharing ends them together). */
        for (uint32_t i = r.level_start[k]; i < r.level_start[k + 1]; i++) {
            uint32_t v = r.by_level[i], n;
            double op_lat, spb, bytes = r.opb ? r.opb[v] : chunk * p->ops[v].count;
            if ((e = op_route(&r, v, &n, &op_lat, &spb)))
                goto done;
            double busy = bytes * spb;
            for (uint32_t j = 0; j < n; j++) {
                uint32_t l = r.op_links[j];
                double b = r.step_bytes[l] / weft__cost_link_bw(t, l);
                busy = b > busy ? b : busy;
                r.coef[l] = 0;
            }
            r.stage[v] = o->alpha_s + op_lat + busy / P;
            r.fixed[v] = o->alpha_s + op_lat;
        }
        for (uint32_t j = 0; j < nstep; j++)
            r.step_bytes[r.step_links[j]] = 0;
    }
    double path_s = pipelined_path(&r, r.stage, P);
    double fixed_s = pipelined_path(&r, r.fixed, P);
    weft_plan_shared res;
    memset(&res, 0, sizeof res);
    res.steps = nlev;
    res.steps_s = path_s;
    for (uint32_t l = 0; l < nl; l++) {
        double s = r.total[l] / weft__cost_link_bw(t, l);
        if (r.total[l] > 0 && (!res.has_busiest || s > res.link_s)) {
            res.link_s = s;
            res.has_busiest = true;
            res.busiest.v = l;
        }
    }
    res.latency_s = fixed_s;
    res.seconds = res.steps_s > res.link_s + fixed_s ? res.steps_s : res.link_s + fixed_s;
    *out = res;
done:
    run_fini(&r);
    return e;
}

bool weft_plan_shared_before(const weft_plan_shared *a, const weft_plan_shared *b)
{
    if (a->seconds < b->seconds * (1 - 1e-9))
        return true;
    return a->seconds <= b->seconds * (1 + 1e-9) && a->steps < b->steps;
}
