/* A third ordinary MPI program for libweft_mpi.so (tests/mpi/pmpi_comms.sh):
 * the calls of real programs beyond MPI_COMM_WORLD's six collectives.
 *
 *  - communicators: MPI_Comm_split with keys that reverse the order and an
 *    MPI_UNDEFINED color, a split into single ranks, MPI_Comm_dup of a
 *    split, MPI_Comm_create from a reversed group without rank 0,
 *    MPI_Comm_split_type(MPI_COMM_TYPE_SHARED); on each, MPI_Allgather of
 *    the members' world ranks (the rank order), MPI_Allreduce, MPI_Bcast
 *    from the last rank and MPI_Alltoall, byte-exact.
 *  - MPI_Reduce_scatter with unequal recvcounts (one rank gets none), with
 *    equal ones, and in place, on MPI_COMM_WORLD and on a split.
 *  - the non-blocking collectives: MPI_Iallreduce, MPI_Ibcast, MPI_Ireduce,
 *    MPI_Iallgather, MPI_Ireduce_scatter, MPI_Ireduce_scatter_block,
 *    MPI_Ialltoall, MPI_Ialltoallv and MPI_Ibarrier all outstanding at
 *    once, completed by one MPI_Waitall (and one by MPI_Test).
 *  - MPI_Alltoallv with unequal counts (some 0) and displacements with
 *    gaps and in reverse order, in int, double and a strided int type on
 *    odd ranks, and in place; MPI_Alltoallw with MPI_INT everywhere
 *    (served) and with a different type per peer (passed).
 *
 * `pmpi_comms --mismatch` instead makes rank 1 send rank 0 one int more
 * than rank 0 expects in an MPI_Alltoallv, then gives rank 1 other
 * recvcounts than its peers in an MPI_Reduce_scatter (both erroneous in
 * MPI, so only for the library, with MPI_ERRORS_RETURN): every rank must
 * see both calls fail, then an MPI_Allreduce on the same communicator must
 * still work; it prints "pmpi_comms: rank R: mismatch failed,
 * reduce_scatter failed, then allreduce N".
 *
 * `pmpi_comms --sized` runs only MPI_Alltoallv of ints, twice, with the
 * counts sized_count() gives (a traffic matrix of 4 x those bytes, some
 * blocks 0 and some of 240 KB; gaps between blocks, received in reverse
 * order), for an alltoallv plan of that matrix forced by WEFT_PLAN
 * (tests/mpi/pmpi_comms.sh writes it), checked element by element.
 * `pmpi_comms --sized --off` makes rank 1 send rank 0 one int more, rank 0
 * expecting it (so the counts agree but are not the plan's matrix): every
 * rank must see the call fail, then an MPI_Allreduce must still work; it
 * prints "pmpi_comms: rank R: sized failed, then allreduce N".
 *
 * Every rank prints the served/passed counts it expects, as pmpi_check
 * does, and the last line is the tally. Exit 0 when every check passed. */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi_tally.h"

static void expect(bool ok, const char *what, size_t i)
{
    checks++;
    if (ok)
        return;
    failures++;
    if (failures <= 10)
        fprintf(stderr, "pmpi_comms: rank %d: %s: element %zu wrong\n", me, what, i);
}

/* The moves and a reduction on communicator c of kind kind, whose members
 * are the world ranks want[0 .. sn-1] in that order. */
