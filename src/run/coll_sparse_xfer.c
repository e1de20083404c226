/* The transfers of the sparse and quantized all-reduces (coll_sparse.h):
 * every peer's message posted at once on the transports, with a callback
 * per message in rank order as it arrives, and the small allgather of
 * words their headers ride on. */
#include <string.h>

#include "base/alloc.h"
#include "run/coll_sparse.h"
#include "run/p2p.h"

weft_err weft__sparse_posts_init(weft__sparse_posts *p, uint32_t size, weft_diag *d)
{
    p->m = 0;
    p->req = weft__malloc(4 * (size_t)size * sizeof *p->req);
    p->w = weft__malloc(4 * (size_t)size * sizeof *p->w);
    p->at = weft__malloc((size_t)size * sizeof *p->at);
    if (!p->req || !p->w || !p->at) {
        weft__sparse_posts_free(p);
        return weft_diag_code(d, WEFT_ENOMEM);
    }
    for (uint32_t j = 0; j < size; j++)
        p->at[j] = UINT32_MAX;
    return WEFT_OK;
}

void weft__sparse_posts_free(weft__sparse_posts *p)
{
    weft__free(p->at);
    weft__free(p->w);
    weft__free(p->req);
    p->at = NULL, p->w = NULL, p->req = NULL;
}

/* Receives first, in the order of the pairwise steps (from me - k), then
 * the sends (to me + k), so that early steps' peers go first. */
weft_err weft__sparse_post_recvs(weft_comm *c, weft__sparse_posts *p, unsigned char *const *rb,
                                 const size_t *rl, weft_diag *d)
{
    uint32_t n = c->size, me = c->rank;
    weft_err e = WEFT_OK;
    for (uint32_t k = 1; k < n && !e; k++) {
        uint32_t from = (me + n - k) % n;
        p->at[from] = UINT32_MAX;
        if (!rl[from])
            continue;
        p->req[p->m] = (weft__xreq){.peer = from, .buf = rb[from], .len = rl[from]};
        p->w[p->m] = &p->req[p->m];
        p->at[from] = p->m;
        e = weft__comm_post(c, &p->req[p->m++], d);
    }
    return e;
}

weft_err weft__sparse_post_sends(weft_comm *c, weft__sparse_posts *p,
                                 const unsigned char *const *sb, const size_t *sl, weft_diag *d)
{
    uint32_t n = c->size, me = c->rank;
    weft_err e = WEFT_OK;
    for (uint32_t k = 1; k < n && !e; k++) {
        uint32_t to = (me + k) % n;
        if (!sl[to])
            continue;
        p->req[p->m] = (weft__xreq){
            .peer = to, .is_send = true, .buf = (unsigned char *)sb[to], .len = sl[to]};
        p->w[p->m] = &p->req[p->m];
        e = weft__comm_post(c, &p->req[p->m++], d);
    }
    return e;
}

weft_err weft__sparse_wait_recvs(weft_comm *c, weft__sparse_posts *p, weft_diag *d)
{
    weft_err e = WEFT_OK;
    for (uint32_t j = 0; j < c->size && !e; j++)
        if (p->at[j] != UINT32_MAX)
            e = weft__comm_wait(c, &p->w[p->at[j]], 1, d);
    return e;
}

/* Each message in rank order as soon as it is in, the transports moving
 * the others meanwhile; after a callback's error, still every request to
 * its end (the caller frees the buffers). The transports move what they
 * can at once before any callback: posting only queues a request, so a
 * callback that runs first (this rank's own message: rank 0's in rank
 * order, every rank's with own_first) would otherwise hold back every
 * send of this rank for its time. */
weft_err weft__sparse_posts_finish(weft_comm *c, weft__sparse_posts *p, weft__sparse_each each,
                                   void *arg, bool own_first, weft_diag *d)
{
    uint32_t n = c->size, me = c->rank;
    weft_err e = weft__comm_kick(c, d), ce = WEFT_OK;
    if (!e && each && own_first)
        ce = each(arg, me, d);
    for (uint32_t j = 0; each && j < n && !e && !ce; j++) {
        if (own_first && j == me)
            continue;
        if (j != me && p->at[j] != UINT32_MAX)
            e = weft__comm_wait(c, &p->w[p->at[j]], 1, d);
        if (!e)
            ce = each(arg, j, d);
    }
    if (!e)
        e = weft__comm_wait(c, p->w, p->m, d);
    weft__sparse_posts_free(p);
    return e ? e : ce;
}

weft_err weft__sparse_post_all(weft_comm *c, const unsigned char *const *sb, const size_t *sl,
                               unsigned char *const *rb, const size_t *rl, weft__sparse_each each,
                               void *arg, bool own_first, weft_diag *d)
{
    weft__sparse_posts p;
    weft_err e = weft__sparse_posts_init(&p, c->size, d);
    if (e)
        return e;
    if (!(e = weft__sparse_post_recvs(c, &p, rb, rl, d)))
        e = weft__sparse_post_sends(c, &p, sb, sl, d);
    if (e) {
        weft__sparse_posts_free(&p);
        return e;
    }
    return weft__sparse_posts_finish(c, &p, each, arg, own_first, d);
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
    e = weft__sparse_post_all(c, sb, len, rb, len, NULL, NULL, false, d);
free_arrays:
    weft__free(len);
    weft__free(rb);
    weft__free(sb);
    return e;
}
