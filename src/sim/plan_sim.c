/* Simulating a plan. See weft/sim.h (weft_sim_plan) for the model.
 *
 * Every op becomes `slices` engine flows, flow id = op * slices + slice, so
 * that a dependency cycle reported by the engine maps back to an op. Routes
 * are engine routes over the physical links; ops without a route share one
 * ECMP route per (source, destination, chunk count) through a small hash
 * table.
 *
 * An op that moves k chunks is k one-chunk transfers that leave together:
 * its engine flow carries one chunk's bytes on a route whose coefficients
 * are k times the path's, so that it gets k max-min shares of every link it
 * crosses and loads them with k chunks. A plan therefore simulates the same
 * whether identical transfers are merged into one op (as the optimal plan
 * merges identical trees) or written one by one.
 *
 * Sharing in proportion to bytes (docs/sim.md). In the fluid model the
 * flows of an alltoallv plan are weighted by their bytes (weighted max-min
 * fairness, engine.h "Weights"): the fluid model stands for a schedule
 * that paces every transfer at its planned rate, and where the plan's
 * transfers share a bottleneck in proportion to their bytes they drain
 * together, so a plan whose per-link loads fit the time T (the optimal
 * plan, from a flow) runs in T. The runtime and gpu models mimic software
 * that shares a link per flow (TCP streams, NCCL channels), whatever a
 * flow's size: their flows keep weight 1, and so does every flow of a
 * plan without a matrix (equal chunks: weights would change nothing).
 *
 * Cut-through (o->cut_through): a dep is a data dep when the two ops touch
 * exactly the same physical slots (weft_plan_storage_slot resolves in-place
 * aliases) with the same count, and one writes them: the dep wrote what the
 * op reads (forwarding, reducing) or overwrites, or the op overwrites what
 * the dep read (the allgather half of an allreduce overwriting a partial
 * sum that the reduce-scatter half sends on). Then both flows carry the
 * same bytes and byte k of the op needs byte k of the dep and nothing else
 * from it, which is what slice-by-slice pipelining gives as the slices get
 * small. Partial overlaps, deps that only order (disjoint slots, nops) and
 * deps of ops without links stay store and forward: there the op may need
 * all of the dep's data, or none of it but its completion.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "sim/model.h"
#include "sim/result.h"
#include "sim/trace.h"
#include "weft/exec_model.h"
#include "weft/paths.h"

/* (src node, dst node, chunk count) -> engine route, open addressing; 0 marks
 * empty. */
typedef struct pair_map {
    uint64_t *key; /* (src << 42 | dst << 21 | count) + 1 */
    uint32_t *val;
    uint32_t cap, n;
} pair_map;

