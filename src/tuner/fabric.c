/* The sub-fabric a communicator spans (tuner.h, tuner_fabric_map).
 *
 * Hosts are ranked by their first rank; ranks without a host are a host
 * each. A node is kept when it is a chosen rank, a non-rank node of a
 * chosen host, or a node of no host; links between kept nodes are copied
 * with their bandwidth, latency and shaper, nodes with their attributes.
 * O(V + E) plus the build. */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "tuner/tuner.h"
#include "weft/topo.h"

/* Where the ranks of t sit: the host slot of each rank (hosts in order of
 * first rank, a hostless rank its own slot), and each rank's index in its
 * slot. */
typedef struct rank_slots {
    uint32_t n_slots;
    uint32_t *slot;  /* per rank */
    uint32_t *index; /* per rank: ranks of its slot before it */
    uint32_t *count; /* per slot: ranks */
    uint32_t *first; /* per slot: its first rank */
} rank_slots;

static void slots_fini(rank_slots *s)
{
    weft__free(s->slot);
    weft__free(s->index);
    weft__free(s->count);
    weft__free(s->first);
}

static weft_err slots_init(rank_slots *s, const weft_topo *t)
{
    uint32_t n = weft_topo_num_ranks(t), hosts = weft_topo_num_hosts(t);
    memset(s, 0, sizeof *s);
    s->slot = weft__malloc((size_t)n * sizeof *s->slot);
    s->index = weft__malloc((size_t)n * sizeof *s->index);
    s->count = weft__calloc(n, sizeof *s->count);
    s->first = weft__malloc((size_t)n * sizeof *s->first);
    uint32_t *host_slot = weft__malloc(((size_t)hosts + 1) * sizeof *host_slot);
    if (!s->slot || !s->index || !s->count || !s->first || !host_slot) {
        weft__free(host_slot);
        slots_fini(s);
        return WEFT_ENOMEM;
    }
    for (uint32_t h = 0; h < hosts; h++)
        host_slot[h] = UINT32_MAX;
    for (uint32_t r = 0; r < n; r++) {
        int32_t h = weft_topo_node_host(t, weft_topo_rank_node(t, (weft_rank){r}));
        uint32_t sl;
        if (h == WEFT_NO_HOST || host_slot[h] == UINT32_MAX) {
            sl = s->n_slots++;
            s->first[sl] = r;
            if (h != WEFT_NO_HOST)
                host_slot[h] = sl;
        } else {
            sl = host_slot[h];
        }
        s->slot[r] = sl;
        s->index[r] = s->count[sl]++;
    }
    weft__free(host_slot);
    return WEFT_OK;
}

/* Copies node v of t into b with its attributes ("k=v k=v"). */
static weft_err copy_node(weft_topo_builder *b, const weft_topo *t, weft_node_id v,
                          weft_node_id *out)
{
    int32_t h = weft_topo_node_host(t, v);
    weft_err e =
        weft_topo_builder_add_node(b, weft_topo_node_name(t, v), weft_topo_node_kind(t, v),
                                   h == WEFT_NO_HOST ? NULL : weft_topo_host_name(t, h), out);
    const char *a = weft_topo_node_attrs(t, v);
    while (!e && *a) {
        while (*a == ' ')
            a++;
        size_t len = strcspn(a, " ");
        if (len == 0)
            break;
        char kv[2 * WEFT_TOPO_NAME_MAX + 2];
        if (len >= sizeof kv)
            return WEFT_ELIMIT;
        memcpy(kv, a, len);
        kv[len] = '\0';
        char *eq = strchr(kv, '=');
        if (eq) {
            *eq = '\0';
            e = weft_topo_builder_set_attr(b, *out, kv, eq + 1);
        }
        a += len;
    }
    return e;
}

