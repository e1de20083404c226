/* The reduction loops of one instruction-set tier (see reduce.h).
 *
 * A template, included once per tier (reduce.c: the portable tier;
 * reduce_x86.c: AVX2 and AVX-512), after defining
 *   WEFT__K(name)   the name of kernel `name` in this tier (adds a suffix);
 *   WEFT__K_ATTR    attributes of every kernel (target("...") for an x86
 *                   tier), always including `unused`, since a tier may
 *                   replace some of them;
 *   WEFT__K_CMP64   1 when the tier compares 64-bit integers in vector
 *                   registers (SSE4.2 and up), else 0: 64-bit min/max then
 *                   use a formula of add, xor, and and shift (Hacker's
 *                   Delight 2-12), which SSE2 vectorises;
 * and optionally WEFT__K_F16_SUM, WEFT__K_F16_PROD, WEFT__K_F32_MIN,
 * WEFT__K_F32_MAX, WEFT__K_F64_MIN and WEFT__K_F64_MAX: the tier's own
 * kernels for those table entries (declared before the include), when it
 * has better ones than these loops.
 * It defines static kernels WEFT__K(i8_sum) .. WEFT__K(f64_max) and their
 * table WEFT__K(table), indexed by dtype and op. Every loop
 * is one pass, element by element, with no branch in its body, over
 * unaligned may-alias element types and restrict pointers, so gcc (at -O3)
 * and clang vectorise all of them; the result of each element depends only
 * on the two inputs, never on the tier, the length or the alignment.
 *
 * Semantics (weft/comm.h): integer sum and prod wrap, computed in the
 * unsigned type of the same width (the casts keep int8/int16 products,
 * which C promotes to int, defined). Floating min(d, s) is d when d is NaN
 * or d < s, else s: NaN when either operand is NaN (d's when both are), and
 * s when they compare equal (so min(-0, +0) = +0 and min(+0, -0) = -0);
 * max likewise with >. half and bfloat16 sum and prod widen both operands
 * exactly to float, combine and round back once; their min and max give
 * bit for bit what that would (the winner unchanged, a NaN quieted) but
 * compare 16-bit keys without converting.
 */
#include <stdint.h>

#include "run/half.h"
#include "run/reduce.h"

#ifndef WEFT__UNALIGNED_TYPES
#define WEFT__UNALIGNED_TYPES
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
#endif

#define WEFT__LOOP(NAME, T, BODY)                                                                  \
    static WEFT__K_ATTR void WEFT__K(NAME)(void *dst, const void *src, size_t n)                   \
    {                                                                                              \
        T *restrict d = dst;                                                                       \
        const T *restrict s = src;                                                                 \
        for (size_t i = 0; i < n; i++) {                                                           \
            BODY;                                                                                  \
        }                                                                                          \
    }

