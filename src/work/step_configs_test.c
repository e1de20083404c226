/* The configurations people run, against the formulas they come from:
 * interleaved pipelines' activations (Korthikanti et al. 2022, Sec. 4.2.3),
 * uneven first and last stages, context parallelism in the gradient
 * group, flash attention, DeepSpeed ZeRO 1-3 (Rajbhandari et al. 2020,
 * Sec. 5), counts too large for 64 bits, and the trace ending at the step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "work/testing_work.h"
#include "work/work_internal.h"

static weft_model preset(const char *name)
{
    weft_model m;
    memset(&m, 0, sizeof m);
    CHECK(weft_model_find(name, &m));
    weft_model_complete(&m);
    return m;
}

/* GPT-3 175B on 1,024 GPUs, TP 8 with SP, PP 16: the first stage holds
 * PP micro-batches of its 6 layers, s b h L (34 + 5 a s / h) / t in all,
 * times 1 + (PP - 1) / (PP v) when interleaved (Korthikanti et al.,
 * Sec. 4.2.3, eq. 5 with v model chunks). */
static void test_interleaved(void)
{
    weft_model m = preset("gpt3-175b");
    weft_parallel p;
    weft_parallel_init(&p);
    p.tp = 8;
    p.pp = 16;
    p.sp = true;
    p.global_batch = 1536;
    weft_counts c;
    /* One layer: 2048 x 12288 x (34 + 5 x 96 x 2048 / 12288) / 8 bytes. */
    uint64_t layer = 2048ull * 12288 * (34 + 80) / 8;
    CHECK_INT(layer, 358612992);
    CHECK_INT(weft__work_layer_act(&m, false, &p, WEFT_RECOMPUTE_NONE), layer);
    CHECK_ERR(weft_work_counts(&m, &p, 1024, &c, NULL), WEFT_OK);
    CHECK_INT(c.microbatches, 192);
    CHECK_INT(c.mem_act, layer * 96);
    p.layers_per_vstage = 3; /* v = 2 */
    CHECK_ERR(weft_work_counts(&m, &p, 1024, &c, NULL), WEFT_OK);
    CHECK_INT(c.vstages, 2);
    CHECK_INT(c.mem_act, layer * 96 * (32 + 15) / 32);
    CHECK(c.mem_act / 1073741824.0 > 47.0); /* was 2.9 GiB: one micro-batch's worth */
    /* The same with the virtual stages given per rank. */
    p.layers_per_vstage = 0;
    p.vpp = 3;
    CHECK_ERR(weft_work_counts(&m, &p, 1024, &c, NULL), WEFT_OK);
    CHECK_INT(c.mem_act, layer * 96 * (48 + 15) / 48);
    /* As many micro-batches as stages: every chunk's forward runs first,
     * so the first stage holds all of them and no more. */
    p.global_batch = 128;
    CHECK_ERR(weft_work_counts(&m, &p, 1024, &c, NULL), WEFT_OK);
    CHECK_INT(c.microbatches, 16);
    CHECK_INT(c.mem_act, layer * 96);
    weft_diag d;
    weft_diag_clear(&d);
    p.layers_per_vstage = 2;
    CHECK_ERR(weft_work_counts(&m, &p, 1024, &c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "--num-layers-per-virtual-pipeline-stage and "
                     "--num-virtual-stages-per-pipeline-rank exclude each other");
}

/* Llama 3.1 405B's published layout (Dubey et al. 2024, Sec. 3.3.2: the
 * first and the last stage one layer fewer): 126 layers on 16 stages of
 * 7, 8 x 14, 7. */
static void test_uneven(void)
{
    weft_model m = preset("llama3.1-405b");
    weft_parallel p;
    weft_parallel_init(&p);
    p.tp = 8;
    p.pp = 16;
    p.first_stage_layers = 7;
    p.last_stage_layers = 7;
    p.global_batch = 16;
    weft_counts c;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_work_counts(&m, &p, 128, &c, &d), WEFT_OK);
    CHECK_INT(weft__work_stage_nlayers(&m, &p, 0), 7);
    CHECK_INT(weft__work_stage_nlayers(&m, &p, 1), 8);
    CHECK_INT(weft__work_stage_nlayers(&m, &p, 14), 8);
    CHECK_INT(weft__work_stage_nlayers(&m, &p, 15), 7);
    CHECK_INT(c.stage_layers_max, 8);
    /* Without them 126 layers do not divide into 16 stages. */
    p.first_stage_layers = p.last_stage_layers = 0;
    CHECK_ERR(weft_work_counts(&m, &p, 128, &c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "--num-layers (126) is not divisible by --pipeline-model-parallel-size (16)");
    p.first_stage_layers = 10;
    p.last_stage_layers = 10;
    CHECK_ERR(weft_work_counts(&m, &p, 128, &c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "the 106 layers left by --decoder-first/last-pipeline-num-layers do not "
                     "divide evenly into the other 14 pipeline stages");
    /* Interleaved: every stage's layers split into the virtual stages. */
    p.first_stage_layers = p.last_stage_layers = 7;
    p.vpp = 2;
    CHECK_ERR(weft_work_counts(&m, &p, 128, &c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "pipeline stage 0's 7 layers do not divide into "
                     "--num-virtual-stages-per-pipeline-rank (2) virtual stages");
    p.first_stage_layers = 6; /* 6, 8 x 14, 8 */
    p.last_stage_layers = 8;
    CHECK_ERR(weft_work_counts(&m, &p, 128, &c, &d), WEFT_OK);
    CHECK_INT(c.vstages, 2);
    /* The pipeline's order: chunk j of stage s starts after j rounds of
     * 63 layers and the chunks of the stages before s. An MoE pattern
     * shows where each chunk lands: every 3rd layer has experts. */
    weft_model e = weft__test_tiny_model(12);
    e.experts = 2;
    e.topk = 1;
    e.moe_ffn = 64;
    e.moe_freq = 3;
    weft_parallel q;
    weft_parallel_init(&q);
    q.pp = 3;
    q.first_stage_layers = 2; /* 2, 6, 4: stage 1 holds layers 2..7 */
    q.last_stage_layers = 4;
    q.global_batch = 3;
    CHECK_ERR(weft_work_counts(&e, &q, 3, &c, &d), WEFT_OK);
    uint32_t nm, nd;
    weft__work_stage_layers(&e, &q, 1, &nm, &nd);
    CHECK_INT(nm, 2); /* layers 3 and 6 */
    CHECK_INT(nd, 4);
    weft__work_stage_layers(&e, &q, 2, &nm, &nd);
    CHECK_INT(nm, 1); /* layer 9 */
    CHECK_INT(nd, 3);
}

/* CP ranks hold the same weights: the distributed optimizer shards over
 * DP x CP and the gradients are reduced over it. */
static void test_cp_group(void)
{
    weft_model m = weft__test_tiny_model(2);
    weft_parallel p;
    weft_parallel_init(&p);
    p.cp = 2;
    p.dist_opt = true;
    p.global_batch = 4;
    weft_counts c;
    CHECK_ERR(weft_work_counts(&m, &p, 8, &c, NULL), WEFT_OK);
    CHECK_INT(c.dp, 4);
    CHECK_INT(c.mem_optim, 12 * c.params_gpu_max / 8);
    weft_topo *t = weft__test_topo_spec("a100:1");
    weft_gpu g;
    CHECK(weft_gpu_find("a100-80g", &g));
    weft_work_ctx *ctx = NULL;
    CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &ctx), WEFT_OK);
    weft_step_result r;
    CHECK_ERR(weft_work_step(ctx, &m, &p, true, NULL, &r, NULL), WEFT_OK);
    /* Reduce-scatter of 4-byte gradients and all-gather of 2-byte
     * parameters over the 8 ranks: 7/8 of each. */
    uint64_t n = c.params_gpu_max;
    CHECK_INT(r.comm_bytes[WEFT_COMM_DP], (uint64_t)(7.0 / 8 * 4 * n + 7.0 / 8 * 2 * n));
    weft_work_ctx_free(ctx);
    weft_topo_free(t);
}

/* Flash attention keeps Q, K, V, O and a log-sum-exp per head, no scores,
 * and its fused kernel is faster than the unfused core on long sequences. */
static void test_flash(void)
{
    weft_model m = preset("llama3-8b");
    weft_parallel p;
    weft_parallel_init(&p);
    p.tp = 2;
    p.sp = true;
    uint64_t unfused = weft__work_layer_act(&m, false, &p, WEFT_RECOMPUTE_NONE);
    uint64_t selective = weft__work_layer_act(&m, false, &p, WEFT_RECOMPUTE_SELECTIVE);
    p.flash_attn = true;
    uint64_t flash = weft__work_layer_act(&m, false, &p, WEFT_RECOMPUTE_NONE);
    uint64_t T = 8192, a = 32;
    CHECK_INT(unfused - selective, 5 * a * T * T / 2);
    CHECK_INT(flash, selective + 4 * a * T / 2);
    CHECK_INT(weft__work_layer_act(&m, false, &p, WEFT_RECOMPUTE_SELECTIVE), flash);
    weft_gpu g;
    CHECK(weft_gpu_find("h100-sxm", &g));
    weft__layer_time lf, lu;
    weft__work_layer_time(&g, &m, &p, 4, 0, &lf);
    p.flash_attn = false;
    weft__work_layer_time(&g, &m, &p, 4, 0, &lu);
    CHECK(lf.attn_core < 0.5 * lu.attn_core);
    CHECK(lf.fwd < lu.fwd);
    /* Backward: five GEMMs of the forward's two, besides the grouped-query
     * split (TP 2: 16 heads, 4 groups of 128 channels on T tokens):
     * the query copied forward, the three gradients concatenated
     * backward, 4 bytes an element (compute.c). */
    double x = (4.0 * T * (16 + 2 * 4) * 128 - 2 * 4.0 * T * 16 * 128) / g.hbm_bw;
    CHECK(fabs((lf.bwd - 2 * (lf.fwd - lf.attn_core) - x) / lf.attn_core - 2.5) < 1e-9);
}

/* DeepSpeed ZeRO (Rajbhandari et al. 2020, Sec. 5): 2 + 2 + 12 bytes per
 * parameter, stage 1 sharding the 12, stage 2 the gradients too, stage 3
 * the weights too; a 16-bit reduce bucket of min(5e8, parameters), and in
 * stage 3 two layers gathered. */
static void test_zero(void)
{
    weft_model m = weft__test_tiny_model(2);
    weft_parallel p;
    weft_parallel_init(&p);
    p.global_batch = 8;
    weft_counts c;
    weft_diag d;
    weft_diag_clear(&d);
    p.zero_stage = 1;
    CHECK_ERR(weft_work_counts(&m, &p, 8, &c, &d), WEFT_OK);
    uint64_t n = c.params_gpu_max;
    CHECK_INT(n, c.params);
    CHECK_INT(c.mem_weights, 2 * n);
    CHECK_INT(c.mem_grads, 2 * n + 2 * n);
    CHECK_INT(c.mem_optim, 12 * n / 8);
    p.zero_stage = 2;
    CHECK_ERR(weft_work_counts(&m, &p, 8, &c, &d), WEFT_OK);
    CHECK_INT(c.mem_grads, 2 * (n / 8) + 2 * n);
    p.zero_stage = 3;
    CHECK_ERR(weft_work_counts(&m, &p, 8, &c, &d), WEFT_OK);
    uint64_t layer = 12 * 64 * 64 + 13 * 64;
    CHECK_INT(c.mem_weights, 2 * (n / 8) + 4 * layer);
    p.dist_opt = true;
    CHECK_ERR(weft_work_counts(&m, &p, 8, &c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "--zero-stage 3 and --use-distributed-optimizer both shard the optimizer: "
                     "give one");
    p.dist_opt = false;
    p.pp = 2;
    p.global_batch = 4;
    CHECK_ERR(weft_work_counts(&m, &p, 8, &c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "--zero-stage 3 is incompatible with pipeline parallelism "
                     "(--pipeline-model-parallel-size 2), as in DeepSpeed: use stage 1");
    p.pp = 1;
    p.global_batch = 16; /* two micro-batches */
    /* The step: stage 3 gathers every layer forward and backward and
     * reduce-scatters it, every micro-batch; stage 2 reduce-scatters every
     * micro-batch and gathers once; stage 1 once each. */
    weft_topo *t = weft__test_topo_spec("a100:1");
    weft_gpu g;
    CHECK(weft_gpu_find("a100-80g", &g));
    weft_work_ctx *ctx = NULL;
    CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &ctx), WEFT_OK);
    weft_step_result r1, r2, r3;
    p.zero_stage = 1;
    CHECK_ERR(weft_work_step(ctx, &m, &p, true, NULL, &r1, NULL), WEFT_OK);
    p.zero_stage = 2;
    CHECK_ERR(weft_work_step(ctx, &m, &p, true, NULL, &r2, NULL), WEFT_OK);
    p.zero_stage = 3;
    CHECK_ERR(weft_work_step(ctx, &m, &p, true, NULL, &r3, NULL), WEFT_OK);
    double f = 7.0 / 8;
    CHECK_INT(r1.comm_bytes[WEFT_COMM_DP], (uint64_t)(f * 2 * n + f * 2 * n));
    CHECK_INT(r1.comm_calls[WEFT_COMM_DP], 2);
    CHECK_INT(r2.comm_bytes[WEFT_COMM_DP], (uint64_t)(2 * (f * 2 * n) + f * 2 * n));
    CHECK_INT(r2.comm_calls[WEFT_COMM_DP], 3);
    CHECK_INT(r3.comm_bytes[WEFT_COMM_DP], (uint64_t)(2 * 2 * 3 * (f * 2 * layer)));
    CHECK_INT(r3.comm_calls[WEFT_COMM_DP], 2 * 2 * 3);
    CHECK(r2.exposed_s[WEFT_COMM_DP] > r1.exposed_s[WEFT_COMM_DP]);
    weft_work_ctx_free(ctx);
    weft_topo_free(t);
}

/* Flag values far beyond any model overflow 64-bit counts: refused, not
 * reported as fitting (1.8e19 bytes once came out as 67.2 GiB). */
static void test_overflow(void)
{
    weft_model m = weft__test_tiny_model(2);
    m.hidden = 100000000;
    m.heads = 100000;
    m.ffn = 0;
    m.kv_channels = 0;
    weft_model_complete(&m);
    weft_parallel p;
    weft_parallel_init(&p);
    weft_counts c;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_work_counts(&m, &p, 1, &c, &d), WEFT_EINVAL);
    CHECK_CONTAINS(d.msg, "the model is too large to count in 64 bits");
    m = weft__test_tiny_model(100000000);
    m.seq = 100000000;
    p.micro_batch = 100000000;
    p.global_batch = 100000000;
    CHECK_ERR(weft_work_counts(&m, &p, 1, &c, &d), WEFT_EINVAL);
    CHECK_CONTAINS(d.msg, "the model is too large to count in 64 bits");
    /* The largest real preset is far inside. */
    weft_model big = preset("gpt-1t");
    weft_parallel q;
    weft_parallel_init(&q);
    CHECK_ERR(weft_work_counts(&big, &q, 1, &c, &d), WEFT_OK);
    CHECK(c.mem_total > 1000000000000ull);
}

