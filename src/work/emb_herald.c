/* Herald in a step (weft_emb_herald, weft/embedding.h): per-GPU caches of
 * rows, their synchronisation and the location-aware placement of samples
 * (Zeng et al., NSDI 2024; docs/embedding.md, "Caches and placement").
 *
 * The generator's lookups are kept one step at a time, twice: sample-major
 * (sample i of a step looks up pooling[t] rows of each table t in table
 * order, so bag (i, t) is rows[i * per + off[t] ...], per = the sum of the
 * pooling factors) for the bags, and table-major (table t's lookups are
 * rowsT[tbase[t] ...], bag (i, t) at i * pooling[t] in it) for the
 * passes that need, for every lookup, which GPUs hold its row. tbase[t]
 * is off[t] * nb plus TPAD entries a table: with 64 samples on 128 GPUs
 * and one lookup a bag, the tables' parts would be 2^13 entries apart, so
 * the entries of one sample (written in the generator's order, read in
 * the placement's) would all fall in a few sets of the caches and evict
 * each other; the padding moves each table to other sets.
 *
 * Per GPU the cache is an array of copies (grown as used, at most cap),
 * a map from the row's key to its copy (cmap, below) and an LRU list or an
 * LFU heap (base/evheap.h: the frequency as the key, the sequence number
 * breaking ties by least recent bump). A GPU's bags touch its own cache
 * alone, so the bags run GPU by GPU (each GPU's in sample order, which is
 * all its LRU or LFU order depends on): one cache of about a MB at a time
 * instead of all of them in turn.
 *
 * Which GPUs hold a row, and which of those copies are valid (not yet
 * overwritten elsewhere: the copy's `dirty` is unset), is asked of every
 * lookup twice a step: by the placement at the step's start and by the
 * updates at its end. Keeping that in a map of every cached row probed
 * per lookup (a record per row, found by key in tens of MB) made each
 * lookup wait for memory several times. Instead, once a step, after the
 * bags, every copy is listed by table (a counting sort: (row, GPU,
 * copy)); then table by table, a small map of that table's listed rows
 * (what the GPUs cache of it, typically KB) answers the table's lookups,
 * read in order from rowsT. The list serves the step's updates and the
 * next step's placement (the bags, which change the copies, come between
 * them).
 *
 * The lookups of a step are drawn table by table (each table has its own
 * generator: weft__emb_draws_table) into rowsT, then copied sample-major
 * into rows. Four loops run on threads (base/par.h), each giving the same
 * bytes whatever their number: the tables' draws; the GPUs' bags (a GPU's
 * bags touch its own cache and its own rows of the matrices; each thread
 * counts in its bagger, summed after); the placement's scores (a sample's
 * depend on the valid sets alone; the greedy pass over them stays in
 * sample order); and the table passes (a table's valid sets, numbered
 * from the table's first and gathered in table order; a table's updates,
 * which touch its own copies).
 *
 * A remote bag of a table-wise table of one lookup a bag (a one-hot
 * model's) takes bag_tw1: do_bag's steps for it without the switch, the
 * loop over the bag and the check for a local part.
 *
 * One step: (1) the placement (drawn, or Herald's greedy), (2) the bags
 * against the caches (hits, misses, admissions; the measured step adds to
 * the matrices), (3) the updates: every row looked up in the step is
 * changed by the backward, so each copy of it on a GPU other than the
 * (single) GPU that looked it up is marked overwritten (`dirty`); the
 * measured step, the last, skips them (8 % of the replay at 128 GPUs). */
#include <inttypes.h>
#include <string.h>

#include "base/alloc.h"
#include "base/evheap.h"
#include "base/par.h"
#include "base/vec.h"
#include "work/emb_internal.h"

/* The bags' steps, inlined into their loop: each was a call per lookup
 * (an admission, nine lookups in ten, made three), saving and restoring
 * registers around a few instructions. */
#define HOT static inline __attribute__((always_inline))

#define NONE32 UINT32_MAX
#define ROW_BITS 40
#define ROW_MASK ((1ull << ROW_BITS) - 1)
#define STALE (1ull << 63) /* a listed copy that is not valid */
#define TPAD 16            /* entries between tables in rowsT and vsid */

typedef struct copy {
    uint64_t key;        /* table << 40 | row */
    uint32_t fetched;    /* step of the fetch */
    uint32_t dirty;      /* first step another GPU updated the row since, or NONE32 */
    uint32_t pushed;     /* step + 1 of the last push counted */
    uint32_t freq;       /* LFU: lookups since cached */
    uint32_t prev, next; /* LRU list, indices of the GPU's copies */
} copy;

/* A GPU's map from a cached key to its copy: linear probing in one array
 * of (key, copy) slots, at most half full, deletion by backward shift (no
 * tombstones). base/map.h's map keeps keys, values and used flags in three
 * arrays, three cache lines a probe; here every lookup of a bag probes,
 * and every miss deletes and adds a key once the cache is full, so a slot
 * is kept whole in one line. */
typedef struct cslot {
    uint64_t key; /* EMPTY when free (no key is: keys < 2^56) */
    uint32_t x;
} cslot;

typedef struct cmap {
    cslot *s;
    uint64_t mask;  /* slots - 1 (no slots while s is NULL) */
    unsigned shift; /* 64 - log2(slots) */
    size_t n;
    size_t limit; /* keys it holds before it doubles: half the slots */
} cmap;

#define EMPTY UINT64_MAX

/* Bytes before and after the fields of a record that one thread writes
 * while others write its neighbours in the same array: a cache line
 * apart, none is shared (two threads writing one line take it from each
 * other at every write). */
#define LINE_PAD 64

typedef struct gpu_cache {
    char before[LINE_PAD];
    weft__vec copies; /* of copy, at most cap */
    cmap map;         /* key -> index in copies */
    uint32_t head, tail;
    weft__evheap lfu;
    char after[LINE_PAD];
} gpu_cache;

/* A copy in the list of the step's copies by table. */
typedef struct listed {
    uint64_t row; /* the row, | STALE when the copy is not valid */
    uint32_t g, x;
} listed;

/* A slot of the table map: a listed row and its group (the copies of that
 * row; key UINT64_MAX when empty, which no row is: rows < 2^40). */
typedef struct tslot {
    uint64_t row;
    uint32_t grp;
} tslot;

/* A thread's state for the bags, the placement's scores and the table
 * passes. run_step runs the GPUs' bags in parallel: a GPU's bags touch
 * its own cache, its row of the forward (kept by GPU), backward and push
 * matrices alone; the counts are each thread's, summed after (integers:
 * any order, the same sums). The table passes write only the table's own
 * copies and entries. */
typedef struct bagger {
    char before[LINE_PAD];
    /* The table passes (valid_sets, updates; sized for the largest table's
     * listed copies): the map, each listed copy's group, per group the
     * valid set (W words), its set's index, the first GPU that looked the
     * row up and whether others did; the valid sets this thread found. */
    tslot *ts;
    uint64_t tmask; /* ts has tmask + 1 slots */
    size_t scap;    /* the other arrays' room */
    uint32_t *egrp, *gset, *gfirst;
    uint8_t *gmulti;
    uint64_t *gval;
    weft__vec sets;
    uint32_t *hx, nh; /* the bag's hits (copies on its GPU) */
    uint64_t bag;     /* bag stamp counter */
    uint64_t *bstamp; /* per block: bag stamp */
    uint64_t *bmask;  /* the placement's: W words a block, and one more */
    uint32_t *bmiss, *blook, *list;
    uint64_t *bkey;
    uint64_t remote, hits, stale, admitted, transfers, bytes, bwd_bytes;
    char after[LINE_PAD];
} bagger;

