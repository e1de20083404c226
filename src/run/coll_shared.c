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
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "run/coll_shared.h"
#include "run/coll_shared_core.h"
#include "run/coll_small.h"
#include "run/copy_nt.h"
#include "run/transport/shm/region.h"

const char *weft__shared_kind_name(uint32_t kind)
{
    static const char *const names[] = {"?",         "allreduce", "reduce-scatter", "allgather",
                                        "broadcast", "reduce",    "alltoall"};
    return names[kind < sizeof names / sizeof names[0] ? kind : 0];
}

/* Publishes this rank's record and decides with everyone's: *ran stays
 * false (the ordinary path) unless every rank's buffers that `need`s
 * (WEFT__REC_*) lie in one and the same allocation. */
weft_err weft__shared_agree(weft_comm *c, const void *sendbuf, size_t sbytes, const void *recvbuf,
                            size_t rbytes, uint32_t need, uint64_t *seq, bool *ran, weft_diag *d)
{
    weft__region_rec me = {.seq = weft__region_next_seq(c)};
    weft__call_to_rec(c, &me);
    if (sendbuf && weft__region_find(c, sendbuf, sbytes, &me.sid, &me.soff))
        me.flags |= WEFT__REC_SEND;
    if (weft__region_find(c, recvbuf, rbytes, &me.rid, &me.roff)) me.flags |= WEFT__REC_RECV;
    weft__region_rec *recs = weft__region_recs(c);
    weft_err e = weft__region_post(c, &me, recs, d);
    if (e) return e;
    *seq = me.seq;
    if ((e = weft__call_check_recs(c, recs, d))) return e;
    bool fast = true;
    for (uint32_t q = 0; q < c->size; q++) {
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
weft_err weft__shared_peer_buf(weft_comm *c, uint32_t id, uint32_t q, uint64_t off, size_t off2,
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

/* memcpy of at most a tile. gcc knows the size is at most WEFT__SHARED_TILE and
 * inlines memcpy as `rep movs`, which ran the 2-rank allreduce at a
 * quarter of the rate of this plain vector loop on the development host's
 * AMD EPYC (docs/interop.md). */
static void tile_copy(unsigned char *dst, const unsigned char *src, size_t n)
{
#if defined(__x86_64__)
    size_t body = n & ~(size_t)63;
    for (size_t i = 0; i < body; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 48));
        _mm_storeu_si128((__m128i *)(void *)(dst + i), a);
        _mm_storeu_si128((__m128i *)(void *)(dst + i + 16), b);
        _mm_storeu_si128((__m128i *)(void *)(dst + i + 32), c);
        _mm_storeu_si128((__m128i *)(void *)(dst + i + 48), e);
    }
    for (size_t i = body; i < n; i++)
        dst[i] = src[i];
#else
    memcpy(dst, src, n);
#endif
}

/* Bytes [lo, hi) of weft__shared_combine through the work area, one call
 * per kernel and tile: for the parts the line kernel cannot take. */
static void combine_tiles(unsigned char *work, unsigned char *const *src, uint32_t nsrc,
                          unsigned char *const *dst, uint32_t ndst, size_t lo, size_t hi,
                          const weft__reducer *red, bool nt)
{
    for (size_t o = lo; o < hi; o += WEFT__SHARED_TILE) {
        size_t k = hi - o < WEFT__SHARED_TILE ? hi - o : WEFT__SHARED_TILE;
        tile_copy(work, src[0] + o, k);
        for (uint32_t q = 1; q < nsrc; q++)
            red->pair(work, src[q] + o, k / red->es);
        for (uint32_t i = 0; i < ndst; i++) {
            if (nt)
                weft__copy_nt_unfenced(dst[i] + o, work, k);
            else
                tile_copy(dst[i] + o, work, k);
        }
    }
}

/* The whole lines in the middle go to the tier's line kernel in one call;
 * the bytes before the destinations' first 64-byte boundary and after
 * their last go through the work area, and so does everything when the
 * destinations lie at different offsets from a boundary or the boundary
 * splits an element, if the stores stream (they need whole lines). */
void weft__shared_combine(unsigned char *work, unsigned char *const *src, uint32_t nsrc,
                          unsigned char *const *dst, uint32_t ndst, size_t bytes,
                          const weft__reducer *red, bool nt)
{
    size_t head = (size_t)(-(uintptr_t)dst[0] & 63);
    bool aligned = head % red->es == 0;
    for (uint32_t i = 1; i < ndst; i++)
        aligned = aligned && (((uintptr_t)dst[i] ^ (uintptr_t)dst[0]) & 63) == 0;
    if (!aligned) head = 0;
    size_t end = head < bytes ? head + ((bytes - head) & ~(size_t)63) : head;
    if (nsrc < 2 || !red->lines || (nt && !aligned) || end == head) {
        combine_tiles(work, src, nsrc, dst, ndst, 0, bytes, red, nt);
    } else {
        combine_tiles(work, src, nsrc, dst, ndst, 0, head, red, nt);
        red->lines(dst, ndst, (const unsigned char *const *)src, nsrc, head, end, nt);
        combine_tiles(work, src, nsrc, dst, ndst, end, bytes, red, nt);
    }
    if (nt) weft__copy_nt_fence();
}

/* dst[i][0 .. bytes) = src for every i < ndst, tile by tile. */
void weft__shared_spread(const unsigned char *src, unsigned char *const *dst, uint32_t ndst,
                         size_t bytes, bool nt)
{
    for (size_t o = 0; o < bytes; o += WEFT__SHARED_TILE) {
        size_t k = bytes - o < WEFT__SHARED_TILE ? bytes - o : WEFT__SHARED_TILE;
        for (uint32_t i = 0; i < ndst; i++) {
            if (nt)
                weft__copy_nt_unfenced(dst[i] + o, src + o, k);
            else
                tile_copy(dst[i] + o, src + o, k);
        }
    }
    if (nt) weft__copy_nt_fence();
}

weft_err weft__shared_allreduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                const weft__reducer *red, bool *ran, weft_diag *d)
{
    *ran = false;
    size_t es = red->es, bytes = count * es;
    if (weft__small_allreduce_fits(c, bytes)) {
        *ran = true;
        return weft__small_allreduce(c, sendbuf, recvbuf, count, red, d);
    }
    if (!weft__region_usable(c)) return WEFT_OK;
    uint64_t seq;
    weft_err e = weft__shared_agree(c, sendbuf, bytes, recvbuf, bytes,
                                    WEFT__REC_SEND | WEFT__REC_RECV, &seq, ran, d);
    if (e || !*ran) return e;
    /* With more ranks than CPUs only as many ranks as CPUs combine (the
     * blocks are cut among them) while the others wait asleep: the work is
     * the same, but ranks taking turns on a core switch streams and caches
     * mid-block (4 ranks on 2 cores, 256 MiB: 44.5 -> 42.0 ms per call,
     * 16 MiB: 2.31 -> 2.24 ms; bench_run_best, medians of 4 alternated
     * runs). */
    uint32_t n = c->size, r = c->rank, w = weft__region_workers(c);
    if (r >= w) return weft__region_done(c, seq, d);
    size_t lo = (size_t)((unsigned __int128)count * r / w) * es;
    size_t hi = (size_t)((unsigned __int128)count * (r + 1) / w) * es;
    const weft__region_rec *recs = weft__region_recs(c);
    unsigned char **src = weft__region_ptrs(c), **dst = src + n;
    for (uint32_t q = 0; q < n && !e; q++) {
        e = weft__shared_peer_buf(c, recs[q].sid, q, recs[q].soff, lo, &src[q], d);
        if (!e) e = weft__shared_peer_buf(c, recs[q].rid, q, recs[q].roff, lo, &dst[q], d);
    }
    if (e) return e;
    weft__shared_combine(weft__region_work(c), src, n, dst, n, hi - lo, red,
                         bytes >= WEFT__SHARED_NT_MIN_BYTES);
    return weft__region_done(c, seq, d);
}

