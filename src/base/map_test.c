#include "base/alloc.h"
#include "base/map.h"
#include "base/name_index.h"
#include "base/testing.h"

/* The first n keys from `from` up whose home slot in a map of cap slots is
 * `slot`: they collide and share one probe run. */
static void colliding(uint64_t from, size_t cap, size_t slot, uint64_t *out, int n)
{
    for (uint64_t k = from; n > 0; k++)
        if ((weft__mix64(k) & (cap - 1)) == slot)
            *out++ = k, n--;
}

static uint32_t get(const weft__map64 *m, uint64_t key)
{
    const uint32_t *v = weft__map64_find(m, key);
    return v ? *v : UINT32_MAX;
}

static void collisions_and_deletes(void)
{
    weft__map64 m;
    weft__map64_init(&m);
    CHECK(weft__map64_find(&m, 7) == NULL);
    CHECK(!weft__map64_del(&m, 7));
    CHECK_ERR(weft__map64_reserve(&m, 8), WEFT_OK);
    CHECK_INT(m.cap, 16);
    /* Four keys with the same home slot, and two homed at the last slot so
     * that their run wraps round to slots 0 and 1. */
    uint64_t k[4], w[2];
    colliding(0, 16, 0, k, 4);
    colliding(1000, 16, 15, w, 2);
    for (int i = 0; i < 2; i++)
        CHECK_ERR(weft__map64_put(&m, w[i], 100 + i), WEFT_OK);
    for (int i = 0; i < 4; i++)
        CHECK_ERR(weft__map64_put(&m, k[i], i), WEFT_OK);
    CHECK_INT(m.n, 6);
    CHECK_INT(m.cap, 16);
    for (int i = 0; i < 4; i++)
        CHECK_INT(get(&m, k[i]), i);
    CHECK_INT(get(&m, w[1]), 101);
    /* Overwrite in place. */
    CHECK_ERR(weft__map64_put(&m, k[2], 22), WEFT_OK);
    CHECK_INT(get(&m, k[2]), 22);
    CHECK_INT(m.n, 6);
    /* Deleting from the middle of a run shifts the rest back: all still
     * found, and the deleted key not. */
    CHECK(weft__map64_del(&m, k[1]));
    CHECK(!weft__map64_del(&m, k[1]));
    CHECK(weft__map64_find(&m, k[1]) == NULL);
    CHECK_INT(get(&m, k[0]), 0);
    CHECK_INT(get(&m, k[2]), 22);
    CHECK_INT(get(&m, k[3]), 3);
    /* Deleting the wrapped run's head: its tail (at slot 0) moves to 15. */
    CHECK(weft__map64_del(&m, w[0]));
    CHECK_INT(get(&m, w[1]), 101);
    CHECK_INT(get(&m, k[0]), 0);
    CHECK_INT(get(&m, k[3]), 3);
    CHECK_INT(m.n, 4);
    for (int i = 0; i < 4; i++)
        if (i != 1)
            CHECK(weft__map64_del(&m, k[i]));
    CHECK(weft__map64_del(&m, w[1]));
    CHECK_INT(m.n, 0);
    int used = 0;
    for (size_t i = 0; i < m.cap; i++)
        used += m.used[i];
    CHECK_INT(used, 0);
    weft__map64_fini(&m);
}

