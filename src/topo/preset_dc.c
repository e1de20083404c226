/* Direct-connect base graphs (Zhao et al., NSDI'25, "Efficient
 * Direct-Connect Topologies for Collective Communications", arXiv
 * 2202.03356, section 5): genkautz, circulant, debruijn and bipartite.
 * Every one takes its size parameters, then bw (default 100 GB/s) and lat
 * (default 0). Ranks are rank0 .. rankN-1, added first, so node id == rank.
 * Each builds in O(nodes + links) and refuses a graph that is not strongly
 * connected (weft__topo_check_connected below), since no collective can run
 * on it. */
#include <string.h>

#include "base/alloc.h"
#include "topo/preset_internal.h"

/* Where bw sits in the parameter table: after N (bipartite), after two
 * sizes (genkautz, debruijn); lat follows it. */
enum { P_BW_AFTER1 = 1, P_BW_AFTER2 = 2 };

static weft_node_id node(uint32_t v)
{
    weft_node_id n = {v};
    return n;
}

static weft_err add_ranks(weft_topo_builder *b, uint32_t n)
{
    for (uint32_t r = 0; r < n; r++) {
        weft_err e = weft__preset_node(b, WEFT_NODE_COMPUTE, NULL, NULL, "rank%u", r);
        if (e)
            return e;
    }
    return WEFT_OK;
}

/* Breadth-first reach of node 0 over out-arcs (dir 0) or in-arcs (dir 1)
 * of the arc list (src[k], dst[k]); true when all n nodes are reached. */
static bool reaches_all(uint32_t n, const uint32_t *src, const uint32_t *dst, size_t m, int dir,
                        uint32_t *start, uint32_t *adj, uint32_t *queue, uint8_t *seen)
{
    const uint32_t *from = dir ? dst : src, *to = dir ? src : dst;
    memset(start, 0, ((size_t)n + 1) * sizeof *start);
    for (size_t k = 0; k < m; k++)
        start[from[k] + 1]++;
    for (uint32_t v = 0; v < n; v++)
        start[v + 1] += start[v];
    for (size_t k = 0; k < m; k++)
        adj[start[from[k]]++] = to[k];
    for (uint32_t v = n; v > 0; v--)
        start[v] = start[v - 1];
    start[0] = 0;
    memset(seen, 0, n);
    uint32_t head = 0, tail = 0;
    queue[tail++] = 0;
    seen[0] = 1;
    while (head < tail) {
        uint32_t v = queue[head++];
        for (uint32_t k = start[v]; k < start[v + 1]; k++) {
            if (!seen[adj[k]]) {
                seen[adj[k]] = 1;
                queue[tail++] = adj[k];
            }
        }
    }
    return tail == n;
}

weft_err weft__topo_arcs_connected(uint32_t n, const uint32_t *src, const uint32_t *dst, size_t m,
                                   bool *connected)
{
    uint32_t *start = weft__malloc(((size_t)n + 1) * sizeof *start);
    uint32_t *adj = weft__malloc((m ? m : 1) * sizeof *adj);
    uint32_t *queue = weft__malloc((size_t)n * sizeof *queue);
    uint8_t *seen = weft__malloc(n);
    weft_err e = WEFT_OK;
    if (!start || !adj || !queue || !seen)
        e = WEFT_ENOMEM;
    else
        *connected = reaches_all(n, src, dst, m, 0, start, adj, queue, seen) &&
                     reaches_all(n, src, dst, m, 1, start, adj, queue, seen);
    weft__free(start);
    weft__free(adj);
    weft__free(queue);
    weft__free(seen);
    return e;
}

/* The arcs of a generated graph, collected before anything is added so
 * that a disconnected graph is refused without building it. */
typedef struct arcs {
    uint32_t *src, *dst;
    size_t n, cap;
} arcs;

