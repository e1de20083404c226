/* Calls of no data through libweft_mpi.so (tests/mpi/pmpi_case.sh, CTest
 * pmpi_zero_test), at the default pass limits (WEFT_PMPI_SMALL unset):
 *  - served at once, counted as served on MPI_COMM_WORLD's line, buffers
 *    untouched: MPI_Allreduce (also with sendbuf MPI_IN_PLACE), MPI_Reduce
 *    (also with MPI_IN_PLACE at the root), MPI_Bcast, MPI_Allgather and
 *    MPI_Alltoall (also in place), MPI_Reduce_scatter_block and
 *    MPI_Reduce_scatter with every count 0, on MPI_FLOAT, MPI_INT, MPI_CHAR
 *    and MPI_BYTE;
 *  - passed to MPI as small (no data), with the error class Open MPI
 *    reports (MPI_ERRORS_RETURN on MPI_COMM_WORLD; the class printed as a
 *    result line, which must be the same without the library):
 *    MPI_Allreduce into MPI_IN_PLACE, with MPI_BAND on MPI_FLOAT (an
 *    operator not valid for the type) and with MPI_OP_NULL; MPI_Reduce to
 *    a root out of range and into MPI_IN_PLACE; MPI_Bcast of MPI_IN_PLACE
 *    and to a root out of range; MPI_Allgather into MPI_IN_PLACE;
 *    MPI_Alltoall of a type never committed; MPI_Reduce_scatter into
 *    MPI_IN_PLACE; a broadcast to a root out of range on a duplicate;
 *    and valid calls of no data of a derived type, and MPI_Iallreduce;
 *  - served on a duplicate of MPI_COMM_WORLD (weft holds it) and on a
 *    second duplicate made after the first was freed, counted on
 *    MPI_COMM_WORLD's line as well. */
#define _POSIX_C_SOURCE 200809L /* unsetenv */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi_tally.h"

static char classes[512];
static size_t used;

/* Records the error class of rc as a result. */
static void result(const char *what, int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    used += (size_t)snprintf(classes + used, sizeof classes - used, "%s%s=%d", used ? " " : "",
                             what, cls);
}

static void expect_ok(const char *what, int rc)
{
    checks++;
    if (rc == MPI_SUCCESS)
        return;
    failures++;
    fprintf(stderr, "pmpi_zero: rank %d: %s returned %d\n", me, what, rc);
}

