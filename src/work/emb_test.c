/* Embedding workloads (weft/embedding.h): matrices hand-computed for every
 * sharding, the trace reader's errors, the generator against a brute-force
 * replay of its contract, and allocation failures. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/intmath.h"
#include "base/rand.h"
#include "base/testing.h"
#include "weft/embedding.h"
#include "weft/threads.h"
#include "work/emb_internal.h"

/* Checks m row by row against want (n*n entries). */
static void check_matrix(const weft_traffic *m, uint32_t n, const uint64_t *want, int line)
{
    CHECK_INT(m->ranks, n);
    if (m->ranks != n)
        return;
    for (size_t i = 0; i < (size_t)n * n; i++)
        if (m->bytes[i] != want[i]) {
            fprintf(stderr, "line %d: entry (%zu, %zu) is %llu, expected %llu\n", line, i / n,
                    i % n, (unsigned long long)m->bytes[i], (unsigned long long)want[i]);
            CHECK(0);
            return;
        }
    CHECK(1);
}

/* The matrix of w with the lookups of `trace` (NULL: the generator's). */
static weft_err build(const weft_emb_workload *w, const char *trace, weft_emb_result *out,
                      weft_diag *d)
{
    if (!trace)
        return weft_emb_forward(w, out, d);
    weft_emb_acc *a;
    weft_err e = weft_emb_acc_new(w, &a, d);
    if (e)
        return e;
    e = weft_emb_trace_parse(trace, strlen(trace), "t.trace", a, d);
    if (!e)
        e = weft_emb_acc_finish(a, out, d);
    weft_emb_acc_free(a);
    return e;
}

/* Table-wise: table 0 (dim 4, fp32: 16 bytes a vector) on GPU 0, table 1
 * (dim 2, fp16: 4 bytes) on GPU 1; 3 samples a GPU. GPU 0 sends 3*16 to
 * each GPU, GPU 1 3*4. */
static void test_table_wise(void)
{
    weft_emb_table tb[2] = {{.rows = 100, .dim = 4, .pooling = 2, .dtype_bytes = 4},
                            {.rows = 7, .dim = 2, .pooling = 1, .dtype_bytes = 2}};
    weft_emb_workload w = {.gpus = 2, .batch = 3, .ntables = 2, .tables = tb};
    weft_emb_result r;
    weft_diag d;
    CHECK_ERR(weft_emb_forward(&w, &r, &d), WEFT_OK);
    const uint64_t want[] = {48, 48, 12, 12};
    check_matrix(&r.forward, 2, want, __LINE__);
    CHECK_INT(r.lookups, 2 * 3 * 3); /* 6 samples x (2 + 1) */
    CHECK_INT(r.allreduce_bytes, 0);
    weft_traffic back;
    CHECK_ERR(weft_traffic_transpose(&r.forward, &back, &d), WEFT_OK);
    const uint64_t want_back[] = {48, 12, 48, 12};
    check_matrix(&back, 2, want_back, __LINE__);
    weft_traffic_free(&back);
    weft_emb_result_free(&r);
    /* A trace changes nothing for table-wise tables (a bag with no
     * lookup still sends its zero vector). */
    CHECK_ERR(build(&w, "0,0,5\n", &r, &d), WEFT_OK);
    check_matrix(&r.forward, 2, want, __LINE__);
    CHECK_INT(r.lookups, 1);
    weft_emb_result_free(&r);
}

/* Column-wise on 3 GPUs, 2 samples a GPU. Table 0: dim 5, fp32, 2 shards
 * of 3 and 2 columns in slots 0, 1 (GPUs 0, 1): 2*3*4 = 24 and 2*2*4 = 16.
 * Table 1: table-wise, dim 1, 8 bytes, slot 2 (GPU 2): 2*8 = 16. Table 2:
 * dim 4, fp16, 3 shards of 2, 1, 1 columns in slots 3, 4, 5 (GPUs 0, 1,
 * 2): 8, 4, 4. Rows: GPU 0 32, GPU 1 20, GPU 2 20 to every GPU. */
static void test_column_wise(void)
{
    weft_emb_table tb[3] = {
        {.rows = 10,
         .dim = 5,
         .pooling = 1,
         .dtype_bytes = 4,
         .sharding = WEFT_EMB_CW,
         .col_shards = 2},
        {.rows = 10, .dim = 1, .pooling = 1, .dtype_bytes = 8, .sharding = WEFT_EMB_TW},
        {.rows = 10,
         .dim = 4,
         .pooling = 3,
         .dtype_bytes = 2,
         .sharding = WEFT_EMB_CW,
         .col_shards = 3},
    };
    weft_emb_workload w = {.gpus = 3, .batch = 2, .ntables = 3, .tables = tb};
    weft_emb_result r;
    weft_diag d;
    CHECK_ERR(weft_emb_forward(&w, &r, &d), WEFT_OK);
    const uint64_t want[] = {32, 32, 32, 20, 20, 20, 20, 20, 20};
    check_matrix(&r.forward, 3, want, __LINE__);
    CHECK_INT(r.lookups, 6 * 5);
    weft_emb_result_free(&r);
}

