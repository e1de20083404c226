/* The flow-level engine. See engine.h for the model and its guarantees. */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "sim/engine.h"
#include "sim/heap.h"

/* F_HOLD: drained, waiting for a cut-through dep to be done (it cannot
 * finish before the data it forwards has arrived). */
enum { F_IDLE, F_WAIT, F_ACTIVE, F_HOLD, F_TAIL, F_DONE };

/* Remaining bytes below this fraction of a flow's size count as drained;
 * saturation below this fraction of a link's capacity counts as full. */
#define EPS 1e-12
/* A forwarder within this fraction of its bytes of a dep's sent bytes has
 * caught up with it (rounding of two separately integrated rates). */
#define CT_TOL 1e-9
/* Rates of a forwarder and its dep within this relative difference are
 * equal: two filling levels that are equal in exact arithmetic may differ
 * in the last bits, and that must neither uncouple a forwarder nor make it
 * catch up. */
#define CT_RATE_TOL 1e-12
/* Couple-and-refill rounds at one event time, at most. */
#define CT_ROUNDS 1000

typedef struct vec32 {
    uint32_t *v;
    size_t n, cap;
} vec32;

struct sim_engine {
    uint32_t n_links;
    double *cap, *lmult;
    double *expect, *carried; /* per link: coefficient x bytes, and integrated */
    vec32 *lflows;            /* active flows on each link */
    double *resid, *wsum;     /* water-filling scratch */
    uint32_t *ucount;         /* unfrozen flows on a link while filling */
    uint64_t *lstamp;

    /* Routes in CSR form. */
    uint32_t n_routes;
    size_t route_cap;
    uint32_t *r_off; /* n_routes + 1 */
    double *r_lat;
    vec32 r_link;
    double *r_coef;
    size_t r_coef_cap;

    /* Flows. */
    uint32_t n_flows;
    size_t flow_cap;
    uint32_t *f_route;
    double *f_bytes, *f_mult, *f_rem, *f_rate, *f_new, *f_upd, *f_rate0;
    double *f_start, *f_drain, *f_done;
    uint8_t *f_state, *f_frozen;
    uint64_t *f_stamp;
    size_t *f_slot;     /* offset of the flow's positions in `slot` */
    size_t n_slots;
    uint32_t *slot;     /* slot[f_slot[f] + k]: index of f in the list of its k-th link */
    uint32_t *f_left;   /* dependencies not yet done */
    vec32 dep_f, dep_on; /* dependency pairs, later turned into CSR */
    uint32_t *succ_off, *succ;

    /* Cut-through edges, edge i: forwarder ct_f.v[i] cut through on dep
     * ct_on.v[i]. ctd lists a forwarder's edges, cts a dep's (CSR). Only
     * allocated when there are edges, so store-and-forward runs pay
     * nothing. */
    vec32 ct_f, ct_on;
    uint32_t *ctd_off, *ctd, *cts_off, *cts;
    uint8_t *ct_cu;      /* per edge: the forwarder has caught up with the dep */
    uint32_t *f_ctleft;  /* per flow: cut-through deps not yet done */
    double *f_ready;     /* per flow: latest release condition so far */
    uint8_t *f_dirty;    /* per flow: queued in ct_dirty */
    vec32 ct_dirty, ct_stack;

    /* Queue edges (sim_engine_add_queue_dep), pair i: q_f.v[i] waits for
     * q_on.v[i] to drain. q_next (per flow: the one flow queued behind
     * it, UINT32_MAX for none), f_nb (per flow: latest drain it waited
     * for) and f_rel (per flow: latest ordinary release) exist only when
     * there are such edges. */
    vec32 q_f, q_on;
    uint32_t *q_next;
    double *f_nb, *f_rel;

    sim_heap heap;
    sim_heap fill; /* links by saturation level while filling */
    uint64_t epoch;
    vec32 seeds, comp_links, comp_flows;
    bool ran;
    uint32_t stuck; /* a flow that never became ready, after a failed run */
    sim_engine_stats st;
};

static weft_err vec_push(vec32 *v, uint32_t x)
{
    if (weft__grow((void **)&v->v, &v->cap, v->n + 1, sizeof *v->v))
        return WEFT_ENOMEM;
    v->v[v->n++] = x;
    return WEFT_OK;
}

weft_err sim_engine_new(uint32_t n_links, const double *cap, const double *mult,
                        sim_engine **out)
{
    sim_engine *e = weft__calloc(1, sizeof *e);
    if (!e)
        return WEFT_ENOMEM;
    size_t n = n_links ? n_links : 1;
    e->n_links = n_links;
    e->cap = weft__malloc(n * sizeof *e->cap);
    e->lmult = weft__malloc(n * sizeof *e->lmult);
    e->expect = weft__calloc(n, sizeof *e->expect);
    e->carried = weft__calloc(n, sizeof *e->carried);
    e->lflows = weft__calloc(n, sizeof *e->lflows);
    e->resid = weft__malloc(n * sizeof *e->resid);
    e->wsum = weft__malloc(n * sizeof *e->wsum);
    e->ucount = weft__malloc(n * sizeof *e->ucount);
    e->lstamp = weft__calloc(n, sizeof *e->lstamp);
    e->r_off = weft__calloc(1, sizeof *e->r_off);
    e->route_cap = 1;
    if (!e->cap || !e->lmult || !e->expect || !e->carried || !e->lflows || !e->resid ||
        !e->wsum || !e->ucount || !e->lstamp || !e->r_off) {
        sim_engine_free(e);
        return WEFT_ENOMEM;
    }
    for (uint32_t i = 0; i < n_links; i++) {
        e->cap[i] = cap[i];
        e->lmult[i] = mult ? mult[i] : 1.0;
    }
    *out = e;
    return WEFT_OK;
}

