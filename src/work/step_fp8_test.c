/* The step's precision and overlap options against hand-computed values:
 * FP8 in Transformer Engine's terms (which GEMMs run in FP8, the casts'
 * bytes), context parallelism's bookkeeping around the attention, the
 * embedding's dense gradient and --tp-comm-overlap's schedules
 * (tp_overlap.c). */
#include <math.h>
#include <string.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "work/testing_work.h"
#include "work/work_internal.h"

/* llama3-8b on an h100-sxm: g, the model completed at sequence `seq` (0:
 * its own), and p initialised for a global batch of 8 in micro-batches of
 * 1; the tests set the parallelism. */
static void llama3_8b(uint32_t seq, weft_gpu *g, weft_model *m, weft_parallel *p)
{
    CHECK(weft_gpu_find("h100-sxm", g));
    CHECK(weft_model_find("llama3-8b", m));
    if (seq)
        m->seq = seq;
    weft_model_complete(m);
    weft_parallel_init(p);
    p->global_batch = 8;
    p->micro_batch = 1;
}

/* FP8 in Transformer Engine's terms: the attention core and the output
 * layer stay 16-bit (the same time as in bf16), and each Linear's casts
 * cost their bytes over HBM: from fwd = gemm + elem + core + cast_f and
 * bwd = 2 gemm + 2 elem + 2.5 core + cast_b, bwd - 2 fwd - 0.5 core is
 * exactly cast_b - 2 cast_f (in bf16 only the grouped-query split's). */
static void test_fp8(void)
{
    weft_gpu g;
    weft_model m;
    weft_parallel p;
    llama3_8b(4096, &g, &m, &p);
    p.tp = 2;
    p.sp = true;
    p.flash_attn = true;
    weft__layer_time b16, f8;
    weft__work_layer_time(&g, &m, &p, 4, 0, &b16);
    p.prec = WEFT_PREC_FP8;
    weft__work_layer_time(&g, &m, &p, 4, 0, &f8);
    CHECK_REL(f8.attn_core, b16.attn_core, 1e-15);
    CHECK_REL(f8.logits_fwd, b16.logits_fwd, 1e-15);
    CHECK(f8.fwd < b16.fwd);
    /* Per GPU: T = 4096 tokens, h = 4096, QKV 3072 = 128 x (16 + 2 x 4),
     * f = 7168 (x2 gated). Grouped queries (8 groups, 32 heads), in any
     * precision: the query copied forward (T x 2048, 4 bytes), the three
     * gradients concatenated backward (T x 3072, 4 bytes). */
    double T = 4096, h = 4096;
    double xf = 4 * T * 2048, xb = 4 * T * 3072;
    CHECK_REL(b16.bwd - 2 * b16.fwd - 0.5 * b16.attn_core, (xb - 2 * xf) / g.hbm_bw, 1e-9);
    /* FP8 forward: proj input T x 2048 and FC2 input T x 7168 cast and
     * transposed (4 bytes each). Backward: QKV and FC1 inputs transposed
     * behind their norms (2), every output gradient cast and transposed
     * (4). */
    double cf = 4 * T * 2048 + 4 * T * 7168;
    double cb = 2 * T * h + 4 * T * 3072 + 4 * T * h + 2 * T * h + 4 * T * 14336 + 4 * T * h;
    CHECK_REL(f8.bwd - 2 * f8.fwd - 0.5 * f8.attn_core, (cb + xb - 2 * (cf + xf)) / g.hbm_bw, 1e-9);
    /* The weights' casts once per step: 4 bytes per local weight. */
    CHECK_REL(f8.optimizer - b16.optimizer, 4.0 * 8.03e9 / 2 / g.hbm_bw, 0.01);
}

/* --tp-comm-overlap (tp_overlap.c): the three schedules and one layer
 * computed by hand, Megatron's check, and a step whose exposed TP falls
 * while its compute stays. */
