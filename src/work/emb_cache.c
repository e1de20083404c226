/* The cache model (weft_emb_cache_*, weft/embedding.h).
 *
 * Each GPU's cache is an LRU list of at most rows_per_gpu nodes (table,
 * row, step of the fetch) and a map from the row's key to its node
 * (base/map.h, reserved for the capacity once), so a lookup, a hit, a
 * miss and an eviction are O(1) expected. All GPUs' nodes live in one
 * array: no allocation per lookup. */
#include <inttypes.h>
#include <string.h>

#include "base/alloc.h"
#include "base/map.h"
#include "work/emb_internal.h"

#define NONE UINT64_MAX

typedef struct node {
    uint64_t key;     /* table << 40 | row */
    uint64_t fetched; /* the step of its fetch */
    uint64_t prev, next;
} node;

struct weft_emb_cache {
    weft_emb_workload w;
    weft_emb_table *tables;
    uint64_t *slot;  /* per table: round-robin slot (tw, cw) */
    uint64_t *block; /* per table: ceil(R/N) */
    weft_emb_cache_params p;
    uint64_t samples, last;
    weft_emb_cache_stats st;
    weft_traffic fetched;
    node *nodes;                  /* N * cap */
    weft__map64 *map;             /* per GPU: key -> node index within the GPU's cap */
    uint64_t *used, *head, *tail; /* per GPU */
};

void weft_emb_cache_free(weft_emb_cache *c)
{
    if (!c)
        return;
    weft_traffic_free(&c->fetched);
    weft__free(c->nodes);
    if (c->map)
        for (uint32_t g = 0; g < c->w.gpus; g++)
            weft__map64_fini(&c->map[g]);
    weft__free(c->map);
    weft__free(c->used);
    weft__free(c->head);
    weft__free(c->tail);
    weft__free(c->slot);
    weft__free(c->block);
    weft__free(c->tables);
    weft__free(c);
}

weft_err weft_emb_cache_new(const weft_emb_workload *w, const weft_emb_cache_params *p,
                            weft_emb_cache **out, weft_diag *d)
{
    weft_err e = weft_emb_check(w, d);
    if (e)
        return e;
    uint32_t n = w->gpus, nt = w->ntables;
    if (p->rows_per_gpu > (1ull << 32) / n)
        return weft_diag_set(d, WEFT_ELIMIT,
                             "a cache of %" PRIu64 " rows on each of %" PRIu32
                             " GPUs: at most 2^32 rows in all",
                             p->rows_per_gpu, n);
    weft_emb_cache *c = weft__calloc(1, sizeof *c);
    if (!c)
        return weft_diag_set(d, WEFT_ENOMEM, "out of memory for an embedding cache");
    c->w = *w;
    c->p = *p;
    c->samples = (uint64_t)n * w->batch;
    e = weft_traffic_new(n, &c->fetched, d);
    if (e)
        goto fail;
    c->tables = weft__malloc((size_t)nt * sizeof *c->tables);
    c->slot = weft__malloc((size_t)nt * sizeof *c->slot);
    c->block = weft__malloc((size_t)nt * sizeof *c->block);
    c->used = weft__calloc(n, sizeof *c->used);
    c->head = weft__malloc((size_t)n * sizeof *c->head);
    c->tail = weft__malloc((size_t)n * sizeof *c->tail);
    if (!c->tables || !c->slot || !c->block || !c->used || !c->head || !c->tail)
        goto nomem;
    memcpy(c->tables, w->tables, (size_t)nt * sizeof *c->tables);
    c->w.tables = c->tables;
    weft__emb_slots(w, c->slot);
    for (uint32_t t = 0; t < nt; t++)
        c->block[t] = c->tables[t].rows / n + (c->tables[t].rows % n != 0);
    for (uint32_t g = 0; g < n; g++)
        c->head[g] = c->tail[g] = NONE;
    uint64_t cap = p->rows_per_gpu;
    if (cap) {
        c->nodes = weft__malloc((size_t)(n * cap) * sizeof *c->nodes);
        c->map = weft__calloc(n, sizeof *c->map);
        if (!c->nodes || !c->map)
            goto nomem;
        for (uint32_t g = 0; g < n; g++)
            if (weft__map64_reserve(&c->map[g], (size_t)cap))
                goto nomem;
    }
    *out = c;
    return WEFT_OK;
nomem:
    e = weft_diag_set(d, WEFT_ENOMEM,
                      "out of memory for a cache of %" PRIu64 " rows on each of %" PRIu32 " GPUs",
                      p->rows_per_gpu, n);
fail:
    weft_emb_cache_free(c);
    return e;
}

static void list_unlink(weft_emb_cache *c, uint32_t g, uint64_t x)
{
    node *nd = &c->nodes[x];
    if (nd->prev != NONE)
        c->nodes[nd->prev].next = nd->next;
    else
        c->head[g] = nd->next;
    if (nd->next != NONE)
        c->nodes[nd->next].prev = nd->prev;
    else
        c->tail[g] = nd->prev;
}