void sim_engine_free(sim_engine *e)
{
    if (!e)
        return;
    if (e->lflows)
        for (uint32_t i = 0; i < e->n_links; i++)
            weft__free(e->lflows[i].v);
    void *arrays[] = {e->cap,     e->lmult,   e->expect,  e->carried,  e->lflows,  e->resid,
                      e->wsum,    e->ucount,  e->lstamp,  e->r_off,    e->r_lat,   e->r_link.v,
                      e->r_coef,  e->f_route, e->f_bytes, e->f_mult,   e->f_rem,   e->f_rate,
                      e->f_new,   e->f_upd,   e->f_rate0, e->f_start,  e->f_drain, e->f_done,
                      e->f_state, e->f_frozen, e->f_stamp, e->f_slot,  e->slot,    e->f_left,
                      e->dep_f.v, e->dep_on.v, e->succ_off, e->succ,   e->seeds.v, e->comp_links.v,
                      e->comp_flows.v, e->ct_f.v, e->ct_on.v, e->ctd_off, e->ctd, e->cts_off,
                      e->cts,      e->ct_cu,  e->f_ctleft, e->f_ready, e->f_dirty, e->ct_dirty.v,
                      e->ct_stack.v, e->q_f.v, e->q_on.v, e->q_next, e->f_nb, e->f_rel};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        weft__free(arrays[i]);
    sim_heap_fini(&e->heap);
    sim_heap_fini(&e->fill);
    weft__free(e);
}

weft_err sim_engine_add_route(sim_engine *e, uint32_t n, const uint32_t *link, const double *coef,
                              double lat_s, uint32_t *route_id)
{
    if (!(lat_s >= 0) || e->n_routes == UINT32_MAX - 1)
        return WEFT_EINVAL;
    for (uint32_t i = 0; i < n; i++) {
        if (link[i] >= e->n_links || !(coef[i] > 0))
            return WEFT_EINVAL;
        for (uint32_t j = 0; j < i; j++)
            if (link[j] == link[i])
                return WEFT_EINVAL;
    }
    size_t need = e->n_routes + 2;
    if (need > e->route_cap) {
        size_t cap = e->route_cap * 2 > need ? e->route_cap * 2 : need;
        uint32_t *off = weft__realloc_array(e->r_off, cap, sizeof *off);
        if (!off)
            return WEFT_ENOMEM;
        e->r_off = off;
        double *lat = weft__realloc_array(e->r_lat, cap, sizeof *lat);
        if (!lat)
            return WEFT_ENOMEM;
        e->r_lat = lat;
        e->route_cap = cap;
    }
    size_t base = e->r_link.n;
    if (base + n > UINT32_MAX)
        return WEFT_ELIMIT;
    if (weft__grow((void **)&e->r_link.v, &e->r_link.cap, base + n + 1, sizeof(uint32_t)) ||
        weft__grow((void **)&e->r_coef, &e->r_coef_cap, base + n + 1, sizeof(double)))
        return WEFT_ENOMEM;
    if (n) {
        memcpy(e->r_link.v + base, link, n * sizeof *link);
        memcpy(e->r_coef + base, coef, n * sizeof *coef);
    }
    e->r_link.n = base + n;
    e->r_lat[e->n_routes] = lat_s;
    e->r_off[e->n_routes + 1] = (uint32_t)(base + n);
    *route_id = e->n_routes++;
    return WEFT_OK;
}

/* Resizes one per-flow array to cap elements; false on failure (the old
 * block stays valid). */
static bool resize(void *field, size_t cap, size_t elem)
{
    void **pp = field;
    void *p = weft__realloc_array(*pp, cap, elem);
    if (!p)
        return false;
    *pp = p;
    return true;
}

static weft_err grow_flows(sim_engine *e)
{
    size_t cap = e->flow_cap ? e->flow_cap * 2 : 64;
    bool ok = resize(&e->f_route, cap, sizeof *e->f_route) &&
              resize(&e->f_bytes, cap, sizeof *e->f_bytes) &&
              resize(&e->f_mult, cap, sizeof *e->f_mult) &&
              resize(&e->f_rem, cap, sizeof *e->f_rem) &&
              resize(&e->f_rate, cap, sizeof *e->f_rate) &&
              resize(&e->f_new, cap, sizeof *e->f_new) &&
              resize(&e->f_upd, cap, sizeof *e->f_upd) &&
              resize(&e->f_rate0, cap, sizeof *e->f_rate0) &&
              resize(&e->f_start, cap, sizeof *e->f_start) &&
              resize(&e->f_drain, cap, sizeof *e->f_drain) &&
              resize(&e->f_done, cap, sizeof *e->f_done) &&
              resize(&e->f_state, cap, sizeof *e->f_state) &&
              resize(&e->f_frozen, cap, sizeof *e->f_frozen) &&
              resize(&e->f_stamp, cap, sizeof *e->f_stamp) &&
              resize(&e->f_slot, cap, sizeof *e->f_slot) &&
              resize(&e->f_left, cap, sizeof *e->f_left);
    if (!ok)
        return WEFT_ENOMEM;
    e->flow_cap = cap;
    return WEFT_OK;
}

