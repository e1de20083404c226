/* weft_allreduce_sparse on 2 to 8 forked ranks over shared memory and over
 * TCP: byte-exact against a dense reference at densities 0.1 %, 1 %, 10 %
 * and 50 %, uniform and skewed (zipf 1.1 over the index space, so the head
 * indices repeat within a rank), dense and sparse outputs, uint32 and
 * uint64 indices; bad arguments fail every rank with one message.
 *
 * The values are not integers, so a sum in another order would show in the
 * last bits: the reference adds every pair into a dense accumulator, rank
 * 0's pairs first in input order, then rank 1's, ... (the order of
 * weft/comm_sparse.h), computed by every rank from every rank's inputs,
 * which it regenerates. With small integer values the result must also
 * equal weft_allreduce of the densified tensors (any order is exact
 * there). At n = 2^40 only the sparse output fits: its reference sorts all
 * ranks' pairs by (index, rank, position) and sums runs, another way to
 * the same order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "run/coll_sparse.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"
#include "weft/comm_sparse.h"

static uint64_t mix(uint64_t z)
{
    z += UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

typedef struct gen {
    uint64_t n;
    uint32_t ppm;   /* density */
    int skew_milli; /* 0 uniform; zipf S in thousandths (> 1000) */
    bool ints;      /* small integer values */
    uint64_t seed;
} gen;

/* Rank r's pairs: k = ceil(n ppm / 10^6) draws, so skewed draws repeat. */
static size_t pairs(const gen *g, uint32_t r, uint64_t **ix, float **v)
{
    size_t k = (size_t)((g->n * g->ppm + 999999) / 1000000);
    *ix = malloc((k ? k : 1) * sizeof **ix);
    *v = malloc((k ? k : 1) * sizeof **v);
    uint64_t st = g->seed * 1000003u + r * 7919u + 1;
    for (size_t i = 0; i < k; i++) {
        uint64_t a = mix(st += 2), b = mix(st += 2);
        uint64_t x;
        if (g->skew_milli) {
            /* Continuous Pareto tail of exponent S: P(X > x) = x^-(S-1). */
            double u = ((double)(a >> 11) + 0.5) / 9007199254740992.0;
            double t = pow(u, -1.0 / ((g->skew_milli - 1000) / 1000.0));
            x = t >= (double)g->n ? a % g->n : (uint64_t)t - 1;
        } else {
            x = a % g->n;
        }
        (*ix)[i] = x;
        (*v)[i] = g->ints ? (float)((int)(b % 5) - 2)
                          : (float)((double)(b >> 40) / 16777216.0 * 3.0 - 1.5) / (float)(r + 1);
    }
    return k;
}

/* The dense reference: every rank's pairs in rank order, each rank's in
 * input order, into one accumulator per index (the first value stored,
 * the others added). */
static float *reference(const gen *g, uint32_t ranks)
{
    float *ref = calloc(g->n, sizeof *ref);
    unsigned char *seen = calloc(g->n, 1);
    for (uint32_t r = 0; r < ranks; r++) {
        uint64_t *ix;
        float *v;
        size_t k = pairs(g, r, &ix, &v);
        for (size_t i = 0; i < k; i++) {
            ref[ix[i]] = seen[ix[i]] ? ref[ix[i]] + v[i] : v[i];
            seen[ix[i]] = 1;
        }
        free(ix);
        free(v);
    }
    free(seen);
    return ref;
}

/* Which indices some rank holds. */
static unsigned char *support(const gen *g, uint32_t ranks)
{
    unsigned char *s = calloc(g->n, 1);
    for (uint32_t r = 0; r < ranks; r++) {
        uint64_t *ix;
        float *v;
        size_t k = pairs(g, r, &ix, &v);
        for (size_t i = 0; i < k; i++)
            s[ix[i]] = 1;
        free(ix);
        free(v);
    }
    return s;
}

