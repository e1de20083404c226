/* Deterministic random numbers and zipf weights (base/rand.h). Moved here
 * from the MoE generator (src/plan/traffic_moe.c) unchanged, so that its
 * matrices stay the same bytes, to be shared with the embedding lookups. */
#include "base/rand.h"

__extension__ typedef unsigned __int128 u128;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t weft__rng_next(weft__rng *g)
{
    uint64_t *s = g->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

void weft__rng_seed(weft__rng *g, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream + 1) * 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 4; i++)
        g->s[i] = splitmix64(&x);
}

uint64_t weft__rng_below(weft__rng *g, uint64_t m)
{
    uint64_t threshold = (0 - m) % m; /* 2^64 mod m */
    for (;;) {
        uint64_t r = weft__rng_next(g);
        if (r >= threshold)
            return r % m;
    }
}

#define Q WEFT__ZIPF_Q

/* log2(k) in Q30, k >= 1, k < 2^33. */
static uint64_t log2_q30(uint64_t k)
{
    unsigned n = 0;
    while ((k >> (n + 1)) != 0)
        n++;
    uint64_t y = (k << Q) >> n; /* k / 2^n in [1, 2), Q30 */
    uint64_t frac = 0;
    for (unsigned b = 1; b <= Q; b++) {
        /* y < 2^31, so y*y < 2^62; then y < 4, and c = (y >= 2) without
         * a branch (it would go either way at random). */
        y = (y * y) >> Q;
        uint64_t c = y >> (Q + 1);
        y >>= c;
        frac |= c << (Q - b);
    }
    return ((uint64_t)n << Q) | frac;
}

static uint64_t isqrt128(u128 v)
{
    u128 res = 0, bit = (u128)1 << 126;
    while (bit > v)
        bit >>= 2;
    while (bit) {
        if (v >= res + bit) {
            v -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    return (uint64_t)res;
}

void weft__zipf_init(weft__zipf *z, uint32_t milli)
{
    uint64_t c = 1ull << 61; /* 2^-1 */
    z->pow2_neg[0] = c;
    for (unsigned m = 1; m <= Q; m++) {
        c = isqrt128((u128)c << 62);
        z->pow2_neg[m] = c;
    }
    z->milli = milli;
}

uint64_t weft__zipf_weight(const weft__zipf *z, uint64_t k)
{
    uint64_t x = log2_q30(k) * z->milli / 1000; /* s * log2 k, Q30 */
    uint64_t whole = x >> Q, frac = x & ((1ull << Q) - 1);
    uint64_t p = 1ull << 62; /* 1.0 in Q62 */
    /* Times 2^(-2^-m) where bit m of frac is set: the product made
     * always, kept by a mask (a branch would go either way at random). */
    for (unsigned m = 1; m <= Q; m++) {
        uint64_t q = (uint64_t)(((u128)p * z->pow2_neg[m]) >> 62);
        uint64_t take = 0 - (frac >> (Q - m) & 1);
        p = (q & take) | (p & ~take);
    }
    /* p = 2^-frac in Q62; 2^40 * p * 2^-whole. */
    unsigned shift = 22 + (unsigned)(whole > 64 ? 64 : whole);
    uint64_t w = shift >= 64 ? 0 : p >> shift;
    return w ? w : 1;
}
