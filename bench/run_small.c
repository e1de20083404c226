/* Small-message allreduce latency: forked ranks on shared memory run
 * back-to-back float-sum allreduces (as bench_run_mpi and nccl-tests time
 * them) and print, per size, the median and the best of TRIALS trials of
 * CALLS calls each, in microseconds per call (rank 0's clock; back-to-back
 * calls keep the ranks in step), and which path ran (weft__region counters).
 * Buffers are private memory (`private`, the ordinary path of weft perf and
 * libweft_mpi.so) or weft_comm_alloc memory (`shared`, bench_run_mpi's).
 * With no more ranks than CPUs each rank is bound to CPU rank % CPUs, as
 * mpirun binds them. Never fails on time; exits 1 on a wrong result.
 * Usage: bench_run_small [private|shared] [RANKS [TRIALS [CALLS [BYTES...]]]]
 * (default shared 2 7 2000 1K 4K 16K 64K) */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse_bytes.h"
#include "run/clock.h"
#include "run/transport/shm/region.h"
#include "shm_ranks.h"
#include "weft/comm.h"

typedef struct job {
    bool shared;
    int trials, calls;
    size_t bytes;
} job;

static int body(weft_comm *c, void *arg)
{
    const job *j = arg;
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 0 && (long)n <= cpus) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET((int)(me % (uint32_t)cpus), &set);
        sched_setaffinity(0, sizeof set, &set);
    }
    size_t count = j->bytes / sizeof(float);
    void *a, *b;
    if (!bench_bufs_alloc(c, j->shared, j->bytes, &a, &b))
        return 1;
    float *in = a, *out = b;
    int64_t *t = calloc((size_t)j->trials, sizeof *t);
    if (!t)
        return 1;
    for (size_t i = 0; i < count; i++)
        in[i] = (float)(me + 1);
    uint64_t fast0 = weft__region_fast_calls(c), small0 = weft__region_small_calls(c);
    for (int i = 0; i < 200; i++)
        if (weft_allreduce(c, in, out, count, WEFT_FLOAT, WEFT_SUM, NULL))
            return 2;
    for (int k = 0; k < j->trials; k++) {
        if (weft_comm_barrier(c, NULL))
            return 2;
        int64_t t0 = weft__now_ns();
        for (int i = 0; i < j->calls; i++)
            if (weft_allreduce(c, in, out, count, WEFT_FLOAT, WEFT_SUM, NULL))
                return 2;
        t[k] = weft__now_ns() - t0;
    }
    float want = (float)n * (float)(n + 1) / 2;
    for (size_t i = 0; i < count; i++)
        if (out[i] != want)
            return 3;
    const char *path = weft__region_small_calls(c) > small0 ? "small"
                       : weft__region_fast_calls(c) > fast0 ? "shared"
                                                            : "ordinary";
    qsort(t, (size_t)j->trials, sizeof *t, bench_cmp_i64);
    if (me == 0)
        printf("%-8s %u ranks %8zu B: median %8.3f us  best %8.3f us per call  (%s path)\n",
               j->shared ? "shared" : "private", n, j->bytes,
               (double)t[j->trials / 2] / 1e3 / j->calls, (double)t[0] / 1e3 / j->calls, path);
    bench_bufs_free(c, j->shared, a, b);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    job j = {.shared = argc < 2 || strcmp(argv[1], "private") != 0,
             .trials = argc > 3 ? atoi(argv[3]) : 7,
             .calls = argc > 4 ? atoi(argv[4]) : 2000};
    uint32_t n = argc > 2 ? (uint32_t)atoi(argv[2]) : 2;
    const char *dflt[] = {"1K", "4K", "16K", "64K"};
    int nsizes = argc > 5 ? argc - 5 : 4;
    if (n < 1 || n > 64 || j.trials < 1 || j.calls < 1) {
        fprintf(stderr, "usage: bench_run_small [private|shared] [RANKS [TRIALS [CALLS "
                        "[BYTES...]]]]\n");
        return 2;
    }
    int status = 0;
    for (int s = 0; s < nsizes; s++) {
        j.bytes =
            bench_parse_bytes(argc > 5 ? argv[5 + s] : dflt[s]) / sizeof(float) * sizeof(float);
        if (j.bytes && bench_on_shm_ranks(n, body, &j))
            status = 1;
    }
    return status;
}
