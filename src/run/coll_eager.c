/* Pipelined collectives through the eager areas (see coll_eager.h).
 *
 * Why. On ordinary buffers with a CPU per rank, the one-barrier eager
 * paths (coll_small.c) have every rank read every peer's whole input: an
 * allreduce of b bytes on n ranks reads (n - 1) b per rank, so they stop
 * at a few KiB. The single-copy path (coll_cma.c) reads and writes the
 * peers' buffers directly but pays a system call per peer and tile, each
 * pinning the peer's pages: measured on a 16-core host (issue 17, bench/
 * run.sh, Open MPI 4.1.6 vader beside it) a 16 KiB allreduce on 16 ranks
 * ran at 0.40 of Open MPI's busbw, a 1 MiB broadcast at 0.28 (OSU: 1708
 * against 479 us, 15 readers pinning the root's pages at once).
 *
 * How. The eager areas are shared memory every rank maps (two slots per
 * rank, used by calls of odd and even number; region.h's slot rule: a
 * rank writes its slot of call seq again only at seq + 2, after every rank
 * published seq + 1, so a peer's area of seq can be read until this rank
 * publishes seq + 1). A buffer larger than the area goes in chunks, one
 * call number each.
 *  allreduce, reduce: a reduce-scatter then an allgather through the
 *    areas, 2 barriers per chunk, per byte a rank copies in 1, reads 1
 *    (its block of every area) and copies out 1 (reduce: the root only),
 *    against (n - 1) for the one-barrier path. Block q of the chunk is
 *    combined by rank q, in rank order as every other path, into block q
 *    of its own area, which no peer reads before barrier 2.
 *  broadcast: the root copies each chunk into its area; the others copy
 *    it out. One barrier per chunk, and the root fills chunk i + 1 (the
 *    other slot) while the others copy chunk i.
 * Every chunk's record carries the call's arguments (call_agree.h), so
 * ranks that disagree fail at the first chunk, before anything is read,
 * and the communicator stays usable.
 *
 * Limits (weft__eager_fits): 3 or more ranks (2 ranks keep the paths
 * measured for them) and no more ranks than CPUs (with fewer CPUs each
 * barrier waits for ranks to be scheduled, 2 per chunk); any size. On 16
 * ranks of a 16-core host the single-copy allreduce was level with this
 * one at 4 and 16 MiB and slower at 64 MiB (busbw 2.2-2.9 against 2.9-3.9
 * GB/s, Open MPI 0.8-1.1; bench/run.sh, 4, 8 and 16 ranks): the copies
 * in and out run in the cache, chunk by chunk, while single-copy pins
 * every peer's pages for every tile. */
#include "run/coll_eager.h"

#include <string.h>

#include "run/block.h"
#include "run/call_agree.h"
#include "run/coll_shared_core.h"
#include "run/transport/shm/region.h"

bool weft__eager_fits(const weft_comm *c, weft_coll coll, size_t bytes)
{
    if (c->size < 3 || bytes == 0 || !weft__region_eager_bytes(c) || weft__region_oversubscribed(c))
        return false;
    return coll == WEFT_COLL_ALLREDUCE || coll == WEFT_COLL_REDUCE || coll == WEFT_COLL_BROADCAST;
}

/* The two-phase reduction; all: every rank gets the result (allreduce),
 * else the root. */
static weft_err reduce2(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                        const weft__reducer *red, bool all, uint32_t root, weft_diag *d)
{
    uint32_t n = c->size, me = c->rank;
    size_t es = red->es, per = weft__region_eager_bytes(c) / es;
    const unsigned char *in = sendbuf;
    unsigned char *out = recvbuf, **src = weft__region_ptrs(c);
    bool gets = all || me == root;
    for (size_t off = 0; off < count; off += per) {
        size_t k = count - off < per ? count - off : per;
        uint64_t seq = weft__region_next_seq(c);
        memcpy(weft__region_eager(c, me, seq), in + off * es, k * es);
        weft_err e = weft__call_post_seq(c, seq, d);
        if (e)
            return e;
        size_t lo = weft__block_at(k, n, me) * es, hi = weft__block_at(k, n, me + 1) * es;
        unsigned char *dst = weft__region_eager(c, me, seq) + lo;
        for (uint32_t q = 0; q < n; q++)
            src[q] = weft__region_eager(c, q, seq) + lo;
        if (hi > lo)
            weft__shared_combine(weft__region_work(c), src, n, &dst, 1, hi - lo, red, false);
        if (!gets) {
            weft__region_done_signal(c, seq);
            continue;
        }
        if ((e = weft__region_done(c, seq, d)))
            return e;
        for (uint32_t q = 0; q < n; q++) {
            size_t a = weft__block_at(k, n, q) * es, b = weft__block_at(k, n, q + 1) * es;
            memcpy(out + off * es + a, weft__region_eager(c, q, seq) + a, b - a);
        }
    }
    weft__region_count_pipe(c);
    return WEFT_OK;
}

weft_err weft__eager_allreduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               const weft__reducer *red, weft_diag *d)
{
    return reduce2(c, sendbuf, recvbuf, count, red, true, 0, d);
}

weft_err weft__eager_reduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                            const weft__reducer *red, uint32_t root, weft_diag *d)
{
    return reduce2(c, sendbuf, recvbuf, count, red, false, root, d);
}

weft_err weft__eager_broadcast(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               size_t es, uint32_t root, weft_diag *d)
{
    size_t bytes = count * es, per = weft__region_eager_bytes(c);
    bool is_root = c->rank == root;
    const unsigned char *in = sendbuf;
    unsigned char *out = recvbuf;
    for (size_t off = 0; off < bytes; off += per) {
        size_t k = bytes - off < per ? bytes - off : per;
        uint64_t seq = weft__region_next_seq(c);
        if (is_root)
            memcpy(weft__region_eager(c, root, seq), in + off, k);
        weft_err e = weft__call_post_seq(c, seq, d);
        if (e)
            return e;
        if (!is_root)
            memcpy(out + off, weft__region_eager(c, root, seq), k);
    }
    if (is_root && in != out)
        memcpy(out, in, bytes);
    weft__region_count_pipe(c);
    return WEFT_OK;
}