static void check_on(MPI_Comm c, int kind, const int *want, int sn, const char *what)
{
    int sme, size;
    MPI_Comm_rank(c, &sme);
    MPI_Comm_size(c, &size);
    expect(size == sn && want[sme] == me, what, 0);
    int *ranks = calloc((size_t)sn, sizeof(int));
    MPI_Allgather(&me, 1, MPI_INT, ranks, 1, MPI_INT, c);
    count_call(kind, ALLGATHER, true);
    long sum = 0, wsum = 0;
    for (int r = 0; r < sn; r++) {
        expect(ranks[r] == want[r], what, (size_t)r);
        wsum += want[r];
    }
    long v = me;
    MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, c);
    count_call(kind, ALLREDUCE, true);
    expect(sum == wsum, what, 100);
    double b[3] = {0, 0, 0};
    if (sme == sn - 1)
        for (int k = 0; k < 3; k++)
            b[k] = 0.5 + me * 10 + k;
    MPI_Bcast(b, 3, MPI_DOUBLE, sn - 1, c);
    count_call(kind, BCAST, true);
    for (int k = 0; k < 3; k++)
        expect(b[k] == 0.5 + want[sn - 1] * 10 + k, what, 200 + (size_t)k);
    int *s = malloc((size_t)sn * 2 * sizeof(int)), *r = malloc((size_t)sn * 2 * sizeof(int));
    for (int j = 0; j < sn; j++) {
        s[2 * j] = me * 1000 + want[j];
        s[2 * j + 1] = -s[2 * j];
    }
    MPI_Alltoall(s, 2, MPI_INT, r, 2, MPI_INT, c);
    count_call(kind, ALLTOALL, true);
    for (int j = 0; j < sn; j++)
        expect(r[2 * j] == want[j] * 1000 + me && r[2 * j + 1] == -r[2 * j], what, 300 + (size_t)j);
    free(s);
    free(r);
    free(ranks);
}

static void check_comms(void)
{
    int *want = malloc((size_t)n * sizeof(int)), sn = 0;
    /* Split by parity, keys reversing the order. */
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &sub);
    sn = 0;
    for (int r = n - 1; r >= 0; r--)
        if (r % 2 == me % 2)
            want[sn++] = r;
    check_on(sub, SPLIT, want, sn, "split by parity, reversed");
    /* Its duplicate. */
    MPI_Comm dup;
    MPI_Comm_dup(sub, &dup);
    check_on(dup, DUP, want, sn, "dup of a split");
    MPI_Comm_free(&dup);
    MPI_Comm_free(&sub);

    /* Rank 0 out (MPI_UNDEFINED), the others in world order. */
    MPI_Comm_split(MPI_COMM_WORLD, me == 0 ? MPI_UNDEFINED : 7, 0, &sub);
    expect((me == 0) == (sub == MPI_COMM_NULL), "MPI_UNDEFINED gives MPI_COMM_NULL", 0);
    for (int r = 1; r < n; r++)
        want[r - 1] = r;
    if (sub != MPI_COMM_NULL) {
        check_on(sub, SPLIT, want, n - 1, "split without rank 0");
        MPI_Comm_free(&sub);
    }

    /* Every rank alone. */
    MPI_Comm_split(MPI_COMM_WORLD, me, 0, &sub);
    want[0] = me;
    check_on(sub, SPLIT, want, 1, "split into single ranks");
    MPI_Comm_free(&sub);

    /* A group of every rank but 0, reversed. */
    MPI_Group wg, g;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int r = 0; r < n - 1; r++)
        want[r] = n - 1 - r;
    MPI_Group_incl(wg, n - 1, want, &g);
    MPI_Comm_create(MPI_COMM_WORLD, g, &sub);
    expect((me == 0) == (sub == MPI_COMM_NULL), "MPI_Comm_create outside the group", 0);
    if (sub != MPI_COMM_NULL) {
        check_on(sub, CREATE, want, n - 1, "create from a reversed group");
        MPI_Comm_free(&sub);
    }
    MPI_Group_free(&g);
    MPI_Group_free(&wg);

    /* This host's ranks: all of them here. */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sub);
    for (int r = 0; r < n; r++)
        want[r] = r;
    check_on(sub, SPLIT_TYPE, want, n, "split_type shared");
    MPI_Comm_free(&sub);
    free(want);
}

/* MPI_Reduce_scatter on c (size sn, this rank sme) with counts[r] = f(r). */
static void check_rs(MPI_Comm c, int kind, bool equal, bool in_place)
{
    int sme, sn;
    MPI_Comm_rank(c, &sme);
    MPI_Comm_size(c, &sn);
    int *counts = malloc((size_t)sn * sizeof(int)), total = 0, before = 0;
    for (int r = 0; r < sn; r++) {
        counts[r] = equal ? 3 : (r * 5) % 7; /* rank 0 gets none */
        if (r == sme)
            before = total;
        total += counts[r];
    }
    int *in = malloc((size_t)(total + 1) * sizeof(int)),
        *out = malloc((size_t)(total + 1) * sizeof(int));
    for (int i = 0; i < total; i++)
        in[i] = sme * 100 + i;
    out[counts[sme]] = 4242; /* past the result: untouched */
    if (in_place) {
        MPI_Reduce_scatter(MPI_IN_PLACE, in, counts, MPI_INT, MPI_SUM, c);
        memcpy(out, in, (size_t)counts[sme] * sizeof(int));
    } else {
        MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, c);
        expect(out[counts[sme]] == 4242, "MPI_Reduce_scatter wrote past its count", 0);
    }
    count_call(kind, RS, true);
    for (int i = 0; i < counts[sme]; i++)
        expect(out[i] == 100 * sn * (sn - 1) / 2 + sn * (before + i), "MPI_Reduce_scatter",
               (size_t)i);
    free(in);
    free(out);
    free(counts);
}