weft_err weft__shared_reduce_scatter(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                     const weft__reducer *red, bool *ran, weft_diag *d)
{
    *ran = false;
    if (!weft__region_usable(c)) return WEFT_OK;
    size_t block = count * red->es, total = block * c->size;
    uint64_t seq;
    weft_err e =
        weft__shared_agree(c, sendbuf, total, recvbuf, block, WEFT__REC_SEND, &seq, ran, d);
    if (e || !*ran) return e;
    uint32_t n = c->size, r = c->rank;
    const weft__region_rec *recs = weft__region_recs(c);
    unsigned char **src = weft__region_ptrs(c), *out = recvbuf;
    for (uint32_t q = 0; q < n && !e; q++)
        e = weft__shared_peer_buf(c, recs[q].sid, q, recs[q].soff, (size_t)r * block, &src[q], d);
    if (e) return e;
    weft__shared_combine(weft__region_work(c), src, n, &out, 1, block, red,
                         total >= WEFT__SHARED_NT_MIN_BYTES);
    return weft__region_done(c, seq, d);
}

weft_err weft__shared_allgather(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                size_t es, bool *ran, weft_diag *d)
{
    *ran = false;
    if (!weft__region_usable(c)) return WEFT_OK;
    size_t block = count * es, total = block * c->size;
    uint64_t seq;
    weft_err e = weft__shared_agree(c, NULL, 0, recvbuf, total, WEFT__REC_RECV, &seq, ran, d);
    if (e || !*ran) return e;
    uint32_t n = c->size, r = c->rank;
    const weft__region_rec *recs = weft__region_recs(c);
    unsigned char **dst = weft__region_ptrs(c);
    const unsigned char *in = sendbuf;
    uint32_t ndst = 0;
    for (uint32_t q = 0; q < n && !e; q++) {
        e = weft__shared_peer_buf(c, recs[q].rid, q, recs[q].roff, (size_t)r * block, &dst[ndst],
                                  d);
        if (!e && dst[ndst] != in) ndst++; /* in place: our own block is there */
    }
    if (e) return e;
    weft__shared_spread(in, dst, ndst, block, total >= WEFT__SHARED_NT_MIN_BYTES);
    return weft__region_done(c, seq, d);
}
