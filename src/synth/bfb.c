/* BFB (breadth-first broadcast) schedules on direct-connect fabrics (Zhao
 * et al., NSDI'25, arXiv 2202.03356, section 4). See weft/synth.h for the
 * contract.
 *
 * Allgather on a digraph G: at step t = 1 .. D (D the diameter) every rank
 * v receives the shard of every rank w at distance exactly t, through its
 * in-neighbours u with dist(w, u) = t - 1 (u holds w's shard from step
 * t - 1 on). In one step the link u -> v carries data for v only, so the
 * step's busiest-link time is the largest over v of the optimum of v's own
 * transportation problem: sources w (supply: one shard each), sinks the
 * in-links of v, w -> link u->v allowed when dist(w, u) = t - 1, minimise
 * T such that every link l carries at most T * bw(l). By Hall's theorem
 * the optimum is max over sets A of in-links of (sources whose allowed
 * links all lie in A) / bw(A); it is computed exactly, by that formula over
 * the 2^indeg subsets when the in-degree is at most SOS_MAX_DEG, else by
 * Newton's method on T with the max-flow of weft/maxflow.h (T grows to the
 * ratio of the violated Hall set that the minimum cut names, and stops when
 * the flow saturates every source). Bandwidths are scaled to integers by
 * their common denominator, so everything is exact.
 *
 * Reduce-scatter is the allgather of the reversed fabric run backwards
 * (each copy u -> v of shard w becomes a reduce v -> u, last step first);
 * allreduce is reduce-scatter then allgather.
 *
 * The plan cuts every shard into K chunks, K the least common multiple
 * over steps of the denominators of the link loads S_t * bw(l) (in
 * shards, S_t the step's optimum), so that a split of each (step,
 * receiver) within the step's time is an integral flow of K chunks per
 * source with link capacities S_t * bw(l) * K (a max-flow gives it). Costs: distances are an
 * N x N table of uint16 (N BFS, O(N (N + E))); the analysis is
 * O(N^2 indeg + N D 2^indeg indeg) with small in-degrees. */
#include <string.h>

#include "base/alloc.h"
#include "synth/emit.h"
#include "synth/orbits.h"
#include "weft/maxflow.h"
#include "weft/synth.h"

__extension__ typedef __int128 i128;

#define SOS_MAX_DEG 8
#define BFB_MAX_RANKS 8192u
#define BFB_MAX_CHUNKS 65536u

typedef struct graph {
    uint32_t n;
    /* In-arcs of v: in_src[in_start[v] .. in_start[v+1]) with scaled
     * integer bandwidths in_bw (bw * scale). */
    uint32_t *in_start, *in_src;
    int64_t *in_bw;
    /* dist[row[u] * n + w] = distance from w to u, for the nodes u whose
     * row was computed (row[u] == UINT32_MAX otherwise). */
    uint16_t *dist;
    uint32_t *row;
    uint32_t diam;
    /* The receivers analysed: all ranks, or one per orbit of rank
     * automorphisms (the analysis only needs the maximum over receivers,
     * which every member of an orbit shares). */
    uint32_t *recv;
    uint32_t n_recv;
} graph;

