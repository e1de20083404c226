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
 * arguments in that order). The communicator stays usable: nothing moved
 * (except where a path sends before it compares, weft__call_early below).
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
 *    transports. Up to WEFT__CALL_ALL_MAX ranks, every rank sends its
 *    arguments to every other rank (one message latency); beyond, in
 *    ceil(log2 size) rounds of a dissemination pattern (rank r sends to
 *    r + 2^k, receives from r - 2^k), each message carrying the least and
 *    the greatest arguments seen so far with their ranks, so that after
 *    the last round every rank has heard from every rank. Neither pattern
 *    depends on the arguments, so ranks that disagree still complete it.
 *
 * A call starts with weft__call_begin (after its arguments were checked
 * locally) and runs weft__call_agree before its first data moves; a record
 * path that checked the records already makes weft__call_agree a no-op.
 */
#ifndef WEFT_RUN_CALL_AGREE_H
#define WEFT_RUN_CALL_AGREE_H

#include <stddef.h>
#include <stdint.h>

#include "run/transport/xport.h"
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

/* The call's kind word of a control-page record: collective (bits 0-3),
 * dtype (4-7), reduction (8-15) and root (16-31); see call_agree.c. */
static inline uint32_t weft__call_kind(const weft__call *k)
{
    return k->coll | k->dtype << 4 | (k->op & 0xffu) << 8 | k->root << 16;
}

/* weft__call_begin, which records the arguments of the call a
 * communicator starts, is inline in run/comm_internal.h (it writes the
 * communicator's fields, and the ring's small calls take it inline). */
/* Agrees on the arguments of the current call unless its records were
 * checked already (see above). Blocking, collective; WEFT_EINVAL with the
 * message above when ranks differ; a transport failure fails the
 * communicator as any exchange does. */
weft_err weft__call_agree(weft_comm *c, weft_diag *d);

/* For a path that sends before it knows the others' arguments (the direct
 * allreduce: agreeing first cost it 0.3-0.6 us per call on 2 ranks over
 * shared memory and doubled its time over TCP), in two halves.
 * weft__call_early starts the agreement and returns true, or returns false
 * when the call must agree first (weft__call_agree: more than
 * WEFT__CALL_ALL_MAX ranks on TCP). With control pages it publishes the
 * record, marked WEFT__REC_SENT; on TCP it posts the arguments to every
 * peer, marked the same way, ahead of the data on each connection. The
 * caller then posts its sends and calls weft__call_late before it receives
 * anything; it waits for everyone's arguments and compares. Ranks that
 * disagree fail the call alike and, as data may be left in a peer's ring
 * or socket, also fail the communicator. Up to WEFT__CALL_ALL_MAX ranks:
 * the arguments of one rank, as it sends them. */
#define WEFT__CALL_ALL_MAX 8u
#define WEFT__CALL_MSG_BYTES 32u
typedef struct weft__call_early_state {
    bool records; /* control pages; else messages */
    uint64_t seq;
    weft__xreq req[2 * (WEFT__CALL_ALL_MAX - 1)];
    unsigned char out[WEFT__CALL_MSG_BYTES];
    unsigned char in[WEFT__CALL_ALL_MAX - 1][WEFT__CALL_MSG_BYTES];
} weft__call_early_state;
bool weft__call_early(weft_comm *c, weft__call_early_state *s, weft_err *e, weft_diag *d);
weft_err weft__call_late(weft_comm *c, weft__call_early_state *s, weft_diag *d);

/* Writes the current call's arguments into a control-page record. */
void weft__call_to_rec(const weft_comm *c, struct weft__region_rec *rec);
/* Makes the record's arguments the current call's (the inverse of
 * weft__call_to_rec), to compare the records of a call already made. */
void weft__call_from_rec(weft_comm *c, const struct weft__region_rec *rec);
/* Compares every rank's record (size of them, as weft__region_post
 * returned them) and marks the call agreed; WEFT_EINVAL as above. */
weft_err weft__call_check_recs(weft_comm *c, const struct weft__region_rec *recs, weft_diag *d);
/* With control pages: publishes this rank's record of call seq (the
 * current call's arguments, no buffers; the caller filled its eager area
 * of seq first, if it uses one), waits for everyone's and compares them
 * (weft__call_check_recs). */
weft_err weft__call_post_seq(weft_comm *c, uint64_t seq, weft_diag *d);

#endif
