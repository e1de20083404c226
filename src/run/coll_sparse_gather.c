/* The all-gather of the sparse all-reduce's unions in chunks
 * (coll_sparse.h, weft__sparse_gather_chunks): each owner's union leaves
 * as it is packed, a chunk at a time, and every rank consumes each chunk
 * of every owner as soon as it is in.
 *
 * One message per peer made the union's pack a step between the phases
 * (nothing left before the last pair was packed) and the scatter a step
 * after them: the unions of every owner share each link and arrive
 * together, at the end, so every rank scattered three of them (on 4
 * ranks) after its last byte was in. In chunks the pack of chunk i + 1
 * runs while chunk i is on the wire, and what is left after the last byte
 * is one chunk's scatter per owner.
 *
 * The count goes first, then the chunks right behind it, none waiting for
 * any other rank's count (a count would otherwise queue behind the bulk
 * that every link still carries and hold every send back). A peer's chunk
 * receives are posted once its count is in, at the next 8-byte boundary of
 * one receive buffer sized first for the pairs of every rank (no union is
 * larger than what its owner received): the communicator's scratch, kept
 * between calls (weft__comm_scratch), as the ring's is. Blocks allocated
 * and freed every call (one per peer, or one for all) made the heap
 * shrink and grow back, page faults and all, every call: over a tenth of
 * the call's CPU time on 4 ranks at 5 %. */
#include <string.h>

#include "base/alloc.h"
#include "run/clock.h"
#include "run/coll_sparse.h"
#include "run/comm_fail.h"
#include "run/comm_internal.h"
#include "run/p2p.h"

size_t weft__sparse_chunk_bytes = WEFT__SPARSE_CHUNK_BYTES;

size_t weft__sparse_chunk_pairs(size_t per)
{
    size_t c = weft__sparse_chunk_bytes / per;
    return c > 2 ? c & ~(size_t)1 : 2;
}

typedef struct peer {
    uint64_t word;      /* its count as it arrives (the peer's), or ours to send */
    size_t count, nch;  /* pairs, chunks */
    size_t avail, done; /* chunks in (or, for this rank, packed); consumed */
    unsigned char *buf; /* its union (this rank's: the caller's; others' in rbuf) */
    weft__xreq *rreq;   /* nch chunk receives, posted once the count is in */
    weft__xreq cw_send, cw_recv;
    bool counted;
} peer;

typedef struct gather {
    weft_comm *c;
    size_t per, cp;
    unsigned char *rbuf; /* the peers' unions (the communicator's scratch) */
    size_t cap, used;    /* rbuf's bytes; taken */
    peer *p;
    weft__xreq *sreq; /* this rank's chunk sends, (n - 1) per chunk */
    size_t nsend;
    uint32_t counted; /* peers whose count is in, this rank included */
    bool wait_counts;
    size_t *counts; /* every rank's count as it arrives */
    weft__sparse_put put;
    void *put_arg;
    weft_err ce; /* the first error of put: consuming stops, the transfers go on */
} gather;

static size_t chunk_len(const gather *g, const peer *q, size_t i)
{
    return i + 1 < q->nch ? g->cp : q->count - i * g->cp;
}

/* Posts the chunk receives of every peer whose count came in since the last
 * call; consumes the chunks that are in (all of them once every count is,
 * when wait_counts). *moved when anything changed. */
static weft_err service(gather *g, bool *moved, weft_diag *d)
{
    weft_comm *c = g->c;
    uint32_t n = c->size;
    for (uint32_t j = 0; j < n; j++) {
        peer *q = &g->p[j];
        if (j == c->rank || q->counted || !q->cw_recv.complete)
            continue;
        q->counted = true;
        g->counted++;
        *moved = true;
        if (q->word > (g->cap - g->used) / g->per)
            /* Sends are in flight: fail the communicator (its transports
             * drop them) rather than leave them to a freed buffer. */
            return weft__comm_fail(c,
                                   weft_diag_set(d, WEFT_EPARSE,
                                                 "sparse allreduce: the unions announced pass the "
                                                 "pairs of every rank (%zu bytes; rank %u's of "
                                                 "%llu pairs does not fit)",
                                                 g->cap, j, (unsigned long long)q->word),
                                   d);
        q->count = (size_t)q->word;
        g->counts[j] = q->count;
        q->nch = (q->count + g->cp - 1) / g->cp;
        q->buf = g->rbuf + g->used;
        g->used += (q->count * g->per + 7) & ~(size_t)7;
        q->rreq = weft__malloc((q->nch ? q->nch : 1) * sizeof *q->rreq);
        if (!q->rreq)
            return weft__comm_fail(c, weft_diag_code(d, WEFT_ENOMEM), d);
        for (size_t i = 0; i < q->nch; i++) {
            q->rreq[i] = (weft__xreq){
                .peer = j, .buf = q->buf + i * g->cp * g->per, .len = chunk_len(g, q, i) * g->per};
            weft_err e = weft__comm_post(c, &q->rreq[i], d);
            if (e)
                return e;
        }
    }
    if (g->wait_counts && g->counted < n)
        return WEFT_OK;
    for (uint32_t j = 0; j < n; j++) {
        peer *q = &g->p[j];
        if (j != c->rank)
            while (q->avail < q->nch && q->rreq[q->avail].complete)
                q->avail++;
        for (; q->done < q->avail; q->done++) {
            *moved = true;
            if (!g->ce)
                g->ce = g->put(g->put_arg, q->buf + q->done * g->cp * g->per,
                               chunk_len(g, q, q->done), d);
        }
    }
    return WEFT_OK;
}

