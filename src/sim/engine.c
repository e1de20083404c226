/* The flow-level engine. See engine.h for the model and its guarantees. */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "sim/engine.h"
#include "sim/heap.h"

enum { F_IDLE, F_WAIT, F_ACTIVE, F_TAIL, F_DONE };

/* Remaining bytes below this fraction of a flow's size count as drained;
 * saturation below this fraction of a link's capacity counts as full. */
#define EPS 1e-12

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
                      e->comp_flows.v};
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

/* Max-min fair rates for the components touching the seed links, by
 * progressive filling; reschedules the drain of every flow whose rate
 * changed. */
static weft_err refill(sim_engine *e, double t)
{
    uint64_t ep = ++e->epoch;
    e->comp_links.n = e->comp_flows.n = 0;
    for (size_t i = 0; i < e->seeds.n; i++) {
        uint32_t l = e->seeds.v[i];
        if (e->lstamp[l] != ep) {
            e->lstamp[l] = ep;
            if (vec_push(&e->comp_links, l))
                return WEFT_ENOMEM;
        }
    }
    e->seeds.n = 0;
    for (size_t i = 0; i < e->comp_links.n; i++) {
        uint32_t l = e->comp_links.v[i];
        for (size_t j = 0; j < e->lflows[l].n; j++) {
            uint32_t f = e->lflows[l].v[j];
            if (e->f_stamp[f] == ep)
                continue;
            e->f_stamp[f] = ep;
            if (vec_push(&e->comp_flows, f))
                return WEFT_ENOMEM;
            uint32_t r = e->f_route[f];
            for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++) {
                uint32_t l2 = e->r_link.v[k];
                if (e->lstamp[l2] != ep) {
                    e->lstamp[l2] = ep;
                    if (vec_push(&e->comp_links, l2))
                        return WEFT_ENOMEM;
                }
            }
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

weft_err sim_engine_run(sim_engine *e, double alpha_s, weft_diag *d)
{
    if (e->ran || !(alpha_s >= 0))
        return weft_diag_set(d, WEFT_EINVAL, "sim: engine already ran or bad alpha");
    e->ran = true;
    weft_err err;
    if ((err = build_succ(e)) || (err = sim_heap_init(&e->heap, e->n_flows)) ||
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
            uint32_t r = e->f_route[f];
            e->st.events++;
            switch (e->f_state[f]) {
            case F_WAIT:
                e->f_start[f] = t;
                if (e->r_off[r] == e->r_off[r + 1] || e->f_bytes[f] == 0) {
                    e->f_rem[f] = 0;
                    e->f_drain[f] = t;
                    e->f_state[f] = F_TAIL;
                    sim_heap_set(&e->heap, f, t + e->r_lat[r]);
                } else if ((err = activate(e, f, t))) {
                    return weft_diag_code(d, err);
                }
                break;
            case F_ACTIVE:
                advance(e, f, t);
                for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++)
                    e->carried[e->r_link.v[k]] += e->r_coef[k] * e->f_rem[f];
                e->f_rem[f] = 0;
                if ((err = deactivate(e, f)))
                    return weft_diag_code(d, err);
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
                for (uint32_t i = e->succ_off[f]; i < e->succ_off[f + 1]; i++) {
                    uint32_t g = e->succ[i];
                    if (--e->f_left[g] == 0) {
                        e->f_state[g] = F_WAIT;
                        sim_heap_set(&e->heap, g, t + alpha_s);
                    }
                }
                break;
            default:
                break;
            }
        }
        if ((err = refill(e, t)))
            return weft_diag_code(d, err);
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
