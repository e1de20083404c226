/* Running a plan across the ranks of a communicator (see weft_comm_run_plan
 * in weft/comm.h).
 *
 * Scheduling, per rank r: every rank orders all ops topologically (Kahn's
 * algorithm, ready ops taken in id order, so every rank gets the same
 * order) and keeps the list L of the ops r takes part in. For each op o,
 * f(o) is the position in L of the latest op of r that o depends on,
 * directly or through ops of other ranks (o itself if o is in L); an op of L
 * may start once every op of L up to max f(dep) has finished. This is
 * exactly what a verified plan needs: any two accesses to one slot of r, one
 * of them a write, are ordered by deps, so the later op's f covers the
 * earlier op. Computing f is one pass over the order: O(ops + deps).
 *
 * Deadlock freedom: ops are posted in L's order, so messages of a pair of
 * ranks are matched in the global order; the first unfinished op of the
 * global order has all of its ranks' earlier ops finished, so both of its
 * ranks have posted it and it completes; by induction, all do.
 */
#include <string.h>

#include "base/alloc.h"
#include "run/clock.h"
#include "run/comm_internal.h"

struct weft_comm_plan {
    weft_comm *c;
    const weft_plan *p; /* borrowed */
    uint32_t *order;    /* L: op ids of this rank, in execution order */
    int64_t *need;      /* per position of L: last position of L it waits for */
    weft__xreq *reqs;   /* per position: its request (remote ops) */
    bool *done;         /* per position */
    uint32_t len;
    /* Per run: */
    unsigned char *buf[WEFT__BUF_COUNT];
    size_t cb; /* bytes per chunk */
    weft__reduce_fn fn;
    size_t es;
};

typedef struct weft_comm_plan exec_state;

/* L and need: see the top of the file. */
static weft_err schedule(exec_state *x, weft_diag *d)
{
    const weft_plan *p = x->p;
    uint32_t n = weft_plan_num_ops(p), me = x->c->rank;
    weft_err e = WEFT_ENOMEM;
    uint32_t *indeg = weft__calloc(n + 1, sizeof *indeg);
    uint32_t *start = weft__calloc(n + 2, sizeof *start);
    uint32_t *queue = weft__malloc(((size_t)n + 1) * sizeof *queue);
    int64_t *f = weft__malloc(((size_t)n + 1) * sizeof *f);
    uint32_t *succ = NULL;
    x->order = weft__malloc(((size_t)n + 1) * sizeof *x->order);
    x->need = weft__malloc(((size_t)n + 1) * sizeof *x->need);
    if (!indeg || !start || !queue || !f || !x->order || !x->need) goto free_scratch;
    /* Successor lists in CSR form: start[dep] .. start[dep+1]. */
    size_t edges = 0;
    for (uint32_t o = 0; o < n; o++) {
        uint32_t nd;
        const uint32_t *deps = weft_plan_op_deps(p, o, &nd);
        indeg[o] = nd;
        for (uint32_t k = 0; k < nd; k++)
            start[deps[k] + 1]++;
        edges += nd;
    }
    for (uint32_t o = 0; o < n; o++)
        start[o + 1] += start[o];
    succ = weft__malloc((edges + 1) * sizeof *succ);
    if (!succ) goto free_scratch;
    for (uint32_t o = 0; o < n; o++) {
        uint32_t nd;
        const uint32_t *deps = weft_plan_op_deps(p, o, &nd);
        for (uint32_t k = 0; k < nd; k++)
            succ[start[deps[k]]++] = o;
    }
    for (uint32_t o = n; o > 0; o--) /* undo the fill's shift */
        start[o] = start[o - 1];
    start[0] = 0;
    /* Kahn's algorithm with a FIFO seeded in id order. */
    uint32_t head = 0, tail = 0;
    for (uint32_t o = 0; o < n; o++)
        if (!indeg[o]) queue[tail++] = o;
    x->len = 0;
    while (head < tail) {
        uint32_t o = queue[head++];
        uint32_t nd;
        const uint32_t *deps = weft_plan_op_deps(p, o, &nd);
        int64_t m = -1;
        for (uint32_t k = 0; k < nd; k++)
            m = f[deps[k]] > m ? f[deps[k]] : m;
        weft_op op = weft_plan_op(p, o);
        if (op.src_rank.v == me || op.dst_rank.v == me) {
            x->order[x->len] = o;
            x->need[x->len] = m;
            f[o] = x->len++;
        } else {
            f[o] = m;
        }
        for (uint32_t k = start[o]; k < start[o + 1]; k++)
            if (--indeg[succ[k]] == 0) queue[tail++] = succ[k];
    }
    if (tail != n) {
        e = weft_diag_set(d, WEFT_EVERIFY, "plan: the deps have a cycle");
        goto free_scratch;
    }
    e = WEFT_OK;
free_scratch:
    if (e) weft_diag_code(d, e);
    weft__free(indeg);
    weft__free(start);
    weft__free(queue);
    weft__free(f);
    weft__free(succ);
    return e;
}

