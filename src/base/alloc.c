#include "base/alloc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static atomic_long fail_countdown = -1;
static atomic_long live_blocks = 0;

void weft__alloc_fail_after(long n)
{
    atomic_store(&fail_countdown, n);
}

long weft__alloc_live(void)
{
    return atomic_load(&live_blocks);
}

/* True when the injected failure says this allocation must fail. */
static int injected_failure(void)
{
    long c = atomic_load(&fail_countdown);
    while (c >= 0) {
        if (c == 0)
            return 1;
        if (atomic_compare_exchange_weak(&fail_countdown, &c, c - 1))
            return 0;
    }
    return 0;
}

void *weft__malloc(size_t size)
{
    if (injected_failure())
        return NULL;
    void *p = malloc(size ? size : 1);
    if (p)
        atomic_fetch_add(&live_blocks, 1);
    return p;
}

void *weft__calloc(size_t count, size_t size)
{
    if (injected_failure())
        return NULL;
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (p)
        atomic_fetch_add(&live_blocks, 1);
    return p;
}

void *weft__realloc(void *ptr, size_t size)
{
    if (!ptr)
        return weft__malloc(size);
    if (injected_failure())
        return NULL;
    return realloc(ptr, size ? size : 1);
}

void *weft__realloc_array(void *ptr, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    return weft__realloc(ptr, count * size);
}

void weft__free(void *ptr)
{
    if (ptr) {
        atomic_fetch_sub(&live_blocks, 1);
        free(ptr);
    }
}

char *weft__strndup(const char *s, size_t n)
{
    char *p = weft__malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

char *weft__strdup(const char *s)
{
    return weft__strndup(s, strlen(s));
}

int weft__grow(void **buf, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return -1;
        ncap *= 2;
    }
    void *p = weft__realloc_array(*buf, ncap, elem);
    if (!p)
        return -1;
    *buf = p;
    *cap = ncap;
    return 0;
}
