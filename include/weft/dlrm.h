/* weft DLRM steps: one training step of a recommendation model (Naumov et
 * al. 2019, "Deep Learning Recommendation Model for Personalization and
 * Recommendation Systems", arXiv:1906.00091) on a fabric (docs/step.md,
 * "DLRM").
 *
 * The model: dense features through a bottom MLP, sparse features through
 * embedding tables (weft/embedding.h: rows, dimension, pooling, sharding),
 * an interaction of the bottom MLP's output with the pooled embeddings
 * (dot products, or DCNv2's low-rank cross layers), and a top MLP. The
 * dense part is data-parallel over every GPU; the tables are sharded as
 * TorchRec shards them. One step on the busiest GPU is, in order, with no
 * overlap unless `overlap` (then an all-to-all's time beyond the bottom
 * MLP's counts):
 *
 *   lookup_fwd   the embedding lookups: looked-up rows read, pooled
 *                vectors written, at HBM bandwidth;
 *   a2a_fwd      the forward all-to-all of pooled embeddings (the
 *                workload's exact matrix) simulated on the fabric;
 *   dense_fwd    bottom MLP, interaction, top MLP GEMMs (compute model);
 *   dense_bwd    their data- and weight-gradient GEMMs;
 *   a2a_bwd      the backward all-to-all (the transpose);
 *   lookup_bwd   pooled gradients read, each looked-up row read and
 *                written (the optimizer fused in the backward, FBGEMM's
 *                table-batched embedding);
 *   dense_ar     the all-reduce of the dense gradients (fp32);
 *   emb_ar       the all-reduce of data-parallel tables' gradients.
 *
 * Contract: owned by the work module (src/work/dlrm.c); deterministic (the
 * lookups of row-wise tables come from weft_emb_generate's seeded draws).
 */
#ifndef WEFT_DLRM_H
#define WEFT_DLRM_H

#include "weft/embedding.h"
#include "weft/work.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_DLRM_MAX_LAYERS 16u

typedef enum weft_dlrm_interaction {
    WEFT_DLRM_DOT = 0, /* pairwise dot products of the T+1 vectors (DLRM) */
    WEFT_DLRM_DCN,     /* DCNv2 low-rank cross layers over the concatenation */
} weft_dlrm_interaction;

typedef struct weft_dlrm {
    char name[WEFT_WORK_NAME_MAX + 1];
    uint32_t dense_features;               /* inputs of the bottom MLP (Criteo: 13) */
    uint32_t bottom[WEFT_DLRM_MAX_LAYERS]; /* bottom MLP widths; the last is every table's dim */
    uint32_t nbottom;
    uint32_t top[WEFT_DLRM_MAX_LAYERS]; /* top MLP widths */
    uint32_t ntop;
    weft_dlrm_interaction interaction;
    uint32_t dcn_layers, dcn_rank; /* WEFT_DLRM_DCN */
    /* Tables, batch per GPU (emb.batch), seed, rw_dense; emb.gpus must be
     * the fabric's ranks. */
    weft_emb_workload emb;
    weft_prec prec; /* of the dense GEMMs (bf16, fp16, fp32) */
    bool bound;     /* also compute the all-to-alls' exact bounds (an LP) */
    /* Herald's cache and placement (weft_emb_herald); rows_per_gpu 0 and
     * WEFT_EMB_PLACE_RANDOM: none. With either, the all-to-alls simulated
     * are the reduced matrices, and the result also has the step without
     * them (the same step's lookups, no cache, drawn placement). */
    weft_emb_herald_params herald;
    /* Overlap the embedding all-to-alls with the dense compute that does
     * not wait for them (TorchRec's lazily awaited output distribution):
     * the forward one with the bottom MLP's forward, the backward one with
     * the bottom MLP's backward. */
    bool overlap;
} weft_dlrm;

