/* The process-wide state of the interposition library: the table of
 * communicators, the counters and the once-only log lines (see pmpi.h),
 * under weft__pmpi.lock; each communicator's lock serializes the calls on
 * it (see state.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/pmpi/pmpi.h"
#include "run/pmpi/state.h"
#include "run/select.h"
#include "weft/log.h"

weft__pmpi_state weft__pmpi = {.lock = PTHREAD_MUTEX_INITIALIZER, .rank = -1};

/* Weft calls running on this thread: weft's bootstrap calls MPI, and those
 * calls are weft's own, passed to MPI uncounted. */
_Thread_local int weft__pmpi_depth WEFT__PMPI_TLS;

static const char *const coll_names[WEFT__PMPI_COLL_COUNT] = {
    [WEFT__PMPI_ALLREDUCE] = "MPI_Allreduce",
    [WEFT__PMPI_ALLGATHER] = "MPI_Allgather",
    [WEFT__PMPI_REDUCE_SCATTER_BLOCK] = "MPI_Reduce_scatter_block",
    [WEFT__PMPI_BCAST] = "MPI_Bcast",
    [WEFT__PMPI_REDUCE] = "MPI_Reduce",
    [WEFT__PMPI_ALLTOALL] = "MPI_Alltoall",
    [WEFT__PMPI_REDUCE_SCATTER] = "MPI_Reduce_scatter",
    [WEFT__PMPI_ALLTOALLV] = "MPI_Alltoallv",
    [WEFT__PMPI_ALLTOALLW] = "MPI_Alltoallw",
    [WEFT__PMPI_IALLREDUCE] = "MPI_Iallreduce",
    [WEFT__PMPI_IALLGATHER] = "MPI_Iallgather",
    [WEFT__PMPI_IREDUCE_SCATTER_BLOCK] = "MPI_Ireduce_scatter_block",
    [WEFT__PMPI_IBCAST] = "MPI_Ibcast",
    [WEFT__PMPI_IREDUCE] = "MPI_Ireduce",
    [WEFT__PMPI_IALLTOALL] = "MPI_Ialltoall",
    [WEFT__PMPI_IREDUCE_SCATTER] = "MPI_Ireduce_scatter",
    [WEFT__PMPI_IALLTOALLV] = "MPI_Ialltoallv",
    [WEFT__PMPI_IBARRIER] = "MPI_Ibarrier",
};

static const char *const kind_names[WEFT__PMPI_KIND_COUNT] = {
    [WEFT__PMPI_WORLD] = "world",   [WEFT__PMPI_DUP] = "dup",
    [WEFT__PMPI_SPLIT] = "split",   [WEFT__PMPI_SPLIT_TYPE] = "split_type",
    [WEFT__PMPI_CREATE] = "create", [WEFT__PMPI_OTHER] = "other",
};

const char *weft__pmpi_coll_name(weft__pmpi_coll k)
{
    return (unsigned)k < WEFT__PMPI_COLL_COUNT ? coll_names[k] : "?";
}

const char *weft__pmpi_kind_name(weft__pmpi_kind k)
{
    return (unsigned)k < WEFT__PMPI_KIND_COUNT ? kind_names[k] : "?";
}

static void lock(void)
{
    pthread_mutex_lock(&weft__pmpi.lock);
}

static void unlock(void)
{
    pthread_mutex_unlock(&weft__pmpi.lock);
}

/* mpi's place in the table, or ncomms; under lock. */
static uint32_t find(MPI_Comm mpi)
{
    uint32_t i = 0;
    while (i < weft__pmpi.ncomms && weft__pmpi.comms[i]->mpi != mpi)
        i++;
    return i;
}

/* Drops a reference to e; the last one frees it. */
static void unref(weft__pmpi_entry *e)
{
    if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    free(e);
}

bool weft__pmpi_reserve(void)
{
    lock();
    bool room = weft__pmpi.ncomms + weft__pmpi.reserved < weft__pmpi.max_comms;
    if (room)
        weft__pmpi.reserved++;
    unlock();
    return room;
}

void weft__pmpi_unreserve(void)
{
    lock();
    weft__pmpi.reserved--;
    unlock();
}

