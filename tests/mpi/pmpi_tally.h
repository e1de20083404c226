/* The tally the libweft_mpi.so test programs (pmpi_check.c, pmpi_layout.c)
 * keep and print: how many calls of each served collective they expect
 * weft to serve and MPI to be passed (the scripts compare these with the
 * library's finalize report), and how many checks ran and failed. Each
 * program includes it once. */
#ifndef WEFT_TESTS_PMPI_TALLY_H
#define WEFT_TESTS_PMPI_TALLY_H

#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>

enum {
    ALLREDUCE,
    ALLGATHER,
    RSB,
    BCAST,
    REDUCE,
    ALLTOALL,
    RS,
    ALLTOALLV,
    ALLTOALLW,
    IALLREDUCE,
    IALLGATHER,
    IRSB,
    IBCAST,
    IREDUCE,
    IALLTOALL,
    IRS,
    IALLTOALLV,
    IBARRIER,
    NCOLL
};
static const char *const names[NCOLL] = {"Allreduce",       "Allgather",  "Reduce_scatter_block",
                                         "Bcast",           "Reduce",     "Alltoall",
                                         "Reduce_scatter",  "Alltoallv",  "Alltoallw",
                                         "Iallreduce",      "Iallgather", "Ireduce_scatter_block",
                                         "Ibcast",          "Ireduce",    "Ialltoall",
                                         "Ireduce_scatter", "Ialltoallv", "Ibarrier"};
/* The calls on communicators of each kind but MPI_COMM_WORLD (whose counts
 * are the totals less these), in the library's order of kinds. */
enum { WORLD, DUP, SPLIT, SPLIT_TYPE, CREATE, OTHER, NKIND };
static const char *const kinds[NKIND] = {"world", "dup", "split", "split_type", "create", "other"};
static long served[NCOLL], passed[NCOLL];
static long kserved[NKIND][NCOLL], kpassed[NKIND][NCOLL];
static long failures, checks;
static int me, n;

/* A call expected on a communicator of kind kind (not WORLD), served or
 * passed. */
static void count_call(int kind, int coll, bool by_weft)
{
    (by_weft ? served : passed)[coll]++;
    (by_weft ? kserved : kpassed)[kind][coll]++;
}

/* Calls expected to go to MPI as small messages, which the library
 * counts in its totals and per reason but in no kind's line (it decides
 * them before it looks the communicator up). */
static long small_passed[NCOLL];
static inline void count_small(int coll)
{
    passed[coll]++;
    small_passed[coll]++;
}

/* Prints "PROG: rank R expects weft/MPI: ..." and, on rank 0, "PROG: N
 * ranks, C checks, F failed" (the totals summed with PMPI_Allreduce when
 * pmpi, bypassing the library, else with MPI_Allreduce, which the caller
 * has counted as served), finalizes MPI and returns the exit code: 0 when
 * checks ran and none failed. */
static int tally_finish(const char *prog, bool pmpi)
{
    char line[1024];
    size_t used = 0;
    for (int k = 0; k < NCOLL; k++)
        used += (size_t)snprintf(line + used, sizeof line - used, "%s%s %ld/%ld", k ? ", " : "",
                                 names[k], served[k], passed[k]);
    printf("%s: rank %d expects weft/MPI: %s\n", prog, me, line);
    for (int kd = 0; kd < NKIND; kd++) {
        used = 0;
        line[0] = '\0';
        for (int k = 0; k < NCOLL; k++) {
            long s = kserved[kd][k], p = kpassed[kd][k];
            if (kd == WORLD) {
                s = served[k];
                p = passed[k] - small_passed[k];
                for (int o = 1; o < NKIND; o++) {
                    s -= kserved[o][k];
                    p -= kpassed[o][k];
                }
            }
            if (s + p == 0)
                continue;
            used += (size_t)snprintf(line + used, sizeof line - used, "%s%s %ld/%ld",
                                     used ? ", " : "", names[k], s, p);
        }
        if (used)
            printf("%s: rank %d expects on %s: %s\n", prog, me, kinds[kd], line);
    }
    long mine[2] = {failures, checks}, all[2] = {0, 0};
    if (pmpi)
        PMPI_Allreduce(mine, all, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    else
        MPI_Allreduce(mine, all, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("%s: %d ranks, %ld checks, %ld failed\n", prog, n, all[1], all[0]);
    MPI_Finalize();
    return all[0] == 0 && all[1] > 0 ? 0 : 1;
}

#endif
