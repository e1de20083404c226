/* Plans run for real on forked ranks over shared memory and TCP: a ring
 * allreduce from the fixtures, an out-of-place allreduce with local ops and
 * a nop, a ring allgather, a broadcast chain with root 1 and a plan that
 * uses scratch; results compared element by element with the collective's
 * definition, for in-place and out-of-place calls. Plans that do not fit
 * (wrong ranks, count not a multiple of chunks) or do not verify are
 * refused with the reason. */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "run/exec_plan.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"

static weft_plan *plan_text(const char *text)
{
    weft_plan *p = NULL;
    weft_diag d;
    weft_err e = weft_plan_parse(text, strlen(text), "test.plan", &p, &d);
    if (e)
        fprintf(stderr, "plan: %s\n", d.msg);
    return p;
}

static const char *out_of_place_2 = "weft-plan 1\ncoll allreduce\nranks 2\nchunks 2\n"
                                    "scratch 0\ninplace no\n"
                                    "op 0 copy 0:in[0] 0:out[0] n=2\n"
                                    "op 1 copy 1:in[0] 1:out[0] n=2\n"
                                    "op 2 reduce 0:out[1] 1:out[1] deps=0,1\n"
                                    "op 3 reduce 1:out[0] 0:out[0] deps=0,1\n"
                                    "op 4 copy 1:out[1] 0:out[1] deps=2\n"
                                    "op 5 copy 0:out[0] 1:out[0] deps=3 ch=1\n"
                                    "op 6 nop 0 deps=4,5\n";

static const char *allgather_3 = "weft-plan 1\ncoll allgather\nranks 3\nchunks 1\n"
                                 "op 0 copy 0:out[0] 1:out[0]\n"
                                 "op 1 copy 1:out[1] 2:out[1]\n"
                                 "op 2 copy 2:out[2] 0:out[2]\n"
                                 "op 3 copy 1:out[0] 2:out[0] deps=0\n"
                                 "op 4 copy 2:out[1] 0:out[1] deps=1\n"
                                 "op 5 copy 0:out[2] 1:out[2] deps=2\n";

static const char *broadcast_3 = "weft-plan 1\ncoll broadcast\nranks 3\nroot 1\nchunks 2\n"
                                 "op 0 copy 1:in[0] 2:in[0]\n"
                                 "op 1 copy 1:in[1] 2:in[1]\n"
                                 "op 2 copy 2:in[0] 0:in[0] deps=0\n"
                                 "op 3 copy 2:in[1] 0:in[1] deps=1\n";

/* The double binary tree of `weft plan --algo dbtree` on 4 ranks: two trees,
 * one per chunk and channel, whose ops interleave in the global order (so a
 * rank must not serialise one tree behind the other). */
static const char *dbtree_4 = "weft-plan 1\ncoll allreduce\nranks 4\nchunks 2\n"
                              "op 0 reduce 3:out[0] 2:out[0]\n"
                              "op 1 reduce 1:out[0] 2:out[0] deps=0\n"
                              "op 2 reduce 2:out[0] 0:out[0] deps=1\n"
                              "op 3 copy 0:out[0] 2:out[0] deps=1,2\n"
                              "op 4 copy 2:out[0] 1:out[0] deps=1,3\n"
                              "op 5 copy 2:out[0] 3:out[0] deps=0,3\n"
                              "op 6 reduce 2:out[1] 1:out[1] ch=1\n"
                              "op 7 reduce 0:out[1] 1:out[1] ch=1 deps=6\n"
                              "op 8 reduce 1:out[1] 3:out[1] ch=1 deps=7\n"
                              "op 9 copy 3:out[1] 1:out[1] ch=1 deps=7,8\n"
                              "op 10 copy 1:out[1] 0:out[1] ch=1 deps=7,9\n"
                              "op 11 copy 1:out[1] 2:out[1] ch=1 deps=6,9\n";

