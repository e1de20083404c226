/* The ring collectives, simulated on flow classes. See weft/sim.h.
 *
 * One step of a ring moves size/N bytes from every rank r to rank r+1; the
 * N transfers of a step and their "waits for rank r-1" map are reduced to
 * classes by symm.c, then each class runs every step and slice as one
 * engine flow. Step k, slice s of class C waits for step k-1, slice s of
 * the class of C's predecessor, and for step k, slice s-1 of C itself
 * (slices of one step leave a rank in order).
 *
 * Before classes are formed, links that can never limit a rate are dropped
 * from the routes (prune.h; exact). When the exact partition has more than
 * opts.max_classes classes, a ring of private routes is approximated by its
 * periodic quotient (period.h) and the result says so.
 */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "sim/model.h"
#include "sim/period.h"
#include "sim/prune.h"
#include "sim/result.h"
#include "sim/ring_fast.h"
#include "weft/exec_model.h"
#include "weft/paths.h"
#include "weft/protocol.h"

typedef struct xfers {
    uint32_t *r_off, *link, *pred;
    double *coef, *lat;
    size_t link_cap, coef_cap;
} xfers;

static void xfers_fini(xfers *x)
{
    weft__free(x->r_off);
    weft__free(x->link);
    weft__free(x->pred);
    weft__free(x->coef);
    weft__free(x->lat);
}

/* The nodes of hop r: position r sends to the next position of its ring
 * of g (rank order when order is NULL). */
static void hop_ends(const weft_topo *t, uint32_t g, const uint32_t *order, uint32_t r,
                     weft_node_id *a, weft_node_id *b)
{
    uint32_t base = r / g * g, next = base + (r - base + 1) % g;
    *a = weft_topo_rank_node(t, (weft_rank){order ? order[r] : r});
    *b = weft_topo_rank_node(t, (weft_rank){order ? order[next] : next});
}

/* The steps of a ring collective over g ranks: reduce-scatter then
 * all-gather for an all-reduce. */
static uint64_t ring_steps(weft_coll coll, uint32_t g)
{
    return coll == WEFT_COLL_ALLREDUCE ? 2 * (uint64_t)(g - 1) : g - 1;
}

/* What each of the nl links carries over the whole collective, fixed by
 * the routes (every transfer drains all its bytes): steps x size / g (over
 * bw_scale) x the sum of the fractions of the n hops crossing it, into out
 * (zeroed). */
static void link_bytes(const xfers *x, uint32_t n, uint32_t nl, uint64_t steps, uint64_t size,
                       uint32_t g, double bw_scale, double *out)
{
    for (uint32_t k = 0; k < x->r_off[n]; k++)
        out[x->link[k]] += x->coef[k];
    for (uint32_t l = 0; l < nl; l++)
        out[l] *= (double)steps * ((double)size / g) / bw_scale;
}

/* Routes every ring hop: the n positions form n / g rings of g consecutive
 * positions each, and position r sends to the next position of its ring
 * (rank order when order is NULL); a hop's latency is its route's (the
 * protocol does not change a route: ring_hops adds what it does). */
static weft_err route_ring(const weft_topo *t, uint32_t n, uint32_t g, const uint32_t *order,
                           xfers *x, weft_diag *d)
{
    weft_paths *p = NULL;
    weft_err err = weft_paths_new(t, &p);
    if (err)
        return weft_diag_code(d, err);
    x->r_off = weft__malloc(((size_t)n + 1) * sizeof *x->r_off);
    x->pred = weft__malloc((size_t)n * sizeof *x->pred);
    x->lat = weft__malloc((size_t)n * sizeof *x->lat);
    if (!x->r_off || !x->pred || !x->lat) {
        err = weft_diag_code(d, WEFT_ENOMEM);
        goto free_paths;
    }
    x->r_off[0] = 0;
    size_t used = 0;
    for (uint32_t r = 0; r < n; r++) {
        weft_paths_route rt;
        weft_node_id a, b;
        hop_ends(t, g, order, r, &a, &b);
        if ((err = weft_paths_route_get(p, a, b, &rt, d)))
            goto free_paths;
        if (weft__grow((void **)&x->link, &x->link_cap, used + rt.n, sizeof *x->link) ||
            weft__grow((void **)&x->coef, &x->coef_cap, used + rt.n, sizeof *x->coef)) {
            err = weft_diag_code(d, WEFT_ENOMEM);
            goto free_paths;
        }
        if (used + rt.n > UINT32_MAX) {
            err = weft_diag_set(d, WEFT_ELIMIT, "sim: ring routes exceed 2^32 link entries");
            goto free_paths;
        }
        memcpy(x->link + used, rt.link, rt.n * sizeof *rt.link);
        memcpy(x->coef + used, rt.fracd, rt.n * sizeof *rt.fracd);
        used += rt.n;
        x->r_off[r + 1] = (uint32_t)used;
        x->lat[r] = weft_rat_to_double(rt.lat_ns) * 1e-9;
        x->pred[r] = r / g * g + (r % g + g - 1) % g;
    }
free_paths:
    weft_paths_free(p);
    return err;
}

