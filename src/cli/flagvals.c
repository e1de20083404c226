/* Shared flag values. See flagvals.h. */
#include "cli/flagvals.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "weft/synth.h"
#include "weft/topo.h"

int cli_flag_coll(const cli_syntax *syn, const char *flag, const char *text, weft_coll *out)
{
    if (weft_coll_parse(text, strlen(text), out))
        return CLI_EXIT_OK;
    return cli_usage_error(syn, "unknown %s '%s': expected %s", flag, text, CLI_COLLS);
}

/* True when some collective is built by the classic algorithm `text`. */
static bool classic_known(const char *text)
{
    for (int c = 0; c < WEFT__COLL_COUNT; c++)
        if (weft_classic_supports(text, (weft_coll)c))
            return true;
    return false;
}

int cli_flag_algo(const cli_syntax *syn, const char *flag, const char *text, bool allow_optimal)
{
    if (classic_known(text) || (allow_optimal && weft_sched_known(text)))
        return CLI_EXIT_OK;
    char list[512];
    size_t at = 0;
    list[0] = '\0';
    for (size_t i = 0; i < weft_classic_count() && at < sizeof list; i++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "",
                               weft_classic_get(i)->name);
    char others[128];
    size_t ot = 0, nothers = 0;
    others[0] = '\0';
    for (size_t i = weft_classic_count(); i < weft_sched_count(); i++)
        nothers++;
    for (size_t i = weft_classic_count(), k = 0; i < weft_sched_count() && ot < sizeof others;
         i++, k++) {
        weft_sched_info in;
        weft_sched_get(i, &in);
        ot += (size_t)snprintf(others + ot, sizeof others - ot, "%s%s",
                               k == 0             ? ", "
                               : k + 1 == nothers ? " or "
                                                  : ", ",
                               in.name);
    }
    if (strncmp(text, "rings:", 6) == 0)
        return cli_usage_error(syn, "bad %s '%s': K of rings:K must be an integer from 1 to 64",
                               flag, text);
    if (strncmp(text, "relay:", 6) == 0)
        return cli_usage_error(
            syn, "bad %s '%s': K of relay:K must be auto or an integer from 1 to 64", flag, text);
    return cli_usage_error(syn,
                           "unknown %s '%s': expected %s%s (weft plan --list says what each "
                           "builds)",
                           flag, text, list, allow_optimal ? others : "");
}

/* The message for a reason of weft_parse_quantity. */
static int quantity_error(const cli_syntax *syn, const char *flag, const char *text,
                          const char *why, const char *what, const char *example, weft_quantity q)
{
    if (strcmp(why, "too small") == 0)
        return cli_usage_error(syn,
                               "bad %s '%s': too small (below the resolution of exact "
                               "values, fractions of 64-bit integers)",
                               flag, text);
    if (strcmp(why, "too large") == 0 || strncmp(why, "must be", 7) == 0)
        return cli_usage_error(syn, "bad %s '%s': %s", flag, text, why);
    return cli_usage_error(syn, "bad %s '%s': %s (expected %s, e.g. %s; units: %s)", flag, text,
                           why, what, example, weft_quantity_units(q));
}

int cli_flag_bandwidth(const cli_syntax *syn, const char *flag, const char *text, weft_rat *gbps)
{
    const char *why;
    if (weft_parse_quantity(WEFT_QTY_BANDWIDTH, text, "GB/s", gbps, &why) == WEFT_OK)
        return CLI_EXIT_OK;
    return quantity_error(syn, flag, text, why, "a number of GB/s or a number and a unit",
                          "25, 12.5GB/s or 200Gbps", WEFT_QTY_BANDWIDTH);
}

