/* Herald in a step (weft_emb_herald): every count and both matrices
 * against a brute-force replay of the rules of weft/embedding.h (linear
 * searches, a clock for recency, the update sets of each step kept whole),
 * with and without the placement, LRU and LFU, several staleness bounds
 * and every sharding, and on random workloads (up to 80 GPUs); no cache and the drawn placement
 * give weft_emb_acc's matrix; the placement never moves more bytes than the drawn assignment
 * without a cache (where its estimate is exact) nor on the test configs
 * with one; hand-counted cases. */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "weft/embedding.h"
#include "weft/threads.h"

#define MAXG 80 /* past 64: bitsets of two words */
#define MAXC 64
#define NONE32 UINT32_MAX

typedef struct bent {
    uint64_t key;
    uint32_t fetched, dirty, pushed;
    uint64_t freq, last; /* LRU: last use; LFU: the order of the last bump */
    bool used;
} bent;

typedef struct brute {
    const weft_emb_workload *w;
    weft_emb_herald_params p;
    uint64_t *rows; /* every step's lookups */
    uint64_t nl, per, nb;
    bent c[MAXG][MAXC];
    uint64_t clock;
    uint32_t step;
    uint32_t place[4096];
    bool measure;
    /* results */
    uint64_t fwd[MAXG * MAXG], bwd[MAXG * MAXG], bagp[MAXG * MAXG], rowp[MAXG * MAXG];
    uint64_t hits, stale, admitted, transfers, remote;
    bool placed;
} brute;

static weft_err collect(void *ctx, uint64_t s, uint32_t t, uint64_t r, weft_diag *d)
{
    (void)s;
    (void)t;
    (void)d;
    brute *b = ctx;
    b->rows[b->nl++] = r;
    return WEFT_OK;
}

static uint64_t vecb(const weft_emb_table *tb)
{
    return (uint64_t)tb->dim * tb->dtype_bytes;
}

static uint64_t sliceb(const weft_emb_table *tb, uint32_t c)
{
    return (uint64_t)(tb->dim / tb->col_shards + (c < tb->dim % tb->col_shards)) * tb->dtype_bytes;
}

static uint32_t slot_of(const weft_emb_workload *w, uint32_t t)
{
    uint32_t slot = 0;
    for (uint32_t u = 0; u < t; u++)
        slot += w->tables[u].sharding == WEFT_EMB_TW   ? 1
                : w->tables[u].sharding == WEFT_EMB_CW ? w->tables[u].col_shards
                                                       : 0;
    return slot;
}

/* The owner of row r of table t (tw, rw), or NONE32 for column-wise. */
static uint32_t owner(const brute *b, uint32_t t, uint64_t r)
{
    const weft_emb_table *tb = &b->w->tables[t];
    uint32_t n = b->w->gpus;
    if (tb->sharding == WEFT_EMB_TW)
        return slot_of(b->w, t) % n;
    if (tb->sharding == WEFT_EMB_RW)
        return (uint32_t)(r / ((tb->rows + n - 1) / n));
    return NONE32;
}

static bent *find(brute *b, uint32_t g, uint64_t key)
{
    for (uint32_t i = 0; i < b->p.rows_per_gpu; i++)
        if (b->c[g][i].used && b->c[g][i].key == key)
            return &b->c[g][i];
    return NULL;
}

static bool is_fresh(const brute *b, const bent *e)
{
    return !b->p.staleness || e->dirty == NONE32 || b->step < e->fetched + b->p.staleness;
}

/* Valid for the placement: cached and not overwritten. */
static bool valid(brute *b, uint32_t g, uint64_t key)
{
    bent *e = find(b, g, key);
    return e && e->dirty == NONE32;
}

static void add_part(brute *b, uint64_t *m, uint32_t t, uint32_t o, uint32_t g, bool to_g)
{
    const weft_emb_table *tb = &b->w->tables[t];
    uint32_t n = b->w->gpus;
    if (o != NONE32) {
        if (to_g)
            m[o * n + g] += vecb(tb);
        else if (o != g)
            m[g * n + o] += vecb(tb);
        return;
    }
    for (uint32_t c = 0; c < tb->col_shards; c++) {
        uint32_t oc = (slot_of(b->w, t) + c) % n;
        if (to_g)
            m[oc * n + g] += sliceb(tb, c);
        else if (oc != g)
            m[g * n + oc] += sliceb(tb, c);
    }
}

