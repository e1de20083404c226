/* The runtime's hash partition of an index space (weft/compress.h,
 * weft_sparse_hash): a Feistel bijection walked onto [0, n), cut into the
 * part sizes of weft_sparse_part_get. */
#include <inttypes.h>

#include "weft/compress.h"

/* splitmix64's finaliser (Vigna, splitmix64.c; Steele, Lea & Flood,
 * OOPSLA 2014): a 64-bit mixing bijection. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

weft_err weft_sparse_hash_init(weft_sparse_hash *h, uint64_t n, uint32_t ranks, weft_diag *d)
{
    if (ranks == 0)
        return weft_diag_set(d, WEFT_EINVAL, "hash partition of %" PRIu64 " elements over 0 ranks",
                             n);
    uint32_t hb = 1;
    /* The least h >= 1 with 4^h >= n (h = 32 covers every uint64_t). */
    while (hb < 32 && (UINT64_C(1) << (2 * hb)) < n)
        hb++;
    h->n = n;
    h->ranks = ranks;
    h->half_bits = hb;
    h->q = n / ranks;
    h->r = n % ranks;
    return WEFT_OK;
}

/* One pass of the 4-round Feistel network on 2h bits: (L, R) -> (R, L ^
 * F(R)), F keyed per round by multiples of the golden ratio's 64-bit
 * fraction (splitmix64's increment). */
static uint64_t feistel(uint64_t x, uint32_t hb)
{
    uint64_t mask = hb == 32 ? UINT64_MAX >> 32 : (UINT64_C(1) << hb) - 1;
    uint64_t l = (x >> hb) & mask, r = x & mask;
    for (uint64_t round = 1; round <= 4; round++) {
        uint64_t f = mix64(r ^ (round * UINT64_C(0x9e3779b97f4a7c15))) & mask;
        uint64_t t = r;
        r = l ^ f;
        l = t;
    }
    return (l << hb) | r;
}

/* The network run backwards: (L, R) -> (R ^ F(L), L), rounds 4 .. 1. */
static uint64_t feistel_inv(uint64_t x, uint32_t hb)
{
    uint64_t mask = hb == 32 ? UINT64_MAX >> 32 : (UINT64_C(1) << hb) - 1;
    uint64_t l = (x >> hb) & mask, r = x & mask;
    for (uint64_t round = 4; round >= 1; round--) {
        uint64_t f = mix64(l ^ (round * UINT64_C(0x9e3779b97f4a7c15))) & mask;
        uint64_t t = l;
        l = r ^ f;
        r = t;
    }
    return (l << hb) | r;
}

uint64_t weft_sparse_hash_unperm(const weft_sparse_hash *h, uint64_t p)
{
    if (p >= h->n)
        return p;
    uint64_t x = feistel_inv(p, h->half_bits);
    while (x >= h->n)
        x = feistel_inv(x, h->half_bits);
    return x;
}

uint64_t weft_sparse_hash_start(const weft_sparse_hash *h, uint32_t j)
{
    return j < h->r ? (uint64_t)j * (h->q + 1) : h->r * (h->q + 1) + (uint64_t)(j - h->r) * h->q;
}

uint64_t weft_sparse_hash_perm(const weft_sparse_hash *h, uint64_t index)
{
    if (index >= h->n)
        return index;
    /* Cycle walking: the network permutes [0, 4^h); following the cycle
     * of index until it re-enters [0, n) permutes [0, n). */
    uint64_t x = feistel(index, h->half_bits);
    while (x >= h->n)
        x = feistel(x, h->half_bits);
    return x;
}

uint32_t weft_sparse_hash_owner(const weft_sparse_hash *h, uint64_t index)
{
    return weft_sparse_hash_owner_of_image(h, weft_sparse_hash_perm(h, index));
}

uint32_t weft_sparse_hash_owner_of_image(const weft_sparse_hash *h, uint64_t p)
{
    /* The first r parts hold q + 1 images each, the others q. */
    uint64_t big = h->r * (h->q + 1);
    if (p < big)
        return (uint32_t)(p / (h->q + 1));
    return (uint32_t)(h->r + (p - big) / h->q);
}
