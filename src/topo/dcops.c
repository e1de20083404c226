/* Operators on direct-connect fabrics (Zhao et al., NSDI'25, arXiv
 * 2202.03356, section 5): the line graph, degree expansion and the
 * Cartesian product, spelled so that they nest with every preset:
 *
 *     line(SPEC)            expand(SPEC;n)            product(SPEC;SPEC)
 *
 * An operand is a preset, a .topo file or another operator. ';' separates
 * operands because ',' and ':' already separate a preset's parameters, so
 * "product(circulant:8,1,3;line(genkautz:8,2))" has exactly one reading.
 * Operands must be fabrics of ranks joined directly: every node a compute
 * node (no switch, NIC or OCS), so node i is rank i. The result names its
 * ranks rank0 .. rankN-1 (the numbering is given with each operator) and is
 * refused when it is not strongly connected.
 *
 * Sizes: a result is held to the preset limits (WEFT__PRESET_MAX_NODES
 * nodes, WEFT__PRESET_MAX_LINKS links), checked before it is built; each
 * operator runs in O(nodes + links) of its result. Nesting is limited to
 * DCOPS_MAX_DEPTH levels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "topo/preset_internal.h"

#define DCOPS_MAX_DEPTH 16

typedef enum { OP_LINE, OP_EXPAND, OP_PRODUCT } op_kind;

static const struct {
    const char *name;
    op_kind kind;
    unsigned operands; /* fabrics; expand also takes n */
} ops[] = {{"line", OP_LINE, 1}, {"expand", OP_EXPAND, 1}, {"product", OP_PRODUCT, 2}};

static weft_err resolve(const char *text, size_t len, unsigned depth, weft_topo **out,
                        weft_diag *d);

/* The operator a spec starts with ("line(" ...), or -1. */
static int op_of(const char *spec, size_t len)
{
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        size_t n = strlen(ops[i].name);
        if (len > n && memcmp(spec, ops[i].name, n) == 0 && spec[n] == '(')
            return (int)i;
    }
    return -1;
}

bool weft__topo_is_operator(const char *spec)
{
    return spec && op_of(spec, strlen(spec)) >= 0;
}

static weft_node_id node(uint32_t v)
{
    weft_node_id n = {v};
    return n;
}

/* WEFT_EINVAL unless every node of t is a compute node. */
static weft_err check_direct(const char *spec, const char *what, const weft_topo *t, weft_diag *d)
{
    for (uint32_t v = 0; v < weft_topo_num_nodes(t); v++) {
        weft_node_kind k = weft_topo_node_kind(t, node(v));
        if (k != WEFT_NODE_COMPUTE)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "%s: operand '%s' has a %s node '%s' (line, expand and product "
                                 "take fabrics of ranks joined directly)",
                                 spec, what, weft_node_kind_name(k),
                                 weft_topo_node_name(t, node(v)));
    }
    return WEFT_OK;
}

/* The result under construction: n nodes and its arcs with their
 * bandwidth and latency. */
typedef struct result {
    uint32_t n;
    uint32_t *src, *dst;
    weft_rat *bw, *lat;
    size_t m, cap;
} result;

static weft_err result_init(result *r, uint32_t n, size_t m)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    r->cap = m ? m : 1;
    r->src = weft__malloc(r->cap * sizeof *r->src);
    r->dst = weft__malloc(r->cap * sizeof *r->dst);
    r->bw = weft__malloc(r->cap * sizeof *r->bw);
    r->lat = weft__malloc(r->cap * sizeof *r->lat);
    return r->src && r->dst && r->bw && r->lat ? WEFT_OK : WEFT_ENOMEM;
}

static void result_fini(result *r)
{
    weft__free(r->src);
    weft__free(r->dst);
    weft__free(r->bw);
    weft__free(r->lat);
}

