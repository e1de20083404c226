/* The padded layout of a skewed alltoallv plan for MSCCL (weft/plan.h,
 * weft_plan_msccl_pad; docs/msccl.md, "Skewed matrices: the padded
 * layout").
 *
 * An MSCCL program has no sizes: the executor cuts each rank's buffer into
 * nchunksperloop equal chunks. So every peer gets a region of B bytes (the
 * largest block of the matrix), cut into pieces of g bytes (the greatest
 * common divisor of every non-zero chunk of the plan, so that every chunk
 * is whole pieces); region d of rank s's send buffer holds block s -> d in
 * its first M(s, d) / g pieces and padding after. The padded plan is an
 * alltoall plan of B / g chunks per block that moves only the pieces that
 * carry data: each op of the plan becomes one op per run of pieces that is
 * contiguous on both sides (at most MSCCL_MAX_COUNT - 1 = 71 pieces, the
 * largest `cnt` the executors' parsers take), an op that moves no bytes
 * keeps its place in the order (a nop on one rank; between ranks a
 * one-piece message between scratch pieces kept for this, so that MSCCL's
 * per-GPU dependencies still say it), and the padded
 * plan carries the matrix in pieces (M / g), so its 0-byte chunks are the
 * padding, which the verifier does not ask to be delivered. Scratch slot j
 * gets as many pieces as the largest chunk it ever holds.
 *
 * The plan is run symbolically twice in one topological order (as
 * weft_plan_op_bytes does): first to size the scratch, then to emit.
 * Time O(ops + deps + slots moved + slots).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/intmath.h"
#include "plan/plan_internal.h"
#include "plan/plan_layout.h"

#define EMPTY UINT32_MAX

typedef struct pad_run {
    uint64_t src, dst, len; /* pieces */
} pad_run;

typedef struct padctx {
    const weft_plan *p;
    weft__layout l;
    weft_diag *d;
    uint32_t n, c;
    uint64_t g, per_block; /* piece bytes, pieces per block */
    uint32_t max_cnt;      /* pieces per op at most; 0: no limit */
    uint32_t *val;         /* chunk id per physical slot, or EMPTY */
    uint64_t *scr_size;    /* pieces per scratch slot */
    uint64_t *scr_off;
    /* Ops that move no bytes between ranks keep their place as one-piece
     * copies of scratch piece sync_base of the source (never written) into
     * a fresh scratch piece of the destination: sync_used per rank. */
    uint64_t sync_base;
    uint32_t *sync_used;
    /* Pass 2: the padded plan and each op's padded ops. */
    weft_plan *out;
    uint32_t *map; /* flat lists of padded op ids */
    size_t nmap, map_cap;
    uint64_t *map_start; /* per op: its list is map[map_start[i] .. map_start[i] + map_len[i]) */
    uint32_t *map_len;
    uint32_t *deps; /* scratch for one op's padded deps */
    size_t deps_cap;
    pad_run *runs;
    size_t nruns, runs_cap;
    const char **nodes;
    size_t nodes_cap;
} padctx;

/* Chunk v's first piece within its block and its pieces. */
static void chunk_pieces(const padctx *x, uint64_t v, uint64_t *start, uint64_t *len)
{
    uint64_t block = v / x->c;
    uint32_t p = (uint32_t)(v % x->c);
    uint64_t b = x->p->traffic.bytes[block];
    uint64_t q = b / x->c, r = b % x->c;
    *start = ((uint64_t)p * q + (p < r ? p : r)) / x->g;
    *len = (q + (p < r)) / x->g;
}

/* Where slot (buf, idx) of rank r lives in the padded buffers (pieces), and
 * how many pieces it holds there (UINT64_MAX: scratch, sized by pass 1). */
