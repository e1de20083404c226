/* The flow-level engine: max-min fair sharing of links by fluid flows.
 *
 * Model. A link has a capacity in bytes/s. A flow has a route, a list of
 * (link, coefficient) pairs: at rate r it loads each of its links by
 * coefficient * r. A single path has coefficient 1 on each link; an ECMP
 * split has the per-link fractions of paths.h (the flow moves in lockstep
 * over its paths at fixed ratios, as hashed ECMP does); a symmetry-reduced
 * flow class (see ring.c) has coefficients that also count how many members
 * of the class share one link. Rates are max-min fair: progressive filling
 * raises all unfrozen flows of a connected component together until a link
 * saturates, freezes the flows that cross it, and repeats.
 *
 * Weights (sim_engine_add_weighted_flow). A flow may carry a weight w > 0
 * (default 1): sharing is then weighted max-min fair, a flow's rate is w
 * times the filling level, so the flows a link freezes get rates in
 * proportion to their weights. With every weight 1 this is the plain
 * model above, bit for bit (x 1.0 is exact). The plan simulator weights
 * the flows of an alltoallv plan by their bytes in the fluid model only
 * (docs/sim.md, "Sharing in proportion to bytes"): flows that share a
 * bottleneck then drain together, as a schedule pacing each transfer at
 * its planned rate would; runtimes share per flow, so their models keep
 * weight 1. A cut-through pair must have equal weights (a forwarder and
 * its dep carry the same bytes; WEFT_EINVAL otherwise), so a coupled
 * forwarder, frozen at its dep's level, gets its dep's rate.
 *
 * Traffic classes (sim_engine_set_class). A flow is in class 0 (the
 * default: training traffic) or a background class 1 .. 7, and links serve
 * the classes in strict priority: class 0 is filled max-min fair (with its
 * weights) on the links' capacities as if no other class existed, then
 * class 1 max-min fair on what class 0 left of each link, then class 2 on
 * what classes 0 and 1 left, and so on; a flow whose betters leave a link
 * of its route nothing waits at rate 0. There is no sharing between
 * classes, weighted or otherwise: a background class only ever takes
 * capacity a better class leaves idle, and is preempted the moment that
 * class wants it back (a fluid strict-priority scheduler, as 802.1Q strict
 * priority or tc-prio(8), with no buffers to drain). Each class keeps its
 * own per-link lists and refills only when its own flows or the capacity
 * left to it change, so the guarantee is exact: a class-0 flow whose
 * dependencies, cut-through and queue deps are all (transitively) class 0
 * gets the same start, drain and done times, bit for bit, with or without
 * any background flows (the flows of a class only see the classes before
 * it). Runs with no background flow are the classless model, bit for bit.
 * A token bucket shapes class 0 only: its tokens count class 0's bytes,
 * and a background class may use the link's rate (the bucket's fill rate)
 * that class 0 leaves, never the peak, so it can neither take class 0's
 * tokens nor delay it. A cut-through pair must be in one class (WEFT_EINVAL
 * from sim_engine_run otherwise). A run with background flows is never
 * reduced by symmetry.
 *
 * Time. A flow is released when all the flows it depends on are done, and
 * starts `alpha` seconds later (the per-op overhead). Its bytes are in flight
 * along the whole route at once: it competes for bandwidth from its start
 * until its bytes are drained, then completes `lat` seconds later (the route
 * latency); only then are its dependents released. A flow with no links
 * drains at once.
 *
 * Cut-through (sim_engine_add_ct_dep). A forwarder f of dep c starts at
 * c's start + c's route latency (+ alpha) instead of after c is done. Let
 * x(t) be the bytes a flow has sent. f keeps x_f <= x_c: while it has
 * caught up (x_f = x_c) it is coupled to c, which in progressive filling
 * means f stops rising when c freezes (a flow-to-flow constraint; the pair
 * is one component); when its own links hold it below c's rate it falls
 * behind and runs uncoupled on its backlog, and a catch-up event at the
 * exact time x_f reaches x_c (rates are piecewise constant) couples it
 * again. A forwarder with several deps is capped by every dep it has
 * caught up with. When its bytes are sent it waits (F_HOLD, holding no
 * bandwidth) until every cut-through dep is done, so a chain of K hops of
 * bandwidth B and latency L takes bytes / B + K L. The coupling compares
 * bytes sent, not bytes received one latency later: inside a transfer a
 * forwarder may run up to (dep rate x dep latency) bytes ahead of the
 * data's arrival, never faster than its links; its start and finish are
 * charged the latency. Catch-up events use ids n_flows + f in the event
 * heap, so they are ordered by (time, sequence) like the others.
 *
 * Incremental rates. When flows start or drain, only the connected
 * components of the (active flow, link) graph that contain their links are
 * recomputed; every event time is processed as one batch (all events at
 * exactly that time, including flows released at it), then each touched
 * component is refilled once. Cost per batch: O(size of the touched
 * components x water-filling rounds).
 *
 * Determinism. Events are ordered by (time, sequence number) in an
 * intrusive heap; component discovery, filling and all sums run in
 * index order; nothing depends on addresses or hashing. The same inputs
 * give bit-identical results. A flow whose remaining bytes fall below
 * 1e-12 of its size through rounding is treated as drained.
 *
 * Symmetry (sim_engine_set_symmetry, off by default). Collectives are
 * regular: the flows of a multi-ring plan on a fabric of identical hosts
 * fall into few classes whose members have the same bytes, latency, deps'
 * classes and load on the same classes of links. With symmetry on, a run
 * of at least 4,096 flows is reduced to its coarsest equitable partition
 * of flows and links (colour refinement over the dependency DAG, see
 * engine_symm.c) when that at least halves the flows, and the quotient
 * (one flow per class, its load spread over its link class) is simulated
 * instead; every member gets its class's times. Exact in exact
 * arithmetic (members of a class start, freeze, couple and drain
 * together); in floating point the sums run in another order, so results
 * move by rounding only (within 1e-9 relative). The stats then count the
 * quotient's events. Smaller runs, or runs that do not reduce, are
 * simulated flow by flow, bit for bit as without symmetry.
 *
 * Storage: arrays indexed by link, route and flow ids, grown amortised;
 * nothing is allocated per event.
 */
