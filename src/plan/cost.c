/* What a plan costs on a fabric: exact per-link loads, the throughput limit,
 * and an alpha-beta time estimate. See "Cost on a topology" in weft/plan.h.
 *
 * Routes of ops without an explicit route come from the topology's
 * shortest-path router and are cached per (source rank, destination rank)
 * pair, so a plan with millions of ops routes each pair once. */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "plan/cost_internal.h"
#include "plan/plan_internal.h"
#include "weft/paths.h"

void weft__cost_ctx_fini(weft__cost_ctx *c)
{
    weft_paths_free(c->paths);
    weft__map64_fini(&c->pairs);
    weft__free(c->routes);
    weft__free(c->link);
    weft__free(c->frac);
    weft__free(c->fracd);
    weft__free(c->nodes);
    weft__free(c->weights);
}

weft_err weft__cost_ctx_init(weft__cost_ctx *c, const weft_plan *p, const weft_topo *t,
                             weft_diag *d)
{
    memset(c, 0, sizeof *c);
    c->p = p;
    c->t = t;
    c->d = d;
    if (p->info.nranks != weft_topo_num_ranks(t))
        return weft_diag_set(d, WEFT_ETOPO, "the plan has %u ranks but the fabric has %u",
                             p->info.nranks, weft_topo_num_ranks(t));
    weft_err e = weft_paths_new(t, &c->paths);
    if (e)
        return weft_diag_code(d, e);
    c->nodes = weft__malloc(WEFT_PATHS_LIST_MAX * 256 * sizeof *c->nodes);
    c->weights = weft__malloc(WEFT_PATHS_LIST_MAX * sizeof *c->weights);
    if (!c->nodes || !c->weights)
        return weft_diag_code(d, WEFT_ENOMEM);
    return WEFT_OK;
}

static weft_err pool_push(weft__cost_ctx *c, uint32_t link, weft_rat frac)
{
    if (weft__grow((void **)&c->link, &c->pool_cap, c->npool + 1, sizeof *c->link) ||
        weft__grow((void **)&c->frac, &c->frac_cap, c->npool + 1, sizeof *c->frac) ||
        weft__grow((void **)&c->fracd, &c->fracd_cap, c->npool + 1, sizeof *c->fracd))
        return WEFT_ENOMEM;
    c->link[c->npool] = link;
    c->fracd[c->npool] = weft_rat_to_double(frac);
    c->frac[c->npool++] = frac;
    return WEFT_OK;
}

/* Routes src -> dst on shortest paths and appends it to the routes. */
static weft_err route_pair(weft__cost_ctx *c, uint32_t src, uint32_t dst, uint32_t *index)
{
    weft_node_id a = weft_topo_rank_node(c->t, (weft_rank){src});
    weft_node_id b = weft_topo_rank_node(c->t, (weft_rank){dst});
    weft_paths_route rt;
    weft_err e = weft_paths_route_get(c->paths, a, b, &rt, c->d);
    if (e)
        return e;
    weft__cost_route pr = {(uint32_t)c->npool, rt.n, weft_rat_to_double(rt.lat_ns) * 1e-9, 0, 0};
    for (uint32_t i = 0; i < rt.n; i++) {
        e = pool_push(c, rt.link[i], rt.frac[i]);
        if (e)
            return weft_diag_code(c->d, e);
        double s = c->fracd[pr.first + i] / weft__cost_link_bw(c->t, rt.link[i]);
        pr.flow_s_per_byte = s > pr.flow_s_per_byte ? s : pr.flow_s_per_byte;
    }
    /* The slowest path: share over bottleneck, over the listed paths. */
    uint32_t written;
    uint64_t total;
    uint32_t max = rt.hops < 256 ? WEFT_PATHS_LIST_MAX : 0;
    if (max && !weft_paths_list(c->paths, max, c->nodes, c->weights, &written, &total)) {
        for (uint32_t k = 0; k < written; k++) {
            double bottleneck = INFINITY;
            for (uint32_t h = 0; h < rt.hops; h++) {
                weft_link_id l;
                if (weft_topo_find_link(c->t, c->nodes[k * (rt.hops + 1) + h],
                                        c->nodes[k * (rt.hops + 1) + h + 1], &l)) {
                    double bw = weft__cost_link_bw(c->t, l.v);
                    bottleneck = bw < bottleneck ? bw : bottleneck;
                }
            }
            double s = weft_rat_to_double(c->weights[k]) / bottleneck;
            pr.s_per_byte = s > pr.s_per_byte ? s : pr.s_per_byte;
        }
    }
    if (weft__grow((void **)&c->routes, &c->routes_cap, c->nroutes + 1, sizeof *c->routes))
        return weft_diag_code(c->d, WEFT_ENOMEM);
    *index = (uint32_t)c->nroutes;
    c->routes[c->nroutes++] = pr;
    return WEFT_OK;
}

