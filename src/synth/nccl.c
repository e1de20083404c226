/* NCCL's channels and its choice of algorithm and protocol per size (the
 * model is stated in weft/synth.h, "NCCL's choice"; docs/algorithms.md).
 *
 * Every figure below is one of NCCL's tuning constants, read in
 * github:NVIDIA/nccl @5067397c: the speed lists of src/graph/search.cc
 * (GB/s per channel) and the latencies (us) and per-channel caps (GB/s) of
 * src/graph/tuning.cc. Only the Ampere and Hopper rows are kept; the
 * multi-host LL cap and the network overhead are NCCL's rows for Intel
 * hosts unless the fabric's ranks say cpu=amd (weft_proto_cpu_amd). The
 * protocol's part of
 * the model (what each protocol costs per hop and per byte) sits in one
 * function, proto_model(), so that it can follow a shared protocol model
 * without touching the rest. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "synth/classic_internal.h"

#define MAX_CHANNELS 32    /* NCCL's MAXCHANNELS */
#define SEARCH_CHANNELS 16 /* the search's maxChannels: MAXCHANNELS / 2 */

/* search.cc: the per-channel rates the ring search tries, fastest first. */
static const double speed_intra[2][13] = {
    {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3},   /* Ampere */
    {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3, 0, 0}, /* Hopper */
};
static const double speed_inter[2][19] = {
    {48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12},
    {48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12, 0, 0},
};

/* tuning.cc, the tree's rows (the ring's are weft/protocol.h's): base
 * latency per protocol, and per-hop latency by link kind (NVLink, PCIe,
 * network) and protocol, us. */
static const double tree_base_lat[3] = {6.8, 14.0, 8.4};
enum { HW_NVLINK, HW_PCI, HW_NET };
static const double tree_hw_lat[3][3] = {{0.6, 1.25, 4.0}, {1.0, 1.9, 4.0}, {5.0, 8.5, 14.0}};
/* Caps by [hopper][min(hosts, 3) - 1]. */
static const double ll_max_single[2] = {87.7, 141.0}; /* one host, by GPU */
/* 2 hosts, more; [0] Intel hosts, [1] AMD hosts (llMaxBws, tuning.cc
 * lines 179-180 and the index1 of line 270). */
static const double ll_max_multi[2][2] = {{39.0, 20.4}, {22.5, 19.0}};
static const double tree_ll128_per_ch[2][3] = {{20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}};
static const double tree_per_ch[2][3] = {{24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}};
/* treeCorrectionFactor (tuning.cc, ncclTopoGetAlgoTime; the same values
 * in NCCL v2.19.3-1): the tree's allreduce bandwidth is scaled at sizes of
 * 64 B x 2^k, k < 23 ("Trees are not perfectly sticking to the model for
 * medium sizes"), by protocol LL, LL128, Simple. */
#define TREE_CORRECTION_SIZES 23
static const double tree_correction[3][TREE_CORRECTION_SIZES] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};

/* In-network algorithms (tuning.cc, ncclTunerConstantsDefaults and
 * ncclTopoTuneModel; github:NVIDIA/nccl @5067397c). Their base latencies
 * are 0; hwLatencies for Simple, us, NVLink then network rows; NVLS's
 * efficiency per generation (nvlsEfficiency: Hopper 0.85, Blackwell 0.74);
 * perChMaxNVLSTreeBws by [blackwell][min(hosts, 3) - 1] (no one-host row). */
#define NVLS_LAT_US 25.0          /* hwLatencies[NVLINK][NVLS][Simple] */
#define NVLS_NET_LAT_US 18.0      /* hwLatencies[NET][NVLS][Simple] */
#define NVLS_TREE_LAT_US 25.0     /* hwLatencies[NVLINK][NVLS_TREE][Simple] */
#define NVLS_TREE_NET_LAT_US 20.9 /* hwLatencies[NET][NVLS_TREE][Simple] */
#define COLLNET_DIRECT_LAT_US 3.7 /* hwLatencies[NVLINK][COLLNET_DIRECT][Simple] */
#define COLLNET_DIRECT_NET_LAT_US 31.0
#define COLLNET_CHAIN_LAT_US 2.8 /* hwLatencies[NVLINK][COLLNET_CHAIN][Simple] */
#define COLLNET_CHAIN_NET_LAT_US 30.0
#define COLLNET_ARITY_US 0.4       /* "arity serialization latency" per local rank */
#define PAT_BASE_US 8.0            /* baseLatencies[PAT] */
#define PAT_LINEAR_US 2.8          /* the "linear part" per rank */
#define PAT_BW_FACTOR 0.75         /* busBw *= .75 */
#define COLLNET_HOPPER_FACTOR 0.85 /* CollNet direct on sm90+: busBw *= .85 */
static const double nvls_efficiency[2] = {0.85, 0.74}; /* Hopper, Blackwell */
static const double nvls_tree_per_ch[2][3] = {{0, 57.7, 45.5}, {0, 96.0, 80.0}};
/* search.cc: sm100SpeedArrayIntra/Inter (the NVLS search of Blackwell). */
static const double speed_intra_sm100[12] = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
static const double speed_inter_sm100[19] = {96, 86,   80, 48, 45.1, 42, 40,  30,  24,  22,
                                             20, 17.5, 15, 12, 6,    3,  2.4, 1.2, 0.24};
#define MAX_NVLS_ARITY 32 /* NCCL_MAX_NVLS_ARITY, src/include/device.h */

const char *weft_nccl_algo_name(weft_nccl_algo a)
{
    static const char *const names[] = {"ring",      "tree",           "p2p",           "nvls",
                                        "nvls_tree", "collnet_direct", "collnet_chain", "pat"};
    return (unsigned)a < WEFT__NCCL_ALGO_COUNT ? names[a] : "?";
}