/* Rank s's element k for rank d. */
static int a2a_value(int s, int d, int k)
{
    return s * 10000 + d * 100 + k;
}

/* Counts of the alltoallv: what s sends d. */
static int a2a_count(int s, int d)
{
    return (s + 2 * d) % 4; /* 0 .. 3 */
}

/* MPI_Alltoallv on MPI_COMM_WORLD: gaps between blocks, receive blocks in
 * reverse order; t_kind 0 int, 1 double, 2 int strided on odd ranks. */
static void check_alltoallv(int t_kind, bool in_place, bool nonblocking, MPI_Request *req,
                            void **keep)
{
    int *sc = malloc(4 * (size_t)n * sizeof(int)), *sd = sc + n, *rc = sc + 2 * n, *rd = sc + 3 * n;
    int stotal = 0, rtotal = 0;
    for (int j = 0; j < n; j++) {
        sc[j] = a2a_count(me, j);
        sd[j] = stotal + 1; /* one slot of gap */
        stotal += sc[j] + 1;
    }
    for (int j = n - 1; j >= 0; j--) {
        rc[j] = a2a_count(j, me);
        rd[j] = rtotal + 2;
        rtotal += rc[j] + 2;
    }
    bool strided = t_kind == 2 && me % 2;
    size_t es = t_kind == 1 ? sizeof(double) : sizeof(int), stride = strided ? 2 : 1;
    size_t slots = (size_t)(stotal > rtotal ? stotal : rtotal) * stride + 2;
    unsigned char *s = calloc(slots, es), *r = calloc(slots, es);
    MPI_Datatype t = t_kind == 1 ? MPI_DOUBLE : MPI_INT, rt = t;
    if (strided) {
        MPI_Datatype v;
        MPI_Type_vector(1, 1, 2, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, 2 * sizeof(int), &rt);
        MPI_Type_commit(&rt);
        MPI_Type_free(&v);
        t = rt;
    }
    for (size_t i = 0; i < slots; i++) {
        if (es == 4)
            ((int *)r)[i] = -7;
        else
            ((double *)r)[i] = -7;
    }
    for (int j = 0; j < n; j++)
        for (int k = 0; k < sc[j]; k++) {
            size_t at = (size_t)(sd[j] + k) * stride;
            if (es == 4)
                ((int *)s)[at] = a2a_value(me, j, k);
            else
                ((double *)s)[at] = a2a_value(me, j, k) + 0.25;
        }
    const char *what = in_place      ? "MPI_Alltoallv in place"
                       : nonblocking ? "MPI_Ialltoallv"
                                     : "MPI_Alltoallv";
    if (in_place) {
        /* Symmetric counts for in place (MPI requires sendcounts to be the
         * receive counts): each pair swaps min(count) elements. */
        rtotal = 0;
        for (int j = 0; j < n; j++) {
            rc[j] = a2a_count(me, j) < a2a_count(j, me) ? a2a_count(me, j) : a2a_count(j, me);
            rd[j] = rtotal;
            rtotal += rc[j];
        }
        for (int j = 0; j < n; j++)
            for (int k = 0; k < rc[j]; k++)
                ((int *)r)[rd[j] + k] = a2a_value(me, j, k);
        MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD);
        count_call(WORLD, ALLTOALLV, true);
        for (int j = 0; j < n; j++)
            for (int k = 0; k < rc[j]; k++)
                expect(((int *)r)[rd[j] + k] == a2a_value(j, me, k), what, (size_t)(rd[j] + k));
    } else if (nonblocking) {
        MPI_Ialltoallv(s, sc, sd, t, r, rc, rd, t, MPI_COMM_WORLD, req);
        count_call(WORLD, IALLTOALLV, true);
        keep[0] = s;
        keep[1] = r;
        keep[2] = sc;
        return; /* checked by check_nonblocking after the wait */
    } else {
        MPI_Alltoallv(s, sc, sd, t, r, rc, rd, t, MPI_COMM_WORLD);
        count_call(WORLD, ALLTOALLV, true);
        for (int j = 0; j < n; j++) {
            for (int k = 0; k < rc[j]; k++) {
                size_t at = (size_t)(rd[j] + k) * stride;
                bool ok = es == 4 ? ((int *)r)[at] == a2a_value(j, me, k)
                                  : ((double *)r)[at] == a2a_value(j, me, k) + 0.25;
                expect(ok, what, at);
            }
            /* The gap before each block is untouched. */
            size_t gap = (size_t)(rd[j] - 1) * stride;
            expect(es == 4 ? ((int *)r)[gap] == -7 : ((double *)r)[gap] == -7, what, gap);
        }
    }
    if (strided)
        MPI_Type_free(&rt);
    free(s);
    free(r);
    free(sc);
}

