/* All-to-all on the pairwise schedule, built on weft__comm_exchange.
 *
 * In step k (1 .. size-1) rank r sends its block for rank r+k and receives
 * rank r-k's block for it, so every step is a permutation and no rank
 * receives from two peers at once; its own block is a local copy. Every
 * rank sends (size-1)/size of its buffer, the least any schedule can.
 * In place, the blocks still to be sent would be overwritten by blocks
 * received earlier, so the input is copied first.
 */
#include <string.h>

#include "base/alloc.h"
#include "run/coll_busy.h"
#include "run/coll_cma.h"
#include "run/coll_ring.h"
#include "run/coll_shared.h"
#include "run/coll_small.h"
#include "run/comm_internal.h"
#include "run/p2p.h"
#include "run/select.h"

static weft_err alltoall_call(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                              weft_dtype dtype, weft_diag *d)
{
    weft_err e = weft__coll_check(c, dtype, WEFT_SUM, false, d);
    if (e)
        return e;
    weft__call_begin(c, WEFT_COLL_ALLTOALL, count, dtype, WEFT__CALL_NO_OP, 0);
    weft_comm_plan *cp;
    e = weft__select_pick(c, WEFT_COLL_ALLTOALL, count, dtype, 0, NULL, &cp, d);
    if (e)
        return e;
    if (cp) {
        if ((e = weft__call_agree(c, d)))
            return e;
        return weft__select_run(c, cp, WEFT_COLL_ALLTOALL, sendbuf, recvbuf, count, dtype, WEFT_SUM,
                                d);
    }
    uint32_t n = c->size, r = c->rank;
    size_t bytes = count * weft_dtype_size(dtype); /* one block */
    if (bytes == 0)
        return weft__call_agree(c, d);
    if (n > 1 && weft__small_fits(c, WEFT_COLL_ALLTOALL, count, weft_dtype_size(dtype)))
        return weft__small_alltoall(c, sendbuf, recvbuf, count, weft_dtype_size(dtype), d);
    if (n > 1) {
        bool ran;
        e = weft__shared_alltoall(c, sendbuf, recvbuf, count, weft_dtype_size(dtype), &ran, d);
        if (e || ran)
            return e;
        e = weft__cma_alltoall(c, sendbuf, recvbuf, count, weft_dtype_size(dtype), &ran, d);
        if (e || ran)
            return e;
    }
    if ((e = weft__call_agree(c, d)))
        return e;
    const unsigned char *in = sendbuf;
    unsigned char *out = recvbuf, *copy = NULL;
    if (sendbuf == recvbuf && n > 1) {
        if (!(copy = weft__malloc(bytes * n)))
            return weft_diag_code(d, WEFT_ENOMEM);
        memcpy(copy, sendbuf, bytes * n);
        in = copy;
    }
    if (in + (size_t)r * bytes != out + (size_t)r * bytes)
        memcpy(out + (size_t)r * bytes, in + (size_t)r * bytes, bytes);
    for (uint32_t k = 1; !e && k < n; k++) {
        uint32_t to = (r + k) % n, from = (r + n - k) % n;
        e = weft__comm_exchange(c, to, in + (size_t)to * bytes, bytes, from,
                                out + (size_t)from * bytes, bytes, NULL, 1, d);
    }
    weft__free(copy);
    return e;
}

weft_err weft_alltoall(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                       weft_dtype dtype, weft_diag *d)
{
    weft__coll_enter(c);
    return weft__coll_leave(c, alltoall_call(c, sendbuf, recvbuf, count, dtype, d));
}
