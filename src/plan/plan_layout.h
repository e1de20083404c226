/* Where a plan's slots live, and what they hold at the start and must hold
 * at the end. Shared by the verifier (symbolic values) and the executor
 * (real buffers), so both apply exactly the same collective semantics.
 *
 * Every rank has `per_rank` physical slots: in an out-of-place plan in, out
 * and scratch one after another; in an in-place plan the larger of in and
 * out (the other aliases part of it, see weft/plan.h) and then scratch.
 */
#ifndef WEFT_PLAN_LAYOUT_H
#define WEFT_PLAN_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "plan/plan_internal.h"

typedef struct weft__layout {
    uint32_t nranks, chunks;
    uint32_t nin, nout, nscratch;
    uint32_t per_rank; /* physical slots per rank */
    weft_coll coll;
    weft_rank root;
    bool inplace;
    const weft_traffic *traffic; /* an alltoallv plan's matrix, else NULL */
} weft__layout;

/* Fills l from p's header; WEFT_ELIMIT when a rank's slots do not fit in
 * uint32. */
weft_err weft__layout_init(weft__layout *l, const weft_plan *p);

/* The physical slot of (buf, index) on rank r; index must be in range. */
uint32_t weft__layout_slot(const weft__layout *l, uint32_t r, weft_buf buf, uint32_t index);

/* The initial value of in[i] on rank r: true and the chunk id and the
 * contributing rank when it holds one, false when it starts empty. */
bool weft__layout_initial(const weft__layout *l, uint32_t r, uint32_t i, uint64_t *chunk,
                          uint32_t *from);

/* What out[i] on rank r must hold at the end: false when it is not part of
 * the postcondition (also a chunk of 0 bytes in an alltoallv plan: nothing
 * to deliver, so the slot may stay empty); else the chunk id and whether it must sum all ranks
 * (*all) or be the single contribution of *from. */
bool weft__layout_final(const weft__layout *l, uint32_t r, uint32_t i, uint64_t *chunk, bool *all,
                        uint32_t *from);

#endif