static void graph_fini(graph *g)
{
    weft__free(g->in_start);
    weft__free(g->in_src);
    weft__free(g->in_bw);
    weft__free(g->dist);
    weft__free(g->row);
    weft__free(g->recv);
    memset(g, 0, sizeof *g);
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The fabric's checks shared by analysis and building: ranks only, 2 <= N
 * <= BFB_MAX_RANKS, and the common denominator of the bandwidths. */
static weft_err check_fabric(const weft_topo *t, int64_t *scale, weft_diag *d)
{
    uint32_t n = weft_topo_num_ranks(t);
    if (weft_topo_num_nodes(t) != n) {
        for (uint32_t v = 0; v < weft_topo_num_nodes(t); v++) {
            weft_node_id id = {v};
            if (weft_topo_node_kind(t, id) != WEFT_NODE_COMPUTE)
                return weft_diag_set(d, WEFT_ETOPO,
                                     "bfb needs ranks joined directly, but '%s' is a %s (BFB "
                                     "schedules direct-connect fabrics: no switches)",
                                     weft_topo_node_name(t, id),
                                     weft_node_kind_name(weft_topo_node_kind(t, id)));
        }
    }
    if (n < 2)
        return weft_diag_set(d, WEFT_ETOPO, "bfb needs at least 2 ranks, the fabric has %u", n);
    if (n > BFB_MAX_RANKS)
        return weft_diag_set(d, WEFT_ELIMIT, "bfb is limited to %u ranks, the fabric has %u",
                             BFB_MAX_RANKS, n);
    int64_t l = 1;
    for (uint32_t k = 0; k < weft_topo_num_links(t); k++) {
        weft_rat bw = weft_topo_link_bw(t, (weft_link_id){k});
        int64_t g = gcd64(l, bw.den);
        i128 m = (i128)(l / g) * bw.den;
        if (m > INT64_MAX / 4)
            return weft_diag_set(d, WEFT_EOVERFLOW,
                                 "bfb: the link bandwidths have no common denominator in 62 bits");
        l = (int64_t)m;
    }
    /* Scaled bandwidths up to 2^40 keep every sum, capacity and
     * cross-multiplied comparison below within 64 and 128 bits. */
    for (uint32_t k = 0; k < weft_topo_num_links(t); k++) {
        weft_rat bw = weft_topo_link_bw(t, (weft_link_id){k});
        if ((i128)bw.num * (l / bw.den) > ((i128)1 << 40))
            return weft_diag_set(d, WEFT_EOVERFLOW,
                                 "bfb: the link bandwidths over their common denominator exceed "
                                 "2^40");
    }
    *scale = l;
    return WEFT_OK;
}

/* Builds the in-arcs of the fabric (reversed = false) or of its reverse,
 * and the distance table: every row, or (reps != NULL, analysis only) the
 * rows of the n_reps receivers and of their in-neighbours. */
static weft_err graph_init(graph *g, const weft_topo *t, bool reversed, int64_t scale,
                           const uint32_t *reps, uint32_t n_reps, weft_diag *d)
{
    memset(g, 0, sizeof *g);
    uint32_t n = weft_topo_num_ranks(t), m = weft_topo_num_links(t);
    g->n = n;
    g->in_start = weft__calloc((size_t)n + 1, sizeof *g->in_start);
    g->in_src = weft__malloc((m ? m : 1) * sizeof *g->in_src);
    g->in_bw = weft__malloc((m ? m : 1) * sizeof *g->in_bw);
    g->row = weft__malloc((size_t)n * sizeof *g->row);
    g->recv = weft__malloc((size_t)n * sizeof *g->recv);
    uint32_t *queue = weft__malloc((size_t)n * sizeof *queue);
    weft_err e = WEFT_OK;
    if (!g->in_start || !g->in_src || !g->in_bw || !g->row || !g->recv || !queue) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto out;
    }
    for (uint32_t k = 0; k < m; k++) {
        weft_link_id l = {k};
        uint32_t to = reversed ? weft_topo_link_src(t, l).v : weft_topo_link_dst(t, l).v;
        g->in_start[to + 1]++;
    }
    for (uint32_t v = 0; v < n; v++)
        g->in_start[v + 1] += g->in_start[v];
    for (uint32_t k = 0; k < m; k++) {
        weft_link_id l = {k};
        uint32_t a = weft_topo_link_src(t, l).v, b = weft_topo_link_dst(t, l).v;
        uint32_t from = reversed ? b : a, to = reversed ? a : b;
        weft_rat bw = weft_topo_link_bw(t, l);
        uint32_t at = g->in_start[to]++;
        g->in_src[at] = from;
        g->in_bw[at] = bw.num * (scale / bw.den);
    }
    for (uint32_t v = n; v > 0; v--)
        g->in_start[v] = g->in_start[v - 1];
    g->in_start[0] = 0;
    /* The rows needed. */
    uint32_t rows = 0;
    if (!reps) {
        for (uint32_t v = 0; v < n; v++)
            g->row[v] = g->recv[v] = v;
        rows = g->n_recv = n;
    } else {
        for (uint32_t v = 0; v < n; v++)
            g->row[v] = UINT32_MAX;
        for (uint32_t i = 0; i < n_reps; i++) {
            uint32_t v = reps[i];
            g->recv[g->n_recv++] = v;
            if (g->row[v] == UINT32_MAX)
                g->row[v] = rows++;
            for (uint32_t k = g->in_start[v]; k < g->in_start[v + 1]; k++)
                if (g->row[g->in_src[k]] == UINT32_MAX)
                    g->row[g->in_src[k]] = rows++;
        }
    }
    g->dist = weft__malloc((size_t)rows * n * sizeof *g->dist);
    if (!g->dist) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto out;
    }
    /* Distances to u: a BFS from u over in-arcs. */
    for (uint32_t u = 0; u < n && !e; u++) {
        if (g->row[u] == UINT32_MAX)
            continue;
        uint16_t *row = g->dist + (size_t)g->row[u] * n;
        memset(row, 0xff, (size_t)n * sizeof *row);
        uint32_t head = 0, tail = 0;
        queue[tail++] = u;
        row[u] = 0;
        while (head < tail) {
            uint32_t x = queue[head++];
            for (uint32_t k = g->in_start[x]; k < g->in_start[x + 1]; k++) {
                uint32_t y = g->in_src[k];
                if (row[y] == UINT16_MAX) {
                    row[y] = (uint16_t)(row[x] + 1);
                    queue[tail++] = y;
                }
            }
        }
        if (tail != n) {
            uint32_t w = 0;
            while (row[w] != UINT16_MAX)
                w++;
            e = weft_diag_set(d, WEFT_ETOPO, "bfb: rank %u cannot reach rank %u on this fabric",
                              reversed ? u : w, reversed ? w : u);
        }
        if (g->diam < row[queue[tail - 1]])
            g->diam = row[queue[tail - 1]];
    }
