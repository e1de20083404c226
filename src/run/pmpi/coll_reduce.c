/* The reducing collectives interposed, blocking and non-blocking:
 * MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Reduce_scatter and
 * MPI_Reduce (and MPI_I* of each; see pmpi.h), each served by the weft
 * collective of the same kind (weft_allreduce, weft_reduce_scatter,
 * weft_reduce), so the schedule is weft's choice for the call.
 * MPI_Reduce_scatter with unequal recvcounts (which MPI requires to be the
 * same on every rank) runs weft_allreduce of the whole vector into a
 * private buffer and keeps this rank's part; small blocking ones of either
 * kind go through the ring of slots (tiny.c). They are served when the
 * datatype and operator map to weft's (weft__pmpi_dtype, weft__pmpi_op) on
 * a communicator with a weft side and the chosen schedule fits
 * (weft__pmpi_unfit); MPI_IN_PLACE is handled for all. */
#include <stdlib.h>
#include <string.h>

#include "run/pmpi/pmpi.h"
#include "run/pmpi/zero.h"

#define PMPI_EXPORT __attribute__((visibility("default")))

/* NULL when weft can serve a reduction (coll, root) of count elements of t
 * with op on the communicator t holds (and then *dt, *ro are set);
 * otherwise why not. */
static const char *unfit(MPI_Datatype dtype, MPI_Op op, long long count, weft_coll coll, int root,
                         const weft__pmpi_target *t, weft_dtype *dt, weft_redop *ro)
{
    if (count < 0)
        return "negative count";
    if (!weft__pmpi_dtype(dtype, dt))
        return "datatype weft does not reduce";
    if (!weft__pmpi_op(op, ro))
        return "operator weft does not have";
    if (root < 0 || (uint32_t)root >= weft_comm_size(t->comm))
        return "root out of range";
    return weft__pmpi_unfit(t->comm, coll, (size_t)count, *dt, (uint32_t)root);
}

/* Looks comm up (weft__pmpi_target_of) and then as unfit. */
static const char *why_not(MPI_Comm comm, MPI_Datatype dtype, MPI_Op op, long long count,
                           weft_coll coll, int root, weft__pmpi_target *t, weft_dtype *dt,
                           weft_redop *ro)
{
    const char *why = weft__pmpi_target_of(comm, t);
    return why ? why : unfit(dtype, op, count, coll, root, t, dt, ro);
}

static WEFT__PMPI_PATH int allreduce(weft__pmpi_coll k, const void *sendbuf, void *recvbuf,
                                     int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                     MPI_Request *req)
{
    if (weft__pmpi_small(k, WEFT__PMPI_SMALL_ALLREDUCE, comm,
                         weft__pmpi_small_bytes(datatype, count)))
        return req ? PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, req)
                   : PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    int rc;
    if (!req && weft__pmpi_tiny_reduce(k, WEFT_COLL_ALLREDUCE, sendbuf, recvbuf, count, datatype,
                                       op, 0, comm, &rc))
        return rc;
    weft__pmpi_target t;
    weft_dtype dt;
    weft_redop ro;
    const char *why = why_not(comm, datatype, op, count, WEFT_COLL_ALLREDUCE, 0, &t, &dt, &ro);
    if (why) {
        weft__pmpi_passed(&t, k, why);
        return req ? PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, req)
                   : PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    }
    weft__pmpi_served(&t, k);
    weft__pmpi_job j = {.what = WEFT__PMPI_JOB_ALLREDUCE,
                        .comm = t.comm,
                        .in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf,
                        .out = recvbuf,
                        .count = (size_t)count,
                        .dt = dt,
                        .op = ro};
    return weft__pmpi_start(&t, k, comm, &j, req);
}

PMPI_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm)
{
    /* Calls of no data first, here: before the frame of the whole path. */
    if (count == 0 && weft__pmpi_zero_reduce(WEFT__PMPI_ALLREDUCE, WEFT__PMPI_SMALL_ALLREDUCE,
                                             sendbuf, recvbuf, datatype, op, 0, comm))
        return MPI_SUCCESS;
    return allreduce(WEFT__PMPI_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, comm, NULL);
}

PMPI_EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return allreduce(WEFT__PMPI_IALLREDUCE, sendbuf, recvbuf, count, datatype, op, comm, request);
}

/* The job of a reduce-scatter of blocks of recvcount elements on c
 * (served). */
