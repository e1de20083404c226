/* Model presets, parallelism settings, the argument checks and the exact
 * counts (parameters, FLOPs, memory). docs/step.md writes every formula. */
#include <string.h>

#include "work/work_internal.h"

/* Presets; sources in the parallel table below. 0 fields take Megatron's
 * defaults (weft_model_complete). */
static const weft_model models[] = {
    /* name, layers, hidden, ffn, heads, groups, kv_ch, seq, vocab, experts, topk, moe_ffn,
     * shared, swiglu */
    {"gpt3-175b", 96, 12288, 0, 96, 0, 0, 2048, 51200, 0, 0, 0, 0, false, .untie = false},
    {"llama2-70b", 80, 8192, 28672, 64, 8, 0, 4096, 32000, 0, 0, 0, 0, true, .untie = false},
    {"llama3-8b", 32, 4096, 14336, 32, 8, 0, 8192, 128256, 0, 0, 0, 0, true, .untie = false},
    {"llama3-70b", 80, 8192, 28672, 64, 8, 0, 8192, 128256, 0, 0, 0, 0, true, .untie = false},
    {"llama3.1-405b", 126, 16384, 53248, 128, 8, 0, 8192, 128256, 0, 0, 0, 0, true, .untie = false},
    {"mixtral-8x7b", 32, 4096, 14336, 32, 8, 0, 4096, 32000, 8, 2, 14336, 0, true, .untie = false},
    {"deepseek-v3",
     61,
     7168,
     18432,
     128,
     128,
     128,
     4096,
     129280,
     256,
     8,
     2048,
     1,
     true,
     .moe_first_dense = 3,
     .moe_freq = 1,
     .mla = true,
     .q_lora = 1536,
     .kv_lora = 512,
     .qk_head = 128,
     .qk_rope = 64,
     .v_head = 128},
    /* Narayanan et al. SC'21, Table 1 (weak scaling on Selene). */
    {"gpt-1.7b", 24, 2304, 0, 24, 0, 0, 2048, 51200, 0, 0, 0, 0, false, .untie = false},
    {"gpt-3.6b", 30, 3072, 0, 32, 0, 0, 2048, 51200, 0, 0, 0, 0, false, .untie = false},
    {"gpt-7.5b", 36, 4096, 0, 32, 0, 0, 2048, 51200, 0, 0, 0, 0, false, .untie = false},
    {"gpt-18.4b", 40, 6144, 0, 48, 0, 0, 2048, 51200, 0, 0, 0, 0, false, .untie = false},
    {"gpt-39.1b", 48, 8192, 0, 64, 0, 0, 2048, 51200, 0, 0, 0, 0, false, .untie = false},
    {"gpt-76.1b", 60, 10240, 0, 80, 0, 0, 2048, 51200, 0, 0, 0, 0, false, .untie = false},
    {"gpt-145.6b", 80, 12288, 0, 96, 0, 0, 2048, 51200, 0, 0, 0, 0, false, .untie = false},
    {"gpt-310.1b", 96, 16384, 0, 128, 0, 0, 2048, 51200, 0, 0, 0, 0, false, .untie = false},
    {"gpt-529.6b", 105, 20480, 0, 128, 0, 0, 2048, 51200, 0, 0, 0, 0, false, .untie = false},
    {"gpt-1t", 128, 25600, 0, 160, 0, 0, 2048, 51200, 0, 0, 0, 0, false, .untie = false},
};

static const char *const sources[] = {
    "Brown et al. 2020, Language Models are Few-Shot Learners, Table 2.1 (vocabulary padded "
    "to Megatron's 51200)",
    "Touvron et al. 2023, Llama 2 (arXiv 2307.09288) and its config.json",
    "Llama 3 model card and config.json (Meta, 2024)",
    "Llama 3 model card and config.json (Meta, 2024)",
    "Dubey et al. 2024, The Llama 3 Herd of Models (arXiv 2407.21783), Table 3",
    "Jiang et al. 2024, Mixtral of Experts (arXiv 2401.04088), Table 1 (sequence 4096 for "
    "training)",
    "DeepSeek-AI 2024, DeepSeek-V3 Technical Report (arXiv 2412.19437), Sec. 4.2: 61 layers "
    "(the first 3 dense, ffn 18432), hidden 7168, MLA of 128 heads (q rank 1536, kv rank 512, "
    "128 + 64 rotary query/key and 128 value channels), 256 routed experts of 2048 (top 8) and "
    "1 shared; 671B parameters, 37B active (the multi-token prediction module not counted)",
    "Narayanan et al. SC'21 (arXiv 2104.04473), Table 1",
    "Narayanan et al. SC'21 (arXiv 2104.04473), Table 1",
    "Narayanan et al. SC'21 (arXiv 2104.04473), Table 1",
    "Narayanan et al. SC'21 (arXiv 2104.04473), Table 1",
    "Narayanan et al. SC'21 (arXiv 2104.04473), Table 1",
    "Narayanan et al. SC'21 (arXiv 2104.04473), Table 1",
    "Narayanan et al. SC'21 (arXiv 2104.04473), Table 1",
    "Narayanan et al. SC'21 (arXiv 2104.04473), Table 1",
    "Narayanan et al. SC'21 (arXiv 2104.04473), Table 1",
    "Narayanan et al. SC'21 (arXiv 2104.04473), Table 1",
};