/* x: the hops of route_ring's `hops` with the latency the resolved
 * settings o add to each (sim_model_route_extra), its own copy (a run
 * prunes its routes). WEFT_ENOMEM. */
static weft_err ring_hops(const weft_topo *t, uint32_t n, uint32_t g, const uint32_t *order,
                          const xfers *hops, const weft_sim_opts *o, double slice_bytes, xfers *x)
{
    size_t used = hops->r_off[n];
    x->r_off = weft__malloc(((size_t)n + 1) * sizeof *x->r_off);
    x->pred = weft__malloc((size_t)n * sizeof *x->pred);
    x->lat = weft__malloc((size_t)n * sizeof *x->lat);
    x->link = weft__malloc((used ? used : 1) * sizeof *x->link);
    x->coef = weft__malloc((used ? used : 1) * sizeof *x->coef);
    if (!x->r_off || !x->pred || !x->lat || !x->link || !x->coef)
        return WEFT_ENOMEM;
    x->link_cap = x->coef_cap = used ? used : 1;
    memcpy(x->r_off, hops->r_off, ((size_t)n + 1) * sizeof *x->r_off);
    memcpy(x->pred, hops->pred, (size_t)n * sizeof *x->pred);
    memcpy(x->link, hops->link, used * sizeof *x->link);
    memcpy(x->coef, hops->coef, used * sizeof *x->coef);
    for (uint32_t r = 0; r < n; r++) {
        weft_node_id a, b;
        hop_ends(t, g, order, r, &a, &b);
        x->lat[r] =
            hops->lat[r] + sim_model_route_extra(o, t, a, b, x->link + x->r_off[r],
                                                 x->r_off[r + 1] - x->r_off[r], slice_bytes);
    }
    return WEFT_OK;
}

/* Above this many engine flows (about 200 bytes each) a ring is not
 * simulated step by step but extrapolated from truncated runs, each of at
 * most the second budget. */
#define WEFT_SIM_RING_FULL_FLOWS 4000000u
#define WEFT_SIM_RING_EXTRAPOLATE_FLOWS 6000000u
/* Exact partitions larger than this are approximated by default. */
#define WEFT_SIM_RING_MAX_CLASSES 4096u

/* The reduced system: link classes and one route per transfer class. */
typedef struct ring_sys {
    const sim_classes *cls;
    const xfers *x;
    const double *ccap, *cmult;
    uint32_t *cpred;            /* per class: the class its members wait for */
    uint32_t *cr_off, *cr_link; /* class routes in CSR form, over link classes */
    double *cr_coef;
    uint32_t slices;
    double bytes, alpha;
    /* The runtime model's streams (weft/exec_model.h): a position's
     * transfers are the messages of one stream (source, destination),
     * posted step by step and slice by slice, so each queues behind the
     * one before it (sim_engine_add_queue_dep: it starts once that one has
     * drained, with no alpha of its own for the wait), as weft_sim_plan
     * queues the ring plan's. */
    bool fifo;
} ring_sys;

