/* Exact rationals with 128-bit intermediates. Every operation computes the
 * exact result in __int128, normalises it by the gcd, and only then checks
 * that numerator and denominator fit in int64. */
#include <stdio.h>
#include <string.h>

#include "weft/rat.h"

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

#define I64_MAX_ ((i128)INT64_MAX)
#define I64_MIN_ ((i128)INT64_MIN)
/* Largest magnitude an intermediate may reach before we call it overflow:
 * products of two int64 fit easily below 2^126. */
static const i128 I128_LIMIT = ((i128)1) << 125;

static u128 gcd_u128(u128 a, u128 b)
{
    while (b) {
        u128 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The same in 64 bits: a 128-bit remainder is a call (__umodti3), and
 * routes (weft_paths) normalise a sum of latencies per hop. */
static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static u128 abs_i128(i128 v)
{
    return v < 0 ? (u128)0 - (u128)v : (u128)v;
}

/* Normalises num/den (den != 0) and stores it if it fits. */
static weft_err store(i128 num, i128 den, weft_rat *out)
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
    /* The gcd and quotients in 64 bits when both fit (the same values);
     * nothing to divide by over a denominator of 1. */
    u128 an = abs_i128(num), ad = (u128)den;
    if (ad != 1) {
        if (!(an >> 64) && !(ad >> 64)) {
            uint64_t g = gcd_u64((uint64_t)an, (uint64_t)ad);
            an = (uint64_t)an / g;
            ad = (uint64_t)ad / g;
        } else {
            u128 g = gcd_u128(an, ad);
            an /= g;
            ad /= g;
        }
        num = num < 0 ? -(i128)an : (i128)an;
        den = (i128)ad;
    }
    if (num > I64_MAX_ || num < I64_MIN_ || den > I64_MAX_)
        return WEFT_EOVERFLOW;
    out->num = (int64_t)num;
    out->den = (int64_t)den;
    return WEFT_OK;
}

weft_err weft_rat_make(int64_t num, int64_t den, weft_rat *out)
{
    return store(num, den, out);
}

weft_err weft_rat_add(weft_rat a, weft_rat b, weft_rat *out)
{
    /* a.num*b.den + b.num*a.den: each product < 2^126, the sum < 2^127. */
    i128 num = (i128)a.num * b.den + (i128)b.num * a.den;
    i128 den = (i128)a.den * b.den;
    return store(num, den, out);
}

weft_err weft_rat_sub(weft_rat a, weft_rat b, weft_rat *out)
{
    i128 num = (i128)a.num * b.den - (i128)b.num * a.den;
    i128 den = (i128)a.den * b.den;
    return store(num, den, out);
}

weft_err weft_rat_mul(weft_rat a, weft_rat b, weft_rat *out)
{
    return store((i128)a.num * b.num, (i128)a.den * b.den, out);
}

weft_err weft_rat_div(weft_rat a, weft_rat b, weft_rat *out)
{
    if (b.num == 0)
        return WEFT_EINVAL;
    return store((i128)a.num * b.den, (i128)a.den * b.num, out);
}

int weft_rat_cmp(weft_rat a, weft_rat b)
{
    i128 l = (i128)a.num * b.den;
    i128 r = (i128)b.num * a.den;
    return (l > r) - (l < r);
}

bool weft_rat_eq(weft_rat a, weft_rat b)
{
    return a.num == b.num && a.den == b.den;
}

bool weft_rat_is_zero(weft_rat a)
{
    return a.num == 0;
}

int weft_rat_sign(weft_rat a)
{
    return (a.num > 0) - (a.num < 0);
}

double weft_rat_to_double(weft_rat a)
{
    return (double)a.num / (double)a.den;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Parses one unsigned decimal ("12", "0.5", "1e3") into num/den. */
static weft_err parse_decimal(const char *s, size_t len, i128 *num, i128 *den, size_t *used)
{
    size_t i = 0;
    i128 mant = 0;
    int digits = 0, frac = 0;
    bool overflow = false;
    while (i < len && is_digit(s[i])) {
        if (mant > I128_LIMIT / 10)
            overflow = true;
        else
            mant = mant * 10 + (s[i] - '0');
        i++;
        digits++;
    }
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && is_digit(s[i])) {
            if (mant > I128_LIMIT / 10)
                overflow = true;
            else
                mant = mant * 10 + (s[i] - '0');
            i++;
            digits++;
            frac++;
        }
    }
    if (digits == 0)
        return WEFT_EPARSE;
    long exp10 = 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        bool neg = false;
        if (j < len && (s[j] == '+' || s[j] == '-'))
            neg = s[j++] == '-';
        if (j < len && is_digit(s[j])) {
            long e = 0;
            while (j < len && is_digit(s[j])) {
                if (e < 100000)
                    e = e * 10 + (s[j] - '0');
                j++;
            }
            exp10 = neg ? -e : e;
            i = j;
        }
        /* "1e" followed by no digits: the 'e' is not part of the number
         * (it may start a unit), so stop before it. */
    }
    if (overflow)
        return WEFT_EOVERFLOW;
    exp10 -= frac;
    i128 d = 1;
    while (exp10 > 0) {
        if (mant != 0 && mant > I128_LIMIT / 10)
            return WEFT_EOVERFLOW;
        mant *= 10;
        exp10--;
    }
    while (exp10 < 0) {
        if (d > I128_LIMIT / 10)
            return WEFT_EOVERFLOW;
        d *= 10;
        exp10++;
    }
    *num = mant;
    *den = d;
    *used = i;
    return WEFT_OK;
}

