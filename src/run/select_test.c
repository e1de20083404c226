/* Which schedule runs: ranking by the shared-link estimate on a fabric (the
 * choice recomputed here independently from the public synth and plan
 * APIs), forced algorithms and plans and the errors when they do not fit,
 * the info log line, results of chosen plans checked exactly, and the init
 * check that every rank has the same fabric, algorithm and plan (one rank
 * given a different WEFT_ALGO). Forked ranks on shared memory and TCP. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/testing.h"
#include "run/exec_plan.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"
#include "weft/log.h"
#include "weft/synth.h"
#include "weft/tuning.h"

#define RING4 WEFT_SOURCE_DIR "/tests/fixtures/plans/ring_allreduce_4.plan"

static char log_lines[8][WEFT_DIAG_MSG_SIZE + 64];
static int log_count;

static void sink(weft_log_level level, const char *line, void *arg)
{
    (void)level;
    (void)arg;
    if (log_count < 8)
        snprintf(log_lines[log_count], sizeof log_lines[0], "%s", line);
    log_count++;
}

/* The fastest classic algorithm for coll at `bytes` on spec by the
 * shared-link estimate (with the executor's slices; weft_plan_shared_before),
 * recomputed from the public APIs: what the ranked choice must be. */
static const char *expected_best(const char *spec, weft_coll coll, uint32_t root, double bytes)
{
    static char best[64];
    weft_topo *t = NULL;
    CHECK_ERR(weft_topo_from_spec(spec, NULL, &t, NULL), WEFT_OK);
    weft_plan_shared bt = {.seconds = INFINITY, .steps = UINT32_MAX};
    best[0] = '\0';
    for (size_t i = 0; t && i < weft_classic_count(); i++) {
        const char *name = weft_classic_get(i)->name;
        if (strchr(name, ':') || weft_classic_get(i)->composite ||
            !weft_classic_supports(name, coll))
            continue;
        weft_plan *p = NULL;
        weft_plan_shared est;
        weft_plan_shared_opts o;
        weft_plan_shared_opts_init(&o);
        if (weft_synth_classic(t, name, coll, (weft_rank){root}, &p, NULL) == WEFT_OK) {
            o.slices = weft__exec_plan_slices((uint64_t)bytes / weft_plan_size_chunks(p));
            if (weft_plan_shared_time(p, t, bytes, &o, &est, NULL) == WEFT_OK &&
                weft_plan_shared_before(&est, &bt)) {
                bt = est;
                snprintf(best, sizeof best, "%s", name);
            }
        }
        weft_plan_free(p);
    }
    weft_topo_free(t);
    return best;
}

static int32_t val(uint32_t r, size_t i)
{
    return (int32_t)((r * 7 + i * 3) % 11) - 5;
}

/* Every collective through the selection, results exact. */
static void run_all(weft_comm *c, size_t count)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    int32_t *s = malloc((count * n + 1) * 4), *r = malloc((count * n + 1) * 4);
    size_t bad = 0;
    for (size_t i = 0; i < count * n; i++)
        s[i] = val(me, i);
    CHECK_ERR(weft_allreduce(c, s, r, count, WEFT_INT32, WEFT_SUM, NULL), WEFT_OK);
    for (size_t i = 0; i < count; i++) {
        int32_t w = 0;
        for (uint32_t k = 0; k < n; k++)
            w += val(k, i);
        bad += r[i] != w;
    }
    CHECK_ERR(weft_reduce(c, s, me == 2 ? r : NULL, count, WEFT_INT32, WEFT_MAX, 2, NULL), WEFT_OK);
    for (size_t i = 0; me == 2 && i < count; i++) {
        int32_t w = val(0, i);
        for (uint32_t k = 1; k < n; k++)
            w = val(k, i) > w ? val(k, i) : w;
        bad += r[i] != w;
    }
    CHECK_ERR(weft_alltoall(c, s, r, count, WEFT_INT32, NULL), WEFT_OK);
    for (uint32_t k = 0; k < n; k++)
        for (size_t i = 0; i < count; i++)
            bad += r[k * count + i] != val(k, me * count + i);
    CHECK_ERR(weft_allgather(c, s, r, count, WEFT_INT32, NULL), WEFT_OK);
    for (uint32_t k = 0; k < n; k++)
        for (size_t i = 0; i < count; i++)
            bad += r[k * count + i] != val(k, i);
    CHECK_ERR(weft_reduce_scatter(c, s, r, count, WEFT_INT32, WEFT_SUM, NULL), WEFT_OK);
    for (size_t i = 0; i < count; i++) {
        int32_t w = 0;
        for (uint32_t k = 0; k < n; k++)
            w += val(k, me * count + i);
        bad += r[i] != w;
    }
    CHECK_ERR(weft_broadcast(c, s, r, count, WEFT_INT32, 1, NULL), WEFT_OK);
    for (size_t i = 0; i < count; i++)
        bad += r[i] != val(1, i);
    CHECK_INT(bad, 0);
    free(s);
    free(r);
}

