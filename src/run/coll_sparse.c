/* weft_allreduce_sparse (weft/comm_sparse.h): the hash-partitioned sparse
 * all-reduce of COO tensors, the runtime's sparse-hash.
 *
 * 1. Header: every rank sends every rank six words (n, index type, count,
 *    and what, if anything, is wrong with its arguments), so that every
 *    rank fails a bad call alike before any pair moves.
 * 2. Local: every pair gets its owner (weft_sparse_hash_owner); the pairs
 *    are sorted stably by owner, then index (LSD radix sort: a repeat of an
 *    index keeps its input order), repeats are summed, and the pairs of
 *    part j are packed as [indices][values].
 * 3. Sparse reduce-scatter: the counts go first (one word per pair of
 *    ranks), then rank r sends its part j to owner j, in size - 1 pairwise
 *    steps (step k: to r + k, from r - k), as weft_alltoallv does.
 * 4. The owner concatenates the parts in rank order, sorts them stably by
 *    index and sums equal indices in that order.
 * 5. All-gather: every owner sends its summed pairs to every rank (counts
 *    first, then size - 1 steps), and every rank scatters them into its
 *    dense output or sorts them into one ascending sparse result.
 *
 * Wire sizes are the plan's (docs/compression.md, "The collectives"): a
 * message of c pairs is c x (isz + 4) bytes; the receiver places each
 * message at an 8-byte boundary of its buffer so the index arrays load
 * aligned. */
#include <inttypes.h>
#include <string.h>

#include "base/alloc.h"
#include "run/coll_ring.h"
#include "run/coll_sparse.h"
#include "run/p2p.h"
#include "weft/comm_sparse.h"
#include "weft/compress.h"

/* What a rank found wrong with its own arguments (header word 3). */
enum { BAD_NONE = 0, BAD_ITYPE, BAD_OUTPUTS, BAD_NULL, BAD_INDEX, BAD_COUNT, BAD_DENSE };
enum { HDR = 6 }; /* n, index type, count, bad, where, what */

#define RADIX_BITS 11u
#define RADIX (1u << RADIX_BITS)

/* Stable LSD radix sort of a[0..m) by index (the bits below `bits`), then,
 * when by_owner, stably by owner; tmp holds m records. The result is in a
 * or tmp: returned. */
weft__sparse_rec *weft__sparse_sort(weft__sparse_rec *a, weft__sparse_rec *tmp, size_t m,
                                    unsigned bits, bool by_owner, uint32_t owners)
{
    size_t hist_n = owners > RADIX ? owners : RADIX;
    size_t *hist = weft__malloc(hist_n * sizeof *hist);
    if (!hist) return NULL;
    unsigned passes = (bits + RADIX_BITS - 1) / RADIX_BITS;
    for (unsigned p = 0; p <= passes; p++) {
        bool owner_pass = p == passes;
        if (owner_pass && !by_owner) break;
        size_t buckets = owner_pass ? owners : RADIX;
        unsigned shift = p * RADIX_BITS;
        memset(hist, 0, buckets * sizeof *hist);
        for (size_t i = 0; i < m; i++)
            hist[owner_pass ? a[i].owner : (a[i].idx >> shift) & (RADIX - 1)]++;
        bool trivial = false;
        size_t sum = 0;
        for (size_t b = 0; b < buckets; b++) {
            if (hist[b] == m) trivial = true;
            size_t h = hist[b];
            hist[b] = sum;
            sum += h;
        }
        if (trivial) continue; /* one bucket: already in order */
        for (size_t i = 0; i < m; i++)
            tmp[hist[owner_pass ? a[i].owner : (a[i].idx >> shift) & (RADIX - 1)]++] = a[i];
        weft__sparse_rec *t = a;
        a = tmp;
        tmp = t;
    }
    weft__free(hist);
    return a;
}

/* Bits of the largest index below n. */
static unsigned index_bits(uint64_t n)
{
    unsigned b = 0;
    for (uint64_t x = n ? n - 1 : 0; x; x >>= 1)
        b++;
    return b;
}

static size_t align8(size_t x)
{
    return (x + 7) & ~(size_t)7;
}

