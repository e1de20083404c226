/* A streaming simulator for rings of independent servers.
 *
 * When every class of a reduced ring (ring.c) has a route of one link class
 * that no other class uses, max-min sharing degenerates into processor
 * sharing: the flows on class c's link get rate[c] / (flows there) each.
 * Every ring flow has the same size, so under processor sharing they drain
 * in the order they arrived, and a server is a FIFO of finish tags in
 * "bytes served per flow" (virtual time): no rates to recompute, no
 * components, O(log classes) per event. Flows are created when they become
 * ready and retired when done, so memory is O(classes x slices), not
 * O(flows): 51 million class flows of a 100,000-rank ring fit in a few
 * megabytes.
 *
 * Semantics are the engine's (engine.h): a flow starts alpha after its
 * dependencies are done, shares its link from its start until drained, and
 * is done the route latency later; (step k, slice s, class c) waits for
 * (k-1, s, pred[c]) and (k, s-1, c). Results agree with the engine to
 * rounding (the engine sums coefficients where this divides by a count).
 * Deterministic: events are ordered by (time, sequence number).
 */
#ifndef WEFT_SIM_RING_FAST_H
#define WEFT_SIM_RING_FAST_H

#include <stdint.h>

#include "weft/err.h"

typedef struct sim_ring_fast_in {
    uint32_t nf;          /* classes (servers) */
    const uint32_t *pred; /* per class: the class its flows wait for */
    const double *rate;   /* per class: the rate of a flow alone, bytes/s */
    const double *lat;    /* per class: route latency, s */
    uint64_t steps;
    uint32_t slices;
    double bytes; /* per flow */
    double alpha; /* s */
} sim_ring_fast_in;

typedef struct sim_ring_fast_out {
    double makespan_s;
    uint64_t flows, events;
    /* Largest relative difference, over classes, between the bytes served
     * (rate integrated over busy time) and the bytes of the flows served. */
    double conservation_err;
} sim_ring_fast_out;

/* WEFT_ENOMEM; WEFT_EVERIFY if flows are left that never become ready
 * (pred is not a permutation whose cycles cover every class). */
weft_err sim_ring_fast_run(const sim_ring_fast_in *in, sim_ring_fast_out *out);

#endif
