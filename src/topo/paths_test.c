/* ECMP routing: exact per-link fractions on small fabrics, the latency
 * tie-break, per-hop splitting, path listing, errors, a cross-check against
 * brute-force path enumeration on a torus, scale, and an OOM sweep. */
#include <math.h>
#include <stdlib.h>

#include "base/alloc.h"
#include "base/testing.h"
#include "weft/paths.h"
#include "weft/topo.h"

static weft_rat R(int64_t n, int64_t d)
{
    weft_rat r = {0, 1};
    weft_rat_make(n, d, &r);
    return r;
}

/* A fabric from a compact description: nodes "n0".."n{k-1}" (the first
 * `ranks` are compute, the rest switches) and directed links given as
 * (src, dst, latency ns) triples; every bandwidth is 100 GB/s. */
typedef struct edge {
    uint32_t a, b;
    int64_t lat;
} edge;

static weft_topo *make(uint32_t nodes, uint32_t ranks, const edge *e, size_t ne, bool duplex)
{
    weft_topo_builder *b;
    if (weft_topo_builder_new(&b))
        return NULL;
    for (uint32_t i = 0; i < nodes; i++) {
        char name[32];
        snprintf(name, sizeof name, "n%u", i);
        weft_node_id id;
        if (weft_topo_builder_add_node(b, name, i < ranks ? WEFT_NODE_COMPUTE : WEFT_NODE_SWITCH,
                                       NULL, &id)) {
            weft_topo_builder_free(b);
            return NULL;
        }
    }
    for (size_t i = 0; i < ne; i++) {
        weft_node_id x = {e[i].a}, y = {e[i].b};
        weft_err err = duplex ? weft_topo_builder_add_duplex(b, x, y, R(100, 1), R(e[i].lat, 1))
                              : weft_topo_builder_add_link(b, x, y, R(100, 1), R(e[i].lat, 1));
        if (err) {
            weft_topo_builder_free(b);
            return NULL;
        }
    }
    weft_topo *t = NULL;
    if (weft_topo_build(b, &t, NULL))
        return NULL;
    return t;
}

/* The fraction the route puts on link a->b (0 when unused). */
static weft_rat frac_on(const weft_topo *t, const weft_paths_route *r, uint32_t a, uint32_t b)
{
    weft_link_id l;
    if (!weft_topo_find_link(t, (weft_node_id){a}, (weft_node_id){b}, &l))
        return R(-1, 1);
    for (uint32_t i = 0; i < r->n; i++)
        if (r->link[i] == l.v)
            return r->frac[i];
    return R(0, 1);
}

#define CHECK_FRAC(t, r, a, b, n, d) CHECK(weft_rat_eq(frac_on(t, r, a, b), R(n, d)))

