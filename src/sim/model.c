/* The simulator's execution models (weft_sim_model, weft/sim.h): from a
 * model, a fabric, a collective and a size to the knobs the engine runs
 * with. docs/sim.md ("Models") gives the reasons and the sources. */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "sim/model.h"
#include "weft/exec_model.h"
#include "weft/protocol.h"

/* NCCL runs this many channels on the NVSwitch boxes weft models (its
 * topology search reaches 16 to 32 on DGX A100/H100; with 16 the LL128
 * per-channel ceiling never binds below 0.92 of the bandwidth). */
#define GPU_CHANNELS 16u

const char *weft_sim_model_name(weft_sim_model m)
{
    static const char *const names[] = {"fluid", "runtime", "gpu"};
    return (unsigned)m < 3 ? names[m] : "?";
}

bool weft_sim_model_parse(const char *text, weft_sim_model *out)
{
    for (unsigned m = 0; text && m < 3; m++) {
        if (strcmp(text, weft_sim_model_name((weft_sim_model)m)) == 0) {
            *out = (weft_sim_model)m;
            return true;
        }
    }
    return false;
}

/* The GPU generation of the first compute node that names one. */
static bool fabric_arch(const weft_topo *t, weft_gpu_arch *out)
{
    uint32_t n = weft_topo_num_ranks(t);
    for (uint32_t r = 0; r < n; r++) {
        weft_node_id v = weft_topo_rank_node(t, (weft_rank){r});
        if (weft_gpu_arch_parse(weft_topo_node_attr(t, v, "arch"), out))
            return true;
    }
    return false;
}

weft_sim_model weft_sim_model_default(const weft_topo *t)
{
    weft_gpu_arch a;
    return fabric_arch(t, &a) ? WEFT_SIM_GPU : WEFT_SIM_RUNTIME;
}

/* Rank `first`'s largest out-link bandwidth, GB/s, to a node of its own
 * host other than a NIC (intra), or to a NIC or a node of no or another
 * host (inter). */
static void rank_bws(const weft_topo *t, uint32_t first, double *intra, double *inter)
{
    *intra = *inter = 0;
    if (first >= weft_topo_num_ranks(t))
        return;
    weft_node_id v = weft_topo_rank_node(t, (weft_rank){first});
    int32_t h = weft_topo_node_host(t, v);
    uint32_t lo, count;
    weft_topo_out_links(t, v, &lo, &count);
    for (uint32_t k = 0; k < count; k++) {
        weft_link_id l = {lo + k};
        weft_node_id w = weft_topo_link_dst(t, l);
        double bw = weft_rat_to_double(weft_topo_link_bw(t, l));
        bool in_host =
            h >= 0 && weft_topo_node_host(t, w) == h && weft_topo_node_kind(t, w) != WEFT_NODE_NIC;
        double *slot = in_host ? intra : inter;
        if (bw > *slot)
            *slot = bw;
    }
    if (*intra == 0)
        *intra = *inter;
    if (*inter == 0)
        *inter = *intra;
}

void sim_comm_all(const weft_topo *t, sim_comm *out)
{
    out->ranks = weft_topo_num_ranks(t);
    out->nodes = weft_topo_num_hosts(t) ? weft_topo_num_hosts(t) : 1;
    out->first = 0;
}

weft_err sim_comm_of(const weft_topo *t, const uint32_t *ranks, uint32_t n, sim_comm *out,
                     weft_diag *d)
{
    uint32_t hosts = weft_topo_num_hosts(t), nodes = 0, first = UINT32_MAX;
    uint8_t *seen = weft__calloc(hosts ? hosts : 1, 1);
    if (!seen)
        return weft_diag_code(d, WEFT_ENOMEM);
    for (uint32_t k = 0; k < n; k++) {
        int32_t h = weft_topo_node_host(t, weft_topo_rank_node(t, (weft_rank){ranks[k]}));
        if (h >= 0 && (uint32_t)h < hosts && !seen[h]) {
            seen[h] = 1;
            nodes++;
        }
        if (ranks[k] < first)
            first = ranks[k];
    }
    weft__free(seen);
    out->ranks = n;
    out->nodes = nodes ? nodes : 1;
    out->first = n ? first : 0;
    return WEFT_OK;
}

