/* One topological order of a plan's ops (Kahn's algorithm), shared by the
 * plan tools that walk ops deps-first (cost model, MSCCL export). */
#include "base/alloc.h"
#include "plan/plan_internal.h"

weft_err weft__plan_topo_order(const weft_plan *p, uint32_t *order, uint32_t *stuck, weft_diag *d)
{
    uint32_t n = p->nops;
    weft_err e = WEFT_OK;
    uint32_t *indeg = weft__calloc(n ? n : 1, sizeof *indeg);
    uint64_t *start = weft__calloc((size_t)n + 1, sizeof *start);
    uint32_t *succ = NULL;
    uint64_t total = 0;
    if (!indeg || !start) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_all;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t nd;
        const uint32_t *deps = weft_plan_op_deps(p, i, &nd);
        for (uint32_t k = 0; k < nd; k++) {
            if (deps[k] >= n) {
                e = weft_diag_set(d, WEFT_EVERIFY, "op %u depends on op %u, which does not exist",
                                  i, deps[k]);
                goto free_all;
            }
            start[deps[k] + 1]++;
        }
        indeg[i] = nd;
        total += nd;
    }
    for (uint32_t i = 0; i < n; i++)
        start[i + 1] += start[i];
    succ = weft__malloc((size_t)(total ? total : 1) * sizeof *succ);
    if (!succ) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_all;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t nd;
        const uint32_t *deps = weft_plan_op_deps(p, i, &nd);
        for (uint32_t k = 0; k < nd; k++)
            succ[start[deps[k]]++] = i;
    }
    for (uint32_t i = n; i > 0; i--)
        start[i] = start[i - 1];
    start[0] = 0;
    /* order[] doubles as the queue: [head, tail) are ready, not yet taken. */
    uint32_t head = 0, tail = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (indeg[i] == 0)
            order[tail++] = i;
    }
    while (head < tail) {
        uint32_t v = order[head++];
        for (uint64_t k = start[v]; k < start[v + 1]; k++) {
            if (--indeg[succ[k]] == 0)
                order[tail++] = succ[k];
        }
    }
    if (tail < n) {
        uint32_t left = 0;
        while (indeg[left] == 0)
            left++;
        if (stuck)
            *stuck = left;
        e = weft_diag_set(d, WEFT_EVERIFY, "the plan's dependencies form a cycle");
    }
free_all:
    weft__free(succ);
    weft__free(start);
    weft__free(indeg);
    return e;
}

weft_err weft_plan_topo_order(const weft_plan *p, uint32_t *order, weft_diag *d)
{
    return weft__plan_topo_order(p, order, NULL, d);
}
