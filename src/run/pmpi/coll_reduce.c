/* The reducing collectives interposed: MPI_Allreduce,
 * MPI_Reduce_scatter_block and MPI_Reduce (see pmpi.h). They are served when
 * the datatype and operator map to weft's (weft__pmpi_dtype, weft__pmpi_op)
 * on MPI_COMM_WORLD; MPI_IN_PLACE is handled for all three. */
#include <string.h>

#include "base/alloc.h"
#include "run/pmpi/pmpi.h"

#define PMPI_EXPORT __attribute__((visibility("default")))

/* NULL when weft can serve a reduction of count elements of t with op on
 * comm (and then *dt, *ro are set); otherwise why not. */
static const char *why_not(MPI_Comm comm, MPI_Datatype t, MPI_Op op, int count, weft_dtype *dt,
                           weft_redop *ro)
{
    if (!weft__pmpi_comm()) return "weft is off";
    if (comm != MPI_COMM_WORLD) return "not MPI_COMM_WORLD";
    if (!weft__pmpi_usable(comm)) return "inside weft";
    if (count < 0) return "negative count";
    if (!weft__pmpi_dtype(t, dt)) return "datatype weft does not reduce";
    if (!weft__pmpi_op(op, ro)) return "operator weft does not have";
    return NULL;
}

PMPI_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm)
{
    weft_dtype dt;
    weft_redop ro;
    const char *why = why_not(comm, datatype, op, count, &dt, &ro);
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
    const char *why = why_not(comm, datatype, op, recvcount, &dt, &ro);
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

/* Reduce to root as a reduce-scatter of the first n*q elements (q =
 * count / n) followed by each rank sending its block of q to the root, and
 * an allreduce of the remaining count % n: every rank moves about as much
 * as in an allreduce, and no rank but the root needs a full-size buffer. */
static weft_err reduce_to_root(weft_comm *c, const void *src, void *recvbuf, size_t count,
                               weft_dtype dt, weft_redop ro, uint32_t root, weft_diag *d)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t es = weft_dtype_size(dt), q = count / n, tail = count - q * n;
    const unsigned char *in = src;
    unsigned char *out = recvbuf;
    size_t scratch_elems = (me == root ? 0 : q) + tail;
    unsigned char *scratch = NULL;
    if (scratch_elems && me != root) {
        scratch = weft__malloc(scratch_elems * es);
        if (!scratch) return weft_diag_code(d, WEFT_ENOMEM);
    }
    weft_err e = WEFT_OK;
    if (q) {
        unsigned char *block = me == root ? out + (size_t)root * q * es : scratch;
        e = weft_reduce_scatter(c, in, block, q, dt, ro, d);
        if (e) goto free_scratch;
        if (me != root) {
            e = weft_send(c, root, block, q * es, d);
        } else {
            for (uint32_t r = 0; r < n && !e; r++)
                if (r != root) e = weft_recv(c, r, out + (size_t)r * q * es, q * es, d);
        }
        if (e) goto free_scratch;
    }
    if (tail) {
        unsigned char *rest = me == root ? out + n * q * es : scratch + q * es;
        e = weft_allreduce(c, in + n * q * es, rest, tail, dt, ro, d);
    }
free_scratch:
    weft__free(scratch);
    return e;
}

PMPI_EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, int root, MPI_Comm comm)
{
    weft_dtype dt;
    weft_redop ro;
    const char *why = why_not(comm, datatype, op, count, &dt, &ro);
    if (!why && (root < 0 || (uint32_t)root >= weft_comm_size(weft__pmpi_comm())))
        why = "root out of range";
    if (why) {
        weft__pmpi_passed(WEFT__PMPI_REDUCE, why);
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    }
    weft__pmpi_served(WEFT__PMPI_REDUCE);
    /* Only the root may pass MPI_IN_PLACE; its input is then recvbuf. */
    const void *src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    weft_diag d;
    weft_diag_clear(&d);
    weft__pmpi_enter();
    weft_err e = reduce_to_root(weft__pmpi_comm(), src, recvbuf, (size_t)count, dt, ro,
                                (uint32_t)root, &d);
    weft__pmpi_leave();
    return e ? weft__pmpi_fail(WEFT__PMPI_REDUCE, comm, &d) : MPI_SUCCESS;
}
