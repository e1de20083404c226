/* A hash map from 64-bit keys to 32-bit values: open addressing, linear
 * probing, at most half full, deletion by backward shift (no tombstones,
 * so probe lengths never degrade after deletes).
 *
 * Every key is allowed, 0 and UINT64_MAX included (a byte per slot says
 * whether it is used). Keys are spread by splitmix64's finaliser, so dense
 * or patterned keys ((src << 32) | dst, packed slot coordinates, already
 * mixed signatures) all probe short. A value is typically an index into the
 * caller's own array of records; get_or_put with the map's count as the
 * new value numbers distinct keys densely in first-insertion order.
 *
 * No iteration: users look keys up, and nothing they print depends on the
 * slot order. Lookups are O(1) expected; growth doubles and rehashes.
 */
#ifndef WEFT_BASE_MAP_H
#define WEFT_BASE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/err.h"

typedef struct weft__map64 {
    uint64_t *key;
    uint32_t *val;
    uint8_t *used; /* 1 where slot i holds key[i] -> val[i] */
    size_t cap, n; /* slots (0 or a power of two), keys held */
} weft__map64;

/* splitmix64's finaliser (Steele, Lea, Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014; the constants of Vigna's
 * splitmix64.c): a bijection on 64 bits. */
static inline uint64_t weft__mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* An empty map; allocates nothing. _fini is safe on a zeroed map. */
void weft__map64_init(weft__map64 *m);
void weft__map64_fini(weft__map64 *m);
/* Room for n keys in all without growing. WEFT_ENOMEM leaves the map as it
 * was. */
weft_err weft__map64_reserve(weft__map64 *m, size_t n);
/* Removes every key, keeping the storage. */
void weft__map64_clear(weft__map64 *m);
/* The value of key, or NULL when absent; valid until the next put. */
uint32_t *weft__map64_find(const weft__map64 *m, uint64_t key);
/* Sets key's value, adding the key when absent. WEFT_ENOMEM (only when the
 * map must grow) leaves the map as it was. */
weft_err weft__map64_put(weft__map64 *m, uint64_t key, uint32_t val);
/* *out = key's value; when absent, first adds key with value val and sets
 * *added (when added is not NULL). WEFT_ENOMEM leaves the map as it was. */
weft_err weft__map64_get_or_put(weft__map64 *m, uint64_t key, uint32_t val, uint32_t *out,
                                bool *added);
/* Removes key; false when it was absent. */
bool weft__map64_del(weft__map64 *m, uint64_t key);

#endif
