/* weft topo dot SPEC: the fabric as a Graphviz DOT graph. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/dot.h"
#include "cli/fabric.h"
#include "cli/topo.h"

static const cli_opt dot_opts[] = {
    {"output", 'o', "FILE", "write to FILE (atomically: all or nothing) instead of stdout"},
    {"full", 0, NULL, "draw every host even when identical hosts would be collapsed"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup dot_group = {"options", dot_opts, false};

static const cli_syntax dot_syntax = {
    .path = "weft topo dot",
    .args = "SPEC [-o FILE] [--full] [fabric options]",
    .about = "Prints the fabric as a Graphviz graph, e.g.\n"
             "    weft topo dot a100:2 | dot -Tsvg > a100.svg\n"
             "Ranks are green boxes, switches blue ellipses, NICs orange diamonds, optical\n"
             "circuit switches purple octagons; the nodes of a host are drawn inside a\n"
             "frame (a DOT cluster 'cluster_hostN'). Two opposite links with the same\n"
             "bandwidth and latency are drawn once, as a line with two arrow heads\n"
             "(dir=both); other links as single arrows. Labels give the bandwidth in GB/s\n"
             "and the latency when it is not 0. Inside a host, ranks, switches and NICs\n"
             "are each a row in node order.\n"
             "Fabrics of more than 64 nodes draw identical hosts once: the first host of\n"
             "each kind in detail (\"drawn for N hosts alike\"), the others as one\n"
             "summary node whose links to the network are merged (\"×15, 50 GB/s\"); --full\n"
             "draws every host. Nodes outside hosts are drawn in tiers by their hops from\n"
             "the hosts (rails or leaves, then spines), each tier a dashed frame.\n",
    .groups = {&dot_group, &cli_fabric_options},
    .pos_names = {"SPEC"},
    .min_pos = 1,
    .max_pos = 1,
};

/* "300" or "300, 0.7 us"-style label text: bandwidth in GB/s, latency in ns
 * when non-zero. */
static void link_label(const weft_topo *t, weft_link_id l, char *buf, size_t size)
{
    char bw[64], lat[64];
    weft_rat_format_exact(weft_topo_link_bw(t, l), bw, sizeof bw);
    weft_rat latency = weft_topo_link_lat(t, l);
    if (weft_rat_is_zero(latency)) {
        snprintf(buf, size, "%s GB/s", bw);
    } else {
        weft_rat_format_exact(latency, lat, sizeof lat);
        snprintf(buf, size, "%s GB/s, %s ns", bw, lat);
    }
}

static bool same_link(const weft_topo *t, weft_link_id a, weft_link_id b)
{
    return weft_rat_eq(weft_topo_link_bw(t, a), weft_topo_link_bw(t, b)) &&
           weft_rat_eq(weft_topo_link_lat(t, a), weft_topo_link_lat(t, b));
}

/* Fabrics with more nodes than this collapse identical hosts (unless
 * --full): h100:2 (42 nodes) is drawn whole, h100:4 (76) is not. */
#define DOT_FULL_NODES 64
/* In such fabrics a network tier of more nodes than this is one node too
 * (clos:hosts=32 has 32 spines; 8 leaves stay drawn). */
#define DOT_FULL_TIER 16

/* What is drawn and where: hosts grouped (cli_dot_group_by_host), the host class of
 * every host, the tier of every node outside hosts. */
typedef struct dot_ctx {
    const weft_topo *t;
    uint32_t nn, nh;
    uint32_t *order, *start; /* group_by_host */
    uint32_t *rep;           /* host -> the first host identical to it */
    uint32_t *members;       /* host -> hosts in its class (at its rep) */
    uint32_t *tier;          /* node -> hops from the nearest host node (0 in a host
                                or unreachable from hosts) */
    uint32_t *tier_size;     /* tier -> nodes outside hosts in it */
    bool collapse;           /* identical hosts beyond their first are summarised */
    bool big_tiers;          /* tiers over DOT_FULL_TIER nodes are summarised */
} dot_ctx;