/* The latest end of any slice in a Chrome trace, in seconds. */
static double trace_end(const char *doc)
{
    double end = 0;
    for (const char *s = strstr(doc, "\"ts\":"); s; s = strstr(s + 1, "\"ts\":")) {
        double ts = strtod(s + 5, NULL);
        const char *du = strstr(s, "\"dur\":");
        if (!du)
            break;
        double e = (ts + strtod(du + 6, NULL)) * 1e-6;
        if (e > end)
            end = e;
    }
    return end;
}

/* The trace draws the step's schedule, its gradient reduction, the tied
 * embedding's all-reduce and the optimizer: it ends at the step time. */
static void test_trace_end(void)
{
    weft_topo *t = weft__test_topo_spec("a100:2");
    weft_gpu g;
    CHECK(weft_gpu_find("a100-80g", &g));
    weft_work_ctx *ctx = NULL;
    CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &ctx), WEFT_OK);
    weft_model m = preset("gpt-1.7b");
    for (int k = 0; k < 3; k++) {
        weft_parallel p;
        weft_parallel_init(&p);
        p.pp = 4;
        p.tp = k ? 2 : 1;
        p.layers_per_vstage = k == 2 ? 3 : 0;
        p.global_batch = 16;
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        weft_step_result r;
        CHECK_ERR(weft_work_step(ctx, &m, &p, true, f, &r, NULL), WEFT_OK);
        fclose(f);
        CHECK(r.tied_s > 0);
        double end = trace_end(buf);
        if (fabs(end - r.step_s) > 2e-9)
            fprintf(stderr, "  trace ends at %.9f s, the step at %.9f s\n", end, r.step_s);
        CHECK(fabs(end - r.step_s) <= 2e-9); /* whole nanoseconds */
        free(buf);
    }
    weft_work_ctx_free(ctx);
    weft_topo_free(t);
}

