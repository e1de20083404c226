/* The progress engine of the non-blocking collectives weft serves (see
 * pmpi.h, "Non-blocking collectives").
 *
 * Why a thread: weft's collectives are whole schedules over its own
 * transports (shared memory, TCP), written as one blocking call; a served
 * MPI_I* call must return before its peers have entered it and keep moving
 * while the program computes, whether or not it calls MPI meanwhile (osu_
 * iallreduce's and bench/overlap_mpi.c's compute loops call nothing). A
 * thread per weft communicator that runs the calls queued on it, in issue
 * order, gives that without cutting every schedule into resumable steps,
 * and it never calls MPI, so it needs no thread support from MPI (the
 * program may have MPI_THREAD_SINGLE); a call of its that fails does not
 * either (the failed communicator keeps its MPI bootstrap open until it is
 * freed: keep_on_fail in bootstrap/boot.h). It sleeps on a condition variable
 * while its queue is empty, and inside a call waits as weft's transports do
 * (spin briefly, then yield, then sleep: p2p.c), so an idle or waiting
 * thread leaves its core to the program.
 *
 * The request: an MPI generalized request (MPI_Grequest_start, MPI 3.1
 * section 12.2), so the program passes it to MPI_Wait, MPI_Test, MPI_Waitall
 * and their kin, C or Fortran, mixed with its other requests, unchanged.
 * Only a thread inside MPI may complete it (MPI_Grequest_complete), so the
 * worker puts a finished call on a list, and a callback in MPI's progress
 * loop (Open MPI's opal_progress_register, found with dlsym: every wait and
 * test of Open MPI runs that loop) completes the requests on it. While a
 * call is outstanding and none has finished, the callback yields the CPU
 * (sched_yield), so that a program spinning in MPI_Wait on as many cores
 * as it has ranks leaves the worker its turn. Without that hook (another
 * MPI) the engine is off and served MPI_I* calls run to completion inside
 * the call, as before.
 *
 * MPI_Request_free on such a request (MPI 3.1 section 5.12 makes it
 * erroneous; Open MPI allows it) lets the call run on: its request is
 * freed once it completes. MPI_Cancel cannot stop a collective: the cancel
 * callback does nothing and MPI_Test_cancelled reports false (the call
 * completes normally). */
#include <dlfcn.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "run/pmpi/pmpi.h"
#include "run/pmpi/state.h"
#include "weft/log.h"

/* A call queued on a worker, then finished and waiting for its request to
 * be completed; freed by MPI through free_fn once the request is both
 * completed and freed. */
typedef struct task {
    weft__pmpi_job job;
    struct task *next;
    MPI_Request req;
    weft__pmpi_coll k;
    weft_err err;
    /* A hand-off count: added to (release) by the thread that completes
     * the request, just before MPI_Grequest_complete (after the worker's
     * writes, which reach it through eng.mu, and its own last read of the
     * task); read (acquire) by query_fn before it reads err and added to
     * (release) after; added to (acquire) by free_fn. The thread that
     * waits may not be the one whose hook completed the request, nor the
     * one that frees it: what orders the writes (err, next, the program's
     * buffers) before the later threads' reads and free is otherwise only
     * MPI's request completion, which a race detector cannot see into
     * (ThreadSanitizer flagged query_fn's read of err, free_fn's free and
     * the program's reads of its result, Open MPI 4.1, MPI_THREAD_MULTIPLE). */
    atomic_uint handoff;
} task;

struct weft__pmpi_worker {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work; /* a call queued, or stop */
    pthread_cond_t idle; /* the queue emptied */
    task *head, *tail;   /* head runs; the rest wait in issue order */
    bool stop;
};

typedef int (*progress_cb)(void);
typedef int (*progress_reg)(progress_cb);

static struct {
    pthread_mutex_t mu;           /* over done */
    task *done;                   /* finished, requests not yet completed */
    atomic_uint finished;         /* tasks on done */
    atomic_uint outstanding;      /* requests started and not yet completed */
    progress_reg unregister_hook; /* non-NULL while the hook is registered */
} eng = {.mu = PTHREAD_MUTEX_INITIALIZER};

