/* The flow-level engine's cut-through coupling (engine.h, "Cut-through"):
 * when a forwarder is coupled to a dep and when it catches up. See
 * engine_internal.h for the file order. */
#include <math.h>

#include "sim/engine_internal.h"

/* Sets the catch-up event of every queued forwarder: the earliest time its
 * sent bytes reach those of an active dep it is behind and faster than
 * (before that dep drains). A forwarder found caught up already is coupled
 * and its links seeded, so the caller refills again. */
weft_err sim_eng_ct_update(sim_engine *e, double t)
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
                double rf = e->fl[f].rate, rc = e->fl[c].rate;
                if (e->ct_cu[edge] || e->f_state[c] != F_ACTIVE || !sim_eng_slower(rc, rf))
                    continue;
                sim_eng_advance(e, f, t);
                sim_eng_advance(e, c, t);
                double gap = e->fl[f].rem - e->fl[c].rem; /* equal sizes: sent_c - sent_f */
                double when = t + gap / (rf - rc);
                if (gap <= CT_TOL * e->fl[f].bytes || when == t) {
                    e->ct_cu[edge] = 1;
                    coupled = true;
                    continue;
                }
                /* A background dep held at rate 0 has no drain event. */
                double drain_c =
                    weft__evheap_contains(&e->heap, c) ? e->heap.ent[e->heap.pos[c]].t : INFINITY;
                if (when < drain_c && when < best)
                    best = when;
            }
        if (coupled && sim_eng_seed_route(e, f))
            return WEFT_ENOMEM;
        if (best < INFINITY)
            weft__evheap_set(&e->heap, ev, best);
        else if (weft__evheap_contains(&e->heap, ev))
            weft__evheap_remove(&e->heap, ev);
    }
    e->ct_dirty.n = 0;
    return WEFT_OK;
}

/* A catch-up event of forwarder f: every dep it has reached is coupled. */
weft_err sim_eng_ct_catch_up(sim_engine *e, uint32_t f, double t)
{
    if (e->f_state[f] != F_ACTIVE)
        return WEFT_OK;
    sim_eng_advance(e, f, t);
    for (uint32_t k = e->ctd_off[f]; k < e->ctd_off[f + 1]; k++) {
        uint32_t edge = e->ctd[k], c = e->ct_on.v[edge];
        if (e->ct_cu[edge] || e->f_state[c] != F_ACTIVE)
            continue;
        sim_eng_advance(e, c, t);
        if (e->fl[f].rem - e->fl[c].rem <= CT_TOL * e->fl[f].bytes)
            e->ct_cu[edge] = 1;
    }
    if (sim_eng_seed_route(e, f))
        return WEFT_ENOMEM;
    return sim_eng_ct_mark(e, f);
}

/* Forwarder f starts: it has caught up with a dep that started at the same
 * instant (nothing sent yet), and is behind any other. */
weft_err sim_eng_ct_start(sim_engine *e, uint32_t f, double t)
{
    for (uint32_t k = e->ctd_off[f]; k < e->ctd_off[f + 1]; k++) {
        uint32_t edge = e->ctd[k], c = e->ct_on.v[edge];
        e->ct_cu[edge] = 0;
        if (e->f_state[c] != F_ACTIVE)
            continue;
        sim_eng_advance(e, c, t);
        if (e->fl[c].bytes - e->fl[c].rem <= CT_TOL * e->fl[c].bytes)
            e->ct_cu[edge] = 1;
    }
    return sim_eng_ct_mark(e, f);
}

/* Flow f drained: no forwarder is coupled to it any more (they are
 * drained too, or about to be, and now only wait for it to be done), and
 * its own couplings end. */
weft_err sim_eng_ct_drained(sim_engine *e, uint32_t f)
{
    for (uint32_t k = e->ctd_off[f]; k < e->ctd_off[f + 1]; k++)
        e->ct_cu[e->ctd[k]] = 0;
    uint32_t ev = e->n_flows + f;
    if (weft__evheap_contains(&e->heap, ev))
        weft__evheap_remove(&e->heap, ev);
    for (uint32_t k = e->cts_off[f]; k < e->cts_off[f + 1]; k++) {
        uint32_t edge = e->cts[k], g = e->ct_f.v[edge];
        if (e->f_state[g] != F_ACTIVE)
            continue;
        if (e->ct_cu[edge]) {
            e->ct_cu[edge] = 0;
            if (sim_eng_seed_route(e, g))
                return WEFT_ENOMEM;
        }
        if (sim_eng_ct_mark(e, g))
            return WEFT_ENOMEM;
    }
    return WEFT_OK;
}
