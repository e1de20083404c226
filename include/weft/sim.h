/* weft simulation: how long a collective takes on a fabric, flow-level.
 *
 * Every transfer is a fluid flow over its route (explicit, or ECMP shortest
 * paths split evenly per hop); links are shared max-min fairly; rates are
 * recomputed whenever a flow starts or drains. A transfer starts `alpha`
 * after its dependencies are done, occupies bandwidth until its bytes are
 * drained, and is done one route latency later. With cut_through (plans
 * only) an op streams what a dep touching the same slots delivers instead
 * of waiting for it. docs/sim.md describes the model, where it is exact
 * and where it approximates.
 *
 * Scale. Collectives are regular; the ring simulation exploits it without
 * losing exactness: links that can never saturate are dropped from the
 * routes, and transfers whose routes, sizes, latencies and dependency
 * structure are indistinguishable (an equitable partition of the
 * transfer/link system, found by colour refinement) are simulated as one
 * flow class with a multiplicity, on link classes. Max-min fair rates and
 * every event time of the reduced system equal those of the full one. A
 * ring with no usable symmetry (more than max_classes classes) whose hops
 * have private links is approximated by its periodic quotient, and the
 * result says so (period > 0). docs/sim.md gives the arguments and the
 * measured error.
 *
 * Times are doubles in seconds and are deterministic: the same inputs give
 * bit-identical results on every run.
 */
#ifndef WEFT_SIM_H
#define WEFT_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/err.h"
#include "weft/plan.h"
#include "weft/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a plan is executed (docs/sim.md, "Models"):
 *
 *   fluid    the idealised flow model: every transfer is a fluid flow that
 *            pays alpha_s, its route's latency and its bytes, cut into
 *            `slices` (or cut through, cut_through), exactly as set;
 *   runtime  weft's own executor (src/run): slices of WEFT_EXEC_SLICE_BYTES
 *            per chunk (1 to WEFT_EXEC_MAX_SLICES), each a message paying
 *            WEFT_EXEC_OP_OVERHEAD_S, stored and forwarded slice by slice;
 *            in plans a stream's messages (source, destination, lane)
 *            queue FIFO, each starting when the one ahead has drained
 *            (weft/exec_model.h), and in weft_sim_ring a position's
 *            messages (step by step, slice by slice) likewise;
 *   gpu      a GPU runtime (NCCL): the protocol NCCL's rule picks for the
 *            size (weft/protocol.h; proto forces one), its share of link
 *            bandwidth, its launch latency once, its per-hop latency on
 *            every route (NVLink inside a host, the network between
 *            hosts), and forwarding as data arrives (plans cut through;
 *            the ring without a plan moves slices of one pipeline step).
 *
 * weft_sim_model_default gives gpu for a fabric whose compute nodes name
 * their GPU generation (arch=, weft_gpu_arch_parse), runtime otherwise. */
typedef enum weft_sim_model {
    WEFT_SIM_FLUID = 0,
    WEFT_SIM_RUNTIME,
    WEFT_SIM_GPU,
} weft_sim_model;

