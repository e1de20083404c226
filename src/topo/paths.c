/* ECMP shortest-path routing. See paths.h for the model and its cost. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "topo/graph_internal.h"
#include "weft/paths.h"

#define UNSEEN UINT32_MAX

struct weft_paths {
    const weft_topo *t;
    /* Per-node scratch, valid for touched nodes only. ds/dt: hop distance
     * from src / to dst, UNSEEN when not reached. */
    uint32_t *ds, *dt;
    uint32_t *touched, n_touched;
    uint32_t *front, *next; /* BFS frontiers (either direction) */
    uint32_t *bfront;       /* the backward frontier while the forward one runs */
    uint8_t *in_dag;        /* node is on a kept shortest path; reset via dag */
    uint32_t *lvl;          /* distance from src of a DAG node */
    uint32_t *dag, n_dag;   /* DAG nodes, sorted by (level, id) after routing */
    weft_rat *lat;          /* least latency to dst of a DAG node */
    weft_rat *frac;         /* traffic reaching a DAG node */
    uint64_t *npaths;       /* path counts, for weft_paths_list */
    uint32_t *didx;         /* position of a DAG node in dag */
    uint32_t *estart;       /* DAG node i's out-edges are ekey[estart[i] .. estart[i+1]) */
    uint64_t *ekey;         /* DAG edges: (didx of the tail) << 32 | link id, sorted */
    size_t n_edges, e_cap;
    /* The last route. */
    uint32_t *olink;
    weft_rat *ofrac;
    double *ofracd;
    size_t o_cap;
    uint32_t on;
    bool valid;
    uint32_t src, dst, hops;
};

weft_err weft_paths_new(const weft_topo *t, weft_paths **out)
{
    weft_paths *p = weft__calloc(1, sizeof *p);
    if (!p)
        return WEFT_ENOMEM;
    size_t n = t->n_nodes;
    p->t = t;
    p->ds = weft__malloc(n * sizeof *p->ds);
    p->dt = weft__malloc(n * sizeof *p->dt);
    p->touched = weft__malloc(n * sizeof *p->touched);
    p->front = weft__malloc(n * sizeof *p->front);
    p->next = weft__malloc(n * sizeof *p->next);
    p->bfront = weft__malloc(n * sizeof *p->bfront);
    p->in_dag = weft__calloc(n, 1);
    p->lvl = weft__malloc(n * sizeof *p->lvl);
    p->dag = weft__malloc(n * sizeof *p->dag);
    p->lat = weft__malloc(n * sizeof *p->lat);
    p->frac = weft__malloc(n * sizeof *p->frac);
    p->npaths = weft__malloc(n * sizeof *p->npaths);
    p->didx = weft__malloc(n * sizeof *p->didx);
    p->estart = weft__malloc((n + 1) * sizeof *p->estart);
    if (!p->ds || !p->dt || !p->touched || !p->front || !p->next || !p->bfront || !p->in_dag ||
        !p->lvl || !p->dag || !p->lat || !p->frac || !p->npaths || !p->didx || !p->estart) {
        weft_paths_free(p);
        return WEFT_ENOMEM;
    }
    for (size_t v = 0; v < n; v++)
        p->ds[v] = p->dt[v] = UNSEEN;
    *out = p;
    return WEFT_OK;
}

void weft_paths_free(weft_paths *p)
{
    if (!p)
        return;
    weft__free(p->ds);
    weft__free(p->dt);
    weft__free(p->touched);
    weft__free(p->front);
    weft__free(p->next);
    weft__free(p->bfront);
    weft__free(p->in_dag);
    weft__free(p->lvl);
    weft__free(p->dag);
    weft__free(p->lat);
    weft__free(p->frac);
    weft__free(p->npaths);
    weft__free(p->didx);
    weft__free(p->estart);
    weft__free(p->ekey);
    weft__free(p->olink);
    weft__free(p->ofrac);
    weft__free(p->ofracd);
    weft__free(p);
}