/* Packs m pairs as [indices (isz bytes each)][values] at out. */
static void pack(unsigned char *out, const weft__sparse_rec *r, size_t m, size_t isz)
{
    float *v = (float *)(void *)(out + m * isz);
    if (isz == 4) {
        uint32_t *ix = (uint32_t *)(void *)out;
        for (size_t i = 0; i < m; i++)
            ix[i] = (uint32_t)r[i].idx;
    } else {
        uint64_t *ix = (uint64_t *)(void *)out;
        for (size_t i = 0; i < m; i++)
            ix[i] = r[i].idx;
    }
    for (size_t i = 0; i < m; i++)
        memcpy(&v[i], &r[i].v, sizeof(float));
}

static uint64_t load_index(const unsigned char *msg, size_t i, size_t isz)
{
    if (isz == 4) {
        uint32_t x;
        memcpy(&x, msg + i * 4, 4);
        return x;
    }
    uint64_t x;
    memcpy(&x, msg + i * 8, 8);
    return x;
}

weft_err weft__sparse_post_all(weft_comm *c, const unsigned char *const *sb, const size_t *sl,
                               unsigned char *const *rb, const size_t *rl, weft_diag *d)
{
    uint32_t n = c->size, me = c->rank, m = 0;
    if (n < 2) return WEFT_OK;
    weft__xreq *req = weft__malloc(2 * (size_t)(n - 1) * sizeof *req);
    weft__xreq **w = weft__malloc(2 * (size_t)(n - 1) * sizeof *w);
    weft_err e = WEFT_OK;
    if (!req || !w) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_reqs;
    }
    /* Receives first, in the order of the pairwise steps (from me - k),
     * then the sends (to me + k), so that early steps' peers go first. */
    for (uint32_t k = 1; k < n && !e; k++) {
        uint32_t from = (me + n - k) % n;
        if (!rl[from]) continue;
        req[m] = (weft__xreq){.peer = from, .buf = rb[from], .len = rl[from]};
        w[m] = &req[m];
        e = weft__comm_post(c, &req[m++], d);
    }
    for (uint32_t k = 1; k < n && !e; k++) {
        uint32_t to = (me + k) % n;
        if (!sl[to]) continue;
        req[m] = (weft__xreq){
            .peer = to, .is_send = true, .buf = (unsigned char *)sb[to], .len = sl[to]};
        w[m] = &req[m];
        e = weft__comm_post(c, &req[m++], d);
    }
    if (!e) e = weft__comm_wait(c, w, m, d);
free_reqs:
    weft__free(w);
    weft__free(req);
    return e;
}

weft_err weft__sparse_gather_words(weft_comm *c, const uint64_t *mine, uint64_t *all, size_t w,
                                   weft_diag *d)
{
    uint32_t n = c->size, r = c->rank;
    memcpy(all + (size_t)r * w, mine, w * sizeof *all);
    const unsigned char **sb = weft__malloc((size_t)n * sizeof *sb);
    unsigned char **rb = weft__malloc((size_t)n * sizeof *rb);
    size_t *len = weft__malloc((size_t)n * sizeof *len);
    weft_err e = WEFT_OK;
    if (!sb || !rb || !len) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_arrays;
    }
    for (uint32_t j = 0; j < n; j++) {
        sb[j] = (const unsigned char *)mine;
        rb[j] = (unsigned char *)(all + (size_t)j * w);
        len[j] = j == r ? 0 : w * sizeof *all;
    }
    e = weft__sparse_post_all(c, sb, len, rb, len, d);
free_arrays:
    weft__free(len);
    weft__free(rb);
    weft__free(sb);
    return e;
}

