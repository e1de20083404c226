/* The flow-level engine's symmetry reduction (engine.h, "Symmetry") and
 * its entry point, sim_engine_run. See engine_internal.h for the file
 * order.
 *
 * Classes. Flows and links are coloured by refinement, as symm.c does for
 * one ring step, but over the whole dependency DAG at once: a flow's colour
 * hashes its bytes, its weight, its route's latency, the multiset of (link colour,
 * coefficient) of its route and, per edge kind (dependency, cut-through,
 * queue), the multiset of the colours of the flows it waits for; a link's
 * colour hashes its capacity, its previous colour and the multiset of
 * (flow colour, coefficient) crossing it. Flows are coloured in a
 * topological order, so one pass settles the dependency part whatever the
 * depth of the DAG; passes alternate with link passes until neither
 * partition splits (a handful of passes: the links' view is what is left
 * to settle). The result is an equitable partition: members of a flow
 * class have the same deps' classes, the same bytes, weight and latency and the
 * same load on every link class, and every link of a class sees the same
 * load from each flow class. By induction over events, members of a class
 * start, freeze, couple and drain together (progressive filling saturates
 * whole link classes and freezes whole flow classes, see symm.h), so the
 * quotient (one flow per class, carrying the class's load spread over its
 * link class) has the same event times in exact arithmetic; in floating
 * point it sums in another order, which moves results by rounding only
 * (tests/cli/sim_pin.sh holds them to 1e-9 of the unreduced engine).
 *
 * A flow never shares a class with a flow it (transitively) waits for:
 * the colours encode the whole tree of its ancestors, which is deeper.
 * Colours are compared by 64-bit hash, as in symm.c.
 *
 * Cost: O(passes x (flows + route entries + edges)) time, O(flows +
 * links) memory beyond the engine's own, before the quotient runs.
 */
#include <string.h>

#include "base/alloc.h"
#include "base/map.h"
#include "sim/engine_internal.h"
#include "sim/symm.h"

/* Below this many flows the engine runs unreduced: small systems are fast
 * anyway, and their results stay bit for bit those of the flow-by-flow
 * event order. */
#define SYMM_MIN_FLOWS 4096u
/* The quotient is worth building when it has at most this fraction of the
 * flows. */
#define SYMM_MAX_RATIO 0.5
/* Link/flow alternations at most; refinement stops earlier when stable. */
#define SYMM_MAX_PASSES 64

void sim_engine_set_symmetry(sim_engine *e, bool on)
{
    e->symm = on;
}

/* Signatures to dense class numbers, numbered by first insertion (since
 * the last clear). The maps are reserved for every key they can get, so no
 * insertion can fail. */
static weft_err sigmap_init(weft__map64 *m, uint32_t n)
{
    weft__map64_init(m);
    return weft__map64_reserve(m, n);
}

static uint32_t sigmap_get(weft__map64 *m, uint64_t sig)
{
    uint32_t v = 0;
    (void)weft__map64_get_or_put(m, sig, (uint32_t)m->n, &v, NULL);
    return v;
}

/* In-edges of every flow, all kinds, in CSR form: in_on[k] is the flow
 * waited for, in_kind[k] 0 (dependency), 1 (cut-through) or 2 (queue). */
typedef struct inedges {
    uint32_t *off, *on;
    uint8_t *kind;
} inedges;

static void inedges_fini(inedges *g)
{
    weft__free(g->off);
    weft__free(g->on);
    weft__free(g->kind);
}

static weft_err inedges_build(const sim_engine *e, inedges *g)
{
    const vec32 *fs[3] = {&e->dep_f, &e->ct_f, &e->q_f},
                *ons[3] = {&e->dep_on, &e->ct_on, &e->q_on};
    size_t total = e->dep_f.n + e->ct_f.n + e->q_f.n;
    g->off = weft__calloc((size_t)e->n_flows + 1, sizeof *g->off);
    g->on = weft__malloc((total ? total : 1) * sizeof *g->on);
    g->kind = weft__malloc(total ? total : 1);
    uint32_t *at = weft__malloc(((size_t)e->n_flows + 1) * sizeof *at);
    if (!g->off || !g->on || !g->kind || !at) {
        weft__free(at);
        return WEFT_ENOMEM;
    }
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < fs[k]->n; i++)
            g->off[fs[k]->v[i] + 1]++;
    for (uint32_t f = 0; f < e->n_flows; f++)
        g->off[f + 1] += g->off[f];
    memcpy(at, g->off, ((size_t)e->n_flows + 1) * sizeof *at);
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < fs[k]->n; i++) {
            uint32_t f = fs[k]->v[i];
            g->on[at[f]] = ons[k]->v[i];
            g->kind[at[f]++] = (uint8_t)k;
        }
    weft__free(at);
    return WEFT_OK;
}

