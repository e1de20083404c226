/* The throughput-optimal schedule: the public entry point, the rate and
 * tree count of each phase, routes of tree edges, and the plan
 * (weft/synth.h "Optimal schedules"; docs/optimal.md). */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/intmath.h"
#include "synth/emit.h"
#include "synth/optimal_internal.h"
#include "synth/optimal_rail.h"

__extension__ typedef __int128 i128;

void weft_optimal_opts_init(weft_optimal_opts *o)
{
    memset(o, 0, sizeof *o);
    o->algo = WEFT_MAXFLOW_DEFAULT;
    o->use_structure = true;
}

void weft_optimal_fini(weft_optimal *info)
{
    if (!info)
        return;
    for (uint32_t p = 0; p < 2; p++) {
        weft_optimal_phase *ph = &info->phase[p];
        for (uint32_t i = 0; ph->trees && i < ph->n_trees; i++) {
            weft__free(ph->trees[i].from);
            weft__free(ph->trees[i].to);
        }
        weft__free(ph->trees);
        ph->trees = NULL;
        ph->n_trees = 0;
    }
}

/* One phase built: its graph (capacities after splitting) and trees. */
typedef struct opt_phase {
    opt_graph g;
    opt_forest f;
    weft_rat rate; /* per rank, GB/s: what the capacities were set for */
    int64_t *used; /* per fabric link: tree units routed over it (emit_phase) */
} opt_phase;

static void opt_phase_fini(opt_phase *p)
{
    opt_graph_fini(&p->g);
    opt_forest_fini(&p->f);
    weft__free(p->used);
    p->used = NULL;
}

/* The next rate below r at which some floor(b K / r) grows: the largest
 * b K / (floor(b K / r) + 1) over links. */
static weft_err next_rate(const weft_topo *t, weft_rat r, int64_t K, weft_rat *out)
{
    bool have = false;
    for (uint32_t l = 0; l < weft_topo_num_links(t); l++) {
        weft_rat b = weft_topo_link_bw(t, (weft_link_id){l}), x;
        i128 c = (i128)b.num * K * r.den / ((i128)b.den * r.num);
        i128 den = (i128)b.den * (c + 1), num = (i128)b.num * K;
        if (den > INT64_MAX || num > INT64_MAX || weft_rat_make((int64_t)num, (int64_t)den, &x))
            return WEFT_EOVERFLOW;
        if (!have || weft_rat_cmp(x, *out) > 0)
            *out = x;
        have = true;
    }
    return WEFT_OK;
}

/* The most trees per root tried below the exact k when none is forced:
 * each try is one feasibility check (N max-flows), and the exact k, which
 * always works, is what remains after them. */
#define OPT_MAX_TRY_K 64

/* Sets g's capacities for the smallest number of trees per root that
 * reaches per-rank rate r: K = 1, 2, ... below the exact k (the lcm that
 * makes every b k / r an integer), each with capacities floor(b K / r)
 * trimmed to balance and kept when the condition holds, else the exact k.
 * Fewer trees mean fewer chunks and ops in every runtime (an MSCCL
 * executor counts steps), at the same rate: a tree edge uses at most
 * floor(b K / r) units of a link, so the trees still reach r. */
static weft_err caps_fewest_trees(opt_graph *g, weft_rat r, weft_diag *d)
{
    weft_err e = opt_graph_caps(g, r, 0, d);
    if (e)
        return e;
    int64_t exact = g->k;
    for (int64_t K = 1; K < exact && K <= OPT_MAX_TRY_K; K++) {
        bool ok = false;
        e = opt_graph_caps(g, r, K, d);
        if (!e) {
            opt_graph_trim(g);
            e = opt_graph_feasible(g, &ok);
        }
        if (e)
            return weft_diag_code(d, e);
        if (ok)
            return WEFT_OK;
    }
    return opt_graph_caps(g, r, exact, d);
}

/* Builds one phase at per-rank rate r (the bound's) with K trees per root
 * (0: the fewest that reach r). */
