/* Communicators over shared memory and TCP on loopback, with forked ranks:
 * the ring collectives compared element by element with locally computed
 * references (sizes 0, 1, a prime, and large enough to cycle the shared
 * memory slots and split TCP messages over connections), agreement checks,
 * point-to-point messages of the wrong length, and configuration errors. */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "run/half.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"

static const size_t counts[] = {0, 1, 1009, (1u << 20) + 3};

static int32_t ival(uint32_t rank, size_t i)
{
    return (int32_t)(rank * 1000003u + (uint32_t)i * 7u) - 5000;
}

/* Small integers, so every sum is exact in any order. */
static float fval(uint32_t rank, size_t i)
{
    return (float)((rank + 1) * (i % 17)) - 8.0f;
}

static void check_allreduce_int(weft_comm *c, size_t count, bool in_place)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    int32_t *s = malloc((count + 1) * 4), *r = malloc((count + 1) * 4);
    for (size_t i = 0; i < count; i++)
        s[i] = ival(me, i);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_allreduce(c, s, in_place ? s : r, count, WEFT_INT32, WEFT_SUM, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: %s\n", me, d.msg);
    const int32_t *out = in_place ? s : r;
    size_t bad = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t want = 0;
        for (uint32_t k = 0; k < n; k++)
            want += (uint32_t)ival(k, i);
        if (out[i] != (int32_t)want)
            bad++;
    }
    CHECK_INT(bad, 0);
    if (!in_place) {
        size_t changed = 0;
        for (size_t i = 0; i < count; i++)
            changed += s[i] != ival(me, i);
        CHECK_INT(changed, 0); /* sendbuf untouched */
    }
    free(s);
    free(r);
}

static void check_allreduce_float(weft_comm *c, size_t count)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    float *s = malloc((count + 1) * 4), *r = malloc((count + 1) * 4);
    uint16_t *h = malloc((count + 1) * 2), *b = malloc((count + 1) * 2);
    for (size_t i = 0; i < count; i++) {
        s[i] = fval(me, i);
        h[i] = weft__float_to_half(fval(me, i));
        b[i] = weft__float_to_bf16(fval(me, i) * 0.5f);
    }
    CHECK_ERR(weft_allreduce(c, s, r, count, WEFT_FLOAT, WEFT_MAX, NULL), WEFT_OK);
    CHECK_ERR(weft_allreduce(c, h, h, count, WEFT_HALF, WEFT_SUM, NULL), WEFT_OK);
    CHECK_ERR(weft_allreduce(c, b, b, count, WEFT_BFLOAT16, WEFT_MIN, NULL), WEFT_OK);
    size_t bad = 0;
    for (size_t i = 0; i < count; i++) {
        float mx = fval(0, i), sum = 0, mn = fval(0, i) * 0.5f;
        for (uint32_t k = 0; k < n; k++) {
            mx = fval(k, i) > mx ? fval(k, i) : mx;
            mn = fval(k, i) * 0.5f < mn ? fval(k, i) * 0.5f : mn;
            sum += fval(k, i);
        }
        bad += r[i] != mx;
        bad += weft__half_to_float(h[i]) != sum;
        bad += weft__bf16_to_float(b[i]) != mn;
    }
    CHECK_INT(bad, 0);
    free(s);
    free(r);
    free(h);
    free(b);
}

static void check_allgather(weft_comm *c, size_t count, bool in_place)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    int64_t *s = malloc((count + 1) * 8), *r = malloc((count * n + 1) * 8);
    int64_t *mine = in_place ? r + me * count : s;
    for (size_t i = 0; i < count; i++)
        mine[i] = (int64_t)me << 40 | (int64_t)i;
    CHECK_ERR(weft_allgather(c, mine, r, count, WEFT_INT64, NULL), WEFT_OK);
    size_t bad = 0;
    for (uint32_t k = 0; k < n; k++)
        for (size_t i = 0; i < count; i++)
            bad += r[k * count + i] != ((int64_t)k << 40 | (int64_t)i);
    CHECK_INT(bad, 0);
    free(s);
    free(r);
}

