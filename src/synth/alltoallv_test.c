/* Alltoallv plans of the classic all-to-alls (weft_synth_classic_traffic):
 * byte-exact op sizes and verifier results on skewed matrices, exact link
 * loads, and the simulated time of direct on a star against the closed
 * form (busiest link's bytes / bandwidth plus the latency the model
 * charges). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "weft/sim.h"
#include "weft/synth.h"

/* Rank s sends rank d M[s][d] bytes; rank 1 sends almost nothing and 2
 * only to 3 (whose downlink carries 3,000,000 + 4,000,000 bytes). */
static const uint64_t SK[16] = {0,           1000000, 2000000, 3000000, /**/ 500000, 0,
                                0,           0,       /**/ 0,  0,       0,           4000000,
                                /**/ 100000, 200000,  300000,  400000};

static void test_direct_exact(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_from_spec("switch:4,lat=1us", NULL, &t, &d), WEFT_OK);
    weft_traffic m = {4, (uint64_t *)SK};
    weft_plan *p = NULL;
    CHECK_ERR(weft_synth_classic_traffic(t, "direct", &m, 0, &p, &d), WEFT_OK);
    if (!p)
        return;
    /* One op per nonzero pair (9 of 16), each moving exactly its entry. */
    uint32_t n = weft_plan_num_ops(p);
    CHECK_INT(n, 9);
    uint64_t bytes[9], sum = 0;
    CHECK_ERR(weft_plan_op_bytes(p, bytes, &d), WEFT_OK);
    for (uint32_t i = 0; i < n && i < 9; i++) {
        weft_op op = weft_plan_op(p, i);
        CHECK_INT(bytes[i], SK[op.src_rank.v * 4 + op.dst_rank.v]);
        sum += bytes[i];
    }
    CHECK_INT(sum, 11500000);
    CHECK_ERR(weft_plan_verify(p, t, &d), WEFT_OK);
    CHECK_ERR(weft_plan_exec_check(p, NULL, &d), WEFT_OK);
    /* S = 11,500,000 / 4 bytes; sw0 -> rank3 carries 7,000,000 of them at
     * 100 GB/s: algbw = S / 70 us = 575/14 GB/s. */
    weft_plan_cost c;
    CHECK_ERR(weft_plan_cost_get(p, t, &c, &d), WEFT_OK);
    CHECK_INT(c.algbw.num, 575);
    CHECK_INT(c.algbw.den, 14);
    CHECK_STR(weft_topo_node_name(t, weft_topo_link_dst(t, c.busiest)), "rank3");
    CHECK_INT(c.busiest_load.num, 56); /* 7,000,000 / 2,875,000 */
    CHECK_INT(c.busiest_load.den, 23);
    /* The fluid model: every flow starts at 0 and pays its route's latency
     * (two links of 1 us) once; sw0 -> rank3 is busy throughout, so the
     * matrix takes 2 us + 7,000,000 B / 100 GB/s = 72 us; 5 us of alpha
     * adds 5 us. At twice the size every op moves twice its bytes. */
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    weft_sim_result r;
    CHECK_ERR(weft_sim_plan(t, p, 2875000, &o, &r, &d), WEFT_OK);
    CHECK(fabs(r.time_s - 72e-6) < 1e-15);
    o.alpha_s = 5e-6;
    CHECK_ERR(weft_sim_plan(t, p, 2875000, &o, &r, &d), WEFT_OK);
    CHECK(fabs(r.time_s - 77e-6) < 1e-15);
    o.alpha_s = 0;
    CHECK_ERR(weft_sim_plan(t, p, 5750000, &o, &r, &d), WEFT_OK);
    CHECK(fabs(r.time_s - 142e-6) < 1e-15);
    /* The alpha-beta estimate has no contention: the slowest single op. */
    double ab;
    CHECK_ERR(weft_plan_alpha_beta(p, t, 2875000, &ab, &d), WEFT_OK);
    CHECK(fabs(ab - 42e-6) < 1e-15);
    weft_plan_free(p);

    /* Pairwise keeps every step: N*N ops, the empty ones move 0 bytes. */
    CHECK_ERR(weft_synth_classic_traffic(t, "pairwise", &m, 0, &p, &d), WEFT_OK);
    if (p) {
        CHECK_INT(weft_plan_num_ops(p), 16);
        CHECK_ERR(weft_plan_verify(p, t, &d), WEFT_OK);
        CHECK_ERR(weft_plan_cost_get(p, t, &c, &d), WEFT_OK);
        CHECK_INT(c.algbw.num, 575);
        CHECK_INT(c.algbw.den, 14);
        /* Steps in order: 0->1, 1->2, 2->3, 3->0 (k=1) wait for nothing,
         * so the sum of each step's slowest pair plus latencies. */
        CHECK_ERR(weft_sim_plan(t, p, 2875000, &o, &r, &d), WEFT_OK);
        CHECK(r.time_s > 72e-6);
        weft_plan_free(p);
    }

    /* The matrix must be the fabric's size. */
    weft_traffic m3;
    CHECK_ERR(weft_traffic_uniform(3, 3, &m3, NULL), WEFT_OK);
    CHECK_ERR(weft_synth_classic_traffic(t, "direct", &m3, 0, &p, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "the traffic matrix has 3 ranks, the fabric 4");
    weft_traffic_free(&m3);
    CHECK_ERR(weft_synth_classic_traffic(t, "ring", &m, 0, &p, &d), WEFT_EUNSUPPORTED);
    weft_topo_free(t);
}

