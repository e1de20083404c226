/* Circuit epochs of a simulated plan (weft/plan.h, "Circuits";
 * docs/ocs.md; the context is sim/plan_ctx.h).
 *
 * In a plan with circuits the paths of an op that name epoch e are one flow
 * of their own (all slices together), beside the op's flows, which carry its
 * other paths. OCS o starts epoch e >= 1 at a gate: a flow without links
 * whose latency is o's reconfig= delay when o's circuits of epoch e differ
 * from those of e-1 (0 otherwise), released when gate e-1 is done and every
 * flow on a circuit of o that epoch e drops has drained (its last byte has
 * crossed the OCS). A flow waits for
 * the gate of the first epoch of the run of epochs in which all its circuits
 * on o stay up, so unchanged circuits keep carrying. Dependents of an op
 * wait for its epoch flows too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "sim/model.h"
#include "sim/plan_ctx.h"
#include "weft/exec_model.h"

typedef struct ckey4 {
    uint32_t ocs, from, to, epoch;
} ckey4;

static int ckey4_cmp(const void *x, const void *y)
{
    const ckey4 *a = x, *b = y;
    if (a->ocs != b->ocs)
        return a->ocs < b->ocs ? -1 : 1;
    if (a->from != b->from)
        return a->from < b->from ? -1 : 1;
    if (a->to != b->to)
        return a->to < b->to ? -1 : 1;
    return a->epoch < b->epoch ? -1 : a->epoch > b->epoch;
}

typedef struct epoch_ctx {
    ckey4 *circ; /* sorted */
    size_t ncirc;
    uint32_t nepochs;
    uint32_t *ocs_index; /* node -> OCS number or UINT32_MAX */
    uint32_t nocs;
    uint32_t *gate; /* nocs x nepochs: gate flow, UINT32_MAX none */
    uint8_t *chg;   /* nocs x nepochs: circuits of e differ from e-1's */
    double *dur;    /* nocs x nepochs: planned duration, s (plan_durations) */
    double total_s; /* the plan's own time (plan_durations); 0: unweighted */
    ckey4 *used;    /* circuits of the flow being built (epoch unused) */
    size_t nused, used_cap;
    uint32_t mark_route; /* no links, no latency: drain markers */
    struct cflow *cf;    /* (circuit, epoch, flow, marker) of every epoch flow */
    size_t ncf, cf_cap;
} epoch_ctx;

/* An epoch flow on one circuit: f the flow, mark its drain marker (a flow
 * of no bytes queued behind f, so done the moment f has drained). */
typedef struct cflow {
    ckey4 k; /* the circuit and the flow's epoch */
    uint32_t f, mark;
} cflow;

static int cflow_cmp(const void *x, const void *y)
{
    const cflow *a = x, *b = y;
    int c = ckey4_cmp(&a->k, &b->k);
    return c ? c : (a->f > b->f) - (a->f < b->f);
}

/* Whether a and b are one circuit (OCS, from, to), whatever their epochs. */
static bool same_circuit(const ckey4 *a, const ckey4 *b)
{
    return a->ocs == b->ocs && a->from == b->from && a->to == b->to;
}

static bool has_circuit(const epoch_ctx *x, uint32_t ocs, uint32_t from, uint32_t to,
                        uint32_t epoch)
{
    ckey4 k = {ocs, from, to, epoch};
    return bsearch(&k, x->circ, x->ncirc, sizeof k, ckey4_cmp) != NULL;
}

/* Whether every circuit of used[lo..hi) (all on one OCS) is up in epoch e. */
static bool all_up(const epoch_ctx *x, size_t lo, size_t hi, uint32_t e)
{
    for (size_t i = lo; i < hi; i++)
        if (!has_circuit(x, x->used[i].ocs, x->used[i].from, x->used[i].to, e))
            return false;
    return true;
}

/* Marks x->chg: OCS i's circuits of epochs e-1 and e differ (a circuit
 * set up or dropped at e). One pass over the circuits, sorted and without
 * repeats, so that a circuit's epochs are consecutive entries:
 * O(circuits). Circuits named on a node that is no OCS are left to the
 * verifier (they gate nothing). */
