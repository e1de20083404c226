/* The PMPI interposition library (libweft_mpi.so): internal interface.
 *
 * Loaded with LD_PRELOAD into an unchanged MPI program, the library defines
 * MPI_Init, MPI_Init_thread and MPI_Finalize, the communicator constructors
 * (MPI_Comm_dup, MPI_Comm_split, MPI_Comm_split_type, MPI_Comm_create),
 * MPI_Comm_free and MPI_Comm_disconnect, the collectives in weft__pmpi_coll
 * (blocking and non-blocking) and the Fortran entry points of the same
 * calls (fortran.c).
 * MPI_Init* build one weft communicator over MPI_COMM_WORLD
 * (weft_comm_init_mpi); each constructor builds one over the new MPI
 * communicator (comm.c), so every member agrees on its membership and rank
 * order, which are the MPI communicator's. The collectives run on the weft
 * communicator of their MPI communicator when weft can serve the call
 * exactly as MPI would (for reductions a predefined datatype and operator
 * weft reduces; for moves any datatype, packed when it is not contiguous;
 * and a schedule weft_comm_choose can run: see weft__pmpi_unfit) and the
 * call is not below its collective's pass limit (small.c, below: by default
 * only calls of no data), and pass everything else to PMPI_*. Small
 * blocking calls run through the ring of slots (tiny.c). Every decision depends only on arguments
 * MPI requires to agree across ranks (for moves the bytes of the data, never the layout a rank's
 * datatype gives them), or agreed among the ranks, so all ranks of a call take the same path;
 * arguments that may differ between ranks (MPI_Alltoallv's counts and displacements) never make one
 * rank pass alone, and only erroneous ones pass on the rank that has them, for MPI to report.
 *
 * Threads: under MPI_THREAD_MULTIPLE (mpi4py asks for it) several threads
 * may call at once. A weft communicator runs one call at a time: a call
 * holds its communicator's lock from the look-up to its end (decision, the
 * weft collective, and the schedule weft_comm_choose builds on first use),
 * so calls on one communicator are serialized (their order is the
 * program's to fix, MPI 3.1 section 12.4.2) and
 * calls on different communicators run concurrently. The table of
 * communicators, the counters and the once-only log lines are under one
 * process-wide lock held briefly; "inside weft" (weft's own MPI calls,
 * below) is per thread.
 *
 * Non-blocking collectives: a served MPI_I* call is decided on the
 * program's thread (the same decision as its blocking form), queued on its
 * communicator's progress thread (progress.c), which runs the calls queued
 * on it one after another in issue order (which MPI requires to be the
 * same on every rank of a communicator), and returns at once with a
 * generalized request that MPI_Wait, MPI_Test and their kin (C and
 * Fortran) complete once the call has run. A blocking call on the
 * communicator first waits for the calls queued before it. Calls whose
 * data must be packed or unpacked by MPI (a datatype that is not
 * contiguous), and every served MPI_I* call when the MPI has no progress
 * hook (progress.c), still run to completion inside the call, after the
 * calls queued before them; their request is then an MPI request that is
 * already complete (a receive from MPI_PROC_NULL).
 * MPI_Ibarrier always goes to MPI: programs poll for its completion while
 * they keep receiving (the NBX pattern), which MPI's own progress serves.
 *
 * This is the one part of weft besides the CLI that reads the environment
 * (WEFT_LOG, WEFT_PMPI, WEFT_PMPI_COMMS and
 * weft_comm_config_from_env_options): it is the program-level glue of
 * applications that were not written for weft.
 */
#ifndef WEFT_RUN_PMPI_H
#define WEFT_RUN_PMPI_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "weft/comm.h"

/* Thread-local variables of the library read on every call: the
 * initial-exec model makes each access one load from the thread pointer
 * instead of a call to __tls_get_addr (the general model of a shared
 * library; 7 such calls were 80 of the 200 instructions an 8-byte call
 * passed as small cost, callgrind). A library loaded at program start
 * (LD_PRELOAD, or linked) may use it. */
#define WEFT__PMPI_TLS __attribute__((tls_model("initial-exec")))

