/* Rank orbits under verified automorphisms. See orbits.h. */
#include "synth/orbits.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/heap.h"

void weft__orbits_fini(weft__orbits *o)
{
    weft__free(o->reps);
    weft__free(o->rank_of);
    weft__free(o->link_of);
    o->reps = NULL;
    o->rank_of = NULL;
    o->link_of = NULL;
}

/* ---- Colour refinement -------------------------------------------------- */

#define MAX_ROUNDS 64

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

typedef struct keyed {
    uint64_t key;
    uint32_t node;
} keyed;

static int keyed_cmp(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

/* Refines colours until their number stops growing, or for at most
 * MAX_ROUNDS rounds (a long chain would otherwise take one round per node;
 * coarser colours only mean more candidates fail verification). A node's signature
 * adds up a hash of (weight, neighbour colour) over its out-links and,
 * separately, its in-links; sums make the multiset order-free. A hash
 * collision can only merge classes, which the verification below makes
 * harmless. */
static void refine(const weft_topo *t, const int64_t *w, uint32_t *color, keyed *scratch)
{
    uint32_t n = weft_topo_num_nodes(t);
    uint32_t classes = 0;
    for (uint32_t v = 0; v < n; v++) {
        color[v] = (uint32_t)weft_topo_node_kind(t, (weft_node_id){v});
        if (color[v] + 1 > classes)
            classes = color[v] + 1;
    }
    for (uint32_t round = 0; round < n && round < MAX_ROUNDS; round++) {
        for (uint32_t v = 0; v < n; v++) {
            uint64_t out = 0, in = 0;
            uint32_t first, count, cin;
            weft_topo_out_links(t, (weft_node_id){v}, &first, &count);
            for (uint32_t i = 0; i < count; i++) {
                uint32_t l = first + i;
                out += mix((uint64_t)w[l] * 0x9E3779B97F4A7C15ull ^
                           color[weft_topo_link_dst(t, (weft_link_id){l}).v]);
            }
            const uint32_t *inl = weft_topo_in_links(t, (weft_node_id){v}, &cin);
            for (uint32_t i = 0; i < cin; i++)
                in += mix((uint64_t)w[inl[i]] * 0xC2B2AE3D27D4EB4Full ^
                          color[weft_topo_link_src(t, (weft_link_id){inl[i]}).v]);
            scratch[v].key = mix(color[v] ^ mix(out ^ mix(in + 1)));
            scratch[v].node = v;
        }
        qsort(scratch, n, sizeof *scratch, keyed_cmp);
        uint32_t next = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (i && scratch[i].key != scratch[i - 1].key)
                next++;
            color[scratch[i].node] = next;
        }
        if (next + 1 <= classes)
            break;
        classes = next + 1;
    }
}

/* ---- Candidate automorphisms -------------------------------------------- */

typedef struct search {
    const weft_topo *t;
    const int64_t *w;
    const uint32_t *color;
    uint32_t n;
    uint32_t *map, *inv;
    /* Mapped nodes to extend from, by (degree, order) key: matching
     * proceeds from the most constrained nodes, so a box's inner links are
     * matched before a switch that joins many boxes pairs its remaining
     * neighbours by id. Each node is queued at most once (n reserved). */
    weft__heap64 heap;
    keyed *ka, *kb; /* neighbour lists, max degree each */
} search;

#define NONE UINT32_MAX

/* The neighbours of v in one direction not yet matched (matched[x] ==
 * NONE), keyed by (colour, direction, link weight) and sorted. */
static uint32_t neighbours(const search *s, uint32_t v, bool out, keyed *k, const uint32_t *matched)
{
    uint32_t first, count, m = 0;
    const uint32_t *in = NULL;
    if (out)
        weft_topo_out_links(s->t, (weft_node_id){v}, &first, &count);
    else
        in = weft_topo_in_links(s->t, (weft_node_id){v}, &count);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t l = out ? first + i : in[i];
        uint32_t x = out ? weft_topo_link_dst(s->t, (weft_link_id){l}).v
                         : weft_topo_link_src(s->t, (weft_link_id){l}).v;
        if (matched[x] != NONE)
            continue;
        k[m].key = mix(((uint64_t)s->color[x] << 1 | out) ^ mix((uint64_t)s->w[l]));
        k[m].node = x;
        m++;
    }
    qsort(k, m, sizeof *k, keyed_cmp);
    return m;
}

