/* weft_chakra_run on the hand-built traces of tests/fixtures/chakra (gen.py
 * writes them) on two_hosts.topo, in the fluid model (no start overhead,
 * one slice), where every time follows by hand:
 *
 * The only slow link is the 1 GB/s one between the hosts, each way. Group
 * "1" is ranks 0 and 1 (one per host), group "2" ranks 2 and 3 (one per
 * host): each ring of 2 ranks sends every step S/2 = 5e5 bytes across that
 * link, one way from each rank. Both groups issue their allreduce at 30 us
 * (the later member's compute), so they run together and share the link:
 * 0.5 GB/s each way per ring, 2 steps of 5e5 B = 2 ms (1 ms alone). Then
 * 20 us of compute to 2.05 ms; rank 0's send of 1e6 B to rank 1 crosses
 * the link alone: 1 ms, to 3.05 ms; rank 1's receive, posted at 2.05 ms,
 * ends then, and its last compute of 5 us ends the run at 3.055 ms.
 * Per rank (us): rank 0 computes 10 + 20, holds its comm stream 10..2030
 * and 2050..3050 (3020, all exposed); rank 1 computes 30 + 20 + 5, comm
 * 30..2030; rank 2 computes 50, comm 30..2030; rank 3 computes 30, comm
 * 10..2030.
 *
 * In memory: one group alone takes 1 ms; a compute node without a duration
 * takes the step's roofline, max(FLOPs / (peak x WEFT_WORK_GEMM_EFF),
 * bytes / HBM bandwidth); without a GPU it is an
 * error naming it; a CPU op runs beside the GPU's compute; an invalid
 * node takes no time. Bad inputs give their exact messages; allocation
 * failures are swept. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "weft/work.h"
#include "work/work_internal.h"

#define FIX WEFT_SOURCE_DIR "/tests/fixtures/chakra/"

static weft_topo *two_hosts(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    size_t len = 0;
    char *text = weft_test_read_file(FIX "two_hosts.topo", &len);
    CHECK(text != NULL);
    if (!text)
        return NULL;
    CHECK_ERR(weft_topo_parse(text, len, "two_hosts.topo", &t, &d), WEFT_OK);
    free(text);
    return t;
}

static weft_work_ctx *fluid_ctx(const weft_topo *t, const weft_gpu *g)
{
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    weft_work_ctx *c = NULL;
    CHECK_ERR(weft_work_ctx_new(t, g, &o, &c), WEFT_OK);
    return c;
}

#define NEAR(a, b) CHECK(fabs((a) - (b)) <= 1e-9)

static void test_small(const weft_topo *t)
{
    weft_chakra *w = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_chakra_load(FIX "small", 4, &w, &d), WEFT_OK);
    if (!w)
        return;
    CHECK_INT(weft_chakra_nodes(w), 15);
    weft_work_ctx *c = fluid_ctx(t, NULL);
    weft_chakra_result r;
    char path[] = "/tmp/weft_chakra_traceXXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;
    CHECK(f != NULL);
    CHECK_ERR(weft_chakra_run(c, w, f, &r, &d), WEFT_OK);
    NEAR(r.total_s, 3.055e-3);
    NEAR(r.rank[0].end_s, 3.05e-3);
    NEAR(r.rank[0].compute_s, 30e-6);
    NEAR(r.rank[0].comm_s, 3.02e-3);
    NEAR(r.rank[0].exposed_s, 3.02e-3);
    NEAR(r.rank[1].end_s, 3.055e-3);
    NEAR(r.rank[1].compute_s, 55e-6);
    NEAR(r.rank[1].comm_s, 2e-3);
    NEAR(r.rank[2].end_s, 2.05e-3);
    NEAR(r.rank[2].compute_s, 50e-6);
    NEAR(r.rank[2].comm_s, 2e-3);
    NEAR(r.rank[3].comm_s, 2.02e-3);
    NEAR(r.rank[3].exposed_s, 2.02e-3);
    CHECK_INT(r.coll_calls[WEFT_COLL_ALLREDUCE], 2);
    NEAR(r.coll_s[WEFT_COLL_ALLREDUCE], 4e-3);
    CHECK_INT(r.coll_bytes[WEFT_COLL_ALLREDUCE], 2000000);
    CHECK_INT(r.p2p_calls, 1);
    NEAR(r.p2p_s, 1e-3);
    CHECK_INT(r.batches, 2);
    CHECK_INT(r.sims, 2);
    weft_chakra_result_fini(&r);
    /* The same run again: every simulation from the cache. */
    CHECK_ERR(weft_chakra_run(c, w, NULL, &r, &d), WEFT_OK);
    CHECK_INT(r.sims, 0);
    CHECK_INT(r.sim_hits, 2);
    NEAR(r.total_s, 3.055e-3);
    weft_chakra_result_fini(&r);
    if (f) {
        /* The trace: rank 0's allreduce on its comm track, 10 us to 2030 us. */
        fflush(f);
        size_t len = 0;
        char *doc = weft_test_read_file(path, &len);
        CHECK(doc != NULL);
        if (doc)
            CHECK_CONTAINS(doc, "{\"name\":\"grad allreduce\",\"ph\":\"X\",\"pid\":0,\"tid\":2,"
                                "\"ts\":10.000,\"dur\":2020.000,\"args\":{\"node\":2,"
                                "\"bytes\":1000000}}");
        free(doc);
        fclose(f);
        remove(path);
    }
    weft_work_ctx_free(c);
    weft_chakra_free(w);
}

