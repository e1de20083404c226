/* A doorbell in shared memory: a process with nothing to do until a peer
 * publishes something sleeps in the kernel (a futex on the bell) instead
 * of spinning or yielding, and the peer rings the bell after publishing.
 *
 * Protocol. A waiter reads the bell, announces itself (sleepers), issues a
 * full fence, re-checks what it waits for and only then sleeps on the
 * value it read. A ringer publishes (any store), issues a full fence and,
 * only when someone announced itself, bumps the bell and wakes the
 * sleepers. Of the two fences one comes first: either the ringer sees the
 * announcement and wakes (the futex refuses to sleep on a bumped bell), or
 * the waiter's re-check sees the publication. So no wake-up is lost, and
 * while nobody sleeps a ring costs a fence and a load, no read-modify-write
 * and no system call.
 *
 * The bell lives in memory every party maps MAP_SHARED (the futex is not
 * process-private); all-zero is a valid silent bell. */
#ifndef WEFT_RUN_BELL_H
#define WEFT_RUN_BELL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct weft__bell {
    _Atomic uint32_t rings;
    _Atomic uint32_t sleepers;
} weft__bell;

/* Rings after the caller's publication (see the top of the file). */
void weft__bell_ring(weft__bell *b);

/* Sleeps on b for at most nap_ns (> 0) unless ready(arg) holds after the
 * announcement; returns when rung, when the nap ends, on a signal, or at
 * once when ready. The caller re-checks its condition either way. */
void weft__bell_sleep(weft__bell *b, bool (*ready)(void *arg), void *arg, int64_t nap_ns);

/* The pause between two polls of a waiter that has not slept yet: the
 * CPU's spin-wait hint where it has one (x86 `pause`), else a full fence. */
static inline void weft__poll_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    atomic_thread_fence(memory_order_seq_cst);
#endif
}

#endif
