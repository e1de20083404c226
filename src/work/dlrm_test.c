/* weft_dlrm_step on hand-computed cases (docs/step.md, "DLRM"), its
 * errors, and the MLPerf preset's shape. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "weft/dlrm.h"
#include "weft/synth.h"
#include "weft/threads.h"
#include "work/testing_work.h"
#include "work/work_internal.h"

/* 2 GPUs, 2 samples each; T0: 10 rows x 4 fp32, 2 lookups a sample; T1: 6
 * rows x 4 fp16, 1 lookup. Bottom 3 -> 8 -> 4, dot interaction (F = 3
 * vectors of 4: 4 + 3 products), top 7 -> 4 -> 1. */
static weft_emb_table tabs[2];

static void small(weft_dlrm *m, weft_emb_sharding s)
{
    memset(m, 0, sizeof *m);
    strcpy(m->name, "small");
    m->dense_features = 3;
    m->bottom[0] = 8;
    m->bottom[1] = 4;
    m->nbottom = 2;
    m->top[0] = 4;
    m->top[1] = 1;
    m->ntop = 2;
    m->interaction = WEFT_DLRM_DOT;
    tabs[0] = (weft_emb_table){10, 4, 2, 4, 0, s, 1};
    tabs[1] = (weft_emb_table){6, 4, 1, 2, 0, s, 1};
    m->emb = (weft_emb_workload){2, 2, 2, tabs, 0, false};
    m->prec = WEFT_PREC_BF16;
}

static double dense_fwd(const weft_gpu *g)
{
    weft_prec p = WEFT_PREC_BF16;
    return weft__work_gemm_s(g, p, 1, 2, 8, 3) + weft__work_gemm_s(g, p, 1, 2, 4, 8) +
           weft__work_gemm_s(g, p, 2, 3, 3, 4) + weft__work_gemm_s(g, p, 1, 2, 4, 7) +
           weft__work_gemm_s(g, p, 1, 2, 1, 4);
}

static double dense_bwd(const weft_gpu *g)
{
    weft_prec p = WEFT_PREC_BF16;
#define LIN(K, N) (weft__work_gemm_s(g, p, 1, 2, K, N) + weft__work_gemm_s(g, p, 1, K, N, 2))
    return LIN(3, 8) + LIN(8, 4) + 2 * weft__work_gemm_s(g, p, 2, 3, 3, 4) + LIN(7, 4) + LIN(4, 1);
#undef LIN
}

static void test_small_tw(void)
{
    weft_gpu g;
    weft_topo *t = NULL;
    weft_work_ctx *c = weft__test_work_ctx("switch:2,bw=100", "a100-80g", &g, &t);
    if (!c)
        return;
    weft_dlrm m;
    small(&m, WEFT_EMB_TW);
    m.bound = true;
    weft_dlrm_result r;
    CHECK_ERR(weft_dlrm_step(c, &m, &r, NULL), WEFT_OK);
    /* Params: 3*8+8 + 8*4+4 + 7*4+4 + 4*1+1. */
    CHECK_INT(r.dense_params, 105);
    CHECK_INT(r.dense_ar_bytes, 420);
    CHECK_INT(r.emb_ar_bytes, 0);
    /* T0 on GPU 0 sends B*D*E = 32 to each GPU, T1 on GPU 1 16. */
    CHECK_INT(r.a2a_bytes, 48);
    CHECK_INT(r.a2a_max_send, 32);
    CHECK_INT(r.lookups, 12);
    /* GPU 0 reads N*B*P*D*E = 2*2*2*16 = 128 bytes of rows and writes 64
     * of pooled vectors; backward reads and writes the rows. */
    CHECK_INT(r.busiest, 0);
    CHECK_INT(r.lookup_fwd_bytes, 192);
    CHECK_INT(r.lookup_bwd_bytes, 320);
    CHECK_INT(r.table_bytes_max, 160);
    CHECK(r.fits);
    CHECK(r.lookup_fwd_s == 192 / g.hbm_bw);
    CHECK(r.lookup_bwd_s == 320 / g.hbm_bw);
    CHECK(r.dense_fwd_s == dense_fwd(&g));
    CHECK(r.dense_bwd_s == dense_bwd(&g));
    /* The bound of a star: the busiest port, 32 bytes at 100 GB/s (one
     * way) forward, received by GPU 0 backward. */
    CHECK(fabs(r.a2a_fwd_bound_s - 32 / 100e9) < 1e-18);
    CHECK(fabs(r.a2a_bwd_bound_s - 32 / 100e9) < 1e-18);
    CHECK(r.a2a_fwd_s >= r.a2a_fwd_bound_s && r.a2a_bwd_s >= r.a2a_bwd_bound_s);
    /* The all-to-all is the simulation of the matrix. */
    weft_traffic f;
    CHECK_ERR(weft_traffic_new(2, &f, NULL), WEFT_OK);
    f.bytes[0] = f.bytes[1] = 32;
    f.bytes[2] = f.bytes[3] = 16;
    double s = 0;
    CHECK_ERR(weft__work_traffic_s(c, &f, &s, NULL), WEFT_OK);
    CHECK(r.a2a_fwd_s == s);
    weft_traffic_free(&f);
    /* The dense all-reduce is a ring all-reduce of 420 bytes. */
    weft_sim_result ar;
    CHECK_ERR(weft_sim_ring(t, WEFT_COLL_ALLREDUCE, 420, &c->opts, &ar, NULL), WEFT_OK);
    CHECK(fabs(r.dense_ar_s - ar.time_s) <= 1e-12 * ar.time_s);
    CHECK(r.emb_ar_s == 0);
    CHECK(r.step_s == r.lookup_fwd_s + r.a2a_fwd_s + r.dense_fwd_s + r.dense_bwd_s + r.a2a_bwd_s +
                          r.lookup_bwd_s + r.dense_ar_s + r.emb_ar_s);

    /* Data-parallel: nothing moves; rows read B*P*D*E = 64 + 16, pooled
     * vectors written B*D*E = 32 + 16; gradients 160 + 48 bytes. */
    small(&m, WEFT_EMB_DP);
    CHECK_ERR(weft_dlrm_step(c, &m, &r, NULL), WEFT_OK);
    CHECK_INT(r.a2a_bytes, 0);
    CHECK(r.a2a_fwd_s == 0 && r.a2a_bwd_s == 0);
    CHECK_INT(r.emb_ar_bytes, 208);
    CHECK_INT(r.lookup_fwd_bytes, 128);
    CHECK_INT(r.lookup_bwd_bytes, 208);
    CHECK_INT(r.table_bytes_max, 208);
    CHECK_ERR(weft_sim_ring(t, WEFT_COLL_ALLREDUCE, 208, &c->opts, &ar, NULL), WEFT_OK);
    CHECK(fabs(r.emb_ar_s - ar.time_s) <= 1e-12 * ar.time_s);

    /* Column-wise, 2 shards of T0 (slots 0, 1: 2 columns each) and T1
     * table-wise (slot 2: GPU 0): GPU 0 reads 2*2*2*2*4 + 2*2*1*4*2 = 96
     * bytes of rows, sends 16 + 16 to each GPU. */
    small(&m, WEFT_EMB_CW);
    tabs[0].col_shards = 2;
    tabs[1].sharding = WEFT_EMB_TW;
    CHECK_ERR(weft_dlrm_step(c, &m, &r, NULL), WEFT_OK);
    CHECK_INT(r.busiest, 0);
    CHECK_INT(r.lookup_fwd_bytes, 96 + 64);
    CHECK_INT(r.a2a_bytes, 32 + 16);
    CHECK_INT(r.table_bytes_max, 80 + 48);

    /* Row-wise: the rows read are the lookups' (12 lookups: 8 of 16
     * bytes, 4 of 8), whichever GPU holds them. */
    small(&m, WEFT_EMB_RW);
    CHECK_ERR(weft_dlrm_step(c, &m, &r, NULL), WEFT_OK);
    CHECK_INT(r.lookups, 12);
    CHECK_INT(r.table_bytes_max, 5 * 16 + 3 * 8);
    weft_work_ctx_free(c);
    weft_topo_free(t);
}