static uint32_t pair_slot(const pair_map *m, uint64_t key)
{
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    uint32_t i = (uint32_t)(h >> 32) & (m->cap - 1);
    while (m->key[i] && m->key[i] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static weft_err pair_grow(pair_map *m)
{
    if ((uint64_t)(m->n + 1) * 2 <= m->cap)
        return WEFT_OK;
    pair_map g = {NULL, NULL, m->cap ? m->cap * 2 : 64, m->n};
    g.key = weft__calloc(g.cap, sizeof *g.key);
    g.val = weft__malloc(g.cap * sizeof *g.val);
    if (!g.key || !g.val) {
        weft__free(g.key);
        weft__free(g.val);
        return WEFT_ENOMEM;
    }
    for (uint32_t i = 0; i < m->cap; i++)
        if (m->key[i]) {
            uint32_t j = pair_slot(&g, m->key[i]);
            g.key[j] = m->key[i];
            g.val[j] = m->val[i];
        }
    weft__free(m->key);
    weft__free(m->val);
    *m = g;
    return WEFT_OK;
}

/* Frees the table and leaves it empty. */
static void pair_clear(pair_map *m)
{
    weft__free(m->key);
    weft__free(m->val);
    memset(m, 0, sizeof *m);
}

#define SEL_ALL (UINT32_MAX - 1)
/* Calls simulated at most to find the back-to-back steady state of the
 * buckets (weft_sim_opts.back_to_back). */
#define BACK_TO_BACK_ROUNDS 8

typedef struct plan_ctx {
    const weft_topo *t;
    const weft_plan *p;
    sim_engine *e;
    weft_paths *paths;
    pair_map ecmp;
    uint32_t *rlink; /* scratch for one route: links and coefficients */
    double *rcoef;
    size_t rlink_cap, rcoef_cap;
    bool epochs;            /* the plan has circuits (weft/plan.h): paths with an
                               epoch are flows of their own (plan_epochs) */
    const weft_sim_opts *o; /* resolved settings */
    const double *cap;      /* link capacities, bytes/s (sim_model_link_cap) */
    double slice_bytes;     /* wire bytes of one slice of one chunk */
    uint32_t base;          /* engine id of the plan's first flow (weft_sim_plans) */
    weft_diag *d;
} plan_ctx;

/* Frees what weft_sim_plan and weft_sim_plans build into the context. */
static void plan_ctx_fini(plan_ctx *c)
{
    sim_engine_free(c->e);
    weft_paths_free(c->paths);
    pair_clear(&c->ecmp);
    weft__free(c->rlink);
    weft__free(c->rcoef);
}

static weft_err reserve_route(plan_ctx *c, size_t n)
{
    if (weft__grow((void **)&c->rlink, &c->rlink_cap, n, sizeof *c->rlink) ||
        weft__grow((void **)&c->rcoef, &c->rcoef_cap, n, sizeof *c->rcoef))
        return WEFT_ENOMEM;
    return WEFT_OK;
}

/* The ECMP route between two nodes for an op of `count` chunks (its
 * coefficients are count times the per-link fractions), created on first
 * use. */
static weft_err ecmp_route(plan_ctx *c, weft_node_id a, weft_node_id b, uint32_t count,
                           uint32_t *route)
{
    /* The key packs (a, b, count) exactly when each fits in 21 bits;
     * beyond that the route is built but not cached (key 0). */
    uint64_t key = (((uint64_t)a.v << 42) | ((uint64_t)b.v << 21) | count) + 1;
    if (a.v >= (1u << 21) || b.v >= (1u << 21) || count >= (1u << 21))
        key = 0;
    if (key && c->ecmp.cap) {
        uint32_t i = pair_slot(&c->ecmp, key);
        if (c->ecmp.key[i]) {
            *route = c->ecmp.val[i];
            return WEFT_OK;
        }
    }
    weft_paths_route rt;
    weft_err err = weft_paths_route_get(c->paths, a, b, &rt, c->d);
    if (err)
        return err;
    if (reserve_route(c, rt.n))
        return weft_diag_code(c->d, WEFT_ENOMEM);
    for (uint32_t k = 0; k < rt.n; k++)
        c->rcoef[k] = rt.fracd[k] * count;
    double lat = weft_rat_to_double(rt.lat_ns) * 1e-9 +
                 sim_model_route_extra(c->o, c->t, a, b, rt.link, rt.n, c->slice_bytes);
    if ((err = sim_engine_add_route(c->e, rt.n, rt.link, c->rcoef, lat, route)))
        return weft_diag_code(c->d, err);
    if (!key)
        return WEFT_OK; /* not cached: a fabric or op beyond 2^21 nodes or chunks */
    if ((err = pair_grow(&c->ecmp)))
        return weft_diag_code(c->d, err);
    uint32_t i = pair_slot(&c->ecmp, key);
    c->ecmp.key[i] = key;
    c->ecmp.val[i] = *route;
    c->ecmp.n++;
    return WEFT_OK;
}

/* Which part of each path a route covers: all of it, or (circuit epochs)
 * the head up to the relay after its last OCS, or the tail from there. */
typedef enum route_part { PART_ALL, PART_HEAD, PART_TAIL } route_part;

/* An op's explicit route: per link, the sum of the shares of the paths
 * that cross it, times the op's chunk count; the latency is that of the
 * slowest path. */
static weft_err explicit_route_sel(plan_ctx *c, uint32_t op, uint32_t sel, double scale,
                                   route_part part, uint32_t *n_links, uint32_t *route);

static weft_err explicit_route(plan_ctx *c, uint32_t op, uint32_t *route)
{
    return explicit_route_sel(c, op, c->epochs ? WEFT_PLAN_NO_EPOCH : SEL_ALL, 1, PART_ALL, NULL,
                              route);
}

/* The relay of path k of op: the index of the first compute node after
 * the path's last OCS, where what the circuit delivered is forwarded on
 * (len - 1 when that is the destination or there is no OCS). */
static uint32_t path_relay(const plan_ctx *c, uint32_t op, uint32_t k)
{
    uint32_t len = weft_plan_path_len(c->p, op, k), last = len;
    weft_node_id v;
    for (uint32_t i = 1; i + 1 < len; i++)
        if (weft_topo_find_node(c->t, weft_plan_path_node(c->p, op, k, i), &v) &&
            weft_topo_node_kind(c->t, v) == WEFT_NODE_OCS)
            last = i;
    for (uint32_t i = last + 1; i + 1 < len; i++)
        if (weft_topo_find_node(c->t, weft_plan_path_node(c->p, op, k, i), &v) &&
            weft_topo_node_kind(c->t, v) == WEFT_NODE_COMPUTE)
            return i;
    return len - 1;
}

/* The same over the paths of epoch `sel` only (SEL_ALL: every path), each
 * share multiplied by scale, over the part of each path `part` names;
 * *n_links (may be NULL) receives the route's link count (a tail route
 * may have none: then no route is added). */
static weft_err explicit_route_sel(plan_ctx *c, uint32_t op, uint32_t sel, double scale,
                                   route_part part, uint32_t *n_links, uint32_t *route)
{
    const weft_topo *t = c->t;
    uint32_t np = weft_plan_op_num_paths(c->p, op), n = 0;
    double lat = 0, count = weft_plan_op(c->p, op).count;
    for (uint32_t k = 0; k < np; k++) {
        if (sel != SEL_ALL && weft_plan_path_epoch(c->p, op, k) != sel)
            continue;
        uint32_t len = weft_plan_path_len(c->p, op, k), lo = 0;
        if (part != PART_ALL) {
            uint32_t r = path_relay(c, op, k);
            if (part == PART_HEAD)
                len = r + 1;
            else
                lo = r;
        }
        double share = weft_rat_to_double(weft_plan_path_share(c->p, op, k)) * scale, plat = 0;
        weft_node_id prev = {0};
        for (uint32_t i = lo; i < len; i++) {
            const char *name = weft_plan_path_node(c->p, op, k, i);
            weft_node_id v;
            if (!weft_topo_find_node(t, name, &v))
                return weft_diag_set(c->d, WEFT_ETOPO, "sim: op %u path %u: unknown node '%s'",
                                     op, k, name);
            if (i > lo) {
                weft_link_id l;
                if (!weft_topo_find_link(t, prev, v, &l))
                    return weft_diag_set(c->d, WEFT_ETOPO, "sim: op %u path %u: no link %s -> %s",
                                         op, k, weft_topo_node_name(t, prev), name);
                plat += weft_rat_to_double(weft_topo_link_lat(t, l)) * 1e-9;
                uint32_t j = 0;
                while (j < n && c->rlink[j] != l.v)
                    j++;
                if (j == n) {
                    if (reserve_route(c, n + 1))
                        return weft_diag_code(c->d, WEFT_ENOMEM);
                    c->rlink[n] = l.v;
                    c->rcoef[n++] = 0;
                }
                c->rcoef[j] += share * count;
            }
            prev = v;
        }
        if (plat > lat)
            lat = plat;
    }
    if (n_links)
        *n_links = n;
    if (part == PART_TAIL && n == 0)
        return WEFT_OK;
    weft_op op_ = weft_plan_op(c->p, op);
    lat += sim_model_route_extra(c->o, t, weft_topo_rank_node(t, op_.src_rank),
                                 weft_topo_rank_node(t, op_.dst_rank), c->rlink, n,
                                 c->slice_bytes);
    weft_err err = sim_engine_add_route(c->e, n, c->rlink, c->rcoef, lat, route);
    return err ? weft_diag_code(c->d, err) : WEFT_OK;
}

/* Do ops x and y touch exactly the same slots in a way that orders them
 * byte by byte: y writes what x reads or writes, or x writes what y reads
 * (an op reads its source range, and a reduce also its destination; both
 * ranges on the same rank, the same physical slots, the same count)? Two
 * reads of the same slots are not ordered. */
static bool data_dep(const weft_plan *p, weft_op x, weft_op y)
{
    if (y.kind == WEFT_OP_NOP || y.count != x.count)
        return false;
    uint32_t yw = weft_plan_storage_slot(p, y.dst_rank, y.dst_buf, y.dst_index),
             yr = weft_plan_storage_slot(p, y.src_rank, y.src_buf, y.src_index),
             xw = weft_plan_storage_slot(p, x.dst_rank, x.dst_buf, x.dst_index),
             xr = weft_plan_storage_slot(p, x.src_rank, x.src_buf, x.src_index);
    return (y.dst_rank.v == x.src_rank.v && yw == xr) ||
           (y.dst_rank.v == x.dst_rank.v && yw == xw) ||
           (y.src_rank.v == x.dst_rank.v && yr == xw);
}

/* Whether op x may cut through on its deps: it moves data between ranks
 * (a local op or a nop takes no time, so it keeps store and forward). */
static bool forwards(weft_op x)
{
    return x.kind != WEFT_OP_NOP && x.count > 0 && x.src_rank.v != x.dst_rank.v;
}

static weft_err build_flows(plan_ctx *c, const weft_sim_opts *o, double chunk, const double *opb);
static weft_err build_deps(plan_ctx *c, const weft_sim_opts *o);
static weft_err build_epochs(plan_ctx *c, const weft_sim_opts *o, double chunk,
                             const double *opb);

static weft_err build(plan_ctx *c, uint64_t size, const weft_sim_opts *o)
{
    const weft_plan *p = c->p;
    uint32_t nops = weft_plan_num_ops(p), P = o->slices;
    double chunk = (double)size / (double)weft_plan_size_chunks(p) / P / o->bw_scale;
    weft_err err;
    /* An alltoallv plan: each op's own bytes (weft_plan_op_bytes_at), as
     * count flows of the same size, like the count chunks of any op. */
    double *opb = NULL;
    if (weft_plan_sized(p)) {
        opb = weft__malloc(((size_t)nops + 1) * sizeof *opb);
        if (!opb)
            return weft_diag_code(c->d, WEFT_ENOMEM);
        if ((err = weft_plan_op_bytes_at(p, (double)size, opb, c->d))) {
            weft__free(opb);
            return err;
        }
    }
    err = build_flows(c, o, chunk, opb);
    if (!err)
        err = build_deps(c, o);
    if (!err && c->epochs)
        err = build_epochs(c, o, chunk, opb);
    weft__free(opb);
    return err;
}

/* ---- Circuit epochs (weft/plan.h, "Circuits"; docs/ocs.md) ----------------
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
    uint32_t *gate;      /* nocs x nepochs: gate flow, UINT32_MAX none */
    uint8_t *chg;        /* nocs x nepochs: circuits of e differ from e-1's */
    double *dur;         /* nocs x nepochs: planned duration, s (plan_durations) */
    double total_s;      /* the plan's own time (plan_durations); 0: unweighted */
    ckey4 *used;         /* circuits of the flow being built (epoch unused) */
    size_t nused, used_cap;
} epoch_ctx;

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
        bool prev = i > 0 && same_circuit(&x->circ[i - 1], k) &&
                    x->circ[i - 1].epoch + 1 == k->epoch;
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
        x->ocs_index[v] = weft_topo_node_kind(c->t, (weft_node_id){v}) == WEFT_NODE_OCS
                              ? x->nocs++
                              : UINT32_MAX;
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
        double delay = weft_rat_to_double(weft_topo_ocs_reconfig_ns(c->t, (weft_node_id){v})) * 1e-9;
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
            double b = opb[id] / c->o->bw_scale *
                       weft_rat_to_double(weft_plan_path_share(p, id, k));
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

/* Gates of flow f (epoch ep) on each OCS its circuits cross: f waits for
 * the gate of the first epoch of the run in which its circuits stay up, and
 * the gate of the epoch that drops one of them waits for f to drain. */
static weft_err gate_flow(plan_ctx *c, epoch_ctx *x, uint32_t f, uint32_t ep)
{
    weft_err err = WEFT_OK;
    bool queued = false;
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
        /* A circuit may change once the flow's last byte has crossed it
         * (drained), not one route latency later when it arrives; the
         * engine queues at most one flow behind another, so a flow across
         * a second OCS holds that one's gate until it is done. */
        if (!err && e1 < x->nepochs && g[e1] != UINT32_MAX) {
            err = queued ? sim_engine_add_dep(c->e, g[e1], f)
                         : sim_engine_add_queue_dep(c->e, g[e1], f);
            queued = true;
        }
        lo = hi;
    }
    return err ? weft_diag_code(c->d, err) : WEFT_OK;
}