typedef struct weft_sim_opts {
    double alpha_s;          /* per-transfer start overhead, seconds (default 0) */
    uint32_t slices;         /* pipelining depth: each transfer is cut into this many
                                slices that flow one after another (default 1) */
    bool symmetry;           /* simulate flow classes (exact; default true); false
                                simulates every transfer on its own */
    FILE *trace;             /* weft_sim_plan only: when set, a Chrome trace-event JSON
                                document is written here (default NULL); docs/sim.md
                                describes its tracks and names */
    uint32_t trace_run;      /* 0 (default): o->trace receives a whole document.
                                k >= 1: the k-th run (1, 2, ... in order) of a
                                document opened by weft_sim_trace_begin, on its own
                                processes, named after trace_label */
    const char *trace_label; /* with trace_run: prefixes this run's process
                                names ("1M: rank 0"; default NULL) */
    uint32_t max_classes;    /* weft_sim_ring only: when the exact symmetry classes
                                are more than this (0: the default, 4096), a ring
                                of private routes is approximated by its periodic
                                quotient (result.period > 0; docs/sim.md) */
    bool cut_through;        /* weft_sim_plan only: an op that forwards or reduces the
                                chunks a dep delivered streams them as they arrive
                                (the limit of infinitely many slices; default false,
                                store and forward per slice; see weft_sim_plan) */
    bool back_to_back;       /* weft_sim_plan, fabrics with shaped links (burst=):
                                one call of a run of back-to-back calls, every
                                bucket starting with the tokens it held when the
                                call before ended (the periodic steady state, as
                                weft perf's timed iterations run; found by
                                simulating the call again until the tokens repeat,
                                at most 8 times). Default false: buckets start
                                full, as after an idle moment */
    weft_sim_model model;    /* default WEFT_SIM_FLUID: the fields above and below
                                are used as set. runtime and gpu derive alpha_s,
                                slices, cut_through and the fields below per
                                call from the fabric, the collective, the size
                                and the chunk size (weft_sim_opts_resolve) */
    uint64_t slice_bytes;    /* when > 0 (any model): slices = chunk bytes /
                                slice_bytes, clamped to 1 .. WEFT_EXEC_MAX_SLICES,
                                instead of `slices` or the model's (default 0) */
    bool whole;              /* runtime model without slice_bytes: every copy in
                                one slice, a message moved whole before what
                                depends on it starts, as weft's compressed and
                                sparse all-reduces run (src/run/coll_sparse.c,
                                coll_quant.c: one message per peer and phase,
                                outside the executor); default false. A plan
                                marked whole (weft_plan_whole_messages, as the
                                compressed and sparse builders mark theirs)
                                runs so without it */
    double bw_scale;         /* fraction of every link's bandwidth that carries data:
                                a transfer puts bytes / bw_scale on the wire (a
                                protocol's flags; default 1) */
    double launch_s;         /* added once to the collective's time (default 0) */
    double hop_s;            /* added to the latency of every route that stays in
                                one host (default 0) */
    double net_hop_s;        /* added to the latency of every route between hosts
                                (default 0) */
    uint64_t step_bytes;     /* when > 0: a route's latency also has the time to
                                move min(step_bytes, one slice) over its slowest
                                link, as a receiver forwards a step once it has
                                arrived (default 0) */
    double step_gbps;        /* when > 0 with step_bytes: the step moves at
                                most this fast, GB/s (one NCCL channel: one
                                thread block copies a channel's steps;
                                default 0, the slowest link's rate) */
    double chan_share;       /* gpu model: the share of its bandwidth the
                                collective's channels move, in (0, 1]: NCCL
                                launches fewer channels for small sizes
                                (weft_nccl_channel_share; `weft sim --algo
                                nccl` and weft_candidate_run set it for
                                NCCL's allreduce); default 1 */
    int proto;               /* gpu model: the weft_proto to run; -1 (default):
                                weft_sim_plan, weft_sim_ring(s) and
                                weft_sim_plans simulate every protocol NCCL
                                enables for the plan's communicator and keep
                                the fastest (NCCL runs the protocol its
                                estimate makes fastest; weft's estimate is the
                                simulation), so the time never exceeds another
                                protocol's at the same size and never falls as
                                the size grows. Reported in the result */
    double intra_eff;        /* fraction of the line rate that carries data on a
                                link inside a host (both ends on one host, neither
                                a NIC); links to NICs and between hosts keep their
                                rate. The gpu model sets NCCL's figure for the
                                fabric's arch= (weft_proto_link_eff, nvlink),
                                runtime 1 (default 1) */
    /* weft_sim_plan(s): seconds per byte of each compute kind on the
     * ranks' processor (weft/plan.h, weft_compute; weft_compute_rates_get
     * in weft/compress.h gives a processor's). A compute op of b bytes (its
     * op size at the simulated size) then takes b x this on its rank,
     * after its deps and before its dependents: a flow without links whose
     * route latency is that long, started without alpha_s (it is no
     * message; a plain nop pays alpha_s), and overlaps whatever its deps
     * allow (the plan orders a rank's compute ops one after another, as
     * one thread runs them; src/sim/compute_test.c checks the times).
     * Default 0 for every kind: compute ops take no time.
     * WEFT_COMPUTE_NONE's entry is unused. */
    double compute_s_per_b[WEFT__COMPUTE_COUNT];
    /* Where those rates come from (weft_compute_rates.source; default
     * NULL): the trace gives it in each compute slice's args (docs/sim.md,
     * "Traces"); the simulation does not read it. */
    const char *compute_source;
} weft_sim_opts;

