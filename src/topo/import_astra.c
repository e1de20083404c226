/* Importing ASTRA-sim analytical network configs (.yml).
 *
 * The files are a YAML mapping of four keys, each a list with one entry per
 * dimension:
 *
 *     topology: [ Switch, Ring ]     # Ring, Switch, FullyConnected
 *     npus_count: [ 8, 4 ]
 *     bandwidth: [ 400, 50 ]         # GB/s, ASTRA-sim's GB = 2^30 bytes
 *     latency: [ 936.25, 1000 ]      # ns
 *
 * There is no YAML library here: a strict reader accepts exactly this subset
 * (top-level `key: [a, b]` flow lists, which may span lines, or block lists
 * of `- a` lines; '#' comments; plain or quoted scalars; an optional leading
 * `---`) and names FILE:LINE:COL for anything else.
 *
 * Dimensions compose as in ASTRA-sim's MultiDimTopology
 * (astra-sim/astra-network-analytical): NPU i has mixed-radix coordinates
 * with dimension 0 fastest, and every group of NPUs that differ only in
 * coordinate d is joined by dimension d's building block. A Ring is
 * bidirectional (Ring.h: bidirectional = true by default) with one link
 * each way between neighbours; for 2 NPUs the closing edge is the same pair,
 * which ASTRA-sim's Device::connect keeps once, so it is one duplex link.
 * Numbers stay exact: bandwidth * 2^30 / 10^9 is a finite decimal. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "topo/import_internal.h"
#include "weft/topo.h"

#define MAX_DIMS 16
/* Far beyond any published ASTRA-sim config, and small enough that the
 * fabric fits in well under a gigabyte (about 80 bytes per directed link
 * while building). */
#define MAX_NPUS ((uint64_t)1 << 20)
#define MAX_LINKS ((uint64_t)1 << 23)

enum { KEY_TOPOLOGY, KEY_NPUS, KEY_BANDWIDTH, KEY_LATENCY, KEY_COUNT };
static const char *const key_names[KEY_COUNT] = {"topology", "npus_count", "bandwidth", "latency"};

typedef enum block { BLOCK_RING, BLOCK_SWITCH, BLOCK_FULL } block;
static const char *const block_names[] = {"Ring", "Switch", "FullyConnected"};

typedef struct item {
    const char *text;
    size_t len;
    uint32_t line, col;
} item;

typedef struct entry {
    bool seen;
    uint32_t line, col; /* of the key */
    uint32_t n;
    item items[MAX_DIMS];
} entry;

typedef struct reader {
    const char *name;
    const char *s;
    size_t len, pos;
    uint32_t line, col;
    weft_diag *d;
    entry keys[KEY_COUNT];
} reader;

