/* weft embedding workloads: the all-to-all traffic of recommendation-model
 * (DLRM-style) embedding tables sharded over GPUs (docs/embedding.md).
 *
 * A workload is a set of tables (rows, dimension, pooling factor, bytes
 * per element, access skew, sharding), N GPUs and a batch of B samples per
 * GPU: global sample s (0 <= s < N*B) is an input of GPU s / B. Each sample
 * looks up `pooling` rows of each table (a bag) and sums them into one
 * pooled vector of `dim` elements (sum pooling, TorchRec's
 * EmbeddingBagCollection). The lookups come from a seeded generator (a
 * zipf law per table) or from a trace (sample,table,row lines).
 *
 * What is computed is the exact byte matrix of the forward all-to-all of
 * the pooled embeddings, all tables together as TorchRec sends them in one
 * collective per sharding; the backward all-to-all of their gradients is
 * its transpose (weft_traffic_transpose). Per sharding of table t (dim D,
 * E bytes per element), entry (i, j) gains:
 * - table-wise: B*D*E from the table's GPU to every GPU j (its samples'
 *   pooled vectors), the diagonal included;
 * - column-wise, K shards: B*d_c*E from shard c's GPU to every GPU j, where
 *   shard c has d_c = D/K columns, plus one for c < D mod K;
 * - row-wise: the rows are split into N blocks of ceil(R/N) rows, block o
 *   on GPU o (TorchRec's RwSparseFeaturesDist block sizes); the partial
 *   sums are reduce-scattered: D*E from GPU o to the sample's GPU for each
 *   sample whose bag holds at least one row of block o (a shard that holds
 *   none of a bag's rows sends nothing for it). `rw_dense` counts instead
 *   what TorchRec's dense PooledEmbeddingsReduceScatter moves: B*D*E from
 *   every GPU to every GPU, whatever the lookups;
 * - data-parallel: nothing (every GPU holds the table); the backward pass
 *   all-reduces the table's gradient, R*D*E bytes, reported apart.
 * Table-wise and column-wise shards are placed round-robin in table order:
 * slot u goes to GPU u mod N; a table-wise table takes one slot, a
 * column-wise table one per shard, the others none.
 *
 * Contract: owned by the `work` module (src/work/emb_*.c). Every matrix is
 * a function of the workload and the seed (or the trace), the same on
 * every platform: base/rand.h's integer generator and zipf weights.
 */
#ifndef WEFT_EMBEDDING_H
#define WEFT_EMBEDDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/err.h"
#include "weft/traffic.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_emb_sharding {
    WEFT_EMB_TW, /* table-wise: the whole table on one GPU */
    WEFT_EMB_RW, /* row-wise: blocks of ceil(R/N) rows, block o on GPU o */
    WEFT_EMB_CW, /* column-wise: col_shards slices of the columns */
    WEFT_EMB_DP, /* data-parallel: a copy on every GPU */
} weft_emb_sharding;

/* "tw", "rw", "cw", "dp". */
WEFT_API const char *weft_emb_sharding_name(weft_emb_sharding s);

typedef struct weft_emb_table {
    uint64_t rows;        /* R >= 1 */
    uint32_t dim;         /* D >= 1 elements per row */
    uint32_t pooling;     /* rows each sample looks up (generator only) */
    uint32_t dtype_bytes; /* E: 1 to 8 bytes per element */
    /* Access law of the generator: 0 is uniform over the rows; else row
     * popularity rank k (1-based) has weight floor(2^40 / k^s) with
     * s = zipf_milli / 1000 (at most 8), and rank k is row
     * ((k-1) * a) mod R with a the first number >= floor(R * 0.618...)
     * coprime with R (hot rows spread over the row-wise blocks, as hashed
     * ids are). */
    uint32_t zipf_milli;
    weft_emb_sharding sharding;
    uint32_t col_shards; /* K for WEFT_EMB_CW, 1 to dim; ignored otherwise */
} weft_emb_table;

