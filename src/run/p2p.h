/* Requests on the transports and waiting for them (p2p.c). */
#ifndef WEFT_RUN_P2P_H
#define WEFT_RUN_P2P_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run/comm_internal.h"
#include "run/reduce.h"
#include "run/transport/xport.h"

/* Queues r on the transport that serves r->peer (r->peer != own rank,
 * r->len > 0). Does not block. */
weft_err weft__comm_post(weft_comm *c, weft__xreq *r, weft_diag *d);
/* One round of progress on every busy transport; may wait up to 100 ms when
 * nothing can move. Sets *moved when bytes moved. Fails the communicator on
 * error. */
weft_err weft__comm_progress(weft_comm *c, bool *moved, weft_diag *d);
/* Moves what the transports can move now without waiting (sends into free
 * slots or socket buffers, data already arrived), so a peer can work on
 * our data while we do local work. Fails the communicator on error. */
weft_err weft__comm_kick(weft_comm *c, weft_diag *d);
/* Fails the communicator with WEFT_ETIMEDOUT, naming the peer waited on. */
weft_err weft__comm_stalled(weft_comm *c, uint32_t peer, weft_diag *d);

/* Sends sbytes to dst and receives rbytes from src at the same time; either
 * side is skipped when its peer is WEFT__NO_PEER or its length is 0. When
 * reduce is set the received bytes are combined into rbuf (esize bytes per
 * element). dst == src == own rank copies or reduces locally. Blocking. */
weft_err weft__comm_exchange(weft_comm *c, uint32_t dst, const void *sbuf, size_t sbytes,
                             uint32_t src, void *rbuf, size_t rbytes, weft__reduce_fn reduce,
                             size_t esize, weft_diag *d);

/* Waits until every request of reqs (posted with weft__comm_post) is
 * complete, driving every transport meanwhile; the timeout restarts
 * whenever a byte moves. Blocking; fails the communicator on error. */
weft_err weft__comm_wait(weft_comm *c, weft__xreq *const *reqs, size_t n, weft_diag *d);

/* The communicator's scratch: at least bytes, kept in c between calls
 * (the ring's rounds, the single-copy path's tiles); NULL when out of
 * memory (the old scratch stays). */
unsigned char *weft__comm_scratch(weft_comm *c, size_t bytes);

#endif
