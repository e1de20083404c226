/* libweft_nccl_tuner.so loaded the way NCCL loads a tuner plugin
 * (src/tuner/nccl_tuner_abi.h): dlopen(RTLD_LAZY | RTLD_LOCAL), the
 * versioned symbols newest first, init with a logger, getCollInfo with a
 * cost table NCCL's shape filled the way NCCL fills it, finalize.
 *
 * Run as: nccl_tuner_test PATH/libweft_nccl_tuner.so. On every GPU preset
 * (those whose ranks have arch=) and communicators of the whole fabric,
 * one node, and fewer GPUs per node, for NCCL's five tuned collectives at
 * 8 B .. 1 GiB: the entries weft models hold weft_nccl_cost_of's cost (us),
 * the others are as NCCL left them, the least entry is weft_nccl_choose's
 * choice for the communicator's sub-fabric (tuner_fabric_map, linked in
 * here too) and *nChannels its channels. Then the refusals: WEFT_FABRIC
 * unset, malformed, too small, counts that do not divide. */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "tuner/nccl_tuner_abi.h"
#include "tuner/tuner.h"
#include "weft/topo.h"

static const char *const symbols[] = {NCCL_TUNER_SYMBOL_V6, NCCL_TUNER_SYMBOL_V5,
                                      NCCL_TUNER_SYMBOL_V4, NCCL_TUNER_SYMBOL_V3,
                                      NCCL_TUNER_SYMBOL_V2};
static const nccl_tuner_v6 *v6;
static const nccl_tuner_v5 *v5;
static const nccl_tuner_v4 *v4;
static const nccl_tuner_v3 *v3;
static const nccl_tuner_v2 *v2;

/* The logger NCCL passes (ncclDebugLog): the last line and its level. */
static char last_line[8192];
static nccl_log_level last_level;
static int lines;
__attribute__((format(printf, 5, 6))) static void
logger(nccl_log_level level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_line, sizeof last_line, fmt, ap);
    va_end(ap);
    last_level = level;
    lines++;
    CHECK(flags & NCCL_SUBSYS_TUNING);
    CHECK(file != NULL && line > 0);
}

#define MARK 1.0e6f /* NCCL's own cost of an entry, in the prefilled table */

/* The table NCCL would hand over for func on fabric f: -1 everywhere, a
 * cost wherever NCCL runs the pair (the ring for every collective, the tree
 * for allreduce, LL128 on NVLink only: NCCL's rules as weft_nccl_cost_of
 * restates them), and also on NVLS, CollNet and PAT when `others`. */
static void prefill(float t[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], const weft_nccl_fabric *f,
                    int func, bool others)
{
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
            t[a][p] = NCCL_ALGO_PROTO_IGNORE;
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++) {
        bool on = a == NCCL_ALGO_RING || (a == NCCL_ALGO_TREE && func == NCCL_FUNC_ALLREDUCE) ||
                  (a > NCCL_ALGO_RING && others);
        for (int p = 0; p < NCCL_NUM_PROTOCOLS && on; p++)
            if (p != NCCL_PROTO_LL128 || f->nvlink || a > NCCL_ALGO_RING)
                t[a][p] = MARK + (float)(a * 3 + p);
    }
}

/* NCCL's algorithm index -> weft's, and back. */
static const weft_nccl_algo weft_algo[NCCL_NUM_ALGORITHMS] = {
    [NCCL_ALGO_TREE] = WEFT_NCCL_TREE,
    [NCCL_ALGO_RING] = WEFT_NCCL_RING,
    [NCCL_ALGO_COLLNET_DIRECT] = WEFT_NCCL_COLLNET_DIRECT,
    [NCCL_ALGO_COLLNET_CHAIN] = WEFT_NCCL_COLLNET_CHAIN,
    [NCCL_ALGO_NVLS] = WEFT_NCCL_NVLS,
    [NCCL_ALGO_NVLS_TREE] = WEFT_NCCL_NVLS_TREE,
    [NCCL_ALGO_PAT] = WEFT_NCCL_PAT,
};
static int nccl_algo(weft_nccl_algo a)
{
    for (int k = 0; k < NCCL_NUM_ALGORITHMS; k++)
        if (weft_algo[k] == a)
            return k;
    return -1;
}

