/* An ordinary MPI program that checks the six collectives libweft_mpi.so
 * serves (MPI_Allreduce, MPI_Allgather, MPI_Reduce_scatter_block, MPI_Bcast,
 * MPI_Reduce, MPI_Alltoall) element by element, over several datatypes,
 * operators, sizes, roots and MPI_IN_PLACE, plus calls that the library must
 * pass to MPI (MPI_COMM_SELF, a user operator, a type weft does not
 * reduce) and a non-contiguous datatype it packs. It knows nothing of weft: run
 * plainly it proves its own expectations; run with LD_PRELOAD it checks the
 * library. Every rank prints the number of calls it expects weft to serve
 * and to pass on, in the form of the library's finalize report, so that
 * tests/mpi/pmpi_test.sh can compare them. Exit status 0 when every check
 * on every rank passed.
 *
 * `pmpi_check --allreduce COUNT [MISFIT]` checks only MPI_Allreduce with
 * COUNT elements (every type and operator, in place and not), for runs with
 * a forced weft algorithm or plan, and then one int sum of MISFIT elements
 * that such a plan cannot run (counted as passed to MPI). Its tally uses
 * PMPI_Allreduce, so it is not counted. */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi_tally.h"

typedef struct dtype {
    MPI_Datatype t;
    size_t size;
    const char *name;
} dtype;

static void store(const dtype *t, void *buf, size_t i, double v)
{
    if (t->t == MPI_INT)
        ((int *)buf)[i] = (int)v;
    else if (t->t == MPI_UNSIGNED_CHAR)
        ((unsigned char *)buf)[i] = (unsigned char)v;
    else if (t->t == MPI_SHORT)
        ((short *)buf)[i] = (short)v;
    else if (t->t == MPI_INT64_T)
        ((int64_t *)buf)[i] = (int64_t)v;
    else if (t->t == MPI_FLOAT)
        ((float *)buf)[i] = (float)v;
    else
        ((double *)buf)[i] = v;
}

static double load(const dtype *t, const void *buf, size_t i)
{
    if (t->t == MPI_INT)
        return ((const int *)buf)[i];
    if (t->t == MPI_UNSIGNED_CHAR)
        return ((const unsigned char *)buf)[i];
    if (t->t == MPI_SHORT)
        return ((const short *)buf)[i];
    if (t->t == MPI_INT64_T)
        return (double)((const int64_t *)buf)[i];
    if (t->t == MPI_FLOAT)
        return ((const float *)buf)[i];
    return ((const double *)buf)[i];
}

/* Rank r's element i: small integers, so every sum, product and extreme is
 * exact in every type; products use 1 and 2 only. */
static double value(MPI_Op op, int r, size_t i)
{
    if (op == MPI_PROD)
        return 1 + (double)((r + i) % 2);
    return (double)((r * 7 + i * 3) % 11);
}

static double combine(MPI_Op op, double a, double b)
{
    if (op == MPI_SUM)
        return a + b;
    if (op == MPI_PROD)
        return a * b;
    if (op == MPI_MIN)
        return a < b ? a : b;
    return a > b ? a : b;
}

static double expected(MPI_Op op, size_t i)
{
    double acc = value(op, 0, i);
    for (int r = 1; r < n; r++)
        acc = combine(op, acc, value(op, r, i));
    return acc;
}

static void expect(bool ok, const char *what, const char *tname, size_t count, size_t i)
{
    checks++;
    if (ok)
        return;
    failures++;
    if (failures <= 10)
        fprintf(stderr, "pmpi_check: rank %d: %s %s count %zu: element %zu wrong\n", me, what,
                tname, count, i);
}

static const char *op_name(MPI_Op op)
{
    return op == MPI_SUM ? "sum" : op == MPI_PROD ? "prod" : op == MPI_MIN ? "min" : "max";
}

