/* The process-wide state of the interposition library: the communicator,
 * the counters and the once-only log lines (see pmpi.h). MPI programs call
 * collectives from one thread at a time here (weft is off under
 * MPI_THREAD_MULTIPLE), so plain statics suffice. */
#include <stdio.h>

#include "run/pmpi/pmpi.h"
#include "run/pmpi/state.h"
#include "weft/log.h"

weft__pmpi_state weft__pmpi = {.comm = NULL, .rank = -1};

static const char *const coll_names[WEFT__PMPI_COLL_COUNT] = {
    [WEFT__PMPI_ALLREDUCE] = "MPI_Allreduce",
    [WEFT__PMPI_ALLGATHER] = "MPI_Allgather",
    [WEFT__PMPI_REDUCE_SCATTER_BLOCK] = "MPI_Reduce_scatter_block",
    [WEFT__PMPI_BCAST] = "MPI_Bcast",
    [WEFT__PMPI_REDUCE] = "MPI_Reduce",
    [WEFT__PMPI_ALLTOALL] = "MPI_Alltoall",
};

const char *weft__pmpi_coll_name(weft__pmpi_coll k)
{
    return (unsigned)k < WEFT__PMPI_COLL_COUNT ? coll_names[k] : "?";
}

weft_comm *weft__pmpi_comm(void)
{
    return weft__pmpi.comm;
}

bool weft__pmpi_usable(MPI_Comm comm)
{
    return weft__pmpi.comm && weft__pmpi.depth == 0 && comm == MPI_COMM_WORLD;
}

void weft__pmpi_enter(void)
{
    weft__pmpi.depth++;
}

void weft__pmpi_leave(void)
{
    weft__pmpi.depth--;
}

const char *weft__pmpi_unfit(weft_coll coll, size_t count, weft_dtype dtype, uint32_t root)
{
    static weft_diag d;
    weft_comm_choice ch;
    weft_diag_clear(&d);
    if (weft_comm_choose(weft__pmpi.comm, coll, count, dtype, root, &ch, &d) == WEFT_OK)
        return NULL;
    return d.msg[0] ? d.msg : weft_strerror(d.err);
}

void weft__pmpi_served(weft__pmpi_coll k)
{
    if (weft__pmpi.served[k]++ == 0)
        weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: %s served by weft", weft__pmpi.rank,
                 coll_names[k]);
}

void weft__pmpi_passed(weft__pmpi_coll k, const char *why)
{
    /* Calls made by weft's own MPI bootstrap are not the application's. */
    if (weft__pmpi.depth) return;
    if (weft__pmpi.passed[k]++ == 0)
        weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: %s passed to MPI (%s)", weft__pmpi.rank,
                 coll_names[k], why);
}

int weft__pmpi_fail(weft__pmpi_coll k, MPI_Comm comm, const weft_diag *d)
{
    weft_log(WEFT_LOG_ERROR, "pmpi", "rank %d: %s failed in weft: %s", weft__pmpi.rank,
             coll_names[k], d->msg[0] ? d->msg : weft_strerror(d->err));
    PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
    return MPI_ERR_OTHER;
}

void weft__pmpi_report(void)
{
    char line[512];
    size_t used = 0;
    for (int k = 0; k < WEFT__PMPI_COLL_COUNT; k++) {
        int n = snprintf(line + used, sizeof line - used, "%s%s %llu/%llu", k ? ", " : "",
                         coll_names[k] + 4, (unsigned long long)weft__pmpi.served[k],
                         (unsigned long long)weft__pmpi.passed[k]);
        if (n < 0 || (size_t)n >= sizeof line - used) break;
        used += (size_t)n;
    }
    weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: calls served by weft/passed to MPI: %s",
             weft__pmpi.rank, line);
}