static weft_err build_epochs(plan_ctx *c, const weft_sim_opts *o, double chunk, const double *opb)
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
            if ((err = explicit_route_sel(c, id, eps[i], 1 / sum / op.count, PART_HEAD, NULL,
                                          &route)) ||
                (err = explicit_route_sel(c, id, eps[i], 1 / sum / op.count, PART_TAIL, &ntail,
                                          &tail)) ||
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
            err = gate_flow(c, &x, f, eps[i]);
        }
    }
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
    return err;
}

static weft_err build_flows(plan_ctx *c, const weft_sim_opts *o, double chunk, const double *opb)
{
    const weft_plan *p = c->p;
    const weft_topo *t = c->t;
    uint32_t nops = weft_plan_num_ops(p), P = o->slices, nranks = weft_plan_get_info(p)->nranks;
    weft_err err;
    uint32_t empty;
    if ((err = sim_engine_add_route(c->e, 0, NULL, NULL, 0, &empty)))
        return weft_diag_code(c->d, err);
    for (uint32_t id = 0; id < nops; id++) {
        weft_op op = weft_plan_op(p, id);
        if (op.src_rank.v >= nranks || op.dst_rank.v >= nranks)
            return weft_diag_set(c->d, WEFT_EINVAL, "sim: op %u: rank %u out of range (%u ranks)",
                                 id, op.src_rank.v >= nranks ? op.src_rank.v : op.dst_rank.v,
                                 nranks);
        uint32_t route = empty;
        double bytes = op.kind == WEFT_OP_NOP || op.count == 0 ? 0
                       : opb ? opb[id] / op.count / P / o->bw_scale
                             : chunk;
        if (op.src_rank.v != op.dst_rank.v && op.kind != WEFT_OP_NOP && op.count > 0) {
            if (weft_plan_op_num_paths(p, id))
                err = explicit_route(c, id, &route);
            else
                err = ecmp_route(c, weft_topo_rank_node(t, op.src_rank),
                                 weft_topo_rank_node(t, op.dst_rank), op.count, &route);
            if (err)
                return err;
        }
        /* The fluid model shares links in proportion to bytes in an
         * alltoallv plan (the file comment): the weight is the flow's
         * bytes over a uniform chunk's, 1 for a flow without bytes. */
        double w = opb && o->model == WEFT_SIM_FLUID && bytes > 0 ? bytes / chunk : 1.0;
        for (uint32_t s = 0; s < P; s++) {
            uint32_t f;
            if ((err = sim_engine_add_weighted_flow(c->e, route, bytes, 1, w, &f)))
                return weft_diag_code(c->d, err);
        }
    }
    return WEFT_OK;
}

