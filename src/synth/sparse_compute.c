/* The compute of the compressed and sparse collectives, placed in their
 * plans as compute ops (weft/plan.h, weft_compute; docs/compression.md,
 * "Compute in the plans").
 *
 * A two-shot plan (quant-2shot, sparse-hash, sparse-range, and the rails of
 * hier-quant) has, for every rank r, the copies it sends to owners (into
 * their scratch: phase 1), the copies it receives as an owner, the copies
 * it sends back as an owner (into the ranks' in: phase 2) and those it
 * receives back. The runtime (src/run/coll_sparse.c, coll_quant.c) runs
 * one thread a rank, so r's compute ops form one chain, in the order the
 * runtime runs them:
 *
 *   sparse (pairs; bytes are the pairs' bytes, the op sizes of the copies)
 *     hash       r's pairs of every part (those it sends and its own part),
 *                before any of its phase-1 copies leaves;
 *     aggregate  the pairs of each sender s (r's own included), in rank
 *                order, each after s's copy has arrived;
 *     compress   r's union (the owner turns its sums back into pairs:
 *                each summed position's index, the inverse bijection,
 *                packed with its sum), before any of its phase-2 copies
 *                leaves;
 *     fill       the dense output (its dense bytes), right after
 *                compress (the runtime zeroes it once its union's copies
 *                are posted, while they and the others' are on their way);
 *     decompress r's own union (scattered into the output) next, then
 *                each other owner j's, in rank order, after j's copy
 *                arrived;
 *   quantized (bytes are the dense bytes of the chunks, elements x element
 *   bytes, what the kernels read or write)
 *     compress   the chunks r sends, before any of its phase-1 copies;
 *     decompress + aggregate  each received chunk in rank order (r's own
 *                chunk aggregated only: it never crossed a wire);
 *     compress + decompress   r's sum (the runtime keeps the decompressed
 *                sum as its own output), before its phase-2 copies;
 *     decompress each chunk received back, in rank order.
 * sparse-ag's all-reduce has phase 1 only: every rank aggregates the
 * others' pairs in rank order, each after it arrived.
 *
 * Compute ops are appended after the plan's data ops, so every data op
 * keeps its id; they become deps of the copies they prepare, and, for
 * hier-quant, of everything the rank sends after the rails (the box
 * all-gather forwards decompressed blocks) and they wait for everything
 * the rank received before (the box reduce-scatter's block). */
#include <stdlib.h>

#include "base/alloc.h"
#include "synth/sparse.h"

weft_err weft__sparse_note(uint64_t **b, size_t *cap, uint32_t id, uint64_t bytes)
{
    if (id >= *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        while (nc <= id)
            nc *= 2;
        uint64_t *x = weft__realloc(*b, nc * sizeof *x);
        if (!x)
            return WEFT_ENOMEM;
        *b = x;
        *cap = nc;
    }
    (*b)[id] = bytes;
    return WEFT_OK;
}

typedef struct xfer {
    uint32_t rank;  /* the rank whose list this is */
    uint32_t phase; /* 0: sends to owners, 1: received as owner, 2: sent back, 3: received back */
    uint32_t peer;  /* the other end */
    uint32_t id;
} xfer;

static int xfer_cmp(const void *a, const void *b)
{
    const xfer *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->phase != y->phase)
        return x->phase < y->phase ? -1 : 1;
    if (x->peer != y->peer)
        return x->peer < y->peer ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

typedef struct place {
    weft_plan *p;
    const weft__sparse_compute *s;
    uint64_t **b;
    size_t *cap;
    uint32_t prev; /* the rank's last compute op, WEFT_PLAN_NO_OP before its first */
    weft_diag *d;
} place;

/* Appends a dep on `dep` to op id. */
static weft_err add_dep(weft_plan *p, uint32_t id, uint32_t dep)
{
    uint32_t nd;
    const uint32_t *old = weft_plan_op_deps(p, id, &nd);
    uint32_t *deps = weft__malloc(((size_t)nd + 1) * sizeof *deps);
    if (!deps)
        return WEFT_ENOMEM;
    for (uint32_t k = 0; k < nd; k++)
        deps[k] = old[k];
    deps[nd] = dep;
    weft_err e = weft_plan_set_deps(p, id, deps, nd + 1);
    weft__free(deps);
    return e;
}

