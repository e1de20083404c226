/* Alltoallv plans: a traffic matrix on an alltoall plan, the sizes of its
 * chunks and the bytes each op moves (weft/plan.h, "Alltoallv"). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "plan/plan_internal.h"
#include "plan/plan_layout.h"

weft_err weft_plan_set_traffic(weft_plan *p, const weft_traffic *t, weft_diag *d)
{
    if (p->op_bytes)
        return weft_diag_set(d, WEFT_EINVAL, "the plan has op sizes; it takes no traffic matrix");
    if (p->info.coll != WEFT_COLL_ALLTOALL)
        return weft_diag_set(d, WEFT_EINVAL,
                             "a traffic matrix gives the sizes of an alltoall plan, not %s",
                             weft_coll_name(p->info.coll));
    if (t->ranks != p->info.nranks)
        return weft_diag_set(d, WEFT_EINVAL,
                             "the traffic matrix has %" PRIu32 " ranks, the plan %" PRIu32,
                             t->ranks, p->info.nranks);
    weft_err e = weft_traffic_check(t, d);
    if (e)
        return e;
    size_t nn = (size_t)t->ranks * t->ranks;
    uint64_t *b = weft__malloc(nn * sizeof *b);
    if (!b)
        return weft_diag_code(d, WEFT_ENOMEM);
    memcpy(b, t->bytes, nn * sizeof *b);
    weft_traffic_free(&p->traffic);
    p->traffic.ranks = t->ranks;
    p->traffic.bytes = b;
    return WEFT_OK;
}

const weft_traffic *weft_plan_traffic(const weft_plan *p)
{
    return p->traffic.bytes ? &p->traffic : NULL;
}

uint64_t weft_plan_chunk_bytes(const weft_plan *p, uint64_t chunk)
{
    if (!p->traffic.bytes || chunk >= weft_plan_num_chunk_ids(p))
        return 0;
    return weft__traffic_chunk_bytes(&p->traffic, p->info.chunks, chunk);
}

double weft_plan_traffic_size(const weft_plan *p)
{
    if (!p->traffic.bytes)
        return 0;
    weft_traffic_stats s;
    weft_traffic_get_stats(&p->traffic, &s);
    return (double)s.total / p->info.nranks;
}

weft_err weft_plan_set_op_sizes(weft_plan *p, uint64_t size, const uint64_t *bytes, weft_diag *d)
{
    if (p->traffic.bytes)
        return weft_diag_set(d, WEFT_EINVAL,
                             "the plan has a traffic matrix; its sizes come from the matrix");
    if (size == 0)
        return weft_diag_set(d, WEFT_EINVAL, "op sizes need a collective size above 0");
    for (uint32_t id = 0; id < p->nops; id++)
        if (p->ops[id].kind == WEFT_OP_NOP && weft_plan_op_compute(p, id) == WEFT_COMPUTE_NONE &&
            bytes[id])
            return weft_diag_set(d, WEFT_EINVAL, "op %" PRIu32 " is a nop; it moves no bytes", id);
    uint64_t *b = weft__malloc(((size_t)p->nops + 1) * sizeof *b);
    if (!b)
        return weft_diag_code(d, WEFT_ENOMEM);
    if (p->nops)
        memcpy(b, bytes, (size_t)p->nops * sizeof *b);
    weft__free(p->op_bytes);
    p->op_bytes = b;
    p->op_bytes_n = p->nops;
    p->op_size = size;
    return WEFT_OK;
}

bool weft_plan_has_op_sizes(const weft_plan *p)
{
    return p->op_bytes != NULL;
}

bool weft_plan_sized(const weft_plan *p)
{
    return p->op_bytes || p->traffic.bytes;
}

double weft_plan_own_size(const weft_plan *p)
{
    return p->op_bytes ? (double)p->op_size : weft_plan_traffic_size(p);
}

/* A slot that holds no chunk yet. */
#define EMPTY UINT32_MAX