typedef struct herald {
    weft_emb_workload w;
    weft_emb_herald_params p;
    uint32_t n, nt, W;      /* GPUs, tables, words of a bitset */
    uint64_t nb, per;       /* samples a step, lookups a sample */
    uint64_t *off;          /* per table: first lookup of its bag in a sample */
    uint64_t *slot, *block; /* per table: round-robin slot, rows a row-wise block */
    uint32_t *owner;        /* per table: slot mod N (a table-wise table's GPU) */
    uint8_t *tw1;           /* per table: table-wise, one lookup a bag (bag_tw1) */
    bool one_each;          /* every table's bags hold at most one lookup (warm_lru) */
    uint64_t *rows;         /* the step's lookups, sample-major */
    uint64_t *rowsT;        /* the same, table-major (with a cache) */
    uint64_t *tbase;        /* per table: its first lookup in rowsT and vsid */
    uint32_t *vsid;         /* per lookup in rowsT's order: its row's valid set, or NONE32 */
    uint32_t step;          /* the current step */
    weft__emb_draws *draws; /* the generator, table by table */
    uint32_t *place;        /* per sample of the step: its GPU */
    uint64_t *order;        /* the samples GPU by GPU (each in sample order) */
    uint64_t *gstart;       /* per GPU + 1: its first in order */
    gpu_cache *gc;
    /* The copies by table (listed after the bags of each step). */
    listed *list;
    size_t nlist, list_cap, maxb; /* copies listed, room, the largest table's */
    uint64_t *lstart;             /* per table + 1: its first in list */
    /* The step's valid sets (W words each), table by table: table t's
     * are vsets[vbase[t] ...], vsid holding their indices from vbase[t].
     * Found in parallel (each table by one thread, in its worker's
     * sets: vwho[t], from voff[t]), then gathered in table order. */
    weft__vec vsets;
    uint64_t *vbase, *voff, *vcount;
    uint32_t *vwho;
    /* The placement: the scores of SCORE_SAMPLES samples from score_i0
     * (a row of N each, computed in parallel), the GPUs' loads. */
    uint64_t *score, score_i0;
    uint32_t *load;
    /* base_matrix's scratch: per block, its bag stamp. */
    uint64_t *bstamp;
    uint64_t bag; /* bag stamp counter */
    /* The bags' threads (weft__par_for over GPUs), with their scratch. */
    unsigned nbg;
    struct bagger *bg;
    /* The measured step's accumulators: N x N. The forward matrix is kept
     * transposed (row g: what GPU g receives) while the GPUs' bags run in
     * parallel, so that each GPU writes its own row: the entries of one row
     * of the matrix share cache lines. */
    bool measure;
    uint64_t *bagpush, *rowpush, *fwd_by_gpu;
    weft_emb_herald_result *out;
    weft_err err;
} herald;

/* Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4): the top bits of key times
 * 2^64 / phi, enough for keys that are (table, row) pairs. */
static uint64_t cmap_home(const cmap *m, uint64_t key)
{
    return key * 0x9E3779B97F4A7C15ull >> m->shift;
}

/* The copy of key, or NONE32. */
HOT uint32_t cmap_find(const cmap *m, uint64_t key)
{
    if (!m->s)
        return NONE32;
    for (uint64_t j = cmap_home(m, key);; j = (j + 1) & m->mask) {
        if (m->s[j].key == key)
            return m->s[j].x;
        if (m->s[j].key == EMPTY)
            return NONE32;
    }
}

/* Puts key (absent) -> x in the first empty slot of its probe (there is
 * room). */
HOT void cmap_put(cmap *m, uint64_t key, uint32_t x)
{
    uint64_t j = cmap_home(m, key);
    while (m->s[j].key != EMPTY)
        j = (j + 1) & m->mask;
    m->s[j] = (cslot){key, x};
    m->n++;
}

/* Doubles the slots (16 at first). */
static weft_err cmap_grow(cmap *m)
{
    uint64_t slots = m->s ? 2 * (m->mask + 1) : 16;
    cslot *ns = weft__malloc((size_t)slots * sizeof *ns), *old = m->s;
    if (!ns)
        return WEFT_ENOMEM;
    for (uint64_t j = 0; j < slots; j++)
        ns[j].key = EMPTY;
    uint64_t oslots = old ? m->mask + 1 : 0;
    m->s = ns;
    m->mask = slots - 1;
    m->shift = 64 - (unsigned)__builtin_ctzll(slots);
    m->n = 0;
    m->limit = (size_t)slots / 2;
    for (uint64_t j = 0; j < oslots; j++)
        if (old[j].key != EMPTY)
            cmap_put(m, old[j].key, old[j].x);
    weft__free(old);
    return WEFT_OK;
}

/* Adds key (absent) -> x; doubles the slots when half would be used. */
HOT weft_err cmap_add(cmap *m, uint64_t key, uint32_t x)
{
    weft_err e;
    if (m->n >= m->limit && (e = cmap_grow(m)))
        return e;
    cmap_put(m, key, x);
    return WEFT_OK;
}

/* Removes key (present): the keys after it in its run move back to where
 * their probes would find them. */
HOT void cmap_del(cmap *m, uint64_t key)
{
    uint64_t i = cmap_home(m, key);
    while (m->s[i].key != key)
        i = (i + 1) & m->mask;
    for (uint64_t j = (i + 1) & m->mask; m->s[j].key != EMPTY; j = (j + 1) & m->mask) {
        /* j's key may fill hole i unless its home lies cyclically in (i, j]. */
        uint64_t k = cmap_home(m, m->s[j].key);
        if (((j - k) & m->mask) >= ((j - i) & m->mask)) {
            m->s[i] = m->s[j];
            i = j;
        }
    }
    m->s[i].key = EMPTY;
    m->n--;
}

static copy *copy_at(const herald *h, uint32_t g, uint32_t x)
{
    return (copy *)h->gc[g].copies.data + x;
}

static void bit_set(uint64_t *b, uint32_t i)
{
    b[i >> 6] |= 1ull << (i & 63);
}

void weft_emb_herald_free(weft_emb_herald_result *r)
{
    if (!r)
        return;
    weft_traffic_free(&r->forward);
    weft_traffic_free(&r->backward);
    weft_traffic_free(&r->forward_base);
}

static void herald_fini(herald *h)
{
    if (h->gc)
        for (uint32_t g = 0; g < h->n; g++) {
            weft__vec_fini(&h->gc[g].copies);
            weft__free(h->gc[g].map.s);
            weft__evheap_fini(&h->gc[g].lfu);
        }
    weft__free(h->gc);
    weft__free(h->list);
    weft__free(h->lstart);
    weft__vec_fini(&h->vsets);
    weft__free(h->vbase);
    weft__free(h->voff);
    weft__free(h->vcount);
    weft__free(h->vwho);
    weft__free(h->off);
    weft__free(h->slot);
    weft__free(h->owner);
    weft__free(h->tw1);
    weft__free(h->block);
    weft__free(h->rows);
    weft__free(h->rowsT);
    weft__free(h->tbase);
    weft__free(h->vsid);
    weft__free(h->place);
    weft__free(h->order);
    weft__free(h->gstart);
    weft__free(h->score);
    weft__free(h->load);
    weft__free(h->bstamp);
    if (h->bg)
        for (unsigned k = 0; k < h->nbg; k++) {
            weft__free(h->bg[k].hx);
            weft__free(h->bg[k].bstamp);
            weft__free(h->bg[k].bmask);
            weft__free(h->bg[k].bmiss);
            weft__free(h->bg[k].blook);
            weft__free(h->bg[k].list);
            weft__free(h->bg[k].bkey);
            weft__free(h->bg[k].ts);
            weft__free(h->bg[k].egrp);
            weft__free(h->bg[k].gset);
            weft__free(h->bg[k].gfirst);
            weft__free(h->bg[k].gmulti);
            weft__free(h->bg[k].gval);
            weft__vec_fini(&h->bg[k].sets);
        }
    weft__free(h->bg);
    weft__emb_draws_free(h->draws);
    weft__free(h->bagpush);
    weft__free(h->fwd_by_gpu);
    weft__free(h->rowpush);
}

/* ---- the caches ------------------------------------------------------- */

static bool fresh(const herald *h, const copy *c)
{
    return !h->p.staleness || c->dirty == NONE32 || h->step < c->fetched + h->p.staleness;
}

HOT void lru_unlink(herald *h, uint32_t g, uint32_t x)
{
    gpu_cache *gc = &h->gc[g];
    copy *c = copy_at(h, g, x);
    if (c->prev != NONE32)
        copy_at(h, g, c->prev)->next = c->next;
    else
        gc->head = c->next;
    if (c->next != NONE32)
        copy_at(h, g, c->next)->prev = c->prev;
    else
        gc->tail = c->prev;
}

