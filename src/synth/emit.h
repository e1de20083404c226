/* Writing plans as sequential programs.
 *
 * The classic algorithms are easiest to state as a sequence of transfers
 * ("step 3: rank 5 sends chunk 2 to rank 6"). An emitter turns such a
 * sequence into a plan whose deps are exactly the data dependences of the
 * sequence: an op depends on the last writer of every slot it reads (RAW),
 * on the last writer of every slot it writes (WAW) and on every reader of
 * a slot it overwrites since that slot was last written (WAR). Every
 * execution order the deps allow then gives the result of running the
 * sequence in order, and independent transfers stay concurrent. Algorithms
 * that want more order than the data needs (pairwise all-to-all's steps)
 * pass extra deps.
 *
 * Slots are tracked by (rank, buffer, index) in a hash table of the slots
 * touched, so memory is O(slots touched + reads), not O(ranks * slots).
 * Callers must name each storage location by one (buffer, index) only:
 * the emitter does not know that in-place in and out alias.
 */
#ifndef WEFT_SYNTH_EMIT_H
#define WEFT_SYNTH_EMIT_H

#include "base/map.h"
#include "weft/plan.h"

typedef struct synth_slot_state synth_slot_state;

typedef struct synth_emit {
    weft_plan *plan; /* borrowed: ops are appended to it */
    /* Touched slots, numbered densely: key (rank, buf, index) packed ->
     * slot number, which indexes writer and read_head. */
    weft__map64 slot_of;
    uint32_t *writer;    /* last op that wrote the slot, WEFT_PLAN_NO_OP if none */
    uint32_t *read_head; /* first entry of the slot's reader list, UINT32_MAX if none */
    size_t writer_cap, read_head_cap;
    /* Reader lists: a pool of (op, next) entries. Overwritten slots drop
     * their list without reclaiming its entries (O(total reads) memory). */
    uint32_t *reader_op, *reader_next;
    size_t nreaders, reader_cap, reader_next_cap;
    uint32_t *scratch; /* dep collection */
    size_t scratch_cap;
    uint64_t touched; /* slots touched so far: sum of the ops' counts */
} synth_emit;

/* Starts emitting into plan p (which the caller keeps owning). */
void synth_emit_init(synth_emit *e, weft_plan *p);
void synth_emit_fini(synth_emit *e);

/* Appends the op {kind, src, dst, count, channel} after everything emitted
 * before it, with its data dependences plus `extra` deps. Writes the op id
 * to *id when id is not NULL. An op costs O(count) (two slot lookups per
 * chunk, mostly cache misses on large plans): when the plan has an op
 * limit (weft_plan_limit_ops), WEFT_ELIMIT also once the counts sum to
 * more than the limit, so that a limited build is cheap however many
 * chunks its ops move (hd on N ranks moves N/2 a step). */
weft_err synth_emit_op(synth_emit *e, weft_op_kind kind, uint32_t src_rank, weft_buf src_buf,
                       uint32_t src_index, uint32_t dst_rank, weft_buf dst_buf, uint32_t dst_index,
                       uint32_t count, uint32_t channel, const uint32_t *extra, uint32_t nextra,
                       uint32_t *id);

/* Ends an algorithm's emission: finishes e, then hands p to *out when err
 * is WEFT_OK or frees it otherwise. Returns err. */
weft_err synth_finish(weft_err err, synth_emit *e, weft_plan *p, weft_plan **out);

/* Shorthands for the common case of one buffer on both sides. */
weft_err synth_copy(synth_emit *e, uint32_t src, uint32_t dst, weft_buf buf, uint32_t index,
                    uint32_t count, uint32_t channel, uint32_t *id);
weft_err synth_reduce(synth_emit *e, uint32_t src, uint32_t dst, weft_buf buf, uint32_t index,
                      uint32_t count, uint32_t channel, uint32_t *id);

#endif
