/* Failing a communicator (comm_fail.c): the one way every layer of the
 * runtime reports an error that ends the communicator. */
#ifndef WEFT_RUN_COMM_FAIL_H
#define WEFT_RUN_COMM_FAIL_H

#include "run/cause.h"
#include "run/comm_internal.h"

/* Marks c failed after err (message in d), tells the peers, and returns err.
 * What the peers are told (cause.h) is what a transport that failed
 * because of a peer saw (its `cause`), else that this rank failed by
 * itself with err. */
weft_err weft__comm_fail(weft_comm *c, weft_err err, weft_diag *d);
/* weft__comm_fail telling the peers `why` (a peer's failure this rank saw
 * outside the transports: a control-page wait, a timeout). */
weft_err weft__comm_fail_cause(weft_comm *c, weft_err err, const weft__cause *why, weft_diag *d);
/* A collective that ran out of memory where its peers are in an exchange
 * it cannot finish: fails c with "comm: rank R: out of memory in WHAT"
 * (followed by d's own message where it says more than that), so that
 * the peers return WEFT_EPEER at once instead of at the timeout. Returns
 * e unchanged when it is not WEFT_ENOMEM or c has one rank (nobody
 * waits). */
weft_err weft__comm_fail_oom(weft_comm *c, weft_err e, const char *what, weft_diag *d);

#endif
