/* The lock of lock.h: threads that add to a plain counter under it lose no
 * addition, with the holder sleeping inside so that takers find it taken
 * and sleep on the futex (the slow paths); a taken lock is taken by no one
 * else until given. */
#include "run/lock.h"

#include <pthread.h>
#include <time.h>

#include "base/testing.h"

enum { THREADS = 4, ROUNDS = 20000 };

static weft__lock lock;
static uint64_t counter; /* plain: only the lock orders its updates */
static _Atomic int inside;
static _Atomic int overlaps;

static void *adder(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        weft__lock_take(&lock);
        if (atomic_fetch_add(&inside, 1) != 0)
            atomic_fetch_add(&overlaps, 1);
        /* A read, a pause and a write back: a second thread inside would
         * lose additions. Every 1000th round the holder sleeps, so that
         * the others block on the futex. */
        uint64_t v = counter;
        if (i % 1000 == 0) {
            struct timespec nap = {0, 200000};
            nanosleep(&nap, NULL);
        }
        counter = v + 1;
        atomic_fetch_sub(&inside, 1);
        weft__lock_give(&lock);
    }
    return NULL;
}

int main(void)
{
    /* Uncontended: a take marks it 1, a give frees it. */
    weft__lock_take(&lock);
    CHECK_INT((int)atomic_load(&lock.word), 1);
    weft__lock_give(&lock);
    CHECK_INT((int)atomic_load(&lock.word), 0);

    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK_INT(pthread_create(&t[i], NULL, adder, NULL), 0);
    for (int i = 0; i < THREADS; i++)
        CHECK_INT(pthread_join(t[i], NULL), 0);
    CHECK_INT((long long)counter, (long long)THREADS * ROUNDS);
    CHECK_INT(atomic_load(&overlaps), 0);
    CHECK_INT((int)atomic_load(&lock.word), 0);
    return weft_test_done();
}
