/* weft_alltoallv under injected allocation failures (coll_alltoallv.c,
 * "Memory running out on one rank").
 *
 * Across forked ranks (3, on shared memory and on TCP): rank v makes its
 * 1st, 2nd, ... allocation inside weft_alltoallv fail, for v the first and
 * the last rank, until the call succeeds. Every injected failure must end
 * the call on every rank at once, not at the communicator's timeout: rank
 * v with WEFT_ENOMEM and "comm: rank v: out of memory in alltoallv", its
 * communicator failed (which tells the peers), every other rank with
 * WEFT_EPEER naming rank v's failure (`shm: rank v (pid P) failed: out of
 * memory`), its communicator failed too. Before, rank v returned with its
 * communicator usable and told nobody: the peers stayed in the exchange
 * until it freed its communicator (here at once: they saw `rank v closed
 * its communicator`, which these checks refuse) or, in a program that
 * kept it, the timeout. The checks are on codes and messages, never on
 * time (the timeout, 60 s, is far above an attempt). Both ways of agreeing the counts run (every
 * rank's counts in one allgather, and the alltoall and allgather used beyond 128 ranks), and in
 * place. Each attempt builds a fresh communicator with injection off (a failed one leaves nothing
 * to call again). On one rank nothing waits: the call fails with WEFT_ENOMEM and the communicator
 * stays usable. */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/testing.h"
#include "run/coll_alltoallv.h"
#include "run/testing_oom.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"

enum { RANKS = 3 };

typedef struct sweep {
    uint32_t victim;
    uint32_t all_max; /* weft__alltoallv_all_max */
    bool in_place;
} sweep;

/* Rank `from` sends `to` from*16 + to + 1 elements, each 1000*from + to;
 * in place (where a rank's send counts are its receive counts, so they
 * must be symmetric) from + to + 1. */
static size_t count(uint32_t from, uint32_t to, bool in_place)
{
    return in_place ? (size_t)from + to + 1 : (size_t)from * 16 + to + 1;
}

static weft_err call(weft_comm *c, bool in_place, int32_t *send, int32_t *recv, weft_diag *d)
{
    uint32_t me = weft_comm_rank(c), n = weft_comm_size(c);
    size_t sc[RANKS], sd[RANKS], rc[RANKS], rd[RANKS], so = 0, ro = 0;
    int32_t *out = in_place ? recv : send;
    for (uint32_t j = 0; j < n; j++) {
        sc[j] = count(me, j, in_place);
        sd[j] = so;
        so += sc[j];
        rc[j] = count(j, me, in_place);
        rd[j] = ro;
        ro += rc[j];
        for (size_t i = 0; i < sc[j]; i++)
            out[sd[j] + i] = (int32_t)(1000 * me + j);
    }
    if (in_place)
        return weft_alltoallv(c, recv, rc, rd, recv, rc, rd, WEFT_INT32, d);
    return weft_alltoallv(c, send, sc, sd, recv, rc, rd, WEFT_INT32, d);
}

/* The received blocks: from j, 1000*j + me. */
static bool received(uint32_t me, uint32_t n, bool in_place, const int32_t *recv)
{
    size_t ro = 0;
    for (uint32_t j = 0; j < n; j++)
        for (size_t i = 0; i < count(j, me, in_place); i++)
            if (recv[ro++] != (int32_t)(1000 * j + me))
                return false;
    return true;
}

static int sweep_rank(const weft_comm_config *cfg, void *arg)
{
    const sweep *s = arg;
    uint32_t me = cfg->rank, v = s->victim;
    weft__alltoallv_all_max = s->all_max;
    int32_t send[RANKS * 64], recv[RANKS * 64];
    long attempts = 0;
    for (long k = 0;; k++) {
        long base = weft__alloc_live();
        weft_comm *c;
        weft_diag d;
        weft_diag_clear(&d);
        if (weft_comm_init(cfg, &c, &d)) {
            fprintf(stderr, "rank %u: init: %s\n", me, d.msg);
            return 90;
        }
        memset(recv, 0xff, sizeof recv);
        if (me == v)
            weft__alloc_fail_after(k);
        weft_err e = call(c, s->in_place, send, recv, &d);
        if (me == v)
            weft__alloc_fail_after(-1);
        if (e == WEFT_OK) {
            CHECK(received(me, cfg->size, s->in_place, recv));
            CHECK(!weft_comm_failed(c));
            CHECK_ERR(weft_comm_barrier(c, NULL), WEFT_OK);
        } else {
            if (k == 0 && me == (v + 1) % cfg->size)
                printf("rank %u sees: %s\n", me, d.msg);
            oom_check_failed(c, v, k, "alltoallv", true, e, &d);
        }
        weft_comm_free(c);
        CHECK_INT(weft__alloc_live(), base);
        attempts = k;
        if (e == WEFT_OK)
            break;
        if (k > 1000)
            return 91;
    }
    if (me == v)
        printf("victim rank %u (all_max %u%s, %s): %ld injected failures\n", v, s->all_max,
               s->in_place ? ", in place" : "",
               cfg->transport == WEFT_TRANSPORT_TCP ? "tcp" : "shm", attempts);
    /* At least the counts' buffer and the exchange's requests were hit. */
    if (me == v && attempts < 2) {
        fprintf(stderr, "rank %u: only %ld injected failures\n", me, attempts);
        return 92;
    }
    return weft__test_failed > 89 ? 89 : weft__test_failed;
}

/* One rank: nobody waits, so the communicator stays usable. */
static int one_rank(const weft_comm_config *cfg, void *arg)
{
    (void)arg;
    weft_comm *c;
    weft_diag d;
    if (weft_comm_init(cfg, &c, &d))
        return 90;
    int32_t send[4] = {1, 2, 3, 4}, recv[4] = {0};
    size_t cnt[1] = {4}, dsp[1] = {0};
    long k = 0;
    weft_err e;
    for (;; k++) {
        weft__alloc_fail_after(k);
        e = weft_alltoallv(c, send, cnt, dsp, recv, cnt, dsp, WEFT_INT32, &d);
        weft__alloc_fail_after(-1);
        if (e != WEFT_ENOMEM)
            break;
        CHECK(!weft_comm_failed(c));
    }
    CHECK_ERR(e, WEFT_OK);
    CHECK(recv[3] == 4);
    printf("1 rank: %ld injected failures\n", k);
    CHECK(k >= 1);
    weft_comm_free(c);
    return weft__test_failed > 89 ? 89 : weft__test_failed;
}

int main(void)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = WEFT_TRANSPORT_SHM;
    cfg.timeout_ms = 60000;
    static const sweep cases[] = {
        {0, 128, false},
        {RANKS - 1, 128, false},
        {RANKS - 1, 0, false},
        {0, 128, true},
    };
    char what[96];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(what, sizeof what, "alltoallv oom sweep %zu", i);
        weft__test_ranks_ok(RANKS, &cfg, sweep_rank, (void *)&cases[i], 120000, what);
    }
    cfg.transport = WEFT_TRANSPORT_TCP;
    weft__test_ranks_ok(RANKS, &cfg, sweep_rank, (void *)&cases[1], 120000,
                        "alltoallv oom sweep, tcp");
    cfg.transport = WEFT_TRANSPORT_SHM;
    weft__test_ranks_ok(1, &cfg, one_rank, NULL, 120000, "alltoallv oom, 1 rank");
    return weft_test_done();
}