static void transfer(brute *b, uint32_t t, uint32_t o, uint32_t g)
{
    if (!b->measure)
        return;
    add_part(b, b->fwd, t, o, g, true);
    add_part(b, b->bwd, t, o, g, false);
    const weft_emb_table *tb = &b->w->tables[t];
    if (o != NONE32)
        b->transfers += o != g;
    else
        for (uint32_t c = 0; c < tb->col_shards; c++)
            b->transfers += (slot_of(b->w, t) + c) % b->w->gpus != g;
}

static void insert(brute *b, uint32_t g, uint64_t key)
{
    bent *v = NULL;
    for (uint32_t i = 0; i < b->p.rows_per_gpu && !v; i++)
        if (!b->c[g][i].used)
            v = &b->c[g][i];
    if (!v)
        for (uint32_t i = 0; i < b->p.rows_per_gpu; i++) {
            bent *e = &b->c[g][i];
            bool less =
                !v || (b->p.policy == WEFT_EMB_LFU
                           ? (e->freq < v->freq || (e->freq == v->freq && e->last < v->last))
                           : e->last < v->last);
            if (less)
                v = e;
        }
    *v = (bent){key, b->step, NONE32, 0, 1, ++b->clock, true};
}

/* One remote lookup: hit (fresh), and the recency and frequency of a
 * found copy. */
static bool look(brute *b, uint32_t g, uint64_t key, bent **out)
{
    if (b->measure)
        b->remote++;
    bent *e = b->p.rows_per_gpu ? find(b, g, key) : NULL;
    *out = e;
    if (!e)
        return false;
    e->freq++;
    e->last = ++b->clock;
    bool h = is_fresh(b, e);
    b->hits += b->measure && h;
    b->stale += b->measure && !h;
    return h;
}

/* The end of a part: looked lookups, miss of them missed (the last mkey),
 * hits its hit copies. */
static void end(brute *b, uint32_t g, uint32_t t, uint32_t o, uint64_t looked, uint64_t miss,
                uint64_t mkey, bent **hits, uint32_t nh)
{
    if (looked && !miss) {
        if (b->measure) {
            add_part(b, b->bagp, t, o, g, false);
            for (uint32_t k = 0; k < nh; k++)
                if (hits[k]->pushed != b->step + 1) {
                    hits[k]->pushed = b->step + 1;
                    add_part(b, b->rowp, t, o, g, false);
                }
        }
        return;
    }
    transfer(b, t, o, g);
    if (miss == 1 && b->p.rows_per_gpu) {
        b->admitted += b->measure;
        bent *e = find(b, g, mkey);
        if (e) {
            e->fetched = b->step;
            e->dirty = NONE32;
        } else {
            insert(b, g, mkey);
        }
    }
}

/* A bag: its lookups in order, then each part's end in order of its first
 * lookup (row-wise blocks). */
static void bag(brute *b, uint32_t g, uint32_t t, const uint64_t *rows)
{
    const weft_emb_table *tb = &b->w->tables[t];
    uint32_t n = b->w->gpus, P = tb->pooling;
    if (tb->sharding == WEFT_EMB_DP)
        return;
    if (tb->sharding == WEFT_EMB_RW) {
        uint32_t order[MAXG], no = 0;
        bool seen[MAXG] = {false};
        bool hit[1024];
        bent *cp[1024];
        for (uint32_t k = 0; k < P; k++) {
            uint32_t o = owner(b, t, rows[k]);
            if (!seen[o]) {
                seen[o] = true;
                order[no++] = o;
            }
            hit[k] = o != g && look(b, g, (uint64_t)t << 40 | rows[k], &cp[k]);
        }
        for (uint32_t i = 0; i < no; i++) {
            uint32_t o = order[i];
            if (o == g) {
                if (b->measure)
                    b->fwd[g * n + g] += vecb(tb);
                continue;
            }
            uint64_t looked = 0, miss = 0, mkey = 0;
            bent *hits[1024];
            uint32_t nh = 0;
            for (uint32_t k = 0; k < P; k++) {
                if (owner(b, t, rows[k]) != o)
                    continue;
                looked++;
                if (hit[k]) {
                    hits[nh++] = cp[k];
                } else {
                    miss++;
                    mkey = (uint64_t)t << 40 | rows[k];
                }
            }
            end(b, g, t, o, looked, miss, mkey, hits, nh);
        }
        return;
    }
    uint32_t o = owner(b, t, 0);
    bool local = true;
    if (o == NONE32)
        for (uint32_t c = 0; c < tb->col_shards; c++)
            local &= (slot_of(b->w, t) + c) % n == g;
    else
        local = o == g;
    if (local) {
        if (b->measure)
            add_part(b, b->fwd, t, o, g, true);
        return;
    }
    uint64_t miss = 0, mkey = 0;
    bent *hits[1024];
    uint32_t nh = 0;
    for (uint32_t k = 0; k < P; k++) {
        bent *e;
        if (look(b, g, (uint64_t)t << 40 | rows[k], &e)) {
            hits[nh++] = e;
        } else {
            miss++;
            mkey = (uint64_t)t << 40 | rows[k];
        }
    }
    end(b, g, t, o, P, miss, mkey, hits, nh);
}

