/* Reading a built fabric: counts, nodes, ranks, hosts, attributes, links
 * (out-links in CSR order, in-links grouped by destination), lookups by
 * name and by endpoints, the note, and equality of two fabrics. All O(1)
 * except where a lookup says otherwise. See weft/topo.h for the contract and
 * graph_internal.h for the layout. */
#include <string.h>

#include "topo/graph_internal.h"
#include "topo/units.h"

uint32_t weft_topo_num_nodes(const weft_topo *t)
{
    return t->n_nodes;
}

uint32_t weft_topo_num_links(const weft_topo *t)
{
    return t->n_links;
}

uint32_t weft_topo_num_ranks(const weft_topo *t)
{
    return t->n_ranks;
}

uint32_t weft_topo_num_hosts(const weft_topo *t)
{
    return t->n_hosts;
}

const char *weft_topo_node_name(const weft_topo *t, weft_node_id n)
{
    return t->strings + t->node_name[n.v];
}

weft_node_kind weft_topo_node_kind(const weft_topo *t, weft_node_id n)
{
    return (weft_node_kind)t->node_kind[n.v];
}

int32_t weft_topo_node_host(const weft_topo *t, weft_node_id n)
{
    return t->node_host[n.v];
}

const char *weft_topo_host_name(const weft_topo *t, int32_t host)
{
    if (host < 0 || (uint32_t)host >= t->n_hosts)
        return NULL;
    return t->strings + t->host_name[host];
}

const char *weft_topo_node_attrs(const weft_topo *t, weft_node_id n)
{
    return t->strings + t->node_attrs[n.v];
}

const char *weft_topo_node_attr(const weft_topo *t, weft_node_id n, const char *key)
{
    if (strcmp(key, "host") == 0)
        return weft_topo_host_name(t, t->node_host[n.v]);
    for (uint32_t i = t->attr_start[n.v]; i < t->attr_start[n.v + 1]; i++) {
        if (strcmp(t->strings + t->attr_key[i], key) == 0)
            return t->strings + t->attr_val[i];
    }
    return NULL;
}

weft_reduce_kind weft_topo_node_reduce(const weft_topo *t, weft_node_id n)
{
    const char *v =
        t->node_kind[n.v] == WEFT_NODE_SWITCH ? weft_topo_node_attr(t, n, "reduce") : NULL;
    if (!v || strcmp(v, "0") == 0)
        return WEFT_REDUCE_NONE;
    if (strcmp(v, "nvls") == 0)
        return WEFT_REDUCE_NVLS;
    if (strcmp(v, "sharp") == 0)
        return WEFT_REDUCE_SHARP;
    /* reduce=1: the kind the switch's place implies. */
    return t->node_host[n.v] != WEFT_NO_HOST ? WEFT_REDUCE_NVLS : WEFT_REDUCE_SHARP;
}

bool weft_topo_has_ocs(const weft_topo *t)
{
    for (uint32_t v = 0; v < t->n_nodes; v++)
        if (t->node_kind[v] == WEFT_NODE_OCS)
            return true;
    return false;
}

weft_rat weft_topo_ocs_reconfig_ns(const weft_topo *t, weft_node_id n)
{
    weft_rat ns = weft_rat_int(0);
    const char *v =
        t->node_kind[n.v] == WEFT_NODE_OCS ? weft_topo_node_attr(t, n, "reconfig") : NULL;
    const char *why;
    size_t where;
    /* weft_topo_build checked that the value parses. */
    if (v && strcmp(v, "0") != 0 &&
        weft__quantity_parse(WEFT_QTY_LATENCY, v, strlen(v), NULL, &ns, &why, &where))
        ns = weft_rat_int(0);
    return ns;
}

bool weft_topo_find_node(const weft_topo *t, const char *name, weft_node_id *out)
{
    uint32_t v;
    if (!weft__name_index_find(&t->names, t->strings, t->node_name, name, strlen(name), &v))
        return false;
    out->v = v;
    return true;
}

weft_node_id weft_topo_rank_node(const weft_topo *t, weft_rank r)
{
    weft_node_id n = {t->rank_node[r.v]};
    return n;
}

