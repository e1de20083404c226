/* Reduction kernels: the AVX2 and AVX-512 tiers (reduce.h).
 *
 * The same loops as the portable tier (reduce_loops.h), compiled with
 * target attributes so that one binary built for the x86-64 baseline runs
 * 256- and 512-bit vectors where the CPU has them, plus half sum and prod
 * with hardware conversions. The AVX2 tier needs AVX2 and F16C (every CPU
 * with AVX2 has F16C), the AVX-512 tier AVX-512 F, BW, VL and DQ; the tier
 * is chosen per call of weft__reduce_get from __builtin_cpu_supports, which
 * also checks that the OS saves the wider registers. On other targets, or compilers
 * without these attributes, no x86 tier exists and the portable tier runs.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "no-loop-unroll-and-jam")
#endif
#include "run/reduce.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>

/* half sum and prod convert with F16C (AVX2 tier) or AVX-512F: one
 * instruction each way per vector, where the portable bit manipulation
 * takes some forty. vcvtph2ps is exact (it quiets a signalling NaN, which
 * the float operation that follows would do anyway); vcvtps2ph with the
 * rounding mode in its immediate (nearest even) ignores MXCSR's rounding
 * and, like weft__float_to_half, keeps subnormals, overflows to infinity
 * and keeps a NaN's top fraction bits, quieted. (Its inputs are sums and
 * products of halves, never float subnormals, so DAZ cannot matter.)
 * reduce_test.c checks these kernels against the reference like every
 * other. The last count % W elements go through the tier's loop. */
#define WEFT__F16C_KERNEL(NAME, ATTR, W, VEC, HALVES, LOAD, STORE, WIDEN, NARROW, OPV, TAIL3)      \
    static ATTR void NAME##3(void *dst, const void *src0, const void *src1, size_t n)              \
    {                                                                                              \
        unsigned char *d = dst;                                                                    \
        const unsigned char *s0 = src0, *s1 = src1;                                                \
        size_t i = 0;                                                                              \
        for (; i + (W) <= n; i += (W)) {                                                           \
            VEC a = WIDEN(LOAD((const HALVES *)(const void *)(s0 + 2 * i)));                       \
            VEC b = WIDEN(LOAD((const HALVES *)(const void *)(s1 + 2 * i)));                       \
            STORE((HALVES *)(void *)(d + 2 * i), NARROW(OPV(a, b), _MM_FROUND_TO_NEAREST_INT));    \
        }                                                                                          \
        if (i < n)                                                                                 \
            TAIL3(d + 2 * i, s0 + 2 * i, s1 + 2 * i, n - i);                                       \
    }                                                                                              \
    WEFT__PAIR_OF(NAME, ATTR)

/* The pair kernel of a three-operand one: these loops are written with
 * intrinsics, so the destination may be the first source. */
#define WEFT__PAIR_OF(NAME, ATTR)                                                                  \
    static ATTR void NAME(void *dst, const void *src, size_t n)                                    \
    {                                                                                              \
        NAME##3(dst, dst, src, n);                                                                 \
    }

/* float and double min and max, AVX-512 tier. The loops of
 * reduce_loops.h compile, with gcc, to a min whose second operand is a
 * masked load from src (merging into d where d is not NaN): four
 * instructions per vector and the fastest in cache, but masked loads
 * stream from DRAM at about half the rate of plain ones on the Zen 5 this
 * was measured on (9.6 against 17.5 GB/s at 64 MiB). Here src is loaded
 * whole and the NaN lanes of d are blended in after the min; vminps(a, b)
 * is a < b ? a : b, so these are exactly the loops' min and max. */
#define WEFT__MINMAX512(NAME, W, VEC, MASK, LOAD, STORE, CMP, OPV, BLEND, TAIL3)                   \
    static WEFT__AVX512_ATTR void NAME##3(void *dst, const void *src0, const void *src1, size_t n) \
    {                                                                                              \
        unsigned char *d = dst;                                                                    \
        const unsigned char *s0 = src0, *s1 = src1;                                                \
        size_t i = 0, es = sizeof(VEC) / (W);                                                      \
        for (; i + (W) <= n; i += (W)) {                                                           \
            VEC a = LOAD((const void *)(s0 + es * i));                                             \
            VEC b = LOAD((const void *)(s1 + es * i));                                             \
            MASK nan = CMP(a, a, _CMP_UNORD_Q);                                                    \
            STORE((void *)(d + es * i), BLEND(nan, OPV(a, b), a));                                 \
        }                                                                                          \
        if (i < n)                                                                                 \
            TAIL3(d + es * i, s0 + es * i, s1 + es * i, n - i);                                    \
    }                                                                                              \
    WEFT__PAIR_OF(NAME, WEFT__AVX512_ATTR)

