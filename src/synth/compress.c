/* Compressors as data (weft/compress.h): spellings, exact output bytes and
 * the sparse tensors of N ranks. Sources of every formula are in
 * docs/compression.md; the comments here give the reasons. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "weft/compress.h"

static const char *const names[WEFT__COMP_COUNT] = {
    "none", "fp8", "int8", "qsgd", "sign", "topk", "dgc", "randk", "powersgd", "hash",
};

const char *weft_comp_kind_name(weft_comp_kind k)
{
    return (unsigned)k < WEFT__COMP_COUNT ? names[k] : "?";
}

bool weft_comp_is_sparse(weft_comp_kind k)
{
    return k == WEFT_COMP_TOPK || k == WEFT_COMP_DGC || k == WEFT_COMP_RANDK || k == WEFT_COMP_HASH;
}

weft_err weft_density_parse(const char *text, uint32_t *ppm, weft_diag *d)
{
    /* Exact decimal: digits before and after the point, scaled to ppm. */
    size_t len = strlen(text);
    bool pct = len > 0 && text[len - 1] == '%';
    size_t n = pct ? len - 1 : len;
    uint64_t whole = 0, frac = 0;
    unsigned places = 0;
    bool point = false, digits = false;
    for (size_t i = 0; i < n; i++) {
        char c = text[i];
        if (c == '.' && !point) {
            point = true;
            continue;
        }
        if (c < '0' || c > '9' || whole > 1000 || places >= 6)
            goto bad;
        digits = true;
        if (point) {
            frac = frac * 10 + (uint64_t)(c - '0');
            places++;
        } else {
            whole = whole * 10 + (uint64_t)(c - '0');
        }
    }
    if (!digits)
        goto bad;
    /* value = whole + frac / 10^places, in units of 10^-6 (10^-4 with %). */
    unsigned scale_places = pct ? 4 : 6;
    if (places > scale_places)
        goto bad;
    uint64_t v = whole;
    for (unsigned i = 0; i < scale_places; i++)
        v *= 10;
    uint64_t f = frac;
    for (unsigned i = places; i < scale_places; i++)
        f *= 10;
    v += f;
    if (v == 0 || v > WEFT_PPM)
        goto bad;
    *ppm = (uint32_t)v;
    return WEFT_OK;
bad:
    return weft_diag_set(d, WEFT_EINVAL,
                         "density '%s': expected a fraction in (0, 1] with at most 6 decimal "
                         "places (0.01) or a percentage with at most 4 (1%%)",
                         text);
}

/* A positive uint32 parameter after the colon. */
static bool parse_param(const char *s, uint32_t *out)
{
    if (!*s)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > UINT32_MAX)
            return false;
    }
    *out = (uint32_t)v;
    return v > 0;
}

weft_err weft_compressor_parse(const char *text, weft_compressor *out, weft_diag *d)
{
    weft_compressor c;
    memset(&c, 0, sizeof c);
    const char *colon = strchr(text, ':');
    size_t klen = colon ? (size_t)(colon - text) : strlen(text);
    const char *arg = colon ? colon + 1 : NULL;
    int kind = -1;
    for (int k = 0; k < WEFT__COMP_COUNT; k++)
        if (strlen(names[k]) == klen && strncmp(text, names[k], klen) == 0)
            kind = k;
    if (kind < 0)
        return weft_diag_set(d, WEFT_EINVAL,
                             "unknown compressor '%s' (none, fp8[:B], int8[:B], qsgd:S, sign, "
                             "topk:D, dgc:D, randk:D, hash:D, powersgd:R)",
                             text);
    c.kind = (weft_comp_kind)kind;
    const char *name = names[kind];
    switch (c.kind) {
    case WEFT_COMP_NONE:
    case WEFT_COMP_SIGN:
        if (arg)
            return weft_diag_set(d, WEFT_EINVAL, "compressor '%s': %s takes no parameter", text,
                                 name);
        break;
    case WEFT_COMP_FP8:
    case WEFT_COMP_INT8:
        if (arg && !parse_param(arg, &c.block))
            return weft_diag_set(d, WEFT_EINVAL,
                                 "compressor '%s': %s:B takes the elements per scale, B >= 1", text,
                                 name);
        break;
    case WEFT_COMP_QSGD:
    case WEFT_COMP_POWERSGD:
        if (!arg || !parse_param(arg, &c.param))
            return weft_diag_set(d, WEFT_EINVAL, "compressor '%s': %s takes its %s, %s:%s >= 1",
                                 text, name, c.kind == WEFT_COMP_QSGD ? "levels" : "rank", name,
                                 c.kind == WEFT_COMP_QSGD ? "S" : "R");
        break;
    default: /* the sparse schemes */
        if (!arg)
            return weft_diag_set(d, WEFT_EINVAL, "compressor '%s': %s takes a density, %s:D", text,
                                 name, name);
        if (weft_density_parse(arg, &c.density_ppm, d))
            return WEFT_EINVAL;
        break;
    }
    *out = c;
    return WEFT_OK;
}

