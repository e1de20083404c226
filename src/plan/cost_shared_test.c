/* The shared-link estimate (weft_plan_shared_time): values worked out by
 * hand on small fabrics (steps sharing a link, pipelining, latency,
 * explicit routes, local ops), where alpha-beta and it differ, its errors,
 * and allocation failures. How it ranks plans against the simulator is
 * src/sim/shared_rank_test.c. */
#include <math.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "weft/plan.h"
#include "weft/synth.h"

static bool close_rel(double a, double b)
{
    return fabs(a - b) <= 1e-12 * fabs(b);
}

static weft_rat R(int64_t n, int64_t d)
{
    weft_rat r = {0, 1};
    weft_rat_make(n, d, &r);
    return r;
}

static weft_plan_shared est(const weft_plan *p, const weft_topo *t, double size, uint32_t slices)
{
    weft_plan_shared s;
    memset(&s, 0, sizeof s);
    weft_plan_shared_opts o;
    weft_plan_shared_opts_init(&o);
    o.slices = slices;
    weft_diag d;
    weft_err e = weft_plan_shared_time(p, t, size, &o, &s, &d);
    if (e)
        fprintf(stderr, "weft_plan_shared_time: %s\n", d.msg);
    CHECK_ERR(e, WEFT_OK);
    return s;
}

/* switch:4 (100 GB/s, 1 us per link): the ring allgather moves one quarter
 * of S per step from every rank (3 steps), the biring two eighths, one
 * each way. Either way every rank's uplink carries S/4 per step. */
static void test_rings(void)
{
    weft_topo *t = weft__test_topo_spec("switch:4,bw=100,lat=1us");
    weft_plan *ring = NULL, *biring = NULL;
    CHECK_ERR(weft_synth_classic(t, "ring", WEFT_COLL_ALLGATHER, (weft_rank){0}, &ring, NULL),
              WEFT_OK);
    CHECK_ERR(weft_synth_classic(t, "biring", WEFT_COLL_ALLGATHER, (weft_rank){0}, &biring, NULL),
              WEFT_OK);
    if (!ring || !biring)
        goto done;
    double S = 4e6, q = S / 4 / 100e9; /* one step's bytes on an uplink: 10 us */
    /* One slice: 3 steps of (2 us of latency + 10 us); links 3 x 10 us. */
    weft_plan_shared s = est(ring, t, S, 1);
    CHECK_INT(s.steps, 3);
    CHECK(close_rel(s.steps_s, 3 * (2e-6 + q)));
    CHECK(close_rel(s.link_s, 3 * q));
    CHECK(close_rel(s.seconds, 36e-6));
    CHECK(s.has_busiest);
    CHECK_INT(s.busiest.v, 0);
    /* Four slices: stages of 2 us + 2.5 us, pipelined over 3 + 4 - 1 = 6
     * stages (27 us), but the links need 30 us plus the latency of those 6
     * stages (12 us): 42 us, the pipelined ring's time in the simulator
     * (docs/sim.md; src/sim/shared_rank_test.c checks it). */
    s = est(ring, t, S, 4);
    CHECK(close_rel(s.steps_s, 6 * (2e-6 + q / 4)));
    CHECK(close_rel(s.latency_s, 6 * 2e-6));
    CHECK(close_rel(s.seconds, 3 * q + 6 * 2e-6));
    /* The biring is no faster: its two rings share every uplink. Alpha-beta
     * gives every op its whole path and counts it faster. */
    weft_plan_shared b = est(biring, t, S, 1);
    CHECK_INT(b.steps, 3);
    CHECK(close_rel(b.seconds, 36e-6));
    CHECK(close_rel(est(biring, t, S, 4).seconds, 42e-6));
    double ab_ring = 0, ab_biring = 0;
    CHECK_ERR(weft_plan_alpha_beta(ring, t, S, &ab_ring, NULL), WEFT_OK);
    CHECK_ERR(weft_plan_alpha_beta(biring, t, S, &ab_biring, NULL), WEFT_OK);
    CHECK(close_rel(ab_ring, 36e-6));
    CHECK(close_rel(ab_biring, 3 * (2e-6 + q / 2)));
    /* Size 0: latencies only, and no link carries anything. */
    s = est(ring, t, 0, 1);
    CHECK(close_rel(s.seconds, 6e-6));
    CHECK(s.link_s == 0);
    CHECK(!s.has_busiest);
    /* Defaults (NULL options) are one slice, no alpha; alpha adds to every
     * stage. */
    CHECK_ERR(weft_plan_shared_time(ring, t, S, NULL, &s, NULL), WEFT_OK);
    CHECK(close_rel(s.seconds, 36e-6));
    weft_plan_shared_opts o;
    weft_plan_shared_opts_init(&o);
    CHECK_INT(o.slices, 1);
    CHECK(o.alpha_s == 0);
    o.alpha_s = 1e-6;
    CHECK_ERR(weft_plan_shared_time(ring, t, S, &o, &s, NULL), WEFT_OK);
    CHECK(close_rel(s.seconds, 3 * (3e-6 + q)));
done:
    weft_plan_free(ring);
    weft_plan_free(biring);
    weft_topo_free(t);
}

