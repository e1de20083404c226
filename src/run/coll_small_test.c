/* The eager allreduce (coll_small.c), with 2 to 8 forked ranks on shared
 * memory.
 *
 * For every dtype and op: counts 1, a prime, the largest count the eager
 * path takes for the rank count (found through weft__small_allreduce_fits,
 * which the test checks against the documented limits) and one more, on
 * private memory and on weft_comm_alloc memory, in place and out of place;
 * byte-exact against a reference reduced locally in rank order, guard
 * bytes untouched, inputs unchanged, and the path each call took
 * (weft__region_small_calls / _fast_calls). 300 consecutive calls with
 * sizes, ops and buffers changing every call and the eager size mixed
 * with the single-pass and ordinary ones (the slots alternate, so each is
 * reused 150 times while peers may still be one call behind). Non-integer
 * float sums bit-identical on every rank. Ranks that pass different sizes
 * get WEFT_EINVAL, all alike, also when one of them takes another path,
 * and the communicator stays usable. A rank killed between eager calls
 * makes the others return WEFT_EPEER within 3 s. Over TCP nothing runs
 * eager. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/testing.h"
#include "run/coll_small.h"
#include "run/comm_internal.h"
#include "run/testing_ranks.h"
#include "run/transport/shm/region.h"
#include "weft/comm.h"

/* Bytes of each buffer: more than any eager call. */
#define BUF_BYTES ((size_t)256 << 10)

enum { PATH_ORDINARY, PATH_SHARED, PATH_SMALL };

typedef struct bufs {
    unsigned char *priv_s, *priv_r; /* malloc */
    unsigned char *sh_s, *sh_r;     /* weft_comm_alloc */
} bufs;

/* The largest count of es bytes the eager path takes (0 when none). */
static size_t edge_count(weft_comm *c, size_t es)
{
    size_t k = 0;
    while (weft__small_allreduce_fits(c, (k + 1) * es))
        k++;
    return k;
}

/* One allreduce of count elements from s into r (r == s: in place), which
 * must take `path`; checked byte for byte. */
static void one(weft_comm *c, unsigned char *s, unsigned char *r, weft_dtype t, weft_redop op,
                size_t count, int path)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t es = weft_dtype_size(t), bytes = count * es;
    weft__test_fill(weft__test_small, t, op, s, me, count);
    s[bytes] = 0x5a;
    if (r != s)
        memset(r, 0xa5, bytes + 1);
    uint64_t small0 = weft__region_small_calls(c), fast0 = weft__region_fast_calls(c);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_allreduce(c, s, r, count, t, op, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: allreduce: %s\n", me, d.msg);
    CHECK_INT(weft__region_small_calls(c) - small0, path == PATH_SMALL);
    CHECK_INT(weft__region_fast_calls(c) - fast0, path == PATH_SHARED);
    size_t bad = weft__test_reduce_wrong(weft__test_small, t, op, r, n, count);
    if (bad)
        fprintf(stderr, "rank %u of %u: %s %s count %zu %s: %zu wrong\n", me, n, weft_dtype_name(t),
                weft_redop_name(op), count, r == s ? "in place" : "out of place", bad);
    CHECK_INT(bad, 0);
    CHECK_INT(r[bytes], r == s ? 0x5a : 0xa5);
    if (r != s) {
        unsigned char *orig = malloc(bytes + 1);
        weft__test_fill(weft__test_small, t, op, orig, me, count);
        CHECK(memcmp(orig, s, bytes) == 0);
        free(orig);
    }
}

/* The path a call of count elements on private (shared = false) or
 * weft_comm_alloc memory must take. */
static int path_of(weft_comm *c, size_t bytes, bool shared)
{
    if (bytes == 0)
        return PATH_ORDINARY;
    if (weft__small_allreduce_fits(c, bytes))
        return PATH_SMALL;
    return shared ? PATH_SHARED : PATH_ORDINARY;
}

/* The limits as docs/run.md states them: (size - 1) x bytes at most 64
 * KiB with more ranks than CPUs, else 512 on 2 ranks and 8 KiB on more,
 * and never more than the eager area. The CPUs are the host's as the
 * communicator counts them (WEFT_CPUS for the CTest run as on a 64-CPU
 * host). */
static void check_limits(weft_comm *c)
{
    uint32_t n = weft_comm_size(c);
    bool over = n > c->host_cpus;
    CHECK(weft__region_oversubscribed(c) == over);
    size_t limit = (over ? (size_t)64 << 10 : n == 2 ? 512 : (size_t)8 << 10) / (n - 1);
    if (limit > weft__region_eager_bytes(c))
        limit = weft__region_eager_bytes(c);
    CHECK_INT(edge_count(c, 1), limit);
    CHECK(weft__region_eager_bytes(c) >= ((size_t)4 << 10));
}

