/* Traffic matrices: storage, the file format, uniform matrices, the
 * transpose and statistics (weft/traffic.h). The MoE generator is in
 * traffic_moe.c.
 *
 * The reader is one pass over the text: the first line with numbers fixes N
 * (its values go to a growing buffer until the line ends), every later line
 * is read straight into its row. Each entry is checked as it is read (a
 * digit string, no overflow, the running total within UINT64_MAX), so the
 * first error is reported where it is and nothing is half built: *out is
 * written only on success. O(bytes of text) time, O(N^2) memory. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/file.h"
#include "weft/traffic.h"

weft_err weft_traffic_new(uint32_t n, weft_traffic *out, weft_diag *d)
{
    if (n == 0 || n > WEFT_TRAFFIC_MAX_RANKS)
        return weft_diag_set(d, WEFT_EINVAL, "a traffic matrix has 1 to %u ranks, not %" PRIu32,
                             WEFT_TRAFFIC_MAX_RANKS, n);
    uint64_t *b = weft__calloc((size_t)n * n, sizeof *b);
    if (!b)
        return weft_diag_set(d, WEFT_ENOMEM,
                             "out of memory for a traffic matrix of %" PRIu32 " ranks", n);
    out->ranks = n;
    out->bytes = b;
    return WEFT_OK;
}

void weft_traffic_free(weft_traffic *t)
{
    if (!t)
        return;
    weft__free(t->bytes);
    t->bytes = NULL;
    t->ranks = 0;
}

weft_err weft_traffic_check(const weft_traffic *t, weft_diag *d)
{
    if (t->ranks == 0 || t->ranks > WEFT_TRAFFIC_MAX_RANKS || !t->bytes)
        return weft_diag_set(d, WEFT_ELIMIT, "a traffic matrix has 1 to %u ranks, not %" PRIu32,
                             WEFT_TRAFFIC_MAX_RANKS, t->ranks);
    uint64_t sum = 0;
    size_t nn = (size_t)t->ranks * t->ranks;
    for (size_t k = 0; k < nn; k++) {
        if (t->bytes[k] > UINT64_MAX - sum)
            return weft_diag_set(d, WEFT_EOVERFLOW,
                                 "the traffic matrix's entries sum to more than 2^64-1 bytes "
                                 "(at rank %zu to rank %zu)",
                                 k / t->ranks, k % t->ranks);
        sum += t->bytes[k];
    }
    return WEFT_OK;
}

/* ---- reading ---------------------------------------------------------- */

typedef struct reader {
    const char *name;
    const char *p, *end;
    uint32_t line; /* of p, from 1 */
    const char *line_start;
    weft_diag *d;
    uint64_t sum; /* of every entry read so far */
} reader;

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static unsigned col_of(const reader *r, const char *at)
{
    return (unsigned)(at - r->line_start) + 1;
}

/* The longest token shown in a message. */
#define SHOW 40

