/* MSCCL XML import, the second half: the <gpu>, <tb> and <step> elements
 * msccl_import.c read become a weft plan. Two linear passes: the first
 * matches sends with receives per connection and gives every step its first
 * op id (a step becomes a fixed number of ops), so that a dependency on a
 * step of another threadblock, earlier or later in the file, is known before
 * its ops are added; the second adds the ops. Errors name the file and, when
 * an element is at fault, its line and column. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "plan/msccl_internal.h"

/* Per step, filled by the first pass. */
typedef struct mx_link {
    uint32_t first_op; /* id of the step's first op */
    uint32_t nops;
    uint32_t match;    /* for a receiving step: the matching sending step */
    uint32_t msg_slot; /* for a sending step: first scratch slot of its message */
} mx_link;

static weft_err mx_at(mx_state *st, weft_err e, mx_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static weft_err mx_at(mx_state *st, weft_err e, mx_pos pos, const char *fmt, ...)
{
    char reason[WEFT_DIAG_MSG_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return weft_diag_set(st->d, e, "%s:%u:%u: %s", st->name, pos.line, pos.col, reason);
}

/* Sort keys for threadblocks: (gpu, peer, chan) of their send or receive
 * side, so the two ends of a connection meet. */
typedef struct mx_key {
    int32_t from, to, chan;
    uint32_t tb;
} mx_key;

static int mx_key_cmp(const void *a, const void *b)
{
    const mx_key *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    if (x->to != y->to)
        return x->to < y->to ? -1 : 1;
    if (x->chan != y->chan)
        return x->chan < y->chan ? -1 : 1;
    return x->tb < y->tb ? -1 : x->tb > y->tb;
}

static uint32_t mx_step_nops(const mx_step *s)
{
    bool same = s->srcbuf == s->dstbuf && s->srcoff == s->dstoff;
    switch (s->type) {
    case WEFT__MSCCL_RCS:
    case WEFT__MSCCL_RRS:
        return 2;
    case WEFT__MSCCL_RRC:
        return same ? 1 : 2;
    case WEFT__MSCCL_RRCS:
        return same ? 2 : 3;
    default:
        return 1;
    }
}

static const char *mx_bufname(uint8_t b)
{
    return b == WEFT_BUF_IN ? "i" : b == WEFT_BUF_OUT ? "o" : "s";
}

/* Checks that [off, off+cnt) lies in buffer b of gpu g. */
static weft_err mx_check_range(mx_state *st, const weft_plan *p, const mx_step *s, bool src)
{
    uint8_t b = src ? s->srcbuf : s->dstbuf;
    int32_t off = src ? s->srcoff : s->dstoff;
    const mx_gpu *g = &st->gpus[st->tbs[s->tb].gpu];
    int64_t size =
        b == WEFT_BUF_SCRATCH ? (int64_t)g->s_chunks : (int64_t)weft_plan_buf_slots(p, (weft_buf)b);
    if (off < 0 || (int64_t)off + s->cnt > size)
        return mx_at(st, WEFT_EPARSE, s->pos,
                     "%s chunks [%d, %lld) are outside buffer %s, which has %lld chunks on gpu %d",
                     src ? "source" : "destination", (int)off, (long long)off + s->cnt,
                     mx_bufname(b), (long long)size, (int)g->id);
    return WEFT_OK;
}

/* Sorts the tbs of one side and checks each connection end is one tb. */
static weft_err mx_sort_side(mx_state *st, mx_key *keys, size_t *nkeys, bool send)
{
    size_t n = 0;
    for (size_t i = 0; i < st->ntb; i++) {
        const mx_tb *t = &st->tbs[i];
        int32_t peer = send ? t->send : t->recv;
        if (peer < 0)
            continue;
        int32_t me = st->gpus[t->gpu].id;
        mx_key k = {send ? me : peer, send ? peer : me, t->chan, (uint32_t)i};
        keys[n++] = k;
    }
    qsort(keys, n, sizeof *keys, mx_key_cmp);
    for (size_t i = 1; i < n; i++) {
        if (mx_key_cmp(&keys[i - 1], &keys[i]) == 0 ||
            (keys[i - 1].from == keys[i].from && keys[i - 1].to == keys[i].to &&
             keys[i - 1].chan == keys[i].chan)) {
            const mx_tb *a = &st->tbs[keys[i - 1].tb], *b = &st->tbs[keys[i].tb];
            const mx_tb *later = a->pos.line > b->pos.line ? a : b;
            const mx_tb *first = later == a ? b : a;
            return mx_at(st, WEFT_EPARSE, later->pos,
                         "threadblocks %d and %d of gpu %d both %s gpu %d on channel %d, so "
                         "their messages cannot be matched",
                         (int)first->id, (int)later->id, (int)st->gpus[later->gpu].id,
                         send ? "send to" : "receive from", (int)(send ? keys[i].to : keys[i].from),
                         (int)keys[i].chan);
        }
    }
    *nkeys = n;
    return WEFT_OK;
}

/* The next step of tb t at or after *k that sends (or receives). */
static bool mx_next(const mx_state *st, const mx_tb *t, uint32_t *k, bool send)
{
    for (; *k < t->nsteps; (*k)++) {
        int ty = st->steps[t->first_step + *k].type;
        if (send ? weft__msccl_step_sends(ty) : weft__msccl_step_recvs(ty))
            return true;
    }
    return false;
}

/* Pairs the k-th send with the k-th receive on every connection. */
static weft_err mx_match(mx_state *st, mx_link *link)
{
    weft_err e = WEFT_OK;
    mx_key *sk = weft__malloc((st->ntb ? st->ntb : 1) * sizeof *sk);
    mx_key *rk = weft__malloc((st->ntb ? st->ntb : 1) * sizeof *rk);
    if (!sk || !rk) {
        e = mx_oom(st->d, st->name, "building the plan");
        goto free_keys;
    }
    size_t ns, nr;
    if ((e = mx_sort_side(st, sk, &ns, true)) || (e = mx_sort_side(st, rk, &nr, false)))
        goto free_keys;
    size_t i = 0, j = 0;
    while (i < ns || j < nr) {
        int c = i == ns ? 1 : j == nr ? -1 : 0;
        if (c == 0) {
            mx_key a = sk[i], b = rk[j];
            a.tb = b.tb = 0;
            c = mx_key_cmp(&a, &b);
        }
        const mx_tb *s = c <= 0 ? &st->tbs[sk[i].tb] : NULL;
        const mx_tb *r = c >= 0 ? &st->tbs[rk[j].tb] : NULL;
        uint32_t a = 0, b = 0;
        for (;;) {
            bool has_s = s && mx_next(st, s, &a, true);
            bool has_r = r && mx_next(st, r, &b, false);
            if (!has_s && !has_r)
                break;
            if (!has_r) {
                const mx_step *x = &st->steps[s->first_step + a];
                e = mx_at(st, WEFT_EPARSE, x->pos,
                          "send to gpu %d on channel %d has no matching receive", (int)s->send,
                          (int)s->chan);
                goto free_keys;
            }
            const mx_step *y = &st->steps[r->first_step + b];
            if (!has_s) {
                e = mx_at(st, WEFT_EPARSE, y->pos,
                          "receive from gpu %d on channel %d has no matching send", (int)r->recv,
                          (int)r->chan);
                goto free_keys;
            }
            const mx_step *x = &st->steps[s->first_step + a];
            if (x->cnt != y->cnt) {
                e = mx_at(st, WEFT_EPARSE, y->pos,
                          "receives %d chunks, but the matching send (line %u) sends %d",
                          (int)y->cnt, x->pos.line, (int)x->cnt);
                goto free_keys;
            }
            link[r->first_step + b].match = s->first_step + a;
            a++, b++;
        }
        if (c <= 0)
            i++;
        if (c >= 0)
            j++;
    }
free_keys:
    weft__free(sk);
    weft__free(rk);
    return e;
}

/* The op a dependency on step k waits for: the step's last op. */
static uint32_t mx_done(const mx_link *link, uint32_t k)
{
    return link[k].first_op + link[k].nops - 1;
}

/* Adds the ops of step k (ids link[k].first_op ...). */
static weft_err mx_add_step(mx_state *st, weft_plan *p, const mx_link *link, const uint32_t *tbmap,
                            const uint32_t *tbmap_start, uint32_t k)
{
    const mx_step *s = &st->steps[k];
    const mx_tb *t = &st->tbs[s->tb];
    const mx_gpu *g = &st->gpus[t->gpu];
    weft_rank me = {(uint32_t)g->id};
    uint32_t deps[3], nd = 0;
    if (k > t->first_step)
        deps[nd++] = mx_done(link, k - 1);
    if (s->depid >= 0 && s->deps >= 0) {
        uint32_t nmap = tbmap_start[t->gpu + 1] - tbmap_start[t->gpu];
        uint32_t o = (uint32_t)s->depid < nmap ? tbmap[tbmap_start[t->gpu] + (uint32_t)s->depid]
                                               : UINT32_MAX;
        if (o == UINT32_MAX)
            return mx_at(st, WEFT_EPARSE, s->pos,
                         "depends on threadblock %d, which gpu %d does not have", (int)s->depid,
                         (int)g->id);
        const mx_tb *dt = &st->tbs[o];
        if ((uint32_t)s->deps >= dt->nsteps)
            return mx_at(st, WEFT_EPARSE, s->pos,
                         "depends on step %d of threadblock %d, which has %u steps", (int)s->deps,
                         (int)s->depid, dt->nsteps);
        deps[nd++] = mx_done(link, dt->first_step + (uint32_t)s->deps);
    }
    weft_op op = {0};
    op.channel = (uint32_t)t->chan;
    op.src_rank = op.dst_rank = me;
    op.count = (uint32_t)s->cnt;
    weft_err e;
    bool same = s->srcbuf == s->dstbuf && s->srcoff == s->dstoff;
    bool has_src =
        s->type != WEFT__MSCCL_R && s->type != WEFT__MSCCL_RCS && s->type != WEFT__MSCCL_NOP;
    bool has_dst =
        s->type != WEFT__MSCCL_S && s->type != WEFT__MSCCL_RRS && s->type != WEFT__MSCCL_NOP;
    if ((has_src && (e = mx_check_range(st, p, s, true))) ||
        (has_dst && (e = mx_check_range(st, p, s, false))))
        return e;
    if (s->type == WEFT__MSCCL_NOP) {
        op.kind = WEFT_OP_NOP;
        op.count = 0;
        return weft_plan_add_op(p, &op, deps, nd, NULL);
    }
    if (s->type == WEFT__MSCCL_S || s->type == WEFT__MSCCL_CPY || s->type == WEFT__MSCCL_RE) {
        op.kind = s->type == WEFT__MSCCL_RE ? WEFT_OP_REDUCE : WEFT_OP_COPY;
        op.src_buf = (weft_buf)s->srcbuf;
        op.src_index = (uint32_t)s->srcoff;
        if (s->type == WEFT__MSCCL_S) {
            op.dst_buf = WEFT_BUF_SCRATCH;
            op.dst_index = link[k].msg_slot;
        } else {
            op.dst_buf = (weft_buf)s->dstbuf;
            op.dst_index = (uint32_t)s->dstoff;
        }
        return weft_plan_add_op(p, &op, deps, nd, NULL);
    }
    /* A receiving step. rrs sums into its own message slots; the others
     * store into dst, first copying src there when the sum's other operand
     * is elsewhere. */
    bool reduce =
        s->type == WEFT__MSCCL_RRS || s->type == WEFT__MSCCL_RRC || s->type == WEFT__MSCCL_RRCS;
    weft_buf into = s->type == WEFT__MSCCL_RRS ? WEFT_BUF_SCRATCH : (weft_buf)s->dstbuf;
    uint32_t into_index = s->type == WEFT__MSCCL_RRS ? link[k].msg_slot : (uint32_t)s->dstoff;
    uint32_t next = link[k].first_op;
    if (reduce && (s->type == WEFT__MSCCL_RRS || !same)) {
        op.kind = WEFT_OP_COPY;
        op.src_buf = (weft_buf)s->srcbuf;
        op.src_index = (uint32_t)s->srcoff;
        op.dst_buf = into;
        op.dst_index = into_index;
        if ((e = weft_plan_add_op(p, &op, deps, nd, NULL)))
            return e;
        nd = 0;
        deps[nd++] = next++;
    }
    uint32_t from = link[k].match;
    const mx_tb *ft = &st->tbs[st->steps[from].tb];
    deps[nd++] = mx_done(link, from);
    op.kind = reduce ? WEFT_OP_REDUCE : WEFT_OP_COPY;
    op.src_rank.v = (uint32_t)st->gpus[ft->gpu].id;
    op.src_buf = WEFT_BUF_SCRATCH;
    op.src_index = link[from].msg_slot;
    op.dst_buf = into;
    op.dst_index = into_index;
    if ((e = weft_plan_add_op(p, &op, deps, nd, NULL)))
        return e;
    if (s->type == WEFT__MSCCL_RCS || s->type == WEFT__MSCCL_RRCS) {
        /* What was stored is sent on: it becomes this step's message. */
        deps[0] = next;
        op.kind = WEFT_OP_COPY;
        op.src_rank = me;
        op.src_buf = (weft_buf)s->dstbuf;
        op.src_index = (uint32_t)s->dstoff;
        op.dst_buf = WEFT_BUF_SCRATCH;
        op.dst_index = link[k].msg_slot;
        return weft_plan_add_op(p, &op, deps, 1, NULL);
    }
    return WEFT_OK;
}

weft_err weft__msccl_build(mx_state *st, weft_plan **out)
{
    weft_err e = WEFT_OK;
    weft_diag *d = st->d;
    uint32_t n = (uint32_t)st->ngpus;
    /* Every gpu exactly once. */
    uint32_t *gpu_at = weft__malloc((size_t)n * sizeof *gpu_at);
    if (!gpu_at)
        return mx_oom(d, st->name, "building the plan");
    for (uint32_t r = 0; r < n; r++)
        gpu_at[r] = UINT32_MAX;
    for (size_t i = 0; i < st->ngpu; i++) {
        uint32_t id = (uint32_t)st->gpus[i].id;
        if (gpu_at[id] != UINT32_MAX) {
            e = mx_at(st, WEFT_EPARSE, st->gpus[i].pos, "gpu %u appears twice", id);
            goto free_gpu_at;
        }
        gpu_at[id] = (uint32_t)i;
    }
    for (uint32_t r = 0; r < n; r++)
        if (gpu_at[r] == UINT32_MAX) {
            e = mx_at(st, WEFT_EPARSE, st->algo_pos, "ngpus is %u, but there is no <gpu id=\"%u\">",
                      n, r);
            goto free_gpu_at;
        }

    weft_plan_info info = {0};
    info.coll = st->coll;
    info.nranks = n;
    info.inplace = st->inplace;
    uint32_t per = st->coll == WEFT_COLL_ALLGATHER || st->coll == WEFT_COLL_REDUCESCATTER ||
                           st->coll == WEFT_COLL_ALLTOALL
                       ? n
                       : 1;
    if ((uint32_t)st->nchunksperloop % per != 0) {
        e = mx_at(st, WEFT_EPARSE, st->algo_pos,
                  "nchunksperloop %d is not a multiple of ngpus %u, as %s needs",
                  (int)st->nchunksperloop, n, weft_coll_name(st->coll));
        goto free_gpu_at;
    }
    info.chunks = (uint32_t)st->nchunksperloop / per;
    if (weft_coll_has_root(st->coll)) {
        if ((uint32_t)st->root >= n) {
            e = mx_at(st, WEFT_EPARSE, st->algo_pos, "root %d is not a gpu (ngpus %u)",
                      (int)st->root, n);
            goto free_gpu_at;
        }
        info.root.v = (uint32_t)st->root;
    }

    /* tb id -> tb index, per gpu. */
    uint32_t *tbmap_start = weft__calloc((size_t)st->ngpu + 1, sizeof *tbmap_start);
    if (!tbmap_start) {
        e = mx_oom(d, st->name, "building the plan");
        goto free_gpu_at;
    }
    for (size_t i = 0; i < st->ngpu; i++) {
        int32_t top = -1;
        const mx_gpu *g = &st->gpus[i];
        for (uint32_t j = 0; j < g->ntb; j++)
            if (st->tbs[g->first_tb + j].id > top)
                top = st->tbs[g->first_tb + j].id;
        if ((uint64_t)top + 1 > 4 * (uint64_t)g->ntb + 1024) {
            e = mx_at(st, WEFT_ELIMIT, g->pos, "threadblock ids up to %d for %u threadblocks",
                      (int)top, g->ntb);
            goto free_tbmap_start;
        }
        tbmap_start[i + 1] = tbmap_start[i] + (uint32_t)(top + 1);
    }
    uint32_t *tbmap = weft__malloc(((size_t)tbmap_start[st->ngpu] + 1) * sizeof *tbmap);
    mx_link *link = weft__calloc(st->nstep ? st->nstep : 1, sizeof *link);
    if (!tbmap || !link) {
        e = mx_oom(d, st->name, "building the plan");
        goto free_link;
    }
    for (uint32_t i = 0; i < tbmap_start[st->ngpu]; i++)
        tbmap[i] = UINT32_MAX;
    for (size_t i = 0; i < st->ntb; i++) {
        const mx_tb *t = &st->tbs[i];
        uint32_t *slot = &tbmap[tbmap_start[t->gpu] + (uint32_t)t->id];
        if (*slot != UINT32_MAX) {
            e = mx_at(st, WEFT_EPARSE, t->pos, "gpu %d has two threadblocks with id %d",
                      (int)st->gpus[t->gpu].id, (int)t->id);
            goto free_link;
        }
        *slot = (uint32_t)i;
    }
    if ((e = mx_match(st, link)))
        goto free_link;

    /* Op ids and message slots. */
    uint64_t nops = 0, scratch = 0;
    for (size_t i = 0; i < st->ngpu; i++)
        if ((uint64_t)st->gpus[i].s_chunks > scratch)
            scratch = (uint64_t)st->gpus[i].s_chunks;
    uint64_t base = scratch;
    for (size_t i = 0; i < st->ngpu; i++) {
        const mx_gpu *g = &st->gpus[i];
        uint64_t next = base;
        for (uint32_t j = 0; j < g->ntb; j++) {
            const mx_tb *t = &st->tbs[g->first_tb + j];
            for (uint32_t k = t->first_step; k < t->first_step + t->nsteps; k++) {
                const mx_step *s = &st->steps[k];
                link[k].first_op = (uint32_t)nops;
                link[k].nops = mx_step_nops(s);
                nops += link[k].nops;
                if (weft__msccl_step_sends(s->type)) {
                    link[k].msg_slot = (uint32_t)next;
                    next += (uint64_t)s->cnt;
                }
                if (nops > WEFT_PLAN_MAX_OPS || next > WEFT_PLAN_MAX_SLOTS) {
                    e = mx_at(st, WEFT_ELIMIT, s->pos, "the program is too large for a plan");
                    goto free_link;
                }
            }
        }
        if (next > scratch)
            scratch = next;
    }
    info.scratch = (uint32_t)scratch;
    weft_plan *p = NULL;
    uint64_t total = weft_plan_info_total_slots(&info);
    if (total > WEFT_PLAN_MAX_TOTAL_SLOTS) {
        e = mx_at(st, WEFT_ELIMIT, st->algo_pos,
                  "%u gpus with %u chunks and %u scratch slots hold %llu slots in all; the limit "
                  "is %llu",
                  n, info.chunks, info.scratch, (unsigned long long)total,
                  (unsigned long long)WEFT_PLAN_MAX_TOTAL_SLOTS);
        goto free_link;
    }
    if ((e = weft_plan_new(&info, &p))) {
        e = weft_diag_set(d, e, "%s: cannot make a plan: %s", st->name, weft_strerror(e));
        goto free_link;
    }
    for (uint32_t k = 0; k < st->nstep; k++)
        if ((e = mx_add_step(st, p, link, tbmap, tbmap_start, k))) {
            if (e == WEFT_ENOMEM)
                mx_oom(d, st->name, "building the plan");
            weft_plan_free(p);
            goto free_link;
        }
    *out = p;
free_link:
    weft__free(link);
    weft__free(tbmap);
free_tbmap_start:
    weft__free(tbmap_start);
free_gpu_at:
    weft__free(gpu_at);
    return e;
}
