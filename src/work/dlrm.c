/* One DLRM training step on a fabric (weft/dlrm.h; docs/step.md, "DLRM"):
 * the dense GEMMs through the compute model, the embedding lookups at HBM
 * bandwidth, the embedding all-to-alls and the all-reduces simulated on
 * the fabric. */
#include <string.h>

#include "base/alloc.h"
#include "weft/dlrm.h"
#include "weft/synth.h"
#include "work/emb_internal.h"
#include "work/work_internal.h"

/* MLPerf Training v3.0+ DLRM-DCNv2 (mlcommons/training,
 * recommendation_v2/torchrec_dlrm/README.md: --num_embeddings_per_feature,
 * --multi_hot_sizes, --embedding_dim 128, --dense_arch_layer_sizes
 * 512,256,128, --over_arch_layer_sizes 1024,1024,512,256,1,
 * --interaction_type dcn --dcn_num_layers 3 --dcn_low_rank_dim 512; the 13
 * integer features of Criteo 1TB; GLOBAL_BATCH_SIZE 65536 of its run
 * script, WEFT_DLRM_MLPERF_BATCH). The multi-hot ids are drawn uniformly
 * (--multi_hot_distribution_type uniform): zipf 0. */
static const uint64_t mlperf_rows[WEFT_DLRM_MLPERF_TABLES] = {
    40000000, 39060,    17295,    7424,     20265,  3,     7122, 1543, 63,
    40000000, 3067956,  405282,   10,       2209,   11938, 155,  4,    976,
    14,       40000000, 40000000, 40000000, 590152, 12973, 108,  36};
static const uint32_t mlperf_pool[WEFT_DLRM_MLPERF_TABLES] = {
    3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1};

void weft_dlrm_mlperf(weft_dlrm *m, weft_emb_table tables[WEFT_DLRM_MLPERF_TABLES])
{
    memset(m, 0, sizeof *m);
    strcpy(m->name, "dlrm-mlperf");
    m->dense_features = 13;
    static const uint32_t bottom[] = {512, 256, 128}, top[] = {1024, 1024, 512, 256, 1};
    memcpy(m->bottom, bottom, sizeof bottom);
    m->nbottom = 3;
    memcpy(m->top, top, sizeof top);
    m->ntop = 5;
    m->interaction = WEFT_DLRM_DCN;
    m->dcn_layers = 3;
    m->dcn_rank = 512;
    for (uint32_t t = 0; t < WEFT_DLRM_MLPERF_TABLES; t++)
        tables[t] = (weft_emb_table){mlperf_rows[t], 128, mlperf_pool[t], 4, 0, WEFT_EMB_TW, 1};
    m->emb.ntables = WEFT_DLRM_MLPERF_TABLES;
    m->emb.tables = tables;
    m->prec = WEFT_PREC_BF16;
}

static weft_err check(const weft_work_ctx *c, const weft_dlrm *m, weft_diag *d)
{
    if (!c->gpu)
        return weft_diag_set(d, WEFT_EINVAL, "dlrm: the step needs a GPU");
    if (m->emb.gpus != c->ranks)
        return weft_diag_set(d, WEFT_EINVAL,
                             "dlrm: %u GPUs in the workload, %u ranks in the fabric", m->emb.gpus,
                             c->ranks);
    if (!m->dense_features)
        return weft_diag_set(d, WEFT_EINVAL, "dlrm: dense features: must be at least 1");
    if (!m->nbottom || m->nbottom > WEFT_DLRM_MAX_LAYERS || !m->ntop ||
        m->ntop > WEFT_DLRM_MAX_LAYERS)
        return weft_diag_set(d, WEFT_EINVAL, "dlrm: the bottom and top MLPs need 1 to %u layers",
                             WEFT_DLRM_MAX_LAYERS);
    for (uint32_t i = 0; i < m->nbottom; i++)
        if (!m->bottom[i])
            return weft_diag_set(d, WEFT_EINVAL, "dlrm: bottom MLP layer %u: width 0", i + 1);
    for (uint32_t i = 0; i < m->ntop; i++)
        if (!m->top[i])
            return weft_diag_set(d, WEFT_EINVAL, "dlrm: top MLP layer %u: width 0", i + 1);
    if (m->interaction == WEFT_DLRM_DCN && (!m->dcn_layers || !m->dcn_rank))
        return weft_diag_set(d, WEFT_EINVAL, "dlrm: DCN needs at least 1 layer of rank at least 1");
    if (m->prec == WEFT_PREC_FP8)
        return weft_diag_set(d, WEFT_EINVAL, "dlrm: dense precision fp8 is not modelled");
    weft_err e = weft_emb_check(&m->emb, d);
    if (e)
        return e;
    uint32_t dim = m->bottom[m->nbottom - 1];
    for (uint32_t t = 0; t < m->emb.ntables; t++)
        if (m->emb.tables[t].dim != dim)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "dlrm: table %u: dim %u: must be the bottom MLP's output width %u "
                                 "(the interaction combines them)",
                                 t, m->emb.tables[t].dim, dim);
    return WEFT_OK;
}

