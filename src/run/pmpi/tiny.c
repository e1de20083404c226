/* Small blocking calls served through the ring of slots (run/coll_tiny.h;
 * pmpi.h, "Small messages"): tried first by every blocking collective the
 * library serves, after the pass limits of small.c, before the ordinary
 * path. A call runs here when its communicator has a weft side on shared
 * memory (weft__tiny_ready) and its data fits a slot: bytes as small.c
 * sizes them (the same on every rank), every rank's alike, so that every
 * rank takes the ring or none does. MPI_Alltoallv, whose counts differ
 * between ranks, publishes on every rank whether its blocks fit; every
 * rank reads every rank's slot, and when any did not fit all go on to the
 * ordinary path together. MPI_Reduce_scatter publishes its recvcounts
 * (alike on every rank: MPI requires it) with its whole input; every rank
 * with a block of its own reads every rank's slot and compares every
 * rank's recvcounts, and a rank without one returns once published
 * (weft__tiny_counts).
 *
 * Datatypes: reductions need a predefined type and operator weft reduces
 * (the same on every rank: MPI requires it); moves take any datatype, a
 * rank whose layout is not contiguous packing into its slot and unpacking
 * from its peers' (PMPI_Pack), as coll_move.c does. */
#include <string.h>

#include "run/call_agree.h"
#include "run/coll_alltoallv.h"
#include "run/coll_tiny.h"
#include "run/pmpi/pmpi.h"
#include "run/pmpi/state.h"
#include "run/reduce.h"
#include "run/select.h"

/* The communicator of a call that fits (bytes in 1 .. WEFT__TINY_BYTES):
 * true with t held (the caller ends with tiny_done); false with nothing
 * held, for the ordinary path. */
static bool tiny_take(MPI_Comm comm, size_t bytes, weft__pmpi_target *t)
{
    if (bytes == 0 || bytes > WEFT__TINY_BYTES)
        return false;
    if (!weft__pmpi_target_fast(comm, t) && weft__pmpi_target_cached(comm, t))
        return false;
    /* Not where a schedule is forced (WEFT_PLAN, WEFT_ALGO: the ordinary
     * path runs or passes it as weft__pmpi_unfit says). Asked once per
     * communicator (state.h: the answer does not change). */
    weft__pmpi_entry *e = t->entry;
    if (!e->tiny)
        e->tiny = weft__tiny_ready(t->comm) && weft__select_takes_all(t->comm) ? 1 : 2;
    if (e->tiny != 1) {
        weft__pmpi_done(t, NULL);
        return false;
    }
    /* After the calls queued on the communicator before this one (none
     * where no worker was started: the test inline, the call not made). */
    if (e->worker)
        weft__pmpi_drain(t);
    return true;
}

static int tiny_done(weft__pmpi_target *t, weft__pmpi_coll k, MPI_Comm comm, weft_err e,
                     const weft_diag *d)
{
    if (e)
        return weft__pmpi_fail(t, k, comm, d);
    return weft__pmpi_served_done(t, k);
}

/* Copies count elements of t (layout l) from buf into packed bytes, or
 * back (unpack). */
static weft_err move(const void *buf, size_t count, MPI_Datatype t, const weft__pmpi_layout *l,
                     unsigned char *packed, bool unpack, weft_diag *d)
{
    if (!l->contig)
        return weft__pmpi_pack(buf, count, t, l, packed, unpack, d);
    if (unpack)
        memcpy((void *)(uintptr_t)buf, packed, count * l->size);
    else
        memcpy(packed, buf, count * l->size);
    return WEFT_OK;
}

bool weft__pmpi_tiny_reduce(weft__pmpi_coll k, weft_coll coll, const void *sendbuf, void *recvbuf,
                            int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                            int *rc)
{
    weft__tiny_red r = {.coll = coll, .count = (size_t)count, .root = (uint32_t)root};
    if (count <= 0 || !weft__pmpi_dtype(datatype, &r.dtype) || !weft__pmpi_op(op, &r.op))
        return false;
    r.es = weft_dtype_size(r.dtype);
    size_t bytes = r.count * r.es;
    if (coll == WEFT_COLL_REDUCESCATTER)
        bytes *= weft__pmpi_small_size(comm);
    weft__pmpi_target t;
    if (!tiny_take(comm, bytes, &t))
        return false;
    weft_comm *c = t.comm;
    if (coll == WEFT_COLL_REDUCE && (root < 0 || (uint32_t)root >= weft_comm_size(c))) {
        weft__pmpi_done(&t, NULL);
        return false; /* erroneous: the ordinary path passes it for MPI to report */
    }
    r.in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    r.out = recvbuf;
    r.fn = weft__reduce_get(r.dtype, r.op);
    weft_diag d;
    weft_diag_clear(&d);
    weft__pmpi_enter();
    weft_err e = weft__tiny_reduction(c, &r, &d);
    weft__pmpi_leave();
    *rc = tiny_done(&t, k, comm, e, &d);
    return true;
}

