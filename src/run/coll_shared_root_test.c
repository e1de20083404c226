/* Single-pass broadcast, reduce and all-to-all on weft_comm_alloc memory
 * (coll_shared_root.c, coll_shared_a2a.c), with 2 to 8 forked ranks on
 * shared memory.
 *
 * Every call is checked byte for byte: broadcast and all-to-all against
 * the values every rank filled in, reduce against a reference reduced
 * locally in rank order (the single-pass order) with fractional
 * floating-point inputs, so that another order of combination would show;
 * and with small integers against the ordinary schedule's result on
 * ordinary memory. Guard bytes after every buffer must stay, inputs must be
 * unchanged, and weft__region_fast_calls must show that the call ran
 * single-pass (or did not, for the fallbacks and broadcasts below
 * WEFT__SHARED_BCAST_MIN_BYTES). Reduce: every dtype and op,
 * roots rotating; counts 1, 2, primes and several tiles per rank, every
 * root, in place and out of place. Fallbacks: a buffer in ordinary memory
 * on one rank, buffers in different allocations; a second round of
 * records when some rank's buffers do not show that it holds the
 * allocations (a non-root of reduce passing NULL). Ranks that disagree on
 * the root or the size fail on every rank with a message naming both.
 * Over TCP the memory is allocated but every call runs the ordinary way.
 * weft_comm_alloc under allocation failure (see oom_main). */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "run/clock.h"
#include "run/coll_shared.h"
#include "run/coll_small.h"
#include "run/comm_internal.h"
#include "run/testing_ranks.h"
#include "run/transport/shm/region.h"
#include "weft/comm.h"

/* Bytes of each test buffer (the largest call uses less). */
#define BUF_BYTES ((size_t)3 << 20)

typedef struct bufs {
    unsigned char *a, *b;      /* two weft_comm_alloc allocations */
    unsigned char *oa, *ob;    /* ordinary memory */
    unsigned char *want, *got; /* scratch for expected and saved results */
} bufs;

static bool is_float(weft_dtype t)
{
    return t == WEFT_HALF || t == WEFT_BFLOAT16 || t == WEFT_FLOAT || t == WEFT_DOUBLE;
}

/* Fractional inputs for float types (the result then depends on the order
 * of combination), small integers otherwise. */
static double frac(weft_redop op, uint32_t r, size_t i)
{
    double v = weft__test_small(op, r, i);
    return op == WEFT_PROD ? v * (1.0 + 0.0625 * (double)((r + i) % 5))
                           : v + 0.1 * (double)(r + 1) + 0.01 * (double)(i % 7);
}

/* Rank r's element i of an all-to-all or broadcast input. */
static double ident(weft_redop op, uint32_t r, size_t i)
{
    (void)op;
    return (double)((r * 37 + i * 11) % 251) - 120.0;
}

static void fast_check(weft_comm *c, uint64_t before, bool fast, const char *what)
{
    uint64_t ran = weft__region_fast_calls(c) - before;
    if (ran != (fast ? 1u : 0u))
        fprintf(stderr, "rank %u: %s ran single-pass %llu times, expected %d\n", weft_comm_rank(c),
                what, (unsigned long long)ran, fast ? 1 : 0);
    CHECK_INT(ran, fast ? 1 : 0);
}

/* One reduce of count elements from s into r on the root (r == s: in
 * place). value gives the inputs; the root's result is left in r. */
static void reduce(weft_comm *c, unsigned char *s, unsigned char *r, weft_dtype t, weft_redop op,
                   size_t count, uint32_t root, weft__test_value value, bool fast)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t bytes = count * weft_dtype_size(t);
    weft__test_fill(value, t, op, s, me, count);
    s[bytes] = 0x5a;
    if (r && r != s)
        memset(r, 0xa5, bytes + 1);
    uint64_t before = weft__region_fast_calls(c);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_reduce(c, s, r, count, t, op, root, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: reduce: %s\n", me, d.msg);
    fast_check(c, before, fast && !weft__small_fits(c, WEFT_COLL_REDUCE, count, weft_dtype_size(t)),
               "reduce");
    if (me == root) {
        size_t bad = weft__test_reduce_wrong(value, t, op, r, n, count);
        if (bad)
            fprintf(stderr, "rank %u of %u: reduce %s %s count %zu root %u %s: %zu wrong\n", me, n,
                    weft_dtype_name(t), weft_redop_name(op), count, root,
                    r == s ? "in place" : "out of place", bad);
        CHECK_INT(bad, 0);
    }
    CHECK_INT(s[bytes], 0x5a);
    if (r && r != s)
        CHECK_INT(r[bytes], 0xa5);
    if (r && r != s && me != root) { /* a non-root's recvbuf is not written */
        size_t i = 0;
        while (i < bytes && r[i] == 0xa5)
            i++;
        CHECK_INT(i, bytes);
    }
    if (r != s || me != root) {
        unsigned char *orig = malloc(bytes + 1);
        weft__test_fill(value, t, op, orig, me, count);
        CHECK(memcmp(orig, s, bytes) == 0);
        free(orig);
    }
}

