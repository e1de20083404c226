/* Marking a communicator busy while a public collective runs (the count in
 * struct weft_comm's coll_depth), so that the checkpoint helper thread of
 * another communicator (ckpt_send.c) sends between collectives. Relaxed
 * order: the mark is a hint for scheduling, never for correctness. */
#ifndef WEFT_RUN_COLL_BUSY_H
#define WEFT_RUN_COLL_BUSY_H

#include "run/comm_internal.h"

static inline void weft__coll_enter(weft_comm *c)
{
    atomic_fetch_add_explicit(&c->coll_depth, 1, memory_order_relaxed);
}

static inline weft_err weft__coll_leave(weft_comm *c, weft_err e)
{
    atomic_fetch_sub_explicit(&c->coll_depth, 1, memory_order_relaxed);
    return e;
}

static inline bool weft__coll_busy(weft_comm *c)
{
    return atomic_load_explicit(&c->coll_depth, memory_order_relaxed) != 0;
}

#endif
