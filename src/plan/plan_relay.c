/* Routes made explicit as rank-to-rank hops (weft_plan_relay_routes in
 * weft/plan.h): the form of a routed plan that a runtime without routes
 * (MSCCL, whose steps name only the peer GPU) executes on the same links.
 *
 * Two passes over the ops. The first finds K, the least common multiple of
 * the denominators of every path share, and for every op its pieces (one
 * per path) and hops (one per stretch of a path between ranks), so that
 * every new op id, and the scratch each relay rank needs, are known before
 * anything is added (deps may point forward). The second adds the ops:
 * every slot index times K (all the buffer layouts of weft/plan.h are
 * linear in C, so slot i*K+q of the refined plan is piece q of slot i, the
 * same chunk refined), each piece's hops chained through fresh scratch
 * slots of the relays (appended after the old scratch, times K), the
 * first hop of a piece waiting for the old deps' last hops, every later
 * hop for the one before it. A hop keeps the stretch of its path as its
 * route (share 1), so the link loads, and the plan's cost, are unchanged.
 *
 * Time and memory O(ops + deps x pieces + path nodes); the new plan holds
 * ops x pieces x hops ops. */
#include <inttypes.h>
#include <string.h>

#include "base/alloc.h"
#include "base/intmath.h"
#include "weft/plan.h"

/* Refinements beyond this are refused: the slots grow K-fold. */
#define RELAY_MAX_REFINE 1024u

typedef struct relay_ctx {
    const weft_plan *p;
    const weft_topo *t;
    weft_diag *d;
    uint32_t nops;
    uint32_t *base;     /* nops + 1: first new id of each old op */
    uint32_t *fin_off;  /* nops + 1: offsets of each op's last hops in fin */
    uint32_t *fin;      /* new ids of every op's last hops (one per piece) */
    uint64_t *relay_at; /* per rank: relay scratch slots handed out */
    uint32_t *nodes;    /* scratch: ranks along one path, UINT32_MAX elsewhere */
    uint32_t nodes_cap;
    uint32_t *deps; /* scratch: the deps of one first hop */
    size_t deps_cap;
    const char **names; /* scratch: one stretch's node names */
    uint32_t names_cap;
} relay_ctx;

/* The rank of every node of path k of op id into c->nodes
 * (UINT32_MAX for a node that is no rank); the path's length. */
static weft_err path_ranks(relay_ctx *c, uint32_t id, uint32_t k, uint32_t *len)
{
    uint32_t n = weft_plan_path_len(c->p, id, k);
    if (n > c->nodes_cap) {
        uint32_t *v = weft__realloc_array(c->nodes, n, sizeof *v);
        const char **w = weft__realloc_array(c->names, n, sizeof *w);
        if (v)
            c->nodes = v;
        if (w)
            c->names = w;
        if (!v || !w)
            return weft_diag_code(c->d, WEFT_ENOMEM);
        c->nodes_cap = c->names_cap = n;
    }
    for (uint32_t i = 0; i < n; i++) {
        const char *name = weft_plan_path_node(c->p, id, k, i);
        weft_node_id v;
        weft_rank r;
        if (!weft_topo_find_node(c->t, name, &v))
            return weft_diag_set(c->d, WEFT_ETOPO,
                                 "op %" PRIu32 " path %" PRIu32 ": unknown node '%s'", id, k, name);
        c->nodes[i] = weft_topo_node_rank(c->t, v, &r) ? r.v : UINT32_MAX;
    }
    *len = n;
    return WEFT_OK;
}

/* Hops of path k of op id: one more than the ranks strictly inside it. */
static weft_err path_hops(relay_ctx *c, uint32_t id, uint32_t k, uint32_t *hops)
{
    uint32_t n;
    weft_err e = path_ranks(c, id, k, &n);
    if (e)
        return e;
    *hops = 1;
    for (uint32_t i = 1; i + 1 < n; i++)
        *hops += c->nodes[i] != UINT32_MAX;
    return WEFT_OK;
}

/* Whether op id is routed in a way the plan without routes would not
 * repeat: several paths, or a path through another rank. */
static weft_err needs_relay(relay_ctx *c, uint32_t id, bool *out)
{
    uint32_t np = weft_plan_op_num_paths(c->p, id), hops = 1;
    weft_err e = np == 1 ? path_hops(c, id, 0, &hops) : WEFT_OK;
    *out = np > 1 || hops > 1;
    return e;
}

