/* Unit tables and the number+unit readers. See topo/units.h. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "topo/units.h"
#include "weft/topo.h"

typedef struct unit {
    const char *name;
    int64_t num, den; /* value of 1 unit in the target unit (GB/s or ns) */
} unit;

/* Factors to GB/s = 10^9 bytes/s. Bits are 1/8 byte; binary prefixes are
 * powers of two. */
static const unit bandwidth_units[] = {
    {"GB/s", 1, 1},    {"Gbps", 1, 8},
    {"Gb/s", 1, 8},    {"GiB/s", 1073741824, 1000000000},
    {"MB/s", 1, 1000}, {"MiB/s", 1048576, 1000000000},
    {"Mbps", 1, 8000}, {"Mb/s", 1, 8000},
    {"TB/s", 1000, 1}, {"Tbps", 125, 1},
};

/* Factors to ns. */
static const unit latency_units[] = {
    {"ns", 1, 1},
    {"us", 1000, 1},
    {"ms", 1000000, 1},
    {"s", 1000000000, 1},
};

const char weft__bandwidth_units[] = "GB/s, Gbps, Gb/s, GiB/s, MB/s, MiB/s, Mbps, Mb/s, TB/s, Tbps";
const char weft__latency_units[] = "ns, us, ms, s";

/* Whether the number at s[0..len) that did not fit in a weft_rat is tiny
 * (below the resolution of a 64-bit fraction, "1e-30") rather than huge:
 * the two need different messages. */
static bool number_is_tiny(const char *s, size_t len)
{
    char buf[64];
    size_t n = len < sizeof buf - 1 ? len : sizeof buf - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    double v = strtod(buf, NULL);
    return v > -1 && v < 1;
}

/* Reads NUMBER [UNIT]; the sign is checked by the callers. A bare number is
 * in units[bare] when bare < n_units, else it is a missing unit. */
static weft_err parse_with(const unit *units, size_t n_units, size_t bare, const char *s,
                           size_t len, weft_rat *out, const char **why, size_t *where)
{
    weft_rat v;
    size_t used = 0;
    weft_err e = weft_rat_parse(s, len, &v, &used);
    if (e == WEFT_EOVERFLOW) {
        *why = number_is_tiny(s, len) ? "too small" : "too large";
        *where = 0;
        return WEFT_EOVERFLOW;
    }
    if (e) {
        /* A zero denominator ("1/0GB/s") is as malformed as no number. */
        *why = "bad number";
        *where = 0;
        return WEFT_EPARSE;
    }
    *where = used;
    size_t hit = n_units;
    if (used == len && bare < n_units) {
        hit = bare;
    } else if (used == len) {
        *why = "missing unit";
        return WEFT_EPARSE;
    }
    for (size_t i = 0; i < n_units && hit == n_units; i++) {
        size_t ulen = strlen(units[i].name);
        if (ulen == len - used && memcmp(s + used, units[i].name, ulen) == 0)
            hit = i;
    }
    if (hit == n_units) {
        *why = "unknown unit";
        return WEFT_EPARSE;
    }
    weft_rat f, r;
    if (weft_rat_make(units[hit].num, units[hit].den, &f) || weft_rat_mul(v, f, &r)) {
        double scaled = weft_rat_to_double(v) * (double)units[hit].num / (double)units[hit].den;
        *why = scaled > -1 && scaled < 1 ? "too small" : "too large";
        *where = 0;
        return WEFT_EOVERFLOW;
    }
    *out = r;
    return WEFT_OK;
}

/* The index of unit `name` in units (n_units when NULL or unknown). */
static size_t unit_index(const unit *units, size_t n_units, const char *name)
{
    for (size_t i = 0; name && i < n_units; i++)
        if (strcmp(units[i].name, name) == 0)
            return i;
    return n_units;
}

weft_err weft__quantity_parse(weft_quantity q, const char *s, size_t len, const char *bare_unit,
                              weft_rat *out, const char **why, size_t *where)
{
    bool bw = q == WEFT_QTY_BANDWIDTH;
    const unit *units = bw ? bandwidth_units : latency_units;
    size_t n_units = bw ? sizeof bandwidth_units / sizeof *bandwidth_units
                        : sizeof latency_units / sizeof *latency_units;
    weft_rat v;
    weft_err e =
        parse_with(units, n_units, unit_index(units, n_units, bare_unit), s, len, &v, why, where);
    if (e)
        return e;
    if (bw ? weft_rat_sign(v) <= 0 : weft_rat_sign(v) < 0) {
        *why = bw ? "must be > 0" : "must be >= 0";
        *where = 0;
        return WEFT_EINVAL;
    }
    *out = v;
    return WEFT_OK;
}

weft_err weft__bandwidth_parse(const char *s, size_t len, weft_rat *gbps, const char **why,
                               size_t *where)
{
    return weft__quantity_parse(WEFT_QTY_BANDWIDTH, s, len, NULL, gbps, why, where);
}

weft_err weft__latency_parse(const char *s, size_t len, weft_rat *ns, const char **why,
                             size_t *where)
{
    return weft__quantity_parse(WEFT_QTY_LATENCY, s, len, NULL, ns, why, where);
}

weft_err weft_parse_bandwidth(const char *text, weft_rat *gbps)
{
    const char *why;
    size_t where;
    return weft__bandwidth_parse(text, strlen(text), gbps, &why, &where);
}

weft_err weft_parse_quantity(weft_quantity q, const char *text, const char *bare_unit,
                             weft_rat *out, const char **why)
{
    const char *w = "";
    size_t where;
    weft_err e = weft__quantity_parse(q, text, strlen(text), bare_unit, out, &w, &where);
    if (why)
        *why = w;
    return e;
}

const char *weft_quantity_units(weft_quantity q)
{
    return q == WEFT_QTY_BANDWIDTH ? weft__bandwidth_units : weft__latency_units;
}
