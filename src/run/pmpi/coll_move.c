/* The collectives that only move data, interposed, blocking and
 * non-blocking: MPI_Allgather, MPI_Bcast and MPI_Alltoall (and MPI_I* of
 * each; see pmpi.h), served by weft_allgather, weft_broadcast and
 * weft_alltoall (so the schedule is weft's choice for the call), as bytes
 * (WEFT_UINT8, count = bytes), on a communicator with a weft side when the
 * chosen schedule fits (weft__pmpi_unfit); MPI_IN_PLACE is handled for
 * MPI_Allgather and MPI_Alltoall. MPI_Alltoallv, MPI_Alltoallw and
 * MPI_Ibarrier are in coll_vector.c.
 *
 * MPI lets the ranks of one call describe their data with different
 * datatypes as long as the type signatures match (one rank's 8 MPI_INTs may
 * be another's vector of 8 strided ints), so the decision to serve a call
 * must not depend on a datatype's layout: only on its bytes, which match.
 * A rank whose datatype is contiguous moves its buffer as it is; a rank
 * whose datatype is not packs it into a private copy first (and unpacks
 * what it received), so every rank takes the same path. (The first version
 * passed non-contiguous datatypes to MPI on the ranks that had them and
 * served the others with weft: a legal program hung.) */
#include <stdlib.h>
#include <string.h>

#include "run/pmpi/pmpi.h"
#include "run/pmpi/zero.h"

#define PMPI_EXPORT __attribute__((visibility("default")))

/* The layouts of a send/receive pair (count elements each) that carry the
 * same bytes; sendbuf MPI_IN_PLACE ignores the send side. NULL when
 * servable, else why not. Each reason is an erroneous call (a negative
 * count, an invalid datatype, a send that is not what its receivers
 * expect), which MPI reports on the rank that made it: a legal call always
 * gets NULL, and then only the receive size (the same on every rank for
 * MPI_Allgather and MPI_Alltoall) decides the rest, so every rank takes
 * the same path. */
static const char *pair_layout(const void *sendbuf, int scount, MPI_Datatype stype, int rcount,
                               MPI_Datatype rtype, weft__pmpi_layout *sl, weft__pmpi_layout *rl)
{
    if (!weft__pmpi_layout_of(rtype, rcount, rl))
        return "bad receive datatype or count (erroneous)";
    *sl = *rl;
    if (sendbuf != MPI_IN_PLACE) {
        if (!weft__pmpi_layout_of(stype, scount, sl))
            return "bad send datatype or count (erroneous)";
        if (sl->bytes != rl->bytes)
            return "send and receive sizes differ (erroneous)";
    }
    return NULL;
}

static WEFT__PMPI_PATH int allgather(weft__pmpi_coll k, const void *sendbuf, int sendcount,
                                     MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    /* Small: each rank's receive block is every rank's (pmpi.h). */
    if (weft__pmpi_small(k, WEFT__PMPI_SMALL_ALLGATHER, comm,
                         weft__pmpi_small_bytes(recvtype, recvcount)))
        return req ? PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                     comm, req)
                   : PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm);
    int rc;
    if (!req && weft__pmpi_tiny_gather(k, false, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                       recvtype, comm, &rc))
        return rc;
    weft__pmpi_layout sl, rl;
    weft__pmpi_target t;
    const char *why = weft__pmpi_target_of(comm, &t);
    if (!why)
        why = pair_layout(sendbuf, sendcount, sendtype, recvcount, recvtype, &sl, &rl);
    if (!why)
        why = weft__pmpi_unfit(t.comm, WEFT_COLL_ALLGATHER, rl.bytes, WEFT_UINT8, 0);
    if (why) {
        weft__pmpi_passed(&t, k, why);
        return req ? PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                     comm, req)
                   : PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm);
    }
    weft__pmpi_served(&t, k);
    weft_comm *c = t.comm;
    uint32_t me = weft_comm_rank(c), n = weft_comm_size(c);
    size_t bytes = rl.bytes;
    bool in_place = sendbuf == MPI_IN_PLACE;
    if (rl.contig && (in_place || sl.contig)) {
        /* This rank's block is at its place in recvbuf: weft's in-place
         * convention. */
        weft__pmpi_job j = {.what = WEFT__PMPI_JOB_ALLGATHER,
                            .comm = c,
                            .in = in_place ? (unsigned char *)recvbuf + me * bytes : sendbuf,
                            .out = recvbuf,
                            .count = bytes,
                            .dt = WEFT_UINT8};
        return weft__pmpi_start(&t, k, comm, &j, req);
    }
    /* Packed by MPI: runs here, after the calls queued before it. */
    weft__pmpi_drain(&t);
    unsigned char *out = recvbuf, *packed_out = NULL, *packed_in = NULL;
    const void *src = sendbuf;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = WEFT_OK;
    if (!rl.contig && !(e = weft__pmpi_scratch(n * bytes, &packed_out, &d)))
        out = packed_out;
    if (!e && in_place) {
        /* This rank's block is at its place in recvbuf: weft's in-place
         * convention, once packed. */
        src = out + me * bytes;
        if (!rl.contig)
            e = weft__pmpi_pack((unsigned char *)recvbuf + (MPI_Aint)me * recvcount * rl.extent,
                                (size_t)recvcount, recvtype, &rl, packed_out + me * bytes, false,
                                &d);
    } else if (!e && !sl.contig && !(e = weft__pmpi_scratch(bytes, &packed_in, &d))) {
        src = packed_in;
        e = weft__pmpi_pack(sendbuf, (size_t)sendcount, sendtype, &sl, packed_in, false, &d);
    }
    weft__pmpi_enter();
    if (!e)
        e = weft_allgather(c, src, out, bytes, WEFT_UINT8, &d);
    weft__pmpi_leave();
    if (!e && !rl.contig)
        e = weft__pmpi_pack(recvbuf, (size_t)n * (size_t)recvcount, recvtype, &rl, packed_out, true,
                            &d);
    free(packed_in);
    free(packed_out);
    return e ? weft__pmpi_fail(&t, k, comm, &d) : weft__pmpi_done(&t, req);
}

