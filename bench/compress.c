/* Compute cost of gradient compressors on this CPU (docs/compression.md,
 * "Compute cost").
 *
 *   bench_compress [--quick] [MiB]
 *
 * Times plain C, single-thread kernels of the compressors weft models
 * (weft/compress.h) on an fp32 gradient of MiB mebibytes (default 64, so
 * it comes from DRAM) and prints GB/s of input (fp32 bytes in / seconds):
 *
 *   int8:128 quantize    per block of 128: max |x|, scale = max / 127,
 *                        q = round(x / scale) (ZeRO++'s block
 *                        quantization, arXiv:2306.10209)
 *   int8 quantize        per tensor: one pass for max |x|, one to quantize
 *   int8:128 dequantize  x = q scale
 *   topk exact           k = n / 100 largest |x|: a copy of |x|, quickselect
 *                        for the k-th, a pass gathering (index, value)
 *   topk sampled         DGC's threshold (Lin et al., ICLR 2018): quickselect
 *                        on a 1 % strided sample, a pass gathering x >= it
 *   topk decode          densify: zero n, scatter the k pairs
 *   sign + EF            e += g; scale = mean |e|; bits = sign(e);
 *                        e -= scale sign(e) (Karimireddy et al., ICML 2019)
 *   sign decode          x = +-scale from the bits
 *
 * These are weft's own reference kernels (scalar C, what the compiler
 * vectorizes), not a tuned library: a floor for what a CPU does, and the
 * figures docs/compression.md quotes with this command. Each figure is
 * the best of several trials in this thread's CPU time (the machine is
 * shared). Inputs are a fixed pseudo-random sequence. Never fails on time.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/select.h"

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Keeps results alive so the compiler cannot drop a kernel. */
static volatile double sink;

static void fill(float *x, size_t n)
{
    uint64_t s = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        x[i] = (float)((double)(s >> 11) / 9007199254740992.0 - 0.5) * 1e-2f;
    }
}

enum { BLOCK = 128 };

/* Round to nearest, ties away from zero, in plain arithmetic (lrintf is a
 * libm call the compiler does not vectorize). |v| <= 127.5 here. */
static inline int8_t round8(float v)
{
    return (int8_t)(int)(v + (v >= 0 ? 0.5f : -0.5f));
}

static void quant_block(const float *x, size_t n, int8_t *q, float *scales)
{
    for (size_t b = 0; b * BLOCK < n; b++) {
        size_t lo = b * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
        float m = 0;
        for (size_t i = lo; i < hi; i++)
            m = fmaxf(m, fabsf(x[i]));
        float s = m > 0 ? m / 127.0f : 1.0f, inv = 1.0f / s;
        scales[b] = s;
        for (size_t i = lo; i < hi; i++)
            q[i] = round8(x[i] * inv);
    }
}

static void quant_tensor(const float *x, size_t n, int8_t *q, float *scales)
{
    float m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmaxf(m, fabsf(x[i]));
    float s = m > 0 ? m / 127.0f : 1.0f, inv = 1.0f / s;
    scales[0] = s;
    for (size_t i = 0; i < n; i++)
        q[i] = round8(x[i] * inv);
}

static void dequant_block(const int8_t *q, const float *scales, size_t n, float *x)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)q[i] * scales[i / BLOCK];
}

static size_t gather(const float *x, size_t n, float thr, size_t cap, uint32_t *idx, float *val)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < cap; i++)
        if (fabsf(x[i]) >= thr)
            idx[k] = (uint32_t)i, val[k] = x[i], k++;
    return k;
}

static size_t topk_exact(const float *x, size_t n, float *work, uint32_t *idx, float *val)
{
    size_t k = n / 100;
    for (size_t i = 0; i < n; i++)
        work[i] = fabsf(x[i]);
    return gather(x, n, weft__kth_largest(work, n, k), k, idx, val);
}

static size_t topk_sampled(const float *x, size_t n, float *work, uint32_t *idx, float *val)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i += 100)
        work[m++] = fabsf(x[i]);
    size_t km = m / 100 ? m / 100 : 1;
    return gather(x, n, weft__kth_largest(work, m, km), 2 * (n / 100), idx, val);
}

