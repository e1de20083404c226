/* The cost model: exact link loads, throughput limit, busiest link, steps,
 * alpha-beta times, explicit routes and their errors. */
#include <math.h>

#include "base/testing.h"
#include "weft/plan.h"
#include "weft/synth.h"

static weft_rat R(int64_t n, int64_t d)
{
    weft_rat r = {0, 1};
    weft_rat_make(n, d, &r);
    return r;
}

static bool close_rel(double a, double b)
{
    return fabs(a - b) <= 1e-12 * fabs(b);
}

int main(void)
{
    weft_diag d;
    weft_topo *t = NULL;
    CHECK_ERR(weft_topo_preset("switch:4,bw=100,lat=1us", &t, &d), WEFT_OK);
    if (!t)
        return weft_test_done();
    weft_plan *p = NULL;
    CHECK_ERR(weft_synth_classic(t, "ring", WEFT_COLL_ALLGATHER, (weft_rank){0}, &p, &d), WEFT_OK);
    weft_rat load[8];
    CHECK_ERR(weft_plan_link_loads(p, t, load, &d), WEFT_OK);
    /* Every rank sends 3 of the 4 chunks to the switch and receives 3. */
    for (uint32_t l = 0; l < weft_topo_num_links(t); l++)
        CHECK(weft_rat_eq(load[l], R(3, 4)));
    weft_plan_cost c;
    CHECK_ERR(weft_plan_cost_get(p, t, &c, &d), WEFT_OK);
    CHECK(weft_rat_eq(c.algbw, R(400, 3)));
    CHECK(c.has_busiest);
    CHECK_INT(c.busiest.v, 0); /* the lowest id among equals */
    CHECK(weft_rat_eq(c.busiest_load, R(3, 4)));
    CHECK_INT(c.steps, 3);
    CHECK_INT(c.transfers, 12);
    /* Alpha-beta: 3 dependent steps, each 2 hops of 1 us plus a quarter of
     * S at 100 GB/s. */
    double s = 0, size = 4e6;
    CHECK_ERR(weft_plan_alpha_beta(p, t, size, &s, &d), WEFT_OK);
    CHECK(close_rel(s, 3 * (2e-6 + size / 4 / 100e9)));
    weft_plan_free(p);

    /* An explicit route: half over each of two paths in a 4-ring. */
    weft_topo *ring = NULL;
    CHECK_ERR(weft_topo_preset("biring:4", &ring, &d), WEFT_OK);
    weft_plan_info info = {WEFT_COLL_BROADCAST, 4, {0}, 1, 0, true};
    CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
    weft_op op = {WEFT_OP_COPY, {0}, {2}, WEFT_BUF_OUT, WEFT_BUF_OUT, 0, 0, 1, 0};
    uint32_t id;
    CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, &id), WEFT_OK);
    const char *via1[] = {"rank0", "rank1", "rank2"}, *via3[] = {"rank0", "rank3", "rank2"};
    CHECK_ERR(weft_plan_add_path(p, id, R(1, 4), via1, 3), WEFT_OK);
    CHECK_ERR(weft_plan_add_path(p, id, R(3, 4), via3, 3), WEFT_OK);
    weft_rat rl[16];
    CHECK_ERR(weft_plan_link_loads(p, ring, rl, &d), WEFT_OK);
    weft_node_id n0 = {0}, n1 = {0}, n3 = {0};
    weft_link_id l01, l03;
    CHECK(weft_topo_find_node(ring, "rank0", &n0) && weft_topo_find_node(ring, "rank1", &n1) &&
          weft_topo_find_node(ring, "rank3", &n3));
    CHECK(weft_topo_find_link(ring, n0, n1, &l01) && weft_topo_find_link(ring, n0, n3, &l03));
    CHECK(weft_rat_eq(rl[l01.v], R(1, 4)));
    CHECK(weft_rat_eq(rl[l03.v], R(3, 4)));
    CHECK_ERR(weft_plan_cost_get(p, ring, &c, &d), WEFT_OK);
    CHECK(weft_rat_eq(c.algbw, R(400, 3)));
    CHECK_INT(c.busiest.v, l03.v);
    /* Without a route the op takes both shortest paths, half each. */
    weft_plan_clear_route(p, id);
    CHECK_ERR(weft_plan_link_loads(p, ring, rl, &d), WEFT_OK);
    CHECK(weft_rat_eq(rl[l01.v], R(1, 2)));
    CHECK(weft_rat_eq(rl[l03.v], R(1, 2)));
    /* A route over a missing link, and over an unknown node. */
    const char *bad[] = {"rank0", "rank2"}, *unknown[] = {"rank0", "gpu9", "rank2"};
    CHECK_ERR(weft_plan_add_path(p, id, R(1, 1), bad, 2), WEFT_OK);
    CHECK_ERR(weft_plan_cost_get(p, ring, &c, &d), WEFT_ETOPO);
    CHECK_STR(d.msg, "op 0: route uses rank0 -> rank2, which is not a link");
    weft_plan_clear_route(p, id);
    CHECK_ERR(weft_plan_add_path(p, id, R(1, 1), unknown, 3), WEFT_OK);
    CHECK_ERR(weft_plan_link_loads(p, ring, rl, &d), WEFT_ETOPO);
    CHECK_STR(d.msg, "op 0: route node 'gpu9' is not in the fabric");
    /* Rank counts must match. */
    weft_plan_free(p);
    info.nranks = 5;
    CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
    CHECK_ERR(weft_plan_cost_get(p, ring, &c, &d), WEFT_ETOPO);
    CHECK_STR(d.msg, "the plan has 5 ranks but the fabric has 4");
    weft_plan_free(p);
    weft_topo_free(ring);
    weft_topo_free(t);
    return weft_test_done();
}