static weft_err build_deps(plan_ctx *c, const weft_sim_opts *o)
{
    const weft_plan *p = c->p;
    uint32_t nops = weft_plan_num_ops(p), P = o->slices;
    weft_err err;
    /* Slot ranges must lie in their buffers for weft_plan_storage_slot; a
     * plan that fails the structural check is simulated store and forward. */
    bool ct = o->cut_through && !weft_plan_check_structure(p, NULL);
    for (uint32_t id = 0; id < nops; id++) {
        uint32_t nd;
        const uint32_t *deps = weft_plan_op_deps(p, id, &nd);
        weft_op x = weft_plan_op(p, id);
        bool fw = ct && forwards(x);
        for (uint32_t k = 0; k < nd; k++) {
            if (deps[k] >= nops)
                return weft_diag_set(c->d, WEFT_EINVAL, "sim: op %u depends on op %u, which "
                                     "does not exist (%u ops)", id, deps[k], nops);
            bool through = fw && data_dep(p, x, weft_plan_op(p, deps[k]));
            for (uint32_t s = 0; s < P; s++) {
                uint32_t f = c->base + id * P + s, dep = c->base + deps[k] * P + s;
                /* A slice streams through only when it carries what its
                 * dependency delivered; in an alltoallv plan an op may
                 * forward part or more of it (Bruck's packed messages),
                 * which then waits for the whole slice. */
                bool same = sim_engine_flow_bytes(c->e, f) == sim_engine_flow_bytes(c->e, dep);
                err = through && same ? sim_engine_add_ct_dep(c->e, f, dep)
                                      : sim_engine_add_dep(c->e, f, dep);
                if (err)
                    return weft_diag_code(c->d, err);
            }
        }
        /* The runtime model: a remote op's slices are messages of one
         * stream, posted in order, so slice s queues behind slice s-1
         * (stream_fifo) instead of waiting for it to be done. */
        bool queued = o->model == WEFT_SIM_RUNTIME && !o->cut_through && forwards(x);
        for (uint32_t s = 1; s < P; s++)
            if ((err = queued ? sim_engine_add_queue_dep(c->e, c->base + id * P + s,
                                                         c->base + id * P + s - 1)
                              : sim_engine_add_dep(c->e, c->base + id * P + s,
                                                   c->base + id * P + s - 1)))
                return weft_diag_code(c->d, err);
    }
    return WEFT_OK;
}

