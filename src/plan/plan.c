/* The plan IR: sizes and limits, building, editing, reading, copying and
 * comparing ops and their deps. Routes are in plan_route.c, the node-name
 * table in plan_names.c, enum names in plan_enums.c. See weft/plan.h for the
 * contract and plan_internal.h for the layout. */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "plan/plan_internal.h"

/* ---- Sizes --------------------------------------------------------------- */

/* Slots per rank of in and out (64-bit, before limits are applied). */
static void buf_sizes(const weft_plan_info *info, uint64_t *in, uint64_t *out)
{
    uint64_t n = info->nranks, c = info->chunks;
    switch (info->coll) {
    case WEFT_COLL_ALLGATHER:
        *in = c, *out = n * c;
        break;
    case WEFT_COLL_REDUCESCATTER:
        *in = n * c, *out = c;
        break;
    case WEFT_COLL_ALLTOALL:
        *in = n * c, *out = n * c;
        break;
    default:
        *in = c, *out = c;
        break;
    }
}

/* a * b, or UINT64_MAX when it does not fit. */
static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

uint64_t weft_plan_info_total_slots(const weft_plan_info *info)
{
    /* in and out are at most nranks x chunks < 2^64 each (both 32-bit);
     * their sum with scratch may not be. */
    uint64_t in, out;
    buf_sizes(info, &in, &out);
    uint64_t per_rank = in;
    if (out > UINT64_MAX - per_rank)
        return UINT64_MAX;
    per_rank += out;
    if (info->scratch > UINT64_MAX - per_rank)
        return UINT64_MAX;
    per_rank += info->scratch;
    return mul_sat(per_rank, info->nranks);
}

uint32_t weft_plan_buf_slots(const weft_plan *p, weft_buf buf)
{
    switch (buf) {
    case WEFT_BUF_IN:
        return p->nin;
    case WEFT_BUF_OUT:
        return p->nout;
    case WEFT_BUF_SCRATCH:
        return p->info.scratch;
    default:
        return 0;
    }
}

uint64_t weft_plan_size_chunks(const weft_plan *p)
{
    return p->nin > p->nout ? p->nin : p->nout;
}

uint64_t weft_plan_num_chunk_ids(const weft_plan *p)
{
    if (p->info.coll == WEFT_COLL_ALLTOALL)
        return (uint64_t)p->info.nranks * p->info.nranks * p->info.chunks;
    return weft_plan_size_chunks(p);
}

/* ---- Life cycle ---------------------------------------------------------- */

weft_err weft_plan_new(const weft_plan_info *info, weft_plan **out)
{
    if (!info || (unsigned)info->coll >= WEFT__COLL_COUNT || info->nranks == 0 ||
        info->nranks > WEFT_PLAN_MAX_RANKS || info->chunks == 0)
        return WEFT_EINVAL;
    if (weft_coll_has_root(info->coll) ? info->root.v >= info->nranks : info->root.v != 0)
        return WEFT_EINVAL;
    uint64_t nin, nout;
    buf_sizes(info, &nin, &nout);
    if (nin > WEFT_PLAN_MAX_SLOTS || nout > WEFT_PLAN_MAX_SLOTS ||
        info->scratch > WEFT_PLAN_MAX_SLOTS ||
        weft_plan_info_total_slots(info) > WEFT_PLAN_MAX_TOTAL_SLOTS)
        return WEFT_ELIMIT;
    weft_plan *p = weft__calloc(1, sizeof *p);
    if (!p)
        return WEFT_ENOMEM;
    p->info = *info;
    p->info.inplace = info->inplace ? true : false;
    p->nin = (uint32_t)nin;
    p->nout = (uint32_t)nout;
    *out = p;
    return WEFT_OK;
}

