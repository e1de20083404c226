/* The periodic quotient of a ring: an approximation for rings without an
 * exact symmetry.
 *
 * A ring whose routes are private (after pruning, see prune.h, every ring
 * position uses one link no other position uses) is a cycle of independent
 * servers: position i serves whatever flows are on it at rate capacity /
 * coefficient of its link, and a flow leaves for position i + 1 when done.
 * Its exact symmetry classes (symm.h) follow the cyclic sequence of
 * position types (capacity, coefficient, latency): when the sequence is
 * periodic they are one period, but one irregular point (a partial leaf
 * group, the wrap-around) makes every position its own class, and the exact
 * simulation then costs positions x steps flows.
 *
 * The quotient keeps the ring's dominant period instead: it finds the
 * period p <= max_period with the fewest defects (positions i whose type
 * differs from that of i + p, cyclically; ties go to the smaller p) and
 * simulates the p classes i mod p as a ring of p servers, each with the
 * type most of its members have. It is exact for a ring that is periodic
 * (no defects) and otherwise approximates the defects by the regular
 * pattern: it is the exact time of a periodic ring with the same pattern
 * and the same number of steps. docs/sim.md gives the measured error.
 *
 * Cost: O(n x p) to find the period (with early exit), O(n) for the rest.
 */
#ifndef WEFT_SIM_PERIOD_H
#define WEFT_SIM_PERIOD_H

#include <stdint.h>

#include "sim/symm.h"

/* x: the ring's transfers (pred[i] must be i - 1 mod n) with pruned
 * routes. On success *out holds p transfer classes (class of i = i mod p,
 * the first member of the majority type represents it) and p link classes
 * (the representatives' links), *period = p and *defects the number of
 * defective positions. WEFT_ELIMIT when a route is not one private link,
 * pred is not the ring's, n < 4, or every period up to max_period has more
 * than max_defects defects; WEFT_ENOMEM. */
weft_err sim_period_classes(const sim_xfer_set *x, uint32_t max_period, uint32_t max_defects,
                            sim_classes *out, uint32_t *period, uint32_t *defects);

#endif
