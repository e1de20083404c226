/* The rail-hierarchical optimal schedule (src/synth/optimal_rail.h,
 * docs/optimal-scale.md). */
#include "synth/optimal_rail.h"

#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/intmath.h"
#include "synth/emit.h"

const char *weft_optimal_method_name(weft_optimal_method m)
{
    switch (m) {
    case WEFT_OPTIMAL_PACKING:
        return "packing";
    case WEFT_OPTIMAL_RAIL:
        return "rail";
    }
    return "?";
}

/* Ranks as B boxes of G: rank[b * G + g] is rank (b, g). */
typedef struct rail_layout {
    uint32_t B, G;
    uint32_t *rank;
} rail_layout;

static void layout_fini(rail_layout *L)
{
    weft__free(L->rank);
    L->rank = NULL;
}

static uint32_t at(const rail_layout *L, uint32_t b, uint32_t g)
{
    return L->rank[(b % L->B) * L->G + g];
}

/* Splits the ranks into boxes by host. *fits false (and note set) when
 * some ranks have a host and others not, or the hosts hold different
 * numbers of ranks. */
static weft_err layout_make(const weft_topo *t, rail_layout *L, bool *fits, char *note,
                            size_t note_size)
{
    uint32_t nr = weft_topo_num_ranks(t), nh = weft_topo_num_hosts(t);
    memset(L, 0, sizeof *L);
    *fits = false;
    uint32_t *box = weft__malloc(((size_t)nh + 1) * sizeof *box);  /* host -> box */
    uint32_t *count = weft__calloc((size_t)nh + 1, sizeof *count); /* per box */
    uint32_t *host = weft__malloc(((size_t)nr + 1) * sizeof *host);
    L->rank = weft__malloc(((size_t)nr + 1) * sizeof *L->rank);
    weft_err e = WEFT_OK;
    if (!box || !count || !host || !L->rank) {
        e = WEFT_ENOMEM;
        goto done;
    }
    for (uint32_t h = 0; h < nh; h++)
        box[h] = UINT32_MAX;
    uint32_t with = 0, nbox = 0;
    for (uint32_t r = 0; r < nr; r++) {
        int32_t h = weft_topo_node_host(t, weft_topo_rank_node(t, (weft_rank){r}));
        if (h < 0) {
            host[r] = UINT32_MAX;
            continue;
        }
        with++;
        if (box[h] == UINT32_MAX)
            box[h] = nbox++;
        host[r] = box[h];
        count[box[h]]++;
    }
    if (with == 0) {
        L->B = 1;
        L->G = nr;
        for (uint32_t r = 0; r < nr; r++)
            L->rank[r] = r;
        *fits = true;
        goto done;
    }
    if (with < nr) {
        snprintf(note, note_size, "rail: %u of %u ranks have a host, the others none", with, nr);
        goto done;
    }
    for (uint32_t b = 1; b < nbox; b++) {
        if (count[b] != count[0]) {
            snprintf(note, note_size, "rail: hosts hold different numbers of ranks (%u and %u)",
                     count[0], count[b]);
            goto done;
        }
    }
    L->B = nbox;
    L->G = count[0];
    memset(count, 0, (size_t)nbox * sizeof *count);
    for (uint32_t r = 0; r < nr; r++)
        L->rank[host[r] * L->G + count[host[r]]++] = r;
    *fits = true;
done:
    weft__free(box);
    weft__free(count);
    weft__free(host);
    if (e || !*fits)
        layout_fini(L);
    return e;
}

/* ---- The box schedule ------------------------------------------------------ */

/* How one box spreads (allgather) or gathers (reduce-scatter) the chunks
 * of each of its ranks: groups of identical trees over local ranks
 * 0 .. G-1, k trees per local root, as weft_optimal describes them. With
 * one box (or one rank per box) these are stars: every rank straight to
 * every other, which is what the whole fabric would get anyway. With more
 * boxes they are the optimal schedule of box 0 alone (its nodes and the
 * links among them), from weft_synth_optimal: on a box with one switch
 * that is the star again; on a box of direct links (mi250) it is the
 * box's tree packing. phase[i] matches the bound's phase i. */
