/* What a compressor's compute costs (weft/compress.h): on the CPU as
 * weft's bench_compress measured it (weft_compress_cost_get); on a GPU as
 * the HBM bytes its kernels move (weft_compress_traffic_get) at the HBM
 * bandwidth of its generation. docs/compression.md, "Compute cost", gives every kernel, its
 * source and the check of the model against published measurements.
 *
 * Why a roofline: quantizing, packing signs, casting to fp8, dequantizing,
 * zeroing and scattering do a few operations per byte they move, far below
 * the tens of operations a byte that an A100 or H100 can do per byte of
 * HBM bandwidth, so they are bound by HBM: time >= bytes read and written
 * / bandwidth. A measured kernel reaches a share of it (torchao's
 * blockwise fp8 quantization on an H100: 0.79-0.87), so the model is a
 * lower bound that the step and the simulator label "model: roofline".
 * Top-k and DGC are several kernels; their passes are those of the
 * implementations cited below, each pass memory-bound in turn. */
#include <string.h>

#include "synth/compress_cost.h"
#include "weft/compress.h"

/* The bytes a random access moves: global memory is read and written in
 * 32-byte sectors (NVIDIA, CUDA C++ Best Practices Guide, "Coalesced
 * Access to Global Memory": a warp's accesses coalesce into as many
 * 32-byte transactions as they touch), so one gathered or scattered
 * element costs a sector. */
#define SECTOR 32.0

/* The width of an index PyTorch's topk, nonzero and scatter_ write and
 * read: int64. */
#define IDX 8.0

double weft_gpu_arch_hbm_bw(const char *arch)
{
    /* Vendors' data sheets: NVIDIA Tesla V100 (SXM2, 900 GB/s HBM2); the
     * rows a100-80g, h100-sxm and b200 of weft's GPU table (docs/step.md,
     * "GPUs": NVIDIA A100 data sheet 2021, SXM4 80GB; H100 data sheet 2023,
     * SXM5; DGX B200 data sheet 2024, 62 TB/s over 8 GPUs). */
    static const struct {
        const char *arch;
        double bw;
    } t[] = {
        {"volta", 900e9},
        {"ampere", 2039e9},
        {"hopper", 3350e9},
        {"blackwell", 7700e9},
    };
    for (size_t i = 0; arch && i < sizeof t / sizeof *t; i++)
        if (strcmp(arch, t[i].arch) == 0)
            return t[i].bw;
    return 0;
}

