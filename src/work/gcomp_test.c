/* The gradient compression plan (gcomp_search.c, gcomp.c): the search
 * against a brute force over every fusion and option on small cases; on
 * the step, never slower than no compression over several models and
 * fabrics, and on 25 Gb/s a host faster than both never and always
 * compressing; fusion (Cupcake) never slower than per-tensor compression. */
#include <math.h>
#include <string.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "work/work_internal.h"

/* ---- synthetic problems ---- */

#define NMAX 12

typedef struct syn {
    uint32_t n;
    uint64_t cum[NMAX + 1];
    double ready[NMAX];
    /* per option: latency and per-element cost of comm, and compute per
     * element on the compute stream, CPU before, CPU after. */
    double lat[3], per[3], gpu[3], pre[3], post[3];
} syn;

static uint64_t rng = 88172645463325252ull;
static double rnd(void) /* xorshift64, [0, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static weft_err syn_cost(void *arg, uint32_t i, uint32_t j, uint32_t o, weft__gc_job *out,
                         weft_diag *d)
{
    (void)d;
    const syn *s = arg;
    double E = (double)(s->cum[j] - s->cum[i]);
    out->gpu = s->gpu[o] * E;
    out->cpu_pre = s->pre[o] * E;
    out->comm = s->lat[o] + s->per[o] * E;
    out->cpu_post = s->post[o] * E;
    return WEFT_OK;
}

/* The least end over every partition and option by enumeration. */
static void brute(const weft__gc_prob *pr, uint32_t i, const weft__gc_state *s, double *best,
                  uint64_t *plans)
{
    if (i == pr->n) {
        double e = weft__gc_final(s, pr->window);
        if (e < *best)
            *best = e;
        (*plans)++;
        return;
    }
    uint32_t jmax = pr->fuse ? pr->n : i + 1;
    for (uint32_t j = i + 1; j <= jmax; j++)
        for (uint32_t o = 0; o < pr->nopt; o++) {
            if (!(pr->opt_mask >> o & 1))
                continue;
            weft__gc_job job;
            weft__gc_state x;
            pr->cost(pr->arg, i, j, o, &job, NULL);
            weft__gc_apply(s, pr->ready[j - 1], &job, &x, NULL, NULL);
            brute(pr, j, &x, best, plans);
        }
}

static void test_search_brute(void)
{
    static const uint32_t sizes[] = {1, 2, 3, 5, 7, 8, 9, 12};
    for (size_t t = 0; t < 40; t++) {
        syn s;
        memset(&s, 0, sizeof s);
        s.n = sizes[t % 8];
        if (s.n == 12 && t >= 8)
            s.n = 6; /* one 12-unit case: 3 x 4^11 plans */
        double r = 0;
        for (uint32_t i = 0; i < s.n; i++) {
            s.cum[i + 1] = s.cum[i] + 1 + (uint64_t)(rnd() * 100);
            r += rnd() * 3;
            s.ready[i] = r;
        }
        /* 0 dense: latency, no compute; 1 GPU: compress on the compute
         * stream, a quarter of the bytes; 2 CPU: before and after. */
        s.lat[0] = 2 * rnd();
        s.per[0] = 0.2 * rnd();
        s.lat[1] = 2 * rnd();
        s.per[1] = 0.05 * rnd();
        s.gpu[1] = 0.02 * rnd();
        s.lat[2] = 2 * rnd();
        s.per[2] = 0.05 * rnd();
        s.pre[2] = 0.1 * rnd();
        s.post[2] = 0.1 * rnd();
        weft__gc_prob pr = {s.n,      s.ready, t % 5 == 0 ? 0 : r + rnd(), 3, 7, t % 3 != 2, 0,
                            syn_cost, &s};
        if (t % 5 == 0) /* not overlapped: every unit ready at once */
            for (uint32_t i = 0; i < s.n; i++)
                s.ready[i] = 0;
        if (t % 7 == 3)
            pr.opt_mask = 3; /* no CPU */
        weft__gc_sol sol;
        weft_diag d = {0};
        CHECK_ERR(weft__gc_search(&pr, &sol, &d), WEFT_OK);
        double best = INFINITY;
        uint64_t plans = 0;
        weft__gc_state z = {0, 0, 0, 0};
        brute(&pr, 0, &z, &best, &plans);
        if (fabs(sol.end - best) > 1e-12 * best)
            fprintf(stderr,
                    "  case %zu (n %u, fuse %d): search %.17g, brute force %.17g over "
                    "%llu plans\n",
                    t, s.n, pr.fuse, sol.end, best, (unsigned long long)plans);
        CHECK(fabs(sol.end - best) <= 1e-12 * best);
        CHECK(sol.exact);
        /* The plan it returns ends when it says. */
        double e;
        CHECK_ERR(weft__gc_eval(&pr, sol.cut, sol.opt, sol.ng, &e, &d), WEFT_OK);
        CHECK(fabs(e - sol.end) <= 1e-12 * e);
        CHECK_INT(sol.cut[0], 0);
        CHECK_INT(sol.cut[sol.ng], s.n);
        if (s.n == 12 && pr.fuse && pr.opt_mask == 7)
            CHECK_INT(plans, 3ull << 22); /* 3 x 4^11 */
        weft__gc_sol_fini(&sol);
    }
}

