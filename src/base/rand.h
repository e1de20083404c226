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
/* The next 64 random bits (inline: generators draw millions). */
static inline uint64_t weft__rng_next(weft__rng *g)
{
    uint64_t *s = g->s;
    uint64_t x = s[1] * 5, result = ((x << 7) | (x >> 57)) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

/* Uniform in [0, m), m >= 1. */
uint64_t weft__rng_below(weft__rng *g, uint64_t m);

/* A bound drawn below many times: weft__rng_below divides twice a draw
 * (2^64 mod m, then the output mod m); the range keeps the first and a
 * reciprocal for the second. */
typedef struct weft__rng_range {
    uint64_t m;      /* >= 1 */
    uint64_t thresh; /* 2^64 mod m: outputs below it are drawn again */
    uint64_t recip;  /* floor((2^64 - 1) / m) */
} weft__rng_range;

void weft__rng_range_init(weft__rng_range *r, uint64_t m);

/* weft__rng_below(g, r->m): the same outputs consumed, the same value.
 * x mod m is x - q * m with q = floor(x * recip / 2^64), one m taken off
 * when that is m or more: writing 2^64 = a * m + b (b < m), recip is a
 * (b > 0) or a - 1 (b = 0), so x / m - x * recip / 2^64 is x * b / (m
 * 2^64) or x / 2^64, below 1, and q is floor(x / m) or one less (Barrett,
 * "Implementing the Rivest Shamir and Adleman public key encryption
 * algorithm on a standard digital signal processor", CRYPTO 1986). */
static inline uint64_t weft__rng_below_range(weft__rng *g, const weft__rng_range *r)
{
    uint64_t x;
    do
        x = weft__rng_next(g);
    while (x < r->thresh);
    __extension__ unsigned __int128 p = (unsigned __int128)x * r->recip;
    uint64_t v = x - (uint64_t)(p >> 64) * r->m;
    /* The correction by a mask: a branch would go either way at random. */
    return v - (r->m & (0 - (uint64_t)(v >= r->m)));
}

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
/* out[i] = weft__zipf_weight(z, k0 + i) for i < count (k0 >= 1, k0 +
 * count <= 2^33): the same values, eight ranks at a time so that their
 * chains of multiplications overlap (a weight is two chains of 30
 * dependent products; one at a time waits for each), with fewer of them
 * (base/rand.c says which: the results are the same to the bit). */
void weft__zipf_weights(const weft__zipf *z, uint64_t k0, uint64_t count, uint64_t *out);

#endif
