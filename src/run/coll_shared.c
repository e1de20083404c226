/* Single-pass collectives on weft_comm_alloc memory.
 *
 * When the buffers of a call lie in weft_comm_alloc memory on every rank,
 * every rank can read and write every other rank's buffers directly
 * (transport/shm/region.h), so no data needs to pass through slots:
 *  allreduce: rank r owns block r (elements [r*count/n, (r+1)*count/n));
 *    it reads block r of every rank's sendbuf, combines them in rank order
 *    ((in_0 op in_1) op in_2 ..., the order of the direct schedule, so
 *    results are bit-identical everywhere) and writes the result into
 *    block r of every rank's recvbuf. Per rank: reads one buffer's worth
 *    and writes one, the traffic of one memcpy of the buffer.
 *  reduce-scatter: rank r reads block r of every rank's sendbuf and writes
 *    its own recvbuf.
 *  allgather: rank r copies its sendbuf into block r of every rank's
 *    recvbuf.
 * Each block is processed in pieces of WEFT__REGION_WORK bytes: the piece
 * is combined in the work area (which stays in the caches) and then
 * written out, with streaming stores for large calls (copy_nt.h).
 *
 * Agreement. Whether a call may run this way depends on every rank's
 * pointers, so each call first publishes a record (which allocation and
 * offset hold its buffers, and the call's kind and size) and waits for
 * everyone's (weft__region_post): all ranks then decide from the same
 * records, so they decide alike. The publication is also the barrier that
 * says every sendbuf is ready. Records are only exchanged when every peer
 * is on shared memory and a weft_comm_alloc has succeeded, which every
 * rank knows alike. A second barrier (weft__region_done) ends the call
 * once every rank finished writing (and reading: a rank may reuse its
 * sendbuf after the call).
 *
 * In place. Block r of any rank's buffers is read and written by rank r
 * only, and each piece is read in full (from every rank) before it is
 * written, so in place needs no extra copy.
 */
#include <string.h>

#include "run/coll_shared.h"
#include "run/copy_nt.h"
#include "run/transport/shm/region.h"

/* Calls of at least this many bytes write their results with streaming
 * stores: beyond the caches the caller reads them back from memory anyway
 * (as coll_ring.c's NT_MIN_BYTES). */
#define SHARED_NT_MIN_BYTES (8u << 20)

enum { KIND_ALLREDUCE = 1, KIND_REDUCE_SCATTER = 2, KIND_ALLGATHER = 3 };

static const char *const kind_name[] = {"?", "allreduce", "reduce-scatter", "allgather"};

/* Publishes this rank's record and decides with everyone's: *ran stays
 * false (the ordinary path) unless every rank's buffers that `need`s
 * (WEFT__REC_*) lie in one and the same allocation. */
static weft_err agree(weft_comm *c, uint32_t kind, const void *sendbuf, size_t sbytes,
                      const void *recvbuf, size_t rbytes, size_t bytes, uint32_t need,
                      uint64_t *seq, bool *ran, weft_diag *d)
{
    weft__region_rec me = {.seq = weft__region_next_seq(c), .kind = kind, .bytes = bytes};
    if (sendbuf && weft__region_find(c, sendbuf, sbytes, &me.sid, &me.soff))
        me.flags |= WEFT__REC_SEND;
    if (weft__region_find(c, recvbuf, rbytes, &me.rid, &me.roff)) me.flags |= WEFT__REC_RECV;
    weft__region_rec *recs = weft__region_recs(c);
    weft_err e = weft__region_post(c, &me, recs, d);
    if (e) return e;
    *seq = me.seq;
    bool fast = true;
    for (uint32_t q = 0; q < c->size; q++) {
        if (recs[q].kind != kind || recs[q].bytes != bytes)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "comm: rank %u called %s with %llu bytes, rank %u %s with %llu",
                                 q, kind_name[recs[q].kind <= 3 ? recs[q].kind : 0],
                                 (unsigned long long)recs[q].bytes, c->rank, kind_name[kind],
                                 (unsigned long long)bytes);
        if ((recs[q].flags & need) != need) fast = false;
        if ((need & WEFT__REC_SEND) && recs[q].sid != recs[0].sid) fast = false;
        if ((need & WEFT__REC_RECV) && recs[q].rid != recs[0].rid) fast = false;
    }
    *ran = fast;
    if (fast) weft__region_count_fast(c);
    return WEFT_OK;
}

/* Rank q's buffer at offset off of allocation id; this rank holds every
 * peer's mapping of an allocation its own buffer lies in, so NULL means
 * the records are corrupt. */
static weft_err peer_buf(weft_comm *c, uint32_t id, uint32_t q, uint64_t off, size_t off2,
                         unsigned char **out, weft_diag *d)
{
    unsigned char *base = weft__region_peer(c, id, q);
    if (!base) {
        weft_diag_set(d, WEFT_EPARSE, "comm: rank %u has no mapping of rank %u's allocation %u",
                      c->rank, q, id);
        return weft__comm_fail(c, WEFT_EPARSE, d);
    }
    *out = base + off + off2;
    return WEFT_OK;
}