/* The collectives served, indexing the counters. */
typedef enum weft__pmpi_coll {
    WEFT__PMPI_ALLREDUCE = 0,
    WEFT__PMPI_ALLGATHER,
    WEFT__PMPI_REDUCE_SCATTER_BLOCK,
    WEFT__PMPI_BCAST,
    WEFT__PMPI_REDUCE,
    WEFT__PMPI_ALLTOALL,
    WEFT__PMPI_REDUCE_SCATTER,
    WEFT__PMPI_ALLTOALLV,
    WEFT__PMPI_ALLTOALLW,
    WEFT__PMPI_IALLREDUCE,
    WEFT__PMPI_IALLGATHER,
    WEFT__PMPI_IREDUCE_SCATTER_BLOCK,
    WEFT__PMPI_IBCAST,
    WEFT__PMPI_IREDUCE,
    WEFT__PMPI_IALLTOALL,
    WEFT__PMPI_IREDUCE_SCATTER,
    WEFT__PMPI_IALLTOALLV,
    WEFT__PMPI_IBARRIER,
    WEFT__PMPI_COLL_COUNT
} weft__pmpi_coll;

/* "MPI_Allreduce", ... */
const char *weft__pmpi_coll_name(weft__pmpi_coll k);

/* How the MPI communicator of a call was made, indexing the counters:
 * MPI_COMM_WORLD, MPI_Comm_dup, MPI_Comm_split, MPI_Comm_split_type,
 * MPI_Comm_create, or anything else (MPI_COMM_SELF, MPI_Cart_create, an
 * inter-communicator, one that stays MPI's because a member holds
 * WEFT_PMPI_COMMS weft communicators, ...: always passed to MPI). */
typedef enum weft__pmpi_kind {
    WEFT__PMPI_WORLD = 0,
    WEFT__PMPI_DUP,
    WEFT__PMPI_SPLIT,
    WEFT__PMPI_SPLIT_TYPE,
    WEFT__PMPI_CREATE,
    WEFT__PMPI_OTHER,
    WEFT__PMPI_KIND_COUNT
} weft__pmpi_kind;

/* "world", "dup", "split", "split_type", "create", "other". */
const char *weft__pmpi_kind_name(weft__pmpi_kind k);

/* The weft side of a call's MPI communicator. */
typedef struct weft__pmpi_entry weft__pmpi_entry;
typedef struct weft__pmpi_target {
    weft_comm *comm; /* NULL when weft cannot serve calls on it */
    weft__pmpi_kind kind;
    weft__pmpi_entry *entry; /* held (locked) while comm is not NULL */
    bool cached;             /* entry came from the thread's cache: no reference of its own */
} weft__pmpi_target;

/* Looks comm up: NULL when a call on it may be served by weft at all (weft
 * is on, comm has a weft communicator, and this thread is not inside a weft
 * call: the MPI bootstrap inside weft calls MPI itself), else why not.
 * t->kind is set either way, t->comm when NULL is returned: then the call
 * holds the communicator (its lock, waiting for a call of another thread
 * on it to end) until it ends with exactly one of weft__pmpi_passed,
 * weft__pmpi_done or weft__pmpi_fail, which let it go. */
const char *weft__pmpi_target_of(MPI_Comm comm, weft__pmpi_target *t);
/* weft__pmpi_target_of for the ring's small calls (tiny.c), which come
 * back to the same communicators: each thread keeps the entry of its last
 * look-up (with a reference of its own, so it stays allocated), and a call
 * on that MPI communicator takes its lock without the table's lock, the
 * look-up and a reference; the entry's comm, read under its lock, says
 * whether it still stands for the handle (a removed entry's is NULL, and
 * the call then looks the handle up as weft__pmpi_target_of does). Ends
 * as weft__pmpi_target_of's. weft__pmpi_cache_drop drops the calling
 * thread's reference (MPI_Finalize; other threads' stay until the
 * process ends). */
const char *weft__pmpi_target_cached(MPI_Comm comm, weft__pmpi_target *t);
/* For calls of no data (zero.h): the thread's last look-up of
 * weft__pmpi_target_cached, kept where an inline test reads it: the MPI
 * handle, the entry's weft communicator slot (NULL when none is cached;
 * the slot holds NULL once the entry is removed, stored atomically), the
 * communicator's size and this rank in it. */
typedef struct weft__pmpi_zero_last {
    MPI_Comm mpi;
    weft_comm *const *comm;
    uint32_t size, rank;
} weft__pmpi_zero_last;
extern _Thread_local weft__pmpi_zero_last weft__pmpi_zero_cache WEFT__PMPI_TLS;
/* True, with comm's size and this rank in it, when comm has a weft
 * communicator (a valid intra-communicator: weft makes none for others),
 * looked up as weft__pmpi_target_cached does (and cached, for the inline
 * test above). */
