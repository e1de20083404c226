/* The tuning table text format, version 1 (weft/tuning.h has the grammar,
 * docs/run.md the reasons). One pass over the text, line by line; every
 * error names the table and the line, and nothing is returned after one. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/file.h"
#include "run/tuning_internal.h"

weft_err weft_tuning_write(const weft_tuning *tt, FILE *f)
{
    fprintf(f, "weft-tuning %u\n", WEFT_TUNING_VERSION);
    fprintf(f, "# The simulator's ranking of the plans the runtime can run, per collective and\n"
               "# size (weft tune; docs/run.md, \"Tuning tables\").\n");
    fprintf(f, "fabric %s\n", tt->fabric);
    fprintf(f, "hash %016" PRIx64 "\n", tt->info.fabric_hash);
    fprintf(f, "ranks %u\n", tt->info.ranks);
    fprintf(f, "sim %s\n", tt->sim);
    for (uint32_t i = 0; i < tt->info.entries; i++) {
        const weft_tuning_entry *x = &tt->entries[i].pub;
        fprintf(f, "entry %s %" PRIu64, weft_coll_name(x->coll), x->bytes);
        for (uint32_t k = 0; k < x->n; k++)
            fprintf(f, " %s=%.9g", x->names[k], x->times_s[k]);
        fputc('\n', f);
    }
    return ferror(f) ? WEFT_EIO : WEFT_OK;
}

/* The parser's state: the table being built and a scratch copy of the
 * current line, cut into tokens in place. */
typedef struct reader {
    const char *name;
    uint32_t line;
    char *buf;
    size_t cap;
    char *tok[1 + 2 + 64]; /* "entry", coll, size, then up to 64 candidates */
    uint32_t ntok;
    weft_diag *d;
} reader;

#define MAX_TOKENS (sizeof((reader *)0)->tok / sizeof *((reader *)0)->tok)

static weft_err fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static weft_err fail(reader *r, const char *fmt, ...)
{
    char why[WEFT_DIAG_MSG_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return weft_diag_set(r->d, WEFT_EPARSE, "%s:%u: %s", r->name, r->line, why);
}

/* Splits the line in r->buf at blanks. False when it has too many tokens. */
static bool split(reader *r)
{
    r->ntok = 0;
    char *p = r->buf;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (!*p)
            return true;
        if (r->ntok == MAX_TOKENS)
            return false;
        r->tok[r->ntok++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r')
            p++;
        if (*p)
            *p++ = '\0';
    }
}

/* The rest of the line after the first token, trimmed. */
static const char *rest(char *line)
{
    char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    while (*p && *p != ' ' && *p != '\t')
        p++;
    while (*p == ' ' || *p == '\t')
        p++;
    char *end = p + strlen(p);
    while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        *--end = '\0';
    return p;
}

static bool parse_u64(const char *s, int base, uint64_t *out)
{
    if (!*s || *s == '-' || *s == '+' || *s == ' ')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, base);
    if (*end || errno)
        return false;
    *out = v;
    return true;
}

static const char *const header_key[] = {"weft-tuning", "fabric", "hash", "ranks", "sim"};
enum { NHEADER = 5 };

static weft_err header_line(reader *r, weft_tuning *tt, unsigned step, char *raw)
{
    const char *key = header_key[step];
    if (strcmp(r->tok[0], key) != 0) {
        if (step == 0)
            return fail(r, "expected 'weft-tuning %d' (a weft tuning table)", WEFT_TUNING_VERSION);
        return fail(r, "expected the '%s' line, got '%s'", key, r->tok[0]);
    }
    uint64_t v;
    switch (step) {
    case 0:
        if (r->ntok != 2 || !parse_u64(r->tok[1], 10, &v))
            return fail(r, "expected 'weft-tuning %d' (a weft tuning table)", WEFT_TUNING_VERSION);
        if (v != WEFT_TUNING_VERSION)
            return fail(r, "unsupported tuning table version %s (this weft reads version %d)",
                        r->tok[1], WEFT_TUNING_VERSION);
        return WEFT_OK;
    case 1:
    case 4: {
        char *copy = weft__strdup(rest(raw));
        if (!copy)
            return weft_diag_code(r->d, WEFT_ENOMEM);
        char **slot = step == 1 ? &tt->fabric : &tt->sim;
        weft__free(*slot);
        *slot = copy;
        tt->info.fabric = tt->fabric;
        tt->info.sim = tt->sim;
        return WEFT_OK;
    }
    case 2:
        if (r->ntok != 2 || strlen(r->tok[1]) != 16 || !parse_u64(r->tok[1], 16, &v))
            return fail(r, "expected 'hash' and 16 hex digits");
        tt->info.fabric_hash = v;
        return WEFT_OK;
    default:
        if (r->ntok != 2 || !parse_u64(r->tok[1], 10, &v) || v == 0 || v > UINT32_MAX)
            return fail(r, "expected 'ranks' and a rank count >= 1");
        tt->info.ranks = (uint32_t)v;
        return WEFT_OK;
    }
}