static bool finished(const gather *g)
{
    for (uint32_t j = 0; j < g->c->size; j++) {
        const peer *q = &g->p[j];
        if (j != g->c->rank && (!q->cw_send.complete || !q->counted))
            return false;
        if (q->done < q->nch)
            return false;
    }
    for (size_t i = 0; i < g->nsend; i++)
        if (!g->sreq[i].complete)
            return false;
    return true;
}

/* The first peer with a request still open, for the stall's message. */
static uint32_t waiting_for(const gather *g)
{
    for (uint32_t j = 0; j < g->c->size; j++) {
        const peer *q = &g->p[j];
        if (j != g->c->rank && (!q->counted || q->done < q->nch || !q->cw_send.complete))
            return j;
    }
    for (size_t i = 0; i < g->nsend; i++)
        if (!g->sreq[i].complete)
            return g->sreq[i].peer;
    return 0;
}

static weft_err run(gather *g, size_t u, unsigned char *sbuf, weft__sparse_fill fill,
                    void *fill_arg, weft_diag *d)
{
    weft_comm *c = g->c;
    uint32_t n = c->size, me = c->rank;
    peer *mine = &g->p[me];
    mine->count = u;
    mine->nch = (u + g->cp - 1) / g->cp;
    mine->buf = sbuf;
    mine->counted = true;
    mine->word = u;
    g->counts[me] = u;
    g->counted = 1;
    weft_err e = WEFT_OK;
    /* Counts: the receives first (from me - k), then the sends (to me + k). */
    for (uint32_t k = 1; k < n && !e; k++) {
        peer *q = &g->p[(me + n - k) % n];
        q->cw_recv = (weft__xreq){
            .peer = (me + n - k) % n, .buf = (unsigned char *)&q->word, .len = sizeof q->word};
        e = weft__comm_post(c, &q->cw_recv, d);
    }
    for (uint32_t k = 1; k < n && !e; k++) {
        peer *q = &g->p[(me + k) % n];
        q->cw_send = (weft__xreq){.peer = (me + k) % n,
                                  .is_send = true,
                                  .buf = (unsigned char *)&mine->word,
                                  .len = sizeof mine->word};
        e = weft__comm_post(c, &q->cw_send, d);
    }
    bool moved = false;
    /* Each chunk to every peer as soon as it is packed, the transports
     * moving what they can before the next is packed. */
    for (size_t i = 0; i < mine->nch && !e; i++) {
        unsigned char *chunk = sbuf + i * g->cp * g->per;
        fill(fill_arg, i * g->cp, chunk_len(g, mine, i), chunk);
        for (uint32_t k = 1; k < n && !e; k++) {
            weft__xreq *r = &g->sreq[g->nsend++];
            *r = (weft__xreq){.peer = (me + k) % n,
                              .is_send = true,
                              .buf = chunk,
                              .len = chunk_len(g, mine, i) * g->per};
            e = weft__comm_post(c, r, d);
        }
        mine->avail = i + 1;
        if (!e)
            e = weft__comm_kick(c, d);
        if (!e)
            e = service(g, &moved, d);
    }
    int64_t last = weft__now_ns();
    while (!e && !finished(g)) {
        moved = false;
        e = service(g, &moved, d);
        if (e || finished(g))
            break;
        if (!moved)
            e = weft__comm_progress(c, &moved, d);
        int64_t now = weft__now_ns();
        if (moved)
            last = now;
        else if (!e && now - last > c->timeout_ns)
            e = weft__comm_stalled(c, waiting_for(g), d);
    }
    return e ? e : g->ce;
}

weft_err weft__sparse_gather_chunks(weft_comm *c, size_t per, size_t u, unsigned char *sbuf,
                                    size_t bound, weft__sparse_fill fill, void *fill_arg,
                                    bool wait_counts, size_t *counts, weft__sparse_put put,
                                    void *put_arg, weft_diag *d)
{
    uint32_t n = c->size;
    size_t cp = weft__sparse_chunk_pairs(per), nch = (u + cp - 1) / cp;
    gather g = {.c = c,
                .per = per,
                .cp = cp,
                .cap = bound * per + 8 * (size_t)n,
                .wait_counts = wait_counts,
                .counts = counts,
                .put = put,
                .put_arg = put_arg};
    g.p = weft__calloc(n, sizeof *g.p);
    g.sreq = weft__malloc((nch ? nch * (n - 1) : 1) * sizeof *g.sreq);
    g.rbuf = weft__comm_scratch(c, g.cap);
    /* Out of memory fails the communicator: the peers' unions are on
     * their way. */
    weft_err e = g.p && g.sreq && g.rbuf ? run(&g, u, sbuf, fill, fill_arg, d)
                                         : weft__comm_fail(c, weft_diag_code(d, WEFT_ENOMEM), d);
    for (uint32_t j = 0; g.p && j < n; j++) {
        if (j != c->rank)
            weft__free(g.p[j].rreq);
    }
    weft__free(g.sreq);
    weft__free(g.p);
    return e;
}
