/* A second ordinary MPI program for libweft_mpi.so (tests/mpi/pmpi_layout.sh),
 * written for the acceptance audit of the run issue: what pmpi_check.c does
 * not cover.
 *
 *  - layouts: ranks that describe the same data with different datatypes,
 *    as MPI allows for moves when the type signatures match (even ranks
 *    plain ints, odd ranks a strided vector, a type with a lower bound):
 *    MPI_Bcast, MPI_Allgather and MPI_Alltoall, in place and not. Every rank
 *    must take the same path (weft packs the non-contiguous side; an
 *    earlier version passed those ranks to MPI and served the others, and
 *    the job hung).
 *  - sub-communicators: all six collectives on an MPI_Comm_split result
 *    (even and odd ranks) and on a split that keeps every rank: served on
 *    the split's weft communicator.
 *  - wrap-around: sums that overflow 32 and 64-bit types (MPI_UNSIGNED,
 *    MPI_UNSIGNED_LONG, MPI_LONG_LONG), compared with the sum modulo
 *    2^bits. (Not 8 and 16 bits: Open MPI 4.1's vectorised sums of
 *    MPI_SIGNED_CHAR and MPI_UNSIGNED_SHORT saturate from 32 elements on,
 *    127 + 127 = 127, so the program would fail without the library.)
 *  - large: 2^20 + 3 doubles summed in place, reduce-scatter in place on
 *    every rank, reduce to the last rank of 2^18 + 1 longs.
 *  - zero counts: each of the six served with count 0, buffers untouched.
 *  - passed operators: MPI_MAXLOC on MPI_2INT, MPI_BOR on MPI_UNSIGNED,
 *    MPI_LAND on MPI_C_BOOL.
 *  - a nonblocking MPI_Iallreduce (served, complete when it returns) around
 *    a served MPI_Allreduce.
 *
 * Every result is checked exactly. Like pmpi_check, every rank prints the
 * served/passed counts it expects in the form of the library's finalize
 * report; the last line is the tally. Exit 0 when every check passed. */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
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
        fprintf(stderr, "pmpi_layout: rank %d: %s: element %zu wrong\n", me, what, i);
}

/* Rank r's element i of a moved buffer. */
static int pattern(int r, size_t i)
{
    return (int)((r * 1000003u + i * 7u + 1u) & 0x7fffffff);
}

/* count ints 2 apart (extent: 2*count ints, so consecutive elements of
 * this type do not interleave). */
static MPI_Datatype strided(int count)
{
    MPI_Datatype v, r;
    MPI_Type_vector(count, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * count * (int)sizeof(int)), &r);
    MPI_Type_commit(&r);
    MPI_Type_free(&v);
    return r;
}

/* Rank parity decides the layout: even ranks plain MPI_INT x count, odd
 * ranks one strided element. Element i of block b sits at index
 * layout_index(b, i). */
static size_t layout_index(int count, size_t b, size_t i)
{
    return me % 2 ? b * 2 * (size_t)count + 2 * i : b * (size_t)count + i;
}