static void test_diamond(void)
{
    /* 0 -> {1, 2} -> 3, all latency 0, then 2 -> 3 slower. */
    edge e[] = {{0, 1, 0}, {0, 2, 0}, {1, 3, 0}, {2, 3, 0}};
    weft_topo *t = make(4, 4, e, 4, false);
    weft_paths *p = NULL;
    CHECK_ERR(weft_paths_new(t, &p), WEFT_OK);
    weft_paths_route r;
    CHECK_ERR(weft_paths_route_get(p, (weft_node_id){0}, (weft_node_id){3}, &r, NULL), WEFT_OK);
    CHECK_INT(r.n, 4);
    CHECK_INT(r.hops, 2);
    CHECK_FRAC(t, &r, 0, 1, 1, 2);
    CHECK_FRAC(t, &r, 0, 2, 1, 2);
    CHECK_FRAC(t, &r, 1, 3, 1, 2);
    CHECK_FRAC(t, &r, 2, 3, 1, 2);
    CHECK(r.fracd[0] == 0.5);
    weft_node_id nodes[3 * 4];
    weft_rat w[4];
    uint32_t nw;
    uint64_t total;
    CHECK_ERR(weft_paths_list(p, 4, nodes, w, &nw, &total), WEFT_OK);
    CHECK_INT(nw, 2);
    CHECK_INT(total, 2);
    CHECK_INT(nodes[1].v, 1);
    CHECK_INT(nodes[4].v, 2);
    CHECK(weft_rat_eq(w[0], R(1, 2)) && weft_rat_eq(w[1], R(1, 2)));
    /* Reverse direction does not exist. */
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_paths_route_get(p, (weft_node_id){3}, (weft_node_id){0}, &r, &d), WEFT_ETOPO);
    CHECK_STR(d.msg, "no path from n3 to n0");
    CHECK_ERR(weft_paths_route_get(p, (weft_node_id){2}, (weft_node_id){2}, &r, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "route: source and destination are both n2");
    CHECK_ERR(weft_paths_route_get(p, (weft_node_id){9}, (weft_node_id){2}, &r, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "route: node id 9 out of range (4 nodes)");
    /* Listing needs a successful route first. */
    CHECK_ERR(weft_paths_list(p, 4, nodes, w, &nw, &total), WEFT_EINVAL);
    weft_paths_free(p);
    weft_topo_free(t);

    /* Latency breaks the tie: 2 -> 3 costs 5 ns, 1 -> 3 costs 2 ns. */
    edge e2[] = {{0, 1, 1}, {0, 2, 1}, {1, 3, 2}, {2, 3, 5}, {0, 3, 100}};
    t = make(4, 4, e2, 5, false);
    CHECK_ERR(weft_paths_new(t, &p), WEFT_OK);
    /* The direct link wins on hops although its latency is larger. */
    CHECK_ERR(weft_paths_route_get(p, (weft_node_id){0}, (weft_node_id){3}, &r, NULL), WEFT_OK);
    CHECK_INT(r.n, 1);
    CHECK_INT(r.hops, 1);
    CHECK(weft_rat_eq(r.lat_ns, R(100, 1)));
    weft_paths_free(p);
    weft_topo_free(t);
    t = make(4, 4, e2, 4, false);
    CHECK_ERR(weft_paths_new(t, &p), WEFT_OK);
    CHECK_ERR(weft_paths_route_get(p, (weft_node_id){0}, (weft_node_id){3}, &r, NULL), WEFT_OK);
    CHECK_INT(r.n, 2);
    CHECK_FRAC(t, &r, 0, 1, 1, 1);
    CHECK_FRAC(t, &r, 1, 3, 1, 1);
    CHECK_FRAC(t, &r, 0, 2, 0, 1);
    CHECK(weft_rat_eq(r.lat_ns, R(3, 1)));
    weft_paths_free(p);
    weft_topo_free(t);
}

/* 0 -> {1, 2}; 1 -> {3, 4}; 2 -> 5; {3, 4, 5} -> 6. Per hop: 1/4, 1/4, 1/2. */
static void test_per_hop(void)
{
    edge e[] = {{0, 1, 0}, {0, 2, 0}, {1, 3, 0}, {1, 4, 0},
                {2, 5, 0}, {3, 6, 0}, {4, 6, 0}, {5, 6, 0}};
    weft_topo *t = make(7, 2, e, 8, false);
    weft_paths *p = NULL;
    CHECK_ERR(weft_paths_new(t, &p), WEFT_OK);
    weft_paths_route r;
    CHECK_ERR(weft_paths_route_get(p, (weft_node_id){0}, (weft_node_id){6}, &r, NULL), WEFT_OK);
    CHECK_INT(r.n, 8);
    CHECK_FRAC(t, &r, 0, 1, 1, 2);
    CHECK_FRAC(t, &r, 1, 3, 1, 4);
    CHECK_FRAC(t, &r, 1, 4, 1, 4);
    CHECK_FRAC(t, &r, 2, 5, 1, 2);
    CHECK_FRAC(t, &r, 3, 6, 1, 4);
    CHECK_FRAC(t, &r, 5, 6, 1, 2);
    /* Links come in order of distance from the source, then id. */
    CHECK_INT(weft_topo_link_src(t, (weft_link_id){r.link[0]}).v, 0);
    CHECK_INT(weft_topo_link_src(t, (weft_link_id){r.link[2]}).v, 1);
    CHECK_INT(weft_topo_link_dst(t, (weft_link_id){r.link[7]}).v, 6);
    weft_node_id nodes[4 * 2];
    weft_rat w[2];
    uint32_t nw;
    uint64_t total;
    CHECK_ERR(weft_paths_list(p, 2, nodes, w, &nw, &total), WEFT_OK);
    CHECK_INT(nw, 2);
    CHECK_INT(total, 3);
    CHECK(weft_rat_eq(w[0], R(1, 4)));
    CHECK_INT(nodes[2].v, 3);
    CHECK_INT(nodes[6].v, 4);
    weft_node_id all[4 * 3];
    weft_rat wa[3];
    CHECK_ERR(weft_paths_list(p, 3, all, wa, &nw, &total), WEFT_OK);
    CHECK_INT(nw, 3);
    CHECK(weft_rat_eq(wa[2], R(1, 2)));
    CHECK_INT(all[9].v, 2);
    CHECK_INT(all[10].v, 5);
    weft_paths_free(p);
    weft_topo_free(t);
}

/* Two leaves, two spines, two ranks per leaf, all duplex. */
static void test_fat_tree(void)
{
    /* ranks 0,1 on leaf 4; ranks 2,3 on leaf 5; spines 6, 7. */
    edge e[] = {{0, 4, 100}, {1, 4, 100}, {2, 5, 100}, {3, 5, 100},
                {4, 6, 300}, {4, 7, 300}, {5, 6, 300}, {5, 7, 300}};
    weft_topo *t = make(8, 4, e, 8, true);
    weft_paths *p = NULL;
    CHECK_ERR(weft_paths_new(t, &p), WEFT_OK);
    weft_paths_route r;
    CHECK_ERR(weft_paths_route_get(p, (weft_node_id){0}, (weft_node_id){3}, &r, NULL), WEFT_OK);
    CHECK_INT(r.hops, 4);
    CHECK_INT(r.n, 6);
    CHECK_FRAC(t, &r, 0, 4, 1, 1);
    CHECK_FRAC(t, &r, 4, 6, 1, 2);
    CHECK_FRAC(t, &r, 4, 7, 1, 2);
    CHECK_FRAC(t, &r, 6, 5, 1, 2);
    CHECK_FRAC(t, &r, 7, 5, 1, 2);
    CHECK_FRAC(t, &r, 5, 3, 1, 1);
    CHECK(weft_rat_eq(r.lat_ns, R(800, 1)));
    CHECK_ERR(weft_paths_route_get(p, (weft_node_id){1}, (weft_node_id){0}, &r, NULL), WEFT_OK);
    CHECK_INT(r.hops, 2);
    CHECK_FRAC(t, &r, 1, 4, 1, 1);
    CHECK_FRAC(t, &r, 4, 0, 1, 1);
    /* A switch to a rank, and the route works from every side. */
    CHECK_ERR(weft_paths_route_get(p, (weft_node_id){6}, (weft_node_id){1}, &r, NULL), WEFT_OK);
    CHECK_INT(r.hops, 2);
    CHECK_FRAC(t, &r, 6, 4, 1, 1);
    weft_paths_free(p);
    weft_topo_free(t);
}

/* ---- Brute force reference: all simple paths, shortest by hops then
 * latency, split evenly per hop by recursion. ---------------------------- */

typedef struct brute {
    const weft_topo *t;
    uint32_t dst, best_hops;
    int64_t best_lat;
    uint32_t path[64];
    uint8_t on[64];
    /* per-node set of kept next-hop links: kept[node][k] */
    uint8_t kept[64][64];
} brute;

static int64_t lat_of(const weft_topo *t, uint32_t l)
{
    return weft_topo_link_lat(t, (weft_link_id){l}).num;
}

static void brute_dfs(brute *b, uint32_t v, uint32_t depth, int64_t lat, bool mark)
{
    if (v == b->dst) {
        if (!mark) {
            if (depth < b->best_hops || (depth == b->best_hops && lat < b->best_lat)) {
                b->best_hops = depth;
                b->best_lat = lat;
            }
        } else if (depth == b->best_hops && lat == b->best_lat) {
            for (uint32_t k = 0; k < depth; k++)
                b->kept[b->path[k]][b->path[k + 1]] = 1;
        }
        return;
    }
    if (depth >= b->best_hops && mark)
        return;
    uint32_t first, count;
    weft_topo_out_links(b->t, (weft_node_id){v}, &first, &count);
    for (uint32_t l = first; l < first + count; l++) {
        uint32_t w = weft_topo_link_dst(b->t, (weft_link_id){l}).v;
        if (b->on[w])
            continue;
        b->on[w] = 1;
        b->path[depth + 1] = w;
        brute_dfs(b, w, depth + 1, lat + lat_of(b->t, l), mark);
        b->on[w] = 0;
    }
}

/* Per-link fraction by recursion over kept hops, as doubles of small
 * denominators (exactly representable here). */
static void brute_split(brute *b, uint32_t v, double f, double *load)
{
    if (v == b->dst)
        return;
    uint32_t n = 0, first, count;
    weft_topo_out_links(b->t, (weft_node_id){v}, &first, &count);
    for (uint32_t l = first; l < first + count; l++)
        n += b->kept[v][weft_topo_link_dst(b->t, (weft_link_id){l}).v];
    for (uint32_t l = first; l < first + count; l++) {
        uint32_t w = weft_topo_link_dst(b->t, (weft_link_id){l}).v;
        if (b->kept[v][w]) {
            load[l] += f / n;
            brute_split(b, w, f / n, load);
        }
    }
}

/* A 4x4 torus with uneven latencies: every pair against brute force. */
static void test_torus_brute(void)
{
    edge e[64];
    size_t ne = 0;
    for (uint32_t y = 0; y < 4; y++)
        for (uint32_t x = 0; x < 4; x++) {
            uint32_t v = y * 4 + x;
            e[ne++] = (edge){v, y * 4 + (x + 1) % 4, (int64_t)((v * 7) % 3)};
            e[ne++] = (edge){v, ((y + 1) % 4) * 4 + x, (int64_t)((v * 5) % 2)};
        }
    weft_topo *t = make(16, 16, e, ne, true);
    weft_paths *p = NULL;
    CHECK_ERR(weft_paths_new(t, &p), WEFT_OK);
    uint32_t nl = weft_topo_num_links(t);
    int bad = 0;
    for (uint32_t s = 0; s < 16; s++)
        for (uint32_t d = 0; d < 16; d++) {
            if (s == d)
                continue;
            brute *b = calloc(1, sizeof *b);
            b->t = t;
            b->dst = d;
            b->best_hops = 99;
            b->on[s] = 1;
            b->path[0] = s;
            brute_dfs(b, s, 0, 0, false);
            brute_dfs(b, s, 0, 0, true);
            double load[128] = {0};
            brute_split(b, s, 1.0, load);
            weft_paths_route r;
            if (weft_paths_route_get(p, (weft_node_id){s}, (weft_node_id){d}, &r, NULL)) {
                bad++;
                free(b);
                continue;
            }
            double mine[128] = {0};
            for (uint32_t i = 0; i < r.n; i++)
                mine[r.link[i]] = r.fracd[i];
            for (uint32_t l = 0; l < nl; l++)
                /* The reference sums doubles; ours are exact rationals. */
                if (fabs(mine[l] - load[l]) > 1e-15) {
                    fprintf(stderr, "%u->%u link %u: %.17g vs %.17g\n", s, d, l, mine[l], load[l]);
                    bad++;
                }
            if (r.hops != b->best_hops || r.lat_ns.num != b->best_lat)
                bad++;
            free(b);
        }
    CHECK_INT(bad, 0);
    /* The 2x2 corner of the exact case: (0,0) -> (1,1) with equal latency
     * is split 1/2, 1/2 in a 2x2 torus. */
    weft_paths_free(p);
    weft_topo_free(t);
    edge e4[] = {{0, 1, 0}, {0, 2, 0}, {1, 3, 0}, {2, 3, 0}};
    t = make(4, 4, e4, 4, true);
    CHECK_ERR(weft_paths_new(t, &p), WEFT_OK);
    weft_paths_route r;
    CHECK_ERR(weft_paths_route_get(p, (weft_node_id){0}, (weft_node_id){3}, &r, NULL), WEFT_OK);
    CHECK_FRAC(t, &r, 0, 1, 1, 2);
    CHECK_FRAC(t, &r, 2, 3, 1, 2);
    CHECK_ERR(weft_paths_route_get(p, (weft_node_id){3}, (weft_node_id){0}, &r, NULL), WEFT_OK);
    CHECK_FRAC(t, &r, 3, 1, 1, 2);
    CHECK_FRAC(t, &r, 2, 0, 1, 2);
    weft_paths_free(p);
    weft_topo_free(t);
}

/* A two-level clos: 8 ranks per leaf, `leaves` leaves, `spines` spines. */
static weft_topo *clos(uint32_t leaves, uint32_t spines)
{
    uint32_t ranks = leaves * 8, nodes = ranks + leaves + spines;
    size_t ne = (size_t)ranks + (size_t)leaves * spines;
    edge *e = malloc(ne * sizeof *e);
    size_t k = 0;
    for (uint32_t r = 0; r < ranks; r++)
        e[k++] = (edge){r, ranks + r / 8, 0};
    for (uint32_t l = 0; l < leaves; l++)
        for (uint32_t s = 0; s < spines; s++)
            e[k++] = (edge){ranks + l, ranks + leaves + s, 0};
    weft_topo *t = make(nodes, ranks, e, ne, true);
    free(e);
    return t;
}

static void test_scale(void)
{
    /* 4,096 ranks; every ring neighbour routed. */
    weft_topo *t = clos(512, 16);
    weft_paths *p = NULL;
    CHECK_ERR(weft_paths_new(t, &p), WEFT_OK);
    uint32_t n = weft_topo_num_ranks(t);
    uint32_t bad = 0;
    uint64_t links = 0;
    for (uint32_t r = 0; r < n; r++) {
        weft_paths_route rt;
        weft_node_id a = weft_topo_rank_node(t, (weft_rank){r});
        weft_node_id b = weft_topo_rank_node(t, (weft_rank){(r + 1) % n});
        if (weft_paths_route_get(p, a, b, &rt, NULL))
            bad++;
        else
            links += rt.n;
    }
    CHECK_INT(bad, 0);
    /* 7 of 8 neighbours are leaf-local (2 links), 1 of 8 crosses the
     * spines (1 + 16 + 16 + 1 links). */
    CHECK_INT(links, (uint64_t)n / 8 * (7 * 2 + 34));
    weft_paths_free(p);
    weft_topo_free(t);
}

static weft_topo *oom_topo;

static weft_err oom_ctor(void *arg)
{
    weft_paths **pp = arg;
    weft_err e = weft_paths_new(oom_topo, pp);
    if (e)
        return e;
    weft_paths_route r;
    e = weft_paths_route_get(*pp, (weft_node_id){0}, (weft_node_id){3}, &r, NULL);
    if (e) {
        weft_paths_free(*pp);
        return e;
    }
    return WEFT_OK;
}

static void oom_dtor(void *arg)
{
    weft_paths_free(*(weft_paths **)arg);
}

int main(void)
{
    test_diamond();
    test_per_hop();
    test_fat_tree();
    test_torus_brute();
    test_scale();
    edge e[] = {{0, 4, 0}, {1, 4, 0}, {2, 5, 0}, {3, 5, 0},
                {4, 6, 0}, {4, 7, 0}, {5, 6, 0}, {5, 7, 0}};
    oom_topo = make(8, 4, e, 8, true);
    weft_paths *p = NULL;
    CHECK(weft_test_oom_sweep("paths", oom_ctor, oom_dtor, &p) > 0);
    weft_topo_free(oom_topo);
    return weft_test_done();
}