static const weft_coll func_coll[5] = {WEFT_COLL_BROADCAST, WEFT_COLL_REDUCE, WEFT_COLL_ALLGATHER,
                                       WEFT_COLL_REDUCESCATTER, WEFT_COLL_ALLREDUCE};

/* NCCL's pick from a table (topoGetAlgoInfo): the least entry >= 0. */
static void nccl_pick(float t[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], int *algo, int *proto)
{
    float least = INFINITY;
    *algo = NCCL_ALGO_UNDEF;
    *proto = NCCL_PROTO_UNDEF;
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
            if (t[a][p] >= 0 && t[a][p] < least) {
                least = t[a][p];
                *algo = a;
                *proto = p;
            }
}

static long checked_sizes;

/* One call of getCollInfo (v6) for func at bytes, checked against weft's
 * model on f; others: NVLS, CollNet and PAT prefilled too. */
static void check_call(void *ctx, const weft_nccl_fabric *f, int func, size_t bytes, bool others,
                       const char *what)
{
    float t[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS],
        before[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    prefill(t, f, func, others);
    memcpy(before, t, sizeof t);
    int channels = 0;
    CHECK_INT(v6->getCollInfo(ctx, (nccl_func)func, bytes, 1, (float **)t, NCCL_NUM_ALGORITHMS,
                              NCCL_NUM_PROTOCOLS, 0, &channels),
              NCCL_SUCCESS);
    CHECK_INT(channels, f->channels);
    weft_coll coll = func_coll[func];
    int bad = 0;
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++) {
        for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
            weft_nccl_cost c;
            bool models =
                weft_nccl_cost_of(f, coll, weft_algo[a], (weft_proto)p, (double)bytes, &c);
            if (models && before[a][p] >= 0) {
                float want = (float)(c.time_s * 1e6);
                bool ok = isfinite(t[a][p]) && t[a][p] > 0 && t[a][p] != before[a][p] &&
                          fabsf(t[a][p] - want) <= 1e-6f * want;
                if (!ok) {
                    bad++;
                    fprintf(stderr, "%s func %d %zu B [%d][%d]: %g, weft's model %g\n", what, func,
                            bytes, a, p, (double)t[a][p], (double)want);
                }
            } else if (t[a][p] != before[a][p]) {
                bad++;
                fprintf(stderr, "%s func %d %zu B [%d][%d]: %g, was %g (not weft's to set)\n", what,
                        func, bytes, a, p, (double)t[a][p], (double)before[a][p]);
            }
        }
    }
    CHECK_INT(bad, 0);
    /* NCCL then runs weft's choice among the pairs NCCL can run here:
     * with every algorithm enabled, weft_nccl_choose's own. */
    weft_nccl_choice ch;
    weft_diag d;
    CHECK_ERR(weft_nccl_choose(f, coll, (double)bytes, &ch, &d), WEFT_OK);
    int want_a = -1, want_p = -1;
    double least = INFINITY;
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
            weft_nccl_cost c;
            if (before[a][p] >= 0 &&
                weft_nccl_cost_of(f, coll, weft_algo[a], (weft_proto)p, (double)bytes, &c) &&
                c.time_s < least) {
                least = c.time_s;
                want_a = a;
                want_p = p;
            }
        }
    /* weft_nccl_choose names one of NCCL's algorithms (an index of -1
     * would read before the table: gcc -O3 warns of it, -Warray-bounds). */
    int chosen_a = nccl_algo(ch.algo);
    CHECK(chosen_a >= 0 && (int)ch.proto >= 0 && (int)ch.proto < NCCL_NUM_PROTOCOLS);
    if (others && want_a >= 0 && chosen_a >= 0 && (int)ch.proto >= 0 &&
        (int)ch.proto < NCCL_NUM_PROTOCOLS && before[chosen_a][ch.proto] >= 0)
        CHECK(want_a == chosen_a && want_p == (int)ch.proto);
    int a, p;
    nccl_pick(t, &a, &p);
    /* A float tie is no disagreement: both entries then cost the same. */
    if (a != want_a || p != want_p) {
        if (a < 0 || want_a < 0 || t[a][p] != t[want_a][want_p]) {
            fprintf(stderr, "%s func %d %zu B: NCCL would run [%d][%d], weft chooses [%d][%d]\n",
                    what, func, bytes, a, p, want_a, want_p);
            CHECK(false);
        }
    } else {
        CHECK(true);
    }
    if (others) {
        /* v2 told that CollNet and NVLS run: the least of every algorithm
         * but PAT (v2's NCCL has none). */
        int a2 = -1, p2 = -1, va = NCCL_ALGO_UNDEF, vp = NCCL_PROTO_UNDEF;
        least = INFINITY;
        for (int k = 0; k <= NCCL_ALGO_NVLS_TREE; k++)
            for (int q = 0; q < NCCL_NUM_PROTOCOLS; q++) {
                weft_nccl_cost c;
                if (weft_nccl_cost_of(f, coll, weft_algo[k], (weft_proto)q, (double)bytes, &c) &&
                    c.time_s < least) {
                    least = c.time_s;
                    a2 = k;
                    p2 = q;
                }
            }
        CHECK_INT(v2->getCollInfo(ctx, (nccl_func)func, bytes, 1, 1, 1, &va, &vp, &channels),
                  NCCL_SUCCESS);
        CHECK(va == a2 && vp == p2);
        return;
    }
    /* The same call again comes from the cache and gives the same table. */
    float again[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    prefill(again, f, func, false);
    channels = 0;
    CHECK_INT(v6->getCollInfo(ctx, (nccl_func)func, bytes, 1, (float **)again, NCCL_NUM_ALGORITHMS,
                              NCCL_NUM_PROTOCOLS, 1, &channels),
              NCCL_SUCCESS);
    CHECK(memcmp(again, t, sizeof t) == 0);
    /* v2 returns the choice itself. */
    int va = NCCL_ALGO_UNDEF, vp = NCCL_PROTO_UNDEF;
    channels = 0;
    CHECK_INT(v2->getCollInfo(ctx, (nccl_func)func, bytes, 0, 0, 1, &va, &vp, &channels),
              NCCL_SUCCESS);
    CHECK(va == want_a && vp == want_p);
    CHECK_INT(channels, f->channels);
    checked_sizes++;
}