static void check_reductions(const dtype *t, MPI_Op op, size_t count)
{
    size_t es = t->size;
    unsigned char *in = calloc((size_t)n * count + 1, es), *out = calloc((size_t)n * count + 1, es);
    char what[64];

    /* MPI_Allreduce, out of place and in place. */
    for (size_t i = 0; i < count; i++)
        store(t, in, i, value(op, me, i));
    MPI_Allreduce(in, out, (int)count, t->t, op, MPI_COMM_WORLD);
    served[ALLREDUCE]++;
    snprintf(what, sizeof what, "MPI_Allreduce %s", op_name(op));
    for (size_t i = 0; i < count; i++)
        expect(load(t, out, i) == expected(op, i), what, t->name, count, i);
    MPI_Allreduce(MPI_IN_PLACE, in, (int)count, t->t, op, MPI_COMM_WORLD);
    served[ALLREDUCE]++;
    snprintf(what, sizeof what, "MPI_Allreduce in place %s", op_name(op));
    for (size_t i = 0; i < count; i++)
        expect(load(t, in, i) == expected(op, i), what, t->name, count, i);

    /* MPI_Reduce_scatter_block: count per rank. */
    for (size_t i = 0; i < (size_t)n * count; i++)
        store(t, in, i, value(op, me, i));
    MPI_Reduce_scatter_block(in, out, (int)count, t->t, op, MPI_COMM_WORLD);
    served[RSB]++;
    snprintf(what, sizeof what, "MPI_Reduce_scatter_block %s", op_name(op));
    for (size_t i = 0; i < count; i++)
        expect(load(t, out, i) == expected(op, (size_t)me * count + i), what, t->name, count, i);
    MPI_Reduce_scatter_block(MPI_IN_PLACE, in, (int)count, t->t, op, MPI_COMM_WORLD);
    served[RSB]++;
    snprintf(what, sizeof what, "MPI_Reduce_scatter_block in place %s", op_name(op));
    for (size_t i = 0; i < count; i++)
        expect(load(t, in, i) == expected(op, (size_t)me * count + i), what, t->name, count, i);

    /* MPI_Reduce to the first and the last rank; the last in place. */
    for (int root = 0; root<n; root += n> 1 ? n - 1 : 1) {
        bool in_place = root == n - 1 && n > 1;
        for (size_t i = 0; i < count; i++) {
            store(t, in, i, value(op, me, i));
            store(t, out, i, 99);
        }
        if (in_place && me == root)
            MPI_Reduce(MPI_IN_PLACE, in, (int)count, t->t, op, root, MPI_COMM_WORLD);
        else
            MPI_Reduce(in, out, (int)count, t->t, op, root, MPI_COMM_WORLD);
        served[REDUCE]++;
        snprintf(what, sizeof what, "MPI_Reduce%s %s root %d", in_place ? " in place" : "",
                 op_name(op), root);
        const unsigned char *res = in_place ? in : out;
        for (size_t i = 0; i < count; i++) {
            if (me == root)
                expect(load(t, res, i) == expected(op, i), what, t->name, count, i);
            else if (!in_place)
                expect(load(t, out, i) == 99, what, t->name, count, i);
        }
    }
    free(in);
    free(out);
}

/* Byte pattern of rank r's block, element i. */
static int pattern(int r, size_t i)
{
    return (int)((r * 1000003u + i * 7u) & 0x7fffffff);
}

