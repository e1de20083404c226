/* Small messages passed to MPI by libweft_mpi.so (tests/mpi/pmpi_case.sh,
 * CTest pmpi_small_test): every rank must pass or serve each call alike,
 * without communicating, though MPI lets the ranks describe the same bytes
 * with different counts and datatypes, and results must be exact either
 * way.
 *
 * The program sets WEFT_PMPI_SMALL=512 before MPI_Init (every collective
 * passes calls below 512 bytes, at any number of ranks), then, at sizes on
 * both sides of 512 bytes:
 *  - MPI_Bcast where the root sends MPI_INTs and the others receive a
 *    strided vector type (count 1, or count/2 of a pair type), so count
 *    differs between ranks but count x size does not; MPI_Ibcast the same;
 *  - MPI_Allgather and MPI_Alltoall sending one element of a contiguous
 *    type of k ints and receiving k MPI_INTs on even ranks, the reverse on
 *    odd ones;
 *  - MPI_Allreduce, MPI_Reduce, MPI_Reduce_scatter_block, and
 *    MPI_Reduce_scatter with unequal counts (judged by the vector over the
 *    number of ranks);
 *  - MPI_Alltoallv with blocks that differ between ranks: at 2 ranks the
 *    larger block between the two decides (rank 0's self block is large,
 *    rank 1's blocks small, or the reverse); at 3 or more, a run of small
 *    calls, then calls where only rank 1 sends one large block, then small
 *    ones again: the communicator's mode follows the agreed largest block
 *    at the agreement points the library documents (calls 0, 1, 3, 7, ...
 *    while unchanged, at most every 64th; the next call after a change),
 *    which this program models to expect its counts; MPI_Ialltoallv
 *    (small: passed at 2 ranks, served at 3 or more).
 * Every element is checked; the program prints the counts it expects (the
 * small ones in the totals only) and the reason lines of the finalize
 * report. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi_tally.h"

#define LIMIT 512 /* bytes, WEFT_PMPI_SMALL */
#define GAP_MAX 64

static void expect(bool ok, const char *what, long i, long got, long want)
{
    checks++;
    if (ok)
        return;
    failures++;
    if (failures <= 10)
        fprintf(stderr, "pmpi_small: rank %d: %s: element %ld is %ld, want %ld\n", me, what, i, got,
                want);
}

/* Expected as served (on MPI_COMM_WORLD) or passed as small. */
static void tally(int coll, long bytes)
{
    if (bytes < LIMIT)
        count_small(coll);
    else
        served[coll]++;
}

static void check_bcast(int ints, bool nonblocking)
{
    int *buf = calloc((size_t)ints * 2, sizeof *buf);
    MPI_Datatype strided;
    /* Every other int of buf: the same signature as ints MPI_INTs. */
    MPI_Type_vector(ints, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    MPI_Request req;
    if (me == 0) {
        for (int i = 0; i < ints; i++)
            buf[i] = 7 * i + 1;
        if (nonblocking)
            MPI_Ibcast(buf, ints, MPI_INT, 0, MPI_COMM_WORLD, &req);
        else
            MPI_Bcast(buf, ints, MPI_INT, 0, MPI_COMM_WORLD);
    } else if (nonblocking) {
        MPI_Ibcast(buf, 1, strided, 0, MPI_COMM_WORLD, &req);
    } else {
        MPI_Bcast(buf, 1, strided, 0, MPI_COMM_WORLD);
    }
    if (nonblocking)
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int i = 0; i < ints; i++)
        expect(buf[me == 0 ? i : 2 * i] == 7 * i + 1, "bcast", i, buf[me == 0 ? i : 2 * i],
               7 * i + 1);
    for (int i = 0; me != 0 && i < ints; i++)
        expect(buf[2 * i + 1] == 0, "bcast gap", i, buf[2 * i + 1], 0);
    tally(nonblocking ? IBCAST : BCAST, 4L * ints);
    MPI_Type_free(&strided);
    free(buf);
}

/* Allgather (alltoall false) or alltoall of blocks of k ints: even ranks
 * send one element of a contiguous type of k ints and receive MPI_INTs,
 * odd ranks the reverse. */