void weft_plan_free(weft_plan *p)
{
    if (!p)
        return;
    weft__free(p->ops);
    weft__free(p->dep_start);
    weft__free(p->dep_count);
    weft__free(p->deps);
    weft__free(p->path_start);
    weft__free(p->path_count);
    weft__free(p->paths);
    weft__free(p->path_nodes);
    weft__free(p->names);
    weft__free(p->name_off);
    weft__free(p->name_index.slots);
    weft_traffic_free(&p->traffic);
    weft__free(p->op_bytes);
    weft__free(p->compute);
    weft__free(p->circuits);
    weft__free(p);
}

/* ---- Ops ----------------------------------------------------------------- */

static bool op_shape_ok(const weft_op *op)
{
    if ((unsigned)op->kind >= WEFT__OP_KIND_COUNT || (unsigned)op->src_buf >= WEFT__BUF_COUNT ||
        (unsigned)op->dst_buf >= WEFT__BUF_COUNT)
        return false;
    if (op->kind == WEFT_OP_NOP)
        return op->src_rank.v == op->dst_rank.v && op->count == 0 && op->src_buf == 0 &&
               op->dst_buf == 0 && op->src_index == 0 && op->dst_index == 0;
    return op->count >= 1;
}

/* Grows the per-op arrays to hold `need` ops. */
static weft_err reserve_ops(weft_plan *p, size_t need)
{
    if (need <= p->op_cap)
        return WEFT_OK;
    size_t ncap = p->op_cap ? p->op_cap * 2 : 64;
    while (ncap < need)
        ncap *= 2;
    weft_op *ops = weft__realloc_array(p->ops, ncap, sizeof *ops);
    if (!ops)
        return WEFT_ENOMEM;
    p->ops = ops;
    uint64_t *ds = weft__realloc_array(p->dep_start, ncap, sizeof *ds);
    if (!ds)
        return WEFT_ENOMEM;
    p->dep_start = ds;
    uint32_t *dc = weft__realloc_array(p->dep_count, ncap, sizeof *dc);
    if (!dc)
        return WEFT_ENOMEM;
    p->dep_count = dc;
    if (p->path_start) {
        uint32_t *ps = weft__realloc_array(p->path_start, ncap, sizeof *ps);
        if (!ps)
            return WEFT_ENOMEM;
        p->path_start = ps;
        uint32_t *pc = weft__realloc_array(p->path_count, ncap, sizeof *pc);
        if (!pc)
            return WEFT_ENOMEM;
        p->path_count = pc;
    }
    if (p->compute) {
        uint8_t *cp = weft__realloc_array(p->compute, ncap, sizeof *cp);
        if (!cp)
            return WEFT_ENOMEM;
        memset(cp + p->op_cap, 0, ncap - p->op_cap);
        p->compute = cp;
    }
    p->op_cap = ncap;
    return WEFT_OK;
}

/* Appends deps to the shared array; writes where they start. */
static weft_err append_deps(weft_plan *p, const uint32_t *deps, uint32_t ndeps, uint64_t *start)
{
    if (weft__grow((void **)&p->deps, &p->dep_cap, p->ndeps + ndeps, sizeof *p->deps))
        return WEFT_ENOMEM;
    if (ndeps)
        memcpy(p->deps + p->ndeps, deps, (size_t)ndeps * sizeof *deps);
    *start = p->ndeps;
    p->ndeps += ndeps;
    return WEFT_OK;
}

void weft_plan_limit_ops(weft_plan *p, uint32_t max_ops)
{
    p->max_ops = max_ops < WEFT_PLAN_MAX_OPS ? max_ops : WEFT_PLAN_MAX_OPS;
}

uint32_t weft_plan_max_ops(const weft_plan *p)
{
    return p->max_ops ? p->max_ops : WEFT_PLAN_MAX_OPS;
}

weft_err weft_plan_add_op(weft_plan *p, const weft_op *op, const uint32_t *deps, uint32_t ndeps,
                          uint32_t *id)
{
    if (!op_shape_ok(op) || (ndeps && !deps))
        return WEFT_EINVAL;
    if (p->nops >= weft_plan_max_ops(p))
        return WEFT_ELIMIT;
    weft_err e = reserve_ops(p, (size_t)p->nops + 1);
    if (e)
        return e;
    uint64_t start;
    e = append_deps(p, deps, ndeps, &start);
    if (e)
        return e;
    uint32_t i = p->nops++;
    p->ops[i] = *op;
    if (p->compute)
        p->compute[i] = WEFT_COMPUTE_NONE;
    p->dep_start[i] = start;
    p->dep_count[i] = ndeps;
    if (p->path_start) {
        p->path_start[i] = 0;
        p->path_count[i] = 0;
    }
    if (id)
        *id = i;
    return WEFT_OK;
}