static void test_errors(void)
{
    weft_gpu g;
    weft_topo *t = NULL;
    weft_work_ctx *c = weft__test_work_ctx("switch:2,bw=100", "a100-80g", &g, &t);
    if (!c)
        return;
    weft_dlrm m;
    weft_dlrm_result r;
    weft_diag d;
    small(&m, WEFT_EMB_TW);
    m.bottom[1] = 5;
    CHECK_ERR(weft_dlrm_step(c, &m, &r, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "dlrm: table 0: dim 4: must be the bottom MLP's output width 5 (the "
                     "interaction combines them)");
    small(&m, WEFT_EMB_TW);
    m.emb.gpus = 3;
    CHECK_ERR(weft_dlrm_step(c, &m, &r, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "dlrm: 3 GPUs in the workload, 2 ranks in the fabric");
    small(&m, WEFT_EMB_TW);
    m.top[1] = 0;
    CHECK_ERR(weft_dlrm_step(c, &m, &r, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "dlrm: top MLP layer 2: width 0");
    small(&m, WEFT_EMB_TW);
    m.interaction = WEFT_DLRM_DCN;
    CHECK_ERR(weft_dlrm_step(c, &m, &r, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "dlrm: DCN needs at least 1 layer of rank at least 1");
    small(&m, WEFT_EMB_TW);
    m.emb.batch = 0;
    CHECK_ERR(weft_dlrm_step(c, &m, &r, &d), WEFT_EINVAL);
    weft_work_ctx_free(c);
    weft_topo_free(t);
}

static void test_mlperf(void)
{
    weft_dlrm m;
    weft_emb_table tb[WEFT_DLRM_MLPERF_TABLES];
    weft_dlrm_mlperf(&m, tb);
    uint64_t rows = 0, pool = 0;
    for (uint32_t i = 0; i < WEFT_DLRM_MLPERF_TABLES; i++) {
        rows += tb[i].rows;
        pool += tb[i].pooling;
    }
    /* The README's sums: 204,184,588 rows, 214 lookups a sample. */
    CHECK_INT(rows, 204184588);
    CHECK_INT(pool, 214);
    weft_gpu g;
    weft_topo *t = NULL;
    weft_work_ctx *c = weft__test_work_ctx("a100:1", "a100-80g", &g, &t);
    if (!c)
        return;
    m.emb.gpus = 8;
    m.emb.batch = 65536 / 8;
    weft_dlrm_result r;
    CHECK_ERR(weft_dlrm_step(c, &m, &r, NULL), WEFT_OK);
    /* Bottom 13*512+512 + 512*256+256 + 256*128+128; DCN W = 27*128 =
     * 3456: 3 x (2*3456*512 + 3456); top 3456*1024+1024 + 1024*1024+1024
     * + 1024*512+512 + 512*256+256 + 256+1. */
    CHECK_INT(r.dense_params, (13 * 512 + 512 + 512 * 256 + 256 + 256 * 128 + 128) +
                                  3 * (2 * 3456 * 512 + 3456) +
                                  (3456 * 1024 + 1024 + 1024 * 1024 + 1024 + 1024 * 512 + 512 +
                                   512 * 256 + 256 + 256 + 1));
    CHECK(r.step_s > 0);
    weft_work_ctx_free(c);
    weft_topo_free(t);
}

/* The benchmark: 128 GPUs, 1,000 tables, under a second (tables
 * of one size: the generator builds one zipf sampler per size, about 10 ms
 * a million rows). Data-parallel tables have 10,000 rows: a million-row
 * table on every GPU (512 GB) would not fit, and the ring simulation of its
 * 512 GB all-reduce alone takes 3 s. */
static void bench_big(void)
{
    weft_gpu g;
    weft_topo *t = NULL;
    weft_work_ctx *c = weft__test_work_ctx("h100:16", "h100-sxm", &g, &t);
    if (!c)
        return;
    static weft_emb_table big[1000];
    static const weft_emb_sharding kinds[] = {WEFT_EMB_TW, WEFT_EMB_RW, WEFT_EMB_CW, WEFT_EMB_DP};
    weft_dlrm m;
    small(&m, WEFT_EMB_TW);
    m.bottom[1] = 128;
    m.top[0] = 1024;
    m.top[1] = 1;
    m.interaction = WEFT_DLRM_DCN;
    m.dcn_layers = 1;
    m.dcn_rank = 64;
    for (uint32_t k = 0; k < 4; k++) {
        for (uint32_t i = 0; i < 1000; i++)
            big[i] = (weft_emb_table){
                kinds[k] == WEFT_EMB_DP ? 10000 : 1000000, 128, 1, 4, 1050, kinds[k], 4};
        /* Row-wise as TorchRec's dense reduce-scatter: a sparse matrix of
         * 128 x 127 distinct entries takes the flow simulator tens of
         * seconds (docs/step.md, "Speed"). */
        m.emb = (weft_emb_workload){128, 64, 1000, big, 1, true};
        clock_t a = clock();
        weft_dlrm_result r;
        CHECK_ERR(weft_dlrm_step(c, &m, &r, NULL), WEFT_OK);
        double s = (double)(clock() - a) / CLOCKS_PER_SEC;
        printf("bench: 128 GPUs, 1000 tables, %s: step %.3f ms predicted in %.3f s of CPU\n",
               weft_emb_sharding_name(kinds[k]), r.step_s * 1e3, s);
        /* The target is 1 s: bench/dlrm.c measures it (0.2-0.8 s on an
         * idle machine). A test never fails on time (a loaded machine, a
         * sanitizer build), so it is printed here, not checked. */
    }
    weft_work_ctx_free(c);
    weft_topo_free(t);
}

/* Herald in the step: with a cache (with and without the placement) the
 * step is never slower than without, on these configurations (2 to 16
 * GPUs, every sharding, LRU and LFU); with neither, nothing changes; and
 * --overlap never lengthens a step and hides at most the bottom MLP. */
static void test_herald(void)
{
    static const char *const specs[] = {"switch:2,bw=100", "switch:4,bw=50", "a100:1", "h100:2"};
    weft_gpu g;
    CHECK(weft_gpu_find("h100-sxm", &g));
    int worse = 0, better = 0, cases = 0;
    for (size_t si = 0; si < 4; si++) {
        weft_topo *t = weft__test_topo_spec(specs[si]);
        CHECK(t != NULL);
        if (!t)
            continue;
        weft_work_ctx *c = NULL;
        CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &c), WEFT_OK);
        uint32_t n = weft_topo_num_ranks(t);
        for (int sh = 0; sh < 3; sh++)
            for (int pol = 0; pol < 2; pol++)
                for (int pl = 0; pl < 2; pl++) {
                    weft_emb_table tb[3];
                    for (int k = 0; k < 3; k++)
                        tb[k] = (weft_emb_table){2000 + 1000 * (uint64_t)k,
                                                 16,
                                                 1 + (uint32_t)k,
                                                 4,
                                                 1100,
                                                 sh == 0   ? WEFT_EMB_TW
                                                 : sh == 1 ? WEFT_EMB_RW
                                                           : WEFT_EMB_CW,
                                                 2};
                    weft_dlrm m;
                    memset(&m, 0, sizeof m);
                    strcpy(m.name, "herald");
                    m.dense_features = 13;
                    m.bottom[0] = 64;
                    m.bottom[1] = 16;
                    m.nbottom = 2;
                    m.top[0] = 32;
                    m.top[1] = 1;
                    m.ntop = 2;
                    m.prec = WEFT_PREC_BF16;
                    m.emb = (weft_emb_workload){n, 64, 3, tb, 5, false};
                    m.herald = (weft_emb_herald_params){200, 1, (weft_emb_policy)pol,
                                                        (weft_emb_placement)pl, 1};
                    weft_dlrm_result r, plain;
                    CHECK_ERR(weft_dlrm_step(c, &m, &r, NULL), WEFT_OK);
                    worse += r.step_s > r.step_base_s;
                    better += r.step_s < r.step_base_s;
                    cases++;
                    /* The base is the step without Herald. */
                    weft_emb_herald_params keep = m.herald;
                    m.herald = (weft_emb_herald_params){0, 1, WEFT_EMB_LRU, WEFT_EMB_PLACE_RANDOM,
                                                        keep.warm_steps};
                    CHECK_ERR(weft_dlrm_step(c, &m, &plain, NULL), WEFT_OK);
                    CHECK(!plain.herald);
                    CHECK(plain.step_s == plain.step_base_s);
                    m.overlap = true;
                    weft_dlrm_result ov;
                    CHECK_ERR(weft_dlrm_step(c, &m, &ov, NULL), WEFT_OK);
                    CHECK(ov.step_s <= plain.step_s);
                    CHECK(ov.a2a_fwd_hidden_s <= ov.bottom_fwd_s &&
                          ov.a2a_bwd_hidden_s <= ov.bottom_bwd_s);
                    CHECK(fabs(plain.step_s - ov.step_s - ov.a2a_fwd_hidden_s -
                               ov.a2a_bwd_hidden_s) < 1e-12);
                }
        weft_work_ctx_free(c);
        weft_topo_free(t);
    }
    CHECK_INT(cases, 48);
    CHECK_INT(worse, 0);
    CHECK(better >= 24);
    printf("herald: %d of %d steps faster with the cache, none slower\n", better, cases);
}

/* The cache's memory in fits: small()'s table-wise tables put 10 x 4 fp32
 * = 160 bytes on GPU 0; a cache of 3 rows a GPU is 3 x (16 bytes of the
 * widest row, T0's 4 x 4, + 16 of index) = 96 bytes, so 256 bytes of HBM
 * fit and 255 do not (without the cache, 255 fit). A data-parallel table
 * is never cached: its width does not count; with only such tables the
 * cache costs nothing. */
static void test_cache_memory(void)
{
    weft_gpu g;
    weft_topo *t = NULL;
    weft_work_ctx *c = weft__test_work_ctx("switch:2,bw=100", "a100-80g", &g, &t);
    if (!c)
        return;
    weft_work_ctx_free(c);
    weft_dlrm m;
    small(&m, WEFT_EMB_TW);
    m.herald = (weft_emb_herald_params){3, 1, WEFT_EMB_LRU, WEFT_EMB_PLACE_RANDOM, 1};
    CHECK_INT(weft_dlrm_cache_bytes(&m), 96);
    for (int k = 0; k < 3; k++) {
        g.hbm_bytes = k == 0 ? 256 : 255;
        c = NULL;
        CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &c), WEFT_OK);
        if (!c)
            break;
        m.herald.rows_per_gpu = k == 2 ? 0 : 3;
        weft_dlrm_result r;
        CHECK_ERR(weft_dlrm_step(c, &m, &r, NULL), WEFT_OK);
        CHECK_INT(r.table_bytes_max, 160);
        CHECK_INT(r.cache_bytes, k == 2 ? 0 : 96);
        CHECK_INT(r.fits, k != 1);
        weft_work_ctx_free(c);
    }
    weft_topo_free(t);
    tabs[1].sharding = WEFT_EMB_DP;
    tabs[1].dim = 64;                        /* 128 bytes a row, not cached */
    CHECK_INT(weft_dlrm_cache_bytes(&m), 0); /* rows_per_gpu 0 */
    m.herald.rows_per_gpu = 3;
    CHECK_INT(weft_dlrm_cache_bytes(&m), 96);
    tabs[0].sharding = WEFT_EMB_DP;
    CHECK_INT(weft_dlrm_cache_bytes(&m), 0);
}

