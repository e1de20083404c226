/* The flow-level engine's active flows and their max-min fair rates, by
 * progressive filling over the touched components. See engine_internal.h
 * for the file order. */
#include <math.h>

#include "sim/engine_internal.h"

/* Integrates a flow's current rate up to time t. */
void sim_eng_advance(sim_engine *e, uint32_t f, double t)
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

weft_err sim_eng_seed_route(sim_engine *e, uint32_t f)
{
    uint32_t r = e->f_route[f], c = sim_eng_class(e, f);
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
    uint32_t r = e->f_route[f];
    vec32 *lists = class_lists(e, f);
    for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++) {
        vec32 *lf = &lists[e->r_link.v[k]];
        e->slot[e->f_slot[f] + (k - e->r_off[r])] = (uint32_t)lf->n;
        if (sim_eng_vec_push(lf, f))
            return WEFT_ENOMEM;
    }
    e->f_state[f] = F_ACTIVE;
    e->f_upd[f] = t;
    e->f_rate[f] = 0;
    if (e->above_on) {
        e->above_full = true;
        e->f_apos[f] = (uint32_t)e->act.n;
        e->a_lvl[e->act.n] = 0;
        if (sim_eng_vec_push(&e->act, f))
            return WEFT_ENOMEM;
    }
    return sim_eng_seed_route(e, f);
}

/* A flow that drained leaves the active list (its level there -1, a
 * hole, until more than half of act are holes and act is closed up, in
 * order: act stays in the order flows started, which for an all-to-all
 * is that of their ids and routes, so a refill reads its flows' arrays
 * and routes in their order in memory) and its links' loads; the next
 * refill may start at its level. */
static void above_leave(sim_engine *e, uint32_t f)
{
    e->a_lvl[e->f_apos[f]] = -1;
    if (++e->act_holes * 2 > e->act.n) {
        size_t j = 0;
        for (size_t i = 0; i < e->act.n; i++)
            if (e->a_lvl[i] >= 0) {
                e->act.v[j] = e->act.v[i];
                e->a_lvl[j] = e->a_lvl[i];
                e->f_apos[e->act.v[j]] = (uint32_t)j;
                j++;
            }
        e->act.n = j;
        e->act_holes = 0;
    }
    uint32_t r = e->f_route[f];
    for (uint32_t k = e->rf_off[r]; k < e->rf_off[r + 1]; k++)
        e->l_load[e->rf_link[k]] -= e->rf_coef[k] * e->f_rate[f];
    if (e->f_lvl[f] < e->above_lvl)
        e->above_lvl = e->f_lvl[f];
}