weft_err weft_compress_traffic_get(const weft_compressor *c, uint32_t elem_bytes,
                                   weft_compress_traffic *out, weft_diag *d)
{
    memset(out, 0, sizeof *out);
    if ((unsigned)c->kind >= WEFT__COMP_COUNT || c->kind == WEFT_COMP_NONE)
        return weft_diag_set(d, WEFT_EINVAL, "GPU traffic: no compressor (%s)",
                             weft_comp_kind_name(c->kind));
    if (elem_bytes == 0 || elem_bytes > 16)
        return weft_diag_set(d, WEFT_EINVAL, "GPU traffic: elements of %u bytes (1 .. 16)",
                             elem_bytes);
    if (weft_comp_is_sparse(c->kind) && (c->density_ppm == 0 || c->density_ppm > WEFT_PPM))
        return weft_diag_set(d, WEFT_EINVAL, "GPU traffic: %s needs a density in (0, 1]",
                             weft_comp_kind_name(c->kind));
    double b = elem_bytes, D = c->density_ppm / 1e6;
    out->known = true;
    switch (c->kind) {
    case WEFT_COMP_INT8:
    case WEFT_COMP_FP8:
        if (c->block == 0) {
            /* One scale a tensor: it must be known before any element is
             * written, so a max |x| pass reads the tensor, then the
             * quantize pass reads it again and writes a byte an element
             * (Transformer Engine's current scaling: an amax kernel,
             * then the cast). */
            out->compress_b = 2 * b + 1;
            out->decompress_b = 1 + b;
        } else {
            /* A scale a block of B: the block is in registers, one pass
             * (torchao's triton_fp8_blockwise_act_quant_lhs: bf16 in, fp8
             * and an fp32 scale per 128 out). */
            out->compress_b = b + 1 + 4.0 / c->block;
            out->decompress_b = 1 + 4.0 / c->block + b;
        }
        out->source = "model: roofline, a fused quantize kernel's HBM bytes "
                      "(docs/compression.md, \"Compute cost\")";
        return WEFT_OK;
    case WEFT_COMP_QSGD:
    case WEFT_COMP_SIGN: {
        /* A per-tensor statistic (QSGD's norm, sign's mean |x|) first,
         * then the packing pass: w bits an element out. */
        double w = 1;
        if (c->kind == WEFT_COMP_QSGD) {
            unsigned lb = 0;
            while ((1ull << lb) < (uint64_t)c->param + 1)
                lb++;
            w = 1 + lb;
        }
        out->compress_b = 2 * b + w / 8;
        out->decompress_b = w / 8 + b;
        out->source = "model: roofline, a statistic pass and a packing pass "
                      "(docs/compression.md, \"Compute cost\")";
        return WEFT_OK;
    }
    case WEFT_COMP_TOPK:
        /* GRACE's topk (sands-lab/grace grace_dl/torch/compressor/topk.py
         * @106e3de): torch.topk(tensor.abs(), k) then tensor[indices].
         * abs: read and write n b. PyTorch's multi-block radix select
         * (aten/src/ATen/native/cuda/TensorTopK.cu @6ed5926, mbtopk,
         * RADIX_BITS 8): one digit-count pass over the input per 8 bits,
         * b passes of n b, then its gather pass reads n b and writes k
         * values and k int64 indices. tensor[indices]: k indices read, k
         * sectors gathered, k values written. (The sort of the k results,
         * sorted=True, is left out: work on k, not n.) */
        out->compress_b = 3 * b + b * b + D * (2 * b + 2 * IDX + SECTOR);
        out->decompress_b = b;
        out->scatter_b = IDX + b + SECTOR;
        out->source = "model: roofline of GRACE's topk (sands-lab/grace @106e3de) on "
                      "PyTorch's radix select (TensorTopK.cu @6ed5926), pass by pass "
                      "(docs/compression.md, \"Compute cost\")";
        return WEFT_OK;
    case WEFT_COMP_DGC:
        /* GRACE's dgc (grace_dl/torch/compressor/dgc.py @106e3de): gather
         * a 1 % sample (0.01 n sectors, indices and values), top-k of its
         * |x| (as topk above, on 0.01 n elements); mask = |x| >= thr (abs:
         * read and write n b; compare: read n b, write n bools); its sum
         * (read n); torch.where (nonzero, aten/src/ATen/native/cuda/
         * Nonzero.cu @0358b9e: cub's DeviceReduce::Sum counts, then
         * DeviceSelect::Flagged selects, each reading the n bools; k int64
         * indices out); tensor[indices] as
         * topk. The threshold taken at once: each of up to 10 retries
         * would add a mask and its sum, 3b + 2 an element. */
        out->compress_b =
            3 * b + 4 + 0.01 * (IDX + SECTOR + b + 3 * b + b * b) + D * (2 * IDX + SECTOR + b);
        out->decompress_b = b;
        out->scatter_b = IDX + b + SECTOR;
        out->source = "model: roofline of GRACE's dgc (sands-lab/grace @106e3de), pass by "
                      "pass, the threshold taken at once (docs/compression.md, \"Compute cost\")";
        return WEFT_OK;
    case WEFT_COMP_RANDK:
        /* weft's randk sends a seed (weft_compress_bytes): the indices
         * are drawn from it in registers on both sides, so compress
         * gathers k sectors and writes k values, decompress zeroes n b
         * and scatters k values a sector each. (GRACE's randomk instead
         * sorts a random permutation of all n, torch.randperm: a sort, not
         * this.) */
        out->compress_b = D * (SECTOR + b);
        out->decompress_b = b;
        out->scatter_b = b + SECTOR;
        out->source = "model: roofline, a seeded gather and scatter "
                      "(docs/compression.md, \"Compute cost\")";
        return WEFT_OK;
    default:
        out->known = false;
        out->source = "not measured: no GPU implementation's passes or measurement of "
                      "this compressor is cited (docs/compression.md, \"Compute cost\")";
        return WEFT_OK;
    }
}

/* The GPU side of weft_compress_cost_get: the roofline at the parameters
 * bench_compress ran, per fp32 input byte. */
static weft_err cost_gpu(weft_comp_kind kind, double hbm, weft_compress_cost *out, weft_diag *d)
{
    weft_compressor c = {kind, 0, 15, 10000};
    weft_compress_traffic tr;
    weft_err e = weft_compress_traffic_get(&c, 4, &tr, d);
    if (e)
        return e;
    out->source = tr.source;
    if (!tr.known)
        return WEFT_OK;
    double D = weft_comp_is_sparse(kind) ? c.density_ppm / 1e6 : 0;
    out->roofline = true;
    out->compress_s_per_b = tr.compress_b / 4 / hbm;
    out->decompress_s_per_b = (tr.decompress_b + D * tr.scatter_b) / 4 / hbm;
    return WEFT_OK;
}