static void one_case(weft_comm *c, const gen *g, bool sparse_out, bool wide)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    uint64_t *ix;
    float *v;
    size_t k = pairs(g, me, &ix, &v);
    uint32_t *ix32 = malloc((k ? k : 1) * sizeof *ix32);
    for (size_t i = 0; i < k; i++)
        ix32[i] = (uint32_t)ix[i];
    float *ref = reference(g, n);
    weft_diag d = {0};
    size_t wrong = 0;
    if (!sparse_out) {
        float *out = malloc(g->n * sizeof *out);
        memset(out, 0xa5, g->n * sizeof *out);
        CHECK_ERR(weft_allreduce_sparse(c, wide ? (void *)ix : (void *)ix32,
                                        wide ? WEFT_UINT64 : WEFT_UINT32, v, k, g->n, out, NULL,
                                        &d),
                  WEFT_OK);
        wrong = memcmp(out, ref, g->n * sizeof *out) != 0;
        if (g->ints && !wrong) {
            /* weft_allreduce of the densified tensors, any schedule. */
            float *dn = calloc(g->n, sizeof *dn);
            for (size_t i = 0; i < k; i++)
                dn[ix[i]] += v[i];
            CHECK_ERR(weft_allreduce(c, dn, dn, g->n, WEFT_FLOAT, WEFT_SUM, &d), WEFT_OK);
            CHECK(memcmp(dn, out, g->n * sizeof *dn) == 0);
            free(dn);
        }
        free(out);
    } else {
        weft_sparse_result res = {0};
        CHECK_ERR(weft_allreduce_sparse(c, wide ? (void *)ix : (void *)ix32,
                                        wide ? WEFT_UINT64 : WEFT_UINT32, v, k, g->n, NULL, &res,
                                        &d),
                  WEFT_OK);
        unsigned char *sup = support(g, n);
        size_t want = 0, j = 0;
        for (uint64_t i = 0; i < g->n; i++)
            want += sup[i];
        CHECK_INT(res.count, want);
        for (uint64_t i = 0; i < g->n && j <= res.count; i++) {
            if (!sup[i])
                continue;
            if (j == res.count) {
                wrong++;
                break;
            }
            uint64_t got = wide ? ((uint64_t *)res.indices)[j] : ((uint32_t *)res.indices)[j];
            if (got != i || memcmp(&res.values[j], &ref[i], sizeof(float)) != 0)
                wrong++;
            j++;
        }
        free(sup);
        weft_sparse_result_free(&res);
        CHECK(res.indices == NULL && res.count == 0);
    }
    if (wrong)
        fprintf(stderr, "rank %u of %u: n %llu ppm %u skew %d ints %d %s %s: %zu wrong (%s)\n", me,
                n, (unsigned long long)g->n, g->ppm, g->skew_milli, (int)g->ints,
                sparse_out ? "sparse" : "dense", wide ? "u64" : "u32", wrong, d.msg);
    CHECK_INT(wrong, 0);
    free(ref);
    free(ix);
    free(ix32);
    free(v);
}

/* n = 2^40: uint64 indices, sparse output; the reference sorts every
 * rank's pairs. */
typedef struct ref_pair {
    uint64_t idx;
    uint32_t rank;
    uint32_t pos;
    float v;
} ref_pair;

static int by_idx_rank_pos(const void *a, const void *b)
{
    const ref_pair *x = a, *y = b;
    if (x->idx != y->idx)
        return x->idx < y->idx ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static void huge_case(weft_comm *c)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    const uint64_t N = UINT64_C(1) << 40;
    enum { K = 3000 };
    ref_pair *all = malloc((size_t)n * K * sizeof *all);
    uint64_t *mine = malloc(K * sizeof *mine);
    float *mv = malloc(K * sizeof *mv);
    for (uint32_t r = 0; r < n; r++)
        for (uint32_t i = 0; i < K; i++) {
            uint64_t a = mix(r * 100003u + i);
            /* A third of the draws fall on 64 shared indices near 2^40. */
            uint64_t x = a % 3 == 0 ? N - 1 - (a >> 2) % 64 : (a >> 2) % N;
            float val = (float)((double)(a >> 40) / 16777216.0) - 0.5f;
            all[(size_t)r * K + i] = (ref_pair){x, r, i, val};
            if (r == me) {
                mine[i] = x;
                mv[i] = val;
            }
        }
    qsort(all, (size_t)n * K, sizeof *all, by_idx_rank_pos);
    weft_sparse_result res = {0};
    weft_diag d = {0};
    CHECK_ERR(weft_allreduce_sparse(c, mine, WEFT_UINT64, mv, K, N, NULL, &res, &d), WEFT_OK);
    size_t j = 0, wrong = 0;
    for (size_t i = 0; i < (size_t)n * K;) {
        /* In (rank, position) order, the first value stored. */
        float sum = all[i].v;
        size_t e = i + 1;
        while (e < (size_t)n * K && all[e].idx == all[i].idx)
            sum += all[e++].v;
        if (j >= res.count || ((uint64_t *)res.indices)[j] != all[i].idx ||
            memcmp(&res.values[j], &sum, sizeof sum) != 0)
            wrong++;
        j++;
        i = e;
    }
    CHECK_INT(res.count, j);
    CHECK_INT(wrong, 0);
    weft_sparse_result_free(&res);
    free(all);
    free(mine);
    free(mv);
}

/* Bad arguments: every rank fails with the same message, and the
 * communicator still works. */
