/* Single-pass all-to-all on weft_comm_alloc memory (see coll_shared.c for
 * the agreement and the tiles).
 *
 * Every pair of ranks a < b exchanges two blocks: block b of a's sendbuf
 * goes to block a of b's recvbuf, and block a of b's sendbuf to block b of
 * a's recvbuf. The pair shares the work: a moves the first half of both
 * blocks (elements [0, count/2)), b the second half, so each rank reads
 * (n-1) blocks and writes (n-1) blocks, a memcpy of its buffer, and copies
 * its own block. Every byte of every buffer is touched by exactly one
 * rank, so no rank waits for another between the agreement and the end.
 *
 * In place (sendbuf == recvbuf, which any rank may choose on its own): the
 * handler of a piece reads what an in-place rank's buffer holds there
 * before it overwrites it: with one side in place it first moves that
 * side's block out, then the other side's in; with both in place it saves
 * one side's piece in the work area (pieces of half the work area) and
 * swaps. So in place needs no copy of the whole input.
 *
 * Every rank's sendbuf must lie in one allocation and every rank's recvbuf
 * in one allocation (both may be the same): a rank reads and writes both of
 * its peers' buffers. Pushing or pulling whole blocks instead ran as fast
 * (docs/interop.md) but needs a copy of the input in place.
 */
#include <string.h>

#include "run/coll_shared.h"
#include "run/coll_shared_core.h"
#include "run/transport/shm/region.h"

/* One rank's side of a pair's exchange: its send block for the peer and
 * its recv block from the peer, at the handled half. */
typedef struct side {
    unsigned char *send, *recv;
} side;

static void copy1(unsigned char *dst, const unsigned char *src, size_t len, bool nt)
{
    weft__shared_spread(src, &dst, 1, len, nt);
}

/* Moves x.send -> y.recv and y.send -> x.recv (len bytes each), reading
 * every byte of a buffer that is both send and recv before writing it. */
static void exchange(weft_comm *c, side x, side y, size_t len, bool nt)
{
    bool x_in = x.send == x.recv, y_in = y.send == y.recv;
    if (!x_in || !y_in) {
        if (x_in) { /* x's block must leave before y's arrives in its place */
            copy1(y.recv, x.send, len, nt);
            copy1(x.recv, y.send, len, nt);
        } else {
            copy1(x.recv, y.send, len, nt);
            copy1(y.recv, x.send, len, nt);
        }
        return;
    }
    unsigned char *save = weft__region_work(c);
    size_t piece = WEFT__REGION_WORK / 2;
    for (size_t o = 0; o < len; o += piece) {
        size_t k = len - o < piece ? len - o : piece;
        memcpy(save, x.send + o, k);
        copy1(x.recv + o, y.send + o, k, nt);
        copy1(y.recv + o, save, k, nt);
    }
}

weft_err weft__shared_alltoall(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               size_t es, bool *ran, weft_diag *d)
{
    *ran = false;
    if (!weft__region_usable(c))
        return WEFT_OK;
    uint32_t n = c->size, r = c->rank;
    size_t block = count * es, total = block * n;
    uint64_t seq;
    weft_err e = weft__shared_agree(c, sendbuf, total, recvbuf, total,
                                    WEFT__REC_SEND | WEFT__REC_RECV, &seq, ran, d);
    if (e || !*ran)
        return e;
    const weft__region_rec *recs = weft__region_recs(c);
    bool nt = total >= WEFT__SHARED_NT_MIN_BYTES;
    size_t half = count / 2 * es;
    unsigned char *in = (unsigned char *)sendbuf, *out = recvbuf;
    if (in != out)
        memcpy(out + (size_t)r * block, in + (size_t)r * block, block);
    for (uint32_t k = 1; k < n && !e; k++) {
        /* Peers in the order r+1, r+2, ... so that the ranks do not all
         * start on rank 0's buffers. */
        uint32_t q = (r + k) % n;
        unsigned char *qs, *qr;
        size_t lo = r < q ? 0 : half, len = r < q ? half : block - half;
        e = weft__shared_peer_buf(c, recs[q].sid, q, recs[q].soff, (size_t)r * block + lo, &qs, d);
        if (!e)
            e = weft__shared_peer_buf(c, recs[q].rid, q, recs[q].roff, (size_t)r * block + lo, &qr,
                                      d);
        if (e)
            break;
        side me = {in + (size_t)q * block + lo, out + (size_t)q * block + lo};
        exchange(c, me, (side){qs, qr}, len, nt);
    }
    if (e)
        return e;
    return weft__region_done(c, seq, d);
}
