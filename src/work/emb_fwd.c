/* The forward matrix of the generator's lookups (weft_emb_forward) and
 * the row-wise tables' lookups drawn and counted on threads
 * (weft__emb_acc_draw_rw, which the DLRM step also calls for its row
 * bytes).
 *
 * Only row-wise tables need their rows: each is one weft__par_for item,
 * drawn with its own generator (weft__emb_draws_table) a chunk of samples
 * at a time into its thread's buffer and counted into its thread's tally
 * (weft__emb_acc_table: a matrix by column, per-GPU row bytes, the bag
 * stamps), added after to the accumulator's matrix and the caller's row
 * bytes, thread by thread (the first thread's row bytes are the caller's
 * themselves). Every sum is of integers, so the bytes do not depend on
 * which thread counted which table, nor on how many there were. At 128
 * GPUs a thread's matrix is 128 KiB; at thousands of GPUs it is many MiB,
 * and the threads are fewer (SCRATCH_BYTES), down to one counting into
 * the accumulator's matrix itself, rather than the memory larger. */
#include <inttypes.h>
#include <string.h>

#include "base/alloc.h"
#include "base/par.h"
#include "work/emb_internal.h"

/* Rows drawn at a time into a thread's buffer (64 KiB: in L2 while they
 * are counted), or one bag's where it has more. */
#define CHUNK_ROWS 8192

/* The most bytes of the threads' matrices together (N^2 words each). */
#define SCRATCH_BYTES ((size_t)64 << 20)

/* Bytes before and after what one thread writes where the next bytes
 * may be another thread's: a cache line apart, none is shared (two
 * threads writing one line take it from each other at every write). */
#define LINE_PAD 64
#define LINE_WORDS (LINE_PAD / sizeof(uint64_t))

typedef struct fwd_worker {
    char before[LINE_PAD];
    weft__emb_tally y;
    uint64_t *rows; /* a chunk's draws */
    uint64_t *mem;  /* the allocation of rows and the tally's arrays */
    char after[LINE_PAD];
} fwd_worker;

typedef struct fwd_run {
    weft_emb_acc *a;
    const weft_emb_workload *w;
    weft__emb_draws *draws;
    uint32_t *items; /* the row-wise tables with lookups */
    fwd_worker *wk;
} fwd_run;

/* Samples a chunk of table t holds. */
static uint64_t chunk_samples(const weft_emb_table *tb)
{
    return tb->pooling >= CHUNK_ROWS ? 1 : CHUNK_ROWS / tb->pooling;
}

/* Table items[i]'s lookups of the step, drawn and counted (a
 * weft__par_for item). */
static weft_err fwd_table(void *ctx, size_t i, unsigned worker)
{
    fwd_run *fr = ctx;
    fwd_worker *wk = &fr->wk[worker];
    uint32_t t = fr->items[i];
    const weft_emb_table *tb = &fr->w->tables[t];
    uint64_t nb = (uint64_t)fr->w->gpus * fr->w->batch, step = chunk_samples(tb);
    for (uint64_t s0 = 0; s0 < nb; s0 += step) {
        uint64_t ns = nb - s0 < step ? nb - s0 : step;
        weft__emb_draws_table(fr->draws, t, ns * tb->pooling, wk->rows);
        weft__emb_acc_table(fr->a, t, s0, ns, wk->rows, &wk->y);
    }
    return WEFT_OK;
}

static void workers_free(fwd_worker *wk, unsigned n)
{
    for (unsigned i = 0; wk && i < n; i++)
        weft__free(wk[i].mem);
    weft__free(wk);
}

/* A worker's buffer and tally: [pad][rows][stamp][row_bytes][fwd][pad],
 * zeroed. row_bytes and matrix (row-major) are the caller's where not
 * NULL; else the tally has its own (a matrix column-major). */
static bool worker_init(fwd_worker *wk, size_t nrows, uint32_t n, bool sparse, uint64_t *matrix,
                        bool count_rb, uint64_t *row_bytes)
{
    bool own_rb = count_rb && !row_bytes, own_fwd = sparse && !matrix;
    size_t words =
        LINE_WORDS + nrows + n + (own_rb ? n : 0) + (own_fwd ? (size_t)n * n : 0) + LINE_WORDS;
    wk->mem = weft__calloc(words, sizeof *wk->mem);
    if (!wk->mem)
        return false;
    uint64_t *p = wk->mem + LINE_WORDS;
    wk->rows = p;
    p += nrows;
    wk->y.stamp = p;
    p += n;
    wk->y.row_bytes = own_rb ? p : row_bytes;
    p += own_rb ? n : 0;
    wk->y.fwd = own_fwd ? p : sparse ? matrix : NULL;
    wk->y.o_step = own_fwd ? 1 : n;
    wk->y.g_step = own_fwd ? n : 1;
    wk->y.bag = 0;
    return true;
}

