/* The flow engine against hand-computed max-min fair rates and times,
 * dependencies, cycles, determinism, conservation and allocation failure. */
#include <math.h>
#include <stdlib.h>

#include "base/testing.h"
#include "sim/engine.h"

static bool close_to(double a, double b)
{
    return fabs(a - b) <= 1e-12 * fabs(b);
}

#define CHECK_NEAR(a, b)                                                                           \
    do {                                                                                           \
        double x_ = (a), y_ = (b);                                                                 \
        if (!close_to(x_, y_))                                                                     \
            fprintf(stderr, "  %s = %.17g, expected %.17g\n", #a, x_, y_);                        \
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

/* A pseudo-random scenario: many flows over random routes with random
 * dependencies on earlier flows. Returns the engine after the run. */
static sim_engine *random_run(uint32_t seed, weft_err *err)
{
    enum { NL = 40, NF = 3000 };
    double cap[NL];
    uint64_t x = seed;
#define NEXT() (x = x * 6364136223846793005ull + 1442695040888963407ull, (uint32_t)(x >> 33))
    for (int i = 0; i < NL; i++)
        cap[i] = 1e9 * (1 + NEXT() % 8);
    sim_engine *e;
    if ((*err = sim_engine_new(NL, cap, NULL, &e)))
        return NULL;
    for (uint32_t f = 0; f < NF; f++) {
        uint32_t n = 1 + NEXT() % 4, links[4], r, id;
        double coef[4];
        for (uint32_t k = 0; k < n; k++) {
            uint32_t l;
            bool dup;
            do {
                l = NEXT() % NL;
                dup = false;
                for (uint32_t j = 0; j < k; j++)
                    dup |= links[j] == l;
            } while (dup);
            links[k] = l;
            coef[k] = (NEXT() % 2) ? 1.0 : 0.5;
        }
        if ((*err = sim_engine_add_route(e, n, links, coef, 1e-6 * (NEXT() % 5), &r)) ||
            (*err = sim_engine_add_flow(e, r, 1e6 * (1 + NEXT() % 100), 1, &id)))
            break;
        if (f > 10 && (*err = sim_engine_add_dep(e, f, f - 1 - NEXT() % 10)))
            break;
    }
#undef NEXT
    if (!*err)
        *err = sim_engine_run(e, 1e-6, NULL);
    return e;
}

static void test_determinism(void)
{
    weft_err e1, e2;
    sim_engine *a = random_run(7, &e1), *b = random_run(7, &e2);
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
    CHECK(sa.events == 9000);
    CHECK(sa.conservation_err < 1e-9);
    if (sa.conservation_err >= 1e-9)
        fprintf(stderr, "  conservation %.3g\n", sa.conservation_err);
    sim_engine_free(a);
    sim_engine_free(b);
}

static weft_err oom_ctor(void *arg)
{
    weft_err e;
    sim_engine *s = random_run(3, &e);
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

int main(void)
{
    test_two_share();
    test_bottleneck();
    test_classic();
    test_split();
    test_deps();
    test_determinism();
    sim_engine *s = NULL;
    CHECK(weft_test_oom_sweep("engine", oom_ctor, oom_dtor, &s) > 0);
    return weft_test_done();
}
