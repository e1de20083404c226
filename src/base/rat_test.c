#include <limits.h>

#include "base/testing.h"
#include "weft/rat.h"

static weft_rat R(int64_t n, int64_t d)
{
    weft_rat r = {0, 1};
    weft_rat_make(n, d, &r);
    return r;
}

static void check_parse(const char *text, int64_t num, int64_t den, size_t used)
{
    weft_rat r = {0, 1};
    size_t n = 0;
    CHECK_ERR(weft_rat_parse(text, strlen(text), &r, &n), WEFT_OK);
    CHECK_INT(r.num, num);
    CHECK_INT(r.den, den);
    CHECK_INT(n, used);
}

static void check_format_exact(weft_rat r, const char *want)
{
    char buf[64];
    weft_rat_format_exact(r, buf, sizeof buf);
    CHECK_STR(buf, want);
    weft_rat back;
    CHECK_ERR(weft_rat_parse(buf, strlen(buf), &back, NULL), WEFT_OK);
    CHECK(weft_rat_eq(back, r));
}

int main(void)
{
    weft_rat r;
    CHECK_ERR(weft_rat_make(6, -4, &r), WEFT_OK);
    CHECK_INT(r.num, -3);
    CHECK_INT(r.den, 2);
    CHECK_ERR(weft_rat_make(1, 0, &r), WEFT_EINVAL);
    CHECK_ERR(weft_rat_make(0, -5, &r), WEFT_OK);
    CHECK_INT(r.num, 0);
    CHECK_INT(r.den, 1);

    CHECK_ERR(weft_rat_add(R(1, 3), R(1, 6), &r), WEFT_OK);
    CHECK(weft_rat_eq(r, R(1, 2)));
    CHECK_ERR(weft_rat_sub(R(1, 3), R(1, 2), &r), WEFT_OK);
    CHECK(weft_rat_eq(r, R(-1, 6)));
    CHECK_ERR(weft_rat_mul(R(2400, 7), R(7, 3), &r), WEFT_OK);
    CHECK(weft_rat_eq(r, R(800, 1)));
    CHECK_ERR(weft_rat_div(R(1, 2), R(0, 1), &r), WEFT_EINVAL);
    CHECK_ERR(weft_rat_div(R(1040, 3), R(8, 1), &r), WEFT_OK);
    CHECK(weft_rat_eq(r, R(130, 3)));

    /* Overflow is detected, not wrapped; intermediates may exceed int64. */
    weft_rat big = {INT64_MAX, 1};
    CHECK_ERR(weft_rat_add(big, R(1, 1), &r), WEFT_EOVERFLOW);
    CHECK_ERR(weft_rat_mul(big, R(2, 1), &r), WEFT_EOVERFLOW);
    CHECK_ERR(weft_rat_mul(big, R(2, 4), &r), WEFT_OK); /* (2^63-1)/2 fits */
    CHECK_INT(r.den, 2);
    weft_rat huge_a = {INT64_MAX, INT64_MAX - 1}, huge_b = {INT64_MAX - 1, INT64_MAX};
    CHECK_ERR(weft_rat_mul(huge_a, huge_b, &r), WEFT_OK); /* cancels to 1 */
    CHECK(weft_rat_eq(r, R(1, 1)));
    CHECK_ERR(weft_rat_add(R(1, INT64_MAX), R(1, INT64_MAX - 1), &r), WEFT_EOVERFLOW);

    CHECK_INT(weft_rat_cmp(R(1, 3), R(1, 2)), -1);
    CHECK_INT(weft_rat_cmp(R(-1, 3), R(-1, 2)), 1);
    CHECK_INT(weft_rat_cmp(huge_a, huge_a), 0);
    CHECK(weft_rat_cmp(huge_a, R(1, 1)) > 0);

    check_parse("300", 300, 1, 3);
    check_parse("0.7us", 7, 10, 3);
    check_parse("1.073741824", 2097152, 1953125, 11);
    check_parse("2400/7GB/s", 2400, 7, 6);
    check_parse("1e3ns", 1000, 1, 3);
    check_parse("2.5E-2", 1, 40, 6);
    check_parse(".5", 1, 2, 2);
    check_parse("-12.50", -25, 2, 6);
    check_parse("3.5/0.5", 7, 1, 7);
    check_parse("12/s", 12, 1, 2); /* '/' not followed by a digit is not a fraction */
    check_parse("1emb", 1, 1, 1);  /* 'e' without exponent digits belongs to the unit */
    check_parse("100000000000000000000e-10", 10000000000, 1, 25);
    CHECK_ERR(weft_rat_parse("abc", 3, &r, NULL), WEFT_EPARSE);
    CHECK_ERR(weft_rat_parse(".", 1, &r, NULL), WEFT_EPARSE);
    CHECK_ERR(weft_rat_parse("", 0, &r, NULL), WEFT_EPARSE);
    CHECK_ERR(weft_rat_parse("99999999999999999999", 20, &r, NULL), WEFT_EOVERFLOW);
    CHECK_ERR(weft_rat_parse("1e40", 4, &r, NULL), WEFT_EOVERFLOW);
    CHECK_ERR(weft_rat_parse("1/0", 3, &r, NULL), WEFT_EINVAL);

    char buf[64];
    weft_rat_format(R(2400, 7), buf, sizeof buf);
    CHECK_STR(buf, "2400/7");
    weft_rat_format(R(25, 1), buf, sizeof buf);
    CHECK_STR(buf, "25");
    check_format_exact(R(7, 10), "0.7");
    check_format_exact(R(1073741824, 1000000000), "1.073741824");
    check_format_exact(R(-1, 8), "-0.125");
    check_format_exact(R(2400, 7), "2400/7");
    check_format_exact(R(300, 1), "300");
    check_format_exact(R(1, 1024), "0.0009765625");
    CHECK(weft_rat_to_double(R(1040, 3)) > 346.666 && weft_rat_to_double(R(1040, 3)) < 346.667);
    return weft_test_done();
}