/* Piece k of op id: its slots, exactly share x count x K of them. */
static uint32_t piece_count(const weft_plan *p, uint32_t id, uint32_t k, uint32_t K)
{
    weft_rat s = weft_plan_path_share(p, id, k);
    return (uint32_t)((uint64_t)s.num * weft_plan_op(p, id).count * K / (uint64_t)s.den);
}

/* Pass one: K, the new ids, the last hops and the relays' scratch. */
static weft_err plan_ids(relay_ctx *c, uint32_t *K_out, uint64_t *relay_max, bool *any)
{
    const weft_plan *p = c->p;
    uint64_t K = 1;
    *any = false;
    for (uint32_t id = 0; id < c->nops; id++) {
        uint32_t np = weft_plan_op_num_paths(p, id);
        bool need = false;
        weft_err e = needs_relay(c, id, &need);
        if (e)
            return e;
        *any = *any || need;
        weft_rat sum = weft_rat_int(0); /* the shares must sum to 1 */
        bool over = false;
        for (uint32_t k = 0; k < np && need; k++) {
            weft_rat s = weft_plan_path_share(p, id, k);
            if (s.num <= 0 || s.den <= 0)
                return weft_diag_set(c->d, WEFT_EINVAL,
                                     "op %" PRIu32 " path %" PRIu32 ": a share must be positive",
                                     id, k);
            /* Piece k moves share x count x K slots: K needs only the
             * part of the denominator that count does not cover. */
            uint64_t count = weft_plan_op(p, id).count;
            uint64_t part = (uint64_t)s.den / weft__gcd64((uint64_t)s.den, count ? count : 1);
            uint64_t g = weft__gcd64(K, part);
            if (K / g * part > RELAY_MAX_REFINE)
                return weft_diag_set(c->d, WEFT_ELIMIT,
                                     "the route shares would cut every chunk into more than "
                                     "%u equal pieces (op %" PRIu32 " path %" PRIu32
                                     " carries %" PRId64 "/%" PRId64 ")",
                                     RELAY_MAX_REFINE, id, k, s.num, s.den);
            K = K / g * part;
            /* A sum past int64 (exact in weft_rat_add) is far from 1. */
            over = over || weft_rat_add(sum, s, &sum) != WEFT_OK;
        }
        if (need && (over || !weft_rat_eq(sum, weft_rat_int(1))))
            return weft_diag_set(c->d, WEFT_EINVAL,
                                 "op %" PRIu32 ": the shares of its paths "
                                 "do not sum to 1",
                                 id);
    }
    *K_out = (uint32_t)K;
    uint64_t next = 0, nfin = 0;
    *relay_max = 0;
    for (uint32_t id = 0; id < c->nops; id++) {
        c->base[id] = (uint32_t)next;
        c->fin_off[id] = (uint32_t)nfin;
        bool need = false;
        weft_err e = needs_relay(c, id, &need);
        if (e)
            return e;
        if (!need) {
            next++;
            nfin++;
            continue;
        }
        uint32_t np = weft_plan_op_num_paths(c->p, id);
        for (uint32_t k = 0; k < np; k++) {
            uint32_t n;
            if ((e = path_ranks(c, id, k, &n)))
                return e;
            uint32_t cnt = piece_count(p, id, k, (uint32_t)K);
            next++;
            for (uint32_t i = 1; i + 1 < n; i++)
                if (c->nodes[i] != UINT32_MAX) {
                    uint64_t *at = &c->relay_at[c->nodes[i]];
                    *at += cnt;
                    if (*at > *relay_max)
                        *relay_max = *at;
                    next++;
                }
            nfin++;
        }
        if (next >= WEFT_PLAN_MAX_OPS)
            return weft_diag_set(c->d, WEFT_ELIMIT, "the relayed plan would exceed %" PRIu32 " ops",
                                 (uint32_t)WEFT_PLAN_MAX_OPS);
    }
    c->base[c->nops] = (uint32_t)next;
    c->fin_off[c->nops] = (uint32_t)nfin;
    c->fin = weft__malloc((nfin ? nfin : 1) * sizeof *c->fin);
    if (!c->fin)
        return weft_diag_code(c->d, WEFT_ENOMEM);
    /* The last hop of every piece, in id order. */
    for (uint32_t id = 0; id < c->nops; id++) {
        uint32_t at = c->base[id], f = c->fin_off[id];
        bool need = false;
        weft_err e = needs_relay(c, id, &need);
        if (e)
            return e;
        if (!need) {
            c->fin[f] = at;
            continue;
        }
        for (uint32_t k = 0; k < weft_plan_op_num_paths(c->p, id); k++) {
            uint32_t hops;
            if ((e = path_hops(c, id, k, &hops)))
                return e;
            at += hops;
            c->fin[f++] = at - 1;
        }
    }
    return WEFT_OK;
}

