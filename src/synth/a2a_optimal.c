/* The optimal all-to-all plan (uniform, or a traffic matrix as an
 * alltoallv plan) from the certified maximum concurrent flow (weft/synth.h,
 * docs/bound.md). Each source's flow is decomposed into
 * paths exactly (rationals): a path from s to d is found by breadth-first
 * search over links that still carry s's flow, takes the least of its
 * links' remainders and of what d still needs, and is subtracted. What is
 * subtracted is an s-to-d path flow of at most d's remaining demand, so
 * what remains is still a flow from s meeting the remaining demands: every
 * search succeeds, and each step empties a link or a demand, so there are
 * at most (links + ranks) paths per source. Flow left on cycles is dropped
 * (it only lowers loads). A path through another rank is a relay in the
 * route, as the bound allows.
 *
 * With a group of rank maps (uniform traffic on identical boxes such as
 * h100:B, orbits.h) the program has one source, rank 0: its flow is
 * decomposed once, and the op from s to d gets the paths of rank 0 to
 * g_s^-1(d), each node mapped by g_s, with the same shares. The loads of
 * all these paths on a link are those the program bounds (a2a_bound.c), so
 * the plan's limit is the bound; building costs O(N^2 P L) for P paths of
 * L nodes per pair, no program of N sources.
 *
 * With a matrix whose bound column generation certified (a2a_colgen.c),
 * the flow comes as weighted routing trees instead: source s's trees T
 * with λ_T summing to θ, tree T delivering λ_T dem(s, d) to every d along
 * its path from s to d. So pair (s, d) is routed on the path to d in
 * each of s's trees with share λ_T / θ (the same share for every d; the
 * shares sum to 1, and a path found twice gets the sum): the loads are
 * the certified master's, so the plan's limit is the bound, with no
 * decomposition and no program of sources x links (1,024 ranks). A source
 * split over several trees is routed instead by its row of x, from the
 * edge program restricted to those sources (a2a_bound.c, reroute_split:
 * the master's shares can pass 64 bits), decomposed as above. */
#include <string.h>

#include "base/alloc.h"
#include "synth/a2a_internal.h"
#include "weft/synth.h"

typedef struct decomp {
    const weft_topo *t;
    const weft__a2a_flow *f;
    uint32_t n, m;
    mpq_t *r;           /* m: remaining flow of the current source */
    uint32_t *via;      /* n: the link BFS reached each node by */
    uint32_t *queue;    /* n */
    const char **names; /* n: a path's node names */
    /* With maps: the paths of rank 0 to each rank d0 (first[d0] ..
     * first[d0 + 1] - 1 in the path table), their node ids and shares. */
    uint32_t *first;
    uint32_t *pstart, *pnodes;
    weft_rat *pshare;
    uint32_t npaths, nnodes;
    size_t pcap, ncap, scap;
    /* With trees: each tree of the current rank, the link into each node
     * (UINT32_MAX none); a pair's distinct paths, their nodes (n + 1 per
     * path) and shares. */
    uint32_t *par, *tnodes, *tlen;
    mpq_t *tshare;
    size_t parcap, tncap, tlcap, tscap, tsinit;
} decomp;

/* Breadth-first search from node a to node b over links with r > 0; the
 * path's links in reverse through via[]. */
static bool find_path(decomp *c, uint32_t a, uint32_t b)
{
    for (uint32_t v = 0; v < c->n; v++)
        c->via[v] = UINT32_MAX;
    uint32_t head = 0, tail = 0;
    c->queue[tail++] = a;
    c->via[a] = UINT32_MAX - 1;
    while (head < tail && c->via[b] == UINT32_MAX) {
        uint32_t u = c->queue[head++], first, count;
        weft_topo_out_links(c->t, (weft_node_id){u}, &first, &count);
        for (uint32_t i = 0; i < count; i++) {
            uint32_t l = first + i, x = weft_topo_link_dst(c->t, (weft_link_id){l}).v;
            if (c->via[x] != UINT32_MAX || mpq_sgn(c->r[l]) <= 0)
                continue;
            c->via[x] = l;
            c->queue[tail++] = x;
        }
    }
    return c->via[b] != UINT32_MAX;
}

