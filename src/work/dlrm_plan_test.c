/* The DLRM sharding planner (weft_dlrm_plan): its cost model on a
 * hand-computed case, its choice against a brute force over every plan of
 * a tiny model, the descent never worse than a uniform plan, and the Herald
 * cache's memory in its check of a plan as in the step's `fits`. */
#include <math.h>
#include <string.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "weft/dlrm.h"
#include "work/testing_work.h"

static void model(weft_dlrm *m, weft_emb_table *tb, uint32_t nt, uint32_t gpus, uint64_t batch)
{
    memset(m, 0, sizeof *m);
    strcpy(m->name, "plan");
    m->dense_features = 3;
    m->bottom[0] = 8;
    m->nbottom = 1;
    m->top[0] = 1;
    m->ntop = 1;
    m->prec = WEFT_PREC_BF16;
    m->emb = (weft_emb_workload){gpus, batch, nt, tb, 1, false};
}

/* 2 GPUs, 4 samples each; one table of 100 rows x 8 fp32, 2 lookups a
 * sample, on GPU 0. GPU 0 reads N*B*P*D*E = 2*4*2*32 = 512 bytes of rows,
 * writes N*B*D*E = 256 of pooled vectors, sends 128 to GPU 1 (which
 * receives 128). With 1 GB/s everywhere: (3*512 + 2*256) / 1e9 +
 * 2 * 128 / 1e9 s. Data-parallel: every GPU reads B*P*D*E = 256, writes
 * 128; the all-reduce of 3200 bytes. */
static void test_cost(void)
{
    weft_emb_table tb[1] = {{100, 8, 2, 4, 0, WEFT_EMB_TW, 1}};
    weft_dlrm m;
    model(&m, tb, 1, 2, 4);
    weft_dlrm_costs k = {1e9, 1e12, 1e9, 1e9, 0, 0};
    CHECK(fabs(weft_dlrm_plan_cost(&m, &k) - (2048 + 256) / 1e9) < 1e-18);
    tb[0].sharding = WEFT_EMB_DP;
    CHECK(fabs(weft_dlrm_plan_cost(&m, &k) - (3 * 256 + 2 * 128 + 3200) / 1e9) < 1e-18);
    /* Row-wise: each GPU reads B*P*D*E = 256; a bag reaches a block with
     * probability 1 - (1/2)^2 = 3/4: out 2*4*0.75*32 = 192, send = recv =
     * 96. */
    tb[0].sharding = WEFT_EMB_RW;
    CHECK(fabs(weft_dlrm_plan_cost(&m, &k) - (3 * 256 + 2 * 192 + 2 * 96) / 1e9) < 1e-18);
    /* Too big for the GPU: infinity. */
    k.hbm_bytes = 1000;
    tb[0].sharding = WEFT_EMB_TW;
    CHECK(isinf(weft_dlrm_plan_cost(&m, &k)));
}

static const weft_emb_sharding kinds[5] = {WEFT_EMB_TW, WEFT_EMB_RW, WEFT_EMB_CW, WEFT_EMB_CW,
                                           WEFT_EMB_DP};
static const uint32_t shards[5] = {1, 1, 2, 4, 1};

/* The cheapest of every plan (table 0's option fastest), by the cost
 * model, written into best. */
static double brute(weft_dlrm *m, weft_emb_table *tb, const weft_dlrm_costs *k,
                    weft_emb_table *best)
{
    uint32_t nt = m->emb.ntables, dig[8] = {0};
    double low = INFINITY;
    for (;;) {
        bool ok = true;
        for (uint32_t t = 0; t < nt; t++) {
            tb[t].sharding = kinds[dig[t]];
            tb[t].col_shards = shards[dig[t]];
            ok &= shards[dig[t]] <= tb[t].dim;
        }
        if (ok) {
            double c = weft_dlrm_plan_cost(m, k);
            if (c < low) {
                low = c;
                memcpy(best, tb, nt * sizeof *tb);
            }
        }
        uint32_t t = 0;
        while (t < nt && ++dig[t] == 5)
            dig[t++] = 0;
        if (t == nt)
            break;
    }
    return low;
}