typedef struct box_sched {
    weft_optimal info;
} box_sched;

static weft_err star_phase(uint32_t G, bool rs, weft_optimal_phase *out)
{
    out->k = 1;
    out->trees = weft__calloc(G, sizeof *out->trees);
    if (!out->trees)
        return WEFT_ENOMEM;
    out->n_trees = G;
    for (uint32_t g = 0; g < G; g++) {
        weft_optimal_tree *tr = &out->trees[g];
        tr->root.v = g;
        tr->mult = 1;
        tr->n_edges = G - 1;
        tr->from = weft__malloc(G * sizeof *tr->from);
        tr->to = weft__malloc(G * sizeof *tr->to);
        if (!tr->from || !tr->to)
            return WEFT_ENOMEM;
        /* The reduces into g's chunk are ordered (the emitter chains them
         * in edge order), so root g takes its peers from g+1 on: at the
         * i-th reduce of every root the senders are a permutation and
         * each rank's link carries one transfer, not rank 0's all of
         * them. */
        for (uint32_t i = 1; i < G; i++) {
            uint32_t x = (g + i) % G;
            tr->from[i - 1] = rs ? x : g;
            tr->to[i - 1] = rs ? g : x;
        }
    }
    return WEFT_OK;
}

/* The fabric of box 0: its host's nodes (ranks first come in rank order,
 * so local rank g is the sub-fabric's rank g) and the links among them. */
static weft_err box_fabric(const weft_topo *t, const rail_layout *L, weft_topo **out, weft_diag *d)
{
    uint32_t nn = weft_topo_num_nodes(t);
    int32_t host = weft_topo_node_host(t, weft_topo_rank_node(t, (weft_rank){L->rank[0]}));
    uint32_t *map = weft__malloc(((size_t)nn + 1) * sizeof *map);
    weft_topo_builder *tb = NULL;
    weft_err e = map ? weft_topo_builder_new(&tb) : WEFT_ENOMEM;
    for (uint32_t v = 0; v < nn && !e; v++) {
        weft_node_id id = {v}, nid;
        map[v] = UINT32_MAX;
        if (weft_topo_node_host(t, id) != host)
            continue;
        e = weft_topo_builder_add_node(tb, weft_topo_node_name(t, id), weft_topo_node_kind(t, id),
                                       weft_topo_host_name(t, host), &nid);
        map[v] = nid.v;
    }
    for (uint32_t l = 0; l < weft_topo_num_links(t) && !e; l++) {
        weft_link_id id = {l};
        uint32_t a = map[weft_topo_link_src(t, id).v], c = map[weft_topo_link_dst(t, id).v];
        if (a != UINT32_MAX && c != UINT32_MAX)
            e = weft_topo_builder_add_link(tb, (weft_node_id){a}, (weft_node_id){c},
                                           weft_topo_link_bw(t, id), weft_topo_link_lat(t, id));
    }
    weft__free(map);
    if (e) {
        weft_topo_builder_free(tb);
        return weft_diag_code(d, e);
    }
    return weft_topo_build(tb, out, d);
}

/* Builds the box schedule. *fits false (note set) when box 0 alone has no
 * optimal schedule (its ranks do not reach each other inside it, ...). */
static weft_err box_sched_make(const weft_topo *t, const rail_layout *L, weft_coll coll,
                               const weft_bound *b, uint32_t K, box_sched *out, bool *fits,
                               char *note, size_t note_size, weft_diag *d)
{
    memset(out, 0, sizeof *out);
    *fits = true;
    if (L->B == 1 || L->G == 1) {
        out->info.method = WEFT_OPTIMAL_RAIL;
        out->info.n_phases = b->n_phases;
        weft_err e = WEFT_OK;
        for (uint32_t i = 0; i < b->n_phases && !e; i++)
            e = star_phase(L->G, b->phase[i].coll == WEFT_BOUND_REDUCESCATTER, &out->info.phase[i]);
        if (e)
            weft_diag_set(d, e, "optimal: out of memory building the box schedule");
        return e;
    }
    weft_topo *box = NULL;
    weft_diag bd;
    weft_diag_clear(&bd);
    weft_err e = box_fabric(t, L, &box, &bd);
    weft_plan *p = NULL;
    weft_optimal_opts o;
    weft_optimal_opts_init(&o);
    o.trees_per_root = K;
    if (!e)
        e = weft_synth_optimal(box, coll, &o, &p, &out->info, &bd);
    weft_plan_free(p);
    weft_topo_free(box);
    if (e == WEFT_ENOMEM)
        return weft_diag_set(d, e, "optimal: out of memory building the box schedule");
    if (e) {
        *fits = false;
        snprintf(note, note_size, "rail: box 0 alone has no optimal schedule (%s)", bd.msg);
    }
    return WEFT_OK;
}