out:
    weft__free(queue);
    if (e)
        graph_fini(g);
    return e;
}

/* A ratio num / den (den > 0) of a receiver's optimum in scaled units. */
typedef struct ratio {
    int64_t num, den;
} ratio;

static bool ratio_less(ratio a, ratio b)
{
    return (i128)a.num * b.den < (i128)b.num * a.den;
}

/* Per-step work space. */
typedef struct work {
    uint32_t *order; /* sources of v sorted by distance */
    uint32_t *first; /* first[t] .. first[t+1]: sources at distance t */
    int64_t *sosbw;  /* bandwidth of each subset */
    uint8_t *side;
    /* Analysis of a receiver of in-degree <= SOS_MAX_DEG in one pass:
     * cnt[t << deg | mask] sources at distance t whose usable in-arcs are
     * mask, and how many sources each distance has. */
    int64_t *cnt;
    uint32_t *at_dist;
    uint32_t cnt_shift; /* min(max in-degree, SOS_MAX_DEG) */
} work;

/* The sources of v grouped by distance into w->order / w->first. */
static void group_sources(const graph *g, uint32_t v, work *w)
{
    uint32_t n = g->n, D = g->diam;
    const uint16_t *row = g->dist + (size_t)g->row[v] * n;
    memset(w->first, 0, ((size_t)D + 2) * sizeof *w->first);
    for (uint32_t x = 0; x < n; x++)
        w->first[row[x] + 1]++;
    for (uint32_t t = 0; t <= D; t++)
        w->first[t + 1] += w->first[t];
    for (uint32_t x = 0; x < n; x++)
        w->order[w->first[row[x]]++] = x;
    for (uint32_t t = D + 1; t > 0; t--)
        w->first[t] = w->first[t - 1];
    w->first[0] = 0;
}

/* Whether source x may come to v through its in-arc k at step t. */
static bool allowed(const graph *g, uint32_t k, uint32_t x, uint32_t t)
{
    return g->dist[(size_t)g->row[g->in_src[k]] * g->n + x] == t - 1;
}

/* The flow network of one (v, t): node 0 source, 1 sink, 2 .. 2+ns the
 * sources, then one node per in-arc. */
typedef struct net {
    weft_maxflow *mf;
    uint32_t ns, deg;
    uint32_t first_pair; /* arcs source->x are 0 .. ns-1, arc->sink ns .. ns+deg-1 */
} net;

