/* Compute time: per kernel FLOPs and bytes, a roofline with a
 * shape-dependent GEMM efficiency. docs/step.md ("Compute") gives the model:
 *
 *   time = max(flops / (ceiling x eff), bytes / hbm_bw)
 *   eff  = WEFT_WORK_GEMM_EFF x tile(M) x tile(N) x wave x K / (K + 64)
 *
 * ceiling is the GPU's measured maximum achievable matmul FLOP/s in the
 * precision (weft_gpu_ceiling), not its data-sheet peak: H100 reaches
 * 80 % of its bf16 peak and 71 % of its fp8 peak where A100 reaches 87 %.
 *
 * tile(d) = d / (128 ceil(d / 128)) is the work a 128-wide output tile
 * wastes at the matrix edge; wave = tiles / (sms x ceil(tiles / sms)) the
 * share of the last wave of thread blocks that finds an SM busy; K / (K + 64)
 * the prologue and epilogue of a tile against its K loop (64 deep). Only
 * WEFT_WORK_GEMM_EFF is fitted (on the development data). Element-wise
 * kernels (norms, softmax, dropout, activations, the optimizer) are bound
 * by HBM: their bytes read and written over hbm_bw.
 */
#include <math.h>

#include "work/work_internal.h"

static double tile(uint64_t dim)
{
    uint64_t t = (dim + 127) / 128;
    return (double)dim / (double)(t * 128);
}

double weft__work_gemm_eff(const weft_gpu *g, uint64_t batch, uint64_t M, uint64_t N, uint64_t K)
{
    uint64_t tiles = batch * ((M + 127) / 128) * ((N + 127) / 128);
    uint64_t sms = g->sms ? g->sms : 1;
    double wave = (double)tiles / (double)(sms * ((tiles + sms - 1) / sms));
    return WEFT_WORK_GEMM_EFF * tile(M) * tile(N) * wave * (double)K / (double)(K + 64);
}

double weft__work_roofline_s(const weft_gpu *g, double flops, double bytes)
{
    double peak = weft_gpu_ceiling(g, WEFT_PREC_BF16);
    double tc = peak > 0 ? flops / (peak * WEFT_WORK_GEMM_EFF) : 0;
    double tm = g->hbm_bw > 0 ? bytes / g->hbm_bw : 0;
    return tc > tm ? tc : tm;
}

static double elem_bytes(weft_prec p)
{
    return p == WEFT_PREC_FP8 ? 1 : p == WEFT_PREC_FP32 ? 4 : 2;
}

double weft__work_gemm_s(const weft_gpu *g, weft_prec prec, uint64_t batch, uint64_t M, uint64_t N,
                         uint64_t K)
{
    if (!batch || !M || !N || !K)
        return 0;
    double flops = 2.0 * (double)batch * (double)M * (double)N * (double)K;
    double peak = weft_gpu_ceiling(g, prec);
    double eb = elem_bytes(prec);
    /* Operands in the precision, the output in 16 bits. */
    double bytes = (double)batch * (eb * ((double)M * K + (double)K * N) + 2.0 * M * N);
    double tc = flops / (peak * weft__work_gemm_eff(g, batch, M, N, K));
    double tm = bytes / g->hbm_bw;
    return tc > tm ? tc : tm;
}

static double mem_s(const weft_gpu *g, double bytes)
{
    return bytes / g->hbm_bw;
}

/* The precision of the GEMMs outside Transformer Engine's Linear layers.
 * FP8 (fp8_autocast) runs only the Linear layers' GEMMs in FP8: the
 * attention core stays 16-bit unless the recipe's fp8_dpa is set, which
 * defaults to False (NVIDIA/TransformerEngine
 * transformer_engine/common/recipe/__init__.py @3ec998e9, v1.8;
 * Megatron-Core's fp8_dot_product_attention defaults to False,
 * NVIDIA/Megatron-LM megatron/core/transformer/transformer_config.py
 * @baf94af3, core_r0.8.0), and the output layer is Megatron's own
 * ColumnParallelLinear, not a TE module (megatron/core/models/gpt/
 * gpt_model.py, same commit). */