/* Whether node v is inside the host of rank 0 (topo host h0; with
 * hostless ranks, only rank 0's own node is). */
static bool inside(const weft_topo *t, weft_node_id v, int32_t h0, weft_node_id r0)
{
    if (h0 == WEFT_NO_HOST)
        return v.v == r0.v;
    return weft_topo_node_host(t, v) == h0;
}

/* The first rate of a speed list not above cap (the slowest when all are). */
static double first_speed(const double *list, size_t n, double cap)
{
    double last = list[0];
    for (size_t i = 0; i < n && list[i] > 0; i++) {
        last = list[i];
        if (list[i] <= cap)
            return list[i];
    }
    return last;
}

/* Host 0's ports and rank 0's bandwidth inside its host. */
static void host_links(const weft_topo *t, weft_nccl_fabric *f)
{
    weft_node_id r0 = weft_topo_rank_node(t, (weft_rank){0});
    int32_t h0 = weft_topo_node_host(t, r0);
    f->ports = 0;
    f->port_gbps = 0;
    f->rank_gbps = 0;
    for (uint32_t v = 0; v < weft_topo_num_nodes(t); v++) {
        weft_node_id id = {v};
        if (!inside(t, id, h0, r0))
            continue;
        uint32_t first, count;
        weft_topo_out_links(t, id, &first, &count);
        double out = 0;
        for (uint32_t k = 0; k < count; k++) {
            weft_link_id l = {first + k};
            weft_node_id w = weft_topo_link_dst(t, l);
            double bw = weft_rat_to_double(weft_topo_link_bw(t, l));
            if (!inside(t, w, h0, r0))
                out += bw;
            else if (v == r0.v && weft_topo_node_kind(t, w) != WEFT_NODE_NIC)
                f->rank_gbps += bw;
        }
        weft_link_id l;
        if (weft_topo_node_kind(t, id) == WEFT_NODE_SWITCH && weft_topo_find_link(t, r0, id, &l)) {
            f->nvswitch = true;
            if (weft_topo_node_reduce(t, id) == WEFT_REDUCE_NVLS)
                f->nvls = true;
        }
        if (out > 0) {
            f->port_gbps = f->ports == 0 || out < f->port_gbps ? out : f->port_gbps;
            f->ports++;
        }
    }
}

/* The NVLS search (search.cc, ncclTopoCompute with NCCL_TOPO_PATTERN_NVLS
 * and ncclTopoSearchTryNvls): only on an NVSwitch of sm90 or later. One
 * channel per head: every GPU inside one host (minChannels = maxChannels =
 * min(32, GPUs)), the GPUs with a NIC across hosts. Channel c loads every
 * GPU <-> NVSwitch link with its rate each way and its head's twice, so
 * over all channels a GPU's link carries (heads + 1) x bwIntra: bwIntra is
 * the fastest intra rate with (heads + 1) x rate <= the GPU's NVLink
 * bandwidth as NCCL counts it (link_eff x line rate: 18 x 20.6 GB/s on
 * H100). bwInter is the NIC's rate across hosts; inside one host nothing
 * limits it and pass 2 raises it while below 2 x bwIntra, to the list's
 * top. */
static void nvls_search(weft_nccl_fabric *f)
{
    f->nvls_channels = 0;
    if (!f->nvls || f->arch < WEFT_ARCH_HOPPER || f->per_host < 2) {
        f->nvls = false;
        return;
    }
    bool bw = f->arch >= WEFT_ARCH_BLACKWELL;
    uint32_t heads = f->per_host > MAX_NVLS_ARITY ? MAX_NVLS_ARITY : f->per_host;
    if (f->hosts > 1 && f->ports < heads)
        heads = f->ports;
    if (heads < 2) {
        f->nvls = false;
        return;
    }
    double eff = 1;
    weft_proto_link_eff(weft_gpu_arch_name(f->arch), WEFT_HOP_NVLINK, &eff);
    double nvl = f->rank_gbps * eff;
    const double *intra = bw ? speed_intra_sm100 : speed_intra[1];
    size_t nintra = bw ? 12 : 13;
    f->nvls_bw_intra = first_speed(intra, nintra, nvl / (heads + 1));
    if (f->hosts > 1) {
        f->nvls_bw_inter = bw ? first_speed(speed_inter_sm100, 19, f->port_gbps)
                              : first_speed(speed_inter[1], 19, f->port_gbps);
    } else {
        f->nvls_bw_inter = f->nvls_bw_intra;
        for (size_t i = nintra; i-- > 0;)
            if (intra[i] > f->nvls_bw_inter && f->nvls_bw_inter < 2 * f->nvls_bw_intra)
                f->nvls_bw_inter = intra[i];
    }
    f->nvls_channels = heads;
}

/* The tree search (search.cc, ncclTopoCompute; the same in NCCL v2.19.3-1
 * and @5067397c): pass 1 finds the ring's channels at the ring's rate, then
 * pass 2, for every pattern but the ring's, raises bwIntra alone one step
 * up the speed list (the inter list once a host has a NIC) while it is
 * below twice bwInter and the search still finds those channels. A tree
 * channel crosses each GPU's link to its NVSwitch once per direction
 * (followPath takes bwIntra per hop), so the channels fit while channels x
 * bwIntra <= the GPU's NVLink bandwidth as NCCL counts it (link_eff x line
 * rate, as in nvls_search). tuning.cc takes bwIntra for the tree on up to
 * 2 hosts. With one rank per host NCCL searches the plain TREE pattern
 * (nothing inside a host limits bwIntra) and scales that tree by .85;
 * neither is modelled: the tree keeps the ring's rate there. */