/* ---- a tiny encoder for traces in memory ---- */

typedef struct buf {
    uint8_t b[1024];
    size_t n;
} buf;

static void vput(buf *o, uint64_t v)
{
    do {
        uint8_t ch = v & 0x7f;
        v >>= 7;
        o->b[o->n++] = (uint8_t)(ch | (v ? 0x80 : 0));
    } while (v);
}
static void lenfield(buf *o, uint32_t num, const void *p, size_t n)
{
    vput(o, (uint64_t)num << 3 | 2);
    vput(o, n);
    memcpy(o->b + o->n, p, n);
    o->n += n;
}
static void varfield(buf *o, uint32_t num, uint64_t v)
{
    vput(o, (uint64_t)num << 3);
    vput(o, v);
}
static void attr(buf *nd, const char *name, uint64_t v, const char *str)
{
    buf a = {.n = 0};
    lenfield(&a, 1, name, strlen(name));
    if (str)
        lenfield(&a, 29, str, strlen(str));
    else
        varfield(&a, 13, v);
    lenfield(nd, 10, a.b, a.n);
}
static void put_node(buf *o, const buf *nd)
{
    vput(o, nd->n);
    memcpy(o->b + o->n, nd->b, nd->n);
    o->n += nd->n;
}
static void start(buf *o)
{
    buf meta = {.n = 0};
    o->n = 0;
    lenfield(&meta, 1, "0.0.4", 5);
    put_node(o, &meta);
}

/* Ranks 0 and 1: an allreduce of 1e6 B in group "1" (rank 1 then an
 * invalid node); ranks 2 and 3: one compute node of 7.8e9 FLOPs and 1e9
 * bytes, no duration (rank 3 also a CPU op of 7 ms, which runs beside
 * it on its own stream). */
static void mem_traces(buf t[4])
{
    for (int r = 0; r < 4; r++) {
        buf nd = {.n = 0};
        start(&t[r]);
        varfield(&nd, 1, 1);
        if (r < 2) {
            varfield(&nd, 3, 7);
            attr(&nd, "comm_type", 0, NULL);
            attr(&nd, "comm_size", 1000000, NULL);
            attr(&nd, "pg_name", 0, "1");
        } else {
            lenfield(&nd, 2, "gemm", 4);
            varfield(&nd, 3, 4);
            attr(&nd, "num_ops", 7800000000ull, NULL);
            attr(&nd, "tensor_size", 1000000000, NULL);
        }
        put_node(&t[r], &nd);
        buf extra = {.n = 0};
        if (r == 1) { /* an invalid node after the allreduce: no time */
            varfield(&extra, 1, 2);
            varfield(&extra, 3, 0);
            varfield(&extra, 5, 1);
            put_node(&t[r], &extra);
        } else if (r == 3) { /* a CPU op of 7 ms beside the GEMM */
            varfield(&extra, 1, 2);
            varfield(&extra, 3, 4);
            varfield(&extra, 7, 7000);
            attr(&extra, "is_cpu_op", 1, NULL);
            put_node(&t[r], &extra);
        }
    }
}

typedef struct parse_arg {
    const uint8_t *bufs[4];
    size_t lens[4];
    const weft_topo *t;
    const weft_gpu *g;
} parse_arg;

static const char *const names[4] = {"m.0.et", "m.1.et", "m.2.et", "m.3.et"};