static void slot_pos(const padctx *x, uint32_t r, weft_buf buf, uint32_t idx, uint64_t *pos,
                     uint64_t *cap)
{
    if (buf == WEFT_BUF_SCRATCH) {
        *pos = x->scr_off ? x->scr_off[idx] : 0;
        *cap = UINT64_MAX;
        return;
    }
    /* in[d*C+p] of rank r holds chunk (r*N+d)*C+p; out[s*C+p] chunk (s*N+r)*C+p. */
    uint32_t other = idx / x->c, p = idx % x->c;
    uint64_t block = buf == WEFT_BUF_IN ? (uint64_t)r * x->n + other : (uint64_t)other * x->n + r;
    uint64_t start, len;
    chunk_pieces(x, block * x->c + p, &start, &len);
    *pos = (uint64_t)other * x->per_block + start;
    *cap = len;
}

static weft_err push_map(padctx *x, uint32_t id)
{
    if (weft__grow((void **)&x->map, &x->map_cap, x->nmap + 1, sizeof *x->map))
        return weft_diag_code(x->d, WEFT_ENOMEM);
    x->map[x->nmap++] = id;
    return WEFT_OK;
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The padded deps of op id: its deps' padded ops, sorted, no repeats. */
static weft_err padded_deps(padctx *x, uint32_t id, uint32_t *nd_out)
{
    uint32_t nd;
    const uint32_t *deps = weft_plan_op_deps(x->p, id, &nd);
    size_t n = 0;
    for (uint32_t k = 0; k < nd; k++) {
        uint32_t dep = deps[k];
        size_t want = n + x->map_len[dep];
        if (weft__grow((void **)&x->deps, &x->deps_cap, want + 1, sizeof *x->deps))
            return weft_diag_code(x->d, WEFT_ENOMEM);
        memcpy(x->deps + n, x->map + x->map_start[dep], x->map_len[dep] * sizeof *x->deps);
        n = want;
    }
    if (n > 1)
        qsort(x->deps, n, sizeof *x->deps, u32_cmp);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || x->deps[u - 1] != x->deps[i])
            x->deps[u++] = x->deps[i];
    *nd_out = (uint32_t)u;
    return WEFT_OK;
}

/* Adds one padded op for op id with its padded deps and route. */
static weft_err add_padded(padctx *x, uint32_t id, const weft_op *o, uint32_t nd)
{
    uint32_t nid;
    weft_err e = weft_plan_add_op(x->out, o, x->deps, nd, &nid);
    if (e)
        return weft_diag_set(x->d, e, "cannot add op %" PRIu32 " of the padded plan", id);
    for (uint32_t k = 0; k < weft_plan_op_num_paths(x->p, id); k++) {
        uint32_t len = weft_plan_path_len(x->p, id, k);
        if (weft__grow((void **)&x->nodes, &x->nodes_cap, (size_t)len + 1, sizeof *x->nodes))
            return weft_diag_code(x->d, WEFT_ENOMEM);
        for (uint32_t i = 0; i < len; i++)
            x->nodes[i] = weft_plan_path_node(x->p, id, k, i);
        e = weft_plan_add_path(x->out, nid, weft_plan_path_share(x->p, id, k), x->nodes, len);
        if (e)
            return weft_diag_code(x->d, e);
    }
    return push_map(x, nid);
}

/* Emits op id of the plan as padded ops (pass 2): its runs of pieces, each
 * cut at max_cnt pieces; no run: a nop, or a sync message between ranks. */
