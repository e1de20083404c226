/* The MoE dispatch generator (weft_traffic_moe, weft/traffic.h).
 *
 * Determinism across platforms is the design constraint: the matrix of a
 * (params, seed) is part of a user's experiment and must not change with the
 * compiler, the libm or the machine. So nothing here uses floating point:
 * - the random numbers are xoshiro256** (Blackman and Vigna, 2018), each
 *   rank's four words of state drawn from splitmix64 started at
 *   seed XOR (r + 1) * 0x9E3779B97F4A7C15;
 * - a draw in [0, m) is a 64-bit output reduced by rejection (outputs below
 *   2^64 mod m are drawn again), exact and unbiased;
 * - the zipf weights 1/(e+1)^s are computed in fixed point: log2 by
 *   repeated squaring (30 fractional bits), 2^-x as a product of the
 *   constants 2^(-2^-m) (62 fractional bits, each the integer square root
 *   of the one before), then scaled to integers in [1, 2^40];
 * - K distinct experts are drawn one after another, each with probability
 *   weight / (sum of the weights not yet drawn for this token), from a
 *   Fenwick tree of the weights: a pick is O(log E), and the picked weights
 *   are put back after the token.
 * Time O(N * T * K * log E), memory O(N^2 + E). */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "base/alloc.h"
#include "weft/traffic.h"

__extension__ typedef unsigned __int128 u128;

/* ---- random numbers ----------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(rng *g)
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

static void rng_seed(rng *g, uint64_t seed, uint32_t rank)
{
    uint64_t x = seed ^ ((uint64_t)rank + 1) * 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 4; i++)
        g->s[i] = splitmix64(&x);
}

/* Uniform in [0, m), m >= 1. */
static uint64_t rng_below(rng *g, uint64_t m)
{
    uint64_t threshold = (0 - m) % m; /* 2^64 mod m */
    for (;;) {
        uint64_t r = rng_next(g);
        if (r >= threshold)
            return r % m;
    }
}

/* ---- zipf weights in fixed point ---------------------------------------- */

#define Q 30 /* fractional bits of log2 and exponents */