weft_err sim_engine_add_flow(sim_engine *e, uint32_t route, double bytes, double mult,
                             uint32_t *flow_id)
{
    if (route >= e->n_routes || !(bytes >= 0) || !(mult > 0) || e->ran ||
        e->n_flows == UINT32_MAX - 1)
        return WEFT_EINVAL;
    if (e->n_flows == e->flow_cap && grow_flows(e))
        return WEFT_ENOMEM;
    uint32_t f = e->n_flows;
    e->f_route[f] = route;
    e->f_bytes[f] = bytes;
    e->f_mult[f] = mult;
    e->f_rem[f] = bytes;
    e->f_rate[f] = e->f_rate0[f] = 0;
    e->f_start[f] = e->f_drain[f] = e->f_done[f] = NAN;
    e->f_state[f] = F_IDLE;
    e->f_frozen[f] = 0;
    e->f_stamp[f] = 0;
    e->f_slot[f] = e->n_slots;
    e->f_left[f] = 0;
    e->n_slots += e->r_off[route + 1] - e->r_off[route];
    for (uint32_t k = e->r_off[route]; k < e->r_off[route + 1]; k++)
        e->expect[e->r_link.v[k]] += e->r_coef[k] * bytes;
    e->n_flows++;
    *flow_id = f;
    return WEFT_OK;
}

weft_err sim_engine_add_dep(sim_engine *e, uint32_t f, uint32_t dep)
{
    if (f >= e->n_flows || dep >= e->n_flows || e->ran)
        return WEFT_EINVAL;
    if (vec_push(&e->dep_f, f) || vec_push(&e->dep_on, dep))
        return WEFT_ENOMEM;
    e->f_left[f]++;
    return WEFT_OK;
}

weft_err sim_engine_add_queue_dep(sim_engine *e, uint32_t f, uint32_t dep)
{
    if (f >= e->n_flows || dep >= e->n_flows || f == dep || e->ran)
        return WEFT_EINVAL;
    if (vec_push(&e->q_f, f) || vec_push(&e->q_on, dep)) {
        e->q_f.n = e->q_on.n;
        return WEFT_ENOMEM;
    }
    e->f_left[f]++;
    return WEFT_OK;
}

weft_err sim_engine_add_ct_dep(sim_engine *e, uint32_t f, uint32_t dep)
{
    if (f >= e->n_flows || dep >= e->n_flows || e->ran || e->f_bytes[f] != e->f_bytes[dep])
        return WEFT_EINVAL;
    uint32_t r = e->f_route[f];
    if (e->r_off[r] == e->r_off[r + 1] || e->f_bytes[f] == 0)
        return sim_engine_add_dep(e, f, dep);
    if (e->ct_f.n >= UINT32_MAX - 1)
        return WEFT_ELIMIT;
    if (vec_push(&e->ct_f, f) || vec_push(&e->ct_on, dep)) {
        e->ct_f.n = e->ct_on.n; /* both hold the same pairs */
        return WEFT_ENOMEM;
    }
    e->f_left[f]++;
    return WEFT_OK;
}

/* ---- Running ------------------------------------------------------------ */

/* Integrates a flow's current rate up to time t. */
static void advance(sim_engine *e, uint32_t f, double t)
{
    double moved = e->f_rate[f] * (t - e->f_upd[f]);
    if (moved > e->f_rem[f])
        moved = e->f_rem[f];
    e->f_rem[f] -= moved;
    e->f_upd[f] = t;
    uint32_t r = e->f_route[f];
    for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++)
        e->carried[e->r_link.v[k]] += e->r_coef[k] * moved;
}

static weft_err seed_route(sim_engine *e, uint32_t f)
{
    uint32_t r = e->f_route[f];
    for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++)
        if (vec_push(&e->seeds, e->r_link.v[k]))
            return WEFT_ENOMEM;
    return WEFT_OK;
}

static weft_err activate(sim_engine *e, uint32_t f, double t)
{
    uint32_t r = e->f_route[f];
    for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++) {
        vec32 *lf = &e->lflows[e->r_link.v[k]];
        e->slot[e->f_slot[f] + (k - e->r_off[r])] = (uint32_t)lf->n;
        if (vec_push(lf, f))
            return WEFT_ENOMEM;
    }
    e->f_state[f] = F_ACTIVE;
    e->f_upd[f] = t;
    e->f_rate[f] = 0;
    return seed_route(e, f);
}

static weft_err deactivate(sim_engine *e, uint32_t f)
{
    uint32_t r = e->f_route[f];
    for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++) {
        vec32 *lf = &e->lflows[e->r_link.v[k]];
        uint32_t at = e->slot[e->f_slot[f] + (k - e->r_off[r])];
        uint32_t last = lf->v[--lf->n];
        if (last != f) {
            lf->v[at] = last;
            /* Find last's slot for this link: its route holds the link once. */
            uint32_t lr = e->f_route[last];
            for (uint32_t j = e->r_off[lr]; j < e->r_off[lr + 1]; j++)
                if (e->r_link.v[j] == e->r_link.v[k]) {
                    e->slot[e->f_slot[last] + (j - e->r_off[lr])] = at;
                    break;
                }
        }
    }
    return seed_route(e, f);
}

