/* Over 900 lines on purpose: the parser and the writer of one format,
 * kept beside each other so that every field is read as it is written.
 *
 * The .plan text format: a strict parser and a canonical writer.
 * docs/plan-format.md is the reference. The parser checks every byte
 * (UTF-8, no NUL, no control characters), every token and the structure
 * (header before ops, ids in order, deps naming existing ops); it never
 * returns a half-built plan. Deps naming a later op are remembered with
 * their position and checked at the end, so forward deps cost memory only
 * when they occur. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/file.h"
#include "plan/plan_internal.h"

/* An op with paths in many circuit epochs is one long line (a 128-rank
 * mixnet circuit plan writes 83,016 bytes), so lines may be long; the token
 * array is sized by the text's most tokens on a line (max_tokens), never by
 * this bound. */
#define LINE_MAX_BYTES 16777216u

/* A token: bytes [s, s+len) at 1-based column col. */
typedef struct tok {
    const char *s;
    size_t len;
    uint32_t col;
} tok;

/* A dep naming an op not yet seen, checked at the end. */
typedef struct fwd_dep {
    uint32_t dep, line, col;
} fwd_dep;

typedef struct parser {
    const char *name;
    size_t max_tokens; /* the token array's size: the most tokens of a line + 1 */
    uint32_t line;
    weft_diag *d;
    weft_plan_info info;
    unsigned seen; /* header keys seen, bit per key */
    bool magic;
    weft_plan *plan;
    uint32_t *deps;
    size_t deps_cap;
    fwd_dep *fwd;
    size_t nfwd, fwd_cap;
    const char **nodes;
    char *node_buf;
    size_t nodes_cap, node_buf_cap;
    uint64_t *traffic;     /* `traffic` lines read so far (N*N), or NULL */
    size_t traffic_next;   /* the entry the next line must start at */
    uint64_t traffic_sum;  /* of the entries read */
    uint32_t traffic_line; /* the first `traffic` line */
    uint64_t op_size;      /* a `size` line: the plan carries op sizes (bytes=) */
    uint64_t *op_bytes;    /* bytes= of each op read so far */
    size_t op_bytes_cap;
    uint64_t step_bytes; /* a `forward` line: the step, 0 for none */
    double step_gbps;    /* and its rate cap, 0 for none */
    bool whole;          /* a `whole` line */
} parser;

enum { H_COLL = 1, H_RANKS = 2, H_ROOT = 4, H_CHUNKS = 8, H_SCRATCH = 16, H_INPLACE = 32 };

static weft_err fail(parser *ps, uint32_t col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static weft_err fail(parser *ps, uint32_t col, const char *fmt, ...)
{
    char msg[WEFT_DIAG_MSG_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (col)
        return weft_diag_set(ps->d, WEFT_EPARSE, "%s:%u:%u: %s", ps->name, ps->line, col, msg);
    return weft_diag_set(ps->d, WEFT_EPARSE, "%s:%u: %s", ps->name, ps->line, msg);
}

/* Names the file, the line and what was being built, so that a plan too
 * large for the machine is told from a broken one. */
static weft_err oom(parser *ps)
{
    return weft_diag_set(ps->d, WEFT_ENOMEM, "%s:%u: out of memory building the plan (%u ops read)",
                         ps->name, ps->line, ps->plan ? ps->plan->nops : 0);
}

static bool tok_is(const tok *t, const char *word)
{
    return strlen(word) == t->len && memcmp(t->s, word, t->len) == 0;
}

/* Length of a valid UTF-8 sequence at s[0..n), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, min = 0x10000;
    else
        return 0;
    if (len > n)
        return 0;
    unsigned cp = c & (0x3f >> (len - 1));
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

/* Checks the bytes of one line (without its newline). */
static weft_err check_bytes(parser *ps, const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0)
            return fail(ps, (uint32_t)i + 1, "NUL byte (binary data, not text)");
        if (c == '\r' && i + 1 == n)
            break; /* CRLF line end */
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return fail(ps, (uint32_t)i + 1, "control character 0x%02x", c);
        size_t l = utf8_len((const unsigned char *)s + i, n - i);
        if (!l)
            return fail(ps, (uint32_t)i + 1, "invalid UTF-8");
        i += l;
    }
    return WEFT_OK;
}

/* Splits a line into at most max tokens; the comment and a final CR are
 * dropped. Writes the count; more tokens than max give *n = max + 1. */
static size_t split(const char *s, size_t n, tok *toks, size_t max)
{
    size_t count = 0, i = 0;
    while (i < n) {
        while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
            i++;
        if (i >= n || s[i] == '#')
            break;
        size_t start = i;
        while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != '#' && s[i] != '\r')
            i++;
        if (count < max)
            toks[count] = (tok){s + start, i - start, (uint32_t)start + 1};
        count++;
    }
    return count > max ? max + 1 : count;
}

/* A decimal uint32 (digits only). Each failure returns the constant, not
 * fail()'s result (a variadic function, never inlined), so that the compiler
 * sees that *out is set whenever WEFT_OK is returned (gcc -O3 warned that
 * its callers' numbers "may be used uninitialized"). */
static weft_err parse_u32(parser *ps, const char *s, size_t len, uint32_t col, uint32_t *out)
{
    if (len == 0) {
        fail(ps, col, "expected a number");
        return WEFT_EPARSE;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            fail(ps, col, "bad number '%.*s'", (int)len, s);
            return WEFT_EPARSE;
        }
        v = v * 10 + (uint64_t)(s[i] - '0');
        if (v > UINT32_MAX) {
            fail(ps, col, "number too large '%.*s'", (int)len, s);
            return WEFT_EPARSE;
        }
    }
    *out = (uint32_t)v;
    return WEFT_OK;
}

