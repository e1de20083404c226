/* The heap of 64-bit keys. See heap.h. Sifts move a hole instead of
 * swapping, one write per level. */
#include "base/heap.h"

#include <string.h>

#include "base/alloc.h"

void weft__heap64_init(weft__heap64 *h)
{
    h->key = NULL;
    h->n = h->cap = 0;
}

void weft__heap64_fini(weft__heap64 *h)
{
    weft__free(h->key);
    weft__heap64_init(h);
}

weft_err weft__heap64_reserve(weft__heap64 *h, size_t cap)
{
    return weft__grow((void **)&h->key, &h->cap, cap, sizeof *h->key) ? WEFT_ENOMEM : WEFT_OK;
}

weft_err weft__heap64_push(weft__heap64 *h, uint64_t key)
{
    if (h->n == h->cap && weft__heap64_reserve(h, h->n + 1))
        return WEFT_ENOMEM;
    size_t i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (h->key[parent] <= key)
            break;
        h->key[i] = h->key[parent];
        i = parent;
    }
    h->key[i] = key;
    return WEFT_OK;
}

uint64_t weft__heap64_pop(weft__heap64 *h)
{
    uint64_t top = h->key[0], last = h->key[--h->n];
    size_t i = 0, n = h->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h->key[c + 1] < h->key[c])
            c++;
        if (h->key[c] >= last)
            break;
        h->key[i] = h->key[c];
        i = c;
    }
    if (n)
        h->key[i] = last;
    return top;
}

void weft__heapsort(void *a, size_t n, size_t elem, int (*cmp)(const void *, const void *))
{
    unsigned char *b = a, t[64];
#define AT(i) (b + (i)*elem)
#define SWAP(i, j) (memcpy(t, AT(i), elem), memcpy(AT(i), AT(j), elem), memcpy(AT(j), t, elem))
    for (size_t end = n, i = n / 2; end > 1;) {
        size_t root;
        if (i > 0) {
            root = --i; /* building the max-heap */
        } else {
            --end; /* the largest goes to the end */
            SWAP(0, end);
            root = 0;
        }
        for (size_t c; (c = 2 * root + 1) < end; root = c) {
            if (c + 1 < end && cmp(AT(c), AT(c + 1)) < 0)
                c++;
            if (cmp(AT(root), AT(c)) >= 0)
                break;
            SWAP(root, c);
        }
    }
#undef SWAP
#undef AT
}
