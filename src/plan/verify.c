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
 */
#include <string.h>

#include "base/alloc.h"
#include "plan/plan_layout.h"

#define NONE UINT32_MAX

/* A vector clock array, shared by reference. */
typedef struct vclock {
    uint32_t refs;
    uint32_t len;
    uint32_t v[];
} vclock;

typedef struct verifier {
    const weft_plan *p;
    const weft_topo *topo;
    weft_diag *d;
    weft__layout l;
    /* Graph. */
    uint64_t *succ_start;
    uint32_t *succ;
    uint32_t *indeg;   /* unprocessed deps, for Kahn */
    uint32_t *outleft; /* unprocessed successors, to release clocks */
    uint32_t *order;   /* topological order */
    /* Chains and clocks. */
    uint32_t *chain, *pos;
    uint32_t *chain_tail;
    size_t nchains, chain_cap;
    vclock **vc;
    /* Slots. */
    size_t nslots;
    uint32_t *s_chunk, *s_set, *s_writer, *s_readers;
    uint32_t *rd_op, *rd_next;
    size_t nrd, rd_cap, rd_next_cap;
    /* Sets: set i is intervals iv[set_start[i] .. + set_len[i]) of [lo, hi). */
    uint32_t *iv;
    size_t niv, iv_cap;
    uint64_t *set_start;
    uint32_t *set_len;
    size_t nsets, set_cap, set_len_cap;
} verifier;

/* ---- Messages ------------------------------------------------------------ */

static void describe_range(weft_buf b, uint32_t index, uint32_t count, char *buf, size_t size)
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
        snprintf(buf, size, "op %u (nop on rank %u)", id, op.src_rank.v);
        return;
    }
    char s[64], t[64];
    describe_range(op.src_buf, op.src_index, op.count, s, sizeof s);
    describe_range(op.dst_buf, op.dst_index, op.count, t, sizeof t);
    if (strcmp(s, t) == 0)
        snprintf(buf, size, "op %u (rank %u -> rank %u, %s)", id, op.src_rank.v, op.dst_rank.v, s);
    else
        snprintf(buf, size, "op %u (rank %u -> rank %u, %s -> %s)", id, op.src_rank.v,
                 op.dst_rank.v, s, t);
}

static weft_err op_fail(verifier *v, uint32_t id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static weft_err op_fail(verifier *v, uint32_t id, const char *fmt, ...)
{
    char head[200], msg[700];
    describe_op(v->p, id, head, sizeof head);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return weft_diag_set(v->d, WEFT_EVERIFY, "%s: %s", head, msg);
}

static weft_err oom(verifier *v)
{
    return weft_diag_code(v->d, WEFT_ENOMEM);
}

/* ---- Structure ----------------------------------------------------------- */

static weft_err check_side(verifier *v, uint32_t id, const char *side, weft_rank r, weft_buf b,
                           uint32_t index, uint32_t count)
{
    if (r.v >= v->l.nranks)
        return op_fail(v, id, "%s rank %u does not exist (the plan has %u ranks)", side, r.v,
                       v->l.nranks);
    uint32_t size = weft_plan_buf_slots(v->p, b);
    if ((uint64_t)index + count > size) {
        char s[64];
        describe_range(b, index, count, s, sizeof s);
        return op_fail(v, id, "%s %s is outside rank %u's %s buffer (%u slots)", side, s, r.v,
                       weft_buf_name(b), size);
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
                return op_fail(v, i, "rank %u does not exist (the plan has %u ranks)",
                               op.src_rank.v, v->l.nranks);
        } else {
            if ((e = check_side(v, i, "source", op.src_rank, op.src_buf, op.src_index, op.count)) ||
                (e = check_side(v, i, "destination", op.dst_rank, op.dst_buf, op.dst_index,
                                op.count)))
                return e;
            if (op.src_rank.v == op.dst_rank.v) {
                uint32_t a = weft__layout_slot(&v->l, op.src_rank.v, op.src_buf, op.src_index);
                uint32_t b = weft__layout_slot(&v->l, op.dst_rank.v, op.dst_buf, op.dst_index);
                if (a < b + op.count && b < a + op.count)
                    return op_fail(v, i, "reads and writes overlapping slots on rank %u",
                                   op.src_rank.v);
            }
        }
        uint32_t nd = p->dep_count[i];
        const uint32_t *deps = weft__plan_deps(p, i);
        for (uint32_t k = 0; k < nd; k++) {
            if (deps[k] >= p->nops)
                return op_fail(v, i, "depends on op %u, which does not exist (the plan has %u ops)",
                               deps[k], p->nops);
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
            return op_fail(v, i, "a local op cannot have a route");
        weft_rat sum = weft_rat_int(0);
        for (uint32_t k = 0; k < np; k++) {
            const weft__plan_path *pt = &p->paths[p->path_start[i] + k];
            char s[48];
            if (weft_rat_sign(pt->share) <= 0) {
                weft_rat_format(pt->share, s, sizeof s);
                return op_fail(v, i, "route path %u has share %s; shares must be positive", k + 1,
                               s);
            }
            if (weft_rat_add(sum, pt->share, &sum))
                return op_fail(v, i, "route shares overflow");
            if (!v->topo)
                continue;
            weft_node_id prev = {0};
            for (uint32_t n = 0; n < pt->nnodes; n++) {
                const char *name = weft__plan_name(p, p->path_nodes[pt->node_start + n]);
                weft_node_id node;
                if (!weft_topo_find_node(v->topo, name, &node))
                    return op_fail(v, i, "route path %u names node '%s', which the topology does "
                                         "not have",
                                   k + 1, name);
                if (n == 0 || n == pt->nnodes - 1) {
                    weft_rank r = n == 0 ? op.src_rank : op.dst_rank;
                    weft_node_id want = weft_topo_rank_node(v->topo, r);
                    if (want.v != node.v)
                        return op_fail(v, i, "route path %u %s at %s, not at rank %u's node %s",
                                       k + 1, n == 0 ? "starts" : "ends", name, r.v,
                                       weft_topo_node_name(v->topo, want));
                }
                weft_link_id link;
                if (n > 0 && !weft_topo_find_link(v->topo, prev, node, &link))
                    return op_fail(v, i, "route path %u uses a link %s -> %s, which the topology "
                                         "does not have",
                                   k + 1, weft_topo_node_name(v->topo, prev), name);
                prev = node;
            }
        }
        if (!weft_rat_eq(sum, weft_rat_int(1))) {
            char s[48];
            weft_rat_format(sum, s, sizeof s);
            return op_fail(v, i, "route shares sum to %s, not 1", s);
        }
    }
    return WEFT_OK;
}

/* ---- Order --------------------------------------------------------------- */

static void heap_push(uint32_t *h, size_t *n, uint32_t x)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (h[parent] <= x)
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = x;
}

