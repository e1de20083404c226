/* weft_rat near the 64-bit limits against a reference in 128 bits that
 * always takes the 128-bit gcd (rat.c before it reduced in 64 bits when
 * numerator and denominator fit): random operands drawn from INT64_MIN,
 * INT64_MAX and their neighbours, powers of two, small values and values
 * of every width, of both signs; weft_rat_make also with zero and
 * negative denominators. Every result and error must be the reference's. */
#include <limits.h>

#include "base/testing.h"
#include "weft/rat.h"

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

static u128 ref_gcd(u128 a, u128 b)
{
    while (b) {
        u128 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The exact num/den (den != 0 unless an error is expected) normalised,
 * or the error. */
static weft_err ref_store(i128 num, i128 den, weft_rat *out)
{
    if (den == 0)
        return WEFT_EINVAL;
    if (den < 0) {
        num = -num;
        den = -den;
    }
    if (num == 0) {
        out->num = 0;
        out->den = 1;
        return WEFT_OK;
    }
    u128 an = num < 0 ? (u128)0 - (u128)num : (u128)num;
    u128 g = ref_gcd(an, (u128)den);
    num /= (i128)g;
    den /= (i128)g;
    if (num > INT64_MAX || num < INT64_MIN || den > INT64_MAX)
        return WEFT_EOVERFLOW;
    out->num = (int64_t)num;
    out->den = (int64_t)den;
    return WEFT_OK;
}

static uint64_t state = 0x243F6A8885A308D3ull;

static uint64_t next(void) /* splitmix64 (Steele, Lea, Flood, OOPSLA 2014) */
{
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A value of one of several kinds, either sign. */
static int64_t value(void)
{
    uint64_t r = next();
    int64_t v;
    switch (r % 6) {
    case 0:
        v = INT64_MIN + (int64_t)(next() % 5);
        break;
    case 1:
        v = INT64_MAX - (int64_t)(next() % 5);
        break;
    case 2:
        v = (int64_t)(1ull << (next() % 63)) + (int64_t)(next() % 3) - 1;
        break;
    case 3:
        v = (int64_t)(next() % 13);
        break;
    case 4:
        v = (int64_t)(next() >> (next() % 64));
        break;
    default: /* products of small primes: many common factors */
        v = 1;
        for (int i = 0; i < 20; i++) {
            int64_t p = (int64_t[]){2, 3, 5, 7, 1}[next() % 5];
            if (v <= INT64_MAX / 7)
                v *= p;
        }
        break;
    }
    return (r >> 32) & 1 && v != INT64_MIN ? -v : v;
}

static bool same(weft_err e, weft_rat got, weft_err want_e, weft_rat want)
{
    return e == want_e && (e || (got.num == want.num && got.den == want.den));
}

int main(void)
{
    uint64_t checked = 0, bad = 0, overflows = 0;
    for (int i = 0; i < 400000; i++) {
        int64_t n1 = value(), d1 = value(), n2 = value(), d2 = value();
        weft_rat got = {0, 1}, want = {0, 1};
        /* make: any denominator (0 and negative ones included). */
        weft_err e = weft_rat_make(n1, d1, &got), we = ref_store(n1, d1, &want);
        bad += !same(e, got, we, want);
        weft_rat a, b;
        if (e || weft_rat_make(n2, d2 == 0 ? 1 : d2, &b))
            continue;
        a = got;
        e = weft_rat_add(a, b, &got);
        we = ref_store((i128)a.num * b.den + (i128)b.num * a.den, (i128)a.den * b.den, &want);
        bad += !same(e, got, we, want);
        e = weft_rat_sub(a, b, &got);
        we = ref_store((i128)a.num * b.den - (i128)b.num * a.den, (i128)a.den * b.den, &want);
        bad += !same(e, got, we, want);
        e = weft_rat_mul(a, b, &got);
        we = ref_store((i128)a.num * b.num, (i128)a.den * b.den, &want);
        bad += !same(e, got, we, want);
        overflows += e == WEFT_EOVERFLOW;
        e = weft_rat_div(a, b, &got);
        we = b.num ? ref_store((i128)a.num * b.den, (i128)a.den * b.num, &want) : WEFT_EINVAL;
        bad += !same(e, got, we, want);
        i128 l = (i128)a.num * b.den, r = (i128)b.num * a.den;
        bad += weft_rat_cmp(a, b) != (l > r) - (l < r);
        checked += 5;
    }
    CHECK_INT(bad, 0);
    /* The draws reach both sides of the limits. */
    CHECK(checked > 1000000);
    CHECK(overflows > 1000);
    /* The edges by hand: INT64_MIN over 1, 2 and -1 (whose negation
     * does not fit), and over INT64_MIN; a denominator of 2^63 after a
     * negative one's negation. */
    weft_rat r;
    CHECK_ERR(weft_rat_make(INT64_MIN, 1, &r), WEFT_OK);
    CHECK(r.num == INT64_MIN && r.den == 1);
    CHECK_ERR(weft_rat_make(INT64_MIN, 2, &r), WEFT_OK);
    CHECK(r.num == INT64_MIN / 2 && r.den == 1);
    CHECK_ERR(weft_rat_make(INT64_MIN, -1, &r), WEFT_EOVERFLOW);
    CHECK_ERR(weft_rat_make(INT64_MIN, INT64_MIN, &r), WEFT_OK);
    CHECK(r.num == 1 && r.den == 1);
    CHECK_ERR(weft_rat_make(1, INT64_MIN, &r), WEFT_EOVERFLOW);
    CHECK_ERR(weft_rat_make(2, INT64_MIN, &r), WEFT_OK);
    CHECK(r.num == -1 && r.den == (int64_t)1 << 62);
    CHECK_ERR(weft_rat_make(5, 0, &r), WEFT_EINVAL);
    CHECK_ERR(weft_rat_make(0, -7, &r), WEFT_OK);
    CHECK(r.num == 0 && r.den == 1);
    CHECK_ERR(weft_rat_mul((weft_rat){INT64_MIN, 1}, (weft_rat){INT64_MIN, 1}, &r), WEFT_EOVERFLOW);
    CHECK_ERR(weft_rat_div((weft_rat){INT64_MIN, 1}, (weft_rat){INT64_MIN, 1}, &r), WEFT_OK);
    CHECK(r.num == 1 && r.den == 1);
    return weft_test_done();
}
