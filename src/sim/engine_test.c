/* The flow engine against hand-computed max-min fair rates and times,
 * dependencies, cycles, determinism, conservation and allocation failure. */
#include <math.h>
#include <stdlib.h>

#include "base/testing.h"
#include "sim/engine.h"
#include "sim/testing_engine.h"

static bool close_to(double a, double b)
{
    return fabs(a - b) <= 1e-12 * fabs(b);
}

#define CHECK_NEAR(a, b)                                                                           \
    do {                                                                                           \
        double x_ = (a), y_ = (b);                                                                 \
        if (!close_to(x_, y_))                                                                     \
            fprintf(stderr, "  %s = %.17g, expected %.17g\n", #a, x_, y_);                         \
        CHECK(close_to(x_, y_));                                                                   \
    } while (0)

static uint32_t route1(sim_engine *e, uint32_t n, const uint32_t *links, double lat)
{
    double coef[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    uint32_t r = UINT32_MAX;
    CHECK_ERR(sim_engine_add_route(e, n, links, coef, lat, &r), WEFT_OK);
    return r;
}

static void test_two_share(void)
{
    double cap[] = {1e10};
    sim_engine *e;
    CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
    uint32_t l0 = 0, r = route1(e, 1, &l0, 0), f0, f1;
    CHECK_ERR(sim_engine_add_flow(e, r, 1e9, 1, &f0), WEFT_OK);
    CHECK_ERR(sim_engine_add_flow(e, r, 3e9, 1, &f1), WEFT_OK);
    CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
    CHECK(sim_engine_flow_rate0(e, f0) == 5e9);
    CHECK(sim_engine_flow_rate0(e, f1) == 5e9);
    double s, dr, dn;
    sim_engine_flow_times(e, f0, &s, &dr, &dn);
    CHECK(s == 0);
    CHECK_NEAR(dn, 0.2);
    /* f1 sends 1e9 at half rate, then 2e9 alone. */
    sim_engine_flow_times(e, f1, &s, &dr, &dn);
    CHECK_NEAR(dn, 0.4);
    sim_engine_stats st;
    sim_engine_get_stats(e, &st);
    CHECK_NEAR(st.makespan_s, 0.4);
    CHECK_INT(st.events, 6);
    CHECK(st.conservation_err < 1e-12);
    CHECK_NEAR(sim_engine_link_bytes(e, 0), 4e9);
    sim_engine_free(e);
}

/* Weighted sharing: on one link of 10 GB/s flows of 1 GB (weight 1) and
 * 3 GB (weight 3) get 2.5 and 7.5 GB/s and drain together at 0.4 s (with
 * equal weights the small one drains at 0.2 s, test_two_share). Across
 * two links (GB/s) a flow of weight 2 on both and flows of weight 1 and 3
 * on one each: link 1 (cap 6) saturates first, at level 6 / (2 + 1) = 2
 * (link 0's would be 12 / (2 + 3) = 2.4), freezing the weight-2 flow at 4
 * and its partner at 2; link 0 then gives the weight-3 flow the rest, 8
 * (level 8 / 3). Bytes in proportion: all three drain at 1 s. */
static void test_weights(void)
{
    double cap[] = {1e10};
    sim_engine *e;
    CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
    uint32_t l0 = 0, r = route1(e, 1, &l0, 0), f0, f1;
    CHECK_ERR(sim_engine_add_weighted_flow(e, r, 1e9, 1, 1, &f0), WEFT_OK);
    CHECK_ERR(sim_engine_add_weighted_flow(e, r, 3e9, 1, 3, &f1), WEFT_OK);
    CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
    CHECK_NEAR(sim_engine_flow_rate0(e, f0), 2.5e9);
    CHECK_NEAR(sim_engine_flow_rate0(e, f1), 7.5e9);
    double s, dr, dn;
    sim_engine_flow_times(e, f0, &s, &dr, &dn);
    CHECK_NEAR(dn, 0.4);
    sim_engine_flow_times(e, f1, &s, &dr, &dn);
    CHECK_NEAR(dn, 0.4);
    sim_engine_stats st;
    sim_engine_get_stats(e, &st);
    CHECK(st.conservation_err < 1e-12);
    sim_engine_free(e);

    double cap2[] = {12e9, 6e9};
    CHECK_ERR(sim_engine_new(2, cap2, NULL, &e), WEFT_OK);
    uint32_t both[2] = {0, 1}, one = 1, zero = 0, f2;
    uint32_t rb = route1(e, 2, both, 0), r1 = route1(e, 1, &one, 0), r0 = route1(e, 1, &zero, 0);
    CHECK_ERR(sim_engine_add_weighted_flow(e, rb, 4e9, 1, 2, &f0), WEFT_OK);
    CHECK_ERR(sim_engine_add_weighted_flow(e, r1, 2e9, 1, 1, &f1), WEFT_OK);
    CHECK_ERR(sim_engine_add_weighted_flow(e, r0, 8e9, 1, 3, &f2), WEFT_OK);
    CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
    CHECK_NEAR(sim_engine_flow_rate0(e, f0), 4e9);
    CHECK_NEAR(sim_engine_flow_rate0(e, f1), 2e9);
    CHECK_NEAR(sim_engine_flow_rate0(e, f2), 8e9);
    for (uint32_t f = 0; f < 3; f++) {
        sim_engine_flow_times(e, f, &s, &dr, &dn);
        CHECK_NEAR(dn, 1.0);
    }
    sim_engine_get_stats(e, &st);
    CHECK_NEAR(st.makespan_s, 1.0);
    sim_engine_free(e);
}

/* Weights must be positive and finite; a cut-through pair must have equal
 * weights (a coupled forwarder takes its dep's level). */
/* A link's capacity must be > 0: 0 once let its flows wait forever and
 * the run fail as "a dependency cycle". */
static void test_cap_errors(void)
{
    sim_engine *e = NULL;
    double bad[][2] = {{1e9, 0}, {-1, 1e9}, {NAN, 1e9}};
    for (size_t i = 0; i < 3; i++) {
        CHECK_ERR(sim_engine_new(2, bad[i], NULL, &e), WEFT_EINVAL);
        CHECK(e == NULL);
    }
    double cap[] = {1e9, 1e9}, mult[] = {1, 0};
    CHECK_ERR(sim_engine_new(2, cap, mult, &e), WEFT_EINVAL);
    CHECK_ERR(sim_engine_new(0, NULL, NULL, &e), WEFT_OK);
    sim_engine_free(e);
}

static void test_weight_errors(void)
{
    double cap[] = {1e9};
    sim_engine *e;
    CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
    uint32_t l0 = 0, r = route1(e, 1, &l0, 0), f0, f1, f2, f3;
    CHECK_ERR(sim_engine_add_weighted_flow(e, r, 1e3, 1, 0, &f0), WEFT_EINVAL);
    CHECK_ERR(sim_engine_add_weighted_flow(e, r, 1e3, 1, -1, &f0), WEFT_EINVAL);
    CHECK_ERR(sim_engine_add_weighted_flow(e, r, 1e3, 1, NAN, &f0), WEFT_EINVAL);
    CHECK_ERR(sim_engine_add_weighted_flow(e, r, 1e3, 1, INFINITY, &f0), WEFT_EINVAL);
    CHECK_INT(sim_engine_num_flows(e), 0);
    CHECK_ERR(sim_engine_add_flow(e, r, 1e3, 1, &f0), WEFT_OK);
    CHECK_ERR(sim_engine_add_weighted_flow(e, r, 1e3, 1, 2, &f1), WEFT_OK);
    CHECK_ERR(sim_engine_add_weighted_flow(e, r, 1e3, 1, 2, &f2), WEFT_OK);
    CHECK_ERR(sim_engine_add_flow(e, r, 1e3, 1, &f3), WEFT_OK);
    CHECK_ERR(sim_engine_add_ct_dep(e, f1, f0), WEFT_EINVAL);
    CHECK_ERR(sim_engine_add_ct_dep(e, f3, f2), WEFT_EINVAL);
    CHECK_ERR(sim_engine_add_ct_dep(e, f2, f1), WEFT_OK);
    CHECK_ERR(sim_engine_add_ct_dep(e, f3, f0), WEFT_OK);
    CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
    sim_engine_free(e);
}

static void test_bottleneck(void)
{
    double cap[] = {10e9, 4e9, 8e9};
    sim_engine *e;
    CHECK_ERR(sim_engine_new(3, cap, NULL, &e), WEFT_OK);
    uint32_t links[] = {0, 1, 2}, f;
    uint32_t r = route1(e, 3, links, 1e-6);
    CHECK_ERR(sim_engine_add_flow(e, r, 1e9, 1, &f), WEFT_OK);
    CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
    CHECK(sim_engine_flow_rate0(e, f) == 4e9);
    double s, dr, dn;
    sim_engine_flow_times(e, f, &s, &dr, &dn);
    CHECK_NEAR(dr, 0.25);
    CHECK_NEAR(dn, 0.250001);
    sim_engine_free(e);
}

/* L0 (10): f0 f1 f2; L1 (8): f0 f3; L2 (20): f3 f4.
 * Max-min: f0 = f1 = f2 = 10/3, f3 = 8 - 10/3 = 14/3, f4 = 20 - 14/3. */
static void test_classic(void)
{
    double cap[] = {10, 8, 20};
    sim_engine *e;
    CHECK_ERR(sim_engine_new(3, cap, NULL, &e), WEFT_OK);
    uint32_t a[] = {0, 1}, b[] = {0}, c[] = {1, 2}, dd[] = {2};
    uint32_t r0 = route1(e, 2, a, 0), r1 = route1(e, 1, b, 0), r3 = route1(e, 2, c, 0),
             r4 = route1(e, 1, dd, 0);
    uint32_t f[5];
    CHECK_ERR(sim_engine_add_flow(e, r0, 100, 1, &f[0]), WEFT_OK);
    CHECK_ERR(sim_engine_add_flow(e, r1, 100, 1, &f[1]), WEFT_OK);
    CHECK_ERR(sim_engine_add_flow(e, r1, 100, 1, &f[2]), WEFT_OK);
    CHECK_ERR(sim_engine_add_flow(e, r3, 100, 1, &f[3]), WEFT_OK);
    CHECK_ERR(sim_engine_add_flow(e, r4, 100, 1, &f[4]), WEFT_OK);
    CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
    CHECK_NEAR(sim_engine_flow_rate0(e, f[0]), 10.0 / 3);
    CHECK_NEAR(sim_engine_flow_rate0(e, f[1]), 10.0 / 3);
    CHECK_NEAR(sim_engine_flow_rate0(e, f[2]), 10.0 / 3);
    CHECK_NEAR(sim_engine_flow_rate0(e, f[3]), 14.0 / 3);
    CHECK_NEAR(sim_engine_flow_rate0(e, f[4]), 46.0 / 3);
    sim_engine_free(e);
}

/* A split route: coefficient 1/2 on two parallel links and 1 on the
 * shared first hop, against an unsplit flow on one of the branches. */
static void test_split(void)
{
    double cap[] = {10, 4, 4};
    sim_engine *e;
    CHECK_ERR(sim_engine_new(3, cap, NULL, &e), WEFT_OK);
    uint32_t links[] = {0, 1, 2}, one = 1, r, r2, f0, f1;
    double coef[] = {1, 0.5, 0.5}, c1 = 1;
    CHECK_ERR(sim_engine_add_route(e, 3, links, coef, 0, &r), WEFT_OK);
    CHECK_ERR(sim_engine_add_route(e, 1, &one, &c1, 0, &r2), WEFT_OK);
    CHECK_ERR(sim_engine_add_flow(e, r, 100, 1, &f0), WEFT_OK);
    CHECK_ERR(sim_engine_add_flow(e, r2, 100, 1, &f1), WEFT_OK);
    CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
    /* L1: 0.5 x + y <= 4 with x = y: 8/3 each; L2 then lets nothing more
     * since f0 is frozen by L1. */
    CHECK_NEAR(sim_engine_flow_rate0(e, f0), 8.0 / 3);
    CHECK_NEAR(sim_engine_flow_rate0(e, f1), 8.0 / 3);
    sim_engine_free(e);
}

static void test_deps(void)
{
    double cap[] = {1e9};
    sim_engine *e;
    CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
    uint32_t l = 0, r = route1(e, 1, &l, 2e-6), f0, f1, f2;
    CHECK_ERR(sim_engine_add_flow(e, r, 1e8, 1, &f0), WEFT_OK);
    CHECK_ERR(sim_engine_add_flow(e, r, 1e8, 1, &f1), WEFT_OK);
    CHECK_ERR(sim_engine_add_flow(e, r, 0, 1, &f2), WEFT_OK);
    CHECK_ERR(sim_engine_add_dep(e, f1, f0), WEFT_OK);
    CHECK_ERR(sim_engine_add_dep(e, f2, f1), WEFT_OK);
    CHECK_ERR(sim_engine_add_dep(e, f2, f0), WEFT_OK);
    CHECK_ERR(sim_engine_run(e, 1e-6, NULL), WEFT_OK);
    double s, dr, dn;
    sim_engine_flow_times(e, f0, &s, &dr, &dn);
    CHECK_NEAR(s, 1e-6);
    CHECK_NEAR(dr, 0.100001);
    CHECK_NEAR(dn, 0.100003);
    sim_engine_flow_times(e, f1, &s, &dr, &dn);
    CHECK_NEAR(s, 0.100004);
    CHECK_NEAR(dn, 0.200006);
    /* An empty flow still pays alpha and the route latency. */
    sim_engine_flow_times(e, f2, &s, &dr, &dn);
    CHECK_NEAR(dn, 0.200009);
    CHECK(sim_engine_run(e, 0, NULL) == WEFT_EINVAL);
    sim_engine_free(e);

    CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
    r = route1(e, 1, &l, 0);
    CHECK_ERR(sim_engine_add_flow(e, r, 1, 1, &f0), WEFT_OK);
    CHECK_ERR(sim_engine_add_flow(e, r, 1, 1, &f1), WEFT_OK);
    CHECK_ERR(sim_engine_add_flow(e, r, 1, 1, &f2), WEFT_OK);
    CHECK_ERR(sim_engine_add_dep(e, f1, f2), WEFT_OK);
    CHECK_ERR(sim_engine_add_dep(e, f2, f1), WEFT_OK);
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(sim_engine_run(e, 0, &d), WEFT_EVERIFY);
    CHECK_STR(d.msg, "sim: flow 1 never becomes ready (a dependency cycle)");
    sim_engine_free(e);

    /* Bad routes. */
    CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
    uint32_t twice[] = {0, 0}, nine = 9;
    double c2[] = {1, 1}, neg = -1;
    CHECK_ERR(sim_engine_add_route(e, 2, twice, c2, 0, &r), WEFT_EINVAL);
    CHECK_ERR(sim_engine_add_route(e, 1, &nine, c2, 0, &r), WEFT_EINVAL);
    CHECK_ERR(sim_engine_add_route(e, 1, &l, &neg, 0, &r), WEFT_EINVAL);
    CHECK_ERR(sim_engine_add_route(e, 1, &l, c2, -1, &r), WEFT_EINVAL);
    CHECK_ERR(sim_engine_add_flow(e, 0, 1, 1, &f0), WEFT_EINVAL);
    sim_engine_free(e);
}

/* ---- Cut-through ------------------------------------------------------- */

static uint32_t add_flow(sim_engine *e, uint32_t route, double bytes)
{
    uint32_t f = UINT32_MAX;
    CHECK_ERR(sim_engine_add_flow(e, route, bytes, 1, &f), WEFT_OK);
    return f;
}

static void check_times(const sim_engine *e, uint32_t f, double start, double drained, double done)
{
    double s, dr, dn;
    sim_engine_flow_times(e, f, &s, &dr, &dn);
    CHECK_NEAR(s, start);
    CHECK_NEAR(dr, drained);
    CHECK_NEAR(dn, done);
}

/* f0 (L0, 10 B/s, latency 1) feeds f1 (L1, 5 B/s, latency 2), 100 bytes
 * each. f1 starts when f0's first byte is across (t = 1), is slower, so
 * it never catches up: it drains at 1 + 100/5 = 21 and is done at 23.
 * Store and forward would start it at f0's done (11): done at 33. */
static void test_ct_slower_hop(void)
{
    for (int through = 0; through < 2; through++) {
        double cap[] = {10, 5};
        sim_engine *e;
        CHECK_ERR(sim_engine_new(2, cap, NULL, &e), WEFT_OK);
        uint32_t l0 = 0, l1 = 1;
        uint32_t f0 = add_flow(e, route1(e, 1, &l0, 1), 100);
        uint32_t f1 = add_flow(e, route1(e, 1, &l1, 2), 100);
        CHECK_ERR(through ? sim_engine_add_ct_dep(e, f1, f0) : sim_engine_add_dep(e, f1, f0),
                  WEFT_OK);
        CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
        check_times(e, f0, 0, 10, 11);
        if (through)
            check_times(e, f1, 1, 21, 23);
        else
            check_times(e, f1, 11, 31, 33);
        CHECK(sim_engine_flow_rate0(e, f1) == 5);
        sim_engine_stats st;
        sim_engine_get_stats(e, &st);
        CHECK_INT(st.catchups, 0);
        CHECK(st.conservation_err < 1e-12);
        sim_engine_free(e);
    }
}

/* f0 shares L0 (10 B/s) with g (50 bytes); f1 forwards f0 over L1
 * (100 B/s). Both start at 0 with nothing sent, so f1 has caught up and
 * freezes with f0 at 5, not at its link's 100. g drains at 10; then f0
 * and f1 run at 10 and drain the last 50 bytes at 15. */
static void test_ct_shared_upstream(void)
{
    double cap[] = {10, 100};
    sim_engine *e;
    CHECK_ERR(sim_engine_new(2, cap, NULL, &e), WEFT_OK);
    uint32_t l0 = 0, l1 = 1;
    uint32_t r0 = route1(e, 1, &l0, 0), r1 = route1(e, 1, &l1, 0);
    uint32_t f0 = add_flow(e, r0, 100), g = add_flow(e, r0, 50), f1 = add_flow(e, r1, 100);
    CHECK_ERR(sim_engine_add_ct_dep(e, f1, f0), WEFT_OK);
    CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
    CHECK(sim_engine_flow_rate0(e, f1) == 5);
    check_times(e, g, 0, 10, 10);
    check_times(e, f0, 0, 15, 15);
    check_times(e, f1, 0, 15, 15);
    CHECK_NEAR(sim_engine_link_bytes(e, 1), 100);
    sim_engine_free(e);
}

/* Catch-up events. L0 (10 B/s): f0 (200 bytes, latency 2) and g (70
 * bytes), 5 each until g drains at 14. L1 (12 B/s): f1 (forwards f0,
 * latency 1) and h (110 bytes, from 0).
 *   [0, 2)   h alone on L1: 12.
 *   [2, 12)  f1 and h 6 each; f1 is behind f0 (10 bytes at 2) and 1 B/s
 *            faster: it catches up at 12 (60 bytes each) and from then
 *            moves at f0's 5, so h gets 7.
 *   [12, 14) h 7. At 14 g drains, f0 rises to 10, f1 (6 on L1) falls
 *            behind.
 *   [14, 16) h 6: 24 + 60 + 14 + 12 = 110, drained at 16 (without the
 *            first catch-up it would be 16.33).
 *   [16, 20) f1 alone at 12 closes on f0 (82 vs 90 bytes at 16) at 2 B/s:
 *            caught up at 20 (130 bytes), then at f0's 10.
 *   f0 drains at 27 and is done at 29; f1's bytes are sent at 27 too, and
 *   it waits for f0 to be done: drained 29, done 30. */
static void test_ct_catch_up(void)
{
    double cap[] = {10, 12};
    sim_engine *e;
    CHECK_ERR(sim_engine_new(2, cap, NULL, &e), WEFT_OK);
    uint32_t l0 = 0, l1 = 1;
    uint32_t f0 = add_flow(e, route1(e, 1, &l0, 2), 200), g = add_flow(e, route1(e, 1, &l0, 0), 70);
    uint32_t f1 = add_flow(e, route1(e, 1, &l1, 1), 200),
             h = add_flow(e, route1(e, 1, &l1, 0), 110);
    CHECK_ERR(sim_engine_add_ct_dep(e, f1, f0), WEFT_OK);
    CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
    check_times(e, g, 0, 14, 14);
    check_times(e, h, 0, 16, 16);
    check_times(e, f0, 0, 27, 29);
    check_times(e, f1, 2, 29, 30);
    CHECK(sim_engine_flow_rate0(e, f1) == 6);
    CHECK(sim_engine_flow_rate0(e, h) == 12);
    sim_engine_stats st;
    sim_engine_get_stats(e, &st);
    CHECK_INT(st.catchups, 2);
    CHECK(st.conservation_err < 1e-12);
    sim_engine_free(e);
}

/* A reduce fed by two deps of different rates. L0 (8 B/s): a and g (20
 * bytes), 4 each until g drains at 5, then a at 8. L1 (6 B/s): b. L2 (20
 * B/s): f (cut through on a and b) and h (300 bytes). a, b, f: 120 bytes.
 *   [0, 5)   f has caught up with both; a freezes first: f = 4, h = 16.
 *   [5, 10)  f follows a at 8 (h 12); it is behind b (20 vs 30 bytes at 5)
 *            and 2 B/s faster: caught up with b at 10 (60 bytes).
 *   [10, 20) f is capped by b, the slower of the two: 6 (h 14); a runs
 *            ahead and drains at 17.5.
 *   b and f drain at 20; h has 80 + 60 + 140 = 280 bytes at 20 and drains
 *   its last 20 alone at 21. */
static void test_ct_reduce_two_deps(void)
{
    double cap[] = {8, 6, 20};
    sim_engine *e;
    CHECK_ERR(sim_engine_new(3, cap, NULL, &e), WEFT_OK);
    uint32_t l0 = 0, l1 = 1, l2 = 2;
    uint32_t r0 = route1(e, 1, &l0, 0), r2 = route1(e, 1, &l2, 0);
    uint32_t a = add_flow(e, r0, 120), g = add_flow(e, r0, 20);
    uint32_t b = add_flow(e, route1(e, 1, &l1, 0), 120);
    uint32_t f = add_flow(e, r2, 120), h = add_flow(e, r2, 300);
    CHECK_ERR(sim_engine_add_ct_dep(e, f, a), WEFT_OK);
    CHECK_ERR(sim_engine_add_ct_dep(e, f, b), WEFT_OK);
    CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
    CHECK(sim_engine_flow_rate0(e, f) == 4);
    CHECK(sim_engine_flow_rate0(e, h) == 16);
    check_times(e, g, 0, 5, 5);
    check_times(e, a, 0, 17.5, 17.5);
    check_times(e, b, 0, 20, 20);
    check_times(e, f, 0, 20, 20);
    check_times(e, h, 0, 21, 21);
    sim_engine_stats st;
    sim_engine_get_stats(e, &st);
    CHECK_INT(st.catchups, 1);
    sim_engine_free(e);
}

/* A chain of K hops of bandwidth B and latency L, cut through: hop k
 * starts at k (L + alpha) + alpha and the last is done at
 * bytes / B + K (L + alpha). */
static void test_ct_chain(void)
{
    enum { K = 5 };
    double cap[K], B = 25e9, L = 1.5e-6, alpha = 0.5e-6, bytes = 1e8;
    for (int k = 0; k < K; k++)
        cap[k] = B;
    sim_engine *e;
    CHECK_ERR(sim_engine_new(K, cap, NULL, &e), WEFT_OK);
    uint32_t f[K];
    for (uint32_t k = 0; k < K; k++) {
        f[k] = add_flow(e, route1(e, 1, &k, L), bytes);
        if (k)
            CHECK_ERR(sim_engine_add_ct_dep(e, f[k], f[k - 1]), WEFT_OK);
    }
    CHECK_ERR(sim_engine_run(e, alpha, NULL), WEFT_OK);
    for (int k = 0; k < K; k++)
        check_times(e, f[k], alpha + k * (L + alpha), bytes / B + k * (L + alpha) + alpha,
                    bytes / B + (k + 1) * (L + alpha));
    sim_engine_stats st;
    sim_engine_get_stats(e, &st);
    CHECK_NEAR(st.makespan_s, bytes / B + K * (L + alpha));
    sim_engine_free(e);
}

/* Sizes must match; a flow without links (or bytes) keeps store and
 * forward, and a cut-through cycle is reported like any other. */
static void test_ct_errors(void)
{
    double cap[] = {10};
    sim_engine *e;
    CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
    uint32_t l0 = 0, r = route1(e, 1, &l0, 0), empty = route1(e, 0, NULL, 3);
    uint32_t f0 = add_flow(e, r, 100), f1 = add_flow(e, r, 50), f2 = add_flow(e, empty, 100);
    CHECK_ERR(sim_engine_add_ct_dep(e, f1, f0), WEFT_EINVAL);
    CHECK_ERR(sim_engine_add_ct_dep(e, f2, f0), WEFT_OK);
    CHECK_ERR(sim_engine_add_ct_dep(e, 7, f0), WEFT_EINVAL);
    CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
    /* f0 shares L0 with f1 (5 each, then 10): done at 15; f2 starts
     * then and is done one latency later. */
    check_times(e, f2, 15, 15, 18);
    sim_engine_free(e);

    CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
    r = route1(e, 1, &l0, 0);
    f0 = add_flow(e, r, 1);
    f1 = add_flow(e, r, 1);
    CHECK_ERR(sim_engine_add_ct_dep(e, f0, f1), WEFT_OK);
    CHECK_ERR(sim_engine_add_ct_dep(e, f1, f0), WEFT_OK);
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(sim_engine_run(e, 0, &d), WEFT_EVERIFY);
    CHECK_STR(d.msg, "sim: flow 0 never becomes ready (a dependency cycle)");
    sim_engine_free(e);
}

/* A pseudo-random scenario: many flows over random routes with random
 * dependencies on earlier flows. With ct, sizes come from two values and a
 * dep of the same size is cut through. Returns the engine after the run. */
static sim_engine *random_run(uint32_t seed, bool ct, weft_err *err)
{
    enum { NL = 40, NF = 3000 };
    double cap[NL];
    uint64_t x = seed;
#define NEXT() sim_test_next(&x)
    for (int i = 0; i < NL; i++)
        cap[i] = 1e9 * (1 + NEXT() % 8);
    sim_engine *e;
    if ((*err = sim_engine_new(NL, cap, NULL, &e)))
        return NULL;
    for (uint32_t f = 0; f < NF; f++) {
        uint32_t links[4], r, id;
        double coef[4];
        uint32_t n = sim_test_route(&x, NL, links, coef);
        double bytes = 1e6 * (1 + NEXT() % (ct ? 2 : 100));
        if ((*err = sim_engine_add_route(e, n, links, coef, 1e-6 * (NEXT() % 5), &r)) ||
            (*err = sim_engine_add_flow(e, r, bytes, 1, &id)))
            break;
        if (f <= 10)
            continue;
        uint32_t dep = f - 1 - NEXT() % 10;
        if (ct && sim_engine_flow_bytes(e, dep) == bytes)
            *err = sim_engine_add_ct_dep(e, f, dep);
        else
            *err = sim_engine_add_dep(e, f, dep);
        if (*err)
            break;
    }
#undef NEXT
    if (!*err)
        *err = sim_engine_run(e, 1e-6, NULL);
    return e;
}

static void test_determinism(bool ct)
{
    weft_err e1, e2;
    sim_engine *a = random_run(7, ct, &e1), *b = random_run(7, ct, &e2);
    CHECK_ERR(e1, WEFT_OK);
    CHECK_ERR(e2, WEFT_OK);
    int diff = 0;
    for (uint32_t f = 0; f < sim_engine_num_flows(a); f++) {
        double t[3], u[3];
        sim_engine_flow_times(a, f, &t[0], &t[1], &t[2]);
        sim_engine_flow_times(b, f, &u[0], &u[1], &u[2]);
        diff += memcmp(t, u, sizeof t) != 0;
        /* Completion never precedes the start plus the time alone at full
         * link speed would take: rates are never above capacity. */
        diff += !(t[2] >= t[0]);
    }
    CHECK_INT(diff, 0);
    sim_engine_stats sa, sb;
    sim_engine_get_stats(a, &sa);
    sim_engine_get_stats(b, &sb);
    CHECK(memcmp(&sa.makespan_s, &sb.makespan_s, sizeof(double)) == 0);
    if (!ct)
        CHECK(sa.events == 9000);
    else
        CHECK(sa.events == 9000 + sa.catchups && sa.catchups > 0);
    CHECK(sa.conservation_err < 1e-9);
    if (sa.conservation_err >= 1e-9)
        fprintf(stderr, "  conservation %.3g\n", sa.conservation_err);
    sim_engine_free(a);
    sim_engine_free(b);
}

static weft_err oom_ctor(void *arg)
{
    weft_err e;
    sim_engine *s = random_run(3, false, &e);
    if (e) {
        sim_engine_free(s);
        return e;
    }
    *(sim_engine **)arg = s;
    return WEFT_OK;
}

static weft_err oom_ctor_ct(void *arg)
{
    weft_err e;
    sim_engine *s = random_run(3, true, &e);
    if (e) {
        sim_engine_free(s);
        return e;
    }
    *(sim_engine **)arg = s;
    return WEFT_OK;
}

static void oom_dtor(void *arg)
{
    sim_engine_free(*(sim_engine **)arg);
}

/* Queue deps: f1 queued behind f0 on one link (latency 2 us, alpha 1 us)
 * starts when f0 drains (0.100001 s), not at f0's done + alpha (0.100004
 * as test_deps has it); f2 is queued behind f1 and also depends on f0
 * (ordinary: done 0.100003, + alpha), so it starts when f1 drains. Two
 * flows queued behind one are refused. */
static void test_queue(void)
{
    double cap[] = {1e9};
    sim_engine *e;
    CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
    uint32_t l = 0, r = route1(e, 1, &l, 2e-6), f0, f1, f2;
    CHECK_ERR(sim_engine_add_flow(e, r, 1e8, 1, &f0), WEFT_OK);
    CHECK_ERR(sim_engine_add_flow(e, r, 1e8, 1, &f1), WEFT_OK);
    CHECK_ERR(sim_engine_add_flow(e, r, 1e8, 1, &f2), WEFT_OK);
    CHECK_ERR(sim_engine_add_queue_dep(e, f1, f0), WEFT_OK);
    CHECK_ERR(sim_engine_add_queue_dep(e, f2, f1), WEFT_OK);
    CHECK_ERR(sim_engine_add_dep(e, f2, f0), WEFT_OK);
    CHECK(sim_engine_add_queue_dep(e, f0, f0) == WEFT_EINVAL);
    CHECK_ERR(sim_engine_run(e, 1e-6, NULL), WEFT_OK);
    double s, dr, dn;
    sim_engine_flow_times(e, f0, &s, &dr, &dn);
    CHECK_NEAR(dr, 0.100001);
    sim_engine_flow_times(e, f1, &s, &dr, &dn);
    CHECK_NEAR(s, 0.100001);
    CHECK_NEAR(dr, 0.200001);
    sim_engine_flow_times(e, f2, &s, &dr, &dn);
    CHECK_NEAR(s, 0.200001);
    CHECK_NEAR(dn, 0.300003);
    sim_engine_free(e);

    CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
    r = route1(e, 1, &l, 0);
    CHECK_ERR(sim_engine_add_flow(e, r, 1e8, 1, &f0), WEFT_OK);
    CHECK_ERR(sim_engine_add_flow(e, r, 1e8, 1, &f1), WEFT_OK);
    CHECK_ERR(sim_engine_add_flow(e, r, 1e8, 1, &f2), WEFT_OK);
    CHECK_ERR(sim_engine_add_queue_dep(e, f1, f0), WEFT_OK);
    CHECK_ERR(sim_engine_add_queue_dep(e, f2, f0), WEFT_OK);
    CHECK(sim_engine_run(e, 0, NULL) == WEFT_EINVAL);
    sim_engine_free(e);
}

/* A symmetric system for the symmetry reduction: G groups of a chain of
 * L flows of 1 MB; flow j of group g crosses group g's link j % 2 (1 GB/s)
 * and one link shared by all groups (G x 0.5 GB/s, so that it binds while
 * two chain members share it with everything else); flow j > 0 cuts
 * through on flow j-1 (kind 1), waits for it (kind 0) or queues behind it
 * (kind 2). Every group is alike: G x L flows fall into L classes. */
#define SYM_G 512u
#define SYM_L 10u
static sim_engine *sym_build_w(int kind, bool symm, int wmode, weft_err *err);

static sim_engine *sym_build(int kind, bool symm, weft_err *err)
{
    return sym_build_w(kind, symm, 0, err);
}

/* sym_build with weights: wmode 0 none (all 1), 1 flow j of every group
 * weight 1 + j % 3 (the classes stay L), 2 groups of odd g weight 2 (the
 * weights split every class in two: 2 L classes). */
static sim_engine *sym_build_w(int kind, bool symm, int wmode, weft_err *err)
{
    double cap[2 * SYM_G + 1];
    for (uint32_t l = 0; l < 2 * SYM_G; l++)
        cap[l] = 1e9;
    cap[2 * SYM_G] = SYM_G * 0.5e9;
    sim_engine *e = NULL;
    if ((*err = sim_engine_new(2 * SYM_G + 1, cap, NULL, &e)))
        return NULL;
    sim_engine_set_symmetry(e, symm);
    for (uint32_t g = 0; g < SYM_G && !*err; g++)
        for (uint32_t j = 0; j < SYM_L && !*err; j++) {
            uint32_t links[2] = {2 * g + j % 2, 2 * SYM_G}, r, f;
            double coef[2] = {1, 1};
            double w = wmode == 1 ? 1 + j % 3 : wmode == 2 ? 1 + g % 2 : 1;
            if ((*err = sim_engine_add_route(e, 2, links, coef, 1e-6, &r)) ||
                (*err = sim_engine_add_weighted_flow(e, r, 1e6, 1, w, &f)) || j == 0)
                continue;
            *err = kind == 1   ? sim_engine_add_ct_dep(e, f, f - 1)
                   : kind == 2 ? sim_engine_add_queue_dep(e, f, f - 1)
                               : sim_engine_add_dep(e, f, f - 1);
        }
    if (!*err)
        *err = sim_engine_run(e, 1e-6, NULL);
    return e;
}

/* The reduced run gives every flow the flow-by-flow run's times (to
 * rounding), the same link bytes and makespan, on L classes and far fewer
 * events. */
static void test_symmetry(int kind, int wmode)
{
    weft_err e1, e2;
    sim_engine *a = sym_build_w(kind, false, wmode, &e1), *b = sym_build_w(kind, true, wmode, &e2);
    CHECK_ERR(e1, WEFT_OK);
    CHECK_ERR(e2, WEFT_OK);
    if (e1 || e2) {
        sim_engine_free(a);
        sim_engine_free(b);
        return;
    }
    int bad = 0;
    for (uint32_t f = 0; f < sim_engine_num_flows(a); f++) {
        double t[3], u[3];
        sim_engine_flow_times(a, f, &t[0], &t[1], &t[2]);
        sim_engine_flow_times(b, f, &u[0], &u[1], &u[2]);
        for (int k = 0; k < 3; k++)
            bad += !(fabs(t[k] - u[k]) <= 1e-9 * t[k]);
        bad += !(fabs(sim_engine_flow_rate0(a, f) - sim_engine_flow_rate0(b, f)) <=
                 1e-9 * sim_engine_flow_rate0(a, f));
    }
    for (uint32_t l = 0; l <= 2 * SYM_G; l++)
        bad += !(fabs(sim_engine_link_bytes(a, l) - sim_engine_link_bytes(b, l)) <=
                 1e-9 * sim_engine_link_bytes(a, l));
    CHECK_INT(bad, 0);
    sim_engine_stats sa, sb;
    sim_engine_get_stats(a, &sa);
    sim_engine_get_stats(b, &sb);
    CHECK_INT(sa.flow_classes, SYM_G * SYM_L);
    CHECK_INT(sb.flow_classes, wmode == 2 ? 2 * SYM_L : SYM_L);
    CHECK(sb.events * 100 < sa.events);
    CHECK(fabs(sa.makespan_s - sb.makespan_s) <= 1e-12 * sa.makespan_s);
    CHECK(sb.conservation_err < 1e-9);
    sim_engine_free(a);
    sim_engine_free(b);
}

/* With symmetry on, two flows queued behind one are still refused (the
 * classes would hide it), and a cycle is still reported. */
static void test_symmetry_errors(void)
{
    weft_err err;
    double cap[] = {1e9};
    sim_engine *e;
    CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
    sim_engine_set_symmetry(e, true);
    uint32_t l = 0, r = route1(e, 1, &l, 0), f;
    for (uint32_t i = 0; i < 5000; i++)
        CHECK_ERR(sim_engine_add_flow(e, r, 1e3, 1, &f), WEFT_OK);
    /* 2 and 3 queue behind 1: alike, one class, so the quotient would
     * have one queue edge. */
    CHECK_ERR(sim_engine_add_queue_dep(e, 2, 1), WEFT_OK);
    CHECK_ERR(sim_engine_add_queue_dep(e, 3, 1), WEFT_OK);
    CHECK(sim_engine_run(e, 0, NULL) == WEFT_EINVAL);
    sim_engine_free(e);

    CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
    sim_engine_set_symmetry(e, true);
    r = route1(e, 1, &l, 0);
    for (uint32_t i = 0; i < 5000; i++)
        CHECK_ERR(sim_engine_add_flow(e, r, 1e3, 1, &f), WEFT_OK);
    CHECK_ERR(sim_engine_add_dep(e, 7, 8), WEFT_OK);
    CHECK_ERR(sim_engine_add_dep(e, 8, 7), WEFT_OK);
    weft_diag d;
    CHECK_ERR(sim_engine_run(e, 0, &d), WEFT_EVERIFY);
    CHECK_STR(d.msg, "sim: flow 7 never becomes ready (a dependency cycle)");
    sim_engine_free(e);
    (void)err;
}

static weft_err oom_ctor_sym(void *arg)
{
    weft_err e;
    sim_engine *s = sym_build(1, true, &e);
    if (e) {
        sim_engine_free(s);
        return e;
    }
    *(sim_engine **)arg = s;
    return WEFT_OK;
}

/* Token buckets (sim_engine_set_bucket): a link of rate r = 100 B/s with a
 * bucket of b = 50 B and a peak of 1000 B/s. A flow of B bytes arriving at
 * a full bucket takes b / (peak - r) at the peak, then the rest at r: in all
 * (B - b) / r, whatever the peak. */
static void test_bucket(void)
{
    double s, dr, dn;
    sim_engine_stats st;
    { /* alone: 1000 B in 9.5 s, not 10 */
        double cap[] = {100};
        sim_engine *e;
        CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
        CHECK_ERR(sim_engine_set_bucket(e, 0, 50, 100, 50), WEFT_EINVAL); /* peak <= rate */
        CHECK_ERR(sim_engine_set_bucket(e, 0, 0, 1000, 0), WEFT_EINVAL);
        CHECK_ERR(sim_engine_set_bucket(e, 0, 50, 1000, 51), WEFT_EINVAL);
        CHECK_ERR(sim_engine_set_bucket(e, 1, 50, 1000, 50), WEFT_EINVAL);
        CHECK_ERR(sim_engine_set_bucket(e, 0, 50, 1000, 50), WEFT_OK);
        uint32_t l0 = 0, r = route1(e, 1, &l0, 0), f;
        CHECK_ERR(sim_engine_add_flow(e, r, 1000, 1, &f), WEFT_OK);
        CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
        CHECK(sim_engine_flow_rate0(e, f) == 1000);
        sim_engine_flow_times(e, f, &s, &dr, &dn);
        CHECK_NEAR(dn, 9.5);
        sim_engine_get_stats(e, &st);
        CHECK(st.conservation_err < 1e-12);
        CHECK_INT(st.events, 4); /* start, bucket empty, drain, done */
        CHECK(sim_engine_bucket_tokens(e, 0) == 0);
        sim_engine_free(e);
    }
    { /* starting with 20 of 50 tokens: (1000 - 20) / 100 = 9.8 s */
        double cap[] = {100};
        sim_engine *e;
        CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
        CHECK_ERR(sim_engine_set_bucket(e, 0, 50, 1000, 20), WEFT_OK);
        uint32_t l0 = 0, r = route1(e, 1, &l0, 0), f;
        CHECK_ERR(sim_engine_add_flow(e, r, 1000, 1, &f), WEFT_OK);
        CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
        sim_engine_flow_times(e, f, &s, &dr, &dn);
        CHECK_NEAR(dn, 9.8);
        sim_engine_free(e);
    }
    { /* behind a 150 B/s link: 150 B/s until the bucket is empty (1 s),
       * then 100 B/s: 150 + 850 / 100 = 9.5 s again */
        double cap[] = {100, 150};
        sim_engine *e;
        CHECK_ERR(sim_engine_new(2, cap, NULL, &e), WEFT_OK);
        CHECK_ERR(sim_engine_set_bucket(e, 0, 50, 1000, 50), WEFT_OK);
        uint32_t ls[] = {0, 1}, r = route1(e, 2, ls, 0), f;
        CHECK_ERR(sim_engine_add_flow(e, r, 1000, 1, &f), WEFT_OK);
        CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
        CHECK(sim_engine_flow_rate0(e, f) == 150);
        sim_engine_flow_times(e, f, &s, &dr, &dn);
        CHECK_NEAR(dn, 9.5);
        sim_engine_free(e);
    }
    { /* behind a 50 B/s link the bucket never empties: 1000 / 50 = 20 s */
        double cap[] = {100, 50};
        sim_engine *e;
        CHECK_ERR(sim_engine_new(2, cap, NULL, &e), WEFT_OK);
        CHECK_ERR(sim_engine_set_bucket(e, 0, 50, 1000, 50), WEFT_OK);
        uint32_t ls[] = {0, 1}, r = route1(e, 2, ls, 0), f;
        CHECK_ERR(sim_engine_add_flow(e, r, 1000, 1, &f), WEFT_OK);
        CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
        sim_engine_flow_times(e, f, &s, &dr, &dn);
        CHECK_NEAR(dn, 20);
        CHECK(sim_engine_bucket_tokens(e, 0) == 50);
        CHECK(sim_engine_bucket_tokens(e, 1) == 0); /* no bucket */
        sim_engine_free(e);
    }
    { /* a second flow after an idle 0.2 s (alpha) finds 20 B of tokens:
       * first 0.2 + 9.5 = 9.7 s, then 9.9 + (1000 - 20) / 100 = 19.7 s */
        double cap[] = {100};
        sim_engine *e;
        CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
        CHECK_ERR(sim_engine_set_bucket(e, 0, 50, 1000, 50), WEFT_OK);
        uint32_t l0 = 0, r = route1(e, 1, &l0, 0), f0, f1;
        CHECK_ERR(sim_engine_add_flow(e, r, 1000, 1, &f0), WEFT_OK);
        CHECK_ERR(sim_engine_add_flow(e, r, 1000, 1, &f1), WEFT_OK);
        CHECK_ERR(sim_engine_add_dep(e, f1, f0), WEFT_OK);
        CHECK_ERR(sim_engine_run(e, 0.2, NULL), WEFT_OK);
        sim_engine_flow_times(e, f0, &s, &dr, &dn);
        CHECK_NEAR(dn, 9.7);
        sim_engine_flow_times(e, f1, &s, &dr, &dn);
        CHECK_NEAR(s, 9.9);
        CHECK_NEAR(dn, 19.7);
        sim_engine_free(e);
    }
    { /* two flows share the peak (500 B/s each) until the bucket is
       * empty at 1/18 s, then 50 B/s each: the 100 B flow is done at
       * 1.5 s, the 1000 B one at (1100 - 50) / 100 = 10.5 s */
        double cap[] = {100};
        sim_engine *e;
        CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
        CHECK_ERR(sim_engine_set_bucket(e, 0, 50, 1000, 50), WEFT_OK);
        uint32_t l0 = 0, r = route1(e, 1, &l0, 0), f0, f1;
        CHECK_ERR(sim_engine_add_flow(e, r, 100, 1, &f0), WEFT_OK);
        CHECK_ERR(sim_engine_add_flow(e, r, 1000, 1, &f1), WEFT_OK);
        CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
        CHECK(sim_engine_flow_rate0(e, f0) == 500);
        sim_engine_flow_times(e, f0, &s, &dr, &dn);
        CHECK_NEAR(dn, 1.5);
        sim_engine_flow_times(e, f1, &s, &dr, &dn);
        CHECK_NEAR(dn, 10.5);
        sim_engine_get_stats(e, &st);
        CHECK(st.conservation_err < 1e-12);
        CHECK_NEAR(sim_engine_link_bytes(e, 0), 1100);
        sim_engine_free(e);
    }
}

int main(void)
{
    test_two_share();
    test_bottleneck();
    test_classic();
    test_split();
    test_deps();
    test_queue();
    test_bucket();
    test_ct_slower_hop();
    test_ct_shared_upstream();
    test_ct_catch_up();
    test_ct_reduce_two_deps();
    test_ct_chain();
    test_ct_errors();
    test_determinism(false);
    test_determinism(true);
    test_weights();
    test_weight_errors();
    test_cap_errors();
    for (int kind = 0; kind < 3; kind++)
        for (int wmode = 0; wmode < 3; wmode++)
            if (kind != 1 || wmode != 1) /* a cut-through pair has one weight */
                test_symmetry(kind, wmode);
    test_symmetry_errors();
    sim_engine *s = NULL;
    CHECK(weft_test_oom_sweep("engine", oom_ctor, oom_dtor, &s) > 0);
    CHECK(weft_test_oom_sweep("engine cut-through", oom_ctor_ct, oom_dtor, &s) > 0);
    CHECK(weft_test_oom_sweep("engine symmetry", oom_ctor_sym, oom_dtor, &s) > 0);
    return weft_test_done();
}