/* Pushes link l onto the component being discovered (once per epoch). */
static weft_err comp_add_link(sim_engine *e, uint32_t l, uint64_t ep)
{
    if (e->lstamp[l] == ep)
        return WEFT_OK;
    e->lstamp[l] = ep;
    return vec_push(&e->comp_links, l);
}

/* Adds the links of flow g (active) to the component: cut-through
 * coupling joins the components of a forwarder and the dep it has caught
 * up with, since one's rate caps the other's. */
static weft_err comp_add_route(sim_engine *e, uint32_t g, uint64_t ep)
{
    uint32_t r = e->f_route[g];
    for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++)
        if (comp_add_link(e, e->r_link.v[k], ep))
            return WEFT_ENOMEM;
    return WEFT_OK;
}

static weft_err comp_add_coupled(sim_engine *e, uint32_t f, uint64_t ep)
{
    for (uint32_t i = e->ctd_off[f]; i < e->ctd_off[f + 1]; i++) {
        uint32_t edge = e->ctd[i];
        if (e->ct_cu[edge] && comp_add_route(e, e->ct_on.v[edge], ep))
            return WEFT_ENOMEM;
    }
    for (uint32_t i = e->cts_off[f]; i < e->cts_off[f + 1]; i++) {
        uint32_t edge = e->cts[i];
        if (e->ct_cu[edge] && comp_add_route(e, e->ct_f.v[edge], ep))
            return WEFT_ENOMEM;
    }
    return WEFT_OK;
}

/* Freezes flow f at `level` during filling: its links lose its share (the
 * popped link l is out of the heap already). */
static inline void freeze_one(sim_engine *e, uint32_t f, double level, uint32_t l)
{
    e->f_frozen[f] = 1;
    e->f_new[f] = level;
    uint32_t r = e->f_route[f];
    for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++) {
        uint32_t l2 = e->r_link.v[k];
        e->resid[l2] -= e->r_coef[k] * level;
        e->wsum[l2] -= e->r_coef[k];
        e->ucount[l2]--;
        if (l2 == l)
            continue;
        if (!e->ucount[l2])
            sim_heap_remove(&e->fill, l2);
        else
            sim_heap_set(&e->fill, l2, e->resid[l2] / e->wsum[l2]);
    }
}

/* Freezes f and, transitively, every unfrozen forwarder caught up with a
 * frozen flow: a caught-up forwarder cannot outrun its dep, so it stops
 * rising when the dep does (the flow-to-flow constraint). */
static weft_err freeze_ct(sim_engine *e, uint32_t f, double level, uint32_t l)
{
    e->ct_stack.n = 0;
    if (vec_push(&e->ct_stack, f))
        return WEFT_ENOMEM;
    while (e->ct_stack.n) {
        uint32_t g = e->ct_stack.v[--e->ct_stack.n];
        if (e->f_frozen[g])
            continue;
        freeze_one(e, g, level, l);
        for (uint32_t i = e->cts_off[g]; i < e->cts_off[g + 1]; i++) {
            uint32_t edge = e->cts[i], h = e->ct_f.v[edge];
            if (e->ct_cu[edge] && !e->f_frozen[h] && vec_push(&e->ct_stack, h))
                return WEFT_ENOMEM;
        }
    }
    return WEFT_OK;
}

/* Is rate a below rate b by more than rounding? */
static inline bool slower(double a, double b)
{
    return a < b * (1 - CT_RATE_TOL);
}

/* Queues a forwarder whose catch-up time must be recomputed. */
static weft_err ct_mark(sim_engine *e, uint32_t f)
{
    if (e->f_dirty[f] || e->ctd_off[f] == e->ctd_off[f + 1])
        return WEFT_OK;
    e->f_dirty[f] = 1;
    return vec_push(&e->ct_dirty, f);
}

/* Max-min fair rates for the components touching the seed links, by
 * progressive filling; reschedules the drain of every flow whose rate
 * changed. With cut-through edges, a component also spans caught-up
 * forwarder/dep pairs, a caught-up forwarder freezes with its dep, and a
 * forwarder left slower than a dep it had caught up with falls behind. */