HOT void lru_front(herald *h, uint32_t g, uint32_t x)
{
    gpu_cache *gc = &h->gc[g];
    copy *c = copy_at(h, g, x);
    c->prev = NONE32;
    c->next = gc->head;
    if (gc->head != NONE32)
        copy_at(h, g, gc->head)->prev = x;
    else
        gc->tail = x;
    gc->head = x;
}

/* A lookup of copy x on g (hit or not): recency or frequency. */
static void touch(herald *h, uint32_t g, uint32_t x)
{
    if (h->p.policy == WEFT_EMB_LFU) {
        copy *c = copy_at(h, g, x);
        c->freq++;
        weft__evheap_set(&h->gc[g].lfu, x, (double)c->freq);
    } else if (h->gc[g].head != x) {
        lru_unlink(h, g, x);
        lru_front(h, g, x);
    }
}

/* Caches key on g (absent there), evicting when full. */
HOT weft_err admit(herald *h, uint32_t g, uint64_t key)
{
    gpu_cache *gc = &h->gc[g];
    uint32_t x;
    weft_err e;
    if (gc->copies.n < h->p.rows_per_gpu) {
        x = (uint32_t)gc->copies.n;
        if ((e = weft__vec_reserve(&gc->copies, gc->copies.n + 1)))
            return e;
        gc->copies.n++;
        if (h->p.policy == WEFT_EMB_LFU && x >= gc->lfu.cap &&
            (e = weft__evheap_reserve(&gc->lfu, gc->lfu.cap ? 2 * gc->lfu.cap : 64)))
            return e;
    } else {
        if (h->p.policy == WEFT_EMB_LFU) {
            x = weft__evheap_pop(&gc->lfu);
        } else {
            x = gc->tail;
            lru_unlink(h, g, x);
        }
        cmap_del(&gc->map, copy_at(h, g, x)->key);
        if (h->p.policy == WEFT_EMB_LRU && gc->tail != NONE32) {
            /* The next victims, unless hits save them: the next one's
             * slot (its copy was read ahead by the last eviction) and the
             * one after's copy. */
            const copy *t1 = copy_at(h, g, gc->tail);
            __builtin_prefetch(&gc->map.s[cmap_home(&gc->map, t1->key)]);
            if (t1->prev != NONE32)
                __builtin_prefetch(copy_at(h, g, t1->prev));
        }
    }
    /* key is absent from g's map (the caller looked). */
    if ((e = cmap_add(&gc->map, key, x)))
        return e;
    *copy_at(h, g, x) = (copy){key, h->step, NONE32, 0, 1, NONE32, NONE32};
    if (h->p.policy == WEFT_EMB_LFU)
        weft__evheap_set(&gc->lfu, x, 1.0);
    else
        lru_front(h, g, x);
    return WEFT_OK;
}

/* A stale copy fetched again. */
static void refresh(herald *h, uint32_t g, uint32_t x)
{
    copy *c = copy_at(h, g, x);
    c->fetched = h->step;
    c->dirty = NONE32;
}

/* ---- a bag part: the rows of a bag that one owner (or a column-wise
 * table's shards) holds, looked up from GPU g ------------------------- */

static uint64_t vec_bytes(const weft_emb_table *tb)
{
    return (uint64_t)tb->dim * tb->dtype_bytes;
}

static uint64_t slice_bytes(const weft_emb_table *tb, uint32_t c)
{
    return (uint64_t)(tb->dim / tb->col_shards + (c < tb->dim % tb->col_shards)) * tb->dtype_bytes;
}

/* Adds v to pair (from, to) of m (N x N). */
static void add(uint64_t *m, uint32_t n, uint32_t from, uint32_t to, uint64_t v)
{
    m[(size_t)from * n + to] += v;
}

/* Moves the part's vectors (owner o, or every remote shard when o is
 * NONE32) to g: the forward entry and its backward transpose. */
HOT void send_part(herald *h, bagger *r, uint32_t t, uint32_t o, uint32_t g)
{
    const weft_emb_table *tb = &h->w.tables[t];
    weft_emb_herald_result *out = h->out;
    uint32_t n = h->n;
    if (o != NONE32) {
        uint64_t v = vec_bytes(tb);
        add(h->fwd_by_gpu, n, g, o, v);
        if (o == g)
            return;
        add(out->backward.bytes, n, g, o, v);
        r->transfers++;
        r->bytes += v;
        r->bwd_bytes += v;
        return;
    }
    for (uint32_t c = 0; c < tb->col_shards; c++) {
        uint32_t oc = (uint32_t)((h->slot[t] + c) % n);
        uint64_t v = slice_bytes(tb, c);
        add(h->fwd_by_gpu, n, g, oc, v);
        if (oc == g)
            continue;
        add(out->backward.bytes, n, g, oc, v);
        r->transfers++;
        r->bytes += v;
        r->bwd_bytes += v;
    }
}

/* The part's gradient pushes: into m (bagpush or rowpush) from g. */
static void push_part(herald *h, uint64_t *m, uint32_t t, uint32_t o, uint32_t g)
{
    const weft_emb_table *tb = &h->w.tables[t];
    if (o != NONE32) {
        add(m, h->n, g, o, vec_bytes(tb));
        return;
    }
    for (uint32_t c = 0; c < tb->col_shards; c++) {
        uint32_t oc = (uint32_t)((h->slot[t] + c) % h->n);
        if (oc != g)
            add(m, h->n, g, oc, slice_bytes(tb, c));
    }
}

/* One remote lookup of key by g: *hit (then the copy joins the bag's hit
 * list), and the copy (NONE32 if absent). */
HOT uint32_t cache_lookup(herald *h, bagger *r, uint32_t g, uint64_t key, bool *hit)
{
    *hit = false;
    if (h->measure)
        r->remote++;
    uint32_t x = cmap_find(&h->gc[g].map, key);
    if (x == NONE32)
        return NONE32;
    copy *c = copy_at(h, g, x);
    *hit = fresh(h, c);
    if (*hit)
        r->hx[r->nh++] = x;
    if (h->measure) {
        r->hits += *hit;
        r->stale += !*hit;
    }
    touch(h, g, x);
    return x;
}

/* The end of a part with `looked` lookups, `miss` of them missed, the
 * last missed being mkey (copy mx or NONE32). */
HOT weft_err end_part(herald *h, bagger *b, uint32_t t, uint32_t o, uint32_t g, uint64_t looked,
                      uint64_t miss, uint64_t mkey, uint32_t mx)
{
    if (looked && !miss) {
        if (h->measure)
            push_part(h, h->bagpush, t, o, g);
        return WEFT_OK;
    }
    /* The pooled gradient sent back covers every row of the part, the
     * cached ones too (sum pooling: each row's gradient is the bag's). */
    if (h->measure)
        send_part(h, b, t, o, g);
    if (miss != 1 || !h->p.rows_per_gpu)
        return WEFT_OK;
    if (h->measure)
        b->admitted++;
    if (mx != NONE32) {
        refresh(h, g, mx);
        return WEFT_OK;
    }
    return admit(h, g, mkey);
}

/* The hits of fully served parts: one row gradient per distinct row a
 * step (the row strategy of the backward). part_of(k) is the hit's part:
 * the owner for row-wise, else o. */
static void row_pushes(herald *h, bagger *b, uint32_t t, uint32_t o, uint32_t g, bool rw)
{
    if (!h->measure)
        return;
    for (uint32_t k = 0; k < b->nh; k++) {
        copy *c = copy_at(h, g, b->hx[k]);
        uint32_t part = rw ? (uint32_t)((c->key & ((1ull << 40) - 1)) / h->block[t]) : o;
        if ((rw && b->bmiss[part]) || c->pushed == h->step + 1)
            continue;
        c->pushed = h->step + 1;
        push_part(h, h->rowpush, t, part, g);
    }
}

/* Whether table t (table-wise or column-wise) is all on g: its GPU, or
 * every column shard's. */
static bool whole_on(const herald *h, uint32_t g, uint32_t t)
{
    const weft_emb_table *tb = &h->w.tables[t];
    if (tb->sharding == WEFT_EMB_TW)
        return h->owner[t] == g;
    for (uint32_t c = 0; c < tb->col_shards; c++)
        if ((h->slot[t] + c) % h->n != g)
            return false;
    return true;
}