/* Fabric switch:4, nothing forced: ranked choices. */
static int ranked(weft_comm *c, void *arg)
{
    (void)arg;
    weft_log_set_sink(sink, NULL);
    weft_log_set_level(WEFT_LOG_INFO);
    weft_comm_choice ch;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_ALLREDUCE, 1024, WEFT_FLOAT, 0, &ch, &d), WEFT_OK);
    CHECK_INT(ch.source, WEFT_CHOICE_RANKED);
    CHECK_STR(ch.algo, expected_best("switch:4", WEFT_COLL_ALLREDUCE, 0, 4096));
    CHECK_INT(ch.bytes, 4096);
    CHECK(ch.estimate_s > 0);
    CHECK_CONTAINS(ch.reason, "by the shared-link estimate on switch:4 at 4096 B: ");
    CHECK_INT(log_count, 1);
    char want[512];
    snprintf(want, sizeof want, "weft INFO run: allreduce 4096 B: %s (fastest of ", ch.algo);
    CHECK_CONTAINS(log_lines[0], want);
    /* Same class, same decision, no new line; a new class logs again. */
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_ALLREDUCE, 1200, WEFT_FLOAT, 0, &ch, &d), WEFT_OK);
    CHECK_INT(log_count, 1);
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_ALLTOALL, 1 << 18, WEFT_INT8, 0, &ch, &d), WEFT_OK);
    CHECK_INT(ch.source, WEFT_CHOICE_RANKED);
    CHECK_INT(ch.bytes, 1 << 20);
    CHECK_STR(ch.algo, expected_best("switch:4", WEFT_COLL_ALLTOALL, 0, 1 << 20));
    CHECK_INT(log_count, 2);
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_REDUCE, 64, WEFT_DOUBLE, 3, &ch, &d), WEFT_OK);
    CHECK_STR(ch.algo, expected_best("switch:4", WEFT_COLL_REDUCE, 3, 512));
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_REDUCE, 64, WEFT_DOUBLE, 4, &ch, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "comm: root 4 is not in 0 .. 3");
    run_all(c, 1024); /* multiples of every plan's chunks */
    run_all(c, 1009); /* whatever fits, or the built-in schedule */
    run_all(c, 0);
    weft_log_set_sink(NULL, NULL);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

#define NETNS_TOPO WEFT_SOURCE_DIR "/tests/netns/fabric.topo"

/* The emulated fabric of tests/netns (four hosts, one at a fifth of the
 * others' bandwidth): the ranking follows the simulator where alpha-beta
 * did not. At 16 MiB allreduce weft sim (with the executor's slices) has
 * dbtree fastest (2.73 s at 64 MiB vs 4.09 s for ring and biring), while
 * alpha-beta ranked biring first, twice as fast as ring; allgather: the
 * simulator has hd, rd and bruck (2 steps) ahead of ring and biring (3). */
static int ranked_netns(weft_comm *c, void *arg)
{
    (void)arg;
    weft_comm_choice ch;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_ALLREDUCE, 4 << 20, WEFT_FLOAT, 0, &ch, &d), WEFT_OK);
    CHECK_INT(ch.source, WEFT_CHOICE_RANKED);
    CHECK_STR(ch.algo, "dbtree");
    CHECK_STR(ch.algo, expected_best(NETNS_TOPO, WEFT_COLL_ALLREDUCE, 0, 16 << 20));
    CHECK_CONTAINS(ch.reason, "fastest of 7 by the shared-link estimate on "); /* rings:auto too */
    CHECK_CONTAINS(ch.reason, "fabric.topo at 16777216 B: ");
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_ALLGATHER, 1 << 18, WEFT_FLOAT, 0, &ch, &d), WEFT_OK);
    CHECK_STR(ch.algo, "hd");
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_ALLREDUCE, 256, WEFT_FLOAT, 0, &ch, &d), WEFT_OK);
    CHECK_STR(ch.algo, expected_best(NETNS_TOPO, WEFT_COLL_ALLREDUCE, 0, 1024));
    CHECK(strcmp(ch.algo, "biring") != 0);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