static void check_served(void)
{
    float fs[2] = {1, 2}, fr[2] = {3, 4};
    int is[2] = {5, 6}, ir[2] = {7, 8};
    char cs[2] = {'a', 'b'}, cr[2] = {'c', 'd'};
    int zeros[64] = {0};
    expect_ok("allreduce", MPI_Allreduce(fs, fr, 0, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    expect_ok("allreduce in place",
              MPI_Allreduce(MPI_IN_PLACE, fr, 0, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    served[ALLREDUCE] += 2;
    expect_ok("reduce", MPI_Reduce(is, ir, 0, MPI_INT, MPI_MAX, n - 1, MPI_COMM_WORLD));
    expect_ok("reduce in place",
              MPI_Reduce(me == 0 ? MPI_IN_PLACE : is, ir, 0, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    served[REDUCE] += 2;
    expect_ok("bcast", MPI_Bcast(cr, 0, MPI_CHAR, n - 1, MPI_COMM_WORLD));
    served[BCAST]++;
    expect_ok("allgather", MPI_Allgather(cs, 0, MPI_CHAR, cr, 0, MPI_CHAR, MPI_COMM_WORLD));
    expect_ok("allgather in place",
              MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, cr, 0, MPI_BYTE, MPI_COMM_WORLD));
    served[ALLGATHER] += 2;
    expect_ok("alltoall", MPI_Alltoall(cs, 0, MPI_BYTE, cr, 0, MPI_BYTE, MPI_COMM_WORLD));
    expect_ok("alltoall in place",
              MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ir, 0, MPI_INT, MPI_COMM_WORLD));
    served[ALLTOALL] += 2;
    expect_ok("reduce_scatter_block",
              MPI_Reduce_scatter_block(fs, fr, 0, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    served[RSB]++;
    expect_ok("reduce_scatter",
              MPI_Reduce_scatter(is, ir, zeros, MPI_INT, MPI_PROD, MPI_COMM_WORLD));
    served[RS]++;
    checks++;
    if (fs[0] != 1 || fs[1] != 2 || fr[0] != 3 || fr[1] != 4 || is[0] != 5 || is[1] != 6 ||
        ir[0] != 7 || ir[1] != 8 || cs[0] != 'a' || cs[1] != 'b' || cr[0] != 'c' || cr[1] != 'd') {
        failures++;
        fprintf(stderr, "pmpi_zero: rank %d: a call of no data changed a buffer\n", me);
    }
}

static void check_passed(void)
{
    float f[2] = {1, 2}, g[2] = {3, 4};
    int zeros[64] = {0};
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    result("allreduce_into_in_place",
           MPI_Allreduce(f, MPI_IN_PLACE, 0, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    result("allreduce_band_float", MPI_Allreduce(f, g, 0, MPI_FLOAT, MPI_BAND, MPI_COMM_WORLD));
    result("allreduce_op_null", MPI_Allreduce(f, g, 0, MPI_FLOAT, MPI_OP_NULL, MPI_COMM_WORLD));
    count_small(ALLREDUCE);
    count_small(ALLREDUCE);
    count_small(ALLREDUCE);
    result("reduce_root_out_of_range", MPI_Reduce(f, g, 0, MPI_FLOAT, MPI_SUM, n, MPI_COMM_WORLD));
    result("reduce_into_in_place",
           MPI_Reduce(f, MPI_IN_PLACE, 0, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD));
    count_small(REDUCE);
    count_small(REDUCE);
    result("bcast_in_place", MPI_Bcast(MPI_IN_PLACE, 0, MPI_INT, 0, MPI_COMM_WORLD));
    result("bcast_root_out_of_range", MPI_Bcast(g, 0, MPI_INT, -1, MPI_COMM_WORLD));
    count_small(BCAST);
    count_small(BCAST);
    result("allgather_into_in_place",
           MPI_Allgather(f, 0, MPI_FLOAT, MPI_IN_PLACE, 0, MPI_FLOAT, MPI_COMM_WORLD));
    count_small(ALLGATHER);
    MPI_Datatype loose;
    MPI_Type_contiguous(2, MPI_INT, &loose); /* never committed */
    result("alltoall_uncommitted", MPI_Alltoall(f, 0, loose, g, 0, loose, MPI_COMM_WORLD));
    count_small(ALLTOALL);
    MPI_Type_free(&loose);
    result("reduce_scatter_into_in_place",
           MPI_Reduce_scatter(f, MPI_IN_PLACE, zeros, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    count_small(RS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* On a communicator weft holds (a duplicate: its first call looks it
     * up, the next ones find it as the thread's last look-up): served at
     * once as on MPI_COMM_WORLD, a root checked against its size (the
     * last rank served, one past it passed with MPI's error class). */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    expect_ok("allreduce on a dup", MPI_Allreduce(f, g, 0, MPI_FLOAT, MPI_SUM, dup));
    expect_ok("allreduce on a dup again", MPI_Allreduce(f, g, 0, MPI_FLOAT, MPI_SUM, dup));
    served[ALLREDUCE] += 2;
    expect_ok("bcast on a dup", MPI_Bcast(g, 0, MPI_INT, n - 1, dup));
    served[BCAST]++;
    expect_ok("reduce_scatter on a dup", MPI_Reduce_scatter(f, g, zeros, MPI_FLOAT, MPI_MIN, dup));
    served[RS]++;
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    result("bcast_dup_root_out_of_range", MPI_Bcast(g, 0, MPI_INT, n, dup));
    count_small(BCAST);
    MPI_Comm_free(&dup);
    /* The freed handle's entry is gone: a call on a new duplicate (which
     * may reuse the handle) is looked up afresh, and served. */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    expect_ok("allgather on a new dup", MPI_Allgather(f, 0, MPI_FLOAT, g, 0, MPI_FLOAT, dup));
    served[ALLGATHER]++;
    MPI_Comm_free(&dup);
    checks++;
    if (f[0] != 1 || f[1] != 2 || g[0] != 3 || g[1] != 4) {
        failures++;
        fprintf(stderr, "pmpi_zero: rank %d: a call of no data on a dup changed a buffer\n", me);
    }

    /* Valid, but not served at once: a derived type, a non-blocking
     * call. */
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_CHAR, &pair);
    MPI_Type_commit(&pair);
    expect_ok("bcast of a derived type", MPI_Bcast(g, 0, pair, 0, MPI_COMM_WORLD));
    count_small(BCAST);
    MPI_Type_free(&pair);
    MPI_Request req;
    expect_ok("iallreduce", MPI_Iallreduce(f, g, 0, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req));
    expect_ok("iallreduce wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
    count_small(IALLREDUCE);
}

int main(int argc, char **argv)
{
    (void)count_call;            /* pmpi_tally.h: no calls on other kinds here */
    unsetenv("WEFT_PMPI_SMALL"); /* the default limits */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n > 64) {
        fprintf(stderr, "pmpi_zero: at most 64 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    check_served();
    check_passed();
    printf("pmpi_zero: rank %d expects result: %s\n", me, classes);
    const char *at = n <= 2 ? "1-2 ranks" : "3 or more ranks";
    for (int k = 0; k < NCOLL; k++)
        if (small_passed[k])
            printf("pmpi_zero: rank %d expects log: MPI_%s passed to MPI %ld time%s (no data, at "
                   "%s)\n",
                   me, names[k], small_passed[k], small_passed[k] == 1 ? "" : "s", at);
    return tally_finish("pmpi_zero", true);
}
