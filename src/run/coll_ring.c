/* The built-in collectives on the ring schedule, built on
 * weft__comm_exchange. Each public call first asks select.c which schedule
 * runs; these run when it answers "builtin".
 *
 * Every rank
 * sends to rank+1 and receives from rank-1. The buffer of count elements is
 * cut into size blocks at element boundaries (block b = elements
 * [b*count/size, (b+1)*count/size)), so sizes need not divide.
 *
 * reduce-scatter: in step s (0 .. size-2) rank r sends block r-s-1 and
 *   reduces the block r-s-2 it receives into its own; after size-1 steps
 *   block r is complete on rank r. Received data is combined by the
 *   transport as it arrives (no staging copy for shared memory).
 * allgather: in step s rank r sends block r-s and stores block r-s-1.
 * allreduce: buffers the direct schedule fits (coll_direct.c) take it: one
 *   round instead of 2(size-1) message latencies. Larger ones run in rounds
 *   of size * RING_CHUNK bytes, each a reduce-scatter and then an allgather
 *   of that region of recvbuf (copied there from sendbuf first when out of
 *   place). A round's data stays in the caches between its steps, so every
 *   byte goes through main memory about once instead of once per step, and
 *   the copy out of place is no separate pass over the whole buffer.
 * broadcast: a chain from the root, cut into 1 MiB pieces; a rank forwards
 *   piece i-1 while it receives piece i.
 * reduce: reduce-scatter on a private copy, then every rank sends its
 *   complete block to the root (the root receives them one after another).
 * Bandwidth: each rank sends 2(size-1)/size of the buffer for allreduce and
 * (size-1)/size for the others, the optimum on a ring; reduce adds 1/size of
 * the buffer per rank for the gather.
 */
#include <string.h>

#include "base/alloc.h"
#include "run/coll.h"

#define BCAST_PIECE (1u << 20)
/* Bytes of one rank's block in an allreduce round: a round of 2..4 ranks
 * then fits the 1 MiB second-level caches of current x86 cores. */
#define RING_CHUNK (256u << 10)

static size_t blk(size_t count, uint32_t n, uint32_t b)
{
    return (size_t)((unsigned __int128)count * b / n);
}

static uint32_t mod(int64_t v, uint32_t n)
{
    int64_t m = v % (int64_t)n;
    return (uint32_t)(m < 0 ? m + n : m);
}

weft_err weft__coll_check(weft_comm *c, weft_dtype dtype, weft_redop op, bool needs_op,
                          weft_diag *d)
{
    if (weft_dtype_size(dtype) == 0)
        return weft_diag_set(d, WEFT_EINVAL, "comm: invalid dtype %d", (int)dtype);
    if (needs_op && !weft__reduce_get(dtype, op))
        return weft_diag_set(d, WEFT_EINVAL, "comm: invalid reduction operator %d", (int)op);
    if (c->failed) return weft_diag_set(d, WEFT_EPEER, "comm: failed earlier: %s", c->fail_msg);
    return WEFT_OK;
}

/* Ring reduce-scatter in place on buf (count elements); block r of rank r
 * ends complete. */
static weft_err ring_rs(weft_comm *c, unsigned char *buf, size_t count, size_t es,
                        weft__reduce_fn fn, weft_diag *d)
{
    uint32_t n = c->size, r = c->rank;
    uint32_t right = mod((int64_t)r + 1, n), left = mod((int64_t)r - 1, n);
    for (uint32_t s = 0; s + 1 < n; s++) {
        uint32_t sb = mod((int64_t)r - s - 1, n), rb = mod((int64_t)r - s - 2, n);
        size_t so = blk(count, n, sb), sn = blk(count, n, sb + 1) - so;
        size_t ro = blk(count, n, rb), rn = blk(count, n, rb + 1) - ro;
        weft_err e = weft__comm_exchange(c, right, buf + so * es, sn * es, left, buf + ro * es,
                                         rn * es, fn, es, d);
        if (e) return e;
    }
    return WEFT_OK;
}

/* Ring allgather in place on buf (count elements) where rank r holds block
 * r. */