static void check_layouts(int count)
{
    MPI_Datatype st = strided(count);
    bool odd = me % 2;
    MPI_Datatype t = odd ? st : MPI_INT;
    int tc = odd ? 1 : count;
    size_t slots = (size_t)n * 2 * (size_t)count + 1;
    int *a = malloc(slots * sizeof(int)), *b = malloc(slots * sizeof(int));
    char what[96];

    /* MPI_Bcast from every root. */
    for (int root = 0; root < n; root++) {
        for (size_t i = 0; i < slots; i++)
            a[i] = -1;
        for (size_t i = 0; me == root && i < (size_t)count; i++)
            a[layout_index(count, 0, i)] = pattern(root, i);
        MPI_Bcast(a, tc, t, root, MPI_COMM_WORLD);
        served[BCAST]++;
        snprintf(what, sizeof what, "MPI_Bcast mixed layouts, count %d, root %d", count, root);
        for (size_t i = 0; i < slots; i++) {
            bool data = odd ? i % 2 == 0 && i < 2 * (size_t)count : i < (size_t)count;
            size_t e = odd ? i / 2 : i;
            expect(a[i] == (data ? pattern(root, e) : -1), what, i);
        }
    }

    /* A lower bound: the data starts 3 ints into the buffer on odd ranks. */
    MPI_Datatype shifted;
    int len = count, disp = 3;
    MPI_Type_indexed(1, &len, &disp, MPI_INT, &shifted);
    MPI_Type_commit(&shifted);
    for (size_t i = 0; i < slots; i++)
        a[i] = me == 0 ? pattern(0, i) : -1;
    MPI_Bcast(odd ? a : a + 3, odd ? 1 : count, odd ? shifted : MPI_INT, 0, MPI_COMM_WORLD);
    served[BCAST]++;
    snprintf(what, sizeof what, "MPI_Bcast with a lower bound, count %d", count);
    for (size_t i = 0; i < slots; i++) {
        bool data = i >= 3 && i < 3 + (size_t)count;
        expect(a[i] == (me == 0 || data ? pattern(0, i) : -1), what, i);
    }
    MPI_Type_free(&shifted);

    /* MPI_Allgather: send and receive in this rank's layout. */
    for (size_t i = 0; i < slots; i++)
        a[i] = b[i] = -1;
    for (size_t i = 0; i < (size_t)count; i++)
        a[layout_index(count, 0, i)] = pattern(me, i);
    MPI_Allgather(a, tc, t, b, tc, t, MPI_COMM_WORLD);
    served[ALLGATHER]++;
    snprintf(what, sizeof what, "MPI_Allgather mixed layouts, count %d", count);
    for (size_t r = 0; r < (size_t)n; r++)
        for (size_t i = 0; i < (size_t)count; i++)
            expect(b[layout_index(count, r, i)] == pattern((int)r, i), what, r * count + i);
    if (odd)
        for (size_t i = 1; i < 2 * (size_t)n * count; i += 2)
            expect(b[i] == -1, "MPI_Allgather holes untouched", i);
    /* The same in place. */
    for (size_t i = 0; i < slots; i++)
        b[i] = -1;
    for (size_t i = 0; i < (size_t)count; i++)
        b[layout_index(count, (size_t)me, i)] = pattern(me, i);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, tc, t, MPI_COMM_WORLD);
    served[ALLGATHER]++;
    snprintf(what, sizeof what, "MPI_Allgather in place, mixed layouts, count %d", count);
    for (size_t r = 0; r < (size_t)n; r++)
        for (size_t i = 0; i < (size_t)count; i++)
            expect(b[layout_index(count, r, i)] == pattern((int)r, i), what, r * count + i);

    /* MPI_Alltoall: block d of rank me holds pattern(me * n + d). Even
     * ranks send plain ints and receive strided, odd ranks the reverse. */
    MPI_Datatype rt = odd ? MPI_INT : st;
    int rc = odd ? count : 1;
    for (size_t i = 0; i < slots; i++)
        a[i] = b[i] = -1;
    for (size_t d = 0; d < (size_t)n; d++)
        for (size_t i = 0; i < (size_t)count; i++)
            a[layout_index(count, d, i)] = pattern(me * n + (int)d, i);
    MPI_Alltoall(a, tc, t, b, rc, rt, MPI_COMM_WORLD);
    served[ALLTOALL]++;
    snprintf(what, sizeof what, "MPI_Alltoall mixed layouts, count %d", count);
    for (size_t s = 0; s < (size_t)n; s++)
        for (size_t i = 0; i < (size_t)count; i++) {
            size_t at = odd ? s * count + i : s * 2 * (size_t)count + 2 * i;
            expect(b[at] == pattern((int)s * n + me, i), what, s * count + i);
        }
    /* In place, in this rank's layout. */
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, tc, t, MPI_COMM_WORLD);
    served[ALLTOALL]++;
    snprintf(what, sizeof what, "MPI_Alltoall in place, mixed layouts, count %d", count);
    for (size_t s = 0; s < (size_t)n; s++)
        for (size_t i = 0; i < (size_t)count; i++)
            expect(a[layout_index(count, s, i)] == pattern((int)s * n + me, i), what,
                   s * count + i);
    free(a);
    free(b);
    MPI_Type_free(&st);
}

/* All six on a communicator that is not MPI_COMM_WORLD: served. halves:
 * even and odd ranks apart, else every rank (still not MPI_COMM_WORLD). */
