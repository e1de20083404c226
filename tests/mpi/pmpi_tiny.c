/* Small blocking collectives served through the ring of slots
 * (src/run/coll_tiny.h, src/run/pmpi/tiny.c; tests/mpi/pmpi_case.sh, CTest
 * pmpi_tiny_test), checked element by element against values computed
 * here, at 2-4 ranks.
 *
 * ROUNDS rounds of back-to-back calls (many more than the ring's 16 slots,
 * so every slot is rewritten several times, and a broadcast's root and a
 * reduce's non-roots run ahead of their readers), each round with its own
 * size (4 B to 4 KiB) and root: MPI_Allreduce (int sum, out of place and
 * in place; double max; float sum of values whose sum depends on the
 * order, which through weft must be bit for bit the fold in rank order
 * ((x_0 + x_1) + x_2) + ..., checked only preloaded, as Open MPI's order
 * is its own), MPI_Reduce (int sum, every root, in place at the root, the
 * non-roots' receive buffer untouched; float sum out of place, in rank
 * order preloaded), MPI_Reduce_scatter_block out of place (float sum in
 * rank order preloaded), MPI_Bcast (every root; the
 * receivers use a strided vector type, so they unpack), MPI_Allgather and
 * MPI_Alltoall (out of place and in place), MPI_Reduce_scatter_block (in
 * place: the other blocks stay the input), MPI_Alltoallv (blocks of
 * different sizes per pair, and in place), an MPI_Alltoallv whose
 * blocks do not fit the slots on one rank only (every rank then takes the
 * ordinary path together), and one whose blocks to self are 4400 bytes
 * (out of place and in place). Every buffer has guard elements after the data.
 * Then a broadcast's root runs three rings ahead of readers that start
 * late (run_ahead: it must wait for its slots to be read before it
 * rewrites them).
 *
 * `pmpi_tiny --mismatch` (run by tests/mpi/pmpi_tiny_mismatch.sh) makes
 * calls that disagree, each on a communicator of its own with
 * MPI_ERRORS_RETURN: an allreduce whose last rank passes one int more
 * (every rank fails that call); a broadcast in which rank 1 names itself
 * the root and the others rank 0, and a reduce in which rank 0 names root
 * 1 and every other rank root 0 (ranks that did not find it in the call
 * fail their next call on the communicator, an allreduce, with the same
 * message); an MPI_Reduce_scatter whose last rank's recvcounts differ
 * (the same sum; every rank with a block of its own fails that call, a
 * rank without one, the last at 2 ranks, its next call); at 3 ranks or
 * more, a reduce of rank 0 to rank 1 while the others broadcast from
 * rank 2 (reduce_to_bcaster: the same, at least one rank in the call). It
 * prints "pmpi_tiny: rank R: CASE: call K failed" for the first call of
 * each case that failed (0: none), then checks that MPI_COMM_WORLD still
 * works.
 * Usage: pmpi_tiny [--mismatch] */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmpi_tally.h"

#define ROUNDS 40
#define GUARD 4
#define UNSET (-99)

static bool weft_on; /* preloaded: the fold order is checked too */

static void expect(bool ok, const char *what, int round, size_t i, double got, double want)
{
    checks++;
    if (ok)
        return;
    failures++;
    if (failures <= 10)
        fprintf(stderr, "pmpi_tiny: rank %d: %s, round %d: element %zu is %g, want %g\n", me, what,
                round, i, got, want);
}

/* Rank r's input element i in round k. */
static int input(int k, int r, size_t i)
{
    return (int)((r + 1) * 1000 + k * 17 + (int)(i % 29));
}

static int *ints(size_t len)
{
    int *b = malloc((len + GUARD) * sizeof *b);
    for (size_t i = 0; i < len + GUARD; i++)
        b[i] = UNSET;
    return b;
}

static void guards(const int *b, size_t len, const char *what, int k)
{
    for (size_t i = len; i < len + GUARD; i++)
        expect(b[i] == UNSET, what, k, i, b[i], UNSET);
}

