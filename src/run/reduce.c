/* Reduction kernels (see reduce.h).
 *
 * gcc 12 at -O2 vectorises none of these loops (its cheap cost model
 * rejects them), and the transports run them on every received byte, so
 * this file asks gcc for -O3; clang vectorises them at -O2 already. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif
#include "run/reduce.h"

#include <stdint.h>

#include "run/half.h"

/* Element types that may sit at any address and alias anything, so that the
 * kernels accept unaligned buffers and stay vectorisable. */
#define WEFT__UNALIGNED(T) __attribute__((aligned(1), may_alias)) T
typedef WEFT__UNALIGNED(uint8_t) u_u8;
typedef WEFT__UNALIGNED(uint16_t) u_u16;
typedef WEFT__UNALIGNED(uint32_t) u_u32;
typedef WEFT__UNALIGNED(uint64_t) u_u64;
typedef WEFT__UNALIGNED(int8_t) u_i8;
typedef WEFT__UNALIGNED(int16_t) u_i16;
typedef WEFT__UNALIGNED(int32_t) u_i32;
typedef WEFT__UNALIGNED(int64_t) u_i64;
typedef WEFT__UNALIGNED(float) u_f32;
typedef WEFT__UNALIGNED(double) u_f64;

/* Integer sum and product are computed in the unsigned type of the same
 * width: wrapping is defined there and the bits are those of two's
 * complement. (int8/int16 promote to int, where the product of two 16-bit
 * values can overflow; the casts to uint32_t keep it defined.) */
#define INT_KERNELS(NAME, T, UT, WIDE)                                                             \
    static void NAME##_sum(void *dst, const void *src, size_t n)                                   \
    {                                                                                              \
        T *restrict d = dst;                                                                       \
        const T *restrict s = src;                                                                 \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = (UT)((WIDE)(UT)d[i] + (WIDE)(UT)s[i]);                                          \
    }                                                                                              \
    static void NAME##_prod(void *dst, const void *src, size_t n)                                  \
    {                                                                                              \
        T *restrict d = dst;                                                                       \
        const T *restrict s = src;                                                                 \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = (UT)((WIDE)(UT)d[i] * (WIDE)(UT)s[i]);                                          \
    }                                                                                              \
    static void NAME##_min(void *dst, const void *src, size_t n)                                   \
    {                                                                                              \
        T *restrict d = dst;                                                                       \
        const T *restrict s = src;                                                                 \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = s[i] < d[i] ? s[i] : d[i];                                                      \
    }                                                                                              \
    static void NAME##_max(void *dst, const void *src, size_t n)                                   \
    {                                                                                              \
        T *restrict d = dst;                                                                       \
        const T *restrict s = src;                                                                 \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = s[i] > d[i] ? s[i] : d[i];                                                      \
    }

INT_KERNELS(i8, u_i8, uint8_t, uint32_t)
INT_KERNELS(u8, u_u8, uint8_t, uint32_t)
INT_KERNELS(i16, u_i16, uint16_t, uint32_t)
INT_KERNELS(u16, u_u16, uint16_t, uint32_t)
INT_KERNELS(i32, u_i32, uint32_t, uint32_t)
INT_KERNELS(u32, u_u32, uint32_t, uint32_t)
INT_KERNELS(i64, u_i64, uint64_t, uint64_t)
INT_KERNELS(u64, u_u64, uint64_t, uint64_t)

/* Floating point: min/max propagate NaN from either side (a != a is the
 * NaN test, which stays vectorisable where isnan() may not). */
#define FLT_MIN2(a, b) (((a) != (a) || (a) < (b)) ? (a) : (b))
#define FLT_MAX2(a, b) (((a) != (a) || (a) > (b)) ? (a) : (b))