static weft_err emit(padctx *x, uint32_t id, const weft_op *op)
{
    uint32_t nd = 0;
    weft_err e = padded_deps(x, id, &nd);
    if (e)
        return e;
    x->map_start[id] = x->nmap;
    if (op->kind == WEFT_OP_NOP) {
        e = add_padded(x, id, op, nd);
    } else if (x->nruns == 0 && op->src_rank.v == op->dst_rank.v) {
        /* No bytes, one rank: a nop keeps its place in the order. */
        weft_op o = {WEFT_OP_NOP, op->src_rank, op->src_rank, 0, 0, 0, 0, 0, op->channel};
        e = add_padded(x, id, &o, nd);
    } else if (x->nruns == 0) {
        /* No bytes between ranks: a one-piece message between the ranks'
         * sync pieces of scratch, so that what waits for it on the
         * destination still waits for what it waited for on the source. */
        weft_op o = *op;
        o.kind = WEFT_OP_COPY;
        o.src_buf = o.dst_buf = WEFT_BUF_SCRATCH;
        o.src_index = (uint32_t)x->sync_base;
        o.dst_index = (uint32_t)(x->sync_base + 1 + x->sync_used[op->dst_rank.v]++);
        o.count = 1;
        e = add_padded(x, id, &o, nd);
    } else {
        for (size_t i = 0; i < x->nruns && !e; i++)
            for (uint64_t at = 0, step = x->max_cnt ? x->max_cnt : x->runs[i].len;
                 at < x->runs[i].len && !e; at += step) {
                uint64_t left = x->runs[i].len - at;
                weft_op o = *op;
                o.src_index = (uint32_t)(x->runs[i].src + at);
                o.dst_index = (uint32_t)(x->runs[i].dst + at);
                o.count = (uint32_t)(left < step ? left : step);
                e = add_padded(x, id, &o, nd);
            }
    }
    x->map_len[id] = (uint32_t)(x->nmap - x->map_start[id]);
    return e;
}

/* Runs the plan symbolically in `order`. Pass 1 (emitting false) sizes the
 * scratch slots; pass 2 emits the padded ops. */
static weft_err run(padctx *x, const uint32_t *order, bool emitting)
{
    const weft__layout *l = &x->l;
    size_t nslots = (size_t)l->per_rank * l->nranks;
    for (size_t k = 0; k < nslots; k++)
        x->val[k] = EMPTY;
    for (uint32_t r = 0; r < l->nranks; r++)
        for (uint32_t i = 0; i < l->nin; i++) {
            uint64_t chunk;
            uint32_t from;
            if (weft__layout_initial(l, r, i, &chunk, &from))
                x->val[(size_t)r * l->per_rank + weft__layout_slot(l, r, WEFT_BUF_IN, i)] =
                    (uint32_t)chunk;
        }
    for (uint32_t k = 0; k < x->p->nops; k++) {
        uint32_t id = order[k];
        const weft_op *op = &x->p->ops[id];
        x->nruns = 0;
        bool data = false;
        if (op->kind != WEFT_OP_NOP) {
            size_t sb = (size_t)op->src_rank.v * l->per_rank;
            size_t db = (size_t)op->dst_rank.v * l->per_rank;
            uint32_t s0 = weft__layout_slot(l, op->src_rank.v, op->src_buf, op->src_index);
            uint32_t d0 = weft__layout_slot(l, op->dst_rank.v, op->dst_buf, op->dst_index);
            for (uint32_t j = 0; j < op->count; j++) {
                uint32_t v = x->val[sb + s0 + j];
                x->val[db + d0 + j] = v;
                if (v == EMPTY)
                    continue;
                uint64_t start, len, sp, dp, scap, dcap;
                chunk_pieces(x, v, &start, &len);
                if (len == 0)
                    continue;
                data = true;
                if (!emitting) { /* pass 1 only sizes the scratch */
                    if (op->dst_buf == WEFT_BUF_SCRATCH && len > x->scr_size[op->dst_index + j])
                        x->scr_size[op->dst_index + j] = len;
                    continue;
                }
                slot_pos(x, op->src_rank.v, op->src_buf, op->src_index + j, &sp, &scap);
                slot_pos(x, op->dst_rank.v, op->dst_buf, op->dst_index + j, &dp, &dcap);
                if (len > scap || len > dcap)
                    return weft_diag_set(
                        x->d, WEFT_EINVAL,
                        "op %" PRIu32 " moves a chunk of %" PRIu64 " pieces into or out of a "
                        "slot of %" PRIu64 " in the padded layout (rank %" PRIu32 " %s[%" PRIu32
                        "]): the plan does not keep every chunk in its own slot",
                        id, len, len > dcap ? dcap : scap, op->dst_rank.v,
                        weft_buf_name(op->dst_buf), op->dst_index + j);
                pad_run *last = x->nruns ? &x->runs[x->nruns - 1] : NULL;
                if (last && last->src + last->len == sp && last->dst + last->len == dp) {
                    last->len += len;
                    continue;
                }
                if (weft__grow((void **)&x->runs, &x->runs_cap, x->nruns + 1, sizeof *x->runs))
                    return weft_diag_code(x->d, WEFT_ENOMEM);
                x->runs[x->nruns++] = (pad_run){sp, dp, len};
            }
        }
        if (!emitting && !data && op->kind != WEFT_OP_NOP && op->src_rank.v != op->dst_rank.v)
            x->sync_used[op->dst_rank.v]++;
        if (emitting) {
            weft_err e = emit(x, id, op);
            if (e)
                return e;
        }
    }
    return WEFT_OK;
}

