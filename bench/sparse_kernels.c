/* The local compute of the runtime's sparse all-reduce on this CPU: the
 * per-byte rates weft sim charges the compute ops of sparse-hash and
 * sparse-range plans (docs/compression.md, "Compute in the plans";
 * weft_compute_rates_get in weft/compress.h).
 *
 *   bench_sparse_kernels [--quick] [ELEMS [RANKS [DENSITY]]]
 *
 * Defaults: 4,194,304 elements (16 MiB of float), 4 ranks, density 0.01.
 * One rank's share of weft_allreduce_sparse (src/run/coll_sparse.c) with
 * uint32 indices and float values (8 bytes a pair), each kernel the
 * runtime's loop (the same steps, its allocations included), timed in this
 * thread's CPU time, best of 5 (2 with --quick):
 *
 *   hash       steps 1-2: check the k indices, hash each
 *              (weft_sparse_hash_perm), its owner and position, count per
 *              owner, pack the pairs per owner;     per byte of the k pairs
 *   aggregate  step 4 as messages arrive: the owner's sums of RANKS
 *              messages of k / RANKS positions each (uniform in its part,
 *              as the hash spreads any support), laid out as they arrive
 *              ([positions][values]), into a dense accumulator with a
 *              bitmap (weft__sparse_sum_into, the runtime's own loop), or,
 *              for a part over 8 x the pairs, appended for a sort (the
 *              runtime's rule);                 per byte of pairs received
 *   compress   the rest of step 4: the union (popcount of the bitmap, or
 *              the radix sort and merge), each position's index
 *              (weft_sparse_hash_unperm) packed with its sum;
 *                                                    per byte of the union
 *   fill       step 5's zeroing of the dense output (n floats, already
 *              touched: a caller's buffer);          per byte of the output
 *   decompress step 5: scatter RANKS unions into the output
 *              (weft__sparse_scatter, the runtime's loop): owner j's is
 *              the union's positions inside part j, each at its global
 *              index (weft_sparse_hash_unperm), so the unions are disjoint
 *              and cover the output as the runtime's do;
 *                                                    per byte of pairs
 *
 * and, for the quantized plans' aggregate (src/run/coll_quant.c step 2),
 *   sum        acc[i] = acc[i] + x[i] in double over n / RANKS floats;
 *                                                per byte of fp32 input
 *
 * It prints each as GB/s and as seconds per byte, the figures
 * weft_compute_rates_get holds for "cpu". Inputs are a fixed pseudo-random
 * sequence. A benchmark: it never fails on time. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run/coll_sparse.h"
#include "weft/compress.h"

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile double sink;
static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* m distinct values below n, in random order (m <= n / 2). */
static void distinct(uint8_t *seen, uint64_t n, size_t m, uint32_t *out)
{
    memset(seen, 0, n);
    for (size_t i = 0; i < m;) {
        uint64_t x = next() % n;
        if (!seen[x]) {
            seen[x] = 1;
            out[i++] = (uint32_t)x;
        }
    }
}

/* Steps 1-2 of coll_sparse.c for k pairs. */
static void k_hash(const weft_sparse_hash *h, uint32_t N, const uint32_t *idx, const float *val,
                   size_t k, uint64_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < k; i++)
        bad += idx[i] >= n;
    uint64_t *pos = malloc(k * sizeof *pos);
    uint32_t *own = malloc(k * sizeof *own);
    size_t *cnt = calloc(N, sizeof *cnt), *soff = malloc(N * sizeof *soff),
           *fill = calloc(N, sizeof *fill);
    for (size_t i = 0; i < k; i++) {
        uint64_t p = weft_sparse_hash_perm(h, idx[i]);
        uint32_t o = weft_sparse_hash_owner_of_image(h, p);
        own[i] = o;
        pos[i] = p - weft_sparse_hash_start(h, o);
        cnt[o]++;
    }
    size_t off = 0;
    for (uint32_t j = 0; j < N; j++) {
        soff[j] = off;
        off += (cnt[j] * 8 + 7) & ~(size_t)7;
    }
    unsigned char *sbuf = malloc(off ? off : 1);
    for (size_t i = 0; i < k; i++) {
        uint32_t o = own[i];
        unsigned char *msg = sbuf + soff[o];
        size_t at = fill[o]++;
        uint32_t y = (uint32_t)pos[i];
        memcpy(msg + at * 4, &y, 4);
        memcpy(msg + cnt[o] * 4 + at * 4, &val[i], 4);
    }
    sink += (double)sbuf[0] + (double)bad;
    free(sbuf), free(fill), free(soff), free(cnt), free(own), free(pos);
}

typedef struct owner {
    bool by_array;
    float *acc;
    uint64_t *seen;
    weft__sparse_rec *recs, *tmp;
    size_t k;
} owner;