/* WEFT_ALGO=ring without a fabric: ring on switch:4, errors when it does
 * not fit. */
static int forced_algo(weft_comm *c, void *arg)
{
    (void)arg;
    weft_comm_choice ch;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_ALLREDUCE, 4096, WEFT_INT32, 0, &ch, &d), WEFT_OK);
    CHECK_INT(ch.source, WEFT_CHOICE_ALGO);
    CHECK_STR(ch.algo, "ring");
    CHECK_STR(ch.reason, "forced by WEFT_ALGO, on switch:4");
    int32_t v[8] = {0};
    CHECK_ERR(weft_alltoall(c, v, v, 2, WEFT_INT32, &d), WEFT_EUNSUPPORTED);
    CHECK_CONTAINS(d.msg, "comm: algorithm ring (WEFT_ALGO) for alltoall on switch:4: ");
    CHECK_ERR(weft_allreduce(c, v, v, 3, WEFT_INT32, WEFT_SUM, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "comm: count 3 is not a multiple of the 4 chunks of algorithm ring "
                     "(WEFT_ALGO) for allreduce on switch:4");
    CHECK(!weft_comm_failed(c));
    int32_t *s = malloc(1024 * 4), *r = malloc(1024 * 4);
    for (int i = 0; i < 1024; i++)
        s[i] = (int32_t)(weft_comm_rank(c) + 1) * i;
    CHECK_ERR(weft_allreduce(c, s, r, 1024, WEFT_INT32, WEFT_SUM, &d), WEFT_OK);
    size_t bad = 0;
    for (int i = 0; i < 1024; i++)
        bad += r[i] != 10 * i;
    CHECK_INT(bad, 0);
    free(s);
    free(r);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

/* The plan file forced_plan runs: RING4, or its copy in a deep folder. */
static const char *plan_path = RING4;

/* WEFT_PLAN: only its collective, count in whole chunks; the choice, the
 * info line and the messages name plan_path whole. */
static int forced_plan(weft_comm *c, void *arg)
{
    (void)arg;
    uint32_t me = weft_comm_rank(c);
    weft_comm_choice ch;
    weft_diag d;
    weft_diag_clear(&d);
    int32_t v[8], w[8];
    char want[WEFT_DIAG_MSG_SIZE];
    for (int i = 0; i < 8; i++)
        v[i] = (int32_t)(me * 10 + (uint32_t)i);
    weft_log_set_level(WEFT_LOG_INFO);
    weft_log_set_sink(sink, NULL);
    log_count = 0;
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_ALLREDUCE, 8, WEFT_INT32, 0, &ch, &d), WEFT_OK);
    weft_log_set_sink(NULL, NULL);
    CHECK_INT(ch.source, WEFT_CHOICE_PLAN);
    CHECK_STR(ch.reason, "forced by WEFT_PLAN");
    CHECK_STR(ch.algo, plan_path);
    CHECK_INT(log_count, 1);
    snprintf(want, sizeof want, "weft INFO run: allreduce 32 B: %s (forced by WEFT_PLAN)",
             plan_path);
    CHECK_STR(log_lines[0], want);
    CHECK_ERR(weft_allreduce(c, v, w, 8, WEFT_INT32, WEFT_SUM, &d), WEFT_OK);
    size_t bad = 0;
    for (int i = 0; i < 8; i++)
        bad += w[i] != 60 + 4 * i;
    CHECK_INT(bad, 0);
    CHECK_ERR(weft_allgather(c, v, w, 2, WEFT_INT32, &d), WEFT_EINVAL);
    snprintf(want, sizeof want,
             "comm: the plan %s (WEFT_PLAN) is for allreduce; it cannot run allgather", plan_path);
    CHECK_STR(d.msg, want);
    CHECK_ERR(weft_allreduce(c, v, w, 6, WEFT_INT32, WEFT_SUM, &d), WEFT_EINVAL);
    snprintf(want, sizeof want,
             "comm: count 6 is not a multiple of the 4 chunks of the plan %s (WEFT_PLAN)",
             plan_path);
    CHECK_STR(d.msg, want);
    CHECK(!weft_comm_failed(c));
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

