/* Calls whose legal arguments differ between ranks, for libweft_mpi.so
 * (tests/mpi/pmpi_case.sh, CTest pmpi_decide_test): whether weft serves a
 * call must be one decision all ranks reach together.
 *
 * The first version decided MPI_Alltoallv alone on each rank: a rank with a
 * displacement of -1 on a block of no data passed the call to MPI while the
 * others entered weft, and the job hung. MPI ignores the displacement of
 * an empty block, and allows negative displacements (the buffer may point
 * into an array).
 *
 * MPI_Alltoallv, MPI_Ialltoallv and MPI_Alltoallw with, per rank: blocks
 * below the buffer pointer (negative displacements, even ranks) or above
 * it (odd ranks), displacement -1 or -7 on empty blocks (ranks 1 and 2), a
 * strided receive type (odd ranks, packed); with counts that include
 * zeros, all zero, and none to or from rank 0. Every element and every slot
 * outside the blocks is checked; all are served. Then calls passed to MPI
 * for known reasons (a user operator, MPI_COMM_SELF), which the library's
 * finalize counts per reason: the program prints the lines it expects.
 * Usage: pmpi_decide [--passed]  (--passed: only the passed calls) */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi_tally.h"

#define HALF 4096 /* ints either side of the buffer pointer */
#define UNSET -5

static void expect(bool ok, const char *what, long i, long got, long want)
{
    checks++;
    if (ok)
        return;
    failures++;
    if (failures <= 10)
        fprintf(stderr, "pmpi_decide: rank %d: %s: slot %ld is %ld, want %ld\n", me, what, i, got,
                want);
}

/* Counts of each pattern: elements rank src sends rank dst. */
static int count_of(int pattern, int src, int dst)
{
    switch (pattern) {
    case 0:
        return (src + dst) % 3; /* zeros among them */
    case 1:
        return 0;
    default:
        return src == 0 || dst == 0 ? 0 : 1 + (src * dst) % 2;
    }
}

static int value(int src, int dst, int i)
{
    return src * 10000 + dst * 100 + i;
}

/* Displacements of this rank's blocks (in elements), in rank order of
 * blocks: below the pointer on even ranks, above on odd ones; empty blocks
 * -1 on rank 1, -7 on rank 2, else what the layout gives. */
static void layout(const int *counts, int *displs)
{
    int at = me % 2 ? 1 : -1;
    for (int j = 0; j < n; j++) {
        if (me % 2) {
            displs[j] = at;
            at += counts[j] + 1;
        } else {
            at -= counts[j] + 1;
            displs[j] = at;
        }
        if (counts[j] == 0 && (me == 1 || me == 2))
            displs[j] = me == 1 ? -1 : -7;
    }
}

