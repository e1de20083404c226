/* The GPU table and the GPU file format. See weft/work.h; docs/step.md
 * cites the data sheet of every row. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "weft/work.h"

#define T 1e12
#define GBS 1e9
#define GIB 1073741824.0
#define GIB 1073741824.0

/* Dense tensor peaks {bf16, fp16, fp8, fp32}; fp32 is the non-tensor
 * (vector) rate, which only the optimizer's memory-bound kernels could
 * use. mi250x is one GCD, the rank of the mi250 preset: half the OAM's
 * figures. The last braces are the measured maximum achievable matmul
 * FLOP/s {bf16, -, fp8}: the best torch.matmul shape found by
 * mamf-finder.py (stas00/ml-engineering compute/accelerator/README.md
 * @744d01e1, "Maximum Achievable Matmul FLOPS comparison table"; A100 SXM
 * for both A100s, one chip; "H200 is the same" as H100 in bf16). */
static const weft_gpu gpus[] = {
    {"a100-80g", {312 * T, 312 * T, 0, 19.5 * T}, 2039 * GBS, 80 * GIB, 108, {271.2 * T, 0, 0, 0}},
    {"a100-40g", {312 * T, 312 * T, 0, 19.5 * T}, 1555 * GBS, 40 * GIB, 108, {271.2 * T, 0, 0, 0}},
    {"h100-sxm",
     {989.4 * T, 989.4 * T, 1978.9 * T, 66.9 * T},
     3350 * GBS,
     80 * GIB,
     132,
     {794.5 * T, 0, 1402.6 * T, 0}},
    {"h200",
     {989.4 * T, 989.4 * T, 1978.9 * T, 66.9 * T},
     4800 * GBS,
     141 * GIB,
     132,
     {794.5 * T, 0, 1453.4 * T, 0}},
    {"b200",
     {2250 * T, 2250 * T, 4500 * T, 75 * T},
     7700 * GBS,
     180 * GIB,
     148,
     {1745.0 * T, 0, 3432.5 * T, 0}},
    {"mi250x", {191.5 * T, 191.5 * T, 0, 23.95 * T}, 1638.4 * GBS, 64 * GIB, 110, {0, 0, 0, 0}},
    {"mi300x",
     {1307.4 * T, 1307.4 * T, 2614.9 * T, 163.4 * T},
     5300 * GBS,
     192 * GIB,
     304,
     {668.4 * T, 0, 0, 0}},
};

double weft_gpu_ceiling(const weft_gpu *g, weft_prec p)
{
    if ((unsigned)p >= WEFT__PREC_COUNT || !(g->peak[p] > 0))
        p = WEFT_PREC_BF16;
    if (g->mamf[p] > 0)
        return g->mamf[p];
    double share = g->mamf[WEFT_PREC_BF16] > 0 && g->peak[WEFT_PREC_BF16] > 0
                       ? g->mamf[WEFT_PREC_BF16] / g->peak[WEFT_PREC_BF16]
                       : WEFT_WORK_MAMF_SHARE;
    return g->peak[p] * share;
}

size_t weft_gpu_count(void)
{
    return sizeof gpus / sizeof *gpus;
}

const weft_gpu *weft_gpu_at(size_t i)
{
    return i < weft_gpu_count() ? &gpus[i] : NULL;
}

bool weft_gpu_find(const char *name, weft_gpu *out)
{
    for (size_t i = 0; i < weft_gpu_count(); i++)
        if (!strcmp(gpus[i].name, name)) {
            *out = gpus[i];
            return true;
        }
    return false;
}

const char *weft_prec_name(weft_prec p)
{
    static const char *const names[] = {"bf16", "fp16", "fp8", "fp32"};
    return (unsigned)p < WEFT__PREC_COUNT ? names[p] : "?";
}

/* The keys of a GPU file, their unit and where they go. */
enum {
    K_NAME,
    K_BF16,
    K_FP16,
    K_FP8,
    K_FP32,
    K_HBM_BW,
    K_HBM,
    K_SMS,
    K_MAMF_BF16,
    K_MAMF_FP8,
    K_COUNT
};
static const char *const keys[K_COUNT] = {"name",   "bf16", "fp16", "fp8",       "fp32",
                                          "hbm_bw", "hbm",  "sms",  "mamf_bf16", "mamf_fp8"};

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