static weft_prec non_te_prec(weft_prec p)
{
    return p == WEFT_PREC_FP8 ? WEFT_PREC_BF16 : p;
}

/* FP8 casts around one TE Linear of `in` input and `out` output elements
 * (NVIDIA/TransformerEngine transformer_engine/pytorch/module/linear.py,
 * layernorm_linear.py and base.py's grad_output_preprocess @3ec998e9):
 * the forward casts its 16-bit input to FP8 and writes its transpose for
 * the weight gradient (fp8_cast_transpose_fused: read 2 bytes, write 1 +
 * 1), or, behind a fused norm that writes FP8 itself, transposes it in
 * the backward (fp8_transpose: read 1, write 1); the backward casts and
 * transposes the output gradient (4 bytes). *f and *b gather the bytes of
 * the forward and of the backward. */
static void fp8_linear(double in, double out, bool norm_fused, double *f, double *b)
{
    if (norm_fused)
        *b += 2.0 * in;
    else
        *f += 4.0 * in;
    *b += 4.0 * out;
}

/* The bookkeeping of Transformer Engine's context-parallel attention
 * around its per-step fused kernels, in bytes of one CP rank, forward
 * (*f) and backward (*b): AttnFuncWithCP in NVIDIA/TransformerEngine
 * transformer_engine/pytorch/attention.py @3ec998e9 (v1.8), causal, the
 * sbhd layout Megatron-Core passes, the fused (cuDNN) path. q, o and kv are
 * the rank's query, output and key-plus-value elements (16-bit); a copy
 * reads and writes 2 bytes an element (4), an in-place add reads 2 + 2 and
 * writes 2 (6). Rank r of cp holds chunks r and 2cp-1-r of the sequence;
 * step 0 runs the diagonal block. Forward: keys and values concatenated
 * into the first ring buffer (4 kv), the output zeroed (2 o); each later
 * step copies the first half of the received keys and values when
 * i <= r (2 kv) or the second half of the query otherwise (2 q); every
 * step merges its partial output into the output (flash_attn_fwd_out_
 * correction, one fused read of the step's output and read-write of the
 * output: 6 o, or 3 o on the half output when i > r). Backward (steps in
 * reverse, the diagonal last): the keys and values copied into the ring
 * buffer (4 kv); a step that sees half of the keys copies them (2 kv), one
 * that sees half of the query copies its query, output and output gradient
 * halves (2 q + 4 o); dq is copied or added (full or half, as TE's
 * branches); dk and dv are concatenated (torch.cat: 4 of their elements)
 * and added or copied into the ring's dkv buffer. The step is as slow as
 * its slowest rank: the rank with the most bytes is returned. The small
 * softmax statistics (no head dimension) are left out. */
void weft__work_cp_attn_bytes(uint32_t cp, double q, double o, double kv, double *f, double *b)
{
    *f = *b = 0;
    for (uint32_t r = 0; r < cp; r++) {
        double fr = 4 * kv + 2 * o, br = 4 * kv;
        for (uint32_t i = 0; i < cp; i++) {
            if (i > 0)
                fr += i <= r ? 2 * kv : 2 * q;
            fr += i <= r ? 6 * o : 3 * o;
        }
        for (uint32_t i = 0; i < cp; i++) {
            bool diag = i == cp - 1, half_kv = !diag && i >= cp - r - 1;
            if (half_kv)
                br += 2 * kv;
            else if (!diag && i < cp - r - 1)
                br += 2 * q + 4 * o;
            /* dq */
            if (i > cp - r - 1)
                br += 6 * q;
            else if (i == cp - r - 1)
                br += r == cp - 1 ? 4 * q : 2 * q + 3 * q;
            else
                br += i > 0 ? 3 * q : 2 * q;
            /* dk, dv: concatenated, then accumulated */
            br += half_kv ? 2 * kv : 4 * kv;
            if (diag)
                br += r == 0 ? 3 * kv + 2 * kv : 6 * kv;
            else if (half_kv)
                br += i == 0 && r == cp - 1 ? 2 * kv : 3 * kv;
            else
                br += i > 0 ? 6 * kv : 4 * kv;
        }
        if (fr + br > *f + *b) {
            *f = fr;
            *b = br;
        }
    }
}

