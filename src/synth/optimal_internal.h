/* Internals of the throughput-optimal schedule (docs/optimal.md).
 *
 * One phase (an allgather, or a reduce-scatter built as an allgather on the
 * reversed fabric) goes through three steps, each in its own file:
 *
 *   optimal_graph.c  integer capacities c_l = b_l k / r, the rooted
 *                    connectivity condition checked with max-flows, and
 *                    switch removal by edge splitting;
 *   optimal_pack.c   packing k spanning out-trees per rank on the
 *                    switch-free graph, in groups of identical trees;
 *   optimal.c        routes of tree edges over physical links, the plan,
 *                    and the public entry point.
 *
 * The working graph is a list of "entries": an entry is a directed edge
 * u -> v with an integer capacity that is either a fabric link or the
 * splice of two entries a (u -> w) and b (w -> v) made by splitting at w.
 * An entry therefore stands for exactly one physical path; an entry's
 * units are units of every link on that path. Entries are never removed;
 * a spent entry keeps cap 0 and stays as a parent of its splices.
 *
 * Everything is exact integer arithmetic; every max-flow is the integer
 * max-flow of src/topo/maxflow.h.
 */
#ifndef WEFT_SYNTH_OPTIMAL_INTERNAL_H
#define WEFT_SYNTH_OPTIMAL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/maxflow.h"
#include "weft/synth.h"

#define OPT_NONE UINT32_MAX

typedef struct opt_entry {
    uint32_t u, v; /* ends in the phase's direction (node ids) */
    int64_t cap;   /* units still free */
    /* A fabric link: a = link id, b = OPT_NONE. A splice: entries a, b. */
    uint32_t a, b;
} opt_entry;

/* The working graph of one phase. */
typedef struct opt_graph {
    const weft_topo *t;
    bool reverse; /* reduce-scatter: every link is used backwards */
    uint32_t n, nr;
    int64_t k; /* trees per root */
    weft_mf_algo algo;
    opt_entry *e;
    size_t ne, cap_e;
    uint64_t maxflows; /* max-flow runs so far (a statistic) */
} opt_graph;

void opt_graph_fini(opt_graph *g);

/* Sets g's capacities for per-rank rate r (GB/s, exact) and k trees per
 * root: c_l = floor(b_l k / r). With k == 0, chooses the smallest k that
 * makes every b_l k / r an integer (WEFT_EOVERFLOW when it exceeds
 * 2^31). g->t, reverse and algo must be set. */
weft_err opt_graph_caps(opt_graph *g, weft_rat r, int64_t k, weft_diag *d);

/* Lowers capacities until every non-compute node has equal in- and
 * out-capacity (only needed after flooring; see docs/optimal.md). */
void opt_graph_trim(opt_graph *g);

/* The condition: with a super-source joined to every rank by capacity k,
 * every rank receives a flow of N k. */
weft_err opt_graph_feasible(opt_graph *g, bool *ok);

/* Splits off every non-compute node (edge splitting that keeps the
 * condition). WEFT_ETOPO names a node that cannot be split completely. */
weft_err opt_graph_split(opt_graph *g, weft_diag *d);

/* Appends the physical node path of entry i (in the phase's direction,
 * from its u to its v) to path[*len ...]; path holds enough room (the
 * caller sizes it by opt_entry_hops + 1). */
void opt_entry_path(const opt_graph *g, uint32_t i, uint32_t *path, uint32_t *len);
uint32_t opt_entry_hops(const opt_graph *g, uint32_t i);

/* Cuts met by the max-flow checks, remembered with their surplus (the
 * slack of the condition on that set). Both the splitting and the packing
 * only ever lower surpluses, and each knows exactly which sets a step
 * lowers and by how much, so a remembered surplus stays exact: a set of
 * surplus 0 forbids a step without a max-flow, and a small one bounds it.
 * Sets are bitsets of `words` 64-bit words. At most OPT_MAX_CUTS distinct
 * sets are kept (a smaller memory only means more max-flows). */
typedef struct opt_cuts {
    uint32_t words;
    uint64_t *bits;    /* n sets of `words` words */
    int64_t *surplus;  /* n */
    size_t n, cap_n, cap_bits;
} opt_cuts;

#define OPT_MAX_CUTS 4096

void opt_cuts_init(opt_cuts *c, uint32_t n_elems);
void opt_cuts_fini(opt_cuts *c);
/* Remembers set with its surplus, unless it is known already or the
 * memory is full. WEFT_ENOMEM only. */
weft_err opt_cuts_add(opt_cuts *c, const uint64_t *set, int64_t surplus);

static inline bool opt_bit(const uint64_t *set, uint32_t i)
{
    return (set[i / 64] >> (i % 64)) & 1;
}

static inline void opt_bit_set(uint64_t *set, uint32_t i)
{
    set[i / 64] |= 1ull << (i % 64);
}

/* One group of identical trees of one root, over ranks. Edges are in
 * order of addition (every parent is in the tree before its child) and
 * name ranks in the phase's direction (parent -> child). */
typedef struct opt_group {
    uint32_t root;
    int64_t mult;
    uint32_t n_edges;
    uint32_t *from, *to; /* n_edges each; room for nr - 1 */
    uint8_t *in;         /* nr flags: rank is in the tree */
} opt_group;

typedef struct opt_forest {
    opt_group *g;
    size_t n, cap;
} opt_forest;

void opt_forest_fini(opt_forest *f);

/* Packs k spanning out-trees per rank on g's switch-free graph (every
 * live entry joins two ranks), in groups of identical trees whose
 * multiplicities sum to k per root, never using more units of a rank pair
 * than its entries hold. g's capacities are left as they are (the caller
 * routes the trees over them). WEFT_ETOPO if the packing gets stuck,
 * which the condition rules out. */
weft_err opt_pack(opt_graph *g, opt_forest *out, weft_diag *d);

#endif
