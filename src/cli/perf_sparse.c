/* weft perf allreduce --density / --compress (perf_sparse.h): the sparse
 * and compressed all-reduces beside the dense one, same tensor, same run.
 *
 * Inputs. Sparse: rank r holds k = ceil(n D) distinct indices, split over
 * the ranks' ranges of the index space as weft_sparse_part_get splits them
 * (uniform, or zipf:S over the ranges: the simulator's model), drawn
 * within range j as a_r t + b_r mod n_j (t < k_j, a_r coprime to n_j), with
 * values 1, 2 or 3: every sum is exact, so the sparse result must equal
 * the dense all-reduce of the densified tensor byte for byte. int8: values
 * in (-1, 1) scaled by 10^-2 .. 10^2 per 64 elements; each rank checks
 * its own chunk against the bound of weft_allreduce_int8 with every
 * rank's inputs, which it regenerates. topk: small integer gradients
 * (exact sums), compressed with error feedback every call. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/intmath.h"
#include "base/map.h"
#include "cli/cli.h"
#include "cli/perf_sparse.h"
#include "cli/sizes.h"
#include "cli/sparse_flags.h"
#include "weft/comm_sparse.h"

int cli_perf_sparse_flags(const cli_syntax *syn, const cli_args *a, const char *coll, size_t *minb,
                          size_t *maxb, cli_perf_sparse *out)
{
    const char *dens = cli_args_get(a, "density"), *skew = cli_args_get(a, "skew"),
               *comp = cli_args_get(a, "compress"), *v;
    memset(out, 0, sizeof *out);
    if (!dens && !skew && !comp)
        return CLI_CONTINUE;
    out->on = true;
    weft_diag d = {0};
    if (strcmp(coll, "allreduce") != 0)
        return cli_usage_error(syn, "--density, --skew and --compress are for allreduce, not %s",
                               coll);
    static const char *const excl[] = {"plan", "traffic", "json", "plot"};
    for (size_t i = 0; i < sizeof excl / sizeof *excl; i++)
        if (cli_args_get(a, excl[i]) || cli_args_has(a, excl[i]))
            return cli_usage_error(syn, "--%s does not go with --density or --compress", excl[i]);
    if ((v = cli_args_get(a, "datatype")) && strcmp(v, "float") != 0 && strcmp(v, "fp32") != 0)
        return cli_usage_error(syn, "--density and --compress reduce float gradients, not -d %s",
                               v);
    if ((v = cli_args_get(a, "op")) && strcmp(v, "sum") != 0)
        return cli_usage_error(syn, "--density and --compress sum, not -o %s", v);
    if (dens && comp)
        return cli_usage_error(syn, "give --density D (the sparse all-reduce of a sparse "
                                    "tensor) or --compress C, not both");
    if (skew && !dens)
        return cli_usage_error(syn, "--skew needs --density");
    if (dens && weft_density_parse(dens, &out->ppm, &d))
        return cli_usage_error(syn, "bad --density: %s", d.msg);
    if (skew && !cli_sparse_skew_parse(skew, &out->zipf_milli))
        return cli_usage_error(syn,
                               "bad --skew '%s' (expected none or zipf:S, 0 <= S <= 8, at "
                               "most 3 decimal places)",
                               skew);
    if (comp) {
        if (weft_compressor_parse(comp, &out->comp, &d))
            return cli_usage_error(syn, "bad --compress: %s", d.msg);
        if (out->comp.kind != WEFT_COMP_INT8 && out->comp.kind != WEFT_COMP_TOPK)
            return cli_usage_error(syn,
                                   "--compress %s: the runtime runs int8[:B] and topk:D; the "
                                   "other compressors are modelled only (weft sim --compress)",
                                   comp);
        out->ppm = out->comp.density_ppm;
    }
    if (!cli_args_get(a, "minbytes"))
        *minb = (size_t)1 << 20;
    if (!cli_args_get(a, "maxbytes"))
        *maxb = (size_t)16 << 20;
    if (*minb > *maxb)
        *maxb = *minb;
    return CLI_CONTINUE;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* v over the ranks at rank 0 (sum, or the largest), handed back to all. */
static weft_err combine(weft_comm *c, double *v, bool sum, weft_diag *d)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    weft_err e = WEFT_OK;
    if (me != 0) {
        e = weft_send(c, 0, v, sizeof *v, d);
        return e ? e : weft_recv(c, 0, v, sizeof *v, d);
    }
    for (uint32_t r = 1; r < n && !e; r++) {
        double x = 0;
        e = weft_recv(c, r, &x, sizeof x, d);
        *v = sum ? *v + x : x > *v ? x : *v;
    }
    for (uint32_t r = 1; r < n && !e; r++)
        e = weft_send(c, r, v, sizeof *v, d);
    return e;
}

