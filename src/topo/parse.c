/* The .topo text parser. The format is described in docs/topo-format.md; the
 * contract is in weft/topo.h.
 *
 * One pass over the text: each line is found with memchr, its bytes are
 * checked (length, UTF-8, control bytes) and it is split into blank-separated
 * tokens in place; statements go straight into a weft_topo_builder. Nothing
 * is allocated per line: names are copied into stack buffers only to
 * NUL-terminate them for the builder, and the one per-node array (the line
 * each node was declared on, for "duplicate node" messages) grows by
 * doubling.
 *
 * weft_topo_build finds parallel links whose latencies disagree (or whose
 * bandwidths overflow when added), but cannot say on which line. Only when
 * it fails that way does a second "locate" pass re-read the text with a hash
 * map of node pairs and point at the offending statement, so the common path
 * pays nothing for it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/map.h"
#include "base/vec.h"
#include "topo/parse.h"
#include "topo/units.h"
#include "weft/topo.h"

/* The synopses of the statements, after their keyword. */
#define NODE_ARGS "NAME KIND [key=value ...]"
#define LINK_ARGS "A B BW [LAT] [burst=BYTES peak=BW]"

/* A token: a span of the input line. */
typedef struct tok {
    const char *p;
    size_t len;
} tok;

/* One node pair (src, dst) seen by the locate pass, with the latency and
 * the bandwidth so far of its links; found through parser.pair_of by the
 * key (src << 32 | dst). */
typedef struct pair_rec {
    weft_rat lat, bw;
    size_t line;
} pair_rec;

/* The last bandwidth or latency token read and its value: fabrics repeat a
 * few values many times, and exact parsing (128-bit gcds) is the costliest
 * part of a link line. */
typedef struct memo {
    const char *p;
    size_t len;
    weft_rat value;
} memo;

typedef struct parser {
    const char *name; /* for messages */
    const char *text;
    size_t len;
    weft_diag *d;
    weft_topo_builder *b;
    size_t line;            /* 1-based number of the current line */
    const char *line_start; /* its first byte */
    const char *line_end;   /* the end of its content (before "\r\n" or "\n") */
    const char *cur;        /* tokenizer position in the line */
    const char *last_end;   /* the end of the last token read */
    size_t *node_line;      /* the line each node was declared on */
    size_t node_line_cap;
    uint32_t n_compute;
    size_t n_statements;
    bool saw_text; /* a line held a token or a comment */
    bool locate;   /* the second pass: check parallel links */
    memo bw_memo, lat_memo;
    weft__map64 pair_of; /* pair key -> index in pairs */
    weft__vec pairs;     /* of pair_rec */
} parser;

/* ---- Bytes ---------------------------------------------------------------- */

size_t weft__topo_check_bytes(const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c >= 0x20 && c < 0x7f) {
            i++;
            continue;
        }
        if (c == '\t') {
            i++;
            continue;
        }
        if (c < 0x80) /* NUL, other control bytes, DEL */
            return i;
        /* The second byte's range excludes overlong forms, surrogates and
         * code points above U+10FFFF (RFC 3629, section 4). */
        unsigned char lo = 0x80, hi = 0xbf;
        size_t more;
        if (c >= 0xc2 && c <= 0xdf) {
            more = 1;
        } else if (c >= 0xe0 && c <= 0xef) {
            more = 2;
            if (c == 0xe0)
                lo = 0xa0;
            else if (c == 0xed)
                hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            more = 3;
            if (c == 0xf0)
                lo = 0x90;
            else if (c == 0xf4)
                hi = 0x8f;
        } else {
            return i;
        }
        if (n - i <= more || s[i + 1] < lo || s[i + 1] > hi)
            return i;
        for (size_t k = 2; k <= more; k++) {
            if (s[i + k] < 0x80 || s[i + k] > 0xbf)
                return i;
        }
        i += more + 1;
    }
    return n;
}

bool weft__topo_token_ok(const char *s, size_t n, bool no_equals)
{
    if (n == 0 || weft__topo_check_bytes(s, n) != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ' ' || s[i] == '\t' || s[i] == '#' || (no_equals && s[i] == '='))
            return false;
    }
    return true;
}

