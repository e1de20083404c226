/* Exact tests of the reduction kernels and the 16-bit float conversions.
 *
 * The branch-free conversions of half.h are checked against plain
 * branching versions written here (the reference), and every kernel of
 * every tier this CPU runs against an element-by-element scalar reference
 * on random data full of special values. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "run/half.h"
#include "run/reduce.h"
#include "weft/comm.h"

/* ---- Reference conversions: one case per branch ---------------------- */

static float ref_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t frac = h & 0x3ffu;
    if (exp == 0x1f) /* inf or NaN */
        return weft__bits_to_float(sign | 0x7f800000u | (frac << 13));
    if (exp == 0) {
        /* Zero or subnormal: frac * 2^-24, exact in float. */
        float v = (float)frac * 0x1p-24f;
        return sign ? -v : v;
    }
    return weft__bits_to_float(sign | ((exp + 112u) << 23) | (frac << 13));
}

static uint16_t ref_float_to_half(float f)
{
    uint32_t u = weft__float_to_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) /* NaN: keep the top fraction bits, force quiet */
        return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u) /* rounds to >= 65520: infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (a < 0x38800000u) {
        /* Subnormal or zero: a_float / 2^-24 rounded to an integer. */
        if (a < 0x33000000u) /* below 2^-25: rounds to zero */
            return sign;
        uint32_t exp = a >> 23;
        uint32_t mant = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - exp; /* 14 .. 24 */
        uint32_t q = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1u);
        if (rem > halfway || (rem == halfway && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);
    }
    uint32_t r = a - 0x38000000u; /* exponent - 112 */
    uint32_t q = r >> 13;
    uint32_t rem = r & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u)))
        q++;
    return (uint16_t)(sign | q);
}

static float ref_bf16_to_float(uint16_t b)
{
    return weft__bits_to_float((uint32_t)b << 16);
}

static uint16_t ref_float_to_bf16(float f)
{
    uint32_t u = weft__float_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: truncate, force quiet */
        return (uint16_t)((u >> 16) | 0x40u);
    uint32_t lsb = (u >> 16) & 1u;
    return (uint16_t)((u + 0x7fffu + lsb) >> 16);
}

/* A small deterministic generator (xorshift64*), so failures repeat. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rng(void)
{
    return weft_test_rng(&rng_state);
}

static void test_names(void)
{
    weft_dtype t;
    weft_redop op;
    CHECK_INT(weft_dtype_size(WEFT_INT8), 1);
    CHECK_INT(weft_dtype_size(WEFT_BFLOAT16), 2);
    CHECK_INT(weft_dtype_size(WEFT_UINT64), 8);
    CHECK_INT(weft_dtype_size((weft_dtype)99), 0);
    CHECK_STR(weft_dtype_name(WEFT_HALF), "half");
    CHECK_STR(weft_dtype_name((weft_dtype)-1), "?");
    CHECK(weft_dtype_parse("bf16", &t) && t == WEFT_BFLOAT16);
    CHECK(weft_dtype_parse("uint16", &t) && t == WEFT_UINT16);
    CHECK(weft_dtype_parse("fp64", &t) && t == WEFT_DOUBLE);
    CHECK(!weft_dtype_parse("int128", &t));
    CHECK(weft_redop_parse("prod", &op) && op == WEFT_PROD);
    CHECK(!weft_redop_parse("avg", &op));
    CHECK_STR(weft_redop_name(WEFT_MAX), "max");
    for (unsigned i = 0; i < WEFT__DTYPE_COUNT; i++) {
        CHECK(weft_dtype_parse(weft_dtype_name((weft_dtype)i), &t) && t == (weft_dtype)i);
    }
}

/* Both directions over all 65,536 patterns. Narrowing is checked at every
 * float that decides a rounding: each widened value, its neighbours one
 * float ulp away, the midpoint to the next value up and the floats one ulp
 * either side of it, and a few random floats between. */
