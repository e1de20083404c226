/* The exact verifier: structure, routes, cycles, symbolic execution with
 * hazard detection, and the collective's postcondition.
 *
 * Hazards. Ops run in one topological order (Kahn's algorithm, smallest
 * ready id first). For every physical slot the verifier keeps the last
 * writer and the readers since that write. A read must be ordered after the
 * last writer; a write must be ordered after the last writer and after
 * every reader since. Then all writes of a slot are totally ordered by the
 * deps and every read sits between two consecutive writes, so every
 * execution order the deps allow computes the same values, and the
 * symbolic values of this one order are those of all orders.
 *
 * Reachability ("is W ordered before X") is answered in O(1) with vector
 * clocks over a chain decomposition: each op extends the chain of one of its
 * deps when it is that chain's tail, else starts a chain; VC(X)[c] is the
 * last position on chain c that reaches X. An op with a single dep on whose
 * chain it continues shares that dep's clock array (reference counted);
 * otherwise its array is the element-wise max of its deps' arrays, O(K) for
 * K chains so far. Arrays are released when their last successor has been
 * processed, so memory is O(width * K). Total time O((ops + deps) * K +
 * slot accesses + ops log ops) in the worst case; a ring whose ops depend
 * only on the op that delivered their data is all single-dep chains and runs
 * in O(ops log ops + accesses).
 *
 * Contribution sets are sorted lists of disjoint rank intervals in one
 * arena, immutable and shared by reference: a copy costs O(1), a reduce
 * O(intervals), and rings and trees stay at one or two intervals per set.
 *
 * Files: this one holds structure, routes, symbolic execution, the
 * postcondition and the driver; the order and the clocks are in
 * verify_order.c, the sets in verify_sets.c, the messages in verify_msg.c,
 * the shared state and the files' order in verify_internal.h.
 */
#include <string.h>

#include "base/alloc.h"
#include "plan/verify_internal.h"

#define NONE UINT32_MAX

/* ---- Structure ----------------------------------------------------------- */

static weft_err check_side(verifier *v, uint32_t id, const char *side, weft_rank r, weft_buf b,
                           uint32_t index, uint32_t count)
{
    if (r.v >= v->l.nranks)
        return weft__verify_fail(v, id, "%s rank %u does not exist (the plan has %u ranks)", side,
                                 r.v, v->l.nranks);
    uint32_t size = weft_plan_buf_slots(v->p, b);
    if ((uint64_t)index + count > size) {
        char s[64];
        weft__verify_describe_range(b, index, count, s, sizeof s);
        return weft__verify_fail(v, id, "%s %s is outside rank %u's %s buffer (%u slots)", side, s,
                                 r.v, weft_buf_name(b), size);
    }
    return WEFT_OK;
}

static weft_err check_structure(verifier *v)
{
    const weft_plan *p = v->p;
    for (uint32_t i = 0; i < p->nops; i++) {
        weft_op op = p->ops[i];
        weft_err e;
        if (op.kind == WEFT_OP_NOP) {
            if (op.src_rank.v >= v->l.nranks)
                return weft__verify_fail(v, i, "rank %u does not exist (the plan has %u ranks)",
                                         op.src_rank.v, v->l.nranks);
            /* A compute op's bytes are its op size: without them the
             * simulator could not charge it. */
            if (weft_plan_op_compute(p, i) != WEFT_COMPUTE_NONE && !p->op_bytes)
                return weft__verify_fail(v, i,
                                         "computes but the plan has no op sizes to give its "
                                         "bytes");
        } else {
            if ((e = check_side(v, i, "source", op.src_rank, op.src_buf, op.src_index, op.count)) ||
                (e = check_side(v, i, "destination", op.dst_rank, op.dst_buf, op.dst_index,
                                op.count)))
                return e;
            if (op.src_rank.v == op.dst_rank.v) {
                uint32_t a = weft__layout_slot(&v->l, op.src_rank.v, op.src_buf, op.src_index);
                uint32_t b = weft__layout_slot(&v->l, op.dst_rank.v, op.dst_buf, op.dst_index);
                if (a < b + op.count && b < a + op.count)
                    return weft__verify_fail(v, i, "reads and writes overlapping slots on rank %u",
                                             op.src_rank.v);
            }
        }
        uint32_t nd = p->dep_count[i];
        const uint32_t *deps = weft__plan_deps(p, i);
        for (uint32_t k = 0; k < nd; k++) {
            if (deps[k] >= p->nops)
                return weft__verify_fail(
                    v, i, "depends on op %u, which does not exist (the plan has %u ops)", deps[k],
                    p->nops);
        }
    }
    return WEFT_OK;
}

