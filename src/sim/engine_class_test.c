/* Traffic classes in the flow engine (engine.h, "Traffic classes"):
 * hand-computed strict-priority rates and times, and the guarantee that
 * background flows never move a training flow's times, checked bit for
 * bit on random fabrics and flow sets, with cut-through and token buckets. */
#include <math.h>
#include <stdlib.h>

#include "base/testing.h"
#include "sim/engine.h"
#include "sim/testing_engine.h"

static uint32_t route(sim_engine *e, uint32_t n, const uint32_t *links, double lat)
{
    double coef[4] = {1, 1, 1, 1};
    uint32_t r = UINT32_MAX;
    CHECK_ERR(sim_engine_add_route(e, n, links, coef, lat, &r), WEFT_OK);
    return r;
}

static uint32_t flow(sim_engine *e, uint32_t r, double bytes, uint32_t cls)
{
    uint32_t f = UINT32_MAX;
    CHECK_ERR(sim_engine_add_flow(e, r, bytes, 1, &f), WEFT_OK);
    CHECK_ERR(sim_engine_set_class(e, f, cls), WEFT_OK);
    return f;
}

static double done_at(const sim_engine *e, uint32_t f)
{
    double s, dr, dn;
    sim_engine_flow_times(e, f, &s, &dr, &dn);
    return dn;
}

/* One link of 10 GB/s: a training flow of 4 GB takes it whole for 0.4 s;
 * a background flow of 4 GB beside it waits, then drains at 10 GB/s from
 * 0.4 s to 0.8 s. Swapping the classes swaps the times. */
static void test_wait(void)
{
    for (uint32_t bg_first = 0; bg_first < 2; bg_first++) {
        double cap[] = {1e10};
        sim_engine *e;
        CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
        uint32_t l0 = 0, r = route(e, 1, &l0, 0);
        uint32_t a = flow(e, r, 4e9, bg_first), b = flow(e, r, 4e9, !bg_first);
        CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
        uint32_t train = bg_first ? b : a, bg = bg_first ? a : b;
        CHECK(done_at(e, train) == 0.4);
        CHECK(done_at(e, bg) == 0.8);
        CHECK(sim_engine_flow_rate0(e, train) == 1e10);
        double s, dr, dn;
        sim_engine_flow_times(e, bg, &s, &dr, &dn);
        CHECK(s == 0); /* started at 0, at rate 0 until 0.4 s */
        sim_engine_stats st;
        sim_engine_get_stats(e, &st);
        CHECK(st.makespan_s == 0.8);
        CHECK(sim_engine_link_bytes(e, 0) == 8e9);
        CHECK(st.conservation_err == 0);
        sim_engine_free(e);
    }
}

/* The residual capacity, by class (GB/s): links 0 (10), 1 (4), 2 (1).
 * Training T (4 GB) crosses links 0 and 1: 4 GB/s, link 1 its
 * bottleneck. Class 1 shares what T leaves, 6 on link 0, max-min fair:
 * B2 (1 GB, links 0 and 2) is held to 1 by link 2, B1 (5 GB, link 0) gets
 * the other 5; class 2's C (10 GB, link 0) gets nothing until all three
 * drain together at 1 s, then all 10: done at 2 s. */
static void test_residual(void)
{
    double cap[] = {10e9, 4e9, 1e9};
    sim_engine *e;
    CHECK_ERR(sim_engine_new(3, cap, NULL, &e), WEFT_OK);
    uint32_t l01[] = {0, 1}, l0[] = {0}, l02[] = {0, 2};
    uint32_t c = flow(e, route(e, 1, l0, 0), 10e9, 2);
    uint32_t b1 = flow(e, route(e, 1, l0, 0), 5e9, 1);
    uint32_t t = flow(e, route(e, 2, l01, 0), 4e9, 0);
    uint32_t b2 = flow(e, route(e, 2, l02, 0), 1e9, 1);
    CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
    CHECK(sim_engine_flow_rate0(e, t) == 4e9);
    CHECK(sim_engine_flow_rate0(e, b1) == 5e9);
    CHECK(sim_engine_flow_rate0(e, b2) == 1e9);
    CHECK(sim_engine_flow_rate0(e, c) == 10e9); /* its first rate above 0 */
    CHECK(done_at(e, t) == 1.0);
    CHECK(done_at(e, b1) == 1.0);
    CHECK(done_at(e, b2) == 1.0);
    CHECK(done_at(e, c) == 2.0);
    CHECK(sim_engine_link_bytes(e, 0) == 20e9);
    CHECK(sim_engine_link_bytes(e, 1) == 4e9);
    CHECK(sim_engine_link_bytes(e, 2) == 1e9);
    sim_engine_free(e);
}

