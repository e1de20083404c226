/* Internals of the flow-level engine (engine.h gives the model and its
 * guarantees): the engine's state, shared by the files that implement it.
 * Only the engine's own files include this header.
 *
 * File order (each file uses only the ones before it; tools/file_cycles.py
 * checks the order):
 *
 *   engine_build.c  construction: sim_engine_new/_free, routes in CSR form,
 *                   flows and their per-flow arrays (grown amortised),
 *                   dependency and cut-through edges as they are added;
 *                   and, once at the start of a run, those edges turned
 *                   into CSR lists (sim_eng_build_succ, sim_eng_build_ct),
 *                   the flows' run records (sim_eng_build_flows) and the
 *                   routes filling walks (sim_eng_build_fill).
 *                   Nothing here runs the model.
 *   engine_rates.c  the active flows on each link and their max-min fair
 *                   rates: a flow joins and leaves its links' lists
 *                   (sim_eng_activate, _deactivate), its bytes are
 *                   integrated at its current rate (sim_eng_advance), and
 *                   sim_eng_refill recomputes by progressive filling, one
 *                   traffic class after the other, the components
 *                   touching the seeded links, reschedules the
 *                   drain events whose rates changed and queues the
 *                   forwarders whose catch-up times moved (sim_eng_ct_mark).
 *   engine_ct.c     cut-through coupling between a forwarder and its deps:
 *                   coupling at start, catch-up events, uncoupling on
 *                   drain, and the catch-up times of the queued forwarders
 *                   (sim_eng_ct_update). Uses engine_rates.c only.
 *   engine.c        the event loop (sim_eng_run_all: batches of events at
 *                   one time, then refills until no forwarder is left to
 *                   couple), releasing dependents, the conservation check,
 *                   and the accessors read after a run.
 *   engine_symm.c   sim_engine_run: with symmetry on, the flows and links
 *                   reduced to classes (colour refinement over the whole
 *                   DAG), the quotient engine run by sim_eng_run_all and
 *                   its times copied to every member; otherwise
 *                   sim_eng_run_all on the engine itself.
 *
 * Every function here takes an engine in the state its caller's phase
 * leaves it: the construction calls before sim_engine_run, the others
 * only inside it (after sim_eng_build_succ and sim_eng_build_ct). The
 * functions returning weft_err fail only with WEFT_ENOMEM (build_ct also
 * with WEFT_ELIMIT) and leave the engine to be freed, not resumed.
 */
#ifndef WEFT_SIM_ENGINE_INTERNAL_H
#define WEFT_SIM_ENGINE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"
#include "base/evheap.h"
#include "sim/engine.h"

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
/* A flow's bottleneck before it has one (engine_rates.c). */
#define SIM_NO_LINK UINT32_MAX
/* Couple-and-refill rounds at one event time, at most. */
#define CT_ROUNDS 1000

/* An active flow's drain key while refilling above (engine_rates.c,
 * drain_set), in one place since each update reads and writes it all:
 * held, the time of its key in the event heap (while it has one there);
 * t and seq its true key when stale, the one held then being earlier. */
typedef struct sim_ev_key {
    double held, t;
    uint64_t seq;
    bool stale;
} sim_ev_key;

/* A place of a region fill (engine_rates.c, region_setup): its sums and
 * counts, read together (struct sim_engine, pp). */
typedef struct sim_place {
    double resid, wsum;
    uint64_t stamp;
    uint32_t ucount, n, off;
} sim_place;

/* A flow's state while the engine runs, one cache line a flow (struct
 * sim_engine, fl): the fields a refill reads and writes together for each
 * flow it touches (finding a region, its new rate, integrating the old
 * one), which took a line each as arrays. route and bytes copy f_route
 * and f_bytes (set at the start of a run; those stay for construction and
 * the accessors); rem, the bytes left, integrated at rate up to upd;
 * stamp, the epoch of the component or region that took it last; lvl, bn
 * and bpos (refilling above only): the level it froze at, its bottleneck
 * (SIM_NO_LINK while it has none) and its place in that link's list l_bn.
 * 64 bytes, a line each (fl is aligned to one). */
