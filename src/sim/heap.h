/* An intrusive, index-based min-heap of events for the simulator.
 *
 * Entries are small integer ids (0 .. cap-1), each in the heap at most once;
 * the heap remembers every id's position, so an id's key can be changed or
 * the id removed in O(log n) without searching. Keys are (time, seq): equal
 * times pop in the order the keys were set, which with a monotonically
 * increasing seq makes the simulation deterministic by construction (no
 * dependence on heap layout or on the order ids happen to be stored).
 * Storage is two arrays sized once; nothing is allocated per operation.
 */
#ifndef WEFT_SIM_HEAP_H
#define WEFT_SIM_HEAP_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/err.h"

typedef struct sim_heap_ent {
    double t;
    uint64_t seq;
    uint32_t id;
} sim_heap_ent;

typedef struct sim_heap {
    sim_heap_ent *ent; /* ent[0 .. n) is the heap */
    uint32_t *pos;     /* pos[id]: index in ent, or UINT32_MAX when absent */
    uint32_t n, cap;
    uint64_t next_seq;
} sim_heap;

/* Storage for ids 0 .. cap-1. _fini is safe on a zeroed or half-built heap. */
weft_err sim_heap_init(sim_heap *h, uint32_t cap);
void sim_heap_fini(sim_heap *h);
/* Makes room for ids 0 .. cap-1, keeping the entries and their order.
 * WEFT_ENOMEM leaves the heap as it was (possibly with a larger block). */
weft_err sim_heap_reserve(sim_heap *h, uint32_t cap);

/* Inserts id at time t, or moves it there if present; either way it gets a
 * fresh sequence number (it pops after every key set earlier at time t). */
void sim_heap_set(sim_heap *h, uint32_t id, double t);
bool sim_heap_contains(const sim_heap *h, uint32_t id);
void sim_heap_remove(sim_heap *h, uint32_t id);
/* The smallest entry; the heap must not be empty. */
static inline const sim_heap_ent *sim_heap_top(const sim_heap *h)
{
    return &h->ent[0];
}
/* Removes and returns the smallest id; the heap must not be empty. */
uint32_t sim_heap_pop(sim_heap *h);

#endif