/* The sizes: every power of two from 8 B to 1 GiB, one less, and 1.5 x;
 * then the sizes around the ring's plateau inside a class (64 B per
 * channel and rank). */
static void check_comm(const char *spec, size_t ranks, size_t nodes)
{
    char what[128];
    snprintf(what, sizeof what, "%s (%zu ranks, %zu nodes)", spec, ranks, nodes);
    weft_nccl_fabric f;
    weft_diag d;
    weft_diag_clear(&d);
    if (tuner_fabric_map(spec, ranks, nodes, &f, &d)) {
        fprintf(stderr, "%s: %s\n", what, d.msg);
        CHECK(false);
        return;
    }
    setenv("WEFT_FABRIC", spec, 1);
    void *ctx = NULL;
    lines = 0;
    CHECK_INT(v6->init(&ctx, 42, ranks, nodes, logger, NULL, NULL), NCCL_SUCCESS);
    CHECK(ctx != NULL);
    CHECK_INT(lines, 1);
    CHECK_INT(last_level, NCCL_LOG_INFO);
    char want[512];
    snprintf(want, sizeof want, "TUNER/weft: WEFT_FABRIC=%s, %zu ranks on %zu nodes: %u channels",
             spec, ranks, nodes, f.channels);
    CHECK(strncmp(last_line, want, strlen(want)) == 0);
    if (!ctx)
        return;
    for (int func = 0; func < 5; func++) {
        for (size_t b = 8; b <= ((size_t)1 << 30); b *= 2) {
            check_call(ctx, &f, func, b, false, what);
            check_call(ctx, &f, func, b - 1, false, what);
            check_call(ctx, &f, func, b + b / 2, false, what);
        }
        size_t step = (size_t)64 * f.channels * f.ranks;
        for (size_t b = step - 2; b <= step + 1; b++)
            check_call(ctx, &f, func, b, false, what);
        check_call(ctx, &f, func, 1 << 20, true, what);
    }
    /* Not tuned through the table: send/recv (5), all-to-all (8). */
    float t[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS],
        before[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    int funcs[2] = {NCCL_FUNC_SENDRECV, 8};
    for (int i = 0; i < 2; i++) {
        prefill(t, &f, NCCL_FUNC_ALLREDUCE, true);
        memcpy(before, t, sizeof t);
        int channels = 0;
        CHECK_INT(v6->getCollInfo(ctx, (nccl_func)funcs[i], 4096, 1, (float **)t,
                                  NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS, 0, &channels),
                  NCCL_SUCCESS);
        CHECK(memcmp(t, before, sizeof t) == 0);
        CHECK_INT(channels, 0);
    }
    /* A group of 4 operations: the ring pays its latency 4 times, the tree
     * once. */
    prefill(t, &f, NCCL_FUNC_ALLREDUCE, false);
    int channels = 0;
    CHECK_INT(v6->getCollInfo(ctx, NCCL_FUNC_ALLREDUCE, 4096, 4, (float **)t, NCCL_NUM_ALGORITHMS,
                              NCCL_NUM_PROTOCOLS, 0, &channels),
              NCCL_SUCCESS);
    for (int a = 0; a < 2; a++) {
        weft_nccl_cost c;
        CHECK(weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, a ? WEFT_NCCL_RING : WEFT_NCCL_TREE,
                                WEFT_PROTO_LL, 4096, &c));
        double us = (a ? 4 : 1) * c.lat_s * 1e6 + 4096 / (1e3 * c.algbw_gbps);
        CHECK(fabsf(t[a][NCCL_PROTO_LL] - (float)us) <= 1e-6f * (float)us);
    }
    CHECK_INT(v6->finalize(ctx), NCCL_SUCCESS);
}

