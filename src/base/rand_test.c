/* The batched and precomputed forms of base/rand.h against the plain
 * ones they must match to the bit: weft__zipf_weights against
 * weft__zipf_weight (every rank to 5,000, runs about each power of two to
 * 2^33, partial batches, long runs from other ranks: with and without its
 * table and its halved ranks), weft__rng_below_range against weft__rng_below
 * (the same values and the same generator state after, for bounds with
 * heavy rejection and bounds near 2^64). Plus a few fixed values. */
#include <stdlib.h>
#include <string.h>

#include "base/rand.h"
#include "base/testing.h"

static void check_weights(uint32_t milli)
{
    weft__zipf z;
    weft__zipf_init(&z, milli);
    uint64_t *out = malloc(5000 * sizeof *out);
    size_t bad = 0;
    weft__zipf_weights(&z, 1, 5000, out);
    for (uint64_t k = 1; k <= 5000; k++)
        bad += out[k - 1] != weft__zipf_weight(&z, k);
    /* Runs of 1 to 19 ranks (partial batches) ending at and past each
     * power of two, the last ending at 2^33 - 1. */
    for (unsigned b = 2; b <= 33; b++) {
        uint64_t count = 1 + b % 19, k0 = (1ull << b) - count + (b < 33 ? 3 : 0);
        weft__zipf_weights(&z, k0, count, out);
        for (uint64_t i = 0; i < count; i++)
            bad += out[i] != weft__zipf_weight(&z, k0 + i);
    }
    /* Long runs (the table of the first bits of 2^-frac) from a rank
     * other than 1 (the even ranks whose half is in the run derived from
     * it, the others not), and ending at 2^33 - 1. */
    static const uint64_t starts[][2] = {{3001, 4100}, {(1ull << 33) - 4500, 4499}};
    for (size_t r = 0; r < 2; r++) {
        uint64_t k0 = starts[r][0], count = starts[r][1];
        weft__zipf_weights(&z, k0, count, out);
        for (uint64_t i = 0; i < count; i++)
            bad += out[i] != weft__zipf_weight(&z, k0 + i);
    }
    CHECK_INT(bad, 0);
    free(out);
}

static void check_range(uint64_t m, uint64_t seed)
{
    weft__rng a, b;
    weft__rng_seed(&a, seed, 3);
    weft__rng_seed(&b, seed, 3);
    weft__rng_range r;
    weft__rng_range_init(&r, m);
    size_t bad = 0;
    for (int i = 0; i < 20000; i++) {
        uint64_t x = weft__rng_below(&a, m), y = weft__rng_below_range(&b, &r);
        bad += x != y || y >= m;
    }
    CHECK_INT(bad, 0);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
}

int main(void)
{
    /* Fixed values: rank 1 is 2^40 for every exponent; s = 1 halves the
     * weight at rank 2 (to within the fixed point's 4e-7). */
    weft__zipf z;
    weft__zipf_init(&z, 1000);
    CHECK_INT(weft__zipf_weight(&z, 1), 1ull << 40);
    uint64_t w2 = weft__zipf_weight(&z, 2);
    CHECK(w2 <= 1ull << 39 && w2 > (1ull << 39) - (1ull << 39) / 2000000);
    for (uint32_t milli = 0; milli <= 8000; milli += milli < 2000 ? 350 : 1500)
        check_weights(milli);
    check_weights(1050);
    check_weights(8000);

    static const uint64_t bounds[] = {1,
                                      2,
                                      3,
                                      7,
                                      1000,
                                      1000003,
                                      (1ull << 32) + 1,
                                      0x9E3779B97F4A7C15ull,
                                      (1ull << 63) - 1,
                                      1ull << 63,
                                      (1ull << 63) + 1, /* half the outputs rejected */
                                      UINT64_MAX / 3 + 1,
                                      UINT64_MAX - 1,
                                      UINT64_MAX};
    for (size_t i = 0; i < sizeof bounds / sizeof *bounds; i++)
        check_range(bounds[i], 17 + i);
    /* Random bounds of every size. */
    weft__rng g;
    weft__rng_seed(&g, 5, 0);
    for (int i = 0; i < 200; i++) {
        uint64_t m = weft__rng_next(&g) >> (i % 64);
        check_range(m ? m : 1, (uint64_t)i);
    }
    return weft_test_done();
}