static weft_err net_build(const graph *g, uint32_t v, const uint32_t *src, uint32_t ns, uint32_t t,
                          net *nt)
{
    uint32_t k0 = g->in_start[v], deg = g->in_start[v + 1] - k0;
    nt->ns = ns;
    nt->deg = deg;
    nt->first_pair = ns + deg;
    nt->mf = NULL;
    weft_err e = weft_maxflow_new(2 + ns + deg, ns + deg + ns * 2, &nt->mf);
    for (uint32_t i = 0; !e && i < ns; i++)
        e = weft_maxflow_add_arc(nt->mf, 0, 2 + i, 0, NULL);
    for (uint32_t k = 0; !e && k < deg; k++)
        e = weft_maxflow_add_arc(nt->mf, 2 + ns + k, 1, 0, NULL);
    for (uint32_t i = 0; !e && i < ns; i++)
        for (uint32_t k = 0; !e && k < deg; k++)
            if (allowed(g, k0 + k, src[i], t))
                e = weft_maxflow_add_arc(nt->mf, 2 + i, 2 + ns + k, INT64_MAX / 4, NULL);
    if (!e)
        e = weft_maxflow_freeze(nt->mf);
    if (e) {
        weft_maxflow_free(nt->mf);
        nt->mf = NULL;
    }
    return e;
}

/* Runs the network with supplies `supply` per source and capacities
 * cap(k) = num * bw(k) / den on the in-arcs (num * bw divisible by den is
 * the caller's business when it needs an integral split). *full says
 * whether every source sent its supply. */
static weft_err net_run(const graph *g, uint32_t v, net *nt, int64_t supply, ratio r, int64_t mult,
                        bool *full)
{
    uint32_t k0 = g->in_start[v];
    for (uint32_t i = 0; i < nt->ns; i++)
        weft_maxflow_set_cap(nt->mf, i, supply);
    for (uint32_t k = 0; k < nt->deg; k++) {
        i128 c = (i128)r.num * g->in_bw[k0 + k] * mult / r.den;
        if (c > INT64_MAX / 4)
            return WEFT_EOVERFLOW;
        weft_maxflow_set_cap(nt->mf, nt->ns + k, (int64_t)c);
    }
    int64_t value;
    weft_err e = weft_maxflow_run(nt->mf, WEFT_MF_DINIC, 0, 1, -1, &value);
    if (!e)
        *full = value == supply * (int64_t)nt->ns;
    return e;
}

/* The optimum by Newton's method on T: start at ns / bw(all in-arcs); while
 * the flow with supplies den and capacities num * bw falls short, the
 * source side of the minimum cut is a Hall set whose ratio is larger. */
static weft_err optimum_flow(const graph *g, uint32_t v, const uint32_t *src, uint32_t ns,
                             uint32_t t, work *w, ratio *out)
{
    uint32_t k0 = g->in_start[v], deg = g->in_start[v + 1] - k0;
    int64_t total = 0;
    for (uint32_t k = 0; k < deg; k++)
        total += g->in_bw[k0 + k];
    ratio r = {ns, total};
    net nt;
    weft_err e = net_build(g, v, src, ns, t, &nt);
    for (int iter = 0; !e; iter++) {
        int64_t q = gcd64(r.num, r.den);
        r.num /= q;
        r.den /= q;
        bool full;
        /* Supplies r.den, capacities r.num * bw: scaled by r.den. */
        e = net_run(g, v, &nt, r.den, (ratio){r.num, 1}, 1, &full);
        if (e || full)
            break;
        weft_maxflow_source_side(nt.mf, w->side);
        int64_t cnt = 0, bw = 0;
        for (uint32_t i = 0; i < ns; i++)
            cnt += w->side[2 + i];
        for (uint32_t k = 0; k < deg; k++)
            if (w->side[2 + ns + k])
                bw += g->in_bw[k0 + k];
        ratio nr = {cnt, bw};
        if (bw == 0 || !ratio_less(r, nr) || iter > 10000) {
            e = WEFT_EINVAL; /* cannot happen on a connected fabric */
            break;
        }
        r = nr;
    }
    if (nt.mf)
        weft_maxflow_free(nt.mf);
    *out = r;
    return e;
}