/* The deps of a first hop of op id: the last hops of each of its deps. */
static weft_err first_deps(relay_ctx *c, uint32_t id, uint32_t *n_out)
{
    uint32_t nd = 0, n = 0;
    const uint32_t *deps = weft_plan_op_deps(c->p, id, &nd);
    for (uint32_t k = 0; k < nd; k++) {
        uint32_t y = deps[k];
        if (y >= c->nops)
            return weft_diag_set(c->d, WEFT_EINVAL,
                                 "op %" PRIu32 " depends on op %" PRIu32 ", which does not exist",
                                 id, y);
        for (uint32_t j = c->fin_off[y]; j < c->fin_off[y + 1]; j++) {
            if (weft__grow((void **)&c->deps, &c->deps_cap, (size_t)n + 1, sizeof *c->deps))
                return weft_diag_code(c->d, WEFT_ENOMEM);
            c->deps[n++] = c->fin[j];
        }
    }
    *n_out = n;
    return WEFT_OK;
}

/* Adds a hop: op o with deps, and the stretch names[0..n) as its route. */
static weft_err add_hop(relay_ctx *c, weft_plan *q, const weft_op *o, const uint32_t *deps,
                        uint32_t nd, uint32_t n)
{
    uint32_t id;
    weft_err e = weft_plan_add_op(q, o, deps, nd, &id);
    if (!e)
        e = weft_plan_add_path(q, id, (weft_rat){1, 1}, c->names, n);
    return e ? weft_diag_code(c->d, e) : WEFT_OK;
}

/* Pass two: op id's pieces and hops, or the op refined. */
static weft_err add_op(relay_ctx *c, weft_plan *q, uint32_t id, uint32_t K, uint32_t scratch0)
{
    const weft_plan *p = c->p;
    weft_op o = weft_plan_op(p, id);
    uint32_t nd = 0;
    weft_err e = first_deps(c, id, &nd);
    if (e)
        return e;
    bool need = false;
    if ((e = needs_relay(c, id, &need)))
        return e;
    if ((uint64_t)o.src_index * K + (uint64_t)o.count * K > WEFT_PLAN_MAX_SLOTS ||
        (uint64_t)o.dst_index * K + (uint64_t)o.count * K > WEFT_PLAN_MAX_SLOTS)
        return weft_diag_set(c->d, WEFT_ELIMIT,
                             "op %" PRIu32 ": its slots cut %" PRIu32 "-fold pass %u slots", id, K,
                             (unsigned)WEFT_PLAN_MAX_SLOTS);
    weft_op r = o;
    r.src_index = o.src_index * K;
    r.dst_index = o.dst_index * K;
    r.count = o.count * K;
    if (!need) {
        uint32_t nid;
        if ((e = weft_plan_add_op(q, &r, c->deps, nd, &nid)))
            return weft_diag_code(c->d, e);
        for (uint32_t k = 0; k < weft_plan_op_num_paths(p, id); k++) {
            uint32_t n;
            if ((e = path_ranks(c, id, k, &n)))
                return e;
            for (uint32_t i = 0; i < n; i++)
                c->names[i] = weft_plan_path_node(p, id, k, i);
            if ((e = weft_plan_add_path(q, nid, weft_plan_path_share(p, id, k), c->names, n)))
                return weft_diag_code(c->d, e);
        }
        return WEFT_OK;
    }
    uint32_t off = 0;
    for (uint32_t k = 0; k < weft_plan_op_num_paths(p, id); k++) {
        uint32_t n, cnt = piece_count(p, id, k, K);
        if ((e = path_ranks(c, id, k, &n)))
            return e;
        /* The piece's source, then each relay's scratch, then its
         * destination. */
        weft_rank at_rank = o.src_rank;
        weft_buf at_buf = o.src_buf;
        uint32_t at_index = r.src_index + off, from = 0, prev = UINT32_MAX;
        for (uint32_t i = 1; i < n; i++) {
            if (i + 1 < n && c->nodes[i] == UINT32_MAX)
                continue;
            weft_op h = {.kind = WEFT_OP_COPY,
                         .src_rank = at_rank,
                         .src_buf = at_buf,
                         .src_index = at_index,
                         .count = cnt,
                         .channel = o.channel};
            if (i + 1 < n) { /* to relay rank nodes[i], fresh scratch */
                h.dst_rank = (weft_rank){c->nodes[i]};
                h.dst_buf = WEFT_BUF_SCRATCH;
                h.dst_index = scratch0 + (uint32_t)c->relay_at[c->nodes[i]];
                c->relay_at[c->nodes[i]] += cnt;
            } else {
                h.kind = o.kind;
                h.dst_rank = o.dst_rank;
                h.dst_buf = o.dst_buf;
                h.dst_index = r.dst_index + off;
            }
            for (uint32_t j = from; j <= i; j++)
                c->names[j - from] = weft_plan_path_node(p, id, k, j);
            e = prev == UINT32_MAX ? add_hop(c, q, &h, c->deps, nd, i - from + 1)
                                   : add_hop(c, q, &h, &prev, 1, i - from + 1);
            if (e)
                return e;
            prev = weft_plan_num_ops(q) - 1;
            at_rank = h.dst_rank;
            at_buf = h.dst_buf;
            at_index = h.dst_index;
            from = i;
        }
        off += cnt;
    }
    return WEFT_OK;
}