#define WEFT__AVX2_ATTR __attribute__((target("avx2,f16c")))
#define WEFT__AVX512_ATTR __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

#define WEFT__DECLARE(NAME, ATTR)                                                                  \
    static ATTR void NAME(void *dst, const void *src, size_t n);                                   \
    static ATTR void NAME##3(void *dst, const void *src0, const void *src1, size_t n);
WEFT__DECLARE(f16_sum_avx2_f16c, WEFT__AVX2_ATTR)
WEFT__DECLARE(f16_prod_avx2_f16c, WEFT__AVX2_ATTR)
WEFT__DECLARE(f16_sum_avx512_cvt, WEFT__AVX512_ATTR)
WEFT__DECLARE(f16_prod_avx512_cvt, WEFT__AVX512_ATTR)
WEFT__DECLARE(f32_min_avx512_blend, WEFT__AVX512_ATTR)
WEFT__DECLARE(f32_max_avx512_blend, WEFT__AVX512_ATTR)
WEFT__DECLARE(f64_min_avx512_blend, WEFT__AVX512_ATTR)
WEFT__DECLARE(f64_max_avx512_blend, WEFT__AVX512_ATTR)

#define WEFT__K(name) name##_avx2
#define WEFT__K_ATTR __attribute__((unused, target("avx2,f16c")))
#define WEFT__K_CMP64 1
#define WEFT__K_F16_SUM f16_sum_avx2_f16c
#define WEFT__K_F16_SUM3 f16_sum_avx2_f16c3
#define WEFT__K_F16_PROD f16_prod_avx2_f16c
#define WEFT__K_F16_PROD3 f16_prod_avx2_f16c3
#define WEFT__K_STORE64(d, line)                                                                   \
    do {                                                                                           \
        _mm256_storeu_si256((__m256i *)(void *)(d), _mm256_load_si256((const __m256i *)(line)));   \
        _mm256_storeu_si256((__m256i *)(void *)((d) + 32),                                         \
                            _mm256_load_si256((const __m256i *)(line + 32)));                      \
    } while (0)
#define WEFT__K_STREAM64(d, line)                                                                  \
    do {                                                                                           \
        _mm256_stream_si256((__m256i *)(void *)(d), _mm256_load_si256((const __m256i *)(line)));   \
        _mm256_stream_si256((__m256i *)(void *)((d) + 32),                                         \
                            _mm256_load_si256((const __m256i *)(line + 32)));                      \
    } while (0)
#include "run/reduce_loops.h"
#undef WEFT__K
#undef WEFT__K_ATTR
#undef WEFT__K_STREAM64
#undef WEFT__K_STORE64

#define WEFT__K(name) name##_avx512
#define WEFT__K_ATTR __attribute__((unused, target("avx512f,avx512bw,avx512vl,avx512dq")))
#define WEFT__K_F16_SUM f16_sum_avx512_cvt
#define WEFT__K_F16_SUM3 f16_sum_avx512_cvt3
#define WEFT__K_F16_PROD f16_prod_avx512_cvt
#define WEFT__K_F16_PROD3 f16_prod_avx512_cvt3
#define WEFT__K_F32_MIN f32_min_avx512_blend
#define WEFT__K_F32_MIN3 f32_min_avx512_blend3
#define WEFT__K_F32_MAX f32_max_avx512_blend
#define WEFT__K_F32_MAX3 f32_max_avx512_blend3
#define WEFT__K_F64_MIN f64_min_avx512_blend
#define WEFT__K_F64_MIN3 f64_min_avx512_blend3
#define WEFT__K_F64_MAX f64_max_avx512_blend
#define WEFT__K_F64_MAX3 f64_max_avx512_blend3
#define WEFT__K_STORE64(d, line) _mm512_storeu_si512((void *)(d), _mm512_load_si512(line))
#define WEFT__K_STREAM64(d, line) _mm512_stream_si512((void *)(d), _mm512_load_si512(line))
#include "run/reduce_loops.h"
#undef WEFT__K
#undef WEFT__K_ATTR
#undef WEFT__K_CMP64
#undef WEFT__K_STREAM64
#undef WEFT__K_STORE64

WEFT__F16C_KERNEL(f16_sum_avx2_f16c, WEFT__AVX2_ATTR, 8, __m256, __m128i, _mm_loadu_si128,
                  _mm_storeu_si128, _mm256_cvtph_ps, _mm256_cvtps_ph, _mm256_add_ps, f16_sum3_avx2)