static void check_alltoallw(bool mixed)
{
    int *sc = malloc(4 * (size_t)n * sizeof(int)), *sd = sc + n, *rc = sc + 2 * n, *rd = sc + 3 * n;
    MPI_Datatype *st = malloc(2 * (size_t)n * sizeof *st), *rt = st + n;
    int *s = malloc((size_t)n * 2 * sizeof(int)), *r = malloc((size_t)n * 2 * sizeof(int));
    MPI_Datatype one_int; /* the signature of MPI_INT, not predefined */
    MPI_Type_contiguous(1, MPI_INT, &one_int);
    MPI_Type_commit(&one_int);
    for (int j = 0; j < n; j++) {
        sc[j] = rc[j] = 2;
        sd[j] = (n - 1 - j) * 2 * (int)sizeof(int); /* bytes, reversed */
        rd[j] = j * 2 * (int)sizeof(int);
        /* Mixed: a derived type to odd peers, MPI_INT to even ones. */
        st[j] = mixed && j % 2 ? one_int : MPI_INT;
        rt[j] = mixed && me % 2 ? one_int : MPI_INT;
        s[2 * (n - 1 - j)] = a2a_value(me, j, 0);
        s[2 * (n - 1 - j) + 1] = a2a_value(me, j, 1);
    }
    MPI_Alltoallw(s, sc, sd, st, r, rc, rd, rt, MPI_COMM_WORLD);
    count_call(WORLD, ALLTOALLW, !mixed);
    for (int j = 0; j < n; j++)
        for (int k = 0; k < 2; k++)
            expect(r[2 * j + k] == a2a_value(j, me, k),
                   mixed ? "MPI_Alltoallw mixed" : "MPI_Alltoallw", (size_t)(2 * j + k));
    MPI_Type_free(&one_int);
    free(s);
    free(r);
    free(st);
    free(sc);
}

