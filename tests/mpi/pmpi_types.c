/* Derived datatypes of every constructor against plain ones, for
 * libweft_mpi.so (tests/mpi/pmpi_case.sh, CTest pmpi_types_test).
 *
 * MPI lets the ranks of a move describe their data with different datatypes
 * whose type signatures match. Each type here has no gaps (size == extent
 * == true extent, lower bounds 0) and holds k ints or doubles, most of them
 * in another order than their addresses: a transposed matrix (a column
 * vector resized to one int and repeated; or an hvector of columns), an
 * indexed type with displacements {1, 0}, and one of each other
 * constructor (contiguous, hvector, indexed, hindexed, indexed_block,
 * hindexed_block, struct, subarray, create_resized, dup), plus some in
 * address order. The first version of the library moved such types as raw
 * bytes, so a rank receiving plain ints got the elements permuted.
 *
 * For every type, with the signature-order position of each element taken
 * from MPI_Pack of an index buffer (MPI's own answer): MPI_Bcast from the
 * first rank sending typed to plain receivers and from the last rank
 * sending plain to typed receivers; MPI_Allgather and MPI_Alltoall with
 * even ranks sending typed and odd ranks receiving typed, and in place (odd
 * ranks typed); MPI_Alltoallv with unequal counts and blocks in reverse
 * order, typed as MPI_Allgather. Every element and every untouched slot is
 * checked. All calls are served (moves serve any datatype).
 * Usage: pmpi_types (any number of ranks, at most 64) */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi_tally.h"

/* Elements of the type per call, at most. */
#define MAXK 12
#define PER 2   /* elements of the type per block */
#define SLACK 3 /* slots after the data, which must stay untouched */
#define UNSET -7.0

typedef struct ttype {
    const char *name;
    MPI_Datatype t, base;
    int k;         /* base elements per element */
    size_t bs;     /* bytes of one base element */
    int pos[MAXK]; /* signature position s -> index of base element */
} ttype;

static void expect(bool ok, const char *what, const char *tname, size_t i)
{
    checks++;
    if (ok)
        return;
    failures++;
    if (failures <= 10)
        fprintf(stderr, "pmpi_types: rank %d: %s with %s: element %zu wrong\n", me, what, tname, i);
}

static double get(const ttype *y, const void *buf, size_t i)
{
    if (y->base == MPI_INT)
        return ((const int *)buf)[i];
    return ((const double *)buf)[i];
}

static void put(const ttype *y, void *buf, size_t i, double v)
{
    if (y->base == MPI_INT)
        ((int *)buf)[i] = (int)v;
    else
        ((double *)buf)[i] = v;
}

/* The index of signature position s of a run of elements of y (typed) or
 * of base elements (plain). */
static size_t at(const ttype *y, bool typed, size_t s)
{
    if (!typed)
        return s;
    return s / (size_t)y->k * (size_t)y->k + (size_t)y->pos[s % (size_t)y->k];
}

/* Signature position s of the data from rank src to rank dst. */
static double value(int src, int dst, size_t s)
{
    return src * 10000.0 + dst * 1000.0 + (double)s;
}

static void *slots(const ttype *y, size_t nelem)
{
    void *b = malloc((nelem + SLACK) * y->bs);
    for (size_t i = 0; i < nelem + SLACK; i++)
        put(y, b, i, UNSET);
    return b;
}

/* Writes the run of `sig` signature positions starting at base element
 * `first`, from src to dst. */
static void fill(const ttype *y, bool typed, void *buf, size_t first, size_t sig, int src, int dst)
{
    for (size_t s = 0; s < sig; s++)
        put(y, buf, first + at(y, typed, s), value(src, dst, s));
}

static void check_run(const ttype *y, bool typed, const void *buf, size_t first, size_t sig,
                      int src, int dst, const char *what)
{
    for (size_t s = 0; s < sig; s++)
        expect(get(y, buf, first + at(y, typed, s)) == value(src, dst, s), what, y->name, s);
}

/* The slots of nelem base elements that no run covers stay UNSET; covered
 * marks them. */
static void check_rest(const ttype *y, const void *buf, size_t nelem, const bool *covered,
                       const char *what)
{
    for (size_t i = 0; i < nelem + SLACK; i++)
        if (i >= nelem || !covered[i])
            expect(get(y, buf, i) == UNSET, what, y->name, i);
}

