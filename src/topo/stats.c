/* weft_topo_get_stats: one pass over nodes and links plus two searches. */
#include <string.h>

#include "base/alloc.h"
#include "topo/graph_internal.h"

/* Marks every node reachable from `start` along links (forward) or against
 * them (backward). seen must be zeroed; stack has room for n_nodes. */
static void reach(const weft_topo *t, uint32_t start, bool forward, uint8_t *seen, uint32_t *stack)
{
    uint32_t top = 0;
    seen[start] = 1;
    stack[top++] = start;
    while (top) {
        uint32_t v = stack[--top];
        uint32_t lo = forward ? t->out_start[v] : t->in_start[v];
        uint32_t hi = forward ? t->out_start[v + 1] : t->in_start[v + 1];
        for (uint32_t i = lo; i < hi; i++) {
            uint32_t w = forward ? t->link_dst[i] : t->link_src[t->in_links[i]];
            if (!seen[w]) {
                seen[w] = 1;
                stack[top++] = w;
            }
        }
    }
}

static bool all_marked(const weft_topo *t, const uint8_t *seen, bool ranks_only)
{
    for (uint32_t v = 0; v < t->n_nodes; v++) {
        if (!seen[v] && (!ranks_only || t->node_kind[v] == WEFT_NODE_COMPUTE))
            return false;
    }
    return true;
}

static weft_err sum_bw(const weft_topo *t, uint32_t v, bool out, weft_rat *sum)
{
    weft_rat s = weft_rat_int(0);
    uint32_t lo = out ? t->out_start[v] : t->in_start[v];
    uint32_t hi = out ? t->out_start[v + 1] : t->in_start[v + 1];
    for (uint32_t i = lo; i < hi; i++) {
        uint32_t l = out ? i : t->in_links[i];
        weft_err e = weft_rat_add(s, t->link_bw[l], &s);
        if (e)
            return e;
    }
    *sum = s;
    return WEFT_OK;
}

weft_err weft_topo_get_stats(const weft_topo *t, weft_topo_stats *out)
{
    weft_topo_stats s;
    memset(&s, 0, sizeof s);
    s.ranks = t->n_ranks;
    s.nodes = t->n_nodes;
    s.links = t->n_links;
    s.hosts = t->n_hosts;
    s.switches_balanced = true;
    bool first_rank = true;
    for (uint32_t v = 0; v < t->n_nodes; v++) {
        s.nodes_by_kind[t->node_kind[v]]++;
        weft_rat in, outbw;
        weft_err e = sum_bw(t, v, true, &outbw);
        if (!e)
            e = sum_bw(t, v, false, &in);
        if (e)
            return e;
        if (t->node_kind[v] == WEFT_NODE_COMPUTE) {
            if (first_rank || weft_rat_cmp(outbw, s.min_injection) < 0)
                s.min_injection = outbw;
            if (first_rank || weft_rat_cmp(outbw, s.max_injection) > 0)
                s.max_injection = outbw;
            if (first_rank || weft_rat_cmp(in, s.min_ejection) < 0)
                s.min_ejection = in;
            if (first_rank || weft_rat_cmp(in, s.max_ejection) > 0)
                s.max_ejection = in;
            first_rank = false;
        } else if (!weft_rat_eq(in, outbw) && s.switches_balanced) {
            s.switches_balanced = false;
            s.first_unbalanced = t->strings + t->node_name[v];
        }
    }
    uint8_t *seen = weft__calloc(t->n_nodes, 1);
    uint32_t *stack = weft__malloc((size_t)t->n_nodes * sizeof *stack);
    if (!seen || !stack) {
        weft__free(seen);
        weft__free(stack);
        return WEFT_ENOMEM;
    }
    uint32_t r0 = t->rank_node[0];
    reach(t, r0, true, seen, stack);
    bool fwd_all = all_marked(t, seen, false), fwd_ranks = all_marked(t, seen, true);
    memset(seen, 0, t->n_nodes);
    reach(t, r0, false, seen, stack);
    bool bwd_all = all_marked(t, seen, false), bwd_ranks = all_marked(t, seen, true);
    s.strongly_connected = fwd_all && bwd_all;
    s.ranks_connected = fwd_ranks && bwd_ranks;
    weft__free(seen);
    weft__free(stack);
    *out = s;
    return WEFT_OK;
}