static weft_err do_bag(herald *h, bagger *b, uint32_t g, uint32_t t, const uint64_t *rows)
{
    b->nh = 0;
    const weft_emb_table *tb = &h->w.tables[t];
    uint32_t n = h->n, P = tb->pooling;
    uint64_t key0 = (uint64_t)t << 40;
    bool hit;
    switch (tb->sharding) {
    case WEFT_EMB_DP:
        return WEFT_OK;
    case WEFT_EMB_TW:
    case WEFT_EMB_CW: {
        uint32_t o = tb->sharding == WEFT_EMB_TW ? h->owner[t] : NONE32;
        if (whole_on(h, g, t)) {
            if (h->measure)
                send_part(h, b, t, o, g); /* the diagonal */
            return WEFT_OK;
        }
        uint64_t miss = 0, mkey = 0;
        uint32_t mx = NONE32;
        for (uint32_t k = 0; k < P; k++) {
            uint32_t x = cache_lookup(h, b, g, key0 | rows[k], &hit);
            if (!hit) {
                miss++;
                mkey = key0 | rows[k];
                mx = x;
            }
        }
        if (!miss)
            row_pushes(h, b, t, o, g, false);
        return end_part(h, b, t, o, g, P, miss, mkey, mx);
    }
    case WEFT_EMB_RW: {
        uint64_t stamp = ++b->bag;
        uint32_t *list = b->list; /* the blocks of this bag */
        uint32_t nl = 0;
        for (uint32_t k = 0; k < P; k++) {
            uint32_t o = (uint32_t)(rows[k] / h->block[t]);
            if (b->bstamp[o] != stamp) {
                b->bstamp[o] = stamp;
                b->bmiss[o] = 0;
                b->blook[o] = 0;
                list[nl++] = o;
            }
            b->blook[o]++;
            if (o == g)
                continue;
            uint32_t x = cache_lookup(h, b, g, key0 | rows[k], &hit);
            if (!hit) {
                b->bmiss[o]++;
                b->bkey[2 * (size_t)o] = key0 | rows[k];
                b->bkey[2 * (size_t)o + 1] = x;
            }
        }
        row_pushes(h, b, t, NONE32, g, true);
        for (uint32_t i = 0; i < nl; i++) {
            uint32_t o = list[i];
            weft_err e;
            if (o == g) {
                if (h->measure) {
                    add(h->fwd_by_gpu, n, g, g, vec_bytes(tb));
                }
                continue;
            }
            if ((e = end_part(h, b, t, o, g, b->blook[o], b->bmiss[o], b->bkey[2 * (size_t)o],
                              (uint32_t)b->bkey[2 * (size_t)o + 1])))
                return e;
        }
        return WEFT_OK;
    }
    }
    return WEFT_OK;
}

/* do_bag for a table-wise table of one lookup a bag (most tables of a
 * one-hot model: MLPerf's DLRM on Criteo) whose GPU o is not g: its one
 * remote lookup of key (the table's key | the row) without the general
 * path's switch, loop over the bag and check for a local part. */
HOT weft_err bag_tw1(herald *h, bagger *b, uint32_t g, uint32_t t, uint32_t o, uint64_t key)
{
    b->nh = 0;
    bool hit;
    uint32_t x = cache_lookup(h, b, g, key, &hit);
    if (hit)
        row_pushes(h, b, t, o, g, false);
    return end_part(h, b, t, o, g, 1, !hit, key, x);
}

/* ---- the copies by table ------------------------------------------------ */

/* Room in b's table scratch for m listed copies of one table. */
static weft_err scratch(bagger *h, uint32_t W, size_t m)
{
    size_t tc = 16;
    while (tc < 2 * m)
        tc *= 2;
    if (tc - 1 > h->tmask) {
        tslot *ts = weft__realloc_array(h->ts, tc, sizeof *ts);
        if (!ts)
            return WEFT_ENOMEM;
        h->ts = ts;
        h->tmask = tc - 1;
    }
    if (m <= h->scap)
        return WEFT_OK;
    size_t c = m > 2 * h->scap ? m : 2 * h->scap;
    uint32_t *eg = weft__realloc_array(h->egrp, c, sizeof *eg);
    if (eg)
        h->egrp = eg;
    uint32_t *gs = weft__realloc_array(h->gset, c, sizeof *gs);
    if (gs)
        h->gset = gs;
    uint32_t *gf = weft__realloc_array(h->gfirst, c, sizeof *gf);
    if (gf)
        h->gfirst = gf;
    uint8_t *gm = weft__realloc_array(h->gmulti, c, sizeof *gm);
    if (gm)
        h->gmulti = gm;
    uint64_t *gv = weft__realloc_array(h->gval, c * W, sizeof *gv);
    if (gv)
        h->gval = gv;
    if (!eg || !gs || !gf || !gm || !gv)
        return WEFT_ENOMEM;
    h->scap = c;
    return WEFT_OK;
}

/* Lists every copy by table (a counting sort: within a table in order of
 * GPU, then copy), STALE unless valid; sizes the per-table scratch. */
static weft_err list_copies(herald *h)
{
    uint32_t nt = h->nt;
    uint64_t *ls = h->lstart;
    memset(ls, 0, (size_t)(nt + 1) * sizeof *ls);
    size_t total = 0;
    for (uint32_t g = 0; g < h->n; g++) {
        const copy *c = h->gc[g].copies.data;
        total += h->gc[g].copies.n;
        for (size_t x = 0; x < h->gc[g].copies.n; x++)
            ls[(c[x].key >> ROW_BITS) + 1]++;
    }
    size_t maxb = 0;
    for (uint32_t t = 0; t < nt; t++) {
        maxb = ls[t + 1] > maxb ? ls[t + 1] : maxb;
        ls[t + 1] += ls[t];
    }
    if (weft__grow((void **)&h->list, &h->list_cap, total ? total : 1, sizeof *h->list))
        return WEFT_ENOMEM;
    for (unsigned k = 0; k < h->nbg; k++) {
        weft_err e = scratch(&h->bg[k], h->W, maxb);
        if (e)
            return e;
    }
    /* ls[t] walks from table t's start to its end (table t + 1's start),
     * then everything moves back one table. */
    for (uint32_t g = 0; g < h->n; g++) {
        const copy *c = h->gc[g].copies.data;
        for (size_t x = 0; x < h->gc[g].copies.n; x++) {
            uint64_t row = c[x].key & ROW_MASK;
            h->list[ls[c[x].key >> ROW_BITS]++] =
                (listed){row | (c[x].dirty == NONE32 ? 0 : STALE), g, (uint32_t)x};
        }
    }
    memmove(ls + 1, ls, (size_t)nt * sizeof *ls);
    ls[0] = 0;
    h->nlist = total;
    return WEFT_OK;
}

/* The table map's first slot for row: Fibonacci hashing as cmap_home,
 * bits 32 and up (rows < 2^40). */
static uint64_t tslot_of(const bagger *h, uint64_t row, uint64_t mask)
{
    uint64_t j = (row * 0x9E3779B97F4A7C15ull >> 32) & mask;
    while (h->ts[j].row != UINT64_MAX && h->ts[j].row != row)
        j = (j + 1) & mask;
    return j;
}

/* Groups table t's listed copies by row: the map row -> group (a linear
 * probing table at most half full, in the low 2^k >= 2m slots of ts),
 * egrp[e] for the table's e-th copy; the mask of the slots and the number
 * of groups. */
static uint32_t group_rows(const herald *hd, bagger *h, uint32_t t, uint64_t *mask)
{
    size_t lo = hd->lstart[t], m = hd->lstart[t + 1] - lo;
    uint64_t tc = 16;
    while (tc < 2 * m)
        tc *= 2;
    *mask = tc - 1;
    for (uint64_t j = 0; j < tc; j++)
        h->ts[j].row = UINT64_MAX;
    uint32_t ng = 0;
    for (size_t e = 0; e < m; e++) {
        uint64_t row = hd->list[lo + e].row & ROW_MASK, j = tslot_of(h, row, *mask);
        if (h->ts[j].row == UINT64_MAX)
            h->ts[j] = (tslot){row, ng++};
        h->egrp[e] = h->ts[j].grp;
    }
    return ng;
}

