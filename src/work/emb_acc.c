/* The embedding accumulator (weft_emb_acc_*, weft/embedding.h).
 *
 * Table-wise, column-wise, dense row-wise and data-parallel tables do not
 * depend on which rows are looked up: their shares are added when the
 * accumulator is made. Only sparse row-wise tables read the lookups: a bag
 * (sample s, table t) adds D*E to entry (o, s/B) once for each block o that
 * holds one of its rows. Lookups come in order of samples, so "block o of
 * table t already counted for sample s" is one word per (table, block),
 * mark = s + 1: O(1) a lookup, O(N * row-wise tables) memory, no sorting
 * and no hashing.
 *
 * The generator's lookups (weft__emb_acc_add_drawn) come a bag at a time,
 * each bag once (sample, table, then its pooling lookups, as
 * weft_emb_generate documents): "block o already counted for this bag" is
 * then one word per block, stamp[o] = the bag's number. Those N words stay
 * in cache where the marks (one per table and block: 1 MB at 1,000 tables
 * and 128 GPUs) are read at random and missed about once a lookup: the
 * 128-GPU sparse row-wise step of bench/dlrm.c spent 0.2 CPU s there on
 * 8.2 M lookups. The same bags, the same blocks, the same sums.
 *
 * A whole row-wise table's bags (weft__emb_acc_table) follow the same
 * rule into a thread's own tally (its matrix, stamps and bag number), so
 * that tables can be counted on different threads and their integer sums
 * added after: emb_fwd.c. */
#include <inttypes.h>
#include <string.h>

#include "base/alloc.h"
#include "work/emb_internal.h"

__extension__ typedef unsigned __int128 u128;

struct weft_emb_acc {
    weft_emb_workload w; /* tables points at `tables` below */
    weft_emb_table *tables;
    weft_traffic fwd;
    uint64_t *block;   /* per table: ceil(R/N) rows a block (row-wise) */
    uint32_t *rw_slot; /* per table: index into mark / N, UINT32_MAX if none */
    uint64_t *mark;    /* per (sparse row-wise table, block): last sample + 1 */
    uint64_t *stamp;   /* per block: the number of the last drawn bag counted there */
    uint64_t bag;      /* drawn bags: the number of the current one (0: none yet) */
    uint64_t bag_s;    /* the current drawn bag's sample and table */
    uint32_t bag_t;
    uint64_t col, col_end; /* samples [col_end - batch, col_end) are GPU col's */
    uint64_t samples;      /* N*B */
    uint64_t last;         /* the sample of the last lookup */
    uint64_t lookups;
    uint64_t allreduce;
};

const weft_emb_workload *weft__emb_acc_workload(const weft_emb_acc *a)
{
    return &a->w;
}

void weft_emb_result_free(weft_emb_result *r)
{
    if (r)
        weft_traffic_free(&r->forward);
}

void weft_emb_acc_free(weft_emb_acc *a)
{
    if (!a)
        return;
    weft_traffic_free(&a->fwd);
    weft__free(a->mark);
    weft__free(a->stamp);
    weft__free(a->rw_slot);
    weft__free(a->block);
    weft__free(a->tables);
    weft__free(a);
}

/* Adds v to every entry of row i (GPU i sends v to every GPU). */
static void add_row(weft_traffic *m, uint32_t i, uint64_t v)
{
    uint64_t *row = m->bytes + (size_t)i * m->ranks;
    for (uint32_t j = 0; j < m->ranks; j++)
        row[j] += v;
}

/* The shares that do not depend on the lookups. */
static void add_fixed(weft_emb_acc *a)
{
    uint32_t n = a->w.gpus;
    uint64_t slot = 0, b = a->w.batch;
    for (uint32_t t = 0; t < a->w.ntables; t++) {
        const weft_emb_table *tb = &a->tables[t];
        uint64_t vec = (uint64_t)tb->dim * tb->dtype_bytes;
        switch (tb->sharding) {
        case WEFT_EMB_TW:
            add_row(&a->fwd, (uint32_t)(slot++ % n), b * vec);
            break;
        case WEFT_EMB_CW:
            for (uint32_t c = 0; c < tb->col_shards; c++) {
                uint64_t cols = tb->dim / tb->col_shards + (c < tb->dim % tb->col_shards);
                add_row(&a->fwd, (uint32_t)(slot++ % n), b * cols * tb->dtype_bytes);
            }
            break;
        case WEFT_EMB_RW:
            if (a->w.rw_dense)
                for (uint32_t o = 0; o < n; o++)
                    add_row(&a->fwd, o, b * vec);
            break;
        case WEFT_EMB_DP:
            a->allreduce += tb->rows * vec;
            break;
        }
    }
}

