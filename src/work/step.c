/* One training step: the compute of every micro-batch, the collectives
 * simulated on the fabric, the pipeline schedule and what of the
 * communication stays exposed. docs/step.md ("The step") gives the
 * assembly. */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "work/work_internal.h"

#define GIB 1073741824.0

weft_err weft_work_ctx_new(const weft_topo *t, const weft_gpu *g, const weft_sim_opts *o,
                           weft_work_ctx **out)
{
    weft_work_ctx *c = weft__calloc(1, sizeof *c);
    if (!c)
        return WEFT_ENOMEM;
    c->topo = t;
    c->gpu = g;
    c->ranks = weft_topo_num_ranks(t);
    if (o)
        c->opts = *o;
    else {
        weft_sim_opts_init(&c->opts);
        c->opts.model = weft_sim_model_default(t);
    }
    *out = c;
    return WEFT_OK;
}

void weft_work_ctx_free(weft_work_ctx *c)
{
    if (!c)
        return;
    weft__free(c->cache);
    weft__work_gcache_free(c);
    weft__work_moe_free(c);
    weft__free(c->scratch);
    weft__free(c->choices);
    weft__free(c->last_bytes);
    weft__free(c);
}

/* Bytes one rank sends in a ring collective of S bytes over n ranks. */
static double ring_bytes(weft_coll coll, uint32_t n, double S)
{
    if (n < 2)
        return 0;
    return (coll == WEFT_COLL_ALLREDUCE ? 2.0 : 1.0) * (n - 1) / n * S;
}

#define M_TP (1u << WEFT_DIM_TP)
#define M_CP (1u << WEFT_DIM_CP)
#define M_EP (1u << WEFT_DIM_EP)
#define M_DP (1u << WEFT_DIM_DP)
#define M_PP (1u << WEFT_DIM_PP)

/* How a data-parallel group reduces its gradients and gathers its
 * parameters back. */
typedef struct dp_cfg {
    weft_coll coll;         /* allreduce, or reducescatter when sharded */
    uint32_t grad_bytes;    /* per parameter reduced */
    uint64_t bucket;        /* parameters per bucket (UINT64_MAX: one) */
    uint32_t gather_bytes;  /* per parameter all-gathered after the optimizer; 0: none */
    uint64_t gather_bucket; /* parameters per all-gather */
} dp_cfg;

/* Megatron's and DeepSpeed's: Megatron-Core's DistributedDataParallel
 * reduces fp32 main gradients (4 bytes) in buckets of max(40M, 1M x the
 * DP x CP group) parameters when --overlap-grad-reduce, in one bucket
 * otherwise; all-reduce, or reduce-scatter then a 16-bit all-gather of
 * the parameters with the distributed optimizer. DeepSpeed ZeRO 1 and 2
 * reduce-scatter 16-bit gradients and all-gather 16-bit parameters, both
 * in buckets of 5e8 elements (reduce_bucket_size, allgather_bucket_size:
 * DeepSpeed's configuration documentation, "zero_optimization"). */
static dp_cfg dp_config(const weft_parallel *p, uint32_t group)
{
    dp_cfg k;
    if (p->zero_stage) {
        k.coll = WEFT_COLL_REDUCESCATTER;
        k.grad_bytes = 2;
        k.bucket = 500000000ull;
        k.gather_bytes = p->zero_stage < 3 ? 2 : 0;
        k.gather_bucket = 500000000ull;
        return k;
    }
    uint64_t b = 1000000ull * group;
    k.coll = p->dist_opt ? WEFT_COLL_REDUCESCATTER : WEFT_COLL_ALLREDUCE;
    k.grad_bytes = 4;
    k.bucket = !p->overlap_grad ? UINT64_MAX : b > 40000000ull ? b : 40000000ull;
    k.gather_bytes = p->dist_opt ? 2 : 0;
    k.gather_bucket = k.bucket;
    return k;
}

/* Collectives of `params` parameters in buckets of `bucket`, each
 * `bytes` per parameter, over the groups of mask: the time of a full
 * bucket (*tf), of the last (*tl) and the number of buckets. */
static weft_err bucketed(weft_work_ctx *c, const weft_parallel *p, uint32_t dp, uint32_t mask,
                         weft_coll coll, uint64_t params, uint64_t bucket, uint32_t bytes,
                         double *tf, double *tl, uint64_t *nb, weft_diag *d)
{
    uint64_t n = params / bucket + (params % bucket != 0);
    uint64_t last = params - (n - 1) * bucket;
    weft_err err;
    *tf = 0;
    if (n > 1 && (err = weft__work_coll_s(c, p, dp, mask, coll, false, bytes * bucket, tf, d)))
        return err;
    *nb = n;
    return weft__work_coll_s(c, p, dp, mask, coll, false, bytes * last, tl, d);
}

/* The gradient collectives of `params` parameters over the groups of mask
 * (n ranks each), in k's buckets: their total time, when the last ends if
 * they start as a backward of `window` seconds produces them, and the
 * parameter all-gather of a sharded optimizer (*ag). */