static uint32_t heap_pop(uint32_t *h, size_t *n)
{
    uint32_t top = h[0], x = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1] < h[c])
            c++;
        if (h[c] >= x)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n)
        h[i] = x;
    return top;
}

/* Reports a cycle among the ops Kahn's algorithm could not order. */
static weft_err report_cycle(verifier *v)
{
    const weft_plan *p = v->p;
    /* Every unordered op has an unordered dep; walk them until one repeats. */
    uint32_t start = 0;
    while (!v->indeg[start])
        start++;
    uint32_t *mark = v->order; /* reused: step at which an op was visited + 1 */
    memset(mark, 0, (size_t)p->nops * sizeof *mark);
    uint32_t x = start, step = 0;
    while (!mark[x]) {
        mark[x] = ++step;
        const uint32_t *deps = weft__plan_deps(p, x);
        uint32_t next = NONE;
        for (uint32_t k = 0; k < p->dep_count[x] && next == NONE; k++) {
            if (v->indeg[deps[k]])
                next = deps[k];
        }
        x = next;
    }
    /* x is on the cycle: follow the same rule from it to list the cycle. */
    char list[600];
    size_t len = (size_t)snprintf(list, sizeof list, "op %u", x);
    uint32_t y = x, n = 0;
    do {
        const uint32_t *deps = weft__plan_deps(p, y);
        uint32_t next = NONE;
        for (uint32_t k = 0; k < p->dep_count[y] && next == NONE; k++) {
            if (v->indeg[deps[k]])
                next = deps[k];
        }
        if (n < 8 && len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, " waits for op %u%s", next,
                                    next == x ? "" : ", which");
        else if (n == 8 && len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, " ...");
        n++;
        y = next;
    } while (y != x && n <= p->nops);
    if (n == 1)
        return op_fail(v, x, "depends on itself");
    return op_fail(v, x, "dependency cycle: %s", list);
}