static void check_bcast(const ttype *y)
{
    size_t sig = (size_t)y->k * PER;
    for (int pass = 0; pass < 2; pass++) {
        /* Pass 0: the first rank sends typed, the others receive plain;
         * pass 1: the last rank sends plain, the others receive typed. */
        int root = pass ? n - 1 : 0;
        bool typed = pass ? me != root : me == root;
        void *b = slots(y, sig);
        if (me == root)
            fill(y, typed, b, 0, sig, root, 0);
        MPI_Bcast(b, typed ? PER : (int)sig, typed ? y->t : y->base, root, MPI_COMM_WORLD);
        served[BCAST]++;
        check_run(y, typed, b, 0, sig, root, 0, pass ? "MPI_Bcast to typed" : "MPI_Bcast typed");
        bool covered[MAXK * PER] = {false};
        memset(covered, 1, sizeof covered);
        check_rest(y, b, sig, covered, "MPI_Bcast past the data");
        free(b);
    }
}

static void check_allgather(const ttype *y, bool in_place)
{
    size_t sig = (size_t)y->k * PER, total = sig * (size_t)n;
    bool st = me % 2 == 0 && !in_place, rt = me % 2 == 1;
    void *s = slots(y, sig), *r = slots(y, total);
    if (in_place)
        fill(y, rt, r, (size_t)me * sig, sig, me, 0);
    else
        fill(y, st, s, 0, sig, me, 0);
    MPI_Allgather(in_place ? MPI_IN_PLACE : s, st ? PER : (int)sig, st ? y->t : y->base, r,
                  rt ? PER : (int)sig, rt ? y->t : y->base, MPI_COMM_WORLD);
    served[ALLGATHER]++;
    const char *what = in_place ? "MPI_Allgather in place" : "MPI_Allgather";
    for (int src = 0; src < n; src++)
        check_run(y, rt, r, (size_t)src * sig, sig, src, 0, what);
    bool *covered = calloc(total, 1);
    memset(covered, 1, total);
    check_rest(y, r, total, covered, what);
    free(covered);
    free(s);
    free(r);
}

static void check_alltoall(const ttype *y, bool in_place)
{
    size_t sig = (size_t)y->k * PER, total = sig * (size_t)n;
    bool st = me % 2 == 0 && !in_place, rt = me % 2 == 1;
    void *s = slots(y, total), *r = slots(y, total);
    for (int d = 0; d < n; d++) {
        if (in_place)
            fill(y, rt, r, (size_t)d * sig, sig, me, d);
        else
            fill(y, st, s, (size_t)d * sig, sig, me, d);
    }
    MPI_Alltoall(in_place ? MPI_IN_PLACE : s, st ? PER : (int)sig, st ? y->t : y->base, r,
                 rt ? PER : (int)sig, rt ? y->t : y->base, MPI_COMM_WORLD);
    served[ALLTOALL]++;
    const char *what = in_place ? "MPI_Alltoall in place" : "MPI_Alltoall";
    for (int src = 0; src < n; src++)
        check_run(y, rt, r, (size_t)src * sig, sig, src, me, what);
    bool *covered = calloc(total, 1);
    memset(covered, 1, total);
    check_rest(y, r, total, covered, what);
    free(covered);
    free(s);
    free(r);
}

/* Elements of the type rank src sends rank dst in MPI_Alltoallv: 1 or 2,
 * none from a rank to itself when there are more than 2 ranks. */
static int v_count(int src, int dst)
{
    if (n > 2 && src == dst)
        return 0;
    return 1 + (src + 2 * dst) % 2;
}

