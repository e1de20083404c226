/* NCCL's channels and its choice of algorithm and protocol per size (the
 * model is stated in weft/synth.h, "NCCL's choice"; docs/algorithms.md).
 *
 * Every figure below is one of NCCL's tuning constants, read in
 * github:NVIDIA/nccl @5067397c: the speed lists of src/graph/search.cc
 * (GB/s per channel) and the latencies (us) and per-channel caps (GB/s) of
 * src/graph/tuning.cc. Only the Ampere and Hopper rows are kept; the
 * multi-host LL cap is NCCL's row for Intel hosts. The protocol's part of
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
static const double ll_max_multi[2] = {39.0, 20.4};   /* 2 hosts, more (Intel hosts) */
static const double tree_ll128_per_ch[2][3] = {{20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}};
static const double tree_per_ch[2][3] = {{24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}};
#define NET_OVERHEAD_US 1.0  /* getNetOverhead on x86 Intel hosts */
#define NVLS_EFFICIENCY 0.85 /* nvlsEfficiency, Hopper */
#define NVLS_LAT_US 25.0     /* hwLatencies[NVLINK][NVLS][Simple]; NVLS has no base latency */

const char *weft_nccl_algo_name(weft_nccl_algo a)
{
    static const char *const names[] = {"ring", "tree", "p2p"};
    return (unsigned)a < WEFT__NCCL_ALGO_COUNT ? names[a] : "?";
}

/* Whether node v is inside the host of rank 0 (topo host h0; with
 * hostless ranks, only rank 0's own node is). */
static bool inside(const weft_topo *t, weft_node_id v, int32_t h0, weft_node_id r0)
{
    if (h0 == WEFT_NO_HOST) return v.v == r0.v;
    return weft_topo_node_host(t, v) == h0;
}

