/* MPI_Init, MPI_Init_thread and MPI_Finalize interposed: the weft
 * communicator's life (see pmpi.h). Building it is collective, and so is
 * every decision about it: the ranks agree (PMPI_Allreduce, MIN) that each
 * can take part before building, and that each built it after, so either all
 * ranks serve collectives with weft or none does. */
#include <stdlib.h>
#include <string.h>

#include "run/pmpi/pmpi.h"
#include "run/pmpi/state.h"
#include "weft/comm_mpi.h"
#include "weft/log.h"

#define PMPI_EXPORT __attribute__((visibility("default")))

/* MPI never gives up on a late rank; weft's default 30 s deadline would fail
 * applications whose ranks reach a collective minutes apart. A dead peer is
 * still detected at once. WEFT_TIMEOUT overrides this. */
#define PMPI_TIMEOUT_MS (24u * 3600u * 1000u)

/* True when every rank passes true. */
static bool all_ranks(bool mine)
{
    int in = mine, out = 0;
    if (PMPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        return false;
    return out != 0;
}

/* Whether this rank can take part, from the environment and the thread
 * level; says why not in *why. */
static bool local_ready(int provided, weft_comm_config *cfg, const char **why)
{
    const char *level = getenv("WEFT_LOG");
    weft_log_level lv;
    if (level && *level) {
        if (weft_log_level_parse(level, &lv) == WEFT_OK)
            weft_log_set_level(lv);
        else
            weft_log(WEFT_LOG_WARN, "pmpi", "WEFT_LOG: unknown level '%s' ignored", level);
    }
    const char *onoff = getenv("WEFT_PMPI");
    if (onoff && (strcmp(onoff, "off") == 0 || strcmp(onoff, "0") == 0)) {
        *why = "WEFT_PMPI is off";
        return false;
    }
    if (provided == MPI_THREAD_MULTIPLE) {
        *why = "MPI_THREAD_MULTIPLE: a weft communicator serves one thread at a time";
        return false;
    }
    weft_comm_config_init(cfg);
    cfg->timeout_ms = PMPI_TIMEOUT_MS;
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_comm_config_from_env_options(cfg, &d) != WEFT_OK) {
        weft_log(WEFT_LOG_WARN, "pmpi", "rank %d: %s", weft__pmpi.rank, d.msg);
        *why = "bad weft settings in the environment";
        return false;
    }
    return true;
}

static void setup(int provided)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &weft__pmpi.rank);
    weft_comm_config cfg;
    const char *why = "another rank cannot use weft";
    if (!all_ranks(local_ready(provided, &cfg, &why))) {
        weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: weft off, every call goes to MPI: %s",
                 weft__pmpi.rank, why);
        return;
    }
    weft_comm *c = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    weft__pmpi_enter();
    weft_err e = weft_comm_init_mpi(MPI_COMM_WORLD, &cfg, &c, &d);
    weft__pmpi_leave();
    if (e)
        weft_log(WEFT_LOG_WARN, "pmpi", "rank %d: cannot build the weft communicator: %s",
                 weft__pmpi.rank, d.msg);
    if (!all_ranks(e == WEFT_OK)) {
        weft_comm_free(c);
        weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: weft off, every call goes to MPI",
                 weft__pmpi.rank);
        return;
    }
    weft__pmpi.comm = c;
    uint32_t n = weft_comm_size(c);
    weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: weft communicator on MPI_COMM_WORLD, %u ranks, %s",
             weft__pmpi.rank, n, weft_comm_transport(c, (weft_comm_rank(c) + 1) % n));
}

PMPI_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc != MPI_SUCCESS) return rc;
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    setup(provided);
    return MPI_SUCCESS;
}

PMPI_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc != MPI_SUCCESS) return rc;
    setup(*provided);
    return MPI_SUCCESS;
}

PMPI_EXPORT int MPI_Finalize(void)
{
    weft__pmpi_report();
    weft_comm *c = weft__pmpi.comm;
    weft__pmpi.comm = NULL;
    weft_comm_free(c);
    return PMPI_Finalize();
}