static weft_err build_order(verifier *v)
{
    const weft_plan *p = v->p;
    uint32_t n = p->nops;
    v->succ_start = weft__calloc((size_t)n + 1, sizeof *v->succ_start);
    v->succ = weft__malloc((p->ndeps ? p->ndeps : 1) * sizeof *v->succ);
    v->indeg = weft__calloc((size_t)n + 1, sizeof *v->indeg);
    v->outleft = weft__calloc((size_t)n + 1, sizeof *v->outleft);
    v->order = weft__malloc(((size_t)n + 1) * sizeof *v->order);
    uint32_t *heap = weft__malloc(((size_t)n + 1) * sizeof *heap);
    if (!v->succ_start || !v->succ || !v->indeg || !v->outleft || !v->order || !heap) {
        weft__free(heap);
        return oom(v);
    }
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t *deps = weft__plan_deps(p, i);
        for (uint32_t k = 0; k < p->dep_count[i]; k++)
            v->succ_start[deps[k] + 1]++;
        v->indeg[i] = p->dep_count[i];
    }
    for (uint32_t i = 0; i < n; i++) {
        v->outleft[i] = (uint32_t)v->succ_start[i + 1];
        v->succ_start[i + 1] += v->succ_start[i];
    }
    /* Fill successors using order[] as a cursor. */
    uint64_t *cur = weft__malloc(((size_t)n + 1) * sizeof *cur);
    if (!cur) {
        weft__free(heap);
        return oom(v);
    }
    memcpy(cur, v->succ_start, ((size_t)n + 1) * sizeof *cur);
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t *deps = weft__plan_deps(p, i);
        for (uint32_t k = 0; k < p->dep_count[i]; k++)
            v->succ[cur[deps[k]]++] = i;
    }
    weft__free(cur);
    size_t hn = 0, done = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!v->indeg[i])
            heap_push(heap, &hn, i);
    }
    while (hn) {
        uint32_t x = heap_pop(heap, &hn);
        v->order[done++] = x;
        for (uint64_t s = v->succ_start[x]; s < v->succ_start[x + 1]; s++) {
            if (--v->indeg[v->succ[s]] == 0)
                heap_push(heap, &hn, v->succ[s]);
        }
    }
    weft__free(heap);
    if (done < n)
        return report_cycle(v);
    return WEFT_OK;
}

/* ---- Clocks -------------------------------------------------------------- */

static void vc_release(verifier *v, uint32_t op)
{
    vclock *c = v->vc[op];
    v->vc[op] = NULL;
    if (c && --c->refs == 0)
        weft__free(c);
}

/* dst[j] = max(dst[j], src[j]) for j < n; the hot loop of the verifier,
 * written in blocks of 8 so that compilers vectorize it at -O2. */
static void vmax(uint32_t *restrict dst, const uint32_t *restrict src, uint32_t n)
{
    uint32_t j = 0;
    for (; j + 8 <= n; j += 8) {
        uint32_t t[8];
        for (int k = 0; k < 8; k++)
            t[k] = dst[j + k] > src[j + k] ? dst[j + k] : src[j + k];
        for (int k = 0; k < 8; k++)
            dst[j + k] = t[k];
    }
    for (; j < n; j++)
        dst[j] = dst[j] > src[j] ? dst[j] : src[j];
}

/* Assigns op x to a chain and computes its clock. */
static weft_err clock_op(verifier *v, uint32_t x)
{
    const weft_plan *p = v->p;
    const uint32_t *deps = weft__plan_deps(p, x);
    uint32_t nd = p->dep_count[x];
    uint32_t ext = NONE; /* the dep whose chain x extends */
    bool single = true;
    for (uint32_t k = 0; k < nd; k++) {
        if (deps[k] != deps[0])
            single = false;
        if (ext == NONE && v->chain_tail[v->chain[deps[k]]] == deps[k])
            ext = deps[k];
    }
    size_t nchains_before = v->nchains;
    if (ext != NONE) {
        v->chain[x] = v->chain[ext];
        v->pos[x] = v->pos[ext] + 1;
    } else {
        if (weft__grow((void **)&v->chain_tail, &v->chain_cap, v->nchains + 1,
                       sizeof *v->chain_tail))
            return oom(v);
        if (v->nchains >= UINT32_MAX - 1)
            return weft_diag_set(v->d, WEFT_ELIMIT, "too many dependency chains");
        v->chain[x] = (uint32_t)v->nchains++;
        v->pos[x] = 1;
    }
    v->chain_tail[v->chain[x]] = x;
    if (nd == 0)
        return WEFT_OK;
    if (single && ext != NONE) {
        vclock *c = v->vc[deps[0]];
        if (c)
            c->refs++;
        v->vc[x] = c;
        return WEFT_OK;
    }
    /* Reuse the array of a dep whose last successor is x, when nobody
     * shares it: then the merge costs one pass per other dep. */
    size_t len = nchains_before;
    vclock *c = NULL;
    uint32_t stolen = NONE;
    for (uint32_t k = 0; k < nd && !c; k++) {
        vclock *dc = v->vc[deps[k]];
        if (dc && dc->refs == 1 && v->outleft[deps[k]] == 1) {
            if (dc->len < len) {
                vclock *g = weft__realloc(dc, sizeof *dc + len * sizeof dc->v[0]);
                if (!g)
                    return oom(v);
                memset(g->v + g->len, 0, (len - g->len) * sizeof g->v[0]);
                g->len = (uint32_t)len;
                dc = g;
            }
            c = dc;
            stolen = deps[k];
            v->vc[stolen] = NULL;
        }
    }
    if (!c) {
        c = weft__malloc(sizeof *c + (len ? len : 1) * sizeof c->v[0]);
        if (!c)
            return oom(v);
        c->refs = 1;
        c->len = (uint32_t)len;
        memset(c->v, 0, len * sizeof c->v[0]);
    }
    if (stolen != NONE && c->v[v->chain[stolen]] < v->pos[stolen])
        c->v[v->chain[stolen]] = v->pos[stolen];
    for (uint32_t k = 0; k < nd; k++) {
        uint32_t ch = v->chain[deps[k]];
        /* A dep that c already covers (an op at or after it on its chain
         * is merged in) has a clock <= c: skip the O(K) merge. */
        if (c->v[ch] >= v->pos[deps[k]])
            continue;
        const vclock *dc = deps[k] == stolen ? NULL : v->vc[deps[k]];
        if (dc)
            vmax(c->v, dc->v, dc->len);
        c->v[ch] = v->pos[deps[k]];
    }
    v->vc[x] = c;
    return WEFT_OK;
}

