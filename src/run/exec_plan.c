/* Over 900 lines on purpose: the order, the slices, the run and the alltoallv
 * sizing pass share one item state and its invariants, kept in one file. */
/* Running a plan across the ranks of a communicator (see weft_comm_run_plan
 * in weft/comm.h).
 *
 * Order. Every rank orders all ops topologically (Kahn's algorithm, ready
 * ops taken in id order), so every rank gets the same global order G, and
 * keeps the list L of the ops it takes part in (positions 0 .. len-1).
 *
 * Slices. Each run cuts every chunk into S slices at element boundaries (S
 * from the chunk's size: about WEFT_EXEC_SLICE_BYTES each, at most
 * WEFT_EXEC_MAX_SLICES; weft/exec_model.h); slice s of an op moves
 * sub-range s of each of its slots. Item (o, s) waits for item (q, s) of
 * every op q it depends on and for its own slice s-1: the
 * simulator's pipelining (weft_sim_plan with o->slices = S), so a forwarded
 * chunk leaves a rank while its later slices are still arriving. This is
 * exact for a verified plan: two accesses to one slot, one a write, are
 * ordered by deps, and slice s of both touches the same bytes; different
 * slices touch different bytes.
 *
 * Waiting. For an op o of L, W(o) is the set of ops of L that o depends on
 * directly or through other ranks' ops, reduced to those reached without
 * passing through another op of L (an op of L starts only after its own W,
 * so it stands for everything behind it). One pass over G computes it:
 * M(q) = {q} for q in L, the union of M(deps) otherwise; W(o) = union of
 * M(deps). A set that would exceed WAIT_CAP entries is replaced by a prefix
 * bound P: "every op of L before position P has finished" (coarser, still
 * correct), so memory stays O(ops x WAIT_CAP).
 *
 * Streams. A remote op travels on one stream of the transport: (peer,
 * direction, lane), the lane from the op's channel (channel mod the lanes
 * the peer's transport offers; shared memory has one). Items are posted as
 * soon as they are ready, except that within a stream they are posted in G
 * order (op by op, slices in order), so both ends of a stream match the
 * same messages. Every ready item of every stream is in flight at once.
 *
 * Alltoallv plans (weft/plan.h, "Alltoallv": a traffic matrix fixes every
 * chunk's bytes). weft_comm_plan_new runs the plan symbolically once, over
 * every rank (which chunk each storage slot holds after each op), which
 * gives the bytes of every slot each of this rank's ops moves and the
 * largest value each of this rank's storage slots ever holds. A run lays the
 * in and out slots out as MPI displacements do: chunk p of block (s, d), b
 * bytes in C chunks, starts at the block's displacement + p*floor(b/C) +
 * min(p, b mod C). In slots are read straight from sendbuf when no op of
 * this rank writes them (and the call is not in place), out slots written
 * straight into recvbuf when no op writes a larger value into one; every
 * other slot (scratch, and in and out of an in-place plan) lives in a
 * private buffer, each sized by the largest value it holds, filled from
 * sendbuf first and copied to recvbuf last. Slots need not be contiguous
 * between blocks, so an op sends one message per slot (and slice) that has
 * bytes; both ends know every slot's bytes from the symbolic run, so they
 * skip the same empty ones. The argument of exactness above needs every
 * access to a slot in slice s to touch the same bytes of the slot. Where no
 * storage slot of any rank ever holds values of two different nonzero sizes
 * (the symbolic run checks it), slice s of a value of b bytes is bytes
 * [b*s/S, b*(s+1)/S), S the mean chunk's (as the simulator cuts). Where one
 * does (Bruck's packing slots, an in-place plan's slots), slices are cut by
 * position instead: slice s is bytes [s*Q, (s+1)*Q) of the slot, clipped to
 * the value's b bytes, Q = the mean chunk's slice bytes (raised so that the
 * largest chunk has at most WEFT_EXEC_MAX_SLICES), S = the largest chunk's
 * slices; every access to a slot, of any value, then touches bytes
 * [s*Q, (s+1)*Q) in slice s, and the two ends of a transfer cut alike
 * (slices past a value's end are empty, skipped by both). Every rank
 * computes the same S and Q from the plan.
 *
 * Deadlock freedom: let (o, s) be the first unfinished item in G's order
 * (ops in G order, slices in order). Every item it waits for (deps' slice s,
 * its own slice s-1, prefix bounds) and every earlier item of its stream
 * precede it, so they finished; both of its ranks therefore post it, it is
 * at the head of its stream on both, and the transport moves it (streams
 * progress independently). By induction, every item completes.
 */
#include <string.h>

#include "base/alloc.h"
#include "run/clock.h"
#include "run/coll_busy.h"
#include "run/comm_fail.h"
#include "run/comm_internal.h"
#include "run/exec_plan.h"
#include "run/p2p.h"
#include "weft/exec_model.h"
#include "weft/log.h"

#define WAIT_CAP 32u

/* The simulator's runtime model assumes the default lanes (exec_model.h). */
_Static_assert(WEFT_EXEC_TCP_LANES == WEFT_DEFAULT_TCP_CONNS,
               "WEFT_EXEC_TCP_LANES must equal WEFT_DEFAULT_TCP_CONNS");

typedef struct waitset {
    uint32_t prefix;   /* every op of L before this position must be done */
    uint32_t off, len; /* explicit positions: pool[off .. off+len) */
} waitset;