static weft_err parse_and_run(void *p)
{
    parse_arg *a = p;
    weft_chakra *w = NULL;
    weft_work_ctx *c = NULL;
    weft_chakra_result r;
    weft_err err = weft_chakra_parse(a->bufs, a->lens, names, 4, &w, NULL);
    if (!err)
        err = weft_work_ctx_new(a->t, a->g, NULL, &c);
    if (!err)
        err = weft_chakra_run(c, w, NULL, &r, NULL);
    if (!err)
        weft_chakra_result_fini(&r);
    weft_work_ctx_free(c);
    weft_chakra_free(w);
    return err;
}

static void nothing(void *p)
{
    (void)p;
}

static void test_memory(const weft_topo *t)
{
    buf tr[4];
    mem_traces(tr);
    parse_arg a = {.t = t};
    for (int r = 0; r < 4; r++) {
        a.bufs[r] = tr[r].b;
        a.lens[r] = tr[r].n;
    }
    weft_chakra *w = NULL;
    weft_diag d;
    CHECK_ERR(weft_chakra_parse(a.bufs, a.lens, names, 4, &w, &d), WEFT_OK);
    if (!w)
        return;
    weft_work_ctx *c = fluid_ctx(t, NULL);
    weft_chakra_result r;
    CHECK_ERR(weft_chakra_run(c, w, NULL, &r, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "m.2.et: node 1 ('gemm') has no duration_micros: its num_ops (7800000000) "
                     "and tensor_size (1000000000) need a GPU (--gpu)");
    weft_work_ctx_free(c);
    weft_gpu g;
    memset(&g, 0, sizeof g);
    snprintf(g.name, sizeof g.name, "test");
    g.peak[WEFT_PREC_BF16] = 1e12;
    g.hbm_bw = 2e11;
    g.hbm_bytes = 1e10;
    c = fluid_ctx(t, &g);
    CHECK_ERR(weft_chakra_run(c, w, NULL, &r, &d), WEFT_OK);
    /* Group "1" alone: 1 ms; the compute: max(7.8e9 / (1e12 x 0.78), 1e9 / 2e11)
     * = 10 ms; rank 3's CPU op of 7 ms beside it. */
    NEAR(r.coll_s[WEFT_COLL_ALLREDUCE], 1e-3);
    NEAR(r.rank[0].end_s, 1e-3);
    NEAR(r.rank[1].end_s, 1e-3);
    NEAR(r.rank[2].compute_s, 10e-3);
    NEAR(r.rank[2].end_s, 10e-3);
    NEAR(r.rank[3].compute_s, 10e-3);
    NEAR(r.rank[3].cpu_s, 7e-3);
    NEAR(r.rank[3].end_s, 10e-3);
    NEAR(r.total_s, 10e-3);
    weft_chakra_result_fini(&r);
    weft_work_ctx_free(c);
    weft_chakra_free(w);
    a.g = &g;
    CHECK(weft_test_oom_sweep("chakra parse and run", parse_and_run, nothing, &a) > 0);
}

static void test_bad(void)
{
    weft_chakra *w = NULL;
    weft_diag d;
    CHECK_ERR(weft_chakra_load(FIX "small", 8, &w, &d), WEFT_ENOENT);
    CHECK_CONTAINS(d.msg, "small.4.et: cannot open");
    CHECK_ERR(weft_chakra_load(FIX "small", 2, &w, &d), WEFT_EINVAL);
    CHECK_CONTAINS(d.msg, "small.2.et: a trace for rank 2, but the fabric has 2 ranks (0 to 1)");
    CHECK_ERR(weft_chakra_load(FIX "trunc", 4, &w, &d), WEFT_EINVAL);
    CHECK_CONTAINS(d.msg, "trunc.2.et: offset 91: message runs past the end of the file");
    CHECK_ERR(weft_chakra_load(FIX "badtype", 4, &w, &d), WEFT_EINVAL);
    CHECK_CONTAINS(d.msg, "badtype.1.et: node 6 ('mystery'): unknown node type 12");
    CHECK(w == NULL);
}

/* The fixture trace `name` of 4 ranks (NULL when it does not load). */
static weft_chakra *load4(const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s%s", FIX, name);
    weft_chakra *w = NULL;
    weft_diag d;
    CHECK_ERR(weft_chakra_load(p, 4, &w, &d), WEFT_OK);
    return w;
}

static void run_err(const weft_topo *t, const char *prefix, const char *msg)
{
    weft_chakra *w = load4(prefix);
    if (!w)
        return;
    weft_diag d;
    weft_work_ctx *c = fluid_ctx(t, NULL);
    weft_chakra_result r;
    CHECK_ERR(weft_chakra_run(c, w, NULL, &r, &d), WEFT_EINVAL);
    CHECK_CONTAINS(d.msg, msg);
    weft_work_ctx_free(c);
    weft_chakra_free(w);
}

/* Collectives that overlap without starting together (gen.py's stagger,
 * stagger_q, apart): group "1" (ranks 0, 1) issues its allreduce at 10 us,
 * group "2" (ranks 2, 3) D later; each ring of 2 sends two steps of 5e5 B
 * across the 1 GB/s link (one way per rank), 0.5 ms per step alone.
 *
 * stagger (D = 500 us): group 1's first step ends at 510 us, just as group
 * 2 starts; group 1's second step and group 2's first then share the link,
 * 0.5 GB/s each, and both end at 1510 us; group 2's second step runs alone
 * to 2010 us. So 10..1510 and 510..2010 (1.5 ms each, not 1 ms), ranks 0
 * and 1 end at 1530 us, ranks 2 and 3 at 2030 us.
 *
 * stagger_q (D = 250 us): at 260 us group 1's first step has 2.5e5 B left;
 * shared, it ends at 760 us, when group 2's first step has sent 2.5e5 B;
 * group 1's second step and group 2's first share to 1260 us (group 2's
 * first done, group 1's second half sent); then both second steps share
 * to 1760 us (group 1 done) and group 2's last 2.5e5 B run alone to 2010
 * us. So 10..1760 and 260..2010 (1.75 ms each); the link carried 2e6 B
 * each way from 10 us to 2010 us without a pause, as it must.
 *
 * apart (D = 1500 us): the first allreduce is over (1010 us) before the
 * second starts (1510 us): 1 ms each, from the cache, no joint simulation. */
static void run_stagger(const weft_topo *t, const char *name, double g2, double end1, double end2,
                        uint32_t joint)
{
    weft_chakra *w = load4(name);
    if (!w)
        return;
    weft_diag d;
    weft_work_ctx *c = fluid_ctx(t, NULL);
    weft_chakra_result r;
    CHECK_ERR(weft_chakra_run(c, w, NULL, &r, &d), WEFT_OK);
    NEAR(r.rank[0].end_s, end1 + 20e-6);
    NEAR(r.rank[1].end_s, end1 + 20e-6);
    NEAR(r.rank[2].end_s, end2 + 20e-6);
    NEAR(r.rank[3].end_s, end2 + 20e-6);
    NEAR(r.total_s, end2 + 20e-6);
    NEAR(r.rank[0].comm_s, end1 - 10e-6);
    NEAR(r.rank[2].comm_s, end2 - g2);
    NEAR(r.rank[3].exposed_s, end2 - g2);
    NEAR(r.coll_s[WEFT_COLL_ALLREDUCE], end1 - 10e-6 + end2 - g2);
    CHECK_INT(r.coll_calls[WEFT_COLL_ALLREDUCE], 2);
    CHECK_INT(r.batches, 2);
    CHECK_INT(r.joint_sims, joint);
    /* Each batch alone is one simulation (the cache keys on the ranks). */
    CHECK_INT(r.sims, 2);
    CHECK_INT(r.sim_hits, 0);
    weft_chakra_result_fini(&r);
    weft_work_ctx_free(c);

    /* The default model on this fabric (runtime): overlapping makes the
     * first allreduce slower than alone; apart it is as alone. */
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    o.model = weft_sim_model_default(t);
    c = NULL;
    CHECK_ERR(weft_work_ctx_new(t, NULL, &o, &c), WEFT_OK);
    CHECK_ERR(weft_chakra_run(c, w, NULL, &r, &d), WEFT_OK);
    double alone = 0;
    uint32_t pos[2] = {0, 1};
    CHECK_ERR(weft__work_groups_s(c, WEFT_COLL_ALLREDUCE, false, pos, 2, 2, 1000000, &alone, &d),
              WEFT_OK);
    if (joint)
        CHECK(r.rank[0].comm_s > alone * 1.2);
    else
        NEAR(r.rank[0].comm_s, alone);
    CHECK_INT(r.joint_sims, joint);
    weft_chakra_result_fini(&r);
    weft_work_ctx_free(c);
    weft_chakra_free(w);
}

/* A batch's plan (weft__work_groups_plan) run alone by weft_sim_plans
 * takes what its own simulation (weft__work_groups_s) gives, in every
 * model, so that a collective overlapping nothing is not moved by being
 * simulated with others: rings of 16 ranks over two boxes (8 channels),
 * rings of 2, an alltoall of 8, a broadcast chain, sends. */
static void test_alone_equal(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_from_spec("a100:2", NULL, &t, &d), WEFT_OK);
    if (!t)
        return;
    static const weft_sim_model models[] = {WEFT_SIM_FLUID, WEFT_SIM_RUNTIME, WEFT_SIM_GPU};
    uint32_t all[16], pairs[16];
    for (uint32_t i = 0; i < 16; i++) {
        all[i] = i;
        pairs[i] = i % 2 ? i / 2 + 8 : i / 2; /* (0, 8), (1, 9), ... */
    }
    struct {
        weft_coll coll;
        bool p2p;
        const uint32_t *pos;
        uint32_t n, gs;
        uint64_t size;
    } cases[] = {
        {WEFT_COLL_ALLREDUCE, false, all, 16, 16, 64u << 20},
        {WEFT_COLL_ALLGATHER, false, all, 16, 16, 3000000},
        {WEFT_COLL_REDUCESCATTER, false, pairs, 16, 2, 1u << 20},
        {WEFT_COLL_ALLTOALL, false, all, 16, 8, 8u << 20},
        {WEFT_COLL_BROADCAST, false, all, 16, 4, 1u << 20},
        {WEFT_COLL_ALLTOALL, true, pairs, 16, 2, 1u << 20},
    };
    for (size_t m = 0; m < 3; m++)
        for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
            weft_sim_opts o;
            weft_sim_opts_init(&o);
            o.model = models[m];
            weft_work_ctx *c = NULL;
            CHECK_ERR(weft_work_ctx_new(t, NULL, &o, &c), WEFT_OK);
            double alone = 0, done = 0;
            CHECK_ERR(weft__work_groups_s(c, cases[k].coll, cases[k].p2p, cases[k].pos, cases[k].n,
                                          cases[k].gs, cases[k].size, &alone, &d),
                      WEFT_OK);
            weft_plan *p = NULL;
            weft_sim_job job = {NULL, 0, 0, 0, cases[k].coll};
            CHECK_ERR(weft__work_groups_plan(c, cases[k].coll, cases[k].p2p, cases[k].pos,
                                             cases[k].n, cases[k].gs, cases[k].size, &p, &job.size,
                                             &job.ring, &d),
                      WEFT_OK);
            job.plan = p;
            CHECK_INT(job.ring, cases[k].coll <= WEFT_COLL_ALLREDUCE ? cases[k].gs : 0);
            CHECK_ERR(weft_sim_plans(t, &job, 1, &o, &done, &d), WEFT_OK);
            CHECK(alone > 0);
            if (!(fabs(done - alone) <= 1e-9 * alone))
                printf("model %zu case %zu: alone %.12g, as a job %.12g\n", m, k, alone, done);
            CHECK(fabs(done - alone) <= 1e-9 * alone);
            /* Started later, it ends as much later. */
            job.start_s = 0.25;
            CHECK_ERR(weft_sim_plans(t, &job, 1, &o, &done, &d), WEFT_OK);
            CHECK(fabs(done - 0.25 - alone) <= 1e-9);
            weft_plan_free(p);
            weft_work_ctx_free(c);
        }
    weft_topo_free(t);
}

int main(void)
{
    weft_topo *t = two_hosts();
    if (t) {
        test_small(t);
        run_stagger(t, "stagger", 510e-6, 1510e-6, 2010e-6, 1);
        run_stagger(t, "stagger_q", 260e-6, 1760e-6, 2010e-6, 1);
        run_stagger(t, "apart", 1510e-6, 1010e-6, 2510e-6, 0);
        test_memory(t);
        run_err(t, "deadlock",
                "deadlock.2.et: node 2 ('grad allreduce'): allreduce of 1000000 bytes "
                "(collective 0 of process group '2') is never issued by rank 3 (");
        run_err(t, "mismatch",
                "mismatch.0.et: node 2 ('grad allreduce', allreduce of 1000000 bytes) and ");
        run_err(t, "mismatch",
                "mismatch.1.et: node 2 ('grad allreduce', allreduce of 2000000 bytes) are both "
                "collective 0 of process group '1': the ranks issue the group's collectives in "
                "another order");
    }
    test_bad();
    test_alone_equal();
    weft_topo_free(t);
    return weft_test_done();
}
