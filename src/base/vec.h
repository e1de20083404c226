/* A growable array of fixed-size elements, on weft__grow.
 *
 * For code that would otherwise keep a (pointer, count, capacity) triple
 * and call weft__grow before every append. The elements are stored
 * contiguously in v->data (NULL until the first push) and may move when the
 * array grows: keep indices, not pointers, across a push. Growth at least
 * doubles, so n pushes cost O(n) element copies in all.
 */
#ifndef WEFT_BASE_VEC_H
#define WEFT_BASE_VEC_H

#include <stddef.h>

#include "weft/err.h"

typedef struct weft__vec {
    void *data;
    size_t n, cap, elem; /* elements held, room for, bytes each */
} weft__vec;

/* An empty array of elements of elem bytes (elem > 0); allocates nothing. */
void weft__vec_init(weft__vec *v, size_t elem);
/* Frees the storage and leaves the array empty; safe on a zeroed one. */
void weft__vec_fini(weft__vec *v);
/* Room for at least n elements. WEFT_ENOMEM leaves the array as it was. */
weft_err weft__vec_reserve(weft__vec *v, size_t n);
/* Appends a copy of the elem bytes at item. WEFT_ENOMEM leaves the array as
 * it was. */
weft_err weft__vec_push(weft__vec *v, const void *item);
/* Element i (i < v->n). */
static inline void *weft__vec_at(const weft__vec *v, size_t i)
{
    return (char *)v->data + i * v->elem;
}

#endif