/* The runtime model's streams (weft/exec_model.h): the executor sends a
 * remote op on the stream (source rank, destination rank, lane) and posts
 * the items of one stream in its global order G (weft_plan_topo_order: op
 * by op, slices in order); the transport moves a stream's messages FIFO
 * over one connection (src/run/transport/tcp/tcp.c). So item (o, 0) of a
 * stream waits for the last item of the op before it on that stream: the
 * fluid engine would otherwise share the link between them fairly and
 * delay the earlier one, which a byte stream does not. Lanes: ranks of one
 * host (shared memory) have one; others WEFT_EXEC_TCP_LANES, op channel
 * mod lanes, as the executor's lanes_of. The next item starts when the
 * previous one has drained (sim_engine_add_queue_dep): its per-message cost
 * overlaps the transfer ahead of it, as a posted message's does. */
static weft_err stream_fifo(plan_ctx *c, uint32_t P)
{
    const weft_plan *p = c->p;
    uint32_t n = weft_plan_num_ops(p), nranks = weft_plan_get_info(p)->nranks;
    if (nranks >= (1u << 21))
        return WEFT_OK; /* keys would not be exact; no stream order (not a CPU cluster) */
    uint32_t *order = weft__malloc(((size_t)n + 1) * sizeof *order);
    pair_map last = {NULL, NULL, 0, 0};
    weft_err err = order ? weft_plan_topo_order(p, order, c->d) : WEFT_ENOMEM;
    for (uint32_t k = 0; !err && k < n; k++) {
        weft_op op = weft_plan_op(p, order[k]);
        if (op.kind == WEFT_OP_NOP || op.count == 0 || op.src_rank.v == op.dst_rank.v)
            continue;
        int32_t ha = weft_topo_node_host(c->t, weft_topo_rank_node(c->t, op.src_rank)),
                hb = weft_topo_node_host(c->t, weft_topo_rank_node(c->t, op.dst_rank));
        uint32_t lanes = ha >= 0 && ha == hb ? 1 : WEFT_EXEC_TCP_LANES;
        uint64_t key = (((uint64_t)op.src_rank.v << 42) | ((uint64_t)op.dst_rank.v << 21) |
                        (op.channel % lanes)) + 1;
        if ((err = pair_grow(&last)))
            break;
        uint32_t i = pair_slot(&last, key);
        if (last.key[i])
            err = sim_engine_add_queue_dep(c->e, c->base + order[k] * P,
                                           c->base + last.val[i] * P + P - 1);
        else
            last.n++;
        last.key[i] = key;
        last.val[i] = order[k];
    }
    weft__free(order);
    pair_clear(&last);
    return err ? weft_diag_code(c->d, err) : WEFT_OK;
}

/* Runs plan p of `size` bytes with settings o resolved for communicator
 * cm and protocol proto (o->proto, or one of sim_model_protos). */
