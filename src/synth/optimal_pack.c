/* Packing k spanning out-trees per rank (optimal_internal.h).
 *
 * Edmonds' branching theorem, in the constructive form of Lovász: partial
 * trees T_i (multiplicity m_i) on a graph with remaining capacities can all
 * be completed to spanning out-trees iff, with a super-source s joined to a
 * node x_i by capacity m_i and x_i joined to every node of T_i, every rank
 * receives a flow of N k from s. The packing keeps that condition true:
 * each group grows by one edge at a time, taking as many of its copies
 * across the edge as the condition allows and splitting the group when
 * that is fewer than all of them. The theorem guarantees that a group that
 * does not span yet always has an edge admitting at least one copy.
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "synth/optimal_internal.h"

void opt_forest_fini(opt_forest *f)
{
    for (size_t i = 0; i < f->n; i++) {
        weft__free(f->g[i].from);
        weft__free(f->g[i].to);
        weft__free(f->g[i].in);
    }
    weft__free(f->g);
    f->g = NULL;
    f->n = f->cap = 0;
}

/* Rank pairs with their capacity, CSR by tail. */
typedef struct pack_ctx {
    opt_graph *g;
    uint32_t nr;
    uint32_t *start; /* nr + 1 */
    uint32_t *head;
    int64_t *cap; /* units left */
    uint32_t na;
    opt_forest *f;
} pack_ctx;