static weft_node_id host_node(const dot_ctx *c, uint32_t h, uint32_t i)
{
    return (weft_node_id){c->order[c->start[h] + i]};
}

/* True when host h looks exactly like host r: the same kinds in the same
 * node order, the same links inside the host (by position), and the same
 * number, bandwidths and latencies of links leaving it. Hosts that pass
 * draw alike, so one can stand for all. O(nodes + links of the two). */
static bool same_host(const dot_ctx *c, uint32_t h, uint32_t r)
{
    const weft_topo *t = c->t;
    uint32_t n = c->start[h + 1] - c->start[h];
    if (n != c->start[r + 1] - c->start[r])
        return false;
    for (uint32_t i = 0; i < n; i++) {
        weft_node_id a = host_node(c, h, i), b = host_node(c, r, i);
        uint32_t fa, na, fb, nb;
        if (weft_topo_node_kind(t, a) != weft_topo_node_kind(t, b))
            return false;
        weft_topo_out_links(t, a, &fa, &na);
        weft_topo_out_links(t, b, &fb, &nb);
        if (na != nb)
            return false;
        for (uint32_t k = 0; k < na; k++) {
            weft_link_id la = {fa + k}, lb = {fb + k};
            weft_node_id da = weft_topo_link_dst(t, la), db = weft_topo_link_dst(t, lb);
            bool ina = weft_topo_node_host(t, da) == (int32_t)h,
                 inb = weft_topo_node_host(t, db) == (int32_t)r;
            if (ina != inb || !same_link(t, la, lb))
                return false;
            if (ina) { /* the same position inside the host */
                uint32_t pa = 0, pb = 0;
                while (pa < n && host_node(c, h, pa).v != da.v)
                    pa++;
                while (pb < n && host_node(c, r, pb).v != db.v)
                    pb++;
                if (pa != pb)
                    return false;
            }
        }
    }
    return true;
}

/* Host classes and network tiers. False when out of memory. */
static bool dot_ctx_init(dot_ctx *c, const weft_topo *t, bool full)
{
    memset(c, 0, sizeof *c);
    c->t = t;
    c->nn = weft_topo_num_nodes(t);
    c->nh = weft_topo_num_hosts(t);
    if (!cli_dot_group_by_host(t, &c->order, &c->start))
        return false;
    c->rep = calloc((size_t)c->nh + 1, sizeof *c->rep);
    c->members = calloc((size_t)c->nh + 1, sizeof *c->members);
    c->tier = calloc((size_t)c->nn + 1, sizeof *c->tier);
    c->tier_size = calloc((size_t)c->nn + 1, sizeof *c->tier_size);
    uint32_t *queue = malloc(((size_t)c->nn + 1) * sizeof *queue);
    uint32_t *reps = malloc(((size_t)c->nh + 1) * sizeof *reps);
    if (!c->rep || !c->members || !c->tier || !c->tier_size || !queue || !reps) {
        free(queue);
        free(reps);
        return false;
    }
    uint32_t nreps = 0;
    for (uint32_t h = 0; h < c->nh; h++) {
        uint32_t k = 0;
        while (k < nreps && !same_host(c, h, reps[k]))
            k++;
        if (k == nreps)
            reps[nreps++] = h;
        c->rep[h] = reps[k];
        c->members[reps[k]]++;
        if (c->members[reps[k]] > 1 && !full && c->nn > DOT_FULL_NODES)
            c->collapse = true;
    }
    free(reps);
    /* Tiers: breadth first from every node inside a host, over links in
     * either direction. */
    uint32_t head = 0, tail = 0;
    for (uint32_t v = 0; v < c->nn; v++)
        if (weft_topo_node_host(t, (weft_node_id){v}) != WEFT_NO_HOST)
            queue[tail++] = v;
    while (head < tail) {
        weft_node_id v = {queue[head++]};
        uint32_t first, n, nin;
        weft_topo_out_links(t, v, &first, &n);
        const uint32_t *in = weft_topo_in_links(t, v, &nin);
        for (uint32_t k = 0; k < n + nin; k++) {
            weft_link_id l = {k < n ? first + k : in[k - n]};
            weft_node_id w = k < n ? weft_topo_link_dst(t, l) : weft_topo_link_src(t, l);
            if (weft_topo_node_host(t, w) != WEFT_NO_HOST || c->tier[w.v])
                continue;
            c->tier[w.v] = c->tier[v.v] + 1;
            queue[tail++] = w.v;
        }
    }
    free(queue);
    for (uint32_t v = 0; v < c->nn; v++) {
        if (weft_topo_node_host(t, (weft_node_id){v}) != WEFT_NO_HOST)
            continue;
        if (++c->tier_size[c->tier[v]] > DOT_FULL_TIER && c->tier[v] > 0 && !full &&
            c->nn > DOT_FULL_NODES)
            c->big_tiers = true;
    }
    return true;
}