static weft_err plan_run(const weft_topo *t, const weft_plan *p, uint64_t size,
                         const weft_sim_opts *o, const sim_comm *cm, int proto,
                         weft_sim_result *out, weft_diag *d)
{
    const weft_plan_info *info = weft_plan_get_info(p);
    weft_sim_opts asked = *o, resolved;
    asked.proto = proto;
    weft_err rerr = sim_model_resolve_comm(&asked, t, cm, info->coll, size,
                                           size / weft_plan_size_chunks(p), &resolved, d);
    if (rerr)
        return rerr;
    o = &resolved;
    if (size == 0 || o->slices == 0 || !(o->alpha_s >= 0))
        return weft_diag_set(d, WEFT_EINVAL, "sim: size and slices must be > 0, alpha >= 0");
    if ((uint64_t)weft_plan_num_ops(p) * o->slices >= UINT32_MAX - 1)
        return weft_diag_set(d, WEFT_ELIMIT, "sim: %u ops x %u slices exceed the engine's limit",
                             weft_plan_num_ops(p), o->slices);
    uint32_t nl = weft_topo_num_links(t);
    plan_ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.p = p;
    c.d = d;
    c.o = o;
    c.slice_bytes = (double)size / (double)weft_plan_size_chunks(p) / o->slices / o->bw_scale;
    c.epochs = weft_plan_num_circuits(p) > 0;
    sim_classes cls;
    memset(&cls, 0, sizeof cls);
    weft_err err = WEFT_ENOMEM;
    double *cap = weft__malloc((nl ? nl : 1) * sizeof *cap), *tok = NULL;
    cls.lrep = weft__malloc((nl ? nl : 1) * sizeof *cls.lrep);
    cls.lcount = weft__malloc((nl ? nl : 1) * sizeof *cls.lcount);
    if (!cap || !cls.lrep || !cls.lcount)
        goto fail;
    for (uint32_t l = 0; l < nl; l++) {
        cap[l] = sim_model_link_cap(o, t, (weft_link_id){l});
        cls.lrep[l] = l;
        cls.lcount[l] = 1;
    }
    cls.nl = nl;
    cls.nf = weft_plan_num_ops(p);
    c.cap = cap;
    if ((err = weft_paths_new(t, &c.paths)))
        goto fail;
    /* Shaped links (burst= peak=, tc-tbf(8)) get a token bucket each, the
     * peak scaled as the link's rate is; full, or back to back as the last
     * round left them. */
    bool shaped = false;
    for (uint32_t l = 0; l < nl && !shaped; l++) {
        weft_link_shaper sh;
        shaped = weft_topo_link_shaper(t, (weft_link_id){l}, &sh);
    }
    if (shaped && !(tok = weft__malloc(nl * sizeof *tok))) {
        err = WEFT_ENOMEM;
        goto fail;
    }
    for (uint32_t round = 0;; round++) {
        if ((err = sim_engine_new(nl, cap, NULL, &c.e)))
            goto fail;
        sim_engine_set_symmetry(c.e, o->symmetry);
        for (uint32_t l = 0; l < nl && shaped; l++) {
            weft_link_shaper sh;
            if (!weft_topo_link_shaper(t, (weft_link_id){l}, &sh))
                continue;
            double bw = weft_rat_to_double(weft_topo_link_bw(t, (weft_link_id){l})) * 1e9;
            double peak = weft_rat_to_double(sh.peak_gbps) * 1e9 * (cap[l] / bw);
            if (round == 0)
                tok[l] = (double)sh.burst_bytes;
            if ((err = sim_engine_set_bucket(c.e, l, (double)sh.burst_bytes, peak, tok[l])))
                goto fail;
        }
        if ((err = build(&c, size, o)) ||
            (o->model == WEFT_SIM_RUNTIME && !o->cut_through &&
             (err = stream_fifo(&c, o->slices))) ||
            (err = sim_engine_run(c.e, o->alpha_s, d))) {
            /* A cycle names an engine flow; say which op it is. */
            if (err == WEFT_EVERIFY) {
                uint32_t f = sim_engine_stuck_flow(c.e);
                weft_diag_set(d, WEFT_EVERIFY,
                              "sim: op %u (slice %u) never becomes ready (a dependency cycle)",
                              f / o->slices, f % o->slices);
            }
            goto free_all;
        }
        if (!shaped || !o->back_to_back || round + 1 == BACK_TO_BACK_ROUNDS)
            break;
        /* The next call starts with the tokens this one ended with. */
        bool same = true;
        for (uint32_t l = 0; l < nl; l++) {
            weft_link_shaper sh;
            if (!weft_topo_link_shaper(t, (weft_link_id){l}, &sh))
                continue;
            double end = sim_engine_bucket_tokens(c.e, l);
            if (fabs(end - tok[l]) > 1e-9 * (double)sh.burst_bytes)
                same = false;
            tok[l] = end;
        }
        if (same)
            break;
        sim_engine_free(c.e);
        c.e = NULL;
        pair_clear(&c.ecmp);
    }
    memset(out, 0, sizeof *out);
    sim_result_fill(out, c.e, &cls, cap, info->coll, info->nranks, size, 1.0, -1);
    out->transfers = (uint64_t)weft_plan_num_ops(p) * o->slices;
    out->simulated_steps = 0;
    {
        sim_engine_stats st;
        sim_engine_get_stats(c.e, &st);
        if (st.flow_classes < sim_engine_num_flows(c.e))
            out->flow_classes = st.flow_classes; /* reduced by symmetry */
    }
    sim_result_finish(out, o);
    if (o->trace && (err = sim_trace_plan(o->trace, t, p, c.e, o->slices, o->trace_run,
                                          o->trace_label, d)))
        goto free_all;
    err = WEFT_OK;
    goto free_all;
fail:
    weft_diag_code(d, err);
free_all:
    plan_ctx_fini(&c);
    weft__free(cap);
    weft__free(tok);
    sim_classes_fini(&cls);
    return err;
}

