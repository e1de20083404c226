/* For the runtime's allocation-failure sweeps (coll_alltoallv_oom_test,
 * coll_sparse_oom_test): the ends of a call in which rank v ran out of
 * memory where its peers were in an exchange it could not finish, so that
 * it failed the communicator (weft__comm_fail_oom, comm_fail.h): rank v
 * returns WEFT_ENOMEM with "comm: rank v: out of memory in WHAT" (the
 * whole message when exact, else its start: what follows says more),
 * every other rank WEFT_EPEER naming rank v and its "out of memory", and
 * the communicator is failed on every rank. A rank whose end differs
 * prints it (with attempt k) before the checks count it. */
#ifndef WEFT_RUN_TESTING_OOM_H
#define WEFT_RUN_TESTING_OOM_H

#include <stdio.h>
#include <string.h>

#include "base/testing.h"
#include "weft/comm.h"

static inline void oom_check_failed(weft_comm *c, uint32_t v, long k, const char *what, bool exact,
                                    weft_err e, const weft_diag *d)
{
    uint32_t me = weft_comm_rank(c);
    char want[96];
    if (me == v)
        snprintf(want, sizeof want, "comm: rank %u: out of memory in %s", v, what);
    else
        snprintf(want, sizeof want, "rank %u", v);
    bool as_wanted =
        me == v ? e == WEFT_ENOMEM &&
                      (exact ? strcmp(d->msg, want) == 0 : strncmp(d->msg, want, strlen(want)) == 0)
                : e == WEFT_EPEER && strstr(d->msg, want) && strstr(d->msg, "out of memory");
    if (!as_wanted)
        fprintf(stderr, "rank %u, attempt %ld: %s: %s\n", me, k, weft_err_name(e), d->msg);
    CHECK(as_wanted);
    CHECK_ERR(e, me == v ? WEFT_ENOMEM : WEFT_EPEER);
    CHECK(weft_comm_failed(c));
}

#endif
