/* NCCL's protocols as its tuning model describes them (weft/protocol.h).
 *
 * The tables below restate the figures of NCCL's tuning model
 * (src/graph/tuning.cc, NVIDIA/nccl @5067397) in weft's own layout:
 * microseconds and GB/s as NCCL prints them in its NCCL_DEBUG=INFO tuning
 * table. Only the ring rows are kept; the algorithms NCCL adds on top
 * (trees, NVLS, CollNet) belong to the `nccl` baseline, not here. */
#include <math.h>
#include <stddef.h>
#include <strings.h>

#include "weft/protocol.h"

/* Launch latency of a ring collective per protocol, us. */
static const double base_us[WEFT_PROTO_COUNT] = {6.6, 14.0, 8.4};

/* Latency of one ring step per hop class and protocol, us. */
static const double hop_us[WEFT_HOP_COUNT][WEFT_PROTO_COUNT] = {
    [WEFT_HOP_NVLINK] = {0.6, 1.9, 3.4},
    [WEFT_HOP_PCI] = {1.0, 2.5, 5.7},
    [WEFT_HOP_NET] = {2.7, 4.0, 14.0},
};

/* NCCL charges network steps of a ring with one GPU per box at its tree
 * figures: nothing overlaps the hop's latency there. */
static const double net_alone_us[WEFT_PROTO_COUNT] = {5.0, 8.5, 14.0};

/* Ceiling on LL's bus bandwidth, GB/s: inside one box by GPU generation;
 * across 2 or more boxes by host CPU, [0] Intel (or unknown) hosts, [1]
 * AMD hosts (weft/protocol.h, weft_proto_model_host). */
static const double ll_max_one_box[WEFT_ARCH_COUNT] = {39.0, 87.7, 141.0, 282.0};
static const double ll_max_two_boxes[2] = {39.0, 22.5};
static const double ll_max_more_boxes[2] = {20.4, 19.0};

/* Per-channel ceiling on LL128's bus bandwidth, GB/s. */
static const double ll128_chan_max[WEFT_ARCH_COUNT] = {20.0, 20.0, 36.7, 40.0};

/* Bandwidth factors: LL sends a flag with every 4 data bytes; LL128 one
 * flag word per 128-byte line (NCCL models it as 0.92). */
static const double bw_frac[WEFT_PROTO_COUNT] = {0.5, 0.92, 1.0};

/* Data bytes per pipeline step and channel. NCCL's buffer per channel and
 * peer is cut into NCCL_STEPS = 8 steps: LL's 512 KiB of 16-byte lines
 * (half data), LL128's 4,915,200 bytes of 128-byte lines (120 data), and
 * Simple's 4 MiB. */
static const uint64_t step_bytes[WEFT_PROTO_COUNT] = {32768, 576000, 524288};

/* The host's cost to post a network send, us (NCCL's figure for x86 Intel
 * hosts; AMD's is weft_proto_net_post_us(true)); Simple posts three times
 * per step. */
static const double net_post_us = 1.0;

/* Simple rings across boxes stall when each rank's share is more than a
 * few bytes; NCCL scales their latency by this (1.9 before ampere). */
static const double simple_plateau[WEFT_ARCH_COUNT] = {1.9, 1.4, 1.4, 1.4};

/* Per-link figures of NCCL's and RCCL's topology models over the line rate
 * of the generation's link per direction, GB/s (weft/protocol.h gives the
 * sources). cdna2/cdna3 are RCCL's MI200 and gfx94x xGMI figures. */
static const struct {
    const char *arch;
    double model_gbps, line_gbps;
} nvlink_eff[] = {
    {"volta", 20.0, 25.0},     {"ampere", 20.0, 25.0}, {"hopper", 20.6, 25.0},
    {"blackwell", 40.1, 50.0}, {"cdna2", 36.0, 50.0},  {"cdna3", 48.0, 64.0},
};

