/* weft_allreduce_sparse (weft/comm_sparse.h): the hash-partitioned sparse
 * all-reduce of COO tensors, the runtime's sparse-hash.
 *
 * 1. Local: every pair's index goes through the hash partition's
 *    bijection (weft_sparse_hash_perm); the image names the owner and the
 *    pair's position in the owner's part, which is what travels in place
 *    of the index. The pairs of part j are packed as [positions][values]
 *    in input order (a counting sort by owner: no sort by index at all).
 * 2. Header: every rank sends every rank six words (n, index type, count,
 *    and what, if anything, is wrong with its arguments), with its counts
 *    per owner, so that every rank fails a bad call alike before any pair
 *    moves. The parts are packed before it: the header waits for the last
 *    rank, and the others then send at once.
 * 3. Sparse reduce-scatter: every rank's part j to owner j, every message
 *    posted at once (beyond weft__sparse_fold_max ranks the counts, one
 *    word per pair of ranks, go first in their own exchange).
 * 4. The owner adds the pairs up by position, rank 0's pairs first in
 *    input order, then rank 1's, ... (in a dense accumulator of its part
 *    with a bitmap of the positions seen, or, for a part much larger than
 *    the pairs, after a stable radix sort by position), and packs the
 *    positions it saw in ascending order with their global indices
 *    (weft_sparse_hash_unperm).
 * 5. All-gather: every owner sends its summed pairs to every rank (counts
 *    first), and every rank scatters them into its dense output, or sorts
 *    them by index (LSD radix) into one ascending sparse result. The
 *    owners' unions are disjoint, so the order is free: a rank scatters
 *    its own union while the others' are on their way (off the tail of
 *    the call), then the others in rank order. A dense output is zeroed
 *    earlier, while the reduce-scatter's pairs are on the wire.
 *
 * Wire sizes are the plan's (docs/compression.md, "The collectives"): a
 * message of c pairs is c x (isz + 4) bytes; the receiver places each
 * message at an 8-byte boundary of its buffer so the index arrays load
 * aligned. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "run/coll_busy.h"
#include "run/coll_ring.h"
#include "run/coll_sparse.h"
#include "run/comm_fail.h"
#include "run/comm_internal.h"
#include "run/p2p.h"
#include "weft/comm_sparse.h"
#include "weft/compress.h"

/* What a rank found wrong with its own arguments (header word 3). */
enum { BAD_NONE = 0, BAD_ITYPE, BAD_OUTPUTS, BAD_NULL, BAD_INDEX, BAD_COUNT, BAD_DENSE, BAD_NOMEM };
enum { HDR = 6 }; /* n, index type, count, bad, where, what */

