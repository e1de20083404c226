/* Reduction kernels: dst[i] = dst[i] op src[i].
 *
 * One plain loop per (dtype, op), written so that gcc and clang vectorise it
 * (reduce_loops.h: unaligned may-alias element types, restrict pointers, no
 * branch in a loop body; half and bfloat16 converted by branch-free bit
 * manipulation). The transports call them on received data directly
 * (shared-memory slots, TCP bounce buffers), so a reduction never needs an
 * extra copy. Semantics are in weft/comm.h and reduce_loops.h.
 *
 * The loops are compiled once per instruction-set tier: the portable one
 * (the build's baseline target, SSE2 on x86-64) and, on x86-64 with gcc or
 * clang, AVX2 and AVX-512 copies chosen at run time by what the CPU
 * supports (reduce_x86.c). Every tier gives bit-identical results, which
 * reduce_test.c checks against a scalar reference.
 */
#ifndef WEFT_RUN_REDUCE_H
#define WEFT_RUN_REDUCE_H

#include <stddef.h>

#include "weft/comm.h"

/* dst and src must not overlap (the loops use restrict pointers); count may
 * be 0; neither needs any alignment. */
typedef void (*weft__reduce_fn)(void *dst, const void *src, size_t count);

/* The kernel for (dtype, op) in the best tier this CPU runs, or NULL if
 * either is invalid. */
weft__reduce_fn weft__reduce_get(weft_dtype dtype, weft_redop op);

typedef enum weft__reduce_tier {
    WEFT__REDUCE_PORTABLE = 0, /* the build's baseline target */
    WEFT__REDUCE_AVX2,         /* x86-64 with AVX2 */
    WEFT__REDUCE_AVX512,       /* x86-64 with AVX-512 F, BW, VL and DQ */
    WEFT__REDUCE_TIER_COUNT
} weft__reduce_tier;

/* The kernel for (dtype, op) in one tier, or NULL if dtype, op or tier is
 * invalid or this CPU or build lacks the tier. For tests and benchmarks. */
weft__reduce_fn weft__reduce_get_tier(weft_dtype dtype, weft_redop op, weft__reduce_tier tier);

/* The tier weft__reduce_get uses on this CPU. */
weft__reduce_tier weft__reduce_best_tier(void);

/* "portable", "avx2", "avx512"; "?" if invalid. */
const char *weft__reduce_tier_name(weft__reduce_tier tier);

/* reduce_x86.c: the kernel of an x86 tier (dtype and op valid), or NULL
 * when the CPU lacks the tier or the build is not for x86-64 with gcc or
 * clang. */
weft__reduce_fn weft__reduce_x86_get(weft_dtype dtype, weft_redop op, weft__reduce_tier tier);

#endif
