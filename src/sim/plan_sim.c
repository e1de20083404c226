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
    const weft_sim_opts *o; /* resolved settings */
    double slice_bytes;     /* wire bytes of one slice of one chunk */
    weft_diag *d;
} plan_ctx;

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

/* An op's explicit route: per link, the sum of the shares of the paths
 * that cross it, times the op's chunk count; the latency is that of the
 * slowest path. */
static weft_err explicit_route(plan_ctx *c, uint32_t op, uint32_t *route)
{
    const weft_topo *t = c->t;
    uint32_t np = weft_plan_op_num_paths(c->p, op), n = 0;
    double lat = 0, count = weft_plan_op(c->p, op).count;
    for (uint32_t k = 0; k < np; k++) {
        uint32_t len = weft_plan_path_len(c->p, op, k);
        double share = weft_rat_to_double(weft_plan_path_share(c->p, op, k)), plat = 0;
        weft_node_id prev = {0};
        for (uint32_t i = 0; i < len; i++) {
            const char *name = weft_plan_path_node(c->p, op, k, i);
            weft_node_id v;
            if (!weft_topo_find_node(t, name, &v))
                return weft_diag_set(c->d, WEFT_ETOPO, "sim: op %u path %u: unknown node '%s'",
                                     op, k, name);
            if (i > 0) {
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

static weft_err build(plan_ctx *c, uint64_t size, const weft_sim_opts *o)
{
    const weft_plan *p = c->p;
    uint32_t nops = weft_plan_num_ops(p), P = o->slices;
    double chunk = (double)size / (double)weft_plan_size_chunks(p) / P / o->bw_scale;
    weft_err err;
    /* An alltoallv plan: each op's own bytes (weft_plan_op_bytes_at), as
     * count flows of the same size, like the count chunks of any op. */
    double *opb = NULL;
    if (weft_plan_traffic(p)) {
        opb = weft__malloc(((size_t)nops + 1) * sizeof *opb);
        if (!opb)
            return weft_diag_code(c->d, WEFT_ENOMEM);
        if ((err = weft_plan_op_bytes_at(p, (double)size, opb, c->d))) {
            weft__free(opb);
            return err;
        }
    }
    err = build_flows(c, o, chunk, opb);
    weft__free(opb);
    if (err)
        return err;
    return build_deps(c, o);
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
        for (uint32_t s = 0; s < P; s++) {
            uint32_t f;
            if ((err = sim_engine_add_flow(c->e, route, bytes, 1, &f)))
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
                uint32_t f = id * P + s, dep = deps[k] * P + s;
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
            if ((err = queued ? sim_engine_add_queue_dep(c->e, id * P + s, id * P + s - 1)
                              : sim_engine_add_dep(c->e, id * P + s, id * P + s - 1)))
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
            err = sim_engine_add_queue_dep(c->e, order[k] * P, last.val[i] * P + P - 1);
        else
            last.n++;
        last.key[i] = key;
        last.val[i] = order[k];
    }
    weft__free(order);
    weft__free(last.key);
    weft__free(last.val);
    return err ? weft_diag_code(c->d, err) : WEFT_OK;
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
    weft_sim_opts resolved;
    weft_err rerr = weft_sim_opts_resolve(o, t, info->coll, size,
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
        weft__free(c.ecmp.key);
        weft__free(c.ecmp.val);
        memset(&c.ecmp, 0, sizeof c.ecmp);
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
    sim_engine_free(c.e);
    weft_paths_free(c.paths);
    weft__free(c.ecmp.key);
    weft__free(c.ecmp.val);
    weft__free(c.rlink);
    weft__free(c.rcoef);
    weft__free(cap);
    weft__free(tok);
    sim_classes_fini(&cls);
    return err;
}