uint32_t weft__sparse_fold_max = 64;

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
    if (!hist)
        return NULL;
    unsigned passes = (bits + RADIX_BITS - 1) / RADIX_BITS;
    for (unsigned p = 0; p <= passes; p++) {
        bool owner_pass = p == passes;
        if (owner_pass && !by_owner)
            break;
        size_t buckets = owner_pass ? owners : RADIX;
        unsigned shift = p * RADIX_BITS;
        memset(hist, 0, buckets * sizeof *hist);
        for (size_t i = 0; i < m; i++)
            hist[owner_pass ? a[i].owner : (a[i].idx >> shift) & (RADIX - 1)]++;
        bool trivial = false;
        size_t sum = 0;
        for (size_t b = 0; b < buckets; b++) {
            if (hist[b] == m)
                trivial = true;
            size_t h = hist[b];
            hist[b] = sum;
            sum += h;
        }
        if (trivial)
            continue; /* one bucket: already in order */
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

/* The agreed verdict on the headers: the same on every rank. */
static weft_err judge(const uint64_t *all, uint32_t n, size_t w, weft_diag *d)
{
    static const char *const P = "sparse allreduce: ";
    for (uint32_t r = 0; r < n; r++) {
        const uint64_t *h = all + (size_t)r * w;
        switch (h[3]) {
        case BAD_NONE:
            break;
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
                                 "%srank %" PRIu32 ": %" PRIu64 " pairs do not fit in memory", P, r,
                                 h[2]);
        case BAD_NOMEM:
            return weft_diag_set(d, WEFT_ENOMEM, "%srank %" PRIu32 ": out of memory", P, r);
        default: /* BAD_DENSE */
            return weft_diag_set(d, WEFT_EOVERFLOW,
                                 "%srank %" PRIu32 ": a dense output of n = %" PRIu64
                                 " floats passes 2^64 - 1 bytes",
                                 P, r, h[0]);
        }
    }
    for (uint32_t r = 1; r < n; r++) {
        const uint64_t *h = all + (size_t)r * w;
        if (h[0] != all[0])
            return weft_diag_set(d, WEFT_EINVAL,
                                 "%sranks disagree on n: rank 0 has %" PRIu64 ", rank %" PRIu32
                                 " has %" PRIu64,
                                 P, all[0], r, h[0]);
        if (h[1] != all[1])
            return weft_diag_set(
                d, WEFT_EINVAL,
                "%sranks disagree on the index type: rank 0 has %s, rank %" PRIu32 " has %s", P,
                weft_dtype_name((weft_dtype)all[1]), r, weft_dtype_name((weft_dtype)h[1]));
    }
    size_t per = weft_dtype_size((weft_dtype)all[1]) + sizeof(float);
    uint64_t total = 0;
    for (uint32_t r = 0; r < n; r++) {
        uint64_t k = all[(size_t)r * w + 2];
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

typedef struct sparse_call {
    weft_comm *c;
    uint32_t n, me;
    size_t isz, per; /* index bytes; bytes a pair */
    uint64_t elems;
    weft_sparse_hash h;
} sparse_call;

/* Exchanges: count words (unless known: rcount given) then payloads,
 * every peer's posted at once, each(arg, j) called for every rank's
 * message in rank order as it arrives (this rank's own included).
 * scount[j] pairs at sbuf + soff[j] go to rank j (all_to_all), or
 * scount[0] pairs at sbuf to every rank; rcount[j] and roff[j] are filled
 * and *rbuf allocated (8-byte aligned slots). rcount[me] is this rank's
 * own count (its data stays in sbuf).
 *
 * The all-gather (not all_to_all) sends its payload with its count, before
 * any count is in: its messages wait for no other rank's (a count would
 * otherwise queue behind the bulk that every link still carries, and hold
 * every send back). Its receive buffer is allocated first, for at most
 * `bound` pairs from all the ranks (the pairs of every rank: no union is
 * larger than what its owner received), and its callbacks take this rank's
 * own union first (the unions are disjoint: the order is free).
 *
 * With fill, the n floats at fill are zeroed once every send is posted and
 * the transports have taken what they can, before the first wait: a dense
 * output zeroed while the reduce-scatter's pairs are on the wire, where
 * the CPUs wait, rather than at the start of the all-gather, where every
 * rank's zeroing would compete with the last owner's union for them. */
static weft_err exchange(sparse_call *s, bool all_to_all, bool known, const unsigned char *sbuf,
                         const size_t *scount, const size_t *soff, size_t *rcount, size_t *roff,
                         unsigned char **rbuf, size_t bound, float *fill, weft__sparse_each each,
                         void *arg, weft_diag *d)
{
    uint32_t n = s->n, me = s->me;
    weft_err e = WEFT_OK;
    bool early = !all_to_all && !known;
    size_t cap = early ? bound * s->per + 8 * (size_t)n : 0;
    uint64_t *words = weft__malloc(2 * (size_t)n * sizeof *words);
    const unsigned char **sb = weft__malloc(2 * (size_t)n * sizeof *sb);
    unsigned char **rb = weft__malloc((size_t)n * sizeof *rb);
    size_t *sl = weft__malloc(3 * (size_t)n * sizeof *sl);
    weft__sparse_posts p = {0};
    if (!words || !sb || !rb || !sl || (early && !(*rbuf = weft__malloc(cap ? cap : 1)))) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_arrays;
    }
    if ((e = weft__sparse_posts_init(&p, n, d)))
        goto free_arrays;
    uint64_t *theirs = words + n;
    size_t *rl = sl + n, *pl = rl + n;
    const unsigned char **pb = sb + n;
    for (uint32_t j = 0; j < n; j++) {
        words[j] = all_to_all ? scount[j] : scount[0];
        sb[j] = (const unsigned char *)&words[j];
        rb[j] = (unsigned char *)&theirs[j];
        sl[j] = rl[j] = j == me ? 0 : sizeof *words;
        pb[j] = all_to_all ? sbuf + soff[j] : sbuf;
        pl[j] = j == me ? 0 : (all_to_all ? scount[j] : scount[0]) * s->per;
    }
    theirs[me] = words[me];
    if (!known) {
        if (!(e = weft__sparse_post_recvs(s->c, &p, rb, rl, d)))
            e = weft__sparse_post_sends(s->c, &p, sb, sl, d);
        if (!e && early)
            e = weft__sparse_post_sends(s->c, &p, pb, pl, d);
        if (!e)
            e = weft__sparse_wait_recvs(s->c, &p, d);
        if (e)
            goto free_arrays;
    }
    size_t total = 0;
    for (uint32_t j = 0; j < n; j++) {
        if (!known)
            rcount[j] = (size_t)theirs[j];
        roff[j] = total;
        if (j != me)
            total += align8(rcount[j] * s->per);
    }
    if (early && total > cap) {
        /* Sends are in flight: fail the communicator (its transports drop
         * them) rather than leave them to a freed buffer. */
        e = weft__comm_fail(s->c,
                            weft_diag_set(d, WEFT_EPARSE,
                                          "sparse allreduce: the unions announced (%zu "
                                          "bytes) pass the pairs of every rank (%zu)",
                                          total, cap),
                            d);
        goto free_arrays;
    }
    if (!early && !(*rbuf = weft__malloc(total ? total : 1))) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_arrays;
    }
    for (uint32_t j = 0; j < n; j++) {
        rb[j] = *rbuf + roff[j];
        rl[j] = j == me ? 0 : rcount[j] * s->per;
    }
    e = weft__sparse_post_recvs(s->c, &p, rb, rl, d);
    if (!e && !early)
        e = weft__sparse_post_sends(s->c, &p, pb, pl, d);
    if (!e && fill && !(e = weft__comm_kick(s->c, d)))
        memset(fill, 0, (size_t)s->elems * sizeof *fill);
    if (!e)
        e = weft__sparse_posts_finish(s->c, &p, each, arg, early, d);
free_arrays:
    weft__sparse_posts_free(&p);
    weft__free(sl);
    weft__free(rb);
    weft__free(sb);
    weft__free(words);
    return e;
}