static weft_err ring_ag(weft_comm *c, unsigned char *buf, size_t count, size_t es, weft_diag *d)
{
    uint32_t n = c->size, r = c->rank;
    uint32_t right = mod((int64_t)r + 1, n), left = mod((int64_t)r - 1, n);
    for (uint32_t s = 0; s + 1 < n; s++) {
        uint32_t sb = mod((int64_t)r - s, n), rb = mod((int64_t)r - s - 1, n);
        size_t so = blk(count, n, sb), sn = blk(count, n, sb + 1) - so;
        size_t ro = blk(count, n, rb), rn = blk(count, n, rb + 1) - ro;
        weft_err e = weft__comm_exchange(c, right, buf + so * es, sn * es, left, buf + ro * es,
                                         rn * es, NULL, es, d);
        if (e) return e;
    }
    return WEFT_OK;
}

weft_err weft_allreduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                        weft_dtype dtype, weft_redop op, weft_diag *d)
{
    weft_err e = weft__coll_check(c, dtype, op, true, d);
    if (e) return e;
    weft_comm_plan *cp;
    e = weft__select_pick(c, WEFT_COLL_ALLREDUCE, count, dtype, 0, NULL, &cp, d);
    if (e) return e;
    if (cp) return weft__select_run(c, cp, WEFT_COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, d);
    size_t es = weft_dtype_size(dtype);
    if (c->size == 1 || count == 0) {
        if (sendbuf != recvbuf && count) memcpy(recvbuf, sendbuf, count * es);
        return WEFT_OK;
    }
    weft__reduce_fn fn = weft__reduce_get(dtype, op);
    if (weft__allreduce_direct_fits(c->size, count * es))
        return weft__allreduce_direct(c, sendbuf, recvbuf, count, es, fn, d);
    size_t round = (size_t)c->size * (RING_CHUNK / es);
    for (size_t off = 0; off < count && !e; off += round) {
        size_t len = count - off < round ? count - off : round;
        unsigned char *buf = (unsigned char *)recvbuf + off * es;
        if (sendbuf != recvbuf) memcpy(buf, (const unsigned char *)sendbuf + off * es, len * es);
        e = ring_rs(c, buf, len, es, fn, d);
        if (!e) e = ring_ag(c, buf, len, es, d);
    }
    return e;
}

weft_err weft_allgather(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                        weft_dtype dtype, weft_diag *d)
{
    weft_err e = weft__coll_check(c, dtype, WEFT_SUM, false, d);
    if (e) return e;
    weft_comm_plan *cp;
    e = weft__select_pick(c, WEFT_COLL_ALLGATHER, count, dtype, 0, NULL, &cp, d);
    if (e) return e;
    if (cp) return weft__select_run(c, cp, WEFT_COLL_ALLGATHER, sendbuf, recvbuf, count, dtype, WEFT_SUM, d);
    size_t es = weft_dtype_size(dtype);
    unsigned char *mine = (unsigned char *)recvbuf + (size_t)c->rank * count * es;
    if (sendbuf != mine && count) memcpy(mine, sendbuf, count * es);
    if (c->size == 1 || count == 0) return WEFT_OK;
    /* Blocks of count elements: the allgather of size*count elements cut
     * into size equal blocks. */
    return ring_ag(c, recvbuf, count * c->size, es, d);
}

weft_err weft_reduce_scatter(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                             weft_dtype dtype, weft_redop op, weft_diag *d)
{
    weft_err e = weft__coll_check(c, dtype, op, true, d);
    if (e) return e;
    weft_comm_plan *cp;
    e = weft__select_pick(c, WEFT_COLL_REDUCESCATTER, count, dtype, 0, NULL, &cp, d);
    if (e) return e;
    if (cp) return weft__select_run(c, cp, WEFT_COLL_REDUCESCATTER, sendbuf, recvbuf, count, dtype, op, d);
    size_t es = weft_dtype_size(dtype);
    size_t total = count * c->size * es;
    if (count == 0) return WEFT_OK;
    if (c->size == 1) {
        if (sendbuf != recvbuf) memcpy(recvbuf, sendbuf, total);
        return WEFT_OK;
    }
    /* A working copy: sendbuf is the caller's and must not change (unless
     * in place, where recvbuf is inside it). */
    unsigned char *tmp = weft__malloc(total);
    if (!tmp) return weft_diag_code(d, WEFT_ENOMEM);
    memcpy(tmp, sendbuf, total);
    e = ring_rs(c, tmp, count * c->size, es, weft__reduce_get(dtype, op), d);
    if (!e) memcpy(recvbuf, tmp + (size_t)c->rank * count * es, count * es);
    weft__free(tmp);
    return e;
}