static void box_sched_fini(box_sched *s)
{
    weft_optimal_fini(&s->info);
}

/* ---- The plan ------------------------------------------------------------ */

/* Slots: rank r's chunk is C slots from r * C; part p of it goes down the
 * box tree groups of r's local root in order, a group of mult m taking
 * m * C / k consecutive slots. */
typedef struct rail_plan {
    const rail_layout *L;
    const box_sched *box;
    uint32_t C;
} rail_plan;

/* The allgather of every root, group by group: the rail chain, then the
 * box tree from every rank of the chain. The ops of one group touch only
 * its slots, so this order gives the same dependences as a step-by-step
 * one, and it is the order of the group's tree edges (weft_optimal). */
static weft_err emit_allgather(synth_emit *em, const rail_plan *rp, const weft_optimal_phase *ph,
                               weft_buf buf)
{
    const rail_layout *L = rp->L;
    uint32_t per = rp->C / ph->k;
    weft_err e = WEFT_OK;
    for (uint32_t b = 0; b < L->B && !e; b++) {
        for (uint32_t g = 0; g < L->G && !e; g++) {
            uint32_t idx = at(L, b, g) * rp->C;
            for (uint32_t q = 0; q < ph->n_trees && !e; q++) {
                const weft_optimal_tree *tr = &ph->trees[q];
                if (tr->root.v != g)
                    continue;
                uint32_t cnt = tr->mult * per;
                for (uint32_t j = 1; j < L->B && !e; j++)
                    e = synth_copy(em, at(L, b + j - 1, g), at(L, b + j, g), buf, idx, cnt, 0,
                                   NULL);
                for (uint32_t j = 0; j < L->B && !e; j++)
                    for (uint32_t x = 0; x < tr->n_edges && !e; x++)
                        e = synth_copy(em, at(L, b + j, tr->from[x]), at(L, b + j, tr->to[x]), buf,
                                       idx, cnt, 0, NULL);
                idx += cnt;
            }
        }
    }
    return e;
}

/* The reduce-scatter of every root (t, g), group by group: each box
 * reduces up the group's tree into its rank on rail g, then the partial
 * sums go round the rail from (t+1, g) to (t, g). The emitter orders the
 * reduces into one slot. */
static weft_err emit_reducescatter(synth_emit *em, const rail_plan *rp,
                                   const weft_optimal_phase *ph, weft_buf buf)
{
    const rail_layout *L = rp->L;
    uint32_t per = rp->C / ph->k;
    weft_err e = WEFT_OK;
    for (uint32_t t = 0; t < L->B && !e; t++) {
        for (uint32_t g = 0; g < L->G && !e; g++) {
            uint32_t idx = at(L, t, g) * rp->C;
            for (uint32_t q = 0; q < ph->n_trees && !e; q++) {
                const weft_optimal_tree *tr = &ph->trees[q];
                if (tr->root.v != g)
                    continue;
                uint32_t cnt = tr->mult * per;
                for (uint32_t j = 1; j <= L->B && !e; j++)
                    for (uint32_t x = 0; x < tr->n_edges && !e; x++)
                        e = synth_reduce(em, at(L, t + j, tr->from[x]), at(L, t + j, tr->to[x]),
                                         buf, idx, cnt, 0, NULL);
                for (uint32_t j = 1; j < L->B && !e; j++)
                    e = synth_reduce(em, at(L, t + j, g), at(L, t + j + 1, g), buf, idx, cnt, 0,
                                     NULL);
                idx += cnt;
            }
        }
    }
    return e;
}