static void test_conversions_exhaustive(void)
{
    unsigned bad_widen = 0, bad_narrow = 0, bad_bf_widen = 0, bad_bf_narrow = 0;
    for (uint32_t h = 0; h < 0x10000u; h++) {
        uint32_t w = weft__float_to_bits(weft__half_to_float((uint16_t)h));
        if (w != weft__float_to_bits(ref_half_to_float((uint16_t)h)))
            bad_widen++;
        uint32_t lo = weft__float_to_bits(ref_half_to_float((uint16_t)h));
        /* The midpoint to the next half away from zero: half an ulp is
         * 0x1000 float ulps for a normal half, 2^-25 below. */
        uint32_t e = (h >> 10) & 0x1fu;
        float half_ulp = h & 0x8000u ? -0x1p-25f : 0x1p-25f;
        uint32_t mid = e == 0x1fu ? lo
                       : e        ? lo + 0x1000u
                                  : weft__float_to_bits(weft__bits_to_float(lo) + half_ulp);
        uint32_t probes[] = {lo,       lo + 1u,  lo - 1u,         mid,
                             mid + 1u, mid - 1u, (uint32_t)rng(), lo + (uint32_t)(rng() & 0x1fffu)};
        for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++) {
            float f = weft__bits_to_float(probes[k]);
            if (weft__float_to_half(f) != ref_float_to_half(f))
                bad_narrow++;
        }

        w = weft__float_to_bits(weft__bf16_to_float((uint16_t)h));
        if (w != weft__float_to_bits(ref_bf16_to_float((uint16_t)h)))
            bad_bf_widen++;
        uint32_t base = (uint32_t)h << 16;
        uint32_t bprobes[] = {base,
                              base | 1u,
                              base | 0x7fffu,
                              base | 0x8000u,
                              base | 0x8001u,
                              base | 0xffffu,
                              base | (uint32_t)(rng() & 0xffffu)};
        for (size_t k = 0; k < sizeof bprobes / sizeof bprobes[0]; k++) {
            float f = weft__bits_to_float(bprobes[k]);
            if (weft__float_to_bf16(f) != ref_float_to_bf16(f))
                bad_bf_narrow++;
        }
    }
    CHECK_INT(bad_widen, 0);
    CHECK_INT(bad_narrow, 0);
    CHECK_INT(bad_bf_widen, 0);
    CHECK_INT(bad_bf_narrow, 0);
    /* A million random floats, all exponents. */
    unsigned bad = 0;
    for (int i = 0; i < 1000000; i++) {
        float f = weft__bits_to_float((uint32_t)rng());
        bad += weft__float_to_half(f) != ref_float_to_half(f);
        bad += weft__float_to_bf16(f) != ref_float_to_bf16(f);
    }
    CHECK_INT(bad, 0);
}