/* A byte count up to 2^64-1 (`size`, bytes=). */
static weft_err parse_u64(parser *ps, const char *s, size_t len, uint32_t col, uint64_t *out)
{
    if (len == 0)
        return fail(ps, col, "expected a number");
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned dg = (unsigned)(s[i] - '0');
        if (s[i] < '0' || s[i] > '9')
            return fail(ps, col, "bad number '%.*s'", (int)len, s);
        if (v > (UINT64_MAX - dg) / 10)
            return fail(ps, col, "number too large '%.*s'", (int)len, s);
        v = v * 10 + dg;
    }
    *out = v;
    return WEFT_OK;
}

/* A circuit epoch (weft/plan.h, "Circuits"): at most 9 digits, below
 * WEFT_PLAN_MAX_EPOCHS. Returns the constant as parse_u32 does. */
static weft_err parse_epoch(parser *ps, const char *s, size_t len, uint32_t col, uint32_t *out)
{
    uint64_t ep = 0;
    bool ok = len > 0 && len <= 9;
    for (size_t i = 0; ok && i < len; i++) {
        ok = s[i] >= '0' && s[i] <= '9';
        ep = ep * 10 + (uint64_t)(s[i] - '0');
    }
    if (!ok || ep >= WEFT_PLAN_MAX_EPOCHS) {
        fail(ps, col, "bad epoch '%.*s' (0 to %u)", (int)len, s, WEFT_PLAN_MAX_EPOCHS - 1);
        return WEFT_EPARSE;
    }
    *out = (uint32_t)ep;
    return WEFT_OK;
}

static const struct {
    const char *word;
    unsigned bit;
} header_keys[] = {{"coll", H_COLL},     {"ranks", H_RANKS},     {"root", H_ROOT},
                   {"chunks", H_CHUNKS}, {"scratch", H_SCRATCH}, {"inplace", H_INPLACE}};

static weft_err parse_header(parser *ps, unsigned bit, const char *word, const tok *t, size_t nt)
{
    if (ps->plan)
        return fail(ps, t[0].col, "'%s' must come before the first op", word);
    if (ps->seen & bit)
        return fail(ps, t[0].col, "'%s' given twice", word);
    if (nt != 2)
        return fail(ps, nt < 2 ? t[0].col : t[2].col, "'%s' takes one value", word);
    ps->seen |= bit;
    const tok *v = &t[1];
    uint32_t n;
    weft_err e;
    switch (bit) {
    case H_COLL:
        if (!weft_coll_parse(v->s, v->len, &ps->info.coll))
            return fail(ps, v->col,
                        "unknown collective '%.*s' (expected allgather, reducescatter, allreduce, "
                        "broadcast, reduce or alltoall)",
                        (int)v->len, v->s);
        return WEFT_OK;
    case H_INPLACE:
        if (tok_is(v, "yes"))
            ps->info.inplace = true;
        else if (tok_is(v, "no"))
            ps->info.inplace = false;
        else
            return fail(ps, v->col, "inplace must be yes or no, not '%.*s'", (int)v->len, v->s);
        return WEFT_OK;
    default:
        break;
    }
    if ((e = parse_u32(ps, v->s, v->len, v->col, &n)))
        return e;
    switch (bit) {
    case H_RANKS:
        if (n < 1 || n > WEFT_PLAN_MAX_RANKS)
            return fail(ps, v->col, "ranks must be between 1 and %u", WEFT_PLAN_MAX_RANKS);
        ps->info.nranks = n;
        break;
    case H_ROOT:
        ps->info.root.v = n;
        break;
    case H_CHUNKS:
        if (n < 1 || n > WEFT_PLAN_MAX_SLOTS)
            return fail(ps, v->col, "chunks must be between 1 and %u", WEFT_PLAN_MAX_SLOTS);
        ps->info.chunks = n;
        break;
    case H_SCRATCH:
        if (n > WEFT_PLAN_MAX_SLOTS)
            return fail(ps, v->col, "scratch must be at most %u", WEFT_PLAN_MAX_SLOTS);
        ps->info.scratch = n;
        break;
    }
    return WEFT_OK;
}

/* "traffic ROW COL V...": entries ROW, COL.. of an alltoallv plan's matrix
 * (weft/plan.h), in row-major order, a line within one row. */
