/* Best-case collective bandwidth on a shared host: forked ranks over shared
 * memory run allreduce, reduce-scatter, reduce, broadcast or alltoall
 * (float sum, root 0, out of place) at the given sizes; each timed call
 * starts after a barrier and lasts until its slowest rank returns, and the
 * figure is the best call (the one where no rank was descheduled), next to
 * the median, the CPU time per call of rank 0 and a single-core memcpy
 * bound (best of 8 copies of 64 MiB) measured in the same run. Busbw as
 * nccl-tests: allreduce bytes / time x 2(n-1)/n, reduce-scatter and
 * alltoall x (n-1)/n, reduce and broadcast x 1 (BYTES is one rank's
 * buffer; for alltoall all n blocks). Use it to compare code changes on a
 * loaded machine, where averages measure the scheduler. Prints figures;
 * never fails on time. A collective name ending in "+shared" runs on
 * buffers from weft_comm_alloc (the single-pass path, coll_shared*.c).
 * Usage: bench_run_best [allreduce|reducescatter|reduce|broadcast|alltoall]
 * [+shared] [RANKS [ITERS [BYTES...]]] (default allreduce 2 20 4M 16M 256M)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "memcpy_bound.h"
#include "parse_bytes.h"
#include "run/clock.h"
#include "shm_ranks.h"
#include "weft/comm.h"

typedef struct job {
    char coll[32];
    bool shared; /* buffers from weft_comm_alloc */
    int iters;
    size_t bytes;
} job;

static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static weft_err call(weft_comm *c, const job *j, float *in, float *out, size_t count)
{
    uint32_t n = weft_comm_size(c);
    if (!strcmp(j->coll, "reducescatter"))
        return weft_reduce_scatter(c, in, out, count / n, WEFT_FLOAT, WEFT_SUM, NULL);
    if (!strcmp(j->coll, "reduce"))
        return weft_reduce(c, in, out, count, WEFT_FLOAT, WEFT_SUM, 0, NULL);
    if (!strcmp(j->coll, "broadcast"))
        return weft_broadcast(c, in, out, count, WEFT_FLOAT, 0, NULL);
    if (!strcmp(j->coll, "alltoall"))
        return weft_alltoall(c, in, out, count / n, WEFT_FLOAT, NULL);
    return weft_allreduce(c, in, out, count, WEFT_FLOAT, WEFT_SUM, NULL);
}

static int body(weft_comm *c, void *arg)
{
    const job *j = arg;
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t count = j->bytes / sizeof(float) / n * n;
    void *a, *b;
    if (!bench_bufs_alloc(c, j->shared, count * sizeof(float) + 1, &a, &b))
        return 1;
    float *in = a, *out = b;
    int64_t *t = calloc((size_t)j->iters, sizeof *t);
    if (!t)
        return 1;
    for (size_t i = 0; i < count; i++)
        in[i] = (float)(me + 1);
    memset(out, 0, count * sizeof(float));
    double mc = me == 0 ? bench_memcpy_gbps() : 0;
    if (call(c, j, in, out, count))
        return 2;
    int64_t cpu0 = cpu_ns();
    for (int i = 0; i < j->iters; i++) {
        if (weft_comm_barrier(c, NULL))
            return 2;
        int64_t t0 = weft__now_ns();
        if (call(c, j, in, out, count))
            return 2;
        t[i] = weft__now_ns() - t0;
    }
    int64_t cpu = (cpu_ns() - cpu0) / j->iters;
    float want = (float)n * (float)(n + 1) / 2;
    size_t check = !strcmp(j->coll, "reducescatter") ? count / n : count;
    bool ok = true, has_result = me == 0 || strcmp(j->coll, "reduce");
    bool bcast = !strcmp(j->coll, "broadcast"), a2a = !strcmp(j->coll, "alltoall");
    for (size_t i = 0; has_result && ok && i < check; i += 997)
        ok = out[i] == (bcast ? 1.0f : a2a ? (float)(i / (count / n) + 1) : want);
    if (!ok)
        return 3;
    /* Each call's time is its slowest rank's: a root that returns once its
     * data left (broadcast) is not done. */
    if (weft_allreduce(c, t, t, (size_t)j->iters, WEFT_INT64, WEFT_MAX, NULL))
        return 2;
    qsort(t, (size_t)j->iters, sizeof *t, bench_cmp_i64);
    double factor = !strcmp(j->coll, "allreduce") ? 2.0 * (n - 1) / n
                    : !strcmp(j->coll, "reduce") || !strcmp(j->coll, "broadcast")
                        ? 1.0
                        : (double)(n - 1) / n;
    double best = (double)(count * sizeof(float)) / (double)t[0] * factor;
    if (me == 0)
        printf("%-13s %u ranks %10zu B: best %8.1f us busbw %6.2f GB/s = %.2f of memcpy %.2f "
               "GB/s; median %8.1f us; cpu %8.1f us/call\n",
               j->coll, n, count * sizeof(float), (double)t[0] / 1e3, best, best / mc, mc,
               (double)t[j->iters / 2] / 1e3, (double)cpu / 1e3);
    bench_bufs_free(c, j->shared, a, b);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    job j = {.iters = argc > 3 ? atoi(argv[3]) : 20};
    snprintf(j.coll, sizeof j.coll, "%s", argc > 1 ? argv[1] : "allreduce");
    char *plus = strstr(j.coll, "+shared");
    if (plus && !plus[7]) {
        *plus = '\0';
        j.shared = true;
    }
    uint32_t n = argc > 2 ? (uint32_t)atoi(argv[2]) : 2;
    const char *dflt[] = {"4M", "16M", "256M"};
    int nsizes = argc > 4 ? argc - 4 : 3;
    if (n < 1 || n > 64 || j.iters < 1) {
        fprintf(stderr, "usage: bench_run_best [allreduce|reducescatter|reduce|broadcast|"
                        "alltoall][+shared] [RANKS [ITERS [BYTES...]]]\n");
        return 2;
    }
    for (int s = 0; s < nsizes; s++) {
        j.bytes = bench_parse_bytes(argc > 4 ? argv[4 + s] : dflt[s]);
        bench_on_shm_ranks(n, body, &j); /* prints failed ranks; figures only, exit 0 */
    }
    return 0;
}
