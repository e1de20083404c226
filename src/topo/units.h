/* Bandwidth and latency units, shared by every reader of fabric text.
 *
 * The .topo parser, the importers and the command line must agree exactly
 * on what "200Gbps" means, so the unit tables live here and nowhere else.
 * These functions take a token as a span (not necessarily NUL-terminated) so
 * a parser can call them on its input without copying; on failure they name
 * the reason with a static string the caller puts into its own message
 * (with file:line:col, or the flag's name).
 */
#ifndef WEFT_TOPO_UNITS_H
#define WEFT_TOPO_UNITS_H

#include <stddef.h>

#include "weft/rat.h"
#include "weft/topo.h"

/* Parses NUMBER UNIT in s[0..len) as a bandwidth in GB/s (see
 * weft_parse_bandwidth for the units). On failure returns the error of
 * weft_parse_bandwidth, sets *why to one of "bad number", "missing unit",
 * "unknown unit", "must be > 0", "too large", and *where to the offset in s
 * of the offending part (0 for the number, the end of the number for a
 * missing or unknown unit). */
weft_err weft__bandwidth_parse(const char *s, size_t len, weft_rat *gbps, const char **why,
                               size_t *where);

/* The same for a latency in ns: units ns, us, ms, s; the value must be
 * >= 0 ("must be >= 0"). */
weft_err weft__latency_parse(const char *s, size_t len, weft_rat *ns, const char **why,
                             size_t *where);

/* The one reader behind both (and weft_parse_quantity): a bare number is
 * in bare_unit (one of the quantity's unit names) or, when bare_unit is
 * NULL, a missing unit. *why may also be "too small" (below the resolution
 * of a 64-bit fraction, as "1e-30GB/s"). */
weft_err weft__quantity_parse(weft_quantity q, const char *s, size_t len, const char *bare_unit,
                              weft_rat *out, const char **why, size_t *where);

/* The accepted units, for messages: "GB/s, Gbps, ..." and "ns, us, ms, s". */
extern const char weft__bandwidth_units[];
extern const char weft__latency_units[];

#endif