weft_err weft_plan_check_structure(const weft_plan *p, weft_diag *d)
{
    verifier v = {0};
    v.p = p;
    v.d = d;
    weft_err e = weft__layout_init(&v.l, p);
    if (e)
        return weft_diag_set(d, e, "the plan has too many slots per rank");
    return check_structure(&v);
}

/* ---- Routes -------------------------------------------------------------- */

static weft_err check_routes(verifier *v)
{
    const weft_plan *p = v->p;
    if (v->topo && weft_topo_num_ranks(v->topo) != v->l.nranks)
        return weft_diag_set(v->d, WEFT_EVERIFY, "the plan has %u ranks but the topology has %u",
                             v->l.nranks, weft_topo_num_ranks(v->topo));
    if (!p->path_count)
        return WEFT_OK;
    for (uint32_t i = 0; i < p->nops; i++) {
        uint32_t np = p->path_count[i];
        if (!np)
            continue;
        weft_op op = p->ops[i];
        if (op.kind == WEFT_OP_NOP || op.src_rank.v == op.dst_rank.v)
            return weft__verify_fail(v, i, "a local op cannot have a route");
        weft_rat sum = weft_rat_int(0);
        for (uint32_t k = 0; k < np; k++) {
            const weft__plan_path *pt = &p->paths[p->path_start[i] + k];
            char s[48];
            if (weft_rat_sign(pt->share) <= 0) {
                weft_rat_format(pt->share, s, sizeof s);
                return weft__verify_fail(
                    v, i, "route path %u has share %s; shares must be positive", k + 1, s);
            }
            if (weft_rat_add(sum, pt->share, &sum))
                return weft__verify_fail(v, i, "route shares overflow");
            if (!v->topo)
                continue;
            weft_node_id prev = {0};
            for (uint32_t n = 0; n < pt->nnodes; n++) {
                const char *name = weft__plan_name(p, p->path_nodes[pt->node_start + n]);
                weft_node_id node;
                if (!weft_topo_find_node(v->topo, name, &node))
                    return weft__verify_fail(
                        v, i,
                        "route path %u names node '%s', which the topology does "
                        "not have",
                        k + 1, name);
                if (n == 0 || n == pt->nnodes - 1) {
                    weft_rank r = n == 0 ? op.src_rank : op.dst_rank;
                    weft_node_id want = weft_topo_rank_node(v->topo, r);
                    if (want.v != node.v)
                        return weft__verify_fail(v, i,
                                                 "route path %u %s at %s, not at rank %u's node %s",
                                                 k + 1, n == 0 ? "starts" : "ends", name, r.v,
                                                 weft_topo_node_name(v->topo, want));
                }
                weft_link_id link;
                if (n > 0 && !weft_topo_find_link(v->topo, prev, node, &link))
                    return weft__verify_fail(
                        v, i,
                        "route path %u uses a link %s -> %s, which the topology "
                        "does not have",
                        k + 1, weft_topo_node_name(v->topo, prev), name);
                prev = node;
            }
        }
        if (!weft_rat_eq(sum, weft_rat_int(1))) {
            char s[48];
            weft_rat_format(sum, s, sizeof s);
            return weft__verify_fail(v, i, "route shares sum to %s, not 1", s);
        }
    }
    return WEFT_OK;
}

/* ---- Symbolic execution -------------------------------------------------- */