struct weft_comm_plan {
    weft_comm *c;
    const weft_plan *p; /* borrowed */
    uint32_t len;       /* ops of this rank */
    uint32_t *order;    /* L: op ids of this rank, in G order */
    waitset *wait;      /* per position: W */
    uint32_t *pool;     /* positions named by the wait sets */
    int64_t *prev;      /* per position: previous position of its stream, -1 for none */
    uint32_t *lane;     /* per position: the transport lane (1 + channel mod lanes) */
    size_t last_cb;     /* chunk bytes of the previous run, for the log line */
    /* An alltoallv plan (the header comment's "Alltoallv plans"). */
    bool sized;
    bool in_direct;                /* no op of this rank writes an in slot (and out of place) */
    bool out_direct;               /* no op writes into an out slot more than its final chunk */
    uint32_t sized_slices;         /* S of every run */
    uint64_t sized_quantum;        /* Q: slices cut by position; 0: by fraction */
    uint32_t nst;                  /* storage slots of this rank */
    uint32_t *st[WEFT__BUF_COUNT]; /* storage slot of (buf, index) on this rank */
    uint64_t *cap;                 /* per storage slot: its largest value, bytes */
    uint64_t *vb;                  /* bytes of each slot each position moves */
    unsigned char *priv;           /* the private slots, kept between runs */
    size_t priv_cap;               /* its bytes */
    size_t *vboff;                 /* per position: its first entry of vb */
};

/* The per-run state on top of the prepared schedule. */
typedef struct exec_state {
    const struct weft_comm_plan *x;
    weft_comm *c;
    unsigned char *buf[WEFT__BUF_COUNT];
    size_t cb, es; /* bytes per chunk, per element */
    size_t elems;  /* elements per chunk */
    uint32_t slices;
    weft__reduce_fn fn;
    uint32_t *posted;   /* per position: slices posted (local ops: done) */
    uint32_t *done;     /* per position: leading slices complete */
    size_t *rbase;      /* per position: its first request */
    weft__xreq *reqs;   /* per position, slice and slot segment */
    uint32_t first;     /* every position before it is complete */
    unsigned char **at; /* alltoallv plan: per storage slot of this rank, its address */
} exec_state;

static uint32_t lanes_of(const weft_comm *c, uint32_t peer)
{
    if (c->via[peer] != WEFT__VIA_TCP || !weft__xport_tcp.lanes)
        return 1;
    uint32_t k = weft__xport_tcp.lanes(c->tcp);
    return k ? k : 1;
}

/* ---- Schedule (size independent) --------------------------------------------- */

/* Builds a wait set from the sets of deps into *out; mark[] (len entries)
 * holds stamps, pool grows. */
typedef struct merger {
    uint32_t *pool;
    size_t cap, used;
    uint32_t *mark, stamp;
    uint32_t *tmp; /* len entries */
} merger;

static weft_err merge(merger *m, const waitset *const *in, uint32_t nin, waitset *out)
{
    uint32_t prefix = 0, n = 0;
    m->stamp++;
    for (uint32_t k = 0; k < nin; k++)
        prefix = in[k]->prefix > prefix ? in[k]->prefix : prefix;
    for (uint32_t k = 0; k < nin; k++) {
        const uint32_t *v = m->pool + in[k]->off;
        for (uint32_t j = 0; j < in[k]->len; j++) {
            if (v[j] < prefix || m->mark[v[j]] == m->stamp)
                continue;
            m->mark[v[j]] = m->stamp;
            m->tmp[n++] = v[j];
        }
    }
    if (n > WAIT_CAP) { /* coarsen: wait for the whole prefix instead */
        for (uint32_t j = 0; j < n; j++)
            prefix = m->tmp[j] + 1 > prefix ? m->tmp[j] + 1 : prefix;
        n = 0;
    }
    if (weft__grow((void **)&m->pool, &m->cap, m->used + n + 1, sizeof *m->pool))
        return WEFT_ENOMEM;
    out->prefix = prefix;
    out->off = (uint32_t)m->used;
    out->len = n;
    memcpy(m->pool + m->used, m->tmp, (size_t)n * sizeof *m->tmp);
    m->used += n;
    return WEFT_OK;
}

/* The stream key of a remote op of this rank: (peer, is_send, lane). */
typedef struct stream_key {
    uint32_t peer, lane;
    bool send;
} stream_key;