/* The group of row, or NONE32 when no GPU caches it. */
static uint32_t group_of(const bagger *h, uint64_t row, uint64_t mask)
{
    uint64_t j = tslot_of(h, row, mask);
    return h->ts[j].row == UINT64_MAX ? NONE32 : h->ts[j].grp;
}

#define UNSET (NONE32 - 1) /* a group's valid set not yet in vsets */

/* Table t's part of vsid (a weft__par_for item): for every lookup, the
 * GPUs holding a valid copy of its row at the step's start (the copies
 * listed at the end of the previous step), as the index of the set from
 * the table's first (one set per row looked up, in the order first
 * looked up), or NONE32 when none does; the sets go to the worker's. */
static weft_err table_sets(void *ctx, size_t item, unsigned worker)
{
    herald *h = ctx;
    bagger *b = &h->bg[worker];
    uint32_t W = h->W, t = (uint32_t)item;
    const weft_emb_table *tb = &h->w.tables[t];
    h->vcount[t] = 0;
    if (tb->sharding == WEFT_EMB_DP)
        return WEFT_OK;
    uint64_t len = h->nb * tb->pooling, mask;
    uint32_t *vs = h->vsid + h->tbase[t];
    const uint64_t *rt = h->rowsT + h->tbase[t];
    size_t lo = h->lstart[t], m = h->lstart[t + 1] - lo;
    if (!m) {
        memset(vs, 0xff, (size_t)len * sizeof *vs);
        return WEFT_OK;
    }
    uint32_t ng = group_rows(h, b, t, &mask);
    memset(b->gval, 0, (size_t)ng * W * sizeof *b->gval);
    for (size_t e = 0; e < m; e++)
        if (!(h->list[lo + e].row & STALE))
            bit_set(b->gval + (size_t)b->egrp[e] * W, h->list[lo + e].g);
    for (uint32_t q = 0; q < ng; q++) {
        b->gset[q] = NONE32;
        for (uint32_t k = 0; k < W; k++)
            if (b->gval[(size_t)q * W + k])
                b->gset[q] = UNSET;
    }
    h->vwho[t] = worker;
    h->voff[t] = b->sets.n;
    for (uint64_t j = 0; j < len; j++) {
        uint32_t q = group_of(b, rt[j], mask), v = q == NONE32 ? NONE32 : b->gset[q];
        if (v == UNSET) {
            weft_err e = weft__vec_push(&b->sets, b->gval + (size_t)q * W);
            if (e)
                return e;
            v = b->gset[q] = (uint32_t)h->vcount[t]++;
        }
        vs[j] = v;
    }
    return WEFT_OK;
}

/* vsid and vsets for the step: the tables in parallel, then their sets
 * gathered in table order. */
static weft_err valid_sets(herald *h)
{
    for (unsigned k = 0; k < h->nbg; k++)
        h->bg[k].sets.n = 0;
    weft_err e = weft__par_for(h->nt, h->nbg, table_sets, h);
    if (e)
        return e;
    size_t total = 0, size = h->vsets.elem;
    for (uint32_t t = 0; t < h->nt; t++)
        total += h->vcount[t];
    h->vsets.n = 0;
    if ((e = weft__vec_reserve(&h->vsets, total ? total : 1)))
        return e;
    for (uint32_t t = 0; t < h->nt; t++) {
        h->vbase[t] = h->vsets.n;
        if (!h->vcount[t])
            continue;
        memcpy((char *)h->vsets.data + h->vsets.n * size,
               (const char *)h->bg[h->vwho[t]].sets.data + h->voff[t] * size, h->vcount[t] * size);
        h->vsets.n += h->vcount[t];
    }
    return WEFT_OK;
}

/* ---- placement ---------------------------------------------------------- */

/* The valid set of lookup k of a bag whose sets start at vs (NULL: no
 * cache): W words, or NULL when no GPU holds a valid copy of the row. */
static const uint64_t *vset(const herald *h, uint32_t t, const uint32_t *vs, uint32_t k)
{
    if (!vs || vs[k] == NONE32)
        return NULL;
    return weft__vec_at(&h->vsets, h->vbase[t] + vs[k]);
}

/* Adds to score[] what sample i saves on each GPU. */
static void score_sample(herald *h, bagger *bg, uint64_t i, uint64_t *score)
{
    uint32_t n = h->n, W = h->W;
    const uint64_t *rows = h->rows + i * h->per;
    uint64_t *mask = bg->bmask; /* scratch: W words a block; block n is the tw/cw mask */
    for (uint32_t t = 0; t < h->nt; t++) {
        const weft_emb_table *tb = &h->w.tables[t];
        const uint64_t *br = rows + h->off[t];
        uint64_t v = vec_bytes(tb);
        if (tb->sharding == WEFT_EMB_DP)
            continue;
        /* The bag's valid sets (vsid: rowsT's order). */
        const uint32_t *vs = h->vsid ? h->vsid + h->tbase[t] + i * tb->pooling : NULL;

        if (tb->sharding == WEFT_EMB_TW && (!tb->pooling || !vs || vs[0] == NONE32)) {
            /* No GPU holds a valid copy of its first row (the usual
             * case): the table's GPU alone saves the vector. */
            score[h->owner[t]] += v;
            continue;
        }
        if (tb->sharding == WEFT_EMB_RW) {
            uint64_t stamp = ++bg->bag;
            uint32_t *list = bg->list, nl = 0;
            for (uint32_t k = 0; k < tb->pooling; k++) {
                uint32_t o = (uint32_t)(br[k] / h->block[t]);
                uint64_t *m = mask + (size_t)o * W;
                if (bg->bstamp[o] != stamp) {
                    bg->bstamp[o] = stamp;
                    list[nl++] = o;
                    for (uint32_t q = 0; q < W; q++)
                        m[q] = ~0ull;
                }
                const uint64_t *vk = vset(h, t, vs, k);
                for (uint32_t q = 0; q < W; q++)
                    m[q] &= vk ? vk[q] : 0;
            }
            for (uint32_t l = 0; l < nl; l++) {
                uint32_t o = list[l];
                uint64_t *m = mask + (size_t)o * W;
                bit_set(m, o);
                for (uint32_t q = 0; q < W; q++)
                    for (uint64_t b = m[q]; b; b &= b - 1)
                        score[q * 64 + (uint32_t)__builtin_ctzll(b)] += v;
            }
            continue;
        }
        uint64_t *m = mask + (size_t)n * W;
        for (uint32_t q = 0; q < W; q++)
            m[q] = tb->pooling ? ~0ull : 0;
        for (uint32_t k = 0; k < tb->pooling; k++) {
            const uint64_t *vk = vset(h, t, vs, k);
            bool any = false;
            for (uint32_t q = 0; q < W; q++) {
                m[q] &= vk ? vk[q] : 0;
                any |= m[q] != 0;
            }
            if (!any)
                break;
        }
        if (n % 64)
            m[W - 1] &= (1ull << (n % 64)) - 1;
        if (tb->sharding == WEFT_EMB_TW) {
            bit_set(m, h->owner[t]);
            for (uint32_t q = 0; q < W; q++)
                for (uint64_t b = m[q]; b; b &= b - 1)
                    score[q * 64 + (uint32_t)__builtin_ctzll(b)] += v;
            continue;
        }
        /* Column-wise: a GPU saves the slices it holds, or every byte when
         * it caches all the bag's rows. */
        for (uint32_t c = 0; c < tb->col_shards; c++) {
            uint32_t oc = (uint32_t)((h->slot[t] + c) % n);
            if (!(m[oc >> 6] >> (oc & 63) & 1))
                score[oc] += slice_bytes(tb, c);
        }
        for (uint32_t q = 0; q < W; q++)
            for (uint64_t b = m[q]; b; b &= b - 1)
                score[q * 64 + (uint32_t)__builtin_ctzll(b)] += v;
    }
}

/* Samples scored at a time: their N scores each stay in cache (512 KB at
 * 128 GPUs) until the greedy pass reads them. */
#define SCORE_SAMPLES 512

/* Sample score_i0 + item's savings into its row of score (a weft__par_for
 * item: the scores depend on the valid sets alone, not on the loads). */