static void arc(result *r, uint32_t u, uint32_t v, weft_rat bw, weft_rat lat)
{
    r->src[r->m] = u;
    r->dst[r->m] = v;
    r->bw[r->m] = bw;
    r->lat[r->m] = lat;
    r->m++;
}

/* line(G): node e for every link e of G (in G's link order); the link
 * e = u->v reaches f = v->w for every out-link f of v (w = u included, as in
 * the line digraph), with f's bandwidth and latency. Out-degrees are kept,
 * the diameter grows by one: L(K_{d+1}) is the Kautz graph. */
static weft_err op_line(const weft_topo *g, result *r)
{
    uint32_t m = weft_topo_num_links(g);
    size_t arcs = 0;
    for (uint32_t e = 0; e < m; e++) {
        uint32_t first, count;
        weft_topo_out_links(g, weft_topo_link_dst(g, (weft_link_id){e}), &first, &count);
        arcs += count;
    }
    weft_err err = result_init(r, m, arcs);
    for (uint32_t e = 0; !err && e < m; e++) {
        uint32_t first, count;
        weft_topo_out_links(g, weft_topo_link_dst(g, (weft_link_id){e}), &first, &count);
        for (uint32_t f = first; f < first + count; f++)
            arc(r, e, f, weft_topo_link_bw(g, (weft_link_id){f}),
                weft_topo_link_lat(g, (weft_link_id){f}));
    }
    return err;
}

/* expand(G;n): node u*n + i is copy i of rank u; every link u->v becomes the
 * n*n links (u,i)->(v,j), each with the link's bandwidth and latency, so
 * degrees grow n times and the rank count too. */
static weft_err op_expand(const weft_topo *g, uint32_t n, result *r)
{
    uint32_t m = weft_topo_num_links(g);
    weft_err err = result_init(r, weft_topo_num_nodes(g) * n, (size_t)m * n * n);
    for (uint32_t e = 0; !err && e < m; e++) {
        weft_link_id l = {e};
        uint32_t u = weft_topo_link_src(g, l).v, v = weft_topo_link_dst(g, l).v;
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < n; j++)
                arc(r, u * n + i, v * n + j, weft_topo_link_bw(g, l), weft_topo_link_lat(g, l));
    }
    return err;
}

/* product(G;H): node g*|H| + h is the pair (g, h); (g,h)->(g',h) for every
 * link g->g' of G and (g,h)->(g,h') for every link h->h' of H, each with its
 * link's bandwidth and latency. Degrees and diameters add. */
static weft_err op_product(const weft_topo *g, const weft_topo *h, result *r)
{
    uint32_t ng = weft_topo_num_nodes(g), nh = weft_topo_num_nodes(h);
    uint32_t mg = weft_topo_num_links(g), mh = weft_topo_num_links(h);
    weft_err err = result_init(r, ng * nh, (size_t)mg * nh + (size_t)mh * ng);
    for (uint32_t e = 0; !err && e < mg; e++) {
        weft_link_id l = {e};
        uint32_t u = weft_topo_link_src(g, l).v, v = weft_topo_link_dst(g, l).v;
        for (uint32_t y = 0; y < nh; y++)
            arc(r, u * nh + y, v * nh + y, weft_topo_link_bw(g, l), weft_topo_link_lat(g, l));
    }
    for (uint32_t e = 0; !err && e < mh; e++) {
        weft_link_id l = {e};
        uint32_t u = weft_topo_link_src(h, l).v, v = weft_topo_link_dst(h, l).v;
        for (uint32_t x = 0; x < ng; x++)
            arc(r, x * nh + u, x * nh + v, weft_topo_link_bw(h, l), weft_topo_link_lat(h, l));
    }
    return err;
}

