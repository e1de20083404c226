/* The built-in collectives on the ring schedule, built on
 * weft__comm_exchange. Each public call first asks select.c which schedule
 * runs; these run when it answers "builtin".
 *
 * Every rank
 * sends to rank+1 and receives from rank-1. The buffer of count elements is
 * cut into size blocks at element boundaries (block b = elements
 * [b*count/size, (b+1)*count/size)), so sizes need not divide.
 *
 * allreduce, reduce-scatter and reduce run in cache-sized rounds (below).
 * allgather: in step s rank r sends block r-s and stores block r-s-1.
 * allreduce: buffers the direct schedule fits (coll_direct.c) take it: one
 *   round instead of 2(size-1) message latencies. Larger ones run in rounds
 *   of size blocks of RING_CHUNK bytes, each a ring reduce-scatter and a
 *   ring allgather of that region.
 * reduce-scatter: every rank's block is cut into rounds of RING_CHUNK
 *   bytes; round k reduce-scatters piece k of every block.
 * reduce: rounds as in allreduce, each a reduce-scatter after which every
 *   rank sends its finished block to the root (the root receives them one
 *   after another).
 * broadcast: a chain from the root, cut into 1 MiB pieces; a rank forwards
 *   piece i-1 while it receives piece i.
 *
 * Rounds. Reduce-scatter step s of a round: rank r sends block r-s-1 and
 * combines block r-s-2 from the left with its own input of it; after
 * size-1 steps block r is complete. Partial results live in the
 * communicator's scratch (size blocks, kept between calls), never in the
 * caller's buffers: sendbuf is read once, straight from the caller (no
 * working copy of the whole buffer), and recvbuf is written once per
 * element. A round's scratch and the transport's slots stay in the caches
 * between its 2(size-1) steps, so the caller's buffers are the only
 * traffic to main memory: what one memcpy of the buffer costs. Allreduce
 * buffers of NT_MIN_BYTES and more get their results with streaming stores
 * (copy_nt.h), which skip reading recvbuf's lines before writing them.
 * Bandwidth: each rank sends 2(size-1)/size of the buffer for allreduce and
 * (size-1)/size for the others, the optimum on a ring; reduce adds 1/size of
 * the buffer per rank for the gather.
 */
#include <string.h>

#include "base/alloc.h"
#include "run/block.h"
#include "run/coll.h"
#include "run/coll_busy.h"
#include "run/coll_cma.h"
#include "run/coll_eager.h"
#include "run/coll_ring.h"
#include "run/coll_shared.h"
#include "run/coll_small.h"
#include "run/comm_fail.h"
#include "run/copy_nt.h"
#include "run/p2p.h"
#include "run/select.h"

#define BCAST_PIECE (1u << 20)
/* Bytes of one rank's block in an allreduce round: a round of 2..4 ranks
 * then fits the 1 MiB second-level caches of current x86 cores. */
#define RING_CHUNK (256u << 10)
/* Largest scratch of a round (size blocks): with more than 256 ranks the
 * blocks shrink instead (ring_per), so the memory a communicator keeps
 * stays bounded whatever its size. */
#define RING_SCRATCH_MAX ((size_t)64 << 20)
/* Allreduce buffers of at least this many bytes get their results written
 * with streaming stores (copy_nt.h): beyond the caches the caller reads
 * them back from memory anyway. */
#define NT_MIN_BYTES (8u << 20)

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
    if (c->failed)
        return weft_diag_set(d, WEFT_EPEER, "comm: failed earlier: %s", c->fail_msg);
    return WEFT_OK;
}

/* One round of the ring schedules that run in rounds (allreduce,
 * reduce-scatter, reduce): n blocks, block b being len(b) bytes at
 * in + ioff(b) of the caller's input and at work + woff(b) of the
 * communicator's scratch. Either the round's count elements (from element
 * base) are cut into n blocks (stride 0: allreduce, reduce), or block b is
 * the count elements from b * stride + base (reduce-scatter, where every
 * rank's block is cut into rounds). */
typedef struct ring_round {
    uint32_t n;
    size_t es;
    size_t count, base, stride;
    const unsigned char *in;
    unsigned char *work;
    weft__reduce_fn fn;
} ring_round;

