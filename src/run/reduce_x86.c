/* Reduction kernels: the AVX2 and AVX-512 tiers (reduce.h).
 *
 * The same loops as the portable tier (reduce_loops.h), compiled with
 * target attributes so that one binary built for the x86-64 baseline runs
 * 256- and 512-bit vectors where the CPU has them; the tier is chosen per
 * call of weft__reduce_get from __builtin_cpu_supports, which also checks
 * that the OS saves the wider registers. On other targets, or compilers
 * without these attributes, no x86 tier exists and the portable tier runs.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif
#include "run/reduce.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#define WEFT__K(name) name##_avx2
#define WEFT__K_ATTR __attribute__((unused, target("avx2")))
#define WEFT__K_CMP64 1
#include "run/reduce_loops.h"
#undef WEFT__K
#undef WEFT__K_ATTR

#define WEFT__K(name) name##_avx512
#define WEFT__K_ATTR __attribute__((unused, target("avx512f,avx512bw,avx512vl,avx512dq")))
#include "run/reduce_loops.h"
#undef WEFT__K
#undef WEFT__K_ATTR
#undef WEFT__K_CMP64

weft__reduce_fn weft__reduce_x86_get(weft_dtype dtype, weft_redop op, weft__reduce_tier tier)
{
    __builtin_cpu_init();
    switch (tier) {
    case WEFT__REDUCE_AVX2:
        return __builtin_cpu_supports("avx2") ? table_avx2[dtype][op] : NULL;
    case WEFT__REDUCE_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")
                   ? table_avx512[dtype][op]
                   : NULL;
    default:
        return NULL;
    }
}

#else

weft__reduce_fn weft__reduce_x86_get(weft_dtype dtype, weft_redop op, weft__reduce_tier tier)
{
    (void)dtype;
    (void)op;
    (void)tier;
    return NULL;
}

#endif