PMPI_EXPORT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    /* Calls of no data first, here: before the frame of the whole path. */
    if (recvcount == 0 &&
        weft__pmpi_zero_move(WEFT__PMPI_ALLGATHER, WEFT__PMPI_SMALL_ALLGATHER, sendbuf, sendcount,
                             sendtype, recvbuf, recvtype, comm))
        return MPI_SUCCESS;
    return allgather(WEFT__PMPI_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                     recvtype, comm, NULL);
}

PMPI_EXPORT int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request *request)
{
    return allgather(WEFT__PMPI_IALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                     recvtype, comm, request);
}

static WEFT__PMPI_PATH int bcast(weft__pmpi_coll k, void *buffer, int count, MPI_Datatype datatype,
                                 int root, MPI_Comm comm, MPI_Request *req)
{
    /* Small: count x size is the same on every rank (pmpi.h). */
    if (weft__pmpi_small(k, WEFT__PMPI_SMALL_BCAST, comm, weft__pmpi_small_bytes(datatype, count)))
        return req ? PMPI_Ibcast(buffer, count, datatype, root, comm, req)
                   : PMPI_Bcast(buffer, count, datatype, root, comm);
    int rc;
    if (!req && weft__pmpi_tiny_bcast(k, buffer, count, datatype, root, comm, &rc))
        return rc;
    weft__pmpi_layout l;
    weft__pmpi_target t;
    const char *why = weft__pmpi_target_of(comm, &t);
    if (!why && !weft__pmpi_layout_of(datatype, count, &l))
        why = "bad datatype or count (erroneous)";
    if (!why && (root < 0 || (uint32_t)root >= weft_comm_size(t.comm)))
        why = "root out of range";
    if (!why)
        why = weft__pmpi_unfit(t.comm, WEFT_COLL_BROADCAST, l.bytes, WEFT_UINT8, (uint32_t)root);
    if (why) {
        weft__pmpi_passed(&t, k, why);
        return req ? PMPI_Ibcast(buffer, count, datatype, root, comm, req)
                   : PMPI_Bcast(buffer, count, datatype, root, comm);
    }
    weft__pmpi_served(&t, k);
    weft_comm *c = t.comm;
    bool is_root = weft_comm_rank(c) == (uint32_t)root;
    if (l.contig) {
        weft__pmpi_job j = {.what = WEFT__PMPI_JOB_BROADCAST,
                            .comm = c,
                            .in = buffer,
                            .out = buffer,
                            .count = l.bytes,
                            .dt = WEFT_UINT8,
                            .root = (uint32_t)root};
        return weft__pmpi_start(&t, k, comm, &j, req);
    }
    /* Packed by MPI: runs here, after the calls queued before it. */
    weft__pmpi_drain(&t);
    unsigned char *data = buffer, *packed = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = WEFT_OK;
    if (!l.contig && !(e = weft__pmpi_scratch(l.bytes, &packed, &d))) {
        data = packed;
        if (is_root)
            e = weft__pmpi_pack(buffer, (size_t)count, datatype, &l, packed, false, &d);
    }
    weft__pmpi_enter();
    if (!e)
        e = weft_broadcast(c, data, data, l.bytes, WEFT_UINT8, (uint32_t)root, &d);
    weft__pmpi_leave();
    if (!e && !l.contig && !is_root)
        e = weft__pmpi_pack(buffer, (size_t)count, datatype, &l, packed, true, &d);
    free(packed);
    return e ? weft__pmpi_fail(&t, k, comm, &d) : weft__pmpi_done(&t, req);
}

