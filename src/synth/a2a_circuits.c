/* Over 900 lines on purpose: one pipeline (relaxed plan, per-OCS Solstice
 * decomposition, prefix choice, emission) whose stages share the ctx struct. */
/* Circuit schedules for an all-to-all on a fabric with optical circuit
 * switches (weft/synth.h, "Circuit schedules"; docs/ocs.md). Starts from
 * the optimal plan of the relaxation (every OCS a switch), decomposes each
 * OCS's port demand into permutations (weft/bvn.h) and keeps the prefix of
 * configurations that minimises the time with the reconfiguration delays;
 * what the kept circuits cannot carry goes over the packet part. Above
 * a2a_optimal in the all-to-all file order (a2a_internal.h).
 *
 * Cost: one optimal plan (the LP), one decomposition per OCS, then each
 * candidate is O(route entries of the relaxed plan + ports^2). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "weft/bvn.h"
#include "weft/paths.h"
#include "weft/synth.h"
#include "weft/traffic.h"

void weft_circuit_opts_init(weft_circuit_opts *o)
{
    memset(o, 0, sizeof *o);
    o->delay_s = -1;
}

void weft_circuit_sched_fini(weft_circuit_sched *s)
{
    weft__free(s->duration_s);
    s->duration_s = NULL;
}

/* One OCS: its ports (the nodes its links join), its port demand and its
 * decomposition, rounds sorted by weight, largest first. */
typedef struct ocs_info {
    uint32_t node;
    uint32_t nports;
    uint32_t *port_node; /* nports */
    double bw;           /* bytes/s of its slowest port */
    double delay_s;
    double *dem; /* nports^2: bytes over circuit (i, j) */
    double *cap; /* nports^2: a candidate's circuit capacity, bytes */
    /* Two decompositions of dem: [DEC_BVN] Birkhoff-von Neumann (weft/bvn.h),
     * rounds ordered by weight, largest first; [DEC_SOLSTICE] large-threshold
     * matchings in the order found. ord[k]: the round of configuration k. */
    weft_bvn dec[2];
    uint32_t *ord[2];
} ocs_info;

enum { P_PACKET = 0, P_CIRCUIT, P_MULTI };
enum { DEC_BVN = 0, DEC_SOLSTICE = 1 };

typedef struct sched_ctx {
    const weft_topo *t;
    const weft_traffic *m;
    const weft_plan *p0;
    weft_diag *d;
    uint32_t nl, nocs;
    ocs_info *ocs;
    uint32_t *ocs_of;  /* node -> index in ocs, or UINT32_MAX */
    uint32_t *port_of; /* node -> its port number on the OCS its link reaches
                          (one OCS per node in the schedule; else multi) */
    bool *skip_link;   /* links of an OCS: carried by circuits */
    double *bwl;       /* link bandwidth, bytes/s */
    /* Paths of the relaxed plan. */
    size_t npaths;
    uint32_t *path_op, *path_k, *path_kind, *path_ocs, *path_from, *path_to;
    double *path_bytes;
    size_t *path_lstart;
    uint32_t *path_nl;
    uint32_t *plink;
    size_t plink_len, plink_cap;
    /* Packet routes of the pairs that may need one: pair s*N+d -> entries. */
    size_t *rstart;
    uint32_t *rlen;
    uint32_t *rlink;
    double *rfrac;
    size_t rlen_total, rcap;
    double *base; /* loads of the packet paths, bytes */
    double *load; /* a candidate's loads */
    weft_topo *packet;
    weft_paths *ppaths;
    bool stranded; /* a candidate left bytes of a pair without a packet path */
    int which;     /* the decomposition candidates use (DEC_*) */
} sched_ctx;

static double rat_d(weft_rat r)
{
    return weft_rat_to_double(r);
}

/* The fabric without its OCSes (names, kinds, hosts and links kept, so
 * ranks keep their numbers and routes their names). */
static weft_err build_packet(sched_ctx *c)
{
    const weft_topo *t = c->t;
    weft_topo_builder *b;
    weft_err e = weft_topo_builder_new(&b);
    if (e)
        return weft_diag_code(c->d, e);
    uint32_t n = weft_topo_num_nodes(t);
    uint32_t *map = weft__malloc((size_t)n * sizeof *map);
    if (!map) {
        weft_topo_builder_free(b);
        return weft_diag_code(c->d, WEFT_ENOMEM);
    }
    for (uint32_t v = 0; v < n && !e; v++) {
        weft_node_id id = {v}, nid;
        map[v] = UINT32_MAX;
        if (weft_topo_node_kind(t, id) == WEFT_NODE_OCS)
            continue;
        int32_t h = weft_topo_node_host(t, id);
        e = weft_topo_builder_add_node(b, weft_topo_node_name(t, id), weft_topo_node_kind(t, id),
                                       h >= 0 ? weft_topo_host_name(t, h) : NULL, &nid);
        map[v] = nid.v;
    }
    for (uint32_t l = 0; l < c->nl && !e; l++) {
        weft_link_id li = {l};
        uint32_t a = weft_topo_link_src(t, li).v, z = weft_topo_link_dst(t, li).v;
        if (map[a] == UINT32_MAX || map[z] == UINT32_MAX)
            continue;
        e = weft_topo_builder_add_link(b, (weft_node_id){map[a]}, (weft_node_id){map[z]},
                                       weft_topo_link_bw(t, li), weft_topo_link_lat(t, li));
    }
    weft__free(map);
    if (!e) {
        e = weft_topo_build(b, &c->packet, c->d); /* consumes b */
    } else {
        weft_diag_code(c->d, e);
        weft_topo_builder_free(b);
    }
    if (!e && (e = weft_paths_new(c->packet, &c->ppaths)))
        weft_diag_code(c->d, e);
    return e;
}

