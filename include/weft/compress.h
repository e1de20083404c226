/* weft compression: gradient compressors as data, and the shapes of sparse
 * tensors that compressed and sparse collectives move.
 *
 * A compressor here is no kernel: it is the exact size of what it puts on
 * the wire for a tensor (values, indices, scales, factors), as a function
 * of the tensor's elements, its element bytes and the scheme's parameter,
 * and what is known of its compute cost. The synth module builds plans
 * from these sizes (weft/synth.h, "Compressed and sparse collectives":
 * sparse-ag, quant-2shot, sparse-hash, sparse-range), so bound, plan,
 * verify and sim see their bytes. docs/compression.md gives every formula
 * with its source.
 *
 * Densities are exact: parts per million (a uint32_t, 0 .. 1,000,000), so
 * k = ceil(n x ppm / 10^6) is computed in integers and "0.01" means 10,000
 * ppm, exactly. Compute costs: weft's bench_compress measured int8, top-k,
 * DGC and sign on the CPU (weft_compress_cost); on a GPU a compressor's
 * kernels are costed by the bytes they read and write at the GPU's HBM
 * bandwidth (weft_compress_traffic_get: a memory roofline, labelled
 * "model: roofline", never "measured"), checked against published kernel
 * measurements (docs/compression.md, "Compute cost"). The compressed and sparse plans
 * place their compute as compute ops (weft/plan.h, weft_compute), which
 * the simulator charges at weft_compute_rates_get's rates when asked
 * (weft_sim_opts.compute_s_per_b; weft sim --compute cpu). weft step's gradient compression charges
 * them where its plan runs them (docs/step.md, "Gradient compression").
 *
 * Contract: owned by the synth module (src/synth/compress.c); plain data.
 */
#ifndef WEFT_COMPRESS_H
#define WEFT_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/err.h"
#include "weft/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_comp_kind {
    WEFT_COMP_NONE = 0, /* dense, the tensor's own element bytes */
    WEFT_COMP_FP8,      /* 1 byte per element + fp32 scales (per tensor or per block) */
    WEFT_COMP_INT8,     /* 1 byte per element + fp32 scales (per tensor or per block) */
    WEFT_COMP_QSGD,     /* s levels: sign + level bits per element + one fp32 norm */
    WEFT_COMP_SIGN,     /* 1 bit per element + one fp32 scale (error feedback) */
    WEFT_COMP_TOPK,     /* k values + k 32-bit indices */
    WEFT_COMP_DGC,      /* as top-k on the wire (the selection differs) */
    WEFT_COMP_RANDK,    /* k values + the 64-bit seed that draws the indices */
    WEFT_COMP_POWERSGD, /* rank r: P (m x r) and Q (n x r) in the element type */
    WEFT_COMP_HASH,     /* DRAGONN's hashed selection: k values + k 32-bit indices */
    WEFT__COMP_COUNT
} weft_comp_kind;

#define WEFT_PPM 1000000u

typedef struct weft_compressor {
    weft_comp_kind kind;
    /* fp8, int8: elements per fp32 scale; 0 is one scale per tensor. */
    uint32_t block;
    /* qsgd: s >= 1 levels; powersgd: rank r >= 1. */
    uint32_t param;
    /* topk, dgc, randk, hash: the fraction of elements kept, ppm (1 .. 10^6). */
    uint32_t density_ppm;
} weft_compressor;

/* "none", "fp8", "int8", "qsgd", "sign", "topk", "dgc", "randk",
 * "powersgd", "hash" ("?" when invalid). */
WEFT_API const char *weft_comp_kind_name(weft_comp_kind k);

/* True for the schemes whose output is (index, value) pairs or values at
 * chosen indices: topk, dgc, randk, hash. */
WEFT_API bool weft_comp_is_sparse(weft_comp_kind k);

/* Parses a compressor spelling: "none"; "fp8" or "int8" (one scale per
 * tensor), "fp8:B" or "int8:B" (one scale per B elements); "qsgd:S";
 * "sign"; "topk:D", "dgc:D", "randk:D", "hash:D" with D a density in
 * (0, 1] written as a decimal of at most 6 places ("0.01") or a percentage
 * ("1%"); "powersgd:R". WEFT_EINVAL with d naming the spelling and what
 * is wrong ("compressor 'qsgd': qsgd takes its levels, qsgd:S"). */
WEFT_API weft_err weft_compressor_parse(const char *text, weft_compressor *out, weft_diag *d);

