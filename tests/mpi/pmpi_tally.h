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

enum { ALLREDUCE, ALLGATHER, RSB, BCAST, REDUCE, ALLTOALL, NCOLL };
static const char *const names[NCOLL] = {"Allreduce", "Allgather", "Reduce_scatter_block",
                                         "Bcast",     "Reduce",    "Alltoall"};
static long served[NCOLL], passed[NCOLL];
static long failures, checks;
static int me, n;

/* Prints "PROG: rank R expects weft/MPI: ..." and, on rank 0, "PROG: N
 * ranks, C checks, F failed" (the totals summed with PMPI_Allreduce when
 * pmpi, bypassing the library, else with MPI_Allreduce, which the caller
 * has counted as served), finalizes MPI and returns the exit code: 0 when
 * checks ran and none failed. */
static int tally_finish(const char *prog, bool pmpi)
{
    char line[512];
    size_t used = 0;
    for (int k = 0; k < NCOLL; k++)
        used += (size_t)snprintf(line + used, sizeof line - used, "%s%s %ld/%ld", k ? ", " : "",
                                 names[k], served[k], passed[k]);
    printf("%s: rank %d expects weft/MPI: %s\n", prog, me, line);
    long mine[2] = {failures, checks}, all[2] = {0, 0};
    if (pmpi)
        PMPI_Allreduce(mine, all, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    else
        MPI_Allreduce(mine, all, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) printf("%s: %d ranks, %ld checks, %ld failed\n", prog, n, all[1], all[0]);
    MPI_Finalize();
    return all[0] == 0 && all[1] > 0 ? 0 : 1;
}

#endif
