/* weft_reduce and weft_alltoall with forked ranks on shared memory and TCP:
 * every dtype and op, sizes 0, 1, primes and large (shared-memory slots
 * cycle, TCP messages split over connections), every root, in place and out
 * of place, compared byte for byte with a reference computed locally. */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"

/* Rank r's element i: -1, 0, 1 or 2, so that every sum, product, min and
 * max is exact in every type and independent of the order of combination
 * (integer products wrap identically in any order). */
static double val(weft_redop op, uint32_t r, size_t i)
{
    if (op == WEFT_PROD)
        return (r + i) % 3 == 0 ? 2 : ((r * 5 + i) % 7 == 0 ? -1 : 1);
    return (double)((r * 7 + i * 3) % 4) - 1;
}

static void fill(weft_dtype t, weft_redop op, void *buf, uint32_t r, size_t count)
{
    weft__test_fill(val, t, op, buf, r, count);
}

static void check_reduce(weft_comm *c, weft_dtype t, weft_redop op, size_t count, uint32_t root,
                         bool in_place)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t es = weft_dtype_size(t);
    unsigned char *s = malloc(count * es + 1), *r = malloc(count * es + 1);
    fill(t, op, s, me, count);
    memset(r, 0xa5, count * es + 1);
    weft_diag d;
    weft_diag_clear(&d);
    bool mine = me == root;
    void *out = in_place && mine ? s : (mine ? r : NULL); /* non-roots pass no recvbuf */
    weft_err e = weft_reduce(c, s, out, count, t, op, root, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: reduce %s %s: %s\n", me, weft_dtype_name(t), weft_redop_name(op),
                d.msg);
    if (mine) {
        size_t bad = weft__test_reduce_wrong(val, t, op, out, n, count);
        if (bad)
            fprintf(stderr, "reduce %s %s count %zu root %u: %zu wrong\n", weft_dtype_name(t),
                    weft_redop_name(op), count, root, bad);
        CHECK_INT(bad, 0);
        CHECK_INT(r[count * es], 0xa5); /* nothing past the end */
    }
    if (!in_place || !mine) { /* sendbuf untouched */
        unsigned char *orig = malloc(count * es + 1);
        fill(t, op, orig, me, count);
        CHECK(count == 0 || memcmp(orig, s, count * es) == 0);
        free(orig);
    }
    free(s);
    free(r);
}

/* Element i of the block rank `from` sends to rank `to`. */
static double a2a_val(uint32_t from, uint32_t to, size_t i)
{
    return (double)((from * 31 + to * 7 + i) % 101);
}

static void check_alltoall(weft_comm *c, weft_dtype t, size_t count, bool in_place)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t es = weft_dtype_size(t), total = count * n * es;
    unsigned char *s = malloc(total + 1), *r = malloc(total + 1), *want = malloc(total + 1);
    for (uint32_t p = 0; p < n; p++)
        for (size_t i = 0; i < count; i++) {
            weft_dtype_store(t, s, p * count + i, a2a_val(me, p, i));
            weft_dtype_store(t, want, p * count + i, a2a_val(p, me, i));
        }
    memset(r, 0x5a, total + 1);
    weft_diag d;
    weft_diag_clear(&d);
    unsigned char *out = in_place ? s : r;
    weft_err e = weft_alltoall(c, s, out, count, t, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: alltoall: %s\n", me, d.msg);
    size_t bad = 0;
    for (size_t i = 0; i < count * n; i++)
        bad += memcmp(out + i * es, want + i * es, es) != 0;
    if (bad)
        fprintf(stderr, "alltoall %s count %zu: %zu wrong\n", weft_dtype_name(t), count, bad);
    CHECK_INT(bad, 0);
    CHECK_INT(r[total], 0x5a);
    if (!in_place) {
        size_t changed = 0;
        for (uint32_t p = 0; p < n; p++)
            for (size_t i = 0; i < count; i++) {
                unsigned char one[8];
                weft_dtype_store(t, one, 0, a2a_val(me, p, i));
                changed += memcmp(s + (p * count + i) * es, one, es) != 0;
            }
        CHECK_INT(changed, 0);
    }
    free(s);
    free(r);
    free(want);
}

