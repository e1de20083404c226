/* Exact rational numbers.
 *
 * Bandwidths, latencies and optima are exact in weft: text such as "1.5" or
 * "2400/7" becomes a weft_rat, never a double. A weft_rat is always
 * normalised: den > 0 and gcd(|num|, den) == 1 (zero is 0/1), so equal values
 * have equal representations and can be compared field by field.
 *
 * Arithmetic uses 128-bit intermediates and reports WEFT_EOVERFLOW when a
 * normalised result does not fit in int64; it never wraps or rounds. Results
 * are written to *out only on success.
 */
#ifndef WEFT_RAT_H
#define WEFT_RAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_rat {
    int64_t num;
    int64_t den;
} weft_rat;

/* An integer as a rational. */
static inline weft_rat weft_rat_int(int64_t v)
{
    weft_rat r = {v, 1};
    return r;
}

/* num/den normalised; den == 0 gives WEFT_EINVAL. */
WEFT_API weft_err weft_rat_make(int64_t num, int64_t den, weft_rat *out);
WEFT_API weft_err weft_rat_add(weft_rat a, weft_rat b, weft_rat *out);
WEFT_API weft_err weft_rat_sub(weft_rat a, weft_rat b, weft_rat *out);
WEFT_API weft_err weft_rat_mul(weft_rat a, weft_rat b, weft_rat *out);
/* b == 0 gives WEFT_EINVAL. */
WEFT_API weft_err weft_rat_div(weft_rat a, weft_rat b, weft_rat *out);
/* -1, 0 or 1 as a <, ==, > b. Exact; never overflows. */
WEFT_API int weft_rat_cmp(weft_rat a, weft_rat b);
WEFT_API bool weft_rat_eq(weft_rat a, weft_rat b);
WEFT_API bool weft_rat_is_zero(weft_rat a);
WEFT_API int weft_rat_sign(weft_rat a);
WEFT_API double weft_rat_to_double(weft_rat a);

/* Parses an unsigned decimal or fraction at the start of s[0..len):
 * "12", "0.75", "1.", ".5", "1e3", "2.5E-2", "2400/7", "3.5/2".
 * A leading '-' is accepted and gives a negative value (callers decide
 * whether negatives are allowed). On success writes the value and the
 * number of bytes consumed. WEFT_EPARSE if no number starts at s,
 * WEFT_EOVERFLOW if it does not fit. */
WEFT_API weft_err weft_rat_parse(const char *s, size_t len, weft_rat *out, size_t *consumed);

/* Formats as "num" when den == 1, else "num/den". Returns snprintf's count. */
WEFT_API int weft_rat_format(weft_rat a, char *buf, size_t size);
/* Formats exactly as a decimal when den has no prime factors but 2 and 5
 * ("0.7", "1.073741824"), otherwise as weft_rat_format does. Re-parsing the
 * text gives the same value. */
WEFT_API int weft_rat_format_exact(weft_rat a, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