static void reset(weft_paths *p)
{
    for (uint32_t i = 0; i < p->n_touched; i++)
        p->ds[p->touched[i]] = p->dt[p->touched[i]] = UNSEEN;
    p->n_touched = 0;
    for (uint32_t i = 0; i < p->n_dag; i++)
        p->in_dag[p->dag[i]] = 0;
    p->n_dag = 0;
    p->valid = false;
}

static void touch(weft_paths *p, uint32_t v)
{
    if (p->ds[v] == UNSEEN && p->dt[v] == UNSEEN)
        p->touched[p->n_touched++] = v;
}

/* Expands one full level. Forward: along out-links, setting ds. Backward:
 * against in-links, setting dt. Returns whether a newly reached node was
 * already reached from the other side. */
static bool expand(weft_paths *p, bool forward, uint32_t *front, uint32_t *n_front, uint32_t radius)
{
    const weft_topo *t = p->t;
    uint32_t *mine = forward ? p->ds : p->dt, *theirs = forward ? p->dt : p->ds;
    uint32_t nn = 0;
    bool met = false;
    for (uint32_t i = 0; i < *n_front; i++) {
        uint32_t v = front[i];
        uint32_t lo = forward ? t->out_start[v] : t->in_start[v];
        uint32_t hi = forward ? t->out_start[v + 1] : t->in_start[v + 1];
        for (uint32_t j = lo; j < hi; j++) {
            uint32_t w = forward ? t->link_dst[j] : t->link_src[t->in_links[j]];
            if (mine[w] != UNSEEN)
                continue;
            touch(p, w);
            mine[w] = radius + 1;
            p->next[nn++] = w;
            if (theirs[w] != UNSEEN)
                met = true;
        }
    }
    memcpy(front, p->next, nn * sizeof *front);
    *n_front = nn;
    return met;
}

/* Links a level expansion of this front would scan. */
static uint64_t front_degree(const weft_topo *t, bool forward, const uint32_t *front, uint32_t n)
{
    const uint32_t *start = forward ? t->out_start : t->in_start;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += start[front[i] + 1] - start[front[i]];
    return sum;
}

static void dag_add(weft_paths *p, uint32_t v, uint32_t level)
{
    p->in_dag[v] = 1;
    p->lvl[v] = level;
    p->dag[p->n_dag++] = v;
}

static const weft_paths *sort_ctx;

static int by_level_id(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint32_t lx = sort_ctx->lvl[x], ly = sort_ctx->lvl[y];
    if (lx != ly)
        return lx < ly ? -1 : 1;
    return x < y ? -1 : x > y;
}

static weft_err edge_add(weft_paths *p, uint32_t link)
{
    if (weft__grow((void **)&p->ekey, &p->e_cap, p->n_edges + 1, sizeof *p->ekey))
        return WEFT_ENOMEM;
    p->ekey[p->n_edges++] = link;
    return WEFT_OK;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Both sorts are by keys without ties (a node's (level, id), a link's
 * (tail, id)), so any sort gives the same order. A route's DAG has a few
 * nodes and edges: an insertion sort of those beats qsort's merge sort
 * (glibc's, through memcpy and a comparison call per step), which took
 * a sixth of a route at 128 GPUs (h100:16). */
#define SMALL_SORT 32

static void sort_dag(weft_paths *p)
{
    uint32_t n = p->n_dag, *a = p->dag;
    if (n > SMALL_SORT) {
        sort_ctx = p;
        qsort(a, n, sizeof *a, by_level_id);
        return;
    }
    for (uint32_t i = 1; i < n; i++) {
        uint32_t v = a[i], lv = p->lvl[v], j = i;
        while (j > 0 && (p->lvl[a[j - 1]] > lv || (p->lvl[a[j - 1]] == lv && a[j - 1] > v))) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = v;
    }
}

static void sort_keys(uint64_t *a, size_t n)
{
    if (n > SMALL_SORT) {
        qsort(a, n, sizeof *a, cmp_u64);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        uint64_t v = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] > v) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = v;
    }
}