static void check_alltoallv(const ttype *y)
{
    bool st = me % 2 == 0, rt = me % 2 == 1;
    size_t k = (size_t)y->k;
    int scount[64], sdispl[64], rcount[64], rdispl[64];
    size_t stotal = 0, rtotal = 0;
    /* Blocks in reverse rank order, in elements of the type. */
    for (int j = n - 1; j >= 0; j--) {
        sdispl[j] = (int)stotal;
        scount[j] = v_count(me, j);
        stotal += (size_t)scount[j];
        rdispl[j] = (int)rtotal;
        rcount[j] = v_count(j, me);
        rtotal += (size_t)rcount[j];
    }
    void *s = slots(y, stotal * k), *r = slots(y, rtotal * k);
    for (int j = 0; j < n; j++) {
        fill(y, st, s, (size_t)sdispl[j] * k, (size_t)scount[j] * k, me, j);
        if (!st) {
            scount[j] *= (int)k;
            sdispl[j] *= (int)k;
        }
    }
    int rc[64], rd[64];
    for (int j = 0; j < n; j++) {
        rc[j] = rt ? rcount[j] : rcount[j] * (int)k;
        rd[j] = rt ? rdispl[j] : rdispl[j] * (int)k;
    }
    MPI_Alltoallv(s, scount, sdispl, st ? y->t : y->base, r, rc, rd, rt ? y->t : y->base,
                  MPI_COMM_WORLD);
    served[ALLTOALLV]++;
    for (int j = 0; j < n; j++)
        check_run(y, rt, r, (size_t)rdispl[j] * k, (size_t)rcount[j] * k, j, me, "MPI_Alltoallv");
    bool *covered = calloc(rtotal * k + 1, 1);
    memset(covered, 1, rtotal * k);
    check_rest(y, r, rtotal * k, covered, "MPI_Alltoallv");
    free(covered);
    free(s);
    free(r);
}