static weft_err schedule(struct weft_comm_plan *x, weft_diag *d)
{
    const weft_plan *p = x->p;
    uint32_t n = weft_plan_num_ops(p), me = x->c->rank, size = x->c->size;
    weft_err e = WEFT_ENOMEM;
    uint32_t *order = NULL, *pos = NULL;
    waitset *m = NULL;
    const waitset **in = NULL;
    merger mg = {0};
    int64_t *last = NULL; /* per (peer, send, lane): last position of the stream */
    uint32_t maxlanes = 1;
    for (uint32_t r = 0; r < size; r++)
        if (r != me && lanes_of(x->c, r) > maxlanes)
            maxlanes = lanes_of(x->c, r);
    order = weft__malloc(((size_t)n + 1) * sizeof *order);
    pos = weft__malloc(((size_t)n + 1) * sizeof *pos);
    m = weft__calloc((size_t)n + 1, sizeof *m);
    in = weft__malloc(((size_t)n + 1) * sizeof *in);
    last = weft__malloc(((size_t)size * 2 * maxlanes + 1) * sizeof *last);
    if (!order || !pos || !m || !in || !last)
        goto free_scratch;
    e = weft_plan_topo_order(p, order, d);
    if (e)
        goto free_scratch;
    x->len = 0;
    for (uint32_t k = 0; k < n; k++) {
        weft_op op = weft_plan_op(p, order[k]);
        if (op.src_rank.v == me || op.dst_rank.v == me)
            pos[order[k]] = x->len++;
        else
            pos[order[k]] = UINT32_MAX;
    }
    e = WEFT_ENOMEM;
    x->order = weft__malloc(((size_t)x->len + 1) * sizeof *x->order);
    x->wait = weft__calloc((size_t)x->len + 1, sizeof *x->wait);
    x->prev = weft__malloc(((size_t)x->len + 1) * sizeof *x->prev);
    x->lane = weft__calloc((size_t)x->len + 1, sizeof *x->lane);
    mg.mark = weft__calloc((size_t)x->len + 1, sizeof *mg.mark);
    mg.tmp = weft__malloc(((size_t)x->len + 1) * sizeof *mg.tmp);
    if (!x->order || !x->wait || !x->prev || !x->lane || !mg.mark || !mg.tmp)
        goto free_scratch;
    for (size_t k = 0; k < (size_t)size * 2 * maxlanes; k++)
        last[k] = -1;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t o = order[k], nd;
        const uint32_t *deps = weft_plan_op_deps(p, o, &nd);
        for (uint32_t j = 0; j < nd; j++)
            in[j] = &m[deps[j]];
        uint32_t i = pos[o];
        if (i == UINT32_MAX) { /* another rank's op: carries what it depends on */
            if (merge(&mg, in, nd, &m[o]))
                goto free_scratch;
            continue;
        }
        if (merge(&mg, in, nd, &x->wait[i]))
            goto free_scratch;
        x->order[i] = o;
        /* M(o) = {o}. */
        if (weft__grow((void **)&mg.pool, &mg.cap, mg.used + 1, sizeof *mg.pool))
            goto free_scratch;
        m[o] = (waitset){.prefix = 0, .off = (uint32_t)mg.used, .len = 1};
        mg.pool[mg.used++] = i;
        weft_op op = weft_plan_op(p, o);
        x->prev[i] = -1;
        if (op.kind == WEFT_OP_NOP || op.src_rank.v == op.dst_rank.v)
            continue;
        bool send = op.src_rank.v == me;
        uint32_t peer = send ? op.dst_rank.v : op.src_rank.v;
        uint32_t lanes = lanes_of(x->c, peer);
        x->lane[i] = 1 + op.channel % lanes;
        size_t key = ((size_t)peer * 2 + send) * maxlanes + (x->lane[i] - 1);
        x->prev[i] = last[key];
        last[key] = i;
    }
    x->pool = mg.pool;
    mg.pool = NULL;
    e = WEFT_OK;
free_scratch:
    if (e)
        weft_diag_code(d, e);
    weft__free(order);
    weft__free(pos);
    weft__free(m);
    weft__free(in);
    weft__free(last);
    weft__free(mg.pool);
    weft__free(mg.mark);
    weft__free(mg.tmp);
    return e;
}

/* ---- Running ------------------------------------------------------------------- */

/* Elements [lo, hi) of every chunk form slice s. */
static void slice_range(const exec_state *x, uint32_t s, size_t *lo, size_t *hi)
{
    *lo = (size_t)((unsigned __int128)x->elems * s / x->slices);
    *hi = (size_t)((unsigned __int128)x->elems * (s + 1) / x->slices);
}

/* Messages per slice of an op moving count slots: one per slot (slice s of
 * each slot); with one slice the slots are contiguous, so one in all. */
static uint32_t segments(const exec_state *x, const weft_op *op)
{
    return x->slices == 1 && !x->x->sized ? 1 : op->count;
}

static bool item_ready(const exec_state *x, uint32_t i, uint32_t s)
{
    const waitset *w = &x->x->wait[i];
    if (x->first < w->prefix)
        return false;
    const uint32_t *v = x->x->pool + w->off;
    for (uint32_t k = 0; k < w->len; k++)
        if (x->done[v[k]] <= s)
            return false;
    int64_t pv = x->x->prev[i];
    if (s == 0 && pv >= 0 && x->posted[pv] < x->slices)
        return false;
    return true;
}

/* Bytes [lo, hi) of a value of b bytes form slice s (alltoallv plans):
 * the fraction s/S of it, or with a quantum q, bytes [s*q, (s+1)*q) of its
 * slot clipped to the value. */
static void slice_bytes(uint64_t b, uint32_t s, uint32_t slices, uint64_t q, uint64_t *lo,
                        uint64_t *hi)
{
    if (q) {
        *lo = (uint64_t)s * q < b ? (uint64_t)s * q : b;
        *hi = (uint64_t)(s + 1) * q < b ? (uint64_t)(s + 1) * q : b;
        return;
    }
    *lo = (uint64_t)((unsigned __int128)b * s / slices);
    *hi = (uint64_t)((unsigned __int128)b * (s + 1) / slices);
}

/* The address of slot `index` of buf on this rank (alltoallv plans). */
static unsigned char *slot_at(const exec_state *x, weft_buf buf, uint32_t index)
{
    return x->at[x->x->st[buf][index]];
}

/* start_item for an alltoallv plan: one message per slot with bytes in
 * slice s; a slot without is marked complete and never posted (its peer,
 * which knows the same bytes, skips it too). */
