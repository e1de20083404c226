/* Small allreduces through the control pages' eager areas (coll_small.c). */
#ifndef WEFT_RUN_COLL_SMALL_H
#define WEFT_RUN_COLL_SMALL_H

#include <stdbool.h>
#include <stddef.h>

#include "run/comm_internal.h"
#include "run/reduce.h"
#include "weft/plan.h"

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

/* The other collectives through the eager areas (coll_small.c): every rank
 * copies what its peers need into its eager area, publishes its record
 * and reads what it needs from theirs; one barrier, any buffers. fits:
 * whether a call of count elements of es bytes on this communicator runs
 * this way (the same answer on every rank that passes the same count).
 * Counts as the public calls (allgather, reduce-scatter, all-to-all: per
 * rank's block); count > 0. Ranks whose calls differ get WEFT_EINVAL, all
 * alike. Blocking. */
bool weft__small_fits(const weft_comm *c, weft_coll coll, size_t count, size_t es);
weft_err weft__small_allgather(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               size_t es, weft_diag *d);
weft_err weft__small_reduce_scatter(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                    const weft__reducer *red, weft_diag *d);
weft_err weft__small_broadcast(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               size_t es, uint32_t root, weft_diag *d);
weft_err weft__small_reduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                            const weft__reducer *red, uint32_t root, weft_diag *d);
weft_err weft__small_alltoall(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                              size_t es, weft_diag *d);

#endif
