/* Waiting for requests, and point-to-point messages (see weft/comm.h).
 *
 * One wait loop drives both transports on the caller's thread. When only one
 * transport has work it may block inside it (poll for TCP, spin-yield-sleep
 * for shared memory) for up to WAIT_NS; when both have work, shared memory is
 * polled without waiting and TCP waits at most 50 us, so neither starves the
 * other. The deadline is an inactivity timeout: it restarts whenever any byte
 * moves, so a long transfer never times out while it makes progress.
 */
#include <string.h>

#include "base/alloc.h"

#include "run/clock.h"
#include "run/comm_fail.h"
#include "run/p2p.h"

#define WAIT_NS 100000000LL
#define MIXED_TCP_WAIT_NS 50000LL

weft_err weft__comm_progress(weft_comm *c, bool *moved, weft_diag *d)
{
    bool shm_busy = c->shm && weft__xport_shm.busy(c->shm);
    bool tcp_busy = c->tcp && weft__xport_tcp.busy(c->tcp);
    weft_err e = WEFT_OK;
    if (shm_busy)
        e = weft__xport_shm.progress(c->shm, tcp_busy ? 0 : WAIT_NS, moved, d);
    if (!e && tcp_busy)
        e = weft__xport_tcp.progress(c->tcp, shm_busy ? MIXED_TCP_WAIT_NS : WAIT_NS, moved, d);
    if (e)
        return weft__comm_fail(c, e, d);
    return WEFT_OK;
}

weft_err weft__comm_kick(weft_comm *c, weft_diag *d)
{
    bool moved = false;
    weft_err e = WEFT_OK;
    if (c->shm && weft__xport_shm.busy(c->shm))
        e = weft__xport_shm.progress(c->shm, 0, &moved, d);
    if (!e && c->tcp && weft__xport_tcp.busy(c->tcp))
        e = weft__xport_tcp.progress(c->tcp, 0, &moved, d);
    if (e)
        return weft__comm_fail(c, e, d);
    return WEFT_OK;
}

weft_err weft__comm_stalled(weft_comm *c, uint32_t peer, weft_diag *d)
{
    weft__cause why = {.kind = WEFT__CAUSE_STALLED,
                       .rank = peer,
                       .witness = c->rank,
                       .detail = (uint32_t)(c->timeout_ns / 1000000)};
    weft_diag_set(d, WEFT_ETIMEDOUT, "comm: rank %u waited %u ms for rank %u without progress",
                  c->rank, why.detail, peer);
    return weft__comm_fail_cause(c, WEFT_ETIMEDOUT, &why, d);
}

weft_err weft__comm_wait(weft_comm *c, weft__xreq *const *reqs, size_t n, weft_diag *d)
{
    int64_t last = weft__now_ns();
    for (;;) {
        size_t open = n;
        for (size_t i = 0; i < n; i++)
            open -= reqs[i]->complete;
        if (!open)
            return WEFT_OK;
        bool moved = false;
        weft_err e = weft__comm_progress(c, &moved, d);
        if (e)
            return e;
        int64_t now = weft__now_ns();
        if (moved) {
            last = now;
        } else if (now - last > c->timeout_ns) {
            uint32_t peer = 0;
            for (size_t i = 0; i < n; i++) {
                if (!reqs[i]->complete) {
                    peer = reqs[i]->peer;
                    break;
                }
            }
            return weft__comm_stalled(c, peer, d);
        }
    }
}

weft_err weft__comm_post(weft_comm *c, weft__xreq *r, weft_diag *d)
{
    weft_err e = c->via[r->peer] == WEFT__VIA_SHM ? weft__xport_shm.post(c->shm, r, d)
                                                  : weft__xport_tcp.post(c->tcp, r, d);
    if (e)
        return weft__comm_fail(c, e, d);
    return WEFT_OK;
}

