/* Byte sizes and sweeps. See sizes.h. */
#include "cli/sizes.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "weft/rat.h"

typedef struct size_unit {
    const char *name;
    uint64_t bytes;
} size_unit;

/* Longest names first is not needed: a unit must match the whole rest. */
static const size_unit units[] = {
    {"B", 1},
    {"K", 1ull << 10},
    {"k", 1ull << 10},
    {"M", 1ull << 20},
    {"m", 1ull << 20},
    {"G", 1ull << 30},
    {"g", 1ull << 30},
    {"KiB", 1ull << 10},
    {"MiB", 1ull << 20},
    {"GiB", 1ull << 30},
    {"KB", 1000},
    {"kB", 1000},
    {"MB", 1000000},
    {"GB", 1000000000},
};

static const char grammar[] = CLI_SIZE_GRAMMAR;

bool cli_parse_size(const char *s, size_t len, uint64_t *out, const char **why)
{
    weft_rat v;
    size_t used = 0;
    weft_err e = weft_rat_parse(s, len, &v, &used);
    if (e == WEFT_EOVERFLOW) {
        *why = "too large";
        return false;
    }
    if (e || (used < len && s[used] == '/')) {
        *why = grammar;
        return false;
    }
    uint64_t mult = 0;
    if (used == len) {
        mult = 1;
    } else {
        for (size_t i = 0; i < sizeof units / sizeof *units && !mult; i++) {
            size_t n = strlen(units[i].name);
            if (n == len - used && memcmp(s + used, units[i].name, n) == 0)
                mult = units[i].bytes;
        }
    }
    /* A fraction written with '/' is not part of the grammar ("1/2K"). */
    if (!mult || memchr(s, '/', used)) {
        *why = grammar;
        return false;
    }
    if (weft_rat_sign(v) <= 0) {
        *why = "must be > 0";
        return false;
    }
    /* v = num/den; in lowest terms the size num * mult / den is whole
     * exactly when den divides mult. */
    uint64_t num = (uint64_t)v.num, den = (uint64_t)v.den;
    uint64_t a = num, b = den;
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    num /= a; /* a = gcd(num, den) > 0 since num > 0 */
    den /= a;
    if (mult % den != 0) {
        *why = "not a whole number of bytes";
        return false;
    }
    mult /= den;
    if (num > UINT64_MAX / mult) {
        *why = "too large";
        return false;
    }
    *out = num * mult;
    return true;
}

bool cli_parse_sweep(const char *s, uint64_t *lo, uint64_t *hi, uint64_t *factor, char *why,
                     size_t why_size)
{
    const char *c1 = strchr(s, ':'), *bad;
    if (!c1) {
        *factor = 0;
        if (!cli_parse_size(s, strlen(s), lo, &bad)) {
            snprintf(why, why_size, "%s", bad);
            return false;
        }
        *hi = *lo;
        return true;
    }
    const char *c2 = strchr(c1 + 1, ':');
    if (!c2 || strchr(c2 + 1, ':') || c2[1] != 'x') {
        snprintf(why, why_size,
                 "a sweep is MIN:MAX:xF, e.g. 1K:1G:x4 (MIN, MIN*F, ... up to "
                 "MAX)");
        return false;
    }
    if (!cli_parse_size(s, (size_t)(c1 - s), lo, &bad)) {
        snprintf(why, why_size, "its start '%.*s'%s%s", (int)(c1 - s), s,
                 bad == grammar ? " is not a size" : ": ", bad == grammar ? "" : bad);
        return false;
    }
    if (!cli_parse_size(c1 + 1, (size_t)(c2 - c1 - 1), hi, &bad)) {
        snprintf(why, why_size, "its end '%.*s'%s%s", (int)(c2 - c1 - 1), c1 + 1,
                 bad == grammar ? " is not a size" : ": ", bad == grammar ? "" : bad);
        return false;
    }
    const char *f = c2 + 2;
    size_t fl = strlen(f), i = 0;
    uint64_t v = 0;
    for (; i < fl && f[i] >= '0' && f[i] <= '9' && v <= UINT64_MAX / 10 - 1; i++)
        v = v * 10 + (uint64_t)(f[i] - '0');
    if (!fl || i != fl || v < 2) {
        snprintf(why, why_size, "its factor 'x%s' must be a whole number >= 2, e.g. x2 or x4", f);
        return false;
    }
    if (*hi < *lo) {
        snprintf(why, why_size, "the sweep's end %llu is below its start %llu",
                 (unsigned long long)*hi, (unsigned long long)*lo);
        return false;
    }
    *factor = v;
    return true;
}

int cli_flag_size(const cli_syntax *syn, const char *flag, const char *text, uint64_t max,
                  uint64_t *out)
{
    const char *why;
    uint64_t v;
    if (!cli_parse_size(text, strlen(text), &v, &why)) {
        if (why == grammar)
            return cli_usage_error(syn, "bad %s '%s': expected %s", flag, text, grammar);
        return cli_usage_error(syn, "bad %s '%s': %s (expected %s)", flag, text, why, grammar);
    }
    if (v > max)
        return cli_usage_error(syn, "bad %s '%s': %llu bytes, more than the most allowed, %llu",
                               flag, text, (unsigned long long)v, (unsigned long long)max);
    *out = v;
    return CLI_EXIT_OK;
}

int cli_flag_sweep(const cli_syntax *syn, const char *flag, const char *text, uint64_t *lo,
                   uint64_t *hi, uint64_t *factor)
{
    char why[512];
    if (cli_parse_sweep(text, lo, hi, factor, why, sizeof why))
        return CLI_EXIT_OK;
    if (strcmp(why, grammar) == 0)
        return cli_usage_error(syn,
                               "bad %s '%s': expected %s, or a sweep MIN:MAX:xF such as "
                               "1K:1G:x4",
                               flag, text, grammar);
    if (strstr(why, "is not a size"))
        return cli_usage_error(syn, "bad %s '%s': %s (a size is %s)", flag, text, why, grammar);
    return cli_usage_error(syn, "bad %s '%s': %s", flag, text, why);
}

void cli_size_label(uint64_t size, char *buf, size_t len)
{
    static const char suffix[] = {'G', 'M', 'K'};
    for (int i = 0; i < 3; i++) {
        unsigned shift = 30 - 10 * (unsigned)i;
        if (size >= (1ull << shift) && size % (1ull << shift) == 0) {
            snprintf(buf, len, "%llu%c", (unsigned long long)(size >> shift), suffix[i]);
            return;
        }
    }
    snprintf(buf, len, "%llu", (unsigned long long)size);
}
