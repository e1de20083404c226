/* Symmetry reduction of a set of concurrent transfers.
 *
 * Given the transfers of one step of a collective (routes as (link,
 * coefficient) lists, latencies, and for each transfer the transfer of the
 * previous step it waits for), finds the coarsest equitable partition of
 * transfers and links by colour refinement (1-dimensional Weisfeiler-Leman
 * on the weighted transfer/link graph plus the "waits for" map): two
 * transfers end in one class only if they have the same latency, the same
 * multiset of (link class, coefficient) on their routes and predecessors in
 * the same class; two links only if they have the same capacity and the
 * same multiset of (transfer class, coefficient) crossing them.
 *
 * Why it is exact. In an equitable partition every link of a class sees the
 * same total coefficient from each transfer class. Progressive filling then
 * saturates whole link classes at once and freezes whole transfer classes
 * at once, so members of a class always get equal rates; by induction on
 * events (members start together because their predecessors are in one
 * class) they have equal event times. Simulating one representative per
 * class on one capacity per link class, with coefficient
 * (class size x the representative's coefficient sum on the link class /
 * link class size), gives exactly the full system's times.
 *
 * The one inexact point: signatures are compared by 64-bit hash, so two
 * different signatures could in principle be merged (probability about
 * n^2 / 2^64). Cost: O(rounds x (transfers + route entries)), rounds at
 * most the number of classes, in practice the period of the pattern.
 */
#ifndef WEFT_SIM_SYMM_H
#define WEFT_SIM_SYMM_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/map.h"
#include "weft/err.h"

#define SIM_NONE UINT32_MAX

/* The hashing both colour refinements (symm.c over transfers, engine_symm.c
 * over an engine's flows) build signatures with: splitmix64's finaliser,
 * and a double's exact bits (equal values, equal bits). */
static inline uint64_t sim_mix64(uint64_t x)
{
    return weft__mix64(x);
}

static inline uint64_t sim_double_bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

typedef struct sim_xfer_set {
    uint32_t n;            /* transfers */
    const uint32_t *r_off; /* n + 1: transfer i's route is entries r_off[i] .. r_off[i+1]-1 */
    const uint32_t *link;  /* physical link ids */
    const double *coef;    /* load per unit of rate */
    const double *lat;     /* route latency per transfer, seconds */
    const uint32_t *pred;  /* per transfer: what it waits for in the previous step, or SIM_NONE */
    uint32_t n_links;      /* physical links; ids are below this */
    const double *cap;     /* capacity of each physical link */
} sim_xfer_set;

typedef struct sim_classes {
    uint32_t nf, nl;           /* transfer classes, link classes */
    uint32_t *fcls;            /* per transfer: its class */
    uint32_t *lcls;            /* per physical link: its class, SIM_NONE if unused */
    uint32_t *fcount, *lcount; /* members per class */
    uint32_t *frep, *lrep;     /* first member of each class */
    uint32_t rounds;           /* refinement rounds run */
} sim_classes;

/* With refine false every transfer and every used link is its own class
 * (the unreduced simulation). With refine true and max_classes > 0,
 * refinement stops with WEFT_ELIMIT as soon as there are more than
 * max_classes transfer classes (classes only ever split, so the final
 * partition would have more too); this bounds the cost on rings with no
 * symmetry, where refinement would otherwise run one round per position.
 * WEFT_ENOMEM, WEFT_ELIMIT. */
weft_err sim_classes_compute(const sim_xfer_set *x, bool refine, uint32_t max_classes,
                             sim_classes *out);
/* Frees the arrays; safe on a zeroed struct. */
void sim_classes_fini(sim_classes *c);

#endif