weft_err weft__pmpi_job_run(weft__pmpi_job *j, weft_diag *d)
{
    weft_err e = WEFT_OK;
    weft_comm *c = j->comm;
    switch (j->what) {
    case WEFT__PMPI_JOB_ALLREDUCE:
        e = weft_allreduce(c, j->in, j->out, j->count, j->dt, j->op, d);
        break;
    case WEFT__PMPI_JOB_REDUCE_SCATTER:
        e = weft_reduce_scatter(c, j->in, j->out, j->count, j->dt, j->op, d);
        break;
    case WEFT__PMPI_JOB_REDUCE:
        e = weft_reduce(c, j->in, j->out, j->count, j->dt, j->op, j->root, d);
        break;
    case WEFT__PMPI_JOB_ALLGATHER:
        e = weft_allgather(c, j->in, j->out, j->count, j->dt, d);
        break;
    case WEFT__PMPI_JOB_BROADCAST:
        e = weft_broadcast(c, j->in, j->out, j->count, j->dt, j->root, d);
        break;
    case WEFT__PMPI_JOB_ALLTOALL:
        e = weft_alltoall(c, j->in, j->out, j->count, j->dt, d);
        break;
    case WEFT__PMPI_JOB_ALLTOALLV:
        e = weft_alltoallv(c, j->in, j->scounts, j->sdispls, j->out, j->rcounts, j->rdispls, j->dt,
                           d);
        break;
    }
    if (!e && j->copy_bytes)
        memcpy(j->copy_to, j->copy_from, j->copy_bytes);
    for (size_t i = 0; i < sizeof j->owned / sizeof j->owned[0]; i++) {
        free(j->owned[i]);
        j->owned[i] = NULL;
    }
    return e;
}

/* ---- MPI's generalized-request callbacks ------------------------------ */

static int query_fn(void *extra, MPI_Status *st)
{
    task *t = extra;
    (void)atomic_load_explicit(&t->handoff, memory_order_acquire);
    weft_err err = t->err;
    /* This thread's last look at t (free_fn may run on another). */
    atomic_fetch_add_explicit(&t->handoff, 1, memory_order_release);
    /* A collective's status carries no source, tag or data count. */
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    return err ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    task *t = extra;
    atomic_fetch_add_explicit(&t->handoff, 1, memory_order_acquire);
    free(t);
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS; /* a collective is not cancelled (see above) */
}

/* ---- completing requests (inside MPI) --------------------------------- */

/* Completes the requests of the finished calls; returns how many. Another
 * thread doing it meanwhile makes this one return 0. */
static int complete_finished(bool wait_for_lock)
{
    if (wait_for_lock)
        pthread_mutex_lock(&eng.mu);
    else if (pthread_mutex_trylock(&eng.mu) != 0)
        return 0;
    task *list = eng.done;
    eng.done = NULL;
    atomic_store(&eng.finished, 0);
    pthread_mutex_unlock(&eng.mu);
    int n = 0;
    for (task *t = list, *next; t; t = next, n++) {
        next = t->next;
        MPI_Request r = t->req;
        atomic_fetch_sub(&eng.outstanding, 1);
        atomic_fetch_add_explicit(&t->handoff, 1, memory_order_release);
        PMPI_Grequest_complete(r); /* t may be freed from here on */
    }
    return n;
}

/* Called in MPI's progress loop, by whichever thread is inside MPI. */
static int hook(void)
{
    if (atomic_load_explicit(&eng.outstanding, memory_order_relaxed) == 0)
        return 0;
    if (atomic_load_explicit(&eng.finished, memory_order_acquire) == 0) {
        sched_yield();
        return 0;
    }
    return complete_finished(false);
}

void weft__pmpi_progress_init(void)
{
    progress_reg reg = (progress_reg)(uintptr_t)dlsym(RTLD_DEFAULT, "opal_progress_register");
    progress_reg unreg = (progress_reg)(uintptr_t)dlsym(RTLD_DEFAULT, "opal_progress_unregister");
    if (reg && unreg && reg(hook) == 0) {
        eng.unregister_hook = unreg;
        return;
    }
    weft_log(WEFT_LOG_INFO, "pmpi",
             "rank %d: no progress hook in this MPI: served non-blocking collectives complete "
             "inside the call",
             weft__pmpi.rank);
}

bool weft__pmpi_progress_on(void)
{
    return eng.unregister_hook != NULL;
}