/* Builds the sub-fabric of t that keeps node v when keep[v]. */
static weft_err build_sub(const weft_topo *t, const bool *keep, weft_topo **out, weft_diag *d)
{
    uint32_t nv = weft_topo_num_nodes(t);
    uint32_t *id = weft__malloc((size_t)nv * sizeof *id);
    weft_topo_builder *b = NULL;
    weft_err e = id ? weft_topo_builder_new(&b) : WEFT_ENOMEM;
    for (uint32_t v = 0; !e && v < nv; v++) {
        weft_node_id nid;
        if (!keep[v])
            continue;
        e = copy_node(b, t, (weft_node_id){v}, &nid);
        id[v] = nid.v;
    }
    for (uint32_t v = 0; !e && v < nv; v++) {
        if (!keep[v])
            continue;
        uint32_t first, count;
        weft_topo_out_links(t, (weft_node_id){v}, &first, &count);
        for (uint32_t k = 0; !e && k < count; k++) {
            weft_link_id l = {first + k};
            weft_node_id w = weft_topo_link_dst(t, l);
            if (!keep[w.v])
                continue;
            e = weft_topo_builder_add_link(b, (weft_node_id){id[v]}, (weft_node_id){id[w.v]},
                                           weft_topo_link_bw(t, l), weft_topo_link_lat(t, l));
            weft_link_shaper sh;
            if (!e && weft_topo_link_shaper(t, l, &sh))
                e = weft_topo_builder_shape_links(b, 1, sh);
        }
    }
    weft__free(id);
    if (e) {
        weft_topo_builder_free(b);
        return weft_diag_code(d, e);
    }
    return weft_topo_build(b, out, d); /* consumes b */
}

weft_err tuner_fabric_map(const char *spec, uint64_t ranks, uint64_t nodes, weft_nccl_fabric *out,
                          weft_diag *d)
{
    if (nodes == 0 || ranks < 2 || ranks % nodes != 0)
        return weft_diag_set(d, WEFT_EINVAL,
                             "the communicator's %llu ranks on %llu nodes: weft needs at least 2 "
                             "ranks, the same number on every node",
                             (unsigned long long)ranks, (unsigned long long)nodes);
    uint64_t per = ranks / nodes;
    weft_topo *t = NULL, *sub = NULL;
    weft_err e = weft_topo_from_spec(spec, NULL, &t, d);
    if (e)
        return e;
    rank_slots s;
    e = slots_init(&s, t);
    if (e) {
        weft_topo_free(t);
        return weft_diag_code(d, e);
    }
    uint32_t nr = weft_topo_num_ranks(t);
    if (s.n_slots < nodes) {
        e = weft_diag_set(d, WEFT_ETOPO,
                          "the fabric has %u hosts, the communicator spans %llu nodes", s.n_slots,
                          (unsigned long long)nodes);
        goto out_slots;
    }
    for (uint32_t h = 0; h < nodes; h++) {
        if (s.count[h] < per) {
            weft_node_id v = weft_topo_rank_node(t, (weft_rank){s.first[h]});
            int32_t host = weft_topo_node_host(t, v);
            e = weft_diag_set(d, WEFT_ETOPO,
                              "host %s of the fabric has %u ranks, the communicator %llu per "
                              "node (%llu ranks on %llu nodes)",
                              host == WEFT_NO_HOST ? weft_topo_node_name(t, v)
                                                   : weft_topo_host_name(t, host),
                              s.count[h], (unsigned long long)per, (unsigned long long)ranks,
                              (unsigned long long)nodes);
            goto out_slots;
        }
    }
    const weft_topo *use = t;
    if (ranks < nr) {
        uint32_t nv = weft_topo_num_nodes(t), hosts = weft_topo_num_hosts(t);
        bool *keep = weft__calloc(nv, sizeof *keep);
        bool *host_on = weft__calloc((size_t)hosts + 1, sizeof *host_on);
        if (!keep || !host_on) {
            weft__free(keep);
            weft__free(host_on);
            e = weft_diag_code(d, WEFT_ENOMEM);
            goto out_slots;
        }
        for (uint32_t r = 0; r < nr; r++) {
            weft_node_id v = weft_topo_rank_node(t, (weft_rank){r});
            int32_t h = weft_topo_node_host(t, v);
            bool chosen = s.slot[r] < nodes && s.index[r] < per;
            keep[v.v] = chosen;
            if (chosen && h != WEFT_NO_HOST)
                host_on[h] = true;
        }
        for (uint32_t v = 0; v < nv; v++) {
            if (weft_topo_node_kind(t, (weft_node_id){v}) == WEFT_NODE_COMPUTE)
                continue;
            int32_t h = weft_topo_node_host(t, (weft_node_id){v});
            keep[v] = h == WEFT_NO_HOST || host_on[h];
        }
        e = build_sub(t, keep, &sub, d);
        weft__free(keep);
        weft__free(host_on);
        if (e)
            goto out_slots;
        use = sub;
    }
    e = weft_nccl_fabric_get(use, out, d);
out_slots:
    slots_fini(&s);
    weft_topo_free(sub);
    weft_topo_free(t);
    return e;
}
