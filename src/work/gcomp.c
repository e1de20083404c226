/* The step's gradient compression (--grad-compression; docs/step.md,
 * "Gradient compression"): the DP gradients as units (tensors or
 * Megatron's buckets), what each option of reducing a group costs on the
 * step's fabric and GPU, and the plan: every group compressed on the GPU,
 * or the search of gcomp_search.c (Espresso's per-group decision joined
 * with Cupcake's fusion).
 *
 * Options for a group of E fp32 gradients (b = 4 bytes; q the bytes the
 * compressor writes for E elements; N the DP group):
 *   none         the dense ring all-reduce of E b bytes (the dense step's);
 *   A on G|C     quantizer: the ring all-reduce of q bytes (every hop
 *                compressed chunks, the receiver decompresses, adds and
 *                recompresses); sparsifier: sparse-ag, the ring all-gather
 *                of the N ranks' q bytes, summed at every rank;
 *   B on G|C     quantizer: 2shot (quant-2shot), an all-to-all of the
 *                compressed chunks to their owners (q a rank) and the ring
 *                all-gather of the recompressed ones (q in all);
 *                sparsifier: sparse-hash, the all-to-all of each rank's
 *                pairs to the owners of their hashed parts (q a rank) and
 *                the all-gather of the parts' unions (U in all, union
 *                sizes of weft_sparse_part_get).
 * Every collective is the step's own simulation over the DP groups at
 * once (weft__work_coll_s), at that size. The compute, in passes over the
 * group: a GPU compress pass moves E x compress_b bytes of HBM and a
 * decompress pass E x decompress_b + k x scatter_b (k kept elements) at
 * the GPU's HBM bandwidth (weft_compress_traffic_get: the memory roofline
 * of the compressor's kernels, a lower bound that measured kernels reach
 * 0.79-0.87 of: docs/compression.md); a CPU pass is E b bytes at the measured
 * rate of weft_compress_cost_get(kind, "cpu") (compress or decompress),
 * and the CPU path copies E b bytes each way over the GPU's PCIe link
 * (weft_host_figures_get). Compress: one pass, before the collective
 * (GPU: on the compute stream; CPU: the compressing thread after the
 * D2H copy). In flight (on the communication stream, or the CPU driving
 * it): ring (N - 1)/N recompression and 2 (N - 1)/N decompression; 2shot
 * (N - 1)/N decompression and 1/N recompression at the owner; sparse-hash
 * 1/N decompression and 1/N compression at the owner. After: 2shot
 * (N - 1)/N decompression; sparse-ag and sparse-hash one (densify the
 * sum: on the GPU one zero fill and the scatter of N k, or U / 8, pairs).
 * On the CPU the after part and the
 * H2D copy run on the decompressing thread. No per-kernel launch cost is
 * charged (none is cited), so small groups cost no more compute than
 * their bytes; what fusion saves is the collectives' latency. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/map.h"
#include "work/work_internal.h"

/* Units (tensors) beyond which the fusion search works per layer. */
#define WEFT__GC_MAX_TENSORS 64

enum { O_NONE = 0, O_GPU_A, O_GPU_B, O_CPU_A, O_CPU_B, O_COUNT };

#define M_ALL_GPU ((1u << O_NONE) | (1u << O_GPU_A) | (1u << O_GPU_B))

typedef struct gc_ctx {
    weft_work_ctx *c;
    const weft_parallel *p;
    uint32_t dp, mask, N;
    bool sparse;
    uint64_t *cum; /* units + 1: elements before unit i */
    double hbm, pcie;
    weft_compress_traffic tr; /* the compressor's GPU kernels, fp32 input */
    bool cpu_ok;
    double cpu_c, cpu_d; /* s per fp32 byte */
    weft__map64 cache;   /* (size << 2 | coll) -> index into t */
    double *t;
    size_t nt, tcap;
} gc_ctx;