static weft_err fail_at(reader *r, uint32_t line, uint32_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static weft_err fail_at(reader *r, uint32_t line, uint32_t col, const char *fmt, ...)
{
    char msg[WEFT_DIAG_MSG_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return weft_diag_set(r->d, WEFT_EPARSE, "%s:%u:%u: %s", r->name, line, col, msg);
}

static int peek(const reader *r)
{
    return r->pos < r->len ? (unsigned char)r->s[r->pos] : -1;
}

static void advance(reader *r)
{
    if (r->s[r->pos] == '\n') {
        r->line++;
        r->col = 1;
    } else {
        r->col++;
    }
    r->pos++;
}

/* Skips blanks (and a '\r' before a newline) on the current line, then a
 * comment to the end of the line. */
static void skip_blanks_and_comment(reader *r)
{
    while (peek(r) == ' ' || peek(r) == '\t' ||
           (peek(r) == '\r' && r->pos + 1 < r->len && r->s[r->pos + 1] == '\n'))
        advance(r);
    if (peek(r) == '#') {
        while (peek(r) != -1 && peek(r) != '\n')
            advance(r);
    }
}

/* After a value: nothing but blanks and a comment until the end of line. */
static weft_err end_of_line(reader *r)
{
    skip_blanks_and_comment(r);
    if (peek(r) == -1)
        return WEFT_OK;
    if (peek(r) != '\n')
        return fail_at(r, r->line, r->col, "unexpected '%c' after the value", peek(r));
    advance(r);
    return WEFT_OK;
}

static bool is_plain_char(int c, bool in_flow)
{
    if (c == -1 || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '#')
        return false;
    if (in_flow && (c == ',' || c == '[' || c == ']' || c == '{' || c == '}'))
        return false;
    return true;
}

static weft_err read_item(reader *r, entry *en, bool in_flow)
{
    item it = {r->s + r->pos, 0, r->line, r->col};
    int c = peek(r);
    if (c == '"' || c == '\'') {
        advance(r);
        it.text = r->s + r->pos;
        while (peek(r) != c) {
            if (peek(r) == -1 || peek(r) == '\n')
                return fail_at(r, it.line, it.col, "unterminated quoted string");
            advance(r);
        }
        it.len = (size_t)(r->s + r->pos - it.text);
        advance(r);
    } else {
        if (c == '[' || c == '{' || c == '&' || c == '*' || c == '!' || c == '|' || c == '>')
            return fail_at(r, it.line, it.col,
                           "expected a number or a name (nested lists, maps, anchors, tags and "
                           "block scalars are not supported)");
        while (is_plain_char(peek(r), in_flow))
            advance(r);
        it.len = (size_t)(r->s + r->pos - it.text);
        if (it.len == 0)
            return fail_at(r, it.line, it.col, "expected a value");
    }
    if (en->n >= MAX_DIMS)
        return fail_at(r, it.line, it.col, "more than %d dimensions", MAX_DIMS);
    en->items[en->n++] = it;
    return WEFT_OK;
}

/* Blanks, newlines and comments inside a flow list. */
static void skip_flow_space(reader *r)
{
    for (;;) {
        skip_blanks_and_comment(r);
        if (peek(r) != '\n')
            return;
        advance(r);
    }
}

static weft_err read_flow(reader *r, entry *en)
{
    uint32_t line = r->line, col = r->col;
    advance(r); /* '[' */
    skip_flow_space(r);
    if (peek(r) == ']') {
        advance(r);
        return end_of_line(r);
    }
    for (;;) {
        weft_err e = read_item(r, en, true);
        if (e)
            return e;
        skip_flow_space(r);
        int c = peek(r);
        if (c == ']') {
            advance(r);
            return end_of_line(r);
        }
        if (c == -1)
            return fail_at(r, line, col, "unterminated list (no ']')");
        if (c != ',')
            return fail_at(r, r->line, r->col, "expected ',' or ']' in a list, not '%c'", c);
        advance(r);
        skip_flow_space(r);
    }
}

/* `- item` lines, each indented by at least one blank. */
static weft_err read_block(reader *r, entry *en)
{
    for (;;) {
        size_t save_pos = r->pos;
        uint32_t save_line = r->line, save_col = r->col;
        uint32_t indent = 0;
        while (peek(r) == ' ') {
            advance(r);
            indent++;
        }
        if (peek(r) == '\t')
            return fail_at(r, r->line, r->col, "tab in indentation (YAML allows only spaces)");
        if (peek(r) == '#' || peek(r) == '\n' || peek(r) == '\r') {
            skip_blanks_and_comment(r);
            if (peek(r) == -1)
                return WEFT_OK;
            if (peek(r) == '\n') {
                advance(r);
                continue;
            }
        }
        if (peek(r) != '-' || indent == 0) {
            r->pos = save_pos;
            r->line = save_line;
            r->col = save_col;
            return WEFT_OK;
        }
        advance(r);
        if (peek(r) != ' ' && peek(r) != '\t')
            return fail_at(r, r->line, r->col, "expected a blank after '-'");
        skip_blanks_and_comment(r);
        weft_err e = read_item(r, en, false);
        if (!e)
            e = end_of_line(r);
        if (e)
            return e;
    }
}

static weft_err read_document(reader *r)
{
    bool first = true;
    while (peek(r) != -1) {
        uint32_t line = r->line;
        if (peek(r) == ' ' || peek(r) == '\t') {
            skip_blanks_and_comment(r);
            if (peek(r) == -1)
                break;
            if (peek(r) == '\n') {
                advance(r);
                continue;
            }
            return fail_at(r, r->line, r->col, "unexpected indentation (keys start in column 1)");
        }
        if (peek(r) == '#' || peek(r) == '\n' || peek(r) == '\r') {
            weft_err e = end_of_line(r);
            if (e)
                return e;
            continue;
        }
        if (first && r->len - r->pos >= 3 && memcmp(r->s + r->pos, "---", 3) == 0 &&
            (r->pos + 3 == r->len || strchr(" \t\r\n#", r->s[r->pos + 3]))) {
            for (int i = 0; i < 3; i++)
                advance(r);
            first = false;
            weft_err e = end_of_line(r);
            if (e)
                return e;
            continue;
        }
        first = false;
        uint32_t col = r->col;
        const char *key = r->s + r->pos;
        while (peek(r) != -1 &&
               (peek(r) == '_' || peek(r) == '-' || (peek(r) >= 'a' && peek(r) <= 'z') ||
                (peek(r) >= 'A' && peek(r) <= 'Z') || (peek(r) >= '0' && peek(r) <= '9')))
            advance(r);
        size_t key_len = (size_t)(r->s + r->pos - key);
        if (key_len == 0)
            return fail_at(r, line, col, "expected a key such as 'topology:'");
        if (peek(r) != ':')
            return fail_at(r, r->line, r->col, "expected ':' after the key '%.*s'", (int)key_len,
                           key);
        int k = 0;
        while (k < KEY_COUNT &&
               !(strlen(key_names[k]) == key_len && memcmp(key_names[k], key, key_len) == 0))
            k++;
        if (k == KEY_COUNT)
            return fail_at(r, line, col,
                           "unknown key '%.*s' (expected topology, npus_count, bandwidth, "
                           "latency)",
                           (int)key_len, key);
        entry *en = &r->keys[k];
        if (en->seen)
            return fail_at(r, line, col, "duplicate key '%s' (first at line %u)", key_names[k],
                           en->line);
        en->seen = true;
        en->line = line;
        en->col = col;
        advance(r); /* ':' */
        skip_blanks_and_comment(r);
        weft_err e;
        if (peek(r) == '[') {
            e = read_flow(r, en);
        } else if (peek(r) == '\n' || peek(r) == -1) {
            if (peek(r) == '\n')
                advance(r);
            e = read_block(r, en);
        } else {
            e = fail_at(r, r->line, r->col, "'%s' must be a list such as [ a, b ]", key_names[k]);
        }
        if (e)
            return e;
    }
    return WEFT_OK;
}

/* ---- Values ------------------------------------------------------------- */

static bool item_is(const item *it, const char *s)
{
    return strlen(s) == it->len && memcmp(it->text, s, it->len) == 0;
}

static weft_err parse_number(reader *r, const item *it, const char *key, weft_rat *out)
{
    size_t used;
    weft_err e = weft_rat_parse(it->text, it->len, out, &used);
    if (e == WEFT_EOVERFLOW)
        return fail_at(r, it->line, it->col, "%s '%.*s' is too large", key, (int)it->len, it->text);
    if (e || used != it->len)
        return fail_at(r, it->line, it->col, "%s '%.*s' is not a number", key, (int)it->len,
                       it->text);
    return WEFT_OK;
}

typedef struct dims {
    uint32_t n;
    block kind[MAX_DIMS];
    uint32_t size[MAX_DIMS];
    weft_rat astra_bw[MAX_DIMS]; /* as written, ASTRA-sim GB/s */
    weft_rat bw[MAX_DIMS];       /* weft GB/s */
    weft_rat lat[MAX_DIMS];      /* ns */
    uint64_t npus;
} dims;

static weft_err check_values(reader *r, dims *out)
{
    for (int k = 0; k < KEY_COUNT; k++) {
        if (!r->keys[k].seen)
            return fail_at(r, 1, 1, "missing key '%s'", key_names[k]);
    }
    entry *topo = &r->keys[KEY_TOPOLOGY];
    if (topo->n == 0)
        return fail_at(r, topo->line, topo->col, "'topology' is empty (one entry per dimension)");
    for (int k = 1; k < KEY_COUNT; k++) {
        entry *en = &r->keys[k];
        if (en->n != topo->n)
            return fail_at(r, en->line, en->col, "'%s' has %u entries but 'topology' has %u",
                           key_names[k], en->n, topo->n);
    }
    out->n = topo->n;
    out->npus = 1;
    for (uint32_t i = 0; i < topo->n; i++) {
        const item *it = &topo->items[i];
        int b = 0;
        while (b < 3 && !item_is(it, block_names[b]))
            b++;
        if (b == 3)
            return fail_at(r, it->line, it->col,
                           "unknown topology '%.*s' (expected Ring, Switch or FullyConnected)",
                           (int)it->len, it->text);
        out->kind[i] = (block)b;

        it = &r->keys[KEY_NPUS].items[i];
        weft_rat v;
        weft_err e = parse_number(r, it, "npus_count", &v);
        if (e)
            return e;
        if (v.den != 1 || v.num < 2)
            return fail_at(r, it->line, it->col,
                           "npus_count '%.*s' must be an integer of at least 2 (as in ASTRA-sim)",
                           (int)it->len, it->text);
        if ((uint64_t)v.num > MAX_NPUS || out->npus * (uint64_t)v.num > MAX_NPUS)
            return weft_diag_set(r->d, WEFT_ELIMIT, "%s:%u:%u: more than %llu NPUs", r->name,
                                 it->line, it->col, (unsigned long long)MAX_NPUS);
        out->size[i] = (uint32_t)v.num;
        out->npus *= (uint64_t)v.num;

        it = &r->keys[KEY_BANDWIDTH].items[i];
        if ((e = parse_number(r, it, "bandwidth", &v)))
            return e;
        if (weft_rat_sign(v) <= 0)
            return fail_at(r, it->line, it->col, "bandwidth '%.*s' must be > 0", (int)it->len,
                           it->text);
        out->astra_bw[i] = v;
        /* ASTRA-sim's GB is 2^30 bytes (bw_GBps_to_Bpns); weft's is 10^9. */
        weft_rat scale, bw;
        weft_rat_make(1073741824, 1000000000, &scale);
        if (weft_rat_mul(v, scale, &bw))
            return fail_at(r, it->line, it->col, "bandwidth '%.*s' is too large", (int)it->len,
                           it->text);
        out->bw[i] = bw;

        it = &r->keys[KEY_LATENCY].items[i];
        if ((e = parse_number(r, it, "latency", &v)))
            return e;
        if (weft_rat_sign(v) < 0)
            return fail_at(r, it->line, it->col, "latency '%.*s' must be >= 0 (ns)", (int)it->len,
                           it->text);
        out->lat[i] = v;
    }
    /* Directed links the fabric will have, to refuse a config that would
     * not fit before allocating for it. */
    uint64_t links = 0;
    for (uint32_t i = 0; i < out->n; i++) {
        uint64_t n = out->size[i];
        links += out->kind[i] == BLOCK_FULL ? out->npus * (n - 1) : 2 * out->npus;
    }
    if (links > MAX_LINKS)
        return weft_diag_set(r->d, WEFT_ELIMIT, "%s: %llu links exceed the limit of %llu", r->name,
                             (unsigned long long)links, (unsigned long long)MAX_LINKS);
    return WEFT_OK;
}

/* ---- Building ----------------------------------------------------------- */

static weft_err note(weft_topo_builder *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static weft_err note(weft_topo_builder *b, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    return weft_topo_builder_note(b, line);
}

static weft_err write_notes(const char *name, const dims *dm, weft_topo_builder *b)
{
    char shape[256] = "", conv[512] = "";
    size_t ns = 0, nc = 0;
    for (uint32_t i = 0; i < dm->n; i++) {
        char a[64], w[64];
        weft_rat_format_exact(dm->astra_bw[i], a, sizeof a);
        weft_rat_format_exact(dm->bw[i], w, sizeof w);
        ns += (size_t)snprintf(shape + ns, sizeof shape - ns, "%s%s x%u", i ? ", " : "",
                               block_names[dm->kind[i]], dm->size[i]);
        nc += (size_t)snprintf(conv + nc, sizeof conv - nc, "%s%s -> %s", i ? ", " : "", a, w);
        if (ns >= sizeof shape || nc >= sizeof conv)
            break;
    }
    weft_err e = note(b,
                      "imported from ASTRA-sim analytical network config %s: %s = %llu NPUs "
                      "(npu<i>, dimension 0 fastest)",
                      name, shape, (unsigned long long)dm->npus);
    if (!e)
        e = note(b,
                 "bandwidth: ASTRA-sim GB/s (1 GB = 2^30 bytes) converted exactly to GB/s "
                 "(10^9 bytes): %s",
                 conv);
    if (!e)
        e = note(b,
                 "host = the NPU's group in dimension 0 (npu id / %u); latency per link as "
                 "given (ns)",
                 dm->size[0]);
    if (!e)
        e = note(b, "Ring: bidirectional, one link each way between neighbours (2 NPUs: one "
                    "duplex link); Switch: one switch d<dim>.sw<group> per group; "
                    "FullyConnected: every pair, each way");
    return e;
}

static weft_err build(const char *name, const dims *dm, weft_topo **out, weft_diag *d)
{
    weft_topo_builder *b;
    weft_err e = weft_topo_builder_new(&b);
    if (e)
        return weft_diag_code(d, e);
    char nm[64], host[16];
    uint32_t npus = (uint32_t)dm->npus;
    for (uint32_t i = 0; i < npus && !e; i++) {
        snprintf(nm, sizeof nm, "npu%u", i);
        snprintf(host, sizeof host, "%u", i / dm->size[0]);
        e = weft_topo_builder_add_node(b, nm, WEFT_NODE_COMPUTE, host, NULL);
    }
    uint32_t stride = 1;
    for (uint32_t k = 0; k < dm->n && !e; k++) {
        uint32_t n = dm->size[k];
        uint32_t group = 0;
        for (uint32_t base = 0; base < npus && !e; base++) {
            if ((base / stride) % n != 0)
                continue; /* not the first member of its group */
            if (dm->kind[k] == BLOCK_SWITCH) {
                weft_node_id sw;
                snprintf(nm, sizeof nm, "d%u.sw%u", k, group);
                snprintf(host, sizeof host, "%u", base / dm->size[0]);
                /* A dimension-0 switch belongs to its box. */
                e = weft_topo_builder_add_node(b, nm, WEFT_NODE_SWITCH, k == 0 ? host : NULL, &sw);
                for (uint32_t j = 0; j < n && !e; j++)
                    e = weft_topo_builder_add_duplex(b, (weft_node_id){base + j * stride}, sw,
                                                     dm->bw[k], dm->lat[k]);
            } else if (dm->kind[k] == BLOCK_RING) {
                uint32_t edges = n == 2 ? 1 : n;
                for (uint32_t j = 0; j < edges && !e; j++)
                    e = weft_topo_builder_add_duplex(b, (weft_node_id){base + j * stride},
                                                     (weft_node_id){base + ((j + 1) % n) * stride},
                                                     dm->bw[k], dm->lat[k]);
            } else {
                for (uint32_t j = 0; j < n && !e; j++) {
                    for (uint32_t m = j + 1; m < n && !e; m++)
                        e = weft_topo_builder_add_duplex(b, (weft_node_id){base + j * stride},
                                                         (weft_node_id){base + m * stride},
                                                         dm->bw[k], dm->lat[k]);
                }
            }
            group++;
        }
        stride *= n;
    }
    if (!e)
        e = write_notes(name, dm, b);
    if (e) {
        weft_topo_builder_free(b);
        return weft_diag_code(d, e);
    }
    return weft_topo_build(b, out, d);
}

weft_err weft_topo_parse_astra_yml(const char *text, size_t len, const char *name, weft_topo **out,
                                   weft_diag *d)
{
    reader r;
    memset(&r, 0, sizeof r);
    r.name = name;
    r.s = text;
    r.len = len;
    r.line = 1;
    r.col = 1;
    r.d = d;
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        uint32_t line = 1, col = 1;
        for (const char *p = text; p < nul; p++) {
            if (*p == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        return fail_at(&r, line, col, "NUL byte (binary data, not text)");
    }
    dims dm;
    memset(&dm, 0, sizeof dm);
    weft_err e = read_document(&r);
    if (!e)
        e = check_values(&r, &dm);
    if (e)
        return e;
    return build(name, &dm, out, d);
}

weft_err weft_topo_load_astra_yml(const char *path, weft_topo **out, weft_diag *d)
{
    char *text;
    size_t len;
    weft_err e = weft__read_whole_file(path, &text, &len, d);
    if (e)
        return e;
    e = weft_topo_parse_astra_yml(text, len, path, out, d);
    weft__free(text);
    return e;
}
