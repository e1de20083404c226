/* What the Graphviz pictures share (weft topo dot, weft plan --algo optimal
 * --dot): quoting, the look of each node kind, nodes grouped by host. */
#ifndef WEFT_CLI_DOT_H
#define WEFT_CLI_DOT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/topo.h"

/* Writes s as a DOT quoted string. Inside quotes DOT only unescapes \";
 * backslashes are doubled so that labels (where \n, \l, \N mean something)
 * show them literally. A newline (never in a name: names are tokens)
 * becomes DOT's line break \n. */
void cli_dot_string(FILE *f, const char *s);

/* The attributes of a node of this kind: ranks green boxes, switches blue
 * ellipses, NICs orange diamonds, circuit switches purple octagons. */
const char *cli_dot_kind_style(weft_node_kind kind);

/* INDENT"name" [style];  for node n. */
void cli_dot_node(FILE *f, const weft_topo *t, weft_node_id n, const char *indent);

/* Node ids grouped by host in O(V) (a counting sort): the nodes of host h
 * are order[start[h] .. start[h+1]), in id order; both arrays are the
 * caller's to free. Returns false when out of memory. */
bool cli_dot_group_by_host(const weft_topo *t, uint32_t **order_out, uint32_t **start_out);

#endif
