/* Monotonic time for deadlines. Every blocking wait in src/run computes an
 * absolute deadline in nanoseconds of CLOCK_MONOTONIC, so wall-clock jumps
 * never shorten or stretch a timeout. */
#ifndef WEFT_RUN_CLOCK_H
#define WEFT_RUN_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t weft__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Milliseconds left until deadline for poll(): at least 0, at most cap_ms. */
static inline int weft__ms_until(int64_t deadline, int cap_ms)
{
    int64_t left = deadline - weft__now_ns();
    if (left <= 0)
        return 0;
    int64_t ms = (left + 999999) / 1000000;
    return ms > cap_ms ? cap_ms : (int)ms;
}

#endif