static void mark_changes(epoch_ctx *x)
{
    for (size_t i = 0; i < x->ncirc; i++) {
        const ckey4 *k = &x->circ[i];
        if (x->ocs_index[k->ocs] == UINT32_MAX)
            continue;
        uint8_t *chg = x->chg + (size_t)x->ocs_index[k->ocs] * x->nepochs;
        bool prev =
            i > 0 && same_circuit(&x->circ[i - 1], k) && x->circ[i - 1].epoch + 1 == k->epoch;
        if (k->epoch > 0 && !prev)
            chg[k->epoch] = 1; /* set up at its epoch */
        bool next = i + 1 < x->ncirc && same_circuit(&x->circ[i + 1], k) &&
                    x->circ[i + 1].epoch == k->epoch + 1;
        if (k->epoch + 1 < x->nepochs && !next)
            chg[k->epoch + 1] = 1; /* dropped after it */
    }
}

static weft_err read_circuits(plan_ctx *c, epoch_ctx *x)
{
    const weft_plan *p = c->p;
    uint32_t nc = weft_plan_num_circuits(p), nn = weft_topo_num_nodes(c->t);
    x->nepochs = weft_plan_num_epochs(p);
    x->circ = weft__malloc((nc ? nc : 1) * sizeof *x->circ);
    x->ocs_index = weft__malloc((nn ? nn : 1) * sizeof *x->ocs_index);
    if (!x->circ || !x->ocs_index)
        return weft_diag_code(c->d, WEFT_ENOMEM);
    for (uint32_t v = 0; v < nn; v++)
        x->ocs_index[v] =
            weft_topo_node_kind(c->t, (weft_node_id){v}) == WEFT_NODE_OCS ? x->nocs++ : UINT32_MAX;
    for (uint32_t i = 0; i < nc; i++) {
        weft_plan_circuit pc = weft_plan_get_circuit(p, i);
        weft_node_id o, a, b;
        if (!weft_topo_find_node(c->t, pc.ocs, &o) || !weft_topo_find_node(c->t, pc.from, &a) ||
            !weft_topo_find_node(c->t, pc.to, &b))
            return weft_diag_set(c->d, WEFT_ETOPO,
                                 "sim: circuit %s -> %s of epoch %u on '%s': no such node", pc.from,
                                 pc.to, pc.epoch, pc.ocs);
        x->circ[x->ncirc++] = (ckey4){o.v, a.v, b.v, pc.epoch};
    }
    qsort(x->circ, x->ncirc, sizeof *x->circ, ckey4_cmp);
    size_t uniq = 0; /* a circuit given twice is one circuit */
    for (size_t i = 0; i < x->ncirc; i++)
        if (!uniq || ckey4_cmp(&x->circ[uniq - 1], &x->circ[i]) != 0)
            x->circ[uniq++] = x->circ[i];
    x->ncirc = uniq;
    size_t ng = (size_t)x->nocs * x->nepochs;
    x->gate = weft__malloc((ng ? ng : 1) * sizeof *x->gate);
    x->chg = weft__calloc(ng ? ng : 1, sizeof *x->chg);
    x->dur = weft__calloc(ng ? ng : 1, sizeof *x->dur);
    if (!x->gate || !x->chg || !x->dur)
        return weft_diag_code(c->d, WEFT_ENOMEM);
    mark_changes(x);
    for (size_t i = 0; i < ng; i++)
        x->gate[i] = UINT32_MAX;
    /* Gates of the OCSes that have circuits. */
    weft_err err = WEFT_OK;
    for (uint32_t v = 0; v < nn && !err; v++) {
        uint32_t oi = x->ocs_index[v];
        if (oi == UINT32_MAX)
            continue;
        bool any = false;
        for (size_t i = 0; i < x->ncirc && !any; i++)
            any = x->circ[i].ocs == v;
        if (!any)
            continue;
        double delay =
            weft_rat_to_double(weft_topo_ocs_reconfig_ns(c->t, (weft_node_id){v})) * 1e-9;
        for (uint32_t e = 1; e < x->nepochs && !err; e++) {
            uint32_t route, f;
            double lat = x->chg[(size_t)oi * x->nepochs + e] ? delay : 0;
            if ((err = sim_engine_add_route(c->e, 0, NULL, NULL, lat, &route)) ||
                (err = sim_engine_add_flow(c->e, route, 0, 1, &f)))
                break;
            x->gate[(size_t)oi * x->nepochs + e] = f;
            if (e > 1)
                err = sim_engine_add_dep(c->e, f, x->gate[(size_t)oi * x->nepochs + e - 1]);
        }
    }
    return err ? weft_diag_code(c->d, err) : WEFT_OK;
}

