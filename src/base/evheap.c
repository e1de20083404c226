/* The event heap. See heap.h. */
#include "base/evheap.h"
#include "base/alloc.h"

weft_err weft__evheap_init(weft__evheap *h, uint32_t cap)
{
    h->n = 0;
    h->cap = cap;
    h->next_seq = 0;
    h->ent = weft__malloc((cap ? cap : 1) * sizeof *h->ent);
    h->pos = weft__malloc((cap ? cap : 1) * sizeof *h->pos);
    if (!h->ent || !h->pos) {
        weft__evheap_fini(h);
        return WEFT_ENOMEM;
    }
    for (uint32_t i = 0; i < cap; i++)
        h->pos[i] = UINT32_MAX;
    return WEFT_OK;
}

weft_err weft__evheap_reserve(weft__evheap *h, uint32_t cap)
{
    if (cap <= h->cap)
        return WEFT_OK;
    weft__evheap_ent *ent = weft__realloc_array(h->ent, cap, sizeof *ent);
    if (!ent)
        return WEFT_ENOMEM;
    h->ent = ent;
    uint32_t *pos = weft__realloc_array(h->pos, cap, sizeof *pos);
    if (!pos)
        return WEFT_ENOMEM;
    h->pos = pos;
    for (uint32_t i = h->cap; i < cap; i++)
        h->pos[i] = UINT32_MAX;
    h->cap = cap;
    return WEFT_OK;
}

void weft__evheap_fini(weft__evheap *h)
{
    weft__free(h->ent);
    weft__free(h->pos);
    h->ent = NULL;
    h->pos = NULL;
    h->n = h->cap = 0;
}

static bool less(const weft__evheap_ent *a, const weft__evheap_ent *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void place(weft__evheap *h, uint32_t i, weft__evheap_ent e)
{
    h->ent[i] = e;
    h->pos[e.id] = i;
}

/* A 4-ary heap: entry i's children are 4i + 1 .. 4i + 4. Half the depth
 * of a binary heap, and the children of one entry share a cache line or
 * two. Keys (time, seq) are distinct (seq is), so the order of the pops
 * is the order of the keys whatever the arity or the layout. */
#define ARITY 4

static void sift_up(weft__evheap *h, uint32_t i)
{
    weft__evheap_ent e = h->ent[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / ARITY;
        if (!less(&e, &h->ent[parent]))
            break;
        place(h, i, h->ent[parent]);
        i = parent;
    }
    place(h, i, e);
}

static void sift_down(weft__evheap *h, uint32_t i)
{
    weft__evheap_ent e = h->ent[i];
    for (;;) {
        uint32_t c = ARITY * i + 1;
        if (c >= h->n)
            break;
        uint32_t stop = c + ARITY < h->n ? c + ARITY : h->n, m = c;
        for (uint32_t k = c + 1; k < stop; k++)
            if (less(&h->ent[k], &h->ent[m]))
                m = k;
        if (!less(&h->ent[m], &e))
            break;
        place(h, i, h->ent[m]);
        i = m;
    }
    place(h, i, e);
}

void weft__evheap_set(weft__evheap *h, uint32_t id, double t)
{
    weft__evheap_set_seq(h, id, t, h->next_seq++);
}

/* A key that moves only goes the way it moved: up when it fell below its
 * old key, else down. */
void weft__evheap_set_seq(weft__evheap *h, uint32_t id, double t, uint64_t seq)
{
    weft__evheap_ent e = {t, seq, id};
    uint32_t i = h->pos[id];
    if (i == UINT32_MAX) {
        i = h->n++;
        place(h, i, e);
        sift_up(h, i);
        return;
    }
    bool up = less(&e, &h->ent[i]);
    place(h, i, e);
    if (up)
        sift_up(h, i);
    else
        sift_down(h, i);
}

void weft__evheap_remove(weft__evheap *h, uint32_t id)
{
    uint32_t i = h->pos[id];
    h->pos[id] = UINT32_MAX;
    h->n--;
    if (i == h->n)
        return;
    /* The last entry fills the hole, going the way it is from the one it
     * replaces. */
    bool up = less(&h->ent[h->n], &h->ent[i]);
    place(h, i, h->ent[h->n]);
    if (up)
        sift_up(h, i);
    else
        sift_down(h, i);
}

uint32_t weft__evheap_pop(weft__evheap *h)
{
    uint32_t id = h->ent[0].id;
    weft__evheap_remove(h, id);
    return id;
}
