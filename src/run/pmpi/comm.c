/* The communicator constructors interposed: MPI_Comm_dup, MPI_Comm_split,
 * MPI_Comm_split_type and MPI_Comm_create build, after MPI's, a weft
 * communicator over the new MPI communicator (weft_comm_init_mpi), so that
 * collectives on it are served (see pmpi.h); MPI_Comm_free and
 * MPI_Comm_disconnect free it.
 *
 * MPI reuses the handle of a freed communicator for the next one (Open MPI
 * 4.1 does at once), so a weft side that outlived its MPI communicator
 * would serve calls on an unrelated one with the old members: the first
 * version did not intercept MPI_Comm_disconnect, and an MPI_Allreduce on a
 * new 2-rank split summed over the 4 ranks of the disconnected duplicate.
 * Besides the two calls, every adopted communicator carries an attribute
 * whose delete callback MPI runs however the communicator goes (a Fortran
 * binding or the program calling PMPI_Comm_free itself, which bypass this
 * library), and a constructor drops any entry still under its new handle.
 *
 * Building is collective over the new communicator's members only (a rank
 * given MPI_COMM_NULL, from MPI_UNDEFINED or outside the group, takes no
 * part), and every decision in it is agreed among them (PMPI_Allreduce,
 * MIN): that each can hold another weft communicator (WEFT_PMPI_COMMS), that
 * each built it, and, with weft_comm_agree, that each sees the same members
 * in the same order (their ranks in MPI_COMM_WORLD), so that rank r of the
 * weft communicator is rank r of the MPI one on every member. Either every
 * member serves calls on it or none does. Inter-communicators are left to
 * MPI.
 *
 * A sub-communicator has other ranks than the fabric, plan and tuning table
 * given for the job (WEFT_FABRIC, WEFT_PLAN, WEFT_TUNING describe
 * MPI_COMM_WORLD), so it is built without them: its calls run the built-in
 * schedules, or WEFT_ALGO on switch:SIZE. A duplicate of MPI_COMM_WORLD
 * keeps them all. */
#include <pthread.h>
#include <stdlib.h>

#include "run/pmpi/pmpi.h"
#include "run/pmpi/state.h"
#include "weft/comm_mpi.h"
#include "weft/log.h"

#define PMPI_EXPORT __attribute__((visibility("default")))

/* True when every member of mc passes true. */
static bool all_members(MPI_Comm mc, bool mine)
{
    int in = mine, out = 0;
    if (PMPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, mc) != MPI_SUCCESS)
        return false;
    return out != 0;
}

/* Whether comm is MPI_COMM_WORLD or a duplicate of it (same members, same
 * order): its weft communicator may keep the job's fabric and plan. */
static bool like_world(MPI_Comm comm)
{
    int result = MPI_UNEQUAL;
    return PMPI_Comm_compare(comm, MPI_COMM_WORLD, &result) == MPI_SUCCESS &&
           (result == MPI_IDENT || result == MPI_CONGRUENT);
}

/* The members' ranks in MPI_COMM_WORLD, in mc's order, for the agreement;
 * NULL when out of memory or MPI fails. */
static int *world_ranks(MPI_Comm mc, int n)
{
    int *mine = malloc((size_t)n * sizeof *mine), *world = malloc((size_t)n * sizeof *world);
    MPI_Group g = MPI_GROUP_NULL, wg = MPI_GROUP_NULL;
    bool ok = mine && world && PMPI_Comm_group(mc, &g) == MPI_SUCCESS &&
              PMPI_Comm_group(MPI_COMM_WORLD, &wg) == MPI_SUCCESS;
    if (ok) {
        for (int i = 0; i < n; i++)
            mine[i] = i;
        ok = PMPI_Group_translate_ranks(g, n, mine, wg, world) == MPI_SUCCESS;
    }
    if (g != MPI_GROUP_NULL)
        PMPI_Group_free(&g);
    if (wg != MPI_GROUP_NULL)
        PMPI_Group_free(&wg);
    free(mine);
    if (!ok) {
        free(world);
        return NULL;
    }
    return world;
}

/* Drops the weft side of mc, if it has one (before MPI frees mc). */
static void forget(MPI_Comm mc)
{
    weft_comm *c = weft__pmpi_remove(mc);
    if (!c)
        return;
    weft__pmpi_enter();
    weft_comm_free(c);
    weft__pmpi_leave();
}

/* The attribute's delete callback (MPI_Comm_delete_attr_function): MPI
 * runs it when the communicator is freed by any path. Freed through this
 * library the entry is already gone. */
static int on_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)keyval;
    (void)value;
    (void)extra;
    if (comm != MPI_COMM_WORLD)
        forget(comm);
    return MPI_SUCCESS;
}

/* The attribute's key, made once by the first thread that needs it. */
static int keyval = MPI_KEYVAL_INVALID;
static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;