weft_err weft_plan_op_bytes(const weft_plan *p, uint64_t *bytes, weft_diag *d)
{
    if (p->op_bytes) {
        if (p->op_bytes_n != p->nops)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "the op sizes give %" PRIu32 " ops, the plan has %" PRIu32,
                                 p->op_bytes_n, p->nops);
        if (p->nops)
            memcpy(bytes, p->op_bytes, (size_t)p->nops * sizeof *bytes);
        return WEFT_OK;
    }
    if (!p->traffic.bytes)
        return weft_diag_set(d, WEFT_EINVAL, "the plan has no traffic matrix (equal chunks)");
    weft_err e = weft_plan_check_structure(p, d);
    if (e)
        return e;
    weft__layout l;
    if (weft__layout_init(&l, p))
        return weft_diag_set(d, WEFT_ELIMIT, "a rank's slots do not fit 32 bits");
    /* Chunk ids of an alltoall plan are < N*N*C <= WEFT_PLAN_MAX_TOTAL_SLOTS,
     * so they fit 32 bits and EMPTY is never one. */
    size_t nslots = (size_t)l.per_rank * l.nranks;
    uint32_t *val = weft__malloc((nslots ? nslots : 1) * sizeof *val);
    uint32_t *order = weft__malloc(((size_t)p->nops + 1) * sizeof *order);
    e = WEFT_ENOMEM;
    if (!val || !order) {
        weft_diag_code(d, e);
        goto free_all;
    }
    for (size_t k = 0; k < nslots; k++)
        val[k] = EMPTY;
    for (uint32_t r = 0; r < l.nranks; r++)
        for (uint32_t i = 0; i < l.nin; i++) {
            uint64_t chunk;
            uint32_t from;
            if (weft__layout_initial(&l, r, i, &chunk, &from))
                val[(size_t)r * l.per_rank + weft__layout_slot(&l, r, WEFT_BUF_IN, i)] =
                    (uint32_t)chunk;
        }
    e = weft__plan_topo_order(p, order, NULL, d);
    if (e)
        goto free_all;
    for (uint32_t k = 0; k < p->nops; k++) {
        uint32_t id = order[k];
        const weft_op *op = &p->ops[id];
        uint64_t sum = 0;
        if (op->kind != WEFT_OP_NOP) {
            size_t sb = (size_t)op->src_rank.v * l.per_rank,
                   db = (size_t)op->dst_rank.v * l.per_rank;
            uint32_t s0 = weft__layout_slot(&l, op->src_rank.v, op->src_buf, op->src_index);
            uint32_t d0 = weft__layout_slot(&l, op->dst_rank.v, op->dst_buf, op->dst_index);
            for (uint32_t j = 0; j < op->count; j++) {
                uint32_t v = val[sb + s0 + j];
                if (v != EMPTY)
                    sum += weft__traffic_chunk_bytes(&p->traffic, l.chunks, v);
                /* A reduce in an alltoall combines one chunk with itself at
                 * most; the destination keeps the source's chunk id. */
                val[db + d0 + j] = v;
            }
        }
        bytes[id] = sum;
    }
    e = WEFT_OK;
free_all:
    weft__free(order);
    weft__free(val);
    return e;
}

weft_err weft_plan_op_bytes_at(const weft_plan *p, double size_bytes, double *bytes, weft_diag *d)
{
    if (!weft_plan_sized(p)) {
        double chunk = size_bytes / (double)weft_plan_size_chunks(p);
        for (uint32_t id = 0; id < p->nops; id++)
            bytes[id] = p->ops[id].kind == WEFT_OP_NOP ? 0 : chunk * p->ops[id].count;
        return WEFT_OK;
    }
    uint64_t *exact = weft__malloc(((size_t)p->nops + 1) * sizeof *exact);
    if (!exact)
        return weft_diag_code(d, WEFT_ENOMEM);
    weft_err e = weft_plan_op_bytes(p, exact, d);
    if (!e) {
        double own = weft_plan_own_size(p);
        double scale = own > 0 ? size_bytes / own : 0;
        for (uint32_t id = 0; id < p->nops; id++)
            bytes[id] =
                fabs(size_bytes - own) <= 0.5 ? (double)exact[id] : (double)exact[id] * scale;
    }
    weft__free(exact);
    return e;
}