static void store_index(unsigned char *msg, size_t i, size_t isz, uint64_t x)
{
    if (isz == 4) {
        uint32_t y = (uint32_t)x;
        memcpy(msg + i * 4, &y, 4);
    } else {
        memcpy(msg + i * 8, &x, 8);
    }
}

/* The owner's side of the reduce-scatter and every rank's side of the
 * all-gather, run per message as it arrives (weft__sparse_post_all). */
typedef struct sparse_sink {
    const sparse_call *s;
    /* Rank j's message: own (this rank's data, j == me) or *in + off[j];
     * count[j] pairs. */
    const unsigned char *own;
    unsigned char *const *in;
    const size_t *count, *off;
    bool started;
    /* Owner: a dense accumulator of the part and its bitmap, or records to
     * sort (by_array false). */
    bool by_array;
    uint64_t part;
    float *acc;
    uint64_t *seen;
    weft__sparse_rec *recs, *tmp;
    size_t k;
    /* All-gather: the dense output (zeroed already when zeroed), or recs
     * (sparse; nomem when they could not be allocated: the exchange still
     * runs to its end). */
    bool zeroed, nomem;
    float *dense;
    uint64_t n;
} sparse_sink;

static const unsigned char *sink_msg(const sparse_sink *k, uint32_t j)
{
    return j == k->s->me ? k->own : *k->in + k->off[j];
}

