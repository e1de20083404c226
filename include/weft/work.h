/* weft training workloads: what one training step of a transformer costs on
 * a fabric.
 *
 * A model (Megatron-LM's architecture arguments), a parallelism (Megatron's
 * parallel sizes, batch and recompute arguments), a GPU (peak FLOP/s per
 * precision, HBM bandwidth and capacity) and a fabric become:
 *
 *   counts   exact parameters, FLOPs per layer and per step, memory per GPU
 *            (weights, gradients, optimizer state, activations after
 *            Korthikanti et al. 2022), from integer formulas;
 *   compute  per kernel FLOPs and bytes of a layer, timed by a roofline with
 *            a shape-dependent GEMM efficiency (tile and wave quantization
 *            under one fitted ceiling, WEFT_WORK_GEMM_EFF) of the GPU's
 *            measured matmul FLOP/s; FP8 as Transformer Engine runs it;
 *   comm     every collective the step issues (TP allreduce or allgather /
 *            reduce-scatter, CP key-value exchange, DP gradient buckets, PP
 *            sends, EP all-to-all), placed on the fabric's ranks in
 *            Megatron's order and simulated with every concurrent group of a
 *            kind in one simulation (weft_sim_rings, weft_sim_plan), so that
 *            groups share links. Identical simulations are cached per step;
 *   step     1F1B or interleaved pipeline with its bubble, DP communication
 *            after the flush or overlapped with the last backward, the
 *            optimizer, and the exposed communication per kind.
 *
 * docs/step.md gives every formula, the data sheets and the validation.
 * Times are seconds (double), sizes bytes, FLOPs exact in uint64_t where a
 * count is asked for. Everything is deterministic. Not thread safe per
 * weft_work_ctx; separate contexts may run in parallel.
 */
#ifndef WEFT_WORK_H
#define WEFT_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/compress.h"
#include "weft/err.h"
#include "weft/plan.h"
#include "weft/sim.h"
#include "weft/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- GPUs ---------------------------------------------------------------- */

typedef enum weft_prec {
    WEFT_PREC_BF16 = 0,
    WEFT_PREC_FP16,
    WEFT_PREC_FP8,
    WEFT_PREC_FP32,
    WEFT__PREC_COUNT
} weft_prec;

/* "bf16", "fp16", "fp8", "fp32". */
WEFT_API const char *weft_prec_name(weft_prec p);

#define WEFT_WORK_NAME_MAX 31

/* One GPU (one rank of a fabric). Peaks are dense (no sparsity) tensor
 * FLOP/s; 0 means the precision is not supported (fp8 on A100). mamf is
 * the measured maximum achievable matmul FLOP/s (the best GEMM shape found,
 * docs/step.md, "GPUs"), bf16 and fp8; 0: not measured (see
 * weft_gpu_ceiling). */
typedef struct weft_gpu {
    char name[WEFT_WORK_NAME_MAX + 1];
    double peak[WEFT__PREC_COUNT]; /* FLOP/s per precision */
    double hbm_bw;                 /* bytes/s */
    double hbm_bytes;              /* capacity, bytes */
    uint32_t sms;                  /* streaming multiprocessors / compute units */
    double mamf[WEFT__PREC_COUNT]; /* achievable FLOP/s per precision; 0: unmeasured */
} weft_gpu;

/* A100 SXM's measured share of its peak, 271.2 of 312 TFLOP/s in bf16
 * (docs/step.md, "GPUs"): the share a GPU with no measurement is given. */
#define WEFT_WORK_MAMF_SHARE (271.2 / 312.0)

/* The GEMM ceiling of a precision in FLOP/s: its measured mamf; else its
 * peak times the share the GPU's bf16 measurement reaches of the bf16
 * peak, or WEFT_WORK_MAMF_SHARE without one. A precision with no peak
 * (fp8 on A100) runs at bf16's. */
WEFT_API double weft_gpu_ceiling(const weft_gpu *g, weft_prec p);

/* The built-in table (docs/step.md cites each row's data sheet). */
WEFT_API size_t weft_gpu_count(void);
WEFT_API const weft_gpu *weft_gpu_at(size_t i);
/* The built-in GPU of that name; false when unknown. */
WEFT_API bool weft_gpu_find(const char *name, weft_gpu *out);
/* Parses a GPU file: lines "key = value" ('#' comments), keys name, bf16,
 * fp16, fp8, fp32 (TFLOP/s), hbm_bw (GB/s), hbm (GiB), sms, mamf_bf16,
 * mamf_fp8 (TFLOP/s, optional, at most the peak). name, bf16,
 * hbm_bw and hbm are required; fp16 defaults to bf16. WEFT_EPARSE names
 * file:line:col and the reason. */
WEFT_API weft_err weft_gpu_parse(const char *text, size_t len, const char *fname, weft_gpu *out,
                                 weft_diag *d);