/* A Linear of B rows, K inputs, N outputs: its forward GEMM, and its
 * data- and weight-gradient GEMMs. */
static void linear(const weft_gpu *g, weft_prec p, uint64_t B, uint64_t K, uint64_t N, double *fw,
                   double *bw)
{
    *fw += weft__work_gemm_s(g, p, 1, B, N, K);
    *bw += weft__work_gemm_s(g, p, 1, B, K, N) + weft__work_gemm_s(g, p, 1, K, N, B);
}

static void dense(const weft_gpu *g, const weft_dlrm *m, weft_dlrm_result *r)
{
    uint64_t B = m->emb.batch, in = m->dense_features, params = 0;
    double fw = 0, bw = 0;
    for (uint32_t i = 0; i < m->nbottom; i++) {
        linear(g, m->prec, B, in, m->bottom[i], &fw, &bw);
        params += in * m->bottom[i] + m->bottom[i];
        in = m->bottom[i];
    }
    r->bottom_fwd_s = fw;
    r->bottom_bwd_s = bw;
    uint64_t D = in, F = (uint64_t)m->emb.ntables + 1;
    if (m->interaction == WEFT_DLRM_DOT) {
        /* Z = X X^T per sample (F x D times D x F); its backward takes two
         * GEMMs of the same shape. The top MLP reads the dense vector and
         * the F (F - 1) / 2 distinct products. */
        double z = weft__work_gemm_s(g, m->prec, B, F, F, D);
        fw += z;
        bw += 2 * z;
        in = D + F * (F - 1) / 2;
    } else {
        /* DCNv2's low-rank cross layer over the concatenation of width
         * W = F D: x_{l+1} = x_0 * (U (V x_l) + b) + x_l, V of R x W, U of
         * W x R (TorchRec's LowRankCrossNet). */
        uint64_t W = F * D, R = m->dcn_rank;
        for (uint32_t l = 0; l < m->dcn_layers; l++) {
            linear(g, m->prec, B, W, R, &fw, &bw);
            linear(g, m->prec, B, R, W, &fw, &bw);
            params += 2 * W * R + W;
        }
        in = W;
    }
    for (uint32_t i = 0; i < m->ntop; i++) {
        linear(g, m->prec, B, in, m->top[i], &fw, &bw);
        params += in * m->top[i] + m->top[i];
        in = m->top[i];
    }
    r->dense_fwd_s = fw;
    r->dense_bwd_s = bw;
    r->dense_params = params;
    r->dense_ar_bytes = 4 * params;
}

/* The forward matrix, and per GPU the bytes of rows it reads and of table
 * it holds. */