/* A tuning table for switch:4 (written by make_table): allgather,
 * reducescatter, allreduce at 1 KiB and 1 MiB, broadcast; no reduce and no
 * alltoall. */
static char table_path[64];
static char table2_path[64];

static void write_table(char *path, double ring_ar)
{
    weft_topo *t = NULL;
    CHECK_ERR(weft_topo_preset("switch:4", &t, NULL), WEFT_OK);
    weft_tuning *tt = NULL;
    CHECK_ERR(weft_tuning_new(t, "switch:4", "slices=1 alpha=0", &tt, NULL), WEFT_OK);
    const char *ag[] = {"bruck", "ring"}, *rs[] = {"ring"}, *ar[] = {"hd", "ring"},
               *big[] = {"optimal", "ring"}, *bc[] = {"binomial"};
    const double t_ag[] = {1e-6, 2e-6}, t_rs[] = {3e-6}, t_ar[] = {1e-6, ring_ar},
                 t_big[] = {1e-4, 2e-4}, t_bc[] = {5e-6};
    CHECK_ERR(weft_tuning_add(tt, WEFT_COLL_ALLREDUCE, 1024, 2, ar, t_ar, NULL), WEFT_OK);
    CHECK_ERR(weft_tuning_add(tt, WEFT_COLL_ALLREDUCE, 1 << 20, 2, big, t_big, NULL), WEFT_OK);
    CHECK_ERR(weft_tuning_add(tt, WEFT_COLL_ALLGATHER, 8, 2, ag, t_ag, NULL), WEFT_OK);
    CHECK_ERR(weft_tuning_add(tt, WEFT_COLL_REDUCESCATTER, 8, 1, rs, t_rs, NULL), WEFT_OK);
    CHECK_ERR(weft_tuning_add(tt, WEFT_COLL_BROADCAST, 8, 1, bc, t_bc, NULL), WEFT_OK);
    strcpy(path, "/tmp/weft-tune-XXXXXX");
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    CHECK_ERR(weft_tuning_write(tt, f), WEFT_OK);
    fclose(f);
    weft_tuning_free(tt);
    weft_topo_free(t);
}

/* Fabric switch:4 with the table: the choice follows it. */
static int tuned(weft_comm *c, void *arg)
{
    (void)arg;
    weft_log_set_sink(sink, NULL);
    weft_log_set_level(WEFT_LOG_INFO);
    log_count = 0;
    weft_comm_choice ch;
    weft_diag d;
    weft_diag_clear(&d);
    char want[512];
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_ALLREDUCE, 1024, WEFT_FLOAT, 0, &ch, &d), WEFT_OK);
    CHECK_INT(ch.source, WEFT_CHOICE_TUNED);
    CHECK_STR(ch.algo, "hd");
    CHECK(ch.estimate_s == 1e-6);
    snprintf(want, sizeof want,
             "fastest of 2 by simulation (table %s:10) on switch:4 at 1024 B: 1 us; next ring 2 us",
             table_path);
    CHECK_STR(ch.reason, want);
    CHECK_INT(log_count, 1);
    snprintf(want, sizeof want,
             "weft INFO run: allreduce 4096 B: hd (fastest of 2 by simulation "
             "(table %s:10)",
             table_path);
    CHECK_CONTAINS(log_lines[0], want);
    /* Above the largest size: the last entry. */
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_ALLREDUCE, 1 << 22, WEFT_FLOAT, 0, &ch, &d), WEFT_OK);
    CHECK_STR(ch.algo, "optimal");
    CHECK_CONTAINS(ch.reason, ":11) on switch:4 at 1048576 B: 100 us; next ring 200 us");
    /* A count hd's chunks do not divide, but ring's do not either: built-in. */
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_ALLREDUCE, 1023, WEFT_FLOAT, 0, &ch, &d), WEFT_OK);
    CHECK_INT(ch.source, WEFT_CHOICE_BUILTIN);
    snprintf(want, sizeof want,
             "count 1023 is not a multiple of the chunks of any of the 2 plans of the tuning "
             "table %s:10; built-in schedule",
             table_path);
    CHECK_STR(ch.reason, want);
    /* Below the smallest size: the first entry; rooted at the call's root. */
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_BROADCAST, 1, WEFT_INT8, 3, &ch, &d), WEFT_OK);
    CHECK_STR(ch.algo, "binomial");
    CHECK_INT(ch.source, WEFT_CHOICE_TUNED);
    /* Not in the table: the shared-link estimate, and the report says so. */
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_ALLTOALL, 256, WEFT_INT8, 0, &ch, &d), WEFT_OK);
    CHECK_INT(ch.source, WEFT_CHOICE_RANKED);
    CHECK_STR(ch.algo, expected_best("switch:4", WEFT_COLL_ALLTOALL, 0, 1024));
    CHECK_CONTAINS(ch.reason, "not in the tuning table; fastest of ");
    run_all(c, 1024);
    run_all(c, 1009);
    run_all(c, 0);
    weft_log_set_sink(NULL, NULL);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