/* The cached route of a rank pair. */
weft_err weft__cost_pair(weft__cost_ctx *c, uint32_t src, uint32_t dst,
                         const weft__cost_route **out)
{
    uint64_t key = (uint64_t)src * c->p->info.nranks + dst;
    const uint32_t *known = weft__map64_find(&c->pairs, key);
    if (known) {
        *out = &c->routes[*known];
        return WEFT_OK;
    }
    uint32_t index = 0;
    weft_err e = route_pair(c, src, dst, &index);
    if (e)
        return e;
    if (weft__map64_put(&c->pairs, key, index))
        return weft_diag_code(c->d, WEFT_ENOMEM);
    *out = &c->routes[index];
    return WEFT_OK;
}

/* Resolves link k of path `path` of op `id` (an explicit route). */
weft_err weft__cost_path_link(weft__cost_ctx *c, uint32_t id, uint32_t path, uint32_t k,
                              uint32_t *link)
{
    const char *an = weft_plan_path_node(c->p, id, path, k);
    const char *bn = weft_plan_path_node(c->p, id, path, k + 1);
    weft_node_id a, b;
    weft_link_id l;
    /* Each failure returns the constant, not weft_diag_set's result, so that
     * the compiler sees that *link is set whenever WEFT_OK is returned (gcc
     * -O2/-O3 warned "'l' may be used uninitialized" in loads()). */
    if (!weft_topo_find_node(c->t, an, &a)) {
        weft_diag_set(c->d, WEFT_ETOPO, "op %u: route node '%s' is not in the fabric", id, an);
        return WEFT_ETOPO;
    }
    if (!weft_topo_find_node(c->t, bn, &b)) {
        weft_diag_set(c->d, WEFT_ETOPO, "op %u: route node '%s' is not in the fabric", id, bn);
        return WEFT_ETOPO;
    }
    if (!weft_topo_find_link(c->t, a, b, &l)) {
        weft_diag_set(c->d, WEFT_ETOPO, "op %u: route uses %s -> %s, which is not a link", id, an,
                      bn);
        return WEFT_ETOPO;
    }
    *link = l.v;
    return WEFT_OK;
}

static weft_err add_load(weft__cost_ctx *c, weft_rat *load, uint32_t l, weft_rat amount)
{
    if (weft_rat_add(load[l], amount, &load[l]))
        return weft_diag_set(
            c->d, WEFT_EOVERFLOW, "the load of link %s -> %s does not fit an exact fraction",
            weft_topo_node_name(c->t, weft_topo_link_src(c->t, (weft_link_id){l})),
            weft_topo_node_name(c->t, weft_topo_link_dst(c->t, (weft_link_id){l})));
    return WEFT_OK;
}

static weft_err loads_ops(weft__cost_ctx *c, weft_rat *load, uint64_t sc, const uint64_t *opb,
                          uint64_t total);

static weft_err loads(weft__cost_ctx *c, weft_rat *load)
{
    const weft_plan *p = c->p;
    uint32_t nl = weft_topo_num_links(c->t);
    for (uint32_t l = 0; l < nl; l++)
        load[l] = weft_rat_int(0);
    uint64_t sc = weft_plan_size_chunks(p);
    if (sc > INT64_MAX)
        return weft_diag_set(c->d, WEFT_EOVERFLOW, "the plan has too many chunks");
    /* An alltoallv plan: each op's real bytes over the plan's own size
     * (weft/plan.h), op_bytes * N / total, exact. */
    uint64_t *opb = NULL, total = 0;
    if (weft_plan_sized(p)) {
        /* Op sizes: bytes * N / (size * N), the same fraction. */
        weft_traffic_stats st = {0};
        if (weft_plan_traffic(p))
            weft_traffic_get_stats(weft_plan_traffic(p), &st);
        else if (weft_plan_own_size(p) * p->info.nranks < 9.2e18)
            st.total = (uint64_t)weft_plan_own_size(p) * p->info.nranks;
        else
            st.total = UINT64_MAX;
        total = st.total;
        if (total > INT64_MAX)
            return weft_diag_set(c->d, WEFT_EOVERFLOW,
                                 "the traffic matrix's %llu bytes do not fit an exact fraction",
                                 (unsigned long long)total);
        opb = weft__malloc(((size_t)p->nops + 1) * sizeof *opb);
        if (!opb)
            return weft_diag_code(c->d, WEFT_ENOMEM);
        weft_err e = weft_plan_op_bytes(p, opb, c->d);
        if (e) {
            weft__free(opb);
            return e;
        }
    }
    weft_err e = loads_ops(c, load, sc, opb, total);
    weft__free(opb);
    return e;
}