/* Writes the canonical spelling of c ("topk:0.01", "int8:128") into buf
 * (cap bytes, truncated, always terminated). */
WEFT_API void weft_compressor_format(const weft_compressor *c, char *buf, size_t cap);

/* Parses a density "0.01" or "1%" into ppm: at most 6 decimal places (4
 * with %), in (0, 1]. WEFT_EINVAL otherwise, d naming the text. */
WEFT_API weft_err weft_density_parse(const char *text, uint32_t *ppm, weft_diag *d);

/* A dense tensor: elems elements of elem_bytes each (2: fp16, bf16; 4:
 * fp32); PowerSGD reads it as a rows x cols matrix (rows x cols == elems;
 * rows 0 means elems x 1). */
typedef struct weft_tensor_shape {
    uint64_t elems;
    uint32_t elem_bytes;
    uint64_t rows, cols;
} weft_tensor_shape;

/* k = ceil(elems x ppm / 10^6): the elements a sparse scheme keeps (0 for
 * an empty tensor). */
WEFT_API uint64_t weft_density_count(uint64_t elems, uint32_t ppm);

/* The exact bytes c writes for tensor s (docs/compression.md, "Output
 * bytes"), with n = elems, b = elem_bytes, k = weft_density_count:
 *   none      n b
 *   fp8/int8  n + 4                     (per tensor)
 *             n + 4 ceil(n / B)         (per block of B)
 *   qsgd:S    ceil(n (1 + ceil(log2(S + 1))) / 8) + 4
 *   sign      ceil(n / 8) + 4
 *   topk, dgc, hash   k (4 + b)
 *   randk     k b + 8
 *   powersgd:R   (rows + cols) R b
 * An empty tensor (n = 0) writes 0 bytes. WEFT_EINVAL for an invalid
 * compressor or shape (elem_bytes 0, rows x cols != elems), WEFT_EOVERFLOW
 * beyond 2^64 - 1 bytes. */
WEFT_API weft_err weft_compress_bytes(const weft_compressor *c, const weft_tensor_shape *s,
                                      uint64_t *bytes, weft_diag *d);

/* The HBM bytes a compressor's GPU kernels read and write, per element
 * of a tensor of elem_bytes elements (docs/compression.md, "Compute cost",
 * gives each kernel and its source). A memory roofline: on a GPU of HBM
 * bandwidth W a kernel takes at least its bytes / W, and these kernels do
 * a few operations a byte, so the bound is what they approach (the
 * published measurements reach 0.79-0.87 of it; the docs give the
 * ratios). With n elements and k = weft_density_count(n, density) kept:
 *   compress    n x compress_b
 *   decompress  n x decompress_b + k x scatter_b
 * (a sparsifier's decompress zeroes the dense output, n b, and scatters
 * its k pairs). Per element, b = elem_bytes, D = density (ppm / 10^6):
 *   int8, fp8 (one scale)  2b + 1, 1 + b         a max pass, then quantize
 *   int8:B, fp8:B          b + 1 + 4/B, 1 + 4/B + b   one pass
 *   qsgd:S (w bits)        2b + w/8, w/8 + b     a norm pass, then quantize
 *   sign                   2b + 1/8, 1/8 + b     a mean |x| pass, then pack
 *   topk:D   3b + b^2 + D (2b + 48); b; 8 + b + 32   GRACE's topk on
 *            PyTorch's multi-block radix select (b passes of 8 bits)
 *   dgc:D    3b + 4 + 0.01 (40 + 4b + b^2) + D (48 + b); b; 8 + b + 32
 *   randk:D  D (32 + b); b; b + 32   indices drawn from the seed
 * where 32 is the sector a random access moves (CUDA C++ Best Practices
 * Guide). Constant-size terms (a tensor's one scale or norm) are left
 * out. known is false, and the fields 0, for powersgd and hash: no GPU
 * implementation's passes or measurement are cited. WEFT_EINVAL for no
 * or an invalid compressor or elem_bytes outside 1 .. 16. */
typedef struct weft_compress_traffic {
    bool known;
    double compress_b;   /* bytes per input element */
    double decompress_b; /* bytes per output element */
    double scatter_b;    /* sparsifiers: bytes per kept element scattered */
    const char *source;  /* the kernels and their citation, or why unknown */
} weft_compress_traffic;

WEFT_API weft_err weft_compress_traffic_get(const weft_compressor *c, uint32_t elem_bytes,
                                            weft_compress_traffic *out, weft_diag *d);

