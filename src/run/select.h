/* Which schedule a collective call runs (select.c; the rules are in
 * weft/comm.h at weft_comm_config and weft_comm_choose, and docs/run.md).
 * The selection state belongs to the communicator: built at init from the
 * configuration, extended by calls (plans built and ranked lazily), freed
 * with it. */
#ifndef WEFT_RUN_SELECT_H
#define WEFT_RUN_SELECT_H

#include "weft/comm.h"

typedef struct weft__select weft__select;

/* Loads the fabric and the forced plan of cfg, checks their ranks against
 * c, and checks that every rank has the same fabric, algorithm and plan
 * (collective, over the bootstrap). On success c->sel is set. */
weft_err weft__select_init(weft_comm *c, const weft_comm_config *cfg, weft_diag *d);
/* NULL is allowed. */
void weft__select_free(weft__select *s);

/* Whether weft__select_pick takes every valid call on c (a collective,
 * datatype and root in range) without refusing it for its schedule: true
 * when no plan (WEFT_PLAN), algorithm (WEFT_ALGO) or tuning table
 * (WEFT_TUNING) is forced, the only settings whose schedules may not fit a
 * call; then only running out of memory fails a pick, which the call
 * reports. The interposition library skips its look-ahead
 * weft_comm_choose then (the call's own pick decides once). */
bool weft__select_takes_all(const weft_comm *c);

/* The decision for one call: *cp is the prepared plan to run, or NULL for
 * the built-in schedule. ch (may be NULL) receives the report. */
weft_err weft__select_pick(weft_comm *c, weft_coll coll, size_t count, weft_dtype dtype,
                           uint32_t root, weft_comm_choice *ch, weft_comm_plan **cp, weft_diag *d);

/* The forced plan (config plan_file, WEFT_PLAN) when it is an alltoallv
 * plan (one with a traffic matrix), which weft_alltoallv runs, with *plan
 * and its *name as given; NULL otherwise: weft_alltoallv then runs its own
 * schedule. Logs the choice once at info level. */
weft_comm_plan *weft__select_alltoallv(weft_comm *c, const weft_plan **plan, const char **name);

/* Runs a chosen plan for a call of the public API (a reduce's non-root
 * ranks may pass recvbuf NULL: a scratch buffer stands in). */
weft_err weft__select_run(weft_comm *c, weft_comm_plan *cp, weft_coll coll, const void *sendbuf,
                          void *recvbuf, size_t count, weft_dtype dtype, weft_redop op,
                          weft_diag *d);

#endif