/* MPI_Reduce_scatter's slot: its recvcounts (4 bytes per rank), then the
 * whole input from a 64-byte line (a slot's data starts 32 bytes into one:
 * coll_tiny.c), aligned for every element type. */
static size_t counts_bytes(uint32_t n)
{
    return ((size_t)n * 4 + 32 + 63) / 64 * 64 - 32;
}

bool weft__pmpi_tiny_reduce_scatter(weft__pmpi_coll k, const void *sendbuf, void *recvbuf,
                                    const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                                    MPI_Comm comm, int *rc)
{
    weft_dtype dt;
    weft_redop ro;
    uint32_t size = weft__pmpi_small_size(comm);
    if (!recvcounts || size == 0 || !weft__pmpi_dtype(datatype, &dt) || !weft__pmpi_op(op, &ro))
        return false;
    /* The whole vector's elements: recvcounts are the same on every rank
     * (MPI requires it), so is the decision; a negative count is erroneous
     * (the ordinary path passes it). */
    long long sum = 0;
    for (uint32_t r = 0; r < size; r++) {
        if (recvcounts[r] < 0)
            return false;
        sum += recvcounts[r];
    }
    size_t es = weft_dtype_size(dt), head = counts_bytes(size);
    if (sum == 0 || head + (size_t)sum * es > WEFT__TINY_BYTES)
        return false;
    weft__reduce_fn fn = weft__reduce_get(dt, ro);
    weft__pmpi_target t;
    if (!fn || !tiny_take(comm, (size_t)sum * es, &t))
        return false;
    weft_comm *c = t.comm;
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t before = 0;
    for (uint32_t r = 0; r < me; r++)
        before += (size_t)recvcounts[r];
    const unsigned char *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    weft_diag d;
    weft_diag_clear(&d);
    weft__tiny r;
    weft__pmpi_enter();
    /* The call's count is the vector's sum; the slots compare the rest. */
    weft_err e =
        weft__tiny_begin(c, WEFT_COLL_REDUCESCATTER, (size_t)sum, dt, (uint32_t)ro, 0, &r, &d);
    if (e) {
        weft__pmpi_leave();
        *rc = tiny_done(&t, k, comm, e, &d);
        return true;
    }
    size_t mine = (size_t)recvcounts[me];
    memcpy(r.data, recvcounts, (size_t)n * 4);
    /* Not in place, this rank's own block stays out of its slot (no peer
     * reads it) and is folded from sendbuf, in its place in rank order,
     * as weft__tiny_reduce_scatter's (coll_tiny.c). */
    bool skip = sendbuf != MPI_IN_PLACE && mine;
    if (skip) {
        size_t a = before * es, z = (before + mine) * es;
        memcpy(r.data + head, in, a);
        memcpy(r.data + head + z, in + z, (size_t)sum * es - z);
    } else
        memcpy(r.data + head, in, (size_t)sum * es);
    r.aux = WEFT__TINY_AUX_COUNTS;
    /* A rank with no block of its own publishes its input and returns (as
     * a reduce's non-root); the others read every rank's slot, compare
     * every rank's recvcounts (weft__tiny_counts: a difference fails the
     * call here and, through the fault, the next ring call of a rank that
     * returned) and fold their block in rank order (weft__tiny_fold, as
     * weft__tiny_reduce_scatter). */
    e = weft__tiny_publish(&r, mine != 0, &d);
    if (!e && mine) {
        const unsigned char **src = weft__tiny_ptrs(c);
        e = weft__tiny_read_all(&r, src, &d);
        if (!e)
            e = weft__tiny_counts(&r, src, &d);
        if (!e) {
            for (uint32_t q = 0; q < n; q++)
                src[q] += head + before * es;
            if (skip)
                src[me] = in + before * es;
            weft__tiny_fold(fn, recvbuf, src, n, 0, mine, es);
        }
    }
    weft__tiny_end(&r, e);
    weft__pmpi_leave();
    *rc = tiny_done(&t, k, comm, e, &d);
    return true;
}

