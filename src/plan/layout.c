/* Collective semantics: slot layout, initial values, postcondition. The
 * table is in weft/plan.h; this file is its only implementation. */
#include "plan/plan_layout.h"

weft_err weft__layout_init(weft__layout *l, const weft_plan *p)
{
    l->nranks = p->info.nranks;
    l->chunks = p->info.chunks;
    l->nin = p->nin;
    l->nout = p->nout;
    l->nscratch = p->info.scratch;
    l->coll = p->info.coll;
    l->root = p->info.root;
    l->inplace = p->info.inplace;
    l->traffic = p->traffic.bytes ? &p->traffic : NULL;
    uint64_t main = l->inplace ? (l->nin > l->nout ? l->nin : l->nout) : (uint64_t)l->nin + l->nout;
    uint64_t per = main + l->nscratch;
    if (per > UINT32_MAX)
        return WEFT_ELIMIT;
    l->per_rank = (uint32_t)per;
    return WEFT_OK;
}

uint32_t weft__layout_slot(const weft__layout *l, uint32_t r, weft_buf buf, uint32_t index)
{
    uint32_t main = l->inplace ? (l->nin > l->nout ? l->nin : l->nout) : l->nin + l->nout;
    switch (buf) {
    case WEFT_BUF_IN:
        if (l->inplace && l->coll == WEFT_COLL_ALLGATHER)
            return r * l->chunks + index;
        return index;
    case WEFT_BUF_OUT:
        if (!l->inplace)
            return l->nin + index;
        if (l->coll == WEFT_COLL_REDUCESCATTER)
            return r * l->chunks + index;
        return index;
    default:
        return main + index;
    }
}

uint32_t weft_plan_storage_slot(const weft_plan *p, weft_rank r, weft_buf buf, uint32_t index)
{
    weft__layout l;
    /* Cannot fail: the contract asks for a plan that passed
     * weft_plan_check_structure, which checks the same limit. */
    (void)weft__layout_init(&l, p);
    return weft__layout_slot(&l, r.v, buf, index);
}

bool weft__layout_initial(const weft__layout *l, uint32_t r, uint32_t i, uint64_t *chunk,
                          uint32_t *from)
{
    uint64_t n = l->nranks, c = l->chunks;
    *from = r;
    switch (l->coll) {
    case WEFT_COLL_ALLGATHER:
        *chunk = r * c + i;
        return true;
    case WEFT_COLL_BROADCAST:
        *chunk = i;
        return r == l->root.v;
    case WEFT_COLL_ALLTOALL:
        /* in[d*C+p] holds chunk (r*N+d)*C+p. */
        *chunk = ((uint64_t)r * n + i / c) * c + i % c;
        return true;
    default:
        *chunk = i;
        return true;
    }
}

uint64_t weft__traffic_chunk_bytes(const weft_traffic *t, uint32_t c, uint64_t chunk)
{
    uint64_t block = chunk / c, p = chunk % c;
    uint64_t b = t->bytes[block]; /* block = s*N + d, row-major as the matrix */
    return b / c + (p < b % c ? 1 : 0);
}

bool weft__layout_final(const weft__layout *l, uint32_t r, uint32_t i, uint64_t *chunk, bool *all,
                        uint32_t *from)
{
    uint64_t n = l->nranks, c = l->chunks;
    *all = false;
    *from = 0;
    switch (l->coll) {
    case WEFT_COLL_ALLGATHER:
        *chunk = i;
        *from = (uint32_t)(i / c);
        return true;
    case WEFT_COLL_REDUCESCATTER:
        *chunk = (uint64_t)r * c + i;
        *all = true;
        return true;
    case WEFT_COLL_ALLREDUCE:
        *chunk = i;
        *all = true;
        return true;
    case WEFT_COLL_BROADCAST:
        *chunk = i;
        *from = l->root.v;
        return true;
    case WEFT_COLL_REDUCE:
        *chunk = i;
        *all = true;
        return r == l->root.v;
    case WEFT_COLL_ALLTOALL:
        /* out[s*C+p] holds chunk (s*N+r)*C+p from s. */
        *from = (uint32_t)(i / c);
        *chunk = ((uint64_t)*from * n + r) * c + i % c;
        return !l->traffic || weft__traffic_chunk_bytes(l->traffic, c, *chunk) > 0;
    default:
        return false;
    }
}