/* ---- What the plan is, for weft_optimal ----------------------------------- */

/* The whole-fabric trees: one per (root, box group of its local root),
 * edges in the order the emitters above use (which is the order
 * weft_optimal_tree asks for in each direction). */
static weft_err fill_phase(const rail_layout *L, const weft_optimal_phase *box,
                           weft_bound_coll coll, weft_rat algbw, weft_optimal_phase *out)
{
    uint32_t nr = L->B * L->G;
    bool rs = coll == WEFT_BOUND_REDUCESCATTER;
    memset(out, 0, sizeof *out);
    out->coll = coll;
    out->algbw = algbw;
    out->bound = algbw;
    out->k = box->k;
    /* U = k / r with r = algbw / N. */
    if (weft_rat_div(weft_rat_int((int64_t)nr * box->k), algbw, &out->U))
        return WEFT_EOVERFLOW;
    size_t n = (size_t)L->B * box->n_trees;
    out->trees = weft__calloc(n, sizeof *out->trees);
    if (!out->trees)
        return WEFT_ENOMEM;
    out->n_trees = (uint32_t)n;
    size_t i = 0;
    for (uint32_t b = 0; b < L->B; b++) {
        for (uint32_t g = 0; g < L->G; g++) {
            for (uint32_t q = 0; q < box->n_trees; q++) {
                const weft_optimal_tree *bt = &box->trees[q];
                if (bt->root.v != g)
                    continue;
                weft_optimal_tree *tr = &out->trees[i++];
                tr->root.v = at(L, b, g);
                tr->mult = bt->mult;
                tr->n_edges = nr - 1;
                size_t room = nr > 1 ? nr - 1 : 1;
                tr->from = weft__malloc(room * sizeof *tr->from);
                tr->to = weft__malloc(room * sizeof *tr->to);
                if (!tr->from || !tr->to)
                    return WEFT_ENOMEM;
                uint32_t m = 0;
                for (uint32_t j = 1; !rs && j < L->B; j++, m++) {
                    tr->from[m] = at(L, b + j - 1, g);
                    tr->to[m] = at(L, b + j, g);
                }
                for (uint32_t j = rs ? 1 : 0; j < L->B + (rs ? 1 : 0); j++) {
                    for (uint32_t x = 0; x < bt->n_edges; x++, m++) {
                        tr->from[m] = at(L, b + j, bt->from[x]);
                        tr->to[m] = at(L, b + j, bt->to[x]);
                    }
                }
                for (uint32_t j = 1; rs && j < L->B; j++, m++) {
                    tr->from[m] = at(L, b + j, g);
                    tr->to[m] = at(L, b + j + 1, g);
                }
            }
        }
    }
    return WEFT_OK;
}

/* The exact throughput of one phase, cheaply: a stand-in plan with one op
 * per rail hop and per box tree edge, whose count is the number of the
 * phase's transfers over it (loads are linear in the count), has exactly
 * the phase's link loads, so the cost model gives the phase's throughput
 * from about N + B * (box tree edges) ops instead of N^2. It is only
 * costed, never run. */
