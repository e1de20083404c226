/* Every unit's exact factor, and every way a bandwidth or latency token can
 * be wrong, with the reason and offset the parsers report. */
#include <string.h>

#include "base/testing.h"
#include "topo/units.h"
#include "weft/topo.h"

static void check_bw(const char *text, int64_t num, int64_t den)
{
    weft_rat r = {0, 1};
    weft_err e = weft_parse_bandwidth(text, &r);
    if (e != WEFT_OK || r.num != num || r.den != den) {
        fprintf(stderr, "bandwidth '%s': %s %lld/%lld, expected %lld/%lld\n", text,
                weft_err_name(e), (long long)r.num, (long long)r.den, (long long)num,
                (long long)den);
        weft__test_failed++;
    } else {
        weft__test_passed++;
    }
}

static void check_bw_bad(const char *text, weft_err want, const char *why, size_t where)
{
    weft_rat r = {7, 1};
    const char *got_why = NULL;
    size_t got_where = 99;
    CHECK_ERR(weft__bandwidth_parse(text, strlen(text), &r, &got_why, &got_where), want);
    CHECK_STR(got_why, why);
    CHECK_INT(got_where, where);
    CHECK_ERR(weft_parse_bandwidth(text, &r), want);
    CHECK(r.num == 7 && r.den == 1); /* untouched on failure */
}

static void check_lat(const char *text, int64_t num, int64_t den)
{
    weft_rat r = {0, 1};
    const char *why = NULL;
    size_t where;
    CHECK_ERR(weft__latency_parse(text, strlen(text), &r, &why, &where), WEFT_OK);
    CHECK_INT(r.num, num);
    CHECK_INT(r.den, den);
}

static void check_lat_bad(const char *text, weft_err want, const char *why, size_t where)
{
    weft_rat r = {7, 1};
    const char *got_why = NULL;
    size_t got_where = 99;
    CHECK_ERR(weft__latency_parse(text, strlen(text), &r, &got_why, &got_where), want);
    CHECK_STR(got_why, why);
    CHECK_INT(got_where, where);
    CHECK(r.num == 7 && r.den == 1);
}

