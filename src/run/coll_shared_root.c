/* Single-pass broadcast and reduce on weft_comm_alloc memory (see
 * coll_shared.c for the scheme, the agreement and the tiles).
 *
 * broadcast: rank r copies block r (elements [r*count/n, (r+1)*count/n))
 *   of the root's sendbuf into the recvbuf of every other rank (and of the
 *   root, out of place). The copying is spread over every rank: each reads
 *   1/n of the buffer and writes (n-1)/n of it. The alternative, every
 *   rank copying the whole root buffer into its own recvbuf, does twice
 *   the work per rank: as fast up to 256 KiB, slower from 1-4 MiB on
 *   (docs/interop.md). Below 1 MiB the ordinary chain is faster still
 *   (WEFT__SHARED_BCAST_MIN_BYTES).
 * reduce: rank r reads block r of every rank's sendbuf, combines them in
 *   rank order ((in_0 op in_1) op in_2 ..., as the single-pass allreduce,
 *   so the root's result equals a single-pass allreduce's bit for bit) and
 *   writes the result into block r of the root's recvbuf only.
 *
 * Which buffers must lie in weft_comm_alloc memory, all in the same
 * allocation (a rank can only see a peer's segment of an allocation it
 * holds itself): broadcast: the root's sendbuf and every other rank's
 * recvbuf; the root's recvbuf out of place may lie anywhere (the root then
 * copies it itself). reduce: every rank's sendbuf and the root's recvbuf
 * (the other ranks' recvbuf is not used). Otherwise every rank runs the
 * ordinary schedule.
 *
 * In place. broadcast: the root's buffer is only read. reduce: block r of
 * the root's buffer is read and written by rank r only, each tile read in
 * full before it is written (weft__shared_combine).
 */
#include <string.h>

#include "run/block.h"
#include "run/coll_shared.h"
#include "run/coll_shared_core.h"
#include "run/comm_fail.h"
#include "run/transport/shm/region.h"

/* True when rank q's record shows that it holds allocation id (one of its
 * own buffers of the call lies there). */
static bool shows(const weft__region_rec *rq, uint32_t id)
{
    return ((rq->flags & WEFT__REC_SEND) && rq->sid == id) ||
           ((rq->flags & WEFT__REC_RECV) && rq->rid == id);
}

/* weft__shared_agree for a collective with a root, in two steps.
 *
 * agree_rooted publishes the record and checks it against everyone's (the
 * call's arguments, root included: call_agree.h), and rank q needs `root_need`
 * (WEFT__REC_*) when it is the root and `other_need` otherwise, every
 * needed sendbuf in one allocation and every needed recvbuf in one
 * allocation (the two may differ). *ok says whether they do.
 *
 * Every rank reads and writes buffers of both allocations, and a rank sees
 * a peer's segment only while it holds that allocation itself
 * (weft_comm_free_mem is local). When some rank's record does not show that
 * it holds both (its own buffers of the call lie elsewhere, e.g. a non-root
 * of reduce, whose recvbuf is unused), *settle is set: each rank then looks
 * up the peers' buffers it needs and settle() exchanges a second round of
 * records saying whether it found them all; the call runs single-pass only
 * if every rank did.
 * The buffers a rank need not pass (broadcast: sendbuf off the root;
 * reduce: recvbuf off the root) are published too when they lie in
 * weft_comm_alloc memory: callers that pass the same buffers on every rank
 * then show that they hold both allocations, and skip the second round. */
static weft_err agree_rooted(weft_comm *c, uint32_t root, const void *sendbuf, const void *recvbuf,
                             size_t bytes, uint32_t root_need, uint32_t other_need, uint64_t *seq,
                             bool *ok, bool *settle, weft_diag *d)
{
    weft__region_rec me = {.seq = weft__region_next_seq(c)};
    weft__call_to_rec(c, &me);
    if (sendbuf && weft__region_find(c, sendbuf, bytes, &me.sid, &me.soff))
        me.flags |= WEFT__REC_SEND;
    if (recvbuf && weft__region_find(c, recvbuf, bytes, &me.rid, &me.roff))
        me.flags |= WEFT__REC_RECV;
    weft__region_rec *recs = weft__region_recs(c);
    weft_err e = weft__region_post(c, &me, recs, d);
    if (e)
        return e;
    *seq = me.seq;
    *ok = *settle = false;
    if ((e = weft__call_check_recs(c, recs, d)))
        return e;
    bool fast = true;
    uint32_t sid = recs[root].sid, rid = recs[root].rid;
    for (uint32_t q = 0; q < c->size; q++) {
        const weft__region_rec *rq = &recs[q];
        uint32_t need = q == root ? root_need : other_need;
        if ((rq->flags & need) != need)
            fast = false;
        if (q != root && (need & WEFT__REC_RECV))
            rid = rq->rid; /* broadcast: the others' */
    }
    for (uint32_t q = 0; q < c->size && fast; q++) {
        uint32_t need = q == root ? root_need : other_need;
        if ((need & WEFT__REC_SEND) && recs[q].sid != sid)
            fast = false;
        if ((need & WEFT__REC_RECV) && recs[q].rid != rid)
            fast = false;
        if (!shows(&recs[q], sid) || !shows(&recs[q], rid))
            *settle = true;
    }
    *ok = fast;
    return WEFT_OK;
}

