/* The sparse all-reduce's internals: its sort (coll_sparse.c) and the
 * transfers it shares with the quantized all-reduce (coll_sparse_xfer.c). */
#ifndef WEFT_RUN_COLL_SPARSE_H
#define WEFT_RUN_COLL_SPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/err.h"

/* Up to this many ranks the counts to the owners travel in the header's
 * allgather (64; the test sets 0 to run the separate exchange on a few
 * ranks). */
extern uint32_t weft__sparse_fold_max;

/* One (index, value) pair in flight, with its owning rank. */
typedef struct weft__sparse_rec {
    uint64_t idx;
    float v;
    uint32_t owner;
} weft__sparse_rec;

/* Stable LSD radix sort of a[0..m) by idx (its low `bits` bits, 11 a
 * pass, a pass skipped when every record shares its digit), then, when
 * by_owner, stably by owner (< owners): records of one owner stay in index
 * order and equal indices in their first order. tmp holds m records. The
 * sorted records are in a or tmp: the one returned; NULL when out of
 * memory (nothing moved). */
weft__sparse_rec *weft__sparse_sort(weft__sparse_rec *a, weft__sparse_rec *tmp, size_t m,
                                    unsigned bits, bool by_owner, uint32_t owners);

/* The owner's sum (step 4) of one message of m pairs, m positions of isz
 * (4 or 8) bytes then m floats: each value stored into acc[position] when
 * its bit in seen is clear (the bit then set), else added. The runtime's
 * loop, which bench_sparse_kernels times. */
void weft__sparse_sum_into(float *acc, uint64_t *seen, const unsigned char *msg, size_t m,
                           size_t isz);
/* Step 5: out[index] = value for the m pairs of one union (m indices of
 * isz bytes then m floats), as weft__sparse_sum_into lays them out. */
void weft__sparse_scatter(float *out, const unsigned char *msg, size_t m, size_t isz);

struct weft_comm;
struct weft__xreq;
/* What weft__sparse_posts_finish calls for rank j's message once it is
 * in. */
typedef weft_err (*weft__sparse_each)(void *arg, uint32_t j, weft_diag *d);

/* Requests posted in steps (coll_sparse_xfer.c): up to 4 per peer (two
 * messages each way), never moved while posted. at[j]: the request of
 * the last receive posted from rank j, UINT32_MAX when none. */
typedef struct weft__sparse_posts {
    struct weft__xreq *req;
    struct weft__xreq **w;
    uint32_t *at;
    uint32_t m;
} weft__sparse_posts;

weft_err weft__sparse_posts_init(weft__sparse_posts *p, uint32_t size, weft_diag *d);
/* Posts a receive of rl[j] bytes into rb[j] from every rank j (0: none;
 * own rank ignored), in the order of the pairwise steps (from me - k),
 * and sets at[]. */
weft_err weft__sparse_post_recvs(struct weft_comm *c, weft__sparse_posts *p,
                                 unsigned char *const *rb, const size_t *rl, weft_diag *d);
/* Posts a send of sl[j] bytes of sb[j] to every rank j (to me + k). */
weft_err weft__sparse_post_sends(struct weft_comm *c, weft__sparse_posts *p,
                                 const unsigned char *const *sb, const size_t *sl, weft_diag *d);
/* Waits for the receives at[] names. */
weft_err weft__sparse_wait_recvs(struct weft_comm *c, weft__sparse_posts *p, weft_diag *d);
/* With each, calls each(arg, j) for j = 0 .. size - 1 in rank order,
 * each as soon as rank j's receive (at[j]) is in (at once for this rank
 * and for ranks with none), or, with own_first, for this rank first and
 * then the others in rank order; then waits for every request posted. A
 * callback's error stops the callbacks, not the transfers: it is returned
 * once every request is complete. Blocking. Frees p (also on error). */
weft_err weft__sparse_posts_finish(struct weft_comm *c, weft__sparse_posts *p,
                                   weft__sparse_each each, void *arg, bool own_first, weft_diag *d);
void weft__sparse_posts_free(weft__sparse_posts *p);

/* Sends sl[j] bytes of sb[j] to every rank j and receives rl[j] bytes from
 * it into rb[j] (0: none; entry own rank ignored), every request posted at
 * once on the transports, then weft__sparse_posts_finish. Blocking. */
weft_err weft__sparse_post_all(struct weft_comm *c, const unsigned char *const *sb,
                               const size_t *sl, unsigned char *const *rb, const size_t *rl,
                               weft__sparse_each each, void *arg, bool own_first, weft_diag *d);
/* Every rank's w words into all (w per rank, in rank order), with
 * weft__sparse_post_all (never the schedule selection). */
weft_err weft__sparse_gather_words(struct weft_comm *c, const uint64_t *mine, uint64_t *all,
                                   size_t w, weft_diag *d);

/* Step 5, the all-gather of the owners' unions in chunks
 * (coll_sparse_gather.c). A union of u pairs travels as chunks of
 * weft__sparse_chunk_pairs(per) pairs (the last one shorter), each laid
 * out [indices][values] as a message of its own, right behind the count
 * (one word). WEFT__SPARSE_CHUNK_BYTES is two of the TCP transport's
 * 64 KiB parts (src/run/transport/tcp/tcp.c, TCP_MIN_PART), so that a
 * chunk still rides both of the default two connections to a peer
 * (WEFT_DEFAULT_TCP_CONNS, weft/comm.h) as a whole union did; consuming
 * one costs tens of microseconds at bench_sparse_kernels' rates. */
#define WEFT__SPARSE_CHUNK_BYTES (128u * 1024u)
/* The chunk's bytes the gather uses: WEFT__SPARSE_CHUNK_BYTES (the test
 * sets a few hundred, for many chunks and short last ones). */
extern size_t weft__sparse_chunk_bytes;
/* Pairs of per bytes a chunk of weft__sparse_chunk_bytes carries: even
 * (so that chunks of 12-byte pairs start at 8-byte boundaries), at least
 * 2. */
size_t weft__sparse_chunk_pairs(size_t per);
/* Packs pairs [first, first + m) of this rank's union into chunk as [m
 * indices][m values]; called for first = 0, cp, 2 cp, ... in order. */
typedef void (*weft__sparse_fill)(void *arg, size_t first, size_t m, unsigned char *chunk);
/* Consumes m pairs of some rank's union laid out [indices][values]. */
typedef weft_err (*weft__sparse_put)(void *arg, const unsigned char *chunk, size_t m, weft_diag *d);
/* This rank's union of u pairs (packed into sbuf, u x per bytes, by fill,
 * a chunk at a time, each chunk sent to every rank as soon as it is
 * packed) to every rank, and every rank's to this one: put is called once
 * per chunk of every rank's union, this rank's included, as soon as it is
 * in, in no fixed order across ranks (the unions are disjoint); with
 * wait_counts only once every count is in. counts[j] is rank j's count
 * once it is in (all of them before the first put with wait_counts).
 * Counts whose unions pass bound pairs in all (8-byte aligned each) fail
 * the communicator (WEFT_EPARSE), as does running out of memory. A put's error stops the puts, not
 * the transfers: it is returned once every request is complete. Blocking. */
weft_err weft__sparse_gather_chunks(struct weft_comm *c, size_t per, size_t u, unsigned char *sbuf,
                                    size_t bound, weft__sparse_fill fill, void *fill_arg,
                                    bool wait_counts, size_t *counts, weft__sparse_put put,
                                    void *put_arg, weft_diag *d);

#endif
