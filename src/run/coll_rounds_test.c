/* The ring schedules that run in cache-sized rounds (coll_ring.c):
 * reduce-scatter and reduce, whose rounds are new, and the large-buffer
 * path of allreduce (results written with streaming stores, and received
 * into the scratch before being forwarded), with forked ranks (2 to 8 over
 * shared memory, 3 over TCP, where a receive combines in two passes).
 *
 * Counts: 0, 1, primes, one element less and more than a round, and
 * several rounds with a ragged last one; in place and out of place; several
 * element sizes and every op. Every result is compared byte for byte with a
 * reference reduced locally in rank order; a guard byte after the output
 * must stay untouched and an out-of-place input unchanged. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/testing.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"

/* The round of coll_ring.c, restated: bytes of one rank's block per round,
 * and the allreduce size from which results are streamed. */
#define RING_CHUNK (256u << 10)
#define NT_MIN_BYTES (8u << 20)

/* Rank r's element i: weft__test_small, exact in every type and order. */
static void fill(weft_dtype t, weft_redop op, void *buf, uint32_t r, size_t count)
{
    weft__test_fill(weft__test_small, t, op, buf, r, count);
}

static bool input_intact(weft_dtype t, weft_redop op, const unsigned char *s, uint32_t r,
                         size_t count)
{
    size_t es = weft_dtype_size(t);
    unsigned char *orig = malloc(count * es + 1);
    fill(t, op, orig, r, count);
    bool same = count == 0 || memcmp(orig, s, count * es) == 0;
    free(orig);
    return same;
}

/* Reduce-scatter of count elements per rank. In place, recvbuf is block
 * `rank` of sendbuf. */
static void check_rs(weft_comm *c, weft_dtype t, weft_redop op, size_t count, bool in_place)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t es = weft_dtype_size(t), total = count * n;
    unsigned char *s = malloc(total * es + 1), *r = malloc(count * es + 1);
    fill(t, op, s, me, total);
    s[total * es] = 0x5a;
    memset(r, 0xa5, count * es + 1);
    unsigned char *out = in_place ? s + (size_t)me * count * es : r;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_reduce_scatter(c, s, out, count, t, op, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: reduce-scatter: %s\n", me, d.msg);
    /* The reference of this rank's block, reduced in rank order. */
    unsigned char *want = malloc(count * es + 1), *one = malloc(count * es + 1);
    for (uint32_t q = 0; q < n; q++) {
        for (size_t i = 0; i < count; i++)
            weft_dtype_store(t, q ? one : want, i, weft__test_small(op, q, (size_t)me * count + i));
        if (q)
            CHECK_ERR(weft_reduce_local(want, one, count, t, op), WEFT_OK);
    }
    size_t bad = 0;
    for (size_t i = 0; i < count; i++)
        bad += memcmp(out + i * es, want + i * es, es) != 0;
    if (bad)
        fprintf(stderr, "rank %u of %u: reduce-scatter %s %s count %zu %s: %zu wrong\n", me, n,
                weft_dtype_name(t), weft_redop_name(op), count,
                in_place ? "in place" : "out of place", bad);
    CHECK_INT(bad, 0);
    if (in_place) {
        CHECK_INT(s[total * es], 0x5a);
    } else {
        CHECK_INT(r[count * es], 0xa5);
        CHECK(input_intact(t, op, s, me, total));
    }
    free(want);
    free(one);
    free(s);
    free(r);
}

static void check_reduce(weft_comm *c, weft_dtype t, weft_redop op, size_t count, uint32_t root,
                         bool in_place)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t es = weft_dtype_size(t);
    unsigned char *s = malloc(count * es + 1), *r = malloc(count * es + 1);
    fill(t, op, s, me, count);
    s[count * es] = 0x5a;
    memset(r, 0xa5, count * es + 1);
    bool mine = me == root;
    unsigned char *out = mine ? (in_place ? s : r) : NULL;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_reduce(c, s, out, count, t, op, root, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: reduce: %s\n", me, d.msg);
    if (mine) {
        size_t bad = weft__test_reduce_wrong(weft__test_small, t, op, out, n, count);
        if (bad)
            fprintf(stderr, "reduce %s %s count %zu root %u of %u: %zu wrong\n", weft_dtype_name(t),
                    weft_redop_name(op), count, root, n, bad);
        CHECK_INT(bad, 0);
        CHECK_INT(out[count * es], in_place ? 0x5a : 0xa5);
    }
    if (!mine || !in_place)
        CHECK(input_intact(t, op, s, me, count));
    free(s);
    free(r);
}

static void check_allreduce(weft_comm *c, weft_dtype t, weft_redop op, size_t count, bool in_place)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t es = weft_dtype_size(t);
    unsigned char *s = malloc(count * es + 1), *r = malloc(count * es + 1);
    fill(t, op, s, me, count);
    s[count * es] = 0x5a;
    memset(r, 0xa5, count * es + 1);
    unsigned char *out = in_place ? s : r;
    CHECK_ERR(weft_allreduce(c, s, out, count, t, op, NULL), WEFT_OK);
    size_t bad = weft__test_reduce_wrong(weft__test_small, t, op, out, n, count);
    if (bad)
        fprintf(stderr, "rank %u of %u: allreduce %s %s count %zu: %zu wrong\n", me, n,
                weft_dtype_name(t), weft_redop_name(op), count, bad);
    CHECK_INT(bad, 0);
    CHECK_INT(out[count * es], in_place ? 0x5a : 0xa5);
    if (!in_place)
        CHECK(input_intact(t, op, s, me, count));
    free(s);
    free(r);
}

