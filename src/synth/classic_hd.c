/* Recursive halving-doubling (hd, Rabenseifner), recursive doubling (rd)
 * and Bruck.
 *
 * Ranks are placed at positions of the ring order, so the first steps
 * (partners 1, 2, ... positions apart) stay inside a host. Rank counts that
 * are not powers of two use the usual folding: with P the largest power of
 * two <= N and r = N - P, position P+i first hands its data to position i
 * (i < r), the P positions run the power-of-two algorithm, and position i
 * finally hands the result back to P+i. So position i < r stands for two
 * positions' chunks during the power-of-two part.
 */
#include "base/alloc.h"
#include "synth/classic_internal.h"

static uint32_t pow2_floor(uint32_t n)
{
    uint32_t p = 1;
    while (p <= n / 2)
        p *= 2;
    return p;
}

/* Slot of position q's own chunk (allgather, reduce-scatter: one chunk per
 * rank, so the chunk id is the rank). */
#define OWN(q) (c->order[(q)])

/* For allgather/reduce-scatter: emits op on every chunk of the virtual
 * positions [lo, lo+len) (each one or, for w < r, two positions) from
 * position `from` to position `to`. */
static weft_err move_block(synth_emit *e, const synth_ctx *c, uint32_t P, uint32_t lo, uint32_t len,
                           uint32_t from, uint32_t to, bool reduce)
{
    weft_buf buf = synth_main_buf(c->coll);
    uint32_t r = c->n - P;
    for (uint32_t w = lo; w < lo + len; w++) {
        for (uint32_t k = 0; k < (w < r ? 2u : 1u); k++) {
            uint32_t q = k ? P + w : w;
            weft_err err =
                reduce ? synth_reduce(e, c->order[from], c->order[to], buf, OWN(q), 1, 0, NULL)
                       : synth_copy(e, c->order[from], c->order[to], buf, OWN(q), 1, 0, NULL);
            if (err)
                return err;
        }
    }
    return WEFT_OK;
}

static weft_err hd_allgather(synth_emit *e, const synth_ctx *c)
{
    uint32_t n = c->n, P = pow2_floor(n), r = n - P;
    weft_err err = WEFT_OK;
    for (uint32_t i = 0; i < r && !err; i++)
        err = synth_copy(e, c->order[P + i], c->order[i], WEFT_BUF_OUT, OWN(P + i), 1, 0, NULL);
    for (uint32_t mask = 1; mask < P && !err; mask <<= 1) {
        for (uint32_t w = 0; w < P && !err; w++)
            err = move_block(e, c, P, w & ~(mask - 1), mask, w, w ^ mask, false);
    }
    for (uint32_t i = 0; i < r && !err; i++) {
        for (uint32_t q = 0; q < n && !err; q++) {
            if (q != P + i)
                err = synth_copy(e, c->order[i], c->order[P + i], WEFT_BUF_OUT, OWN(q), 1, 0, NULL);
        }
    }
    return err;
}

static weft_err hd_reducescatter(synth_emit *e, const synth_ctx *c)
{
    uint32_t n = c->n, P = pow2_floor(n), r = n - P;
    weft_err err = WEFT_OK;
    for (uint32_t i = 0; i < r && !err; i++) {
        for (uint32_t q = 0; q < n && !err; q++)
            err = synth_reduce(e, c->order[P + i], c->order[i], WEFT_BUF_IN, OWN(q), 1, 0, NULL);
    }
    for (uint32_t mask = P / 2; mask >= 1 && !err; mask >>= 1) {
        for (uint32_t w = 0; w < P && !err; w++) {
            uint32_t base = w & ~(2 * mask - 1);
            uint32_t other = base + ((w & mask) ? 0 : mask);
            err = move_block(e, c, P, other, mask, w, w ^ mask, true);
        }
    }
    for (uint32_t i = 0; i < r && !err; i++)
        err = synth_copy(e, c->order[i], c->order[P + i], WEFT_BUF_IN, OWN(P + i), 1, 0, NULL);
    return err;
}

/* Rabenseifner: P chunks; chunk w ends reduced at virtual position w, then
 * is gathered back by doubling. Blocks of chunks are contiguous, so every
 * step is one op per pair and direction. */
