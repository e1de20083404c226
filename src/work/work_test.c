/* The work module against hand-computed values: parameters, FLOPs and
 * memory of a small model exactly, Megatron's argument checks by their
 * messages, the communication volume per kind against closed forms, two
 * data-parallel groups sharing a spine against one alone, placement, GPU
 * files. */
#include <math.h>
#include <string.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "weft/traffic.h"
#include "work/testing_work.h"
#include "work/work_internal.h"

static void test_counts(void)
{
    weft_model m = weft__test_tiny_model(2);
    CHECK_INT(m.ffn, 256);
    CHECK_INT(m.kv_channels, 16);
    weft_parallel p;
    weft_parallel_init(&p);
    p.tp = 2;
    p.micro_batch = 2;
    p.global_batch = 8;
    weft_counts c;
    CHECK_ERR(weft_work_counts(&m, &p, 4, &c, NULL), WEFT_OK);
    CHECK_INT(c.dp, 2);
    CHECK_INT(c.microbatches, 2);
    /* 12 h^2 + 13 h per layer, (V + s) h embeddings, 2 h final norm. */
    CHECK_INT(c.params, 2 * (12 * 64 * 64 + 13 * 64) + (256 + 32) * 64 + 2 * 64);
    CHECK_INT(c.params, 118528);
    /* 24 T h^2 + 4 b s^2 h with T = b s = 64. */
    CHECK_INT(c.layer_fwd_flops, 24ull * 64 * 64 * 64 + 4ull * 2 * 32 * 32 * 64);
    CHECK_INT(c.logits_fwd_flops, 2ull * 64 * 64 * 256);
    CHECK_REL(c.model_flops, 3.0 * (2 * 6815744.0 + 2097152.0) * 4, 0);
    CHECK_REL(c.hw_flops, c.model_flops, 0);
    /* Memory: one GPU holds (12 h^2 + 13 h - 4 h) / 2 + 4 h per layer,
     * half the word embeddings, the positions and the final norm. */
    uint64_t params = 2 * ((12 * 64 * 64 + 9 * 64) / 2 + 4 * 64) + 256 * 64 / 2 + 32 * 64 + 128;
    CHECK_INT(params, 60608);
    CHECK_INT(c.params_gpu_max, params);
    CHECK_INT(c.mem_weights, 2 * params);
    CHECK_INT(c.mem_grads, 4 * params);
    CHECK_INT(c.mem_optim, 12 * params);
    /* Korthikanti et al.: s b h (10 + 24 / t + 5 a s / (h t)) per layer,
     * two layers, one micro-batch in flight, and 4 s b V / t of logits. */
    CHECK_INT(c.mem_act, 2 * 32 * 2 * 64 * (10 + 12 + 5) + 4 * 2 * 32 * 256 / 2);
    CHECK_INT(c.mem_total, 1344896);

    /* Full recomputation: Narayanan et al.'s 96 B s l h^2 (1 + s / 6h +
     * V / 16 l h) exactly; one layer input stored per layer (2 s b h) plus
     * one layer's full set. */
    p.recompute = WEFT_RECOMPUTE_FULL;
    CHECK_ERR(weft_work_counts(&m, &p, 4, &c, NULL), WEFT_OK);
    CHECK_REL(c.hw_flops, 96.0 * 8 * 32 * 2 * 64 * 64 * (1 + 32.0 / 384 + 256.0 / 2048), 1e-15);
    CHECK_INT(c.mem_act, 2 * (2 * 32 * 2 * 64) + 110592 + 4 * 2 * 32 * 256 / 2);
    /* Selective with SP: 34 s b h / t per layer. */
    p.recompute = WEFT_RECOMPUTE_SELECTIVE;
    p.sp = true;
    CHECK_INT(weft__work_layer_act(&m, false, &p, p.recompute), 34 * 32 * 2 * 64 / 2);
    /* The distributed optimizer shards the 12 bytes over DP. */
    p.dist_opt = true;
    CHECK_ERR(weft_work_counts(&m, &p, 4, &c, NULL), WEFT_OK);
    CHECK_INT(c.mem_optim, 12 * params / 2);

    /* Pipeline: the first stage holds pp micro-batches of its layers and
     * the embeddings, the last one micro-batch, the norm and its copy of
     * the word embeddings. */
    weft_parallel q;
    weft_parallel_init(&q);
    q.pp = 2;
    q.global_batch = 4;
    CHECK_ERR(weft_work_counts(&m, &q, 2, &c, NULL), WEFT_OK);
    CHECK_INT(c.microbatches, 4);
    uint64_t first = (12 * 64 * 64 + 13 * 64) + 256 * 64 + 32 * 64;
    uint64_t act = 32 * 64 * (34 + 5 * 4 * 32 / 64);
    CHECK_INT(c.mem_act, 2 * act);
    CHECK_INT(c.mem_weights, 2 * first);
}