static weft_err score_item(void *ctx, size_t item, unsigned worker)
{
    herald *h = ctx;
    uint64_t *sc = h->score + item * h->n;
    memset(sc, 0, (size_t)h->n * sizeof *sc);
    score_sample(h, &h->bg[worker], h->score_i0 + item, sc);
    return WEFT_OK;
}

/* Herald's greedy assignment into place[], kept when it saves more than
 * the drawn one (then *moved counts the samples it moved). */
static weft_err placement(herald *h, bool *placed, uint64_t *moved)
{
    weft_err e;
    if (h->vsid && (e = valid_sets(h)))
        return e;
    uint32_t n = h->n;
    uint64_t B = h->w.batch, sum_h = 0, sum_r = 0;
    uint32_t *load = h->load;
    memset(load, 0, (size_t)n * sizeof *load);
    for (uint64_t i0 = 0; i0 < h->nb; i0 += SCORE_SAMPLES) {
        uint64_t m = h->nb - i0 < SCORE_SAMPLES ? h->nb - i0 : SCORE_SAMPLES;
        h->score_i0 = i0;
        if ((e = weft__par_for(m, h->nbg, score_item, h)))
            return e;
        for (uint64_t i = i0; i < i0 + m; i++) {
            const uint64_t *sc = h->score + (i - i0) * n;
            uint32_t drawn = (uint32_t)(i / B), best = NONE32;
            for (uint32_t g = 0; g < n; g++)
                if (load[g] < B && (best == NONE32 || sc[g] > sc[best]))
                    best = g;
            if (load[drawn] < B && sc[drawn] == sc[best])
                best = drawn;
            load[best]++;
            h->place[i] = best;
            sum_h += sc[best];
            sum_r += sc[drawn];
        }
    }
    *placed = sum_h > sum_r;
    *moved = 0;
    for (uint64_t i = 0; i < h->nb; i++) {
        if (!*placed)
            h->place[i] = (uint32_t)(i / B);
        *moved += h->place[i] != i / B;
    }
    return WEFT_OK;
}

/* ---- a step ------------------------------------------------------------- */

/* Table t's updates (a weft__par_for item). */
static weft_err table_updates(void *ctx, size_t item, unsigned worker)
{
    herald *h = ctx;
    bagger *b = &h->bg[worker];
    uint32_t t = (uint32_t)item;
    const weft_emb_table *tb = &h->w.tables[t];
    size_t lo = h->lstart[t], m = h->lstart[t + 1] - lo;
    if (tb->sharding == WEFT_EMB_DP || !m)
        return WEFT_OK;
    uint64_t mask;
    uint32_t ng = group_rows(h, b, t, &mask), P = tb->pooling;
    memset(b->gfirst, 0xff, (size_t)ng * sizeof *b->gfirst);
    memset(b->gmulti, 0, (size_t)ng * sizeof *b->gmulti);
    const uint64_t *rt = h->rowsT + h->tbase[t];
    for (uint64_t i = 0; i < h->nb; i++) {
        uint32_t g = h->place[i];
        for (uint32_t k = 0; k < P; k++) {
            uint32_t q = group_of(b, rt[i * P + k], mask);
            if (q == NONE32)
                continue;
            if (b->gfirst[q] == NONE32)
                b->gfirst[q] = g;
            else if (b->gfirst[q] != g)
                b->gmulti[q] = 1;
        }
    }
    for (size_t k = 0; k < m; k++) {
        listed *l = &h->list[lo + k];
        uint32_t q = b->egrp[k];
        if (k + 8 < m) /* copies are read at random: read ahead */
            __builtin_prefetch(copy_at(h, l[8].g, l[8].x));
        if (b->gfirst[q] == NONE32 || (!b->gmulti[q] && b->gfirst[q] == l->g))
            continue;
        copy *c = copy_at(h, l->g, l->x);
        if (c->dirty == NONE32)
            c->dirty = h->step;
        l->row |= STALE;
    }
    return WEFT_OK;
}

/* Every row looked up in the step is updated: copies elsewhere go dirty
 * (all of them when several GPUs looked the row up). Table by table (in
 * parallel: a table's copies and listed entries are its own): the GPU of
 * each row's first lookup, whether another GPU looked it up, then the
 * row's copies. */
static weft_err updates(herald *h)
{
    weft_err e = list_copies(h);
    if (e)
        return e;
    return weft__par_for(h->nt, h->nbg, table_updates, h);
}

/* GPU g's bags, in sample order (a weft__par_for item). */
static weft_err gpu_bags(void *ctx, size_t item, unsigned worker)
{
    herald *h = ctx;
    bagger *b = &h->bg[worker];
    uint32_t g = (uint32_t)item;
    const uint64_t *gs = h->gstart;
    const cmap *mp = &h->gc[g].map;
    weft_err e = WEFT_OK;
    for (uint64_t q = g ? gs[g - 1] : 0; q < gs[g] && !e; q++) {
        const uint64_t *rows = h->rows + h->order[q] * h->per;
        for (uint32_t t = 0; t < h->nt && !e; t++) {
            /* The home slot of the bag 8 tables on (its first row), read
             * ahead: the probes are what the bags wait for. */
            uint32_t tp = t + 8;
            if (mp->s && tp < h->nt && h->w.tables[tp].pooling)
                __builtin_prefetch(&mp->s[cmap_home(mp, (uint64_t)tp << 40 | rows[h->off[tp]])]);
            if (h->tw1[t] && h->owner[t] != g)
                e = bag_tw1(h, b, g, t, h->owner[t], (uint64_t)t << 40 | rows[h->off[t]]);
            else
                e = do_bag(h, b, g, t, rows + h->off[t]);
        }
    }
    return e;
}

/* Whether g's lookup of row of table t (a bag of one lookup) goes to
 * another GPU, as do_bag decides: a table-wise or column-wise table not
 * whole on g, a row-wise one whose row's block is not g's; a
 * data-parallel table's never does. */
static bool remote_row(const herald *h, uint32_t g, uint32_t t, uint64_t row)
{
    switch (h->w.tables[t].sharding) {
    case WEFT_EMB_TW:
    case WEFT_EMB_CW:
        return !whole_on(h, g, t);
    case WEFT_EMB_RW:
        return row / h->block[t] != g;
    case WEFT_EMB_DP:
        return false;
    }
    return false;
}

/* Caches key on g at the back of its LRU list (g's cache is not full, and
 * key is absent from it). */
static weft_err admit_last(herald *h, uint32_t g, uint64_t key)
{
    gpu_cache *gc = &h->gc[g];
    uint32_t x = (uint32_t)gc->copies.n;
    weft_err e = weft__vec_reserve(&gc->copies, gc->copies.n + 1);
    if (e || (e = cmap_add(&gc->map, key, x)))
        return e;
    gc->copies.n++;
    *copy_at(h, g, x) = (copy){key, h->step, NONE32, 0, 1, gc->tail, NONE32};
    if (gc->tail != NONE32)
        copy_at(h, g, gc->tail)->next = x;
    else
        gc->head = x;
    gc->tail = x;
    return WEFT_OK;
}

/* The bags of g in the first warm-up step, when every bag holds at most
 * one lookup and the caches are LRU (warm_lru): the caches are empty, no
 * copy is stale (nothing was updated yet), and a part of one lookup that
 * misses admits its row, so each remote lookup leaves its row at the
 * front of g's list, whether it hit (touch) or not (admit), and the
 * evictions take the back. After the step g's cache therefore holds the
 * last rows_per_gpu distinct rows g looked up remotely, the most recent
 * first, with the fetch step of this one: what the bags in order leave,
 * found by reading g's lookups backwards until the cache is full (a
 * warm-up step keeps no counters, pushes or bytes). Each copy's place in
 * g's arrays and map may differ from the bags': the copies are listed,
 * and the valid sets numbered, in that order, which changes which number
 * a set gets but no set, count or matrix (test_one_hot, emb_herald_test,
 * holds them to the brute force). */
