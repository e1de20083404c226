/* MPI_Init, MPI_Init_thread and MPI_Finalize interposed: the weft
 * communicators' life (see pmpi.h). Neither runs while another thread calls
 * MPI: MPI_Finalize is called "only after all the process threads have
 * completed their MPI calls" (MPI 3.1 section 12.4.2). Building it is collective, and so is
 * every decision about it: the ranks agree (PMPI_Allreduce, MIN) that each
 * can take part before building, and that each built it after, so either all
 * ranks serve collectives with weft or none does. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run/pmpi/pmpi.h"
#include "run/pmpi/state.h"
#include "run/pmpi/zero.h"
#include "weft/comm_mpi.h"
#include "weft/log.h"

#define PMPI_EXPORT __attribute__((visibility("default")))

/* MPI never gives up on a late rank; weft's default 30 s deadline would fail
 * applications whose ranks reach a collective minutes apart. A dead peer is
 * still detected at once. WEFT_TIMEOUT overrides this. */
#define PMPI_TIMEOUT_MS (24u * 3600u * 1000u)

/* The most weft communicators a process holds at once (each has its own
 * connections and shared segments); beyond, new communicators are MPI's
 * alone. WEFT_PMPI_COMMS overrides it. */
#define PMPI_MAX_COMMS 64u

/* True when every rank passes true. */
static bool all_ranks(bool mine)
{
    int in = mine, out = 0;
    if (PMPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        return false;
    return out != 0;
}

/* Whether this rank can take part, from the environment; says why not in
 * *why. Every thread level is served (see pmpi.h on threads). */
static bool local_ready(weft_comm_config *cfg, const char **why)
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
    weft__pmpi.max_comms = PMPI_MAX_COMMS;
    const char *most = getenv("WEFT_PMPI_COMMS");
    if (most && *most) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(most, &end, 10);
        if (errno || *end || v < 1 || v > 100000) {
            weft_log(WEFT_LOG_WARN, "pmpi", "rank %d: WEFT_PMPI_COMMS: '%s' is not 1 .. 100000",
                     weft__pmpi.rank, most);
            *why = "bad weft settings in the environment";
            return false;
        }
        weft__pmpi.max_comms = (uint32_t)v;
    }
    weft_diag d;
    weft_diag_clear(&d);
    if (!weft__pmpi_small_parse(getenv("WEFT_PMPI_SMALL"), &d)) {
        weft_log(WEFT_LOG_WARN, "pmpi", "rank %d: %s", weft__pmpi.rank, d.msg);
        *why = "bad weft settings in the environment";
        return false;
    }
    weft_comm_config_init(cfg);
    cfg->timeout_ms = PMPI_TIMEOUT_MS;
    if (weft_comm_config_from_env_options(cfg, &d) != WEFT_OK) {
        weft_log(WEFT_LOG_WARN, "pmpi", "rank %d: %s", weft__pmpi.rank, d.msg);
        *why = "bad weft settings in the environment";
        return false;
    }
    return true;
}

static void setup(void)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &weft__pmpi.rank);
    weft_comm_config cfg;
    const char *why = "another rank cannot use weft";
    if (!all_ranks(local_ready(&cfg, &why))) {
        weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: weft off, every call goes to MPI: %s",
                 weft__pmpi.rank, why);
        return;
    }
    if (!weft__pmpi_small_agree()) {
        weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: weft off, every call goes to MPI: %s",
                 weft__pmpi.rank, "the small-message sizes could not be agreed");
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
    bool added = weft__pmpi_add(MPI_COMM_WORLD, c, WEFT__PMPI_WORLD, false);
    if (!added)
        weft_log(WEFT_LOG_WARN, "pmpi", "rank %d: out of memory", weft__pmpi.rank);
    if (!all_ranks(added)) {
        if (added)
            weft__pmpi_remove(MPI_COMM_WORLD);
        weft_comm_free(c);
        weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: weft off, every call goes to MPI",
                 weft__pmpi.rank);
        return;
    }
    weft__pmpi_progress_init();
    weft__pmpi_set_on(true, &cfg);
    weft__pmpi_zero_arm(true);
    uint32_t n = weft_comm_size(c);
    weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: weft communicator on MPI_COMM_WORLD, %u ranks, %s",
             weft__pmpi.rank, n, weft_comm_transport(c, (weft_comm_rank(c) + 1) % n));
}

PMPI_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc != MPI_SUCCESS)
        return rc;
    setup();
    return MPI_SUCCESS;
}

PMPI_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc != MPI_SUCCESS)
        return rc;
    setup();
    return MPI_SUCCESS;
}

PMPI_EXPORT int MPI_Finalize(void)
{
    weft__pmpi_zero_arm(false);
    weft__pmpi_report();
    weft__pmpi_set_on(false, NULL);
    weft__pmpi_small_fini();
    weft__pmpi_cache_drop();
    /* The program's communicators it did not free, then MPI_COMM_WORLD's
     * (MPI_Finalize is called once every thread's calls are done). */
    weft__pmpi_enter();
    for (MPI_Comm m; (m = weft__pmpi_last()) != MPI_COMM_NULL;)
        weft_comm_free(weft__pmpi_remove(m));
    weft__pmpi_leave();
    weft__pmpi_progress_fini();
    free(weft__pmpi.comms);
    weft__pmpi.comms = NULL;
    weft__pmpi.cap = 0;
    return PMPI_Finalize();
}
