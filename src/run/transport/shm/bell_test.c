/* Doorbells (bell.h): a silent ring does nothing, a nap ends on time, a
 * ready waiter does not sleep, a ring after the announcement wakes, and 20,000 round trips between
 * two processes that always sleep lose no wake-up (a lost one would cost a whole nap of one
 * second). */
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/testing.h"
#include "run/clock.h"
#include "run/transport/shm/bell.h"

#define ROUNDS 20000
#define NAP_NS 1000000000LL

typedef struct side {
    weft__bell bell;            /* rung when the other side moves `count` */
    _Atomic uint64_t count;     /* rounds this side has seen */
    _Atomic int64_t longest_ns; /* the longest wait of a round */
} side;

typedef struct wait_for {
    _Atomic uint64_t *word;
    uint64_t at_least;
} wait_for;

static bool reached(void *arg)
{
    const wait_for *w = arg;
    return atomic_load(w->word) >= w->at_least;
}

static bool never(void *arg)
{
    (void)arg;
    return false;
}

static bool always(void *arg)
{
    (void)arg;
    return true;
}

/* A ring that lands after the waiter announced itself and re-checked
 * (here: during the re-check) must still end the sleep at once. */
static bool rung_during_recheck(void *arg)
{
    weft__bell_ring(arg);
    return false;
}

/* Waits (sleeping at once, no polling) until *word >= at_least; the
 * longest wait goes into me->longest_ns. */
static void wait_sleeping(side *me, _Atomic uint64_t *word, uint64_t at_least)
{
    wait_for w = {word, at_least};
    int64_t t0 = weft__now_ns();
    while (!reached(&w))
        weft__bell_sleep(&me->bell, reached, &w, NAP_NS);
    int64_t t = weft__now_ns() - t0;
    if (t > atomic_load(&me->longest_ns))
        atomic_store(&me->longest_ns, t);
}

/* Side a publishes round i and rings b; b answers with round i and rings a. */
static void ping_pong(side *a, side *b, bool is_a)
{
    side *me = is_a ? a : b, *peer = is_a ? b : a;
    for (uint64_t i = 1; i <= ROUNDS; i++) {
        if (!is_a)
            wait_sleeping(me, &peer->count, i);
        atomic_store(&me->count, i);
        weft__bell_ring(&peer->bell);
        if (is_a)
            wait_sleeping(me, &peer->count, i);
    }
}

int main(void)
{
    weft__bell quiet = {0};
    weft__bell_ring(&quiet);
    CHECK_INT(atomic_load(&quiet.rings), 0); /* nobody sleeps: nothing to do */

    int64_t t0 = weft__now_ns();
    weft__bell_sleep(&quiet, never, NULL, 20000000);
    int64_t napped = weft__now_ns() - t0;
    CHECK(napped >= 20000000 && napped < 900000000);
    CHECK_INT(atomic_load(&quiet.sleepers), 0);

    t0 = weft__now_ns();
    weft__bell_sleep(&quiet, always, NULL, NAP_NS);
    CHECK(weft__now_ns() - t0 < NAP_NS / 2);

    t0 = weft__now_ns();
    weft__bell_sleep(&quiet, rung_during_recheck, &quiet, NAP_NS);
    CHECK(weft__now_ns() - t0 < NAP_NS / 2);
    CHECK_INT(atomic_load(&quiet.rings), 1);

    side *s =
        mmap(NULL, 2 * sizeof(side), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(s != MAP_FAILED);
    if (s == MAP_FAILED)
        return weft_test_done();
    pid_t pid = fork();
    if (pid == 0) {
        ping_pong(&s[0], &s[1], false);
        _exit(0);
    }
    t0 = weft__now_ns();
    ping_pong(&s[0], &s[1], true);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    double per_round_us = (double)(weft__now_ns() - t0) / ROUNDS / 1e3;
    CHECK_INT(atomic_load(&s[0].count), ROUNDS);
    CHECK_INT(atomic_load(&s[1].count), ROUNDS);
    /* A lost wake-up sleeps a whole nap. */
    CHECK(atomic_load(&s[0].longest_ns) < NAP_NS / 2);
    CHECK(atomic_load(&s[1].longest_ns) < NAP_NS / 2);
    printf("bell_test: %d round trips, %.1f us each, longest waits %.1f / %.1f ms\n", ROUNDS,
           per_round_us, (double)atomic_load(&s[0].longest_ns) / 1e6,
           (double)atomic_load(&s[1].longest_ns) / 1e6);
    munmap(s, 2 * sizeof(side));
    return weft_test_done();
}