/* Reads the token [s, e) as an entry into *v, or reports why it is not one. */
static weft_err read_entry(reader *r, const char *s, const char *e, uint64_t *v)
{
    int len = (int)(e - s);
    int show = len > SHOW ? SHOW : len;
    const char *more = len > SHOW ? "..." : "";
    bool digits = true, numeric = true, has_digit = false;
    for (const char *q = s; q < e; q++) {
        if (*q >= '0' && *q <= '9')
            has_digit = true;
        else {
            digits = false;
            if (!strchr(".eE+-", *q))
                numeric = false;
        }
    }
    if (!digits) {
        if (s[0] == '-' && has_digit && numeric)
            return weft_diag_set(r->d, WEFT_EPARSE,
                                 "%s:%" PRIu32 ":%u: negative entry '%.*s%s': bytes must be >= 0",
                                 r->name, r->line, col_of(r, s), show, s, more);
        if (numeric && has_digit)
            return weft_diag_set(r->d, WEFT_EPARSE,
                                 "%s:%" PRIu32 ":%u: '%.*s%s' is not a whole number of bytes",
                                 r->name, r->line, col_of(r, s), show, s, more);
        return weft_diag_set(r->d, WEFT_EPARSE,
                             "%s:%" PRIu32 ":%u: '%.*s%s' is not a number of bytes", r->name,
                             r->line, col_of(r, s), show, s, more);
    }
    uint64_t x = 0;
    for (const char *q = s; q < e; q++) {
        unsigned dgt = (unsigned)(*q - '0');
        if (x > (UINT64_MAX - dgt) / 10)
            return weft_diag_set(r->d, WEFT_EOVERFLOW,
                                 "%s:%" PRIu32 ":%u: '%.*s%s' is more than 2^64-1 bytes", r->name,
                                 r->line, col_of(r, s), show, s, more);
        x = x * 10 + dgt;
    }
    if (x > UINT64_MAX - r->sum)
        return weft_diag_set(r->d, WEFT_EOVERFLOW,
                             "%s:%" PRIu32 ":%u: the matrix's entries sum to more than 2^64-1 "
                             "bytes here",
                             r->name, r->line, col_of(r, s));
    r->sum += x;
    *v = x;
    return WEFT_OK;
}

/* Moves to the next token of the current line: *s and *e bound it; returns
 * false at the end of the line (r->p then points at the '\n' or the end). */
static bool next_token(reader *r, const char **s, const char **e)
{
    while (r->p < r->end && is_blank(*r->p))
        r->p++;
    if (r->p < r->end && *r->p == '#')
        while (r->p < r->end && *r->p != '\n')
            r->p++;
    if (r->p >= r->end || *r->p == '\n')
        return false;
    *s = r->p;
    while (r->p < r->end && !is_blank(*r->p) && *r->p != '\n' && *r->p != '#')
        r->p++;
    *e = r->p;
    return true;
}

static void next_line(reader *r)
{
    if (r->p < r->end) { /* at the '\n' */
        r->p++;
        r->line++;
        r->line_start = r->p;
    }
}

/* Reads the first line with numbers into a new matrix. Returns WEFT_OK with
 * *t set, or an error; r is at the end of that line. */
static weft_err read_first(reader *r, weft_traffic *t, uint32_t *first_line)
{
    uint64_t *row = NULL;
    size_t cap = 0, n = 0;
    weft_err e = WEFT_OK;
    for (;;) {
        const char *s, *end;
        if (!next_token(r, &s, &end)) {
            if (n > 0)
                break;
            if (r->p >= r->end) {
                e = weft_diag_set(r->d, WEFT_EPARSE,
                                  "%s:%" PRIu32 ":%u: no matrix: the file has no numbers", r->name,
                                  r->line, col_of(r, r->p));
                goto free_row;
            }
            next_line(r);
            continue;
        }
        if (n == WEFT_TRAFFIC_MAX_RANKS) {
            e = weft_diag_set(r->d, WEFT_ELIMIT,
                              "%s:%" PRIu32 ":%u: more than %u numbers on a line: a traffic "
                              "matrix has at most %u ranks",
                              r->name, r->line, col_of(r, s), WEFT_TRAFFIC_MAX_RANKS,
                              WEFT_TRAFFIC_MAX_RANKS);
            goto free_row;
        }
        if (weft__grow((void **)&row, &cap, n + 1, sizeof *row)) {
            e = weft_diag_set(r->d, WEFT_ENOMEM, "%s: out of memory reading a traffic matrix",
                              r->name);
            goto free_row;
        }
        e = read_entry(r, s, end, &row[n]);
        if (e)
            goto free_row;
        n++;
    }
    *first_line = r->line;
    e = weft_traffic_new((uint32_t)n, t, r->d);
    if (e) {
        if (e == WEFT_ENOMEM)
            weft_diag_set(r->d, WEFT_ENOMEM, "%s: out of memory for a traffic matrix of %zu ranks",
                          r->name, n);
        goto free_row;
    }
    memcpy(t->bytes, row, n * sizeof *row);
free_row:
    weft__free(row);
    return e;
}