static weft_err gpu_warm(void *ctx, size_t item, unsigned worker)
{
    (void)worker;
    herald *h = ctx;
    uint32_t g = (uint32_t)item;
    gpu_cache *gc = &h->gc[g];
    uint64_t lo = g ? h->gstart[g - 1] : 0, full = h->p.rows_per_gpu;
    for (uint64_t q = h->gstart[g]; q-- > lo && gc->copies.n < full;) {
        const uint64_t *rows = h->rows + h->order[q] * h->per;
        for (uint32_t t = h->nt; t-- > 0 && gc->copies.n < full;) {
            if (!h->w.tables[t].pooling)
                continue;
            uint64_t row = rows[h->off[t]], key = (uint64_t)t << 40 | row;
            if (!remote_row(h, g, t, row) || cmap_find(&gc->map, key) != NONE32)
                continue;
            weft_err e = admit_last(h, g, key);
            if (e)
                return e;
        }
    }
    return WEFT_OK;
}

/* Whether this step's bags may run as gpu_warm: the first warm-up step,
 * LRU caches, every bag of at most one lookup. */
static bool warm_lru(const herald *h)
{
    return !h->measure && h->step == 0 && h->p.rows_per_gpu && h->p.policy == WEFT_EMB_LRU &&
           h->one_each;
}

static weft_err run_step(herald *h, weft_diag *d)
{
    weft_emb_herald_result *r = h->out;
    bool placed = false;
    uint64_t moved = 0;
    weft_err e = WEFT_OK;
    if (h->p.placement == WEFT_EMB_PLACE_HERALD) {
        if ((e = placement(h, &placed, &moved)))
            return weft_diag_code(d, e);
    } else {
        for (uint64_t i = 0; i < h->nb; i++)
            h->place[i] = (uint32_t)(i / h->w.batch);
    }
    if (h->measure) {
        r->placed = placed;
        r->samples_moved = moved;
        r->lookups = h->nb * h->per;
    }
    /* The bags GPU by GPU, each GPU's in sample order: order[] holds the
     * samples by GPU (a counting sort), gstart[g] ends up at g's last + 1. */
    uint64_t *gs = h->gstart;
    memset(gs, 0, ((size_t)h->n + 1) * sizeof *gs);
    for (uint64_t i = 0; i < h->nb; i++)
        gs[h->place[i] + 1]++;
    for (uint32_t g = 0; g < h->n; g++)
        gs[g + 1] += gs[g];
    for (uint64_t i = 0; i < h->nb; i++)
        h->order[gs[h->place[i]]++] = i;
    e = weft__par_for(h->n, h->nbg, warm_lru(h) ? gpu_warm : gpu_bags, h);
    for (unsigned k = 0; k < h->nbg; k++) {
        bagger *b = &h->bg[k];
        r->remote += b->remote;
        r->hits += b->hits;
        r->stale += b->stale;
        r->admitted += b->admitted;
        r->transfers += b->transfers;
        r->bytes += b->bytes;
        r->bwd_bytes += b->bwd_bytes;
        b->remote = b->hits = b->stale = b->admitted = b->transfers = b->bytes = b->bwd_bytes = 0;
    }
    /* The measured step's updates would only mark copies for a step that
     * never comes. */
    if (!e && h->p.rows_per_gpu && !h->measure)
        e = updates(h);
    if (e)
        return weft_diag_code(d, e);
    return WEFT_OK;
}

/* Table t's lookups of the step, drawn into rowsT (a weft__par_for
 * item: each table has its own generator). */
static weft_err draw_table(void *ctx, size_t t, unsigned worker)
{
    herald *h = ctx;
    (void)worker;
    weft__emb_draws_table(h->draws, (uint32_t)t, h->nb * h->w.tables[t].pooling,
                          h->rowsT + h->tbase[t]);
    return WEFT_OK;
}

#define TRANSPOSE_SAMPLES 64

/* The step's lookups of TRANSPOSE_SAMPLES samples from block `item`,
 * sample-major from rowsT: table by table, so that each table's few lines
 * are read once and the samples' lines written while they stay cached. */
static weft_err transpose(void *ctx, size_t item, unsigned worker)
{
    herald *h = ctx;
    (void)worker;
    uint64_t i0 = (uint64_t)item * TRANSPOSE_SAMPLES, i1 = i0 + TRANSPOSE_SAMPLES;
    if (i1 > h->nb)
        i1 = h->nb;
    for (uint32_t t = 0; t < h->nt; t++) {
        uint32_t P = h->w.tables[t].pooling;
        const uint64_t *src = h->rowsT + h->tbase[t];
        uint64_t *dst = h->rows + h->off[t];
        for (uint64_t i = i0; i < i1; i++)
            for (uint32_t k = 0; k < P; k++)
                dst[i * h->per + k] = src[i * P + k];
    }
    return WEFT_OK;
}

/* Draws step h->step's lookups: rowsT, then rows. */
static weft_err draw_step(herald *h)
{
    weft_err e = weft__par_for(h->nt, weft__par_workers(h->nt), draw_table, h);
    if (e)
        return e;
    size_t blocks = (size_t)((h->nb + TRANSPOSE_SAMPLES - 1) / TRANSPOSE_SAMPLES);
    return weft__par_for(blocks, weft__par_workers(blocks), transpose, h);
}

/* The measured step without cache and with the drawn placement. */
static weft_err base_matrix(herald *h, weft_diag *d)
{
    weft_emb_acc *a;
    weft_err e = weft_emb_acc_new(&h->w, &a, d);
    if (e)
        return e;
    /* Only row-wise lookups change its matrix (the other shares do not
     * depend on the lookups): each table's bags, in rowsT's order. */
    uint64_t *bags = weft__calloc(h->n, sizeof *bags); /* the tally's bag stamps */
    if (!bags) {
        weft_emb_acc_free(a);
        return weft_diag_code(d, WEFT_ENOMEM);
    }
    weft__emb_tally y = {weft__emb_acc_matrix(a), h->n, 1, NULL, bags, 0};
    for (uint32_t t = 0; t < h->nt; t++)
        if (h->w.tables[t].sharding == WEFT_EMB_RW)
            weft__emb_acc_table(a, t, 0, h->nb, h->rowsT + h->tbase[t], &y);
    weft__free(bags);
    weft__emb_acc_count(a, h->nb * h->per);
    weft_emb_result er;
    if (!e && !(e = weft_emb_acc_finish(a, &er, d)))
        h->out->forward_base = er.forward;
    weft_emb_acc_free(a);
    if (e)
        return e;
    /* Its vectors between GPUs. */
    uint32_t n = h->n;
    uint64_t tr = 0;
    for (uint32_t t = 0; t < h->nt; t++) {
        const weft_emb_table *tb = &h->w.tables[t];
        if (tb->sharding == WEFT_EMB_TW)
            tr += h->nb - h->w.batch;
        else if (tb->sharding == WEFT_EMB_CW)
            tr += (uint64_t)tb->col_shards * (h->nb - h->w.batch);
    }
    const weft_traffic *f = &h->out->forward_base;
    for (uint32_t o = 0; o < n; o++)
        for (uint32_t j = 0; j < n; j++)
            if (o != j)
                h->out->bytes_base += weft_traffic_at(f, o, j);
    /* Row-wise bags: one vector per (bag, block not on the sample's GPU). */
    for (uint32_t t = 0; t < h->nt; t++) {
        const weft_emb_table *tb = &h->w.tables[t];
        if (tb->sharding != WEFT_EMB_RW)
            continue;
        for (uint64_t i = 0; i < h->nb; i++) {
            uint64_t stamp = ++h->bag;
            const uint64_t *br = h->rows + i * h->per + h->off[t];
            for (uint32_t k = 0; k < tb->pooling; k++) {
                uint32_t o = (uint32_t)(br[k] / h->block[t]);
                if (h->bstamp[o] != stamp) {
                    h->bstamp[o] = stamp;
                    tr += o != i / h->w.batch;
                }
            }
        }
    }
    h->out->transfers_base = tr;
    return WEFT_OK;
}