/* Rank 1 gathers both contributions in scratch, then sends the sum back. */
static const char *scratch_2 = "weft-plan 1\ncoll allreduce\nranks 2\nchunks 1\nscratch 2\n"
                               "op 0 copy 0:in[0] 1:scratch[0]\n"
                               "op 1 copy 1:in[0] 1:scratch[1]\n"
                               "op 2 reduce 1:scratch[0] 1:scratch[1] deps=0,1\n"
                               "op 3 copy 1:scratch[1] 1:out[0] deps=2\n"
                               "op 4 copy 1:out[0] 0:out[0] deps=3\n";

static int32_t val(uint32_t rank, size_t i)
{
    return (int32_t)(rank * 100003u + (uint32_t)i * 17u) - 77;
}

typedef struct job {
    const char *text; /* or */
    const char *file;
    size_t count;
    bool dbtree; /* check rank 1's schedule of dbtree_4 */
} job;

/* Rank 1's schedule of dbtree_4. The global order is 0 6 1 7 2 8 3 9 4 5 10
 * 11, so rank 1 runs ops 6 1 7 8 9 4 10 11 (positions 0 .. 7). Each op
 * waits only for the ops of rank 1 its deps lead to: op 8 (1->3, tree 2)
 * waits for op 7 alone, not for op 1 (1->2, tree 1) before it in the order;
 * op 4 reaches op 1 through ops 3 and 2 of other ranks. Over TCP (2
 * connections per peer) channel 1 is lane 2 and channel 0 lane 1, and no
 * two ops of rank 1 share a stream; over shared memory (one lane) op 4
 * follows op 6 (both from rank 2) and op 11 follows op 1 (both to rank 2). */
static void check_dbtree_schedule(weft_comm *c, const weft_plan *p, bool tcp)
{
    if (weft_comm_rank(c) != 1)
        return;
    weft_comm_plan *x = NULL;
    CHECK_ERR(weft_comm_plan_new(c, p, &x, NULL), WEFT_OK);
    if (!x)
        return;
    static const uint32_t ops[8] = {6, 1, 7, 8, 9, 4, 10, 11};
    static const uint32_t nw[8] = {0, 0, 1, 1, 2, 1, 2, 2};
    static const uint32_t w[8][2] = {{0, 0}, {0, 0}, {0, 0}, {2, 0},
                                     {2, 3}, {1, 0}, {2, 4}, {0, 4}};
    static const uint32_t lane_tcp[8] = {2, 1, 2, 2, 2, 1, 2, 2};
    static const int64_t prev_shm[8] = {-1, -1, -1, -1, -1, 0, -1, 1};
    CHECK_INT(weft__comm_plan_len(x), 8);
    for (uint32_t i = 0; i < 8 && weft__comm_plan_len(x) == 8; i++) {
        CHECK_INT(weft__comm_plan_op(x, i), ops[i]);
        uint32_t prefix, n;
        const uint32_t *list;
        weft__comm_plan_waits(x, i, &prefix, &list, &n);
        CHECK_INT(prefix, 0);
        CHECK_INT(n, nw[i]);
        uint32_t got[2] = {0, 0};
        for (uint32_t k = 0; k < n && k < 2; k++)
            got[k] = list[k];
        if (n == 2 && got[0] > got[1]) {
            uint32_t t = got[0];
            got[0] = got[1];
            got[1] = t;
        }
        CHECK_INT(got[0], w[i][0]);
        CHECK_INT(got[1], w[i][1]);
        CHECK_INT(weft__comm_plan_lane(x, i), tcp ? lane_tcp[i] : 1);
        CHECK_INT(weft__comm_plan_prev(x, i), tcp ? -1 : prev_shm[i]);
    }
    weft_comm_plan_free(x);
}