/* g, B and the data bytes of p's matrix (C chunks per block). */
static void measure(const weft_plan *p, weft_msccl_padding *pad)
{
    const weft_traffic *t = &p->traffic;
    uint32_t c = p->info.chunks;
    uint64_t g = 0, big = 0, total = 0;
    for (size_t i = 0; i < (size_t)t->ranks * t->ranks; i++) {
        uint64_t b = t->bytes[i], q = b / c;
        total += b;
        if (b > big)
            big = b;
        if (q)
            g = weft__gcd64(g, q);
        if (b % c)
            g = weft__gcd64(g, q + 1);
    }
    if (g == 0) /* nothing to move: one piece of padding per region */
        g = 1, big = 1;
    pad->piece_bytes = g;
    pad->block_bytes = big;
    pad->pieces_per_block = big / g;
    pad->data_bytes = total;
    pad->padded_bytes = (uint64_t)t->ranks * t->ranks * big;
}

/* Pads p (one pass: the layout, runs of at most max_cnt pieces). */
static weft_err pad_once(const weft_plan *p, uint32_t max_cnt, weft_plan **out,
                         weft_msccl_padding *pad, weft_diag *d)
{
    *out = NULL;
    memset(pad, 0, sizeof *pad);
    if (p->info.coll != WEFT_COLL_ALLTOALL || !p->traffic.bytes)
        return weft_diag_set(d, WEFT_EINVAL,
                             "the padded layout is for an alltoallv plan (an alltoall plan with "
                             "a traffic matrix)");
    if (p->info.inplace)
        return weft_diag_set(d, WEFT_EINVAL,
                             "MSCCL XML cannot express this in-place alltoallv plan: a padded "
                             "block of one peer would share its region with a block of another "
                             "size; build it out of place");
    weft_err e = weft_plan_check_structure(p, d);
    if (e)
        return e;
    measure(p, pad);
    uint32_t n = p->info.nranks;
    uint64_t per_block = pad->block_bytes / pad->piece_bytes;
    uint64_t loop = (uint64_t)n * per_block;
    if (loop > INT_MAX)
        return weft_diag_set(
            d, WEFT_ELIMIT,
            "MSCCL XML cannot express this alltoallv plan: its padded layout (blocks padded to "
            "%" PRIu64 " bytes, cut into pieces of %" PRIu64 " bytes, the gcd of its chunks) needs "
            "nchunksperloop = %" PRIu32 " x %" PRIu64 " = %" PRIu64 ", and msccl-executor reads "
            "nchunksperloop as an int (at most %d): %.1f times too many",
            pad->block_bytes, pad->piece_bytes, n, per_block, loop, INT_MAX,
            (double)loop / INT_MAX);
    padctx x = {.p = p,
                .d = d,
                .n = n,
                .c = p->info.chunks,
                .g = pad->piece_bytes,
                .per_block = per_block,
                .max_cnt = max_cnt};
    if (weft__layout_init(&x.l, p))
        return weft_diag_set(d, WEFT_ELIMIT, "a rank's slots do not fit 32 bits");
    size_t nslots = (size_t)x.l.per_rank * x.l.nranks;
    uint32_t nsc = p->info.scratch, nops = p->nops;
    uint32_t *order = weft__malloc(((size_t)nops + 1) * sizeof *order);
    x.val = weft__malloc((nslots + 1) * sizeof *x.val);
    x.scr_size = weft__calloc((size_t)nsc + 1, sizeof *x.scr_size);
    x.scr_off = weft__malloc(((size_t)nsc + 1) * sizeof *x.scr_off);
    x.map_start = weft__malloc(((size_t)nops + 1) * sizeof *x.map_start);
    x.map_len = weft__malloc(((size_t)nops + 1) * sizeof *x.map_len);
    x.sync_used = weft__calloc((size_t)n + 1, sizeof *x.sync_used);
    if (!order || !x.val || !x.scr_size || !x.scr_off || !x.map_start || !x.map_len ||
        !x.sync_used) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto done;
    }
    if ((e = weft__plan_topo_order(p, order, NULL, d)) || (e = run(&x, order, false)))
        goto done;
    uint64_t scratch = 0;
    for (uint32_t j = 0; j < nsc; j++)
        x.scr_off[j] = scratch, scratch += x.scr_size[j];
    uint32_t syncs = 0;
    for (uint32_t r = 0; r < n; r++) {
        if (x.sync_used[r] > syncs)
            syncs = x.sync_used[r];
        x.sync_used[r] = 0;
    }
    x.sync_base = scratch;
    if (syncs)
        scratch += 1 + (uint64_t)syncs;
    uint64_t slots = (uint64_t)n * (2 * loop + scratch);
    if (scratch > UINT32_MAX || slots > WEFT_PLAN_MAX_TOTAL_SLOTS) {
        e = weft_diag_set(
            d, WEFT_ELIMIT,
            "MSCCL XML cannot express this alltoallv plan within weft's limits: its padded "
            "layout (blocks padded to %" PRIu64 " bytes, cut into pieces of %" PRIu64 " bytes, "
            "the gcd of its chunks: nchunksperloop %" PRIu64 ", %" PRIu64 " scratch pieces) "
            "holds %" PRIu64 " slots over its %" PRIu32 " ranks, %.1f times the %" PRIu64
            " a plan may hold (WEFT_PLAN_MAX_TOTAL_SLOTS), so the XML could not be read back",
            pad->block_bytes, pad->piece_bytes, loop, scratch, slots, n,
            (double)slots / (double)WEFT_PLAN_MAX_TOTAL_SLOTS, WEFT_PLAN_MAX_TOTAL_SLOTS);
        goto done;
    }
    weft_plan_info info = {.coll = WEFT_COLL_ALLTOALL,
                           .nranks = n,
                           .chunks = (uint32_t)per_block,
                           .scratch = (uint32_t)scratch,
                           .inplace = false};
    if ((e = weft_plan_new(&info, &x.out))) {
        weft_diag_code(d, e);
        goto done;
    }
    weft_traffic pieces;
    if ((e = weft_traffic_new(n, &pieces, d)))
        goto done;
    for (size_t i = 0; i < (size_t)n * n; i++)
        pieces.bytes[i] = p->traffic.bytes[i] / x.g;
    e = weft_plan_set_traffic(x.out, &pieces, d);
    weft_traffic_free(&pieces);
    if (e || (e = run(&x, order, true)))
        goto done;
    *out = x.out;
    x.out = NULL;
