/* Agreement on a collective call's arguments (call_agree.h): ranks that
 * pass a different root, count, dtype, reduction or collective fail on
 * every rank with the same message, before any data moves (every receive
 * buffer keeps its guard bytes), and the communicator stays usable. Over
 * shared memory (the control-page records) and TCP (the dissemination
 * exchange: every rank to every rank on 3 and 4 ranks, dissemination
 * rounds on 9), on private and
 * weft_comm_alloc buffers, at sizes that take every path (eager, direct,
 * single-pass, ring, the broadcast chain). */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"

enum { BIG = 300000 }; /* int32 elements: 1.2 MB, past every small-message path */

typedef struct job {
    bool shared;
} job;

static bool untouched(const unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != 0xee)
            return false;
    return true;
}

/* One disagreeing call: every rank gets WEFT_EINVAL and `want`, nothing
 * was written to its receive buffer, and the communicator did not fail. */
static void expect(weft_comm *c, weft_err got, const weft_diag *d, const char *want,
                   const unsigned char *recv, size_t len)
{
    CHECK_ERR(got, WEFT_EINVAL);
    CHECK_STR(d->msg, want);
    CHECK(untouched(recv, len));
    CHECK(!weft_comm_failed(c));
}

static int body(weft_comm *c, void *arg)
{
    const job *j = arg;
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c), last = n - 1;
    size_t bytes = (size_t)BIG * 4 * 2;
    unsigned char *s, *r;
    if (j->shared) {
        void *a, *b;
        CHECK_ERR(weft_comm_alloc(c, bytes, &a, NULL), WEFT_OK);
        CHECK_ERR(weft_comm_alloc(c, bytes, &b, NULL), WEFT_OK);
        s = a;
        r = b;
    } else {
        s = malloc(bytes);
        r = malloc(bytes);
    }
    if (!s || !r)
        return 90;
    int32_t *si = (int32_t *)(void *)s, *ri = (int32_t *)(void *)r;
    for (size_t i = 0; i < bytes / 4; i++)
        si[i] = (int32_t)(me * 1000 + i % 1000);
    memset(r, 0xee, bytes);
    weft_diag d;
    char want[200];
    weft_err e;

    /* The case: rank 1 thinks it is the root, the others rank 0;
     * small (chain of one piece) and large (pieces, or single-pass). */
    static const size_t bcast_counts[] = {1000, BIG};
    for (int k = 0; k < 2; k++) {
        weft_diag_clear(&d);
        e = weft_broadcast(c, s, r, bcast_counts[k], WEFT_INT32, me == 1 ? 1 : 0, &d);
        expect(c, e, &d,
               "comm: ranks disagree on the root of broadcast: rank 0 has 0, rank 1 has 1", r,
               bytes);
    }
    /* Counts: ring against ring, 0 against ring. */
    weft_diag_clear(&d);
    e = weft_allreduce(c, s, r, me == last ? BIG + 8 : BIG, WEFT_INT32, WEFT_SUM, &d);
    snprintf(want, sizeof want,
             "comm: ranks disagree on the count of allreduce: rank 0 has %d, rank %u has %d", BIG,
             last, BIG + 8);
    expect(c, e, &d, want, r, bytes);
    weft_diag_clear(&d);
    e = weft_allreduce(c, s, r, me == 1 ? 0 : 100000, WEFT_INT32, WEFT_SUM, &d);
    expect(c, e, &d,
           "comm: ranks disagree on the count of allreduce: rank 0 has 100000, rank 1 has 0", r,
           bytes);
    /* dtype, reduction, collective, and an all-to-all count. */
    weft_diag_clear(&d);
    e = weft_allreduce(c, s, r, 20000, me == 1 ? WEFT_FLOAT : WEFT_INT32, WEFT_SUM, &d);
    expect(c, e, &d,
           "comm: ranks disagree on the dtype of allreduce: rank 0 has int32, rank 1 has float", r,
           bytes);
    weft_diag_clear(&d);
    e = weft_reduce(c, s, r, 5000, WEFT_INT32, me == last ? WEFT_MAX : WEFT_SUM, 0, &d);
    snprintf(want, sizeof want,
             "comm: ranks disagree on the reduction of reduce: rank 0 has sum, rank %u has max",
             last);
    expect(c, e, &d, want, r, bytes);
    weft_diag_clear(&d);
    e = me == last ? weft_allgather(c, s, r, 10, WEFT_INT32, &d)
                   : weft_reduce_scatter(c, s, r, 10, WEFT_INT32, WEFT_SUM, &d);
    snprintf(want, sizeof want,
             "comm: ranks disagree on the collective: rank 0 called reducescatter, rank %u "
             "allgather",
             last);
    expect(c, e, &d, want, r, bytes);
    weft_diag_clear(&d);
    e = weft_alltoall(c, s, r, me == 0 ? 5 : 6, WEFT_INT32, &d);
    expect(c, e, &d, "comm: ranks disagree on the count of alltoall: rank 0 has 5, rank 1 has 6", r,
           bytes);

    /* Still in step: rank 1's broadcast reaches everyone. */
    CHECK_ERR(weft_broadcast(c, s, r, BIG, WEFT_INT32, 1, NULL), WEFT_OK);
    size_t bad = 0;
    for (size_t i = 0; i < BIG; i++)
        bad += ri[i] != (int32_t)(1000 + i % 1000);
    CHECK_INT(bad, 0);
    if (!j->shared) {
        free(s);
        free(r);
    }
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

