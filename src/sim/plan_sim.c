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
#include "sim/plan_ctx.h"
#include "sim/result.h"
#include "sim/trace.h"
#include "weft/exec_model.h"
#include "weft/paths.h"

/* Calls simulated at most to find the back-to-back steady state of the
 * buckets (weft_sim_opts.back_to_back). */
#define BACK_TO_BACK_ROUNDS 8
/* Ops up to which weft_sim_plan keeps every protocol's engine, built for
 * its time bound, until it runs (three at once); a larger plan's engines
 * are built again to run, bounding the memory to one. */
#define PROTO_KEEP_OPS (1u << 20)

/* Frees what weft_sim_plan and weft_sim_plans build into the context. */
static void plan_ctx_fini(plan_ctx *c)
{
    sim_engine_free(c->e);
    weft_paths_free(c->paths);
    weft__map64_fini(&c->ecmp);
    weft__free(c->rlink);
    weft__free(c->rcoef);
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
           (y.dst_rank.v == x.dst_rank.v && yw == xw) || (y.src_rank.v == x.dst_rank.v && yr == xw);
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
        err = plan_build_epochs(c, o, chunk, opb);
    weft__free(opb);
    return err;
}

static weft_err build_flows(plan_ctx *c, const weft_sim_opts *o, double chunk, const double *opb)
{
    const weft_plan *p = c->p;
    const weft_topo *t = c->t;
    uint32_t nops = weft_plan_num_ops(p), P = o->slices, nranks = weft_plan_get_info(p)->nranks;
    weft_err err;
    uint32_t empty, now0 = UINT32_MAX;
    if ((err = sim_engine_add_route(c->e, 0, NULL, NULL, 0, &empty)))
        return weft_diag_code(c->d, err);
    for (uint32_t id = 0; id < nops; id++) {
        weft_op op = weft_plan_op(p, id);
        if (op.src_rank.v >= nranks || op.dst_rank.v >= nranks)
            return weft_diag_set(c->d, WEFT_EINVAL, "sim: op %u: rank %u out of range (%u ranks)",
                                 id, op.src_rank.v >= nranks ? op.src_rank.v : op.dst_rank.v,
                                 nranks);
        uint32_t route = empty;
        /* A compute op: no bytes, on a route of no links as long as its
         * kernel runs (weft_sim_opts.compute_s_per_b), without alpha (it
         * is no message). The whole time is on slice 0, so that a
         * dependent's first slice waits for all of it (the kernel ends
         * before what it prepares leaves); its other slices take none. */
        double compute_s = 0;
        weft_compute cp = weft_plan_op_compute(p, id);
        if (cp != WEFT_COMPUTE_NONE && opb)
            compute_s = opb[id] * o->compute_s_per_b[cp];
        if (!(compute_s >= 0 && compute_s < INFINITY))
            return weft_diag_set(c->d, WEFT_EINVAL,
                                 "sim: op %u (%s on rank %u): a compute time of %g s (the rate "
                                 "of %s must be finite and >= 0)",
                                 id, weft_compute_name(cp), op.src_rank.v, compute_s,
                                 weft_compute_name(cp));
        uint32_t timed = UINT32_MAX;
        if (cp != WEFT_COMPUTE_NONE &&
            ((now0 == UINT32_MAX && (err = sim_engine_add_now_route(c->e, 0, &now0))) ||
             (err = sim_engine_add_now_route(c->e, compute_s, &timed))))
            return weft_diag_code(c->d, err);
        double bytes = op.kind == WEFT_OP_NOP || op.count == 0 ? 0
                       : opb ? opb[id] / op.count / P / o->bw_scale
                             : chunk;
        if (op.src_rank.v != op.dst_rank.v && op.kind != WEFT_OP_NOP && op.count > 0) {
            if (weft_plan_op_num_paths(p, id))
                err = plan_explicit_route(c, id, &route);
            else
                err = plan_ecmp_route(c, weft_topo_rank_node(t, op.src_rank),
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
            if ((err = sim_engine_add_weighted_flow(c->e,
                                                    timed == UINT32_MAX ? route
                                                    : s == 0            ? timed
                                                                        : now0,
                                                    bytes, 1, w, &f)))
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
                return weft_diag_set(c->d, WEFT_EINVAL,
                                     "sim: op %u depends on op %u, which "
                                     "does not exist (%u ops)",
                                     id, deps[k], nops);
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
    weft__map64 last; /* (src rank << 42 | dst rank << 21 | lane) -> last op */
    weft__map64_init(&last);
    weft_err err = order ? weft_plan_topo_order(p, order, c->d) : WEFT_ENOMEM;
    for (uint32_t k = 0; !err && k < n; k++) {
        weft_op op = weft_plan_op(p, order[k]);
        if (op.kind == WEFT_OP_NOP || op.count == 0 || op.src_rank.v == op.dst_rank.v)
            continue;
        int32_t ha = weft_topo_node_host(c->t, weft_topo_rank_node(c->t, op.src_rank)),
                hb = weft_topo_node_host(c->t, weft_topo_rank_node(c->t, op.dst_rank));
        uint32_t lanes = ha >= 0 && ha == hb ? 1 : WEFT_EXEC_TCP_LANES;
        uint64_t key = ((uint64_t)op.src_rank.v << 42) | ((uint64_t)op.dst_rank.v << 21) |
                       (op.channel % lanes);
        uint32_t prev;
        bool added;
        if ((err = weft__map64_get_or_put(&last, key, order[k], &prev, &added)))
            break;
        if (!added) {
            err =
                sim_engine_add_queue_dep(c->e, c->base + order[k] * P, c->base + prev * P + P - 1);
            *weft__map64_find(&last, key) = order[k];
        }
    }
    weft__free(order);
    weft__map64_fini(&last);
    return err ? weft_diag_code(c->d, err) : WEFT_OK;
}

/* A new engine over the fabric's links for round `round` of plan_run:
 * shaped links (burst= peak=, tc-tbf(8)) get a token bucket each, the
 * peak scaled as the link's rate is; full, or back to back as the last
 * round left them (tok). */
static weft_err new_engine(plan_ctx *c, uint32_t nl, bool shaped, double *tok, uint32_t round)
{
    const weft_topo *t = c->t;
    weft_err err = sim_engine_new(nl, c->cap, NULL, &c->e);
    if (err)
        return err;
    sim_engine_set_symmetry(c->e, c->o->symmetry);
    /* Drains refill only the flows above the drained level (engine.h):
     * the rates of a whole refill, to rounding. */
    sim_engine_set_above(c->e, true);
    for (uint32_t l = 0; l < nl && shaped; l++) {
        weft_link_shaper sh;
        if (!weft_topo_link_shaper(t, (weft_link_id){l}, &sh))
            continue;
        double bw = weft_rat_to_double(weft_topo_link_bw(t, (weft_link_id){l})) * 1e9;
        double peak = weft_rat_to_double(sh.peak_gbps) * 1e9 * (c->cap[l] / bw);
        if (round == 0)
            tok[l] = (double)sh.burst_bytes;
        if ((err = sim_engine_set_bucket(c->e, l, (double)sh.burst_bytes, peak, tok[l])))
            return err;
    }
    return WEFT_OK;
}

/* Runs plan p of `size` bytes with settings o resolved for communicator
 * cm and protocol proto (o->proto, or one of sim_model_protos). With a
 * finite cutoff (the best time of another protocol) a run whose time is
 * sure to exceed it stops early or is not run at all (the engine's time
 * bound or its cutoff, engine.h): then *lost is true and *out is not
 * filled. The time it reports is the makespan plus launch_s >= 0 (when
 * both are > 0; sim_result_finish), and rounding is monotone, so a
 * makespan above the cutoff is a time above it. With bound non-NULL it
 * runs nothing: *bound is a lower bound on the time it would report, and
 * with keep non-NULL the engine it built (unshaped) is left in *keep for
 * the call that runs it (the same arguments and keep, bound NULL). */
static weft_err plan_run(const weft_topo *t, const weft_plan *p, uint64_t size,
                         const weft_sim_opts *o, const sim_comm *cm, int proto, double cutoff,
                         bool *lost, double *bound, sim_engine **keep, plan_route_memo *memo,
                         weft_sim_result *out, weft_diag *d)
{
    *lost = false;
    const weft_plan_info *info = weft_plan_get_info(p);
    weft_sim_opts asked = *o, resolved;
    asked.proto = proto;
    weft_err rerr = sim_model_resolve_comm(&asked, t, cm, info->coll, size,
                                           size / weft_plan_size_chunks(p), &resolved, d);
    if (rerr)
        return rerr;
    if ((rerr = sim_model_plan_step(&resolved, p, d)))
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
    c.memo = memo;
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
        if (round == 0 && keep && *keep) { /* built by the call that found the bound */
            c.e = *keep;
            *keep = NULL;
        } else {
            if ((err = new_engine(&c, nl, shaped, tok, round)))
                goto fail;
            if ((err = build(&c, size, o)))
                goto free_all;
        }
        if (round == 0) {
            double lb = sim_engine_time_bound(c.e, o->alpha_s);
            if (lb > 0 && o->launch_s > 0)
                lb += o->launch_s;
            if (bound) {
                *bound = lb;
                if (keep && !shaped) {
                    *keep = c.e;
                    c.e = NULL;
                }
                goto free_all;
            }
            if (lb > cutoff) {
                *lost = true;
                goto free_all;
            }
            if (!shaped)
                sim_engine_set_cutoff(c.e, cutoff);
        }
        if ((o->model == WEFT_SIM_RUNTIME && !o->cut_through &&
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
        if (sim_engine_cut(c.e)) {
            *lost = true;
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
        weft__map64_clear(&c.ecmp);
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
    if (o->trace && (err = sim_trace_plan(o->trace, t, p, c.e, o, size, d)))
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

/* A weft_sim_plan call's protocols for sim_model_fastest: protocol k is
 * protos[k], run on its kept engine when it has one (plan_run). */
typedef struct plan_job {
    const weft_topo *t;
    const weft_plan *p;
    uint64_t size;
    const weft_sim_opts *o;
    const sim_comm *cm;
    const int *protos;
    sim_engine **kept;
    plan_route_memo *memo;
} plan_job;

static weft_err plan_proto(void *ctx, uint32_t k, double cutoff, bool *lost, weft_sim_result *out,
                           weft_diag *d)
{
    plan_job *j = ctx;
    return plan_run(j->t, j->p, j->size, j->o, j->cm, j->protos[k], cutoff, lost, NULL, &j->kept[k],
                    j->memo, out, d);
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
    bool lost;
    if (np == 1)
        return plan_run(t, p, size, o, &cm, protos[0], INFINITY, &lost, NULL, NULL, NULL, out, d);
    /* NCCL's choice by weft's estimate: the fastest protocol (the first
     * in index order on a tie), simulated without a trace; the trace, when
     * asked, is of the one kept. Each protocol's flows are built first,
     * for its time bound; then they run by bound, each with the best time
     * so far as its cutoff, so one sure to be slower stops early or does
     * not run (plan_run): the same choice and result, often from one run
     * instead of one per protocol. */
    weft_sim_opts quiet = *o;
    quiet.trace = NULL;
    double lb[WEFT_PROTO_COUNT];
    sim_engine *kept[WEFT_PROTO_COUNT] = {NULL};
    err = WEFT_OK;
    bool keep_all = weft_plan_num_ops(p) <= PROTO_KEEP_OPS;
    plan_route_memo memo; /* the routes, searched once for every protocol */
    memset(&memo, 0, sizeof memo);
    for (uint32_t k = 0; k < np && !err; k++)
        err = plan_run(t, p, size, &quiet, &cm, protos[k], INFINITY, &lost, &lb[k],
                       keep_all ? &kept[k] : NULL, &memo, NULL, d);
    plan_job job = {t, p, size, &quiet, &cm, protos, kept, &memo};
    weft_sim_result best;
    uint32_t kb = 0;
    if (!err)
        err = sim_model_fastest(np, lb, plan_proto, &job, &best, &kb, d);
    for (uint32_t k = 0; k < np; k++)
        sim_engine_free(kept[k]);
    if (!err && o->trace)
        err = plan_run(t, p, size, o, &cm, protos[kb], INFINITY, &lost, NULL, NULL, &memo, out, d);
    else if (!err)
        *out = best;
    plan_route_memo_fini(&memo);
    return err;
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
    if (job->ring)
        return sim_model_resolve_ring(&asked, t, &cm, job->ring_coll, job->size, job->ring, out, d);
    err = sim_model_resolve_comm(&asked, t, &cm, info->coll, job->size,
                                 job->size / weft_plan_size_chunks(job->plan), out, d);
    if (!err)
        err = sim_model_plan_step(out, job->plan, d);
    return err;
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
            err = weft_diag_set(d, WEFT_EINVAL,
                                "sim: job %u: size and slices must be > 0, "
                                "alpha and start >= 0, and the plan without circuits",
                                j);
            goto free_all;
        }
        /* The engine has one alpha; the models give every job the same. */
        if (j == 0)
            alpha = res[j].alpha_s;
        else if (res[j].alpha_s != alpha) {
            err = weft_diag_set(d, WEFT_EINVAL,
                                "sim: job %u: another per-transfer overhead "
                                "than job 0's",
                                j);
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
        weft__map64_clear(&c.ecmp);
        c.p = p;
        c.o = r;
        c.epochs = false;
        c.base = base[j] = sim_engine_num_flows(c.e);
        c.slice_bytes = (double)jobs[j].size / (double)weft_plan_size_chunks(p) / P / r->bw_scale;
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
        done_s[j] = last > jobs[j].start_s && res[j].launch_s > 0 ? last + res[j].launch_s : last;
    }
free_all:
    plan_ctx_fini(&c);
    weft__free(cap);
    weft__free(res);
    weft__free(base);
    return err;
}