/* Recovers the shortest-path DAG from the meeting layer (nodes with
 * ds == m and dt == D - m), walking backward to src and forward to dst, and
 * collects its edges. Each walk only looks at nodes the searches touched,
 * from the side that already scanned their links (backward: out-links of
 * nodes at ds < m; forward: in-links of nodes at dt < D - m), so a query
 * never scans the links of a node it did not expand: a spine of a large
 * clos, reached at the meeting layer, has thousands of links. */
static weft_err build_dag(weft_paths *p, uint32_t m, uint32_t hops)
{
    const weft_topo *t = p->t;
    p->n_edges = 0;
    for (uint32_t i = 0; i < p->n_touched; i++) {
        uint32_t v = p->touched[i];
        if (p->ds[v] == m && p->dt[v] == hops - m)
            dag_add(p, v, m);
    }
    for (uint32_t k = m; k > 0; k--)
        for (uint32_t i = 0; i < p->n_touched; i++) {
            uint32_t u = p->touched[i];
            if (p->ds[u] != k - 1)
                continue;
            bool on = false;
            for (uint32_t j = t->out_start[u]; j < t->out_start[u + 1]; j++) {
                uint32_t w = t->link_dst[j];
                if (p->in_dag[w] && p->lvl[w] == k) {
                    if (edge_add(p, j))
                        return WEFT_ENOMEM;
                    on = true;
                }
            }
            if (on)
                dag_add(p, u, k - 1);
        }
    for (uint32_t k = m; k < hops; k++)
        for (uint32_t i = 0; i < p->n_touched; i++) {
            uint32_t w = p->touched[i];
            if (p->dt[w] != hops - k - 1)
                continue;
            bool on = false;
            for (uint32_t j = t->in_start[w]; j < t->in_start[w + 1]; j++) {
                uint32_t l = t->in_links[j], u = t->link_src[l];
                if (p->in_dag[u] && p->lvl[u] == k) {
                    if (edge_add(p, l))
                        return WEFT_ENOMEM;
                    on = true;
                }
            }
            if (on)
                dag_add(p, w, k + 1);
        }
    sort_dag(p);
    for (uint32_t i = 0; i < p->n_dag; i++)
        p->didx[p->dag[i]] = i;
    /* Edges by tail in DAG order, then by link id. */
    for (size_t e = 0; e < p->n_edges; e++) {
        uint32_t l = (uint32_t)p->ekey[e];
        p->ekey[e] = (uint64_t)p->didx[t->link_src[l]] << 32 | l;
    }
    sort_keys(p->ekey, p->n_edges);
    size_t e = 0;
    for (uint32_t i = 0; i <= p->n_dag; i++) {
        while (e < p->n_edges && (p->ekey[e] >> 32) < i)
            e++;
        p->estart[i] = (uint32_t)e;
    }
    return WEFT_OK;
}

/* Is link j (u -> w) a kept hop: w on the DAG one level further, and the
 * least latency through it equals u's least latency? */
static bool kept(const weft_paths *p, uint32_t u, uint32_t j)
{
    uint32_t w = p->t->link_dst[j];
    if (!p->in_dag[w] || p->lvl[w] != p->lvl[u] + 1)
        return false;
    weft_rat s;
    if (weft_rat_add(p->t->link_lat[j], p->lat[w], &s))
        return false;
    return weft_rat_eq(s, p->lat[u]);
}

static weft_err out_reserve(weft_paths *p, size_t need)
{
    if (need <= p->o_cap)
        return WEFT_OK;
    size_t cap = p->o_cap ? p->o_cap : 16;
    while (cap < need)
        cap *= 2;
    uint32_t *l = weft__realloc_array(p->olink, cap, sizeof *l);
    if (!l)
        return WEFT_ENOMEM;
    p->olink = l;
    weft_rat *f = weft__realloc_array(p->ofrac, cap, sizeof *f);
    if (!f)
        return WEFT_ENOMEM;
    p->ofrac = f;
    double *fd = weft__realloc_array(p->ofracd, cap, sizeof *fd);
    if (!fd)
        return WEFT_ENOMEM;
    p->ofracd = fd;
    p->o_cap = cap;
    return WEFT_OK;
}

