/* The verifier's state, shared by its files: verify.c (structure, routes,
 * symbolic execution, the postcondition and the driver), verify_order.c
 * (topological order and vector clocks), verify_sets.c (contribution sets)
 * and verify_msg.c (how ops are named in messages). verify.c's opening
 * comment gives the method. Nothing outside src/plan includes this header.
 *
 * File order (docs/architecture.md): verify_msg < verify_sets, verify_circuits,
 * verify_order < verify; a file calls only the files before it.
 */
#ifndef WEFT_PLAN_VERIFY_INTERNAL_H
#define WEFT_PLAN_VERIFY_INTERNAL_H

#include "plan/plan_layout.h"

/* A vector clock array, shared by reference. */
typedef struct vclock {
    uint32_t refs;
    uint32_t len;
    uint32_t v[];
} vclock;

typedef struct verifier {
    const weft_plan *p;
    const weft_topo *topo;
    weft_diag *d;
    weft__layout l;
    /* Graph. */
    uint64_t *succ_start;
    uint32_t *succ;
    uint32_t *indeg;   /* unprocessed deps, for Kahn */
    uint32_t *outleft; /* unprocessed successors, to release clocks */
    uint32_t *order;   /* topological order */
    /* Chains and clocks. */
    uint32_t *chain, *pos;
    uint32_t *chain_tail;
    size_t nchains, chain_cap;
    vclock **vc;
    /* Slots. */
    size_t nslots;
    uint32_t *s_chunk, *s_set, *s_writer, *s_readers;
    uint32_t *rd_op, *rd_next;
    size_t nrd, rd_cap, rd_next_cap;
    /* Sets: set i is intervals iv[set_start[i] .. + set_len[i]) of [lo, hi). */
    uint32_t *iv;
    size_t niv, iv_cap;
    uint64_t *set_start;
    uint32_t *set_len;
    size_t nsets, set_cap, set_len_cap;
} verifier;

/* ---- verify_msg.c ---- */

/* "in[3]" or "in[3..5]": count slots of buffer b from index. */
void weft__verify_describe_range(weft_buf b, uint32_t index, uint32_t count, char *buf,
                                 size_t size);

/* Says on v->d that op id is wrong: "op ID (rank S -> rank D, ...): " and
 * the formatted reason; returns WEFT_EVERIFY. */
weft_err weft__verify_fail(verifier *v, uint32_t id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* WEFT_ENOMEM, said on v->d. */
weft_err weft__verify_oom(verifier *v);

/* ---- verify_circuits.c ---- */

/* The circuit checks of weft/plan.h, "Circuits": ports used once per epoch
 * each way, circuits that exist in v->topo (when given), and every route
 * path across an OCS on a circuit of its epoch. WEFT_OK for a plan without
 * circuits. */
weft_err weft__verify_circuits(verifier *v);

/* ---- verify_order.c ---- */

/* Fills v->order with one topological order (smallest ready id first) and
 * the successor lists; a cycle is WEFT_EVERIFY naming the ops on it. */
weft_err weft__verify_order(verifier *v);
/* Assigns op x to a chain and computes its clock. */
weft_err weft__verify_clock_op(verifier *v, uint32_t x);
/* True when w is ordered before x (x's clock is computed). */
bool weft__verify_ordered(const verifier *v, uint32_t w, uint32_t x);
/* Releases the clocks of x's deps that have no successor left. */
void weft__verify_clock_done(verifier *v, uint32_t x);
/* Drops op's reference to its clock array, freeing it with the last one. */
void weft__verify_vc_release(verifier *v, uint32_t op);

/* ---- verify_sets.c ---- */

/* A new set of the n intervals iv[0 .. 2n) (pairs lo, hi); writes its id. */
weft_err weft__verify_set_new(verifier *v, const uint32_t *iv, size_t n, uint32_t *out);
/* Union of two disjoint sets into a new set; when they overlap, *dup is the
 * smallest common rank and no set is made. */
weft_err weft__verify_set_union(verifier *v, uint32_t a, uint32_t b, uint32_t *out, uint32_t *dup);

#endif