weft_err weft_sim_plan(const weft_topo *t, const weft_plan *p, uint64_t size,
                       const weft_sim_opts *o, weft_sim_result *out, weft_diag *d)
{
    weft_sim_opts defaults;
    if (!o) {
        weft_sim_opts_init(&defaults);
        o = &defaults;
    }
    const weft_plan_info *info = weft_plan_get_info(p);
    if (info->nranks != weft_topo_num_ranks(t))
        return weft_diag_set(d, WEFT_EINVAL, "sim: the plan has %u ranks, the fabric %u",
                             info->nranks, weft_topo_num_ranks(t));
    sim_comm cm;
    int protos[WEFT_PROTO_COUNT];
    weft_err err = sim_comm_of_plan(t, p, &cm, d);
    if (err)
        return err;
    uint32_t np = sim_model_protos(o, t, &cm, info->coll, protos);
    if (np == 1)
        return plan_run(t, p, size, o, &cm, protos[0], out, d);
    /* NCCL's choice by weft's estimate: the fastest protocol, simulated
     * without a trace; the trace, when asked, is of the one kept. */
    weft_sim_opts quiet = *o;
    quiet.trace = NULL;
    weft_sim_result best, r;
    int keep = -1;
    for (uint32_t k = 0; k < np; k++) {
        if ((err = plan_run(t, p, size, &quiet, &cm, protos[k], &r, d)))
            return err;
        if (keep < 0 || r.time_s < best.time_s) {
            best = r;
            keep = protos[k];
        }
    }
    if (o->trace)
        return plan_run(t, p, size, o, &cm, keep, out, d);
    *out = best;
    return WEFT_OK;
}

/* The settings job j runs with among several (weft_sim_plans): those
 * weft_sim_plan (weft_sim_rings for a ring job) would run it with alone,
 * the protocol included. */
static weft_err job_settings(const weft_topo *t, const weft_sim_job *job, const weft_sim_opts *o,
                             weft_sim_opts *out, weft_diag *d)
{
    const weft_plan_info *info = weft_plan_get_info(job->plan);
    weft_coll coll = job->ring ? job->ring_coll : info->coll;
    sim_comm cm;
    int protos[WEFT_PROTO_COUNT];
    weft_err err = sim_comm_of_plan(t, job->plan, &cm, d);
    if (err)
        return err;
    uint32_t np = sim_model_protos(o, t, &cm, coll, protos);
    int keep = protos[0];
    if (np > 1) {
        weft_sim_job alone = *job;
        alone.start_s = 0;
        double best = INFINITY;
        for (uint32_t k = 0; k < np; k++) {
            weft_sim_opts forced = *o;
            forced.proto = protos[k];
            double done;
            if ((err = weft_sim_plans(t, &alone, 1, &forced, &done, d)))
                return err;
            if (done < best) {
                best = done;
                keep = protos[k];
            }
        }
    }
    weft_sim_opts asked = *o;
    asked.proto = keep;
    return job->ring ? sim_model_resolve_ring(&asked, t, &cm, job->ring_coll, job->size,
                                              job->ring, out, d)
                     : sim_model_resolve_comm(&asked, t, &cm, info->coll, job->size,
                                              job->size / weft_plan_size_chunks(job->plan), out,
                                              d);
}

/* ---- Several plans at once (weft_sim_plans) ------------------------------
 *
 * Every job's plan is built into one engine as weft_sim_plan builds it
 * (its own resolved settings: slices, bytes, route latencies), its flows
 * numbered after the jobs before it. A job that starts at s > 0 gets a
 * timer: a flow without links whose route latency is s - alpha, so that it
 * is done at s (it starts at alpha, as every flow without deps does), and
 * every flow of an op without deps waits for it and starts at s + alpha,
 * as its first flows start at alpha when the plan runs alone. Links are
 * then shared max-min fairly between all the jobs' flows; a job is done
 * when its last flow is (plus its launch latency). */
