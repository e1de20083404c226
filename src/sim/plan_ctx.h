/* The context weft_sim_plan builds a plan into (plan_sim.c), shared with
 * the routes (plan_routes.c) and the circuit epochs (plan_epochs.c). File
 * order: plan_routes < plan_epochs < plan_sim. */
#ifndef WEFT_SIM_PLAN_CTX_H
#define WEFT_SIM_PLAN_CTX_H

#include "base/map.h"
#include "sim/engine.h"
#include "weft/paths.h"
#include "weft/sim.h"

/* A path selection meaning every path of an op (plan_route_sel). */
#define SEL_ALL (UINT32_MAX - 1)

/* Routes between nodes as weft_paths_route_get gives them (links, each
 * link's fraction as a double, latency in ns as a double), kept across
 * the protocol runs of one weft_sim_plan call: a route does not depend on
 * the protocol (its extra latency and coefficients do, and each run
 * computes them from it). weft_sim_plan builds a plan's flows once per
 * protocol for its time bound, three times at 128 GPUs: without the memo,
 * 49,000 route searches for an all-to-all's 16,256 pairs. */
typedef struct plan_route {
    uint32_t first, n; /* links link[first .. first + n) */
    double lat_ns;
} plan_route;

typedef struct plan_route_memo {
    weft__map64 at; /* a.v << 32 | b.v -> index into route */
    plan_route *route;
    size_t nroute, route_cap;
    uint32_t *link;
    double *frac;
    size_t nlink, link_cap, frac_cap;
} plan_route_memo;

void plan_route_memo_fini(plan_route_memo *m);

typedef struct plan_ctx {
    const weft_topo *t;
    const weft_plan *p;
    sim_engine *e;
    weft_paths *paths;
    weft__map64 ecmp;      /* (src node << 42 | dst node << 21 | chunk count) -> engine route */
    plan_route_memo *memo; /* NULL: every route searched afresh */
    uint32_t *rlink;       /* scratch for one route: links and coefficients */
    double *rcoef;
    size_t rlink_cap, rcoef_cap;
    bool epochs;            /* the plan has circuits (weft/plan.h): paths with an
                               epoch are flows of their own (plan_epochs) */
    const weft_sim_opts *o; /* resolved settings */
    const double *cap;      /* link capacities, bytes/s (sim_model_link_cap) */
    double slice_bytes;     /* wire bytes of one slice of one chunk */
    uint32_t base;          /* engine id of the plan's first flow (weft_sim_plans) */
    weft_diag *d;
} plan_ctx;

/* Which part of each path a route covers: all of it, or (circuit epochs)
 * the head up to the relay after its last OCS, or the tail from there. */
typedef enum route_part { PART_ALL, PART_HEAD, PART_TAIL } route_part;

/* The ECMP route between nodes a and b for an op of `count` chunks, shared
 * by every op with the same three (cached in c->ecmp). */
weft_err plan_ecmp_route(plan_ctx *c, weft_node_id a, weft_node_id b, uint32_t count,
                         uint32_t *route);
/* An op's explicit route over all its paths (those without an epoch in a
 * plan with circuits). */
weft_err plan_explicit_route(plan_ctx *c, uint32_t op, uint32_t *route);

/* An op's explicit route over the paths of epoch `sel` (SEL_ALL: every
 * path; WEFT_PLAN_NO_EPOCH: those without one): per link, the sum of the
 * shares of the paths that cross it, times the op's chunk count and
 * `scale`, over the part of each path `part` says; the latency is that of
 * the slowest path. *n_links (may be NULL) gets how many links it has. */
weft_err plan_route_sel(plan_ctx *c, uint32_t op, uint32_t sel, double scale, route_part part,
                        uint32_t *n_links, uint32_t *route);

/* The flows of a plan with circuits (plan_epochs.c, docs/ocs.md): each
 * op's paths of an epoch as a flow of their own, and the OCS gates. */
weft_err plan_build_epochs(plan_ctx *c, const weft_sim_opts *o, double chunk, const double *opb);

#endif