static weft_err find_ocs(sched_ctx *c, const weft_circuit_opts *o)
{
    const weft_topo *t = c->t;
    uint32_t n = weft_topo_num_nodes(t);
    c->ocs_of = weft__malloc((size_t)n * sizeof *c->ocs_of);
    c->port_of = weft__malloc((size_t)n * sizeof *c->port_of);
    c->skip_link = weft__calloc(c->nl ? c->nl : 1, sizeof *c->skip_link);
    c->bwl = weft__malloc((c->nl ? c->nl : 1) * sizeof *c->bwl);
    if (!c->ocs_of || !c->port_of || !c->skip_link || !c->bwl)
        return weft_diag_code(c->d, WEFT_ENOMEM);
    for (uint32_t v = 0; v < n; v++) {
        c->ocs_of[v] = UINT32_MAX;
        c->port_of[v] = UINT32_MAX;
        if (weft_topo_node_kind(t, (weft_node_id){v}) == WEFT_NODE_OCS)
            c->ocs_of[v] = c->nocs++;
    }
    if (!c->nocs)
        return weft_diag_set(c->d, WEFT_EINVAL,
                             "the fabric has no ocs node: circuit schedules need an optical "
                             "circuit switch");
    c->ocs = weft__calloc(c->nocs, sizeof *c->ocs);
    if (!c->ocs)
        return weft_diag_code(c->d, WEFT_ENOMEM);
    for (uint32_t l = 0; l < c->nl; l++) {
        weft_link_id li = {l};
        c->bwl[l] = rat_d(weft_topo_link_bw(t, li)) * 1e9;
        if (c->ocs_of[weft_topo_link_src(t, li).v] != UINT32_MAX ||
            c->ocs_of[weft_topo_link_dst(t, li).v] != UINT32_MAX)
            c->skip_link[l] = true;
    }
    for (uint32_t v = 0; v < n; v++) {
        if (c->ocs_of[v] == UINT32_MAX)
            continue;
        ocs_info *q = &c->ocs[c->ocs_of[v]];
        q->node = v;
        uint32_t first, count;
        weft_topo_out_links(t, (weft_node_id){v}, &first, &count);
        q->port_node = weft__malloc((count ? count : 1) * sizeof *q->port_node);
        q->dem = weft__calloc((size_t)(count ? count : 1) * (count ? count : 1), sizeof *q->dem);
        q->cap = weft__calloc((size_t)(count ? count : 1) * (count ? count : 1), sizeof *q->cap);
        if (!q->port_node || !q->dem || !q->cap)
            return weft_diag_code(c->d, WEFT_ENOMEM);
        q->bw = INFINITY;
        for (uint32_t i = 0; i < count; i++) {
            uint32_t w = weft_topo_link_dst(t, (weft_link_id){first + i}).v;
            q->port_node[q->nports] = w;
            c->port_of[w] = q->nports++;
            if (c->bwl[first + i] < q->bw)
                q->bw = c->bwl[first + i];
        }
        q->delay_s = o->delay_s >= 0
                         ? o->delay_s
                         : rat_d(weft_topo_ocs_reconfig_ns(t, (weft_node_id){v})) * 1e-9;
    }
    return WEFT_OK;
}

/* The packet route of pair (s, d), once. */
static weft_err pair_route(sched_ctx *c, uint32_t s, uint32_t dd)
{
    size_t pr = (size_t)s * c->m->ranks + dd;
    if (c->rstart[pr] != SIZE_MAX)
        return WEFT_OK;
    weft_paths_route rt;
    weft_err e = weft_paths_route_get(c->ppaths, weft_topo_rank_node(c->packet, (weft_rank){s}),
                                      weft_topo_rank_node(c->packet, (weft_rank){dd}), &rt, c->d);
    if (e == WEFT_ETOPO) { /* no packet path: this pair stays on circuits */
        c->rstart[pr] = SIZE_MAX - 1;
        weft_diag_clear(c->d);
        return WEFT_OK;
    }
    if (e)
        return e;
    if (weft__grow((void **)&c->rlink, &c->rcap, c->rlen_total + rt.n, sizeof *c->rlink))
        return weft_diag_code(c->d, WEFT_ENOMEM);
    size_t cap2 = c->rcap;
    double *nf = weft__realloc(c->rfrac, cap2 * sizeof *nf);
    if (!nf)
        return weft_diag_code(c->d, WEFT_ENOMEM);
    c->rfrac = nf;
    for (uint32_t i = 0; i < rt.n; i++) {
        weft_link_id pl = {rt.link[i]}, l;
        weft_node_id a, z;
        weft_topo_find_node(c->t, weft_topo_node_name(c->packet, weft_topo_link_src(c->packet, pl)),
                            &a);
        weft_topo_find_node(c->t, weft_topo_node_name(c->packet, weft_topo_link_dst(c->packet, pl)),
                            &z);
        weft_topo_find_link(c->t, a, z, &l);
        c->rlink[c->rlen_total + i] = l.v;
        c->rfrac[c->rlen_total + i] = rt.fracd[i];
    }
    c->rstart[pr] = c->rlen_total;
    c->rlen[pr] = rt.n;
    c->rlen_total += rt.n;
    return WEFT_OK;
}

