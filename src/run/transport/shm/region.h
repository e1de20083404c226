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
 * Control. Each rank has a control segment (same scheme, id 0), created
 * at communicator setup when every peer is reached over shared memory
 * (weft__region_init), else by the first weft_comm_alloc. It holds the
 * rank's state (alive, closed, aborted), its pid, a "done" counter, and two
 * slots used by calls alternately (call k uses slot k mod 2); a slot is a
 * record line (which collective, its size, which allocation and offsets
 * hold the buffers; the call number is stored last) and an eager area into
 * which small calls copy their input so that peers can read it
 * (coll_small.c). A rank publishes with release stores and waits for a
 * peer's with acquire loads; a wait checks every REGION_CHECK_NS that the
 * peer is alive (state, pid) and ends with WEFT_ETIMEDOUT after the
 * communicator's timeout. Slot reuse is safe without a second barrier: a
 * rank publishes call k + 2 only after every rank published call k + 1,
 * and every rank publishes k + 1 only after it finished reading call k.
 */
#ifndef WEFT_RUN_REGION_H
#define WEFT_RUN_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run/cause.h"
#include "weft/comm.h"

/* Flags of a call record. */
enum {
    WEFT__REC_SEND = 1u,
    WEFT__REC_RECV = 2u,
    /* Second round of a rooted call (coll_shared_root.c): this rank holds
     * every allocation the call touches. */
    WEFT__REC_HOLDS = 4u,
    /* This rank sent the call's data before it compared the records (the
     * direct allreduce, call_agree.h): when the ranks disagree, messages
     * may be left in peers' rings, so every rank fails its communicator. */
    WEFT__REC_SENT = 8u,
    /* The single-copy path (coll_cma.c): this rank can read and write
     * peers' memory with process_vm_readv/writev, soff and roff are the
     * addresses of its sendbuf and recvbuf, and sid is the path's choice
     * for the call (see coll_cma.c). */
    WEFT__REC_CMA = 16u
};

/* What a rank publishes about one call (coll_shared.c, coll_small.c,
 * call_agree.h): the call's arguments, which every rank must agree on
 * (weft__call_to_rec), and where its buffers lie. */
typedef struct weft__region_rec {
    uint64_t seq;      /* the call's number */
    uint32_t kind;     /* the collective, dtype, reduction and root (call_agree.c) */
    uint32_t flags;    /* WEFT__REC_*: buffer lies in weft_comm_alloc memory */
    uint32_t sid, rid; /* allocation ids of sendbuf and recvbuf */
    uint64_t soff, roff;
    uint64_t count; /* the call's count */
} weft__region_rec;

typedef struct weft__region weft__region;

/* Frees every segment and unmaps every peer's; marks this rank's control
 * page closed first, so peers waiting on it end with WEFT_EPEER. NULL is
 * allowed. Not collective. */
void weft__region_free(weft__region *g);
/* Marks this rank's control page aborted (peers' waits end), with why
 * (cause.h) recorded first so that a peer that sees the abort reads it.
 * Idempotent: the first cause stays. NULL g is allowed. */
void weft__region_abort(weft__region *g, const weft__cause *why);

/* Creates the control pages at communicator setup; collective (two
 * allgathers over the bootstrap channel). The caller calls it on every
 * rank when every peer is reached over shared memory and size >= 2. */
weft_err weft__region_init(weft_comm *c, weft_diag *d);

/* True when more ranks share this host than it has online CPUs (the same
 * on every rank when every peer is on shared memory): waits then yield the
 * CPU at once, and a barrier costs every rank's scheduling. */
bool weft__region_oversubscribed(const weft_comm *c);
/* How many ranks should share the work of a single-pass call: the ranks,
 * or the host's online CPUs when there are fewer (the same on every rank
 * of a host). */
uint32_t weft__region_workers(const weft_comm *c);

/* True when the communicator has the control pages and every peer is
 * reached over shared memory, so calls can exchange records
 * (weft__region_post): the same answer on every rank. */
bool weft__region_records(const weft_comm *c);
/* weft__region_records, and a weft_comm_alloc has been made (so buffers
 * may lie in shared allocations): the same answer on every rank. */
bool weft__region_usable(const weft_comm *c);

/* Bytes of each eager area (0 without records; the same on every rank),
 * and rank q's eager area for call seq: this rank writes its own before it
 * posts seq and must not write it again before call seq + 2; a peer's may
 * be read between the post of seq and this rank's post of seq + 1. Aligned
 * to 64. */