weft_err weft_broadcast(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                        weft_dtype dtype, uint32_t root, weft_diag *d)
{
    weft_err e = weft__coll_check(c, dtype, WEFT_SUM, false, d);
    if (e) return e;
    if (root >= c->size)
        return weft_diag_set(d, WEFT_EINVAL, "comm: root %u is not in 0 .. %u", root, c->size - 1);
    weft_comm_plan *cp;
    e = weft__select_pick(c, WEFT_COLL_BROADCAST, count, dtype, root, NULL, &cp, d);
    if (e) return e;
    if (cp) return weft__select_run(c, cp, WEFT_COLL_BROADCAST, sendbuf, recvbuf, count, dtype, WEFT_SUM, d);
    size_t bytes = count * weft_dtype_size(dtype);
    uint32_t n = c->size, r = c->rank;
    uint32_t pos = mod((int64_t)r - root, n);
    if (pos == 0 && sendbuf != recvbuf && bytes) memcpy(recvbuf, sendbuf, bytes);
    if (n == 1 || bytes == 0) return WEFT_OK;
    uint32_t next = pos + 1 < n ? mod((int64_t)r + 1, n) : WEFT__NO_PEER;
    uint32_t prev = pos > 0 ? mod((int64_t)r - 1, n) : WEFT__NO_PEER;
    const unsigned char *from = pos == 0 ? sendbuf : recvbuf;
    unsigned char *to = recvbuf;
    size_t pieces = (bytes + BCAST_PIECE - 1) / BCAST_PIECE;
    for (size_t i = 0; i <= pieces; i++) {
        size_t so = (i ? i - 1 : 0) * BCAST_PIECE;
        size_t sn = i == 0 ? 0 : (bytes - so < BCAST_PIECE ? bytes - so : BCAST_PIECE);
        size_t ro = i * BCAST_PIECE;
        size_t rn = i == pieces ? 0 : (bytes - ro < BCAST_PIECE ? bytes - ro : BCAST_PIECE);
        e = weft__comm_exchange(c, sn ? next : WEFT__NO_PEER, from + so, sn,
                                rn ? prev : WEFT__NO_PEER, to + ro, rn, NULL, 1, d);
        if (e) return e;
    }
    return WEFT_OK;
}

weft_err weft_reduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                     weft_dtype dtype, weft_redop op, uint32_t root, weft_diag *d)
{
    weft_err e = weft__coll_check(c, dtype, op, true, d);
    if (e) return e;
    if (root >= c->size)
        return weft_diag_set(d, WEFT_EINVAL, "comm: root %u is not in 0 .. %u", root, c->size - 1);
    weft_comm_plan *cp;
    e = weft__select_pick(c, WEFT_COLL_REDUCE, count, dtype, root, NULL, &cp, d);
    if (e) return e;
    if (cp) return weft__select_run(c, cp, WEFT_COLL_REDUCE, sendbuf, recvbuf, count, dtype, op, d);
    size_t es = weft_dtype_size(dtype), total = count * es;
    uint32_t n = c->size, r = c->rank;
    if (count == 0) return WEFT_OK;
    if (n == 1) {
        if (sendbuf != recvbuf) memcpy(recvbuf, sendbuf, total);
        return WEFT_OK;
    }
    /* A working copy: sendbuf must not change, and recvbuf is only the
     * root's. */
    unsigned char *tmp = weft__malloc(total);
    if (!tmp) return weft_diag_code(d, WEFT_ENOMEM);
    memcpy(tmp, sendbuf, total);
    e = ring_rs(c, tmp, count, es, weft__reduce_get(dtype, op), d);
    unsigned char *out = recvbuf;
    for (uint32_t b = 0; !e && b < n; b++) {
        size_t off = blk(count, n, b), len = (blk(count, n, b + 1) - off) * es;
        if (r == root && b == r)
            memcpy(out + off * es, tmp + off * es, len);
        else if (r == root)
            e = weft__comm_exchange(c, WEFT__NO_PEER, NULL, 0, b, out + off * es, len, NULL, es, d);
        else if (b == r)
            e = weft__comm_exchange(c, root, tmp + off * es, len, WEFT__NO_PEER, NULL, 0, NULL, es,
                                    d);
    }
    weft__free(tmp);
    return e;
}