static size_t rr_ioff(const ring_round *g, uint32_t b)
{
    return (g->stride ? b * g->stride + g->base : g->base + weft__block_at(g->count, g->n, b)) *
           g->es;
}

static size_t rr_woff(const ring_round *g, uint32_t b)
{
    return (g->stride ? b * g->count : weft__block_at(g->count, g->n, b)) * g->es;
}

static size_t rr_len(const ring_round *g, uint32_t b)
{
    return (g->stride ? g->count
                      : weft__block_at(g->count, g->n, b + 1) - weft__block_at(g->count, g->n, b)) *
           g->es;
}

/* One step of a round: posts the send s, runs local (may be NULL) while
 * the transports start on it (a peer can take our data meanwhile), then
 * posts the receive r, so that local may still write r's buffer, and waits
 * for both. Empty requests are skipped. */
static weft_err step(weft_comm *c, weft__xreq *s, weft__xreq *r, void (*local)(void *), void *arg,
                     weft_diag *d)
{
    weft__xreq *reqs[2];
    size_t k = 0;
    weft_err e;
    if (s->len) {
        if ((e = weft__comm_post(c, s, d)))
            return e;
        reqs[k++] = s;
    }
    if (local) {
        if (k && (e = weft__comm_kick(c, d)))
            return e;
        local(arg);
    }
    if (r->len) {
        if ((e = weft__comm_post(c, r, d)))
            return e;
        reqs[k++] = r;
    }
    return weft__comm_wait(c, reqs, k, d);
}

typedef struct copy_job {
    unsigned char *dst;
    const unsigned char *src;
    size_t len;
    bool nt;
} copy_job;

static void run_copy(void *arg)
{
    const copy_job *j = arg;
    if (j->dst == j->src || !j->len)
        return;
    if (j->nt)
        weft__copy_nt(j->dst, j->src, j->len);
    else
        memcpy(j->dst, j->src, j->len);
}

/* Ring reduce-scatter of one round: in step s (0 .. n-2) rank r sends
 * block r-s-1 (its input in step 0, its partial result after) and combines
 * its input of block r-s-2 with the left's partial result into work (at
 * fin instead for the last step's block r when fin is set). Over shared
 * memory the transport combines input and received bytes in one pass
 * (xreq.base); otherwise the input is copied to the destination while the
 * send is under way, and the receive combines into it. The input is read
 * once and the partial results stay in work, which a round keeps
 * cache-sized. Block r's result ends in work, or at fin. */
static weft_err round_rs(weft_comm *c, const ring_round *g, unsigned char *fin, weft_diag *d)
{
    uint32_t n = g->n, r = c->rank;
    uint32_t right = mod((int64_t)r + 1, n), left = mod((int64_t)r - 1, n);
    for (uint32_t s = 0; s + 1 < n; s++) {
        uint32_t sb = mod((int64_t)r - s - 1, n), rb = mod((int64_t)r - s - 2, n);
        const unsigned char *src = s == 0 ? g->in + rr_ioff(g, sb) : g->work + rr_woff(g, sb);
        const unsigned char *mine = g->in + rr_ioff(g, rb);
        unsigned char *dst = fin && s + 2 == n ? fin : g->work + rr_woff(g, rb);
        weft__xreq sr = {
            .peer = right, .is_send = true, .buf = (unsigned char *)src, .len = rr_len(g, sb)};
        weft__xreq rr = {
            .peer = left, .buf = dst, .len = rr_len(g, rb), .reduce = g->fn, .esize = g->es};
        copy_job cj = {dst, mine, rr.len, false};
        bool fused = c->via[left] == WEFT__VIA_SHM;
        if (fused)
            rr.base = mine;
        weft_err e = step(c, &sr, &rr, fused ? NULL : run_copy, &cj, d);
        if (e)
            return e;
    }
    return WEFT_OK;
}

/* Ring allgather of one allreduce round, after round_rs left block r's
 * result in work: in step s rank r sends block r-s and receives block
 * r-s-1, which it forwards in the next step. Received blocks go straight
 * into out and are forwarded from there (the round is cache-sized), except
 * with nt, where out is written with streaming stores and so leaves the
 * caches: then a block to forward is received into work and copied to out
 * while its send runs, and only the last step's block goes straight to out.
 * Every block is written to out once. */
