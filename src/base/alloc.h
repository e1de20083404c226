/* Allocation wrappers.
 *
 * All library allocations go through these functions so that tests can make
 * the N-th allocation fail (weft__alloc_fail_after) and check that every
 * constructor then returns WEFT_ENOMEM and frees what it had taken
 * (weft__alloc_live counts blocks allocated and not yet freed).
 * The counters are atomic, so the wrappers are thread safe.
 */
#ifndef WEFT_BASE_ALLOC_H
#define WEFT_BASE_ALLOC_H

#include <stddef.h>

void *weft__malloc(size_t size);
void *weft__calloc(size_t count, size_t size);
/* Like realloc; on failure the old block stays valid and owned by the caller.
 * realloc(p, 0) is not supported: size must be > 0. */
void *weft__realloc(void *ptr, size_t size);
/* realloc for an array of count elements of size bytes; NULL on overflow. */
void *weft__realloc_array(void *ptr, size_t count, size_t size);
void weft__free(void *ptr);
/* A heap copy of s (or of its first n bytes, NUL added); NULL on failure. */
char *weft__strdup(const char *s);
char *weft__strndup(const char *s, size_t n);

/* Makes the allocation after `n` more successful ones fail, and every one
 * after that (n == 0 fails the next). A negative n turns injection off. */
void weft__alloc_fail_after(long n);
/* Blocks allocated through these wrappers and not yet freed. */
long weft__alloc_live(void);

/* Grows *buf (of *cap elements of elem bytes) to hold at least need
 * elements, at least doubling. Returns 0 or -1 on allocation failure. */
int weft__grow(void **buf, size_t *cap, size_t need, size_t elem);

#endif
