/* A streaming simulator for rings of independent servers. See
 * ring_fast.h. */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "base/evheap.h"
#include "sim/ring_fast.h"

/* An in-flight flow. */
typedef struct slot {
    uint64_t k;    /* step */
    uint32_t s, c; /* slice, class */
    uint32_t next; /* next in its server's FIFO, or the free list */
    uint8_t state; /* S_WAIT (starts at its event), S_SERVE, S_TAIL */
    double tag;    /* virtual time at which it is drained */
} slot;

enum { S_WAIT, S_SERVE, S_TAIL };
#define NIL UINT32_MAX

typedef struct server {
    uint32_t head, tail, n;
    double v;     /* bytes served per flow since the start */
    double t_upd; /* when v was last brought up to date */
    double busy;  /* time with at least one flow */
} server;

typedef struct fast {
    const sim_ring_fast_in *in;
    server *srv;
    slot *sl;
    uint32_t n_sl, cap_sl, free_sl;
    uint64_t *started, *done; /* per (class, slice): steps started / done */
    uint32_t *succ_off, *succ;
    weft__evheap heap; /* ids 0 .. nf-1: servers (next drain); nf + i: slot i */
    uint64_t events, flows;
    double makespan;
} fast;

static void advance(fast *f, uint32_t c, double t)
{
    server *v = &f->srv[c];
    if (v->n) {
        v->v += (t - v->t_upd) * f->in->rate[c] / v->n;
        v->busy += t - v->t_upd;
    }
    v->t_upd = t;
}

/* Schedules the drain of c's head flow. */
static void resched(fast *f, uint32_t c, double t)
{
    server *v = &f->srv[c];
    if (!v->n) {
        if (weft__evheap_contains(&f->heap, c))
            weft__evheap_remove(&f->heap, c);
        return;
    }
    double left = f->sl[v->head].tag - v->v;
    weft__evheap_set(&f->heap, c, t + (left > 0 ? left * v->n / f->in->rate[c] : 0));
}

static weft_err new_slot(fast *f, uint32_t *out)
{
    if (f->free_sl != NIL) {
        *out = f->free_sl;
        f->free_sl = f->sl[*out].next;
        return WEFT_OK;
    }
    if (f->n_sl == f->cap_sl) {
        size_t cap = f->cap_sl * 2;
        slot *s = weft__realloc_array(f->sl, cap, sizeof *s);
        if (!s)
            return WEFT_ENOMEM;
        f->sl = s;
        /* The heap's id space must cover every slot. */
        weft_err err = weft__evheap_reserve(&f->heap, f->in->nf + (uint32_t)cap);
        if (err)
            return err;
        f->cap_sl = (uint32_t)cap;
    }
    *out = f->n_sl++;
    return WEFT_OK;
}

/* Slot i starts at time t: it joins its server's FIFO. */
static void join(fast *f, uint32_t i, double t)
{
    slot *x = &f->sl[i];
    uint32_t c = x->c;
    server *v = &f->srv[c];
    advance(f, c, t);
    x->state = S_SERVE;
    x->tag = v->v + f->in->bytes;
    x->next = NIL;
    if (v->n)
        f->sl[v->tail].next = i;
    else
        v->head = i;
    v->tail = i;
    v->n++;
    resched(f, c, t);
}

/* Starts every flow of (class c, slice s) that is ready at time t (its
 * dependencies done), in step order: it begins alpha later. */
static weft_err try_start(fast *f, uint32_t c, uint32_t s, double t)
{
    const sim_ring_fast_in *in = f->in;
    size_t at = (size_t)c * in->slices + s;
    for (;;) {
        uint64_t k = f->started[at];
        if (k == in->steps)
            return WEFT_OK;
        if (k > 0 && f->done[(size_t)in->pred[c] * in->slices + s] < k)
            return WEFT_OK;
        if (s > 0 && f->done[at - 1] < k + 1)
            return WEFT_OK;
        uint32_t i;
        weft_err err = new_slot(f, &i);
        if (err)
            return err;
        f->sl[i] = (slot){k, s, c, NIL, S_WAIT, 0};
        f->started[at]++;
        f->flows++;
        /* Without alpha the start is now: joining at once is the same
         * processor-sharing state as joining through the heap at time t
         * (only the order of events at one instant differs), and saves
         * two heap operations. */
        if (in->alpha == 0) {
            f->events++;
            join(f, i, t);
        } else {
            weft__evheap_set(&f->heap, in->nf + i, t + in->alpha);
        }
    }
}