PMPI_EXPORT int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    if (count == 0 && weft__pmpi_zero_bcast(WEFT__PMPI_BCAST, buffer, datatype, root, comm))
        return MPI_SUCCESS;
    return bcast(WEFT__PMPI_BCAST, buffer, count, datatype, root, comm, NULL);
}

PMPI_EXPORT int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                           MPI_Request *request)
{
    return bcast(WEFT__PMPI_IBCAST, buffer, count, datatype, root, comm, request);
}

static WEFT__PMPI_PATH int alltoall(weft__pmpi_coll k, const void *sendbuf, int sendcount,
                                    MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    /* Small: each rank's receive block is every rank's (pmpi.h). */
    if (weft__pmpi_small(k, WEFT__PMPI_SMALL_ALLTOALL, comm,
                         weft__pmpi_small_bytes(recvtype, recvcount)))
        return req ? PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm, req)
                   : PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                   comm);
    int rc;
    if (!req && weft__pmpi_tiny_gather(k, true, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                       recvtype, comm, &rc))
        return rc;
    weft__pmpi_layout sl, rl;
    weft__pmpi_target t;
    const char *why = weft__pmpi_target_of(comm, &t);
    if (!why)
        why = pair_layout(sendbuf, sendcount, sendtype, recvcount, recvtype, &sl, &rl);
    if (!why)
        why = weft__pmpi_unfit(t.comm, WEFT_COLL_ALLTOALL, rl.bytes, WEFT_UINT8, 0);
    if (why) {
        weft__pmpi_passed(&t, k, why);
        return req ? PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm, req)
                   : PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                   comm);
    }
    weft__pmpi_served(&t, k);
    weft_comm *c = t.comm;
    size_t n = weft_comm_size(c), bytes = rl.bytes;
    bool in_place = sendbuf == MPI_IN_PLACE;
    if (rl.contig && (in_place || sl.contig)) {
        /* In place, recvbuf holds the input: weft's convention (sendbuf ==
         * recvbuf). */
        weft__pmpi_job j = {.what = WEFT__PMPI_JOB_ALLTOALL,
                            .comm = c,
                            .in = in_place ? recvbuf : sendbuf,
                            .out = recvbuf,
                            .count = bytes,
                            .dt = WEFT_UINT8};
        return weft__pmpi_start(&t, k, comm, &j, req);
    }
    /* Packed by MPI: runs here, after the calls queued before it. */
    weft__pmpi_drain(&t);
    unsigned char *out = recvbuf, *packed_out = NULL, *packed_in = NULL;
    const void *src = sendbuf;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = WEFT_OK;
    if (!rl.contig && !(e = weft__pmpi_scratch(n * bytes, &packed_out, &d)))
        out = packed_out;
    if (!e && in_place) {
        /* recvbuf holds the input: weft's in-place convention (sendbuf ==
         * recvbuf), once packed. */
        src = out;
        if (!rl.contig)
            e = weft__pmpi_pack(recvbuf, n * (size_t)recvcount, recvtype, &rl, packed_out, false,
                                &d);
    } else if (!e && !sl.contig && !(e = weft__pmpi_scratch(n * bytes, &packed_in, &d))) {
        src = packed_in;
        e = weft__pmpi_pack(sendbuf, n * (size_t)sendcount, sendtype, &sl, packed_in, false, &d);
    }
    weft__pmpi_enter();
    if (!e)
        e = weft_alltoall(c, src, out, bytes, WEFT_UINT8, &d);
    weft__pmpi_leave();
    if (!e && !rl.contig)
        e = weft__pmpi_pack(recvbuf, n * (size_t)recvcount, recvtype, &rl, packed_out, true, &d);
    free(packed_in);
    free(packed_out);
    return e ? weft__pmpi_fail(&t, k, comm, &d) : weft__pmpi_done(&t, req);
}

PMPI_EXPORT int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (recvcount == 0 &&
        weft__pmpi_zero_move(WEFT__PMPI_ALLTOALL, WEFT__PMPI_SMALL_ALLTOALL, sendbuf, sendcount,
                             sendtype, recvbuf, recvtype, comm))
        return MPI_SUCCESS;
    return alltoall(WEFT__PMPI_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                    comm, NULL);
}

PMPI_EXPORT int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request *request)
{
    return alltoall(WEFT__PMPI_IALLTOALL, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, comm, request);
}