bool weft_topo_node_rank(const weft_topo *t, weft_node_id n, weft_rank *out)
{
    if (t->node_rank[n.v] == UINT32_MAX)
        return false;
    out->v = t->node_rank[n.v];
    return true;
}

weft_node_id weft_topo_link_src(const weft_topo *t, weft_link_id l)
{
    weft_node_id n = {t->link_src[l.v]};
    return n;
}

weft_node_id weft_topo_link_dst(const weft_topo *t, weft_link_id l)
{
    weft_node_id n = {t->link_dst[l.v]};
    return n;
}

weft_rat weft_topo_link_bw(const weft_topo *t, weft_link_id l)
{
    return t->link_bw[l.v];
}

weft_rat weft_topo_link_lat(const weft_topo *t, weft_link_id l)
{
    return t->link_lat[l.v];
}

void weft_topo_out_links(const weft_topo *t, weft_node_id n, uint32_t *first, uint32_t *count)
{
    *first = t->out_start[n.v];
    *count = t->out_start[n.v + 1] - t->out_start[n.v];
}

const uint32_t *weft_topo_in_links(const weft_topo *t, weft_node_id n, uint32_t *count)
{
    *count = t->in_start[n.v + 1] - t->in_start[n.v];
    return t->in_links + t->in_start[n.v];
}

bool weft_topo_find_link(const weft_topo *t, weft_node_id src, weft_node_id dst, weft_link_id *out)
{
    uint32_t lo = t->out_start[src.v], hi = t->out_start[src.v + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->link_dst[mid] < dst.v)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < t->out_start[src.v + 1] && t->link_dst[lo] == dst.v) {
        out->v = lo;
        return true;
    }
    return false;
}

const char *weft_topo_note(const weft_topo *t)
{
    return t->note;
}

const char *weft_topo_assumptions(const weft_topo *t)
{
    return t->assumed;
}

bool weft_topo_link_shaper(const weft_topo *t, weft_link_id l, weft_link_shaper *out)
{
    if (t->link_shaper && t->link_shaper[l.v].burst_bytes) {
        *out = t->link_shaper[l.v];
        return true;
    }
    *out = (weft_link_shaper){0, {0, 1}};
    return false;
}

bool weft__topo_same_shaper(const weft_topo *a, uint32_t la, const weft_topo *b, uint32_t lb)
{
    weft_link_shaper x, y;
    bool hx = weft_topo_link_shaper(a, (weft_link_id){la}, &x);
    bool hy = weft_topo_link_shaper(b, (weft_link_id){lb}, &y);
    return hx == hy &&
           (!hx || (x.burst_bytes == y.burst_bytes && weft_rat_eq(x.peak_gbps, y.peak_gbps)));
}

bool weft_topo_equal(const weft_topo *a, const weft_topo *b)
{
    if (a->n_nodes != b->n_nodes || a->n_links != b->n_links || a->n_ranks != b->n_ranks)
        return false;
    for (uint32_t v = 0; v < a->n_nodes; v++) {
        weft_node_id n = {v};
        const char *ha = weft_topo_host_name(a, a->node_host[v]);
        const char *hb = weft_topo_host_name(b, b->node_host[v]);
        if (a->node_kind[v] != b->node_kind[v] ||
            strcmp(weft_topo_node_name(a, n), weft_topo_node_name(b, n)) != 0 ||
            strcmp(weft_topo_node_attrs(a, n), weft_topo_node_attrs(b, n)) != 0 ||
            (ha == NULL) != (hb == NULL) || (ha && strcmp(ha, hb) != 0))
            return false;
    }
    for (uint32_t l = 0; l < a->n_links; l++) {
        if (a->link_src[l] != b->link_src[l] || a->link_dst[l] != b->link_dst[l] ||
            !weft_rat_eq(a->link_bw[l], b->link_bw[l]) ||
            !weft_rat_eq(a->link_lat[l], b->link_lat[l]) || !weft__topo_same_shaper(a, l, b, l))
            return false;
    }
    return true;
}