static void test_llama_moe_counts(void)
{
    /* llama style: 3 h f MLP, GQA, no biases, RMSNorm, untied output. */
    weft_model m;
    memset(&m, 0, sizeof m);
    m.layers = 1;
    m.hidden = 128;
    m.heads = 8;
    m.query_groups = 2;
    m.ffn = 384;
    m.seq = 16;
    m.vocab = 128;
    m.swiglu = true;
    weft_model_complete(&m);
    weft_parallel p;
    weft_parallel_init(&p);
    weft_counts c;
    CHECK_ERR(weft_work_counts(&m, &p, 1, &c, NULL), WEFT_OK);
    uint64_t qkv = 16 * (8 + 2 * 2);
    CHECK_INT(c.params, 128 * qkv + 128 * 128 + 3 * 128 * 384 + 2 * 128 + 2 * 128 * 128 + 128);
    /* 4 experts of 64, top 2, one shared: the router is h E. */
    m.experts = 4;
    m.topk = 2;
    m.moe_ffn = 64;
    m.shared_experts = 1;
    CHECK_ERR(weft_work_counts(&m, &p, 1, &c, NULL), WEFT_OK);
    uint64_t one = 3 * 128 * 64, base = 128 * qkv + 128 * 128 + 2 * 128 + 2 * 128 * 128 + 128;
    CHECK_INT(c.params, base + 128 * 4 + 5 * one);
    CHECK_INT(c.params_active, base + 128 * 4 + 3 * one);
    uint64_t T = 16;
    CHECK_INT(c.layer_fwd_flops, 2 * T * 128 * qkv + 4 * 8 * 16 * 16 * 16 + 2 * T * 128 * 128 +
                                     2 * T * 128 * 4 + 3 * 2 * T * 128 * 64 * 3);
}

static void test_checks(void)
{
    weft_model m = weft__test_tiny_model(2);
    weft_parallel p;
    weft_parallel_init(&p);
    p.tp = 3;
    weft__test_check_refused(
        &p, &m, 4,
        "--tensor-model-parallel-size (3) x --pipeline-model-parallel-size (1) x "
        "--context-parallel-size (1) = 3 does not divide the fabric's 4 ranks");
    p.tp = 8;
    weft__test_check_refused(
        &p, &m, 8,
        "--num-attention-heads (4) is not divisible by --tensor-model-parallel-size (8)");
    weft_parallel_init(&p);
    p.pp = 4;
    weft__test_check_refused(
        &p, &m, 4, "--num-layers (2) is not divisible by --pipeline-model-parallel-size (4)");
    weft_parallel_init(&p);
    p.micro_batch = 2;
    p.global_batch = 6;
    weft__test_check_refused(&p, &m, 2,
                             "--global-batch-size (6) is not divisible by --micro-batch-size (2) x "
                             "data-parallel size (2)");
    weft_parallel_init(&p);
    p.ep = 2;
    weft__test_check_refused(&p, &m, 2, "--expert-model-parallel-size (2) needs --num-experts");
    weft_parallel_init(&p);
    p.cp = 2;
    p.global_batch = 1;
    m.seq = 30;
    weft__test_check_refused(
        &p, &m, 2, "--seq-length (30) is not divisible by 2 x --context-parallel-size (2)");
    m = weft__test_tiny_model(2);
    m.layers = 8;
    weft_parallel_init(&p);
    p.pp = 2;
    p.layers_per_vstage = 3;
    p.global_batch = 2;
    weft__test_check_refused(
        &p, &m, 2,
        "--num-layers-per-virtual-pipeline-stage (3) does not divide the 4 layers of a "
        "pipeline stage");
    p.layers_per_vstage = 2;
    p.global_batch = 3;
    weft__test_check_refused(
        &p, &m, 2,
        "number of microbatches (3) is not divisible by --pipeline-model-parallel-size (2) "
        "when using the interleaved schedule");
    m.query_groups = 3;
    weft_parallel_init(&p);
    weft__test_check_refused(
        &p, &m, 1, "--num-attention-heads (4) is not divisible by --num-query-groups (3)");
}

static void test_groups(void)
{
    /* 16 ranks: TP 2, CP 2, DP 2, PP 2 in Megatron's order. */
    weft_parallel p;
    weft_parallel_init(&p);
    p.tp = p.cp = p.pp = 2;
    uint32_t pos[16];
    weft__work_groups(&p, 2, 1u << WEFT_DIM_TP, pos);
    CHECK_INT(pos[0], 0);
    CHECK_INT(pos[1], 1);
    CHECK_INT(pos[2], 2);
    weft__work_groups(&p, 2, 1u << WEFT_DIM_DP, pos);
    CHECK_INT(pos[0], 0);
    CHECK_INT(pos[1], 4);
    CHECK_INT(pos[2], 1);
    CHECK_INT(pos[3], 5);
    weft__work_groups(&p, 2, 1u << WEFT_DIM_PP, pos);
    CHECK_INT(pos[0], 0);
    CHECK_INT(pos[1], 8);
    /* PP innermost instead. */
    CHECK(weft_parallel_order_parse("pp-tp-cp-ep-dp", p.order));
    weft__work_groups(&p, 2, 1u << WEFT_DIM_PP, pos);
    CHECK_INT(pos[1], 1);
    CHECK(!weft_parallel_order_parse("tp-tp-cp-ep-dp", p.order));
    CHECK(!weft_parallel_order_parse("tp-cp-ep-dp", p.order));
}

/* Two boxes of two GPUs (100 GB/s to their switch), one 4 GB/s spine
 * between the switches. */
static const char *spine_topo = "node g0 compute host=0\nnode g1 compute host=0\n"
                                "node g2 compute host=1\nnode g3 compute host=1\n"
                                "node a switch\nnode b switch\n"
                                "duplex g0 a 100GB/s\nduplex g1 a 100GB/s\n"
                                "duplex g2 b 100GB/s\nduplex g3 b 100GB/s\n"
                                "duplex a b 4GB/s\n";