static weft_err dp_buckets(weft_work_ctx *c, const weft_parallel *p, uint32_t dp, uint32_t mask,
                           uint32_t n, uint64_t params, double window, double *total, double *end,
                           double *ag, double *bytes, uint32_t *calls, weft_diag *d)
{
    *total = *ag = *end = 0;
    if (n < 2 || params == 0)
        return WEFT_OK;
    dp_cfg k = dp_config(p, weft__work_grad_group(p, dp));
    double tf, tl;
    uint64_t nb;
    weft_err err;
    if ((err = bucketed(c, p, dp, mask, k.coll, params, k.bucket, k.grad_bytes, &tf, &tl, &nb, d)))
        return err;
    *bytes += ring_bytes(k.coll, n, (double)k.grad_bytes * (double)params);
    *total = (double)(nb - 1) * tf + tl;
    /* Bucket i is ready at window (i + 1) / nb and runs after bucket i - 1:
     * the last one ends at *end (the whole queue when window is 0). */
    double e = 0;
    for (uint64_t i = 0; i < nb; i++)
        e = fmax(e, window * (double)(i + 1) / (double)nb) + (i + 1 < nb ? tf : tl);
    *end = e;
    *calls += (uint32_t)nb;
    if (k.gather_bytes) {
        if ((err = bucketed(c, p, dp, mask, WEFT_COLL_ALLGATHER, params, k.gather_bucket,
                            k.gather_bytes, &tf, &tl, &nb, d)))
            return err;
        *ag = (double)(nb - 1) * tf + tl;
        *bytes += ring_bytes(WEFT_COLL_ALLGATHER, n, (double)k.gather_bytes * (double)params);
        *calls += (uint32_t)nb;
    }
    return WEFT_OK;
}

/* Per-layer communication of nl layers, nm of them MoE: a on every layer,
 * e on the MoE ones (one product when all are, as before dense layers). */
static double layer_comm(uint32_t nl, uint32_t nm, double a, double e)
{
    return nm == nl ? (double)nl * (a + e) : (double)nl * a + (double)nm * e;
}

/* The stage of every rank (stage_of[rank]) from the PP groups. */
static weft_err stage_map(weft_work_ctx *c, const weft_parallel *p, uint32_t dp, uint32_t **out,
                          weft_diag *d)
{
    uint32_t n = c->ranks, *pos = weft__malloc(2 * (size_t)n * sizeof *pos);
    if (!pos)
        return weft_diag_code(d, WEFT_ENOMEM);
    weft__work_groups(p, dp, M_PP, pos);
    for (uint32_t i = 0; i < n; i++)
        pos[n + pos[i]] = i % p->pp;
    memmove(pos, pos + n, (size_t)n * sizeof *pos);
    *out = pos;
    return WEFT_OK;
}

/* The DP groups of the last stage (dp ranks each) all-reducing one fp32
 * at once: *n is the group size, *t the time. */
static weft_err last_stage_dp(weft_work_ctx *c, const weft_parallel *p, uint32_t dp, uint32_t *n,
                              double *t, weft_diag *d)
{
    *n = dp;
    *t = 0;
    if (dp < 2)
        return WEFT_OK;
    uint32_t *stage = NULL, nr = c->ranks;
    weft_err err = stage_map(c, p, dp, &stage, d);
    if (err)
        return err;
    uint32_t *pos = weft__malloc(2 * (size_t)nr * sizeof *pos), k = 0;
    if (!pos) {
        weft__free(stage);
        return weft_diag_code(d, WEFT_ENOMEM);
    }
    weft__work_groups(p, dp, M_DP | M_EP, pos);
    for (uint32_t g0 = 0; g0 < nr; g0 += dp)
        if (stage[pos[g0]] == p->pp - 1)
            for (uint32_t i = 0; i < dp; i++)
                pos[nr + k++] = pos[g0 + i];
    err = weft__work_groups_s(c, WEFT_COLL_ALLREDUCE, false, pos + nr, k, dp, 4, t, d);
    weft__free(pos);
    weft__free(stage);
    return err;
}

/* Every (first stage, last stage) pair of a pipeline all-reducing S
 * bytes at once. */
static weft_err tied_pairs_s(weft_work_ctx *c, const weft_parallel *p, uint32_t dp, uint64_t S,
                             double *t, weft_diag *d)
{
    uint32_t nr = c->ranks, *pos = weft__malloc((size_t)nr * sizeof *pos), k = 0;
    if (!pos)
        return weft_diag_code(d, WEFT_ENOMEM);
    weft__work_groups(p, dp, M_PP, pos);
    for (uint32_t g0 = 0; g0 < nr; g0 += p->pp) {
        uint32_t a = pos[g0], b = pos[g0 + p->pp - 1];
        pos[k++] = a;
        pos[k++] = b;
    }
    weft_err err = weft__work_groups_s(c, WEFT_COLL_ALLREDUCE, false, pos, k, 2, S, t, d);
    weft__free(pos);
    return err;
}