typedef struct suite {
    bool large; /* the largest cases and the streamed allreduce too */
} suite;

static int body(weft_comm *c, void *arg)
{
    const suite *su = arg;
    uint32_t n = weft_comm_size(c);
    static const weft_dtype types[] = {WEFT_UINT8, WEFT_INT16, WEFT_HALF,
                                       WEFT_FLOAT, WEFT_INT64, WEFT_DOUBLE};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        weft_dtype t = types[k];
        size_t counts[] = {0, 1, 2, 13, 1009};
        for (size_t j = 0; j < sizeof counts / sizeof counts[0]; j++) {
            weft_redop op = (weft_redop)((j + k) % WEFT__REDOP_COUNT);
            bool in_place = (j + k) % 2 == 0;
            check_rs(c, t, op, counts[j], in_place);
            check_reduce(c, t, op, counts[j] * n + j, (uint32_t)(j + k) % n, !in_place);
        }
    }
    /* One element less and more than a round, and several rounds with a
     * ragged last one (element sizes 1, 4 and 8). */
    size_t per4 = RING_CHUNK / 4, per8 = RING_CHUNK / 8;
    check_rs(c, WEFT_INT64, WEFT_SUM, per8 - 1, false);
    check_rs(c, WEFT_DOUBLE, WEFT_MIN, per8 + 1, true);
    check_rs(c, WEFT_INT32, WEFT_SUM, 2 * per4 + 7919, false);
    check_rs(c, WEFT_FLOAT, WEFT_MAX, 2 * per4 + 13, true);
    check_reduce(c, WEFT_INT64, WEFT_PROD, n * per8 - 1, 0, false);
    check_reduce(c, WEFT_DOUBLE, WEFT_SUM, n * per8 + 1, n / 2, true);
    check_reduce(c, WEFT_INT32, WEFT_SUM, 2 * n * per4 + 7919, n - 1, false);
    if (su->large) {
        check_rs(c, WEFT_UINT8, WEFT_MAX, 2 * RING_CHUNK + 101, true);
        check_reduce(c, WEFT_FLOAT, WEFT_MIN, 2 * n * per4 + 13, 0, true);
        /* Streamed results: one element past the threshold, in place and
         * out of place. */
        check_allreduce(c, WEFT_FLOAT, WEFT_SUM, NT_MIN_BYTES / 4 + 1, false);
        check_allreduce(c, WEFT_INT32, WEFT_PROD, NT_MIN_BYTES / 4 + 3, true);
    }
    CHECK(!weft_comm_failed(c));
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

static void run(uint32_t n, weft_transport_choice t, bool large, const char *what)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = t;
    cfg.timeout_ms = 20000;
    suite su = {large};
    weft__test_comm_ranks_ok(n, &cfg, body, &su, 120000, what);
}

/* A rank that cannot allocate the scratch fails the communicator, so its
 * peers end with WEFT_EPEER at once rather than after the timeout, which
 * run_oom makes longer than CTest's: WEFT_EPEER naming rank 1 shows it, no
 * clock decides it. */
static int oom_body(weft_comm *c, void *arg)
{
    (void)arg;
    uint32_t me = weft_comm_rank(c);
    /* 64 KiB of floats: beyond the direct schedule, below the single-copy
     * one (coll_cma.c: 128 KiB on 3 ranks). */
    size_t count = 16384;
    float *v = calloc(count, sizeof *v);
    weft_diag d;
    weft_diag_clear(&d);
    if (me == 1)
        weft__alloc_fail_after(0);
    weft_err e = weft_allreduce(c, v, v, count, WEFT_FLOAT, WEFT_SUM, &d);
    weft__alloc_fail_after(-1);
    if (me == 1) {
        CHECK_ERR(e, WEFT_ENOMEM);
        CHECK_STR(d.msg, "comm: rank 1: out of memory for the ring's scratch");
    } else {
        CHECK_ERR(e, WEFT_EPEER);
        /* Rank 1 failed by itself, so every peer names it, also one that
         * saw only the abort of a peer that saw rank 1's. */
        int pid = 0;
        char want[128];
        if (sscanf(d.msg, "shm: rank 1 (pid %d)", &pid) != 1)
            pid = -1;
        snprintf(want, sizeof want, "shm: rank 1 (pid %d) failed: out of memory", pid);
        CHECK_STR(d.msg, want);
    }
    CHECK(weft_comm_failed(c));
    free(v);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

static void run_oom(void)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = WEFT_TRANSPORT_SHM;
    cfg.timeout_ms = 600000; /* longer than CTest's TIMEOUT: only detection ends it */
    /* As on 2 CPUs, whatever this host has: with a CPU per rank the
     * allreduce runs pipelined through the eager areas (coll_eager.c),
     * which needs no scratch. */
    cfg.cpus = 2;
    int codes[3];
    memset(codes, -1, sizeof codes);
    CHECK_INT(weft__test_comm_ranks(3, &cfg, oom_body, NULL, 1200000, codes, NULL), 0);
    for (uint32_t r = 0; r < 3; r++) {
        if (codes[r] != 0)
            fprintf(stderr, "scratch OOM: rank %u exited with %d\n", r, codes[r]);
        CHECK_INT(codes[r], 0);
    }
}

int main(void)
{
    run_oom();
    for (uint32_t n = 2; n <= 8; n++)
        run(n, WEFT_TRANSPORT_SHM, n <= 3, "shm");
    run(3, WEFT_TRANSPORT_TCP, false, "tcp");
    return weft_test_done();
}