static weft_err init_slots(verifier *v)
{
    const weft__layout *l = &v->l;
    uint64_t total = (uint64_t)l->nranks * l->per_rank;
    if (total >= NONE || weft_plan_num_chunk_ids(v->p) >= NONE)
        return weft_diag_set(v->d, WEFT_ELIMIT, "the plan has too many slots to verify (%llu)",
                             (unsigned long long)total);
    v->nslots = (size_t)total;
    size_t n = v->nslots ? v->nslots : 1;
    v->s_chunk = weft__malloc(n * sizeof *v->s_chunk);
    v->s_set = weft__malloc(n * sizeof *v->s_set);
    v->s_writer = weft__malloc(n * sizeof *v->s_writer);
    v->s_readers = weft__malloc(n * sizeof *v->s_readers);
    if (!v->s_chunk || !v->s_set || !v->s_writer || !v->s_readers)
        return weft__verify_oom(v);
    memset(v->s_set, 0xff, n * sizeof *v->s_set);
    memset(v->s_writer, 0xff, n * sizeof *v->s_writer);
    memset(v->s_readers, 0xff, n * sizeof *v->s_readers);
    /* Sets 0 .. N-1 are the single ranks, set N is every rank. */
    for (uint32_t r = 0; r <= l->nranks; r++) {
        uint32_t iv[2] = {r < l->nranks ? r : 0, r < l->nranks ? r + 1 : l->nranks}, id;
        weft_err e = weft__verify_set_new(v, iv, 1, &id);
        if (e)
            return e;
    }
    for (uint32_t r = 0; r < l->nranks; r++) {
        for (uint32_t i = 0; i < l->nin; i++) {
            uint64_t chunk;
            uint32_t from;
            if (!weft__layout_initial(l, r, i, &chunk, &from))
                continue;
            size_t s = (size_t)r * l->per_rank + weft__layout_slot(l, r, WEFT_BUF_IN, i);
            v->s_chunk[s] = (uint32_t)chunk;
            v->s_set[s] = from;
        }
    }
    return WEFT_OK;
}

static weft_err add_reader(verifier *v, size_t s, uint32_t x)
{
    if (v->s_readers[s] != NONE && v->rd_op[v->s_readers[s]] == x)
        return WEFT_OK;
    if (v->nrd >= NONE - 1)
        return weft_diag_set(v->d, WEFT_ELIMIT, "too many slot reads");
    /* Both lists double on their own (a realloc per read copied the whole
     * list under ASan). */
    if (weft__grow((void **)&v->rd_op, &v->rd_cap, v->nrd + 1, sizeof *v->rd_op) ||
        weft__grow((void **)&v->rd_next, &v->rd_next_cap, v->nrd + 1, sizeof *v->rd_next))
        return weft__verify_oom(v);
    v->rd_op[v->nrd] = x;
    v->rd_next[v->nrd] = v->s_readers[s];
    v->s_readers[s] = (uint32_t)v->nrd++;
    return WEFT_OK;
}

/* Checks that x may read slot s (rank r, buffer b, index i). */
static weft_err check_read(verifier *v, uint32_t x, size_t s, uint32_t r, weft_buf b, uint32_t i)
{
    uint32_t w = v->s_writer[s];
    if (w != NONE && !weft__verify_ordered(v, w, x))
        return weft__verify_fail(v, x, "rank %u reads %s[%u] before op %u has delivered it", r,
                                 weft_buf_name(b), i, w);
    return WEFT_OK;
}

/* Checks that x may write slot s. */
static weft_err check_write(verifier *v, uint32_t x, size_t s, uint32_t r, weft_buf b, uint32_t i)
{
    uint32_t w = v->s_writer[s];
    if (w != NONE && !weft__verify_ordered(v, w, x))
        return weft__verify_fail(
            v, x,
            "rank %u writes %s[%u] while op %u may still be writing it (no dependency "
            "orders them)",
            r, weft_buf_name(b), i, w);
    for (uint32_t k = v->s_readers[s]; k != NONE; k = v->rd_next[k]) {
        uint32_t y = v->rd_op[k];
        if (!weft__verify_ordered(v, y, x))
            return weft__verify_fail(
                v, x,
                "rank %u overwrites %s[%u] while op %u may still be reading it (no "
                "dependency orders them)",
                r, weft_buf_name(b), i, y);
    }
    return WEFT_OK;
}

