/* Small-message latency of the collectives libweft_mpi.so serves, timed as
 * OSU's micro-benchmarks time them (osu_allreduce & co.: after a barrier,
 * ITERS back-to-back calls, the mean per call on each rank, the slowest
 * rank's mean reported), for runs with and without LD_PRELOAD
 * (bench/lat.sh puts the two side by side). Collectives: allreduce (float
 * sum), reduce (float sum, root 0), bcast (root 0), allgather, alltoall,
 * alltoallv (equal blocks), reduce_scatter_block (float sum); BYTES is the
 * per-rank message (OSU's "size": the allreduce/bcast buffer, one block of
 * allgather/alltoall/alltoallv, each rank's result block of
 * reduce_scatter_block); BYTES 0 makes every count 0 (calls of no data;
 * other sizes below 4 are 4). One line per collective and size:
 * "COLL BYTES: US", to 3 decimals (a call of no data takes a few
 * hundredths of a microsecond). Never fails on time.
 * LAT_COLLS (environment), a comma-separated list of the names above, times
 * only those (e.g. LAT_COLLS=alltoall,alltoallv); unset, all of them.
 * Usage: mpirun -np N bench_lat_mpi ITERS BYTES... */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ALLREDUCE, REDUCE, BCAST, ALLGATHER, ALLTOALL, ALLTOALLV, RSB, NCOLL };
static const char *const names[NCOLL] = {
    "allreduce", "reduce", "bcast", "allgather", "alltoall", "alltoallv", "reduce_scatter_block"};

static void call(int k, size_t bytes, int n, char *a, char *b, int *cnt, int *dsp)
{
    int count = (int)bytes;
    switch (k) {
    case ALLREDUCE:
        MPI_Allreduce(a, b, count / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case REDUCE:
        MPI_Reduce(a, b, count / 4, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
    case BCAST:
        MPI_Bcast(a, count, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case ALLGATHER:
        MPI_Allgather(a, count, MPI_BYTE, b, count, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case ALLTOALL:
        MPI_Alltoall(a, count, MPI_BYTE, b, count, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case ALLTOALLV:
        for (int j = 0; j < n; j++) {
            cnt[j] = count;
            dsp[j] = j * count;
        }
        MPI_Alltoallv(a, cnt, dsp, MPI_BYTE, b, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD);
        break;
    default:
        MPI_Reduce_scatter_block(a, b, count / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    }
}

/* Whether LAT_COLLS (unset: all) names collective k. */
static int wanted(int k)
{
    const char *list = getenv("LAT_COLLS");
    if (!list || !*list)
        return 1;
    size_t len = strlen(names[k]);
    for (const char *p = list; *p;) {
        size_t w = strcspn(p, ",");
        if (w == len && strncmp(p, names[k], len) == 0)
            return 1;
        p += w + (p[w] == ',');
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_lat_mpi ITERS BYTES...\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int iters = atoi(argv[1]);
    for (int s = 2; s < argc; s++) {
        size_t bytes = (size_t)atol(argv[s]);
        if (bytes < 4 && bytes != 0)
            bytes = 4;
        char *a = calloc((size_t)n, bytes + 4), *b = calloc((size_t)n, bytes + 4);
        int *cnt = malloc(2 * (size_t)n * sizeof *cnt), *dsp = cnt + n;
        for (int k = 0; k < NCOLL; k++) {
            if (!wanted(k))
                continue;
            for (int i = 0; i < iters / 10 + 10; i++) /* warm-up, as OSU's */
                call(k, bytes, n, a, b, cnt, dsp);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++)
                call(k, bytes, n, a, b, cnt, dsp);
            double mine = (MPI_Wtime() - t0) / iters * 1e6, worst = 0;
            PMPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (me == 0)
                printf("%s %zu: %.3f\n", names[k], bytes, worst);
        }
        free(a);
        free(b);
        free(cnt);
    }
    MPI_Finalize();
    return 0;
}
