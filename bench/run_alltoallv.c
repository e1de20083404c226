/* weft_alltoallv on forked ranks, over shared memory and TCP: for each
 * size (the bytes a rank sends in all), the median time of weft_alltoallv
 * with equal counts against weft_alltoall of the same blocks (what the
 * count agreement costs), and of a skewed matrix of the same total (rank r
 * sends rank (r+1) mod n half its bytes, the rest evenly), with nccl-tests'
 * alltoall columns: algbw = bytes / time, busbw = algbw x (n-1)/n, and
 * #wrong, the elements that differ from what the sender wrote (0 expected).
 * Prints figures; never fails on time.
 * Usage: bench_run_alltoallv [RANKS [ITERS]] (default 4 ranks, 20 iters). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/clock.h"
#include "run/testing_ranks.h"
#include "shm_ranks.h"
#include "weft/comm.h"

typedef struct opts {
    int iters;
} opts;

static const size_t sizes[] = {1024, 65536, 1u << 20, 8u << 20};

/* Elements (int32) rank s sends rank d: equal, or half to s+1. */
static size_t count_of(uint32_t n, uint32_t s, uint32_t d, size_t total, bool skewed)
{
    if (!skewed || n == 1)
        return total / n;
    size_t half = total / 2, rest = (total - half) / (n - 1);
    return d == (s + 1) % n ? half : rest;
}

static int32_t value(uint32_t s, uint32_t d, size_t i)
{
    return (int32_t)(s * 1000003u + d * 7919u + i);
}

/* Median seconds over the ranks' slowest (rank 0 prints). */
static double run_case(weft_comm *c, const opts *o, size_t total, int kind, size_t *wrong)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t *sc = calloc(4 * (size_t)n, sizeof(size_t)), *sd = sc + n, *rc = sd + n, *rd = rc + n;
    size_t so = 0, ro = 0;
    bool skewed = kind == 2;
    for (uint32_t j = 0; j < n; j++) {
        sc[j] = count_of(n, me, j, total, skewed);
        rc[j] = count_of(n, j, me, total, skewed);
        sd[j] = so;
        rd[j] = ro;
        so += sc[j];
        ro += rc[j];
    }
    int32_t *s = malloc((so + 1) * 4), *r = malloc((ro + 1) * 4);
    for (uint32_t j = 0; j < n; j++)
        for (size_t i = 0; i < sc[j]; i++)
            s[sd[j] + i] = value(me, j, i);
    int64_t *t = calloc((size_t)o->iters, sizeof(int64_t));
    for (int it = -2; it < o->iters; it++) {
        memset(r, 0, (ro + 1) * 4);
        weft_comm_barrier(c, NULL);
        int64_t t0 = weft__now_ns();
        weft_err e = kind == 0 ? weft_alltoall(c, s, r, total / n, WEFT_INT32, NULL)
                               : weft_alltoallv(c, s, sc, sd, r, rc, rd, WEFT_INT32, NULL);
        int64_t dt = weft__now_ns() - t0;
        if (e)
            *wrong += ro;
        if (it >= 0)
            t[it] = dt;
    }
    for (uint32_t j = 0; j < n; j++)
        for (size_t i = 0; i < rc[j]; i++)
            *wrong += r[rd[j] + i] != value(j, me, i);
    /* The slowest rank's median. */
    qsort(t, (size_t)o->iters, sizeof *t, bench_cmp_i64);
    int64_t mine = t[o->iters / 2], *all = calloc(n, sizeof(int64_t));
    weft_allgather(c, &mine, all, 1, WEFT_INT64, NULL);
    int64_t worst = 0;
    for (uint32_t j = 0; j < n; j++)
        worst = all[j] > worst ? all[j] : worst;
    uint64_t w = *wrong, wsum = 0;
    weft_allreduce(c, &w, &wsum, 1, WEFT_UINT64, WEFT_SUM, NULL);
    *wrong = wsum;
    free(all);
    free(t);
    free(s);
    free(r);
    free(sc);
    return (double)worst / 1e9;
}

static int body(weft_comm *c, void *arg)
{
    const opts *o = arg;
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    if (me == 0) {
        printf("%s, %u ranks, %d iterations (median of the slowest rank)\n",
               weft_comm_transport(c, (me + 1) % n), n, o->iters);
        printf("%10s  %-22s %10s %9s %9s %7s\n", "bytes", "call", "time(us)", "algbw", "busbw",
               "#wrong");
    }
    const char *names[] = {"alltoall (equal)", "alltoallv (equal)", "alltoallv (skewed)"};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t total = sizes[k] / 4 / n * n; /* elements, a multiple of n */
        double secs[3];
        for (int kind = 0; kind < 3; kind++) {
            size_t wrong = 0;
            secs[kind] = run_case(c, o, total, kind, &wrong);
            /* The busiest rank sends total elements in every case. */
            double algbw = (double)total * 4 / secs[kind] / 1e9;
            if (me == 0)
                printf("%10zu  %-22s %10.1f %9.3f %9.3f %7zu\n", total * 4, names[kind],
                       secs[kind] * 1e6, algbw, algbw * (n - 1) / n, wrong);
        }
        if (me == 0)
            printf("%10s  alltoallv / alltoall at equal counts: %.2fx\n", "", secs[1] / secs[0]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 4;
    opts o = {argc > 2 ? atoi(argv[2]) : 20};
    if (n < 1 || n > 64 || o.iters < 1) {
        fprintf(stderr, "usage: bench_run_alltoallv [RANKS (1..64) [ITERS]]\n");
        return 2;
    }
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    int status = 0;
    for (int t = 0; t < 2; t++) {
        cfg.transport = t ? WEFT_TRANSPORT_TCP : WEFT_TRANSPORT_SHM;
        int codes[64];
        fflush(stdout);
        weft__test_comm_ranks(n, &cfg, body, &o, 600000, codes, NULL);
        for (uint32_t r = 0; r < n; r++)
            if (codes[r]) {
                printf("rank %u exited %d\n", r, codes[r]);
                status = 1;
            }
    }
    return status;
}