static int cmp_pair(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

static weft_err build_pairs(pack_ctx *c)
{
    opt_graph *g = c->g;
    size_t n = 0;
    for (size_t i = 0; i < g->ne; i++)
        n += g->e[i].cap > 0;
    uint64_t *keys = weft__malloc((n ? n : 1) * sizeof *keys);
    int64_t *caps = weft__malloc((n ? n : 1) * sizeof *caps);
    c->start = weft__calloc(c->nr + 1, sizeof *c->start);
    c->head = weft__malloc((n ? n : 1) * sizeof *c->head);
    c->cap = weft__malloc((n ? n : 1) * sizeof *c->cap);
    weft_err e = WEFT_OK;
    if (!keys || !caps || !c->start || !c->head || !c->cap) {
        e = WEFT_ENOMEM;
        goto free_keys;
    }
    n = 0;
    for (size_t i = 0; i < g->ne; i++) {
        if (g->e[i].cap <= 0)
            continue;
        weft_rank ru, rv;
        if (!weft_topo_node_rank(g->t, (weft_node_id){g->e[i].u}, &ru) ||
            !weft_topo_node_rank(g->t, (weft_node_id){g->e[i].v}, &rv)) {
            e = WEFT_EINVAL; /* a switch was left: opt_graph_split guarantees not */
            goto free_keys;
        }
        keys[n++] = ((uint64_t)ru.v << 32) | rv.v;
    }
    qsort(keys, n, sizeof *keys, cmp_pair);
    /* Capacities: sum the entries of each pair. */
    uint32_t na = 0;
    for (size_t i = 0; i < n; i++) {
        if (na && keys[na - 1] == keys[i])
            continue;
        keys[na++] = keys[i];
    }
    for (uint32_t a = 0; a < na; a++) {
        caps[a] = 0;
        c->head[a] = (uint32_t)keys[a];
        c->start[(keys[a] >> 32) + 1]++;
    }
    for (size_t i = 0; i < g->ne; i++) {
        if (g->e[i].cap <= 0)
            continue;
        weft_rank ru, rv;
        weft_topo_node_rank(g->t, (weft_node_id){g->e[i].u}, &ru);
        weft_topo_node_rank(g->t, (weft_node_id){g->e[i].v}, &rv);
        uint64_t key = ((uint64_t)ru.v << 32) | rv.v;
        uint32_t lo = 0, hi = na;
        while (hi - lo > 1) {
            uint32_t mid = (lo + hi) / 2;
            if (keys[mid] <= key)
                lo = mid;
            else
                hi = mid;
        }
        caps[lo] += g->e[i].cap;
    }
    for (uint32_t r = 0; r < c->nr; r++)
        c->start[r + 1] += c->start[r];
    memcpy(c->cap, caps, na * sizeof *caps);
    c->na = na;
free_keys:
    weft__free(keys);
    weft__free(caps);
    return e;
}

/* A tentative admission: x copies of group gi gain rank v by arc a. */
typedef struct pack_trial {
    size_t gi;
    uint32_t v, a;
    int64_t x;
} pack_trial;

static weft_err check(pack_ctx *c, const pack_trial *tr, bool *ok)
{
    opt_forest *f = c->f;
    uint32_t nr = c->nr, s = nr;
    uint32_t nodes = nr + 1 + (uint32_t)f->n + 1;
    int64_t need = (int64_t)nr * c->g->k;
    weft_maxflow *mf = NULL;
    weft_err e = weft_maxflow_new(nodes, c->na + (uint32_t)f->n * 4, &mf);
    if (e)
        return e;
    for (uint32_t u = 0; u < nr && !e; u++) {
        for (uint32_t a = c->start[u]; a < c->start[u + 1] && !e; a++) {
            int64_t cap = c->cap[a] - (a == tr->a ? tr->x : 0);
            if (cap > 0)
                e = weft_maxflow_add_arc(mf, u, c->head[a], cap, NULL);
        }
    }
    for (size_t i = 0; i <= f->n && !e; i++) {
        /* i == f->n is the trial's new group: x copies of gi with v. */
        const opt_group *grp = &f->g[i == f->n ? tr->gi : i];
        int64_t m = i == f->n ? tr->x : grp->mult - (i == tr->gi ? tr->x : 0);
        if (m <= 0)
            continue;
        uint32_t xn = nr + 1 + (uint32_t)i;
        e = weft_maxflow_add_arc(mf, s, xn, m, NULL);
        for (uint32_t v = 0; v < nr && !e; v++)
            if (grp->in[v] || (i == f->n && v == tr->v))
                e = weft_maxflow_add_arc(mf, xn, v, need, NULL);
    }
    if (!e)
        e = weft_maxflow_freeze(mf);
    *ok = true;
    for (uint32_t v = 0; v < nr && !e && *ok; v++) {
        int64_t val;
        e = weft_maxflow_run(mf, c->g->algo, s, v, need, &val);
        c->g->maxflows++;
        if (!e && val < need)
            *ok = false;
    }
    weft_maxflow_free(mf);
    return e;
}

/* Appends a group; a copy of group `copy` (its edges and nodes) unless copy
 * is SIZE_MAX. f->g may move. */
static weft_err new_group(opt_forest *f, uint32_t nr, uint32_t root, int64_t mult, size_t copy)
{
    if (weft__grow((void **)&f->g, &f->cap, f->n + 1, sizeof *f->g))
        return WEFT_ENOMEM;
    const opt_group *copy_of = copy == SIZE_MAX ? NULL : &f->g[copy];
    opt_group *g = &f->g[f->n];
    memset(g, 0, sizeof *g);
    size_t room = nr > 1 ? nr - 1 : 1;
    g->from = weft__malloc(room * sizeof *g->from);
    g->to = weft__malloc(room * sizeof *g->to);
    g->in = weft__calloc(nr, 1);
    f->n++; /* counted now so that opt_forest_fini frees a partial group */
    if (!g->from || !g->to || !g->in)
        return WEFT_ENOMEM;
    g->root = root;
    g->mult = mult;
    if (copy_of) {
        g->n_edges = copy_of->n_edges;
        memcpy(g->from, copy_of->from, copy_of->n_edges * sizeof *g->from);
        memcpy(g->to, copy_of->to, copy_of->n_edges * sizeof *g->to);
        memcpy(g->in, copy_of->in, nr);
    } else {
        g->in[root] = 1;
    }
    return WEFT_OK;
}

/* Grows group gi by one edge; *grown false when no edge admits a copy. */
static weft_err grow_group(pack_ctx *c, size_t gi, bool *grown)
{
    *grown = false;
    opt_group *grp = &c->f->g[gi];
    /* Tails in order of joining: the root, then each edge's child. */
    for (uint32_t j = 0; j <= grp->n_edges; j++) {
        uint32_t u = j == 0 ? grp->root : grp->to[j - 1];
        for (uint32_t a = c->start[u]; a < c->start[u + 1]; a++) {
            uint32_t v = c->head[a];
            if (grp->in[v] || c->cap[a] <= 0)
                continue;
            int64_t hi = grp->mult < c->cap[a] ? grp->mult : c->cap[a];
            pack_trial tr = {gi, v, a, hi};
            bool ok;
            weft_err e = check(c, &tr, &ok);
            if (e)
                return e;
            if (!ok) {
                int64_t lo = 0;
                hi--;
                while (lo < hi) {
                    tr.x = lo + (hi - lo + 1) / 2;
                    e = check(c, &tr, &ok);
                    if (e)
                        return e;
                    if (ok)
                        lo = tr.x;
                    else
                        hi = tr.x - 1;
                }
                tr.x = lo;
            }
            if (tr.x == 0)
                continue;
            if (tr.x < grp->mult) {
                e = new_group(c->f, c->nr, grp->root, grp->mult - tr.x, gi);
                if (e)
                    return e;
                grp = &c->f->g[gi]; /* the array may have moved */
                grp->mult = tr.x;
            }
            grp->from[grp->n_edges] = u;
            grp->to[grp->n_edges] = v;
            grp->n_edges++;
            grp->in[v] = 1;
            c->cap[a] -= tr.x;
            *grown = true;
            return WEFT_OK;
        }
    }
    return WEFT_OK;
}

weft_err opt_pack(opt_graph *g, opt_forest *out, weft_diag *d)
{
    pack_ctx c = {.g = g, .nr = g->nr, .f = out};
    memset(out, 0, sizeof *out);
    weft_err e = build_pairs(&c);
    for (uint32_t r = 0; r < c.nr && !e; r++)
        e = new_group(out, c.nr, r, g->k, SIZE_MAX);
    /* Groups split off are appended and grown in their turn. */
    for (size_t gi = 0; gi < out->n && !e; gi++) {
        while (!e && out->g[gi].n_edges + 1 < c.nr) {
            bool grown;
            e = grow_group(&c, gi, &grown);
            if (!e && !grown) {
                e = weft_diag_set(d, WEFT_ETOPO,
                                  "optimal: tree packing is stuck at rank %u's trees after %u "
                                  "edges (the connectivity condition should rule this out)",
                                  out->g[gi].root, out->g[gi].n_edges);
                goto fail;
            }
        }
    }
    if (e) {
        weft_diag_code(d, e);
        goto fail;
    }
    weft__free(c.start);
    weft__free(c.head);
    weft__free(c.cap);
    return WEFT_OK;
fail:
    weft__free(c.start);
    weft__free(c.head);
    weft__free(c.cap);
    opt_forest_fini(out);
    return e;
}
