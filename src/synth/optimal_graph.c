/* The working graph of an optimal phase: integer capacities, the rooted
 * connectivity condition, and switch removal by edge splitting
 * (optimal_internal.h states the model; docs/optimal.md the reasons). */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "synth/optimal_cuts.h"
#include "synth/optimal_graph.h"

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
        e = weft_maxflow_add_arc(mf, s, weft_topo_rank_node(g->t, (weft_rank){r}).v, g->k, NULL);
    if (!e)
        e = weft_maxflow_freeze(mf);
    int64_t need = (int64_t)g->nr * g->k;
    *ok = true;
    for (uint32_t r = 0; r < g->nr && !e && *ok; r++) {
        int64_t f;
        e = weft_maxflow_run(mf, g->algo, s, weft_topo_rank_node(g->t, (weft_rank){r}).v, need, &f);
        g->maxflows++;
        if (!e && f < need)
            *ok = false;
    }
    weft_maxflow_free(mf);
    return e;
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

/* The flow network used while splitting off one node w: nodes 0 .. n-1
 * are the fabric's, s = n the super-source, T = n + 1 a sink that any set
 * of nodes can be tied to. Arcs: one per node pair (u, v) that has live
 * entries, with the pair's total units (ids 0 .. n_pairs-1, keys sorted);
 * then s -> x for every node x (capacity k for a rank, else 0; "infinite"
 * while x is tied to the source); then x -> T for every node x (0, or
 * infinite while tied to the sink). Splits change capacities, except the
 * first splice of a new pair, which lays the network out again (arcs for
 * every pair that could appear would be mostly empty and slow every
 * flow down). */
typedef struct split_net {
    weft_maxflow *mf;
    uint64_t *keys; /* u << 32 | v, ascending; the arc id is the index */
    uint32_t n_pairs;
    uint32_t src, snk; /* first s -> x and x -> T arc */
    int64_t inf, need, k;
    uint8_t *side;  /* n + 2 */
    uint8_t *rank;  /* n flags */
    opt_cuts *cuts; /* source sides Z met, over the fabric's nodes */
    uint64_t *set;  /* scratch: one set */
} split_net;

