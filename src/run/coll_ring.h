/* The checks every public collective starts with (coll_ring.c). */
#ifndef WEFT_RUN_COLL_RING_H
#define WEFT_RUN_COLL_RING_H

#include <stdbool.h>

#include "run/comm_internal.h"

/* Checks a collective's dtype (and op when needs_op) and that c has not
 * failed; WEFT_EINVAL or WEFT_EPEER with a message (coll_ring.c). */
weft_err weft__coll_check(weft_comm *c, weft_dtype dtype, weft_redop op, bool needs_op,
                          weft_diag *d);

#endif