static void check_reduce_scatter(weft_comm *c, size_t count, bool in_place)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    uint8_t *s = malloc(count * n + 1), *r = malloc(count + 1);
    for (size_t i = 0; i < count * n; i++)
        s[i] = (uint8_t)(me * 31 + i);
    uint8_t *out = in_place ? s + me * count : r;
    CHECK_ERR(weft_reduce_scatter(c, s, out, count, WEFT_UINT8, WEFT_SUM, NULL), WEFT_OK);
    size_t bad = 0;
    for (size_t i = 0; i < count; i++) {
        uint8_t want = 0;
        for (uint32_t k = 0; k < n; k++)
            want = (uint8_t)(want + (uint8_t)(k * 31 + me * count + i));
        bad += out[i] != want;
    }
    CHECK_INT(bad, 0);
    free(s);
    free(r);
}

static void check_broadcast(weft_comm *c, size_t bytes, uint32_t root)
{
    uint32_t me = weft_comm_rank(c);
    uint8_t *s = malloc(bytes + 1), *r = malloc(bytes + 1);
    for (size_t i = 0; i < bytes; i++)
        s[i] = (uint8_t)(me == root ? i * 13 + 1 : 0);
    memset(r, 0xee, bytes + 1);
    CHECK_ERR(weft_broadcast(c, s, r, bytes, WEFT_INT8, root, NULL), WEFT_OK);
    size_t bad = 0;
    for (size_t i = 0; i < bytes; i++)
        bad += r[i] != (uint8_t)(i * 13 + 1);
    CHECK_INT(bad, 0);
    CHECK_INT(r[bytes], 0xee); /* nothing written past the end */
    free(s);
    free(r);
}

typedef struct suite {
    const char *transport; /* expected for every peer */
} suite;

static int collectives(weft_comm *c, void *arg)
{
    const suite *s = arg;
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    for (uint32_t p = 0; p < n; p++)
        CHECK_STR(weft_comm_transport(c, p), p == me ? "self" : s->transport);
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        check_allreduce_int(c, counts[k], false);
        check_allreduce_int(c, counts[k], true);
    }
    check_allreduce_float(c, 1009);
    check_allreduce_float(c, 1);
    check_allgather(c, 1, false);
    check_allgather(c, 1009, true);
    check_allgather(c, 40000, false);
    check_reduce_scatter(c, 1009, false);
    check_reduce_scatter(c, 1, true);
    check_reduce_scatter(c, 0, false);
    check_broadcast(c, 3 * (1u << 20) + 5, n - 1);
    check_broadcast(c, 1, 0);

    /* Agreement: equal data passes; rank-dependent data fails everywhere,
     * naming the first rank that differs from rank 0. */
    weft_diag d;
    CHECK_ERR(weft_comm_agree(c, "plan", "same", 4, &d), WEFT_OK);
    char mine[16];
    snprintf(mine, sizeof mine, "r%u", me < 2 ? 0 : me);
    weft_diag_clear(&d);
    weft_err e = weft_comm_agree(c, "fabric", mine, strlen(mine), &d);
    if (n > 2) {
        CHECK_ERR(e, WEFT_EINVAL);
        CHECK_CONTAINS(d.msg, "ranks disagree on fabric: rank 2 has hash ");
    } else {
        CHECK_ERR(e, WEFT_OK);
    }
    CHECK_ERR(weft_comm_barrier(c, NULL), WEFT_OK);
    /* Bad arguments fail before anything moves. */
    weft_diag_clear(&d);
    CHECK_ERR(weft_broadcast(c, mine, mine, 1, WEFT_INT8, n, &d), WEFT_EINVAL);
    CHECK_CONTAINS(d.msg, "is not in 0 .. ");
    CHECK_ERR(weft_allreduce(c, mine, mine, 1, (weft_dtype)77, WEFT_SUM, NULL), WEFT_EINVAL);
    CHECK(!weft_comm_failed(c));
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

/* Point to point, then a receive of the wrong length: EPARSE naming both
 * sides, and the communicator is failed afterwards. */