static weft_err work_init(work *w, const graph *g)
{
    memset(w, 0, sizeof *w);
    uint32_t maxdeg = 0;
    for (uint32_t v = 0; v < g->n; v++)
        if (maxdeg < g->in_start[v + 1] - g->in_start[v])
            maxdeg = g->in_start[v + 1] - g->in_start[v];
    w->order = weft__malloc((size_t)g->n * sizeof *w->order);
    w->first = weft__malloc(((size_t)g->diam + 2) * sizeof *w->first);
    w->sosbw = weft__malloc(((size_t)1 << SOS_MAX_DEG) * sizeof *w->sosbw);
    w->side = weft__malloc((size_t)g->n + maxdeg + 2);
    w->cnt_shift = maxdeg < SOS_MAX_DEG ? maxdeg : SOS_MAX_DEG;
    w->cnt = weft__malloc((((size_t)g->diam + 1) << w->cnt_shift) * sizeof *w->cnt);
    w->at_dist = weft__malloc(((size_t)g->diam + 1) * sizeof *w->at_dist);
    return w->order && w->first && w->sosbw && w->side && w->cnt && w->at_dist ? WEFT_OK
                                                                               : WEFT_ENOMEM;
}

static void work_fini(work *w)
{
    weft__free(w->order);
    weft__free(w->first);
    weft__free(w->sosbw);
    weft__free(w->side);
    weft__free(w->cnt);
    weft__free(w->at_dist);
}

/* The optima of every step for receiver v of in-degree <= SOS_MAX_DEG, in
 * one sequential pass over the sources: per distance t, the number of
 * sources whose usable in-arcs are each mask, summed over subsets (SOS),
 * gives for every set A of in-arcs the sources confined to A; the optimum
 * is the largest of those counts over bw(A) (Hall). Raises step[]. */
static void analyse_sos(const graph *g, uint32_t v, ratio *step, work *w)
{
    uint32_t n = g->n, D = g->diam, k0 = g->in_start[v], deg = g->in_start[v + 1] - k0;
    uint32_t full = 1u << deg;
    const uint16_t *rv = g->dist + (size_t)g->row[v] * n;
    const uint16_t *ru[SOS_MAX_DEG];
    for (uint32_t k = 0; k < deg; k++)
        ru[k] = g->dist + (size_t)g->row[g->in_src[k0 + k]] * n;
    memset(w->cnt, 0, (((size_t)D + 1) << deg) * sizeof *w->cnt);
    memset(w->at_dist, 0, ((size_t)D + 1) * sizeof *w->at_dist);
    for (uint32_t x = 0; x < n; x++) {
        uint32_t t = rv[x], mask = 0;
        for (uint32_t k = 0; k < deg; k++)
            mask |= (uint32_t)(ru[k][x] + 1u == t) << k;
        w->cnt[(size_t)t << deg | mask]++;
        w->at_dist[t]++;
    }
    w->sosbw[0] = 0;
    for (uint32_t a = 1; a < full; a++)
        w->sosbw[a] = w->sosbw[a & (a - 1)] + g->in_bw[k0 + (uint32_t)__builtin_ctz(a)];
    for (uint32_t t = 1; t <= D; t++) {
        if (!w->at_dist[t])
            continue;
        int64_t *c = w->cnt + ((size_t)t << deg);
        for (uint32_t k = 0; k < deg; k++)
            for (uint32_t a = 0; a < full; a++)
                if (a & (1u << k))
                    c[a] += c[a ^ (1u << k)];
        ratio best = {0, 1};
        for (uint32_t a = 1; a < full; a++) {
            ratio r = {c[a], w->sosbw[a]};
            if (r.num && ratio_less(best, r))
                best = r;
        }
        int64_t q = gcd64(best.num, best.den);
        best.num /= q;
        best.den /= q;
        if (ratio_less(step[t - 1], best))
            step[t - 1] = best;
    }
}

/* step[t-1] = max over receivers of the optimum of step t (scaled units),
 * for t = 1 .. diam; *lcm (when not NULL) = the chunks per shard that make
 * the plan's splits integral. */
