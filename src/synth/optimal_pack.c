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
#include "synth/optimal_cuts.h"
#include "synth/optimal_pack.h"

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
    /* Rank sets met as limiting minimum cuts; a set X's surplus is the
     * capacity entering X minus the multiplicities of the groups whose
     * trees miss X. */
    opt_cuts cuts;
    uint64_t *tree_bits; /* scratch: the growing tree's ranks, then a cut */
    uint8_t *side;       /* scratch for weft_maxflow_source_side */
    size_t side_cap;
} pack_ctx;

static bool meets(const uint64_t *a, const uint64_t *b, uint32_t words)
{
    for (uint32_t w = 0; w < words; w++)
        if (a[w] & b[w])
            return true;
    return false;
}

/* Whether taking the pair u -> v into the tree t lowers the surplus of
 * the set x: v in x, u not in x, x meeting t. */
static bool lowers(const uint64_t *x, const uint64_t *t, uint32_t words, uint32_t u, uint32_t v)
{
    return opt_bit(x, v) && !opt_bit(x, u) && meets(x, t, words);
}

/* The least remembered surplus that taking u -> v into t lowers, or
 * INT64_MAX. */
static int64_t cuts_bound(const pack_ctx *c, const uint64_t *t, uint32_t u, uint32_t v)
{
    const opt_cuts *k = &c->cuts;
    int64_t best = INT64_MAX;
    for (size_t i = 0; i < k->n; i++)
        if (k->surplus[i] < best && lowers(k->bits + i * k->words, t, k->words, u, v))
            best = k->surplus[i];
    return best;
}

/* x copies of the tree t took u -> v. */
static void cuts_admit(pack_ctx *c, const uint64_t *t, uint32_t u, uint32_t v, int64_t x)
{
    opt_cuts *k = &c->cuts;
    for (size_t i = 0; i < k->n; i++)
        if (lowers(k->bits + i * k->words, t, k->words, u, v))
            k->surplus[i] -= x;
}

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

/* The flow network of the packing condition, built once per set of groups
 * and then changed in place (capacities only) as trees grow. Nodes: the
 * ranks 0 .. nr-1, the super-source s = nr, and a node x_j = nr + 1 + j
 * per group. Arcs, in this order:
 *   0 .. na-1                the rank pairs (capacity: units left);
 *   tie + u                  s -> rank u, capacity 0 except while a check
 *                            ties u to the source;
 *   grp + j (nr + 1)         s -> x_j with the group's multiplicity, then
 *                            x_j -> v for every rank v: "infinite" when v
 *                            is in the tree (or while a check ties x_j to
 *                            the sink v), else 0.
 * One arc per (group, rank) wastes a little scanning on the zero arcs but
 * lets a growing tree change a capacity instead of the layout. The layout
 * holds a quarter more group slots than there are groups (all capacities
 * 0 until a split fills one), so splits rarely rebuild it. */
typedef struct pack_net {
    weft_maxflow *mf;
    size_t n_groups; /* group slots the layout holds */
    uint32_t tie, grp;
    int64_t inf;
} pack_net;

static void net_free(pack_net *n)
{
    weft_maxflow_free(n->mf);
    n->mf = NULL;
    n->n_groups = 0;
}

static uint32_t grp_arc(const pack_ctx *c, const pack_net *n, size_t j, uint32_t v)
{
    /* v == nr is the group's source arc. */
    return n->grp + (uint32_t)j * (c->nr + 1) + (v == c->nr ? 0 : v + 1);
}