static weft_err refill(sim_engine *e, double t)
{
    uint64_t ep = ++e->epoch;
    bool ct = e->ct_f.n > 0;
    e->comp_links.n = e->comp_flows.n = 0;
    for (size_t i = 0; i < e->seeds.n; i++)
        if (comp_add_link(e, e->seeds.v[i], ep))
            return WEFT_ENOMEM;
    e->seeds.n = 0;
    for (size_t i = 0; i < e->comp_links.n; i++) {
        uint32_t l = e->comp_links.v[i];
        for (size_t j = 0; j < e->lflows[l].n; j++) {
            uint32_t f = e->lflows[l].v[j];
            if (e->f_stamp[f] == ep)
                continue;
            e->f_stamp[f] = ep;
            if (vec_push(&e->comp_flows, f) || comp_add_route(e, f, ep) ||
                (ct && comp_add_coupled(e, f, ep)))
                return WEFT_ENOMEM;
        }
    }
    if (!e->comp_flows.n)
        return WEFT_OK;
    e->st.refills++;
    for (size_t i = 0; i < e->comp_links.n; i++) {
        uint32_t l = e->comp_links.v[i];
        e->resid[l] = e->cap[l];
        e->wsum[l] = 0;
        e->ucount[l] = 0;
    }
    for (size_t i = 0; i < e->comp_flows.n; i++) {
        uint32_t f = e->comp_flows.v[i], r = e->f_route[f];
        e->f_frozen[f] = 0;
        for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++) {
            e->wsum[e->r_link.v[k]] += e->r_coef[k];
            e->ucount[e->r_link.v[k]]++;
        }
    }
    /* Progressive filling with the links in a heap by the level at which
     * they saturate: (capacity - load of frozen flows) / (coefficients of
     * unfrozen flows). That level only changes when a flow on the link
     * freezes, so each freeze updates the links of one route: O((links +
     * route entries) log links) per refill instead of a scan of every link
     * per round. */
    for (size_t i = 0; i < e->comp_links.n; i++) {
        uint32_t l = e->comp_links.v[i];
        if (e->ucount[l])
            sim_heap_set(&e->fill, l, e->resid[l] / e->wsum[l]);
    }
    double level = 0;
    while (e->fill.n) {
        double lam = sim_heap_top(&e->fill)->t;
        uint32_t l = sim_heap_pop(&e->fill);
        if (lam > level)
            level = lam;
        for (size_t j = 0; j < e->lflows[l].n; j++) {
            uint32_t f = e->lflows[l].v[j];
            if (e->f_frozen[f])
                continue;
            if (!ct)
                freeze_one(e, f, level, l);
            else if (freeze_ct(e, f, level, l))
                return WEFT_ENOMEM;
        }
    }
    if (ct)
        for (size_t i = 0; i < e->comp_flows.n; i++) {
            uint32_t f = e->comp_flows.v[i];
            for (uint32_t k = e->ctd_off[f]; k < e->ctd_off[f + 1]; k++) {
                uint32_t edge = e->ctd[k];
                if (e->ct_cu[edge] && slower(e->f_new[f], e->f_new[e->ct_on.v[edge]])) {
                    e->ct_cu[edge] = 0; /* limited elsewhere: it falls behind */
                    if (ct_mark(e, f))
                        return WEFT_ENOMEM;
                }
            }
        }
    for (size_t i = 0; i < e->comp_flows.n; i++) {
        uint32_t f = e->comp_flows.v[i];
        double nr = e->f_new[f];
        if (nr == e->f_rate[f] && sim_heap_contains(&e->heap, f))
            continue;
        advance(e, f, t);
        if (e->f_rate[f] == 0 && e->f_rate0[f] == 0)
            e->f_rate0[f] = nr;
        e->f_rate[f] = nr;
        double left = e->f_rem[f];
        double when = left <= EPS * e->f_bytes[f] ? t : t + left / nr;
        sim_heap_set(&e->heap, f, when);
        if (ct) {
            /* Its catch-up times, and those of forwarders behind it, move. */
            if (ct_mark(e, f))
                return WEFT_ENOMEM;
            for (uint32_t k = e->cts_off[f]; k < e->cts_off[f + 1]; k++) {
                uint32_t edge = e->cts[k];
                if (!e->ct_cu[edge] && e->f_state[e->ct_f.v[edge]] == F_ACTIVE &&
                    ct_mark(e, e->ct_f.v[edge]))
                    return WEFT_ENOMEM;
            }
        }
    }
    return WEFT_OK;
}

/* Sets the catch-up event of every queued forwarder: the earliest time its
 * sent bytes reach those of an active dep it is behind and faster than
 * (before that dep drains). A forwarder found caught up already is coupled
 * and its links seeded, so the caller refills again. */
static weft_err ct_update(sim_engine *e, double t)
{
    for (size_t i = 0; i < e->ct_dirty.n; i++) {
        uint32_t f = e->ct_dirty.v[i];
        e->f_dirty[f] = 0;
        uint32_t ev = e->n_flows + f;
        double best = INFINITY;
        bool coupled = false;
        if (e->f_state[f] == F_ACTIVE)
            for (uint32_t k = e->ctd_off[f]; k < e->ctd_off[f + 1]; k++) {
                uint32_t edge = e->ctd[k], c = e->ct_on.v[edge];
                double rf = e->f_rate[f], rc = e->f_rate[c];
                if (e->ct_cu[edge] || e->f_state[c] != F_ACTIVE || !slower(rc, rf))
                    continue;
                advance(e, f, t);
                advance(e, c, t);
                double gap = e->f_rem[f] - e->f_rem[c]; /* equal sizes: sent_c - sent_f */
                double when = t + gap / (rf - rc);
                if (gap <= CT_TOL * e->f_bytes[f] || when == t) {
                    e->ct_cu[edge] = 1;
                    coupled = true;
                    continue;
                }
                double drain_c = e->heap.ent[e->heap.pos[c]].t;
                if (when < drain_c && when < best)
                    best = when;
            }
        if (coupled && seed_route(e, f))
            return WEFT_ENOMEM;
        if (best < INFINITY)
            sim_heap_set(&e->heap, ev, best);
        else if (sim_heap_contains(&e->heap, ev))
            sim_heap_remove(&e->heap, ev);
    }
    e->ct_dirty.n = 0;
    return WEFT_OK;
}