/* dst[i][0 .. bytes) = src[0] op src[1] ... op src[nsrc-1] for every
 * i < ndst, piece by piece (see the top of the file). */
static void combine(weft_comm *c, unsigned char *const *src, uint32_t nsrc,
                    unsigned char *const *dst, uint32_t ndst, size_t bytes, size_t es,
                    weft__reduce_fn fn, bool nt)
{
    unsigned char *work = weft__region_work(c);
    for (size_t o = 0; o < bytes; o += WEFT__REGION_WORK) {
        size_t k = bytes - o < WEFT__REGION_WORK ? bytes - o : WEFT__REGION_WORK;
        memcpy(work, src[0] + o, k);
        for (uint32_t q = 1; q < nsrc; q++)
            fn(work, src[q] + o, k / es);
        for (uint32_t i = 0; i < ndst; i++) {
            if (nt)
                weft__copy_nt(dst[i] + o, work, k);
            else
                memcpy(dst[i] + o, work, k);
        }
    }
}

weft_err weft__shared_allreduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                size_t es, weft__reduce_fn fn, bool *ran, weft_diag *d)
{
    *ran = false;
    if (!weft__region_usable(c)) return WEFT_OK;
    size_t bytes = count * es;
    uint64_t seq;
    weft_err e = agree(c, KIND_ALLREDUCE, sendbuf, bytes, recvbuf, bytes, bytes,
                       WEFT__REC_SEND | WEFT__REC_RECV, &seq, ran, d);
    if (e || !*ran) return e;
    uint32_t n = c->size, r = c->rank;
    size_t lo = (size_t)((unsigned __int128)count * r / n) * es;
    size_t hi = (size_t)((unsigned __int128)count * (r + 1) / n) * es;
    const weft__region_rec *recs = weft__region_recs(c);
    unsigned char **src = weft__region_ptrs(c), **dst = src + n;
    for (uint32_t q = 0; q < n && !e; q++) {
        e = peer_buf(c, recs[q].sid, q, recs[q].soff, lo, &src[q], d);
        if (!e) e = peer_buf(c, recs[q].rid, q, recs[q].roff, lo, &dst[q], d);
    }
    if (e) return e;
    combine(c, src, n, dst, n, hi - lo, es, fn, bytes >= SHARED_NT_MIN_BYTES);
    return weft__region_done(c, seq, d);
}

weft_err weft__shared_reduce_scatter(weft_comm *c, const void *sendbuf, void *recvbuf,
                                     size_t count, size_t es, weft__reduce_fn fn, bool *ran,
                                     weft_diag *d)
{
    *ran = false;
    if (!weft__region_usable(c)) return WEFT_OK;
    size_t block = count * es, total = block * c->size;
    uint64_t seq;
    weft_err e = agree(c, KIND_REDUCE_SCATTER, sendbuf, total, recvbuf, block, total,
                       WEFT__REC_SEND, &seq, ran, d);
    if (e || !*ran) return e;
    uint32_t n = c->size, r = c->rank;
    const weft__region_rec *recs = weft__region_recs(c);
    unsigned char **src = weft__region_ptrs(c), *out = recvbuf;
    for (uint32_t q = 0; q < n && !e; q++)
        e = peer_buf(c, recs[q].sid, q, recs[q].soff, (size_t)r * block, &src[q], d);
    if (e) return e;
    combine(c, src, n, &out, 1, block, es, fn, total >= SHARED_NT_MIN_BYTES);
    return weft__region_done(c, seq, d);
}

weft_err weft__shared_allgather(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                size_t es, bool *ran, weft_diag *d)
{
    *ran = false;
    if (!weft__region_usable(c)) return WEFT_OK;
    size_t block = count * es, total = block * c->size;
    uint64_t seq;
    weft_err e = agree(c, KIND_ALLGATHER, NULL, 0, recvbuf, total, total, WEFT__REC_RECV, &seq,
                       ran, d);
    if (e || !*ran) return e;
    uint32_t n = c->size, r = c->rank;
    const weft__region_rec *recs = weft__region_recs(c);
    unsigned char **dst = weft__region_ptrs(c);
    const unsigned char *in = sendbuf;
    uint32_t ndst = 0;
    for (uint32_t q = 0; q < n && !e; q++) {
        e = peer_buf(c, recs[q].rid, q, recs[q].roff, (size_t)r * block, &dst[ndst], d);
        if (!e && dst[ndst] != in) ndst++; /* in place: our own block is there */
    }
    if (e) return e;
    bool nt = total >= SHARED_NT_MIN_BYTES;
    for (size_t o = 0; o < block; o += WEFT__REGION_WORK) {
        size_t k = block - o < WEFT__REGION_WORK ? block - o : WEFT__REGION_WORK;
        for (uint32_t i = 0; i < ndst; i++) {
            if (nt)
                weft__copy_nt(dst[i] + o, in + o, k);
            else
                memcpy(dst[i] + o, in + o, k);
        }
    }
    return weft__region_done(c, seq, d);
}