/* ZeRO stage 3 (Rajbhandari et al. 2020, Sec. 5.3 and 7.2.2): every
 * layer's 16-bit parameters all-gathered over the DP x CP group before its
 * forward and again before its backward, its 16-bit gradients
 * reduce-scattered after it, every micro-batch; the next layer's gather is
 * prefetched during this one's compute and the reduction overlaps the
 * next backward (DeepSpeed's default overlap_comm for stage 3), so a layer
 * exposes only what exceeds its compute, plus the first layer's gather of
 * each pass. Expert parameters go over DP x CP / EP. DeepSpeed may keep a
 * layer gathered from its forward to its backward (stage3_max_reuse_distance);
 * this counts every gather, the paper's 3 x parameters of traffic. Fills
 * r's DP fields. */
static weft_err zero3(weft_work_ctx *c, const weft_model *m, const weft_parallel *p, uint32_t dp,
                      const weft__layer_time *lt, uint32_t mb, weft_step_result *r, weft_diag *d)
{
    uint32_t gdp = weft__work_grad_group(p, dp), egdp = gdp / p->ep;
    double exposed = 0, total = 0, bytes = 0;
    uint32_t calls = 0;
    for (int moe = 0; moe <= 1; moe++) {
        uint32_t nm, nd;
        weft__work_stage_layers(m, p, 0, &nm, &nd);
        uint32_t nl = moe ? nm : nd;
        if (!nl)
            continue;
        weft__layer_params lp;
        weft__work_layer_params(m, moe, &lp);
        uint64_t dense = (lp.attn + lp.dense_mlp) / p->tp + lp.norm;
        uint64_t expert = lp.expert / p->ep / p->tp;
        double ag = 0, rs = 0, t;
        weft_err err;
        if (gdp > 1) {
            if ((err = weft__work_coll_s(c, p, dp, M_DP | M_EP | M_CP, WEFT_COLL_ALLGATHER, false,
                                         2 * dense, &t, d)))
                return err;
            ag += t;
            if ((err = weft__work_coll_s(c, p, dp, M_DP | M_EP | M_CP, WEFT_COLL_REDUCESCATTER,
                                         false, 2 * dense, &t, d)))
                return err;
            rs += t;
            bytes += nl * (2 * ring_bytes(WEFT_COLL_ALLGATHER, gdp, 2.0 * dense) +
                           ring_bytes(WEFT_COLL_REDUCESCATTER, gdp, 2.0 * dense));
            calls += 3 * nl;
        }
        if (expert && egdp > 1) {
            if ((err = weft__work_coll_s(c, p, dp, M_DP | M_CP, WEFT_COLL_ALLGATHER, false,
                                         2 * expert, &t, d)))
                return err;
            ag += t;
            if ((err = weft__work_coll_s(c, p, dp, M_DP | M_CP, WEFT_COLL_REDUCESCATTER, false,
                                         2 * expert, &t, d)))
                return err;
            rs += t;
            bytes += nl * (2 * ring_bytes(WEFT_COLL_ALLGATHER, egdp, 2.0 * expert) +
                           ring_bytes(WEFT_COLL_REDUCESCATTER, egdp, 2.0 * expert));
            calls += 3 * nl;
        }
        double fwd = moe ? lt->fwd : lt->fwd_dense;
        double bwd = moe ? lt->bwd + lt->recompute : lt->bwd_dense + lt->recompute_dense;
        exposed += nl * (fmax(0, ag - fwd) + fmax(0, ag + rs - bwd));
        total += nl * (2 * ag + rs);
        if (!moe || !nd) /* the first layer's gather, forward and backward */
            exposed += 2 * ag;
    }
    r->exposed_s[WEFT_COMM_DP] = mb * exposed;
    r->comm_s[WEFT_COMM_DP] = mb * total;
    r->comm_bytes[WEFT_COMM_DP] = (uint64_t)(mb * bytes);
    r->comm_calls[WEFT_COMM_DP] = mb * calls;
    return WEFT_OK;
}

/* --tp-comm-overlap (tp_overlap.c, docs/step.md "TP overlap"): a layer's
 * TP collectives under Transformer Engine's userbuffers, S the 16-bit
 * bytes of a layer input gathered over TP, pair the all-gather plus
 * reduce-scatter it would expose without overlap. Per layer and
 * micro-batch: the collectives' time forward and backward (*f, *b: two
 * all-gathers (FP8 with FP8) and two reduce-scatters forward; backward two
 * more all-gathers, the norm outputs gathered again for the weight
 * gradients; full recomputation runs the forward's again), what stays
 * exposed (*xf, *xb) and, for MoE layers whose MLP is not overlapped, what
 * they expose beyond (*ef, *eb); the bytes a GPU sends (*bytes) and the
 * collectives (*calls). */