static const char *opt_coll(const gc_ctx *g, uint32_t o)
{
    if (o == O_NONE)
        return "allreduce";
    bool a = o == O_GPU_A || o == O_CPU_A;
    return g->sparse ? (a ? "sparse-ag" : "sparse-hash") : (a ? "ring" : "2shot");
}

/* The step's simulation of coll at size over the DP groups, cached here
 * (the context's cache is a list: the search asks for thousands of sizes). */
static weft_err coll_s(gc_ctx *g, weft_coll coll, uint64_t size, double *out, weft_diag *d)
{
    int kc = coll == WEFT_COLL_ALLREDUCE ? 0 : coll == WEFT_COLL_ALLGATHER ? 1 : 2;
    uint64_t key = size << 2 | (uint64_t)kc;
    uint32_t *v = weft__map64_find(&g->cache, key);
    if (v) {
        *out = g->t[*v];
        return WEFT_OK;
    }
    weft_err err = weft__work_coll_s(g->c, g->p, g->dp, g->mask, coll, false, size, out, d);
    if (err)
        return err;
    if (weft__grow((void **)&g->t, &g->tcap, g->nt + 1, sizeof *g->t) ||
        weft__map64_put(&g->cache, key, (uint32_t)g->nt))
        return weft_diag_code(d, WEFT_ENOMEM);
    g->t[g->nt++] = *out;
    return WEFT_OK;
}

/* The bytes of E elements compressed (q) and, for sparse-hash, the
 * parts' unions in all (U). */
static weft_err sizes(const gc_ctx *g, uint64_t E, uint64_t *q, uint64_t *U, weft_diag *d)
{
    weft_tensor_shape sh = {E, 4, 0, 0};
    weft_err err = weft_compress_bytes(&g->p->grad_comp, &sh, q, d);
    *U = 0;
    if (err || !g->sparse)
        return err;
    weft_sparse_spec sp = {E, 4, g->p->grad_comp.density_ppm, 0, WEFT_SPARSE_HASH};
    for (uint32_t j = 0; j < g->N; j++) {
        weft_sparse_part_counts pc;
        if ((err = weft_sparse_part_get(&sp, g->N, j, &pc, d)))
            return err;
        *U += pc.uni * 8;
    }
    return WEFT_OK;
}

/* The bytes one GPU sends for E elements with option o. */
static double opt_bytes(const gc_ctx *g, uint32_t o, uint64_t E, uint64_t q, uint64_t U)
{
    double f = (double)(g->N - 1) / g->N;
    if (o == O_NONE)
        return 2 * f * 4.0 * (double)E;
    bool a = o == O_GPU_A || o == O_CPU_A;
    if (!g->sparse)
        return 2 * f * (double)q;
    return a ? (g->N - 1) * (double)q : f * (double)q + f * (double)U;
}

/* Group [i, j) with option o: its job and, in *wire, the collectives'
 * time alone (the rest of job->comm is compute in flight). */