_Static_assert(sizeof models / sizeof *models == sizeof sources / sizeof *sources,
               "one source per preset");

size_t weft_model_count(void)
{
    return sizeof models / sizeof *models;
}

const weft_model *weft_model_at(size_t i)
{
    return i < weft_model_count() ? &models[i] : NULL;
}

const char *weft_model_source(size_t i)
{
    return i < weft_model_count() ? sources[i] : NULL;
}

bool weft_model_find(const char *name, weft_model *out)
{
    for (size_t i = 0; i < weft_model_count(); i++)
        if (!strcmp(models[i].name, name)) {
            *out = models[i];
            return true;
        }
    return false;
}

void weft_model_complete(weft_model *m)
{
    if (!m->ffn)
        m->ffn = 4 * m->hidden;
    if (!m->query_groups)
        m->query_groups = m->heads;
    if (!m->kv_channels && m->heads)
        m->kv_channels = m->hidden / m->heads;
    if (!m->seq)
        m->seq = 2048;
    if (!m->vocab)
        m->vocab = 51200;
    if (m->experts && !m->topk)
        m->topk = 2;
    if (m->experts && !m->moe_ffn)
        m->moe_ffn = m->ffn;
    if (!m->moe_freq)
        m->moe_freq = 1;
    if (m->mla) {
        if (!m->qk_head)
            m->qk_head = 128;
        if (!m->qk_rope)
            m->qk_rope = 64;
        if (!m->v_head)
            m->v_head = 128;
        if (!m->kv_lora)
            m->kv_lora = 512;
    }
}

bool weft__work_is_moe(const weft_model *m, uint32_t layer)
{
    uint32_t f = m->moe_freq ? m->moe_freq : 1;
    return m->experts && layer >= m->moe_first_dense && layer % f == 0;
}

uint32_t weft__work_stage_nlayers(const weft_model *m, const weft_parallel *p, uint32_t stage)
{
    if (p->pp < 2)
        return m->layers;
    uint32_t f = p->first_stage_layers, l = p->last_stage_layers;
    if (stage == 0 && f)
        return f;
    if (stage == p->pp - 1 && l)
        return l;
    uint32_t middle = p->pp - (f ? 1 : 0) - (l ? 1 : 0);
    return middle ? (m->layers - f - l) / middle : 0;
}

uint32_t weft__work_vstages(const weft_model *m, const weft_parallel *p)
{
    if (p->pp < 2)
        return 1;
    if (p->vpp)
        return p->vpp;
    if (p->layers_per_vstage)
        return weft__work_stage_nlayers(m, p, 0) / p->layers_per_vstage;
    return 1;
}

/* Megatron's layer order: the model is cut into pp x v chunks, chunk
 * j pp + s (virtual stage j of stage s) holding stage s's layers / v, in
 * order; so chunk j of stage s starts after j whole rounds of layers / v
 * and the chunks of the stages before s in round j. */
void weft__work_stage_layers(const weft_model *m, const weft_parallel *p, uint32_t stage,
                             uint32_t *moe, uint32_t *dense)
{
    uint32_t v = weft__work_vstages(m, p), nl = weft__work_stage_nlayers(m, p, stage);
    uint32_t chunk = nl / v, round = m->layers / v, before = 0, nm = 0;
    for (uint32_t s = 0; s < stage; s++)
        before += weft__work_stage_nlayers(m, p, s) / v;
    if (!m->experts) {
        *moe = 0;
        *dense = nl;
        return;
    }
    for (uint32_t j = 0; j < v; j++) {
        uint32_t first = j * round + before;
        for (uint32_t i = 0; i < chunk; i++)
            nm += weft__work_is_moe(m, first + i);
    }
    *moe = nm;
    *dense = nl - nm;
}

static uint32_t moe_layers(const weft_model *m)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->layers; i++)
        n += weft__work_is_moe(m, i);
    return n;
}

const char *weft_recompute_name(weft_recompute r)
{
    static const char *const names[] = {"none", "selective", "full"};
    return (unsigned)r <= WEFT_RECOMPUTE_FULL ? names[r] : "?";
}