static void check_moves(size_t count)
{
    size_t total = (size_t)n * count;
    int *in = calloc(total + 1, sizeof(int)), *out = calloc(total + 1, sizeof(int));

    /* MPI_Allgather of ints, then in place. */
    for (size_t i = 0; i < count; i++)
        in[i] = pattern(me, i);
    MPI_Allgather(in, (int)count, MPI_INT, out, (int)count, MPI_INT, MPI_COMM_WORLD);
    served[ALLGATHER]++;
    for (size_t i = 0; i < total; i++)
        expect(out[i] == pattern((int)(i / count), i % count), "MPI_Allgather", "int", count, i);
    memset(out, 0, total * sizeof(int));
    for (size_t i = 0; i < count; i++)
        out[(size_t)me * count + i] = pattern(me, i);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, (int)count, MPI_INT, MPI_COMM_WORLD);
    served[ALLGATHER]++;
    for (size_t i = 0; i < total; i++)
        expect(out[i] == pattern((int)(i / count), i % count), "MPI_Allgather in place", "int",
               count, i);

    /* MPI_Bcast from every rank, as ints and as bytes. */
    for (int root = 0; root < n; root++) {
        for (size_t i = 0; i < count; i++)
            in[i] = me == root ? pattern(root, i) : -1;
        MPI_Bcast(in, (int)count, MPI_INT, root, MPI_COMM_WORLD);
        served[BCAST]++;
        for (size_t i = 0; i < count; i++)
            expect(in[i] == pattern(root, i), "MPI_Bcast", "int", count, i);
    }
    memset(out, me == 0 ? 0x5a : 0, count * sizeof(int));
    MPI_Bcast(out, (int)(count * sizeof(int)), MPI_BYTE, 0, MPI_COMM_WORLD);
    served[BCAST]++;
    for (size_t i = 0; i < count * sizeof(int); i++)
        expect(((unsigned char *)out)[i] == 0x5a, "MPI_Bcast", "byte", count, i);

    /* MPI_Alltoall: the block rank me sends to rank d holds pattern(me*n+d). */
    for (size_t i = 0; i < total; i++)
        in[i] = pattern(me * n + (int)(i / count), i % count);
    MPI_Alltoall(in, (int)count, MPI_INT, out, (int)count, MPI_INT, MPI_COMM_WORLD);
    served[ALLTOALL]++;
    for (size_t i = 0; i < total; i++)
        expect(out[i] == pattern((int)(i / count) * n + me, i % count), "MPI_Alltoall", "int",
               count, i);
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, in, (int)count, MPI_INT, MPI_COMM_WORLD);
    served[ALLTOALL]++;
    for (size_t i = 0; i < total; i++)
        expect(in[i] == pattern((int)(i / count) * n + me, i % count), "MPI_Alltoall in place",
               "int", count, i);
    free(in);
    free(out);
}

static void user_max(void *in, void *inout, int *len, MPI_Datatype *t)
{
    for (int i = 0; i < *len; i++)
        if (((int *)in)[i] > ((int *)inout)[i])
            ((int *)inout)[i] = ((int *)in)[i];
}

/* Calls weft must pass to MPI, one on a duplicate of MPI_COMM_WORLD and
 * two derived types it serves, checked
 * the same way. */
