/* An intrusive, index-based min-heap of events keyed by a double time with
 * a sequence tie-break (the simulator's event queue; base/heap.h has the
 * plain heap of 64-bit keys).
 *
 * Entries are small integer ids (0 .. cap-1), each in the heap at most once;
 * the heap remembers every id's position, so an id's key can be changed or
 * the id removed in O(log n) without searching. Keys are (time, seq): equal
 * times pop in the order the keys were set, which with a monotonically
 * increasing seq makes the simulation deterministic by construction (no
 * dependence on heap layout or on the order ids happen to be stored).
 * Storage is two arrays sized once; nothing is allocated per operation.
 */
#ifndef WEFT_BASE_EVHEAP_H
#define WEFT_BASE_EVHEAP_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/err.h"

typedef struct weft__evheap_ent {
    double t;
    uint64_t seq;
    uint32_t id;
} weft__evheap_ent;

typedef struct weft__evheap {
    weft__evheap_ent *ent; /* ent[0 .. n) is the heap */
    uint32_t *pos;         /* pos[id]: index in ent, or UINT32_MAX when absent */
    uint32_t n, cap;
    uint64_t next_seq;
} weft__evheap;

/* Storage for ids 0 .. cap-1. _fini is safe on a zeroed or half-built heap. */
weft_err weft__evheap_init(weft__evheap *h, uint32_t cap);
void weft__evheap_fini(weft__evheap *h);
/* Makes room for ids 0 .. cap-1, keeping the entries and their order.
 * WEFT_ENOMEM leaves the heap as it was (possibly with a larger block). */
weft_err weft__evheap_reserve(weft__evheap *h, uint32_t cap);

/* Inserts id at time t, or moves it there if present; either way it gets a
 * fresh sequence number (it pops after every key set earlier at time t). */
void weft__evheap_set(weft__evheap *h, uint32_t id, double t);
/* For keys set lazily (the flow engine's fill heap): _take_seq consumes
 * the sequence number weft__evheap_set would give now, and _set_seq sets
 * id's key to (t, seq) with such a number; _key is the time of id's key
 * (id in the heap). */
static inline uint64_t weft__evheap_take_seq(weft__evheap *h)
{
    return h->next_seq++;
}
void weft__evheap_set_seq(weft__evheap *h, uint32_t id, double t, uint64_t seq);
static inline double weft__evheap_key(const weft__evheap *h, uint32_t id)
{
    return h->ent[h->pos[id]].t;
}
/* Inline: the flow engine asks for each rate it sets. */
static inline bool weft__evheap_contains(const weft__evheap *h, uint32_t id)
{
    return h->pos[id] != UINT32_MAX;
}
void weft__evheap_remove(weft__evheap *h, uint32_t id);
/* The smallest entry; the heap must not be empty. */
static inline const weft__evheap_ent *weft__evheap_top(const weft__evheap *h)
{
    return &h->ent[0];
}
/* Removes and returns the smallest id; the heap must not be empty. */
uint32_t weft__evheap_pop(weft__evheap *h);

#endif