static void make_keyval(void)
{
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_delete, &keyval, NULL) != MPI_SUCCESS)
        keyval = MPI_KEYVAL_INVALID;
}

/* Marks mc so that its weft side goes with it (on_delete); false when MPI
 * refuses the keyval or the attribute. */
static bool watch(MPI_Comm mc)
{
    pthread_once(&keyval_once, make_keyval);
    return keyval != MPI_KEYVAL_INVALID && PMPI_Comm_set_attr(mc, keyval, NULL) == MPI_SUCCESS;
}

/* Builds and records the weft communicator of the new MPI communicator mc
 * (of the given kind); logs why not when it cannot. */
static void adopt(MPI_Comm mc, weft__pmpi_kind kind)
{
    if (weft__pmpi_inside() || mc == MPI_COMM_NULL)
        return;
    /* An entry under a new handle belongs to a communicator MPI freed
     * without telling: never serve the new one with it. */
    forget(mc);
    weft_comm_config cfg;
    if (!weft__pmpi_is_on(&cfg))
        return;
    int inter = 0, n = 0;
    if (PMPI_Comm_test_inter(mc, &inter) != MPI_SUCCESS || inter)
        return;
    if (PMPI_Comm_size(mc, &n) != MPI_SUCCESS || n < 1)
        return;
    const char *kname = weft__pmpi_kind_name(kind);
    int *members = world_ranks(mc, n);
    /* A place among WEFT_PMPI_COMMS, taken before the agreement so that
     * threads building communicators at once cannot pass the limit. */
    bool place = members && weft__pmpi_reserve();
    if (!all_members(mc, place)) {
        if (place)
            weft__pmpi_unreserve();
        weft_log(WEFT_LOG_INFO, "pmpi",
                 "rank %d: a %s communicator stays MPI's: a member cannot list its members or "
                 "holds %u weft communicators (WEFT_PMPI_COMMS)",
                 weft__pmpi.rank, kname, weft__pmpi.max_comms);
        free(members);
        return;
    }
    if (!like_world(mc))
        cfg.fabric = cfg.plan_file = cfg.tuning = NULL;
    weft_comm *c = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    weft__pmpi_enter();
    weft_err e = weft_comm_init_mpi(mc, &cfg, &c, &d);
    if (!e)
        e = weft_comm_agree(c, "the members of the communicator", members,
                            (size_t)n * sizeof *members, &d);
    weft__pmpi_leave();
    free(members);
    if (e)
        weft_log(WEFT_LOG_WARN, "pmpi",
                 "rank %d: cannot build the weft side of a %s communicator: %s", weft__pmpi.rank,
                 kname, d.msg);
    bool added = !e && watch(mc) && weft__pmpi_add(mc, c, kind, true);
    if (!added)
        weft__pmpi_unreserve();
    if (!all_members(mc, added)) {
        if (added)
            weft__pmpi_remove(mc);
        weft__pmpi_enter();
        weft_comm_free(c);
        weft__pmpi_leave();
        weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: a %s communicator stays MPI's", weft__pmpi.rank,
                 kname);
        return;
    }
    weft_log(WEFT_LOG_DEBUG, "pmpi",
             "rank %d: weft communicator on a %s communicator, rank %u of %u", weft__pmpi.rank,
             kname, weft_comm_rank(c), weft_comm_size(c));
}

PMPI_EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    int rc = PMPI_Comm_dup(comm, newcomm);
    if (rc == MPI_SUCCESS)
        adopt(*newcomm, WEFT__PMPI_DUP);
    return rc;
}

PMPI_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    int rc = PMPI_Comm_split(comm, color, key, newcomm);
    if (rc == MPI_SUCCESS)
        adopt(*newcomm, WEFT__PMPI_SPLIT);
    return rc;
}

PMPI_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                    MPI_Comm *newcomm)
{
    int rc = PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
    if (rc == MPI_SUCCESS)
        adopt(*newcomm, WEFT__PMPI_SPLIT_TYPE);
    return rc;
}

PMPI_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    int rc = PMPI_Comm_create(comm, group, newcomm);
    if (rc == MPI_SUCCESS)
        adopt(*newcomm, WEFT__PMPI_CREATE);
    return rc;
}

/* The weft side goes first: freeing it may use MPI (the bootstrap's own
 * duplicate), and the handle is MPI's to reuse once PMPI returns. */
PMPI_EXPORT int MPI_Comm_free(MPI_Comm *comm)
{
    if (comm && *comm != MPI_COMM_NULL && *comm != MPI_COMM_WORLD && !weft__pmpi_inside())
        forget(*comm);
    return PMPI_Comm_free(comm);
}

PMPI_EXPORT int MPI_Comm_disconnect(MPI_Comm *comm)
{
    if (comm && *comm != MPI_COMM_NULL && *comm != MPI_COMM_WORLD && !weft__pmpi_inside())
        forget(*comm);
    return PMPI_Comm_disconnect(comm);
}
