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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/comm.h"

/* dst and src must not overlap, not even as the same address (the loops use
 * restrict pointers: dst one element past src read bytes already combined);
 * count may be 0; neither needs any alignment.
 *
 * Who calls a pair kernel, and why its buffers cannot overlap (audited):
 * the transports (shm.c deliver, tcp.c) combine a slot or a bounce buffer,
 * their own memory, into the caller's; coll_shared.c combines peers'
 * segments into its own work area; coll_direct.c copies an in-place input
 * first; exec_plan.c's local ops and weft_reduce_local go through
 * weft__reduce_overlapping. weft__comm_exchange's local reduce is never
 * asked for (every caller passes NULL) and would go through it too. The
 * line kernels below allow a destination that is a source. */
typedef void (*weft__reduce_fn)(void *dst, const void *src, size_t count);

/* fn(dst, src, count) for elements of es bytes where dst and src may
 * overlap: src is then copied to a temporary first, so dst[i] = dst[i] op
 * src[i] as both were before the call. WEFT_ENOMEM when the temporary
 * cannot be allocated (nothing is changed then). */
weft_err weft__reduce_overlapping(weft__reduce_fn fn, void *dst, const void *src, size_t count,
                                  size_t es);

/* The kernel for (dtype, op) in the best tier this CPU runs, or NULL if
 * either is invalid. */
weft__reduce_fn weft__reduce_get(weft_dtype dtype, weft_redop op);

/* A reduction of whole 64-byte lines from several buffers into several:
 * for every line at offset o in [begin, end) (end - begin a multiple of
 * 64),
 *   v = ((src[0] op src[1]) op src[2]) ... op src[nsrc - 1]   (nsrc >= 2)
 * element by element, bit for bit what the pair kernel gives, and v is
 * written to dst[i] + o for every i < ndst. Every source of a line is read
 * before the line is written, so a destination may be a source (the same
 * address; no other overlap). With nt the stores are streaming and not
 * fenced (copy_nt.h: weft__copy_nt_fence before the bytes are published),
 * and every dst[i] + begin must be 64-byte aligned; without nt nothing
 * needs any alignment. begin must be a multiple of the element size. */
typedef void (*weft__reduce_lines_fn)(unsigned char *const *dst, uint32_t ndst,
                                      const unsigned char *const *src, uint32_t nsrc, size_t begin,
                                      size_t end, bool nt);

/* A reduction's kernels for (dtype, op) in one tier. */
typedef struct weft__reducer {
    weft__reduce_fn pair;
    weft__reduce_lines_fn lines;
    size_t es; /* element size */
} weft__reducer;

/* The kernels of (dtype, op) in the best tier this CPU runs; false (and
 * *out zeroed) if either is invalid. */
bool weft__reducer_get(weft_dtype dtype, weft_redop op, weft__reducer *out);

typedef enum weft__reduce_tier {
    WEFT__REDUCE_PORTABLE = 0, /* the build's baseline target */
    WEFT__REDUCE_AVX2,         /* x86-64 with AVX2 */
    WEFT__REDUCE_AVX512,       /* x86-64 with AVX-512 F, BW, VL and DQ */
    WEFT__REDUCE_TIER_COUNT
} weft__reduce_tier;

/* The kernel for (dtype, op) in one tier, or NULL if dtype, op or tier is
 * invalid or this CPU or build lacks the tier. For tests and benchmarks. */
weft__reduce_fn weft__reduce_get_tier(weft_dtype dtype, weft_redop op, weft__reduce_tier tier);

/* The line kernel for (dtype, op) in one tier, NULL as above. */
weft__reduce_lines_fn weft__reduce_lines_get_tier(weft_dtype dtype, weft_redop op,
                                                  weft__reduce_tier tier);

/* The tier weft__reduce_get uses on this CPU (asked once, then cached). */
weft__reduce_tier weft__reduce_best_tier(void);

/* "portable", "avx2", "avx512"; "?" if invalid. */
const char *weft__reduce_tier_name(weft__reduce_tier tier);

/* reduce_x86.c: the kernels of an x86 tier (dtype and op valid): false
 * when the CPU lacks the tier or the build is not for x86-64 with gcc or
 * clang. */
bool weft__reduce_x86_get(weft_dtype dtype, weft_redop op, weft__reduce_tier tier,
                          weft__reduce_fn *pair, weft__reduce_lines_fn *lines);

#endif