typedef struct weft_emb_workload {
    uint32_t gpus;  /* N, 1 to WEFT_TRAFFIC_MAX_RANKS */
    uint64_t batch; /* B samples per GPU, >= 1 */
    uint32_t ntables;
    const weft_emb_table *tables; /* ntables >= 1 */
    uint64_t seed;                /* of the generator */
    bool rw_dense;                /* row-wise as TorchRec's dense reduce-scatter */
} weft_emb_workload;

/* Limits: tables, rows, dimension, pooling; a zipf table's cumulative
 * weights take 8 bytes a row, so a zipf table has at most
 * WEFT_EMB_MAX_ZIPF_ROWS rows (1 GiB; a larger one takes a trace). */
#define WEFT_EMB_MAX_TABLES 65536u
#define WEFT_EMB_MAX_ROWS (1ull << 40)
#define WEFT_EMB_MAX_DIM 65536u
#define WEFT_EMB_MAX_POOLING 65536u
#define WEFT_EMB_MAX_ZIPF_ROWS (1ull << 27)

/* WEFT_OK, or WEFT_EINVAL naming the first bad field ("table 2: dim 0:
 * must be 1 to 65536"), or WEFT_EOVERFLOW when the matrix or the
 * all-reduce could exceed 2^64-1 bytes. */
WEFT_API weft_err weft_emb_check(const weft_emb_workload *w, weft_diag *d);

typedef struct weft_emb_result {
    weft_traffic forward;     /* the forward all-to-all; backward is its transpose */
    uint64_t lookups;         /* lookups replayed (generated or read) */
    uint64_t allreduce_bytes; /* data-parallel tables' gradients: sum of R*D*E */
} weft_emb_result;

/* Frees r's matrix; safe on a zeroed or freed result. */
WEFT_API void weft_emb_result_free(weft_emb_result *r);

/* Receives lookups one at a time, in order of samples (a sample's lookups
 * together: a row-wise bag is counted when its sample ends), and builds
 * the matrix. Time O(1) per lookup; memory O(N^2 + N * tables). */
typedef struct weft_emb_acc weft_emb_acc;

/* w is checked (weft_emb_check) and copied, tables included. */
WEFT_API weft_err weft_emb_acc_new(const weft_emb_workload *w, weft_emb_acc **out, weft_diag *d);
WEFT_API void weft_emb_acc_free(weft_emb_acc *a);
/* One lookup: sample s looks up row r of table t. WEFT_EINVAL when s is
 * beyond the batch or before the previous lookup's sample, t is not a
 * table or r is not a row of it (the message says which). */
WEFT_API weft_err weft_emb_acc_add(weft_emb_acc *a, uint64_t s, uint32_t t, uint64_t r,
                                   weft_diag *d);
/* Moves the matrix into *out (a is then empty: free it). */
WEFT_API weft_err weft_emb_acc_finish(weft_emb_acc *a, weft_emb_result *out, weft_diag *d);

/* The generator: for each sample in order and each table, `pooling` rows
 * drawn independently (with replacement) from the table's law; table t's
 * draws are stream t of the seed (base/rand.h). Calls fn(s, t, r, ctx) for
 * each lookup, stopping at the first error fn returns. Memory: 8 bytes a
 * row per distinct (rows, zipf) pair of zipf tables. */
typedef weft_err (*weft_emb_lookup_fn)(void *ctx, uint64_t s, uint32_t t, uint64_t r, weft_diag *d);
WEFT_API weft_err weft_emb_generate(const weft_emb_workload *w, weft_emb_lookup_fn fn, void *ctx,
                                    weft_diag *d);

/* The matrix of the generator's lookups (weft_emb_generate into an
 * accumulator). */
WEFT_API weft_err weft_emb_forward(const weft_emb_workload *w, weft_emb_result *out, weft_diag *d);

/* Lookup traces (docs/embedding.md "Trace files"): one lookup per line,
 * "SAMPLE,TABLE,ROW" (whole decimal numbers; blanks around the fields
 * allowed), samples in non-decreasing order; '#' starts a comment; blank
 * lines are ignored. Errors are "NAME:LINE:COL: reason" (WEFT_EPARSE for
 * the syntax, WEFT_EINVAL for a lookup outside the workload). A file is
 * read up to WEFT_EMB_MAX_TRACE_BYTES. */
