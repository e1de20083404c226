/* The exact throughput bound: a Dinkelbach (Newton) iteration over cuts,
 * each candidate rate checked with integer max-flows from a super-source.
 * See weft/synth.h for the contract and docs/bound.md for the proofs.
 *
 * Units. Link bandwidths b_l (GB/s, exact rationals) are scaled by L, the
 * least common multiple of their denominators, to integers c_l = L b_l. A
 * candidate per-rank rate x = p/q (in the same scaled units, reduced) is
 * checked on the graph whose link arcs have capacity q c_l and whose
 * super-source s has an arc of capacity p to every rank: x is feasible iff
 * every rank v receives a flow of N p from s. The minimum s-v cut with
 * source side {s} ∪ S costs p (N - |S ∩ ranks|) + q B(S), which is >= N p
 * iff B(S) / |S ∩ ranks| >= p / q. Every number stays below N * sum(c_l),
 * checked up front to fit in int64.
 */
#include <string.h>

#include "base/alloc.h"
#include "synth/orbits.h"
#include "weft/maxflow.h"
#include "weft/synth.h"

__extension__ typedef __int128 i128;

static const char *const coll_names[WEFT__BOUND_COLL_COUNT] = {"allgather", "reducescatter",
                                                               "allreduce"};

const char *weft_bound_coll_name(weft_bound_coll coll)
{
    return (unsigned)coll < WEFT__BOUND_COLL_COUNT ? coll_names[coll] : "?";
}

bool weft_bound_coll_parse(const char *text, weft_bound_coll *out)
{
    for (int c = 0; c < WEFT__BOUND_COLL_COUNT; c++) {
        if (strcmp(text, coll_names[c]) == 0) {
            *out = (weft_bound_coll)c;
            return true;
        }
    }
    return false;
}

void weft_bound_opts_init(weft_bound_opts *o)
{
    memset(o, 0, sizeof *o);
    o->algo = WEFT_MAXFLOW_DEFAULT;
    o->use_symmetry = true;
}

void weft_bound_fini(weft_bound *b)
{
    if (!b)
        return;
    for (uint32_t i = 0; i < 2; i++) {
        weft__free(b->phase[i].cut.nodes);
        weft__free(b->phase[i].cut.links);
        b->phase[i].cut.nodes = NULL;
        b->phase[i].cut.links = NULL;
    }
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* ---- Checks on the fabric ----------------------------------------------- */

/* Marks the nodes reachable from start along links (forward) or against
 * them. seen is zeroed by the caller; stack holds n_nodes entries. */
static void reach(const weft_topo *t, weft_node_id start, bool forward, uint8_t *seen,
                  uint32_t *stack)
{
    uint32_t top = 0;
    seen[start.v] = 1;
    stack[top++] = start.v;
    while (top) {
        weft_node_id v = {stack[--top]};
        uint32_t first, count;
        const uint32_t *in = NULL;
        if (forward)
            weft_topo_out_links(t, v, &first, &count);
        else
            in = weft_topo_in_links(t, v, &count);
        for (uint32_t i = 0; i < count; i++) {
            weft_link_id l = {forward ? first + i : in[i]};
            weft_node_id w = forward ? weft_topo_link_dst(t, l) : weft_topo_link_src(t, l);
            if (!seen[w.v]) {
                seen[w.v] = 1;
                stack[top++] = w.v;
            }
        }
    }
}

/* Every rank must reach every other: through rank 0 both ways. */
static weft_err check_reachable(const weft_topo *t, weft_diag *d)
{
    uint32_t n = weft_topo_num_nodes(t), nr = weft_topo_num_ranks(t);
    uint8_t *seen = weft__calloc(n, 1);
    uint32_t *stack = weft__malloc((size_t)n * sizeof *stack);
    weft_err e = WEFT_OK;
    if (!seen || !stack) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_scratch;
    }
    weft_node_id r0 = weft_topo_rank_node(t, (weft_rank){0});
    for (int pass = 0; pass < 2 && !e; pass++) {
        bool forward = pass == 0;
        memset(seen, 0, n);
        reach(t, r0, forward, seen, stack);
        for (uint32_t r = 1; r < nr; r++) {
            weft_node_id v = weft_topo_rank_node(t, (weft_rank){r});
            if (seen[v.v])
                continue;
            uint32_t a = forward ? 0 : r, b = forward ? r : 0;
            e = weft_diag_set(
                d, WEFT_ETOPO,
                "rank %u (%s) cannot reach rank %u (%s): no path of links leads from one to "
                "the other, so no collective over all ranks can complete",
                a, weft_topo_node_name(t, weft_topo_rank_node(t, (weft_rank){a})), b,
                weft_topo_node_name(t, weft_topo_rank_node(t, (weft_rank){b})));
            break;
        }
    }
free_scratch:
    weft__free(seen);
    weft__free(stack);
    return e;
}