/* What sample i saves on GPU g (the placement's score), by definition. */
static uint64_t saves(brute *b, const uint64_t *srows, uint32_t g)
{
    const weft_emb_workload *w = b->w;
    uint32_t n = w->gpus;
    uint64_t sum = 0, off = 0;
    for (uint32_t t = 0; t < w->ntables; t++) {
        const weft_emb_table *tb = &w->tables[t];
        const uint64_t *rows = srows + off;
        off += tb->pooling;
        uint64_t key0 = (uint64_t)t << 40;
        if (tb->sharding == WEFT_EMB_DP)
            continue;
        if (tb->sharding == WEFT_EMB_RW) {
            for (uint32_t o = 0; o < n; o++) {
                bool any = false, all = true;
                for (uint32_t k = 0; k < tb->pooling; k++)
                    if (owner(b, t, rows[k]) == o) {
                        any = true;
                        all &= valid(b, g, key0 | rows[k]);
                    }
                if (any && (o == g || all))
                    sum += vecb(tb);
            }
            continue;
        }
        bool all = tb->pooling > 0;
        for (uint32_t k = 0; k < tb->pooling; k++)
            all &= valid(b, g, key0 | rows[k]);
        if (tb->sharding == WEFT_EMB_TW) {
            if (all || owner(b, t, 0) == g)
                sum += vecb(tb);
            continue;
        }
        if (all) {
            sum += vecb(tb);
            continue;
        }
        for (uint32_t c = 0; c < tb->col_shards; c++)
            if ((slot_of(w, t) + c) % n == g)
                sum += sliceb(tb, c);
    }
    return sum;
}

static void brute_step(brute *b, const uint64_t *rows)
{
    const weft_emb_workload *w = b->w;
    uint32_t n = w->gpus;
    uint64_t B = w->batch;
    for (uint64_t i = 0; i < b->nb; i++)
        b->place[i] = (uint32_t)(i / B);
    if (b->p.placement == WEFT_EMB_PLACE_HERALD) {
        uint32_t load[MAXG] = {0}, pl[4096];
        uint64_t sh = 0, sr = 0;
        for (uint64_t i = 0; i < b->nb; i++) {
            uint64_t sv[MAXG];
            uint32_t best = NONE32, drawn = (uint32_t)(i / B);
            for (uint32_t g = 0; g < n; g++) {
                sv[g] = saves(b, rows + i * b->per, g);
                if (load[g] < B && (best == NONE32 || sv[g] > sv[best]))
                    best = g;
            }
            if (load[drawn] < B && sv[drawn] == sv[best])
                best = drawn;
            load[best]++;
            pl[i] = best;
            sh += sv[best];
            sr += sv[drawn];
        }
        b->placed = sh > sr;
        if (b->placed)
            memcpy(b->place, pl, b->nb * sizeof *pl);
    }
    for (uint64_t i = 0; i < b->nb; i++) {
        uint64_t off = 0;
        for (uint32_t t = 0; t < w->ntables; t++) {
            bag(b, b->place[i], t, rows + i * b->per + off);
            off += w->tables[t].pooling;
        }
    }
    /* The updates: a copy goes dirty when a GPU other than its own looked
     * the row up in the step. */
    for (uint32_t g = 0; g < n; g++)
        for (uint32_t x = 0; x < b->p.rows_per_gpu; x++) {
            bent *e = &b->c[g][x];
            if (!e->used)
                continue;
            uint32_t t = (uint32_t)(e->key >> 40);
            uint64_t r = e->key & ((1ull << 40) - 1), off = 0;
            for (uint32_t u = 0; u < t; u++)
                off += w->tables[u].pooling;
            bool other = false;
            for (uint64_t i = 0; i < b->nb && !other; i++)
                for (uint32_t k = 0; k < w->tables[t].pooling; k++)
                    other |= b->place[i] != g && rows[i * b->per + off + k] == r;
            if (other && e->dirty == NONE32)
                e->dirty = b->step;
        }
}