static float load_value(const unsigned char *msg, size_t m, size_t isz, size_t i)
{
    float x;
    memcpy(&x, msg + m * isz + i * sizeof x, sizeof x);
    return x;
}

/* One loop per index size, the arrays in locals (a store through acc
 * could otherwise alias them, and every pair would reload them). */
#define SUM_INTO(T)                                                                                \
    for (size_t i = 0; i < m; i++) {                                                               \
        T p;                                                                                       \
        memcpy(&p, msg + i * sizeof p, sizeof p);                                                  \
        float x = load_value(msg, m, sizeof p, i);                                                 \
        uint64_t bit = UINT64_C(1) << (p & 63), w = seen[p >> 6];                                  \
        acc[p] = w & bit ? acc[p] + x : x;                                                         \
        seen[p >> 6] = w | bit;                                                                    \
    }
void weft__sparse_sum_into(float *restrict acc, uint64_t *restrict seen, const unsigned char *msg,
                           size_t m, size_t isz)
{
    if (isz == 4) {
        SUM_INTO(uint32_t)
    } else {
        SUM_INTO(uint64_t)
    }
}
#undef SUM_INTO

/* The writes land anywhere in the output and most miss the cache (a
 * software prefetch ahead measured no faster in bench_sparse_kernels). */
#define SCATTER(T)                                                                                 \
    for (size_t i = 0; i < m; i++) {                                                               \
        T x;                                                                                       \
        memcpy(&x, msg + i * sizeof x, sizeof x);                                                  \
        out[x] = load_value(msg, m, sizeof x, i);                                                  \
    }
void weft__sparse_scatter(float *restrict out, const unsigned char *msg, size_t m, size_t isz)
{
    if (isz == 4) {
        SCATTER(uint32_t)
    } else {
        SCATTER(uint64_t)
    }
}
#undef SCATTER

/* Owner: adds rank j's pairs (by position). The first call decides the
 * accumulator (every count is known by then). */
static weft_err owner_add(void *arg, uint32_t j, weft_diag *d)
{
    sparse_sink *k = arg;
    const sparse_call *s = k->s;
    if (!k->started) {
        size_t got = 0;
        for (uint32_t r = 0; r < s->n; r++)
            got += k->count[r];
        k->by_array = k->part <= (uint64_t)8 * got + 4096 && k->part <= (UINT64_C(1) << 31);
        if (k->by_array) {
            k->acc = weft__malloc((k->part ? k->part : 1) * sizeof *k->acc);
            k->seen = weft__calloc(k->part / 64 + 1, sizeof *k->seen);
        } else {
            k->recs = weft__malloc((got ? got : 1) * sizeof *k->recs);
            k->tmp = weft__malloc((got ? got : 1) * sizeof *k->tmp);
        }
        if (k->by_array ? !k->acc || !k->seen : !k->recs || !k->tmp)
            return weft_diag_code(d, WEFT_ENOMEM);
        k->started = true;
    }
    const unsigned char *msg = sink_msg(k, j);
    size_t m = k->count[j];
    if (k->by_array)
        weft__sparse_sum_into(k->acc, k->seen, msg, m, s->isz);
    else
        for (size_t i = 0; i < m; i++, k->k++)
            k->recs[k->k] =
                (weft__sparse_rec){load_index(msg, i, s->isz), load_value(msg, m, s->isz, i), 0};
    return WEFT_OK;
}

