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
/* What weft__sparse_post_all calls for rank j's message once it is in. */
typedef weft_err (*weft__sparse_each)(void *arg, uint32_t j, weft_diag *d);

/* Sends sl[j] bytes of sb[j] to every rank j and receives rl[j] bytes from
 * it into rb[j] (0: none; entry own rank ignored), every request posted at
 * once on the transports; then, with each, calls each(arg, j) for j = 0 ..
 * size - 1 in rank order, each as soon as rank j's message is in (at once
 * for this rank and for empty messages), and waits for all. A callback's
 * error stops the callbacks, not the transfers: it is returned once every
 * request is complete. Blocking. */
weft_err weft__sparse_post_all(struct weft_comm *c, const unsigned char *const *sb,
                               const size_t *sl, unsigned char *const *rb, const size_t *rl,
                               weft__sparse_each each, void *arg, weft_diag *d);
/* Every rank's w words into all (w per rank, in rank order), with
 * weft__sparse_post_all (never the schedule selection). */
weft_err weft__sparse_gather_words(struct weft_comm *c, const uint64_t *mine, uint64_t *all,
                                   size_t w, weft_diag *d);

#endif
