/* Doorbells (see bell.h). */
#include "run/transport/shm/bell.h"

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void weft__bell_ring(weft__bell *b)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&b->sleepers, memory_order_relaxed)) {
        atomic_fetch_add(&b->rings, 1);
        syscall(SYS_futex, &b->rings, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    }
}

void weft__bell_sleep(weft__bell *b, bool (*ready)(void *arg), void *arg, int64_t nap_ns)
{
    uint32_t seen = atomic_load(&b->rings);
    atomic_fetch_add(&b->sleepers, 1);
    atomic_thread_fence(memory_order_seq_cst);
    if (!ready(arg)) {
        struct timespec ts = {(time_t)(nap_ns / 1000000000), (long)(nap_ns % 1000000000)};
        syscall(SYS_futex, &b->rings, FUTEX_WAIT, seen, &ts, NULL, 0);
    }
    atomic_fetch_sub(&b->sleepers, 1);
}
