/* The working graph of an optimal phase: integer capacities, the rooted
 * connectivity condition, and switch removal by edge splitting
 * (optimal_internal.h states the model; docs/optimal.md the reasons). */
#include <string.h>

#include "base/alloc.h"
#include "synth/optimal_internal.h"

__extension__ typedef __int128 i128;

void opt_graph_fini(opt_graph *g)
{
    weft__free(g->e);
    g->e = NULL;
    g->ne = g->cap_e = 0;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

static weft_err push_entry(opt_graph *g, uint32_t u, uint32_t v, int64_t cap, uint32_t a,
                           uint32_t b)
{
    if (weft__grow((void **)&g->e, &g->cap_e, g->ne + 1, sizeof *g->e))
        return WEFT_ENOMEM;
    g->e[g->ne++] = (opt_entry){u, v, cap, a, b};
    return WEFT_OK;
}

weft_err opt_graph_caps(opt_graph *g, weft_rat r, int64_t k, weft_diag *d)
{
    const weft_topo *t = g->t;
    uint32_t m = weft_topo_num_links(t);
    g->n = weft_topo_num_nodes(t);
    g->nr = weft_topo_num_ranks(t);
    g->ne = 0;
    if (k == 0) {
        /* b / r = (bn q) / (bd p); k is the lcm of the reduced denominators. */
        i128 lcm = 1;
        for (uint32_t l = 0; l < m; l++) {
            weft_rat b = weft_topo_link_bw(t, (weft_link_id){l}), x;
            if (weft_rat_div(b, r, &x))
                return weft_diag_set(d, WEFT_EOVERFLOW,
                                     "optimal: a link bandwidth over the per-rank rate does not "
                                     "fit in 64-bit fractions");
            lcm = lcm / gcd64((int64_t)(lcm % x.den), x.den) * x.den;
            if (lcm > (1 << 30))
                return weft_diag_set(d, WEFT_EOVERFLOW,
                                     "optimal: reaching the bound exactly needs more than 2^30 "
                                     "trees per rank; use --trees-per-root K");
        }
        k = (int64_t)lcm;
    }
    g->k = k;
    i128 total = 0;
    for (uint32_t l = 0; l < m; l++) {
        weft_rat b = weft_topo_link_bw(t, (weft_link_id){l});
        i128 c = (i128)b.num * k * r.den / ((i128)b.den * r.num);
        total += c;
        if (total * g->nr > INT64_MAX / 4)
            return weft_diag_set(d, WEFT_EOVERFLOW,
                                 "optimal: link capacities in trees (k = %lld) overflow 64 bits",
                                 (long long)k);
        if (c == 0)
            continue;
        uint32_t a = weft_topo_link_src(t, (weft_link_id){l}).v;
        uint32_t bb = weft_topo_link_dst(t, (weft_link_id){l}).v;
        if (push_entry(g, g->reverse ? bb : a, g->reverse ? a : bb, (int64_t)c, l, OPT_NONE))
            return weft_diag_code(d, WEFT_ENOMEM);
    }
    return WEFT_OK;
}

static bool is_rank(const opt_graph *g, uint32_t v)
{
    return weft_topo_node_kind(g->t, (weft_node_id){v}) == WEFT_NODE_COMPUTE;
}

void opt_graph_trim(opt_graph *g)
{
    bool changed = true;
    while (changed) {
        changed = false;
        for (uint32_t w = 0; w < g->n; w++) {
            if (is_rank(g, w))
                continue;
            int64_t in = 0, out = 0;
            for (size_t i = 0; i < g->ne; i++) {
                if (g->e[i].v == w)
                    in += g->e[i].cap;
                if (g->e[i].u == w)
                    out += g->e[i].cap;
            }
            if (in == out)
                continue;
            /* Lower the larger side, its entries in order, to the smaller. */
            bool cut_in = in > out;
            int64_t excess = cut_in ? in - out : out - in;
            for (size_t i = 0; i < g->ne && excess; i++) {
                opt_entry *e = &g->e[i];
                if ((cut_in ? e->v : e->u) != w)
                    continue;
                int64_t x = e->cap < excess ? e->cap : excess;
                e->cap -= x;
                excess -= x;
            }
            changed = true;
        }
    }
}

weft_err opt_graph_feasible(opt_graph *g, bool *ok)
{
    uint32_t s = g->n;
    weft_maxflow *mf = NULL;
    weft_err e = weft_maxflow_new(g->n + 1, (uint32_t)g->ne + g->nr, &mf);
    if (e)
        return e;
    for (size_t i = 0; i < g->ne && !e; i++)
        if (g->e[i].cap > 0)
            e = weft_maxflow_add_arc(mf, g->e[i].u, g->e[i].v, g->e[i].cap, NULL);
    for (uint32_t r = 0; r < g->nr && !e; r++)
        e = weft_maxflow_add_arc(mf, s, weft_topo_rank_node(g->t, (weft_rank){r}).v, g->k,
                                 NULL);
    if (!e)
        e = weft_maxflow_freeze(mf);
    int64_t need = (int64_t)g->nr * g->k;
    *ok = true;
    for (uint32_t r = 0; r < g->nr && !e && *ok; r++) {
        int64_t f;
        e = weft_maxflow_run(mf, g->algo, s, weft_topo_rank_node(g->t, (weft_rank){r}).v, need,
                             &f);
        g->maxflows++;
        if (!e && f < need)
            *ok = false;
    }
    weft_maxflow_free(mf);
    return e;
}

static int64_t agg(const opt_graph *g, uint32_t u, uint32_t v)
{
    int64_t c = 0;
    for (size_t i = 0; i < g->ne; i++)
        if (g->e[i].u == u && g->e[i].v == v)
            c += g->e[i].cap;
    return c;
}

/* Total capacity entering (in) or leaving w. */
static int64_t side_sum(const opt_graph *g, uint32_t w, bool in)
{
    int64_t c = 0;
    for (size_t i = 0; i < g->ne; i++)
        if ((in ? g->e[i].v : g->e[i].u) == w)
            c += g->e[i].cap;
    return c;
}

/* Replaces m units of u -> w and w -> t by splices u -> t (a pair
 * u == t just drops the units: a loop carries nothing). */
static weft_err apply_split(opt_graph *g, uint32_t u, uint32_t w, uint32_t t, int64_t m)
{
    size_t i = 0, j = 0, ne = g->ne;
    while (m > 0) {
        while (i < ne && !(g->e[i].u == u && g->e[i].v == w && g->e[i].cap > 0))
            i++;
        while (j < ne && !(g->e[j].u == w && g->e[j].v == t && g->e[j].cap > 0))
            j++;
        if (i == ne || j == ne)
            return WEFT_EINVAL; /* the caller checked the aggregates */
        int64_t x = g->e[i].cap < g->e[j].cap ? g->e[i].cap : g->e[j].cap;
        if (x > m)
            x = m;
        g->e[i].cap -= x;
        g->e[j].cap -= x;
        m -= x;
        if (u != t && push_entry(g, u, t, x, (uint32_t)i, (uint32_t)j))
            return WEFT_ENOMEM;
    }
    return WEFT_OK;
}

/* The largest m <= hi that keeps the condition, exactly, from 2N flows.
 * Splitting m units of (u,w),(w,t) lowers the in-capacity of a node set X
 * by m when w is in X and u, t are not (class A), or u, t are in X and w
 * is not (class B), and leaves every other set alone. So m may be as large
 * as the least surplus (min-cut value minus N k) over sinks z of the cuts
 * of either class: class A is the max-flow to z with u and t tied to the
 * source and w to z by unbounded arcs, class B with w tied to the source
 * and u, t to z. */
static weft_err max_split(opt_graph *g, uint32_t u, uint32_t w, uint32_t t, int64_t hi,
                          int64_t *out)
{
    uint32_t s = g->n, nr = g->nr;
    int64_t need = (int64_t)nr * g->k, inf = need + 1;
    for (size_t i = 0; i < g->ne; i++)
        inf += g->e[i].cap;
    weft_maxflow *mf = NULL;
    weft_err e = weft_maxflow_new(g->n + 1, (uint32_t)g->ne + 4 * nr + 3, &mf);
    if (e)
        return e;
    for (size_t i = 0; i < g->ne && !e; i++)
        if (g->e[i].cap > 0)
            e = weft_maxflow_add_arc(mf, g->e[i].u, g->e[i].v, g->e[i].cap, NULL);
    for (uint32_t r = 0; r < nr && !e; r++)
        e = weft_maxflow_add_arc(mf, s, weft_topo_rank_node(g->t, (weft_rank){r}).v, g->k,
                                 NULL);
    /* Tie arcs, capacity 0 until a run sets them. */
    uint32_t su = 0, st = 0, sw = 0, base = 0;
    if (!e)
        e = weft_maxflow_add_arc(mf, s, u, 0, &su);
    if (!e && t != u)
        e = weft_maxflow_add_arc(mf, s, t, 0, &st);
    if (!e)
        e = weft_maxflow_add_arc(mf, s, w, 0, &sw);
    base = weft_maxflow_num_arcs(mf);
    /* Per rank z: w -> z, u -> z, t -> z (self-loops replaced by a dummy
     * arc of the right number so that indices stay regular). */
    for (uint32_t r = 0; r < nr && !e; r++) {
        uint32_t z = weft_topo_rank_node(g->t, (weft_rank){r}).v;
        uint32_t from[3] = {w, u, t};
        for (int k = 0; k < 3 && !e; k++)
            e = weft_maxflow_add_arc(mf, from[k] == z ? s : from[k], from[k] == z ? w : z, 0,
                                     NULL);
    }
    if (!e)
        e = weft_maxflow_freeze(mf);
    int64_t best = hi;
    for (uint32_t r = 0; r < nr && !e && best > 0; r++) {
        uint32_t z = weft_topo_rank_node(g->t, (weft_rank){r}).v;
        for (int cls = 0; cls < 2 && !e && best > 0; cls++) {
            if (cls == 0 && (z == u || z == t))
                continue; /* class A needs z apart from u and t */
            weft_maxflow_set_cap(mf, su, cls == 0 ? inf : 0);
            if (t != u)
                weft_maxflow_set_cap(mf, st, cls == 0 ? inf : 0);
            weft_maxflow_set_cap(mf, sw, cls == 1 ? inf : 0);
            weft_maxflow_set_cap(mf, base + 3 * r, cls == 0 && w != z ? inf : 0);
            weft_maxflow_set_cap(mf, base + 3 * r + 1, cls == 1 && u != z ? inf : 0);
            weft_maxflow_set_cap(mf, base + 3 * r + 2, cls == 1 && t != z ? inf : 0);
            int64_t f;
            e = weft_maxflow_run(mf, g->algo, s, z, need + best, &f);
            g->maxflows++;
            if (!e && f - need < best)
                best = f - need < 0 ? 0 : f - need;
        }
    }
    weft_maxflow_free(mf);
    *out = best;
    return e;
}

/* Distinct tails (in == true) or heads of live entries at w, ascending. */
static weft_err ends_at(const opt_graph *g, uint32_t w, bool in, uint32_t **list, size_t *n,
                        size_t *cap)
{
    *n = 0;
    for (size_t i = 0; i < g->ne; i++) {
        const opt_entry *x = &g->e[i];
        if (x->cap <= 0 || (in ? x->v : x->u) != w)
            continue;
        uint32_t y = in ? x->u : x->v;
        size_t p = 0;
        while (p < *n && (*list)[p] < y)
            p++;
        if (p < *n && (*list)[p] == y)
            continue;
        if (weft__grow((void **)list, cap, *n + 1, sizeof **list))
            return WEFT_ENOMEM;
        memmove(*list + p + 1, *list + p, (*n - p) * sizeof **list);
        (*list)[p] = y;
        (*n)++;
    }
    return WEFT_OK;
}

/* Splits w off completely, or fails with *done false. */
static weft_err split_node(opt_graph *g, uint32_t w, bool *done)
{
    uint32_t *ins = NULL, *outs = NULL;
    size_t nin = 0, nout = 0, cin = 0, cout = 0;
    weft_err e = WEFT_OK;
    bool progress = true;
    *done = false;
    while (progress && !e) {
        progress = false;
        e = ends_at(g, w, true, &ins, &nin, &cin);
        if (!e)
            e = ends_at(g, w, false, &outs, &nout, &cout);
        if (e)
            break;
        if (nin == 0 && nout == 0) {
            *done = true;
            break;
        }
        for (size_t a = 0; a < nin && !e; a++) {
            /* Loops (u == t) last: they only discard capacity. */
            for (size_t pass = 0; pass < 2 && !e; pass++) {
                for (size_t b = 0; b < nout && !e; b++) {
                    uint32_t u = ins[a], t = outs[b];
                    if ((u == t) != (pass == 1))
                        continue;
                    int64_t x = agg(g, u, w), y = agg(g, w, t), m;
                    if (x == 0 || y == 0)
                        continue;
                    e = max_split(g, u, w, t, x < y ? x : y, &m);
                    if (!e && m > 0) {
                        e = apply_split(g, u, w, t, m);
                        progress = true;
                    }
                }
            }
        }
    }
    weft__free(ins);
    weft__free(outs);
    return e;
}

weft_err opt_graph_split(opt_graph *g, weft_diag *d)
{
    for (uint32_t w = 0; w < g->n; w++) {
        if (is_rank(g, w))
            continue;
        bool done;
        weft_err e = split_node(g, w, &done);
        if (e)
            return weft_diag_code(d, e);
        if (!done)
            return weft_diag_set(d, WEFT_ETOPO,
                                 "optimal: node '%s' cannot be split off without losing "
                                 "throughput (in-capacity %lld, out-capacity %lld trees left); "
                                 "is it balanced?",
                                 weft_topo_node_name(g->t, (weft_node_id){w}),
                                 (long long)side_sum(g, w, true), (long long)side_sum(g, w, false));
    }
    return WEFT_OK;
}

uint32_t opt_entry_hops(const opt_graph *g, uint32_t i)
{
    const opt_entry *x = &g->e[i];
    if (x->b == OPT_NONE)
        return 1;
    return opt_entry_hops(g, x->a) + opt_entry_hops(g, x->b);
}

void opt_entry_path(const opt_graph *g, uint32_t i, uint32_t *path, uint32_t *len)
{
    const opt_entry *x = &g->e[i];
    if (x->b == OPT_NONE) {
        if (*len == 0)
            path[(*len)++] = x->u;
        path[(*len)++] = x->v;
        return;
    }
    opt_entry_path(g, x->a, path, len);
    opt_entry_path(g, x->b, path, len);
}