/* The element count of round k: 1 .. 1024 ints. */
static int count_of(int k)
{
    static const int c[] = {1, 2, 5, 16, 64, 100, 255, 1024};
    return c[k % 8];
}

/* Rank r's block of MPI_Reduce_scatter in round k (c: the round's
 * count): unequal, a third of them empty, the sum at most 1028 ints. */
static int rs_count(int k, int c, int r)
{
    return (r + k) % 3 == 0 ? 0 : (c + r) / n + 1;
}

/* MPI_Reduce_scatter with unequal recvcounts: int sum out of place and in
 * place (the input the whole recvbuf, the result its start), then float
 * sum in rank order (preloaded: bit for bit). */
static void reduce_scatter(int k, int c)
{
    int rc[4], at = 0, sum = 0;
    for (int r = 0; r < n; r++) {
        rc[r] = rs_count(k, c, r);
        if (r < me)
            at += rc[r];
        sum += rc[r];
    }
    int *in = ints((size_t)sum), *out = ints((size_t)sum);
    for (int i = 0; i < sum; i++)
        in[i] = input(k, me, (size_t)i);
    MPI_Reduce_scatter(in, out, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    served[RS]++;
    for (int i = 0; i < rc[me]; i++) {
        long want = 0;
        for (int r = 0; r < n; r++)
            want += input(k, r, (size_t)(at + i));
        expect(out[i] == want, "reduce_scatter", k, (size_t)i, out[i], (double)want);
    }
    guards(out, (size_t)rc[me], "reduce_scatter", k);
    memcpy(out, in, (size_t)sum * sizeof *in);
    MPI_Reduce_scatter(MPI_IN_PLACE, out, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    served[RS]++;
    for (int i = 0; i < sum; i++) {
        long want = input(k, me, (size_t)i);
        if (i < rc[me]) {
            want = 0;
            for (int r = 0; r < n; r++)
                want += input(k, r, (size_t)(at + i));
        }
        expect(out[i] == want, "reduce_scatter in place", k, (size_t)i, out[i], (double)want);
    }
    guards(out, (size_t)sum, "reduce_scatter in place", k);
    free(in);
    free(out);
    float fin[1028], fout[1028 + GUARD];
    for (int i = 0; i < sum; i++)
        fin[i] = 1.0f / (float)(3 + me + i % 7) + (float)me * 1e-3f;
    for (int i = 0; i < sum + GUARD; i++)
        fout[i] = -1.0f;
    MPI_Reduce_scatter(fin, fout, rc, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    served[RS]++;
    for (int i = 0; i < rc[me] + GUARD; i++) {
        float want = -1.0f;
        if (i < rc[me]) {
            want = 1.0f / (float)(3 + (at + i) % 7);
            for (int r = 1; r < n; r++)
                want += 1.0f / (float)(3 + r + (at + i) % 7) + (float)r * 1e-3f;
        }
        if (weft_on || i >= rc[me])
            expect(memcmp(&fout[i], &want, sizeof want) == 0, "reduce_scatter float rank order", k,
                   (size_t)i, fout[i], want);
    }
}

static void reductions(int k)
{
    int c = count_of(k), root = k % n;
    int *in = ints((size_t)c * n), *out = ints((size_t)c * n);
    for (int i = 0; i < c * n; i++)
        in[i] = input(k, me, (size_t)i);
    /* Allreduce, out of place and in place. */
    MPI_Allreduce(in, out, c, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    served[ALLREDUCE]++;
    for (int i = 0; i < c; i++) {
        long want = 0;
        for (int r = 0; r < n; r++)
            want += input(k, r, (size_t)i);
        expect(out[i] == want, "allreduce", k, (size_t)i, out[i], (double)want);
    }
    guards(out, (size_t)c * n, "allreduce", k);
    memcpy(out, in, (size_t)c * sizeof *in);
    MPI_Allreduce(MPI_IN_PLACE, out, c, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    served[ALLREDUCE]++;
    for (int i = 0; i < c; i++)
        expect(out[i] == input(k, n - 1, (size_t)i), "allreduce in place", k, (size_t)i, out[i],
               input(k, n - 1, (size_t)i));
    /* Double max; float sum in rank order. */
    int fc = c > 512 ? 512 : c;
    double din[512], dout[512];
    float fin[512], fout[512], fwant[512];
    for (int i = 0; i < fc; i++) {
        din[i] = me * 0.5 + i;
        fin[i] = 1.0f / (float)(3 + me + i % 7) + (float)me * 1e-3f;
    }
    MPI_Allreduce(din, dout, fc, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    served[ALLREDUCE]++;
    MPI_Allreduce(fin, fout, fc, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    served[ALLREDUCE]++;
    for (int i = 0; i < fc; i++) {
        expect(dout[i] == (n - 1) * 0.5 + i, "allreduce double", k, (size_t)i, dout[i],
               (n - 1) * 0.5 + i);
        float acc = 1.0f / (float)(3 + i % 7);
        for (int r = 1; r < n; r++)
            acc += 1.0f / (float)(3 + r + i % 7) + (float)r * 1e-3f;
        fwant[i] = acc;
        if (weft_on)
            expect(memcmp(&fout[i], &fwant[i], sizeof acc) == 0, "allreduce float rank order", k,
                   (size_t)i, fout[i], fwant[i]);
    }
    /* Reduce at root, in place at the root; the others' buffer untouched. */
    for (int i = 0; i < c * n + GUARD; i++)
        out[i] = UNSET;
    if (me == root) {
        memcpy(out, in, (size_t)c * sizeof *in);
        MPI_Reduce(MPI_IN_PLACE, out, c, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    } else {
        MPI_Reduce(in, out, c, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    }
    served[REDUCE]++;
    for (int i = 0; i < c; i++) {
        long want = 0;
        for (int r = 0; r < n; r++)
            want += input(k, r, (size_t)i);
        if (me != root)
            want = UNSET;
        expect(out[i] == want, "reduce", k, (size_t)i, out[i], (double)want);
    }
    guards(out, (size_t)c * n, "reduce", k);
    /* Reduce out of place at the root too (the root folds its input from
     * sendbuf, in its place in rank order: coll_tiny.c), float sum bit for
     * bit in rank order; the others' buffer untouched. Then
     * Reduce_scatter_block out of place (each rank's own block folded
     * from sendbuf), the same way. */
    float rin[512], rout[512 + GUARD];
    for (int i = 0; i < fc; i++)
        rin[i] = fin[i];
    for (int i = 0; i < fc + GUARD; i++)
        rout[i] = -1.0f;
    MPI_Reduce(rin, rout, fc, MPI_FLOAT, MPI_SUM, root, MPI_COMM_WORLD);
    served[REDUCE]++;
    for (int i = 0; i < fc + GUARD; i++) {
        float want = me == root && i < fc ? fwant[i] : -1.0f;
        if (weft_on || me != root || i >= fc)
            expect(memcmp(&rout[i], &want, sizeof want) == 0, "reduce float rank order", k,
                   (size_t)i, rout[i], want);
    }
    int fb = fc / n ? fc / n : 1;
    for (int i = 0; i < fb * n && i < 512; i++)
        rin[i] = 1.0f / (float)(3 + me + i % 7) + (float)me * 1e-3f;
    for (int i = 0; i < fb + GUARD; i++)
        rout[i] = -1.0f;
    MPI_Reduce_scatter_block(rin, rout, fb, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    served[RSB]++;
    for (int i = 0; i < fb + GUARD; i++) {
        float want = -1.0f;
        if (i < fb) {
            int j = me * fb + i;
            want = 1.0f / (float)(3 + j % 7);
            for (int r = 1; r < n; r++)
                want += 1.0f / (float)(3 + r + j % 7) + (float)r * 1e-3f;
        }
        if (weft_on || i >= fb)
            expect(memcmp(&rout[i], &want, sizeof want) == 0,
                   "reduce_scatter_block float rank order", k, (size_t)i, rout[i], want);
    }
    /* Reduce_scatter_block in place: block 0 the result, the rest input.
     * Blocks of c / n elements (at least 1). */
    int b = c / n ? c / n : 1;
    memcpy(out, in, (size_t)b * n * sizeof *in);
    MPI_Reduce_scatter_block(MPI_IN_PLACE, out, b, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    served[RSB]++;
    for (int i = 0; i < b * n; i++) {
        long want = input(k, me, (size_t)i);
        if (i < b) {
            want = 0;
            for (int r = 0; r < n; r++)
                want += input(k, r, (size_t)(me * b + i));
        }
        expect(out[i] == want, "reduce_scatter_block in place", k, (size_t)i, out[i], (double)want);
    }
    free(in);
    free(out);
    reduce_scatter(k, c);
}

static void moves(int k)
{
    int c = count_of(k), root = (k + 1) % n;
    /* Bcast: root sends c ints, the others receive every other int. */
    int *buf = ints((size_t)c * 2);
    MPI_Datatype strided;
    MPI_Type_vector(c, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    if (me == root) {
        for (int i = 0; i < c; i++)
            buf[i] = input(k, root, (size_t)i);
        MPI_Bcast(buf, c, MPI_INT, root, MPI_COMM_WORLD);
    } else {
        MPI_Bcast(buf, 1, strided, root, MPI_COMM_WORLD);
        for (int i = 0; i < 2 * c; i++) {
            int want = i % 2 ? UNSET : input(k, root, (size_t)i / 2);
            if (i == 2 * c - 1)
                want = UNSET;
            expect(buf[i] == want, "bcast", k, (size_t)i, buf[i], want);
        }
    }
    served[BCAST]++;
    MPI_Type_free(&strided);
    free(buf);
    /* Allgather and alltoall: blocks of c / n ints (at least 1). */
    int b = c / n ? c / n : 1;
    size_t all = (size_t)b * n;
    int *in = ints(all), *out = ints(all);
    for (size_t i = 0; i < all; i++)
        in[i] = input(k, me, i);
    MPI_Allgather(in, b, MPI_INT, out, b, MPI_INT, MPI_COMM_WORLD);
    served[ALLGATHER]++;
    for (size_t i = 0; i < all; i++)
        expect(out[i] == input(k, (int)(i / (size_t)b), i % (size_t)b), "allgather", k, i, out[i],
               input(k, (int)(i / (size_t)b), i % (size_t)b));
    guards(out, all, "allgather", k);
    for (size_t i = 0; i < all; i++)
        out[i] = i / (size_t)b == (size_t)me ? input(k, me, i % (size_t)b) : UNSET;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, b, MPI_INT, MPI_COMM_WORLD);
    served[ALLGATHER]++;
    for (size_t i = 0; i < all; i++)
        expect(out[i] == input(k, (int)(i / (size_t)b), i % (size_t)b), "allgather in place", k, i,
               out[i], input(k, (int)(i / (size_t)b), i % (size_t)b));
    MPI_Alltoall(in, b, MPI_INT, out, b, MPI_INT, MPI_COMM_WORLD);
    served[ALLTOALL]++;
    /* Block q of rank me's result is block me of rank q's input. */
    for (size_t i = 0; i < all; i++) {
        int q = (int)(i / (size_t)b);
        int want = input(k, q, (size_t)me * b + i % (size_t)b);
        expect(out[i] == want, "alltoall", k, i, out[i], want);
    }
    guards(out, all, "alltoall", k);
    memcpy(out, in, all * sizeof *in);
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, b, MPI_INT, MPI_COMM_WORLD);
    served[ALLTOALL]++;
    for (size_t i = 0; i < all; i++) {
        int q = (int)(i / (size_t)b);
        int want = input(k, q, (size_t)me * b + i % (size_t)b);
        expect(out[i] == want, "alltoall in place", k, i, out[i], want);
    }
    free(in);
    free(out);
}

/* Ints rank s sends rank d in round k (big: one pair far past a slot);
 * in place the counts must be symmetric (a rank sends what it receives). */
/* Elements rank s sends rank d in round k: mode BIG makes rank 0's block
 * to the last rank 2000 (past a slot), SELF every rank's block to itself
 * 1100 (4400 bytes: past the room a slot has beside the other blocks,
 * which it needs not hold: tiny.c copies it from sendbuf to recvbuf). */
enum { PLAIN, BIG, SELF };

static int vcount(int k, int s, int d, int mode, bool sym)
{
    if (mode == BIG && s == 0 && d == n - 1)
        return 2000;
    if (mode == SELF && s == d)
        return 1100;
    return (s + (sym ? 1 : 2) * d + k) % 5;
}

static void alltoallv(int k, int mode, bool in_place)
{
    int sc[4], sd[4], rc[4], rd[4], st = 0, rt = 0;
    for (int j = 0; j < n; j++) {
        sc[j] = vcount(k, me, j, mode, in_place);
        rc[j] = vcount(k, j, me, mode, in_place);
        sd[j] = st;
        st += sc[j] + 1; /* a gap after each block */
        rd[j] = rt;
        rt += rc[j] + 1;
    }
    int *in = ints((size_t)st), *out = ints((size_t)rt);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < sc[j]; i++)
            in[sd[j] + i] = input(k, me, (size_t)(j * 100 + i));
    if (in_place) {
        /* In place the send side is the receive side: blocks of rc. */
        for (int j = 0; j < n; j++)
            for (int i = 0; i < rc[j]; i++)
                out[rd[j] + i] = input(k, me, (size_t)(j * 100 + i));
        MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, out, rc, rd, MPI_INT,
                      MPI_COMM_WORLD);
    } else {
        MPI_Alltoallv(in, sc, sd, MPI_INT, out, rc, rd, MPI_INT, MPI_COMM_WORLD);
    }
    served[ALLTOALLV]++;
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < rc[j]; i++) {
            int want = input(k, j, (size_t)(me * 100 + i));
            expect(out[rd[j] + i] == want, "alltoallv", k, (size_t)(rd[j] + i), out[rd[j] + i],
                   want);
        }
        expect(out[rd[j] + rc[j]] == UNSET, "alltoallv gap", k, (size_t)(rd[j] + rc[j]),
               out[rd[j] + rc[j]], UNSET);
    }
    free(in);
    free(out);
}

/* The first call of a case that failed (1-based), 0 when none did; the
 * calls are made on a communicator of their own. */
static int first_failed(int (*call)(MPI_Comm, int), int calls)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int first = 0;
    for (int i = 1; i <= calls; i++)
        if (call(c, i) != MPI_SUCCESS && !first)
            first = i;
    MPI_Comm_free(&c);
    return first;
}

/* Call 1 of each case disagrees; call 2 is an allreduce that agrees. */
static int then_allreduce(MPI_Comm c)
{
    int x = 1, y = 0;
    return MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c);
}

static int allreduce_count(MPI_Comm c, int call)
{
    if (call == 2)
        return then_allreduce(c);
    int x[3] = {1, 2, 3}, y[3];
    return MPI_Allreduce(x, y, me == n - 1 ? 3 : 2, MPI_INT, MPI_SUM, c);
}

static int bcast_root(MPI_Comm c, int call)
{
    if (call == 2)
        return then_allreduce(c);
    int x[2] = {me, me};
    return MPI_Bcast(x, 2, MPI_INT, me == 1 ? 1 : 0, c);
}

static int reduce_root(MPI_Comm c, int call)
{
    if (call == 2)
        return then_allreduce(c);
    int x[2] = {me, me}, y[2];
    return MPI_Reduce(x, y, 2, MPI_INT, MPI_SUM, me == 0 ? 1 : 0, c);
}

/* The last rank's recvcounts differ from the others' (the same sum). */
static int reduce_scatter_counts(MPI_Comm c, int call)
{
    if (call == 2)
        return then_allreduce(c);
    int rc[4] = {1, 1, 1, 1}, x[4] = {1, 2, 3, 4}, y[4];
    if (me == n - 1) {
        rc[0] = 2;
        rc[1] = 0;
    }
    return MPI_Reduce_scatter(x, y, rc, MPI_INT, MPI_SUM, c);
}

/* A reduce's non-root that names as root a broadcast's non-root (3 or
 * more ranks): rank 0 reduces to rank 1, rank 1 and the others
 * broadcast from rank 2. Rank 2 publishes first, rank 0 next, rank 1
 * last (the sleeps only make that order likely; any order must find
 * it): rank 0 does not find rank 1's slot then, rank 1 reads only rank
 * 2's (which agrees), and rank 2 found none published; so rank 0 must
 * compare the slots published by then (rank 2's). */
static int reduce_to_bcaster(MPI_Comm c, int call)
{
    if (call == 2)
        return then_allreduce(c);
    int x[2] = {me, me}, y[2];
    if (me == 0) {
        usleep(200000);
        return MPI_Reduce(x, y, 2, MPI_INT, MPI_SUM, 1, c);
    }
    if (me == 1)
        usleep(400000);
    return MPI_Bcast(x, 2, MPI_INT, 2, c);
}

static int mismatch(void)
{
    printf("pmpi_tiny: rank %d: allreduce: call %d failed\n", me, first_failed(allreduce_count, 2));
    printf("pmpi_tiny: rank %d: bcast: call %d failed\n", me, first_failed(bcast_root, 2));
    printf("pmpi_tiny: rank %d: reduce: call %d failed\n", me, first_failed(reduce_root, 2));
    printf("pmpi_tiny: rank %d: reduce_scatter: call %d failed\n", me,
           first_failed(reduce_scatter_counts, 2));
    if (n >= 3)
        printf("pmpi_tiny: rank %d: reduce_to_bcaster: call %d failed\n", me,
               first_failed(reduce_to_bcaster, 2));
    int x = 1, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("pmpi_tiny: rank %d: then world allreduce %d\n", me, y);
    MPI_Finalize();
    return 0;
}

/* Rank 0 broadcasts 3 x 16 ints (the ring's WEFT__TINY_SLOTS) back to
 * back while the others start 0.1 s late: the root fills the ring and must
 * wait for its oldest slot to be read before it rewrites it (coll_tiny.c,
 * make_room); a root that did not would hand a late reader call s + 16's
 * value for call s. */
static void run_ahead(void)
{
    enum { CALLS = 3 * 16 };
    if (me != 0)
        usleep(100000);
    for (int i = 0; i < CALLS; i++) {
        int v = me == 0 ? 7000 + i : UNSET;
        MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
        served[BCAST]++;
        expect(v == 7000 + i, "bcast run ahead", i, 0, v, 7000 + i);
    }
}

int main(int argc, char **argv)
{
    const char *pre = getenv("LD_PRELOAD");
    weft_on = pre && strstr(pre, "libweft_mpi");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n > 4) {
        fprintf(stderr, "pmpi_tiny: at most 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (argc > 1 && strcmp(argv[1], "--mismatch") == 0)
        return mismatch();
    for (int k = 0; k < ROUNDS; k++) {
        reductions(k);
        moves(k);
        alltoallv(k, PLAIN, false);
        alltoallv(k, PLAIN, true);
    }
    /* One rank's block past the slot: all take the ordinary path. */
    alltoallv(0, BIG, false);
    alltoallv(1, PLAIN, false);
    /* Every rank's block to itself larger than the room beside the others. */
    alltoallv(2, SELF, false);
    alltoallv(3, SELF, true);
    run_ahead();
    /* A digest of results that do not depend on the order of a sum. */
    int x = me + 1, s = 0;
    MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    count_call(WORLD, ALLREDUCE, true);
    printf("pmpi_tiny: rank %d expects result: sum of ranks + 1 = %d\n", me, s);
    return tally_finish("pmpi_tiny", true);
}
