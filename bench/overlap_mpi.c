/* Overlap of one MPI_Iallreduce with computation, as osu_iallreduce
 * defines it (OSU micro-benchmarks' non-blocking collectives report
 * overlap = 100 * (1 - (total - compute) / pure), at least 0): pure is the
 * mean time of MPI_Iallreduce + MPI_Wait; then each iteration issues the
 * call, computes for about pure microseconds (calling MPI_Test between
 * pieces of work when TEST is 1, so that a library that progresses in
 * MPI_Test can; TEST 2 "computes" by sleeping in pieces of 50 us and
 * calls nothing: a rank whose CPU is free meanwhile, as while a GPU kernel
 * or I/O runs, which shows the progress a library makes on its own where
 * the compute loops of TEST 0 and 1 keep every core busy), and waits. Float sum of BYTES bytes,
 * ITERS timed iterations after 5 warm-up ones; rank 0 prints the lowest overlap over the ranks. Run
 * plainly and with LD_PRELOAD=libweft_mpi.so (docs/interop.md, "Non-blocking collectives:
 * progress"). Usage: mpirun -np N bench_overlap_mpi BYTES ITERS TEST */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static volatile double sink;
/* Computes for us microseconds, testing r between pieces when test is 1,
 * sleeping when it is 2. */
static void work(double us, MPI_Request *r, int test)
{
    double t0 = MPI_Wtime();
    int flag;
    while ((MPI_Wtime() - t0) * 1e6 < us) {
        if (test == 2) {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
            continue;
        }
        for (int i = 0; i < 200; i++)
            sink += i * 0.5;
        if (test && r)
            MPI_Test(r, &flag, MPI_STATUS_IGNORE);
    }
}
int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: bench_overlap_mpi BYTES ITERS TEST\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    size_t count = (size_t)atol(argv[1]) / 4;
    int iters = atoi(argv[2]), test = atoi(argv[3]);
    float *a = malloc(count * 4), *b = malloc(count * 4);
    for (size_t i = 0; i < count; i++)
        a[i] = 1;
    MPI_Request r;
    double pure = 0, comp = 0, total = 0;
    for (int k = 0; k < iters + 5; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Iallreduce(a, b, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        double t1 = MPI_Wtime();
        if (k >= 5)
            pure += t1 - t0;
    }
    pure /= iters;
    for (int k = 0; k < iters; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Iallreduce(a, b, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &r);
        double t1 = MPI_Wtime();
        work(pure * 1e6, &r, test);
        double t2 = MPI_Wtime();
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        double t3 = MPI_Wtime();
        total += t3 - t0;
        comp += t2 - t1;
    }
    total /= iters;
    comp /= iters;
    double ov = 100 * (1 - (total - comp) / pure);
    double m[2] = {ov, total}, mn[2];
    MPI_Reduce(m, mn, 2, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("bytes %zu test %d: pure %.1f us, compute %.1f us, total %.1f us, overlap %.0f%%\n",
               count * 4, test, pure * 1e6, comp * 1e6, total * 1e6, ov < 0 ? 0 : ov);
    MPI_Finalize();
    return 0;
}