static weft_err round_ag(weft_comm *c, const ring_round *g, unsigned char *out, bool nt,
                         weft_diag *d)
{
    uint32_t n = g->n, r = c->rank;
    uint32_t right = mod((int64_t)r + 1, n), left = mod((int64_t)r - 1, n);
    for (uint32_t s = 0; s + 1 < n; s++) {
        uint32_t sb = mod((int64_t)r - s, n), rb = mod((int64_t)r - s - 1, n);
        bool last = s + 2 == n, from_work = s == 0 || nt;
        unsigned char *dst = nt && !last ? g->work + rr_woff(g, rb) : out + rr_ioff(g, rb);
        weft__xreq sr = {.peer = right,
                         .is_send = true,
                         .buf = from_work ? g->work + rr_woff(g, sb) : out + rr_ioff(g, sb),
                         .len = rr_len(g, sb)};
        weft__xreq rr = {.peer = left, .buf = dst, .len = rr_len(g, rb), .esize = g->es, .nt = nt};
        copy_job cj = {out + rr_ioff(g, sb), sr.buf, sr.len, nt};
        weft_err e = step(c, &sr, &rr, run_copy, &cj, d);
        if (e)
            return e;
    }
    return WEFT_OK;
}

/* A rank without scratch cannot take part in the round its peers are
 * starting: the communicator fails, so that they see WEFT_EPEER at once
 * instead of waiting for the timeout. */
static weft_err no_scratch(weft_comm *c, weft_diag *d)
{
    weft_diag_set(d, WEFT_ENOMEM, "comm: rank %u: out of memory for the ring's scratch", c->rank);
    return weft__comm_fail(c, WEFT_ENOMEM, d);
}

/* Elements of one rank's block in a round: RING_CHUNK bytes, less when
 * size blocks of it would exceed RING_SCRATCH_MAX, and at least one. */
static size_t ring_per(uint32_t n, size_t es)
{
    size_t bytes = RING_SCRATCH_MAX / n < RING_CHUNK ? RING_SCRATCH_MAX / n : RING_CHUNK;
    return bytes / es ? bytes / es : 1;
}

/* The scratch of a round (p2p.h). */
static unsigned char *scratch(weft_comm *c, size_t bytes)
{
    return weft__comm_scratch(c, bytes);
}

/* Ring allgather in place on buf (count elements) where rank r holds block
 * r. */
static weft_err ring_ag(weft_comm *c, unsigned char *buf, size_t count, size_t es, weft_diag *d)
{
    uint32_t n = c->size, r = c->rank;
    uint32_t right = mod((int64_t)r + 1, n), left = mod((int64_t)r - 1, n);
    for (uint32_t s = 0; s + 1 < n; s++) {
        uint32_t sb = mod((int64_t)r - s, n), rb = mod((int64_t)r - s - 1, n);
        size_t so = weft__block_at(count, n, sb), sn = weft__block_at(count, n, sb + 1) - so;
        size_t ro = weft__block_at(count, n, rb), rn = weft__block_at(count, n, rb + 1) - ro;
        weft_err e = weft__comm_exchange(c, right, buf + so * es, sn * es, left, buf + ro * es,
                                         rn * es, NULL, es, d);
        if (e)
            return e;
    }
    return WEFT_OK;
}