static weft_err rabenseifner(synth_emit *e, const synth_ctx *c)
{
    uint32_t n = c->n, P = pow2_floor(n), r = n - P;
    weft_err err = WEFT_OK;
    for (uint32_t i = 0; i < r && !err; i++)
        err = synth_reduce(e, c->order[P + i], c->order[i], WEFT_BUF_OUT, 0, P, 0, NULL);
    for (uint32_t mask = P / 2; mask >= 1 && !err; mask >>= 1) {
        for (uint32_t w = 0; w < P && !err; w++) {
            uint32_t base = w & ~(2 * mask - 1);
            uint32_t other = base + ((w & mask) ? 0 : mask);
            err = synth_reduce(e, c->order[w], c->order[w ^ mask], WEFT_BUF_OUT, other, mask, 0,
                               NULL);
        }
    }
    for (uint32_t mask = 1; mask < P && !err; mask <<= 1) {
        for (uint32_t w = 0; w < P && !err; w++)
            err = synth_copy(e, c->order[w], c->order[w ^ mask], WEFT_BUF_OUT, w & ~(mask - 1),
                             mask, 0, NULL);
    }
    for (uint32_t i = 0; i < r && !err; i++)
        err = synth_copy(e, c->order[i], c->order[P + i], WEFT_BUF_OUT, 0, P, 0, NULL);
    return err;
}

weft_err synth_build_hd(const synth_ctx *c, weft_plan **out)
{
    uint32_t P = pow2_floor(c->n);
    weft_plan *p = NULL;
    weft_err err = synth_plan_new(c, c->coll == WEFT_COLL_ALLREDUCE ? P : 1, 0, &p);
    if (err)
        return err;
    synth_emit e;
    synth_emit_init(&e, p);
    if (c->coll == WEFT_COLL_ALLGATHER)
        err = hd_allgather(&e, c);
    else if (c->coll == WEFT_COLL_REDUCESCATTER)
        err = hd_reducescatter(&e, c);
    else
        err = rabenseifner(&e, c);
    return synth_finish(err, &e, p, out);
}

/* Recursive doubling allreduce: the whole vector (one chunk) is exchanged
 * in every step; each side copies into the other's scratch slot and
 * reduces it locally, so the two directions never touch the same slot. */
static weft_err rd_allreduce(synth_emit *e, const synth_ctx *c)
{
    uint32_t n = c->n, P = pow2_floor(n), r = n - P;
    weft_err err = WEFT_OK;
    for (uint32_t i = 0; i < r && !err; i++)
        err = synth_reduce(e, c->order[P + i], c->order[i], WEFT_BUF_OUT, 0, 1, 0, NULL);
    for (uint32_t mask = 1; mask < P && !err; mask <<= 1) {
        for (uint32_t w = 0; w < P && !err; w++) {
            uint32_t a = c->order[w], b = c->order[w ^ mask];
            err = synth_emit_op(e, WEFT_OP_COPY, a, WEFT_BUF_OUT, 0, b, WEFT_BUF_SCRATCH, 0, 1, 0,
                                NULL, 0, NULL);
        }
        for (uint32_t w = 0; w < P && !err; w++) {
            uint32_t a = c->order[w];
            err = synth_emit_op(e, WEFT_OP_REDUCE, a, WEFT_BUF_SCRATCH, 0, a, WEFT_BUF_OUT, 0, 1, 0,
                                NULL, 0, NULL);
        }
    }
    for (uint32_t i = 0; i < r && !err; i++)
        err = synth_copy(e, c->order[i], c->order[P + i], WEFT_BUF_OUT, 0, 1, 0, NULL);
    return err;
}

weft_err synth_build_rd(const synth_ctx *c, weft_plan **out)
{
    bool ar = c->coll == WEFT_COLL_ALLREDUCE;
    weft_plan *p = NULL;
    weft_err err = synth_plan_new(c, 1, ar ? 1 : 0, &p);
    if (err)
        return err;
    synth_emit e;
    synth_emit_init(&e, p);
    err = ar ? rd_allreduce(&e, c) : hd_allgather(&e, c);
    return synth_finish(err, &e, p, out);
}

/* Bruck: after step k every position v holds the chunks of positions
 * v .. v+2^(k+1)-1 (mod N); at step k it sends the first min(2^k, N-2^k)
 * of them to position v - 2^k. Chunks are addressed by their id, so no
 * final rotation is needed. */
weft_err synth_build_bruck(const synth_ctx *c, weft_plan **out)
{
    uint32_t n = c->n;
    weft_plan *p = NULL;
    weft_err err = synth_plan_new(c, 1, 0, &p);
    if (err)
        return err;
    synth_emit e;
    synth_emit_init(&e, p);
    for (uint64_t dist = 1; dist < n && !err; dist <<= 1) {
        uint32_t cnt = (uint32_t)(dist < n - dist ? dist : n - dist);
        for (uint32_t v = 0; v < n && !err; v++) {
            uint32_t to = (uint32_t)((v + n - dist) % n);
            for (uint32_t j = 0; j < cnt && !err; j++)
                err = synth_copy(&e, c->order[v], c->order[to], WEFT_BUF_OUT, OWN((v + j) % n), 1,
                                 0, NULL);
        }
    }
    return synth_finish(err, &e, p, out);
}