WEFT_API void weft_sim_opts_init(weft_sim_opts *o);

/* "fluid", "runtime", "gpu"; "?" out of range. */
WEFT_API const char *weft_sim_model_name(weft_sim_model m);
/* Those names; false when unknown. */
WEFT_API bool weft_sim_model_parse(const char *text, weft_sim_model *out);
/* gpu when a compute node of t has an arch= weft_gpu_arch_parse knows,
 * runtime otherwise. */
WEFT_API weft_sim_model weft_sim_model_default(const weft_topo *t);

/* The settings the simulator runs with for one collective of `size` bytes
 * cut into chunks of chunk_bytes on t: a copy of *o with o->model's
 * derived fields filled in (see weft_sim_model; fluid keeps them as set)
 * and slice_bytes applied, model and proto set. gpu: the GPU generation is
 * the first arch= of a compute node; the protocol is o->proto, or when -1
 * weft_proto_choose's (NCCL's own estimate; the simulations instead keep
 * the fastest simulated protocol, see proto) for a ring of coll over all
 * ranks of t, as many nodes as t has hosts (the simulations resolve for
 * the communicator a plan spans, not the whole fabric), 16 channels sharing the bus bandwidth B
 * (the largest bandwidth a rank has to other nodes of its host; across hosts at most its NIC
 * bandwidth times the ranks per host) and NVLink inside a host; bw_scale
 * the protocol's fraction, lowered to its ceilings (LL's total, LL128's per
 * channel) where they bind on B, where B counts the links inside a host at
 * intra_eff (NCCL's per-link figure, weft_proto_link_eff). WEFT_EINVAL names
 * the fabric when gpu is asked
 * of one with no arch=. weft_sim_plan and weft_sim_ring call this
 * themselves. */
WEFT_API weft_err weft_sim_opts_resolve(const weft_sim_opts *o, const weft_topo *t, weft_coll coll,
                                        uint64_t size, uint64_t chunk_bytes, weft_sim_opts *out,
                                        weft_diag *d);

/* One trace document holding several runs (the sizes of a sweep):
 * weft_sim_trace_begin writes its head, then weft_sim_plan with o->trace = f
 * and o->trace_run = 1, 2, ... writes each run, and weft_sim_trace_end
 * closes and flushes it. WEFT_EIO when writing fails. */
WEFT_API weft_err weft_sim_trace_begin(FILE *f);
WEFT_API weft_err weft_sim_trace_end(FILE *f);
/* weft_sim_trace_end that also records how each run was simulated: the
 * document gets a top-level "metadata" object {"model": the last run's
 * model, "runs": [{"size", "model", "proto" (or null), "slices"}, ...]}
 * from the n results in run order. */
struct weft_sim_result;
WEFT_API weft_err weft_sim_trace_end_results(FILE *f, const struct weft_sim_result *rs, size_t n);

#define WEFT_SIM_BUSIEST 5

typedef struct weft_sim_link_use {
    weft_link_id link; /* one representative physical link (the smallest id) */
    uint32_t count;    /* links alike: the same capacity and bytes carried */
    double bytes;      /* bytes it carried */
    double util;       /* bytes / (capacity x time) */
} weft_sim_link_use;

typedef struct weft_sim_result {
    weft_coll coll;
    uint32_t ranks;
    uint64_t size; /* bytes (allgather: total output; reducescatter: total input) */
    double time_s;
    double algbw_gbps;        /* size / time / 1e9 */
    double busbw_gbps;        /* algbw x the nccl-tests factor */
    uint64_t transfers;       /* transfers the collective makes (all slices) */
    uint64_t flows;           /* flows the engine simulated */
    uint64_t events;          /* engine events */
    uint32_t flow_classes;    /* transfer classes per step */
    uint32_t link_classes;    /* link classes */
    double conservation_err;  /* largest relative |carried - sent| over links */
    uint64_t simulated_steps; /* ring steps simulated (all of them unless extrapolated) */
    bool extrapolated;        /* the time was extrapolated from a steady state */
    uint32_t pruned_links;    /* links left out because they can never limit a
                                 rate (exact; see docs/sim.md) */
    uint32_t period;          /* 0: exact classes; else the ring was approximated
                                 by its periodic quotient of this many positions */
    uint32_t defects;         /* positions that break that period */
    uint32_t n_busiest;
    weft_sim_link_use busiest[WEFT_SIM_BUSIEST];
    weft_sim_model model; /* the model that ran */
    int proto;            /* its protocol (weft_proto, gpu model), or -1 */
    uint32_t slices;      /* slices per transfer it ran with */
} weft_sim_result;