/* A topological order of the flows over every edge kind (Kahn, smallest
 * index first among the ready: a FIFO of flows in index order). false when
 * there is a cycle (the unreduced run reports it). */
static weft_err topo_order(const sim_engine *e, const inedges *g, uint32_t *order, bool *ok)
{
    uint32_t n = e->n_flows;
    uint32_t *left = weft__malloc(((size_t)n + 1) * sizeof *left);
    uint32_t *soff = weft__calloc((size_t)n + 1, sizeof *soff);
    uint32_t *succ = weft__malloc(((size_t)g->off[n] + 1) * sizeof *succ);
    uint32_t *at = weft__malloc(((size_t)n + 1) * sizeof *at);
    weft_err err = WEFT_ENOMEM;
    if (!left || !soff || !succ || !at)
        goto free_all;
    for (uint32_t f = 0; f < n; f++) {
        left[f] = g->off[f + 1] - g->off[f];
        for (uint32_t k = g->off[f]; k < g->off[f + 1]; k++)
            soff[g->on[k] + 1]++;
    }
    for (uint32_t f = 0; f < n; f++)
        soff[f + 1] += soff[f];
    memcpy(at, soff, ((size_t)n + 1) * sizeof *at);
    for (uint32_t f = 0; f < n; f++)
        for (uint32_t k = g->off[f]; k < g->off[f + 1]; k++)
            succ[at[g->on[k]]++] = f;
    uint32_t head = 0, tail = 0;
    for (uint32_t f = 0; f < n; f++)
        if (!left[f])
            order[tail++] = f;
    while (head < tail) {
        uint32_t f = order[head++];
        for (uint32_t k = soff[f]; k < soff[f + 1]; k++)
            if (--left[succ[k]] == 0)
                order[tail++] = succ[k];
    }
    *ok = tail == n;
    err = WEFT_OK;
free_all:
    weft__free(left);
    weft__free(soff);
    weft__free(succ);
    weft__free(at);
    return err;
}

/* The coarsest equitable partition reachable by refinement (see the file
 * comment): fc per flow, lc per link, *nf and *nl classes. *nf is UINT32_MAX
 * when refinement was cut short (more than SYMM_MAX_RATIO of the flows, or
 * SYMM_MAX_PASSES passes): the partition is then not known to be
 * equitable and must not be used. */
static weft_err refine(const sim_engine *e, const inedges *g, const uint32_t *order, uint32_t *fc,
                       uint32_t *lc, uint32_t *nf, uint32_t *nl)
{
    bool stable = false;
    uint32_t n = e->n_flows, m = e->n_links;
    uint64_t *lsig = weft__malloc(((size_t)m + 1) * sizeof *lsig);
    weft__map64 fm, lm;
    memset(&fm, 0, sizeof fm);
    memset(&lm, 0, sizeof lm);
    weft_err err = WEFT_ENOMEM;
    if (!lsig || sigmap_init(&fm, n) || sigmap_init(&lm, m))
        goto free_all;
    for (uint32_t l = 0; l < m; l++)
        lc[l] = sigmap_get(&lm, sim_mix64(sim_double_bits(e->cap[l])));
    uint32_t pf = 0, pl = lm.n;
    for (int pass = 0; pass < SYMM_MAX_PASSES; pass++) {
        weft__map64_clear(&fm);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t f = order[i], r = e->f_route[f];
            uint64_t s = 0, dep[3] = {0, 0, 0};
            for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++)
                s += sim_mix64(sim_mix64(lc[e->r_link.v[k]]) ^ sim_double_bits(e->r_coef[k]));
            for (uint32_t k = g->off[f]; k < g->off[f + 1]; k++)
                dep[g->kind[k]] += sim_mix64(fc[g->on[k]]);
            uint64_t sig = sim_mix64(sim_double_bits(e->f_bytes[f]) ^
                                     sim_mix64(sim_double_bits(e->r_lat[r]) + 1));
            if (e->r_now && e->r_now[r]) /* no alpha: its own class */
                sig = sim_mix64(sig ^ 9);
            sig = sim_mix64(sig ^ sim_mix64(sim_double_bits(e->f_mult[f]) + 2) ^ sim_mix64(s + 3));
            sig = sim_mix64(sig ^ sim_mix64(dep[0] + 4) ^
                            sim_mix64(sim_mix64(dep[1] + 5) ^ sim_mix64(dep[2] + 6)));
            if (e->f_w) /* weights split classes; none (all 1) leaves the hash as it was */
                sig = sim_mix64(sig ^ sim_mix64(sim_double_bits(e->f_w[f]) + 8));
            fc[f] = sigmap_get(&fm, sig);
        }
        for (uint32_t l = 0; l < m; l++)
            lsig[l] = 0;
        for (uint32_t f = 0; f < n; f++) {
            uint32_t r = e->f_route[f];
            for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++)
                lsig[e->r_link.v[k]] += sim_mix64(sim_mix64(fc[f]) ^ sim_double_bits(e->r_coef[k]));
        }
        weft__map64_clear(&lm);
        for (uint32_t l = 0; l < m; l++)
            lc[l] = sigmap_get(&lm, sim_mix64(sim_mix64(lc[l]) ^ sim_mix64(lsig[l] + 7)));
        stable = fm.n == pf && lm.n == pl;
        pf = fm.n;
        pl = lm.n;
        if (stable || (double)pf > SYMM_MAX_RATIO * n)
            break;
    }
    *nf = stable ? pf : UINT32_MAX;
    *nl = pl;
    err = WEFT_OK;
