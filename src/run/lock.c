/* The slow paths of the lock (see lock.h). */
#include "run/lock.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

void weft__lock_wait(weft__lock *l)
{
    /* Marked 2 before sleeping, so that the holder's give wakes a thread;
     * the futex refuses to sleep where the word is no longer 2. */
    while (atomic_exchange_explicit(&l->word, 2, memory_order_acquire) != 0)
        syscall(SYS_futex, &l->word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

void weft__lock_wake(weft__lock *l)
{
    syscall(SYS_futex, &l->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