weft_err weft_emb_herald(const weft_emb_workload *w, const weft_emb_herald_params *p,
                         weft_emb_herald_result *out, weft_diag *d)
{
    memset(out, 0, sizeof *out);
    weft_err e = weft_emb_check(w, d);
    if (e)
        return e;
    if (p->policy != WEFT_EMB_LRU && p->policy != WEFT_EMB_LFU)
        return weft_diag_set(d, WEFT_EINVAL, "cache policy %d: lru or lfu", (int)p->policy);
    if (p->placement != WEFT_EMB_PLACE_RANDOM && p->placement != WEFT_EMB_PLACE_HERALD)
        return weft_diag_set(d, WEFT_EINVAL, "placement %d: random or herald", (int)p->placement);
    if (w->rw_dense)
        return weft_diag_set(d, WEFT_EINVAL,
                             "a cache or a placement needs the sparse row-wise exchange (a "
                             "dense reduce-scatter sends every block whatever is cached)");
    if (p->warm_steps > 1000)
        return weft_diag_set(d, WEFT_EINVAL, "%" PRIu32 " warm-up steps: at most 1000",
                             p->warm_steps);
    uint32_t n = w->gpus;
    if (p->rows_per_gpu > (1ull << 32) / n)
        return weft_diag_set(d, WEFT_ELIMIT,
                             "a cache of %" PRIu64 " rows on each of %" PRIu32
                             " GPUs: at most 2^32 rows in all",
                             p->rows_per_gpu, n);
    herald h;
    memset(&h, 0, sizeof h);
    h.w = *w;
    h.p = *p;
    h.n = n;
    h.nt = w->ntables;
    h.W = (n + 63) / 64;
    h.nb = (uint64_t)n * w->batch;
    h.out = out;
    weft__vec_init(&h.vsets, (size_t)h.W * sizeof(uint64_t));
    h.off = weft__malloc((size_t)h.nt * sizeof *h.off);
    h.slot = weft__malloc((size_t)h.nt * sizeof *h.slot);
    h.block = weft__malloc((size_t)h.nt * sizeof *h.block);
    h.owner = weft__malloc((size_t)h.nt * sizeof *h.owner);
    h.tw1 = weft__malloc((size_t)h.nt + 1);
    if (!h.off || !h.slot || !h.block || !h.owner || !h.tw1)
        goto nomem;
    weft__emb_slots(w, h.slot);
    h.one_each = true;
    for (uint32_t t = 0; t < h.nt; t++) {
        h.owner[t] = (uint32_t)(h.slot[t] % n);
        h.tw1[t] = w->tables[t].sharding == WEFT_EMB_TW && w->tables[t].pooling == 1;
        h.one_each = h.one_each && w->tables[t].pooling <= 1;
        h.off[t] = h.per;
        h.per += w->tables[t].pooling;
        h.block[t] = w->tables[t].rows / n + (w->tables[t].rows % n != 0);
    }
    if (h.per && h.nb > SIZE_MAX / sizeof *h.rows / h.per)
        goto nomem;
    h.rows = weft__malloc((size_t)(h.nb * h.per) * sizeof *h.rows + 1);
    h.place = weft__malloc((size_t)h.nb * sizeof *h.place + 1);
    h.order = weft__malloc((size_t)h.nb * sizeof *h.order + 1);
    h.gstart = weft__malloc(((size_t)n + 1) * sizeof *h.gstart);
    bool cached = p->rows_per_gpu != 0;
    /* The table-major arrays: nb * per entries and TPAD a table. */
    if (h.nb * h.per > SIZE_MAX / sizeof *h.rowsT - (uint64_t)TPAD * h.nt - 1)
        goto nomem;
    size_t tlen = (size_t)(h.nb * h.per) + (size_t)TPAD * h.nt + 1;
    h.rowsT = weft__malloc(tlen * sizeof *h.rowsT);
    h.tbase = weft__malloc((size_t)h.nt * sizeof *h.tbase + 1);
    if (!h.rowsT || !h.tbase ||
        (cached && !(h.lstart = weft__calloc((size_t)h.nt + 1, sizeof *h.lstart))))
        goto nomem;
    for (uint32_t t = 0; t < h.nt; t++)
        h.tbase[t] = h.off[t] * h.nb + (uint64_t)TPAD * t;
    if (cached && p->placement == WEFT_EMB_PLACE_HERALD &&
        (!(h.vsid = weft__malloc(tlen * sizeof *h.vsid)) ||
         !(h.vbase = weft__malloc((size_t)h.nt * sizeof *h.vbase + 1)) ||
         !(h.voff = weft__malloc((size_t)h.nt * sizeof *h.voff + 1)) ||
         !(h.vcount = weft__malloc((size_t)h.nt * sizeof *h.vcount + 1)) ||
         !(h.vwho = weft__malloc((size_t)h.nt * sizeof *h.vwho + 1))))
        goto nomem;
    h.gc = weft__calloc(n, sizeof *h.gc);
    h.score = weft__calloc((size_t)SCORE_SAMPLES * n, sizeof *h.score);
    h.load = weft__calloc(n, sizeof *h.load);
    h.bstamp = weft__calloc(n, sizeof *h.bstamp);
    h.bagpush = weft__calloc((size_t)n * n, sizeof *h.bagpush);
    h.rowpush = weft__calloc((size_t)n * n, sizeof *h.rowpush);
    h.fwd_by_gpu = weft__calloc((size_t)n * n, sizeof *h.fwd_by_gpu);
    h.nbg = weft__par_workers(n);
    h.bg = weft__calloc(h.nbg, sizeof *h.bg);
    if (!h.rows || !h.place || !h.order || !h.gstart || !h.gc || !h.score || !h.load || !h.bstamp ||
        !h.bagpush || !h.rowpush || !h.fwd_by_gpu || !h.bg)
        goto nomem;
    uint32_t maxp = 1;
    for (uint32_t t = 0; t < h.nt; t++)
        maxp = w->tables[t].pooling > maxp ? w->tables[t].pooling : maxp;
    for (unsigned k = 0; k < h.nbg; k++) {
        bagger *b = &h.bg[k];
        b->hx = weft__malloc((size_t)maxp * sizeof *b->hx);
        b->bstamp = weft__calloc(n, sizeof *b->bstamp);
        b->bmask = weft__calloc((size_t)(n + 1) * h.W, sizeof *b->bmask);
        b->bmiss = weft__calloc(n, sizeof *b->bmiss);
        b->blook = weft__calloc(n, sizeof *b->blook);
        b->list = weft__calloc(n, sizeof *b->list);
        b->bkey = weft__calloc(2 * (size_t)n, sizeof *b->bkey);
        weft__vec_init(&b->sets, (size_t)h.W * sizeof(uint64_t));
        if (!b->hx || !b->bstamp || !b->bmask || !b->bmiss || !b->blook || !b->list || !b->bkey)
            goto nomem;
    }
    for (uint32_t g = 0; g < n; g++) {
        weft__vec_init(&h.gc[g].copies, sizeof(copy));
        h.gc[g].head = h.gc[g].tail = NONE32;
        if (p->policy == WEFT_EMB_LFU && (e = weft__evheap_init(&h.gc[g].lfu, 0)))
            goto fail_code;
    }
    if ((e = weft_traffic_new(n, &out->forward, d)) || (e = weft_traffic_new(n, &out->backward, d)))
        goto fail;
    if ((e = weft__emb_draws_new(w, &h.draws, d)))
        goto fail;
    /* The warm-up steps, then the measured one (without lookups at all,
     * every step is empty: the measured one alone runs). */
    for (uint32_t st = h.per ? 0 : p->warm_steps; st <= p->warm_steps; st++) {
        h.step = st;
        if ((e = draw_step(&h)))
            goto fail_code;
        h.measure = st == p->warm_steps;
        if ((h.measure && (e = base_matrix(&h, d))) || (e = run_step(&h, d)))
            goto fail;
    }
    for (uint32_t g = 0; g < n; g++)
        for (uint32_t o = 0; o < n; o++) {
            size_t k = (size_t)g * n + o;
            out->forward.bytes[(size_t)o * n + g] += h.fwd_by_gpu[k];
            uint64_t v = h.bagpush[k] < h.rowpush[k] ? h.bagpush[k] : h.rowpush[k];
            out->backward.bytes[k] += v;
            out->bwd_bytes += v;
        }
    herald_fini(&h);
    return WEFT_OK;
nomem:
    e = weft_diag_set(d, WEFT_ENOMEM,
                      "out of memory for Herald's model of %" PRIu32 " GPUs x %" PRIu64
                      " samples (%" PRIu64 " rows cached a GPU)",
                      n, w->batch, p->rows_per_gpu);
    goto fail;
fail_code:
    e = weft_diag_code(d, e);
fail:
    herald_fini(&h);
    weft_emb_herald_free(out);
    return e;
}