#define WEFT_EMB_MAX_TRACE_BYTES ((size_t)4 << 30)
WEFT_API weft_err weft_emb_trace_parse(const char *text, size_t len, const char *name,
                                       weft_emb_acc *a, weft_diag *d);
WEFT_API weft_err weft_emb_trace_load_file(const char *path, weft_emb_acc *a, weft_diag *d);

/* Writes the generator's lookups as a trace ("# COMMENT" lines first, when
 * comment is not NULL). WEFT_EIO on a write error. */
WEFT_API weft_err weft_emb_trace_write(FILE *f, const weft_emb_workload *w, const char *comment,
                                       weft_diag *d);

/* ---- Caches (Herald's idea: hot rows cached on the GPUs that read them) --
 *
 * A lookup by GPU g of a row whose data is not all on g (a table-wise or
 * row-wise row held by another GPU, a column-wise row with a shard
 * elsewhere; data-parallel rows are always local) is *remote*: without a
 * cache its remote bytes (D*E, less the slices on g) are fetched. With a
 * cache, each GPU keeps up to `rows_per_gpu` rows of any table (least
 * recently used evicted); a remote lookup of a cached row that is fresh is
 * a hit and moves nothing. A copy fetched in step k is fresh through step
 * k + staleness - 1 (the owner's updates reach it only by a new fetch:
 * Herald's staleness bound); staleness 0 means it never goes stale. A
 * stale or absent row is a miss: fetched (and cached, evicting the least
 * recently used row when full). Lookups come in order of samples over any
 * number of steps: sample s is in step s / (N*B), on GPU (s mod N*B) / B.
 * O(1) expected a lookup; memory O(N * rows_per_gpu). */
typedef struct weft_emb_cache_params {
    uint64_t rows_per_gpu; /* 0: no cache */
    uint64_t staleness;    /* steps a fetched copy stays fresh; 0: forever */
} weft_emb_cache_params;

typedef struct weft_emb_cache_stats {
    uint64_t steps;          /* steps seen (the last sample's step + 1) */
    uint64_t lookups;        /* all lookups */
    uint64_t remote;         /* lookups of rows not wholly on the GPU */
    uint64_t hits;           /* remote lookups served by a fresh cached copy */
    uint64_t stale;          /* misses whose row was cached but stale */
    uint64_t bytes_uncached; /* remote bytes without a cache */
    uint64_t bytes_cached;   /* remote bytes fetched with the cache */
} weft_emb_cache_stats;

typedef struct weft_emb_cache weft_emb_cache;

/* w is checked and copied. */
WEFT_API weft_err weft_emb_cache_new(const weft_emb_workload *w, const weft_emb_cache_params *p,
                                     weft_emb_cache **out, weft_diag *d);
WEFT_API void weft_emb_cache_free(weft_emb_cache *c);
/* One lookup; WEFT_EINVAL when s is before the previous sample, t is not a
 * table or r not one of its rows. */
WEFT_API weft_err weft_emb_cache_add(weft_emb_cache *c, uint64_t s, uint32_t t, uint64_t r,
                                     weft_diag *d);
/* The counts so far, and (when fetched is not NULL) a new matrix of the
 * bytes fetched with the cache, entry (owner, reader). */
WEFT_API weft_err weft_emb_cache_stats_get(const weft_emb_cache *c, weft_emb_cache_stats *out,
                                           weft_traffic *fetched, weft_diag *d);

/* The generator over `steps` batches: samples 0 to steps*N*B - 1, each
 * table's stream continuing from step to step (steps 1 is
 * weft_emb_generate). */
WEFT_API weft_err weft_emb_generate_steps(const weft_emb_workload *w, uint64_t steps,
                                          weft_emb_lookup_fn fn, void *ctx, weft_diag *d);

