/* The DLRM step (issue 27): the time to predict one step of 128 GPUs
 * (h100:16) and 1,000 tables for each sharding (target < 1 s): tables of
 * 1M rows (10,000 for data-parallel ones: a million-row table on every GPU
 * would not fit), dim 128, fp32, 1 lookup a sample, zipf 1.05, 64 samples
 * a GPU; bottom MLP 13-512-128, DCN 1 x 64, top 1024-1; row-wise as
 * TorchRec's dense reduce-scatter (a sparse 128 x 128 matrix of distinct
 * entries takes the flow simulator seconds: docs/step.md, "Speed"). Then
 * the MLPerf preset on SPEC2. Then Herald (weft_emb_herald: the cache of
 * 10,000 rows a GPU and the placement, one warm-up step) on SPEC's 128 GPUs
 * x 1,000 table-wise tables, the replay alone; the generator alone on the
 * same tables (one step's 8.2 M zipf draws, counted); the planner's search
 * (weft_dlrm_plan) there; and the whole step with sparse row-wise tables
 * and with Herald on each fabric of SPEC3, a comma-separated list (their
 * all-to-alls have a distinct size per pair, so their flows drain one by
 * one, each drain refilling its region of the max-min rates: docs/sim.md
 * "Sharing"; a sparse row-wise backward is the forward's transpose and
 * takes its time). Last figures (CPU seconds, shared 2-core machine, the
 * binaries of 74781f1 and e652dbe alternated three times, load 2.4 to
 * 2.8; docs/step.md "Speed"): at 128 GPUs tw 0.08 s, rw (dense) 0.30 to
 * 0.33 -> 0.22 to 0.24, cw:4 0.04, dp 0.01; sparse row-wise 0.41 to 0.46,
 * 0.48 to 0.52 and 1.90 to 2.09 s at 32, 64 and 128 GPUs -> 0.33 to 0.35,
 * 0.35 to 0.36 and 0.76 to 0.81 s; Herald's step 0.63 to 0.67, 1.32 to
 * 1.45 and 5.49 to 6.08 s -> 0.43 to 0.44, 0.89 to 0.95 and 2.22 to 2.24
 * s; its replay at 128 GPUs 2.19 to 2.33 -> 1.54 to 1.56 s (10.5 M
 * lookups/s); the generator 0.16 to 0.17 s; the planner 0.70 s. The same
 * step times to the bit. Then (docs/step.md "Speed", a7f9fe3 against
 * this change, load 2.5 to 2.8, a slower machine): sparse row-wise at 128
 * GPUs 0.96 to 0.98 -> 0.81 to 0.82 s, Herald's step 2.69 to 2.78 -> 2.36
 * to 2.40 s, its replay 1.81 to 1.85 -> 1.69 to 1.73 s. Then on
 * threads (docs/step.md "Speed"; 4e8a855 against 2 threads, wall s, load
 * 1 to 2, two runs each alternated): at 128 GPUs Herald's step 3.17 to
 * 3.21 -> 1.50 to 1.52 (CPU 2.91 to 2.93), its replay 2.15 to 2.18 ->
 * 0.98 to 1.02 (16.1 to 16.8 M lookups/s), sparse row-wise 1.17 to 1.19
 * -> 0.93 to 0.94, dense row-wise 0.40 -> 0.20; Herald at 32 and 64 GPUs
 * 0.59 -> 0.31 to 0.33 and 1.36 to 1.41 -> 0.67. The planner 1.25 to
 * 1.27 -> 0.23 to 0.24 s (a plan's cost O(tables + GPUs)), then 0.15 to
 * 0.18 s (its calibration's simulations at once). The first warm-up step
 * of these one-hot tables from the lookups read backwards (docs/step.md
 * "Speed"): the replay 1.07-1.15 -> 0.96 s, Herald's step 1.73-1.75 ->
 * 1.56-1.59 s wall. Then the
 * MLPerf preset's sweep at SPEC's scale (the plans of `weft step --sweep`
 * after tw), one step after another against weft_dlrm_steps (all their
 * simulations at once), in the same run: 14.26 and 8.01 s, then 10.15 and
 * 7.45 s once rings chose their protocol by time bound (the dp plan's
 * all-reduce one run instead of three; docs/sim.md, "Protocol choice").
 * Wall and CPU seconds, and the wall time over the 1 s target
 * (Herald's replay runs on weft_threads_get() threads, set from
 * WEFT_THREADS here as the weft command does); never fails on time.
 * Usage: bench_dlrm [SPEC [TABLES [SPEC2 [SPEC3]]]] (defaults h100:16 1000
 * h100:1 h100:4,a100:8,h100:16: 32, 64 and 128 GPUs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "weft/dlrm.h"
#include "weft/threads.h"

static int fail(const char *what, const weft_diag *d)
{
    fprintf(stderr, "bench_dlrm: %s: %s\n", what, d->msg);
    return 1;
}

/* The generator's lookups, counted (the sum of their rows keeps them
 * read). */