/* The nccl-tests bus-bandwidth factor: 2(n-1)/n for allreduce, (n-1)/n for
 * allgather, reducescatter and alltoall, 1 for broadcast and reduce. */
WEFT_API double weft_sim_busbw_factor(weft_coll coll, uint32_t n);

/* Simulates the ring algorithm (ranks 0 -> 1 -> ... -> N-1 -> 0, ECMP
 * routes) for allgather, reducescatter (N-1 steps) or allreduce
 * (reduce-scatter then allgather, 2(N-1) steps) of `size` bytes: every step
 * moves size/N bytes from each rank to the next. Step k of rank r waits for
 * step k-1 of rank r-1 (slice by slice). WEFT_EINVAL for another collective,
 * fewer than 2 ranks or size 0; WEFT_ETOPO when a ring hop has no path.
 *
 * With o->symmetry (the default) links that can never saturate are pruned
 * (exact, pruned_links), transfers are reduced to exact classes, and a
 * ring whose classes each own one link runs on a streaming server
 * simulator (exact up to rounding; memory O(classes x slices)), except in
 * the runtime model, whose FIFO streams run on the engine. When the
 * exact partition has more than o->max_classes classes (default 4,096) and
 * every hop has a private link, the ring is approximated by its periodic
 * quotient (period, defects); otherwise WEFT_ELIMIT. Rings that still
 * need more than 4 million class flows on the general engine are
 * extrapolated from three truncated rings whose lengths differ by whole
 * class cycles (extrapolated = true); WEFT_ELIMIT when no steady state is
 * found. */
WEFT_API weft_err weft_sim_ring(const weft_topo *t, weft_coll coll, uint64_t size,
                                const weft_sim_opts *o, weft_sim_result *out, weft_diag *d);

/* weft_sim_ring over the ranks in `order` (n entries, a permutation of the
 * ranks; NULL for rank order): position p sends to position p+1 (mod n),
 * step k of position p waits for step k-1 of position p-1. o->cut_through
 * is WEFT_EINVAL here (simulate the ring plan with weft_sim_plan). With the order
 * of weft_classic_ring_order (weft/synth.h) this simulates exactly the
 * transfers of the classic ring plan, symmetry-reduced. WEFT_EINVAL names a
 * position whose rank is out of range or repeated. */
WEFT_API weft_err weft_sim_ring_order(const weft_topo *t, weft_coll coll, const uint32_t *order,
                                      uint64_t size, const weft_sim_opts *o, weft_sim_result *out,
                                      weft_diag *d);

/* Several rings at once, sharing the fabric: the n positions of order are
 * n / group rings of `group` consecutive positions, each an independent
 * ring collective of `size` bytes over its ranks (every step moves
 * size/group bytes to the next position of its ring), all starting at time
 * 0, so that rings crossing the same links share them max-min fairly. A
 * rank may appear in several rings (it then sends in each) but only once in
 * one. The result is the time until the last ring is done; ranks is the
 * group size, and transfers count every ring. Symmetry reduction applies
 * as in weft_sim_ring_order; the periodic approximation does not (several
 * rings are no one cycle): WEFT_ELIMIT when the exact classes exceed
 * o->max_classes. WEFT_EINVAL when n is not a multiple of group, group < 2,
 * or a position names no rank or a rank twice in its ring. This is how
 * training steps (weft/work.h) simulate the data-parallel gradient
 * collectives of every group together. */
WEFT_API weft_err weft_sim_rings(const weft_topo *t, weft_coll coll, const uint32_t *order,
                                 uint32_t n, uint32_t group, uint64_t size, const weft_sim_opts *o,
                                 weft_sim_result *out, weft_diag *d);