/* ppm as the shortest decimal fraction ("0.01", "1"). */
static void format_ppm(uint32_t ppm, char *buf, size_t cap)
{
    if (ppm == WEFT_PPM) {
        snprintf(buf, cap, "1");
        return;
    }
    char digits[8];
    snprintf(digits, sizeof digits, "%06" PRIu32, ppm);
    size_t n = 6;
    while (n > 1 && digits[n - 1] == '0')
        n--;
    snprintf(buf, cap, "0.%.*s", (int)n, digits);
}

void weft_compressor_format(const weft_compressor *c, char *buf, size_t cap)
{
    const char *name = weft_comp_kind_name(c->kind);
    char num[16];
    if (weft_comp_is_sparse(c->kind)) {
        format_ppm(c->density_ppm, num, sizeof num);
        snprintf(buf, cap, "%s:%s", name, num);
    } else if ((c->kind == WEFT_COMP_FP8 || c->kind == WEFT_COMP_INT8) && c->block) {
        snprintf(buf, cap, "%s:%" PRIu32, name, c->block);
    } else if (c->kind == WEFT_COMP_QSGD || c->kind == WEFT_COMP_POWERSGD) {
        snprintf(buf, cap, "%s:%" PRIu32, name, c->param);
    } else {
        snprintf(buf, cap, "%s", name);
    }
}

uint64_t weft_density_count(uint64_t elems, uint32_t ppm)
{
    /* ceil(n ppm / 10^6) without a 128-bit product: n = q 10^6 + r. */
    uint64_t q = elems / WEFT_PPM, r = elems % WEFT_PPM;
    uint64_t rem = r * ppm; /* < 10^12 */
    return q * ppm + rem / WEFT_PPM + (rem % WEFT_PPM != 0);
}

static bool mul_ok(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a && b > UINT64_MAX / a)
        return false;
    *out = a * b;
    return true;
}

static bool add_ok(uint64_t a, uint64_t b, uint64_t *out)
{
    if (b > UINT64_MAX - a)
        return false;
    *out = a + b;
    return true;
}

/* Bits to write a level in 0 .. s: ceil(log2(s + 1)). */
static unsigned level_bits(uint32_t s)
{
    unsigned b = 0;
    while (b < 33 && ((uint64_t)1 << b) < (uint64_t)s + 1)
        b++;
    return b;
}

weft_err weft_compress_bytes(const weft_compressor *c, const weft_tensor_shape *s, uint64_t *bytes,
                             weft_diag *d)
{
    uint64_t n = s->elems, b = s->elem_bytes, out = 0, t;
    if (b == 0)
        return weft_diag_set(d, WEFT_EINVAL, "a tensor's elements have at least 1 byte");
    if ((unsigned)c->kind >= WEFT__COMP_COUNT)
        return weft_diag_set(d, WEFT_EINVAL, "unknown compressor kind %d", (int)c->kind);
    if (weft_comp_is_sparse(c->kind) && (c->density_ppm == 0 || c->density_ppm > WEFT_PPM))
        return weft_diag_set(d, WEFT_EINVAL, "%s: density %" PRIu32 " ppm is not in (0, 10^6]",
                             names[c->kind], c->density_ppm);
    if ((c->kind == WEFT_COMP_QSGD || c->kind == WEFT_COMP_POWERSGD) && c->param == 0)
        return weft_diag_set(d, WEFT_EINVAL, "%s needs a parameter of at least 1", names[c->kind]);
    if (n == 0) {
        *bytes = 0;
        return WEFT_OK;
    }
    uint64_t k = weft_density_count(n, c->density_ppm);
    bool ok = true;
    switch (c->kind) {
    case WEFT_COMP_NONE:
        ok = mul_ok(n, b, &out);
        break;
    case WEFT_COMP_FP8:
    case WEFT_COMP_INT8:
        /* One byte per element, one fp32 scale per tensor or per block. */
        ok = add_ok(n, 4 * (c->block ? n / c->block + (n % c->block != 0) : 1), &out);
        break;
    case WEFT_COMP_QSGD: {
        /* Fixed-width: a sign bit and ceil(log2(s+1)) level bits per
         * element, then the fp32 norm. */
        uint64_t bits;
        ok = mul_ok(n, 1 + level_bits(c->param), &bits);
        out = bits / 8 + (bits % 8 != 0) + 4;
        break;
    }
    case WEFT_COMP_SIGN:
        out = n / 8 + (n % 8 != 0) + 4;
        break;
    case WEFT_COMP_TOPK:
    case WEFT_COMP_DGC:
    case WEFT_COMP_HASH:
        ok = mul_ok(k, 4 + b, &out);
        break;
    case WEFT_COMP_RANDK:
        ok = mul_ok(k, b, &t) && add_ok(t, 8, &out);
        break;
    case WEFT_COMP_POWERSGD: {
        uint64_t rows = s->rows ? s->rows : n, cols = s->rows ? s->cols : 1, rc;
        if (!mul_ok(rows, cols, &rc) || rc != n)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "powersgd: a %" PRIu64 " x %" PRIu64 " matrix is not %" PRIu64
                                 " elements",
                                 rows, cols, n);
        ok = add_ok(rows, cols, &t) && mul_ok(t, c->param, &t) && mul_ok(t, b, &out);
        break;
    }
    default:
        break;
    }
    if (!ok)
        return weft_diag_set(d, WEFT_EOVERFLOW,
                             "%s of %" PRIu64 " elements: more than 2^64-1 bytes", names[c->kind],
                             n);
    *bytes = out;
    return WEFT_OK;
}

