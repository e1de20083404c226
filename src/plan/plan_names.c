/* A plan's intern table of node names (the nodes route paths cross): each
 * distinct name is stored once, NUL-terminated, in p->names and found again
 * through an open-addressing hash (FNV-1a, linear probing, load <= 1/2).
 * Ids are dense, in first-intern order, and never change while the plan
 * lives; names are never removed. See plan_internal.h for the layout. */
#include <string.h>

#include "base/alloc.h"
#include "plan/plan_internal.h"

static uint32_t name_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

const char *weft__plan_name(const weft_plan *p, uint32_t name)
{
    return p->names + p->name_off[name];
}

static bool name_lookup(const weft_plan *p, const char *s, size_t len, uint32_t *out)
{
    if (!p->name_slot_cap)
        return false;
    uint32_t mask = p->name_slot_cap - 1;
    for (uint32_t i = name_hash(s, len) & mask;; i = (i + 1) & mask) {
        uint32_t v = p->name_slots[i];
        if (!v)
            return false;
        const char *n = p->names + p->name_off[v - 1];
        if (strncmp(n, s, len) == 0 && n[len] == '\0') {
            *out = v - 1;
            return true;
        }
    }
}

static void name_put(uint32_t *slots, uint32_t cap, uint32_t hash, uint32_t id)
{
    uint32_t i = hash & (cap - 1);
    while (slots[i])
        i = (i + 1) & (cap - 1);
    slots[i] = id + 1;
}

/* Interns s[0..len) and writes its name id. */
weft_err weft__plan_name_intern(weft_plan *p, const char *s, size_t len, uint32_t *out)
{
    if (name_lookup(p, s, len, out))
        return WEFT_OK;
    if ((uint64_t)(p->nnames + 1) * 2 > p->name_slot_cap) {
        uint32_t ncap = p->name_slot_cap ? p->name_slot_cap * 2 : 64;
        uint32_t *slots = weft__calloc(ncap, sizeof *slots);
        if (!slots)
            return WEFT_ENOMEM;
        for (uint32_t v = 0; v < p->nnames; v++) {
            const char *n = p->names + p->name_off[v];
            name_put(slots, ncap, name_hash(n, strlen(n)), v);
        }
        weft__free(p->name_slots);
        p->name_slots = slots;
        p->name_slot_cap = ncap;
    }
    if (weft__grow((void **)&p->name_off, &p->name_off_cap, (size_t)p->nnames + 1,
                   sizeof *p->name_off))
        return WEFT_ENOMEM;
    if (p->names_len + len + 1 > UINT32_MAX)
        return WEFT_ELIMIT;
    if (weft__grow((void **)&p->names, &p->names_cap, p->names_len + len + 1, 1))
        return WEFT_ENOMEM;
    memcpy(p->names + p->names_len, s, len);
    p->names[p->names_len + len] = '\0';
    p->name_off[p->nnames] = (uint32_t)p->names_len;
    p->names_len += len + 1;
    name_put(p->name_slots, p->name_slot_cap, name_hash(s, len), p->nnames);
    *out = p->nnames++;
    return WEFT_OK;
}
