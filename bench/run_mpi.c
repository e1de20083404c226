/* weft_allreduce against MPI_Allreduce on this host, under mpirun.
 *
 * Both run on the same buffers: with BUFFERS "shared" (the default)
 * allocated with weft_comm_alloc (memory every rank on this host maps, so
 * weft's allreduce runs single-pass on it: coll_shared.c), with "ordinary"
 * private memory from aligned_alloc, as unmodified MPI programs and `weft
 * perf` have; each size's line names the path weft took: "small" for the
 * eager path of coll_small.c, "pipe" for the pipelined eager path of
 * coll_eager.c, "shared", "cma" for the single-copy path
 * of coll_cma.c, or "ordinary" (the transport's slots)), float sum, rank r contributing r+1 so
 * every result is exact and checked), sizes 1 KiB to the maximum (default 256 MiB) in x4 steps;
 * each size is timed as the slowest rank's time over a few iterations (fewer for large sizes) after
 * 1 + iterations/5 warm-up calls. Bus bandwidth is nccl-tests': bytes / time * 2(n-1)/n. At the
 * largest size it then compares weft with the single-core memcpy bound (memcpy_bound.h) in rounds
 * (paired_ratio) and prints the median ratio next to the ceiling any allreduce has when n ranks
 * share c cores. Lines starting "row" and "memcpy" are for bench/run.sh. Never fails on time; exits
 * 1 only when a result is wrong or weft cannot start. Usage: mpirun -np N bench_run_mpi [LABEL
 * [MAX_BYTES [shared|ordinary]]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "memcpy_bound.h"
#include "parse_bytes.h"
#include "run/transport/shm/region.h"
#include "weft/comm_mpi.h"

static int iterations(size_t bytes)
{
    if (bytes >= (64u << 20))
        return 2;
    if (bytes >= (4u << 20))
        return 5;
    if (bytes >= (256u << 10))
        return 20;
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

/* Waits for every rank without holding a core: the ranks poll a
 * non-blocking barrier every 100 us, so rank 0 times its copies on a core
 * of its own even when ranks outnumber cores (a blocking MPI_Barrier spins
 * or yields, and a yielding rank still takes turns on the core). */