/* An all-to-all's transpose (comm.c, "Transposed matrices"): on a
 * reversible fabric (a100:2: duplex links, ECMP over the rails) the second
 * of a matrix and its transpose takes the first's time, and simulating the
 * transpose alone gives it within rounding; on a directed one (de Bruijn)
 * the transpose is simulated. */
/* The generator's lookups, each row-wise one's D*E to its owner, and the
 * matrix through weft_emb_acc_add: the sequential reference of the
 * step's embedding counts. */
typedef struct rw_ref {
    weft_emb_acc *a;
    const weft_emb_workload *w;
    uint64_t row_bytes[4];
} rw_ref;

static weft_err rw_ref_add(void *ctx, uint64_t s, uint32_t t, uint64_t r, weft_diag *d)
{
    rw_ref *p = ctx;
    const weft_emb_table *tb = &p->w->tables[t];
    uint64_t blk = (tb->rows + p->w->gpus - 1) / p->w->gpus;
    if (tb->sharding == WEFT_EMB_RW)
        p->row_bytes[r / blk] += (uint64_t)tb->dim * tb->dtype_bytes;
    return weft_emb_acc_add(p->a, s, t, r, d);
}

/* Sparse and dense row-wise steps with table-wise and data-parallel tables
 * beside, pooling up to 3: the lookups, the all-to-all's bytes and the
 * busiest GPU's row bytes are the reference's (4 GPUs: the table-wise
 * table on GPU 0 reads N*B*P*D*E = 4*5*2*16 rows' bytes there, the
 * data-parallel one B*P*D*E = 5*1*16 on each and writes B*D*E = 80), and
 * every figure of the step is the same at 1, 3 and 8 threads. */
