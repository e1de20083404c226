/* What the all-to-all bound (a2a_bound.c) gives the optimal all-to-all plan
 * (a2a_optimal.c): the certified flow itself. a2a_optimal < a2a_bound. */
#ifndef WEFT_SYNTH_A2A_INTERNAL_H
#define WEFT_SYNTH_A2A_INTERNAL_H

#include <gmp.h>

#include "weft/synth.h"
#include "weft/traffic.h"

/* An exactly feasible, optimal flow of the all-to-all (uniform or a
 * matrix): x[s*m + l] is rank s's flow on link l (0 for a rank that sends
 * nothing), dem[s*nr + d] the scaled demand of pair (s, d) (0 on the
 * diagonal) and theta the rate: pair (s, d) receives theta * dem[s*nr + d]
 * (all in the same scaled units, so only their ratios matter). */
typedef struct weft__a2a_flow {
    uint32_t nr, m;
    mpq_t *x;
    mpq_t *dem;  /* nr * nr */
    mpq_t theta; /* initialised only when x is not NULL */
} weft__a2a_flow;

/* Solves and certifies the bound without symmetry (every rank that sends a
 * source) for traffic tm (NULL: uniform) and keeps the flow. *b as
 * weft_a2a_bound_compute gives it. */
weft_err weft__a2a_flow_compute(const weft_topo *t, const weft_traffic *tm, weft_a2a_bound *b,
                                weft__a2a_flow *f, weft_diag *d);
void weft__a2a_flow_fini(weft__a2a_flow *f);

#endif