/* True when the link u -> v exists and has the given weight. */
static bool has_link(const search *s, uint32_t u, uint32_t v, int64_t weight)
{
    weft_link_id l;
    return weft_topo_find_link(s->t, (weft_node_id){u}, (weft_node_id){v}, &l) &&
           s->w[l.v] == weight;
}

static uint64_t degree_key(const search *s, uint32_t v)
{
    uint32_t first, count, cin;
    weft_topo_out_links(s->t, (weft_node_id){v}, &first, &count);
    weft_topo_in_links(s->t, (weft_node_id){v}, &cin);
    return ((uint64_t)(count + cin) << 32) | v;
}

/* Extends the partial map in s->map/s->inv (its nodes queued in s->heap)
 * by matching neighbours outward, then checks it link by link. */
static bool extend_and_verify(search *s, uint32_t shift)
{
    uint32_t n = s->n;
    while (s->heap.n) {
        uint32_t a = (uint32_t)weft__heap64_pop(&s->heap), b = s->map[a];
        for (int dir = 0; dir < 2; dir++) {
            bool out = dir == 0;
            uint32_t na = neighbours(s, a, out, s->ka, s->map);
            uint32_t nb = neighbours(s, b, out, s->kb, s->inv);
            if (na != nb)
                return false;
            for (uint32_t i = 0; i < na; i++)
                if (s->ka[i].key != s->kb[i].key)
                    return false;
            /* Within each run of equal keys, pair the j-th with the
             * (j + shift)-th: shift 1 tends to give long cycles (all boxes
             * in one), so one map merges many ranks. */
            for (uint32_t i0 = 0; i0 < na;) {
                uint32_t i1 = i0 + 1;
                while (i1 < na && s->ka[i1].key == s->ka[i0].key)
                    i1++;
                for (uint32_t i = i0; i < i1; i++) {
                    uint32_t x = s->ka[i].node;
                    uint32_t y = s->kb[i0 + (i - i0 + shift) % (i1 - i0)].node;
                    s->map[x] = y;
                    s->inv[y] = x;
                    (void)weft__heap64_push(&s->heap, degree_key(s, x));
                }
                i0 = i1;
            }
        }
    }
    for (uint32_t v = 0; v < n; v++) {
        if (s->map[v] != NONE)
            continue;
        if (s->inv[v] != NONE)
            return false;
        s->map[v] = s->inv[v] = v;
    }
    for (uint32_t v = 0; v < n; v++)
        if (weft_topo_node_kind(s->t, (weft_node_id){v}) !=
            weft_topo_node_kind(s->t, (weft_node_id){s->map[v]}))
            return false;
    uint32_t m = weft_topo_num_links(s->t);
    for (uint32_t l = 0; l < m; l++) {
        uint32_t u = weft_topo_link_src(s->t, (weft_link_id){l}).v;
        uint32_t v = weft_topo_link_dst(s->t, (weft_link_id){l}).v;
        if (!has_link(s, s->map[u], s->map[v], s->w[l]))
            return false;
    }
    return true;
}

/* Builds a node permutation with r0 -> r by matching neighbours outward
 * (same colour and link weight; equal candidates paired in id order
 * rotated by shift), then checks that it maps every link onto a link of
 * the same weight. */
static bool try_automorphism(search *s, uint32_t r0, uint32_t r, uint32_t shift)
{
    uint32_t n = s->n;
    for (uint32_t v = 0; v < n; v++)
        s->map[v] = s->inv[v] = NONE;
    s->map[r0] = r;
    s->inv[r] = r0;
    s->heap.n = 0; /* what a failed extension left queued */
    (void)weft__heap64_push(&s->heap, degree_key(s, r0));
    return extend_and_verify(s, shift);
}

static uint32_t find(uint32_t *parent, uint32_t v)
{
    while (parent[v] != v) {
        parent[v] = parent[parent[v]];
        v = parent[v];
    }
    return v;
}

static void unite(uint32_t *parent, uint32_t a, uint32_t b)
{
    a = find(parent, a);
    b = find(parent, b);
    if (a != b) {
        if (a < b)
            parent[b] = a;
        else
            parent[a] = b;
    }
}

/* A search on t with weights w: its maps, heap and neighbour lists (the
 * latter of the most links into or out of one node, at least 1).
 * search_fini frees them, also after a failure here (WEFT_ENOMEM). */