bool weft__pmpi_tiny_bcast(weft__pmpi_coll k, void *buffer, int count, MPI_Datatype datatype,
                           int root, MPI_Comm comm, int *rc)
{
    weft__pmpi_layout l;
    weft__pmpi_target t;
    if (!weft__pmpi_layout_of(datatype, count, &l) || !tiny_take(comm, l.bytes, &t))
        return false;
    weft_comm *c = t.comm;
    if (root < 0 || (uint32_t)root >= weft_comm_size(c)) {
        weft__pmpi_done(&t, NULL);
        return false;
    }
    bool is_root = weft_comm_rank(c) == (uint32_t)root;
    weft_diag d;
    weft_diag_clear(&d);
    weft__tiny r;
    weft_err e = weft__tiny_begin(c, WEFT_COLL_BROADCAST, l.bytes, WEFT_UINT8, WEFT__CALL_NO_OP,
                                  (uint32_t)root, &r, &d);
    if (!e) {
        if (is_root)
            e = move(buffer, (size_t)count, datatype, &l, r.data, false, &d);
        /* Only the root's slot is read: the root's publish compares
         * every peer's published slot, a non-root's the root's (every
         * published one where the root's is not yet: coll_tiny.h). */
        weft_err pe = is_root ? weft__tiny_publish(&r, false, &d)
                              : weft__tiny_publish_for(&r, (uint32_t)root, &d);
        e = e ? e : pe;
        const unsigned char *src = NULL;
        if (!e && !is_root)
            e = weft__tiny_read(&r, (uint32_t)root, &src, NULL, &d);
        if (!e && !is_root)
            e = move(buffer, (size_t)count, datatype, &l, (unsigned char *)(uintptr_t)src, true,
                     &d);
        weft__tiny_end(&r, e);
    }
    *rc = tiny_done(&t, k, comm, e, &d);
    return true;
}

bool weft__pmpi_tiny_gather(weft__pmpi_coll k, bool all_to_all, const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, int *rc)
{
    weft__pmpi_layout sl, rl;
    if (!weft__pmpi_layout_of(recvtype, recvcount, &rl))
        return false;
    sl = rl;
    bool in_place = sendbuf == MPI_IN_PLACE;
    if (!in_place && (!weft__pmpi_layout_of(sendtype, sendcount, &sl) || sl.bytes != rl.bytes))
        return false; /* erroneous: the ordinary path passes it */
    size_t b = rl.bytes, n = weft__pmpi_small_size(comm);
    weft__pmpi_target t;
    if (b == 0 || !tiny_take(comm, all_to_all ? b * n : b, &t))
        return false;
    weft_comm *c = t.comm;
    uint32_t me = weft_comm_rank(c);
    weft_diag d;
    weft_diag_clear(&d);
    weft__tiny r;
    weft_coll coll = all_to_all ? WEFT_COLL_ALLTOALL : WEFT_COLL_ALLGATHER;
    weft_err e = weft__tiny_begin(c, coll, b, WEFT_UINT8, WEFT__CALL_NO_OP, 0, &r, &d);
    if (!e) {
        /* The input: sendbuf, or in place recvbuf (all-to-all: all of it;
         * allgather: this rank's block). */
        size_t blocks = all_to_all ? n : 1;
        unsigned char *rbase = recvbuf;
        /* An all-to-all of contiguous blocks leaves its own block out of
         * the slot, which no peer reads (peer q reads block q), and copies
         * it from sendbuf to recvbuf (in place: nothing to copy): at 2
         * ranks half the bytes written to the slot, the cache lines a
         * peer then pulls from this rank's core (the step of IMB_Alltoall
         * at 256 B: docs/interop.md). */
        bool own = all_to_all && rl.contig && sl.contig;
        if (own) {
            const unsigned char *from = in_place ? rbase : sendbuf;
            memcpy(r.data, from, me * b);
            memcpy(r.data + (me + 1) * b, from + (me + 1) * b, (n - me - 1) * b);
            if (!in_place)
                memcpy(rbase + me * b, from + me * b, b);
        } else if (in_place)
            e = move(all_to_all ? rbase : rbase + (MPI_Aint)me * recvcount * rl.extent,
                     blocks * (size_t)recvcount, recvtype, &rl, r.data, false, &d);
        else
            e = move(sendbuf, blocks * (size_t)sendcount, sendtype, &sl, r.data, false, &d);
        weft_err pe = weft__tiny_publish(&r, true, &d);
        e = e ? e : pe;
        for (uint32_t q = 0; !e && q < n; q++) {
            const unsigned char *src;
            if (own && q == me)
                continue;
            if (!(e = weft__tiny_read(&r, q, &src, NULL, &d)))
                e = move(rbase + (MPI_Aint)q * recvcount * rl.extent, (size_t)recvcount, recvtype,
                         &rl, (unsigned char *)(uintptr_t)src + (all_to_all ? me * b : 0), true,
                         &d);
        }
        weft__tiny_end(&r, e);
    }
    *rc = tiny_done(&t, k, comm, e, &d);
    return true;
}

