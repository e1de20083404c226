#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/evheap.h"
#include "base/heap.h"
#include "base/testing.h"

/* A fixed pseudo-random sequence (a 64-bit LCG, Knuth's MMIX constants). */
static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static void heap64(void)
{
    weft__heap64 h;
    weft__heap64_init(&h);
    /* Keys with payloads: (priority << 32) | id; equal priorities pop by id. */
    const uint64_t pri[] = {5, 3, 5, 1, 3, 5, 0, 3};
    for (uint64_t id = 0; id < 8; id++)
        CHECK_ERR(weft__heap64_push(&h, pri[id] << 32 | id), WEFT_OK);
    const uint32_t want[] = {6, 3, 1, 4, 7, 0, 2, 5};
    for (int i = 0; i < 8; i++)
        CHECK_INT((uint32_t)weft__heap64_pop(&h), want[i]);
    CHECK_INT(h.n, 0);

    /* Duplicates and extremes, against a counting sort. */
    uint64_t s = 1, count[64] = {0};
    for (int i = 0; i < 5000; i++) {
        uint64_t k = next(&s) % 64;
        count[k]++;
        CHECK_ERR(weft__heap64_push(&h, k == 63 ? UINT64_MAX : k), WEFT_OK);
    }
    CHECK_ERR(weft__heap64_push(&h, 0), WEFT_OK);
    count[0]++;
    int bad = 0;
    for (uint64_t k = 0; k < 64; k++)
        for (uint64_t c = 0; c < count[k]; c++)
            bad += weft__heap64_pop(&h) != (k == 63 ? UINT64_MAX : k);
    CHECK_INT(bad, 0);
    CHECK_INT(h.n, 0);

    /* Interleaved pushes and pops keep the minimum on top. */
    uint64_t last = 0;
    bad = 0;
    for (int round = 0; round < 2000; round++) {
        CHECK_ERR(weft__heap64_push(&h, last + next(&s) % 100), WEFT_OK);
        CHECK_ERR(weft__heap64_push(&h, last + next(&s) % 100), WEFT_OK);
        uint64_t k = weft__heap64_pop(&h);
        bad += k < last;
        last = k;
    }
    CHECK_INT(bad, 0);
    CHECK_INT(h.n, 2000);

    /* A push that must grow and cannot leaves the heap as it was. */
    weft__heap64_fini(&h);
    CHECK_ERR(weft__heap64_reserve(&h, 2), WEFT_OK);
    CHECK_INT(h.cap, 8);
    for (uint64_t k = 8; k > 0; k--)
        CHECK_ERR(weft__heap64_push(&h, k), WEFT_OK);
    weft__alloc_fail_after(0);
    CHECK_ERR(weft__heap64_push(&h, 0), WEFT_ENOMEM);
    weft__alloc_fail_after(-1);
    CHECK_INT(h.n, 8);
    CHECK_INT(weft__heap64_pop(&h), 1);
    weft__heap64_fini(&h);
}

static void evheap(void)
{
    weft__evheap h;
    CHECK_ERR(weft__evheap_init(&h, 6), WEFT_OK);
    /* Equal times pop in the order their keys were set. */
    weft__evheap_set(&h, 4, 2.0);
    weft__evheap_set(&h, 1, 1.0);
    weft__evheap_set(&h, 3, 2.0);
    weft__evheap_set(&h, 0, 2.0);
    weft__evheap_set(&h, 5, 1.0);
    CHECK(weft__evheap_contains(&h, 3));
    CHECK(!weft__evheap_contains(&h, 2));
    /* Moving an id gives it a fresh sequence number: 4 now pops after 0. */
    weft__evheap_set(&h, 4, 2.0);
    weft__evheap_remove(&h, 5);
    CHECK(!weft__evheap_contains(&h, 5));
    CHECK(weft__evheap_top(&h)->t == 1.0);
    const uint32_t want[] = {1, 3, 0, 4};
    for (int i = 0; i < 4; i++)
        CHECK_INT(weft__evheap_pop(&h), want[i]);
    CHECK_INT(h.n, 0);
    /* Growing the id space keeps what is queued. */
    weft__evheap_set(&h, 2, 0.5);
    CHECK_ERR(weft__evheap_reserve(&h, 100), WEFT_OK);
    weft__evheap_set(&h, 99, 0.25);
    CHECK_INT(weft__evheap_pop(&h), 99);
    CHECK_INT(weft__evheap_pop(&h), 2);
    weft__evheap_fini(&h);
}

/* Many ids whose keys move up and down, are removed and set again (few
 * distinct times, so ties are many), popping against a linear scan for the
 * least (time, order set): the heap's pops are that order whatever its
 * shape. */
static void evheap_random(void)
{
    enum { N = 300 };
    static double t[N];
    static uint64_t seq[N]; /* 0: absent */
    weft__evheap h;
    CHECK_ERR(weft__evheap_init(&h, N), WEFT_OK);
    uint64_t s = 7, clock = 0, pops = 0;
    for (int step = 0; step < 20000; step++) {
        uint32_t id = (uint32_t)(next(&s) % N), op = (uint32_t)(next(&s) % 8);
        if (op < 5) {
            t[id] = (double)(next(&s) % 16);
            seq[id] = ++clock;
            weft__evheap_set(&h, id, t[id]);
        } else if (op == 5 && seq[id]) {
            weft__evheap_remove(&h, id);
            seq[id] = 0;
        } else if (h.n) {
            uint32_t want = N;
            for (uint32_t i = 0; i < N; i++)
                if (seq[i] &&
                    (want == N || t[i] < t[want] || (t[i] == t[want] && seq[i] < seq[want])))
                    want = i;
            CHECK_INT(weft__evheap_top(&h)->id, want);
            CHECK_INT(weft__evheap_pop(&h), want);
            seq[want] = 0;
            pops++;
        }
        CHECK(weft__evheap_contains(&h, id) == (seq[id] != 0));
    }
    CHECK(pops > 1000);
    weft__evheap_fini(&h);
}

typedef struct rec {
    uint64_t id;
    uint32_t idx;
} rec;

static int rec_cmp(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* The in-place sort agrees with qsort on records with repeated ids, and
 * leaves short arrays alone. */
static void heapsort_records(void)
{
    enum { N = 1000 };
    static rec a[N], b[N];
    uint64_t s = 12345;
    for (uint32_t i = 0; i < N; i++)
        a[i] = b[i] = (rec){next(&s) % 97, i};
    weft__heapsort(a, N, sizeof *a, rec_cmp);
    qsort(b, N, sizeof *b, rec_cmp);
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK(a[0].id == 0 && a[N - 1].id == 96);
    rec one = {7, 0};
    weft__heapsort(&one, 1, sizeof one, rec_cmp);
    weft__heapsort(NULL, 0, sizeof one, rec_cmp);
    CHECK(one.id == 7);
    rec two[2] = {{5, 1}, {5, 0}};
    weft__heapsort(two, 2, sizeof *two, rec_cmp);
    CHECK_INT(two[0].idx, 0);
    CHECK_INT(two[1].idx, 1);
}

int main(void)
{
    long live = weft__alloc_live();
    heap64();
    evheap();
    evheap_random();
    heapsort_records();
    CHECK_INT(weft__alloc_live(), live);
    return weft_test_done();
}