/* ---- Models -------------------------------------------------------------- */

/* A transformer in Megatron-LM's terms. gpt style: biases, LayerNorm,
 * learned position embeddings, output tied to the input embedding, GeLU
 * MLP of ffn. llama style (swiglu): no biases, RMSNorm, rotary positions,
 * an untied output layer, a gated MLP (three matrices). Experts > 0: every
 * layer's MLP is a mixture of `experts` experts of moe_ffn, topk per token,
 * plus shared_experts always-on experts of moe_ffn, behind a router. */
typedef struct weft_model {
    char name[WEFT_WORK_NAME_MAX + 1];
    uint32_t layers, hidden, ffn, heads, query_groups, kv_channels;
    uint32_t seq, vocab;
    uint32_t experts, topk, moe_ffn, shared_experts;
    bool swiglu;
    /* --untie-embeddings-and-output-weights for a gpt-style model (swiglu
     * models are always untied). */
    bool untie;
    /* MoE layers: layer i (0-based) has experts when i >= moe_first_dense
     * and i % moe_freq == 0 (Megatron's --moe-layer-freq, an integer N or
     * the pattern ([0]*K+[1]*M)); moe_freq 0 means 1. Others are dense
     * (ffn). */
    uint32_t moe_first_dense, moe_freq;
    /* Multi-head latent attention (DeepSeek-V2/V3; Megatron's
     * --multi-latent-attention --q-lora-rank --kv-lora-rank --qk-head-dim
     * --qk-pos-emb-head-dim --v-head-dim): queries through a rank-q_lora
     * down/up projection (q_lora 0: one h x a (qk + rope) matrix), keys
     * and values through a shared kv_lora latent plus a shared rope key of
     * qk_rope channels, per head qk + qk_rope query/key and v value
     * channels. */
    bool mla;
    uint32_t q_lora, kv_lora, qk_head, qk_rope, v_head;
} weft_model;

WEFT_API size_t weft_model_count(void);
WEFT_API const weft_model *weft_model_at(size_t i);
/* Where the preset's figures come from (a paper or a model card). */
WEFT_API const char *weft_model_source(size_t i);
WEFT_API bool weft_model_find(const char *name, weft_model *out);

/* Megatron's defaults for what a model leaves 0: ffn 4 x hidden,
 * query_groups heads, kv_channels hidden / heads, seq 2048, vocab 51200,
 * topk 2 and moe_ffn ffn when experts > 0, moe_freq 1; with mla qk_head 128,
 * qk_rope 64, v_head 128 and kv_lora 512 (Megatron's MLA defaults). */
WEFT_API void weft_model_complete(weft_model *m);

/* ---- Parallelism ---------------------------------------------------------- */

typedef enum weft_recompute {
    WEFT_RECOMPUTE_NONE = 0,
    WEFT_RECOMPUTE_SELECTIVE,
    WEFT_RECOMPUTE_FULL,
} weft_recompute;

WEFT_API const char *weft_recompute_name(weft_recompute r);

/* The dimensions in placement order, innermost first (Megatron's
 * RankGenerator order "tp-cp-ep-dp-pp": EP is the inner part of DP). */
typedef enum weft_dim {
    WEFT_DIM_TP = 0,
    WEFT_DIM_CP,
    WEFT_DIM_EP,
    WEFT_DIM_DP,
    WEFT_DIM_PP
} weft_dim;
#define WEFT__DIM_COUNT 5