static weft_err tp_overlap(weft_work_ctx *c, const weft_parallel *p, uint32_t dp,
                           const weft__layer_time *lt, uint64_t S, double pair, bool full, bool moe,
                           double *f, double *b, double *xf, double *xb, double *ef, double *eb,
                           double *bytes, uint32_t *calls, weft_diag *d)
{
    uint32_t tp = p->tp, n = weft__ub_splits();
    uint64_t S_ag = p->prec == WEFT_PREC_FP8 ? S / 2 : S;
    weft__ub_comm uc;
    weft_err err;
    if ((err = weft__work_coll_s(c, p, dp, M_TP, WEFT_COLL_ALLGATHER, false, S_ag, &uc.ag, d)) ||
        (err = weft__work_coll_s(c, p, dp, M_TP, WEFT_COLL_REDUCESCATTER, false, S, &uc.rs, d)) ||
        (err = weft__work_coll_s(c, p, dp, M_TP, WEFT_COLL_REDUCESCATTER, false, S / n,
                                 &uc.rs_chunk, d)))
        return err;
    weft__ub_exposed x;
    weft__ub_layer(lt->lin, &uc, tp, c->gpu->sms, &x);
    double rep = full ? 1 : 0;
    *f = 2 * (uc.ag + uc.rs);
    *b = 4 * uc.ag + 2 * uc.rs + rep * *f;
    *xf = x.attn_f + x.mlp_f;
    *xb = x.attn_b + x.mlp_b + rep * *xf;
    *ef = moe ? pair - x.mlp_f : 0;
    *eb = moe ? (1 + rep) * pair - x.mlp_b - rep * x.mlp_f : 0;
    double ag = ring_bytes(WEFT_COLL_ALLGATHER, tp, (double)S_ag);
    double rs = ring_bytes(WEFT_COLL_REDUCESCATTER, tp, (double)S);
    *bytes = (2 + 4 + 2 * rep) * ag + (2 + 2 + 2 * rep) * rs;
    *calls = full ? 14 : 10;
    return WEFT_OK;
}

