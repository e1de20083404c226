/* Items spread over threads, with results that do not depend on how many.
 *
 * weft__par_for(n, workers, fn, ctx) calls fn(ctx, i, w) once for every
 * item i in [0, n), on at most `workers` threads, the calling one among
 * them. w in [0, workers) names the thread that runs the item, for
 * per-thread scratch; what an item writes must depend on i alone (items
 * write disjoint memory, or each worker's own, summed by the caller in a
 * fixed order), so that any number of threads gives the same bytes.
 * Threads take items in increasing order from a shared counter; after an
 * item fails no further item is taken, and every item below it has been
 * taken (and runs to its end). The result is WEFT_OK, or the error of the
 * least item that failed. A thread that cannot be started leaves its share
 * to the others, so the call never fails for want of threads. A loop
 * called from inside an item of a loop that runs on several threads runs
 * on the item's thread alone (worker 0): nested loops never multiply the
 * threads.
 *
 * The number of threads is weft_threads_get() (weft/threads.h).
 */
#ifndef WEFT_BASE_PAR_H
#define WEFT_BASE_PAR_H

#include <stddef.h>

#include "weft/err.h"

typedef weft_err (*weft__par_fn)(void *ctx, size_t item, unsigned worker);

/* weft_threads_get(), at most items, at least 1: the `workers` to size
 * per-thread scratch for, then to pass to weft__par_for. */
unsigned weft__par_workers(size_t items);

weft_err weft__par_for(size_t n, unsigned workers, weft__par_fn fn, void *ctx);

#endif