weft_err weft_emb_acc_new(const weft_emb_workload *w, weft_emb_acc **out, weft_diag *d)
{
    weft_err e = weft_emb_check(w, d);
    if (e)
        return e;
    uint32_t n = w->gpus, nt = w->ntables;
    weft_emb_acc *a = weft__calloc(1, sizeof *a);
    if (!a)
        return weft_diag_set(d, WEFT_ENOMEM, "out of memory for an embedding workload");
    a->w = *w;
    e = weft_traffic_new(n, &a->fwd, d);
    if (e)
        goto fail;
    a->tables = weft__malloc((size_t)nt * sizeof *a->tables);
    a->block = weft__malloc((size_t)nt * sizeof *a->block);
    a->rw_slot = weft__malloc((size_t)nt * sizeof *a->rw_slot);
    if (!a->tables || !a->block || !a->rw_slot)
        goto nomem;
    memcpy(a->tables, w->tables, (size_t)nt * sizeof *a->tables);
    a->w.tables = a->tables;
    uint32_t nrw = 0;
    for (uint32_t t = 0; t < nt; t++) {
        uint64_t rows = a->tables[t].rows;
        a->block[t] = rows / n + (rows % n != 0);
        bool sparse = a->tables[t].sharding == WEFT_EMB_RW && !w->rw_dense;
        a->rw_slot[t] = sparse ? nrw++ : UINT32_MAX;
    }
    if (nrw) {
        a->mark = weft__calloc((size_t)nrw * n, sizeof *a->mark);
        a->stamp = weft__calloc(n, sizeof *a->stamp);
        if (!a->mark || !a->stamp)
            goto nomem;
    }
    a->col_end = w->batch;
    a->samples = (uint64_t)n * w->batch;
    add_fixed(a);
    *out = a;
    return WEFT_OK;
nomem:
    e = weft_diag_set(
        d, WEFT_ENOMEM,
        "out of memory for an embedding workload of %" PRIu32 " tables on %" PRIu32 " GPUs", nt, n);
fail:
    weft_emb_acc_free(a);
    return e;
}

weft_err weft__emb_acc_add(weft_emb_acc *a, uint64_t s, uint32_t t, uint64_t r, emb_field *bad,
                           weft_diag *d)
{
    if (s >= a->samples) {
        *bad = EMB_FIELD_SAMPLE;
        return weft_diag_set(d, WEFT_EINVAL,
                             "sample %" PRIu64 " is beyond the batch: %" PRIu64 " samples (%" PRIu32
                             " GPUs x %" PRIu64 "), 0 to %" PRIu64,
                             s, a->samples, a->w.gpus, a->w.batch, a->samples - 1);
    }
    if (s < a->last) {
        *bad = EMB_FIELD_SAMPLE;
        return weft_diag_set(d, WEFT_EINVAL,
                             "sample %" PRIu64 " after sample %" PRIu64
                             ": lookups come in order of samples",
                             s, a->last);
    }
    if (t >= a->w.ntables) {
        *bad = EMB_FIELD_TABLE;
        return weft_diag_set(
            d, WEFT_EINVAL, "table %" PRIu32 ": the workload has %" PRIu32 " tables, 0 to %" PRIu32,
            t, a->w.ntables, a->w.ntables - 1);
    }
    const weft_emb_table *tb = &a->tables[t];
    if (r >= tb->rows) {
        *bad = EMB_FIELD_ROW;
        return weft_diag_set(d, WEFT_EINVAL,
                             "row %" PRIu64 " of table %" PRIu32 ": it has %" PRIu64
                             " rows, 0 to %" PRIu64,
                             r, t, tb->rows, tb->rows - 1);
    }
    a->last = s;
    a->lookups++;
    uint32_t slot = a->rw_slot[t];
    if (slot != UINT32_MAX) {
        uint32_t n = a->w.gpus;
        uint32_t o = (uint32_t)(r / a->block[t]);
        uint64_t *m = &a->mark[(size_t)slot * n + o];
        if (*m != s + 1) {
            *m = s + 1;
            a->fwd.bytes[(size_t)o * n + s / a->w.batch] += (uint64_t)tb->dim * tb->dtype_bytes;
        }
    }
    return WEFT_OK;
}

