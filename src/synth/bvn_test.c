/* Birkhoff-von Neumann decomposition: every round is a permutation, the
 * weights sum to the largest line sum, the weighted permutations reproduce
 * the padded matrix exactly and cover the input entry by entry, the round
 * count stays within n^2 - 2n + 2, and allocation failures unwind. */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "weft/bvn.h"

/* Checks b against m; returns false after reporting a broken property. */
static bool check_bvn(const uint64_t *m, uint32_t n, const weft_bvn *b)
{
    bool ok = true;
    uint64_t *sum = calloc((size_t)n * n, sizeof *sum);
    char *hit = calloc(n, 1);
    uint64_t wsum = 0, big = 0, total = 0;
    for (uint32_t k = 0; k < b->rounds; k++) {
        const uint32_t *p = b->perm + (size_t)k * n;
        memset(hit, 0, n);
        if (b->weight[k] == 0)
            ok = false;
        for (uint32_t i = 0; i < n; i++) {
            if (p[i] >= n || hit[p[i]]) {
                ok = false; /* not a permutation */
                break;
            }
            hit[p[i]] = 1;
            sum[(size_t)i * n + p[i]] += b->weight[k];
        }
        wsum += b->weight[k];
    }
    for (uint32_t i = 0; i < n; i++) {
        uint64_t r = 0, c = 0, rs = 0, cs = 0;
        for (uint32_t j = 0; j < n; j++) {
            r += m[(size_t)i * n + j];
            c += m[(size_t)j * n + i];
            rs += sum[(size_t)i * n + j];
            cs += sum[(size_t)j * n + i];
            if (sum[(size_t)i * n + j] < m[(size_t)i * n + j])
                ok = false; /* does not cover the entry */
            total += sum[(size_t)i * n + j] - m[(size_t)i * n + j];
        }
        big = r > big ? r : big;
        big = c > big ? c : big;
        if (rs != b->line || cs != b->line)
            ok = false; /* the padded lines must all be D */
    }
    CHECK(ok);
    CHECK_INT(b->line, big);
    CHECK_INT(wsum, big);
    CHECK_INT(b->padded, total);
    CHECK(b->rounds <= (uint64_t)n * n - 2ull * n + 2 || n == 1);
    free(sum);
    free(hit);
    return ok;
}

static void test_hand(void)
{
    /* A 3x3 matrix with line sums 4 (rows) and 4 (columns): no padding,
     * and the decomposition reproduces it exactly. */
    const uint64_t m[9] = {1, 3, 0, 3, 0, 1, 0, 1, 3};
    weft_bvn b;
    memset(&b, 0, sizeof b);
    weft_diag d;
    CHECK_ERR(weft_bvn_decompose(m, 3, &b, &d), WEFT_OK);
    CHECK_INT(b.line, 4);
    CHECK_INT(b.padded, 0);
    CHECK(check_bvn(m, 3, &b));
    /* Its support has exactly two perfect matchings ((0,1)(1,0)(2,2) and
     * (0,0)(1,2)(2,1)), so two rounds of weight 3 and 1. */
    CHECK_INT(b.rounds, 2);
    weft_bvn_fini(&b);
    weft_bvn_fini(&b); /* safe twice */

    /* Uniform with a zero diagonal (all-to-all between 8 boxes): 7 rounds,
     * each a derangement, weight 5. */
    uint64_t u[64];
    for (uint32_t i = 0; i < 64; i++)
        u[i] = i / 8 == i % 8 ? 0 : 5;
    CHECK_ERR(weft_bvn_decompose(u, 8, &b, &d), WEFT_OK);
    CHECK_INT(b.rounds, 7);
    CHECK_INT(b.line, 35);
    for (uint32_t k = 0; k < b.rounds; k++) {
        CHECK_INT(b.weight[k], 5);
        for (uint32_t i = 0; i < 8; i++)
            CHECK(b.perm[k * 8 + i] != i);
    }
    CHECK(check_bvn(u, 8, &b));
    weft_bvn_fini(&b);

    /* Unbalanced: one heavy row is padded; D is that row's sum. */
    const uint64_t s[4] = {7, 2, 0, 1};
    CHECK_ERR(weft_bvn_decompose(s, 2, &b, &d), WEFT_OK);
    CHECK_INT(b.line, 9);
    CHECK_INT(b.padded, 8);
    CHECK(check_bvn(s, 2, &b));
    weft_bvn_fini(&b);

    /* The zero matrix has no rounds; n = 1 one round of its entry. */
    const uint64_t z[4] = {0, 0, 0, 0};
    CHECK_ERR(weft_bvn_decompose(z, 2, &b, &d), WEFT_OK);
    CHECK_INT(b.rounds, 0);
    CHECK_INT(b.line, 0);
    weft_bvn_fini(&b);
    const uint64_t one[1] = {42};
    CHECK_ERR(weft_bvn_decompose(one, 1, &b, &d), WEFT_OK);
    CHECK_INT(b.rounds, 1);
    CHECK_INT(b.weight[0], 42);
    weft_bvn_fini(&b);

    /* Errors. */
    CHECK_ERR(weft_bvn_decompose(m, 0, &b, &d), WEFT_EINVAL);
    CHECK_ERR(weft_bvn_decompose(NULL, 3, &b, &d), WEFT_EINVAL);
    const uint64_t huge[4] = {UINT64_MAX, 1, 0, 0};
    CHECK_ERR(weft_bvn_decompose(huge, 2, &b, &d), WEFT_EOVERFLOW);
    CHECK_CONTAINS(d.msg, "does not fit in 64 bits");
}