free_all:
    weft__free(lsig);
    weft__map64_fini(&fm);
    weft__map64_fini(&lm);
    return err;
}

/* Builds the quotient engine of the classes: one link per link class (its
 * capacity), one route and one flow per flow class (the first member's
 * bytes, weight and latency; per link class the class's load spread over the
 * class's links), and the classes' edges once each. *q is NULL when a
 * class would have two queue successors (the engine allows one). */
static weft_err quotient(const sim_engine *e, const inedges *g, const uint32_t *fc,
                         const uint32_t *lc, uint32_t nf, uint32_t nl, sim_engine **q)
{
    uint32_t n = e->n_flows, m = e->n_links;
    uint32_t *frep = weft__malloc((size_t)nf * sizeof *frep);
    uint32_t *fcount = weft__calloc(nf, sizeof *fcount);
    uint32_t *lcount = weft__calloc(nl ? nl : 1, sizeof *lcount);
    double *qcap = weft__malloc((nl ? nl : 1) * sizeof *qcap);
    double *acc = weft__calloc(nl ? nl : 1, sizeof *acc);
    uint32_t *rl = weft__malloc((nl ? nl : 1) * sizeof *rl);
    double *rc = weft__malloc((nl ? nl : 1) * sizeof *rc);
    uint32_t *seen = weft__malloc((size_t)nf * 3 * sizeof *seen);
    uint8_t *qs = weft__calloc(nf, 1);
    sim_engine *out = NULL;
    weft_err err = WEFT_ENOMEM;
    *q = NULL;
    if (!frep || !fcount || !lcount || !qcap || !acc || !rl || !rc || !seen || !qs)
        goto free_all;
    for (uint32_t f = 0; f < n; f++)
        if (!fcount[fc[f]]++)
            frep[fc[f]] = f;
    for (uint32_t l = 0; l < m; l++)
        if (!lcount[lc[l]]++)
            qcap[lc[l]] = e->cap[l];
    if ((err = sim_engine_new(nl, qcap, NULL, &out)))
        goto free_all;
    for (uint32_t c = 0; c < nf; c++) {
        uint32_t x = frep[c], r = e->f_route[x], len = 0, route, id;
        for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++) {
            uint32_t L = lc[e->r_link.v[k]];
            if (acc[L] == 0)
                rl[len++] = L;
            acc[L] += e->r_coef[k];
        }
        for (uint32_t i = 0; i < len; i++) {
            rc[i] = (double)fcount[c] * acc[rl[i]] / lcount[rl[i]];
            acc[rl[i]] = 0;
        }
        if ((err = e->r_now && e->r_now[r]
                       ? sim_engine_add_now_route(out, e->r_lat[r], &route)
                       : sim_engine_add_route(out, len, rl, rc, e->r_lat[r], &route)) ||
            (err = sim_engine_add_weighted_flow(out, route, e->f_bytes[x], e->f_mult[x] * fcount[c],
                                                sim_eng_weight(e, x), &id)))
            goto free_all;
    }
    /* seen[3c + kind]: the last class that added an edge of that kind to
     * class c's list, so each (class, dep class, kind) edge is added once;
     * a flow's deps of one class are all done at one time. */
    for (size_t i = 0; i < (size_t)nf * 3; i++)
        seen[i] = UINT32_MAX;
    for (uint32_t c = 0; c < nf; c++) {
        uint32_t x = frep[c];
        for (uint32_t k = g->off[x]; k < g->off[x + 1]; k++) {
            uint32_t dc = fc[g->on[k]], kind = g->kind[k];
            /* Each class's deps are visited in one run of k, so marking
             * seen with (c) per (dep class, kind) finds repeats. */
            if (seen[3 * (size_t)dc + kind] == c)
                continue;
            seen[3 * (size_t)dc + kind] = c;
            if (kind == 2) {
                if (qs[dc]) {
                    err = WEFT_OK; /* two queue successors: run unreduced */
                    goto free_all;
                }
                qs[dc] = 1;
                err = sim_engine_add_queue_dep(out, c, dc);
            } else {
                err =
                    kind == 1 ? sim_engine_add_ct_dep(out, c, dc) : sim_engine_add_dep(out, c, dc);
            }
            if (err)
                goto free_all;
        }
    }
    *q = out;
    out = NULL;
    err = WEFT_OK;
