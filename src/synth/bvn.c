/* Birkhoff-von Neumann decomposition (weft/bvn.h). */
#include "weft/bvn.h"

#include <string.h>

#include "base/alloc.h"

#define NONE UINT32_MAX
#define BLOCK 8

/* Work state of one decomposition. */
typedef struct bvn_work {
    uint32_t n;
    uint64_t *a;     /* n x n, the padded matrix still to peel */
    uint32_t *mr;    /* row -> matched column, NONE */
    uint32_t *mc;    /* column -> matched row, NONE */
    uint32_t *seen;  /* column -> stamp of the search that reached it */
    uint32_t *via;   /* column -> the row whose scan reached it */
    uint32_t *stack; /* rows of the search */
    uint32_t *pos;   /* row -> next column to scan */
    uint32_t *adj;   /* n x n: row r's support columns adj[r*n .. r*n + deg[r]) */
    uint32_t *deg;   /* (entries found zero are dropped as scans meet them) */
    /* key[i] - off: row i's matched entry, kept here instead of in a (where
     * it is stale but still nonzero, which is all a search asks of a) so
     * that a round's minimum runs over one contiguous array. off is the
     * sum of the weights peeled so far: a peel subtracts its weight from
     * every matched entry by adding it to off, without touching key, and
     * the entries it empties are the keys equal to the new off. A key is
     * at most the line sum D (an entry is at most its row's remainder
     * D - off), so it cannot overflow. */
    uint64_t *key;
    uint64_t off;
    /* Only the rows a search re-matches change key, a few per round, so
     * the least key is kept per block of BLOCK rows (bmin) and a block is
     * recomputed only when a row of it changed (its bit in dirty): a round
     * reads the dirty blocks and the block minima, and looks for emptied
     * entries only in the blocks whose minimum is the weight. */
    uint64_t *bmin;
    uint64_t *dirty;
    uint32_t nb;
    uint32_t *freec; /* the columns left unmatched by the last peel */
    uint32_t nfreec;
    uint32_t stamp;
} bvn_work;

/* Matches free row u by one augmenting path over the support (Kuhn's
 * search, iterative). Every row is pushed at most once (only through its
 * matched column, and each column is reached once). False when no path
 * exists, which Birkhoff's theorem rules out for a padded matrix. */
static bool augment(bvn_work *w, uint32_t u)
{
    uint32_t n = w->n, top = 0;
    if (++w->stamp == 0) {
        memset(w->seen, 0, (size_t)n * sizeof *w->seen);
        w->stamp = 1;
    }
    w->stack[top++] = u;
    w->pos[u] = 0;
    while (top > 0) {
        uint32_t r = w->stack[top - 1];
        const uint64_t *row = w->a + (size_t)r * n;
        uint32_t j = NONE;
        /* A row reached for the first time looks at the free columns
         * first: after a peel they are few, and on a dense support one of
         * them is usually a neighbour, so most searches end at depth 1 or
         * 2 instead of diving through the whole matching. */
        if (w->pos[r] == 0 && w->nfreec < n) {
            const uint32_t *freec = w->freec, *mc = w->mc, nf = w->nfreec;
            for (uint32_t q = 0; q < nf; q++) {
                uint32_t f = freec[q];
                if (mc[f] == NONE && row[f] != 0) {
                    j = f;
                    break;
                }
            }
        }
        if (j == NONE) {
            /* The support only shrinks, so the row's list drops the
             * columns that reached zero as the scan meets them. */
            uint32_t *adj = w->adj + (size_t)r * n, q = w->pos[r], deg = w->deg[r];
            const uint32_t *seen = w->seen, stamp = w->stamp; /* locals: adj may alias */
            while (q < deg) {
                uint32_t c = adj[q];
                if (row[c] == 0)
                    adj[q] = adj[--deg];
                else if (seen[c] == stamp)
                    q++;
                else
                    break;
            }
            w->deg[r] = deg;
            if (q >= deg) {
                w->pos[r] = q;
                top--;
                continue;
            }
            j = adj[q];
            w->pos[r] = q + 1;
        }
        w->seen[j] = w->stamp;
        w->via[j] = r;
        if (w->mc[j] == NONE) {
            /* Flip the path back to u. */
            while (j != NONE) {
                uint32_t row_of = w->via[j], prev = w->mr[row_of];
                uint64_t *arow = w->a + (size_t)row_of * n;
                if (prev != NONE)
                    arow[prev] = w->key[row_of] - w->off;
                w->key[row_of] = arow[j] + w->off;
                w->dirty[row_of / BLOCK / 64] |= UINT64_C(1) << (row_of / BLOCK % 64);
                w->mr[row_of] = j;
                w->mc[j] = row_of;
                j = row_of == u ? NONE : prev;
            }
            return true;
        }
        uint32_t next = w->mc[j];
        w->pos[next] = 0;
        w->stack[top++] = next;
    }
    return false;
}

