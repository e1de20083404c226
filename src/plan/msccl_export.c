/* MSCCL XML export: a weft plan becomes an <algo> program (see the MSCCL
 * section of weft/plan.h and docs/msccl.md).
 *
 * Ops are taken in one topological order of the plan (Kahn's algorithm,
 * ready ops by id). An op between ranks becomes a send step on the source
 * rank and a receive step on the destination rank, each in the threadblock
 * of its (peer, direction, channel); local ops and nops go to one local
 * threadblock per channel. A rank with more than 32 send or receive peers
 * on a channel has its peers spread over channels by offset (make_keys),
 * and a channel with more than 32 threadblocks gets threadblocks that send
 * to one peer and receive from another (merge_crowded), as the executors'
 * per-channel limits ask. As every threadblock appends its steps in the
 * same global order, the k-th send on a connection is the k-th receive.
 * An op of more than 71 chunks becomes consecutive steps of at most 71 on
 * its threadblocks (the executors' cnt limit), cut alike on both ranks.
 * A dep becomes a wait on the dep's own step on the same rank (its receive
 * there, else its send there), which is where the data it orders lives. The
 * document is built in memory (msccl_write.c) and written at the end, so a
 * failure writes nothing. Profiles and options are in msccl_profile.c.
 * Time O((ops + deps) log ops).
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "plan/msccl_internal.h"
#include "plan/plan_internal.h"

#define NONE UINT32_MAX

static int xk_cmp(const void *a, const void *b)
{
    const xk *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->peer != y->peer)
        return x->peer < y->peer ? -1 : 1;
    if (x->chan != y->chan)
        return x->chan < y->chan ? -1 : 1;
    return 0;
}

static uint32_t key_of(const xctx *x, uint32_t rank, uint32_t kind, uint32_t peer, uint32_t chan)
{
    xk k = {rank, kind, peer, chan};
    const xk *at = bsearch(&k, x->keys, x->nkeys, sizeof k, xk_cmp);
    return (uint32_t)(at - x->keys);
}

/* The threadblock of a key: a receive key paired with a send key shares
 * the send key's threadblock. */
static uint32_t tb_of(const xctx *x, uint32_t rank, uint32_t kind, uint32_t peer, uint32_t chan)
{
    return x->alias[key_of(x, rank, kind, peer, chan)];
}

/* Finds the receive-then-send pairs to fuse into rcs / rrcs: op b forwards
 * exactly the slots op a delivered to rank r (same buffer, range, channel),
 * and a is b's only dep with a step on r (b's other deps are waited for on
 * b's destination rank), so b's send can run as the second half of a's
 * receive. Both must be between ranks. On a rank and channel, the
 * threadblock that receives from x then also sends to y, so a receive peer
 * is paired with one send peer; pairs that would need another pairing stay
 * unfused. emit_op fuses only when b's send would directly follow a's
 * receive in that threadblock with nothing to wait for. */
static void find_fusions(xctx *x)
{
    for (size_t t = 0; t < x->nkeys; t++)
        x->alias[t] = (uint32_t)t, x->pair_of[t] = NONE;
    for (uint32_t i = 0; i < x->nops; i++)
        x->fuse_next[i] = x->fused_from[i] = NONE;
    for (uint32_t b = 0; b < x->nops; b++) {
        uint32_t nd;
        const uint32_t *deps = weft_plan_op_deps(x->p, b, &nd);
        weft_op ob = weft_plan_op(x->p, b);
        uint32_t a = NONE, on_r = 0;
        for (uint32_t k = 0; k < nd; k++) {
            weft_op od = weft_plan_op(x->p, deps[k]);
            if (od.src_rank.v == ob.src_rank.v || od.dst_rank.v == ob.src_rank.v)
                a = deps[k], on_r++;
        }
        if (on_r != 1)
            continue;
        weft_op oa = weft_plan_op(x->p, a);
        if (oa.kind == WEFT_OP_NOP || ob.kind == WEFT_OP_NOP || oa.src_rank.v == oa.dst_rank.v ||
            ob.src_rank.v == ob.dst_rank.v || oa.dst_rank.v != ob.src_rank.v ||
            x->chan[a] != x->chan[b] || oa.dst_buf != ob.src_buf || oa.dst_index != ob.src_index ||
            oa.count != ob.count || oa.count > WEFT__MSCCL_MAX_CNT || x->fuse_next[a] != NONE)
            continue;
        uint32_t r = oa.dst_rank.v;
        uint32_t kr = key_of(x, r, TB_RECV, oa.src_rank.v, x->chan[a]);
        uint32_t ks = key_of(x, r, TB_SEND, ob.dst_rank.v, x->chan[b]);
        if (x->pair_of[kr] == NONE && x->pair_of[ks] == NONE) {
            x->pair_of[kr] = ks, x->pair_of[ks] = kr;
            x->alias[kr] = ks;
        } else if (x->pair_of[kr] != ks) {
            continue;
        }
        x->fuse_next[a] = b;
        x->fused_from[b] = a;
    }
}

