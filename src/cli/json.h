/* A streaming JSON writer for --json output.
 *
 * Commands print one JSON object on stdout: begin an object, write keys and
 * values, end it, then cli_json_finish. The writer indents by two spaces,
 * separates members with commas and checks the nesting: a value inside an
 * object needs a key first, a key is only allowed inside an object, ends
 * must match begins. A misuse is a programming error; it is remembered and
 * reported by cli_json_finish (and the output is then not valid JSON).
 *
 * Strings are escaped per RFC 8259 (quote, backslash, control characters);
 * bytes that are not valid UTF-8 become U+FFFD so the output is always
 * valid UTF-8. Doubles use the shortest text that reads back to the same
 * value; NaN and infinities, which JSON cannot express, become null. Exact
 * rationals are strings, "2400/7" or "25" (DESIGN.md: algbw_exact).
 * Nesting is limited to CLI_JSON_MAX_DEPTH levels.
 */
#ifndef WEFT_CLI_JSON_H
#define WEFT_CLI_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/rat.h"

#define CLI_JSON_MAX_DEPTH 32

typedef struct cli_json {
    FILE *f;
    int depth;
    bool in_object[CLI_JSON_MAX_DEPTH]; /* per open level: object or array */
    bool empty[CLI_JSON_MAX_DEPTH];     /* per open level: nothing written yet */
    bool have_key;                      /* a key was written, its value is due */
    bool done;                          /* the top-level value is complete */
    bool misuse;
} cli_json;

void cli_json_init(cli_json *j, FILE *f);

void cli_json_begin_object(cli_json *j);
void cli_json_end_object(cli_json *j);
void cli_json_begin_array(cli_json *j);
void cli_json_end_array(cli_json *j);
/* The key of the next member of the current object. */
void cli_json_key(cli_json *j, const char *key);

void cli_json_string(cli_json *j, const char *s); /* NULL writes null */
void cli_json_int(cli_json *j, int64_t v);
void cli_json_uint(cli_json *j, uint64_t v);
void cli_json_double(cli_json *j, double v);
void cli_json_bool(cli_json *j, bool v);
void cli_json_null(cli_json *j);
/* An exact rational as a string: "2400/7", "25", "-1/2". */
void cli_json_rat(cli_json *j, weft_rat v);

/* Key and value in one call. */
void cli_json_kv_string(cli_json *j, const char *key, const char *s);
void cli_json_kv_int(cli_json *j, const char *key, int64_t v);
void cli_json_kv_uint(cli_json *j, const char *key, uint64_t v);
void cli_json_kv_double(cli_json *j, const char *key, double v);
void cli_json_kv_bool(cli_json *j, const char *key, bool v);
void cli_json_kv_rat(cli_json *j, const char *key, weft_rat v);

/* Ends the document with a newline. Returns 0, or -1 when the writer was
 * misused or the document is incomplete (nothing more is written then). */
int cli_json_finish(cli_json *j);

#endif