static weft_err embedding(const weft_dlrm *m, weft_emb_result *er, uint64_t *row_bytes,
                          uint64_t *mem, uint64_t *dp_out, weft_diag *d)
{
    const weft_emb_workload *w = &m->emb;
    uint64_t N = w->gpus, B = w->batch, slot = 0;
    *dp_out = 0;
    for (uint32_t t = 0; t < w->ntables; t++) {
        const weft_emb_table *tb = &w->tables[t];
        uint64_t E = tb->dtype_bytes, D = tb->dim, P = tb->pooling;
        switch (tb->sharding) {
        case WEFT_EMB_TW:
            row_bytes[slot % N] += N * B * P * D * E;
            mem[slot++ % N] += tb->rows * D * E;
            break;
        case WEFT_EMB_CW:
            for (uint32_t c = 0; c < tb->col_shards; c++) {
                uint64_t dc = D / tb->col_shards + (c < D % tb->col_shards);
                row_bytes[slot % N] += N * B * P * dc * E;
                mem[slot++ % N] += tb->rows * dc * E;
            }
            break;
        case WEFT_EMB_RW: {
            uint64_t blk = (tb->rows + N - 1) / N;
            for (uint64_t o = 0; o < N; o++) {
                uint64_t lo = o * blk < tb->rows ? o * blk : tb->rows;
                uint64_t hi = lo + blk < tb->rows ? lo + blk : tb->rows;
                mem[o] += (hi - lo) * D * E;
            }
            break;
        }
        case WEFT_EMB_DP:
            for (uint64_t g = 0; g < N; g++) {
                row_bytes[g] += B * P * D * E;
                mem[g] += tb->rows * D * E;
            }
            *dp_out += B * D * E;
            break;
        }
    }
    /* Row-wise lookups counted per owner while the matrix is built, the
     * tables on threads (the same sums at any number of threads); the
     * other tables' lookups counted, not drawn. */
    weft_emb_acc *a;
    weft_err e = weft_emb_acc_new(w, &a, d);
    if (e)
        return e;
    if (!(e = weft__emb_acc_draw_rw(a, row_bytes, d)))
        e = weft_emb_acc_finish(a, er, d);
    weft_emb_acc_free(a);
    return e;
}

static weft_err allreduce(weft_work_ctx *c, uint64_t size, double *out, weft_diag *d)
{
    *out = 0;
    if (c->ranks < 2 || !size)
        return WEFT_OK;
    uint32_t *pos = weft__malloc((size_t)c->ranks * sizeof *pos);
    if (!pos)
        return weft_diag_code(d, WEFT_ENOMEM);
    for (uint32_t i = 0; i < c->ranks; i++)
        pos[i] = i;
    weft_err e =
        weft__work_groups_s(c, WEFT_COLL_ALLREDUCE, false, pos, c->ranks, c->ranks, size, out, d);
    weft__free(pos);
    return e;
}

static weft_err bound(weft_work_ctx *c, const weft_traffic *t, double *out, weft_diag *d)
{
    weft_a2a_bound b;
    memset(&b, 0, sizeof b);
    weft_err e = weft_a2a_bound_compute(c->topo, t, NULL, &b, d);
    if (!e)
        *out = b.time_s;
    weft_a2a_bound_fini(&b);
    return e;
}

/* The step from its parts: with overlap, each all-to-all runs beside the
 * bottom MLP's pass of the same direction (TorchRec's output distribution
 * is a LazyAwaitable, waited on only where the interaction reads the
 * pooled embeddings: pytorch/torchrec, torchrec/distributed/types.py;
 * the dense arch does not depend on it). */
static double hidden(double a2a, double bottom)
{
    return a2a < bottom ? a2a : bottom;
}