static void test_dp_groups_share_spine(void)
{
    weft_topo *t = weft__test_topo_text(spine_topo);
    CHECK(t != NULL);
    if (!t)
        return;
    weft_gpu g;
    CHECK(weft_gpu_find("a100-80g", &g));
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    weft_work_ctx *c = NULL;
    CHECK_ERR(weft_work_ctx_new(t, &g, &o, &c), WEFT_OK);
    /* TP 2 inside the boxes: DP groups {0, 2} and {1, 3}, both across the
     * spine; 8 MiB all-reduce each. */
    weft_parallel p;
    weft_parallel_init(&p);
    p.tp = 2;
    uint64_t S = 8u << 20;
    double both = 0;
    CHECK_ERR(
        weft__work_coll_s(c, &p, 2, 1u << WEFT_DIM_DP, WEFT_COLL_ALLREDUCE, false, S, &both, NULL),
        WEFT_OK);
    const uint32_t one[2] = {0, 2};
    weft_sim_result r;
    CHECK_ERR(weft_sim_rings(t, WEFT_COLL_ALLREDUCE, one, 2, 2, S, &o, &r, NULL), WEFT_OK);
    /* Alone: 2 steps of S/2 at the spine's 4 GB/s; together the spine is
     * shared by two flows each way. */
    CHECK_REL(r.time_s, (double)S / 4e9, 1e-9);
    CHECK_REL(both, 2 * r.time_s, 1e-9);
    /* The cache answers the same question again. */
    double again = 0;
    uint32_t sims = c->sims;
    CHECK_ERR(
        weft__work_coll_s(c, &p, 2, 1u << WEFT_DIM_DP, WEFT_COLL_ALLREDUCE, false, S, &again, NULL),
        WEFT_OK);
    CHECK(again == both);
    CHECK_INT(c->sims, sims);
    /* DP 4 with TP 1 spans both boxes with two ranks in each: two channels,
     * one leaving each box through each GPU; still the spine: every ring
     * crosses it twice, 3 x 2 steps of S/4 over the spine shared by two
     * channels of S/2. */
    weft_parallel_init(&p);
    double four = 0;
    CHECK_ERR(
        weft__work_coll_s(c, &p, 4, 1u << WEFT_DIM_DP, WEFT_COLL_ALLREDUCE, false, S, &four, NULL),
        WEFT_OK);
    CHECK(four > r.time_s);
    weft_work_ctx_free(c);
    weft_topo_free(t);
}

/* DeepSeek-V3 (arXiv 2412.19437): MLA, 3 dense layers then 58 MoE ones;
 * the report's 671B total and 37B active parameters. */
static void test_deepseek_v3_counts(void)
{
    weft_model m;
    CHECK(weft_model_find("deepseek-v3", &m));
    weft_model_complete(&m);
    weft_parallel p;
    weft_parallel_init(&p);
    weft_counts c;
    CHECK_ERR(weft_work_counts(&m, &p, 1, &c, NULL), WEFT_OK);
    uint64_t h = 7168, a = 128, V = 129280;
    /* Attention: q down 7168 x 1536 and its norm, q up 1536 x 128 (128 +
     * 64), kv down 7168 x (512 + 64) and its norm, kv up 512 x 128 (128 +
     * 128), output 128 x 128 x 7168; two RMSNorms. */
    uint64_t attn = h * 1536 + 1536 + 1536 * a * 192 + h * 576 + 512 + 512 * a * 256 + a * 128 * h;
    CHECK_INT(attn, 187107328);
    uint64_t one = 3 * h * 2048;
    uint64_t moe = attn + 2 * h + h * 256 + 257 * one, dense = attn + 2 * h + 3 * h * 18432;
    uint64_t total = 3 * dense + 58 * moe + 2 * V * h + h;
    CHECK_INT(c.params, total);
    CHECK_INT(c.params, 671026404352ull);
    CHECK_INT(c.params_active, total - 58 * 248 * one);
    CHECK_INT(c.params_active, 37552282624ull);
    /* The report's figures: 671B, and 37B active (36.6B without the input
     * embedding's table, which a token only indexes). */
    CHECK_INT((c.params + 500000000) / 1000000000, 671);
    CHECK_INT(c.params_active / 1000000000, 37);
    CHECK_INT((c.params_active - V * h + 500000000) / 1000000000, 37);
    /* Forward FLOPs of an MoE layer (T = 4096 tokens): the MLA GEMMs, the
     * attention core over 192 query/key and 128 value channels, the
     * router and 8 + 1 experts. */
    uint64_t T = 4096, s = 4096;
    uint64_t f = 2 * T * h * 1536 + 2 * T * 1536 * a * 192 + 2 * T * h * 576 +
                 2 * T * 512 * a * 256 + 2 * a * s * s * (192 + 128) + 2 * T * a * 128 * h +
                 2 * T * h * 256 + 9 * 2 * T * h * 2048 * 3;
    CHECK_INT(c.layer_fwd_flops, f);
    /* Layers: the first three dense. */
    CHECK(!weft__work_is_moe(&m, 2));
    CHECK(weft__work_is_moe(&m, 3));
    uint32_t nm, nd;
    weft__work_stage_layers(&m, &p, 0, &nm, &nd);
    CHECK_INT(nm, 58);
    CHECK_INT(nd, 3);
    /* --moe-layer-freq 2 on 4 layers: layers 0 and 2 MoE; with PP 2 each
     * stage has one of each. */
    weft_model q = weft__test_tiny_model(2);
    q.experts = 4;
    q.moe_freq = 2;
    weft_parallel_init(&p);
    p.pp = 2;
    q.layers = 4;
    weft__work_stage_layers(&q, &p, 1, &nm, &nd);
    CHECK_INT(nm, 1);
    CHECK_INT(nd, 1);
    /* Full recomputation keeps one whole layer's set: an all-MoE model's
     * MoE layer even when its dense ffn would be larger. */
    weft_model e = weft__test_tiny_model(2);
    e.experts = 4;
    e.topk = 1;
    e.moe_ffn = 16; /* ffn 256 */
    weft_parallel_init(&p);
    p.recompute = WEFT_RECOMPUTE_FULL;
    CHECK_ERR(weft_work_counts(&e, &p, 1, &c, NULL), WEFT_OK);
    uint64_t fm = weft__work_layer_act(&e, true, &p, WEFT_RECOMPUTE_NONE);
    CHECK(fm < weft__work_layer_act(&e, false, &p, WEFT_RECOMPUTE_NONE));
    CHECK_INT(c.mem_act, 2 * (2 * 32 * 64) + fm + 4 * 32 * 256);
    /* gpt style untied: the output layer's V h more. */
    weft_model u = weft__test_tiny_model(2);
    weft_parallel_init(&p);
    CHECK_ERR(weft_work_counts(&u, &p, 1, &c, NULL), WEFT_OK);
    uint64_t tied = c.params;
    u.untie = true;
    CHECK_ERR(weft_work_counts(&u, &p, 1, &c, NULL), WEFT_OK);
    CHECK_INT(c.params - tied, 256 * 64);
}