static weft_err class_routes(ring_sys *rs)
{
    const sim_classes *cls = rs->cls;
    const xfers *x = rs->x;
    double *acc = weft__calloc(cls->nl ? cls->nl : 1, sizeof *acc);
    rs->cr_off = weft__malloc(((size_t)cls->nf + 1) * sizeof *rs->cr_off);
    size_t total = 0;
    for (uint32_t c = 0; c < cls->nf; c++)
        total += x->r_off[cls->frep[c] + 1] - x->r_off[cls->frep[c]];
    rs->cr_link = weft__malloc((total ? total : 1) * sizeof *rs->cr_link);
    rs->cr_coef = weft__malloc((total ? total : 1) * sizeof *rs->cr_coef);
    if (!acc || !rs->cr_off || !rs->cr_link || !rs->cr_coef) {
        weft__free(acc);
        return WEFT_ENOMEM;
    }
    /* Per link class, the class's total load spread over the class's
     * links. */
    uint32_t len = 0;
    rs->cr_off[0] = 0;
    for (uint32_t c = 0; c < cls->nf; c++) {
        uint32_t rep = cls->frep[c], start = len;
        for (uint32_t k = x->r_off[rep]; k < x->r_off[rep + 1]; k++) {
            uint32_t lc = cls->lcls[x->link[k]];
            if (acc[lc] == 0)
                rs->cr_link[len++] = lc;
            acc[lc] += x->coef[k];
        }
        for (uint32_t i = start; i < len; i++) {
            uint32_t lc = rs->cr_link[i];
            rs->cr_coef[i] = (double)cls->fcount[c] * acc[lc] / cls->lcount[lc];
            acc[lc] = 0;
        }
        rs->cr_off[c + 1] = len;
    }
    weft__free(acc);
    return WEFT_OK;
}

/* Simulates `steps` ring steps of the reduced system, stopping at the
 * first event past cutoff (INFINITY: none; sim_engine_cut then says so);
 * *out is the engine after the run (the caller frees it, also on
 * failure). */
static weft_err run_steps(const ring_sys *rs, uint64_t steps, double cutoff, sim_engine **out,
                          weft_diag *d)
{
    const sim_classes *cls = rs->cls;
    uint32_t nf = cls->nf, P = rs->slices;
    weft_err err = sim_engine_new(cls->nl, rs->ccap, rs->cmult, out);
    if (err)
        return weft_diag_code(d, err);
    sim_engine *e = *out;
    for (uint32_t c = 0; c < nf; c++) {
        uint32_t r;
        if ((err = sim_engine_add_route(e, rs->cr_off[c + 1] - rs->cr_off[c],
                                        rs->cr_link + rs->cr_off[c], rs->cr_coef + rs->cr_off[c],
                                        rs->x->lat[cls->frep[c]], &r)))
            return weft_diag_code(d, err);
    }
    for (uint64_t k = 0; k < steps; k++)
        for (uint32_t s = 0; s < P; s++)
            for (uint32_t c = 0; c < nf; c++) {
                uint32_t f;
                if ((err = sim_engine_add_flow(e, c, rs->bytes, cls->fcount[c], &f)))
                    return weft_diag_code(d, err);
                uint32_t base = (uint32_t)((k * P + s) * nf);
                if (k > 0 && (err = sim_engine_add_dep(e, f, base - P * nf + rs->cpred[c])))
                    return weft_diag_code(d, err);
                /* The flow before it in (step, slice) order: slice s-1 of
                 * this step, or for slice 0 the last slice of step k-1. */
                if (rs->fifo && (k > 0 || s > 0))
                    err = sim_engine_add_queue_dep(e, f, base - nf + c);
                else if (s > 0)
                    err = sim_engine_add_dep(e, f, base - nf + c);
                if (err)
                    return weft_diag_code(d, err);
            }
    sim_engine_set_cutoff(e, cutoff);
    return sim_engine_run(e, rs->alpha, d);
}

/* The exact classes of the pruned ring, or, when there are more than
 * max_classes and the routes are private, its periodic quotient. */
static weft_err ring_classes(const sim_xfer_set *xs, const weft_sim_opts *o, bool one_ring,
                             sim_classes *cls, weft_sim_result *out, weft_diag *d)
{
    uint32_t maxc = o->max_classes ? o->max_classes : WEFT_SIM_RING_MAX_CLASSES;
    weft_err err = sim_classes_compute(xs, o->symmetry, o->symmetry ? maxc : 0, cls);
    if (err != WEFT_ELIMIT)
        return weft_diag_code(d, err);
    /* The periodic quotient is one cycle of positions: several rings have
     * no such cycle. */
    if (!one_ring)
        return weft_diag_set(d, WEFT_ELIMIT, "sim: the rings have more than %u transfer classes",
                             maxc);
    /* Defects: at most 1 % of the positions. */
    uint32_t period = 0, defects = 0;
    err = sim_period_classes(xs, WEFT_SIM_RING_MAX_CLASSES, xs->n / 100, cls, &period, &defects);
    if (err == WEFT_ELIMIT)
        return weft_diag_set(d, WEFT_ELIMIT,
                             "sim: the ring has more than %u transfer classes and no periodic "
                             "pattern of private routes to approximate it by (--no-symmetry "
                             "simulates every transfer)",
                             maxc);
    if (err)
        return weft_diag_code(d, err);
    out->period = period;
    out->defects = defects;
    return WEFT_OK;
}

