/* The simulator's execution models (weft_sim_model, weft/sim.h): from a
 * model, a fabric, a collective and a size to the knobs the engine runs
 * with. docs/sim.md ("Models") gives the reasons and the sources. */
#include <math.h>
#include <string.h>

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

/* Rank 0's largest out-link bandwidth, GB/s, to a node of its own host
 * other than a NIC (intra), or to a NIC or a node of no or another host
 * (inter). */
static void rank_bws(const weft_topo *t, double *intra, double *inter)
{
    *intra = *inter = 0;
    if (!weft_topo_num_ranks(t))
        return;
    weft_node_id v = weft_topo_rank_node(t, (weft_rank){0});
    int32_t h = weft_topo_node_host(t, v);
    uint32_t first, count;
    weft_topo_out_links(t, v, &first, &count);
    for (uint32_t k = 0; k < count; k++) {
        weft_link_id l = {first + k};
        weft_node_id w = weft_topo_link_dst(t, l);
        double bw = weft_rat_to_double(weft_topo_link_bw(t, l));
        bool in_host = h >= 0 && weft_topo_node_host(t, w) == h &&
                       weft_topo_node_kind(t, w) != WEFT_NODE_NIC;
        double *slot = in_host ? intra : inter;
        if (bw > *slot)
            *slot = bw;
    }
    if (*intra == 0)
        *intra = *inter;
    if (*inter == 0)
        *inter = *intra;
}

static weft_err resolve_gpu(weft_sim_opts *r, const weft_topo *t, weft_coll coll, uint64_t size,
                            weft_diag *d)
{
    weft_gpu_arch arch;
    if (!fabric_arch(t, &arch))
        return weft_diag_set(d, WEFT_EINVAL,
                             "sim: the gpu model needs the GPUs' generation, and no compute node "
                             "of this fabric has arch= (volta, ampere, hopper, blackwell)");
    uint32_t nodes = weft_topo_num_hosts(t), ranks = weft_topo_num_ranks(t);
    if (nodes < 1)
        nodes = 1;
    double intra, inter, eff = 1;
    rank_bws(t, &intra, &inter);
    /* NCCL's topology model counts NVLink (xGMI) at its per-link figure,
     * not the line rate: the links inside a box carry that fraction. */
    uint32_t n_ranks = weft_topo_num_ranks(t);
    for (uint32_t k = 0; k < n_ranks; k++) {
        const char *text = weft_topo_node_attr(t, weft_topo_rank_node(t, (weft_rank){k}), "arch");
        if (weft_proto_link_eff(text, WEFT_HOP_NVLINK, &eff))
            break;
    }
    intra *= eff;
    /* The bus bandwidth NCCL's rings get: a rank's NVLink bandwidth inside
     * one box; across boxes at most what the box's NICs carry together (a
     * rank's NIC bandwidth times the ranks of a box). */
    double total = intra, per_box = (double)ranks / nodes;
    if (nodes > 1 && inter * per_box < total)
        total = inter * per_box;
    weft_proto_ring ring = {coll, ranks < 2 ? 2 : ranks, nodes, GPU_CHANNELS,
                            total / GPU_CHANNELS, arch, WEFT_HOP_NVLINK};
    weft_proto p = (unsigned)r->proto < WEFT_PROTO_COUNT ? (weft_proto)r->proto
                   : total > 0                           ? weft_proto_choose(&ring, size, NULL)
                                                         : WEFT_PROTO_SIMPLE;
    weft_proto_model m = weft_proto_model_get(arch, WEFT_HOP_NVLINK, nodes, p);
    weft_proto_model net = weft_proto_model_get(arch, WEFT_HOP_NET, nodes, p);
    double frac = m.bw_frac;
    if (total > 0 && m.total_max_gbps > 0 && total * frac > m.total_max_gbps)
        frac = m.total_max_gbps / total;
    if (total > 0 && m.chan_max_gbps > 0 && total * frac > GPU_CHANNELS * m.chan_max_gbps)
        frac = GPU_CHANNELS * m.chan_max_gbps / total;
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

weft_err weft_sim_opts_resolve(const weft_sim_opts *o, const weft_topo *t, weft_coll coll,
                               uint64_t size, uint64_t chunk_bytes, weft_sim_opts *out,
                               weft_diag *d)
{
    weft_sim_opts r = *o;
    switch (o->model) {
    case WEFT_SIM_FLUID:
        break;
    case WEFT_SIM_RUNTIME:
        r.alpha_s = WEFT_EXEC_OP_OVERHEAD_S;
        r.slices = weft_exec_slices(chunk_bytes);
        r.cut_through = false;
        r.bw_scale = 1;
        r.intra_eff = 1;
        r.launch_s = r.hop_s = r.net_hop_s = 0;
        r.step_bytes = 0;
        r.proto = -1;
        break;
    case WEFT_SIM_GPU: {
        weft_err e = resolve_gpu(&r, t, coll, size, d);
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
        !(r.launch_s >= 0) || !(r.hop_s >= 0) || !(r.net_hop_s >= 0))
        return weft_diag_set(d, WEFT_EINVAL, "sim: bw_scale and intra_eff must be in (0, 1], "
                                             "launch and hop latencies >= 0");
    *out = r;
    return WEFT_OK;
}

double sim_model_route_extra(const weft_sim_opts *r, const weft_topo *t, weft_node_id a,
                             weft_node_id b, const uint32_t *links, uint32_t n,
                             double slice_bytes)
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
        if (slow > 0 && slow < INFINITY)
            extra += step / (slow * r->bw_scale);
    }
    return extra;
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

weft_err sim_model_resolve_ring(const weft_sim_opts *o, const weft_topo *t, weft_coll coll,
                                uint64_t size, uint32_t g, weft_sim_opts *out, weft_diag *d)
{
    weft_err rerr = weft_sim_opts_resolve(o, t, coll, size, size / g, out, d);
    if (rerr)
        return rerr;
    if (o->model == WEFT_SIM_GPU) {
        /* Without a plan there is nothing to cut through: the ring moves
         * slices of one pipeline step each, as NCCL's ring does. */
        out->cut_through = false;
        if (!o->slice_bytes) {
            /* Step sizes do not depend on the architecture. */
            uint64_t step = weft_proto_model_get(WEFT_ARCH_AMPERE, WEFT_HOP_NVLINK, 1,
                                                 (weft_proto)out->proto)
                                .step_bytes;
            uint64_t s = size / g / step;
            out->slices = s < 1 ? 1 : s > WEFT_EXEC_MAX_SLICES ? WEFT_EXEC_MAX_SLICES
                                                                : (uint32_t)s;
        }
    }
    return WEFT_OK;
}