/* ---- Compute ops: a nop's compute, beside the ops ----------------------- */

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

/* ---- Editing ------------------------------------------------------------- */

weft_err weft_plan_set_op(weft_plan *p, uint32_t id, const weft_op *op)
{
    if (id >= p->nops || !op_shape_ok(op))
        return WEFT_EINVAL;
    p->ops[id] = *op;
    if (p->compute && op->kind != WEFT_OP_NOP)
        p->compute[id] = WEFT_COMPUTE_NONE; /* compute is a nop's */
    return WEFT_OK;
}

weft_err weft_plan_set_deps(weft_plan *p, uint32_t id, const uint32_t *deps, uint32_t ndeps)
{
    if (id >= p->nops || (ndeps && !deps))
        return WEFT_EINVAL;
    if (ndeps <= p->dep_count[id]) {
        if (ndeps)
            memmove(p->deps + p->dep_start[id], deps, (size_t)ndeps * sizeof *deps);
        p->dep_count[id] = ndeps;
        return WEFT_OK;
    }
    /* deps may point into p->deps, which append_deps may move. */
    uint32_t *tmp = weft__malloc((size_t)ndeps * sizeof *tmp);
    if (!tmp)
        return WEFT_ENOMEM;
    memcpy(tmp, deps, (size_t)ndeps * sizeof *tmp);
    uint64_t start;
    weft_err e = append_deps(p, tmp, ndeps, &start);
    weft__free(tmp);
    if (e)
        return e;
    p->dep_start[id] = start;
    p->dep_count[id] = ndeps;
    return WEFT_OK;
}

weft_err weft_plan_remove_dep(weft_plan *p, uint32_t id, uint32_t k)
{
    if (id >= p->nops || k >= p->dep_count[id])
        return WEFT_EINVAL;
    uint32_t *d = p->deps + p->dep_start[id];
    memmove(d + k, d + k + 1, (size_t)(p->dep_count[id] - k - 1) * sizeof *d);
    p->dep_count[id]--;
    return WEFT_OK;
}

weft_err weft_plan_remove_op(weft_plan *p, uint32_t id)
{
    if (id >= p->nops)
        return WEFT_EINVAL;
    /* Rebuild the dep array compacted, renumbered, without the removed op. */
    uint64_t total = 0;
    for (uint32_t i = 0; i < p->nops; i++)
        total += i == id ? 0 : p->dep_count[i];
    uint32_t *deps = weft__malloc((size_t)(total ? total : 1) * sizeof *deps);
    if (!deps)
        return WEFT_ENOMEM;
    uint64_t n = 0;
    for (uint32_t i = 0, j = 0; i < p->nops; i++) {
        if (i == id)
            continue;
        uint64_t start = n;
        const uint32_t *d = weft__plan_deps(p, i);
        for (uint32_t k = 0; k < p->dep_count[i]; k++) {
            if (d[k] == id)
                continue;
            deps[n++] = d[k] > id && d[k] != WEFT_PLAN_NO_OP ? d[k] - 1 : d[k];
        }
        p->ops[j] = p->ops[i];
        if (p->compute)
            p->compute[j] = p->compute[i];
        p->dep_start[j] = start;
        p->dep_count[j] = (uint32_t)(n - start);
        if (p->path_start) {
            p->path_start[j] = p->path_start[i];
            p->path_count[j] = p->path_count[i];
        }
        j++;
    }
    weft__free(p->deps);
    p->deps = deps;
    p->ndeps = n;
    p->dep_cap = total ? total : 1;
    p->nops--;
    return WEFT_OK;
}