static void test_brute(void)
{
    weft_gpu g;
    weft_topo *topo = NULL;
    weft_work_ctx *c = weft__test_work_ctx("switch:2,bw=100", "a100-80g", &g, &topo);
    if (!c)
        return;
    /* A big hot table, a tiny one, a mid one of dim 2 (no cw:4). */
    weft_emb_table tb[3] = {{300000000, 128, 8, 4, 0, WEFT_EMB_TW, 1},
                            {10, 128, 1, 4, 0, WEFT_EMB_TW, 1},
                            {50000, 2, 20, 2, 0, WEFT_EMB_TW, 1}};
    weft_emb_table orig[3], plan[3], want[3];
    memcpy(orig, tb, sizeof tb);
    weft_dlrm m;
    model(&m, tb, 3, 2, 4096);
    weft_dlrm_plan_info info;
    CHECK_ERR(weft_dlrm_plan(c, &m, plan, &info, NULL), WEFT_OK);
    CHECK(info.exhaustive);
    CHECK_INT(info.evaluated, 4 + 5 * 5 * 4); /* no uniform cw:4 */
    weft_dlrm_costs k;
    CHECK_ERR(weft_dlrm_costs_calibrate(c, &m, &k, NULL), WEFT_OK);
    double low = brute(&m, tb, &k, want);
    CHECK(info.cost_s == low);
    int same = 0;
    for (uint32_t t = 0; t < 3; t++)
        same += plan[t].sharding == want[t].sharding && plan[t].col_shards == want[t].col_shards;
    CHECK_INT(same, 3);
    CHECK(info.cost_s <= info.uniform_s);
    printf("3 tables: plan %s/%u %s/%u %s/%u, %.6g s (uniform %.6g s)\n",
           weft_emb_sharding_name(plan[0].sharding), plan[0].col_shards,
           weft_emb_sharding_name(plan[1].sharding), plan[1].col_shards,
           weft_emb_sharding_name(plan[2].sharding), plan[2].col_shards, info.cost_s,
           info.uniform_s);
    /* Six tables (5^6 plans): the descent, never above the best uniform
     * plan nor below the brute force. */
    weft_emb_table t6[6], p6[6], w6[6];
    for (uint32_t t = 0; t < 6; t++)
        t6[t] = (weft_emb_table){(uint64_t)1000 << (3 * t), 8, 1 + t, 4, 0, WEFT_EMB_TW, 1};
    model(&m, t6, 6, 2, 4096);
    CHECK_ERR(weft_dlrm_plan(c, &m, p6, &info, NULL), WEFT_OK);
    CHECK(!info.exhaustive);
    CHECK(info.cost_s <= info.uniform_s);
    CHECK_ERR(weft_dlrm_costs_calibrate(c, &m, &k, NULL), WEFT_OK);
    low = brute(&m, t6, &k, w6);
    CHECK(info.cost_s >= low);
    printf("descent over 6 tables: %.6g s, brute force %.6g s, best uniform %.6g s\n", info.cost_s,
           low, info.uniform_s);
    weft_work_ctx_free(c);
    weft_topo_free(topo);
    (void)orig;
}

/* The cache's memory counts in the planner's check of a plan, as in the
 * step's `fits` (weft_dlrm_cache_bytes): a plan that fits without the
 * cache and not with it costs infinity, and the planner offers one that
 * fits. */