bool weft__pmpi_zero_lookup(MPI_Comm comm, uint32_t *size, uint32_t *rank);
void weft__pmpi_cache_drop(void);

/* Which schedule weft runs for this call is weft_comm_choose's decision (a
 * forced WEFT_PLAN or WEFT_ALGO, the tuning table or ranking on WEFT_FABRIC,
 * or the built-in schedules), exactly as for weft_allreduce & co.; it logs
 * the choice at info level. NULL when weft can run the call on c; otherwise
 * why not (a forced plan or algorithm that does not fit: another collective
 * or root, or count not a multiple of its chunks), in a buffer of the
 * thread's valid until its next call. Such calls go to MPI with that reason logged, instead of
 * failing the application. */
const char *weft__pmpi_unfit(weft_comm *c, weft_coll coll, size_t count, weft_dtype dtype,
                             uint32_t root);

/* Counts a call on a communicator of t's kind and logs, once per
 * collective, that weft serves it. */
void weft__pmpi_served(const weft__pmpi_target *t, weft__pmpi_coll k);
/* Logs, once per collective, that k was served (weft__pmpi_served's line,
 * for calls counted elsewhere). */
void weft__pmpi_served_note(weft__pmpi_coll k);
/* Counts a call passed to MPI and logs, once per collective, why; lets
 * t's communicator go (the caller then calls PMPI_*). */
void weft__pmpi_passed(weft__pmpi_target *t, weft__pmpi_coll k, const char *why);

/* Small messages (small.c): a call whose size is below its collective's
 * limit goes to MPI before any look-up (by default only calls of no data,
 * from which Open MPI returns at once; the limits were larger before the
 * ring of slots, tiny.c, where a served call's argument agreement, a round
 * trip, made weft slower than Open MPI). The size
 * is one every rank computes alike without communication, from arguments
 * MPI requires to match (type signatures): count x type size for
 * MPI_Allreduce, MPI_Reduce and MPI_Bcast; the receive block (recvcount x
 * its type's size) for MPI_Allgather and MPI_Alltoall; the result block
 * for MPI_Reduce_scatter_block, and the vector over the number of ranks
 * for MPI_Reduce_scatter; the limit is per family and per communicator
 * size (1-2 ranks, 3 or more), agreed by all ranks at MPI_Init.
 * MPI_Alltoallv's counts differ between ranks, and no function of one
 * rank's counts is the same on every rank for 3 or more (a block between
 * two other ranks changes no count a third rank sees, so such a function
 * cannot depend on any count); at 1-2 ranks the larger of the blocks this
 * rank sends to and receives from the other is the same on both. At 3 or
 * more, blocking MPI_Alltoallv has a mode per communicator instead
 * (weft__pmpi_small_mode). The non-blocking forms decide as the blocking
 * ones, but MPI_Ialltoallv at 3 or more ranks is always served (an
 * agreement inside it could block a legal program). */
typedef enum weft__pmpi_small_kind {
    WEFT__PMPI_SMALL_ALLREDUCE = 0,
    WEFT__PMPI_SMALL_REDUCE,
    WEFT__PMPI_SMALL_BCAST,
    WEFT__PMPI_SMALL_ALLGATHER,
    WEFT__PMPI_SMALL_ALLTOALL,
    WEFT__PMPI_SMALL_ALLTOALLV,
    WEFT__PMPI_SMALL_REDUCE_SCATTER_BLOCK,
    WEFT__PMPI_SMALL_REDUCE_SCATTER,
    WEFT__PMPI_SMALL_COUNT
} weft__pmpi_small_kind;

/* The whole path of a collective (coll_*.c), kept out of its exported
 * function, so that a call of no data served there (zero.h) does not pay
 * the path's frame: a served osu_reduce_scatter_block call of no data
 * took 120 instructions with the path inlined, 111 without, 60 with
 * zero.h's test inline too and 45 with its count inline as well
 * (callgrind, rank 0 of 2; Open MPI 4.1.4's own call: 72). */
#define WEFT__PMPI_PATH __attribute__((noinline))