static weft_err rs_block(weft_comm *c, const void *sendbuf, void *recvbuf, int recvcount,
                         weft_dtype dt, weft_redop ro, weft__pmpi_job *j, weft_diag *d)
{
    size_t block = (size_t)recvcount * weft_dtype_size(dt);
    *j = (weft__pmpi_job){.what = WEFT__PMPI_JOB_REDUCE_SCATTER,
                          .comm = c,
                          .in = sendbuf,
                          .out = recvbuf,
                          .count = (size_t)recvcount,
                          .dt = dt,
                          .op = ro};
    if (sendbuf == MPI_IN_PLACE) {
        /* MPI's input is recvbuf, its result goes to recvbuf's first block,
         * and the other blocks stay the input (MPI 3.1 section 5.10.1):
         * weft reduces a private copy of the input (made now, at issue)
         * into recvbuf. (Weft's own in-place form leaves its copies of the
         * result in the other blocks, which the first version handed
         * back.) A call of no data may have recvbuf NULL (mpi4py's of an
         * empty array), which memcpy must not be given, even for 0 bytes. */
        unsigned char *input = NULL;
        size_t bytes = block * weft_comm_size(c);
        weft_err e = weft__pmpi_scratch(bytes, &input, d);
        if (e)
            return e;
        if (bytes)
            memcpy(input, recvbuf, bytes);
        j->in = input;
        j->owned[0] = input;
    }
    return WEFT_OK;
}

static WEFT__PMPI_PATH int reduce_scatter_block(weft__pmpi_coll k, const void *sendbuf,
                                                void *recvbuf, int recvcount, MPI_Datatype datatype,
                                                MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    if (weft__pmpi_small(k, WEFT__PMPI_SMALL_REDUCE_SCATTER_BLOCK, comm,
                         weft__pmpi_small_bytes(datatype, recvcount)))
        return req ? PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                                req)
                   : PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    int rc;
    if (!req && weft__pmpi_tiny_reduce(k, WEFT_COLL_REDUCESCATTER, sendbuf, recvbuf, recvcount,
                                       datatype, op, 0, comm, &rc))
        return rc;
    weft__pmpi_target t;
    weft_dtype dt;
    weft_redop ro;
    const char *why =
        why_not(comm, datatype, op, recvcount, WEFT_COLL_REDUCESCATTER, 0, &t, &dt, &ro);
    if (why) {
        weft__pmpi_passed(&t, k, why);
        return req ? PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                                req)
                   : PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    }
    weft__pmpi_served(&t, k);
    weft_diag d;
    weft_diag_clear(&d);
    weft__pmpi_job j;
    if (rs_block(t.comm, sendbuf, recvbuf, recvcount, dt, ro, &j, &d))
        return weft__pmpi_fail(&t, k, comm, &d);
    return weft__pmpi_start(&t, k, comm, &j, req);
}

PMPI_EXPORT int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (recvcount == 0 && weft__pmpi_zero_reduce(WEFT__PMPI_REDUCE_SCATTER_BLOCK,
                                                 WEFT__PMPI_SMALL_REDUCE_SCATTER_BLOCK, sendbuf,
                                                 recvbuf, datatype, op, 0, comm))
        return MPI_SUCCESS;
    return reduce_scatter_block(WEFT__PMPI_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount,
                                datatype, op, comm, NULL);
}

PMPI_EXPORT int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                          MPI_Request *request)
{
    return reduce_scatter_block(WEFT__PMPI_IREDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount,
                                datatype, op, comm, request);
}

