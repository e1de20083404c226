/* The gpu model's choice of protocol (weft_sim_plan with proto -1) against
 * running each protocol alone: the same protocol and time to the bit,
 * though weft_sim_plan runs them by time bound with a cutoff and skips or
 * stops the slower ones (plan_sim.c), and searches each route once for all
 * of them (plan_route_memo, plan_ctx.h: the first protocol's flows are
 * built on searched routes, the others' on kept ones; LL, built first,
 * wins at 64 bytes a pair, Simple, built last, at 1 MiB; each protocol
 * alone searches its own). */
#include <string.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "weft/protocol.h"
#include "weft/sim.h"
#include "weft/traffic.h"

/* An alltoallv of 16 ranks, every pair a distinct size around `mean`
 * bytes: one copy per pair (as the DLRM step simulates its all-to-alls). */
static weft_plan *sparse_a2a(uint32_t n, uint64_t mean, weft_traffic *m)
{
    CHECK_ERR(weft_traffic_new(n, m, NULL), WEFT_OK);
    weft_plan_info info = {WEFT_COLL_ALLTOALL, n, {0}, 1, 0, false};
    weft_plan *p = NULL;
    CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
    if (!p || !m->bytes)
        return NULL;
    uint64_t x = 12345;
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = 0; b < n; b++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            m->bytes[(size_t)a * n + b] = mean / 2 + (x >> 33) % mean;
            if (a == b)
                continue;
            weft_op op = {WEFT_OP_COPY, {a}, {b}, WEFT_BUF_IN, WEFT_BUF_OUT, b, a, 1, 0};
            CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, NULL), WEFT_OK);
        }
    CHECK_ERR(weft_plan_set_traffic(p, m, NULL), WEFT_OK);
    return p;
}

/* At `mean` bytes a pair, the protocol `want` wins. */
static void check_choice(const weft_topo *t, uint64_t mean, int want)
{
    weft_traffic m = {0, NULL};
    weft_plan *p = sparse_a2a(weft_topo_num_ranks(t), mean, &m);
    if (!p)
        return;
    uint64_t size = (uint64_t)(weft_plan_traffic_size(p) + 0.5);
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    o.model = WEFT_SIM_GPU;
    weft_sim_result all, one[WEFT_PROTO_COUNT];
    CHECK_ERR(weft_sim_plan(t, p, size, &o, &all, NULL), WEFT_OK);
    int best = -1;
    for (int k = 0; k < WEFT_PROTO_COUNT; k++) {
        o.proto = k;
        CHECK_ERR(weft_sim_plan(t, p, size, &o, &one[k], NULL), WEFT_OK);
        if (best < 0 || one[k].time_s < one[best].time_s)
            best = k;
    }
    CHECK_INT(best, want);
    CHECK_INT(all.proto, best);
    CHECK(!memcmp(&all.time_s, &one[best].time_s, sizeof all.time_s));
    CHECK(!memcmp(&all.conservation_err, &one[best].conservation_err, sizeof(double)));
    CHECK_INT(all.n_busiest, one[best].n_busiest);
    for (uint32_t i = 0; i < all.n_busiest && i < WEFT_SIM_BUSIEST; i++)
        CHECK(all.busiest[i].util == one[best].busiest[i].util);
    /* The protocols differ: a choice that ran only the first would fail. */
    CHECK(one[WEFT_PROTO_LL].time_s != one[WEFT_PROTO_SIMPLE].time_s);
    weft_plan_free(p);
    weft_traffic_free(&m);
}

int main(void)
{
    weft_topo *t = weft__test_topo_spec("h100:2");
    if (!t)
        return 1;
    check_choice(t, 64, WEFT_PROTO_LL);
    check_choice(t, 1 << 20, WEFT_PROTO_SIMPLE);
    weft_topo_free(t);
    return weft_test_done();
}