/* Scales every bandwidth to an integer c_l = L b_l. Fails with
 * WEFT_EOVERFLOW when L, a c_l, or N times their sum leaves int64. */
static weft_err scale_links(const weft_topo *t, int64_t *c, int64_t *scale, weft_diag *d)
{
    uint32_t m = weft_topo_num_links(t), nr = weft_topo_num_ranks(t);
    i128 lcm = 1;
    for (uint32_t l = 0; l < m; l++) {
        int64_t den = weft_topo_link_bw(t, (weft_link_id){l}).den;
        lcm = lcm / gcd64((int64_t)(lcm % den), den) * den;
        if (lcm > INT64_MAX)
            return weft_diag_set(d, WEFT_EOVERFLOW,
                                 "the link bandwidths have no common denominator that fits in "
                                 "64 bits (link %s -> %s and earlier ones); the exact bound "
                                 "cannot be computed",
                                 weft_topo_node_name(t, weft_topo_link_src(t, (weft_link_id){l})),
                                 weft_topo_node_name(t, weft_topo_link_dst(t, (weft_link_id){l})));
    }
    i128 total = 0;
    for (uint32_t l = 0; l < m; l++) {
        weft_rat bw = weft_topo_link_bw(t, (weft_link_id){l});
        i128 v = (i128)bw.num * (lcm / bw.den);
        total += v;
        if (v > INT64_MAX || total > INT64_MAX)
            return weft_diag_set(
                d, WEFT_EOVERFLOW,
                "the link bandwidths scaled to integers (common denominator %lld) overflow 64 "
                "bits at link %s -> %s; the exact bound cannot be computed",
                (long long)lcm, weft_topo_node_name(t, weft_topo_link_src(t, (weft_link_id){l})),
                weft_topo_node_name(t, weft_topo_link_dst(t, (weft_link_id){l})));
        c[l] = (int64_t)v;
    }
    /* Capacities reach q c_l and flows N p with q <= N, p <= total. */
    if ((i128)nr * total * 2 > INT64_MAX)
        return weft_diag_set(d, WEFT_EOVERFLOW,
                             "%u ranks times the total link bandwidth (scaled by the common "
                             "denominator %lld) overflows 64-bit integers; the exact bound "
                             "cannot be computed",
                             nr, (long long)lcm);
    *scale = (int64_t)lcm;
    return WEFT_OK;
}

/* ---- One phase -------------------------------------------------------- */

typedef struct phase_ctx {
    const weft_topo *t;
    uint32_t n, m, nr;
    bool reverse;          /* reduce-scatter: links used backwards */
    const int64_t *c;      /* scaled link capacities */
    weft_maxflow *mf;      /* n + 1 nodes; arcs 0..m-1 links, m..m+nr-1 source */
    uint8_t *side;         /* n + 1 */
    uint8_t *best;         /* n + 1: the current cut S (1 = in S) */
    const uint32_t *sinks; /* ranks whose flows are checked */
    uint32_t n_sinks;
    weft_mf_algo algo;
} phase_ctx;

/* Tail and head of link l in the phase's direction. */
static void arc_ends(const phase_ctx *p, uint32_t l, uint32_t *u, uint32_t *v)
{
    uint32_t a = weft_topo_link_src(p->t, (weft_link_id){l}).v;
    uint32_t b = weft_topo_link_dst(p->t, (weft_link_id){l}).v;
    *u = p->reverse ? b : a;
    *v = p->reverse ? a : b;
}