static const char *const dim_names[WEFT__DIM_COUNT] = {"tp", "cp", "ep", "dp", "pp"};

const char *weft__work_dim_name(uint32_t dim)
{
    return dim < WEFT__DIM_COUNT ? dim_names[dim] : "?";
}

void weft_parallel_init(weft_parallel *p)
{
    memset(p, 0, sizeof *p);
    p->tp = p->pp = p->cp = p->ep = 1;
    p->global_batch = p->micro_batch = 1;
    p->prec = WEFT_PREC_BF16;
    for (uint32_t i = 0; i < WEFT__DIM_COUNT; i++)
        p->order[i] = i;
}

bool weft_parallel_order_parse(const char *text, uint32_t order[WEFT__DIM_COUNT])
{
    uint32_t got[WEFT__DIM_COUNT], seen = 0;
    const char *s = text;
    for (uint32_t i = 0; i < WEFT__DIM_COUNT; i++) {
        uint32_t k = 0;
        while (k < WEFT__DIM_COUNT && strncmp(s, dim_names[k], 2))
            k++;
        if (k == WEFT__DIM_COUNT || (seen >> k & 1))
            return false;
        seen |= 1u << k;
        got[i] = k;
        s += 2;
        if (i + 1 < WEFT__DIM_COUNT && *s++ != '-')
            return false;
    }
    if (*s)
        return false;
    memcpy(order, got, sizeof got);
    return true;
}

/* ---- Counts ----------------------------------------------------------- */

/* Megatron pads the vocabulary to a multiple of 128 x TP
 * (--make-vocab-size-divisible-by 128). */
uint64_t weft__work_vocab(const weft_model *m, uint32_t tp)
{
    uint64_t q = 128ull * tp;
    return (m->vocab + q - 1) / q * q;
}

static bool gpt(const weft_model *m)
{
    return !m->swiglu;
}

/* Matrices of an MLP: 3 gated, 2 otherwise. */
static uint64_t mats(const weft_model *m)
{
    return m->swiglu ? 3 : 2;
}

void weft__work_layer_params(const weft_model *m, bool moe, weft__layer_params *lp)
{
    uint64_t h = m->hidden, qkv = (uint64_t)m->kv_channels * (m->heads + 2ull * m->query_groups);
    uint64_t ad = (uint64_t)m->kv_channels * m->heads;
    lp->attn = h * qkv + ad * h + (gpt(m) ? qkv + h : 0);
    lp->norm = gpt(m) ? 4 * h : 2 * h;
    if (m->mla) {
        /* Megatron's MLASelfAttention: the down projections and their
         * norms are replicated over TP, the up projections split. */
        uint64_t a = m->heads, qk = (uint64_t)m->qk_head + m->qk_rope;
        uint64_t kvl = m->kv_lora, ql = m->q_lora;
        lp->attn = (ql ? ql * a * qk : h * a * qk) + kvl * a * ((uint64_t)m->qk_head + m->v_head) +
                   a * m->v_head * h;
        lp->norm += h * (kvl + m->qk_rope) + kvl + (ql ? h * ql + ql : 0);
    }
    if (moe) {
        uint64_t one = mats(m) * h * m->moe_ffn + (gpt(m) ? m->moe_ffn + h : 0);
        lp->dense_mlp = h * m->experts + m->shared_experts * one; /* router, shared */
        lp->expert = m->experts * one;
        lp->expert_one = one;
    } else {
        lp->dense_mlp = mats(m) * h * m->ffn + (gpt(m) ? m->ffn + h : 0);
        lp->expert = lp->expert_one = 0;
    }
}

/* Forward FLOPs of one layer (MoE or dense) for one micro-batch of b
 * sequences (whole layer, all TP ranks): 2mnk per GEMM. attn_core is the
 * QK^T and AV part. */
void weft__work_layer_flops(const weft_model *m, bool moe, uint64_t b, uint64_t *total,
                            uint64_t *attn_core)
{
    uint64_t s = m->seq, h = m->hidden, T = b * s, d = m->kv_channels, a = m->heads;
    uint64_t qkv = d * (a + 2ull * m->query_groups);
    uint64_t core = 4 * b * a * s * s * d;
    uint64_t f = 2 * T * h * qkv + core + 2 * T * a * d * h;
    if (m->mla) {
        uint64_t qk = (uint64_t)m->qk_head + m->qk_rope, v = m->v_head;
        uint64_t kvl = m->kv_lora, ql = m->q_lora;
        core = 2 * b * a * s * s * (qk + v);
        f = (ql ? 2 * T * h * ql + 2 * T * ql * a * qk : 2 * T * h * a * qk) +
            2 * T * h * (kvl + m->qk_rope) + 2 * T * kvl * a * (m->qk_head + v) + core +
            2 * T * a * v * h;
    }
    if (moe)
        f += 2 * T * h * m->experts +
             ((uint64_t)m->topk + m->shared_experts) * 2 * T * h * m->moe_ffn * mats(m);
    else
        f += 2 * T * h * m->ffn * mats(m);
    *total = f;
    *attn_core = core;
}

