/* The rail-hierarchical optimal schedule (src/synth/optimal_rail.h,
 * docs/optimal-scale.md). */
#include "synth/optimal_rail.h"

#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
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
        if (box[h] == UINT32_MAX) box[h] = nbox++;
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
    if (e || !*fits) layout_fini(L);
    return e;
}

/* ---- The plan ------------------------------------------------------------ */

/* The allgather of every root, root by root: the rail chain, then the box
 * fan-out from every rank of the chain. The ops of one root touch only its
 * slot, so this order gives the same dependences as a step-by-step one. */
static weft_err emit_allgather(synth_emit *em, const rail_layout *L, weft_buf buf)
{
    weft_err e = WEFT_OK;
    for (uint32_t b = 0; b < L->B && !e; b++) {
        for (uint32_t g = 0; g < L->G && !e; g++) {
            uint32_t root = at(L, b, g);
            for (uint32_t j = 1; j < L->B && !e; j++)
                e = synth_copy(em, at(L, b + j - 1, g), at(L, b + j, g), buf, root, 1, 0, NULL);
            for (uint32_t j = 0; j < L->B && !e; j++)
                for (uint32_t x = 0; x < L->G && !e; x++)
                    if (x != g)
                        e = synth_copy(em, at(L, b + j, g), at(L, b + j, x), buf, root, 1, 0, NULL);
        }
    }
    return e;
}

/* The reduce-scatter of every root (t, g): each box reduces into its rank
 * on rail g, then the partial sums go round the rail from (t+1, g) to
 * (t, g). The emitter orders the reduces into one slot. */
static weft_err emit_reducescatter(synth_emit *em, const rail_layout *L, weft_buf buf)
{
    weft_err e = WEFT_OK;
    for (uint32_t t = 0; t < L->B && !e; t++) {
        for (uint32_t g = 0; g < L->G && !e; g++) {
            uint32_t root = at(L, t, g);
            for (uint32_t j = 1; j <= L->B && !e; j++)
                for (uint32_t x = 0; x < L->G && !e; x++)
                    if (x != g)
                        e = synth_reduce(em, at(L, t + j, x), at(L, t + j, g), buf, root, 1, 0,
                                         NULL);
            for (uint32_t j = 1; j < L->B && !e; j++)
                e = synth_reduce(em, at(L, t + j, g), at(L, t + j + 1, g), buf, root, 1, 0, NULL);
        }
    }
    return e;
}

/* ---- What the plan is, for weft_optimal ----------------------------------- */

/* The tree of one root, edges in the order the emitters above use (which
 * is the order weft_optimal_tree asks for in each direction). */
static void tree_edges(const rail_layout *L, bool rs, uint32_t b, uint32_t g, uint32_t *from,
                       uint32_t *to)
{
    uint32_t n = 0;
    if (!rs) {
        for (uint32_t j = 1; j < L->B; j++, n++) {
            from[n] = at(L, b + j - 1, g);
            to[n] = at(L, b + j, g);
        }
    }
    for (uint32_t j = rs ? 1 : 0; j < L->B + (rs ? 1 : 0); j++) {
        for (uint32_t x = 0; x < L->G; x++) {
            if (x == g) continue;
            from[n] = at(L, b + j, rs ? x : g);
            to[n] = at(L, b + j, rs ? g : x);
            n++;
        }
    }
    if (rs) {
        for (uint32_t j = 1; j < L->B; j++, n++) {
            from[n] = at(L, b + j, g);
            to[n] = at(L, b + j + 1, g);
        }
    }
}

static weft_err fill_phase(const rail_layout *L, weft_bound_coll coll, weft_rat algbw,
                           weft_optimal_phase *out)
{
    uint32_t nr = L->B * L->G;
    memset(out, 0, sizeof *out);
    out->coll = coll;
    out->algbw = algbw;
    out->bound = algbw;
    out->k = 1;
    /* U = k / r with r = algbw / N. */
    if (weft_rat_div(weft_rat_int(nr), algbw, &out->U)) return WEFT_EOVERFLOW;
    out->trees = weft__calloc(nr, sizeof *out->trees);
    if (!out->trees) return WEFT_ENOMEM;
    out->n_trees = nr;
    for (uint32_t b = 0; b < L->B; b++) {
        for (uint32_t g = 0; g < L->G; g++) {
            weft_optimal_tree *tr = &out->trees[b * L->G + g];
            tr->root.v = at(L, b, g);
            tr->mult = 1;
            tr->n_edges = nr - 1;
            size_t room = nr > 1 ? nr - 1 : 1;
            tr->from = weft__malloc(room * sizeof *tr->from);
            tr->to = weft__malloc(room * sizeof *tr->to);
            if (!tr->from || !tr->to) return WEFT_ENOMEM;
            tree_edges(L, coll == WEFT_BOUND_REDUCESCATTER, b, g, tr->from, tr->to);
        }
    }
    return WEFT_OK;
}

/* The exact throughput of one phase, cheaply: a stand-in plan with one
 * op per rank pair the phase uses, whose count is the number of the
 * phase's transfers between that pair, has exactly the phase's link loads
 * (loads are linear in the count), so the cost model gives the phase's
 * throughput from 8 N ops instead of N^2. It is only costed, never run. */