static weft_err search_init(search *s, const weft_topo *t, const int64_t *w)
{
    uint32_t n = weft_topo_num_nodes(t), maxdeg = 1;
    for (uint32_t v = 0; v < n; v++) {
        uint32_t first, count, cin;
        weft_topo_out_links(t, (weft_node_id){v}, &first, &count);
        weft_topo_in_links(t, (weft_node_id){v}, &cin);
        if (count > maxdeg)
            maxdeg = count;
        if (cin > maxdeg)
            maxdeg = cin;
    }
    *s = (search){.t = t, .w = w, .n = n};
    s->map = weft__malloc((size_t)n * sizeof *s->map);
    s->inv = weft__malloc((size_t)n * sizeof *s->inv);
    weft__heap64_init(&s->heap);
    s->ka = weft__malloc((size_t)maxdeg * sizeof *s->ka);
    s->kb = weft__malloc((size_t)maxdeg * sizeof *s->kb);
    return s->map && s->inv && !weft__heap64_reserve(&s->heap, n) && s->ka && s->kb ? WEFT_OK
                                                                                    : WEFT_ENOMEM;
}

static void search_fini(search *s)
{
    weft__free(s->map);
    weft__free(s->inv);
    weft__heap64_fini(&s->heap);
    weft__free(s->ka);
    weft__free(s->kb);
}

/* Merges rank orbits through verified automorphisms. Each rank is tried
 * against the anchors of its colour class (earlier ranks that joined no
 * earlier anchor) until one maps onto it, and becomes an anchor itself if
 * none does; a verified map merges every node with its image (so one map
 * often merges many ranks at once). A class gives up after MAX_FAILURES
 * failed candidates, and the whole search after a budget that shrinks with
 * the fabric's size: ranks not merged stay apart, which costs max-flows,
 * never correctness. */
#define MAX_FAILURES 64

static weft_err search_orbits(const weft_topo *t, const int64_t *w, weft__orbits *o)
{
    uint32_t nl = weft_topo_num_links(t);
    uint32_t n = weft_topo_num_nodes(t), nr = weft_topo_num_ranks(t);
    search s;
    weft_err e = search_init(&s, t, w);
    uint32_t *color = weft__malloc((size_t)n * sizeof *color);
    uint32_t *parent = weft__malloc((size_t)n * sizeof *parent);
    uint32_t *next_anchor = weft__malloc((size_t)n * sizeof *next_anchor);
    keyed *scratch = weft__malloc((size_t)n * sizeof *scratch);
    if (e || !color || !parent || !next_anchor || !scratch) {
        e = WEFT_ENOMEM;
        goto free_scratch;
    }
    refine(t, w, color, scratch);
    /* Each failed candidate costs O((V + E) log E): bound their total so
     * that the search stays a small part of the bound on any fabric. */
    uint64_t size = (uint64_t)n + weft_topo_num_links(t);
    uint32_t max_total_failures = (uint32_t)(200000000u / size);
    if (max_total_failures < 256)
        max_total_failures = 256;
    s.color = color;
    for (uint32_t v = 0; v < n; v++)
        parent[v] = v;
    /* Per colour: a list of anchors (ranks not merged with any earlier
     * anchor) and a count of failed candidates. scratch is free again after
     * refinement: .node heads the anchor list, .key counts failures. */
    for (uint32_t v = 0; v < n; v++) {
        scratch[v].node = NONE;
        scratch[v].key = 0;
        next_anchor[v] = NONE;
    }
    for (uint32_t r = 0; r < nr; r++) {
        uint32_t rv = weft_topo_rank_node(t, (weft_rank){r}).v;
        keyed *cls = &scratch[color[rv]];
        bool merged = false;
        uint32_t last = NONE;
        for (uint32_t a = cls->node; a != NONE && !merged; last = a, a = next_anchor[a]) {
            if (find(parent, a) == find(parent, rv)) {
                merged = true;
                break;
            }
            if (cls->key >= MAX_FAILURES || o->tried - o->found >= max_total_failures)
                continue;
            o->tried++;
            if (try_automorphism(&s, a, rv, 1) || try_automorphism(&s, a, rv, 0)) {
                o->found++;
                for (uint32_t v = 0; v < n; v++)
                    unite(parent, v, s.map[v]);
                /* The generator's link map: l = (u, v) goes to the link
                 * (map u, map v), which verification showed exists. */
                for (uint32_t l = 0; o->link_of && l < nl; l++) {
                    weft_link_id img;
                    if (weft_topo_find_link(
                            t, (weft_node_id){s.map[weft_topo_link_src(t, (weft_link_id){l}).v]},
                            (weft_node_id){s.map[weft_topo_link_dst(t, (weft_link_id){l}).v]},
                            &img))
                        unite(o->link_of, l, img.v);
                }
                merged = true;
            } else {
                cls->key++;
            }
        }
        if (!merged) {
            if (last == NONE)
                cls->node = rv;
            else
                next_anchor[last] = rv;
        }
    }
    /* Representatives: the smallest rank of each orbit. */
    uint32_t *rep_of_root = s.map; /* reuse: root node -> representative rank */
    for (uint32_t v = 0; v < n; v++)
        rep_of_root[v] = NONE;
    o->n_reps = 0;
    for (uint32_t r = 0; r < nr; r++) {
        uint32_t root = find(parent, weft_topo_rank_node(t, (weft_rank){r}).v);
        if (rep_of_root[root] == NONE) {
            rep_of_root[root] = r;
            o->reps[o->n_reps++] = r;
        }
        o->rank_of[r] = rep_of_root[root];
    }
    for (uint32_t l = 0; o->link_of && l < nl; l++)
        o->link_of[l] = find(o->link_of, l);
free_scratch:
    weft__free(color);
    weft__free(parent);
    weft__free(next_anchor);
    weft__free(scratch);
    search_fini(&s);
    return e;
}