/* True when w is ordered before x (x's clock is computed). */
static bool ordered(const verifier *v, uint32_t w, uint32_t x)
{
    if (w == x)
        return true;
    uint32_t ch = v->chain[w];
    if (ch == v->chain[x])
        return v->pos[w] < v->pos[x];
    const vclock *c = v->vc[x];
    return c && ch < c->len && c->v[ch] >= v->pos[w];
}

/* Releases the clocks of x's deps that have no successor left. */
static void clock_done(verifier *v, uint32_t x)
{
    const weft_plan *p = v->p;
    const uint32_t *deps = weft__plan_deps(p, x);
    for (uint32_t k = 0; k < p->dep_count[x]; k++) {
        if (--v->outleft[deps[k]] == 0)
            vc_release(v, deps[k]);
    }
    if (v->outleft[x] == 0)
        vc_release(v, x);
}

/* ---- Contribution sets --------------------------------------------------- */

static weft_err set_new(verifier *v, const uint32_t *iv, size_t n, uint32_t *out)
{
    if (v->nsets >= NONE - 1)
        return weft_diag_set(v->d, WEFT_ELIMIT, "too many contribution sets");
    if (weft__grow((void **)&v->iv, &v->iv_cap, v->niv + 2 * n, sizeof *v->iv) ||
        weft__grow((void **)&v->set_start, &v->set_cap, v->nsets + 1, sizeof *v->set_start) ||
        weft__grow((void **)&v->set_len, &v->set_len_cap, v->nsets + 1, sizeof *v->set_len))
        return oom(v);
    memcpy(v->iv + v->niv, iv, 2 * n * sizeof *iv);
    v->set_start[v->nsets] = v->niv;
    v->set_len[v->nsets] = (uint32_t)n;
    v->niv += 2 * n;
    *out = (uint32_t)v->nsets++;
    return WEFT_OK;
}

/* Union of two disjoint sets into a new set; when they overlap, *dup is the
 * smallest common rank and no set is made. */