static weft_err entry_line(reader *r, weft_tuning *tt)
{
    if (strcmp(r->tok[0], "entry") != 0)
        return fail(r, "expected an 'entry' line, got '%s'", r->tok[0]);
    if (r->ntok < 4)
        return fail(r, "expected 'entry COLL SIZE NAME=SECONDS ...'");
    weft_coll coll;
    if (!weft_coll_parse(r->tok[1], strlen(r->tok[1]), &coll))
        return fail(r, "unknown collective '%s'", r->tok[1]);
    uint64_t bytes;
    if (!parse_u64(r->tok[2], 10, &bytes))
        return fail(r, "bad size '%s' (expected bytes, a power of two)", r->tok[2]);
    uint32_t n = r->ntok - 3;
    const char *names[MAX_TOKENS];
    double times[MAX_TOKENS];
    for (uint32_t i = 0; i < n; i++) {
        char *tok = r->tok[3 + i], *eq = strchr(tok, '=');
        if (!eq || eq == tok)
            return fail(r, "expected NAME=SECONDS, got '%s'", tok);
        *eq = '\0';
        char *end;
        errno = 0;
        times[i] = strtod(eq + 1, &end);
        if (!eq[1] || *end || errno)
            return fail(r, "bad time '%s' of '%s' (expected seconds)", eq + 1, tok);
        names[i] = tok;
        if (i > 0 && times[i] < times[i - 1])
            return fail(r,
                        "'%s' is listed after '%s' but is faster: the ranking must be fastest "
                        "first",
                        tok, names[i - 1]);
    }
    char why[160];
    if (weft__tuning_check_entry(tt, coll, bytes, n, names, times, why, sizeof why))
        return fail(r, "%s", why);
    if (weft__tuning_append(tt, coll, bytes, n, names, times, r->line))
        return weft_diag_code(r->d, WEFT_ENOMEM);
    return WEFT_OK;
}

weft_err weft_tuning_parse(const char *text, size_t len, const char *name, weft_tuning **out,
                           weft_diag *d)
{
    reader r = {.name = name ? name : "<table>", .d = d};
    weft_tuning *tt;
    weft_err e = weft__tuning_alloc(NULL, NULL, r.name, &tt);
    if (e)
        return weft_diag_code(d, e);
    unsigned step = 0;
    size_t at = 0;
    while (at < len && !e) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        r.line++;
        const char *nul = memchr(text + at, '\0', n);
        if (nul) {
            e = fail(&r, "a NUL byte at column %zu (binary data, not text)",
                     (size_t)(nul - (text + at)) + 1);
            break;
        }
        if (weft__grow((void **)&r.buf, &r.cap, n + 1, 1)) {
            e = weft_diag_set(d, WEFT_ENOMEM, "%s:%u: out of memory for a line of %zu bytes",
                              r.name, r.line, n);
            break;
        }
        memcpy(r.buf, text + at, n);
        r.buf[n] = '\0';
        at += n + 1;
        char *raw = weft__strdup(r.buf); /* split() cuts r.buf; fabric/sim want the line */
        if (!raw) {
            e = weft_diag_code(d, WEFT_ENOMEM);
            break;
        }
        if (!split(&r))
            e = fail(&r, "more than %zu tokens", MAX_TOKENS);
        else if (r.ntok == 0 || r.tok[0][0] == '#')
            ;
        else if (step < NHEADER)
            e = header_line(&r, tt, step++, raw);
        else
            e = entry_line(&r, tt);
        weft__free(raw);
    }
    if (!e && step < NHEADER) {
        if (step == 0)
            e = weft_diag_set(d, WEFT_EPARSE,
                              "%s: empty; expected 'weft-tuning 1' (a weft tuning table)", r.name);
        else
            e = weft_diag_set(d, WEFT_EPARSE, "%s:%u: the header ends before its '%s' line", r.name,
                              r.line, header_key[step]);
    }
    weft__free(r.buf);
    if (e) {
        weft_tuning_free(tt);
        return e;
    }
    *out = tt;
    return WEFT_OK;
}

weft_err weft_tuning_load_file(const char *path, weft_tuning **out, weft_diag *d)
{
    char *buf = NULL;
    size_t n = 0;
    weft_err e = weft__file_read(path, WEFT_TUNING_MAX_FILE_BYTES, "a tuning table", &buf, &n, d);
    if (e)
        return e;
    e = weft_tuning_parse(buf, n, path, out, d);
    weft__free(buf);
    return e;
}