typedef struct sim_flow {
    double rate, upd, rem, bytes, lvl;
    uint64_t stamp;
    uint32_t route, bn, bpos, spare;
} sim_flow;
_Static_assert(sizeof(sim_flow) == 64, "a flow's record is one cache line");

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
    uint8_t *r_now; /* routes whose flows start without alpha (compute); NULL: none */
    vec32 r_link;
    double *r_coef;
    size_t r_coef_cap;

    /* Flows. */
    uint32_t n_flows;
    size_t flow_cap;
    uint32_t *f_route;
    double *f_bytes, *f_mult, *f_new, *f_rate0;
    double *f_start, *f_drain, *f_done;
    double *f_w; /* weights (sim_engine_add_weighted_flow); NULL while
                    every flow has weight 1 */
    uint8_t *f_state, *f_frozen;
    sim_flow *fl;   /* per flow, from the start of a run (sim_eng_build_flows) */
    void *fl_mem;   /* fl's block (fl aligned to a cache line in it) */
    size_t *f_slot; /* offset of the flow's positions in `slot` */
    size_t n_slots;
    uint32_t *slot;      /* slot[f_slot[f] + k]: index of f in the list of its k-th link */
    uint32_t *f_left;    /* dependencies not yet done */
    vec32 dep_f, dep_on; /* dependency pairs, later turned into CSR */
    uint32_t *succ_off, *succ;

    /* Cut-through edges, edge i: forwarder ct_f.v[i] cut through on dep
     * ct_on.v[i]. ctd lists a forwarder's edges, cts a dep's (CSR). Only
     * allocated when there are edges, so store-and-forward runs pay
     * nothing. */
    vec32 ct_f, ct_on;
    uint32_t *ctd_off, *ctd, *cts_off, *cts;
    uint8_t *ct_cu;     /* per edge: the forwarder has caught up with the dep */
    uint32_t *f_ctleft; /* per flow: cut-through deps not yet done */
    double *f_ready;    /* per flow: latest release condition so far */
    uint8_t *f_dirty;   /* per flow: queued in ct_dirty */
    vec32 ct_dirty, ct_stack;

    /* Queue edges (sim_engine_add_queue_dep), pair i: q_f.v[i] waits for
     * q_on.v[i] to drain. q_next (per flow: the one flow queued behind
     * it, UINT32_MAX for none), f_nb (per flow: latest drain it waited
     * for) and f_rel (per flow: latest ordinary release) exist only when
     * there are such edges. */
    vec32 q_f, q_on;
    uint32_t *q_next;
    double *f_nb, *f_rel;

    /* Token buckets (sim_engine_set_bucket), allocated with the first:
     * per link b_size (bytes, 0 for a link without one), b_peak (its
     * capacity while it holds tokens), b_rate (the fill rate: its capacity
     * when empty), b_tok (tokens at time b_upd) and b_load (bytes/s its
     * flows put on it since then). A bucket's empty event has heap id
     * b_ev + link. */
    double *b_size, *b_peak, *b_rate, *b_tok, *b_upd, *b_load;
    uint32_t b_ev;

    /* Traffic classes (sim_engine_set_class): f_cls per flow, NULL while
     * every flow is class 0; n_cls = 1 + the highest class (1 until the
     * run starts). From the start of a run lflows holds n_cls x n_links
     * lists, class c's list of link l at c x n_links + l (class 0's are
     * the first n_links, as without classes); for c >= 1, ccap[(c - 1) x
     * n_links + l] is the capacity class c may use on link l (what the
     * classes before it left) and cseeds[c - 1] its links to refill. */
    uint8_t *f_cls;
    uint32_t n_cls, n_lists;
    double *ccap;
    vec32 *cseeds;
    /* Filling (sim_eng_build_fill, at the start of a run). A link that
     * doubles another (its twin: the same capacity, the same routes with
     * the same coefficients, after the other in each of them) always has
     * the other's flows, load and level, and the other always fills first
     * (engine_rates.c), so filling leaves it out: rf_off, rf_link and
     * rf_coef are the routes less such links (r_off, r_link.v and r_coef
     * themselves when none doubles another, rf_own false). fz_t, fz_seq
     * and fz_stale are the fill heap's lazy keys (engine_rates.c). plain
     * (sim_engine_set_plain): neither, filling as first written. */
    uint32_t *rf_off, *rf_link;
    double *rf_coef;
    bool rf_own, plain;
    uint8_t *l_twin; /* per link: doubles another (NULL when none does) */
    double *fz_t;
    uint64_t *fz_seq;
    uint8_t *fz_stale;

    /* Refilling above the drained level (engine_rates.c, "Refilling
     * above"): on while above_on (set at the start of a run: asked for,
     * above_ask, by sim_engine_set_above, not plain, one class, no
     * buckets, no dependency, queue or cut-through edges). Per flow: fl's
     * lvl, the filling level it froze at (its rate over its weight), and
     * bn, the link whose saturation froze it (its bottleneck; SIM_NO_LINK
     * while it has none), at bpos in that link's list l_bn; f_nbn the link a
     * refill in progress froze it at. Per link: l_load, coefficient x rate
     * summed over its active flows (filling routes); l_bn, its active
     * flows it froze; l_sub, at least the level of each active flow on it
     * that it did not freeze (INFINITY: not known). drained: the flows that
     * drained since the last refill; above_lvl the least level of those
     * (INFINITY for none), and above_full is set when a flow started (its
     * rates must be filled afresh). A region refill's scratch, indexed by
     * the link's place in comp_links (l_idx): rl, the region's flows on
     * each link (by their place in comp_flows; place i's are pp[i].n from
     * pp[i].off); ck their keys when a refill pops by a scan, and ck_seq
     * the sequence number the fill heap would give each key (ck_next the
     * next one), so that the scan breaks ties as the heap does; r_pop,
     * r_lvl and r_rmax: whether the link saturated, at which level, and
     * the highest level of a region flow it found frozen; r_nonr, the
     * highest level of the flows outside the region on it when scanned
     * (r_scan). pl: the places a pop touched, or a cursor per place. */
    bool above_on, above_ask, above_full;
    double above_lvl;
    /* Links that cannot fill (engine_rates.c): rf_end[r], the end of route
     * r's filling links for a region refill, which leaves out the links
     * found dead (l_dead); a link not dead is examined again after l_wait
     * more drains on it, l_gap doubling after each look that fails;
     * above_pending, the flows not started yet (none may be left). */
    uint32_t *rf_end, *l_gap, *l_wait;
    uint8_t *l_dead;
    uint32_t above_pending;
    bool prune; /* sim_engine_set_prune */
    double *l_load, *l_sub;
    uint32_t *f_nbn;
    vec32 *l_bn, drained, rl;
    uint32_t *pl, *l_idx;
    double *ck, *r_lvl, *r_rmax, *r_nonr;
    uint64_t *ck_seq, ck_next;
    uint8_t *r_pop, *r_scan;
    /* A region fill's own numbering (engine_rates.c, region_setup): per
     * place i (the link comp_links.v[i]) pp[i]: resid, wsum and ucount,
     * the sums the per-link arrays of those names hold in a whole refill,
     * n its region flows (from off in rl), stamp the pop that last touched
     * it (one record: a pop and region_flow read them together for each
     * pair they touch); p_last that pop's level, p_open the places a scan
     * still reads; per region flow j (comp_flows.v[j]) rg_w its weight,
     * rg_lvl the level it froze at in this fill, rg_fz whether it froze,
     * rg_nbn the link that froze it (fl's lvl and f_nbn of a whole refill;
     * the flows' own are set once the region is filled), and its filling
     * route as places rg_p and coefficients rg_c from rg_off[j] to
     * rg_off[j + 1] (grown as needed: rg_pcap, rg_ccap). rl then lists
     * region flows by j, not by flow. */
    struct sim_place *pp;
    double *p_last, *rg_w, *rg_lvl, *rg_c;
    uint32_t *p_open, *rg_off, *rg_p, *rg_nbn;
    uint8_t *rg_fz;
    size_t rg_pcap, rg_ccap;
    /* Lazy drain keys while refilling above (engine_rates.c, drain_set;
     * NULL otherwise), per flow. */
    struct sim_ev_key *ev;
    bool ck_on;        /* this refill pops by a scan of ck (engine_rates.c) */
    uint32_t scan_max; /* sim_engine_set_scan */

    weft__evheap heap;
    weft__evheap fill; /* links by saturation level while filling */
    uint64_t epoch;
    vec32 seeds, comp_links, comp_flows;
    bool ran;
    bool symm;      /* sim_engine_set_symmetry */
    bool cut;       /* the run stopped past cutoff (sim_engine_set_cutoff) */
    double cutoff;  /* INFINITY for none */
    uint32_t stuck; /* a flow that never became ready, after a failed run */
    sim_engine_stats st;
};

