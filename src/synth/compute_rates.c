/* What each compute op of a compressed or sparse plan costs per byte on a
 * processor (weft/compress.h, weft_compute_rates_get). */
#include <string.h>

#include "synth/compress_cost.h"
#include "weft/compress.h"

/* bench_sparse_kernels (bench/sparse_kernels.c at commit fb5445c: one rank
 * of 4 of weft_allreduce_sparse's local kernels, n = 4,194,304 floats at
 * density 0.05, uint32 indices and float values, 8 bytes a pair; best of 5
 * in thread CPU time) on the AMD EPYC of weft's build machine, load 6.7,
 * in seconds per byte of what each op names. Re-measured with the bench of
 * commit a14beb2 (the same to 6eaa90b),
 * where aggregate and decompress time the runtime's own loops
 * (weft__sparse_sum_into, weft__sparse_scatter) and decompress scatters
 * the RANKS disjoint unions the runtime does (four runs, load 5.6-8.3):
 * hash 0.596-0.613, aggregate 1.67-1.84, compress 0.904-0.911, fill
 * 17.3-27.4, decompress 1.94-2.90 GB/s: the figures below are inside that
 * spread, so they stay. */
static const double sparse_cpu[WEFT__COMPUTE_COUNT] = {
    [WEFT_COMPUTE_HASH] = 1.6645e-9,        /* 0.601 GB/s of the rank's pairs */
    [WEFT_COMPUTE_AGGREGATE] = 5.4469e-10,  /* 1.836 GB/s of pairs received */
    [WEFT_COMPUTE_COMPRESS] = 1.0741e-9,    /* 0.931 GB/s of the union packed */
    [WEFT_COMPUTE_FILL] = 4.1954e-11,       /* 23.836 GB/s of the dense output */
    [WEFT_COMPUTE_DECOMPRESS] = 5.1607e-10, /* 1.938 GB/s of pairs scattered */
};
/* The quantized owner's sum in double (src/run/coll_quant.c step 2), the
 * same run: 6.685 GB/s of fp32 input. */
static const double dense_sum_cpu = 1.4960e-10;

/* The kernels' cost is per element or pair (they read fp32 values, as the
 * runtime does): a plan of b-byte elements states b per element and 4 + b
 * per pair, so a rate per fp32 byte becomes one per byte of the plan's
 * by these factors. */
static void per_plan_byte(weft_compute_rates *out, bool pairs, uint32_t b)
{
    for (int k = 0; k < WEFT__COMPUTE_COUNT; k++) {
        bool pair_kind = pairs && k != WEFT_COMPUTE_FILL;
        out->s_per_b[k] *= pair_kind ? 8.0 / (4.0 + b) : 4.0 / b;
    }
}

weft_err weft_compute_rates_get(const weft_compressor *c, uint32_t elem_bytes, const char *device,
                                weft_compute_rates *out, weft_diag *d)
{
    memset(out, 0, sizeof *out);
    if ((unsigned)c->kind >= WEFT__COMP_COUNT || c->kind == WEFT_COMP_NONE)
        return weft_diag_set(d, WEFT_EINVAL, "compute rates: no compressor (%s)",
                             weft_comp_kind_name(c->kind));
    double hbm = weft_gpu_arch_hbm_bw(device);
    if (hbm > 0) /* a GPU: the roofline model (compress_cost.c) */
        return weft__compute_rates_gpu(c, elem_bytes, device, hbm, out, d);
    if (elem_bytes == 0 || elem_bytes > 16)
        return weft_diag_set(d, WEFT_EINVAL, "compute rates: elements of %u bytes (1 .. 16)",
                             elem_bytes);
    if (strcmp(device, "cpu") != 0)
        return weft_diag_set(d, WEFT_EINVAL,
                             "unknown processor '%s' (cpu, or a GPU: volta, ampere, hopper, "
                             "blackwell)",
                             device);
    if (weft_comp_is_sparse(c->kind)) {
        memcpy(out->s_per_b, sparse_cpu, sizeof sparse_cpu);
        per_plan_byte(out, true, elem_bytes);
        out->source = "bench_sparse_kernels (bench/sparse_kernels.c, commit fb5445c), one "
                      "thread of an AMD EPYC; docs/compression.md, \"Compute in the plans\"";
        return WEFT_OK;
    }
    weft_compress_cost cc;
    weft_err e = weft_compress_cost_get(c->kind, "cpu", &cc, d);
    if (e)
        return e;
    if (!cc.measured)
        return weft_diag_set(d, WEFT_EUNSUPPORTED,
                             "the compute of %s on cpu is not measured (docs/compression.md, "
                             "\"Compute cost\": int8 and sign are)",
                             weft_comp_kind_name(c->kind));
    out->s_per_b[WEFT_COMPUTE_COMPRESS] = cc.compress_s_per_b;
    out->s_per_b[WEFT_COMPUTE_DECOMPRESS] = cc.decompress_s_per_b;
    out->s_per_b[WEFT_COMPUTE_AGGREGATE] = dense_sum_cpu;
    per_plan_byte(out, false, elem_bytes);
    out->source = "bench_compress (bench/compress.c, commit e7b484a) and bench_sparse_kernels "
                  "(commit fb5445c), one thread of an AMD EPYC; docs/compression.md";
    return WEFT_OK;
}