static void sign_ef(const float *g, size_t n, float *e, uint8_t *bits)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        e[i] += g[i];
        sum += fabsf(e[i]);
    }
    float s = (float)(sum / (double)n);
    for (size_t i = 0; i < n; i += 8) {
        uint8_t b = 0;
        for (size_t j = i; j < i + 8 && j < n; j++) {
            bool neg = e[j] < 0;
            b |= (uint8_t)(neg << (j - i));
            e[j] -= neg ? -s : s;
        }
        bits[i / 8] = b;
    }
}

/* Densify k (index, value) pairs into y (n elements). */
static void topk_decode(const uint32_t *idx, const float *val, size_t k, size_t n, float *y)
{
    memset(y, 0, n * sizeof *y);
    for (size_t i = 0; i < k; i++)
        y[idx[i]] = val[i];
}

static void sign_decode(const uint8_t *bits, float s, size_t n, float *y)
{
    size_t whole = n / 8 * 8;
    for (size_t i = 0; i < whole; i += 8) {
        unsigned b = bits[i / 8];
        for (unsigned j = 0; j < 8; j++)
            y[i + j] = (b >> j) & 1 ? -s : s;
    }
    for (size_t i = whole; i < n; i++)
        y[i] = (bits[i / 8] >> (i % 8)) & 1 ? -s : s;
}

int main(int argc, char **argv)
{
    int trials = 5;
    size_t mib = 64;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            trials = 2;
        else if (atoi(argv[i]) > 0 && atoi(argv[i]) <= 4096)
            mib = (size_t)atoi(argv[i]);
        else {
            fprintf(stderr, "usage: bench_compress [--quick] [MiB (1 .. 4096)]\n");
            return 2;
        }
    }
    size_t n = (mib << 20) / sizeof(float);
    float *x = malloc(n * sizeof *x), *work = malloc(n * sizeof *work), *e = calloc(n, sizeof *e),
          *val = malloc(n / 50 * sizeof *val + 4),
          *scales = malloc((n / BLOCK + 1) * sizeof *scales), *y = malloc(n * sizeof *y);
    int8_t *q = malloc(n);
    uint8_t *bits = malloc(n / 8 + 1);
    uint32_t *idx = malloc(n / 50 * sizeof *idx + 4);
    if (!x || !work || !e || !val || !scales || !y || !q || !bits || !idx) {
        fprintf(stderr, "bench_compress: out of memory\n");
        return 1;
    }
    fill(x, n);
    const char *names[] = {"int8:128 quantize", "int8 quantize",     "int8:128 dequantize",
                           "topk:0.01 exact",   "topk:0.01 sampled", "topk:0.01 decode",
                           "sign + EF",         "sign decode"};
    printf("fp32 gradient of %zu MiB, one thread, best of %d (GB/s of fp32 input)\n", mib, trials);
    for (int k = 0; k < 8; k++) {
        double best = 1e30;
        for (int t = 0; t < trials; t++) {
            double t0 = thread_cpu();
            switch (k) {
            case 0:
                quant_block(x, n, q, scales);
                sink += q[n - 1];
                break;
            case 1:
                quant_tensor(x, n, q, scales);
                sink += q[n - 1];
                break;
            case 2:
                dequant_block(q, scales, n, y);
                sink += y[n - 1];
                break;
            case 3:
                sink += (double)topk_exact(x, n, work, idx, val);
                break;
            case 4:
                sink += (double)topk_sampled(x, n, work, idx, val);
                break;
            case 5:
                topk_decode(idx, val, n / 100, n, y);
                sink += y[n - 1];
                break;
            case 6:
                sign_ef(x, n, e, bits);
                sink += bits[0];
                break;
            default:
                sign_decode(bits, 1e-3f, n, y);
                sink += y[n - 1];
                break;
            }
            double dt = thread_cpu() - t0;
            best = dt < best ? dt : best;
        }
        printf("  %-22s %8.2f GB/s\n", names[k], (double)(n * sizeof(float)) / best / 1e9);
    }
    free(x), free(work), free(e), free(val), free(scales), free(y), free(q), free(bits), free(idx);
    return 0;
}
