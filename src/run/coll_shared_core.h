/* The pieces of the single-pass collectives (coll_shared.c) that every
 * single-pass collective uses: the per-call agreement, the peers' buffers,
 * and the tile loops that read them and write them. coll_shared.c holds
 * allreduce, reduce-scatter and allgather, coll_shared_root.c broadcast
 * and reduce, coll_shared_a2a.c all-to-all. */
#ifndef WEFT_RUN_COLL_SHARED_CORE_H
#define WEFT_RUN_COLL_SHARED_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run/comm_internal.h"
#include "run/reduce.h"
#include "run/transport/shm/region.h"

/* Calls of at least this many bytes write their results with streaming
 * stores: beyond the caches the caller reads them back from memory anyway
 * (as coll_ring.c's NT_MIN_BYTES). */
#define WEFT__SHARED_NT_MIN_BYTES (8u << 20)

/* Bytes of a tile of weft__shared_combine's work area: a multiple of every
 * element size and of a cache line. */
#define WEFT__SHARED_TILE 512u

/* The collective of a call record (weft__region_rec.kind). */
enum {
    WEFT__SHARED_ALLREDUCE = 1,
    WEFT__SHARED_REDUCE_SCATTER = 2,
    WEFT__SHARED_ALLGATHER = 3,
    WEFT__SHARED_BROADCAST = 4,
    WEFT__SHARED_REDUCE = 5,
    WEFT__SHARED_ALLTOALL = 6
};

/* "allreduce", ... for a kind; "?" for anything else. */
const char *weft__shared_kind_name(uint32_t kind);

/* Publishes this rank's record (the current call's arguments, call_agree.h,
 * and where its sbytes of sendbuf and rbytes of recvbuf lie) and decides
 * with everyone's: *ran stays false (the ordinary path) unless every rank's
 * buffers that `need`s (WEFT__REC_*) lie in one and the same allocation.
 * Ranks whose arguments differ get WEFT_EINVAL, all alike
 * (weft__call_check_recs). On success with *ran, *seq is the call's number
 * for weft__region_done. */
weft_err weft__shared_agree(weft_comm *c, const void *sendbuf, size_t sbytes, const void *recvbuf,
                            size_t rbytes, uint32_t need, uint64_t *seq, bool *ran, weft_diag *d);

/* Rank q's buffer at offset off + off2 of allocation id; this rank holds
 * every peer's mapping of an allocation its own buffer lies in, so a
 * missing mapping means the records are corrupt (WEFT_EPARSE, and the
 * communicator fails). */
weft_err weft__shared_peer_buf(weft_comm *c, uint32_t id, uint32_t q, uint64_t off, size_t off2,
                               unsigned char **out, weft_diag *d);

/* dst[i][0 .. bytes) = src[0] op src[1] ... op src[nsrc-1] for every
 * i < ndst (nsrc >= 1), by red's line kernel and, where it cannot, tile by
 * tile in `work` (WEFT__SHARED_TILE bytes, 64-byte aligned, such as the
 * communicator's work area, weft__region_work): each line or tile is read
 * in full from every source before it is written, so a destination may be
 * a source. nt: streaming stores, fenced once at the end. Buffers of any
 * alignment. */
void weft__shared_combine(unsigned char *work, unsigned char *const *src, uint32_t nsrc,
                          unsigned char *const *dst, uint32_t ndst, size_t bytes,
                          const weft__reducer *red, bool nt);

/* dst[i][0 .. bytes) = src for every i < ndst, tile by tile; no
 * destination may overlap src. */
void weft__shared_spread(const unsigned char *src, unsigned char *const *dst, uint32_t ndst,
                         size_t bytes, bool nt);

#endif
