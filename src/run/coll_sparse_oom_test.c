/* weft_allreduce_sparse under injected allocation failures, and a rank
 * that dies (coll_sparse.c, out_of_memory); weft_allreduce_int8 under the
 * same failures (coll_quant.c).
 *
 * Across 3 forked ranks (shared memory, and once on TCP): rank v makes its
 * 1st, 2nd, ... allocation inside weft_allreduce_sparse fail, for v the
 * first and the last rank, with a dense and with a sparse output, until
 * the call succeeds. Every injected failure must end the call on every
 * rank at once, not at the communicator's timeout, in one of two ways:
 * - agreed in the header (the parts or their positions): every rank
 *   returns WEFT_ENOMEM with "sparse allreduce: rank v: out of memory",
 *   and the communicator stays usable (a barrier passes). The injection
 *   fails every allocation after the first failed one, the header's own
 *   too, so this sweep never gets there;
 * - anywhere else (the header's buffers, the exchanges): rank v returns
 *   WEFT_ENOMEM with "comm: rank v: out of memory in sparse allreduce",
 *   its communicator failed (which tells the peers), every other rank
 *   WEFT_EPEER naming rank v and "out of memory", its communicator failed;
 * - after the last exchange (a sparse result's arrays and its sort): rank
 *   v alone returns WEFT_ENOMEM, the others their results, and the
 *   communicator stays usable (nobody waits on rank v).
 * Before, a failure after the header left rank v's communicator usable
 * and told nobody: the peers stayed in the exchange until it freed its
 * communicator (`rank v closed its communicator`, which these checks
 * refuse) or, in a program that kept it, the timeout. The checks are on
 * codes and messages, never on time (the timeout, 60 s, is far above an
 * attempt). Nothing leaks (weft__alloc_live) on any rank. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/testing.h"
#include "run/testing_oom.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"
#include "weft/comm_sparse.h"

enum { RANKS = 3, N = 1000 };

typedef struct sweep {
    uint32_t victim;
    bool sparse_out;
} sweep;

/* Rank r's pairs: indices r, 10 + r, 500 (shared), values 1, 2, 3. */
static weft_err call(weft_comm *c, float *dense, weft_sparse_result *res, weft_diag *d)
{
    uint32_t me = weft_comm_rank(c);
    uint32_t ix[3] = {me, 10 + me, 500};
    float v[3] = {1, 2, 3};
    return weft_allreduce_sparse(c, ix, WEFT_UINT32, v, 3, N, dense, res, d);
}

static bool correct(uint32_t n, const float *dense, const weft_sparse_result *res)
{
    float want[N] = {0};
    for (uint32_t r = 0; r < n; r++)
        want[r] += 1, want[10 + r] += 2, want[500] += 3;
    if (dense)
        return memcmp(dense, want, sizeof want) == 0;
    size_t k = 0;
    for (uint32_t i = 0; i < N; i++) {
        if (want[i] == 0)
            continue;
        if (k >= res->count || ((const uint32_t *)res->indices)[k] != i ||
            res->values[k] != want[i])
            return false;
        k++;
    }
    return k == res->count;
}

static int sweep_rank(const weft_comm_config *cfg, void *arg)
{
    const sweep *s = arg;
    uint32_t me = cfg->rank, v = s->victim;
    static float dense[N];
    long attempts = 0, agreed = 0, late = 0;
    for (long k = 0;; k++) {
        long base = weft__alloc_live();
        weft_comm *c;
        weft_diag d;
        weft_diag_clear(&d);
        if (weft_comm_init(cfg, &c, &d)) {
            fprintf(stderr, "rank %u: init: %s\n", me, d.msg);
            return 90;
        }
        weft_sparse_result res = {0};
        if (me == v)
            weft__alloc_fail_after(k);
        weft_err e = call(c, s->sparse_out ? NULL : dense, s->sparse_out ? &res : NULL, &d);
        if (me == v)
            weft__alloc_fail_after(-1);
        char want[96];
        if (e == WEFT_OK) {
            CHECK(correct(cfg->size, s->sparse_out ? NULL : dense, &res));
            CHECK(!weft_comm_failed(c));
            CHECK_ERR(weft_comm_barrier(c, NULL), WEFT_OK);
        } else if (e == WEFT_ENOMEM && me == v && s->sparse_out &&
                   strcmp(d.msg, "out of memory") == 0) {
            /* After the last exchange (the sparse result): the others
             * have theirs, and the communicator is usable. */
            CHECK(!weft_comm_failed(c));
            CHECK_ERR(weft_comm_barrier(c, NULL), WEFT_OK);
            late++;
        } else if (e == WEFT_ENOMEM && !weft_comm_failed(c)) {
            /* Agreed in the header: every rank alike, still usable. */
            snprintf(want, sizeof want, "sparse allreduce: rank %u: out of memory", v);
            CHECK_STR(d.msg, want);
            CHECK_ERR(weft_comm_barrier(c, NULL), WEFT_OK);
            agreed++;
        } else {
            oom_check_failed(c, v, k, "sparse allreduce", false, e, &d);
        }
        /* Go on while rank v failed: on a usable communicator the ranks
         * agree on it (after a late failure only rank v knows). */
        int32_t again = me == v && e != WEFT_OK, any = 1;
        if (!weft_comm_failed(c))
            CHECK_ERR(weft_allreduce(c, &again, &any, 1, WEFT_INT32, WEFT_MAX, NULL), WEFT_OK);
        weft_sparse_result_free(&res);
        weft_comm_free(c);
        CHECK_INT(weft__alloc_live(), base);
        attempts = k;
        if (!any)
            break;
        if (k > 1000)
            return 91;
    }
    if (me == v)
        printf("victim rank %u (%s output, %s): %ld injected failures, %ld agreed in the header, "
               "%ld after the last exchange\n",
               v, s->sparse_out ? "sparse" : "dense",
               cfg->transport == WEFT_TRANSPORT_TCP ? "tcp" : "shm", attempts, agreed, late);
    /* A sparse result's arrays and sort come after the last exchange. */
    if (me == v && s->sparse_out && late < 2) {
        fprintf(stderr, "rank %u: only %ld failures after the last exchange\n", me, late);
        return 93;
    }
    /* The header's buffers, the exchanges' and the sums' were hit. */
    if (me == v && attempts < 10) {
        fprintf(stderr, "rank %u: only %ld injected failures, %ld agreed\n", me, attempts, agreed);
        return 92;
    }
    return weft__test_failed > 89 ? 89 : weft__test_failed;
}