/* Where slot (buf, idx) of rank r lives in MSCCL's buffers. An in-place
 * program names each aliased slot once: through o for allgather (in[i] is
 * out[r*C+i]), through i for the others. */
static void map_slot(const xctx *x, uint32_t r, weft_buf buf, uint32_t idx, char *b, int64_t *off)
{
    const weft_plan_info *in = x->info;
    *off = idx;
    if (buf == WEFT_BUF_SCRATCH) {
        *b = 's';
        return;
    }
    if (!in->inplace) {
        *b = buf == WEFT_BUF_IN ? 'i' : 'o';
        return;
    }
    if (in->coll == WEFT_COLL_ALLGATHER) {
        *b = 'o';
        if (buf == WEFT_BUF_IN)
            *off = (int64_t)r * in->chunks + idx;
    } else {
        *b = 'i';
        if (in->coll == WEFT_COLL_REDUCESCATTER && buf == WEFT_BUF_OUT)
            *off = (int64_t)r * in->chunks + idx;
    }
}

/* Appends a step (no dep yet); returns its index or NONE on no memory. */
static uint32_t add_step(xctx *x, uint32_t tb, uint8_t type)
{
    if (weft__grow((void **)&x->steps, &x->steps_cap, x->nsteps + 1, sizeof *x->steps))
        return NONE;
    xstep s = {tb, NONE, type, false, 'i', 'i', -1, -1, 0};
    x->steps[x->nsteps] = s;
    x->tb_last[tb] = (uint32_t)x->nsteps;
    return (uint32_t)x->nsteps++;
}

/* Appends the steps of one op's side to threadblock tb: one step of cnt
 * chunks, or consecutive steps of at most WEFT__MSCCL_MAX_CNT (71,
 * plan_internal.h) when cnt is larger (the offsets advance with them; a
 * threadblock runs its steps in order, so only the first waits for dep). Returns the last step
 * (what later steps wait for: it ends after all before it) or NONE on no memory. */
static uint32_t add_steps(xctx *x, uint32_t tb, uint8_t type, uint32_t dep, char sb, int64_t so,
                          char db, int64_t dof, uint32_t cnt)
{
    uint32_t k = NONE;
    for (uint64_t at = 0; at < cnt || k == NONE; at += WEFT__MSCCL_MAX_CNT) {
        if ((k = add_step(x, tb, type)) == NONE)
            return NONE;
        xstep *st = &x->steps[k];
        st->dep = at == 0 ? dep : NONE;
        if (type == WEFT__MSCCL_NOP)
            break;
        st->srcbuf = sb, st->srcoff = so + (int64_t)at, st->dstbuf = db;
        st->dstoff = dof + (int64_t)at;
        st->cnt = cnt - at < WEFT__MSCCL_MAX_CNT ? (uint32_t)(cnt - at) : WEFT__MSCCL_MAX_CNT;
    }
    return k;
}

/* The step of op `dep` on rank r, or NONE when it has none there. */
static uint32_t step_on(const xctx *x, uint32_t dep, uint32_t r)
{
    weft_op o = weft_plan_op(x->p, dep);
    if (o.dst_rank.v == r)
        return x->recv_step[dep];
    if (o.src_rank.v == r)
        return x->send_step[dep];
    return NONE;
}

/* Collects the steps that the step about to be appended to threadblock tb
 * of rank r (for op id) must wait for: each dep's own step on r. Of several
 * in one threadblock only the last counts, and none in tb itself (steps of
 * a threadblock run in order). The first waits become nop steps appended to
 * tb now; the last is returned in *dep_out for the step itself. A dep with
 * a step on neither r nor other_rank cannot be expressed. */
static weft_err wire_deps(xctx *x, uint32_t id, uint32_t r, uint32_t tb, uint32_t *dep_out,
                          uint32_t other_rank)
{
    uint32_t nd;
    const uint32_t *deps = weft_plan_op_deps(x->p, id, &nd);
    size_t nw = 0;
    for (uint32_t k = 0; k < nd; k++) {
        uint32_t target = step_on(x, deps[k], r);
        if (target == NONE) {
            weft_op o = weft_plan_op(x->p, deps[k]);
            if (o.src_rank.v == other_rank || o.dst_rank.v == other_rank)
                continue; /* ordered on the op's other rank */
            return weft_diag_set(x->d, WEFT_EINVAL,
                                 "op %u depends on op %u (rank %u -> rank %u), which has no step "
                                 "on rank %u or rank %u: MSCCL orders steps only within a GPU",
                                 id, deps[k], o.src_rank.v, o.dst_rank.v, r, other_rank);
        }
        if (x->steps[target].tb == tb)
            continue;
        uint32_t last = x->last_wait[tb];
        if (last != NONE && x->steps[last].tb == x->steps[target].tb && target <= last)
            continue; /* this threadblock already waited for it or a later step */
        size_t j = 0;
        while (j < nw && x->steps[x->wait[j]].tb != x->steps[target].tb)
            j++;
        if (j < nw) {
            if (target > x->wait[j])
                x->wait[j] = target;
            continue;
        }
        if (weft__grow((void **)&x->wait, &x->wait_cap, nw + 1, sizeof *x->wait))
            return weft_diag_code(x->d, WEFT_ENOMEM);
        x->wait[nw++] = target;
    }
    for (size_t j = 0; j + 1 < nw; j++) {
        uint32_t nop = add_step(x, tb, WEFT__MSCCL_NOP);
        if (nop == NONE)
            return weft_diag_code(x->d, WEFT_ENOMEM);
        x->steps[nop].dep = x->wait[j];
    }
    *dep_out = nw ? x->wait[nw - 1] : NONE;
    if (nw)
        x->last_wait[tb] = x->wait[nw - 1];
    return WEFT_OK;
}