/* The preset: MLPerf Training's DLRM-DCNv2 on Criteo 1TB (mlcommons/training
 * recommendation_v2/torchrec_dlrm; docs/step.md cites it): 26 fp32 tables
 * of dimension 128 with their row counts and multi-hot sizes, bottom MLP
 * 512-256-128, top 1024-1024-512-256-1, 3 DCN layers of rank 512. tables
 * receives the 26 tables (sharding tw); m->emb.tables points at them;
 * m->emb.gpus and batch are left 0 (the reference's global batch is
 * WEFT_DLRM_MLPERF_BATCH samples). */
#define WEFT_DLRM_MLPERF_TABLES 26u
#define WEFT_DLRM_MLPERF_BATCH 65536u
WEFT_API void weft_dlrm_mlperf(weft_dlrm *m, weft_emb_table tables[WEFT_DLRM_MLPERF_TABLES]);

typedef struct weft_dlrm_result {
    double step_s;
    double lookup_fwd_s, lookup_bwd_s;       /* the busiest GPU's */
    double a2a_fwd_s, a2a_bwd_s;             /* simulated */
    double a2a_fwd_bound_s, a2a_bwd_bound_s; /* 0 unless bound (or nothing moves) */
    double dense_fwd_s, dense_bwd_s;
    double dense_ar_s, emb_ar_s;
    uint64_t dense_params;                       /* bottom, interaction, top weights and biases */
    uint64_t dense_ar_bytes;                     /* 4 x dense_params */
    uint64_t emb_ar_bytes;                       /* data-parallel tables, sum of R*D*E */
    uint64_t a2a_bytes;                          /* off-diagonal bytes of the forward matrix */
    uint64_t a2a_max_send;                       /* the most a GPU sends to others, forward */
    uint64_t lookups;                            /* per step, all GPUs */
    uint32_t busiest;                            /* GPU of the lookup times */
    uint64_t lookup_fwd_bytes, lookup_bwd_bytes; /* its HBM bytes */
    uint64_t table_bytes_max;                    /* the largest table memory of a GPU */
    uint64_t cache_bytes;                        /* a GPU's Herald cache (weft_dlrm_cache_bytes) */
    bool fits;                                   /* table_bytes_max + cache_bytes within HBM */
    double bottom_fwd_s, bottom_bwd_s;           /* the bottom MLP's part of dense_fwd/bwd */
    bool overlap;                                /* the step overlapped (weft_dlrm.overlap) */
    double a2a_fwd_hidden_s, a2a_bwd_hidden_s;   /* overlap: all-to-all time hidden */
    /* With a cache or a placement (herald true): the step and its
     * all-to-alls without them, and the counts of weft_emb_herald. */
    bool herald;
    double step_base_s, a2a_fwd_base_s, a2a_bwd_base_s;
    uint64_t a2a_bytes_base, a2a_bwd_bytes;
    uint64_t transfers_base, transfers;
    uint64_t remote, hits, stale, admitted, samples_moved;
    bool placed;
} weft_dlrm_result;

/* The memory of m's Herald cache on each GPU: rows_per_gpu slots, each as
 * wide as the widest row of a table that is not data-parallel (D x E) plus
 * 16 bytes of index, the cached row's id and its LRU stamp (FBGEMM's TBE
 * cache: int64 lxu_cache_state and lxu_state per slot, weights of
 * max_embedding_dim; pytorch/FBGEMM
 * fbgemm_gpu/fbgemm_gpu/split_table_batched_embeddings_ops_training.py,
 * _apply_cache_state, commit e1a561090def1ee811712540a0eb779b9b997a8a).
 * 0 without a cache or without such tables. */
WEFT_API uint64_t weft_dlrm_cache_bytes(const weft_dlrm *m);

/* WEFT_EINVAL naming the field (a bottom MLP whose last width is not a
 * table's dim, no tables, emb.gpus not the fabric's ranks, ...), or the
 * embedding checks' errors (weft_emb_check). c needs a GPU. */
WEFT_API weft_err weft_dlrm_step(weft_work_ctx *c, const weft_dlrm *m, weft_dlrm_result *out,
                                 weft_diag *d);