/* Every rank: owner j's sums into the dense output, or into records. */
static weft_err gather_put(void *arg, uint32_t j, weft_diag *d)
{
    sparse_sink *k = arg;
    const sparse_call *s = k->s;
    if (!k->started) {
        if (k->dense) {
            if (!k->zeroed)
                memset(k->dense, 0, (size_t)k->n * sizeof *k->dense);
        } else {
            size_t total = 0;
            for (uint32_t r = 0; r < s->n; r++)
                total += k->count[r];
            k->recs = weft__malloc((total ? total : 1) * sizeof *k->recs);
            k->tmp = weft__malloc((total ? total : 1) * sizeof *k->tmp);
            if (!k->recs || !k->tmp) {
                k->nomem = true;
                return weft_diag_code(d, WEFT_ENOMEM);
            }
        }
        k->started = true;
    }
    const unsigned char *msg = sink_msg(k, j);
    size_t m = k->count[j];
    if (k->dense)
        weft__sparse_scatter(k->dense, msg, m, s->isz);
    else
        for (size_t i = 0; i < m; i++, k->k++)
            k->recs[k->k] =
                (weft__sparse_rec){load_index(msg, i, s->isz), load_value(msg, m, s->isz, i), 0};
    return WEFT_OK;
}

static weft_err sparse_call_run(weft_comm *c, const void *indices, weft_dtype index_type,
                                const float *values, size_t count, uint64_t n, float *dense,
                                weft_sparse_result *sparse, bool *settled, weft_diag *d)
{
    weft_err e = weft__coll_check(c, WEFT_FLOAT, WEFT_SUM, false, d);
    if (e)
        return e;
    sparse_call s = {.c = c, .n = c->size, .me = c->rank, .elems = n};
    /* Up to weft__sparse_fold_max ranks the counts for the owners ride in
     * the header (one round less); beyond, their own exchange. */
    bool fold = s.n <= weft__sparse_fold_max;
    size_t hw = HDR + (fold ? s.n : 0);
    size_t *cnt = weft__malloc(6 * (size_t)s.n * sizeof *cnt);
    uint64_t *mine = weft__malloc(hw * sizeof *mine);
    uint64_t *all = weft__malloc((size_t)s.n * hw * sizeof *all);
    uint64_t *pos = NULL;
    uint32_t *own = NULL;
    unsigned char *sbuf = NULL, *rbuf = NULL, *gbuf = NULL;
    float *acc = NULL;
    uint64_t *seen = NULL;
    weft__sparse_rec *recs = NULL, *tmp = NULL;
    if (!mine || !all) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_all;
    }
    /* The arguments first: count is bounded once they pass. */
    check_args(indices, index_type, values, count, n, dense, sparse, mine);
    if (mine[3] == BAD_NONE) {
        pos = weft__malloc((count ? count : 1) * sizeof *pos);
        own = weft__malloc((count ? count : 1) * sizeof *own);
        if (!cnt || !pos || !own)
            mine[3] = BAD_NOMEM;
    }
    size_t *soff = NULL, *rcount = NULL, *roff = NULL, *gcount = NULL, *goff = NULL;
    if (cnt) {
        soff = cnt + s.n, rcount = soff + s.n, roff = rcount + s.n;
        gcount = roff + s.n, goff = gcount + s.n;
    }
    s.isz = weft_dtype_size(index_type);
    s.per = s.isz + sizeof(float);
    weft_sparse_hash_init(&s.h, n, s.n, NULL);

    /* 1. Each pair's owner and its position in the owner's part (valid
     * arguments only: an index >= n has no owner), then the pairs of part
     * j packed in input order (a stable counting sort), all before the
     * header: the header waits for the slowest rank, and every other rank
     * then sends its parts at once instead of packing them first (on a
     * machine whose ranks share cores, the packing of three ranks would
     * otherwise run between the last rank's arrival and the first send).
     * A rank that cannot allocate its parts says so in its header. */
    if (mine[3] == BAD_NONE) {
        memset(cnt, 0, s.n * sizeof *cnt);
        for (size_t i = 0; i < count; i++) {
            uint64_t x = index_type == WEFT_UINT32 ? ((const uint32_t *)indices)[i]
                                                   : ((const uint64_t *)indices)[i];
            uint64_t p = weft_sparse_hash_perm(&s.h, x);
            uint32_t o = weft_sparse_hash_owner_of_image(&s.h, p);
            own[i] = o;
            pos[i] = p - weft_sparse_hash_start(&s.h, o);
            cnt[o]++;
        }
        size_t off = 0;
        for (uint32_t j = 0; j < s.n; j++) {
            soff[j] = off;
            off += align8(cnt[j] * s.per);
        }
        if (!(sbuf = weft__malloc(off ? off : 1)))
            mine[3] = BAD_NOMEM;
    }
    if (mine[3] == BAD_NONE) {
        /* goff as the fill level of each part while packing. */
        memset(goff, 0, s.n * sizeof *goff);
        for (size_t i = 0; i < count; i++) {
            uint32_t o = own[i];
            unsigned char *msg = sbuf + soff[o];
            size_t at = goff[o]++;
            store_index(msg, at, s.isz, pos[i]);
            memcpy(msg + cnt[o] * s.isz + at * sizeof(float), &values[i], sizeof(float));
        }
    }
    weft__free(pos), pos = NULL;
    weft__free(own), own = NULL;
    for (uint32_t j = 0; fold && j < s.n; j++)
        mine[HDR + j] = mine[3] == BAD_NONE ? cnt[j] : 0;
    e = weft__sparse_gather_words(c, mine, all, hw, d);
    if (!e && (e = judge(all, s.n, hw, d)))
        *settled = true; /* every rank returns e alike */
    for (uint32_t j = 0; !e && fold && j < s.n; j++)
        rcount[j] = (size_t)all[(size_t)j * hw + HDR + s.me];
    if (e)
        goto free_all;

    /* 3. Sparse reduce-scatter: every part to its owner, which adds each
     * rank's pairs as they arrive (4).
     *
     * 4. The owner's sum over its part's positions: the ranks in rank
     * order, each rank's pairs in input order; the first value of a
     * position is stored, the others added. A part of at most 8 times the
     * pairs received (and 2^31 positions) is summed in a dense accumulator
     * of the part with a bitmap of the positions seen; a larger (sparser)
     * one by a stable radix sort of the pairs by position, which keeps
     * that order among equal positions. Either way the sums come out by
     * ascending position. */
    sparse_sink own_sum = {.s = &s,
                           .own = sbuf + soff[s.me],
                           .in = &rbuf,
                           .count = rcount,
                           .off = roff,
                           .part = s.h.q + (s.me < s.h.r)};
    e = exchange(&s, true, fold, sbuf, cnt, soff, rcount, roff, &rbuf, 0, dense, owner_add,
                 &own_sum, d);
    acc = own_sum.acc, seen = own_sum.seen, recs = own_sum.recs, tmp = own_sum.tmp;
    if (e)
        goto free_all;
    uint64_t part = own_sum.part, base = weft_sparse_hash_start(&s.h, s.me);
    size_t u = 0;
    weft__sparse_rec *sorted = NULL;
    if (own_sum.by_array) {
        for (uint64_t w = 0; w <= part / 64; w++)
            u += (size_t)__builtin_popcountll(seen[w]);
    } else {
        if (!(sorted = weft__sparse_sort(recs, tmp, own_sum.k, index_bits(part), false, 1))) {
            e = weft_diag_code(d, WEFT_ENOMEM);
            goto free_all;
        }
        for (size_t i = 0; i < own_sum.k; i++) {
            if (u && sorted[u - 1].idx == sorted[i].idx)
                sorted[u - 1].v += sorted[i].v;
            else
                sorted[u++] = sorted[i];
        }
    }
    weft__free(sbuf);
    if (!(sbuf = weft__malloc(u ? u * s.per : 1))) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_all;
    }
    float *uv = (float *)(void *)(sbuf + u * s.isz);
    if (own_sum.by_array) {
        size_t o = 0;
        for (uint64_t w = 0; w <= part / 64; w++)
            for (uint64_t bits = seen[w]; bits; bits &= bits - 1) {
                uint64_t p = w * 64 + (uint64_t)__builtin_ctzll(bits);
                store_index(sbuf, o, s.isz, weft_sparse_hash_unperm(&s.h, base + p));
                memcpy(&uv[o++], &acc[p], sizeof(float));
            }
    } else {
        for (size_t i = 0; i < u; i++) {
            store_index(sbuf, i, s.isz, weft_sparse_hash_unperm(&s.h, base + sorted[i].idx));
            memcpy(&uv[i], &sorted[i].v, sizeof(float));
        }
    }
    weft__free(acc), acc = NULL;
    weft__free(seen), seen = NULL;
    weft__free(recs), recs = NULL;
    weft__free(tmp), tmp = NULL;

    /* 5. All-gather of the owners' sums, scattered (or collected) as they
     * arrive, this rank's own first. */
    size_t mycount[1] = {u}, myoff[1] = {0};
    sparse_sink out = {
        .s = &s, .own = sbuf, .in = &gbuf, .count = gcount, .off = goff, .dense = dense, .n = n};
    size_t every = 0; /* the pairs of every rank (judge: times s.per fits) */
    for (uint32_t r = 0; r < s.n; r++)
        every += (size_t)all[(size_t)r * hw + 2];
    out.zeroed = dense != NULL; /* in the reduce-scatter's exchange */
    e = exchange(&s, false, false, sbuf, mycount, myoff, gcount, goff, &gbuf, every, NULL,
                 gather_put, &out, d);
    recs = out.recs, tmp = out.tmp;
    /* Every exchange done (also when the records could not be allocated:
     * its requests still ran to their end): nobody waits on what follows. */
    *settled = !e || out.nomem;
    if (e || dense)
        goto free_all;
    /* Sparse: every owner's pairs, sorted by index (parts are disjoint). */
    size_t total = out.k;
    weft_sparse_result res = {weft__malloc(total ? total * s.isz : 1),
                              weft__malloc(total ? total * sizeof(float) : 1), total};
    sorted = res.indices && res.values
                 ? weft__sparse_sort(recs, tmp, total, index_bits(n), false, 1)
                 : NULL;
    if (!sorted) {
        weft_sparse_result_free(&res);
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_all;
    }
    for (size_t i = 0; i < total; i++) {
        store_index(res.indices, i, s.isz, sorted[i].idx);
        res.values[i] = sorted[i].v;
    }
    *sparse = res;