static void dot_ctx_fini(dot_ctx *c)
{
    free(c->order);
    free(c->start);
    free(c->rep);
    free(c->members);
    free(c->tier);
    free(c->tier_size);
}

/* Whether node v outside hosts is summarised with its tier. */
static bool in_big_tier(const dot_ctx *c, weft_node_id v)
{
    return c->big_tiers && weft_topo_node_host(c->t, v) == WEFT_NO_HOST && c->tier[v.v] > 0 &&
           c->tier_size[c->tier[v.v]] > DOT_FULL_TIER;
}

/* Whether node v is drawn as itself (false: it is summarised with its
 * host). */
static bool drawn(const dot_ctx *c, weft_node_id v)
{
    int32_t h = weft_topo_node_host(c->t, v);
    if (h == WEFT_NO_HOST)
        return !in_big_tier(c, v);
    return !c->collapse || c->rep[h] == (uint32_t)h || c->members[c->rep[h]] < 2;
}

/* The DOT id of what stands for node v: its name, or its class's summary. */
static void end_id(FILE *f, const dot_ctx *c, weft_node_id v)
{
    if (drawn(c, v))
        cli_dot_string(f, weft_topo_node_name(c->t, v));
    else if (in_big_tier(c, v))
        fprintf(f, "\"@tier %u\"", c->tier[v.v]);
    else
        fprintf(f, "\"@like host %u\"", c->rep[weft_topo_node_host(c->t, v)]);
}

/* nodes[0..n) on one row, left to right in the order given: a rank=same
 * group chained by invisible edges (DOT keeps such chains in order). */
static void dot_row(FILE *f, const weft_topo *t, const uint32_t *nodes, uint32_t n,
                    const char *indent)
{
    if (n < 2)
        return;
    fprintf(f, "%s{ rank=same; ", indent);
    for (uint32_t i = 0; i < n; i++) {
        cli_dot_string(f, weft_topo_node_name(t, (weft_node_id){nodes[i]}));
        fputs(i + 1 < n ? " -> " : " [style=invis]; }\n", f);
    }
}

/* Host h in detail: a frame holding its nodes, one row per kind (ranks,
 * then switches, NICs, circuit switches), each in node order. */
static void dot_host(FILE *f, const dot_ctx *c, uint32_t h, uint32_t *row)
{
    const weft_topo *t = c->t;
    fprintf(f, "  subgraph cluster_host%u {\n    label=", h);
    char label[300];
    uint32_t more = c->collapse ? c->members[h] - 1 : 0;
    if (more)
        snprintf(label, sizeof label, "host %s (drawn for %u hosts alike)",
                 weft_topo_host_name(t, (int32_t)h), more + 1);
    else
        snprintf(label, sizeof label, "host %s", weft_topo_host_name(t, (int32_t)h));
    cli_dot_string(f, label);
    fputs(";\n    style=\"rounded,filled\"; fillcolor=\"#f5f5f5\"; color=\"#aaaaaa\";\n", f);
    uint32_t n = c->start[h + 1] - c->start[h];
    for (uint32_t i = 0; i < n; i++)
        cli_dot_node(f, t, host_node(c, h, i), "    ");
    static const weft_node_kind kinds[] = {WEFT_NODE_COMPUTE, WEFT_NODE_SWITCH, WEFT_NODE_NIC,
                                           WEFT_NODE_OCS};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        uint32_t m = 0;
        for (uint32_t i = 0; i < n; i++)
            if (weft_topo_node_kind(t, host_node(c, h, i)) == kinds[k])
                row[m++] = host_node(c, h, i).v;
        dot_row(f, t, row, m, "    ");
    }
    fputs("  }\n", f);
}