static weft_err set_union(verifier *v, uint32_t a, uint32_t b, uint32_t *out, uint32_t *dup)
{
    size_t na = v->set_len[a], nb = v->set_len[b];
    /* Room for the result first: iv may move. */
    if (weft__grow((void **)&v->iv, &v->iv_cap, v->niv + 2 * (na + nb), sizeof *v->iv))
        return oom(v);
    const uint32_t *x = v->iv + v->set_start[a], *y = v->iv + v->set_start[b];
    uint32_t *r = v->iv + v->niv;
    size_t i = 0, j = 0, n = 0;
    *dup = NONE;
    while (i < na || j < nb) {
        const uint32_t *take;
        if (j >= nb || (i < na && x[2 * i] < y[2 * j]))
            take = &x[2 * i++];
        else
            take = &y[2 * j++];
        if (n && take[0] < r[2 * n - 1]) {
            *dup = take[0];
            return WEFT_OK;
        }
        if (n && take[0] == r[2 * n - 1])
            r[2 * n - 1] = take[1];
        else {
            r[2 * n] = take[0];
            r[2 * n + 1] = take[1];
            n++;
        }
    }
    /* r already sits at the end of the arena; register it in place. */
    if (v->nsets >= NONE - 1)
        return weft_diag_set(v->d, WEFT_ELIMIT, "too many contribution sets");
    if (weft__grow((void **)&v->set_start, &v->set_cap, v->nsets + 1, sizeof *v->set_start) ||
        weft__grow((void **)&v->set_len, &v->set_len_cap, v->nsets + 1, sizeof *v->set_len))
        return oom(v);
    v->set_start[v->nsets] = v->niv;
    v->set_len[v->nsets] = (uint32_t)n;
    v->niv += 2 * n;
    *out = (uint32_t)v->nsets++;
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
        return oom(v);
    memset(v->s_set, 0xff, n * sizeof *v->s_set);
    memset(v->s_writer, 0xff, n * sizeof *v->s_writer);
    memset(v->s_readers, 0xff, n * sizeof *v->s_readers);
    /* Sets 0 .. N-1 are the single ranks, set N is every rank. */
    for (uint32_t r = 0; r <= l->nranks; r++) {
        uint32_t iv[2] = {r < l->nranks ? r : 0, r < l->nranks ? r + 1 : l->nranks}, id;
        weft_err e = set_new(v, iv, 1, &id);
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
        return oom(v);
    v->rd_op[v->nrd] = x;
    v->rd_next[v->nrd] = v->s_readers[s];
    v->s_readers[s] = (uint32_t)v->nrd++;
    return WEFT_OK;
}

/* Checks that x may read slot s (rank r, buffer b, index i). */
static weft_err check_read(verifier *v, uint32_t x, size_t s, uint32_t r, weft_buf b, uint32_t i)
{
    uint32_t w = v->s_writer[s];
    if (w != NONE && !ordered(v, w, x))
        return op_fail(v, x, "rank %u reads %s[%u] before op %u has delivered it", r,
                       weft_buf_name(b), i, w);
    return WEFT_OK;
}

/* Checks that x may write slot s. */
static weft_err check_write(verifier *v, uint32_t x, size_t s, uint32_t r, weft_buf b, uint32_t i)
{
    uint32_t w = v->s_writer[s];
    if (w != NONE && !ordered(v, w, x))
        return op_fail(v, x,
                       "rank %u writes %s[%u] while op %u may still be writing it (no dependency "
                       "orders them)",
                       r, weft_buf_name(b), i, w);
    for (uint32_t k = v->s_readers[s]; k != NONE; k = v->rd_next[k]) {
        uint32_t y = v->rd_op[k];
        if (!ordered(v, y, x))
            return op_fail(v, x,
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
            return op_fail(v, x, "rank %u reads %s[%u], which holds no data", sr,
                           weft_buf_name(op.src_buf), si);
        uint32_t chunk = v->s_chunk[s], set = v->s_set[s];
        if (op.kind == WEFT_OP_REDUCE) {
            if ((e = check_read(v, x, t, dr, op.dst_buf, di)))
                return e;
            if (v->s_set[t] == NONE)
                return op_fail(v, x, "rank %u's %s[%u] holds no data to reduce into", dr,
                               weft_buf_name(op.dst_buf), di);
            if (v->s_chunk[t] != chunk)
                return op_fail(v, x, "reduces chunk %u into rank %u's %s[%u], which holds chunk %u",
                               chunk, dr, weft_buf_name(op.dst_buf), di, v->s_chunk[t]);
            uint32_t dup = NONE;
            if ((e = set_union(v, set, v->s_set[t], &set, &dup)))
                return e;
            if (dup != NONE)
                return op_fail(v, x, "the contribution of rank %u to chunk %u would be reduced "
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
            vc_release(v, i);
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
    if ((e = check_structure(&v)) || (e = check_routes(&v)) || (e = build_order(&v)))
        goto fini;
    size_t n = p->nops ? p->nops : 1;
    v.chain = weft__malloc(n * sizeof *v.chain);
    v.pos = weft__malloc(n * sizeof *v.pos);
    v.vc = weft__calloc(n, sizeof *v.vc);
    if (!v.chain || !v.pos || !v.vc) {
        e = oom(&v);
        goto fini;
    }
    if ((e = init_slots(&v)))
        goto fini;
    for (uint32_t k = 0; k < p->nops; k++) {
        uint32_t x = v.order[k];
        if ((e = clock_op(&v, x)) || (e = run_op(&v, x)))
            goto fini;
        clock_done(&v, x);
    }
    e = check_final(&v);
fini:
    verifier_fini(&v);
    return e;
}
