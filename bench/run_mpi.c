/* weft_allreduce against MPI_Allreduce on this host, under mpirun.
 *
 * Both run on the same buffers, allocated with weft_comm_alloc (memory every
 * rank on this host maps, so weft's allreduce runs single-pass on it:
 * coll_shared.c; each size's line names the path weft took: "small" for
 * the eager path of coll_small.c, "shared" or "ordinary"), float sum, rank r contributing r+1 so every
 * result is exact and checked), sizes 1 KiB to the maximum (default 256
 * MiB) in x4 steps; each size is timed as the slowest rank's time over a
 * few iterations (fewer for large sizes) after 1 + iterations/5 warm-up
 * calls. Bus bandwidth is
 * nccl-tests': bytes / time * 2(n-1)/n. It also measures a single-core
 * memcpy bound (rank 0 copying 64 MiB while the others wait) and prints the
 * ratio of weft's largest-size busbw to it. Lines starting "row" are for
 * bench/run.sh. Never fails on time; exits 1 only when a result is wrong or
 * weft cannot start.
 * Usage: mpirun -np N bench_run_mpi [LABEL [MAX_BYTES]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "memcpy_bound.h"
#include "run/transport/shm/region.h"
#include "weft/comm_mpi.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int iterations(size_t bytes)
{
    if (bytes >= (64u << 20)) return 2;
    if (bytes >= (4u << 20)) return 5;
    if (bytes >= (256u << 10)) return 20;
    return 100;
}

typedef struct job {
    weft_comm *wc;
    float *send, *recv;
    size_t count;
    int n;
} job;

/* One allreduce with weft (use_weft) or MPI; false on an error. */
static int one(const job *j, int use_weft)
{
    if (use_weft)
        return weft_allreduce(j->wc, j->send, j->recv, j->count, WEFT_FLOAT, WEFT_SUM, NULL) ==
               WEFT_OK;
    return MPI_Allreduce(j->send, j->recv, (int)j->count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) ==
           MPI_SUCCESS;
}

/* Seconds per call, the slowest rank's; -1 on an error or a wrong result. */
static double timed(const job *j, int use_weft, int iters)
{
    memset(j->recv, 0, j->count * sizeof(float));
    int ok = 1;
    for (int i = 0; i < 1 + iters / 5 && ok; i++) /* warm-up, as nccl-tests does */
        ok = one(j, use_weft);
    float want = (float)j->n * (float)(j->n + 1) / 2;
    ok = ok && j->recv[0] == want && j->recv[j->count / 2] == want &&
         j->recv[j->count - 1] == want;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    for (int i = 0; i < iters && ok; i++)
        ok = one(j, use_weft);
    double t = (now() - t0) / iters, worst = 0;
    int all_ok = 0;
    MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all_ok ? worst : -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *label = argc > 1 ? argv[1] : "default";
    size_t max_bytes = argc > 2 ? strtoull(argv[2], NULL, 0) : (size_t)256 << 20;
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    weft_comm *wc = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_comm_init_mpi(MPI_COMM_WORLD, NULL, &wc, &d) != WEFT_OK) {
        fprintf(stderr, "bench_run_mpi: rank %d: %s\n", me, d.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double mc = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) mc = bench_memcpy_gbps();
    MPI_Barrier(MPI_COMM_WORLD);
    size_t max_count = max_bytes / sizeof(float);
    job j = {.wc = wc, .n = n};
    void *sp = NULL, *rp = NULL;
    if (weft_comm_alloc(wc, max_count * sizeof(float), &sp, &d) != WEFT_OK ||
        weft_comm_alloc(wc, max_count * sizeof(float), &rp, &d) != WEFT_OK) {
        fprintf(stderr, "bench_run_mpi: rank %d: weft_comm_alloc: %s\n", me, d.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    j.send = sp;
    j.recv = rp;
    for (size_t i = 0; i < max_count; i++)
        j.send[i] = (float)(me + 1);
    if (me == 0) {
        printf("# %d ranks, Open MPI allreduce: %s; float sum; busbw in GB/s\n", n, label);
        printf("# %10s %12s %12s %8s  %s\n", "bytes", "weft", "mpi", "weft/mpi", "weft path");
    }
    int bad = 0;
    double last_weft = 0;
    double factor = 2.0 * (n - 1) / n;
    for (size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
        j.count = bytes / sizeof(float);
        int iters = iterations(bytes);
        uint64_t fast0 = weft__region_fast_calls(wc), small0 = weft__region_small_calls(wc);
        double tw = timed(&j, 1, iters);
        const char *path = weft__region_small_calls(wc) > small0 ? "small"
                           : weft__region_fast_calls(wc) > fast0  ? "shared"
                                                                  : "ordinary";
        double tm = timed(&j, 0, iters);
        if (tw < 0 || tm < 0) bad = 1;
        double bw = tw > 0 ? (double)bytes / tw / 1e9 * factor : 0;
        double bm = tm > 0 ? (double)bytes / tm / 1e9 * factor : 0;
        last_weft = bw;
        if (me == 0) {
            printf("  %10zu %12.3f %12.3f %8.2f  %-8s%s\n", bytes, bw, bm, bm > 0 ? bw / bm : 0,
                   path, tw < 0 ? "  weft WRONG" : tm < 0 ? "  mpi WRONG" : "");
            printf("row %d %s %zu %.4f %.4f\n", n, label, bytes, bw, bm);
        }
    }
    if (me == 0) {
        printf("# single-core memcpy %.3f GB/s; weft busbw at %zu bytes / memcpy = %.2f\n", mc,
               max_bytes, mc > 0 ? last_weft / mc : 0);
        printf("memcpy %d %s %.4f %.4f\n", n, label, mc, last_weft);
    }
    weft_comm_free_mem(wc, sp);
    weft_comm_free_mem(wc, rp);
    weft_comm_free(wc);
    MPI_Finalize();
    return bad;
}