/* Adds the routes of op `id` (rank s to rank d, row `row` of the flow's
 * dem): paths carrying theta * dem(s, d) in all, each with its exact
 * share. */
static weft_err route_pair(decomp *c, weft_plan *p, uint32_t id, uint32_t s, uint32_t row,
                           uint32_t d, weft_diag *dg)
{
    uint32_t a = weft_topo_rank_node(c->t, (weft_rank){s}).v;
    uint32_t b = weft_topo_rank_node(c->t, (weft_rank){d}).v;
    mpq_t rem, amt, share;
    mpq_t want;
    mpq_inits(rem, amt, share, want, NULL);
    mpq_mul(want, c->f->theta, c->f->dem[(size_t)row * c->f->nr + d]);
    mpq_set(rem, want);
    weft_err e = WEFT_OK;
    while (mpq_sgn(rem) > 0 && !e) {
        if (!find_path(c, a, b)) {
            e = weft_diag_set(dg, WEFT_EINVAL,
                              "internal: the certified flow of rank %u has no path left to rank "
                              "%u",
                              s, d);
            break;
        }
        mpq_set(amt, rem);
        uint32_t len = 0;
        for (uint32_t v = b; v != a; v = weft_topo_link_src(c->t, (weft_link_id){c->via[v]}).v) {
            if (mpq_cmp(c->r[c->via[v]], amt) < 0)
                mpq_set(amt, c->r[c->via[v]]);
            len++;
        }
        uint32_t k = len;
        for (uint32_t v = b; v != a; v = weft_topo_link_src(c->t, (weft_link_id){c->via[v]}).v) {
            mpq_sub(c->r[c->via[v]], c->r[c->via[v]], amt);
            c->names[k--] = weft_topo_node_name(c->t, (weft_node_id){v});
        }
        c->names[0] = weft_topo_node_name(c->t, (weft_node_id){a});
        mpq_sub(rem, rem, amt);
        mpq_div(share, amt, want);
        if (!mpz_fits_slong_p(mpq_numref(share)) || !mpz_fits_slong_p(mpq_denref(share))) {
            e = weft_diag_set(dg, WEFT_EOVERFLOW,
                              "a path of rank %u's flow to rank %u carries a share that does not "
                              "fit a 64-bit fraction",
                              s, d);
            break;
        }
        weft_rat sh = {mpz_get_si(mpq_numref(share)), mpz_get_si(mpq_denref(share))};
        if (p) {
            e = weft_plan_add_path(p, id, sh, c->names, len + 1);
        } else {
            /* Recorded for mapping (rank 0's paths): node ids, in order. */
            if (weft__grow((void **)&c->pstart, &c->pcap, (size_t)c->npaths + 2,
                           sizeof *c->pstart) ||
                weft__grow((void **)&c->pshare, &c->scap, (size_t)c->npaths + 1,
                           sizeof *c->pshare) ||
                weft__grow((void **)&c->pnodes, &c->ncap, (size_t)c->nnodes + len + 1,
                           sizeof *c->pnodes)) {
                e = WEFT_ENOMEM;
            } else {
                uint32_t i = len;
                for (uint32_t v = b; v != a;
                     v = weft_topo_link_src(c->t, (weft_link_id){c->via[v]}).v)
                    c->pnodes[c->nnodes + i--] = v;
                c->pnodes[c->nnodes] = a;
                c->pshare[c->npaths] = sh;
                c->pstart[c->npaths++] = c->nnodes;
                c->nnodes += len + 1;
                c->pstart[c->npaths] = c->nnodes;
            }
        }
        if (e)
            weft_diag_code(dg, e);
    }
    mpq_clears(rem, amt, share, want, NULL);
    return e;
}

/* Rank s's block for rank d: one chunk copied from slot d of s's input to
 * slot s of d's output. */