weft_err weft_gpu_parse(const char *text, size_t len, const char *fname, weft_gpu *out,
                        weft_diag *d)
{
    weft_gpu g;
    memset(&g, 0, sizeof g);
    bool seen[K_COUNT] = {false};
    unsigned kline[K_COUNT] = {0}, kcol[K_COUNT] = {0}; /* where each value was given */
    unsigned line = 0;
    size_t pos = 0;
    while (pos < len) {
        line++;
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        size_t s = pos, e = end;
        for (size_t k = s; k < e; k++)
            if (text[k] == '#') {
                e = k;
                break;
            }
        while (s < e && is_blank(text[s]))
            s++;
        while (e > s && is_blank(text[e - 1]))
            e--;
        pos = end + 1;
        if (s == e)
            continue;
        /* Column of the first character, 1-based. */
        size_t line_start = end;
        while (line_start > 0 && text[line_start - 1] != '\n')
            line_start--;
        unsigned c0 = (unsigned)(s - line_start) + 1;
        size_t eq = s;
        while (eq < e && text[eq] != '=')
            eq++;
        if (eq == e)
            return weft_diag_set(d, WEFT_EPARSE, "%s:%u:%u: expected 'key = value'", fname, line,
                                 c0);
        size_t ke = eq;
        while (ke > s && is_blank(text[ke - 1]))
            ke--;
        size_t vs = eq + 1;
        while (vs < e && is_blank(text[vs]))
            vs++;
        unsigned cv = (unsigned)(vs - line_start) + 1;
        int key = -1;
        for (int k = 0; k < K_COUNT; k++)
            if (strlen(keys[k]) == ke - s && !memcmp(keys[k], text + s, ke - s))
                key = k;
        if (key < 0)
            return weft_diag_set(d, WEFT_EPARSE,
                                 "%s:%u:%u: unknown key '%.*s' (keys: name, bf16, fp16, fp8, "
                                 "fp32, hbm_bw, hbm, sms, mamf_bf16, mamf_fp8)",
                                 fname, line, c0, (int)(ke - s), text + s);
        if (vs == e)
            return weft_diag_set(d, WEFT_EPARSE, "%s:%u:%u: %s needs a value", fname, line, cv,
                                 keys[key]);
        if (key == K_NAME) {
            if (e - vs > WEFT_WORK_NAME_MAX)
                return weft_diag_set(d, WEFT_EPARSE, "%s:%u:%u: name is longer than %d bytes",
                                     fname, line, cv, WEFT_WORK_NAME_MAX);
            memcpy(g.name, text + vs, e - vs);
            g.name[e - vs] = 0;
            seen[key] = true;
            continue;
        }
        char buf[64];
        if (e - vs >= sizeof buf)
            return weft_diag_set(d, WEFT_EPARSE, "%s:%u:%u: %s: value too long", fname, line, cv,
                                 keys[key]);
        memcpy(buf, text + vs, e - vs);
        buf[e - vs] = 0;
        char *stop;
        double v = strtod(buf, &stop);
        if (*stop || stop == buf || !isfinite(v) || v < 0 || (key != K_FP8 && v == 0))
            return weft_diag_set(d, WEFT_EPARSE, "%s:%u:%u: %s: '%s' is not a %s number", fname,
                                 line, cv, keys[key], buf,
                                 key == K_FP8 ? "non-negative" : "positive");
        switch (key) {
        case K_BF16:
            g.peak[WEFT_PREC_BF16] = v * T;
            break;
        case K_FP16:
            g.peak[WEFT_PREC_FP16] = v * T;
            break;
        case K_FP8:
            g.peak[WEFT_PREC_FP8] = v * T;
            break;
        case K_FP32:
            g.peak[WEFT_PREC_FP32] = v * T;
            break;
        case K_MAMF_BF16:
            g.mamf[WEFT_PREC_BF16] = v * T;
            break;
        case K_MAMF_FP8:
            g.mamf[WEFT_PREC_FP8] = v * T;
            break;
        case K_HBM_BW:
            g.hbm_bw = v * GBS;
            break;
        case K_HBM:
            g.hbm_bytes = v * GIB;
            break;
        case K_SMS:
            if (v != floor(v) || v > 100000)
                return weft_diag_set(d, WEFT_EPARSE, "%s:%u:%u: sms: '%s' is not a count", fname,
                                     line, cv, buf);
            g.sms = (uint32_t)v;
            break;
        default:
            break;
        }
        seen[key] = true;
        kline[key] = line;
        kcol[key] = cv;
    }
    static const int required[] = {K_NAME, K_BF16, K_HBM_BW, K_HBM};
    for (size_t i = 0; i < sizeof required / sizeof *required; i++)
        if (!seen[required[i]])
            return weft_diag_set(d, WEFT_EPARSE, "%s:%u:1: missing key '%s'", fname,
                                 line ? line : 1, keys[required[i]]);
    /* A measured ceiling above its peak is a typo (or a sparse figure). */
    static const int mk[] = {K_MAMF_BF16, K_MAMF_FP8};
    static const weft_prec mp[] = {WEFT_PREC_BF16, WEFT_PREC_FP8};
    for (int i = 0; i < 2; i++)
        if (seen[mk[i]] && g.mamf[mp[i]] > g.peak[mp[i]])
            return weft_diag_set(d, WEFT_EPARSE,
                                 "%s:%u:%u: %s: %g TFLOP/s is above the %s peak (%g)", fname,
                                 kline[mk[i]], kcol[mk[i]], keys[mk[i]], g.mamf[mp[i]] / T,
                                 weft_prec_name(mp[i]), g.peak[mp[i]] / T);
    if (!seen[K_FP16])
        g.peak[WEFT_PREC_FP16] = g.peak[WEFT_PREC_BF16];
    if (!seen[K_FP32])
        g.peak[WEFT_PREC_FP32] = g.peak[WEFT_PREC_BF16] / 16;
    if (!seen[K_SMS])
        g.sms = 108;
    *out = g;
    return WEFT_OK;
}
