/* One training step: the compute of every micro-batch, the collectives
 * simulated on the fabric, the pipeline schedule and what of the
 * communication stays exposed. docs/step.md ("The step") gives the
 * assembly. */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "work/work_internal.h"

#define GIB 1073741824.0

const char *weft_comm_kind_name(weft_comm_kind k)
{
    static const char *const names[] = {"tp", "cp", "dp", "pp", "ep"};
    return (unsigned)k < WEFT__COMM_COUNT ? names[k] : "?";
}

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
    weft__free(c->scratch);
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

/* The gradient collectives of `params` parameters over the groups of mask
 * (n ranks each), in Megatron's buckets of max(40M, 1M x dp) parameters:
 * their total time, when the last ends if they start as a backward of
 * `window` seconds produces them, and the parameter all-gather of the
 * distributed optimizer (*ag). */
static weft_err dp_buckets(weft_work_ctx *c, const weft_parallel *p, uint32_t dp, uint32_t mask,
                           uint32_t n, uint64_t params, double window, double *total, double *end,
                           double *ag, double *bytes, uint32_t *calls, weft_diag *d)
{
    *total = *ag = *end = 0;
    if (n < 2 || params == 0)
        return WEFT_OK;
    uint64_t bucket = 40000000ull > 1000000ull * dp ? 40000000ull : 1000000ull * dp;
    uint64_t nb = (params + bucket - 1) / bucket, last = params - (nb - 1) * bucket;
    weft_coll coll = p->dist_opt ? WEFT_COLL_REDUCESCATTER : WEFT_COLL_ALLREDUCE;
    double tf = 0, tl = 0, af = 0, al = 0;
    weft_err err;
    if (nb > 1 && (err = weft__work_coll_s(c, p, dp, mask, coll, false, 4 * bucket, &tf, d)))
        return err;
    if ((err = weft__work_coll_s(c, p, dp, mask, coll, false, 4 * last, &tl, d)))
        return err;
    *total = (double)(nb - 1) * tf + tl;
    /* Bucket i is ready at window (i + 1) / nb and runs after bucket i - 1:
     * the last one ends at *end (the whole queue when window is 0). */
    double e = 0;
    for (uint64_t i = 0; i < nb; i++)
        e = fmax(e, window * (double)(i + 1) / (double)nb) + (i + 1 < nb ? tf : tl);
    *end = e;
    *bytes += ring_bytes(coll, n, 4.0 * (double)params);
    *calls += (uint32_t)nb;
    if (p->dist_opt) {
        if (nb > 1 &&
            (err = weft__work_coll_s(c, p, dp, mask, WEFT_COLL_ALLGATHER, false, 2 * bucket, &af, d)))
            return err;
        if ((err = weft__work_coll_s(c, p, dp, mask, WEFT_COLL_ALLGATHER, false, 2 * last, &al, d)))
            return err;
        *ag = (double)(nb - 1) * af + al;
        *bytes += ring_bytes(WEFT_COLL_ALLGATHER, n, 2.0 * (double)params);
        *calls += (uint32_t)nb;
    }
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
    if (p->prec != WEFT_PREC_FP32 && !(g->peak[p->prec] > 0))
        return weft_diag_set(d, WEFT_EINVAL, "--%s: the %s has no %s tensor cores",
                             p->prec == WEFT_PREC_FP8 ? "fp8-format" : weft_prec_name(p->prec),
                             g->name, weft_prec_name(p->prec));
    uint32_t dp = r.counts.dp, mb = r.counts.microbatches, v = r.counts.vstages;
    r.fits = (double)r.counts.mem_total <= g->hbm_bytes;
    if (check_memory && !r.fits)
        return weft_diag_set(d, WEFT_EINVAL,
                             "memory: %.1f GiB per GPU (weights %.1f, gradients %.1f, optimizer "
                             "%.1f, activations %.1f GiB) does not fit the %s's %.1f GiB",
                             r.counts.mem_total / GIB, r.counts.mem_weights / GIB,
                             r.counts.mem_grads / GIB, r.counts.mem_optim / GIB,
                             r.counts.mem_act / GIB, g->name, g->hbm_bytes / GIB);
    uint32_t sims0 = c->sims, hits0 = c->hits;
    weft__layer_time lt;
    weft__work_layer_time(g, m, p, dp, &lt);
    uint64_t tp = p->tp, Tl = (uint64_t)p->micro_batch * (m->seq / p->cp), h = m->hidden;
    uint64_t lps = m->layers / p->pp;
    bool full = p->recompute == WEFT_RECOMPUTE_FULL;

    /* Per layer and micro-batch: TP. */
    double tp_f = 0, tp_b = 0, tpb = 0;
    uint32_t tpc = 0;
    if (tp > 1) {
        uint64_t S = Tl * h * 2;
        double t1, t2 = 0;
        if (p->sp) {
            if ((err = weft__work_coll_s(c, p, dp, M_TP, WEFT_COLL_ALLGATHER, false, S, &t1, d)) ||
                (err = weft__work_coll_s(c, p, dp, M_TP, WEFT_COLL_REDUCESCATTER, false, S, &t2, d)))
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
        uint64_t S = Tl * m->topk * h * 2 / (p->sp ? tp : 1);
        double t;
        if ((err = weft__work_coll_s(c, p, dp, M_EP, WEFT_COLL_ALLTOALL, false, S, &t, d)))
            return err;
        ep_f = 2 * t;
        ep_b = 2 * t * (full ? 2 : 1);
        epc = full ? 6 : 4;
        epb = (double)epc * (p->ep - 1) / p->ep * (double)S;
    }
    /* A micro-batch on the first and on the last stage (compute only, and
     * the per-layer communication on its critical path). */
    double fc = (double)lps * lt.fwd, bc = (double)lps * (lt.bwd + lt.recompute);
    double f0 = fc + lt.embed_fwd, b0 = bc + lt.embed_bwd;
    double fl = fc + lt.logits_fwd, bl = bc + lt.logits_bwd;
    if (p->pp == 1) {
        f0 = fc + lt.embed_fwd + lt.logits_fwd;
        b0 = bc + lt.embed_bwd + lt.logits_bwd;
        fl = f0;
        bl = b0;
    }
    double cstage = fmax(f0 + b0, fl + bl);
    double xcomm[WEFT__COMM_COUNT] = {0};
    xcomm[WEFT_COMM_TP] = (double)lps * (tp_f + tp_b);
    xcomm[WEFT_COMM_CP] = (double)lps * (cpx_f + cpx_b);
    xcomm[WEFT_COMM_EP] = (double)lps * (ep_f + ep_b);
    double per_mb_comm = xcomm[WEFT_COMM_TP] + xcomm[WEFT_COMM_CP] + xcomm[WEFT_COMM_EP];
    /* 1F1B: mb slots in the steady state, (pp - 1) / v of fill and drain. */
    double fill = p->pp > 1 ? (double)(p->pp - 1) / v : 0;
    r.compute_s = (double)mb * cstage;
    r.bubble_s = fill * (cstage + per_mb_comm);
    for (int k = 0; k < WEFT__COMM_COUNT; k++)
        r.exposed_s[k] = (double)mb * xcomm[k];
    r.comm_s[WEFT_COMM_TP] = (double)mb * (double)lps * (tp_f + tp_b);
    r.comm_s[WEFT_COMM_CP] = (double)mb * (double)lps * (cp_f + cp_b);
    r.comm_s[WEFT_COMM_EP] = (double)mb * (double)lps * (ep_f + ep_b);
    r.comm_bytes[WEFT_COMM_TP] = (uint64_t)((double)mb * lps * tpb * (full ? 3 : 2));
    r.comm_bytes[WEFT_COMM_CP] = (uint64_t)((double)mb * lps * cpb);
    r.comm_bytes[WEFT_COMM_EP] = (uint64_t)((double)mb * lps * epb);
    r.comm_calls[WEFT_COMM_TP] = (uint32_t)(mb * lps * tpc);
    r.comm_calls[WEFT_COMM_CP] = (uint32_t)(mb * lps * cpc);
    r.comm_calls[WEFT_COMM_EP] = (uint32_t)(mb * lps * epc);
    /* PP: activations forward and gradients backward between neighbouring
     * stages, each TP rank its 1/tp share (scatter-gather). */
    if (p->pp > 1) {
        uint64_t S = Tl * h * 2 / tp;
        double t;
        if ((err = weft__work_coll_s(c, p, dp, M_PP, WEFT_COLL_ALLGATHER, true, S, &t, d)))
            return err;
        double sends = 2.0 * ((double)mb * v + p->pp - 1);
        r.exposed_s[WEFT_COMM_PP] = sends * t;
        r.pp_send_s = t;
        r.comm_s[WEFT_COMM_PP] = 2.0 * mb * v * t;
        r.comm_bytes[WEFT_COMM_PP] = (uint64_t)(2.0 * mb * v * (double)S);
        r.comm_calls[WEFT_COMM_PP] = 2 * mb * v;
    }
    /* DP: the busiest stage's gradients; dense ones over the whole DP
     * group, expert ones over the expert-data-parallel group. */
    uint64_t dn0, ex0, dn1, ex1;
    weft__work_stage_params(m, p, 0, &dn0, &ex0);
    weft__work_stage_params(m, p, p->pp - 1, &dn1, &ex1);
    uint64_t dn = dn0 > dn1 ? dn0 : dn1, ex = ex0 > ex1 ? ex0 : ex1;
    double dpt = 0, dpag = 0, ext = 0, exag = 0, dpbytes = 0, dpend, exend;
    uint32_t dpc = 0;
    /* Overlapped (--overlap-grad-reduce) with the last micro-batch's
     * backward on the first stage, which ends the pipeline; otherwise
     * after it. */
    double window = p->overlap_grad ? b0 + (double)lps * (tp_b + cpx_b + ep_b) : 0;
    if ((err = dp_buckets(c, p, dp, M_DP | M_EP, dp, dn, window, &dpt, &dpend, &dpag, &dpbytes,
                          &dpc, d)) ||
        (err = dp_buckets(c, p, dp, M_DP, dp / p->ep, ex, 0, &ext, &exend, &exag, &dpbytes, &dpc,
                          d)))
        return err;
    double grad = dpt + ext, gather = dpag + exag;
    r.comm_s[WEFT_COMM_DP] = grad + gather;
    r.comm_bytes[WEFT_COMM_DP] = (uint64_t)dpbytes;
    r.comm_calls[WEFT_COMM_DP] = dpc;
    double dpx = fmax(0, fmax(dpend, window) + ext - window);
    r.exposed_s[WEFT_COMM_DP] = dpx + gather;
    r.optimizer_s = lt.optimizer;
    r.fwd_s = fmax(f0, fl) + (double)lps * (tp_f + cpx_f + ep_f);
    r.bwd_s = fmax(b0, bl) + (double)lps * (tp_b + cpx_b + ep_b);
    r.step_s = r.compute_s + r.bubble_s + r.optimizer_s;
    for (int k = 0; k < WEFT__COMM_COUNT; k++)
        r.step_s += r.exposed_s[k];
    double peak = g->peak[p->prec] > 0 ? g->peak[p->prec] : g->peak[WEFT_PREC_BF16];
    r.mfu = r.counts.model_flops / (r.step_s * c->ranks * peak);
    r.sims = c->sims - sims0;
    r.sim_hits = c->hits - hits0;
    if (trace && (err = weft__work_trace(trace, c, p, dp, &r, d)))
        return err;
    *out = r;
    return WEFT_OK;
}
