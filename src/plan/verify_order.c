/* The verifier's happens-before machinery: one topological order of the
 * ops (Kahn's algorithm, smallest ready id first, a cycle reported with the
 * ops on it) and vector clocks over a chain decomposition that answer "is W
 * ordered before X" in O(1). See verify.c for the method and its costs and
 * verify_internal.h for the state it fills. */
#include <string.h>

#include "base/alloc.h"
#include "base/heap.h"
#include "plan/verify_internal.h"

#define NONE UINT32_MAX

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
        return weft__verify_fail(v, x, "depends on itself");
    return weft__verify_fail(v, x, "dependency cycle: %s", list);
}

weft_err weft__verify_order(verifier *v)
{
    const weft_plan *p = v->p;
    uint32_t n = p->nops;
    v->succ_start = weft__calloc((size_t)n + 1, sizeof *v->succ_start);
    v->succ = weft__malloc((p->ndeps ? p->ndeps : 1) * sizeof *v->succ);
    v->indeg = weft__calloc((size_t)n + 1, sizeof *v->indeg);
    v->outleft = weft__calloc((size_t)n + 1, sizeof *v->outleft);
    v->order = weft__malloc(((size_t)n + 1) * sizeof *v->order);
    /* Ready ops by id; each op is pushed once, so reserving n + 1 keys up
     * front leaves no push that can fail. */
    weft__heap64 heap;
    weft__heap64_init(&heap);
    if (!v->succ_start || !v->succ || !v->indeg || !v->outleft || !v->order ||
        weft__heap64_reserve(&heap, (size_t)n + 1)) {
        weft__heap64_fini(&heap);
        return weft__verify_oom(v);
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
        weft__heap64_fini(&heap);
        return weft__verify_oom(v);
    }
    memcpy(cur, v->succ_start, ((size_t)n + 1) * sizeof *cur);
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t *deps = weft__plan_deps(p, i);
        for (uint32_t k = 0; k < p->dep_count[i]; k++)
            v->succ[cur[deps[k]]++] = i;
    }
    weft__free(cur);
    size_t done = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!v->indeg[i])
            (void)weft__heap64_push(&heap, i);
    }
    while (heap.n) {
        uint32_t x = (uint32_t)weft__heap64_pop(&heap);
        v->order[done++] = x;
        for (uint64_t s = v->succ_start[x]; s < v->succ_start[x + 1]; s++) {
            if (--v->indeg[v->succ[s]] == 0)
                (void)weft__heap64_push(&heap, v->succ[s]);
        }
    }
    weft__heap64_fini(&heap);
    if (done < n)
        return report_cycle(v);
    return WEFT_OK;
}

/* ---- Clocks -------------------------------------------------------------- */

void weft__verify_vc_release(verifier *v, uint32_t op)
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
weft_err weft__verify_clock_op(verifier *v, uint32_t x)
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
            return weft__verify_oom(v);
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
                    return weft__verify_oom(v);
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
            return weft__verify_oom(v);
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
bool weft__verify_ordered(const verifier *v, uint32_t w, uint32_t x)
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
void weft__verify_clock_done(verifier *v, uint32_t x)
{
    const weft_plan *p = v->p;
    const uint32_t *deps = weft__plan_deps(p, x);
    for (uint32_t k = 0; k < p->dep_count[x]; k++) {
        if (--v->outleft[deps[k]] == 0)
            weft__verify_vc_release(v, deps[k]);
    }
    if (v->outleft[x] == 0)
        weft__verify_vc_release(v, x);
}