weft_err weft_work_step(weft_work_ctx *c, const weft_model *m0, const weft_parallel *p,
                        bool check_memory, FILE *trace, weft_step_result *out, weft_diag *d)
{
    weft_model mm = *m0;
    weft_model_complete(&mm);
    const weft_model *m = &mm;
    const weft_gpu *g = c->gpu;
    weft_step_result r;
    memset(&r, 0, sizeof r);
    weft_err err = weft_work_counts(m, p, c->ranks, &r.counts, d);
    if (err)
        return err;
    if (!weft__work_prec_ok(g, p->prec))
        return weft_diag_set(d, WEFT_EINVAL, "--%s: the %s has no %s tensor cores",
                             p->prec == WEFT_PREC_FP8 ? "fp8-format" : weft_prec_name(p->prec),
                             g->name, weft_prec_name(p->prec));
    if (p->grad_comp.kind != WEFT_COMP_NONE) {
        weft_comp_kind k = p->grad_comp.kind;
        if (k == WEFT_COMP_POWERSGD || k == WEFT_COMP_HASH)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "--grad-compression: the step does not model %s (a "
                                 "quantizer or a sparsifier whose GPU kernels are modelled: "
                                 "int8, fp8, qsgd:S, sign, topk:D, dgc:D, randk:D)",
                                 weft_comp_kind_name(k));
        if (p->dist_opt || p->zero_stage)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "--grad-compression compresses the gradient all-reduce; %s "
                                 "reduce-scatters",
                                 p->dist_opt ? "--use-distributed-optimizer" : "--zero-stage");
    }
    uint32_t dp = r.counts.dp, mb = r.counts.microbatches, v = r.counts.vstages;
    r.fits = weft__work_fits(g, &r.counts);
    if (check_memory && !r.fits)
        return weft_diag_set(d, WEFT_EINVAL,
                             "memory: %.1f GiB per GPU (weights %.1f, gradients %.1f, optimizer "
                             "%.1f, activations %.1f GiB) does not fit the %s's %.1f GiB",
                             r.counts.mem_total / GIB, r.counts.mem_weights / GIB,
                             r.counts.mem_grads / GIB, r.counts.mem_optim / GIB,
                             r.counts.mem_act / GIB, g->name, g->hbm_bytes / GIB);
    uint32_t sims0 = c->sims, hits0 = c->hits;
    uint64_t tp = p->tp, Tl = (uint64_t)p->micro_batch * (m->seq / p->cp), h = m->hidden;
    bool full = p->recompute == WEFT_RECOMPUTE_FULL;
    /* A skewed expert load: the routing drawn per EP group; the busiest
     * rank's experts set the expert GEMMs' tokens. */
    bool skew = m->experts && p->ep > 1 && p->moe_zipf;
    weft__moe_cost mc = {0, 0, 0, 0};
    uint64_t sp_tp = p->sp ? tp : 1;
    if (skew && (err = weft__work_moe_s(c, p, dp, m, Tl / sp_tp, 2 * h, &mc, d)))
        return err;
    uint64_t routed = skew ? mc.max_recv_tokens * sp_tp : 0;
    weft__layer_time lt;
    weft__work_layer_time(g, m, p, dp, routed, &lt);

    /* Per layer and micro-batch: TP. tp_f, tp_b: its collectives, forward
     * and backward; tpx_f, tpx_b: what of them is exposed; tpe_f, tpe_b:
     * what an MoE layer exposes beyond (its MLP is not overlapped). */
    double tp_f = 0, tp_b = 0, tpb = 0, tpx_f = 0, tpx_b = 0, tpe_f = 0, tpe_b = 0, ub_bytes = 0;
    uint32_t tpc = 0;
    if (tp > 1) {
        uint64_t S = Tl * h * 2;
        double t1, t2 = 0;
        if (p->sp) {
            if ((err = weft__work_coll_s(c, p, dp, M_TP, WEFT_COLL_ALLGATHER, false, S, &t1, d)) ||
                (err =
                     weft__work_coll_s(c, p, dp, M_TP, WEFT_COLL_REDUCESCATTER, false, S, &t2, d)))
                return err;
            tpb = 2 * ring_bytes(WEFT_COLL_ALLGATHER, (uint32_t)tp, (double)S);
        } else {
            if ((err = weft__work_coll_s(c, p, dp, M_TP, WEFT_COLL_ALLREDUCE, false, S, &t1, d)))
                return err;
            tpb = ring_bytes(WEFT_COLL_ALLREDUCE, (uint32_t)tp, (double)S);
        }
        /* Two per layer forward (attention, MLP), bytes of the forward. */
        tp_f = 2 * (t1 + t2);
        tp_b = tp_f * (full ? 2 : 1);
        tpb *= 2;
        tpc = (p->sp ? 4 : 2) * (full ? 3 : 2);
        tpx_f = tp_f;
        tpx_b = tp_b;
        if (p->tp_comm_overlap &&
            (err = tp_overlap(c, p, dp, &lt, S, t1 + t2, full, m->experts > 0, &tp_f, &tp_b, &tpx_f,
                              &tpx_b, &tpe_f, &tpe_b, &ub_bytes, &tpc, d)))
            return err;
    }
    /* CP: keys and values gathered forward, gathered and reduce-scattered
     * backward, overlapped with the attention core (ring attention). */
    double cp_f = 0, cp_b = 0, cpx_f = 0, cpx_b = 0, cpb = 0;
    uint32_t cpc = 0;
    if (p->cp > 1) {
        uint64_t S = Tl * 2 * (m->query_groups / tp) * m->kv_channels * 2 * p->cp;
        double ag, rs;
        if ((err = weft__work_coll_s(c, p, dp, M_CP, WEFT_COLL_ALLGATHER, false, S, &ag, d)) ||
            (err = weft__work_coll_s(c, p, dp, M_CP, WEFT_COLL_REDUCESCATTER, false, S, &rs, d)))
            return err;
        cp_f = ag * (full ? 2 : 1);
        cp_b = ag + rs;
        cpx_f = fmax(0, ag - lt.attn_core) * (full ? 2 : 1);
        cpx_b = fmax(0, ag + rs - 2 * lt.attn_core);
        cpb = ring_bytes(WEFT_COLL_ALLGATHER, p->cp, (double)S) * (full ? 3 : 2) +
              ring_bytes(WEFT_COLL_REDUCESCATTER, p->cp, (double)S);
        cpc = full ? 4 : 3;
    }
    /* EP: dispatch and combine forward, both again backward. */
    double ep_f = 0, ep_b = 0, epb = 0;
    uint32_t epc = 0;
    if (m->experts && p->ep > 1) {
        uint64_t S = Tl * m->topk * h * 2 / sp_tp;
        double t;
        epc = full ? 6 : 4;
        if (skew) {
            /* Dispatch and combine (its transpose) forward; backward the
             * gradients go the other way: combine's matrix then dispatch's. */
            r.ep_dispatch_s = mc.dispatch_s;
            r.ep_combine_s = mc.combine_s;
            ep_f = mc.dispatch_s + mc.combine_s;
            ep_b = ep_f * (full ? 2 : 1);
            epb = (double)epc * mc.mean_offdiag; /* a transpose sends the same total */
            r.ep_max_tokens = routed;
        } else {
            if ((err = weft__work_coll_s(c, p, dp, M_EP, WEFT_COLL_ALLTOALL, false, S, &t, d)))
                return err;
            r.ep_dispatch_s = r.ep_combine_s = t;
            ep_f = 2 * t;
            ep_b = 2 * t * (full ? 2 : 1);
            epb = (double)epc * (p->ep - 1) / p->ep * (double)S;
            r.ep_max_tokens = Tl * m->topk;
        }
    }
    /* A micro-batch on the first and on the last stage (compute only, and
     * the per-layer communication on its critical path). */
    /* The embedding and the loss, per micro-batch (Megatron-LM's
     * VocabParallelEmbedding, parallel_lm_logits and
     * vocab_parallel_cross_entropy): the embedding's output is reduced over
     * TP (SP: reduce-scattered) on the first stage; on the last the output
     * layer's input is all-gathered over TP forward and reduce-scattered
     * backward with SP, all-reduced backward without; the cross entropy
     * all-reduces three fp32 values per token over TP (the logits' max, the
     * target logit, the sum of exponentials) and the loss is averaged over
     * DP (one fp32). On the critical path of the stage that runs them. */
    double emb_first = 0, emb_last = 0, loss_mb = 0, emb_bytes = 0, loss_bytes = 0;
    uint32_t emb_calls = 0, loss_calls = 0;
    if (tp > 1) {
        uint64_t S = Tl * h * 2;
        double t_in, t_ag = 0, t_out, t_ce;
        weft_coll in = p->sp ? WEFT_COLL_REDUCESCATTER : WEFT_COLL_ALLREDUCE;
        if ((err = weft__work_coll_s(c, p, dp, M_TP, in, false, S, &t_in, d)) ||
            (p->sp &&
             (err = weft__work_coll_s(c, p, dp, M_TP, WEFT_COLL_ALLGATHER, false, S, &t_ag, d))) ||
            (err = weft__work_coll_s(c, p, dp, M_TP, in, false, S, &t_out, d)) ||
            (err = weft__work_coll_s(c, p, dp, M_TP, WEFT_COLL_ALLREDUCE, false, 4 * Tl, &t_ce, d)))
            return err;
        emb_first = t_in;
        emb_last = t_ag + t_out;
        emb_bytes = 2 * ring_bytes(in, (uint32_t)tp, (double)S) +
                    (p->sp ? ring_bytes(WEFT_COLL_ALLGATHER, (uint32_t)tp, (double)S) : 0);
        emb_calls = p->sp ? 3 : 2;
        loss_mb = 3 * t_ce;
        loss_bytes = 3 * ring_bytes(WEFT_COLL_ALLREDUCE, (uint32_t)tp, 4.0 * (double)Tl);
        loss_calls = 3;
    }
    uint32_t ldp = 0;
    double t_avg = 0;
    if ((err = last_stage_dp(c, p, dp, &ldp, &t_avg, d)))
        return err;
    if (ldp > 1) {
        loss_mb += t_avg;
        loss_bytes += ring_bytes(WEFT_COLL_ALLREDUCE, ldp, 4);
        loss_calls++;
    }
    /* A micro-batch on every stage (compute only, and the per-layer
     * communication on its critical path: EP on its MoE layers only); the
     * busiest stage sets the pace. */
    double b0 = 0, cstage = 0, cstage_f = 0, best = -1, emb_mb = 0, loss_x = 0, tied_s = 0;
    uint32_t bnl = 0, bnm = 0, nm0 = 0, nl0 = 0;
    for (uint32_t st = 0; st < p->pp; st++) {
        uint32_t nm, nd;
        weft__work_stage_layers(m, p, st, &nm, &nd);
        double fs = (double)nm * lt.fwd + (double)nd * lt.fwd_dense;
        double bs =
            (double)nm * (lt.bwd + lt.recompute) + (double)nd * (lt.bwd_dense + lt.recompute_dense);
        if (st == 0) {
            fs += lt.embed_fwd;
            bs += lt.embed_bwd;
            nm0 = nm;
            nl0 = nm + nd;
        }
        if (st == p->pp - 1) {
            fs += lt.logits_fwd;
            bs += lt.logits_bwd;
        }
        if (st == 0)
            b0 = bs;
        double xe = (st == 0 ? emb_first : 0) + (st == p->pp - 1 ? emb_last : 0);
        double xl = st == p->pp - 1 ? loss_mb : 0;
        double tot =
            fs + bs +
            layer_comm(nm + nd, nm, tpx_f + tpx_b + cpx_f + cpx_b, ep_f + ep_b + tpe_f + tpe_b) +
            xe + xl;
        if (tot > best) {
            best = tot;
            cstage = fs + bs;
            cstage_f = fs;
            bnl = nm + nd;
            bnm = nm;
            emb_mb = xe;
            loss_x = xl;
        }
    }
    double xcomm[WEFT__COMM_COUNT] = {0};
    xcomm[WEFT_COMM_TP] = (double)bnl * (tpx_f + tpx_b) + (double)bnm * (tpe_f + tpe_b);
    xcomm[WEFT_COMM_CP] = (double)bnl * (cpx_f + cpx_b);
    xcomm[WEFT_COMM_EP] = (double)bnm * (ep_f + ep_b);
    xcomm[WEFT_COMM_EMB] = emb_mb;
    xcomm[WEFT_COMM_LOSS] = loss_x;
    r.comm_s[WEFT_COMM_EMB] = (double)mb * (emb_first + emb_last);
    r.comm_s[WEFT_COMM_LOSS] = (double)mb * loss_mb;
    r.comm_bytes[WEFT_COMM_EMB] = (uint64_t)((double)mb * emb_bytes);
    r.comm_bytes[WEFT_COMM_LOSS] = (uint64_t)((double)mb * loss_bytes);
    r.comm_calls[WEFT_COMM_EMB] = mb * emb_calls;
    r.comm_calls[WEFT_COMM_LOSS] = mb * loss_calls;
    double per_mb_comm =
        xcomm[WEFT_COMM_TP] + xcomm[WEFT_COMM_CP] + xcomm[WEFT_COMM_EP] + emb_mb + loss_x;
    /* 1F1B: mb slots in the steady state, (pp - 1) / v of fill and drain. */
    double fill = p->pp > 1 ? (double)(p->pp - 1) / v : 0;
    r.compute_s = (double)mb * cstage;
    r.bubble_s = fill * (cstage + per_mb_comm);
    for (int k = 0; k < WEFT__COMM_COUNT; k++)
        r.exposed_s[k] = (double)mb * xcomm[k];
    r.comm_s[WEFT_COMM_TP] = (double)mb * (double)bnl * (tp_f + tp_b);
    r.comm_s[WEFT_COMM_CP] = (double)mb * (double)bnl * (cp_f + cp_b);
    r.comm_s[WEFT_COMM_EP] = (double)mb * (double)bnm * (ep_f + ep_b);
    r.comm_bytes[WEFT_COMM_TP] = p->tp_comm_overlap
                                     ? (uint64_t)((double)mb * bnl * ub_bytes)
                                     : (uint64_t)((double)mb * bnl * tpb * (full ? 3 : 2));
    r.comm_bytes[WEFT_COMM_CP] = (uint64_t)((double)mb * bnl * cpb);
    r.comm_bytes[WEFT_COMM_EP] = (uint64_t)((double)mb * bnm * epb);
    r.comm_calls[WEFT_COMM_TP] = (uint32_t)(mb * bnl * tpc);
    r.comm_calls[WEFT_COMM_CP] = (uint32_t)(mb * bnl * cpc);
    r.comm_calls[WEFT_COMM_EP] = (uint32_t)(mb * bnm * epc);
    /* PP: activations forward and gradients backward between neighbouring
     * stages, each TP rank its 1/tp share (scatter-gather). */
    if (p->pp > 1) {
        uint64_t S = Tl * h * 2 / tp;
        double t;
        if ((err = weft__work_coll_s(c, p, dp, M_PP, WEFT_COLL_ALLGATHER, true, S, &t, d)))
            return err;
        r.pp_send_s = t;
        r.comm_s[WEFT_COMM_PP] = 2.0 * mb * v * t;
        r.comm_bytes[WEFT_COMM_PP] = (uint64_t)(2.0 * mb * v * (double)S);
        r.comm_calls[WEFT_COMM_PP] = 2 * mb * v;
    }
    /* DP: the busiest stage's gradients; dense ones over the DP x CP
     * group, expert ones over DP x CP / EP (Megatron-Core's data-parallel
     * groups "with context parallel": CP ranks hold the same weights). */
    uint64_t dn = 0, ex = 0;
    uint32_t bst = 0;
    for (uint32_t st = 0; st < p->pp; st++) {
        uint64_t dn1, ex1;
        weft__work_stage_params(m, p, st, &dn1, &ex1);
        if (dn1 + ex1 > dn + ex) {
            dn = dn1;
            ex = ex1;
            bst = st;
        }
    }
    uint32_t gdp = weft__work_grad_group(p, dp), egdp = gdp / p->ep;
    double dpt = 0, dpag = 0, ext = 0, exag = 0, dpbytes = 0, dpend = 0, exend, saved = 0;
    double gc_never = -1, gc_always = -1;
    uint32_t dpc = 0;
    /* Overlapped (--overlap-grad-reduce) with the last micro-batch's
     * backward on the first stage, which ends the pipeline; otherwise
     * after it. DeepSpeed's ZeRO 1 and 2 do not overlap (overlap_comm is
     * false by default). */
    double window = p->overlap_grad && !p->zero_stage
                        ? b0 + layer_comm(nl0, nm0, tpx_b + cpx_b, ep_b + tpe_b)
                        : 0;
    if (p->zero_stage == 3) {
        if ((err = zero3(c, m, p, dp, &lt, mb, &r, d)))
            return err;
    } else if (p->grad_comp.kind != WEFT_COMP_NONE && gdp > 1 && dn > 0) {
        /* Compressed (gcomp.c): the dense gradients' plan; its end counts
         * the compression compute the compute stream runs (the backward's
         * end moves by it). Expert gradients stay dense. */
        weft__gc_out go;
        uint64_t bucket = dp_config(p, gdp).bucket;
        if ((err = weft__work_gc(c, m, p, dp, M_DP | M_EP | M_CP, gdp, bst, dn, window, bucket, &go,
                                 c->gc_report, d)) ||
            (err = dp_buckets(c, p, dp, M_DP | M_CP, egdp, ex, 0, &ext, &exend, &exag, &dpbytes,
                              &dpc, d)))
            return err;
        dpt = go.comm;
        dpend = go.end;
        dpbytes += go.bytes;
        dpc += go.calls;
        saved = go.saved;
        r.compress_s = go.compute;
        r.compress_gpu_s = go.gpu;
        r.compress_cpu_s = go.cpu;
        r.gc_groups = go.groups;
        r.gc_compressed = go.compressed;
        r.gc_cpu = go.on_cpu;
        r.gc_exact = go.exact;
        gc_never = go.never_end;
        gc_always = go.always_end;
    } else if ((err = dp_buckets(c, p, dp, M_DP | M_EP | M_CP, gdp, dn, window, &dpt, &dpend, &dpag,
                                 &dpbytes, &dpc, d)) ||
               (err = dp_buckets(c, p, dp, M_DP | M_CP, egdp, ex, 0, &ext, &exend, &exag, &dpbytes,
                                 &dpc, d)))
        return err;
    r.compress_saved_bytes = saved > 0 ? (uint64_t)saved : 0;
    if (p->zero_stage == 2 && mb > 1) {
        /* ZeRO 2 keeps only its shard of the gradients, so it reduces
         * every micro-batch's, in the backward that produces them. */
        double once = ring_bytes(WEFT_COLL_REDUCESCATTER, gdp, 2.0 * (double)dn) +
                      ring_bytes(WEFT_COLL_REDUCESCATTER, egdp, 2.0 * (double)ex);
        dpbytes += (mb - 1) * once;
        dpc += (mb - 1) * (uint32_t)((dn > 0 && gdp > 1) + (ex > 0 && egdp > 1));
        dpt *= mb;
        ext *= mb;
    }
    /* Tied embeddings (gpt style, PP > 1): after the data-parallel
     * reduction the first and the last stage all-reduce the word
     * embedding's fp32 gradient (Megatron's _allreduce_word_embedding_grads),
     * every pair of the first and last stage at once. */
    if (p->pp > 1 && !m->swiglu && !m->untie) {
        uint64_t S = 4 * (weft__work_vocab(m, p->tp) / tp) * h;
        double t;
        if ((err = tied_pairs_s(c, p, dp, S, &t, d)))
            return err;
        tied_s = t;
        r.exposed_s[WEFT_COMM_EMB] += t;
        r.comm_s[WEFT_COMM_EMB] += t;
        r.comm_bytes[WEFT_COMM_EMB] += (uint64_t)ring_bytes(WEFT_COLL_ALLREDUCE, 2, (double)S);
        r.comm_calls[WEFT_COMM_EMB]++;
    }
    if (p->zero_stage != 3) {
        double grad = dpt + ext, gather = dpag + exag;
        r.comm_s[WEFT_COMM_DP] = grad + gather;
        r.comm_bytes[WEFT_COMM_DP] = (uint64_t)dpbytes;
        r.comm_calls[WEFT_COMM_DP] = dpc;
        double dpx = p->zero_stage == 2 ? grad : fmax(0, fmax(dpend, window) + ext - window);
        r.exposed_s[WEFT_COMM_DP] = dpx + gather;
    }
    r.optimizer_s = lt.optimizer;
    /* The busiest stage's micro-batch, as the trace draws it: its
     * embedding and loss communication counted in the forward. */
    r.fwd_s = cstage_f + layer_comm(bnl, bnm, tpx_f + cpx_f, ep_f + tpe_f) + emb_mb + loss_x;
    r.bwd_s = cstage - cstage_f + layer_comm(bnl, bnm, tpx_b + cpx_b, ep_b + tpe_b);
    r.tied_s = tied_s;
    /* The sends the 1F1B schedule cannot hide: its makespan with them
     * beyond the (m + (PP - 1) / v) (F + B) it takes without. */
    if (p->pp > 1) {
        double *clock = weft__calloc(p->pp, sizeof *clock), end = 0;
        if (!clock || weft__work_pipeline(p->pp, mb * v, r.fwd_s / v, r.bwd_s / v, r.pp_send_s,
                                          NULL, NULL, clock)) {
            weft__free(clock);
            return weft_diag_code(d, WEFT_ENOMEM);
        }
        for (uint32_t st = 0; st < p->pp; st++)
            end = fmax(end, clock[st]);
        weft__free(clock);
        r.exposed_s[WEFT_COMM_PP] = fmax(0, end - ((double)mb + fill) * (r.fwd_s + r.bwd_s));
    }
    r.step_s = r.compute_s + r.bubble_s + r.optimizer_s;
    for (int k = 0; k < WEFT__COMM_COUNT; k++)
        r.step_s += r.exposed_s[k];
    /* The DP end enters the step once, through exposed dp (max(end,
     * window) - window, end >= window): the plans differ by their ends. */
    if (gc_never >= 0) {
        r.gc_never_step_s = r.step_s + gc_never - dpend;
        r.gc_always_step_s = r.step_s + gc_always - dpend;
    }
    double peak = g->peak[p->prec] > 0 ? g->peak[p->prec] : g->peak[WEFT_PREC_BF16];
    r.mfu = r.counts.model_flops / (r.step_s * c->ranks * peak);
    r.sims = c->sims - sims0;
    r.sim_hits = c->hits - hits0;
    if (trace && (err = weft__work_trace(trace, c, p, dp, &r, d)))
        return err;
    *out = r;
    return WEFT_OK;
}

/* Here, not in gcomp.c: it runs the step, which calls gcomp.c. */
weft_err weft_work_grad_plan(weft_work_ctx *c, const weft_model *m, const weft_parallel *p,
                             weft_gc_report *out, weft_diag *d)
{
    memset(out, 0, sizeof *out);
    if (p->grad_comp.kind == WEFT_COMP_NONE)
        return weft_diag_set(d, WEFT_EINVAL, "no --grad-compression to plan");
    weft_step_result r;
    c->gc_report = out;
    weft_err err = weft_work_step(c, m, p, false, NULL, &r, d);
    c->gc_report = NULL;
    if (err)
        weft_gc_report_fini(out);
    return err;
}