/* Rank 2 is given another table for the same fabric: init fails on every
 * rank naming the table. */
static int tuning_disagree_child(const weft_comm_config *tmpl, void *arg)
{
    (void)arg;
    weft_comm_config cfg = *tmpl;
    cfg.fabric = "switch:3";
    cfg.tuning = tmpl->rank == 2 ? table2_path : table_path;
    weft_diag d;
    weft_diag_clear(&d);
    weft_comm *c = NULL;
    weft_err e = weft_comm_init(&cfg, &c, &d);
    weft_comm_free(c);
    if (e != WEFT_EINVAL)
        return 91;
    if (!strstr(d.msg, "ranks disagree on the tuning table (WEFT_TUNING): rank 2 has hash ")) {
        fprintf(stderr, "rank %u: %s\n", tmpl->rank, d.msg);
        return 92;
    }
    return 0;
}

static void test_tuning_init(void)
{
    /* Tables for switch:3 that differ in one time. */
    char p1[64], p2[64];
    weft_topo *t = NULL;
    CHECK_ERR(weft_topo_preset("switch:3", &t, NULL), WEFT_OK);
    for (int k = 0; k < 2; k++) {
        weft_tuning *tt = NULL;
        CHECK_ERR(weft_tuning_new(t, "switch:3", NULL, &tt, NULL), WEFT_OK);
        const char *n[] = {"ring"};
        const double v[] = {k ? 2e-6 : 1e-6};
        CHECK_ERR(weft_tuning_add(tt, WEFT_COLL_ALLREDUCE, 8, 1, n, v, NULL), WEFT_OK);
        char *path = k ? p2 : p1;
        strcpy(path, "/tmp/weft-tune-XXXXXX");
        int fd = mkstemp(path);
        FILE *f = fdopen(fd, "w");
        CHECK_ERR(weft_tuning_write(tt, f), WEFT_OK);
        fclose(f);
        weft_tuning_free(tt);
    }
    weft_topo_free(t);
    strcpy(table_path, p1);
    strcpy(table2_path, p2);
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = WEFT_TRANSPORT_SHM;
    cfg.timeout_ms = 8000;
    int codes[3] = {-1, -1, -1};
    CHECK_INT(weft__test_ranks(3, &cfg, tuning_disagree_child, NULL, NULL, 20000, codes, NULL), 0);
    for (int r = 0; r < 3; r++)
        CHECK_INT(codes[r], 0);
    unlink(p1);
    unlink(p2);
}

typedef struct variant {
    const char *fabric, *algo, *plan, *tuning;
} variant;

static void run(uint32_t n, weft_transport_choice t, variant v, weft__comm_body fn)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = t;
    cfg.timeout_ms = 8000;
    cfg.fabric = v.fabric;
    cfg.algo = v.algo;
    cfg.plan_file = v.plan;
    cfg.tuning = v.tuning;
    weft__test_comm_ranks_ok(n, &cfg, fn, NULL, 30000, v.fabric ? v.fabric : "select");
}

/* Rank 1 gets WEFT_ALGO=hd, the others WEFT_ALGO=ring, through the
 * environment: every rank's init fails naming the algorithm and rank 1. */
static int disagree_child(const weft_comm_config *tmpl, void *arg)
{
    (void)arg;
    setenv("WEFT_ALGO", tmpl->rank == 1 ? "hd" : "ring", 1);
    weft_comm_config cfg = *tmpl;
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_comm_config_from_env_options(&cfg, &d))
        return 90;
    weft_comm *c = NULL;
    weft_err e = weft_comm_init(&cfg, &c, &d);
    weft_comm_free(c);
    if (e != WEFT_EINVAL)
        return 91;
    if (!strstr(d.msg, "ranks disagree on the algorithm (WEFT_ALGO): rank 1 has hash ")) {
        fprintf(stderr, "rank %u: %s\n", tmpl->rank, d.msg);
        return 92;
    }
    return 0;
}