static void check_allreduce(weft_comm *c, const weft_plan *p, size_t count, bool in_place)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    int32_t *s = malloc((count + 1) * 4), *r = malloc((count + 1) * 4);
    for (size_t i = 0; i < count; i++)
        s[i] = val(me, i);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_comm_run_plan(c, p, s, in_place ? s : r, count, WEFT_INT32, WEFT_SUM, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: %s\n", me, d.msg);
    const int32_t *out = in_place ? s : r;
    size_t bad = 0, changed = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t want = 0;
        for (uint32_t k = 0; k < n; k++)
            want += (uint32_t)val(k, i);
        bad += out[i] != (int32_t)want;
        changed += !in_place && s[i] != val(me, i);
    }
    CHECK_INT(bad, 0);
    CHECK_INT(changed, 0);
    free(s);
    free(r);
}

static void check_allgather(weft_comm *c, const weft_plan *p, size_t count, bool in_place)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    int32_t *s = malloc((count + 1) * 4), *r = malloc((n * count + 1) * 4);
    int32_t *mine = in_place ? r + me * count : s;
    for (size_t i = 0; i < count; i++)
        mine[i] = val(me, i);
    CHECK_ERR(weft_comm_run_plan(c, p, mine, r, count, WEFT_INT32, WEFT_SUM, NULL), WEFT_OK);
    size_t bad = 0;
    for (uint32_t k = 0; k < n; k++)
        for (size_t i = 0; i < count; i++)
            bad += r[k * count + i] != val(k, i);
    CHECK_INT(bad, 0);
    free(s);
    free(r);
}

static void check_broadcast(weft_comm *c, const weft_plan *p, size_t count)
{
    uint32_t me = weft_comm_rank(c);
    int32_t *s = malloc((count + 1) * 4), *r = malloc((count + 1) * 4);
    for (size_t i = 0; i < count; i++)
        s[i] = me == 1 ? val(9, i) : 0;
    CHECK_ERR(weft_comm_run_plan(c, p, me == 1 ? s : NULL, r, count, WEFT_INT32, WEFT_SUM, NULL),
              WEFT_OK);
    size_t bad = 0;
    for (size_t i = 0; i < count; i++)
        bad += r[i] != val(9, i);
    CHECK_INT(bad, 0);
    free(s);
    free(r);
}

static int body(weft_comm *c, void *arg)
{
    const job *j = arg;
    weft_plan *p = NULL;
    weft_diag d;
    if (j->file)
        CHECK_ERR(weft_plan_load_file(j->file, &p, &d), WEFT_OK);
    else
        p = plan_text(j->text);
    if (!p)
        return 99;
    weft_coll coll = weft_plan_get_info(p)->coll;
    if (j->dbtree)
        check_dbtree_schedule(c, p, strcmp(weft_comm_transport(c, 0), "tcp") == 0);
    /* The last count makes chunks of more than 1 MiB: several slices per
     * chunk (256 KiB each), and 300001 elements do not divide evenly. */
    size_t counts[] = {0, j->count, j->count * 1000, j->count * 300001};
    for (int k = 0; k < 4; k++) {
        if (coll == WEFT_COLL_ALLREDUCE) {
            check_allreduce(c, p, counts[k], false);
            check_allreduce(c, p, counts[k], true);
        } else if (coll == WEFT_COLL_ALLGATHER) {
            check_allgather(c, p, counts[k], false);
            check_allgather(c, p, counts[k], true);
        } else {
            check_broadcast(c, p, counts[k]);
        }
    }
    /* A count the plan's chunks do not divide is refused, before anything
     * moves, identically on every rank. */
    int32_t buf[64];
    weft_diag_clear(&d);
    uint32_t chunks = weft_plan_get_info(p)->chunks;
    if (chunks > 1) {
        CHECK_ERR(weft_comm_run_plan(c, p, buf, buf, chunks + 1, WEFT_INT32, WEFT_SUM, &d),
                  WEFT_EINVAL);
        CHECK_CONTAINS(d.msg, "is not a multiple of the plan's");
    }
    /* Ranks that pass different counts (each a multiple of the chunks)
     * are refused alike before anything moves (call_agree.h). */
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    int32_t *big = malloc((size_t)2 * chunks * n * sizeof *big);
    if (big && n > 1) {
        memset(big, 0x5a, (size_t)2 * chunks * n * sizeof *big);
        weft_diag_clear(&d);
        CHECK_ERR(weft_comm_run_plan(c, p, big, big, me == n - 1 ? 2 * chunks : chunks, WEFT_INT32,
                                     WEFT_SUM, &d),
                  WEFT_EINVAL);
        char want[160];
        snprintf(want, sizeof want,
                 "comm: ranks disagree on the count of %s: rank 0 has %u, rank %u has %u",
                 weft_coll_name(coll), chunks, n - 1, 2 * chunks);
        CHECK_STR(d.msg, want);
        free(big);
    }
    CHECK(!weft_comm_failed(c));
    weft_plan_free(p);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

static void run(uint32_t n, weft_transport_choice t, job *j, const char *what)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = t;
    cfg.timeout_ms = 8000;
    weft__test_comm_ranks_ok(n, &cfg, body, j, 20000, what);
}