typedef struct weft_parallel {
    uint32_t tp, pp, cp, ep;    /* >= 1; dp = ranks / (tp pp cp) */
    uint32_t layers_per_vstage; /* 0: no interleaving */
    /* Virtual stages per pipeline rank (--num-virtual-stages-per-pipeline-rank,
     * --virtual-pipeline-model-parallel-size); 0: from layers_per_vstage
     * (1 without it). The two exclude each other. */
    uint32_t vpp;
    /* Uneven pipeline stages (--decoder-first-pipeline-num-layers,
     * --decoder-last-pipeline-num-layers): the first / last stage's
     * layers, the rest split evenly over the other stages; 0: even. */
    uint32_t first_stage_layers, last_stage_layers;
    /* --use-flash-attn: a fused attention kernel that keeps no score
     * matrix (Dao 2023, FlashAttention-2): the activations drop the
     * 5 a s b s_cp / t score term, the kernel streams Q, K, V and O once. */
    bool flash_attn;
    /* DeepSpeed ZeRO stage (--zero-stage 0..3; docs/step.md "ZeRO"): 1
     * shards the optimizer state, 2 also the gradients, 3 also the
     * parameters, over the data-parallel group (CP included), with
     * DeepSpeed's default buckets. Excludes dist_opt; 2 and 3 exclude
     * PP > 1 (as DeepSpeed). */
    uint32_t zero_stage;
    bool sp; /* sequence parallelism */
    /* --tp-comm-overlap: Transformer Engine's userbuffers overlap every TP
     * all-gather and reduce-scatter of the Linears with their GEMMs
     * (docs/step.md, "TP overlap"); needs sp and tp > 1 (as Megatron). */
    bool tp_comm_overlap;
    uint32_t global_batch, micro_batch;
    weft_recompute recompute;
    weft_prec prec;                  /* bf16 (default), fp16, fp8 */
    bool dist_opt;                   /* --use-distributed-optimizer */
    bool overlap_grad;               /* --overlap-grad-reduce */
    uint32_t order[WEFT__DIM_COUNT]; /* placement, innermost first */
    /* Expert load of the EP all-to-all (--moe-skew, --seed): false is the
     * balanced matrix (every EP rank receives its exact share, what
     * Megatron's auxiliary-loss balancing aims at); true draws each EP
     * group's routing with weft_traffic_moe's generator, zipf exponent
     * moe_zipf_milli / 1000 (0: uniform random routing), group g seeded
     * moe_seed + g. */
    bool moe_zipf;
    uint32_t moe_zipf_milli;
    uint64_t moe_seed;
    /* --grad-compression (docs/step.md, "Gradient compression"): the
     * compressor of the DP gradient all-reduce; kind WEFT_COMP_NONE (the
     * default) is dense. A quantizer (int8, fp8, qsgd, sign) or a
     * sparsifier (topk, dgc, randk, hash; not powersgd), with the
     * gradients all-reduced (neither dist_opt nor zero_stage). Without
     * grad_auto every group of gradients is compressed on the GPU (ring
     * form for a quantizer, sparse all-gather for a sparsifier); with it
     * the search of weft_work_grad_plan decides per group. grad_fuse says
     * how the gradient tensors are grouped (weft_gc_fuse). */
    weft_compressor grad_comp;
    bool grad_auto;
    uint32_t grad_fuse; /* weft_gc_fuse */
} weft_parallel;

/* How --grad-compression groups the gradient tensors before compressing
 * them (docs/step.md, "Gradient compression"):
 *   BUCKET  Megatron's buckets (the dense step's), one decision each;
 *   TENSOR  every tensor on its own (per-layer compression);
 *   DP      Cupcake's fusion: the partition of the backward's tensors
 *           into runs of consecutive tensors that minimises the step,
 *           found by dynamic programming (with grad_auto: the better of
 *           that and BUCKET's per-bucket search). */
typedef enum weft_gc_fuse {
    WEFT_GC_FUSE_DEFAULT = 0, /* BUCKET without grad_auto, DP with it */
    WEFT_GC_FUSE_BUCKET,
    WEFT_GC_FUSE_TENSOR,
    WEFT_GC_FUSE_DP,
} weft_gc_fuse;

/* Parses --grad-compression: "C" (a compressor, weft_compressor_parse),
 * "auto" (auto:int8) or "auto:C", each optionally followed by
 * ",fuse=bucket|tensor|dp"; sets p's grad_comp, grad_auto, grad_fuse.
 * WEFT_EINVAL with d naming the bad part. */
WEFT_API weft_err weft_grad_compression_parse(const char *text, weft_parallel *p, weft_diag *d);

/* tp pp cp ep 1, no interleaving, no sp, batch 1 / 1, no recompute, bf16,
 * order tp-cp-ep-dp-pp. */
WEFT_API void weft_parallel_init(weft_parallel *p);
/* Parses an order such as "tp-cp-ep-dp-pp" (every dimension once). */
WEFT_API bool weft_parallel_order_parse(const char *text, uint32_t order[WEFT__DIM_COUNT]);

/* ---- Counts (exact) ------------------------------------------------------ */

typedef struct weft_counts {
    uint32_t dp, microbatches, vstages;
    uint32_t stage_layers_max; /* layers of the largest pipeline stage */
    uint64_t params;           /* whole model */
    uint64_t params_active;    /* per token (MoE: topk experts) */
    uint64_t params_gpu_max;   /* on the busiest GPU */
    uint64_t layer_fwd_flops;  /* one layer, one micro-batch, whole layer (the MoE one when
                                  some layers are dense) */
    uint64_t logits_fwd_flops; /* the output layer, one micro-batch */
    double model_flops;        /* per step: 3 x forward (MFU's numerator) */
    double hw_flops;           /* per step: with recomputation */
    /* Bytes per GPU, the busiest stage. */
    uint64_t mem_weights, mem_grads, mem_optim, mem_act;
    uint64_t mem_total;
} weft_counts;

/* Checks the configuration as Megatron's argument checks would and counts.
 * WEFT_EINVAL names the flag (--tensor-model-parallel-size, ...) and why;
 * memory is not checked here (weft_work_step does). */