static void tree_search(weft_nccl_fabric *f)
{
    int arch = f->hopper;
    const double *list = f->hosts > 1 ? speed_inter[arch] : speed_intra[arch];
    size_t n = f->hosts > 1 ? 19 : 13, i = 0;
    while (i + 1 < n && list[i + 1] > 0 && list[i] > f->channel_gbps)
        i++;
    double eff = 1;
    weft_proto_link_eff(weft_gpu_arch_name(f->arch), WEFT_HOP_NVLINK, &eff);
    double nvl = f->hosts > 1 ? f->rank_gbps * eff : f->rank_gbps;
    f->tree_gbps = f->channel_gbps;
    while (f->per_host > 1 && i > 0 && f->tree_gbps < 2 * f->channel_gbps &&
           f->search_channels * list[i - 1] <= nvl)
        f->tree_gbps = list[--i];
}

/* The ring and NVLS searches on f's description (ranks, hosts, per_host,
 * ports, port_gbps, rank_gbps, arch, nvls_switch). */
static void search(weft_nccl_fabric *out)
{
    weft_nccl_fabric f = *out;
    f.hopper = f.arch >= WEFT_ARCH_HOPPER;
    int arch = f.hopper;
    if (f.hosts > 1 && f.ports > 0) {
        /* One ring per port at the fastest rate the port carries; a port
         * much faster than NCCL's top rate carries several. */
        double speed = first_speed(speed_inter[arch], 19, f.port_gbps);
        uint32_t per_port = f.port_gbps >= 2 * speed ? (uint32_t)(f.port_gbps / speed) : 1;
        f.search_channels = f.ports * per_port;
        f.channel_gbps = speed;
    } else {
        /* One host: rings share each rank's links inside it. */
        double cap = f.per_host > 1 && f.rank_gbps > 0 ? f.rank_gbps : f.port_gbps;
        double speed = first_speed(speed_intra[arch], 13, cap);
        f.search_channels = cap >= speed ? (uint32_t)(cap / speed) : 1;
        f.channel_gbps = speed < cap ? speed : cap;
    }
    if (f.search_channels > SEARCH_CHANNELS)
        f.search_channels = SEARCH_CHANNELS;
    if (f.search_channels < 1)
        f.search_channels = 1;
    /* ncclTopoDupChannels: fast rings are doubled at half the rate, except
     * on Hopper below 50 GB/s with more than 4 of them. */
    if (f.channel_gbps >= 25 && !(f.hopper && f.channel_gbps < 50 && f.search_channels > 4)) {
        uint32_t dup =
            2 * f.search_channels > SEARCH_CHANNELS ? SEARCH_CHANNELS : 2 * f.search_channels;
        if (dup > f.search_channels) {
            f.channel_gbps /= 2;
            f.search_channels = dup;
        }
    }
    tree_search(&f);
    /* ncclTopoPostset: the communicator runs every ring twice. */
    f.channels = 2 * f.search_channels > MAX_CHANNELS ? MAX_CHANNELS : 2 * f.search_channels;
    f.nvls = f.nvls_switch;
    nvls_search(&f);
    *out = f;
}

weft_err weft_nccl_fabric_get(const weft_topo *t, weft_nccl_fabric *out, weft_diag *d)
{
    weft_nccl_fabric f;
    memset(&f, 0, sizeof f);
    f.ranks = weft_topo_num_ranks(t);
    if (f.ranks < 2)
        return weft_diag_set(d, WEFT_ETOPO, "nccl needs at least 2 ranks, the fabric has %u",
                             f.ranks);
    synth_hosts h;
    weft_err e = synth_hosts_init(&h, t);
    if (e)
        return weft_diag_code(d, e);
    f.hosts = h.nhosts;
    for (uint32_t i = 0; i < h.nhosts; i++) {
        uint32_t m = h.start[i + 1] - h.start[i];
        f.per_host = m > f.per_host ? m : f.per_host;
    }
    synth_hosts_fini(&h);
    host_links(t, &f);
    for (uint32_t v = 0; v < weft_topo_num_nodes(t); v++) {
        weft_node_id id = {v};
        if (weft_topo_node_reduce(t, id) == WEFT_REDUCE_SHARP &&
            weft_topo_node_host(t, id) == WEFT_NO_HOST)
            f.collnet = true;
    }
    f.nvlink = f.rank_gbps >= 100;
    f.arch = f.rank_gbps >= 450 ? WEFT_ARCH_HOPPER : WEFT_ARCH_AMPERE;
    for (uint32_t r = 0; r < f.ranks; r++) {
        weft_gpu_arch ga;
        if (weft_gpu_arch_parse(
                weft_topo_node_attr(t, weft_topo_rank_node(t, (weft_rank){r}), "arch"), &ga)) {
            f.arch = ga;
            break;
        }
    }
    f.amd =
        weft_proto_cpu_amd(weft_topo_node_attr(t, weft_topo_rank_node(t, (weft_rank){0}), "cpu"));
    f.nvls_switch = f.nvls;
    search(&f);
    *out = f;
    return WEFT_OK;
}

static uint32_t log2_floor(uint32_t v)
{
    uint32_t r = 0;
    while (v >>= 1)
        r++;
    return r;
}

/* The protocol's part of NCCL's model: the bus bandwidth of algorithm a
 * (0 tree, 1 ring) with protocol p for coll, from the plain bandwidth
 * busbw of ch graph channels (NCCL's graph->nChannels: f->search_channels
 * in its estimate), and the per-hop latencies inside and between hosts.
 * Returns false when NCCL does not run that pair. */