static void test_disagree(weft_transport_choice t)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = t;
    cfg.timeout_ms = 8000;
    int codes[3] = {-1, -1, -1};
    CHECK_INT(weft__test_ranks(3, &cfg, disagree_child, NULL, NULL, 20000, codes, NULL), 0);
    for (int r = 0; r < 3; r++)
        CHECK_INT(codes[r], 0);
}

/* One rank: configuration errors, and the report without a fabric. */
static void test_single(void)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.addr = "127.0.0.1:0";
    weft_comm *c = NULL;
    weft_diag d;
    cfg.fabric = "switch:2";
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "comm: the fabric switch:2 (WEFT_FABRIC) has 2 ranks, the communicator 1");
    cfg.fabric = "nosuch:3";
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_ENOENT);
    CHECK_CONTAINS(d.msg, "nosuch:3");
    cfg.fabric = NULL;
    cfg.plan_file = RING4;
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_EINVAL);
    CHECK_CONTAINS(d.msg, "ring_allreduce_4.plan (WEFT_PLAN) is for 4 ranks, the communicator "
                          "has 1");
    cfg.algo = "ring";
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_EINVAL);
    CHECK_CONTAINS(d.msg, "comm: both an algorithm (WEFT_ALGO=ring) and a plan (WEFT_PLAN=");
    cfg.plan_file = WEFT_SOURCE_DIR "/tests/fixtures/plans/missing.plan";
    cfg.algo = NULL;
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_ENOENT);
    CHECK(c == NULL);
    cfg.plan_file = NULL;
    /* Tuning tables: made for another fabric, without a fabric, with a
     * forced algorithm, missing, malformed. */
    cfg.tuning = table_path;
    cfg.fabric = "switch:1";
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_EINVAL);
    char want[512];
    snprintf(want, sizeof want, "%s: the tuning table is for fabric switch:4 (hash ", table_path);
    CHECK_CONTAINS(d.msg, want);
    CHECK_CONTAINS(d.msg, ", 4 ranks); switch:1 has hash ");
    CHECK_CONTAINS(d.msg, " (1 ranks); run weft tune switch:1");
    cfg.fabric = NULL;
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_EINVAL);
    snprintf(want, sizeof want,
             "comm: the tuning table %s (WEFT_TUNING) needs the fabric it was made for "
             "(WEFT_FABRIC)",
             table_path);
    CHECK_STR(d.msg, want);
    cfg.algo = "ring";
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_EINVAL);
    snprintf(want, sizeof want,
             "comm: a tuning table (WEFT_TUNING=%s) and a forced algorithm (WEFT_ALGO=ring) "
             "exclude each other; give one",
             table_path);
    CHECK_STR(d.msg, want);
    cfg.algo = NULL;
    cfg.fabric = "switch:1";
    cfg.tuning = "/nonexistent/t.tune";
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_ENOENT);
    CHECK_STR(d.msg, "/nonexistent/t.tune: cannot open: No such file or directory");
    cfg.tuning = RING4;
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_EPARSE);
    CHECK_CONTAINS(d.msg, "ring_allreduce_4.plan:4: expected 'weft-tuning 1' (a weft tuning "
                          "table)");
    cfg.tuning = NULL;
    cfg.fabric = NULL;
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_OK);
    if (!c)
        return;
    weft_comm_choice ch;
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_ALLGATHER, 10, WEFT_HALF, 0, &ch, &d), WEFT_OK);
    CHECK_INT(ch.source, WEFT_CHOICE_BUILTIN);
    CHECK_STR(ch.algo, "builtin");
    CHECK_STR(ch.reason, "no fabric configured (WEFT_FABRIC)");
    CHECK_INT(ch.bytes, 20);
    CHECK_ERR(weft_comm_choose(c, WEFT_COLL_ALLGATHER, 10, (weft_dtype)50, 0, &ch, &d),
              WEFT_EINVAL);
    CHECK_STR(d.msg, "comm: invalid dtype 50");
    weft_comm_free(c);
    /* The environment: both forced is refused before anything starts. */
    setenv("WEFT_ALGO", "ring", 1);
    setenv("WEFT_PLAN", "x.plan", 1);
    weft_comm_config_init(&cfg);
    CHECK_ERR(weft_comm_config_from_env_options(&cfg, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "WEFT_ALGO=ring and WEFT_PLAN=x.plan: give one, not both");
    setenv("WEFT_PLAN", "", 1);
    setenv("WEFT_FABRIC", "ring:4", 1);
    setenv("WEFT_TUNING", "t.tune", 1);
    CHECK_ERR(weft_comm_config_from_env_options(&cfg, &d), WEFT_OK);
    CHECK_STR(cfg.tuning, "t.tune");
    unsetenv("WEFT_TUNING");
    CHECK_STR(cfg.algo, "ring");
    CHECK(cfg.plan_file == NULL);
    CHECK_STR(cfg.fabric, "ring:4");
    unsetenv("WEFT_ALGO");
    unsetenv("WEFT_PLAN");
    unsetenv("WEFT_FABRIC");
}