static weft_err add_block(weft_plan *p, uint32_t s, uint32_t d, uint32_t *id)
{
    weft_op op = {.kind = WEFT_OP_COPY,
                  .src_rank = {s},
                  .dst_rank = {d},
                  .src_buf = WEFT_BUF_IN,
                  .dst_buf = WEFT_BUF_OUT,
                  .src_index = d,
                  .dst_index = s,
                  .count = 1};
    return weft_plan_add_op(p, &op, NULL, 0, id);
}

/* The uniform plan from rank 0's flow and the rank maps (see the top). */
static weft_err build_mapped(decomp *c, weft_plan *p, weft_diag *dg)
{
    const weft__a2a_flow *f = c->f;
    uint32_t nr = f->nr, n = c->n, m = c->m;
    weft_err e = WEFT_OK;
    uint32_t *inv = weft__malloc((size_t)nr * sizeof *inv);
    c->first = weft__malloc(((size_t)nr + 1) * sizeof *c->first);
    if (!inv || !c->first) {
        weft__free(inv);
        return weft_diag_code(dg, WEFT_ENOMEM);
    }
    for (uint32_t l = 0; l < m; l++)
        mpq_set(c->r[l], f->x[l]);
    for (uint32_t d0 = 0; d0 < nr && !e; d0++) {
        c->first[d0] = c->npaths;
        if (d0 != f->maps.rep)
            e = route_pair(c, NULL, 0, f->maps.rep, 0, d0, dg);
    }
    c->first[nr] = c->npaths;
    for (uint32_t s = 0; s < nr && !e; s++) {
        const uint32_t *g = f->maps.node_map + (size_t)s * n;
        for (uint32_t d0 = 0; d0 < nr; d0++) {
            weft_rank r = {0};
            weft_topo_node_rank(
                c->t, (weft_node_id){g[weft_topo_rank_node(c->t, (weft_rank){d0}).v]}, &r);
            inv[r.v] = d0;
        }
        for (uint32_t k = 0; k < nr && !e; k++) {
            uint32_t d = (s + k) % nr, id;
            e = add_block(p, s, d, &id);
            for (uint32_t q = c->first[inv[d]]; d != s && !e && q < c->first[inv[d] + 1]; q++) {
                uint32_t len = c->pstart[q + 1] - c->pstart[q];
                for (uint32_t i = 0; i < len; i++)
                    c->names[i] =
                        weft_topo_node_name(c->t, (weft_node_id){g[c->pnodes[c->pstart[q] + i]]});
                e = weft_plan_add_path(p, id, c->pshare[q], c->names, len);
            }
            if (e)
                weft_diag_code(dg, e);
        }
    }
    weft__free(inv);
    return e;
}

