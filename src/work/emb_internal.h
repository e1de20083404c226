/* Embedding workloads (weft/embedding.h): the files and their order.
 *
 * emb_check (names, limits, placement) < emb_acc (the accumulator:
 * closed-form shares and the row-wise bags), emb_cache (the cache model)
 * < emb_gen (the zipf sampler, the generator, the trace writer) and
 * emb_trace (the trace reader), which do not call each other, <
 * emb_herald (Herald in a step: caches, synchronisation, placement; it
 * draws with emb_gen and counts the plain step with emb_acc). */
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