weft_err weft_sim_plans(const weft_topo *t, const weft_sim_job *jobs, uint32_t n,
                        const weft_sim_opts *o, double *done_s, weft_diag *d)
{
    weft_sim_opts defaults;
    if (!o) {
        weft_sim_opts_init(&defaults);
        o = &defaults;
    }
    if (o->trace)
        return weft_diag_set(d, WEFT_EINVAL, "sim: several plans at once are not traced");
    uint32_t nl = weft_topo_num_links(t);
    weft_sim_opts *res = weft__calloc(n ? n : 1, sizeof *res);
    uint32_t *base = weft__calloc((size_t)n + 1, sizeof *base);
    double *cap = weft__malloc((nl ? nl : 1) * sizeof *cap);
    plan_ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.d = d;
    weft_err err = WEFT_OK;
    if (!res || !base || !cap) {
        err = weft_diag_code(d, WEFT_ENOMEM);
        goto free_all;
    }
    double alpha = 0;
    uint64_t flows = 0;
    for (uint32_t j = 0; j < n; j++) {
        const weft_plan *p = jobs[j].plan;
        const weft_plan_info *info = weft_plan_get_info(p);
        if (info->nranks != weft_topo_num_ranks(t)) {
            err = weft_diag_set(d, WEFT_EINVAL, "sim: job %u: the plan has %u ranks, the fabric %u",
                                j, info->nranks, weft_topo_num_ranks(t));
            goto free_all;
        }
        if ((err = job_settings(t, &jobs[j], o, &res[j], d)))
            goto free_all;
        if (jobs[j].size == 0 || res[j].slices == 0 || !(res[j].alpha_s >= 0) ||
            !(jobs[j].start_s >= 0) || weft_plan_num_circuits(p) > 0) {
            err = weft_diag_set(d, WEFT_EINVAL, "sim: job %u: size and slices must be > 0, "
                                "alpha and start >= 0, and the plan without circuits", j);
            goto free_all;
        }
        /* The engine has one alpha; the models give every job the same. */
        if (j == 0)
            alpha = res[j].alpha_s;
        else if (res[j].alpha_s != alpha) {
            err = weft_diag_set(d, WEFT_EINVAL, "sim: job %u: another per-transfer overhead "
                                "than job 0's", j);
            goto free_all;
        }
        flows += (uint64_t)weft_plan_num_ops(p) * res[j].slices + 1;
    }
    if (flows >= UINT32_MAX - 1) {
        err = weft_diag_set(d, WEFT_ELIMIT, "sim: %llu flows exceed the engine's limit",
                            (unsigned long long)flows);
        goto free_all;
    }
    for (uint32_t l = 0; l < nl; l++)
        cap[l] = sim_model_link_cap(n ? &res[0] : o, t, (weft_link_id){l});
    if ((err = weft_paths_new(t, &c.paths)) || (err = sim_engine_new(nl, cap, NULL, &c.e))) {
        weft_diag_code(d, err);
        goto free_all;
    }
    sim_engine_set_symmetry(c.e, o->symmetry);
    for (uint32_t j = 0; j < n && !err; j++) {
        const weft_plan *p = jobs[j].plan;
        const weft_sim_opts *r = &res[j];
        uint32_t P = r->slices, nops = weft_plan_num_ops(p);
        /* Routes carry this job's latency extras: a fresh ECMP table. */
        pair_clear(&c.ecmp);
        c.p = p;
        c.o = r;
        c.epochs = false;
        c.base = base[j] = sim_engine_num_flows(c.e);
        c.slice_bytes = (double)jobs[j].size / (double)weft_plan_size_chunks(p) / P /
                        r->bw_scale;
        if ((err = build(&c, jobs[j].size, r)))
            break;
        if (r->model == WEFT_SIM_RUNTIME && !r->cut_through && !jobs[j].ring &&
            (err = stream_fifo(&c, P)))
            break;
        if (r->model == WEFT_SIM_RUNTIME && jobs[j].ring) {
            /* A ring position's messages, step after step, are one stream
             * (as weft_sim_rings queues them): op id (step s, position q)
             * queues behind op id - positions (step s - 1, position q); the
             * positions are the ops of step 0, those without deps. */
            uint32_t pos = 0;
            while (pos < nops) {
                uint32_t nd;
                weft_plan_op_deps(p, pos, &nd);
                if (nd)
                    break;
                pos++;
            }
            for (uint32_t id = pos; id < nops && !err; id++)
                if ((err = sim_engine_add_queue_dep(c.e, c.base + id * P,
                                                    c.base + (id - pos) * P + P - 1)))
                    weft_diag_code(d, err);
            if (err)
                break;
        }
        if (!(jobs[j].start_s > 0))
            continue;
        uint32_t route, timer;
        double lat = jobs[j].start_s > alpha ? jobs[j].start_s - alpha : 0;
        if ((err = sim_engine_add_route(c.e, 0, NULL, NULL, lat, &route)) ||
            (err = sim_engine_add_flow(c.e, route, 0, 1, &timer))) {
            weft_diag_code(d, err);
            break;
        }
        for (uint32_t id = 0; id < nops && !err; id++) {
            uint32_t nd;
            weft_plan_op_deps(p, id, &nd);
            for (uint32_t s = 0; s < P && !nd && !err; s++)
                if ((err = sim_engine_add_dep(c.e, c.base + id * P + s, timer)))
                    weft_diag_code(d, err);
        }
    }
    base[n] = sim_engine_num_flows(c.e);
    if (!err && (err = sim_engine_run(c.e, alpha, d)) == WEFT_EVERIFY)
        weft_diag_set(d, WEFT_EVERIFY, "sim: a job's plan has a dependency cycle");
    for (uint32_t j = 0; j < n && !err; j++) {
        uint32_t P = res[j].slices, end = base[j] + weft_plan_num_ops(jobs[j].plan) * P;
        double last = jobs[j].start_s;
        for (uint32_t f = base[j]; f < end; f++) {
            double s0, s1, s2;
            sim_engine_flow_times(c.e, f, &s0, &s1, &s2);
            if (s2 > last)
                last = s2;
        }
        done_s[j] = last > jobs[j].start_s && res[j].launch_s > 0 ? last + res[j].launch_s
                                                                    : last;
    }
free_all:
    plan_ctx_fini(&c);
    weft__free(cap);
    weft__free(res);
    weft__free(base);
    return err;
}