/* The older layouts give the same answers as v6. */
static void check_versions(const char *spec, size_t ranks, size_t nodes)
{
    setenv("WEFT_FABRIC", spec, 1);
    void *c6 = NULL, *c5 = NULL, *c4 = NULL, *c3 = NULL, *c2 = NULL;
    CHECK_INT(v6->init(&c6, 1, ranks, nodes, logger, NULL, NULL), NCCL_SUCCESS);
    CHECK_CONTAINS(last_line, "(tuner ABI v6)");
    CHECK_INT(v5->init(&c5, 1, ranks, nodes, logger, NULL, NULL), NCCL_SUCCESS);
    CHECK_CONTAINS(last_line, "(tuner ABI v5)");
    CHECK_INT(v4->init(ranks, nodes, logger, &c4), NCCL_SUCCESS);
    CHECK_CONTAINS(last_line, "(tuner ABI v4)");
    CHECK_INT(v3->init(ranks, nodes, logger, &c3), NCCL_SUCCESS);
    CHECK_CONTAINS(last_line, "(tuner ABI v3)");
    CHECK_INT(v2->init(ranks, nodes, logger, &c2), NCCL_SUCCESS);
    CHECK_CONTAINS(last_line, "(tuner ABI v2)");
    if (!c6 || !c5 || !c4 || !c3 || !c2)
        return;
    float t6[7][3], t5[7][3], t4[7][3], t3[7][3];
    for (size_t b = 8; b <= ((size_t)1 << 30); b *= 16) {
        for (int func = 0; func < 5; func++) {
            for (int a = 0; a < 7; a++)
                for (int p = 0; p < 3; p++)
                    t6[a][p] = a < 2 ? MARK : NCCL_ALGO_PROTO_IGNORE;
            memcpy(t5, t6, sizeof t6);
            memcpy(t4, t6, sizeof t6);
            memcpy(t3, t6, sizeof t6);
            int n6 = 0, n5 = 0, n4 = 0, n3 = 0;
            CHECK_INT(v6->getCollInfo(c6, (nccl_func)func, b, 1, (float **)t6, 7, 3, 0, &n6), 0);
            CHECK_INT(v5->getCollInfo(c5, (nccl_func)func, b, 1, (float **)t5, 7, 3, 0, &n5), 0);
            CHECK_INT(v4->getCollInfo(c4, (nccl_func)func, b, 1, (float **)t4, 7, 3, 0, &n4), 0);
            CHECK_INT(v3->getCollInfo(c3, (nccl_func)func, b, 1, (float **)t3, 7, 3, &n3), 0);
            CHECK(memcmp(t6, t5, sizeof t6) == 0 && memcmp(t6, t4, sizeof t6) == 0 &&
                  memcmp(t6, t3, sizeof t6) == 0);
            CHECK(n6 > 0 && n6 == n5 && n6 == n4 && n6 == n3);
        }
    }
    /* An older NCCL's smaller table (6 algorithms, no PAT): rows past it
     * are not written. */
    float t[8][3];
    for (int a = 0; a < 8; a++)
        for (int p = 0; p < 3; p++)
            t[a][p] = MARK;
    int n = 0;
    CHECK_INT(v6->getCollInfo(c6, NCCL_FUNC_ALLREDUCE, 1 << 20, 1, (float **)t, 1, 3, 0, &n), 0);
    CHECK(t[0][0] != MARK && t[1][0] == MARK);
    CHECK_INT(v6->finalize(c6), 0);
    CHECK_INT(v5->finalize(c5), 0);
    CHECK_INT(v4->destroy(c4), 0);
    CHECK_INT(v3->destroy(c3), 0);
    CHECK_INT(v2->destroy(c2), 0);
}