/* The matrix plan from column generation's trees (see the top). */
static weft_err build_trees(decomp *c, const weft_traffic *tm, weft_plan *p, weft_diag *dg)
{
    const weft__a2a_trees *tr = &c->f->trees;
    uint32_t nr = c->f->nr, n = c->n;
    weft_err e = WEFT_OK;
    uint32_t k0 = 0, k1 = 0;
    for (uint32_t s = 0; s < nr && !e; s++, k0 = k1) {
        /* Rank s's trees: k0 .. k1 - 1 (none when it sends only to itself). */
        while (k1 < tr->count && tr->rank[k1] == s)
            k1++;
        uint32_t nt = k1 - k0;
        if (weft__grow((void **)&c->par, &c->parcap, (size_t)nt * n, sizeof *c->par) ||
            weft__grow((void **)&c->tnodes, &c->tncap, (size_t)nt * (n + 1), sizeof *c->tnodes) ||
            weft__grow((void **)&c->tlen, &c->tlcap, nt, sizeof *c->tlen) ||
            weft__grow((void **)&c->tshare, &c->tscap, nt, sizeof *c->tshare)) {
            e = weft_diag_code(dg, WEFT_ENOMEM);
            break;
        }
        for (; c->tsinit < c->tscap; c->tsinit++)
            mpq_init(c->tshare[c->tsinit]);
        for (uint32_t k = 0; k < nt; k++) {
            uint32_t *par = c->par + (size_t)k * n;
            for (uint32_t v = 0; v < n; v++)
                par[v] = UINT32_MAX;
            for (uint32_t i = tr->first[k0 + k]; i < tr->first[k0 + k + 1]; i++)
                par[weft_topo_link_dst(c->t, (weft_link_id){tr->link[i]}).v] = tr->link[i];
        }
        uint32_t a = weft_topo_rank_node(c->t, (weft_rank){s}).v;
        /* A split rank rerouted by the edge program: its row of x. */
        uint32_t row = c->f->row_of ? c->f->row_of[s] : UINT32_MAX;
        for (uint32_t l = 0; row != UINT32_MAX && l < c->m; l++)
            mpq_set(c->r[l], c->f->x[(size_t)row * c->m + l]);
        for (uint32_t j = 0; j < nr && !e; j++) {
            uint32_t d = (s + j) % nr, id;
            if (weft_traffic_at(tm, s, d) == 0)
                continue; /* no bytes: no op (alltoallv, weft/plan.h) */
            if ((e = add_block(p, s, d, &id))) {
                weft_diag_code(dg, e);
                break;
            }
            if (d == s)
                continue;
            if (row != UINT32_MAX) {
                e = route_pair(c, p, id, s, row, d, dg);
                continue;
            }
            uint32_t b = weft_topo_rank_node(c->t, (weft_rank){d}).v, np = 0;
            for (uint32_t k = 0; k < nt && !e; k++) {
                /* The path to d in tree k, from d up, then reversed. */
                const uint32_t *par = c->par + (size_t)k * n;
                uint32_t *path = c->tnodes + (size_t)np * (n + 1), len = 0;
                bool reached = true;
                for (uint32_t v = b; v != a && reached;) {
                    reached = len < n && par[v] != UINT32_MAX;
                    if (reached) {
                        path[len++] = v;
                        v = weft_topo_link_src(c->t, (weft_link_id){par[v]}).v;
                    }
                }
                if (!reached) {
                    e = weft_diag_set(dg, WEFT_EINVAL,
                                      "internal: a routing tree of rank %u does not reach rank %u",
                                      s, d);
                    break;
                }
                path[len++] = a;
                for (uint32_t i = 0; i < len / 2; i++) {
                    uint32_t x = path[i];
                    path[i] = path[len - 1 - i];
                    path[len - 1 - i] = x;
                }
                uint32_t same = 0;
                while (same < np &&
                       (c->tlen[same] != len ||
                        memcmp(c->tnodes + (size_t)same * (n + 1), path, len * sizeof *path)))
                    same++;
                if (same < np) {
                    mpq_add(c->tshare[same], c->tshare[same], tr->share[k0 + k]);
                } else {
                    c->tlen[np] = len;
                    mpq_set(c->tshare[np++], tr->share[k0 + k]);
                }
            }
            for (uint32_t k = 0; k < np && !e; k++) {
                mpq_srcptr sh = c->tshare[k];
                if (!mpz_fits_slong_p(mpq_numref(sh)) || !mpz_fits_slong_p(mpq_denref(sh))) {
                    e = weft_diag_set(dg, WEFT_EOVERFLOW,
                                      "a path of rank %u's flow to rank %u carries a share that "
                                      "does not fit a 64-bit fraction",
                                      s, d);
                    break;
                }
                const uint32_t *path = c->tnodes + (size_t)k * (n + 1);
                for (uint32_t i = 0; i < c->tlen[k]; i++)
                    c->names[i] = weft_topo_node_name(c->t, (weft_node_id){path[i]});
                weft_rat r = {mpz_get_si(mpq_numref(sh)), mpz_get_si(mpq_denref(sh))};
                if ((e = weft_plan_add_path(p, id, r, c->names, c->tlen[k])))
                    weft_diag_code(dg, e);
            }
        }
    }
    return e;
}

weft_err weft_synth_a2a_optimal(const weft_topo *t, weft_plan **out, weft_a2a_bound *bound,
                                weft_diag *dg)
{
    return weft_synth_a2a_optimal_traffic(t, NULL, out, bound, dg);
}