/* The HBM bandwidth (bytes/s) weft takes for a GPU generation as the
 * presets spell it: volta 900e9 (V100 SXM2), ampere 2039e9 (A100 SXM4
 * 80GB), hopper 3350e9 (H100 SXM5), blackwell 7700e9 (B200), the vendors'
 * data sheets (docs/step.md, "GPUs"); 0 for any other name. */
WEFT_API double weft_gpu_arch_hbm_bw(const char *arch);

/* What is known of a compressor's compute on a GPU (arch name as the
 * presets spell it: "volta", "ampere", "hopper", "blackwell") or "cpu". */
typedef struct weft_compress_cost {
    bool measured;           /* true: measured (cpu: weft's bench_compress) */
    bool roofline;           /* true: the GPU memory roofline model, not measured */
    double compress_s_per_b; /* seconds per input byte (when measured or roofline) */
    double decompress_s_per_b;
    const char *source; /* "measured: ...", "model: roofline, ..." or "not measured: why" */
} weft_compress_cost;

/* Measured on "cpu" for int8, topk, dgc and sign (weft's bench_compress,
 * one thread, per byte of fp32 input; the source names the run). On a
 * GPU, the roofline model: weft_compress_traffic_get's bytes for fp32
 * input (elem_bytes 4) at weft_gpu_arch_hbm_bw, for the parameters
 * bench_compress ran (int8 and fp8 one scale a tensor, qsgd:15, topk, dgc
 * and randk at density 0.01; a sparsifier's decompress is its fill and
 * scatter of one tensor), per fp32 input byte. Every other (kind,
 * device), powersgd and hash on a GPU and all but those four on the CPU,
 * is "not measured". WEFT_EINVAL for an unknown kind or device. */
WEFT_API weft_err weft_compress_cost_get(weft_comp_kind kind, const char *device,
                                         weft_compress_cost *out, weft_diag *d);

/* The per-byte cost of each compute op (weft/plan.h, weft_compute) that
 * the plans of compressor c on elements of elem_bytes place
 * (docs/compression.md, "Compute in the plans"), on `device`: what
 * weft_sim_opts.compute_s_per_b takes, and where it comes from. On "cpu":
 * a sparse compressor (topk, dgc, randk, hash) gets the runtime sparse
 * all-reduce's kernels as weft's bench_sparse_kernels measured them
 * (hash: hash-partition and pack a rank's pairs; aggregate: an owner's
 * sums; compress: pack its union; fill: zero the dense output;
 * decompress: scatter pairs into it); a quantizer gets
 * weft_compress_cost_get's compress and decompress and the owner's dense
 * sum (bench_sparse_kernels), WEFT_EUNSUPPORTED where the compressor is
 * not measured. The kernels read fp32 values (as the runtime does), so
 * their cost is per element or pair: measured per fp32 byte (per 8-byte
 * pair), a rate is scaled to the plan's bytes, x 4 / elem_bytes per dense
 * byte and x 8 / (4 + elem_bytes) per pair byte. On a GPU (volta, ampere,
 * hopper, blackwell) a quantizer's ops get the roofline model at
 * weft_gpu_arch_hbm_bw, per byte of the op's elem_bytes elements:
 * compress compress_b / b, decompress decompress_b / b, aggregate 3 (read
 * the sum and the addend, write the sum); a sparsifier, powersgd and hash
 * are WEFT_EUNSUPPORTED there (the sparse plans' hash, aggregate and pack
 * kernels have no cited GPU implementation). WEFT_EINVAL for no compressor
 * or an unknown device. */
typedef struct weft_compute_rates {
    double s_per_b[WEFT__COMPUTE_COUNT]; /* 0 for a kind the plans do not place */
    const char *source;
} weft_compute_rates;

WEFT_API weft_err weft_compute_rates_get(const weft_compressor *c, uint32_t elem_bytes,
                                         const char *device, weft_compute_rates *out, weft_diag *d);

