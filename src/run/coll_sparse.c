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

/* Every rank's w words into all (w per rank, in rank order): size - 1
 * pairwise exchanges. */
weft_err weft__sparse_gather_words(weft_comm *c, const uint64_t *mine, uint64_t *all, size_t w,
                                   weft_diag *d)
{
    uint32_t n = c->size, r = c->rank;
    weft_err e = WEFT_OK;
    memcpy(all + (size_t)r * w, mine, w * sizeof *all);
    for (uint32_t k = 1; !e && k < n; k++) {
        uint32_t to = (r + k) % n, from = (r + n - k) % n;
        e = weft__comm_exchange(c, to, mine, w * sizeof *mine, from, all + (size_t)from * w,
                                w * sizeof *all, NULL, 1, d);
    }
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

/* Reads the m pairs of msg (isz-byte indices, then values) into recs,
 * with owner set to tag. */
static void unpack(weft__sparse_rec *recs, const unsigned char *msg, size_t m, size_t isz,
                   uint32_t tag)
{
    const unsigned char *v = msg + m * isz;
    for (size_t i = 0; i < m; i++) {
        recs[i].idx = load_index(msg, i, isz);
        memcpy(&recs[i].v, v + i * sizeof(float), sizeof(float));
        recs[i].owner = tag;
    }
}

typedef struct sparse_call {
    weft_comm *c;
    uint32_t n, me;
    size_t isz, per; /* index bytes; bytes a pair */
    uint64_t elems;
    weft_sparse_hash h;
} sparse_call;

/* Exchanges: count words then payloads. scount[j] pairs at sbuf + soff[j]
 * go to rank j (all_to_all) or mine (scount[0] at sbuf) to every rank;
 * rcount[j] and roff[j] are filled and *rbuf allocated (8-byte aligned
 * slots). rcount[me], roff[me] describe this rank's own data in sbuf
 * instead (*own_in_sbuf). */
static weft_err exchange(sparse_call *s, bool all_to_all, const unsigned char *sbuf,
                         const size_t *scount, const size_t *soff, size_t *rcount, size_t *roff,
                         unsigned char **rbuf, weft_diag *d)
{
    uint32_t n = s->n, me = s->me;
    weft_err e = WEFT_OK;
    uint64_t *words = weft__malloc(2 * (size_t)n * sizeof *words);
    if (!words) return weft_diag_code(d, WEFT_ENOMEM);
    uint64_t *theirs = words + n;
    for (uint32_t j = 0; j < n; j++)
        words[j] = all_to_all ? scount[j] : scount[0];
    theirs[me] = words[me];
    for (uint32_t k = 1; !e && k < n; k++) {
        uint32_t to = (me + k) % n, from = (me + n - k) % n;
        e = weft__comm_exchange(s->c, to, &words[to], sizeof *words, from, &theirs[from],
                                sizeof *theirs, NULL, 1, d);
    }
    size_t total = 0;
    for (uint32_t j = 0; !e && j < n; j++) {
        rcount[j] = (size_t)theirs[j];
        roff[j] = total;
        if (j != me) total += align8(rcount[j] * s->per);
    }
    weft__free(words);
    if (e) return e;
    if (!(*rbuf = weft__malloc(total ? total : 1))) return weft_diag_code(d, WEFT_ENOMEM);
    for (uint32_t k = 1; !e && k < n; k++) {
        uint32_t to = (me + k) % n, from = (me + n - k) % n;
        const unsigned char *out = all_to_all ? sbuf + soff[to] : sbuf;
        size_t ob = (all_to_all ? scount[to] : scount[0]) * s->per;
        e = weft__comm_exchange(s->c, to, out, ob, from, *rbuf + roff[from], rcount[from] * s->per,
                                NULL, 1, d);
    }
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

    /* 4. The owner's sum, in rank order. */
    size_t got = 0;
    for (uint32_t j = 0; j < s.n; j++)
        got += rcount[j];
    weft__free(recs);
    weft__free(tmp);
    recs = weft__malloc((got ? got : 1) * sizeof *recs);
    tmp = weft__malloc((got ? got : 1) * sizeof *tmp);
    if (!recs || !tmp) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_local;
    }
    got = 0;
    for (uint32_t j = 0; j < s.n; j++) {
        const unsigned char *msg = j == s.me ? sbuf + soff[j] : rbuf + roff[j];
        unpack(recs + got, msg, rcount[j], s.isz, 0);
        got += rcount[j];
    }
    if (!(sorted = weft__sparse_sort(recs, tmp, got, bits, false, 1))) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_local;
    }
    size_t u = coalesce(sorted, got);
    weft__free(sbuf);
    if (!(sbuf = weft__malloc(u ? u * s.per : 1))) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_local;
    }
    pack(sbuf, sorted, u, s.isz);

    /* 5. All-gather of the owners' sums. */
    size_t mycount[1] = {u}, myoff[1] = {0};
    if ((e = exchange(&s, false, sbuf, mycount, myoff, gcount, goff, &gbuf, d))) goto free_local;
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
        goto free_local;
    }
    weft__free(recs);
    weft__free(tmp);
    recs = weft__malloc((total ? total : 1) * sizeof *recs);
    tmp = weft__malloc((total ? total : 1) * sizeof *tmp);
    weft_sparse_result res = {weft__malloc(total ? total * s.isz : 1),
                              weft__malloc(total ? total * sizeof(float) : 1), total};
    if (!recs || !tmp || !res.indices || !res.values) {
        weft_sparse_result_free(&res);
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_local;
    }
    got = 0;
    for (uint32_t j = 0; j < s.n; j++) {
        unpack(recs + got, j == s.me ? sbuf : gbuf + goff[j], gcount[j], s.isz, 0);
        got += gcount[j];
    }
    if (!(sorted = weft__sparse_sort(recs, tmp, total, bits, false, 1))) {
        weft_sparse_result_free(&res);
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_local;
    }
    for (size_t i = 0; i < total; i++) {
        if (s.isz == 4)
            ((uint32_t *)res.indices)[i] = (uint32_t)sorted[i].idx;
        else
            ((uint64_t *)res.indices)[i] = sorted[i].idx;
        res.values[i] = sorted[i].v;
    }
    *sparse = res;
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