static weft_err overflow(weft_paths *p, uint32_t src, uint32_t dst, weft_diag *d)
{
    const weft_topo *t = p->t;
    return weft_diag_set(d, WEFT_EOVERFLOW,
                         "route %s -> %s: a latency sum or traffic fraction overflows",
                         t->strings + t->node_name[src], t->strings + t->node_name[dst]);
}

weft_err weft_paths_route_get(weft_paths *p, weft_node_id src_id, weft_node_id dst_id,
                              weft_paths_route *out, weft_diag *d)
{
    const weft_topo *t = p->t;
    uint32_t src = src_id.v, dst = dst_id.v;
    reset(p);
    if (src >= t->n_nodes || dst >= t->n_nodes)
        return weft_diag_set(d, WEFT_EINVAL, "route: node id %u out of range (%u nodes)",
                             src >= t->n_nodes ? src : dst, t->n_nodes);
    if (src == dst)
        return weft_diag_set(d, WEFT_EINVAL, "route: source and destination are both %s",
                             t->strings + t->node_name[src]);
    touch(p, src);
    p->ds[src] = 0;
    touch(p, dst);
    p->dt[dst] = 0;
    uint32_t *ff = p->front, *bf = p->bfront;
    uint32_t nf = 1, nb = 1, fr = 0, br = 0;
    ff[0] = src;
    bf[0] = dst;
    for (;;) {
        if (!nf || !nb)
            return weft_diag_set(d, WEFT_ETOPO, "no path from %s to %s",
                                 t->strings + t->node_name[src], t->strings + t->node_name[dst]);
        /* Expand the side with fewer links to scan, not fewer nodes: on a
         * switch the forward front {switch} is one node with a link to
         * every rank, the backward front {dst} one in-link, so a route is
         * O(1) instead of O(ranks). */
        bool met;
        if (front_degree(t, true, ff, nf) <= front_degree(t, false, bf, nb))
            met = expand(p, true, ff, &nf, fr++);
        else
            met = expand(p, false, bf, &nb, br++);
        if (met)
            break;
    }
    uint32_t hops = fr + br;
    if (build_dag(p, fr, hops))
        return weft_diag_code(d, WEFT_ENOMEM);

    /* Least latency to dst, from the far end; a node's out-edges lead one
     * level on, to nodes later in dag. */
    for (uint32_t i = p->n_dag; i-- > 0;) {
        uint32_t u = p->dag[i];
        if (u == dst) {
            p->lat[u] = weft_rat_int(0);
            continue;
        }
        for (uint32_t e = p->estart[i]; e < p->estart[i + 1]; e++) {
            uint32_t j = (uint32_t)p->ekey[e];
            weft_rat s;
            if (weft_rat_add(t->link_lat[j], p->lat[t->link_dst[j]], &s))
                return overflow(p, src, dst, d);
            if (e == p->estart[i] || weft_rat_cmp(s, p->lat[u]) < 0)
                p->lat[u] = s;
        }
    }
    /* Even split per hop, from src. */
    for (uint32_t i = 0; i < p->n_dag; i++)
        p->frac[p->dag[i]] = weft_rat_int(0);
    p->frac[src] = weft_rat_int(1);
    uint32_t on = 0;
    for (uint32_t i = 0; i < p->n_dag; i++) {
        uint32_t u = p->dag[i];
        if (u == dst || weft_rat_is_zero(p->frac[u]))
            continue;
        /* The kept hops, in edge order, straight into the route (kept
         * sums latencies: once an edge, not once to count and once to
         * copy). */
        if (out_reserve(p, on + (size_t)(p->estart[i + 1] - p->estart[i])))
            return weft_diag_code(d, WEFT_ENOMEM);
        uint32_t k = 0;
        for (uint32_t e = p->estart[i]; e < p->estart[i + 1]; e++)
            if (kept(p, u, (uint32_t)p->ekey[e]))
                p->olink[on + k++] = (uint32_t)p->ekey[e];
        weft_rat share;
        if (weft_rat_div(p->frac[u], weft_rat_int(k), &share))
            return overflow(p, src, dst, d);
        double shared = weft_rat_to_double(share);
        for (uint32_t q = 0; q < k; q++, on++) {
            uint32_t w = t->link_dst[p->olink[on]];
            if (weft_rat_add(p->frac[w], share, &p->frac[w]))
                return overflow(p, src, dst, d);
            p->ofrac[on] = share;
            p->ofracd[on] = shared;
        }
    }
    p->on = on;
    p->valid = true;
    p->src = src;
    p->dst = dst;
    p->hops = hops;
    out->n = on;
    out->link = p->olink;
    out->frac = p->ofrac;
    out->fracd = p->ofracd;
    out->hops = hops;
    out->lat_ns = p->lat[src];
    return WEFT_OK;
}