static weft_err start_sized(exec_state *x, uint32_t i, uint32_t s, const weft_op *op, weft_diag *d)
{
    uint32_t me = x->c->rank;
    bool local = op->src_rank.v == me && op->dst_rank.v == me;
    const uint64_t *vb = x->x->vb + x->x->vboff[i];
    for (uint32_t k = 0; k < op->count; k++) {
        uint64_t lo, hi;
        slice_bytes(vb[k], s, x->slices, x->x->sized_quantum, &lo, &hi);
        unsigned char *src =
            op->src_rank.v == me ? slot_at(x, op->src_buf, op->src_index + k) : NULL;
        unsigned char *dst =
            op->dst_rank.v == me ? slot_at(x, op->dst_buf, op->dst_index + k) : NULL;
        if (local) {
            if (hi > lo)
                memmove(dst + lo, src + lo, (size_t)(hi - lo));
            continue;
        }
        weft__xreq *r = &x->reqs[x->rbase[i] + (size_t)s * op->count + k];
        memset(r, 0, sizeof *r);
        if (hi == lo) {
            r->complete = true;
            continue;
        }
        r->len = (size_t)(hi - lo);
        r->lane = x->x->lane[i];
        r->is_send = src != NULL;
        r->peer = src ? op->dst_rank.v : op->src_rank.v;
        r->buf = (src ? src : dst) + lo;
        weft_err e = weft__comm_post(x->c, r, d);
        if (e)
            return e;
    }
    return WEFT_OK;
}

/* Runs a local op's slice s, or posts a remote op's. */
static weft_err start_item(exec_state *x, uint32_t i, uint32_t s, weft_diag *d)
{
    weft_op op = weft_plan_op(x->x->p, x->x->order[i]);
    uint32_t me = x->c->rank;
    if (x->x->sized)
        return op.kind == WEFT_OP_NOP ? WEFT_OK : start_sized(x, i, s, &op, d);
    size_t lo, hi;
    slice_range(x, s, &lo, &hi);
    if (op.kind == WEFT_OP_NOP || hi == lo)
        return WEFT_OK;
    uint32_t segs = segments(x, &op);
    bool whole = x->slices == 1;
    size_t seg_bytes = whole ? (size_t)op.count * x->cb : (hi - lo) * x->es;
    bool local = op.src_rank.v == me && op.dst_rank.v == me;
    for (uint32_t k = 0; k < segs; k++) {
        size_t at = whole ? 0 : (size_t)k * x->cb + lo * x->es;
        unsigned char *src = x->buf[op.src_buf] + (size_t)op.src_index * x->cb + at;
        unsigned char *dst = x->buf[op.dst_buf] + (size_t)op.dst_index * x->cb + at;
        if (local) {
            if (op.kind == WEFT_OP_COPY) {
                memmove(dst, src, seg_bytes);
            } else {
                weft_err e = weft__reduce_overlapping(x->fn, dst, src, seg_bytes / x->es, x->es);
                if (e)
                    return weft_diag_code(d, e);
            }
            continue;
        }
        weft__xreq *r = &x->reqs[x->rbase[i] + (size_t)s * segs + k];
        memset(r, 0, sizeof *r);
        r->len = seg_bytes;
        r->lane = x->x->lane[i];
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
        weft_err e = weft__comm_post(x->c, r, d);
        if (e)
            return e;
    }
    return WEFT_OK;
}

/* Advances done[i] over the leading slices whose requests all completed. */
static bool update_done(exec_state *x, uint32_t i)
{
    bool moved = false;
    while (x->done[i] < x->posted[i]) {
        uint32_t s = x->done[i];
        weft_op op = weft_plan_op(x->x->p, x->x->order[i]);
        bool remote = op.kind != WEFT_OP_NOP && op.src_rank.v != op.dst_rank.v;
        if (remote) {
            size_t lo = 0, hi = 1;
            if (!x->x->sized)
                slice_range(x, s, &lo, &hi); /* else empty slots are complete */
            uint32_t segs = segments(x, &op);
            const weft__xreq *r = &x->reqs[x->rbase[i] + (size_t)s * segs];
            for (uint32_t k = 0; hi > lo && k < segs; k++)
                if (!r[k].complete)
                    return moved;
        }
        x->done[i]++;
        moved = true;
    }
    return moved;
}

/* The peer of the first unfinished remote op (the one to blame for a
 * stall). */
static uint32_t waited_peer(const exec_state *x)
{
    uint32_t me = x->c->rank;
    for (uint32_t i = x->first; i < x->x->len; i++) {
        weft_op op = weft_plan_op(x->x->p, x->x->order[i]);
        if (x->done[i] == x->slices || op.src_rank.v == op.dst_rank.v)
            continue;
        return op.src_rank.v == me ? op.dst_rank.v : op.src_rank.v;
    }
    return me;
}

static weft_err execute(exec_state *x, weft_diag *d)
{
    uint32_t len = x->x->len, S = x->slices;
    int64_t last = weft__now_ns();
    x->first = 0;
    while (x->first < len) {
        bool moved = false;
        for (uint32_t i = x->first; i < len; i++) {
            if (x->done[i] == S)
                continue;
            while (x->posted[i] < S && item_ready(x, i, x->posted[i])) {
                weft_err e = start_item(x, i, x->posted[i], d);
                if (e)
                    return e;
                x->posted[i]++;
                moved = true;
            }
            moved |= update_done(x, i);
        }
        while (x->first < len && x->done[x->first] == S)
            x->first++;
        if (moved || x->first == len)
            continue;
        weft_err e = weft__comm_progress(x->c, &moved, d);
        if (e)
            return e;
        int64_t now = weft__now_ns();
        if (moved) {
            last = now;
        } else if (now - last > x->c->timeout_ns) {
            return weft__comm_stalled(x->c, waited_peer(x), d);
        }
    }
    return WEFT_OK;
}