WEFT_API weft_err weft_work_counts(const weft_model *m, const weft_parallel *p, uint32_t ranks,
                                   weft_counts *out, weft_diag *d);

/* ---- The step ------------------------------------------------------------ */

typedef enum weft_comm_kind {
    WEFT_COMM_TP = 0,
    WEFT_COMM_CP,
    WEFT_COMM_DP,
    WEFT_COMM_PP,
    WEFT_COMM_EP,
    WEFT_COMM_EMB,  /* the embedding: vocabulary-parallel all-reduce over TP (forward, first
                       stage) and the tied gradient all-reduce of the first and last stage */
    WEFT_COMM_LOSS, /* cross-entropy's three fp32 all-reduces over TP (last stage) and the
                       loss average over DP */
    WEFT__COMM_COUNT
} weft_comm_kind;

/* "tp", "cp", "dp", "pp", "ep", "emb", "loss". */
WEFT_API const char *weft_comm_kind_name(weft_comm_kind k);

/* The GEMM efficiency ceiling, the one constant fitted on the development
 * data (docs/step.md, "Validation"): the fraction of the GPU's measured
 * matmul ceiling (weft_gpu_ceiling) a large, well-shaped GEMM reaches in
 * training. Fitted as 0.78 of the data-sheet peak on A100 (0.76, 0.78,
 * 0.80 tried) and restated against A100's measured ceiling, 271.2 of 312
 * TFLOP/s: 0.897, A100's predictions unchanged, nothing refitted. */
#define WEFT_WORK_GEMM_EFF (0.78 / WEFT_WORK_MAMF_SHARE)

typedef struct weft_step_result {
    weft_counts counts;
    double step_s;
    double mfu;
    double compute_s; /* pipeline steady state, compute only */
    double bubble_s;  /* pipeline fill and drain */
    double optimizer_s;
    double exposed_s[WEFT__COMM_COUNT];    /* on the critical path */
    double comm_s[WEFT__COMM_COUNT];       /* total simulated time per kind */
    uint64_t comm_bytes[WEFT__COMM_COUNT]; /* bytes one GPU sends per step */
    uint32_t comm_calls[WEFT__COMM_COUNT]; /* collectives per GPU per step */
    double fwd_s, bwd_s;                   /* one micro-batch on the busiest stage, its per-layer
                                              communication in both, its embedding and loss
                                              communication in fwd_s */
    double pp_send_s;                      /* one pipeline send (all stages at once) */
    double tied_s;                         /* the tied embedding's gradient all-reduce */
    double ep_dispatch_s, ep_combine_s;    /* one EP all-to-all each way (all groups at once) */
    uint64_t ep_max_tokens;                /* routed tokens the busiest EP rank receives per
                                              micro-batch and layer (its expert GEMMs) */
    uint32_t sims, sim_hits;               /* simulations run, cache hits */
    /* With grad_comp: the compression compute in comm_s[WEFT_COMM_DP]
     * (compress, decompress at every hop, at the GPU's memory bandwidth:
     * docs/step.md, "Gradient compression"), and the bytes one GPU does
     * not send against the dense all-reduce (0 when it sends more); 0
     * without. */
    double compress_s;
    uint64_t compress_saved_bytes;
    /* With grad_comp: of compress_s, what runs on the compute stream (it
     * delays the backward) and on the CPU; the groups of the plan, those
     * compressed and those on the CPU; the step with no compression and
     * with every Megatron bucket compressed on the GPU (the "never" and
     * "always" of weft_work_grad_plan, in the same timeline). */
    double compress_gpu_s, compress_cpu_s;
    uint32_t gc_groups, gc_compressed, gc_cpu;
    double gc_never_step_s, gc_always_step_s;
    bool gc_exact;
    bool fits;
} weft_step_result;

/* A step predictor for one fabric and GPU: owns the simulation cache. */
typedef struct weft_work_ctx weft_work_ctx;

/* t and g must outlive the context; g may be NULL for weft_chakra_run on
 * traces that give every compute node its duration. o (may be NULL: the fabric's default
 * model, weft_sim_model_default) sets how collectives are simulated. */
WEFT_API weft_err weft_work_ctx_new(const weft_topo *t, const weft_gpu *g, const weft_sim_opts *o,
                                    weft_work_ctx **out);
WEFT_API void weft_work_ctx_free(weft_work_ctx *c);

/* Predicts one step. WEFT_EINVAL for a bad configuration (as
 * weft_work_counts); the result says whether it fits in memory (fits) and
 * check_memory turns not fitting into WEFT_EINVAL naming the sizes. When
 * trace is not NULL a Chrome/Perfetto trace of the step is written to it. */
WEFT_API weft_err weft_work_step(weft_work_ctx *c, const weft_model *m, const weft_parallel *p,
                                 bool check_memory, FILE *trace, weft_step_result *out,
                                 weft_diag *d);

