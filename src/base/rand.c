/* Deterministic random numbers and zipf weights (base/rand.h). Moved here
 * from the MoE generator (src/plan/traffic_moe.c) unchanged, so that its
 * matrices stay the same bytes, to be shared with the embedding lookups
 * (xoshiro's step since in base/rand.h, inline). */
#include <assert.h>

#include "base/rand.h"

__extension__ typedef unsigned __int128 u128;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
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

void weft__rng_range_init(weft__rng_range *r, uint64_t m)
{
    r->m = m;
    r->thresh = (0 - m) % m;
    r->recip = UINT64_MAX / m;
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

/* Ranks worked on at once by weft__zipf_weights. */
#define LANES 8
/* Bits of 2^-frac taken from a table (of 2^TBITS products, 16 KB) when a
 * call has at least 2^TBITS ranks. */
#define TBITS 11

/* out[i] = log2_q30(ranks[i]) for i < cnt <= LANES. */
static void logs_of(const uint64_t *ranks, unsigned cnt, uint64_t *const *out)
{
    uint64_t y[LANES], lg[LANES];
    for (unsigned l = 0; l < LANES; l++) {
        uint64_t k = ranks[l < cnt ? l : 0];
        unsigned n = 63 - (unsigned)__builtin_clzll(k); /* floor(log2 k) */
        y[l] = (k << Q) >> n;
        lg[l] = (uint64_t)n << Q;
    }
    for (unsigned b = 1; b <= Q; b++)
        for (unsigned l = 0; l < LANES; l++) {
            y[l] = (y[l] * y[l]) >> Q;
            uint64_t c = y[l] >> (Q + 1);
            y[l] >>= c;
            lg[l] |= c << (Q - b);
        }
    for (unsigned l = 0; l < cnt; l++)
        *out[l] = lg[l];
}

/* Two passes over out[]: log2_q30 of each rank, then its weight. Only
 * odd ranks (and those whose half is not in the call) square their way
 * to the logarithm: k = 2j has log2_q30(k) = log2_q30(j) + 2^30 exactly
 * (its mantissa (2j << 30) >> (n + 1) is j's, the same bits). The
 * products 2^(-2^-m) for m = 1 .. TBITS start from the same 1.0 whatever
 * the rank, so for each pattern of those bits of the fraction their
 * result is made once, in a table, with the same multiplications. */
void weft__zipf_weights(const weft__zipf *z, uint64_t k0, uint64_t count, uint64_t *out)
{
    uint64_t ranks[LANES], *dst[LANES];
    unsigned cnt = 0;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t k = k0 + i;
        if (!(k & 1) && k / 2 >= k0)
            continue;
        ranks[cnt] = k;
        dst[cnt++] = &out[i];
        if (cnt == LANES) {
            logs_of(ranks, cnt, dst);
            cnt = 0;
        }
    }
    if (cnt)
        logs_of(ranks, cnt, dst);
    for (uint64_t i = 0; i < count; i++) {
        uint64_t k = k0 + i;
        if (!(k & 1) && k / 2 >= k0)
            out[i] = out[k / 2 - k0] + (1ull << Q); /* k / 2 - k0 < i */
    }
    static_assert(TBITS <= Q, "the table's bits are the fraction's first");
    uint64_t tab[1u << TBITS];
    unsigned tb = count >> TBITS ? TBITS : 0;
    tab[0] = 1ull << 62; /* 1.0 in Q62 */
    for (unsigned m = 1; m <= tb; m++)
        for (uint64_t j = (1ull << (m - 1)); j-- > 0;) { /* down: tab[j] is read first */
            uint64_t v = tab[j];
            tab[2 * j + 1] = (uint64_t)(((u128)v * z->pow2_neg[m]) >> 62);
            tab[2 * j] = v;
        }
    for (uint64_t i = 0; i < count; i += LANES) {
        uint64_t x[LANES], p[LANES];
        for (unsigned l = 0; l < LANES; l++) {
            x[l] = out[i + (i + l < count ? l : 0)] * z->milli / 1000; /* s * log2 k, Q30 */
            p[l] = tab[(x[l] & ((1ull << Q) - 1)) >> (Q - tb)];
        }
        /* The rest as weft__zipf_weight. */
        for (unsigned m = tb + 1; m <= Q; m++)
            for (unsigned l = 0; l < LANES; l++) {
                uint64_t q = (uint64_t)(((u128)p[l] * z->pow2_neg[m]) >> 62);
                uint64_t take = 0 - (x[l] >> (Q - m) & 1);
                p[l] = (q & take) | (p[l] & ~take);
            }
        for (unsigned l = 0; l < LANES && i + l < count; l++) {
            uint64_t whole = x[l] >> Q;
            unsigned shift = 22 + (unsigned)(whole > 64 ? 64 : whole);
            uint64_t w = shift >= 64 ? 0 : p[l] >> shift;
            out[i + l] = w ? w : 1;
        }
    }
}
