/* In-network reduction on the flow engine (weft_sim_innet, weft/sim.h;
 * docs/sim.md, "In-network reduction").
 *
 * weft's plans are rank-to-rank ops, but NCCL's NVLS and CollNet reduce
 * inside a switch. This file builds, per group, the flows those algorithms
 * really move and runs them on the engine, cut through (every piece of a
 * shard streams through its stages as NCCL pipelines them). A group's
 * ranks sit on hosts of m ranks each; the data is cut into m shards, shard
 * j handled by the j-th rank of every host (its "head"), and each shard
 * into P pieces (P = 2 for the tree between hosts: NCCL's two trees, each
 * with half; 1 otherwise). Per (host, shard, piece) there are three
 * stages:
 *
 *   reduce     nvls: every rank sends its piece of shard j to the NVSwitch
 *              (multimem.ld_reduce reads it), the switch sends the sum to
 *              the head; direct (CollNet direct): every rank sends it to
 *              the head over NVLink; chain (CollNet chain): along the
 *              ranks j+1, j+2, ..., j, each adding its own.
 *   network    none (one host); tree (NVLS-tree): the heads of shard j
 *              reduce up a binary tree of hosts and broadcast down it, the
 *              second piece on the mirrored tree; sharp: every head sends
 *              to the SHARP switch nearest the first head, which sends the
 *              sum back to each.
 *   broadcast  nvls: the head sends the result to the NVSwitch once
 *              (multimem.st) and the switch multicasts it to every rank;
 *              direct: the head sends it to every rank; chain: back along
 *              the chain.
 *
 * So NVLS allreduce in one host of n GPUs puts S (n + 1) / n bytes on every
 * GPU <-> NVSwitch link each way, and its bus bandwidth is at most
 * 2 (n - 1) / (n + 1) x the link's rate. Reducescatter runs the reduce
 * stage alone, allgather the broadcast stage alone (each rank its own
 * shard). Every flow of a piece has the same bytes, so each stage cuts
 * through on the flows it consumes (sim_engine_add_ct_dep).
 *
 * The gpu model: links are counted at sim_model_link_cap (NCCL's NVLink
 * figure inside a host); the links of a reducing NVSwitch also at NCCL's
 * NVLS efficiency for NVLS and NVLS-tree (nvlsEfficiency in src/graph/
 * tuning.cc of github:NVIDIA/nccl @5067397c: Hopper 0.85, Blackwell 0.74);
 * the launch latency is NCCL's NVLink latency of the algorithm
 * (hwLatencies[NVLINK][a][Simple], same file: NVLS and NVLS-tree 25 us,
 * CollNet direct 3.7, chain 2.8), routes pay hop_s / net_hop_s as
 * everywhere. Protocol: Simple, the only one NCCL runs them with. */
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"
#include "sim/model.h"
#include "sim/result.h"
#include "weft/paths.h"
#include "weft/protocol.h"

#define NVLS_EFF_HOPPER 0.85
#define NVLS_EFF_BLACKWELL 0.74
#define LAT_NVLS_S 25e-6
#define LAT_COLLNET_DIRECT_S 3.7e-6
#define LAT_COLLNET_CHAIN_S 2.8e-6
#define MAX_DEPS 132 /* a head's m - 1 producers and two children */
#define MAX_PER_HOST 128

/* NCCL's per-channel ceiling on NVLS-tree's bus bandwidth, GB/s, by
 * [blackwell][min(hosts, 3) - 1] (perChMaxNVLSTreeBws in src/graph/
 * tuning.cc of github:NVIDIA/nccl @5067397c, first in v2.28.3-1: Hopper
 * 57.7 on 2 hosts, 45.5 on more; Blackwell 96, 80; no one-host row). A
 * channel of NCCL's NVLS graph is one head (a GPU with its NIC) and
 * NCCL's bus bandwidth is its data rate x 2 (n - 1) / n (tuning.cc turns
 * NVLS-tree's bus bandwidth into algorithm bandwidth by nRanks / nsteps),
 * so a head moves its shard at most at ceiling x n / (2 (n - 1)). */
static const double nvls_tree_per_ch[2][3] = {{0, 57.7, 45.5}, {0, 96.0, 80.0}};