/* Rank q's buffer at off + off2 of allocation id, or NULL when this rank
 * does not hold the allocation. */
static unsigned char *peer_or_null(const weft_comm *c, uint32_t id, uint32_t q, uint64_t off,
                                   size_t off2)
{
    unsigned char *base = weft__region_peer(c, id, q);
    return base ? base + off + off2 : NULL;
}

/* The end of the agreement: without *settle, *ran = ok, and a missing
 * buffer (have false) means corrupt records; with it, the second round
 * (see agree_rooted). Counts the call when it runs single-pass. */
static weft_err settle(weft_comm *c, uint32_t kind, uint32_t root, size_t bytes, bool need_round,
                       bool have, uint64_t *seq, bool *ran, weft_diag *d)
{
    *ran = false;
    if (need_round) {
        weft__region_rec again = {.seq = weft__region_next_seq(c),
                                  .flags = have ? WEFT__REC_HOLDS : 0};
        weft__call_to_rec(c, &again);
        weft__region_rec *recs = weft__region_recs(c);
        weft_err e = weft__region_post(c, &again, recs, d);
        if (e)
            return e;
        *seq = again.seq;
        for (uint32_t q = 0; q < c->size; q++)
            if (!(recs[q].flags & WEFT__REC_HOLDS))
                return WEFT_OK;
    } else if (!have) {
        weft_diag_set(d, WEFT_EPARSE, "comm: rank %u has no mapping of a peer's %s buffer", c->rank,
                      weft__shared_kind_name(kind));
        return weft__comm_fail(c, WEFT_EPARSE, d);
    }
    *ran = true;
    weft__region_count_fast(c);
    return WEFT_OK;
}

weft_err weft__shared_broadcast(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                size_t es, uint32_t root, bool *ran, weft_diag *d)
{
    *ran = false;
    uint32_t n = c->size, r = c->rank;
    size_t bytes = count * es;
    if (!weft__region_usable(c) || bytes < WEFT__SHARED_BCAST_MIN_BYTES)
        return WEFT_OK;
    uint64_t seq;
    bool ok, round2;
    weft_err e = agree_rooted(c, root, sendbuf, recvbuf, bytes, WEFT__REC_SEND, WEFT__REC_RECV,
                              &seq, &ok, &round2, d);
    if (e || !ok)
        return e;
    size_t lo = weft__block_at(count, n, r) * es, hi = weft__block_at(count, n, r + 1) * es;
    const weft__region_rec *recs = weft__region_recs(c);
    unsigned char **dst = weft__region_ptrs(c);
    unsigned char *src = peer_or_null(c, recs[root].sid, root, recs[root].soff, lo);
    bool have = src != NULL;
    uint32_t ndst = 0;
    for (uint32_t q = 0; q < n; q++) {
        const weft__region_rec *rq = &recs[q];
        /* The root's recvbuf: in place, or filled by the root itself when
         * it lies outside the others' allocation. */
        if (q == root && (!(rq->flags & WEFT__REC_RECV) || rq->rid != recs[(root + 1) % n].rid ||
                          (rq->rid == rq->sid && rq->roff == rq->soff)))
            continue;
        dst[ndst] = peer_or_null(c, rq->rid, q, rq->roff, lo);
        have = have && dst[ndst++];
    }
    if ((e = settle(c, WEFT__SHARED_BROADCAST, root, bytes, round2, have, &seq, ran, d)) || !*ran)
        return e;
    bool own = r == root && sendbuf != recvbuf &&
               !((recs[r].flags & WEFT__REC_RECV) && recs[r].rid == recs[(root + 1) % n].rid);
    if (own)
        memcpy(recvbuf, sendbuf, bytes);
    weft__shared_spread(src, dst, ndst, hi - lo, bytes >= WEFT__SHARED_NT_MIN_BYTES);
    return weft__region_done(c, seq, d);
}

weft_err weft__shared_reduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                             const weft__reducer *red, uint32_t root, bool *ran, weft_diag *d)
{
    size_t es = red->es;
    *ran = false;
    if (!weft__region_usable(c))
        return WEFT_OK;
    uint32_t n = c->size, r = c->rank;
    size_t bytes = count * es;
    uint64_t seq;
    bool ok, round2;
    weft_err e = agree_rooted(c, root, sendbuf, recvbuf, bytes, WEFT__REC_SEND | WEFT__REC_RECV,
                              WEFT__REC_SEND, &seq, &ok, &round2, d);
    if (e || !ok)
        return e;
    size_t lo = weft__block_at(count, n, r) * es, hi = weft__block_at(count, n, r + 1) * es;
    const weft__region_rec *recs = weft__region_recs(c);
    unsigned char **src = weft__region_ptrs(c), **out = src + n;
    bool have = true;
    for (uint32_t q = 0; q < n; q++)
        have = (src[q] = peer_or_null(c, recs[q].sid, q, recs[q].soff, lo)) && have;
    have = (*out = peer_or_null(c, recs[root].rid, root, recs[root].roff, lo)) && have;
    if ((e = settle(c, WEFT__SHARED_REDUCE, root, bytes, round2, have, &seq, ran, d)) || !*ran)
        return e;
    weft__shared_combine(weft__region_work(c), src, n, out, 1, hi - lo, red,
                         bytes >= WEFT__SHARED_NT_MIN_BYTES);
    return weft__region_done(c, seq, d);
}
