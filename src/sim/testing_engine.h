/* Random flow sets for the flow engine's tests (engine_test,
 * engine_class_test, engine_fill_test): one generator, so that their
 * random fabrics are drawn alike. Test-only; internal to sim. */
#ifndef WEFT_SIM_TESTING_ENGINE_H
#define WEFT_SIM_TESTING_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

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

#endif