static void growth(void)
{
    weft__map64 m;
    weft__map64_init(&m);
    /* Patterned keys, 0 and UINT64_MAX included; values number them densely
     * in first-insertion order. */
    int bad = 0;
    for (uint64_t i = 0; i < 20000; i++) {
        uint64_t key = i == 19999 ? UINT64_MAX : (i % 200) << 32 | i / 200;
        uint32_t v;
        bool added;
        CHECK_ERR(weft__map64_get_or_put(&m, key, (uint32_t)m.n, &v, &added), WEFT_OK);
        bad += !added || v != i;
    }
    CHECK_INT(bad, 0);
    CHECK_INT(m.n, 20000);
    CHECK_INT(m.cap, 65536); /* at most half full */
    uint32_t v;
    bool added = true;
    CHECK_ERR(weft__map64_get_or_put(&m, 0, 5, &v, &added), WEFT_OK);
    CHECK_INT(v, 0);
    CHECK(!added);
    CHECK_INT(get(&m, (uint64_t)7 << 32 | 3), 607);
    CHECK_INT(get(&m, UINT64_MAX), 19999);
    CHECK(weft__map64_find(&m, (uint64_t)200 << 32) == NULL);
    /* Delete every other key, then check every key. */
    for (uint64_t i = 0; i < 20000; i += 2)
        CHECK(weft__map64_del(&m, (i % 200) << 32 | i / 200));
    bad = 0;
    for (uint64_t i = 0; i < 19999; i++) {
        const uint32_t *p = weft__map64_find(&m, (i % 200) << 32 | i / 200);
        bad += i % 2 ? !p || *p != i : p != NULL;
    }
    CHECK_INT(bad, 0);
    CHECK_INT(m.n, 10000);
    weft__map64_clear(&m);
    CHECK_INT(m.n, 0);
    CHECK(weft__map64_find(&m, UINT64_MAX) == NULL);
    CHECK_INT(m.cap, 65536);

    /* A growth that fails leaves the map as it was. */
    weft__map64_fini(&m);
    for (uint64_t i = 0; i < 8; i++)
        CHECK_ERR(weft__map64_put(&m, i, (uint32_t)i), WEFT_OK);
    CHECK_INT(m.cap, 16);
    weft__alloc_fail_after(1);
    CHECK_ERR(weft__map64_put(&m, 8, 8), WEFT_ENOMEM);
    weft__alloc_fail_after(-1);
    CHECK_INT(m.n, 8);
    CHECK_INT(m.cap, 16);
    CHECK_INT(get(&m, 7), 7);
    CHECK(weft__map64_find(&m, 8) == NULL);
    weft__map64_fini(&m);
    weft__map64_fini(&m);
}

static void names(void)
{
    /* FNV-1a test vectors (draft-eastlake-fnv, the 32-bit column). */
    CHECK_INT(weft__name_hash("", 0), 0x811c9dc5u);
    CHECK_INT(weft__name_hash("a", 1), 0xe40c292cu);
    CHECK_INT(weft__name_hash("foobar", 6), 0xbf9cf968u);
    const char strings[] = "gpu0\0gpu1\0nvswitch\0gpu10";
    const uint32_t off[] = {0, 5, 10, 19};
    weft__name_index ix = {NULL, 0};
    uint32_t id = 9;
    CHECK(!weft__name_index_find(&ix, strings, off, "gpu0", 4, &id));
    for (uint32_t i = 0; i < 4; i++) {
        CHECK_ERR(weft__name_index_reserve(&ix, i, strings, off), WEFT_OK);
        const char *n = strings + off[i];
        weft__name_index_put(&ix, weft__name_hash(n, strlen(n)), i);
    }
    CHECK_INT(ix.cap, 64);
    CHECK(weft__name_index_find(&ix, strings, off, "gpu10", 5, &id));
    CHECK_INT(id, 3);
    /* A prefix of a name is a different name; the length bounds s. */
    CHECK(weft__name_index_find(&ix, strings, off, "gpu1xyz", 4, &id));
    CHECK_INT(id, 1);
    CHECK(!weft__name_index_find(&ix, strings, off, "gpu", 3, &id));
    CHECK(!weft__name_index_find(&ix, strings, off, "nvswitch2", 9, &id));
    weft__free(ix.slots);
}

int main(void)
{
    long live = weft__alloc_live();
    collisions_and_deletes();
    growth();
    names();
    CHECK_INT(weft__alloc_live(), live);
    return weft_test_done();
}
