/* Memory that every rank on this host maps: weft_comm_alloc's segments and
 * the control words of the shared-buffer collectives (coll_shared.c).
 *
 * Segments. weft_comm_alloc is collective: every rank creates one POSIX
 * shared segment of its own size (name /weft-<job tag>-<rank>-<id>, id = the
 * communicator's allocation counter, identical on every rank), reserves its
 * pages (fallocate, so a full /dev/shm is an error now, not a SIGBUS
 * later), and, once every rank has created its segment, maps the segment
 * of every peer reached over shared memory. Once every rank has mapped
 * them the names are unlinked, so a job that dies leaves nothing in
 * /dev/shm. Any rank's failure fails the call on every rank (agreed over
 * the bootstrap channel) and nothing stays allocated.
 *
 * Control. The first weft_comm_alloc also creates the control page of each
 * rank (same scheme, id 0): its state (alive, closed, aborted), its pid, a
 * "posted" and a "done" counter on their own cache lines, and the record of
 * the last two calls (which allocation and offsets hold the buffers). A
 * rank publishes a counter with a release store and waits for a peer's
 * with acquire loads; a wait checks every REGION_CHECK_NS that the peer is
 * alive (state, pid) and ends with WEFT_ETIMEDOUT after the communicator's
 * timeout.
 */
#ifndef WEFT_RUN_REGION_H
#define WEFT_RUN_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/comm.h"

/* Flags of a call record. */
enum {
    WEFT__REC_SEND = 1u,
    WEFT__REC_RECV = 2u,
    /* Second round of a rooted call (coll_shared_root.c): this rank holds
     * every allocation the call touches. */
    WEFT__REC_HOLDS = 4u
};

/* What a rank publishes about one shared-buffer call (coll_shared.c). */
typedef struct weft__region_rec {
    uint64_t seq;      /* the call's number */
    uint32_t kind;     /* which collective */
    uint32_t flags;    /* WEFT__REC_*: buffer lies in weft_comm_alloc memory */
    uint32_t sid, rid; /* allocation ids of sendbuf and recvbuf */
    uint64_t soff, roff;
    uint64_t bytes; /* the call's size, which every rank must agree on */
    uint32_t root;  /* broadcast, reduce: the root, which every rank must agree on */
} weft__region_rec;

typedef struct weft__region weft__region;

/* Frees every segment and unmaps every peer's; marks this rank's control
 * page closed first, so peers waiting on it end with WEFT_EPEER. NULL is
 * allowed. Not collective. */
void weft__region_free(weft__region *g);
/* Marks this rank's control page aborted (peers' waits end). Idempotent. */
void weft__region_abort(weft__region *g);

/* True when the communicator has the control pages (a weft_comm_alloc
 * succeeded on every rank) and every peer is reached over shared memory:
 * the same answer on every rank. */
bool weft__region_usable(const weft_comm *c);

/* Which allocation holds [p, p + len) of this rank's memory: true and
 * its id and the offset of p, or false. */
bool weft__region_find(const weft_comm *c, const void *p, size_t len, uint32_t *id,
                       uint64_t *off);
/* Rank q's mapping of its allocation id as this rank sees it (q may be
 * this rank), or NULL when this rank has not (or no longer) mapped it. */
unsigned char *weft__region_peer(const weft_comm *c, uint32_t id, uint32_t q);

/* Publishes rec as this rank's record of call rec->seq and waits until
 * every rank has published theirs; then recs[q] is rank q's record. Fails
 * the communicator on a dead peer or timeout. */
weft_err weft__region_post(weft_comm *c, const weft__region_rec *rec, weft__region_rec *recs,
                           weft_diag *d);
/* Publishes that this rank finished call seq and waits for every rank's. */
weft_err weft__region_done(weft_comm *c, uint64_t seq, weft_diag *d);

/* A per-communicator work area of WEFT__REGION_WORK bytes, aligned to 64. */
#define WEFT__REGION_WORK (64u << 10)
unsigned char *weft__region_work(const weft_comm *c);
/* Per-communicator arrays for a call: size records and 2 * size pointers. */
weft__region_rec *weft__region_recs(const weft_comm *c);
unsigned char **weft__region_ptrs(const weft_comm *c);
/* Calls that ran single-pass so far (for tests and benchmarks), and the
 * count's increment (coll_shared.c). */
uint64_t weft__region_fast_calls(const weft_comm *c);
void weft__region_count_fast(weft_comm *c);
/* The next call number (1, 2, ...). */
uint64_t weft__region_next_seq(weft_comm *c);

#endif
