/* Small allreduces through the control pages' eager areas (coll_small.c). */
#ifndef WEFT_RUN_COLL_SMALL_H
#define WEFT_RUN_COLL_SMALL_H

#include <stdbool.h>
#include <stddef.h>

#include "run/comm_internal.h"
#include "run/reduce.h"

/* True when an allreduce of `bytes` runs through the eager areas: every
 * peer on shared memory with control pages, and bytes within the limit for
 * the rank count (coll_small.c). The same answer on every rank that passes
 * the same bytes. */
bool weft__small_allreduce_fits(const weft_comm *c, size_t bytes);

/* The allreduce of count elements of es bytes (count > 0) through the eager
 * areas, for any buffers (in place when sendbuf == recvbuf). Ranks whose
 * calls differ in collective or size get WEFT_EINVAL, all alike. Blocking;
 * one barrier. */
weft_err weft__small_allreduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               const weft__reducer *red, weft_diag *d);

#endif
