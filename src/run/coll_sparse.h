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

#endif
