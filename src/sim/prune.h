/* Dropping links that can never limit a rate.
 *
 * Max-min fair rates depend only on the links that saturate. A link can be
 * left out of every route, without changing any rate, when even its worst
 * case cannot exceed its capacity. The worst case is bounded per transfer
 * slot: all flows that ever use transfer i's route (every step and slice of
 * one ring position) share that route's tightest link, so together they
 * never move faster than B_i = min over the route of capacity / coefficient.
 * A link l whose static bound, the sum over routes crossing it of
 * coefficient x B_i, is at most its capacity therefore never carries more
 * than its capacity. Progressive filling on the pruned system gives rates
 * that load l at most to its capacity, so they are feasible for the full
 * system; a flow frozen by a kept link is frozen at the same level in both
 * (if l reaches its capacity exactly, the flows on it are already at their
 * final rate, so freezing them there changes nothing). The rates, hence
 * every event time, are the full system's. The first tightest link of each
 * route is always kept, so B_i stays enforced.
 *
 * Why it matters. On a rail-optimised clos every ring hop's tightest link is
 * its own NIC or NVLink port, and the spine, rail and host-switch links it
 * shares with its neighbours have headroom: after pruning no two ring
 * positions share a link, the equitable partition no longer sees leaf
 * groups, partial groups or the wrap-around, and 100,000 transfers fall
 * into a handful of classes.
 *
 * Rounding: bounds are compared in doubles; a bound that equals a capacity
 * only up to rounding counts as not binding (an error at the level of
 * double rounding). Cost: O(route entries + links).
 */
#ifndef WEFT_SIM_PRUNE_H
#define WEFT_SIM_PRUNE_H

#include <stdint.h>

#include "weft/err.h"

/* Routes of n transfers in CSR form (r_off has n + 1 entries; entries
 * r_off[i] .. r_off[i+1]-1 are transfer i's (link, coefficient) pairs, no
 * link twice in one route, coefficients > 0); cap[l] > 0 is link l's
 * capacity. Removes the entries of links that can never saturate, in place
 * (r_off, link and coef are compacted; kept entries keep their order).
 * *pruned receives the number of distinct links dropped. WEFT_ENOMEM
 * only; on failure nothing has changed. */
weft_err sim_prune_links(uint32_t n, uint32_t *r_off, uint32_t *link, double *coef,
                         uint32_t n_links, const double *cap, uint32_t *pruned);

#endif