/* The per-head data ceiling of NVLS-tree allreduce over groups of `group`
 * ranks of order (the first group's hosts), GB/s; 0 for one host. */
static double nvls_tree_channel_gbps(const weft_topo *t, const uint32_t *order, uint32_t group,
                                     bool blackwell)
{
    uint32_t hosts = 0;
    for (uint32_t i = 0; i < group; i++) {
        int32_t h = weft_topo_node_host(t, weft_topo_rank_node(t, (weft_rank){order[i]}));
        bool seen = false;
        for (uint32_t k = 0; k < i && !seen; k++)
            seen = h != WEFT_NO_HOST &&
                   weft_topo_node_host(t, weft_topo_rank_node(t, (weft_rank){order[k]})) == h;
        hosts += !seen;
    }
    if (hosts < 2 || group < 2)
        return 0;
    return nvls_tree_per_ch[blackwell][hosts >= 3 ? 2 : 1] * group / (2.0 * (group - 1));
}

const char *weft_sim_innet_name(weft_sim_innet_algo a)
{
    static const char *const names[] = {"nvls", "nvls_tree", "collnet_direct", "collnet_chain"};
    return (unsigned)a < WEFT__SIM_INNET_COUNT ? names[a] : "?";
}

typedef struct ctx {
    const weft_topo *t;
    sim_engine *e;
    weft_paths *paths;
    weft_sim_opts r;
    weft_diag *d;
    uint64_t transfers;
    /* NVLS-tree channel ceilings (gpu model): the first of the engine's
     * links past the fabric's, one per (group host, head); none when
     * chan_link == 0. */
    uint32_t chan_link;
    uint32_t chan_base; /* the group's first: chan_link + its offset */
} ctx;

/* A list of flows a stage consumes (cut through). */
typedef struct deps {
    uint32_t n;
    uint32_t id[MAX_DEPS];
} deps;

/* Adds a flow a -> b of `bytes` cutting through every flow of dep[0..nd);
 * its route also crosses engine link `extra` (a channel ceiling) unless
 * that is UINT32_MAX. */
static weft_err flow_via(ctx *c, weft_node_id a, weft_node_id b, double bytes, const deps *dep,
                         uint32_t extra, uint32_t *id)
{
    uint32_t route;
    weft_err e;
    if (a.v == b.v) {
        e = sim_engine_add_route(c->e, 0, NULL, NULL, 0, &route);
    } else {
        weft_paths_route pr;
        e = weft_paths_route_get(c->paths, a, b, &pr, c->d);
        if (e)
            return e;
        double lat = weft_rat_to_double(pr.lat_ns) * 1e-9 +
                     sim_model_route_extra(&c->r, c->t, a, b, pr.link, pr.n, 0);
        if (extra != UINT32_MAX) {
            uint32_t *link = malloc((pr.n + 1) * sizeof *link);
            double *frac = malloc((pr.n + 1) * sizeof *frac);
            e = link && frac ? WEFT_OK : WEFT_ENOMEM;
            if (!e) {
                memcpy(link, pr.link, pr.n * sizeof *link);
                memcpy(frac, pr.fracd, pr.n * sizeof *frac);
                link[pr.n] = extra;
                frac[pr.n] = 1;
                e = sim_engine_add_route(c->e, pr.n + 1, link, frac, lat, &route);
            }
            free(link);
            free(frac);
        } else {
            e = sim_engine_add_route(c->e, pr.n, pr.link, pr.fracd, lat, &route);
        }
    }
    if (!e)
        e = sim_engine_add_flow(c->e, route, bytes, 1, id);
    for (uint32_t k = 0; !e && dep && k < dep->n; k++)
        e = sim_engine_add_ct_dep(c->e, *id, dep->id[k]);
    c->transfers++;
    return e ? weft_diag_code(c->d, e) : WEFT_OK;
}

static weft_err flow(ctx *c, weft_node_id a, weft_node_id b, double bytes, const deps *dep,
                     uint32_t *id)
{
    return flow_via(c, a, b, bytes, dep, UINT32_MAX, id);
}

