/* Embedding workloads (issue 27): the speed of replaying a lookup trace
 * (parsing "sample,table,row" text into the accumulator; target >= 10 M
 * lookups/s), of the accumulator alone, of the zipf generator and of the
 * cache model (100,000 rows a GPU, 4 steps of staleness); and the
 * time to build the forward matrix of 128 GPUs x 1,000 tables for each
 * sharding (1M-row tables of dim 128, fp32; 64 samples per GPU; 4 lookups
 * a sample and table, zipf 1.05; sparse row-wise draws its tables on
 * weft_threads_get() threads, set from WEFT_THREADS here as the weft
 * command does). Wall and CPU seconds, and peak memory: on a shared
 * machine the CPU time is the figure to read. Never fails on time.
 * Usage: bench_embedding [LOOKUPS_M [GPUS [TABLES]]] (defaults 20 128
 * 1000). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "weft/embedding.h"
#include "weft/threads.h"

static long peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

static int fail(const char *what, const weft_diag *d)
{
    fprintf(stderr, "bench_embedding: %s: %s\n", what, d->msg);
    return 1;
}

static weft_err to_acc(void *ctx, uint64_t s, uint32_t t, uint64_t r, weft_diag *d)
{
    return weft_emb_acc_add(ctx, s, t, r, d);
}

static weft_err to_cache(void *ctx, uint64_t s, uint32_t t, uint64_t r, weft_diag *d)
{
    return weft_emb_cache_add(ctx, s, t, r, d);
}

static weft_err count_only(void *ctx, uint64_t s, uint32_t t, uint64_t r, weft_diag *d)
{
    (*(uint64_t *)ctx) += r & 1;
    return WEFT_OK;
}

/* Trace replay: a trace of about `millions` M lookups over 26 row-wise
 * tables (Criteo's 26 sparse features) of 1M rows, 8 GPUs. */
static int replay(uint64_t millions)
{
    enum { NT = 26 };
    weft_emb_table tb[NT];
    for (int t = 0; t < NT; t++)
        tb[t] = (weft_emb_table){.rows = 1000000,
                                 .dim = 128,
                                 .pooling = 4,
                                 .dtype_bytes = 4,
                                 .zipf_milli = 1050,
                                 .sharding = WEFT_EMB_RW};
    uint64_t per_sample = NT * 4;
    uint64_t samples = millions * 1000000 / per_sample;
    weft_emb_workload w = {.gpus = 8, .batch = samples / 8, .ntables = NT, .tables = tb, .seed = 1};
    weft_diag d;
    weft_diag_clear(&d);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    double t0 = bench_now(), c0 = bench_cpu();
    if (!f || weft_emb_trace_write(f, &w, NULL, &d))
        return fail("trace write", &d);
    fclose(f);
    double t1 = bench_now(), c1 = bench_cpu();
    weft_emb_acc *a;
    if (weft_emb_acc_new(&w, &a, &d))
        return fail("acc", &d);
    double t2 = bench_now(), c2 = bench_cpu();
    if (weft_emb_trace_parse(text, len, "bench.trace", a, &d))
        return fail("parse", &d);
    double t3 = bench_now(), c3 = bench_cpu();
    weft_emb_result r;
    if (weft_emb_acc_finish(a, &r, &d))
        return fail("finish", &d);
    weft_emb_acc_free(a);
    uint64_t n = r.lookups;
    weft_emb_result_free(&r);
    /* The accumulator alone (the generator feeding it), and the generator. */
    if (weft_emb_acc_new(&w, &a, &d))
        return fail("acc", &d);
    double t4 = bench_now(), c4 = bench_cpu();
    if (weft_emb_generate(&w, to_acc, a, &d))
        return fail("generate", &d);
    double t5 = bench_now(), c5 = bench_cpu();
    weft_emb_acc_free(a);
    uint64_t sink = 0;
    if (weft_emb_generate(&w, count_only, &sink, &d))
        return fail("generate", &d);
    double t6 = bench_now(), c6 = bench_cpu();
    /* The cache model over the same lookups: 100,000 rows a GPU (2.6 GB of
     * 128-float rows, an H100's spare memory), fresh for 4 steps, 8 steps
     * of 1/8 of the batch each (the same lookups, cut in steps). */
    weft_emb_workload w8 = w;
    w8.batch = w.batch / 8;
    weft_emb_cache *cache;
    weft_emb_cache_params cp = {.rows_per_gpu = 100000, .staleness = 4};
    if (weft_emb_cache_new(&w8, &cp, &cache, &d))
        return fail("cache", &d);
    double c7 = bench_cpu();
    if (weft_emb_generate_steps(&w8, 8, to_cache, cache, &d))
        return fail("cache replay", &d);
    double c8 = bench_cpu();
    weft_emb_cache_stats cst;
    weft_emb_cache_stats_get(cache, &cst, NULL, &d);
    weft_emb_cache_free(cache);
    printf("cache model: %llu lookups in %llu steps, %llu remote, %llu hits (%.1f %% of the "
           "remote bytes avoided): generate+cache %.3f s cpu, the cache alone about %.1f M "
           "lookups/s\n",
           (unsigned long long)cst.lookups, (unsigned long long)cst.steps,
           (unsigned long long)cst.remote, (unsigned long long)cst.hits,
           100.0 * (1.0 - (double)cst.bytes_cached / (double)cst.bytes_uncached), c8 - c7,
           cst.lookups / ((c8 - c7) - (c6 - c5)) / 1e6);
    printf("trace replay: %llu lookups (%.1f MB of text, 26 row-wise zipf:1.05 tables of 1M "
           "rows, 8 GPUs): parse+accumulate %.3f s wall, %.3f s cpu = %.1f M lookups/s (cpu); "
           "generate+write %.3f s cpu; generate+accumulate %.3f s cpu; generate alone %.3f s "
           "cpu (%.1f M lookups/s); peak %ld MiB\n",
           (unsigned long long)n, len / 1e6, t3 - t2, c3 - c2, n / (c3 - c2) / 1e6, c1 - c0,
           c5 - c4, c6 - c5, n / (c6 - c5) / 1e6, peak_mib());
    (void)t0, (void)t1, (void)t4, (void)t5, (void)t6;
    free(text);
    return sink == (uint64_t)-1; /* keeps the sink alive */
}