/* One broadcast of count elements from root's s into r (r == s on the
 * root: in place); every rank's r must hold root's input. */
static void broadcast(weft_comm *c, unsigned char *s, unsigned char *r, weft_dtype t, size_t count,
                      uint32_t root, bool fast)
{
    uint32_t me = weft_comm_rank(c);
    size_t bytes = count * weft_dtype_size(t);
    if (me == root)
        weft__test_fill(ident, t, WEFT_SUM, s, root, count);
    if (me != root && r == s)
        memset(r, 0xa5, bytes); /* one buffer, as MPI_Bcast */
    if (me == root || r == s)
        s[bytes] = 0x5a;
    if (r != s)
        memset(r, 0xa5, bytes + 1);
    uint64_t before = weft__region_fast_calls(c);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_broadcast(c, s, r, count, t, root, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: broadcast: %s\n", me, d.msg);
    fast_check(c, before,
               fast && !weft__small_fits(c, WEFT_COLL_BROADCAST, count, weft_dtype_size(t)),
               "broadcast");
    unsigned char *want = malloc(bytes + 1);
    weft__test_fill(ident, t, WEFT_SUM, want, root, count);
    if (memcmp(want, r, bytes) != 0)
        fprintf(stderr, "rank %u: broadcast %s count %zu root %u %s: wrong\n", me,
                weft_dtype_name(t), count, root, r == s ? "in place" : "out of place");
    CHECK(memcmp(want, r, bytes) == 0);
    CHECK_INT(r[bytes], r == s ? 0x5a : 0xa5);
    if (me == root && r != s)
        CHECK(memcmp(want, s, bytes) == 0 && s[bytes] == 0x5a);
    free(want);
}

/* One all-to-all of count elements per pair (r == s: in place). */
static void alltoall(weft_comm *c, unsigned char *s, unsigned char *r, weft_dtype t, size_t count,
                     bool fast)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t block = count * weft_dtype_size(t), total = block * n;
    /* Block q of rank me's input: rank me's values from element q*count. */
    weft__test_fill(ident, t, WEFT_SUM, s, me, count * n);
    s[total] = 0x5a;
    if (r != s)
        memset(r, 0xa5, total + 1);
    uint64_t before = weft__region_fast_calls(c);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_alltoall(c, s, r, count, t, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: alltoall: %s\n", me, d.msg);
    fast_check(c, before,
               fast && !weft__small_fits(c, WEFT_COLL_ALLTOALL, count, weft_dtype_size(t)),
               "alltoall");
    unsigned char *want = malloc(total + 1);
    size_t bad = 0;
    for (uint32_t q = 0; q < n; q++) {
        weft__test_fill(ident, t, WEFT_SUM, want, q, count * n);
        bad += memcmp(want + (size_t)me * block, r + (size_t)q * block, block) != 0;
    }
    if (bad)
        fprintf(stderr, "rank %u of %u: alltoall %s count %zu %s: %zu blocks wrong\n", me, n,
                weft_dtype_name(t), count, r == s ? "in place" : "out of place", bad);
    CHECK_INT(bad, 0);
    CHECK_INT(r[total], r == s ? 0x5a : 0xa5);
    if (r != s) {
        weft__test_fill(ident, t, WEFT_SUM, want, me, count * n);
        CHECK(memcmp(want, s, total) == 0);
    }
    free(want);
}

/* The same reduce single-pass and on ordinary memory: the root's results
 * must be byte-identical. */
static void reduce_vs_ordinary(weft_comm *c, bufs *b, weft_dtype t, weft_redop op, size_t count,
                               uint32_t root, bool in_place)
{
    size_t bytes = count * weft_dtype_size(t);
    reduce(c, b->a, in_place ? b->a : b->b, t, op, count, root, weft__test_small, true);
    memcpy(b->got, in_place ? b->a : b->b, bytes);
    reduce(c, b->oa, in_place ? b->oa : b->ob, t, op, count, root, weft__test_small, false);
    if (weft_comm_rank(c) == root)
        CHECK(memcmp(b->got, in_place ? b->oa : b->ob, bytes) == 0);
}

static void reduces(weft_comm *c, bufs *b)
{
    uint32_t n = weft_comm_size(c);
    /* Every dtype and op at a prime count, fractional floats. */
    for (int t = 0; t < WEFT__DTYPE_COUNT; t++)
        for (int op = 0; op < WEFT__REDOP_COUNT; op++) {
            uint32_t root = (uint32_t)(t + op) % n;
            bool in_place = (t + op) % 2 == 0;
            weft__test_value v = is_float((weft_dtype)t) ? frac : weft__test_small;
            reduce(c, b->a, in_place ? b->a : b->b, (weft_dtype)t, (weft_redop)op, 13, root, v,
                   true);
        }
    /* Sizes from one element to several tiles per rank with a ragged end,
     * every root. */
    size_t counts[] = {1, 2, 1009, (n * (size_t)(3 * 512 + 40) + 7) / 4, 100003};
    for (size_t j = 0; j < sizeof counts / sizeof counts[0]; j++)
        for (uint32_t root = 0; root < n; root++) {
            bool in_place = (j + root) % 2 == 1;
            weft_dtype t = j % 2 ? WEFT_FLOAT : WEFT_INT32;
            weft_redop op = (weft_redop)((j + root) % WEFT__REDOP_COUNT);
            reduce(c, b->a, in_place ? b->a : b->b, t, op, counts[j], root,
                   t == WEFT_FLOAT ? frac : weft__test_small, true);
        }
    /* Byte-identical to the ordinary schedule (with inputs exact in every
     * order of combination). */
    for (uint32_t root = 0; root < n; root++)
        reduce_vs_ordinary(c, b, root % 2 ? WEFT_DOUBLE : WEFT_INT16,
                           (weft_redop)(root % WEFT__REDOP_COUNT), 1009, root, root % 2 == 0);
    reduce_vs_ordinary(c, b, WEFT_BFLOAT16, WEFT_SUM, 300007, n - 1, false);
    /* Count 0 does nothing. */
    b->b[0] = 0x77;
    CHECK_ERR(weft_reduce(c, b->a, b->b, 0, WEFT_INT32, WEFT_SUM, 0, NULL), WEFT_OK);
    CHECK_INT(b->b[0], 0x77);
}

/* Broadcasts of at least this many elements of 1 byte run single-pass. */
#define BC WEFT__SHARED_BCAST_MIN_BYTES

static void broadcasts(weft_comm *c, bufs *b)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    /* Below the threshold the ordinary chain runs; from it single-pass: the
     * threshold itself, primes above it in bytes and in doubles (one byte
     * below it: the dispatch test in fallbacks()). */
    size_t counts[] = {1, 13, 1009, 4099, BC, 1048583, 131101};
    for (size_t j = 0; j < sizeof counts / sizeof counts[0]; j++)
        for (uint32_t root = 0; root < n; root++) {
            /* Every root below the threshold and at it, one above. */
            if (j > 4 && root != j % n)
                continue;
            bool in_place = (j + root) % 2 == 0;
            weft_dtype t = j == 6 || j == 1 ? WEFT_DOUBLE : WEFT_INT8;
            size_t bytes = counts[j] * weft_dtype_size(t);
            broadcast(c, b->a, in_place && me == root ? b->a : b->b, t, counts[j], root,
                      bytes >= BC);
        }
    /* Byte-identical to the ordinary schedule. */
    broadcast(c, b->a, b->b, WEFT_HALF, 600011, n - 1, true);
    memcpy(b->got, b->b, 600011 * 2);
    broadcast(c, b->oa, b->ob, WEFT_HALF, 600011, n - 1, false);
    CHECK(memcmp(b->got, b->ob, 600011 * 2) == 0);
    /* The root's recvbuf in ordinary memory: the root fills it itself. */
    broadcast(c, b->a, me == 0 ? b->ob : b->b, WEFT_INT32, 300007, 0, true);
    /* One buffer on every rank, as MPI_Bcast. */
    broadcast(c, b->a, b->a, WEFT_UINT16, BC / 2 + 1, 0, true);
    /* Everything in one allocation. */
    broadcast(c, b->a, b->a + BUF_BYTES / 2, WEFT_INT32, BC / 4, n - 1, true);
    CHECK_ERR(weft_broadcast(c, b->a, b->b, 0, WEFT_INT32, 0, NULL), WEFT_OK);
}