/* B(S) in scaled units and |S ∩ ranks| for the set marked in in_s. */
static void cut_ratio(const phase_ctx *p, const uint8_t *in_s, int64_t *bw, uint32_t *k)
{
    int64_t b = 0;
    for (uint32_t l = 0; l < p->m; l++) {
        uint32_t u, v;
        arc_ends(p, l, &u, &v);
        if (in_s[u] && !in_s[v])
            b += p->c[l];
    }
    uint32_t cnt = 0;
    for (uint32_t r = 0; r < p->nr; r++)
        cnt += in_s[weft_topo_rank_node(p->t, (weft_rank){r}).v] != 0;
    *bw = b;
    *k = cnt;
}

/* The best of the cuts {u} and (all nodes) \ {u} over ranks u: a valid
 * starting point above the optimum. Leaves it in p->best. */
static void initial_cut(phase_ctx *p, int64_t *bw, uint32_t *k)
{
    int64_t best_b = -1;
    uint32_t best_k = 1, best_r = 0;
    bool best_single = true;
    for (uint32_t r = 0; r < p->nr; r++) {
        weft_node_id v = weft_topo_rank_node(p->t, (weft_rank){r});
        uint32_t first, count, cin;
        const uint32_t *in = weft_topo_in_links(p->t, v, &cin);
        weft_topo_out_links(p->t, v, &first, &count);
        int64_t out_c = 0, in_c = 0;
        for (uint32_t i = 0; i < count; i++)
            out_c += p->c[first + i];
        for (uint32_t i = 0; i < cin; i++)
            in_c += p->c[in[i]];
        if (p->reverse) {
            int64_t tmp = out_c;
            out_c = in_c;
            in_c = tmp;
        }
        /* {v}: out_c / 1; complement of {v}: in_c / (N - 1). */
        if (best_b < 0 || (i128)out_c * best_k < (i128)best_b) {
            best_b = out_c;
            best_k = 1;
            best_r = r;
            best_single = true;
        }
        if ((i128)in_c * best_k < (i128)best_b * (p->nr - 1)) {
            best_b = in_c;
            best_k = p->nr - 1;
            best_r = r;
            best_single = false;
        }
    }
    uint32_t rv = weft_topo_rank_node(p->t, (weft_rank){best_r}).v;
    memset(p->best, best_single ? 0 : 1, p->n + 1);
    p->best[rv] = best_single ? 1 : 0;
    p->best[p->n] = 0;
    *bw = best_b;
    *k = best_k;
}

/* Builds the flow graph of a phase (capacities are set per iteration). */
static weft_err build_flow_graph(phase_ctx *p)
{
    weft_err e = weft_maxflow_new(p->n + 1, p->m + p->nr, &p->mf);
    if (e)
        return e;
    for (uint32_t l = 0; l < p->m; l++) {
        uint32_t u, v;
        arc_ends(p, l, &u, &v);
        e = weft_maxflow_add_arc(p->mf, u, v, 0, NULL);
        if (e)
            return e;
    }
    for (uint32_t r = 0; r < p->nr; r++) {
        e = weft_maxflow_add_arc(p->mf, p->n, weft_topo_rank_node(p->t, (weft_rank){r}).v, 0, NULL);
        if (e)
            return e;
    }
    return weft_maxflow_freeze(p->mf);
}

/* Copies the cut in p->best into the public form. */
static weft_err store_cut(const phase_ctx *p, int64_t scale, weft_bound_cut *cut)
{
    uint32_t nn = 0, nl = 0;
    for (uint32_t v = 0; v < p->n; v++)
        nn += p->best[v] != 0;
    for (uint32_t l = 0; l < p->m; l++) {
        uint32_t u, v;
        arc_ends(p, l, &u, &v);
        nl += p->best[u] && !p->best[v];
    }
    cut->nodes = weft__malloc((nn ? nn : 1) * sizeof *cut->nodes);
    cut->links = weft__malloc((nl ? nl : 1) * sizeof *cut->links);
    if (!cut->nodes || !cut->links)
        return WEFT_ENOMEM; /* weft_bound_fini frees what was taken */
    cut->n_nodes = 0;
    cut->n_links = 0;
    for (uint32_t v = 0; v < p->n; v++)
        if (p->best[v])
            cut->nodes[cut->n_nodes++] = (weft_node_id){v};
    int64_t b;
    uint32_t k;
    cut_ratio(p, p->best, &b, &k);
    for (uint32_t l = 0; l < p->m; l++) {
        uint32_t u, v;
        arc_ends(p, l, &u, &v);
        if (p->best[u] && !p->best[v])
            cut->links[cut->n_links++] = (weft_link_id){l};
    }
    cut->inward = p->reverse;
    cut->ranks_in = k;
    return weft_rat_make(b, scale, &cut->bw);
}