/* The reducing switch of `kind` linked from rank node v (the first by
 * link order), or false. */
static bool nvswitch_of(const weft_topo *t, weft_node_id v, weft_node_id *out)
{
    uint32_t first, count;
    weft_topo_out_links(t, v, &first, &count);
    for (uint32_t k = 0; k < count; k++) {
        weft_node_id w = weft_topo_link_dst(t, (weft_link_id){first + k});
        weft_link_id back;
        if (weft_topo_node_reduce(t, w) == WEFT_REDUCE_NVLS &&
            weft_topo_find_link(t, w, v, &back)) {
            *out = w;
            return true;
        }
    }
    return false;
}

/* The SHARP switch with the fewest hops from v (ties: the smaller id). */
static bool sharp_of(ctx *c, weft_node_id v, weft_node_id *out)
{
    bool found = false;
    uint32_t best = 0;
    for (uint32_t s = 0; s < weft_topo_num_nodes(c->t); s++) {
        weft_node_id w = {s};
        weft_paths_route pr;
        if (weft_topo_node_reduce(c->t, w) != WEFT_REDUCE_SHARP ||
            weft_paths_route_get(c->paths, v, w, &pr, NULL))
            continue;
        if (!found || pr.hops < best) {
            found = true;
            best = pr.hops;
            *out = w;
        }
    }
    return found;
}

typedef enum { ST_NVLS, ST_DIRECT, ST_CHAIN } stage_kind;

/* One group: its ranks by host (node[h * m + i]: the i-th rank of host h). */
typedef struct hgroup {
    uint32_t hosts, m;
    weft_node_id *node; /* hosts x m */
    weft_node_id *sw;   /* hosts: the NVSwitch of each host (nvls kinds) */
} hgroup;

static weft_err reduce_stage(ctx *c, const hgroup *g, stage_kind k, uint32_t h, uint32_t j,
                             double bytes, deps *out)
{
    uint32_t m = g->m;
    weft_node_id head = g->node[h * m + j];
    out->n = 0;
    weft_err e = WEFT_OK;
    if (k == ST_NVLS) {
        deps up = {0, {0}};
        /* m flows in; the engine takes any number of ct deps, so the sum
         * flow is added after them, each as its dep. */
        uint32_t first = 0;
        for (uint32_t i = 0; !e && i < m; i++) {
            uint32_t id;
            e = flow(c, g->node[h * m + i], g->sw[h], bytes, NULL, &id);
            if (i == 0)
                first = id;
        }
        /* The sum reaches the head: on NVLS-tree, through the head's
         * channel ceiling. */
        uint32_t sum, chan = c->chan_link ? c->chan_base + h * m + j : UINT32_MAX;
        if (!e)
            e = flow_via(c, g->sw[h], head, bytes, &up, chan, &sum);
        for (uint32_t i = 0; !e && i < m; i++)
            e = weft_diag_code(c->d, sim_engine_add_ct_dep(c->e, sum, first + i));
        out->n = 1;
        out->id[0] = sum;
        return e;
    }
    if (k == ST_DIRECT) {
        /* The head's own piece needs no transfer; the others arrive over
         * NVLink, and the next stage consumes all of them. */
        for (uint32_t i = 0; !e && i < m; i++) {
            if (i == j)
                continue;
            e = flow(c, g->node[h * m + i], head, bytes, NULL, &out->id[out->n]);
            out->n++;
        }
        return e;
    }
    /* chain: j+1 -> j+2 -> ... -> j */
    deps prev = {0, {0}};
    for (uint32_t s = 1; !e && s < m; s++) {
        uint32_t a = (j + s) % m, b = (j + s + 1) % m, id;
        e = flow(c, g->node[h * m + a], g->node[h * m + b], bytes, &prev, &id);
        prev.n = 1;
        prev.id[0] = id;
    }
    *out = prev;
    return e;
}

