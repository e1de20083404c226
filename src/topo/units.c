/* Unit tables and the number+unit readers. See topo/units.h. */
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
    {"GB/s", 1, 1},
    {"Gbps", 1, 8},
    {"Gb/s", 1, 8},
    {"GiB/s", 1073741824, 1000000000},
    {"MB/s", 1, 1000},
    {"MiB/s", 1048576, 1000000000},
    {"Mbps", 1, 8000},
    {"Mb/s", 1, 8000},
    {"TB/s", 1000, 1},
    {"Tbps", 125, 1},
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

/* Reads NUMBER UNIT; the sign is checked by the callers. */
static weft_err parse_with(const unit *units, size_t n_units, const char *s, size_t len,
                           weft_rat *out, const char **why, size_t *where)
{
    weft_rat v;
    size_t used = 0;
    weft_err e = weft_rat_parse(s, len, &v, &used);
    if (e == WEFT_EOVERFLOW) {
        *why = "too large";
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
    if (used == len) {
        *why = "missing unit";
        return WEFT_EPARSE;
    }
    for (size_t i = 0; i < n_units; i++) {
        size_t ulen = strlen(units[i].name);
        if (ulen == len - used && memcmp(s + used, units[i].name, ulen) == 0) {
            weft_rat f = {units[i].num, units[i].den};
            weft_rat r;
            if (weft_rat_make(f.num, f.den, &f) || weft_rat_mul(v, f, &r)) {
                *why = "too large";
                *where = 0;
                return WEFT_EOVERFLOW;
            }
            *out = r;
            return WEFT_OK;
        }
    }
    *why = "unknown unit";
    return WEFT_EPARSE;
}

weft_err weft__bandwidth_parse(const char *s, size_t len, weft_rat *gbps, const char **why,
                               size_t *where)
{
    weft_rat v;
    weft_err e = parse_with(bandwidth_units, sizeof bandwidth_units / sizeof *bandwidth_units, s,
                            len, &v, why, where);
    if (e)
        return e;
    if (weft_rat_sign(v) <= 0) {
        *why = "must be > 0";
        *where = 0;
        return WEFT_EINVAL;
    }
    *gbps = v;
    return WEFT_OK;
}

weft_err weft__latency_parse(const char *s, size_t len, weft_rat *ns, const char **why,
                             size_t *where)
{
    weft_rat v;
    weft_err e = parse_with(latency_units, sizeof latency_units / sizeof *latency_units, s, len,
                            &v, why, where);
    if (e)
        return e;
    if (weft_rat_sign(v) < 0) {
        *why = "must be >= 0";
        *where = 0;
        return WEFT_EINVAL;
    }
    *ns = v;
    return WEFT_OK;
}

weft_err weft_parse_bandwidth(const char *text, weft_rat *gbps)
{
    const char *why;
    size_t where;
    return weft__bandwidth_parse(text, strlen(text), gbps, &why, &where);
}
