/* Trees: NCCL's double binary tree and binomial trees.
 *
 * Double binary tree (as NCCL's src/graph/trees.cc builds it): tree 0 is
 * the binary tree in which node r's parent is found from r's lowest set
 * bit; tree 1 is tree 0 mirrored (r -> n-1-r) when n is even and shifted by
 * one when n is odd, so that the leaves of one tree are interior nodes of
 * the other. As in NCCL, on a fabric with hosts the trees join hosts and
 * each host is a chain of its ranks whose head talks to the other hosts;
 * tree 1 walks the chain in the opposite direction, so its head (and NIC)
 * differs. Each tree carries half of the data on its own channel: allreduce
 * reduces up and broadcasts down, broadcast and reduce use trees re-rooted
 * at the root.
 */
#include <string.h>

#include "base/alloc.h"
#include "synth/classic_internal.h"

#define NONE UINT32_MAX

/* NCCL's binary tree: parent of node r in a tree of n nodes rooted at 0. */
static uint32_t btree_parent(uint32_t n, uint32_t r)
{
    if (r == 0)
        return NONE;
    uint32_t bit = r & (~r + 1);
    uint64_t up = (uint64_t)(r ^ bit) | ((uint64_t)bit << 1);
    if (up >= n)
        up = r ^ bit;
    return (uint32_t)up;
}

/* Parent of node r in tree t (0 or 1) of the double binary tree on n
 * nodes, and the root of tree t. */
static uint32_t dtree_parent(uint32_t n, uint32_t t, uint32_t r)
{
    if (t == 0)
        return btree_parent(n, r);
    if (n % 2) {
        uint32_t u = btree_parent(n, (r + n - 1) % n);
        return u == NONE ? NONE : (u + 1) % n;
    }
    uint32_t u = btree_parent(n, n - 1 - r);
    return u == NONE ? NONE : n - 1 - u;
}

static uint32_t dtree_root(uint32_t n, uint32_t t)
{
    return t == 0 ? 0 : (n % 2 ? 1 % n : n - 1);
}

/* Fills par[rank] for tree t. With hosts: trees over hosts, chains inside.
 * rot_host/rot_local rotate hosts and chains so that a given rank becomes
 * the tree's root (0 for allreduce). An unrooted tree is turned by `shift`
 * more local positions (more ranks without hosts), so that the tree pairs
 * of several channels leave hosts through different ranks (and NICs). */
static void tree_parents(const synth_ctx *c, uint32_t t, uint32_t root_rank, bool rooted,
                         uint32_t shift, uint32_t *par)
{
    const synth_hosts *h = &c->hosts;
    uint32_t n = c->n;
    if (h->per_host > 1) {
        uint32_t H = h->nhosts, L = h->per_host;
        uint32_t rot_host = 0, rot_local = 0;
        if (rooted) {
            /* Tree node x stands for host (x + rot_host) mod H. */
            rot_host = (h->host_of[root_rank] + H - dtree_root(H, t)) % H;
            rot_local = h->local[root_rank];
        } else {
            rot_local = shift % L;
        }
        /* Chain heads: tree 0 starts at local rot_local and walks up, tree 1
         * starts one below and walks down, so the two trees leave a host
         * through different ranks (and NICs). A rooted tree must start at
         * the root, so both start there. */
        uint32_t head = t == 0 || rooted ? rot_local : (rot_local + L - 1) % L;
        for (uint32_t x = 0; x < H; x++) {
            uint32_t host = (x + rot_host) % H;
            uint32_t px = dtree_parent(H, t, x);
            for (uint32_t i = 0; i < L; i++) {
                uint32_t li = t == 0 ? (head + i) % L : (head + L - i) % L;
                uint32_t rank = h->ranks[h->start[host] + li];
                if (i > 0) {
                    uint32_t lp = t == 0 ? (head + i - 1) % L : (head + L - i + 1) % L;
                    par[rank] = h->ranks[h->start[host] + lp];
                } else if (px == NONE) {
                    par[rank] = NONE;
                } else {
                    uint32_t phost = (px + rot_host) % H;
                    par[rank] = h->ranks[h->start[phost] + head];
                }
            }
        }
        return;
    }
    /* Flat: tree node x is rank order[(x + rot) mod n]. */
    uint32_t rot = 0;
    if (rooted) {
        uint32_t at = 0;
        while (c->order[at] != root_rank)
            at++;
        rot = (at + n - dtree_root(n, t)) % n;
    } else {
        rot = shift % n;
    }
    for (uint32_t x = 0; x < n; x++) {
        uint32_t px = dtree_parent(n, t, x);
        par[c->order[(x + rot) % n]] = px == NONE ? NONE : c->order[(px + rot) % n];
    }
}