static weft_err analyse(const graph *g, ratio *step, int64_t *lcm, weft_diag *d)
{
    work w;
    weft_err e = work_init(&w, g);
    for (uint32_t t = 0; t < g->diam; t++)
        step[t] = (ratio){0, 1};
    if (lcm)
        *lcm = 1;
    for (uint32_t i = 0; i < g->n_recv && !e; i++) {
        uint32_t v = g->recv[i];
        if (g->in_start[v + 1] - g->in_start[v] <= SOS_MAX_DEG) {
            analyse_sos(g, v, step, &w);
            continue;
        }
        group_sources(g, v, &w);
        for (uint32_t t = 1; t <= g->diam && !e; t++) {
            uint32_t ns = w.first[t + 1] - w.first[t];
            if (ns == 0)
                continue;
            ratio r;
            e = optimum_flow(g, v, w.order + w.first[t], ns, t, &w, &r);
            if (e)
                break;
            if (ratio_less(step[t - 1], r))
                step[t - 1] = r;
        }
    }
    work_fini(&w);
    /* The plan gives every receiver of step t the capacities S_t * bw(l)
     * (S_t the step's optimum, at least the receiver's own), so a split is
     * integral in K chunks when every K * S_t * bw(l) is an integer: when
     * S_t.den / gcd(S_t.den, gcd of the bandwidths) divides K. */
    int64_t bwgcd = 0;
    for (uint32_t k = 0; k < g->in_start[g->n]; k++)
        bwgcd = gcd64(g->in_bw[k], bwgcd);
    for (uint32_t t = 0; lcm && !e && t < g->diam; t++) {
        int64_t q = step[t].den / gcd64(step[t].den, bwgcd);
        i128 m = (i128)(*lcm / gcd64(*lcm, q)) * q;
        *lcm = m > BFB_MAX_CHUNKS ? BFB_MAX_CHUNKS + 1 : (int64_t)m;
    }
    if (e == WEFT_ENOMEM)
        weft_diag_code(d, e);
    else if (e)
        weft_diag_set(d, e, "bfb: the step optimum could not be computed (%s)", weft_strerror(e));
    return e;
}

/* Sum over steps of step[t] * scale as an exact rational, added to *sum. */
static weft_err add_steps(const ratio *step, uint32_t count, int64_t scale, weft_rat *sum)
{
    for (uint32_t t = 0; t < count; t++) {
        weft_rat r;
        weft_err e = weft_rat_make(step[t].num, step[t].den, &r);
        if (!e)
            e = weft_rat_mul(r, weft_rat_int(scale), &r);
        if (!e)
            e = weft_rat_add(*sum, r, sum);
        if (e)
            return e;
    }
    return WEFT_OK;
}

/* Every link u -> v has a link v -> u of the same bandwidth. */
static bool symmetric(const weft_topo *t)
{
    for (uint32_t k = 0; k < weft_topo_num_links(t); k++) {
        weft_link_id l = {k}, r;
        if (!weft_topo_find_link(t, weft_topo_link_dst(t, l), weft_topo_link_src(t, l), &r) ||
            !weft_rat_eq(weft_topo_link_bw(t, l), weft_topo_link_bw(t, r)))
            return false;
    }
    return true;
}

static bool bfb_coll(weft_coll c)
{
    return c == WEFT_COLL_ALLGATHER || c == WEFT_COLL_REDUCESCATTER || c == WEFT_COLL_ALLREDUCE;
}

/* Analysis of both phases: *ag (the fabric) and *rs (its reverse) as
 * needed by coll, and the summary. */
typedef struct phases {
    graph ag, rs;
    ratio *ag_step, *rs_step;
    int64_t scale, lcm;
} phases;

static void phases_fini(phases *p)
{
    graph_fini(&p->ag);
    graph_fini(&p->rs);
    weft__free(p->ag_step);
    weft__free(p->rs_step);
}