static int wrong_length(weft_comm *c, void *arg)
{
    (void)arg;
    uint32_t me = weft_comm_rank(c);
    char buf[300000];
    memset(buf, me, sizeof buf);
    weft_diag d;
    weft_diag_clear(&d);
    if (me == 0) {
        CHECK_ERR(weft_send(c, 1, buf, 5, NULL), WEFT_OK);
        CHECK_ERR(weft_recv(c, 1, buf, 3, NULL), WEFT_OK);
        CHECK_INT(buf[0], 1);
        CHECK_INT(buf[3], 0);
        weft_send(c, 1, buf, 1000, NULL); /* rank 1 expects 10 */
        weft_recv(c, 1, buf, 1, &d);      /* ends when rank 1 gives up */
    } else {
        CHECK_ERR(weft_recv(c, 0, buf, 5, NULL), WEFT_OK);
        CHECK_INT(buf[4], 0);
        CHECK_ERR(weft_send(c, 0, buf + 100, 3, NULL), WEFT_OK);
        CHECK_ERR(weft_recv(c, 0, buf, 10, &d), WEFT_EPARSE);
        CHECK_CONTAINS(d.msg, "rank 0 sent a ");
        CHECK_CONTAINS(d.msg, "1000");
        CHECK_CONTAINS(d.msg, "rank 1 expected 10 bytes");
        CHECK(weft_comm_failed(c));
        weft_diag_clear(&d);
        CHECK_ERR(weft_send(c, 0, buf, 1, &d), WEFT_EPEER);
        CHECK_CONTAINS(d.msg, "comm: failed earlier: ");
    }
    CHECK_ERR(weft_send(c, me, buf, 1, NULL), WEFT_EINVAL);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

static void run(uint32_t n, weft_transport_choice t, weft__comm_body fn, void *arg,
                const char *what)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = t;
    cfg.timeout_ms = 8000;
    weft__test_comm_ranks_ok(n, &cfg, fn, arg, 20000, what);
}

/* weft_comm_init refuses bad configurations with a message. */
static void test_config_errors(void)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    weft_comm *c = NULL;
    weft_diag d;
    cfg.size = 4;
    cfg.rank = 4;
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "comm: rank 4 is not in 0 .. 3");
    cfg.rank = 1;
    cfg.addr = "localhost";
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "rendezvous address: expected host:port, got 'localhost'");
    cfg.addr = "127.0.0.1:99999";
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "rendezvous address: bad port '99999' in '127.0.0.1:99999'");
    cfg.tcp_conns = 17;
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "comm: 17 TCP connections per peer (at most 16)");
    CHECK(c == NULL);

    /* A single rank needs no peer. */
    weft_comm_config_init(&cfg);
    cfg.addr = "127.0.0.1:0";
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_OK);
    if (c) {
        int32_t v[3] = {1, 2, 3}, w[3];
        CHECK_ERR(weft_allreduce(c, v, w, 3, WEFT_INT32, WEFT_PROD, NULL), WEFT_OK);
        CHECK(memcmp(v, w, sizeof v) == 0);
        CHECK_STR(weft_comm_transport(c, 0), "self");
        weft_comm_free(c);
    }
}

/* Single-rank communicators and prepared plans under allocation failure:
 * every failing attempt returns WEFT_ENOMEM and frees what it took. */
static weft_err comm_ctor(void *arg)
{
    weft_comm **out = arg;
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.addr = "127.0.0.1:0";
    weft_comm *c = NULL;
    weft_err e = weft_comm_init(&cfg, &c, NULL);
    if (e)
        return e;
    int32_t v[6] = {1, 2, 3, 4, 5, 6}, w[6];
    e = weft_reduce_scatter(c, v, w, 6, WEFT_INT32, WEFT_SUM, NULL); /* allocates */
    if (e) {
        weft_comm_free(c);
        return e;
    }
    *out = c;
    return WEFT_OK;
}

static void comm_dtor(void *arg)
{
    weft_comm **c = arg;
    weft_comm_free(*c);
}