/* Rank r's k distinct non-zeros of n (see the top). */
static size_t sparse_input(uint64_t n, uint32_t ranks, uint32_t r, const cli_perf_sparse *o,
                           uint32_t *ix, float *val, weft_diag *d)
{
    weft_sparse_spec s = {n, 4, o->ppm, o->zipf_milli, WEFT_SPARSE_RANGE};
    uint64_t start = 0;
    size_t k = 0;
    for (uint32_t j = 0; j < ranks; j++) {
        weft_sparse_part_counts pc;
        if (weft_sparse_part_get(&s, ranks, j, &pc, d))
            return SIZE_MAX;
        if (pc.elems) {
            uint64_t a = weft__mix64((uint64_t)r * 131 + j) % pc.elems | 1,
                     b = weft__mix64(r + 7 * (uint64_t)j);
            while (weft__gcd64(a, pc.elems) != 1)
                a++;
            for (uint64_t t = 0; t < pc.nnz; t++) {
                ix[k] = (uint32_t)(start + (a * t + b) % pc.elems);
                val[k++] = (float)(1 + (r + t) % 3);
            }
        }
        start += pc.elems;
    }
    return k;
}

typedef struct bench {
    weft_comm *c;
    uint32_t n, me;
    long iters, warmup;
} bench;

typedef weft_err (*call_fn)(void *arg, double *busy_s, weft_diag *d);

/* Mean seconds a call over iters (after warmup), the slowest rank's; with
 * busy, the call's own split (seconds of its first part) likewise. */
static weft_err timed(const bench *b, call_fn fn, void *arg, double *secs, double *part,
                      weft_diag *d)
{
    weft_err e = WEFT_OK;
    double p = 0;
    for (long i = 0; i < b->warmup && !e; i++)
        e = fn(arg, &p, d);
    if (!e)
        e = weft_comm_barrier(b->c, d);
    p = 0;
    double t0 = now_s();
    for (long i = 0; i < b->iters && !e; i++)
        e = fn(arg, &p, d);
    double t = (now_s() - t0) / (double)b->iters;
    p /= (double)b->iters;
    if (!e)
        e = combine(b->c, &t, false, d);
    if (!e && part)
        e = combine(b->c, &p, false, d);
    *secs = t;
    if (part)
        *part = p;
    return e;
}

typedef struct args {
    weft_comm *c;
    const float *in;
    float *out;
    size_t n, k, block;
    const uint32_t *ix;
    const float *val;
    uint32_t *tix;
    float *tval;
    weft_ef *ef;
} args;

static weft_err call_dense(void *p, double *busy, weft_diag *d)
{
    args *a = p;
    (void)busy;
    return weft_allreduce(a->c, a->in, a->out, a->n, WEFT_FLOAT, WEFT_SUM, d);
}

static weft_err call_sparse(void *p, double *busy, weft_diag *d)
{
    args *a = p;
    (void)busy;
    return weft_allreduce_sparse(a->c, a->ix, WEFT_UINT32, a->val, a->k, a->n, a->out, NULL, d);
}

static weft_err call_int8(void *p, double *busy, weft_diag *d)
{
    args *a = p;
    (void)busy;
    return weft_allreduce_int8(a->c, a->in, a->out, a->n, a->block, d);
}

static weft_err call_topk(void *p, double *busy, weft_diag *d)
{
    args *a = p;
    double t = now_s();
    weft_err e = weft_topk_compress(a->in, a->n, a->k, a->ef, a->tix, a->tval, d);
    *busy += now_s() - t;
    return e ? e
             : weft_allreduce_sparse(a->c, a->tix, WEFT_UINT32, a->tval, a->k, a->n, a->out, NULL,
                                     d);
}

/* int8 inputs: (-1, 1) scaled per 64 elements. */
static float qvalue(uint32_t r, size_t i)
{
    static const double scale[5] = {0.01, 0.1, 1, 10, 100};
    double u = (double)(weft__mix64(r * UINT64_C(1000003) + i) >> 11) / 9007199254740992.0 * 2 - 1;
    return (float)(u * scale[(i / 64 + r) % 5]);
}

/* This rank's chunk of an int8 result against the bound: the worst
 * error / bound and the elements beyond it. */
static void int8_check(const bench *b, const float *out, size_t n, size_t block, double *worst,
                       double *over)
{
    size_t q = n / b->n, r = n % b->n, first = b->me * q + (b->me < r ? b->me : r);
    size_t len = q + (b->me < r), bl = block ? block : len;
    *worst = *over = 0;
    for (size_t b0 = first; b0 < first + len; b0 += bl) {
        size_t b1 = b0 + bl < first + len ? b0 + bl : first + len;
        double msum = 0;
        for (uint32_t s = 0; s < b->n; s++) {
            double m = 0;
            for (size_t i = b0; i < b1; i++)
                m = fmax(m, fabs((double)qvalue(s, i)));
            msum += m;
        }
        double bound = (1 + 1.0 / 4096) * msum / 127;
        for (size_t i = b0; i < b1; i++) {
            double y = 0;
            for (uint32_t s = 0; s < b->n; s++)
                y += (double)qvalue(s, i);
            double err = fabs((double)out[i] - y);
            if (bound > 0 && err / bound > *worst)
                *worst = err / bound;
            if (err > bound)
                *over += 1;
        }
    }
}