free_all:
    weft__free(all);
    weft__free(mine);
    weft__free(tmp);
    weft__free(recs);
    weft__free(seen);
    weft__free(acc);
    weft__free(gbuf);
    weft__free(rbuf);
    weft__free(sbuf);
    weft__free(own);
    weft__free(pos);
    weft__free(cnt);
    return e;
}

/* Memory running out on one rank. Before the header (the pairs'
 * positions, the packed parts) the rank says so in its header, and every
 * rank returns WEFT_ENOMEM naming it, the communicator usable; in the
 * last exchange's callbacks or after it (a sparse result's records,
 * arrays and sort) it returns
 * WEFT_ENOMEM alone, the others having their results, and nobody waits
 * (both: settled). Anywhere else (the header's own buffers, the
 * exchanges, the sums) its peers are in an exchange it cannot finish: the
 * communicator then fails on this rank (as alltoallv's, coll_alltoallv.c),
 * which tells the peers, so that they return WEFT_EPEER at once instead
 * of at the timeout. One rank has nobody waiting. */
static weft_err out_of_memory(weft_comm *c, weft_err e, bool settled, weft_diag *d)
{
    return settled ? e : weft__comm_fail_oom(c, e, "sparse allreduce", d);
}

/* Marked busy like the dense collectives (coll_busy.h), so that a
 * checkpoint's helper thread defers to it too. */
weft_err weft_allreduce_sparse(weft_comm *c, const void *indices, weft_dtype index_type,
                               const float *values, size_t count, uint64_t n, float *dense,
                               weft_sparse_result *sparse, weft_diag *d)
{
    weft__coll_enter(c);
    bool settled = false;
    weft_err e =
        sparse_call_run(c, indices, index_type, values, count, n, dense, sparse, &settled, d);
    return weft__coll_leave(c, out_of_memory(c, e, settled, d));
}

void weft_sparse_result_free(weft_sparse_result *r)
{
    if (!r)
        return;
    weft__free(r->indices);
    weft__free(r->values);
    memset(r, 0, sizeof *r);
}