weft_err weft_traffic_parse(const char *text, size_t len, const char *name, weft_traffic *out,
                            weft_diag *d)
{
    reader r = {.name = name, .p = text, .end = text + len, .line = 1, .line_start = text, .d = d};
    weft_traffic t = {0};
    uint32_t first_line = 0;
    weft_err e = read_first(&r, &t, &first_line);
    if (e)
        return e;
    uint32_t n = t.ranks, rows = 1;
    next_line(&r);
    while (r.p < r.end) {
        const char *s, *end;
        uint32_t got = 0;
        while (next_token(&r, &s, &end)) {
            if (rows == n) {
                e = weft_diag_set(d, WEFT_EPARSE,
                                  "%s:%" PRIu32 ":%u: more than %" PRIu32 " lines: line %" PRIu32
                                  " has %" PRIu32 " numbers, so the matrix has %" PRIu32
                                  " ranks and %" PRIu32 " lines",
                                  name, r.line, col_of(&r, s), n, first_line, n, n, n);
                goto free_matrix;
            }
            if (got == n) {
                e = weft_diag_set(d, WEFT_EPARSE,
                                  "%s:%" PRIu32 ":%u: more than %" PRIu32
                                  " numbers on this line (line %" PRIu32 " has %" PRIu32 ")",
                                  name, r.line, col_of(&r, s), n, first_line, n);
                goto free_matrix;
            }
            e = read_entry(&r, s, end, &t.bytes[(size_t)rows * n + got]);
            if (e)
                goto free_matrix;
            got++;
        }
        if (got > 0 && got < n) {
            e = weft_diag_set(d, WEFT_EPARSE,
                              "%s:%" PRIu32 ":%u: %" PRIu32
                              " numbers on this line, expected %" PRIu32 " (as on line %" PRIu32
                              ")",
                              name, r.line, col_of(&r, r.p), got, n, first_line);
            goto free_matrix;
        }
        if (got)
            rows++;
        next_line(&r);
    }
    if (rows < n) {
        e = weft_diag_set(d, WEFT_EPARSE,
                          "%s:%" PRIu32 ":%u: only %" PRIu32 " lines of numbers: line %" PRIu32
                          " has %" PRIu32 " numbers, so the matrix needs %" PRIu32 " lines",
                          name, r.line, col_of(&r, r.p), rows, first_line, n, n);
        goto free_matrix;
    }
    *out = t;
    return WEFT_OK;
free_matrix:
    weft_traffic_free(&t);
    return e;
}

weft_err weft_traffic_load_file(const char *path, weft_traffic *out, weft_diag *d)
{
    char *buf = NULL;
    size_t len = 0;
    weft_err e =
        weft__file_read(path, WEFT_TRAFFIC_MAX_FILE_BYTES, "a traffic matrix file", &buf, &len, d);
    if (e)
        return e;
    e = weft_traffic_parse(buf, len, path, out, d);
    weft__free(buf);
    return e;
}

/* ---- writing ---------------------------------------------------------- */

weft_err weft_traffic_write(FILE *f, const weft_traffic *t, const char *comment, weft_diag *d)
{
    for (const char *c = comment; c && *c;) {
        const char *nl = strchr(c, '\n');
        int len = nl ? (int)(nl - c) : (int)strlen(c);
        fprintf(f, "# %.*s\n", len, c);
        c = nl ? nl + 1 : c + len;
    }
    uint32_t n = t->ranks;
    char buf[24];
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < n; j++) {
            /* Faster than fprintf for the 10^6 entries of 1,024 ranks. */
            uint64_t v = weft_traffic_at(t, i, j);
            char *q = buf + sizeof buf;
            *--q = j + 1 < n ? ' ' : '\n';
            do {
                *--q = (char)('0' + v % 10);
                v /= 10;
            } while (v);
            fwrite(q, 1, (size_t)(buf + sizeof buf - q), f);
        }
    }
    if (ferror(f))
        return weft_diag_set(d, WEFT_EIO, "cannot write the traffic matrix");
    return WEFT_OK;
}