static void compose(const weft_dlrm *m, weft_dlrm_result *r)
{
    double rest = r->lookup_fwd_s + r->dense_fwd_s + r->dense_bwd_s + r->lookup_bwd_s +
                  r->dense_ar_s + r->emb_ar_s;
    r->overlap = m->overlap;
    r->a2a_fwd_hidden_s = m->overlap ? hidden(r->a2a_fwd_s, r->bottom_fwd_s) : 0;
    r->a2a_bwd_hidden_s = m->overlap ? hidden(r->a2a_bwd_s, r->bottom_bwd_s) : 0;
    r->step_s = rest + r->a2a_fwd_s + r->a2a_bwd_s - r->a2a_fwd_hidden_s - r->a2a_bwd_hidden_s;
    if (r->herald) {
        double hf = m->overlap ? hidden(r->a2a_fwd_base_s, r->bottom_fwd_s) : 0;
        double hb = m->overlap ? hidden(r->a2a_bwd_base_s, r->bottom_bwd_s) : 0;
        r->step_base_s = rest + r->a2a_fwd_base_s + r->a2a_bwd_base_s - hf - hb;
    } else {
        r->step_base_s = r->step_s;
    }
}

static uint64_t offdiag(const weft_traffic *t)
{
    uint64_t s = 0;
    for (uint32_t i = 0; i < t->ranks; i++)
        for (uint32_t j = 0; j < t->ranks; j++)
            if (i != j)
                s += weft_traffic_at(t, i, j);
    return s;
}

/* Herald's cache and placement: the reduced all-to-alls replace the
 * plain ones, which are kept as the base (of the same measured step). */
static weft_err herald(weft_work_ctx *c, const weft_dlrm *m, weft_dlrm_result *r, weft_diag *d)
{
    weft_emb_herald_result h;
    weft_err e = weft_emb_herald(&m->emb, &m->herald, &h, d);
    if (e)
        return e;
    weft_traffic back = {0, NULL};
    r->herald = true;
    /* The four all-to-alls at once (the base backward, the base
     * forward's transpose, takes its time on a reversible fabric). */
    const weft_traffic *ts[4] = {&h.forward_base, &back, &h.forward, &h.backward};
    double at[4];
    if ((e = weft_traffic_transpose(&h.forward_base, &back, d)) ||
        (e = weft__work_traffics_s(c, ts, 4, at, d)))
        goto done;
    r->a2a_fwd_base_s = at[0];
    r->a2a_bwd_base_s = at[1];
    r->a2a_fwd_s = at[2];
    r->a2a_bwd_s = at[3];
    if (m->bound && ((h.bytes && (e = bound(c, &h.forward, &r->a2a_fwd_bound_s, d))) ||
                     (h.bwd_bytes && (e = bound(c, &h.backward, &r->a2a_bwd_bound_s, d)))))
        goto done;
    r->a2a_bytes_base = offdiag(&h.forward_base);
    r->a2a_bytes = h.bytes;
    r->a2a_bwd_bytes = h.bwd_bytes;
    r->a2a_max_send = 0;
    for (uint32_t i = 0; i < h.forward.ranks; i++) {
        uint64_t s = weft_traffic_send(&h.forward, i) - weft_traffic_at(&h.forward, i, i);
        r->a2a_max_send = s > r->a2a_max_send ? s : r->a2a_max_send;
    }
    r->transfers_base = h.transfers_base;
    r->transfers = h.transfers;
    r->remote = h.remote;
    r->hits = h.hits;
    r->stale = h.stale;
    r->admitted = h.admitted;
    r->samples_moved = h.samples_moved;
    r->placed = h.placed;
done:
    weft_traffic_free(&back);
    weft_emb_herald_free(&h);
    return e;
}

/* Bytes a cached row's index costs: its id and its LRU stamp, an int64
 * each (weft/dlrm.h, weft_dlrm_cache_bytes, cites FBGEMM). */
#define CACHE_INDEX_BYTES 16

uint64_t weft_dlrm_cache_bytes(const weft_dlrm *m)
{
    uint64_t row = 0;
    for (uint32_t t = 0; t < m->emb.ntables; t++) {
        const weft_emb_table *tb = &m->emb.tables[t];
        uint64_t b = (uint64_t)tb->dim * tb->dtype_bytes;
        if (tb->sharding != WEFT_EMB_DP && b > row)
            row = b;
    }
    return row ? m->herald.rows_per_gpu * (row + CACHE_INDEX_BYTES) : 0;
}