/* Reads the relaxed plan's paths: links, bytes, and which OCS hop. */
static weft_err read_paths(sched_ctx *c)
{
    const weft_plan *p = c->p0;
    uint32_t nops = weft_plan_num_ops(p);
    size_t total = 0;
    for (uint32_t i = 0; i < nops; i++)
        total += weft_plan_op_num_paths(p, i);
    size_t np = total ? total : 1;
    c->path_op = weft__malloc(np * sizeof *c->path_op);
    c->path_k = weft__malloc(np * sizeof *c->path_k);
    c->path_kind = weft__malloc(np * sizeof *c->path_kind);
    c->path_ocs = weft__malloc(np * sizeof *c->path_ocs);
    c->path_from = weft__malloc(np * sizeof *c->path_from);
    c->path_to = weft__malloc(np * sizeof *c->path_to);
    c->path_bytes = weft__malloc(np * sizeof *c->path_bytes);
    c->path_lstart = weft__malloc(np * sizeof *c->path_lstart);
    c->path_nl = weft__malloc(np * sizeof *c->path_nl);
    size_t npair = (size_t)c->m->ranks * c->m->ranks;
    c->rstart = weft__malloc(npair * sizeof *c->rstart);
    c->rlen = weft__calloc(npair, sizeof *c->rlen);
    c->base = weft__calloc(c->nl ? c->nl : 1, sizeof *c->base);
    c->load = weft__calloc(c->nl ? c->nl : 1, sizeof *c->load);
    if (!c->path_op || !c->path_k || !c->path_kind || !c->path_ocs || !c->path_from ||
        !c->path_to || !c->path_bytes || !c->path_lstart || !c->path_nl || !c->rstart || !c->rlen ||
        !c->base || !c->load)
        return weft_diag_code(c->d, WEFT_ENOMEM);
    for (size_t i = 0; i < npair; i++)
        c->rstart[i] = SIZE_MAX;
    weft_err e = WEFT_OK;
    for (uint32_t i = 0; i < nops && !e; i++) {
        weft_op op = weft_plan_op(p, i);
        double bytes = (double)weft_traffic_at(c->m, op.src_rank.v, op.dst_rank.v);
        uint32_t npth = weft_plan_op_num_paths(p, i);
        for (uint32_t k = 0; k < npth && !e; k++) {
            size_t x = c->npaths++;
            uint32_t len = weft_plan_path_len(p, i, k), hops = 0;
            c->path_op[x] = i;
            c->path_k[x] = k;
            c->path_bytes[x] = rat_d(weft_plan_path_share(p, i, k)) * bytes;
            c->path_lstart[x] = c->plink_len;
            c->path_nl[x] = len - 1;
            c->path_ocs[x] = c->path_from[x] = c->path_to[x] = UINT32_MAX;
            if (weft__grow((void **)&c->plink, &c->plink_cap, c->plink_len + len,
                           sizeof *c->plink)) {
                e = weft_diag_code(c->d, WEFT_ENOMEM);
                break;
            }
            weft_node_id prev = {0};
            for (uint32_t j = 0; j < len; j++) {
                weft_node_id nd;
                weft_topo_find_node(c->t, weft_plan_path_node(p, i, k, j), &nd);
                if (j > 0) {
                    weft_link_id l;
                    weft_topo_find_link(c->t, prev, nd, &l);
                    c->plink[c->plink_len++] = l.v;
                }
                if (j > 0 && j + 1 < len && c->ocs_of[nd.v] != UINT32_MAX) {
                    weft_node_id next;
                    weft_topo_find_node(c->t, weft_plan_path_node(p, i, k, j + 1), &next);
                    hops++;
                    c->path_ocs[x] = c->ocs_of[nd.v];
                    c->path_from[x] = c->port_of[prev.v];
                    c->path_to[x] = c->port_of[next.v];
                }
                prev = nd;
            }
            c->path_kind[x] = hops == 0 ? P_PACKET : hops == 1 ? P_CIRCUIT : P_MULTI;
            if (hops == 1) {
                ocs_info *q = &c->ocs[c->path_ocs[x]];
                q->dem[(size_t)c->path_from[x] * q->nports + c->path_to[x]] += c->path_bytes[x];
            } else if (hops == 0) {
                for (uint32_t j = 0; j + 1 < len; j++) {
                    uint32_t l = c->plink[c->path_lstart[x] + j];
                    c->base[l] += c->path_bytes[x];
                }
            }
            if (hops)
                e = pair_route(c, op.src_rank.v, op.dst_rank.v);
        }
    }
    return e;
}

/* Round a before round b: larger weight first, then lower index. */
static bool round_before(const uint64_t *w, uint32_t a, uint32_t b)
{
    return w[a] > w[b] || (w[a] == w[b] && a < b);
}