static weft_err bcast_stage(ctx *c, const hgroup *g, stage_kind k, uint32_t h, uint32_t j,
                            double bytes, const deps *in)
{
    uint32_t m = g->m;
    weft_node_id head = g->node[h * m + j];
    weft_err e = WEFT_OK;
    if (k == ST_NVLS) {
        uint32_t st, id;
        e = flow(c, head, g->sw[h], bytes, in, &st);
        deps one = {1, {st}};
        for (uint32_t i = 0; !e && i < m; i++)
            e = flow(c, g->sw[h], g->node[h * m + i], bytes, &one, &id);
        return e;
    }
    if (k == ST_DIRECT) {
        uint32_t id;
        for (uint32_t i = 0; !e && i < m; i++)
            if (i != j)
                e = flow(c, head, g->node[h * m + i], bytes, in, &id);
        return e;
    }
    deps prev = *in;
    for (uint32_t s = 0; !e && s + 1 < m; s++) {
        uint32_t a = (j + m - s) % m, b = (j + m - s - 1) % m, id;
        e = flow(c, g->node[h * m + a], g->node[h * m + b], bytes, &prev, &id);
        prev.n = 1;
        prev.id[0] = id;
    }
    return e;
}

/* The tree between hosts for shard j, piece q (q = 1: mirrored hosts):
 * reduce up a binary heap of hosts, broadcast down. red[h] is host h's
 * reduce stage output; fin[h] receives what its broadcast consumes. */
static weft_err tree_stage(ctx *c, const hgroup *g, uint32_t j, uint32_t q, double bytes,
                           const deps *red, deps *fin)
{
    uint32_t H = g->hosts, m = g->m;
    uint32_t *up = malloc(H * sizeof *up);
    if (!up)
        return weft_diag_code(c->d, WEFT_ENOMEM);
    weft_err e = WEFT_OK;
#define HOST(pos) (q ? H - 1 - (pos) : (pos))
    /* Up, leaves first (heap positions from the last). */
    for (uint32_t pos = H; !e && pos-- > 1;) {
        uint32_t h = HOST(pos), p = HOST((pos - 1) / 2);
        deps in = red[h];
        for (uint32_t ch = 2 * pos + 1; ch <= 2 * pos + 2 && ch < H; ch++)
            in.id[in.n++] = up[HOST(ch)];
        e = flow(c, g->node[h * m + j], g->node[p * m + j], bytes, &in, &up[h]);
    }
    if (!e) {
        uint32_t r = HOST(0);
        fin[r] = red[r];
        for (uint32_t ch = 1; ch <= 2 && ch < H; ch++)
            fin[r].id[fin[r].n++] = up[HOST(ch)];
    }
    /* Down, root first. */
    for (uint32_t pos = 1; !e && pos < H; pos++) {
        uint32_t h = HOST(pos), p = HOST((pos - 1) / 2), id;
        deps in = fin[p]; /* a non-root parent forwards what it received */
        e = flow(c, g->node[p * m + j], g->node[h * m + j], bytes, &in, &id);
        fin[h].n = 1;
        fin[h].id[0] = id;
    }
#undef HOST
    free(up);
    return e;
}

static weft_err sharp_stage(ctx *c, const hgroup *g, uint32_t j, double bytes, const deps *red,
                            deps *fin)
{
    uint32_t H = g->hosts, m = g->m;
    weft_node_id sw;
    if (!sharp_of(c, g->node[j], &sw))
        return weft_diag_set(c->d, WEFT_ETOPO,
                             "sim: no switch that reduces (reduce=sharp) reachable from '%s'",
                             weft_topo_node_name(c->t, g->node[j]));
    weft_err e = WEFT_OK;
    uint32_t first = 0;
    for (uint32_t h = 0; !e && h < H; h++) {
        uint32_t id;
        e = flow(c, g->node[h * m + j], sw, bytes, &red[h], &id);
        if (h == 0)
            first = id;
    }
    for (uint32_t h = 0; !e && h < H; h++) {
        uint32_t id;
        e = flow(c, sw, g->node[h * m + j], bytes, NULL, &id);
        for (uint32_t k = 0; !e && k < H; k++)
            e = weft_diag_code(c->d, sim_engine_add_ct_dep(c->e, id, first + k));
        fin[h].n = 1;
        fin[h].id[0] = id;
    }
    return e;
}