/* log2(k) in Q30, k >= 1, k < 2^33. */
static uint64_t log2_q30(uint64_t k)
{
    unsigned n = 0;
    while ((k >> (n + 1)) != 0)
        n++;
    uint64_t y = (k << Q) >> n; /* k / 2^n in [1, 2), Q30 */
    uint64_t frac = 0;
    for (unsigned b = 1; b <= Q; b++) {
        y = (y * y) >> Q; /* y < 2^31, so y*y < 2^62 */
        if (y >= (2ull << Q)) {
            y >>= 1;
            frac |= 1ull << (Q - b);
        }
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

/* pow2_neg[m] = 2^(-2^-m) in Q62, m = 1..Q. */
static void pow2_table(uint64_t tab[Q + 1])
{
    uint64_t c = 1ull << 61; /* 2^-1 */
    tab[0] = c;
    for (unsigned m = 1; m <= Q; m++) {
        c = isqrt128((u128)c << 62);
        tab[m] = c;
    }
}

/* The weight of popularity rank k (1-based) for exponent s = milli/1000:
 * round-down of 2^40 / k^s, at least 1. */
static uint64_t zipf_weight(uint64_t k, uint32_t milli, const uint64_t tab[Q + 1])
{
    uint64_t x = log2_q30(k) * milli / 1000; /* s * log2 k, Q30 */
    uint64_t whole = x >> Q, frac = x & ((1ull << Q) - 1);
    uint64_t p = 1ull << 62; /* 1.0 in Q62 */
    for (unsigned m = 1; m <= Q; m++)
        if (frac & (1ull << (Q - m)))
            p = (uint64_t)(((u128)p * tab[m]) >> 62);
    /* p = 2^-frac in Q62; 2^40 * p * 2^-whole. */
    unsigned shift = 22 + (unsigned)(whole > 64 ? 64 : whole);
    uint64_t w = shift >= 64 ? 0 : p >> shift;
    return w ? w : 1;
}

/* ---- a Fenwick tree of weights ------------------------------------------ */

typedef struct fenwick {
    uint64_t *tree; /* 1-based, size n + 1 */
    uint32_t n;
    uint32_t top; /* highest power of two <= n */
} fenwick;

static void fen_add(fenwick *f, uint32_t i, uint64_t w, bool sub)
{
    for (uint32_t k = i + 1; k <= f->n; k += k & (0u - k))
        f->tree[k] = sub ? f->tree[k] - w : f->tree[k] + w;
}

/* The index whose cumulative range holds u (u < total). */
static uint32_t fen_find(const fenwick *f, uint64_t u)
{
    uint32_t pos = 0;
    for (uint32_t step = f->top; step; step >>= 1) {
        uint32_t nxt = pos + step;
        if (nxt <= f->n && f->tree[nxt] <= u) {
            pos = nxt;
            u -= f->tree[nxt];
        }
    }
    return pos; /* 0-based index pos */
}

/* ---- the generator ------------------------------------------------------ */

static weft_err check_params(const weft_traffic_moe_params *p, weft_diag *d)
{
    if (p->ranks == 0 || p->ranks > WEFT_TRAFFIC_MAX_RANKS)
        return weft_diag_set(d, WEFT_EINVAL, "--ranks %" PRIu32 ": must be 1 to %u", p->ranks,
                             WEFT_TRAFFIC_MAX_RANKS);
    if (p->experts == 0 || p->experts > WEFT_TRAFFIC_MAX_EXPERTS)
        return weft_diag_set(d, WEFT_EINVAL, "--experts %" PRIu32 ": must be 1 to %u",
                             p->experts, WEFT_TRAFFIC_MAX_EXPERTS);
    if (p->topk == 0)
        return weft_diag_set(d, WEFT_EINVAL, "--topk 0: every token goes to at least 1 expert");
    if (p->topk > p->experts)
        return weft_diag_set(d, WEFT_EINVAL,
                             "--topk %" PRIu32 " is more than the %" PRIu32
                             " experts (a token goes to K distinct experts)",
                             p->topk, p->experts);
    if (p->skew == WEFT_TRAFFIC_SKEW_ZIPF && p->zipf_milli > 8000)
        return weft_diag_set(d, WEFT_EINVAL, "zipf exponent %" PRIu32 ".%03" PRIu32
                                             ": must be at most 8",
                             p->zipf_milli / 1000, p->zipf_milli % 1000);
    /* N * T * K * H, the whole matrix, must fit. */
    u128 total = (u128)p->tokens * p->topk;
    if (total <= UINT64_MAX)
        total *= p->hidden_bytes;
    if (total <= UINT64_MAX)
        total *= p->ranks;
    if (total > UINT64_MAX)
        return weft_diag_set(d, WEFT_EOVERFLOW,
                             "%" PRIu32 " ranks x %" PRIu64 " tokens x %" PRIu32 " experts x %" PRIu64
                             " bytes are more than 2^64-1 bytes",
                             p->ranks, p->tokens, p->topk, p->hidden_bytes);
    return WEFT_OK;
}

weft_err weft_traffic_moe(const weft_traffic_moe_params *p, weft_traffic *out, weft_diag *d)
{
    weft_err e = check_params(p, d);
    if (e)
        return e;
    uint32_t n = p->ranks, ne = p->experts, k = p->topk;
    weft_traffic t;
    e = weft_traffic_new(n, &t, d);
    if (e)
        return e;
    e = WEFT_ENOMEM;
    uint64_t *w = weft__malloc((size_t)ne * sizeof *w);
    uint32_t *home = weft__malloc((size_t)ne * sizeof *home);
    uint32_t *picked = weft__malloc((size_t)k * sizeof *picked);
    fenwick f = {.tree = weft__calloc((size_t)ne + 1, sizeof *f.tree), .n = ne, .top = 1};
    if (!w || !home || !picked || !f.tree) {
        weft_diag_set(d, WEFT_ENOMEM, "out of memory generating a MoE matrix of %" PRIu32
                                      " experts",
                      ne);
        goto free_all;
    }
    while (f.top * 2 <= ne)
        f.top *= 2;
    uint64_t tab[Q + 1];
    pow2_table(tab);
    uint64_t wsum = 0;
    for (uint32_t x = 0; x < ne; x++) {
        w[x] = p->skew == WEFT_TRAFFIC_SKEW_ZIPF ? zipf_weight(x + 1, p->zipf_milli, tab) : 1;
        wsum += w[x]; /* <= 2^20 * 2^40 */
        home[x] = (uint32_t)((uint64_t)x * n / ne);
        fen_add(&f, x, w[x], false);
    }
    for (uint32_t r = 0; r < n; r++) {
        rng g;
        rng_seed(&g, p->seed, r);
        uint64_t *row = t.bytes + (size_t)r * n;
        for (uint64_t tok = 0; tok < p->tokens; tok++) {
            uint64_t left = wsum;
            for (uint32_t j = 0; j < k; j++) {
                uint32_t x = fen_find(&f, rng_below(&g, left));
                picked[j] = x;
                left -= w[x];
                fen_add(&f, x, w[x], true);
                row[home[x]] += p->hidden_bytes;
            }
            for (uint32_t j = 0; j < k; j++)
                fen_add(&f, picked[j], w[picked[j]], false);
        }
    }
    *out = t;
    t.bytes = NULL;
    e = WEFT_OK;
free_all:
    weft__free(f.tree);
    weft__free(picked);
    weft__free(home);
    weft__free(w);
    weft_traffic_free(&t);
    return e;
}