static weft_err parse_traffic(parser *ps, const tok *t, size_t nt)
{
    if (ps->plan)
        return fail(ps, t[0].col, "'traffic' must come before the first op");
    if (!(ps->seen & H_RANKS))
        return fail(ps, t[0].col, "'traffic' needs 'ranks' before it");
    uint32_t n = ps->info.nranks, row, col;
    if (n > WEFT_TRAFFIC_MAX_RANKS)
        return fail(ps, t[0].col, "a traffic matrix has at most %u ranks, the plan %u",
                    WEFT_TRAFFIC_MAX_RANKS, n);
    if (nt < 4)
        return fail(ps, t[0].col, "'traffic' takes a row, a column and at least one entry");
    weft_err e;
    if ((e = parse_u32(ps, t[1].s, t[1].len, t[1].col, &row)) ||
        (e = parse_u32(ps, t[2].s, t[2].len, t[2].col, &col)))
        return e;
    size_t nn = (size_t)n * n;
    if (ps->traffic_next == nn)
        return fail(ps, t[0].col, "more 'traffic' lines than the %u x %u matrix has entries", n, n);
    uint32_t want_row = (uint32_t)(ps->traffic_next / n),
             want_col = (uint32_t)(ps->traffic_next % n);
    if (row != want_row || col != want_col)
        return fail(ps, t[1].col,
                    "traffic entries come in order: expected row %u column %u here, not row %u "
                    "column %u",
                    want_row, want_col, row, col);
    if (nt - 3 > n - col)
        return fail(ps, 3 + (size_t)(n - col) < ps->max_tokens ? t[3 + (n - col)].col : t[0].col,
                    "row %u has %u entries; this line goes past its end", row, n);
    if (!ps->traffic) {
        ps->traffic = weft__calloc(nn, sizeof *ps->traffic);
        if (!ps->traffic)
            return oom(ps);
        ps->traffic_line = ps->line;
    }
    for (size_t i = 3; i < nt; i++) {
        const tok *v = &t[i];
        uint64_t x = 0;
        for (size_t k = 0; k < v->len; k++) {
            unsigned dg = (unsigned)(v->s[k] - '0');
            if (v->s[k] < '0' || v->s[k] > '9')
                return fail(ps, v->col, "bad traffic entry '%.*s' (bytes: a whole number >= 0)",
                            (int)v->len, v->s);
            if (x > (UINT64_MAX - dg) / 10)
                return fail(ps, v->col, "traffic entry '%.*s' is more than 2^64-1 bytes",
                            (int)v->len, v->s);
            x = x * 10 + dg;
        }
        if (x > UINT64_MAX - ps->traffic_sum)
            return fail(ps, v->col, "the traffic matrix sums to more than 2^64-1 bytes here");
        ps->traffic_sum += x;
        ps->traffic[ps->traffic_next++] = x;
    }
    return WEFT_OK;
}

/* "size S": the ops carry their bytes (bytes=) at collective size S
 * (weft/plan.h, "Sized plans"). */
static weft_err parse_size(parser *ps, const tok *t, size_t nt)
{
    if (ps->plan)
        return fail(ps, t[0].col, "'size' must come before the first op");
    if (ps->op_size)
        return fail(ps, t[0].col, "'size' given twice");
    if (nt != 2)
        return fail(ps, t[0].col, "'size' takes one value, the collective's bytes");
    weft_err e = parse_u64(ps, t[1].s, t[1].len, t[1].col, &ps->op_size);
    if (e)
        return e;
    if (ps->op_size == 0)
        return fail(ps, t[1].col, "'size' must be at least 1 byte");
    return WEFT_OK;
}

/* A rate in GB/s (`forward`): a positive decimal, digits with at most one
 * point and an optional exponent (e or E, a sign, digits), as the writer
 * prints it; at most 40 bytes; finite and at least WEFT_PLAN_STEP_GBPS_MIN
 * (weft/plan.h: a slower step overflows the simulator's clock). */
static weft_err parse_gbps(parser *ps, const tok *t, double *out)
{
    char buf[41];
    size_t i = 0, digits = 0;
    bool ok = t->len < sizeof buf;
    for (; ok && i < t->len && t->s[i] >= '0' && t->s[i] <= '9'; i++)
        digits++;
    if (ok && i < t->len && t->s[i] == '.')
        for (i++; i < t->len && t->s[i] >= '0' && t->s[i] <= '9'; i++)
            digits++;
    if (ok && digits && i < t->len && (t->s[i] == 'e' || t->s[i] == 'E')) {
        size_t e0 = ++i < t->len && (t->s[i] == '+' || t->s[i] == '-') ? ++i : i;
        while (i < t->len && t->s[i] >= '0' && t->s[i] <= '9')
            i++;
        ok = i > e0;
    }
    ok = ok && digits && i == t->len;
    double v = 0;
    if (ok) {
        memcpy(buf, t->s, t->len);
        buf[t->len] = '\0';
        v = strtod(buf, NULL);
    }
    if (!ok || !(v > 0) || v == INFINITY)
        return fail(ps, t->col, "the step's rate must be a positive number of GB/s, not '%.*s'",
                    (int)t->len, t->s);
    if (v < WEFT_PLAN_STEP_GBPS_MIN)
        return fail(ps, t->col,
                    "the step's rate must be at least %g GB/s (a byte a second), not '%.*s'",
                    WEFT_PLAN_STEP_GBPS_MIN, (int)t->len, t->s);
    *out = v;
    return WEFT_OK;
}

/* "forward STEP [GBPS]": the plan is forwarded per step of STEP bytes, a
 * hop's step moved at most GBPS GB/s (weft_plan_set_step_forward: NCCL's
 * tree with Simple). */
static weft_err parse_forward(parser *ps, const tok *t, size_t nt)
{
    if (ps->plan)
        return fail(ps, t[0].col, "'forward' must come before the first op");
    if (ps->step_bytes)
        return fail(ps, t[0].col, "'forward' given twice");
    if (nt != 2 && nt != 3)
        return fail(ps, t[0].col,
                    "'forward' takes the step's bytes and, optionally, its rate in GB/s");
    weft_err e = parse_u64(ps, t[1].s, t[1].len, t[1].col, &ps->step_bytes);
    if (e)
        return e;
    if (ps->step_bytes == 0)
        return fail(ps, t[1].col, "the step must be at least 1 byte");
    return nt == 3 ? parse_gbps(ps, &t[2], &ps->step_gbps) : WEFT_OK;
}

/* "whole": the plan's messages move whole (weft_plan_set_whole_messages:
 * the compressed and sparse all-reduces). */
