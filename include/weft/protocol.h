/* weft protocols: how a GPU runtime (NCCL) moves a collective's bytes, as
 * NCCL's own tuning model describes it.
 *
 * NCCL moves data with one of three protocols, chosen per collective and
 * size:
 *
 *   LL      8-byte flag+data words: lowest latency, half the bandwidth
 *           (every 8 bytes carry 4 of data), and a ceiling on the total;
 *   LL128   128-byte lines with one 8-byte flag (120/128 of the bandwidth),
 *           a per-channel ceiling; only where NVLink carries it;
 *   Simple  plain copies with a fence per step: full bandwidth, highest
 *           latency.
 *
 * Each has a fixed latency per collective launch, a latency per ring step
 * that depends on the class of hop the step crosses (NVLink, PCIe or the
 * network) and a fraction of link bandwidth it achieves, per GPU
 * architecture. The figures are those of NCCL's tuning model
 * (src/graph/tuning.cc of NVIDIA/nccl, master at 5067397, 2026: the
 * baseLatencies, hwLatencies, llMaxBws and perChMaxRingLL128Bws tables and the
 * LL 1/2 and LL128 120/128 factors) and of its buffer sizes (src/init.cc,
 * src/include/device.h: NCCL_STEPS = 8 steps per buffer). docs/sim.md
 * lists them with their sources. They are NCCL's *model* of itself (what it
 * uses to choose a protocol), not measurements; docs/sim.md ("Validation")
 * compares the resulting predictions with published nccl-tests figures.
 *
 * weft_proto_ring_time is NCCL's estimate of a ring collective, and
 * weft_proto_choose picks the protocol NCCL's rule would (the fastest
 * estimate; LL128 only where it is enabled). The simulator's GPU model
 * (weft_sim_model, weft/sim.h) uses the same choice and the same
 * constants, but moves the bytes through the fabric itself.
 *
 * Everything here is a pure function of its arguments; no state.
 */
#ifndef WEFT_PROTOCOL_H
#define WEFT_PROTOCOL_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_proto {
    WEFT_PROTO_LL = 0,
    WEFT_PROTO_LL128,
    WEFT_PROTO_SIMPLE,
} weft_proto;
#define WEFT_PROTO_COUNT 3

/* GPU generations NCCL's tables distinguish (compute capability 7.x, 8.x,
 * 9.x, 10.x). A fabric names its GPUs' with the compute-node attribute
 * arch=NAME (weft_gpu_arch_parse); AMD CDNA GPUs (mi250) are modelled as
 * ampere, the generation RCCL's tables copy. */
typedef enum weft_gpu_arch {
    WEFT_ARCH_VOLTA = 0,
    WEFT_ARCH_AMPERE,
    WEFT_ARCH_HOPPER,
    WEFT_ARCH_BLACKWELL,
} weft_gpu_arch;
#define WEFT_ARCH_COUNT 4

/* The class of link a ring step crosses: inside a box over NVLink (or
 * xGMI), inside a box over PCIe, or between boxes over the network. */
typedef enum weft_hop_class {
    WEFT_HOP_NVLINK = 0,
    WEFT_HOP_PCI,
    WEFT_HOP_NET,
} weft_hop_class;
#define WEFT_HOP_COUNT 3

/* "LL", "LL128", "Simple" (NCCL's spelling); "?" out of range. */
WEFT_API const char *weft_proto_name(weft_proto p);
/* Case-insensitive NCCL spelling; false when unknown. */
WEFT_API bool weft_proto_parse(const char *text, weft_proto *out);
/* "volta", "ampere", "hopper", "blackwell"; "?" out of range. */
WEFT_API const char *weft_gpu_arch_name(weft_gpu_arch a);
/* Those names, case-insensitive, and "cdna2"/"cdna3" (as ampere/hopper);
 * false when unknown. */
WEFT_API bool weft_gpu_arch_parse(const char *text, weft_gpu_arch *out);
/* "nvlink", "pci", "net"; "?" out of range. */
WEFT_API const char *weft_hop_class_name(weft_hop_class h);

/* What one protocol costs on one architecture and hop class, for rings. */
typedef struct weft_proto_model {
    double base_s;         /* once per collective launch, seconds */
    double hop_s;          /* per ring step across this hop class, seconds */
    double bw_frac;        /* fraction of link bandwidth the protocol moves
                              as data (LL 0.5, LL128 0.92 -- NCCL's figure
                              for its 120 data bytes per 128 -- Simple 1) */
    double chan_max_gbps;  /* per-channel ceiling on bus bandwidth, GB/s
                              (LL128); 0 = none */
    double total_max_gbps; /* ceiling on the whole collective's bus bandwidth,
                              GB/s (LL); 0 = none */
    uint64_t step_bytes;   /* data bytes one pipeline step carries per
                              channel: the unit in which a receiver forwards
                              what arrived */
} weft_proto_model;

/* The model of protocol p on architecture a across hop class h, for a
 * communicator spanning `nodes` boxes (NCCL's ceilings depend on 1, 2 or
 * more). Out-of-range arguments give the Simple/ampere/nvlink model. */
WEFT_API weft_proto_model weft_proto_model_get(weft_gpu_arch a, weft_hop_class h, uint32_t nodes,
                                               weft_proto p);

