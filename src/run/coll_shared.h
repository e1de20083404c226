/* Single-pass collectives on weft_comm_alloc memory (coll_shared.c). */
#ifndef WEFT_RUN_COLL_SHARED_H
#define WEFT_RUN_COLL_SHARED_H

#include <stdbool.h>
#include <stddef.h>

#include "run/comm_internal.h"
#include "run/reduce.h"

/* Each runs the collective single-pass when every rank's buffers lie in
 * weft_comm_alloc memory (see coll_shared.c) and sets *ran; otherwise it
 * leaves *ran false, the same on every rank, and the caller runs its
 * ordinary schedule. Arguments as the public calls, already checked;
 * count > 0, es the element size. Blocking when they run. */
weft_err weft__shared_allreduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                const weft__reducer *red, bool *ran, weft_diag *d);
weft_err weft__shared_reduce_scatter(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                     const weft__reducer *red, bool *ran, weft_diag *d);
weft_err weft__shared_allgather(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                size_t es, bool *ran, weft_diag *d);
/* coll_shared_root.c; root < size. Broadcasts of fewer bytes than
 * WEFT__SHARED_BCAST_MIN_BYTES take the ordinary schedule: below it one
 * message through the transport's slots beat the single-pass path's two
 * waits for every rank (docs/interop.md). */
#define WEFT__SHARED_BCAST_MIN_BYTES ((size_t)1 << 20)
weft_err weft__shared_broadcast(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                size_t es, uint32_t root, bool *ran, weft_diag *d);
weft_err weft__shared_reduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                             const weft__reducer *red, uint32_t root, bool *ran, weft_diag *d);
/* coll_shared_a2a.c. */
weft_err weft__shared_alltoall(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               size_t es, bool *ran, weft_diag *d);

#endif