static weft_err parse_whole(parser *ps, const tok *t, size_t nt)
{
    if (ps->plan)
        return fail(ps, t[0].col, "'whole' must come before the first op");
    if (ps->whole)
        return fail(ps, t[0].col, "'whole' given twice");
    if (nt != 1)
        return fail(ps, t[1].col, "'whole' takes nothing, not '%.*s'", (int)t[1].len, t[1].s);
    ps->whole = true;
    return WEFT_OK;
}

/* Creates the plan once the header is complete; col locates the statement
 * that needs it (0 at the end of the file). */
static weft_err finish_header(parser *ps, uint32_t col)
{
    static const struct {
        unsigned bit;
        const char *word;
    } required[] = {{H_COLL, "coll"}, {H_RANKS, "ranks"}, {H_CHUNKS, "chunks"}};
    for (size_t i = 0; i < 3; i++) {
        if (!(ps->seen & required[i].bit))
            return fail(ps, col, "missing '%s' in the header", required[i].word);
    }
    const char *coll = weft_coll_name(ps->info.coll);
    if (weft_coll_has_root(ps->info.coll)) {
        if (!(ps->seen & H_ROOT))
            return fail(ps, col, "missing 'root' in the header (%s has a root)", coll);
        if (ps->info.root.v >= ps->info.nranks)
            return fail(ps, col, "root %u is not a rank (the plan has %u ranks)", ps->info.root.v,
                        ps->info.nranks);
    } else if (ps->seen & H_ROOT) {
        return fail(ps, col, "'root' given for %s, which has no root", coll);
    }
    /* The total is checked here, before weft_plan_new, to say which limit;
     * every factor is already within its own. */
    uint64_t total = weft_plan_info_total_slots(&ps->info);
    if (total > WEFT_PLAN_MAX_TOTAL_SLOTS)
        return fail(
            ps, col,
            "%u ranks with %u chunks and %u scratch slots hold %llu slots in all; the limit "
            "is %llu",
            ps->info.nranks, ps->info.chunks, ps->info.scratch, (unsigned long long)total,
            (unsigned long long)WEFT_PLAN_MAX_TOTAL_SLOTS);
    size_t nn = (size_t)ps->info.nranks * ps->info.nranks;
    if (ps->traffic && ps->info.coll != WEFT_COLL_ALLTOALL) {
        ps->line = ps->traffic_line;
        return fail(ps, 1, "'traffic' gives the sizes of an alltoall plan, not %s", coll);
    }
    if (ps->traffic && ps->op_size)
        return fail(ps, col,
                    "a plan has a traffic matrix or a 'size' line with op bytes, not both");
    if (ps->traffic && ps->traffic_next != nn)
        return fail(ps, col, "the traffic matrix is incomplete: %zu of its %u x %u entries given",
                    ps->traffic_next, ps->info.nranks, ps->info.nranks);
    weft_err e = weft_plan_new(&ps->info, &ps->plan);
    if (e == WEFT_ENOMEM)
        return oom(ps);
    if (e)
        return fail(ps, col, "buffers of more than %u slots per rank are not supported",
                    WEFT_PLAN_MAX_SLOTS);
    if (ps->traffic) {
        weft_traffic t = {ps->info.nranks, ps->traffic};
        if (weft_plan_set_traffic(ps->plan, &t, NULL))
            return oom(ps);
    }
    return WEFT_OK;
}

/* "RANK:BUF[INDEX]" */
static weft_err parse_slot(parser *ps, const tok *t, weft_rank *rank, weft_buf *buf,
                           uint32_t *index)
{
    const char *colon = memchr(t->s, ':', t->len);
    const char *open = memchr(t->s, '[', t->len);
    if (!colon || !open || open < colon || t->s[t->len - 1] != ']')
        return fail(ps, t->col, "bad slot '%.*s' (expected RANK:BUF[INDEX], e.g. 3:out[12])",
                    (int)t->len, t->s);
    weft_err e = parse_u32(ps, t->s, (size_t)(colon - t->s), t->col, &rank->v);
    if (e)
        return e;
    const char *b = colon + 1;
    size_t blen = (size_t)(open - b);
    uint32_t bcol = t->col + (uint32_t)(b - t->s);
    int k;
    for (k = 0; k < WEFT__BUF_COUNT; k++) {
        const char *n = weft_buf_name((weft_buf)k);
        if (strlen(n) == blen && memcmp(n, b, blen) == 0)
            break;
    }
    if (k == WEFT__BUF_COUNT)
        return fail(ps, bcol, "unknown buffer '%.*s' (expected in, out or scratch)", (int)blen, b);
    *buf = (weft_buf)k;
    const char *ix = open + 1;
    return parse_u32(ps, ix, (size_t)(t->s + t->len - 1 - ix), t->col + (uint32_t)(ix - t->s),
                     index);
}

/* "deps=A,B,C" value at v (len bytes, column col). */
static weft_err parse_deps(parser *ps, const char *v, size_t len, uint32_t col, uint32_t id,
                           uint32_t *ndeps)
{
    size_t n = 0, i = 0;
    for (;;) {
        size_t start = i;
        while (i < len && v[i] != ',')
            i++;
        uint32_t dep, dcol = col + (uint32_t)start;
        weft_err e = parse_u32(ps, v + start, i - start, dcol, &dep);
        if (e)
            return e;
        if (n >= UINT32_MAX)
            return fail(ps, dcol, "too many deps");
        if (weft__grow((void **)&ps->deps, &ps->deps_cap, n + 1, sizeof *ps->deps))
            return oom(ps);
        ps->deps[n++] = dep;
        if (dep >= id) {
            if (weft__grow((void **)&ps->fwd, &ps->fwd_cap, ps->nfwd + 1, sizeof *ps->fwd))
                return oom(ps);
            ps->fwd[ps->nfwd++] = (fwd_dep){dep, ps->line, dcol};
        }
        if (i >= len)
            break;
        i++; /* the comma */
    }
    *ndeps = (uint32_t)n;
    return WEFT_OK;
}