static void alltoalls(weft_comm *c, bufs *b)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    static const weft_dtype types[] = {WEFT_INT8,  WEFT_UINT8,    WEFT_INT16, WEFT_UINT16,
                                       WEFT_INT32, WEFT_UINT32,   WEFT_INT64, WEFT_UINT64,
                                       WEFT_HALF,  WEFT_BFLOAT16, WEFT_FLOAT, WEFT_DOUBLE};
    /* Every type, half of the counts each (in place and out of place). */
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        size_t counts[] = {1, 2, 13, 1009};
        for (size_t j = k % 2; j < sizeof counts / sizeof counts[0]; j += 2) {
            bool in_place = (j + k / 2) % 2 == 0;
            alltoall(c, b->a, in_place ? b->a : b->b, types[k], counts[j], true);
        }
    }
    /* Large: several work-area pieces per half block, in place (the swap
     * through the work area) and out of place. */
    size_t big = BUF_BYTES / n / 8 - 3;
    alltoall(c, b->a, b->a, WEFT_DOUBLE, big, true);
    alltoall(c, b->a, b->b, WEFT_DOUBLE, big, true);
    /* Some ranks in place, others not (every recvbuf in one allocation). */
    alltoall(c, b->a, me % 2 ? b->a : b->a + BUF_BYTES / 2, WEFT_INT32, 20011 / n, true);
    alltoall(c, b->a, me == 0 ? b->a : b->a + BUF_BYTES / 2, WEFT_UINT8, 3001, true);
    /* Byte-identical to the ordinary schedule. */
    alltoall(c, b->a, b->b, WEFT_UINT16, 777, true);
    memcpy(b->got, b->b, 777 * 2 * n);
    alltoall(c, b->oa, b->ob, WEFT_UINT16, 777, false);
    CHECK(memcmp(b->got, b->ob, 777 * 2 * n) == 0);
    CHECK_ERR(weft_alltoall(c, b->a, b->b, 0, WEFT_INT32, NULL), WEFT_OK);
}