/* Largest-remainder split of `total` over n parts with weights w (sum W):
 * part j gets floor(total w_j / W), and the leftover units go one each to
 * the parts of the largest remainders, ties to the lower part. */
static void split(uint64_t total, const uint64_t *w, uint32_t n, uint64_t *part, uint64_t *rem)
{
    unsigned __int128 W = 0;
    for (uint32_t j = 0; j < n; j++)
        W += w[j];
    uint64_t given = 0;
    for (uint32_t j = 0; j < n; j++) {
        unsigned __int128 x = (unsigned __int128)total * w[j];
        part[j] = (uint64_t)(x / W);
        rem[j] = (uint64_t)(x % W);
        given += part[j];
    }
    for (uint64_t left = total - given; left > 0; left--) {
        uint32_t best = 0;
        for (uint32_t j = 1; j < n; j++)
            if (rem[j] > rem[best])
                best = j;
        part[best]++;
        rem[best] = 0;
    }
}

/* Zipf weight 1/(j+1)^S in fixed point: 2^40 / (j+1)^S by
 * exp(-S ln(j+1)) in double, rounded once; equal weights when S is 0. */
static uint64_t zipf_weight(uint32_t j, uint32_t milli)
{
    if (milli == 0)
        return 1;
    double w = 1.0;
    double base = 1.0 / (double)(j + 1);
    /* (j+1)^-S as base^(S): integer part by multiplication, the rest by
     * repeated square roots of base (deterministic IEEE operations only). */
    uint32_t whole = milli / 1000, frac = milli % 1000;
    for (uint32_t i = 0; i < whole; i++)
        w *= base;
    double root = base;
    /* frac/1000 in binary, 20 bits: sqrt halves the exponent each time. */
    uint64_t f = (uint64_t)frac << 20;
    f /= 1000;
    for (int bit = 19; bit >= 0; bit--) {
        root = __builtin_sqrt(root);
        if (f & ((uint64_t)1 << bit))
            w *= root;
    }
    double x = w * (double)((uint64_t)1 << 40);
    return x < 1 ? 1 : (uint64_t)(x + 0.5);
}

weft_err weft_sparse_part_get(const weft_sparse_spec *s, uint32_t ranks, uint32_t j,
                              weft_sparse_part_counts *out, weft_diag *d)
{
    if (ranks == 0 || j >= ranks)
        return weft_diag_set(d, WEFT_EINVAL, "part %" PRIu32 " of %" PRIu32 " ranks", j, ranks);
    if (s->elem_bytes == 0 || s->density_ppm == 0 || s->density_ppm > WEFT_PPM)
        return weft_diag_set(d, WEFT_EINVAL,
                             "a sparse tensor needs elements of >= 1 byte and a density in "
                             "(0, 10^6] ppm");
    uint64_t *w = weft__malloc(4 * ((size_t)ranks + 1) * sizeof *w);
    if (!w)
        return weft_diag_code(d, WEFT_ENOMEM);
    uint64_t *elems = w + ranks, *nnz = elems + ranks, *rem = nnz + ranks;
    uint64_t n = s->elems, k = weft_density_count(n, s->density_ppm);
    for (uint32_t i = 0; i < ranks; i++)
        w[i] = 1;
    split(n, w, ranks, elems, rem);
    if (s->part == WEFT_SPARSE_RANGE)
        for (uint32_t i = 0; i < ranks; i++)
            w[i] = zipf_weight(i, s->zipf_milli);
    split(k, w, ranks, nnz, rem);
    out->elems = elems[j];
    out->nnz = nnz[j] < elems[j] ? nnz[j] : elems[j];
    weft__free(w);
    /* The union of `ranks` independent uniform supports of nnz in elems. */
    if (out->elems == 0) {
        out->uni = 0;
        return WEFT_OK;
    }
    double miss = 1.0 - (double)out->nnz / (double)out->elems, all = 1.0;
    for (uint32_t i = 0; i < ranks; i++)
        all *= miss;
    double u = (double)out->elems * (1.0 - all);
    uint64_t uni = (uint64_t)u;
    if ((double)uni < u)
        uni++;
    out->uni = uni > out->elems ? out->elems : uni < out->nnz ? out->nnz : uni;
    return WEFT_OK;
}
