/* An index of names kept in the caller's string arena: open addressing over
 * ids keyed by name (FNV-1a, linear probing, at most half full).
 *
 * The names themselves are not copied: id i's name is the NUL-terminated
 * text at strings + name_off[i], in whatever arena the caller owns (a
 * fabric's node and host names, a plan's interned route names), so an id is
 * found from a name without a second copy of every string. Ids are the
 * caller's dense numbers; the index is only ever added to. Slots hold
 * id + 1, 0 is empty; the capacity is a power of two. The arena may move
 * between calls (it is passed to each), but name_off[i] must stay valid.
 *
 * Use: reserve(count) before adding the count-th id (0-based), then put.
 */
#ifndef WEFT_BASE_NAME_INDEX_H
#define WEFT_BASE_NAME_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/err.h"

typedef struct weft__name_index {
    uint32_t *slots; /* cap slots, free with weft__free; NULL when cap == 0 */
    uint32_t cap;
} weft__name_index;

/* FNV-1a, 32-bit, of s[0..len). */
uint32_t weft__name_hash(const char *s, size_t len);

/* find: true and *out = the id named s[0..len) (s need not be
 * NUL-terminated), else false. put: adds id under hash, its name's
 * weft__name_hash (the caller has reserved room). reserve: makes room for
 * one more of `count` ids, rehashing ids 0 .. count-1 from their names;
 * WEFT_ENOMEM (the index unchanged), or WEFT_ELIMIT when the capacity would
 * overflow. */
bool weft__name_index_find(const weft__name_index *ix, const char *strings,
                           const uint32_t *name_off, const char *s, size_t len, uint32_t *out);
void weft__name_index_put(weft__name_index *ix, uint32_t hash, uint32_t id);
weft_err weft__name_index_reserve(weft__name_index *ix, uint32_t count, const char *strings,
                                  const uint32_t *name_off);

#endif