static weft_err phase_algbw(const weft_topo *t, const rail_layout *L, bool rs, weft_rat *out,
                            weft_diag *d)
{
    uint32_t nr = L->B * L->G;
    weft_plan_info pi = {.coll = rs ? WEFT_COLL_REDUCESCATTER : WEFT_COLL_ALLGATHER,
                         .nranks = nr,
                         .chunks = 1,
                         .inplace = true};
    weft_plan *p = NULL;
    weft_err e = weft_plan_new(&pi, &p);
    for (uint32_t b = 0; b < L->B && !e; b++) {
        for (uint32_t g = 0; g < L->G && !e; g++) {
            weft_op op = {.kind = WEFT_OP_COPY, .src_buf = WEFT_BUF_IN, .dst_buf = WEFT_BUF_IN};
            if (L->B > 1) {
                op.src_rank.v = at(L, b, g);
                op.dst_rank.v = at(L, b + 1, g);
                op.count = L->B - 1;
                e = weft_plan_add_op(p, &op, NULL, 0, NULL);
            }
            for (uint32_t x = 0; x < L->G && !e; x++) {
                if (x == g) continue;
                op.src_rank.v = at(L, b, rs ? x : g);
                op.dst_rank.v = at(L, b, rs ? g : x);
                op.count = L->B;
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
    if (!e) *out = c.algbw;
    weft_plan_free(p);
    return e;
}

static weft_err build_plan(const weft_topo *t, weft_coll coll, const rail_layout *L,
                           weft_plan **out)
{
    uint32_t nr = weft_topo_num_ranks(t);
    weft_plan_info pi = {.coll = coll, .nranks = nr, .chunks = 1, .inplace = true};
    if (coll == WEFT_COLL_ALLREDUCE) pi.chunks = nr;
    weft_plan *p = NULL;
    weft_err e = weft_plan_new(&pi, &p);
    if (e) return e;
    synth_emit em;
    synth_emit_init(&em, p);
    if (coll == WEFT_COLL_ALLGATHER) {
        e = emit_allgather(&em, L, WEFT_BUF_OUT);
    } else if (coll == WEFT_COLL_REDUCESCATTER) {
        e = emit_reducescatter(&em, L, WEFT_BUF_IN);
    } else {
        e = emit_reducescatter(&em, L, WEFT_BUF_OUT);
        if (!e) e = emit_allgather(&em, L, WEFT_BUF_OUT);
    }
    return synth_finish(e, &em, p, out);
}

weft_err opt_rail_try(const weft_topo *t, weft_coll coll, const weft_bound *b, weft_plan **plan,
                      weft_optimal *info, char *note, size_t note_size, weft_diag *d)
{
    rail_layout L;
    bool fits;
    weft_err e = layout_make(t, &L, &fits, note, note_size);
    if (e) return weft_diag_set(d, e, "optimal: out of memory sizing the rail structure");
    if (!fits) return WEFT_OK;
    uint64_t per = (uint64_t)L.B * L.G * ((uint64_t)L.B - 1 + (uint64_t)L.B * (L.G - 1));
    if (per * (coll == WEFT_COLL_ALLREDUCE ? 2 : 1) > WEFT_PLAN_MAX_OPS) {
        snprintf(note, note_size, "rail: %llu transfers exceed the plan limits",
                 (unsigned long long)per);
        layout_fini(&L);
        return WEFT_OK;
    }
    weft_plan *p = NULL;
    weft_optimal res;
    memset(&res, 0, sizeof res);
    char x[64], y[64];
    /* Each phase first, on the stand-in plans: cheap, and a fabric the
     * construction does not suit is turned away before the big build. */
    for (uint32_t i = 0; i < b->n_phases; i++) {
        weft_rat a;
        weft_diag cd;
        weft_diag_clear(&cd);
        e = phase_algbw(t, &L, b->phase[i].coll == WEFT_BOUND_REDUCESCATTER, &a, &cd);
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
                     "rail: the rail-hierarchical %s (%u boxes of %u) reaches %s GB/s, below "
                     "the bound %s",
                     weft_bound_coll_name(b->phase[i].coll), L.B, L.G, x, y);
            goto fail;
        }
    }
    e = build_plan(t, coll, &L, &p);
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
                 "rail: the rail-hierarchical plan (%u boxes of %u) reaches %s GB/s, below "
                 "the bound %s",
                 L.B, L.G, x, y);
        goto fail;
    }
    res.method = WEFT_OPTIMAL_RAIL;
    snprintf(res.structure_note, sizeof res.structure_note, "rail: %u boxes of %u ranks", L.B, L.G);
    res.coll = coll;
    res.ranks = b->ranks;
    res.algbw = c.algbw;
    res.bound = b->algbw;
    res.n_phases = b->n_phases;
    for (uint32_t i = 0; i < b->n_phases && !e; i++)
        e = fill_phase(&L, b->phase[i].coll, b->phase[i].algbw, &res.phase[i]);
    if (e) {
        weft_diag_set(d, e, "optimal: cannot describe the rail-hierarchical plan (%s)",
                      weft_strerror(e));
        goto fail;
    }
    layout_fini(&L);
    *plan = p;
    *info = res;
    return WEFT_OK;
fail:
    weft_optimal_fini(&res);
    weft_plan_free(p);
    layout_fini(&L);
    return e;
}