static weft_err compute(const weft_topo *t, const int64_t *w, bool search_on, bool links,
                        weft__orbits *out)
{
    uint32_t nr = weft_topo_num_ranks(t), nl = weft_topo_num_links(t);
    weft__orbits o;
    memset(&o, 0, sizeof o);
    o.reps = weft__malloc((size_t)nr * sizeof *o.reps);
    o.rank_of = weft__malloc((size_t)nr * sizeof *o.rank_of);
    if (links)
        o.link_of = weft__malloc(((size_t)nl + 1) * sizeof *o.link_of);
    if (!o.reps || !o.rank_of || (links && !o.link_of)) {
        weft__orbits_fini(&o);
        return WEFT_ENOMEM;
    }
    for (uint32_t l = 0; links && l < nl; l++)
        o.link_of[l] = l;
    for (uint32_t r = 0; r < nr; r++) {
        o.reps[r] = r;
        o.rank_of[r] = r;
    }
    o.n_reps = nr;
    if (search_on && nr > 1) {
        weft_err e = search_orbits(t, w, &o);
        if (e) {
            weft__orbits_fini(&o);
            return e;
        }
    }
    *out = o;
    return WEFT_OK;
}

weft_err weft__orbits_compute(const weft_topo *t, const int64_t *w, bool search_on,
                              weft__orbits *out)
{
    return compute(t, w, search_on, false, out);
}

weft_err weft__orbits_compute_links(const weft_topo *t, const int64_t *w, bool search_on,
                                    weft__orbits *out)
{
    return compute(t, w, search_on, true, out);
}

/* ---- A regular group of rank maps (the optimal all-to-all plan) ---------- */

void weft__rank_maps_fini(weft__rank_maps *rm)
{
    weft__free(rm->node_map);
    weft__free(rm->link_of);
    rm->node_map = NULL;
    rm->link_of = NULL;
}

/* Seeds s->map with the given map of the nodes in `from` onto `to` (count
 * of each), extends it and verifies it. True when it is an automorphism;
 * its node map is then in s->map. */
static bool seeded_automorphism(search *s, const uint32_t *from, const uint32_t *to, uint32_t count)
{
    for (uint32_t shift = 0; shift < 2; shift++) {
        bool clash = false;
        s->heap.n = 0; /* what a failed extension left queued */
        for (uint32_t v = 0; v < s->n; v++)
            s->map[v] = s->inv[v] = NONE;
        for (uint32_t i = 0; i < count && !clash; i++) {
            if (s->map[from[i]] != NONE || s->inv[to[i]] != NONE ||
                s->color[from[i]] != s->color[to[i]]) {
                clash = true;
                break;
            }
            s->map[from[i]] = to[i];
            s->inv[to[i]] = from[i];
            (void)weft__heap64_push(&s->heap, degree_key(s, from[i]));
        }
        if (clash)
            return false;
        if (extend_and_verify(s, shift))
            return true;
    }
    return false;
}