typedef struct plan_arg {
    weft_comm *c;
    weft_plan *p;
    weft_comm_plan *cp;
} plan_arg;

static weft_err plan_ctor(void *arg)
{
    plan_arg *a = arg;
    weft_err e = weft_comm_plan_new(a->c, a->p, &a->cp, NULL);
    if (e)
        return e;
    int64_t v[4] = {1, 2, 3, 4}, w[4];
    e = weft_comm_plan_run(a->cp, v, w, 4, WEFT_INT64, WEFT_SUM, NULL);
    if (e || memcmp(v, w, sizeof v) != 0) {
        weft_comm_plan_free(a->cp);
        return e ? e : WEFT_EINVAL;
    }
    return WEFT_OK;
}

static void plan_dtor(void *arg)
{
    plan_arg *a = arg;
    weft_comm_plan_free(a->cp);
}

static void test_oom(void)
{
    weft_comm *c = NULL;
    CHECK(weft_test_oom_sweep("weft_comm_init", comm_ctor, comm_dtor, &c) > 0);
    plan_arg a = {0};
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.addr = "127.0.0.1:0";
    const char *text = "weft-plan 1\ncoll allreduce\nranks 1\nchunks 2\nscratch 1\ninplace no\n"
                       "op 0 copy 0:in[0] 0:scratch[0]\n"
                       "op 1 copy 0:scratch[0] 0:out[0] deps=0\n"
                       "op 2 copy 0:in[1] 0:out[1]\n";
    CHECK_ERR(weft_comm_init(&cfg, &a.c, NULL), WEFT_OK);
    CHECK_ERR(weft_plan_parse(text, strlen(text), "oom.plan", &a.p, NULL), WEFT_OK);
    if (a.c && a.p)
        CHECK(weft_test_oom_sweep("weft_comm_plan_new", plan_ctor, plan_dtor, &a) > 0);
    weft_plan_free(a.p);
    weft_comm_free(a.c);
}

/* Two connection sets (both on loopback) of three connections each: every
 * message over 6 * 64 KiB is split six ways. A missing interface is named. */
static void test_interfaces(void)
{
    suite tcp = {"tcp"};
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = WEFT_TRANSPORT_TCP;
    cfg.timeout_ms = 8000;
    cfg.ifname = "lo,lo";
    cfg.tcp_conns = 3;
    int codes[3];
    CHECK_INT(weft__test_comm_ranks(3, &cfg, collectives, &tcp, 20000, codes, NULL), 0);
    for (int r = 0; r < 3; r++)
        CHECK_INT(codes[r], 0);
    weft_comm_config_init(&cfg);
    cfg.addr = "127.0.0.1:0";
    cfg.ifname = "lo,nope0";
    cfg.transport = WEFT_TRANSPORT_TCP;
    weft_comm *c = NULL;
    weft_diag d;
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_ENOENT);
    CHECK_STR(d.msg, "WEFT_SOCKET_IFNAME: no IPv4 interface named 'nope0'");
}

/* Declared hosts (weft_comm_config.host, WEFT_HOST): ranks 0 and 1 on
 * "h0", 2 and 3 on "h1", all on this machine. Host-mates share memory, the
 * others talk TCP, and collectives over the mix are exact. */