/* The agreed verdict on the headers: the same on every rank. */
static weft_err judge(const uint64_t *all, uint32_t n, weft_diag *d)
{
    static const char *const P = "sparse allreduce: ";
    for (uint32_t r = 0; r < n; r++) {
        const uint64_t *h = all + (size_t)r * HDR;
        switch (h[3]) {
        case BAD_NONE: break;
        case BAD_ITYPE:
            return weft_diag_set(d, WEFT_EINVAL,
                                 "%srank %" PRIu32 ": index type %s; use uint32 or uint64", P, r,
                                 weft_dtype_name((weft_dtype)h[1]));
        case BAD_OUTPUTS:
            return weft_diag_set(d, WEFT_EINVAL,
                                 "%srank %" PRIu32 ": %s output; give exactly one of dense and "
                                 "sparse",
                                 P, r, h[4] ? "a dense and a sparse" : "no");
        case BAD_NULL:
            return weft_diag_set(d, WEFT_EINVAL,
                                 "%srank %" PRIu32 ": %" PRIu64 " pairs but no %s array", P, r,
                                 h[2], h[4] ? "value" : "index");
        case BAD_INDEX:
            return weft_diag_set(d, WEFT_EINVAL,
                                 "%srank %" PRIu32 ": index %" PRIu64 " at position %" PRIu64
                                 " is >= n = %" PRIu64,
                                 P, r, h[5], h[4], h[0]);
        case BAD_COUNT:
            return weft_diag_set(d, WEFT_EINVAL,
                                 "%srank %" PRIu32 ": %" PRIu64 " pairs do not fit in memory", P,
                                 r, h[2]);
        default: /* BAD_DENSE */
            return weft_diag_set(d, WEFT_EOVERFLOW,
                                 "%srank %" PRIu32 ": a dense output of n = %" PRIu64
                                 " floats passes 2^64 - 1 bytes",
                                 P, r, h[0]);
        }
    }
    for (uint32_t r = 1; r < n; r++) {
        const uint64_t *h = all + (size_t)r * HDR;
        if (h[0] != all[0])
            return weft_diag_set(d, WEFT_EINVAL,
                                 "%sranks disagree on n: rank 0 has %" PRIu64 ", rank %" PRIu32
                                 " has %" PRIu64,
                                 P, all[0], r, h[0]);
        if (h[1] != all[1])
            return weft_diag_set(d, WEFT_EINVAL,
                                 "%sranks disagree on the index type: rank 0 has %s, rank %" PRIu32
                                 " has %s",
                                 P, weft_dtype_name((weft_dtype)all[1]), r,
                                 weft_dtype_name((weft_dtype)h[1]));
    }
    size_t per = weft_dtype_size((weft_dtype)all[1]) + sizeof(float);
    uint64_t total = 0;
    for (uint32_t r = 0; r < n; r++) {
        uint64_t k = all[(size_t)r * HDR + 2];
        if (k > (SIZE_MAX - 8 * (size_t)n) / per - total)
            return weft_diag_set(d, WEFT_EOVERFLOW,
                                 "%sthe pairs of ranks 0 .. %" PRIu32
                                 " pass 2^64 - 1 bytes (rank %" PRIu32 " has %" PRIu64 ")",
                                 P, r, r, k);
        total += k;
    }
    return WEFT_OK;
}

/* This rank's header, and each pair's record (owner filled) in recs. */
static void check_args(const void *indices, weft_dtype itype, const float *values, size_t count,
                       uint64_t n, const float *dense, const weft_sparse_result *sparse,
                       uint64_t *h)
{
    h[0] = n;
    h[1] = (uint64_t)itype;
    h[2] = count;
    h[3] = BAD_NONE;
    h[4] = h[5] = 0;
    if (itype != WEFT_UINT32 && itype != WEFT_UINT64) {
        h[1] = weft_dtype_size(itype) ? (uint64_t)itype : (uint64_t)WEFT__DTYPE_COUNT;
        h[3] = BAD_ITYPE;
    } else if (!dense == !sparse) {
        h[3] = BAD_OUTPUTS;
        h[4] = dense != NULL;
    } else if (count && (!indices || !values)) {
        h[3] = BAD_NULL;
        h[4] = indices != NULL;
    } else if (count > (SIZE_MAX / 2) / (weft_dtype_size(itype) + sizeof(weft__sparse_rec))) {
        h[3] = BAD_COUNT;
    } else if (dense && n > SIZE_MAX / sizeof(float)) {
        h[3] = BAD_DENSE;
    } else {
        for (size_t i = 0; i < count; i++) {
            uint64_t x = itype == WEFT_UINT32 ? ((const uint32_t *)indices)[i]
                                              : ((const uint64_t *)indices)[i];
            if (x >= n) {
                h[3] = BAD_INDEX;
                h[4] = i;
                h[5] = x;
                break;
            }
        }
    }
}

