/* The single-core memcpy bound the run benchmarks compare against
 * (bench_run_mpi, bench_run_best): how fast one core copies a buffer, in
 * GB/s of bytes copied, the faster of the C library's memcpy and streaming
 * stores (weft__copy_nt). Both count: on the development VM, which reports
 * a 508 MiB L3 cache, glibc's memcpy never switches to streaming stores
 * and copies 256 MiB at about 0.75 of their rate, so glibc alone would
 * flatter a collective that streams its results. */
#ifndef WEFT_BENCH_MEMCPY_BOUND_H
#define WEFT_BENCH_MEMCPY_BOUND_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run/copy_nt.h"

static inline double bench_memcpy_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One copy of bytes from src to dst with each kernel; the faster's GB/s. */
static inline double bench_copy_once_gbps(void *dst, const void *src, size_t bytes)
{
    double t0 = bench_memcpy_seconds();
    memcpy(dst, src, bytes);
    double t1 = bench_memcpy_seconds();
    weft__copy_nt(dst, src, bytes);
    double t2 = bench_memcpy_seconds();
    double best = t1 - t0 < t2 - t1 ? t1 - t0 : t2 - t1;
    return best > 0 ? (double)bytes / best / 1e9 : 0;
}

/* The best of 8 rounds copying 64 MiB between two private buffers; 0 when
 * the buffers cannot be allocated. */
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
    double best = 0;
    for (int i = 0; i < 8; i++) {
        double g = bench_copy_once_gbps(i % 2 ? a : b, i % 2 ? b : a, bytes);
        if (g > best)
            best = g;
    }
    volatile char sink = a[bytes / 2] + b[bytes / 3]; /* the copies are used */
    (void)sink;
    free(a);
    free(b);
    return best;
}

#endif