static const char *star4_topo = "node g0 compute host=0\nnode g1 compute host=1\n"
                                "node g2 compute host=2\nnode g3 compute host=3\n"
                                "node s switch\n"
                                "duplex g0 s 100GB/s\nduplex g1 s 100GB/s\n"
                                "duplex g2 s 100GB/s\nduplex g3 s 100GB/s\n";

/* Skewed expert load: on a star of 100 GB/s links (fluid model) an
 * all-to-all takes its busiest link's bytes / 100 GB/s, the bound of
 * its matrix; uniform gives (n-1)/n S. */
static void test_moe_skew(void)
{
    weft_topo *t = weft__test_topo_text(star4_topo);
    CHECK(t != NULL);
    if (!t)
        return;
    weft_gpu g;
    CHECK(weft_gpu_find("h100-sxm", &g));
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    weft_work_ctx *c = NULL;
    CHECK_ERR(weft_work_ctx_new(t, &g, &o, &c), WEFT_OK);
    weft_model m;
    memset(&m, 0, sizeof m);
    m.layers = 2;
    m.hidden = 64;
    m.heads = 4;
    m.seq = 32;
    m.vocab = 256;
    m.experts = 8;
    m.topk = 2;
    m.moe_ffn = 64;
    m.swiglu = true;
    weft_parallel p;
    weft_parallel_init(&p);
    p.ep = 4;
    p.global_batch = 4;
    weft_step_result u, z;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_work_step(c, &m, &p, true, NULL, &u, &d), WEFT_OK);
    /* 32 tokens x top 2 x 128 bytes per rank, 3/4 of it leaves. */
    CHECK_REL(u.ep_dispatch_s, 6144 / 100e9, 1e-9);
    CHECK_REL(u.ep_combine_s, 6144 / 100e9, 1e-9);
    CHECK_INT(u.ep_max_tokens, 64);
    p.moe_zipf = true;
    p.moe_zipf_milli = 1200;
    p.moe_seed = 7;
    CHECK_ERR(weft_work_step(c, &m, &p, true, NULL, &z, &d), WEFT_OK);
    weft_traffic_moe_params mp = {4, 8, 2, 32, 128, WEFT_TRAFFIC_SKEW_ZIPF, 1200, 7};
    weft_traffic tm;
    CHECK_ERR(weft_traffic_moe(&mp, &tm, NULL), WEFT_OK);
    uint64_t worst = 0, recv = 0, off = 0;
    for (uint32_t i = 0; i < 4; i++) {
        uint64_t out = 0, in = 0;
        for (uint32_t j = 0; j < 4; j++)
            if (i != j) {
                out += weft_traffic_at(&tm, i, j);
                in += weft_traffic_at(&tm, j, i);
            }
        worst = out > worst ? out : worst;
        worst = in > worst ? in : worst;
        recv = weft_traffic_recv(&tm, i) > recv ? weft_traffic_recv(&tm, i) : recv;
        off += out;
    }
    weft_traffic_free(&tm);
    CHECK(worst > 6144);
    CHECK_REL(z.ep_dispatch_s, (double)worst / 100e9, 1e-9);
    CHECK_REL(z.ep_combine_s, (double)worst / 100e9, 1e-9);
    /* The expert GEMMs wait for the busiest rank: its tokens. */
    CHECK_INT(z.ep_max_tokens, recv / 128);
    CHECK(z.ep_max_tokens > 64);
    /* Per step: 2 layers x (dispatch + combine) forward and backward. */
    CHECK_REL(z.comm_s[WEFT_COMM_EP], 2 * 2 * 2 * (double)worst / 100e9, 1e-9);
    CHECK_REL(z.comm_s[WEFT_COMM_EP] / u.comm_s[WEFT_COMM_EP], (double)worst / 6144, 1e-9);
    CHECK_INT(z.comm_bytes[WEFT_COMM_EP], 2 * 4 * off / 4);
    CHECK(z.step_s > u.step_s);
    CHECK(z.fwd_s > u.fwd_s);
    /* The same seed again comes from the cache; another seed differs. */
    uint32_t sims = c->sims;
    CHECK_ERR(weft_work_step(c, &m, &p, true, NULL, &z, &d), WEFT_OK);
    CHECK_INT(c->sims, sims);
    weft_work_ctx_free(c);
    weft_topo_free(t);
}