bool weft__pmpi_add(MPI_Comm mpi, weft_comm *comm, weft__pmpi_kind kind, bool reserved)
{
    weft__pmpi_entry *e = malloc(sizeof *e);
    if (!e)
        return false;
    atomic_init(&e->lock.word, 0);
    e->mpi = mpi;
    e->worker = NULL;
    e->comm = comm;
    e->kind = kind;
    e->refs = 1;
    e->a2av_calls = e->a2av_next = 0;
    e->a2av_gap = 0;
    e->a2av_small = false;
    e->tiny = 0;
    lock();
    bool ok = true;
    if (weft__pmpi.ncomms == weft__pmpi.cap) {
        uint32_t cap = weft__pmpi.cap ? 2 * weft__pmpi.cap : 8;
        weft__pmpi_entry **t = realloc(weft__pmpi.comms, cap * sizeof *t);
        if (t) {
            weft__pmpi.comms = t;
            weft__pmpi.cap = cap;
        }
        ok = t != NULL;
    }
    if (ok) {
        weft__pmpi.comms[weft__pmpi.ncomms++] = e;
        if (reserved)
            weft__pmpi.reserved--;
    }
    unlock();
    if (!ok)
        free(e);
    return ok;
}

weft_comm *weft__pmpi_remove(MPI_Comm mpi)
{
    lock();
    uint32_t i = find(mpi);
    weft__pmpi_entry *e = i < weft__pmpi.ncomms ? weft__pmpi.comms[i] : NULL;
    if (e)
        weft__pmpi.comms[i] = weft__pmpi.comms[--weft__pmpi.ncomms];
    unlock();
    if (!e)
        return NULL;
    /* A call of another thread on it ends first (MPI makes freeing a
     * communicator that another thread is using erroneous; this only keeps
     * the library from freeing what a call runs on). */
    weft__lock_take(&e->lock);
    weft_comm *c = e->comm;
    /* Atomic: zero.h reads it without the lock (weft__pmpi_zero_cache). */
    __atomic_store_n(&e->comm, NULL, __ATOMIC_RELEASE);
    /* Its queued calls run to their end first (MPI lets a program free a
     * communicator with calls outstanding on it). */
    weft__pmpi_worker_stop(e->worker);
    e->worker = NULL;
    weft__lock_give(&e->lock);
    unref(e);
    return c;
}

MPI_Comm weft__pmpi_last(void)
{
    lock();
    MPI_Comm m = weft__pmpi.ncomms ? weft__pmpi.comms[weft__pmpi.ncomms - 1]->mpi : MPI_COMM_NULL;
    unlock();
    return m;
}

void weft__pmpi_set_on(bool on, const weft_comm_config *cfg)
{
    lock();
    /* Atomic: small.c reads it without the lock. */
    __atomic_store_n(&weft__pmpi.on, on, __ATOMIC_RELAXED);
    if (on)
        weft__pmpi.cfg = *cfg;
    unlock();
}

bool weft__pmpi_is_on(weft_comm_config *cfg)
{
    lock();
    bool on = weft__pmpi.on;
    if (on && cfg)
        *cfg = weft__pmpi.cfg;
    unlock();
    return on;
}

/* Lets t's communicator go (see weft__pmpi_target_of). */
static void release(weft__pmpi_target *t)
{
    weft__pmpi_entry *e = t->entry;
    if (!e)
        return;
    t->entry = NULL;
    weft__lock_give(&e->lock);
    if (!t->cached)
        unref(e);
}

/* The thread's last look-up of weft__pmpi_target_cached (see pmpi.h). */
_Thread_local MPI_Comm weft__pmpi_cached_mpi WEFT__PMPI_TLS;
_Thread_local weft__pmpi_entry *weft__pmpi_cached WEFT__PMPI_TLS;
/* zero.h's view of it: the handle, where its weft communicator is kept
 * (NULL once removed), its size and this rank. */
_Thread_local weft__pmpi_zero_last weft__pmpi_zero_cache WEFT__PMPI_TLS;

void weft__pmpi_cache_drop(void)
{
    if (weft__pmpi_cached)
        unref(weft__pmpi_cached);
    weft__pmpi_cached = NULL;
    weft__pmpi_zero_cache = (weft__pmpi_zero_last){.comm = NULL};
}

const char *weft__pmpi_target_cached(MPI_Comm comm, weft__pmpi_target *t)
{
    if (weft__pmpi_target_fast(comm, t))
        return NULL;
    const char *why = weft__pmpi_target_of(comm, t);
    if (!why && t->entry != weft__pmpi_cached) {
        /* The cache's own reference to the new entry. */
        __atomic_add_fetch(&t->entry->refs, 1, __ATOMIC_RELAXED);
        weft__pmpi_cache_drop();
        weft__pmpi_cached = t->entry;
        weft__pmpi_cached_mpi = comm;
        weft__pmpi_zero_cache = (weft__pmpi_zero_last){.mpi = comm,
                                                       .comm = &weft__pmpi_cached->comm,
                                                       .size = weft_comm_size(t->comm),
                                                       .rank = weft_comm_rank(t->comm)};
    }
    return why;
}

