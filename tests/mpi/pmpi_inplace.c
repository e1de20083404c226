/* Every in-place form of every collective libweft_mpi.so serves, checked
 * against MPI's semantics element by element, including the parts of the
 * receive buffer MPI leaves alone (tests/mpi/pmpi_case.sh, CTest
 * pmpi_inplace_test).
 *
 * The first version of the library ran MPI_Reduce_scatter_block with
 * MPI_IN_PLACE as weft's in-place reduce-scatter and moved the result to
 * the buffer's start, leaving weft's copies of the result in the caller's
 * other blocks, which MPI leaves as input (mpi4py's testReduceScatterBlock
 * failed on every rank but 0).
 *
 * In place, blocking and non-blocking, at 1, 5 and 1000 elements per
 * block: MPI_Allreduce; MPI_Reduce at every root (the non-roots' receive
 * buffers untouched); MPI_Reduce_scatter_block (the result in the first
 * block, the other blocks still the input); MPI_Reduce_scatter with equal
 * counts and with unequal ones (rank 0 none); MPI_Allgather; MPI_Alltoall;
 * MPI_Alltoallv with blocks in reverse order and a gap before each
 * (untouched), and MPI_Alltoallw likewise. Every buffer has slots after the
 * data that must stay untouched. And MPI_Reduce_scatter_block of no data
 * into NULL, blocking and not.
 * Usage: pmpi_inplace */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pmpi_tally.h"

#define SLACK 4
#define UNSET -99

static void expect(bool ok, const char *what, int count, size_t i, long got, long want)
{
    checks++;
    if (ok)
        return;
    failures++;
    if (failures <= 10)
        fprintf(stderr, "pmpi_inplace: rank %d: %s, %d per block: element %zu is %ld, want %ld\n",
                me, what, count, i, got, want);
}

/* Rank r's input element i. */
static int input(int r, size_t i)
{
    return r * 7 + (int)(i % 13) + 1;
}

static long sum_input(size_t i)
{
    long s = 0;
    for (int r = 0; r < n; r++)
        s += input(r, i);
    return s;
}

static int *buffer(size_t len)
{
    int *b = malloc((len + SLACK) * sizeof *b);
    for (size_t i = 0; i < len + SLACK; i++)
        b[i] = UNSET;
    return b;
}

static void check_slack(const int *b, size_t len, const char *what, int count)
{
    for (size_t i = len; i < len + SLACK; i++)
        expect(b[i] == UNSET, what, count, i, b[i], UNSET);
}

/* Waits for req when nonblocking (req != NULL). */
static void done(MPI_Request *req)
{
    if (req)
        MPI_Wait(req, MPI_STATUS_IGNORE);
}