/* Ranks sorted by depth in the tree given by par (ascending). */
static weft_err by_depth(const uint32_t *par, uint32_t n, uint32_t *sorted)
{
    uint32_t *depth = weft__malloc((size_t)n * sizeof *depth);
    uint32_t *count = weft__calloc((size_t)n + 1, sizeof *count);
    if (!depth || !count) {
        weft__free(depth);
        weft__free(count);
        return WEFT_ENOMEM;
    }
    for (uint32_t v = 0; v < n; v++) {
        uint32_t d = 0;
        for (uint32_t u = v; par[u] != NONE && d <= n; u = par[u])
            d++;
        depth[v] = d;
        count[d + 1 <= n ? d + 1 : n]++;
    }
    for (uint32_t d = 0; d < n; d++)
        count[d + 1] += count[d];
    for (uint32_t v = 0; v < n; v++)
        sorted[count[depth[v]]++] = v;
    weft__free(depth);
    weft__free(count);
    return WEFT_OK;
}

/* Reduce up (deepest first) and/or broadcast down (shallowest first) the
 * tree par, moving slot `index` on `channel`. */
static weft_err tree_phases(synth_emit *e, const uint32_t *par, const uint32_t *sorted, uint32_t n,
                            bool up, bool down, uint32_t index, uint32_t channel)
{
    weft_err err = WEFT_OK;
    for (uint32_t i = n; up && i-- > 0 && !err;) {
        uint32_t v = sorted[i];
        if (par[v] != NONE)
            err = synth_reduce(e, v, par[v], WEFT_BUF_OUT, index, 1, channel, NULL);
    }
    for (uint32_t i = 0; down && i < n && !err; i++) {
        uint32_t v = sorted[i];
        if (par[v] != NONE)
            err = synth_copy(e, par[v], v, WEFT_BUF_OUT, index, 1, channel, NULL);
    }
    return err;
}

weft_err synth_build_dbtree(const synth_ctx *c, weft_plan **out)
{
    uint32_t n = c->n;
    weft_plan *p = NULL;
    bool rooted = c->coll != WEFT_COLL_ALLREDUCE;
    /* Channels: 2 (one tree pair); an allreduce built for nccl may ask
     * for c->param (even) channels, pair j turned by j positions, each
     * channel carrying 1/channels of the data, as NCCL runs its trees on
     * every channel of the communicator. */
    uint32_t channels = !rooted && c->param >= 2 ? c->param & ~1u : 2;
    weft_err err = synth_plan_new(c, channels, 0, &p);
    if (err)
        return err;
    uint32_t *par = weft__malloc((size_t)n * sizeof *par);
    uint32_t *sorted = weft__malloc((size_t)n * sizeof *sorted);
    synth_emit e;
    synth_emit_init(&e, p);
    if (!par || !sorted)
        err = WEFT_ENOMEM;
    bool up = c->coll != WEFT_COLL_BROADCAST, down = c->coll != WEFT_COLL_REDUCE;
    for (uint32_t ch = 0; ch < channels && !err; ch++) {
        tree_parents(c, ch % 2, c->root, rooted, ch / 2, par);
        err = by_depth(par, n, sorted);
        if (!err)
            err = tree_phases(&e, par, sorted, n, up, down, ch, ch);
    }
    weft__free(par);
    weft__free(sorted);
    return synth_finish(err, &e, p, out);
}

weft_err synth_build_binomial(const synth_ctx *c, weft_plan **out)
{
    uint32_t n = c->n;
    weft_plan *p = NULL;
    weft_err err = synth_plan_new(c, 1, 0, &p);
    if (err)
        return err;
    synth_emit e;
    synth_emit_init(&e, p);
    /* Relative position v is rank order[(at + v) mod n], the root at 0. */
    uint32_t at = 0;
    while (c->order[at] != c->root)
        at++;
#define RANK_AT(v) (c->order[(at + (v)) % n])
    for (uint64_t mask = 1; mask < n && !err; mask <<= 1) {
        for (uint32_t v = 0; v < n && !err; v++) {
            if (c->coll == WEFT_COLL_BROADCAST) {
                if (v < mask && v + mask < n)
                    err =
                        synth_copy(&e, RANK_AT(v), RANK_AT(v + mask), WEFT_BUF_OUT, 0, 1, 0, NULL);
            } else if (v % (2 * mask) == mask) {
                err = synth_reduce(&e, RANK_AT(v), RANK_AT(v - mask), WEFT_BUF_OUT, 0, 1, 0, NULL);
            }
        }
    }
#undef RANK_AT
    return synth_finish(err, &e, p, out);
}