/* Sorts round indices by round_before (a shell sort: no comparator
 * context needed; rounds <= ports^2). */
static void sort_rounds(const uint64_t *w, uint32_t *ord, uint32_t n)
{
    for (uint32_t gap = n / 2; gap > 0; gap /= 2)
        for (uint32_t i = gap; i < n; i++)
            for (uint32_t j = i; j >= gap && round_before(w, ord[j], ord[j - gap]); j -= gap) {
                uint32_t x = ord[j];
                ord[j] = ord[j - gap];
                ord[j - gap] = x;
            }
}

/* Augmenting path from row i (Kuhn) over entries >= r of the n x n m;
 * rowm/colm the matching (UINT32_MAX: free), seen the columns visited. */
static bool augment(const uint64_t *m, uint32_t n, uint64_t r, uint32_t i, uint32_t *rowm,
                    uint32_t *colm, uint8_t *seen)
{
    for (uint32_t j = 0; j < n; j++) {
        if (seen[j] || m[(size_t)i * n + j] < r)
            continue;
        seen[j] = 1;
        if (colm[j] == UINT32_MAX || augment(m, n, r, colm[j], rowm, colm, seen)) {
            colm[j] = i;
            rowm[i] = j;
            return true;
        }
    }
    return false;
}

/* Solstice-style decomposition (after Liu et al., CoNEXT 2015): stuff the
 * matrix to equal line sums (each entry, row-major, raised by the smaller
 * of its row's and column's deficit), then take perfect matchings among
 * the entries >= r, r the largest power of two not above the largest
 * entry, halving r when there is none; each matching runs for its smallest
 * entry, which is subtracted. Large, long configurations come first, so a
 * prefix of them covers more of the matrix than the same number of
 * Birkhoff-von Neumann rounds. The matching is repaired between rounds
 * (only rows whose entry fell below r are re-matched). Integers
 * throughout; the weights sum to the largest line sum. */
static weft_err solstice(const uint64_t *m0, uint32_t n, weft_bvn *out)
{
    size_t nn = (size_t)n * n;
    uint64_t *m = weft__malloc(nn * sizeof *m), *rs = weft__calloc(n, sizeof *rs),
             *cs = weft__calloc(n, sizeof *cs);
    uint32_t *rowm = weft__malloc(n * sizeof *rowm), *colm = weft__malloc(n * sizeof *colm);
    uint8_t *seen = weft__malloc(n);
    weft_bvn b;
    memset(&b, 0, sizeof b);
    b.n = n;
    size_t cap = 0;
    weft_err e = WEFT_OK;
    if (!m || !rs || !cs || !rowm || !colm || !seen) {
        e = WEFT_ENOMEM;
        goto done;
    }
    memcpy(m, m0, nn * sizeof *m);
    uint64_t line = 0, big = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            rs[i] += m[(size_t)i * n + j];
            cs[j] += m[(size_t)i * n + j];
        }
    for (uint32_t i = 0; i < n; i++) {
        line = rs[i] > line ? rs[i] : line;
        line = cs[i] > line ? cs[i] : line;
    }
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            uint64_t dr = line - rs[i], dc = line - cs[j], add = dr < dc ? dr : dc;
            m[(size_t)i * n + j] += add;
            rs[i] += add;
            cs[j] += add;
            b.padded += add;
            if (m[(size_t)i * n + j] > big)
                big = m[(size_t)i * n + j];
        }
    b.line = line;
    uint64_t r = 1;
    while (r <= big / 2)
        r *= 2;
    for (uint32_t i = 0; i < n; i++)
        rowm[i] = colm[i] = UINT32_MAX;
    uint64_t left = line;
    while (left > 0) {
        bool perfect = true;
        for (uint32_t i = 0; i < n && perfect; i++) {
            if (rowm[i] != UINT32_MAX)
                continue;
            memset(seen, 0, n);
            perfect = augment(m, n, r, i, rowm, colm, seen);
        }
        if (!perfect) {
            r /= 2; /* r = 1 always has one: the stuffed matrix / line is doubly stochastic */
            if (r == 0) {
                e = WEFT_EINVAL;
                break;
            }
            continue;
        }
        uint64_t w = UINT64_MAX;
        for (uint32_t i = 0; i < n; i++)
            if (m[(size_t)i * n + rowm[i]] < w)
                w = m[(size_t)i * n + rowm[i]];
        if (weft__grow((void **)&b.weight, &cap, (size_t)b.rounds + 1, sizeof *b.weight)) {
            e = WEFT_ENOMEM;
            break;
        }
        uint32_t *np = weft__realloc(b.perm, ((size_t)b.rounds + 1) * n * sizeof *np);
        if (!np) {
            e = WEFT_ENOMEM;
            break;
        }
        b.perm = np;
        memcpy(b.perm + (size_t)b.rounds * n, rowm, n * sizeof *rowm);
        b.weight[b.rounds++] = w;
        left -= w;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t *x = &m[(size_t)i * n + rowm[i]];
            *x -= w;
            if (*x < r) { /* no longer an edge at this threshold */
                colm[rowm[i]] = UINT32_MAX;
                rowm[i] = UINT32_MAX;
            }
        }
    }