static weft_err on_done(fast *f, uint32_t i, double t)
{
    slot x = f->sl[i];
    f->sl[i].next = f->free_sl;
    f->free_sl = i;
    if (t > f->makespan)
        f->makespan = t;
    const sim_ring_fast_in *in = f->in;
    f->done[(size_t)x.c * in->slices + x.s]++;
    weft_err err;
    for (uint32_t j = f->succ_off[x.c]; j < f->succ_off[x.c + 1]; j++)
        if ((err = try_start(f, f->succ[j], x.s, t)))
            return err;
    if (x.s + 1 < in->slices && (err = try_start(f, x.c, x.s + 1, t)))
        return err;
    return WEFT_OK;
}

static weft_err run(fast *f)
{
    const sim_ring_fast_in *in = f->in;
    uint32_t nf = in->nf;
    weft_err err;
    for (uint32_t c = 0; c < nf; c++)
        if ((err = try_start(f, c, 0, 0)))
            return err;
    while (f->heap.n) {
        double t = weft__evheap_top(&f->heap)->t;
        uint32_t id = weft__evheap_pop(&f->heap);
        f->events++;
        if (id < nf) {
            /* The head of server id is drained. */
            server *v = &f->srv[id];
            advance(f, id, t);
            uint32_t i = v->head;
            v->v = f->sl[i].tag;
            v->head = f->sl[i].next;
            if (--v->n == 0)
                v->tail = NIL;
            resched(f, id, t);
            f->sl[i].state = S_TAIL;
            if (in->lat[id] == 0) {
                /* Done now; see try_start. */
                f->events++;
                if ((err = on_done(f, i, t)))
                    return err;
            } else {
                weft__evheap_set(&f->heap, nf + i, t + in->lat[id]);
            }
            continue;
        }
        uint32_t i = id - nf;
        slot *x = &f->sl[i];
        if (x->state == S_TAIL) {
            if ((err = on_done(f, i, t)))
                return err;
            continue;
        }
        join(f, i, t);
    }
    return WEFT_OK;
}

weft_err sim_ring_fast_run(const sim_ring_fast_in *in, sim_ring_fast_out *out)
{
    fast f;
    memset(&f, 0, sizeof f);
    f.in = in;
    uint32_t nf = in->nf;
    size_t cells = (size_t)nf * in->slices;
    weft_err err = WEFT_ENOMEM;
    f.srv = weft__calloc(nf, sizeof *f.srv);
    f.cap_sl = nf * 2 > 64 ? nf * 2 : 64;
    f.sl = weft__malloc(f.cap_sl * sizeof *f.sl);
    f.started = weft__calloc(cells, sizeof *f.started);
    f.done = weft__calloc(cells, sizeof *f.done);
    f.succ_off = weft__calloc((size_t)nf + 1, sizeof *f.succ_off);
    f.succ = weft__malloc(nf * sizeof *f.succ);
    if (!f.srv || !f.sl || !f.started || !f.done || !f.succ_off || !f.succ)
        goto free_all;
    if ((err = weft__evheap_init(&f.heap, nf + f.cap_sl)))
        goto free_all;
    f.free_sl = NIL;
    for (uint32_t c = 0; c < nf; c++) {
        f.srv[c].head = f.srv[c].tail = NIL;
        f.succ_off[in->pred[c] + 1]++;
    }
    for (uint32_t c = 0; c < nf; c++)
        f.succ_off[c + 1] += f.succ_off[c];
    {
        uint32_t *pos = weft__malloc(((size_t)nf + 1) * sizeof *pos);
        if (!pos)
            goto free_all;
        memcpy(pos, f.succ_off, ((size_t)nf + 1) * sizeof *pos);
        for (uint32_t c = 0; c < nf; c++)
            f.succ[pos[in->pred[c]]++] = c;
        weft__free(pos);
    }
    if ((err = run(&f)))
        goto free_all;
    uint64_t want = in->steps * in->slices;
    for (size_t i = 0; i < cells; i++)
        if (f.done[i] != in->steps) {
            err = WEFT_EVERIFY;
            goto free_all;
        }
    double worst = 0;
    for (uint32_t c = 0; c < nf; c++) {
        double x = (double)want * in->bytes, y = f.srv[c].busy * in->rate[c];
        double e = x == 0 ? fabs(y) : fabs(x - y) / x;
        if (e > worst)
            worst = e;
    }
    out->makespan_s = f.makespan;
    out->flows = f.flows;
    out->events = f.events;
    out->conservation_err = worst;
    err = WEFT_OK;
free_all:
    weft__free(f.srv);
    weft__free(f.sl);
    weft__free(f.started);
    weft__free(f.done);
    weft__free(f.succ_off);
    weft__free(f.succ);
    weft__evheap_fini(&f.heap);
    return err;
}