/* A step between its parts (weft_dlrm_steps): its result so far, and the
 * plain all-to-all's matrices that the simulations wait for. */
typedef struct step_job {
    weft_dlrm_result r;
    weft_emb_result er;
    weft_traffic back;
} step_job;

static void job_fini(step_job *j)
{
    weft_traffic_free(&j->back);
    weft_emb_result_free(&j->er);
}

static bool uses_herald(const weft_dlrm *m)
{
    return m->herald.rows_per_gpu || m->herald.placement != WEFT_EMB_PLACE_RANDOM;
}

/* The step up to its collectives: the dense part, the lookups, the
 * per-GPU bytes and memory; Herald's all-to-alls whole (herald: its own
 * batch of four), else the forward's transpose for the batch. */
static weft_err step_begin(weft_work_ctx *c, const weft_dlrm *m, step_job *j, weft_diag *d)
{
    memset(j, 0, sizeof *j);
    weft_err e = check(c, m, d);
    if (e)
        return e;
    weft_dlrm_result *r = &j->r;
    const weft_gpu *g = c->gpu;
    dense(g, m, r);
    uint32_t N = c->ranks;
    uint64_t *acc = weft__calloc(2 * (size_t)N, sizeof *acc), dp_out = 0;
    if (!acc)
        return weft_diag_code(d, WEFT_ENOMEM);
    uint64_t *row_bytes = acc, *mem = acc + N;
    if ((e = embedding(m, &j->er, row_bytes, mem, &dp_out, d)))
        goto done;
    r->lookups = j->er.lookups;
    r->emb_ar_bytes = j->er.allreduce_bytes;
    uint64_t best = 0;
    for (uint32_t i = 0; i < N; i++) {
        uint64_t sent = weft_traffic_send(&j->er.forward, i);
        uint64_t outb = sent + dp_out;
        uint64_t fw = row_bytes[i] + outb, bw = 2 * row_bytes[i] + outb;
        if (i == 0 || fw + bw > best) {
            best = fw + bw;
            r->busiest = i;
            r->lookup_fwd_bytes = fw;
            r->lookup_bwd_bytes = bw;
        }
        uint64_t off = sent - weft_traffic_at(&j->er.forward, i, i);
        r->a2a_bytes += off;
        r->a2a_max_send = off > r->a2a_max_send ? off : r->a2a_max_send;
        r->table_bytes_max = mem[i] > r->table_bytes_max ? mem[i] : r->table_bytes_max;
    }
    r->cache_bytes = weft_dlrm_cache_bytes(m);
    r->fits = (double)r->table_bytes_max + (double)r->cache_bytes <= g->hbm_bytes;
    r->lookup_fwd_s = (double)r->lookup_fwd_bytes / g->hbm_bw;
    r->lookup_bwd_s = (double)r->lookup_bwd_bytes / g->hbm_bw;
    r->a2a_bwd_bytes = r->a2a_bytes;
    if (uses_herald(m))
        /* Herald's measured step replaces these matrices, its plain ones
         * included. */
        e = herald(c, m, r, d);
    else
        e = weft_traffic_transpose(&j->er.forward, &j->back, d);
done:
    weft__free(acc);
    return e;
}

/* The plain all-to-alls' bounds, when asked. */
static weft_err step_bounds(weft_work_ctx *c, const weft_dlrm *m, step_job *j, weft_diag *d)
{
    weft_dlrm_result *r = &j->r;
    if (r->herald || !m->bound || !r->a2a_bytes)
        return WEFT_OK;
    weft_err e = bound(c, &j->er.forward, &r->a2a_fwd_bound_s, d);
    return e ? e : bound(c, &j->back, &r->a2a_bwd_bound_s, d);
}

