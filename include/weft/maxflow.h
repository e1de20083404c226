/* Exact integer maximum flow on a reusable residual graph.
 *
 * A weft_maxflow is built once (add arcs, then freeze) and then run many
 * times with different capacities, sources and sinks: the bound runs
 * thousands of flows on one graph, so nothing is allocated per run and the
 * residual graph lives in flat arrays laid out per node (CSR), each arc next
 * to the other arcs of its tail, with the position of its reverse arc.
 *
 * Capacities are int64 >= 0. A run checks that the capacities leaving the
 * source sum to at most INT64_MAX (WEFT_EOVERFLOW otherwise); no flow,
 * excess or residual can then exceed int64.
 *
 * Two exact algorithms, chosen per run (docs/bound.md has the measurements):
 *  - Dinic: BFS levels and blocking flows found by an iterative DFS with
 *    current-arc pointers; O(V^2 E) in general, a few phases on the shallow
 *    fabrics weft sees. It can stop as soon as the flow reaches a limit.
 *  - push-relabel: highest-label selection, gap heuristic and periodic
 *    global relabelling (backward BFS from the sink); O(V^2 sqrt(E)).
 *    It computes a maximum preflow (phase one only), which gives the flow
 *    value and a minimum cut; it always runs to the maximum.
 *
 * After a run the source side of a minimum cut is available: the nodes that
 * cannot reach t in the residual graph. That is the largest source side of
 * any minimum cut and the same for every maximum flow or preflow, so both
 * algorithms report the same cut. It is meaningful when the run ended
 * below its limit.
 *
 * Node and arc numbers are plain uint32 indices private to this graph (the
 * caller maps fabric nodes and links onto them). Not thread safe: one run at
 * a time per object.
 *
 * Part of the topo module (src/topo/maxflow.c); public because synth (the
 * bound and the optimal schedule) runs its flows through it.
 */
#ifndef WEFT_MAXFLOW_H
#define WEFT_MAXFLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/err.h"

typedef struct weft_maxflow weft_maxflow;

/* The algorithm of one run (the public weft_maxflow_algo of weft/synth.h
 * maps onto this; the topo module does not see synth). */
typedef enum weft_mf_algo {
    WEFT_MF_DINIC = 0,
    WEFT_MF_PUSH_RELABEL,
} weft_mf_algo;

/* A graph of n_nodes nodes and no arcs. arcs_hint pre-sizes the arc list. */
WEFT_API weft_err weft_maxflow_new(uint32_t n_nodes, uint32_t arcs_hint, weft_maxflow **out);
/* Frees m; NULL is allowed. */
WEFT_API void weft_maxflow_free(weft_maxflow *m);

/* Adds the arc u -> v with capacity cap >= 0 and writes its id (arcs are
 * numbered 0, 1, ... in order of addition). Only before freeze. WEFT_EINVAL
 * for a bad node, a self-loop, a negative capacity or a frozen graph. */
WEFT_API weft_err weft_maxflow_add_arc(weft_maxflow *m, uint32_t u, uint32_t v, int64_t cap,
                                       uint32_t *arc);
/* Lays the residual graph out; after this only capacities change. */
WEFT_API weft_err weft_maxflow_freeze(weft_maxflow *m);

WEFT_API uint32_t weft_maxflow_num_nodes(const weft_maxflow *m);
WEFT_API uint32_t weft_maxflow_num_arcs(const weft_maxflow *m);
/* Sets an arc's capacity (cap >= 0) for the following runs. */
WEFT_API void weft_maxflow_set_cap(weft_maxflow *m, uint32_t arc, int64_t cap);
WEFT_API int64_t weft_maxflow_cap(const weft_maxflow *m, uint32_t arc);

/* Computes a flow from s to t (s != t) and writes its value. With limit >= 0
 * Dinic stops once the value reaches limit (the value is then exactly
 * limit); push-relabel ignores the limit. With limit < 0 the value is the
 * maximum flow. Frozen graphs only. */
WEFT_API weft_err weft_maxflow_run(weft_maxflow *m, weft_mf_algo algo, uint32_t s, uint32_t t,
                                   int64_t limit, int64_t *value);
/* The flow on an arc after the last run (for push-relabel: the preflow). */
WEFT_API int64_t weft_maxflow_flow(const weft_maxflow *m, uint32_t arc);
/* Marks side[v] = 1 for the source side of a minimum cut of the last run
 * and 0 elsewhere; returns how many nodes it marked. Meaningful when the run
 * ended below its limit. */
WEFT_API uint32_t weft_maxflow_source_side(weft_maxflow *m, uint8_t *side);

#endif