/* Groups the ranks of order[0..n) by host; every host m ranks. */
static weft_err make_group(ctx *c, const uint32_t *order, uint32_t n, bool need_sw, hgroup *g)
{
    const weft_topo *t = c->t;
    g->node = malloc(n * sizeof *g->node);
    g->sw = malloc(n * sizeof *g->sw);
    int32_t *hid = malloc(n * sizeof *hid);
    uint32_t *cnt = calloc(n, sizeof *cnt);
    weft_err e = WEFT_OK;
    if (!g->node || !g->sw || !hid || !cnt) {
        e = weft_diag_code(c->d, WEFT_ENOMEM);
        goto out;
    }
    g->hosts = 0;
    /* Hosts in order of first appearance; a hostless rank is its own. */
    uint32_t *of = malloc(n * sizeof *of);
    if (!of) {
        e = weft_diag_code(c->d, WEFT_ENOMEM);
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        weft_node_id v = weft_topo_rank_node(t, (weft_rank){order[i]});
        int32_t h = weft_topo_node_host(t, v);
        uint32_t k = 0;
        while (k < g->hosts && !(h != WEFT_NO_HOST && hid[k] == h))
            k++;
        if (k == g->hosts)
            hid[g->hosts++] = h;
        of[i] = k;
        cnt[k]++;
    }
    g->m = cnt[0];
    for (uint32_t k = 1; k < g->hosts; k++)
        if (cnt[k] != g->m) {
            e = weft_diag_set(c->d, WEFT_EINVAL,
                              "sim: in-network reduction needs as many ranks on every host "
                              "(%u and %u)",
                              g->m, cnt[k]);
            free(of);
            goto out;
        }
    memset(cnt, 0, n * sizeof *cnt);
    for (uint32_t i = 0; i < n; i++)
        g->node[of[i] * g->m + cnt[of[i]]++] = weft_topo_rank_node(t, (weft_rank){order[i]});
    free(of);
    for (uint32_t h = 0; need_sw && !e && h < g->hosts; h++) {
        for (uint32_t i = 0; i < g->m; i++) {
            weft_node_id sw;
            if (!nvswitch_of(t, g->node[h * g->m + i], &sw) || (i > 0 && sw.v != g->sw[h].v)) {
                e = weft_diag_set(c->d, WEFT_ETOPO,
                                  "sim: '%s' has no link to its host's NVSwitch that reduces "
                                  "(reduce=nvls)",
                                  weft_topo_node_name(t, g->node[h * g->m + i]));
                break;
            }
            g->sw[h] = sw;
        }
    }
out:
    free(hid);
    free(cnt);
    return e;
}