/* The hosts of h's class other than h, as one node. */
static void dot_summary(FILE *f, const dot_ctx *c, uint32_t h)
{
    const weft_topo *t = c->t;
    uint32_t more = c->members[h] - 1, second = h, last = h, ranks = 0;
    for (uint32_t g = h + 1; g < c->nh; g++) {
        if (c->rep[g] != h)
            continue;
        second = second == h ? g : second;
        last = g;
    }
    for (uint32_t i = c->start[h]; i < c->start[h + 1]; i++)
        ranks += weft_topo_node_kind(t, (weft_node_id){c->order[i]}) == WEFT_NODE_COMPUTE;
    char label[600];
    snprintf(label, sizeof label,
             "\xc3\x97%u more hosts like host %s\n%s \xe2\x80\xa6 %s, %u ranks each", more,
             weft_topo_host_name(t, (int32_t)h), weft_topo_host_name(t, (int32_t)second),
             weft_topo_host_name(t, (int32_t)last), ranks);
    fprintf(f, "  \"@like host %u\" [shape=box3d, style=filled, fillcolor=\"#e6e6e6\", label=", h);
    cli_dot_string(f, label);
    fputs("];\n", f);
}

/* The nodes outside hosts, tier by tier: each tier a frame whose nodes are
 * one row in node order (rails, leaves, spines as the fabric has them). */
static void dot_network(FILE *f, const dot_ctx *c, uint32_t *row)
{
    const weft_topo *t = c->t;
    uint32_t top = 0;
    for (uint32_t v = 0; v < c->nn; v++)
        top = c->tier[v] > top ? c->tier[v] : top;
    for (uint32_t tier = 0; tier <= top; tier++) {
        uint32_t m = 0;
        for (uint32_t v = 0; v < c->nn; v++)
            if (weft_topo_node_host(t, (weft_node_id){v}) == WEFT_NO_HOST && c->tier[v] == tier)
                row[m++] = v;
        if (m == 0)
            continue;
        if (in_big_tier(c, (weft_node_id){row[0]})) {
            char label[300];
            snprintf(label, sizeof label, "tier %u: %u %s nodes\n%s \xe2\x80\xa6 %s", tier, m,
                     weft_node_kind_name(weft_topo_node_kind(t, (weft_node_id){row[0]})),
                     weft_topo_node_name(t, (weft_node_id){row[0]}),
                     weft_topo_node_name(t, (weft_node_id){row[m - 1]}));
            fprintf(f,
                    "  \"@tier %u\" [shape=box3d, style=filled, fillcolor=\"#c9daf0\", "
                    "label=",
                    tier);
            cli_dot_string(f, label);
            fputs("];\n", f);
            continue;
        }
        /* Tier 0 outside hosts: a fabric without hosts, or nodes no host
         * reaches; drawn as they are. */
        const char *indent = tier ? "    " : "  ";
        if (tier)
            fprintf(f,
                    "  subgraph cluster_tier%u {\n    label=\"tier %u: %u node%s\"; "
                    "style=dashed; color=\"#999999\";\n",
                    tier, tier, m, m == 1 ? "" : "s");
        for (uint32_t i = 0; i < m; i++)
            cli_dot_node(f, t, (weft_node_id){row[i]}, indent);
        if (tier) {
            dot_row(f, t, row, m, indent);
            fputs("  }\n", f);
        }
    }
}

