/* Transports: how bytes move between two ranks.
 *
 * A transport serves a subset of the peers of one rank (the communicator
 * decides which: shared memory within a host, TCP otherwise). It moves
 * messages: a message from rank a to rank b is received by b with exactly
 * the length a sent (a mismatch is WEFT_EPARSE, naming the peer), and the
 * messages of one direction of one pair and lane arrive in the order they
 * were posted. Zero-length messages are never posted (the communicator
 * completes them itself).
 *
 * Lanes. A transport may offer several independent ordered streams per peer
 * and direction (`lanes`; TCP: one per connection of each interface's set).
 * A request with lane 0 is ordered with every other request of its peer and
 * direction (and may use every stream at once); a request with lane k >= 1
 * travels on stream (k - 1) mod lanes, ordered only with the requests of
 * that stream, so a message that waits on one stream never holds back
 * another. Both ends must post a message with the same lane. The plan
 * executor maps plan channels to lanes; everything else uses lane 0. Lane 0
 * and lane k requests must not be queued for one peer at the same time.
 *
 * A receive either stores the bytes or combines them into the buffer with a
 * reduction kernel (reduce.h) as they arrive, so reductions need no extra
 * copy. All progress happens inside `progress`, on the caller's thread: no
 * transport starts a thread.
 *
 * Each backend is one file exporting one const table:
 *   weft__xport_shm  src/run/transport/shm/shm.c
 *   weft__xport_tcp  src/run/transport/tcp/tcp.c
 *
 * Ownership: the caller owns every weft__xreq and its buffer; between post
 * and completion (r->complete, or an error from progress) the transport may
 * read (send) or write (receive) the buffer and keeps r in its queues, so the
 * caller must leave both alone. After an error from any operation the
 * transport is failed: the caller must call abort and then close, and must
 * treat every posted request as lost.
 */
#ifndef WEFT_RUN_XPORT_H
#define WEFT_RUN_XPORT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run/cause.h"
#include "run/reduce.h"
#include "weft/comm.h"

typedef struct weft__xport weft__xport;

typedef struct weft__xreq {
    /* Set by the caller before post. */
    uint32_t peer;
    bool is_send;
    unsigned char *buf;     /* send: only read */
    size_t len;             /* > 0 */
    weft__reduce_fn reduce; /* receive: NULL stores, else combines into buf */
    size_t esize;           /* element size when reduce is set; divides len */
    uint32_t lane;          /* 0: every stream; k >= 1: stream (k - 1) mod lanes */
    /* Receive with reduce, shared memory only (other transports must see
     * NULL): buf = base op bytes instead of buf op bytes, in one pass
     * (base may equal buf). */
    const unsigned char *base;
    /* Receive hint: store with streaming stores (copy_nt.h), for results
     * nobody reads soon; transports may ignore it. */
    bool nt;
    /* Owned by the transport while posted. */
    bool complete;
    size_t done;         /* bytes moved (shm) */
    uint32_t parts_left; /* parts not yet moved (tcp) */
    struct weft__xreq *next;
} weft__xreq;

typedef struct weft__xport_params {
    uint32_t rank, size;
    const unsigned char *secret; /* WEFT_SECRET_BYTES, borrowed */
    /* TCP: the addresses to listen on, one connection set each, and the
     * connections per peer and set. */
    const struct in_addr *ifaddrs;
    uint32_t nifaddrs;
    uint32_t conns;
    /* Shared memory: CPUs of this host (comm.c's host_cpus). */
    uint32_t host_cpus;
    /* TCP: namespace file to create the data sockets in (NULL: none);
     * borrowed until open returns. */
    const char *netns;
} weft__xport_params;

/* Fixed size of every transport's address blob, exchanged through the
 * bootstrap. */
#define WEFT__XPORT_ADDR_BYTES 64

typedef struct weft__xport_ops {
    const char *name;
    /* Creates this rank's endpoint and whatever peers need to reach it
     * (listening sockets, a shared segment), and writes the address blob.
     * Does not block. */
    weft_err (*open)(const weft__xport_params *p, weft__xport **out,
                     unsigned char addr[WEFT__XPORT_ADDR_BYTES], weft_diag *d);
    /* Connects to every peer r with serve[r] set, using addrs (size blobs in
     * rank order). Collective among those peers; blocks until every link is
     * up or the deadline passes. */
    weft_err (*connect)(weft__xport *x, const bool *serve, const unsigned char *addrs,
                        int64_t deadline, weft_diag *d);
    /* Called once every rank has connected: drops what only setup needed
     * (listeners, segment names). Does not block. */
    void (*ready)(weft__xport *x);
    /* Queues r behind earlier requests of the same direction and peer. Does
     * not block; WEFT_ENOMEM is the only failure. */
    weft_err (*post)(weft__xport *x, weft__xreq *r, weft_diag *d);
    /* Independent ordered streams per peer and direction (see Lanes above);
     * NULL means 1. Does not block. */
    uint32_t (*lanes)(const weft__xport *x);
    /* True when requests are queued. */
    bool (*busy)(const weft__xport *x);
    /* Moves as many bytes as it can. When nothing can move it waits up to
     * wait_ns for something to (0: never waits). Sets *moved when any byte
     * moved. WEFT_EPEER when a peer it waits on died, closed or failed,
     * WEFT_EPARSE for a malformed message; d names the peer. */
    weft_err (*progress)(weft__xport *x, int64_t wait_ns, bool *moved, weft_diag *d);
    /* After progress failed because of a peer: the failure it saw (the
     * peer's death, close or abort, with the original cause an aborted peer
     * passed on; cause.h). False when the transport cannot say (optional;
     * NULL means never). Does not block. */
    bool (*cause)(const weft__xport *x, weft__cause *out);
    /* Tells peers that this rank failed, so their waits end (closes
     * connections, flags the segment), and, where the transport can carry
     * it (shared memory), why: `why` is published before the failure, so a
     * peer that sees the failure sees the cause. Does not block;
     * idempotent (the first cause stays). */
    void (*abort)(weft__xport *x, const weft__cause *why);
    /* Frees everything; peers that wait on this rank afterwards see it as
     * closed. NULL is allowed. Does not block. */
    void (*close)(weft__xport *x);
} weft__xport_ops;

extern const weft__xport_ops weft__xport_shm;
extern const weft__xport_ops weft__xport_tcp;

#endif
