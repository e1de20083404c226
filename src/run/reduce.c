/* Reduction kernels: the portable tier and the choice of tier (reduce.h).
 *
 * gcc 12 at -O2 vectorises none of the loops (its very cheap cost model
 * rejects them), and the transports run them on every received byte, so
 * this file and reduce_x86.c ask gcc for -O3; clang vectorises them at -O2
 * already. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "no-loop-unroll-and-jam")
#endif
#include "run/reduce.h"

#include <stdatomic.h>
#include <string.h>

#include "base/alloc.h"
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#define WEFT__K(name) name##_portable
#define WEFT__K_ATTR __attribute__((unused))
#define WEFT__K_CMP64 0
#if defined(__x86_64__)
/* SSE2, the x86-64 baseline, has 16-byte streaming stores. */
#define WEFT__K_STREAM64(d, line)                                                                  \
    do {                                                                                           \
        for (int k_ = 0; k_ < 64; k_ += 16)                                                        \
            _mm_stream_si128((__m128i *)(void *)((d) + k_),                                        \
                             _mm_load_si128((const __m128i *)(const void *)((line) + k_)));        \
    } while (0)
#define WEFT__K_STORE64(d, line)                                                                   \
    do {                                                                                           \
        for (int k_ = 0; k_ < 64; k_ += 16)                                                        \
            _mm_storeu_si128((__m128i *)(void *)((d) + k_),                                        \
                             _mm_load_si128((const __m128i *)(const void *)((line) + k_)));        \
    } while (0)
#else
#define WEFT__K_STREAM64(d, line) memcpy((d), (line), 64)
#define WEFT__K_STORE64(d, line) memcpy((d), (line), 64)
#endif
#include "run/reduce_loops.h"
#undef WEFT__K
#undef WEFT__K_ATTR
#undef WEFT__K_CMP64
#undef WEFT__K_STREAM64
#undef WEFT__K_STORE64

static const char *const tier_names[WEFT__REDUCE_TIER_COUNT] = {
    [WEFT__REDUCE_PORTABLE] = "portable",
    [WEFT__REDUCE_AVX2] = "avx2",
    [WEFT__REDUCE_AVX512] = "avx512",
};

const char *weft__reduce_tier_name(weft__reduce_tier tier)
{
    return (unsigned)tier < WEFT__REDUCE_TIER_COUNT ? tier_names[tier] : "?";
}

/* Both kernels of (dtype, op) in one tier; false if any is invalid or the
 * CPU lacks the tier. */
static bool get_tier(weft_dtype dtype, weft_redop op, weft__reduce_tier tier, weft__reduce_fn *pair,
                     weft__reduce_lines_fn *lines)
{
    if ((unsigned)dtype >= WEFT__DTYPE_COUNT || (unsigned)op >= WEFT__REDOP_COUNT)
        return false;
    if (tier == WEFT__REDUCE_PORTABLE) {
        if (pair)
            *pair = table_portable[dtype][op];
        if (lines)
            *lines = lines_table_portable[dtype][op];
        return true;
    }
    if ((unsigned)tier >= WEFT__REDUCE_TIER_COUNT)
        return false;
    return weft__reduce_x86_get(dtype, op, tier, pair, lines);
}

weft__reduce_fn weft__reduce_get_tier(weft_dtype dtype, weft_redop op, weft__reduce_tier tier)
{
    weft__reduce_fn pair = NULL;
    return get_tier(dtype, op, tier, &pair, NULL) ? pair : NULL;
}

weft__reduce_lines_fn weft__reduce_lines_get_tier(weft_dtype dtype, weft_redop op,
                                                  weft__reduce_tier tier)
{
    weft__reduce_lines_fn lines = NULL;
    return get_tier(dtype, op, tier, NULL, &lines) ? lines : NULL;
}

weft__reduce_tier weft__reduce_best_tier(void)
{
    static atomic_int best = -1;
    int b = atomic_load_explicit(&best, memory_order_relaxed);
    if (b < 0) {
        b = WEFT__REDUCE_PORTABLE;
        for (unsigned t = WEFT__REDUCE_TIER_COUNT - 1; t > WEFT__REDUCE_PORTABLE && !b; t--)
            if (weft__reduce_x86_get(WEFT_INT8, WEFT_SUM, (weft__reduce_tier)t, NULL, NULL))
                b = (int)t;
        atomic_store_explicit(&best, b, memory_order_relaxed);
    }
    return (weft__reduce_tier)b;
}

/* The kernels of weft__reduce_get, kept per pair once looked up. */
static _Atomic(weft__reduce_fn) kept[WEFT__DTYPE_COUNT][WEFT__REDOP_COUNT];

/* A pair's first look-up, out of line: inlined, its call kept registers
 * that every later weft__reduce_get saved and restored (30 instructions a
 * call against 10, callgrind). */
static __attribute__((noinline)) weft__reduce_fn look_up(weft_dtype dtype, weft_redop op)
{
    weft__reduce_fn fn = weft__reduce_get_tier(dtype, op, weft__reduce_best_tier());
    atomic_store_explicit(&kept[dtype][op], fn, memory_order_relaxed);
    return fn;
}

weft__reduce_fn weft__reduce_get(weft_dtype dtype, weft_redop op)
{
    /* Kept per pair once looked up (the best tier never changes once
     * chosen): the MPI library's small reductions ask on every call, and
     * the look-up (the tier's CPU check) cost 77 instructions a call of an
     * 8-byte MPI_Reduce on 4 ranks, kept 30 (callgrind). */
    if ((unsigned)dtype >= WEFT__DTYPE_COUNT || (unsigned)op >= WEFT__REDOP_COUNT)
        return NULL;
    weft__reduce_fn fn = atomic_load_explicit(&kept[dtype][op], memory_order_relaxed);
    return fn ? fn : look_up(dtype, op);
}

bool weft__reducer_get(weft_dtype dtype, weft_redop op, weft__reducer *out)
{
    *out = (weft__reducer){0};
    if (!get_tier(dtype, op, weft__reduce_best_tier(), &out->pair, &out->lines))
        return false;
    out->es = weft_dtype_size(dtype);
    return true;
}

weft_err weft__reduce_overlapping(weft__reduce_fn fn, void *dst, const void *src, size_t count,
                                  size_t es)
{
    size_t bytes = count * es;
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    if (!bytes)
        return WEFT_OK;
    if (s + bytes <= d || d + bytes <= s) {
        fn(dst, src, count);
        return WEFT_OK;
    }
    void *tmp = weft__malloc(bytes);
    if (!tmp)
        return WEFT_ENOMEM;
    memcpy(tmp, src, bytes);
    fn(dst, tmp, count);
    weft__free(tmp);
    return WEFT_OK;
}

weft_err weft_reduce_local(void *dst, const void *src, size_t count, weft_dtype dtype,
                           weft_redop op)
{
    weft__reduce_fn fn = weft__reduce_get(dtype, op);
    if (!fn)
        return WEFT_EINVAL;
    return weft__reduce_overlapping(fn, dst, src, count, weft_dtype_size(dtype));
}