/* True when applying map `g` `k` times is the identity (scratch: n). */
static bool has_order(const uint32_t *g, uint32_t n, uint32_t k, uint32_t *scratch)
{
    for (uint32_t v = 0; v < n; v++)
        scratch[v] = v;
    for (uint32_t i = 0; i < k; i++)
        for (uint32_t v = 0; v < n; v++)
            scratch[v] = g[scratch[v]];
    for (uint32_t v = 0; v < n; v++)
        if (scratch[v] != v)
            return false;
    return true;
}

/* Unites every link l with its image under node map g. */
static void unite_links(const weft_topo *t, const uint32_t *g, uint32_t *link_of)
{
    uint32_t m = weft_topo_num_links(t);
    for (uint32_t l = 0; l < m; l++) {
        weft_link_id img;
        if (weft_topo_find_link(t, (weft_node_id){g[weft_topo_link_src(t, (weft_link_id){l}).v]},
                                (weft_node_id){g[weft_topo_link_dst(t, (weft_link_id){l}).v]},
                                &img))
            unite(link_of, l, img.v);
    }
}

/* The candidates (see orbits.h): A moves host h's i-th node (in node order)
 * to host h+1's (mod B), C the i-th rank of every host to its (i+1)-th (mod
 * k); the nodes they leave open (switches shared by hosts, NICs) are matched
 * outward and the whole map checked. Then A^B = C^k = 1, AC = CA and the
 * B k products A^a C^c must take rank 0 to B k = N distinct ranks: the group
 * they generate is then exactly these products, abelian, and regular on
 * the ranks. */