/* Misfits are refused in a single rank, before anything moves. */
static void test_refusals(void)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.addr = "127.0.0.1:0";
    weft_comm *c = NULL;
    CHECK_ERR(weft_comm_init(&cfg, &c, NULL), WEFT_OK);
    if (!c)
        return;
    weft_plan *p = plan_text(allgather_3);
    int32_t buf[8];
    weft_diag d;
    CHECK_ERR(weft_comm_run_plan(c, p, buf, buf, 1, WEFT_INT32, WEFT_SUM, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "plan: the plan is for 3 ranks, the communicator has 1");
    weft_plan_free(p);
    /* One rank, but op 1 reads a slot nobody wrote: the verifier's message. */
    p = plan_text("weft-plan 1\ncoll allreduce\nranks 1\nchunks 1\nscratch 1\n"
                  "op 0 copy 0:scratch[0] 0:out[0]\n");
    CHECK_ERR(weft_comm_run_plan(c, p, buf, buf, 1, WEFT_INT32, WEFT_SUM, &d), WEFT_EVERIFY);
    CHECK_CONTAINS(d.msg, "op 0");
    weft_plan_free(p);
    weft_comm_free(c);
}

int main(void)
{
    test_refusals();
    job ring4 = {.file = WEFT_SOURCE_DIR "/tests/fixtures/plans/ring_allreduce_4.plan", .count = 4};
    job ring3 = {.file = WEFT_SOURCE_DIR "/tests/fixtures/sim-ring3-allreduce.plan", .count = 3};
    job oop = {.text = out_of_place_2, .count = 2};
    job ag = {.text = allgather_3, .count = 1};
    job bc = {.text = broadcast_3, .count = 2};
    job sc = {.text = scratch_2, .count = 1};
    job db = {.text = dbtree_4, .count = 2, .dbtree = true};
    run(4, WEFT_TRANSPORT_SHM, &ring4, "ring4 shm");
    run(4, WEFT_TRANSPORT_TCP, &ring4, "ring4 tcp");
    run(3, WEFT_TRANSPORT_SHM, &ring3, "ring3 shm");
    run(2, WEFT_TRANSPORT_TCP, &oop, "out-of-place tcp");
    run(3, WEFT_TRANSPORT_SHM, &ag, "allgather shm");
    run(3, WEFT_TRANSPORT_TCP, &bc, "broadcast tcp");
    run(2, WEFT_TRANSPORT_SHM, &sc, "scratch shm");
    run(4, WEFT_TRANSPORT_TCP, &db, "dbtree tcp");
    run(4, WEFT_TRANSPORT_SHM, &db, "dbtree shm");
    return weft_test_done();
}