/* Under allocation failure: init with a fabric and a forced plan, and a
 * choice; every failing attempt returns WEFT_ENOMEM and frees what it
 * took. */
typedef struct oom_arg {
    const char *fabric, *plan, *tuning;
    weft_comm *c;
} oom_arg;

static weft_err oom_ctor(void *arg)
{
    oom_arg *a = arg;
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.addr = "127.0.0.1:0";
    cfg.fabric = a->fabric;
    cfg.plan_file = a->plan;
    cfg.tuning = a->tuning;
    weft_comm *c = NULL;
    weft_err e = weft_comm_init(&cfg, &c, NULL);
    if (e)
        return e;
    weft_comm_choice ch;
    e = weft_comm_choose(c, WEFT_COLL_ALLREDUCE, 4, WEFT_INT64, 0, &ch, NULL);
    if (!e && ch.source != (a->plan ? WEFT_CHOICE_PLAN : WEFT_CHOICE_BUILTIN))
        e = WEFT_EINVAL;
    if (e) {
        weft_comm_free(c);
        return e;
    }
    a->c = c;
    return WEFT_OK;
}

static void oom_dtor(void *arg)
{
    oom_arg *a = arg;
    weft_comm_free(a->c);
    a->c = NULL;
}

static void test_oom(void)
{
    oom_arg a = {"switch:1", NULL, NULL, NULL};
    CHECK(weft_test_oom_sweep("init with a fabric", oom_ctor, oom_dtor, &a) > 0);
    char path[] = "/tmp/weft-select-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    const char *text = "weft-plan 1\ncoll allreduce\nranks 1\nchunks 2\nscratch 1\ninplace no\n"
                       "op 0 copy 0:in[0] 0:scratch[0]\n"
                       "op 1 copy 0:scratch[0] 0:out[0] deps=0\n"
                       "op 2 copy 0:in[1] 0:out[1]\n";
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    oom_arg b = {NULL, path, NULL, NULL};
    CHECK(weft_test_oom_sweep("init with a plan", oom_ctor, oom_dtor, &b) > 0);
    unlink(path);
    /* A table for switch:1 (allgather only: the allreduce choice is then
     * ranked, and no classic builds on one rank, so built-in). */
    weft_topo *t = NULL;
    CHECK_ERR(weft_topo_preset("switch:1", &t, NULL), WEFT_OK);
    weft_tuning *tt = NULL;
    CHECK_ERR(weft_tuning_new(t, "switch:1", NULL, &tt, NULL), WEFT_OK);
    const char *names[] = {"ring"};
    const double times[] = {1e-6};
    CHECK_ERR(weft_tuning_add(tt, WEFT_COLL_ALLGATHER, 8, 1, names, times, NULL), WEFT_OK);
    strcpy(path, "/tmp/weft-select-XXXXXX");
    fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    CHECK_ERR(weft_tuning_write(tt, f), WEFT_OK);
    fclose(f);
    weft_tuning_free(tt);
    weft_topo_free(t);
    oom_arg c = {"switch:1", NULL, path, NULL};
    CHECK(weft_test_oom_sweep("init with a tuning table", oom_ctor, oom_dtor, &c) > 0);
    unlink(path);
}

/* A checkout far deeper than usual: DEEP_LEVELS folders of 200 characters
 * in a temporary folder, about 3,000 bytes of path (PATH_MAX is 4096).
 * A 64-byte copy of the plan's path once kept only its last 63 bytes. */
#define DEEP_LEVELS 15
static char deep_root[32];
static char deep_dir[4096];

/* Makes the folders and copies src into them as name; writes the copy's
 * path to out. False (after a failed check) when it cannot. */
