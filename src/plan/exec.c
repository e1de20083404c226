/* The real-data executor: runs a plan on int64 buffers with a pool of
 * threads, in a seeded random order among those the deps allow, and
 * computes the collective's reference result to compare with.
 *
 * Scheduling: one mutex guards the ready list, the random generator and the
 * dep counters. A worker takes a random ready op (the generator is seeded
 * and advanced only under the mutex), runs it without the lock, then makes
 * its successors ready. With one thread the caller runs everything itself
 * and the order is a pure function of the seed. Values are uint64 inside,
 * so additions wrap instead of overflowing; they are exposed as int64. */
#include <pthread.h>
#include <string.h>

#include "base/alloc.h"
#include "plan/plan_layout.h"

#define POISON UINT64_C(0x7ead7ead7ead7ead)

struct weft_exec_result {
    weft__layout l;
    uint32_t elems;
    uint64_t *data; /* nranks * per_rank * elems */
    /* An alltoallv plan's matrix, copied so that the result outlives the
     * plan (l.traffic points here): its chunks of 0 bytes are not compared.
     * The executor moves every chunk as elems elements whatever its bytes:
     * it checks where data goes, which the sizes do not change. */
    weft_traffic traffic;
};

void weft_exec_opts_init(weft_exec_opts *o)
{
    o->elems_per_chunk = 4;
    o->seed = 1;
    o->threads = 1;
}

static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

int64_t weft_exec_input_value(uint32_t rank, uint64_t chunk, uint32_t elem)
{
    /* 40 random bits: sums over up to 2^20 ranks never wrap, and different
     * sets of contributions give different sums with overwhelming odds. */
    uint64_t s = ((uint64_t)rank << 40) ^ (chunk * UINT64_C(0x100000001b3)) ^ elem;
    return (int64_t)(splitmix(&s) & ((UINT64_C(1) << 40) - 1));
}

static weft_err result_new(const weft_plan *p, uint32_t elems, weft_exec_result **out, weft_diag *d)
{
    if (elems == 0)
        return weft_diag_set(d, WEFT_EINVAL, "elements per chunk must be at least 1");
    weft_exec_result *r = weft__calloc(1, sizeof *r);
    if (!r)
        return weft_diag_code(d, WEFT_ENOMEM);
    weft_err e = weft__layout_init(&r->l, p);
    uint64_t n = (uint64_t)r->l.nranks * r->l.per_rank * elems;
    if (e || n > SIZE_MAX / sizeof *r->data) {
        weft__free(r);
        return weft_diag_set(d, WEFT_ELIMIT, "the plan's buffers are too large to execute");
    }
    r->elems = elems;
    r->data = weft__malloc((size_t)(n ? n : 1) * sizeof *r->data);
    if (r->data && r->l.traffic &&
        weft_traffic_new(r->l.traffic->ranks, &r->traffic, NULL) == WEFT_OK) {
        memcpy(r->traffic.bytes, r->l.traffic->bytes,
               (size_t)r->traffic.ranks * r->traffic.ranks * sizeof *r->traffic.bytes);
        r->l.traffic = &r->traffic;
    }
    if (!r->data || (r->l.traffic && r->l.traffic != &r->traffic)) {
        weft__free(r->data);
        weft__free(r);
        return weft_diag_code(d, WEFT_ENOMEM);
    }
    for (uint64_t i = 0; i < n; i++)
        r->data[i] = POISON;
    *out = r;
    return WEFT_OK;
}

void weft_exec_result_free(weft_exec_result *r)
{
    if (!r)
        return;
    weft__free(r->data);
    weft_traffic_free(&r->traffic);
    weft__free(r);
}

/* Elements of slot (buf, index) on rank rk. */
static uint64_t *slot_ptr(const weft_exec_result *r, uint32_t rk, weft_buf buf, uint32_t index)
{
    size_t slot = (size_t)rk * r->l.per_rank + weft__layout_slot(&r->l, rk, buf, index);
    return r->data + slot * r->elems;
}

const int64_t *weft_exec_out(const weft_exec_result *r, weft_rank rank, size_t *nelems)
{
    *nelems = (size_t)r->l.nout * r->elems;
    return (const int64_t *)slot_ptr(r, rank.v, WEFT_BUF_OUT, 0);
}

/* ---- Scheduling ---------------------------------------------------------- */

typedef struct sched {
    const weft_plan *p;
    weft_exec_result *r;
    uint64_t *succ_start;
    uint32_t *succ;
    uint32_t *indeg;
    uint32_t *ready;
    size_t nready;
    uint32_t done;
    uint64_t rng;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} sched;

static void run_one(const sched *s, uint32_t id)
{
    weft_op op = s->p->ops[id];
    if (op.kind == WEFT_OP_NOP)
        return;
    size_t n = (size_t)op.count * s->r->elems;
    const uint64_t *src = slot_ptr(s->r, op.src_rank.v, op.src_buf, op.src_index);
    uint64_t *dst = slot_ptr(s->r, op.dst_rank.v, op.dst_buf, op.dst_index);
    if (op.kind == WEFT_OP_COPY) {
        memmove(dst, src, n * sizeof *dst);
    } else {
        for (size_t i = 0; i < n; i++)
            dst[i] += src[i];
    }
}