/* Activation bytes one micro-batch leaves stored per layer on one GPU
 * (Korthikanti et al. 2022, generalized to GQA and gated MLPs), and the
 * full set of one layer (what full recomputation rebuilds). */
uint64_t weft__work_layer_act(const weft_model *m, bool moe, const weft_parallel *p,
                              weft_recompute r)
{
    uint64_t sl = m->seq / p->cp, b = p->micro_batch, T = b * sl, h = m->hidden;
    uint64_t a = m->heads, d = m->kv_channels, g = m->query_groups, tp = p->tp;
    uint64_t rep = 10 * h; /* norm inputs, QKV and MLP inputs, dropout masks */
    uint64_t mlp1 = (m->swiglu ? 6 : 4) * (uint64_t)(moe ? m->moe_ffn : m->ffn);
    if (moe)
        mlp1 *= (uint64_t)m->topk + m->shared_experts;
    uint64_t part = 2 * a * d + 4 * g * d + 2 * a * d + mlp1;
    if (m->mla) {
        /* Q and K of qk + rope channels, V and the context of v per head;
         * the latents (replicated) join the unsplit part. */
        uint64_t qk = (uint64_t)m->qk_head + m->qk_rope;
        part = 2 * a * qk + 2 * a * qk + 2 * a * m->v_head + 2 * a * m->v_head + mlp1;
        rep += 2 * ((uint64_t)m->q_lora + m->kv_lora + m->qk_rope);
    }
    uint64_t rep_div = p->sp ? tp : 1;
    if (r == WEFT_RECOMPUTE_FULL)
        return T * 2 * h / rep_div;
    uint64_t act = T * rep / rep_div + T * part / tp;
    if (p->flash_attn) /* no scores kept: Q, K, V and O above, fp32 log-sum-exp per head */
        act += 4 * a * T / tp;
    else if (r == WEFT_RECOMPUTE_NONE)
        act += 5 * a * sl * m->seq * b / tp;
    return act;
}

/* The pipeline's stages: even (layers divisible by PP) or with the first
 * and last stages' layers given and the rest split evenly; virtual stages
 * given one way, dividing every stage's layers. */
static weft_err check_stages(const weft_model *m, const weft_parallel *p, weft_diag *d)
{
    uint32_t f = p->first_stage_layers, l = p->last_stage_layers;
    if ((f || l) && p->pp < 2)
        return weft_diag_set(d, WEFT_EINVAL,
                             "--decoder-%s-pipeline-num-layers needs "
                             "--pipeline-model-parallel-size > 1",
                             f ? "first" : "last");
    if (f || l) {
        uint32_t middle = p->pp - (f ? 1 : 0) - (l ? 1 : 0);
        uint64_t given = (uint64_t)f + l;
        if (given > m->layers || (middle == 0 && given != m->layers))
            return weft_diag_set(d, WEFT_EINVAL,
                                 "--decoder-first-pipeline-num-layers (%u) + "
                                 "--decoder-last-pipeline-num-layers (%u) must "
                                 "%s --num-layers (%u)",
                                 f, l, middle ? "leave layers of" : "equal", m->layers);
        uint32_t rest = m->layers - (uint32_t)given;
        if (middle && (rest % middle || rest / middle == 0))
            return weft_diag_set(d, WEFT_EINVAL,
                                 "the %u layers left by "
                                 "--decoder-first/last-pipeline-num-layers do not "
                                 "divide evenly into the other %u pipeline stages",
                                 rest, middle);
        if (p->layers_per_vstage)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "uneven pipeline stages take their virtual "
                                 "stages from --num-virtual-stages-per-pipeline-rank, "
                                 "not --num-layers-per-virtual-pipeline-stage");
    } else if (m->layers % p->pp) {
        return weft_diag_set(d, WEFT_EINVAL,
                             "--num-layers (%u) is not divisible by "
                             "--pipeline-model-parallel-size (%u)",
                             m->layers, p->pp);
    }
    if (p->vpp && p->layers_per_vstage)
        return weft_diag_set(d, WEFT_EINVAL,
                             "--num-layers-per-virtual-pipeline-stage and "
                             "--num-virtual-stages-per-pipeline-rank exclude each "
                             "other");
    if ((p->layers_per_vstage || p->vpp > 1) && p->pp < 2)
        return weft_diag_set(d, WEFT_EINVAL, "%s needs --pipeline-model-parallel-size > 1",
                             p->vpp ? "--num-virtual-stages-per-pipeline-rank"
                                    : "--num-layers-per-virtual-pipeline-stage");
    uint32_t lps = weft__work_stage_nlayers(m, p, 0);
    if (p->layers_per_vstage && lps % p->layers_per_vstage)
        return weft_diag_set(d, WEFT_EINVAL,
                             "--num-layers-per-virtual-pipeline-stage (%u) does "
                             "not divide the %u layers of a pipeline stage",
                             p->layers_per_vstage, lps);
    uint32_t v = weft__work_vstages(m, p);
    for (uint32_t s = 0; s < p->pp && v > 1; s++)
        if (weft__work_stage_nlayers(m, p, s) % v)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "pipeline stage %u's %u layers do not divide "
                                 "into --num-virtual-stages-per-pipeline-rank (%u) "
                                 "virtual stages",
                                 s, weft__work_stage_nlayers(m, p, s), v);
    return WEFT_OK;
}