weft_err weft_compress_cost_get(weft_comp_kind kind, const char *device, weft_compress_cost *out,
                                weft_diag *d)
{
    static const char *const devices[] = {"volta", "ampere", "hopper", "blackwell", "cpu"};
    if ((unsigned)kind >= WEFT__COMP_COUNT)
        return weft_diag_set(d, WEFT_EINVAL, "unknown compressor kind %d", (int)kind);
    bool known = false;
    for (size_t i = 0; i < sizeof devices / sizeof *devices; i++)
        known = known || strcmp(device, devices[i]) == 0;
    if (!known)
        return weft_diag_set(d, WEFT_EINVAL,
                             "unknown device '%s' (volta, ampere, hopper, blackwell or cpu)",
                             device);
    memset(out, 0, sizeof *out);
    double hbm = weft_gpu_arch_hbm_bw(device);
    if (hbm > 0)
        return cost_gpu(kind, hbm, out, d);
    /* On "cpu": bench_compress (bench/compress.c at commit e7b484a, one
     * thread, 64 MiB fp32 gradient, best of 5) on the AMD EPYC of weft's
     * build machine, in GB/s of fp32 input: int8 quantize (per tensor)
     * 1.48, dequantize 7.28; topk:0.01 exact 0.63, its densify 31.02;
     * DGC's sampled threshold 5.37 (densify as topk); sign + EF 2.21, its
     * decode 1.07. The other compressors are not measured on the CPU. */
    static const struct {
        weft_comp_kind kind;
        double comp_gbps, decomp_gbps;
    } cpu[] = {
        {WEFT_COMP_INT8, 1.48, 7.28},
        {WEFT_COMP_TOPK, 0.63, 31.02},
        {WEFT_COMP_DGC, 5.37, 31.02},
        {WEFT_COMP_SIGN, 2.21, 1.07},
    };
    for (size_t i = 0; strcmp(device, "cpu") == 0 && i < sizeof cpu / sizeof *cpu; i++)
        if (cpu[i].kind == kind) {
            out->measured = true;
            out->compress_s_per_b = 1 / (cpu[i].comp_gbps * 1e9);
            out->decompress_s_per_b = 1 / (cpu[i].decomp_gbps * 1e9);
            out->source = "measured: bench_compress (bench/compress.c, commit e7b484a), one "
                          "thread of an AMD EPYC, fp32 input; docs/compression.md, \"Compute "
                          "cost\"";
            return WEFT_OK;
        }
    out->measured = false;
    out->source = "not measured: weft's bench_compress has no CPU kernel for it; "
                  "docs/compression.md, \"Compute cost\"";
    return WEFT_OK;
}

/* The GPU side of weft_compute_rates_get (compute_rates.c). */
weft_err weft__compute_rates_gpu(const weft_compressor *c, uint32_t elem_bytes, const char *device,
                                 double hbm, weft_compute_rates *out, weft_diag *d)
{
    if (weft_comp_is_sparse(c->kind))
        return weft_diag_set(d, WEFT_EUNSUPPORTED,
                             "no GPU rate for the %s plans' hash, aggregate and pack kernels is "
                             "cited in weft (docs/compression.md, \"Compute cost\"); on %s only "
                             "the quantizers (int8, fp8, qsgd, sign) have the roofline model",
                             weft_comp_kind_name(c->kind), device);
    weft_compress_traffic tr;
    weft_err e = weft_compress_traffic_get(c, elem_bytes, &tr, d);
    if (e)
        return e;
    if (!tr.known)
        return weft_diag_set(d, WEFT_EUNSUPPORTED,
                             "the compute of %s on %s is not measured (docs/compression.md, "
                             "\"Compute cost\")",
                             weft_comp_kind_name(c->kind), device);
    double b = elem_bytes;
    out->s_per_b[WEFT_COMPUTE_COMPRESS] = tr.compress_b / b / hbm;
    out->s_per_b[WEFT_COMPUTE_DECOMPRESS] = tr.decompress_b / b / hbm;
    /* The owner's sum: read the sum and the addend, write the sum. */
    out->s_per_b[WEFT_COMPUTE_AGGREGATE] = 3 / hbm;
    out->source = "model: roofline, the kernels' HBM bytes at the GPU's HBM bandwidth "
                  "(docs/compression.md, \"Compute cost\"), not measured";
    return WEFT_OK;
}