/* weft_allreduce_int8 (coll_quant.c) under the same sweep: it has no
 * verdict on memory in its header, so every injected failure fails the
 * communicator on rank v ("comm: rank v: out of memory in int8
 * allreduce") and every other rank returns WEFT_EPEER naming it. Before,
 * they waited for the timeout. */
static int int8_sweep(const weft_comm_config *cfg, void *arg)
{
    uint32_t me = cfg->rank, v = *(const uint32_t *)arg;
    enum { COUNT = 1000 };
    float in[COUNT], out[COUNT];
    for (size_t i = 0; i < COUNT; i++)
        in[i] = (float)(i % 7);
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
        if (me == v)
            weft__alloc_fail_after(k);
        weft_err e = weft_allreduce_int8(c, in, out, COUNT, 64, &d);
        if (me == v)
            weft__alloc_fail_after(-1);
        if (e == WEFT_OK) {
            CHECK(!weft_comm_failed(c));
            CHECK(out[0] == 0 && out[6] == 6.0f * (float)cfg->size);
            CHECK_ERR(weft_comm_barrier(c, NULL), WEFT_OK);
        } else {
            oom_check_failed(c, v, k, "int8 allreduce", true, e, &d);
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
        printf("int8 victim rank %u: %ld injected failures\n", v, attempts);
    if (me == v && attempts < 5)
        return 92;
    return weft__test_failed > 89 ? 89 : weft__test_failed;
}

/* A rank that dies: rank 2 exits (without freeing its communicator)
 * after a barrier, where the others enter a sparse allreduce of 200,000
 * pairs each; they must end with WEFT_EPEER naming rank 2 (its death on
 * shared memory, its closed connection on TCP), not wait for the
 * timeout (60 s; WEFT_ETIMEDOUT fails the check). LeakSanitizer checks
 * what they free in the sanitizer build. */
static int dies(weft_comm *c, void *arg)
{
    (void)arg;
    uint32_t me = weft_comm_rank(c), n = weft_comm_size(c);
    CHECK_ERR(weft_comm_barrier(c, NULL), WEFT_OK);
    if (me == n - 1)
        _exit(0);
    enum { PAIRS = 200000 };
    static uint32_t ix[PAIRS];
    static float v[PAIRS], out[1 << 20];
    for (uint32_t i = 0; i < PAIRS; i++)
        ix[i] = (i * 2654435761u + me) % (1u << 20), v[i] = 1;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_allreduce_sparse(c, ix, WEFT_UINT32, v, PAIRS, 1u << 20, out, NULL, &d);
    char want[32];
    snprintf(want, sizeof want, "rank %u", n - 1);
    if (e != WEFT_EPEER || !strstr(d.msg, want))
        fprintf(stderr, "rank %u: %s: %s\n", me, weft_err_name(e), d.msg);
    CHECK_ERR(e, WEFT_EPEER);
    CHECK(strstr(d.msg, want) != NULL);
    CHECK(weft_comm_failed(c));
    return weft__test_failed > 89 ? 89 : weft__test_failed;
}

int main(void)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = WEFT_TRANSPORT_SHM;
    cfg.timeout_ms = 60000;
    static const sweep cases[] = {{0, false}, {RANKS - 1, false}, {RANKS - 1, true}};
    char what[96];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(what, sizeof what, "sparse allreduce oom sweep %zu", i);
        weft__test_ranks_ok(RANKS, &cfg, sweep_rank, (void *)&cases[i], 120000, what);
    }
    cfg.transport = WEFT_TRANSPORT_TCP;
    weft__test_ranks_ok(RANKS, &cfg, sweep_rank, (void *)&cases[0], 120000,
                        "sparse allreduce oom sweep, tcp");
    weft__test_comm_ranks_ok(RANKS, &cfg, dies, NULL, 120000, "sparse allreduce, a rank dies, tcp");
    static const uint32_t int8_victim = 1;
    weft__test_ranks_ok(RANKS, &cfg, int8_sweep, (void *)&int8_victim, 120000,
                        "int8 allreduce oom sweep, tcp");
    cfg.transport = WEFT_TRANSPORT_SHM;
    weft__test_comm_ranks_ok(RANKS, &cfg, dies, NULL, 120000, "sparse allreduce, a rank dies, shm");
    weft__test_ranks_ok(RANKS, &cfg, int8_sweep, (void *)&int8_victim, 120000,
                        "int8 allreduce oom sweep, shm");
    return weft_test_done();
}