/* One layer's forward compute, its attention core, and the time of the
 * memory-bound kernels whose backward is not twice their forward, of its
 * forward (*cast_f) and of its backward (*cast_b): with FP8 the casts,
 * with CP Transformer Engine's bookkeeping (weft__work_cp_attn_bytes), with grouped
 * queries Megatron-Core's split of the QKV output;
 * lin[4] receives the forward GEMMs of its QKV (MLA: all its query, key
 * and value projections), output projection, FC1 and FC2 (0 and 0 for an
 * MoE layer), the GEMMs TP communication overlaps with. */
static void layer_fwd(const weft_gpu *g, const weft_model *m, const weft_parallel *p, bool moe,
                      uint64_t routed, double *gemm_s, double *elem_s, double *core, double *cast_f,
                      double *cast_b, double lin[4])
{
    lin[2] = lin[3] = 0;
    weft_prec pr = p->prec, cpr = non_te_prec(pr);
    double cf = 0, cb = 0; /* FP8 cast bytes, forward and backward */
    double xf = 0, xb = 0; /* CP and GQA bookkeeping bytes, likewise */
    uint64_t tp = p->tp, b = p->micro_batch, s = m->seq, sl = s / p->cp, Tl = b * sl;
    uint64_t h = m->hidden, a = m->heads / tp, d = m->kv_channels, gq = m->query_groups / tp;
    double sp = p->sp ? (double)tp : 1.0;
    /* Element-wise traffic of the parts that are not TP-split (norms,
     * dropout-add), in bytes. */
    double ln = 2.0 * 2 * Tl * h / sp, bda = 7.0 * Tl * h / sp;
    double qkv, scores, av, proj;
    if (m->mla) {
        /* Down projections (replicated over TP), then the heads' up
         * projections; scores over qk + rope channels, values of v. */
        uint64_t qk = (uint64_t)m->qk_head + m->qk_rope, v = m->v_head;
        uint64_t ql = m->q_lora, kvl = m->kv_lora;
        qkv = (ql ? weft__work_gemm_s(g, pr, 1, Tl, ql, h) +
                        weft__work_gemm_s(g, pr, 1, Tl, a * qk, ql)
                  : weft__work_gemm_s(g, pr, 1, Tl, a * qk, h)) +
              weft__work_gemm_s(g, pr, 1, Tl, kvl + m->qk_rope, h) +
              weft__work_gemm_s(g, pr, 1, Tl, a * (m->qk_head + v), kvl);
        scores = weft__work_gemm_s(g, cpr, b * a, sl, s, qk);
        av = weft__work_gemm_s(g, cpr, b * a, sl, v, s);
        proj = weft__work_gemm_s(g, pr, 1, Tl, h, a * v);
        if (ql) {
            fp8_linear((double)Tl * h, (double)Tl * ql, false, &cf, &cb);
            fp8_linear((double)Tl * ql, (double)Tl * a * qk, false, &cf, &cb);
        } else {
            fp8_linear((double)Tl * h, (double)Tl * a * qk, false, &cf, &cb);
        }
        fp8_linear((double)Tl * h, (double)Tl * (kvl + m->qk_rope), false, &cf, &cb);
        fp8_linear((double)Tl * kvl, (double)Tl * a * (m->qk_head + v), false, &cf, &cb);
        fp8_linear((double)Tl * a * v, (double)Tl * h, false, &cf, &cb);
    } else {
        qkv = weft__work_gemm_s(g, pr, 1, Tl, d * (a + 2 * gq), h);
        scores = weft__work_gemm_s(g, cpr, b * a, sl, s, d);
        av = weft__work_gemm_s(g, cpr, b * a, sl, d, s);
        proj = weft__work_gemm_s(g, pr, 1, Tl, h, a * d);
        /* QKV behind the input norm (TE's LayerNormLinear), the output
         * projection on the attention's 16-bit output. */
        fp8_linear((double)Tl * h, (double)Tl * d * (a + 2 * gq), true, &cf, &cb);
        fp8_linear((double)Tl * a * d, (double)Tl * h, false, &cf, &cb);
        /* Grouped queries: Megatron-Core splits the QKV output [s, b, g,
         * (a/g + 2) d] into query, key and value views (TE's SplitAlongDim)
         * and reshapes the query to [s, b, a, d], which copies it (its
         * groups are not contiguous); backward, SplitAlongDim concatenates
         * the three separate gradients (torch.cat). NVIDIA/Megatron-LM
         * megatron/core/transformer/attention.py @baf94af3 (core_r0.8.0),
         * get_query_key_value_tensors; NVIDIA/TransformerEngine
         * transformer_engine/pytorch/attention.py @3ec998e9, _SplitAlongDim.
         * With as many groups as heads the reshape is a view and a fused
         * attention returns its gradients in one buffer: nothing. */
        if (gq < a) {
            xf += 4.0 * Tl * a * d;
            xb += 4.0 * Tl * (a + 2 * gq) * d;
        }
    }
    if (p->cp > 1) {
        uint64_t qk = m->mla ? (uint64_t)m->qk_head + m->qk_rope : d;
        uint64_t v = m->mla ? m->v_head : d, kvh = m->mla ? a : gq;
        double f, bb;
        weft__work_cp_attn_bytes(p->cp, (double)Tl * a * qk, (double)Tl * a * v,
                                 (double)Tl * kvh * (qk + v), &f, &bb);
        xf += f;
        xb += bb;
    }
    double E = (double)b * a * sl * s;
    double softmax = mem_s(g, 9.0 * E);
    if (p->flash_attn) {
        /* One fused kernel (Dao 2023, FlashAttention-2): the scores stay
         * on chip, so HBM sees Q, K, V and O once; with the causal mask it
         * skips the blocks above the diagonal, half the QK^T and AV work
         * (Sec. 3.1.1), at the shape efficiency of its QK^T tiles. */
        uint64_t qk = m->mla ? (uint64_t)m->qk_head + m->qk_rope : d;
        uint64_t v = m->mla ? m->v_head : d, kvh = m->mla ? a : gq;
        double flops = 0.5 * 2.0 * b * a * sl * s * (double)(qk + v);
        double peak = weft_gpu_ceiling(g, cpr);
        double eff = weft__work_gemm_eff(g, b * a, sl, s, qk);
        double bytes = 2.0 * b * ((double)a * sl * (qk + v) + (double)kvh * s * (qk + v));
        double tc = flops / (peak * eff), tm = mem_s(g, bytes);
        scores = tc > tm ? tc : tm;
        av = 0;
        softmax = 0;
    }
    double mlp = 0, mlp_elem = 0;
    uint64_t up = m->swiglu ? 2 : 1;
    if (moe) {
        uint64_t local = m->experts / p->ep;
        /* Tokens per local expert on the busiest rank: the balanced share,
         * or what a skewed routing sends it, spread over its experts. */
        uint64_t tok = routed ? (routed + local - 1) / local
                              : (Tl * m->topk * p->ep + m->experts - 1) / m->experts;
        uint64_t f = m->moe_ffn / tp;
        mlp += weft__work_gemm_s(g, WEFT_PREC_BF16, 1, Tl, m->experts, h); /* router */
        mlp += (double)local * (weft__work_gemm_s(g, pr, 1, tok, f * up, h) +
                                weft__work_gemm_s(g, pr, 1, tok, h, f));
        fp8_linear((double)local * tok * h, (double)local * tok * f * up, false, &cf, &cb);
        fp8_linear((double)local * tok * f, (double)local * tok * h, false, &cf, &cb);
        if (m->shared_experts) {
            mlp += weft__work_gemm_s(g, pr, 1, Tl, f * up * m->shared_experts, h) +
                   weft__work_gemm_s(g, pr, 1, Tl, h, f * m->shared_experts);
            fp8_linear((double)Tl * h, (double)Tl * f * up * m->shared_experts, false, &cf, &cb);
            fp8_linear((double)Tl * f * m->shared_experts, (double)Tl * h, false, &cf, &cb);
        }
        /* Permute and unpermute the routed copies, the activation. */
        double copies = (double)Tl * m->topk;
        mlp_elem = mem_s(g, 2.0 * 2 * 2 * copies * h + (up * 2.0 + 2) * copies * f);
    } else {
        uint64_t f = m->ffn / tp;
        lin[2] = weft__work_gemm_s(g, pr, 1, Tl, f * up, h);
        lin[3] = weft__work_gemm_s(g, pr, 1, Tl, h, f);
        mlp = lin[2] + lin[3];
        mlp_elem = mem_s(g, (up * 2.0 + 2) * (double)Tl * f);
        /* FC1 behind the norm (LayerNormMLP / LayerNormLinear), FC2. */
        fp8_linear((double)Tl * h, (double)Tl * f * up, true, &cf, &cb);
        fp8_linear((double)Tl * f, (double)Tl * h, false, &cf, &cb);
    }
    lin[0] = qkv;
    lin[1] = proj;
    *gemm_s = qkv + proj + mlp;
    *elem_s = mem_s(g, 2 * ln + 2 * bda) + mlp_elem;
    *core = scores + av + softmax;
    *cast_f = mem_s(g, (pr == WEFT_PREC_FP8 ? cf : 0) + xf);
    *cast_b = mem_s(g, (pr == WEFT_PREC_FP8 ? cb : 0) + xb);
}