/* Steps 0 .. n - 1: each one's begin, then every plain all-to-all (the
 * forward and its transpose, step after step) and every all-reduce (the
 * dense gradient's and the data-parallel tables') at once
 * (weft__work_traffics_groups_s), then each one's bounds and its sum. The
 * calls, the counters, the memo and the cache of the context are those of
 * weft_dlrm_step on each in turn (Herald's steps, whose own batches would
 * come between, run that way). */
static weft_err run_steps(weft_work_ctx *c, const weft_dlrm *const *m, size_t n,
                          weft_dlrm_result *out, weft_diag *d)
{
    step_job *j = weft__calloc(n, sizeof *j);
    const weft_traffic **ts = weft__calloc(2 * n, sizeof *ts);
    double *at = weft__calloc(4 * n, sizeof *at), *ar = at ? at + 2 * n : NULL;
    uint64_t *sizes = weft__calloc(2 * n, sizeof *sizes);
    uint32_t *pos = weft__malloc((size_t)c->ranks * sizeof *pos);
    weft_err e = WEFT_OK;
    size_t begun = 0;
    if (!j || !ts || !at || !sizes || !pos) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto done;
    }
    for (; begun < n && !e; begun++)
        e = step_begin(c, m[begun], &j[begun], d);
    for (size_t i = 0; i < n && !e; i++) {
        ts[2 * i] = &j[i].er.forward;
        ts[2 * i + 1] = &j[i].back;
    }
    for (size_t i = 0; i < n && !e; i++) {
        sizes[2 * i] = j[i].r.dense_ar_bytes;
        sizes[2 * i + 1] = j[i].r.emb_ar_bytes;
    }
    for (uint32_t i = 0; i < c->ranks; i++)
        pos[i] = i;
    /* The all-to-alls and, as allreduce() of each (nothing under 2 ranks),
     * the all-reduces; the bounds (which read the fabric alone) after. */
    if (e || (e = weft__work_traffics_groups_s(c, ts, 2 * n, at, WEFT_COLL_ALLREDUCE, pos, c->ranks,
                                               c->ranks, sizes, c->ranks >= 2 ? 2 * n : 0, ar, d)))
        goto done;
    for (size_t i = 0; i < n && !e; i++) {
        j[i].r.a2a_fwd_s = at[2 * i];
        j[i].r.a2a_bwd_s = at[2 * i + 1];
        j[i].r.dense_ar_s = c->ranks >= 2 ? ar[2 * i] : 0;
        j[i].r.emb_ar_s = c->ranks >= 2 ? ar[2 * i + 1] : 0;
        if (!(e = step_bounds(c, m[i], &j[i], d))) {
            compose(m[i], &j[i].r);
            out[i] = j[i].r;
        }
    }
done:
    for (size_t i = 0; j && i < begun; i++)
        job_fini(&j[i]);
    weft__free(j);
    weft__free(ts);
    weft__free(at);
    weft__free(sizes);
    weft__free(pos);
    return e;
}

/* One step whole (a Herald step: its all-to-alls ran in step_begin). */
static weft_err one_step(weft_work_ctx *c, const weft_dlrm *m, weft_dlrm_result *out, weft_diag *d)
{
    step_job j;
    weft_err e = step_begin(c, m, &j, d);
    if (!e && !j.r.herald) {
        const weft_traffic *ts[2] = {&j.er.forward, &j.back};
        double at[2];
        if (!(e = weft__work_traffics_s(c, ts, 2, at, d))) {
            j.r.a2a_fwd_s = at[0];
            j.r.a2a_bwd_s = at[1];
            e = step_bounds(c, m, &j, d);
        }
    }
    if (!e && !(e = allreduce(c, j.r.dense_ar_bytes, &j.r.dense_ar_s, d)) &&
        !(e = allreduce(c, j.r.emb_ar_bytes, &j.r.emb_ar_s, d))) {
        compose(m, &j.r);
        *out = j.r;
    }
    job_fini(&j);
    return e;
}