/* ---- Messages ------------------------------------------------------------- */

/* A token for a message: at most 40 bytes (cut at a UTF-8 boundary) and
 * "..." when longer. The line was checked, so the text is valid UTF-8. */
static const char *show(tok t, char buf[48])
{
    size_t n = t.len;
    if (n > 40) {
        n = 40;
        while (n > 0 && ((unsigned char)t.p[n] & 0xc0) == 0x80)
            n--;
    }
    memcpy(buf, t.p, n);
    if (n < t.len)
        memcpy(buf + n, "...", 4);
    else
        buf[n] = '\0';
    return buf;
}

/* Records "name:line:col: message" where col is the 1-based byte column of
 * `at` in the current line; returns err. */
__attribute__((format(printf, 4, 5))) static weft_err
fail_code(parser *p, weft_err err, const char *at, const char *fmt, ...)
{
    char msg[WEFT_DIAG_MSG_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return weft_diag_set(p->d, err, "%s:%zu:%zu: %s", p->name, p->line,
                         (size_t)(at - p->line_start) + 1, msg);
}

#define fail(p, at, ...) fail_code((p), WEFT_EPARSE, (at), __VA_ARGS__)

static weft_err oom(parser *p, const char *at)
{
    return fail_code(p, WEFT_ENOMEM, at, "out of memory");
}

/* A missing argument is reported just after the last token of the line;
 * usage is what follows the keyword kw in the statement's synopsis. */
static weft_err missing(parser *p, const char *kw, const char *what, const char *usage)
{
    return fail(p, p->last_end, "%s: missing %s (expected: %s %s)", kw, what, kw, usage);
}

/* ---- Tokens --------------------------------------------------------------- */

/* Reads the next blank-separated token of the line; a '#' ends the line's
 * tokens (it starts a comment, even inside a word). */
static bool next_tok(parser *p, tok *t)
{
    const char *s = p->cur, *e = p->line_end;
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    if (s == e || *s == '#') {
        if (s < e)
            p->saw_text = true;
        p->cur = e;
        return false;
    }
    const char *start = s;
    while (s < e && *s != ' ' && *s != '\t' && *s != '#')
        s++;
    t->p = start;
    t->len = (size_t)(s - start);
    p->cur = s;
    p->last_end = s;
    p->saw_text = true;
    return true;
}

static bool tok_is(tok t, const char *word)
{
    size_t n = strlen(word);
    return t.len == n && memcmp(t.p, word, n) == 0;
}

/* Copies a name-like span into buf (WEFT_TOPO_NAME_MAX + 1 bytes) with a
 * NUL, or fails naming `what` when it is too long. */
static weft_err copy_name(parser *p, const char *at, const char *s, size_t n, const char *what,
                          char *buf)
{
    if (n > WEFT_TOPO_NAME_MAX) {
        char q[48];
        tok t = {s, n};
        return fail(p, at, "%s '%s' is %zu bytes long; the limit is %d", what, show(t, q), n,
                    WEFT_TOPO_NAME_MAX);
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    return WEFT_OK;
}

/* ---- node ----------------------------------------------------------------- */

static weft_err st_node(parser *p, tok kw)
{
    char q[48], q2[48];
    tok name, kind, a, host = {NULL, 0};
    const char *host_at = NULL;
    if (!next_tok(p, &name))
        return missing(p, "node", "NAME", NODE_ARGS);
    if (!next_tok(p, &kind))
        return missing(p, "node", "KIND", NODE_ARGS);
    char name_buf[WEFT_TOPO_NAME_MAX + 1], host_buf[WEFT_TOPO_NAME_MAX + 1];
    weft_err e = copy_name(p, name.p, name.p, name.len, "node name", name_buf);
    if (e)
        return e;
    weft_node_kind k;
    if (!weft_node_kind_parse(kind.p, kind.len, &k))
        return fail(p, kind.p, "unknown node kind '%s' (expected compute, switch, nic or ocs)",
                    show(kind, q));
    /* First look at the attributes: their shape, and host=, which the
     * builder takes with the node. */
    const char *attrs = p->cur;
    while (next_tok(p, &a)) {
        const char *eq = memchr(a.p, '=', a.len);
        if (!eq)
            return fail(p, a.p, "bad attribute '%s': expected key=value", show(a, q));
        size_t klen = (size_t)(eq - a.p), vlen = a.len - klen - 1;
        if (klen == 0)
            return fail(p, a.p, "attribute '%s' has an empty key", show(a, q));
        if (klen > WEFT_TOPO_NAME_MAX || vlen > WEFT_TOPO_NAME_MAX) {
            tok part = klen > WEFT_TOPO_NAME_MAX ? (tok){a.p, klen} : (tok){eq + 1, vlen};
            return fail(p, a.p, "attribute %s '%s' is %zu bytes long; the limit is %d",
                        klen > WEFT_TOPO_NAME_MAX ? "key" : "value", show(part, q), part.len,
                        WEFT_TOPO_NAME_MAX);
        }
        if (klen == 4 && memcmp(a.p, "host", 4) == 0) {
            if (host_at)
                return fail(p, a.p, "duplicate attribute 'host' on node '%s' (first at column %zu)",
                            show(name, q), (size_t)(host_at - p->line_start) + 1);
            if (vlen == 0)
                return fail(p, a.p, "empty host name in 'host='");
            host_at = a.p;
            host = (tok){eq + 1, vlen};
        }
        /* reduce=nvls|sharp (1: the one its place implies, 0: none): the
         * switch reduces in the network; docs/topo-format.md. */
        if (klen == 6 && memcmp(a.p, "reduce", 6) == 0) {
            if (k != WEFT_NODE_SWITCH)
                return fail(p, a.p, "attribute 'reduce' is for switch nodes; '%s' is a %s",
                            show(name, q), weft_node_kind_name(k));
            bool ok = (vlen == 1 && (eq[1] == '0' || eq[1] == '1')) ||
                      (vlen == 4 && memcmp(eq + 1, "nvls", 4) == 0) ||
                      (vlen == 5 && memcmp(eq + 1, "sharp", 5) == 0);
            if (!ok)
                return fail(p, a.p, "bad 'reduce=%s' on '%s': expected nvls, sharp, 0 or 1",
                            show((tok){eq + 1, vlen}, q2), show(name, q));
        }
        /* cpu=amd|intel: the vendor of the host CPU a rank runs on, which
         * NCCL's tuning reads (weft_proto_cpu_amd; docs/topo-format.md): a
         * misspelt value would silently give Intel's figures. */
        if (klen == 3 && memcmp(a.p, "cpu", 3) == 0) {
            if (k != WEFT_NODE_COMPUTE)
                return fail(p, a.p, "attribute 'cpu' is for compute nodes; '%s' is a %s",
                            show(name, q), weft_node_kind_name(k));
            if (!(vlen == 3 && memcmp(eq + 1, "amd", 3) == 0) &&
                !(vlen == 5 && memcmp(eq + 1, "intel", 5) == 0))
                return fail(p, a.p, "bad 'cpu=%s' on '%s': expected amd or intel",
                            show((tok){eq + 1, vlen}, q2), show(name, q));
        }
        /* reconfig=DELAY: how long a changed circuit of the OCS carries
         * nothing (docs/topo-format.md). A unit is required but for 0:
         * "25" could be ns or us, and a wrong guess is a factor of 1,000. */
        if (klen == 8 && memcmp(a.p, "reconfig", 8) == 0) {
            if (k != WEFT_NODE_OCS)
                return fail(p, a.p, "attribute 'reconfig' is for ocs nodes; '%s' is a %s",
                            show(name, q), weft_node_kind_name(k));
            const char *why;
            size_t where;
            weft_rat ns;
            if (!(vlen == 1 && eq[1] == '0') &&
                weft__quantity_parse(WEFT_QTY_LATENCY, eq + 1, vlen, NULL, &ns, &why, &where))
                return fail(p, eq + 1 + where,
                            "bad 'reconfig=%s' on '%s': %s (a delay such as "
                            "25us; units %s)",
                            show((tok){eq + 1, vlen}, q2), show(name, q), why, weft__latency_units);
        }
    }
    weft_node_id id;
    if (weft_topo_builder_find(p->b, name.p, name.len, &id))
        return fail(p, name.p, "duplicate node '%s' (first declared on line %zu)", show(name, q),
                    p->node_line[id.v]);
    if (host_at) {
        memcpy(host_buf, host.p, host.len); /* its length was checked above */
        host_buf[host.len] = '\0';
    }
    if (weft__grow((void **)&p->node_line, &p->node_line_cap,
                   (size_t)weft_topo_builder_num_nodes(p->b) + 1, sizeof *p->node_line))
        return oom(p, name.p);
    e = weft_topo_builder_add_node(p->b, name_buf, k, host_at ? host_buf : NULL, &id);
    if (e == WEFT_ENOMEM)
        return oom(p, name.p);
    if (e)
        return fail(p, name.p, "cannot add node '%s': %s", show(name, q), weft_strerror(e));
    p->node_line[id.v] = p->line;
    p->n_compute += k == WEFT_NODE_COMPUTE;
    /* Then add the other attributes, in order. */
    p->cur = attrs;
    while (next_tok(p, &a)) {
        const char *eq = memchr(a.p, '=', a.len);
        size_t klen = (size_t)(eq - a.p), vlen = a.len - klen - 1;
        if (klen == 4 && memcmp(a.p, "host", 4) == 0)
            continue;
        char key[WEFT_TOPO_NAME_MAX + 1], value[WEFT_TOPO_NAME_MAX + 1];
        memcpy(key, a.p, klen);
        key[klen] = '\0';
        memcpy(value, eq + 1, vlen);
        value[vlen] = '\0';
        e = weft_topo_builder_set_attr(p->b, id, key, value);
        if (e == WEFT_EEXIST)
            return fail(p, a.p, "duplicate attribute '%s' on node '%s'", show((tok){a.p, klen}, q),
                        show(name, q2));
        if (e == WEFT_ENOMEM)
            return oom(p, a.p);
        if (e)
            return fail(p, a.p, "cannot set attribute '%s': %s", show(a, q), weft_strerror(e));
    }
    return WEFT_OK;
}

/* ---- link and duplex ------------------------------------------------------ */

static weft_err find_node(parser *p, tok t, weft_node_id *out)
{
    if (weft_topo_builder_find(p->b, t.p, t.len, out))
        return WEFT_OK;
    char q[48];
    return fail(p, t.p, "unknown node '%s' (declare it with 'node' before a link uses it)",
                show(t, q));
}

/* Reads a bandwidth (is_bw) or latency token. */
static weft_err quantity(parser *p, tok t, bool is_bw, weft_rat *out)
{
    memo *m = is_bw ? &p->bw_memo : &p->lat_memo;
    if (m->len == t.len && memcmp(m->p, t.p, t.len) == 0) {
        *out = m->value;
        return WEFT_OK;
    }
    const char *why = "";
    size_t where = 0;
    weft_err e = is_bw ? weft__bandwidth_parse(t.p, t.len, out, &why, &where)
                       : weft__latency_parse(t.p, t.len, out, &why, &where);
    if (!e) {
        *m = (memo){t.p, t.len, *out};
        return WEFT_OK;
    }
    const char *what = is_bw ? "bandwidth" : "latency";
    const char *units = is_bw ? weft__bandwidth_units : weft__latency_units;
    char q[48], u[48];
    if (strcmp(why, "missing unit") == 0)
        return fail(p, t.p, "%s '%s' has no unit (expected one of %s)", what, show(t, q), units);
    if (strcmp(why, "unknown unit") == 0)
        return fail(p, t.p, "unknown %s unit '%s' in '%s' (expected one of %s)", what,
                    show((tok){t.p + where, t.len - where}, u), show(t, q), units);
    if (strcmp(why, "too large") == 0)
        return fail(p, t.p, "%s '%s' is too large", what, show(t, q));
    if (strcmp(why, "bad number") == 0)
        return fail(p, t.p, "bad %s '%s': expected a number followed by a unit (e.g. %s)", what,
                    show(t, q), is_bw ? "300GB/s" : "0.7us");
    return fail(p, t.p, "%s '%s' %s", what, show(t, q), why);
}

/* The locate pass: checks the link src -> dst against earlier links between
 * the same pair. at is the latency token, or the statement when the latency
 * was left out. */
static weft_err check_pair(parser *p, weft_node_id src, weft_node_id dst, tok sname, tok dname,
                           weft_rat bw, weft_rat lat, const char *at)
{
    uint64_t key = (uint64_t)src.v << 32 | dst.v;
    uint32_t idx;
    bool added;
    if (weft__vec_reserve(&p->pairs, p->pairs.n + 1) ||
        weft__map64_get_or_put(&p->pair_of, key, (uint32_t)p->pairs.n, &idx, &added))
        return oom(p, at);
    if (added) {
        pair_rec r = {lat, bw, p->line};
        weft__vec_push(&p->pairs, &r); /* cannot fail: reserved above */
        return WEFT_OK;
    }
    pair_rec *s = weft__vec_at(&p->pairs, idx);
    char q1[48], q2[48];
    if (!weft_rat_eq(s->lat, lat)) {
        char l1[48], l2[48];
        weft_rat_format_exact(lat, l1, sizeof l1);
        weft_rat_format_exact(s->lat, l2, sizeof l2);
        return fail_code(p, WEFT_ETOPO, at,
                         "parallel links %s -> %s have different latencies: %sns here, %sns on "
                         "line %zu (parallel links add their bandwidths and must share one "
                         "latency)",
                         show(sname, q1), show(dname, q2), l1, l2, s->line);
    }
    weft_rat sum;
    if (weft_rat_add(s->bw, bw, &sum))
        return fail_code(p, WEFT_ETOPO, at,
                         "parallel links %s -> %s add up to a bandwidth too large to represent "
                         "(first on line %zu)",
                         show(sname, q1), show(dname, q2), s->line);
    s->bw = sum;
    return WEFT_OK;
}

/* Reads the value of burst=: a whole number of bytes > 0, optionally
 * followed by B. */
static weft_err burst_bytes(parser *p, tok whole, tok val, uint64_t *out)
{
    size_t n = val.len;
    if (n && val.p[n - 1] == 'B')
        n--;
    uint64_t v = 0;
    bool ok = n > 0 && n <= 15;
    for (size_t i = 0; ok && i < n; i++) {
        ok = val.p[i] >= '0' && val.p[i] <= '9';
        v = v * 10 + (uint64_t)(val.p[i] - '0');
    }
    char q[48];
    if (!ok || v == 0)
        return fail(p, val.p, "bad %s: expected a whole number of bytes > 0 (e.g. burst=16384)",
                    show(whole, q));
    *out = v;
    return WEFT_OK;
}

static weft_err st_link(parser *p, tok kw, bool duplex)
{
    const char *kwname = duplex ? "duplex" : "link";
    tok a, c, bw_tok, lat_tok, extra;
    weft_node_id src, dst;
    weft_rat bw, lat = {0, 1};
    weft_err e;
    if (!next_tok(p, &a))
        return missing(p, kwname, "A (source node)", LINK_ARGS);
    if ((e = find_node(p, a, &src)))
        return e;
    if (!next_tok(p, &c))
        return missing(p, kwname, "B (destination node)", LINK_ARGS);
    if ((e = find_node(p, c, &dst)))
        return e;
    char q[48];
    if (src.v == dst.v)
        return fail(p, c.p, "%s from '%s' to itself (self-loops are not allowed)", kwname,
                    show(a, q));
    if (!next_tok(p, &bw_tok))
        return missing(p, kwname, "BW (bandwidth)", LINK_ARGS);
    if ((e = quantity(p, bw_tok, true, &bw)))
        return e;
    bool has_lat = false, has_burst = false, has_peak = false;
    tok burst_tok = {0}, peak_tok = {0};
    weft_link_shaper sh = {0, {0, 1}};
    while (next_tok(p, &extra)) {
        const char *eq = memchr(extra.p, '=', extra.len);
        if (!eq && !has_lat && !has_burst && !has_peak) {
            has_lat = true;
            lat_tok = extra;
            if ((e = quantity(p, lat_tok, false, &lat)))
                return e;
            continue;
        }
        if (!eq)
            return fail(p, extra.p,
                        "too many arguments: unexpected '%s' (expected: %s " LINK_ARGS ")",
                        show(extra, q), kwname);
        tok val = {eq + 1, extra.len - (size_t)(eq + 1 - extra.p)};
        if ((size_t)(eq - extra.p) == 5 && memcmp(extra.p, "burst", 5) == 0 && !has_burst) {
            if ((e = burst_bytes(p, extra, val, &sh.burst_bytes)))
                return e;
            has_burst = true;
            burst_tok = extra;
        } else if ((size_t)(eq - extra.p) == 4 && memcmp(extra.p, "peak", 4) == 0 && !has_peak) {
            if (!val.len)
                return fail(p, val.p, "peak= needs a bandwidth (e.g. peak=2.5GB/s)");
            if ((e = quantity(p, val, true, &sh.peak_gbps)))
                return e;
            has_peak = true;
            peak_tok = extra;
        } else {
            return fail(p, extra.p,
                        "unknown or repeated link attribute '%s' (a link takes burst=BYTES "
                        "and peak=BW once each: a token-bucket shaper)",
                        show(extra, q));
        }
    }
    if (has_burst != has_peak)
        return fail(p, has_burst ? burst_tok.p : peak_tok.p,
                    "%s needs %s: a shaper's bucket passes its bytes at the peak rate of the "
                    "wire under it (tc-tbf(8))",
                    has_burst ? "burst=" : "peak=", has_burst ? "peak=" : "burst=");
    if (has_peak && weft_rat_cmp(sh.peak_gbps, bw) <= 0) {
        char q2[48];
        return fail(p, peak_tok.p, "%s must exceed the link's bandwidth '%s'", show(peak_tok, q),
                    show(bw_tok, q2));
    }
    e = duplex ? weft_topo_builder_add_duplex(p->b, src, dst, bw, lat)
               : weft_topo_builder_add_link(p->b, src, dst, bw, lat);
    if (!e && has_burst)
        e = weft_topo_builder_shape_links(p->b, duplex ? 2 : 1, sh);
    if (e == WEFT_ENOMEM)
        return oom(p, kw.p);
    if (e)
        return fail(p, kw.p, "cannot add %s: %s", kwname, weft_strerror(e));
    if (p->locate) {
        const char *at = has_lat ? lat_tok.p : kw.p;
        e = check_pair(p, src, dst, a, c, bw, lat, at);
        if (!e && duplex)
            e = check_pair(p, dst, src, c, a, bw, lat, at);
        return e;
    }
    return WEFT_OK;
}

/* ---- Lines ---------------------------------------------------------------- */

/* Checks the bytes of the current line and runs its statement. */
static weft_err parse_line(parser *p)
{
    const char *s = p->line_start;
    size_t n = (size_t)(p->line_end - s);
    /* The bytes up to the limit are checked first: a file of binary data
     * (no newline for megabytes) is reported by what it holds, not as one
     * long line. */
    size_t head = n > WEFT__TOPO_LINE_MAX ? WEFT__TOPO_LINE_MAX : n;
    size_t bad = weft__topo_check_bytes(s, head);
    if (bad == head && n > WEFT__TOPO_LINE_MAX)
        return fail(p, s + WEFT__TOPO_LINE_MAX, "line is longer than %d bytes",
                    WEFT__TOPO_LINE_MAX);
    if (bad < n) {
        unsigned char c = (unsigned char)s[bad];
        if (c == 0)
            return fail(p, s + bad, "NUL byte (binary data, not text)");
        if (c == '\r')
            return fail(p, s + bad, "carriage return inside a line");
        if (c < 0x80)
            return fail(p, s + bad, "control character 0x%02X", c);
        return fail(p, s + bad, "invalid UTF-8 (byte 0x%02X)", c);
    }
    p->cur = s;
    p->last_end = s;
    tok kw;
    if (!next_tok(p, &kw))
        return WEFT_OK;
    p->n_statements++;
    if (tok_is(kw, "node"))
        return st_node(p, kw);
    if (tok_is(kw, "link"))
        return st_link(p, kw, false);
    if (tok_is(kw, "duplex"))
        return st_link(p, kw, true);
    char q[48];
    return fail(p, kw.p, "unknown statement '%s' (expected node, link or duplex)", show(kw, q));
}

/* Parses the whole text into p->b (which the caller frees). */
static weft_err parse_text(parser *p)
{
    const char *s = p->text, *end = p->text + p->len;
    /* A UTF-8 byte order mark, as some editors write, is skipped. */
    if (p->len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
        s += 3;
    while (s < end) {
        p->line++;
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *le = nl ? nl : end;
        p->line_start = s;
        p->line_end = le > s && le[-1] == '\r' ? le - 1 : le;
        weft_err e = parse_line(p);
        if (e)
            return e;
        s = nl ? nl + 1 : end;
    }
    if (p->n_statements == 0) {
        if (!p->saw_text)
            return weft_diag_set(p->d, WEFT_EPARSE, "%s: empty file (no statements)", p->name);
        return weft_diag_set(p->d, WEFT_EPARSE, "%s: no statements, only comments and blank lines",
                             p->name);
    }
    if (p->n_compute == 0)
        return weft_diag_set(p->d, WEFT_ETOPO,
                             "%s: the fabric has no compute node (declare ranks with 'node "
                             "NAME compute')",
                             p->name);
    return WEFT_OK;
}

/* One pass over the text with a fresh builder; on success the builder is
 * left in p->b for the caller. */
static weft_err run_pass(parser *p)
{
    p->line = 0;
    p->n_compute = 0;
    p->n_statements = 0;
    p->saw_text = false;
    p->line_start = p->text;
    p->bw_memo.len = p->lat_memo.len = 0; /* tokens are never empty */
    if (weft_topo_builder_new(&p->b))
        return weft_diag_set(p->d, WEFT_ENOMEM, "%s: out of memory", p->name);
    weft_err e = parse_text(p);
    if (e) {
        weft_topo_builder_free(p->b);
        p->b = NULL;
    }
    return e;
}

weft_err weft_topo_parse(const char *text, size_t len, const char *name, weft_topo **out,
                         weft_diag *d)
{
    parser p = {0};
    p.name = name ? name : "<text>";
    p.text = text ? text : "";
    p.len = text ? len : 0;
    p.d = d;
    weft__map64_init(&p.pair_of);
    weft__vec_init(&p.pairs, sizeof(pair_rec));
    weft_err e = run_pass(&p);
    if (e)
        goto free_lines;
    weft_diag bd;
    weft_diag_clear(&bd);
    weft_topo *t = NULL;
    e = weft_topo_build(p.b, &t, &bd); /* consumes the builder */
    p.b = NULL;
    if (!e) {
        *out = t;
        goto free_lines;
    }
    if (e == WEFT_ENOMEM) {
        weft_diag_set(d, e, "%s: out of memory", p.name);
        goto free_lines;
    }
    /* Find the statement the graph-level error comes from. */
    p.locate = true;
    weft_err located = run_pass(&p);
    if (located) {
        e = located;
        goto free_pairs;
    }
    weft_topo_builder_free(p.b);
    weft_diag_set(d, e, "%s: %s", p.name, bd.msg);
free_pairs:
    weft__map64_fini(&p.pair_of);
    weft__vec_fini(&p.pairs);
free_lines:
    weft__free(p.node_line);
    return e;
}

weft_err weft_topo_load_file(const char *path, weft_topo **out, weft_diag *d)
{
    char *buf = NULL;
    size_t n = 0;
    weft_err e = weft__file_read(path, WEFT_TOPO_MAX_FILE_BYTES, "a .topo file", &buf, &n, d);
    if (e)
        return e;
    e = weft_topo_parse(buf, n, path, out, d);
    weft__free(buf);
    return e;
}
