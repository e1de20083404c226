/* Routes of a simulated plan's ops (sim/plan_ctx.h): ECMP routes shared
 * per (source, destination, chunk count) through a hash map, and
 * explicit routes from an op's paths, whole or (circuit epochs) in parts.
 * File order: plan_routes < plan_epochs < plan_sim. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "sim/model.h"
#include "sim/plan_ctx.h"

static weft_err reserve_route(plan_ctx *c, size_t n)
{
    if (weft__grow((void **)&c->rlink, &c->rlink_cap, n, sizeof *c->rlink) ||
        weft__grow((void **)&c->rcoef, &c->rcoef_cap, n, sizeof *c->rcoef))
        return WEFT_ENOMEM;
    return WEFT_OK;
}

void plan_route_memo_fini(plan_route_memo *m)
{
    weft__map64_fini(&m->at);
    weft__free(m->route);
    weft__free(m->link);
    weft__free(m->frac);
    memset(m, 0, sizeof *m);
}

/* The route a -> b: from c->memo when it has it (else searched and
 * kept there), or searched. *link and *frac are valid until the next
 * call. */
static weft_err route_of(plan_ctx *c, weft_node_id a, weft_node_id b, uint32_t *n,
                         const uint32_t **link, const double **frac, double *lat_ns)
{
    plan_route_memo *m = c->memo;
    uint64_t key = (uint64_t)a.v << 32 | b.v;
    const uint32_t *hit = m ? weft__map64_find(&m->at, key) : NULL;
    if (hit) {
        const plan_route *r = &m->route[*hit];
        *n = r->n;
        *link = m->link + r->first;
        *frac = m->frac + r->first;
        *lat_ns = r->lat_ns;
        return WEFT_OK;
    }
    weft_paths_route rt;
    weft_err err = weft_paths_route_get(c->paths, a, b, &rt, c->d);
    if (err)
        return err;
    *n = rt.n;
    *link = rt.link;
    *frac = rt.fracd;
    *lat_ns = weft_rat_to_double(rt.lat_ns);
    if (!m || m->nroute >= UINT32_MAX || m->nlink + rt.n >= UINT32_MAX)
        return WEFT_OK;
    if (weft__grow((void **)&m->route, &m->route_cap, m->nroute + 1, sizeof *m->route) ||
        weft__grow((void **)&m->link, &m->link_cap, m->nlink + rt.n, sizeof *m->link) ||
        weft__grow((void **)&m->frac, &m->frac_cap, m->nlink + rt.n, sizeof *m->frac) ||
        weft__map64_put(&m->at, key, (uint32_t)m->nroute))
        return weft_diag_code(c->d, WEFT_ENOMEM);
    memcpy(m->link + m->nlink, rt.link, rt.n * sizeof *m->link);
    memcpy(m->frac + m->nlink, rt.fracd, rt.n * sizeof *m->frac);
    m->route[m->nroute++] = (plan_route){(uint32_t)m->nlink, rt.n, *lat_ns};
    m->nlink += rt.n;
    return WEFT_OK;
}

/* The ECMP route between two nodes for an op of `count` chunks (its
 * coefficients are count times the per-link fractions), created on first
 * use. */
weft_err plan_ecmp_route(plan_ctx *c, weft_node_id a, weft_node_id b, uint32_t count,
                         uint32_t *route)
{
    /* The key packs (a, b, count) exactly when each fits in 21 bits;
     * beyond that the route is built but not cached. */
    uint64_t key = ((uint64_t)a.v << 42) | ((uint64_t)b.v << 21) | count;
    bool cached = a.v < (1u << 21) && b.v < (1u << 21) && count < (1u << 21);
    const uint32_t *hit = cached ? weft__map64_find(&c->ecmp, key) : NULL;
    if (hit) {
        *route = *hit;
        return WEFT_OK;
    }
    uint32_t n;
    const uint32_t *link;
    const double *frac;
    double lat_ns;
    weft_err err = route_of(c, a, b, &n, &link, &frac, &lat_ns);
    if (err)
        return err;
    if (reserve_route(c, n))
        return weft_diag_code(c->d, WEFT_ENOMEM);
    for (uint32_t k = 0; k < n; k++)
        c->rcoef[k] = frac[k] * count;
    double lat = lat_ns * 1e-9 + sim_model_route_extra(c->o, c->t, a, b, link, n, c->slice_bytes);
    if ((err = sim_engine_add_route(c->e, n, link, c->rcoef, lat, route)))
        return weft_diag_code(c->d, err);
    if (!cached)
        return WEFT_OK; /* a fabric or op beyond 2^21 nodes or chunks */
    if ((err = weft__map64_put(&c->ecmp, key, *route)))
        return weft_diag_code(c->d, err);
    return WEFT_OK;
}