weft_err weft_plan_relay_routes(const weft_plan *p, const weft_topo *t, weft_plan **out,
                                uint32_t *refine, weft_diag *d)
{
    *out = NULL;
    *refine = 1;
    const weft_plan_info *info = weft_plan_get_info(p);
    if (info->nranks != weft_topo_num_ranks(t))
        return weft_diag_set(d, WEFT_EINVAL, "the plan has %" PRIu32 " ranks, the fabric %" PRIu32,
                             info->nranks, weft_topo_num_ranks(t));
    relay_ctx c = {.p = p, .t = t, .d = d, .nops = weft_plan_num_ops(p)};
    c.base = weft__malloc(((size_t)c.nops + 1) * sizeof *c.base);
    c.fin_off = weft__malloc(((size_t)c.nops + 1) * sizeof *c.fin_off);
    c.relay_at = weft__calloc(info->nranks, sizeof *c.relay_at);
    weft_plan *q = NULL;
    weft_err e = WEFT_OK;
    uint32_t K = 1;
    uint64_t relay_max = 0;
    bool any = false;
    if (!c.base || !c.fin_off || !c.relay_at) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_all;
    }
    if ((e = plan_ids(&c, &K, &relay_max, &any)) || !any)
        goto free_all;
    weft_plan_info qi = *info;
    uint64_t scratch0 = (uint64_t)info->scratch * K, chunks = (uint64_t)info->chunks * K;
    if (scratch0 + relay_max > WEFT_PLAN_MAX_SLOTS || chunks > WEFT_PLAN_MAX_SLOTS) {
        e = weft_diag_set(d, WEFT_ELIMIT,
                          "the relayed plan needs more than %u slots per "
                          "buffer",
                          (unsigned)WEFT_PLAN_MAX_SLOTS);
        goto free_all;
    }
    qi.chunks = (uint32_t)chunks;
    qi.scratch = (uint32_t)(scratch0 + relay_max);
    if ((e = weft_plan_new(&qi, &q))) {
        if (e == WEFT_ELIMIT)
            weft_diag_set(d, e,
                          "the relayed plan (chunks cut %" PRIu32 "-fold, %" PRIu32
                          " scratch slots per rank) exceeds the plan's slot limit",
                          K, qi.scratch);
        else
            weft_diag_code(d, e);
        goto free_all;
    }
    memset(c.relay_at, 0, info->nranks * sizeof *c.relay_at);
    for (uint32_t id = 0; id < c.nops && !e; id++)
        e = add_op(&c, q, id, K, (uint32_t)scratch0);
    if (!e && weft_plan_traffic(p))
        e = weft_plan_set_traffic(q, weft_plan_traffic(p), d);
    if (e)
        goto free_all;
    *out = q;
    q = NULL;
    *refine = K;
free_all:
    weft_plan_free(q);
    weft__free(c.base);
    weft__free(c.fin_off);
    weft__free(c.fin);
    weft__free(c.relay_at);
    weft__free(c.nodes);
    weft__free(c.deps);
    weft__free(c.names);
    return e;
}