/* Small blocking calls served through the ring of slots (tiny.c,
 * run/coll_tiny.h), tried after the pass limits and before the ordinary
 * path: true when the call ran there (*rc its MPI result), false when it
 * goes on to the ordinary path (on every rank alike; nothing held).
 * weft__pmpi_tiny_reduce: coll allreduce, reduce (root) or reducescatter
 * (MPI_Reduce_scatter_block: count per block); weft__pmpi_tiny_gather:
 * MPI_Allgather, or MPI_Alltoall when all_to_all. */
bool weft__pmpi_tiny_reduce(weft__pmpi_coll k, weft_coll coll, const void *sendbuf, void *recvbuf,
                            int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                            int *rc);
/* MPI_Reduce_scatter (recvcounts, the same on every rank) whose recvcounts
 * and whole input fit a slot: every rank publishes both, compares every
 * rank's recvcounts and folds its own block in rank order. */
bool weft__pmpi_tiny_reduce_scatter(weft__pmpi_coll k, const void *sendbuf, void *recvbuf,
                                    const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                                    MPI_Comm comm, int *rc);
bool weft__pmpi_tiny_bcast(weft__pmpi_coll k, void *buffer, int count, MPI_Datatype datatype,
                           int root, MPI_Comm comm, int *rc);
bool weft__pmpi_tiny_gather(weft__pmpi_coll k, bool all_to_all, const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, int *rc);
/* size: weft__pmpi_small_size(comm), which the caller has asked. */
bool weft__pmpi_tiny_alltoallv(weft__pmpi_coll k, uint32_t size, const void *sendbuf,
                               const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                               void *recvbuf, const int recvcounts[], const int rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm, int *rc);

/* Sets the limits from WEFT_PMPI_SMALL (NULL or empty: the defaults in
 * small.c): "BYTES" for every collective, or a comma-separated list of
 * "NAME=BYTES" (NAME one of allreduce, reduce, bcast, allgather, alltoall,
 * alltoallv, reduce_scatter_block, reduce_scatter), both communicator
 * sizes; 0 passes no call,
 * 1 only calls of no data. False with d set when text is malformed. */
bool weft__pmpi_small_parse(const char *text, weft_diag *d);
/* Makes every rank's limits the least any rank has (PMPI_Allreduce on
 * MPI_COMM_WORLD; a warning when they differed); collective, at MPI_Init.
 * False when MPI fails. */
bool weft__pmpi_small_agree(void);
/* The limit of family f on n ranks. */
uint64_t weft__pmpi_small_below(weft__pmpi_small_kind f, uint32_t n);
weft__pmpi_small_kind weft__pmpi_small_kind_of(weft__pmpi_coll k);
/* comm's size, or 0 when weft is off or comm is no communicator. */
uint32_t weft__pmpi_small_size(MPI_Comm comm);
/* count x t's size in bytes; -1 when count is negative or t no type.
 * Inline, as weft__pmpi_small: the commonest predefined types without a
 * query (they are never freed, so their handles always mean them), others
 * through weft__pmpi_small_bytes_of (PMPI_Type_size). */
long long weft__pmpi_small_bytes_of(MPI_Datatype t, long long count);
static inline long long weft__pmpi_small_bytes(MPI_Datatype t, long long count)
{
    long long size;
    if (t == MPI_BYTE || t == MPI_CHAR)
        size = 1;
    else if (t == MPI_INT || t == MPI_FLOAT)
        size = 4;
    else if (t == MPI_DOUBLE || t == MPI_LONG_LONG)
        size = 8;
    else
        return weft__pmpi_small_bytes_of(t, count);
    return count < 0 ? -1 : count * size;
}
/* Whether call k (family f) of bytes on a communicator of n ranks goes to
 * MPI as small; counts it when so (per thread, no lock). False for n 0, a
 * negative size and weft's own calls. */
bool weft__pmpi_small_n(weft__pmpi_coll k, weft__pmpi_small_kind f, uint32_t n, long long bytes);
/* The same on comm (its size from MPI). Inline: at or above every limit
 * (weft__pmpi_small_most, the largest, agreed at MPI_Init) a call is
 * passed by none (weft__pmpi_small_n would answer false whatever the
 * communicator), without the size query. With the default limits (1 byte)
 * that is every call with data: 32 of an 8-byte MPI_Bcast's instructions
 * on 4 ranks (callgrind) saved so, and 41 of an 8-byte MPI_Reduce's at 2
 * ranks with this and weft__pmpi_small_bytes inline instead of called. */