static void us_text(char *buf, size_t cap, double s)
{
    double us = s * 1e6;
    snprintf(buf, cap, us < 1e4 ? "%10.2f" : us < 1e5 ? "%10.1f" : "%10.0f", us);
}

int cli_perf_sparse_run(weft_comm *c, const cli_perf_sparse *o, size_t minb, size_t maxb,
                        long factor, long iters, long warmup, bool check)
{
    bench b = {c, weft_comm_size(c), weft_comm_rank(c), iters, warmup};
    bool sparse = o->comp.kind == WEFT_COMP_NONE, topk = o->comp.kind == WEFT_COMP_TOPK;
    size_t maxn = maxb / 4;
    if (maxn > UINT32_MAX) {
        cli_error("perf: -e %zu: the sparse all-reduce here takes 32-bit indices (n < 2^32)", maxb);
        return CLI_EXIT_INPUT;
    }
    size_t kmax = (size_t)weft_density_count(maxn, o->ppm ? o->ppm : 1) + 1;
    float *in = malloc((maxn + 1) * sizeof *in), *out = malloc((maxn + 1) * sizeof *out);
    float *ref = malloc((maxn + 1) * sizeof *ref), *val = malloc(kmax * sizeof *val);
    uint32_t *ix = malloc(kmax * sizeof *ix);
    if (!in || !out || !ref || !val || !ix) {
        free(in), free(out), free(ref), free(val), free(ix);
        cli_error("perf: cannot allocate the buffers of %zu bytes", maxb);
        return CLI_EXIT_INPUT;
    }
    char comp[64] = "";
    if (!sparse)
        weft_compressor_format(&o->comp, comp, sizeof comp);
    if (b.me == 0) {
        printf("# weft perf allreduce: %u ranks, transport %s, float sum, %ld iters, %ld warmup; "
               "time: the slowest rank's mean\n",
               b.n, b.n > 1 ? weft_comm_transport(c, 1) : "self", iters, warmup);
        char skew[32] = "none";
        if (o->zipf_milli)
            snprintf(skew, sizeof skew, "zipf:%.3g", o->zipf_milli / 1e3);
        if (sparse)
            printf("# sparse: weft_allreduce_sparse of k = ceil(n D) pairs a rank, D = %.6g, "
                   "skew %s, hash partition; union: non-zeros of the result, model: "
                   "weft_sparse_part_get's\n",
                   o->ppm / 1e6, skew);
        else if (topk)
            printf("# compressed: %s with error feedback (weft_topk_compress), then "
                   "weft_allreduce_sparse; comp: the compression's part of the time\n",
                   comp);
        else
            printf("# compressed: %s two-shot (weft_allreduce_int8); err/bound: the largest "
                   "error over the stated bound, #over: elements beyond it\n",
                   comp);
        printf("# dense: weft_allreduce of the same tensor; algbw = size / time (GB/s); "
               "speedup = dense time / %s time\n",
               sparse ? "sparse" : "compressed");
        if (sparse)
            printf("#%11s %10s %9s %9s %9s %10s %7s %10s %7s %7s %7s\n", "size", "count", "k/rank",
                   "union", "model", "dense(us)", "algbw", "sparse(us)", "algbw", "speedup",
                   "#wrong");
        else if (topk)
            printf("#%11s %10s %9s %10s %7s %10s %10s %7s %7s %7s\n", "size", "count", "k/rank",
                   "dense(us)", "algbw", "comp(us)", "total(us)", "algbw", "speedup", "#wrong");
        else
            printf("#%11s %10s %10s %7s %10s %7s %7s %10s %7s\n", "size", "count", "dense(us)",
                   "algbw", "int8(us)", "algbw", "speedup", "err/bound", "#over");
        fflush(stdout);
    }
    weft_diag d = {0};
    weft_err e = WEFT_OK;
    double bad_total = 0;
    weft_ef ef = {0};
    uint32_t *tix = topk ? malloc(kmax * sizeof *tix) : NULL;
    float *tval = topk ? malloc(kmax * sizeof *tval) : NULL;
    if (topk && (!tix || !tval))
        e = weft_diag_code(&d, WEFT_ENOMEM);
    for (size_t size = minb; !e && size <= maxb; size = size * (size_t)factor) {
        size_t n = size / 4;
        if (n == 0) {
            if (size > maxb / (size_t)factor)
                break;
            continue;
        }
        args a = {.c = c,
                  .in = in,
                  .out = out,
                  .n = n,
                  .block = o->comp.block,
                  .ix = ix,
                  .val = val,
                  .tix = tix,
                  .tval = tval,
                  .ef = &ef};
        double td = 0, tx = 0, part = 0, wrong = 0, worst = 0, uni = 0, model = 0;
        if (sparse) {
            size_t k = sparse_input(n, b.n, b.me, o, ix, val, &d);
            if (k == SIZE_MAX) {
                e = WEFT_EINVAL;
                break;
            }
            a.k = k;
            memset(in, 0, n * sizeof *in);
            for (size_t i = 0; i < k; i++)
                in[ix[i]] = val[i];
            weft_sparse_spec s = {n, 4, o->ppm, 0, WEFT_SPARSE_HASH};
            for (uint32_t j = 0; j < b.n; j++) {
                weft_sparse_part_counts pc;
                if (!weft_sparse_part_get(&s, b.n, j, &pc, NULL))
                    model += (double)pc.uni;
            }
        } else if (topk) {
            a.k = (size_t)weft_density_count(n, o->ppm);
            for (size_t i = 0; i < n; i++)
                in[i] = (float)((int)(weft__mix64(b.me * UINT64_C(7919) + i) % 7) - 3);
            weft_ef_fini(&ef);
            if ((e = weft_ef_init(&ef, n)))
                break;
        } else {
            for (size_t i = 0; i < n; i++)
                in[i] = qvalue(b.me, i);
        }
        if ((e = timed(&b, call_dense, &a, &td, NULL, &d)))
            break;
        memcpy(ref, out, n * sizeof *ref);
        call_fn fn = sparse ? call_sparse : topk ? call_topk : call_int8;
        if ((e = timed(&b, fn, &a, &tx, topk ? &part : NULL, &d)))
            break;
        if (sparse) {
            wrong = check ? (double)(memcmp(out, ref, n * sizeof *out) != 0) : 0;
            if (check && wrong) {
                wrong = 0;
                for (size_t i = 0; i < n; i++)
                    wrong += memcmp(&out[i], &ref[i], sizeof(float)) != 0;
            }
            for (size_t i = 0; i < n; i++)
                uni += out[i] != 0;
        } else if (topk && check) {
            /* The last call's selection, densified and reduced densely. */
            memset(ref, 0, n * sizeof *ref);
            for (size_t i = 0; i < a.k; i++)
                ref[tix[i]] = tval[i];
            if ((e = weft_allreduce(c, ref, ref, n, WEFT_FLOAT, WEFT_SUM, &d)))
                break;
            for (size_t i = 0; i < n; i++)
                wrong += memcmp(&out[i], &ref[i], sizeof(float)) != 0;
        } else if (check) {
            int8_check(&b, out, n, o->comp.block, &worst, &wrong);
            if ((e = combine(c, &worst, false, &d)))
                break;
        }
        if ((e = combine(c, &wrong, true, &d)))
            break;
        bad_total += wrong;
        if (b.me != 0)
            continue;
        char dt[16], xt[16], pt[16], wt[16];
        us_text(dt, sizeof dt, td);
        us_text(xt, sizeof xt, tx);
        us_text(pt, sizeof pt, part);
        if (check)
            snprintf(wt, sizeof wt, "%.0f", wrong);
        else
            snprintf(wt, sizeof wt, "N/A");
        double bd = (double)size / td / 1e9, bx = (double)size / tx / 1e9;
        if (sparse)
            printf("%12zu %10zu %9zu %9.0f %9.0f %s %7.2f %s %7.2f %7.2f %7s\n", size, n, a.k, uni,
                   model, dt, bd, xt, bx, td / tx, wt);
        else if (topk)
            printf("%12zu %10zu %9zu %s %7.2f %s %s %7.2f %7.2f %7s\n", size, n, a.k, dt, bd, pt,
                   xt, bx, td / tx, wt);
        else
            printf("%12zu %10zu %s %7.2f %s %7.2f %7.2f %10.4f %7s\n", size, n, dt, bd, xt, bx,
                   td / tx, worst, wt);
        fflush(stdout);
        if (size > maxb / (size_t)factor)
            break;
    }
    weft_ef_fini(&ef);
    free(tix), free(tval), free(in), free(out), free(ref), free(val), free(ix);
    if (e)
        return cli_fail(e, &d);
    if (bad_total > 0) {
        if (b.me == 0)
            cli_error("perf: %.0f wrong elements%s", bad_total,
                      sparse || topk ? "" : " beyond the int8 bound");
        return CLI_EXIT_INPUT;
    }
    return CLI_EXIT_OK;
}