static weft_err build_phase(const weft_topo *t, bool reverse, weft_rat r, uint32_t K,
                            weft_mf_algo algo, opt_phase *out, weft_diag *d)
{
    memset(out, 0, sizeof *out);
    out->g.t = t;
    out->g.reverse = reverse;
    out->g.algo = algo;
    weft_err e;
    if (K == 0) {
        e = caps_fewest_trees(&out->g, r, d);
    } else {
        for (;;) {
            e = opt_graph_caps(&out->g, r, K, d);
            if (e)
                break;
            opt_graph_trim(&out->g);
            bool ok;
            e = opt_graph_feasible(&out->g, &ok);
            if (e || ok)
                break;
            e = next_rate(t, r, K, &r);
            if (e) {
                weft_diag_set(d, e,
                              "optimal: the rate search for %u trees per root "
                              "overflows 64-bit fractions",
                              K);
                break;
            }
        }
    }
    out->rate = r;
    if (!e)
        e = opt_graph_split(&out->g, d);
    if (!e)
        e = opt_pack(&out->g, &out->f, d);
    if (e) {
        weft_diag_code(d, e);
        opt_phase_fini(out);
    }
    return e;
}

/* ---- Routes and the plan ----------------------------------------------- */

typedef struct route_ctx {
    const opt_graph *g;
    int64_t *used;   /* per fabric link: units routed over it */
    uint32_t *order; /* live entries sorted by (u, v) */
    size_t n;
    int64_t *left; /* units not yet given to a tree edge, per entry */
    uint32_t *path;
    size_t path_cap;
    const char **names;
    size_t names_cap;
} route_ctx;

typedef struct entry_key {
    uint64_t uv; /* u << 32 | v */
    uint32_t i;
} entry_key;