static void net_fini(split_net *sn)
{
    weft_maxflow_free(sn->mf);
    weft__free(sn->keys);
    weft__free(sn->side);
    weft__free(sn->rank);
    weft__free(sn->set);
    memset(sn, 0, sizeof *sn);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint32_t pair_arc(const split_net *sn, uint32_t u, uint32_t v)
{
    uint64_t key = ((uint64_t)u << 32) | v;
    uint32_t lo = 0, hi = sn->n_pairs;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sn->keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < sn->n_pairs && sn->keys[lo] == key ? lo : OPT_NONE;
}

static weft_err net_init(split_net *sn, const opt_graph *g, opt_cuts *cuts)
{
    memset(sn, 0, sizeof *sn);
    sn->cuts = cuts;
    uint32_t n = g->n, s = n, T = n + 1;
    size_t room = g->ne + 1;
    weft_err e = WEFT_OK;
    sn->keys = weft__malloc(room * sizeof *sn->keys);
    sn->side = weft__malloc((size_t)n + 2);
    sn->rank = weft__malloc(n);
    sn->set = weft__malloc(cuts->words * sizeof *sn->set);
    if (!sn->keys || !sn->side || !sn->rank || !sn->set) {
        e = WEFT_ENOMEM;
        goto fail;
    }
    size_t k = 0;
    for (size_t i = 0; i < g->ne; i++)
        if (g->e[i].cap > 0)
            sn->keys[k++] = ((uint64_t)g->e[i].u << 32) | g->e[i].v;
    qsort(sn->keys, k, sizeof *sn->keys, cmp_u64);
    size_t np = 0;
    for (size_t i = 0; i < k; i++)
        if (np == 0 || sn->keys[np - 1] != sn->keys[i])
            sn->keys[np++] = sn->keys[i];
    if (np + 2 * (size_t)n > UINT32_MAX / 4) {
        e = WEFT_ELIMIT;
        goto fail;
    }
    sn->n_pairs = (uint32_t)np;
    sn->k = g->k;
    sn->need = (int64_t)g->nr * g->k;
    sn->inf = sn->need + 1;
    for (size_t i = 0; i < g->ne; i++)
        sn->inf += g->e[i].cap;
    e = weft_maxflow_new(n + 2, (uint32_t)np + 2 * n, &sn->mf);
    for (size_t i = 0; i < np && !e; i++)
        e = weft_maxflow_add_arc(sn->mf, (uint32_t)(sn->keys[i] >> 32), (uint32_t)sn->keys[i], 0,
                                 NULL);
    sn->src = (uint32_t)np;
    for (uint32_t x = 0; x < n && !e; x++) {
        sn->rank[x] = is_rank(g, x);
        e = weft_maxflow_add_arc(sn->mf, s, x, sn->rank[x] ? g->k : 0, NULL);
    }
    sn->snk = (uint32_t)np + n;
    for (uint32_t x = 0; x < n && !e; x++)
        e = weft_maxflow_add_arc(sn->mf, x, T, 0, NULL);
    if (!e)
        e = weft_maxflow_freeze(sn->mf);
    if (e)
        goto fail;
    for (size_t i = 0; i < g->ne; i++) {
        if (g->e[i].cap <= 0)
            continue;
        uint32_t arc = pair_arc(sn, g->e[i].u, g->e[i].v);
        weft_maxflow_set_cap(sn->mf, arc, weft_maxflow_cap(sn->mf, arc) + g->e[i].cap);
    }
    return WEFT_OK;
fail:
    net_fini(sn);
    return e;
}

static void tie_source(split_net *sn, uint32_t x, bool on)
{
    weft_maxflow_set_cap(sn->mf, sn->src + x, on ? sn->inf : sn->rank[x] ? sn->k : 0);
}

static void tie_sink(split_net *sn, uint32_t x, bool on)
{
    weft_maxflow_set_cap(sn->mf, sn->snk + x, on ? sn->inf : 0);
}

/* After a run that ended below its limit: remembers the source side of
 * its minimum cut, which misses a rank, with surplus f - need. */
static weft_err remember(const opt_graph *g, split_net *sn, int64_t f)
{
    memset(sn->set, 0, sn->cuts->words * sizeof *sn->set);
    for (uint32_t x = 0; x < g->n; x++)
        if (sn->side[x])
            opt_bit_set(sn->set, x);
    return opt_cuts_add(sn->cuts, sn->set, f - sn->need);
}

/* The least surplus below *best of the node sets on T's side of the
 * current ties that hold a rank; lowers *best. One max-flow, and when its
 * minimum cut holds no rank and `spare` (a lower bound on the surplus of
 * every such set that the cut misses) is below *best, one more per rank
 * (tied to T in turn). */
static weft_err least_surplus(opt_graph *g, split_net *sn, int64_t spare, int64_t *best)
{
    uint32_t s = g->n, T = g->n + 1;
    int64_t f;
    weft_err e = weft_maxflow_run(sn->mf, g->algo, s, T, sn->need + *best, &f);
    g->maxflows++;
    if (e || f >= sn->need + *best)
        return e;
    weft_maxflow_source_side(sn->mf, sn->side);
    bool has_rank = false;
    for (uint32_t x = 0; x < g->n && !has_rank; x++)
        has_rank = sn->rank[x] && !sn->side[x];
    if (has_rank) {
        /* A real cut: the least surplus of all (f >= need: the condition). */
        *best = f - sn->need < 0 ? 0 : f - sn->need;
        return remember(g, sn, f);
    }
    if (spare >= *best)
        return WEFT_OK;
    for (uint32_t z = 0; z < g->n && !e && *best > 0; z++) {
        if (!sn->rank[z] || weft_maxflow_cap(sn->mf, sn->src + z) == sn->inf)
            continue;
        tie_sink(sn, z, true);
        e = weft_maxflow_run(sn->mf, g->algo, s, T, sn->need + *best, &f);
        g->maxflows++;
        if (!e && f < sn->need + *best) {
            *best = f - sn->need < 0 ? 0 : f - sn->need;
            weft_maxflow_source_side(sn->mf, sn->side);
            e = remember(g, sn, f);
        }
        tie_sink(sn, z, false);
    }
    return e;
}

/* Whether splitting (u,w),(w,t) lowers the surplus of the source side z:
 * class A (w in z, u and t not) or class B (u and t in z, w not). */
static bool split_lowers(const uint64_t *z, uint32_t u, uint32_t w, uint32_t t)
{
    bool in_u = opt_bit(z, u), in_t = opt_bit(z, t), in_w = opt_bit(z, w);
    return in_w ? !in_u && !in_t : in_u && in_t;
}

/* Capacity between the node set A (one or two nodes) and every node
 * outside A and `out` (both ways), subtracted from the capacity entering
 * A: a lower bound on surplus(Y + A) - surplus(Y) for any Y apart from A
 * and `out`. */
static int64_t attach_bound(const opt_graph *g, uint32_t a1, uint32_t a2, uint32_t o1, uint32_t o2)
{
    int64_t lb = 0;
    for (size_t i = 0; i < g->ne; i++) {
        const opt_entry *x = &g->e[i];
        if (x->cap <= 0)
            continue;
        bool ui = x->u == a1 || x->u == a2, vi = x->v == a1 || x->v == a2;
        if (ui == vi)
            continue;
        uint32_t other = ui ? x->v : x->u;
        if (vi)
            lb += x->cap; /* enters A */
        if (other != o1 && other != o2)
            lb -= x->cap; /* may join A to Y */
    }
    return lb;
}

/* The largest m <= hi that keeps the condition, exactly. Splitting m
 * units of (u,w),(w,t) lowers the capacity leaving a node set Z (the
 * source side, missing some rank) by m when u, t are in Z and w is not
 * (class B), or w is in Z and u, t are not (class A), and changes no other
 * set. So m may be as large as the least surplus c_out(Z) - k |Z ∩ ranks|
 * over the sets of either class: a max-flow from s to T with the class's
 * ties, minus N k. When u or t is a rank (class A), the sink side holds a
 * rank by construction; otherwise least_surplus checks the cut it found
 * and falls back to one flow per rank when it must. Remembered sets of
 * either class bound m first (0 needs no flow). */
static weft_err max_split(opt_graph *g, split_net *sn, uint32_t u, uint32_t w, uint32_t t,
                          int64_t hi, int64_t *out)
{
    int64_t best = hi;
    const opt_cuts *k = sn->cuts;
    for (size_t i = 0; i < k->n && best > 0; i++)
        if (k->surplus[i] < best && split_lowers(k->bits + i * k->words, u, w, t))
            best = k->surplus[i] < 0 ? 0 : k->surplus[i];
    *out = best;
    if (best == 0)
        return WEFT_OK;
    /* Class A: w with the source, u and t with the sink. */
    tie_source(sn, w, true);
    tie_sink(sn, u, true);
    tie_sink(sn, t, true);
    bool ranked = sn->rank[u] || sn->rank[t];
    weft_err e = least_surplus(g, sn, ranked ? INT64_MAX : attach_bound(g, u, t, w, w), &best);
    tie_source(sn, w, false);
    tie_sink(sn, u, false);
    tie_sink(sn, t, false);
    if (!e && best > 0) {
        /* Class B: u and t with the source, w with the sink. */
        tie_source(sn, u, true);
        tie_source(sn, t, true);
        tie_sink(sn, w, true);
        e = least_surplus(g, sn, attach_bound(g, w, w, u, t), &best);
        tie_source(sn, u, false);
        tie_source(sn, t, false);
        tie_sink(sn, w, false);
    }
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
static weft_err split_node(opt_graph *g, opt_cuts *cuts, uint32_t w, bool *done)
{
    uint32_t *ins = NULL, *outs = NULL;
    size_t nin = 0, nout = 0, cin = 0, cout = 0;
    split_net sn = {0};
    weft_err e = WEFT_OK;
    bool progress = true;
    *done = false;
    /* Splitting only lowers surpluses, so the first pass already takes
     * every pair to its maximum; a second pass finds nothing left or
     * proves the node cannot be split off. */
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
        if (!sn.mf)
            e = net_init(&sn, g, cuts);
        for (size_t a = 0; a < nin && !e; a++) {
            /* Loops (u == t) last: they only discard capacity. */
            for (size_t pass = 0; pass < 2 && !e; pass++) {
                for (size_t b = 0; b < nout && !e; b++) {
                    uint32_t u = ins[a], t = outs[b];
                    if ((u == t) != (pass == 1))
                        continue;
                    /* A pair emptied earlier in this pass may have no arc. */
                    uint32_t uw = pair_arc(&sn, u, w), wt = pair_arc(&sn, w, t);
                    if (uw == OPT_NONE || wt == OPT_NONE)
                        continue;
                    int64_t x = weft_maxflow_cap(sn.mf, uw), y = weft_maxflow_cap(sn.mf, wt), m;
                    if (x == 0 || y == 0)
                        continue;
                    e = max_split(g, &sn, u, w, t, x < y ? x : y, &m);
                    if (e || m == 0)
                        continue;
                    e = apply_split(g, u, w, t, m);
                    for (size_t i = 0; i < cuts->n; i++)
                        if (split_lowers(cuts->bits + i * cuts->words, u, w, t))
                            cuts->surplus[i] -= m;
                    weft_maxflow_set_cap(sn.mf, uw, x - m);
                    weft_maxflow_set_cap(sn.mf, wt, y - m);
                    uint32_t ut = u == t ? OPT_NONE : pair_arc(&sn, u, t);
                    if (ut != OPT_NONE) {
                        weft_maxflow_set_cap(sn.mf, ut, weft_maxflow_cap(sn.mf, ut) + m);
                    } else if (u != t && !e) {
                        /* A new pair: lay the network out again. */
                        net_fini(&sn);
                        e = net_init(&sn, g, cuts);
                    }
                    progress = true;
                }
            }
        }
    }
    net_fini(&sn);
    weft__free(ins);
    weft__free(outs);
    return e;
}

weft_err opt_graph_split(opt_graph *g, weft_diag *d)
{
    /* Cuts stay valid from one node to the next: a node split off carries
     * nothing, so its side of a remembered set no longer matters. */
    opt_cuts cuts;
    opt_cuts_init(&cuts, g->n);
    weft_err e = WEFT_OK;
    for (uint32_t w = 0; w < g->n && !e; w++) {
        if (is_rank(g, w))
            continue;
        bool done;
        e = split_node(g, &cuts, w, &done);
        if (e)
            weft_diag_code(d, e);
        else if (!done)
            e = weft_diag_set(d, WEFT_ETOPO,
                              "optimal: node '%s' cannot be split off without losing "
                              "throughput (in-capacity %lld, out-capacity %lld trees left); "
                              "is it balanced?",
                              weft_topo_node_name(g->t, (weft_node_id){w}),
                              (long long)side_sum(g, w, true), (long long)side_sum(g, w, false));
    }
    opt_cuts_fini(&cuts);
    return e;
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