weft_err weft_rat_parse(const char *s, size_t len, weft_rat *out, size_t *consumed)
{
    size_t i = 0;
    bool neg = false;
    if (i < len && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    i128 n1, d1;
    size_t used;
    weft_err e = parse_decimal(s + i, len - i, &n1, &d1, &used);
    if (e)
        return e;
    i += used;
    /* An optional "/denominator" directly after the number. */
    if (i + 1 < len && s[i] == '/' &&
        (is_digit(s[i + 1]) || (s[i + 1] == '.' && i + 2 < len && is_digit(s[i + 2])))) {
        i128 n2, d2;
        e = parse_decimal(s + i + 1, len - i - 1, &n2, &d2, &used);
        if (e)
            return e;
        if (n2 == 0)
            return WEFT_EINVAL;
        /* (n1/d1) / (n2/d2) = n1*d2 / (d1*n2); reduce before multiplying. */
        u128 g1 = gcd_u128(abs_i128(n1), abs_i128(n2));
        u128 g2 = gcd_u128(abs_i128(d1), abs_i128(d2));
        if (g1 == 0)
            g1 = 1;
        n1 /= (i128)g1;
        n2 /= (i128)g1;
        d1 /= (i128)g2;
        d2 /= (i128)g2;
        if ((n1 && abs_i128(d2) > (u128)I128_LIMIT / abs_i128(n1)) ||
            abs_i128(n2) > (u128)I128_LIMIT / abs_i128(d1))
            return WEFT_EOVERFLOW;
        n1 *= d2;
        d1 *= n2;
        i += 1 + used;
    }
    weft_rat r;
    e = store(neg ? -n1 : n1, d1, &r);
    if (e)
        return e;
    *out = r;
    if (consumed)
        *consumed = i;
    return WEFT_OK;
}

int weft_rat_format(weft_rat a, char *buf, size_t size)
{
    if (a.den == 1)
        return snprintf(buf, size, "%lld", (long long)a.num);
    return snprintf(buf, size, "%lld/%lld", (long long)a.num, (long long)a.den);
}

int weft_rat_format_exact(weft_rat a, char *buf, size_t size)
{
    if (a.den == 1)
        return weft_rat_format(a, buf, size);
    /* Find k with den | 10^k; only possible when den = 2^x 5^y. */
    int64_t d = a.den;
    int twos = 0, fives = 0;
    while (d % 2 == 0) {
        d /= 2;
        twos++;
    }
    while (d % 5 == 0) {
        d /= 5;
        fives++;
    }
    int k = twos > fives ? twos : fives;
    if (d != 1 || k > 30)
        return weft_rat_format(a, buf, size);
    /* Scaled = |num| * 10^k / den, an integer with k fractional digits. */
    u128 scaled = abs_i128(a.num);
    u128 scale = 1;
    for (int i = 0; i < k; i++)
        scale *= 10;
    if (scaled > ((u128)1 << 126) / scale)
        return weft_rat_format(a, buf, size);
    scaled = scaled * scale / (u128)a.den;
    char digits[64];
    int nd = 0;
    do {
        digits[nd++] = (char)('0' + (int)(scaled % 10));
        scaled /= 10;
    } while (scaled);
    while (nd <= k)
        digits[nd++] = '0';
    char text[80];
    int t = 0;
    if (a.num < 0)
        text[t++] = '-';
    for (int i = nd - 1; i >= k; i--)
        text[t++] = digits[i];
    text[t++] = '.';
    for (int i = k - 1; i >= 0; i--)
        text[t++] = digits[i];
    while (text[t - 1] == '0')
        t--;
    text[t] = '\0';
    return snprintf(buf, size, "%s", text);
}