/* One topological order of the ops into order[]; WEFT_EVERIFY on a cycle,
 * naming an op on it (or waiting for it). */
static weft_err topo_order(xctx *x, uint32_t *order)
{
    uint32_t stuck = UINT32_MAX; /* set only when the deps form a cycle */
    weft_err e = weft__plan_topo_order(x->p, order, &stuck, x->d);
    if (e == WEFT_EVERIFY && stuck != UINT32_MAX)
        e = weft_diag_set(x->d, WEFT_EVERIFY,
                          "op %u is on a dependency cycle (or waits for one), so it has no "
                          "place in an MSCCL program",
                          stuck);
    return e;
}

/* Collects the threadblock keys of every op (on its channel x->chan[op])
 * and sorts them, dropping repeats. */
static void collect_keys(xctx *x)
{
    size_t n = 0;
    for (uint32_t i = 0; i < x->nops; i++) {
        weft_op o = weft_plan_op(x->p, i);
        if (o.src_rank.v == o.dst_rank.v) {
            xk k = {o.src_rank.v, TB_LOCAL, 0, x->chan[i]};
            x->keys[n++] = k;
        } else {
            xk s = {o.src_rank.v, TB_SEND, o.dst_rank.v, x->chan[i]};
            xk r = {o.dst_rank.v, TB_RECV, o.src_rank.v, x->chan[i]};
            x->keys[n++] = s;
            x->keys[n++] = r;
        }
    }
    qsort(x->keys, n, sizeof *x->keys, xk_cmp);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || xk_cmp(&x->keys[u - 1], &x->keys[i]) != 0)
            x->keys[u++] = x->keys[i];
    x->nkeys = u;
}

/* True when some rank sends to (or receives from) more peers on one
 * channel than a channel has send (receive) connections for: the MSCCL
 * executor's parser counts the threadblocks with a send peer and those with
 * a receive peer on each channel and refuses the 33rd (nSendPeers and
 * nRecvPeers against MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL in
 * msccl-executor-nccl src/misc/msccl/msccl_parser.cc). Keys are sorted by
 * (rank, kind, peer, channel). */
static bool peers_crowded(const xctx *x)
{
    uint32_t count[WEFT_MSCCL_MAX_CHANNELS];
    for (size_t t = 0; t < x->nkeys; t++) {
        const xk *k = &x->keys[t];
        if (t == 0 || k->rank != x->keys[t - 1].rank || k->kind != x->keys[t - 1].kind)
            memset(count, 0, sizeof count);
        if (k->kind != TB_LOCAL && ++count[k->chan] > WEFT_MSCCL_MAX_TBS_PER_CHANNEL)
            return true;
    }
    return false;
}

/* Gives every op its channel in the program (x->chan) and collects the
 * threadblock keys. Ops keep their plan channel unless a rank has more than
 * 32 send or receive peers on one; then the peers are spread: with N ranks
 * and S = ceil((N - 1) / 32), the ops from rank s to rank d on plan channel
 * c go to channel c S + ((d - s) mod N - 1) / 32, so each rank sends to at
 * most 32 peers and receives from at most 32 on every channel (the offsets
 * 1..N-1 fall into S runs of 32 on either side), and all messages of a
 * connection stay on one channel in plan order. */