/* Commits t as y, with the positions MPI_Pack gives an index buffer. */
static void add(ttype *ys, int *ny, const char *name, MPI_Datatype t, MPI_Datatype base)
{
    ttype *y = &ys[(*ny)++];
    MPI_Type_commit(&t);
    int size, bsize;
    MPI_Aint lb, extent, tlb, textent;
    MPI_Type_size(t, &size);
    MPI_Type_size(base, &bsize);
    MPI_Type_get_extent(t, &lb, &extent);
    MPI_Type_get_true_extent(t, &tlb, &textent);
    *y = (ttype){.name = name, .t = t, .base = base, .k = size / bsize, .bs = (size_t)bsize};
    /* Every type here is gapless: what the first version took for raw
     * bytes. */
    if (lb != 0 || tlb != 0 || extent != size || textent != size || y->k > MAXK) {
        fprintf(stderr, "pmpi_types: %s is not a gapless type of at most %d elements\n", name,
                MAXK);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double idx[MAXK], packed[MAXK];
    for (int i = 0; i < y->k; i++)
        put(y, idx, (size_t)i, i);
    int p = 0;
    MPI_Pack(idx, 1, t, packed, (int)sizeof packed, &p, MPI_COMM_WORLD);
    for (int s = 0; s < y->k; s++)
        y->pos[s] = (int)get(y, packed, (size_t)s);
}

/* The types: name, in order or not. */
static int make_types(ttype *ys)
{
    int ny = 0;
    const int N = 3;
    MPI_Datatype swap, t, col, u, sub[2];
    int one2[2] = {1, 1}, d10[2] = {1, 0};
    /* An indexed type with displacements {1, 0}: the ints swapped. */
    MPI_Type_indexed(2, one2, d10, MPI_INT, &swap);
    MPI_Type_dup(swap, &t);
    add(ys, &ny, "indexed {1,0}", t, MPI_INT);
    MPI_Type_contiguous(3, swap, &t);
    add(ys, &ny, "contiguous of indexed {1,0}", t, MPI_INT);
    MPI_Type_contiguous(4, MPI_INT, &t);
    add(ys, &ny, "contiguous (in order)", t, MPI_INT);
    MPI_Type_dup(swap, &t);
    add(ys, &ny, "dup of indexed {1,0}", t, MPI_INT);
    MPI_Type_dup(MPI_DOUBLE, &t);
    add(ys, &ny, "dup of MPI_DOUBLE (in order)", t, MPI_DOUBLE);
    /* The transpose of an N x N matrix: a column resized to one int,
     * N of them, resized to the whole matrix. */
    MPI_Type_vector(N, 1, N, MPI_INT, &col);
    MPI_Type_create_resized(col, 0, sizeof(int), &u);
    MPI_Type_contiguous(N, u, &t);
    MPI_Datatype tr;
    MPI_Type_create_resized(t, 0, (MPI_Aint)(N * N * sizeof(int)), &tr);
    MPI_Type_free(&t);
    add(ys, &ny, "vector transpose (create_resized)", tr, MPI_INT);
    MPI_Type_free(&u);
    MPI_Type_free(&col);
    /* The same of doubles as an hvector of columns one double apart. */
    MPI_Type_vector(N, 1, N, MPI_DOUBLE, &col);
    MPI_Type_create_hvector(N, 1, sizeof(double), col, &t);
    add(ys, &ny, "hvector transpose", t, MPI_DOUBLE);
    MPI_Type_free(&col);
    MPI_Type_vector(2, 2, 2, MPI_INT, &t);
    add(ys, &ny, "vector (in order)", t, MPI_INT);
    MPI_Aint h3[3] = {2 * sizeof(double), 0, sizeof(double)};
    int one3[3] = {1, 1, 1};
    MPI_Type_create_hindexed(3, one3, h3, MPI_DOUBLE, &t);
    add(ys, &ny, "hindexed {16,0,8}", t, MPI_DOUBLE);
    int d201[3] = {2, 0, 1};
    MPI_Type_create_indexed_block(3, 1, d201, MPI_INT, &t);
    add(ys, &ny, "indexed_block {2,0,1}", t, MPI_INT);
    MPI_Aint h2[2] = {2 * sizeof(int), 0};
    MPI_Type_create_hindexed_block(2, 2, h2, MPI_INT, &t);
    add(ys, &ny, "hindexed_block {8,0}", t, MPI_INT);
    MPI_Aint sd[2] = {sizeof(double), 0};
    MPI_Datatype dd[2] = {MPI_DOUBLE, MPI_DOUBLE};
    MPI_Type_create_struct(2, one2, sd, dd, &t);
    add(ys, &ny, "struct {8,0}", t, MPI_DOUBLE);
    MPI_Aint s0[2] = {0, sizeof(int)};
    MPI_Datatype ii[2] = {MPI_INT, MPI_INT};
    MPI_Type_create_struct(2, one2, s0, ii, &t);
    add(ys, &ny, "struct (in order)", t, MPI_INT);
    /* A 4 x 3 array: rows 2-3 then rows 0-1, each a subarray. */
    int sizes[2] = {4, 3}, subs[2] = {2, 3}, low[2] = {0, 0}, high[2] = {2, 0};
    MPI_Type_create_subarray(2, sizes, subs, high, MPI_ORDER_C, MPI_INT, &sub[0]);
    MPI_Type_create_subarray(2, sizes, subs, low, MPI_ORDER_C, MPI_INT, &sub[1]);
    MPI_Aint z2[2] = {0, 0};
    MPI_Type_create_struct(2, one2, z2, sub, &t);
    add(ys, &ny, "struct of subarrays (rows 2-3, 0-1)", t, MPI_INT);
    MPI_Type_free(&sub[0]);
    MPI_Type_free(&sub[1]);
    MPI_Type_create_subarray(2, sizes, sizes, low, MPI_ORDER_C, MPI_INT, &t);
    add(ys, &ny, "subarray, whole (in order)", t, MPI_INT);
    MPI_Type_create_subarray(2, sizes, sizes, low, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t);
    add(ys, &ny, "subarray, Fortran order (in order)", t, MPI_DOUBLE);
    MPI_Aint hsw[2] = {sizeof(int), 0};
    MPI_Type_create_hindexed(2, one2, hsw, MPI_INT, &u);
    MPI_Type_create_resized(u, 0, 2 * sizeof(int), &t);
    MPI_Type_free(&u);
    add(ys, &ny, "create_resized of hindexed {4,0}", t, MPI_INT);
    MPI_Type_free(&swap);
    return ny;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n > 64) {
        if (me == 0)
            fprintf(stderr, "pmpi_types: at most 64 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    ttype ys[32];
    int ny = make_types(ys);
    int reordered = 0;
    for (int i = 0; i < ny; i++) {
        for (int s = 0; s < ys[i].k; s++)
            if (ys[i].pos[s] != s) {
                reordered++;
                break;
            }
        check_bcast(&ys[i]);
        check_allgather(&ys[i], false);
        check_allgather(&ys[i], true);
        check_alltoall(&ys[i], false);
        check_alltoall(&ys[i], true);
        check_alltoallv(&ys[i]);
        MPI_Type_free(&ys[i].t);
    }
    if (me == 0)
        printf("pmpi_types: %d types, %d of them out of address order\n", ny, reordered);
    (void)count_call;    /* every call here is on MPI_COMM_WORLD */
    served[ALLREDUCE]++; /* the tally below */
    return tally_finish("pmpi_types", false);
}