#ifndef WEFT_SIM_ENGINE_H
#define WEFT_SIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/err.h"

typedef struct sim_engine sim_engine;

/* n_links links with capacities cap[i] > 0 bytes/s. mult[i] (may be NULL
 * for all 1) is how many physical links link i stands for; it only scales
 * the per-link statistics. WEFT_EINVAL for a capacity or mult that is not
 * > 0 (0, negative, NaN), WEFT_ENOMEM. */
weft_err sim_engine_new(uint32_t n_links, const double *cap, const double *mult, sim_engine **out);
void sim_engine_free(sim_engine *e);

/* Gives link l a token bucket (a shaper, as tc-tbf(8)): tokens accrue at
 * the link's capacity up to `bytes`, and while the bucket holds tokens the
 * link carries up to `peak` > capacity bytes/s (the speed of the wire under
 * the shaper), each byte taking a token; empty, it carries its capacity.
 * The bucket holds `tokens` (0 .. bytes) at the start (tc-tbf(8)'s is
 * full after an idle moment). In fluid terms: at load x the tokens
 * change at capacity - x, capped at `bytes`; the link's capacity is `peak`
 * while tokens are left and its own when they are gone (an event at the
 * exact time they run out refills the link's component). A run with
 * buckets is never reduced by symmetry. WEFT_EINVAL for bad values. */
weft_err sim_engine_set_bucket(sim_engine *e, uint32_t l, double bytes, double peak, double tokens);

/* Adds a route of n (link, coefficient > 0) pairs and latency lat_s >= 0;
 * links may not repeat. Many flows may share one route. */
/* A route of no links and latency lat_s >= 0 whose flows start as soon as
 * their deps are done, without the run's alpha: local compute (a plan's
 * compute ops), which is no message and pays no per-message overhead. */
weft_err sim_engine_add_now_route(sim_engine *e, double lat_s, uint32_t *route_id);
weft_err sim_engine_add_route(sim_engine *e, uint32_t n, const uint32_t *link, const double *coef,
                              double lat_s, uint32_t *route_id);