static weft_err make_keys(xctx *x)
{
    uint32_t n = x->info->nranks;
    x->keys = weft__malloc(((size_t)x->nops * 2 + 1) * sizeof *x->keys);
    x->chan = weft__malloc(((size_t)x->nops + 1) * sizeof *x->chan);
    if (!x->keys || !x->chan)
        return weft_diag_code(x->d, WEFT_ENOMEM);
    for (uint32_t i = 0; i < x->nops; i++) {
        weft_op o = weft_plan_op(x->p, i);
        if (o.src_rank.v >= n || o.dst_rank.v >= n)
            return weft_diag_set(x->d, WEFT_EVERIFY,
                                 "op %u (rank %u -> rank %u) names a rank the plan does not have",
                                 i, o.src_rank.v, o.dst_rank.v);
        if (o.channel >= WEFT_MSCCL_MAX_CHANNELS)
            return weft_diag_set(x->d, WEFT_ELIMIT,
                                 "op %u uses channel %u; MSCCL runtimes have at most %u channels",
                                 i, o.channel, WEFT_MSCCL_MAX_CHANNELS);
        x->chan[i] = o.channel;
    }
    collect_keys(x);
    if (!peers_crowded(x))
        return WEFT_OK;
    uint32_t per = WEFT_MSCCL_MAX_TBS_PER_CHANNEL;
    uint32_t spread = (n - 1 + per - 1) / per;
    for (uint32_t i = 0; i < x->nops; i++) {
        weft_op o = weft_plan_op(x->p, i);
        uint32_t off = (o.dst_rank.v + n - o.src_rank.v) % n;
        uint64_t c = (uint64_t)o.channel * spread + (off ? (off - 1) / per : 0);
        if (c >= WEFT_MSCCL_MAX_CHANNELS)
            return weft_diag_set(x->d, WEFT_ELIMIT,
                                 "op %u (rank %u -> rank %u, channel %u) needs channel %llu: %u "
                                 "ranks spread over %u channels per plan channel, so that no rank "
                                 "has more than %u peers on a channel, and MSCCL runtimes have at "
                                 "most %u channels",
                                 i, o.src_rank.v, o.dst_rank.v, o.channel, (unsigned long long)c, n,
                                 spread, per, WEFT_MSCCL_MAX_CHANNELS);
        x->chan[i] = (uint32_t)c;
    }
    collect_keys(x);
    return WEFT_OK;
}

/* Pairs send key s with receive key v: one threadblock, s's. */
static void pair_keys(xctx *x, size_t s, size_t v)
{
    x->pair_of[s] = (uint32_t)v, x->pair_of[v] = (uint32_t)s;
    x->alias[v] = (uint32_t)s;
}

/* Where a rank has more than 32 threadblocks on one channel (a rank of a
 * wide all-to-all: a send and a receive threadblock per peer), some of its
 * threadblocks there send to one peer and receive from another, as many as
 * it takes to fit: first a send and a receive with the same peer, then the
 * rest in peer order; if that is not enough the local steps join the
 * channel's first threadblock. A threadblock runs its steps in emission
 * order, so the merged program still only waits for steps emitted before
 * (no deadlock), but a merged threadblock's sends and receives no longer
 * overlap, so merging only what the limit asks costs least
 * (docs/msccl.md has the simulated times). */
static void merge_crowded(xctx *x)
{
    const uint32_t cap = WEFT_MSCCL_MAX_TBS_PER_CHANNEL;
    for (size_t first = 0, last; first < x->nkeys; first = last) {
        uint32_t r = x->keys[first].rank, tbs[WEFT_MSCCL_MAX_CHANNELS] = {0};
        for (last = first; last < x->nkeys && x->keys[last].rank == r; last++)
            if (x->alias[last] == last)
                tbs[x->keys[last].chan]++;
        for (uint32_t c = 0; c < WEFT_MSCCL_MAX_CHANNELS; c++) {
            if (tbs[c] <= cap)
                continue;
            /* First a send and a receive with the same peer (an exchange),
             * then the rest in peer order, until the channel fits. */
            for (size_t s = first; s < last && tbs[c] > cap; s++) {
                const xk *k = &x->keys[s];
                if (k->kind != TB_SEND || k->chan != c || x->pair_of[s] != NONE)
                    continue;
                xk want = {r, TB_RECV, k->peer, c};
                const xk *at = bsearch(&want, x->keys + first, last - first, sizeof want, xk_cmp);
                if (at && x->pair_of[at - x->keys] == NONE)
                    pair_keys(x, s, (size_t)(at - x->keys)), tbs[c]--;
            }
            size_t s = first, v = first, loc = NONE, any = NONE;
            while (tbs[c] > cap) {
                while (s < last && !(x->keys[s].kind == TB_SEND && x->keys[s].chan == c &&
                                     x->pair_of[s] == NONE))
                    s++;
                while (v < last && !(x->keys[v].kind == TB_RECV && x->keys[v].chan == c &&
                                     x->pair_of[v] == NONE))
                    v++;
                if (s == last || v == last)
                    break;
                pair_keys(x, s, v);
                tbs[c]--, s++, v++;
            }
            if (tbs[c] <= cap)
                continue;
            for (size_t t = first; t < last; t++) {
                if (x->keys[t].chan != c || x->alias[t] != t)
                    continue;
                if (x->keys[t].kind == TB_LOCAL)
                    loc = t;
                else if (any == NONE)
                    any = t;
            }
            if (loc != NONE && any != NONE)
                x->alias[loc] = (uint32_t)any;
        }
    }
}

/* The steps of op id: its local step (a local op), or its send step on the
 * source rank (emit_send) and its receive step on the destination rank
 * (emit_recv). Each is called once all steps it waits for exist. */
