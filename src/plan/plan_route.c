/* Routes of a plan's ops: each op may carry paths (node names, at least two,
 * and a share of the op's bandwidth), added one at a time, cleared per op and
 * read back by index. Node names are interned (plan_names.c). The path tables
 * are allocated on the first path, so plans without routes pay nothing. See
 * weft/plan.h for the contract and plan_internal.h for the layout. */
#include <string.h>

#include "base/alloc.h"
#include "plan/plan_internal.h"

bool weft__plan_node_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > WEFT_TOPO_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch <= ' ' || ch == ',' || ch == '#' || ch == 0x7f)
            return false;
    }
    return true;
}

weft_err weft_plan_add_path(weft_plan *p, uint32_t id, weft_rat share, const char *const *nodes,
                            uint32_t nnodes)
{
    if (id >= p->nops || nnodes < 2 || share.den <= 0)
        return WEFT_EINVAL;
    for (uint32_t i = 0; i < nnodes; i++) {
        if (!weft__plan_node_name_ok(nodes[i]))
            return WEFT_EINVAL;
    }
    if (!p->path_start) {
        p->path_start = weft__calloc(p->op_cap, sizeof *p->path_start);
        p->path_count = weft__calloc(p->op_cap, sizeof *p->path_count);
        if (!p->path_start || !p->path_count) {
            weft__free(p->path_start);
            weft__free(p->path_count);
            p->path_start = p->path_count = NULL;
            return WEFT_ENOMEM;
        }
    }
    if (p->path_nodes_len + nnodes > UINT32_MAX || p->npaths + p->path_count[id] + 1 > UINT32_MAX)
        return WEFT_ELIMIT;
    /* Interning may fail half way; the names already interned stay, unused,
     * which is harmless. */
    if (weft__grow((void **)&p->path_nodes, &p->path_nodes_cap, p->path_nodes_len + nnodes,
                   sizeof *p->path_nodes))
        return WEFT_ENOMEM;
    for (uint32_t i = 0; i < nnodes; i++) {
        weft_err e = weft__plan_name_intern(p, nodes[i], strlen(nodes[i]),
                                            &p->path_nodes[p->path_nodes_len + i]);
        if (e)
            return e;
    }
    /* An op's paths are contiguous in the table; when they are not at its
     * end they move there first (the old entries become garbage). */
    uint32_t have = p->path_count[id];
    bool at_end = have == 0 || p->path_start[id] + have == p->npaths;
    size_t need = (size_t)p->npaths + 1 + (at_end ? 0 : have);
    if (weft__grow((void **)&p->paths, &p->path_cap, need, sizeof *p->paths))
        return WEFT_ENOMEM;
    if (!at_end) {
        memmove(p->paths + p->npaths, p->paths + p->path_start[id], have * sizeof *p->paths);
        p->path_start[id] = p->npaths;
        p->npaths += have;
    } else if (have == 0) {
        p->path_start[id] = p->npaths;
    }
    weft__plan_path *pt = &p->paths[p->npaths++];
    pt->share = share;
    pt->node_start = (uint32_t)p->path_nodes_len;
    pt->nnodes = nnodes;
    pt->epoch = WEFT_PLAN_NO_EPOCH;
    p->path_nodes_len += nnodes;
    p->path_count[id] = have + 1;
    return WEFT_OK;
}

void weft_plan_clear_route(weft_plan *p, uint32_t id)
{
    if (id < p->nops && p->path_count)
        p->path_count[id] = 0;
}

uint32_t weft_plan_op_num_paths(const weft_plan *p, uint32_t id)
{
    return p->path_count ? p->path_count[id] : 0;
}

weft_rat weft_plan_path_share(const weft_plan *p, uint32_t id, uint32_t k)
{
    return p->paths[p->path_start[id] + k].share;
}

uint32_t weft_plan_path_len(const weft_plan *p, uint32_t id, uint32_t k)
{
    return p->paths[p->path_start[id] + k].nnodes;
}

const char *weft_plan_path_node(const weft_plan *p, uint32_t id, uint32_t k, uint32_t i)
{
    const weft__plan_path *pt = &p->paths[p->path_start[id] + k];
    return weft__plan_name(p, p->path_nodes[pt->node_start + i]);
}