/* MPI_Alltoallv's slot: a table of 12 bytes per rank, then the blocks
 * (the block to itself only where a layout is not contiguous: below),
 * each starting on a 64-byte line (a slot's data starts 32 bytes into
 * one: coll_tiny.c), so that no block shares a line with another or the
 * table. */
static size_t table_bytes(uint32_t n)
{
    return ((size_t)n * 12 + 32 + 63) / 64 * 64 - 32;
}

static size_t block_room(size_t bytes)
{
    return (bytes + 63) / 64 * 64;
}

/* Nonzero when a rank's block to a peer (tables of n ranks, as above: rank
 * q's bytes to rank r at [3r + 1] of q's table) differs from what that
 * peer expects (at [3q + 2] of r's), without a branch. At 2 ranks, the
 * commonest, the 4 pairs are written out: 14 instructions against the
 * loops' 57 (callgrind, bench/lat_mpi.c at 64 B). */
static uint32_t counts_differ(const unsigned char *const *src, uint32_t n)
{
    if (n == 2) {
        const uint32_t *a = (const uint32_t *)(const void *)src[0],
                       *b = (const uint32_t *)(const void *)src[1];
        return (a[1] ^ a[2]) | (a[4] ^ b[2]) | (b[1] ^ a[5]) | (b[4] ^ b[5]);
    }
    uint32_t differ = 0;
    for (uint32_t to = 0; to < n; to++) {
        const uint32_t *want = (const uint32_t *)(const void *)src[to];
        for (uint32_t q = 0; q < n; q++)
            differ |= ((const uint32_t *)(const void *)src[q])[3 * to + 1] ^ want[3 * q + 2];
    }
    return differ;
}