static weft_err phase_algbw(const weft_topo *t, const rail_plan *rp, const weft_optimal_phase *ph,
                            bool rs, weft_rat *out, weft_diag *d)
{
    const rail_layout *L = rp->L;
    uint32_t nr = L->B * L->G, per = rp->C / ph->k;
    weft_plan_info pi = {.coll = rs ? WEFT_COLL_REDUCESCATTER : WEFT_COLL_ALLGATHER,
                         .nranks = nr,
                         .chunks = rp->C,
                         .inplace = true};
    weft_plan *p = NULL;
    weft_err e = weft_plan_new(&pi, &p);
    weft_op op = {.kind = WEFT_OP_COPY, .src_buf = WEFT_BUF_IN, .dst_buf = WEFT_BUF_IN};
    for (uint32_t b = 0; b < L->B && !e; b++) {
        for (uint32_t g = 0; g < L->G && !e && L->B > 1; g++) {
            op.src_rank.v = at(L, b, g);
            op.dst_rank.v = at(L, b + 1, g);
            op.count = (L->B - 1) * rp->C;
            e = weft_plan_add_op(p, &op, NULL, 0, NULL);
        }
        /* Box b serves the B roots of each of its rails. */
        for (uint32_t q = 0; q < ph->n_trees && !e; q++) {
            const weft_optimal_tree *tr = &ph->trees[q];
            for (uint32_t x = 0; x < tr->n_edges && !e; x++) {
                op.src_rank.v = at(L, b, tr->from[x]);
                op.dst_rank.v = at(L, b, tr->to[x]);
                op.count = L->B * tr->mult * per;
                e = weft_plan_add_op(p, &op, NULL, 0, NULL);
            }
        }
    }
    weft_plan_cost c;
    if (e)
        weft_diag_set(d, e, "optimal: cannot cost the rail-hierarchical plan (%s)",
                      weft_strerror(e));
    else
        e = weft_plan_cost_get(p, t, &c, d);
    if (!e)
        *out = c.algbw;
    weft_plan_free(p);
    return e;
}

static weft_err build_plan(const weft_topo *t, weft_coll coll, const rail_plan *rp, weft_plan **out)
{
    uint32_t nr = weft_topo_num_ranks(t);
    const weft_optimal *bi = &rp->box->info;
    weft_plan_info pi = {.coll = coll, .nranks = nr, .chunks = rp->C, .inplace = true};
    if (coll == WEFT_COLL_ALLREDUCE)
        pi.chunks = nr * rp->C;
    weft_plan *p = NULL;
    weft_err e = weft_plan_new(&pi, &p);
    if (e)
        return e;
    synth_emit em;
    synth_emit_init(&em, p);
    if (coll == WEFT_COLL_ALLGATHER) {
        e = emit_allgather(&em, rp, &bi->phase[0], WEFT_BUF_OUT);
    } else if (coll == WEFT_COLL_REDUCESCATTER) {
        e = emit_reducescatter(&em, rp, &bi->phase[0], WEFT_BUF_IN);
    } else {
        e = emit_reducescatter(&em, rp, &bi->phase[0], WEFT_BUF_OUT);
        if (!e)
            e = emit_allgather(&em, rp, &bi->phase[1], WEFT_BUF_OUT);
    }
    return synth_finish(e, &em, p, out);
}

/* "8 boxes of 16 ranks" or "one box of 16 ranks". */
static const char *shape(const rail_layout *L, char *buf, size_t size)
{
    if (L->B == 1)
        snprintf(buf, size, "one box of %u ranks", L->G);
    else
        snprintf(buf, size, "%u boxes of %u ranks", L->B, L->G);
    return buf;
}