/* "path=SHARE:NODE,NODE,..." value; added to op id. */
static weft_err parse_path(parser *ps, const char *v, size_t len, uint32_t col, uint32_t id)
{
    const char *colon = memchr(v, ':', len);
    if (!colon)
        return fail(ps, col, "bad path '%.*s' (expected SHARE:NODE,NODE,...)", (int)len, v);
    weft_rat share;
    size_t used;
    size_t slen = (size_t)(colon - v);
    /* SHARE@EPOCH: the epoch of a circuit plan (weft/plan.h, "Circuits"). */
    const char *at = memchr(v, '@', slen);
    size_t shlen = at ? (size_t)(at - v) : slen;
    uint32_t epoch = WEFT_PLAN_NO_EPOCH;
    if (shlen == 0 || weft_rat_parse(v, shlen, &share, &used) || used != shlen)
        return fail(ps, col, "bad share '%.*s'", (int)shlen, v);
    if (at && parse_epoch(ps, at + 1, slen - shlen - 1, col + (uint32_t)shlen + 1, &epoch))
        return WEFT_EPARSE;
    /* Copy the node list so each name can be NUL-terminated. */
    size_t nlen = len - slen - 1;
    if (weft__grow((void **)&ps->node_buf, &ps->node_buf_cap, nlen + 1, 1))
        return oom(ps);
    memcpy(ps->node_buf, colon + 1, nlen);
    ps->node_buf[nlen] = '\0';
    size_t n = 0, i = 0;
    for (;;) {
        size_t start = i;
        while (i < nlen && ps->node_buf[i] != ',')
            i++;
        uint32_t ncol = col + (uint32_t)(slen + 1 + start);
        if (i == start)
            return fail(ps, ncol, "empty node name in path");
        if (i - start > WEFT_TOPO_NAME_MAX)
            return fail(ps, ncol, "node name longer than %u bytes", WEFT_TOPO_NAME_MAX);
        if (weft__grow((void **)&ps->nodes, &ps->nodes_cap, n + 1, sizeof *ps->nodes))
            return oom(ps);
        ps->nodes[n++] = ps->node_buf + start;
        bool last = i >= nlen;
        ps->node_buf[i] = '\0';
        if (last)
            break;
        i++;
    }
    if (n < 2)
        return fail(ps, col, "a path needs at least two nodes");
    weft_err e = weft_plan_add_path(ps->plan, id, share, ps->nodes, (uint32_t)n);
    if (e == WEFT_ENOMEM)
        return oom(ps);
    if (e)
        return fail(ps, col, "path too long");
    if (epoch != WEFT_PLAN_NO_EPOCH)
        weft_plan_set_path_epoch(ps->plan, id, weft_plan_op_num_paths(ps->plan, id) - 1, epoch);
    return WEFT_OK;
}

/* "circuit EPOCH OCS FROM TO" (weft/plan.h, "Circuits"): after the header;
 * the first one ends it as an op does. */
static weft_err parse_circuit(parser *ps, const tok *t, size_t nt)
{
    weft_err e;
    if (nt != 5)
        return fail(ps, t[0].col, "'circuit' takes 4 values: EPOCH OCS FROM TO");
    if (!ps->plan && (e = finish_header(ps, t[0].col)))
        return e;
    uint32_t ep;
    if (parse_epoch(ps, t[1].s, t[1].len, t[1].col, &ep))
        return WEFT_EPARSE;
    char name[3][WEFT_TOPO_NAME_MAX + 1];
    for (int k = 0; k < 3; k++) {
        const tok *x = &t[2 + k];
        if (x->len > WEFT_TOPO_NAME_MAX || memchr(x->s, ',', x->len))
            return fail(ps, x->col, "bad node name '%.*s' in a circuit", (int)x->len, x->s);
        memcpy(name[k], x->s, x->len);
        name[k][x->len] = '\0';
    }
    e = weft_plan_add_circuit(ps->plan, ep, name[0], name[1], name[2]);
    if (e == WEFT_ENOMEM)
        return oom(ps);
    if (e)
        return fail(ps, t[0].col, "too many circuits");
    return WEFT_OK;
}

enum { F_N = 1, F_CH = 2, F_DEPS = 4, F_BYTES = 8, F_COMPUTE = 16 };

