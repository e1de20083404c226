/* What the all-to-all bound (a2a_bound.c) gives the optimal all-to-all plan
 * (a2a_optimal.c): the certified flow itself. a2a_optimal < a2a_bound. */
#ifndef WEFT_SYNTH_A2A_INTERNAL_H
#define WEFT_SYNTH_A2A_INTERNAL_H

#include <gmp.h>

#include "synth/orbits.h"
#include "weft/synth.h"
#include "weft/traffic.h"

/* The certified flow of a matrix as weighted routing trees (column
 * generation, a2a_colgen.c): tree k is rank rank[k]'s (the trees of a rank
 * are consecutive, ranks ascending), loads links link[first[k]] ..
 * link[first[k + 1] - 1] (one into each node it reaches that leads to a
 * rank the source sends to) and carries the fraction share[k] of each of
 * its rank's pairs: pair (s, d) sends share[k] of its bytes along the path
 * from s to d in tree k. The shares of a rank sum to exactly 1, and the
 * trees' loads are the optimal flow's, so they meet the bound. */
typedef struct weft__a2a_trees {
    uint32_t count;
    uint32_t *rank;  /* count */
    uint32_t *first; /* count + 1 */
    uint32_t *link;  /* first[count] */
    uint64_t *load;  /* first[count]: bytes of the matrix on each link */
    mpq_t *share;    /* count */
} weft__a2a_trees;

void weft__a2a_trees_fini(weft__a2a_trees *tr);

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
    /* A matrix whose bound column generation certified: trees.count > 0,
     * and the plan routes pair (s, d) on its rank's trees, except for the
     * ranks whose row_of is not UINT32_MAX: those are routed by their row
     * of x (rows of them, dem alike; a2a_bound.c "reroute_split"). x NULL
     * and row_of NULL when every rank takes its trees. Without trees
     * row_of is NULL and row r of x is rank r's. */
    weft__a2a_trees trees;
    uint32_t *row_of; /* nr, or NULL */
} weft__a2a_flow;

/* Solves and certifies the bound for traffic tm (NULL: uniform) and keeps
 * the flow: with tm every rank that sends is a source, solved by column
 * generation (f->trees) where the edge program is large or
 * opts->plan_trees (weft/synth.h), unless opts->edge_lp or
 * opts->exact_basis, or when it cannot certify (then by the edge program,
 * f->x, as the bound does); uniform traffic on a fabric with rank maps has one source (see
 * maps) unless !opts->use_symmetry, otherwise every rank. opts NULL: the
 * defaults. *b as weft_a2a_bound_compute gives it. */
weft_err weft__a2a_flow_compute(const weft_topo *t, const weft_traffic *tm,
                                const weft_a2a_bound_opts *opts, weft_a2a_bound *b,
                                weft__a2a_flow *f, weft_diag *d);
void weft__a2a_flow_fini(weft__a2a_flow *f);

#endif