int main(void)
{
    check_bw("300GB/s", 300, 1);
    check_bw("12.5GB/s", 25, 2);
    check_bw("200Gbps", 25, 1);
    check_bw("200Gb/s", 25, 1);
    check_bw("1GiB/s", 2097152, 1953125); /* 2^30 / 10^9 = 2^21 / 5^9 */
    check_bw("1MiB/s", 2048, 1953125);    /* 2^20 / 10^9 = 2^11 / 5^9 */
    check_bw("1500MB/s", 3, 2);
    check_bw("8000Mbps", 1, 1);
    check_bw("8Mb/s", 1, 1000);
    check_bw("1.2TB/s", 1200, 1);
    check_bw("1.6Tbps", 200, 1);
    check_bw("2400/7GB/s", 2400, 7);
    check_bw("1e3GB/s", 1000, 1);
    check_bw(".5GB/s", 1, 2);

    check_bw_bad("", WEFT_EPARSE, "bad number", 0);
    check_bw_bad("GB/s", WEFT_EPARSE, "bad number", 0);
    check_bw_bad("300", WEFT_EPARSE, "missing unit", 3);
    check_bw_bad("300 GB/s", WEFT_EPARSE, "unknown unit", 3);
    check_bw_bad("300gb/s", WEFT_EPARSE, "unknown unit", 3);
    check_bw_bad("300GBps", WEFT_EPARSE, "unknown unit", 3);
    check_bw_bad("300GB/sx", WEFT_EPARSE, "unknown unit", 3);
    check_bw_bad("0GB/s", WEFT_EINVAL, "must be > 0", 0);
    check_bw_bad("-5GB/s", WEFT_EINVAL, "must be > 0", 0);
    check_bw_bad("1/0GB/s", WEFT_EPARSE, "bad number", 0);
    check_bw_bad("99999999999999999999999999999999999999999GB/s", WEFT_EOVERFLOW, "too large", 0);
    /* The number fits but the converted value does not: 2^62 TB/s. */
    check_bw_bad("4611686018427387904TB/s", WEFT_EOVERFLOW, "too large", 0);

    check_lat("0.7us", 700, 1);
    check_lat("0ns", 0, 1);
    check_lat("1.5ms", 1500000, 1);
    check_lat("2s", 2000000000, 1);
    check_lat("1/3ns", 1, 3);
    check_lat_bad("5", WEFT_EPARSE, "missing unit", 1);
    check_lat_bad("5sec", WEFT_EPARSE, "unknown unit", 1);
    check_lat_bad("-1ns", WEFT_EINVAL, "must be >= 0", 0);
    check_lat_bad("x1ns", WEFT_EPARSE, "bad number", 0);

    /* A value below the resolution of a 64-bit fraction is too small, not
     * too large (the number itself, or after the unit's factor). */
    check_bw_bad("1e-30GB/s", WEFT_EOVERFLOW, "too small", 0);
    check_bw_bad("0.00000000000000000000001GB/s", WEFT_EOVERFLOW, "too small", 0);
    check_bw_bad("1e-18Mbps", WEFT_EOVERFLOW, "too small", 0);
    check_lat_bad("1e-30s", WEFT_EOVERFLOW, "too small", 0);

    /* weft_parse_quantity: the one reader presets, .topo and flags share;
     * a bare number is in the unit the caller names. */
    weft_rat q = {7, 1};
    const char *why = NULL;
    CHECK_ERR(weft_parse_quantity(WEFT_QTY_BANDWIDTH, "25", "GB/s", &q, &why), WEFT_OK);
    CHECK(q.num == 25 && q.den == 1);
    CHECK_ERR(weft_parse_quantity(WEFT_QTY_BANDWIDTH, "200Gbps", "GB/s", &q, &why), WEFT_OK);
    CHECK(q.num == 25 && q.den == 1);
    CHECK_ERR(weft_parse_quantity(WEFT_QTY_BANDWIDTH, "25", NULL, &q, &why), WEFT_EPARSE);
    CHECK_STR(why, "missing unit");
    CHECK_ERR(weft_parse_quantity(WEFT_QTY_BANDWIDTH, "0", "GB/s", &q, &why), WEFT_EINVAL);
    CHECK_STR(why, "must be > 0");
    CHECK_ERR(weft_parse_quantity(WEFT_QTY_BANDWIDTH, "1e-30", "GB/s", &q, &why), WEFT_EOVERFLOW);
    CHECK_STR(why, "too small");
    CHECK_ERR(weft_parse_quantity(WEFT_QTY_LATENCY, "5us", "s", &q, &why), WEFT_OK);
    CHECK(q.num == 5000 && q.den == 1);
    CHECK_ERR(weft_parse_quantity(WEFT_QTY_LATENCY, "2e-6", "s", &q, &why), WEFT_OK);
    CHECK(q.num == 2000 && q.den == 1);
    CHECK_ERR(weft_parse_quantity(WEFT_QTY_LATENCY, "500", "ns", &q, &why), WEFT_OK);
    CHECK(q.num == 500 && q.den == 1);
    CHECK_ERR(weft_parse_quantity(WEFT_QTY_LATENCY, "5sec", "s", &q, &why), WEFT_EPARSE);
    CHECK_STR(why, "unknown unit");
    CHECK_ERR(weft_parse_quantity(WEFT_QTY_LATENCY, "-1us", "s", &q, &why), WEFT_EINVAL);
    CHECK_STR(why, "must be >= 0");
    CHECK_STR(weft_quantity_units(WEFT_QTY_LATENCY), "ns, us, ms, s");

    CHECK_CONTAINS(weft__bandwidth_units, "GiB/s");
    CHECK_CONTAINS(weft__latency_units, "us");
    return weft_test_done();
}