/* Preemption and a dependency on training: on one link of 1 GB/s,
 * training A (1 GB) runs 0..1 s, training B (1 GB) after A from 1.5 s
 * (route latency 0.5 s on A: done at 1.5) to 2.5 s. Background G (1.5 GB)
 * starts at 0: nothing until 1 s, 0.5 GB in the gap 1..1.5 s, preempted
 * by B. Background H (0.25 GB)
 * waits for A to be done (1.5 s): it gets nothing beside B, and shares
 * with G from 2.5 s (0.5 GB/s each): done at 3.0 s; G has 0.75 GB left
 * then, alone at 1 GB/s: done at 3.75 s. */
static void test_gaps(void)
{
    double cap[] = {1e9};
    sim_engine *e;
    CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
    uint32_t l0 = 0, rl = route(e, 1, &l0, 0.5), r = route(e, 1, &l0, 0);
    uint32_t a = flow(e, rl, 1e9, 0), b = flow(e, r, 1e9, 0);
    uint32_t g = flow(e, r, 1.5e9, 1), h = flow(e, r, 0.25e9, 1);
    CHECK_ERR(sim_engine_add_dep(e, b, a), WEFT_OK);
    CHECK_ERR(sim_engine_add_dep(e, h, a), WEFT_OK);
    CHECK_ERR(sim_engine_run(e, 0, NULL), WEFT_OK);
    CHECK(done_at(e, a) == 1.5);
    CHECK(done_at(e, b) == 2.5);
    CHECK(done_at(e, h) == 3.0);
    CHECK(done_at(e, g) == 3.75);
    sim_engine_free(e);
}

/* Random fabrics and flow sets: NT training flows (class 0) over random
 * routes with random dependencies on earlier training flows (cut through
 * when ct and the sizes match), weights 1 .. 3 and queue deps, then, when bg, NB background flows
 * in classes 1 and 2 over random routes, some waiting for a training flow or an earlier background
 * flow (cut through on one of their own class and size when ct). With buckets, every fifth link has
 * a token bucket. */
enum { NL = 24, NT = 600, NB = 300 };

static sim_engine *random_run(uint32_t seed, bool ct, bool buckets, bool bg, weft_err *err)
{
    double cap[NL];
    uint64_t x = seed;
#define NEXT() sim_test_next(&x)
    for (int i = 0; i < NL; i++)
        cap[i] = 1e9 * (1 + NEXT() % 8);
    sim_engine *e;
    if ((*err = sim_engine_new(NL, cap, NULL, &e)))
        return NULL;
    for (uint32_t l = 0; buckets && l < NL && !*err; l += 5)
        *err = sim_engine_set_bucket(e, l, 2e6, 3 * cap[l], l % 2 ? 2e6 : 0);
    uint32_t nf = bg ? NT + NB : NT;
    uint8_t cls_of[NT + NB];
    for (uint32_t f = 0; f < nf && !*err; f++) {
        uint32_t links[4], r, id;
        double coef[4];
        uint32_t n = sim_test_route(&x, NL, links, coef);
        double bytes = 1e6 * (1 + NEXT() % (ct ? 2 : 50));
        uint32_t cls = f < NT ? 0 : 1 + NEXT() % 2;
        cls_of[f] = (uint8_t)cls;
        /* Weights by size (a cut-through pair has one size, so one weight). */
        double w = 1 + fmod(bytes / 1e6, 3);
        if ((*err = sim_engine_add_route(e, n, links, coef, 1e-6 * (NEXT() % 5), &r)) ||
            (*err = sim_engine_add_weighted_flow(e, r, bytes, 1, w, &id)) ||
            (*err = sim_engine_set_class(e, id, cls)))
            break;
        /* Every seventh flow queued behind the one before it, in one class
         * (so at most one flow is queued behind each). */
        if (f % 7 == 0 && f > 0 && cls_of[f - 1] == cls &&
            (*err = sim_engine_add_queue_dep(e, f, f - 1)))
            break;
        if (f <= 10 || (f >= NT && NEXT() % 3 == 0))
            continue; /* released at once */
        /* Training flows wait for training flows; background flows for
         * either, cut through only on their own class. */
        uint32_t dep = f < NT ? f - 1 - NEXT() % 10 : NEXT() % f;
        if (ct && cls_of[dep] == cls && sim_engine_flow_bytes(e, dep) == bytes)
            *err = sim_engine_add_ct_dep(e, f, dep);
        else
            *err = sim_engine_add_dep(e, f, dep);
    }
#undef NEXT
    if (!*err)
        *err = sim_engine_run(e, 1e-6, NULL);
    return e;
}