/* One aggregated edge between summaries (or a summary and a node). */
typedef struct agg_edge {
    uint32_t a, b; /* node id, or nn + host of a summary */
    uint32_t link; /* the first link it stands for */
    uint32_t count;
    bool uniform; /* every link has the first one's bandwidth and latency */
} agg_edge;

static int agg_cmp(const void *x, const void *y)
{
    const agg_edge *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return p->link < q->link ? -1 : p->link > q->link;
}

/* Node v, the summary of its host class (nn + host), or of its tier
 * (nn + hosts + tier). */
static uint32_t end_key(const dot_ctx *c, weft_node_id v)
{
    if (drawn(c, v))
        return v.v;
    if (in_big_tier(c, v))
        return c->nn + c->nh + c->tier[v.v];
    return c->nn + c->rep[weft_topo_node_host(c->t, v)];
}

/* Hops from the hosts of what key stands for: 0 for hosts and their
 * summaries, the tier for the network. */
static uint32_t key_level(const dot_ctx *c, uint32_t key)
{
    if (key < c->nn)
        return weft_topo_node_host(c->t, (weft_node_id){key}) == WEFT_NO_HOST ? c->tier[key] : 0;
    return key < c->nn + c->nh ? 0 : key - c->nn - c->nh;
}

static void dot_key(FILE *f, const dot_ctx *c, uint32_t key)
{
    if (key < c->nn)
        cli_dot_string(f, weft_topo_node_name(c->t, (weft_node_id){key}));
    else if (key < c->nn + c->nh)
        fprintf(f, "\"@like host %u\"", key - c->nn);
    else
        fprintf(f, "\"@tier %u\"", key - c->nn - c->nh);
}

/* The links that touch a summary, merged per pair of ends: "×15, 50 GB/s"
 * (or "×15 links" when they differ); a pair that runs both ways alike is
 * one line with two heads. Links inside a summarised host are not drawn. */
static bool dot_aggregated(FILE *f, const dot_ctx *c)
{
    const weft_topo *t = c->t;
    uint32_t nl = weft_topo_num_links(t), n = 0;
    agg_edge *e = malloc(((size_t)nl + 1) * sizeof *e);
    if (!e)
        return false;
    for (uint32_t i = 0; i < nl; i++) {
        weft_link_id l = {i};
        weft_node_id s = weft_topo_link_src(t, l), d = weft_topo_link_dst(t, l);
        if (drawn(c, s) && drawn(c, d))
            continue;
        uint32_t a = end_key(c, s), b = end_key(c, d);
        if (a != b)
            e[n++] = (agg_edge){a, b, i, 1, true};
    }
    qsort(e, n, sizeof *e, agg_cmp);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (m && e[m - 1].a == e[i].a && e[m - 1].b == e[i].b) {
            e[m - 1].count++;
            e[m - 1].uniform &=
                same_link(t, (weft_link_id){e[m - 1].link}, (weft_link_id){e[i].link});
        } else {
            e[m++] = e[i];
        }
    }
    for (uint32_t i = 0; i < m; i++) {
        /* The reverse edge, found by binary search. */
        agg_edge key = {e[i].b, e[i].a, 0, 0, true};
        uint32_t lo = 0, hi = m;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (e[mid].a < key.a || (e[mid].a == key.a && e[mid].b < key.b))
                lo = mid + 1;
            else
                hi = mid;
        }
        bool pair = lo < m && e[lo].a == key.a && e[lo].b == key.b && e[lo].count == e[i].count &&
                    e[lo].uniform && e[i].uniform &&
                    same_link(t, (weft_link_id){e[lo].link}, (weft_link_id){e[i].link});
        /* A pair is drawn from the end nearer the hosts, so that DOT ranks
         * hosts above their network. */
        uint32_t la = key_level(c, e[i].a), lb = key_level(c, e[i].b);
        if (pair && (la > lb || (la == lb && e[i].a > e[i].b)))
            continue;
        char label[200], one[160];
        if (e[i].uniform) {
            link_label(t, (weft_link_id){e[i].link}, one, sizeof one);
            snprintf(label, sizeof label, "\xc3\x97%u, %s", e[i].count, one);
        } else {
            snprintf(label, sizeof label, "\xc3\x97%u links", e[i].count);
        }
        fputs("  ", f);
        dot_key(f, c, e[i].a);
        fputs(" -> ", f);
        dot_key(f, c, e[i].b);
        fputs(" [label=", f);
        cli_dot_string(f, label);
        fputs(pair ? ", dir=both, penwidth=2];\n" : ", penwidth=2];\n", f);
    }
    free(e);
    return true;
}