/* Counts kept paths from every DAG node to dst (saturating). */
static void count_paths(weft_paths *p)
{
    const weft_topo *t = p->t;
    for (uint32_t i = p->n_dag; i-- > 0;) {
        uint32_t u = p->dag[i];
        if (u == p->dst) {
            p->npaths[u] = 1;
            continue;
        }
        uint64_t c = 0;
        for (uint32_t e = p->estart[i]; e < p->estart[i + 1]; e++) {
            uint32_t j = (uint32_t)p->ekey[e];
            if (!kept(p, u, j))
                continue;
            uint64_t add = p->npaths[t->link_dst[j]];
            c = c > UINT64_MAX - add ? UINT64_MAX : c + add;
        }
        p->npaths[u] = c;
    }
}

weft_err weft_paths_list(weft_paths *p, uint32_t max, weft_node_id *nodes, weft_rat *weight,
                         uint32_t *written, uint64_t *total)
{
    if (!p->valid || max > WEFT_PATHS_LIST_MAX)
        return WEFT_EINVAL;
    const weft_topo *t = p->t;
    count_paths(p);
    *total = p->npaths[p->src];
    uint32_t hops = p->hops, nw = 0;
    /* Depth-first over kept hops; at[k] is the next DAG edge to try at
     * depth k (ekey order: by link id, as out-links are), path[k] the node
     * there and w[k] the weight of the prefix. Only DAG edges are scanned:
     * a switch on the path has a link to every rank. */
    enum { DEPTH_MAX = 256 };
    uint32_t path[DEPTH_MAX], at[DEPTH_MAX];
    weft_rat w[DEPTH_MAX];
    if (hops >= DEPTH_MAX)
        return WEFT_ELIMIT;
    uint32_t depth = 0;
    path[0] = p->src;
    at[0] = p->estart[p->didx[p->src]];
    w[0] = weft_rat_int(1);
    while (nw < max) {
        uint32_t u = path[depth];
        if (u == p->dst) {
            for (uint32_t k = 0; k <= hops; k++)
                nodes[(size_t)nw * (hops + 1) + k].v = path[k];
            weight[nw++] = w[depth];
            depth--;
            continue;
        }
        uint32_t lo = p->estart[p->didx[u]], hi = p->estart[p->didx[u] + 1];
        uint32_t e = at[depth];
        while (e < hi && !kept(p, u, (uint32_t)p->ekey[e]))
            e++;
        if (e == hi) {
            if (depth == 0)
                break;
            depth--;
            continue;
        }
        at[depth] = e + 1;
        int64_t k = 0;
        for (uint32_t i = lo; i < hi; i++)
            k += kept(p, u, (uint32_t)p->ekey[i]);
        weft_rat share;
        if (weft_rat_div(w[depth], weft_rat_int(k), &share))
            return WEFT_EOVERFLOW;
        uint32_t v = t->link_dst[(uint32_t)p->ekey[e]];
        depth++;
        path[depth] = v;
        at[depth] = p->estart[p->didx[v]];
        w[depth] = share;
    }
    *written = nw;
    return WEFT_OK;
}