/* NCCL's PCIe figure: 6 Gb/s per lane at 8 GT/s (kvDictPciGen's 60, in
 * 100 Mb/s), 12 GB/s for x16, against the line rate of 8 GT/s x 16 lanes
 * x 128/130 / 8 = 15.754 GB/s; Gen4 and Gen5 scale both alike. */
static const double pci_model_gbps = 12.0, pci_line_gbps = 8.0 * 16 * 128 / 130 / 8;

bool weft_proto_link_eff(const char *arch, weft_hop_class h, double *out)
{
    size_t i = 0, n = sizeof nvlink_eff / sizeof nvlink_eff[0];
    while (arch && i < n && strcasecmp(arch, nvlink_eff[i].arch) != 0)
        i++;
    if (!arch || i == n || (unsigned)h >= WEFT_HOP_COUNT)
        return false;
    *out = h == WEFT_HOP_NVLINK ? nvlink_eff[i].model_gbps / nvlink_eff[i].line_gbps
           : h == WEFT_HOP_PCI  ? pci_model_gbps / pci_line_gbps
                                : 1.0;
    return true;
}

const char *weft_proto_name(weft_proto p)
{
    static const char *const names[WEFT_PROTO_COUNT] = {"LL", "LL128", "Simple"};
    return (unsigned)p < WEFT_PROTO_COUNT ? names[p] : "?";
}

bool weft_proto_parse(const char *text, weft_proto *out)
{
    for (unsigned p = 0; text && p < WEFT_PROTO_COUNT; p++) {
        if (strcasecmp(text, weft_proto_name((weft_proto)p)) == 0) {
            *out = (weft_proto)p;
            return true;
        }
    }
    return false;
}

const char *weft_gpu_arch_name(weft_gpu_arch a)
{
    static const char *const names[WEFT_ARCH_COUNT] = {"volta", "ampere", "hopper", "blackwell"};
    return (unsigned)a < WEFT_ARCH_COUNT ? names[a] : "?";
}

bool weft_gpu_arch_parse(const char *text, weft_gpu_arch *out)
{
    if (!text)
        return false;
    for (unsigned a = 0; a < WEFT_ARCH_COUNT; a++) {
        if (strcasecmp(text, weft_gpu_arch_name((weft_gpu_arch)a)) == 0) {
            *out = (weft_gpu_arch)a;
            return true;
        }
    }
    if (strcasecmp(text, "cdna2") == 0) {
        *out = WEFT_ARCH_AMPERE;
        return true;
    }
    if (strcasecmp(text, "cdna3") == 0) {
        *out = WEFT_ARCH_HOPPER;
        return true;
    }
    return false;
}

const char *weft_hop_class_name(weft_hop_class h)
{
    static const char *const names[WEFT_HOP_COUNT] = {"nvlink", "pci", "net"};
    return (unsigned)h < WEFT_HOP_COUNT ? names[h] : "?";
}

weft_proto_model weft_proto_model_get(weft_gpu_arch a, weft_hop_class h, uint32_t nodes,
                                      weft_proto p)
{
    return weft_proto_model_host(a, h, nodes, p, false);
}

bool weft_proto_cpu_amd(const char *cpu)
{
    return cpu && strcasecmp(cpu, "amd") == 0;
}

double weft_proto_net_post_us(bool amd_hosts)
{
    return amd_hosts ? 2.0 : net_post_us;
}

weft_proto_model weft_proto_model_host(weft_gpu_arch a, weft_hop_class h, uint32_t nodes,
                                       weft_proto p, bool amd_hosts)
{
    if ((unsigned)a >= WEFT_ARCH_COUNT)
        a = WEFT_ARCH_AMPERE;
    if ((unsigned)h >= WEFT_HOP_COUNT)
        h = WEFT_HOP_NVLINK;
    if ((unsigned)p >= WEFT_PROTO_COUNT)
        p = WEFT_PROTO_SIMPLE;
    weft_proto_model m = {
        .base_s = base_us[p] * 1e-6,
        .hop_s = hop_us[h][p] * 1e-6,
        .bw_frac = bw_frac[p],
        .chan_max_gbps = p == WEFT_PROTO_LL128 ? ll128_chan_max[a] : 0,
        .total_max_gbps = 0,
        .step_bytes = step_bytes[p],
    };
    if (p == WEFT_PROTO_LL)
        m.total_max_gbps = nodes <= 1   ? ll_max_one_box[a]
                           : nodes == 2 ? ll_max_two_boxes[amd_hosts]
                                        : ll_max_more_boxes[amd_hosts];
    return m;
}