/* The same on hosts whose CPUs are AMD's (amd_hosts) or not: NCCL caps
 * LL across 2 or more boxes by host CPU vendor, 39.0 / 20.4 GB/s on Intel
 * hosts (2 boxes / more), 22.5 / 19.0 on AMD hosts (llMaxBws, rows
 * "Intel-N2/Intel-N4" and "AMD-N2/AMD-N4": src/graph/tuning.cc of
 * github:NVIDIA/nccl @5067397c lines 179-180 and 270, the same values at
 * v2.19.3-1 lines 87-88 and 144). weft_proto_model_get is amd_hosts
 * false. */
WEFT_API weft_proto_model weft_proto_model_host(weft_gpu_arch a, weft_hop_class h, uint32_t nodes,
                                                weft_proto p, bool amd_hosts);

/* Whether a compute node's cpu= attribute names AMD hosts ("amd",
 * case-insensitive; NCCL's topology XML says vendor="AuthenticAMD").
 * NULL or anything else: false (NCCL's figures for Intel hosts). */
WEFT_API bool weft_proto_cpu_amd(const char *cpu);

/* NCCL's cost to post a network send, us: 2.0 on AMD hosts, 1.0 otherwise
 * (getNetOverhead, src/graph/tuning.cc @5067397c lines 228-233; v2.19.3-1
 * lines 111-118). */
WEFT_API double weft_proto_net_post_us(bool amd_hosts);

/* The fraction of a link's line rate that NCCL's topology model counts it
 * at, for GPUs of generation `arch` (a fabric's arch= text, as
 * weft_gpu_arch_parse reads it) across hop class h. NCCL does not move
 * data over NVLink at the line rate: its topology graph gives every link a
 * per-generation figure (src/graph/topo.h of NVIDIA/nccl @5067397:
 * SM70_NVLINK_BW 20.0, SM80 20.0, SM90 20.6, SM100 40.1 GB/s per link;
 * RCCL's src/graph/topo.h @0cbce2a gives xGMI MI200_XGMI_WIDTH 36.0 and
 * GFX94X_XGMI_WIDTH 48.0), and it counts a PCIe x16 link at 0.75 of its
 * raw transfer rate (kvDictPciGen and width * rate / 80 in
 * src/graph/topo.cc: 12 GB/s for Gen3 x16). The fraction is that figure
 * over the link's line rate per direction (NVLink2, 3 and 4: 25 GB/s,
 * NVLink5: 50 GB/s, MI250 xGMI: 50 GB/s, MI300X xGMI: 64 GB/s, PCIe
 * Gen3+ x16 with 128b/130b coding: 15.754 GB/s per 8 GT/s), so
 *   nvlink: volta 0.8, ampere 0.8, hopper 0.824, blackwell 0.802,
 *           cdna2 0.72, cdna3 0.75;
 *   pci:    0.7617 (every generation from Gen3);
 *   net:    1 (NCCL counts a NIC at its reported speed / 8000).
 * docs/sim.md ("Link efficiency") lists the sources. These are NCCL's
 * model, not measurements and not a fit. False, *out untouched, when
 * arch is unknown or h out of range. */
WEFT_API bool weft_proto_link_eff(const char *arch, weft_hop_class h, double *out);

/* A ring collective as NCCL sees it when it estimates time. */
typedef struct weft_proto_ring {
    weft_coll coll;    /* allreduce, allgather, reducescatter (broadcast,
                          reduce: n steps) */
    uint32_t ranks;    /* n >= 2 */
    uint32_t nodes;    /* boxes the ring crosses, >= 1 */
    uint32_t channels; /* rings run side by side, >= 1 */
    double chan_gbps;  /* bandwidth of one channel's slowest hop, GB/s */
    weft_gpu_arch arch;
    weft_hop_class intra; /* the hop class inside a box (nvlink or pci) */
    bool amd_hosts;       /* the boxes' CPUs are AMD's (weft_proto_model_host:
                             LL's cap across boxes, and 2 us to post a
                             network send); false: Intel's figures */
} weft_proto_ring;

/* True when NCCL enables protocol p by default for this ring: LL and
 * Simple always; LL128 only when the hops inside a box are NVLink and the
 * architecture is volta or later (NCCL_PROTO unset). */
WEFT_API bool weft_proto_enabled(const weft_proto_ring *r, weft_proto p);

/* NCCL's estimate of the ring collective of `size` bytes with protocol p:
 * launch latency plus one hop latency per ring step (network steps at the
 * network's latency), plus size over the protocol's algorithm bandwidth
 * (channels x chan_gbps x bw_frac, capped by the ceilings, times
 * ranks/steps). Seconds; INFINITY when p is not enabled. */
WEFT_API double weft_proto_ring_time(const weft_proto_ring *r, weft_proto p, uint64_t size);

/* The protocol NCCL would choose for this ring at `size` bytes: the enabled
 * one with the smallest weft_proto_ring_time (ties to the lower enum
 * value). Writes that time to *time_s when not NULL. */
WEFT_API weft_proto weft_proto_choose(const weft_proto_ring *r, uint64_t size, double *time_s);

#ifdef __cplusplus
}
#endif
#endif
