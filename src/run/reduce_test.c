/* Exact tests of the reduction kernels and the 16-bit float conversions. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "run/half.h"
#include "weft/comm.h"

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

static void test_half_conversions(void)
{
    /* Every non-NaN half survives widening and narrowing unchanged. */
    unsigned bad = 0;
    for (uint32_t h = 0; h < 0x10000u; h++) {
        bool nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
        uint16_t back = weft__float_to_half(weft__half_to_float((uint16_t)h));
        if (!nan && back != h) bad++;
        if (nan && (back & 0x7e00u) != 0x7e00u) bad++;
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
        if (!nan && back != b) bad++;
        if (nan && (back & 0x7fc0u) != 0x7fc0u) bad++;
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

int main(void)
{
    test_load_store();
    test_names();
    test_half_conversions();
    test_integers();
    test_floats();
    test_long();
    test_invalid();
    return weft_test_done();
}