static void check_nonblocking(void)
{
    enum { NREQ = 10 };
    MPI_Request req[NREQ];
    long ar_in[4], ar_out[4], red_out[2] = {0, 0}, red_in[2] = {me, 2L * me};
    double bc[5];
    int ag[64], rsb_in[64 * 2], rsb_out[2], rs_in[64 * 3], rs_out[3], a2a_in[64], a2a_out[64];
    int *rs_counts = malloc((size_t)n * sizeof(int));
    void *keep[3];
    for (int k = 0; k < 4; k++)
        ar_in[k] = me * (k + 1);
    for (int k = 0; k < 5; k++)
        bc[k] = me == 1 % n ? 1.5 * k : -1;
    for (int j = 0; j < 2 * n; j++)
        rsb_in[j] = me + j;
    int rs_total = 0;
    for (int j = 0; j < n; j++) {
        rs_counts[j] = j % 2 ? 3 : 1;
        rs_total += rs_counts[j];
    }
    for (int j = 0; j < rs_total; j++)
        rs_in[j] = me * j;
    for (int j = 0; j < n; j++)
        a2a_in[j] = me * 100 + j;
    MPI_Iallreduce(ar_in, ar_out, 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &req[0]);
    MPI_Ibcast(bc, 5, MPI_DOUBLE, 1 % n, MPI_COMM_WORLD, &req[1]);
    MPI_Ireduce(red_in, red_out, 2, MPI_LONG, MPI_MAX, n - 1, MPI_COMM_WORLD, &req[2]);
    MPI_Iallgather(&me, 1, MPI_INT, ag, 1, MPI_INT, MPI_COMM_WORLD, &req[3]);
    MPI_Ireduce_scatter_block(rsb_in, rsb_out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[4]);
    MPI_Ireduce_scatter(rs_in, rs_out, rs_counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[5]);
    MPI_Ialltoall(a2a_in, 1, MPI_INT, a2a_out, 1, MPI_INT, MPI_COMM_WORLD, &req[6]);
    check_alltoallv(0, false, true, &req[7], keep);
    MPI_Ibarrier(MPI_COMM_WORLD, &req[8]);
    MPI_Ibarrier(MPI_COMM_WORLD, &req[9]);
    for (int k = IALLREDUCE; k <= IRS; k++)
        served[k]++;
    passed[IBARRIER] += 2; /* MPI_Ibarrier is always MPI's */
    int done = 0;
    while (!done)
        MPI_Test(&req[9], &done, MPI_STATUS_IGNORE);
    expect(req[9] == MPI_REQUEST_NULL, "MPI_Test of MPI_Ibarrier", 0);
    MPI_Waitall(NREQ - 1, req, MPI_STATUSES_IGNORE);
    long nn = (long)n * (n - 1) / 2;
    for (int k = 0; k < 4; k++)
        expect(ar_out[k] == nn * (k + 1), "MPI_Iallreduce", (size_t)k);
    for (int k = 0; k < 5; k++)
        expect(bc[k] == 1.5 * k, "MPI_Ibcast", (size_t)k);
    if (me == n - 1)
        for (int k = 0; k < 2; k++)
            expect(red_out[k] == (n - 1) * (k + 1L), "MPI_Ireduce", (size_t)k);
    for (int j = 0; j < n; j++)
        expect(ag[j] == j, "MPI_Iallgather", (size_t)j);
    for (int k = 0; k < 2; k++)
        expect(rsb_out[k] == nn + n * (2 * me + k), "MPI_Ireduce_scatter_block", (size_t)k);
    int before = 0;
    for (int j = 0; j < me; j++)
        before += rs_counts[j];
    for (int k = 0; k < rs_counts[me]; k++)
        expect(rs_out[k] == nn * (before + k), "MPI_Ireduce_scatter", (size_t)k);
    for (int j = 0; j < n; j++)
        expect(a2a_out[j] == j * 100 + me, "MPI_Ialltoall", (size_t)j);
    int *r = keep[1], *sc = keep[2], *rc = sc + 2 * n, *rd = sc + 3 * n;
    for (int j = 0; j < n; j++)
        for (int k = 0; k < rc[j]; k++)
            expect(r[rd[j] + k] == a2a_value(j, me, k), "MPI_Ialltoallv", (size_t)(rd[j] + k));
    free(keep[0]);
    free(keep[1]);
    free(keep[2]);
    free(rs_counts);
}

