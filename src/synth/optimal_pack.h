/* Packing spanning out-trees on the switch-free graph (optimal_pack.c).
 * The file order is in optimal_internal.h. */
#ifndef WEFT_SYNTH_OPTIMAL_PACK_H
#define WEFT_SYNTH_OPTIMAL_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "synth/optimal_graph.h"

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