static weft_err allreduce_call(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               weft_dtype dtype, weft_redop op, weft_diag *d)
{
    weft_err e = weft__coll_check(c, dtype, op, true, d);
    if (e)
        return e;
    weft__call_begin(c, WEFT_COLL_ALLREDUCE, count, dtype, (uint32_t)op, 0);
    weft_comm_plan *cp;
    e = weft__select_pick(c, WEFT_COLL_ALLREDUCE, count, dtype, 0, NULL, &cp, d);
    if (e)
        return e;
    if (cp) {
        if ((e = weft__call_agree(c, d)))
            return e;
        return weft__select_run(c, cp, WEFT_COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, d);
    }
    size_t es = weft_dtype_size(dtype);
    if (c->size == 1 || count == 0) {
        if ((e = weft__call_agree(c, d)))
            return e;
        if (sendbuf != recvbuf && count)
            memcpy(recvbuf, sendbuf, count * es);
        return WEFT_OK;
    }
    weft__reducer red;
    weft__reducer_get(dtype, op, &red);
    weft__reduce_fn fn = red.pair;
    bool ran;
    e = weft__shared_allreduce(c, sendbuf, recvbuf, count, &red, &ran, d);
    if (e || ran)
        return e;
    if (weft__eager_fits(c, WEFT_COLL_ALLREDUCE, count * es))
        return weft__eager_allreduce(c, sendbuf, recvbuf, count, &red, d);
    if (weft__allreduce_direct_fits(c->size, count * es)) /* agrees itself */
        return weft__allreduce_direct(c, sendbuf, recvbuf, count, es, fn, d);
    e = weft__cma_allreduce(c, sendbuf, recvbuf, count, &red, &ran, d);
    if (e || ran)
        return e;
    if ((e = weft__call_agree(c, d)))
        return e;
    size_t per = ring_per(c->size, es), round = (size_t)c->size * per;
    unsigned char *work = scratch(c, round * es);
    if (!work)
        return no_scratch(c, d);
    bool nt = count * es >= NT_MIN_BYTES;
    for (size_t off = 0; off < count && !e; off += round) {
        ring_round g = {.n = c->size,
                        .es = es,
                        .count = count - off < round ? count - off : round,
                        .base = off,
                        .in = sendbuf,
                        .work = work,
                        .fn = fn};
        e = round_rs(c, &g, NULL, d);
        if (!e)
            e = round_ag(c, &g, recvbuf, nt, d);
    }
    return e;
}

static weft_err allgather_call(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               weft_dtype dtype, weft_diag *d)
{
    weft_err e = weft__coll_check(c, dtype, WEFT_SUM, false, d);
    if (e)
        return e;
    weft__call_begin(c, WEFT_COLL_ALLGATHER, count, dtype, WEFT__CALL_NO_OP, 0);
    weft_comm_plan *cp;
    e = weft__select_pick(c, WEFT_COLL_ALLGATHER, count, dtype, 0, NULL, &cp, d);
    if (e)
        return e;
    if (cp) {
        if ((e = weft__call_agree(c, d)))
            return e;
        return weft__select_run(c, cp, WEFT_COLL_ALLGATHER, sendbuf, recvbuf, count, dtype,
                                WEFT_SUM, d);
    }
    size_t es = weft_dtype_size(dtype);
    if (c->size > 1 && count && weft__small_fits(c, WEFT_COLL_ALLGATHER, count, es))
        return weft__small_allgather(c, sendbuf, recvbuf, count, es, d);
    if (c->size > 1 && count) {
        bool ran;
        e = weft__shared_allgather(c, sendbuf, recvbuf, count, es, &ran, d);
        if (e || ran)
            return e;
        e = weft__cma_allgather(c, sendbuf, recvbuf, count, es, &ran, d);
        if (e || ran)
            return e;
    }
    if ((e = weft__call_agree(c, d)))
        return e;
    unsigned char *mine = (unsigned char *)recvbuf + (size_t)c->rank * count * es;
    if (sendbuf != mine && count)
        memcpy(mine, sendbuf, count * es);
    if (c->size == 1 || count == 0)
        return WEFT_OK;
    /* Blocks of count elements: the allgather of size*count elements cut
     * into size equal blocks. */
    return ring_ag(c, recvbuf, count * c->size, es, d);
}

