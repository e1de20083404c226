/* Measured sparse vs dense all-reduce per density on forked ranks (default
 * 8 over shared memory; oversubscribed on a small machine is fine: both
 * run under the same load, in the same run).
 *
 * For each density D every rank holds k = ceil(n D) distinct non-zeros of
 * an n-float tensor (drawn uniformly apart per rank, values 1 .. 3, so the
 * sums are exact): weft_allreduce of the dense tensor and
 * weft_allreduce_sparse of its pairs (dense output) alternate, ITERS each,
 * after one warm-up; the slowest rank's mean time is printed with the
 * ratio dense / sparse and whether the results are byte-equal. Then the
 * crossover density, where the ratio crosses 1, interpolated in log D
 * between the two densities that bracket it.
 *
 * usage: bench_sparse_allreduce [RANKS [BYTES [ITERS [shm|tcp]]]]
 *        (defaults 8, 16M, 5, shm)
 * Not run by the tests: a benchmark (seconds of CPU). It never fails on
 * time; exit 1 only when a result is wrong or a rank fails. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/intmath.h"
#include "base/map.h"
#include "parse_bytes.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"
#include "weft/comm_sparse.h"
#include "weft/compress.h"

static const uint32_t ppms[] = {100, 1000, 5000, 10000, 20000, 50000, 100000, 200000, 500000};
#define ND (sizeof ppms / sizeof *ppms)

typedef struct cfg {
    size_t n;
    int iters;
} cfg;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The slowest rank's value at every rank. */
static double slowest(weft_comm *c, double v)
{
    double all[64];
    uint32_t n = weft_comm_size(c);
    if (weft_allgather(c, &v, all, 1, WEFT_DOUBLE, NULL))
        return -1;
    for (uint32_t r = 0; r < n; r++)
        v = all[r] > v ? all[r] : v;
    return v;
}

static int body(weft_comm *c, void *arg)
{
    const cfg *g = arg;
    uint32_t me = weft_comm_rank(c), N = weft_comm_size(c);
    size_t n = g->n;
    float *dense = calloc(n, sizeof *dense), *out = malloc(n * sizeof *out);
    float *ref = malloc(n * sizeof *ref), *val = malloc(n * sizeof *val);
    uint32_t *ix = malloc(n * sizeof *ix);
    if (!dense || !out || !ref || !val || !ix)
        return 3;
    double ratio[ND];
    int bad = 0;
    if (me == 0)
        printf("# %u ranks, transport %s, n = %zu floats (%zu bytes), %d iters after 1 warm-up;"
               " times: the slowest rank's mean\n"
               "# %9s %9s %12s %12s %9s %7s %6s\n",
               N, weft_comm_transport(c, N > 1 ? 1 : 0), n, n * 4, g->iters, "density", "k/rank",
               "dense(ms)", "sparse(ms)", "wire(B)", "d/s", "exact");
    for (size_t di = 0; di < ND; di++) {
        size_t k = (size_t)weft_density_count(n, ppms[di]);
        uint64_t a = weft__mix64(me * 31u + di) % n | 1, b = weft__mix64(me + 1000u * di);
        while (weft__gcd64(a, n) != 1)
            a++;
        memset(dense, 0, n * sizeof *dense);
        for (size_t t = 0; t < k; t++) {
            ix[t] = (uint32_t)((a * t + b) % n);
            val[t] = (float)(1 + (me + t) % 3);
            dense[ix[t]] = val[t];
        }
        double td = 0, ts = 0;
        for (int it = -1; it < g->iters; it++) {
            weft_comm_barrier(c, NULL);
            double t0 = now_s();
            if (weft_allreduce(c, dense, ref, n, WEFT_FLOAT, WEFT_SUM, NULL))
                return 4;
            double t1 = now_s();
            weft_comm_barrier(c, NULL);
            double t2 = now_s();
            if (weft_allreduce_sparse(c, ix, WEFT_UINT32, val, k, n, out, NULL, NULL))
                return 5;
            double t3 = now_s();
            if (it >= 0)
                td += t1 - t0, ts += t3 - t2;
        }
        td = slowest(c, td / g->iters);
        ts = slowest(c, ts / g->iters);
        bool exact = memcmp(out, ref, n * sizeof *out) == 0;
        bad += !exact;
        ratio[di] = td / ts;
        if (me == 0)
            printf("  %9.4f %9zu %12.3f %12.3f %9zu %7.2f %6s\n", ppms[di] / 1e6, k, td * 1e3,
                   ts * 1e3, k * 8, ratio[di], exact ? "yes" : "NO");
        fflush(stdout);
    }
    if (me == 0) {
        int found = 0;
        for (size_t di = 0; di + 1 < ND; di++)
            if (ratio[di] >= 1 && ratio[di + 1] < 1) {
                double l0 = log(ppms[di]), l1 = log(ppms[di + 1]);
                double f = log(ratio[di]) / (log(ratio[di]) - log(ratio[di + 1]));
                printf("crossover: sparse pays below a density of about %.4f (between %.4f and "
                       "%.4f)\n",
                       exp(l0 + f * (l1 - l0)) / 1e6, ppms[di] / 1e6, ppms[di + 1] / 1e6);
                found = 1;
                break;
            }
        if (!found)
            printf("crossover: none in %.4f .. %.4f (sparse %s throughout)\n", ppms[0] / 1e6,
                   ppms[ND - 1] / 1e6, ratio[0] >= 1 ? "faster" : "slower");
    }
    free(dense), free(out), free(ref), free(val), free(ix);
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    uint32_t ranks = argc > 1 ? (uint32_t)atoi(argv[1]) : 8;
    size_t bytes = argc > 2 ? bench_parse_bytes(argv[2]) : (size_t)16 << 20;
    cfg g = {(size_t)(bytes / 4), argc > 3 ? atoi(argv[3]) : 5};
    if (ranks < 1 || ranks > 64 || g.n == 0 || g.n > UINT32_MAX || g.iters < 1) {
        fprintf(stderr,
                "usage: bench_sparse_allreduce [RANKS (1..64) [BYTES [ITERS [shm|tcp]]]]\n");
        return 2;
    }
    weft_comm_config cc;
    weft_comm_config_init(&cc);
    cc.transport =
        argc > 4 && strcmp(argv[4], "tcp") == 0 ? WEFT_TRANSPORT_TCP : WEFT_TRANSPORT_SHM;
    cc.timeout_ms = 120000;
    int codes[64], status = 0;
    fflush(stdout);
    weft__test_comm_ranks(ranks, &cc, body, &g, 600000, codes, NULL);
    for (uint32_t r = 0; r < ranks; r++)
        if (codes[r]) {
            printf("rank %u exited %d\n", r, codes[r]);
            status = 1;
        }
    return status;
}
