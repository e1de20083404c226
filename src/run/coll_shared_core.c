/* The pieces every single-pass collective uses (coll_shared_core.h): the
 * per-call agreement, the peers' buffers, and the tile and line loops; the
 * design is described at the top of coll_shared.c. */
#include <string.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "run/call_agree.h"
#include "run/coll_shared_core.h"
#include "run/comm_fail.h"
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
    if (weft__region_find(c, recvbuf, rbytes, &me.rid, &me.roff))
        me.flags |= WEFT__REC_RECV;
    weft__region_rec *recs = weft__region_recs(c);
    weft_err e = weft__region_post(c, &me, recs, d);
    if (e)
        return e;
    *seq = me.seq;
    if ((e = weft__call_check_recs(c, recs, d)))
        return e;
    bool fast = true;
    for (uint32_t q = 0; q < c->size; q++) {
        if ((recs[q].flags & need) != need)
            fast = false;
        if ((need & WEFT__REC_SEND) && recs[q].sid != recs[0].sid)
            fast = false;
        if ((need & WEFT__REC_RECV) && recs[q].rid != recs[0].rid)
            fast = false;
    }
    *ran = fast;
    if (fast)
        weft__region_count_fast(c);
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
    if (!aligned)
        head = 0;
    size_t end = head < bytes ? head + ((bytes - head) & ~(size_t)63) : head;
    if (nsrc < 2 || !red->lines || (nt && !aligned) || end == head) {
        combine_tiles(work, src, nsrc, dst, ndst, 0, bytes, red, nt);
    } else {
        combine_tiles(work, src, nsrc, dst, ndst, 0, head, red, nt);
        red->lines(dst, ndst, (const unsigned char *const *)src, nsrc, head, end, nt);
        combine_tiles(work, src, nsrc, dst, ndst, end, bytes, red, nt);
    }
    if (nt)
        weft__copy_nt_fence();
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
    if (nt)
        weft__copy_nt_fence();
}