weft_err weft_synth_a2a_optimal_traffic(const weft_topo *t, const weft_traffic *tm, weft_plan **out,
                                        weft_a2a_bound *bound, weft_diag *dg)
{
    return weft_synth_a2a_optimal_opts(t, tm, NULL, out, bound, dg);
}

weft_err weft_synth_a2a_optimal_opts(const weft_topo *t, const weft_traffic *tm,
                                     const weft_a2a_bound_opts *opts, weft_plan **out,
                                     weft_a2a_bound *bound, weft_diag *dg)
{
    weft__a2a_flow f;
    weft_a2a_bound b;
    if (tm) {
        weft_err ce = weft_traffic_check(tm, dg);
        if (ce)
            return ce == WEFT_EOVERFLOW ? weft_diag_code(dg, WEFT_EINVAL) : ce;
    }
    weft_err e = weft__a2a_flow_compute(t, tm, opts, &b, &f, dg);
    if (e)
        return e;
    uint32_t nr = f.nr, n = weft_topo_num_nodes(t), m = f.m;
    decomp c = {.t = t, .f = &f, .n = n, .m = m};
    c.r = weft__malloc(((size_t)m + 1) * sizeof *c.r);
    c.via = weft__malloc((size_t)n * sizeof *c.via);
    c.queue = weft__malloc((size_t)n * sizeof *c.queue);
    c.names = weft__malloc(((size_t)n + 1) * sizeof *c.names);
    weft_plan *p = NULL;
    weft_plan_info info = {.coll = WEFT_COLL_ALLTOALL, .nranks = nr, .chunks = 1};
    if (!c.r || !c.via || !c.queue || !c.names) {
        weft__free(c.r);
        c.r = NULL;
        e = weft_diag_code(dg, WEFT_ENOMEM);
        goto free_scratch;
    }
    for (uint32_t l = 0; l < m; l++)
        mpq_init(c.r[l]);
    e = weft_plan_new(&info, &p);
    if (e) {
        weft_diag_code(dg, e);
        goto free_scratch;
    }
    if (f.maps.node_map) {
        e = build_mapped(&c, p, dg);
        goto done;
    }
    if (f.trees.count) {
        e = build_trees(&c, tm, p, dg);
        goto done;
    }
    for (uint32_t s = 0; s < nr && !e; s++) {
        for (uint32_t l = 0; l < m; l++)
            mpq_set(c.r[l], f.x[(size_t)s * m + l]);
        for (uint32_t k = 0; k < nr && !e; k++) {
            uint32_t d = (s + k) % nr, id;
            if (tm && weft_traffic_at(tm, s, d) == 0)
                continue; /* no bytes: no op (alltoallv, weft/plan.h) */
            e = add_block(p, s, d, &id);
            if (e)
                weft_diag_code(dg, e);
            else if (d != s)
                e = route_pair(&c, p, id, s, s, d, dg);
        }
    }
done:
    if (!e && tm)
        e = weft_plan_set_traffic(p, tm, dg);
    if (e) {
        weft_plan_free(p);
        goto free_scratch;
    }
    *out = p;
    *bound = b;
    b.algbw_exact = NULL;
    b.time_exact = NULL;
    b.limits = NULL;
free_scratch:
    if (c.r)
        for (uint32_t l = 0; l < m; l++)
            mpq_clear(c.r[l]);
    weft__free(c.r);
    weft__free(c.via);
    weft__free(c.queue);
    weft__free(c.names);
    weft__free(c.first);
    weft__free(c.pstart);
    weft__free(c.pnodes);
    weft__free(c.pshare);
    for (size_t k = 0; k < c.tsinit; k++)
        mpq_clear(c.tshare[k]);
    weft__free(c.par);
    weft__free(c.tnodes);
    weft__free(c.tlen);
    weft__free(c.tshare);
    weft_a2a_bound_fini(&b);
    weft__a2a_flow_fini(&f);
    return e;
}