weft_err weft_plan_copy(const weft_plan *p, weft_plan **out)
{
    weft_plan *q;
    weft_err e = weft_plan_new(&p->info, &q);
    if (e)
        return e;
    e = reserve_ops(q, p->nops ? p->nops : 1);
    if (e)
        goto free_copy;
    const char **names = NULL;
    size_t names_cap = 0;
    for (uint32_t i = 0; i < p->nops && !e; i++) {
        e = weft_plan_add_op(q, &p->ops[i], weft__plan_deps(p, i), p->dep_count[i], NULL);
        if (!e && weft_plan_op_compute(p, i) != WEFT_COMPUTE_NONE)
            e = weft_plan_set_op_compute(q, i, weft_plan_op_compute(p, i));
        uint32_t np = weft_plan_op_num_paths(p, i);
        for (uint32_t k = 0; k < np && !e; k++) {
            const weft__plan_path *pt = &p->paths[p->path_start[i] + k];
            if (weft__grow((void **)&names, &names_cap, pt->nnodes, sizeof *names)) {
                e = WEFT_ENOMEM;
                break;
            }
            for (uint32_t v = 0; v < pt->nnodes; v++)
                names[v] = weft__plan_name(p, p->path_nodes[pt->node_start + v]);
            e = weft_plan_add_path(q, i, pt->share, names, pt->nnodes);
            if (!e)
                e = weft_plan_set_path_epoch(q, i, k, pt->epoch);
        }
    }
    for (size_t c = 0; c < p->ncircuits && !e; c++) {
        const weft__plan_circuit *ci = &p->circuits[c];
        e = weft_plan_add_circuit(q, ci->epoch, weft__plan_name(p, ci->ocs),
                                  weft__plan_name(p, ci->from), weft__plan_name(p, ci->to));
    }
    weft__free(names);
    if (!e && p->traffic.bytes) {
        /* Copied here rather than by weft_plan_set_traffic, which sits
         * above this file (it checks the matrix; p's is checked). */
        size_t nn = (size_t)p->traffic.ranks * p->traffic.ranks;
        q->traffic.bytes = weft__malloc(nn * sizeof *q->traffic.bytes);
        if (q->traffic.bytes) {
            memcpy(q->traffic.bytes, p->traffic.bytes, nn * sizeof *q->traffic.bytes);
            q->traffic.ranks = p->traffic.ranks;
        } else {
            e = WEFT_ENOMEM;
        }
    }
    if (!e && p->op_bytes) {
        q->op_bytes = weft__malloc(((size_t)p->op_bytes_n + 1) * sizeof *q->op_bytes);
        if (q->op_bytes) {
            memcpy(q->op_bytes, p->op_bytes, (size_t)p->op_bytes_n * sizeof *q->op_bytes);
            q->op_bytes_n = p->op_bytes_n;
            q->op_size = p->op_size;
        } else {
            e = WEFT_ENOMEM;
        }
    }
    if (e)
        goto free_copy;
    q->step_forward = p->step_forward;
    q->step_gbps = p->step_gbps;
    q->whole = p->whole;
    *out = q;
    return WEFT_OK;
free_copy:
    weft_plan_free(q);
    return e;
}

static bool op_equal(const weft_op *a, const weft_op *b)
{
    return a->kind == b->kind && a->src_rank.v == b->src_rank.v && a->dst_rank.v == b->dst_rank.v &&
           a->src_buf == b->src_buf && a->dst_buf == b->dst_buf && a->src_index == b->src_index &&
           a->dst_index == b->dst_index && a->count == b->count && a->channel == b->channel;
}