typedef struct suite {
    bool large;
} suite;

static int body(weft_comm *c, void *arg)
{
    const suite *su = arg;
    uint32_t n = weft_comm_size(c);
    for (int t = 0; t < WEFT__DTYPE_COUNT; t++) {
        for (int op = 0; op < WEFT__REDOP_COUNT; op++)
            check_reduce(c, (weft_dtype)t, (weft_redop)op, 13, (uint32_t)(t + op) % n,
                         (t + op) & 1);
        check_alltoall(c, (weft_dtype)t, 7, t & 1);
    }
    static const size_t counts[] = {0, 1, 2, 1009};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        for (uint32_t root = 0; root < n; root++)
            check_reduce(c, WEFT_INT32, WEFT_SUM, counts[k], root, root == 1);
        check_alltoall(c, WEFT_INT32, counts[k], false);
        check_alltoall(c, WEFT_UINT8, counts[k], true);
    }
    if (su->large) {
        check_reduce(c, WEFT_FLOAT, WEFT_SUM, (1u << 20) + 3, n - 1, false);
        check_reduce(c, WEFT_INT64, WEFT_MAX, (1u << 18) + 7, 0, true);
        check_alltoall(c, WEFT_INT32, (1u << 17) + 3, false);
        check_alltoall(c, WEFT_DOUBLE, (1u << 15) + 9, true);
    }
    /* Bad arguments fail before anything moves. */
    weft_diag d;
    weft_diag_clear(&d);
    int32_t v = 1;
    CHECK_ERR(weft_reduce(c, &v, &v, 1, WEFT_INT32, WEFT_SUM, n, &d), WEFT_EINVAL);
    char want[64];
    snprintf(want, sizeof want, "comm: root %u is not in 0 .. %u", n, n - 1);
    CHECK_STR(d.msg, want);
    CHECK_ERR(weft_reduce(c, &v, &v, 1, WEFT_INT32, (weft_redop)9, 0, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "comm: invalid reduction operator 9");
    CHECK_ERR(weft_alltoall(c, &v, &v, 1, (weft_dtype)99, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "comm: invalid dtype 99");
    CHECK(!weft_comm_failed(c));
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

static void run(uint32_t n, weft_transport_choice t, bool large, const char *what)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = t;
    cfg.timeout_ms = 8000;
    suite su = {large};
    weft__test_comm_ranks_ok(n, &cfg, body, &su, 30000, what);
}

/* One rank: both are local copies (and reductions of one input). */
static void test_single(void)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.addr = "127.0.0.1:0";
    weft_comm *c = NULL;
    CHECK_ERR(weft_comm_init(&cfg, &c, NULL), WEFT_OK);
    if (!c)
        return;
    int16_t v[3] = {4, -5, 6}, w[3] = {0, 0, 0};
    CHECK_ERR(weft_reduce(c, v, w, 3, WEFT_INT16, WEFT_MIN, 0, NULL), WEFT_OK);
    CHECK(memcmp(v, w, sizeof v) == 0);
    memset(w, 0, sizeof w);
    CHECK_ERR(weft_alltoall(c, v, w, 3, WEFT_INT16, NULL), WEFT_OK);
    CHECK(memcmp(v, w, sizeof v) == 0);
    CHECK_ERR(weft_alltoall(c, v, v, 3, WEFT_INT16, NULL), WEFT_OK);
    CHECK_INT(v[1], -5);
    weft_comm_free(c);
}

int main(void)
{
    test_single();
    run(2, WEFT_TRANSPORT_SHM, true, "shm");
    run(3, WEFT_TRANSPORT_SHM, false, "shm");
    run(8, WEFT_TRANSPORT_SHM, true, "shm");
    run(2, WEFT_TRANSPORT_TCP, true, "tcp");
    run(5, WEFT_TRANSPORT_TCP, false, "tcp");
    return weft_test_done();
}