static weft_err run_phase(phase_ctx *p, int64_t scale, weft_bound_phase *out, weft_diag *d)
{
    int64_t b;
    uint32_t k;
    initial_cut(p, &b, &k);
    weft_err e = build_flow_graph(p);
    if (e)
        return weft_diag_code(d, e);
    uint32_t iterations = 0;
    uint64_t flows = 0;
    for (;;) {
        /* The candidate x = b / k = pp / q in lowest terms. */
        int64_t g = gcd64(b, (int64_t)k);
        if (g == 0)
            g = 1;
        int64_t pp = b / g, q = (int64_t)k / g;
        for (uint32_t l = 0; l < p->m; l++)
            weft_maxflow_set_cap(p->mf, l, q * p->c[l]);
        for (uint32_t r = 0; r < p->nr; r++)
            weft_maxflow_set_cap(p->mf, p->m + r, pp);
        int64_t target = (int64_t)p->nr * pp, low = target;
        for (uint32_t i = 0; i < p->n_sinks; i++) {
            uint32_t v = weft_topo_rank_node(p->t, (weft_rank){p->sinks[i]}).v;
            int64_t f;
            e = weft_maxflow_run(p->mf, p->algo, p->n, v, target, &f);
            if (e)
                return weft_diag_set(d, e, "max-flow for rank %u failed: %s", p->sinks[i],
                                     weft_strerror(e));
            flows++;
            if (f < low) {
                /* The most violated cut so far: its source side minus s. */
                low = f;
                weft_maxflow_source_side(p->mf, p->side);
                memcpy(p->best, p->side, p->n + 1);
                p->best[p->n] = 0;
            }
        }
        if (low >= target)
            break;
        iterations++;
        int64_t nb;
        uint32_t nk;
        cut_ratio(p, p->best, &nb, &nk);
        /* A violated cut has a strictly smaller ratio (docs/bound.md); if
         * arithmetic ever said otherwise, stopping beats looping. */
        if (nk == 0 || (i128)nb * k >= (i128)b * nk)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "internal error: the bound iteration did not improve");
        b = nb;
        k = nk;
    }
    out->iterations = iterations;
    out->maxflows = flows;
    e = store_cut(p, scale, &out->cut);
    if (e)
        return weft_diag_code(d, e);
    /* algbw = N x = N b / (k L) GB/s. */
    weft_rat x;
    e = weft_rat_make(b, k, &x);
    if (!e)
        e = weft_rat_mul(x, weft_rat_int(p->nr), &x);
    if (!e)
        e = weft_rat_div(x, weft_rat_int(scale), &out->algbw);
    if (e)
        return weft_diag_set(d, e, "the bound %lld/%u (scaled by %lld) does not fit a rational",
                             (long long)b, k, (long long)scale);
    return WEFT_OK;
}

/* ---- Entry point -------------------------------------------------------- */

/* Finds a forwarding node whose in and out bandwidth differ. */
static bool find_unbalanced(const weft_topo *t, const int64_t *c, weft_node_id *out)
{
    uint32_t n = weft_topo_num_nodes(t);
    for (uint32_t v = 0; v < n; v++) {
        weft_node_id id = {v};
        if (weft_topo_node_kind(t, id) == WEFT_NODE_COMPUTE)
            continue;
        uint32_t first, count, cin;
        const uint32_t *in = weft_topo_in_links(t, id, &cin);
        weft_topo_out_links(t, id, &first, &count);
        int64_t o = 0, i = 0;
        for (uint32_t j = 0; j < count; j++)
            o += c[first + j];
        for (uint32_t j = 0; j < cin; j++)
            i += c[in[j]];
        if (o != i) {
            *out = id;
            return true;
        }
    }
    return false;
}