static int mixed_hosts(weft_comm *c, void *arg)
{
    (void)arg;
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    for (uint32_t p = 0; p < n; p++)
        CHECK_STR(weft_comm_transport(c, p), p == me ? "self" : p / 2 == me / 2 ? "shm" : "tcp");
    check_allreduce_int(c, 100003, false);
    check_allreduce_float(c, 1009);
    check_allgather(c, 40000, false);
    check_reduce_scatter(c, 1009, false);
    check_broadcast(c, 3 * (1u << 20) + 5, n - 1);
    /* relay_min 1: broadcasts relay through the root's host-mate when the
     * count splits into the plan's 2 chunks, else the built-in chain. */
    weft_comm_choice ch;
    for (uint32_t root = 0; root < n; root++) {
        CHECK_ERR(weft_comm_choose(c, WEFT_COLL_BROADCAST, 1000, WEFT_INT8, root, &ch, NULL),
                  WEFT_OK);
        CHECK_INT(ch.source, WEFT_CHOICE_RELAY);
        CHECK_STR(ch.algo, "relay:auto");
        CHECK_STR(ch.reason,
                  "relayed through the root's host-mates: 2 ranks, at least 1 B (WEFT_RELAY)");
    }
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_BROADCAST, 1001, WEFT_INT8, 0, &ch, NULL), WEFT_OK);
    CHECK_INT(ch.source, WEFT_CHOICE_BUILTIN);
    CHECK_STR(ch.reason, "count 1001 is not a multiple of the 2 chunks of relay:auto "
                         "(WEFT_RELAY); built-in schedule");
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_ALLREDUCE, 1000, WEFT_INT8, 0, &ch, NULL), WEFT_OK);
    CHECK_INT(ch.source, WEFT_CHOICE_BUILTIN);
    check_broadcast(c, 2 * (1u << 20), 0);
    check_broadcast(c, (1u << 20) + 2, 3);
    check_broadcast(c, 2, 1);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

static int declared_host_rank(const weft_comm_config *cfg, void *arg)
{
    (void)arg;
    weft_comm_config mine = *cfg;
    mine.host = mine.rank < 2 ? "h0" : "h1";
    return weft__test_with_comm(&mine, mixed_hosts, NULL);
}

static int same_declared_host(weft_comm *c, void *arg)
{
    (void)arg;
    CHECK_STR(weft_comm_transport(c, 1 - weft_comm_rank(c)), "shm");
    check_allreduce_int(c, 1009, false);
    weft_comm_choice ch;
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_BROADCAST, 1000, WEFT_INT8, 0, &ch, NULL), WEFT_OK);
    CHECK_INT(ch.source, WEFT_CHOICE_BUILTIN);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

/* Ranks that disagree on WEFT_RELAY fail init, each naming the other. */
static int relay_disagrees(const weft_comm_config *cfg, void *arg)
{
    (void)arg;
    weft_comm_config mine = *cfg;
    mine.relay_min = mine.rank == 0 ? 1 : 0;
    weft_comm *c = NULL;
    weft_diag d;
    CHECK_ERR(weft_comm_init(&mine, &c, &d), WEFT_EINVAL);
    char want[128];
    snprintf(want, sizeof want, "comm: rank %u and rank %u disagree on relaying (WEFT_RELAY)",
             mine.rank, 1 - mine.rank);
    CHECK_STR(d.msg, want);
    weft_comm_free(c);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

static void test_declared_hosts(void)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.timeout_ms = 8000;
    cfg.relay_min = 1;
    weft__test_ranks_ok(4, &cfg, declared_host_rank, NULL, 20000, "declared hosts");
    /* One name on every rank is one host: shared memory, as without it;
     * with one host nothing relays. */
    cfg.host = "h7";
    weft__test_comm_ranks_ok(2, &cfg, same_declared_host, NULL, 20000, "one declared host");
    weft__test_ranks_ok(2, &cfg, relay_disagrees, NULL, 20000, "WEFT_RELAY disagrees");
}

int main(void)
{
    test_config_errors();
    test_oom();
    test_interfaces();
    test_declared_hosts();
    suite shm = {"shm"}, tcp = {"tcp"};
    run(2, WEFT_TRANSPORT_SHM, collectives, &shm, "shm");
    run(3, WEFT_TRANSPORT_AUTO, collectives, &shm, "auto");
    run(5, WEFT_TRANSPORT_SHM, collectives, &shm, "shm");
    run(2, WEFT_TRANSPORT_TCP, collectives, &tcp, "tcp");
    run(4, WEFT_TRANSPORT_TCP, collectives, &tcp, "tcp");
    run(2, WEFT_TRANSPORT_SHM, wrong_length, NULL, "shm wrong length");
    run(2, WEFT_TRANSPORT_TCP, wrong_length, NULL, "tcp wrong length");
    return weft_test_done();
}
