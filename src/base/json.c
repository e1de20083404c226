/* The JSON string escaper. See json.h. */
#include "base/json.h"

size_t weft__utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0; /* no overlong forms */
        if (c == 0xED)
            hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        if (c == 0xF4)
            hi = 0x8F; /* nothing above U+10FFFF */
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

/* The short escape of control c, or NULL when it has none. */
static const char *short_form(unsigned char c)
{
    switch (c) {
    case '\b':
        return "\\b";
    case '\f':
        return "\\f";
    case '\n':
        return "\\n";
    case '\r':
        return "\\r";
    case '\t':
        return "\\t";
    default:
        return NULL;
    }
}

void weft__json_escape(FILE *f, const char *s, unsigned flags)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        /* A run of bytes that need nothing goes out in one write. */
        const unsigned char *run = p;
        while (*p >= 0x20 && *p < 0x7F && *p != '"' && *p != '\\')
            p++;
        if (p > run)
            fwrite(run, 1, (size_t)(p - run), f);
        unsigned char c = *p;
        if (!c)
            break;
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc(c, f);
            p++;
        } else if (c < 0x20) {
            const char *sf = flags & WEFT__JSON_CTRL_HEX ? NULL : short_form(c);
            if (flags & WEFT__JSON_CTRL_DROP)
                ;
            else if (sf)
                fputs(sf, f);
            else
                fprintf(f, "\\u%04x", c);
            p++;
        } else if (flags & WEFT__JSON_RAW_BYTES) {
            fputc(c, f);
            p++;
        } else if (c == 0x7F) {
            fputs("\\u007f", f);
            p++;
        } else {
            size_t n = weft__utf8_len(p);
            if (n) {
                fwrite(p, 1, n, f);
                p += n;
            } else {
                fputs("\\ufffd", f);
                p++;
            }
        }
    }
}

void weft__json_string(FILE *f, const char *s, unsigned flags)
{
    fputc('"', f);
    weft__json_escape(f, s, flags);
    fputc('"', f);
}