static int mismatch(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *c = calloc(4 * (size_t)n, sizeof(int)), *sd = c + n, *rc = c + 2 * n, *rd = c + 3 * n;
    int s[64] = {0}, r[64] = {0};
    for (int j = 0; j < n; j++) {
        c[j] = rc[j] = 1;
        sd[j] = rd[j] = 2 * j;
    }
    if (me == 1)
        c[0] = 2; /* rank 0 expects 1 */
    int rc1 = MPI_Alltoallv(s, c, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD);
    /* recvcounts must be alike on every rank: rank 1's are all 2, the
     * others' 1, 2, ..., 2, 3 (1 3 at 2 ranks; the same sum at any size;
     * small, so the ring of slots compares them). */
    for (int j = 0; j < n; j++)
        rc[j] = me == 1 ? 2 : j == 0 ? 1 : j == n - 1 ? 3 : 2;
    int rc3 = MPI_Reduce_scatter(s, r, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int v = 1, sum = 0;
    int rc2 = MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("pmpi_comms: rank %d: mismatch %s, reduce_scatter %s, then allreduce %d\n", me,
           rc1 == MPI_SUCCESS ? "succeeded" : "failed", rc3 == MPI_SUCCESS ? "succeeded" : "failed",
           rc2 == MPI_SUCCESS ? sum : -1);
    free(c);
    MPI_Finalize();
    return 0;
}

/* --sized: what s sends d (elements of MPI_INT; rank 0 sends itself none)
 * and element k of that block. pmpi_comms.sh writes the same matrix. */
static int sized_count(int s, int d)
{
    return (s + 2 * d) % 4 * 60000 + 7 * s + d;
}

static int sized_value(int s, int d, int k)
{
    return (s * 131 + d) * 1000003 + k;
}

static int sized(bool off)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *sc = malloc(4 * (size_t)n * sizeof(int)), *sd = sc + n, *rc = sc + 2 * n, *rd = sc + 3 * n;
    int stotal = 0, rtotal = 0;
    for (int j = 0; j < n; j++) {
        sc[j] = sized_count(me, j) + (off && me == 1 && j == 0);
        sd[j] = stotal + 1; /* one int of gap */
        stotal += sc[j] + 1;
    }
    for (int j = n - 1; j >= 0; j--) {
        rc[j] = sized_count(j, me) + (off && me == 0 && j == 1);
        rd[j] = rtotal + 2;
        rtotal += rc[j] + 2;
    }
    int *sb = calloc((size_t)stotal + 1, sizeof(int)),
        *rb = calloc((size_t)rtotal + 1, sizeof(int));
    for (int j = 0; j < n; j++)
        for (int k = 0; k < sc[j]; k++)
            sb[sd[j] + k] = sized_value(me, j, k);
    int status = MPI_SUCCESS;
    for (int it = 0; it < 2 && status == MPI_SUCCESS; it++) {
        for (int i = 0; i < rtotal; i++)
            rb[i] = -7;
        status = MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD);
        count_call(WORLD, ALLTOALLV, true);
        if (off)
            break;
        expect(status == MPI_SUCCESS, "MPI_Alltoallv (sized plan)", 0);
        for (int j = 0; j < n; j++) {
            for (int k = 0; k < rc[j]; k++)
                expect(rb[rd[j] + k] == sized_value(j, me, k), "MPI_Alltoallv (sized plan)",
                       (size_t)(rd[j] + k));
            expect(rb[rd[j] - 1] == -7 && rb[rd[j] - 2] == -7, "MPI_Alltoallv gap", (size_t)rd[j]);
        }
    }
    free(sb);
    free(rb);
    free(sc);
    if (off) {
        int v = 1, sum = 0;
        int rc2 = MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        printf("pmpi_comms: rank %d: sized %s, then allreduce %d\n", me,
               status == MPI_SUCCESS ? "succeeded" : "failed", rc2 == MPI_SUCCESS ? sum : -1);
        MPI_Finalize();
        return 0;
    }
    /* The tally's MPI_Allreduce goes to MPI: the forced plan (an
     * alltoall's) does not build allreduce. */
    passed[ALLREDUCE]++;
    return tally_finish("pmpi_comms", false);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n > 64) {
        if (me == 0)
            fprintf(stderr, "pmpi_comms: at most 64 ranks\n");
        MPI_Finalize();
        return 2;
    }
    if (argc > 1 && strcmp(argv[1], "--mismatch") == 0)
        return mismatch();
    if (argc > 1 && strcmp(argv[1], "--sized") == 0)
        return sized(argc > 2 && strcmp(argv[2], "--off") == 0);
    check_comms();
    check_rs(MPI_COMM_WORLD, WORLD, false, false);
    check_rs(MPI_COMM_WORLD, WORLD, true, false);
    check_rs(MPI_COMM_WORLD, WORLD, false, true);
    check_rs(MPI_COMM_WORLD, WORLD, true, true);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, me < n / 2, me, &half);
    check_rs(half, SPLIT, false, false);
    check_rs(half, SPLIT, false, true);
    MPI_Comm_free(&half);
    for (int t = 0; t < 3; t++)
        check_alltoallv(t, false, false, NULL, NULL);
    check_alltoallv(0, true, false, NULL, NULL);
    check_alltoallw(false);
    check_alltoallw(true);
    check_nonblocking();
    /* The final tally below is one more served MPI_Allreduce. */
    served[ALLREDUCE]++;
    return tally_finish("pmpi_comms", false);
}
