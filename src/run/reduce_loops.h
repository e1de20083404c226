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
 *   WEFT__K_STREAM64(d, line), WEFT__K_STORE64(d, line)
 *                   statements storing the 64 bytes at line (64-aligned)
 *                   to d: streaming (d 64-aligned) and ordinary (any d);
 * and optionally WEFT__K_F16_SUM, WEFT__K_F16_PROD, WEFT__K_F32_MIN,
 * WEFT__K_F32_MAX, WEFT__K_F64_MIN and WEFT__K_F64_MAX, each with its
 * three-operand form NAME3 (d = a op b): the tier's own kernels for those
 * table entries (declared before the include), when it has better ones
 * than these loops.
 * It defines static kernels WEFT__K(i8_sum) .. WEFT__K(f64_max), their
 * three-operand forms WEFT__K(i8_sum3) .., their table WEFT__K(table),
 * indexed by dtype and op, and the line kernels' table
 * WEFT__K(lines_table). Every loop
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
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

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

/* gcc peels a loop with a small constant count (a line kernel's) into
 * straight code before its vectoriser runs, and then vectorises little of
 * it; unroll 1 keeps the loop a loop, which then becomes one or a few
 * vector instructions (gcc -O3 does not unroll the kernels' ordinary
 * loops anyway). clang, which honours the pragma too, otherwise turns the
 * line into a mix of scalar and part-width vectors. */
#define WEFT__NO_PEEL _Pragma("GCC unroll 1")

/* A kernel from BODY, a statement that sets r from the two operands x and
 * y (values of type V): the pair kernel NAME (d[i] = d[i] op s[i]) and the
 * three-operand NAME##3 (d[i] = a[i] op b[i], no two overlapping), which
 * the line kernels below use so that a line's first two sources need no
 * copy. */
#define WEFT__LOOP(NAME, T, V, BODY)                                                               \
    static WEFT__K_ATTR void WEFT__K(NAME)(void *dst, const void *src, size_t n)                   \
    {                                                                                              \
        T *restrict d = dst;                                                                       \
        const T *restrict s = src;                                                                 \
        WEFT__NO_PEEL                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            V x = d[i], y = s[i], r;                                                               \
            BODY;                                                                                  \
            d[i] = r;                                                                              \
        }                                                                                          \
    }                                                                                              \
    static WEFT__K_ATTR void WEFT__K(NAME##3)(void *dst, const void *src0, const void *src1,       \
                                              size_t n)                                            \
    {                                                                                              \
        T *restrict d = dst;                                                                       \
        const T *restrict a = src0, *restrict b = src1;                                            \
        WEFT__NO_PEEL                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            V x = a[i], y = b[i], r;                                                               \
            BODY;                                                                                  \
            d[i] = r;                                                                              \
        }                                                                                          \
    }