/* Sums runs of equal indices of sorted a[0..m) in place (in order);
 * returns the new count. */
static size_t coalesce(weft__sparse_rec *a, size_t m)
{
    size_t o = 0;
    for (size_t i = 0; i < m; i++) {
        if (o && a[o - 1].idx == a[i].idx && a[o - 1].owner == a[i].owner) {
            a[o - 1].v += a[i].v;
            continue;
        }
        a[o++] = a[i];
    }
    return o;
}

/* A k-way merge of sorted runs of packed pairs (each run's indices
 * ascending, unique within it): a binary heap of the runs' heads keyed by
 * (index, run), so equal indices come out in run order (rank order). */
typedef struct run_head {
    const unsigned char *msg;
    size_t i, m;
    uint64_t idx;
    uint32_t run;
} run_head;

static bool head_less(const run_head *a, const run_head *b)
{
    return a->idx < b->idx || (a->idx == b->idx && a->run < b->run);
}

static void sift_down(run_head *h, size_t m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, best = i;
        if (l < m && head_less(&h[l], &h[best])) best = l;
        if (l + 1 < m && head_less(&h[l + 1], &h[best])) best = l + 1;
        if (best == i) return;
        run_head t = h[i];
        h[i] = h[best];
        h[best] = t;
        i = best;
    }
}

/* Merges runs (msgs[j], counts[j]) j < nr, summing equal indices in run
 * order, into ix (isz bytes each) and vals; returns the pairs written.
 * heap holds nr entries. */
static size_t merge_runs(const unsigned char *const *msgs, const size_t *counts, uint32_t nr,
                         size_t isz, run_head *heap, unsigned char *ix, float *vals)
{
    size_t m = 0, o = 0;
    for (uint32_t j = 0; j < nr; j++)
        if (counts[j])
            heap[m++] = (run_head){msgs[j], 0, counts[j], load_index(msgs[j], 0, isz), j};
    for (size_t i = m; i-- > 0;)
        sift_down(heap, m, i);
    while (m) {
        run_head *h = &heap[0];
        float v;
        memcpy(&v, h->msg + h->m * isz + h->i * sizeof(float), sizeof v);
        if (o && load_index(ix, o - 1, isz) == h->idx) {
            vals[o - 1] += v;
        } else {
            if (isz == 4) {
                uint32_t x = (uint32_t)h->idx;
                memcpy(ix + o * 4, &x, 4);
            } else {
                memcpy(ix + o * 8, &h->idx, 8);
            }
            vals[o++] = v;
        }
        if (++h->i < h->m) {
            h->idx = load_index(h->msg, h->i, isz);
        } else {
            heap[0] = heap[--m];
        }
        sift_down(heap, m, 0);
    }
    return o;
}

typedef struct sparse_call {
    weft_comm *c;
    uint32_t n, me;
    size_t isz, per; /* index bytes; bytes a pair */
    uint64_t elems;
    weft_sparse_hash h;
} sparse_call;

/* Exchanges: count words then payloads, every peer's posted at once.
 * scount[j] pairs at sbuf + soff[j] go to rank j (all_to_all), or
 * scount[0] pairs at sbuf to every rank; rcount[j] and roff[j] are filled
 * and *rbuf allocated (8-byte aligned slots). rcount[me] is this rank's
 * own count (its data stays in sbuf). */