static void check_move(int k, bool alltoall)
{
    MPI_Datatype block;
    MPI_Type_contiguous(k, MPI_INT, &block);
    MPI_Type_commit(&block);
    int *in = malloc((size_t)n * k * sizeof *in), *out = malloc((size_t)n * k * sizeof *out);
    for (int i = 0; i < n * k; i++) {
        in[i] = me * 100000 + i; /* alltoall: block j goes to rank j */
        out[i] = -1;
    }
    bool even = me % 2 == 0;
    if (alltoall)
        MPI_Alltoall(in, even ? 1 : k, even ? block : MPI_INT, out, even ? k : 1,
                     even ? MPI_INT : block, MPI_COMM_WORLD);
    else
        MPI_Allgather(in, even ? 1 : k, even ? block : MPI_INT, out, even ? k : 1,
                      even ? MPI_INT : block, MPI_COMM_WORLD);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < k; i++) {
            int want = alltoall ? j * 100000 + me * k + i : j * 100000 + i;
            expect(out[j * k + i] == want, alltoall ? "alltoall" : "allgather", j * k + i,
                   out[j * k + i], want);
        }
    tally(alltoall ? ALLTOALL : ALLGATHER, 4L * k);
    MPI_Type_free(&block);
    free(in);
    free(out);
}

static void check_reductions(int ints)
{
    int *in = malloc((size_t)n * ints * sizeof *in), *out = malloc((size_t)n * ints * sizeof *out);
    for (int i = 0; i < n * ints; i++)
        in[i] = me + i;
    /* Sum over ranks of (rank + i). */
    long base = (long)n * (n - 1) / 2;
    MPI_Allreduce(in, out, ints, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < ints; i++)
        expect(out[i] == base + (long)n * i, "allreduce", i, out[i], base + (long)n * i);
    tally(ALLREDUCE, 4L * ints);
    memset(out, 0, (size_t)n * ints * sizeof *out);
    MPI_Reduce(in, out, ints, MPI_INT, MPI_SUM, n - 1, MPI_COMM_WORLD);
    for (int i = 0; me == n - 1 && i < ints; i++)
        expect(out[i] == base + (long)n * i, "reduce", i, out[i], base + (long)n * i);
    tally(REDUCE, 4L * ints);
    MPI_Reduce_scatter_block(in, out, ints, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < ints; i++) {
        long want = base + (long)n * (me * ints + i);
        expect(out[i] == want, "reduce_scatter_block", i, out[i], want);
    }
    tally(RSB, 4L * ints);
    /* Unequal counts: rank r gets (r + 1) x ints / n (at least 1), judged
     * by the vector over n. */
    int *counts = malloc((size_t)n * sizeof *counts), total = 0, before = 0;
    for (int r = 0; r < n; r++) {
        counts[r] = (r + 1) * ints / n > 0 ? (r + 1) * ints / n : 1;
        if (r == me)
            before = total;
        total += counts[r];
    }
    if (total <= n * ints) {
        MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < counts[me]; i++) {
            long want = base + (long)n * (before + i);
            expect(out[i] == want, "reduce_scatter", i, out[i], want);
        }
        tally(RS, 4L * total / n);
    }
    free(counts);
    free(in);
    free(out);
}

/* One alltoallv where rank src sends cnt(src, dst) ints to rank dst;
 * nonblocking: MPI_Ialltoallv. */
static void alltoallv(int (*cnt)(int, int, int), int phase, bool nonblocking)
{
    int *sc = malloc(4 * (size_t)n * sizeof *sc), *sd = sc + n, *rc = sc + 2 * n, *rd = sc + 3 * n;
    int st = 0, rt = 0;
    for (int j = 0; j < n; j++) {
        sc[j] = cnt(phase, me, j);
        rc[j] = cnt(phase, j, me);
        sd[j] = st;
        rd[j] = rt;
        st += sc[j];
        rt += rc[j];
    }
    int *in = malloc(((size_t)st + 1) * sizeof *in), *out = malloc(((size_t)rt + 1) * sizeof *out);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < sc[j]; i++)
            in[sd[j] + i] = me * 1000000 + j * 10000 + i;
    for (int i = 0; i < rt; i++)
        out[i] = -1;
    if (nonblocking) {
        MPI_Request req;
        MPI_Ialltoallv(in, sc, sd, MPI_INT, out, rc, rd, MPI_INT, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        MPI_Alltoallv(in, sc, sd, MPI_INT, out, rc, rd, MPI_INT, MPI_COMM_WORLD);
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < rc[j]; i++) {
            long want = j * 1000000L + me * 10000L + i;
            expect(out[rd[j] + i] == want, "alltoallv", rd[j] + i, out[rd[j] + i], want);
        }
    free(in);
    free(out);
    free(sc);
}