/* ---- Gradient compression plan (docs/step.md, "Gradient compression") --- */

/* One group of the data-parallel gradients: units first .. last of the
 * plan (tensors in the order the backward produces them, or Megatron's
 * buckets), how it is reduced and what that costs. Times are from the
 * start of the last micro-batch's backward. */
typedef struct weft_gc_group {
    uint32_t first, last;
    uint64_t elems; /* fp32 gradient elements */
    bool compressed, cpu;
    const char *coll; /* "allreduce" (dense), "ring", "2shot" (quantizers),
                         "sparse-ag", "sparse-hash" (sparsifiers) */
    double ready_s;   /* its last tensor produced (compute stream delays included) */
    double compute_s; /* compression compute: compress, aggregate, decompress
                         (and the PCIe copies on the CPU) */
    double comm_start_s, end_s;
    uint64_t bytes, bytes_saved; /* one GPU sends; against the dense all-reduce (0 when
                                    it sends more: sparse-ag at a high density) */
} weft_gc_group;

typedef struct weft_gc_report {
    const char *units; /* "tensors", "layers" (a layer's tensors as one unit: the
                          fusion search of a stage of more than 64 tensors) or
                          "buckets" */
    uint32_t nunits;
    size_t n;
    weft_gc_group *g;
    double end_s;                     /* the last gradient reduced (or the backward's end) */
    double never_end_s, always_end_s; /* the same with no compression / all compressed */
    double window_s;                  /* the backward's end without compression compute */
    size_t states;                    /* Pareto states the search kept (all boundaries) */
    bool exact;                       /* the search kept every non-dominated state */
} weft_gc_report;

/* The plan of p's grad_comp for the dense DP gradients of the busiest
 * stage (as weft_work_step places them): WEFT_EINVAL as weft_work_step,
 * and when p has no grad_comp. Release with weft_gc_report_fini. */
WEFT_API weft_err weft_work_grad_plan(weft_work_ctx *c, const weft_model *m, const weft_parallel *p,
                                      weft_gc_report *out, weft_diag *d);
WEFT_API void weft_gc_report_fini(weft_gc_report *r);

/* ---- Sweep --------------------------------------------------------------- */

typedef struct weft_sweep_entry {
    weft_parallel par;
    weft_step_result res;
} weft_sweep_entry;

/* Every valid (TP, PP, virtual stages, CP, EP, micro-batch, recompute) for
 * m with base's batch, precision and options on c's fabric: those that
 * fit in memory predicted and sorted by step time, then those that do not,
 * with their counts and memory but not predicted (step_s 0, fits false),
 * by memory. *out (release with
 * weft_work_sweep_free) holds the *n configurations that pass Megatron's
 * argument checks. TP runs over powers of two up to the ranks of one
 * host (with SP when > 1), PP over the divisors of the layers, virtual
 * stages 1, 2, 4, CP 1, 2, 4, 8, EP over powers of two up to the experts,
 * micro-batches 1, 2, 4, 8, and the three recompute settings. */
WEFT_API weft_err weft_work_sweep(weft_work_ctx *c, const weft_model *m, const weft_parallel *base,
                                  weft_sweep_entry **out, size_t *n, weft_diag *d);
WEFT_API void weft_work_sweep_free(weft_sweep_entry *e);

/* ---- Idle time and checkpoints (docs/step.md "Checkpoints") ------------- */

/* One link group's step: a box's NVLink (links between its ranks) or its
 * NICs (its ranks' way out), as the trace's "links" tracks draw them. Its
 * busy time is the union of the intervals any collective of the step loads
 * it (weft_work_step's trace), its idle time the rest of [0, step_s]; both
 * in whole nanoseconds, so busy_ns + idle_ns = step_ns exactly. */
typedef struct weft_idle_group {
    char name[32]; /* "b3.nic", "b3.nvlink" (b: the box's host id) */
    int32_t host;
    bool nic;
    double bw_gbs; /* GB/s one way: the box's links out of the host (nic), or
                      from its GPUs to in-box switches and GPUs (nvlink) */
    int64_t busy_ns, idle_ns;
    double idle_bytes; /* what a background class could move: bw x idle */
    size_t n;          /* idle intervals */
    double (*iv)[2];   /* [start, end] in seconds, in order */
} weft_idle_group;

typedef struct weft_idle_profile {
    int64_t step_ns;        /* the step, rounded to whole nanoseconds */
    uint32_t ranks_per_box; /* the largest box's ranks */
    size_t n;
    weft_idle_group *g; /* every box's nvlink then nic group, boxes in rank order */
} weft_idle_profile;

/* The idle profile of the step r (weft_work_step's result for p on c).
 * WEFT_ENOMEM; release with weft_idle_profile_fini. */