static void check_fallthrough(void)
{
    int v = me + 1, sum = 0, mx = 0;
    int self = -1;
    MPI_Allreduce(&v, &self, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
    count_call(OTHER, ALLREDUCE, false);
    expect(self == v, "MPI_Allreduce on MPI_COMM_SELF", "int", 1, 0);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, dup);
    count_call(DUP, ALLREDUCE, true);
    expect(sum == n * (n + 1) / 2, "MPI_Allreduce on a duplicate", "int", 1, 0);
    MPI_Comm_free(&dup);

    MPI_Op op;
    MPI_Op_create(user_max, 1, &op);
    MPI_Allreduce(&v, &mx, 1, MPI_INT, op, MPI_COMM_WORLD);
    passed[ALLREDUCE]++;
    expect(mx == n, "MPI_Allreduce user op", "int", 1, 0);
    MPI_Op_free(&op);

    long double ld = me + 1, lsum = 0;
    MPI_Allreduce(&ld, &lsum, 1, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    passed[ALLREDUCE]++;
    expect(lsum == n * (n + 1) / 2, "MPI_Allreduce", "long double", 1, 0);

    /* Every other int of 8, from rank 0. */
    MPI_Datatype every_other;
    MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int buf[8];
    for (int i = 0; i < 8; i++)
        buf[i] = me == 0 ? 100 + i : -1;
    MPI_Bcast(buf, 1, every_other, 0, MPI_COMM_WORLD);
    served[BCAST]++; /* packed: moves serve any datatype */
    for (int i = 0; i < 8; i++)
        expect(buf[i] == (i % 2 == 0 || me == 0 ? 100 + i : -1), "MPI_Bcast", "vector", 8,
               (size_t)i);
    MPI_Type_free(&every_other);

    /* A contiguous derived type is served: it moves as bytes. */
    MPI_Datatype three;
    MPI_Type_contiguous(3, MPI_INT, &three);
    MPI_Type_commit(&three);
    int tri[6];
    for (int i = 0; i < 6; i++)
        tri[i] = me == n - 1 ? 7 * i : 0;
    MPI_Bcast(tri, 2, three, n - 1, MPI_COMM_WORLD);
    served[BCAST]++;
    for (int i = 0; i < 6; i++)
        expect(tri[i] == 7 * i, "MPI_Bcast", "contiguous(3, int)", 2, (size_t)i);
    MPI_Type_free(&three);
}

/* MPI_Allreduce only: count elements of every type with every operator. */
static void check_allreduce_only(const dtype *types, size_t ntypes, const MPI_Op *ops, size_t nops,
                                 size_t count)
{
    for (size_t t = 0; t < ntypes; t++) {
        for (size_t o = 0; o < nops; o++) {
            size_t es = types[t].size;
            unsigned char *in = calloc(count + 1, es), *out = calloc(count + 1, es);
            for (size_t i = 0; i < count; i++)
                store(&types[t], in, i, value(ops[o], me, i));
            MPI_Allreduce(in, out, (int)count, types[t].t, ops[o], MPI_COMM_WORLD);
            served[ALLREDUCE]++;
            for (size_t i = 0; i < count; i++)
                expect(load(&types[t], out, i) == expected(ops[o], i), "MPI_Allreduce",
                       types[t].name, count, i);
            MPI_Allreduce(MPI_IN_PLACE, in, (int)count, types[t].t, ops[o], MPI_COMM_WORLD);
            served[ALLREDUCE]++;
            for (size_t i = 0; i < count; i++)
                expect(load(&types[t], in, i) == expected(ops[o], i), "MPI_Allreduce in place",
                       types[t].name, count, i);
            free(in);
            free(out);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    bool only = argc >= 3 && strcmp(argv[1], "--allreduce") == 0;
    const dtype types[] = {
        {MPI_INT, sizeof(int), "int"},       {MPI_UNSIGNED_CHAR, 1, "unsigned char"},
        {MPI_SHORT, sizeof(short), "short"}, {MPI_INT64_T, 8, "int64_t"},
        {MPI_FLOAT, sizeof(float), "float"}, {MPI_DOUBLE, sizeof(double), "double"},
    };
    const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
    const size_t sizes[] = {1, 5, 1023, 20011};
    if (only) {
        check_allreduce_only(types, sizeof types / sizeof types[0], ops, sizeof ops / sizeof ops[0],
                             (size_t)strtoul(argv[2], NULL, 10));
        if (argc >= 4) {
            size_t m = (size_t)strtoul(argv[3], NULL, 10);
            int *in = calloc(m + 1, sizeof(int)), *out = calloc(m + 1, sizeof(int));
            for (size_t i = 0; i < m; i++)
                in[i] = (int)value(MPI_SUM, me, i);
            MPI_Allreduce(in, out, (int)m, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            passed[ALLREDUCE]++;
            for (size_t i = 0; i < m; i++)
                expect(out[i] == expected(MPI_SUM, i), "MPI_Allreduce misfit", "int", m, i);
            free(in);
            free(out);
        }
    }
    for (size_t t = 0; !only && t < sizeof types / sizeof types[0]; t++)
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
                check_reductions(&types[t], ops[o], sizes[s]);
    for (size_t s = 0; !only && s < sizeof sizes / sizeof sizes[0]; s++)
        check_moves(sizes[s]);
    if (!only) {
        check_moves(1u << 18);
        check_fallthrough();
        /* The final tally below is one more served MPI_Allreduce. */
        served[ALLREDUCE]++;
    }
    return tally_finish("pmpi_check", only);
}
