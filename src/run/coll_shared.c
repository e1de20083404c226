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
 * Each block is combined line by line (64 bytes) in vector registers by
 * the reduction's line kernel (reduce.h), which reads a line of every
 * source and writes it to every destination, with streaming stores for
 * large calls (fenced once at the end). The 2-rank allreduce ran at
 * 0.6-0.7 of a single-core copy when each block went in tiles through a
 * work area, one kernel call per tile and source; the line kernels nearly
 * doubled it at 1-16 MiB and reach 0.94-1.07 at 256 MiB (bench/run.sh;
 * docs/interop.md). The bytes
 * before the destinations' first line boundary and after their last, and
 * destinations that lie differently across lines, still go tile by tile
 * through the work area.
 *
 * Agreement. Whether a call may run this way depends on every rank's
 * pointers, so each call first publishes a record (which allocation and
 * offset hold its buffers, and the call's arguments, call_agree.h) and waits for
 * everyone's (weft__region_post): all ranks then decide from the same
 * records, so they decide alike. The publication is also the barrier that
 * says every sendbuf is ready. Records are only exchanged when every peer
 * is on shared memory and a weft_comm_alloc has succeeded, which every
 * rank knows alike. A second barrier (weft__region_done) ends the call
 * once every rank finished writing (and reading: a rank may reuse its
 * sendbuf after the call).
 *
 * In place. Block r of any rank's buffers is read and written by rank r
 * only, and each line or tile is read in full (from every rank) before it is
 * written, so in place needs no extra copy.
 */
#include <string.h>

#include "run/block.h"
#include "run/coll_shared.h"
#include "run/coll_shared_core.h"
#include "run/coll_small.h"
#include "run/transport/shm/region.h"

weft_err weft__shared_allreduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                const weft__reducer *red, bool *ran, weft_diag *d)
{
    *ran = false;
    size_t es = red->es, bytes = count * es;
    if (weft__small_allreduce_fits(c, bytes)) {
        *ran = true;
        return weft__small_allreduce(c, sendbuf, recvbuf, count, red, d);
    }
    if (!weft__region_usable(c))
        return WEFT_OK;
    uint64_t seq;
    weft_err e = weft__shared_agree(c, sendbuf, bytes, recvbuf, bytes,
                                    WEFT__REC_SEND | WEFT__REC_RECV, &seq, ran, d);
    if (e || !*ran)
        return e;
    /* With more ranks than CPUs only as many ranks as CPUs combine (the
     * blocks are cut among them) while the others wait asleep: the work is
     * the same, but ranks taking turns on a core switch streams and caches
     * mid-block (4 ranks on 2 cores, 256 MiB: 44.5 -> 42.0 ms per call,
     * 16 MiB: 2.31 -> 2.24 ms; bench_run_best, medians of 4 alternated
     * runs). */
    uint32_t n = c->size, r = c->rank, w = weft__region_workers(c);
    if (r >= w)
        return weft__region_done(c, seq, d);
    size_t lo = weft__block_at(count, w, r) * es, hi = weft__block_at(count, w, r + 1) * es;
    const weft__region_rec *recs = weft__region_recs(c);
    unsigned char **src = weft__region_ptrs(c), **dst = src + n;
    for (uint32_t q = 0; q < n && !e; q++) {
        e = weft__shared_peer_buf(c, recs[q].sid, q, recs[q].soff, lo, &src[q], d);
        if (!e)
            e = weft__shared_peer_buf(c, recs[q].rid, q, recs[q].roff, lo, &dst[q], d);
    }
    if (e)
        return e;
    weft__shared_combine(weft__region_work(c), src, n, dst, n, hi - lo, red,
                         bytes >= WEFT__SHARED_NT_MIN_BYTES);
    return weft__region_done(c, seq, d);
}

weft_err weft__shared_reduce_scatter(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                     const weft__reducer *red, bool *ran, weft_diag *d)
{
    *ran = false;
    if (!weft__region_usable(c))
        return WEFT_OK;
    size_t block = count * red->es, total = block * c->size;
    uint64_t seq;
    weft_err e =
        weft__shared_agree(c, sendbuf, total, recvbuf, block, WEFT__REC_SEND, &seq, ran, d);
    if (e || !*ran)
        return e;
    uint32_t n = c->size, r = c->rank;
    const weft__region_rec *recs = weft__region_recs(c);
    unsigned char **src = weft__region_ptrs(c), *out = recvbuf;
    for (uint32_t q = 0; q < n && !e; q++)
        e = weft__shared_peer_buf(c, recs[q].sid, q, recs[q].soff, (size_t)r * block, &src[q], d);
    if (e)
        return e;
    weft__shared_combine(weft__region_work(c), src, n, &out, 1, block, red,
                         total >= WEFT__SHARED_NT_MIN_BYTES);
    return weft__region_done(c, seq, d);
}

weft_err weft__shared_allgather(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                size_t es, bool *ran, weft_diag *d)
{
    *ran = false;
    if (!weft__region_usable(c))
        return WEFT_OK;
    size_t block = count * es, total = block * c->size;
    uint64_t seq;
    weft_err e = weft__shared_agree(c, NULL, 0, recvbuf, total, WEFT__REC_RECV, &seq, ran, d);
    if (e || !*ran)
        return e;
    uint32_t n = c->size, r = c->rank;
    const weft__region_rec *recs = weft__region_recs(c);
    unsigned char **dst = weft__region_ptrs(c);
    const unsigned char *in = sendbuf;
    uint32_t ndst = 0;
    for (uint32_t q = 0; q < n && !e; q++) {
        e = weft__shared_peer_buf(c, recs[q].rid, q, recs[q].roff, (size_t)r * block, &dst[ndst],
                                  d);
        if (!e && dst[ndst] != in)
            ndst++; /* in place: our own block is there */
    }
    if (e)
        return e;
    weft__shared_spread(in, dst, ndst, block, total >= WEFT__SHARED_NT_MIN_BYTES);
    return weft__region_done(c, seq, d);
}