static WEFT__PMPI_PATH int reduce_scatter(weft__pmpi_coll k, const void *sendbuf, void *recvbuf,
                                          const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                                          MPI_Comm comm, MPI_Request *req)
{
    /* Small: the vector (recvcounts, alike on every rank) over the number
     * of ranks. */
    uint32_t size = weft__pmpi_small_size(comm);
    long long vector = size && recvcounts ? 0 : -1;
    for (uint32_t r = 0; vector >= 0 && r < size; r++)
        vector = recvcounts[r] < 0 ? -1 : vector + recvcounts[r];
    long long bytes = vector < 0 ? -1 : weft__pmpi_small_bytes(datatype, vector);
    if (weft__pmpi_small_n(k, WEFT__PMPI_SMALL_REDUCE_SCATTER, size,
                           bytes < 0 ? -1 : bytes / (long long)size))
        return req ? PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, req)
                   : PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    int rc;
    if (!req &&
        weft__pmpi_tiny_reduce_scatter(k, sendbuf, recvbuf, recvcounts, datatype, op, comm, &rc))
        return rc;
    weft__pmpi_target t;
    weft_dtype dt;
    weft_redop ro;
    const char *why = weft__pmpi_target_of(comm, &t);
    /* The counts, which every rank must pass alike: equal ones are a
     * reduce-scatter of blocks, others an allreduce of their sum. */
    long long sum = 0, before = 0;
    bool equal = true;
    uint32_t n = why ? 0 : weft_comm_size(t.comm), me = why ? 0 : weft_comm_rank(t.comm);
    if (!why && !recvcounts)
        why = "no recvcounts";
    for (uint32_t r = 0; !why && r < n; r++) {
        if (recvcounts[r] < 0)
            why = "negative count";
        if (r == me)
            before = sum;
        sum += recvcounts[r];
        equal = equal && recvcounts[r] == recvcounts[0];
    }
    if (!why)
        why = equal ? unfit(datatype, op, recvcounts[0], WEFT_COLL_REDUCESCATTER, 0, &t, &dt, &ro)
                    : unfit(datatype, op, sum, WEFT_COLL_ALLREDUCE, 0, &t, &dt, &ro);
    if (why) {
        weft__pmpi_passed(&t, k, why);
        return req ? PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, req)
                   : PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    }
    weft__pmpi_served(&t, k);
    weft_diag d;
    weft_diag_clear(&d);
    weft__pmpi_job j;
    if (equal) {
        if (rs_block(t.comm, sendbuf, recvbuf, recvcounts[0], dt, ro, &j, &d))
            return weft__pmpi_fail(&t, k, comm, &d);
    } else {
        /* The whole vector reduced into a private buffer, of which this
         * rank keeps its part. */
        size_t es = weft_dtype_size(dt);
        unsigned char *all = NULL;
        if (weft__pmpi_scratch((size_t)sum * es, &all, &d))
            return weft__pmpi_fail(&t, k, comm, &d);
        j = (weft__pmpi_job){.what = WEFT__PMPI_JOB_ALLREDUCE,
                             .comm = t.comm,
                             .in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf,
                             .out = all,
                             .count = (size_t)sum,
                             .dt = dt,
                             .op = ro,
                             .copy_to = recvbuf,
                             .copy_from = all + (size_t)before * es,
                             .copy_bytes = (size_t)recvcounts[me] * es,
                             .owned = {all}};
    }
    return weft__pmpi_start(&t, k, comm, &j, req);
}

PMPI_EXPORT int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (weft__pmpi_zero_reduce_scatter(WEFT__PMPI_REDUCE_SCATTER, recvbuf, recvcounts, datatype, op,
                                       comm))
        return MPI_SUCCESS;
    return reduce_scatter(WEFT__PMPI_REDUCE_SCATTER, sendbuf, recvbuf, recvcounts, datatype, op,
                          comm, NULL);
}

PMPI_EXPORT int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                    MPI_Request *request)
{
    return reduce_scatter(WEFT__PMPI_IREDUCE_SCATTER, sendbuf, recvbuf, recvcounts, datatype, op,
                          comm, request);
}

static WEFT__PMPI_PATH int reduce(weft__pmpi_coll k, const void *sendbuf, void *recvbuf, int count,
                                  MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                  MPI_Request *req)
{
    if (weft__pmpi_small(k, WEFT__PMPI_SMALL_REDUCE, comm, weft__pmpi_small_bytes(datatype, count)))
        return req ? PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, req)
                   : PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    int rc;
    if (!req && weft__pmpi_tiny_reduce(k, WEFT_COLL_REDUCE, sendbuf, recvbuf, count, datatype, op,
                                       root, comm, &rc))
        return rc;
    weft__pmpi_target t;
    weft_dtype dt;
    weft_redop ro;
    const char *why = why_not(comm, datatype, op, count, WEFT_COLL_REDUCE, root, &t, &dt, &ro);
    if (why) {
        weft__pmpi_passed(&t, k, why);
        return req ? PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, req)
                   : PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    }
    weft__pmpi_served(&t, k);
    /* Only the root may pass MPI_IN_PLACE; its input is then recvbuf. Other
     * ranks' recvbuf is not significant in MPI, so weft gets NULL. */
    bool is_root = weft_comm_rank(t.comm) == (uint32_t)root;
    weft__pmpi_job j = {.what = WEFT__PMPI_JOB_REDUCE,
                        .comm = t.comm,
                        .in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf,
                        .out = is_root ? recvbuf : NULL,
                        .count = (size_t)count,
                        .dt = dt,
                        .op = ro,
                        .root = (uint32_t)root};
    return weft__pmpi_start(&t, k, comm, &j, req);
}

PMPI_EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, int root, MPI_Comm comm)
{
    if (count == 0 && weft__pmpi_zero_reduce(WEFT__PMPI_REDUCE, WEFT__PMPI_SMALL_REDUCE, sendbuf,
                                             recvbuf, datatype, op, root, comm))
        return MPI_SUCCESS;
    return reduce(WEFT__PMPI_REDUCE, sendbuf, recvbuf, count, datatype, op, root, comm, NULL);
}

PMPI_EXPORT int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    return reduce(WEFT__PMPI_IREDUCE, sendbuf, recvbuf, count, datatype, op, root, comm, request);
}