weft_err plan_explicit_route(plan_ctx *c, uint32_t op, uint32_t *route)
{
    return plan_route_sel(c, op, c->epochs ? WEFT_PLAN_NO_EPOCH : SEL_ALL, 1, PART_ALL, NULL,
                          route);
}

/* The relay of path k of op: the index of the first compute node after
 * the path's last OCS, where what the circuit delivered is forwarded on
 * (len - 1 when that is the destination or there is no OCS). */
static uint32_t path_relay(const plan_ctx *c, uint32_t op, uint32_t k)
{
    uint32_t len = weft_plan_path_len(c->p, op, k), last = len;
    weft_node_id v;
    for (uint32_t i = 1; i + 1 < len; i++)
        if (weft_topo_find_node(c->t, weft_plan_path_node(c->p, op, k, i), &v) &&
            weft_topo_node_kind(c->t, v) == WEFT_NODE_OCS)
            last = i;
    for (uint32_t i = last + 1; i + 1 < len; i++)
        if (weft_topo_find_node(c->t, weft_plan_path_node(c->p, op, k, i), &v) &&
            weft_topo_node_kind(c->t, v) == WEFT_NODE_COMPUTE)
            return i;
    return len - 1;
}

/* The same over the paths of epoch `sel` only (SEL_ALL: every path), each
 * share multiplied by scale, over the part of each path `part` names;
 * *n_links (may be NULL) receives the route's link count (a tail route
 * may have none: then no route is added). */
weft_err plan_route_sel(plan_ctx *c, uint32_t op, uint32_t sel, double scale, route_part part,
                        uint32_t *n_links, uint32_t *route)
{
    const weft_topo *t = c->t;
    uint32_t np = weft_plan_op_num_paths(c->p, op), n = 0;
    double lat = 0, count = weft_plan_op(c->p, op).count;
    for (uint32_t k = 0; k < np; k++) {
        if (sel != SEL_ALL && weft_plan_path_epoch(c->p, op, k) != sel)
            continue;
        uint32_t len = weft_plan_path_len(c->p, op, k), lo = 0;
        if (part != PART_ALL) {
            uint32_t r = path_relay(c, op, k);
            if (part == PART_HEAD)
                len = r + 1;
            else
                lo = r;
        }
        double share = weft_rat_to_double(weft_plan_path_share(c->p, op, k)) * scale, plat = 0;
        weft_node_id prev = {0};
        for (uint32_t i = lo; i < len; i++) {
            const char *name = weft_plan_path_node(c->p, op, k, i);
            weft_node_id v;
            if (!weft_topo_find_node(t, name, &v))
                return weft_diag_set(c->d, WEFT_ETOPO, "sim: op %u path %u: unknown node '%s'", op,
                                     k, name);
            if (i > lo) {
                weft_link_id l;
                if (!weft_topo_find_link(t, prev, v, &l))
                    return weft_diag_set(c->d, WEFT_ETOPO, "sim: op %u path %u: no link %s -> %s",
                                         op, k, weft_topo_node_name(t, prev), name);
                plat += weft_rat_to_double(weft_topo_link_lat(t, l)) * 1e-9;
                uint32_t j = 0;
                while (j < n && c->rlink[j] != l.v)
                    j++;
                if (j == n) {
                    if (reserve_route(c, n + 1))
                        return weft_diag_code(c->d, WEFT_ENOMEM);
                    c->rlink[n] = l.v;
                    c->rcoef[n++] = 0;
                }
                c->rcoef[j] += share * count;
            }
            prev = v;
        }
        if (plat > lat)
            lat = plat;
    }
    if (n_links)
        *n_links = n;
    if (part == PART_TAIL && n == 0)
        return WEFT_OK;
    weft_op op_ = weft_plan_op(c->p, op);
    lat += sim_model_route_extra(c->o, t, weft_topo_rank_node(t, op_.src_rank),
                                 weft_topo_rank_node(t, op_.dst_rank), c->rlink, n, c->slice_bytes);
    weft_err err = sim_engine_add_route(c->e, n, c->rlink, c->rcoef, lat, route);
    return err ? weft_diag_code(c->d, err) : WEFT_OK;
}
