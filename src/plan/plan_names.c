/* A plan's intern table of node names (the nodes route paths cross): each
 * distinct name is stored once, NUL-terminated, in p->names and found again
 * through base's name index (FNV-1a, linear probing, load <= 1/2).
 * Ids are dense, in first-intern order, and never change while the plan
 * lives; names are never removed. See plan_internal.h for the layout. */
#include <string.h>

#include "base/alloc.h"
#include "plan/plan_internal.h"

const char *weft__plan_name(const weft_plan *p, uint32_t name)
{
    return p->names + p->name_off[name];
}

/* Interns s[0..len) and writes its name id. */
weft_err weft__plan_name_intern(weft_plan *p, const char *s, size_t len, uint32_t *out)
{
    if (weft__name_index_find(&p->name_index, p->names, p->name_off, s, len, out))
        return WEFT_OK;
    weft_err e = weft__name_index_reserve(&p->name_index, p->nnames, p->names, p->name_off);
    if (e)
        return e;
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
    weft__name_index_put(&p->name_index, weft__name_hash(s, len), p->nnames);
    *out = p->nnames++;
    return WEFT_OK;
}