void weft_comm_plan_free(weft_comm_plan *x)
{
    if (!x)
        return;
    weft__free(x->order);
    weft__free(x->wait);
    weft__free(x->pool);
    weft__free(x->prev);
    weft__free(x->lane);
    for (int b = 0; b < WEFT__BUF_COUNT; b++)
        weft__free(x->st[b]);
    weft__free(x->cap);
    weft__free(x->vb);
    weft__free(x->vboff);
    weft__free(x->priv);
    weft__free(x);
}

/* ---- Alltoallv plans: the symbolic run (size independent of the call) ------ */

/* A slot that holds no chunk (chunk ids fit 32 bits: the plan's limits). */
#define EMPTY UINT32_MAX

/* The chunk in[i] of rank r starts with, and the one out[i] ends with. */
static uint64_t chunk_in(uint32_t n, uint32_t chunks, uint32_t r, uint32_t i)
{
    return ((uint64_t)r * n + i / chunks) * chunks + i % chunks;
}
static uint64_t chunk_out(uint32_t n, uint32_t chunks, uint32_t r, uint32_t i)
{
    return ((uint64_t)(i / chunks) * n + r) * chunks + i % chunks;
}

/* Where chunk p of a block of b bytes in C chunks starts within the block
 * (weft/plan.h: floor(b/C) bytes each, one more for p < b mod C). */
static size_t chunk_at(uint64_t b, uint32_t chunks, uint32_t p)
{
    return (size_t)(p * (b / chunks) + (p < b % chunks ? p : b % chunks));
}

/* Fills x's alltoallv fields by running the plan symbolically over every
 * rank in one topological order (for a verified plan every order gives the
 * same values). Time O(ops + slots moved + slots of all ranks), memory 12
 * bytes per slot of all ranks (the verifier keeps 16). */
static weft_err size_plan(struct weft_comm_plan *x, weft_diag *d)
{
    const weft_plan *p = x->p;
    const weft_plan_info *info = weft_plan_get_info(p);
    uint32_t n = info->nranks, C = info->chunks, me = x->c->rank, nops = weft_plan_num_ops(p);
    uint32_t nb[WEFT__BUF_COUNT];
    size_t per = 0; /* storage numbers of a rank lie below this */
    for (int b = 0; b < WEFT__BUF_COUNT; b++) {
        nb[b] = weft_plan_buf_slots(p, (weft_buf)b);
        per += nb[b];
    }
    weft_err e = WEFT_ENOMEM;
    uint32_t *val = weft__malloc((n * per + 1) * sizeof *val);
    uint64_t *sz = weft__calloc(n * per + 1, sizeof *sz);
    uint32_t *order = weft__malloc(((size_t)nops + 1) * sizeof *order);
    uint32_t *pos = weft__malloc(((size_t)nops + 1) * sizeof *pos);
    x->vboff = weft__malloc(((size_t)x->len + 1) * sizeof *x->vboff);
    if (!val || !sz || !order || !pos || !x->vboff)
        goto free_scratch;
    x->nst = 0;
    for (int b = 0; b < WEFT__BUF_COUNT; b++) {
        if (!(x->st[b] = weft__malloc(((size_t)nb[b] + 1) * sizeof *x->st[b])))
            goto free_scratch;
        for (uint32_t i = 0; i < nb[b]; i++) {
            x->st[b][i] = weft_plan_storage_slot(p, (weft_rank){me}, (weft_buf)b, i);
            if (x->st[b][i] + 1 > x->nst)
                x->nst = x->st[b][i] + 1;
        }
    }
    size_t nvb = 0;
    for (uint32_t k = 0; k < nops; k++)
        pos[k] = UINT32_MAX;
    for (uint32_t i = 0; i < x->len; i++) {
        weft_op op = weft_plan_op(p, x->order[i]);
        pos[x->order[i]] = i;
        x->vboff[i] = nvb;
        nvb += op.kind == WEFT_OP_NOP ? 0 : op.count;
    }
    x->cap = weft__calloc((size_t)x->nst + 1, sizeof *x->cap);
    x->vb = weft__malloc((nvb + 1) * sizeof *x->vb);
    if (!x->cap || !x->vb)
        goto free_scratch;
    if ((e = weft_plan_topo_order(p, order, d)))
        goto free_scratch;
    for (size_t k = 0; k < n * per; k++)
        val[k] = EMPTY;
    for (uint32_t r = 0; r < n; r++)
        for (uint32_t i = 0; i < nb[WEFT_BUF_IN]; i++) {
            uint64_t ch = chunk_in(n, C, r, i);
            size_t at = r * per + weft_plan_storage_slot(p, (weft_rank){r}, WEFT_BUF_IN, i);
            val[at] = (uint32_t)ch;
            sz[at] = weft_plan_chunk_bytes(p, ch);
        }
    bool uniform = true;
    x->in_direct = x->out_direct = !info->inplace;
    for (uint32_t k = 0; k < nops; k++) {
        weft_op op = weft_plan_op(p, order[k]);
        if (op.kind == WEFT_OP_NOP)
            continue;
        if (op.kind != WEFT_OP_COPY) {
            e = weft_diag_set(d, WEFT_EUNSUPPORTED,
                              "plan: op %u reduces; the runtime runs alltoallv plans of copies "
                              "only",
                              order[k]);
            goto free_scratch;
        }
        uint32_t i = pos[order[k]];
        for (uint32_t j = 0; j < op.count; j++) {
            size_t sa = op.src_rank.v * per +
                        weft_plan_storage_slot(p, op.src_rank, op.src_buf, op.src_index + j);
            uint32_t ds = weft_plan_storage_slot(p, op.dst_rank, op.dst_buf, op.dst_index + j);
            uint32_t v = val[sa];
            uint64_t b = v == EMPTY ? 0 : weft_plan_chunk_bytes(p, v);
            size_t da = op.dst_rank.v * per + ds;
            val[da] = v;
            if (b && sz[da] && sz[da] != b)
                uniform = false;
            if (b && !sz[da])
                sz[da] = b;
            if (i != UINT32_MAX)
                x->vb[x->vboff[i] + j] = b;
            if (op.dst_rank.v != me)
                continue;
            if (b > x->cap[ds])
                x->cap[ds] = b;
            if (op.dst_buf == WEFT_BUF_IN)
                x->in_direct = false;
            if (op.dst_buf == WEFT_BUF_OUT &&
                b > weft_plan_chunk_bytes(p, chunk_out(n, C, me, op.dst_index + j)))
                x->out_direct = false;
        }
    }
    /* Private slots hold their first and last values too. */
    for (uint32_t i = 0; i < nb[WEFT_BUF_IN]; i++) {
        uint64_t b = weft_plan_chunk_bytes(p, chunk_in(n, C, me, i));
        uint32_t st = x->st[WEFT_BUF_IN][i];
        if (b > x->cap[st])
            x->cap[st] = b;
    }
    for (uint32_t i = 0; i < nb[WEFT_BUF_OUT]; i++) {
        uint64_t b = weft_plan_chunk_bytes(p, chunk_out(n, C, me, i));
        uint32_t st = x->st[WEFT_BUF_OUT][i];
        if (b > x->cap[st])
            x->cap[st] = b;
    }
    /* The slices of the mean chunk, as the estimate and the simulator cut
     * an alltoallv plan at its own size (weft_plan_shared_opts_exec). */
    const weft_traffic *t = weft_plan_traffic(p);
    uint64_t total = 0;
    for (size_t k = 0; k < (size_t)n * n; k++)
        total += t->bytes[k];
    uint64_t mean = total / ((uint64_t)n * n * C);
    uint32_t ms = weft__exec_plan_slices(mean);
    x->sized_slices = ms;
    x->sized_quantum = 0;
    if (!uniform) { /* cut by position (the header comment) */
        uint64_t big = 0;
        for (size_t k = 0; k < (size_t)n * n; k++)
            big = t->bytes[k] > big ? t->bytes[k] : big;
        big = (big + C - 1) / C; /* the largest chunk */
        uint64_t q = (mean + ms - 1) / ms;
        if (q < (big + WEFT_EXEC_MAX_SLICES - 1) / WEFT_EXEC_MAX_SLICES)
            q = (big + WEFT_EXEC_MAX_SLICES - 1) / WEFT_EXEC_MAX_SLICES;
        if (!q)
            q = 1;
        x->sized_quantum = q;
        x->sized_slices = big ? (uint32_t)((big + q - 1) / q) : 1;
    }
    x->sized = true;
    e = WEFT_OK;
free_scratch:
    weft__free(val);
    weft__free(sz);
    weft__free(order);
    weft__free(pos);
    if (e == WEFT_ENOMEM)
        weft_diag_code(d, e);
    return e;
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
    if (e)
        return e;
    struct weft_comm_plan *x = weft__calloc(1, sizeof *x);
    if (!x)
        return weft_diag_code(d, WEFT_ENOMEM);
    x->c = c;
    x->p = p;
    e = schedule(x, d);
    if (!e && weft_plan_traffic(p))
        e = size_plan(x, d);
    if (e) {
        weft_comm_plan_free(x);
        return e;
    }
    *out = x;
    return WEFT_OK;
}

