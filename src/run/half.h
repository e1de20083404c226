/* Conversions between float and the two 16-bit float formats.
 *
 * half is IEEE 754 binary16 (1 sign, 5 exponent, 10 fraction bits),
 * bfloat16 is the top half of a binary32. Widening is exact and keeps a
 * NaN's payload (a signalling NaN stays signalling). Narrowing rounds to
 * nearest, ties to even, overflows to infinity, keeps subnormals and turns
 * any NaN into a quiet NaN of the same sign that keeps the top fraction
 * bits.
 *
 * Every function is branch-free: each case is computed and the answer is
 * picked by comparisons, so that a loop calling them vectorises (the
 * reduction kernels in reduce_loops.h). The only floating-point operations
 * are exact ones (a product by a power of two, an integer to float and a
 * truncating float to integer conversion, a difference of two floats one
 * unit apart), so the results never depend on the FPU's rounding mode, and
 * no operand is ever out of range for its conversion. reduce_test.c checks
 * them against plain branching versions over all 65,536 values both ways.
 */
#ifndef WEFT_RUN_HALF_H
#define WEFT_RUN_HALF_H

#include <stdint.h>
#include <string.h>

static inline float weft__bits_to_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint32_t weft__float_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* All ones when c (0 or 1) is 1, else 0: the cases below are combined with
 * masks rather than ?:, because gcc does not if-convert a ?: whose arms hold
 * floating-point operations (it must assume they may trap), and a loop
 * with a branch does not vectorise. */
static inline uint32_t weft__mask32(uint32_t c)
{
    return 0u - c;
}

static inline float weft__half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t em = h & 0x7fffu; /* exponent and fraction */
    /* Normal: rebias the exponent from 15 to 127. */
    uint32_t normal = (em << 13) + 0x38000000u;
    /* Infinity or NaN: all-ones exponent, the fraction (payload) kept. */
    uint32_t special = (em << 13) | 0x7f800000u;
    /* Zero or subnormal: em is the fraction, the value fraction * 2^-24,
     * which float holds exactly. */
    uint32_t small = weft__float_to_bits((float)(int32_t)em * 0x1p-24f);
    uint32_t is_special = weft__mask32(em >= 0x7c00u);
    uint32_t is_small = weft__mask32(em < 0x0400u);
    uint32_t bits =
        (special & is_special) | (small & is_small) | (normal & ~(is_special | is_small));
    return weft__bits_to_float(sign | bits);
}

static inline uint16_t weft__float_to_half(float f)
{
    uint32_t u = weft__float_to_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    /* NaN: keep the top fraction bits, force quiet. */
    uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu);
    uint32_t is_nan = weft__mask32(a > 0x7f800000u);
    /* Rounds to 65520 or more: infinity. */
    uint32_t is_inf = weft__mask32(a >= 0x477ff000u) & ~is_nan;
    /* Normal half (2^-14 <= |f| < 65520): rebias and round the 13 dropped
     * bits to nearest even; a carry into the exponent is the correct
     * result. Meaningless (but defined: unsigned) for other a. */
    uint32_t normal = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
    /* Below 2^-14: subnormal or zero, |f| / 2^-24 rounded to an integer
     * (ties to even). v = |f| * 2^24 is exact and below 1024 (a is replaced
     * by 0 outside this case, so the conversion never overflows), t is v
     * truncated and v - t its exact fraction. */
    uint32_t is_small = weft__mask32(a < 0x38800000u);
    float v = weft__bits_to_float(a & is_small) * 0x1p24f;
    int32_t t = (int32_t)v;
    float frac = v - (float)t;
    uint32_t up = frac > 0.5f ? 1u : frac == 0.5f ? (uint32_t)t & 1u : 0u;
    uint32_t small = (uint32_t)t + up;
    uint32_t r = (nan & is_nan) | (0x7c00u & is_inf) | (small & is_small) |
                 (normal & ~(is_nan | is_inf | is_small));
    return (uint16_t)(sign | r);
}

static inline float weft__bf16_to_float(uint16_t b)
{
    return weft__bits_to_float((uint32_t)b << 16);
}

static inline uint16_t weft__float_to_bf16(float f)
{
    uint32_t u = weft__float_to_bits(f);
    /* NaN: truncate, force quiet; anything else: round the low 16 bits to
     * nearest even (a carry may reach infinity, which is right). */
    uint32_t nan = (u >> 16) | 0x40u;
    uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

#endif
