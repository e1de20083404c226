/* The flow-level engine's active flows and their max-min fair rates, by
 * progressive filling over the touched components. See engine_internal.h
 * for the file order. */
#include <math.h>
#include <string.h>

#include "sim/engine_internal.h"

/* Integrates a flow's current rate up to time t. Its links' carried bytes
 * follow as it goes, or, while refilling above (where nothing reads them
 * before the end), all at once when it drains (engine.c): a region refill
 * changes the rates of hundreds of flows at each drain. */
void sim_eng_advance(sim_engine *e, uint32_t f, double t)
{
    sim_flow *x = &e->fl[f];
    double moved = x->rate * (t - x->upd);
    if (moved > x->rem)
        moved = x->rem;
    x->rem -= moved;
    x->upd = t;
    if (e->above_on)
        return;
    uint32_t r = x->route;
    for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++)
        e->carried[e->r_link.v[k]] += e->r_coef[k] * moved;
}

weft_err sim_eng_seed_route(sim_engine *e, uint32_t f)
{
    uint32_t r = e->fl[f].route, c = sim_eng_class(e, f);
    vec32 *seeds = c ? &e->cseeds[c - 1] : &e->seeds;
    for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++)
        if (sim_eng_vec_push(seeds, e->r_link.v[k]))
            return WEFT_ENOMEM;
    return WEFT_OK;
}

/* The link lists of f's class. */
static vec32 *class_lists(sim_engine *e, uint32_t f)
{
    return e->lflows + (size_t)sim_eng_class(e, f) * e->n_links;
}

weft_err sim_eng_activate(sim_engine *e, uint32_t f, double t)
{
    uint32_t r = e->fl[f].route;
    vec32 *lists = class_lists(e, f);
    for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++) {
        vec32 *lf = &lists[e->r_link.v[k]];
        e->slot[e->f_slot[f] + (k - e->r_off[r])] = (uint32_t)lf->n;
        if (sim_eng_vec_push(lf, f))
            return WEFT_ENOMEM;
    }
    e->f_state[f] = F_ACTIVE;
    e->fl[f].upd = t;
    e->fl[f].rate = 0;
    if (e->above_on)
        e->above_full = true;
    return sim_eng_seed_route(e, f);
}

/* Flow f leaves link l's list of the flows it froze. */
static void bn_drop(sim_engine *e, uint32_t f)
{
    vec32 *b = &e->l_bn[e->fl[f].bn];
    uint32_t at = e->fl[f].bpos, last = b->v[--b->n];
    b->v[at] = last;
    e->fl[last].bpos = at;
    e->fl[f].bn = SIM_NO_LINK;
}

/* Flow f was frozen by link l (its bottleneck). */
static weft_err bn_set(sim_engine *e, uint32_t f, uint32_t l)
{
    if (e->fl[f].bn == l)
        return WEFT_OK;
    if (e->fl[f].bn != SIM_NO_LINK)
        bn_drop(e, f);
    e->fl[f].bn = l;
    e->fl[f].bpos = (uint32_t)e->l_bn[l].n;
    return sim_eng_vec_push(&e->l_bn[l], f);
}

/* A flow that drained leaves its links' loads and its bottleneck's list;
 * the next refill starts from its links (engine_rates.c, "Refilling
 * above"). */
static weft_err above_leave(sim_engine *e, uint32_t f)
{
    uint32_t r = e->fl[f].route;
    for (uint32_t k = e->rf_off[r]; k < e->rf_end[r]; k++)
        e->l_load[e->rf_link[k]] -= e->rf_coef[k] * e->fl[f].rate;
    if (e->fl[f].bn != SIM_NO_LINK)
        bn_drop(e, f);
    if (e->fl[f].lvl < e->above_lvl)
        e->above_lvl = e->fl[f].lvl;
    return sim_eng_vec_push(&e->drained, f);
}

weft_err sim_eng_deactivate(sim_engine *e, uint32_t f)
{
    if (e->above_on && above_leave(e, f))
        return WEFT_ENOMEM;
    uint32_t r = e->fl[f].route;
    vec32 *lists = class_lists(e, f);
    for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++) {
        vec32 *lf = &lists[e->r_link.v[k]];
        uint32_t at = e->slot[e->f_slot[f] + (k - e->r_off[r])];
        uint32_t last = lf->v[--lf->n];
        if (last != f) {
            lf->v[at] = last;
            /* Find last's slot for this link: its route holds the link once. */
            uint32_t lr = e->fl[last].route;
            for (uint32_t j = e->r_off[lr]; j < e->r_off[lr + 1]; j++)
                if (e->r_link.v[j] == e->r_link.v[k]) {
                    e->slot[e->f_slot[last] + (j - e->r_off[lr])] = at;
                    break;
                }
        }
    }
    return sim_eng_seed_route(e, f);
}

/* Below this fraction of its size a bucket counts as empty (rounding of
 * the token integral at the time it runs out). */
#define BUCKET_EPS 1e-9

void sim_eng_bucket_advance(sim_engine *e, uint32_t l, double t)
{
    e->b_tok[l] = sim_eng_bucket_at(e, l, t);
    e->b_upd[l] = t;
}

/* Before a refill: the tokens of the component's buckets up to t at the
 * old load, and each link's capacity from them (its peak while tokens are
 * left, its rate when they are gone). */
static void buckets_before(sim_engine *e, double t)
{
    for (size_t i = 0; i < e->comp_links.n; i++) {
        uint32_t l = e->comp_links.v[i];
        if (!(e->b_size[l] > 0))
            continue;
        sim_eng_bucket_advance(e, l, t);
        if (e->b_tok[l] <= BUCKET_EPS * e->b_size[l])
            e->b_tok[l] = 0;
        e->cap[l] = e->b_tok[l] > 0 ? e->b_peak[l] : e->b_rate[l];
    }
}

/* After a refill: each bucket's new load (its capacity less what filling
 * left over, every flow being frozen) and the time its tokens run out at
 * that load, if they do. */
static void buckets_after(sim_engine *e, double t)
{
    for (size_t i = 0; i < e->comp_links.n; i++) {
        uint32_t l = e->comp_links.v[i];
        if (!(e->b_size[l] > 0))
            continue;
        double load = e->cap[l] - e->resid[l];
        e->b_load[l] = load < 0 ? 0 : load;
        uint32_t ev = e->b_ev + l;
        double drain = e->b_load[l] - e->b_rate[l];
        if (e->b_tok[l] > 0 && drain > e->b_rate[l] * BUCKET_EPS)
            weft__evheap_set(&e->heap, ev, t + e->b_tok[l] / drain);
        else if (weft__evheap_contains(&e->heap, ev))
            weft__evheap_remove(&e->heap, ev);
    }
}