WEFT_API weft_err weft_work_idle(weft_work_ctx *c, const weft_parallel *p,
                                 const weft_step_result *r, weft_idle_profile *out, weft_diag *d);
WEFT_API void weft_idle_profile_fini(weft_idle_profile *p);
/* on: weft_work_step's traces also draw each link group's idle intervals
 * ("idle" slices on its track, every group drawn). Off by default. */
WEFT_API void weft_work_ctx_set_trace_idle(weft_work_ctx *c, bool on);

/* ---- Choosing each group's collective (docs/step.md) -------------------- */

/* How a step's collectives run (weft step --coll-algo):
 * NCCL  what NCCL runs on each group: rings (several channels across
 *       hosts) or, in the gpu model where NCCL's choice reduces in the
 *       network, that (the default);
 * BEST  each group's all-gather, reduce-scatter, all-reduce and
 *       all-to-all as weft_choose (weft/choose.h) ranks it on the group's
 *       fabric (weft_topo_subset; the fabric itself for a group of every
 *       rank) at its size, in the context's model: the fastest of the
 *       schedules `weft sim --compare` ranks, with its time; several
 *       groups then run their plans side by side on the whole fabric
 *       (weft_work_choice.together). Broadcasts and sends keep NCCL's
 *       model, and so do Chakra collectives that overlap others in time
 *       (weft_sim_plans runs NCCL's plans beside each other). */
typedef enum weft_work_coll_algo {
    WEFT_WORK_COLL_NCCL = 0,
    WEFT_WORK_COLL_BEST
} weft_work_coll_algo;
/* Sets it (before the first step: the context's cache keeps times). */
WEFT_API void weft_work_ctx_set_coll_algo(weft_work_ctx *c, weft_work_coll_algo a);
/* Every all-to-all of a traffic matrix (a DLRM step's embedding
 * exchanges, a skewed MoE dispatch) as the registry schedule `algo`'s
 * alltoallv plan of that matrix ("direct", "hier", "pairwise", "bruck",
 * "flash", "flash:K", "optimal", ...: weft_sched_supports(algo,
 * WEFT_COLL_ALLTOALL, true)), whatever the coll_algo; recorded as a
 * choice (weft_work_choices). NULL or "": as the coll_algo says. Before
 * the first step. WEFT_EINVAL, naming the schedules that build one, for a
 * spelling that builds no alltoallv plan (or is 32 characters or more). */
WEFT_API weft_err weft_work_ctx_set_a2a_algo(weft_work_ctx *c, const char *algo, weft_diag *d);

/* One collective BEST chose: every group of `ranks` ranks (`groups` of
 * them at once) runs `algo` (weft_choose's label: "optimal", "nccl (ring,
 * Simple, rings:16)"; the slowest group's) for coll of `bytes`. time_s:
 * with together, the groups' plans run side by side on the whole fabric
 * (weft_sim_plans), sharing the links they cross; otherwise the slowest
 * group alone on its fabric (one group; or choices that are no plan to
 * run beside others: nccl, in the network). matrix: an all-to-all of a
 * traffic matrix (the DLRM step's embedding exchanges, a skewed MoE
 * dispatch), the fastest alltoallv plan of that matrix on the whole
 * fabric, bytes then the matrix's total / N (`weft sim --compare
 * --traffic`'s size). */
typedef struct weft_work_choice {
    weft_coll coll;
    bool matrix;
    uint64_t bytes;
    uint32_t ranks, groups;
    char algo[48];
    double time_s;
    bool together;
} weft_work_choice;
/* The collectives chosen so far by c, in the order first chosen (each
 * once); *n their count. Owned by c. */
WEFT_API const weft_work_choice *weft_work_choices(const weft_work_ctx *c, size_t *n);

/* Where checkpoints go: GEMINI's replicas in CPU memory of K machines
 * (Wang et al., SOSP'23), one of them the GPU's own, sent to the others in
 * the NICs' idle time; or remote storage at bw per box. */
typedef enum weft_ckpt_kind { WEFT_CKPT_GEMINI, WEFT_CKPT_REMOTE } weft_ckpt_kind;
typedef enum weft_ckpt_place { WEFT_CKPT_GROUP, WEFT_CKPT_RING } weft_ckpt_place;

typedef struct weft_ckpt_spec {
    weft_ckpt_kind kind;
    uint32_t replicas;     /* gemini: K >= 1 (default 2) */
    weft_ckpt_place place; /* gemini: default group */
    double remote_gbs;     /* remote storage GB/s per box (default 2.5: 20 Gbit/s) */
} weft_ckpt_spec;

/* "gemini[:replicas=K,placement=group|ring]" or "remote[:bw=BW]" (BW as
 * weft_parse_bandwidth). WEFT_EINVAL naming the bad part. */
WEFT_API weft_err weft_ckpt_parse(const char *text, weft_ckpt_spec *out, weft_diag *d);