/* Simulates a plan on a fabric for a collective of `size` bytes (cut into
 * weft_plan_size_chunks equal chunks; an op moves count chunks and counts
 * as count one-chunk transfers leaving together: it gets count max-min
 * shares of each link, so merging identical transfers into one op, as the
 * optimal plan does, changes nothing). An alltoallv plan (one with a
 * traffic matrix, weft/plan.h) charges each op its own bytes
 * (weft_plan_op_bytes_at: exact at its own size, within half a byte, and
 * in proportion at others), as count equal flows; in the fluid model its
 * flows share links in proportion to their bytes (weighted max-min, as a
 * schedule pacing each transfer at its planned rate; docs/sim.md), in the
 * runtime and gpu models per flow, as TCP and NCCL do. Each op is
 * cut into o->slices slices: slice s of an op waits for slice s of each of
 * its deps and for its own slice s-1 (pieces of a chunk move through the
 * schedule independently, as NCCL pipelines a step's data). An op with a
 * route uses its paths (per link, the sum of the shares of the paths that
 * cross it; latency of its slowest path); one without uses ECMP shortest
 * paths; an op between a rank and itself, or a nop, takes no time beyond
 * alpha. The plan is not verified here (weft_plan_verify does that); ranks
 * must match the fabric's. WEFT_EVERIFY names an op on a dependency cycle,
 * WEFT_ETOPO a route that is not in the fabric. With o->symmetry (the
 * default) a plan of at least 4,096 transfers (ops x slices) whose
 * transfers fall into at most half as many classes (same bytes, latency,
 * deps' classes and load on the same link classes: an equitable partition
 * of the whole dependency DAG, found by colour refinement) is simulated on
 * the classes, as the ring is: exact in exact arithmetic, within rounding
 * (1e-9 relative) of the op-by-op run in floating point; flow_classes then
 * says how many. A multi-ring plan on identical hosts reduces about
 * hosts x rings-fold (rings:16 on h100:16: 520,192 ops on 2,011 classes).
 * Without it plans are simulated op by op.
 *
 * With o->cut_through, a dep D of an op X is a data dep when both touch
 * exactly the same slots (same rank, the same physical slots after in-place
 * aliasing, the same count) and one of them writes them: D wrote what X
 * reads (its source, or for a reduce its destination) or overwrites, or X
 * overwrites what D read. When X crosses at least one link, slice s of X
 * then cuts through on slice s of D: it starts at D's start + D's latency
 * + alpha, never sends more than D has sent, and drains no earlier than D
 * is done (docs/sim.md). Every other dep (disjoint or partly overlapping
 * slots, nops) and every dep of a local op keeps store and forward. Slicing
 * still applies (slice s of an op follows its slice s-1). */
WEFT_API weft_err weft_sim_plan(const weft_topo *t, const weft_plan *p, uint64_t size,
                                const weft_sim_opts *o, weft_sim_result *out, weft_diag *d);

/* One plan of several run at once (weft_sim_plans): its collective's size
 * and the time it starts. ring > 0 says that the plan holds the transfers
 * weft_sim_rings makes for rings of `ring` ranks of ring_coll (step s of a
 * position after step s - 1 of the one before it, one chunk of size /
 * ring bytes each, a header of ring chunks; ops step after step, the
 * positions' ops of step 0 first): it then runs with the settings
 * weft_sim_rings resolves for them (in the gpu model no cut-through and
 * NCCL's steps as slices; in the runtime model each position's messages
 * one FIFO stream), so that alone it takes what weft_sim_rings gives. */
typedef struct weft_sim_job {
    const weft_plan *plan;
    uint64_t size;
    double start_s; /* >= 0 */
    uint32_t ring;  /* 0: a plan as weft_sim_plan runs it */
    weft_coll ring_coll;
} weft_sim_job;

/* Simulates n plans on one fabric at once, each as weft_sim_plan would
 * (its own settings resolved from o for its collective and size), job j's
 * transfers starting no earlier than jobs[j].start_s, so that plans that
 * overlap in time share the links they both cross max-min fairly.
 * done_s[j] is when job j's last transfer is done (plus its launch
 * latency), in the same time as the starts. A job alone at start 0 takes
 * what weft_sim_plan (weft_sim_rings for a ring job) gives it. Every job must resolve to the same
 * per-transfer overhead alpha (all models do) and have no circuits
 * (WEFT_EINVAL otherwise); o->trace is not supported. The Chakra runner
 * (weft/work.h) runs collectives that overlap in time through it. */
