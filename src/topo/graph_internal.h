/* The layout of a built fabric, shared by the files of the topo module
 * (graph.c builds it, stats.c, write.c and the graph algorithms read it).
 * Nothing outside src/topo includes this header. */
#ifndef WEFT_TOPO_GRAPH_INTERNAL_H
#define WEFT_TOPO_GRAPH_INTERNAL_H

#include "base/name_index.h"
#include "weft/topo.h"

struct weft_topo {
    uint32_t n_nodes, n_links, n_ranks, n_hosts;
    char *strings;                 /* every name, host and attribute text, NUL-separated */
    uint32_t *node_name;           /* offset into strings */
    uint8_t *node_kind;            /* weft_node_kind */
    int32_t *node_host;            /* host index or WEFT_NO_HOST */
    uint32_t *node_attrs;          /* offset of "k=v k=v" ("" when none) */
    uint32_t *attr_start;          /* n_nodes+1: attributes of v are attr_start[v] .. [v+1]-1 */
    uint32_t *attr_key, *attr_val; /* offsets of each attribute's key and value */
    uint32_t *node_rank;           /* rank, or UINT32_MAX for non-compute */
    uint32_t *rank_node;           /* n_ranks node ids */
    uint32_t *host_name;           /* n_hosts offsets */
    uint32_t *out_start; /* n_nodes+1: out-links of v are out_start[v] .. out_start[v+1]-1 */
    uint32_t *link_src, *link_dst;
    weft_rat *link_bw, *link_lat;
    weft_link_shaper *link_shaper; /* NULL when no link has a shaper */
    uint32_t *in_start;            /* n_nodes+1 */
    uint32_t *in_links;            /* n_links link ids grouped by destination */
    char *note;                    /* "" when none */
    char *assumed;                 /* the note's assumption lines; "" when none */
    weft__name_index names;
};

/* Checks the ports and the reconfig= delay of every ocs node of a built
 * fabric (graph_ocs.c); WEFT_ETOPO with d naming the node and why. */
weft_err weft__topo_check_ocs(const weft_topo *t, weft_diag *d);

/* Same shaper (or none) on link la of a and link lb of b (graph_read.c). */
bool weft__topo_same_shaper(const weft_topo *a, uint32_t la, const weft_topo *b, uint32_t lb);

#endif