static weft_err run_op(verifier *v, uint32_t x)
{
    weft_op op = v->p->ops[x];
    if (op.kind == WEFT_OP_NOP)
        return WEFT_OK;
    const weft__layout *l = &v->l;
    uint32_t sr = op.src_rank.v, dr = op.dst_rank.v;
    size_t sbase = (size_t)sr * l->per_rank, dbase = (size_t)dr * l->per_rank;
    weft_err e;
    for (uint32_t k = 0; k < op.count; k++) {
        uint32_t si = op.src_index + k, di = op.dst_index + k;
        size_t s = sbase + weft__layout_slot(l, sr, op.src_buf, si);
        size_t t = dbase + weft__layout_slot(l, dr, op.dst_buf, di);
        if ((e = check_read(v, x, s, sr, op.src_buf, si)))
            return e;
        if (v->s_set[s] == NONE)
            return weft__verify_fail(v, x, "rank %u reads %s[%u], which holds no data", sr,
                                     weft_buf_name(op.src_buf), si);
        uint32_t chunk = v->s_chunk[s], set = v->s_set[s];
        if (op.kind == WEFT_OP_REDUCE) {
            if ((e = check_read(v, x, t, dr, op.dst_buf, di)))
                return e;
            if (v->s_set[t] == NONE)
                return weft__verify_fail(v, x, "rank %u's %s[%u] holds no data to reduce into", dr,
                                         weft_buf_name(op.dst_buf), di);
            if (v->s_chunk[t] != chunk)
                return weft__verify_fail(
                    v, x, "reduces chunk %u into rank %u's %s[%u], which holds chunk %u", chunk, dr,
                    weft_buf_name(op.dst_buf), di, v->s_chunk[t]);
            uint32_t dup = NONE;
            if ((e = weft__verify_set_union(v, set, v->s_set[t], &set, &dup)))
                return e;
            if (dup != NONE)
                return weft__verify_fail(v, x,
                                         "the contribution of rank %u to chunk %u would be reduced "
                                         "twice",
                                         dup, chunk);
        }
        if ((e = check_write(v, x, t, dr, op.dst_buf, di)))
            return e;
        if ((e = add_reader(v, s, x)))
            return e;
        v->s_chunk[t] = chunk;
        v->s_set[t] = set;
        v->s_writer[t] = x;
        v->s_readers[t] = NONE;
    }
    return WEFT_OK;
}

/* ---- Postcondition ------------------------------------------------------- */