static void sweep(weft_comm *c, const bufs *b)
{
    static const weft_dtype types[] = {WEFT_INT8,  WEFT_UINT8,    WEFT_INT16, WEFT_UINT16,
                                       WEFT_INT32, WEFT_UINT32,   WEFT_INT64, WEFT_UINT64,
                                       WEFT_HALF,  WEFT_BFLOAT16, WEFT_FLOAT, WEFT_DOUBLE};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        weft_dtype t = types[k];
        size_t es = weft_dtype_size(t), edge = edge_count(c, es);
        size_t counts[] = {1, 7, 13, edge > 2 ? edge - 1 : 1, edge, edge + 1};
        for (int op = 0; op < WEFT__REDOP_COUNT; op++) {
            for (size_t j = 0; j < sizeof counts / sizeof counts[0]; j++) {
                size_t count = counts[j];
                bool shared = (j + (size_t)op) % 2 == 0, in_place = (j + k) % 2 == 0;
                unsigned char *s = shared ? b->sh_s : b->priv_s;
                unsigned char *r = in_place ? s : shared ? b->sh_r : b->priv_r;
                one(c, s, r, t, (weft_redop)op, count, path_of(c, count * es, shared));
            }
        }
    }
}

/* 300 calls in a row, each with another size, op, buffer kind and
 * placement; eager sizes mixed with larger ones. */
static void consecutive(weft_comm *c, const bufs *b)
{
    size_t edge = edge_count(c, 4);
    for (int i = 0; i < 300; i++) {
        size_t count = i % 5 == 4 ? edge + 1 + (size_t)i * 7 % 1000 : 1 + (size_t)i * 37 % edge;
        bool shared = i % 3 == 0, in_place = i % 2 == 1;
        weft_dtype t = i % 4 == 0 ? WEFT_FLOAT : WEFT_INT32;
        unsigned char *s = shared ? b->sh_s : b->priv_s;
        unsigned char *r = in_place ? s : shared ? b->sh_r : b->priv_r;
        one(c, s, r, t, (weft_redop)(i % WEFT__REDOP_COUNT), count, path_of(c, count * 4, shared));
    }
}

/* Non-integer floats: every rank ends with the same bits. */
static void identical(weft_comm *c, unsigned char *buf)
{
    uint32_t me = weft_comm_rank(c);
    size_t count = edge_count(c, 4);
    float *v = (float *)(void *)buf;
    for (size_t i = 0; i < count; i++)
        v[i] = 1.0f / (float)(me + 3) + (float)i * 1e-3f;
    uint64_t small0 = weft__region_small_calls(c);
    CHECK_ERR(weft_allreduce(c, v, v, count, WEFT_FLOAT, WEFT_SUM, NULL), WEFT_OK);
    CHECK_INT(weft__region_small_calls(c) - small0, 1);
    CHECK_ERR(weft_comm_agree(c, "the float sums", v, count * sizeof *v, NULL), WEFT_OK);
}

/* Ranks passing different sizes are told so, all alike. */
static void disagree(weft_comm *c, const bufs *b)
{
    uint32_t me = weft_comm_rank(c);
    size_t edge = edge_count(c, 4);
    weft_diag d;
    char want[160];
    /* Both eager. */
    weft_diag_clear(&d);
    size_t mine = me == 0 ? edge : 1;
    CHECK_ERR(weft_allreduce(c, b->priv_s, b->priv_r, mine, WEFT_INT32, WEFT_SUM, &d), WEFT_EINVAL);
    /* The same message on every rank (call_agree.h). */
    snprintf(want, sizeof want,
             "comm: ranks disagree on the count of allreduce: rank 0 has %zu, rank 1 has 1", edge);
    CHECK_STR(d.msg, want);
    /* Rank 0 eager, the others on the single-pass path (shared buffers). */
    weft_diag_clear(&d);
    mine = me == 0 ? 1 : edge + 1;
    CHECK_ERR(weft_allreduce(c, b->sh_s, b->sh_r, mine, WEFT_INT32, WEFT_SUM, &d), WEFT_EINVAL);
    snprintf(want, sizeof want,
             "comm: ranks disagree on the count of allreduce: rank 0 has 1, rank 1 has %zu",
             edge + 1);
    CHECK_STR(d.msg, want);
    /* Rank 0 eager allreduce, the others allgather on shared buffers. */
    weft_diag_clear(&d);
    weft_err e = me == 0 ? weft_allreduce(c, b->sh_s, b->sh_r, 3, WEFT_INT32, WEFT_SUM, &d)
                         : weft_allgather(c, b->sh_s, b->sh_r, 3, WEFT_INT32, &d);
    CHECK_ERR(e, WEFT_EINVAL);
    CHECK_STR(d.msg,
              "comm: ranks disagree on the collective: rank 0 called allreduce, rank 1 allgather");
    CHECK(!weft_comm_failed(c));
    /* Still in step. */
    one(c, b->priv_s, b->priv_r, WEFT_INT32, WEFT_SUM, edge, PATH_SMALL);
}