extern uint64_t weft__pmpi_small_most;
bool weft__pmpi_small_below_limit(weft__pmpi_coll k, weft__pmpi_small_kind f, MPI_Comm comm,
                                  long long bytes);
static inline bool weft__pmpi_small(weft__pmpi_coll k, weft__pmpi_small_kind f, MPI_Comm comm,
                                    long long bytes)
{
    if (bytes >= 0 && (uint64_t)bytes >= weft__pmpi_small_most)
        return false;
    return weft__pmpi_small_below_limit(k, f, comm, bytes);
}
/* The reason logged for family f's small calls at 1-2 (big 0) or 3 or more
 * ranks. */
const char *weft__pmpi_small_why(weft__pmpi_small_kind f, int big);
/* Blocking MPI_Alltoallv on 3 or more ranks (t held): the communicator's
 * mode, small or not, is decided on agreed data: at the call counts where
 * the mode is due (calls 0, 1, 3, 7, ... while it stays the same, then
 * every 64th; after a change, the next call), every rank's largest block
 * (largest: this rank's, in bytes) is agreed with a weft allreduce, and
 * the mode is small while that is below the limit. Every rank makes the
 * same calls on a communicator in the same order, so every rank holds the
 * same mode at every call. *why is the reason to pass the call (NULL: serve
 * it); an error only when the agreement failed (d set). */
weft_err weft__pmpi_small_mode(weft__pmpi_target *t, MPI_Comm comm, uint64_t largest,
                               const char **why, weft_diag *d);
/* Logs the calls passed as small per collective and size class, and the
 * alltoallv agreements (under weft__pmpi.lock, from weft__pmpi_report);
 * their sum per collective (calls[k][0] + calls[k][1]). */
void weft__pmpi_small_report(void);
void weft__pmpi_small_totals(uint64_t calls[WEFT__PMPI_COLL_COUNT][2]);
/* The calls of no data served at once, per collective, summed over the
 * threads (at MPI_Finalize, as weft__pmpi_small_totals). */
void weft__pmpi_zero_totals(uint64_t calls[WEFT__PMPI_COLL_COUNT]);
/* Frees the counters (MPI_Finalize). */
void weft__pmpi_small_fini(void);

/* Marks a weft call as running on this thread (see weft__pmpi_target_of). */
void weft__pmpi_enter(void);
void weft__pmpi_leave(void);
/* Whether this thread is inside a weft call. */
bool weft__pmpi_inside(void);
/* The depth of weft's own MPI calls on this thread (state.c; what
 * weft__pmpi_inside answers), for tests inline (zero.h). */
extern _Thread_local int weft__pmpi_depth WEFT__PMPI_TLS;

/* Reports a failed weft collective (the message of d, at error level), lets
 * t's communicator go and returns what the MPI call returns: the
 * communicator's error handler runs with MPI_ERR_OTHER (with the default
 * handler that aborts the job, as a failed MPI collective would). */
int weft__pmpi_fail(weft__pmpi_target *t, weft__pmpi_coll k, MPI_Comm comm, const weft_diag *d);

/* The end of a served call: lets t's communicator go and returns
 * MPI_SUCCESS, and when req is not NULL (a non-blocking call, which weft
 * ran to completion) *req set to a request that is already complete. */
int weft__pmpi_done(weft__pmpi_target *t, MPI_Request *req);

/* One served call as weft runs it: the weft collective what on comm with
 * the arguments it uses (count elements of dt; moves pass bytes as
 * WEFT_UINT8), then copy_bytes from copy_from to copy_to (when not 0), then
 * the buffers in owned freed (private copies the call made at issue). */
typedef enum weft__pmpi_job_kind {
    WEFT__PMPI_JOB_ALLREDUCE,
    WEFT__PMPI_JOB_REDUCE_SCATTER,
    WEFT__PMPI_JOB_REDUCE,
    WEFT__PMPI_JOB_ALLGATHER,
    WEFT__PMPI_JOB_BROADCAST,
    WEFT__PMPI_JOB_ALLTOALL,
    WEFT__PMPI_JOB_ALLTOALLV
} weft__pmpi_job_kind;