bool weft__pmpi_tiny_alltoallv(weft__pmpi_coll k, uint32_t size, const void *sendbuf,
                               const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                               void *recvbuf, const int recvcounts[], const int rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm, int *rc)
{
    bool in_place = sendbuf == MPI_IN_PLACE;
    weft__pmpi_layout sl, rl;
    if (!recvcounts || !rdispls || !weft__pmpi_layout_of(recvtype, 1, &rl))
        return false;
    const unsigned char *from = sendbuf;
    if (in_place || sendtype == recvtype) {
        sl = rl; /* one layout query where both sides name one type */
        if (in_place) {
            from = recvbuf;
            sendcounts = recvcounts;
            sdispls = rdispls;
            sendtype = recvtype;
        }
    }
    if (!in_place && (!sendcounts || !sdispls ||
                      (sendtype != recvtype && !weft__pmpi_layout_of(sendtype, 1, &sl))))
        return false;
    /* At 3 or more ranks a pass limit above 1 (WEFT_PMPI_SMALL) keeps the
     * communicator's mode (small.c), which passes calls whose blocks are
     * all below it. */
    if (size >= 3 && weft__pmpi_small_below(WEFT__PMPI_SMALL_ALLTOALLV, size) > 1)
        return false;
    weft__pmpi_target t;
    /* Every rank tries (bytes 1: any size), and learns below whether all
     * fit. */
    if (!tiny_take(comm, 1, &t))
        return false;
    weft_comm *c = t.comm;
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    weft_diag d;
    weft_diag_clear(&d);
    weft__tiny r;
    /* The count is no argument the ranks share: 0 on every rank. */
    weft_err e =
        weft__tiny_begin(c, WEFT_COLL_ALLTOALL, 0, WEFT_UINT8, WEFT__CALL_NO_OP, 0, &r, &d);
    if (e) {
        *rc = tiny_done(&t, k, comm, e, &d);
        return true;
    }
    /* This rank's table (per rank j: where its block to j lies in the
     * slot, its bytes, and the bytes this rank expects from j) and blocks,
     * in one pass over the counts: fits unless a count is negative
     * (erroneous: the ordinary path passes it) or they exceed the slot;
     * blocks copied before a later one is found not to fit are never read
     * (every rank sees this rank's aux 0 and takes the ordinary path). */
    uint32_t *table = (uint32_t *)(void *)r.data;
    size_t at = table_bytes(n);
    bool fits = at <= WEFT__TINY_BYTES;
    /* This rank's block to itself goes from sendbuf to recvbuf directly
     * where both layouts are contiguous (one copy, none in place; below),
     * not through the slot, which holds no room for it then. */
    bool direct = sl.contig && rl.contig;
    for (uint32_t j = 0; fits && j < n; j++) {
        int sc = sendcounts[j], rcv = recvcounts[j];
        size_t bytes = (size_t)sc * sl.size, want = (size_t)rcv * rl.size;
        size_t room = direct && j == me ? 0 : block_room(bytes);
        /* (sc | rcv) < 0: either count negative. */
        fits = (sc | rcv) >= 0 && want <= WEFT__TINY_BYTES && at + room <= WEFT__TINY_BYTES;
        if (!fits)
            break;
        table[3 * j] = (uint32_t)at;
        table[3 * j + 1] = (uint32_t)bytes;
        table[3 * j + 2] = (uint32_t)want;
        if (room && (e = move(from + (MPI_Aint)sdispls[j] * sl.extent, (size_t)sc, sendtype, &sl,
                              r.data + at, false, &d)))
            break;
        at += room;
    }
    r.aux = fits && !e;
    weft_err pe = weft__tiny_publish(&r, true, &d);
    e = e ? e : pe;
    const unsigned char **src = weft__tiny_ptrs(c);
    bool all = true;
    for (uint32_t q = 0; !e && q < n; q++) {
        uint64_t aux = 0;
        e = weft__tiny_read(&r, q, &src[q], &aux, &d);
        all &= aux != 0;
    }
    if (!e && all) {
        /* Every rank has every rank's table: whether any sender's count
         * differs from its receiver's, in one pass without a branch; where
         * one does, the first receiver and sender whose counts differ, in
         * weft_alltoallv's order, on every rank. */
        uint32_t differ = counts_differ(src, n);
        for (uint32_t to = 0; differ && !e && to < n; to++) {
            const uint32_t *want = (const uint32_t *)(const void *)src[to];
            for (uint32_t q = 0; !e && q < n; q++) {
                const uint32_t *sent = (const uint32_t *)(const void *)src[q];
                if (sent[3 * to + 1] != want[3 * q + 2])
                    e = weft__alltoallv_differ(&d, q, sent[3 * to + 1], WEFT_UINT8, to,
                                               want[3 * q + 2]);
            }
        }
        for (uint32_t q = 0; !e && q < n; q++) {
            const unsigned char *slot = src[q];
            const uint32_t *row = (const uint32_t *)(const void *)slot + 3 * me;
            if (q == me && direct) {
                /* Its counts checked above; in place, the block is
                 * already where it goes. */
                unsigned char *to = (unsigned char *)recvbuf + (MPI_Aint)rdispls[me] * rl.extent;
                const unsigned char *self = from + (MPI_Aint)sdispls[me] * sl.extent;
                if (row[1] && to != self)
                    memcpy(to, self, row[1]);
            } else if (row[1]) {
                e = move((unsigned char *)recvbuf + (MPI_Aint)rdispls[q] * rl.extent,
                         (size_t)recvcounts[q], recvtype, &rl,
                         (unsigned char *)(uintptr_t)slot + row[0], true, &d);
            }
        }
    }
    weft__tiny_end(&r, e);
    if (!e && !all) {
        /* Some rank's blocks did not fit: every rank saw it, and all take
         * the ordinary path. */
        weft__pmpi_done(&t, NULL);
        return false;
    }
    *rc = tiny_done(&t, k, comm, e, &d);
    return true;
}