/* Refuses a configuration whose counts could overflow 64 bits: an upper
 * bound (in double) on a GPU's bytes and a layer's FLOPs, from every
 * width the formulas multiply, must stay below 2^62. A real model is far
 * below (GPT-3 175B: about 2^41 bytes, 2^47 FLOPs per layer). */
static weft_err check_size(const weft_model *m, const weft_parallel *p, uint32_t dp, weft_diag *d)
{
    double h = m->hidden, a = m->heads, dk = m->kv_channels, g = m->query_groups;
    double f = m->ffn > m->moe_ffn ? m->ffn : m->moe_ffn;
    double e = (double)m->experts + m->shared_experts + m->topk + 1;
    double s = m->seq, b = p->micro_batch, L = m->layers, V = (double)m->vocab + 128.0 * p->tp;
    double qk = (double)m->qk_head + m->qk_rope + m->v_head + dk;
    double lat = (double)m->q_lora + m->kv_lora + m->qk_rope;
    double layer = h * dk * (a + 2 * g) + 2 * a * dk * h + 3 * h * f * e + 3 * f * e + h * e +
                   4 * h + h * lat + lat * a * qk * 2 + a * qk * h;
    double params = L * layer + 2 * V * h + s * h + 2 * h;
    double tok = b * s;
    double act = tok * (10 * h + 2 * lat + 4 * a * (dk + qk) + 4 * g * dk + 6 * f * e) +
                 5 * a * s * s * b + 4 * a * tok;
    double bytes = 18 * params + L * act * (p->pp + 1) + 4 * tok * V + 4 * params;
    double flops = 2 * tok * layer + 4 * b * a * s * s * qk + 2 * tok * h * V;
    double lim = 4611686018427387904.0; /* 2^62 */
    (void)dp;
    if (bytes < lim && flops < lim)
        return WEFT_OK;
    return weft_diag_set(d, WEFT_EINVAL,
                         "the model is too large to count in 64 bits (about %.3g bytes per GPU "
                         "or %.3g FLOPs per layer): check --num-layers, --hidden-size, "
                         "--ffn-hidden-size, --seq-length, --vocab-size and --micro-batch-size",
                         bytes, flops);
}

uint32_t weft__work_grad_group(const weft_parallel *p, uint32_t dp)
{
    return dp * p->cp;
}