done:
    weft__free(m);
    weft__free(rs);
    weft__free(cs);
    weft__free(rowm);
    weft__free(colm);
    weft__free(seen);
    if (e) {
        weft_bvn_fini(&b);
        return e;
    }
    *out = b;
    return WEFT_OK;
}

static weft_err decompose(sched_ctx *c)
{
    for (uint32_t o = 0; o < c->nocs; o++) {
        ocs_info *q = &c->ocs[o];
        size_t nn = (size_t)q->nports * q->nports;
        if (!q->nports)
            continue;
        uint64_t *mi = weft__malloc(nn * sizeof *mi), any = 0;
        if (!mi)
            return weft_diag_code(c->d, WEFT_ENOMEM);
        for (size_t i = 0; i < nn; i++)
            any |= mi[i] = (uint64_t)ceil(q->dem[i]);
        if (!any) { /* nothing crosses this OCS: no rounds */
            weft__free(mi);
            continue;
        }
        weft_err e = weft_bvn_decompose(mi, q->nports, &q->dec[DEC_BVN], c->d);
        if (!e)
            e = solstice(mi, q->nports, &q->dec[DEC_SOLSTICE]);
        weft__free(mi);
        if (e)
            return weft_diag_code(c->d, e);
        for (int k = 0; k < 2; k++) {
            const weft_bvn *b = &q->dec[k];
            q->ord[k] = weft__malloc((b->rounds ? b->rounds : 1) * sizeof *q->ord[k]);
            if (!q->ord[k])
                return weft_diag_code(c->d, WEFT_ENOMEM);
            for (uint32_t r = 0; r < b->rounds; r++)
                q->ord[k][r] = r;
        }
        sort_rounds(q->dec[DEC_BVN].weight, q->ord[DEC_BVN], q->dec[DEC_BVN].rounds);
    }
    return WEFT_OK;
}

/* The configurations OCS q keeps in candidate m: its first m rounds, or
 * all it has. */
static uint32_t kept_rounds(const sched_ctx *c, const ocs_info *q, uint32_t m)
{
    return m < q->dec[c->which].rounds ? m : q->dec[c->which].rounds;
}

/* Fills every OCS's cap for candidate (m, a); the time of the busiest
 * OCS with its delays. */
static double fill_caps(sched_ctx *c, uint32_t m, double a)
{
    double worst = 0;
    for (uint32_t o = 0; o < c->nocs; o++) {
        ocs_info *q = &c->ocs[o];
        uint32_t n = q->nports, kept = kept_rounds(c, q, m);
        memset(q->cap, 0, (size_t)n * n * sizeof *q->cap);
        double sum = 0;
        for (uint32_t k = 0; k < kept; k++) {
            uint32_t r = q->ord[c->which][k];
            double w = a * (double)q->dec[c->which].weight[r];
            for (uint32_t i = 0; i < n; i++)
                q->cap[(size_t)i * n + q->dec[c->which].perm[(size_t)r * n + i]] += w;
            sum += w;
        }
        double tm = sum / q->bw + (kept > 1 ? (kept - 1) * q->delay_s : 0);
        if (tm > worst)
            worst = tm;
    }
    return worst;
}

/* The share of circuit path x that its circuit carries (caps filled). */
static double served(const sched_ctx *c, size_t x)
{
    const ocs_info *q = &c->ocs[c->path_ocs[x]];
    size_t at = (size_t)c->path_from[x] * q->nports + c->path_to[x];
    double dem = q->dem[at];
    return dem <= 0 ? 1 : q->cap[at] >= dem ? 1 : q->cap[at] / dem;
}

static void add_route_load(sched_ctx *c, uint32_t op, double bytes)
{
    weft_op o = weft_plan_op(c->p0, op);
    size_t pr = (size_t)o.src_rank.v * c->m->ranks + o.dst_rank.v;
    if (c->rstart[pr] == SIZE_MAX - 1) {
        c->stranded = true; /* bytes with no packet path: not a schedule */
        return;
    }
    for (uint32_t i = 0; i < c->rlen[pr]; i++)
        c->load[c->rlink[c->rstart[pr] + i]] += bytes * c->rfrac[c->rstart[pr] + i];
}

/* The busiest non-OCS link's time for the caps filled. */
static double packet_time(sched_ctx *c, double *circuit, double *rerouted)
{
    memcpy(c->load, c->base, (c->nl ? c->nl : 1) * sizeof *c->load);
    *circuit = *rerouted = 0;
    c->stranded = false;
    for (size_t x = 0; x < c->npaths; x++) {
        if (c->path_kind[x] == P_PACKET)
            continue;
        double phi = c->path_kind[x] == P_CIRCUIT ? served(c, x) : 0, b = c->path_bytes[x];
        if (phi > 0)
            for (uint32_t j = 0; j < c->path_nl[x]; j++)
                c->load[c->plink[c->path_lstart[x] + j]] += phi * b;
        if (phi < 1)
            add_route_load(c, c->path_op[x], (1 - phi) * b);
        *circuit += phi * b;
        *rerouted += (1 - phi) * b;
    }
    double worst = c->stranded ? INFINITY : 0;
    for (uint32_t l = 0; l < c->nl; l++) {
        if (c->skip_link[l])
            continue;
        double tm = c->load[l] / c->bwl[l];
        if (tm > worst)
            worst = tm;
    }
    return worst;
}