static weft_err add_group(ctx *c, weft_sim_innet_algo algo, weft_coll coll, const uint32_t *order,
                          uint32_t n, uint64_t size)
{
    bool nv = algo == WEFT_SIM_INNET_NVLS || algo == WEFT_SIM_INNET_NVLS_TREE;
    hgroup g = {0, 0, NULL, NULL};
    weft_err e = make_group(c, order, n, nv, &g);
    if (e)
        goto out;
    uint32_t H = g.hosts, m = g.m;
    if (algo == WEFT_SIM_INNET_NVLS_TREE && H < 2) {
        e = weft_diag_set(c->d, WEFT_EINVAL, "sim: nvls_tree needs ranks on several hosts");
        goto out;
    }
    if ((algo == WEFT_SIM_INNET_COLLNET_DIRECT || algo == WEFT_SIM_INNET_COLLNET_CHAIN) && H < 2) {
        e = weft_diag_set(c->d, WEFT_EINVAL, "sim: %s needs ranks on several hosts",
                          weft_sim_innet_name(algo));
        goto out;
    }
    if (coll != WEFT_COLL_ALLREDUCE && (H > 1 || !nv)) {
        e = weft_diag_set(c->d, WEFT_EINVAL, "sim: %s runs %s inside one host only",
                          weft_sim_innet_name(algo), weft_coll_name(coll));
        goto out;
    }
    if (m > MAX_PER_HOST) {
        e = weft_diag_set(c->d, WEFT_ELIMIT,
                          "sim: in-network reduction with %u ranks per host "
                          "(the limit is %u)",
                          m, MAX_PER_HOST);
        goto out;
    }
    stage_kind k = nv ? ST_NVLS : algo == WEFT_SIM_INNET_COLLNET_DIRECT ? ST_DIRECT : ST_CHAIN;
    uint32_t P = algo == WEFT_SIM_INNET_NVLS_TREE ? 2 : 1;
    double bytes = (double)size / m / P;
    if (algo != WEFT_SIM_INNET_NVLS_TREE && H > 1)
        bytes = (double)size / m;
    deps *red = calloc(H, sizeof *red), *fin = calloc(H, sizeof *fin);
    if (!red || !fin) {
        free(red);
        free(fin);
        e = weft_diag_code(c->d, WEFT_ENOMEM);
        goto out;
    }
    for (uint32_t j = 0; !e && j < m; j++) {
        for (uint32_t q = 0; !e && q < P; q++) {
            if (coll == WEFT_COLL_ALLGATHER) {
                /* Each rank multicasts its own shard. */
                deps none = {0, {0}};
                e = bcast_stage(c, &g, k, 0, j, bytes, &none);
                continue;
            }
            for (uint32_t h = 0; !e && h < H; h++)
                e = reduce_stage(c, &g, k, h, j, bytes, &red[h]);
            if (e || coll == WEFT_COLL_REDUCESCATTER)
                continue;
            if (H == 1)
                fin[0] = red[0];
            else if (algo == WEFT_SIM_INNET_NVLS_TREE)
                e = tree_stage(c, &g, j, q, bytes, red, fin);
            else
                e = sharp_stage(c, &g, j, bytes, red, fin);
            for (uint32_t h = 0; !e && h < H; h++)
                e = bcast_stage(c, &g, k, h, j, bytes, &fin[h]);
        }
    }
    free(red);
    free(fin);
out:
    free(g.node);
    free(g.sw);
    return e;
}

