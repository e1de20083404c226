/* Embedding workloads (weft/embedding.h): the files and their order.
 *
 * emb_check (names, limits, placement) < emb_acc (the accumulator:
 * closed-form shares and the row-wise bags), emb_cache (the cache model)
 * < emb_gen (the zipf sampler, the generator, the trace writer) and
 * emb_trace (the trace reader), which do not call each other, <
 * emb_fwd (the forward matrix: the row-wise tables drawn with emb_gen and
 * counted with emb_acc on threads), emb_herald (Herald in a step: caches,
 * synchronisation, placement; it draws with emb_gen and counts the plain
 * step with emb_acc). */
#ifndef WEFT_WORK_EMB_INTERNAL_H
#define WEFT_WORK_EMB_INTERNAL_H

#include <stdint.h>

#include "weft/embedding.h"

/* Which field of a lookup weft__emb_acc_add refused. */
typedef enum emb_field {
    EMB_FIELD_SAMPLE,
    EMB_FIELD_TABLE,
    EMB_FIELD_ROW,
} emb_field;

/* weft_emb_acc_add that also says which field was refused (*bad, written
 * only on failure), so the trace reader can name its column. */
weft_err weft__emb_acc_add(weft_emb_acc *a, uint64_t s, uint32_t t, uint64_t r, emb_field *bad,
                           weft_diag *d);

/* weft_emb_acc_add for lookups in the generator's order (weft_emb_generate:
 * samples in order, each (sample, table) bag's lookups together and once)
 * and in range, unchecked; the same matrix. An accumulator takes these or
 * weft_emb_acc_add's, not both. Returns the GPU that holds row r when
 * table t is row-wise (dense or sparse), else UINT32_MAX. */
uint32_t weft__emb_acc_add_drawn(weft_emb_acc *a, uint64_t s, uint32_t t, uint64_t r);

/* A thread's counts of whole row-wise tables' bags (weft__emb_acc_table),
 * owned by the caller: fwd an N x N matrix whose entry (sender o,
 * receiver g) is fwd[o * o_step + g * g_step] (NULL when no table is
 * sparse row-wise), row_bytes per GPU (NULL: not counted), stamp N words
 * of scratch and bag, all zero at first; then one thread's alone. With
 * o_step 1 and g_step N a bag's entries are one column's N words, where
 * the forward matrix's (o_step N) are N words N apart, which share few
 * sets of a cache (at N = 128, 4 of L1's 64). */
typedef struct weft__emb_tally {
    uint64_t *fwd;
    size_t o_step, g_step;
    uint64_t *row_bytes;
    uint64_t *stamp;
    uint64_t bag;
} weft__emb_tally;

/* Adds the bags of samples [s0, s0 + ns) of row-wise table t, rows their
 * ns * pooling[t] lookups in the generator's order (sample by sample, each
 * bag's lookups together), to y: what weft__emb_acc_add_drawn adds to the
 * matrix for them (a sparse table's bag adds D*E to (o, s / B) once for
 * each block o that holds one of its rows) to y->fwd, and D*E for each
 * lookup to y->row_bytes[its owner]. Reads a alone (different threads may
 * count tables at once, each into its own tally); counts no lookups
 * (weft__emb_acc_count). O(ns * pooling[t]). */
void weft__emb_acc_table(const weft_emb_acc *a, uint32_t t, uint64_t s0, uint64_t ns,
                         const uint64_t *rows, weft__emb_tally *y);

/* The matrix an accumulator is building (N x N, entry (i, j) at i * N +
 * j), for tallies to be added to; NULL once finished. */
uint64_t *weft__emb_acc_matrix(weft_emb_acc *a);

/* Adds lookups counted elsewhere to the accumulator's count. */
void weft__emb_acc_count(weft_emb_acc *a, uint64_t lookups);

/* Draws the step's lookups of a's row-wise tables (as weft_emb_generate
 * would: each table's own generator) table by table on weft__par_for's
 * threads, and adds to a what weft__emb_acc_add_drawn adds for all of
 * weft_emb_generate's lookups (every table's lookups counted, the sparse
 * row-wise tables' bags in the matrix), and to row_bytes[o] (NULL: not
 * counted) D*E for each row-wise lookup of a row GPU o holds. The same
 * sums at any number of threads. a has had no lookups, and takes no
 * others (then weft_emb_acc_finish). Scratch: a chunk of draws a thread,
 * and with sparse tables an N x N matrix a thread, at most 64 MiB in all
 * (fewer threads where N is large; beyond 2,896 GPUs one thread and no
 * matrix). In emb_fwd.c. */
weft_err weft__emb_acc_draw_rw(weft_emb_acc *a, uint64_t *row_bytes, weft_diag *d);

/* The round-robin slot of each table-wise table and of each column-wise
 * table's first shard (slot u is GPU u mod N); other tables get 0. */
void weft__emb_slots(const weft_emb_workload *w, uint64_t *first_slot);

/* The generator's draws table by table: table t's rows come in the order
 * of its lookups in weft_emb_generate_steps (sample by sample, each bag's
 * pooling lookups in turn), continuing where its last call stopped, so
 * nb * pooling[t] rows a step give that step's lookups of t. Each table
 * has its own generator: tables may be drawn from different threads, one
 * table from one thread at a time. The workload's tables must outlive it
 * (weft_emb_check'ed by the caller). */
typedef struct weft__emb_draws weft__emb_draws;
weft_err weft__emb_draws_new(const weft_emb_workload *w, weft__emb_draws **out, weft_diag *d);
void weft__emb_draws_free(weft__emb_draws *ds);
void weft__emb_draws_table(weft__emb_draws *ds, uint32_t t, uint64_t n, uint64_t *out);

/* The accumulator's copy of the workload. */
const weft_emb_workload *weft__emb_acc_workload(const weft_emb_acc *a);

#endif