/* Appends x to v (the capacity checked here: pushes are frequent). */
static inline weft_err sim_eng_vec_push(vec32 *v, uint32_t x)
{
    if (v->n == v->cap && weft__grow((void **)&v->v, &v->cap, v->n + 1, sizeof *v->v))
        return WEFT_ENOMEM;
    v->v[v->n++] = x;
    return WEFT_OK;
}

/* The end of route r's filling links: rf_end once refills above may have
 * taken links that cannot fill out of it (engine_rates.c; the entries up
 * to the next route's start are then stale), else the next route's start. */
static inline uint32_t sim_eng_rf_end(const sim_engine *e, uint32_t r)
{
    return e->rf_end ? e->rf_end[r] : e->rf_off[r + 1];
}

/* Flow f's weight in the max-min sharing. */
static inline double sim_eng_weight(const sim_engine *e, uint32_t f)
{
    return e->f_w ? e->f_w[f] : 1.0;
}

/* Flow f's traffic class. */
static inline uint32_t sim_eng_class(const sim_engine *e, uint32_t f)
{
    return e->f_cls ? e->f_cls[f] : 0;
}

/* Link l's bucket tokens at time t: those of its last update plus its
 * rate less its load since, kept within [0, size]. */
static inline double sim_eng_bucket_at(const sim_engine *e, uint32_t l, double t)
{
    double tok = e->b_tok[l] + (e->b_rate[l] - e->b_load[l]) * (t - e->b_upd[l]);
    return tok < 0 ? 0 : tok > e->b_size[l] ? e->b_size[l] : tok;
}