/* Step 4's owner_add over N messages of m pairs each (msgs + j * 8 m:
 * m uint32 positions, then m floats, as they arrive). */
static void k_aggregate(owner *o, uint64_t part, uint32_t N, const unsigned char *msgs, size_t m)
{
    size_t got = (size_t)N * m;
    memset(o, 0, sizeof *o);
    o->by_array = part <= (uint64_t)8 * got + 4096;
    if (o->by_array) {
        o->acc = malloc(part * sizeof *o->acc);
        o->seen = calloc(part / 64 + 1, sizeof *o->seen);
    } else {
        o->recs = malloc(got * sizeof *o->recs);
        o->tmp = malloc(got * sizeof *o->tmp);
    }
    for (uint32_t j = 0; j < N; j++) {
        const unsigned char *msg = msgs + (size_t)j * 8 * m;
        if (o->by_array) {
            weft__sparse_sum_into(o->acc, o->seen, msg, m, 4);
            continue;
        }
        for (size_t i = 0; i < m; i++) {
            uint32_t p;
            float x;
            memcpy(&p, msg + i * 4, 4);
            memcpy(&x, msg + (m + i) * 4, 4);
            o->recs[o->k++] = (weft__sparse_rec){p, x, 0};
        }
    }
}

/* The rest of step 4: the union packed with global indices. Returns its
 * size; its positions (in the part) in upos, when upos is not NULL. */
static size_t k_union(owner *o, const weft_sparse_hash *h, uint64_t part, uint64_t base,
                      uint32_t *upos)
{
    size_t u = 0;
    weft__sparse_rec *sorted = NULL;
    if (o->by_array) {
        for (uint64_t w = 0; w <= part / 64; w++)
            u += (size_t)__builtin_popcountll(o->seen[w]);
    } else {
        unsigned bits = 0;
        for (uint64_t x = part - 1; x; x >>= 1)
            bits++;
        sorted = weft__sparse_sort(o->recs, o->tmp, o->k, bits, false, 1);
        for (size_t i = 0; i < o->k; i++) {
            if (u && sorted[u - 1].idx == sorted[i].idx)
                sorted[u - 1].v += sorted[i].v;
            else
                sorted[u++] = sorted[i];
        }
    }
    unsigned char *sbuf = malloc(u ? u * 8 : 1);
    float *uv = (float *)(void *)(sbuf + u * 4);
    size_t q = 0;
    if (o->by_array) {
        for (uint64_t w = 0; w <= part / 64; w++)
            for (uint64_t b = o->seen[w]; b; b &= b - 1) {
                uint64_t p = w * 64 + (uint64_t)__builtin_ctzll(b);
                if (upos)
                    upos[q] = (uint32_t)p;
                uint32_t y = (uint32_t)weft_sparse_hash_unperm(h, base + p);
                memcpy(sbuf + q * 4, &y, 4);
                memcpy(&uv[q++], &o->acc[p], 4);
            }
    } else {
        for (size_t i = 0; i < u; i++) {
            if (upos)
                upos[i] = (uint32_t)sorted[i].idx;
            uint32_t y = (uint32_t)weft_sparse_hash_unperm(h, base + sorted[i].idx);
            memcpy(sbuf + i * 4, &y, 4);
            memcpy(&uv[i], &sorted[i].v, 4);
        }
    }
    sink += u ? (double)sbuf[0] : 0;
    free(sbuf), free(o->acc), free(o->seen), free(o->recs), free(o->tmp);
    return u;
}