/* Row-wise on 2 GPUs, 2 samples a GPU (samples 0, 1 on GPU 0; 2, 3 on
 * GPU 1). Table 0: 5 rows, blocks of 3 (rows 0-2 on GPU 0, 3-4 on GPU 1),
 * dim 2 fp32 (8 bytes). Table 1: 4 rows, blocks of 2, dim 1 fp16 (2).
 *   sample 0: t0 rows 0, 1 -> block 0: (0,0) += 8; t1 row 3 -> (1,0) += 2
 *   sample 1: t0 rows 2, 3 -> blocks 0, 1: (0,0) += 8, (1,0) += 8
 *   sample 2: t0 rows 4, 4 -> block 1: (1,1) += 8;
 *             t1 rows 0..3 -> blocks 0, 1: (0,1) += 2, (1,1) += 2
 *   sample 3: nothing.
 * Dense: every GPU sends 2*8 + 2*2 = 20 to every GPU. */
static const char rw_trace[] = "# sample,table,row\n"
                               "0,0,0\n0,0,1\n0,1,3\n"
                               "1,0,2\n1,0,3\n"
                               "\n"
                               "2,0,4\n2,0,4   # the same row twice\n"
                               "2,1,0\n 2 , 1 , 1\n2,1,2\r\n2,1,3";

static void test_row_wise(void)
{
    weft_emb_table tb[2] = {
        {.rows = 5, .dim = 2, .pooling = 2, .dtype_bytes = 4, .sharding = WEFT_EMB_RW},
        {.rows = 4, .dim = 1, .pooling = 2, .dtype_bytes = 2, .sharding = WEFT_EMB_RW},
    };
    weft_emb_workload w = {.gpus = 2, .batch = 2, .ntables = 2, .tables = tb};
    weft_emb_result r;
    weft_diag d;
    CHECK_ERR(build(&w, rw_trace, &r, &d), WEFT_OK);
    const uint64_t want[] = {16, 2, 10, 10};
    check_matrix(&r.forward, 2, want, __LINE__);
    CHECK_INT(r.lookups, 11);
    weft_emb_result_free(&r);
    w.rw_dense = true;
    CHECK_ERR(build(&w, rw_trace, &r, &d), WEFT_OK);
    const uint64_t dense[] = {20, 20, 20, 20};
    check_matrix(&r.forward, 2, dense, __LINE__);
    weft_emb_result_free(&r);
    /* Fewer rows than GPUs: 2 rows on 4 GPUs, blocks of 1; GPUs 2 and 3
     * hold nothing and send nothing. */
    weft_emb_table small = {
        .rows = 2, .dim = 1, .pooling = 1, .dtype_bytes = 1, .sharding = WEFT_EMB_RW};
    weft_emb_workload w4 = {.gpus = 4, .batch = 1, .ntables = 1, .tables = &small};
    CHECK_ERR(build(&w4, "0,0,1\n1,0,0\n1,0,1\n3,0,1\n", &r, &d), WEFT_OK);
    const uint64_t want4[] = {0, 1, 0, 0, /* */ 1, 1, 0, 1, /* */ 0, 0, 0, 0, 0, 0, 0, 0};
    check_matrix(&r.forward, 4, want4, __LINE__);
    weft_emb_result_free(&r);
}

/* Data-parallel: no all-to-all; the gradient all-reduce is R*D*E. Mixed
 * with a table-wise table (slot 0, GPU 0) and a row-wise one. */
static void test_data_parallel_and_mixed(void)
{
    weft_emb_table tb[3] = {
        {.rows = 10, .dim = 3, .pooling = 1, .dtype_bytes = 4, .sharding = WEFT_EMB_DP},
        {.rows = 4, .dim = 1, .pooling = 1, .dtype_bytes = 1, .sharding = WEFT_EMB_TW},
        {.rows = 4, .dim = 2, .pooling = 1, .dtype_bytes = 1, .sharding = WEFT_EMB_RW},
    };
    weft_emb_workload w = {.gpus = 2, .batch = 1, .ntables = 1, .tables = tb};
    weft_emb_result r;
    weft_diag d;
    CHECK_ERR(weft_emb_forward(&w, &r, &d), WEFT_OK);
    const uint64_t zero[] = {0, 0, 0, 0};
    check_matrix(&r.forward, 2, zero, __LINE__);
    CHECK_INT(r.allreduce_bytes, 120);
    weft_emb_result_free(&r);
    /* Table-wise: 1 byte from GPU 0 to each; row-wise (blocks of 2):
     * sample 0 rows 1, 2 -> (0,0), (1,0) += 2; sample 1 row 0 -> (0,1). */
    w.ntables = 3;
    CHECK_ERR(build(&w, "0,2,1\n0,2,2\n0,0,9\n1,2,0\n", &r, &d), WEFT_OK);
    const uint64_t want[] = {3, 3, 2, 0};
    check_matrix(&r.forward, 2, want, __LINE__);
    CHECK_INT(r.allreduce_bytes, 120);
    CHECK_INT(r.lookups, 4);
    weft_emb_result_free(&r);
}