/* Is every class route one link class that no other class uses? Then the
 * reduced ring is a cycle of independent servers (ring_fast.h). With nf
 * routes of one entry each over nl = nf link classes, the link classes are
 * distinct iff each is hit once; hit is scratch of nl entries. */
static bool decoupled(const ring_sys *rs, uint32_t *hit)
{
    const sim_classes *cls = rs->cls;
    if (cls->nf != cls->nl)
        return false;
    for (uint32_t c = 0; c < cls->nf; c++)
        if (rs->cr_off[c + 1] - rs->cr_off[c] != 1)
            return false;
    memset(hit, 0, (size_t)cls->nl * sizeof *hit);
    for (uint32_t c = 0; c < cls->nf; c++)
        if (hit[rs->cr_link[rs->cr_off[c]]]++)
            return false;
    return true;
}

/* The reduced ring on the streaming server simulator. */
static weft_err run_fast(const ring_sys *rs, uint64_t steps, weft_coll coll, uint32_t n,
                         uint64_t size, weft_sim_result *out, weft_diag *d)
{
    const sim_classes *cls = rs->cls;
    uint32_t nf = cls->nf;
    double *rate = weft__malloc((size_t)nf * sizeof *rate);
    double *lat = weft__malloc((size_t)nf * sizeof *lat);
    weft_err err = WEFT_ENOMEM;
    if (!rate || !lat)
        goto free_all;
    for (uint32_t c = 0; c < nf; c++) {
        rate[c] = rs->ccap[rs->cr_link[rs->cr_off[c]]] / rs->cr_coef[rs->cr_off[c]];
        lat[c] = rs->x->lat[cls->frep[c]];
    }
    sim_ring_fast_in in = {nf, rs->cpred, rate, lat, steps, rs->slices, rs->bytes, rs->alpha};
    sim_ring_fast_out fo;
    if ((err = sim_ring_fast_run(&in, &fo)))
        goto free_all;
    out->coll = coll;
    out->ranks = n;
    out->size = size;
    out->time_s = fo.makespan_s;
    out->algbw_gbps = fo.makespan_s > 0 ? (double)size / fo.makespan_s / 1e9 : 0;
    out->busbw_gbps = out->algbw_gbps * weft_sim_busbw_factor(coll, n);
    out->flows = fo.flows;
    out->events = fo.events;
    out->flow_classes = cls->nf;
    out->link_classes = cls->nl;
    out->conservation_err = fo.conservation_err;
    out->simulated_steps = steps;
free_all:
    weft__free(rate);
    weft__free(lat);
    if (err == WEFT_EVERIFY)
        return weft_diag_set(d, err, "sim: ring classes never all become ready");
    return weft_diag_code(d, err);
}

/* Runs the reduced ring, step by step or, past the flow budget,
 * extrapolated from its steady state, and fills out. A ring run step by
 * step stops once its makespan passes cutoff (INFINITY: none): *lost is
 * then true and out is not filled (an extrapolated ring always runs to
 * its end: its truncated rings' makespans are not its time). */