/* A catch-up event of forwarder f: every dep it has reached is coupled. */
static weft_err ct_catch_up(sim_engine *e, uint32_t f, double t)
{
    if (e->f_state[f] != F_ACTIVE)
        return WEFT_OK;
    advance(e, f, t);
    for (uint32_t k = e->ctd_off[f]; k < e->ctd_off[f + 1]; k++) {
        uint32_t edge = e->ctd[k], c = e->ct_on.v[edge];
        if (e->ct_cu[edge] || e->f_state[c] != F_ACTIVE)
            continue;
        advance(e, c, t);
        if (e->f_rem[f] - e->f_rem[c] <= CT_TOL * e->f_bytes[f])
            e->ct_cu[edge] = 1;
    }
    if (seed_route(e, f))
        return WEFT_ENOMEM;
    return ct_mark(e, f);
}

/* Forwarder f starts: it has caught up with a dep that started at the same
 * instant (nothing sent yet), and is behind any other. */
static weft_err ct_start(sim_engine *e, uint32_t f, double t)
{
    for (uint32_t k = e->ctd_off[f]; k < e->ctd_off[f + 1]; k++) {
        uint32_t edge = e->ctd[k], c = e->ct_on.v[edge];
        e->ct_cu[edge] = 0;
        if (e->f_state[c] != F_ACTIVE)
            continue;
        advance(e, c, t);
        if (e->f_bytes[c] - e->f_rem[c] <= CT_TOL * e->f_bytes[c])
            e->ct_cu[edge] = 1;
    }
    return ct_mark(e, f);
}

/* Flow f drained: no forwarder is coupled to it any more (they are
 * drained too, or about to be, and now only wait for it to be done), and
 * its own couplings end. */
static weft_err ct_drained(sim_engine *e, uint32_t f)
{
    for (uint32_t k = e->ctd_off[f]; k < e->ctd_off[f + 1]; k++)
        e->ct_cu[e->ctd[k]] = 0;
    uint32_t ev = e->n_flows + f;
    if (sim_heap_contains(&e->heap, ev))
        sim_heap_remove(&e->heap, ev);
    for (uint32_t k = e->cts_off[f]; k < e->cts_off[f + 1]; k++) {
        uint32_t edge = e->cts[k], g = e->ct_f.v[edge];
        if (e->f_state[g] != F_ACTIVE)
            continue;
        if (e->ct_cu[edge]) {
            e->ct_cu[edge] = 0;
            if (seed_route(e, g))
                return WEFT_ENOMEM;
        }
        if (ct_mark(e, g))
            return WEFT_ENOMEM;
    }
    return WEFT_OK;
}

static weft_err build_succ(sim_engine *e)
{
    e->succ_off = weft__calloc((size_t)e->n_flows + 1, sizeof *e->succ_off);
    e->succ = weft__malloc((e->dep_f.n ? e->dep_f.n : 1) * sizeof *e->succ);
    if (!e->succ_off || !e->succ)
        return WEFT_ENOMEM;
    for (size_t i = 0; i < e->dep_on.n; i++)
        e->succ_off[e->dep_on.v[i] + 1]++;
    for (uint32_t f = 0; f < e->n_flows; f++)
        e->succ_off[f + 1] += e->succ_off[f];
    uint32_t *fill = weft__malloc(((size_t)e->n_flows + 1) * sizeof *fill);
    if (!fill)
        return WEFT_ENOMEM;
    memcpy(fill, e->succ_off, ((size_t)e->n_flows + 1) * sizeof *fill);
    for (size_t i = 0; i < e->dep_on.n; i++)
        e->succ[fill[e->dep_on.v[i]]++] = e->dep_f.v[i];
    weft__free(fill);
    return WEFT_OK;
}

/* Edge lists of `key` (forwarder or dep of each edge) in CSR form. */
static weft_err csr(uint32_t n_flows, const vec32 *key, uint32_t **off_out, uint32_t **list_out)
{
    uint32_t *off = weft__calloc((size_t)n_flows + 1, sizeof *off);
    uint32_t *list = weft__malloc(key->n * sizeof *list);
    uint32_t *at = weft__malloc(((size_t)n_flows + 1) * sizeof *at);
    if (!off || !list || !at) {
        weft__free(off);
        weft__free(list);
        weft__free(at);
        return WEFT_ENOMEM;
    }
    for (size_t i = 0; i < key->n; i++)
        off[key->v[i] + 1]++;
    for (uint32_t f = 0; f < n_flows; f++)
        off[f + 1] += off[f];
    memcpy(at, off, ((size_t)n_flows + 1) * sizeof *at);
    for (size_t i = 0; i < key->n; i++)
        list[at[key->v[i]]++] = (uint32_t)i;
    weft__free(at);
    *off_out = off;
    *list_out = list;
    return WEFT_OK;
}