/* ---- Sparse tensors across ranks ----------------------------------------
 *
 * How a sparse collective sees its ranks' tensors: every rank holds a
 * tensor of n elements with k = weft_density_count(n, density) non-zeros.
 * The index space is cut into N parts, one per owning rank:
 *  - range partitioning: part j is the contiguous range of elements
 *    [j n / N, (j + 1) n / N); with skew zipf:S the non-zeros of every rank
 *    fall into range j in proportion to 1/(j + 1)^S (gradients of
 *    embeddings and of the last layers concentrate: Zen's observation), so
 *    the first owners receive most;
 *  - hash partitioning: an index's owner is a hash of the index, so every
 *    part holds n / N elements and k / N of each rank's non-zeros whatever
 *    the skew (Zen balances its hash this way).
 * Counts are split by largest remainders (ties to the lower part), capped
 * at the part's elements. Supports of different ranks are independent and
 * uniform within a part, so the union of N ranks' k_j non-zeros in a part
 * of n_j elements has ceil(n_j (1 - (1 - k_j / n_j)^N)) elements (the
 * power computed by N multiplications in IEEE double). */

typedef enum weft_sparse_part {
    WEFT_SPARSE_HASH = 0,
    WEFT_SPARSE_RANGE,
} weft_sparse_part;

typedef struct weft_sparse_spec {
    uint64_t elems;       /* n, the dense tensor's elements */
    uint32_t elem_bytes;  /* b */
    uint32_t density_ppm; /* of each rank's non-zeros */
    uint32_t zipf_milli;  /* skew over the ranges: S in thousandths; 0 uniform */
    weft_sparse_part part;
} weft_sparse_spec;

/* Part j (< ranks) under s: its elements, each rank's non-zeros in it and
 * the union of all ranks' non-zeros. WEFT_EINVAL for ranks 0, j >= ranks,
 * elem_bytes 0 or density above 10^6 ppm; WEFT_ENOMEM. */
typedef struct weft_sparse_part_counts {
    uint64_t elems, nnz, uni;
} weft_sparse_part_counts;

WEFT_API weft_err weft_sparse_part_get(const weft_sparse_spec *s, uint32_t ranks, uint32_t j,
                                       weft_sparse_part_counts *out, weft_diag *d);

/* The hash partition as the runtime applies it to real indices
 * (weft_allreduce_sparse, weft/comm_sparse.h): a fixed bijection pi of the
 * index space [0, n), and part j is the indices whose image pi(i) lies in
 * the j-th of `ranks` consecutive ranges of n / ranks elements, the first
 * n mod ranks one more, so every part holds exactly the elements
 * weft_sparse_part_get gives WEFT_SPARSE_HASH, and a skewed support (a
 * dense run of indices, a stride) is spread over the parts as a random
 * one would be. pi is a 4-round Feistel network on 2h bits (the least h
 * >= 1 with 4^h >= n) whose round function is splitmix64's finaliser
 * (Steele, Lea & Flood, "Fast Splittable Pseudorandom Number Generators",
 * OOPSLA 2014; constants of Vigna's splitmix64.c), walked along its cycle
 * until the image is below n (format-preserving encryption's cycle
 * walking: Black & Rogaway, "Ciphers with Arbitrary Finite Domains",
 * CT-RSA 2002), fewer than 4 steps on average since 4^h < 4n. It depends
 * on n and ranks only, so every rank computes the same owners. */
typedef struct weft_sparse_hash {
    uint64_t n;
    uint32_t ranks;
    uint32_t half_bits; /* h */
    uint64_t q, r;      /* n / ranks, n mod ranks */
} weft_sparse_hash;

/* WEFT_EINVAL for ranks 0. */
WEFT_API weft_err weft_sparse_hash_init(weft_sparse_hash *h, uint64_t n, uint32_t ranks,
                                        weft_diag *d);
/* pi(index), for index < n (index >= n gives index itself). */
WEFT_API uint64_t weft_sparse_hash_perm(const weft_sparse_hash *h, uint64_t index);
/* The inverse: the index whose image is p < n (p >= n gives p itself). */
WEFT_API uint64_t weft_sparse_hash_unperm(const weft_sparse_hash *h, uint64_t p);
/* The part (owning rank) of index < n. */
WEFT_API uint32_t weft_sparse_hash_owner(const weft_sparse_hash *h, uint64_t index);
/* The part holding image p < n (weft_sparse_hash_owner is this of
 * weft_sparse_hash_perm). */
WEFT_API uint32_t weft_sparse_hash_owner_of_image(const weft_sparse_hash *h, uint64_t p);
/* The first image of part j < ranks: parts hold images [start(j),
 * start(j + 1)). */
WEFT_API uint64_t weft_sparse_hash_start(const weft_sparse_hash *h, uint32_t j);

#ifdef __cplusplus
}
#endif

#endif