static void compare(const weft_emb_workload *w, const weft_emb_herald_params *p, const char *what)
{
    weft_diag d;
    weft_diag_clear(&d);
    brute *b = calloc(1, sizeof *b);
    b->w = w;
    b->p = *p;
    b->nb = (uint64_t)w->gpus * w->batch;
    for (uint32_t t = 0; t < w->ntables; t++)
        b->per += w->tables[t].pooling;
    uint64_t steps = p->warm_steps + 1ull;
    b->rows = malloc((steps * b->nb * b->per + 1) * sizeof *b->rows);
    CHECK_ERR(weft_emb_generate_steps(w, steps, collect, b, &d), WEFT_OK);
    for (uint32_t k = 0; k < steps; k++) {
        b->step = k;
        b->measure = k + 1 == steps;
        brute_step(b, b->rows + (uint64_t)k * b->nb * b->per);
    }
    uint32_t n = w->gpus;
    for (uint32_t i = 0; i < n * n; i++)
        b->bwd[i] += b->bagp[i] < b->rowp[i] ? b->bagp[i] : b->rowp[i];
    weft_emb_herald_result r;
    CHECK_ERR(weft_emb_herald(w, p, &r, &d), WEFT_OK);
    int bad = 0;
    bad += r.hits != b->hits || r.stale != b->stale || r.admitted != b->admitted;
    bad += r.transfers != b->transfers || r.remote != b->remote || r.placed != b->placed;
    for (uint32_t i = 0; i < n * n; i++)
        bad += r.forward.bytes[i] != b->fwd[i] || r.backward.bytes[i] != b->bwd[i];
    if (bad)
        fprintf(stderr,
                "%s: hits %llu/%llu stale %llu/%llu admitted %llu/%llu transfers %llu/%llu "
                "remote %llu/%llu placed %d/%d (model/brute)\n",
                what, (unsigned long long)r.hits, (unsigned long long)b->hits,
                (unsigned long long)r.stale, (unsigned long long)b->stale,
                (unsigned long long)r.admitted, (unsigned long long)b->admitted,
                (unsigned long long)r.transfers, (unsigned long long)b->transfers,
                (unsigned long long)r.remote, (unsigned long long)b->remote, r.placed, b->placed);
    CHECK_INT(bad, 0);
    weft_emb_herald_free(&r);
    free(b->rows);
    free(b);
}

/* Forward bytes between GPUs of the measured step. */
static uint64_t fbytes(const weft_emb_workload *w, const weft_emb_herald_params *p)
{
    weft_diag d;
    weft_diag_clear(&d);
    weft_emb_herald_result r;
    CHECK_ERR(weft_emb_herald(w, p, &r, &d), WEFT_OK);
    uint64_t v = r.bytes;
    weft_emb_herald_free(&r);
    return v;
}

static void test_brute(void)
{
    weft_emb_table tb[5] = {
        {40, 4, 2, 4, 1200, WEFT_EMB_TW, 1}, {30, 2, 1, 2, 900, WEFT_EMB_TW, 1},
        {50, 4, 3, 4, 1100, WEFT_EMB_RW, 1}, {20, 5, 2, 4, 1000, WEFT_EMB_CW, 2},
        {10, 4, 1, 4, 0, WEFT_EMB_DP, 1},
    };
    static const uint32_t gpus[] = {2, 3, 4};
    static const uint64_t caps[] = {0, 1, 4, 16};
    static const uint64_t stales[] = {0, 1, 3};
    int cases = 0;
    for (size_t gi = 0; gi < 3; gi++)
        for (size_t ci = 0; ci < 4; ci++)
            for (size_t si = 0; si < 3; si++)
                for (int pol = 0; pol < 2; pol++)
                    for (int pl = 0; pl < 2; pl++) {
                        weft_emb_workload w = {gpus[gi], 6, 5, tb, 7 + gi, false};
                        weft_emb_herald_params p = {caps[ci], stales[si], (weft_emb_policy)pol,
                                                    (weft_emb_placement)pl, 3};
                        char what[96];
                        snprintf(what, sizeof what, "%u GPUs cap %llu stale %llu %s %s", gpus[gi],
                                 (unsigned long long)caps[ci], (unsigned long long)stales[si],
                                 pol ? "lfu" : "lru", pl ? "herald" : "random");
                        compare(&w, &p, what);
                        cases++;
                    }
    CHECK_INT(cases, 144);
}