weft_err weft_comm_run_plan(weft_comm *c, const weft_plan *p, const void *sendbuf, void *recvbuf,
                            size_t count, weft_dtype dtype, weft_redop op, weft_diag *d)
{
    weft_comm_plan *x;
    weft_err e = weft_comm_plan_new(c, p, &x, d);
    if (e)
        return e;
    e = weft_comm_plan_run(x, sendbuf, recvbuf, count, dtype, op, d);
    weft_comm_plan_free(x);
    return e;
}

/* The slicing is weft/exec_model.h's, shared with the simulator. */
uint32_t weft__exec_plan_slices(uint64_t chunk_bytes)
{
    return weft_exec_slices(chunk_bytes);
}

/* Per-run arrays: posted, done, rbase and the requests. */
static weft_err alloc_run(exec_state *x)
{
    uint32_t len = x->x->len;
    x->posted = weft__calloc((size_t)len + 1, sizeof *x->posted);
    x->done = weft__calloc((size_t)len + 1, sizeof *x->done);
    x->rbase = weft__malloc(((size_t)len + 1) * sizeof *x->rbase);
    if (!x->posted || !x->done || !x->rbase)
        return WEFT_ENOMEM;
    size_t total = 0;
    for (uint32_t i = 0; i < len; i++) {
        weft_op op = weft_plan_op(x->x->p, x->x->order[i]);
        x->rbase[i] = total;
        if (op.kind != WEFT_OP_NOP && op.src_rank.v != op.dst_rank.v)
            total += (size_t)x->slices * segments(x, &op);
    }
    x->reqs = weft__calloc(total + 1, sizeof *x->reqs);
    return x->reqs ? WEFT_OK : WEFT_ENOMEM;
}

static void free_run(exec_state *x)
{
    weft__free(x->posted);
    weft__free(x->done);
    weft__free(x->rbase);
    weft__free(x->reqs);
}