static weft_err run_ring(const ring_sys *rs, uint64_t steps, const double *ccap, weft_coll coll,
                         uint32_t n, uint64_t size, double cutoff, bool *lost, weft_sim_result *out,
                         weft_diag *d)
{
    const sim_classes *cls = rs->cls;
    uint64_t per_step = (uint64_t)cls->nf * rs->slices;
    sim_engine *e = NULL;
    weft_err err;
    if (per_step * steps <= WEFT_SIM_RING_FULL_FLOWS) {
        if ((err = run_steps(rs, steps, cutoff, &e, d)))
            goto free_engine;
        if (sim_engine_cut(e)) {
            *lost = true;
            goto free_engine;
        }
        sim_result_fill(out, e, cls, ccap, coll, n, size, 1.0, -1);
        out->simulated_steps = steps;
        goto free_engine;
    }
    /* Three truncated rings of k, k + m and k + 2m steps. m is a multiple of
     * the class cycle (after nf steps every chain of transfers is back in
     * its class) and k = steps mod m, so that a periodic steady state is
     * extrapolated by whole periods. When the two increments agree, the
     * remaining steps add whole increments; otherwise the transient guess
     * k0 doubles, up to the flow budget. */
    uint64_t nf = cls->nf, k0 = 4 * nf + 64, m = 0, k = 0;
    double tk[3] = {0, 0, 0};
    uint64_t events = 0, flows = 0;
    bool steady = false;
    for (; !steady; k0 *= 2) {
        m = (k0 / 2 + nf - 1) / nf * nf;
        k = k0 + (steps - k0) % m;
        if (k0 >= steps || per_step * (k + 2 * m) > WEFT_SIM_RING_EXTRAPOLATE_FLOWS ||
            k + 2 * m >= steps)
            break;
        for (int i = 0; i < 3; i++) {
            sim_engine_free(e);
            e = NULL;
            if ((err = run_steps(rs, k + (uint64_t)i * m, INFINITY, &e, d)))
                goto free_engine;
            sim_engine_stats st;
            sim_engine_get_stats(e, &st);
            tk[i] = st.makespan_s;
            events += st.events;
            flows += sim_engine_num_flows(e);
        }
        double d1 = tk[1] - tk[0], d2 = tk[2] - tk[1];
        steady = fabs(d1 - d2) <= 1e-9 * d2;
    }
    if (!steady) {
        err = weft_diag_set(d, WEFT_ELIMIT,
                            "sim: %u transfer classes x %u slices: no steady state found "
                            "within the flow budget; %llu ring steps are too many to "
                            "simulate one by one",
                            cls->nf, rs->slices, (unsigned long long)steps);
        goto free_engine;
    }
    uint64_t kb = k + 2 * m;
    double time = tk[2] + (double)((steps - kb) / m) * (tk[2] - tk[1]);
    sim_result_fill(out, e, cls, ccap, coll, n, size, (double)steps / (double)kb, time);
    out->events = events;
    out->flows = flows;
    out->simulated_steps = kb;
    out->extrapolated = true;
    err = WEFT_OK;
free_engine:
    sim_engine_free(e);
    return err;
}

weft_err weft_sim_ring(const weft_topo *t, weft_coll coll, uint64_t size, const weft_sim_opts *o,
                       weft_sim_result *out, weft_diag *d)
{
    return weft_sim_ring_order(t, coll, NULL, size, o, out, d);
}

/* True when every position of order names a rank (< nranks) and no rank
 * appears twice in one ring of g positions (scratch: nranks bytes). */
static weft_err check_order(const uint32_t *order, uint32_t n, uint32_t g, uint32_t nranks,
                            weft_diag *d)
{
    uint8_t *seen = weft__calloc(nranks ? nranks : 1, 1);
    if (!seen)
        return weft_diag_code(d, WEFT_ENOMEM);
    weft_err err = WEFT_OK;
    for (uint32_t p = 0; p < n && !err; p++) {
        if (p % g == 0)
            for (uint32_t q = p; q < p + g && q < n; q++)
                if (order[q] < nranks)
                    seen[order[q]] = 0;
        if (order[p] >= nranks || seen[order[p]])
            err = weft_diag_set(d, WEFT_EINVAL, "sim: ring order position %u: rank %u %s", p,
                                order[p], order[p] >= nranks ? "is not a rank" : "appears twice");
        else
            seen[order[p]] = 1;
    }
    weft__free(seen);
    return err;
}

static weft_err ring_comm(const weft_topo *t, const uint32_t *order, uint32_t n, uint32_t g,
                          sim_comm *out, weft_diag *d);
static weft_err ring_run(const weft_topo *t, weft_coll coll, const uint32_t *order, uint32_t n,
                         uint32_t g, uint64_t size, const weft_sim_opts *o, const sim_comm *cm,
                         const xfers *hops, int proto, double cutoff, bool *lost,
                         weft_sim_result *out, weft_diag *d);
