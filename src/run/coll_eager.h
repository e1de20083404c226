/* Pipelined collectives through the control pages' eager areas
 * (coll_eager.c): for ordinary (private) buffers on one host with a CPU
 * per rank, at sizes where the one-barrier eager paths (coll_small.h)
 * read too much and the single-copy paths (coll_cma.h) pay too many
 * system calls. */
#ifndef WEFT_RUN_COLL_EAGER_H
#define WEFT_RUN_COLL_EAGER_H

#include <stdbool.h>
#include <stddef.h>

#include "run/comm_internal.h"
#include "run/reduce.h"
#include "weft/plan.h"

/* Whether a call of coll (allreduce, reduce or broadcast) moving `bytes`
 * (the buffer) runs here: every peer on shared memory with control pages,
 * 3 or more ranks, no more ranks than CPUs, and bytes within the
 * collective's limit (coll_eager.c). The same answer on every rank that
 * passes the same bytes. */
bool weft__eager_fits(const weft_comm *c, weft_coll coll, size_t bytes);

/* Allreduce and reduce in chunks of the eager area: per chunk every rank
 * copies its input into its eager area and publishes (barrier 1), combines
 * its 1/n block of the chunk from every rank's area, in rank order, into
 * its own area (a reduce-scatter), publishes that it is done (barrier 2),
 * and copies the n finished blocks out (allreduce: every rank; reduce:
 * the root; the others go on without waiting). Any buffers, in place
 * too; count > 0. Ranks whose calls differ get WEFT_EINVAL, all alike,
 * and the communicator stays usable. Blocking. weft__region_pipe_calls
 * counts the calls. */
weft_err weft__eager_allreduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               const weft__reducer *red, weft_diag *d);
weft_err weft__eager_reduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                            const weft__reducer *red, uint32_t root, weft_diag *d);

/* Broadcast in chunks of the eager area: per chunk the root copies it into
 * its eager area and every rank publishes; the others copy it out. The
 * root fills the next chunk while the others copy this one (two slots).
 * One barrier per chunk; sendbuf is read on the root only. */
weft_err weft__eager_broadcast(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                               size_t es, uint32_t root, weft_diag *d);

#endif