static weft_err arcs_push(arcs *a, uint32_t u, uint32_t v)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 64;
        uint32_t *s = weft__realloc(a->src, cap * sizeof *s);
        if (!s)
            return WEFT_ENOMEM;
        a->src = s;
        uint32_t *d = weft__realloc(a->dst, cap * sizeof *d);
        if (!d)
            return WEFT_ENOMEM;
        a->dst = d;
        a->cap = cap;
    }
    a->src[a->n] = u;
    a->dst[a->n] = v;
    a->n++;
    return WEFT_OK;
}

static void arcs_fini(arcs *a)
{
    weft__free(a->src);
    weft__free(a->dst);
}

/* Checks connectivity, then adds the n ranks and the arcs (directed links
 * of bw and lat). Consumes nothing; the caller frees the arcs. */
static weft_err build_arcs(const weft__preset_args *a, weft_topo_builder *b, uint32_t n,
                           const arcs *g, weft_rat bw, weft_rat lat, weft_diag *d)
{
    bool ok = false;
    weft_err e = weft__topo_arcs_connected(n, g->src, g->dst, g->n, &ok);
    if (e)
        return weft__preset_built(a, e, d);
    if (!ok)
        return weft_diag_set(d, WEFT_EINVAL,
                             "%s: the generated graph is not strongly connected (some rank "
                             "cannot reach another)",
                             a->spec);
    e = add_ranks(b, n);
    for (size_t k = 0; !e && k < g->n; k++)
        e = weft_topo_builder_add_link(b, node(g->src[k]), node(g->dst[k]), bw, lat);
    return e ? weft__preset_built(a, e, d) : WEFT_OK;
}

static weft_err bw_lat(const weft__preset_args *a, unsigned at, weft_rat *bw, weft_rat *lat,
                       weft_diag *d)
{
    weft_err e = weft__preset_bw(a, at, weft_rat_int(100), false, bw, d);
    if (!e)
        e = weft__preset_lat(a, at + 1, weft_rat_int(0), lat, d);
    return e;
}

weft_err weft__preset_genkautz(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    uint32_t n, deg;
    weft_rat bw, lat;
    weft_err e = weft__preset_need(a, 0, d);
    if (!e)
        e = weft__preset_need(a, 1, d);
    if (!e)
        e = weft__preset_uint(a, 0, 0, 2, UINT32_MAX, &n, d);
    if (!e)
        e = weft__preset_uint(a, 1, 0, 1, UINT32_MAX, &deg, d);
    if (!e)
        e = bw_lat(a, P_BW_AFTER2, &bw, &lat, d);
    if (e)
        return e;
    if (deg >= n)
        return weft_diag_set(d, WEFT_EINVAL,
                             "%s: degree %u cannot be reached with %u ranks (d must be < N)",
                             a->spec, deg, n);
    e = weft__preset_check_size(a, n, weft__sat_mul(n, deg), d);
    if (e)
        return e;
    arcs g = {0};
    for (uint32_t i = 0; !e && i < n; i++) {
        for (uint32_t k = 1; !e && k <= deg; k++) {
            /* (-d*i - k) mod N, in 64 bits: d*i < 2^64. */
            uint64_t x = ((uint64_t)deg * i + k) % n;
            uint32_t j = (uint32_t)((n - x) % n);
            if (j != i) /* self-loops dropped */
                e = arcs_push(&g, i, j);
        }
    }
    e = e ? weft__preset_built(a, e, d) : build_arcs(a, b, n, &g, bw, lat, d);
    arcs_fini(&g);
    return e;
}

weft_err weft__preset_debruijn(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    uint32_t deg, k;
    weft_rat bw, lat;
    weft_err e = weft__preset_need(a, 0, d);
    if (!e)
        e = weft__preset_need(a, 1, d);
    if (!e)
        e = weft__preset_uint(a, 0, 0, 2, UINT32_MAX, &deg, d);
    if (!e)
        e = weft__preset_uint(a, 1, 0, 1, 64, &k, d);
    if (!e)
        e = bw_lat(a, P_BW_AFTER2, &bw, &lat, d);
    if (e)
        return e;
    uint64_t n = 1;
    for (uint32_t i = 0; i < k; i++)
        n = weft__sat_mul(n, deg);
    e = weft__preset_check_size(a, n, weft__sat_mul(n, deg), d);
    if (e)
        return e;
    arcs g = {0};
    for (uint64_t i = 0; !e && i < n; i++) {
        for (uint32_t s = 0; !e && s < deg; s++) {
            uint64_t j = (i * deg + s) % n; /* shift in digit s */
            if (j != i)
                e = arcs_push(&g, (uint32_t)i, (uint32_t)j);
        }
    }
    e = e ? weft__preset_built(a, e, d) : build_arcs(a, b, (uint32_t)n, &g, bw, lat, d);
    arcs_fini(&g);
    return e;
}