/* The forward matrix of gpus x tables for one sharding. */
static int build(uint32_t gpus, uint32_t ntables, weft_emb_sharding s, bool dense)
{
    weft_emb_table *tb = calloc(ntables, sizeof *tb);
    if (!tb)
        return 1;
    for (uint32_t t = 0; t < ntables; t++)
        tb[t] = (weft_emb_table){.rows = 1000000,
                                 .dim = 128,
                                 .pooling = 4,
                                 .dtype_bytes = 4,
                                 .zipf_milli = 1050,
                                 .sharding = s,
                                 .col_shards = 4};
    weft_emb_workload w = {
        .gpus = gpus, .batch = 64, .ntables = ntables, .tables = tb, .seed = 1, .rw_dense = dense};
    weft_diag d;
    weft_diag_clear(&d);
    weft_emb_result r;
    double t0 = bench_now(), c0 = bench_cpu();
    if (weft_emb_forward(&w, &r, &d))
        return fail("forward", &d);
    double t1 = bench_now(), c1 = bench_cpu();
    weft_traffic_stats st;
    weft_traffic_get_stats(&r.forward, &st);
    printf("forward matrix %u GPUs x %u tables, %s%s: %.3f s wall, %.3f s cpu; %llu lookups; "
           "total %.4g bytes, recv skew %.3f; all-reduce %.4g bytes; peak %ld MiB\n",
           gpus, ntables, weft_emb_sharding_name(s),
           s == WEFT_EMB_CW ? ":4"
           : dense          ? " dense"
                            : "",
           t1 - t0, c1 - c0, (unsigned long long)r.lookups, (double)st.total, st.recv_skew,
           (double)r.allreduce_bytes, peak_mib());
    weft_emb_result_free(&r);
    free(tb);
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t millions = argc > 1 ? strtoull(argv[1], NULL, 10) : 20;
    uint32_t gpus = argc > 2 ? (uint32_t)atoi(argv[2]) : 128;
    uint32_t tables = argc > 3 ? (uint32_t)atoi(argv[3]) : 1000;
    const char *th = getenv("WEFT_THREADS");
    if (th && weft_threads_set((unsigned)strtoul(th, NULL, 10))) {
        fprintf(stderr, "bench_embedding: WEFT_THREADS '%s': 1 to %d\n", th, WEFT_THREADS_MAX);
        return 2;
    }
    printf("%u threads (WEFT_THREADS, as the weft command reads it)\n", weft_threads_get());
    int rc = replay(millions);
    rc |= build(gpus, tables, WEFT_EMB_TW, false);
    rc |= build(gpus, tables, WEFT_EMB_CW, false);
    rc |= build(gpus, tables, WEFT_EMB_DP, false);
    rc |= build(gpus, tables, WEFT_EMB_RW, true);
    rc |= build(gpus, tables, WEFT_EMB_RW, false);
    return rc;
}