/* The training flows' start, drain and done times are the same, bit for
 * bit, with the background flows as without; every background flow
 * finishes, no earlier than it could alone, and bytes are conserved. */
static void test_never_delays(uint32_t seed, bool ct, bool buckets)
{
    weft_err e1, e2;
    sim_engine *a = random_run(seed, ct, buckets, false, &e1);
    sim_engine *b = random_run(seed, ct, buckets, true, &e2);
    CHECK_ERR(e1, WEFT_OK);
    CHECK_ERR(e2, WEFT_OK);
    if (!e1 && !e2) {
        uint32_t moved = 0;
        for (uint32_t f = 0; f < NT; f++) {
            double s1, d1, n1, s2, d2, n2;
            sim_engine_flow_times(a, f, &s1, &d1, &n1);
            sim_engine_flow_times(b, f, &s2, &d2, &n2);
            moved += s1 != s2 || d1 != d2 || n1 != n2;
        }
        if (moved)
            fprintf(stderr, "  seed %u ct %d buckets %d: %u training flows moved\n", seed, ct,
                    buckets, moved);
        CHECK_INT(moved, 0);
        sim_engine_stats sa, sb;
        sim_engine_get_stats(a, &sa);
        sim_engine_get_stats(b, &sb);
        uint32_t unfinished = 0;
        for (uint32_t f = NT; f < NT + NB; f++) {
            double s, dr, dn;
            sim_engine_flow_times(b, f, &s, &dr, &dn);
            unfinished += !(dn >= s && dn <= sb.makespan_s);
        }
        CHECK_INT(unfinished, 0);
        CHECK(sb.makespan_s >= sa.makespan_s);
        CHECK(sb.conservation_err < 1e-9);
    }
    sim_engine_free(a);
    sim_engine_free(b);
}

static void test_errors(void)
{
    double cap[] = {1e9};
    sim_engine *e;
    CHECK_ERR(sim_engine_new(1, cap, NULL, &e), WEFT_OK);
    uint32_t l0 = 0, r = route(e, 1, &l0, 0), f0, f1;
    CHECK_ERR(sim_engine_add_flow(e, r, 1e6, 1, &f0), WEFT_OK);
    CHECK_ERR(sim_engine_add_flow(e, r, 1e6, 1, &f1), WEFT_OK);
    CHECK_ERR(sim_engine_set_class(e, 2, 1), WEFT_EINVAL);
    CHECK_ERR(sim_engine_set_class(e, f0, SIM_ENGINE_CLASSES), WEFT_EINVAL);
    CHECK_ERR(sim_engine_set_class(e, f1, 1), WEFT_OK);
    CHECK_ERR(sim_engine_add_ct_dep(e, f1, f0), WEFT_OK);
    weft_diag d = {0};
    CHECK_ERR(sim_engine_run(e, 0, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "sim: a cut-through flow and its dep are in different classes");
    CHECK_ERR(sim_engine_set_class(e, f1, 0), WEFT_EINVAL); /* after the run */
    sim_engine_free(e);
}

/* Allocation failures anywhere in a run with classes, cut-through and
 * buckets: WEFT_ENOMEM, nothing leaked (the sweep fails each allocation
 * in turn). */
static weft_err oom_ctor(void *arg)
{
    weft_err e;
    sim_engine *s = random_run(2, true, true, true, &e);
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
    test_wait();
    test_residual();
    test_gaps();
    for (uint32_t seed = 1; seed <= 6; seed++)
        for (int mode = 0; mode < 4; mode++)
            test_never_delays(seed, mode & 1, mode & 2);
    test_errors();
    sim_engine *s = NULL;
    CHECK(weft_test_oom_sweep("engine classes", oom_ctor, oom_dtor, &s) > 0);
    return weft_test_done();
}