#define WEFT__INT_ARITH(NAME, T, V, UT, WIDE)                                                      \
    WEFT__LOOP(NAME##_sum, T, V, r = (V)(UT)((WIDE)(UT)x + (WIDE)(UT)y))                           \
    WEFT__LOOP(NAME##_prod, T, V, r = (V)(UT)((WIDE)(UT)x * (WIDE)(UT)y))

#define WEFT__INT_MINMAX(NAME, T, V)                                                               \
    WEFT__LOOP(NAME##_min, T, V, r = y < x ? y : x)                                                \
    WEFT__LOOP(NAME##_max, T, V, r = y > x ? y : x)

WEFT__INT_ARITH(i8, u_i8, int8_t, uint8_t, uint32_t)
WEFT__INT_ARITH(u8, u_u8, uint8_t, uint8_t, uint32_t)
WEFT__INT_ARITH(i16, u_i16, int16_t, uint16_t, uint32_t)
WEFT__INT_ARITH(u16, u_u16, uint16_t, uint16_t, uint32_t)
WEFT__INT_ARITH(i32, u_i32, int32_t, uint32_t, uint32_t)
WEFT__INT_ARITH(u32, u_u32, uint32_t, uint32_t, uint32_t)
WEFT__INT_ARITH(i64, u_i64, int64_t, uint64_t, uint64_t)
WEFT__INT_ARITH(u64, u_u64, uint64_t, uint64_t, uint64_t)
WEFT__INT_MINMAX(i8, u_i8, int8_t)
WEFT__INT_MINMAX(u8, u_u8, uint8_t)
WEFT__INT_MINMAX(i16, u_i16, int16_t)
WEFT__INT_MINMAX(u16, u_u16, uint16_t)
WEFT__INT_MINMAX(i32, u_i32, int32_t)
WEFT__INT_MINMAX(u32, u_u32, uint32_t)

#if WEFT__K_CMP64
WEFT__INT_MINMAX(i64, u_i64, int64_t)
WEFT__INT_MINMAX(u64, u_u64, uint64_t)
#else
/* lt is 1 when p < q (signed: the sign of p - q corrected for overflow;
 * unsigned: the borrow out of p - q); the result takes p where lt. */
#define WEFT__PICK64(p, q, lt) ((q) ^ (((p) ^ (q)) & (0 - (lt))))
#define WEFT__LT_S64(p, q) ((((p) - (q)) ^ (((p) ^ (q)) & (((p) - (q)) ^ (p)))) >> 63)
#define WEFT__LT_U64(p, q) (((~(p) & (q)) | ((~(p) | (q)) & ((p) - (q)))) >> 63)
WEFT__LOOP(i64_min, u_i64, int64_t, uint64_t p = (uint64_t)y; uint64_t q = (uint64_t)x;
           r = (int64_t)WEFT__PICK64(p, q, WEFT__LT_S64(p, q)))
WEFT__LOOP(i64_max, u_i64, int64_t, uint64_t p = (uint64_t)y; uint64_t q = (uint64_t)x;
           r = (int64_t)WEFT__PICK64(p, q, WEFT__LT_S64(q, p)))
WEFT__LOOP(u64_min, u_u64, uint64_t, r = WEFT__PICK64(y, x, WEFT__LT_U64(y, x)))
WEFT__LOOP(u64_max, u_u64, uint64_t, r = WEFT__PICK64(y, x, WEFT__LT_U64(x, y)))
#endif

/* Floating min and max: m is what x86's minps/maxps compute (x when x < y,
 * else y), and a NaN in x overrides it. */
#define WEFT__FLOATS(NAME, T, FT)                                                                  \
    WEFT__LOOP(NAME##_sum, T, FT, r = x + y)                                                       \
    WEFT__LOOP(NAME##_prod, T, FT, r = x * y)                                                      \
    WEFT__LOOP(NAME##_min, T, FT, FT m = x < y ? x : y; r = x != x ? x : m)                        \
    WEFT__LOOP(NAME##_max, T, FT, FT m = x > y ? x : y; r = x != x ? x : m)

WEFT__FLOATS(f32, u_f32, float)
WEFT__FLOATS(f64, u_f64, double)

/* 16-bit floats. Sum and prod go through float. Min and max: for values
 * that are not NaN, widening is exact and narrowing gives the same bits
 * back, so the answer is one operand unchanged, chosen by comparing keys
 * in 16-bit lanes: KEY16 is the magnitude, negated when the sign bit is
 * set ((h ^ m) - m, m all ones for a negative), which orders the values as
 * float does, -0 and +0 equal (converting its bits to int16_t is
 * implementation-defined in C; gcc and clang, the only compilers this file
 * builds with, wrap). A NaN wins, x's before y's, and comes out quieted
 * (QUIET is the quiet bit, EXP the exponent mask). */
#define WEFT__MAG16(h) ((uint16_t)((h)&0x7fffu))
#define WEFT__KEY16(h)                                                                             \
    ((int16_t)(uint16_t)((WEFT__MAG16(h) ^ (0u - ((uint32_t)(h) >> 15))) + ((uint32_t)(h) >> 15)))
#define WEFT__MINMAX16(NAME, CMP, EXP, QUIET)                                                      \
    WEFT__LOOP(NAME, u_u16, uint16_t, uint16_t m = WEFT__KEY16(x) CMP WEFT__KEY16(y) ? x : y;      \
               uint16_t q = (uint16_t)((WEFT__MAG16(x) > (EXP) ? x : y) | (QUIET));                \
               r = ((WEFT__MAG16(x) > (EXP)) | (WEFT__MAG16(y) > (EXP))) ? q : m)
#define WEFT__HALFS(NAME, TOF, FROMF, EXP, QUIET)                                                  \
    WEFT__LOOP(NAME##_sum, u_u16, uint16_t, r = FROMF(TOF(x) + TOF(y)))                            \
    WEFT__LOOP(NAME##_prod, u_u16, uint16_t, r = FROMF(TOF(x) * TOF(y)))                           \
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
#define WEFT__K_F16_SUM3 WEFT__K(f16_sum3)
#endif
#ifndef WEFT__K_F16_PROD
#define WEFT__K_F16_PROD WEFT__K(f16_prod)
#define WEFT__K_F16_PROD3 WEFT__K(f16_prod3)
#endif
#ifndef WEFT__K_F32_MIN
#define WEFT__K_F32_MIN WEFT__K(f32_min)
#define WEFT__K_F32_MIN3 WEFT__K(f32_min3)
#endif
#ifndef WEFT__K_F32_MAX
#define WEFT__K_F32_MAX WEFT__K(f32_max)
#define WEFT__K_F32_MAX3 WEFT__K(f32_max3)
#endif
#ifndef WEFT__K_F64_MIN
#define WEFT__K_F64_MIN WEFT__K(f64_min)
#define WEFT__K_F64_MIN3 WEFT__K(f64_min3)
#endif
#ifndef WEFT__K_F64_MAX
#define WEFT__K_F64_MAX WEFT__K(f64_max)
#define WEFT__K_F64_MAX3 WEFT__K(f64_max3)
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

/* The line kernels (weft__reduce_lines_fn), one per table entry. Line by
 * line: the three-operand kernel of the first two sources into a local
 * line, the pair kernel with every further source, then a store to every
 * destination: WEFT__K_STREAM64(dst, line) when nt, else
 * WEFT__K_STORE64(dst, line) (statements; line is 64-aligned). With the
 * constant count of one line the kernels inline to a few vector
 * instructions, the line stays in registers, and no call is made per line.
 * The single-pass allreduce of 2 ranks went through a work area in tiles
 * of 512 bytes before, one kernel call per tile and source: 21.7 GB/s
 * busbw at 4 MiB where the line kernels run 38.9, 16.9 at 256 MiB where
 * they run 22.6 (bench_run_best, medians of 5 alternated runs); tiles of
 * 128 to 1024 bytes through a local work area ran no faster than single
 * lines (docs/interop.md). */

/* The loop of a line kernel over [begin, end), storing with STORE. */
#define WEFT__LINES_LOOP(PAIR, THREE, T, STORE)                                                    \
    for (size_t o = begin; o < end; o += 64) {                                                     \
        _Alignas(64) unsigned char line[64];                                                       \
        THREE(line, src[0] + o, src[1] + o, 64 / sizeof(T));                                       \
        for (uint32_t q = 2; q < nsrc; q++)                                                        \
            PAIR(line, src[q] + o, 64 / sizeof(T));                                                \
        for (uint32_t i = 0; i < ndst; i++)                                                        \
            STORE(dst[i] + o, line);                                                               \
    }
/* NS sources into ND destinations, NS and ND constants: the pointers are
 * copied into locals, which the compiler keeps in registers, and the inner
 * loops unroll. For the allreduce of 2 and of 4 ranks (also when only 2 of
 * the 4 combine): against the general loop, 2 ranks at 256 MiB 23.6 ->
 * 25.6 GB/s busbw, 4 ranks on 2 cores 12.5 -> 17.1 (bench_run_best,
 * medians of 5 alternated runs). A constant destination count with the
 * general source loop did as well for 4x4, but one destination (reduce,
 * reduce-scatter) ran the 2-rank reduce at 23.9 against the general
 * loop's 36.6 GB/s (7 alternated runs; the kernel alone, in one process,
 * ran both alike), so one destination keeps the general loop. */
#define WEFT__LINES_FIXED(PAIR, THREE, T, STORE, NS, ND)                                           \
    do {                                                                                           \
        const unsigned char *s_[NS];                                                               \
        unsigned char *d_[ND];                                                                     \
        for (uint32_t q = 0; q < (NS); q++)                                                        \
            s_[q] = src[q];                                                                        \
        for (uint32_t i = 0; i < (ND); i++)                                                        \
            d_[i] = dst[i];                                                                        \
        for (size_t o = begin; o < end; o += 64) {                                                 \
            _Alignas(64) unsigned char line[64];                                                   \
            THREE(line, s_[0] + o, s_[1] + o, 64 / sizeof(T));                                     \
            for (uint32_t q = 2; q < (NS); q++)                                                    \
                PAIR(line, s_[q] + o, 64 / sizeof(T));                                             \
            for (uint32_t i = 0; i < (ND); i++)                                                    \
                STORE(d_[i] + o, line);                                                            \
        }                                                                                          \
    } while (0)
#define WEFT__LINES_ANY(PAIR, THREE, T, STORE)                                                     \
    do {                                                                                           \
        if (nsrc == 2 && ndst == 2)                                                                \
            WEFT__LINES_FIXED(PAIR, THREE, T, STORE, 2, 2);                                        \
        else if (nsrc == 4 && ndst == 4)                                                           \
            WEFT__LINES_FIXED(PAIR, THREE, T, STORE, 4, 4);                                        \
        else                                                                                       \
            WEFT__LINES_LOOP(PAIR, THREE, T, STORE)                                                \
    } while (0)
#define WEFT__LINES(NAME, PAIR, THREE, T)                                                          \
    static WEFT__K_ATTR void WEFT__K(NAME##_lines)(unsigned char *const *dst, uint32_t ndst,       \
                                                   const unsigned char *const *src, uint32_t nsrc, \
                                                   size_t begin, size_t end, bool nt)              \
    {                                                                                              \
        if (nt)                                                                                    \
            WEFT__LINES_ANY(PAIR, THREE, T, WEFT__K_STREAM64);                                     \
        else                                                                                       \
            WEFT__LINES_ANY(PAIR, THREE, T, WEFT__K_STORE64);                                      \
    }
#define WEFT__LINES_ROW(NAME, T)                                                                   \
    WEFT__LINES(NAME##_sum, WEFT__K(NAME##_sum), WEFT__K(NAME##_sum3), T)                          \
    WEFT__LINES(NAME##_prod, WEFT__K(NAME##_prod), WEFT__K(NAME##_prod3), T)                       \
    WEFT__LINES(NAME##_min, WEFT__K(NAME##_min), WEFT__K(NAME##_min3), T)                          \
    WEFT__LINES(NAME##_max, WEFT__K(NAME##_max), WEFT__K(NAME##_max3), T)

WEFT__LINES_ROW(i8, int8_t)
WEFT__LINES_ROW(u8, uint8_t)
WEFT__LINES_ROW(i16, int16_t)
WEFT__LINES_ROW(u16, uint16_t)
WEFT__LINES_ROW(i32, int32_t)
WEFT__LINES_ROW(u32, uint32_t)
WEFT__LINES_ROW(i64, int64_t)
WEFT__LINES_ROW(u64, uint64_t)
WEFT__LINES(f16_sum, WEFT__K_F16_SUM, WEFT__K_F16_SUM3, uint16_t)
WEFT__LINES(f16_prod, WEFT__K_F16_PROD, WEFT__K_F16_PROD3, uint16_t)
WEFT__LINES(f16_min, WEFT__K(f16_min), WEFT__K(f16_min3), uint16_t)
WEFT__LINES(f16_max, WEFT__K(f16_max), WEFT__K(f16_max3), uint16_t)
WEFT__LINES_ROW(bf16, uint16_t)
WEFT__LINES(f32_sum, WEFT__K(f32_sum), WEFT__K(f32_sum3), float)
WEFT__LINES(f32_prod, WEFT__K(f32_prod), WEFT__K(f32_prod3), float)
WEFT__LINES(f32_min, WEFT__K_F32_MIN, WEFT__K_F32_MIN3, float)
WEFT__LINES(f32_max, WEFT__K_F32_MAX, WEFT__K_F32_MAX3, float)
WEFT__LINES(f64_sum, WEFT__K(f64_sum), WEFT__K(f64_sum3), double)
WEFT__LINES(f64_prod, WEFT__K(f64_prod), WEFT__K(f64_prod3), double)
WEFT__LINES(f64_min, WEFT__K_F64_MIN, WEFT__K_F64_MIN3, double)
WEFT__LINES(f64_max, WEFT__K_F64_MAX, WEFT__K_F64_MAX3, double)

#define WEFT__LROW(NAME)                                                                           \
    {                                                                                              \
        WEFT__K(NAME##_sum_lines), WEFT__K(NAME##_prod_lines), WEFT__K(NAME##_min_lines),          \
            WEFT__K(NAME##_max_lines)                                                              \
    }

static const weft__reduce_lines_fn WEFT__K(lines_table)[WEFT__DTYPE_COUNT][WEFT__REDOP_COUNT] = {
    [WEFT_INT8] = WEFT__LROW(i8),   [WEFT_UINT8] = WEFT__LROW(u8),
    [WEFT_INT16] = WEFT__LROW(i16), [WEFT_UINT16] = WEFT__LROW(u16),
    [WEFT_INT32] = WEFT__LROW(i32), [WEFT_UINT32] = WEFT__LROW(u32),
    [WEFT_INT64] = WEFT__LROW(i64), [WEFT_UINT64] = WEFT__LROW(u64),
    [WEFT_HALF] = WEFT__LROW(f16),  [WEFT_BFLOAT16] = WEFT__LROW(bf16),
    [WEFT_FLOAT] = WEFT__LROW(f32), [WEFT_DOUBLE] = WEFT__LROW(f64),
};

#undef WEFT__LINES
#undef WEFT__LINES_LOOP
#undef WEFT__LINES_FIXED
#undef WEFT__LINES_ANY
#undef WEFT__LINES_ROW
#undef WEFT__LROW
#undef WEFT__ROW
#undef WEFT__K_F16_SUM
#undef WEFT__K_F16_SUM3
#undef WEFT__K_F16_PROD
#undef WEFT__K_F16_PROD3
#undef WEFT__K_F32_MIN
#undef WEFT__K_F32_MIN3
#undef WEFT__K_F32_MAX
#undef WEFT__K_F32_MAX3
#undef WEFT__K_F64_MIN
#undef WEFT__K_F64_MIN3
#undef WEFT__K_F64_MAX
#undef WEFT__K_F64_MAX3
#undef WEFT__LOOP
#undef WEFT__NO_PEEL
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