weft_err weft__work_check(const weft_model *m, const weft_parallel *p, uint32_t ranks, uint32_t *dp,
                          weft_diag *d)
{
    if (!m->layers || !m->hidden || !m->heads)
        return weft_diag_set(d, WEFT_EINVAL,
                             "the model needs --num-layers, --hidden-size and "
                             "--num-attention-heads (or --model)");
    if (!(p->tp && p->pp && p->cp && p->ep && p->micro_batch && p->global_batch))
        return weft_diag_set(d, WEFT_EINVAL, "parallel sizes and batch sizes must be >= 1");
    uint64_t mp = (uint64_t)p->tp * p->pp * p->cp;
    if (!(ranks % mp == 0 && mp <= ranks))
        return weft_diag_set(
            d, WEFT_EINVAL,
            "--tensor-model-parallel-size (%u) x --pipeline-model-parallel-size (%u) x "
            "--context-parallel-size (%u) = %llu does not divide the fabric's %u ranks",
            p->tp, p->pp, p->cp, (unsigned long long)mp, ranks);
    uint32_t dpn = (uint32_t)(ranks / mp);
    weft_err err = check_stages(m, p, d);
    if (err)
        return err;
    if (!(m->heads % p->tp == 0))
        return weft_diag_set(
            d, WEFT_EINVAL,
            "--num-attention-heads (%u) is not divisible by --tensor-model-parallel-size (%u)",
            m->heads, p->tp);
    if (!(m->query_groups && m->heads % m->query_groups == 0))
        return weft_diag_set(
            d, WEFT_EINVAL,
            "--num-attention-heads (%u) is not divisible by --num-query-groups (%u)", m->heads,
            m->query_groups);
    if (!(m->query_groups % p->tp == 0))
        return weft_diag_set(
            d, WEFT_EINVAL,
            "--num-query-groups (%u) is not divisible by --tensor-model-parallel-size (%u)",
            m->query_groups, p->tp);
    if (!(m->ffn % p->tp == 0))
        return weft_diag_set(
            d, WEFT_EINVAL,
            "--ffn-hidden-size (%u) is not divisible by --tensor-model-parallel-size (%u)", m->ffn,
            p->tp);
    if (!(!m->experts || m->moe_ffn % p->tp == 0))
        return weft_diag_set(
            d, WEFT_EINVAL,
            "--moe-ffn-hidden-size (%u) is not divisible by --tensor-model-parallel-size (%u)",
            m->moe_ffn, p->tp);
    if (!(!m->experts || (m->topk >= 1 && m->topk <= m->experts)))
        return weft_diag_set(d, WEFT_EINVAL,
                             "--moe-router-topk (%u) must be between 1 and --num-experts (%u)",
                             m->topk, m->experts);
    if (!(p->ep == 1 || m->experts))
        return weft_diag_set(d, WEFT_EINVAL,
                             "--expert-model-parallel-size (%u) needs --num-experts", p->ep);
    if (!(!m->experts || m->experts % p->ep == 0))
        return weft_diag_set(
            d, WEFT_EINVAL,
            "--num-experts (%u) is not divisible by --expert-model-parallel-size (%u)", m->experts,
            p->ep);
    if (!(dpn % p->ep == 0))
        return weft_diag_set(
            d, WEFT_EINVAL,
            "--expert-model-parallel-size (%u) does not divide the data-parallel size (%u)", p->ep,
            dpn);
    if (!(p->cp == 1 || m->seq % (2 * p->cp) == 0))
        return weft_diag_set(
            d, WEFT_EINVAL,
            "--seq-length (%u) is not divisible by 2 x --context-parallel-size (%u)", m->seq,
            p->cp);
    if (!(!p->sp || (m->seq / p->cp) % p->tp == 0))
        return weft_diag_set(
            d, WEFT_EINVAL,
            "--sequence-parallel: --seq-length (%u) / --context-parallel-size (%u) is not "
            "divisible by --tensor-model-parallel-size (%u)",
            m->seq, p->cp, p->tp);
    /* Megatron's check (megatron/training/arguments.py): overlap needs
     * sequence parallelism, which it turns off at TP 1. */
    if (p->tp_comm_overlap && !(p->sp && p->tp > 1))
        return weft_diag_set(d, WEFT_EINVAL,
                             "--tp-comm-overlap needs --sequence-parallel and "
                             "--tensor-model-parallel-size > 1 (TP %u%s)",
                             p->tp, p->sp ? "" : ", no --sequence-parallel");
    uint64_t per = (uint64_t)p->micro_batch * dpn;
    if (!(p->global_batch % per == 0))
        return weft_diag_set(
            d, WEFT_EINVAL,
            "--global-batch-size (%u) is not divisible by --micro-batch-size (%u) x "
            "data-parallel size (%u)",
            p->global_batch, p->micro_batch, dpn);
    if (p->layers_per_vstage || p->vpp > 1) {
        uint64_t mb = p->global_batch / per;
        if (!(mb % p->pp == 0))
            return weft_diag_set(
                d, WEFT_EINVAL,
                "number of microbatches (%llu) is not divisible by "
                "--pipeline-model-parallel-size (%u) when using the interleaved schedule",
                (unsigned long long)mb, p->pp);
    }
    if (p->zero_stage > 3)
        return weft_diag_set(d, WEFT_EINVAL, "--zero-stage (%u) must be 0, 1, 2 or 3",
                             p->zero_stage);
    if (p->zero_stage && p->dist_opt)
        return weft_diag_set(d, WEFT_EINVAL,
                             "--zero-stage %u and --use-distributed-optimizer "
                             "both shard the optimizer: give one",
                             p->zero_stage);
    if (p->zero_stage >= 2 && p->pp > 1)
        return weft_diag_set(d, WEFT_EINVAL,
                             "--zero-stage %u is incompatible with pipeline "
                             "parallelism (--pipeline-model-parallel-size %u), as "
                             "in DeepSpeed: use stage 1",
                             p->zero_stage, p->pp);
    if ((err = check_size(m, p, dpn, d)))
        return err;
    *dp = dpn;
    return WEFT_OK;
}