weft_err opt_rail_try(const weft_topo *t, weft_coll coll, const weft_bound *b, uint32_t K,
                      weft_plan **plan, weft_optimal *info, char *note, size_t note_size,
                      weft_diag *d)
{
    rail_layout L;
    bool fits;
    weft_err e = layout_make(t, &L, &fits, note, note_size);
    if (e)
        return weft_diag_set(d, e, "optimal: out of memory sizing the rail structure");
    if (!fits)
        return WEFT_OK;
    box_sched box;
    e = box_sched_make(t, &L, coll, b, K, &box, &fits, note, note_size, d);
    if (e || !fits) {
        box_sched_fini(&box);
        layout_fini(&L);
        return e;
    }
    rail_plan rp = {.L = &L, .box = &box, .C = 1};
    uint64_t ops = 0;
    for (uint32_t i = 0; i < b->n_phases; i++) {
        const weft_optimal_phase *ph = &box.info.phase[i];
        uint64_t edges = 0;
        for (uint32_t q = 0; q < ph->n_trees; q++)
            edges += ph->trees[q].n_edges;
        rp.C = (uint32_t)(rp.C / weft__gcd64(rp.C, ph->k) * ph->k);
        ops += (uint64_t)L.B * ph->n_trees * ((uint64_t)L.B - 1) + (uint64_t)L.B * L.B * edges;
    }
    weft_plan *p = NULL;
    weft_optimal res;
    memset(&res, 0, sizeof res);
    if (ops > WEFT_PLAN_MAX_OPS || (uint64_t)rp.C * L.B * L.G > WEFT_PLAN_MAX_SLOTS) {
        snprintf(note, note_size,
                 "rail: %llu transfers of %u chunks per rank exceed the plan limits",
                 (unsigned long long)ops, rp.C);
        goto fail;
    }
    char x[64], y[64], sh[64];
    /* Each phase first, on the stand-in plans: cheap, and a fabric the
     * construction does not suit is turned away before the big build. */
    for (uint32_t i = 0; i < b->n_phases; i++) {
        weft_rat a;
        weft_diag cd;
        weft_diag_clear(&cd);
        e = phase_algbw(t, &rp, &box.info.phase[i], b->phase[i].coll == WEFT_BOUND_REDUCESCATTER,
                        &a, &cd);
        if (e == WEFT_ENOMEM) {
            weft_diag_set(d, e, "optimal: out of memory costing the rail-hierarchical plan");
            goto fail;
        }
        if (e) {
            snprintf(note, note_size, "rail: the cost model failed (%s)", cd.msg);
            e = WEFT_OK;
            goto fail;
        }
        if (!weft_rat_eq(a, b->phase[i].algbw)) {
            weft_rat_format(a, x, sizeof x);
            weft_rat_format(b->phase[i].algbw, y, sizeof y);
            snprintf(note, note_size,
                     "rail: the rail-hierarchical %s (%s) reaches %s GB/s, below the bound %s",
                     weft_bound_coll_name(b->phase[i].coll), shape(&L, sh, sizeof sh), x, y);
            goto fail;
        }
    }
    e = build_plan(t, coll, &rp, &p);
    if (e) {
        weft_diag_set(d, e, "optimal: cannot build the rail-hierarchical plan (%s)",
                      weft_strerror(e));
        goto fail;
    }
    /* The gate: the real plan under the cost model. */
    weft_plan_cost c;
    weft_diag cd;
    weft_diag_clear(&cd);
    e = weft_plan_cost_get(p, t, &c, &cd);
    if (e == WEFT_ENOMEM) {
        weft_diag_set(d, e, "optimal: out of memory costing the rail-hierarchical plan");
        goto fail;
    }
    if (e) {
        snprintf(note, note_size, "rail: the cost model failed (%s)", cd.msg);
        e = WEFT_OK;
        goto fail;
    }
    if (!weft_rat_eq(c.algbw, b->algbw)) {
        weft_rat_format(c.algbw, x, sizeof x);
        weft_rat_format(b->algbw, y, sizeof y);
        snprintf(note, note_size,
                 "rail: the rail-hierarchical plan (%s) reaches %s GB/s, below the bound %s",
                 shape(&L, sh, sizeof sh), x, y);
        goto fail;
    }
    res.method = WEFT_OPTIMAL_RAIL;
    if (L.B == 1)
        snprintf(res.structure_note, sizeof res.structure_note, "rail: %s; direct sends",
                 shape(&L, sh, sizeof sh));
    else
        snprintf(res.structure_note, sizeof res.structure_note,
                 "rail: %s; a ring along each rail between boxes, %s inside each box",
                 shape(&L, sh, sizeof sh),
                 box.info.method == WEFT_OPTIMAL_PACKING ? "the box's own tree packing"
                                                         : "direct sends");
    res.coll = coll;
    res.ranks = b->ranks;
    res.algbw = c.algbw;
    res.bound = b->algbw;
    res.n_phases = b->n_phases;
    for (uint32_t i = 0; i < b->n_phases && !e; i++)
        e = fill_phase(&L, &box.info.phase[i], b->phase[i].coll, b->phase[i].algbw, &res.phase[i]);
    if (e) {
        weft_diag_set(d, e, "optimal: cannot describe the rail-hierarchical plan (%s)",
                      weft_strerror(e));
        goto fail;
    }
    box_sched_fini(&box);
    layout_fini(&L);
    *plan = p;
    *info = res;
    return WEFT_OK;
fail:
    weft_optimal_fini(&res);
    weft_plan_free(p);
    box_sched_fini(&box);
    layout_fini(&L);
    return e;
}