done:
    weft_plan_free(x.out);
    weft__free(x.nodes);
    weft__free(x.runs);
    weft__free(x.deps);
    weft__free(x.map);
    weft__free(x.sync_used);
    weft__free(x.map_len);
    weft__free(x.map_start);
    weft__free(x.scr_off);
    weft__free(x.scr_size);
    weft__free(x.val);
    weft__free(order);
    return e;
}

/* Pads p; then, for a fabric, relays the padded plan's routes (whose shares
 * are now of pieces: an op of m pieces on a path of share a/b needs the
 * pieces cut in b / gcd(b, m a) parts, usually fewer than of whole blocks)
 * with the matrix in the finer pieces, and pads that again, which only cuts
 * its ops at 71 pieces (a padded plan's chunks are single pieces already). */
weft_err weft_plan_msccl_pad(const weft_plan *p, const weft_topo *t, weft_plan **out,
                             weft_msccl_padding *pad, weft_diag *d)
{
    *out = NULL;
    weft_plan *first = NULL, *relayed = NULL;
    uint32_t K = 1;
    weft_msccl_padding again;
    weft_err e = pad_once(p, t ? 0 : WEFT__MSCCL_MAX_CNT, t ? &first : out, pad, d);
    pad->refine = 1;
    if (e || !t)
        return e;
    if ((e = weft_plan_relay_routes(first, t, &relayed, &K, d)))
        goto done;
    pad->relayed = relayed != NULL;
    if (relayed && K > 1) {
        if (pad->piece_bytes % K) {
            e = weft_diag_set(d, WEFT_ELIMIT,
                              "MSCCL XML cannot express this alltoallv plan: its routes cut the "
                              "padded layout's pieces of %" PRIu64 " bytes into %" PRIu32
                              " parts, which are not whole bytes",
                              pad->piece_bytes, K);
            goto done;
        }
        /* The relayed plan's chunks are K-fold finer: so is its matrix. */
        weft_traffic finer = {0};
        const weft_traffic *m = weft_plan_traffic(relayed);
        if ((e = weft_traffic_new(m->ranks, &finer, d)))
            goto done;
        for (size_t i = 0; i < (size_t)m->ranks * m->ranks; i++)
            finer.bytes[i] = m->bytes[i] * K;
        e = weft_plan_set_traffic(relayed, &finer, d);
        weft_traffic_free(&finer);
        if (e)
            goto done;
        pad->piece_bytes /= K;
        pad->pieces_per_block *= K;
        pad->refine = K;
    }
    /* Nothing relayed: pad p again with runs cut at 71 pieces (its slots
     * are few; the padded plan has N x B / g per buffer). */
    e = pad_once(relayed ? relayed : p, WEFT__MSCCL_MAX_CNT, out, &again, d);
done:
    weft_plan_free(relayed);
    weft_plan_free(first);
    return e;
}

