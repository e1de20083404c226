/* The name index. See name_index.h. */
#include <string.h>

#include "base/alloc.h"
#include "base/name_index.h"

uint32_t weft__name_hash(const char *s, size_t len)
{
    /* FNV-1a's 32-bit offset basis and prime (Fowler, Noll, Vo; IETF draft
     * draft-eastlake-fnv, section 2.1). */
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

static bool name_matches(const char *strings, const uint32_t *name_off, uint32_t node,
                         const char *s, size_t len)
{
    const char *n = strings + name_off[node];
    return strncmp(n, s, len) == 0 && n[len] == '\0';
}

bool weft__name_index_find(const weft__name_index *ix, const char *strings,
                           const uint32_t *name_off, const char *s, size_t len, uint32_t *out)
{
    if (!ix->cap)
        return false;
    uint32_t mask = ix->cap - 1;
    for (uint32_t i = weft__name_hash(s, len) & mask;; i = (i + 1) & mask) {
        uint32_t v = ix->slots[i];
        if (!v)
            return false;
        if (name_matches(strings, name_off, v - 1, s, len)) {
            *out = v - 1;
            return true;
        }
    }
}

void weft__name_index_put(weft__name_index *ix, uint32_t hash, uint32_t id)
{
    uint32_t mask = ix->cap - 1;
    uint32_t i = hash & mask;
    while (ix->slots[i])
        i = (i + 1) & mask;
    ix->slots[i] = id + 1;
}

/* Makes room for one more of `count` entries, rehashing from names. */
weft_err weft__name_index_reserve(weft__name_index *ix, uint32_t count, const char *strings,
                                  const uint32_t *name_off)
{
    if ((uint64_t)(count + 1) * 2 <= ix->cap)
        return WEFT_OK;
    uint32_t ncap = ix->cap ? ix->cap * 2 : 64;
    if (ncap < ix->cap)
        return WEFT_ELIMIT;
    uint32_t *slots = weft__calloc(ncap, sizeof *slots);
    if (!slots)
        return WEFT_ENOMEM;
    weft__name_index fresh = {slots, ncap};
    for (uint32_t v = 0; v < count; v++) {
        const char *n = strings + name_off[v];
        weft__name_index_put(&fresh, weft__name_hash(n, strlen(n)), v);
    }
    weft__free(ix->slots);
    *ix = fresh;
    return WEFT_OK;
}