static weft_err job_of(gc_ctx *g, uint32_t i, uint32_t j, uint32_t o, weft__gc_job *job,
                       double *wire_out, weft_diag *d)
{
    memset(job, 0, sizeof *job);
    uint64_t E = g->cum[j] - g->cum[i], q, U;
    weft_err err;
    if (o == O_NONE) {
        err = coll_s(g, WEFT_COLL_ALLREDUCE, 4 * E, &job->comm, d);
        *wire_out = job->comm;
        return err;
    }
    if ((err = sizes(g, E, &q, &U, d)))
        return err;
    bool a = o == O_GPU_A || o == O_CPU_A, cpu = o >= O_CPU_A;
    double N = g->N, f = (N - 1) / N, wire = 0, t2 = 0;
    /* Passes in flight (recompress, decompress) and after. */
    double in_c, in_d, post_d;
    if (!g->sparse && a) {
        err = coll_s(g, WEFT_COLL_ALLREDUCE, q, &wire, d);
        in_c = f, in_d = 2 * f, post_d = 0;
    } else if (!g->sparse) {
        if (!(err = coll_s(g, WEFT_COLL_ALLTOALL, q, &wire, d)))
            err = coll_s(g, WEFT_COLL_ALLGATHER, q, &t2, d);
        in_c = 1 / N, in_d = f, post_d = f;
    } else if (a) {
        err = coll_s(g, WEFT_COLL_ALLGATHER, (uint64_t)g->N * q, &wire, d);
        in_c = 0, in_d = 0, post_d = 1;
    } else {
        if (!(err = coll_s(g, WEFT_COLL_ALLTOALL, q, &wire, d)))
            err = coll_s(g, WEFT_COLL_ALLGATHER, U ? U : 1, &t2, d);
        in_c = 1 / N, in_d = 1 / N, post_d = 1;
    }
    if (err)
        return err;
    wire += t2;
    *wire_out = wire;
    double Eb = 4.0 * (double)E;
    if (!cpu) {
        /* One tensor of E: compress, and decompress (fill and scatter k
         * for a sparsifier); the sum densified after a sparse collective:
         * one fill and the scatter of the N k pairs received (sparse-ag)
         * or the U / 8 of the parts' unions (sparse-hash). */
        double k = (double)weft_density_count(E, g->p->grad_comp.density_ppm);
        double cpass = (double)E * g->tr.compress_b / g->hbm;
        double dfill = (double)E * g->tr.decompress_b / g->hbm;
        double dpass = dfill + k * g->tr.scatter_b / g->hbm;
        double post = !g->sparse ? post_d * dpass
                                 : dfill + (a ? N * k : (double)U / 8) * g->tr.scatter_b / g->hbm;
        job->gpu = cpass;
        job->comm = wire + in_c * cpass + in_d * dpass + post;
    } else {
        job->cpu_pre = Eb / g->pcie + Eb * g->cpu_c;
        job->comm = wire + Eb * (in_c * g->cpu_c + in_d * g->cpu_d);
        job->cpu_post = Eb * post_d * g->cpu_d + Eb / g->pcie;
    }
    return WEFT_OK;
}

static weft_err cost(void *arg, uint32_t i, uint32_t j, uint32_t o, weft__gc_job *job, weft_diag *d)
{
    double wire;
    return job_of(arg, i, j, o, job, &wire, d);
}

/* The tensors of stage st's dense gradients in the order the backward
 * produces them: per layer (last first) its MLP (for an MoE layer the
 * router and shared experts), its norms, its attention, each over TP;
 * then the rest (embeddings, output layer, final norm) as one, the first
 * stage's input embedding being the backward's last gradient. Its layers
 * in the stage's order, MoE ones first (sizes only: a model's layers of a
 * kind are alike). For the fusion search (fuse) a stage of more than
 * WEFT__GC_MAX_TENSORS tensors has a unit per layer (its three fused),
 * the search exact over layer-aligned fusions: every group it weighs
 * is simulated at its size, and the groups of n units are n (n + 1) / 2.
 * *cum gets n + 1 prefix sums. */
static weft_err tensors(const weft_model *m, const weft_parallel *p, uint32_t st, uint64_t params,
                        bool fuse, uint64_t **cum, uint32_t *n, bool *layers, weft_diag *d)
{
    uint32_t nm, nd;
    weft__work_stage_layers(m, p, st, &nm, &nd);
    uint32_t nl = nm + nd, k = 0;
    *layers = fuse && 3ull * nl + 1 > WEFT__GC_MAX_TENSORS;
    uint64_t *c = weft__malloc(((size_t)3 * nl + 2) * sizeof *c);
    if (!c)
        return weft_diag_code(d, WEFT_ENOMEM);
    c[0] = 0;
    for (uint32_t l = 0; l < nl; l++) {
        weft__layer_params lp;
        weft__work_layer_params(m, m->experts && l < nm, &lp);
        uint64_t part[3] = {lp.dense_mlp / p->tp, lp.norm, lp.attn / p->tp};
        if (*layers) {
            c[k + 1] = c[k] + part[0] + part[1] + part[2];
            k++;
            continue;
        }
        for (int x = 0; x < 3; x++, k++)
            c[k + 1] = c[k] + part[x];
    }
    if (params > c[k]) {
        c[k + 1] = params;
        k++;
    }
    *cum = c;
    *n = k;
    return WEFT_OK;
}

