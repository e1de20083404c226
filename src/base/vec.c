/* The growable array. See vec.h. */
#include "base/vec.h"

#include <string.h>

#include "base/alloc.h"

void weft__vec_init(weft__vec *v, size_t elem)
{
    v->data = NULL;
    v->n = v->cap = 0;
    v->elem = elem;
}

void weft__vec_fini(weft__vec *v)
{
    weft__free(v->data);
    v->data = NULL;
    v->n = v->cap = 0;
}

weft_err weft__vec_reserve(weft__vec *v, size_t n)
{
    return weft__grow(&v->data, &v->cap, n, v->elem) ? WEFT_ENOMEM : WEFT_OK;
}

weft_err weft__vec_push(weft__vec *v, const void *item)
{
    if (v->n == v->cap && weft__vec_reserve(v, v->n + 1))
        return WEFT_ENOMEM;
    memcpy(weft__vec_at(v, v->n++), item, v->elem);
    return WEFT_OK;
}
