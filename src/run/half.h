/* Conversions between float and the two 16-bit float formats.
 *
 * half is IEEE 754 binary16 (1 sign, 5 exponent, 10 fraction bits),
 * bfloat16 is the top half of a binary32. Widening is exact. Narrowing rounds
 * to nearest, ties to even, overflows to infinity, keeps subnormals and
 * turns any NaN into a quiet NaN of the same sign. Everything is done on the
 * bit patterns so the result never depends on the FPU's rounding mode.
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

static inline float weft__half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t frac = h & 0x3ffu;
    if (exp == 0x1f) /* inf or NaN */
        return weft__bits_to_float(sign | 0x7f800000u | (frac << 13));
    if (exp == 0) {
        /* Zero or subnormal: frac * 2^-24, exact in float. */
        float v = (float)frac * 0x1p-24f;
        return sign ? -v : v;
    }
    return weft__bits_to_float(sign | ((exp + 112u) << 23) | (frac << 13));
}

static inline uint16_t weft__float_to_half(float f)
{
    uint32_t u = weft__float_to_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) /* NaN: keep the top fraction bits, force quiet */
        return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u) /* rounds to >= 65520: infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (a < 0x38800000u) {
        /* Below the smallest normal half (2^-14): a subnormal or zero,
         * value = a_float / 2^-24 rounded to an integer, ties to even. */
        if (a < 0x33000000u) /* below 2^-25: rounds to zero */
            return sign;
        uint32_t exp = a >> 23;
        uint32_t mant = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - exp; /* 14 .. 24 */
        uint32_t q = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1u);
        if (rem > halfway || (rem == halfway && (q & 1u))) q++;
        return (uint16_t)(sign | q);
    }
    /* Normal: rebias and round the 13 dropped bits; a carry into the
     * exponent is the correct result (up to infinity, excluded above). */
    uint32_t r = a - 0x38000000u; /* exponent - 112 */
    uint32_t q = r >> 13;
    uint32_t rem = r & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) q++;
    return (uint16_t)(sign | q);
}

static inline float weft__bf16_to_float(uint16_t b)
{
    return weft__bits_to_float((uint32_t)b << 16);
}

static inline uint16_t weft__float_to_bf16(float f)
{
    uint32_t u = weft__float_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: truncate, force quiet */
        return (uint16_t)((u >> 16) | 0x40u);
    uint32_t lsb = (u >> 16) & 1u;
    return (uint16_t)((u + 0x7fffu + lsb) >> 16);
}

#endif