static weft_err reduce_scatter_call(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                    weft_dtype dtype, weft_redop op, weft_diag *d)
{
    weft_err e = weft__coll_check(c, dtype, op, true, d);
    if (e)
        return e;
    weft__call_begin(c, WEFT_COLL_REDUCESCATTER, count, dtype, (uint32_t)op, 0);
    weft_comm_plan *cp;
    e = weft__select_pick(c, WEFT_COLL_REDUCESCATTER, count, dtype, 0, NULL, &cp, d);
    if (e)
        return e;
    if (cp) {
        if ((e = weft__call_agree(c, d)))
            return e;
        return weft__select_run(c, cp, WEFT_COLL_REDUCESCATTER, sendbuf, recvbuf, count, dtype, op,
                                d);
    }
    size_t es = weft_dtype_size(dtype);
    size_t total = count * c->size * es;
    if (count == 0)
        return weft__call_agree(c, d);
    if (c->size == 1) {
        if (sendbuf != recvbuf)
            memcpy(recvbuf, sendbuf, total);
        return WEFT_OK;
    }
    weft__reducer red;
    weft__reducer_get(dtype, op, &red);
    if (weft__small_fits(c, WEFT_COLL_REDUCESCATTER, count, es))
        return weft__small_reduce_scatter(c, sendbuf, recvbuf, count, &red, d);
    weft__reduce_fn fn = red.pair;
    bool ran;
    e = weft__shared_reduce_scatter(c, sendbuf, recvbuf, count, &red, &ran, d);
    if (e || ran)
        return e;
    e = weft__cma_reduce_scatter(c, sendbuf, recvbuf, count, &red, &ran, d);
    if (e || ran)
        return e;
    /* Rounds of RING_CHUNK bytes of every rank's block: the partial
     * results stay in the scratch, and sendbuf is only read (in place,
     * recvbuf is block rank of it, and its final value is written after
     * its last read). */
    size_t per = ring_per(c->size, es);
    unsigned char *work = scratch(c, (size_t)c->size * per * es);
    if (!work)
        return no_scratch(c, d);
    if ((e = weft__call_agree(c, d)))
        return e;
    for (size_t off = 0; off < count && !e; off += per) {
        ring_round g = {.n = c->size,
                        .es = es,
                        .count = count - off < per ? count - off : per,
                        .base = off,
                        .stride = count,
                        .in = sendbuf,
                        .work = work,
                        .fn = fn};
        e = round_rs(c, &g, (unsigned char *)recvbuf + off * es, d);
    }
    return e;
}

static weft_err broadcast_call(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               weft_dtype dtype, uint32_t root, weft_diag *d)
{
    weft_err e = weft__coll_check(c, dtype, WEFT_SUM, false, d);
    if (e)
        return e;
    if (root >= c->size)
        return weft_diag_set(d, WEFT_EINVAL, "comm: root %u is not in 0 .. %u", root, c->size - 1);
    weft__call_begin(c, WEFT_COLL_BROADCAST, count, dtype, WEFT__CALL_NO_OP, root);
    weft_comm_plan *cp;
    e = weft__select_pick(c, WEFT_COLL_BROADCAST, count, dtype, root, NULL, &cp, d);
    if (e)
        return e;
    if (cp) {
        if ((e = weft__call_agree(c, d)))
            return e;
        return weft__select_run(c, cp, WEFT_COLL_BROADCAST, sendbuf, recvbuf, count, dtype,
                                WEFT_SUM, d);
    }
    size_t es = weft_dtype_size(dtype), bytes = count * es;
    uint32_t n = c->size, r = c->rank;
    if (n > 1 && bytes && weft__small_fits(c, WEFT_COLL_BROADCAST, count, es))
        return weft__small_broadcast(c, sendbuf, recvbuf, count, es, root, d);
    if (n > 1 && bytes) {
        bool ran;
        e = weft__shared_broadcast(c, sendbuf, recvbuf, count, es, root, &ran, d);
        if (e || ran)
            return e;
        if (weft__eager_fits(c, WEFT_COLL_BROADCAST, bytes))
            return weft__eager_broadcast(c, sendbuf, recvbuf, count, es, root, d);
        e = weft__cma_broadcast(c, sendbuf, recvbuf, count, es, root, &ran, d);
        if (e || ran)
            return e;
    }
    if ((e = weft__call_agree(c, d)))
        return e;
    uint32_t pos = mod((int64_t)r - root, n);
    if (pos == 0 && sendbuf != recvbuf && bytes)
        memcpy(recvbuf, sendbuf, bytes);
    if (n == 1 || bytes == 0)
        return WEFT_OK;
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
        if (e)
            return e;
    }
    return WEFT_OK;
}