static weft_err loads_ops(weft__cost_ctx *c, weft_rat *load, uint64_t sc, const uint64_t *opb,
                          uint64_t total)
{
    const weft_plan *p = c->p;
    for (uint32_t id = 0; id < p->nops; id++) {
        const weft_op *op = &p->ops[id];
        if (!weft__cost_moves_data(op))
            continue;
        if (op->src_rank.v >= p->info.nranks || op->dst_rank.v >= p->info.nranks)
            return weft_diag_set(c->d, WEFT_EVERIFY, "op %u: rank %u or %u is not a rank", id,
                                 op->src_rank.v, op->dst_rank.v);
        weft_rat bytes, amount;
        weft_err e;
        if (!opb)
            e = weft_rat_make(op->count, (int64_t)sc, &bytes);
        else if (total == 0)
            bytes = weft_rat_int(0), e = WEFT_OK;
        else if ((e = weft_rat_make((int64_t)opb[id], (int64_t)total, &bytes)) == WEFT_OK)
            e = weft_rat_mul(bytes, weft_rat_int(p->info.nranks), &bytes);
        if (e)
            return weft_diag_set(c->d, WEFT_EOVERFLOW,
                                 "op %u: its bytes do not fit an exact "
                                 "fraction",
                                 id);
        uint32_t npaths = weft_plan_op_num_paths(p, id);
        for (uint32_t k = 0; k < npaths && !e; k++) {
            weft_rat share;
            e = weft_rat_mul(bytes, weft_plan_path_share(p, id, k), &share);
            if (e) {
                e = weft_diag_set(c->d, WEFT_EOVERFLOW, "op %u: share overflows", id);
                break;
            }
            uint32_t len = weft_plan_path_len(p, id, k);
            for (uint32_t h = 0; h + 1 < len && !e; h++) {
                uint32_t l;
                e = weft__cost_path_link(c, id, k, h, &l);
                if (!e)
                    e = add_load(c, load, l, share);
            }
        }
        if (npaths || e) {
            if (e)
                return e;
            continue;
        }
        const weft__cost_route *pr = NULL;
        e = weft__cost_pair(c, op->src_rank.v, op->dst_rank.v, &pr);
        for (uint32_t i = 0; !e && i < pr->n; i++) { /* pr is unset when pair_get failed */
            if (weft_rat_mul(bytes, c->frac[pr->first + i], &amount))
                return weft_diag_set(c->d, WEFT_EOVERFLOW, "op %u: load overflows", id);
            e = add_load(c, load, c->link[pr->first + i], amount);
        }
        if (e)
            return e;
    }
    return WEFT_OK;
}

weft_err weft_plan_link_loads(const weft_plan *p, const weft_topo *t, weft_rat *load, weft_diag *d)
{
    weft__cost_ctx c;
    weft_err e = weft__cost_ctx_init(&c, p, t, d);
    if (!e)
        e = loads(&c, load);
    weft__cost_ctx_fini(&c);
    return e;
}

