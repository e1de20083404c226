/* Calls of no data, served at once (small.c; docs/interop.md, "Calls of
 * no data"): tested first by the exported blocking collectives but
 * MPI_Alltoallv, inline and before any look-up, so that such a call costs
 * a few comparisons (an out-of-line test cost a call's arguments saved
 * and restored: 92 instructions a served MPI_Reduce_scatter_block of no
 * data, 45 inline, where Open MPI 4.1.4's own runs 72; callgrind, rank 0
 * of osu_reduce_scatter_block at 2 ranks). Each function
 * is true when the call has no data on any rank and was served (counted
 * on MPI_COMM_WORLD's line whatever its communicator; the caller returns
 * MPI_SUCCESS), false when it goes on as before.
 *
 * Open MPI 4.1.4 (open-mpi/ompi v4.1.4, ffb0adcdd677, ompi/mpi/c/
 * allreduce.c, reduce.c, bcast.c, allgather.c, alltoall.c,
 * reduce_scatter_block.c, reduce_scatter.c) returns MPI_SUCCESS from such
 * a call without communicating, after its argument checks
 * (MPI_PARAM_CHECK): MPI initialized and not finalized, a valid
 * communicator, the operator valid for the datatype, a committed
 * datatype, no misplaced MPI_IN_PLACE, a root in range. A call is served
 * here only where each of those holds without a query to MPI:
 * MPI_COMM_WORLD (valid and an intra-communicator from MPI_Init to
 * MPI_Finalize) or a communicator weft holds (valid: weft drops it when
 * MPI_Comm_free or MPI_Comm_disconnect does; an intra-communicator: weft
 * makes none for others; its size and this rank from weft, through the
 * thread's last look-up, weft__pmpi_zero_cache), a
 * predefined basic datatype (committed), for reductions an operator and
 * type weft reduces (MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX on C and Fortran
 * integers and floating types: valid for each, MPI 3.1 section 5.9.2),
 * and only where the family's pass limit is 1 or more (the default), so
 * that a serve replaces a pass to MPI from which MPI returns at once
 * without communicating: which ranks serve and which pass changes nothing
 * any rank waits for. (At limit 0 every call goes to weft, and a rank
 * whose type is not basic must not take another path than its peers'.)
 * Any other call goes on as before (a call of no data to MPI, which
 * reports what is wrong with it). */
#ifndef WEFT_RUN_PMPI_ZERO_H
#define WEFT_RUN_PMPI_ZERO_H

#include "run/pmpi/pmpi.h"

/* Set by weft__pmpi_zero_arm from MPI_Init's end to MPI_Finalize's start,
 * read without a lock after (as the pass limits are). */
typedef struct weft__pmpi_zero_state {
    bool ready[WEFT__PMPI_SMALL_COUNT];     /* pass limit 1 or more, agreed,
                                               at MPI_COMM_WORLD's size */
    bool ready_any[WEFT__PMPI_SMALL_COUNT]; /* the same at any size */
    uint32_t world;                         /* MPI_COMM_WORLD's size */
    int rank;                               /* this rank in it */
} weft__pmpi_zero_state;
extern weft__pmpi_zero_state weft__pmpi_zero;
void weft__pmpi_zero_arm(bool on);
/* Counts one call of k served here (per thread) and logs the first. */
void weft__pmpi_zero_count(weft__pmpi_coll k);
/* This thread's counts (small.c), once it has any: counted inline after a
 * collective's first call on the thread. */
extern _Thread_local uint64_t *weft__pmpi_zero_mine WEFT__PMPI_TLS;

/* Whether a call of no data of family f on comm may be served here, with
 * comm's size and this rank in it. */
static inline bool weft__pmpi_zero_gate(MPI_Comm comm, weft__pmpi_small_kind f, uint32_t *size,
                                        uint32_t *rank)
{
    if (weft__pmpi_depth != 0)
        return false;
    if (comm == MPI_COMM_WORLD) {
        *size = weft__pmpi_zero.world;
        *rank = (uint32_t)weft__pmpi_zero.rank;
        return weft__pmpi_zero.ready[f];
    }
    if (!weft__pmpi_zero.ready_any[f] || comm == MPI_COMM_NULL)
        return false;
    /* The thread's last look-up, without its lock: a call on a
     * communicator that another thread frees is erroneous (MPI 3.1
     * section 6.4.3), and a handle whose entry was removed finds its slot
     * NULL. Else looked up once, and cached for the next call. */
    const weft__pmpi_zero_last *z = &weft__pmpi_zero_cache;
    if (z->comm && z->mpi == comm && __atomic_load_n(z->comm, __ATOMIC_ACQUIRE)) {
        *size = z->size;
        *rank = z->rank;
        return true;
    }
    return weft__pmpi_zero_lookup(comm, size, rank);
}

/* A predefined type of fixed size: MPI_BYTE, MPI_CHAR or one weft reduces
 * (the commonest compared first). */
