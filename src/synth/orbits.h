/* Rank orbits under verified automorphisms of a weighted fabric.
 *
 * Two ranks are in one orbit when some automorphism of the fabric (a
 * permutation of the nodes that keeps every node's kind and maps every link
 * onto a link of the same weight) maps one onto the other. A flow problem
 * that is defined by the graph alone then has the same answer at both, so
 * the bound runs one max-flow per orbit instead of one per rank.
 *
 * Safety: ranks are only ever merged by an automorphism that has been built
 * and then checked link by link, so a reported orbit is always a union of
 * true orbit members; when the search fails to find an automorphism the
 * ranks simply stay apart (more max-flows, same answer). Candidate
 * automorphisms are found by colour refinement (1-dimensional
 * Weisfeiler-Leman, weighted and directed) followed by a greedy matching
 * outward from the two ranks; each candidate costs O((V + E) log E).
 *
 * It lives in synth because the bounds (bound.c, a2a_bound.c) and the optimal
 * all-to-all plan (a2a_optimal.c, through the rank maps below) are its users
 * and it needs no more of a fabric than the public weft/topo.h.
 */
#ifndef WEFT_SYNTH_ORBITS_H
#define WEFT_SYNTH_ORBITS_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/topo.h"

typedef struct weft__orbits {
    uint32_t n_reps;
    uint32_t *reps;        /* one rank per orbit, ascending */
    uint32_t *rank_of;     /* per rank: the representative of its orbit */
    uint32_t tried, found; /* candidate automorphisms tried and verified */
    /* Per link: the smallest link id of its orbit under the group that the
     * verified automorphisms generate (union-find over each generator's
     * link map: exactly the orbits of the generated group). NULL unless
     * asked for with weft__orbits_compute_links. */
    uint32_t *link_of;
} weft__orbits;

/* Computes the orbits of the ranks of t, whose link l has weight w[l].
 * With search false every rank is its own orbit. WEFT_ENOMEM only. */
weft_err weft__orbits_compute(const weft_topo *t, const int64_t *w, bool search, weft__orbits *out);
/* The same, and also the link orbits (out->link_of) of the same group, so
 * that a flow problem can sum its link constraints over link orbits
 * (a2a_bound.c). WEFT_ENOMEM only. */
weft_err weft__orbits_compute_links(const weft_topo *t, const int64_t *w, bool search,
                                    weft__orbits *out);
/* Frees what weft__orbits_compute stored; safe on a zeroed struct. */
void weft__orbits_fini(weft__orbits *o);

/* A group H of verified automorphisms acting regularly on the ranks (for
 * every rank s exactly one g_s in H with g_s(rank 0) = s), for the optimal
 * all-to-all plan: a flow of rank 0 mapped by every g_s gives a flow of
 * every rank, and the loads they add up to on a link are those of the
 * link's H-orbit (a2a_bound.c). H = <A, C> from the fabric's structure:
 * A moves every host to the next (the i-th node of host h to the i-th of
 * host h+1, in node order; identical hosts), C rotates the ranks within
 * every host at once; the nodes they leave open (shared switches, rails)
 * are matched outward as the orbit search does, and both are checked link
 * by link, as are A^B = C^k = 1, AC = CA and regularity. Fabrics without
 * that structure (no identical hosts, a box whose ranks do not rotate,
 * torus:4x4) get none: found is false. */
typedef struct weft__rank_maps {
    uint32_t nr, n;
    uint32_t rep;       /* rank 0: every g_s maps it to s */
    uint32_t *node_map; /* nr * n: node_map[s * n + v] = g_s(v) */
    uint32_t *link_of;  /* per link: the smallest link id of its H-orbit */
} weft__rank_maps;

/* Finds H for t with link weights w (equal iff bandwidths are); *found
 * false, *out zeroed, when there is none (or more than 2^26 map entries).
 * WEFT_ENOMEM only. O(N n + B n + (n + m) log m). */
weft_err weft__rank_maps_compute(const weft_topo *t, const int64_t *w, weft__rank_maps *out,
                                 bool *found);
/* Frees what weft__rank_maps_compute stored; safe on a zeroed struct. */
void weft__rank_maps_fini(weft__rank_maps *rm);

#endif
