/* What the forked-rank run benchmarks (bench_run_best, bench_run_small)
 * share: starting ranks on shared memory, their two buffers (private or
 * weft_comm_alloc memory) and sorting their timings. */
#ifndef WEFT_BENCH_SHM_RANKS_H
#define WEFT_BENCH_SHM_RANKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "run/testing_ranks.h"
#include "weft/comm.h"

/* qsort comparison of int64_t. */
static inline int bench_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Two buffers of `bytes` each, from weft_comm_alloc when shared, else
 * malloc; false when either is missing (free them with bench_bufs_free
 * all the same). */
static inline bool bench_bufs_alloc(weft_comm *c, bool shared, size_t bytes, void **a, void **b)
{
    *a = *b = NULL;
    if (shared)
        return !weft_comm_alloc(c, bytes, a, NULL) && !weft_comm_alloc(c, bytes, b, NULL);
    *a = malloc(bytes);
    *b = malloc(bytes);
    return *a && *b;
}

static inline void bench_bufs_free(weft_comm *c, bool shared, void *a, void *b)
{
    if (shared) {
        weft_comm_free_mem(c, a);
        weft_comm_free_mem(c, b);
    } else {
        free(a);
        free(b);
    }
}

/* Runs body(c, arg) on n (<= 64) forked ranks over shared memory and
 * prints each rank's non-zero exit code; 1 when there was one, else 0. */
static inline int bench_on_shm_ranks(uint32_t n, weft__comm_body body, void *arg)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = WEFT_TRANSPORT_SHM;
    int codes[64], status = 0;
    fflush(stdout);
    weft__test_comm_ranks(n, &cfg, body, arg, 600000, codes, NULL);
    for (uint32_t r = 0; r < n; r++)
        if (codes[r]) {
            printf("rank %u exited %d\n", r, codes[r]);
            status = 1;
        }
    return status;
}

#endif