int main(int argc, char **argv)
{
    int trials = 5, a = 1;
    if (a < argc && strcmp(argv[a], "--quick") == 0)
        trials = 2, a++;
    uint64_t n = a < argc ? strtoull(argv[a++], NULL, 10) : UINT64_C(4194304);
    uint32_t N = a < argc ? (uint32_t)atoi(argv[a++]) : 4;
    double D = a < argc ? atof(argv[a++]) : 0.01;
    if (a < argc || n < 1024 || n > (UINT64_C(1) << 31) || N < 2 || N > 64 ||
        !(D > 0 && D <= 0.25)) {
        fprintf(stderr, "usage: bench_sparse_kernels [--quick] [ELEMS (1024 .. 2^31) [RANKS (2 .. "
                        "64) [DENSITY (0 .. 0.25]]]]\n");
        return 2;
    }
    size_t k = (size_t)ceil((double)n * D), m = k / N;
    weft_sparse_hash h;
    weft_sparse_hash_init(&h, n, N, NULL);
    uint64_t part = h.q + (0 < h.r);
    uint8_t *seen = malloc(n);
    uint32_t *idx = malloc(k * sizeof *idx), *pos = malloc((m + 1) * sizeof *pos),
             *upos = malloc((size_t)N * m * sizeof *upos);
    unsigned char *msgs = malloc((size_t)N * 8 * m), *unions = malloc((size_t)N * N * 8 * m);
    float *val = malloc(k * sizeof *val), *dense = malloc(n * sizeof *dense);
    double *acc = malloc((n / N) * sizeof *acc);
    size_t *ucount = malloc(N * sizeof *ucount);
    if (!seen || !idx || !pos || !upos || !msgs || !unions || !val || !dense || !acc || !ucount) {
        fprintf(stderr, "bench_sparse_kernels: out of memory\n");
        return 1;
    }
    distinct(seen, n, k, idx);
    for (size_t i = 0; i < k; i++)
        val[i] = (float)(next() % 1000) * 1e-3f + 1;
    /* Rank j's message to owner 0: m positions, then m values. */
    for (uint32_t j = 0; j < N; j++) {
        unsigned char *msg = msgs + (size_t)j * 8 * m;
        distinct(seen, part, m, pos);
        memcpy(msg, pos, m * 4);
        memcpy(msg + m * 4, val, m * 4);
    }
    memset(dense, 0, n * sizeof *dense);
    memset(acc, 0, (n / N) * sizeof *acc);
    owner o;
    /* Owner 0's union positions; every owner j's union the same positions
     * of part j (those inside it): N unions, disjoint as the runtime's,
     * each [u_j global indices][u_j sums], what step 5 receives. */
    k_aggregate(&o, part, N, msgs, m);
    size_t u = k_union(&o, &h, part, 0, upos), scattered = 0;
    for (uint32_t j = 0; j < N; j++) {
        uint64_t start = weft_sparse_hash_start(&h, j), pj = h.q + (j < h.r);
        size_t uj = 0;
        for (size_t i = 0; i < u; i++)
            uj += upos[i] < pj;
        unsigned char *msg = unions + 8 * scattered;
        for (size_t i = 0, q = 0; i < u; i++) {
            if (upos[i] >= pj)
                continue;
            uint32_t y = (uint32_t)weft_sparse_hash_unperm(&h, start + upos[i]);
            memcpy(msg + q * 4, &y, 4);
            memcpy(msg + (uj + q++) * 4, &val[i % k], 4);
        }
        ucount[j] = uj;
        scattered += uj;
    }
    double best[6];
    for (int kk = 0; kk < 6; kk++)
        best[kk] = 1e30;
    for (int t = 0; t < trials; t++) {
        double t0 = thread_cpu();
        k_hash(&h, N, idx, val, k, n);
        double t1 = thread_cpu();
        k_aggregate(&o, part, N, msgs, m);
        double t2 = thread_cpu();
        u = k_union(&o, &h, part, 0, NULL);
        double t3 = thread_cpu();
        memset(dense, 0, n * sizeof *dense);
        double t4 = thread_cpu();
        for (uint32_t j = 0, at = 0; j < N; at += (uint32_t)ucount[j++])
            weft__sparse_scatter(dense, unions + 8 * (size_t)at, ucount[j], 4);
        double t5 = thread_cpu();
        const float *x = dense;
        for (size_t i = 0; i < n / N; i++)
            acc[i] = acc[i] + (double)x[i];
        double t6 = thread_cpu();
        double dt[6] = {t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5};
        for (int kk = 0; kk < 6; kk++)
            best[kk] = dt[kk] < best[kk] ? dt[kk] : best[kk];
        sink += dense[n - 1] + acc[0];
    }
    double bytes[6] = {8.0 * (double)k, 8.0 * (double)N * (double)m, 8.0 * (double)u,
                       4.0 * (double)n, 8.0 * (double)scattered,     4.0 * (double)(n / N)};
    const char *names[6] = {"hash", "aggregate", "compress", "fill", "decompress", "sum"};
    printf("# one rank of %u: n = %llu floats, density %g: k = %zu pairs, %zu a part from each "
           "rank, union %zu (%s); best of %d, thread CPU time\n",
           N, (unsigned long long)n, D, k, m, u,
           part <= 8 * (uint64_t)N * m + 4096 ? "bitmap" : "sort", trials);
    printf("# %-10s %12s %10s %12s\n", "kernel", "bytes", "GB/s", "s/byte");
    for (int kk = 0; kk < 6; kk++)
        printf("  %-10s %12.0f %10.3f %12.4e\n", names[kk], bytes[kk], bytes[kk] / best[kk] / 1e9,
               best[kk] / bytes[kk]);
    free(seen), free(idx), free(pos), free(upos), free(msgs), free(unions), free(val), free(dense),
        free(acc), free(ucount);
    return 0;
}