/* ---- Herald in a step: cache, synchronisation and placement ------------
 *
 * The step's model of Herald (Zeng, Cheng, Tian, Wang, Chen, "Accelerating
 * Neural Recommendation Training with Embedding Scheduling", NSDI 2024;
 * first as "Herald: An Embedding Scheduler for Distributed Embedding Model
 * Training", APNet 2022): each GPU caches hot rows of the tables it does
 * not hold, and the samples of a batch are assigned to GPUs knowing where
 * their rows are (location-aware input allocation). docs/embedding.md,
 * "Caches and placement", states the rules; in short, per step:
 *
 * - A bag (sample, table) on GPU g needs from each other GPU o holding
 *   some of its rows (a table-wise table's GPU, a row-wise block's GPU, a
 *   column-wise table's shards) one pooled vector (D*E; a column shard its
 *   slice), as weft_emb_acc counts, unless every lookup of those rows is a
 *   *hit*: a fresh copy cached on g. A bag part with exactly one missed
 *   lookup receives that row (its pooled partial is the row) and caches it
 *   (evicting the least recently or least frequently used row when full);
 *   one with more receives the pooled partial and caches nothing.
 * - A copy fetched in step k is fresh in step k' when staleness is 0, or
 *   k' < k + staleness, or no other GPU has looked the row up (so updated
 *   it) in steps k .. k'-1; else it is stale and a lookup of it is a miss
 *   (a synchronisation: the fresh row is fetched again).
 * - Backward: a bag part that received a vector sends its gradient back
 *   (the transpose); the gradients of hits reach the owner, per pair
 *   (g, o) the fewer bytes of one pooled gradient per hit bag part or one
 *   row gradient per distinct hit row.
 * - Placement WEFT_EMB_PLACE_HERALD assigns the N*B samples of a step to
 *   the GPUs, B each, greedily in sample order, each to the GPU with room
 *   that saves the most forward bytes under the cache contents at the
 *   step's start (a GPU saves a bag part's vector when it holds the rows or
 *   fresh copies of all of them); it keeps the drawn assignment (RANDOM:
 *   sample s on GPU (s mod N*B) / B) when that saves as much.
 *
 * The generator draws warm_steps + 1 steps (weft_emb_generate_steps); the
 * last is measured. */
typedef enum weft_emb_policy {
    WEFT_EMB_LRU = 0,
    WEFT_EMB_LFU, /* least frequently used since cached; ties least recent */
} weft_emb_policy;

typedef enum weft_emb_placement {
    WEFT_EMB_PLACE_RANDOM = 0, /* the samples as drawn */
    WEFT_EMB_PLACE_HERALD,
} weft_emb_placement;

typedef struct weft_emb_herald_params {
    uint64_t rows_per_gpu; /* 0: no cache */
    uint64_t staleness;    /* steps; 0: never stale; 1: no lag behind others' updates */
    weft_emb_policy policy;
    weft_emb_placement placement;
    uint32_t warm_steps; /* steps replayed before the measured one */
} weft_emb_herald_params;

typedef struct weft_emb_herald_result {
    weft_traffic forward;  /* the measured step's forward all-to-all */
    weft_traffic backward; /* its backward: gradients and hits' pushes */
    /* The same step without cache and with the drawn placement (what
     * weft_emb_acc counts; backward is its transpose). */
    weft_traffic forward_base;
    uint64_t lookups;                   /* of the measured step */
    uint64_t transfers_base, transfers; /* forward vectors between GPUs */
    uint64_t bytes_base, bytes;         /* forward bytes between GPUs */
    uint64_t bwd_bytes;                 /* backward bytes between GPUs */
    uint64_t remote;                    /* lookups of rows held by another GPU */
    uint64_t hits, stale, admitted;     /* of the remote lookups */
    bool placed;                        /* the Herald assignment was kept */
    uint64_t samples_moved;             /* samples it put on another GPU */
} weft_emb_herald_result;

/* w is checked; WEFT_EINVAL for a bad policy or placement, WEFT_ELIMIT
 * for a cache of more than 2^32 rows in all, WEFT_ENOMEM. out's matrices
 * are freed by weft_emb_herald_free. */
WEFT_API weft_err weft_emb_herald(const weft_emb_workload *w, const weft_emb_herald_params *p,
                                  weft_emb_herald_result *out, weft_diag *d);
WEFT_API void weft_emb_herald_free(weft_emb_herald_result *r);

#ifdef __cplusplus
}
#endif
#endif
