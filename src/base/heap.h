/* A binary min-heap of 64-bit keys.
 *
 * The queue of the library's ordered searches (Kahn's topological order by
 * smallest id, matching by (degree, order) keys). An item with a payload
 * packs it into the key's low bits, e.g. (priority << 32) | id: a key is then
 * unique and the pop order is fully fixed by the keys, whatever the heap's
 * layout. Equal keys are indistinguishable, so there is no tie to break.
 * The simulator's event queue, which needs decrease-key and (time, sequence)
 * order, is base/evheap.h.
 *
 * weft__heapsort sorts an array in place by the same method.
 *
 * Push and pop are O(log n); storage grows by doubling (weft__grow) and is
 * never shrunk, so a heap reserved for its largest size allocates nothing
 * after that.
 */
#ifndef WEFT_BASE_HEAP_H
#define WEFT_BASE_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "weft/err.h"

typedef struct weft__heap64 {
    uint64_t *key; /* key[0 .. n) is the heap */
    size_t n, cap;
} weft__heap64;

/* An empty heap; allocates nothing. _fini is safe on a zeroed heap. */
void weft__heap64_init(weft__heap64 *h);
void weft__heap64_fini(weft__heap64 *h);
/* Room for cap keys. WEFT_ENOMEM leaves the heap as it was. */
weft_err weft__heap64_reserve(weft__heap64 *h, size_t cap);
/* Adds key. WEFT_ENOMEM (only when the heap must grow) leaves it as it was. */
weft_err weft__heap64_push(weft__heap64 *h, uint64_t key);
/* Removes and returns the smallest key; the heap must not be empty. */
uint64_t weft__heap64_pop(weft__heap64 *h);

/* Sorts the n elements of elem bytes at a into increasing order of cmp (as
 * qsort's) in place: a heapsort, O(n log n) time and no memory besides the
 * array and one element (glibc's qsort may take a copy of the array, which
 * for 2^24 16-byte records is 256 MiB more). Not stable: give equal
 * elements a tie-break when their order matters. elem <= 64. */
void weft__heapsort(void *a, size_t n, size_t elem, int (*cmp)(const void *, const void *));

#endif