/* The embedding and loss collectives: on 2 boxes of 2 with TP 2 and PP
 * 2, the tied gradient all-reduce pairs rank 0 with 2 and 1 with 3. */
static void test_embedding_loss(void)
{
    weft_topo *t = weft__test_topo_text(spine_topo);
    CHECK(t != NULL);
    if (!t)
        return;
    weft_gpu g;
    CHECK(weft_gpu_find("a100-80g", &g));
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    weft_work_ctx *c = NULL;
    CHECK_ERR(weft_work_ctx_new(t, &g, &o, &c), WEFT_OK);
    weft_model m = weft__test_tiny_model(2);
    weft_parallel p;
    weft_parallel_init(&p);
    p.tp = 2;
    p.pp = 2;
    p.global_batch = 4;
    weft_step_result r;
    CHECK_ERR(weft_work_step(c, &m, &p, true, NULL, &r, NULL), WEFT_OK);
    /* Per micro-batch (4): the embedding's all-reduce and the output
     * layer's backward all-reduce of T h 2 = 4096 bytes over TP, then one
     * tied all-reduce of 4 V h / 2 = 32768 bytes per pair: two ring steps
     * of 16384 bytes, both pairs across the 4 GB/s spine at once each
     * way: 2 x 2 x 16384 / 4e9. */
    CHECK_INT(r.comm_calls[WEFT_COMM_EMB], 4 * 2 + 1);
    CHECK_INT(r.comm_bytes[WEFT_COMM_EMB], 4 * 2 * 4096 + 32768);
    double tp1;
    CHECK_ERR(weft__work_coll_s(c, &p, 1, 1u << WEFT_DIM_TP, WEFT_COLL_ALLREDUCE, false, 4096, &tp1,
                                NULL),
              WEFT_OK);
    CHECK_REL(r.comm_s[WEFT_COMM_EMB], 4 * 2 * tp1 + 4 * 16384 / 4e9, 1e-9);
    /* The last stage runs the output layer's all-reduce every micro-batch;
     * the tied one is exposed once. */
    CHECK_REL(r.exposed_s[WEFT_COMM_EMB], 4 * tp1 + 4 * 16384 / 4e9, 1e-9);
    /* The loss: three fp32 all-reduces of T values over TP. */
    CHECK_INT(r.comm_calls[WEFT_COMM_LOSS], 4 * 3);
    CHECK_INT(r.comm_bytes[WEFT_COMM_LOSS], 4 * 3 * 128);
    /* llama style (untied): no tied all-reduce. */
    m.swiglu = true;
    CHECK_ERR(weft_work_step(c, &m, &p, true, NULL, &r, NULL), WEFT_OK);
    CHECK_INT(r.comm_calls[WEFT_COMM_EMB], 4 * 2);
    weft_work_ctx_free(c);
    weft_topo_free(t);
}