/* Appends compute c of `bytes` on rank r after the rank's previous one and
 * after op `after` (WEFT_PLAN_NO_OP: none). */
static weft_err compute(place *pl, uint32_t r, weft_compute c, uint64_t bytes, uint32_t after)
{
    uint32_t deps[2], nd = 0, id;
    if (pl->prev != WEFT_PLAN_NO_OP)
        deps[nd++] = pl->prev;
    if (after != WEFT_PLAN_NO_OP)
        deps[nd++] = after;
    weft_err e = weft_plan_add_compute(pl->p, (weft_rank){r}, c, deps, nd, &id);
    if (e == WEFT_ELIMIT)
        return weft_diag_set(pl->d, e, "the plan's compute ops pass its op limit");
    if (!e)
        e = weft__sparse_note(pl->b, pl->cap, id, bytes);
    if (e)
        return weft_diag_code(pl->d, e);
    pl->prev = id;
    return WEFT_OK;
}

/* The dense bytes of the chunk op id moves (quantized plans). */
static uint64_t dense_of(const place *pl, uint32_t id)
{
    weft_op op = weft_plan_op(pl->p, id);
    return op.src_index < pl->s->nchunks ? pl->s->chunk_dense[op.src_index] : 0;
}

/* The bytes noted for op id. Read through pl->b every time: compute()
 * appends to that array, which may move it (a pointer kept across a
 * compute() call would read freed memory). */
static uint64_t noted(const place *pl, uint32_t id)
{
    return (*pl->b)[id];
}