weft_err weft__comm_exchange(weft_comm *c, uint32_t dst, const void *sbuf, size_t sbytes,
                             uint32_t src, void *rbuf, size_t rbytes, weft__reduce_fn reduce,
                             size_t esize, weft_diag *d)
{
    if (c->failed)
        return weft_diag_set(d, WEFT_EPEER, "comm: failed earlier: %s", c->fail_msg);
    if (dst != WEFT__NO_PEER && dst >= c->size)
        return weft_diag_set(d, WEFT_EINVAL, "comm: destination rank %u is not in 0 .. %u", dst,
                             c->size - 1);
    if (src != WEFT__NO_PEER && src >= c->size)
        return weft_diag_set(d, WEFT_EINVAL, "comm: source rank %u is not in 0 .. %u", src,
                             c->size - 1);
    if ((dst == c->rank) != (src == c->rank))
        return weft_diag_set(d, WEFT_EINVAL,
                             "comm: rank %u sends to itself only together with receiving from "
                             "itself",
                             c->rank);
    /* A rank is never WEFT__NO_PEER; saying so lets the compiler see that
     * weft_recv (no send buffer) never reaches the copy below. */
    if (dst != WEFT__NO_PEER && dst == c->rank) {
        if (sbytes != rbytes)
            return weft_diag_set(d, WEFT_EPARSE,
                                 "comm: rank %u sent itself %zu bytes but expected %zu", c->rank,
                                 sbytes, rbytes);
        if (reduce && rbytes) {
            weft_err e = weft__reduce_overlapping(reduce, rbuf, sbuf, rbytes / esize, esize);
            if (e)
                return weft_diag_code(d, e);
        } else if (rbytes && rbuf != sbuf)
            memmove(rbuf, sbuf, rbytes);
        return WEFT_OK;
    }
    weft__xreq rr = {.peer = src,
                     .is_send = false,
                     .buf = rbuf,
                     .len = rbytes,
                     .reduce = reduce,
                     .esize = esize};
    weft__xreq sr = {.peer = dst, .is_send = true, .buf = (unsigned char *)sbuf, .len = sbytes};
    weft__xreq *reqs[2];
    size_t n = 0;
    weft_err e;
    if (src != WEFT__NO_PEER && rbytes) {
        if ((e = weft__comm_post(c, &rr, d)))
            return e;
        reqs[n++] = &rr;
    }
    if (dst != WEFT__NO_PEER && sbytes) {
        if ((e = weft__comm_post(c, &sr, d)))
            return e;
        reqs[n++] = &sr;
    }
    return weft__comm_wait(c, reqs, n, d);
}

weft_err weft_sendrecv(weft_comm *c, uint32_t dst, const void *sbuf, size_t sbytes, uint32_t src,
                       void *rbuf, size_t rbytes, weft_diag *d)
{
    return weft__comm_exchange(c, dst, sbuf, sbytes, src, rbuf, rbytes, NULL, 1, d);
}

weft_err weft_send(weft_comm *c, uint32_t dst, const void *buf, size_t bytes, weft_diag *d)
{
    if (dst == c->rank)
        return weft_diag_set(d, WEFT_EINVAL, "comm: rank %u cannot send to itself alone", c->rank);
    return weft__comm_exchange(c, dst, buf, bytes, WEFT__NO_PEER, NULL, 0, NULL, 1, d);
}

weft_err weft_recv(weft_comm *c, uint32_t src, void *buf, size_t bytes, weft_diag *d)
{
    if (src == c->rank)
        return weft_diag_set(d, WEFT_EINVAL, "comm: rank %u cannot receive from itself alone",
                             c->rank);
    return weft__comm_exchange(c, WEFT__NO_PEER, NULL, 0, src, buf, bytes, NULL, 1, d);
}

unsigned char *weft__comm_scratch(weft_comm *c, size_t bytes)
{
    if (c->scratch_bytes < bytes) {
        unsigned char *p = weft__malloc(bytes);
        if (!p)
            return NULL;
        weft__free(c->scratch);
        c->scratch = p;
        c->scratch_bytes = bytes;
    }
    return c->scratch;
}