/* The root of rank r's set in the union-find forest up[] (path halving). */
static uint32_t find_root(uint32_t *up, uint32_t r)
{
    while (up[r] != r) {
        up[r] = up[up[r]];
        r = up[r];
    }
    return r;
}

weft_err sim_comm_of_plan(const weft_topo *t, const weft_plan *p, sim_comm *out, weft_diag *d)
{
    uint32_t n = weft_plan_get_info(p)->nranks, ops = weft_plan_num_ops(p);
    uint32_t *up = weft__malloc((size_t)(n ? n : 1) * sizeof *up);
    uint32_t *size = weft__calloc(n ? n : 1, sizeof *size);
    uint8_t *talks = weft__calloc(n ? n : 1, 1);
    weft_err err = WEFT_OK;
    if (!up || !size || !talks) {
        err = weft_diag_code(d, WEFT_ENOMEM);
        goto free_all;
    }
    for (uint32_t r = 0; r < n; r++)
        up[r] = r;
    for (uint32_t i = 0; i < ops; i++) {
        weft_op op = weft_plan_op(p, i);
        uint32_t a = op.src_rank.v, b = op.dst_rank.v;
        if (op.kind == WEFT_OP_NOP || a == b || a >= n || b >= n)
            continue;
        talks[a] = talks[b] = 1;
        uint32_t ra = find_root(up, a), rb = find_root(up, b);
        if (ra != rb)
            up[ra > rb ? ra : rb] = ra < rb ? ra : rb; /* the lower rank is the root */
    }
    /* The largest group, and of equal ones the lowest rank's. */
    uint32_t best = UINT32_MAX;
    for (uint32_t r = 0; r < n; r++)
        if (talks[r]) {
            uint32_t root = find_root(up, r);
            size[root]++;
            if (best == UINT32_MAX || size[root] > size[best])
                best = root;
        }
    if (best == UINT32_MAX) {
        sim_comm_all(t, out);
        goto free_all;
    }
    uint32_t m = 0;
    for (uint32_t r = 0; r < n; r++)
        if (talks[r] && find_root(up, r) == best)
            up[m++] = r; /* the ranks of the group, reusing up[0..m) */
    err = sim_comm_of(t, up, m, out, d);
free_all:
    weft__free(up);
    weft__free(size);
    weft__free(talks);
    return err;
}

/* NCCL's view of a ring over communicator c on t: the generation, the bus
 * bandwidth (GB/s) and the per-link figure inside a box. False when no
 * compute node names a generation. */
static bool comm_ring(const weft_topo *t, const sim_comm *c, weft_coll coll, weft_proto_ring *ring,
                      double *total, double *eff)
{
    weft_gpu_arch arch;
    if (!fabric_arch(t, &arch))
        return false;
    uint32_t nodes = c->nodes ? c->nodes : 1, ranks = c->ranks;
    double intra, inter;
    *eff = 1;
    rank_bws(t, c->first, &intra, &inter);
    /* NCCL's topology model counts NVLink (xGMI) at its per-link figure,
     * not the line rate: the links inside a box carry that fraction. */
    uint32_t n_ranks = weft_topo_num_ranks(t);
    for (uint32_t k = 0; k < n_ranks; k++) {
        const char *text = weft_topo_node_attr(t, weft_topo_rank_node(t, (weft_rank){k}), "arch");
        if (weft_proto_link_eff(text, WEFT_HOP_NVLINK, eff))
            break;
    }
    intra *= *eff;
    /* The bus bandwidth NCCL's rings get: a rank's NVLink bandwidth inside
     * one box; across boxes at most what the box's NICs carry together (a
     * rank's NIC bandwidth times the communicator's ranks per box). */
    double per_box = (double)ranks / nodes;
    *total = intra;
    if (nodes > 1 && inter * per_box < *total)
        *total = inter * per_box;
    /* NCCL tunes LL's cap and the ring's network posts by the hosts' CPU
     * vendor (cpu=amd on the communicator's first rank). */
    bool amd = c->first < n_ranks && weft_proto_cpu_amd(weft_topo_node_attr(
                                         t, weft_topo_rank_node(t, (weft_rank){c->first}), "cpu"));
    *ring =
        (weft_proto_ring){coll, ranks < 2 ? 2 : ranks, nodes, GPU_CHANNELS, *total / GPU_CHANNELS,
                          arch, WEFT_HOP_NVLINK,       amd};
    return true;
}

