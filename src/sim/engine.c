/* The flow-level engine: the event loop and the results of a run. See
 * engine.h for the model and its guarantees, engine_internal.h for how the
 * engine is split into files. */
#include <math.h>

#include "base/alloc.h"
#include "sim/engine_internal.h"

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
        double start = at + (e->r_now && e->r_now[e->f_route[g]] ? 0 : alpha_s);
        if (e->f_nb && e->f_nb[g] > start)
            start = e->f_nb[g];
        e->f_state[g] = F_WAIT;
        weft__evheap_set(&e->heap, g, start);
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
        weft__evheap_set(&e->heap, g, start);
    }
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
            weft__evheap_set(&e->heap, g, t + e->r_lat[e->f_route[g]]);
        }
    }
}

weft_err sim_eng_run_all(sim_engine *e, double alpha_s, weft_diag *d)
{
    if (e->ran || !(alpha_s >= 0))
        return weft_diag_set(d, WEFT_EINVAL, "sim: engine already ran or bad alpha");
    e->ran = true;
    weft_err err;
    bool ct = e->ct_f.n > 0;
    e->b_ev = ct ? 2 * e->n_flows : e->n_flows;
    if ((err = sim_eng_build_classes(e)) == WEFT_EINVAL)
        return weft_diag_set(d, err,
                             "sim: a cut-through flow and its dep are in different classes");
    if (err || (err = sim_eng_build_succ(e)) || (err = sim_eng_build_ct(e)) ||
        (err = sim_eng_build_queue(e)) || (err = sim_eng_build_flows(e)) ||
        (err = sim_eng_build_fill(e)) || (err = sim_eng_build_above(e)) ||
        (err = weft__evheap_init(&e->heap, e->b_ev + (e->b_size ? e->n_links : 0))) ||
        (err = weft__evheap_init(&e->fill, e->n_links)))
        return weft_diag_code(d, err);
    e->slot = weft__malloc((e->n_slots ? e->n_slots : 1) * sizeof *e->slot);
    if (!e->slot)
        return weft_diag_code(d, WEFT_ENOMEM);
    for (uint32_t f = 0; f < e->n_flows; f++)
        if (!e->f_left[f]) {
            e->f_state[f] = F_WAIT;
            weft__evheap_set(&e->heap, f, e->r_now && e->r_now[e->fl[f].route] ? 0 : alpha_s);
        }
    uint32_t done = 0;
    bool cutoff = !e->b_size && e->cutoff < INFINITY;
    while (sim_eng_settle(e)) {
        double t = weft__evheap_top(&e->heap)->t;
        if (cutoff && t > e->cutoff) {
            e->cut = true; /* the makespan exceeds the cutoff (engine.h) */
            return WEFT_OK;
        }
        e->st.batches++;
        while (sim_eng_settle(e) && weft__evheap_top(&e->heap)->t == t) {
            uint32_t f = weft__evheap_pop(&e->heap);
            e->st.events++;
            if (f >= e->b_ev) {
                /* A bucket ran out of tokens: its link drops to its rate. */
                sim_eng_bucket_advance(e, f - e->b_ev, t);
                e->b_tok[f - e->b_ev] = 0;
                if ((err = sim_eng_vec_push(&e->seeds, f - e->b_ev)))
                    return weft_diag_code(d, err);
                continue;
            }
            if (f >= e->n_flows) {
                e->st.catchups++;
                if ((err = sim_eng_ct_catch_up(e, f - e->n_flows, t)))
                    return weft_diag_code(d, err);
                continue;
            }
            uint32_t r = e->fl[f].route;
            switch (e->f_state[f]) {
            case F_WAIT:
                e->f_start[f] = t;
                e->above_pending--;
                /* Forwarders cut through on f start once its first byte
                 * has crossed its route. */
                if (ct)
                    for (uint32_t i = e->cts_off[f]; i < e->cts_off[f + 1]; i++)
                        release(e, e->ct_f.v[e->cts[i]], t + e->r_lat[r], alpha_s);
                if (e->r_off[r] == e->r_off[r + 1] || e->fl[f].bytes == 0) {
                    e->fl[f].rem = 0;
                    e->f_drain[f] = t;
                    e->f_state[f] = F_TAIL;
                    weft__evheap_set(&e->heap, f, t + e->r_lat[r]);
                    release_queued(e, f, t, alpha_s);
                } else if ((err = sim_eng_activate(e, f, t)) ||
                           (ct && (err = sim_eng_ct_start(e, f, t)))) {
                    return weft_diag_code(d, err);
                }
                break;
            case F_ACTIVE:
                sim_eng_advance(e, f, t);
                /* What it moved and advancing did not add (engine_rates.c). */
                double rest = e->above_on ? e->fl[f].bytes : e->fl[f].rem;
                for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++)
                    e->carried[e->r_link.v[k]] += e->r_coef[k] * rest;
                e->fl[f].rem = 0;
                if ((err = sim_eng_deactivate(e, f)) || (ct && (err = sim_eng_ct_drained(e, f))))
                    return weft_diag_code(d, err);
                release_queued(e, f, t, alpha_s);
                if (ct && e->f_ctleft[f]) {
                    e->f_state[f] = F_HOLD; /* until its last cut-through dep is done */
                    break;
                }
                e->f_drain[f] = t;
                e->f_state[f] = F_TAIL;
                weft__evheap_set(&e->heap, f, t + e->r_lat[r]);
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
        if ((err = sim_eng_refill(e, t)))
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
            if ((err = sim_eng_ct_update(e, t)) || (err = sim_eng_refill(e, t)))
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
    e->st.flow_classes = e->n_flows;
    return WEFT_OK;
}

void sim_engine_set_cutoff(sim_engine *e, double t)
{
    e->cutoff = t;
}

bool sim_engine_cut(const sim_engine *e)
{
    return e->cut;
}

double sim_engine_time_bound(const sim_engine *e, double alpha_s)
{
    if (e->b_size)
        return 0;
    double most = 0;
    for (uint32_t l = 0; l < e->n_links; l++)
        if (e->expect[l] / e->cap[l] > most)
            most = e->expect[l] / e->cap[l];
    return (alpha_s + most) * (1 - 1e-6);
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

double sim_engine_bucket_tokens(const sim_engine *e, uint32_t l)
{
    if (!e->b_size || !(e->b_size[l] > 0))
        return 0;
    return sim_eng_bucket_at(e, l, e->st.makespan_s);
}