static weft_err phases_init(phases *p, const weft_topo *t, weft_coll coll, bool want_lcm,
                            weft_bfb *info, weft_diag *d)
{
    memset(p, 0, sizeof *p);
    if (!bfb_coll(coll))
        return weft_diag_set(d, WEFT_EUNSUPPORTED,
                             "algorithm 'bfb' does not build %s (it builds: allgather, "
                             "reducescatter, allreduce)",
                             weft_coll_name(coll));
    weft_err e = check_fabric(t, &p->scale, d);
    if (e)
        return e;
    bool ag = coll != WEFT_COLL_REDUCESCATTER, rs = coll != WEFT_COLL_ALLGATHER;
    int64_t lcm_ag = 1, lcm_rs = 1;
    /* Analysis only: one receiver per orbit of rank automorphisms, which
     * are automorphisms of the reversed fabric too. */
    weft__orbits orb;
    memset(&orb, 0, sizeof orb);
    if (!want_lcm) {
        uint32_t m = weft_topo_num_links(t);
        int64_t *w = weft__malloc((m ? m : 1) * sizeof *w);
        e = w ? WEFT_OK : WEFT_ENOMEM;
        for (uint32_t k = 0; !e && k < m; k++) {
            weft_rat bw = weft_topo_link_bw(t, (weft_link_id){k});
            w[k] = bw.num * (p->scale / bw.den);
        }
        if (!e)
            e = weft__orbits_compute(t, w, true, &orb);
        weft__free(w);
        if (e)
            return weft_diag_code(d, e);
    }
    const uint32_t *reps = want_lcm ? NULL : orb.reps;
    if (ag) {
        e = graph_init(&p->ag, t, false, p->scale, reps, reps ? orb.n_reps : 0, d);
        if (!e && !(p->ag_step = weft__malloc(((size_t)p->ag.diam + 1) * sizeof *p->ag_step)))
            e = weft_diag_code(d, WEFT_ENOMEM);
        if (!e)
            e = analyse(&p->ag, p->ag_step, want_lcm ? &lcm_ag : NULL, d);
    }
    if (rs && !e && ag && !want_lcm && symmetric(t)) {
        /* The reversed fabric is the fabric: the same steps. */
        p->rs.diam = p->ag.diam;
        if (!(p->rs_step = weft__malloc(((size_t)p->rs.diam + 1) * sizeof *p->rs_step)))
            e = weft_diag_code(d, WEFT_ENOMEM);
        else
            memcpy(p->rs_step, p->ag_step, ((size_t)p->rs.diam + 1) * sizeof *p->rs_step);
    } else if (rs && !e) {
        e = graph_init(&p->rs, t, true, p->scale, reps, reps ? orb.n_reps : 0, d);
        if (!e && !(p->rs_step = weft__malloc(((size_t)p->rs.diam + 1) * sizeof *p->rs_step)))
            e = weft_diag_code(d, WEFT_ENOMEM);
        if (!e)
            e = analyse(&p->rs, p->rs_step, want_lcm ? &lcm_rs : NULL, d);
    }
    weft__orbits_fini(&orb);
    if (e) {
        phases_fini(p);
        return e;
    }
    i128 l = (i128)(lcm_ag / gcd64(lcm_ag, lcm_rs)) * lcm_rs;
    p->lcm = l > BFB_MAX_CHUNKS ? BFB_MAX_CHUNKS + 1 : (int64_t)l;
    weft_rat sum = weft_rat_int(0);
    memset(info, 0, sizeof *info);
    info->steps = (ag ? p->ag.diam : 0) + (rs ? p->rs.diam : 0);
    if (ag)
        e = add_steps(p->ag_step, p->ag.diam, p->scale, &sum);
    if (!e && rs)
        e = add_steps(p->rs_step, p->rs.diam, p->scale, &sum);
    if (!e)
        e = weft_rat_div(weft_rat_int(weft_topo_num_ranks(t)), sum, &info->algbw_stepwise);
    if (e) {
        phases_fini(p);
        return weft_diag_set(d, e, "bfb: the step times overflow exact arithmetic");
    }
    info->step_sum = sum;
    return WEFT_OK;
}

weft_err weft_bfb_analyze(const weft_topo *t, weft_coll coll, weft_bfb *out, weft_diag *d)
{
    phases p;
    weft_bfb info;
    weft_err e = phases_init(&p, t, coll, false, &info, d);
    if (e)
        return e;
    phases_fini(&p);
    *out = info;
    return WEFT_OK;
}

/* Emits the ops of one phase: the allgather of g with K chunks per shard
 * (reduce = false), or the reduce-scatter that reverses the allgather of
 * g, the reversed fabric (reduce = true). Shard x's chunks are slots
 * x * K .. x * K + K - 1 of buf. */