WEFT__F16C_KERNEL(f16_prod_avx2_f16c, WEFT__AVX2_ATTR, 8, __m256, __m128i, _mm_loadu_si128,
                  _mm_storeu_si128, _mm256_cvtph_ps, _mm256_cvtps_ph, _mm256_mul_ps, f16_prod3_avx2)
WEFT__F16C_KERNEL(f16_sum_avx512_cvt, WEFT__AVX512_ATTR, 16, __m512, __m256i, _mm256_loadu_si256,
                  _mm256_storeu_si256, _mm512_cvtph_ps, _mm512_cvtps_ph, _mm512_add_ps,
                  f16_sum3_avx512)
WEFT__MINMAX512(f32_min_avx512_blend, 16, __m512, __mmask16, _mm512_loadu_ps, _mm512_storeu_ps,
                _mm512_cmp_ps_mask, _mm512_min_ps, _mm512_mask_blend_ps, f32_min3_avx512)
WEFT__MINMAX512(f32_max_avx512_blend, 16, __m512, __mmask16, _mm512_loadu_ps, _mm512_storeu_ps,
                _mm512_cmp_ps_mask, _mm512_max_ps, _mm512_mask_blend_ps, f32_max3_avx512)
WEFT__MINMAX512(f64_min_avx512_blend, 8, __m512d, __mmask8, _mm512_loadu_pd, _mm512_storeu_pd,
                _mm512_cmp_pd_mask, _mm512_min_pd, _mm512_mask_blend_pd, f64_min3_avx512)
WEFT__MINMAX512(f64_max_avx512_blend, 8, __m512d, __mmask8, _mm512_loadu_pd, _mm512_storeu_pd,
                _mm512_cmp_pd_mask, _mm512_max_pd, _mm512_mask_blend_pd, f64_max3_avx512)
WEFT__F16C_KERNEL(f16_prod_avx512_cvt, WEFT__AVX512_ATTR, 16, __m512, __m256i, _mm256_loadu_si256,
                  _mm256_storeu_si256, _mm512_cvtph_ps, _mm512_cvtps_ph, _mm512_mul_ps,
                  f16_prod3_avx512)

/* CPUID leaf 1, ECX bit 29 (clang's __builtin_cpu_supports has no "f16c"),
 * asked once: CPUID traps to the hypervisor in a virtual machine. F16C
 * uses the AVX register state, which the "avx2" check covers. */
static bool has_f16c(void)
{
    static atomic_int known; /* 0: not asked yet, 1: no, 2: yes */
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (!k) {
        unsigned a, b, c, d;
        k = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) ? 2 : 1;
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k == 2;
}

/* Whether this CPU runs the tier, asked once: __builtin_cpu_supports
 * reads what __builtin_cpu_init found, but the collectives ask per call. */
static bool tier_runs(weft__reduce_tier tier)
{
    static atomic_int known[WEFT__REDUCE_TIER_COUNT]; /* 0: not asked, 1: no, 2: yes */
    int k = atomic_load_explicit(&known[tier], memory_order_relaxed);
    if (!k) {
        __builtin_cpu_init();
        bool yes = tier == WEFT__REDUCE_AVX2
                       ? __builtin_cpu_supports("avx2") && has_f16c()
                       : __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                             __builtin_cpu_supports("avx512vl") &&
                             __builtin_cpu_supports("avx512dq");
        k = yes ? 2 : 1;
        atomic_store_explicit(&known[tier], k, memory_order_relaxed);
    }
    return k == 2;
}

bool weft__reduce_x86_get(weft_dtype dtype, weft_redop op, weft__reduce_tier tier,
                          weft__reduce_fn *pair, weft__reduce_lines_fn *lines)
{
    if (tier != WEFT__REDUCE_AVX2 && tier != WEFT__REDUCE_AVX512)
        return false;
    if (!tier_runs(tier))
        return false;
    bool avx2 = tier == WEFT__REDUCE_AVX2;
    if (pair)
        *pair = avx2 ? table_avx2[dtype][op] : table_avx512[dtype][op];
    if (lines)
        *lines = avx2 ? lines_table_avx2[dtype][op] : lines_table_avx512[dtype][op];
    return true;
}

#else

bool weft__reduce_x86_get(weft_dtype dtype, weft_redop op, weft__reduce_tier tier,
                          weft__reduce_fn *pair, weft__reduce_lines_fn *lines)
{
    (void)dtype;
    (void)op;
    (void)tier;
    (void)pair;
    (void)lines;
    return false;
}

#endif