/* The circuits op id's paths of epoch ep cross, into x->used, sorted. */
static weft_err collect_used(plan_ctx *c, epoch_ctx *x, uint32_t id, uint32_t ep)
{
    x->nused = 0;
    uint32_t np = weft_plan_op_num_paths(c->p, id);
    for (uint32_t k = 0; k < np; k++) {
        if (weft_plan_path_epoch(c->p, id, k) != ep)
            continue;
        uint32_t len = weft_plan_path_len(c->p, id, k);
        for (uint32_t j = 1; j + 1 < len; j++) {
            weft_node_id o, a, b;
            if (!weft_topo_find_node(c->t, weft_plan_path_node(c->p, id, k, j), &o) ||
                x->ocs_index[o.v] == UINT32_MAX)
                continue;
            weft_topo_find_node(c->t, weft_plan_path_node(c->p, id, k, j - 1), &a);
            weft_topo_find_node(c->t, weft_plan_path_node(c->p, id, k, j + 1), &b);
            if (weft__grow((void **)&x->used, &x->used_cap, x->nused + 1, sizeof *x->used))
                return weft_diag_code(c->d, WEFT_ENOMEM);
            x->used[x->nused++] = (ckey4){o.v, a.v, b.v, 0};
        }
    }
    qsort(x->used, x->nused, sizeof *x->used, ckey4_cmp);
    return WEFT_OK;
}

/* Planned rates (fluid model, alltoallv plans with circuits). The fluid
 * model weights each flow by its planned rate (docs/sim.md, "Sharing in
 * proportion to bytes"): a flow that may take the whole collective by
 * its bytes, as elsewhere, but a flow of epoch e must cross its circuit
 * within the epoch, so its weight is its bytes x T / D(e), T the plan's
 * own time and D(e) the epoch's duration on its OCS. Both come from the
 * plan as a circuit schedule counts them (weft_synth_a2a_circuits,
 * docs/ocs.md): D(e) is the busiest circuit of the epoch's bytes / the
 * circuit's rate (the slower of its two ports); T the larger of every
 * OCS's epochs plus its delay at each change, and every other link's
 * bytes / its capacity. When the plan's rates fit every link in every
 * epoch (they do when the packet flows and an epoch's circuit flows
 * together stay under the links they share), the level 1/T is feasible
 * at every moment, so every flow keeps at least its planned rate and the
 * simulated time is the plan's own plus route latencies. Without this,
 * epoch flows of equal weight lost to the packet flows beside them on the
 * GPUs' links, and at delay 0 the first (longest) epoch of a 32-rank
 * mixnet all-to-all took 469 us instead of 245 us.
 *
 * Cost: one walk over every path of the plan (a name lookup per node). */