static void check_subcomm(bool halves)
{
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, halves ? me % 2 : 0, me, &sub);
    int sme, sn;
    MPI_Comm_rank(sub, &sme);
    MPI_Comm_size(sub, &sn);
    long v[3] = {me, 2 * me, 3 * me}, sum[3], all[64], gather[64], want = 0;
    int ranks[64];
    MPI_Allgather(&me, 1, MPI_INT, ranks, 1, MPI_INT, sub); /* world rank of each */
    count_call(SPLIT, ALLGATHER, true);
    for (int r = 0; r < sn; r++) {
        expect(ranks[r] == (halves ? 2 * r + me % 2 : r), "MPI_Allgather on a split", (size_t)r);
        want += ranks[r];
    }
    MPI_Allreduce(v, sum, 3, MPI_LONG, MPI_SUM, sub);
    count_call(SPLIT, ALLREDUCE, true);
    for (int k = 0; k < 3; k++)
        expect(sum[k] == (k + 1) * want, "MPI_Allreduce on a split", (size_t)k);
    long root_val = sme == sn - 1 ? 4242 : 0;
    MPI_Bcast(&root_val, 1, MPI_LONG, sn - 1, sub);
    count_call(SPLIT, BCAST, true);
    expect(root_val == 4242, "MPI_Bcast on a split", 0);
    long red = -1;
    MPI_Reduce(&v[0], &red, 1, MPI_LONG, MPI_MAX, 0, sub);
    count_call(SPLIT, REDUCE, true);
    if (sme == 0)
        expect(red == ranks[sn - 1], "MPI_Reduce on a split", 0);
    for (int r = 0; r < sn; r++)
        all[r] = me * 100 + r;
    MPI_Alltoall(all, 1, MPI_LONG, gather, 1, MPI_LONG, sub);
    count_call(SPLIT, ALLTOALL, true);
    for (int r = 0; r < sn; r++)
        expect(gather[r] == ranks[r] * 100 + sme, "MPI_Alltoall on a split", (size_t)r);
    long mine = -1;
    MPI_Reduce_scatter_block(all, &mine, 1, MPI_LONG, MPI_SUM, sub);
    count_call(SPLIT, RSB, true);
    expect(mine == 100 * want + (long)sn * sme, "MPI_Reduce_scatter_block on a split", 0);
    MPI_Comm_free(&sub);
}

/* Sums that wrap: every rank contributes the type's maximum minus its rank,
 * so the exact sum modulo 2^bits is known. */
