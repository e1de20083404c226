/* Writing a C string as a JSON string literal.
 *
 * One escaper for every JSON the library and the CLI write. The default
 * (WEFT__JSON_STRICT) always yields valid JSON in valid UTF-8 whatever the
 * input bytes: '"' and '\' escaped, \b \f \n \r \t in their short forms,
 * the other control characters (below 0x20, and 0x7F) as \u00xx (lower-case
 * hex), well-formed UTF-8 copied as it is, and each byte that does not start
 * or continue a well-formed sequence (overlong forms, surrogates, above
 * U+10FFFF, truncated sequences, stray continuation bytes) written as
 * \ufffd. The flags keep the older, looser forms that pinned outputs still
 * use (a plan's JSON, the simulator's traces), byte for byte:
 *   WEFT__JSON_CTRL_HEX   every control below 0x20 as \u00xx (no short
 *                         forms)
 *   WEFT__JSON_CTRL_DROP  controls below 0x20 left out
 *   WEFT__JSON_RAW_BYTES  bytes from 0x7F up copied unchecked (the output is
 *                         valid JSON only for valid UTF-8 input)
 * The escaper never fails; a write error stays on f for the caller.
 */
#ifndef WEFT_BASE_JSON_H
#define WEFT_BASE_JSON_H

#include <stddef.h>
#include <stdio.h>

enum {
    WEFT__JSON_STRICT = 0,
    WEFT__JSON_CTRL_HEX = 1u << 0,
    WEFT__JSON_CTRL_DROP = 1u << 1,
    WEFT__JSON_RAW_BYTES = 1u << 2,
};

/* Writes s (NUL-terminated) as a JSON string literal, quotes included. */
void weft__json_string(FILE *f, const char *s, unsigned flags);
/* The same without the surrounding quotes (for a string assembled from
 * pieces). */
void weft__json_escape(FILE *f, const char *s, unsigned flags);
/* Length of the well-formed UTF-8 sequence at s (1 to 4), or 0 when s does
 * not start one (RFC 3629, section 4). s is NUL-terminated. */
size_t weft__utf8_len(const unsigned char *s);

#endif