static weft_err check_final(verifier *v)
{
    const weft__layout *l = &v->l;
    for (uint32_t r = 0; r < l->nranks; r++) {
        for (uint32_t i = 0; i < l->nout; i++) {
            uint64_t chunk;
            bool all;
            uint32_t from;
            if (!weft__layout_final(l, r, i, &chunk, &all, &from))
                continue;
            size_t s = (size_t)r * l->per_rank + weft__layout_slot(l, r, WEFT_BUF_OUT, i);
            if (v->s_set[s] == NONE)
                return weft_diag_set(v->d, WEFT_EVERIFY,
                                     "rank %u out[%u] holds no data at the end (expected chunk "
                                     "%llu)",
                                     r, i, (unsigned long long)chunk);
            uint32_t want = all ? l->nranks : from, got = v->s_set[s];
            if (v->s_chunk[s] != chunk) {
                /* For a reduced output, say first that the expected chunk is
                 * not fully reduced there (what a user of a broken allreduce
                 * needs to hear), then what the slot holds instead. */
                uint32_t held = 0;
                for (size_t k = 0; k < v->set_len[got]; k++)
                    held += v->iv[v->set_start[got] + 2 * k + 1] - v->iv[v->set_start[got] + 2 * k];
                if (all && held < l->nranks)
                    return weft_diag_set(v->d, WEFT_EVERIFY,
                                         "rank %u out[%u]: chunk %llu is not fully reduced at the "
                                         "end (the slot holds chunk %u with %u of %u "
                                         "contributions)",
                                         r, i, (unsigned long long)chunk, v->s_chunk[s], held,
                                         l->nranks);
                return weft_diag_set(v->d, WEFT_EVERIFY,
                                     "rank %u out[%u] holds chunk %u at the end, expected chunk "
                                     "%llu",
                                     r, i, v->s_chunk[s], (unsigned long long)chunk);
            }
            /* Walk both interval lists to the first rank in one but not the
             * other. */
            const uint32_t *a = v->iv + v->set_start[got], *b = v->iv + v->set_start[want];
            size_t na = v->set_len[got], nb = v->set_len[want];
            if (na == nb && memcmp(a, b, 2 * na * sizeof *a) == 0)
                continue;
            uint32_t first = NONE;
            bool missing = false;
            for (uint32_t q = 0; q < l->nranks && first == NONE;) {
                bool in_a = false, in_b = false;
                uint32_t next = l->nranks;
                for (size_t k = 0; k < na; k++) {
                    if (q >= a[2 * k] && q < a[2 * k + 1])
                        in_a = true, next = next < a[2 * k + 1] ? next : a[2 * k + 1];
                    else if (a[2 * k] > q && a[2 * k] < next)
                        next = a[2 * k];
                }
                for (size_t k = 0; k < nb; k++) {
                    if (q >= b[2 * k] && q < b[2 * k + 1])
                        in_b = true, next = next < b[2 * k + 1] ? next : b[2 * k + 1];
                    else if (b[2 * k] > q && b[2 * k] < next)
                        next = b[2 * k];
                }
                if (in_a != in_b) {
                    first = q;
                    missing = in_b;
                }
                q = next;
            }
            if (missing)
                return weft_diag_set(v->d, WEFT_EVERIFY,
                                     "rank %u out[%u] (chunk %llu) lacks the contribution of rank "
                                     "%u at the end",
                                     r, i, (unsigned long long)chunk, first);
            return weft_diag_set(v->d, WEFT_EVERIFY,
                                 "rank %u out[%u] (chunk %llu) holds an extra contribution of "
                                 "rank %u at the end",
                                 r, i, (unsigned long long)chunk, first);
        }
    }
    return WEFT_OK;
}

/* ---- Driver -------------------------------------------------------------- */

static void verifier_fini(verifier *v)
{
    if (v->vc) {
        for (uint32_t i = 0; i < v->p->nops; i++)
            weft__verify_vc_release(v, i);
    }
    weft__free(v->vc);
    weft__free(v->succ_start);
    weft__free(v->succ);
    weft__free(v->indeg);
    weft__free(v->outleft);
    weft__free(v->order);
    weft__free(v->chain);
    weft__free(v->pos);
    weft__free(v->chain_tail);
    weft__free(v->s_chunk);
    weft__free(v->s_set);
    weft__free(v->s_writer);
    weft__free(v->s_readers);
    weft__free(v->rd_op);
    weft__free(v->rd_next);
    weft__free(v->iv);
    weft__free(v->set_start);
    weft__free(v->set_len);
}

weft_err weft_plan_verify(const weft_plan *p, const weft_topo *topo, weft_diag *d)
{
    verifier v = {0};
    v.p = p;
    v.topo = topo;
    v.d = d;
    weft_err e = weft__layout_init(&v.l, p);
    if (e)
        return weft_diag_set(d, e, "the plan has too many slots per rank to verify");
    if ((e = check_structure(&v)) || (e = check_routes(&v)) || (e = weft__verify_circuits(&v)) ||
        (e = weft__verify_order(&v)))
        goto fini;
    size_t n = p->nops ? p->nops : 1;
    v.chain = weft__malloc(n * sizeof *v.chain);
    v.pos = weft__malloc(n * sizeof *v.pos);
    v.vc = weft__calloc(n, sizeof *v.vc);
    if (!v.chain || !v.pos || !v.vc) {
        e = weft__verify_oom(&v);
        goto fini;
    }
    if ((e = init_slots(&v)))
        goto fini;
    for (uint32_t k = 0; k < p->nops; k++) {
        uint32_t x = v.order[k];
        if ((e = weft__verify_clock_op(&v, x)) || (e = run_op(&v, x)))
            goto fini;
        weft__verify_clock_done(&v, x);
    }
    e = check_final(&v);
fini:
    verifier_fini(&v);
    return e;
}
