/* A mutual-exclusion lock of one word for the threads of one process,
 * taken and given inline: an uncontended take is one compare-and-swap and
 * a give one exchange, where glibc's pthread_mutex_lock and
 * pthread_mutex_unlock cost about 55 instructions the pair (callgrind,
 * glibc 2.36: the type dispatch of a general mutex). Held across a whole
 * blocking call (the interposition library holds one per communicator for
 * each call served on it: run/pmpi/state.h), so a thread that finds it
 * taken sleeps in the kernel (a futex) instead of spinning.
 *
 * The word: 0 free, 1 taken, 2 taken with a thread that may be asleep on
 * it. A take swaps 0 for 1; failing that, it swaps in 2 and sleeps while
 * the old value was not 0. A give swaps in 0 and, where the old value was
 * 2, wakes one sleeper, which swaps in 2 again (it cannot know whether
 * others sleep). This is the third mutex of U. Drepper, "Futexes Are
 * Tricky" (2011), section 6. Not recursive; no owner is recorded; all-zero
 * is a free lock, so no _init and no _fini. Linux only (futex), as the
 * shared-memory transport. */
#ifndef WEFT_RUN_LOCK_H
#define WEFT_RUN_LOCK_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct weft__lock {
    _Atomic uint32_t word;
} weft__lock;

/* The slow paths (lock.c): waits until the take succeeds; wakes one
 * sleeper. */
void weft__lock_wait(weft__lock *l);
void weft__lock_wake(weft__lock *l);

/* Takes l, blocking while another thread holds it (acquire). */
static inline void weft__lock_take(weft__lock *l)
{
    uint32_t free_word = 0;
    if (!atomic_compare_exchange_strong_explicit(&l->word, &free_word, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        weft__lock_wait(l);
}

/* Gives l back (release); the caller holds it. */
static inline void weft__lock_give(weft__lock *l)
{
    if (atomic_exchange_explicit(&l->word, 0, memory_order_release) == 2)
        weft__lock_wake(l);
}

#endif