weft_err weft_sim_innet(const weft_topo *t, weft_coll coll, weft_sim_innet_algo algo,
                        const uint32_t *order, uint32_t n, uint32_t group, uint64_t size,
                        const weft_sim_opts *o, weft_sim_result *out, weft_diag *d)
{
    uint32_t nr = weft_topo_num_ranks(t);
    if (!order)
        n = group = nr;
    if ((unsigned)algo >= WEFT__SIM_INNET_COUNT ||
        (coll != WEFT_COLL_ALLREDUCE && coll != WEFT_COLL_ALLGATHER &&
         coll != WEFT_COLL_REDUCESCATTER))
        return weft_diag_set(d, WEFT_EINVAL, "sim: %s does not run %s", weft_sim_innet_name(algo),
                             weft_coll_name(coll));
    if (group < 2 || n % group != 0 || size == 0)
        return weft_diag_set(d, WEFT_EINVAL,
                             "sim: in-network reduction needs groups of >= 2 ranks dividing %u "
                             "and a size > 0",
                             n);
    uint32_t *all = NULL;
    if (!order) {
        all = malloc(nr * sizeof *all);
        if (!all)
            return weft_diag_code(d, WEFT_ENOMEM);
        for (uint32_t r = 0; r < nr; r++)
            all[r] = r;
        order = all;
    }
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t k = (i / group) * group; k < i; k++)
            if (order[k] == order[i] || order[i] >= nr) {
                free(all);
                return weft_diag_set(d, WEFT_EINVAL, "sim: position %u names rank %u twice or none",
                                     i, order[i]);
            }
        if (order[i] >= nr) {
            free(all);
            return weft_diag_set(d, WEFT_EINVAL, "sim: position %u names no rank (%u)", i,
                                 order[i]);
        }
    }
    ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.d = d;
    weft_err e = weft_sim_opts_resolve(o, t, coll, size, size / group, &c.r, d);
    if (e) {
        free(all);
        return e;
    }
    if (c.r.model == WEFT_SIM_GPU) {
        c.r.proto = 2; /* Simple (weft_proto) */
        c.r.slices = 1;
        c.r.bw_scale = 1;
        c.r.step_bytes = 0;
        c.r.launch_s = algo == WEFT_SIM_INNET_COLLNET_DIRECT  ? LAT_COLLNET_DIRECT_S
                       : algo == WEFT_SIM_INNET_COLLNET_CHAIN ? LAT_COLLNET_CHAIN_S
                                                              : LAT_NVLS_S;
    }
    uint32_t nl = weft_topo_num_links(t);
    double *cap = malloc((nl ? nl : 1) * sizeof *cap), *bytes = NULL;
    if (!cap) {
        free(all);
        return weft_diag_code(d, WEFT_ENOMEM);
    }
    double nvls_eff = 1;
    if (c.r.model == WEFT_SIM_GPU &&
        (algo == WEFT_SIM_INNET_NVLS || algo == WEFT_SIM_INNET_NVLS_TREE)) {
        weft_gpu_arch a = WEFT_ARCH_HOPPER;
        weft_gpu_arch_parse(
            weft_topo_node_attr(t, weft_topo_rank_node(t, (weft_rank){order[0]}), "arch"), &a);
        nvls_eff = a >= WEFT_ARCH_BLACKWELL ? NVLS_EFF_BLACKWELL : NVLS_EFF_HOPPER;
    }
    for (uint32_t l = 0; l < nl; l++) {
        weft_link_id id = {l};
        cap[l] = sim_model_link_cap(&c.r, t, id);
        if (weft_topo_node_reduce(t, weft_topo_link_src(t, id)) == WEFT_REDUCE_NVLS ||
            weft_topo_node_reduce(t, weft_topo_link_dst(t, id)) == WEFT_REDUCE_NVLS)
            cap[l] *= nvls_eff;
    }
    /* NVLS-tree in the gpu model: one ceiling per head (one per rank, its
     * host's head of a shard), past the fabric's links. */
    uint32_t nchan = 0;
    if (c.r.model == WEFT_SIM_GPU && algo == WEFT_SIM_INNET_NVLS_TREE &&
        coll == WEFT_COLL_ALLREDUCE) {
        double gbps = nvls_tree_channel_gbps(t, order, group, nvls_eff < NVLS_EFF_HOPPER);
        if (gbps > 0) {
            double *grown = realloc(cap, (nl + n) * sizeof *cap);
            if (!grown) {
                free(cap);
                free(all);
                return weft_diag_code(d, WEFT_ENOMEM);
            }
            cap = grown;
            for (uint32_t k = 0; k < n; k++)
                cap[nl + k] = gbps * 1e9;
            nchan = n;
            c.chan_link = nl;
        }
    }
    e = sim_engine_new(nl + nchan, cap, NULL, &c.e);
    if (!e)
        e = weft_paths_new(t, &c.paths);
    if (e)
        e = weft_diag_code(d, e);
    for (uint32_t g0 = 0; !e && g0 < n; g0 += group) {
        c.chan_base = c.chan_link + g0;
        e = add_group(&c, algo, coll, order + g0, group, size);
    }
    if (!e)
        e = sim_engine_run(c.e, c.r.alpha_s, d);
    if (!e && !(bytes = malloc((nl ? nl : 1) * sizeof *bytes)))
        e = weft_diag_code(d, WEFT_ENOMEM);
    if (!e) {
        sim_engine_stats st;
        sim_engine_get_stats(c.e, &st);
        memset(out, 0, sizeof *out);
        out->coll = coll;
        out->ranks = group;
        out->size = size;
        out->time_s = st.makespan_s;
        out->algbw_gbps = st.makespan_s > 0 ? (double)size / st.makespan_s / 1e9 : 0;
        out->busbw_gbps = out->algbw_gbps * weft_sim_busbw_factor(coll, group);
        out->transfers = c.transfers;
        out->flows = sim_engine_num_flows(c.e);
        out->events = st.events;
        out->flow_classes = st.flow_classes;
        out->link_classes = nl;
        out->conservation_err = st.conservation_err;
        for (uint32_t l = 0; l < nl; l++)
            bytes[l] = sim_engine_link_bytes(c.e, l);
        sim_result_busiest_links(out, nl, bytes, cap);
        sim_result_finish(out, &c.r);
    }
    free(bytes);
    free(cap);
    free(all);
    weft_paths_free(c.paths);
    sim_engine_free(c.e);
    return e;
}