static bool proto_model(const weft_nccl_fabric *f, weft_coll coll, int a, weft_proto p, double ch,
                        double *busbw, double *base_lat_us, double *intra_lat, double *inter_lat)
{
    int arch = f->hopper, n2 = f->hosts >= 3 ? 2 : (int)f->hosts - 1;
    double bw = *busbw;
    double ll_max = f->hosts == 1 ? ll_max_single[arch] : ll_max_multi[f->amd][n2 == 1 ? 0 : 1];
    if (p == WEFT_PROTO_LL128 && !f->nvlink)
        return false; /* NCCL enables LL128 on NVLink paths only */
    if (a == 1) {
        /* The ring: weft/protocol.h's figures (the same tuning.cc rows). */
        weft_proto_model m = weft_proto_model_host(
            f->arch, f->nvlink ? WEFT_HOP_NVLINK : WEFT_HOP_PCI, f->hosts, p, f->amd);
        bw *= m.bw_frac;
        if (m.chan_max_gbps > 0)
            bw = fmin(bw, ch * m.chan_max_gbps);
        if (m.total_max_gbps > 0)
            bw = fmin(bw, m.total_max_gbps);
        *busbw = bw;
        *base_lat_us = m.base_s * 1e6;
        *intra_lat = m.hop_s * 1e6;
        /* With one rank per host every hop is a network hop at the tree's. */
        *inter_lat = f->per_host == 1
                         ? tree_hw_lat[HW_NET][p]
                         : weft_proto_model_get(f->arch, WEFT_HOP_NET, f->hosts, p).hop_s * 1e6;
        return true;
    }
    if (coll == WEFT_COLL_ALLREDUCE)
        bw = fmin(bw * 0.92, ch * tree_per_ch[arch][n2]);
    if (p == WEFT_PROTO_LL)
        bw = fmin(bw / 3.8, ll_max);
    if (p == WEFT_PROTO_LL128)
        bw = fmin(bw * (f->hosts == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                  ch * tree_ll128_per_ch[arch][n2]);
    *busbw = bw;
    *base_lat_us = tree_base_lat[p];
    *intra_lat = tree_hw_lat[f->nvlink ? HW_NVLINK : HW_PCI][p];
    *inter_lat = tree_hw_lat[HW_NET][p];
    return true;
}

/* log2i of NCCL: floor(log2(v)), 0 for v <= 1. */
static double log2i(uint32_t v)
{
    return (double)log2_floor(v);
}

/* Why NCCL does not run algo a for coll on f (NULL when it does). */
static const char *disabled(const weft_nccl_fabric *f, weft_coll coll, weft_nccl_algo a)
{
    bool ar = coll == WEFT_COLL_ALLREDUCE,
         agrs = coll == WEFT_COLL_ALLGATHER || coll == WEFT_COLL_REDUCESCATTER;
    switch (a) {
    case WEFT_NCCL_RING:
        return coll == WEFT_COLL_ALLTOALL ? "NCCL runs all-to-all as p2p" : NULL;
    case WEFT_NCCL_TREE:
        return ar ? NULL : "NCCL's tree runs allreduce only";
    case WEFT_NCCL_P2P:
        return coll == WEFT_COLL_ALLTOALL ? NULL : "p2p is all-to-all only";
    case WEFT_NCCL_NVLS:
        if (!f->nvls)
            return "nvls needs an NVSwitch that reduces (reduce=nvls) and sm90+";
        if (!ar && !agrs)
            return "nvls runs allreduce, allgather and reducescatter only";
        if (f->hosts > 1 && !f->collnet)
            return "nvls across hosts needs a SHARP network (reduce=sharp)";
        if (f->hosts > 1 && agrs)
            return "nvls allgather/reducescatter across hosts needs a CollNet plugin";
        return NULL;
    case WEFT_NCCL_NVLS_TREE:
        if (!f->nvls)
            return "nvls_tree needs an NVSwitch that reduces (reduce=nvls) and sm90+";
        if (f->hosts < 2)
            return "nvls_tree needs several hosts";
        return ar ? NULL : "nvls_tree runs allreduce only";
    case WEFT_NCCL_COLLNET_DIRECT:
    case WEFT_NCCL_COLLNET_CHAIN:
        if (!f->collnet)
            return "collnet needs a network switch that reduces (reduce=sharp)";
        if (f->hosts < 2)
            return "collnet needs several hosts";
        if (a == WEFT_NCCL_COLLNET_DIRECT && !f->nvswitch)
            return "collnet_direct needs NVSwitch hosts";
        return ar ? NULL : "collnet runs allreduce only (without a CollNet plugin)";
    case WEFT_NCCL_PAT:
        if (!agrs)
            return "pat runs allgather and reducescatter only";
        if (f->per_host != 1 || f->hosts < 2)
            return "pat needs one rank per host";
        return NULL;
    default:
        return "unknown algorithm";
    }
}

bool weft_nccl_algo_innet(weft_nccl_algo a)
{
    return a == WEFT_NCCL_NVLS || a == WEFT_NCCL_NVLS_TREE || a == WEFT_NCCL_COLLNET_DIRECT ||
           a == WEFT_NCCL_COLLNET_CHAIN;
}

/* A graph channel's rate in NCCL's estimate for the tree (ai 0) or the
 * ring (1). tuning.cc: bwIntra on up to 2 hosts, bwInter beyond (the
 * ring's are the same rate). */
static double ring_tree_rate(const weft_nccl_fabric *f, int ai)
{
    return ai == 0 && f->hosts <= 2 && f->tree_gbps > 0 ? f->tree_gbps : f->channel_gbps;
}

/* NCCL's estimate for algorithm a (not p2p, enabled on f) with protocol
 * p; false when it does not run the pair. algbw_gbps: the bandwidth NCCL
 * divides the bytes by (algorithm bandwidth for ring, tree, NVLS; see
 * tuning.cc's "Convert bus BW to algorithm BW"); busbw_gbps: NCCL's bus
 * bandwidth before that conversion. */
static bool estimate(const weft_nccl_fabric *f, weft_coll coll, weft_nccl_algo a, weft_proto p,
                     double bytes, weft_nccl_cost *out)
{
    double n = f->ranks, ppn = (double)f->ranks / f->hosts;
    double nsteps = coll == WEFT_COLL_ALLREDUCE ? 2 * (n - 1)
                    : weft_coll_has_root(coll)  ? n
                                                : n - 1;
    int n2 = f->hosts >= 3 ? 2 : (int)f->hosts - 1, blackwell = f->arch >= WEFT_ARCH_BLACKWELL;
    bool ar = coll == WEFT_COLL_ALLREDUCE;
    double lat, busbw, algbw;
    if (a == WEFT_NCCL_RING || a == WEFT_NCCL_TREE) {
        int ai = a == WEFT_NCCL_RING ? 1 : 0;
        double inter_steps = f->hosts <= 1 ? 0 : ar ? 2.0 * (f->hosts - 1) : f->hosts - 1.0;
        double base, intra, inter;
        busbw = f->search_channels * ring_tree_rate(f, ai);
        if (!proto_model(f, coll, ai, p, f->search_channels, &busbw, &base, &intra, &inter))
            return false;
        algbw = busbw * (ai == 1 ? n / nsteps : 0.5);
        lat = base;
        if (ai == 1 && weft_coll_has_root(coll)) {
            lat += f->hosts > 1 ? inter : intra; /* NCCL's sameChannels case */
        } else if (ai == 1) {
            double over = f->hosts > 1
                              ? weft_proto_net_post_us(f->amd) * (p == WEFT_PROTO_SIMPLE ? 3 : 1)
                              : 0;
            intra = fmax(intra, over);
            lat += (nsteps - inter_steps) * intra + inter_steps * inter;
            /* The ring's plateau across hosts once chunks fill. */
            if (p == WEFT_PROTO_SIMPLE && f->hosts > 1 && ar &&
                bytes / ((double)f->channels * n) >= 64)
                lat *= 1.4;
        } else {
            lat += 2 * ((f->per_host - 1.0) * intra + log2_floor(f->hosts) * inter);
        }
    } else if (p != WEFT_PROTO_SIMPLE) {
        return false; /* the in-network algorithms and PAT: Simple */
    } else {
        /* With one rank per host the network latency is the tree's. */
        double tree_net = tree_hw_lat[HW_NET][WEFT_PROTO_SIMPLE];
        switch (a) {
        case WEFT_NCCL_NVLS:
        case WEFT_NCCL_NVLS_TREE: {
            double ch = f->nvls_channels;
            double intra_bw = f->nvls_bw_intra * nvls_efficiency[blackwell] * (ch - 1) / ch;
            intra_bw *= ar ? 2.0 : (ppn - 1) / ppn; /* allreduce pipelines two operations */
            double inter_bw =
                f->nvls_bw_inter * (a == WEFT_NCCL_NVLS_TREE && f->hosts <= 2 ? 2 : 1);
            double bw = fmin(intra_bw, inter_bw);
            if (a == WEFT_NCCL_NVLS_TREE)
                bw = fmin(bw, nvls_tree_per_ch[blackwell][n2]);
            busbw = ch * bw;
            algbw = ar ? busbw * n / nsteps : busbw; /* allgather, reducescatter: not converted */
            if (a == WEFT_NCCL_NVLS) {
                lat = NVLS_LAT_US + (f->hosts > 1 ? (ppn == 1 ? tree_net : NVLS_NET_LAT_US) : 0);
            } else {
                double inter = ppn == 1 ? tree_net : NVLS_TREE_NET_LAT_US;
                lat = NVLS_TREE_LAT_US + 2 * log2i(f->hosts) * inter;
            }
            break;
        }
        case WEFT_NCCL_COLLNET_DIRECT:
        case WEFT_NCCL_COLLNET_CHAIN: {
            /* The CollNet graphs: weft takes the ring search's channels and
             * rate (one per network port at the NIC's rate: the heads). */
            double ch = f->search_channels;
            busbw = ch * f->channel_gbps;
            double local = f->per_host - 1.0;
            if (a == WEFT_NCCL_COLLNET_DIRECT) {
                double factor = ppn / ch; /* GPU/NIC ratio */
                factor -= (factor - 1) / 2;
                busbw /= factor;
                if (f->arch >= WEFT_ARCH_HOPPER)
                    busbw *= COLLNET_HOPPER_FACTOR;
                double inter = ppn == 1 ? tree_net : COLLNET_DIRECT_NET_LAT_US;
                lat =
                    2 * (fmin(1, local) * COLLNET_DIRECT_LAT_US + local * COLLNET_ARITY_US) + inter;
            } else {
                double inter = ppn == 1 ? tree_net : COLLNET_CHAIN_NET_LAT_US;
                lat = 2 * local * COLLNET_CHAIN_LAT_US + inter;
            }
            algbw = busbw * 0.5;
            break;
        }
        case WEFT_NCCL_PAT: {
            /* PAT runs on the ring's graph: bwIntra up to 2 hosts, bwInter
             * beyond, which weft's search makes the same rate. */
            busbw = f->search_channels * f->channel_gbps * PAT_BW_FACTOR;
            algbw = busbw; /* allgather, reducescatter: not converted */
            lat = PAT_BASE_US + log2i(f->hosts) * (tree_net / 3.5) + n * PAT_LINEAR_US;
            break;
        }
        default:
            return false;
        }
    }
    if (!(algbw > 0))
        return false;
    /* ncclTopoGetAlgoTime: the tree's allreduce bandwidth times NCCL's
     * correction for medium sizes (below 512 MiB), by log2(bytes / 64);
     * only there is bytes / 64 converted (below 2^23: a larger double
     * does not fit the integer). */
    if (a == WEFT_NCCL_TREE && ar && bytes >= 64 &&
        bytes < 64.0 * (double)(1u << TREE_CORRECTION_SIZES)) {
        uint64_t units = (uint64_t)(bytes / 64);
        uint32_t log_size = 0;
        while (units >>= 1)
            log_size++;
        if (log_size < TREE_CORRECTION_SIZES)
            algbw *= tree_correction[p][log_size];
    }
    out->lat_s = lat * 1e-6;
    out->algbw_gbps = algbw;
    out->busbw_gbps = busbw;
    out->time_s = (lat + bytes / (1e3 * algbw)) * 1e-6;
    return true;
}

/* The plan text of a choice of algo a (ring and tree: the channels). */
static void plan_text(const weft_nccl_fabric *f, weft_coll coll, weft_nccl_algo a, char *buf,
                      size_t len)
{
    if (a == WEFT_NCCL_RING)
        snprintf(buf, len, "rings:%u", f->channels);
    else if (a == WEFT_NCCL_TREE)
        snprintf(buf, len, "dbtree");
    else if (a == WEFT_NCCL_P2P)
        snprintf(buf, len, "direct");
    else if (a == WEFT_NCCL_PAT)
        snprintf(buf, len, "%s", coll == WEFT_COLL_ALLGATHER ? "bruck" : "hd");
    else
        snprintf(buf, len, "%s", weft_nccl_algo_name(a));
}

bool weft_nccl_cost_of(const weft_nccl_fabric *f, weft_coll coll, weft_nccl_algo a, weft_proto p,
                       double bytes, weft_nccl_cost *out)
{
    if ((unsigned)coll >= WEFT__COLL_COUNT || !(bytes >= 0 && bytes < INFINITY) ||
        (unsigned)p >= WEFT_PROTO_COUNT || (unsigned)a >= WEFT__NCCL_ALGO_COUNT ||
        a == WEFT_NCCL_P2P || disabled(f, coll, a))
        return false;
    return estimate(f, coll, a, p, bytes, out);
}

/* enqueue.cc's per-thread work before NCCL adds a thread or a channel
 * (threadThresholds, tuning.cc @5067397c lines 588-593:
 * NCCL_LL_THREAD_THRESHOLD 8, NCCL_LL128_THREAD_THRESHOLD 8,
 * NCCL_SIMPLE_THREAD_THRESHOLD 64 of src/include/comm.h lines 49-51, the
 * ring's LL times the ranks) and the threads per channel (maxThreads,
 * tuning.cc lines 244-256: NCCL_LL_MAX_NTHREADS 512, NCCL_LL128_MAX_NTHREADS
 * 640, NCCL_SIMPLE_MAX_NTHREADS 512 of src/include/device.h lines 95-114;
 * the ring's Simple 256 when its graph carries at most PCI_BW, 12 GB/s, in
 * all). */
static double thread_work(const weft_nccl_fabric *f, weft_nccl_algo a, weft_proto p)
{
    static const double threshold[WEFT_PROTO_COUNT] = {8, 8, 64};
    static const double threads[WEFT_PROTO_COUNT] = {512, 640, 512};
    double thr = threshold[p], nt = threads[p];
    if (a == WEFT_NCCL_RING && p == WEFT_PROTO_LL)
        thr *= f->ranks;
    if (a == WEFT_NCCL_RING && p == WEFT_PROTO_SIMPLE &&
        f->channel_gbps * f->search_channels <= 12.0)
        nt = 256;
    return thr * nt;
}

uint32_t weft_nccl_channels(const weft_nccl_fabric *f, weft_nccl_algo a, weft_proto p, double bytes)
{
    uint32_t nc = f->channels;
    if ((a != WEFT_NCCL_RING && a != WEFT_NCCL_TREE) || (unsigned)p >= WEFT_PROTO_COUNT)
        return nc;
    /* enqueue.cc @5067397c lines 2092-2096 (topoGetAlgoInfo, "Ring/Tree
     * channel tuning"; the same loop in v2.19.3-1 lines 1225-1228). */
    double work = thread_work(f, a, p);
    while (nc >= 2 && bytes < nc * work)
        nc--;
    return nc;
}

double weft_nccl_channel_share(const weft_nccl_fabric *f, weft_coll coll, weft_nccl_algo a,
                               weft_proto p, double bytes)
{
    if ((unsigned)coll >= WEFT__COLL_COUNT || (a != WEFT_NCCL_RING && a != WEFT_NCCL_TREE) ||
        (unsigned)p >= WEFT_PROTO_COUNT || disabled(f, coll, a) || f->channels == 0 ||
        !(bytes >= 0))
        return 1;
    uint32_t nc = weft_nccl_channels(f, a, p, bytes);
    if (nc >= f->channels)
        return 1;
    /* NCCL's graph channel is two of the communicator's (ncclTopoPostset
     * runs every ring twice), so nc channels are nc / 2 graph channels. */
    int ai = a == WEFT_NCCL_RING ? 1 : 0;
    double base, intra, inter;
    double all = f->search_channels * ring_tree_rate(f, ai);
    double some = nc / 2.0 * ring_tree_rate(f, ai);
    if (!proto_model(f, coll, ai, p, f->search_channels, &all, &base, &intra, &inter) ||
        !proto_model(f, coll, ai, p, nc / 2.0, &some, &base, &intra, &inter) || !(all > 0))
        return 1;
    return some < all ? some / all : 1;
}

/* NCCL's algorithms in the order its tuner tries them (its algorithm
 * index: tree, ring, collnet direct, collnet chain, nvls, nvls tree, pat),
 * so that of equal estimates the one NCCL keeps wins. */
static const weft_nccl_algo nccl_order[] = {
    WEFT_NCCL_TREE,          WEFT_NCCL_RING, WEFT_NCCL_COLLNET_DIRECT,
    WEFT_NCCL_COLLNET_CHAIN, WEFT_NCCL_NVLS, WEFT_NCCL_NVLS_TREE,
    WEFT_NCCL_PAT,
};

/* The least estimate over the algorithms NCCL runs for which keep[a], in
 * NCCL's order and LL, LL128, Simple (only `proto` when >= 0; the first of
 * equal times wins); false when none. busbw_gbps is the bus bandwidth
 * (nccl-tests' factor on algbw). */
static bool best_of(const weft_nccl_fabric *f, weft_coll coll, double bytes,
                    const bool keep[WEFT__NCCL_ALGO_COUNT], int proto, weft_nccl_choice *best)
{
    bool found = false;
    for (size_t i = 0; i < sizeof nccl_order / sizeof nccl_order[0]; i++) {
        weft_nccl_algo a = nccl_order[i];
        if (!keep[a])
            continue;
        for (int p = 0; p < WEFT_PROTO_COUNT; p++) {
            weft_nccl_cost c;
            if (proto >= 0 && p != proto)
                continue;
            if (!weft_nccl_cost_of(f, coll, a, (weft_proto)p, bytes, &c))
                continue;
            if (!found || c.time_s < best->time_s) {
                found = true;
                best->algo = a;
                best->proto = (weft_proto)p;
                best->time_s = c.time_s;
                best->busbw_gbps = c.busbw_gbps;
            }
        }
    }
    return found;
}

static void fill_rank(const weft_nccl_fabric *f, weft_coll coll, double bytes, weft_nccl_choice *c)
{
    weft_nccl_choice r;
    memset(&r, 0, sizeof r);
    bool rank[WEFT__NCCL_ALGO_COUNT] = {[WEFT_NCCL_RING] = true, [WEFT_NCCL_TREE] = true};
    if (best_of(f, coll, bytes, rank, -1, &r)) {
        c->rank_algo = r.algo;
        c->rank_proto = r.proto;
        c->rank_time_s = r.time_s;
        plan_text(f, coll, r.algo, c->rank_plan, sizeof c->rank_plan);
    }
    weft_nccl_cost nv;
    c->nvls_s =
        weft_nccl_cost_of(f, coll, WEFT_NCCL_NVLS, WEFT_PROTO_SIMPLE, bytes, &nv) ? nv.time_s : 0;
}

static weft_err check_args(weft_coll coll, double bytes, weft_diag *d)
{
    if ((unsigned)coll >= WEFT__COLL_COUNT || !(bytes >= 0 && bytes < INFINITY))
        return weft_diag_set(d, WEFT_EINVAL, "nccl: bad collective or size (%g B)", bytes);
    return WEFT_OK;
}

static void p2p_choice(weft_nccl_choice *c)
{
    memset(c, 0, sizeof *c);
    c->algo = c->rank_algo = WEFT_NCCL_P2P;
    c->proto = c->rank_proto = WEFT_PROTO_SIMPLE;
    snprintf(c->plan, sizeof c->plan, "direct");
    snprintf(c->rank_plan, sizeof c->rank_plan, "direct");
}

weft_err weft_nccl_choose(const weft_nccl_fabric *f, weft_coll coll, double bytes,
                          weft_nccl_choice *out, weft_diag *d)
{
    weft_err e = check_args(coll, bytes, d);
    if (e)
        return e;
    weft_nccl_choice best;
    memset(&best, 0, sizeof best);
    if (coll == WEFT_COLL_ALLTOALL) {
        p2p_choice(out);
        return WEFT_OK;
    }
    bool all[WEFT__NCCL_ALGO_COUNT];
    for (int a = 0; a < WEFT__NCCL_ALGO_COUNT; a++)
        all[a] = true;
    if (!best_of(f, coll, bytes, all, -1, &best))
        return weft_diag_set(d, WEFT_EUNSUPPORTED, "nccl: no algorithm for %s",
                             weft_coll_name(coll));
    plan_text(f, coll, best.algo, best.plan, sizeof best.plan);
    fill_rank(f, coll, bytes, &best);
    *out = best;
    return WEFT_OK;
}

weft_err weft_nccl_choose_forced(const weft_nccl_fabric *f, weft_coll coll, double bytes, int algo,
                                 int proto, weft_nccl_choice *out, weft_diag *d)
{
    if (algo < 0 && proto < 0)
        return weft_nccl_choose(f, coll, bytes, out, d);
    weft_err e = check_args(coll, bytes, d);
    if (e)
        return e;
    if (algo >= WEFT__NCCL_ALGO_COUNT || proto >= WEFT_PROTO_COUNT)
        return weft_diag_set(d, WEFT_EINVAL, "nccl: bad algorithm %d or protocol %d", algo, proto);
    if (coll == WEFT_COLL_ALLTOALL || algo == WEFT_NCCL_P2P)
        return weft_diag_set(d, WEFT_EUNSUPPORTED,
                             "nccl: NCCL does not tune all-to-all (p2p: every pair at once), so no "
                             "algorithm or protocol is forced there");
    const char *why = algo >= 0 ? disabled(f, coll, (weft_nccl_algo)algo) : NULL;
    if (why)
        return weft_diag_set(d, WEFT_EUNSUPPORTED, "%s (%s)", why, weft_coll_name(coll));
    bool keep[WEFT__NCCL_ALGO_COUNT];
    for (int a = 0; a < WEFT__NCCL_ALGO_COUNT; a++)
        keep[a] = algo < 0 || a == algo;
    weft_nccl_choice best;
    memset(&best, 0, sizeof best);
    if (!best_of(f, coll, bytes, keep, proto, &best)) {
        if (algo >= 0 && proto >= 0)
            return weft_diag_set(d, WEFT_EUNSUPPORTED, "nccl: NCCL does not run %s with %s for %s",
                                 weft_nccl_algo_name((weft_nccl_algo)algo),
                                 weft_proto_name((weft_proto)proto), weft_coll_name(coll));
        if (algo >= 0)
            return weft_diag_set(d, WEFT_EUNSUPPORTED, "nccl: %s: no protocol for %s",
                                 weft_nccl_algo_name((weft_nccl_algo)algo), weft_coll_name(coll));
        return weft_diag_set(d, WEFT_EUNSUPPORTED, "nccl: no algorithm runs %s with %s",
                             weft_coll_name(coll), weft_proto_name((weft_proto)proto));
    }
    plan_text(f, coll, best.algo, best.plan, sizeof best.plan);
    fill_rank(f, coll, bytes, &best);
    *out = best;
    return WEFT_OK;
}

weft_err weft_nccl_fabric_group(const weft_nccl_fabric *full, uint32_t ranks, uint32_t hosts,
                                weft_nccl_fabric *out, weft_diag *d)
{
    if (ranks < 2 || hosts < 1 || hosts > ranks)
        return weft_diag_set(d, WEFT_EINVAL, "nccl: a communicator of %u ranks on %u hosts", ranks,
                             hosts);
    weft_nccl_fabric f = *full;
    f.ranks = ranks;
    f.hosts = hosts;
    f.per_host = (ranks + hosts - 1) / hosts;
    /* The NICs nearest its GPUs: as many ports as the host's in proportion
     * to the GPUs the communicator has there, at least one. */
    uint32_t ports = full->per_host ? full->ports * f.per_host / full->per_host : full->ports;
    f.ports = hosts > 1 ? (ports < 1 ? 1 : ports > full->ports ? full->ports : ports) : full->ports;
    search(&f);
    *out = f;
    return WEFT_OK;
}

weft_err weft_nccl_estimate(const weft_nccl_fabric *f, weft_coll coll, weft_nccl_algo algo,
                            double bytes, weft_nccl_choice *out, weft_diag *d)
{
    weft_err e = check_args(coll, bytes, d);
    if (e)
        return e;
    if ((unsigned)algo >= WEFT__NCCL_ALGO_COUNT)
        return weft_diag_set(d, WEFT_EINVAL, "nccl: bad algorithm %d", (int)algo);
    const char *why = disabled(f, coll, algo);
    if (why)
        return weft_diag_set(d, WEFT_EUNSUPPORTED, "%s (%s)", why, weft_coll_name(coll));
    if (algo == WEFT_NCCL_P2P) {
        p2p_choice(out);
        return WEFT_OK;
    }
    weft_nccl_choice best;
    memset(&best, 0, sizeof best);
    bool only[WEFT__NCCL_ALGO_COUNT] = {false};
    only[algo] = true;
    if (!best_of(f, coll, bytes, only, -1, &best))
        return weft_diag_set(d, WEFT_EUNSUPPORTED, "%s: no protocol for %s",
                             weft_nccl_algo_name(algo), weft_coll_name(coll));
    plan_text(f, coll, best.algo, best.plan, sizeof best.plan);
    fill_rank(f, coll, bytes, &best);
    *out = best;
    return WEFT_OK;
}

/* A step of NCCL's tree moves at the channel's rate: one thread block
 * copies (and reduces) a channel's steps, and a block's copy rate, not an
 * NVLink's, bounds a channel inside a host. NCCL models that rate by its
 * per-channel tree ceiling, perChMaxTreeBws (tuning.cc, tree_per_ch
 * above), which caps the tree's bus bandwidth at channels x it; the tree's
 * data (algorithm) rate is half its bus rate (estimate() below, NCCL's
 * tree ratio 0.5). So one channel moves a step's data at half that
 * constant: NCCL's model constant, not a measured copy rate, and not
 * fitted here. Where a link is slower (a NIC), the link rules
 * (sim_model_route_extra takes the lower). */
void synth_nccl_mark_tree(weft_plan *p, const weft_nccl_fabric *f)
{
    int n2 = f->hosts >= 3 ? 2 : f->hosts < 1 ? 0 : (int)f->hosts - 1;
    weft_plan_set_step_forward(p, WEFT_NCCL_SIMPLE_STEP, 0.5 * tree_per_ch[f->hopper][n2]);
}

weft_err synth_build_nccl(const synth_ctx *c, weft_plan **out)
{
    weft_nccl_fabric f;
    weft_nccl_choice ch;
    weft_err e = weft_nccl_fabric_get(c->topo, &f, c->d);
    if (!e)
        e = weft_nccl_choose(&f, c->coll, c->bytes, &ch, c->d);
    if (e)
        return e;
    synth_ctx rc = *c;
    /* An in-network choice has no rank-to-rank plan: the plan is NCCL's
     * best ring or tree (PAT's log-step plan is weft's bruck or hd). */
    if (ch.algo == WEFT_NCCL_PAT)
        return c->coll == WEFT_COLL_ALLGATHER ? synth_build_bruck(&rc, out)
                                              : synth_build_hd(&rc, out);
    switch (ch.rank_algo) {
    case WEFT_NCCL_RING:
        rc.param = f.channels;
        return synth_build_rings(&rc, out);
    case WEFT_NCCL_TREE:
        rc.param = f.channels;
        e = synth_build_dbtree(&rc, out);
        /* NCCL's tree forwards per Simple step (weft/synth.h). */
        if (!e)
            synth_nccl_mark_tree(*out, &f);
        return e;
    default:
        return synth_build_direct(&rc, out);
    }
}