static void test_rw_threads(void)
{
    weft_gpu g;
    weft_topo *t = NULL;
    weft_work_ctx *c = weft__test_work_ctx("switch:4,bw=100", "a100-80g", &g, &t);
    if (!c)
        return;
    weft_dlrm m;
    small(&m, WEFT_EMB_RW);
    weft_emb_table tb[5] = {
        {1000, 4, 3, 4, 1050, WEFT_EMB_RW, 1}, {37, 4, 1, 4, 0, WEFT_EMB_RW, 1},
        {100, 4, 2, 4, 0, WEFT_EMB_TW, 1},     {50, 4, 1, 4, 0, WEFT_EMB_DP, 1},
        {5000, 4, 2, 2, 800, WEFT_EMB_RW, 1},
    };
    m.emb = (weft_emb_workload){4, 5, 5, tb, 7, false};
    for (int dense = 0; dense < 2; dense++) {
        m.emb.rw_dense = dense;
        rw_ref ref = {NULL, &m.emb, {4 * 5 * 2 * 16 + 80, 80, 80, 80}};
        weft_emb_result want;
        CHECK_ERR(weft_emb_acc_new(&m.emb, &ref.a, NULL), WEFT_OK);
        CHECK_ERR(weft_emb_generate(&m.emb, rw_ref_add, &ref, NULL), WEFT_OK);
        CHECK_ERR(weft_emb_acc_finish(ref.a, &want, NULL), WEFT_OK);
        weft_emb_acc_free(ref.a);
        uint64_t a2a = 0, max_send = 0, best = 0, fwd = 0;
        uint32_t busiest = 0;
        for (uint32_t i = 0; i < 4; i++) {
            uint64_t sent = weft_traffic_send(&want.forward, i), outb = sent + 80;
            uint64_t off = sent - weft_traffic_at(&want.forward, i, i);
            a2a += off;
            max_send = off > max_send ? off : max_send;
            uint64_t f = ref.row_bytes[i] + outb, b = 2 * ref.row_bytes[i] + outb;
            if (i == 0 || f + b > best) {
                best = f + b;
                busiest = i;
                fwd = f;
            }
        }
        weft_emb_result_free(&want);
        static const unsigned threads[] = {1, 3, 8};
        weft_dlrm_result r[3];
        for (int k = 0; k < 3; k++) {
            weft_threads_set(threads[k]);
            CHECK_ERR(weft_dlrm_step(c, &m, &r[k], NULL), WEFT_OK);
            CHECK_INT(r[k].lookups, 4 * 5 * 9);
            CHECK_INT(r[k].a2a_bytes, a2a);
            CHECK_INT(r[k].a2a_max_send, max_send);
            CHECK_INT(r[k].busiest, busiest);
            CHECK_INT(r[k].lookup_fwd_bytes, fwd);
            CHECK_INT(r[k].lookup_bwd_bytes, best - fwd);
            CHECK(r[k].step_s == r[0].step_s && r[k].a2a_fwd_s == r[0].a2a_fwd_s &&
                  r[k].a2a_bwd_s == r[0].a2a_bwd_s && r[k].lookup_fwd_s == r[0].lookup_fwd_s);
        }
        /* The row-wise tables move something off the diagonal. */
        CHECK(a2a > 4 * 3 * 5 * 16);
    }
    weft_threads_set(0);
    weft_work_ctx_free(c);
    weft_topo_free(t);
}

