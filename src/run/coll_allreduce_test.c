/* The built-in allreduce schedules: the direct one for small buffers
 * (coll_direct.c) and the ring in cache-sized rounds for large ones
 * (coll_ring.c), with forked ranks (2 to 8 over shared memory, 3 over TCP).
 *
 * Counts straddle every boundary: 0, 1, primes, the largest count the direct
 * schedule takes and one more (weft__allreduce_direct_fits, checked here
 * against its definition), and counts of several ring rounds with a ragged
 * last round. Every result is compared byte for byte with a reference
 * reduced locally in rank order, in place and out of place, for integer,
 * 16-bit float, float and double types and every op; a guard byte after the
 * output must stay untouched and an out-of-place input unchanged. A float
 * sum of non-integer values (where the order of combination shows in the
 * last bits) must give bit-identical results on every rank. */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "run/coll.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"

/* The direct schedule's limit (coll_direct.c) and the ring's round
 * (coll_ring.c), restated: the counts below must straddle both. */
#define DIRECT_MAX_BYTES (64u << 10)
#define RING_CHUNK (256u << 10)

/* Rank r's element i: weft__test_small, exact in every type and order. */
static void fill(weft_dtype t, weft_redop op, void *buf, uint32_t r, size_t count)
{
    weft__test_fill(weft__test_small, t, op, buf, r, count);
}

static void check(weft_comm *c, weft_dtype t, weft_redop op, size_t count, bool in_place)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t es = weft_dtype_size(t);
    unsigned char *s = malloc(count * es + 1), *r = malloc(count * es + 1);
    fill(t, op, s, me, count);
    s[count * es] = 0x5a;
    memset(r, 0xa5, count * es + 1);
    unsigned char *out = in_place ? s : r;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_allreduce(c, s, out, count, t, op, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: allreduce: %s\n", me, d.msg);
    size_t bad = weft__test_reduce_wrong(weft__test_small, t, op, out, n, count);
    if (bad)
        fprintf(stderr, "rank %u of %u: allreduce %s %s count %zu %s: %zu wrong\n", me, n,
                weft_dtype_name(t), weft_redop_name(op), count,
                in_place ? "in place" : "out of place", bad);
    CHECK_INT(bad, 0);
    CHECK_INT(out[count * es], in_place ? 0x5a : 0xa5);
    if (!in_place) {
        unsigned char *orig = malloc(count * es + 1);
        fill(t, op, orig, me, count);
        CHECK(count == 0 || memcmp(orig, s, count * es) == 0);
        free(orig);
    }
    free(s);
    free(r);
}

/* Non-integer floats: every rank must end with the same bits. */
static void check_identical(weft_comm *c, size_t count)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    float *v = malloc(count * sizeof *v), *all = malloc(count * n * sizeof *all);
    for (size_t i = 0; i < count; i++)
        v[i] = 1.0f / (float)(me + 3) + (float)i * 1e-3f;
    CHECK_ERR(weft_allreduce(c, v, v, count, WEFT_FLOAT, WEFT_SUM, NULL), WEFT_OK);
    CHECK_ERR(weft_allgather(c, v, all, count, WEFT_FLOAT, NULL), WEFT_OK);
    for (uint32_t r = 1; r < n; r++)
        CHECK(memcmp(all, all + (size_t)r * count, count * sizeof *v) == 0);
    free(v);
    free(all);
}

static int body(weft_comm *c, void *arg)
{
    (void)arg;
    uint32_t n = weft_comm_size(c);
    static const weft_dtype types[] = {WEFT_INT8, WEFT_UINT16,   WEFT_INT32, WEFT_UINT64,
                                       WEFT_HALF, WEFT_BFLOAT16, WEFT_FLOAT, WEFT_DOUBLE};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        weft_dtype t = types[k];
        size_t es = weft_dtype_size(t);
        /* The largest direct count and the first ring count. */
        size_t edge = DIRECT_MAX_BYTES / (n - 1) / es;
        CHECK(weft__allreduce_direct_fits(n, edge * es));
        CHECK(!weft__allreduce_direct_fits(n, (edge + 1) * es));
        size_t counts[] = {0, 1, 2, 13, 1009, edge, edge + 1};
        /* Ops rotate over the counts (every op meets both schedules); 13
         * elements go through every op, in place and out of place. */
        for (size_t j = 0; j < sizeof counts / sizeof counts[0]; j++)
            check(c, t, (weft_redop)((j + k) % WEFT__REDOP_COUNT), counts[j], (j + k) % 2 == 0);
        for (int op = 0; op < WEFT__REDOP_COUNT; op++)
            check(c, t, (weft_redop)op, 13, op % 2 == 1);
        /* Two full ring rounds and a ragged third (a few types: these are
         * megabytes, and every rank computes the reference). */
        if (t != WEFT_INT32 && (n > 4 || (t != WEFT_BFLOAT16 && t != WEFT_DOUBLE)))
            continue;
        size_t rounds = 2 * (size_t)n * (RING_CHUNK / es) + 7919;
        check(c, t, WEFT_SUM, rounds, false);
        if (n <= 4)
            check(c, t, WEFT_MAX, rounds, true);
    }
    check_identical(c, 1009);
    if (n <= 4)
        check_identical(c, n * (RING_CHUNK / 4) + 11);
    CHECK(!weft_comm_failed(c));
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

static void run(uint32_t n, weft_transport_choice t, const char *what)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = t;
    cfg.timeout_ms = 20000;
    weft__test_comm_ranks_ok(n, &cfg, body, NULL, 120000, what);
}

int main(void)
{
    for (uint32_t n = 2; n <= 8; n++)
        run(n, WEFT_TRANSPORT_SHM, "shm");
    run(3, WEFT_TRANSPORT_TCP, "tcp");
    return weft_test_done();
}