weft_err weft_plan_msccl_padded_traffic(const weft_plan *x, const weft_traffic *m,
                                        weft_traffic *out, weft_diag *d)
{
    memset(out, 0, sizeof *out);
    uint32_t n = x->info.nranks, per_block = x->info.chunks;
    if (x->info.coll != WEFT_COLL_ALLTOALL)
        return weft_diag_set(d, WEFT_EINVAL,
                             "a traffic matrix gives the blocks of an alltoall; this plan is "
                             "an %s",
                             weft_coll_name(x->info.coll));
    if (m->ranks != n)
        return weft_diag_set(d, WEFT_EINVAL,
                             "the traffic matrix has %" PRIu32 " ranks, the plan %" PRIu32,
                             m->ranks, n);
    uint64_t big = 0;
    size_t nb = (size_t)n * n, at = 0;
    for (size_t i = 0; i < nb; i++)
        if (m->bytes[i] > big)
            big = m->bytes[i], at = i;
    if (big == 0)
        return weft_diag_set(d, WEFT_EINVAL, "the traffic matrix moves no bytes");
    if (per_block == 0 || big % per_block)
        return weft_diag_set(d, WEFT_EINVAL,
                             "the matrix's largest block (%" PRIu64 " bytes, %zu -> %zu) is not "
                             "a whole number of the plan's %" PRIu32 " chunks per block: the "
                             "plan is not the padded program of this matrix",
                             big, at / n, at % n, per_block);
    uint64_t unit = big / per_block;
    for (size_t i = 0; i < nb; i++)
        if (m->bytes[i] % unit)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "block %zu -> %zu of the matrix (%" PRIu64 " bytes) is not a "
                                 "whole number of the plan's pieces of %" PRIu64 " bytes (the "
                                 "largest block / %" PRIu32 " chunks per block): the plan is "
                                 "not the padded program of this matrix",
                                 i / n, i % n, m->bytes[i], unit, per_block);
    weft_err e = weft_traffic_new(n, out, d);
    if (e)
        return e;
    for (size_t i = 0; i < nb; i++)
        out->bytes[i] = m->bytes[i] / unit;
    return WEFT_OK;
}