/* 2 ranks, phase 0: rank 0 keeps 300 ints and sends 1; rank 1 sends 200
 * (800 B: served). Phase 1: rank 0 keeps 1000 and sends 100 (400 B), rank
 * 1 sends 3 (passed). Phase 2: nothing at all (passed). */
static int pair_count(int phase, int src, int dst)
{
    static const int c[3][2][2] = {{{300, 1}, {200, 0}}, {{1000, 100}, {3, 0}}, {{0}}};
    return c[phase][src][dst];
}

/* 3 or more ranks, phase 0 and 2: 1 + (src + dst) % 3 ints; phase 1 the
 * same except 200 ints (800 B) from rank 1 to rank 2. */
static int mode_count(int phase, int src, int dst)
{
    return phase == 1 && src == 1 && dst == 2 ? 200 : 1 + (src + dst) % 3;
}

static void check_alltoallv(void)
{
    if (n == 2) {
        static const long most[3] = {800, 400, 0};
        for (int phase = 0; phase < 3; phase++) {
            alltoallv(pair_count, phase, false);
            tally(ALLTOALLV, most[phase]);
        }
        alltoallv(pair_count, 1, true);
        tally(IALLTOALLV, most[1]);
        return;
    }
    /* The mode as pmpi.h gives it: agreed at call next, small while the
     * agreed largest block is below LIMIT; calls passed in the small mode
     * count per kind (world) with their reason. */
    static const int calls[3] = {10, 200, 10};
    long agreed = 0, next = 0, gap = 0, call = 0, mode_passed = 0;
    bool small = false;
    for (int phase = 0; phase < 3; phase++)
        for (int c = 0; c < calls[phase]; c++, call++) {
            alltoallv(mode_count, phase, false);
            if (call == next) {
                bool now = phase != 1;
                gap = gap && now == small ? 2 * gap : 1;
                gap = gap < GAP_MAX ? gap : GAP_MAX;
                small = now;
                next = call + gap;
                agreed++;
            }
            count_call(WORLD, ALLTOALLV, !small);
            mode_passed += small;
        }
    alltoallv(mode_count, 0, true);
    served[IALLTOALLV]++;
    printf("pmpi_small: rank %d expects log: MPI_Alltoallv passed to MPI %ld times (small-message "
           "mode: every block below %d bytes at the last size agreement)\n",
           me, mode_passed, LIMIT);
    printf("pmpi_small: rank %d expects log: MPI_Alltoallv sizes agreed %ld times (small-message "
           "mode, 3 or more ranks)\n",
           me, agreed);
}

int main(int argc, char **argv)
{
    char limit[16];
    snprintf(limit, sizeof limit, "%d", LIMIT);
    setenv("WEFT_PMPI_SMALL", limit, 1);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    for (int ints = 2; ints <= 512; ints *= 4) /* 8 B to 2 KiB */
        for (int nb = 0; nb < 2; nb++)
            check_bcast(ints, nb);
    static const int ks[] = {2, 127, 128, 600};
    for (int i = 0; i < 4; i++) {
        check_move(ks[i], false);
        check_move(ks[i], true);
        check_reductions(ks[i]);
    }
    check_alltoallv();
    /* The reason lines of the calls passed as small. */
    const char *at = n <= 2 ? "1-2 ranks" : "3 or more ranks";
    for (int k = 0; k < NCOLL; k++)
        if (small_passed[k])
            printf("pmpi_small: rank %d expects log: MPI_%s passed to MPI %ld time%s (small "
                   "message: below %d bytes at %s)\n",
                   me, names[k], small_passed[k], small_passed[k] == 1 ? "" : "s", LIMIT, at);
    return tally_finish("pmpi_small", true);
}