void weft__pmpi_progress_fini(void)
{
    /* Every worker has been stopped (its calls done): complete what the
     * program never waited for, then leave MPI's loop. */
    complete_finished(true);
    if (eng.unregister_hook)
        eng.unregister_hook(hook);
    eng.unregister_hook = NULL;
}

/* ---- the worker -------------------------------------------------------- */

static void *work(void *arg)
{
    weft__pmpi_worker *w = arg;
    weft__pmpi_enter(); /* nothing here is the program's call */
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->head && !w->stop)
            pthread_cond_wait(&w->work, &w->mu);
        task *t = w->head;
        if (!t)
            break;
        pthread_mutex_unlock(&w->mu);
        weft_diag d;
        weft_diag_clear(&d);
        t->err = weft__pmpi_job_run(&t->job, &d);
        if (t->err)
            weft_log(WEFT_LOG_ERROR, "pmpi", "rank %d: %s failed in weft: %s", weft__pmpi.rank,
                     weft__pmpi_coll_name(t->k), d.msg[0] ? d.msg : weft_strerror(d.err));
        pthread_mutex_lock(&w->mu);
        w->head = t->next;
        if (!w->head) {
            w->tail = NULL;
            pthread_cond_broadcast(&w->idle);
        }
        pthread_mutex_lock(&eng.mu);
        t->next = eng.done;
        eng.done = t;
        atomic_fetch_add_explicit(&eng.finished, 1, memory_order_release);
        pthread_mutex_unlock(&eng.mu);
    }
    pthread_mutex_unlock(&w->mu);
    weft__pmpi_leave();
    return NULL;
}

/* e's worker, started on first use; NULL when it cannot be. Under e's
 * lock. */
static weft__pmpi_worker *worker_of(weft__pmpi_entry *e)
{
    if (e->worker)
        return e->worker;
    weft__pmpi_worker *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    bool mu = false, work_cv = false, idle_cv = false;
    if ((mu = pthread_mutex_init(&w->mu, NULL) == 0) &&
        (work_cv = pthread_cond_init(&w->work, NULL) == 0) &&
        (idle_cv = pthread_cond_init(&w->idle, NULL) == 0) &&
        pthread_create(&w->thread, NULL, work, w) == 0) {
        e->worker = w;
        return w;
    }
    if (idle_cv)
        pthread_cond_destroy(&w->idle);
    if (work_cv)
        pthread_cond_destroy(&w->work);
    if (mu)
        pthread_mutex_destroy(&w->mu);
    free(w);
    return NULL;
}

void weft__pmpi_worker_stop(weft__pmpi_worker *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->idle);
    pthread_cond_destroy(&w->work);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

void weft__pmpi_drain(const weft__pmpi_target *t)
{
    weft__pmpi_worker *w = t->entry ? t->entry->worker : NULL;
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    while (w->head)
        pthread_cond_wait(&w->idle, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

/* Queues j on t's worker with a generalized request in *req; false (and
 * nothing queued) when no worker or request can be had. */
static bool enqueue(weft__pmpi_target *t, weft__pmpi_coll k, const weft__pmpi_job *j,
                    MPI_Request *req)
{
    weft__pmpi_worker *w = worker_of(t->entry);
    task *x = w ? calloc(1, sizeof *x) : NULL;
    if (!x)
        return false;
    x->job = *j;
    x->k = k;
    if (PMPI_Grequest_start(query_fn, free_fn, cancel_fn, x, &x->req) != MPI_SUCCESS) {
        free(x);
        return false;
    }
    *req = x->req;
    atomic_fetch_add(&eng.outstanding, 1);
    pthread_mutex_lock(&w->mu);
    if (w->tail)
        w->tail->next = x;
    else
        w->head = x;
    w->tail = x;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->mu);
    return true;
}

int weft__pmpi_start(weft__pmpi_target *t, weft__pmpi_coll k, MPI_Comm comm, weft__pmpi_job *j,
                     MPI_Request *req)
{
    if (req && weft__pmpi_progress_on() && enqueue(t, k, j, req))
        return weft__pmpi_done(t, NULL);
    /* Blocking (or no engine): after the calls queued before it. */
    weft__pmpi_drain(t);
    weft_diag d;
    weft_diag_clear(&d);
    weft__pmpi_enter();
    weft_err e = weft__pmpi_job_run(j, &d);
    weft__pmpi_leave();
    return e ? weft__pmpi_fail(t, k, comm, &d) : weft__pmpi_done(t, req);
}
