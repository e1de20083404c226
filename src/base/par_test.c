/* base/par.h: every item runs once whatever the number of workers, the
 * worker ids stay below it, and the error is the least failing item's. */
#include <stdatomic.h>
#include <stdlib.h>

#include "base/alloc.h"
#include "base/par.h"
#include "base/testing.h"
#include "weft/threads.h"

typedef struct counts {
    atomic_uint *runs; /* per item */
    unsigned workers;
    atomic_uint bad_worker;
    size_t fail_from; /* items >= this fail (with WEFT_EINVAL + item % 2) */
} counts;

static weft_err count(void *ctx, size_t i, unsigned w)
{
    counts *c = ctx;
    atomic_fetch_add(&c->runs[i], 1);
    if (w >= c->workers)
        atomic_fetch_add(&c->bad_worker, 1);
    if (i >= c->fail_from)
        return i % 2 ? WEFT_ENOMEM : WEFT_EINVAL;
    return WEFT_OK;
}

static atomic_uint nested_runs, nested_bad;

static weft_err inner(void *ctx, size_t i, unsigned w)
{
    (void)ctx;
    (void)i;
    atomic_fetch_add(&nested_runs, 1);
    if (w != 0)
        atomic_fetch_add(&nested_bad, 1);
    return WEFT_OK;
}

static weft_err nested(void *ctx, size_t i, unsigned w)
{
    (void)ctx;
    (void)i;
    (void)w;
    return weft__par_for(5, 4, inner, NULL);
}

static atomic_uint inner_workers;

static weft_err count_inner(void *ctx, size_t i, unsigned w)
{
    (void)ctx;
    (void)i;
    (void)w;
    atomic_fetch_add(&nested_runs, 1);
    return WEFT_OK;
}

/* A one-item loop's item: a loop of 4000 items on as many workers as
 * weft__par_workers gives (4: threads set to 4). */
static weft_err nested_wide(void *ctx, size_t i, unsigned w)
{
    (void)ctx;
    (void)i;
    (void)w;
    unsigned k = weft__par_workers(4000);
    atomic_store(&inner_workers, k);
    return weft__par_for(4000, k, count_inner, NULL);
}

int main(void)
{
    enum { N = 5000 };
    counts c;
    c.runs = calloc(N, sizeof *c.runs);
    CHECK(c.runs != NULL);
    for (unsigned workers = 1; workers <= 8; workers++) {
        for (size_t i = 0; i < N; i++)
            atomic_store(&c.runs[i], 0);
        c.workers = workers;
        atomic_store(&c.bad_worker, 0);
        c.fail_from = N;
        CHECK_ERR(weft__par_for(N, workers, count, &c), WEFT_OK);
        unsigned once = 0;
        for (size_t i = 0; i < N; i++)
            once += atomic_load(&c.runs[i]) == 1;
        CHECK_INT(once, N);
        CHECK_INT(atomic_load(&c.bad_worker), 0);
        /* Items from 3001 fail: 3001's error (odd: ENOMEM) comes back
         * whichever thread saw a failure first, every item below ran, and
         * none ran twice. */
        for (size_t i = 0; i < N; i++)
            atomic_store(&c.runs[i], 0);
        c.fail_from = 3001;
        CHECK_ERR(weft__par_for(N, workers, count, &c), WEFT_ENOMEM);
        once = 0;
        unsigned twice = 0;
        for (size_t i = 0; i < N; i++) {
            once += i <= 3001 && atomic_load(&c.runs[i]) == 1;
            twice += atomic_load(&c.runs[i]) > 1;
        }
        CHECK_INT(once, 3002);
        CHECK_INT(twice, 0);
        c.fail_from = 2;
        CHECK_ERR(weft__par_for(N, workers, count, &c), WEFT_EINVAL);
    }
    /* No items: nothing runs. More workers than items: ids stay below n. */
    c.fail_from = 0;
    CHECK_ERR(weft__par_for(0, 4, count, &c), WEFT_OK);
    for (size_t i = 0; i < 3; i++)
        atomic_store(&c.runs[i], 0);
    c.fail_from = N;
    c.workers = 3;
    atomic_store(&c.bad_worker, 0);
    CHECK_ERR(weft__par_for(3, 16, count, &c), WEFT_OK);
    CHECK_INT(atomic_load(&c.bad_worker), 0);
    CHECK_INT(atomic_load(&c.runs[2]), 1);
    /* A loop inside an item runs on that item's thread alone: worker 0. */
    CHECK_ERR(weft__par_for(8, 4, nested, NULL), WEFT_OK);
    CHECK_INT(atomic_load(&nested_bad), 0);
    CHECK_INT(atomic_load(&nested_runs), 8 * 5);
    /* A loop of one item leaves its threads to the loop inside. */
    CHECK_ERR(weft_threads_set(4), WEFT_OK);
    atomic_store(&nested_runs, 0);
    atomic_store(&inner_workers, 0);
    CHECK_ERR(weft__par_for(1, 4, nested_wide, NULL), WEFT_OK);
    CHECK_INT(atomic_load(&nested_runs), 4000);
    CHECK(atomic_load(&inner_workers) == 4);
    CHECK_ERR(weft_threads_set(0), WEFT_OK);
    /* The thread count: as set, else the CPUs; too many is refused. */
    CHECK_ERR(weft_threads_set(3), WEFT_OK);
    CHECK_INT(weft_threads_get(), 3);
    CHECK_INT(weft__par_workers(2), 2);
    CHECK_INT(weft__par_workers(0), 1);
    CHECK_INT(weft__par_workers(100), 3);
    CHECK_ERR(weft_threads_set(0), WEFT_OK);
    unsigned cpus = weft_threads_get();
    CHECK(cpus >= 1 && cpus <= 32);
    CHECK_ERR(weft_threads_set(WEFT_THREADS_MAX), WEFT_OK);
    CHECK_INT(weft_threads_get(), WEFT_THREADS_MAX);
    CHECK_ERR(weft_threads_set(WEFT_THREADS_MAX + 1), WEFT_EINVAL);
    CHECK_INT(weft_threads_get(), WEFT_THREADS_MAX);
    free(c.runs);
    return weft_test_done();
}