static weft_err count_draw(void *ctx, uint64_t s, uint32_t t, uint64_t row, weft_diag *d)
{
    uint64_t *c = ctx;
    (void)s;
    (void)t;
    (void)d;
    c[0]++;
    c[1] += row;
    return WEFT_OK;
}

static int one(weft_work_ctx *c, const weft_dlrm *m, const char *what, weft_diag *d)
{
    double w0 = bench_now(), c0 = bench_cpu();
    weft_dlrm_result r;
    if (weft_dlrm_step(c, m, &r, d))
        return fail(what, d);
    double cpu = bench_cpu() - c0, wall = bench_now() - w0;
    printf("%-32s step %9.3f ms  predicted in %.3f s wall, %.3f s CPU (%.2fx the 1 s target)\n",
           what, r.step_s * 1e3, wall, cpu, wall);
    return 0;
}

int main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "h100:16", *spec2 = argc > 3 ? argv[3] : "h100:1";
    const char *spec3 = argc > 4 ? argv[4] : "h100:4,a100:8,h100:16";
    uint32_t nt = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 1000;
    weft_diag d;
    weft_diag_clear(&d);
    const char *th = getenv("WEFT_THREADS");
    if (th && weft_threads_set((unsigned)strtoul(th, NULL, 10))) {
        fprintf(stderr, "bench_dlrm: WEFT_THREADS '%s': 1 to %d\n", th, WEFT_THREADS_MAX);
        return 2;
    }
    printf("%u threads (WEFT_THREADS, as the weft command reads it)\n", weft_threads_get());
    weft_gpu g;
    weft_gpu_find("h100-sxm", &g);
    weft_topo *t = NULL, *t2 = NULL;
    weft_work_ctx *c = NULL, *c2 = NULL;
    if (!nt || weft_topo_from_spec(spec, NULL, &t, &d) || weft_work_ctx_new(t, &g, NULL, &c))
        return fail(spec, &d);
    weft_emb_table *tb = calloc(nt, sizeof *tb);
    if (!tb)
        return 1;
    weft_dlrm m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "bench");
    m.dense_features = 13;
    m.bottom[0] = 512;
    m.bottom[1] = 128;
    m.nbottom = 2;
    m.top[0] = 1024;
    m.top[1] = 1;
    m.ntop = 2;
    m.interaction = WEFT_DLRM_DCN;
    m.dcn_layers = 1;
    m.dcn_rank = 64;
    m.prec = WEFT_PREC_BF16;
    static const weft_emb_sharding kinds[] = {WEFT_EMB_TW, WEFT_EMB_RW, WEFT_EMB_CW, WEFT_EMB_DP};
    static const char *const names[] = {"tw", "rw (dense)", "cw:4", "dp"};
    uint32_t ranks = weft_topo_num_ranks(t);
    for (uint32_t k = 0; k < 4; k++) {
        for (uint32_t i = 0; i < nt; i++)
            tb[i] = (weft_emb_table){
                kinds[k] == WEFT_EMB_DP ? 10000 : 1000000, 128, 1, 4, 1050, kinds[k], 4};
        m.emb = (weft_emb_workload){ranks, 64, nt, tb, 1, true};
        char what[96];
        snprintf(what, sizeof what, "%s, %u tables, %s", spec, nt, names[k]);
        if (one(c, &m, what, &d))
            return 1;
    }
    weft_emb_table pre[WEFT_DLRM_MLPERF_TABLES];
    weft_dlrm_mlperf(&m, pre);
    if (weft_topo_from_spec(spec2, NULL, &t2, &d) || weft_work_ctx_new(t2, &g, NULL, &c2))
        return fail(spec2, &d);
    m.emb.gpus = weft_topo_num_ranks(t2);
    m.emb.batch = WEFT_DLRM_MLPERF_BATCH / m.emb.gpus;
    static const char *const pn[] = {"tw", "rw", "cw:4", "dp"};
    for (uint32_t k = 0; k < 4; k++) {
        for (uint32_t i = 0; i < WEFT_DLRM_MLPERF_TABLES; i++) {
            pre[i].sharding = kinds[k];
            pre[i].col_shards = 4;
        }
        char what[96];
        snprintf(what, sizeof what, "dlrm-mlperf on %s, %s", spec2, pn[k]);
        if (one(c2, &m, what, &d))
            return 1;
    }
    /* Herald's replay and the planner at SPEC's scale. */
    for (uint32_t i = 0; i < nt; i++)
        tb[i] = (weft_emb_table){1000000, 128, 1, 4, 1050, WEFT_EMB_TW, 1};
    weft_emb_workload w = {ranks, 64, nt, tb, 1, false};
    weft_emb_herald_params hp = {10000, 1, WEFT_EMB_LRU, WEFT_EMB_PLACE_HERALD, 1};
    weft_emb_herald_result hr;
    double w0 = bench_now(), cp0 = bench_cpu();
    if (weft_emb_herald(&w, &hp, &hr, &d))
        return fail("herald", &d);
    double hw = bench_now() - w0, hc = bench_cpu() - cp0;
    printf("herald replay, %s, %u tables: %llu lookups x 2 steps, %llu of %llu vectors avoided, "
           "in %.3f s wall, %.3f s CPU (%.1f M lookups/s wall, %.1f M/s a CPU)\n",
           spec, nt, (unsigned long long)hr.lookups,
           (unsigned long long)(hr.transfers_base - hr.transfers),
           (unsigned long long)hr.transfers_base, hw, hc, 2e-6 * (double)hr.lookups / hw,
           2e-6 * (double)hr.lookups / hc);
    weft_emb_herald_free(&hr);
    /* The generator alone on the same tables: one step's lookups, as the
     * sparse row-wise step draws them (its zipf sampler of a million rows
     * built once a call). */
    uint64_t drawn[2] = {0, 0};
    w0 = bench_now();
    cp0 = bench_cpu();
    if (weft_emb_generate(&w, count_draw, drawn, &d))
        return fail("generator", &d);
    printf("generator, %s, %u tables: %llu zipf lookups drawn in %.3f s wall, %.3f s CPU (%.1f M "
           "lookups/s)\n",
           spec, nt, (unsigned long long)drawn[0], bench_now() - w0, bench_cpu() - cp0,
           1e-6 * (double)drawn[0] / (bench_cpu() - cp0));
    weft_dlrm mp;
    memset(&mp, 0, sizeof mp);
    strcpy(mp.name, "bench");
    mp.dense_features = 13;
    mp.bottom[0] = 128;
    mp.nbottom = 1;
    mp.top[0] = 1;
    mp.ntop = 1;
    mp.prec = WEFT_PREC_BF16;
    mp.emb = w;
    weft_emb_table *plan = calloc(nt, sizeof *plan);
    weft_dlrm_plan_info pi;
    w0 = bench_now();
    cp0 = bench_cpu();
    if (!plan || weft_dlrm_plan(c, &mp, plan, &pi, &d))
        return fail("planner", &d);
    printf("planner, %s, %u tables: %llu plans costed (%s) in %.3f s wall, %.3f s CPU\n", spec, nt,
           (unsigned long long)pi.evaluated, pi.exhaustive ? "exhaustive" : "descent",
           bench_now() - w0, bench_cpu() - cp0);
    free(plan);
    /* A sweep of sharding plans of the MLPerf preset at SPEC's scale, as
     * `weft step --sweep` makes them after tw (every table rw, cw:2, cw:4
     * or dp; "dp small": the tables whose gradient is at most the dense
     * gradient dp, the others tw or rw): one step after another against
     * weft_dlrm_steps (their simulations at once), each on a fresh
     * context; the same step times. */
    {
        enum { NP = 6 };
        weft_emb_table sw[NP][WEFT_DLRM_MLPERF_TABLES];
        weft_dlrm ms[NP];
        const weft_dlrm *sp[NP];
        weft_dlrm_result r1[NP], r2[NP], r0;
        weft_dlrm_mlperf(&ms[0], sw[0]);
        ms[0].emb.gpus = ranks;
        ms[0].emb.batch = WEFT_DLRM_MLPERF_BATCH / ranks;
        if (weft_dlrm_step(c, &ms[0], &r0, &d))
            return fail("sweep: tw", &d);
        static const weft_emb_sharding sk[NP] = {WEFT_EMB_RW, WEFT_EMB_CW, WEFT_EMB_CW,
                                                 WEFT_EMB_DP, WEFT_EMB_TW, WEFT_EMB_RW};
        for (uint32_t k = 0; k < NP; k++) {
            weft_dlrm_mlperf(&ms[k], sw[k]);
            ms[k].emb.gpus = ranks;
            ms[k].emb.batch = WEFT_DLRM_MLPERF_BATCH / ranks;
            for (uint32_t i = 0; i < WEFT_DLRM_MLPERF_TABLES; i++) {
                weft_emb_table *x = &sw[k][i];
                x->sharding = sk[k];
                x->col_shards = k == 2 ? 4 : 2;
                if (k >= 4 && x->rows * x->dim * x->dtype_bytes <= r0.dense_ar_bytes)
                    x->sharding = WEFT_EMB_DP;
            }
            sp[k] = &ms[k];
        }
        double tw[2];
        for (int way = 0; way < 2; way++) {
            weft_work_ctx *cs = NULL;
            if (weft_work_ctx_new(t, &g, NULL, &cs))
                return fail("sweep context", &d);
            double s0 = bench_now();
            weft_err e = WEFT_OK;
            for (uint32_t k = 0; k < NP && !way && !e; k++)
                e = weft_dlrm_step(cs, sp[k], &r1[k], &d);
            if (way)
                e = weft_dlrm_steps(cs, sp, NP, r2, &d);
            tw[way] = bench_now() - s0;
            weft_work_ctx_free(cs);
            if (e)
                return fail("sweep", &d);
        }
        bool same = true;
        for (uint32_t k = 0; k < NP; k++)
            same = same && r1[k].step_s == r2[k].step_s;
        printf("sweep of dlrm-mlperf on %s (rw, cw:2, cw:4, dp, dp small tw and rw): one by one "
               "%.3f s wall, at once %.3f s (%.2fx), %s step times\n",
               spec, tw[0], tw[1], tw[0] / tw[1], same ? "the same" : "DIFFERENT");
    }
    /* Sparse row-wise and Herald steps on each fabric of SPEC3. */
    for (const char *at = spec3; *at;) {
        size_t len = strcspn(at, ",");
        char s3[64];
        snprintf(s3, sizeof s3, "%.*s", (int)len, at);
        at += len + (at[len] == ',');
        weft_topo *t3 = NULL;
        weft_work_ctx *c3 = NULL;
        if (weft_topo_from_spec(s3, NULL, &t3, &d) || weft_work_ctx_new(t3, &g, NULL, &c3))
            return fail(s3, &d);
        uint32_t r3 = weft_topo_num_ranks(t3);
        for (uint32_t k = 0; k < 2; k++) {
            for (uint32_t i = 0; i < nt; i++)
                tb[i] =
                    (weft_emb_table){1000000, 128, 1, 4, 1050, k ? WEFT_EMB_TW : WEFT_EMB_RW, 1};
            m.emb = (weft_emb_workload){r3, 64, nt, tb, 1, false};
            m.herald =
                (weft_emb_herald_params){k ? 10000 : 0, 1, WEFT_EMB_LRU,
                                         k ? WEFT_EMB_PLACE_HERALD : WEFT_EMB_PLACE_RANDOM, 1};
            char what[96];
            snprintf(what, sizeof what, "%s, %u tables, %s", s3, nt,
                     k ? "tw + herald" : "rw (sparse)");
            if (one(c3, &m, what, &d))
                return 1;
        }
        weft_work_ctx_free(c3);
        weft_topo_free(t3);
    }
    weft_work_ctx_free(c2);
    weft_topo_free(t2);
    weft_work_ctx_free(c);
    weft_topo_free(t);
    free(tb);
    return 0;
}