bool weft__pmpi_zero_lookup(MPI_Comm comm, uint32_t *size, uint32_t *rank)
{
    weft__pmpi_target t;
    if (weft__pmpi_target_cached(comm, &t))
        return false;
    *size = weft_comm_size(t.comm);
    *rank = weft_comm_rank(t.comm);
    release(&t);
    return true;
}

const char *weft__pmpi_target_of(MPI_Comm comm, weft__pmpi_target *t)
{
    t->comm = NULL;
    t->entry = NULL;
    t->cached = false;
    lock();
    bool on = weft__pmpi.on;
    uint32_t i = on ? find(comm) : weft__pmpi.ncomms;
    weft__pmpi_entry *e = i < weft__pmpi.ncomms ? weft__pmpi.comms[i] : NULL;
    t->kind = e ? e->kind : comm == MPI_COMM_WORLD ? WEFT__PMPI_WORLD : WEFT__PMPI_OTHER;
    if (e && !weft__pmpi_depth)
        __atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
    unlock();
    if (!on)
        return "weft is off";
    if (weft__pmpi_depth)
        return "inside weft";
    if (!e)
        return "no weft communicator";
    weft__lock_take(&e->lock);
    t->entry = e;
    if (!e->comm) {
        /* Removed while this call waited (an erroneous program: freed on
         * one thread while another calls on it). */
        release(t);
        return "communicator freed meanwhile";
    }
    t->comm = e->comm;
    return NULL;
}

void weft__pmpi_enter(void)
{
    weft__pmpi_depth++;
}

void weft__pmpi_leave(void)
{
    weft__pmpi_depth--;
}

bool weft__pmpi_inside(void)
{
    return weft__pmpi_depth > 0;
}

const char *weft__pmpi_unfit(weft_comm *c, weft_coll coll, size_t count, weft_dtype dtype,
                             uint32_t root)
{
    static _Thread_local weft_diag d;
    weft_comm_choice ch;
    /* Nothing forced: every valid call fits, and the call's own pick is the
     * one decision (a second pick here cost 9 % of an 8-byte call's time
     * at one rank, perf). */
    if (weft__select_takes_all(c))
        return NULL;
    weft_diag_clear(&d);
    if (weft_comm_choose(c, coll, count, dtype, root, &ch, &d) == WEFT_OK)
        return NULL;
    return d.msg[0] ? d.msg : weft_strerror(d.err);
}

static uint64_t total(uint64_t (*by)[WEFT__PMPI_COLL_COUNT], weft__pmpi_coll k)
{
    uint64_t n = 0;
    for (int i = 0; i < WEFT__PMPI_KIND_COUNT; i++)
        n += by[i][k];
    return n;
}

void weft__pmpi_served(const weft__pmpi_target *t, weft__pmpi_coll k)
{
    /* Without the process-wide lock (one lock pair less per served call):
     * the counter is atomic, and one thread wins the first line. */
    __atomic_add_fetch(&weft__pmpi.served[t->kind][k], 1, __ATOMIC_RELAXED);
    weft__pmpi_served_note(k);
}

void weft__pmpi_served_note(weft__pmpi_coll k)
{
    if (!__atomic_load_n(&weft__pmpi.served_logged[k], __ATOMIC_RELAXED) &&
        !__atomic_exchange_n(&weft__pmpi.served_logged[k], true, __ATOMIC_RELAXED))
        weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: %s served by weft", weft__pmpi.rank,
                 coll_names[k]);
}

/* Counts a passed call of k under its reason (see weft__pmpi_reason);
 * under lock. */
static void count_reason(weft__pmpi_coll k, const char *why)
{
    /* Compared in place (a reason is kept to its first 255 bytes), so that
     * a passed call copies its reason (snprintf) only when it is new, not
     * on every call. */
    const size_t keep = sizeof weft__pmpi.reasons[0].why - 1;
    for (uint32_t i = 0; i < weft__pmpi.nreasons; i++) {
        weft__pmpi_reason *r = &weft__pmpi.reasons[i];
        if (r->coll == k && strncmp(r->why, why, keep) == 0) {
            r->calls++;
            return;
        }
    }
    char cut[sizeof weft__pmpi.reasons[0].why];
    snprintf(cut, sizeof cut, "%s", why);
    if (weft__pmpi.nreasons == WEFT__PMPI_REASONS) {
        weft__pmpi.passed_more[k]++;
        return;
    }
    weft__pmpi_reason *r = &weft__pmpi.reasons[weft__pmpi.nreasons++];
    r->coll = k;
    r->calls = 1;
    memcpy(r->why, cut, sizeof cut);
}

