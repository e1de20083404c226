/* What every classic builder starts a plan with (classic_internal.h). */
#include "synth/classic_internal.h"

weft_buf synth_main_buf(weft_coll coll)
{
    return coll == WEFT_COLL_REDUCESCATTER ? WEFT_BUF_IN : WEFT_BUF_OUT;
}

weft_err synth_plan_new(const synth_ctx *c, uint32_t chunks, uint32_t scratch, weft_plan **out)
{
    weft_plan_info info = {
        .coll = c->coll,
        .nranks = c->n,
        .root = {weft_coll_has_root(c->coll) ? c->root : 0},
        .chunks = chunks,
        .scratch = scratch,
        .inplace = c->coll != WEFT_COLL_ALLTOALL,
    };
    weft_err e = weft_plan_new(&info, out);
    if (!e)
        weft_plan_limit_ops(*out, c->max_ops);
    return e;
}