/* ---- The plan ------------------------------------------------------------ */

typedef struct wpath {
    double w;
    uint32_t epoch;
    uint32_t src; /* 0: path k of the relaxed op; 1: packet path k */
    uint32_t k;
} wpath;

typedef struct build_ctx {
    wpath *wp;
    size_t nwp, wcap;
    weft_node_id *pnodes;
    weft_rat *pw;
    const char **names;
    size_t names_cap;
} build_ctx;

static weft_err push(build_ctx *b, double w, uint32_t epoch, uint32_t src, uint32_t k)
{
    if (!(w > 0))
        return WEFT_OK;
    if (weft__grow((void **)&b->wp, &b->wcap, b->nwp + 1, sizeof *b->wp))
        return WEFT_ENOMEM;
    b->wp[b->nwp++] = (wpath){w, epoch, src, k};
    return WEFT_OK;
}

/* Path k of op id of the relaxed plan p0: its node names into b->names,
 * *len of them. */
static weft_err relaxed_path_names(build_ctx *b, const weft_plan *p0, uint32_t id, uint32_t k,
                                   uint32_t *len)
{
    *len = weft_plan_path_len(p0, id, k);
    if (weft__grow((void **)&b->names, &b->names_cap, *len, sizeof *b->names))
        return WEFT_ENOMEM;
    for (uint32_t j = 0; j < *len; j++)
        b->names[j] = weft_plan_path_node(p0, id, k, j);
    return WEFT_OK;
}

/* Shares on a grid of 1/2^24 that sum to exactly 1: each floor(w * Q),
 * what is left to the largest. Entries that round to 0 are dropped. */
#define SHARE_GRID (INT64_C(1) << 24)

static weft_err emit_op(sched_ctx *c, build_ctx *b, weft_plan *p, uint32_t id, uint32_t plen)
{
    double sum = 0;
    for (size_t i = 0; i < b->nwp; i++)
        sum += b->wp[i].w;
    int64_t left = SHARE_GRID;
    size_t big = 0;
    int64_t *q = weft__malloc((b->nwp ? b->nwp : 1) * sizeof *q);
    if (!q)
        return WEFT_ENOMEM;
    for (size_t i = 0; i < b->nwp; i++) {
        q[i] = (int64_t)floor(b->wp[i].w / sum * (double)SHARE_GRID);
        left -= q[i];
        if (b->wp[i].w > b->wp[big].w)
            big = i;
    }
    q[big] += left;
    weft_err e = WEFT_OK;
    for (size_t i = 0; i < b->nwp && !e; i++) {
        if (q[i] <= 0)
            continue;
        weft_rat share;
        weft_rat_make(q[i], SHARE_GRID, &share);
        const wpath *w = &b->wp[i];
        uint32_t len;
        if (w->src == 0) {
            if ((e = relaxed_path_names(b, c->p0, id, w->k, &len)))
                break;
        } else {
            len = plen + 1;
            if (weft__grow((void **)&b->names, &b->names_cap, len, sizeof *b->names)) {
                e = WEFT_ENOMEM;
                break;
            }
            for (uint32_t j = 0; j < len; j++)
                b->names[j] = weft_topo_node_name(c->packet, b->pnodes[(size_t)w->k * len + j]);
        }
        e = weft_plan_add_path(p, id, share, b->names, len);
        if (!e && w->epoch != WEFT_PLAN_NO_EPOCH)
            e = weft_plan_set_path_epoch(p, id, weft_plan_op_num_paths(p, id) - 1, w->epoch);
    }
    weft__free(q);
    return e;
}

