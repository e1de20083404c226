/* The cut memory of the optimal schedule's max-flow checks (optimal_cuts.c),
 * shared by the edge splitting (optimal_graph.c) and the packing
 * (optimal_pack.c); the first in the file order of optimal_internal.h. */
#ifndef WEFT_SYNTH_OPTIMAL_CUTS_H
#define WEFT_SYNTH_OPTIMAL_CUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/err.h"

/* Cuts met by the max-flow checks, remembered with their surplus (the
 * slack of the condition on that set). Both the splitting and the packing
 * only ever lower surpluses, and each knows exactly which sets a step
 * lowers and by how much, so a remembered surplus stays exact: a set of
 * surplus 0 forbids a step without a max-flow, and a small one bounds it.
 * Sets are bitsets of `words` 64-bit words. At most OPT_MAX_CUTS distinct
 * sets are kept (a smaller memory only means more max-flows). */
typedef struct opt_cuts {
    uint32_t words;
    uint64_t *bits;   /* n sets of `words` words */
    int64_t *surplus; /* n */
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

#endif
