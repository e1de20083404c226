/* The lookup trace reader (weft_emb_trace_parse, weft/embedding.h;
 * docs/embedding.md "Trace files").
 *
 * One pass over the text, one lookup a line, each handed to the
 * accumulator as it is read: O(1) memory beyond the text, about 10 bytes a
 * lookup. Every error names NAME:LINE:COL, the column the byte column
 * (from 1) of the offending field or character. */
#include <inttypes.h>
#include <string.h>

#include "base/alloc.h"
#include "base/file.h"
#include "work/emb_internal.h"

typedef struct reader {
    const char *p, *end, *line; /* the cursor, the text's end, the line's start */
    uint64_t lineno;
    const char *name;
    weft_diag *d;
} reader;

static const char *const field_names[] = {"sample", "table", "row"};

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static bool at_eol(const reader *r)
{
    return r->p == r->end || *r->p == '\n' || *r->p == '#' ||
           (*r->p == '\r' && (r->p + 1 == r->end || r->p[1] == '\n'));
}

static void skip_blanks(reader *r)
{
    while (r->p < r->end && is_blank(*r->p))
        r->p++;
}

static unsigned col_of(const reader *r, const char *at)
{
    return (unsigned)(at - r->line) + 1;
}

/* The token at `at` for a message: up to a blank, ',', '#' or the line's
 * end, at most 32 bytes. */
static int token_len(const reader *r, const char *at)
{
    const char *q = at;
    while (q < r->end && q - at < 32 && !is_blank(*q) && *q != ',' && *q != '\n' && *q != '#' &&
           *q != '\r')
        q++;
    return (int)(q - at);
}

static weft_err fail_at(reader *r, const char *at, weft_err e, const char *what)
{
    return weft_diag_set(r->d, e, "%s:%" PRIu64 ":%u: %s", r->name, r->lineno, col_of(r, at), what);
}

/* Field f of the line, a whole decimal number. */
static weft_err read_field(reader *r, int f, uint64_t *out)
{
    skip_blanks(r);
    const char *at = r->p;
    if (at_eol(r)) {
        char msg[160];
        snprintf(msg, sizeof msg, "%d field%s: a lookup is sample,table,row (the %s is missing)", f,
                 f == 1 ? "" : "s", field_names[f]);
        return fail_at(r, at, WEFT_EPARSE, msg);
    }
    uint64_t v = 0;
    bool over = false;
    while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
        unsigned dig = (unsigned)(*r->p - '0');
        if (v > (UINT64_MAX - dig) / 10)
            over = true;
        v = v * 10 + dig;
        r->p++;
    }
    const char *stop = r->p;
    bool clean = stop > at && (stop == r->end || is_blank(*stop) || *stop == ',' || *stop == '\n' ||
                               *stop == '#' || *stop == '\r');
    if (!clean) {
        char msg[200];
        snprintf(msg, sizeof msg, "'%.*s' is not a %s number (a whole number from 0)",
                 token_len(r, at), at, field_names[f]);
        return fail_at(r, at, WEFT_EPARSE, msg);
    }
    if (over) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s '%.*s' is more than 2^64-1", field_names[f], (int)(stop - at),
                 at);
        return fail_at(r, at, WEFT_EPARSE, msg);
    }
    *out = v;
    return WEFT_OK;
}

/* The ',' after field f. */
static weft_err read_comma(reader *r, int f)
{
    skip_blanks(r);
    if (r->p < r->end && *r->p == ',') {
        r->p++;
        return WEFT_OK;
    }
    if (at_eol(r)) {
        char msg[160];
        snprintf(msg, sizeof msg, "%d field%s: a lookup is sample,table,row (the %s is missing)",
                 f + 1, f ? "s" : "", field_names[f + 1]);
        return fail_at(r, r->p, WEFT_EPARSE, msg);
    }
    char msg[160];
    snprintf(msg, sizeof msg, "expected ',' after the %s, found '%c'", field_names[f], *r->p);
    return fail_at(r, r->p, WEFT_EPARSE, msg);
}

/* One lookup line at r->p (not blank, not a comment). */
static weft_err read_lookup(reader *r, weft_emb_acc *a)
{
    uint64_t v[3];
    const char *at[3];
    for (int f = 0; f < 3; f++) {
        if (f) {
            weft_err e = read_comma(r, f - 1);
            if (e)
                return e;
        }
        skip_blanks(r);
        at[f] = r->p;
        weft_err e = read_field(r, f, &v[f]);
        if (e)
            return e;
    }
    skip_blanks(r);
    if (!at_eol(r)) {
        char msg[160];
        snprintf(msg, sizeof msg, "unexpected '%.*s' after the row: a lookup is sample,table,row",
                 token_len(r, r->p) ? token_len(r, r->p) : 1, r->p);
        return fail_at(r, r->p, WEFT_EPARSE, msg);
    }
    emb_field bad;
    weft_diag sub;
    if (v[1] > UINT32_MAX) {
        uint32_t nt = weft__emb_acc_workload(a)->ntables;
        char msg[160];
        snprintf(msg, sizeof msg,
                 "table %" PRIu64 ": the workload has %" PRIu32 " tables, 0 to %" PRIu32, v[1], nt,
                 nt - 1);
        return fail_at(r, at[1], WEFT_EINVAL, msg);
    }
    weft_err e = weft__emb_acc_add(a, v[0], (uint32_t)v[1], v[2], &bad, &sub);
    if (e)
        return fail_at(r, at[bad], e, sub.msg);
    return WEFT_OK;
}

weft_err weft_emb_trace_parse(const char *text, size_t len, const char *name, weft_emb_acc *a,
                              weft_diag *d)
{
    reader r = {.p = text, .end = text + len, .line = text, .lineno = 1, .name = name, .d = d};
    while (r.p < r.end) {
        r.line = r.p;
        skip_blanks(&r);
        if (!at_eol(&r)) {
            weft_err e = read_lookup(&r, a);
            if (e)
                return e;
        }
        const char *nl = memchr(r.p, '\n', (size_t)(r.end - r.p));
        if (!nl)
            break;
        r.p = nl + 1;
        r.lineno++;
    }
    return WEFT_OK;
}

weft_err weft_emb_trace_load_file(const char *path, weft_emb_acc *a, weft_diag *d)
{
    char *text;
    size_t len;
    weft_err e = weft__file_read(path, WEFT_EMB_MAX_TRACE_BYTES, "a lookup trace", &text, &len, d);
    if (e)
        return e;
    e = weft_emb_trace_parse(text, len, path, a, d);
    weft__free(text);
    return e;
}