static weft_err build_plan(sched_ctx *c, uint32_t m, double a, weft_plan **out)
{
    const weft_plan *p0 = c->p0;
    weft_plan *p;
    weft_err e = weft_plan_new(weft_plan_get_info(p0), &p);
    if (e)
        return weft_diag_code(c->d, e);
    build_ctx b = {0};
    b.pnodes = weft__malloc(WEFT_PATHS_LIST_MAX * 256 * sizeof *b.pnodes);
    b.pw = weft__malloc(WEFT_PATHS_LIST_MAX * sizeof *b.pw);
    if (!b.pnodes || !b.pw)
        e = WEFT_ENOMEM;
    fill_caps(c, m, a);
    size_t x = 0;
    uint32_t nops = weft_plan_num_ops(p0);
    for (uint32_t id = 0; id < nops && !e; id++) {
        weft_op op = weft_plan_op(p0, id);
        uint32_t np = weft_plan_op_num_paths(p0, id);
        if ((e = weft_plan_add_op(p, &op, NULL, 0, NULL)))
            break;
        b.nwp = 0;
        bool touches = false;
        double reroute = 0;
        for (uint32_t k = 0; k < np && !e; k++, x++) {
            double share = rat_d(weft_plan_path_share(p0, id, k));
            if (c->path_kind[x] == P_PACKET) {
                e = push(&b, share, WEFT_PLAN_NO_EPOCH, 0, k);
                continue;
            }
            touches = true;
            if (c->path_kind[x] == P_MULTI) {
                reroute += share;
                continue;
            }
            double phi = served(c, x);
            reroute += (1 - phi) * share;
            const ocs_info *q = &c->ocs[c->path_ocs[x]];
            uint32_t n = q->nports, kept = kept_rounds(c, q, m);
            double cap = q->cap[(size_t)c->path_from[x] * n + c->path_to[x]];
            for (uint32_t ep = 0; ep < kept && !e && phi > 0; ep++) {
                uint32_t r = q->ord[c->which][ep];
                if (q->dec[c->which].perm[(size_t)r * n + c->path_from[x]] != c->path_to[x])
                    continue;
                double w = a * (double)q->dec[c->which].weight[r];
                e = push(&b, share * phi * w / cap, ep, 0, k);
            }
        }
        if (e || !np)
            continue;
        if (!touches) { /* the relaxed op's route as it was, exactly */
            for (uint32_t k = 0; k < np && !e; k++) {
                uint32_t len;
                if (!(e = relaxed_path_names(&b, p0, id, k, &len)))
                    e = weft_plan_add_path(p, id, weft_plan_path_share(p0, id, k), b.names, len);
            }
            continue;
        }
        uint32_t npk = 0, plen = 0;
        if (reroute > 1e-12) {
            weft_paths_route rt;
            if ((e = weft_paths_route_get(c->ppaths, weft_topo_rank_node(c->packet, op.src_rank),
                                          weft_topo_rank_node(c->packet, op.dst_rank), &rt, c->d)))
                break;
            uint64_t total;
            if (rt.hops >= 256) {
                e = weft_diag_set(c->d, WEFT_ELIMIT, "a packet path of %u hops", rt.hops);
                break;
            }
            if ((e = weft_paths_list(c->ppaths, WEFT_PATHS_LIST_MAX, b.pnodes, b.pw, &npk, &total)))
                break;
            plen = rt.hops;
            double wsum = 0;
            for (uint32_t k = 0; k < npk; k++)
                wsum += rat_d(b.pw[k]);
            for (uint32_t k = 0; k < npk && !e; k++)
                e = push(&b, reroute * rat_d(b.pw[k]) / wsum, WEFT_PLAN_NO_EPOCH, 1, k);
        }
        if (!e)
            e = emit_op(c, &b, p, id, plen);
    }
    /* The circuits: every permutation entry with demand. */
    for (uint32_t o = 0; o < c->nocs && !e; o++) {
        const ocs_info *q = &c->ocs[o];
        uint32_t n = q->nports, kept = kept_rounds(c, q, m);
        const char *on = weft_topo_node_name(c->t, (weft_node_id){q->node});
        for (uint32_t ep = 0; ep < kept && !e; ep++) {
            uint32_t r = q->ord[c->which][ep];
            for (uint32_t i = 0; i < n && !e; i++) {
                uint32_t j = q->dec[c->which].perm[(size_t)r * n + i];
                if (q->dem[(size_t)i * n + j] <= 0)
                    continue;
                e = weft_plan_add_circuit(
                    p, ep, on, weft_topo_node_name(c->t, (weft_node_id){q->port_node[i]}),
                    weft_topo_node_name(c->t, (weft_node_id){q->port_node[j]}));
            }
        }
    }
    if (!e && weft_plan_traffic(p0))
        e = weft_plan_set_traffic(p, weft_plan_traffic(p0), c->d);
    weft__free(b.wp);
    weft__free(b.pnodes);
    weft__free(b.pw);
    weft__free(b.names);
    if (e) {
        weft_plan_free(p);
        return weft_diag_code(c->d, e);
    }
    *out = p;
    return WEFT_OK;
}

static void ctx_fini(sched_ctx *c)
{
    for (uint32_t o = 0; c->ocs && o < c->nocs; o++) {
        weft__free(c->ocs[o].port_node);
        weft__free(c->ocs[o].dem);
        weft__free(c->ocs[o].cap);
        weft__free(c->ocs[o].ord[0]);
        weft_bvn_fini(&c->ocs[o].dec[0]);
        weft_bvn_fini(&c->ocs[o].dec[1]);
        weft__free(c->ocs[o].ord[1]);
    }
    weft__free(c->ocs);
    weft__free(c->ocs_of);
    weft__free(c->port_of);
    weft__free(c->skip_link);
    weft__free(c->bwl);
    weft__free(c->path_op);
    weft__free(c->path_k);
    weft__free(c->path_kind);
    weft__free(c->path_ocs);
    weft__free(c->path_from);
    weft__free(c->path_to);
    weft__free(c->path_bytes);
    weft__free(c->path_lstart);
    weft__free(c->path_nl);
    weft__free(c->plink);
    weft__free(c->rstart);
    weft__free(c->rlen);
    weft__free(c->rlink);
    weft__free(c->rfrac);
    weft__free(c->base);
    weft__free(c->load);
    weft_paths_free(c->ppaths);
    weft_topo_free(c->packet);
}

/* The most rounds any OCS's decomposition `which` has. */
static uint32_t most_rounds(const sched_ctx *c, int which)
{
    uint32_t nr = 0;
    for (uint32_t q = 0; q < c->nocs; q++)
        if (c->ocs[q].dec[which].rounds > nr)
            nr = c->ocs[q].dec[which].rounds;
    return nr;
}

/* A candidate schedule: its time (the busier of its OCS and packet
 * times), fraction, configurations kept and decomposition. */