static weft_err emit_local(xctx *x, uint32_t id)
{
    weft_op o = weft_plan_op(x->p, id);
    uint32_t s = o.src_rank.v, dep;
    char sb, db;
    int64_t so, dof;
    map_slot(x, s, o.src_buf, o.src_index, &sb, &so);
    map_slot(x, s, o.dst_buf, o.dst_index, &db, &dof);
    uint32_t tb = tb_of(x, s, TB_LOCAL, 0, x->chan[id]);
    weft_err e = wire_deps(x, id, s, tb, &dep, s);
    if (e)
        return e;
    uint8_t type = o.kind == WEFT_OP_NOP      ? WEFT__MSCCL_NOP
                   : o.kind == WEFT_OP_REDUCE ? WEFT__MSCCL_RE
                                              : WEFT__MSCCL_CPY;
    uint32_t k = add_steps(x, tb, type, dep, sb, so, db, dof, o.count);
    if (k == NONE)
        return weft_diag_code(x->d, WEFT_ENOMEM);
    x->send_step[id] = x->recv_step[id] = k;
    return WEFT_OK;
}

static weft_err emit_send(xctx *x, uint32_t id)
{
    weft_op o = weft_plan_op(x->p, id);
    uint32_t s = o.src_rank.v, r = o.dst_rank.v, dep, k;
    char sb, db;
    int64_t so, dof;
    map_slot(x, s, o.src_buf, o.src_index, &sb, &so);
    map_slot(x, r, o.dst_buf, o.dst_index, &db, &dof);
    uint32_t from = x->fused_from[id];
    uint32_t stb = tb_of(x, s, TB_SEND, r, x->chan[id]);
    size_t before = x->nsteps;
    weft_err e = wire_deps(x, id, s, stb, &dep, r);
    if (e)
        return e;
    if (from != NONE && x->nsteps == before && dep == NONE &&
        x->tb_last[stb] == x->recv_step[from]) {
        /* The receive of `from` is the last step of this threadblock and
         * the send waits for nothing more: that step also sends what it
         * stored (r becomes rcs, rrc becomes rrcs). */
        k = x->recv_step[from];
        xstep *st = &x->steps[k];
        st->type = st->type == WEFT__MSCCL_RRC ? WEFT__MSCCL_RRCS : WEFT__MSCCL_RCS;
    } else {
        k = add_steps(x, stb, WEFT__MSCCL_S, dep, sb, so, db, dof, o.count);
        if (k == NONE)
            return weft_diag_code(x->d, WEFT_ENOMEM);
    }
    x->send_step[id] = k;
    return WEFT_OK;
}

static weft_err emit_recv(xctx *x, uint32_t id)
{
    weft_op o = weft_plan_op(x->p, id);
    uint32_t s = o.src_rank.v, r = o.dst_rank.v, dep;
    char sb, db;
    int64_t so, dof;
    map_slot(x, s, o.src_buf, o.src_index, &sb, &so);
    map_slot(x, r, o.dst_buf, o.dst_index, &db, &dof);
    uint32_t rtb = tb_of(x, r, TB_RECV, s, x->chan[id]);
    weft_err e = wire_deps(x, id, r, rtb, &dep, s);
    if (e)
        return e;
    bool reduce = o.kind == WEFT_OP_REDUCE;
    /* rrc adds the message to its src operand and stores in dst; r names
     * where the data came from, as msccl-tools writes it. */
    uint32_t k = add_steps(x, rtb, reduce ? WEFT__MSCCL_RRC : WEFT__MSCCL_R, dep, reduce ? db : sb,
                           reduce ? dof : so, db, dof, o.count);
    if (k == NONE)
        return weft_diag_code(x->d, WEFT_ENOMEM);
    x->recv_step[id] = k;
    return WEFT_OK;
}

static bool is_local(const xctx *x, uint32_t id)
{
    weft_op o = weft_plan_op(x->p, id);
    return o.src_rank.v == o.dst_rank.v;
}

/* The event of op d's step on rank q: 2d its send, 2d+1 its receive or
 * local step; NONE when d has no step on q. */
static uint32_t event_on(const xctx *x, uint32_t d, uint32_t q)
{
    weft_op o = weft_plan_op(x->p, d);
    if (o.dst_rank.v == q)
        return 2 * d + 1;
    if (o.src_rank.v == q)
        return 2 * d;
    return NONE;
}

/* Calls f(x, pre, ev, arg) for every event `pre` that event ev waits for. */
typedef void (*edge_fn)(uint32_t pre, uint32_t ev, void *arg);
static void each_edge(const xctx *x, edge_fn f, void *arg)
{
    for (uint32_t b = 0; b < x->nops; b++) {
        weft_op o = weft_plan_op(x->p, b);
        uint32_t nd;
        const uint32_t *deps = weft_plan_op_deps(x->p, b, &nd);
        bool local = o.src_rank.v == o.dst_rank.v;
        if (!local)
            f(2 * b, 2 * b + 1, arg);
        for (uint32_t k = 0; k < nd; k++) {
            uint32_t pre = event_on(x, deps[k], o.dst_rank.v);
            if (pre != NONE)
                f(pre, 2 * b + 1, arg);
            if (!local && (pre = event_on(x, deps[k], o.src_rank.v)) != NONE)
                f(pre, 2 * b, arg);
        }
    }
}

typedef struct edge_acc {
    uint32_t *indeg;
    uint64_t *start; /* counting pass: counts at [pre + 1]; filling pass: cursors */
    uint32_t *succ;  /* NULL in the counting pass */
} edge_acc;

