/* What the all-to-all bound (a2a_bound.c) gives the optimal all-to-all plan
 * (a2a_optimal.c): the certified flow itself. a2a_optimal < a2a_bound. */
#ifndef WEFT_SYNTH_A2A_INTERNAL_H
#define WEFT_SYNTH_A2A_INTERNAL_H

#include <gmp.h>

#include "synth/orbits.h"
#include "weft/synth.h"
#include "weft/traffic.h"

/* An exactly feasible, optimal flow of the all-to-all (uniform or a
 * matrix): x[s*m + l] is rank s's flow on link l (0 for a rank that sends
 * nothing), dem[s*nr + d] the scaled demand of pair (s, d) (0 on the
 * diagonal) and theta the rate: pair (s, d) receives theta * dem[s*nr + d]
 * (all in the same scaled units, so only their ratios matter). */
typedef struct weft__a2a_flow {
    uint32_t nr, m;
    uint32_t rows; /* nr, or 1 with maps (only rank 0's flow and demands) */
    mpq_t *x;      /* rows * m */
    mpq_t *dem;    /* rows * nr */
    mpq_t theta;   /* initialised only when x is not NULL */
    /* Uniform traffic on a fabric with a regular group of rank maps
     * (orbits.h): node_map not NULL, x is rank 0's flow, and rank s's flow
     * is x mapped by g_s (x[g_s^-1 e]); the program had one source and the
     * group's link orbits as classes, which makes the mapped flows
     * together feasible. Otherwise node_map is NULL. */
    weft__rank_maps maps;
} weft__a2a_flow;

/* Solves and certifies the bound for traffic tm (NULL: uniform) and keeps
 * the flow: with tm every rank that sends is a source; uniform traffic on a
 * fabric with rank maps has one source (see maps), otherwise every rank. *b as
 * weft_a2a_bound_compute gives it. */
weft_err weft__a2a_flow_compute(const weft_topo *t, const weft_traffic *tm, weft_a2a_bound *b,
                                weft__a2a_flow *f, weft_diag *d);
void weft__a2a_flow_fini(weft__a2a_flow *f);

#endif