static weft_err ring_bound(const weft_topo *t, weft_coll coll, uint32_t n, uint32_t g,
                           uint64_t size, const weft_sim_opts *o, const sim_comm *cm,
                           const xfers *hops, int proto, double *bound, weft_diag *d);

/* A rings_sim call's protocols for sim_model_fastest: protocol k is
 * protos[k]. */
typedef struct ring_job {
    const weft_topo *t;
    weft_coll coll;
    const uint32_t *order;
    uint32_t n, g;
    uint64_t size;
    const weft_sim_opts *o;
    const sim_comm *cm;
    const xfers *hops;
    const int *protos;
} ring_job;

static weft_err ring_proto(void *ctx, uint32_t k, double cutoff, bool *lost, weft_sim_result *out,
                           weft_diag *d)
{
    const ring_job *j = ctx;
    return ring_run(j->t, j->coll, j->order, j->n, j->g, j->size, j->o, j->cm, j->hops,
                    j->protos[k], cutoff, lost, out, d);
}

/* n positions of order (NULL: the ranks in order), in rings of g
 * consecutive positions that all run at once; see weft_sim_rings. */
static weft_err rings_sim(const weft_topo *t, weft_coll coll, const uint32_t *order, uint32_t n,
                          uint32_t g, uint64_t size, const weft_sim_opts *o, weft_sim_result *out,
                          weft_diag *d)
{
    weft_sim_opts defaults;
    if (!o) {
        weft_sim_opts_init(&defaults);
        o = &defaults;
    }
    if (coll != WEFT_COLL_ALLGATHER && coll != WEFT_COLL_REDUCESCATTER &&
        coll != WEFT_COLL_ALLREDUCE)
        return weft_diag_set(d, WEFT_EINVAL, "sim: the ring algorithm does not do %s",
                             weft_coll_name(coll));
    if (g < 2)
        return weft_diag_set(d, WEFT_EINVAL, "sim: a ring needs at least 2 ranks, %s %u",
                             n == g ? "the fabric has" : "a group has", g);
    if (n % g)
        return weft_diag_set(d, WEFT_EINVAL, "sim: %u positions are not rings of %u", n, g);
    if (order) {
        weft_err cerr = check_order(order, n, g, weft_topo_num_ranks(t), d);
        if (cerr)
            return cerr;
    }
    sim_comm cm;
    weft_err cerr = ring_comm(t, order, n, g, &cm, d);
    if (cerr)
        return cerr;
    int protos[WEFT_PROTO_COUNT];
    uint32_t np = sim_model_protos(o, t, &cm, coll, protos);
    xfers hops;
    memset(&hops, 0, sizeof hops);
    if (!(cerr = route_ring(t, n, g, order, &hops, d))) {
        ring_job job = {t, coll, order, n, g, size, o, &cm, &hops, protos};
        bool lost = false;
        /* NCCL's choice by weft's estimate: the fastest protocol, the
         * first in protos' order on a tie, each one's time bound first
         * (one routing serves them all), then by bound with a cutoff
         * (sim_model_fastest): the same choice and result as running every
         * one. */
        double lb[WEFT_PROTO_COUNT];
        for (uint32_t k = 0; np > 1 && k < np && !cerr; k++)
            cerr = ring_bound(t, coll, n, g, size, o, &cm, &hops, protos[k], &lb[k], d);
        uint32_t kb;
        if (!cerr)
            cerr = np == 1 ? ring_proto(&job, 0, INFINITY, &lost, out, d)
                           : sim_model_fastest(np, lb, ring_proto, &job, out, &kb, d);
    }
    xfers_fini(&hops);
    return cerr;
}

/* The communicator of rings of g positions of order (NULL: the ranks in
 * order): the ring holding the lowest rank, as sim_comm_of_plan takes the
 * ring plan's. */
static weft_err ring_comm(const weft_topo *t, const uint32_t *order, uint32_t n, uint32_t g,
                          sim_comm *out, weft_diag *d)
{
    uint32_t at = 0;
    for (uint32_t p = 0; order && p < n; p++)
        if (order[p] < order[at])
            at = p;
    uint32_t lo = at / g * g, *ranks = weft__malloc((size_t)g * sizeof *ranks);
    if (!ranks)
        return weft_diag_code(d, WEFT_ENOMEM);
    for (uint32_t q = 0; q < g; q++)
        ranks[q] = order ? order[lo + q] : lo + q;
    weft_err err = sim_comm_of(t, ranks, g, out, d);
    weft__free(ranks);
    return err;
}