free_all:
    sim_engine_free(out);
    weft__free(frep);
    weft__free(fcount);
    weft__free(lcount);
    weft__free(qcap);
    weft__free(acc);
    weft__free(rl);
    weft__free(rc);
    weft__free(seen);
    weft__free(qs);
    return err;
}

/* Copies the quotient's results to every member of each class. */
static weft_err expand(sim_engine *e, const sim_engine *q, const uint32_t *fc, const uint32_t *lc)
{
    for (uint32_t f = 0; f < e->n_flows; f++) {
        uint32_t c = fc[f];
        e->f_start[f] = q->f_start[c];
        e->f_drain[f] = q->f_drain[c];
        e->f_done[f] = q->f_done[c];
        e->f_rate0[f] = q->f_rate0[c];
        e->f_state[f] = F_DONE;
    }
    for (uint32_t l = 0; l < e->n_links; l++)
        e->carried[l] = q->carried[lc[l]];
    e->st = q->st;
    return WEFT_OK;
}

/* Tries the reduced run: *done is false when the system does not reduce
 * enough (or cannot be reduced), and the caller runs it unreduced. */
static weft_err run_reduced(sim_engine *e, double alpha_s, bool *done, weft_diag *d)
{
    *done = false;
    uint32_t n = e->n_flows, nf = 0, nl = 0;
    inedges g;
    memset(&g, 0, sizeof g);
    uint32_t *order = weft__malloc(((size_t)n + 1) * sizeof *order);
    uint32_t *fc = weft__malloc(((size_t)n + 1) * sizeof *fc);
    uint32_t *lc = weft__malloc(((size_t)e->n_links + 1) * sizeof *lc);
    sim_engine *q = NULL;
    bool acyclic = false;
    weft_err err = WEFT_ENOMEM;
    if (!order || !fc || !lc)
        goto free_all;
    /* Two flows queued behind one are an error the unreduced run reports
     * (sim_engine_add_queue_dep); the quotient could merge them. fc is
     * scratch here. */
    memset(fc, 0, ((size_t)n + 1) * sizeof *fc);
    for (size_t i = 0; i < e->q_on.n; i++)
        if (fc[e->q_on.v[i]]++) {
            err = WEFT_OK;
            goto free_all;
        }
    if ((err = inedges_build(e, &g)) || (err = topo_order(e, &g, order, &acyclic)))
        goto free_all;
    if (!acyclic)
        goto free_all; /* the unreduced run names a flow of the cycle */
    if ((err = refine(e, &g, order, fc, lc, &nf, &nl)))
        goto free_all;
    if ((double)nf > SYMM_MAX_RATIO * n)
        goto free_all;
    if ((err = quotient(e, &g, fc, lc, nf, nl, &q)) || !q)
        goto free_all;
    /* The quotient's own run is unreduced (its symm flag is off); its
     * events are its members', so it stops at the same cutoff. */
    q->cutoff = e->cutoff;
    q->plain = e->plain;
    q->above_ask = e->above_ask;
    if ((err = sim_eng_run_all(q, alpha_s, d))) {
        if (err == WEFT_EVERIFY) {
            for (uint32_t f = 0; f < n; f++)
                if (fc[f] == q->stuck) {
                    e->stuck = f;
                    break;
                }
        }
        goto free_all;
    }
    e->cut = q->cut;
    err = e->cut ? WEFT_OK : expand(e, q, fc, lc);
    *done = !err;
free_all:
    sim_engine_free(q);
    inedges_fini(&g);
    weft__free(order);
    weft__free(fc);
    weft__free(lc);
    return err;
}

weft_err sim_engine_run(sim_engine *e, double alpha_s, weft_diag *d)
{
    if (e->ran || !(alpha_s >= 0))
        return weft_diag_set(d, WEFT_EINVAL, "sim: engine already ran or bad alpha");
    if (e->symm && e->n_flows >= SYMM_MIN_FLOWS && !e->b_size && !e->f_cls) {
        bool done = false;
        weft_err err = run_reduced(e, alpha_s, &done, d);
        if (err || done) {
            e->ran = true;
            if (err == WEFT_EVERIFY)
                return weft_diag_set(
                    d, err, "sim: flow %u never becomes ready (a dependency cycle)", e->stuck);
            return err ? weft_diag_code(d, err) : WEFT_OK;
        }
    }
    return sim_eng_run_all(e, alpha_s, d);
}
