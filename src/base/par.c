/* Parallel loops (base/par.h): a shared counter of items and a lowest
 * failure, both atomic; the calling thread works as worker 0. */
#include "base/par.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "base/alloc.h"
#include "weft/threads.h"

#define DEFAULT_CAP 32

static atomic_uint threads_set; /* 0: the default */

weft_err weft_threads_set(unsigned n)
{
    if (n > WEFT_THREADS_MAX)
        return WEFT_EINVAL;
    atomic_store(&threads_set, n);
    return WEFT_OK;
}

unsigned weft_threads_get(void)
{
    unsigned set_n = atomic_load(&threads_set);
    if (set_n)
        return set_n;
    cpu_set_t set;
    CPU_ZERO(&set);
    int n = sched_getaffinity(0, sizeof set, &set) ? 1 : CPU_COUNT(&set);
    if (n < 1)
        n = 1;
    return n > DEFAULT_CAP ? DEFAULT_CAP : (unsigned)n;
}

unsigned weft__par_workers(size_t items)
{
    unsigned t = weft_threads_get();
    if (items < t)
        t = items ? (unsigned)items : 1;
    return t;
}

/* Set while this thread runs the items of a loop shared among threads: a
 * loop inside such an item runs on that thread alone, so nested loops (a
 * ranking's candidates inside one of several rankings) never start
 * threads x threads. */
static _Thread_local bool in_loop;

typedef struct par_loop {
    size_t n;
    weft__par_fn fn;
    void *ctx;
    atomic_size_t next;   /* the next item to take */
    atomic_size_t failed; /* the least item that failed, or n */
    _Atomic weft_err err; /* its error */
    pthread_mutex_t lock; /* orders the (failed, err) updates */
} par_loop;

typedef struct par_worker {
    par_loop *loop;
    unsigned id;
} par_worker;

static void run(par_loop *l, unsigned id)
{
    for (;;) {
        size_t i = atomic_fetch_add(&l->next, 1);
        if (i >= l->n || i > atomic_load(&l->failed))
            return;
        weft_err e = l->fn(l->ctx, i, id);
        if (!e)
            continue;
        pthread_mutex_lock(&l->lock);
        if (i < atomic_load(&l->failed)) {
            atomic_store(&l->failed, i);
            atomic_store(&l->err, e);
        }
        pthread_mutex_unlock(&l->lock);
        return;
    }
}

static void *worker_main(void *arg)
{
    par_worker *w = arg;
    in_loop = true;
    run(w->loop, w->id);
    return NULL;
}

weft_err weft__par_for(size_t n, unsigned workers, weft__par_fn fn, void *ctx)
{
    if (!n)
        return WEFT_OK;
    if (workers > n)
        workers = (unsigned)n;
    if (in_loop)
        workers = 1;
    par_loop l = {.n = n, .fn = fn, .ctx = ctx};
    atomic_init(&l.next, 0);
    atomic_init(&l.failed, n);
    atomic_init(&l.err, WEFT_OK);
    pthread_mutex_init(&l.lock, NULL);
    pthread_t *tid = NULL;
    par_worker *wk = NULL;
    unsigned started = 0;
    if (workers > 1) {
        tid = weft__malloc((workers - 1) * sizeof *tid);
        wk = weft__malloc((workers - 1) * sizeof *wk);
    }
    if (tid && wk)
        for (unsigned k = 1; k < workers; k++) {
            wk[started] = (par_worker){&l, k};
            if (pthread_create(&tid[started], NULL, worker_main, &wk[started]))
                break;
            started++;
        }
    /* Only a loop that shares its items out holds its nested loops to one
     * thread: a loop of one item leaves its threads to the loop inside. */
    bool outer = !in_loop && started;
    if (outer)
        in_loop = true;
    run(&l, 0);
    if (outer)
        in_loop = false;
    for (unsigned k = 0; k < started; k++)
        pthread_join(tid[k], NULL);
    weft__free(tid);
    weft__free(wk);
    pthread_mutex_destroy(&l.lock);
    return atomic_load(&l.err);
}
