/* ECMP shortest-path routing on a fabric.
 *
 * Which paths. Traffic from node src to node dst takes the shortest paths by
 * hop count; among those, only the ones of least total latency (sum of the
 * links' exact latencies) are kept. Every path in the resulting set therefore
 * has the same hop count and the same latency. Forwarding is allowed through
 * any node, compute nodes included (a ring:N or torus fabric forwards through
 * its ranks), because the .topo format does not say which nodes forward.
 *
 * How traffic is split. "Even per hop", as ECMP routers hash it: at every node
 * the traffic that reaches it is split in equal parts over its next hops on
 * the kept paths. (This differs from "even over paths" when the path set is
 * not a product, e.g. one next hop leads to two paths and the other to one:
 * per hop gives 1/2, 1/4, 1/4, per path would give 1/3 each.) The fraction of
 * the traffic on each link is an exact weft_rat.
 *
 * How it is computed. A bidirectional breadth-first search from src (along
 * links) and dst (against links), a full level at a time on the smaller
 * frontier, stops at the first level where the two meet; the shortest-path
 * DAG is then recovered from the meeting layer. The cost of a query is the
 * size of the two balls of radius about hops/2 around src and dst, not of the
 * fabric: on a 100,000-rank clos a rack-local pair touches a few dozen nodes.
 * All per-node state lives in arrays allocated once per weft_paths and reset
 * through a list of touched nodes, so queries allocate nothing in steady
 * state. (A per-destination cache of a full BFS would cost O(V) memory per
 * destination and O(V + E) time per destination, which is what a ring on
 * 100,000 ranks cannot afford.)
 *
 * A weft_paths is not thread safe (it owns the scratch state); use one per
 * thread. The topology must outlive it.
 *
 * Part of the topo module (src/topo/paths.c); public because plan (alpha-beta
 * cost) and sim (routes of plans and rings) route over fabrics through it.
 */
#ifndef WEFT_PATHS_H
#define WEFT_PATHS_H

#include <stdint.h>

#include "weft/err.h"
#include "weft/rat.h"
#include "weft/topo.h"

typedef struct weft_paths weft_paths;

/* The links a route from src to dst uses and the exact fraction of the
 * traffic each carries. Arrays belong to the weft_paths that produced the
 * route and stay valid until its next query or weft_paths_free. Links appear
 * in order of distance from src, then by link id; the fractions of the links
 * leaving any one level sum to 1. */
typedef struct weft_paths_route {
    uint32_t n;           /* number of links used */
    const uint32_t *link; /* link ids */
    const weft_rat *frac; /* exact share of the traffic on each link, in (0, 1] */
    const double *fracd;  /* the same as doubles (correctly rounded from frac) */
    uint32_t hops;        /* links on every path */
    weft_rat lat_ns;      /* latency of every path, ns */
} weft_paths_route;

/* The largest number of paths weft_paths_list reports; the per-link
 * fractions of weft_paths_route are never capped. */
#define WEFT_PATHS_LIST_MAX 64

WEFT_API weft_err weft_paths_new(const weft_topo *t, weft_paths **out);
WEFT_API void weft_paths_free(weft_paths *p);

/* Routes src -> dst. WEFT_EINVAL when src == dst or a node is out of range,
 * WEFT_ETOPO when dst cannot be reached from src, WEFT_EOVERFLOW when a
 * latency sum or a fraction does not fit in a weft_rat. d names the nodes. */
WEFT_API weft_err weft_paths_route_get(weft_paths *p, weft_node_id src, weft_node_id dst,
                                       weft_paths_route *out, weft_diag *d);

/* The paths of the last successful weft_paths_route_get, as node sequences
 * with exact weights (the product of the per-hop splits along the path;
 * the weights of all paths sum to 1). Paths are listed depth first, next
 * hops in link-id order. At most `max` (<= WEFT_PATHS_LIST_MAX) paths are
 * written: path k is nodes[k*(hops+1) .. k*(hops+1)+hops] and has weight
 * weight[k]; nodes must have room for max*(hops+1) entries. *total receives
 * the number of paths in the set (saturating at UINT64_MAX), which may be
 * more than were written. WEFT_EINVAL without a route or when max is too
 * large; WEFT_ELIMIT for paths of 256 hops or more. */
WEFT_API weft_err weft_paths_list(weft_paths *p, uint32_t max, weft_node_id *nodes,
                                  weft_rat *weight, uint32_t *written, uint64_t *total);

#endif