static bool deep_copy(const char *src, const char *name, char *out, size_t cap)
{
    snprintf(deep_root, sizeof deep_root, "/tmp/weft-deep.XXXXXX");
    CHECK(mkdtemp(deep_root) != NULL);
    size_t n = (size_t)snprintf(deep_dir, sizeof deep_dir, "%s", deep_root);
    for (int k = 0; k < DEEP_LEVELS; k++) {
        deep_dir[n++] = '/';
        memset(deep_dir + n, 'a' + k, 200);
        n += 200;
        deep_dir[n] = '\0';
        if (mkdir(deep_dir, 0700) != 0) {
            CHECK(!"mkdir of a deep folder");
            return false;
        }
    }
    snprintf(out, cap, "%s/%s", deep_dir, name);
    size_t len = 0;
    char *text = weft_test_read_file(src, &len);
    FILE *f = text ? fopen(out, "wb") : NULL;
    bool ok = f && fwrite(text, 1, len, f) == len;
    if (f)
        ok = fclose(f) == 0 && ok;
    free(text);
    CHECK(ok);
    return ok;
}

/* Removes file and the folders deep_copy made. */
static void deep_remove(const char *file)
{
    unlink(file);
    for (int k = 0; k < DEEP_LEVELS; k++) {
        rmdir(deep_dir);
        *strrchr(deep_dir, '/') = '\0';
    }
    CHECK_INT(rmdir(deep_root), 0);
}

/* Init errors, the choice, the info line and the call errors name a plan,
 * a tuning table and a missing file by their whole deep paths. */
static void test_deep_paths(void)
{
    static char plan[sizeof deep_dir + 64], table[sizeof deep_dir + 64], want[WEFT_DIAG_MSG_SIZE];
    if (!deep_copy(RING4, "ring_allreduce_4.plan", plan, sizeof plan))
        return;
    CHECK(strlen(plan) > 3000);
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.addr = "127.0.0.1:0";
    weft_comm *c = NULL;
    weft_diag d;
    cfg.plan_file = plan;
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_EINVAL);
    snprintf(want, sizeof want,
             "comm: the plan %s (WEFT_PLAN) is for 4 ranks, the communicator has 1", plan);
    CHECK_STR(d.msg, want);
    cfg.plan_file = NULL;
    snprintf(table, sizeof table, "%s/missing.tune", deep_dir);
    cfg.tuning = table;
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_EINVAL);
    snprintf(want, sizeof want,
             "comm: the tuning table %s (WEFT_TUNING) needs the fabric it was made for "
             "(WEFT_FABRIC)",
             table);
    CHECK_STR(d.msg, want);
    cfg.fabric = "switch:1";
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_ENOENT);
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", table);
    CHECK_STR(d.msg, want);
    plan_path = plan;
    run(4, WEFT_TRANSPORT_SHM, (variant){NULL, NULL, plan, NULL}, forced_plan);
    plan_path = RING4;
    deep_remove(plan);
}

int main(int argc, char **argv)
{
    if (argc > 1) { /* one part, for debugging */
        variant v = {"switch:4", NULL, NULL, NULL};
        run(4, WEFT_TRANSPORT_SHM, v, ranked);
        return weft_test_done();
    }
    write_table(table_path, 2e-6);
    test_single();
    test_oom();
    run(4, WEFT_TRANSPORT_SHM, (variant){"switch:4", NULL, NULL, table_path}, tuned);
    run(4, WEFT_TRANSPORT_TCP, (variant){"switch:4", NULL, NULL, table_path}, tuned);
    unlink(table_path);
    test_tuning_init();
    run(4, WEFT_TRANSPORT_SHM, (variant){"switch:4", NULL, NULL, NULL}, ranked);
    run(4, WEFT_TRANSPORT_TCP, (variant){"switch:4", NULL, NULL, NULL}, ranked);
    run(4, WEFT_TRANSPORT_SHM, (variant){NETNS_TOPO, NULL, NULL, NULL}, ranked_netns);
    run(4, WEFT_TRANSPORT_SHM, (variant){NULL, "ring", NULL, NULL}, forced_algo);
    run(4, WEFT_TRANSPORT_SHM, (variant){NULL, NULL, RING4, NULL}, forced_plan);
    run(4, WEFT_TRANSPORT_TCP, (variant){NULL, NULL, RING4, NULL}, forced_plan);
    test_deep_paths();
    test_disagree(WEFT_TRANSPORT_SHM);
    test_disagree(WEFT_TRANSPORT_TCP);
    return weft_test_done();
}