/* The step's communication volume per kind against closed forms. */
static void test_volumes(void)
{
    weft_gpu g;
    weft_topo *t = NULL;
    weft_work_ctx *c = weft__test_work_ctx("switch:16,bw=100", "h100-sxm", &g, &t);
    if (!c)
        return;
    weft_model m;
    memset(&m, 0, sizeof m);
    m.layers = 4;
    m.hidden = 256;
    m.heads = 8;
    m.seq = 128;
    m.vocab = 1024;
    m.experts = 4;
    m.topk = 2;
    weft_parallel p;
    weft_parallel_init(&p);
    p.tp = 2;
    p.pp = 2;
    p.ep = 2;
    p.micro_batch = 1;
    p.global_batch = 8; /* DP 4: 2 micro-batches */
    weft_step_result r;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_work_step(c, &m, &p, true, NULL, &r, &d), WEFT_OK);
    double S = 128.0 * 256 * 2, mb = 2, lps = 2;
    /* TP: 2 all-reduces per layer forward and 2 backward, 2 (n-1)/n S each. */
    CHECK_INT(r.comm_calls[WEFT_COMM_TP], (uint32_t)(mb * lps * 4));
    CHECK_REL((double)r.comm_bytes[WEFT_COMM_TP], mb * lps * 4 * (2 * 0.5 * S), 1e-12);
    /* EP: dispatch and combine forward and backward, T k h 2 bytes each,
     * (ep-1)/ep of it leaving the GPU. */
    double a2a = 128.0 * 2 * 256 * 2;
    CHECK_INT(r.comm_calls[WEFT_COMM_EP], (uint32_t)(mb * lps * 4));
    CHECK_REL((double)r.comm_bytes[WEFT_COMM_EP], mb * lps * 4 * 0.5 * a2a, 1e-12);
    /* PP: one send forward and one backward per micro-batch, S / tp. */
    CHECK_INT(r.comm_calls[WEFT_COMM_PP], (uint32_t)(2 * mb));
    CHECK_REL((double)r.comm_bytes[WEFT_COMM_PP], 2 * mb * S / 2, 1e-12);
    /* DP: all-reduce of 4-byte gradients: dense over DP 4, experts over
     * the expert-data-parallel 2. */
    uint64_t dn0, ex0, dn1, ex1;
    weft_model mc = m;
    weft_model_complete(&mc);
    weft__work_stage_params(&mc, &p, 0, &dn0, &ex0);
    weft__work_stage_params(&mc, &p, 1, &dn1, &ex1);
    double dn = (double)(dn0 > dn1 ? dn0 : dn1), ex = (double)(ex0 > ex1 ? ex0 : ex1);
    CHECK_REL((double)r.comm_bytes[WEFT_COMM_DP], 2 * 0.75 * 4 * dn + 2 * 0.5 * 4 * ex, 1e-9);
    /* Every part adds up to the step. */
    double sum = r.compute_s + r.bubble_s + r.optimizer_s;
    for (int k = 0; k < WEFT__COMM_COUNT; k++)
        sum += r.exposed_s[k];
    CHECK_REL(r.step_s, sum, 1e-12);
    CHECK(r.exposed_s[WEFT_COMM_EP] > 0);
    CHECK(r.exposed_s[WEFT_COMM_TP] > 0);
    /* With SP: an all-gather and a reduce-scatter instead of each
     * all-reduce, the same bytes. */
    p.sp = true;
    weft_step_result rs;
    CHECK_ERR(weft_work_step(c, &m, &p, true, NULL, &rs, &d), WEFT_OK);
    CHECK_INT(rs.comm_calls[WEFT_COMM_TP], (uint32_t)(mb * lps * 8));
    CHECK_REL((double)rs.comm_bytes[WEFT_COMM_TP], mb * lps * 8 * 0.5 * S, 1e-12);
    /* fp8 on a GPU without it. */
    weft_gpu a;
    CHECK(weft_gpu_find("a100-40g", &a));
    weft_work_ctx *c2 = NULL;
    CHECK_ERR(weft_work_ctx_new(t, &a, NULL, &c2), WEFT_OK);
    p.prec = WEFT_PREC_FP8;
    CHECK_ERR(weft_work_step(c2, &m, &p, true, NULL, &rs, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "--fp8-format: the a100-40g has no fp8 tensor cores");
    /* Memory that does not fit. */
    p.prec = WEFT_PREC_BF16;
    m.layers = 64;
    m.hidden = 16384;
    m.heads = 128;
    m.seq = 2048;
    m.experts = 0;
    m.topk = 0;
    p.ep = 1;
    CHECK_ERR(weft_work_step(c2, &m, &p, true, NULL, &rs, &d), WEFT_EINVAL);
    CHECK_CONTAINS(d.msg, "does not fit the a100-40g's 40.0 GiB");
    weft_work_ctx_free(c2);
    weft_work_ctx_free(c);
    weft_topo_free(t);
}

static void test_gpu_file(void)
{
    weft_gpu g;
    const char *ok = "# a made-up GPU\nname = x1\nbf16 = 500\nfp8=1000 # dense\nhbm_bw = 4000\n"
                     "hbm = 96\nsms = 100\n";
    CHECK_ERR(weft_gpu_parse(ok, strlen(ok), "x1.gpu", &g, NULL), WEFT_OK);
    CHECK_STR(g.name, "x1");
    CHECK_REL(g.peak[WEFT_PREC_BF16], 500e12, 1e-15);
    CHECK_REL(g.peak[WEFT_PREC_FP16], 500e12, 1e-15);
    CHECK_REL(g.peak[WEFT_PREC_FP8], 1000e12, 1e-15);
    CHECK_REL(g.hbm_bw, 4000e9, 1e-15);
    CHECK_REL(g.hbm_bytes, 96.0 * 1073741824.0, 1e-15);
    CHECK_INT(g.sms, 100);
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"name = x\nbf16 = fast\n", "x.gpu:2:8: bf16: 'fast' is not a positive number"},
        {"name = x\n  speed = 3\n", "x.gpu:2:3: unknown key 'speed' (keys: name, bf16, fp16, fp8, "
                                    "fp32, hbm_bw, hbm, sms, mamf_bf16, mamf_fp8)"},
        {"name = x\nbf16 = 100\nmamf_bf16 = 120\nhbm_bw = 1\nhbm = 1\n",
         "x.gpu:3:13: mamf_bf16: 120 TFLOP/s is above the bf16 peak (100)"},
        {"name = x\nbf16 = 100\nhbm_bw = 1\nhbm = 1\nmamf_fp8 = 10\n",
         "x.gpu:5:12: mamf_fp8: 10 TFLOP/s is above the fp8 peak (0)"},
        {"name = x\nmamf_fp8 = 0\n", "x.gpu:2:12: mamf_fp8: '0' is not a positive number"},
        {"name x\n", "x.gpu:1:1: expected 'key = value'"},
        {"name = x\nbf16 = 1\nhbm = 8\n", "x.gpu:3:1: missing key 'hbm_bw'"},
        {"name = x\nhbm =\n", "x.gpu:2:6: hbm needs a value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        weft_diag d;
        weft_diag_clear(&d);
        CHECK_ERR(weft_gpu_parse(bad[i].text, strlen(bad[i].text), "x.gpu", &g, &d), WEFT_EPARSE);
        CHECK_STR(d.msg, bad[i].msg);
    }
    CHECK(weft_gpu_find("mi300x", &g));
    CHECK_REL(g.peak[WEFT_PREC_BF16], 1307.4e12, 1e-15);
    CHECK(!weft_gpu_find("v100", &g));

    /* The GEMM ceiling: a measured figure; else the peak times the GPU's
     * bf16 share; else A100's share; fp8 without a peak runs at bf16's. */
    CHECK(weft_gpu_find("h100-sxm", &g));
    CHECK_REL(weft_gpu_ceiling(&g, WEFT_PREC_BF16), 794.5e12, 1e-15);
    CHECK_REL(weft_gpu_ceiling(&g, WEFT_PREC_FP8), 1402.6e12, 1e-15);
    CHECK_REL(weft_gpu_ceiling(&g, WEFT_PREC_FP16), 794.5e12, 1e-15);
    CHECK(weft_gpu_find("mi300x", &g));
    CHECK_REL(weft_gpu_ceiling(&g, WEFT_PREC_FP8), 2614.9e12 * 668.4 / 1307.4, 1e-12);
    CHECK(weft_gpu_find("a100-80g", &g));
    CHECK_REL(weft_gpu_ceiling(&g, WEFT_PREC_FP8), 271.2e12, 1e-15);
    CHECK(weft_gpu_find("mi250x", &g));
    CHECK_REL(weft_gpu_ceiling(&g, WEFT_PREC_BF16), 191.5e12 * 271.2 / 312, 1e-12);
    const char *m = "name = y\nbf16 = 500\nfp8 = 1000\nhbm_bw = 1\nhbm = 1\nmamf_bf16 = 400\n"
                    "mamf_fp8 = 700\n";
    CHECK_ERR(weft_gpu_parse(m, strlen(m), "y.gpu", &g, NULL), WEFT_OK);
    CHECK_REL(weft_gpu_ceiling(&g, WEFT_PREC_BF16), 400e12, 1e-15);
    CHECK_REL(weft_gpu_ceiling(&g, WEFT_PREC_FP8), 700e12, 1e-15);
    CHECK_ERR(weft_gpu_parse(ok, strlen(ok), "x1.gpu", &g, NULL), WEFT_OK);
    CHECK_REL(weft_gpu_ceiling(&g, WEFT_PREC_FP8), 1000e12 * 271.2 / 312, 1e-12);
}