#define WEFT__INT_ARITH(NAME, T, UT, WIDE)                                                         \
    WEFT__LOOP(NAME##_sum, T, d[i] = (UT)((WIDE)(UT)d[i] + (WIDE)(UT)s[i]))                        \
    WEFT__LOOP(NAME##_prod, T, d[i] = (UT)((WIDE)(UT)d[i] * (WIDE)(UT)s[i]))

#define WEFT__INT_MINMAX(NAME, T)                                                                  \
    WEFT__LOOP(NAME##_min, T, d[i] = s[i] < d[i] ? s[i] : d[i])                                    \
    WEFT__LOOP(NAME##_max, T, d[i] = s[i] > d[i] ? s[i] : d[i])

WEFT__INT_ARITH(i8, u_i8, uint8_t, uint32_t)
WEFT__INT_ARITH(u8, u_u8, uint8_t, uint32_t)
WEFT__INT_ARITH(i16, u_i16, uint16_t, uint32_t)
WEFT__INT_ARITH(u16, u_u16, uint16_t, uint32_t)
WEFT__INT_ARITH(i32, u_i32, uint32_t, uint32_t)
WEFT__INT_ARITH(u32, u_u32, uint32_t, uint32_t)
WEFT__INT_ARITH(i64, u_i64, uint64_t, uint64_t)
WEFT__INT_ARITH(u64, u_u64, uint64_t, uint64_t)
WEFT__INT_MINMAX(i8, u_i8)
WEFT__INT_MINMAX(u8, u_u8)
WEFT__INT_MINMAX(i16, u_i16)
WEFT__INT_MINMAX(u16, u_u16)
WEFT__INT_MINMAX(i32, u_i32)
WEFT__INT_MINMAX(u32, u_u32)

#if WEFT__K_CMP64
WEFT__INT_MINMAX(i64, u_i64)
WEFT__INT_MINMAX(u64, u_u64)
#else
/* lt is 1 when x < y (signed: the sign of x - y corrected for overflow;
 * unsigned: the borrow out of x - y); the result takes x where lt. */
#define WEFT__PICK64(x, y, lt) ((y) ^ (((x) ^ (y)) & (0 - (lt))))
#define WEFT__LT_S64(x, y) ((((x) - (y)) ^ (((x) ^ (y)) & (((x) - (y)) ^ (x)))) >> 63)
#define WEFT__LT_U64(x, y) (((~(x) & (y)) | ((~(x) | (y)) & ((x) - (y)))) >> 63)
WEFT__LOOP(i64_min, u_i64, uint64_t a = (uint64_t)s[i]; uint64_t b = (uint64_t)d[i];
           d[i] = (int64_t)WEFT__PICK64(a, b, WEFT__LT_S64(a, b)))
WEFT__LOOP(i64_max, u_i64, uint64_t a = (uint64_t)s[i]; uint64_t b = (uint64_t)d[i];
           d[i] = (int64_t)WEFT__PICK64(a, b, WEFT__LT_S64(b, a)))
WEFT__LOOP(u64_min, u_u64, uint64_t a = s[i]; uint64_t b = d[i];
           d[i] = WEFT__PICK64(a, b, WEFT__LT_U64(a, b)))
WEFT__LOOP(u64_max, u_u64, uint64_t a = s[i]; uint64_t b = d[i];
           d[i] = WEFT__PICK64(a, b, WEFT__LT_U64(b, a)))
#endif

/* Floating min and max: m is what x86's minps/maxps compute (a when a < b,
 * else b), and a NaN in a overrides it. */
#define WEFT__FLOATS(NAME, T, FT)                                                                  \
    WEFT__LOOP(NAME##_sum, T, d[i] = d[i] + s[i])                                                  \
    WEFT__LOOP(NAME##_prod, T, d[i] = d[i] * s[i])                                                 \
    WEFT__LOOP(NAME##_min, T, FT a = d[i]; FT b = s[i]; FT m = a < b ? a : b;                      \
               d[i] = a != a ? a : m)                                                              \
    WEFT__LOOP(NAME##_max, T, FT a = d[i]; FT b = s[i]; FT m = a > b ? a : b; d[i] = a != a ? a : m)

WEFT__FLOATS(f32, u_f32, float)
WEFT__FLOATS(f64, u_f64, double)

/* 16-bit floats. Sum and prod go through float. Min and max: for values
 * that are not NaN, widening is exact and narrowing gives the same bits
 * back, so the answer is one operand unchanged, chosen by comparing keys
 * in 16-bit lanes: KEY16 is the magnitude, negated when the sign bit is
 * set ((x ^ m) - m, m all ones for a negative), which orders the values as
 * float does, -0 and +0 equal (converting its bits to int16_t is
 * implementation-defined in C; gcc and clang, the only compilers this file
 * builds with, wrap). A NaN wins, d's before s's, and comes out quieted
 * (QUIET is the quiet bit, EXP the exponent mask). */
#define WEFT__MAG16(h) ((uint16_t)((h)&0x7fffu))
#define WEFT__KEY16(h)                                                                             \
    ((int16_t)(uint16_t)((WEFT__MAG16(h) ^ (0u - ((uint32_t)(h) >> 15))) + ((uint32_t)(h) >> 15)))
#define WEFT__MINMAX16(NAME, CMP, EXP, QUIET)                                                      \
    WEFT__LOOP(NAME, u_u16, uint16_t a = d[i]; uint16_t b = s[i];                                  \
               uint16_t m = WEFT__KEY16(a) CMP WEFT__KEY16(b) ? a : b;                             \
               uint16_t q = (uint16_t)((WEFT__MAG16(a) > (EXP) ? a : b) | (QUIET));                \
               d[i] = ((WEFT__MAG16(a) > (EXP)) | (WEFT__MAG16(b) > (EXP))) ? q : m)
#define WEFT__HALFS(NAME, TOF, FROMF, EXP, QUIET)                                                  \
    WEFT__LOOP(NAME##_sum, u_u16, d[i] = FROMF(TOF(d[i]) + TOF(s[i])))                             \
    WEFT__LOOP(NAME##_prod, u_u16, d[i] = FROMF(TOF(d[i]) * TOF(s[i])))                            \
    WEFT__MINMAX16(NAME##_min, <, EXP, QUIET)                                                      \
    WEFT__MINMAX16(NAME##_max, >, EXP, QUIET)

WEFT__HALFS(f16, weft__half_to_float, weft__float_to_half, 0x7c00u, 0x0200u)
WEFT__HALFS(bf16, weft__bf16_to_float, weft__float_to_bf16, 0x7f80u, 0x0040u)

#define WEFT__ROW(NAME)                                                                            \
    {                                                                                              \
        WEFT__K(NAME##_sum), WEFT__K(NAME##_prod), WEFT__K(NAME##_min), WEFT__K(NAME##_max)        \
    }

#ifndef WEFT__K_F16_SUM
#define WEFT__K_F16_SUM WEFT__K(f16_sum)
#endif
#ifndef WEFT__K_F16_PROD
#define WEFT__K_F16_PROD WEFT__K(f16_prod)
#endif
#ifndef WEFT__K_F32_MIN
#define WEFT__K_F32_MIN WEFT__K(f32_min)
#endif
#ifndef WEFT__K_F32_MAX
#define WEFT__K_F32_MAX WEFT__K(f32_max)
#endif
#ifndef WEFT__K_F64_MIN
#define WEFT__K_F64_MIN WEFT__K(f64_min)
#endif
#ifndef WEFT__K_F64_MAX
#define WEFT__K_F64_MAX WEFT__K(f64_max)
#endif

static const weft__reduce_fn WEFT__K(table)[WEFT__DTYPE_COUNT][WEFT__REDOP_COUNT] = {
    [WEFT_INT8] = WEFT__ROW(i8),
    [WEFT_UINT8] = WEFT__ROW(u8),
    [WEFT_INT16] = WEFT__ROW(i16),
    [WEFT_UINT16] = WEFT__ROW(u16),
    [WEFT_INT32] = WEFT__ROW(i32),
    [WEFT_UINT32] = WEFT__ROW(u32),
    [WEFT_INT64] = WEFT__ROW(i64),
    [WEFT_UINT64] = WEFT__ROW(u64),
    [WEFT_HALF] = {WEFT__K_F16_SUM, WEFT__K_F16_PROD, WEFT__K(f16_min), WEFT__K(f16_max)},
    [WEFT_BFLOAT16] = WEFT__ROW(bf16),
    [WEFT_FLOAT] = {WEFT__K(f32_sum), WEFT__K(f32_prod), WEFT__K_F32_MIN, WEFT__K_F32_MAX},
    [WEFT_DOUBLE] = {WEFT__K(f64_sum), WEFT__K(f64_prod), WEFT__K_F64_MIN, WEFT__K_F64_MAX},
};

#undef WEFT__ROW
#undef WEFT__K_F16_SUM
#undef WEFT__K_F16_PROD
#undef WEFT__K_F32_MIN
#undef WEFT__K_F32_MAX
#undef WEFT__K_F64_MIN
#undef WEFT__K_F64_MAX
#undef WEFT__LOOP
#undef WEFT__INT_ARITH
#undef WEFT__INT_MINMAX
#undef WEFT__PICK64
#undef WEFT__LT_S64
#undef WEFT__LT_U64
#undef WEFT__FLOATS
#undef WEFT__MAG16
#undef WEFT__KEY16
#undef WEFT__MINMAX16
#undef WEFT__HALFS