/* Starts position i of L: local ops run at once, remote ones are posted. */
static weft_err start_op(exec_state *x, uint32_t i, weft_diag *d)
{
    weft_op op = weft_plan_op(x->p, x->order[i]);
    uint32_t me = x->c->rank;
    size_t len = (size_t)op.count * x->cb;
    if (op.kind == WEFT_OP_NOP || len == 0) {
        x->done[i] = true;
        return WEFT_OK;
    }
    unsigned char *src = x->buf[op.src_buf] + (size_t)op.src_index * x->cb;
    unsigned char *dst = x->buf[op.dst_buf] + (size_t)op.dst_index * x->cb;
    if (op.src_rank.v == me && op.dst_rank.v == me) {
        if (op.kind == WEFT_OP_COPY) {
            memmove(dst, src, len);
        } else if (src + len <= dst || dst + len <= src) {
            x->fn(dst, src, len / x->es);
        } else {
            unsigned char *tmp = weft__malloc(len);
            if (!tmp) return weft_diag_code(d, WEFT_ENOMEM);
            memcpy(tmp, src, len);
            x->fn(dst, tmp, len / x->es);
            weft__free(tmp);
        }
        x->done[i] = true;
        return WEFT_OK;
    }
    weft__xreq *r = &x->reqs[i];
    memset(r, 0, sizeof *r);
    r->len = len;
    if (op.src_rank.v == me) {
        r->peer = op.dst_rank.v;
        r->is_send = true;
        r->buf = src;
    } else {
        r->peer = op.src_rank.v;
        r->buf = dst;
        r->reduce = op.kind == WEFT_OP_REDUCE ? x->fn : NULL;
        r->esize = x->es;
    }
    return weft__comm_post(x->c, r, d);
}

static weft_err execute(exec_state *x, weft_diag *d)
{
    uint32_t next = 0, prefix = 0; /* next to start; L[0..prefix) all done */
    int64_t last = weft__now_ns();
    while (prefix < x->len) {
        bool moved = false;
        while (next < x->len && x->need[next] < (int64_t)prefix) {
            weft_err e = start_op(x, next++, d);
            if (e) return e;
            moved = true;
        }
        for (uint32_t i = prefix; i < next; i++)
            if (!x->done[i] && x->reqs[i].complete) x->done[i] = true;
        while (prefix < next && x->done[prefix]) {
            prefix++;
            moved = true;
        }
        if (moved || prefix == x->len) continue;
        weft_err e = weft__comm_progress(x->c, &moved, d);
        if (e) return e;
        int64_t now = weft__now_ns();
        if (moved)
            last = now;
        else if (now - last > x->c->timeout_ns)
            return weft__comm_stalled(x->c, x->reqs[prefix].peer, d);
    }
    return WEFT_OK;
}

void weft_comm_plan_free(weft_comm_plan *x)
{
    if (!x) return;
    weft__free(x->order);
    weft__free(x->need);
    weft__free(x->reqs);
    weft__free(x->done);
    weft__free(x);
}

weft_err weft_comm_plan_new(weft_comm *c, const weft_plan *p, weft_comm_plan **out, weft_diag *d)
{
    const weft_plan_info *info = weft_plan_get_info(p);
    if (info->nranks != c->size)
        return weft_diag_set(d, WEFT_EINVAL,
                             "plan: the plan is for %u ranks, the communicator "
                             "has %u",
                             info->nranks, c->size);
    weft_err e = weft_plan_verify(p, NULL, d);
    if (e) return e;
    exec_state *x = weft__calloc(1, sizeof *x);
    if (!x) return weft_diag_code(d, WEFT_ENOMEM);
    x->c = c;
    x->p = p;
    e = schedule(x, d);
    if (e) goto free_plan;
    e = WEFT_ENOMEM;
    x->reqs = weft__calloc((size_t)x->len + 1, sizeof *x->reqs);
    x->done = weft__calloc((size_t)x->len + 1, sizeof *x->done);
    if (!x->reqs || !x->done) {
        weft_diag_code(d, e);
        goto free_plan;
    }
    *out = x;
    return WEFT_OK;
free_plan:
    weft_comm_plan_free(x);
    return e;
}

