/* Embedding workloads: sharding names and the check of a workload's
 * limits (weft/embedding.h). */
#include <inttypes.h>

#include "work/emb_internal.h"

__extension__ typedef unsigned __int128 u128;

const char *weft_emb_sharding_name(weft_emb_sharding s)
{
    switch (s) {
    case WEFT_EMB_TW:
        return "tw";
    case WEFT_EMB_RW:
        return "rw";
    case WEFT_EMB_CW:
        return "cw";
    case WEFT_EMB_DP:
        return "dp";
    }
    return "?";
}

static weft_err check_table(const weft_emb_table *tb, uint32_t t, weft_diag *d)
{
    if (tb->rows == 0 || tb->rows > WEFT_EMB_MAX_ROWS)
        return weft_diag_set(d, WEFT_EINVAL,
                             "table %" PRIu32 ": rows %" PRIu64 ": must be 1 to 2^40", t, tb->rows);
    if (tb->dim == 0 || tb->dim > WEFT_EMB_MAX_DIM)
        return weft_diag_set(d, WEFT_EINVAL, "table %" PRIu32 ": dim %" PRIu32 ": must be 1 to %u",
                             t, tb->dim, WEFT_EMB_MAX_DIM);
    if (tb->pooling > WEFT_EMB_MAX_POOLING)
        return weft_diag_set(d, WEFT_EINVAL,
                             "table %" PRIu32 ": pooling %" PRIu32 ": must be 0 to %u", t,
                             tb->pooling, WEFT_EMB_MAX_POOLING);
    if (tb->dtype_bytes == 0 || tb->dtype_bytes > 8)
        return weft_diag_set(d, WEFT_EINVAL,
                             "table %" PRIu32 ": dtype of %" PRIu32 " bytes: must be 1 to 8", t,
                             tb->dtype_bytes);
    if (tb->zipf_milli > 8000)
        return weft_diag_set(d, WEFT_EINVAL,
                             "table %" PRIu32 ": zipf exponent %" PRIu32 ".%03" PRIu32
                             ": must be at most 8",
                             t, tb->zipf_milli / 1000, tb->zipf_milli % 1000);
    if (tb->zipf_milli && tb->rows > WEFT_EMB_MAX_ZIPF_ROWS)
        return weft_diag_set(d, WEFT_ELIMIT,
                             "table %" PRIu32 ": a zipf law over %" PRIu64
                             " rows: the generator's limit is %llu rows (8 bytes a row; give a "
                             "trace instead)",
                             t, tb->rows, (unsigned long long)WEFT_EMB_MAX_ZIPF_ROWS);
    if ((unsigned)tb->sharding > WEFT_EMB_DP)
        return weft_diag_set(d, WEFT_EINVAL, "table %" PRIu32 ": unknown sharding %u", t,
                             (unsigned)tb->sharding);
    if (tb->sharding == WEFT_EMB_CW && (tb->col_shards == 0 || tb->col_shards > tb->dim))
        return weft_diag_set(d, WEFT_EINVAL,
                             "table %" PRIu32 ": %" PRIu32 " column shards of %" PRIu32
                             " columns: must be 1 to %" PRIu32,
                             t, tb->col_shards, tb->dim, tb->dim);
    return WEFT_OK;
}

weft_err weft_emb_check(const weft_emb_workload *w, weft_diag *d)
{
    if (w->gpus == 0 || w->gpus > WEFT_TRAFFIC_MAX_RANKS)
        return weft_diag_set(d, WEFT_EINVAL, "%" PRIu32 " GPUs: must be 1 to %u", w->gpus,
                             WEFT_TRAFFIC_MAX_RANKS);
    if (w->batch == 0)
        return weft_diag_set(d, WEFT_EINVAL, "a batch of 0 samples per GPU: must be at least 1");
    if (w->ntables == 0 || w->ntables > WEFT_EMB_MAX_TABLES || !w->tables)
        return weft_diag_set(d, WEFT_EINVAL, "%" PRIu32 " tables: must be 1 to %u", w->ntables,
                             WEFT_EMB_MAX_TABLES);
    /* The matrix's total is at most the sum over tables of B*D*E*N times
     * N (a dense row-wise table); the all-reduce, the sum of R*D*E. */
    u128 total = 0, ar = 0, lim = UINT64_MAX;
    if ((u128)w->batch * w->gpus > UINT64_MAX / 2)
        return weft_diag_set(d, WEFT_EOVERFLOW,
                             "%" PRIu32 " GPUs x %" PRIu64 " samples are too many samples", w->gpus,
                             w->batch);
    for (uint32_t t = 0; t < w->ntables; t++) {
        const weft_emb_table *tb = &w->tables[t];
        weft_err e = check_table(tb, t, d);
        if (e)
            return e;
        u128 vec = (u128)tb->dim * tb->dtype_bytes;
        if (tb->sharding == WEFT_EMB_DP)
            ar += (u128)tb->rows * vec;
        else if (total <= lim)
            total += (u128)w->batch * w->gpus * vec * (tb->sharding == WEFT_EMB_RW ? w->gpus : 1);
        if (total > lim || ar > lim)
            return weft_diag_set(d, WEFT_EOVERFLOW,
                                 "table %" PRIu32 ": the workload could move more than 2^64-1 "
                                 "bytes",
                                 t);
    }
    return WEFT_OK;
}

void weft__emb_slots(const weft_emb_workload *w, uint64_t *first_slot)
{
    uint64_t slot = 0;
    for (uint32_t t = 0; t < w->ntables; t++) {
        const weft_emb_table *tb = &w->tables[t];
        first_slot[t] = 0;
        if (tb->sharding == WEFT_EMB_TW)
            first_slot[t] = slot++;
        else if (tb->sharding == WEFT_EMB_CW) {
            first_slot[t] = slot;
            slot += tb->col_shards;
        }
    }
}