/* weft_dlrm_step of m[0] .. m[n - 1] on c: the same results to the bit
 * and, when they succeed, the same state of c after (its caches of
 * simulated collectives), with the simulations of every step on
 * weft_threads_get() threads at once: the steps' all-to-alls and
 * all-reduces in one batch (a sweep of sharding plans, whose simulations
 * take seconds each at 128 GPUs). Steps with Herald's cache or placement,
 * and all-reduces ranked by weft_choose, run one step after another. On
 * an error (the first failing step's), every out[i] is zeroed. */
WEFT_API weft_err weft_dlrm_steps(weft_work_ctx *c, const weft_dlrm *const *m, size_t n,
                                  weft_dlrm_result *out, weft_diag *d);

/* Writes the step as a Chrome/Perfetto trace: one process, one track per
 * phase in the order above. WEFT_EIO. */
WEFT_API weft_err weft_dlrm_trace(FILE *f, const weft_dlrm_result *r, weft_diag *d);

/* ---- The sharding planner (docs/step.md, "Sharding planner") ----------
 *
 * As TorchRec's planner (pytorch/torchrec, torchrec/distributed/planner/:
 * an enumerator of sharding options per table, perf and storage
 * estimators, a proposer searching plans, a partitioner checking memory),
 * weft chooses each table's sharding among tw, rw, cw:2, cw:4 (when the
 * dimension allows) and dp under a cost model of the embedding part of the
 * step, in seconds, from per-GPU sums:
 *
 *   max_g (3 rows_g + 2 out_g) / hbm_bw           the lookups, fwd + bwd
 *   + 2 (a2a_lat + max_g max(send_g, recv_g) / a2a_bw)   the all-to-alls
 *   + ar_lat + dp_bytes / ar_bw                   the dp tables' all-reduce
 *
 * where rows_g are the bytes of rows GPU g reads, out_g the pooled bytes it
 * writes, send_g and recv_g its all-to-all bytes off the diagonal (the
 * formulas of weft/embedding.h; a sparse row-wise bag of P lookups reaches
 * a block with probability 1 - (1 - 1/N)^P, uniform access), and a plan
 * whose fullest GPU's tables and Herald cache (weft_dlrm_cache_bytes of the
 * plan: its width depends on which tables are data-parallel) exceed its
 * memory costs infinity, as `fits` of weft_dlrm_step counts them. The
 * bandwidths and fixed times come from simulations on the fabric (a
 * uniform all-to-all and an all-reduce, each at two sizes: the line
 * through both); table placement is weft's round-robin.
 * The search is exhaustive when the plans are at most 4096 (the first
 * cheapest in the order where table 0's option varies fastest), else
 * coordinate descent from the cheapest uniform plan: tables in order, each
 * to its cheapest option given the others, until a pass changes nothing
 * (at most 32 passes). */
typedef struct weft_dlrm_costs {
    double hbm_bw, hbm_bytes;   /* the GPU's */
    double a2a_bw;              /* bytes a GPU sends a second in a uniform all-to-all */
    double ar_bw;               /* all-reduce buffer bytes a second */
    double a2a_lat_s, ar_lat_s; /* their fixed times (each all-to-all, the all-reduce) */
} weft_dlrm_costs;

WEFT_API weft_err weft_dlrm_costs_calibrate(weft_work_ctx *c, const weft_dlrm *m,
                                            weft_dlrm_costs *k, weft_diag *d);
/* The cost model of m's tables' shardings (col_shards for cw); INFINITY
 * when they do not fit. */
WEFT_API double weft_dlrm_plan_cost(const weft_dlrm *m, const weft_dlrm_costs *k);

typedef struct weft_dlrm_plan_info {
    double cost_s;      /* the model's cost of the plan chosen */
    double uniform_s;   /* the cheapest uniform plan's */
    uint64_t evaluated; /* plans costed */
    bool exhaustive;
} weft_dlrm_plan_info;

/* Writes the plan into tables (m->emb.ntables entries: m's tables with
 * their sharding and col_shards chosen). WEFT_ENOMEM, or the calibration's
 * errors. */
WEFT_API weft_err weft_dlrm_plan(weft_work_ctx *c, const weft_dlrm *m, weft_emb_table *tables,
                                 weft_dlrm_plan_info *info, weft_diag *d);

#ifdef __cplusplus
}
#endif
#endif
