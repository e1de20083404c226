/* The rules an optical circuit switch's links obey (weft/topo.h,
 * docs/topo-format.md "ocs"), checked when a fabric is built: the links of an
 * ocs node are its ports, so each joins it to a compute, nic or switch node
 * in both directions at one bandwidth (a port is a pair of fibres, and a
 * circuit joins two ports both ways), never to another ocs (a circuit ends at
 * a port; two mirrors in series are one circuit of a bigger switch), and its
 * reconfig= delay, when given, is a latency with a unit. */
#include <string.h>

#include "topo/graph_internal.h"
#include "topo/units.h"

static const char *name(const weft_topo *t, uint32_t v)
{
    return t->strings + t->node_name[v];
}

static bool find_link(const weft_topo *t, uint32_t src, uint32_t dst, uint32_t *out)
{
    for (uint32_t l = t->out_start[src]; l < t->out_start[src + 1]; l++) {
        if (t->link_dst[l] == dst) {
            *out = l;
            return true;
        }
    }
    return false;
}

/* The links into and out of ocs node v, each checked against its twin. */
static weft_err check_ports(const weft_topo *t, uint32_t v, weft_diag *d)
{
    for (uint32_t l = t->out_start[v]; l < t->out_start[v + 1]; l++) {
        uint32_t w = t->link_dst[l], back;
        if (t->node_kind[w] == WEFT_NODE_OCS)
            return weft_diag_set(d, WEFT_ETOPO,
                                 "ocs '%s' has a link to ocs '%s': an OCS port joins a compute, "
                                 "nic or switch node, not another OCS",
                                 name(t, v), name(t, w));
        if (!find_link(t, w, v, &back))
            return weft_diag_set(d, WEFT_ETOPO,
                                 "ocs '%s' has a link to '%s' but none back: an OCS port is a "
                                 "duplex pair (use duplex)",
                                 name(t, v), name(t, w));
        if (!weft_rat_eq(t->link_bw[l], t->link_bw[back])) {
            char a[48], b[48];
            weft_rat_format_exact(t->link_bw[l], a, sizeof a);
            weft_rat_format_exact(t->link_bw[back], b, sizeof b);
            return weft_diag_set(d, WEFT_ETOPO,
                                 "ocs '%s' port to '%s' has %s GB/s out and %s GB/s in: a circuit "
                                 "carries one rate both ways",
                                 name(t, v), name(t, w), a, b);
        }
    }
    for (uint32_t i = t->in_start[v]; i < t->in_start[v + 1]; i++) {
        uint32_t l = t->in_links[i], w = t->link_src[l], fwd;
        if (t->node_kind[w] != WEFT_NODE_OCS && !find_link(t, v, w, &fwd))
            return weft_diag_set(d, WEFT_ETOPO,
                                 "ocs '%s' has a link from '%s' but none to it: an OCS port is "
                                 "a duplex pair (use duplex)",
                                 name(t, v), name(t, w));
    }
    return WEFT_OK;
}

static weft_err check_reconfig(const weft_topo *t, uint32_t v, weft_diag *d)
{
    for (uint32_t i = t->attr_start[v]; i < t->attr_start[v + 1]; i++) {
        if (strcmp(t->strings + t->attr_key[i], "reconfig") != 0)
            continue;
        const char *val = t->strings + t->attr_val[i], *why;
        size_t where;
        weft_rat ns;
        if (strcmp(val, "0") != 0 &&
            weft__quantity_parse(WEFT_QTY_LATENCY, val, strlen(val), NULL, &ns, &why, &where))
            return weft_diag_set(d, WEFT_ETOPO,
                                 "ocs '%s': bad reconfig=%s: %s (a delay such as 25us; units %s)",
                                 name(t, v), val, why, weft__latency_units);
    }
    return WEFT_OK;
}

weft_err weft__topo_check_ocs(const weft_topo *t, weft_diag *d)
{
    for (uint32_t v = 0; v < t->n_nodes; v++) {
        if (t->node_kind[v] != WEFT_NODE_OCS)
            continue;
        weft_err e = check_ports(t, v, d);
        if (!e)
            e = check_reconfig(t, v, d);
        if (e)
            return e;
    }
    return WEFT_OK;
}
