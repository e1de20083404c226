/* All-to-all with a count and a displacement per pair (weft_alltoallv), on
 * the pairwise schedule of coll_alltoall.c: in step k (1 .. size-1) rank r
 * sends its block for rank r+k and receives rank r-k's block, its own block
 * being a local copy.
 *
 * MPI leaves a count that differs between sender and receiver undefined;
 * here it must never hang or cut data silently, so before any data moves
 * the ranks share their counts (agree_counts: up to 128 ranks one
 * allgather of every rank's counts; beyond, an alltoall of the counts and
 * an allgather of what each receiver found). Every rank then returns the
 * same error, naming the lowest receiver that expects another count (and
 * its lowest such sender), and the communicator stays usable: nothing else
 * moved. The exchanges are collectives of fixed size, so ranks that
 * disagree still complete them. */
#include <string.h>

#include "base/alloc.h"
#include "run/coll_alltoallv.h"
#include "run/coll_ring.h"
#include "run/comm_internal.h"
#include "run/p2p.h"

#define NONE UINT64_MAX

/* The message for the first difference, the same on every rank. */
static weft_err differ(weft_diag *d, uint64_t sender, uint64_t sent, weft_dtype dtype,
                       uint32_t receiver, uint64_t expected)
{
    return weft_diag_set(d, WEFT_EINVAL,
                         "comm: ranks disagree on the counts of alltoallv: rank %llu sends %llu "
                         "elements (%s) to rank %u, which expects %llu",
                         (unsigned long long)sender, (unsigned long long)sent,
                         weft_dtype_name(dtype), receiver, (unsigned long long)expected);
}

static weft_err differ_dtype(weft_diag *d, uint64_t t0, uint32_t r, uint64_t tr)
{
    return weft_diag_set(d, WEFT_EINVAL,
                         "comm: ranks disagree on the dtype of alltoallv: rank 0 has %s, rank %u "
                         "has %s",
                         weft_dtype_name((weft_dtype)t0), r, weft_dtype_name((weft_dtype)tr));
}

/* Up to weft__alltoallv_all_max ranks (128), one allgather of every rank's dtype, sendcounts and
 * recvcounts (2n + 1 words each: 256 KiB at 128 ranks) tells every rank
 * everything, one collective's latency; beyond, an alltoall of the counts
 * and an allgather of what each receiver found (four words each). */
uint32_t weft__alltoallv_all_max = 128;

/* Every rank's view, agreed: WEFT_OK, or WEFT_EINVAL with the same message
 * on every rank. */
static weft_err agree_counts(weft_comm *c, const size_t *sendcounts, const size_t *recvcounts,
                             weft_dtype dtype, weft_diag *d)
{
    uint32_t n = c->size;
    weft_err e = WEFT_OK;
    if (n <= weft__alltoallv_all_max) {
        size_t w = 2 * (size_t)n + 1;
        uint64_t *mine = weft__malloc(w * (n + 1u) * sizeof *mine);
        if (!mine) return weft_diag_code(d, WEFT_ENOMEM);
        uint64_t *all = mine + w;
        mine[0] = (uint64_t)dtype;
        for (uint32_t j = 0; j < n; j++) {
            mine[1 + j] = sendcounts[j];
            mine[1 + n + j] = recvcounts[j];
        }
        e = weft_allgather(c, mine, all, w, WEFT_UINT64, d);
        for (uint32_t r = 1; !e && r < n; r++)
            if (all[r * w] != all[0]) e = differ_dtype(d, all[0], r, all[r * w]);
        /* Receiver r expects all[r*w + 1 + n + s] from s, which sends
         * all[s*w + 1 + r]. */
        for (uint32_t r = 0; !e && r < n; r++)
            for (uint32_t s = 0; !e && s < n; s++)
                if (all[(size_t)s * w + 1 + r] != all[(size_t)r * w + 1 + n + s])
                    e = differ(d, s, all[(size_t)s * w + 1 + r], dtype, r,
                               all[(size_t)r * w + 1 + n + s]);
        weft__free(mine);
        return e;
    }
    uint64_t *mine = weft__malloc((size_t)n * sizeof *mine * 2 + (size_t)n * 4 * sizeof *mine);
    if (!mine) return weft_diag_code(d, WEFT_ENOMEM);
    uint64_t *theirs = mine + n, *all = theirs + n;
    for (uint32_t j = 0; j < n; j++)
        mine[j] = sendcounts[j];
    e = weft_alltoall(c, mine, theirs, 1, WEFT_UINT64, d);
    uint64_t rec[4] = {(uint64_t)dtype, NONE, 0, 0};
    for (uint32_t j = 0; !e && j < n && rec[1] == NONE; j++)
        if (theirs[j] != recvcounts[j]) {
            rec[1] = j;
            rec[2] = recvcounts[j];
            rec[3] = theirs[j];
        }
    if (!e) e = weft_allgather(c, rec, all, 4, WEFT_UINT64, d);
    for (uint32_t r = 1; !e && r < n; r++)
        if (all[4 * r] != all[0]) e = differ_dtype(d, all[0], r, all[4 * r]);
    for (uint32_t r = 0; !e && r < n; r++)
        if (all[4 * r + 1] != NONE)
            e = differ(d, all[4 * r + 1], all[4 * r + 3], dtype, r, all[4 * r + 2]);
    weft__free(mine);
    return e;
}

weft_err weft_alltoallv(weft_comm *c, const void *sendbuf, const size_t *sendcounts,
                        const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                        const size_t *rdispls, weft_dtype dtype, weft_diag *d)
{
    weft_err e = weft__coll_check(c, dtype, WEFT_SUM, false, d);
    if (e) return e;
    bool in_place = sendbuf == recvbuf;
    if (in_place) {
        /* The data to send lies where it will be received. */
        sendcounts = recvcounts;
        sdispls = rdispls;
    }
    if (!sendcounts || !sdispls || !recvcounts || !rdispls)
        return weft_diag_set(d, WEFT_EINVAL, "comm: alltoallv needs counts and displacements");
    if ((e = agree_counts(c, sendcounts, recvcounts, dtype, d))) return e;
    uint32_t n = c->size, r = c->rank;
    size_t es = weft_dtype_size(dtype);
    const unsigned char *in = sendbuf;
    unsigned char *out = recvbuf, *copy = NULL;
    if (in_place && n > 1) {
        size_t end = 0; /* elements */
        for (uint32_t j = 0; j < n; j++)
            if (recvcounts[j] && rdispls[j] + recvcounts[j] > end) end = rdispls[j] + recvcounts[j];
        if (!(copy = weft__malloc(end ? end * es : 1))) return weft_diag_code(d, WEFT_ENOMEM);
        if (end) memcpy(copy, recvbuf, end * es);
        in = copy;
    }
    if (sendcounts[r] && in + sdispls[r] * es != out + rdispls[r] * es)
        memmove(out + rdispls[r] * es, in + sdispls[r] * es, sendcounts[r] * es);
    for (uint32_t k = 1; !e && k < n; k++) {
        uint32_t to = (r + k) % n, from = (r + n - k) % n;
        e = weft__comm_exchange(c, to, in + sdispls[to] * es, sendcounts[to] * es, from,
                                out + rdispls[from] * es, recvcounts[from] * es, NULL, 1, d);
    }
    weft__free(copy);
    return e;
}
