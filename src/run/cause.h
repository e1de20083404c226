/* Why a communicator failed, as its rank tells the peers that wait on it.
 *
 * When a rank fails it marks its shared-memory segment and control page
 * aborted, which ends its peers' waits in cascade. If each peer then said
 * only "rank N aborted", every rank but the first would name a neighbour
 * that failed because of someone else. So a failing rank records the
 * original cause (which rank failed, its pid, how, and which rank saw it)
 * next to its state word before it publishes the aborted state, and a rank
 * that sees a peer's abort passes that cause on instead of blaming the
 * peer. The record is fixed-size and holds no strings, so it can live in
 * shared memory and be read without locks: the writer stores it before
 * the state with release order, readers load the state with acquire order
 * and only then the record.
 */
#ifndef WEFT_RUN_CAUSE_H
#define WEFT_RUN_CAUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/err.h"

typedef enum weft__cause_kind {
    /* Nothing recorded (a zero-filled record); never published. */
    WEFT__CAUSE_NONE = 0,
    /* The rank failed by itself (an allocation, a malformed message, a
     * failure over TCP or the bootstrap); detail is its weft_err. */
    WEFT__CAUSE_LOCAL,
    /* The rank's process is gone. */
    WEFT__CAUSE_DIED,
    /* The rank closed its communicator while a peer still waited on it. */
    WEFT__CAUSE_CLOSED,
    /* The witness waited detail ms for the rank without progress. */
    WEFT__CAUSE_STALLED,
    /* The rank aborted, and its own record of why could not be read. */
    WEFT__CAUSE_ABORTED,
    WEFT__CAUSE_KINDS
} weft__cause_kind;

typedef struct weft__cause {
    uint32_t kind;    /* weft__cause_kind */
    uint32_t rank;    /* the rank that failed */
    uint32_t pid;     /* its process id; 0 when unknown */
    uint32_t witness; /* the rank that saw the failure first (rank itself for LOCAL) */
    uint32_t detail;  /* LOCAL: the weft_err; STALLED: milliseconds waited; else 0 */
} weft__cause;

/* The cause of a failure a rank cannot blame on a peer: rank failed by
 * itself with err. */
weft__cause weft__cause_local(uint32_t rank, uint32_t pid, int err);

/* Checks a cause read from a peer's shared memory (size ranks): true when
 * it was recorded and its kind and ranks are in range. A record that is
 * not valid is not passed on: the reader blames the peer itself
 * (WEFT__CAUSE_ABORTED). */
bool weft__cause_valid(const weft__cause *c, uint32_t size);

/* Writes one line for rank self's diagnostic, without a prefix:
 *   died     "rank 2 (pid 1234) died"
 *   closed   "rank 2 (pid 1234) closed its communicator"
 *   stalled  "rank 3 waited 1000 ms for rank 2 without progress"
 *   local    "rank 1 (pid 1234) failed: out of memory"
 *   aborted  "rank 3 (pid 1234) failed (aborted its communicator)"
 * followed by " (reported by rank W)" when the witness W is neither the
 * failed rank nor self (the stalled line names it already). "(pid P)" is
 * left out when the pid is unknown. Always NUL-terminates (len > 0). */
void weft__cause_format(const weft__cause *c, uint32_t self, char *buf, size_t len);

/* Records WEFT_EPEER in d with "SUBSYS: " and the line of
 * weft__cause_format, and returns WEFT_EPEER. d may be NULL. */
weft_err weft__cause_diag(weft_diag *d, const char *subsys, const weft__cause *c, uint32_t self);

#endif