static void test_tp_overlap(void)
{
    /* Ring exchange, 4 ranks: chunk GEMMs of 1, steps of 2: 1 + 3 x 2. */
    CHECK_REL(weft__ub_ring_s(4, 2, 4), 7, 1e-15);
    CHECK_REL(weft__ub_ring_s(8, 1, 4), 8, 1e-15); /* hidden: 2 + 3 x 2 */
    CHECK_REL(weft__ub_ring_s(8, 1, 1), 8, 1e-15);
    /* Pipeline, 4 splits on 80 of 100 SMs: the GEMM takes 10, chunks of
     * 2.5; 2.5 + 3 x max(2.5, c) + c. */
    CHECK_REL(weft__ub_pipe_s(8, 1, 4, 100, 20), 2.5 + 3 * 2.5 + 1, 1e-15);
    CHECK_REL(weft__ub_pipe_s(8, 3, 4, 100, 20), 2.5 + 3 * 3 + 3, 1e-15);
    CHECK_REL(weft__ub_pipe_s(8, 1, 4, 0, 20), 2 + 3 * 2 + 1, 1e-15); /* no SM count */
    /* Bulk on 20 of 100 SMs: the GEMM loses 20 % while the collective
     * runs (10 + 4 x 0.2), or the collective is the longer. */
    CHECK_REL(weft__ub_bulk_s(10, 4, 100, 20), 10.8, 1e-15);
    CHECK_REL(weft__ub_bulk_s(2, 4, 100, 20), 4, 1e-15);
    CHECK_INT(weft__ub_splits(), 4);
    /* A layer, TP 4, no SM contention (sms 0): QKV 4, projection 2,
     * FC1 8, FC2 6; all-gather 3 (ring steps of 1), reduce-scatter 2,
     * a quarter of it 1.
     *   forward  QKV ring 1 + 3 x 1 = 4: 0; projection pipeline
     *            0.5 + 3 x 1 + 1 = 4.5: 2.5; FC1 ring 2 + 3 x 2: 0;
     *            FC2 1.5 + 3 x 1.5 + 1 = 7: 1.
     *   backward projection's ring 0.5 + 3 x 1 = 3.5: 1.5; QKV bulk
     *            max(3, 4), max(2, 4): 0; FC2's ring 1.5 + 3 x 1.5: 0;
     *            FC1 bulk: 0. */
    double lin[4] = {4, 2, 8, 6};
    weft__ub_comm uc = {3, 2, 1};
    weft__ub_exposed x;
    weft__ub_layer(lin, &uc, 4, 0, &x);
    CHECK_REL(x.attn_f, 2.5, 1e-15);
    CHECK_REL(x.mlp_f, 1, 1e-15);
    CHECK_REL(x.attn_b, 1.5, 1e-15);
    CHECK(x.mlp_b == 0);
    /* On 132 SMs: the projection's GEMM on 108 (NeMo's 24 for
     * proj_fprop): 2 x 132 / 108 in chunks, 0.6111 + 3 x 1 + 1; the QKV
     * bulks charge 3 x 4 / 132 (qkv_dgrad, 4 SMs) and 2 x 24 / 132
     * (qkv_wgrad, 24 SMs). */
    weft__ub_layer(lin, &uc, 4, 132, &x);
    CHECK_REL(x.attn_f, 2.0 * 132 / 108 / 4 + 3 + 1 - 2, 1e-12);
    CHECK_REL(x.attn_b, 1.5 + 3.0 * 4 / 132 + 2.0 * 24 / 132, 1e-12);
    /* FC2 on 116 SMs (16): 6 x 132 / 116 / 4 = 1.707 per chunk, hiding
     * its reduce-scatter chunks; FC1's bulks 3 x 2 / 132 and 2 x 4 / 132. */
    CHECK_REL(x.mlp_f, 6.0 * 132 / 116 + 1 - 6, 1e-12);
    CHECK_REL(x.mlp_b, 3.0 * 2 / 132 + 2.0 * 4 / 132, 1e-12);

    weft_model m = weft__test_tiny_model(2);
    weft_parallel p;
    weft_parallel_init(&p);
    p.tp = 2;
    p.tp_comm_overlap = true;
    weft__test_check_refused(
        &p, &m, 2,
        "--tp-comm-overlap needs --sequence-parallel and --tensor-model-parallel-size > 1 "
        "(TP 2, no --sequence-parallel)");
    p.tp = 1;
    p.sp = true;
    weft__test_check_refused(
        &p, &m, 2,
        "--tp-comm-overlap needs --sequence-parallel and --tensor-model-parallel-size > 1 "
        "(TP 1)");

    /* llama3-8b, TP 2 on one H100 box, bf16: the same compute, less TP
     * exposed, the bytes of 6 all-gathers and 4 reduce-scatters per layer
     * (the norm outputs gathered again in the backward), 10 collectives. */
    weft_gpu g;
    weft_topo *t = NULL;
    weft_work_ctx *c = weft__test_work_ctx("h100:1", "h100-sxm", &g, &t);
    if (!c)
        return;
    CHECK(weft_model_find("llama3-8b", &m));
    m.seq = 4096;
    weft_model_complete(&m);
    weft_parallel_init(&p);
    p.tp = 2;
    p.sp = true;
    p.flash_attn = true;
    p.global_batch = 8; /* DP 4: 2 micro-batches */
    weft_step_result off, on;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_work_step(c, &m, &p, false, NULL, &off, &d), WEFT_OK);
    p.tp_comm_overlap = true;
    CHECK_ERR(weft_work_step(c, &m, &p, false, NULL, &on, &d), WEFT_OK);
    CHECK(on.compute_s == off.compute_s);
    CHECK(on.exposed_s[WEFT_COMM_TP] < 0.5 * off.exposed_s[WEFT_COMM_TP]);
    CHECK(on.step_s < off.step_s);
    double S = 4096.0 * 4096 * 2, half = 0.5 * S, mb = 2, L = 32;
    CHECK_INT(on.comm_bytes[WEFT_COMM_TP], (uint64_t)(mb * L * 10 * half));
    CHECK_INT(on.comm_calls[WEFT_COMM_TP], (uint32_t)(mb * L * 10));
    weft_work_ctx_free(c);
    weft_topo_free(t);
}