static void count_edge(uint32_t pre, uint32_t ev, void *arg)
{
    edge_acc *a = arg;
    a->indeg[ev]++;
    a->start[pre + 1]++;
}

static void fill_edge(uint32_t pre, uint32_t ev, void *arg)
{
    edge_acc *a = arg;
    a->succ[a->start[pre]++] = ev;
}

/* Emits every step in an order of events (sends and receives apart) that
 * respects the deps and keeps each connection first in, first out: a
 * receive waits until its message heads its connection. The send of an op
 * fusing with a receive is emitted right after it. *stalled is set (and
 * nothing reported) when connection order and deps cannot both be kept;
 * the caller then falls back to emitting each op whole. */
static weft_err emit_events(xctx *x, bool *stalled)
{
    uint32_t n = x->nops;
    size_t ne = (size_t)2 * n;
    weft_err e = WEFT_OK;
    edge_acc a = {weft__calloc(ne + 1, sizeof(uint32_t)), weft__calloc(ne + 1, sizeof(uint64_t)),
                  NULL};
    uint32_t *queue = weft__malloc((ne + 1) * sizeof *queue);
    uint32_t *next_msg = weft__malloc(((size_t)n + 1) * sizeof *next_msg);
    uint32_t *head = weft__malloc((x->nkeys + 1) * sizeof *head);
    uint32_t *tail = weft__malloc((x->nkeys + 1) * sizeof *tail);
    bool *waiting = weft__calloc((size_t)n + 1, sizeof *waiting);
    if (!a.indeg || !a.start || !queue || !next_msg || !head || !tail || !waiting) {
        e = weft_diag_code(x->d, WEFT_ENOMEM);
        goto free_all;
    }
    each_edge(x, count_edge, &a);
    for (size_t i = 0; i < ne; i++)
        a.start[i + 1] += a.start[i];
    a.succ = weft__malloc((size_t)(a.start[ne] + 1) * sizeof *a.succ);
    if (!a.succ) {
        e = weft_diag_code(x->d, WEFT_ENOMEM);
        goto free_all;
    }
    each_edge(x, fill_edge, &a);
    for (size_t i = ne; i > 0; i--)
        a.start[i] = a.start[i - 1];
    a.start[0] = 0;
    for (size_t t = 0; t < x->nkeys; t++)
        head[t] = tail[t] = NONE;
    size_t qh = 0, qt = 0, done = 0, want = 0;
    for (uint32_t b = 0; b < n; b++) {
        bool local = is_local(x, b);
        want += local ? 1 : 2;
        if (!local && a.indeg[2 * b] == 0)
            queue[qt++] = 2 * b;
        if (local && a.indeg[2 * b + 1] == 0)
            queue[qt++] = 2 * b + 1;
    }
    uint32_t pull = NONE;
    while (qh < qt || pull != NONE) {
        uint32_t ev = pull != NONE ? pull : queue[qh++];
        pull = NONE;
        uint32_t b = ev / 2;
        weft_op o = weft_plan_op(x->p, b);
        bool local = o.src_rank.v == o.dst_rank.v;
        uint32_t key = local ? NONE : key_of(x, o.dst_rank.v, TB_RECV, o.src_rank.v, x->chan[b]);
        if (local)
            e = emit_local(x, b);
        else if (ev % 2 == 0)
            e = emit_send(x, b);
        else
            e = emit_recv(x, b);
        if (e)
            goto free_all;
        done++;
        if (!local && ev % 2 == 0) {
            /* Sent: the message joins its connection's queue. */
            next_msg[b] = NONE;
            if (tail[key] == NONE)
                head[key] = b;
            else
                next_msg[tail[key]] = b;
            tail[key] = b;
        } else if (!local) {
            /* Received: the next message may now be received. */
            head[key] = next_msg[b];
            if (head[key] == NONE)
                tail[key] = NONE;
            else if (waiting[head[key]])
                queue[qt++] = 2 * head[key] + 1, waiting[head[key]] = false;
        }
        uint32_t fuse = local || ev % 2 == 0 ? NONE : x->fuse_next[b];
        for (uint64_t k = a.start[ev]; k < a.start[ev + 1]; k++) {
            uint32_t s = a.succ[k];
            if (--a.indeg[s] != 0)
                continue;
            uint32_t sb = s / 2;
            if (s % 2 == 0 && sb == fuse) {
                pull = s;
            } else if (s % 2 == 1 && !is_local(x, sb)) {
                weft_op so = weft_plan_op(x->p, sb);
                uint32_t sk = key_of(x, so.dst_rank.v, TB_RECV, so.src_rank.v, x->chan[sb]);
                if (head[sk] == sb)
                    queue[qt++] = s;
                else
                    waiting[sb] = true;
            } else {
                queue[qt++] = s;
            }
        }
        if (fuse != NONE && pull != 2 * fuse)
            x->fuse_next[b] = x->fused_from[fuse] = NONE;
    }
    *stalled = done < want;
free_all:
    weft__free(a.succ);
    weft__free(waiting);
    weft__free(tail);
    weft__free(head);
    weft__free(next_msg);
    weft__free(queue);
    weft__free(a.start);
    weft__free(a.indeg);
    return e;
}