static weft_err exchange(sparse_call *s, bool all_to_all, const unsigned char *sbuf,
                         const size_t *scount, const size_t *soff, size_t *rcount, size_t *roff,
                         unsigned char **rbuf, weft_diag *d)
{
    uint32_t n = s->n, me = s->me;
    weft_err e = WEFT_OK;
    uint64_t *words = weft__malloc(2 * (size_t)n * sizeof *words);
    const unsigned char **sb = weft__malloc((size_t)n * sizeof *sb);
    unsigned char **rb = weft__malloc((size_t)n * sizeof *rb);
    size_t *sl = weft__malloc(2 * (size_t)n * sizeof *sl);
    if (!words || !sb || !rb || !sl) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_arrays;
    }
    uint64_t *theirs = words + n;
    size_t *rl = sl + n;
    for (uint32_t j = 0; j < n; j++) {
        words[j] = all_to_all ? scount[j] : scount[0];
        sb[j] = (const unsigned char *)&words[j];
        rb[j] = (unsigned char *)&theirs[j];
        sl[j] = rl[j] = j == me ? 0 : sizeof *words;
    }
    theirs[me] = words[me];
    if ((e = weft__sparse_post_all(s->c, sb, sl, rb, rl, d))) goto free_arrays;
    size_t total = 0;
    for (uint32_t j = 0; j < n; j++) {
        rcount[j] = (size_t)theirs[j];
        roff[j] = total;
        if (j != me) total += align8(rcount[j] * s->per);
    }
    if (!(*rbuf = weft__malloc(total ? total : 1))) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_arrays;
    }
    for (uint32_t j = 0; j < n; j++) {
        sb[j] = all_to_all ? sbuf + soff[j] : sbuf;
        sl[j] = j == me ? 0 : (all_to_all ? scount[j] : scount[0]) * s->per;
        rb[j] = *rbuf + roff[j];
        rl[j] = j == me ? 0 : rcount[j] * s->per;
    }
    e = weft__sparse_post_all(s->c, sb, sl, rb, rl, d);
free_arrays:
    weft__free(sl);
    weft__free(rb);
    weft__free(sb);
    weft__free(words);
    return e;
}

