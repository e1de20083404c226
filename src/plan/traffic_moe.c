/* The MoE dispatch generator (weft_traffic_moe, weft/traffic.h).
 *
 * Determinism across platforms is the design constraint: the matrix of a
 * (params, seed) is part of a user's experiment and must not change with the
 * compiler, the libm or the machine. So nothing here uses floating point:
 * - the random numbers are base/rand.h's xoshiro256**, rank r's stream r of
 *   the seed, a draw in [0, m) by rejection;
 * - the zipf weights 1/(e+1)^s are base/rand.h's fixed-point weights,
 *   integers in [1, 2^40];
 * - K distinct experts are drawn one after another, each with probability
 *   weight / (sum of the weights not yet drawn for this token), from a
 *   Fenwick tree of the weights: a pick is O(log E), and the picked weights
 *   are put back after the token.
 * Time O(N * T * K * log E), memory O(N^2 + E). */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "base/alloc.h"
#include "base/rand.h"
#include "weft/traffic.h"

__extension__ typedef unsigned __int128 u128;

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
        return weft_diag_set(d, WEFT_EINVAL, "--experts %" PRIu32 ": must be 1 to %u", p->experts,
                             WEFT_TRAFFIC_MAX_EXPERTS);
    if (p->topk == 0)
        return weft_diag_set(d, WEFT_EINVAL, "--topk 0: every token goes to at least 1 expert");
    if (p->topk > p->experts)
        return weft_diag_set(d, WEFT_EINVAL,
                             "--topk %" PRIu32 " is more than the %" PRIu32
                             " experts (a token goes to K distinct experts)",
                             p->topk, p->experts);
    if (p->skew == WEFT_TRAFFIC_SKEW_ZIPF && p->zipf_milli > 8000)
        return weft_diag_set(d, WEFT_EINVAL,
                             "zipf exponent %" PRIu32 ".%03" PRIu32 ": must be at most 8",
                             p->zipf_milli / 1000, p->zipf_milli % 1000);
    /* N * T * K * H, the whole matrix, must fit. */
    u128 total = (u128)p->tokens * p->topk;
    if (total <= UINT64_MAX)
        total *= p->hidden_bytes;
    if (total <= UINT64_MAX)
        total *= p->ranks;
    if (total > UINT64_MAX)
        return weft_diag_set(d, WEFT_EOVERFLOW,
                             "%" PRIu32 " ranks x %" PRIu64 " tokens x %" PRIu32
                             " experts x %" PRIu64 " bytes are more than 2^64-1 bytes",
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
        weft_diag_set(d, WEFT_ENOMEM,
                      "out of memory generating a MoE matrix of %" PRIu32 " experts", ne);
        goto free_all;
    }
    while (f.top * 2 <= ne)
        f.top *= 2;
    weft__zipf z;
    weft__zipf_init(&z, p->zipf_milli);
    uint64_t wsum = 0;
    for (uint32_t x = 0; x < ne; x++) {
        w[x] = p->skew == WEFT_TRAFFIC_SKEW_ZIPF ? weft__zipf_weight(&z, x + 1) : 1;
        wsum += w[x]; /* <= 2^20 * 2^40 */
        home[x] = (uint32_t)((uint64_t)x * n / ne);
        fen_add(&f, x, w[x], false);
    }
    for (uint32_t r = 0; r < n; r++) {
        weft__rng g;
        weft__rng_seed(&g, p->seed, r);
        uint64_t *row = t.bytes + (size_t)r * n;
        for (uint64_t tok = 0; tok < p->tokens; tok++) {
            uint64_t left = wsum;
            for (uint32_t j = 0; j < k; j++) {
                uint32_t x = fen_find(&f, weft__rng_below(&g, left));
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