int cli_flag_time(const cli_syntax *syn, const char *flag, const char *text, double max_s,
                  double *seconds)
{
    const char *why;
    weft_rat ns;
    /* As a .topo file's lat= (src/topo/units.c): a number and a unit. A
     * bare 0 is the one number that means the same in every unit. */
    if (weft_parse_quantity(WEFT_QTY_LATENCY, text, NULL, &ns, &why) != WEFT_OK) {
        weft_rat bare;
        if (strcmp(why, "missing unit") != 0)
            return quantity_error(syn, flag, text, why, "a number and a unit", "5us or 0.5ms",
                                  WEFT_QTY_LATENCY);
        if (weft_parse_quantity(WEFT_QTY_LATENCY, text, "s", &bare, NULL) != WEFT_OK ||
            weft_rat_sign(bare) != 0)
            return cli_usage_error(syn,
                                   "bad %s '%s': add a unit, one of %s (e.g. %sus, or "
                                   "%ss for seconds); only 0 goes without one",
                                   flag, text, weft_quantity_units(WEFT_QTY_LATENCY), text, text);
        ns = bare;
    }
    /* One division, so that whole nanoseconds give the nearest double. */
    double s = (double)ns.num / ((double)ns.den * 1e9);
    if (s > max_s)
        return cli_usage_error(syn, "bad %s '%s': at most %g s", flag, text, max_s);
    *seconds = s;
    return CLI_EXIT_OK;
}

int cli_flag_skew(const cli_syntax *syn, const char *flag, const char *text, bool *zipf,
                  uint32_t *milli_out)
{
    if (strcmp(text, "uniform") == 0) {
        *zipf = false;
        *milli_out = 0;
        return CLI_EXIT_OK;
    }
    const char *s = strncmp(text, "zipf:", 5) == 0 ? text + 5 : NULL;
    uint64_t whole = 0, milli = 0;
    unsigned frac_digits = 0;
    bool ok = s && *s >= '0' && *s <= '9';
    for (; ok && *s >= '0' && *s <= '9'; s++) {
        whole = whole * 10 + (uint64_t)(*s - '0');
        ok = whole <= 8;
    }
    if (ok && *s == '.') {
        s++;
        ok = *s >= '0' && *s <= '9';
        for (; ok && *s >= '0' && *s <= '9'; s++) {
            ok = ++frac_digits <= 3;
            milli = milli * 10 + (uint64_t)(*s - '0');
        }
    }
    for (unsigned k = frac_digits; k < 3; k++)
        milli *= 10;
    uint64_t m = whole * 1000 + milli;
    if (!ok || *s || m > 8000)
        return cli_usage_error(syn,
                               "bad %s '%s': expected uniform or zipf:S with S from 0 to 8 "
                               "(at most 3 decimals, e.g. zipf:1.2)",
                               flag, text);
    *zipf = true;
    *milli_out = (uint32_t)m;
    return CLI_EXIT_OK;
}

int cli_flag_svg(const cli_syntax *syn, const char *flag, const char *path)
{
    size_t n = strlen(path);
    const char *ext = n >= 4 ? path + n - 4 : "";
    if (n >= 4 && ext[0] == '.' && (ext[1] | 0x20) == 's' && (ext[2] | 0x20) == 'v' &&
        (ext[3] | 0x20) == 'g')
        return CLI_EXIT_OK;
    return cli_usage_error(syn,
                           "bad %s '%s': weft writes plots as SVG only; name the file "
                           "FILE.svg",
                           flag, path);
}

int cli_flag_whole(const cli_syntax *syn, const cli_args *a, const char *name, uint64_t lo,
                   uint64_t hi, uint64_t *out)
{
    const char *text = cli_args_get(a, name);
    if (!text)
        return CLI_EXIT_OK;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(text, &end, 10);
    if (!*text || *end || errno || x < lo || x > hi || *text == '-' || *text == '+')
        return cli_usage_error(syn, "bad --%s '%s': a whole number from %llu to %llu", name, text,
                               (unsigned long long)lo, (unsigned long long)hi);
    *out = x;
    return CLI_EXIT_OK;
}