weft_err weft_allreduce_sparse(weft_comm *c, const void *indices, weft_dtype index_type,
                               const float *values, size_t count, uint64_t n, float *dense,
                               weft_sparse_result *sparse, weft_diag *d)
{
    weft_err e = weft__coll_check(c, WEFT_FLOAT, WEFT_SUM, false, d);
    if (e) return e;
    sparse_call s = {.c = c, .n = c->size, .me = c->rank, .elems = n};
    uint64_t mine[HDR];
    check_args(indices, index_type, values, count, n, dense, sparse, mine);
    uint64_t *all = weft__malloc((size_t)s.n * HDR * sizeof *all);
    if (!all) return weft_diag_code(d, WEFT_ENOMEM);
    e = weft__sparse_gather_words(c, mine, all, HDR, d);
    if (!e) e = judge(all, s.n, d);
    weft__free(all);
    if (e) return e;
    s.isz = weft_dtype_size(index_type);
    s.per = s.isz + sizeof(float);
    if ((e = weft_sparse_hash_init(&s.h, n, s.n, d))) return e;

    /* 2. Sort and coalesce this rank's pairs. */
    weft__sparse_rec *recs = NULL, *tmp = NULL, *sorted;
    size_t *cnt = NULL;
    unsigned char *sbuf = NULL, *rbuf = NULL, *gbuf = NULL;
    size_t m = count;
    recs = weft__malloc((m ? m : 1) * sizeof *recs);
    tmp = weft__malloc((m ? m : 1) * sizeof *tmp);
    cnt = weft__malloc(6 * (size_t)s.n * sizeof *cnt);
    if (!recs || !tmp || !cnt) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_local;
    }
    size_t *soff = cnt + s.n, *rcount = soff + s.n, *roff = rcount + s.n;
    size_t *gcount = roff + s.n, *goff = gcount + s.n;
    for (size_t i = 0; i < m; i++) {
        recs[i].idx = index_type == WEFT_UINT32 ? ((const uint32_t *)indices)[i]
                                                : ((const uint64_t *)indices)[i];
        recs[i].v = values[i];
        recs[i].owner = weft_sparse_hash_owner(&s.h, recs[i].idx);
    }
    unsigned bits = index_bits(n);
    if (!(sorted = weft__sparse_sort(recs, tmp, m, bits, true, s.n))) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_local;
    }
    m = coalesce(sorted, m);
    memset(cnt, 0, s.n * sizeof *cnt);
    for (size_t i = 0; i < m; i++)
        cnt[sorted[i].owner]++;
    size_t off = 0, first = 0;
    for (uint32_t j = 0; j < s.n; j++) {
        soff[j] = off;
        off += align8(cnt[j] * s.per);
    }
    if (!(sbuf = weft__malloc(off ? off : 1))) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_local;
    }
    for (uint32_t j = 0; j < s.n; j++) {
        pack(sbuf + soff[j], sorted + first, cnt[j], s.isz);
        first += cnt[j];
    }

    /* 3. Sparse reduce-scatter. */
    if ((e = exchange(&s, true, sbuf, cnt, soff, rcount, roff, &rbuf, d))) goto free_local;

    /* 4. The owner's sum, in rank order: a merge of the ranks' sorted
     * runs, packed as [indices][values] once its count u is known. */
    size_t got = 0;
    for (uint32_t j = 0; j < s.n; j++)
        got += rcount[j];
    const unsigned char **msgs = weft__malloc((size_t)s.n * sizeof *msgs);
    run_head *heap = weft__malloc((size_t)s.n * sizeof *heap);
    unsigned char *mix = weft__malloc(got ? got * s.isz : 1);
    float *mval = weft__malloc(got ? got * sizeof *mval : 1);
    if (!msgs || !heap || !mix || !mval) {
        weft__free(msgs), weft__free(heap), weft__free(mix), weft__free(mval);
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_local;
    }
    for (uint32_t j = 0; j < s.n; j++)
        msgs[j] = j == s.me ? sbuf + soff[j] : rbuf + roff[j];
    size_t u = merge_runs(msgs, rcount, s.n, s.isz, heap, mix, mval);
    weft__free(sbuf);
    if ((sbuf = weft__malloc(u ? u * s.per : 1))) {
        if (u) memcpy(sbuf, mix, u * s.isz);
        if (u) memcpy(sbuf + u * s.isz, mval, u * sizeof *mval);
    }
    weft__free(mix), weft__free(mval);
    if (!sbuf) {
        weft__free(msgs), weft__free(heap);
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_local;
    }

    /* 5. All-gather of the owners' sums. */
    size_t mycount[1] = {u}, myoff[1] = {0};
    if ((e = exchange(&s, false, sbuf, mycount, myoff, gcount, goff, &gbuf, d))) goto free_merge;
    size_t total = 0;
    for (uint32_t j = 0; j < s.n; j++)
        total += gcount[j];
    if (dense) {
        memset(dense, 0, (size_t)n * sizeof *dense);
        for (uint32_t j = 0; j < s.n; j++) {
            const unsigned char *msg = j == s.me ? sbuf : gbuf + goff[j];
            const unsigned char *v = msg + gcount[j] * s.isz;
            for (size_t i = 0; i < gcount[j]; i++)
                memcpy(&dense[load_index(msg, i, s.isz)], v + i * sizeof(float), sizeof(float));
        }
        goto free_merge;
    }
    weft_sparse_result res = {weft__malloc(total ? total * s.isz : 1),
                              weft__malloc(total ? total * sizeof(float) : 1), total};
    if (!res.indices || !res.values) {
        weft_sparse_result_free(&res);
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_merge;
    }
    for (uint32_t j = 0; j < s.n; j++)
        msgs[j] = j == s.me ? sbuf : gbuf + goff[j];
    /* The owners' parts are disjoint: the merge only orders them. */
    res.count = merge_runs(msgs, gcount, s.n, s.isz, heap, res.indices, res.values);
    *sparse = res;
free_merge:
    weft__free(heap);
    weft__free(msgs);
free_local:
    weft__free(gbuf);
    weft__free(rbuf);
    weft__free(sbuf);
    weft__free(cnt);
    weft__free(tmp);
    weft__free(recs);
    return e;
}

void weft_sparse_result_free(weft_sparse_result *r)
{
    if (!r) return;
    weft__free(r->indices);
    weft__free(r->values);
    memset(r, 0, sizeof *r);
}