static weft_err too_large(const char *spec, uint64_t nodes, uint64_t links, weft_diag *d)
{
    if (nodes > WEFT__PRESET_MAX_NODES)
        return weft_diag_set(d, WEFT_ELIMIT,
                             "%s: too large: %llu nodes (presets are limited to %llu)", spec,
                             (unsigned long long)nodes, (unsigned long long)WEFT__PRESET_MAX_NODES);
    if (links > WEFT__PRESET_MAX_LINKS)
        return weft_diag_set(d, WEFT_ELIMIT,
                             "%s: too large: %llu links (presets are limited to %llu)", spec,
                             (unsigned long long)links, (unsigned long long)WEFT__PRESET_MAX_LINKS);
    return WEFT_OK;
}

/* Builds the fabric of result r, noted as spec. */
static weft_err build(const char *spec, const result *r, weft_topo **out, weft_diag *d)
{
    bool ok = false;
    weft_err e = weft__topo_arcs_connected(r->n, r->src, r->dst, r->m, &ok);
    if (e)
        return weft_diag_set(d, e, "%s: %s while building the fabric", spec, weft_strerror(e));
    if (!ok)
        return weft_diag_set(d, WEFT_EINVAL,
                             "%s: the result is not strongly connected (some rank cannot reach "
                             "another)",
                             spec);
    weft_topo_builder *b = NULL;
    e = weft_topo_builder_new(&b);
    for (uint32_t v = 0; !e && v < r->n; v++)
        e = weft__preset_node(b, WEFT_NODE_COMPUTE, NULL, NULL, "rank%u", v);
    for (size_t k = 0; !e && k < r->m; k++)
        e = weft_topo_builder_add_link(b, node(r->src[k]), node(r->dst[k]), r->bw[k], r->lat[k]);
    if (!e) {
        char note[WEFT_TOPO_NAME_MAX + 32];
        snprintf(note, sizeof note, "preset %.*s", WEFT_TOPO_NAME_MAX, spec);
        e = weft_topo_builder_note(b, note);
    }
    if (e) {
        weft_topo_builder_free(b);
        return weft_diag_set(d, e, "%s: %s while building the fabric", spec, weft_strerror(e));
    }
    return weft_topo_build(b, out, d);
}