static bool write_dot(FILE *f, const char *spec, const weft_topo *t, bool full)
{
    uint32_t nn = weft_topo_num_nodes(t), nl = weft_topo_num_links(t);
    dot_ctx c;
    uint32_t *row = NULL;
    if (!dot_ctx_init(&c, t, full) || !(row = malloc(((size_t)nn + 1) * sizeof *row))) {
        dot_ctx_fini(&c);
        return false;
    }
    fputs("// weft topo dot ", f);
    for (const char *p = spec; *p; p++)
        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, f);
    fputs("\ndigraph weft {\n", f);
    fprintf(f, "  graph [fontname=\"Helvetica\", fontsize=11, labelloc=t, label=");
    char title[600];
    int len = snprintf(title, sizeof title, "%s: %u ranks, %u nodes, %u links", spec,
                       weft_topo_num_ranks(t), nn, nl);
    if (c.collapse && len > 0 && (size_t)len < sizeof title)
        snprintf(title + len, sizeof title - (size_t)len,
                 "\n(identical hosts drawn once; weft topo dot --full draws them all)");
    cli_dot_string(f, title);
    /* Rows keep node order only when crossing minimisation may not swap
     * them (remincross, mclimit). */
    fputs(", newrank=true, remincross=false, mclimit=0.01, nodesep=0.3, ranksep=0.8];\n", f);
    fputs("  node [fontname=\"Helvetica\", fontsize=10, margin=\"0.08,0.04\"];\n", f);
    fputs("  edge [fontname=\"Helvetica\", fontsize=8, arrowsize=0.5, color=\"#555555\"];\n", f);
    /* Hosts first, each a cluster (or a summary for the rest of its class),
     * then the network tier by tier. */
    for (uint32_t h = 0; h < c.nh; h++) {
        if (c.collapse && c.rep[h] != h && c.members[c.rep[h]] > 1)
            continue;
        dot_host(f, &c, h, row);
        if (c.collapse && c.members[h] > 1)
            dot_summary(f, &c, h);
    }
    dot_network(f, &c, row);
    for (uint32_t i = 0; i < nl; i++) {
        weft_link_id l = {i}, back;
        weft_node_id src = weft_topo_link_src(t, l), dst = weft_topo_link_dst(t, l);
        if (!drawn(&c, src) || !drawn(&c, dst))
            continue;
        bool pair = weft_topo_find_link(t, dst, src, &back) && same_link(t, l, back);
        /* A pair is drawn at its link whose source has the smaller id. */
        if (pair && src.v > dst.v)
            continue;
        char label[160];
        link_label(t, l, label, sizeof label);
        fputs("  ", f);
        end_id(f, &c, src);
        fputs(" -> ", f);
        end_id(f, &c, dst);
        fputs(" [label=", f);
        cli_dot_string(f, label);
        fputs(pair ? ", dir=both];\n" : "];\n", f);
    }
    bool ok = !(c.collapse || c.big_tiers) || dot_aggregated(f, &c);
    fputs("}\n", f);
    free(row);
    dot_ctx_fini(&c);
    return ok;
}

static int write_dot_command(FILE *f, const cli_args *a, const char *spec, const weft_topo *t)
{
    if (write_dot(f, spec, t, cli_args_has(a, "full")))
        return CLI_EXIT_OK;
    cli_error("out of memory drawing '%s' as DOT", spec);
    return CLI_EXIT_INPUT;
}

int cli_topo_dot(int argc, char **argv)
{
    return cli_topo_command(&dot_syntax, argc, argv, write_dot_command);
}
