/* The routing context shared by the cost models of the plan module
 * (cost.c: loads, throughput limit, alpha-beta; cost_shared.c: the
 * estimate with link sharing). Nothing outside src/plan includes this
 * header.
 *
 * Ops without an explicit route follow the topology's shortest-path router
 * (src/topo/paths.h); each (source rank, destination rank) pair is routed
 * once and cached, so a plan with millions of ops routes each pair once. */
#ifndef WEFT_PLAN_COST_INTERNAL_H
#define WEFT_PLAN_COST_INTERNAL_H

#include "base/map.h"
#include "weft/paths.h"
#include "weft/plan.h"

/* One routed rank pair: the links it uses with their exact shares
 * (link[first .. first+n) and frac[...] of the context; fracd the same as
 * doubles), and its alpha-beta constants. */
typedef struct weft__cost_route {
    uint32_t first, n;
    double lat_s;           /* latency of the route, seconds */
    double s_per_byte;      /* max over listed paths of share / bottleneck bandwidth */
    double flow_s_per_byte; /* max over links of share / bandwidth: the time per
                               byte of a flow alone on the route, split at the
                               fixed ECMP ratios (the simulator's model) */
} weft__cost_route;

typedef struct weft__cost_ctx {
    const weft_plan *p;
    const weft_topo *t;
    weft_paths *paths;
    weft_diag *d;
    /* Pair cache: src * N + dst -> index into routes. */
    weft__map64 pairs;
    weft__cost_route *routes;
    size_t nroutes, routes_cap;
    uint32_t *link;
    weft_rat *frac;
    double *fracd;
    size_t npool, pool_cap, frac_cap, fracd_cap;
    /* Scratch for path listing. */
    weft_node_id *nodes;
    weft_rat *weights;
} weft__cost_ctx;

/* Checks that p's ranks are t's and prepares the router. On error the
 * context must still be finished. */
weft_err weft__cost_ctx_init(weft__cost_ctx *c, const weft_plan *p, const weft_topo *t,
                             weft_diag *d);
/* Safe on a context whose init failed. */
void weft__cost_ctx_fini(weft__cost_ctx *c);
/* The cached route of ranks src -> dst (src != dst); valid until the next
 * call. WEFT_ETOPO (d) when dst cannot be reached, WEFT_ENOMEM. */
weft_err weft__cost_pair(weft__cost_ctx *c, uint32_t src, uint32_t dst,
                         const weft__cost_route **out);
/* The link between nodes k and k+1 of path `path` of op `id` (an explicit
 * route); WEFT_ETOPO naming the op and node when the fabric lacks it. */
weft_err weft__cost_path_link(weft__cost_ctx *c, uint32_t id, uint32_t path, uint32_t k,
                              uint32_t *link);

/* True when op moves data between two ranks (not a nop, not local). */
static inline bool weft__cost_moves_data(const weft_op *op)
{
    return op->kind != WEFT_OP_NOP && op->src_rank.v != op->dst_rank.v;
}

/* Link l's bandwidth in bytes per second. */
static inline double weft__cost_link_bw(const weft_topo *t, uint32_t l)
{
    return weft_rat_to_double(weft_topo_link_bw(t, (weft_link_id){l})) * 1e9;
}

#endif