/* Two ranks whose counts both take the direct allreduce (over shared
 * memory past the 512-byte eager limit of 2 ranks): each sends before it
 * has compared the arguments (coll_direct.c), so both fail the call alike
 * and, as data may be left in a ring or socket, the communicator too. */
static int direct_body(weft_comm *c, void *arg)
{
    (void)arg;
    uint32_t me = weft_comm_rank(c);
    int32_t s[1000], r[1000];
    for (int i = 0; i < 1000; i++)
        s[i] = i;
    memset(r, 0xee, sizeof r);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_allreduce(c, s, r, me == 1 ? 1000 : 200, WEFT_INT32, WEFT_SUM, &d);
    CHECK_ERR(e, WEFT_EINVAL);
    CHECK_STR(d.msg,
              "comm: ranks disagree on the count of allreduce: rank 0 has 200, rank 1 has 1000");
    CHECK(untouched((unsigned char *)r, sizeof r));
    CHECK(weft_comm_failed(c));
    /* They agree on the same count: the direct path runs (no failure). */
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

static int direct_ok_body(weft_comm *c, void *arg)
{
    (void)arg;
    int32_t s[1000], r[1000];
    for (int i = 0; i < 1000; i++)
        s[i] = i;
    for (int k = 0; k < 50; k++)
        CHECK_ERR(weft_allreduce(c, s, r, 1000 - k, WEFT_INT32, WEFT_SUM, NULL), WEFT_OK);
    size_t bad = 0;
    for (int i = 0; i < 951; i++)
        bad += r[i] != 2 * i;
    CHECK_INT(bad, 0);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

static void run(uint32_t n, weft_transport_choice t, bool shared, const char *what)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = t;
    cfg.timeout_ms = 20000;
    job j = {.shared = shared};
    weft__test_comm_ranks_ok(n, &cfg, body, &j, 90000, what);
}

int main(void)
{
    run(4, WEFT_TRANSPORT_SHM, false, "shm, private buffers");
    run(4, WEFT_TRANSPORT_SHM, true, "shm, weft_comm_alloc buffers");
    run(3, WEFT_TRANSPORT_TCP, false, "tcp, private buffers, 3 ranks");
    run(4, WEFT_TRANSPORT_TCP, true, "tcp, weft_comm_alloc buffers");
    /* More than WEFT__CALL_ALL_MAX ranks: the dissemination rounds. */
    run(9, WEFT_TRANSPORT_TCP, false, "tcp, private buffers, 9 ranks");
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.timeout_ms = 20000;
    for (int t = 0; t < 2; t++) {
        cfg.transport = t ? WEFT_TRANSPORT_TCP : WEFT_TRANSPORT_SHM;
        weft__test_comm_ranks_ok(2, &cfg, direct_body, NULL, 60000, "direct, disagreeing");
        weft__test_comm_ranks_ok(2, &cfg, direct_ok_body, NULL, 60000, "direct, agreeing");
    }
    return weft_test_done();
}