static weft_err plan_durations(plan_ctx *c, epoch_ctx *x, const double *opb)
{
    const weft_plan *p = c->p;
    const weft_topo *t = c->t;
    uint32_t nops = weft_plan_num_ops(p), nl = weft_topo_num_links(t);
    double *cb = weft__calloc(x->ncirc ? x->ncirc : 1, sizeof *cb),
           *load = weft__calloc(nl ? nl : 1, sizeof *load);
    if (!cb || !load) {
        weft__free(cb);
        weft__free(load);
        return weft_diag_code(c->d, WEFT_ENOMEM);
    }
    for (uint32_t id = 0; id < nops; id++) {
        weft_op op = weft_plan_op(p, id);
        if (op.kind == WEFT_OP_NOP || op.count == 0 || op.src_rank.v == op.dst_rank.v)
            continue;
        uint32_t np = weft_plan_op_num_paths(p, id);
        for (uint32_t k = 0; k < np; k++) {
            double b =
                opb[id] / c->o->bw_scale * weft_rat_to_double(weft_plan_path_share(p, id, k));
            uint32_t len = weft_plan_path_len(p, id, k), ep = weft_plan_path_epoch(p, id, k);
            weft_node_id prev = {0}, v = {0}, next;
            for (uint32_t j = 0; j < len; j++, prev = v) {
                if (!weft_topo_find_node(t, weft_plan_path_node(p, id, k, j), &v))
                    break; /* explicit_route_sel reports it */
                weft_link_id l;
                if (j > 0 && weft_topo_find_link(t, prev, v, &l))
                    load[l.v] += b;
                if (ep == WEFT_PLAN_NO_EPOCH || j == 0 || j + 1 >= len ||
                    x->ocs_index[v.v] == UINT32_MAX ||
                    !weft_topo_find_node(t, weft_plan_path_node(p, id, k, j + 1), &next))
                    continue;
                ckey4 key = {v.v, prev.v, next.v, ep};
                const ckey4 *hit = bsearch(&key, x->circ, x->ncirc, sizeof key, ckey4_cmp);
                if (hit)
                    cb[hit - x->circ] += b;
            }
        }
    }
    for (size_t i = 0; i < x->ncirc; i++) {
        const ckey4 *k = &x->circ[i];
        weft_link_id in, out;
        weft_node_id o = {k->ocs}, from = {k->from}, to = {k->to};
        if (!(cb[i] > 0) || x->ocs_index[k->ocs] == UINT32_MAX ||
            !weft_topo_find_link(t, from, o, &in) || !weft_topo_find_link(t, o, to, &out))
            continue;
        double bw = c->cap[in.v] < c->cap[out.v] ? c->cap[in.v] : c->cap[out.v];
        double *d = &x->dur[(size_t)x->ocs_index[k->ocs] * x->nepochs + k->epoch];
        if (cb[i] / bw > *d)
            *d = cb[i] / bw;
    }
    double total = 0;
    for (uint32_t v = 0; v < weft_topo_num_nodes(t); v++) {
        uint32_t oi = x->ocs_index[v];
        if (oi == UINT32_MAX)
            continue;
        double delay = weft_rat_to_double(weft_topo_ocs_reconfig_ns(t, (weft_node_id){v})) * 1e-9,
               sum = 0;
        for (uint32_t e = 0; e < x->nepochs; e++)
            sum += x->dur[(size_t)oi * x->nepochs + e] +
                   (x->chg[(size_t)oi * x->nepochs + e] ? delay : 0);
        if (sum > total)
            total = sum;
    }
    for (uint32_t l = 0; l < nl; l++) {
        weft_link_id li = {l};
        if (x->ocs_index[weft_topo_link_src(t, li).v] != UINT32_MAX ||
            x->ocs_index[weft_topo_link_dst(t, li).v] != UINT32_MAX)
            continue;
        if (load[l] / c->cap[l] > total)
            total = load[l] / c->cap[l];
    }
    x->total_s = total;
    weft__free(cb);
    weft__free(load);
    return WEFT_OK;
}

/* The weight of a flow of epoch ep over the circuits x->used: its bytes
 * over a uniform slice's (as build_flows weighs the op's other paths) x
 * T / D, D the longest planned duration of ep on the OCSes it crosses. */
static double epoch_weight(const epoch_ctx *x, uint32_t ep, double bytes, double slice)
{
    double d = 0;
    for (size_t i = 0; i < x->nused; i++) {
        double di = x->dur[(size_t)x->ocs_index[x->used[i].ocs] * x->nepochs + ep];
        d = di > d ? di : d;
    }
    double w = bytes / slice;
    return d > 0 && x->total_s > d ? w * (x->total_s / d) : w;
}

/* Gates of flow f (epoch ep, drain marker mark) on each OCS its circuits
 * cross: f waits for the gate of the first epoch of the run in which its
 * circuits stay up, and the gate of the epoch that drops one of them waits
 * for f to drain (for its marker: a circuit may change once the flow's
 * last byte has crossed it, not one route latency later when it arrives). */