weft_err weft_comm_run_plan(weft_comm *c, const weft_plan *p, const void *sendbuf, void *recvbuf,
                            size_t count, weft_dtype dtype, weft_redop op, weft_diag *d)
{
    weft_comm_plan *x;
    weft_err e = weft_comm_plan_new(c, p, &x, d);
    if (e) return e;
    e = weft_comm_plan_run(x, sendbuf, recvbuf, count, dtype, op, d);
    weft_comm_plan_free(x);
    return e;
}

weft_err weft_comm_plan_run(weft_comm_plan *xp, const void *sendbuf, void *recvbuf, size_t count,
                            weft_dtype dtype, weft_redop op, weft_diag *d)
{
    weft_comm *c = xp->c;
    const weft_plan *p = xp->p;
    if (c->failed) return weft_diag_set(d, WEFT_EPEER, "comm: failed earlier: %s", c->fail_msg);
    const weft_plan_info *info = weft_plan_get_info(p);
    size_t es = weft_dtype_size(dtype);
    weft__reduce_fn fn = weft__reduce_get(dtype, op);
    if (!es || !fn)
        return weft_diag_set(d, WEFT_EINVAL, "plan: invalid dtype %d or reduction operator %d",
                             (int)dtype, (int)op);
    if (count % info->chunks)
        return weft_diag_set(d, WEFT_EINVAL,
                             "plan: count %zu is not a multiple of the plan's %u chunks", count,
                             info->chunks);
    exec_state x = *xp; /* shares the schedule and request arrays */
    weft_err e;
    x.fn = fn;
    x.es = es;
    x.cb = count / info->chunks * es;
    uint32_t me = c->rank, C = info->chunks;
    size_t in_bytes = (size_t)weft_plan_buf_slots(p, WEFT_BUF_IN) * x.cb;
    size_t out_bytes = (size_t)weft_plan_buf_slots(p, WEFT_BUF_OUT) * x.cb;
    size_t scratch_bytes = (size_t)weft_plan_buf_slots(p, WEFT_BUF_SCRATCH) * x.cb;
    unsigned char *tmp = NULL, *scratch = NULL, *out = recvbuf;
    bool has_input = info->coll != WEFT_COLL_BROADCAST || me == info->root.v;
    e = WEFT_ENOMEM;
    if (scratch_bytes && !(scratch = weft__malloc(scratch_bytes))) goto free_all;
    bool own_in = !info->inplace || info->coll == WEFT_COLL_REDUCESCATTER;
    if (own_in && in_bytes && !(tmp = weft__calloc(1, in_bytes))) goto free_all;
    if (own_in) {
        if (has_input && in_bytes) memcpy(tmp, sendbuf, in_bytes);
        x.buf[WEFT_BUF_IN] = tmp;
        if (info->inplace) /* reducescatter: out[i] is in[r*C+i] */
            out = tmp + (size_t)me * C * x.cb;
    } else if (info->coll == WEFT_COLL_ALLGATHER) {
        x.buf[WEFT_BUF_IN] = out + (size_t)me * C * x.cb;
        if (sendbuf != x.buf[WEFT_BUF_IN] && in_bytes)
            memcpy(x.buf[WEFT_BUF_IN], sendbuf, in_bytes);
    } else {
        x.buf[WEFT_BUF_IN] = out;
        if (has_input && sendbuf != out && in_bytes) memcpy(out, sendbuf, in_bytes);
    }
    x.buf[WEFT_BUF_OUT] = out;
    x.buf[WEFT_BUF_SCRATCH] = scratch;
    memset(x.done, 0, ((size_t)x.len + 1) * sizeof *x.done);
    memset(x.reqs, 0, ((size_t)x.len + 1) * sizeof *x.reqs);
    e = execute(&x, d);
    if (e && !c->failed) /* requests may still be queued: never touch them again */
        weft__comm_fail(c, e, d);
    if (!e && out != recvbuf && out_bytes) memcpy(recvbuf, out, out_bytes);
free_all:
    if (e == WEFT_ENOMEM) weft_diag_code(d, e);
    weft__free(tmp);
    weft__free(scratch);
    return e;
}
