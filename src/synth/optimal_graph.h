/* The working graph of one phase of the optimal schedule (optimal_graph.c):
 * capacities, the rooted connectivity condition and edge splitting; the
 * entries are described in optimal_internal.h, with the files' order. */
#ifndef WEFT_SYNTH_OPTIMAL_GRAPH_H
#define WEFT_SYNTH_OPTIMAL_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/maxflow.h"
#include "weft/synth.h"

#define OPT_NONE UINT32_MAX

typedef struct opt_entry {
    uint32_t u, v; /* ends in the phase's direction (node ids) */
    int64_t cap;   /* units still free */
    /* A fabric link: a = link id, b = OPT_NONE. A splice: entries a, b. */
    uint32_t a, b;
} opt_entry;

/* The working graph of one phase. */
typedef struct opt_graph {
    const weft_topo *t;
    bool reverse; /* reduce-scatter: every link is used backwards */
    uint32_t n, nr;
    int64_t k; /* trees per root */
    weft_mf_algo algo;
    opt_entry *e;
    size_t ne, cap_e;
    uint64_t maxflows; /* max-flow runs so far (a statistic) */
} opt_graph;

void opt_graph_fini(opt_graph *g);

/* Sets g's capacities for per-rank rate r (GB/s, exact) and k trees per
 * root: c_l = floor(b_l k / r). With k == 0, chooses the smallest k that
 * makes every b_l k / r an integer (WEFT_EOVERFLOW when it exceeds
 * 2^31). g->t, reverse and algo must be set. */
weft_err opt_graph_caps(opt_graph *g, weft_rat r, int64_t k, weft_diag *d);

/* Lowers capacities until every non-compute node has equal in- and
 * out-capacity (only needed after flooring; see docs/optimal.md). */
void opt_graph_trim(opt_graph *g);

/* The condition: with a super-source joined to every rank by capacity k,
 * every rank receives a flow of N k. */
weft_err opt_graph_feasible(opt_graph *g, bool *ok);

/* Splits off every non-compute node (edge splitting that keeps the
 * condition). WEFT_ETOPO names a node that cannot be split completely. */
weft_err opt_graph_split(opt_graph *g, weft_diag *d);

/* Appends the physical node path of entry i (in the phase's direction,
 * from its u to its v) to path[*len ...]; path holds enough room (the
 * caller sizes it by opt_entry_hops + 1). */
void opt_entry_path(const opt_graph *g, uint32_t i, uint32_t *path, uint32_t *len);
uint32_t opt_entry_hops(const opt_graph *g, uint32_t i);

#endif