/* Pushes link l onto the component being discovered (once per epoch). */
static weft_err comp_add_link(sim_engine *e, uint32_t l, uint64_t ep)
{
    if (e->lstamp[l] == ep)
        return WEFT_OK;
    e->lstamp[l] = ep;
    return sim_eng_vec_push(&e->comp_links, l);
}

/* Adds the links of flow g (active) to the component: cut-through
 * coupling joins the components of a forwarder and the dep it has caught
 * up with, since one's rate caps the other's. */
static weft_err comp_add_route(sim_engine *e, uint32_t g, uint64_t ep)
{
    uint32_t r = e->fl[g].route;
    for (uint32_t k = e->rf_off[r], end = sim_eng_rf_end(e, r); k < end; k++)
        if (comp_add_link(e, e->rf_link[k], ep))
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

/* Lazy keys. Filling sets a link's key each time one of its flows
 * freezes, and that key mostly rises (the flow leaves at a rate at most
 * the link's level): such a key is only recorded (fz_t, fz_seq, with the
 * sequence number setting it would take) and the link stays where its
 * older, lower key put it; fill_pop sets it before the link can come out
 * on top. Every link's key in the heap stays at most its true key, so the
 * top, once its key is true, is the true least: links pop in the order
 * (and at the keys) of setting every key at once, to the bit. */
static void fill_set(sim_engine *e, uint32_t l, double key)
{
    if (e->plain) {
        weft__evheap_set(&e->fill, l, key);
        return;
    }
    uint64_t seq = weft__evheap_take_seq(&e->fill);
    if (weft__evheap_contains(&e->fill, l) && key >= weft__evheap_key(&e->fill, l)) {
        e->fz_t[l] = key;
        e->fz_seq[l] = seq;
        e->fz_stale[l] = 1;
        return;
    }
    weft__evheap_set_seq(&e->fill, l, key, seq);
    e->fz_stale[l] = 0;
}

static void fill_remove(sim_engine *e, uint32_t l)
{
    weft__evheap_remove(&e->fill, l);
    e->fz_stale[l] = 0;
}

/* Pops the link of least key, that key in *lam. */
static uint32_t fill_pop(sim_engine *e, double *lam)
{
    for (;;) {
        uint32_t l = weft__evheap_top(&e->fill)->id;
        if (!e->fz_stale[l])
            break;
        weft__evheap_set_seq(&e->fill, l, e->fz_t[l], e->fz_seq[l]);
        e->fz_stale[l] = 0;
    }
    *lam = weft__evheap_top(&e->fill)->t;
    return weft__evheap_pop(&e->fill);
}

/* Freezes flow f at `level` during filling, at the rate weight x level:
 * its links lose its share (the popped link l is out of the heap
 * already). */
static inline void freeze_one(sim_engine *e, uint32_t f, double level, uint32_t l)
{
    double w = sim_eng_weight(e, f), rate = w * level;
    e->f_frozen[f] = 1;
    e->f_new[f] = rate;
    if (e->f_nbn) {
        e->fl[f].lvl = level;
        e->f_nbn[f] = l;
    }
    uint32_t r = e->fl[f].route;
    for (uint32_t k = e->rf_off[r], end = sim_eng_rf_end(e, r); k < end; k++) {
        uint32_t l2 = e->rf_link[k];
        e->resid[l2] -= e->rf_coef[k] * rate;
        e->wsum[l2] -= e->rf_coef[k] * w;
        e->ucount[l2]--;
        if (l2 == l)
            continue;
        if (!e->ucount[l2])
            fill_remove(e, l2);
        else
            fill_set(e, l2, e->resid[l2] / e->wsum[l2]);
    }
}

/* Freezes f and, transitively, every unfrozen forwarder caught up with a
 * frozen flow: a caught-up forwarder cannot outrun its dep, so it stops
 * rising when the dep does (the flow-to-flow constraint). */
static weft_err freeze_ct(sim_engine *e, uint32_t f, double level, uint32_t l)
{
    e->ct_stack.n = 0;
    if (sim_eng_vec_push(&e->ct_stack, f))
        return WEFT_ENOMEM;
    while (e->ct_stack.n) {
        uint32_t g = e->ct_stack.v[--e->ct_stack.n];
        if (e->f_frozen[g])
            continue;
        freeze_one(e, g, level, l);
        for (uint32_t i = e->cts_off[g]; i < e->cts_off[g + 1]; i++) {
            uint32_t edge = e->cts[i], h = e->ct_f.v[edge];
            if (e->ct_cu[edge] && !e->f_frozen[h] && sim_eng_vec_push(&e->ct_stack, h))
                return WEFT_ENOMEM;
        }
    }
    return WEFT_OK;
}

/* Queues a forwarder whose catch-up time must be recomputed. */
weft_err sim_eng_ct_mark(sim_engine *e, uint32_t f)
{
    if (e->f_dirty[f] || e->ctd_off[f] == e->ctd_off[f + 1])
        return WEFT_OK;
    e->f_dirty[f] = 1;
    return sim_eng_vec_push(&e->ct_dirty, f);
}

/* After class c was filled on the component: what it left of each of
 * the component's links is class c + 1's capacity there (a bucket's
 * burst excepted: a background class may use the link's rate that class
 * 0 leaves, never its peak), and those links are class c + 1's to refill.
 * Filling leaves a saturated link a residue of rounding: below EPS of the
 * capacity it counts as none. */
static weft_err pass_down(sim_engine *e, uint32_t c, const double *cap)
{
    if (c + 1 >= e->n_cls)
        return WEFT_OK;
    double *next = e->ccap + (size_t)c * e->n_links;
    for (size_t i = 0; i < e->comp_links.n; i++) {
        uint32_t l = e->comp_links.v[i];
        double left = e->resid[l];
        if (!c && e->b_size && e->b_size[l] > 0)
            left -= cap[l] - e->b_rate[l];
        next[l] = left > EPS * cap[l] ? left : 0;
        if (sim_eng_vec_push(&e->cseeds[c], l))
            return WEFT_ENOMEM;
    }
    return WEFT_OK;
}

/* Lazy drain keys, while refilling above (ev allocated): as the fill
 * heap's (fill_set), a drain event that moves later is only recorded
 * (ev[f].t, .seq, with the sequence number setting it would take), the
 * flow staying where its earlier key put it until that key reaches the
 * top, where sim_eng_settle sets it. Every flow's key in the heap is at
 * most its true (time, sequence) key, so a top whose key is true is the
 * least: events pop in the order and at the times of setting every key
 * at once, to the bit. A refill above reschedules hundreds of drains, and
 * one moving later took a sift down the whole event heap. The time of the
 * key held (ev[f].held) is kept beside it, so that the comparison does not
 * read the heap's entry. Only set_rate's keys are lazy: the engine's other
 * keys are set on flows that are not active (holding no drain key), and an
 * active flow's first drain key is set at once (it holds none). */
static void drain_set(sim_engine *e, uint32_t f, double key)
{
    if (!e->ev) {
        weft__evheap_set(&e->heap, f, key);
        return;
    }
    sim_ev_key *k = &e->ev[f];
    uint64_t seq = weft__evheap_take_seq(&e->heap);
    if (weft__evheap_contains(&e->heap, f) && key >= k->held) {
        k->t = key;
        k->seq = seq;
        k->stale = true;
        return;
    }
    weft__evheap_set_seq(&e->heap, f, key, seq);
    k->held = key;
    k->stale = false;
}

bool sim_eng_settle(sim_engine *e)
{
    if (!e->ev)
        return e->heap.n > 0;
    while (e->heap.n) {
        uint32_t f = weft__evheap_top(&e->heap)->id;
        sim_ev_key *k = &e->ev[f];
        if (!k->stale)
            return true;
        weft__evheap_set_seq(&e->heap, f, k->t, k->seq);
        k->held = k->t;
        k->stale = false;
    }
    return false;
}

/* Flow f's rate after a refill: integrates the old one up to t and
 * reschedules its drain (or takes it out of the heap when it gets no
 * capacity). */
static void set_rate(sim_engine *e, uint32_t f, double nr, double t)
{
    sim_eng_advance(e, f, t);
    if (e->fl[f].rate == 0 && e->f_rate0[f] == 0)
        e->f_rate0[f] = nr;
    e->fl[f].rate = nr;
    double left = e->fl[f].rem;
    /* A background flow its betters leave no capacity waits (no drain
     * event) until they do. */
    if (left <= EPS * e->fl[f].bytes) {
        drain_set(e, f, t);
    } else if (nr > 0) {
        drain_set(e, f, t + left / nr);
    } else if (weft__evheap_contains(&e->heap, f)) {
        weft__evheap_remove(&e->heap, f);
        if (e->ev)
            e->ev[f].stale = false;
    }
}

/* Max-min fair rates of class c for the components touching its seed
 * links, by progressive filling over the capacity the classes before it
 * left; reschedules the drain of every flow whose rate changed. With
 * cut-through edges, a component also spans caught-up forwarder/dep
 * pairs, a caught-up forwarder freezes with its dep, and a forwarder left
 * slower than a dep it had caught up with falls behind. Class 0 sees the
 * links' own capacities and lists, so without background flows this is
 * the classless filling, bit for bit. */
static weft_err refill_class(sim_engine *e, double t, uint32_t c)
{
    uint64_t ep = ++e->epoch;
    bool ct = e->ct_f.n > 0;
    vec32 *lists = e->lflows + (size_t)c * e->n_links;
    vec32 *seeds = c ? &e->cseeds[c - 1] : &e->seeds;
    const double *cap = c ? e->ccap + (size_t)(c - 1) * e->n_links : e->cap;
    e->comp_links.n = e->comp_flows.n = 0;
    for (size_t i = 0; i < seeds->n; i++)
        if (!(e->l_twin && e->l_twin[seeds->v[i]]) && comp_add_link(e, seeds->v[i], ep))
            return WEFT_ENOMEM;
    seeds->n = 0;
    for (size_t i = 0; i < e->comp_links.n; i++) {
        uint32_t l = e->comp_links.v[i];
        for (size_t j = 0; j < lists[l].n; j++) {
            uint32_t f = lists[l].v[j];
            if (e->fl[f].stamp == ep)
                continue;
            e->fl[f].stamp = ep;
            if (sim_eng_vec_push(&e->comp_flows, f) || comp_add_route(e, f, ep) ||
                (ct && comp_add_coupled(e, f, ep)))
                return WEFT_ENOMEM;
        }
    }
    bool buckets = e->b_size && !c; /* they count class 0's load only */
    if (buckets)
        buckets_before(e, t);
    if (e->above_on && !e->comp_flows.n)
        for (size_t i = 0; i < e->comp_links.n; i++)
            e->l_load[e->comp_links.v[i]] = 0;
    if (!e->comp_flows.n) {
        if (buckets || c + 1 < e->n_cls) {
            /* Idle now: the buckets fill, and the next class may have it all. */
            for (size_t i = 0; i < e->comp_links.n; i++)
                e->resid[e->comp_links.v[i]] = cap[e->comp_links.v[i]];
            if (buckets)
                buckets_after(e, t);
        }
        return pass_down(e, c, cap);
    }
    e->st.refills++;
    e->st.refilled += e->comp_flows.n;
    for (size_t i = 0; i < e->comp_links.n; i++) {
        uint32_t l = e->comp_links.v[i];
        e->resid[l] = cap[l];
        e->wsum[l] = 0;
        e->ucount[l] = 0;
    }
    for (size_t i = 0; i < e->comp_flows.n; i++) {
        uint32_t f = e->comp_flows.v[i], r = e->fl[f].route;
        double w = sim_eng_weight(e, f);
        e->f_frozen[f] = 0;
        for (uint32_t k = e->rf_off[r], end = sim_eng_rf_end(e, r); k < end; k++) {
            e->wsum[e->rf_link[k]] += e->rf_coef[k] * w;
            e->ucount[e->rf_link[k]]++;
        }
    }
    /* Progressive filling with the links in a heap by the level at which
     * they saturate: (capacity - load of frozen flows) / (coefficients x
     * weights of unfrozen flows). That level only changes when a flow on the link
     * freezes, so each freeze updates the links of one route: O((links +
     * route entries) log links) per refill instead of a scan of every link
     * per round. */
    for (size_t i = 0; i < e->comp_links.n; i++) {
        uint32_t l = e->comp_links.v[i];
        if (e->ucount[l])
            weft__evheap_set(&e->fill, l, e->resid[l] / e->wsum[l]);
    }
    if (e->above_on)
        for (size_t i = 0; i < e->comp_links.n; i++)
            e->l_sub[e->comp_links.v[i]] = INFINITY; /* unless it saturates */
    double level = 0;
    while (e->fill.n) {
        double lam;
        uint32_t l = fill_pop(e, &lam);
        if (lam > level)
            level = lam;
        double sub = 0; /* the highest level of the flows frozen before it saturated */
        for (size_t j = 0; j < lists[l].n; j++) {
            uint32_t f = lists[l].v[j];
            if (e->f_frozen[f]) {
                if (e->above_on && e->fl[f].lvl > sub)
                    sub = e->fl[f].lvl;
                continue;
            }
            if (!ct)
                freeze_one(e, f, level, l);
            else if (freeze_ct(e, f, level, l))
                return WEFT_ENOMEM;
        }
        if (e->above_on)
            e->l_sub[l] = sub;
    }
    if (e->above_on) {
        for (size_t i = 0; i < e->comp_links.n; i++) {
            uint32_t l = e->comp_links.v[i];
            e->l_load[l] = cap[l] - e->resid[l]; /* every active flow on it is in the component */
        }
        for (size_t i = 0; i < e->comp_flows.n; i++)
            if (bn_set(e, e->comp_flows.v[i], e->f_nbn[e->comp_flows.v[i]]))
                return WEFT_ENOMEM;
        e->drained.n = 0;
    }
    if (ct)
        for (size_t i = 0; i < e->comp_flows.n; i++) {
            uint32_t f = e->comp_flows.v[i];
            for (uint32_t k = e->ctd_off[f]; k < e->ctd_off[f + 1]; k++) {
                uint32_t edge = e->ctd[k];
                if (e->ct_cu[edge] && sim_eng_slower(e->f_new[f], e->f_new[e->ct_on.v[edge]])) {
                    e->ct_cu[edge] = 0; /* limited elsewhere: it falls behind */
                    if (sim_eng_ct_mark(e, f))
                        return WEFT_ENOMEM;
                }
            }
        }
    for (size_t i = 0; i < e->comp_flows.n; i++) {
        uint32_t f = e->comp_flows.v[i];
        double nr = e->f_new[f];
        if (nr == e->fl[f].rate && weft__evheap_contains(&e->heap, f))
            continue;
        set_rate(e, f, nr, t);
        if (ct) {
            /* Its catch-up times, and those of forwarders behind it, move. */
            if (sim_eng_ct_mark(e, f))
                return WEFT_ENOMEM;
            for (uint32_t k = e->cts_off[f]; k < e->cts_off[f + 1]; k++) {
                uint32_t edge = e->cts[k];
                if (!e->ct_cu[edge] && e->f_state[e->ct_f.v[edge]] == F_ACTIVE &&
                    sim_eng_ct_mark(e, e->ct_f.v[edge]))
                    return WEFT_ENOMEM;
            }
        }
    }
    if (buckets)
        buckets_after(e, t);
    return pass_down(e, c, cap);
}

/* Refilling above (engine.h, sim_engine_set_above): after drains, only
 * the region of the max-min rates the drains can move is filled again.
 *
 * Why a region. Progressive filling freezes each flow at the first of its
 * links to saturate, its bottleneck (fl's bn; a link "froze" the flows of its
 * list l_bn). Call the region R the flows found from the drained flows'
 * links by: a link brings in every flow it froze, a flow brings in every
 * link of its route (the drained flows' descendants in the bottleneck
 * structure of Ros-Giralt et al., "On the Bottleneck Structure of
 * Congestion-Controlled Networks", SIGMETRICS 2020). R is filled again
 * over what the flows outside it leave of each of R's links (its load less
 * R's share), the others keeping their rates. That is the max-min fair
 * allocation, the one a whole refill gives in exact arithmetic, when every
 * flow has a bottleneck -- a saturated link on which no flow has a higher
 * level (rate over weight): a flow outside R keeps its bottleneck, which
 * carries no flow of R (a link of R's brings in every flow it froze) and
 * no drained one (the drained flows' links are R's), so nothing on it
 * moved; a flow of R froze at a link that saturated, after every flow of
 * R there that froze lower. Only the flows outside R on that link are left
 * to check: none may be above the level at which it saturated now. Each
 * link keeps l_sub, at least the level of every flow on it that it did not
 * freeze (its flows outside R, which keep their levels, among them), so
 * most checks are one comparison; a link whose bound does not hold has
 * its list scanned, and a flow found above brings itself and what it finds
 * into R, which is filled again from scratch (R only grows). Under 1e-13
 * relative above counts as a tie moved by rounding (TIE_TOL).
 *
 * Cost: the 128-GPU all-to-all of the DLRM step's sparse row-wise tables
 * (distinct sizes, so its 16,256 flows drain one by one) refilled 1,865
 * flows a drain, every flow at or above the least drained level, as this
 * engine did before the region; its regions hold 395, and 363 of those
 * really change (by more than 1e-9; the rest move by rounding or not at
 * all).
 *
 * A region is filled by its own lists (rl: R's flows on each of its
 * links, filled as R is found, so a pop never reads the flows outside R;
 * region_setup) starting at the least drained level (no link of R can saturate below
 * it: every flow of R was at least there, and its links carried it), and
 * a flow's rate moves only when the refill moved it by more than KEEP_TOL
 * of itself: the flows of R whose rate the drain did not change come out
 * of another order of sums, within 1e-13 of the old rate, and keep it and
 * their drain event (exact for the kept rate), so a drain moves by some
 * KEEP_TOL of its remaining time and nothing is rescheduled for rounding.
 *
 * Only runs without dependencies (nor queue or cut-through edges) do this.
 * There every flow starts at the outset and the last bits it moves stay last
 * bits (1e-13 relative in the DLRM all-to-alls). Through dependencies a run
 * amplifies any change of rounding, whatever its source: a drain a bit
 * later starts its dependents a bit later, which moves the drains they
 * share links with, and so on; a ring allreduce of 8 rings on h100:2 (64
 * MiB, fluid) grew a difference of 1e-16 tenfold every 20 us, to 4e-3 of
 * its time after 400 us, though every refill above agreed with a whole one
 * within 1e-9. */
#define ABOVE_TOL 1e-12
/* A refilled rate within this fraction of the old one is the old one
 * moved by rounding (measured below 1e-13 in the DLRM all-to-alls, whose
 * real changes exceed 1e-9): the flow keeps it. */
#define KEEP_TOL 1e-13
/* A flow outside the region at most this fraction above the level at
 * which one of its links saturated ties with it (rounding). */
#define TIE_TOL 1e-13

weft_err sim_eng_build_above(sim_engine *e)
{
    e->above_on = e->above_ask && !e->plain && e->n_cls == 1 && !e->b_size && !e->ct_f.n &&
                  !e->dep_f.n && !e->q_f.n;
    e->above_lvl = INFINITY;
    e->above_pending = e->n_flows;
    if (!e->above_on)
        return WEFT_OK;
    size_t nf = e->n_flows ? e->n_flows : 1, nl = e->n_links ? e->n_links : 1;
    size_t nr = e->n_routes, nk = e->rf_off[nr];
    if (!e->rf_own) {
        /* Dead links leave routes in place (prune_link): the filling
         * routes become the engine's own. */
        uint32_t *off = weft__malloc((nr + 1) * sizeof *off);
        uint32_t *link = weft__malloc((nk ? nk : 1) * sizeof *link);
        double *coef = weft__malloc((nk ? nk : 1) * sizeof *coef);
        if (!off || !link || !coef) {
            weft__free(off);
            weft__free(link);
            weft__free(coef);
            return WEFT_ENOMEM;
        }
        memcpy(off, e->rf_off, (nr + 1) * sizeof *off);
        memcpy(link, e->rf_link, nk * sizeof *link);
        memcpy(coef, e->rf_coef, nk * sizeof *coef);
        e->rf_off = off;
        e->rf_link = link;
        e->rf_coef = coef;
        e->rf_own = true;
    }
    e->rf_end = weft__malloc((nr ? nr : 1) * sizeof *e->rf_end);
    e->l_gap = weft__malloc(nl * sizeof *e->l_gap);
    e->l_wait = weft__malloc(nl * sizeof *e->l_wait);
    e->l_dead = weft__calloc(nl, sizeof *e->l_dead);
    if (!e->rf_end || !e->l_gap || !e->l_wait || !e->l_dead)
        return WEFT_ENOMEM;
    for (size_t r = 0; r < nr; r++)
        e->rf_end[r] = e->rf_off[r + 1];
    for (size_t l = 0; l < nl; l++)
        e->l_gap[l] = e->l_wait[l] = 1;
    e->f_nbn = weft__malloc(nf * sizeof *e->f_nbn);
    e->l_load = weft__calloc(nl, sizeof *e->l_load);
    e->l_sub = weft__malloc(nl * sizeof *e->l_sub);
    e->l_bn = weft__calloc(nl, sizeof *e->l_bn);
    e->pl = weft__malloc(nl * sizeof *e->pl);
    e->l_idx = weft__malloc(nl * sizeof *e->l_idx);
    e->p_last = weft__malloc(nl * sizeof *e->p_last);
    e->p_open = weft__malloc(nl * sizeof *e->p_open);
    e->ck = weft__malloc(nl * sizeof *e->ck);
    e->ck_seq = weft__malloc(nl * sizeof *e->ck_seq);
    e->r_lvl = weft__malloc(nl * sizeof *e->r_lvl);
    e->r_rmax = weft__malloc(nl * sizeof *e->r_rmax);
    e->r_nonr = weft__malloc(nl * sizeof *e->r_nonr);
    e->r_pop = weft__malloc(nl);
    e->r_scan = weft__malloc(nl);
    e->pp = weft__calloc(nl, sizeof *e->pp);
    e->rg_off = weft__malloc((nf + 1) * sizeof *e->rg_off);
    e->rg_w = weft__malloc(nf * sizeof *e->rg_w);
    e->rg_lvl = weft__malloc(nf * sizeof *e->rg_lvl);
    e->rg_fz = weft__malloc(nf);
    e->rg_nbn = weft__malloc(nf * sizeof *e->rg_nbn);
    e->ev = weft__calloc(nf, sizeof *e->ev);
    if (!(e->f_nbn && e->l_load && e->l_sub && e->l_bn && e->pl && e->l_idx && e->ck && e->ck_seq &&
          e->r_lvl && e->r_rmax && e->r_nonr && e->r_pop && e->r_scan && e->pp && e->p_last &&
          e->p_open && e->rg_off && e->rg_w && e->rg_lvl && e->rg_fz && e->rg_nbn && e->ev))
        return WEFT_ENOMEM;
    for (size_t l = 0; l < nl; l++)
        e->l_sub[l] = INFINITY;
    return WEFT_OK;
}

/* Link l (not in the region yet) joins it at the next place i of
 * comp_links: l_idx[l] = i, the place's sums start from the link's
 * capacity less the load of the active flows (region_setup), and its
 * list of region flows gets room for every active flow on the link, from
 * pp[i].off (pp[i].n of them so far). */
static weft_err region_link_new(sim_engine *e, uint32_t l, uint64_t ep)
{
    size_t i = e->comp_links.n, room = e->rl.n + e->lflows[l].n;
    if (sim_eng_vec_push(&e->comp_links, l) ||
        weft__grow((void **)&e->rl.v, &e->rl.cap, room ? room : 1, sizeof *e->rl.v))
        return WEFT_ENOMEM;
    e->lstamp[l] = ep;
    e->l_idx[l] = (uint32_t)i;
    sim_place *pl = &e->pp[i];
    pl->resid = e->cap[l] - e->l_load[l];
    pl->wsum = 0;
    pl->ucount = 0;
    pl->n = 0;
    pl->off = (uint32_t)e->rl.n;
    e->rl.n = room;
    return WEFT_OK;
}

/* Link l joins the region, once per epoch. */
static weft_err region_link(sim_engine *e, uint32_t l, uint64_t ep)
{
    return e->lstamp[l] == ep ? WEFT_OK : region_link_new(e, l, ep);
}

/* Flow f joins the region at the next place j of comp_flows, and its links
 * with it: its filling route as places (rg_off, rg_p, rg_c), its terms
 * added to the places' sums and itself to their lists (region_setup). */
static weft_err region_flow(sim_engine *e, uint32_t f, uint64_t ep)
{
    e->fl[f].stamp = ep;
    uint32_t j = (uint32_t)e->comp_flows.n;
    if (sim_eng_vec_push(&e->comp_flows, f))
        return WEFT_ENOMEM;
    uint32_t r = e->fl[f].route, q = e->rg_off[j];
    size_t need = (size_t)q + (e->rf_end[r] - e->rf_off[r]) + 1;
    if ((need > e->rg_pcap && weft__grow((void **)&e->rg_p, &e->rg_pcap, need, sizeof *e->rg_p)) ||
        (need > e->rg_ccap && weft__grow((void **)&e->rg_c, &e->rg_ccap, need, sizeof *e->rg_c)))
        return WEFT_ENOMEM;
    double w = sim_eng_weight(e, f), rate = e->fl[f].rate;
    e->rg_fz[j] = 0;
    e->rg_w[j] = w;
    /* This is a pass over every pair of the region: local pointers, and a
     * call only for a link new to it (region_link_new moves rl.v). */
    const uint32_t *link = e->rf_link, *idx = e->l_idx;
    const double *coef = e->rf_coef;
    const uint64_t *stamp = e->lstamp;
    uint32_t *rp = e->rg_p;
    double *rc = e->rg_c;
    sim_place *pp = e->pp;
    for (uint32_t k = e->rf_off[r], stop = e->rf_end[r]; k < stop; k++, q++) {
        uint32_t l = link[k];
        if (stamp[l] != ep && region_link_new(e, l, ep))
            return WEFT_ENOMEM;
        uint32_t p = idx[l];
        double c = coef[k];
        sim_place *pl = &pp[p];
        pl->resid += c * rate;
        pl->wsum += c * w;
        pl->ucount++;
        e->rl.v[pl->off + pl->n++] = j;
        rp[q] = p;
        rc[q] = c;
    }
    e->rg_off[j + 1] = q;
    return WEFT_OK;
}

/* Closes the region: each of its links from *next on brings in the flows
 * it froze. */
static weft_err region_close(sim_engine *e, uint64_t ep, size_t *next)
{
    while (*next < e->comp_links.n) {
        const vec32 *b = &e->l_bn[e->comp_links.v[(*next)++]];
        for (size_t j = 0; j < b->n; j++) {
            /* Prefetches (they change nothing): the flows' records a few
             * ahead, then their routes, which region_flow reads. */
            if (j + 8 < b->n) {
                uint32_t g = b->v[j + 8];
                __builtin_prefetch(&e->fl[g]);
            }
            if (j + 4 < b->n) {
                uint32_t r = e->fl[b->v[j + 4]].route;
                __builtin_prefetch(&e->rf_off[r]);
                __builtin_prefetch(&e->rf_end[r]);
            }
            if (j + 2 < b->n) {
                uint32_t k = e->rf_off[e->fl[b->v[j + 2]].route];
                __builtin_prefetch(&e->rf_link[k]);
                __builtin_prefetch(&e->rf_coef[k]);
            }
            if (e->fl[b->v[j]].stamp != ep && region_flow(e, b->v[j], ep))
                return WEFT_ENOMEM;
        }
    }
    return WEFT_OK;
}

/* Sets up a fill of the region, in its own numbering: place i for the
 * link comp_links.v[i] (l_idx), j for the flow comp_flows.v[j]. Per place
 * (pp: resid, wsum, ucount) the link's capacity less what the flows
 * outside the region take, and the sums of the region's flows; per region
 * flow its weight (rg_w) and its filling route as places and coefficients
 * (rg_off, rg_p, rg_c); per place the region flows on it (rl from
 * pp[i].off, pp[i].n of them, in comp_flows' order). The sums add the same
 * terms in the same order (comp_flows', then the route's) as sums over
 * the links themselves: a pop computes the same keys, to the bit, while
 * reading only these dense arrays (a pop touches each pair of a flow it
 * freezes, and the global per-link arrays and the route's CSR took three
 * dependent loads a pair).
 *
 * region_link and region_flow build the sums and lists as the region is
 * found (one pass over its pairs for all). A fill consumes the sums: after
 * one (the region grew, `again`) they are summed afresh from the region's
 * routes, the same terms in the same order. */
static void region_setup(sim_engine *e, bool again)
{
    size_t nc = e->comp_links.n, nf = e->comp_flows.n;
    sim_place *restrict pp = e->pp;
    const uint32_t *restrict rp = e->rg_p, *restrict roff = e->rg_off;
    const double *restrict rc = e->rg_c;
    for (size_t i = 0; i < nc; i++) {
        e->r_pop[i] = 0;
        e->r_scan[i] = 0;
        e->r_rmax[i] = 0;
        e->p_last[i] = 0;
    }
    if (again) {
        for (size_t i = 0; i < nc; i++) {
            uint32_t l = e->comp_links.v[i];
            pp[i].resid = e->cap[l] - e->l_load[l];
            pp[i].wsum = 0;
            pp[i].ucount = 0;
        }
        for (size_t j = 0; j < nf; j++) {
            double w = e->rg_w[j], rate = e->fl[e->comp_flows.v[j]].rate;
            e->rg_fz[j] = 0;
            for (uint32_t k = roff[j]; k < roff[j + 1]; k++) {
                pp[rp[k]].resid += rc[k] * rate;
                pp[rp[k]].wsum += rc[k] * w;
                pp[rp[k]].ucount++;
            }
        }
    }
}

/* The saturation of the link at place i at `level`: freezes its region
 * flows still rising, each as freeze_one (their levels and bottlenecks in
 * rg_lvl and rg_nbn until the region is filled), and sets the key of each
 * place they touch once, from its sums after the pop (in the order of
 * first touch). */
static void region_pop(sim_engine *e, size_t i, double level)
{
    uint64_t ps = ++e->epoch;
    size_t nt = 0;
    const uint32_t *restrict rp = e->rg_p, *restrict roff = e->rg_off;
    const double *restrict rc = e->rg_c, *restrict rw = e->rg_w;
    double *restrict lv = e->rg_lvl;
    uint32_t *restrict pl = e->pl;
    sim_place *restrict pp = e->pp;
    uint8_t *restrict frozen = e->rg_fz;
    uint32_t l = e->comp_links.v[i];
    pp[i].stamp = ps; /* its key is gone already */
    e->r_pop[i] = 1;
    e->r_lvl[i] = level;
    double rmax = 0;
    for (uint32_t a = pp[i].off, last = a + pp[i].n; a < last; a++) {
        uint32_t j = e->rl.v[a];
        if (frozen[j]) {
            rmax = lv[j] > rmax ? lv[j] : rmax;
            continue;
        }
        double w = rw[j], rate = w * level;
        frozen[j] = 1;
        lv[j] = level;
        e->rg_nbn[j] = l;
        for (uint32_t k = roff[j], stop = roff[j + 1]; k < stop; k++) {
            sim_place *q = &pp[rp[k]];
            q->resid -= rc[k] * rate;
            q->wsum -= rc[k] * w;
            q->ucount--;
            if (q->stamp != ps) {
                q->stamp = ps;
                pl[nt++] = rp[k];
            }
        }
    }
    e->r_rmax[i] = rmax;
    for (size_t k = 0; k < nt; k++)
        e->p_last[pl[k]] = level; /* levels only rise: the highest so far */
    if (e->ck_on) {
        for (size_t k = 0; k < nt; k++) {
            uint32_t p = pl[k];
            bool open = pp[p].ucount > 0;
            e->ck[p] = open ? pp[p].resid / pp[p].wsum : INFINITY;
            e->ck_seq[p] = open ? e->ck_next++ : UINT64_MAX; /* as fill_set, fill_remove */
        }
        return;
    }
    for (size_t k = 0; k < nt; k++) {
        uint32_t p = pl[k], l2 = e->comp_links.v[p];
        if (!pp[p].ucount)
            fill_remove(e, l2);
        else
            fill_set(e, l2, pp[p].resid / pp[p].wsum);
    }
}

/* Progressive filling of the region from level lo. */
static void region_fill(sim_engine *e, double lo)
{
    double level = lo;
    size_t nc = e->comp_links.n;
    e->ck_on = nc <= e->scan_max;
    if (e->ck_on) {
        /* Few links (sim_engine_set_scan): their keys in comp_links' order,
         * the least found by a scan at each pop, cheaper there than a
         * heap's updates. Ties go to the key set first, as in the heap
         * (ck_seq numbers the keys as the heap would): the two then pop
         * alike, to the bit. Ties are common (links of equal capacity and
         * flows), and the order of two tied links changes the rounding of
         * the second's key and which of them freezes a flow crossing both
         * (its bottleneck, hence later regions); pruning takes dead links
         * out of a region, which can bring it under the scan's limit, so
         * with ties to the first place instead, a run pruning (by a scan)
         * and one not (by the heap) differed in their last bits, against
         * "Links that cannot fill" (engine_region_test, test_scan_ties). */
        uint64_t *sq = e->ck_seq; /* region_pop writes it too: no restrict */
        e->ck_next = 0;
        for (size_t i = 0; i < nc; i++) {
            bool open = e->pp[i].ucount > 0;
            e->ck[i] = open ? e->pp[i].resid / e->pp[i].wsum : INFINITY;
            sq[i] = open ? e->ck_next++ : UINT64_MAX;
        }
        /* The scan reads the places still open (op, no of them), dropping
         * those it finds closed: a place closes for good (its count only
         * falls, and a popped one is closed), and a closed place (key
         * INFINITY, sequence UINT64_MAX) is never the least, so the least
         * is the same, whichever open places come in which order (no two
         * share a sequence number). */
        uint32_t *op = e->p_open;
        size_t no = 0;
        for (size_t i = 0; i < nc; i++) {
            op[no] = (uint32_t)i;
            no += sq[i] != UINT64_MAX;
        }
        for (;;) {
            size_t at = nc, keep = 0;
            double lam = INFINITY;
            uint64_t first = UINT64_MAX;
            for (size_t a = 0; a < no; a++) {
                /* Branch-free: the least key is not predictable. */
                uint32_t i = op[a];
                op[keep] = i;
                keep += sq[i] != UINT64_MAX;
                bool less = e->ck[i] < lam || (e->ck[i] == lam && sq[i] < first);
                lam = less ? e->ck[i] : lam;
                first = less ? sq[i] : first;
                at = less ? i : at;
            }
            no = keep;
            if (at == nc)
                break;
            e->ck[at] = INFINITY;
            sq[at] = UINT64_MAX;
            if (lam > level)
                level = lam;
            region_pop(e, at, level);
        }
        return;
    }
    for (size_t i = 0; i < nc; i++)
        if (e->pp[i].ucount)
            weft__evheap_set(&e->fill, e->comp_links.v[i], e->pp[i].resid / e->pp[i].wsum);
    while (e->fill.n) {
        double lam;
        uint32_t l = fill_pop(e, &lam);
        if (lam > level)
            level = lam;
        region_pop(e, e->l_idx[l], level);
    }
}

/* Checks each saturated link of the region against the flows outside it
 * (see "Refilling above"): a flow above the link's level joins the region.
 * Returns whether any did (*grew), the region then to be filled again. */
static weft_err region_check(sim_engine *e, uint64_t ep, bool *grew)
{
    *grew = false;
    size_t nc = e->comp_links.n;
    for (size_t i = 0; i < nc; i++) {
        if (!e->r_pop[i])
            continue;
        uint32_t l = e->comp_links.v[i];
        double lam = e->r_lvl[i];
        if (e->l_sub[l] <= lam)
            continue;
        double top = lam * (1 + TIE_TOL), m = 0;
        const vec32 *lf = &e->lflows[l];
        for (size_t j = 0; j < lf->n; j++) {
            uint32_t f = lf->v[j];
            if (e->fl[f].stamp == ep)
                continue;
            double x = e->fl[f].lvl;
            m = x > m ? x : m;
            if (x > top) {
                if (region_flow(e, f, ep))
                    return WEFT_ENOMEM;
                *grew = true;
            }
        }
        e->r_scan[i] = 1;
        e->r_nonr[i] = m;
    }
    return WEFT_OK;
}

/* Links that cannot fill. Once every flow has started, the active flows
 * only leave, and a link that no allocation of them within the other
 * links' capacities could fill never saturates again: it never pops, its
 * key never bounds a flow, and leaving it out of the region refills
 * changes no pop and no rate, to the bit (its own load is no longer kept).
 * After an all-to-all's pairs inside a box drain, every NVLink link of
 * the DLRM step's 128 GPUs (h100:16) is such a link: the flows left on a
 * GPU's link to its NVSwitch are its own sends across boxes, which also
 * cross its NIC (400 Gb/s), and the arrivals its NIC passes on, which
 * also cross that NIC's link from the rail switch: at most 100 GB/s of the
 * NVLink's 450. Half the filling links of a route go, and with them half
 * the work of each refill.
 *
 * The bound is weak duality for the linear program "most load on l":
 * weights y_m >= 0 on the other links with, for every flow f on l,
 * sum_m coef(m, f) y_m >= coef(l, f) give load(l) <= sum_m cap_m y_m. Each
 * flow is covered by one link of its route, the one with the least
 * capacity x coef(l, f) / coef(m, f) over the number of l's flows
 * crossing it (a NIC's link that all of a GPU's sends cross, rather than
 * a far NIC that one of them does), y_m the largest ratio among the flows
 * it covers. A flow with no other filling link keeps l alive. Dead when
 * the bound is below (1 - DEAD_TOL) of l's capacity, far from rounding.
 * A link is looked at when a drained flow crossed it and no flow has it
 * for bottleneck (a link that froze flows is full), after 1, 2, 4, ...
 * such drains, so each costs a few looks over the run (a look reads its
 * flows' routes twice). */
#define DEAD_TOL 1e-9

static bool link_dead(sim_engine *e, uint32_t l)
{
    const vec32 *lf = &e->lflows[l];
    uint64_t ep = ++e->epoch;
    uint32_t *cnt = e->pl;
    double *y = e->ck;
    for (size_t j = 0; j < lf->n; j++) {
        uint32_t r = e->fl[lf->v[j]].route;
        for (uint32_t k = e->rf_off[r]; k < e->rf_end[r]; k++) {
            uint32_t m = e->rf_link[k];
            if (e->lstamp[m] != ep) {
                e->lstamp[m] = ep;
                cnt[m] = 0;
                y[m] = 0;
            }
            cnt[m]++;
        }
    }
    double bound = 0, top = e->cap[l] * (1 - DEAD_TOL);
    for (size_t j = 0; j < lf->n; j++) {
        uint32_t r = e->fl[lf->v[j]].route, best = SIM_NO_LINK;
        double cl = 0, cost = INFINITY, ratio = 0;
        for (uint32_t k = e->rf_off[r]; k < e->rf_end[r]; k++)
            if (e->rf_link[k] == l)
                cl = e->rf_coef[k];
        for (uint32_t k = e->rf_off[r]; k < e->rf_end[r]; k++) {
            uint32_t m = e->rf_link[k];
            double q = cl / e->rf_coef[k], c = e->cap[m] * q / cnt[m];
            if (m != l && c < cost) {
                cost = c;
                best = m;
                ratio = q;
            }
        }
        if (best == SIM_NO_LINK)
            return false;
        if (ratio > y[best]) {
            bound += e->cap[best] * (ratio - y[best]);
            y[best] = ratio;
            if (!(bound < top))
                return false;
        }
    }
    return true;
}

/* Takes dead link l out of the filling routes of its flows (in place,
 * keeping their order). */
static void prune_link(sim_engine *e, uint32_t l)
{
    e->l_dead[l] = 1;
    e->st.dead_links++;
    const vec32 *lf = &e->lflows[l];
    for (size_t j = 0; j < lf->n; j++) {
        uint32_t r = e->fl[lf->v[j]].route, w = e->rf_off[r];
        for (uint32_t k = e->rf_off[r]; k < e->rf_end[r]; k++)
            if (e->rf_link[k] != l) {
                e->rf_link[w] = e->rf_link[k];
                e->rf_coef[w++] = e->rf_coef[k];
            }
        e->rf_end[r] = w;
    }
}

/* Looks at the drained flows' links that are due (see "Links that cannot
 * fill"), before the region is found. */
static weft_err find_dead(sim_engine *e)
{
    if (e->above_pending || !e->prune)
        return WEFT_OK;
    e->seeds.n = 0; /* the links due, gathered first: pruning moves routes */
    for (size_t i = 0; i < e->drained.n; i++) {
        uint32_t r = e->fl[e->drained.v[i]].route;
        for (uint32_t k = e->rf_off[r]; k < e->rf_end[r]; k++) {
            uint32_t l = e->rf_link[k];
            if (e->l_bn[l].n || e->l_dead[l] || !e->l_wait[l] || --e->l_wait[l])
                continue;
            if (sim_eng_vec_push(&e->seeds, l))
                return WEFT_ENOMEM;
        }
    }
    for (size_t i = 0; i < e->seeds.n; i++) {
        uint32_t l = e->seeds.v[i];
        if (e->l_dead[l] || e->l_wait[l])
            continue;
        if (link_dead(e, l)) {
            prune_link(e, l);
        } else {
            e->l_gap[l] = e->l_gap[l] < UINT32_MAX / 2 ? 2 * e->l_gap[l] : e->l_gap[l];
            e->l_wait[l] = e->l_gap[l];
        }
    }
    e->seeds.n = 0;
    return WEFT_OK;
}

static weft_err refill_above(sim_engine *e, double t, double x)
{
    if (find_dead(e))
        return WEFT_ENOMEM;
    uint64_t ep = ++e->epoch;
    e->seeds.n = 0;
    e->comp_flows.n = e->comp_links.n = e->rl.n = 0;
    e->rg_off[0] = 0;
    for (size_t i = 0; i < e->drained.n; i++) {
        uint32_t f = e->drained.v[i], r = e->fl[f].route;
        for (uint32_t k = e->rf_off[r]; k < e->rf_end[r]; k++)
            if (region_link(e, e->rf_link[k], ep))
                return WEFT_ENOMEM;
    }
    e->drained.n = 0;
    size_t next = 0;
    bool grew = true, again = false;
    while (grew) {
        if (region_close(e, ep, &next))
            return WEFT_ENOMEM;
        if (!e->comp_flows.n)
            return WEFT_OK;
        region_setup(e, again);
        again = true;
        /* No link of the region saturates below x in exact arithmetic: the
         * level starts there, so rounding cannot give a flow a lower rate
         * (or none). */
        region_fill(e, x * (1 - ABOVE_TOL));
        if (region_check(e, ep, &grew))
            return WEFT_ENOMEM;
    }
    e->st.refills++;
    e->st.refilled += e->comp_flows.n;
    /* Each link's bound on the levels of the flows it did not freeze: the
     * flows outside the region kept theirs (at most the old bound, or
     * the scanned highest), the region's are known. */
    for (size_t i = 0; i < e->comp_links.n; i++) {
        uint32_t l = e->comp_links.v[i];
        double sub = e->r_scan[i] ? e->r_nonr[i] : e->l_sub[l];
        if (e->r_pop[i])
            sub = e->r_rmax[i] > sub ? e->r_rmax[i] : sub;
        else
            sub = e->p_last[i] > sub ? e->p_last[i] : sub;
        e->l_sub[l] = sub;
    }
    /* The loads move along the region's routes (rg_p, rg_c: the filling
     * routes' links and coefficients, in their order). */
    const uint32_t *rp = e->rg_p, *links = e->comp_links.v;
    const double *rc = e->rg_c;
    for (size_t j = 0; j < e->comp_flows.n; j++) {
        uint32_t f = e->comp_flows.v[j];
        if (bn_set(e, f, e->rg_nbn[j]))
            return WEFT_ENOMEM;
        /* Its level and rate as the pop that froze it had them (every flow
         * of the region froze: each has a filling link in it). */
        e->fl[f].lvl = e->rg_lvl[j];
        double nr = e->rg_w[j] * e->rg_lvl[j], old = e->fl[f].rate;
        /* A rate that moved by rounding only stays (KEEP_TOL). */
        if (fabs(nr - old) <= KEEP_TOL * old && weft__evheap_contains(&e->heap, f))
            continue;
        for (uint32_t q = e->rg_off[j]; q < e->rg_off[j + 1]; q++)
            e->l_load[links[rp[q]]] += rc[q] * (nr - old);
        set_rate(e, f, nr, t);
    }
    return WEFT_OK;
}

weft_err sim_eng_refill(sim_engine *e, double t)
{
    if (e->above_on) {
        double x = e->above_lvl;
        bool above = !e->above_full && x > 0 && x < INFINITY;
        e->above_full = false;
        e->above_lvl = INFINITY;
        if (above)
            return refill_above(e, t, x);
    }
    for (uint32_t c = 0; c < e->n_cls; c++) {
        weft_err err = refill_class(e, t, c);
        if (err)
            return err;
    }
    return WEFT_OK;
}
