/* Top-k and int8 compressors with error feedback on CPU buffers
 * (weft/comm_sparse.h). Plain C loops: bench/compress.c measures kernels
 * of the same shape (docs/compression.md, "Compute cost"). */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "base/select.h"
#include "weft/comm_sparse.h"

weft_err weft_ef_init(weft_ef *ef, size_t n)
{
    float *r = weft__calloc(n ? n : 1, sizeof *r);
    if (!r)
        return WEFT_ENOMEM;
    ef->residual = r;
    ef->n = n;
    return WEFT_OK;
}

void weft_ef_fini(weft_ef *ef)
{
    if (!ef)
        return;
    weft__free(ef->residual);
    ef->residual = NULL;
    ef->n = 0;
}

static weft_err check_ef(const weft_ef *ef, size_t n, const char *what, weft_diag *d)
{
    if (ef && ef->n != n)
        return weft_diag_set(d, WEFT_EINVAL, "%s: a residual of %zu elements for a tensor of %zu",
                             what, ef->n, n);
    return WEFT_OK;
}

/* |x| as an order key: NaN above every number. */
static float mag(float x)
{
    return isnan(x) ? INFINITY : fabsf(x);
}

weft_err weft_topk_compress(const float *g, size_t n, size_t k, weft_ef *ef, uint32_t *indices,
                            float *values, weft_diag *d)
{
    weft_err e = check_ef(ef, n, "top-k", d);
    if (e)
        return e;
    if (n > UINT32_MAX)
        return weft_diag_set(d, WEFT_EINVAL, "top-k: %zu elements; 32-bit indices take < 2^32", n);
    if (k > n)
        return weft_diag_set(d, WEFT_EINVAL, "top-k: k = %zu of %zu elements", k, n);
    float *x = ef ? ef->residual : NULL;
    float *m = weft__malloc((n ? n : 1) * sizeof *m);
    float *own = NULL;
    if (!m)
        return weft_diag_code(d, WEFT_ENOMEM);
    if (!x) {
        if (!(own = weft__malloc((n ? n : 1) * sizeof *own))) {
            weft__free(m);
            return weft_diag_code(d, WEFT_ENOMEM);
        }
        memset(own, 0, n * sizeof *own);
        x = own;
    }
    for (size_t i = 0; i < n; i++) {
        x[i] += g[i];
        m[i] = mag(x[i]);
    }
    if (k) {
        float thr = weft__kth_largest(m, n, k);
        /* Above the threshold, every one; at it, the lowest indices. */
        size_t above = 0;
        for (size_t i = 0; i < n; i++)
            above += mag(x[i]) > thr;
        size_t ties = k - above, o = 0;
        for (size_t i = 0; i < n && o < k; i++) {
            float a = mag(x[i]);
            if (a > thr || (a == thr && ties && ties--)) {
                indices[o] = (uint32_t)i;
                values[o++] = x[i];
                x[i] = 0;
            }
        }
    }
    weft__free(own);
    weft__free(m);
    return WEFT_OK;
}

size_t weft_int8_scales(size_t n, size_t block)
{
    if (n == 0)
        return 0;
    return block == 0 ? 1 : (n + block - 1) / block;
}

weft_err weft_int8_compress(const float *g, size_t n, size_t block, weft_ef *ef, int8_t *q,
                            float *scales, weft_diag *d)
{
    weft_err e = check_ef(ef, n, "int8", d);
    if (e)
        return e;
    size_t bl = block ? block : n;
    for (size_t b0 = 0, s = 0; b0 < n; b0 += bl, s++) {
        size_t b1 = n - b0 < bl ? n : b0 + bl;
        float mx = 0;
        for (size_t i = b0; i < b1; i++) {
            float x = g[i] + (ef ? ef->residual[i] : 0.0f);
            float a = fabsf(x);
            mx = a > mx ? a : mx;
        }
        float sc = mx > 0 ? mx / 127.0f : 1.0f;
        double inv = 1.0 / (double)sc;
        scales[s] = sc;
        for (size_t i = b0; i < b1; i++) {
            float x = g[i] + (ef ? ef->residual[i] : 0.0f);
            /* Round to nearest even: adding and taking away 1.5 x 2^52
             * leaves the integer part (|x inv| <= 127 (1 + 2^-23)) in
             * the default rounding mode, without a libm call. */
            double r = ((double)x * inv + 0x1.8p52) - 0x1.8p52;
            r = r > 127 ? 127 : r >= -127 ? r : -127; /* NaN: -127, never UB */
            q[i] = (int8_t)r;
            if (ef)
                ef->residual[i] = x - sc * (float)q[i];
        }
    }
    return WEFT_OK;
}

void weft_int8_decompress(const int8_t *q, const float *scales, size_t n, size_t block, float *out)
{
    size_t bl = block ? block : n;
    for (size_t b0 = 0, s = 0; b0 < n; b0 += bl, s++) {
        size_t b1 = n - b0 < bl ? n : b0 + bl;
        float sc = scales[s];
        for (size_t i = b0; i < b1; i++)
            out[i] = sc * (float)q[i];
    }
}
