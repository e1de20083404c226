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

static void sift_up(weft__evheap *h, uint32_t i)
{
    weft__evheap_ent e = h->ent[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
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
        uint32_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && less(&h->ent[c + 1], &h->ent[c]))
            c++;
        if (!less(&h->ent[c], &e))
            break;
        place(h, i, h->ent[c]);
        i = c;
    }
    place(h, i, e);
}

void weft__evheap_set(weft__evheap *h, uint32_t id, double t)
{
    weft__evheap_set_seq(h, id, t, h->next_seq++);
}

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
    place(h, i, e);
    sift_up(h, i);
    sift_down(h, h->pos[id]);
}

bool weft__evheap_contains(const weft__evheap *h, uint32_t id)
{
    return h->pos[id] != UINT32_MAX;
}

void weft__evheap_remove(weft__evheap *h, uint32_t id)
{
    uint32_t i = h->pos[id];
    h->pos[id] = UINT32_MAX;
    h->n--;
    if (i == h->n)
        return;
    uint32_t moved = h->ent[h->n].id;
    place(h, i, h->ent[h->n]);
    sift_up(h, i);
    sift_down(h, h->pos[moved]);
}

uint32_t weft__evheap_pop(weft__evheap *h)
{
    uint32_t id = h->ent[0].id;
    weft__evheap_remove(h, id);
    return id;
}