static weft_err parse_op(parser *ps, const tok *t, size_t nt)
{
    weft_err e;
    if (!ps->plan && (e = finish_header(ps, t[0].col)))
        return e;
    uint32_t id, expect = ps->plan->nops;
    if (nt < 2)
        return fail(ps, t[0].col, "op line ends early: expected the op id");
    if ((e = parse_u32(ps, t[1].s, t[1].len, t[1].col, &id)))
        return e;
    if (id != expect)
        return fail(ps, t[1].col, "op id %u out of order (expected %u)", id, expect);
    if (expect >= WEFT_PLAN_MAX_OPS)
        return fail(ps, t[1].col, "too many ops");
    if (nt < 3)
        return fail(ps, t[0].col, "op line ends early: expected copy, reduce or nop");
    weft_op op = {0};
    size_t i = 3;
    if (tok_is(&t[2], "copy") || tok_is(&t[2], "reduce")) {
        op.kind = tok_is(&t[2], "copy") ? WEFT_OP_COPY : WEFT_OP_REDUCE;
        if (nt < 5)
            return fail(ps, t[nt - 1].col, "op line ends early: expected %s",
                        nt < 4 ? "the source slot" : "the destination slot");
        if ((e = parse_slot(ps, &t[3], &op.src_rank, &op.src_buf, &op.src_index)) ||
            (e = parse_slot(ps, &t[4], &op.dst_rank, &op.dst_buf, &op.dst_index)))
            return e;
        op.count = 1;
        i = 5;
    } else if (tok_is(&t[2], "nop")) {
        if (nt < 4)
            return fail(ps, t[2].col, "op line ends early: expected the nop's rank");
        if ((e = parse_u32(ps, t[3].s, t[3].len, t[3].col, &op.src_rank.v)))
            return e;
        op.kind = WEFT_OP_NOP;
        op.dst_rank = op.src_rank;
        i = 4;
    } else {
        return fail(ps, t[2].col, "unknown op kind '%.*s' (expected copy, reduce or nop)",
                    (int)t[2].len, t[2].s);
    }
    /* Fields; paths are added after the op exists, so remember them. */
    unsigned seen = 0;
    uint32_t ndeps = 0;
    uint64_t op_bytes = 0;
    weft_compute compute = WEFT_COMPUTE_NONE;
    size_t first_path = 0;
    for (; i < nt; i++) {
        const tok *f = &t[i];
        const char *eq = memchr(f->s, '=', f->len);
        size_t klen = eq ? (size_t)(eq - f->s) : f->len;
        const char *v = eq ? eq + 1 : NULL;
        size_t vlen = eq ? f->len - klen - 1 : 0;
        uint32_t vcol = f->col + (uint32_t)klen + 1;
        unsigned bit = 0;
        if (klen == 1 && f->s[0] == 'n')
            bit = F_N;
        else if (klen == 2 && memcmp(f->s, "ch", 2) == 0)
            bit = F_CH;
        else if (klen == 4 && memcmp(f->s, "deps", 4) == 0)
            bit = F_DEPS;
        else if (klen == 5 && memcmp(f->s, "bytes", 5) == 0)
            bit = F_BYTES;
        else if (klen == 7 && memcmp(f->s, "compute", 7) == 0)
            bit = F_COMPUTE;
        else if (klen == 4 && memcmp(f->s, "path", 4) == 0) {
            if (op.kind == WEFT_OP_NOP)
                return fail(ps, f->col, "a nop has no route");
            if (!eq)
                return fail(ps, f->col, "'path' needs a value (path=SHARE:NODE,NODE,...)");
            if (!first_path)
                first_path = i;
            continue;
        } else
            return fail(ps, f->col,
                        "unknown op field '%.*s' (expected n=, ch=, bytes=, compute=, deps= or "
                        "path=)",
                        (int)klen, f->s);
        if (first_path)
            return fail(ps, f->col, "'%.*s' must come before the paths", (int)klen, f->s);
        if (seen & bit)
            return fail(ps, f->col, "'%.*s' given twice", (int)klen, f->s);
        seen |= bit;
        if (!eq || vlen == 0)
            return fail(ps, f->col, "'%.*s' needs a value", (int)klen, f->s);
        if (bit == F_N) {
            if (op.kind == WEFT_OP_NOP)
                return fail(ps, f->col, "a nop moves no slots (no n=)");
            if ((e = parse_u32(ps, v, vlen, vcol, &op.count)))
                return e;
            if (op.count == 0)
                return fail(ps, vcol, "n must be at least 1");
        } else if (bit == F_CH) {
            if ((e = parse_u32(ps, v, vlen, vcol, &op.channel)))
                return e;
        } else if (bit == F_BYTES) {
            if (!ps->op_size)
                return fail(ps, f->col, "bytes= needs a 'size' line in the header");
            if ((e = parse_u64(ps, v, vlen, vcol, &op_bytes)))
                return e;
        } else if (bit == F_COMPUTE) {
            if (op.kind != WEFT_OP_NOP)
                return fail(ps, f->col, "a %s computes nothing (compute= is a nop's)",
                            weft_op_kind_name(op.kind));
            if (!weft_compute_parse(v, vlen, &compute) || compute == WEFT_COMPUTE_NONE)
                return fail(ps, vcol,
                            "unknown compute '%.*s' (expected hash, compress, decompress, "
                            "aggregate or fill)",
                            (int)vlen, v);
        } else if ((e = parse_deps(ps, v, vlen, vcol, id, &ndeps))) {
            return e;
        }
    }
    if (op.kind == WEFT_OP_NOP && compute == WEFT_COMPUTE_NONE && (seen & F_BYTES))
        return fail(ps, t[0].col, "a nop moves no bytes (no bytes=, unless it has compute=)");
    if (compute != WEFT_COMPUTE_NONE && !ps->op_size)
        return fail(ps, t[0].col,
                    "op %u computes but the plan has no 'size' line (a compute op's bytes= "
                    "needs one)",
                    id);
    if (ps->op_size && (op.kind != WEFT_OP_NOP || compute != WEFT_COMPUTE_NONE) &&
        !(seen & F_BYTES))
        return fail(ps, t[0].col, "op %u has no bytes= (the 'size' line gives every op its bytes)",
                    id);
    if (ps->op_size && ps->plan->nops >= ps->op_bytes_cap) {
        size_t cap = ps->op_bytes_cap ? 2 * ps->op_bytes_cap : 64;
        uint64_t *nb = weft__realloc(ps->op_bytes, cap * sizeof *nb);
        if (!nb)
            return oom(ps);
        ps->op_bytes = nb;
        ps->op_bytes_cap = cap;
    }
    if (ps->op_size)
        ps->op_bytes[ps->plan->nops] = op_bytes;
    e = weft_plan_add_op(ps->plan, &op, ps->deps, ndeps, NULL);
    if (!e)
        e = weft_plan_set_op_compute(ps->plan, id, compute);
    if (e == WEFT_ENOMEM)
        return oom(ps);
    if (e)
        return fail(ps, t[0].col, "invalid op");
    for (i = first_path; first_path && i < nt; i++) {
        const char *v = t[i].s + 5;
        if ((e = parse_path(ps, v, t[i].len - 5, t[i].col + 5, id)))
            return e;
    }
    return WEFT_OK;
}