/* Parameters one GPU of stage `stage` holds: dense ones split by TP
 * (norms replicated), experts by EP and TP, the input embedding (and
 * learned positions) on the first stage, the output layer (its own for
 * llama, the tied copy for gpt) and the final norm on the last. dense and
 * expert receive the two parts (the distributed optimizer shards them over
 * different groups). */
void weft__work_stage_params(const weft_model *m, const weft_parallel *p, uint32_t stage,
                             uint64_t *dense, uint64_t *expert)
{
    weft__layer_params lm, ld;
    weft__work_layer_params(m, true, &lm);
    weft__work_layer_params(m, false, &ld);
    uint32_t nm, nd;
    weft__work_stage_layers(m, p, stage, &nm, &nd);
    uint64_t h = m->hidden, V = weft__work_vocab(m, p->tp);
    uint64_t dn = nd * ((ld.attn + ld.dense_mlp) / p->tp + ld.norm);
    uint64_t ex = 0;
    if (m->experts) {
        dn += nm * ((lm.attn + lm.dense_mlp) / p->tp + lm.norm);
        ex = nm * (lm.expert / p->ep / p->tp);
    }
    if (stage == 0)
        dn += V * h / p->tp + (gpt(m) ? (uint64_t)m->seq * h : 0);
    if (stage == p->pp - 1) {
        dn += gpt(m) ? 2 * h : h;
        if (!gpt(m) || m->untie || p->pp > 1)
            dn += V * h / p->tp;
    }
    *dense = dn;
    *expert = ex;
}

/* Micro-batches (v > 1: chunks of 1 / v of the stage's layers) whose
 * activations stage st holds at once, at the end of its warm-up. 1F1B
 * (v = 1): pp - st forwards before the first backward. Interleaved:
 * Megatron's warm-up of 2 (pp - st - 1) + (v - 1) pp chunks plus the one
 * the steady state adds, all of them when there are only pp
 * micro-batches. On the first stage this is pp micro-batches times
 * (1 + (pp - 1) / (pp v)), Korthikanti et al. 2022, Sec. 4.2.3. */
static uint64_t inflight(const weft_parallel *p, uint32_t v, uint32_t mb, uint32_t st)
{
    uint64_t n = v > 1 ? 2ull * (p->pp - st - 1) + (uint64_t)(v - 1) * p->pp + 1 : p->pp - st;
    uint64_t all = (uint64_t)mb * v;
    return n < all ? n : all;
}

/* DeepSpeed's default bucket of reduce_bucket_size = 5e8 elements (its
 * configuration documentation, "zero_optimization"). */
#define ZERO_BUCKET 500000000ull

/* Weights, gradients and optimizer state of one GPU holding dn dense and
 * ex expert parameters, sharded over gdp (dense) and egdp (experts).
 * Megatron: 2 + 4 (fp32 main gradients) + 12 bytes per parameter, the 12
 * sharded with the distributed optimizer. ZeRO (Rajbhandari et al. 2020,
 * Sec. 5: 2 + 2 + 12 bytes, 16-bit gradients): stage 1 shards the 12,
 * stage 2 also the gradients, stage 3 also the weights; every stage keeps
 * one 16-bit reduce bucket, and stage 3 the gathered weights of two
 * layers (the one running and the one prefetched). */
static void model_state(const weft_model *m, const weft_parallel *p, uint64_t gdp, uint64_t egdp,
                        uint64_t dn, uint64_t ex, uint64_t *w, uint64_t *g, uint64_t *o)
{
    uint64_t all = dn + ex;
    bool shard = p->dist_opt || p->zero_stage >= 1;
    *o = shard ? 12 * dn / gdp + 12 * ex / egdp : 12 * all;
    if (!p->zero_stage) {
        *w = 2 * all;
        *g = 4 * all;
        return;
    }
    uint64_t sharded = dn / gdp + ex / egdp;
    uint64_t bucket = 2 * (all < ZERO_BUCKET ? all : ZERO_BUCKET);
    *g = (p->zero_stage >= 2 ? 2 * sharded : 2 * all) + bucket;
    *w = 2 * all;
    if (p->zero_stage == 3) {
        weft__layer_params lp;
        weft__work_layer_params(m, m->experts > 0, &lp);
        uint64_t layer = (lp.attn + lp.dense_mlp) / p->tp + lp.norm + lp.expert / p->ep / p->tp;
        *w = 2 * sharded + 2 * 2 * layer;
    }
}

