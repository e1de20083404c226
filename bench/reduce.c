/* Throughput of the reduction kernels (reduce.h) against memcpy.
 *
 *   bench_reduce [--quick] [TIER]
 *
 * For every dtype x op, at 4 KiB (the buffers stay in L1) and 64 MiB (they
 * come from DRAM), times dst[i] = dst[i] op src[i] and memcpy(dst, src) of
 * the same bytes on the same buffers, alternating the two so that both see
 * the same machine load, and prints GB/s = buffer bytes / seconds for each
 * and their ratio (kernel / memcpy; 1.00 means the kernel runs at memcpy
 * speed). A kernel reads two buffers and writes one, memcpy reads one and
 * writes one, so a memory-bound kernel tends to 2/3 at DRAM sizes.
 *
 * Each figure is the best of several timed trials, timed in this thread's
 * CPU time (the machine is shared: time spent descheduled is not counted,
 * and the fastest trial is the least disturbed one). The inputs are small
 * positive integers, so no trial ever meets a subnormal (which some CPUs
 * handle slowly). --quick runs fewer trials. TIER (portable, avx2,
 * avx512) measures that tier's kernels instead of the ones
 * weft__reduce_get picks. Never fails on time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "run/reduce.h"
#include "weft/comm.h"

enum { SMALL = 4 << 10, LARGE = 64 << 20 };

/* Calls per trial: about 64 MiB of buffer per trial at 4 KiB, 2 buffers
 * (128 MiB) at 64 MiB. */
static unsigned calls_for(size_t bytes)
{
    return bytes >= LARGE ? 2u : (unsigned)((64u << 20) / bytes);
}

/* Small positive integers in the first 4 KiB, repeated up to bytes. */
static void fill(weft_dtype t, unsigned char *buf, size_t bytes, unsigned seed)
{
    size_t es = weft_dtype_size(t), done = SMALL < bytes ? SMALL : bytes;
    for (size_t i = 0; i < done / es; i++)
        weft_dtype_store(t, buf, i, (double)(1 + (i * 7 + seed) % 5));
    while (done < bytes) {
        size_t n = done < bytes - done ? done : bytes - done;
        memcpy(buf + done, buf, n);
        done += n;
    }
}

static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

typedef struct {
    double kernel_gbs, memcpy_gbs;
} figures;

/* Best-of-trials GB/s of fn and of memcpy on the same buffers. */
static figures measure(weft__reduce_fn fn, void *dst, const void *src, size_t count, size_t bytes,
                       unsigned trials)
{
    unsigned calls = calls_for(bytes);
    int64_t best_k = INT64_MAX, best_m = INT64_MAX;
    fn(dst, src, count); /* warm up */
    memcpy(dst, src, bytes);
    for (unsigned t = 0; t < trials; t++) {
        int64_t t0 = cpu_ns();
        for (unsigned c = 0; c < calls; c++)
            memcpy(dst, src, bytes);
        int64_t t1 = cpu_ns();
        for (unsigned c = 0; c < calls; c++)
            fn(dst, src, count);
        int64_t t2 = cpu_ns();
        if (t1 - t0 < best_m)
            best_m = t1 - t0;
        if (t2 - t1 < best_k)
            best_k = t2 - t1;
    }
    double total = (double)bytes * calls;
    return (figures){total / (double)(best_k > 0 ? best_k : 1),
                     total / (double)(best_m > 0 ? best_m : 1)};
}

int main(int argc, char **argv)
{
    bool quick = false;
    weft__reduce_tier tier = weft__reduce_best_tier();
    for (int i = 1; i < argc; i++) {
        unsigned t = 0;
        while (t < WEFT__REDUCE_TIER_COUNT &&
               strcmp(argv[i], weft__reduce_tier_name((weft__reduce_tier)t)) != 0)
            t++;
        if (strcmp(argv[i], "--quick") == 0) {
            quick = true;
        } else if (t < WEFT__REDUCE_TIER_COUNT) {
            tier = (weft__reduce_tier)t;
        } else {
            fprintf(stderr, "usage: bench_reduce [--quick] [portable|avx2|avx512]\n");
            return 2;
        }
    }
    if (!weft__reduce_get_tier(WEFT_INT8, WEFT_SUM, tier)) {
        fprintf(stderr, "bench_reduce: this CPU cannot run the %s kernels\n",
                weft__reduce_tier_name(tier));
        return 1;
    }
    unsigned char *dst = aligned_alloc(64, LARGE), *src = aligned_alloc(64, LARGE);
    if (!dst || !src) {
        fprintf(stderr, "bench_reduce: out of memory\n");
        return 1;
    }
    printf("kernels: %s (best here: %s)\n", weft__reduce_tier_name(tier),
           weft__reduce_tier_name(weft__reduce_best_tier()));
    printf("GB/s = buffer bytes / s; ratio = kernel GB/s / memcpy GB/s in the same run\n");
    printf("%-9s %-5s | %8s %8s %6s | %8s %8s %6s\n", "dtype", "op", "4K", "memcpy", "ratio", "64M",
           "memcpy", "ratio");
    double sum_ratio[2] = {0, 0};
    unsigned n = 0;
    for (unsigned t = 0; t < WEFT__DTYPE_COUNT; t++) {
        for (unsigned op = 0; op < WEFT__REDOP_COUNT; op++) {
            weft__reduce_fn fn = weft__reduce_get_tier((weft_dtype)t, (weft_redop)op, tier);
            size_t es = weft_dtype_size((weft_dtype)t);
            figures f[2];
            size_t sizes[2] = {SMALL, LARGE};
            for (int s = 0; s < 2; s++) {
                size_t count = sizes[s] / es;
                fill((weft_dtype)t, dst, sizes[s], 0);
                fill((weft_dtype)t, src, sizes[s], 3);
                f[s] = measure(fn, dst, src, count, sizes[s], quick ? 3 : (s ? 5 : 15));
                sum_ratio[s] += f[s].kernel_gbs / f[s].memcpy_gbs;
            }
            n++;
            printf("%-9s %-5s | %8.2f %8.2f %6.2f | %8.2f %8.2f %6.2f\n",
                   weft_dtype_name((weft_dtype)t), weft_redop_name((weft_redop)op), f[0].kernel_gbs,
                   f[0].memcpy_gbs, f[0].kernel_gbs / f[0].memcpy_gbs, f[1].kernel_gbs,
                   f[1].memcpy_gbs, f[1].kernel_gbs / f[1].memcpy_gbs);
            fflush(stdout);
        }
    }
    printf("mean ratio: 4K %.2f, 64M %.2f\n", sum_ratio[0] / n, sum_ratio[1] / n);
    free(dst);
    free(src);
    return 0;
}