/* Random matrices of several shapes: dense, sparse, skewed (a few heavy
 * entries), with and without zero diagonals. */
static void test_random(void)
{
    uint64_t st = 0x9e3779b97f4a7c15ull;
    for (int iter = 0; iter < 300; iter++) {
        uint32_t n = 1 + (uint32_t)(weft_test_rng(&st) % 24);
        uint64_t *m = calloc((size_t)n * n, sizeof *m);
        int shape = iter % 3;
        for (uint32_t i = 0; i < n * n; i++) {
            uint64_t r = weft_test_rng(&st);
            if (shape == 0)
                m[i] = r % 1000;
            else if (shape == 1)
                m[i] = r % 4 == 0 ? r % 97 : 0;
            else
                m[i] = r % 16 == 0 ? (r >> 8) % 1000000 : (r >> 8) % 3;
        }
        weft_bvn b;
        memset(&b, 0, sizeof b);
        weft_diag d;
        weft_err e = weft_bvn_decompose(m, n, &b, &d);
        CHECK_ERR(e, WEFT_OK);
        if (!e && !check_bvn(m, n, &b))
            fprintf(stderr, "random matrix %d (n %u) failed\n", iter, n);
        weft_bvn_fini(&b);
        free(m);
    }
}

/* The decomposition itself is pinned: its rounds, weights and
 * permutations (an FNV-1a hash of them) on skewed matrices of 16 and 128
 * boxes, as the first implementation gave them. Speed-ups of the peeling
 * (the minimum kept per block of rows, the weights as an offset) must not
 * change which matching each round finds. */
static uint64_t fnv(uint64_t h, uint64_t x)
{
    for (int b = 0; b < 8; b++) {
        h ^= (x >> (8 * b)) & 0xff;
        h *= 0x100000001b3ull;
    }
    return h;
}

static void check_pinned(uint32_t n, uint64_t seed, uint32_t rounds, uint64_t line, uint64_t padded,
                         uint64_t hash)
{
    uint64_t *m = calloc((size_t)n * n, sizeof *m), st = seed;
    /* Skewed and sparse: a quarter of the entries zero, every seventh
     * column (a hot expert's box) fifty times heavier, no diagonal. */
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            uint64_t r = weft_test_rng(&st);
            if (i != j && r % 4)
                m[(size_t)i * n + j] = (r >> 8) % 100000 * (j % 7 == 0 ? 50 : 1);
        }
    weft_bvn b;
    weft_diag d;
    CHECK_ERR(weft_bvn_decompose(m, n, &b, &d), WEFT_OK);
    CHECK(check_bvn(m, n, &b));
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t k = 0; k < b.rounds; k++) {
        h = fnv(h, b.weight[k]);
        for (uint32_t i = 0; i < n; i++)
            h = fnv(h, b.perm[(size_t)k * n + i]);
    }
    printf("pinned %u: %u rounds, line %llu, padded %llu, hash %llu\n", n, b.rounds,
           (unsigned long long)b.line, (unsigned long long)b.padded, (unsigned long long)h);
    CHECK_INT(b.rounds, rounds);
    CHECK_INT(b.line, line);
    CHECK_INT(b.padded, padded);
    CHECK_INT(h, hash);
    weft_bvn_fini(&b);
    free(m);
}

static void test_pinned(void)
{
    check_pinned(16, 11, 163, 28025300, 375550816, 16569574810350238485ull);
    check_pinned(128, 12, 12099, 267331150, 29239602904ull, 8204061472179629745ull);
}

static const uint64_t oom_m[16] = {3, 0, 1, 2, 0, 4, 4, 1, 2, 2, 0, 0, 9, 1, 1, 1};
static weft_bvn oom_b;

static weft_err oom_ctor(void *arg)
{
    (void)arg;
    memset(&oom_b, 0, sizeof oom_b);
    return weft_bvn_decompose(oom_m, 4, &oom_b, NULL);
}

static void oom_dtor(void *arg)
{
    (void)arg;
    weft_bvn_fini(&oom_b);
}

int main(void)
{
    test_hand();
    test_random();
    test_pinned();
    CHECK(weft_test_oom_sweep("bvn", oom_ctor, oom_dtor, NULL) > 0);
    return weft_test_done();
}