static weft_err resolve_gpu(weft_sim_opts *r, const weft_topo *t, const sim_comm *c, weft_coll coll,
                            uint64_t size, weft_diag *d)
{
    weft_proto_ring ring;
    double total, eff;
    if (!comm_ring(t, c, coll, &ring, &total, &eff))
        return weft_diag_set(d, WEFT_EINVAL,
                             "sim: the gpu model needs the GPUs' generation, and no compute node "
                             "of this fabric has arch= (volta, ampere, hopper, blackwell)");
    weft_proto p = (unsigned)r->proto < WEFT_PROTO_COUNT ? (weft_proto)r->proto
                   : total > 0                           ? weft_proto_choose(&ring, size, NULL)
                                                         : WEFT_PROTO_SIMPLE;
    /* NCCL caps LL across hosts by their CPU vendor (comm_ring). */
    weft_proto_model m =
        weft_proto_model_host(ring.arch, WEFT_HOP_NVLINK, ring.nodes, p, ring.amd_hosts);
    weft_proto_model net =
        weft_proto_model_host(ring.arch, WEFT_HOP_NET, ring.nodes, p, ring.amd_hosts);
    double frac = m.bw_frac;
    if (total > 0 && m.total_max_gbps > 0 && total * frac > m.total_max_gbps)
        frac = m.total_max_gbps / total;
    if (total > 0 && m.chan_max_gbps > 0 && total * frac > GPU_CHANNELS * m.chan_max_gbps)
        frac = GPU_CHANNELS * m.chan_max_gbps / total;
    /* NCCL's channels at this size (weft_nccl_channel_share): fewer move
     * less. */
    if (r->chan_share > 0 && r->chan_share < 1)
        frac *= r->chan_share;
    r->alpha_s = 0;
    r->slices = 1;
    r->cut_through = true;
    r->bw_scale = frac;
    r->intra_eff = eff;
    r->launch_s = m.base_s;
    r->hop_s = m.hop_s;
    r->net_hop_s = net.hop_s;
    /* A step's fill (one step per hop before the next rank can forward)
     * is left out: at 1 GiB it would charge Simple's 512 KiB at every hop
     * of a tree, 21 us per 25 GB/s NIC, which NCCL's own model does not
     * (docs/sim.md, "Models"). The ring without a plan still moves in
     * steps (weft_sim_ring). */
    r->step_bytes = 0;
    r->proto = (int)p;
    return WEFT_OK;
}

uint32_t sim_model_protos(const weft_sim_opts *o, const weft_topo *t, const sim_comm *c,
                          weft_coll coll, int protos[WEFT_PROTO_COUNT])
{
    weft_proto_ring ring;
    double total, eff;
    if (o->model != WEFT_SIM_GPU || o->proto >= 0 || !comm_ring(t, c, coll, &ring, &total, &eff) ||
        !(total > 0)) {
        protos[0] = o->proto;
        return 1;
    }
    uint32_t n = 0;
    for (int p = 0; p < WEFT_PROTO_COUNT; p++)
        if (weft_proto_enabled(&ring, (weft_proto)p))
            protos[n++] = p;
    return n;
}