static weft_err gate_flow(plan_ctx *c, epoch_ctx *x, uint32_t f, uint32_t mark, uint32_t ep)
{
    weft_err err = WEFT_OK;
    for (size_t lo = 0; lo < x->nused && !err;) {
        size_t hi = lo;
        while (hi < x->nused && x->used[hi].ocs == x->used[lo].ocs)
            hi++;
        uint32_t oi = x->ocs_index[x->used[lo].ocs];
        const uint32_t *g = x->gate + (size_t)oi * x->nepochs;
        uint32_t e0 = ep, e1 = ep + 1;
        while (e0 >= 1 && all_up(x, lo, hi, e0 - 1))
            e0--;
        while (e1 < x->nepochs && all_up(x, lo, hi, e1))
            e1++;
        if (e0 >= 1 && e0 < x->nepochs && g[e0] != UINT32_MAX)
            err = sim_engine_add_dep(c->e, f, g[e0]);
        if (!err && e1 < x->nepochs && g[e1] != UINT32_MAX)
            err = sim_engine_add_dep(c->e, g[e1], mark);
        lo = hi;
    }
    /* The flow's circuits, for the order on each circuit (fifo_deps). */
    for (size_t i = 0; i < x->nused && !err; i++) {
        if (weft__grow((void **)&x->cf, &x->cf_cap, x->ncf + 1, sizeof *x->cf))
            return weft_diag_code(c->d, WEFT_ENOMEM);
        ckey4 k = x->used[i];
        k.epoch = ep;
        x->cf[x->ncf++] = (cflow){k, f, mark};
    }
    return err ? weft_diag_code(c->d, err) : WEFT_OK;
}

/* A circuit that stays up carries its epochs in order: a flow of epoch e
 * on circuit k starts once every flow of epoch e-1 on k has drained (the
 * plan gives each epoch its own duration D(e) on k). Without this, the
 * flows of every epoch of the run started together when the run's first
 * gate opened and shared k by weight, so an epoch's flows lost half the
 * circuit to the next epoch's; the gate of an epoch that drops another
 * circuit of theirs then opened late (mixnet:hosts=2, a zipf 1.2 matrix
 * of seed 0: 1,350.0 us simulated for a 1,119.4 us schedule, 20.6 % over;
 * 1,121.3 us after). */
static weft_err fifo_deps(plan_ctx *c, epoch_ctx *x)
{
    qsort(x->cf, x->ncf, sizeof *x->cf, cflow_cmp);
    weft_err err = WEFT_OK;
    size_t prev = 0; /* first record of the previous (circuit, epoch) group */
    for (size_t lo = 0; lo < x->ncf && !err;) {
        size_t hi = lo;
        while (hi < x->ncf && ckey4_cmp(&x->cf[hi].k, &x->cf[lo].k) == 0)
            hi++;
        const ckey4 *k = &x->cf[lo].k;
        bool chained =
            lo > 0 && same_circuit(&x->cf[lo - 1].k, k) && x->cf[lo - 1].k.epoch + 1 == k->epoch;
        for (size_t i = lo; chained && i < hi && !err; i++)
            for (size_t j = prev; j < lo && !err; j++)
                if (x->cf[j].f != x->cf[i].f)
                    err = sim_engine_add_dep(c->e, x->cf[i].f, x->cf[j].mark);
        prev = lo;
        lo = hi;
    }
    return err ? weft_diag_code(c->d, err) : WEFT_OK;
}