/* One group by hand: dense option 1 s of comm; then a GPU group whose
 * compress (0.5 s) delays the backward's end, a CPU group behind it. */
static void test_timeline(void)
{
    weft__gc_state s = {0, 0, 0, 0}, o;
    weft__gc_job j = {0.5, 0, 2, 0};
    double st, en;
    weft__gc_apply(&s, 1, &j, &o, &st, &en);
    CHECK(o.D == 0.5 && st == 1.5 && en == 3.5 && o.comm == 3.5);
    weft__gc_job c = {0, 1, 1, 2};
    weft__gc_apply(&o, 2, &c, &s, &st, &en);
    /* ready 2 + 0.5, CPU to 3.5, comm waits for 3.5 until 4.5, post to 6.5 */
    CHECK(s.cpu_c == 3.5 && st == 3.5 && s.comm == 4.5 && s.cpu_d == 6.5 && en == 6.5);
    CHECK(weft__gc_final(&s, 10) == 10.5); /* the backward, delayed by 0.5 */
    CHECK(weft__gc_final(&s, 1) == 6.5);
}

/* ---- the step ---- */

static weft_model small_model(uint32_t layers, uint32_t hidden)
{
    weft_model m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "small");
    m.layers = layers;
    m.hidden = hidden;
    m.heads = 16;
    m.seq = 2048;
    m.vocab = 51200;
    weft_model_complete(&m);
    return m;
}

static double step_of(weft_work_ctx *c, const weft_model *m, const weft_parallel *p,
                      weft_step_result *r)
{
    weft_diag d = {0};
    weft_err err = weft_work_step(c, m, p, false, NULL, r, &d);
    if (err)
        fprintf(stderr, "  %s\n", d.msg);
    CHECK_ERR(err, WEFT_OK);
    return r->step_s;
}