weft_err sim_model_fastest(uint32_t np, const double *lb, sim_proto_run run, void *ctx,
                           weft_sim_result *best, uint32_t *kb, weft_diag *d)
{
    uint32_t by[WEFT_PROTO_COUNT];
    for (uint32_t k = 0; k < np; k++)
        by[k] = k;
    for (uint32_t i = 1; i < np; i++) /* by bound, stable */
        for (uint32_t j = i; j > 0 && lb[by[j]] < lb[by[j - 1]]; j--) {
            uint32_t x = by[j];
            by[j] = by[j - 1];
            by[j - 1] = x;
        }
    *kb = np; /* none yet */
    for (uint32_t i = 0; i < np; i++) {
        uint32_t k = by[i];
        if (*kb < np && lb[k] > best->time_s)
            continue;
        bool lost = false;
        weft_sim_result r;
        weft_err err = run(ctx, k, *kb < np ? best->time_s : INFINITY, &lost, &r, d);
        if (err)
            return err;
        if (!lost &&
            (*kb == np || r.time_s < best->time_s || (r.time_s == best->time_s && k < *kb))) {
            *best = r;
            *kb = k;
        }
    }
    return WEFT_OK;
}

weft_err weft_sim_opts_resolve(const weft_sim_opts *o, const weft_topo *t, weft_coll coll,
                               uint64_t size, uint64_t chunk_bytes, weft_sim_opts *out,
                               weft_diag *d)
{
    sim_comm all;
    sim_comm_all(t, &all);
    return sim_model_resolve_comm(o, t, &all, coll, size, chunk_bytes, out, d);
}

weft_err sim_model_resolve_comm(const weft_sim_opts *o, const weft_topo *t, const sim_comm *c,
                                weft_coll coll, uint64_t size, uint64_t chunk_bytes,
                                weft_sim_opts *out, weft_diag *d)
{
    weft_sim_opts r = *o;
    switch (o->model) {
    case WEFT_SIM_FLUID:
        break;
    case WEFT_SIM_RUNTIME:
        r.alpha_s = WEFT_EXEC_OP_OVERHEAD_S;
        r.slices = o->whole ? 1 : weft_exec_slices(chunk_bytes);
        r.cut_through = false;
        r.bw_scale = 1;
        r.intra_eff = 1;
        r.launch_s = r.hop_s = r.net_hop_s = 0;
        r.step_bytes = 0;
        r.proto = -1;
        break;
    case WEFT_SIM_GPU: {
        weft_err e = resolve_gpu(&r, t, c, coll, size, d);
        if (e)
            return e;
        break;
    }
    default:
        return weft_diag_set(d, WEFT_EINVAL, "sim: unknown model %d", (int)o->model);
    }
    if (o->slice_bytes > 0) {
        uint64_t s = chunk_bytes / o->slice_bytes;
        r.slices = s < 1 ? 1 : s > WEFT_EXEC_MAX_SLICES ? WEFT_EXEC_MAX_SLICES : (uint32_t)s;
    }
    if (!(r.bw_scale > 0 && r.bw_scale <= 1) || !(r.intra_eff > 0 && r.intra_eff <= 1) ||
        !(r.chan_share > 0 && r.chan_share <= 1) || !(r.launch_s >= 0) || !(r.hop_s >= 0) ||
        !(r.net_hop_s >= 0))
        return weft_diag_set(d, WEFT_EINVAL,
                             "sim: bw_scale, intra_eff and chan_share must be in (0, 1], "
                             "launch and hop latencies >= 0");
    *out = r;
    return WEFT_OK;
}