/* Adds a flow of `bytes` >= 0 over a route. mult is how many real flows it
 * stands for (statistics only). */
weft_err sim_engine_add_flow(sim_engine *e, uint32_t route, double bytes, double mult,
                             uint32_t *flow_id);
/* sim_engine_add_flow with a weight w > 0 in the max-min sharing (see
 * "Weights"; sim_engine_add_flow is weight 1). */
weft_err sim_engine_add_weighted_flow(sim_engine *e, uint32_t route, double bytes, double mult,
                                      double w, uint32_t *flow_id);
/* Traffic classes 0 .. SIM_ENGINE_CLASSES - 1 (see "Traffic classes"). */
#define SIM_ENGINE_CLASSES 8
/* Puts flow f in class cls (0, training, by default; higher classes are
 * served after lower ones). WEFT_EINVAL for a bad flow or class. */
weft_err sim_engine_set_class(sim_engine *e, uint32_t f, uint32_t cls);
/* Flow f is released only after flow dep is done. */
weft_err sim_engine_add_dep(sim_engine *e, uint32_t f, uint32_t dep);
/* Flow f is queued behind flow dep (the next message of a FIFO stream):
 * it starts no earlier than dep has drained (its bytes have left; not its
 * route latency later), and pays no alpha for this wait, only after its
 * ordinary deps. At most one flow may be queued behind each flow
 * (WEFT_EINVAL from sim_engine_run otherwise). */
weft_err sim_engine_add_queue_dep(sim_engine *e, uint32_t f, uint32_t dep);
/* Flow f forwards (or reduces) the bytes dep delivers, cut through: f may
 * start once dep has started and its first byte has crossed dep's route
 * (dep's start + its latency), the bytes f has sent never exceed the bytes
 * dep has sent, and f drains no earlier than dep is done. Both flows must
 * have the same size and weight (WEFT_EINVAL). For a flow without links or bytes this
 * is sim_engine_add_dep (it takes no time, so forwarding changes nothing). */
weft_err sim_engine_add_ct_dep(sim_engine *e, uint32_t f, uint32_t dep);

/* Whether sim_engine_run may reduce the flows to symmetry classes (see
 * "Symmetry" above); call before sim_engine_run. */
void sim_engine_set_symmetry(sim_engine *e, bool on);

/* Runs every flow to completion. alpha_s is the per-flow start overhead.
 * WEFT_EVERIFY when flows never become ready (a dependency cycle), naming
 * one of them. May be called once. */
weft_err sim_engine_run(sim_engine *e, double alpha_s, weft_diag *d);

/* Filling as first written, for tests (call before sim_engine_run): every
 * link in the fill heap and every key set at once. Off by default: links
 * that double another are left out and keys that rise are set lazily
 * (engine_internal.h, engine_rates.c), which gives the same rates to the
 * bit, with less work. */
void sim_engine_set_plain(sim_engine *e, bool on);

/* Refilling above the drained level (call before sim_engine_run; off by
 * default, and off with sim_engine_set_plain): after a batch of events
 * that only drained flows, only the drained flows' region -- the flows
 * their links froze, the links of those, and so on, all at or above the
 * least drained level -- is filled again, over what the other flows leave
 * of each link (max-min fairness keeps those as they were, which a check
 * per saturated link confirms, the region growing where it does not:
 * engine_rates.c, "Refilling above"). The rates are
 * those of a whole refill in exact arithmetic; in floating point the
 * order of the sums differs, and a flow whose new rate is within 1e-13 of
 * its old one (rounding) keeps the old one and its drain event, so times
 * move in their last bits (engine_fill_test and engine_above_test bound
 * them within 1e-12 relative of the plain run). Off by default
 * because a caller may decide on exact ties or thresholds of times (the
 * ring's steady-state test extrapolates from differences of makespans);
 * weft_sim_plan turns it on. Runs with dependencies, queue or
 * cut-through edges, traffic classes or buckets refill whole components
 * regardless (through dependencies a run amplifies any change of
 * rounding: engine_rates.c, "Refilling above"). */