size_t weft__region_eager_bytes(const weft_comm *c);
unsigned char *weft__region_eager(const weft_comm *c, uint32_t q, uint64_t seq);

/* The small-call ring (coll_tiny.h) of each rank: WEFT__REGION_TINY_BYTES
 * of its control page, zeroed at creation, aligned to 64 (rings[q], as
 * this rank maps rank q's; weft__region_records must hold); and this
 * rank's private state of it, zeroed at creation (also c->tiny). */
#define WEFT__REGION_TINY_BYTES ((size_t)128 + 16 * ((size_t)4608 + 64))
typedef struct weft__region_tiny_state {
    unsigned char **rings; /* every rank's ring, as this rank maps it */
    uint64_t seq;          /* the last ring call's number (0: none yet) */
    uint64_t room;         /* calls up to this number may write their slot unchecked */
    uint64_t calls;        /* ring calls finished */
    uint64_t published;    /* the last call whose slot this rank published */
    int ready;             /* weft__region_records, once known: 1 yes, 2 no */
} weft__region_tiny_state;
weft__region_tiny_state *weft__region_tiny_own(const weft_comm *c);
/* With more ranks than CPUs (weft__region_oversubscribed): rings this
 * rank's doorbell after it published something a peer may sleep on
 * (nothing otherwise), and sleeps on rank q's doorbell for at most nap_ns
 * unless ready(arg) (bell.h). */
void weft__region_ring(const weft_comm *c);
void weft__region_sleep(const weft_comm *c, uint32_t q, bool (*ready)(void *arg), void *arg,
                        int64_t nap_ns);

/* Which allocation holds [p, p + len) of this rank's memory: true and
 * its id and the offset of p, or false. */
bool weft__region_find(const weft_comm *c, const void *p, size_t len, uint32_t *id, uint64_t *off);
/* Rank q's mapping of its allocation id as this rank sees it (q may be
 * this rank), or NULL when this rank has not (or no longer) mapped it. */
unsigned char *weft__region_peer(const weft_comm *c, uint32_t id, uint32_t q);

/* Publishes rec as this rank's record of call rec->seq (with the eager
 * area the caller filled, if any) and waits until every rank has published
 * theirs; then recs[q] is rank q's record. Fails the communicator on a dead
 * peer or timeout. */
weft_err weft__region_post(weft_comm *c, const weft__region_rec *rec, weft__region_rec *recs,
                           weft_diag *d);
/* weft__region_post in two halves, for a call that sends before it has
 * everyone's record (call_agree.h): publish does not wait; gather waits
 * until every rank published call seq and copies the records. The slot
 * rule holds as for post: a rank gathers call seq before it publishes
 * seq + 1. */
void weft__region_publish(weft_comm *c, const weft__region_rec *rec);
weft_err weft__region_gather(weft_comm *c, uint64_t seq, weft__region_rec *recs, weft_diag *d);
/* Publishes that this rank finished call seq and waits for every rank's. */
weft_err weft__region_done(weft_comm *c, uint64_t seq, weft_diag *d);
/* Publishes that this rank finished call seq without waiting (a rank that
 * has nothing to read after the others finished: a reduce's non-root). */
void weft__region_done_signal(weft_comm *c, uint64_t seq);

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
/* Calls that ran through the eager areas (coll_small.c), and the count's
 * increment. */
uint64_t weft__region_small_calls(const weft_comm *c);
void weft__region_count_small(weft_comm *c);
/* Calls that ran single-copy across processes (coll_cma.c), and the
 * count's increment. */
uint64_t weft__region_cma_calls(const weft_comm *c);
void weft__region_count_cma(weft_comm *c);
/* Calls that ran pipelined through the eager areas (coll_eager.c), and
 * the count's increment. */
uint64_t weft__region_pipe_calls(const weft_comm *c);
void weft__region_count_pipe(weft_comm *c);
/* Rank q's process id as its control page gives it (weft__region_records
 * must hold). */
uint32_t weft__region_pid(const weft_comm *c, uint32_t q);
/* True when rank q's control page says it aborted or closed, or its
 * process is gone; *why is then the failure to report (q's death or
 * close, or the cause q recorded when it aborted). Does not block. */
bool weft__region_peer_gone(const weft_comm *c, uint32_t q, weft__cause *why);
/* The next call number (1, 2, ...). */
uint64_t weft__region_next_seq(weft_comm *c);

#endif