/* Pads w->a in place so that every line sums to *line. */
static weft_err pad(bvn_work *w, const uint64_t *m, uint64_t *line, uint64_t *padded, weft_diag *d)
{
    uint32_t n = w->n;
    uint64_t *rs = weft__calloc(2 * (size_t)n, sizeof *rs);
    if (!rs)
        return WEFT_ENOMEM;
    uint64_t *cs = rs + n, big = 0;
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < n; j++) {
            uint64_t v = m[(size_t)i * n + j];
            if (rs[i] > UINT64_MAX - v || cs[j] > UINT64_MAX - v) {
                weft__free(rs);
                return weft_diag_set(d, WEFT_EOVERFLOW,
                                     "bvn: the sum of row %u or column %u does not fit in 64 bits",
                                     i, j);
            }
            rs[i] += v;
            cs[j] += v;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        if (rs[i] > big)
            big = rs[i];
        if (cs[i] > big)
            big = cs[i];
    }
    /* Row deficits and column deficits both sum to n*big - total, so one
     * greedy pass fills every line. */
    uint64_t added = 0;
    uint32_t j = 0;
    for (uint32_t i = 0; i < n; i++) {
        while (rs[i] < big) {
            while (cs[j] == big)
                j++;
            uint64_t r = big - rs[i], c = big - cs[j], x = r < c ? r : c;
            w->a[(size_t)i * n + j] += x;
            rs[i] += x;
            cs[j] += x;
            added += x;
        }
    }
    weft__free(rs);
    *line = big;
    *padded = added;
    return WEFT_OK;
}

/* Appends one round to out (capacity *cap rounds). */
static weft_err push_round(weft_bvn *out, uint32_t *cap, uint64_t weight, const uint32_t *mr)
{
    uint32_t n = out->n;
    if (out->rounds == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 16;
        uint64_t *wt = weft__realloc_array(out->weight, nc, sizeof *wt);
        if (!wt)
            return WEFT_ENOMEM;
        out->weight = wt;
        uint32_t *pm = weft__realloc_array(out->perm, (size_t)nc * n, sizeof *pm);
        if (!pm)
            return WEFT_ENOMEM;
        out->perm = pm;
        *cap = nc;
    }
    out->weight[out->rounds] = weight;
    memcpy(out->perm + (size_t)out->rounds * n, mr, (size_t)n * sizeof *mr);
    out->rounds++;
    return WEFT_OK;
}

