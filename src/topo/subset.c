/* The fabric of a group of ranks (weft/topo.h, weft_topo_subset): what a
 * communicator of those ranks sees, for ranking its collective's schedules
 * on it (weft/choose.h; docs/step.md, "Choosing each group's
 * collective"). */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "topo/graph_internal.h"

/* Whether every rank of ranks[0 .. n) reaches ranks[0] and is reached from
 * it over the kept nodes (forward and backward searches from it). */
static bool connected(const weft_topo *t, const bool *keep, const uint32_t *ranks, uint32_t n,
                      uint32_t *queue, bool *seen)
{
    for (int dir = 0; dir < 2; dir++) {
        memset(seen, 0, t->n_nodes * sizeof *seen);
        size_t head = 0, tail = 0;
        queue[tail++] = t->rank_node[ranks[0]];
        seen[queue[0]] = true;
        while (head < tail) {
            uint32_t v = queue[head++];
            uint32_t lo = dir ? t->in_start[v] : t->out_start[v];
            uint32_t hi = dir ? t->in_start[v + 1] : t->out_start[v + 1];
            for (uint32_t k = lo; k < hi; k++) {
                uint32_t w = dir ? t->link_src[t->in_links[k]] : t->link_dst[k];
                if (keep[w] && !seen[w]) {
                    seen[w] = true;
                    queue[tail++] = w;
                }
            }
        }
        for (uint32_t i = 1; i < n; i++)
            if (!seen[t->rank_node[ranks[i]]])
                return false;
    }
    return true;
}

weft_err weft_topo_subset(const weft_topo *t, const uint32_t *ranks, uint32_t n, weft_topo **out,
                          weft_diag *d)
{
    *out = NULL;
    if (n == 0)
        return weft_diag_set(d, WEFT_EINVAL, "subset: no rank");
    size_t nn = t->n_nodes ? t->n_nodes : 1;
    bool *keep = weft__calloc(nn, sizeof *keep), *seen = weft__calloc(nn, sizeof *seen);
    bool *demote = weft__calloc(nn, sizeof *demote);
    uint32_t *id = weft__malloc(nn * sizeof *id);
    if (!keep || !seen || !demote || !id) {
        weft__free(keep);
        weft__free(seen);
        weft__free(demote);
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
    /* Where the other ranks forward (a torus, a ring of GPUs), the group
     * may be cut apart without them: they stay then, as switches. */
    if (!e && !connected(t, keep, ranks, n, id, seen)) {
        for (uint32_t v = 0; v < t->n_nodes; v++) {
            demote[v] = !keep[v];
            keep[v] = true;
        }
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
        e = weft_topo_builder_add_node(
            b, t->strings + t->node_name[v],
            demote[v] ? WEFT_NODE_SWITCH : (weft_node_kind)t->node_kind[v], host, &nv);
        id[v] = nv.v;
        /* A rank's attributes (arch=, ...) describe a processor: a
         * demoted rank keeps none. */
        for (uint32_t k = t->attr_start[v]; k < t->attr_start[v + 1] && !e && !demote[v]; k++)
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
    weft__free(seen);
    weft__free(demote);
    weft__free(id);
    if (e) {
        weft_topo_builder_free(b);
        return e;
    }
    return weft_topo_build(b, out, d);
}
