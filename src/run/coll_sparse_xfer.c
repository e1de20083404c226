/* The transfers of the sparse and quantized all-reduces (coll_sparse.h):
 * every peer's message posted at once on the transports, with a callback
 * per message in rank order as it arrives, and the small allgather of
 * words their headers ride on. */
#include <string.h>

#include "base/alloc.h"
#include "run/coll_sparse.h"
#include "run/p2p.h"

weft_err weft__sparse_post_all(weft_comm *c, const unsigned char *const *sb, const size_t *sl,
                               unsigned char *const *rb, const size_t *rl, weft__sparse_each each,
                               void *arg, weft_diag *d)
{
    uint32_t n = c->size, me = c->rank, m = 0;
    weft__xreq *req = weft__malloc(2 * (size_t)n * sizeof *req);
    weft__xreq **w = weft__malloc(2 * (size_t)n * sizeof *w);
    uint32_t *at = weft__malloc((size_t)n * sizeof *at); /* rank -> its receive */
    weft_err e = WEFT_OK;
    if (!req || !w || !at) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_reqs;
    }
    /* Receives first, in the order of the pairwise steps (from me - k),
     * then the sends (to me + k), so that early steps' peers go first. */
    for (uint32_t k = 1; k < n && !e; k++) {
        uint32_t from = (me + n - k) % n;
        at[from] = UINT32_MAX;
        if (!rl[from])
            continue;
        req[m] = (weft__xreq){.peer = from, .buf = rb[from], .len = rl[from]};
        w[m] = &req[m];
        at[from] = m;
        e = weft__comm_post(c, &req[m++], d);
    }
    for (uint32_t k = 1; k < n && !e; k++) {
        uint32_t to = (me + k) % n;
        if (!sl[to])
            continue;
        req[m] = (weft__xreq){
            .peer = to, .is_send = true, .buf = (unsigned char *)sb[to], .len = sl[to]};
        w[m] = &req[m];
        e = weft__comm_post(c, &req[m++], d);
    }
    /* Each message in rank order as soon as it is in, the transports
     * moving the others meanwhile; after a callback's error, still every
     * request to its end (the caller frees the buffers). */
    weft_err ce = WEFT_OK;
    for (uint32_t j = 0; each && j < n && !e && !ce; j++) {
        if (j != me && at[j] != UINT32_MAX)
            e = weft__comm_wait(c, &w[at[j]], 1, d);
        if (!e)
            ce = each(arg, j, d);
    }
    if (!e)
        e = weft__comm_wait(c, w, m, d);
    if (!e)
        e = ce;
free_reqs:
    weft__free(at);
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
    e = weft__sparse_post_all(c, sb, len, rb, len, NULL, NULL, d);
free_arrays:
    weft__free(len);
    weft__free(rb);
    weft__free(sb);
    return e;
}