static weft_err emit_phase(synth_emit *em, const graph *g, const ratio *step, int64_t K,
                           bool reduce, weft_buf buf)
{
    work w;
    weft_err e = work_init(&w, g);
    uint32_t *srcbuf = weft__malloc((size_t)g->n * sizeof *srcbuf);
    if (!e && !srcbuf)
        e = WEFT_ENOMEM;
    for (uint32_t s = 0; s < g->diam && !e; s++) {
        uint32_t t = reduce ? g->diam - s : s + 1;
        for (uint32_t v = 0; v < g->n && !e; v++) {
            group_sources(g, v, &w);
            uint32_t ns = w.first[t + 1] - w.first[t];
            if (ns == 0)
                continue;
            memcpy(srcbuf, w.order + w.first[t], ns * sizeof *srcbuf);
            ratio r = step[t - 1];
            net nt;
            e = net_build(g, v, srcbuf, ns, t, &nt);
            if (e)
                break;
            bool full = false;
            /* Supplies K chunks, capacities S_t * bw * K (integral by the
             * choice of K in analyse; feasible since S_t is at least v's
             * optimum, and a feasible network with integral capacities has
             * an integral flow). */
            e = net_run(g, v, &nt, K, r, K, &full);
            if (!e && !full)
                e = WEFT_EINVAL;
            /* The flow on x -> arc k, in the order the arcs were added. */
            uint32_t k0 = g->in_start[v], deg = g->in_start[v + 1] - k0, arcno = ns + deg;
            for (uint32_t i = 0; i < ns && !e; i++) {
                uint32_t x = srcbuf[i], at = 0;
                for (uint32_t k = 0; k < deg && !e; k++) {
                    if (!allowed(g, k0 + k, x, t))
                        continue;
                    int64_t f = weft_maxflow_flow(nt.mf, arcno++);
                    if (f <= 0)
                        continue;
                    uint32_t u = g->in_src[k0 + k];
                    uint32_t slot = (uint32_t)(x * K + at);
                    e = reduce ? synth_reduce(em, v, u, buf, slot, (uint32_t)f, 0, NULL)
                               : synth_copy(em, u, v, buf, slot, (uint32_t)f, 0, NULL);
                    at += (uint32_t)f;
                }
            }
            weft_maxflow_free(nt.mf);
        }
    }
    weft__free(srcbuf);
    work_fini(&w);
    return e;
}

weft_err weft_synth_bfb(const weft_topo *t, weft_coll coll, uint32_t max_ops, weft_plan **out,
                        weft_bfb *info, weft_diag *d)
{
    phases p;
    weft_bfb in;
    weft_err e = phases_init(&p, t, coll, true, &in, d);
    if (e)
        return e;
    uint32_t n = weft_topo_num_ranks(t);
    if (p.lcm > BFB_MAX_CHUNKS) {
        phases_fini(&p);
        return weft_diag_set(d, WEFT_ELIMIT,
                             "bfb: the exact split needs more than %u chunks per shard",
                             BFB_MAX_CHUNKS);
    }
    uint32_t K = (uint32_t)p.lcm;
    in.chunks = K;
    weft_plan_info pi = {
        .coll = coll,
        .nranks = n,
        .chunks = coll == WEFT_COLL_ALLREDUCE ? K * n : K,
        .inplace = true,
    };
    weft_plan *plan = NULL;
    e = weft_plan_new(&pi, &plan);
    if (e) {
        phases_fini(&p);
        return weft_diag_set(d, e, "bfb: %s creating the plan (%u ranks, %u chunks per shard)",
                             weft_strerror(e), n, K);
    }
    if (max_ops)
        weft_plan_limit_ops(plan, max_ops);
    synth_emit em;
    synth_emit_init(&em, plan);
    weft_buf buf = coll == WEFT_COLL_REDUCESCATTER ? WEFT_BUF_IN : WEFT_BUF_OUT;
    if (coll != WEFT_COLL_ALLGATHER)
        e = emit_phase(&em, &p.rs, p.rs_step, K, true, buf);
    if (!e && coll != WEFT_COLL_REDUCESCATTER)
        e = emit_phase(&em, &p.ag, p.ag_step, K, false, buf);
    phases_fini(&p);
    e = synth_finish(e, &em, plan, out);
    if (e == WEFT_ELIMIT && max_ops)
        return weft_diag_set(d, e, "bfb %s on %u ranks has more than %u ops (the limit)",
                             weft_coll_name(coll), n, max_ops);
    if (e)
        return weft_diag_set(d, e, "bfb: %s while building the plan", weft_strerror(e));
    if (info)
        *info = in;
    return WEFT_OK;
}