/* Frees what one attempt at building the steps allocated. */
static void xctx_reset(xctx *x)
{
    weft__free(x->tb_last);
    weft__free(x->fused_from);
    weft__free(x->fuse_next);
    weft__free(x->pair_of);
    weft__free(x->alias);
    weft__free(x->last_wait);
    weft__free(x->wait);
    weft__free(x->steps);
    weft__free(x->keys);
    weft__free(x->chan);
    weft__free(x->recv_step);
    weft__free(x->send_step);
    const weft_plan *p = x->p;
    const weft_plan_info *info = x->info;
    weft_diag *d = x->d;
    uint32_t nops = x->nops;
    memset(x, 0, sizeof *x);
    x->p = p, x->info = info, x->d = d, x->nops = nops;
}

/* Builds every step. With events, sends and receives are ordered apart
 * and receive-then-send pairs fuse; without, each op is emitted whole in
 * one topological order (always possible) and nothing fuses. *stalled
 * asks the caller to retry without events. */
static weft_err build(xctx *x, bool events, bool *stalled)
{
    weft_err e;
    size_t n = (size_t)x->nops + 1;
    *stalled = false;
    x->send_step = weft__malloc(n * sizeof *x->send_step);
    x->recv_step = weft__malloc(n * sizeof *x->recv_step);
    x->fuse_next = weft__malloc(n * sizeof *x->fuse_next);
    x->fused_from = weft__malloc(n * sizeof *x->fused_from);
    if (!x->send_step || !x->recv_step || !x->fuse_next || !x->fused_from)
        return weft_diag_code(x->d, WEFT_ENOMEM);
    if ((e = make_keys(x)))
        return e;
    size_t nk = x->nkeys + 1;
    x->alias = weft__malloc(nk * sizeof *x->alias);
    x->pair_of = weft__malloc(nk * sizeof *x->pair_of);
    x->tb_last = weft__malloc(nk * sizeof *x->tb_last);
    x->last_wait = weft__malloc(nk * sizeof *x->last_wait);
    if (!x->alias || !x->pair_of || !x->tb_last || !x->last_wait)
        return weft_diag_code(x->d, WEFT_ENOMEM);
    find_fusions(x);
    if (!events) {
        for (size_t t = 0; t < x->nkeys; t++)
            x->alias[t] = (uint32_t)t, x->pair_of[t] = NONE;
        for (uint32_t i = 0; i < x->nops; i++)
            x->fuse_next[i] = x->fused_from[i] = NONE;
    }
    merge_crowded(x);
    for (size_t t = 0; t < x->nkeys; t++)
        x->tb_last[t] = x->last_wait[t] = NONE;
    if (events)
        return emit_events(x, stalled);
    uint32_t *order = weft__malloc(n * sizeof *order);
    if (!order)
        return weft_diag_code(x->d, WEFT_ENOMEM);
    e = topo_order(x, order);
    for (uint32_t i = 0; !e && i < x->nops; i++) {
        uint32_t b = order[i];
        if (is_local(x, b))
            e = emit_local(x, b);
        else if (!(e = emit_send(x, b)))
            e = emit_recv(x, b);
    }
    weft__free(order);
    return e;
}

/* An MSCCL program has no sizes: the executor cuts each buffer into
 * nchunksperloop equal chunks (of count / nchunksperloop elements). A plan
 * of equal chunks (no matrix, or a uniform one whose entries C divides) is
 * written as it is; so is one already in the padded layout (every chunk 0
 * or 1 unit, some block full: what weft_plan_msccl_pad makes). Any other
 * alltoallv plan is padded first (msccl_pad.c). */
bool weft_plan_msccl_needs_padding(const weft_plan *p)
{
    const weft_traffic *t = weft_plan_traffic(p);
    if (!t)
        return false;
    uint32_t c = weft_plan_get_info(p)->chunks;
    uint64_t first = t->bytes[0], big = 0;
    bool equal = true;
    for (size_t i = 0; i < (size_t)t->ranks * t->ranks; i++) {
        equal = equal && t->bytes[i] == first;
        if (t->bytes[i] > big)
            big = t->bytes[i];
    }
    if (equal && first % c == 0)
        return false;
    return big != c;
}

static weft_err write_plan(const weft_plan *p, const weft_msccl_opts *opts, FILE *f, weft_diag *d);

weft_err weft_plan_write_msccl(const weft_plan *p, const weft_msccl_opts *opts, FILE *f,
                               weft_diag *d)
{
    weft_msccl_opts dflt;
    if (!opts) {
        weft_msccl_opts_init(&dflt);
        opts = &dflt;
    }
    if (opts->profile >= WEFT__MSCCL_PROFILE_COUNT)
        return weft_diag_set(d, WEFT_EINVAL, "unknown MSCCL profile %d", (int)opts->profile);
    if (weft_plan_msccl_needs_padding(p)) {
        weft_plan *padded;
        weft_msccl_padding pad;
        weft_err e = weft_plan_msccl_pad(p, NULL, &padded, &pad, d);
        if (!e)
            e = write_plan(padded, opts, f, d);
        weft_plan_free(padded);
        return e;
    }
    return write_plan(p, opts, f, d);
}