static weft_err parse_line(parser *ps, const char *s, size_t n, tok *toks)
{
    weft_err e = check_bytes(ps, s, n);
    if (e)
        return e;
    size_t nt = split(s, n, toks, ps->max_tokens);
    if (nt == 0)
        return WEFT_OK;
    if (!ps->magic) {
        if (!tok_is(&toks[0], "weft-plan"))
            return fail(ps, toks[0].col, "expected 'weft-plan 1' before anything else, not '%.*s'",
                        (int)toks[0].len, toks[0].s);
        if (nt != 2)
            return fail(ps, toks[0].col, "'weft-plan' takes one value, the version");
        if (!tok_is(&toks[1], "1"))
            return fail(ps, toks[1].col, "unsupported plan version '%.*s' (this weft reads 1)",
                        (int)toks[1].len, toks[1].s);
        ps->magic = true;
        return WEFT_OK;
    }
    if (tok_is(&toks[0], "op"))
        return parse_op(ps, toks, nt);
    if (tok_is(&toks[0], "traffic"))
        return parse_traffic(ps, toks, nt);
    if (tok_is(&toks[0], "circuit"))
        return parse_circuit(ps, toks, nt);
    if (tok_is(&toks[0], "size"))
        return parse_size(ps, toks, nt);
    if (tok_is(&toks[0], "forward"))
        return parse_forward(ps, toks, nt);
    if (tok_is(&toks[0], "whole"))
        return parse_whole(ps, toks, nt);
    for (size_t k = 0; k < sizeof header_keys / sizeof header_keys[0]; k++) {
        if (tok_is(&toks[0], header_keys[k].word))
            return parse_header(ps, header_keys[k].bit, header_keys[k].word, toks, nt);
    }
    if (tok_is(&toks[0], "weft-plan"))
        return fail(ps, toks[0].col, "'weft-plan' given twice");
    return fail(ps, toks[0].col, "unknown keyword '%.*s'", (int)toks[0].len, toks[0].s);
}

weft_err weft_plan_parse(const char *text, size_t len, const char *name, weft_plan **out,
                         weft_diag *d)
{
    parser ps = {0};
    ps.name = name ? name : "<plan>";
    ps.d = d;
    ps.info.inplace = true;
    weft_err e = WEFT_OK;
    /* The most tokens a line has (counted over at most LINE_MAX_BYTES of
     * each line; a longer one is reported below): the token array holds
     * what the text needs, not what the limit would allow. */
    size_t most = 0, ntok = 0, col = 0;
    bool in_tok = false;
    for (size_t at = 0; at < len; at++) {
        char ch = text[at];
        if (ch == '\n') {
            most = ntok > most ? ntok : most;
            ntok = col = 0;
            in_tok = false;
            continue;
        }
        if (++col > LINE_MAX_BYTES)
            continue;
        bool sep = ch == ' ' || ch == '\t' || ch == '\r' || ch == '#';
        if (!sep && !in_tok)
            ntok++;
        in_tok = !sep;
    }
    most = ntok > most ? ntok : most;
    ps.max_tokens = most + 1;
    tok *toks = weft__malloc(ps.max_tokens * sizeof *toks);
    if (!toks)
        return oom(&ps);
    size_t pos = 0;
    while (pos < len) {
        ps.line++;
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        if (n > LINE_MAX_BYTES) {
            /* Binary data (a NUL, a control byte) is named as such, not
             * as one long line. */
            e = check_bytes(&ps, text + pos, LINE_MAX_BYTES);
            if (!e)
                e = fail(&ps, LINE_MAX_BYTES + 1, "line longer than %u bytes", LINE_MAX_BYTES);
            goto free_parser;
        }
        e = parse_line(&ps, text + pos, n, toks);
        if (e)
            goto free_parser;
        pos += n + 1;
    }
    if (!ps.magic) {
        ps.line = ps.line ? ps.line : 1;
        e = fail(&ps, 0, "no 'weft-plan 1' line: %s", len ? "only comments" : "empty file");
        goto free_parser;
    }
    if (!ps.plan && (e = finish_header(&ps, 0)))
        goto free_parser;
    for (size_t i = 0; i < ps.nfwd; i++) {
        if (ps.fwd[i].dep >= ps.plan->nops) {
            ps.line = ps.fwd[i].line;
            e = fail(&ps, ps.fwd[i].col, "dep on op %u, which does not exist (the plan has %u ops)",
                     ps.fwd[i].dep, ps.plan->nops);
            goto free_parser;
        }
    }
    if (ps.op_size && (e = weft_plan_set_op_sizes(ps.plan, ps.op_size,
                                                  ps.op_bytes ? ps.op_bytes : &ps.op_size, d)))
        goto free_parser;
    weft_plan_set_step_forward(ps.plan, ps.step_bytes, ps.step_gbps);
    weft_plan_set_whole_messages(ps.plan, ps.whole);
    *out = ps.plan;
    ps.plan = NULL;
free_parser:
    weft_plan_free(ps.plan);
    weft__free(ps.deps);
    weft__free(ps.fwd);
    weft__free(ps.nodes);
    weft__free(ps.node_buf);
    weft__free(ps.traffic);
    weft__free(ps.op_bytes);
    weft__free(toks);
    return e;
}