static void test_transpose(void)
{
    static const char *const specs[] = {"a100:2", "debruijn:2,4"};
    weft_gpu g;
    CHECK(weft_gpu_find("a100-80g", &g));
    for (int si = 0; si < 2; si++) {
        weft_topo *t = weft__test_topo_spec(specs[si]);
        CHECK(t != NULL);
        if (!t)
            continue;
        weft_work_ctx *c = NULL, *fresh = NULL;
        CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &c), WEFT_OK);
        CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &fresh), WEFT_OK);
        uint32_t n = weft_topo_num_ranks(t);
        weft_traffic m, mt;
        CHECK_ERR(weft_traffic_new(n, &m, NULL), WEFT_OK);
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < n; j++)
                m.bytes[(size_t)i * n + j] = i == j ? 0 : 1000000 * (1 + (7 * i + 3 * j) % 11);
        CHECK_ERR(weft_traffic_transpose(&m, &mt, NULL), WEFT_OK);
        double s = 0, st = 0, alone = 0;
        CHECK_ERR(weft__work_traffic_s(c, &m, &s, NULL), WEFT_OK);
        CHECK_ERR(weft__work_traffic_s(c, &mt, &st, NULL), WEFT_OK);
        CHECK_ERR(weft__work_traffic_s(fresh, &mt, &alone, NULL), WEFT_OK);
        CHECK_INT(c->rev, si == 0 ? 1 : -1);
        if (si == 0) {
            CHECK(st == s);
            CHECK(fabs(alone - s) <= 1e-12 * s);
        } else {
            CHECK(st == alone);
        }
        weft_traffic_free(&m);
        weft_traffic_free(&mt);
        weft_work_ctx_free(c);
        weft_work_ctx_free(fresh);
        weft_topo_free(t);
    }
}

/* The choices of a are the first of b's (all of them when all), in the
 * same order. */
static void check_same_choices(const weft_work_ctx *a, const weft_work_ctx *b, bool all)
{
    size_t na, nb;
    const weft_work_choice *x = weft_work_choices(a, &na), *y = weft_work_choices(b, &nb);
    CHECK(all ? na == nb : na <= nb);
    for (size_t i = 0; i < na && i < nb; i++) {
        CHECK_STR(x[i].algo, y[i].algo);
        CHECK(x[i].time_s == y[i].time_s);
        CHECK_INT(x[i].bytes, y[i].bytes);
        CHECK_INT(x[i].matrix, y[i].matrix);
    }
}

/* Several all-to-alls at once (weft__work_traffics_s) give what the calls
 * one after another give, to the bit, at 1, 3 and 8 threads: each time,
 * the context's counter, last matrix and choices. The first batch: a
 * matrix, a zero one, its transpose (the first's time on the reversible
 * a100:2, simulated on de Bruijn), a second matrix, the first again
 * (simulated: the memo holds the second); the second batch: the first's
 * transpose (the context's last matrix's), the second, its transpose
 * (the one before's time); each in the default mode and ranked (coll
 * best, on 4 ranks). A matrix of other ranks fails a batch after the ones
 * before it took effect. */