/* Takes a random ready op; the caller holds the lock and nready > 0. */
static uint32_t take_ready(sched *s)
{
    size_t j = (size_t)(splitmix(&s->rng) % s->nready);
    uint32_t id = s->ready[j];
    s->ready[j] = s->ready[--s->nready];
    return id;
}

/* Marks id finished; the caller holds the lock. */
static void finish(sched *s, uint32_t id)
{
    for (uint64_t k = s->succ_start[id]; k < s->succ_start[id + 1]; k++) {
        if (--s->indeg[s->succ[k]] == 0)
            s->ready[s->nready++] = s->succ[k];
    }
    s->done++;
}

static void *worker(void *arg)
{
    sched *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->nready == 0 && s->done < s->p->nops)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->done >= s->p->nops)
            break;
        uint32_t id = take_ready(s);
        pthread_mutex_unlock(&s->mu);
        run_one(s, id);
        pthread_mutex_lock(&s->mu);
        finish(s, id);
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Builds successor lists and dep counts, and checks that every op can run
 * (no cycle) with a dry run of Kahn's algorithm. */
static weft_err sched_init(sched *s, weft_diag *d)
{
    const weft_plan *p = s->p;
    uint32_t n = p->nops;
    s->succ_start = weft__calloc((size_t)n + 2, sizeof *s->succ_start);
    s->succ = weft__malloc((p->ndeps ? p->ndeps : 1) * sizeof *s->succ);
    s->indeg = weft__malloc(((size_t)n + 1) * sizeof *s->indeg);
    s->ready = weft__malloc(((size_t)n + 1) * sizeof *s->ready);
    if (!s->succ_start || !s->succ || !s->indeg || !s->ready)
        return weft_diag_code(d, WEFT_ENOMEM);
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t *deps = weft__plan_deps(p, i);
        for (uint32_t k = 0; k < p->dep_count[i]; k++)
            s->succ_start[deps[k] + 2]++;
        s->indeg[i] = p->dep_count[i];
    }
    for (uint32_t i = 0; i <= n; i++)
        s->succ_start[i + 1] += s->succ_start[i];
    /* succ_start[i+1] is the fill cursor of op i; afterwards it is the end. */
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t *deps = weft__plan_deps(p, i);
        for (uint32_t k = 0; k < p->dep_count[i]; k++)
            s->succ[s->succ_start[deps[k] + 1]++] = i;
    }
    /* Dry run in FIFO order on a copy of the counters. */
    uint32_t *cnt = weft__malloc(((size_t)n + 1) * sizeof *cnt);
    if (!cnt)
        return weft_diag_code(d, WEFT_ENOMEM);
    memcpy(cnt, s->indeg, (size_t)n * sizeof *cnt);
    size_t head = 0, tail = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!cnt[i])
            s->ready[tail++] = i;
    }
    while (head < tail) {
        uint32_t x = s->ready[head++];
        for (uint64_t k = s->succ_start[x]; k < s->succ_start[x + 1]; k++) {
            if (--cnt[s->succ[k]] == 0)
                s->ready[tail++] = s->succ[k];
        }
    }
    weft_err e = WEFT_OK;
    if (tail < n) {
        uint32_t stuck = 0;
        while (cnt[stuck] == 0)
            stuck++;
        e = weft_diag_set(d, WEFT_EVERIFY, "op %u is on a dependency cycle and can never run",
                          stuck);
    }
    weft__free(cnt);
    s->nready = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!s->indeg[i])
            s->ready[s->nready++] = i;
    }
    return e;
}

static void fill_inputs(weft_exec_result *r)
{
    const weft__layout *l = &r->l;
    for (uint32_t rk = 0; rk < l->nranks; rk++) {
        for (uint32_t i = 0; i < l->nin; i++) {
            uint64_t chunk;
            uint32_t from;
            if (!weft__layout_initial(l, rk, i, &chunk, &from))
                continue;
            uint64_t *x = slot_ptr(r, rk, WEFT_BUF_IN, i);
            for (uint32_t e = 0; e < r->elems; e++)
                x[e] = (uint64_t)weft_exec_input_value(from, chunk, e);
        }
    }
}

