/* The reducing collectives interposed: MPI_Allreduce,
 * MPI_Reduce_scatter_block and MPI_Reduce (see pmpi.h), each served by the
 * weft collective of the same kind (weft_allreduce, weft_reduce_scatter,
 * weft_reduce), so the schedule is weft's choice for the call. They are
 * served when the datatype and operator map to weft's (weft__pmpi_dtype,
 * weft__pmpi_op) on MPI_COMM_WORLD and the chosen schedule fits
 * (weft__pmpi_unfit); MPI_IN_PLACE is handled for all three. */
#include <string.h>

#include "run/pmpi/pmpi.h"

#define PMPI_EXPORT __attribute__((visibility("default")))

/* NULL when weft can serve a reduction (coll, root) of count elements of t
 * with op on comm (and then *dt, *ro are set); otherwise why not. */
static const char *why_not(MPI_Comm comm, MPI_Datatype t, MPI_Op op, int count, weft_coll coll,
                           int root, weft_dtype *dt, weft_redop *ro)
{
    if (!weft__pmpi_comm()) return "weft is off";
    if (comm != MPI_COMM_WORLD) return "not MPI_COMM_WORLD";
    if (!weft__pmpi_usable(comm)) return "inside weft";
    if (count < 0) return "negative count";
    if (!weft__pmpi_dtype(t, dt)) return "datatype weft does not reduce";
    if (!weft__pmpi_op(op, ro)) return "operator weft does not have";
    if (root < 0 || (uint32_t)root >= weft_comm_size(weft__pmpi_comm())) return "root out of range";
    return weft__pmpi_unfit(coll, (size_t)count, *dt, (uint32_t)root);
}

PMPI_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm)
{
    weft_dtype dt;
    weft_redop ro;
    const char *why = why_not(comm, datatype, op, count, WEFT_COLL_ALLREDUCE, 0, &dt, &ro);
    if (why) {
        weft__pmpi_passed(WEFT__PMPI_ALLREDUCE, why);
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    }
    weft__pmpi_served(WEFT__PMPI_ALLREDUCE);
    const void *src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    weft_diag d;
    weft_diag_clear(&d);
    weft__pmpi_enter();
    weft_err e = weft_allreduce(weft__pmpi_comm(), src, recvbuf, (size_t)count, dt, ro, &d);
    weft__pmpi_leave();
    return e ? weft__pmpi_fail(WEFT__PMPI_ALLREDUCE, comm, &d) : MPI_SUCCESS;
}

PMPI_EXPORT int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    weft_dtype dt;
    weft_redop ro;
    const char *why =
        why_not(comm, datatype, op, recvcount, WEFT_COLL_REDUCESCATTER, 0, &dt, &ro);
    if (why) {
        weft__pmpi_passed(WEFT__PMPI_REDUCE_SCATTER_BLOCK, why);
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    }
    weft__pmpi_served(WEFT__PMPI_REDUCE_SCATTER_BLOCK);
    weft_comm *c = weft__pmpi_comm();
    size_t block = (size_t)recvcount * weft_dtype_size(dt);
    unsigned char *mine = (unsigned char *)recvbuf + weft_comm_rank(c) * block;
    weft_diag d;
    weft_diag_clear(&d);
    weft__pmpi_enter();
    weft_err e;
    if (sendbuf == MPI_IN_PLACE) {
        /* MPI's input is recvbuf and its result goes to recvbuf's start;
         * weft's in-place result is this rank's block of the input. */
        e = weft_reduce_scatter(c, recvbuf, mine, (size_t)recvcount, dt, ro, &d);
        if (!e && mine != recvbuf) memmove(recvbuf, mine, block);
    } else {
        e = weft_reduce_scatter(c, sendbuf, recvbuf, (size_t)recvcount, dt, ro, &d);
    }
    weft__pmpi_leave();
    return e ? weft__pmpi_fail(WEFT__PMPI_REDUCE_SCATTER_BLOCK, comm, &d) : MPI_SUCCESS;
}

PMPI_EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, int root, MPI_Comm comm)
{
    weft_dtype dt;
    weft_redop ro;
    const char *why = why_not(comm, datatype, op, count, WEFT_COLL_REDUCE, root, &dt, &ro);
    if (why) {
        weft__pmpi_passed(WEFT__PMPI_REDUCE, why);
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    }
    weft__pmpi_served(WEFT__PMPI_REDUCE);
    weft_comm *c = weft__pmpi_comm();
    /* Only the root may pass MPI_IN_PLACE; its input is then recvbuf. Other
     * ranks' recvbuf is not significant in MPI, so weft gets NULL. */
    bool is_root = weft_comm_rank(c) == (uint32_t)root;
    const void *src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    weft_diag d;
    weft_diag_clear(&d);
    weft__pmpi_enter();
    weft_err e = weft_reduce(c, src, is_root ? recvbuf : NULL, (size_t)count, dt, ro,
                             (uint32_t)root, &d);
    weft__pmpi_leave();
    return e ? weft__pmpi_fail(WEFT__PMPI_REDUCE, comm, &d) : MPI_SUCCESS;
}