void sim_engine_set_above(sim_engine *e, bool on);
/* A refill above finds the link that saturates next by a scan of its
 * links' keys when it has at most max_links links (SIM_ENGINE_SCAN_LINKS
 * by default: the DLRM all-to-all of 128 GPUs refills some 190), else in
 * the fill heap (a scan per pop costs links x pops); the two break ties
 * of keys alike (the key set first pops first) and give the same run, to
 * the bit. For tests (call before sim_engine_run). */
#define SIM_ENGINE_SCAN_LINKS 512
void sim_engine_set_scan(sim_engine *e, uint32_t max_links);
/* Refills above leave out links that the flows left could no longer fill
 * (engine_rates.c, "Links that cannot fill"), which changes no pop and no
 * rate, to the bit. On by default; off for tests (call before
 * sim_engine_run). */
void sim_engine_set_prune(sim_engine *e, bool on);

/* Cutoff, for a caller that only needs a run's times when its makespan is
 * at most t (the fastest of several runs): set before sim_engine_run, the
 * run stops at its first event later than t, and sim_engine_cut is then
 * true and no flow's time is valid. Every event is a start, drain,
 * catch-up or completion of a flow not yet done, so its time is at most
 * the makespan: a cut run's makespan exceeds t. A run with buckets (whose
 * events are no flow's) ignores the cutoff. None by default. */
void sim_engine_set_cutoff(sim_engine *e, double t);
bool sim_engine_cut(const sim_engine *e);
/* A lower bound on the makespan of sim_engine_run(e, alpha_s), before the
 * run: alpha_s plus, over links, the most bytes its flows put on a link
 * (coefficient x bytes) over its capacity, as no flow starts before alpha
 * and a link carries at most its capacity; less 1e-6 of it, far above the
 * rounding of a run (a flow counts as drained with 1e-12 of its bytes
 * left; a symmetry-reduced run is within 1e-9). 0 with buckets (a
 * bucket's link carries more than its capacity while it holds tokens). */
double sim_engine_time_bound(const sim_engine *e, double alpha_s);

typedef struct sim_engine_stats {
    double makespan_s;     /* completion time of the last flow */
    uint64_t events;       /* start, drain and done events processed */
    uint64_t batches;      /* distinct event times */
    uint64_t refills;      /* component recomputations */
    uint64_t refilled;     /* flows those gave a rate, summed over them */
    uint64_t catchups;     /* cut-through catch-up events (counted in events too) */
    uint32_t flow_classes; /* flows simulated: the classes of a reduced run,
                              else every flow */
    uint32_t twin_links;   /* links filling left out, each doubling another
                              (sim_engine_set_plain) */
    uint32_t dead_links;   /* links refills above left out once no load the
                              flows left could fill them (engine_rates.c,
                              "Links that cannot fill") */
    /* Largest relative difference, over links, between the bytes the link
     * carried (rates integrated over time) and the bytes its flows put on
     * it (coefficient x size): the conservation check. */
    double conservation_err;
} sim_engine_stats;

void sim_engine_get_stats(const sim_engine *e, sim_engine_stats *out);
uint32_t sim_engine_num_flows(const sim_engine *e);
/* Times of a flow after the run: start (after alpha), drained, done. */
void sim_engine_flow_times(const sim_engine *e, uint32_t f, double *start, double *drained,
                           double *done);
/* The tokens link l's bucket holds at the end of the run (the makespan);
 * 0 for a link without one. */
double sim_engine_bucket_tokens(const sim_engine *e, uint32_t l);
/* Bytes a link carried (per physical link it stands for). */
double sim_engine_link_bytes(const sim_engine *e, uint32_t l);
/* The rate a flow was first given when it started (bytes/s; for a flow
 * without links or bytes, 0; for a background flow that started at rate
 * 0, its first rate above 0). */
double sim_engine_flow_rate0(const sim_engine *e, uint32_t f);

/* After sim_engine_run failed with WEFT_EVERIFY: a flow that never became
 * ready. */
uint32_t sim_engine_stuck_flow(const sim_engine *e);
/* The physical (engine) links of a flow's route; the array belongs to e. */
void sim_engine_flow_route(const sim_engine *e, uint32_t f, uint32_t *n, const uint32_t **links);
double sim_engine_flow_bytes(const sim_engine *e, uint32_t f);

#endif
