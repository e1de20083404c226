/* The 64-bit hash map. See map.h. */
#include "base/map.h"

#include <string.h>

#include "base/alloc.h"

void weft__map64_init(weft__map64 *m)
{
    memset(m, 0, sizeof *m);
}

void weft__map64_fini(weft__map64 *m)
{
    weft__free(m->key);
    weft__free(m->val);
    weft__free(m->used);
    weft__map64_init(m);
}

void weft__map64_clear(weft__map64 *m)
{
    if (m->cap)
        memset(m->used, 0, m->cap);
    m->n = 0;
}

/* The slot of key, or of the empty slot where it would go (cap > 0). */
static size_t slot_of(const weft__map64 *m, uint64_t key)
{
    size_t mask = m->cap - 1, i = (size_t)weft__mix64(key) & mask;
    while (m->used[i] && m->key[i] != key)
        i = (i + 1) & mask;
    return i;
}

weft_err weft__map64_reserve(weft__map64 *m, size_t n)
{
    if (n <= m->cap / 2)
        return WEFT_OK;
    size_t ncap = m->cap ? m->cap : 16;
    while (ncap / 2 < n) {
        if (ncap > SIZE_MAX / 2 / sizeof *m->key)
            return WEFT_ENOMEM;
        ncap *= 2;
    }
    weft__map64 fresh = {weft__malloc(ncap * sizeof *m->key), weft__malloc(ncap * sizeof *m->val),
                         weft__calloc(ncap, 1), ncap, m->n};
    if (!fresh.key || !fresh.val || !fresh.used) {
        weft__map64_fini(&fresh);
        return WEFT_ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        size_t j = slot_of(&fresh, m->key[i]);
        fresh.used[j] = 1;
        fresh.key[j] = m->key[i];
        fresh.val[j] = m->val[i];
    }
    weft__map64_fini(m);
    *m = fresh;
    return WEFT_OK;
}

uint32_t *weft__map64_find(const weft__map64 *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    size_t i = slot_of(m, key);
    return m->used[i] ? &m->val[i] : NULL;
}

/* The slot of key, made when absent: one probe, two only when the map
 * grows (insertions used to probe for the key, then again for the empty
 * slot, and put once more before that). *added when made. WEFT_ENOMEM
 * leaves the map as it was. */
static weft_err slot_make(weft__map64 *m, uint64_t key, size_t *at, bool *added)
{
    size_t i = 0, cap = m->cap;
    *added = false;
    if (cap) {
        i = slot_of(m, key);
        if (m->used[i]) {
            *at = i;
            return WEFT_OK;
        }
    }
    if (weft__map64_reserve(m, m->n + 1))
        return WEFT_ENOMEM;
    if (m->cap != cap) /* grown: probe the new slots (else i is still the empty slot) */
        i = slot_of(m, key);
    m->used[i] = 1;
    m->key[i] = key;
    m->n++;
    *added = true;
    *at = i;
    return WEFT_OK;
}

weft_err weft__map64_get_or_put(weft__map64 *m, uint64_t key, uint32_t val, uint32_t *out,
                                bool *added)
{
    size_t i;
    bool made;
    if (added)
        *added = false;
    if (slot_make(m, key, &i, &made))
        return WEFT_ENOMEM;
    if (made)
        m->val[i] = val;
    *out = m->val[i];
    if (added)
        *added = made;
    return WEFT_OK;
}

weft_err weft__map64_put(weft__map64 *m, uint64_t key, uint32_t val)
{
    size_t i;
    bool made;
    if (slot_make(m, key, &i, &made))
        return WEFT_ENOMEM;
    m->val[i] = val;
    return WEFT_OK;
}

bool weft__map64_del(weft__map64 *m, uint64_t key)
{
    if (!m->cap)
        return false;
    size_t mask = m->cap - 1, i = slot_of(m, key);
    if (!m->used[i])
        return false;
    /* Backward shift: move later members of the probe run into the hole
     * when their home slot does not lie cyclically in (hole, j]. */
    for (size_t j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
        size_t home = (size_t)weft__mix64(m->key[j]) & mask;
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (stays)
            continue;
        m->key[i] = m->key[j];
        m->val[i] = m->val[j];
        i = j;
    }
    m->used[i] = 0;
    m->n--;
    return true;
}