/* kind: 0 MPI_Alltoallv, 1 MPI_Ialltoallv, 2 MPI_Alltoallw. */
static void check_v(int pattern, int kind)
{
    int *sarr = malloc(2 * HALF * sizeof(int)), *rarr = malloc(2 * HALF * sizeof(int));
    int *sbase = sarr + HALF, *rbase = rarr + HALF;
    int scounts[64], sdispls[64], rcounts[64], rdispls[64], sbytes[64], rbytes[64];
    MPI_Datatype types[64];
    for (int i = 0; i < 2 * HALF; i++)
        sarr[i] = rarr[i] = UNSET;
    for (int j = 0; j < n; j++) {
        scounts[j] = count_of(pattern, me, j);
        rcounts[j] = count_of(pattern, j, me);
        types[j] = MPI_INT;
    }
    layout(scounts, sdispls);
    layout(rcounts, rdispls);
    /* Odd ranks receive into every other int (packed), but not for
     * MPI_Alltoallw, which the library serves with one predefined type. */
    int stride = me % 2 && kind != 2 ? 2 : 1;
    MPI_Datatype every_other;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every_other);
    MPI_Type_commit(&every_other);
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < scounts[j]; i++)
            sbase[sdispls[j] + i] = value(me, j, i);
        sbytes[j] = sdispls[j] * (int)sizeof(int);
        rbytes[j] = rdispls[j] * stride * (int)sizeof(int);
    }
    MPI_Request req;
    if (kind == 2) {
        MPI_Alltoallw(sbase, scounts, sbytes, types, rbase, rcounts, rbytes, types, MPI_COMM_WORLD);
    } else if (kind == 1) {
        MPI_Ialltoallv(sbase, scounts, sdispls, MPI_INT, rbase, rcounts, rdispls,
                       stride == 2 ? every_other : MPI_INT, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        MPI_Alltoallv(sbase, scounts, sdispls, MPI_INT, rbase, rcounts, rdispls,
                      stride == 2 ? every_other : MPI_INT, MPI_COMM_WORLD);
    }
    served[kind == 2 ? ALLTOALLW : kind == 1 ? IALLTOALLV : ALLTOALLV]++;
    char what[96];
    snprintf(what, sizeof what, "%s, counts %d",
             kind == 2   ? "MPI_Alltoallw"
             : kind == 1 ? "MPI_Ialltoallv"
                         : "MPI_Alltoallv",
             pattern);
    char *covered = calloc(2 * HALF, 1);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < rcounts[j]; i++) {
            long at = (long)(rdispls[j] + i) * stride;
            covered[HALF + at] = 1;
            expect(rbase[at] == value(j, me, i), what, at, rbase[at], value(j, me, i));
        }
    for (long i = 0; i < 2 * HALF; i++)
        if (!covered[i])
            expect(rarr[i] == UNSET, what, i - HALF, rarr[i], UNSET);
    free(covered);
    MPI_Type_free(&every_other);
    free(sarr);
    free(rarr);
}

static void my_sum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* Calls passed to MPI, for the counters per reason. */
static void check_passed(void)
{
    MPI_Op op;
    MPI_Op_create(my_sum, 1, &op);
    for (int k = 0; k < 3; k++) {
        int a = me + k, s = -1;
        MPI_Allreduce(&a, &s, 1, MPI_INT, op, MPI_COMM_WORLD);
        passed[ALLREDUCE]++;
        expect(s == n * (n - 1) / 2 + n * k, "MPI_Allreduce with a user operator", k, s,
               n * (n - 1) / 2 + n * k);
    }
    MPI_Op_free(&op);
    for (int k = 0; k < 2; k++) {
        int a = me, s = -1;
        MPI_Allreduce(&a, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
        count_call(OTHER, ALLREDUCE, false);
        expect(s == me, "MPI_Allreduce on MPI_COMM_SELF", k, s, me);
    }
    int b = me;
    MPI_Bcast(&b, 1, MPI_INT, 0, MPI_COMM_SELF);
    count_call(OTHER, BCAST, false);
    expect(b == me, "MPI_Bcast on MPI_COMM_SELF", 0, b, me);
    printf("pmpi_decide: rank %d expects log: MPI_Allreduce passed to MPI 3 times (operator weft "
           "does not have)\n",
           me);
    printf("pmpi_decide: rank %d expects log: MPI_Allreduce passed to MPI 2 times (no weft "
           "communicator)\n",
           me);
    printf("pmpi_decide: rank %d expects log: MPI_Bcast passed to MPI 1 time (no weft "
           "communicator)\n",
           me);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n > 64) {
        if (me == 0)
            fprintf(stderr, "pmpi_decide: at most 64 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    bool only_passed = argc > 1 && strcmp(argv[1], "--passed") == 0;
    for (int pattern = 0; !only_passed && pattern < 3; pattern++)
        for (int kind = 0; kind < 3; kind++)
            check_v(pattern, kind);
    check_passed();
    served[ALLREDUCE]++; /* the tally below */
    return tally_finish("pmpi_decide", false);
}