/* An alltoallv plan fixes its sizes; a call with one count cannot give
 * its displacements. */
static weft_err sized_refused(weft_diag *d)
{
    return weft_diag_set(d, WEFT_EINVAL,
                         "plan: an alltoallv plan (one with a traffic matrix) runs with counts "
                         "and displacements, not one count");
}

weft_err weft_comm_plan_run(weft_comm_plan *xp, const void *sendbuf, void *recvbuf, size_t count,
                            weft_dtype dtype, weft_redop op, weft_diag *d)
{
    /* A run of the public API agrees on its arguments first (call_agree.h;
     * a run that select.c chose for a collective agreed already), once
     * they passed the checks every rank makes alike. */
    weft_comm *c = xp->c;
    const weft_plan_info *info = weft_plan_get_info(xp->p);
    if (xp->sized)
        return sized_refused(d);
    weft__coll_enter(c);
    if (!c->failed && weft_dtype_size(dtype) && weft__reduce_get(dtype, op) &&
        count % info->chunks == 0) {
        weft_coll coll = info->coll;
        bool reduces = coll == WEFT_COLL_ALLREDUCE || coll == WEFT_COLL_REDUCESCATTER ||
                       coll == WEFT_COLL_REDUCE;
        bool rooted = coll == WEFT_COLL_BROADCAST || coll == WEFT_COLL_REDUCE;
        weft__call_begin(c, coll, count, dtype, reduces ? (uint32_t)op : WEFT__CALL_NO_OP,
                         rooted ? info->root.v : 0);
        weft_err e = weft__call_agree(c, d);
        if (e)
            return weft__coll_leave(c, e);
    }
    return weft__coll_leave(c, weft__comm_plan_run(xp, sendbuf, recvbuf, count, dtype, op, d));
}

weft_err weft__comm_plan_run(weft_comm_plan *xp, const void *sendbuf, void *recvbuf, size_t count,
                             weft_dtype dtype, weft_redop op, weft_diag *d)
{
    weft_comm *c = xp->c;
    const weft_plan *p = xp->p;
    if (c->failed)
        return weft_diag_set(d, WEFT_EPEER, "comm: failed earlier: %s", c->fail_msg);
    if (xp->sized)
        return sized_refused(d);
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
    exec_state x = {.x = xp, .c = c, .fn = fn, .es = es};
    weft_err e;
    x.elems = count / info->chunks;
    x.cb = x.elems * es;
    x.slices = weft__exec_plan_slices(x.cb);
    if (x.slices > x.elems && x.elems)
        x.slices = (uint32_t)x.elems;
    if (!x.elems)
        x.slices = 1;
    if (x.cb != xp->last_cb && c->rank == 0) {
        weft_log(WEFT_LOG_DEBUG, "run", "plan %s: %u chunks of %zu B, each cut into %u slices",
                 weft_coll_name(info->coll), info->chunks, x.cb, x.slices);
        xp->last_cb = x.cb;
    }
    uint32_t me = c->rank, C = info->chunks;
    size_t in_bytes = (size_t)weft_plan_buf_slots(p, WEFT_BUF_IN) * x.cb;
    size_t out_bytes = (size_t)weft_plan_buf_slots(p, WEFT_BUF_OUT) * x.cb;
    size_t scratch_bytes = (size_t)weft_plan_buf_slots(p, WEFT_BUF_SCRATCH) * x.cb;
    unsigned char *tmp = NULL, *scratch = NULL, *out = recvbuf;
    bool has_input = info->coll != WEFT_COLL_BROADCAST || me == info->root.v;
    e = WEFT_ENOMEM;
    if (alloc_run(&x))
        goto free_all;
    if (scratch_bytes && !(scratch = weft__malloc(scratch_bytes)))
        goto free_all;
    bool own_in = !info->inplace || info->coll == WEFT_COLL_REDUCESCATTER;
    if (own_in && in_bytes && !(tmp = weft__calloc(1, in_bytes)))
        goto free_all;
    if (own_in) {
        if (has_input && in_bytes)
            memcpy(tmp, sendbuf, in_bytes);
        x.buf[WEFT_BUF_IN] = tmp;
        if (info->inplace) /* reducescatter: out[i] is in[r*C+i] */
            out = tmp + (size_t)me * C * x.cb;
    } else if (info->coll == WEFT_COLL_ALLGATHER) {
        x.buf[WEFT_BUF_IN] = out + (size_t)me * C * x.cb;
        if (sendbuf != x.buf[WEFT_BUF_IN] && in_bytes)
            memcpy(x.buf[WEFT_BUF_IN], sendbuf, in_bytes);
    } else {
        x.buf[WEFT_BUF_IN] = out;
        if (has_input && sendbuf != out && in_bytes)
            memcpy(out, sendbuf, in_bytes);
    }
    x.buf[WEFT_BUF_OUT] = out;
    x.buf[WEFT_BUF_SCRATCH] = scratch;
    e = execute(&x, d);
    if (e && !c->failed) /* requests may still be queued: never touch them again */
        weft__comm_fail(c, e, d);
    if (!e && out != recvbuf && out_bytes)
        memcpy(recvbuf, out, out_bytes);
free_all:
    if (e == WEFT_ENOMEM)
        weft_diag_code(d, e);
    /* After a failure the transports are aborted and never read the
     * requests again, so they can go. */
    free_run(&x);
    weft__free(tmp);
    weft__free(scratch);
    return e;
}