/* Rank r's chain; x[0 .. n) its transfers, sorted (phase, peer). */
static weft_err rank_chain(place *pl, uint32_t r, const xfer *x, size_t n)
{
    const weft__sparse_compute *s = pl->s;
    weft_plan *p = pl->p;
    size_t ph[5] = {0};
    for (size_t i = 0; i < n; i++)
        ph[x[i].phase + 1] = i + 1;
    for (int k = 1; k < 5; k++)
        ph[k] = ph[k] > ph[k - 1] ? ph[k] : ph[k - 1];
    /* ph[k] .. ph[k + 1]: the transfers of phase k. */
    const xfer *send1 = x + ph[0], *recv1 = x + ph[1], *send2 = x + ph[2], *recv2 = x + ph[3];
    size_t nsend1 = ph[1] - ph[0], nrecv1 = ph[2] - ph[1], nsend2 = ph[3] - ph[2],
           nrecv2 = ph[4] - ph[3];
    weft_err e = WEFT_OK;
    pl->prev = WEFT_PLAN_NO_OP;
    /* What r holds before the rails (hier-quant's box phase). */
    for (uint32_t id = 0; id < s->lo && !e; id++) {
        weft_op op = weft_plan_op(p, id);
        if (op.dst_rank.v == r && op.kind != WEFT_OP_NOP)
            pl->prev = id; /* the last: ops of a rank's block come in order */
    }
    uint32_t before = pl->prev;
    pl->prev = WEFT_PLAN_NO_OP;
    /* The owner's own chunk (quantized) or its own part's pairs (sparse):
     * as any sender's copy to it. */
    uint64_t own = nrecv1 ? (s->quant ? dense_of(pl, recv1[0].id) : noted(pl, recv1[0].id)) : 0;
    if (nsend1 && !s->gather) {
        uint64_t sum = s->quant ? 0 : own;
        for (size_t i = 0; i < nsend1; i++)
            sum += s->quant ? dense_of(pl, send1[i].id) : noted(pl, send1[i].id);
        if ((e = compute(pl, r, s->quant ? WEFT_COMPUTE_COMPRESS : WEFT_COMPUTE_HASH, sum, before)))
            return e;
        for (size_t i = 0; i < nsend1 && !e; i++)
            e = add_dep(p, send1[i].id, pl->prev);
        if (e)
            return weft_diag_code(pl->d, e);
    }
    /* The owner's sums, in rank order, its own part at its place. */
    bool own_done = s->gather || !nrecv1;
    for (size_t i = 0; i <= nrecv1 && !e; i++) {
        if (!own_done && (i == nrecv1 || recv1[i].peer > r)) {
            own_done = true;
            e = compute(pl, r, WEFT_COMPUTE_AGGREGATE, own, WEFT_PLAN_NO_OP);
        }
        if (i == nrecv1 || e)
            continue;
        uint32_t id = recv1[i].id;
        if (s->quant) {
            if (!(e = compute(pl, r, WEFT_COMPUTE_DECOMPRESS, dense_of(pl, id), id)))
                e = compute(pl, r, WEFT_COMPUTE_AGGREGATE, dense_of(pl, id), WEFT_PLAN_NO_OP);
        } else {
            e = compute(pl, r, WEFT_COMPUTE_AGGREGATE, noted(pl, id), id);
        }
    }
    if (e)
        return e;
    if (nsend2) {
        if (s->quant) {
            uint64_t mine = dense_of(pl, send2[0].id);
            if (!(e = compute(pl, r, WEFT_COMPUTE_COMPRESS, mine, WEFT_PLAN_NO_OP)))
                e = compute(pl, r, WEFT_COMPUTE_DECOMPRESS, mine, WEFT_PLAN_NO_OP);
        } else {
            e = compute(pl, r, WEFT_COMPUTE_COMPRESS, noted(pl, send2[0].id), WEFT_PLAN_NO_OP);
        }
        for (size_t i = 0; i < nsend2 && !e; i++)
            if ((e = add_dep(p, send2[i].id, pl->prev)))
                weft_diag_code(pl->d, e);
        if (e)
            return e;
    }
    /* Sparse: the fill and r's own union at once (the others' are on
     * their way); then back from the owners, in rank order. */
    if (!s->quant && (nrecv2 || nsend2)) {
        e = compute(pl, r, WEFT_COMPUTE_FILL, s->dense_bytes, WEFT_PLAN_NO_OP);
        if (!e && nsend2)
            e = compute(pl, r, WEFT_COMPUTE_DECOMPRESS, noted(pl, send2[0].id), WEFT_PLAN_NO_OP);
    }
    for (size_t i = 0; i < nrecv2 && !e; i++) {
        uint32_t id = recv2[i].id;
        e = compute(pl, r, WEFT_COMPUTE_DECOMPRESS, s->quant ? dense_of(pl, id) : noted(pl, id),
                    id);
    }
    if (e)
        return e;
    /* What r sends after the rails waits for its last compute. */
    for (uint32_t id = s->hi; id < s->data_ops && pl->prev != WEFT_PLAN_NO_OP && !e; id++) {
        weft_op op = weft_plan_op(p, id);
        if (op.kind != WEFT_OP_NOP && op.src_rank.v == r && (e = add_dep(p, id, pl->prev)))
            weft_diag_code(pl->d, e);
    }
    return e;
}

weft_err weft__sparse_place_compute(weft_plan *p, const weft__sparse_compute *s, uint64_t **b,
                                    size_t *cap, weft_diag *d)
{
    size_t n = 0;
    xfer *x = weft__malloc(((size_t)(s->hi - s->lo) * 2 + 1) * sizeof *x);
    if (!x)
        return weft_diag_code(d, WEFT_ENOMEM);
    for (uint32_t id = s->lo; id < s->hi; id++) {
        weft_op op = weft_plan_op(p, id);
        if (op.kind != WEFT_OP_COPY || op.src_rank.v == op.dst_rank.v)
            continue;
        uint32_t phase = op.dst_buf == WEFT_BUF_SCRATCH ? 0 : 2;
        x[n++] = (xfer){op.src_rank.v, phase, op.dst_rank.v, id};
        x[n++] = (xfer){op.dst_rank.v, phase + 1, op.src_rank.v, id};
    }
    qsort(x, n, sizeof *x, xfer_cmp);
    place pl = {p, s, b, cap, WEFT_PLAN_NO_OP, d};
    weft_err e = WEFT_OK;
    for (size_t i = 0; i < n && !e;) {
        size_t j = i;
        while (j < n && x[j].rank == x[i].rank)
            j++;
        e = rank_chain(&pl, x[i].rank, x + i, j - i);
        i = j;
    }
    weft__free(x);
    return e;
}