/* A step of every kind of collective with a trace, and a small sweep,
 * under injected allocation failures: each fails with WEFT_ENOMEM and
 * leaks nothing. */
typedef struct oom_arg {
    const weft_topo *t, *small;
    FILE *trace;
} oom_arg;

static weft_err oom_ctor(void *argp)
{
    oom_arg *a = argp;
    weft_gpu g;
    weft_gpu_find("h100-sxm", &g);
    weft_model m;
    memset(&m, 0, sizeof m);
    m.layers = 4;
    m.hidden = 256;
    m.heads = 8;
    m.seq = 128;
    m.vocab = 1024;
    m.experts = 4;
    m.topk = 2;
    weft_parallel p;
    weft_parallel_init(&p);
    p.tp = 2;
    p.pp = 2;
    p.ep = 2;
    p.cp = 2;
    p.layers_per_vstage = 1;
    p.global_batch = 4;
    p.dist_opt = true;
    weft_work_ctx *c = NULL;
    weft_err err = weft_work_ctx_new(a->t, &g, NULL, &c);
    if (err)
        return err;
    weft_step_result r;
    rewind(a->trace);
    err = weft_work_step(c, &m, &p, false, a->trace, &r, NULL);
    weft_work_ctx_free(c);
    c = NULL;
    weft_sweep_entry *e = NULL;
    size_t n = 0;
    m.layers = 2;
    m.experts = 0;
    p.ep = 1;
    if (!err)
        err = weft_work_ctx_new(a->small, &g, NULL, &c);
    if (!err)
        err = weft_work_sweep(c, &m, &p, &e, &n, NULL);
    weft_work_sweep_free(e);
    weft_work_ctx_free(c);
    return err;
}

static void oom_dtor(void *arg)
{
    (void)arg;
}

static void test_oom(void)
{
    weft_topo *t = weft__test_topo_spec("switch:16,bw=100");
    weft_topo *small = weft__test_topo_spec("switch:2,bw=100");
    FILE *f = tmpfile();
    CHECK(t != NULL && small != NULL && f != NULL);
    if (t && small && f) {
        oom_arg a = {t, small, f};
        CHECK(weft_test_oom_sweep("work step", oom_ctor, oom_dtor, &a) > 0);
    }
    if (f)
        fclose(f);
    weft_topo_free(small);
    weft_topo_free(t);
}

/* --grad-compression int8 on gpt-1.7b, DP 16 over a100:2 (fp32 main
 * gradients, one bucket of E parameters: no --overlap-grad-reduce). The
 * DP all-reduce is the dense ring's simulation at the compressed size
 * E + 4 (int8, one scale) plus the compute at A100's HBM bandwidth: a
 * compress pass (a max pass reading 4E bytes, then reading 4E and writing
 * E: 9E) and 15/16 more in the ring's recompressions, and 2 x 15/16
 * decompress passes (read E, write 4E: 5E); it sends 2 x 15/16 x (4E -
 * (E + 4)) bytes fewer. Not overlapped, it is all exposed, so the step
 * changes by exactly the DP time's change. With 25 Gb/s a host int8
 * beats dense; PowerSGD or a sharded optimizer is refused. */