/* Figures of the plan (cut, opt) on g: the report's groups when rep. */
static weft_err account(gc_ctx *g, const weft__gc_prob *pr, const uint32_t *cut,
                        const uint32_t *opt, uint32_t ng, weft__gc_out *out, weft_gc_report *rep,
                        weft_diag *d)
{
    weft__gc_state s = {0, 0, 0, 0};
    weft_err err = WEFT_OK;
    if (rep) {
        rep->g = weft__calloc(ng ? ng : 1, sizeof *rep->g);
        if (!rep->g)
            return weft_diag_code(d, WEFT_ENOMEM);
        rep->n = ng;
    }
    for (uint32_t k = 0; k < ng; k++) {
        uint32_t i = cut[k], j = cut[k + 1], o = opt[k];
        weft__gc_job job;
        double wire, start, end;
        uint64_t E = g->cum[j] - g->cum[i], q = 0, U = 0;
        if ((err = job_of(g, i, j, o, &job, &wire, d)) ||
            (o != O_NONE && (err = sizes(g, E, &q, &U, d))))
            return err;
        /* Compression compute: all but the collectives' own time. */
        double gpu = o == O_NONE || o >= O_CPU_A ? 0 : job.gpu + job.comm - wire;
        double cpu = o >= O_CPU_A ? job.cpu_pre + job.comm - wire + job.cpu_post : 0;
        double ready = pr->ready[j - 1] + s.D;
        weft__gc_state nx;
        weft__gc_apply(&s, pr->ready[j - 1], &job, &nx, &start, &end);
        s = nx;
        double by = opt_bytes(g, o, E, q, U), dense = opt_bytes(g, O_NONE, E, 0, 0);
        out->comm += job.comm;
        out->bytes += by;
        out->saved += dense - by;
        out->compute += gpu + cpu;
        out->gpu += o == O_NONE || o >= O_CPU_A ? 0 : job.gpu;
        out->cpu += cpu;
        out->calls += (o == O_GPU_B || o == O_CPU_B) ? 2 : 1;
        out->groups++;
        out->compressed += o != O_NONE;
        out->on_cpu += o >= O_CPU_A;
        if (rep) {
            weft_gc_group *gr = &rep->g[k];
            gr->first = i;
            gr->last = j - 1;
            gr->elems = E;
            gr->compressed = o != O_NONE;
            gr->cpu = o >= O_CPU_A;
            gr->coll = opt_coll(g, o);
            gr->ready_s = ready;
            gr->compute_s = gpu + cpu;
            gr->comm_start_s = start;
            gr->end_s = end;
            gr->bytes = (uint64_t)by;
            gr->bytes_saved = dense > by ? (uint64_t)(dense - by) : 0;
        }
    }
    out->end = weft__gc_final(&s, pr->window);
    return WEFT_OK;
}