static void test_batch(void)
{
    static const char *const specs[] = {"a100:2", "debruijn:2,4", "switch:4,bw=100"};
    weft_gpu g;
    CHECK(weft_gpu_find("a100-80g", &g));
    for (int si = 0; si < 3; si++) {
        weft_topo *t = weft__test_topo_spec(specs[si]);
        CHECK(t != NULL);
        if (!t)
            continue;
        uint32_t n = weft_topo_num_ranks(t);
        weft_traffic m[6], other;
        for (int k = 0; k < 6; k++)
            CHECK_ERR(weft_traffic_new(n, &m[k], NULL), WEFT_OK);
        CHECK_ERR(weft_traffic_new(n + 1, &other, NULL), WEFT_OK);
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < n; j++) {
                m[0].bytes[(size_t)i * n + j] = i == j ? 0 : 1000000 * (1 + (7 * i + 3 * j) % 11);
                m[3].bytes[(size_t)i * n + j] = 500000 * (1 + (5 * i + j) % 7);
            }
        weft_traffic_free(&m[2]);
        weft_traffic_free(&m[5]);
        CHECK_ERR(weft_traffic_transpose(&m[0], &m[2], NULL), WEFT_OK);
        CHECK_ERR(weft_traffic_transpose(&m[3], &m[5], NULL), WEFT_OK);
        memcpy(m[4].bytes, m[0].bytes, (size_t)n * n * sizeof *m[4].bytes);
        const weft_traffic *b1[5] = {&m[0], &m[1], &m[2], &m[3], &m[4]};
        const weft_traffic *b2[3] = {&m[2], &m[3], &m[5]};
        for (int best = 0; best < 2; best++) {
            if (best && n > 4)
                continue;
            weft_work_ctx *one = NULL;
            CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &one), WEFT_OK);
            if (!one)
                break;
            weft_work_ctx_set_coll_algo(one, best ? WEFT_WORK_COLL_BEST : WEFT_WORK_COLL_NCCL);
            double want[8];
            for (int k = 0; k < 8; k++)
                CHECK_ERR(weft__work_traffic_s(one, k < 5 ? b1[k] : b2[k - 5], &want[k], NULL),
                          WEFT_OK);
            CHECK(want[0] > 0 && want[1] == 0 && want[3] > 0 && want[3] != want[0]);
            CHECK(want[4] == want[0] && want[6] == want[3]);
            if (si == 0 && !best)
                CHECK(want[2] == want[0] && want[5] == want[0] && want[7] == want[3]);
            if (si == 1 && !best)
                CHECK(want[2] != want[0]);
            for (unsigned th = 1; th <= 8; th += th == 1 ? 2 : 5) {
                CHECK_ERR(weft_threads_set(th), WEFT_OK);
                weft_work_ctx *c = NULL;
                CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &c), WEFT_OK);
                if (!c)
                    break;
                weft_work_ctx_set_coll_algo(c, best ? WEFT_WORK_COLL_BEST : WEFT_WORK_COLL_NCCL);
                double got[8];
                CHECK_ERR(weft__work_traffics_s(c, b1, 5, got, NULL), WEFT_OK);
                CHECK_ERR(weft__work_traffics_s(c, b2, 3, got + 5, NULL), WEFT_OK);
                CHECK(!memcmp(got, want, sizeof got));
                CHECK_INT(c->sims, one->sims);
                CHECK_INT(c->rev, one->rev);
                CHECK(c->last_s == one->last_s);
                if (best)
                    CHECK(!c->last_bytes && !one->last_bytes);
                else
                    CHECK(
                        c->last_bytes && one->last_bytes &&
                        !memcmp(c->last_bytes, one->last_bytes, (size_t)n * n * sizeof(uint64_t)));
                check_same_choices(c, one, true);
                /* m[3] and m[2] take effect (on a100:2 neither the
                 * transpose of the one before), then other fails. */
                const weft_traffic *bad[4] = {&m[3], &m[2], &other, &m[0]};
                weft_diag d;
                uint32_t sims = c->sims;
                CHECK_ERR(weft__work_traffics_s(c, bad, 4, got, &d), WEFT_EINVAL);
                CHECK_STR(d.msg, n == 8 ? "traffic matrix of 9 ranks on a fabric of 8"
                                        : (n == 16 ? "traffic matrix of 17 ranks on a fabric of 16"
                                                   : "traffic matrix of 5 ranks on a fabric of 4"));
                CHECK_INT(c->sims, sims + 2);
                CHECK(got[0] == want[3]);
                weft_work_ctx_free(c);
            }
            weft_work_ctx_free(one);
        }
        CHECK_ERR(weft_threads_set(0), WEFT_OK);
        for (int k = 0; k < 6; k++)
            weft_traffic_free(&m[k]);
        weft_traffic_free(&other);
        weft_topo_free(t);
    }
}

/* Herald's step on h100:2 (16 GPUs), its all-to-alls simulated at once:
 * the same result to the bit at 1, 3 and 8 threads, in the default mode
 * and ranked (coll best: the same choices in the same order), and the
 * same times as the step's four matrices simulated one after another. */
static void test_herald_threads(void)
{
    weft_gpu g;
    CHECK(weft_gpu_find("h100-sxm", &g));
    weft_topo *t = weft__test_topo_spec("h100:2");
    CHECK(t != NULL);
    if (!t)
        return;
    uint32_t n = weft_topo_num_ranks(t);
    weft_emb_table tb[40];
    for (int k = 0; k < 40; k++)
        tb[k] = (weft_emb_table){20000, 32, 1, 4, 1050, WEFT_EMB_TW, 1};
    weft_dlrm m;
    small(&m, WEFT_EMB_TW);
    m.emb = (weft_emb_workload){n, 64, 40, tb, 7, false};
    m.herald = (weft_emb_herald_params){300, 1, WEFT_EMB_LRU, WEFT_EMB_PLACE_HERALD, 1};
    m.bottom[1] = 32;
    for (int best = 0; best < 2; best++) {
        weft_dlrm_result want;
        weft_work_ctx *first = NULL;
        for (unsigned th = 1; th <= 8; th += th == 1 ? 2 : 5) {
            CHECK_ERR(weft_threads_set(th), WEFT_OK);
            weft_work_ctx *c = NULL;
            CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &c), WEFT_OK);
            if (!c)
                break;
            weft_work_ctx_set_coll_algo(c, best ? WEFT_WORK_COLL_BEST : WEFT_WORK_COLL_NCCL);
            weft_dlrm_result r;
            CHECK_ERR(weft_dlrm_step(c, &m, &r, NULL), WEFT_OK);
            if (!first) {
                want = r;
                first = c;
                continue;
            }
            CHECK(!memcmp(&r, &want, sizeof r));
            CHECK_INT(c->sims, first->sims);
            check_same_choices(c, first, true);
            weft_work_ctx_free(c);
        }
        CHECK(want.herald && want.a2a_fwd_s > 0 && want.a2a_fwd_s < want.a2a_fwd_base_s);
        /* One after another on a fresh context. */
        weft_emb_herald_result h;
        weft_traffic back;
        CHECK_ERR(weft_emb_herald(&m.emb, &m.herald, &h, NULL), WEFT_OK);
        CHECK_ERR(weft_traffic_transpose(&h.forward_base, &back, NULL), WEFT_OK);
        weft_work_ctx *c = NULL;
        CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &c), WEFT_OK);
        weft_work_ctx_set_coll_algo(c, best ? WEFT_WORK_COLL_BEST : WEFT_WORK_COLL_NCCL);
        double s[4];
        CHECK_ERR(weft__work_traffic_s(c, &h.forward_base, &s[0], NULL), WEFT_OK);
        CHECK_ERR(weft__work_traffic_s(c, &back, &s[1], NULL), WEFT_OK);
        CHECK_ERR(weft__work_traffic_s(c, &h.forward, &s[2], NULL), WEFT_OK);
        CHECK_ERR(weft__work_traffic_s(c, &h.backward, &s[3], NULL), WEFT_OK);
        CHECK(s[0] == want.a2a_fwd_base_s && s[1] == want.a2a_bwd_base_s &&
              s[2] == want.a2a_fwd_s && s[3] == want.a2a_bwd_s);
        check_same_choices(c, first, false); /* then the all-reduces' */
        weft_work_ctx_free(c);
        weft_traffic_free(&back);
        weft_emb_herald_free(&h);
        weft_work_ctx_free(first);
    }
    CHECK_ERR(weft_threads_set(0), WEFT_OK);
    weft_topo_free(t);
}