static void test_grad_compression(void)
{
    const char *fab[2] = {"a100:2", "a100:2,nicbw=3.125Gbps"};
    weft_model m;
    CHECK(weft_model_find("gpt-1.7b", &m));
    weft_gpu g;
    CHECK(weft_gpu_find("a100-80g", &g));
    for (int f = 0; f < 2; f++) {
        weft_topo *t = weft__test_topo_spec(fab[f]);
        weft_work_ctx *c = NULL;
        CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &c), WEFT_OK);
        weft_parallel p;
        weft_parallel_init(&p);
        p.global_batch = 64;
        p.recompute = WEFT_RECOMPUTE_FULL;
        weft_step_result dense, q;
        weft_diag d = {0};
        CHECK_ERR(weft_work_step(c, &m, &p, true, NULL, &dense, &d), WEFT_OK);
        CHECK(dense.compress_s == 0 && dense.compress_saved_bytes == 0);
        CHECK_ERR(weft_compressor_parse("int8", &p.grad_comp, &d), WEFT_OK);
        CHECK_ERR(weft_work_step(c, &m, &p, true, NULL, &q, &d), WEFT_OK);
        double E = (double)q.counts.params, wire;
        CHECK_ERR(weft__work_coll_s(c, &p, 16,
                                    (1u << WEFT_DIM_DP) | (1u << WEFT_DIM_EP) | (1u << WEFT_DIM_CP),
                                    WEFT_COLL_ALLREDUCE, false, (uint64_t)E + 4, &wire, &d),
                  WEFT_OK);
        double cpass = 9 * E / g.hbm_bw, dpass = 5 * E / g.hbm_bw;
        double comp = (1 + 15.0 / 16) * cpass + 2 * 15.0 / 16 * dpass;
        CHECK_REL(q.compress_s, comp, 1e-12);
        /* The compression pass runs on the compute stream, the rest in
         * the collective: exposed, both. */
        CHECK_REL(q.compress_gpu_s, cpass, 1e-12);
        CHECK_REL(q.comm_s[WEFT_COMM_DP], wire + comp - q.compress_gpu_s, 1e-12);
        CHECK_REL(q.exposed_s[WEFT_COMM_DP], wire + comp, 1e-12);
        CHECK_INT(q.compress_saved_bytes,
                  (uint64_t)(2.0 * 15 / 16 * 4 * E - 2.0 * 15 / 16 * (E + 4)));
        CHECK_INT(q.comm_bytes[WEFT_COMM_DP], (uint64_t)(2.0 * 15 / 16 * (E + 4)));
        CHECK_REL(q.step_s - dense.step_s,
                  q.exposed_s[WEFT_COMM_DP] - dense.exposed_s[WEFT_COMM_DP], 1e-9);
        printf("%s gpt-1.7b step: dense %.4f s (dp %.4f), int8 %.4f s (dp %.4f, of it "
               "compute %.4f)\n",
               fab[f], dense.step_s, dense.comm_s[WEFT_COMM_DP], q.step_s, q.comm_s[WEFT_COMM_DP],
               q.compress_s);
        if (f)
            CHECK(q.step_s < dense.step_s);
        /* topk:0.01 on the GPU: GRACE's topk on PyTorch's radix select
         * moves 12 + 16 + 0.56 = 28.56 bytes an fp32 element
         * (docs/compression.md, "Compute cost"), on the compute stream. */
        CHECK_ERR(weft_compressor_parse("topk:0.01", &p.grad_comp, &d), WEFT_OK);
        CHECK_ERR(weft_work_step(c, &m, &p, true, NULL, &q, &d), WEFT_OK);
        CHECK_REL(q.compress_gpu_s, 28.56 * E / g.hbm_bw, 1e-12);
        CHECK_ERR(weft_compressor_parse("hash:0.01", &p.grad_comp, &d), WEFT_OK);
        CHECK_ERR(weft_work_step(c, &m, &p, true, NULL, &q, &d), WEFT_EINVAL);
        CHECK_STR(d.msg, "--grad-compression: the step does not model hash (a quantizer or "
                         "a sparsifier whose GPU kernels are modelled: int8, fp8, qsgd:S, "
                         "sign, topk:D, dgc:D, randk:D)");
        CHECK_ERR(weft_compressor_parse("powersgd:4", &p.grad_comp, &d), WEFT_OK);
        CHECK_ERR(weft_work_step(c, &m, &p, true, NULL, &q, &d), WEFT_EINVAL);
        CHECK_STR(d.msg, "--grad-compression: the step does not model powersgd (a quantizer or "
                         "a sparsifier whose GPU kernels are modelled: int8, fp8, qsgd:S, "
                         "sign, topk:D, dgc:D, randk:D)");
        CHECK_ERR(weft_compressor_parse("sign", &p.grad_comp, &d), WEFT_OK);
        p.dist_opt = true;
        CHECK_ERR(weft_work_step(c, &m, &p, true, NULL, &q, &d), WEFT_EINVAL);
        CHECK_STR(d.msg, "--grad-compression compresses the gradient all-reduce; "
                         "--use-distributed-optimizer reduce-scatters");
        weft_work_ctx_free(c);
        weft_topo_free(t);
    }
}

int main(void)
{
    test_deepseek_v3_counts();
    test_moe_skew();
    test_embedding_loss();
    test_counts();
    test_llama_moe_counts();
    test_checks();
    test_groups();
    test_dp_groups_share_spine();
    test_volumes();
    test_gpu_file();
    test_oom();
    test_grad_compression();
    return weft_test_done();
}