void weft__pmpi_passed(weft__pmpi_target *t, weft__pmpi_coll k, const char *why)
{
    release(t);
    /* Calls made by weft's own MPI bootstrap are not the application's. */
    if (weft__pmpi_depth)
        return;
    lock();
    if (total(weft__pmpi.passed, k) == 0)
        weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: %s passed to MPI (%s)", weft__pmpi.rank,
                 coll_names[k], why);
    weft__pmpi.passed[t->kind][k]++;
    count_reason(k, why);
    unlock();
}

int weft__pmpi_fail(weft__pmpi_target *t, weft__pmpi_coll k, MPI_Comm comm, const weft_diag *d)
{
    release(t);
    weft_log(WEFT_LOG_ERROR, "pmpi", "rank %d: %s failed in weft: %s", weft__pmpi.rank,
             coll_names[k], d->msg[0] ? d->msg : weft_strerror(d->err));
    PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
    return MPI_ERR_OTHER;
}

int weft__pmpi_done(weft__pmpi_target *t, MPI_Request *req)
{
    release(t);
    if (!req)
        return MPI_SUCCESS;
    /* A receive from MPI_PROC_NULL completes at once and is an ordinary MPI
     * request: every completion call of MPI handles it, unintercepted. */
    return PMPI_Irecv(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, req);
}

weft_err weft__pmpi_scratch(size_t bytes, unsigned char **out, weft_diag *d)
{
    *out = malloc(bytes ? bytes : 1);
    if (!*out)
        return weft_diag_set(d, WEFT_ENOMEM, "out of memory for a packed copy of %zu bytes", bytes);
    return WEFT_OK;
}

/* "Allreduce 3/1, Bcast 0/2, ..." for the counters of one kind (kind <
 * 0: the totals, with the calls passed as small; every collective), or
 * only those with calls. */
static void format(int kind, const uint64_t (*small)[2], const uint64_t *zero, char *line,
                   size_t size)
{
    size_t used = 0;
    line[0] = '\0';
    for (int k = 0; k < WEFT__PMPI_COLL_COUNT; k++) {
        uint64_t s = kind < 0 ? total(weft__pmpi.served, k) : weft__pmpi.served[kind][k];
        /* Calls of no data served at once: MPI_COMM_WORLD's (small.c). */
        if (kind < 0 || kind == WEFT__PMPI_WORLD)
            s += zero[k];
        uint64_t p = kind < 0 ? total(weft__pmpi.passed, k) + small[k][0] + small[k][1]
                              : weft__pmpi.passed[kind][k];
        if (kind >= 0 && s + p == 0)
            continue;
        int n = snprintf(line + used, size - used, "%s%s %llu/%llu", used ? ", " : "",
                         coll_names[k] + 4, (unsigned long long)s, (unsigned long long)p);
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
    }
}

void weft__pmpi_report(void)
{
    lock();
    char line[1024];
    uint64_t small[WEFT__PMPI_COLL_COUNT][2];
    uint64_t zero[WEFT__PMPI_COLL_COUNT];
    weft__pmpi_small_totals(small);
    weft__pmpi_zero_totals(zero);
    format(-1, (const uint64_t(*)[2])small, zero, line, sizeof line);
    weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: calls served by weft/passed to MPI: %s",
             weft__pmpi.rank, line);
    for (int kind = 0; kind < WEFT__PMPI_KIND_COUNT; kind++) {
        format(kind, NULL, zero, line, sizeof line);
        if (line[0])
            weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: on %s communicators: %s", weft__pmpi.rank,
                     kind_names[kind], line);
    }
    for (uint32_t i = 0; i < weft__pmpi.nreasons; i++) {
        const weft__pmpi_reason *r = &weft__pmpi.reasons[i];
        weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: %s passed to MPI %llu time%s (%s)",
                 weft__pmpi.rank, coll_names[r->coll], (unsigned long long)r->calls,
                 r->calls == 1 ? "" : "s", r->why);
    }
    weft__pmpi_small_report();
    for (int k = 0; k < WEFT__PMPI_COLL_COUNT; k++)
        if (weft__pmpi.passed_more[k])
            weft_log(WEFT_LOG_INFO, "pmpi",
                     "rank %d: %s passed to MPI %llu more times for reasons past the first %d",
                     weft__pmpi.rank, coll_names[k], (unsigned long long)weft__pmpi.passed_more[k],
                     WEFT__PMPI_REASONS);
    unlock();
}