weft_err weft__work_gc(weft_work_ctx *c, const weft_model *m, const weft_parallel *p, uint32_t dp,
                       uint32_t mask, uint32_t n, uint32_t stage, uint64_t params, double window,
                       uint64_t bucket, weft__gc_out *out, weft_gc_report *rep, weft_diag *d)
{
    memset(out, 0, sizeof *out);
    gc_ctx g;
    memset(&g, 0, sizeof g);
    g.c = c;
    g.p = p;
    g.dp = dp;
    g.mask = mask;
    g.N = n;
    g.sparse = weft_comp_is_sparse(p->grad_comp.kind);
    g.hbm = c->gpu->hbm_bw;
    weft__map64_init(&g.cache);
    weft_err err = weft_compress_traffic_get(&p->grad_comp, 4, &g.tr, d);
    if (!err && !g.tr.known)
        err = weft_diag_set(d, WEFT_EINVAL,
                            "--grad-compression: the GPU cost of %s is not modelled (%s)",
                            weft_comp_kind_name(p->grad_comp.kind), g.tr.source);
    if (err) {
        weft__map64_fini(&g.cache);
        return err;
    }
    weft_host_figures hf;
    weft_compress_cost cc;
    if (weft_host_figures_get(c->gpu->name, &hf) &&
        !weft_compress_cost_get(p->grad_comp.kind, "cpu", &cc, NULL) && cc.measured) {
        g.cpu_ok = true;
        g.pcie = hf.pcie_gbs * 1e9;
        g.cpu_c = cc.compress_s_per_b;
        g.cpu_d = cc.decompress_s_per_b;
    }
    /* Megatron's buckets: unit i ready at window (i + 1) / nb (the dense
     * step's queue). */
    uint64_t nb = params / bucket + (params % bucket != 0);
    uint64_t *bcum = NULL, *tcum = NULL;
    double *bready = NULL, *tready = NULL;
    uint32_t nt = 0;
    bool per_layer = false;
    weft__gc_sol sb, st;
    memset(&sb, 0, sizeof sb);
    memset(&st, 0, sizeof st);
    uint32_t *fix = NULL;
    if (nb > UINT32_MAX / 2) {
        err = weft_diag_set(d, WEFT_EINVAL, "gradient compression: too many buckets");
        goto done;
    }
    bcum = weft__malloc(((size_t)nb + 1) * sizeof *bcum);
    bready = weft__malloc((size_t)nb * sizeof *bready);
    fix = weft__malloc(((size_t)nb + 1) * 2 * sizeof *fix);
    if (!bcum || !bready || !fix) {
        err = weft_diag_code(d, WEFT_ENOMEM);
        goto done;
    }
    bcum[0] = 0;
    for (uint64_t i = 0; i < nb; i++) {
        bcum[i + 1] = i + 1 < nb ? (i + 1) * bucket : params;
        bready[i] = window * (double)(i + 1) / (double)nb;
        fix[i] = (uint32_t)i;
    }
    fix[nb] = (uint32_t)nb;
    uint32_t *fopt = fix + nb + 1;
    weft__gc_prob pb = {(uint32_t)nb, bready, window, O_COUNT, 0, false, 0, cost, &g};
    weft__gc_prob pt = pb;
    uint32_t allowed = g.cpu_ok ? (1u << O_COUNT) - 1 : M_ALL_GPU;
    if (!p->grad_auto)
        allowed = 1u << O_GPU_A;
    uint32_t fuse = p->grad_fuse   ? p->grad_fuse
                    : p->grad_auto ? WEFT_GC_FUSE_DP
                                   : WEFT_GC_FUSE_BUCKET;
    /* never and always: every bucket dense, every bucket A on the GPU. */
    g.cum = bcum;
    for (uint64_t i = 0; i < nb; i++)
        fopt[i] = O_NONE;
    if ((err = weft__gc_eval(&pb, fix, fopt, (uint32_t)nb, &out->never_end, d)))
        goto done;
    for (uint64_t i = 0; i < nb; i++)
        fopt[i] = O_GPU_A;
    if ((err = weft__gc_eval(&pb, fix, fopt, (uint32_t)nb, &out->always_end, d)))
        goto done;
    bool use_t = false;
    pb.opt_mask = allowed;
    if (fuse == WEFT_GC_FUSE_BUCKET || (fuse == WEFT_GC_FUSE_DP && p->grad_auto)) {
        if ((err = weft__gc_search(&pb, &sb, d)))
            goto done;
    }
    if (fuse == WEFT_GC_FUSE_TENSOR || fuse == WEFT_GC_FUSE_DP) {
        if ((err =
                 tensors(m, p, stage, params, fuse == WEFT_GC_FUSE_DP, &tcum, &nt, &per_layer, d)))
            goto done;
        tready = weft__malloc((size_t)nt * sizeof *tready);
        if (!tready) {
            err = weft_diag_code(d, WEFT_ENOMEM);
            goto done;
        }
        for (uint32_t i = 0; i < nt; i++)
            tready[i] = window * (double)tcum[i + 1] / (double)params;
        pt.n = nt;
        pt.ready = tready;
        pt.opt_mask = allowed;
        pt.fuse = fuse == WEFT_GC_FUSE_DP;
        g.cum = tcum;
        if ((err = weft__gc_search(&pt, &st, d)))
            goto done;
        use_t = !sb.cut || st.end < sb.end;
    }
    const weft__gc_sol *sol = use_t ? &st : &sb;
    const weft__gc_prob *pr = use_t ? &pt : &pb;
    g.cum = use_t ? tcum : bcum;
    double never = out->never_end, always = out->always_end;
    if ((err = account(&g, pr, sol->cut, sol->opt, sol->ng, out, rep, d)))
        goto done;
    out->never_end = never;
    out->always_end = always;
    out->exact = sol->exact;
    if (rep) {
        rep->units = !use_t ? "buckets" : per_layer ? "layers" : "tensors";
        rep->nunits = pr->n;
        rep->end_s = out->end;
        rep->never_end_s = never;
        rep->always_end_s = always;
        rep->window_s = window;
        rep->states = sb.states + st.states;
        rep->exact = sol->exact;
    }
done:
    weft__gc_sol_fini(&sb);
    weft__gc_sol_fini(&st);
    weft__free(bcum);
    weft__free(bready);
    weft__free(tcum);
    weft__free(tready);
    weft__free(fix);
    weft__free(g.t);
    weft__map64_fini(&g.cache);
    return err;
}