weft_err weft__preset_bipartite(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    uint32_t n;
    weft_rat bw, lat;
    weft_err e = weft__preset_need(a, 0, d);
    if (!e)
        e = weft__preset_uint(a, 0, 0, 2, UINT32_MAX, &n, d);
    if (!e)
        e = bw_lat(a, P_BW_AFTER1, &bw, &lat, d);
    if (e)
        return e;
    if (n % 2)
        return weft_diag_set(d, WEFT_EINVAL, "%s: N must be even (two halves of N/2 ranks)",
                             a->spec);
    uint64_t h = n / 2;
    e = weft__preset_check_size(a, n, weft__sat_mul(2 * h, h), d);
    if (e)
        return e;
    e = add_ranks(b, n);
    for (uint32_t i = 0; !e && i < h; i++) {
        for (uint32_t j = 0; !e && j < h; j++)
            e = weft_topo_builder_add_duplex(b, node(i), node((uint32_t)h + j), bw, lat);
    }
    return e ? weft__preset_built(a, e, d) : WEFT_OK;
}

/* circulant:N,j1,j2,...[,bw=BW][,lat=LAT]: the offsets are the bare values
 * after N, so bw and lat must be named (a bare number after the offsets is
 * one more offset). The registry gives the offsets as parameters j1..j8,
 * then bw and lat. */
weft_err weft__preset_circulant(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    enum { MAXJ = 8, P_J = 1, P_CBW = P_J + MAXJ };
    uint32_t n, j[MAXJ];
    unsigned nj = 0;
    weft_rat bw, lat;
    weft_err e = weft__preset_need(a, 0, d);
    if (!e)
        e = weft__preset_uint(a, 0, 0, 3, UINT32_MAX, &n, d);
    if (e)
        return e;
    for (unsigned i = 0; i < MAXJ && !e; i++) {
        if (!weft__preset_has(a, P_J + i))
            continue;
        e = weft__preset_uint(a, P_J + i, 0, 1, n / 2, &j[nj], d);
        for (unsigned q = 0; !e && q < nj; q++) {
            if (j[q] == j[nj])
                e = weft_diag_set(d, WEFT_EINVAL, "%s: offset %u given twice", a->spec, j[q]);
        }
        nj++;
    }
    if (!e && nj == 0)
        e = weft_diag_set(d, WEFT_EINVAL, "%s: missing offsets (usage: %s)", a->spec,
                          a->preset->info.usage);
    if (!e)
        e = bw_lat(a, P_CBW, &bw, &lat, d);
    if (e)
        return e;
    uint64_t links = 0;
    for (unsigned q = 0; q < nj; q++)
        links += 2 * (uint64_t)n / (2 * j[q] == n ? 2 : 1);
    e = weft__preset_check_size(a, n, links, d);
    if (e)
        return e;
    arcs g = {0};
    for (uint32_t i = 0; !e && i < n; i++) {
        for (unsigned q = 0; !e && q < nj; q++) {
            uint32_t p = (uint32_t)(((uint64_t)i + j[q]) % n);
            /* The offset N/2 joins each pair once, not twice. */
            if (2 * j[q] == n && i >= n / 2)
                continue;
            e = arcs_push(&g, i, p);
            if (!e)
                e = arcs_push(&g, p, i);
        }
    }
    e = e ? weft__preset_built(a, e, d) : build_arcs(a, b, n, &g, bw, lat, d);
    arcs_fini(&g);
    return e;
}
