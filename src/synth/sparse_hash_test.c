/* The runtime's hash partition (weft_sparse_hash): a bijection of [0, n)
 * whose parts have exactly weft_sparse_part_get's hashed sizes, and a dense
 * run of indices spread over the parts. The pinned images were computed
 * independently (a Python transcription of the definition in
 * weft/compress.h). */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "weft/compress.h"

static void test_bijection_and_sizes(void)
{
    static const uint64_t ns[] = {1, 2, 3, 4, 5, 17, 1000, 1001, 4097};
    static const uint32_t rs[] = {1, 2, 3, 7, 8};
    weft_diag d = {0};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t b = 0; b < sizeof rs / sizeof *rs; b++) {
            uint64_t n = ns[a];
            uint32_t N = rs[b];
            weft_sparse_hash h;
            CHECK_ERR(weft_sparse_hash_init(&h, n, N, &d), WEFT_OK);
            unsigned char *seen = calloc(n, 1);
            uint64_t cnt[8] = {0};
            for (uint64_t i = 0; i < n; i++) {
                uint64_t p = weft_sparse_hash_perm(&h, i);
                CHECK(p < n);
                if (p < n) {
                    CHECK(!seen[p]);
                    seen[p] = 1;
                }
                CHECK_INT(weft_sparse_hash_unperm(&h, p), i);
                uint32_t o = weft_sparse_hash_owner(&h, i);
                CHECK(o < N);
                CHECK(p >= weft_sparse_hash_start(&h, o) &&
                      (o + 1 == N || p < weft_sparse_hash_start(&h, o + 1)));
                if (o < N)
                    cnt[o]++;
            }
            CHECK_INT(weft_sparse_hash_start(&h, 0), 0);
            weft_sparse_spec s = {n, 4, 1000000, 0, WEFT_SPARSE_HASH};
            for (uint32_t j = 0; j < N; j++) {
                weft_sparse_part_counts pc;
                CHECK_ERR(weft_sparse_part_get(&s, N, j, &pc, &d), WEFT_OK);
                CHECK_INT(cnt[j], pc.elems);
            }
            free(seen);
        }
}

static void test_pinned(void)
{
    weft_sparse_hash h;
    CHECK_ERR(weft_sparse_hash_init(&h, 1000, 4, NULL), WEFT_OK);
    CHECK_INT(h.half_bits, 5); /* 4^5 = 1024 >= 1000 */
    CHECK_INT(weft_sparse_hash_perm(&h, 0), 76);
    CHECK_INT(weft_sparse_hash_perm(&h, 1), 823);
    CHECK_INT(weft_sparse_hash_perm(&h, 4), 128);
    CHECK_INT(weft_sparse_hash_owner(&h, 1), 3);      /* 823 / 250 */
    CHECK_INT(weft_sparse_hash_perm(&h, 1000), 1000); /* outside: itself */
    CHECK_ERR(weft_sparse_hash_init(&h, 1000000000, 1, NULL), WEFT_OK);
    CHECK_INT(weft_sparse_hash_perm(&h, 123456789), 150395043);
    weft_diag d = {0};
    CHECK_ERR(weft_sparse_hash_init(&h, 10, 0, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "hash partition of 10 elements over 0 ranks");
    /* The largest space: h = 32, images stay below n. */
    CHECK_ERR(weft_sparse_hash_init(&h, UINT64_MAX, 3, NULL), WEFT_OK);
    CHECK_INT(h.half_bits, 32);
    CHECK(weft_sparse_hash_owner(&h, UINT64_MAX - 1) < 3);
    uint64_t far = weft_sparse_hash_perm(&h, UINT64_C(12345678901234567));
    CHECK_INT(weft_sparse_hash_unperm(&h, far), UINT64_C(12345678901234567));
}

/* The first 10,000 indices of 10^6 (Zen's skew at its most: one dense run)
 * fall 1250, 1259, 1256, 1198, 1230, 1254, 1274, 1279 on 8 owners: within
 * 4.2 % of the mean, where range partitioning puts all 10,000 on owner 0. */
static void test_dense_run(void)
{
    weft_sparse_hash h;
    CHECK_ERR(weft_sparse_hash_init(&h, 1000000, 8, NULL), WEFT_OK);
    uint64_t cnt[8] = {0};
    for (uint64_t i = 0; i < 10000; i++)
        cnt[weft_sparse_hash_owner(&h, i)]++;
    static const uint64_t want[8] = {1250, 1259, 1256, 1198, 1230, 1254, 1274, 1279};
    for (int j = 0; j < 8; j++)
        CHECK_INT(cnt[j], want[j]);
}

int main(void)
{
    test_bijection_and_sizes();
    test_pinned();
    test_dense_run();
    return weft_test_done();
}