static weft_err find_rank_maps(const weft_topo *t, const int64_t *w, weft__rank_maps *rm,
                               bool *found)
{
    uint32_t n = weft_topo_num_nodes(t), nr = weft_topo_num_ranks(t), nl = weft_topo_num_links(t);
    uint32_t hosts = weft_topo_num_hosts(t);
    *found = false;
    if (hosts == 0)
        hosts = 1; /* no host= anywhere: one box, C only */
    bool any_host = weft_topo_num_hosts(t) > 0;
    /* One node map per rank: give up (no maps, not an error) beyond 2^26
     * entries (256 MiB); 1,024 ranks of h100:128 need 2.2 million. */
    if (nr % hosts || (uint64_t)nr * n > (1u << 26))
        return WEFT_OK;
    uint32_t k = nr / hosts;
    search s;
    weft_err e = search_init(&s, t, w);
    uint32_t *color = weft__malloc((size_t)n * sizeof *color);
    keyed *scratch = weft__malloc((size_t)n * sizeof *scratch);
    uint32_t *A = weft__malloc((size_t)n * sizeof *A), *C = weft__malloc((size_t)n * sizeof *C);
    uint32_t *from = weft__malloc((size_t)n * sizeof *from);
    uint32_t *to = weft__malloc((size_t)n * sizeof *to);
    uint32_t *per_host = weft__calloc((size_t)hosts + 1, sizeof *per_host);
    uint32_t *tmp = weft__malloc((size_t)n * sizeof *tmp);
    weft__rank_maps out = {.nr = nr, .n = n, .rep = 0};
    out.node_map = weft__malloc((size_t)nr * n * sizeof *out.node_map);
    out.link_of = weft__malloc(((size_t)nl + 1) * sizeof *out.link_of);
    if (e || !color || !scratch || !A || !C || !from || !to || !per_host || !tmp || !out.node_map ||
        !out.link_of) {
        e = WEFT_ENOMEM;
        goto free_scratch;
    }
    refine(t, w, color, scratch);
    s.color = color;
    /* Host h's nodes in node order: their index within the host. */
    uint32_t *index = tmp;
    bool ok = true;
    for (uint32_t v = 0; v < n && ok; v++) {
        int32_t h = weft_topo_node_host(t, (weft_node_id){v});
        if (h < 0) {
            ok = !weft_topo_node_rank(t, (weft_node_id){v}, &(weft_rank){0}) || !any_host;
            index[v] = NONE;
            continue;
        }
        index[v] = per_host[h]++;
    }
    for (uint32_t h = 1; h < hosts && ok; h++)
        ok = per_host[h] == per_host[0];
    /* A: host h's i-th node to host h+1's. */
    for (uint32_t v = 0; v < n; v++)
        A[v] = v;
    if (ok && any_host && hosts > 1) {
        /* slot[(h, i)] -> node, through `to` as a table of hosts x per_host. */
        uint32_t per = per_host[0], cnt = 0;
        uint32_t *node_at = weft__malloc(((size_t)hosts * per + 1) * sizeof *node_at);
        if (!node_at) {
            e = WEFT_ENOMEM;
            goto free_scratch;
        }
        for (uint32_t v = 0; v < n; v++)
            if (index[v] != NONE)
                node_at[(size_t)weft_topo_node_host(t, (weft_node_id){v}) * per + index[v]] = v;
        for (uint32_t v = 0; v < n; v++)
            if (index[v] != NONE) {
                uint32_t h = (uint32_t)weft_topo_node_host(t, (weft_node_id){v});
                from[cnt] = v;
                to[cnt++] = node_at[(size_t)((h + 1) % hosts) * per + index[v]];
            }
        weft__free(node_at);
        ok = seeded_automorphism(&s, from, to, cnt);
        if (ok)
            memcpy(A, s.map, (size_t)n * sizeof *A);
    }
    /* C: the i-th rank of each host to its (i+1)-th. Ranks of a host in
     * rank order; every host has k of them. */
    for (uint32_t v = 0; v < n; v++)
        C[v] = v;
    if (ok && k > 1) {
        uint32_t cnt = 0;
        for (uint32_t h = 0; h < hosts && ok; h++) {
            uint32_t first = cnt, have = 0;
            for (uint32_t r = 0; r < nr; r++) {
                uint32_t v = weft_topo_rank_node(t, (weft_rank){r}).v;
                int32_t hv = weft_topo_node_host(t, (weft_node_id){v});
                if ((any_host ? hv : 0) != (int32_t)h)
                    continue;
                from[cnt++] = v;
                have++;
            }
            ok = have == k;
            for (uint32_t i = 0; ok && i < k; i++)
                to[first + i] = from[first + (i + 1) % k];
        }
        ok = ok && seeded_automorphism(&s, from, to, cnt);
        if (ok)
            memcpy(C, s.map, (size_t)n * sizeof *C);
    }
    uint32_t B = any_host ? hosts : 1;
    ok = ok && has_order(A, n, B, tmp) && has_order(C, n, k, tmp);
    for (uint32_t v = 0; v < n && ok; v++)
        ok = A[C[v]] == C[A[v]];
    /* The products A^a C^c, each filed under the rank it takes rank 0 to. */
    uint32_t v0 = weft_topo_rank_node(t, (weft_rank){0}).v;
    uint8_t *seen = (uint8_t *)scratch; /* n * 12 bytes >= nr */
    if (ok)
        memset(seen, 0, nr);
    for (uint32_t v = 0; v < n; v++)
        from[v] = v; /* A^a */
    for (uint32_t a = 0; a < B && ok; a++) {
        memcpy(to, from, (size_t)n * sizeof *to); /* A^a C^c */
        for (uint32_t c = 0; c < k && ok; c++) {
            weft_rank r;
            ok = weft_topo_node_rank(t, (weft_node_id){to[v0]}, &r) && !seen[r.v];
            if (!ok)
                break;
            seen[r.v] = 1;
            memcpy(out.node_map + (size_t)r.v * n, to, (size_t)n * sizeof *to);
            for (uint32_t v = 0; v < n; v++)
                to[v] = C[to[v]];
        }
        for (uint32_t v = 0; v < n; v++)
            from[v] = A[from[v]];
    }
    if (ok) {
        for (uint32_t l = 0; l < nl; l++)
            out.link_of[l] = l;
        unite_links(t, A, out.link_of);
        unite_links(t, C, out.link_of);
        for (uint32_t l = 0; l < nl; l++)
            out.link_of[l] = find(out.link_of, l);
        *rm = out;
        out.node_map = NULL;
        out.link_of = NULL;
        *found = true;
    }
free_scratch:
    weft__rank_maps_fini(&out);
    weft__free(color);
    weft__free(scratch);
    weft__free(A);
    weft__free(C);
    weft__free(from);
    weft__free(to);
    weft__free(per_host);
    weft__free(tmp);
    search_fini(&s);
    return e;
}

weft_err weft__rank_maps_compute(const weft_topo *t, const int64_t *w, weft__rank_maps *out,
                                 bool *found)
{
    memset(out, 0, sizeof *out);
    if (weft_topo_num_ranks(t) < 2) {
        *found = false;
        return WEFT_OK;
    }
    return find_rank_maps(t, w, out, found);
}
