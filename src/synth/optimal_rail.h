/* The rail-hierarchical optimal schedule: a structured construction that
 * reaches the exact bound on fabrics of equal boxes joined by rails
 * (docs/optimal-scale.md), without any max-flow.
 *
 * Structure. The ranks are split into B boxes of G ranks: the hosts, in
 * order of their first rank, each host's ranks in rank order (rank g of
 * box b is "(b, g)"); a fabric whose ranks have no host is one box. Rail
 * g is the ranks (0, g) .. (B-1, g). Nothing else is assumed: which links
 * the transfers cross is left to the fabric's shortest-path routing.
 *
 * Schedule (one chunk per rank, one tree per root):
 *   allgather       the chunk of (b, g) goes round rail g as a chain
 *                   (b, g) -> (b+1, g) -> ... -> (b-1, g); every rank of
 *                   the chain, the root included, copies it directly to
 *                   the G - 1 other ranks of its box;
 *   reduce-scatter  the reverse: every rank of box b reduces its
 *                   contribution to the chunk of (t, g) into (b, g); the
 *                   partial sums go round rail g from (t+1, g) to (t, g);
 *   allreduce       reduce-scatter, then allgather, on one buffer.
 * Every NIC-to-rail link carries B - 1 chunks each way and every rank
 * sends (G - 1) B chunks inside its box. On h100:B (B >= 5) and a100:B
 * (B >= 3) that is exactly the bound; elsewhere it may fall short.
 *
 * Acceptance. The plan is built, and its exact throughput under the plan
 * cost model (weft_plan_cost_get: per-link loads on the routes the plan
 * implies) is compared with the exact bound. Only an equal plan is
 * returned; otherwise the caller falls back to tree packing and the note
 * says why. So the structure is a guess that costs one plan build; the
 * throughput reported is always the one the plan reaches.
 *
 * Size: B * G * (B - 1 + B (G - 1)) transfers per phase (h100:512: 16.7
 * million), built through the emitter of src/synth/emit.h, so time and
 * memory are linear in the transfers (docs/optimal-scale.md has figures).
 */
#ifndef WEFT_SYNTH_OPTIMAL_RAIL_H
#define WEFT_SYNTH_OPTIMAL_RAIL_H

#include <stddef.h>

#include "weft/synth.h"

/* Tries the construction for coll (allgather, reducescatter, allreduce) on
 * t, whose exact bound b the caller computed. K is 0 (any number of trees
 * per root) or 1 (one tree per root: the box schedule is then asked for
 * one tree per local root too). When its plan reaches the
 * bound: *plan is the plan and *info (not NULL) describes it, method
 * WEFT_OPTIMAL_RAIL. Otherwise *plan stays NULL, *info untouched, and
 * note (note_size bytes) says why in one line. Errors: WEFT_ENOMEM,
 * WEFT_ELIMIT (the plan would exceed the plan limits) with d set; a
 * fabric the construction does not fit is not an error. */
weft_err opt_rail_try(const weft_topo *t, weft_coll coll, const weft_bound *b, uint32_t K,
                      weft_plan **plan, weft_optimal *info, char *note, size_t note_size,
                      weft_diag *d);

#endif