static void check_wrap(void)
{
    enum { K = 37 };
    unsigned u[K], uu[K];
    unsigned long ul[K], uls[K];
    long long ll[K], lls[K];
    for (int i = 0; i < K; i++) {
        u[i] = 4294967295u - (unsigned)me - (unsigned)i;
        ul[i] = (unsigned long)-1 - (unsigned long)me - (unsigned long)i;
        ll[i] = INT64_MAX - me - i;
    }
    MPI_Allreduce(u, uu, K, MPI_UNSIGNED, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(ul, uls, K, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(ll, lls, K, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    served[ALLREDUCE] += 3;
    for (int i = 0; i < K; i++) {
        uint32_t w32 = 0;
        uint64_t w64 = 0, s64 = 0;
        for (int r = 0; r < n; r++) {
            w32 += 4294967295u - (uint32_t)r - (uint32_t)i;
            w64 += UINT64_MAX - (uint64_t)r - (uint64_t)i;
            s64 += (uint64_t)INT64_MAX - (uint64_t)r - (uint64_t)i;
        }
        expect(uu[i] == w32, "MPI_Allreduce unsigned wrap", (size_t)i);
        expect(uls[i] == w64, "MPI_Allreduce unsigned long wrap", (size_t)i);
        expect((uint64_t)lls[i] == s64, "MPI_Allreduce long long wrap", (size_t)i);
    }
}

static void check_large(void)
{
    size_t m = (1u << 20) + 3;
    double *x = malloc(m * sizeof *x);
    for (size_t i = 0; i < m; i++)
        x[i] = (double)((me * 5 + i) % 17);
    MPI_Allreduce(MPI_IN_PLACE, x, (int)m, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    served[ALLREDUCE]++;
    for (size_t i = 0; i < m; i++) {
        double w = 0;
        for (int r = 0; r < n; r++)
            w += (double)((r * 5 + i) % 17);
        expect(x[i] == w, "MPI_Allreduce in place, 2^20+3 doubles", i);
    }
    free(x);

    size_t per = 1009;
    long *y = malloc((size_t)n * per * sizeof *y);
    for (size_t i = 0; i < (size_t)n * per; i++)
        y[i] = (long)(i * 3 + (size_t)me);
    MPI_Reduce_scatter_block(MPI_IN_PLACE, y, (int)per, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    served[RSB]++;
    for (size_t i = 0; i < per; i++)
        expect(y[i] == (long)(((size_t)me * per + i) * 3), "MPI_Reduce_scatter_block in place", i);
    free(y);

    size_t q = (1u << 18) + 1;
    long *z = malloc(q * sizeof *z), *zr = malloc(q * sizeof *zr);
    for (size_t i = 0; i < q; i++) {
        z[i] = (long)(i % 1000) - me;
        zr[i] = -7;
    }
    MPI_Reduce(z, me == n - 1 ? zr : NULL, (int)q, MPI_LONG, MPI_SUM, n - 1, MPI_COMM_WORLD);
    served[REDUCE]++;
    for (size_t i = 0; me == n - 1 && i < q; i++)
        expect(zr[i] == (long)n * (long)(i % 1000) - (long)n * (n - 1) / 2,
               "MPI_Reduce to the last rank, 2^18+1 longs", i);
    free(z);
    free(zr);
}

static void check_zero(void)
{
    int s[2] = {11, 12}, r[2] = {21, 22};
    MPI_Allreduce(s, r, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allgather(s, 0, MPI_INT, r, 0, MPI_INT, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block(s, r, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Bcast(r, 0, MPI_INT, n - 1, MPI_COMM_WORLD);
    MPI_Reduce(s, r, 0, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Alltoall(s, 0, MPI_INT, r, 0, MPI_INT, MPI_COMM_WORLD);
    for (int k = 0; k <= ALLTOALL; k++)
        served[k]++;
    expect(s[0] == 11 && s[1] == 12 && r[0] == 21 && r[1] == 22, "count 0 left buffers", 0);
}

static void check_passed_ops(void)
{
    struct {
        int v, r;
    } in = {me % 3 == 0 ? 50 : me, me}, out = {-1, -1};
    MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
    passed[ALLREDUCE]++;
    int best = -1, at = -1;
    for (int r = 0; r < n; r++) {
        int v = r % 3 == 0 ? 50 : r;
        if (v > best)
            best = v, at = r;
    }
    expect(out.v == best && out.r == at, "MPI_Allreduce MAXLOC", 0);

    unsigned bits = 1u << (me % 32), orr = 0;
    MPI_Allreduce(&bits, &orr, 1, MPI_UNSIGNED, MPI_BOR, MPI_COMM_WORLD);
    passed[ALLREDUCE]++;
    unsigned want = 0;
    for (int r = 0; r < n; r++)
        want |= 1u << (r % 32);
    expect(orr == want, "MPI_Allreduce BOR", 0);

    bool t = me != n - 1, land = true;
    MPI_Allreduce(&t, &land, 1, MPI_C_BOOL, MPI_LAND, MPI_COMM_WORLD);
    passed[ALLREDUCE]++;
    expect(!land, "MPI_Allreduce LAND", 0); /* the last rank gives false */
}

static void check_nonblocking(void)
{
    int a = me + 1, asum = 0, b[5], bsum[5];
    MPI_Request req;
    MPI_Iallreduce(&a, &asum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    served[IALLREDUCE]++;
    for (int k = 0; k < 5; k++)
        b[k] = me * k;
    MPI_Allreduce(b, bsum, 5, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    served[ALLREDUCE]++;
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    expect(asum == n * (n + 1) / 2, "MPI_Iallreduce around a served call", 0);
    for (int k = 0; k < 5; k++)
        expect(bsum[k] == k * n * (n - 1) / 2, "MPI_Allreduce beside MPI_Iallreduce", (size_t)k);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n > 64) {
        if (me == 0)
            fprintf(stderr, "pmpi_layout: at most 64 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int counts[] = {1, 7, 1009, 65537};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
        check_layouts(counts[k]);
    check_subcomm(true);
    check_subcomm(false);
    check_wrap();
    check_large();
    check_zero();
    check_passed_ops();
    check_nonblocking();
    served[ALLREDUCE]++; /* the tally below */
    return tally_finish("pmpi_layout", false);
}
