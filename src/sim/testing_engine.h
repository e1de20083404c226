/* Random flow sets for the flow engine's tests (engine_test,
 * engine_class_test, engine_fill_test, engine_above_test): one generator,
 * so that their random fabrics are drawn alike, and one comparison of two
 * runs. Test-only; internal to sim. */
#ifndef WEFT_SIM_TESTING_ENGINE_H
#define WEFT_SIM_TESTING_ENGINE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "sim/engine.h"

/* The next draw of the tests' linear congruential generator (Knuth's
 * MMIX constants), its high bits. */
static inline uint32_t sim_test_next(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*x >> 33);
}

/* A route of 1 to 4 distinct links of nl (links[]), each with
 * coefficient 1 or 0.5 (coef[]), drawn from *x; its length. */
static inline uint32_t sim_test_route(uint64_t *x, uint32_t nl, uint32_t links[4], double coef[4])
{
    uint32_t n = 1 + sim_test_next(x) % 4;
    for (uint32_t k = 0; k < n; k++) {
        bool dup;
        do {
            links[k] = sim_test_next(x) % nl;
            dup = false;
            for (uint32_t j = 0; j < k; j++)
                dup |= links[j] == links[k];
        } while (dup);
        coef[k] = sim_test_next(x) % 2 ? 1.0 : 0.5;
    }
    return n;
}

/* Do two runs agree to the bit (every flow's times and first rate, the
 * makespan and the counts of events and refills)? */
static inline bool sim_test_same_run(const sim_engine *a, const sim_engine *b)
{
    bool same = sim_engine_num_flows(a) == sim_engine_num_flows(b);
    for (uint32_t f = 0; same && f < sim_engine_num_flows(a); f++) {
        double t[4], u[4];
        sim_engine_flow_times(a, f, &t[0], &t[1], &t[2]);
        sim_engine_flow_times(b, f, &u[0], &u[1], &u[2]);
        t[3] = sim_engine_flow_rate0(a, f);
        u[3] = sim_engine_flow_rate0(b, f);
        same = !memcmp(t, u, sizeof t);
    }
    sim_engine_stats sa, sb;
    sim_engine_get_stats(a, &sa);
    sim_engine_get_stats(b, &sb);
    return same && !memcmp(&sa.makespan_s, &sb.makespan_s, sizeof sa.makespan_s) &&
           sa.events == sb.events && sa.refills == sb.refills;
}

/* Do two runs agree within rel relative (every flow's times and first
 * rate, the makespan), with as many events? The largest relative
 * difference goes to *worst. */
static inline bool sim_test_close_run(const sim_engine *a, const sim_engine *b, double rel,
                                      double *worst)
{
    bool same = sim_engine_num_flows(a) == sim_engine_num_flows(b);
    *worst = 0;
    for (uint32_t f = 0; same && f < sim_engine_num_flows(a); f++) {
        double t[4], u[4];
        sim_engine_flow_times(a, f, &t[0], &t[1], &t[2]);
        sim_engine_flow_times(b, f, &u[0], &u[1], &u[2]);
        t[3] = sim_engine_flow_rate0(a, f);
        u[3] = sim_engine_flow_rate0(b, f);
        for (int i = 0; i < 4; i++) {
            double x = fabs(t[i] - u[i]) / (fabs(t[i]) > 0 ? fabs(t[i]) : 1);
            *worst = x > *worst ? x : *worst;
        }
    }
    sim_engine_stats sa, sb;
    sim_engine_get_stats(a, &sa);
    sim_engine_get_stats(b, &sb);
    double x = fabs(sa.makespan_s - sb.makespan_s) / sa.makespan_s;
    *worst = x > *worst ? x : *worst;
    return same && *worst <= rel && sa.events == sb.events;
}

#endif