/* Context parallelism's bookkeeping in Transformer Engine v1.8's
 * AttnFuncWithCP (compute.c), counted by hand for CP 2 with query q = 3,
 * output o = 5 and key-plus-value kv = 7 elements.
 *   rank 0 forward: k, v concatenated 4 kv, output zeroed 2 o, step 0
 *     merged 6 o, step 1 (i > rank) copies the query's second half 2 q and
 *     merges the half output 3 o: 28 + 10 + 30 + 6 + 15 = 89.
 *   rank 0 backward: k, v into the ring buffer 4 kv; step 0 (off the
 *     diagonal, i < cp - rank - 1) copies the halves of q, out, dout
 *     2 q + 4 o, copies half of dq 2 q, concatenates dk, dv 4 kv and copies
 *     them 4 kv; step 1 (the diagonal) copies half of dq and adds half
 *     2 q + 3 q, concatenates 4 kv, adds half and copies half 3 kv + 2 kv:
 *     21 kv + 9 q + 4 o = 147 + 27 + 20 = 194.
 *   rank 1: forward 6 kv + 14 o = 112, backward 20 kv + 10 q = 170; 282
 *     in all against rank 0's 283, so rank 0's counts come back. */
static void test_cp_bookkeeping(void)
{
    double f, b;
    weft__work_cp_attn_bytes(2, 3, 5, 7, &f, &b);
    CHECK_REL(f, 89, 1e-15);
    CHECK_REL(b, 194, 1e-15);
    /* A layer of llama3-8b in bf16, CP 2 at sequence 8192, TP 1: T = 4096
     * tokens per rank, 32 heads and 8 groups of 128 channels: q = o =
     * 16,777,216 elements, kv = 8,388,608. Rank 0 moves the most (26 q +
     * 25 kv against 24 q + 26 kv): forward 13 q + 4 kv, backward
     * 13 q + 21 kv, beside the grouped-query split's 4 q forward and
     * 4 (q + kv) backward. */
    weft_gpu g;
    weft_model m;
    weft_parallel p;
    llama3_8b(0, &g, &m, &p);
    p.cp = 2;
    p.flash_attn = true;
    weft__layer_time l;
    weft__work_layer_time(&g, &m, &p, 4, 0, &l);
    double q = 4096.0 * 32 * 128, kv = 4096.0 * 16 * 128;
    double xf = 13 * q + 4 * kv + 4 * q, xb = 13 * q + 21 * kv + 4 * (q + kv);
    CHECK_REL(l.bwd - 2 * l.fwd - 0.5 * l.attn_core, (xb - 2 * xf) / g.hbm_bw, 1e-9);
}

/* The input embedding's dense weight gradient every micro-batch and the
 * fused cross-entropy's bytes (compute.c). The gradient: a zeroed
 * [V / TP, h] gradient (2 bytes written) added to the fp32 main gradient
 * (2 + 4 read, 4 written). llama3-8b at TP 2: 128,256 / 2 = 64,128 rows
 * of 4,096, beside the embedding's own gradient traffic (twice its
 * forward). */
static void test_output_and_embedding(void)
{
    weft_gpu g;
    weft_model m;
    weft_parallel p;
    llama3_8b(0, &g, &m, &p);
    p.tp = 2;
    p.sp = true;
    weft__layer_time l;
    weft__work_layer_time(&g, &m, &p, 4, 0, &l);
    CHECK_REL(l.embed_bwd - 2 * l.embed_fwd, 12.0 * 64128 * 4096 / g.hbm_bw, 1e-12);
    /* The fused cross-entropy on T = 8,192 tokens x 64,128 logits: 22
     * bytes an element forward, 10 backward, beside the output layer's
     * GEMMs (backward twice the forward's): bwd - 2 fwd = -34 bytes an
     * element. */
    CHECK_REL(l.logits_bwd - 2 * l.logits_fwd, -34.0 * 8192 * 64128 / g.hbm_bw, 1e-9);
}

int main(void)
{
    test_output_and_embedding();
    test_fp8();
    test_cp_bookkeeping();
    test_tp_overlap();
    return weft_test_done();
}
