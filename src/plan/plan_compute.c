/* Compute ops: a nop's local compute (weft/plan.h, weft_compute), kept
 * beside the ops (plan_internal.h) so that a plan without compute carries
 * nothing for it and weft_op stays as every reader knows it. */
#include <string.h>

#include "base/alloc.h"
#include "plan/plan_internal.h"

weft_err weft_plan_set_op_compute(weft_plan *p, uint32_t id, weft_compute c)
{
    if (id >= p->nops || (unsigned)c >= WEFT__COMPUTE_COUNT ||
        (c != WEFT_COMPUTE_NONE && p->ops[id].kind != WEFT_OP_NOP))
        return WEFT_EINVAL;
    if (!p->compute) {
        if (c == WEFT_COMPUTE_NONE)
            return WEFT_OK;
        p->compute = weft__calloc(p->op_cap ? p->op_cap : 1, 1);
        if (!p->compute)
            return WEFT_ENOMEM;
    }
    p->compute[id] = (uint8_t)c;
    return WEFT_OK;
}

weft_compute weft_plan_op_compute(const weft_plan *p, uint32_t id)
{
    return p->compute && id < p->nops ? (weft_compute)p->compute[id] : WEFT_COMPUTE_NONE;
}

weft_err weft_plan_add_compute(weft_plan *p, weft_rank rank, weft_compute c, const uint32_t *deps,
                               uint32_t ndeps, uint32_t *id)
{
    if (c == WEFT_COMPUTE_NONE || (unsigned)c >= WEFT__COMPUTE_COUNT)
        return WEFT_EINVAL;
    weft_op op;
    memset(&op, 0, sizeof op);
    op.kind = WEFT_OP_NOP;
    op.src_rank = op.dst_rank = rank;
    uint32_t at;
    weft_err e = weft_plan_add_op(p, &op, deps, ndeps, &at);
    if (!e && (e = weft_plan_set_op_compute(p, at, c)))
        weft_plan_remove_op(p, at);
    if (!e && id)
        *id = at;
    return e;
}