/* init refuses: the result and the exact WARN line; the context pointer
 * is left as it was. */
static void check_refused(const char *spec, size_t ranks, size_t nodes, int result,
                          const char *line)
{
    if (spec)
        setenv("WEFT_FABRIC", spec, 1);
    else
        unsetenv("WEFT_FABRIC");
    void *ctx = (void *)&lines;
    lines = 0;
    last_line[0] = '\0';
    CHECK_INT(v6->init(&ctx, 7, ranks, nodes, logger, NULL, NULL), result);
    CHECK(ctx == (void *)&lines);
    CHECK_INT(lines, 1);
    CHECK_INT(last_level, NCCL_LOG_WARN);
    CHECK_STR(last_line, line);
}

/* Fabric sub-mapping: one node of h100:2 is h100:1's model; 16 nodes of
 * clos:hosts=32 are clos:hosts=16's. */
static void check_same_model(const char *spec, size_t ranks, size_t nodes, const char *whole)
{
    weft_nccl_fabric a, b;
    weft_diag d;
    CHECK_ERR(tuner_fabric_map(spec, ranks, nodes, &a, &d), WEFT_OK);
    weft_topo *t = NULL;
    CHECK_ERR(weft_topo_preset(whole, &t, &d), WEFT_OK);
    if (!t)
        return;
    CHECK_ERR(weft_nccl_fabric_get(t, &b, &d), WEFT_OK);
    weft_topo_free(t);
    CHECK_INT(a.ranks, b.ranks);
    CHECK_INT(a.hosts, b.hosts);
    CHECK_INT(a.per_host, b.per_host);
    CHECK_INT(a.search_channels, b.search_channels);
    CHECK(a.channel_gbps == b.channel_gbps);
    CHECK_INT(a.channels, b.channels);
    CHECK(a.rank_gbps == b.rank_gbps && a.arch == b.arch && a.nvlink == b.nvlink);
}

/* The mapping under a growing allocation budget: every failure is
 * WEFT_ENOMEM with nothing left allocated (the sub-fabric's builder
 * included). */
static weft_err map_one_node(void *arg)
{
    weft_nccl_fabric f;
    return tuner_fabric_map("h100:2", 8, 1, &f, arg);
}

static void no_free(void *arg) {}