static inline bool weft__pmpi_zero_basic(MPI_Datatype t)
{
    weft_dtype dt;
    return t == MPI_BYTE || t == MPI_CHAR || t == MPI_FLOAT || t == MPI_INT || t == MPI_DOUBLE ||
           weft__pmpi_dtype(t, &dt);
}

/* An operator and type weft reduces (weft__pmpi_op's operators). */
static inline bool weft__pmpi_zero_reducible(MPI_Datatype t, MPI_Op op)
{
    weft_dtype dt;
    return (op == MPI_SUM || op == MPI_MAX || op == MPI_MIN || op == MPI_PROD) &&
           (t == MPI_FLOAT || t == MPI_INT || t == MPI_DOUBLE || weft__pmpi_dtype(t, &dt));
}

static inline bool weft__pmpi_zero_served(weft__pmpi_coll k)
{
    uint64_t *mine = weft__pmpi_zero_mine;
    if (mine && mine[k])
        mine[k]++;
    else
        weft__pmpi_zero_count(k);
    return true;
}

/* MPI_Allreduce, MPI_Reduce (root) or MPI_Reduce_scatter_block of count
 * 0: k and its family f say which. recvbuf MPI_IN_PLACE: MPI_ERR_BUFFER
 * (allreduce), MPI_ERR_ARG (reduce at the root, reduce_scatter_block);
 * MPI_Reduce: MPI_ERR_ROOT out of range, MPI_ERR_ARG for MPI_IN_PLACE but
 * at the root. */
static inline bool weft__pmpi_zero_reduce(weft__pmpi_coll k, weft__pmpi_small_kind f,
                                          const void *sendbuf, const void *recvbuf,
                                          MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
    uint32_t size, rank;
    if (recvbuf == MPI_IN_PLACE || !weft__pmpi_zero_reducible(datatype, op) ||
        !weft__pmpi_zero_gate(comm, f, &size, &rank))
        return false;
    if (k == WEFT__PMPI_REDUCE &&
        (root < 0 || (uint32_t)root >= size || ((uint32_t)root != rank && sendbuf == MPI_IN_PLACE)))
        return false;
    return weft__pmpi_zero_served(k);
}

/* MPI_Reduce_scatter with every count 0 (recvbuf MPI_IN_PLACE:
 * MPI_ERR_ARG). */
static inline bool weft__pmpi_zero_reduce_scatter(weft__pmpi_coll k, const void *recvbuf,
                                                  const int recvcounts[], MPI_Datatype datatype,
                                                  MPI_Op op, MPI_Comm comm)
{
    uint32_t size, rank;
    if (!recvcounts || recvbuf == MPI_IN_PLACE || !weft__pmpi_zero_reducible(datatype, op) ||
        !weft__pmpi_zero_gate(comm, WEFT__PMPI_SMALL_REDUCE_SCATTER, &size, &rank))
        return false;
    for (uint32_t r = 0; r < size; r++)
        if (recvcounts[r] != 0)
            return false;
    return weft__pmpi_zero_served(k);
}

/* MPI_Bcast of count 0 (MPI_ERR_ARG for MPI_IN_PLACE, MPI_ERR_ROOT out of
 * range). */
static inline bool weft__pmpi_zero_bcast(weft__pmpi_coll k, const void *buffer,
                                         MPI_Datatype datatype, int root, MPI_Comm comm)
{
    uint32_t size, rank;
    if (buffer == MPI_IN_PLACE || root < 0 || !weft__pmpi_zero_basic(datatype) ||
        !weft__pmpi_zero_gate(comm, WEFT__PMPI_SMALL_BCAST, &size, &rank) || (uint32_t)root >= size)
        return false;
    return weft__pmpi_zero_served(k);
}

/* MPI_Allgather or MPI_Alltoall (family f) of recvcount 0. Open MPI
 * returns at once when recvcount is 0 (allgather also when sendcount is,
 * out of place; alltoall also when the receive type has no bytes); here
 * recvcount 0 and, out of place, sendcount 0 (a block of no bytes of a
 * basic type: so are all ranks' blocks, by the type signatures, which MPI
 * requires to match). recvbuf MPI_IN_PLACE: MPI_ERR_ARG. */
static inline bool weft__pmpi_zero_move(weft__pmpi_coll k, weft__pmpi_small_kind f,
                                        const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                        const void *recvbuf, MPI_Datatype recvtype, MPI_Comm comm)
{
    uint32_t size, rank;
    if (recvbuf == MPI_IN_PLACE || !weft__pmpi_zero_basic(recvtype) ||
        (sendbuf != MPI_IN_PLACE && (sendcount != 0 || !weft__pmpi_zero_basic(sendtype))) ||
        !weft__pmpi_zero_gate(comm, f, &size, &rank))
        return false;
    return weft__pmpi_zero_served(k);
}

#endif
