/* The event queue of a Chakra run (work/chakra_int.h): node ends ordered by
 * (time, order pushed) on base/evheap.h, and the spans each rank's streams
 * record. File order: chakra_queue < chakra_jobs < chakra_run. */
#include "base/alloc.h"
#include "work/chakra_int.h"

/* The event queue: base/evheap.h over event ids, which are reused once
 * popped; evr holds each id's (rank, node). Pushes get increasing sequence
 * numbers, so equal times pop in the order pushed. */
weft_err weft__ck_push_ev(run *R, double t, uint32_t rank, uint32_t node)
{
    uint32_t id;
    if (R->nevfree) {
        id = R->evfree[--R->nevfree];
    } else {
        if (R->nev == UINT32_MAX)
            return weft_diag_set(R->d, WEFT_ELIMIT, "more than 2^32 pending events");
        id = R->nev;
        if (weft__grow((void **)&R->evr, &R->capevr, 2 * ((size_t)id + 1), sizeof *R->evr) ||
            weft__grow((void **)&R->evfree, &R->capevfree, (size_t)id + 1, sizeof *R->evfree) ||
            (id >= R->q.cap &&
             weft__evheap_reserve(&R->q,
                                  R->q.cap > UINT32_MAX / 2 ? UINT32_MAX : 2 * R->q.cap + 64)))
            return weft_diag_code(R->d, WEFT_ENOMEM);
        R->nev++;
    }
    R->evr[2 * (size_t)id] = rank;
    R->evr[2 * (size_t)id + 1] = node;
    weft__evheap_set(&R->q, id, t);
    return WEFT_OK;
}

/* Node i of rank r (a communication node) ends at t: an event, unless one
 * is already due then. An event whose time is no longer the node's due
 * time (its job was simulated again with others) is skipped. */
weft_err weft__ck_sched(run *R, double t, uint32_t r, uint32_t i)
{
    double *due = &R->rs[r].due[i];
    if (*due == t)
        return WEFT_OK;
    *due = t;
    return weft__ck_push_ev(R, t, r, i);
}

ev weft__ck_pop_ev(run *R)
{
    double t = weft__evheap_top(&R->q)->t;
    uint32_t id = weft__evheap_pop(&R->q);
    R->evfree[R->nevfree++] = id; /* room: one entry per id handed out */
    return (ev){t, R->evr[2 * (size_t)id], R->evr[2 * (size_t)id + 1]};
}

weft_err weft__ck_add_span(run *R, span **s, size_t *n, size_t *cap, double t0, double t1,
                           uint32_t node)
{
    if (weft__grow((void **)s, cap, *n + 1, sizeof **s))
        return weft_diag_code(R->d, WEFT_ENOMEM);
    (*s)[(*n)++] = (span){t0, t1, node};
    return WEFT_OK;
}

/* The group of a collective of process group pg ("" or "0": every rank). */