weft_err weft_dlrm_steps(weft_work_ctx *c, const weft_dlrm *const *m, size_t n,
                         weft_dlrm_result *out, weft_diag *d)
{
    /* Ranked all-reduces record their choices: those stay in the calls'
     * order, step after step. */
    bool batch = n > 1 && !weft__work_chooses(c, WEFT_COLL_ALLREDUCE, false);
    for (size_t i = 0; i < n && batch; i++)
        batch = !uses_herald(m[i]);
    weft_err e = WEFT_OK;
    if (batch)
        e = run_steps(c, m, n, out, d);
    for (size_t i = 0; i < n && !batch && !e; i++)
        e = one_step(c, m[i], &out[i], d);
    for (size_t i = 0; i < n && e; i++)
        memset(&out[i], 0, sizeof out[i]);
    return e;
}

weft_err weft_dlrm_step(weft_work_ctx *c, const weft_dlrm *m, weft_dlrm_result *out, weft_diag *d)
{
    return weft_dlrm_steps(c, &m, 1, out, d);
}

static void span(FILE *f, int tid, const char *name, double t, double dur)
{
    if (dur <= 0)
        return;
    fprintf(f, ",\n{\"ph\":\"X\",\"pid\":0,\"tid\":%d,\"name\":\"%s\",\"ts\":%.3f,\"dur\":%.3f}",
            tid, name, t * 1e6, dur * 1e6);
}

weft_err weft_dlrm_trace(FILE *f, const weft_dlrm_result *r, weft_diag *d)
{
    fputs("{\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":0,\"name\":\"process_name\",\"args\":{"
          "\"name\":\"dlrm step (busiest GPU)\"}},\n"
          "{\"ph\":\"M\",\"pid\":0,\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":"
          "\"compute\"}},\n"
          "{\"ph\":\"M\",\"pid\":0,\"tid\":2,\"name\":\"thread_name\",\"args\":{\"name\":"
          "\"comm\"}}",
          f);
    double t = 0;
    span(f, 1, "lookup fwd", t, r->lookup_fwd_s);
    t += r->lookup_fwd_s;
    if (r->overlap) {
        /* The bottom MLP beside the all-to-all; the interaction waits for
         * both; backward, the bottom MLP's gradients beside the gradients'
         * all-to-all. */
        span(f, 1, "bottom mlp fwd", t, r->bottom_fwd_s);
        span(f, 2, "a2a fwd", t, r->a2a_fwd_s);
        t += r->a2a_fwd_s > r->bottom_fwd_s ? r->a2a_fwd_s : r->bottom_fwd_s;
        span(f, 1, "dense fwd", t, r->dense_fwd_s - r->bottom_fwd_s);
        t += r->dense_fwd_s - r->bottom_fwd_s;
        span(f, 1, "dense bwd", t, r->dense_bwd_s - r->bottom_bwd_s);
        t += r->dense_bwd_s - r->bottom_bwd_s;
        span(f, 1, "bottom mlp bwd", t, r->bottom_bwd_s);
        span(f, 2, "a2a bwd", t, r->a2a_bwd_s);
        t += r->a2a_bwd_s > r->bottom_bwd_s ? r->a2a_bwd_s : r->bottom_bwd_s;
    } else {
        span(f, 2, "a2a fwd", t, r->a2a_fwd_s);
        t += r->a2a_fwd_s;
        span(f, 1, "dense fwd", t, r->dense_fwd_s);
        t += r->dense_fwd_s;
        span(f, 1, "dense bwd", t, r->dense_bwd_s);
        t += r->dense_bwd_s;
        span(f, 2, "a2a bwd", t, r->a2a_bwd_s);
        t += r->a2a_bwd_s;
    }
    span(f, 1, "lookup bwd", t, r->lookup_bwd_s);
    t += r->lookup_bwd_s;
    span(f, 2, "dense allreduce", t, r->dense_ar_s);
    t += r->dense_ar_s;
    span(f, 2, "emb allreduce", t, r->emb_ar_s);
    fputs("\n]}\n", f);
    if (ferror(f))
        return weft_diag_set(d, WEFT_EIO, "writing the trace failed");
    return WEFT_OK;
}