/* A broadcast from rank 0 straight to the three others, all at once: one
 * step, but rank 0's uplink carries S three times. Alpha-beta sees one
 * transfer's time. */
static void test_fan_out(void)
{
    weft_topo *t = weft__test_topo_spec("switch:4,bw=50");
    weft_plan_info info = {WEFT_COLL_BROADCAST, 4, {0}, 1, 0, true};
    weft_plan *p = NULL;
    CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
    for (uint32_t r = 1; p && r < 4; r++) {
        weft_op op = {WEFT_OP_COPY, {0}, {r}, WEFT_BUF_OUT, WEFT_BUF_OUT, 0, 0, 1, 0};
        uint32_t id;
        CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, &id), WEFT_OK);
    }
    /* A local op and a nop cost nothing and add no step. */
    weft_op local = {WEFT_OP_COPY, {1}, {1}, WEFT_BUF_OUT, WEFT_BUF_SCRATCH, 0, 0, 1, 0};
    uint32_t id, dep = 0;
    CHECK_ERR(weft_plan_add_op(p, &local, &dep, 1, &id), WEFT_OK);
    weft_op nop = {WEFT_OP_NOP, {2}, {2}, 0, 0, 0, 0, 0, 0};
    CHECK_ERR(weft_plan_add_op(p, &nop, &id, 1, &id), WEFT_OK);
    double S = 1e6;
    weft_plan_shared s = est(p, t, S, 1);
    CHECK_INT(s.steps, 1);
    CHECK(close_rel(s.seconds, 3 * S / 50e9));
    CHECK(close_rel(s.steps_s, 3 * S / 50e9));
    CHECK(close_rel(s.link_s, 3 * S / 50e9));
    weft_node_id r0, sw;
    weft_link_id up;
    CHECK(weft_topo_find_node(t, "rank0", &r0) && weft_topo_find_node(t, "sw0", &sw) &&
          weft_topo_find_link(t, r0, sw, &up));
    CHECK_INT(s.busiest.v, up.v);
    double ab = 0;
    CHECK_ERR(weft_plan_alpha_beta(p, t, S, &ab, NULL), WEFT_OK);
    CHECK(close_rel(ab, S / 50e9));
    weft_plan_free(p);
    weft_topo_free(t);
}

/* An explicit route on biring:4 (100 GB/s): a quarter over rank 1, three
 * quarters over rank 3. The op alone is limited by its 3/4 share. */