/* Lays the network out for the current groups and capacities. */
static weft_err net_build(pack_ctx *c, pack_net *n)
{
    opt_forest *f = c->f;
    uint32_t nr = c->nr, s = nr;
    net_free(n);
    size_t slots = f->n + f->n / 4 + 1;
    size_t arcs = (size_t)c->na + nr + slots * (nr + 1);
    if (nr + 1 + slots > UINT32_MAX / 4 || arcs > UINT32_MAX / 4)
        return WEFT_ELIMIT;
    weft_err e = weft_maxflow_new(nr + 1 + (uint32_t)slots, (uint32_t)arcs, &n->mf);
    if (e)
        return e;
    for (uint32_t u = 0; u < nr && !e; u++)
        for (uint32_t a = c->start[u]; a < c->start[u + 1] && !e; a++)
            e = weft_maxflow_add_arc(n->mf, u, c->head[a], c->cap[a], NULL);
    n->tie = c->na;
    for (uint32_t u = 0; u < nr && !e; u++)
        e = weft_maxflow_add_arc(n->mf, s, u, 0, NULL);
    n->grp = c->na + nr;
    for (size_t j = 0; j < slots && !e; j++) {
        const opt_group *grp = j < f->n ? &f->g[j] : NULL;
        uint32_t xj = nr + 1 + (uint32_t)j;
        e = weft_maxflow_add_arc(n->mf, s, xj, grp ? grp->mult : 0, NULL);
        for (uint32_t v = 0; v < nr && !e; v++)
            e = weft_maxflow_add_arc(n->mf, xj, v, grp && grp->in[v] ? n->inf : 0, NULL);
    }
    if (!e)
        e = weft_maxflow_freeze(n->mf);
    if (e) {
        net_free(n);
        return e;
    }
    n->n_groups = slots;
    return WEFT_OK;
}

/* How many copies of group gi can take the rank pair a (u -> v, v not in
 * the tree), exactly, from at most one max-flow. Taking x copies lowers
 * the capacity entering a rank set X by x when v is in X and u is not, and
 * lowers what X must receive by x when X meets none of the tree; so the
 * surplus of X (capacity entering minus the multiplicities of the groups
 * that miss X) falls by x exactly for the sets X with v in X, u not in X
 * and X meeting the tree, and never rises. Their least surplus is the
 * max-flow to v with u tied to the source and x_gi tied to v, minus N k:
 * tying x_gi adds its multiplicity to the sets that miss the tree, which
 * keeps them above any x <= mult. The answer is min(mult, units of the
 * pair, that surplus). A remembered set of surplus 0 answers 0 without a
 * flow; a remembered set of small surplus lowers the flow's limit. */
