/* The verifier's messages: how an op and a slot range are named in what it
 * reports ("op 3 (rank 0 -> rank 1, in[0..1] -> out[2..3])"), and the two
 * failures every part of it returns. At the bottom of the verifier's file
 * order (see verify_internal.h): it calls no other file of it. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plan/verify_internal.h"

void weft__verify_describe_range(weft_buf b, uint32_t index, uint32_t count, char *buf, size_t size)
{
    if (count <= 1)
        snprintf(buf, size, "%s[%u]", weft_buf_name(b), index);
    else
        snprintf(buf, size, "%s[%u..%u]", weft_buf_name(b), index, index + count - 1);
}

/* "op 17 (rank 3 -> rank 5, out[12])" */
static void describe_op(const weft_plan *p, uint32_t id, char *buf, size_t size)
{
    weft_op op = p->ops[id];
    if (op.kind == WEFT_OP_NOP) {
        snprintf(buf, size, "op %u (%s on rank %u)", id,
                 weft_plan_op_compute(p, id) != WEFT_COMPUTE_NONE
                     ? weft_compute_name(weft_plan_op_compute(p, id))
                     : "nop",
                 op.src_rank.v);
        return;
    }
    char s[64], t[64];
    weft__verify_describe_range(op.src_buf, op.src_index, op.count, s, sizeof s);
    weft__verify_describe_range(op.dst_buf, op.dst_index, op.count, t, sizeof t);
    if (strcmp(s, t) == 0)
        snprintf(buf, size, "op %u (rank %u -> rank %u, %s)", id, op.src_rank.v, op.dst_rank.v, s);
    else
        snprintf(buf, size, "op %u (rank %u -> rank %u, %s -> %s)", id, op.src_rank.v,
                 op.dst_rank.v, s, t);
}

weft_err weft__verify_fail(verifier *v, uint32_t id, const char *fmt, ...)
{
    char head[200], msg[700];
    describe_op(v->p, id, head, sizeof head);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return weft_diag_set(v->d, WEFT_EVERIFY, "%s: %s", head, msg);
}

weft_err weft__verify_oom(verifier *v)
{
    return weft_diag_code(v->d, WEFT_ENOMEM);
}