typedef struct candidate {
    double time_s, a, ocs_s, packet_s, circuit_bytes, rerouted_bytes;
    uint32_t m, rounds; /* configurations kept; the decomposition's most rounds */
    int which;
} candidate;

weft_err weft_synth_a2a_circuits(const weft_topo *t, const weft_traffic *m,
                                 const weft_circuit_opts *o, weft_plan **out,
                                 weft_circuit_sched *sched, weft_diag *d)
{
    weft_circuit_opts defaults;
    if (!o) {
        weft_circuit_opts_init(&defaults);
        o = &defaults;
    }
    if (!m)
        return weft_diag_set(d, WEFT_EINVAL, "a circuit schedule needs a traffic matrix");
    sched_ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.m = m;
    c.d = d;
    c.nl = weft_topo_num_links(t);
    weft_plan *p0 = NULL;
    weft_a2a_bound bound;
    memset(&bound, 0, sizeof bound);
    weft_err e = find_ocs(&c, o);
    weft_a2a_bound_opts bo;
    weft_a2a_bound_opts_init(&bo);
    bo.edge_lp = o->edge_lp;
    if (!e)
        e = weft_synth_a2a_optimal_opts(t, m, &bo, &p0, &bound, d);
    c.p0 = p0;
    if (!e)
        e = build_packet(&c);
    if (!e)
        e = read_paths(&c);
    if (!e)
        e = decompose(&c);
    if (e)
        goto fini;
    static const double fracs[] = {1, 0.5, 0.25, 0.125, 0.0625, 2, 4, 8};
    candidate best = {INFINITY, 1, 0, 0, 0, 0, 0, 0, DEC_BVN};
    uint32_t ncand = 0;
    /* Per decomposition, m = 1, 2, 3, 4, 6, 9, 13, ... then all its rounds;
     * then m = 0 (no circuits). A tie keeps the earlier: Birkhoff-von
     * Neumann before Solstice, fewer configurations before more, one
     * before none. */
    for (c.which = DEC_BVN; c.which <= DEC_SOLSTICE; c.which++) {
        uint32_t nr = most_rounds(&c, c.which);
        uint32_t maxm = o->max_configs && o->max_configs < nr ? o->max_configs : nr;
        for (uint32_t mm = 1; mm <= maxm;) {
            for (size_t f = 0; f < sizeof fracs / sizeof fracs[0]; f++) {
                double ocs_s = fill_caps(&c, mm, fracs[f]), cb, rb;
                double pk = packet_time(&c, &cb, &rb);
                double tm = ocs_s > pk ? ocs_s : pk;
                ncand++;
                if (tm < best.time_s)
                    best = (candidate){tm, fracs[f], ocs_s, pk, cb, rb, mm, nr, c.which};
            }
            if (mm == maxm)
                break;
            mm = mm < 4 ? mm + 1 : mm + mm / 2;
            if (mm > maxm)
                mm = maxm;
        }
    }
    {
        double cb, rb;
        c.which = DEC_BVN;
        fill_caps(&c, 0, 1);
        double pk = packet_time(&c, &cb, &rb);
        ncand++;
        if (pk < best.time_s)
            best = (candidate){pk, 1, 0, pk, cb, rb, 0, most_rounds(&c, DEC_BVN), DEC_BVN};
    }
    c.which = best.which;
    weft_plan *p = NULL;
    if (best.time_s == INFINITY) {
        e = weft_diag_set(d, WEFT_ETOPO,
                          "no circuit schedule: some traffic crosses two OCSes in the relaxed "
                          "flow and the fabric has no packet path for it");
        goto fini;
    }
    if ((e = build_plan(&c, best.m, best.a, &p)))
        goto fini;
    memset(sched, 0, sizeof *sched);
    sched->duration_s = weft__calloc(best.m ? best.m : 1, sizeof *sched->duration_s);
    if (!sched->duration_s) {
        weft_plan_free(p);
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto fini;
    }
    for (uint32_t k = 0; k < best.m; k++)
        for (uint32_t q = 0; q < c.nocs; q++) {
            const ocs_info *x = &c.ocs[q];
            if (k < x->dec[c.which].rounds) {
                double dur = best.a * (double)x->dec[c.which].weight[x->ord[c.which][k]] / x->bw;
                if (dur > sched->duration_s[k])
                    sched->duration_s[k] = dur;
            }
        }
    sched->configs = best.m;
    sched->rounds = best.rounds;
    sched->decomposition = best.which == DEC_BVN ? "bvn" : "solstice";
    sched->candidates = ncand;
    sched->fraction = best.a;
    sched->ocs_s = best.ocs_s;
    sched->packet_s = best.packet_s;
    for (uint32_t q = 0; q < c.nocs; q++)
        if (c.ocs[q].delay_s > sched->delay_s)
            sched->delay_s = c.ocs[q].delay_s;
    sched->time_s = best.time_s;
    sched->bound_s = bound.time_s;
    sched->circuit_bytes = best.circuit_bytes;
    sched->rerouted_bytes = best.rerouted_bytes;
    for (size_t x = 0; x < c.npaths; x++)
        sched->multi_paths += c.path_kind[x] == P_MULTI;
    *out = p;
fini:
    weft_plan_free(p0);
    weft_a2a_bound_fini(&bound);
    ctx_fini(&c);
    return e;
}
