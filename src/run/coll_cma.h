/* Single-copy collectives on ordinary buffers across the processes of one
 * host (coll_cma.c): every rank reads and writes its peers' private
 * buffers with process_vm_readv/writev ("cross-memory attach"), so no byte
 * passes through the transport's slots.
 *
 * Each entry runs its collective this way when every peer is on shared
 * memory with control pages (weft__region_records), the call is at least
 * weft__cma_min_bytes, and every rank can reach its peers' memory (checked
 * once per process and agreed per call); it then sets *ran. Otherwise it
 * leaves *ran false, the same on every rank, and the caller runs its
 * ordinary schedule (the call's arguments are then already agreed:
 * weft__call_agree is a no-op). Arguments as the public calls, already
 * checked locally; count > 0, size > 1. Blocking. */
#ifndef WEFT_RUN_COLL_CMA_H
#define WEFT_RUN_COLL_CMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run/comm_internal.h"
#include "run/reduce.h"
#include "weft/comm.h"

/* The least bytes of a call (the buffer as weft_perf counts it: allreduce,
 * broadcast, reduce the buffer; allgather the output; reduce-scatter the
 * input; all-to-all one rank's whole buffer) that runs single-copy on
 * size ranks; SIZE_MAX when none does. The same on every rank. */
size_t weft__cma_min_bytes(weft_coll coll, uint32_t size);

/* True when this process can read and write its peers' memory (the
 * system call exists and no ptrace policy forbids it); decided once per
 * process. */
bool weft__cma_available(void);
/* Test support: makes weft__cma_available false in this process, so that
 * its ranks show how the others fall back. */
void weft__cma_disable(void);

weft_err weft__cma_allreduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                             const weft__reducer *red, bool *ran, weft_diag *d);
weft_err weft__cma_reduce_scatter(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                  const weft__reducer *red, bool *ran, weft_diag *d);
weft_err weft__cma_reduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                          const weft__reducer *red, uint32_t root, bool *ran, weft_diag *d);
weft_err weft__cma_allgather(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                             size_t es, bool *ran, weft_diag *d);
weft_err weft__cma_broadcast(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                             size_t es, uint32_t root, bool *ran, weft_diag *d);
weft_err weft__cma_alltoall(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                            size_t es, bool *ran, weft_diag *d);

#endif