/* The settings of protocol proto on communicator cm, resolved from o for
 * rings of g of `size` bytes; WEFT_EINVAL for settings a ring cannot run
 * with. */
static weft_err ring_settings(const weft_topo *t, weft_coll coll, uint32_t g, uint64_t size,
                              const weft_sim_opts *o, const sim_comm *cm, int proto,
                              weft_sim_opts *out, weft_diag *d)
{
    weft_sim_opts asked = *o;
    asked.proto = proto;
    weft_err rerr = sim_model_resolve_ring(&asked, t, cm, coll, size, g, out, d);
    if (rerr)
        return rerr;
    if (size == 0 || out->slices == 0 || !(out->alpha_s >= 0))
        return weft_diag_set(d, WEFT_EINVAL, "sim: size and slices must be > 0, alpha >= 0");
    if (out->cut_through)
        return weft_diag_set(d, WEFT_EINVAL,
                             "sim: cut-through is simulated for plans only "
                             "(weft_sim_plan of the ring plan)");
    return WEFT_OK;
}

/* A lower bound on the time ring_run would report for protocol proto: no
 * transfer starts before alpha and a link carries at most its capacity, so
 * the makespan is at least alpha plus the most bytes a link carries over
 * the collective (steps x size / g x the fractions of the hops crossing
 * it) over its capacity, less 1e-6 of it, far above rounding (as
 * sim_engine_time_bound); the time reported adds the launch latency. */
static weft_err ring_bound(const weft_topo *t, weft_coll coll, uint32_t n, uint32_t g,
                           uint64_t size, const weft_sim_opts *o, const sim_comm *cm,
                           const xfers *hops, int proto, double *bound, weft_diag *d)
{
    weft_sim_opts r;
    weft_err err = ring_settings(t, coll, g, size, o, cm, proto, &r, d);
    if (err)
        return err;
    uint32_t nl = weft_topo_num_links(t);
    double *load = weft__calloc(nl ? nl : 1, sizeof *load);
    if (!load)
        return weft_diag_code(d, WEFT_ENOMEM);
    link_bytes(hops, n, nl, ring_steps(coll, g), size, g, r.bw_scale, load);
    double most = 0;
    for (uint32_t l = 0; l < nl; l++) {
        double x = load[l] / sim_model_link_cap(&r, t, (weft_link_id){l});
        most = x > most ? x : most;
    }
    weft__free(load);
    *bound = (r.alpha_s + most) * (1 - 1e-6);
    if (*bound > 0 && r.launch_s > 0)
        *bound += r.launch_s;
    return WEFT_OK;
}

/* One run of rings_sim with protocol proto on communicator cm, over the
 * hops route_ring found. With a finite cutoff (the best time of another
 * protocol) a run whose makespan passes it stops (run_ring): *lost is then
 * true and out is not filled; the time reported is the makespan plus
 * launch_s >= 0, so a makespan above the cutoff is a time above it. */