static void bad_args(weft_comm *c)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    uint32_t ix[3] = {1, 2, 3};
    float v[3] = {1, 2, 3}, out[1000];
    weft_diag d = {0};
    /* Rank n - 1's index 1000 at position 2 of n = 1000. */
    if (me == n - 1)
        ix[2] = 1000;
    CHECK_ERR(weft_allreduce_sparse(c, ix, WEFT_UINT32, v, 3, 1000, out, NULL, &d), WEFT_EINVAL);
    char want[160];
    snprintf(want, sizeof want,
             "sparse allreduce: rank %u: index 1000 at position 2 is >= n = 1000", n - 1);
    CHECK_STR(d.msg, want);
    ix[2] = 3;
    /* A count whose pairs cannot fit (rank 0; never read). */
    size_t huge = me == 0 ? SIZE_MAX / 2 : 3;
    CHECK_ERR(weft_allreduce_sparse(c, ix, WEFT_UINT32, v, huge, 1000, out, NULL, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "sparse allreduce: rank 0: 9223372036854775807 pairs do not fit in memory");
    /* n differs. */
    CHECK_ERR(weft_allreduce_sparse(c, ix, WEFT_UINT32, v, 3, me == 1 ? 999 : 1000, out, NULL, &d),
              WEFT_EINVAL);
    CHECK_STR(d.msg, "sparse allreduce: ranks disagree on n: rank 0 has 1000, rank 1 has 999");
    /* Not an index type; both outputs; the index type differs. */
    weft_sparse_result res = {0};
    CHECK_ERR(
        weft_allreduce_sparse(c, ix, me == 0 ? WEFT_FLOAT : WEFT_UINT32, v, 3, 1000, out, NULL, &d),
        WEFT_EINVAL);
    CHECK_STR(d.msg, "sparse allreduce: rank 0: index type float; use uint32 or uint64");
    CHECK_ERR(weft_allreduce_sparse(c, ix, WEFT_UINT32, v, 3, 1000, out, me == 1 ? &res : NULL, &d),
              WEFT_EINVAL);
    CHECK_STR(d.msg,
              "sparse allreduce: rank 1: a dense and a sparse output; give exactly one of dense "
              "and sparse");
    uint64_t ix64[3] = {1, 2, 3};
    CHECK_ERR(weft_allreduce_sparse(c, me == 1 ? (void *)ix64 : (void *)ix,
                                    me == 1 ? WEFT_UINT64 : WEFT_UINT32, v, 3, 1000, out, NULL, &d),
              WEFT_EINVAL);
    CHECK_STR(d.msg, "sparse allreduce: ranks disagree on the index type: rank 0 has uint32, "
                     "rank 1 has uint64");
    CHECK(!weft_comm_failed(c));
    /* Still usable: every rank's 1, 2, 3 at 1, 2, 3. */
    CHECK_ERR(weft_allreduce_sparse(c, ix, WEFT_UINT32, v, 3, 1000, out, NULL, &d), WEFT_OK);
    CHECK(out[0] == 0 && out[1] == (float)n && out[3] == 3.0f * (float)n && out[999] == 0);
    /* Nothing at all. */
    CHECK_ERR(weft_allreduce_sparse(c, NULL, WEFT_UINT32, NULL, 0, 0, NULL, &res, &d), WEFT_OK);
    CHECK_INT(res.count, 0);
    weft_sparse_result_free(&res);
}

typedef struct opts {
    bool full; /* every density and skew, or a few */
} opts;

static int body(weft_comm *c, void *arg)
{
    const opts *o = arg;
    static const uint32_t ppms[] = {1000, 10000, 100000, 500000};
    static const int skews[] = {0, 1100};
    uint64_t seed = 1;
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 2; b++) {
            if (!o->full && (a + b) % 2)
                continue;
            gen g = {20011, ppms[a], skews[b], false, seed++};
            one_case(c, &g, (a + b) % 2 == 1, a % 2 == 1);
            one_case(c, &g, (a + b) % 2 == 0, a == 2);
        }
    gen gi = {5003, 100000, 1100, true, 99};
    one_case(c, &gi, false, false);
    /* A tensor of fewer elements than ranks. */
    gen tiny = {3, 1000000, 0, false, 7};
    one_case(c, &tiny, false, false);
    one_case(c, &tiny, true, true);
    if (o->full)
        huge_case(c);
    bad_args(c);
    CHECK(!weft_comm_failed(c));
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

static void run(uint32_t n, weft_transport_choice t, bool full, const char *what)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = t;
    cfg.timeout_ms = 20000;
    opts o = {full};
    weft__test_comm_ranks_ok(n, &cfg, body, &o, 120000, what);
}

int main(void)
{
    for (uint32_t n = 2; n <= 8; n++)
        run(n, WEFT_TRANSPORT_SHM, n == 2 || n == 5 || n == 8, "shm");
    run(2, WEFT_TRANSPORT_TCP, true, "tcp");
    run(3, WEFT_TRANSPORT_TCP, false, "tcp");
    /* The counts in their own exchange, as beyond 64 ranks. */
    weft__sparse_fold_max = 0;
    run(3, WEFT_TRANSPORT_SHM, true, "shm, counts apart");
    run(4, WEFT_TRANSPORT_TCP, false, "tcp, counts apart");
    weft__sparse_fold_max = 64;
    run(8, WEFT_TRANSPORT_TCP, true, "tcp");
    return weft_test_done();
}
