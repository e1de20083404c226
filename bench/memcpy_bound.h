/* The single-core memcpy bound the run benchmarks compare against
 * (bench_run_mpi, bench_run_best): the best of 8 copies of 64 MiB between
 * two private buffers, in GB/s of bytes copied; 0 when the buffers cannot
 * be allocated. */
#ifndef WEFT_BENCH_MEMCPY_BOUND_H
#define WEFT_BENCH_MEMCPY_BOUND_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double bench_memcpy_gbps(void)
{
    size_t bytes = (size_t)64 << 20;
    char *a = malloc(bytes), *b = malloc(bytes);
    if (!a || !b) {
        free(a);
        free(b);
        return 0;
    }
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    double best = 1e30;
    for (int i = 0; i < 8; i++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        memcpy(i % 2 ? a : b, i % 2 ? b : a, bytes);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double t = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        if (t < best) best = t;
    }
    volatile char sink = a[bytes / 2] + b[bytes / 3]; /* the copies are used */
    (void)sink;
    free(a);
    free(b);
    return (double)bytes / best / 1e9;
}

#endif