/* The first rate of a speed list not above cap (the slowest when all are). */
static double first_speed(const double *list, size_t n, double cap)
{
    double last = list[0];
    for (size_t i = 0; i < n && list[i] > 0; i++) {
        last = list[i];
        if (list[i] <= cap) return list[i];
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
        if (!inside(t, id, h0, r0)) continue;
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
        const char *red = weft_topo_node_attr(t, id, "reduce");
        weft_link_id l;
        if (red && strcmp(red, "1") == 0 && weft_topo_find_link(t, r0, id, &l)) f->nvls = true;
        if (out > 0) {
            f->port_gbps = f->ports == 0 || out < f->port_gbps ? out : f->port_gbps;
            f->ports++;
        }
    }
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
    if (e) return weft_diag_code(d, e);
    f.hosts = h.nhosts;
    for (uint32_t i = 0; i < h.nhosts; i++) {
        uint32_t m = h.start[i + 1] - h.start[i];
        f.per_host = m > f.per_host ? m : f.per_host;
    }
    synth_hosts_fini(&h);
    host_links(t, &f);
    for (uint32_t v = 0; v < weft_topo_num_nodes(t); v++) {
        weft_node_id id = {v};
        const char *red = weft_topo_node_attr(t, id, "reduce");
        if (red && strcmp(red, "1") == 0 && weft_topo_node_host(t, id) == WEFT_NO_HOST)
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
    if (f.search_channels > SEARCH_CHANNELS) f.search_channels = SEARCH_CHANNELS;
    if (f.search_channels < 1) f.search_channels = 1;
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
    /* ncclTopoPostset: the communicator runs every ring twice. */
    f.channels = 2 * f.search_channels > MAX_CHANNELS ? MAX_CHANNELS : 2 * f.search_channels;
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
 * (0 tree, 1 ring) with protocol p for coll, from the channels' plain
 * bandwidth busbw, and the per-hop latencies inside and between hosts.
 * Returns false when NCCL does not run that pair. */
static bool proto_model(const weft_nccl_fabric *f, weft_coll coll, int a, weft_proto p,
                        double *busbw, double *base_lat_us, double *intra_lat, double *inter_lat)
{
    int arch = f->hopper, n2 = f->hosts >= 3 ? 2 : (int)f->hosts - 1;
    double ch = f->search_channels, bw = *busbw;
    double ll_max = f->hosts == 1 ? ll_max_single[arch] : ll_max_multi[n2 == 1 ? 0 : 1];
    if (p == WEFT_PROTO_LL128 && !f->nvlink)
        return false; /* NCCL enables LL128 on NVLink paths only */
    if (a == 1) {
        /* The ring: weft/protocol.h's figures (the same tuning.cc rows). */
        weft_proto_model m =
            weft_proto_model_get(f->arch, f->nvlink ? WEFT_HOP_NVLINK : WEFT_HOP_PCI, f->hosts, p);
        bw *= m.bw_frac;
        if (m.chan_max_gbps > 0) bw = fmin(bw, ch * m.chan_max_gbps);
        if (m.total_max_gbps > 0) bw = fmin(bw, m.total_max_gbps);
        *busbw = bw;
        *base_lat_us = m.base_s * 1e6;
        *intra_lat = m.hop_s * 1e6;
        /* With one rank per host every hop is a network hop at the tree's. */
        *inter_lat = f->per_host == 1
                         ? tree_hw_lat[HW_NET][p]
                         : weft_proto_model_get(f->arch, WEFT_HOP_NET, f->hosts, p).hop_s * 1e6;
        return true;
    }
    if (coll == WEFT_COLL_ALLREDUCE) bw = fmin(bw * 0.92, ch * tree_per_ch[arch][n2]);
    if (p == WEFT_PROTO_LL) bw = fmin(bw / 3.8, ll_max);
    if (p == WEFT_PROTO_LL128)
        bw = fmin(bw * (f->hosts == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                  ch * tree_ll128_per_ch[arch][n2]);
    *busbw = bw;
    *base_lat_us = tree_base_lat[p];
    *intra_lat = tree_hw_lat[f->nvlink ? HW_NVLINK : HW_PCI][p];
    *inter_lat = tree_hw_lat[HW_NET][p];
    return true;
}

/* NCCL's NVLS estimate inside one host whose switch reduces (0 when it
 * does not apply): one channel per rank at the fastest intra rate all of
 * them fit in a rank's bandwidth, each worth rate x efficiency x (C-1)/C,
 * twice for allreduce (it pipelines the reduce and the multicast), x
 * (ppn-1)/ppn for allgather and reduce-scatter; latency 25 us. */
static double nvls_time(const weft_nccl_fabric *f, weft_coll coll, double bytes)
{
    if (!f->nvls || f->hosts != 1 || f->per_host < 2 ||
        (coll != WEFT_COLL_ALLREDUCE && coll != WEFT_COLL_ALLGATHER &&
         coll != WEFT_COLL_REDUCESCATTER))
        return 0;
    double ch = f->per_host > 32 ? 32 : f->per_host, n = f->ranks;
    double speed = first_speed(speed_intra[f->hopper], 13, f->rank_gbps / ch);
    double per = speed * NVLS_EFFICIENCY * (ch - 1) / ch;
    per *= coll == WEFT_COLL_ALLREDUCE ? 2.0 : (n - 1) / n;
    double nsteps = coll == WEFT_COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
    double algbw = ch * per * n / nsteps;
    return (NVLS_LAT_US + bytes / (1e3 * algbw)) * 1e-6;
}

bool weft_nccl_estimate(const weft_nccl_fabric *f, weft_coll coll, weft_nccl_algo algo,
                        weft_proto p, double bytes, weft_nccl_cost *out)
{
    if ((unsigned)coll >= WEFT__COLL_COUNT || coll == WEFT_COLL_ALLTOALL || !(bytes >= 0) ||
        (unsigned)p >= WEFT_PROTO_COUNT || (algo != WEFT_NCCL_RING && algo != WEFT_NCCL_TREE))
        return false;
    int a = algo == WEFT_NCCL_RING ? 1 : 0;
    if (a == 0 && coll != WEFT_COLL_ALLREDUCE) return false; /* NCCL's tree runs allreduce only */
    double n = f->ranks, nsteps = coll == WEFT_COLL_ALLREDUCE ? 2 * (n - 1)
                                  : weft_coll_has_root(coll)  ? n
                                                              : n - 1;
    double inter_steps = f->hosts <= 1                 ? 0
                         : coll == WEFT_COLL_ALLREDUCE ? 2.0 * (f->hosts - 1)
                                                       : f->hosts - 1.0;
    double busbw = f->search_channels * f->channel_gbps, base, intra, inter;
    if (!proto_model(f, coll, a, p, &busbw, &base, &intra, &inter)) return false;
    double algbw = busbw * (a == 1 ? n / nsteps : 0.5);
    if (!(algbw > 0)) return false;
    double lat = base;
    if (a == 1 && weft_coll_has_root(coll)) {
        lat += f->hosts > 1 ? inter : intra; /* NCCL's sameChannels case */
    } else if (a == 1) {
        double over = f->hosts > 1 ? NET_OVERHEAD_US * (p == WEFT_PROTO_SIMPLE ? 3 : 1) : 0;
        intra = fmax(intra, over);
        lat += (nsteps - inter_steps) * intra + inter_steps * inter;
        /* The ring's plateau across hosts once chunks fill. */
        if (p == WEFT_PROTO_SIMPLE && f->hosts > 1 && coll == WEFT_COLL_ALLREDUCE &&
            bytes / ((double)f->channels * n) >= 64)
            lat *= 1.4;
    } else {
        lat += 2 * ((f->per_host - 1.0) * intra + log2_floor(f->hosts) * inter);
    }
    double us = lat + bytes / (1e3 * algbw);
    out->lat_s = lat * 1e-6;
    out->algbw_gbps = algbw;
    out->busbw_gbps = busbw;
    out->time_s = us * 1e-6;
    return true;
}

weft_err weft_nccl_choose(const weft_nccl_fabric *f, weft_coll coll, double bytes,
                          weft_nccl_choice *out, weft_diag *d)
{
    if ((unsigned)coll >= WEFT__COLL_COUNT || !(bytes >= 0))
        return weft_diag_set(d, WEFT_EINVAL, "nccl: bad collective or size (%g B)", bytes);
    weft_nccl_choice best;
    memset(&best, 0, sizeof best);
    if (coll == WEFT_COLL_ALLTOALL) {
        best.algo = WEFT_NCCL_P2P;
        best.proto = WEFT_PROTO_SIMPLE;
        snprintf(best.plan, sizeof best.plan, "direct");
        *out = best;
        return WEFT_OK;
    }
    static const weft_nccl_algo order[2] = {WEFT_NCCL_TREE, WEFT_NCCL_RING};
    bool found = false;
    for (int a = 0; a < 2; a++) {
        for (int p = 0; p < WEFT_PROTO_COUNT; p++) {
            weft_nccl_cost c;
            if (!weft_nccl_estimate(f, coll, order[a], (weft_proto)p, bytes, &c)) continue;
            if (!found || c.time_s < best.time_s) {
                found = true;
                best.algo = order[a];
                best.proto = (weft_proto)p;
                best.time_s = c.time_s;
                best.busbw_gbps = c.busbw_gbps;
            }
        }
    }
    if (!found)
        return weft_diag_set(d, WEFT_EUNSUPPORTED, "nccl: no algorithm for %s",
                             weft_coll_name(coll));
    best.nvls_s = nvls_time(f, coll, bytes);
    if (best.algo == WEFT_NCCL_RING)
        snprintf(best.plan, sizeof best.plan, "rings:%u", f->channels);
    else
        snprintf(best.plan, sizeof best.plan, "dbtree");
    *out = best;
    return WEFT_OK;
}

weft_err synth_build_nccl(const synth_ctx *c, weft_plan **out)
{
    weft_nccl_fabric f;
    weft_nccl_choice ch;
    weft_err e = weft_nccl_fabric_get(c->topo, &f, c->d);
    if (!e) e = weft_nccl_choose(&f, c->coll, c->bytes, &ch, c->d);
    if (e) return e;
    synth_ctx rc = *c;
    switch (ch.algo) {
    case WEFT_NCCL_RING:
        rc.param = f.channels;
        return synth_build_rings(&rc, out);
    case WEFT_NCCL_TREE:
        rc.param = f.channels;
        return synth_build_dbtree(&rc, out);
    default:
        return synth_build_direct(&rc, out);
    }
}
