/* Agreement on a collective call's arguments.
 *
 * Every rank of a collective must pass the same collective, count, dtype,
 * reduction and root. Ranks that did not used to get success and wrong
 * data (a broadcast whose rank 1 thought it was the root: over TCP all four
 * ranks returned OK and ranks 2-3 held rank 1's data), or an error on one
 * rank only. So before any data moves, every rank learns every rank's
 * arguments, and ranks that differ fail the call on every rank, with the
 * same message everywhere naming two ranks that differ and the first field
 * in which they do:
 *
 *   comm: ranks disagree on the root of broadcast: rank 0 has 0, rank 1 has 1
 *   comm: ranks disagree on the count of allreduce: rank 0 has 100, rank 2 has 1000
 *   comm: ranks disagree on the collective: rank 0 called allreduce, rank 1 allgather
 *
 * (fields compared in the order collective, dtype, reduction, root, count;
 * the two ranks are the lowest holding the least and the greatest
 * arguments in that order). The communicator stays usable: nothing moved.
 *
 * How, at the least cost:
 *  - When every peer is on shared memory, each call already publishes a
 *    record in the control pages (transport/shm/region.h) and waits for
 *    everyone's on its small-message and shared-buffer paths; the record
 *    carries the arguments (weft__call_to_rec) and weft__call_check_recs
 *    compares them, at no extra cost. The other paths publish the same
 *    record first (weft__call_agree): one barrier on the control pages.
 *    Every path of such a communicator publishes exactly one record before
 *    anything else, so ranks that took different paths (because their
 *    counts differ) still compare each other's.
 *  - Otherwise (TCP peers) the ranks exchange the arguments on the
 *    transports in ceil(log2 size) rounds of a dissemination pattern (rank
 *    r sends to r + 2^k, receives from r - 2^k), each message carrying the
 *    least and the greatest arguments seen so far with their ranks; after
 *    the last round every rank has heard from every rank. The pattern does
 *    not depend on the arguments, so ranks that disagree still complete it.
 *
 * A call starts with weft__call_begin (after its arguments were checked
 * locally) and runs weft__call_agree before its first data moves; a record
 * path that checked the records already makes weft__call_agree a no-op.
 */
#ifndef WEFT_RUN_CALL_AGREE_H
#define WEFT_RUN_CALL_AGREE_H

#include <stddef.h>
#include <stdint.h>

#include "weft/comm.h"
#include "weft/plan.h"

struct weft__region_rec;

/* The reduction of a call that does not reduce. */
#define WEFT__CALL_NO_OP 0xffu

typedef struct weft__call {
    uint32_t coll;  /* weft_coll */
    uint32_t dtype; /* weft_dtype */
    uint32_t op;    /* weft_redop, or WEFT__CALL_NO_OP */
    uint32_t root;  /* broadcast, reduce; 0 otherwise */
    uint64_t count; /* as the caller passed it */
} weft__call;

/* Records the arguments of the call c starts; op is a weft_redop or
 * WEFT__CALL_NO_OP, root 0 for collectives without one. */
void weft__call_begin(weft_comm *c, weft_coll coll, size_t count, weft_dtype dtype, uint32_t op,
                      uint32_t root);
/* Agrees on the arguments of the current call unless its records were
 * checked already (see above). Blocking, collective; WEFT_EINVAL with the
 * message above when ranks differ; a transport failure fails the
 * communicator as any exchange does. */
weft_err weft__call_agree(weft_comm *c, weft_diag *d);

/* Writes the current call's arguments into a control-page record. */
void weft__call_to_rec(const weft_comm *c, struct weft__region_rec *rec);
/* Compares every rank's record (size of them, as weft__region_post
 * returned them) and marks the call agreed; WEFT_EINVAL as above. */
weft_err weft__call_check_recs(weft_comm *c, const struct weft__region_rec *recs, weft_diag *d);

#endif