weft_err weft_plan_load_file(const char *path, weft_plan **out, weft_diag *d)
{
    char *buf = NULL;
    size_t len = 0;
    weft_err e = weft__file_read(path, WEFT_PLAN_MAX_FILE_BYTES, "a .plan file", &buf, &len, d);
    if (e)
        return e;
    e = weft_plan_parse(buf, len, path, out, d);
    weft__free(buf);
    return e;
}

/* ---- Writer -------------------------------------------------------------- */

/* v in the fewest significant digits that read back as v (at most 17). */
void weft__plan_format_double(double v, char *buf, size_t n)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

weft_err weft_plan_write(const weft_plan *p, FILE *f)
{
    const weft_plan_info *in = &p->info;
    fprintf(f, "weft-plan 1\ncoll %s\nranks %u\n", weft_coll_name(in->coll), in->nranks);
    if (weft_coll_has_root(in->coll))
        fprintf(f, "root %u\n", in->root.v);
    fprintf(f, "chunks %u\nscratch %u\ninplace %s\n", in->chunks, in->scratch,
            in->inplace ? "yes" : "no");
    /* At most TRAFFIC_PER_LINE entries a line: 21 bytes each stay far below
     * LINE_MAX_BYTES. */
    enum { TRAFFIC_PER_LINE = 256 };
    if (p->op_bytes)
        fprintf(f, "size %llu\n", (unsigned long long)p->op_size);
    if (p->step_forward) {
        fprintf(f, "forward %llu", (unsigned long long)p->step_forward);
        char gbps[32];
        weft__plan_format_double(p->step_gbps, gbps, sizeof gbps);
        if (p->step_gbps > 0)
            fprintf(f, " %s", gbps);
        fputc('\n', f);
    }
    if (p->whole)
        fputs("whole\n", f);
    const weft_traffic *tm = weft_plan_traffic(p);
    for (uint32_t r = 0; tm && r < tm->ranks; r++)
        for (uint32_t c0 = 0; c0 < tm->ranks; c0 += TRAFFIC_PER_LINE) {
            fprintf(f, "traffic %u %u", r, c0);
            for (uint32_t c = c0; c < tm->ranks && c < c0 + TRAFFIC_PER_LINE; c++)
                fprintf(f, " %llu", (unsigned long long)weft_traffic_at(tm, r, c));
            fputc('\n', f);
        }
    for (uint32_t i = 0; i < p->nops; i++) {
        const weft_op *op = &p->ops[i];
        if (op->kind == WEFT_OP_NOP)
            fprintf(f, "op %u nop %u", i, op->src_rank.v);
        else
            fprintf(f, "op %u %s %u:%s[%u] %u:%s[%u]", i, weft_op_kind_name(op->kind),
                    op->src_rank.v, weft_buf_name(op->src_buf), op->src_index, op->dst_rank.v,
                    weft_buf_name(op->dst_buf), op->dst_index);
        if (op->kind != WEFT_OP_NOP && op->count != 1)
            fprintf(f, " n=%u", op->count);
        if (op->channel)
            fprintf(f, " ch=%u", op->channel);
        weft_compute cp = weft_plan_op_compute(p, i);
        if (cp != WEFT_COMPUTE_NONE)
            fprintf(f, " compute=%s", weft_compute_name(cp));
        if (p->op_bytes && (op->kind != WEFT_OP_NOP || cp != WEFT_COMPUTE_NONE))
            fprintf(f, " bytes=%llu",
                    i < p->op_bytes_n ? (unsigned long long)p->op_bytes[i] : 0ull);
        const uint32_t *deps = weft__plan_deps(p, i);
        for (uint32_t k = 0; k < p->dep_count[i]; k++)
            fprintf(f, "%s%u", k ? "," : " deps=", deps[k]);
        uint32_t np = weft_plan_op_num_paths(p, i);
        for (uint32_t k = 0; k < np; k++) {
            const weft__plan_path *pt = &p->paths[p->path_start[i] + k];
            char share[48];
            weft_rat_format(pt->share, share, sizeof share);
            if (pt->epoch != WEFT_PLAN_NO_EPOCH)
                fprintf(f, " path=%s@%u:", share, pt->epoch);
            else
                fprintf(f, " path=%s:", share);
            for (uint32_t v = 0; v < pt->nnodes; v++)
                fprintf(f, "%s%s", v ? "," : "",
                        weft__plan_name(p, p->path_nodes[pt->node_start + v]));
        }
        fputc('\n', f);
    }
    for (size_t c = 0; c < p->ncircuits; c++) {
        const weft__plan_circuit *ci = &p->circuits[c];
        fprintf(f, "circuit %u %s %s %s\n", ci->epoch, weft__plan_name(p, ci->ocs),
                weft__plan_name(p, ci->from), weft__plan_name(p, ci->to));
    }
    return ferror(f) ? WEFT_EIO : WEFT_OK;
}