double sim_model_route_extra(const weft_sim_opts *r, const weft_topo *t, weft_node_id a,
                             weft_node_id b, const uint32_t *links, uint32_t n, double slice_bytes)
{
    int32_t ha = weft_topo_node_host(t, a), hb = weft_topo_node_host(t, b);
    double extra = ha == hb ? r->hop_s : r->net_hop_s;
    if (r->step_bytes > 0 && n > 0) {
        double slow = INFINITY;
        for (uint32_t k = 0; k < n; k++) {
            double bw = sim_model_link_cap(r, t, (weft_link_id){links[k]});
            if (bw < slow)
                slow = bw;
        }
        double step = (double)r->step_bytes < slice_bytes ? (double)r->step_bytes : slice_bytes;
        double rate = slow * r->bw_scale;
        if (r->step_gbps > 0 && r->step_gbps * 1e9 < rate)
            rate = r->step_gbps * 1e9;
        if (rate > 0 && rate < INFINITY)
            extra += step / rate;
    }
    return extra;
}

/* NCCL's tree moves 0.92 of what its channels carry: tuning.cc scales the
 * tree's bus bandwidth by .92 before any protocol's factor
 * (ncclTopoTuneModel, "busBw*.92", for every protocol in v2.19.3-1 and for
 * allreduce, the tree's only collective, @5067397c); the ring has no such
 * factor. */
#define NCCL_TREE_EFF 0.92

weft_err sim_model_plan_step(weft_sim_opts *r, const weft_plan *p, weft_diag *d)
{
    /* A plan moved whole (the compressed and sparse all-reduces) in the
     * runtime model: one slice a copy, as weft_sim_opts.whole asks. */
    if (r->model == WEFT_SIM_RUNTIME && !r->slice_bytes && weft_plan_whole_messages(p))
        r->slices = 1;
    double gbps;
    if (r->model != WEFT_SIM_GPU || weft_plan_step_forward(p, &gbps) == 0)
        return WEFT_OK;
    if (gbps > 0 && gbps < WEFT_PLAN_STEP_GBPS_MIN)
        return weft_diag_set(d, WEFT_EINVAL,
                             "sim: the plan's step rate (forward) of %g GB/s is below %g GB/s "
                             "(a byte a second)",
                             gbps, WEFT_PLAN_STEP_GBPS_MIN);
    r->bw_scale *= NCCL_TREE_EFF;
    if (r->proto == (int)WEFT_PROTO_SIMPLE)
        r->step_bytes = weft_plan_step_forward(p, &r->step_gbps);
    return WEFT_OK;
}

double sim_model_link_cap(const weft_sim_opts *r, const weft_topo *t, weft_link_id l)
{
    double bw = weft_rat_to_double(weft_topo_link_bw(t, l)) * 1e9;
    if (r->intra_eff == 1)
        return bw;
    weft_node_id a = weft_topo_link_src(t, l), b = weft_topo_link_dst(t, l);
    int32_t h = weft_topo_node_host(t, a);
    if (h >= 0 && weft_topo_node_host(t, b) == h && weft_topo_node_kind(t, a) != WEFT_NODE_NIC &&
        weft_topo_node_kind(t, b) != WEFT_NODE_NIC)
        bw *= r->intra_eff;
    return bw;
}

weft_err sim_model_resolve_ring(const weft_sim_opts *o, const weft_topo *t, const sim_comm *c,
                                weft_coll coll, uint64_t size, uint32_t g, weft_sim_opts *out,
                                weft_diag *d)
{
    weft_err rerr = sim_model_resolve_comm(o, t, c, coll, size, size / g, out, d);
    if (rerr)
        return rerr;
    if (o->model == WEFT_SIM_GPU) {
        /* Without a plan there is nothing to cut through: the ring moves
         * slices of one pipeline step each, as NCCL's ring does. */
        out->cut_through = false;
        if (!o->slice_bytes) {
            /* Step sizes do not depend on the architecture. */
            uint64_t step =
                weft_proto_model_get(WEFT_ARCH_AMPERE, WEFT_HOP_NVLINK, 1, (weft_proto)out->proto)
                    .step_bytes;
            uint64_t s = size / g / step;
            out->slices = s < 1 ? 1 : s > WEFT_EXEC_MAX_SLICES ? WEFT_EXEC_MAX_SLICES : (uint32_t)s;
        }
    }
    return WEFT_OK;
}