weft_err weft__comm_plan_run_v(weft_comm_plan *xp, const void *sendbuf, const size_t *sdispls,
                               void *recvbuf, const size_t *rdispls, size_t es, weft_diag *d)
{
    weft_comm *c = xp->c;
    const weft_plan *p = xp->p;
    if (c->failed)
        return weft_diag_set(d, WEFT_EPEER, "comm: failed earlier: %s", c->fail_msg);
    const weft_plan_info *info = weft_plan_get_info(p);
    uint32_t n = info->nranks, C = info->chunks, me = c->rank;
    exec_state x = {.x = xp, .c = c, .es = 1, .slices = xp->sized_slices};
    if (c->rank == 0 && xp->last_cb != 1) {
        weft_log(WEFT_LOG_DEBUG, "run",
                 "plan alltoallv: %u chunks per pair, each cut into %u slices", C, x.slices);
        xp->last_cb = 1;
    }
    uint32_t nin = weft_plan_buf_slots(p, WEFT_BUF_IN), nout = weft_plan_buf_slots(p, WEFT_BUF_OUT);
    /* In place (one buffer) the inputs must be read before any output lands. */
    bool in_direct = xp->in_direct && sendbuf && sendbuf != recvbuf;
    bool out_direct = xp->out_direct && recvbuf;
    weft_err e = WEFT_ENOMEM;
    x.at = weft__calloc((size_t)xp->nst + 1, sizeof *x.at);
    if (!x.at || alloc_run(&x))
        goto free_all;
    /* Where the in and out slots lie in the caller's buffers (the MPI
     * layout of the header comment); at[] keeps the ones used there. */
    const unsigned char *in = sendbuf;
    unsigned char *out = recvbuf;
    const weft_traffic *t = weft_plan_traffic(p);
    for (uint32_t i = 0; in_direct && i < nin; i++)
        x.at[xp->st[WEFT_BUF_IN][i]] = (unsigned char *)in + sdispls[i / C] * es +
                                       chunk_at(t->bytes[(size_t)me * n + i / C], C, i % C);
    for (uint32_t i = 0; out_direct && i < nout; i++)
        x.at[xp->st[WEFT_BUF_OUT][i]] =
            out + rdispls[i / C] * es + chunk_at(t->bytes[(size_t)(i / C) * n + me], C, i % C);
    size_t priv_bytes = 0;
    for (uint32_t st = 0; st < xp->nst; st++)
        if (!x.at[st])
            priv_bytes += xp->cap[st];
    /* Kept between runs: a fresh buffer of this size each call would be
     * mapped anew, and its first touch page by page cost more than the
     * copies themselves (Bruck on 4 ranks, 32 MiB a rank: 22 % of the
     * time in page faults). */
    if (priv_bytes + 1 > xp->priv_cap) {
        weft__free(xp->priv);
        xp->priv_cap = 0;
        if (!(xp->priv = weft__malloc(priv_bytes + 1)))
            goto free_all;
        xp->priv_cap = priv_bytes + 1;
    }
    unsigned char *priv = xp->priv;
    priv_bytes = 0;
    for (uint32_t st = 0; st < xp->nst; st++)
        if (!x.at[st]) {
            x.at[st] = priv + priv_bytes;
            priv_bytes += xp->cap[st];
        }
    for (uint32_t i = 0; !in_direct && i < nin; i++) {
        uint64_t b = weft_plan_chunk_bytes(p, chunk_in(n, C, me, i));
        if (b)
            memcpy(x.at[xp->st[WEFT_BUF_IN][i]],
                   in + sdispls[i / C] * es + chunk_at(t->bytes[(size_t)me * n + i / C], C, i % C),
                   (size_t)b);
    }
    e = execute(&x, d);
    if (e && !c->failed)
        weft__comm_fail(c, e, d);
    for (uint32_t i = 0; !e && !out_direct && i < nout; i++) {
        uint64_t b = weft_plan_chunk_bytes(p, chunk_out(n, C, me, i));
        if (b)
            memcpy(out + rdispls[i / C] * es +
                       chunk_at(t->bytes[(size_t)(i / C) * n + me], C, i % C),
                   x.at[xp->st[WEFT_BUF_OUT][i]], (size_t)b);
    }
free_all:
    if (e == WEFT_ENOMEM)
        weft_diag_code(d, e);
    free_run(&x);
    weft__free(x.at);
    return e;
}

/* ---- Test access (exec_plan.h) --------------------------------------------- */

uint32_t weft__comm_plan_sized_slices(const weft_comm_plan *x)
{
    return x->sized ? x->sized_slices : 0;
}

uint64_t weft__comm_plan_sized_quantum(const weft_comm_plan *x)
{
    return x->sized ? x->sized_quantum : 0;
}

weft_comm *weft__comm_plan_comm(const weft_comm_plan *x)
{
    return x->c;
}

const weft_plan *weft__comm_plan_plan(const weft_comm_plan *x)
{
    return x->p;
}

uint32_t weft__comm_plan_len(const weft_comm_plan *x)
{
    return x->len;
}

uint32_t weft__comm_plan_op(const weft_comm_plan *x, uint32_t pos)
{
    return x->order[pos];
}

void weft__comm_plan_waits(const weft_comm_plan *x, uint32_t pos, uint32_t *prefix,
                           const uint32_t **list, uint32_t *n)
{
    *prefix = x->wait[pos].prefix;
    *list = x->pool + x->wait[pos].off;
    *n = x->wait[pos].len;
}

uint32_t weft__comm_plan_lane(const weft_comm_plan *x, uint32_t pos)
{
    return x->lane[pos];
}

int64_t weft__comm_plan_prev(const weft_comm_plan *x, uint32_t pos)
{
    return x->prev[pos];
}