/* A GPU preset's host (docs/step.md "Checkpoints" cites them). */
typedef struct weft_host_figures {
    double pcie_gbs;  /* GB/s one way, per GPU (its PCIe x16 link) */
    double mem_bytes; /* host memory per box */
    const char *source;
} weft_host_figures;
/* false when the GPU (by name) has no figures. */
WEFT_API bool weft_host_figures_get(const char *gpu, weft_host_figures *out);

typedef struct weft_ckpt_result {
    uint64_t bytes_gpu; /* the busiest GPU's state: fp32 master weights and Adam's two
                           moments, 12 bytes a parameter, sharded as configured */
    double bytes_box;   /* ranks_per_box x bytes_gpu */
    double send_box;    /* bytes a box sends per checkpoint: (K - 1) x bytes_box
                           (gemini), bytes_box (remote) */
    double host_need;   /* host memory a box needs: K x bytes_box (gemini) */
    bool host_fits;
    double path_gbs;      /* min(NIC group, ranks_per_box x PCIe) GB/s (gemini), remote bw */
    double idle_bytes;    /* the tightest box's idle NIC time x path_gbs, per step */
    uint32_t iters;       /* steps per checkpoint with no added time (0: never, no idle) */
    double added_every_s; /* added step time to checkpoint every step (remote: the save) */
    /* Failures (when failures_per_day > 0): the checkpoint interval in
     * seconds (gemini: iters steps, or 1 step with added_every_s when idle
     * never suffices; remote: Young's sqrt(2 save MTBF), at least one step),
     * and the expected loss per day: F (interval / 2 + restart) plus the
     * added time of the checkpoints of a day. */
    double interval_s;
    double lost_per_day_s;
} weft_ckpt_result;

/* The checkpoint of the step r (p, m on c's fabric, gpu g) under spec,
 * its idle profile ip; F failures per day, restart_s each. WEFT_EINVAL
 * when the GPU has no host figures. */
WEFT_API weft_err weft_ckpt_plan(const weft_ckpt_spec *spec, const weft_gpu *g,
                                 const weft_step_result *r, const weft_idle_profile *ip,
                                 double failures_per_day, double restart_s, weft_ckpt_result *out,
                                 weft_diag *d);

/* The GEMINI checkpoint of cr (weft_ckpt_plan's result for spec, g, r
 * and ip) simulated by the flow engine instead of by arithmetic: per box
 * (boxes with the same NIC group and idle intervals once), the step's
 * busy intervals on its NIC group replayed as training flows (class 0)
 * that hold the group whole, and the checkpoint as one background flow
 * (class 1, strict priority) over the NIC group and the box's PCIe. Where
 * the boxes' NIC groups have one bandwidth its iters and added_every_s
 * are weft_ckpt_plan's, to rounding (src/work/ckpt_sim.c says why);
 * training_delay_s is 0 by the engine's priority model. */
#define WEFT_CKPT_SIM_STEPS 4096
typedef struct weft_ckpt_sim {
    uint32_t iters;          /* the step in which a checkpoint sent from a step's
                                start arrives, the latest box's (0: a box has no
                                idle time; UINT32_MAX: beyond the steps replayed,
                                at most WEFT_CKPT_SIM_STEPS) */
    double added_every_s;    /* its arrival after one step's traffic, less the step
                                (0 when within it): the time added to checkpoint
                                every step */
    double arrival_s;        /* the arrival over repeating steps, from the first
                                step's start */
    double training_delay_s; /* the most a training flow finished later beside
                                the checkpoint than without it */
    uint32_t steps;          /* steps replayed (the most of any box) */
    uint32_t groups;         /* NIC groups simulated */
    uint64_t flows;          /* engine flows, every run */
} weft_ckpt_sim;
/* WEFT_EINVAL when the GPU has no host figures; WEFT_ENOMEM. */
WEFT_API weft_err weft_ckpt_simulate(const weft_gpu *g, const weft_idle_profile *ip,
                                     const weft_ckpt_result *cr, weft_ckpt_sim *out, weft_diag *d);

/* The probability that k machines failing at once (every k-subset of the
 * n machines equally likely) lose every replica of some machine's
 * checkpoint, K replicas each: group placement (n / K groups of K
 * machines, each holding its members'; n % K == 0) or ring (machine i's
 * on i .. i + K - 1 mod n). Closed forms (docs/step.md); NaN for bad
 * arguments (K < 1, K > n, group with n % K != 0, k > n). */
WEFT_API double weft_ckpt_loss_prob(weft_ckpt_place place, uint32_t n, uint32_t K, uint32_t k);

/* ---- Chakra execution traces --------------------------------------------- */

/* The execution traces of every rank of a job (ASTRA-sim's workload format:
 * mlcommons/chakra et_def.proto, one file PREFIX.R.et per rank R, a
 * GlobalMetadata then varint-length-delimited Nodes). Opaque. */