/* Buffers outside weft memory on one rank, or in different allocations:
 * the ordinary schedule on every rank, with the same results. And a
 * second round of records where a rank's buffers do not show what it
 * holds. */
static void fallbacks(weft_comm *c, bufs *b)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    bool last = me == n - 1;
    reduce(c, last ? b->oa : b->a, b->b, WEFT_INT32, WEFT_SUM, 1009, 0, weft__test_small, false);
    reduce(c, b->a, me == 0 ? b->ob : b->b, WEFT_INT32, WEFT_MAX, 1009, 0, weft__test_small, false);
    broadcast(c, b->a, last ? b->ob : b->b, WEFT_INT32, BC / 4, 0, false);
    broadcast(c, me == 0 ? b->oa : b->a, b->b, WEFT_INT32, BC / 4, 0, false);
    broadcast(c, b->a, b->b, WEFT_INT8, BC - 1, n - 1, false);
    /* Root's sendbuf in a, the others' recvbuf in a or b by rank. */
    broadcast(c, b->a, me % 2 ? b->a + BUF_BYTES / 2 : b->b, WEFT_INT32, BC / 4, 0, n == 2);
    alltoall(c, last ? b->oa : b->a, b->b, WEFT_INT32, 101, false);
    alltoall(c, b->a, last ? b->ob : b->b, WEFT_INT32, 101, false);
    alltoall(c, b->a, me == 0 ? b->a : b->b, WEFT_INT32, 101, false);
    /* Non-roots pass NULL (reduce) or ordinary memory (broadcast's
     * sendbuf): nothing shows that they hold the root's recvbuf's
     * allocation, the second round says they do. */
    reduce(c, b->a, me == 1 ? b->b : NULL, WEFT_INT64, WEFT_SUM, 4097, 1, weft__test_small, true);
    broadcast(c, me == 0 ? b->a : b->oa, b->b, WEFT_FLOAT, BC / 4 + 3, 0, true);
}

