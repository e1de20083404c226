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

/* A tentative split: agg(u,w) and agg(w,t) lose m units, u -> t gains m. */
typedef struct opt_trial {
    uint32_t u, w, t;
    int64_t m;
} opt_trial;

static weft_err feasible_with(opt_graph *g, const opt_trial *tr, bool *ok)
{
    uint32_t s = g->n;
    weft_maxflow *mf = NULL;
    weft_err e = weft_maxflow_new(g->n + 1, (uint32_t)g->ne + g->nr + 1, &mf);
    if (e)
        return e;
    int64_t rem_in = tr ? tr->m : 0, rem_out = rem_in;
    for (size_t i = 0; i < g->ne && !e; i++) {
        int64_t c = g->e[i].cap;
        if (tr && g->e[i].u == tr->u && g->e[i].v == tr->w && rem_in) {
            int64_t x = c < rem_in ? c : rem_in;
            c -= x;
            rem_in -= x;
        } else if (tr && g->e[i].u == tr->w && g->e[i].v == tr->t && rem_out) {
            int64_t x = c < rem_out ? c : rem_out;
            c -= x;
            rem_out -= x;
        }
        if (c > 0)
            e = weft_maxflow_add_arc(mf, g->e[i].u, g->e[i].v, c, NULL);
    }
    if (!e && tr && tr->m && tr->u != tr->t)
        e = weft_maxflow_add_arc(mf, tr->u, tr->t, tr->m, NULL);
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

weft_err opt_graph_feasible(opt_graph *g, bool *ok)
{
    return feasible_with(g, NULL, ok);
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

/* The largest m <= hi that keeps the condition (the condition is monotone
 * in m: splitting more can only lower connectivity). */
static weft_err max_split(opt_graph *g, uint32_t u, uint32_t w, uint32_t t, int64_t hi,
                          int64_t *out)
{
    opt_trial tr = {u, w, t, hi};
    bool ok;
    weft_err e = feasible_with(g, &tr, &ok);
    if (e || ok) {
        *out = hi;
        return e;
    }
    int64_t lo = 0; /* feasible */
    hi--;           /* hi + 1 infeasible */
    while (lo < hi) {
        tr.m = lo + (hi - lo + 1) / 2;
        e = feasible_with(g, &tr, &ok);
        if (e)
            return e;
        if (ok)
            lo = tr.m;
        else
            hi = tr.m - 1;
    }
    *out = lo;
    return WEFT_OK;
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