weft_err weft_bvn_decompose(const uint64_t *m, uint32_t n, weft_bvn *out, weft_diag *d)
{
    if (n == 0 || !m)
        return weft_diag_set(d, WEFT_EINVAL, "bvn: the matrix needs at least one row");
    weft_bvn res;
    memset(&res, 0, sizeof res);
    res.n = n;
    bvn_work w;
    memset(&w, 0, sizeof w);
    w.n = n;
    weft_err e = WEFT_ENOMEM;
    w.a = weft__malloc((size_t)n * n * sizeof *w.a);
    uint32_t *ints = weft__malloc((size_t)n * 9 * sizeof *ints);
    w.adj = weft__malloc((size_t)n * n * sizeof *w.adj);
    w.key = weft__malloc((size_t)n * sizeof *w.key);
    w.nb = (n + BLOCK - 1) / BLOCK;
    w.bmin = weft__malloc((size_t)w.nb * sizeof *w.bmin);
    w.dirty = weft__calloc((w.nb + 63) / 64, sizeof *w.dirty);
    if (!w.a || !ints || !w.adj || !w.key || !w.bmin || !w.dirty)
        goto free_work;
    memcpy(w.a, m, (size_t)n * n * sizeof *w.a);
    w.mr = ints;
    w.mc = ints + n;
    w.seen = ints + 2 * (size_t)n;
    w.via = ints + 3 * (size_t)n;
    w.stack = ints + 4 * (size_t)n;
    w.pos = ints + 5 * (size_t)n;
    uint32_t *freed = ints + 6 * (size_t)n; /* rows to re-match */
    w.freec = ints + 7 * (size_t)n;
    w.deg = ints + 8 * (size_t)n;
    w.nfreec = n;
    for (uint32_t j = 0; j < n; j++)
        w.freec[j] = j;
    memset(w.seen, 0, (size_t)n * sizeof *w.seen);
    for (uint32_t i = 0; i < n; i++)
        w.mr[i] = w.mc[i] = NONE;
    if ((e = pad(&w, m, &res.line, &res.padded, d)))
        goto free_work;
    for (uint32_t i = 0; i < n; i++) {
        w.deg[i] = 0;
        for (uint32_t j = 0; j < n; j++)
            if (w.a[(size_t)i * n + j])
                w.adj[(size_t)i * n + w.deg[i]++] = j;
    }
    uint64_t left = res.line, nnz = 0;
    uint32_t cap = 0, nfree = n;
    for (uint32_t i = 0; i < n; i++)
        nnz += w.deg[i];
    /* Every round zeroes an entry and the last zeroes n, so there are at
     * most nnz - n + 1 rounds: reserve them at once (no copying as the
     * list grows) unless that is more than 2^24 permutation entries. */
    if (left > 0 && (nnz - n + 1) * n <= (UINT64_C(1) << 24)) {
        uint32_t want = (uint32_t)(nnz - n + 1);
        res.weight = weft__malloc((size_t)want * sizeof *res.weight);
        res.perm = weft__malloc((size_t)want * n * sizeof *res.perm);
        if (!res.weight || !res.perm) {
            e = WEFT_ENOMEM;
            goto free_result;
        }
        cap = want;
    }
    for (uint32_t i = 0; i < n; i++)
        freed[i] = i;
    while (left > 0) {
        for (uint32_t k = 0; k < nfree; k++) {
            if (!augment(&w, freed[k])) {
                /* Impossible for a padded matrix; kept as a guard. */
                e = weft_diag_set(d, WEFT_EINVAL, "bvn: row %u has no perfect matching left",
                                  freed[k]);
                goto free_result;
            }
        }
        /* The blocks whose rows changed, then the least block minimum
         * (four running minima: no chain of dependent compares). */
        for (uint32_t q = 0; q < (w.nb + 63) / 64; q++) {
            for (uint64_t bits = w.dirty[q]; bits; bits &= bits - 1) {
                uint32_t blk = q * 64 + (uint32_t)__builtin_ctzll(bits);
                uint32_t lo = blk * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
                uint64_t bm = UINT64_MAX;
                for (uint32_t i = lo; i < hi; i++)
                    bm = w.key[i] < bm ? w.key[i] : bm;
                w.bmin[blk] = bm;
            }
            w.dirty[q] = 0;
        }
        uint64_t m4[4] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
        uint32_t b4 = 0;
        for (; b4 + 4 <= w.nb; b4 += 4) {
            const uint64_t *k4 = w.bmin + b4;
            m4[0] = k4[0] < m4[0] ? k4[0] : m4[0];
            m4[1] = k4[1] < m4[1] ? k4[1] : m4[1];
            m4[2] = k4[2] < m4[2] ? k4[2] : m4[2];
            m4[3] = k4[3] < m4[3] ? k4[3] : m4[3];
        }
        for (; b4 < w.nb; b4++)
            m4[0] = w.bmin[b4] < m4[0] ? w.bmin[b4] : m4[0];
        uint64_t low = m4[0] < m4[1] ? m4[0] : m4[1];
        low = m4[2] < low ? m4[2] : low;
        low = m4[3] < low ? m4[3] : low;
        uint64_t wt = low - w.off;
        if ((e = push_round(&res, &cap, wt, w.mr)))
            goto free_result;
        /* The rows whose entry the peel empties, in row order: only in
         * the blocks whose minimum is the new offset. Their rows are
         * re-matched next round, which marks their blocks dirty. */
        w.off = low;
        nfree = 0;
        for (uint32_t blk = 0; blk < w.nb; blk++) {
            if (w.bmin[blk] != low)
                continue;
            uint32_t lo = blk * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
            for (uint32_t i = lo; i < hi; i++)
                if (w.key[i] == low)
                    freed[nfree++] = i;
        }
        for (uint32_t k = 0; k < nfree; k++) {
            uint32_t i = freed[k];
            w.a[(size_t)i * n + w.mr[i]] = 0;
            w.freec[k] = w.mr[i];
            w.mc[w.mr[i]] = NONE;
            w.mr[i] = NONE;
        }
        w.nfreec = nfree;
        left -= wt;
    }
    *out = res;
    e = WEFT_OK;
    goto free_work;
free_result:
    weft_bvn_fini(&res);
free_work:
    weft__free(w.key);
    weft__free(w.bmin);
    weft__free(w.dirty);
    weft__free(w.adj);
    weft__free(ints);
    weft__free(w.a);
    if (e == WEFT_ENOMEM)
        weft_diag_code(d, e);
    return e;
}

void weft_bvn_fini(weft_bvn *b)
{
    if (!b)
        return;
    weft__free(b->weight);
    weft__free(b->perm);
    b->weight = NULL;
    b->perm = NULL;
    b->rounds = 0;
}