/* Ranks that disagree on the root or the size fail alike. */
static void disagreements(weft_comm *c, bufs *b)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    weft_diag d;
    char want[160];
    weft_diag_clear(&d);
    weft_err e = weft_broadcast(c, b->a, b->b, BC / 4, WEFT_INT32, me == n - 1 ? 1 : 0, &d);
    CHECK_ERR(e, WEFT_EINVAL);
    /* The same message on every rank (call_agree.h). */
    snprintf(want, sizeof want,
             "comm: ranks disagree on the root of broadcast: rank 0 has 0, rank %u has 1", n - 1);
    CHECK_STR(d.msg, want);
    weft_diag_clear(&d);
    e = weft_reduce(c, b->a, b->b, me == 1 ? 101 : 100, WEFT_INT32, WEFT_SUM, 0, &d);
    CHECK_ERR(e, WEFT_EINVAL);
    CHECK_STR(d.msg, "comm: ranks disagree on the count of reduce: rank 0 has 100, rank 1 has 101");
    weft_diag_clear(&d);
    e = me == 0 ? weft_alltoall(c, b->a, b->b, 10, WEFT_INT32, &d)
                : weft_reduce(c, b->a, b->b, 10 * n, WEFT_INT32, WEFT_SUM, 0, &d);
    CHECK_ERR(e, WEFT_EINVAL);
    CHECK_STR(d.msg,
              "comm: ranks disagree on the collective: rank 0 called alltoall, rank 1 reduce");
    CHECK(!weft_comm_failed(c));
    /* Still usable. */
    reduce(c, b->a, b->b, WEFT_INT32, WEFT_SUM, 17, n - 1, weft__test_small, true);
}

static int body(weft_comm *c, void *arg)
{
    (void)arg;
    uint32_t me = weft_comm_rank(c);
    void *pa = NULL, *pb = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_comm_alloc(c, BUF_BYTES + 64, &pa, &d) ||
        weft_comm_alloc(c, BUF_BYTES + 64, &pb, &d)) {
        fprintf(stderr, "rank %u: weft_comm_alloc: %s\n", me, d.msg);
        return 90;
    }
    bufs b = {pa, pb, malloc(BUF_BYTES + 64), malloc(BUF_BYTES + 64), NULL, malloc(BUF_BYTES)};
    if (!b.oa || !b.ob || !b.got)
        return 91;
    reduces(c, &b);
    broadcasts(c, &b);
    alltoalls(c, &b);
    fallbacks(c, &b);
    disagreements(c, &b);
    free(b.oa);
    free(b.ob);
    free(b.got);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

/* Over TCP the memory is allocated, but every call takes the ordinary
 * schedule (no record is even exchanged). */
static int tcp_body(weft_comm *c, void *arg)
{
    (void)arg;
    void *pa = NULL, *pb = NULL;
    if (weft_comm_alloc(c, BUF_BYTES + 64, &pa, NULL) ||
        weft_comm_alloc(c, BUF_BYTES + 64, &pb, NULL))
        return 90;
    unsigned char *a = pa, *b = pb;
    reduce(c, a, b, WEFT_FLOAT, WEFT_SUM, 1009, 1, weft__test_small, false);
    reduce(c, a, a, WEFT_INT32, WEFT_MAX, 1009, 0, weft__test_small, false);
    broadcast(c, a, b, WEFT_INT32, BC / 4, 2, false);
    alltoall(c, a, b, WEFT_INT16, 1009, false);
    alltoall(c, a, a, WEFT_INT16, 1009, false);
    CHECK_INT(weft__region_fast_calls(c), 0);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

int main(void)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = WEFT_TRANSPORT_SHM;
    cfg.timeout_ms = 20000;
    for (uint32_t n = 2; n <= 8; n++) {
        int64_t t0 = weft__now_ns();
        weft__test_comm_ranks_ok(n, &cfg, body, NULL, 120000, "single-pass rooted, shm");
        printf("%u ranks: %.2f s\n", n, (double)(weft__now_ns() - t0) / 1e9);
    }
    cfg.transport = WEFT_TRANSPORT_TCP;
    weft__test_comm_ranks_ok(3, &cfg, tcp_body, NULL, 120000, "single-pass rooted, tcp");
    return weft_test_done();
}
