/* The compressors with error feedback (top-k against a sort, int8 within
 * its stated bound, the residual) and weft_allreduce_int8 on 2 to 8 forked
 * ranks over shared memory and 3 over TCP: every element within the bound
 * of weft/comm_sparse.h, every rank the same bytes, bad calls refused on
 * every rank. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
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

/* Element i of rank r's tensor: magnitudes from 10^-2 to 10^2 by blocks of
 * 64, signs mixed. */
static float value(uint64_t seed, uint32_t r, size_t i)
{
    uint64_t a = mix(seed * 1000003u + r * 7919u + i);
    double u = (double)(a >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    static const double scale[5] = {0.01, 0.1, 1, 10, 100};
    return (float)(u * scale[(i / 64 + r) % 5]);
}

typedef struct ord {
    float mag;
    uint32_t i;
} ord;

static int by_mag_desc(const void *a, const void *b)
{
    const ord *x = a, *y = b;
    if (x->mag != y->mag)
        return x->mag > y->mag ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static int by_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void test_topk(void)
{
    enum { N = 5000, K = 50 };
    float *g = malloc(N * sizeof *g), *x = malloc(N * sizeof *x), vals[K];
    uint32_t idx[K], want[K];
    ord *o = malloc(N * sizeof *o);
    weft_ef ef;
    CHECK_ERR(weft_ef_init(&ef, N), WEFT_OK);
    memset(x, 0, N * sizeof *x);
    for (int step = 0; step < 3; step++) {
        for (size_t i = 0; i < N; i++) {
            /* Ties: a run of equal magnitudes at step 1. */
            g[i] = step == 1 && i % 100 == 7 ? 50.0f : value(7 + (uint64_t)step, 0, i);
            x[i] += g[i];
            o[i] = (ord){fabsf(x[i]), (uint32_t)i};
        }
        qsort(o, N, sizeof *o, by_mag_desc);
        for (int j = 0; j < K; j++)
            want[j] = o[j].i;
        qsort(want, K, sizeof *want, by_u32);
        CHECK_ERR(weft_topk_compress(g, N, K, &ef, idx, vals, NULL), WEFT_OK);
        size_t bad = 0;
        for (int j = 0; j < K; j++) {
            bad += idx[j] != want[j] || memcmp(&vals[j], &x[want[j]], sizeof(float)) != 0;
            x[want[j]] = 0;
        }
        CHECK_INT(bad, 0);
        CHECK(memcmp(x, ef.residual, N * sizeof *x) == 0);
    }
    /* Step 1's 50 ties at 50.0 beat everything else (|value| <= 100 only in
     * every fifth block): checked above against the sort. Errors: */
    weft_diag d = {0};
    CHECK_ERR(weft_topk_compress(g, N, N + 1, &ef, idx, vals, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "top-k: k = 5001 of 5000 elements");
    CHECK_ERR(weft_topk_compress(g, N - 1, 1, &ef, idx, vals, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "top-k: a residual of 5000 elements for a tensor of 4999");
    /* Without a residual, k = n keeps everything in order. */
    float small[3] = {1, -3, 2}, sv[3];
    uint32_t si[3];
    CHECK_ERR(weft_topk_compress(small, 3, 3, NULL, si, sv, NULL), WEFT_OK);
    CHECK(si[0] == 0 && si[1] == 1 && si[2] == 2 && sv[1] == -3.0f);
    CHECK_ERR(weft_topk_compress(small, 3, 1, NULL, si, sv, NULL), WEFT_OK);
    CHECK(si[0] == 1 && sv[0] == -3.0f);
    weft_ef_fini(&ef);
    weft_ef_fini(&ef);
    free(g);
    free(x);
    free(o);
}

static void test_int8(void)
{
    enum { N = 1000 };
    static const size_t blocks[] = {0, 1, 64, 300};
    float g[N], out[N], x[N], scales[N];
    int8_t q[N];
    for (size_t b = 0; b < 4; b++) {
        size_t B = blocks[b], ns = weft_int8_scales(N, B);
        CHECK_INT(ns, B == 0 ? 1 : (N + B - 1) / B);
        weft_ef ef;
        CHECK_ERR(weft_ef_init(&ef, N), WEFT_OK);
        double worst = 0;
        for (int step = 0; step < 2; step++) {
            for (size_t i = 0; i < N; i++) {
                g[i] = value(11 + (uint64_t)step, 1, i);
                x[i] = g[i] + ef.residual[i];
            }
            CHECK_ERR(weft_int8_compress(g, N, B, &ef, q, scales, NULL), WEFT_OK);
            weft_int8_decompress(q, scales, N, B, out);
            size_t bad = 0;
            for (size_t i = 0; i < N; i++) {
                size_t s = B ? i / B : 0;
                double err = fabs((double)x[i] - (double)out[i]);
                if (err > scales[s] * (0.5 + 1.0 / 65536))
                    bad++;
                if (err / scales[s] > worst)
                    worst = err / scales[s];
                /* The residual is what was not sent. */
                if (ef.residual[i] != x[i] - out[i])
                    bad++;
            }
            CHECK_INT(bad, 0);
        }
        /* Rounding to nearest: some element's error comes near half a step. */
        CHECK(B == 1 || worst > 0.45);
        weft_ef_fini(&ef);
    }
    /* An all-zero block: scale 1, codes 0. */
    float z[4] = {0};
    CHECK_ERR(weft_int8_compress(z, 4, 0, NULL, q, scales, NULL), WEFT_OK);
    CHECK(scales[0] == 1.0f && q[0] == 0 && q[3] == 0);
    /* Exactly representable extremes keep their value: 127 and -127 steps. */
    float e2[2] = {2.54f, -2.54f};
    CHECK_ERR(weft_int8_compress(e2, 2, 0, NULL, q, scales, NULL), WEFT_OK);
    CHECK(q[0] == 127 && q[1] == -127);
}

typedef struct qcase {
    size_t count, block;
} qcase;

static int body(weft_comm *c, void *arg)
{
    (void)arg;
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    static const qcase cases[] = {{1, 0}, {3, 0}, {1000, 0}, {1000, 64}, {4099, 7}, {20000, 128}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        size_t cnt = cases[k].count, B = cases[k].block;
        float *in = malloc(cnt * sizeof *in), *out = malloc(cnt * sizeof *out);
        for (size_t i = 0; i < cnt; i++)
            in[i] = value(k, me, i);
        bool in_place = k % 2 == 1;
        if (in_place)
            memcpy(out, in, cnt * sizeof *in);
        weft_diag d = {0};
        CHECK_ERR(weft_allreduce_int8(c, in_place ? out : in, out, cnt, B, &d), WEFT_OK);
        /* The bound, per element, from every rank's inputs. */
        size_t q = cnt / n, r = cnt % n, bad = 0;
        double worst = 0;
        for (uint32_t j = 0; j < n; j++) {
            size_t first = j * q + (j < r ? j : r), len = q + (j < r);
            size_t bl = B ? B : len;
            for (size_t b0 = first; b0 < first + len; b0 += bl) {
                size_t b1 = b0 + bl < first + len ? b0 + bl : first + len;
                double msum = 0;
                for (uint32_t s = 0; s < n; s++) {
                    double m = 0;
                    for (size_t i = b0; i < b1; i++)
                        m = fmax(m, fabs((double)value(k, s, i)));
                    msum += m;
                }
                double bound = (1 + 1.0 / 4096) * msum / 127;
                for (size_t i = b0; i < b1; i++) {
                    double y = 0;
                    for (uint32_t s = 0; s < n; s++)
                        y += (double)value(k, s, i);
                    double err = fabs((double)out[i] - y);
                    if (err > bound)
                        bad++;
                    if (err / bound > worst)
                        worst = err / bound;
                }
            }
        }
        CHECK_INT(bad, 0);
        /* Quantization shows (not the dense sum) where blocks hold many. */
        CHECK(cnt < 1000 || worst > 0.05);
        /* Every rank the same bytes. */
        float *all = malloc(cnt * n * sizeof *all);
        CHECK_ERR(weft_allgather(c, out, all, cnt, WEFT_FLOAT, NULL), WEFT_OK);
        for (uint32_t s = 1; s < n; s++)
            CHECK(memcmp(all, all + s * cnt, cnt * sizeof *all) == 0);
        free(all);
        free(in);
        free(out);
    }
    weft_diag d = {0};
    float v[4] = {1, 2, 3, 4};
    CHECK_ERR(weft_allreduce_int8(c, v, v, me == 1 ? 3 : 4, 0, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "int8 allreduce: ranks disagree on the count: rank 0 has 4, rank 1 has 3");
    CHECK_ERR(weft_allreduce_int8(c, v, v, 4, me == 1 ? 2 : 0, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "int8 allreduce: ranks disagree on the block: rank 0 has 0, rank 1 has 2");
    CHECK_ERR(weft_allreduce_int8(c, me == 0 ? NULL : v, v, 4, 0, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "int8 allreduce: rank 0: 4 elements but no buffer");
    CHECK_ERR(weft_allreduce_int8(c, NULL, NULL, 0, 0, &d), WEFT_OK);
    CHECK(!weft_comm_failed(c));
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

static void run(uint32_t n, weft_transport_choice t, const char *what)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = t;
    cfg.timeout_ms = 20000;
    weft__test_comm_ranks_ok(n, &cfg, body, NULL, 120000, what);
}

int main(void)
{
    test_topk();
    test_int8();
    for (uint32_t n = 2; n <= 8; n++)
        run(n, WEFT_TRANSPORT_SHM, "shm");
    run(3, WEFT_TRANSPORT_TCP, "tcp");
    run(8, WEFT_TRANSPORT_TCP, "tcp");
    return weft_test_done();
}