/* Every message of the trace reader, exactly. */
static void test_trace_errors(void)
{
    weft_emb_table tb[2] = {
        {.rows = 5, .dim = 2, .pooling = 1, .dtype_bytes = 4, .sharding = WEFT_EMB_RW},
        {.rows = 4, .dim = 1, .pooling = 1, .dtype_bytes = 2, .sharding = WEFT_EMB_TW},
    };
    weft_emb_workload w = {.gpus = 2, .batch = 2, .ntables = 2, .tables = tb};
    static const struct {
        const char *text, *msg;
        weft_err err;
    } cases[] = {
        {"0,0\n", "t.trace:1:4: 2 fields: a lookup is sample,table,row (the row is missing)",
         WEFT_EPARSE},
        {"0\n", "t.trace:1:2: 1 field: a lookup is sample,table,row (the table is missing)",
         WEFT_EPARSE},
        {"0,0,\n", "t.trace:1:5: 2 fields: a lookup is sample,table,row (the row is missing)",
         WEFT_EPARSE},
        {"0,0,1\n1 ;0,1\n", "t.trace:2:3: expected ',' after the sample, found ';'", WEFT_EPARSE},
        {"1;0,1\n", "t.trace:1:1: '1;0' is not a sample number (a whole number from 0)",
         WEFT_EPARSE},
        {"0,x,1\n", "t.trace:1:3: 'x' is not a table number (a whole number from 0)", WEFT_EPARSE},
        {"-1,0,1\n", "t.trace:1:1: '-1' is not a sample number (a whole number from 0)",
         WEFT_EPARSE},
        {"0,0,1.5\n", "t.trace:1:5: '1.5' is not a row number (a whole number from 0)",
         WEFT_EPARSE},
        {"0,0,1 2\n", "t.trace:1:7: unexpected '2' after the row: a lookup is sample,table,row",
         WEFT_EPARSE},
        {"0,0,99999999999999999999\n",
         "t.trace:1:5: row '99999999999999999999' is more than 2^64-1", WEFT_EPARSE},
        {"# c\n4,0,0\n",
         "t.trace:2:1: sample 4 is beyond the batch: 4 samples (2 GPUs x 2), 0 to 3", WEFT_EINVAL},
        {"2,0,0\n1,0,0\n", "t.trace:2:1: sample 1 after sample 2: lookups come in order of samples",
         WEFT_EINVAL},
        {"0, 2,0\n", "t.trace:1:4: table 2: the workload has 2 tables, 0 to 1", WEFT_EINVAL},
        {"0,5000000000,0\n", "t.trace:1:3: table 5000000000: the workload has 2 tables, 0 to 1",
         WEFT_EINVAL},
        {"0,1,4\n", "t.trace:1:5: row 4 of table 1: it has 4 rows, 0 to 3", WEFT_EINVAL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        weft_emb_acc *a;
        weft_diag d;
        if (weft_emb_acc_new(&w, &a, &d) != WEFT_OK) {
            CHECK(0);
            return;
        }
        weft_diag_clear(&d);
        CHECK_ERR(weft_emb_trace_parse(cases[i].text, strlen(cases[i].text), "t.trace", a, &d),
                  cases[i].err);
        CHECK_STR(d.msg, cases[i].msg);
        weft_emb_acc_free(a);
    }
}

/* The workload's checks. */
static void test_check(void)
{
    weft_emb_table tb = {.rows = 5, .dim = 2, .pooling = 1, .dtype_bytes = 4};
    weft_emb_workload w = {.gpus = 2, .batch = 2, .ntables = 1, .tables = &tb};
    weft_diag d;
    CHECK_ERR(weft_emb_check(&w, &d), WEFT_OK);
    tb.dim = 0;
    CHECK_ERR(weft_emb_check(&w, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "table 0: dim 0: must be 1 to 65536");
    tb.dim = 2;
    tb.sharding = WEFT_EMB_CW;
    tb.col_shards = 3;
    CHECK_ERR(weft_emb_check(&w, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "table 0: 3 column shards of 2 columns: must be 1 to 2");
    tb.sharding = WEFT_EMB_TW;
    tb.rows = WEFT_EMB_MAX_ZIPF_ROWS + 1;
    tb.zipf_milli = 1000;
    CHECK_ERR(weft_emb_check(&w, &d), WEFT_ELIMIT);
    CHECK_STR(d.msg, "table 0: a zipf law over 134217729 rows: the generator's limit is "
                     "134217728 rows (8 bytes a row; give a trace instead)");
    tb.zipf_milli = 0;
    tb.rows = 5;
    tb.dtype_bytes = 9;
    CHECK_ERR(weft_emb_check(&w, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "table 0: dtype of 9 bytes: must be 1 to 8");
    tb.dtype_bytes = 8;
    tb.dim = 65536;
    w.gpus = 16384;
    w.batch = 1ull << 40;
    tb.sharding = WEFT_EMB_RW;
    CHECK_ERR(weft_emb_check(&w, &d), WEFT_EOVERFLOW);
    CHECK_STR(d.msg, "table 0: the workload could move more than 2^64-1 bytes");
}

/* ---- the generator against a brute-force replay of its contract ------- */

typedef struct recorded {
    uint64_t *s, *r;
    uint32_t *t;
    size_t n, cap;
} recorded;

static weft_err record(void *ctx, uint64_t s, uint32_t t, uint64_t r, weft_diag *d)
{
    recorded *rec = ctx;
    if (rec->n == rec->cap)
        return weft_diag_set(d, WEFT_ELIMIT, "more lookups than expected");
    rec->s[rec->n] = s;
    rec->t[rec->n] = t;
    rec->r[rec->n] = r;
    rec->n++;
    return WEFT_OK;
}

/* Table t's k-th draw by the contract: stream t; uniform, or the first
 * rank (linear scan) whose weight sum passes u, mapped to its row. */
static uint64_t brute_draw(const weft_emb_table *tb, weft__rng *g)
{
    if (!tb->zipf_milli)
        return weft__rng_below(g, tb->rows);
    weft__zipf z;
    weft__zipf_init(&z, tb->zipf_milli);
    uint64_t total = 0;
    for (uint64_t k = 1; k <= tb->rows; k++)
        total += weft__zipf_weight(&z, k);
    uint64_t u = weft__rng_below(g, total), k = 0, sum = 0;
    for (;; k++) {
        sum += weft__zipf_weight(&z, k + 1);
        if (sum > u)
            break;
    }
    uint64_t a = (uint64_t)((double)tb->rows * 0.6180339887498949);
    if (a == 0)
        a = 1;
    while (weft__gcd64(a, tb->rows) != 1)
        a++;
    return k * a % tb->rows;
}

static void test_generator(void)
{
    weft_emb_table tb[3] = {
        {.rows = 1000,
         .dim = 4,
         .pooling = 3,
         .dtype_bytes = 4,
         .zipf_milli = 1200,
         .sharding = WEFT_EMB_RW},
        {.rows = 37, .dim = 8, .pooling = 1, .dtype_bytes = 2, .sharding = WEFT_EMB_RW},
        {.rows = 1000,
         .dim = 2,
         .pooling = 2,
         .dtype_bytes = 4,
         .zipf_milli = 1200,
         .sharding = WEFT_EMB_TW},
    };
    weft_emb_workload w = {.gpus = 3, .batch = 4, .ntables = 3, .tables = tb, .seed = 11};
    size_t want_n = 12 * 6;
    recorded rec = {
        .s = malloc(want_n * 8), .r = malloc(want_n * 8), .t = malloc(want_n * 4), .cap = want_n};
    weft_diag d;
    CHECK_ERR(weft_emb_generate(&w, record, &rec, &d), WEFT_OK);
    CHECK_INT(rec.n, want_n);
    weft__rng g[3];
    for (uint32_t t = 0; t < 3; t++)
        weft__rng_seed(&g[t], 11, t);
    size_t i = 0, bad = 0, row0 = 0;
    for (uint64_t s = 0; s < 12; s++)
        for (uint32_t t = 0; t < 3; t++)
            for (uint32_t p = 0; p < tb[t].pooling; p++, i++) {
                uint64_t r = brute_draw(&tb[t], &g[t]);
                bad += i >= rec.n || rec.s[i] != s || rec.t[i] != t || rec.r[i] != r;
                row0 += t == 0 && r == 0;
            }
    CHECK_INT(bad, 0);
    /* Row 0 is the hottest (rank 1): 2^40 / H(1000, 1.2) is about 27 % of
     * the 36 draws of table 0. */
    CHECK(row0 >= 4);

    /* The trace of the generator gives the generator's matrix. */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK_ERR(weft_emb_trace_write(f, &w, "a test\nof two lines", &d), WEFT_OK);
    fclose(f);
    CHECK(strncmp(text, "# a test\n# of two lines\n# sample,table,row\n0,0,", 46) == 0);
    weft_emb_result r1, r2;
    CHECK_ERR(weft_emb_forward(&w, &r1, &d), WEFT_OK);
    CHECK_ERR(build(&w, text, &r2, &d), WEFT_OK);
    CHECK(memcmp(r1.forward.bytes, r2.forward.bytes, 9 * 8) == 0);
    CHECK_INT(r1.lookups, want_n);
    CHECK_INT(r2.lookups, want_n);
    /* Row-wise entries: each a multiple of the vector bytes, and each
     * column (the bags of one GPU's 4 samples) at most 4 bags x 2 tables
     * x 3 blocks; the table-wise table (slot 0) adds 4*8 = 32 to row 0. */
    uint64_t tw = 4 * 8;
    for (uint32_t j = 0; j < 3; j++) {
        uint64_t col = 0;
        for (uint32_t o = 0; o < 3; o++)
            col += weft_traffic_at(&r1.forward, o, j) - (o == 0 ? tw : 0);
        CHECK(col >= 4 * (16 + 16) && col <= 4 * 3 * (16 + 16));
    }
    weft_emb_result_free(&r1);
    weft_emb_result_free(&r2);
    free(text);
    free(rec.s);
    free(rec.r);
    free(rec.t);
}

/* ---- the cache against a brute-force replay ---------------------------- */

typedef struct brute_entry {
    uint32_t t;
    uint64_t r, fetched, used;
} brute_entry;

typedef struct brute {
    const weft_emb_workload *w;
    uint64_t cap, stale_steps, clock, slot[8];
    brute_entry *e[4];
    uint64_t n[4];
    weft_emb_cache_stats st;
    uint64_t m[16]; /* fetched bytes, owner * N + reader */
    weft_emb_cache *c;
    weft_err cache_err;
} brute;

/* The bytes of (t, r) not on g, by the placement rules written out again. */
static uint64_t brute_remote(brute *b, uint32_t t, uint64_t r, uint32_t g, bool add)
{
    const weft_emb_table *tb = &b->w->tables[t];
    uint32_t n = b->w->gpus;
    uint64_t sum = 0;
    for (uint32_t sh = 0; sh < (tb->sharding == WEFT_EMB_CW ? tb->col_shards : 1); sh++) {
        uint32_t owner = g;
        uint64_t bytes = (uint64_t)tb->dim * tb->dtype_bytes;
        if (tb->sharding == WEFT_EMB_TW)
            owner = (uint32_t)(b->slot[t] % n);
        else if (tb->sharding == WEFT_EMB_RW)
            owner = (uint32_t)(r / ((tb->rows + n - 1) / n));
        else if (tb->sharding == WEFT_EMB_CW) {
            owner = (uint32_t)((b->slot[t] + sh) % n);
            bytes = (uint64_t)(tb->dim / tb->col_shards + (sh < tb->dim % tb->col_shards)) *
                    tb->dtype_bytes;
        }
        if (owner != g) {
            sum += bytes;
            if (add)
                b->m[owner * n + g] += bytes;
        }
    }
    return sum;
}

static weft_err brute_add(void *ctx, uint64_t s, uint32_t t, uint64_t r, weft_diag *d)
{
    brute *b = ctx;
    weft_err ce = weft_emb_cache_add(b->c, s, t, r, d);
    if (ce)
        b->cache_err = ce;
    uint64_t per_step = (uint64_t)b->w->gpus * b->w->batch, step = s / per_step;
    uint32_t g = (uint32_t)(s % per_step / b->w->batch);
    b->st.steps = step + 1;
    b->st.lookups++;
    b->clock++;
    uint64_t bytes = brute_remote(b, t, r, g, false);
    if (!bytes)
        return WEFT_OK;
    b->st.remote++;
    b->st.bytes_uncached += bytes;
    brute_entry *e = b->e[g];
    uint64_t i = 0;
    while (i < b->n[g] && !(e[i].t == t && e[i].r == r))
        i++;
    if (b->cap && i < b->n[g]) {
        e[i].used = b->clock;
        if (!b->stale_steps || step < e[i].fetched + b->stale_steps) {
            b->st.hits++;
            return WEFT_OK;
        }
        b->st.stale++;
        e[i].fetched = step;
    } else if (b->cap) {
        if (b->n[g] == b->cap) { /* evict the least recently used */
            i = 0;
            for (uint64_t k = 1; k < b->n[g]; k++)
                if (e[k].used < e[i].used)
                    i = k;
        } else {
            i = b->n[g]++;
        }
        e[i] = (brute_entry){.t = t, .r = r, .fetched = step, .used = b->clock};
    }
    b->st.bytes_cached += brute_remote(b, t, r, g, true);
    return WEFT_OK;
}

static void test_cache(void)
{
    weft_emb_table tb[5] = {
        {.rows = 40,
         .dim = 4,
         .pooling = 3,
         .dtype_bytes = 4,
         .zipf_milli = 1100,
         .sharding = WEFT_EMB_RW},
        {.rows = 30,
         .dim = 2,
         .pooling = 2,
         .dtype_bytes = 2,
         .zipf_milli = 800,
         .sharding = WEFT_EMB_TW},
        {.rows = 25,
         .dim = 5,
         .pooling = 2,
         .dtype_bytes = 4,
         .zipf_milli = 1500,
         .sharding = WEFT_EMB_CW,
         .col_shards = 2},
        {.rows = 9, .dim = 3, .pooling = 1, .dtype_bytes = 1, .sharding = WEFT_EMB_DP},
        {.rows = 1000, .dim = 1, .pooling = 4, .dtype_bytes = 8, .sharding = WEFT_EMB_RW},
    };
    weft_emb_workload w = {.gpus = 3, .batch = 4, .ntables = 5, .tables = tb, .seed = 5};
    static const uint64_t caps[] = {0, 1, 7, 40, 2000}, stales[] = {0, 1, 3};
    for (size_t ci = 0; ci < 5; ci++)
        for (size_t si = 0; si < 3; si++) {
            brute b = {
                .w = &w, .cap = caps[ci], .stale_steps = stales[si], .slot = {0, 0, 1, 0, 0}};
            for (int g = 0; g < 3; g++)
                b.e[g] = calloc(caps[ci] + 1, sizeof *b.e[g]);
            weft_emb_cache_params p = {.rows_per_gpu = caps[ci], .staleness = stales[si]};
            weft_diag d;
            CHECK_ERR(weft_emb_cache_new(&w, &p, &b.c, &d), WEFT_OK);
            CHECK_ERR(weft_emb_generate_steps(&w, 30, brute_add, &b, &d), WEFT_OK);
            CHECK_ERR(b.cache_err, WEFT_OK);
            weft_emb_cache_stats st;
            weft_traffic m;
            CHECK_ERR(weft_emb_cache_stats_get(b.c, &st, &m, &d), WEFT_OK);
            CHECK_INT(st.steps, 30);
            CHECK_INT(st.lookups, 30 * 12 * 12);
            CHECK_INT(st.remote, b.st.remote);
            CHECK_INT(st.hits, b.st.hits);
            CHECK_INT(st.stale, b.st.stale);
            CHECK_INT(st.bytes_uncached, b.st.bytes_uncached);
            CHECK_INT(st.bytes_cached, b.st.bytes_cached);
            CHECK(memcmp(m.bytes, b.m, 9 * 8) == 0);
            if (caps[ci] == 0)
                CHECK_INT(st.bytes_cached, st.bytes_uncached);
            if (caps[ci] == 2000 && stales[si] == 0) /* all fits: one miss a row */
                CHECK(st.hits > st.remote / 2);
            weft_traffic_free(&m);
            weft_emb_cache_free(b.c);
            for (int g = 0; g < 3; g++)
                free(b.e[g]);
        }
    /* Hand-counted: one table-wise table on GPU 0, 2 GPUs, 1 sample each,
     * a cache of 1 row, fresh for 2 steps. GPU 1 (samples 1, 3, 5, 7)
     * reads rows 5, 5 | 5 | 6 | 5, 6: miss, hit | hit | miss (evicts 5) |
     * miss (5 gone), miss (evicts 6 again). GPU 0's lookups are local. */
    weft_emb_table one = {.rows = 10, .dim = 2, .pooling = 1, .dtype_bytes = 4};
    weft_emb_workload w1 = {.gpus = 2, .batch = 1, .ntables = 1, .tables = &one};
    weft_emb_cache_params p1 = {.rows_per_gpu = 1, .staleness = 2};
    weft_emb_cache *c;
    weft_diag d;
    CHECK_ERR(weft_emb_cache_new(&w1, &p1, &c, &d), WEFT_OK);
    static const uint64_t lk[][2] = {{0, 5}, {1, 5}, {1, 5}, {3, 5}, {5, 6}, {7, 5}, {7, 6}};
    for (size_t i = 0; i < sizeof lk / sizeof *lk; i++)
        CHECK_ERR(weft_emb_cache_add(c, lk[i][0], 0, lk[i][1], &d), WEFT_OK);
    weft_emb_cache_stats st;
    CHECK_ERR(weft_emb_cache_stats_get(c, &st, NULL, &d), WEFT_OK);
    CHECK_INT(st.steps, 4);
    CHECK_INT(st.lookups, 7);
    CHECK_INT(st.remote, 6);
    CHECK_INT(st.hits, 2);
    CHECK_INT(st.stale, 0);
    CHECK_INT(st.bytes_uncached, 6 * 8);
    CHECK_INT(st.bytes_cached, 4 * 8);
    CHECK_ERR(weft_emb_cache_add(c, 6, 0, 1, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "sample 6 after sample 7: lookups come in order of samples");
    weft_emb_cache_free(c);
    /* Staleness: row 5 fetched in step 0, read again in steps 1 (fresh)
     * and 2 (stale: refetched), 3 (fresh again). */
    CHECK_ERR(weft_emb_cache_new(&w1, &p1, &c, &d), WEFT_OK);
    for (uint64_t s = 1; s <= 7; s += 2)
        CHECK_ERR(weft_emb_cache_add(c, s, 0, 5, &d), WEFT_OK);
    CHECK_ERR(weft_emb_cache_stats_get(c, &st, NULL, &d), WEFT_OK);
    CHECK_INT(st.hits, 2);
    CHECK_INT(st.stale, 1);
    CHECK_INT(st.bytes_cached, 2 * 8);
    weft_emb_cache_free(c);
}

/* Allocation failures: every one is WEFT_ENOMEM and leaks nothing. */
static weft_emb_result oom_res;
static weft_err oom_ctor(void *arg)
{
    return weft_emb_forward(arg, &oom_res, NULL);
}
static void oom_dtor(void *arg)
{
    weft_emb_result_free(&oom_res);
}

/* The generator's lookups through weft__emb_acc_add_drawn (a bag's blocks
 * stamped once per bag) give weft_emb_acc_add's matrix, and each
 * row-wise lookup's owner. By hand first: 2 GPUs, 1 sample each, a
 * row-wise table of 4 rows (blocks of 2) x 2 fp32, pooling 3. Sample 0
 * (GPU 0) reads rows 0, 1, 0: block 0 once, 8 bytes from GPU 0 to 0;
 * sample 1 reads 3, 0, 2: blocks 1 and 0, 8 bytes each to GPU 1. */
typedef struct drawn_pair {
    weft_emb_acc *checked, *drawn;
    const weft_emb_workload *w;
    uint64_t owner_bad; /* lookups whose owner is wrong */
} drawn_pair;

static weft_err drawn_add(void *ctx, uint64_t s, uint32_t t, uint64_t r, weft_diag *d)
{
    drawn_pair *p = ctx;
    const weft_emb_table *tb = &p->w->tables[t];
    uint64_t n = p->w->gpus, blk = (tb->rows + n - 1) / n;
    uint32_t want = tb->sharding == WEFT_EMB_RW ? (uint32_t)(r / blk) : UINT32_MAX;
    p->owner_bad += weft__emb_acc_add_drawn(p->drawn, s, t, r) != want;
    return weft_emb_acc_add(p->checked, s, t, r, d);
}

static void test_drawn(void)
{
    weft_emb_table one = {
        .rows = 4, .dim = 2, .pooling = 3, .dtype_bytes = 4, .sharding = WEFT_EMB_RW};
    weft_emb_workload w1 = {.gpus = 2, .batch = 1, .ntables = 1, .tables = &one};
    weft_emb_acc *a;
    weft_emb_result r;
    weft_diag d;
    CHECK_ERR(weft_emb_acc_new(&w1, &a, &d), WEFT_OK);
    static const uint64_t rows[] = {0, 1, 0, 3, 0, 2};
    static const uint32_t owners[] = {0, 0, 0, 1, 0, 1};
    for (uint32_t i = 0; i < 6; i++)
        CHECK_INT(weft__emb_acc_add_drawn(a, i / 3, 0, rows[i]), owners[i]);
    CHECK_ERR(weft_emb_acc_finish(a, &r, &d), WEFT_OK);
    const uint64_t want[] = {8, 8, 0, 8};
    check_matrix(&r.forward, 2, want, __LINE__);
    CHECK_INT(r.lookups, 6);
    weft_emb_result_free(&r);
    weft_emb_acc_free(a);
    /* Every sharding, pooling up to 4, 3 GPUs of 4 samples, sparse and
     * dense row-wise: the same matrix, lookups and all-reduce bytes. */
    weft_emb_table tb[5] = {
        {.rows = 40,
         .dim = 4,
         .pooling = 3,
         .dtype_bytes = 4,
         .zipf_milli = 1100,
         .sharding = WEFT_EMB_RW},
        {.rows = 30, .dim = 2, .pooling = 2, .dtype_bytes = 2, .sharding = WEFT_EMB_TW},
        {.rows = 25,
         .dim = 5,
         .pooling = 2,
         .dtype_bytes = 4,
         .sharding = WEFT_EMB_CW,
         .col_shards = 2},
        {.rows = 9, .dim = 3, .pooling = 1, .dtype_bytes = 1, .sharding = WEFT_EMB_DP},
        {.rows = 1000, .dim = 1, .pooling = 4, .dtype_bytes = 8, .sharding = WEFT_EMB_RW},
    };
    for (int dense = 0; dense < 2; dense++) {
        weft_emb_workload w = {
            .gpus = 3, .batch = 4, .ntables = 5, .tables = tb, .seed = 9, .rw_dense = dense};
        drawn_pair p = {.w = &w};
        CHECK_ERR(weft_emb_acc_new(&w, &p.checked, &d), WEFT_OK);
        CHECK_ERR(weft_emb_acc_new(&w, &p.drawn, &d), WEFT_OK);
        CHECK_ERR(weft_emb_generate(&w, drawn_add, &p, &d), WEFT_OK);
        CHECK_INT(p.owner_bad, 0);
        weft_emb_result rc, rd;
        CHECK_ERR(weft_emb_acc_finish(p.checked, &rc, &d), WEFT_OK);
        CHECK_ERR(weft_emb_acc_finish(p.drawn, &rd, &d), WEFT_OK);
        CHECK_INT(rd.lookups, 12 * 12);
        CHECK_INT(rd.lookups, rc.lookups);
        CHECK_INT(rd.allreduce_bytes, 9 * 3);
        CHECK_INT(rd.allreduce_bytes, rc.allreduce_bytes);
        CHECK(memcmp(rd.forward.bytes, rc.forward.bytes, 9 * sizeof *rd.forward.bytes) == 0);
        weft_emb_result_free(&rc);
        weft_emb_result_free(&rd);
        weft_emb_acc_free(p.checked);
        weft_emb_acc_free(p.drawn);
    }
}

/* weft__emb_acc_table by hand, test_drawn's case: sample 0 reads rows 0,
 * 1, 0 (block 0 once), sample 1 rows 3, 0, 2 (blocks 1 and 0): the
 * matrix {8, 8, 0, 8}, counted by column (o_step 1) and in the forward
 * matrix's layout; row bytes 4 lookups of 8 on GPU 0, 2 on GPU 1. Two
 * calls of one sample each give the same as one of two. */
static void test_table_tally(void)
{
    weft_emb_table one = {
        .rows = 4, .dim = 2, .pooling = 3, .dtype_bytes = 4, .sharding = WEFT_EMB_RW};
    weft_emb_workload w1 = {.gpus = 2, .batch = 1, .ntables = 1, .tables = &one};
    weft_emb_acc *a;
    weft_diag d;
    CHECK_ERR(weft_emb_acc_new(&w1, &a, &d), WEFT_OK);
    static const uint64_t rows[] = {0, 1, 0, 3, 0, 2};
    for (int layout = 0; layout < 2; layout++)
        for (int split = 0; split < 2; split++) {
            uint64_t fwd[4] = {0}, rb[2] = {0}, stamp[2] = {0};
            weft__emb_tally y = {fwd, layout ? 1 : 2, layout ? 2 : 1, rb, stamp, 0};
            if (split) {
                weft__emb_acc_table(a, 0, 0, 1, rows, &y);
                weft__emb_acc_table(a, 0, 1, 1, rows + 3, &y);
            } else {
                weft__emb_acc_table(a, 0, 0, 2, rows, &y);
            }
            /* (o, g) = (0, 0), (0, 1), (1, 0), (1, 1). */
            CHECK_INT(fwd[0], 8);
            CHECK_INT(fwd[layout ? 2 : 1], 8);
            CHECK_INT(fwd[layout ? 1 : 2], 0);
            CHECK_INT(fwd[3], 8);
            CHECK_INT(rb[0], 4 * 8);
            CHECK_INT(rb[1], 2 * 8);
            CHECK_INT(y.bag, 2);
        }
    /* Dense row-wise: no matrix (the shares are fixed), the row bytes. */
    weft_emb_acc_free(a);
    w1.rw_dense = true;
    CHECK_ERR(weft_emb_acc_new(&w1, &a, &d), WEFT_OK);
    uint64_t rb[2] = {0}, stamp[2] = {0};
    weft__emb_tally y = {NULL, 2, 1, rb, stamp, 0};
    weft__emb_acc_table(a, 0, 0, 2, rows, &y);
    CHECK_INT(rb[0], 4 * 8);
    CHECK_INT(rb[1], 2 * 8);
    weft_emb_acc_free(a);
}

/* The generator's lookups through weft_emb_acc_add and, per row-wise
 * lookup, D*E to its owner: the reference weft__emb_acc_draw_rw must
 * match. */
typedef struct ref_rw {
    weft_emb_acc *a;
    const weft_emb_workload *w;
    uint64_t *row_bytes;
} ref_rw;

static weft_err ref_add(void *ctx, uint64_t s, uint32_t t, uint64_t r, weft_diag *d)
{
    ref_rw *p = ctx;
    const weft_emb_table *tb = &p->w->tables[t];
    uint64_t n = p->w->gpus, blk = (tb->rows + n - 1) / n;
    if (tb->sharding == WEFT_EMB_RW)
        p->row_bytes[r / blk] += (uint64_t)tb->dim * tb->dtype_bytes;
    return weft_emb_acc_add(p->a, s, t, r, d);
}

/* w's matrix, lookups, all-reduce bytes and row-wise row bytes (n words)
 * from weft_emb_forward and weft__emb_acc_draw_rw at 1, 3 and 8 threads
 * against the sequential reference. */
static void check_threads(const weft_emb_workload *w, int line)
{
    uint32_t n = w->gpus;
    size_t nn = (size_t)n * n;
    weft_diag d;
    ref_rw ref = {NULL, w, calloc(n, 8)};
    weft_emb_result want, got;
    CHECK_ERR(weft_emb_acc_new(w, &ref.a, &d), WEFT_OK);
    CHECK_ERR(weft_emb_generate(w, ref_add, &ref, &d), WEFT_OK);
    CHECK_ERR(weft_emb_acc_finish(ref.a, &want, &d), WEFT_OK);
    weft_emb_acc_free(ref.a);
    static const unsigned threads[] = {1, 3, 8};
    uint64_t *rb = calloc(n, 8);
    for (int k = 0; k < 3; k++) {
        weft_threads_set(threads[k]);
        CHECK_ERR(weft_emb_forward(w, &got, &d), WEFT_OK);
        bool same = memcmp(got.forward.bytes, want.forward.bytes, nn * 8) == 0;
        if (!same)
            fprintf(stderr, "line %d: %u threads: the matrix differs\n", line, threads[k]);
        CHECK(same);
        CHECK_INT(got.lookups, want.lookups);
        CHECK_INT(got.allreduce_bytes, want.allreduce_bytes);
        weft_emb_result_free(&got);
        /* With the row bytes (as the DLRM step), added to what is there. */
        weft_emb_acc *a;
        CHECK_ERR(weft_emb_acc_new(w, &a, &d), WEFT_OK);
        for (uint32_t i = 0; i < n; i++)
            rb[i] = i;
        CHECK_ERR(weft__emb_acc_draw_rw(a, rb, &d), WEFT_OK);
        CHECK_ERR(weft_emb_acc_finish(a, &got, &d), WEFT_OK);
        weft_emb_acc_free(a);
        CHECK(memcmp(got.forward.bytes, want.forward.bytes, nn * 8) == 0);
        CHECK_INT(got.lookups, want.lookups);
        uint64_t bad = 0;
        for (uint32_t i = 0; i < n; i++)
            bad += rb[i] != ref.row_bytes[i] + i;
        CHECK_INT(bad, 0);
        weft_emb_result_free(&got);
    }
    weft_threads_set(0);
    weft_emb_result_free(&want);
    free(rb);
    free(ref.row_bytes);
}

/* Row-wise tables drawn on threads: a mix of shardings with several
 * row-wise tables (zipf and uniform, pooling 0 to 5, one with more lookups
 * in a bag than a chunk holds, more tables than threads), sparse and
 * dense; 2,900 GPUs, where a thread's matrix would pass the scratch
 * bound and one thread counts into the accumulator's; and 130. */
static void test_threads(void)
{
    weft_emb_table tb[12];
    weft__rng g;
    weft__rng_seed(&g, 5, 0);
    static const weft_emb_sharding kinds[] = {WEFT_EMB_RW, WEFT_EMB_RW, WEFT_EMB_TW,
                                              WEFT_EMB_RW, WEFT_EMB_CW, WEFT_EMB_DP};
    for (uint32_t t = 0; t < 12; t++)
        tb[t] = (weft_emb_table){.rows = 1 + weft__rng_below(&g, 3000),
                                 .dim = 1 + (uint32_t)weft__rng_below(&g, 16),
                                 .pooling = (uint32_t)weft__rng_below(&g, 6),
                                 .dtype_bytes = 1u << weft__rng_below(&g, 3),
                                 .zipf_milli = t % 3 ? 1050 : 0,
                                 .sharding = kinds[t % 6],
                                 .col_shards = 2};
    tb[1].pooling = 9000; /* beyond a chunk of 8192 rows: a bag at a time */
    tb[1].rows = 50;
    tb[7].pooling = 0;
    for (int dense = 0; dense < 2; dense++) {
        weft_emb_workload w = {
            .gpus = 7, .batch = 13, .ntables = 12, .tables = tb, .seed = 3, .rw_dense = dense};
        check_threads(&w, __LINE__);
    }
    weft_emb_table big[2] = {
        {.rows = 100000,
         .dim = 2,
         .pooling = 3,
         .dtype_bytes = 2,
         .zipf_milli = 900,
         .sharding = WEFT_EMB_RW},
        {.rows = 5000, .dim = 4, .pooling = 1, .dtype_bytes = 4, .sharding = WEFT_EMB_RW},
    };
    weft_emb_workload w = {.gpus = 2900, .batch = 1, .ntables = 2, .tables = big, .seed = 8};
    check_threads(&w, __LINE__);
    w.gpus = 130; /* threads' matrices added in tiles of 64 x 64, and part ones */
    w.batch = 3;
    check_threads(&w, __LINE__);
}

static void test_oom(void)
{
    weft_emb_table tb[2] = {
        {.rows = 100,
         .dim = 4,
         .pooling = 2,
         .dtype_bytes = 4,
         .zipf_milli = 900,
         .sharding = WEFT_EMB_RW},
        {.rows = 100, .dim = 4, .pooling = 2, .dtype_bytes = 4, .sharding = WEFT_EMB_TW},
    };
    weft_emb_workload w = {.gpus = 2, .batch = 2, .ntables = 2, .tables = tb};
    CHECK(weft_test_oom_sweep("weft_emb_forward", oom_ctor, oom_dtor, &w) > 3);
}

int main(void)
{
    test_table_wise();
    test_column_wise();
    test_row_wise();
    test_data_parallel_and_mixed();
    test_trace_errors();
    test_check();
    test_generator();
    test_cache();
    test_drawn();
    test_table_tally();
    test_threads();
    test_oom();
    return weft_test_done();
}