#define FLOAT_KERNELS(NAME, T)                                                                     \
    static void NAME##_sum(void *dst, const void *src, size_t n)                                   \
    {                                                                                              \
        T *restrict d = dst;                                                                       \
        const T *restrict s = src;                                                                 \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = d[i] + s[i];                                                                    \
    }                                                                                              \
    static void NAME##_prod(void *dst, const void *src, size_t n)                                  \
    {                                                                                              \
        T *restrict d = dst;                                                                       \
        const T *restrict s = src;                                                                 \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = d[i] * s[i];                                                                    \
    }                                                                                              \
    static void NAME##_min(void *dst, const void *src, size_t n)                                   \
    {                                                                                              \
        T *restrict d = dst;                                                                       \
        const T *restrict s = src;                                                                 \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = FLT_MIN2(d[i], s[i]);                                                           \
    }                                                                                              \
    static void NAME##_max(void *dst, const void *src, size_t n)                                   \
    {                                                                                              \
        T *restrict d = dst;                                                                       \
        const T *restrict s = src;                                                                 \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = FLT_MAX2(d[i], s[i]);                                                           \
    }

FLOAT_KERNELS(f32, u_f32)
FLOAT_KERNELS(f64, u_f64)

/* 16-bit floats: widen both operands exactly, combine in float, round back
 * once. */
#define F16_KERNEL(NAME, OPNAME, EXPR, TOF, FROMF)                                                 \
    static void NAME##_##OPNAME(void *dst, const void *src, size_t n)                              \
    {                                                                                              \
        u_u16 *restrict d = dst;                                                                   \
        const u_u16 *restrict s = src;                                                             \
        for (size_t i = 0; i < n; i++) {                                                           \
            float a = TOF(d[i]), b = TOF(s[i]);                                                    \
            d[i] = FROMF(EXPR);                                                                    \
        }                                                                                          \
    }
#define F16_KERNELS(NAME, TOF, FROMF)                                                              \
    F16_KERNEL(NAME, sum, a + b, TOF, FROMF)                                                       \
    F16_KERNEL(NAME, prod, a *b, TOF, FROMF)                                                       \
    F16_KERNEL(NAME, min, FLT_MIN2(a, b), TOF, FROMF)                                              \
    F16_KERNEL(NAME, max, FLT_MAX2(a, b), TOF, FROMF)

F16_KERNELS(f16, weft__half_to_float, weft__float_to_half)
F16_KERNELS(bf16, weft__bf16_to_float, weft__float_to_bf16)

#define ROW(NAME)                                                                                  \
    {                                                                                              \
        NAME##_sum, NAME##_prod, NAME##_min, NAME##_max                                            \
    }

static const weft__reduce_fn kernels[WEFT__DTYPE_COUNT][WEFT__REDOP_COUNT] = {
    [WEFT_INT8] = ROW(i8),       [WEFT_UINT8] = ROW(u8),   [WEFT_INT16] = ROW(i16),
    [WEFT_UINT16] = ROW(u16),    [WEFT_INT32] = ROW(i32),  [WEFT_UINT32] = ROW(u32),
    [WEFT_INT64] = ROW(i64),     [WEFT_UINT64] = ROW(u64), [WEFT_HALF] = ROW(f16),
    [WEFT_BFLOAT16] = ROW(bf16), [WEFT_FLOAT] = ROW(f32),  [WEFT_DOUBLE] = ROW(f64),
};

weft__reduce_fn weft__reduce_get(weft_dtype dtype, weft_redop op)
{
    if ((unsigned)dtype >= WEFT__DTYPE_COUNT || (unsigned)op >= WEFT__REDOP_COUNT) return NULL;
    return kernels[dtype][op];
}

weft_err weft_reduce_local(void *dst, const void *src, size_t count, weft_dtype dtype,
                           weft_redop op)
{
    weft__reduce_fn fn = weft__reduce_get(dtype, op);
    if (!fn) return WEFT_EINVAL;
    if (count) fn(dst, src, count);
    return WEFT_OK;
}
