/* Reduction kernels: the portable tier and the choice of tier (reduce.h).
 *
 * gcc 12 at -O2 vectorises none of the loops (its very cheap cost model
 * rejects them), and the transports run them on every received byte, so
 * this file and reduce_x86.c ask gcc for -O3; clang vectorises them at -O2
 * already. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif
#include "run/reduce.h"

#define WEFT__K(name) name##_portable
#define WEFT__K_ATTR __attribute__((unused))
#define WEFT__K_CMP64 0
#include "run/reduce_loops.h"
#undef WEFT__K
#undef WEFT__K_ATTR
#undef WEFT__K_CMP64

static const char *const tier_names[WEFT__REDUCE_TIER_COUNT] = {
    [WEFT__REDUCE_PORTABLE] = "portable",
    [WEFT__REDUCE_AVX2] = "avx2",
    [WEFT__REDUCE_AVX512] = "avx512",
};

const char *weft__reduce_tier_name(weft__reduce_tier tier)
{
    return (unsigned)tier < WEFT__REDUCE_TIER_COUNT ? tier_names[tier] : "?";
}

weft__reduce_fn weft__reduce_get_tier(weft_dtype dtype, weft_redop op, weft__reduce_tier tier)
{
    if ((unsigned)dtype >= WEFT__DTYPE_COUNT || (unsigned)op >= WEFT__REDOP_COUNT) return NULL;
    if (tier == WEFT__REDUCE_PORTABLE) return table_portable[dtype][op];
    if ((unsigned)tier >= WEFT__REDUCE_TIER_COUNT) return NULL;
    return weft__reduce_x86_get(dtype, op, tier);
}

weft__reduce_tier weft__reduce_best_tier(void)
{
    for (unsigned t = WEFT__REDUCE_TIER_COUNT - 1; t > WEFT__REDUCE_PORTABLE; t--) {
        if (weft__reduce_x86_get(WEFT_INT8, WEFT_SUM, (weft__reduce_tier)t))
            return (weft__reduce_tier)t;
    }
    return WEFT__REDUCE_PORTABLE;
}

weft__reduce_fn weft__reduce_get(weft_dtype dtype, weft_redop op)
{
    return weft__reduce_get_tier(dtype, op, weft__reduce_best_tier());
}

weft_err weft_reduce_local(void *dst, const void *src, size_t count, weft_dtype dtype,
                           weft_redop op)
{
    weft__reduce_fn fn = weft__reduce_get(dtype, op);
    if (!fn) return WEFT_EINVAL;
    if (count) fn(dst, src, count);
    return WEFT_OK;
}