/* The fields of a step that its simulations set, to the bit. */
static bool same_step(const weft_dlrm_result *a, const weft_dlrm_result *b)
{
    return a->step_s == b->step_s && a->step_base_s == b->step_base_s &&
           a->a2a_fwd_s == b->a2a_fwd_s && a->a2a_bwd_s == b->a2a_bwd_s &&
           a->a2a_fwd_bound_s == b->a2a_fwd_bound_s && a->a2a_bwd_bound_s == b->a2a_bwd_bound_s &&
           a->dense_ar_s == b->dense_ar_s && a->emb_ar_s == b->emb_ar_s &&
           a->lookup_fwd_s == b->lookup_fwd_s && a->a2a_bytes == b->a2a_bytes &&
           a->lookups == b->lookups && a->fits == b->fits && a->herald == b->herald;
}

/* Steps at once (weft_dlrm_steps) give what weft_dlrm_step gives one after
 * another, to the bit, at 1, 3 and 8 threads, with the context's counters
 * and caches alike after: a sweep's plans (tw, rw, dp, and dp with the
 * bounds: the same all-reduce, cached), on h100:2 (NVLS all-reduces) and
 * a100:2 (rings), and on a100:2 with ranked collectives as well (coll
 * best, at 3 threads: the all-to-alls at once, the all-reduces one after
 * another). A step with Herald's cache runs alone; a bad step fails the
 * call and zeroes every result. */
static void test_steps(void)
{
    static const char *const specs[] = {"h100:2", "a100:2"};
    for (int si = 0; si < 2; si++) {
        weft_gpu g;
        weft_topo *t = NULL;
        weft_work_ctx *one = weft__test_work_ctx(specs[si], "a100-80g", &g, &t);
        if (!one)
            return;
        static const weft_emb_sharding sh[4] = {WEFT_EMB_TW, WEFT_EMB_RW, WEFT_EMB_DP, WEFT_EMB_DP};
        weft_emb_table tb[4][3];
        weft_dlrm m[5];
        const weft_dlrm *mp[5];
        for (int k = 0; k < 5; k++) {
            small(&m[k], WEFT_EMB_TW);
            for (int i = 0; i < 3 && k < 4; i++)
                tb[k][i] = (weft_emb_table){100000u * (uint64_t)(i + 1), 4, 2, 4, 1050, sh[k], 1};
            m[k].emb = (weft_emb_workload){16, 64, 3, tb[k < 4 ? k : 1], 3, false};
            m[k].bound = k == 1 || k == 3;
            mp[k] = &m[k];
        }
        m[4].herald = (weft_emb_herald_params){50, 1, WEFT_EMB_LRU, WEFT_EMB_PLACE_HERALD, 1};
        for (int best = 0; best < 2 - (si == 0) && one; best++) {
            weft_work_ctx_set_coll_algo(one, best ? WEFT_WORK_COLL_BEST : WEFT_WORK_COLL_NCCL);
            weft_dlrm_result want[5];
            for (int k = 0; k < 5; k++)
                CHECK_ERR(weft_dlrm_step(one, &m[k], &want[k], NULL), WEFT_OK);
            CHECK(want[1].a2a_fwd_s > 0 && want[1].a2a_fwd_bound_s > 0 && want[2].emb_ar_s > 0 &&
                  want[3].a2a_fwd_bound_s == 0);
            CHECK(want[2].emb_ar_s == want[3].emb_ar_s && want[4].herald);
            for (unsigned th = best ? 3 : 1; th <= (best ? 3u : 8u); th += th == 1 ? 2 : 5) {
                CHECK_ERR(weft_threads_set(th), WEFT_OK);
                weft_work_ctx *c = NULL;
                CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &c), WEFT_OK);
                if (!c)
                    break;
                weft_work_ctx_set_coll_algo(c, best ? WEFT_WORK_COLL_BEST : WEFT_WORK_COLL_NCCL);
                weft_dlrm_result got[5];
                CHECK_ERR(weft_dlrm_steps(c, mp, 4, got, NULL), WEFT_OK);
                CHECK_ERR(weft_dlrm_steps(c, mp + 4, 1, got + 4, NULL), WEFT_OK);
                for (int k = 0; k < 5; k++)
                    CHECK(same_step(&got[k], &want[k]));
                CHECK_INT(c->sims, one->sims);
                CHECK_INT(c->hits, one->hits);
                CHECK_INT(c->gcache_n, one->gcache_n);
                check_same_choices(c, one, true);
                /* Herald's step among others: one after another, the same. */
                const weft_dlrm *mixed[3] = {&m[4], &m[1], &m[2]};
                CHECK_ERR(weft_dlrm_steps(c, mixed, 3, got, NULL), WEFT_OK);
                CHECK(same_step(&got[0], &want[4]) && same_step(&got[1], &want[1]) &&
                      same_step(&got[2], &want[2]));
                /* A step of other GPUs than the fabric's fails them all. */
                weft_dlrm bad = m[1];
                bad.emb.gpus = 15;
                const weft_dlrm *withbad[3] = {&m[0], &bad, &m[2]};
                weft_diag d;
                CHECK_ERR(weft_dlrm_steps(c, withbad, 3, got, &d), WEFT_EINVAL);
                CHECK_STR(d.msg, "dlrm: 15 GPUs in the workload, 16 ranks in the fabric");
                CHECK(got[0].step_s == 0 && got[2].step_s == 0);
                weft_work_ctx_free(c);
            }
            CHECK_ERR(weft_threads_set(0), WEFT_OK);
            /* The reference context starts afresh for the next mode. */
            weft_work_ctx_free(one);
            one = NULL;
            CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &one), WEFT_OK);
        }
        weft_work_ctx_free(one);
        weft_topo_free(t);
    }
}