static weft_err build_ct(sim_engine *e)
{
    if (!e->ct_f.n)
        return WEFT_OK;
    if ((uint64_t)e->n_flows * 2 >= UINT32_MAX)
        return WEFT_ELIMIT; /* catch-up events take ids n_flows + f */
    weft_err err;
    if ((err = csr(e->n_flows, &e->ct_f, &e->ctd_off, &e->ctd)) ||
        (err = csr(e->n_flows, &e->ct_on, &e->cts_off, &e->cts)))
        return err;
    e->ct_cu = weft__calloc(e->ct_f.n, sizeof *e->ct_cu);
    e->f_ctleft = weft__malloc((size_t)e->n_flows * sizeof *e->f_ctleft);
    e->f_ready = weft__calloc(e->n_flows, sizeof *e->f_ready);
    e->f_dirty = weft__calloc(e->n_flows, sizeof *e->f_dirty);
    if (!e->ct_cu || !e->f_ctleft || !e->f_ready || !e->f_dirty)
        return WEFT_ENOMEM;
    for (uint32_t f = 0; f < e->n_flows; f++)
        e->f_ctleft[f] = e->ctd_off[f + 1] - e->ctd_off[f];
    return WEFT_OK;
}

/* One release condition of g is met at time `at`; it starts alpha after
 * the last one. */
static void release(sim_engine *e, uint32_t g, double at, double alpha_s)
{
    if (e->f_ready) {
        if (at > e->f_ready[g])
            e->f_ready[g] = at;
        at = e->f_ready[g];
    }
    if (e->f_rel) {
        if (at > e->f_rel[g])
            e->f_rel[g] = at;
        at = e->f_rel[g];
    }
    if (--e->f_left[g] == 0) {
        double start = at + alpha_s;
        if (e->f_nb && e->f_nb[g] > start)
            start = e->f_nb[g];
        e->f_state[g] = F_WAIT;
        sim_heap_set(&e->heap, g, start);
    }
}

/* Flow f drained at t: the flow queued behind it may start (no alpha of
 * its own for this wait: the queue was posted already). */
static void release_queued(sim_engine *e, uint32_t f, double t, double alpha_s)
{
    uint32_t g = e->q_next ? e->q_next[f] : UINT32_MAX;
    if (g == UINT32_MAX)
        return;
    if (t > e->f_nb[g])
        e->f_nb[g] = t;
    if (--e->f_left[g] == 0) {
        double start = e->f_rel[g] + alpha_s;
        if (e->f_nb[g] > start)
            start = e->f_nb[g];
        e->f_state[g] = F_WAIT;
        sim_heap_set(&e->heap, g, start);
    }
}

static weft_err build_queue(sim_engine *e)
{
    if (!e->q_f.n)
        return WEFT_OK;
    e->q_next = weft__malloc(((size_t)e->n_flows + 1) * sizeof *e->q_next);
    e->f_nb = weft__calloc((size_t)e->n_flows + 1, sizeof *e->f_nb);
    e->f_rel = weft__calloc((size_t)e->n_flows + 1, sizeof *e->f_rel);
    if (!e->q_next || !e->f_nb || !e->f_rel)
        return WEFT_ENOMEM;
    for (uint32_t f = 0; f < e->n_flows; f++)
        e->q_next[f] = UINT32_MAX;
    for (size_t i = 0; i < e->q_f.n; i++) {
        if (e->q_next[e->q_on.v[i]] != UINT32_MAX)
            return WEFT_EINVAL; /* one flow queued behind each at most */
        e->q_next[e->q_on.v[i]] = e->q_f.v[i];
    }
    return WEFT_OK;
}

/* Flow f is done (or, from F_HOLD, released) at t: its dependents. */
static void finish(sim_engine *e, uint32_t f, double t, double alpha_s)
{
    for (uint32_t i = e->succ_off[f]; i < e->succ_off[f + 1]; i++)
        release(e, e->succ[i], t, alpha_s);
    if (!e->ct_f.n)
        return;
    for (uint32_t i = e->cts_off[f]; i < e->cts_off[f + 1]; i++) {
        uint32_t g = e->ct_f.v[e->cts[i]];
        if (--e->f_ctleft[g] == 0 && e->f_state[g] == F_HOLD) {
            e->f_drain[g] = t;
            e->f_state[g] = F_TAIL;
            sim_heap_set(&e->heap, g, t + e->r_lat[e->f_route[g]]);
        }
    }
}