static void list_push_front(weft_emb_cache *c, uint32_t g, uint64_t x)
{
    node *nd = &c->nodes[x];
    nd->prev = NONE;
    nd->next = c->head[g];
    if (c->head[g] != NONE)
        c->nodes[c->head[g]].prev = x;
    else
        c->tail[g] = x;
    c->head[g] = x;
}

/* The bytes of row r of table t not on GPU g; with add, added to the
 * fetched matrix from their owners. */
static uint64_t remote_bytes(weft_emb_cache *c, uint32_t t, uint64_t r, uint32_t g, bool add)
{
    const weft_emb_table *tb = &c->tables[t];
    uint32_t n = c->w.gpus;
    uint64_t vec = (uint64_t)tb->dim * tb->dtype_bytes, sum = 0;
    uint32_t owner;
    switch (tb->sharding) {
    case WEFT_EMB_DP:
        return 0;
    case WEFT_EMB_TW:
    case WEFT_EMB_RW:
        owner = (uint32_t)(tb->sharding == WEFT_EMB_TW ? c->slot[t] % n : r / c->block[t]);
        if (owner == g)
            return 0;
        if (add)
            c->fetched.bytes[(size_t)owner * n + g] += vec;
        return vec;
    case WEFT_EMB_CW:
        for (uint32_t s = 0; s < tb->col_shards; s++) {
            owner = (uint32_t)((c->slot[t] + s) % n);
            uint64_t b = (uint64_t)(tb->dim / tb->col_shards + (s < tb->dim % tb->col_shards)) *
                         tb->dtype_bytes;
            if (owner != g) {
                sum += b;
                if (add)
                    c->fetched.bytes[(size_t)owner * n + g] += b;
            }
        }
        return sum;
    }
    return 0;
}

weft_err weft_emb_cache_add(weft_emb_cache *c, uint64_t s, uint32_t t, uint64_t r, weft_diag *d)
{
    if (s < c->last)
        return weft_diag_set(d, WEFT_EINVAL,
                             "sample %" PRIu64 " after sample %" PRIu64
                             ": lookups come in order of samples",
                             s, c->last);
    if (t >= c->w.ntables)
        return weft_diag_set(
            d, WEFT_EINVAL, "table %" PRIu32 ": the workload has %" PRIu32 " tables, 0 to %" PRIu32,
            t, c->w.ntables, c->w.ntables - 1);
    if (r >= c->tables[t].rows)
        return weft_diag_set(d, WEFT_EINVAL,
                             "row %" PRIu64 " of table %" PRIu32 ": it has %" PRIu64
                             " rows, 0 to %" PRIu64,
                             r, t, c->tables[t].rows, c->tables[t].rows - 1);
    c->last = s;
    uint64_t step = s / c->samples;
    uint32_t g = (uint32_t)(s % c->samples / c->w.batch);
    c->st.steps = step + 1;
    c->st.lookups++;
    uint64_t bytes = remote_bytes(c, t, r, g, false);
    if (!bytes)
        return WEFT_OK;
    c->st.remote++;
    c->st.bytes_uncached += bytes;
    uint64_t cap = c->p.rows_per_gpu;
    if (!cap) {
        c->st.bytes_cached += remote_bytes(c, t, r, g, true);
        return WEFT_OK;
    }
    uint64_t key = (uint64_t)t << 40 | r, x;
    weft__map64 *map = &c->map[g];
    const uint32_t *at = weft__map64_find(map, key);
    if (at) {
        x = (uint64_t)g * cap + *at;
        list_unlink(c, g, x);
        list_push_front(c, g, x);
        node *nd = &c->nodes[x];
        if (!c->p.staleness || step < nd->fetched + c->p.staleness) {
            c->st.hits++;
            return WEFT_OK;
        }
        c->st.stale++;
        nd->fetched = step;
    } else {
        if (c->used[g] < cap) {
            x = (uint64_t)g * cap + c->used[g]++;
        } else {
            x = c->tail[g];
            list_unlink(c, g, x);
            weft__map64_del(map, c->nodes[x].key);
        }
        c->nodes[x] = (node){.key = key, .fetched = step};
        /* Reserved for cap keys: the put never grows the map. */
        weft_err e = weft__map64_put(map, key, (uint32_t)(x - (uint64_t)g * cap));
        if (e)
            return weft_diag_code(d, e);
        list_push_front(c, g, x);
    }
    c->st.bytes_cached += remote_bytes(c, t, r, g, true);
    return WEFT_OK;
}

weft_err weft_emb_cache_stats_get(const weft_emb_cache *c, weft_emb_cache_stats *out,
                                  weft_traffic *fetched, weft_diag *d)
{
    if (fetched) {
        weft_err e = weft_traffic_new(c->w.gpus, fetched, d);
        if (e)
            return e;
        memcpy(fetched->bytes, c->fetched.bytes,
               (size_t)c->w.gpus * c->w.gpus * sizeof *fetched->bytes);
    }
    *out = c->st;
    return WEFT_OK;
}