typedef struct weft_chakra weft_chakra;

/* Reads PREFIX.0.et .. PREFIX.(ranks - 1).et and checks them: a missing
 * file, a file for rank `ranks` (more traces than ranks), a malformed file
 * ("FILE: offset N: why"), an unknown node type, a collective weft does not
 * run (reduce, gather, scatter), a duplicate node id or a dependency on a
 * node the file lacks is WEFT_EINVAL naming the file and the node.
 * Nothing is kept on failure. */
WEFT_API weft_err weft_chakra_load(const char *prefix, uint32_t ranks, weft_chakra **out,
                                   weft_diag *d);
/* The same from n buffers in memory (names[i] stands for rank i's file in
 * messages; the buffers may be released after the call). */
WEFT_API weft_err weft_chakra_parse(const uint8_t *const *bufs, const size_t *lens,
                                    const char *const *names, uint32_t n, weft_chakra **out,
                                    weft_diag *d);
WEFT_API void weft_chakra_free(weft_chakra *w);
/* Nodes over all ranks. */
WEFT_API uint64_t weft_chakra_nodes(const weft_chakra *w);

/* Time of one rank. Its compute stream runs one compute node at a time, its
 * communication stream one collective or send at a time (ASTRA-sim's
 * HardwareResource: receives do not hold it), its CPU stream one node
 * marked is_cpu_op at a time (their duration_micros). */
typedef struct weft_chakra_rank {
    double end_s;     /* when its last node ends */
    double compute_s; /* compute stream busy */
    double cpu_s;     /* CPU stream busy */
    double comm_s;    /* communication stream busy (collectives and sends) */
    double exposed_s; /* communication stream busy while compute is idle */
    uint64_t nodes;
} weft_chakra_rank;

typedef struct weft_chakra_result {
    uint32_t ranks;
    double total_s;         /* when the last node of any rank ends */
    weft_chakra_rank *rank; /* ranks entries; weft_chakra_result_fini frees them */
    /* Per collective (weft_coll; broadcast included) and point to point:
     * instances run (a collective counts once, not once per rank), the sum
     * of their simulated times and of their sizes. */
    uint32_t coll_calls[WEFT__COLL_COUNT];
    double coll_s[WEFT__COLL_COUNT];
    uint64_t coll_bytes[WEFT__COLL_COUNT];
    uint32_t p2p_calls;
    double p2p_s;
    uint64_t p2p_bytes;
    uint32_t barriers;
    uint32_t batches; /* simulations asked for (concurrent instances share one) */
    uint32_t sims, sim_hits;
    uint32_t joint_sims;    /* simulations of batches that overlap in time, run
                               together because one started while others ran */
    uint64_t joint_jobs;    /* batches in them, summed */
    uint32_t joint_dropped; /* batches over before t left out of a joint
                               simulation of more than 32 (approximate) */
} weft_chakra_result;

/* Runs the traces on c's fabric (its ranks must be w's). Compute nodes take
 * duration_micros, or without one num_ops FLOPs and tensor_size bytes on
 * c's GPU by the step's roofline, max(FLOPs / (bf16 peak x
 * WEFT_WORK_GEMM_EFF), bytes / HBM bandwidth)
 * (WEFT_EINVAL naming the node when c has no GPU). A collective node is
 * matched with the ones of the other ranks of its process group (pg_name;
 * "" and "0" are every rank, any other name the ranks whose traces use it)
 * by order of issue in that group, as ASTRA-sim matches them; it starts
 * when the last member issues it, and every instance that starts at the
 * same time with the same kind, size and group size is simulated in one
 * simulation (weft_sim_rings for allreduce, allgather, reducescatter; plans
 * of direct copies for alltoall, broadcast chains and sends), so concurrent
 * groups share links. A batch that starts while others run is simulated
 * again with every batch it overlaps (weft_sim_plans, each from its own
 * start), so collectives that overlap in time share the links they both
 * cross; their ends move accordingly. A send starts when issued; its receive ends when the
 * message has arrived and the receive was issued (sends and receives
 * matched by source, destination and tag, in order). Mismatched
 * collectives (another kind or size) and deadlocks (a collective a member
 * never issues, a receive never sent, a dependency cycle) are WEFT_EINVAL
 * naming the file and node. Metadata and invalid nodes take no time.
 * trace (may be NULL) receives a Chrome/Perfetto document: a process per
 * rank, "compute", "comm" and (when used) "cpu" tracks. */
WEFT_API weft_err weft_chakra_run(weft_work_ctx *c, const weft_chakra *w, FILE *trace,
                                  weft_chakra_result *out, weft_diag *d);
WEFT_API void weft_chakra_result_fini(weft_chakra_result *r);

#ifdef __cplusplus
}
#endif
#endif