static void quiet_barrier(void)
{
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    int done = 0;
    struct timespec nap = {0, 100000};
    for (;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        nanosleep(&nap, NULL);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* After rounds that overwrote the result with copies: one more weft call,
 * its result checked; true when every rank's rounds and check were ok. */
static int rerun_ok(const job *j, int ok)
{
    ok = ok && one(j, 1);
    float want = (float)j->n * (float)(j->n + 1) / 2;
    ok = ok && j->recv[0] == want && j->recv[j->count - 1] == want;
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all_ok;
}

/* One weft call after a barrier: the slowest rank's seconds; *ok false on
 * an error. */
static double timed_once(const job *j, int *ok)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now();
    *ok = one(j, 1);
    double t = bench_now() - t0, worst = 0;
    MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

#define MAX_ROUNDS 16

/* weft's busbw against the memcpy bound at j->count floats, in rounds:
 * each round times one weft allreduce (the slowest rank's time), then
 * rank 0 alone copies the same bytes from the sendbuf into the recvbuf (the
 * shared memory the collective runs on) while the others sleep. The
 * machine's memory bandwidth drifts by a third from minute to minute on the
 * development VM, and within a round both halves see the same. On rank 0:
 * the median over rounds of weft's busbw / the bound, and in *bw and *mc
 * the medians of each; -1 on an error or a wrong result (checked after the
 * last round). */
static double paired_ratio(const job *j, int rounds, double factor, double *bw, double *mc)
{
    double r[MAX_ROUNDS], w[MAX_ROUNDS], m[MAX_ROUNDS];
    size_t bytes = j->count * sizeof(float);
    int me, ok = one(j, 1);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int i = 0; i < rounds && ok; i++) {
        double worst = timed_once(j, &ok);
        quiet_barrier();
        m[i] = me == 0 ? bench_copy_once_gbps(j->recv, j->send, bytes) : 0;
        quiet_barrier();
        w[i] = (double)bytes / worst / 1e9 * factor;
        r[i] = m[i] > 0 ? w[i] / m[i] : 0;
    }
    if (!rerun_ok(j, ok))
        return -1;
    *bw = median(w, rounds);
    *mc = median(m, rounds);
    return median(r, rounds);
}

/* The ceiling of any allreduce of j->count floats on this host: it reads
 * the n inputs and writes the n outputs, the memory traffic of n copies,
 * so it takes at least as long as every rank copying its sendbuf into its
 * recvbuf at once (the slowest rank's time; the faster of memcpy and
 * streaming stores). Unlike the single-core bound this counts what the
 * cores share, the memory bandwidth, at sizes beyond the caches. In rounds,
 * each a timed weft call then the copies; on rank 0 the median of weft's
 * busbw / the ceiling's busbw, and in *ceil the ceiling's median busbw; -1
 * on an error (the result is checked after the last round). */
static double all_copy_ratio(const job *j, int rounds, double factor, double *ceil)
{
    double r[MAX_ROUNDS], c[MAX_ROUNDS];
    size_t bytes = j->count * sizeof(float);
    int ok = one(j, 1);
    for (int i = 0; i < rounds && ok; i++) {
        double worst = timed_once(j, &ok);
        double best = 0;
        for (int nt = 0; nt < 2; nt++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double c0 = bench_now();
            if (nt)
                weft__copy_nt(j->recv, j->send, bytes);
            else
                memcpy(j->recv, j->send, bytes);
            double ct = bench_now() - c0, cworst = 0;
            MPI_Allreduce(&ct, &cworst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (nt == 0 || cworst < best)
                best = cworst;
        }
        c[i] = best > 0 ? (double)bytes / best / 1e9 * factor : 0;
        r[i] = c[i] > 0 ? (double)bytes / worst / 1e9 * factor / c[i] : 0;
    }
    if (!rerun_ok(j, ok))
        return -1;
    *ceil = median(c, rounds);
    return median(r, rounds);
}

/* About 100 ms of 1 KiB allreduces, both libraries alternately, before
 * anything is timed: measured right after setup, the first size ran 1.5-6x
 * slower for whichever library went first (weft at 1 KiB, 2 ranks, under
 * chrt -f 10: 0.7-2.9 GB/s cold, 4.3-4.5 after a warm-up; the cores of
 * this VM are slow for a while after being idle). */
static void warm_up(const job *j0)
{
    job j = *j0;
    j.count = 1024 / sizeof(float);
    double end = bench_now() + 0.1;
    int go = 1;
    while (go) {
        for (int i = 0; i < 100; i++) {
            one(&j, 1);
            one(&j, 0);
        }
        int mine = bench_now() < end, all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        go = all;
    }
}

/* Seconds per call, the slowest rank's; -1 on an error or a wrong result. */
static double timed(const job *j, int use_weft, int iters)
{
    memset(j->recv, 0, j->count * sizeof(float));
    int ok = 1;
    for (int i = 0; i < 1 + iters / 5 && ok; i++) /* warm-up, as nccl-tests does */
        ok = one(j, use_weft);
    float want = (float)j->n * (float)(j->n + 1) / 2;
    ok = ok && j->recv[0] == want && j->recv[j->count / 2] == want && j->recv[j->count - 1] == want;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now();
    for (int i = 0; i < iters && ok; i++)
        ok = one(j, use_weft);
    double t = (bench_now() - t0) / iters, worst = 0;
    int all_ok = 0;
    MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all_ok ? worst : -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *label = argc > 1 ? argv[1] : "default";
    size_t max_bytes = argc > 2 ? bench_parse_bytes(argv[2]) : (size_t)256 << 20;
    int ordinary = argc > 3 && strcmp(argv[3], "ordinary") == 0;
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    /* The warm-up and the first size are 1 KiB (a max of "4M" was read as
     * 4 bytes once, and the 1 KiB calls overran the buffers). */
    if (max_bytes < 1024) {
        if (me == 0)
            fprintf(stderr, "bench_run_mpi: MAX_BYTES '%s': at least 1024 (K, M, G allowed)\n",
                    argv[2]);
        MPI_Finalize();
        return 2;
    }
    weft_comm *wc = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_comm_init_mpi(MPI_COMM_WORLD, NULL, &wc, &d) != WEFT_OK) {
        fprintf(stderr, "bench_run_mpi: rank %d: %s\n", me, d.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t max_count = max_bytes / sizeof(float);
    job j = {.wc = wc, .n = n};
    void *sp = NULL, *rp = NULL;
    size_t alloc_bytes = (max_count * sizeof(float) + 63) / 64 * 64;
    if (ordinary) {
        sp = aligned_alloc(64, alloc_bytes);
        rp = aligned_alloc(64, alloc_bytes);
        if (!sp || !rp) {
            fprintf(stderr, "bench_run_mpi: rank %d: out of memory\n", me);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    } else if (weft_comm_alloc(wc, max_count * sizeof(float), &sp, &d) != WEFT_OK ||
               weft_comm_alloc(wc, max_count * sizeof(float), &rp, &d) != WEFT_OK) {
        fprintf(stderr, "bench_run_mpi: rank %d: weft_comm_alloc: %s\n", me, d.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    j.send = sp;
    j.recv = rp;
    for (size_t i = 0; i < max_count; i++)
        j.send[i] = (float)(me + 1);
    if (me == 0) {
        printf("# %d ranks, Open MPI allreduce: %s; float sum; %s buffers; busbw in GB/s\n", n,
               label, ordinary ? "ordinary" : "shared");
        printf("# %10s %12s %12s %8s  %s\n", "bytes", "weft", "mpi", "weft/mpi", "weft path");
    }
    int bad = 0;
    double factor = 2.0 * (n - 1) / n;
    warm_up(&j);
    for (size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
        j.count = bytes / sizeof(float);
        int iters = iterations(bytes);
        uint64_t fast0 = weft__region_fast_calls(wc), small0 = weft__region_small_calls(wc);
        uint64_t cma0 = weft__region_cma_calls(wc), pipe0 = weft__region_pipe_calls(wc);
        double tw = timed(&j, 1, iters);
        const char *path = weft__region_small_calls(wc) > small0 ? "small"
                           : weft__region_fast_calls(wc) > fast0 ? "shared"
                           : weft__region_cma_calls(wc) > cma0   ? "cma"
                           : weft__region_pipe_calls(wc) > pipe0 ? "pipe"
                                                                 : "ordinary";
        double tm = timed(&j, 0, iters);
        if (tw < 0 || tm < 0)
            bad = 1;
        double bw = tw > 0 ? (double)bytes / tw / 1e9 * factor : 0;
        double bm = tm > 0 ? (double)bytes / tm / 1e9 * factor : 0;
        if (me == 0) {
            printf("  %10zu %12.3f %12.3f %8.2f  %-8s%s\n", bytes, bw, bm, bm > 0 ? bw / bm : 0,
                   path,
                   tw < 0   ? "  weft WRONG"
                   : tm < 0 ? "  mpi WRONG"
                            : "");
            printf("row %d %s %zu %.4f %.4f %s\n", n, label, bytes, bw, bm,
                   ordinary ? "ordinary" : "shared");
        }
    }
    /* Any allreduce reads n buffers and writes n: n copies' worth of bytes,
     * spread at best over min(n, cores) cores, against the 2(n-1)/n buffers
     * busbw counts. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    double busy = cores > 0 && cores < n ? (double)cores : (double)n;
    double ceiling = factor * busy / n, pbw = 0, pmc = 0;
    j.count = max_count;
    double ratio = paired_ratio(&j, 5, factor, &pbw, &pmc);
    if (ratio < 0)
        bad = 1;
    double all_ceil = 0, all_ratio = all_copy_ratio(&j, 5, factor, &all_ceil);
    if (all_ratio < 0)
        bad = 1;
    if (me == 0) {
        printf("# at %zu bytes, 5 rounds of one weft call then rank 0 alone copying the bytes "
               "(faster of memcpy and streaming stores): weft busbw %.3f GB/s, copy %.3f GB/s, "
               "median ratio %.2f%s; ceiling with %d ranks on %ld cores %.2f\n",
               max_bytes, pbw, pmc, ratio, ratio < 0 ? " WRONG" : "", n, cores, ceiling);
        printf("# and 5 rounds of one weft call then every rank copying its bytes at once (the "
               "memory traffic of any allreduce): ceiling busbw %.3f GB/s, weft / ceiling %.2f%s\n",
               all_ceil, all_ratio, all_ratio < 0 ? " WRONG" : "");
        printf("memcpy %d %s %.4f %.4f %.4f %.4f %s %.4f %.4f\n", n, label, pmc, pbw, ratio,
               ceiling, ordinary ? "ordinary" : "shared", all_ceil, all_ratio);
    }
    if (ordinary) {
        free(sp);
        free(rp);
    } else {
        weft_comm_free_mem(wc, sp);
        weft_comm_free_mem(wc, rp);
    }
    weft_comm_free(wc);
    MPI_Finalize();
    return bad;
}
