#include "synth/emit.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

#define NONE UINT32_MAX

static uint64_t slot_key(uint32_t rank, weft_buf buf, uint32_t index)
{
    return ((uint64_t)rank << 34) | ((uint64_t)buf << 32) | index;
}

void synth_emit_init(synth_emit *e, weft_plan *p)
{
    memset(e, 0, sizeof *e);
    e->plan = p;
    weft__map64_init(&e->slot_of);
}

void synth_emit_fini(synth_emit *e)
{
    weft__map64_fini(&e->slot_of);
    weft__free(e->writer);
    weft__free(e->read_head);
    weft__free(e->reader_op);
    weft__free(e->reader_next);
    weft__free(e->scratch);
    memset(e, 0, sizeof *e);
}

/* The number of a slot, created (never written, never read) if new. */
static weft_err slot_bucket(synth_emit *e, uint32_t rank, weft_buf buf, uint32_t index,
                            uint32_t *out)
{
    uint32_t n = (uint32_t)e->slot_of.n;
    if (n == NONE)
        return WEFT_ELIMIT;
    if (weft__grow((void **)&e->writer, &e->writer_cap, (size_t)n + 1, sizeof *e->writer) ||
        weft__grow((void **)&e->read_head, &e->read_head_cap, (size_t)n + 1, sizeof *e->read_head))
        return WEFT_ENOMEM;
    bool added;
    if (weft__map64_get_or_put(&e->slot_of, slot_key(rank, buf, index), n, out, &added))
        return WEFT_ENOMEM;
    if (added) {
        e->writer[n] = NONE;
        e->read_head[n] = NONE;
    }
    return WEFT_OK;
}

static weft_err push_dep(synth_emit *e, size_t *n, uint32_t op)
{
    if (op == NONE)
        return WEFT_OK;
    if (weft__grow((void **)&e->scratch, &e->scratch_cap, *n + 1, sizeof *e->scratch))
        return WEFT_ENOMEM;
    e->scratch[(*n)++] = op;
    return WEFT_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static weft_err add_reader(synth_emit *e, uint32_t bucket, uint32_t op)
{
    /* Each list grows by doubling on its own: a realloc per reader would
     * copy the whole list each time under ASan. */
    if (weft__grow((void **)&e->reader_op, &e->reader_cap, e->nreaders + 1, sizeof *e->reader_op) ||
        weft__grow((void **)&e->reader_next, &e->reader_next_cap, e->nreaders + 1,
                   sizeof *e->reader_next))
        return WEFT_ENOMEM;
    if (e->nreaders >= NONE)
        return WEFT_ELIMIT;
    uint32_t r = (uint32_t)e->nreaders++;
    e->reader_op[r] = op;
    e->reader_next[r] = e->read_head[bucket];
    e->read_head[bucket] = r;
    return WEFT_OK;
}

weft_err synth_emit_op(synth_emit *e, weft_op_kind kind, uint32_t src_rank, weft_buf src_buf,
                       uint32_t src_index, uint32_t dst_rank, weft_buf dst_buf, uint32_t dst_index,
                       uint32_t count, uint32_t channel, const uint32_t *extra, uint32_t nextra,
                       uint32_t *id)
{
    uint32_t limit = weft_plan_max_ops(e->plan);
    e->touched += count;
    if (limit < WEFT_PLAN_MAX_OPS && e->touched > limit)
        return WEFT_ELIMIT;
    size_t n = 0;
    weft_err err = WEFT_OK;
    for (uint32_t i = 0; i < nextra && !err; i++)
        err = push_dep(e, &n, extra[i]);
    uint32_t b;
    for (uint32_t i = 0; i < count && !err; i++) {
        err = slot_bucket(e, src_rank, src_buf, src_index + i, &b);
        if (!err)
            err = push_dep(e, &n, e->writer[b]); /* RAW */
        if (err)
            break;
        err = slot_bucket(e, dst_rank, dst_buf, dst_index + i, &b);
        if (!err)
            err = push_dep(e, &n, e->writer[b]); /* WAW, and RAW of a reduce */
        for (uint32_t r = err ? NONE : e->read_head[b]; r != NONE && !err; r = e->reader_next[r])
            err = push_dep(e, &n, e->reader_op[r]); /* WAR */
    }
    if (err)
        return err;
    if (n > 1)
        qsort(e->scratch, n, sizeof *e->scratch, cmp_u32);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m == 0 || e->scratch[m - 1] != e->scratch[i])
            e->scratch[m++] = e->scratch[i];
    }
    weft_op op = {
        .kind = kind,
        .src_rank = {src_rank},
        .dst_rank = {dst_rank},
        .src_buf = src_buf,
        .dst_buf = dst_buf,
        .src_index = src_index,
        .dst_index = dst_index,
        .count = count,
        .channel = channel,
    };
    uint32_t opid;
    err = weft_plan_add_op(e->plan, &op, e->scratch, (uint32_t)m, &opid);
    if (err)
        return err;
    for (uint32_t i = 0; i < count; i++) {
        err = slot_bucket(e, src_rank, src_buf, src_index + i, &b);
        if (!err)
            err = add_reader(e, b, opid);
        if (!err)
            err = slot_bucket(e, dst_rank, dst_buf, dst_index + i, &b);
        if (err)
            return err;
        e->writer[b] = opid;
        e->read_head[b] = NONE;
    }
    if (id)
        *id = opid;
    return WEFT_OK;
}

weft_err synth_copy(synth_emit *e, uint32_t src, uint32_t dst, weft_buf buf, uint32_t index,
                    uint32_t count, uint32_t channel, uint32_t *id)
{
    return synth_emit_op(e, WEFT_OP_COPY, src, buf, index, dst, buf, index, count, channel, NULL, 0,
                         id);
}

weft_err synth_reduce(synth_emit *e, uint32_t src, uint32_t dst, weft_buf buf, uint32_t index,
                      uint32_t count, uint32_t channel, uint32_t *id)
{
    return synth_emit_op(e, WEFT_OP_REDUCE, src, buf, index, dst, buf, index, count, channel, NULL,
                         0, id);
}

weft_err synth_finish(weft_err err, synth_emit *e, weft_plan *p, weft_plan **out)
{
    synth_emit_fini(e);
    if (err) {
        weft_plan_free(p);
        return err;
    }
    *out = p;
    return WEFT_OK;
}