weft_err weft_plan_exec(const weft_plan *p, const weft_exec_opts *o, weft_exec_result **out,
                        weft_diag *d)
{
    weft_exec_opts def;
    if (!o) {
        weft_exec_opts_init(&def);
        o = &def;
    }
    if (o->threads == 0)
        return weft_diag_set(d, WEFT_EINVAL, "threads must be at least 1");
    weft_err e = weft_plan_check_structure(p, d);
    if (e)
        return e;
    weft_exec_result *r;
    if ((e = result_new(p, o->elems_per_chunk, &r, d)))
        return e;
    fill_inputs(r);
    sched s = {0};
    s.p = p;
    s.r = r;
    s.rng = o->seed;
    if ((e = sched_init(&s, d)))
        goto free_sched;
    if (o->threads == 1 || p->nops < 2) {
        while (s.nready) {
            uint32_t id = take_ready(&s);
            run_one(&s, id);
            finish(&s, id);
        }
    } else {
        uint32_t nt = o->threads < 64 ? o->threads : 64;
        pthread_t tids[64];
        uint32_t started = 0;
        if (pthread_mutex_init(&s.mu, NULL)) {
            e = weft_diag_set(d, WEFT_ENOMEM, "cannot create a mutex");
            goto free_sched;
        }
        if (pthread_cond_init(&s.cv, NULL)) {
            pthread_mutex_destroy(&s.mu);
            e = weft_diag_set(d, WEFT_ENOMEM, "cannot create a condition variable");
            goto free_sched;
        }
        for (; started < nt; started++) {
            if (pthread_create(&tids[started], NULL, worker, &s))
                break;
        }
        if (started == 0) {
            /* No thread could start: run the plan here instead. */
            worker(&s);
        }
        for (uint32_t i = 0; i < started; i++)
            pthread_join(tids[i], NULL);
        pthread_cond_destroy(&s.cv);
        pthread_mutex_destroy(&s.mu);
    }
    *out = r;
    r = NULL;
free_sched:
    weft__free(s.succ_start);
    weft__free(s.succ);
    weft__free(s.indeg);
    weft__free(s.ready);
    weft_exec_result_free(r);
    return e;
}

/* ---- Reference and comparison -------------------------------------------- */

weft_err weft_exec_reference(const weft_plan *p, uint32_t elems_per_chunk, weft_exec_result **out)
{
    weft_exec_result *r;
    weft_err e = result_new(p, elems_per_chunk, &r, NULL);
    if (e)
        return e;
    const weft__layout *l = &r->l;
    for (uint32_t rk = 0; rk < l->nranks; rk++) {
        for (uint32_t i = 0; i < l->nout; i++) {
            uint64_t chunk;
            bool all;
            uint32_t from;
            if (!weft__layout_final(l, rk, i, &chunk, &all, &from))
                continue;
            uint64_t *x = slot_ptr(r, rk, WEFT_BUF_OUT, i);
            for (uint32_t el = 0; el < r->elems; el++) {
                uint64_t v = 0;
                if (all) {
                    for (uint32_t q = 0; q < l->nranks; q++)
                        v += (uint64_t)weft_exec_input_value(q, chunk, el);
                } else {
                    v = (uint64_t)weft_exec_input_value(from, chunk, el);
                }
                x[el] = v;
            }
        }
    }
    *out = r;
    return WEFT_OK;
}

bool weft_exec_compare(const weft_exec_result *got, const weft_exec_result *want, weft_diag *d)
{
    const weft__layout *a = &got->l, *b = &want->l;
    if (a->coll != b->coll || a->nranks != b->nranks || a->chunks != b->chunks ||
        a->root.v != b->root.v || got->elems != want->elems) {
        weft_diag_set(d, WEFT_EVERIFY, "the results are of different collectives or shapes");
        return false;
    }
    for (uint32_t rk = 0; rk < b->nranks; rk++) {
        for (uint32_t i = 0; i < b->nout; i++) {
            uint64_t chunk;
            bool all;
            uint32_t from;
            if (!weft__layout_final(b, rk, i, &chunk, &all, &from))
                continue;
            const uint64_t *x = slot_ptr(got, rk, WEFT_BUF_OUT, i);
            const uint64_t *y = slot_ptr(want, rk, WEFT_BUF_OUT, i);
            for (uint32_t el = 0; el < want->elems; el++) {
                if (x[el] != y[el]) {
                    weft_diag_set(d, WEFT_EVERIFY,
                                  "rank %u out[%u] element %u: got %lld, expected %lld", rk, i, el,
                                  (long long)(int64_t)x[el], (long long)(int64_t)y[el]);
                    return false;
                }
            }
        }
    }
    return true;
}

weft_err weft_plan_exec_check(const weft_plan *p, const weft_exec_opts *o, weft_diag *d)
{
    weft_exec_opts def;
    if (!o) {
        weft_exec_opts_init(&def);
        o = &def;
    }
    weft_exec_result *got = NULL, *want = NULL;
    weft_err e = weft_plan_exec(p, o, &got, d);
    if (!e) {
        e = weft_exec_reference(p, o->elems_per_chunk, &want);
        if (e)
            weft_diag_set(d, e, "exec: cannot build the reference result: %s", weft_strerror(e));
    }
    if (!e && !weft_exec_compare(got, want, d))
        e = WEFT_EVERIFY;
    weft_exec_result_free(got);
    weft_exec_result_free(want);
    return e;
}