/* All-reduces of several sizes at once (weft__work_traffics_groups_s),
 * alone and after matrices in the same call, give what the calls
 * one after another give, to the bit, at 1, 3 and 8 threads, with the
 * same counters and cache: a size cached before, a new one, nothing, the
 * new one again, another; all-gathers of ranked collectives (coll best,
 * at 1 thread) one after another. A matrix of other ranks fails the call
 * before any all-reduce takes effect. */
static void test_groups_batch(void)
{
    static const char *const specs[] = {"h100:2", "a100:2"};
    for (int si = 0; si < 2; si++) {
        weft_gpu g;
        weft_topo *t = NULL;
        weft_work_ctx *one = weft__test_work_ctx(specs[si], "a100-80g", &g, &t);
        if (!one)
            return;
        uint32_t n = weft_topo_num_ranks(t), pos[16];
        for (uint32_t i = 0; i < n; i++)
            pos[i] = i;
        weft_traffic m, other;
        CHECK_ERR(weft_traffic_new(n, &m, NULL), WEFT_OK);
        CHECK_ERR(weft_traffic_new(n + 1, &other, NULL), WEFT_OK);
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < n; j++)
                m.bytes[(size_t)i * n + j] = i == j ? 0 : 100000 * (1 + (3 * i + j) % 5);
        const uint64_t sizes[5] = {256 << 10, 1 << 20, 0, 1 << 20, 512 << 10};
        for (int best = 0; best < 2; best++) {
            weft_coll coll = best ? WEFT_COLL_ALLGATHER : WEFT_COLL_ALLREDUCE;
            weft_work_ctx_set_coll_algo(one, best ? WEFT_WORK_COLL_BEST : WEFT_WORK_COLL_NCCL);
            double want[6], wt;
            CHECK_ERR(weft__work_groups_s(one, coll, false, pos, n, n, sizes[0], &want[0], NULL),
                      WEFT_OK);
            CHECK_ERR(weft__work_traffic_s(one, &m, &wt, NULL), WEFT_OK);
            for (int k = 0; k < 5; k++)
                CHECK_ERR(
                    weft__work_groups_s(one, coll, false, pos, n, n, sizes[k], &want[1 + k], NULL),
                    WEFT_OK);
            CHECK(want[1] == want[0] && want[3] == 0 && want[2] == want[4] && want[5] > 0);
            for (unsigned th = 1; th <= (best ? 1u : 8u); th += th == 1 ? 2 : 5) {
                CHECK_ERR(weft_threads_set(th), WEFT_OK);
                for (int both = 0; both < 2; both++) {
                    weft_work_ctx *c = NULL;
                    CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &c), WEFT_OK);
                    if (!c)
                        break;
                    weft_work_ctx_set_coll_algo(c,
                                                best ? WEFT_WORK_COLL_BEST : WEFT_WORK_COLL_NCCL);
                    double got[6], at;
                    CHECK_ERR(
                        weft__work_groups_s(c, coll, false, pos, n, n, sizes[0], &got[0], NULL),
                        WEFT_OK);
                    const weft_traffic *ts[1] = {&m};
                    if (both) {
                        CHECK_ERR(weft__work_traffics_groups_s(c, ts, 1, &at, coll, pos, n, n,
                                                               sizes, 5, got + 1, NULL),
                                  WEFT_OK);
                    } else {
                        CHECK_ERR(weft__work_traffic_s(c, &m, &at, NULL), WEFT_OK);
                        CHECK_ERR(weft__work_traffics_groups_s(c, NULL, 0, NULL, coll, pos, n, n,
                                                               sizes, 5, got + 1, NULL),
                                  WEFT_OK);
                    }
                    CHECK(!memcmp(got + 1, want + 1, 5 * sizeof *got));
                    CHECK(at == wt);
                    CHECK_INT(c->sims, one->sims);
                    CHECK_INT(c->hits, one->hits);
                    CHECK_INT(c->gcache_n, one->gcache_n);
                    check_same_choices(c, one, true);
                    /* other fails the call: no all-reduce is cached. */
                    size_t cached = c->gcache_n;
                    const uint64_t fresh[1] = {768 << 10};
                    const weft_traffic *bad[2] = {&m, &other};
                    weft_diag d;
                    CHECK_ERR(weft__work_traffics_groups_s(c, bad, 2, got, coll, pos, n, n, fresh,
                                                           1, got + 2, &d),
                              WEFT_EINVAL);
                    CHECK(strstr(d.msg, "traffic matrix of") != NULL);
                    CHECK_INT(c->gcache_n, cached);
                    weft_work_ctx_free(c);
                }
            }
            CHECK_ERR(weft_threads_set(0), WEFT_OK);
            /* The reference context starts afresh for the next mode. */
            weft_work_ctx_free(one);
            one = NULL;
            CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &one), WEFT_OK);
            if (!one)
                break;
        }
        weft_work_ctx_free(one);
        weft_traffic_free(&m);
        weft_traffic_free(&other);
        weft_topo_free(t);
    }
}

int main(void)
{
    test_groups_batch();
    test_steps();
    test_batch();
    test_herald_threads();
    test_transpose();
    test_cache_memory();
    test_herald();
    test_small_tw();
    test_rw_threads();
    test_errors();
    test_mlperf();
    bench_big();
    return weft_test_done();
}