weft_err plan_build_epochs(plan_ctx *c, const weft_sim_opts *o, double chunk, const double *opb)
{
    const weft_plan *p = c->p;
    uint32_t nops = weft_plan_num_ops(p), P = o->slices;
    epoch_ctx x;
    memset(&x, 0, sizeof x);
    uint32_t *xstart = weft__malloc(((size_t)nops + 1) * sizeof *xstart), *eps = NULL;
    size_t eps_cap = 0;
    weft_err err = xstart ? read_circuits(c, &x) : weft_diag_code(c->d, WEFT_ENOMEM);
    /* Planned rates weigh the fluid model's flows of an alltoallv plan
     * (build_flows; plan_durations). */
    bool weighted = opb && o->model == WEFT_SIM_FLUID;
    if (!err && weighted)
        err = plan_durations(c, &x, opb);
    if (!err && (err = sim_engine_add_route(c->e, 0, NULL, NULL, 0, &x.mark_route)))
        err = weft_diag_code(c->d, err);
    uint32_t first = sim_engine_num_flows(c->e);
    for (uint32_t id = 0; id < nops && !err; id++) {
        xstart[id] = sim_engine_num_flows(c->e);
        uint32_t np = weft_plan_op_num_paths(p, id), ne = 0;
        weft_op op = weft_plan_op(p, id);
        for (uint32_t k = 0; k < np; k++) {
            uint32_t ep = weft_plan_path_epoch(p, id, k);
            bool seen = ep == WEFT_PLAN_NO_EPOCH;
            for (uint32_t i = 0; i < ne && !seen; i++)
                seen = eps[i] == ep;
            if (seen)
                continue;
            if (weft__grow((void **)&eps, &eps_cap, ne + 1, sizeof *eps)) {
                err = weft_diag_code(c->d, WEFT_ENOMEM);
                break;
            }
            eps[ne++] = ep;
        }
        for (uint32_t i = 0; i < ne && !err; i++) {
            double sum = 0;
            for (uint32_t k = 0; k < np; k++)
                if (weft_plan_path_epoch(p, id, k) == eps[i])
                    sum += weft_rat_to_double(weft_plan_path_share(p, id, k));
            double bytes = (opb ? opb[id] / o->bw_scale : chunk * P * op.count) * sum;
            uint32_t route, tail = 0, f, g, ntail = 0;
            if ((err =
                     plan_route_sel(c, id, eps[i], 1 / sum / op.count, PART_HEAD, NULL, &route)) ||
                (err =
                     plan_route_sel(c, id, eps[i], 1 / sum / op.count, PART_TAIL, &ntail, &tail)) ||
                (err = collect_used(c, &x, id, eps[i])))
                break;
            double w = weighted && bytes > 0 ? epoch_weight(&x, eps[i], bytes, chunk * P) : 1.0;
            if ((err = sim_engine_add_weighted_flow(c->e, route, bytes, 1, w, &f)) ||
                (ntail && (err = sim_engine_add_weighted_flow(c->e, tail, bytes, 1, w, &g))) ||
                (ntail && (err = o->cut_through ? sim_engine_add_ct_dep(c->e, g, f)
                                                : sim_engine_add_dep(c->e, g, f)))) {
                weft_diag_code(c->d, err);
                break;
            }
            uint32_t mark;
            if ((err = sim_engine_add_flow(c->e, x.mark_route, 0, 1, &mark)) ||
                (err = sim_engine_add_queue_dep(c->e, mark, f))) {
                weft_diag_code(c->d, err);
                break;
            }
            err = gate_flow(c, &x, f, mark, eps[i]);
        }
    }
    if (!err)
        err = fifo_deps(c, &x);
    if (!err)
        xstart[nops] = sim_engine_num_flows(c->e);
    /* Deps: an op's epoch flows wait for its deps (their last slice and
     * their epoch flows); its slices wait for its deps' epoch flows. */
    for (uint32_t id = 0; id < nops && !err && first < xstart[nops]; id++) {
        uint32_t nd;
        const uint32_t *deps = weft_plan_op_deps(p, id, &nd);
        for (uint32_t k = 0; k < nd && !err; k++) {
            uint32_t dp = deps[k];
            for (uint32_t f = xstart[id]; f < xstart[id + 1] && !err; f++) {
                err = sim_engine_add_dep(c->e, f, dp * P + P - 1);
                for (uint32_t g = xstart[dp]; g < xstart[dp + 1] && !err; g++)
                    err = sim_engine_add_dep(c->e, f, g);
            }
            for (uint32_t g = xstart[dp]; g < xstart[dp + 1] && !err; g++)
                for (uint32_t s = 0; s < P && !err; s++)
                    err = sim_engine_add_dep(c->e, id * P + s, g);
        }
        if (err)
            weft_diag_code(c->d, err);
    }
    weft__free(xstart);
    weft__free(eps);
    weft__free(x.circ);
    weft__free(x.ocs_index);
    weft__free(x.gate);
    weft__free(x.chg);
    weft__free(x.dur);
    weft__free(x.used);
    weft__free(x.cf);
    return err;
}
