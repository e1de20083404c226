/* The communicator's insides, shared by comm.c (setup), p2p.c (waiting and
 * point to point) and coll_ring.c (collectives). */
#ifndef WEFT_RUN_COMM_INTERNAL_H
#define WEFT_RUN_COMM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "run/bootstrap/boot.h"
#include "run/call_agree.h"
#include "run/select.h"
#include "run/transport/xport.h"
#include "weft/comm.h"

enum { WEFT__VIA_SELF = 0, WEFT__VIA_SHM = 1, WEFT__VIA_TCP = 2 };
#define WEFT__NO_PEER UINT32_MAX

struct weft_comm {
    uint32_t rank, size;
    int64_t timeout_ns;
    const weft__boot_ops *bops;
    weft__boot *boot;
    weft__xport *shm, *tcp;
    uint8_t *via; /* per peer: WEFT__VIA_* */
    weft__select *sel; /* which schedule runs (select.c) */
    bool failed;
    char fail_msg[256]; /* why it failed, repeated by later calls */
    /* Working space of the built-in ring schedules' rounds (coll_ring.c),
     * kept between calls so that it stays mapped and cached. */
    unsigned char *scratch;
    size_t scratch_bytes;
    /* weft_comm_alloc's segments and control pages (transport/shm/region.c),
     * NULL before the first allocation; job_tag names their segments. */
    struct weft__region *region;
    uint64_t job_tag;
    /* The collective call under way (call_agree.h) and whether the ranks
     * agreed on it yet. */
    weft__call call;
    uint32_t call_kind; /* its record word (call_agree.c) */
    bool call_agreed;
};

/* Builds a communicator on an opened bootstrap backend (comm.c). */
weft_err weft__comm_setup(const weft_comm_config *cfg, const weft__boot_ops *bops,
                          const weft__boot_params *bp, weft_comm **out, weft_diag *d);

/* Marks c failed after err (message in d), tells the peers, and returns err.
 * What the peers are told (cause.h) is what a transport that failed
 * because of a peer saw (its `cause`), else that this rank failed by
 * itself with err. */
weft_err weft__comm_fail(weft_comm *c, weft_err err, weft_diag *d);
/* weft__comm_fail telling the peers `why` (a peer's failure this rank saw
 * outside the transports: a control-page wait, a timeout). */
weft_err weft__comm_fail_cause(weft_comm *c, weft_err err, const weft__cause *why, weft_diag *d);

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

/* Checks a collective's dtype (and op when needs_op) and that c has not
 * failed; WEFT_EINVAL or WEFT_EPEER with a message (coll_ring.c). */
weft_err weft__coll_check(weft_comm *c, weft_dtype dtype, weft_redop op, bool needs_op,
                          weft_diag *d);

#endif