typedef struct weft__pmpi_job {
    weft__pmpi_job_kind what;
    weft_comm *comm;
    const void *in;
    void *out;
    size_t count;
    weft_dtype dt;
    weft_redop op;
    uint32_t root;
    const size_t *scounts, *sdispls, *rcounts, *rdispls; /* alltoallv */
    void *copy_to;
    const void *copy_from;
    size_t copy_bytes;
    void *owned[3];
} weft__pmpi_job;

/* Runs j on the calling thread (weft__pmpi_enter is the caller's) and frees
 * its owned buffers. */
weft_err weft__pmpi_job_run(weft__pmpi_job *j, weft_diag *d);

/* Ends a served call with j (which it takes over, owned buffers included):
 * a non-blocking call (req not NULL) is queued on t's progress thread when
 * the engine is on, and *req set to its request; anything else waits for
 * the calls queued on t's communicator and runs j here. Lets t's
 * communicator go and returns what weft__pmpi_done or weft__pmpi_fail
 * return. */
int weft__pmpi_start(weft__pmpi_target *t, weft__pmpi_coll k, MPI_Comm comm, weft__pmpi_job *j,
                     MPI_Request *req);
/* Waits until no call is queued on t's communicator (held by t): what a
 * call that runs here, not through weft__pmpi_start, does first. */
void weft__pmpi_drain(const weft__pmpi_target *t);

/* The engine: registers its hook in MPI's progress loop (MPI_Init*);
 * whether that worked; completes the requests left and leaves the loop
 * (MPI_Finalize, after every communicator's worker stopped). */
void weft__pmpi_progress_init(void);
bool weft__pmpi_progress_on(void);
void weft__pmpi_progress_fini(void);

/* The weft element type of a predefined MPI datatype that weft reduces
 * (signed and unsigned C integer types of 1, 2, 4 and 8 bytes, the
 * <stdint.h> types, MPI_FLOAT, MPI_DOUBLE, and Fortran's INTEGER, INTEGER1..8,
 * REAL, REAL4, REAL8, DOUBLE PRECISION). False for anything else,
 * including MPI_CHAR and MPI_BYTE, which MPI does not reduce arithmetically. */
bool weft__pmpi_dtype(MPI_Datatype t, weft_dtype *out);
/* MPI_SUM, MPI_PROD, MPI_MIN and MPI_MAX; false for the others. */
bool weft__pmpi_op(MPI_Op op, weft_redop *out);
/* Whether t's typemap, read in order, is its data's bytes in increasing
 * address order without gaps (dtype_order.c): true for predefined types
 * and derived types built of them in order; false for a type with gaps or
 * with its elements in another order (a transposed matrix, an indexed type
 * with displacements {1, 0}), and for constructors the walk does not know
 * (MPI_Type_create_darray), which are then packed. */
bool weft__pmpi_in_order(MPI_Datatype t);
/* How count elements of datatype t lie in a buffer: bytes is their data
 * (count times the type's size: what MPI requires to match across ranks,
 * whatever datatypes the ranks use), contig whether those bytes lie as they
 * are from the buffer's start, in the order of the type signature (no
 * holes, no displacement: size == extent == true extent, lower bounds 0,
 * and weft__pmpi_in_order), extent the type's extent (element i starts at
 * buf + i * extent). */
typedef struct weft__pmpi_layout {
    size_t bytes;
    size_t size; /* of one element */
    bool contig;
    MPI_Aint extent;
} weft__pmpi_layout;

/* False for a negative count or a datatype MPI cannot describe. */
bool weft__pmpi_layout_of(MPI_Datatype t, int count, weft__pmpi_layout *out);

/* Copies count elements of layout l (datatype t) between buf, laid out as
 * MPI describes them, and packed, count * l->size contiguous bytes
 * (PMPI_Pack, or PMPI_Unpack when unpack), in pieces of at most INT_MAX
 * bytes (MPI_Pack's limit). So ranks whose datatypes differ but whose type
 * signatures match, as MPI allows for moves, all run weft on the same
 * bytes. WEFT_EIO with d naming the call when MPI fails or packs another
 * number of bytes than the data has. */
weft_err weft__pmpi_pack(const void *buf, size_t count, MPI_Datatype t, const weft__pmpi_layout *l,
                         unsigned char *packed, bool unpack, weft_diag *d);

/* A private buffer of bytes (at least one, so that 0 bytes is not NULL);
 * WEFT_ENOMEM naming the size otherwise. */
weft_err weft__pmpi_scratch(size_t bytes, unsigned char **out, weft_diag *d);

#endif