/* Applies operator `o` to the operand texts (split at ';' of depth 0). */
static weft_err apply(const char *spec, int o, const char *args, size_t len, unsigned depth,
                      weft_topo **out, weft_diag *d)
{
    const char *part[3];
    size_t plen[3];
    unsigned np = 0;
    int level = 0;
    const char *s = args;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && args[i] == '(')
            level++;
        else if (i < len && args[i] == ')')
            level--;
        if (i == len || (args[i] == ';' && level == 0)) {
            if (np == 3)
                break;
            part[np] = s;
            plen[np++] = (size_t)(args + i - s);
            s = args + i + 1;
        }
    }
    unsigned want = ops[o].operands + (ops[o].kind == OP_EXPAND);
    static const char *const usage[] = {"line(SPEC)", "expand(SPEC;n)", "product(SPEC;SPEC)"};
    if (np != want)
        return weft_diag_set(d, WEFT_EINVAL, "%s: %s takes %u operand%s separated by ';' (%s)",
                             spec, ops[o].name, want, want > 1 ? "s" : "", usage[o]);
    for (unsigned i = 0; i < np; i++)
        if (plen[i] == 0)
            return weft_diag_set(d, WEFT_EINVAL, "%s: empty operand %u (%s)", spec, i + 1,
                                 usage[o]);
    uint32_t n = 0;
    if (ops[o].kind == OP_EXPAND) {
        char *end;
        char buf[16];
        size_t l = plen[1] < sizeof buf - 1 ? plen[1] : sizeof buf - 1;
        memcpy(buf, part[1], l);
        buf[l] = '\0';
        unsigned long v = strtoul(buf, &end, 10);
        if (buf[0] < '0' || buf[0] > '9' || *end || plen[1] >= sizeof buf || v < 1 || v > 65536)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "%s: n of expand(SPEC;n) must be an integer from 1 to 65536, "
                                 "not '%.*s'",
                                 spec, (int)plen[1], part[1]);
        n = (uint32_t)v;
    }
    weft_topo *g = NULL, *h = NULL;
    result r;
    memset(&r, 0, sizeof r);
    weft_err e = resolve(part[0], plen[0], depth + 1, &g, d);
    if (!e && ops[o].kind == OP_PRODUCT)
        e = resolve(part[1], plen[1], depth + 1, &h, d);
    char what[WEFT_TOPO_NAME_MAX + 1];
    if (!e) {
        snprintf(what, sizeof what, "%.*s", (int)plen[0], part[0]);
        e = check_direct(spec, what, g, d);
    }
    if (!e && h) {
        snprintf(what, sizeof what, "%.*s", (int)plen[1], part[1]);
        e = check_direct(spec, what, h, d);
    }
    if (e)
        goto done;
    uint64_t nodes, links;
    switch (ops[o].kind) {
    case OP_LINE: {
        nodes = weft_topo_num_links(g);
        links = 0;
        for (uint32_t l = 0; l < weft_topo_num_links(g); l++) {
            uint32_t first, count;
            weft_topo_out_links(g, weft_topo_link_dst(g, (weft_link_id){l}), &first, &count);
            links += count;
        }
        break;
    }
    case OP_EXPAND:
        nodes = (uint64_t)weft_topo_num_nodes(g) * n;
        links = weft__sat_mul(weft__sat_mul(weft_topo_num_links(g), n), n);
        break;
    default:
        nodes = (uint64_t)weft_topo_num_nodes(g) * weft_topo_num_nodes(h);
        links = weft__sat_add(weft__sat_mul(weft_topo_num_links(g), weft_topo_num_nodes(h)),
                              weft__sat_mul(weft_topo_num_links(h), weft_topo_num_nodes(g)));
        break;
    }
    if ((e = too_large(spec, nodes, links, d)))
        goto done;
    if (nodes < 2) {
        e = weft_diag_set(d, WEFT_EINVAL, "%s: the result has fewer than 2 ranks", spec);
        goto done;
    }
    e = ops[o].kind == OP_LINE     ? op_line(g, &r)
        : ops[o].kind == OP_EXPAND ? op_expand(g, n, &r)
                                   : op_product(g, h, &r);
    if (e)
        e = weft_diag_set(d, e, "%s: %s while building the fabric", spec, weft_strerror(e));
    else
        e = build(spec, &r, out, d);
done:
    result_fini(&r);
    weft_topo_free(g);
    weft_topo_free(h);
    return e;
}

static weft_err resolve(const char *text, size_t len, unsigned depth, weft_topo **out, weft_diag *d)
{
    if (depth > DCOPS_MAX_DEPTH)
        return weft_diag_set(d, WEFT_EINVAL, "%.*s: operators nested more than %d deep",
                             (int)(len > 200 ? 200 : len), text, DCOPS_MAX_DEPTH);
    char *spec = weft__malloc(len + 1);
    if (!spec)
        return weft_diag_code(d, WEFT_ENOMEM);
    memcpy(spec, text, len);
    spec[len] = '\0';
    weft_err e;
    int o = op_of(spec, len);
    struct stat st;
    if (o >= 0) {
        size_t open = strlen(ops[o].name);
        if (spec[len - 1] != ')')
            e = weft_diag_set(d, WEFT_EINVAL, "%s: missing ')' at the end", spec);
        else
            e = apply(spec, o, spec + open + 1, len - open - 2, depth, out, d);
    } else if (stat(spec, &st) == 0) {
        e = weft_topo_load_file(spec, out, d);
    } else {
        e = weft_topo_preset(spec, out, d);
        if (e == WEFT_ENOENT)
            e = weft_diag_set(d, WEFT_EINVAL, "no such file or preset '%s' (see weft topo list)",
                              spec);
    }
    weft__free(spec);
    return e;
}

weft_err weft__topo_operator(const char *spec, weft_topo **out, weft_diag *d)
{
    return resolve(spec, strlen(spec), 0, out, d);
}