/* ---- builders --------------------------------------------------------- */

weft_err weft_traffic_uniform(uint32_t n, uint64_t size, weft_traffic *out, weft_diag *d)
{
    if (n == 0 || n > WEFT_TRAFFIC_MAX_RANKS)
        return weft_diag_set(d, WEFT_EINVAL, "a traffic matrix has 1 to %u ranks, not %" PRIu32,
                             WEFT_TRAFFIC_MAX_RANKS, n);
    if (size % n)
        return weft_diag_set(d, WEFT_EINVAL,
                             "size %" PRIu64 " is not a multiple of %" PRIu32
                             " ranks (each rank sends size/%" PRIu32 " bytes to every rank)",
                             size, n, n);
    if (n > 1 && size > UINT64_MAX / n)
        return weft_diag_set(d, WEFT_EOVERFLOW,
                             "%" PRIu32 " ranks of %" PRIu64 " bytes are more than 2^64-1 bytes", n,
                             size);
    weft_traffic t;
    weft_err e = weft_traffic_new(n, &t, d);
    if (e)
        return e;
    uint64_t block = size / n;
    for (size_t k = 0; k < (size_t)n * n; k++)
        t.bytes[k] = block;
    *out = t;
    return WEFT_OK;
}

weft_err weft_traffic_transpose(const weft_traffic *t, weft_traffic *out, weft_diag *d)
{
    weft_traffic r;
    weft_err e = weft_traffic_new(t->ranks, &r, d);
    if (e)
        return e;
    uint32_t n = t->ranks;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++)
            r.bytes[(size_t)j * n + i] = t->bytes[(size_t)i * n + j];
    *out = r;
    return WEFT_OK;
}

/* ---- statistics ------------------------------------------------------- */

uint64_t weft_traffic_sim_size(const weft_traffic *t)
{
    uint64_t total = 0;
    for (size_t q = 0; q < (size_t)t->ranks * t->ranks; q++)
        total += t->bytes[q];
    double own = (double)total / t->ranks;
    if (!(own > 0))
        return 0;
    return own < 1.5 ? 1 : (uint64_t)(own + 0.5);
}

uint64_t weft_traffic_send(const weft_traffic *t, uint32_t i)
{
    uint64_t s = 0;
    for (uint32_t j = 0; j < t->ranks; j++)
        s += weft_traffic_at(t, i, j);
    return s;
}

uint64_t weft_traffic_recv(const weft_traffic *t, uint32_t j)
{
    uint64_t s = 0;
    for (uint32_t i = 0; i < t->ranks; i++)
        s += weft_traffic_at(t, i, j);
    return s;
}

void weft_traffic_get_stats(const weft_traffic *t, weft_traffic_stats *out)
{
    uint32_t n = t->ranks;
    weft_traffic_stats s = {.min_send = UINT64_MAX, .min_recv = UINT64_MAX};
    for (uint32_t i = 0; i < n; i++) {
        uint64_t snd = weft_traffic_send(t, i), rcv = weft_traffic_recv(t, i);
        s.total += snd;
        s.offdiag += snd - weft_traffic_at(t, i, i);
        if (snd > s.max_send || i == 0) {
            s.max_send = snd;
            s.max_send_rank = i;
        }
        if (rcv > s.max_recv || i == 0) {
            s.max_recv = rcv;
            s.max_recv_rank = i;
        }
        if (snd < s.min_send)
            s.min_send = snd;
        if (rcv < s.min_recv)
            s.min_recv = rcv;
        for (uint32_t j = 0; j < n; j++)
            if (weft_traffic_at(t, i, j) > s.max_entry)
                s.max_entry = weft_traffic_at(t, i, j);
    }
    if (s.total > 0) {
        s.send_skew = (double)s.max_send * n / (double)s.total;
        s.recv_skew = (double)s.max_recv * n / (double)s.total;
    }
    *out = s;
}