/* One layer's forward, backward and recomputation (p->recompute: its
 * forward, or its attention core) from its forward GEMMs, element-wise
 * kernels and attention core. Backward: two GEMMs per forward GEMM (data
 * and weight gradients), element-wise kernels read and write twice as
 * much; a fused attention kernel's backward runs five GEMMs of the
 * forward's two (it recomputes the scores): 2.5 times its forward. */
static void fwd_bwd(const weft_parallel *p, double gemm, double elem, double core, double cast_f,
                    double cast_b, double *fwd, double *bwd, double *rec)
{
    *fwd = gemm + elem + core + cast_f;
    *bwd = 2 * gemm + 2 * elem + (p->flash_attn ? 2.5 : 2.0) * core + cast_b;
    *rec = p->recompute == WEFT_RECOMPUTE_FULL        ? *fwd
           : p->recompute == WEFT_RECOMPUTE_SELECTIVE ? core
                                                      : 0;
}

void weft__work_layer_time(const weft_gpu *g, const weft_model *m, const weft_parallel *p,
                           uint32_t dp, uint64_t routed, weft__layer_time *out)
{
    weft_prec pr = p->prec;
    uint64_t tp = p->tp, b = p->micro_batch, s = m->seq, sl = s / p->cp, Tl = b * sl;
    uint64_t h = m->hidden;
    bool moe = m->experts > 0;
    double gemm, elem, core, cf, cb;
    layer_fwd(g, m, p, moe, routed, &gemm, &elem, &core, &cf, &cb, out->lin);
    fwd_bwd(p, gemm, elem, core, cf, cb, &out->fwd, &out->bwd, &out->recompute);
    out->attn_core = core;
    if (moe)
        layer_fwd(g, m, p, false, 0, &gemm, &elem, &core, &cf, &cb, out->lin);
    fwd_bwd(p, gemm, elem, core, cf, cb, &out->fwd_dense, &out->bwd_dense, &out->recompute_dense);
    uint64_t V = weft__work_vocab(m, tp) / tp;
    double logits = weft__work_gemm_s(g, non_te_prec(pr), 1, Tl, V, h);
    /* The loss on the 16-bit logits, per element, as Megatron-Core's fused
     * cross-entropy runs it (NVIDIA/Megatron-LM megatron/core/fusions/
     * fused_cross_entropy.py and tensor_parallel/cross_entropy.py
     * @baf94af3; each jit_fuser function one torch.compile kernel, its
     * returned and in-place tensors written): forward, the fp32 copy
     * with its maximum (read 2, write 4), exp in place with its sum (read
     * 4, write 4), the division into the softmax (read 4, write 4);
     * backward, the softmax times the output gradient in place and cast
     * to 16 bits (read 4, write 4 + 2). The unfused loss moves more: this
     * is the least. */
    out->logits_fwd = logits + mem_s(g, 22.0 * Tl * V);
    out->logits_bwd = 2 * logits + mem_s(g, 10.0 * Tl * V);
    out->embed_fwd = mem_s(g, 2.0 * 2 * Tl * h);
    /* The input embedding's weight gradient is dense, every micro-batch:
     * PyTorch's embedding backward zeroes a whole [V / TP, h] gradient
     * (at::zeros({num_weights, ...}) in pytorch/pytorch aten/src/ATen/
     * native/cuda/EmbeddingBackwardKernel.cu @01b9dc56; Megatron-Core's
     * VocabParallelEmbedding calls F.embedding, NVIDIA/Megatron-LM
     * megatron/core/tensor_parallel/layers.py @baf94af3) and scatters its
     * rows into it, and Megatron's gradient hook adds it to the fp32 main
     * gradient (param.main_grad.add_(param.grad), megatron/core/
     * distributed/distributed_data_parallel.py, same commit): 2 bytes
     * written, then 2 + 4 read and 4 written, per element. */
    out->embed_bwd = 2 * out->embed_fwd + mem_s(g, 12.0 * V * h);
    /* Adam on fp32 master weights: read grad, master, m, v (16 bytes),
     * write master, m, v and the 16-bit weight (14); zeroing and the norm
     * of the gradients touch every local gradient twice more (8). */
    uint64_t dnm = 0, exm = 0;
    for (uint32_t st = 0; st < p->pp; st++) {
        uint64_t dn1, ex1;
        weft__work_stage_params(m, p, st, &dn1, &ex1);
        if (dn1 + ex1 > dnm + exm) {
            dnm = dn1;
            exm = ex1;
        }
    }
    double all = (double)(dnm + exm), ex = (double)exm, dn = (double)dnm;
    double gdp = weft__work_grad_group(p, dp), egdp = gdp / p->ep;
    double upd = p->dist_opt || p->zero_stage ? dn / gdp + ex / egdp : all;
    double local = p->zero_stage >= 2 ? upd : all;
    /* With FP8, TE casts and transposes each weight once per step, on the
     * first micro-batch, and keeps both for the others (Megatron-Core's TE
     * layers pass is_first_microbatch: NVIDIA/Megatron-LM megatron/core/
     * transformer/custom_layers/transformer_engine.py @baf94af3): read 2
     * bytes, write 1 + 1, on every local weight (the embedding's too, which
     * stays 16-bit: a slight overcount), charged with the optimizer. */
    double wcast = pr == WEFT_PREC_FP8 ? 4.0 * all : 0;
    out->optimizer = mem_s(g, 30.0 * upd + 8.0 * local + wcast);
}
