/* Reduction kernels: dst[i] = dst[i] op src[i].
 *
 * One plain loop per (dtype, op), written so that gcc and clang vectorise it
 * (no aliasing between dst and src other than dst == src, unaligned element
 * loads through may_alias types, branch-free min/max). The transports call
 * them on received data directly (shared-memory slots, TCP bounce buffers),
 * so a reduction never needs an extra copy. Semantics are in weft/comm.h.
 */
#ifndef WEFT_RUN_REDUCE_H
#define WEFT_RUN_REDUCE_H

#include <stddef.h>

#include "weft/comm.h"

typedef void (*weft__reduce_fn)(void *dst, const void *src, size_t count);

/* The kernel for (dtype, op), or NULL if either is invalid. */
weft__reduce_fn weft__reduce_get(weft_dtype dtype, weft_redop op);

#endif