static void test_route(void)
{
    weft_topo *t = weft__test_topo_spec("biring:4,lat=1us");
    weft_plan_info info = {WEFT_COLL_BROADCAST, 4, {0}, 1, 0, true};
    weft_plan *p = NULL;
    CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
    weft_op op = {WEFT_OP_COPY, {0}, {2}, WEFT_BUF_OUT, WEFT_BUF_OUT, 0, 0, 1, 0};
    uint32_t id;
    CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, &id), WEFT_OK);
    const char *via1[] = {"rank0", "rank1", "rank2"}, *via3[] = {"rank0", "rank3", "rank2"};
    CHECK_ERR(weft_plan_add_path(p, id, R(1, 4), via1, 3), WEFT_OK);
    CHECK_ERR(weft_plan_add_path(p, id, R(3, 4), via3, 3), WEFT_OK);
    double S = 1e6;
    weft_plan_shared s = est(p, t, S, 1);
    CHECK(close_rel(s.steps_s, 2e-6 + 0.75 * S / 100e9));
    CHECK(close_rel(s.link_s, 0.75 * S / 100e9));
    CHECK(close_rel(s.seconds, 2e-6 + 0.75 * S / 100e9));
    /* A route over a missing link is the fabric's error, named. */
    const char *bad[] = {"rank0", "rank2"};
    weft_plan_clear_route(p, id);
    CHECK_ERR(weft_plan_add_path(p, id, R(1, 1), bad, 2), WEFT_OK);
    weft_diag d;
    CHECK_ERR(weft_plan_shared_time(p, t, S, NULL, &s, &d), WEFT_ETOPO);
    CHECK_STR(d.msg, "op 0: route uses rank0 -> rank2, which is not a link");
    weft_plan_free(p);
    weft_topo_free(t);
}

static void test_errors(void)
{
    weft_topo *t = weft__test_topo_spec("switch:4");
    weft_topo *t8 = weft__test_topo_spec("switch:8");
    weft_plan *p = NULL;
    CHECK_ERR(weft_synth_classic(t, "ring", WEFT_COLL_ALLREDUCE, (weft_rank){0}, &p, NULL),
              WEFT_OK);
    weft_plan_shared s;
    weft_diag d;
    weft_plan_shared_opts o;
    weft_plan_shared_opts_init(&o);
    o.slices = 0;
    CHECK_ERR(weft_plan_shared_time(p, t, 1e6, &o, &s, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "shared-link estimate: slices must be >= 1 (got 0), alpha and size >= 0 "
                     "(got 0 s, 1e+06 B)");
    CHECK_ERR(weft_plan_shared_time(p, t, NAN, NULL, &s, &d), WEFT_EINVAL);
    CHECK_CONTAINS(d.msg, "(got 0 s, nan B)");
    o.slices = 1;
    o.alpha_s = -1;
    CHECK_ERR(weft_plan_shared_time(p, t, 1e6, &o, &s, &d), WEFT_EINVAL);
    CHECK_ERR(weft_plan_shared_time(p, t8, 1e6, NULL, &s, &d), WEFT_ETOPO);
    CHECK_STR(d.msg, "the plan has 4 ranks but the fabric has 8");
    /* A dependency cycle. */
    uint32_t dep = 1;
    CHECK_ERR(weft_plan_set_deps(p, 0, &dep, 1), WEFT_OK);
    CHECK_ERR(weft_plan_set_deps(p, 1, (uint32_t[]){0}, 1), WEFT_OK);
    CHECK_ERR(weft_plan_shared_time(p, t, 1e6, NULL, &s, &d), WEFT_EVERIFY);
    weft_plan_free(p);
    weft_topo_free(t);
    weft_topo_free(t8);
}

typedef struct oom_arg {
    const weft_plan *p;
    const weft_topo *t;
    weft_plan_shared out;
} oom_arg;

static weft_err ctor_est(void *arg)
{
    oom_arg *a = arg;
    weft_plan_shared_opts o;
    weft_plan_shared_opts_init(&o);
    o.slices = 8;
    return weft_plan_shared_time(a->p, a->t, 1 << 24, &o, &a->out, NULL);
}

static void dtor_est(void *arg)
{
    (void)arg;
}

static void test_oom(void)
{
    oom_arg a = {0};
    weft_topo *t = weft__test_topo_spec("a100:2");
    weft_plan *p = NULL;
    CHECK_ERR(weft_synth_classic(t, "dbtree", WEFT_COLL_ALLREDUCE, (weft_rank){0}, &p, NULL),
              WEFT_OK);
    a.p = p;
    a.t = t;
    CHECK(weft_test_oom_sweep("shared-link estimate", ctor_est, dtor_est, &a) > 10);
    CHECK(a.out.seconds > 0);
    weft_plan_free(p);
    weft_topo_free(t);
}

int main(void)
{
    test_rings();
    test_fan_out();
    test_route();
    test_errors();
    test_oom();
    return weft_test_done();
}
