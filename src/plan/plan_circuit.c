/* Circuit configurations of a plan (weft/plan.h, "Circuits"): the circuits
 * of every epoch in one array of interned name ids, and the epoch of each
 * route path (kept in the path's entry, so editing ops keeps it). Checking
 * them is the verifier's (verify_circuits.c). */
#include <string.h>

#include "base/alloc.h"
#include "plan/plan_internal.h"

weft_err weft_plan_add_circuit(weft_plan *p, uint32_t epoch, const char *ocs, const char *from,
                               const char *to)
{
    if (epoch >= WEFT_PLAN_MAX_EPOCHS || !weft__plan_node_name_ok(ocs) ||
        !weft__plan_node_name_ok(from) || !weft__plan_node_name_ok(to))
        return WEFT_EINVAL;
    if (p->ncircuits >= UINT32_MAX - 1)
        return WEFT_ELIMIT;
    if (weft__grow((void **)&p->circuits, &p->circuit_cap, p->ncircuits + 1, sizeof *p->circuits))
        return WEFT_ENOMEM;
    weft__plan_circuit c = {.epoch = epoch};
    weft_err e = weft__plan_name_intern(p, ocs, strlen(ocs), &c.ocs);
    if (!e)
        e = weft__plan_name_intern(p, from, strlen(from), &c.from);
    if (!e)
        e = weft__plan_name_intern(p, to, strlen(to), &c.to);
    if (e)
        return e;
    p->circuits[p->ncircuits++] = c;
    return WEFT_OK;
}

uint32_t weft_plan_num_circuits(const weft_plan *p)
{
    return (uint32_t)p->ncircuits;
}

weft_plan_circuit weft_plan_get_circuit(const weft_plan *p, uint32_t i)
{
    const weft__plan_circuit *c = &p->circuits[i];
    weft_plan_circuit out = {c->epoch, weft__plan_name(p, c->ocs), weft__plan_name(p, c->from),
                             weft__plan_name(p, c->to)};
    return out;
}

uint32_t weft_plan_num_epochs(const weft_plan *p)
{
    uint32_t n = 0;
    for (size_t i = 0; i < p->ncircuits; i++)
        if (p->circuits[i].epoch + 1 > n)
            n = p->circuits[i].epoch + 1;
    return n;
}

weft_err weft_plan_set_path_epoch(weft_plan *p, uint32_t id, uint32_t k, uint32_t epoch)
{
    if (id >= p->nops || k >= weft_plan_op_num_paths(p, id) ||
        (epoch != WEFT_PLAN_NO_EPOCH && epoch >= WEFT_PLAN_MAX_EPOCHS))
        return WEFT_EINVAL;
    p->paths[p->path_start[id] + k].epoch = epoch;
    return WEFT_OK;
}

uint32_t weft_plan_path_epoch(const weft_plan *p, uint32_t id, uint32_t k)
{
    return p->paths[p->path_start[id] + k].epoch;
}