bool weft_proto_enabled(const weft_proto_ring *r, weft_proto p)
{
    if ((unsigned)p >= WEFT_PROTO_COUNT)
        return false;
    if (p != WEFT_PROTO_LL128)
        return true;
    return r->intra == WEFT_HOP_NVLINK && (unsigned)r->arch < WEFT_ARCH_COUNT;
}

/* Ring steps of the collective: NCCL's nsteps. */
static uint32_t ring_steps(weft_coll coll, uint32_t n)
{
    switch (coll) {
    case WEFT_COLL_ALLREDUCE:
        return 2 * (n - 1);
    case WEFT_COLL_ALLGATHER:
    case WEFT_COLL_REDUCESCATTER:
        return n - 1;
    default:
        return n;
    }
}

double weft_proto_ring_time(const weft_proto_ring *r, weft_proto p, uint64_t size)
{
    if (!weft_proto_enabled(r, p) || r->ranks < 2 || r->channels < 1 || !(r->chan_gbps > 0))
        return INFINITY;
    uint32_t nodes = r->nodes ? r->nodes : 1;
    weft_gpu_arch arch = (unsigned)r->arch < WEFT_ARCH_COUNT ? r->arch : WEFT_ARCH_AMPERE;
    weft_proto_model intra = weft_proto_model_host(arch, r->intra, nodes, p, r->amd_hosts);
    uint32_t steps = ring_steps(r->coll, r->ranks);

    double bus = r->channels * r->chan_gbps * intra.bw_frac;
    if (intra.chan_max_gbps > 0 && bus > r->channels * intra.chan_max_gbps)
        bus = r->channels * intra.chan_max_gbps;
    if (intra.total_max_gbps > 0 && bus > intra.total_max_gbps)
        bus = intra.total_max_gbps;
    double algbw = bus * r->ranks / steps;

    /* Latency: the steps inside a box at the intra hop latency (at least
     * the host's posting cost when the ring leaves the box), those that
     * cross boxes at the network's. */
    double intra_us = intra.hop_s * 1e6, inter_us = hop_us[WEFT_HOP_NET][p];
    uint32_t inter_steps = 0;
    if (nodes > 1) {
        double post = weft_proto_net_post_us(r->amd_hosts) * (p == WEFT_PROTO_SIMPLE ? 3 : 1);
        if (intra_us < post)
            intra_us = post;
        if (r->ranks == nodes)
            inter_us = net_alone_us[p];
        inter_steps = r->coll == WEFT_COLL_ALLREDUCE ? 2 * (nodes - 1) : nodes - 1;
        if (inter_steps > steps)
            inter_steps = steps;
    }
    double lat_us = base_us[p] + (steps - inter_steps) * intra_us + inter_steps * inter_us;
    if (p == WEFT_PROTO_SIMPLE && nodes > 1 && r->coll == WEFT_COLL_ALLREDUCE &&
        size / ((uint64_t)r->channels * r->ranks) >= 64)
        lat_us *= simple_plateau[arch];
    return lat_us * 1e-6 + (double)size / (algbw * 1e9);
}

weft_proto weft_proto_choose(const weft_proto_ring *r, uint64_t size, double *time_s)
{
    weft_proto best = WEFT_PROTO_SIMPLE;
    double best_t = INFINITY;
    for (unsigned p = 0; p < WEFT_PROTO_COUNT; p++) {
        double t = weft_proto_ring_time(r, (weft_proto)p, size);
        if (t < best_t) {
            best_t = t;
            best = (weft_proto)p;
        }
    }
    if (time_s)
        *time_s = best_t;
    return best;
}
