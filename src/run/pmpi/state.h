/* The interposition library's process-wide state, shared by state.c (the
 * accessors in pmpi.h), init.c (MPI_Init*, MPI_Finalize) and comm.c (the
 * communicator constructors).
 *
 * Threads (MPI_THREAD_MULTIPLE): every field of weft__pmpi below but the
 * served counters and served_logged (atomic builtins) is read and written
 * under weft__pmpi.lock, held briefly (a look-up, a count, a log line;
 * never across a collective or an MPI call). Each entry has its own lock,
 * held for the whole of a call served on its communicator (see
 * weft__pmpi_target_of), so calls on one communicator run one at a time and
 * calls on different ones run at once. Lock order: an entry's, then the
 * global one, never the other way; under an entry's lock also its
 * worker's, then progress.c's list of finished calls (the worker takes
 * those two in that order and never an entry's). */
#ifndef WEFT_RUN_PMPI_STATE_H
#define WEFT_RUN_PMPI_STATE_H

#include <pthread.h>
#include <stdint.h>

#include "run/lock.h"
#include "run/pmpi/pmpi.h"

/* An MPI communicator that has a weft communicator; on the heap, so that a
 * call holds it while the table grows. refs counts the table's reference
 * (while mpi is in the table) and each call holding it; the last one frees
 * it. comm is NULL once the communicator was removed (under lock). */
/* A communicator's progress thread (progress.c). */
typedef struct weft__pmpi_worker weft__pmpi_worker;
/* Runs the calls queued on w, then ends the thread and frees w (NULL is
 * allowed). */
void weft__pmpi_worker_stop(weft__pmpi_worker *w);

struct weft__pmpi_entry {
    MPI_Comm mpi;
    weft__pmpi_worker *worker; /* started by its first queued call; under lock */
    weft_comm *comm;
    weft__pmpi_kind kind;
    weft__lock lock; /* held for each call served on it (inline: run/lock.h) */
    uint32_t refs;   /* taken under weft__pmpi.lock (with the look-up), dropped atomically */
    /* Whether the ring of slots serves small calls on comm (tiny.c, under
     * lock): 0 not known yet, 1 yes, 2 no. Both halves of the answer
     * (weft__tiny_ready, weft__select_takes_all) stay what they were when
     * comm was built. */
    uint8_t tiny;
    /* MPI_Alltoallv's small-message mode (weft__pmpi_small_mode), under
     * lock: blocking calls made, the call at which the mode is agreed
     * next, the gap to the one after, and the mode. */
    uint64_t a2av_calls, a2av_next;
    uint32_t a2av_gap;
    bool a2av_small;
};

/* How many calls of one collective went to MPI for one reason. */
typedef struct weft__pmpi_reason {
    weft__pmpi_coll coll;
    uint64_t calls;
    char why[256]; /* truncated past 255 bytes */
} weft__pmpi_reason;

/* The distinct (collective, reason) pairs counted; calls for more go to
 * passed_more. */
#define WEFT__PMPI_REASONS 64

typedef struct weft__pmpi_state {
    pthread_mutex_t lock;
    bool on;                  /* weft serves calls (MPI_COMM_WORLD's communicator was built) */
    int rank;                 /* in MPI_COMM_WORLD; -1 before MPI_Init */
    weft_comm_config cfg;     /* what every communicator is built with */
    weft__pmpi_entry **comms; /* [0] is MPI_COMM_WORLD's while on */
    uint32_t ncomms, cap, max_comms;
    uint32_t reserved; /* places taken by communicators being built */
    /* Atomic (__atomic builtins), not under lock: counted on every served
     * call; read at MPI_Finalize. */
    uint64_t served[WEFT__PMPI_KIND_COUNT][WEFT__PMPI_COLL_COUNT];
    bool served_logged[WEFT__PMPI_COLL_COUNT]; /* "served by weft" logged */
    uint64_t passed[WEFT__PMPI_KIND_COUNT][WEFT__PMPI_COLL_COUNT];
    weft__pmpi_reason reasons[WEFT__PMPI_REASONS];
    uint32_t nreasons;
    uint64_t passed_more[WEFT__PMPI_COLL_COUNT];
} weft__pmpi_state;

extern weft__pmpi_state weft__pmpi;

/* Takes one of the max_comms places for a communicator about to be built
 * (false when all are taken): a place taken is given back by
 * weft__pmpi_add (reserved true) or weft__pmpi_unreserve. */
bool weft__pmpi_reserve(void);
void weft__pmpi_unreserve(void);
/* Adds (mpi, comm, kind) to the table (using a place taken when reserved);
 * false when out of memory. */
bool weft__pmpi_add(MPI_Comm mpi, weft_comm *comm, weft__pmpi_kind kind, bool reserved);
/* Removes mpi's entry and returns its weft communicator (NULL if none),
 * once no call runs on it: the caller frees it. */
weft_comm *weft__pmpi_remove(MPI_Comm mpi);
/* The MPI communicator of the table's last entry (MPI_COMM_NULL when
 * empty). */
MPI_Comm weft__pmpi_last(void);
/* Sets whether weft serves calls (with the configuration communicators are
 * built with when on). */
void weft__pmpi_set_on(bool on, const weft_comm_config *cfg);
/* Whether weft is on, and the configuration (*cfg, when on and cfg not
 * NULL). */
bool weft__pmpi_is_on(weft_comm_config *cfg);

/* The thread's last look-up of weft__pmpi_target_cached (state.c), read
 * inline by weft__pmpi_target_fast. */
extern _Thread_local MPI_Comm weft__pmpi_cached_mpi WEFT__PMPI_TLS;
extern _Thread_local weft__pmpi_entry *weft__pmpi_cached WEFT__PMPI_TLS;

/* weft__pmpi_target_cached's path for the thread's last communicator
 * (which it takes first), inline for the small calls through the ring
 * (the call, its frame and its result cost about 15 instructions a call,
 * callgrind): true with t held as weft__pmpi_target_cached holds it, false
 * with nothing held. */
static inline bool weft__pmpi_target_fast(MPI_Comm comm, weft__pmpi_target *t)
{
    weft__pmpi_entry *e = weft__pmpi_cached;
    if (!e || weft__pmpi_cached_mpi != comm || weft__pmpi_depth ||
        !__atomic_load_n(&weft__pmpi.on, __ATOMIC_RELAXED))
        return false;
    weft__lock_take(&e->lock);
    if (!e->comm) {
        weft__lock_give(&e->lock);
        return false;
    }
    *t = (weft__pmpi_target){.comm = e->comm, .kind = e->kind, .entry = e, .cached = true};
    return true;
}

/* Counts one served call of k (weft__pmpi_served) and lets t go
 * (weft__pmpi_done without a request), inline where t came from the
 * thread's cache (no reference to drop). Returns MPI_SUCCESS. */
static inline int weft__pmpi_served_done(weft__pmpi_target *t, weft__pmpi_coll k)
{
    __atomic_add_fetch(&weft__pmpi.served[t->kind][k], 1, __ATOMIC_RELAXED);
    if (!__atomic_load_n(&weft__pmpi.served_logged[k], __ATOMIC_RELAXED))
        weft__pmpi_served_note(k);
    weft__pmpi_entry *e = t->entry;
    if (!t->cached)
        return weft__pmpi_done(t, NULL);
    t->entry = NULL;
    weft__lock_give(&e->lock);
    return MPI_SUCCESS;
}

/* Logs the counters at info level: every collective's over all
 * communicators, then one line per kind of communicator that had calls,
 * then one line per collective and reason for the calls passed to MPI. */
void weft__pmpi_report(void);

#endif
