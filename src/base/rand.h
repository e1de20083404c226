/* Deterministic random numbers and zipf weights, shared by the generators
 * of traffic (weft_traffic_moe, src/plan/traffic_moe.c) and of embedding
 * lookups (src/work/emb_*.c).
 *
 * Determinism across platforms is the contract: a (seed, stream) gives the
 * same numbers with every compiler, libm and machine, so nothing here uses
 * floating point:
 * - xoshiro256** (Blackman and Vigna, "Scrambled linear pseudorandom number
 *   generators", 2018), its four words drawn from splitmix64 started at
 *   seed XOR (stream + 1) * 0x9E3779B97F4A7C15;
 * - a draw in [0, m) is a 64-bit output reduced by rejection (outputs below
 *   2^64 mod m are drawn again): exact and unbiased;
 * - the zipf weight of popularity rank k (1-based) for exponent s is
 *   floor(2^40 / k^s), at least 1, computed in fixed point: log2 k by
 *   repeated squaring (30 fractional bits), 2^-x as a product of the
 *   constants 2^(-2^-m) (62 fractional bits, each the integer square root
 *   of the one before); within 4e-7 of the real value.
 */
#ifndef WEFT_BASE_RAND_H
#define WEFT_BASE_RAND_H

#include <stdint.h>

typedef struct weft__rng {
    uint64_t s[4];
} weft__rng;

/* Seeds g for stream `stream` of seed (a rank, a table: independent
 * streams of one seed). */
void weft__rng_seed(weft__rng *g, uint64_t seed, uint64_t stream);
/* The next 64 random bits. */
uint64_t weft__rng_next(weft__rng *g);
/* Uniform in [0, m), m >= 1. */
uint64_t weft__rng_below(weft__rng *g, uint64_t m);

/* Fractional bits of the fixed-point logarithms. */
#define WEFT__ZIPF_Q 30

/* The constants of one exponent: s = milli / 1000, milli <= 8000. */
typedef struct weft__zipf {
    uint64_t pow2_neg[WEFT__ZIPF_Q + 1]; /* [m] = 2^(-2^-m) in Q62 */
    uint32_t milli;
} weft__zipf;

void weft__zipf_init(weft__zipf *z, uint32_t milli);
/* floor(2^40 / k^s), at least 1; k >= 1, k < 2^33. */
uint64_t weft__zipf_weight(const weft__zipf *z, uint64_t k);

#endif
