/* Communicators freed and their handles reused, for libweft_mpi.so
 * (tests/mpi/pmpi_case.sh, CTest pmpi_handles_test).
 *
 * Open MPI gives a new communicator the handle of one just freed. The first
 * version of the library did not intercept MPI_Comm_disconnect, so the weft
 * side of a disconnected 4-rank duplicate stayed under its handle and an
 * MPI_Allreduce on the next communicator, a 2-rank split with that handle,
 * summed over 4 ranks.
 *
 * Rounds of: make a communicator (MPI_Comm_dup, MPI_Comm_split,
 * MPI_Comm_create, MPI_Comm_split_type in turn), MPI_Allreduce on it, free
 * it (MPI_Comm_free, MPI_Comm_disconnect, or PMPI_Comm_free called by the
 * program itself, as Fortran bindings do, bypassing the library), then make
 * a smaller one (pairs of ranks; single ranks at 2 ranks) and
 * MPI_Allreduce on it: the sum over its members, served. Then a
 * communicator from MPI_Cart_create (which the library does not adopt)
 * after a freed duplicate: its MPI_Allreduce is passed to MPI, right.
 * Rank 0 prints how many new handles reused a freed one.
 * Usage: pmpi_handles */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pmpi_tally.h"

static void expect(bool ok, const char *what, long got, long want)
{
    checks++;
    if (ok)
        return;
    failures++;
    if (failures <= 10)
        fprintf(stderr, "pmpi_handles: rank %d: %s: %ld, want %ld\n", me, what, got, want);
}

/* The sum of world rank + 1 over comm's members, by MPI_Allreduce, checked
 * against the members MPI lists. */
static void sum_on(MPI_Comm comm, int kind, bool by_weft, const char *what)
{
    MPI_Group g, wg;
    int size;
    MPI_Comm_size(comm, &size);
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    long want = 0;
    for (int i = 0; i < size; i++) {
        int w;
        MPI_Group_translate_ranks(g, 1, &i, wg, &w);
        want += w + 1;
    }
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    long mine = me + 1, got = -1;
    MPI_Allreduce(&mine, &got, 1, MPI_LONG, MPI_SUM, comm);
    count_call(kind, ALLREDUCE, by_weft);
    expect(got == want, what, got, want);
}

static MPI_Comm freed[64];
static int nfreed, reused, made;

static void note_new(MPI_Comm c)
{
    made++;
    for (int i = 0; i < nfreed; i++)
        if (freed[i] == c) {
            reused++;
            return;
        }
}

static void release(MPI_Comm *c, int how)
{
    if (nfreed < 64)
        freed[nfreed++] = *c;
    if (how == 0)
        MPI_Comm_free(c);
    else if (how == 1)
        MPI_Comm_disconnect(c);
    else
        PMPI_Comm_free(c);
}

static const char *const makers[4] = {"dup", "split", "create", "split_type"};
static const char *const freers[3] = {"MPI_Comm_free", "MPI_Comm_disconnect", "PMPI_Comm_free"};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    char what[128];
    for (int round = 0; round < 12; round++) {
        int maker = round % 4, how = round % 3;
        MPI_Comm a = MPI_COMM_NULL, b;
        int kind = DUP;
        if (maker == 0) {
            MPI_Comm_dup(MPI_COMM_WORLD, &a);
        } else if (maker == 1) {
            MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, &a); /* every rank, reversed */
            kind = SPLIT;
        } else if (maker == 2) {
            /* Every rank but the last (all of them at 2 ranks). */
            MPI_Group wg, g;
            int last = n - 1;
            MPI_Comm_group(MPI_COMM_WORLD, &wg);
            MPI_Group_excl(wg, n > 2 ? 1 : 0, &last, &g);
            MPI_Comm_create(MPI_COMM_WORLD, g, &a);
            MPI_Group_free(&g);
            MPI_Group_free(&wg);
            kind = CREATE;
        } else {
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &a);
            kind = SPLIT_TYPE;
        }
        if (a != MPI_COMM_NULL) {
            note_new(a);
            snprintf(what, sizeof what, "round %d: MPI_Allreduce on a %s communicator", round,
                     makers[maker]);
            sum_on(a, kind, true, what);
            release(&a, how);
        }
        /* The next communicator: pairs of ranks (single ranks at 2). */
        MPI_Comm_split(MPI_COMM_WORLD, n > 2 ? me / 2 : me, me, &b);
        note_new(b);
        snprintf(what, sizeof what, "round %d: MPI_Allreduce on a split made after %s", round,
                 freers[how]);
        sum_on(b, SPLIT, true, what);
        MPI_Comm_free(&b);
    }
    /* A communicator the library does not adopt, after a freed duplicate. */
    for (int how = 0; how < 3; how++) {
        MPI_Comm a, cart;
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        sum_on(a, DUP, true, "MPI_Allreduce on a duplicate");
        release(&a, how);
        int dims[1] = {n}, periods[1] = {0};
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
        note_new(cart);
        snprintf(what, sizeof what, "MPI_Allreduce on a cartesian communicator after %s",
                 freers[how]);
        sum_on(cart, OTHER, false, what);
        MPI_Comm_free(&cart);
    }
    if (me == 0)
        printf("pmpi_handles: %d of %d new communicators reused a freed handle\n", reused, made);
    served[ALLREDUCE]++; /* the tally below */
    return tally_finish("pmpi_handles", false);
}
