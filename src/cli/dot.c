/* DOT helpers. See dot.h. */
#include "cli/dot.h"

#include <stdlib.h>

void cli_dot_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '\n') {
            fputs("\\n", f);
            continue;
        }
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

const char *cli_dot_kind_style(weft_node_kind kind)
{
    return kind_style[kind];
}

void cli_dot_node(FILE *f, const weft_topo *t, weft_node_id n, const char *indent)
{
    fputs(indent, f);
    cli_dot_string(f, weft_topo_node_name(t, n));
    fprintf(f, " [%s];\n", kind_style[weft_topo_node_kind(t, n)]);
}

bool cli_dot_group_by_host(const weft_topo *t, uint32_t **order_out, uint32_t **start_out)
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
