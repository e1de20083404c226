/* Small allreduces through the control pages' eager areas.
 *
 * The single-pass allreduce on shared buffers (coll_shared.c) needs two
 * barriers per call: one before anyone reads a peer's sendbuf, one before
 * anyone returns (a peer may still be reading this rank's sendbuf or
 * writing its recvbuf). A small call is dominated by those barriers: each
 * is a cross-core cache-line round trip (about 0.2 us between the two
 * cores of the development host), and with more ranks than CPUs each needs
 * every rank to be scheduled once. Here a call copies its input into this
 * rank's eager area of the call's slot (transport/shm/region.h), publishes
 * its record, waits for every rank's, and combines every rank's eager copy
 * in rank order ((in_0 op in_1) op in_2 ..., the order of the other
 * allreduce paths, so results are bit-identical on every rank) into its
 * own recvbuf. Nothing a peer reads belongs to the caller, so the call
 * returns without a second barrier; the slot is not written again before
 * every rank has published the next call, i.e. finished reading this one.
 *
 * Any buffers qualify (private memory, weft_comm_alloc memory, in place),
 * since peers read only the eager areas. The price is that every rank
 * reads all n inputs and combines n - 1 of them over the whole buffer,
 * instead of a 1/n block each: the limit (weft__small_allreduce_fits)
 * keeps (n - 1) x bytes small, where latency, not traffic, sets the time.
 *
 * The other collectives work alike (weft__small_fits and below): each rank
 * copies what its peers need into its eager area (allgather, reduce and
 * the broadcast's root their input; reduce-scatter and all-to-all their
 * whole input), publishes its record and reads what it needs from the
 * peers' areas, so a call costs one barrier where the ring or chain of
 * the ordinary schedule costs n - 1 message latencies (at 8 ranks on 2
 * CPUs, 1 KiB: 10-12 us against 19-229 us; docs/run.md). The limit is on
 * what the busiest rank reads from its peers.
 */
#include <string.h>

#include "run/call_agree.h"
#include "run/coll_shared_core.h"
#include "run/coll_small.h"
#include "run/transport/shm/region.h"

/* Largest (size - 1) x bytes of a small call. Per call the eager path
 * saves one barrier and pays a transfer of every peer's input between the
 * cores (a line the writer rewrote moves twice: to the writer for the
 * write, back to each reader); the single-pass path moves no line of a
 * buffer nobody rewrote. The barrier is worth most when more ranks share
 * the host than it has CPUs (each barrier then waits until every rank has
 * been scheduled): with 4 ranks on the 2-CPU development host the eager
 * path took 10 us against 18 at 1 KiB, 16 against 19 at 16 KiB, and 34
 * against 23 at 64 KiB; with 2 ranks on 2 CPUs it won at 256 bytes (0.48
 * against 0.73 us) and lost from 1 KiB (0.99 against 0.77; 4 KiB: 1.8
 * against 0.9). Measured with bench_run_small under chrt -f 10;
 * docs/interop.md, "Small messages". */
#define SMALL_MAX_TRAFFIC ((size_t)512)
#define SMALL_MAX_TRAFFIC_OVERSUBSCRIBED ((size_t)64 << 10)
/* With at least 3 ranks on CPUs of their own: the limit on what the
 * busiest rank of an allreduce or reduce reads from its peers' eager
 * areas (beyond it the pipelined path, coll_eager.c, reads each byte once
 * instead of n - 1 times: on 16 ranks of a 16-core host a one-barrier
 * allreduce reading 3.75 MiB per rank (256 KiB buffers) ran at 0.52-0.83
 * of Open MPI's busbw, the pipelined one at 1.51-1.70); allgather,
 * reduce-scatter, broadcast and all-to-all have no limit but the eager
 * area: their single-copy path reads as many bytes, one system call per
 * peer (16 ranks, OSU: allgather of 1 KiB 16.9 us through the areas
 * against 80 us single-copy; reduce-scatter of 64 KiB 18.4 against 70.7;
 * Open MPI 21.9 and 47.1). */
#define SMALL_MAX_READ_MANY ((size_t)8 << 10)
/* The other collectives' limit on 2 ranks with CPUs of their own, where
 * the alternative is one step through the transport's slots: at 1 KiB the
 * eager path took 0.4-0.6 us against 0.8-1.3 (OSU 7.4 through
 * libweft_mpi.so on the 2-CPU development host, 5 runs each; Open MPI
 * 0.7-0.9), and on a 16-core host the slots' 1 KiB reduce, broadcast,
 * allgather and all-to-all were 1.2-1.7x Open MPI's latency; at 64 KiB
 * the eager path was no faster (bcast 8.2 against 5.6 us). */
#define SMALL_MAX_READ_TWO ((size_t)4 << 10)

bool weft__small_allreduce_fits(const weft_comm *c, size_t bytes)
{
    size_t eager = weft__region_eager_bytes(c);
    if (!eager || bytes > eager)
        return false;
    size_t limit = weft__region_oversubscribed(c) ? SMALL_MAX_TRAFFIC_OVERSUBSCRIBED
                   : c->size == 2                 ? SMALL_MAX_TRAFFIC
                                                  : SMALL_MAX_READ_MANY;
    return bytes * (c->size - 1) <= limit;
}