weft_err weft_plan_cost_get(const weft_plan *p, const weft_topo *t, weft_plan_cost *out,
                            weft_diag *d)
{
    weft__cost_ctx c;
    weft_plan_cost r;
    memset(&r, 0, sizeof r);
    r.algbw = weft_rat_int(0);
    r.busiest_load = weft_rat_int(0);
    uint32_t nl = weft_topo_num_links(t);
    weft_rat *load = weft__malloc(((size_t)nl + 1) * sizeof *load);
    uint32_t *order = weft__malloc(((size_t)p->nops + 1) * sizeof *order);
    uint32_t *depth = weft__malloc(((size_t)p->nops + 1) * sizeof *depth);
    weft_err e = weft__cost_ctx_init(&c, p, t, d);
    if (!e && (!load || !order || !depth))
        e = weft_diag_code(d, WEFT_ENOMEM);
    if (!e)
        e = loads(&c, load);
    if (e)
        goto done;
    /* max load/bw, compared exactly as load_a * bw_b vs load_b * bw_a. */
    weft_rat worst = weft_rat_int(0);
    for (uint32_t l = 0; l < nl; l++) {
        if (weft_rat_is_zero(load[l]))
            continue;
        weft_rat ratio;
        if (weft_rat_div(load[l], weft_topo_link_bw(t, (weft_link_id){l}), &ratio)) {
            e = weft_diag_set(d, WEFT_EOVERFLOW, "load over bandwidth overflows");
            goto done;
        }
        if (!r.has_busiest || weft_rat_cmp(ratio, worst) > 0) {
            worst = ratio;
            r.has_busiest = true;
            r.busiest.v = l;
            r.busiest_load = load[l];
        }
    }
    if (r.has_busiest && weft_rat_div(weft_rat_int(1), worst, &r.algbw)) {
        e = weft_diag_set(d, WEFT_EOVERFLOW, "the throughput limit overflows");
        goto done;
    }
    e = weft__plan_topo_order(p, order, NULL, d);
    if (e)
        goto done;
    for (uint32_t i = 0; i < p->nops; i++) {
        uint32_t v = order[i], nd, best = 0;
        const uint32_t *deps = weft_plan_op_deps(p, v, &nd);
        for (uint32_t k = 0; k < nd; k++)
            best = depth[deps[k]] > best ? depth[deps[k]] : best;
        depth[v] = best + weft__cost_moves_data(&p->ops[v]);
        r.steps = depth[v] > r.steps ? depth[v] : r.steps;
        r.transfers += weft__cost_moves_data(&p->ops[v]);
    }
    *out = r;
done:
    weft__cost_ctx_fini(&c);
    weft__free(load);
    weft__free(order);
    weft__free(depth);
    return e;
}

weft_err weft_plan_alpha_beta(const weft_plan *p, const weft_topo *t, double size_bytes,
                              double *seconds, weft_diag *d)
{
    weft__cost_ctx c;
    uint32_t *order = weft__malloc(((size_t)p->nops + 1) * sizeof *order);
    double *finish = weft__malloc(((size_t)p->nops + 1) * sizeof *finish);
    double *opb = NULL; /* an alltoallv plan's bytes per op */
    weft_err e = weft__cost_ctx_init(&c, p, t, d);
    if (!e && (!order || !finish))
        e = weft_diag_code(d, WEFT_ENOMEM);
    if (!e)
        e = weft__plan_topo_order(p, order, NULL, d);
    if (e)
        goto done;
    double chunk = size_bytes / (double)weft_plan_size_chunks(p), total = 0;
    if (weft_plan_sized(p)) {
        opb = weft__malloc(((size_t)p->nops + 1) * sizeof *opb);
        e = opb ? weft_plan_op_bytes_at(p, size_bytes, opb, d) : weft_diag_code(d, WEFT_ENOMEM);
        if (e)
            goto done;
    }
    for (uint32_t i = 0; i < p->nops && !e; i++) {
        uint32_t v = order[i], nd;
        const uint32_t *deps = weft_plan_op_deps(p, v, &nd);
        double start = 0, dur = 0;
        for (uint32_t k = 0; k < nd; k++)
            start = finish[deps[k]] > start ? finish[deps[k]] : start;
        const weft_op *op = &p->ops[v];
        if (weft__cost_moves_data(op)) {
            double bytes = opb ? opb[v] : chunk * op->count;
            uint32_t npaths = weft_plan_op_num_paths(p, v);
            for (uint32_t k = 0; k < npaths && !e; k++) {
                double lat = 0, bottleneck = INFINITY;
                uint32_t len = weft_plan_path_len(p, v, k);
                for (uint32_t h = 0; h + 1 < len && !e; h++) {
                    uint32_t l;
                    e = weft__cost_path_link(&c, v, k, h, &l);
                    if (e)
                        break;
                    lat += weft_rat_to_double(weft_topo_link_lat(t, (weft_link_id){l})) * 1e-9;
                    double bw = weft__cost_link_bw(t, l);
                    bottleneck = bw < bottleneck ? bw : bottleneck;
                }
                double tk =
                    lat + bytes * weft_rat_to_double(weft_plan_path_share(p, v, k)) / bottleneck;
                dur = tk > dur ? tk : dur;
            }
            if (!npaths && !e) {
                const weft__cost_route *pr;
                e = weft__cost_pair(&c, op->src_rank.v, op->dst_rank.v, &pr);
                if (!e)
                    dur = pr->lat_s + bytes * pr->s_per_byte;
            }
        }
        finish[v] = start + dur;
        total = finish[v] > total ? finish[v] : total;
    }
    if (!e)
        *seconds = total;
done:
    weft__cost_ctx_fini(&c);
    weft__free(order);
    weft__free(finish);
    weft__free(opb);
    return e;
}