static weft_err ring_run(const weft_topo *t, weft_coll coll, const uint32_t *order, uint32_t n,
                         uint32_t g, uint64_t size, const weft_sim_opts *o, const sim_comm *cm,
                         const xfers *hops, int proto, double cutoff, bool *lost,
                         weft_sim_result *out, weft_diag *d)
{
    weft_sim_opts resolved;
    weft_err rerr = ring_settings(t, coll, g, size, o, cm, proto, &resolved, d);
    if (rerr)
        return rerr;
    o = &resolved;
    uint64_t steps = ring_steps(coll, g);

    weft_err err;
    xfers x;
    memset(&x, 0, sizeof x);
    sim_classes cls;
    memset(&cls, 0, sizeof cls);
    ring_sys rs;
    memset(&rs, 0, sizeof rs);
    weft_sim_result res;
    memset(&res, 0, sizeof res);
    uint32_t pruned = 0, *hit = NULL;
    double *cap = NULL, *ccap = NULL, *cmult = NULL, *lbytes = NULL;

    if (ring_hops(t, n, g, order, hops, o, (double)size / g / o->slices / o->bw_scale, &x))
        goto nomem;
    uint32_t nl = weft_topo_num_links(t);
    cap = weft__malloc((size_t)(nl ? nl : 1) * sizeof *cap);
    lbytes = weft__calloc(nl ? nl : 1, sizeof *lbytes);
    if (!cap || !lbytes)
        goto nomem;
    for (uint32_t l = 0; l < nl; l++)
        cap[l] = sim_model_link_cap(o, t, (weft_link_id){l});
    /* The busiest links are taken from these totals, before any link is
     * pruned. */
    link_bytes(&x, n, nl, steps, size, g, o->bw_scale, lbytes);
    if (o->symmetry && (err = sim_prune_links(n, x.r_off, x.link, x.coef, nl, cap, &pruned)))
        goto fail;
    sim_xfer_set xs = {n, x.r_off, x.link, x.coef, x.lat, x.pred, nl, cap};
    if ((err = ring_classes(&xs, o, n == g, &cls, &res, d)))
        goto free_all;
    ccap = weft__malloc((size_t)(cls.nl ? cls.nl : 1) * sizeof *ccap);
    cmult = weft__malloc((size_t)(cls.nl ? cls.nl : 1) * sizeof *cmult);
    rs.cpred = weft__malloc((size_t)(cls.nf ? cls.nf : 1) * sizeof *rs.cpred);
    hit = weft__malloc((size_t)(cls.nl ? cls.nl : 1) * sizeof *hit);
    if (!ccap || !cmult || !rs.cpred || !hit)
        goto nomem;
    for (uint32_t c = 0; c < cls.nl; c++) {
        ccap[c] = cap[cls.lrep[c]];
        cmult[c] = cls.lcount[c];
    }
    for (uint32_t c = 0; c < cls.nf; c++)
        rs.cpred[c] = res.period ? (c + cls.nf - 1) % cls.nf : cls.fcls[x.pred[cls.frep[c]]];
    rs.cls = &cls;
    rs.x = &x;
    rs.ccap = ccap;
    rs.cmult = cmult;
    rs.slices = o->slices;
    rs.bytes = (double)size / g / o->slices / o->bw_scale;
    rs.alpha = o->alpha_s;
    rs.fifo = o->model == WEFT_SIM_RUNTIME;
    if ((err = class_routes(&rs)))
        goto fail;
    /* The streaming server simulator has no queues: the runtime model's
     * FIFO streams run on the engine. */
    if (o->symmetry && !rs.fifo && decoupled(&rs, hit))
        err = run_fast(&rs, steps, coll, g, size, &res, d);
    else
        err = run_ring(&rs, steps, ccap, coll, g, size, cutoff, lost, &res, d);
    if (err || *lost)
        goto free_all;
    res.transfers = (uint64_t)n * steps * o->slices;
    res.pruned_links = pruned;
    sim_result_busiest_links(&res, nl, lbytes, cap);
    sim_result_finish(&res, o);
    *out = res;
    err = WEFT_OK;
    goto free_all;
nomem:
    err = WEFT_ENOMEM;
fail:
    weft_diag_code(d, err);
free_all:
    weft__free(cap);
    weft__free(lbytes);
    weft__free(ccap);
    weft__free(cmult);
    weft__free(rs.cpred);
    weft__free(hit);
    weft__free(rs.cr_off);
    weft__free(rs.cr_link);
    weft__free(rs.cr_coef);
    sim_classes_fini(&cls);
    xfers_fini(&x);
    return err;
}

weft_err weft_sim_ring_order(const weft_topo *t, weft_coll coll, const uint32_t *order,
                             uint64_t size, const weft_sim_opts *o, weft_sim_result *out,
                             weft_diag *d)
{
    uint32_t n = weft_topo_num_ranks(t);
    return rings_sim(t, coll, order, n, n, size, o, out, d);
}

weft_err weft_sim_rings(const weft_topo *t, weft_coll coll, const uint32_t *order, uint32_t n,
                        uint32_t group, uint64_t size, const weft_sim_opts *o, weft_sim_result *out,
                        weft_diag *d)
{
    if (!order || n == 0 || group == 0)
        return weft_diag_set(d, WEFT_EINVAL, "sim: rings need an order and a group size");
    return rings_sim(t, coll, order, n, group, size, o, out, d);
}