weft_err weft__small_allreduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               const weft__reducer *red, weft_diag *d)
{
    size_t bytes = count * red->es;
    uint32_t n = c->size;
    uint64_t seq = weft__region_next_seq(c);
    memcpy(weft__region_eager(c, c->rank, seq), sendbuf, bytes);
    weft_err e = weft__call_post_seq(c, seq, d);
    if (e)
        return e;
    unsigned char **src = weft__region_ptrs(c), *dst = recvbuf;
    for (uint32_t q = 0; q < n; q++)
        src[q] = weft__region_eager(c, q, seq);
    weft__shared_combine(weft__region_work(c), src, n, &dst, 1, bytes, red, false);
    weft__region_count_small(c);
    return WEFT_OK;
}

/* What one rank copies into its eager area and what the rank that reads
 * most reads from its peers' areas, for coll on n ranks. */
static void small_traffic(weft_coll coll, uint32_t n, size_t count, size_t es, size_t *copy,
                          size_t *read)
{
    size_t b = count * es;
    switch (coll) {
    case WEFT_COLL_ALLGATHER:
        *copy = b;
        *read = b * (n - 1);
        break;
    case WEFT_COLL_REDUCESCATTER:
    case WEFT_COLL_ALLTOALL:
        *copy = b * n;
        *read = b * (n - 1);
        break;
    case WEFT_COLL_BROADCAST:
        *copy = b;
        *read = b;
        break;
    default: /* allreduce, reduce */
        *copy = b;
        *read = b * (n - 1);
        break;
    }
}

bool weft__small_fits(const weft_comm *c, weft_coll coll, size_t count, size_t es)
{
    size_t eager = weft__region_eager_bytes(c), copy, read;
    if (!eager || c->size < 2)
        return false;
    if (count > eager)
        return false; /* no overflow below */
    small_traffic(coll, c->size, count, es, &copy, &read);
    if (copy > eager)
        return false;
    size_t limit = weft__region_oversubscribed(c) ? SMALL_MAX_TRAFFIC_OVERSUBSCRIBED
                   : c->size == 2                 ? SMALL_MAX_READ_TWO
                   : coll == WEFT_COLL_REDUCE     ? SMALL_MAX_READ_MANY
                                                  : SIZE_MAX;
    return read <= limit;
}

/* Copies bytes of src (may be NULL: nothing) into this rank's eager area,
 * publishes the call's record and waits for everyone's, checking that the
 * calls agree; *seq is the call's number. */
static weft_err small_post(weft_comm *c, const void *src, size_t bytes, uint64_t *seq, weft_diag *d)
{
    *seq = weft__region_next_seq(c);
    if (src && bytes)
        memcpy(weft__region_eager(c, c->rank, *seq), src, bytes);
    weft_err e = weft__call_post_seq(c, *seq, d);
    if (!e)
        weft__region_count_small(c);
    return e;
}

weft_err weft__small_allgather(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               size_t es, weft_diag *d)
{
    size_t b = count * es;
    uint64_t seq;
    weft_err e = small_post(c, sendbuf, b, &seq, d);
    if (e)
        return e;
    unsigned char *out = recvbuf;
    for (uint32_t q = 0; q < c->size; q++) {
        unsigned char *dst = out + (size_t)q * b;
        const unsigned char *src = q == c->rank ? sendbuf : weft__region_eager(c, q, seq);
        if (dst != src)
            memcpy(dst, src, b);
    }
    return WEFT_OK;
}

weft_err weft__small_reduce_scatter(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                    const weft__reducer *red, weft_diag *d)
{
    uint32_t n = c->size;
    size_t b = count * red->es;
    uint64_t seq;
    weft_err e = small_post(c, sendbuf, b * n, &seq, d);
    if (e)
        return e;
    unsigned char **src = weft__region_ptrs(c), *dst = recvbuf;
    for (uint32_t q = 0; q < n; q++)
        src[q] = weft__region_eager(c, q, seq) + (size_t)c->rank * b;
    weft__shared_combine(weft__region_work(c), src, n, &dst, 1, b, red, false);
    return WEFT_OK;
}

weft_err weft__small_broadcast(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               size_t es, uint32_t root, weft_diag *d)
{
    size_t b = count * es;
    uint64_t seq;
    weft_err e = small_post(c, c->rank == root ? sendbuf : NULL, b, &seq, d);
    if (e)
        return e;
    const unsigned char *src = c->rank == root ? sendbuf : weft__region_eager(c, root, seq);
    if (src != recvbuf)
        memcpy(recvbuf, src, b);
    return WEFT_OK;
}

weft_err weft__small_reduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                            const weft__reducer *red, uint32_t root, weft_diag *d)
{
    uint32_t n = c->size;
    size_t b = count * red->es;
    uint64_t seq;
    weft_err e = small_post(c, sendbuf, b, &seq, d);
    if (e || c->rank != root)
        return e;
    unsigned char **src = weft__region_ptrs(c), *dst = recvbuf;
    for (uint32_t q = 0; q < n; q++)
        src[q] = weft__region_eager(c, q, seq);
    weft__shared_combine(weft__region_work(c), src, n, &dst, 1, b, red, false);
    return WEFT_OK;
}

weft_err weft__small_alltoall(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                              size_t es, weft_diag *d)
{
    uint32_t n = c->size, me = c->rank;
    size_t b = count * es;
    uint64_t seq;
    weft_err e = small_post(c, sendbuf, b * n, &seq, d);
    if (e)
        return e;
    /* From the eager copies, also our own block: in place, recvbuf is
     * sendbuf. */
    unsigned char *out = recvbuf;
    for (uint32_t q = 0; q < n; q++)
        memcpy(out + (size_t)q * b, weft__region_eager(c, q, seq) + (size_t)me * b, b);
    return WEFT_OK;
}