static int body(weft_comm *c, void *arg)
{
    (void)arg;
    uint32_t me = weft_comm_rank(c);
    CHECK(weft__region_records(c));
    bufs b = {.priv_s = malloc(BUF_BYTES + 64), .priv_r = malloc(BUF_BYTES + 64)};
    void *ps = NULL, *pr = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_comm_alloc(c, BUF_BYTES + 64, &ps, &d) ||
        weft_comm_alloc(c, BUF_BYTES + 64, &pr, &d)) {
        fprintf(stderr, "rank %u: weft_comm_alloc: %s\n", me, d.msg);
        return 90;
    }
    b.sh_s = ps;
    b.sh_r = pr;
    check_limits(c);
    /* Count 0 does nothing and takes no path. */
    uint64_t small0 = weft__region_small_calls(c);
    CHECK_ERR(weft_allreduce(c, b.priv_s, b.priv_r, 0, WEFT_INT32, WEFT_SUM, NULL), WEFT_OK);
    CHECK_INT(weft__region_small_calls(c), small0);
    sweep(c, &b);
    consecutive(c, &b);
    identical(c, b.priv_s);
    identical(c, b.sh_s);
    disagree(c, &b);
    CHECK(!weft_comm_failed(c));
    free(b.priv_s);
    free(b.priv_r);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

/* Over TCP there are no control pages before an allocation, and nothing
 * runs eager after one either. */
static int tcp_body(weft_comm *c, void *arg)
{
    (void)arg;
    CHECK(!weft__region_records(c));
    CHECK(!weft__small_allreduce_fits(c, 4));
    unsigned char *s = malloc(4096), *r = malloc(4096);
    void *p = NULL;
    CHECK_ERR(weft_comm_alloc(c, 4096, &p, NULL), WEFT_OK);
    CHECK(!weft__small_allreduce_fits(c, 4));
    one(c, s, r, WEFT_INT32, WEFT_SUM, 13, PATH_ORDINARY);
    one(c, p, p, WEFT_DOUBLE, WEFT_MAX, 7, PATH_ORDINARY);
    CHECK_INT(weft__region_small_calls(c), 0);
    free(s);
    free(r);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

enum { KILL_RANKS = 3, VICTIM = 2, CODE_BASE = 50 };

/* Eager allreduces until one fails; the victim kills itself after 50.
 * Exit code CODE_BASE + the error, 92 when no call ran eager. No clock
 * decides the result: the communicator's timeout is longer than CTest's
 * (run_kill), so only the detection of the death can end the loop, and
 * WEFT_EPEER (not WEFT_ETIMEDOUT) says that it did. */
static int kill_body(weft_comm *c, void *arg)
{
    (void)arg;
    int32_t v[8] = {0};
    if (!weft__small_allreduce_fits(c, sizeof v))
        return 92;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = WEFT_OK;
    for (int it = 0; !e; it++) {
        if (it == 50 && weft_comm_rank(c) == VICTIM)
            kill(getpid(), SIGKILL);
        e = weft_allreduce(c, v, v, 8, WEFT_INT32, WEFT_MAX, &d);
    }
    if (e)
        fprintf(stderr, "rank %u (expected): %s: %s\n", weft_comm_rank(c), weft_err_name(e), d.msg);
    if (weft__region_small_calls(c) < 50)
        return 92;
    return CODE_BASE + (int)e;
}

static void run_kill(void)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = WEFT_TRANSPORT_SHM;
    cfg.timeout_ms = 600000; /* longer than CTest's TIMEOUT: only detection ends it */
    int codes[KILL_RANKS];
    CHECK_INT(weft__test_comm_ranks(KILL_RANKS, &cfg, kill_body, NULL, 1200000, codes, NULL), 0);
    for (uint32_t r = 0; r < KILL_RANKS; r++)
        CHECK_INT(codes[r], r == VICTIM ? 128 + SIGKILL : CODE_BASE + (int)WEFT_EPEER);
}

static void run(uint32_t n, weft_transport_choice t, weft__comm_body fn, const char *what)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = t;
    cfg.timeout_ms = 20000;
    weft__test_comm_ranks_ok(n, &cfg, fn, NULL, 120000, what);
}

int main(void)
{
    for (uint32_t n = 2; n <= 8; n++)
        run(n, WEFT_TRANSPORT_SHM, body, "eager allreduce, shm");
    run(3, WEFT_TRANSPORT_TCP, tcp_body, "eager allreduce, tcp");
    run_kill();
    return weft_test_done();
}
