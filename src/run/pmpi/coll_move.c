/* The collectives that only move data, interposed: MPI_Allgather, MPI_Bcast
 * and MPI_Alltoall (see pmpi.h), served by weft_allgather, weft_broadcast
 * and weft_alltoall (so the schedule is weft's choice for the call). They
 * are served on MPI_COMM_WORLD for any datatype laid out contiguously
 * (weft__pmpi_contig_bytes), moved as bytes (WEFT_UINT8, count = bytes),
 * when the chosen schedule fits (weft__pmpi_unfit); MPI_IN_PLACE is handled
 * for MPI_Allgather and MPI_Alltoall. */
#include <string.h>

#include "run/pmpi/pmpi.h"

#define PMPI_EXPORT __attribute__((visibility("default")))

static const char *why_not(MPI_Comm comm)
{
    if (!weft__pmpi_comm()) return "weft is off";
    if (comm != MPI_COMM_WORLD) return "not MPI_COMM_WORLD";
    if (!weft__pmpi_usable(comm)) return "inside weft";
    return NULL;
}

/* The bytes per rank of a send/receive pair when both sides are contiguous
 * and carry the same number of bytes; sendbuf MPI_IN_PLACE ignores the send
 * side. NULL when servable, else why not. */
static const char *pair_bytes(const void *sendbuf, int scount, MPI_Datatype stype, int rcount,
                              MPI_Datatype rtype, size_t *out)
{
    size_t rb, sb;
    if (!weft__pmpi_contig_bytes(rtype, rcount, &rb)) return "non-contiguous receive datatype";
    if (sendbuf != MPI_IN_PLACE) {
        if (!weft__pmpi_contig_bytes(stype, scount, &sb)) return "non-contiguous send datatype";
        if (sb != rb) return "send and receive sizes differ";
    }
    *out = rb;
    return NULL;
}

PMPI_EXPORT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    size_t bytes = 0;
    const char *why = why_not(comm);
    if (!why) why = pair_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype, &bytes);
    if (!why) why = weft__pmpi_unfit(WEFT_COLL_ALLGATHER, bytes, WEFT_UINT8, 0);
    if (why) {
        weft__pmpi_passed(WEFT__PMPI_ALLGATHER, why);
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    weft__pmpi_served(WEFT__PMPI_ALLGATHER);
    weft_comm *c = weft__pmpi_comm();
    /* MPI_IN_PLACE: this rank's block is already at its place in recvbuf,
     * which is weft's in-place convention. */
    const void *src = sendbuf == MPI_IN_PLACE
                          ? (const unsigned char *)recvbuf + weft_comm_rank(c) * bytes
                          : sendbuf;
    weft_diag d;
    weft_diag_clear(&d);
    weft__pmpi_enter();
    weft_err e = weft_allgather(c, src, recvbuf, bytes, WEFT_UINT8, &d);
    weft__pmpi_leave();
    return e ? weft__pmpi_fail(WEFT__PMPI_ALLGATHER, comm, &d) : MPI_SUCCESS;
}

PMPI_EXPORT int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    size_t bytes = 0;
    const char *why = why_not(comm);
    if (!why && !weft__pmpi_contig_bytes(datatype, count, &bytes))
        why = "non-contiguous datatype";
    if (!why && (root < 0 || (uint32_t)root >= weft_comm_size(weft__pmpi_comm())))
        why = "root out of range";
    if (!why) why = weft__pmpi_unfit(WEFT_COLL_BROADCAST, bytes, WEFT_UINT8, (uint32_t)root);
    if (why) {
        weft__pmpi_passed(WEFT__PMPI_BCAST, why);
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    }
    weft__pmpi_served(WEFT__PMPI_BCAST);
    weft_diag d;
    weft_diag_clear(&d);
    weft__pmpi_enter();
    weft_err e = weft_broadcast(weft__pmpi_comm(), buffer, buffer, bytes, WEFT_UINT8,
                                (uint32_t)root, &d);
    weft__pmpi_leave();
    return e ? weft__pmpi_fail(WEFT__PMPI_BCAST, comm, &d) : MPI_SUCCESS;
}

PMPI_EXPORT int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    size_t bytes = 0;
    const char *why = why_not(comm);
    if (!why) why = pair_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype, &bytes);
    if (!why) why = weft__pmpi_unfit(WEFT_COLL_ALLTOALL, bytes, WEFT_UINT8, 0);
    if (why) {
        weft__pmpi_passed(WEFT__PMPI_ALLTOALL, why);
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    weft__pmpi_served(WEFT__PMPI_ALLTOALL);
    /* MPI_IN_PLACE: recvbuf holds the input, which is weft's in-place
     * convention (sendbuf == recvbuf). */
    const void *src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    weft_diag d;
    weft_diag_clear(&d);
    weft__pmpi_enter();
    weft_err e = weft_alltoall(weft__pmpi_comm(), src, recvbuf, bytes, WEFT_UINT8, &d);
    weft__pmpi_leave();
    return e ? weft__pmpi_fail(WEFT__PMPI_ALLTOALL, comm, &d) : MPI_SUCCESS;
}