weft_err weft_emb_acc_add(weft_emb_acc *a, uint64_t s, uint32_t t, uint64_t r, weft_diag *d)
{
    emb_field bad;
    return weft__emb_acc_add(a, s, t, r, &bad, d);
}

uint32_t weft__emb_acc_add_drawn(weft_emb_acc *a, uint64_t s, uint32_t t, uint64_t r)
{
    const weft_emb_table *tb = &a->tables[t];
    a->last = s;
    a->lookups++;
    if (tb->sharding != WEFT_EMB_RW)
        return UINT32_MAX;
    uint32_t o = (uint32_t)(r / a->block[t]);
    if (a->rw_slot[t] == UINT32_MAX)
        return o;
    if (a->bag == 0 || s != a->bag_s || t != a->bag_t) {
        a->bag++;
        a->bag_s = s;
        a->bag_t = t;
        while (s >= a->col_end) { /* samples come in order: one step a GPU */
            a->col++;
            a->col_end += a->w.batch;
        }
    }
    if (a->stamp[o] != a->bag) {
        a->stamp[o] = a->bag;
        a->fwd.bytes[(size_t)o * a->w.gpus + a->col] += (uint64_t)tb->dim * tb->dtype_bytes;
    }
    return o;
}

void weft__emb_acc_table(const weft_emb_acc *a, uint32_t t, uint64_t s0, uint64_t ns,
                         const uint64_t *rows, weft__emb_tally *y)
{
    const weft_emb_table *tb = &a->tables[t];
    uint64_t vec = (uint64_t)tb->dim * tb->dtype_bytes, blk = a->block[t], B = a->w.batch;
    uint64_t recip = UINT64_MAX / blk;
    uint32_t P = tb->pooling;
    bool sparse = a->rw_slot[t] != UINT32_MAX;
    for (uint64_t s = s0; s < s0 + ns; s++, rows += P) {
        uint64_t bag = ++y->bag, *col = sparse ? y->fwd + s / B * y->g_step : NULL;
        for (uint32_t k = 0; k < P; k++) {
            /* rows[k] / blk without a division: for r < 2^40 the
             * quotient r * recip / 2^64 is short of r / blk by less than
             * 1, so one step up at most (Barrett, as emb_gen.c's rows). */
            uint64_t r = rows[k], q = (uint64_t)(((u128)r * recip) >> 64);
            q += r - q * blk >= blk;
            uint32_t o = (uint32_t)q;
            if (y->row_bytes)
                y->row_bytes[o] += vec;
            if (sparse) { /* without a branch: whether o is new is a coin */
                uint64_t fresh = y->stamp[o] != bag;
                y->stamp[o] = bag;
                col[o * y->o_step] += vec & (0 - fresh);
            }
        }
    }
}

uint64_t *weft__emb_acc_matrix(weft_emb_acc *a)
{
    return a->fwd.bytes;
}

void weft__emb_acc_count(weft_emb_acc *a, uint64_t lookups)
{
    a->lookups += lookups;
}

weft_err weft_emb_acc_finish(weft_emb_acc *a, weft_emb_result *out, weft_diag *d)
{
    if (!a->fwd.bytes)
        return weft_diag_set(d, WEFT_EINVAL, "the embedding accumulator was already finished");
    out->forward = a->fwd;
    a->fwd.bytes = NULL;
    out->lookups = a->lookups;
    out->allreduce_bytes = a->allreduce;
    return WEFT_OK;
}