static weft_err admit(pack_ctx *c, pack_net *n, size_t gi, uint32_t u, uint32_t a, int64_t *x)
{
    const opt_group *grp = &c->f->g[gi];
    uint32_t v = c->head[a], s = c->nr;
    int64_t need = (int64_t)c->nr * c->g->k;
    int64_t hi = grp->mult < c->cap[a] ? grp->mult : c->cap[a];
    int64_t ub = cuts_bound(c, c->tree_bits, u, v);
    if (ub < hi)
        hi = ub;
    *x = 0;
    if (hi <= 0)
        return WEFT_OK;
    uint32_t tu = n->tie + u, tx = grp_arc(c, n, gi, v);
    weft_maxflow_set_cap(n->mf, tu, n->inf);
    weft_maxflow_set_cap(n->mf, tx, n->inf);
    /* A group whose tree holds v adds its multiplicity to every cut (its
     * node must sit on v's side), so it leaves the network for this run
     * and its multiplicity is counted directly: late in the packing most
     * groups hold v, and the flow no longer walks their arcs. */
    int64_t base = 0;
    for (size_t j = 0; j < c->f->n; j++) {
        if (c->f->g[j].in[v]) {
            base += c->f->g[j].mult;
            weft_maxflow_set_cap(n->mf, grp_arc(c, n, j, c->nr), 0);
        }
    }
    int64_t f;
    weft_err e = weft_maxflow_run(n->mf, c->g->algo, s, v, need + hi - base, &f);
    c->g->maxflows++;
    f += base;
    for (size_t j = 0; j < c->f->n; j++)
        if (c->f->g[j].in[v])
            weft_maxflow_set_cap(n->mf, grp_arc(c, n, j, c->nr), c->f->g[j].mult);
    weft_maxflow_set_cap(n->mf, tu, 0);
    weft_maxflow_set_cap(n->mf, tx, 0);
    if (e)
        return e;
    if (f >= need + hi) {
        *x = hi;
        return WEFT_OK;
    }
    /* The run ended below its limit: the ranks that still reach v form a
     * set of surplus f - need that limits this and later admissions. */
    *x = f - need < 0 ? 0 : f - need; /* f >= need: the condition holds */
    uint32_t nn = weft_maxflow_num_nodes(n->mf);
    if (weft__grow((void **)&c->side, &c->side_cap, nn, 1))
        return WEFT_ENOMEM;
    weft_maxflow_source_side(n->mf, c->side);
    uint64_t *xb = c->tree_bits + c->cuts.words;
    memset(xb, 0, c->cuts.words * sizeof *xb);
    for (uint32_t r = 0; r < c->nr; r++)
        if (!c->side[r])
            opt_bit_set(xb, r);
    return opt_cuts_add(&c->cuts, xb, *x);
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

/* Grows group gi by one edge; *grown false when no edge admits a copy.
 * The network is updated in place, or rebuilt when the group splits. */
static weft_err grow_group(pack_ctx *c, pack_net *n, size_t gi, bool *grown)
{
    *grown = false;
    opt_group *grp = &c->f->g[gi];
    memset(c->tree_bits, 0, c->cuts.words * sizeof *c->tree_bits);
    for (uint32_t r = 0; r < c->nr; r++)
        if (grp->in[r])
            opt_bit_set(c->tree_bits, r);
    /* Tails in order of joining: the root, then each edge's child. */
    for (uint32_t j = 0; j <= grp->n_edges; j++) {
        uint32_t u = j == 0 ? grp->root : grp->to[j - 1];
        for (uint32_t a = c->start[u]; a < c->start[u + 1]; a++) {
            uint32_t v = c->head[a];
            if (grp->in[v] || c->cap[a] <= 0)
                continue;
            int64_t x;
            weft_err e = admit(c, n, gi, u, a, &x);
            if (e)
                return e;
            if (x == 0)
                continue;
            cuts_admit(c, c->tree_bits, u, v, x);
            bool split = x < grp->mult;
            if (split) {
                e = new_group(c->f, c->nr, grp->root, grp->mult - x, gi);
                if (e)
                    return e;
                grp = &c->f->g[gi]; /* the array may have moved */
                grp->mult = x;
            }
            grp->from[grp->n_edges] = u;
            grp->to[grp->n_edges] = v;
            grp->n_edges++;
            grp->in[v] = 1;
            c->cap[a] -= x;
            *grown = true;
            size_t nj = c->f->n - 1; /* the group split off, if any */
            if (split && nj >= n->n_groups)
                return net_build(c, n);
            if (split) {
                const opt_group *ng = &c->f->g[nj];
                weft_maxflow_set_cap(n->mf, grp_arc(c, n, nj, c->nr), ng->mult);
                for (uint32_t r = 0; r < c->nr; r++)
                    if (ng->in[r])
                        weft_maxflow_set_cap(n->mf, grp_arc(c, n, nj, r), n->inf);
                weft_maxflow_set_cap(n->mf, grp_arc(c, n, gi, c->nr), x);
            }
            weft_maxflow_set_cap(n->mf, a, c->cap[a]);
            weft_maxflow_set_cap(n->mf, grp_arc(c, n, gi, v), n->inf);
            return WEFT_OK;
        }
    }
    return WEFT_OK;
}

static void ctx_fini(pack_ctx *c, pack_net *net)
{
    net_free(net);
    weft__free(c->start);
    weft__free(c->head);
    weft__free(c->cap);
    opt_cuts_fini(&c->cuts);
    weft__free(c->tree_bits);
    weft__free(c->side);
}

weft_err opt_pack(opt_graph *g, opt_forest *out, weft_diag *d)
{
    pack_ctx c = {.g = g, .nr = g->nr, .f = out};
    pack_net net = {0};
    memset(out, 0, sizeof *out);
    opt_cuts_init(&c.cuts, c.nr);
    weft_err e = build_pairs(&c);
    c.tree_bits = weft__calloc(2 * (size_t)c.cuts.words, sizeof *c.tree_bits);
    if (!e && !c.tree_bits)
        e = WEFT_ENOMEM;
    if (!e) {
        /* Larger than any cut: the ranks' k per root plus every unit. */
        net.inf = (int64_t)c.nr * g->k + 1;
        for (uint32_t a = 0; a < c.na; a++)
            net.inf += c.cap[a];
    }
    for (uint32_t r = 0; r < c.nr && !e; r++)
        e = new_group(out, c.nr, r, g->k, SIZE_MAX);
    if (!e)
        e = net_build(&c, &net);
    /* Groups split off are appended and grown in their turn. */
    for (size_t gi = 0; gi < out->n && !e; gi++) {
        while (!e && out->g[gi].n_edges + 1 < c.nr) {
            bool grown;
            e = grow_group(&c, &net, gi, &grown);
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
    ctx_fini(&c, &net);
    return WEFT_OK;
fail:
    ctx_fini(&c, &net);
    opt_forest_fini(out);
    return e;
}