/* One-hot workloads (every bag of at most one lookup, every sharding),
 * whose first warm-up step with LRU caches fills each cache from its
 * lookups read backwards (emb_herald.c, gpu_warm): against the brute force,
 * which replays the bags in order, with caches smaller than the rows
 * looked up (so the order of the copies decides the measured step's
 * evictions and hits), one and two warm-up steps, both placements. */
static void test_one_hot(void)
{
    weft_emb_table tb[6] = {
        {60, 4, 1, 4, 1050, WEFT_EMB_TW, 1}, {200, 2, 1, 2, 1200, WEFT_EMB_TW, 1},
        {90, 4, 1, 4, 900, WEFT_EMB_RW, 1},  {40, 6, 1, 4, 1500, WEFT_EMB_CW, 3},
        {10, 4, 1, 4, 0, WEFT_EMB_DP, 1},    {30, 4, 0, 4, 1000, WEFT_EMB_TW, 1},
    };
    static const uint32_t gpus[] = {2, 3, 5};
    static const uint64_t caps[] = {1, 4, 16, 64};
    int cases = 0;
    for (size_t gi = 0; gi < 3; gi++)
        for (size_t ci = 0; ci < 4; ci++)
            for (uint32_t warm = 1; warm <= 2; warm++)
                for (int pl = 0; pl < 2; pl++) {
                    weft_emb_workload w = {gpus[gi], 12, 6, tb, 11 + gi + ci, false};
                    weft_emb_herald_params p = {caps[ci], 1, WEFT_EMB_LRU, (weft_emb_placement)pl,
                                                warm};
                    char what[96];
                    snprintf(what, sizeof what, "one-hot: %u GPUs cap %llu, %u warm-up, %s",
                             gpus[gi], (unsigned long long)caps[ci], warm,
                             pl ? "herald" : "random");
                    compare(&w, &p, what);
                    cases++;
                }
    CHECK_INT(cases, 48);
}

/* A deterministic stream for the random cases (Knuth's MMIX LCG, TAOCP
 * vol. 2, 3.3.4: the high bits). */
static uint32_t pick(uint64_t *st, uint32_t n)
{
    *st = *st * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((*st >> 33) % n);
}

/* Random workloads against the brute force: 1 to 6 tables of any
 * sharding, rows, pooling (0 to 4) and zipf exponent (uniform to 2.5),
 * 1 to 80 GPUs (past 64 the model's bitsets take two words), caches of 0
 * to 64 rows, staleness 0 to 3, both policies and placements, 0 to 4
 * warm-up steps. Every count and both matrices exactly. */
static void test_random(void)
{
    static const weft_emb_sharding kinds[] = {WEFT_EMB_TW, WEFT_EMB_RW, WEFT_EMB_CW, WEFT_EMB_DP};
    static const uint32_t zipfs[] = {0, 500, 1050, 1500, 2500};
    static const uint64_t rows[] = {1, 3, 17, 100, 1000, 1000000};
    static const uint32_t gpus[] = {1, 2, 3, 5, 8, 65, 80};
    uint64_t st = 27;
    for (int c = 0; c < 40; c++) {
        weft_emb_table tb[6];
        uint32_t nt = 1 + pick(&st, 6);
        for (uint32_t t = 0; t < nt; t++) {
            uint32_t dim = 1 + pick(&st, 8);
            tb[t] = (weft_emb_table){rows[pick(&st, 6)],  dim,
                                     pick(&st, 5),        1 + 3 * pick(&st, 2),
                                     zipfs[pick(&st, 5)], kinds[pick(&st, 4)],
                                     1 + pick(&st, dim)};
        }
        uint32_t n = gpus[pick(&st, 7)];
        weft_emb_workload w = {n, n > 8 ? 1 + pick(&st, 2) : 1 + pick(&st, 8), nt, tb, c, false};
        weft_emb_herald_params p = {pick(&st, 65), pick(&st, 4), (weft_emb_policy)pick(&st, 2),
                                    (weft_emb_placement)pick(&st, 2), pick(&st, 5)};
        char what[96];
        snprintf(what, sizeof what, "random case %d: %u GPUs, %u tables", c, n, nt);
        compare(&w, &p, what);
    }
}

