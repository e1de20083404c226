/* The fabric of a group of ranks (weft/topo.h, weft_topo_subset): what a
 * communicator of those ranks sees, for ranking its collective's schedules
 * on it (weft/choose.h; docs/step.md, "Choosing each group's
 * collective"). */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "topo/graph_internal.h"

weft_err weft_topo_subset(const weft_topo *t, const uint32_t *ranks, uint32_t n, weft_topo **out,
                          weft_diag *d)
{
    *out = NULL;
    if (n == 0)
        return weft_diag_set(d, WEFT_EINVAL, "subset: no rank");
    bool *keep = weft__calloc(t->n_nodes ? t->n_nodes : 1, sizeof *keep);
    uint32_t *id = weft__malloc((t->n_nodes ? t->n_nodes : 1) * sizeof *id);
    if (!keep || !id) {
        weft__free(keep);
        weft__free(id);
        return weft_diag_code(d, WEFT_ENOMEM);
    }
    weft_err e = WEFT_OK;
    for (uint32_t v = 0; v < t->n_nodes; v++)
        keep[v] = t->node_kind[v] != WEFT_NODE_COMPUTE;
    for (uint32_t i = 0; i < n && !e; i++) {
        if (ranks[i] >= t->n_ranks)
            e = weft_diag_set(d, WEFT_EINVAL, "subset: rank %u of a fabric of %u ranks", ranks[i],
                              t->n_ranks);
        else if (keep[t->rank_node[ranks[i]]])
            e = weft_diag_set(d, WEFT_EINVAL, "subset: rank %u given twice", ranks[i]);
        else
            keep[t->rank_node[ranks[i]]] = true;
    }
    weft_topo_builder *b = NULL;
    if (!e && (e = weft_topo_builder_new(&b)))
        weft_diag_code(d, e);
    for (uint32_t v = 0; v < t->n_nodes && !e; v++) {
        if (!keep[v])
            continue;
        weft_node_id nv;
        const char *host =
            t->node_host[v] == WEFT_NO_HOST ? NULL : t->strings + t->host_name[t->node_host[v]];
        e = weft_topo_builder_add_node(b, t->strings + t->node_name[v],
                                       (weft_node_kind)t->node_kind[v], host, &nv);
        id[v] = nv.v;
        for (uint32_t k = t->attr_start[v]; k < t->attr_start[v + 1] && !e; k++)
            e = weft_topo_builder_set_attr(b, nv, t->strings + t->attr_key[k],
                                           t->strings + t->attr_val[k]);
        if (e)
            weft_diag_code(d, e);
    }
    for (uint32_t l = 0; l < t->n_links && !e; l++) {
        uint32_t s = t->link_src[l], dst = t->link_dst[l];
        if (!keep[s] || !keep[dst])
            continue;
        e = weft_topo_builder_add_link(b, (weft_node_id){id[s]}, (weft_node_id){id[dst]},
                                       t->link_bw[l], t->link_lat[l]);
        weft_link_shaper sh;
        if (!e && weft_topo_link_shaper(t, (weft_link_id){l}, &sh))
            e = weft_topo_builder_shape_links(b, 1, sh);
        if (e)
            weft_diag_code(d, e);
    }
    weft__free(keep);
    weft__free(id);
    if (e) {
        weft_topo_builder_free(b);
        return e;
    }
    return weft_topo_build(b, out, d);
}