/* Adds the column-major n x n matrix by to the row-major m, in tiles of
 * TILE x TILE (by's column and m's row of a tile stay cached, where a
 * whole column of by is n lines at thousands of GPUs). */
#define TILE 64
static void add_transposed(uint64_t *m, const uint64_t *by, uint32_t n)
{
    for (uint32_t o0 = 0; o0 < n; o0 += TILE)
        for (uint32_t g0 = 0; g0 < n; g0 += TILE) {
            uint32_t o1 = n - o0 < TILE ? n : o0 + TILE, g1 = n - g0 < TILE ? n : g0 + TILE;
            for (uint32_t o = o0; o < o1; o++)
                for (uint32_t g = g0; g < g1; g++)
                    m[(size_t)o * n + g] += by[(size_t)g * n + o];
        }
}

weft_err weft__emb_acc_draw_rw(weft_emb_acc *a, uint64_t *row_bytes, weft_diag *d)
{
    const weft_emb_workload *w = weft__emb_acc_workload(a);
    uint32_t n = w->gpus;
    uint64_t pooled = 0;
    size_t nitems = 0, nrows = 1;
    bool sparse = false;
    for (uint32_t t = 0; t < w->ntables; t++) {
        const weft_emb_table *tb = &w->tables[t];
        pooled += tb->pooling;
        if (tb->sharding != WEFT_EMB_RW || !tb->pooling)
            continue;
        nitems++;
        sparse |= !w->rw_dense;
        size_t r = (size_t)chunk_samples(tb) * tb->pooling;
        nrows = r > nrows ? r : nrows;
    }
    /* weft__emb_acc_add_drawn counts every lookup of the generator's. */
    uint64_t lookups = (uint64_t)n * w->batch * pooled;
    if (!nitems || (!sparse && !row_bytes)) {
        weft__emb_acc_count(a, lookups);
        return WEFT_OK;
    }
    /* A matrix a thread where SCRATCH_BYTES hold them, else one thread
     * counting into the accumulator's. */
    unsigned nw = weft__par_workers(nitems);
    size_t own = SCRATCH_BYTES / ((size_t)n * n * sizeof(uint64_t));
    if (sparse && nw > own)
        nw = own ? (unsigned)own : 1;
    bool direct = sparse && !own;
    fwd_run fr = {a, w, NULL, NULL, NULL};
    weft_err e = weft__emb_draws_new(w, &fr.draws, d);
    if (e)
        return e;
    fr.items = weft__malloc(nitems * sizeof *fr.items);
    fr.wk = weft__calloc(nw, sizeof *fr.wk);
    if (!fr.items || !fr.wk)
        goto nomem;
    uint64_t *matrix = weft__emb_acc_matrix(a);
    for (unsigned i = 0; i < nw; i++)
        if (!worker_init(&fr.wk[i], nrows, n, sparse, direct ? matrix : NULL, row_bytes != NULL,
                         i ? NULL : row_bytes))
            goto nomem;
    nitems = 0;
    for (uint32_t t = 0; t < w->ntables; t++)
        if (w->tables[t].sharding == WEFT_EMB_RW && w->tables[t].pooling)
            fr.items[nitems++] = t;
    e = weft__par_for(nitems, nw, fwd_table, &fr);
    /* The threads' integer sums, thread by thread. */
    for (unsigned i = 0; !e && i < nw; i++) {
        const weft__emb_tally *y = &fr.wk[i].y;
        if (y->fwd && y->fwd != matrix)
            add_transposed(matrix, y->fwd, n);
        if (y->row_bytes && y->row_bytes != row_bytes)
            for (uint32_t o = 0; o < n; o++)
                row_bytes[o] += y->row_bytes[o];
    }
    if (!e)
        weft__emb_acc_count(a, lookups);
    goto done;
nomem:
    e = weft_diag_set(d, WEFT_ENOMEM,
                      "out of memory for the row-wise lookups of %" PRIu32 " GPUs on %u threads", n,
                      nw);
done:
    workers_free(fr.wk, nw);
    weft__free(fr.items);
    weft__emb_draws_free(fr.draws);
    return e;
}

weft_err weft_emb_forward(const weft_emb_workload *w, weft_emb_result *out, weft_diag *d)
{
    weft_emb_acc *a;
    weft_err e = weft_emb_acc_new(w, &a, d);
    if (e)
        return e;
    /* Only sparse row-wise tables' lookups change the matrix; without
     * one, the lookups are counted, not drawn. */
    if (!(e = weft__emb_acc_draw_rw(a, NULL, d)))
        e = weft_emb_acc_finish(a, out, d);
    weft_emb_acc_free(a);
    return e;
}
