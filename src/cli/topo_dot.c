/* weft topo dot SPEC: the fabric as a Graphviz DOT graph. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/fabric.h"
#include "cli/topo.h"

static const cli_opt dot_opts[] = {
    {"output", 'o', "FILE", "write to FILE (atomically: all or nothing) instead of stdout"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup dot_group = {"options", dot_opts};

static const cli_syntax dot_syntax = {
    .path = "weft topo dot",
    .args = "SPEC [-o FILE] [fabric options]",
    .about = "Prints the fabric as a Graphviz graph, e.g.\n"
             "    weft topo dot a100:2 | dot -Tsvg > a100.svg\n"
             "Ranks are green boxes, switches blue ellipses, NICs orange diamonds, optical\n"
             "circuit switches purple octagons; the nodes of a host are drawn inside a\n"
             "frame (a DOT cluster 'cluster_hostN'). Two opposite links with the same\n"
             "bandwidth and latency are drawn once, as a line with two arrow heads\n"
             "(dir=both); other links as single arrows. Labels give the bandwidth in GB/s\n"
             "and the latency when it is not 0.\n",
    .groups = {&dot_group, &cli_fabric_options},
    .pos_names = {"SPEC"},
    .min_pos = 1,
    .max_pos = 1,
};

/* Writes s as a DOT quoted string. Inside quotes DOT only unescapes \";
 * backslashes are doubled so that labels (where \n, \l, \N mean something)
 * show them literally. */
static void dot_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static const char *const kind_style[] = {
    [WEFT_NODE_COMPUTE] = "shape=box, style=\"rounded,filled\", fillcolor=\"#cdebc5\"",
    [WEFT_NODE_SWITCH] = "shape=ellipse, style=filled, fillcolor=\"#c9daf0\"",
    [WEFT_NODE_NIC] = "shape=diamond, style=filled, fillcolor=\"#f8d9b0\"",
    [WEFT_NODE_OCS] = "shape=octagon, style=filled, fillcolor=\"#dccbee\"",
};

static void dot_node(FILE *f, const weft_topo *t, weft_node_id n, const char *indent)
{
    fputs(indent, f);
    dot_string(f, weft_topo_node_name(t, n));
    fprintf(f, " [%s];\n", kind_style[weft_topo_node_kind(t, n)]);
}

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

/* Node ids grouped by host in O(V) (a counting sort): the nodes of host h
 * are order[start[h] .. start[h+1]), in id order. Returns false when out
 * of memory. */
static bool group_by_host(const weft_topo *t, uint32_t **order_out, uint32_t **start_out)
{
    uint32_t nn = weft_topo_num_nodes(t), nh = weft_topo_num_hosts(t);
    uint32_t *start = calloc((size_t)nh + 2, sizeof *start);
    uint32_t *order = malloc(((size_t)nn + 1) * sizeof *order);
    if (!start || !order) {
        free(start);
        free(order);
        return false;
    }
    for (uint32_t v = 0; v < nn; v++) {
        weft_node_id n = {v};
        int32_t h = weft_topo_node_host(t, n);
        if (h != WEFT_NO_HOST)
            start[h + 2]++;
    }
    for (uint32_t h = 0; h < nh; h++)
        start[h + 2] += start[h + 1];
    for (uint32_t v = 0; v < nn; v++) {
        weft_node_id n = {v};
        int32_t h = weft_topo_node_host(t, n);
        if (h != WEFT_NO_HOST)
            order[start[h + 1]++] = v;
    }
    *order_out = order;
    *start_out = start;
    return true;
}

static bool write_dot(FILE *f, const char *spec, const weft_topo *t)
{
    uint32_t nn = weft_topo_num_nodes(t), nl = weft_topo_num_links(t);
    uint32_t nh = weft_topo_num_hosts(t);
    uint32_t *order, *start;
    if (!group_by_host(t, &order, &start))
        return false;
    fputs("// weft topo dot ", f);
    for (const char *p = spec; *p; p++)
        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, f);
    fputs("\ndigraph weft {\n", f);
    fprintf(f, "  graph [fontname=\"Helvetica\", fontsize=11, labelloc=t, label=");
    char title[512];
    snprintf(title, sizeof title, "%s: %u ranks, %u nodes, %u links", spec,
             weft_topo_num_ranks(t), nn, nl);
    dot_string(f, title);
    fputs(", nodesep=0.3, ranksep=0.8];\n", f);
    fputs("  node [fontname=\"Helvetica\", fontsize=10, margin=\"0.08,0.04\"];\n", f);
    fputs("  edge [fontname=\"Helvetica\", fontsize=8, arrowsize=0.5, color=\"#555555\"];\n", f);
    /* Hosts first, each a cluster, then the nodes outside any host. */
    for (uint32_t h = 0; h < nh; h++) {
        fprintf(f, "  subgraph cluster_host%u {\n    label=", h);
        char label[300];
        snprintf(label, sizeof label, "host %s", weft_topo_host_name(t, (int32_t)h));
        dot_string(f, label);
        fputs(";\n    style=\"rounded,filled\"; fillcolor=\"#f5f5f5\"; color=\"#aaaaaa\";\n", f);
        for (uint32_t i = start[h]; i < start[h + 1]; i++) {
            weft_node_id n = {order[i]};
            dot_node(f, t, n, "    ");
        }
        fputs("  }\n", f);
    }
    free(order);
    free(start);
    for (uint32_t v = 0; v < nn; v++) {
        weft_node_id n = {v};
        if (weft_topo_node_host(t, n) == WEFT_NO_HOST)
            dot_node(f, t, n, "  ");
    }
    for (uint32_t i = 0; i < nl; i++) {
        weft_link_id l = {i}, back;
        weft_node_id src = weft_topo_link_src(t, l), dst = weft_topo_link_dst(t, l);
        bool pair = weft_topo_find_link(t, dst, src, &back) && same_link(t, l, back);
        /* A pair is drawn at its link whose source has the smaller id. */
        if (pair && src.v > dst.v)
            continue;
        char label[160];
        link_label(t, l, label, sizeof label);
        fputs("  ", f);
        dot_string(f, weft_topo_node_name(t, src));
        fputs(" -> ", f);
        dot_string(f, weft_topo_node_name(t, dst));
        fputs(" [label=", f);
        dot_string(f, label);
        fputs(pair ? ", dir=both];\n" : "];\n", f);
    }
    fputs("}\n", f);
    return true;
}

static int write_dot_command(FILE *f, const cli_args *a, const char *spec, const weft_topo *t)
{
    (void)a;
    if (write_dot(f, spec, t))
        return CLI_EXIT_OK;
    cli_error("out of memory drawing '%s' as DOT", spec);
    return CLI_EXIT_INPUT;
}

int cli_topo_dot(int argc, char **argv)
{
    return cli_topo_command(&dot_syntax, argc, argv, write_dot_command);
}