/* The sweep answers each configuration as a step alone on a fresh
 * context would (its caches, by layout and then by the groups' ranks,
 * change nothing): every 7th entry of a sweep over a100:2, re-run alone,
 * gives the same step time and memory to the bit; an entry that does not
 * fit is not predicted (step 0) and comes after every one that does. GPT
 * 1.7B on A100 80 GB, and GPT-3 175B, most of whose configurations do not
 * fit 16 GPUs. */
static void sweep_matches_steps(const char *model)
{
    weft_topo *t = weft__test_topo_spec("a100:2");
    weft_gpu g;
    CHECK(weft_gpu_find("a100-80g", &g));
    weft_work_ctx *ctx = NULL;
    CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &ctx), WEFT_OK);
    weft_model m = preset(model);
    weft_parallel base;
    weft_parallel_init(&base);
    base.global_batch = 64;
    weft_sweep_entry *e = NULL;
    size_t n = 0, fit = 0;
    CHECK_ERR(weft_work_sweep(ctx, &m, &base, &e, &n, NULL), WEFT_OK);
    CHECK(n > 100);
    while (fit < n && e[fit].res.fits)
        fit++;
    size_t checked = 0, differ = 0;
    for (size_t i = 0; i < n; i++) {
        if (i >= fit) {
            CHECK(!e[i].res.fits && e[i].res.step_s == 0);
            CHECK(e[i].res.counts.mem_total > g.hbm_bytes);
        }
        if (i % 7)
            continue;
        weft_work_ctx *alone = NULL;
        CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &alone), WEFT_OK);
        weft_step_result r;
        CHECK_ERR(weft_work_step(alone, &m, &e[i].par, false, NULL, &r, NULL), WEFT_OK);
        CHECK(r.fits == (i < fit));
        if ((i < fit && r.step_s != e[i].res.step_s) ||
            r.counts.mem_total != e[i].res.counts.mem_total) {
            if (differ++ < 3)
                fprintf(stderr, "  %s sweep entry %zu: %.9f s in the sweep, %.9f s alone\n", model,
                        i, e[i].res.step_s, r.step_s);
        }
        checked++;
        weft_work_ctx_free(alone);
    }
    CHECK(checked * 7 >= n);
    CHECK_INT(differ, 0);
    fprintf(stderr, "  %s: %zu configurations, %zu fit\n", model, n, fit);
    weft_work_sweep_free(e);
    weft_work_ctx_free(ctx);
    weft_topo_free(t);
}

static void test_sweep_matches_steps(void)
{
    sweep_matches_steps("gpt-1.7b");
    sweep_matches_steps("gpt3-175b");
}

int main(void)
{
    test_interleaved();
    test_uneven();
    test_cp_group();
    test_flash();
    test_zero();
    test_overflow();
    test_trace_end();
    test_sweep_matches_steps();
    return weft_test_done();
}