WEFT_API weft_err weft_sim_plans(const weft_topo *t, const weft_sim_job *jobs, uint32_t n,
                                 const weft_sim_opts *o, double *done_s, weft_diag *d);

/* ==== In-network reduction ================================================
 *
 * NCCL's algorithms that reduce inside a switch (weft/synth.h, "NCCL's
 * choice"), run as the flows they move to and from the switch
 * (docs/sim.md, "In-network reduction"; src/sim/innet.c): NVLS (NVLink
 * SHARP in each host's NVSwitch; across hosts with a SHARP network
 * switch), NVLS-tree (NVLS in each host, a double binary tree of hosts),
 * CollNet direct and chain (in-host reduce to per-shard heads over NVLink,
 * directly or along a chain, then a SHARP network switch). */
typedef enum weft_sim_innet_algo {
    WEFT_SIM_INNET_NVLS = 0,
    WEFT_SIM_INNET_NVLS_TREE,
    WEFT_SIM_INNET_COLLNET_DIRECT,
    WEFT_SIM_INNET_COLLNET_CHAIN,
    WEFT__SIM_INNET_COUNT
} weft_sim_innet_algo;

/* "nvls", "nvls_tree", "collnet_direct", "collnet_chain"; "?" out of range. */
WEFT_API const char *weft_sim_innet_name(weft_sim_innet_algo a);

/* Simulates algo for coll of `size` bytes over groups of ranks at once, as
 * weft_sim_rings takes them: order[0..n) is n / group groups of `group`
 * consecutive positions (order NULL: one group of every rank). Every host
 * of a group must hold as many of its ranks; the NVLS kinds need each
 * rank linked both ways to its host's switch with reduce=nvls, the
 * CollNet kinds and NVLS across hosts a switch with reduce=sharp
 * reachable from the heads. allreduce runs everywhere; allgather and
 * reducescatter with NVLS inside one host only. The gpu model counts the
 * reducing NVSwitch's links at NCCL's NVLS efficiency, holds each
 * NVLS-tree head to NCCL's per-channel ceiling (perChMaxNVLSTreeBws x n /
 * (2(n - 1)) GB/s of data; docs/sim.md, "In-network reduction") and
 * launches with NCCL's latency for the algorithm; proto is Simple.
 * WEFT_EINVAL for
 * those conditions (d says which), WEFT_ETOPO for a missing switch or
 * path. Deterministic like the rest. */
WEFT_API weft_err weft_sim_innet(const weft_topo *t, weft_coll coll, weft_sim_innet_algo algo,
                                 const uint32_t *order, uint32_t n, uint32_t group, uint64_t size,
                                 const weft_sim_opts *o, weft_sim_result *out, weft_diag *d);

/* ==== Background transfers in a link's idle time ==========================
 *
 * A link of link_gbs GB/s is busy with training traffic, saturated, outside
 * the `nidle` idle intervals idle[i] = [start, end] s of a period of
 * `period` s (in order, not overlapping, within [0, period]), repeated `periods`
 * times from 0. A background transfer of `bytes` starts at 0 over that
 * link and a second one of path_gbs GB/s (PCIe, say), served below the
 * training traffic in strict priority (the flow engine's traffic classes,
 * docs/sim.md): the engine replays the training as class-0 flows, one per
 * busy interval holding the link whole from its start to its end, and the
 * transfer as a class-1 flow. Out: *arrive, when the transfer completes
 * (it may be after the last period); *delay raised to the most a training
 * flow finishes later than in the same replay without the transfer (0
 * when strict priority holds); *flows increased by the engine flows of
 * both replays. WEFT_EINVAL for bad figures or intervals, WEFT_ENOMEM. */
WEFT_API weft_err weft_sim_background(double link_gbs, double path_gbs, const double (*idle)[2],
                                      size_t nidle, double period, uint32_t periods, double bytes,
                                      double *arrive, double *delay, uint64_t *flows);

#ifdef __cplusplus
}
#endif
#endif