/* Whether the preset's default spelling has GPUs (arch= on rank 0). */
static bool gpu_preset(const char *name, uint32_t *ranks, uint32_t *hosts)
{
    weft_topo *t = NULL;
    weft_diag d;
    if (weft_topo_preset(name, &t, &d))
        return false;
    bool gpu = weft_topo_node_attr(t, weft_topo_rank_node(t, (weft_rank){0}), "arch") != NULL;
    *ranks = weft_topo_num_ranks(t);
    *hosts = weft_topo_num_hosts(t);
    weft_topo_free(t);
    return gpu;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: nccl_tuner_test PATH/libweft_nccl_tuner.so\n");
        return 2;
    }
    /* As NCCL: dlopen, then the symbols newest first; the first found is
     * used. All five are there, and nothing of weft's own. */
    void *lib = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
    if (!lib)
        fprintf(stderr, "dlopen: %s\n", dlerror());
    CHECK(lib != NULL);
    if (!lib)
        return weft_test_done();
    void *sym[5];
    for (int i = 0; i < 5; i++) {
        sym[i] = dlsym(lib, symbols[i]);
        CHECK(sym[i] != NULL);
        if (!sym[i])
            return weft_test_done();
    }
    v6 = sym[0];
    v5 = sym[1];
    v4 = sym[2];
    v3 = sym[3];
    v2 = sym[4];
    CHECK_STR(v6->name, "weft");
    CHECK_STR(v5->name, "weft");
    CHECK_STR(v4->name, "weft");
    CHECK_STR(v3->name, "weft");
    CHECK_STR(v2->name, "weft");
    CHECK(v6->getChunkSize == NULL);
    CHECK(dlsym(lib, "weft_nccl_choose") == NULL);
    CHECK(dlsym(lib, "tuner_model_fill") == NULL);
    CHECK(dlsym(lib, "ncclTunerPlugin_v1") == NULL);

    /* Every GPU preset in its default spelling: the whole fabric, one of
     * its hosts, and half of each host's GPUs. */
    int presets = 0;
    for (size_t i = 0; i < weft_preset_count(); i++) {
        const char *name = weft_preset_get(i)->name;
        uint32_t ranks, hosts;
        if (!gpu_preset(name, &ranks, &hosts))
            continue;
        presets++;
        check_comm(name, ranks, hosts);
        if (hosts > 1)
            check_comm(name, ranks / hosts, 1);
        if (ranks / hosts % 2 == 0)
            check_comm(name, ranks / 2, hosts);
    }
    /* a100, b200, clos, dgx1, h100, h200, mi250, mixnet. */
    CHECK_INT(presets, 8);
    /* Several boxes of each, 256 GPUs, 3 nodes (the ring's plateau at
     * 64 x 16 channels x 24 ranks = 24576 B, inside a size class), and a
     * fabric without NVLink (no LL128). */
    check_comm("a100:2", 16, 2);
    check_comm("h100:2", 16, 2);
    check_comm("h100:4", 24, 3);
    check_comm("mi250:2", 32, 2);
    check_comm("clos:hosts=32", 256, 32);
    check_comm("clos:hosts=32", 128, 16);
    check_comm("a100:2,nvbw=50", 16, 2);
    /* In the network: NVLS tree and CollNet on SHARP, PAT at one rank per
     * host. */
    check_comm("h100:4,sharp=1", 32, 4);
    check_comm("h100:4", 4, 4);
    check_same_model("h100:2", 8, 1, "h100:1");
    check_same_model("clos:hosts=32", 128, 16, "clos:hosts=16");
    check_versions("h100:2", 16, 2);
    weft_diag od;
    CHECK(weft_test_oom_sweep("tuner_fabric_map", map_one_node, no_free, &od) > 10);
    fprintf(stderr, "%ld calls checked\n", checked_sizes);
    CHECK(checked_sizes > 5000);

    /* One rank: nothing to tune; the table is left alone. */
    setenv("WEFT_FABRIC", "h100:1", 1);
    void *ctx = NULL;
    CHECK_INT(v6->init(&ctx, 1, 1, 1, logger, NULL, NULL), NCCL_SUCCESS);
    CHECK_STR(last_line, "TUNER/weft: one rank: nothing to tune (tuner ABI v6)");
    if (ctx) {
        float t[7][3];
        for (int a = 0; a < 7; a++)
            for (int p = 0; p < 3; p++)
                t[a][p] = MARK;
        int n = 0;
        CHECK_INT(v6->getCollInfo(ctx, NCCL_FUNC_ALLREDUCE, 1024, 1, (float **)t, 7, 3, 0, &n), 0);
        CHECK(t[1][2] == MARK && n == 0);
        CHECK_INT(v6->finalize(ctx), 0);
    }

    check_refused(NULL, 16, 2, NCCL_INVALID_USAGE,
                  "TUNER/weft: WEFT_FABRIC is not set: set it to the fabric the job runs on (a "
                  "weft fabric spec such as h100:2, or a .topo file; docs/tuner.md), or unset "
                  "NCCL_TUNER_PLUGIN");
    check_refused("", 16, 2, NCCL_INVALID_USAGE,
                  "TUNER/weft: WEFT_FABRIC is not set: set it to the fabric the job runs on (a "
                  "weft fabric spec such as h100:2, or a .topo file; docs/tuner.md), or unset "
                  "NCCL_TUNER_PLUGIN");
    check_refused("nosuch:2", 16, 2, NCCL_INVALID_USAGE,
                  "TUNER/weft: WEFT_FABRIC=nosuch:2: no such file or preset 'nosuch:2' (see weft "
                  "topo list)");
    check_refused("h100:x", 16, 2, NCCL_INVALID_USAGE,
                  "TUNER/weft: WEFT_FABRIC=h100:x: h100:x: boxes must be an integer");
    check_refused("h100:2", 32, 4, NCCL_INVALID_USAGE,
                  "TUNER/weft: WEFT_FABRIC=h100:2: the fabric has 2 hosts, the communicator "
                  "spans 4 nodes");
    check_refused("h100:2", 32, 2, NCCL_INVALID_USAGE,
                  "TUNER/weft: WEFT_FABRIC=h100:2: host b0 of the fabric has 8 ranks, the "
                  "communicator 16 per node (32 ranks on 2 nodes)");
    check_refused("h100:2", 12, 5, NCCL_INVALID_USAGE,
                  "TUNER/weft: WEFT_FABRIC=h100:2: the communicator's 12 ranks on 5 nodes: weft "
                  "needs at least 2 ranks, the same number on every node");
    check_refused("h100:2", 16, 0, NCCL_INVALID_USAGE,
                  "TUNER/weft: WEFT_FABRIC=h100:2: the communicator's 16 ranks on 0 nodes: weft "
                  "needs at least 2 ranks, the same number on every node");
    check_refused("/nonexistent/dir/fab.topo", 16, 2, NCCL_INVALID_USAGE,
                  "TUNER/weft: WEFT_FABRIC=/nonexistent/dir/fab.topo: no such file or preset "
                  "'/nonexistent/dir/fab.topo' (see weft topo list)");

    /* A .topo file: a good one is tuned, a malformed one refused with the
     * parser's FILE:LINE:COL. */
    char path[] = "/tmp/weft_tuner_XXXXXX.topo";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    if (fd >= 0) {
        FILE *f = fdopen(fd, "w");
        fputs("node a0 compute host=a arch=hopper\nnode a1 compute host=a arch=hopper\n"
              "node b0 compute host=b arch=hopper\nnode b1 compute host=b arch=hopper\n"
              "node sa switch host=a\nnode sb switch host=b\nnode net switch\n"
              "duplex a0 sa 450GB/s\nduplex a1 sa 450GB/s\nduplex b0 sb 450GB/s\nduplex b1 sb "
              "450GB/s\n"
              "duplex sa net 100GB/s\nduplex sb net 100GB/s\n",
              f);
        fclose(f);
        check_comm(path, 4, 2);
        check_comm(path, 2, 1);
        f = fopen(path, "w");
        fputs("node gpu0 compute\nlink gpu0 gpu9 10\n", f);
        fclose(f);
        char want[256];
        snprintf(want, sizeof want,
                 "TUNER/weft: WEFT_FABRIC=%s: %s:2:11: unknown node 'gpu9' (declare it with "
                 "'node' before a link uses it)",
                 path, path);
        check_refused(path, 16, 2, NCCL_INVALID_USAGE, want);
        remove(path);
    }

    /* Bad arguments are refused, not dereferenced. */
    CHECK_INT(v6->init(NULL, 1, 16, 2, logger, NULL, NULL), NCCL_INVALID_ARGUMENT);
    int n = 0;
    CHECK_INT(v6->getCollInfo(NULL, NCCL_FUNC_ALLREDUCE, 8, 1, NULL, 7, 3, 0, &n),
              NCCL_INVALID_ARGUMENT);
    CHECK_INT(v6->finalize(NULL), NCCL_SUCCESS);
    dlclose(lib);
    return weft_test_done();
}