bool weft_plan_equal(const weft_plan *a, const weft_plan *b)
{
    if (a->info.coll != b->info.coll || a->info.nranks != b->info.nranks ||
        a->info.root.v != b->info.root.v || a->info.chunks != b->info.chunks ||
        a->info.scratch != b->info.scratch || a->info.inplace != b->info.inplace ||
        a->nops != b->nops || !a->traffic.bytes != !b->traffic.bytes ||
        a->ncircuits != b->ncircuits || !a->op_bytes != !b->op_bytes ||
        a->step_forward != b->step_forward || a->step_gbps != b->step_gbps || a->whole != b->whole)
        return false;
    if (a->op_bytes &&
        (a->op_size != b->op_size || a->op_bytes_n != b->op_bytes_n ||
         memcmp(a->op_bytes, b->op_bytes, (size_t)a->op_bytes_n * sizeof *a->op_bytes) != 0))
        return false;
    for (size_t c = 0; c < a->ncircuits; c++) {
        const weft__plan_circuit *x = &a->circuits[c], *y = &b->circuits[c];
        if (x->epoch != y->epoch ||
            strcmp(weft__plan_name(a, x->ocs), weft__plan_name(b, y->ocs)) ||
            strcmp(weft__plan_name(a, x->from), weft__plan_name(b, y->from)) ||
            strcmp(weft__plan_name(a, x->to), weft__plan_name(b, y->to)))
            return false;
    }
    if (a->traffic.bytes &&
        memcmp(a->traffic.bytes, b->traffic.bytes,
               (size_t)a->traffic.ranks * a->traffic.ranks * sizeof *a->traffic.bytes) != 0)
        return false;
    for (uint32_t i = 0; i < a->nops; i++) {
        if (!op_equal(&a->ops[i], &b->ops[i]) || a->dep_count[i] != b->dep_count[i] ||
            weft_plan_op_compute(a, i) != weft_plan_op_compute(b, i))
            return false;
        if (a->dep_count[i] && memcmp(weft__plan_deps(a, i), weft__plan_deps(b, i),
                                      (size_t)a->dep_count[i] * sizeof *a->deps) != 0)
            return false;
        uint32_t np = weft_plan_op_num_paths(a, i);
        if (np != weft_plan_op_num_paths(b, i))
            return false;
        for (uint32_t k = 0; k < np; k++) {
            const weft__plan_path *pa = &a->paths[a->path_start[i] + k];
            const weft__plan_path *pb = &b->paths[b->path_start[i] + k];
            if (!weft_rat_eq(pa->share, pb->share) || pa->nnodes != pb->nnodes ||
                pa->epoch != pb->epoch)
                return false;
            for (uint32_t v = 0; v < pa->nnodes; v++) {
                if (strcmp(weft__plan_name(a, a->path_nodes[pa->node_start + v]),
                           weft__plan_name(b, b->path_nodes[pb->node_start + v])) != 0)
                    return false;
            }
        }
    }
    return true;
}

/* ---- Reading ------------------------------------------------------------- */

const weft_plan_info *weft_plan_get_info(const weft_plan *p)
{
    return &p->info;
}

uint32_t weft_plan_num_ops(const weft_plan *p)
{
    return p->nops;
}

weft_op weft_plan_op(const weft_plan *p, uint32_t id)
{
    return p->ops[id];
}

const uint32_t *weft_plan_op_deps(const weft_plan *p, uint32_t id, uint32_t *ndeps)
{
    /* Never NULL, so callers may pass it to memcpy even when empty. */
    static const uint32_t none[1] = {0};
    *ndeps = p->dep_count[id];
    return p->deps ? weft__plan_deps(p, id) : none;
}

void weft_plan_set_step_forward(weft_plan *p, uint64_t step_bytes, double chan_gbps)
{
    p->step_forward = step_bytes;
    /* An infinite cap is no cap, and the writers print a finite one. */
    p->step_gbps = step_bytes && chan_gbps > 0 && chan_gbps < INFINITY ? chan_gbps : 0;
}

uint64_t weft_plan_step_forward(const weft_plan *p, double *chan_gbps)
{
    if (chan_gbps)
        *chan_gbps = p->step_gbps;
    return p->step_forward;
}

void weft_plan_set_whole_messages(weft_plan *p, bool whole)
{
    p->whole = whole;
}

bool weft_plan_whole_messages(const weft_plan *p)
{
    return p->whole;
}