weft_err weft_bound_compute(const weft_topo *t, weft_bound_coll coll, const weft_bound_opts *opts,
                            weft_bound *out, weft_diag *d)
{
    weft_bound_opts defaults;
    if (!opts) {
        weft_bound_opts_init(&defaults);
        opts = &defaults;
    }
    if ((unsigned)coll >= WEFT__BOUND_COLL_COUNT)
        return weft_diag_set(d, WEFT_EINVAL, "unknown collective %d", (int)coll);
    uint32_t n = weft_topo_num_nodes(t), m = weft_topo_num_links(t), nr = weft_topo_num_ranks(t);
    if (nr < 2)
        return weft_diag_set(d, WEFT_ETOPO,
                             "the fabric has %u rank; a bound needs at least 2 ranks", nr);
    weft_err e = check_reachable(t, d);
    if (e)
        return e;
    weft_bound res;
    memset(&res, 0, sizeof res);
    res.coll = coll;
    res.ranks = nr;
    phase_ctx p;
    memset(&p, 0, sizeof p);
    weft__orbits orb;
    memset(&orb, 0, sizeof orb);
    int64_t *c = weft__malloc((m ? m : 1) * sizeof *c);
    p.side = weft__malloc((size_t)n + 1);
    p.best = weft__malloc((size_t)n + 1);
    if (!c || !p.side || !p.best) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_scratch;
    }
    int64_t scale = 1;
    e = scale_links(t, c, &scale, d);
    if (e)
        goto free_scratch;
    res.switches_balanced = !find_unbalanced(t, c, &res.unbalanced);
    e = weft__orbits_compute(t, c, opts->use_symmetry, &orb);
    if (e) {
        weft_diag_code(d, e);
        goto free_scratch;
    }
    res.rank_classes = orb.n_reps;
    p.t = t;
    p.n = n;
    p.m = m;
    p.nr = nr;
    p.c = c;
    p.sinks = orb.reps;
    p.n_sinks = orb.n_reps;
    /* Push-relabel is the default: measured faster on every benchmark
     * fabric (docs/bound.md). */
    p.algo = opts->algo == WEFT_MAXFLOW_DINIC ? WEFT_MF_DINIC : WEFT_MF_PUSH_RELABEL;
    weft_bound_coll phases[2];
    uint32_t np = 0;
    if (coll == WEFT_BOUND_ALLREDUCE) {
        phases[np++] = WEFT_BOUND_REDUCESCATTER;
        phases[np++] = WEFT_BOUND_ALLGATHER;
    } else {
        phases[np++] = coll;
    }
    for (uint32_t i = 0; i < np; i++) {
        p.reverse = phases[i] == WEFT_BOUND_REDUCESCATTER;
        res.phase[i].coll = phases[i];
        res.n_phases = i + 1;
        e = run_phase(&p, scale, &res.phase[i], d);
        weft_maxflow_free(p.mf);
        p.mf = NULL;
        if (e)
            goto free_result;
    }
    if (np == 1) {
        res.algbw = res.phase[0].algbw;
    } else {
        /* T_ar = T_rs + T_ag at equal size: 1/algbw = 1/a + 1/b. Summing
         * the inverses keeps intermediates smallest (each step is
         * normalised in 128 bits before it must fit). */
        weft_rat ia, ib, sum;
        e = weft_rat_div(weft_rat_int(1), res.phase[0].algbw, &ia);
        if (!e)
            e = weft_rat_div(weft_rat_int(1), res.phase[1].algbw, &ib);
        if (!e)
            e = weft_rat_add(ia, ib, &sum);
        if (!e)
            e = weft_rat_div(weft_rat_int(1), sum, &res.algbw);
        if (e) {
            weft_diag_set(d, e,
                          "the allreduce bound 1/(1/a + 1/b) of the phase bounds does not fit "
                          "a 64-bit rational");
            goto free_result;
        }
    }
    *out = res;
    goto free_scratch;
free_result:
    weft_bound_fini(&res);
free_scratch:
    weft__orbits_fini(&orb);
    weft__free(c);
    weft__free(p.side);
    weft__free(p.best);
    return e;
}
