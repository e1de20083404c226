/* What the .topo parser (parse.c) and writer (write.c) must agree on: the
 * line limit and which bytes a line may hold. The writer checks every name
 * it emits with the same rules the parser applies, so that whatever it
 * writes parses back. Nothing outside src/topo includes this header. */
#ifndef WEFT_TOPO_PARSE_H
#define WEFT_TOPO_PARSE_H

#include <stdbool.h>
#include <stddef.h>

/* Longest line, in bytes, not counting the "\n" or "\r\n" that ends it. */
#define WEFT__TOPO_LINE_MAX 4096

/* Returns the offset of the first byte in s[0..n) that a .topo line may not
 * hold, or n when all are allowed: the text must be valid UTF-8 (no overlong
 * forms, surrogates or code points above U+10FFFF) without control bytes
 * other than tab (so no NUL, no CR, no DEL). O(n). */
size_t weft__topo_check_bytes(const char *s, size_t n);

/* True when s[0..n) can be written as one token: non-empty, passes
 * weft__topo_check_bytes, and holds no blank (space, tab) and no '#'. When
 * no_equals is set, '=' is refused too (attribute keys). */
bool weft__topo_token_ok(const char *s, size_t n, bool no_equals);

#endif