/* No cache, drawn placement: the accumulator's matrix, its transfers, and
 * the transpose backward. */
static void test_base(void)
{
    weft_emb_table tb[4] = {
        {100, 8, 3, 4, 1050, WEFT_EMB_RW, 1},
        {30, 4, 2, 2, 0, WEFT_EMB_TW, 1},
        {30, 6, 1, 4, 0, WEFT_EMB_CW, 4},
        {5, 4, 1, 4, 0, WEFT_EMB_DP, 1},
    };
    weft_emb_workload w = {4, 8, 4, tb, 3, false};
    weft_diag d;
    weft_diag_clear(&d);
    weft_emb_herald_params p = {0, 1, WEFT_EMB_LRU, WEFT_EMB_PLACE_RANDOM, 0};
    weft_emb_herald_result r;
    weft_emb_result er;
    CHECK_ERR(weft_emb_herald(&w, &p, &r, &d), WEFT_OK);
    CHECK_ERR(weft_emb_forward(&w, &er, &d), WEFT_OK);
    int diff = 0, tdiff = 0;
    for (uint32_t i = 0; i < 16; i++) {
        diff += r.forward.bytes[i] != er.forward.bytes[i] ||
                r.forward_base.bytes[i] != er.forward.bytes[i];
        if (i / 4 != i % 4)
            tdiff += r.backward.bytes[(i % 4) * 4 + i / 4] != r.forward.bytes[i];
    }
    CHECK_INT(diff, 0);
    CHECK_INT(tdiff, 0);
    CHECK_INT(r.transfers, r.transfers_base);
    CHECK_INT(r.bytes, r.bytes_base);
    CHECK_INT(r.bwd_bytes, r.bytes_base);
    CHECK_INT(r.hits, 0);
    CHECK_INT(r.lookups, 4 * 8 * 7);
    /* tw: 24 of the 32 samples elsewhere; cw: 4 shards, 24 each. */
    CHECK(r.transfers_base > 24 + 4 * 24);
    weft_emb_herald_free(&r);
    weft_emb_result_free(&er);
    /* Several row-wise tables (pooling 0 to 5, one of fewer rows than
     * GPUs) with a cache and Herald's placement: the plain matrix is still
     * the accumulator's of the same lookups. */
    weft_emb_table rw[5] = {
        {100, 8, 3, 4, 1050, WEFT_EMB_RW, 1}, {3, 4, 5, 2, 0, WEFT_EMB_RW, 1},
        {30, 4, 2, 2, 0, WEFT_EMB_TW, 1},     {1000, 2, 0, 4, 1200, WEFT_EMB_RW, 1},
        {50, 4, 1, 4, 900, WEFT_EMB_RW, 1},
    };
    weft_emb_workload w2 = {5, 6, 5, rw, 11, false};
    weft_emb_herald_params p2 = {8, 1, WEFT_EMB_LRU, WEFT_EMB_PLACE_HERALD, 0};
    CHECK_ERR(weft_emb_herald(&w2, &p2, &r, &d), WEFT_OK);
    CHECK_ERR(weft_emb_forward(&w2, &er, &d), WEFT_OK);
    diff = 0;
    for (uint32_t i = 0; i < 25; i++)
        diff += r.forward_base.bytes[i] != er.forward.bytes[i];
    CHECK_INT(diff, 0);
    CHECK_INT(r.lookups, 5 * 6 * 11);
    weft_emb_herald_free(&r);
    weft_emb_result_free(&er);
}

/* The placement moves no more bytes than the drawn samples: always without
 * a cache; on these configs with one. */