/* auto never loses to no compression, and its "never" is the dense step. */
static void test_never_slower(void)
{
    static const char *const fab[] = {"a100:2", "a100:2,nicbw=3.125Gbps", "switch:8,bw=3.125GB/s"};
    static const char *const comp[] = {"auto,fuse=bucket", "auto:topk:0.01,fuse=bucket",
                                       "auto:sign,fuse=bucket", "auto", "auto:dgc:0.01"};
    weft_gpu g;
    CHECK(weft_gpu_find("a100-80g", &g));
    weft_model ms[2] = {small_model(4, 1024), small_model(8, 2048)};
    for (size_t f = 0; f < sizeof fab / sizeof *fab; f++) {
        weft_topo *t = weft__test_topo_spec(fab[f]);
        weft_work_ctx *c = NULL;
        CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &c), WEFT_OK);
        uint32_t ranks = weft_topo_num_ranks(t);
        for (int mi = 0; mi < 2; mi++)
            for (int ov = 0; ov < 2; ov++)
                /* The fusion search (the last two) on the small model. */
                for (size_t k = 0; k < (mi ? 3u : 5u); k++) {
                    weft_parallel p;
                    weft_parallel_init(&p);
                    p.global_batch = 2 * ranks;
                    p.recompute = WEFT_RECOMPUTE_FULL;
                    p.overlap_grad = ov;
                    weft_step_result dense, a;
                    double t0 = step_of(c, &ms[mi], &p, &dense);
                    weft_diag d = {0};
                    CHECK_ERR(weft_grad_compression_parse(comp[k], &p, &d), WEFT_OK);
                    double t1 = step_of(c, &ms[mi], &p, &a);
                    if (!(t1 <= t0 * (1 + 1e-12)))
                        fprintf(stderr, "  %s, model %d, overlap %d, %s: auto %.9g > dense %.9g\n",
                                fab[f], mi, ov, comp[k], t1, t0);
                    CHECK(t1 <= t0 * (1 + 1e-12));
                    CHECK(fabs(a.gc_never_step_s - t0) <= 1e-12 * t0);
                    CHECK(t1 <= a.gc_always_step_s * (1 + 1e-12));
                    CHECK(a.gc_exact);
                }
        weft_work_ctx_free(c);
        weft_topo_free(t);
    }
}

/* 25 Gb/s a host (a100:2 with 8 NICs of 3.125 Gb/s): a 24-layer model,
 * DP 16, gradients reduced during the backward. Top-k at 1 %: compressing
 * pays (never loses), and the search beats compressing every bucket on
 * the GPU with sparse all-gather too, by moving groups to the CPU. Then
 * int8 at 50 Gb/s a NIC, below the crossover: some buckets compressed. */
static void test_bandwidth_poor(void)
{
    weft_topo *t = weft__test_topo_spec("a100:2,nicbw=3.125Gbps");
    weft_gpu g;
    CHECK(weft_gpu_find("a100-80g", &g));
    weft_work_ctx *c = NULL;
    CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &c), WEFT_OK);
    weft_model m = small_model(24, 2048);
    weft_parallel p;
    weft_parallel_init(&p);
    p.global_batch = 64;
    p.recompute = WEFT_RECOMPUTE_FULL;
    p.overlap_grad = true;
    weft_diag d = {0};
    CHECK_ERR(weft_grad_compression_parse("auto:topk:0.01,fuse=bucket", &p, &d), WEFT_OK);
    weft_step_result r;
    double t1 = step_of(c, &m, &p, &r);
    printf("25 Gb/s a host, 24 x 2048, topk:0.01: never %.4f s, always %.4f s, auto %.4f s "
           "(%u of %u groups on the CPU)\n",
           r.gc_never_step_s, r.gc_always_step_s, t1, r.gc_cpu, r.gc_groups);
    CHECK(t1 < r.gc_always_step_s);
    CHECK(r.gc_always_step_s < r.gc_never_step_s);
    CHECK(r.gc_cpu > 0);
    weft_work_ctx_free(c);
    weft_topo_free(t);
    /* 50 Gb/s a NIC (400 Gb/s a host), int8: below the crossover, the
     * search compresses some buckets and not others. */
    t = weft__test_topo_spec("a100:2,nicbw=50Gbps");
    CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &c), WEFT_OK);
    CHECK_ERR(weft_grad_compression_parse("auto,fuse=bucket", &p, &d), WEFT_OK);
    t1 = step_of(c, &m, &p, &r);
    printf("50 Gb/s a NIC, 24 x 2048, int8: never %.4f s, always %.4f s, auto %.4f s "
           "(%u of %u groups compressed)\n",
           r.gc_never_step_s, r.gc_always_step_s, t1, r.gc_compressed, r.gc_groups);
    CHECK(t1 < r.gc_always_step_s && t1 < r.gc_never_step_s);
    CHECK(r.gc_compressed > 0 && r.gc_compressed < r.gc_groups);
    weft_work_ctx_free(c);
    weft_topo_free(t);
}

