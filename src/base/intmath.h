/* Small integer helpers shared across modules. */
#ifndef WEFT_BASE_INTMATH_H
#define WEFT_BASE_INTMATH_H

#include <stdint.h>

/* The greatest common divisor (Euclid); gcd(a, 0) = a, gcd(0, 0) = 0. */
static inline uint64_t weft__gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

#endif