weft_err weft_work_counts(const weft_model *m0, const weft_parallel *p, uint32_t ranks,
                          weft_counts *out, weft_diag *d)
{
    weft_model mm = *m0;
    weft_model_complete(&mm);
    const weft_model *m = &mm;
    weft_counts c;
    memset(&c, 0, sizeof c);
    weft_err err = weft__work_check(m, p, ranks, &c.dp, d);
    if (err)
        return err;
    c.microbatches = p->global_batch / (p->micro_batch * c.dp);
    c.vstages = weft__work_vstages(m, p);
    for (uint32_t st = 0; st < p->pp; st++) {
        uint32_t nl = weft__work_stage_nlayers(m, p, st);
        if (nl > c.stage_layers_max)
            c.stage_layers_max = nl;
    }
    weft__layer_params lm, ld;
    weft__work_layer_params(m, true, &lm);
    weft__work_layer_params(m, false, &ld);
    uint64_t h = m->hidden, V = weft__work_vocab(m, 1);
    uint64_t nm = moe_layers(m), nd = m->layers - nm;
    uint64_t layer_m = lm.attn + lm.dense_mlp + lm.expert + lm.norm;
    uint64_t layer_d = ld.attn + ld.dense_mlp + ld.norm;
    bool tied = gpt(m) && !m->untie;
    c.params = nm * layer_m + nd * layer_d + V * h + (gpt(m) ? (uint64_t)m->seq * h + 2 * h : h) +
               (tied ? 0 : V * h);
    c.params_active = c.params - nm * (lm.expert - (uint64_t)m->topk * lm.expert_one);
    uint64_t core_m, core_d, fl_d;
    weft__work_layer_flops(m, true, p->micro_batch, &c.layer_fwd_flops, &core_m);
    weft__work_layer_flops(m, false, p->micro_batch, &fl_d, &core_d);
    if (!nm)
        c.layer_fwd_flops = fl_d;
    uint64_t Vt = weft__work_vocab(m, p->tp);
    c.logits_fwd_flops = 2ull * p->micro_batch * m->seq * h * Vt;
    double layers_fwd = (double)nm * (double)c.layer_fwd_flops + (double)nd * (double)fl_d;
    double per_mb = layers_fwd + (double)c.logits_fwd_flops;
    double mbs = (double)p->global_batch / p->micro_batch;
    c.model_flops = 3 * per_mb * mbs;
    c.hw_flops = c.model_flops;
    if (p->recompute == WEFT_RECOMPUTE_FULL)
        c.hw_flops += layers_fwd * mbs;
    else if (p->recompute == WEFT_RECOMPUTE_SELECTIVE)
        c.hw_flops += (double)m->layers * (double)core_d * mbs;
    /* Memory: the larger of the first and the last stage. */
    uint64_t act_m = weft__work_layer_act(m, true, p, p->recompute);
    uint64_t act_d = weft__work_layer_act(m, false, p, p->recompute);
    uint64_t full_m = weft__work_layer_act(m, true, p, WEFT_RECOMPUTE_NONE);
    uint64_t full_d = weft__work_layer_act(m, false, p, WEFT_RECOMPUTE_NONE);
    /* One layer's whole set (full recomputation rebuilds one at a time):
     * the larger kind the model has. */
    uint64_t act_full = !nm ? full_d : !nd ? full_m : full_m > full_d ? full_m : full_d;
    uint64_t gdp = weft__work_grad_group(p, c.dp), egdp = gdp / p->ep;
    for (uint32_t st = 0; st < p->pp; st++) {
        uint64_t dn, ex;
        weft__work_stage_params(m, p, st, &dn, &ex);
        uint32_t snm, snd;
        weft__work_stage_layers(m, p, st, &snm, &snd);
        uint64_t w, g, o;
        model_state(m, p, gdp, egdp, dn, ex, &w, &g, &o);
        uint64_t act_stage = snm * act_m + snd * act_d;
        uint64_t act = act_stage * inflight(p, c.vstages, c.microbatches, st);
        if (c.vstages > 1) /* the count above is of chunks of 1 / v of the stage */
            act = (act + c.vstages - 1) / c.vstages;
        if (p->recompute == WEFT_RECOMPUTE_FULL)
            act += act_full;
        if (st == p->pp - 1) /* fp32 logits of one micro-batch */
            act += 4ull * p->micro_batch * (m->seq / p->cp) * Vt / p->tp;
        uint64_t tot = w + g + o + act;
        if (tot > c.mem_total) {
            c.mem_total = tot;
            c.mem_weights = w;
            c.mem_grads = g;
            c.mem_optim = o;
            c.mem_act = act;
            c.params_gpu_max = dn + ex;
        }
    }
    *out = c;
    return WEFT_OK;
}