weft_err sim_eng_deactivate(sim_engine *e, uint32_t f)
{
    if (e->above_on)
        above_leave(e, f);
    uint32_t r = e->f_route[f];
    vec32 *lists = class_lists(e, f);
    for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++) {
        vec32 *lf = &lists[e->r_link.v[k]];
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
    uint32_t r = e->f_route[g];
    for (uint32_t k = e->rf_off[r]; k < e->rf_off[r + 1]; k++)
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
    if (e->f_lvl) {
        e->f_lvl[f] = level;
        e->a_lvl[e->f_apos[f]] = level;
    }
    uint32_t r = e->f_route[f];
    for (uint32_t k = e->rf_off[r]; k < e->rf_off[r + 1]; k++) {
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

/* Flow f's rate after a refill: integrates the old one up to t and
 * reschedules its drain (or takes it out of the heap when it gets no
 * capacity). */
static void set_rate(sim_engine *e, uint32_t f, double nr, double t)
{
    sim_eng_advance(e, f, t);
    if (e->f_rate[f] == 0 && e->f_rate0[f] == 0)
        e->f_rate0[f] = nr;
    e->f_rate[f] = nr;
    double left = e->f_rem[f];
    /* A background flow its betters leave no capacity waits (no drain
     * event) until they do. */
    if (left <= EPS * e->f_bytes[f])
        weft__evheap_set(&e->heap, f, t);
    else if (nr > 0)
        weft__evheap_set(&e->heap, f, t + left / nr);
    else if (weft__evheap_contains(&e->heap, f))
        weft__evheap_remove(&e->heap, f);
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
            if (e->f_stamp[f] == ep)
                continue;
            e->f_stamp[f] = ep;
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
        uint32_t f = e->comp_flows.v[i], r = e->f_route[f];
        double w = sim_eng_weight(e, f);
        e->f_frozen[f] = 0;
        for (uint32_t k = e->rf_off[r]; k < e->rf_off[r + 1]; k++) {
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
    double level = 0;
    while (e->fill.n) {
        double lam;
        uint32_t l = fill_pop(e, &lam);
        if (lam > level)
            level = lam;
        for (size_t j = 0; j < lists[l].n; j++) {
            uint32_t f = lists[l].v[j];
            if (e->f_frozen[f])
                continue;
            if (!ct)
                freeze_one(e, f, level, l);
            else if (freeze_ct(e, f, level, l))
                return WEFT_ENOMEM;
        }
    }
    if (e->above_on)
        for (size_t i = 0; i < e->comp_links.n; i++) {
            uint32_t l = e->comp_links.v[i];
            e->l_load[l] = cap[l] - e->resid[l]; /* every active flow on it is in the component */
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
        if (nr == e->f_rate[f] && weft__evheap_contains(&e->heap, f))
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

/* Refilling above (engine.h, sim_engine_set_above). Progressive filling
 * freezes flows in the order of their levels, and a flow f freezes at the
 * first of its links to saturate. Drop f: below its level x_f no link of
 * f's route saturated (f would have frozen there), and every other link's
 * key does not depend on f, so every link saturating below x_f saturates at
 * the same level and freezes the same flows at the same rates. So after
 * drains of least level x the flows below x keep their rates, and the
 * filling goes on from x with the others: on each of their links the
 * capacity less what the flows below x take (its load less theirs), each
 * link's key as a whole refill would have it at level x. In exact
 * arithmetic the rates are those of refilling the whole component; in
 * floating point the loads are kept by additions in another order (a whole
 * refill recomputes them). ABOVE_TOL takes in the flows within rounding of
 * x. With only drains since the last refill (a flow that starts has no
 * level): the all-to-all whose pairs drain one by one refills, per drain,
 * the flows above it rather than its whole component.
 *
 * How a refill above runs (refill_above, pop_above). The flows at or above
 * x are found by a scan of a_lvl (their levels in act's order), and their
 * links' sums set up; then each link that pops freezes its unfrozen flows
 * straight from its own list (every active flow on it: those below x are
 * frozen from the fill that gave them their rates, so the refill builds no
 * per-link lists of its own) and sets the key of each link those flows
 * touch once per pop, from its sums after the pop (freeze_one sets one per
 * flow and link: a pop freezes some 55 flows of 7 filling links each in
 * the DLRM all-to-all of 128 GPUs, most sharing their first links). Last,
 * a flow's rate moves only when the refill moved it by more than KEEP_TOL
 * of itself: in that all-to-all a refill gives 1,900 flows a rate on
 * average, of which 970 differ from their old one by rounding alone
 * (below 1e-13: the loads are summed in another order) and 370 really
 * changed (by more than 1e-9; next to none between). The others keep
 * their rate and their drain event, which is exact for the kept rate, so
 * a drain moves by some KEEP_TOL of its remaining time, and nothing is
 * rescheduled for rounding. Skipping the flows whose rate cannot change
 * altogether (tracking which links a drain disturbs) would not pay there:
 * the flows that change cross 190 to 210 of the 300 links of a refill,
 * whose lists hold 25,000 entries, more than the 13,000 filling entries
 * of the flows refilled.
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
 * real changes exceed 1e-9): the flow keeps it (see "How a refill above
 * runs"). */
#define KEEP_TOL 1e-13

weft_err sim_eng_build_above(sim_engine *e)
{
    e->above_on = e->above_ask && !e->plain && e->n_cls == 1 && !e->b_size && !e->ct_f.n &&
                  !e->dep_f.n && !e->q_f.n;
    e->above_lvl = INFINITY;
    if (!e->above_on)
        return WEFT_OK;
    size_t nf = e->n_flows ? e->n_flows : 1, nl = e->n_links ? e->n_links : 1;
    e->f_lvl = weft__calloc(nf, sizeof *e->f_lvl);
    e->f_apos = weft__malloc(nf * sizeof *e->f_apos);
    e->l_load = weft__calloc(nl, sizeof *e->l_load);
    e->a_lvl = weft__calloc(nf, sizeof *e->a_lvl);
    e->pl = weft__malloc(nl * sizeof *e->pl);
    e->l_idx = weft__malloc(nl * sizeof *e->l_idx);
    e->ck = weft__malloc(nl * sizeof *e->ck);
    return e->f_lvl && e->f_apos && e->l_load && e->a_lvl && e->pl && e->l_idx && e->ck
               ? WEFT_OK
               : WEFT_ENOMEM;
}

/* The pop of link l at `level` in refill_above: freezes its unfrozen flows
 * (its list holds every active flow on it; those below the refill's level
 * stay frozen from the fill that gave them their rates), each as
 * freeze_one, and then sets the heap key of each link they touch once,
 * from its sums after the pop, in the order of first touch (freeze_one
 * sets a key per flow and link). */
static void pop_above(sim_engine *e, uint32_t l, double level)
{
    uint64_t ps = ++e->epoch;
    size_t nt = 0;
    const uint32_t *restrict off = e->rf_off, *restrict link = e->rf_link;
    const double *restrict coef = e->rf_coef;
    double *restrict resid = e->resid, *restrict wsum = e->wsum;
    uint32_t *restrict ucount = e->ucount, *restrict pl = e->pl;
    uint64_t *restrict stamp = e->lstamp;
    uint8_t *restrict frozen = e->f_frozen;
    stamp[l] = ps; /* out of the heap already */
    const vec32 *lf = &e->lflows[l];
    for (size_t j = 0; j < lf->n; j++) {
        uint32_t f = lf->v[j];
        if (frozen[f])
            continue;
        double w = sim_eng_weight(e, f), rate = w * level;
        frozen[f] = 1;
        e->f_new[f] = rate;
        e->f_lvl[f] = level;
        e->a_lvl[e->f_apos[f]] = level;
        uint32_t r = e->f_route[f];
        for (uint32_t k = off[r], end = off[r + 1]; k < end; k++) {
            uint32_t l2 = link[k];
            resid[l2] -= coef[k] * rate;
            wsum[l2] -= coef[k] * w;
            ucount[l2]--;
            if (stamp[l2] != ps) {
                stamp[l2] = ps;
                pl[nt++] = l2;
            }
        }
    }
    if (e->ck_on) {
        for (size_t i = 0; i < nt; i++) {
            uint32_t l2 = pl[i];
            e->ck[e->l_idx[l2]] = ucount[l2] ? resid[l2] / wsum[l2] : INFINITY;
        }
        return;
    }
    for (size_t i = 0; i < nt; i++) {
        uint32_t l2 = pl[i];
        if (!ucount[l2])
            fill_remove(e, l2);
        else
            fill_set(e, l2, resid[l2] / wsum[l2]);
    }
}

static weft_err refill_above(sim_engine *e, double t, double x)
{
    uint64_t ep = ++e->epoch;
    double lo = x * (1 - ABOVE_TOL);
    e->seeds.n = 0;
    e->comp_flows.n = e->comp_links.n = 0;
    if (weft__grow((void **)&e->comp_flows.v, &e->comp_flows.cap, e->act.n,
                   sizeof *e->comp_flows.v))
        return WEFT_ENOMEM;
    size_t nf = 0;
    for (size_t i = 0; i < e->act.n; i++)
        if (e->a_lvl[i] >= lo)
            e->comp_flows.v[nf++] = e->act.v[i];
    e->comp_flows.n = nf;
    if (!e->comp_flows.n)
        return WEFT_OK;
    e->st.refills++;
    e->st.refilled += e->comp_flows.n;
    const uint32_t *restrict off = e->rf_off, *restrict link = e->rf_link;
    const double *restrict coef = e->rf_coef;
    double *restrict resid = e->resid, *restrict wsum = e->wsum;
    uint32_t *restrict ucount = e->ucount;
    uint64_t *restrict stamp = e->lstamp;
    for (size_t i = 0; i < e->comp_flows.n; i++) {
        uint32_t f = e->comp_flows.v[i], r = e->f_route[f];
        double w = sim_eng_weight(e, f), rate = e->f_rate[f];
        e->f_frozen[f] = 0;
        for (uint32_t k = off[r], end = off[r + 1]; k < end; k++) {
            uint32_t l = link[k];
            if (stamp[l] != ep) {
                stamp[l] = ep;
                if (sim_eng_vec_push(&e->comp_links, l))
                    return WEFT_ENOMEM;
                resid[l] = e->cap[l] - e->l_load[l];
                wsum[l] = 0;
                ucount[l] = 0;
            }
            resid[l] += coef[k] * rate;
            wsum[l] += coef[k] * w;
            ucount[l]++;
        }
    }
    /* No link saturates below lo in exact arithmetic: the level starts
     * there, so rounding cannot give a flow a lower rate (or none). */
    double level = lo;
    size_t nc = e->comp_links.n;
    e->ck_on = nc <= e->scan_max;
    if (e->ck_on) {
        /* Few links (sim_engine_set_scan): their keys in comp_links' order,
         * the least found by a scan at each pop (ties to the first), cheaper
         * there than a heap's updates: 35 pops over 300 links a refill in the
         * DLRM all-to-all of 128 GPUs. */
        for (size_t i = 0; i < nc; i++) {
            uint32_t l = e->comp_links.v[i];
            e->l_idx[l] = (uint32_t)i;
            e->ck[i] = resid[l] / wsum[l];
        }
        for (;;) {
            size_t at = nc;
            double lam = INFINITY;
            for (size_t i = 0; i < nc; i++) {
                /* Branch-free: the least key is not predictable. */
                bool less = e->ck[i] < lam;
                lam = less ? e->ck[i] : lam;
                at = less ? i : at;
            }
            if (at == nc)
                break;
            e->ck[at] = INFINITY;
            if (lam > level)
                level = lam;
            pop_above(e, e->comp_links.v[at], level);
        }
    } else {
        for (size_t i = 0; i < nc; i++) {
            uint32_t l = e->comp_links.v[i];
            weft__evheap_set(&e->fill, l, resid[l] / wsum[l]);
        }
        while (e->fill.n) {
            double lam;
            uint32_t l = fill_pop(e, &lam);
            if (lam > level)
                level = lam;
            pop_above(e, l, level);
        }
    }
    for (size_t i = 0; i < e->comp_flows.n; i++) {
        uint32_t f = e->comp_flows.v[i], r = e->f_route[f];
        double nr = e->f_new[f], old = e->f_rate[f];
        /* A rate that moved by rounding only stays (KEEP_TOL). */
        if (fabs(nr - old) <= KEEP_TOL * old && weft__evheap_contains(&e->heap, f))
            continue;
        for (uint32_t k = e->rf_off[r]; k < e->rf_off[r + 1]; k++)
            e->l_load[e->rf_link[k]] += e->rf_coef[k] * (nr - old);
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
