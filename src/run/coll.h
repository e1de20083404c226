/* Internal pieces shared by the built-in collectives (coll_ring.c,
 * coll_direct.c, coll_alltoall.c) on top of the point-to-point layer
 * (p2p.h). */
#ifndef WEFT_RUN_COLL_H
#define WEFT_RUN_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run/comm_internal.h"
#include "run/reduce.h"

/* True when the direct allreduce (below) is the faster built-in schedule
 * for a buffer of `bytes` on `size` ranks. */
bool weft__allreduce_direct_fits(uint32_t size, size_t bytes);

/* Allreduce in one round (coll_direct.c): every rank sends its whole input
 * to every other rank and combines the contributions in rank order
 * (((in_0 op in_1) op in_2) ...), so every rank computes bit-identical
 * results. Latency-optimal (one message time) at (size-1) times the
 * buffer's traffic per rank: the schedule for small buffers. count > 0,
 * size > 1; in place when sendbuf == recvbuf. Blocking. */
weft_err weft__allreduce_direct(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                size_t es, weft__reduce_fn fn, weft_diag *d);

#endif