weft_err weft_grad_compression_parse(const char *text, weft_parallel *p, weft_diag *d)
{
    char buf[128];
    size_t len = strlen(text);
    if (len >= sizeof buf)
        return weft_diag_set(d, WEFT_EINVAL, "--grad-compression '%.40s...': too long", text);
    memcpy(buf, text, len + 1);
    uint32_t fuse = WEFT_GC_FUSE_DEFAULT;
    char *comma = strchr(buf, ',');
    if (comma) {
        *comma = 0;
        const char *opt = comma + 1;
        if (!strcmp(opt, "fuse=bucket"))
            fuse = WEFT_GC_FUSE_BUCKET;
        else if (!strcmp(opt, "fuse=tensor"))
            fuse = WEFT_GC_FUSE_TENSOR;
        else if (!strcmp(opt, "fuse=dp"))
            fuse = WEFT_GC_FUSE_DP;
        else
            return weft_diag_set(d, WEFT_EINVAL,
                                 "--grad-compression '%s': unknown option '%s' (fuse=bucket, "
                                 "fuse=tensor or fuse=dp)",
                                 text, opt);
    }
    bool autom = !strcmp(buf, "auto") || !strncmp(buf, "auto:", 5);
    const char *spec = !strcmp(buf, "auto") ? "int8" : autom ? buf + 5 : buf;
    weft_compressor cmp;
    weft_err err = weft_compressor_parse(spec, &cmp, d);
    if (err)
        return err;
    if (cmp.kind == WEFT_COMP_NONE && (autom || comma))
        return weft_diag_set(d, WEFT_EINVAL, "--grad-compression '%s': %s needs a compressor", text,
                             autom ? "auto" : "fuse=");
    p->grad_comp = cmp;
    p->grad_auto = autom;
    p->grad_fuse = fuse;
    return WEFT_OK;
}

void weft_gc_report_fini(weft_gc_report *r)
{
    if (!r)
        return;
    weft__free(r->g);
    memset(r, 0, sizeof *r);
}