/* True when op id waits for an op with no step on either of its ranks
 * (MSCCL orders steps only within a GPU). */
static bool has_remote_dep(const weft_plan *p, uint32_t id)
{
    weft_op o = weft_plan_op(p, id);
    uint32_t nd;
    const uint32_t *deps = weft_plan_op_deps(p, id, &nd);
    for (uint32_t k = 0; k < nd; k++) {
        weft_op y = weft_plan_op(p, deps[k]);
        if (y.src_rank.v != o.src_rank.v && y.dst_rank.v != o.src_rank.v &&
            y.src_rank.v != o.dst_rank.v && y.dst_rank.v != o.dst_rank.v)
            return true;
    }
    return false;
}

/* A dep on an op with no step on either rank of the waiting op is never a
 * data dependence (reading, writing or overwriting a slot of a rank
 * involves a step there): it paces (flash's rounds: a rank's send waits
 * for the last send of the rank that last sent into it, which may since
 * have sent elsewhere). MSCCL cannot say it, so the plan without such deps
 * is exported when it still verifies (every order its remaining deps allow
 * gives the collective's result, weft_plan_verify): *out is that plan, or
 * NULL when p has none, or when it does not verify without them (then the
 * build names the first). */
static weft_err drop_remote_deps(const weft_plan *p, weft_plan **out, weft_diag *d)
{
    *out = NULL;
    uint32_t n = weft_plan_num_ops(p), any = 0;
    for (uint32_t i = 0; i < n && !any; i++)
        any = has_remote_dep(p, i);
    if (!any)
        return WEFT_OK;
    weft_plan *q = NULL;
    weft_err e = weft_plan_copy(p, &q);
    uint32_t *keep = NULL;
    size_t cap = 0;
    for (uint32_t i = 0; !e && i < n; i++) {
        if (!has_remote_dep(p, i))
            continue;
        weft_op o = weft_plan_op(p, i);
        uint32_t nd, nk = 0;
        const uint32_t *deps = weft_plan_op_deps(p, i, &nd);
        if (weft__grow((void **)&keep, &cap, (size_t)nd + 1, sizeof *keep)) {
            e = WEFT_ENOMEM;
            break;
        }
        for (uint32_t k = 0; k < nd; k++) {
            weft_op y = weft_plan_op(p, deps[k]);
            if (y.src_rank.v == o.src_rank.v || y.dst_rank.v == o.src_rank.v ||
                y.src_rank.v == o.dst_rank.v || y.dst_rank.v == o.dst_rank.v)
                keep[nk++] = deps[k];
        }
        e = weft_plan_set_deps(q, i, keep, nk);
    }
    weft__free(keep);
    if (e) {
        weft_plan_free(q);
        return weft_diag_code(d, e);
    }
    weft_diag vd;
    weft_diag_clear(&vd);
    if (weft_plan_verify(q, NULL, &vd) != WEFT_OK) {
        weft_plan_free(q); /* they order data: refused as before */
        return WEFT_OK;
    }
    *out = q;
    return WEFT_OK;
}

static weft_err write_plan_paced(const weft_plan *p, const weft_msccl_opts *opts, FILE *f,
                                 weft_diag *d);

static weft_err write_plan(const weft_plan *p, const weft_msccl_opts *opts, FILE *f, weft_diag *d)
{
    weft_plan *q = NULL;
    weft_err e = drop_remote_deps(p, &q, d);
    if (!e)
        e = write_plan_paced(q ? q : p, opts, f, d);
    weft_plan_free(q);
    return e;
}

static weft_err write_plan_paced(const weft_plan *p, const weft_msccl_opts *opts, FILE *f,
                                 weft_diag *d)
{
    xctx x = {0};
    x.p = p;
    x.info = weft_plan_get_info(p);
    x.d = d;
    x.nops = weft_plan_num_ops(p);
    xout out = {0};
    bool stalled;
    /* A cycle is reported before anything else (events would only stall). */
    uint32_t *order = weft__malloc(((size_t)x.nops + 1) * sizeof *order);
    weft_err e = order ? topo_order(&x, order) : weft_diag_code(d, WEFT_ENOMEM);
    weft__free(order);
    if (!e)
        e = build(&x, true, &stalled);
    if (!e && stalled) {
        xctx_reset(&x);
        e = build(&x, false, &stalled);
    }
    if (!e)
        e = weft__msccl_write_doc(&x, opts, &out);
    if (!e && (fwrite(out.buf, 1, out.len, f) != out.len || fflush(f) != 0))
        e = weft_diag_set(d, WEFT_EIO, "cannot write the MSCCL program");
    weft__free(out.buf);
    xctx_reset(&x);
    return e;
}