weft_err sim_engine_run(sim_engine *e, double alpha_s, weft_diag *d)
{
    if (e->ran || !(alpha_s >= 0))
        return weft_diag_set(d, WEFT_EINVAL, "sim: engine already ran or bad alpha");
    e->ran = true;
    weft_err err;
    bool ct = e->ct_f.n > 0;
    if ((err = build_succ(e)) || (err = build_ct(e)) || (err = build_queue(e)) ||
        (err = sim_heap_init(&e->heap, ct ? 2 * e->n_flows : e->n_flows)) ||
        (err = sim_heap_init(&e->fill, e->n_links)))
        return weft_diag_code(d, err);
    e->slot = weft__malloc((e->n_slots ? e->n_slots : 1) * sizeof *e->slot);
    if (!e->slot)
        return weft_diag_code(d, WEFT_ENOMEM);
    for (uint32_t f = 0; f < e->n_flows; f++)
        if (!e->f_left[f]) {
            e->f_state[f] = F_WAIT;
            sim_heap_set(&e->heap, f, alpha_s);
        }
    uint32_t done = 0;
    while (e->heap.n) {
        double t = sim_heap_top(&e->heap)->t;
        e->st.batches++;
        while (e->heap.n && sim_heap_top(&e->heap)->t == t) {
            uint32_t f = sim_heap_pop(&e->heap);
            e->st.events++;
            if (f >= e->n_flows) {
                e->st.catchups++;
                if ((err = ct_catch_up(e, f - e->n_flows, t)))
                    return weft_diag_code(d, err);
                continue;
            }
            uint32_t r = e->f_route[f];
            switch (e->f_state[f]) {
            case F_WAIT:
                e->f_start[f] = t;
                /* Forwarders cut through on f start once its first byte
                 * has crossed its route. */
                if (ct)
                    for (uint32_t i = e->cts_off[f]; i < e->cts_off[f + 1]; i++)
                        release(e, e->ct_f.v[e->cts[i]], t + e->r_lat[r], alpha_s);
                if (e->r_off[r] == e->r_off[r + 1] || e->f_bytes[f] == 0) {
                    e->f_rem[f] = 0;
                    e->f_drain[f] = t;
                    e->f_state[f] = F_TAIL;
                    sim_heap_set(&e->heap, f, t + e->r_lat[r]);
                    release_queued(e, f, t, alpha_s);
                } else if ((err = activate(e, f, t)) || (ct && (err = ct_start(e, f, t)))) {
                    return weft_diag_code(d, err);
                }
                break;
            case F_ACTIVE:
                advance(e, f, t);
                for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++)
                    e->carried[e->r_link.v[k]] += e->r_coef[k] * e->f_rem[f];
                e->f_rem[f] = 0;
                if ((err = deactivate(e, f)) || (ct && (err = ct_drained(e, f))))
                    return weft_diag_code(d, err);
                release_queued(e, f, t, alpha_s);
                if (ct && e->f_ctleft[f]) {
                    e->f_state[f] = F_HOLD; /* until its last cut-through dep is done */
                    break;
                }
                e->f_drain[f] = t;
                e->f_state[f] = F_TAIL;
                sim_heap_set(&e->heap, f, t + e->r_lat[r]);
                break;
            case F_TAIL:
                e->f_done[f] = t;
                e->f_state[f] = F_DONE;
                done++;
                if (t > e->st.makespan_s)
                    e->st.makespan_s = t;
                finish(e, f, t, alpha_s);
                break;
            default:
                break;
            }
        }
        if ((err = refill(e, t)))
            return weft_diag_code(d, err);
        /* Coupling a forwarder found caught up changes its component's
         * rates: refill until none is left to couple (a round that couples
         * nothing refills nothing). Rates within CT_RATE_TOL count as
         * equal, so rounding cannot make a pair couple and uncouple in
         * turn; CT_ROUNDS bounds the work regardless. */
        for (uint32_t round = 0; ct && e->ct_dirty.n; round++) {
            if (round == CT_ROUNDS) {
                /* Never seen; bounds the work if coupling oscillated. The
                 * forwarders left are re-examined at the next event. */
                for (size_t i = 0; i < e->ct_dirty.n; i++)
                    e->f_dirty[e->ct_dirty.v[i]] = 0;
                e->ct_dirty.n = 0;
                break;
            }
            if ((err = ct_update(e, t)) || (err = refill(e, t)))
                return weft_diag_code(d, err);
        }
    }
    if (done < e->n_flows) {
        uint32_t f = 0;
        while (e->f_state[f] == F_DONE)
            f++;
        e->stuck = f;
        return weft_diag_set(d, WEFT_EVERIFY,
                             "sim: flow %u never becomes ready (a dependency cycle)", f);
    }
    double worst = 0;
    for (uint32_t l = 0; l < e->n_links; l++) {
        double x = e->expect[l], y = e->carried[l];
        double err_l = x == 0 ? fabs(y) : fabs(x - y) / x;
        if (err_l > worst)
            worst = err_l;
    }
    e->st.conservation_err = worst;
    return WEFT_OK;
}

void sim_engine_get_stats(const sim_engine *e, sim_engine_stats *out)
{
    *out = e->st;
}

uint32_t sim_engine_num_flows(const sim_engine *e)
{
    return e->n_flows;
}

void sim_engine_flow_times(const sim_engine *e, uint32_t f, double *start, double *drained,
                           double *done)
{
    *start = e->f_start[f];
    *drained = e->f_drain[f];
    *done = e->f_done[f];
}

double sim_engine_flow_rate0(const sim_engine *e, uint32_t f)
{
    return e->f_rate0[f];
}

double sim_engine_link_bytes(const sim_engine *e, uint32_t l)
{
    return e->carried[l];
}

uint32_t sim_engine_stuck_flow(const sim_engine *e)
{
    return e->stuck;
}

void sim_engine_flow_route(const sim_engine *e, uint32_t f, uint32_t *n, const uint32_t **links)
{
    uint32_t r = e->f_route[f];
    *n = e->r_off[r + 1] - e->r_off[r];
    *links = e->r_link.v + e->r_off[r];
}

double sim_engine_flow_bytes(const sim_engine *e, uint32_t f)
{
    return e->f_bytes[f];
}