static void check_allreduce(int count, bool nb)
{
    MPI_Request r, *req = nb ? &r : NULL;
    int *b = buffer((size_t)count);
    for (size_t i = 0; i < (size_t)count; i++)
        b[i] = input(me, i);
    if (nb)
        MPI_Iallreduce(MPI_IN_PLACE, b, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, req);
    else
        MPI_Allreduce(MPI_IN_PLACE, b, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    done(req);
    served[nb ? IALLREDUCE : ALLREDUCE]++;
    const char *what = nb ? "MPI_Iallreduce in place" : "MPI_Allreduce in place";
    for (size_t i = 0; i < (size_t)count; i++)
        expect(b[i] == sum_input(i), what, count, i, b[i], sum_input(i));
    check_slack(b, (size_t)count, what, count);
    free(b);
}

static void check_reduce(int count, bool nb)
{
    const char *what = nb ? "MPI_Ireduce in place" : "MPI_Reduce in place";
    for (int root = 0; root < n; root++) {
        MPI_Request r, *req = nb ? &r : NULL;
        int *s = buffer((size_t)count), *b = buffer((size_t)count);
        for (size_t i = 0; i < (size_t)count; i++)
            (me == root ? b : s)[i] = input(me, i);
        const void *src = me == root ? MPI_IN_PLACE : s;
        if (nb)
            MPI_Ireduce(src, b, count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, req);
        else
            MPI_Reduce(src, b, count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
        done(req);
        served[nb ? IREDUCE : REDUCE]++;
        for (size_t i = 0; i < (size_t)count; i++) {
            long want = me == root ? sum_input(i) : UNSET;
            expect(b[i] == want, what, count, i, b[i], want);
        }
        check_slack(b, (size_t)count, what, count);
        free(s);
        free(b);
    }
}

/* MPI_Reduce_scatter_block, or MPI_Reduce_scatter with counts[] (NULL:
 * equal counts of count). */
static void check_reduce_scatter(int count, bool nb, bool vector, bool unequal)
{
    MPI_Request r, *req = nb ? &r : NULL;
    int counts[64];
    size_t total = 0, before = 0;
    for (int j = 0; j < n; j++) {
        counts[j] = unequal ? (j == 0 ? 0 : count + j) : count;
        if (j == me)
            before = total;
        total += (size_t)counts[j];
    }
    int *b = buffer(total);
    for (size_t i = 0; i < total; i++)
        b[i] = input(me, i);
    if (!vector && nb)
        MPI_Ireduce_scatter_block(MPI_IN_PLACE, b, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, req);
    else if (!vector)
        MPI_Reduce_scatter_block(MPI_IN_PLACE, b, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    else if (nb)
        MPI_Ireduce_scatter(MPI_IN_PLACE, b, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, req);
    else
        MPI_Reduce_scatter(MPI_IN_PLACE, b, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    done(req);
    if (vector)
        served[nb ? IRS : RS]++;
    else
        served[nb ? IRSB : RSB]++;
    char what[96];
    snprintf(what, sizeof what, "%s in place%s",
             vector ? (nb ? "MPI_Ireduce_scatter" : "MPI_Reduce_scatter")
                    : (nb ? "MPI_Ireduce_scatter_block" : "MPI_Reduce_scatter_block"),
             unequal ? ", unequal counts" : "");
    /* This rank's block of the sum at the start; the rest is the input. */
    for (size_t i = 0; i < total; i++) {
        long want = i < (size_t)counts[me] ? sum_input(before + i) : input(me, i);
        expect(b[i] == want, what, count, i, b[i], want);
    }
    check_slack(b, total, what, count);
    free(b);
}

/* MPI_Reduce_scatter_block in place of no data with recvbuf NULL, as
 * mpi4py's testReduceScatterBlock makes it (an empty numpy array): the
 * library copied the input with memcpy(copy, NULL, 0), undefined (the
 * sanitizer build stopped there). */
static void check_reduce_scatter_empty(bool nb)
{
    MPI_Request r, *req = nb ? &r : NULL;
    int rc =
        nb ? MPI_Ireduce_scatter_block(MPI_IN_PLACE, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, req)
           : MPI_Reduce_scatter_block(MPI_IN_PLACE, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    done(req);
    served[nb ? IRSB : RSB]++;
    expect(rc == MPI_SUCCESS,
           nb ? "MPI_Ireduce_scatter_block in place, NULL"
              : "MPI_Reduce_scatter_block in place, NULL",
           0, 0, rc, MPI_SUCCESS);
}

static void check_allgather(int count, bool nb)
{
    MPI_Request r, *req = nb ? &r : NULL;
    size_t total = (size_t)count * (size_t)n;
    int *b = buffer(total);
    for (size_t i = 0; i < (size_t)count; i++)
        b[(size_t)me * (size_t)count + i] = input(me, i);
    if (nb)
        MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, count, MPI_INT, MPI_COMM_WORLD, req);
    else
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, count, MPI_INT, MPI_COMM_WORLD);
    done(req);
    served[nb ? IALLGATHER : ALLGATHER]++;
    const char *what = nb ? "MPI_Iallgather in place" : "MPI_Allgather in place";
    for (size_t i = 0; i < total; i++) {
        long want = input((int)(i / (size_t)count), i % (size_t)count);
        expect(b[i] == want, what, count, i, b[i], want);
    }
    check_slack(b, total, what, count);
    free(b);
}

/* Element i of the block rank src sends rank dst. */
static int a2a(int src, int dst, size_t i)
{
    return input(src, i) * 100 + dst;
}

static void check_alltoall(int count, bool nb)
{
    MPI_Request r, *req = nb ? &r : NULL;
    size_t total = (size_t)count * (size_t)n;
    int *b = buffer(total);
    for (size_t i = 0; i < total; i++)
        b[i] = a2a(me, (int)(i / (size_t)count), i % (size_t)count);
    if (nb)
        MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, count, MPI_INT, MPI_COMM_WORLD, req);
    else
        MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, count, MPI_INT, MPI_COMM_WORLD);
    done(req);
    served[nb ? IALLTOALL : ALLTOALL]++;
    const char *what = nb ? "MPI_Ialltoall in place" : "MPI_Alltoall in place";
    for (size_t i = 0; i < total; i++) {
        long want = a2a((int)(i / (size_t)count), me, i % (size_t)count);
        expect(b[i] == want, what, count, i, b[i], want);
    }
    check_slack(b, total, what, count);
    free(b);
}

/* Elements rank src sends rank dst in MPI_Alltoallv: MPI requires in place
 * that they be the same both ways. */
static int v_count(int src, int dst, int count)
{
    return count + (src + dst) % 3;
}

/* kind: 0 MPI_Alltoallv, 1 MPI_Ialltoallv, 2 MPI_Alltoallw. */
static void check_alltoallv(int count, int kind)
{
    MPI_Request r, *req = kind == 1 ? &r : NULL;
    int counts[64], displs[64], bdispls[64];
    MPI_Datatype types[64];
    size_t total = 0;
    /* Reverse rank order, one int of gap before each block. */
    for (int j = n - 1; j >= 0; j--) {
        total += 1;
        displs[j] = (int)total;
        bdispls[j] = displs[j] * (int)sizeof(int);
        counts[j] = v_count(me, j, count);
        types[j] = MPI_INT;
        total += (size_t)counts[j];
    }
    int *b = buffer(total);
    for (int j = 0; j < n; j++)
        for (size_t i = 0; i < (size_t)counts[j]; i++)
            b[(size_t)displs[j] + i] = a2a(me, j, i);
    if (kind == 2)
        MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, b, counts, bdispls, types, MPI_COMM_WORLD);
    else if (kind == 1)
        MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, b, counts, displs, MPI_INT,
                       MPI_COMM_WORLD, req);
    else
        MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, b, counts, displs, MPI_INT,
                      MPI_COMM_WORLD);
    done(req);
    served[kind == 2 ? ALLTOALLW : kind == 1 ? IALLTOALLV : ALLTOALLV]++;
    const char *what = kind == 2   ? "MPI_Alltoallw in place"
                       : kind == 1 ? "MPI_Ialltoallv in place"
                                   : "MPI_Alltoallv in place";
    for (int j = 0; j < n; j++) {
        expect(b[displs[j] - 1] == UNSET, what, count, (size_t)displs[j] - 1, b[displs[j] - 1],
               UNSET);
        for (size_t i = 0; i < (size_t)counts[j]; i++)
            expect(b[(size_t)displs[j] + i] == a2a(j, me, i), what, count, (size_t)displs[j] + i,
                   b[(size_t)displs[j] + i], a2a(j, me, i));
    }
    check_slack(b, total, what, count);
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n > 64) {
        if (me == 0)
            fprintf(stderr, "pmpi_inplace: at most 64 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int counts[] = {1, 5, 1000};
    for (int nb = 0; nb < 2; nb++)
        check_reduce_scatter_empty(nb);
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        for (int nb = 0; nb < 2; nb++) {
            check_allreduce(counts[c], nb);
            check_reduce(counts[c], nb);
            check_reduce_scatter(counts[c], nb, false, false);
            check_reduce_scatter(counts[c], nb, true, false);
            check_reduce_scatter(counts[c], nb, true, true);
            check_allgather(counts[c], nb);
            check_alltoall(counts[c], nb);
        }
        for (int kind = 0; kind < 3; kind++)
            check_alltoallv(counts[c], kind);
    }
    (void)count_call;    /* every call here is on MPI_COMM_WORLD */
    served[ALLREDUCE]++; /* the tally below */
    return tally_finish("pmpi_inplace", false);
}