static void test_placement(void)
{
    weft_emb_table tb[3] = {
        {64, 4, 4, 4, 1100, WEFT_EMB_RW, 1},
        {200, 4, 2, 4, 1200, WEFT_EMB_TW, 1},
        {100, 8, 2, 2, 1000, WEFT_EMB_CW, 2},
    };
    int worse = 0, better = 0;
    for (uint32_t n = 2; n <= 8; n *= 2)
        for (uint64_t seed = 1; seed <= 3; seed++)
            for (uint64_t cap = 0; cap <= 32; cap += 16) {
                weft_emb_workload w = {n, 16, 3, tb, seed, false};
                weft_emb_herald_params pr = {cap, 1, WEFT_EMB_LRU, WEFT_EMB_PLACE_RANDOM, 2};
                weft_emb_herald_params ph = pr;
                ph.placement = WEFT_EMB_PLACE_HERALD;
                uint64_t a = fbytes(&w, &pr), b = fbytes(&w, &ph);
                worse += b > a;
                better += b < a;
            }
    CHECK_INT(worse, 0);
    CHECK(better >= 9);
}

/* By hand: 2 GPUs, 1 sample each, table 0 (4 rows, dim 2, fp32, pool 1) on
 * GPU 0; a cache of 1 row, staleness 1. Both samples read row 3 every step
 * (the generator is replaced by a table of 1 row... so row 0). */
static void test_hand(void)
{
    weft_emb_table tb[1] = {{1, 2, 1, 4, 0, WEFT_EMB_TW, 1}};
    weft_emb_workload w = {2, 1, 1, tb, 0, false};
    weft_diag d;
    weft_diag_clear(&d);
    /* Step 0: GPU 1 misses row 0 and caches it (8 bytes). GPU 0 (the
     * owner) also reads it: the copy on GPU 1 goes dirty at step 0's end.
     * Step 1: stale (staleness 1): fetched again. */
    weft_emb_herald_params p = {1, 1, WEFT_EMB_LRU, WEFT_EMB_PLACE_RANDOM, 1};
    weft_emb_herald_result r;
    CHECK_ERR(weft_emb_herald(&w, &p, &r, &d), WEFT_OK);
    CHECK_INT(r.remote, 1);
    CHECK_INT(r.hits, 0);
    CHECK_INT(r.stale, 1);
    CHECK_INT(r.admitted, 1);
    CHECK_INT(r.bytes, 8);
    weft_emb_herald_free(&r);
    /* Staleness 2: the copy of step 0 still serves step 1; the hit pushes
     * its gradient (8 bytes, GPU 1 to GPU 0), nothing forward. */
    p.staleness = 2;
    CHECK_ERR(weft_emb_herald(&w, &p, &r, &d), WEFT_OK);
    CHECK_INT(r.hits, 1);
    CHECK_INT(r.bytes, 0);
    CHECK_INT(r.bwd_bytes, 8);
    CHECK_INT(weft_traffic_at(&r.backward, 1, 0), 8);
    CHECK_INT(r.transfers_base, 1);
    weft_emb_herald_free(&r);
    /* Placement: the single-row table on GPU 0 -- both samples want GPU 0,
     * only one fits: nothing to gain, the drawn assignment stays. */
    p.placement = WEFT_EMB_PLACE_HERALD;
    CHECK_ERR(weft_emb_herald(&w, &p, &r, &d), WEFT_OK);
    CHECK(!r.placed);
    weft_emb_herald_free(&r);
    /* Errors. */
    w.rw_dense = true;
    CHECK_ERR(weft_emb_herald(&w, &p, &r, &d), WEFT_EINVAL);
    CHECK_CONTAINS(d.msg, "sparse row-wise");
    w.rw_dense = false;
    p.rows_per_gpu = 1ull << 32;
    CHECK_ERR(weft_emb_herald(&w, &p, &r, &d), WEFT_ELIMIT);
    CHECK_STR(d.msg, "a cache of 4294967296 rows on each of 2 GPUs: at most 2^32 rows in all");
}

/* The GPUs' bags and the tables' draws run on weft_threads_get()
 * threads: any number gives the brute force's counts and matrices (more
 * threads than GPUs too). */
static void test_threads(void)
{
    static const unsigned counts[] = {1, 3, 8};
    for (size_t k = 0; k < 3; k++) {
        CHECK_ERR(weft_threads_set(counts[k]), WEFT_OK);
        test_brute();
        test_one_hot();
        if (k == 1)
            test_random();
    }
    CHECK_ERR(weft_threads_set(0), WEFT_OK);
}

int main(void)
{
    test_base();
    test_hand();
    test_brute();
    test_one_hot();
    test_random();
    test_placement();
    test_threads();
    return weft_test_done();
}
