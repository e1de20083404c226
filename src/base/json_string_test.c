#include <stdlib.h>

#include "base/json.h"
#include "base/testing.h"

/* s escaped with flags, in a static buffer. */
static const char *esc(const char *s, unsigned flags)
{
    static char out[256];
    FILE *f = fmemopen(out, sizeof out, "w");
    weft__json_string(f, s, flags);
    fclose(f);
    return out;
}

int main(void)
{
    /* Quotes, backslash, the short forms, other controls and DEL. */
    CHECK_STR(esc("a\"b\\c/d", WEFT__JSON_STRICT), "\"a\\\"b\\\\c/d\"");
    CHECK_STR(esc("\b\f\n\r\t", WEFT__JSON_STRICT), "\"\\b\\f\\n\\r\\t\"");
    CHECK_STR(esc("\x01\x1f\x7f x", WEFT__JSON_STRICT), "\"\\u0001\\u001f\\u007f x\"");
    CHECK_STR(esc("", WEFT__JSON_STRICT), "\"\"");
    /* Well-formed UTF-8 passes: 2, 3 and 4 bytes, the edges of each range. */
    CHECK_STR(esc("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf", WEFT__JSON_STRICT),
              "\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"");
    /* Each byte that is not part of a well-formed sequence is U+FFFD: a stray
     * continuation, an overlong form, a surrogate, above U+10FFFF, a
     * truncated sequence (its lead byte alone; the ASCII after it stays). */
    CHECK_STR(esc("\x80", 0), "\"\\ufffd\"");
    CHECK_STR(esc("\xc0\xaf", 0), "\"\\ufffd\\ufffd\"");
    CHECK_STR(esc("\xe0\x80\xaf", 0), "\"\\ufffd\\ufffd\\ufffd\"");
    CHECK_STR(esc("\xed\xa0\x80", 0), "\"\\ufffd\\ufffd\\ufffd\"");
    CHECK_STR(esc("\xf4\x90\x80\x80", 0), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
    CHECK_STR(esc("\xe2\x82x", 0), "\"\\ufffd\\ufffdx\"");
    CHECK_STR(esc("\xff\xc3\xa9", 0), "\"\\ufffd\xc3\xa9\"");

    /* A plan's JSON: every control as \u00xx, bytes from 0x7F up raw. */
    unsigned plan = WEFT__JSON_CTRL_HEX | WEFT__JSON_RAW_BYTES;
    CHECK_STR(esc("a\n\t\"\\\x7f\xff\xc3\xa9", plan),
              "\"a\\u000a\\u0009\\\"\\\\\x7f\xff\xc3\xa9\"");
    /* A trace: controls dropped, bytes from 0x7F up raw. */
    unsigned trace = WEFT__JSON_CTRL_DROP | WEFT__JSON_RAW_BYTES;
    CHECK_STR(esc("a\n\x01"
                  "b\"\\\x7f\x80",
                  trace),
              "\"ab\\\"\\\\\x7f\x80\"");

    /* Without quotes. */
    char out[32];
    FILE *f = fmemopen(out, sizeof out, "w");
    weft__json_escape(f, "x\"y", 0);
    fclose(f);
    CHECK_STR(out, "x\\\"y");
    return weft_test_done();
}