/* A MoE dispatch on 16 ranks: every op of direct moves its entry, and the
 * uniform matrix's plan costs what the plain alltoall plan costs at S. */
static void test_moe_and_uniform(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_from_spec("switch:16", NULL, &t, &d), WEFT_OK);
    weft_traffic_moe_params mp = {.ranks = 16,
                                  .experts = 64,
                                  .topk = 2,
                                  .tokens = 50,
                                  .hidden_bytes = 4096,
                                  .skew = WEFT_TRAFFIC_SKEW_ZIPF,
                                  .zipf_milli = 2000,
                                  .seed = 3};
    weft_traffic m;
    CHECK_ERR(weft_traffic_moe(&mp, &m, &d), WEFT_OK);
    weft_plan *p = NULL;
    CHECK_ERR(weft_synth_classic_traffic(t, "direct", &m, 0, &p, &d), WEFT_OK);
    if (p) {
        uint32_t n = weft_plan_num_ops(p), nonzero = 0;
        for (uint32_t k = 0; k < 256; k++)
            nonzero += m.bytes[k] != 0;
        CHECK_INT(n, nonzero);
        uint64_t *b = calloc(n + 1, sizeof *b);
        CHECK_ERR(weft_plan_op_bytes(p, b, &d), WEFT_OK);
        for (uint32_t i = 0; i < n; i++) {
            weft_op op = weft_plan_op(p, i);
            CHECK_INT(b[i], weft_traffic_at(&m, op.src_rank.v, op.dst_rank.v));
        }
        free(b);
        CHECK_ERR(weft_plan_verify(p, t, &d), WEFT_OK);
        CHECK_ERR(weft_plan_exec_check(p, NULL, &d), WEFT_OK);
        weft_plan_free(p);
    }
    weft_traffic_free(&m);

    CHECK_ERR(weft_traffic_uniform(16, 16 * 1024, &m, NULL), WEFT_OK);
    weft_plan *q = NULL;
    CHECK_ERR(weft_synth_classic_traffic(t, "direct", &m, 0, &p, &d), WEFT_OK);
    CHECK_ERR(weft_synth_classic(t, "direct", WEFT_COLL_ALLTOALL, (weft_rank){0}, &q, &d), WEFT_OK);
    if (p && q) {
        CHECK(weft_plan_traffic_size(p) == 16384.0);
        weft_plan_cost cp, cq;
        CHECK_ERR(weft_plan_cost_get(p, t, &cp, &d), WEFT_OK);
        CHECK_ERR(weft_plan_cost_get(q, t, &cq, &d), WEFT_OK);
        CHECK(weft_rat_eq(cp.algbw, cq.algbw));
        weft_sim_opts o;
        weft_sim_opts_init(&o);
        weft_sim_result rp, rq;
        CHECK_ERR(weft_sim_plan(t, p, 16384, &o, &rp, &d), WEFT_OK);
        CHECK_ERR(weft_sim_plan(t, q, 16384, &o, &rq, &d), WEFT_OK);
        CHECK(rp.time_s == rq.time_s);
    }
    weft_plan_free(p);
    weft_plan_free(q);
    weft_traffic_free(&m);
    weft_topo_free(t);
}

/* weft_synth_a2a_matrix: one copy per nonzero off-diagonal entry, in
 * order of sender then receiver, then rank 3's local copy of its own
 * 400,000 bytes, no deps; the plan verifies; bad matrices are refused. */
static void test_matrix(void)
{
    weft_diag d;
    weft_traffic m = {4, (uint64_t *)SK};
    weft_plan *p = NULL;
    CHECK_ERR(weft_synth_a2a_matrix(&m, &p, &d), WEFT_OK);
    if (!p)
        return;
    static const uint32_t want[9][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 0}, {2, 3},
                                        {3, 0}, {3, 1}, {3, 2}, {3, 3}};
    CHECK_INT(weft_plan_num_ops(p), 9);
    uint64_t bytes[9];
    CHECK_ERR(weft_plan_op_bytes(p, bytes, &d), WEFT_OK);
    for (uint32_t i = 0; i < 9 && i < weft_plan_num_ops(p); i++) {
        weft_op op = weft_plan_op(p, i);
        uint32_t nd;
        weft_plan_op_deps(p, i, &nd);
        CHECK_INT(op.src_rank.v, want[i][0]);
        CHECK_INT(op.dst_rank.v, want[i][1]);
        CHECK_INT(nd, 0);
        CHECK_INT(bytes[i], SK[want[i][0] * 4 + want[i][1]]);
    }
    CHECK_ERR(weft_plan_verify(p, NULL, &d), WEFT_OK);
    weft_plan_free(p);
    static const uint64_t diag[4] = {5, 0, 0, 7};
    weft_traffic own = {2, (uint64_t *)diag};
    CHECK_ERR(weft_synth_a2a_matrix(&own, &p, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "a2a matrix: nothing to send between distinct ranks");
    CHECK(p == NULL);
    CHECK_ERR(weft_synth_a2a_matrix(NULL, &p, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "a2a matrix: no traffic matrix");
}

int main(void)
{
    test_direct_exact();
    test_matrix();
    test_moe_and_uniform();
    return weft_test_done();
}