static int cmp_entry(const void *a, const void *b)
{
    const entry_key *x = a, *y = b;
    if (x->uv != y->uv)
        return x->uv < y->uv ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static weft_err route_init(route_ctx *c, const opt_graph *g)
{
    memset(c, 0, sizeof *c);
    c->g = g;
    size_t room = g->ne ? g->ne : 1;
    entry_key *keys = weft__malloc(room * sizeof *keys);
    c->order = weft__malloc(room * sizeof *c->order);
    c->left = weft__malloc(room * sizeof *c->left);
    if (!keys || !c->order || !c->left) {
        weft__free(keys);
        return WEFT_ENOMEM;
    }
    for (size_t i = 0; i < g->ne; i++) {
        c->left[i] = g->e[i].cap;
        if (g->e[i].cap > 0)
            keys[c->n++] = (entry_key){((uint64_t)g->e[i].u << 32) | g->e[i].v, (uint32_t)i};
    }
    qsort(keys, c->n, sizeof *keys, cmp_entry);
    for (size_t i = 0; i < c->n; i++)
        c->order[i] = keys[i].i;
    weft__free(keys);
    return WEFT_OK;
}

static void route_fini(route_ctx *c)
{
    weft__free(c->order);
    weft__free(c->left);
    weft__free(c->path);
    weft__free((void *)c->names);
}

/* Adds x units to every fabric link that entry i stands for. */
static void add_units(const opt_graph *g, uint32_t i, int64_t x, int64_t *used)
{
    const opt_entry *e = &g->e[i];
    if (e->b == OPT_NONE) {
        used[e->a] += x;
        return;
    }
    add_units(g, e->a, x, used);
    add_units(g, e->b, x, used);
}

/* Adds to op `id` the paths of m units from node u to node v (phase
 * direction; reversed when the phase is), first fit over the entries. */
static weft_err add_route(route_ctx *c, weft_plan *p, uint32_t id, uint32_t u, uint32_t v,
                          int64_t m)
{
    const opt_graph *g = c->g;
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const opt_entry *x = &g->e[c->order[mid]];
        if (x->u < u || (x->u == u && x->v < v))
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t rest = m;
    for (size_t i = lo; i < c->n && rest > 0; i++) {
        uint32_t ei = c->order[i];
        if (g->e[ei].u != u || g->e[ei].v != v)
            break;
        if (c->left[ei] == 0)
            continue;
        int64_t x = c->left[ei] < rest ? c->left[ei] : rest;
        c->left[ei] -= x;
        rest -= x;
        add_units(g, ei, x, c->used);
        uint32_t hops = opt_entry_hops(g, ei), len = 0;
        if (weft__grow((void **)&c->path, &c->path_cap, hops + 1, sizeof *c->path) ||
            weft__grow((void **)&c->names, &c->names_cap, hops + 1, sizeof *c->names))
            return WEFT_ENOMEM;
        opt_entry_path(g, ei, c->path, &len);
        for (uint32_t k = 0; k < len; k++)
            c->names[g->reverse ? len - 1 - k : k] =
                weft_topo_node_name(g->t, (weft_node_id){c->path[k]});
        weft_rat share;
        weft_err e = weft_rat_make(x, m, &share);
        if (!e)
            e = weft_plan_add_path(p, id, share, c->names, len);
        if (e)
            return e;
    }
    return rest ? WEFT_EINVAL : WEFT_OK; /* the packing respected the capacities */
}

/* Emits one phase: chunk range of a group of root R is R*L + offset,
 * L / k chunks per tree. */
static weft_err emit_phase(synth_emit *em, opt_phase *ph, weft_buf buf, uint32_t L)
{
    const opt_graph *g = &ph->g;
    route_ctx rc;
    weft_err e = route_init(&rc, g);
    ph->used =
        weft__calloc(weft_topo_num_links(g->t) ? weft_topo_num_links(g->t) : 1, sizeof *ph->used);
    rc.used = ph->used;
    if (!ph->used && !e)
        e = WEFT_ENOMEM;
    uint32_t per = L / (uint32_t)g->k;
    uint32_t *off = weft__calloc(g->nr, sizeof *off);
    if (!off && !e)
        e = WEFT_ENOMEM;
    for (size_t gi = 0; gi < ph->f.n && !e; gi++) {
        const opt_group *grp = &ph->f.g[gi];
        uint32_t index = grp->root * L + off[grp->root] * per;
        uint32_t count = (uint32_t)grp->mult * per;
        off[grp->root] += (uint32_t)grp->mult;
        for (uint32_t j = 0; j < grp->n_edges && !e; j++) {
            /* Reduce-scatter runs its tree from the leaves up. */
            uint32_t q = g->reverse ? grp->n_edges - 1 - j : j;
            uint32_t par = grp->from[q], ch = grp->to[q], id;
            if (g->reverse)
                e = synth_reduce(em, ch, par, buf, index, count, 0, &id);
            else
                e = synth_copy(em, par, ch, buf, index, count, 0, &id);
            if (!e)
                e = add_route(&rc, em->plan, id, weft_topo_rank_node(g->t, (weft_rank){par}).v,
                              weft_topo_rank_node(g->t, (weft_rank){ch}).v, grp->mult);
        }
    }
    weft__free(off);
    route_fini(&rc);
    return e;
}

static weft_err fill_info(const opt_phase *ph, weft_bound_coll coll, weft_rat bound,
                          weft_optimal_phase *out)
{
    uint32_t nr = ph->g.nr;
    out->coll = coll;
    out->bound = bound;
    out->k = (uint32_t)ph->g.k;
    out->maxflows = ph->g.maxflows;
    if (weft_rat_mul(ph->rate, weft_rat_int(nr), &out->algbw) ||
        weft_rat_div(weft_rat_int(ph->g.k), ph->rate, &out->U))
        return WEFT_EOVERFLOW;
    out->trees = weft__calloc(ph->f.n ? ph->f.n : 1, sizeof *out->trees);
    if (!out->trees)
        return WEFT_ENOMEM;
    out->n_trees = (uint32_t)ph->f.n;
    for (size_t i = 0; i < ph->f.n; i++) {
        const opt_group *grp = &ph->f.g[i];
        weft_optimal_tree *tr = &out->trees[i];
        tr->root.v = grp->root;
        tr->mult = (uint32_t)grp->mult;
        tr->n_edges = grp->n_edges;
        size_t room = grp->n_edges ? grp->n_edges : 1;
        tr->from = weft__malloc(room * sizeof *tr->from);
        tr->to = weft__malloc(room * sizeof *tr->to);
        if (!tr->from || !tr->to)
            return WEFT_ENOMEM;
        for (uint32_t j = 0; j < grp->n_edges; j++) {
            uint32_t q = ph->g.reverse ? grp->n_edges - 1 - j : j;
            tr->from[j] = ph->g.reverse ? grp->to[q] : grp->from[q];
            tr->to[j] = ph->g.reverse ? grp->from[q] : grp->to[q];
        }
    }
    return WEFT_OK;
}

/* The per-rank rate the emitted trees of a phase reach: a tree carries 1/k
 * of its root's data, so a link of b GB/s carrying u tree units limits the
 * rate to b k / u; the rate is the least of these. It is at least the rate
 * the capacities were set for (u <= floor(b k / r)), and above it when the
 * forced trees leave every link below its floor: reporting the reached
 * rate keeps the report equal to what the plan does. */
static weft_err reached_rate(const opt_phase *ph, weft_rat *out)
{
    const weft_topo *t = ph->g.t;
    *out = ph->rate;
    bool have = false;
    for (uint32_t l = 0; l < weft_topo_num_links(t); l++) {
        if (ph->used[l] == 0)
            continue;
        weft_rat b = weft_topo_link_bw(t, (weft_link_id){l}), x;
        i128 num = (i128)b.num * ph->g.k, den = (i128)b.den * ph->used[l];
        if (num > INT64_MAX || den > INT64_MAX || weft_rat_make((int64_t)num, (int64_t)den, &x))
            return WEFT_EOVERFLOW;
        if (!have || weft_rat_cmp(x, *out) < 0)
            *out = x;
        have = true;
    }
    if (!have)
        *out = ph->rate;
    return WEFT_OK;
}

weft_err weft_synth_optimal(const weft_topo *t, weft_coll coll, const weft_optimal_opts *opts,
                            weft_plan **plan, weft_optimal *info, weft_diag *d)
{
    weft_optimal_opts def;
    if (!opts) {
        weft_optimal_opts_init(&def);
        opts = &def;
    }
    weft_bound_coll bc;
    if (coll == WEFT_COLL_ALLGATHER)
        bc = WEFT_BOUND_ALLGATHER;
    else if (coll == WEFT_COLL_REDUCESCATTER)
        bc = WEFT_BOUND_REDUCESCATTER;
    else if (coll == WEFT_COLL_ALLREDUCE)
        bc = WEFT_BOUND_ALLREDUCE;
    else
        return weft_diag_set(d, WEFT_EUNSUPPORTED,
                             "optimal: no optimal schedule for %s (it builds allgather, "
                             "reducescatter and allreduce)",
                             weft_coll_name(coll));
    weft_mf_algo algo =
        opts->algo == WEFT_MAXFLOW_PUSH_RELABEL ? WEFT_MF_PUSH_RELABEL : WEFT_MF_DINIC;
    weft_bound_opts bo;
    weft_bound_opts_init(&bo);
    weft_bound b;
    memset(&b, 0, sizeof b);
    weft_err e = weft_bound_compute(t, bc, &bo, &b, d);
    if (e)
        return e;
    weft_optimal res;
    memset(&res, 0, sizeof res);
    opt_phase ph[2];
    memset(ph, 0, sizeof ph);
    weft_plan *p = NULL;
    uint32_t nr = weft_topo_num_ranks(t);
    if (!b.switches_balanced) {
        weft_node_id w = b.unbalanced;
        e = weft_diag_set(d, WEFT_ETOPO,
                          "optimal: %s '%s' forwards more bandwidth one way than the other (in "
                          "!= out); tree packing needs every forwarding node balanced "
                          "(docs/optimal.md), use a classic algorithm here",
                          weft_node_kind_name(weft_topo_node_kind(t, w)),
                          weft_topo_node_name(t, w));
        goto fail;
    }
    /* The structured construction first (docs/optimal-scale.md); it keeps
     * its plan only when the plan reaches the bound exactly. (It would
     * serve unbalanced switches too; they keep the error above for now.) */
    char note[sizeof res.structure_note] = "";
    /* Unforced, one tree per root inside the boxes is tried first: fewer
     * trees are fewer chunks and ops in every runtime, and the rail keeps
     * a plan only when it reaches the bound. Then any number (K = 0). */
    static const uint32_t rail_k[2] = {1, 0};
    uint32_t n_rail = !opts->use_structure || opts->trees_per_root > 1 ? 0
                      : opts->trees_per_root == 1                      ? 1
                                                                       : 2;
    for (uint32_t i = 0; i < n_rail; i++) {
        e = opt_rail_try(t, coll, &b, rail_k[i], &p, &res, note, sizeof note, d);
        if (e)
            goto fail;
        if (p) {
            weft_bound_fini(&b);
            *plan = p;
            if (info)
                *info = res;
            else
                weft_optimal_fini(&res);
            return WEFT_OK;
        }
    }
    memcpy(res.structure_note, note, sizeof note);
    res.coll = coll;
    res.ranks = nr;
    res.bound = b.algbw;
    res.n_phases = b.n_phases;
    uint64_t L = 1;
    for (uint32_t i = 0; i < b.n_phases; i++) {
        const weft_bound_phase *bp = &b.phase[i];
        weft_rat r;
        if (weft_rat_div(bp->algbw, weft_rat_int(nr), &r)) {
            e = weft_diag_set(d, WEFT_EOVERFLOW, "optimal: the per-rank rate overflows");
            goto fail;
        }
        e = build_phase(t, bp->coll == WEFT_BOUND_REDUCESCATTER, r, opts->trees_per_root, algo,
                        &ph[i], d);
        if (e)
            goto fail;
        e = fill_info(&ph[i], bp->coll, bp->algbw, &res.phase[i]);
        if (e) {
            weft_diag_code(d, e);
            goto fail;
        }
        L = L / weft__gcd64(L, (uint64_t)ph[i].g.k) * (uint64_t)ph[i].g.k;
        if (L * nr > WEFT_PLAN_MAX_SLOTS) {
            e = weft_diag_set(d, WEFT_ELIMIT,
                              "optimal: %llu chunks per rank exceed the plan limits; use "
                              "--trees-per-root K",
                              (unsigned long long)L);
            goto fail;
        }
    }
    weft_plan_info pi = {.coll = coll, .nranks = nr, .chunks = (uint32_t)L, .inplace = true};
    if (coll == WEFT_COLL_ALLREDUCE)
        pi.chunks = (uint32_t)(L * nr);
    e = weft_plan_new(&pi, &p);
    if (e) {
        weft_diag_set(d, e, "optimal: cannot make a plan of %u chunks", pi.chunks);
        goto fail;
    }
    synth_emit em;
    synth_emit_init(&em, p);
    weft_buf buf = coll == WEFT_COLL_REDUCESCATTER ? WEFT_BUF_IN : WEFT_BUF_OUT;
    for (uint32_t i = 0; i < b.n_phases && !e; i++)
        e = emit_phase(&em, &ph[i], buf, (uint32_t)L);
    synth_emit_fini(&em);
    if (e) {
        weft_diag_code(d, e == WEFT_EINVAL ? WEFT_EVERIFY : e);
        goto fail;
    }
    /* Each phase reports the rate its trees reach (see reached_rate). */
    for (uint32_t i = 0; i < b.n_phases && !e; i++) {
        weft_rat r;
        e = reached_rate(&ph[i], &r);
        if (!e)
            e = weft_rat_mul(r, weft_rat_int(nr), &res.phase[i].algbw);
    }
    if (!e && b.n_phases == 1) {
        res.algbw = res.phase[0].algbw;
    } else if (!e) {
        /* T = T_rs + T_ag: algbw = a b / (a + b). */
        weft_rat s, m;
        e = weft_rat_add(res.phase[0].algbw, res.phase[1].algbw, &s);
        if (!e)
            e = weft_rat_mul(res.phase[0].algbw, res.phase[1].algbw, &m);
        if (!e)
            e = weft_rat_div(m, s, &res.algbw);
    }
    if (e) {
        weft_diag_set(d, WEFT_EOVERFLOW,
                      "optimal: the reached throughput overflows 64-bit "
                      "fractions");
        e = WEFT_EOVERFLOW;
        goto fail;
    }
    for (uint32_t i = 0; i < 2; i++)
        opt_phase_fini(&ph[i]);
    weft_bound_fini(&b);
    *plan = p;
    if (info)
        *info = res;
    else
        weft_optimal_fini(&res);
    return WEFT_OK;
fail:
    weft_plan_free(p);
    for (uint32_t i = 0; i < 2; i++)
        opt_phase_fini(&ph[i]);
    weft_optimal_fini(&res);
    weft_bound_fini(&b);
    return e;
}