static weft_err reduce_call(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                            weft_dtype dtype, weft_redop op, uint32_t root, weft_diag *d)
{
    weft_err e = weft__coll_check(c, dtype, op, true, d);
    if (e)
        return e;
    if (root >= c->size)
        return weft_diag_set(d, WEFT_EINVAL, "comm: root %u is not in 0 .. %u", root, c->size - 1);
    weft__call_begin(c, WEFT_COLL_REDUCE, count, dtype, (uint32_t)op, root);
    weft_comm_plan *cp;
    e = weft__select_pick(c, WEFT_COLL_REDUCE, count, dtype, root, NULL, &cp, d);
    if (e)
        return e;
    if (cp) {
        if ((e = weft__call_agree(c, d)))
            return e;
        return weft__select_run(c, cp, WEFT_COLL_REDUCE, sendbuf, recvbuf, count, dtype, op, d);
    }
    size_t es = weft_dtype_size(dtype), total = count * es;
    uint32_t n = c->size, r = c->rank;
    if (count == 0)
        return weft__call_agree(c, d);
    if (n == 1) {
        if (sendbuf != recvbuf)
            memcpy(recvbuf, sendbuf, total);
        return WEFT_OK;
    }
    weft__reducer red;
    weft__reducer_get(dtype, op, &red);
    if (weft__small_fits(c, WEFT_COLL_REDUCE, count, es))
        return weft__small_reduce(c, sendbuf, recvbuf, count, &red, root, d);
    weft__reduce_fn fn = red.pair;
    bool ran;
    e = weft__shared_reduce(c, sendbuf, recvbuf, count, &red, root, &ran, d);
    if (e || ran)
        return e;
    if (weft__eager_fits(c, WEFT_COLL_REDUCE, total))
        return weft__eager_reduce(c, sendbuf, recvbuf, count, &red, root, d);
    e = weft__cma_reduce(c, sendbuf, recvbuf, count, &red, root, &ran, d);
    if (e || ran)
        return e;
    if ((e = weft__call_agree(c, d)))
        return e;
    /* Rounds as in allreduce: a ring reduce-scatter of the round, then
     * every rank sends its finished block to the root (which combined its
     * own straight into recvbuf). */
    size_t round = (size_t)n * ring_per(n, es);
    unsigned char *work = scratch(c, round * es), *out = recvbuf;
    if (!work)
        return no_scratch(c, d);
    for (size_t off = 0; off < count && !e; off += round) {
        ring_round g = {.n = n,
                        .es = es,
                        .count = count - off < round ? count - off : round,
                        .base = off,
                        .in = sendbuf,
                        .work = work,
                        .fn = fn};
        e = round_rs(c, &g, r == root ? out + rr_ioff(&g, r) : NULL, d);
        for (uint32_t b = 0; !e && b < n; b++) {
            size_t len = rr_len(&g, b);
            if (b == root || !len)
                continue;
            if (r == root)
                e = weft__comm_exchange(c, WEFT__NO_PEER, NULL, 0, b, out + rr_ioff(&g, b), len,
                                        NULL, es, d);
            else if (b == r)
                e = weft__comm_exchange(c, root, work + rr_woff(&g, b), len, WEFT__NO_PEER, NULL, 0,
                                        NULL, es, d);
        }
    }
    return e;
}

weft_err weft_allreduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                        weft_dtype dtype, weft_redop op, weft_diag *d)
{
    weft__coll_enter(c);
    return weft__coll_leave(c, allreduce_call(c, sendbuf, recvbuf, count, dtype, op, d));
}

weft_err weft_allgather(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                        weft_dtype dtype, weft_diag *d)
{
    weft__coll_enter(c);
    return weft__coll_leave(c, allgather_call(c, sendbuf, recvbuf, count, dtype, d));
}

weft_err weft_reduce_scatter(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                             weft_dtype dtype, weft_redop op, weft_diag *d)
{
    weft__coll_enter(c);
    return weft__coll_leave(c, reduce_scatter_call(c, sendbuf, recvbuf, count, dtype, op, d));
}

weft_err weft_broadcast(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                        weft_dtype dtype, uint32_t root, weft_diag *d)
{
    weft__coll_enter(c);
    return weft__coll_leave(c, broadcast_call(c, sendbuf, recvbuf, count, dtype, root, d));
}

weft_err weft_reduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                     weft_dtype dtype, weft_redop op, uint32_t root, weft_diag *d)
{
    weft__coll_enter(c);
    return weft__coll_leave(c, reduce_call(c, sendbuf, recvbuf, count, dtype, op, root, d));
}