static void test_cache(void)
{
    /* By hand: 100 rows x 8 fp32 = 3,200 bytes on GPU 0 (tw); 10 cache
     * slots of 32 + 16 bytes = 480. 3,500 bytes of HBM hold the table, not
     * the table and the cache. Row-wise holds 50 rows (1,600 bytes) + 480;
     * data-parallel 3,200 and no cache (no table is not dp). */
    weft_emb_table tb[1] = {{100, 8, 2, 4, 0, WEFT_EMB_TW, 1}};
    weft_dlrm m;
    model(&m, tb, 1, 2, 4);
    weft_dlrm_costs k = {1e9, 3500, 1e9, 1e9, 0, 0};
    CHECK(fabs(weft_dlrm_plan_cost(&m, &k) - (2048 + 256) / 1e9) < 1e-18);
    m.herald.rows_per_gpu = 10;
    CHECK_INT(weft_dlrm_cache_bytes(&m), 480);
    CHECK(isinf(weft_dlrm_plan_cost(&m, &k)));
    k.hbm_bytes = 3680;
    CHECK(fabs(weft_dlrm_plan_cost(&m, &k) - (2048 + 256) / 1e9) < 1e-18);
    k.hbm_bytes = 3500;
    tb[0].sharding = WEFT_EMB_RW;
    CHECK(fabs(weft_dlrm_plan_cost(&m, &k) - (3 * 256 + 2 * 192 + 2 * 96) / 1e9) < 1e-18);
    tb[0].sharding = WEFT_EMB_DP;
    CHECK(fabs(weft_dlrm_plan_cost(&m, &k) - (3 * 256 + 2 * 128 + 3200) / 1e9) < 1e-18);

    /* The planner on 2 GPUs: tables of 3,000 and 2,000 rows x 8 fp32
     * (96,000 and 64,000 bytes), 4 lookups a sample. tw and cw:2 cost the
     * same (each GPU reads, writes and sends the same bytes), so without
     * a cache the first cheapest, tw/tw (96,000 bytes on GPU 0), fits
     * 100,000 bytes of HBM. With 100 cache slots (100 x 48 = 4,800 bytes)
     * it does not; cw:2/cw:2 (80,000 + 4,800 a GPU) costs the same and
     * fits, and the step says so. */
    weft_gpu g;
    weft_topo *topo = NULL;
    weft_work_ctx *c = weft__test_work_ctx("switch:2,bw=100", "a100-80g", &g, &topo);
    if (!c)
        return;
    g.hbm_bytes = 100000;
    weft_emb_table two[2] = {{3000, 8, 4, 4, 0, WEFT_EMB_TW, 1},
                             {2000, 8, 4, 4, 0, WEFT_EMB_TW, 1}};
    weft_emb_table plan[2];
    model(&m, two, 2, 2, 256);
    weft_dlrm_plan_info info, cached;
    weft_dlrm_result r;
    CHECK_ERR(weft_dlrm_plan(c, &m, plan, &info, NULL), WEFT_OK);
    CHECK(plan[0].sharding == WEFT_EMB_TW && plan[1].sharding == WEFT_EMB_TW);
    m.emb.tables = plan;
    CHECK_ERR(weft_dlrm_step(c, &m, &r, NULL), WEFT_OK);
    CHECK_INT(r.table_bytes_max, 96000);
    CHECK_INT(r.cache_bytes, 0);
    CHECK(r.fits);
    m.emb.tables = two;
    m.herald.rows_per_gpu = 100;
    CHECK_ERR(weft_dlrm_plan(c, &m, plan, &cached, NULL), WEFT_OK);
    CHECK(plan[0].sharding == WEFT_EMB_CW && plan[0].col_shards == 2);
    CHECK(plan[1].sharding == WEFT_EMB_CW && plan[1].col_shards == 2);
    CHECK(cached.cost_s == info.cost_s);
    m.emb.tables = plan;
    CHECK_ERR(weft_dlrm_step(c, &m, &r, NULL), WEFT_OK);
    CHECK_INT(r.table_bytes_max, 80000);
    CHECK_INT(r.cache_bytes, 4800);
    CHECK(r.fits);
    weft_work_ctx_free(c);
    weft_topo_free(topo);
}

int main(void)
{
    test_cost();
    test_brute();
    test_cache();
    return weft_test_done();
}