/* Is rate a below rate b by more than rounding? */
static inline bool sim_eng_slower(double a, double b)
{
    return a < b * (1 - CT_RATE_TOL);
}

/* engine.c: the unreduced run, every flow on its own (sim_engine_run's
 * contract). */
weft_err sim_eng_run_all(sim_engine *e, double alpha_s, weft_diag *d);

/* engine_build.c: the successor lists of the dependency edges, and the
 * cut-through edges in CSR form with their per-flow state (nothing when
 * there are no cut-through edges). Called once, at the start of a run. */
weft_err sim_eng_build_succ(sim_engine *e);
weft_err sim_eng_build_ct(sim_engine *e);
/* The per-class lists, capacities and seeds (nothing when every flow is
 * class 0); WEFT_EINVAL when a cut-through pair spans two classes. */
weft_err sim_eng_build_classes(sim_engine *e);
/* fl from the flows' arrays (struct sim_flow); called once, at the start
 * of a run, after every flow is added. */
weft_err sim_eng_build_flows(sim_engine *e);
/* The filling routes and lazy keys (the fields' comment); called once,
 * at the start of a run, after every route and flow is added. */
weft_err sim_eng_build_fill(sim_engine *e);
/* q_next, f_nb and f_rel from the queue edges (nothing without any);
 * WEFT_EINVAL when two flows are queued behind one. */
weft_err sim_eng_build_queue(sim_engine *e);

/* engine_rates.c (each is described at its definition). */
/* Bucket of link l: its tokens integrated up to t at the current load. */
void sim_eng_bucket_advance(sim_engine *e, uint32_t l, double t);
/* Integrates f's current rate up to time t into its remaining bytes and
 * its links' carried bytes. */
void sim_eng_advance(sim_engine *e, uint32_t f, double t);
/* Queues the links of f's route for the next refill. */
weft_err sim_eng_seed_route(sim_engine *e, uint32_t f);
/* f starts at t (joins its links, rate 0 until the next refill) / f
 * drained (leaves its links); both seed f's route. */
weft_err sim_eng_activate(sim_engine *e, uint32_t f, double t);
weft_err sim_eng_deactivate(sim_engine *e, uint32_t f);
/* Queues forwarder f for sim_eng_ct_update (a no-op for a flow without
 * cut-through deps). Needs sim_eng_build_ct's arrays. */
weft_err sim_eng_ct_mark(sim_engine *e, uint32_t f);
/* Sets the key of the event heap's top until it is true (lazy drain keys,
 * engine_rates.c); whether an event is left. Call before reading the top. */
bool sim_eng_settle(sim_engine *e);
/* Max-min fair rates of the components touching the seeded links, at t,
 * class by class in priority order (engine.h, "Traffic classes"). */
weft_err sim_eng_refill(sim_engine *e, double t);
/* Sets above_on and allocates its arrays; called once, at the start of
 * a run, after sim_eng_build_classes. */
weft_err sim_eng_build_above(sim_engine *e);

/* engine_ct.c: called only when the engine has cut-through edges. */
weft_err sim_eng_ct_update(sim_engine *e, double t);
weft_err sim_eng_ct_catch_up(sim_engine *e, uint32_t f, double t);
weft_err sim_eng_ct_start(sim_engine *e, uint32_t f, double t);
weft_err sim_eng_ct_drained(sim_engine *e, uint32_t f);

#endif