static void test_half_conversions(void)
{
    /* Every non-NaN half survives widening and narrowing unchanged. */
    unsigned bad = 0;
    for (uint32_t h = 0; h < 0x10000u; h++) {
        bool nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
        uint16_t back = weft__float_to_half(weft__half_to_float((uint16_t)h));
        if (!nan && back != h)
            bad++;
        if (nan && back != (h | 0x0200u))
            bad++;
    }
    CHECK_INT(bad, 0);
    CHECK(weft__half_to_float(0x3c00) == 1.0f);
    CHECK(weft__half_to_float(0x0001) == 0x1p-24f);
    CHECK(weft__half_to_float(0x7bff) == 65504.0f);
    CHECK(weft__half_to_float(0xfc00) == -INFINITY);
    /* Ties go to even: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10. */
    CHECK_INT(weft__float_to_half(1.0f + 0x1p-11f), 0x3c00);
    CHECK_INT(weft__float_to_half(1.0f + 3 * 0x1p-11f), 0x3c02);
    CHECK_INT(weft__float_to_half(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
    CHECK_INT(weft__float_to_half(65519.0f), 0x7bff);
    CHECK_INT(weft__float_to_half(65520.0f), 0x7c00);
    CHECK_INT(weft__float_to_half(-1e9f), 0xfc00);
    CHECK_INT(weft__float_to_half(0x1p-25f), 0x0000);            /* tie to even 0 */
    CHECK_INT(weft__float_to_half(0x1p-25f + 0x1p-40f), 0x0001); /* just above */
    CHECK_INT(weft__float_to_half(3 * 0x1p-25f), 0x0002);        /* 1.5 ulp -> 2 */
    CHECK_INT(weft__float_to_half(0x1p-14f - 0x1p-25f), 0x0400); /* rounds up to normal */
    CHECK_INT(weft__float_to_half(-0.0f), 0x8000);

    bad = 0;
    for (uint32_t b = 0; b < 0x10000u; b++) {
        bool nan = (b & 0x7f80u) == 0x7f80u && (b & 0x7fu);
        uint16_t back = weft__float_to_bf16(weft__bf16_to_float((uint16_t)b));
        if (!nan && back != b)
            bad++;
        if (nan && back != (b | 0x0040u))
            bad++;
    }
    CHECK_INT(bad, 0);
    CHECK_INT(weft__float_to_bf16(1.0f), 0x3f80);
    CHECK_INT(weft__float_to_bf16(1.0f + 0x1p-8f), 0x3f80); /* tie to even */
    CHECK_INT(weft__float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
    CHECK_INT(weft__float_to_bf16(3.4e38f), 0x7f80); /* rounds past the largest */
}

/* Runs one kernel on arrays placed at an odd offset (unaligned). */
static void reduce_at_odd(void *dst, const void *src, size_t count, weft_dtype t, weft_redop op)
{
    size_t bytes = count * weft_dtype_size(t);
    unsigned char *a = malloc(bytes + 1), *b = malloc(bytes + 1);
    memcpy(a + 1, dst, bytes);
    memcpy(b + 1, src, bytes);
    CHECK_ERR(weft_reduce_local(a + 1, b + 1, count, t, op), WEFT_OK);
    memcpy(dst, a + 1, bytes);
    free(a);
    free(b);
}

static void test_integers(void)
{
    int8_t a8[4] = {100, -128, 7, -3}, b8[4] = {100, -1, -9, 5};
    reduce_at_odd(a8, b8, 4, WEFT_INT8, WEFT_SUM);
    CHECK_INT(a8[0], -56); /* 200 wraps */
    CHECK_INT(a8[1], 127); /* -129 wraps */
    CHECK_INT(a8[2], -2);
    CHECK_INT(a8[3], 2);

    int8_t p8[3] = {16, -128, -7}, q8[3] = {16, -1, 3};
    reduce_at_odd(p8, q8, 3, WEFT_INT8, WEFT_PROD);
    CHECK_INT(p8[0], 0);    /* 256 wraps */
    CHECK_INT(p8[1], -128); /* 128 wraps to -128 */
    CHECK_INT(p8[2], -21);

    uint8_t u8[2] = {200, 3}, v8[2] = {100, 250};
    weft_reduce_local(u8, v8, 2, WEFT_UINT8, WEFT_MIN);
    CHECK_INT(u8[0], 100);
    CHECK_INT(u8[1], 3);

    int16_t a16[2] = {-300, 32767}, b16[2] = {200, -32768};
    weft_reduce_local(a16, b16, 2, WEFT_INT16, WEFT_MAX);
    CHECK_INT(a16[0], 200);
    CHECK_INT(a16[1], 32767);
    int16_t m16[1] = {-32768}, n16[1] = {-32768};
    weft_reduce_local(m16, n16, 1, WEFT_INT16, WEFT_PROD);
    CHECK_INT(m16[0], 0); /* 2^30 mod 2^16 */
    uint16_t w16[1] = {65535}, x16[1] = {65535};
    weft_reduce_local(w16, x16, 1, WEFT_UINT16, WEFT_PROD);
    CHECK_INT(w16[0], 1);

    int32_t a32[3] = {INT32_MAX, -5, 9}, b32[3] = {1, -7, 9};
    reduce_at_odd(a32, b32, 3, WEFT_INT32, WEFT_SUM);
    CHECK_INT(a32[0], INT32_MIN);
    CHECK_INT(a32[1], -12);
    CHECK_INT(a32[2], 18);
    uint32_t u32[2] = {0, 4000000000u}, v32[2] = {1, 3000000000u};
    weft_reduce_local(u32, v32, 2, WEFT_UINT32, WEFT_MAX);
    CHECK_INT(u32[0], 1);
    CHECK_INT(u32[1], 4000000000u);

    int64_t a64[2] = {INT64_MIN, 3000000000LL}, b64[2] = {-1, 3000000000LL};
    reduce_at_odd(a64, b64, 2, WEFT_INT64, WEFT_PROD);
    CHECK(a64[0] == INT64_MIN); /* -(-2^63) wraps to itself */
    CHECK(a64[1] == 9000000000000000000LL);
    uint64_t u64[1] = {UINT64_MAX}, v64[1] = {2};
    weft_reduce_local(u64, v64, 1, WEFT_UINT64, WEFT_SUM);
    CHECK(u64[0] == 1);
    int64_t c64[2] = {-2, 5}, d64[2] = {-3, 4};
    weft_reduce_local(c64, d64, 2, WEFT_INT64, WEFT_MIN);
    CHECK(c64[0] == -3 && c64[1] == 4);
}

static void test_floats(void)
{
    float a[5] = {1.5f, -0.0f, NAN, 2.0f, 1e30f}, b[5] = {2.25f, 0.0f, 1.0f, NAN, 1e30f};
    float s[5];
    memcpy(s, a, sizeof s);
    reduce_at_odd(s, b, 5, WEFT_FLOAT, WEFT_SUM);
    CHECK(s[0] == 3.75f);
    CHECK(s[1] == 0.0f && !signbit(s[1]));
    CHECK(isnan(s[2]) && isnan(s[3]));
    CHECK(s[4] == 2e30f);
    memcpy(s, a, sizeof s);
    weft_reduce_local(s, b, 5, WEFT_FLOAT, WEFT_MIN);
    CHECK(s[0] == 1.5f);
    CHECK(isnan(s[2]) && isnan(s[3])); /* NaN from either side */
    memcpy(s, a, sizeof s);
    weft_reduce_local(s, b, 5, WEFT_FLOAT, WEFT_MAX);
    CHECK(s[0] == 2.25f);
    CHECK(isnan(s[2]) && isnan(s[3]));
    CHECK(s[4] == 1e30f);
    memcpy(s, a, sizeof s);
    weft_reduce_local(s, b, 5, WEFT_FLOAT, WEFT_PROD);
    CHECK(s[0] == 3.375f);
    CHECK(isinf(s[4]));

    double d[3] = {0.1, 1e308, -4}, e[3] = {0.2, 1e308, 0.5};
    reduce_at_odd(d, e, 3, WEFT_DOUBLE, WEFT_SUM);
    CHECK(d[0] == 0.1 + 0.2);
    CHECK(isinf(d[1]));
    CHECK(d[2] == -3.5);

    /* half: 2048 + 1 = 2049 is not representable; the tie rounds to even
     * 2048. 1 + 2^-10 is exact. */
    uint16_t h[3] = {weft__float_to_half(2048.0f), 0x3c00, 0x7bff};
    uint16_t g[3] = {0x3c00, 0x1400, 0x7bff};
    reduce_at_odd(h, g, 3, WEFT_HALF, WEFT_SUM);
    CHECK_INT(h[0], 0x6800);
    CHECK_INT(h[1], 0x3c01);
    CHECK_INT(h[2], 0x7c00); /* 131008 overflows to infinity */
    uint16_t hm[2] = {0xbc00, 0x7e00}, gm[2] = {0x3c00, 0x3c00};
    weft_reduce_local(hm, gm, 2, WEFT_HALF, WEFT_MIN);
    CHECK_INT(hm[0], 0xbc00);
    CHECK_INT(hm[1] & 0x7e00, 0x7e00);

    /* bfloat16: 256 + 1 ties to even 256; 3 * 0.5 = 1.5 exact. */
    uint16_t bf[2] = {weft__float_to_bf16(256.0f), weft__float_to_bf16(3.0f)};
    uint16_t cf[2] = {weft__float_to_bf16(1.0f), weft__float_to_bf16(0.5f)};
    uint16_t bs[2];
    memcpy(bs, bf, sizeof bs);
    weft_reduce_local(bs, cf, 2, WEFT_BFLOAT16, WEFT_SUM);
    CHECK_INT(bs[0], 0x4380);
    CHECK(weft__bf16_to_float(bs[1]) == 3.5f);
    memcpy(bs, bf, sizeof bs);
    weft_reduce_local(bs, cf, 2, WEFT_BFLOAT16, WEFT_PROD);
    CHECK(weft__bf16_to_float(bs[0]) == 256.0f);
    CHECK(weft__bf16_to_float(bs[1]) == 1.5f);
    memcpy(bs, bf, sizeof bs);
    weft_reduce_local(bs, cf, 2, WEFT_BFLOAT16, WEFT_MAX);
    CHECK(weft__bf16_to_float(bs[0]) == 256.0f);
}

/* A long vector against an element-by-element reference, so that the
 * vectorised body and the scalar tail are both exercised. */
static void test_long(void)
{
    enum { N = 1031 };
    static int32_t a[N], b[N], ref[N];
    for (int i = 0; i < N; i++) {
        a[i] = i * 7919 - 4000000;
        b[i] = (i % 13) * -104729 + 17;
        ref[i] = a[i] < b[i] ? a[i] : b[i];
    }
    weft_reduce_local(a, b, N, WEFT_INT32, WEFT_MIN);
    CHECK(memcmp(a, ref, sizeof a) == 0);

    static double x[N], y[N], xr[N];
    for (int i = 0; i < N; i++) {
        x[i] = i * 0.25;
        y[i] = (N - i) * 0.5;
        xr[i] = x[i] + y[i];
    }
    weft_reduce_local(x, y, N, WEFT_DOUBLE, WEFT_SUM);
    CHECK(memcmp(x, xr, sizeof x) == 0);
}

/* ---- Every kernel of every tier against a scalar reference ---------- */

/* One random element of type t at p: about half the time a special value
 * (zeros, infinities, NaNs quiet and signalling with payloads, subnormals,
 * extremes, 1 and -1), else random bits or, for floating types, a number
 * near 1 whose sums and products round. */
static void random_element(weft_dtype t, unsigned char *p)
{
    static const uint16_t half_special[] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe00,
                                            0x7c01, 0xfd55, 0x0001, 0x83ff, 0x0400, 0x7bff,
                                            0xfbff, 0x3c00, 0xbc00, 0x3bff};
    static const uint16_t bf16_special[] = {0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc0,
                                            0x7f81, 0xffa5, 0x0001, 0x807f, 0x0080, 0x7f7f,
                                            0xff7f, 0x3f80, 0xbf80, 0x3f7f};
    static const uint32_t f32_special[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000,
                                           0x7fc00000, 0xffc00000, 0x7f800001, 0xffa5a5a5,
                                           0x00000001, 0x807fffff, 0x00800000, 0x7f7fffff,
                                           0xff7fffff, 0x3f800000, 0xbf800000, 0x3f7fffff};
    static const uint64_t f64_special[] = {
        0x0000000000000000, 0x8000000000000000, 0x7ff0000000000000, 0xfff0000000000000,
        0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001, 0xfff5a5a5a5a5a5a5,
        0x0000000000000001, 0x800fffffffffffff, 0x0010000000000000, 0x7fefffffffffffff,
        0xffefffffffffffff, 0x3ff0000000000000, 0xbff0000000000000, 0x3fefffffffffffff};
    static const uint64_t int_special[] = {0,
                                           1,
                                           UINT64_MAX,
                                           0x7fffffffffffffff,
                                           0x8000000000000000,
                                           0x7f,
                                           0x80,
                                           0x7fff,
                                           0x8000,
                                           0x7fffffff,
                                           0x80000000,
                                           0xff,
                                           0xffff,
                                           0xffffffff,
                                           2,
                                           3};
    uint64_t r = rng(), bits = rng();
    unsigned kind = (unsigned)(r >> 60), pick = (unsigned)(r & 15u);
    size_t es = weft_dtype_size(t);
    switch (t) {
    case WEFT_HALF:
        if (kind < 8)
            bits = half_special[pick];
        else if (kind < 12)
            bits = 0x3800u | (bits & 0x87ffu); /* 0.5 .. 2 */
        break;
    case WEFT_BFLOAT16:
        if (kind < 8)
            bits = bf16_special[pick];
        else if (kind < 12)
            bits = 0x3f00u | (bits & 0x80ffu);
        break;
    case WEFT_FLOAT:
        if (kind < 8)
            bits = f32_special[pick];
        else if (kind < 12)
            bits = 0x3f000000u | (bits & 0x80ffffffu);
        break;
    case WEFT_DOUBLE:
        if (kind < 8)
            bits = f64_special[pick];
        else if (kind < 12)
            bits = 0x3fe0000000000000u | (bits & 0x801fffffffffffffu);
        break;
    default:
        if (kind < 8)
            bits = int_special[pick];
        break;
    }
    memcpy(p, &bits, es); /* little-endian: the low es bytes */
}

static bool is_float_type(weft_dtype t)
{
    return t == WEFT_HALF || t == WEFT_BFLOAT16 || t == WEFT_FLOAT || t == WEFT_DOUBLE;
}

/* Floating min and max as weft/comm.h and reduce_loops.h define them. */
static float ref_minmax_f(weft_redop op, float a, float b)
{
    if (a != a)
        return a;
    return (op == WEFT_MIN ? a < b : a > b) ? a : b;
}

static double ref_minmax_d(weft_redop op, double a, double b)
{
    if (a != a)
        return a;
    return (op == WEFT_MIN ? a < b : a > b) ? a : b;
}

static float ref_float_op(weft_redop op, float a, float b)
{
    return op == WEFT_SUM ? a + b : op == WEFT_PROD ? a * b : ref_minmax_f(op, a, b);
}

/* out = d op s, element by element, the plain way. */
static void ref_combine(weft_dtype t, weft_redop op, const unsigned char *dp,
                        const unsigned char *sp, unsigned char *out)
{
    size_t es = weft_dtype_size(t);
    uint64_t a = 0, b = 0, r = 0;
    memcpy(&a, dp, es);
    memcpy(&b, sp, es);
    if (t == WEFT_HALF || t == WEFT_BFLOAT16) {
        bool h = t == WEFT_HALF;
        float fa = h ? ref_half_to_float((uint16_t)a) : ref_bf16_to_float((uint16_t)a);
        float fb = h ? ref_half_to_float((uint16_t)b) : ref_bf16_to_float((uint16_t)b);
        float fr = ref_float_op(op, fa, fb);
        r = h ? ref_float_to_half(fr) : ref_float_to_bf16(fr);
    } else if (t == WEFT_FLOAT) {
        uint32_t u = weft__float_to_bits(
            ref_float_op(op, weft__bits_to_float((uint32_t)a), weft__bits_to_float((uint32_t)b)));
        r = u;
    } else if (t == WEFT_DOUBLE) {
        double x, y, z;
        memcpy(&x, &a, 8);
        memcpy(&y, &b, 8);
        z = op == WEFT_SUM ? x + y : op == WEFT_PROD ? x * y : ref_minmax_d(op, x, y);
        memcpy(&r, &z, 8);
    } else {
        unsigned bitsz = (unsigned)es * 8;
        bool sgn = t == WEFT_INT8 || t == WEFT_INT16 || t == WEFT_INT32 || t == WEFT_INT64;
        /* Sign-extend to 64 bits; sum and product mod 2^64 truncate to the
         * two's complement results mod 2^bitsz. */
        uint64_t sh = 64 - bitsz;
        int64_t sa = sgn ? (int64_t)(a << sh) >> sh : (int64_t)a;
        int64_t sb = sgn ? (int64_t)(b << sh) >> sh : (int64_t)b;
        bool lt = sgn ? sa < sb : a < b, gt = sgn ? sa > sb : a > b;
        switch (op) {
        case WEFT_SUM:
            r = (uint64_t)sa + (uint64_t)sb;
            break;
        case WEFT_PROD:
            r = (uint64_t)sa * (uint64_t)sb;
            break;
        case WEFT_MIN:
            r = lt ? a : b;
            break;
        default:
            r = gt ? a : b;
            break;
        }
    }
    memcpy(out, &r, es);
}

/* The quiet bit and the "is NaN" test of floating type t on raw bits. */
static uint64_t quiet_bit(weft_dtype t)
{
    return t == WEFT_HALF       ? 0x200u
           : t == WEFT_BFLOAT16 ? 0x40u
           : t == WEFT_FLOAT    ? 0x400000u
                                : 0x8000000000000ull;
}

static bool is_nan_bits(weft_dtype t, uint64_t v)
{
    switch (t) {
    case WEFT_HALF:
        return (v & 0x7fffu) > 0x7c00u;
    case WEFT_BFLOAT16:
        return (v & 0x7fffu) > 0x7f80u;
    case WEFT_FLOAT:
        return (v & 0x7fffffffu) > 0x7f800000u;
    case WEFT_DOUBLE:
        return (v & 0x7fffffffffffffffu) > 0x7ff0000000000000u;
    default:
        return false;
    }
}

/* Whether got is right for d op s. Exact, except that when both operands
 * of a floating sum or product are NaN, IEEE 754 lets the result be either
 * one (quieted): which one the CPU returns depends on the operand order
 * the compiler chose. */
static bool combine_ok(weft_dtype t, weft_redop op, const unsigned char *dp,
                       const unsigned char *sp, const unsigned char *got)
{
    size_t es = weft_dtype_size(t);
    unsigned char want[8];
    ref_combine(t, op, dp, sp, want);
    if (memcmp(want, got, es) == 0)
        return true;
    uint64_t a = 0, b = 0, g = 0;
    memcpy(&a, dp, es);
    memcpy(&b, sp, es);
    memcpy(&g, got, es);
    if (!is_float_type(t) || op == WEFT_MIN || op == WEFT_MAX)
        return false;
    if (!is_nan_bits(t, a) || !is_nan_bits(t, b))
        return false;
    return g == (a | quiet_bit(t)) || g == (b | quiet_bit(t));
}

/* Runs fn on n random elements at byte offsets od (dst) and os (src) past
 * a 64-byte boundary, with guard bytes around dst; returns the number of
 * wrong elements (a changed guard byte or source counts as one). */
static unsigned check_one(weft__reduce_fn fn, weft_dtype t, weft_redop op, size_t n, size_t od,
                          size_t os)
{
    enum { MAXN = 4200, GUARD = 64 };
    static _Alignas(64) unsigned char dbuf[MAXN * 8 + 2 * GUARD + 8], sbuf[MAXN * 8 + 8];
    static unsigned char before[MAXN * 8], src_copy[MAXN * 8];
    size_t es = weft_dtype_size(t);
    if (n > MAXN)
        return 1;
    unsigned char *d = dbuf + GUARD + od, *s = sbuf + os;
    size_t end = GUARD + od + n * es + GUARD; /* guards: GUARD bytes either side */
    memset(dbuf, 0xa5, end);
    for (size_t i = 0; i < n; i++) {
        random_element(t, d + i * es);
        random_element(t, s + i * es);
        /* Now and then the same value on both sides (ties, equal NaNs). */
        if ((rng() & 7u) == 0)
            memcpy(s + i * es, d + i * es, es);
    }
    memcpy(before, d, n * es);
    memcpy(src_copy, s, n * es);
    fn(d, s, n);
    unsigned bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (combine_ok(t, op, before + i * es, s + i * es, d + i * es))
            continue;
        if (bad++ == 0) {
            uint64_t x = 0, y = 0, g = 0;
            unsigned char want[8];
            ref_combine(t, op, before + i * es, s + i * es, want);
            uint64_t w = 0;
            memcpy(&x, before + i * es, es);
            memcpy(&y, s + i * es, es);
            memcpy(&g, d + i * es, es);
            memcpy(&w, want, es);
            fprintf(stderr, "  %s %s n=%zu at %zu: %#llx op %#llx gave %#llx, expected %#llx\n",
                    weft_dtype_name(t), weft_redop_name(op), n, i, (unsigned long long)x,
                    (unsigned long long)y, (unsigned long long)g, (unsigned long long)w);
        }
    }
    for (size_t i = 0; i < GUARD + od; i++)
        bad += dbuf[i] != 0xa5;
    for (size_t i = GUARD + od + n * es; i < end; i++)
        bad += dbuf[i] != 0xa5;
    bad += memcmp(src_copy, s, n * es) != 0;
    return bad;
}

static void test_kernels_against_reference(void)
{
    static const size_t offsets[][2] = {{0, 0}, {1, 3}, {2, 2}, {4, 0}, {7, 5}, {0, 6}};
    static const size_t long_lengths[] = {255, 1031, 4099};
    unsigned tiers_run = 0;
    for (unsigned tier = 0; tier < WEFT__REDUCE_TIER_COUNT; tier++) {
        if (!weft__reduce_get_tier(WEFT_INT8, WEFT_SUM, (weft__reduce_tier)tier))
            continue;
        tiers_run++;
        for (unsigned t = 0; t < WEFT__DTYPE_COUNT; t++) {
            for (unsigned op = 0; op < WEFT__REDOP_COUNT; op++) {
                weft__reduce_fn fn =
                    weft__reduce_get_tier((weft_dtype)t, (weft_redop)op, (weft__reduce_tier)tier);
                CHECK(fn != NULL);
                if (!fn)
                    continue;
                unsigned bad = 0;
                for (size_t n = 0; n <= 67; n++) {
                    for (size_t k = 0; k < sizeof offsets / sizeof offsets[0]; k++)
                        bad += check_one(fn, (weft_dtype)t, (weft_redop)op, n, offsets[k][0],
                                         offsets[k][1]);
                }
                for (size_t k = 0; k < sizeof long_lengths / sizeof long_lengths[0]; k++)
                    bad += check_one(fn, (weft_dtype)t, (weft_redop)op, long_lengths[k], k, 2 * k);
                if (bad)
                    fprintf(stderr, "tier %s: %s %s: %u wrong\n",
                            weft__reduce_tier_name((weft__reduce_tier)tier),
                            weft_dtype_name((weft_dtype)t), weft_redop_name((weft_redop)op), bad);
                CHECK_INT(bad, 0);
            }
        }
    }
    /* The portable tier always exists; which others run depends on the CPU. */
    CHECK(tiers_run >= 1);
    printf("kernels checked in %u tier(s); weft__reduce_get uses %s\n", tiers_run,
           weft__reduce_tier_name(weft__reduce_best_tier()));
}

/* half and bfloat16, every op in every tier: each of the 65,536 values
 * against a spread of others (zeros, subnormals, infinities, NaNs quiet and
 * signalling, extremes, numbers), as dst and as src. */
static void test_16bit_exhaustive(void)
{
    enum { N = 0x10000 };
    static uint16_t d[N], s[N], before[N];
    static const uint16_t others[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x3c00, 0xbc00, 0x7c00,
                                      0xfc00, 0x7e00, 0x7c01, 0xfe01, 0x7f80, 0xff80, 0x7fc0,
                                      0x7f81, 0x7bff, 0x0400, 0x03ff, 0x3f80, 0xbf80};
    unsigned bad = 0;
    for (unsigned tier = 0; tier < WEFT__REDUCE_TIER_COUNT; tier++) {
        for (unsigned t = WEFT_HALF; t <= WEFT_BFLOAT16; t++) {
            for (unsigned op = 0; op < WEFT__REDOP_COUNT; op++) {
                weft__reduce_fn fn =
                    weft__reduce_get_tier((weft_dtype)t, (weft_redop)op, (weft__reduce_tier)tier);
                if (!fn)
                    continue;
                for (size_t k = 0; k < sizeof others / sizeof others[0]; k++) {
                    for (uint32_t i = 0; i < N; i++) {
                        /* Both orders: every value as dst and as src. */
                        d[i] = k & 1 ? (uint16_t)i : others[k];
                        s[i] = k & 1 ? others[k] : (uint16_t)i;
                        before[i] = d[i];
                    }
                    fn(d, s, N);
                    for (uint32_t i = 0; i < N; i++) {
                        if (!combine_ok((weft_dtype)t, (weft_redop)op,
                                        (const unsigned char *)&before[i],
                                        (const unsigned char *)&s[i], (const unsigned char *)&d[i]))
                            bad++;
                        uint16_t sw = s[i];
                        s[i] = before[i];
                        before[i] = sw;
                    }
                    /* And with the operands swapped. */
                    memcpy(d, before, sizeof d);
                    fn(d, s, N);
                    for (uint32_t i = 0; i < N; i++) {
                        if (!combine_ok((weft_dtype)t, (weft_redop)op,
                                        (const unsigned char *)&before[i],
                                        (const unsigned char *)&s[i], (const unsigned char *)&d[i]))
                            bad++;
                    }
                }
            }
        }
    }
    CHECK_INT(bad, 0);
}

static void test_tiers(void)
{
    CHECK_STR(weft__reduce_tier_name(WEFT__REDUCE_PORTABLE), "portable");
    CHECK_STR(weft__reduce_tier_name(WEFT__REDUCE_AVX512), "avx512");
    CHECK_STR(weft__reduce_tier_name((weft__reduce_tier)7), "?");
    CHECK(weft__reduce_get_tier(WEFT_FLOAT, WEFT_SUM, (weft__reduce_tier)7) == NULL);
    CHECK(weft__reduce_get_tier((weft_dtype)12, WEFT_SUM, WEFT__REDUCE_PORTABLE) == NULL);
    CHECK(weft__reduce_get_tier(WEFT_FLOAT, (weft_redop)4, WEFT__REDUCE_PORTABLE) == NULL);
    weft__reduce_tier best = weft__reduce_best_tier();
    for (unsigned t = 0; t < WEFT__DTYPE_COUNT; t++) {
        for (unsigned op = 0; op < WEFT__REDOP_COUNT; op++) {
            CHECK(weft__reduce_get((weft_dtype)t, (weft_redop)op) ==
                  weft__reduce_get_tier((weft_dtype)t, (weft_redop)op, best));
        }
    }
    /* A tier that runs here runs every kernel; the portable tier always
     * runs. */
    CHECK(weft__reduce_get_tier(WEFT_HALF, WEFT_MAX, WEFT__REDUCE_PORTABLE) != NULL);
    CHECK(weft__reduce_get_tier(WEFT_DOUBLE, WEFT_PROD, best) != NULL);
}

static void test_invalid(void)
{
    int32_t a = 1, b = 2;
    CHECK_ERR(weft_reduce_local(&a, &b, 1, (weft_dtype)42, WEFT_SUM), WEFT_EINVAL);
    CHECK_ERR(weft_reduce_local(&a, &b, 1, WEFT_INT32, (weft_redop)9), WEFT_EINVAL);
    CHECK_ERR(weft_reduce_local(NULL, NULL, 0, WEFT_INT32, WEFT_SUM), WEFT_OK);
    CHECK_INT(a, 1);
}

static void test_load_store(void)
{
    unsigned char buf[64];
    weft_dtype_store(WEFT_INT8, buf, 3, -130.7); /* truncated to -130, wraps to 126 */
    CHECK(weft_dtype_load(WEFT_INT8, buf, 3) == 126);
    weft_dtype_store(WEFT_UINT16, buf, 1, -1);
    CHECK(weft_dtype_load(WEFT_UINT16, buf, 1) == 65535);
    weft_dtype_store(WEFT_UINT64, buf, 2, 18446744073709549568.0);
    CHECK(weft_dtype_load(WEFT_UINT64, buf, 2) == 18446744073709549568.0);
    weft_dtype_store(WEFT_HALF, buf, 5, 2049);
    CHECK(weft_dtype_load(WEFT_HALF, buf, 5) == 2048); /* tie to even */
    weft_dtype_store(WEFT_BFLOAT16, buf, 0, -1.5);
    CHECK(weft_dtype_load(WEFT_BFLOAT16, buf, 0) == -1.5);
    weft_dtype_store(WEFT_FLOAT, buf, 2, 0.1);
    CHECK(weft_dtype_load(WEFT_FLOAT, buf, 2) == (double)0.1f);
    weft_dtype_store(WEFT_DOUBLE, buf, 1, 0.1);
    CHECK(weft_dtype_load(WEFT_DOUBLE, buf, 1) == 0.1);
    weft_dtype_store(WEFT_INT64, buf, 0, -9007199254740993.0);
    CHECK(weft_dtype_load(WEFT_INT64, buf, 0) == -9007199254740992.0);
    CHECK(weft_dtype_load((weft_dtype)50, buf, 0) == 0);
}

/* Overlapping buffers combine as they were before the call: the same
 * address, dst one element past src (the restrict loops read elements they
 * had already combined: dst[1] = orig[1] + orig[0] + orig[1] before), and
 * src one past dst. */
static void test_overlap(void)
{
    enum { N = 1000 };
    static int32_t buf[N + 1], orig[N + 1];
    for (int i = 0; i <= N; i++)
        orig[i] = i * 3 - 7;
    size_t bad = 0;
    memcpy(buf, orig, sizeof buf);
    CHECK_ERR(weft_reduce_local(buf, buf, N, WEFT_INT32, WEFT_SUM), WEFT_OK);
    for (int i = 0; i < N; i++)
        bad += buf[i] != 2 * orig[i];
    CHECK_INT(bad, 0);
    CHECK_INT(buf[N], orig[N]);
    memcpy(buf, orig, sizeof buf);
    CHECK_ERR(weft_reduce_local(buf + 1, buf, N, WEFT_INT32, WEFT_SUM), WEFT_OK);
    CHECK_INT(buf[0], orig[0]);
    for (int i = 0; i < N; i++)
        bad += buf[i + 1] != orig[i + 1] + orig[i];
    CHECK_INT(bad, 0);
    memcpy(buf, orig, sizeof buf);
    CHECK_ERR(weft_reduce_local(buf, buf + 1, N, WEFT_INT32, WEFT_MAX), WEFT_OK);
    for (int i = 0; i < N; i++)
        bad += buf[i] != orig[i + 1];
    CHECK_INT(bad, 0);
    CHECK_INT(buf[N], orig[N]);
}

int main(void)
{
    test_overlap();
    test_load_store();
    test_names();
    test_conversions_exhaustive();
    test_half_conversions();
    test_integers();
    test_floats();
    test_long();
    test_tiers();
    test_kernels_against_reference();
    test_16bit_exhaustive();
    test_invalid();
    return weft_test_done();
}
