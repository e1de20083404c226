/* Read access to a prepared plan schedule (weft_comm_plan_new, exec_plan.c),
 * for tests: this rank's ops in execution order, what each waits for, and
 * the stream it travels on. Positions index this rank's list L. Also the
 * executor's slice count, for the plan selection's estimate (select.c). */
#ifndef WEFT_RUN_EXEC_PLAN_H
#define WEFT_RUN_EXEC_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "weft/comm.h"

/* The slices the executor cuts a chunk of chunk_bytes into: chunk / 256
 * KiB, clamped to 1 .. 32 (a run also caps it at the elements per chunk). */
uint32_t weft__exec_plan_slices(uint64_t chunk_bytes);

/* weft_comm_plan_run without the agreement on its arguments, for a
 * collective that agreed already (select.c). */
weft_err weft__comm_plan_run(weft_comm_plan *xp, const void *sendbuf, void *recvbuf, size_t count,
                             weft_dtype dtype, weft_redop op, weft_diag *d);

/* Runs an alltoallv plan (one with a traffic matrix, which fixes every
 * byte count) without checking the call against it (coll_alltoallv.c
 * agreed first): block d of this rank's input starts at sendbuf +
 * sdispls[d] * es, block s of its output at recvbuf + rdispls[s] * es.
 * In place when sendbuf == recvbuf. */
weft_err weft__comm_plan_run_v(weft_comm_plan *xp, const void *sendbuf, const size_t *sdispls,
                               void *recvbuf, const size_t *rdispls, size_t es, weft_diag *d);
/* The slices every run of an alltoallv plan cuts a chunk into; 0 for a
 * plan of equal chunks. */
uint32_t weft__comm_plan_sized_slices(const weft_comm_plan *x);
/* An alltoallv plan's slice bytes Q where a slot holds chunks of two sizes
 * (slices cut by position); 0 where they are cut by fraction. */
uint64_t weft__comm_plan_sized_quantum(const weft_comm_plan *x);
/* The communicator and the plan of a prepared plan. */
weft_comm *weft__comm_plan_comm(const weft_comm_plan *x);
const weft_plan *weft__comm_plan_plan(const weft_comm_plan *x);

/* Ops of this rank in L. */
uint32_t weft__comm_plan_len(const weft_comm_plan *x);
/* The op id at position pos (< len). */
uint32_t weft__comm_plan_op(const weft_comm_plan *x, uint32_t pos);
/* What position pos waits for: every position below *prefix, and the n
 * positions in *list (ops of this rank reached through deps without passing
 * another op of this rank). */
void weft__comm_plan_waits(const weft_comm_plan *x, uint32_t pos, uint32_t *prefix,
                           const uint32_t **list, uint32_t *n);
/* The transport lane of position pos (1 + channel mod lanes; 0 for local
 * ops and nops) and the previous position of its stream (-1 for none). */
uint32_t weft__comm_plan_lane(const weft_comm_plan *x, uint32_t pos);
int64_t weft__comm_plan_prev(const weft_comm_plan *x, uint32_t pos);

#endif