/* Cupcake's sign, on the plan's own terms: with every group compressed,
 * the fusion search is never slower than compressing every tensor alone
 * (that plan is one of those it weighs), and on 16 GPUs over two hosts,
 * reduced after the backward, it is faster (fewer collectives' latency). */
static void test_fusion(void)
{
    weft_topo *t = weft__test_topo_spec("a100:2,nicbw=25Gbps");
    weft_gpu g;
    CHECK(weft_gpu_find("a100-80g", &g));
    weft_work_ctx *c = NULL;
    CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &c), WEFT_OK);
    weft_model m = small_model(8, 1024);
    weft_parallel p;
    weft_parallel_init(&p);
    p.global_batch = 32; /* no overlap: the groups reduced after the backward */
    weft_diag d = {0};
    weft_step_result rt, rf;
    CHECK_ERR(weft_grad_compression_parse("int8,fuse=tensor", &p, &d), WEFT_OK);
    double tt = step_of(c, &m, &p, &rt);
    CHECK_ERR(weft_grad_compression_parse("int8,fuse=dp", &p, &d), WEFT_OK);
    double tf = step_of(c, &m, &p, &rf);
    printf("8 x 1024 on a100:2,nicbw=25Gbps, int8: per tensor %.6f s (%u groups), fused "
           "%.6f s (%u groups), ratio %.4f\n",
           tt, rt.gc_groups, tf, rf.gc_groups, tt / tf);
    CHECK_INT(rt.gc_groups, 3 * 8 + 1);
    CHECK_INT(rt.gc_compressed, rt.gc_groups);
    CHECK_INT(rf.gc_compressed, rf.gc_groups);
    CHECK(rf.gc_groups < rt.gc_groups);
    CHECK(tf < tt);
    /* The report lists the plan, its groups covering every tensor once. */
    weft_gc_report rep;
    CHECK_ERR(weft_work_grad_plan(c, &m, &p, &rep, &d), WEFT_OK);
    CHECK_INT(rep.n, rf.gc_groups);
    CHECK_STR(rep.units, "tensors");
    CHECK_INT(rep.g[0].first, 0);
    CHECK_INT(rep.g[rep.n - 1].last, rep.nunits - 1);
    for (size_t i = 1; i < rep.n; i++)
        CHECK_INT(rep.g[i].first, rep.g[i - 1].last + 1);
    CHECK(fabs(rep.end_s - rep.g[rep.n - 1].end_s) <= 1e-12 * rep.end_s ||
          rep.end_s > rep.g[rep.n - 1].end_s);
    weft_gc_report_fini(&rep);
    weft_work_ctx_free(c);
    weft_topo_free(t);
}

static void test_parse(void)
{
    weft_parallel p;
    weft_parallel_init(&p);
    weft_diag d = {0};
    CHECK_ERR(weft_grad_compression_parse("auto", &p, &d), WEFT_OK);
    CHECK(p.grad_auto && p.grad_comp.kind == WEFT_COMP_INT8 && p.grad_fuse == 0);
    CHECK_ERR(weft_grad_compression_parse("auto:topk:0.01,fuse=tensor", &p, &d), WEFT_OK);
    CHECK(p.grad_auto && p.grad_comp.kind == WEFT_COMP_TOPK && p.grad_comp.density_ppm == 10000 &&
          p.grad_fuse == WEFT_GC_FUSE_TENSOR);
    CHECK_ERR(weft_grad_compression_parse("sign", &p, &d), WEFT_OK);
    CHECK(!p.grad_auto && p.grad_comp.kind == WEFT_COMP_SIGN && p.grad_fuse == 0);
    CHECK_ERR(weft_grad_compression_parse("int8,fuse=lots", &p, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "--grad-compression 'int8,fuse=lots': unknown option 'fuse=lots' "
                     "(fuse=bucket, fuse=tensor or fuse=dp)");
    CHECK_ERR(weft_grad_compression_parse("auto:none", &p, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "--grad-compression 'auto:none': auto needs a compressor");
}

int main(void)
{
    test_timeline();
    test_parse();
    test_search_brute();
    test_fusion();
    test_bandwidth_poor();
    test_never_slower();
    return weft_test_done();
}
