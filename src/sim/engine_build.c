/* The flow-level engine's construction: sim_engine_new/_free, routes,
 * flows and dependencies as they are added, and their CSR form built at the
 * start of a run. See engine_internal.h for the file order. */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "sim/engine_internal.h"

weft_err sim_engine_new(uint32_t n_links, const double *cap, const double *mult, sim_engine **out)
{
    /* A link of no capacity (or NaN) would hold its flows forever, and the
     * run would end in a misleading "dependency cycle". */
    for (uint32_t i = 0; i < n_links; i++)
        if (!(cap[i] > 0) || (mult && !(mult[i] > 0)))
            return WEFT_EINVAL;
    sim_engine *e = weft__calloc(1, sizeof *e);
    if (!e)
        return WEFT_ENOMEM;
    size_t n = n_links ? n_links : 1;
    e->n_links = n_links;
    e->cap = weft__malloc(n * sizeof *e->cap);
    e->lmult = weft__malloc(n * sizeof *e->lmult);
    e->expect = weft__calloc(n, sizeof *e->expect);
    e->carried = weft__calloc(n, sizeof *e->carried);
    e->lflows = weft__calloc(n, sizeof *e->lflows);
    e->resid = weft__malloc(n * sizeof *e->resid);
    e->wsum = weft__malloc(n * sizeof *e->wsum);
    e->ucount = weft__malloc(n * sizeof *e->ucount);
    e->lstamp = weft__calloc(n, sizeof *e->lstamp);
    e->r_off = weft__calloc(1, sizeof *e->r_off);
    e->route_cap = 1;
    e->n_cls = e->n_lists = 1;
    if (!e->cap || !e->lmult || !e->expect || !e->carried || !e->lflows || !e->resid || !e->wsum ||
        !e->ucount || !e->lstamp || !e->r_off) {
        sim_engine_free(e);
        return WEFT_ENOMEM;
    }
    for (uint32_t i = 0; i < n_links; i++) {
        e->cap[i] = cap[i];
        e->lmult[i] = mult ? mult[i] : 1.0;
    }
    e->cutoff = INFINITY;
    e->scan_max = SIM_ENGINE_SCAN_LINKS;
    e->prune = true;
    *out = e;
    return WEFT_OK;
}

weft_err sim_engine_set_bucket(sim_engine *e, uint32_t l, double bytes, double peak, double tokens)
{
    if (e->ran || l >= e->n_links || !(bytes > 0) || !(peak > e->cap[l]) || !isfinite(peak) ||
        !isfinite(bytes) || !(tokens >= 0 && tokens <= bytes))
        return WEFT_EINVAL;
    if (!e->b_size) {
        size_t n = e->n_links;
        e->b_size = weft__calloc(n, sizeof *e->b_size);
        e->b_peak = weft__calloc(n, sizeof *e->b_peak);
        e->b_rate = weft__calloc(n, sizeof *e->b_rate);
        e->b_tok = weft__calloc(n, sizeof *e->b_tok);
        e->b_upd = weft__calloc(n, sizeof *e->b_upd);
        e->b_load = weft__calloc(n, sizeof *e->b_load);
        if (!e->b_size || !e->b_peak || !e->b_rate || !e->b_tok || !e->b_upd || !e->b_load)
            return WEFT_ENOMEM; /* the engine is freed, not resumed */
    }
    e->b_size[l] = bytes;
    e->b_peak[l] = peak;
    e->b_rate[l] = e->cap[l];
    e->b_tok[l] = tokens;
    return WEFT_OK;
}

void sim_engine_free(sim_engine *e)
{
    if (!e)
        return;
    if (e->lflows)
        for (size_t i = 0; i < (size_t)e->n_links * e->n_lists; i++)
            weft__free(e->lflows[i].v);
    if (e->cseeds)
        for (uint32_t c = 1; c < e->n_cls; c++)
            weft__free(e->cseeds[c - 1].v);
    if (e->l_bn)
        for (uint32_t l = 0; l < e->n_links; l++)
            weft__free(e->l_bn[l].v);
    void *arrays[] = {
        e->cap,     e->lmult,   e->expect,       e->carried,      e->lflows,    e->resid,
        e->wsum,    e->ucount,  e->lstamp,       e->r_off,        e->r_lat,     e->r_link.v,
        e->r_coef,  e->f_route, e->f_bytes,      e->f_mult,       e->fl_mem,    e->f_new,
        e->f_rate0, e->f_start, e->f_drain,      e->f_done,       e->f_state,   e->f_frozen,
        e->f_slot,  e->slot,    e->f_left,       e->dep_f.v,      e->dep_on.v,  e->succ_off,
        e->succ,    e->seeds.v, e->comp_links.v, e->comp_flows.v, e->ct_f.v,    e->ct_on.v,
        e->ctd_off, e->ctd,     e->cts_off,      e->cts,          e->ct_cu,     e->f_ctleft,
        e->f_ready, e->f_dirty, e->ct_dirty.v,   e->ct_stack.v,   e->q_f.v,     e->q_on.v,
        e->q_next,  e->f_nb,    e->f_rel,        e->f_w,          e->b_size,    e->b_peak,
        e->b_rate,  e->b_tok,   e->b_upd,        e->b_load,       e->f_cls,     e->ccap,
        e->cseeds,  e->r_now,   e->l_twin,       e->fz_t,         e->fz_seq,    e->fz_stale,
        e->l_load,  e->l_sub,   e->f_nbn,        e->l_bn,         e->drained.v, e->rl.v,
        e->pl,      e->l_idx,   e->ck,           e->r_lvl,        e->r_rmax,    e->r_nonr,
        e->r_pop,   e->r_scan,  e->rf_end,       e->l_gap,        e->l_wait,    e->l_dead,
        e->ck_seq,  e->pp,      e->rg_off,       e->rg_w,         e->rg_lvl,    e->rg_fz,
        e->rg_p,    e->rg_c,    e->ev,           e->p_last,       e->p_open,    e->rg_nbn};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        weft__free(arrays[i]);
    if (e->rf_own) {
        weft__free(e->rf_off);
        weft__free(e->rf_link);
        weft__free(e->rf_coef);
    }
    weft__evheap_fini(&e->heap);
    weft__evheap_fini(&e->fill);
    weft__free(e);
}

weft_err sim_engine_add_route(sim_engine *e, uint32_t n, const uint32_t *link, const double *coef,
                              double lat_s, uint32_t *route_id)
{
    if (!(lat_s >= 0) || e->n_routes == UINT32_MAX - 1)
        return WEFT_EINVAL;
    for (uint32_t i = 0; i < n; i++) {
        if (link[i] >= e->n_links || !(coef[i] > 0))
            return WEFT_EINVAL;
        for (uint32_t j = 0; j < i; j++)
            if (link[j] == link[i])
                return WEFT_EINVAL;
    }
    size_t need = e->n_routes + 2;
    if (need > e->route_cap) {
        size_t cap = e->route_cap * 2 > need ? e->route_cap * 2 : need;
        uint32_t *off = weft__realloc_array(e->r_off, cap, sizeof *off);
        if (!off)
            return WEFT_ENOMEM;
        e->r_off = off;
        double *lat = weft__realloc_array(e->r_lat, cap, sizeof *lat);
        if (!lat)
            return WEFT_ENOMEM;
        e->r_lat = lat;
        if (e->r_now) {
            uint8_t *now = weft__realloc_array(e->r_now, cap, sizeof *now);
            if (!now)
                return WEFT_ENOMEM;
            memset(now + e->route_cap, 0, cap - e->route_cap);
            e->r_now = now;
        }
        e->route_cap = cap;
    }
    size_t base = e->r_link.n;
    if (base + n > UINT32_MAX)
        return WEFT_ELIMIT;
    if (weft__grow((void **)&e->r_link.v, &e->r_link.cap, base + n + 1, sizeof(uint32_t)) ||
        weft__grow((void **)&e->r_coef, &e->r_coef_cap, base + n + 1, sizeof(double)))
        return WEFT_ENOMEM;
    if (n) {
        memcpy(e->r_link.v + base, link, n * sizeof *link);
        memcpy(e->r_coef + base, coef, n * sizeof *coef);
    }
    e->r_link.n = base + n;
    e->r_lat[e->n_routes] = lat_s;
    if (e->r_now)
        e->r_now[e->n_routes] = 0;
    e->r_off[e->n_routes + 1] = (uint32_t)(base + n);
    *route_id = e->n_routes++;
    return WEFT_OK;
}

weft_err sim_engine_add_now_route(sim_engine *e, double lat_s, uint32_t *route_id)
{
    weft_err err = sim_engine_add_route(e, 0, NULL, NULL, lat_s, route_id);
    if (err)
        return err;
    if (!e->r_now && !(e->r_now = weft__calloc(e->route_cap, sizeof *e->r_now)))
        return WEFT_ENOMEM;
    e->r_now[*route_id] = 1;
    return WEFT_OK;
}

/* Resizes one per-flow array to cap elements; false on failure (the old
 * block stays valid). */
static bool resize(void *field, size_t cap, size_t elem)
{
    void **pp = field;
    void *p = weft__realloc_array(*pp, cap, elem);
    if (!p)
        return false;
    *pp = p;
    return true;
}

static weft_err grow_flows(sim_engine *e)
{
    size_t cap = e->flow_cap ? e->flow_cap * 2 : 64;
    bool ok =
        resize(&e->f_route, cap, sizeof *e->f_route) &&
        resize(&e->f_bytes, cap, sizeof *e->f_bytes) &&
        resize(&e->f_mult, cap, sizeof *e->f_mult) && resize(&e->f_new, cap, sizeof *e->f_new) &&
        resize(&e->f_rate0, cap, sizeof *e->f_rate0) &&
        resize(&e->f_start, cap, sizeof *e->f_start) &&
        resize(&e->f_drain, cap, sizeof *e->f_drain) &&
        resize(&e->f_done, cap, sizeof *e->f_done) &&
        resize(&e->f_state, cap, sizeof *e->f_state) &&
        resize(&e->f_frozen, cap, sizeof *e->f_frozen) &&
        resize(&e->f_slot, cap, sizeof *e->f_slot) && resize(&e->f_left, cap, sizeof *e->f_left) &&
        (!e->f_w || resize(&e->f_w, cap, sizeof *e->f_w)) &&
        (!e->f_cls || resize(&e->f_cls, cap, sizeof *e->f_cls));
    if (!ok)
        return WEFT_ENOMEM;
    e->flow_cap = cap;
    return WEFT_OK;
}

weft_err sim_engine_add_flow(sim_engine *e, uint32_t route, double bytes, double mult,
                             uint32_t *flow_id)
{
    return sim_engine_add_weighted_flow(e, route, bytes, mult, 1.0, flow_id);
}

weft_err sim_engine_add_weighted_flow(sim_engine *e, uint32_t route, double bytes, double mult,
                                      double w, uint32_t *flow_id)
{
    if (route >= e->n_routes || !(bytes >= 0) || !(mult > 0) || !(w > 0) || !isfinite(w) ||
        e->ran || e->n_flows == UINT32_MAX - 1)
        return WEFT_EINVAL;
    if (e->n_flows == e->flow_cap && grow_flows(e))
        return WEFT_ENOMEM;
    if (w != 1.0 && !e->f_w) {
        /* The first weight other than 1: every flow so far has weight 1. */
        e->f_w = weft__malloc(e->flow_cap * sizeof *e->f_w);
        if (!e->f_w)
            return WEFT_ENOMEM;
        for (uint32_t g = 0; g < e->n_flows; g++)
            e->f_w[g] = 1.0;
    }
    uint32_t f = e->n_flows;
    if (e->f_w)
        e->f_w[f] = w;
    if (e->f_cls)
        e->f_cls[f] = 0;
    e->f_route[f] = route;
    e->f_bytes[f] = bytes;
    e->f_mult[f] = mult;
    e->f_rate0[f] = 0;
    e->f_start[f] = e->f_drain[f] = e->f_done[f] = NAN;
    e->f_state[f] = F_IDLE;
    e->f_frozen[f] = 0;
    e->f_slot[f] = e->n_slots;
    e->f_left[f] = 0;
    e->n_slots += e->r_off[route + 1] - e->r_off[route];
    for (uint32_t k = e->r_off[route]; k < e->r_off[route + 1]; k++)
        e->expect[e->r_link.v[k]] += e->r_coef[k] * bytes;
    e->n_flows++;
    *flow_id = f;
    return WEFT_OK;
}

weft_err sim_engine_set_class(sim_engine *e, uint32_t f, uint32_t cls)
{
    if (f >= e->n_flows || cls >= SIM_ENGINE_CLASSES || e->ran)
        return WEFT_EINVAL;
    if (cls && !e->f_cls) {
        /* The first background flow: every flow so far is class 0. */
        e->f_cls = weft__calloc(e->flow_cap, sizeof *e->f_cls);
        if (!e->f_cls)
            return WEFT_ENOMEM;
    }
    if (e->f_cls)
        e->f_cls[f] = (uint8_t)cls;
    return WEFT_OK;
}

weft_err sim_eng_build_classes(sim_engine *e)
{
    uint32_t top = 0;
    for (uint32_t f = 0; e->f_cls && f < e->n_flows; f++)
        if (e->f_cls[f] > top)
            top = e->f_cls[f];
    if (!top)
        return WEFT_OK;
    for (size_t i = 0; i < e->ct_f.n; i++)
        if (e->f_cls[e->ct_f.v[i]] != e->f_cls[e->ct_on.v[i]])
            return WEFT_EINVAL;
    size_t n = e->n_links ? e->n_links : 1, lists = n * (top + 1);
    vec32 *lf = weft__realloc_array(e->lflows, lists, sizeof *lf);
    if (!lf)
        return WEFT_ENOMEM;
    memset(lf + n, 0, (lists - n) * sizeof *lf);
    e->lflows = lf;
    e->n_lists = top + 1;
    e->ccap = weft__malloc(n * top * sizeof *e->ccap);
    e->cseeds = weft__calloc(top, sizeof *e->cseeds);
    if (!e->ccap || !e->cseeds)
        return WEFT_ENOMEM;
    e->n_cls = top + 1;
    /* Until class 0 is first filled on a link, the link is idle. */
    for (uint32_t c = 1; c <= top; c++)
        memcpy(e->ccap + (size_t)(c - 1) * n, e->cap, n * sizeof *e->cap);
    return WEFT_OK;
}

weft_err sim_engine_add_dep(sim_engine *e, uint32_t f, uint32_t dep)
{
    if (f >= e->n_flows || dep >= e->n_flows || e->ran)
        return WEFT_EINVAL;
    if (sim_eng_vec_push(&e->dep_f, f) || sim_eng_vec_push(&e->dep_on, dep))
        return WEFT_ENOMEM;
    e->f_left[f]++;
    return WEFT_OK;
}

weft_err sim_engine_add_ct_dep(sim_engine *e, uint32_t f, uint32_t dep)
{
    if (f >= e->n_flows || dep >= e->n_flows || e->ran || e->f_bytes[f] != e->f_bytes[dep] ||
        sim_eng_weight(e, f) != sim_eng_weight(e, dep))
        return WEFT_EINVAL;
    uint32_t r = e->f_route[f];
    if (e->r_off[r] == e->r_off[r + 1] || e->f_bytes[f] == 0)
        return sim_engine_add_dep(e, f, dep);
    if (e->ct_f.n >= UINT32_MAX - 1)
        return WEFT_ELIMIT;
    if (sim_eng_vec_push(&e->ct_f, f) || sim_eng_vec_push(&e->ct_on, dep)) {
        e->ct_f.n = e->ct_on.n; /* both hold the same pairs */
        return WEFT_ENOMEM;
    }
    e->f_left[f]++;
    return WEFT_OK;
}

weft_err sim_engine_add_queue_dep(sim_engine *e, uint32_t f, uint32_t dep)
{
    if (f >= e->n_flows || dep >= e->n_flows || f == dep || e->ran)
        return WEFT_EINVAL;
    if (sim_eng_vec_push(&e->q_f, f) || sim_eng_vec_push(&e->q_on, dep)) {
        e->q_f.n = e->q_on.n;
        return WEFT_ENOMEM;
    }
    e->f_left[f]++;
    return WEFT_OK;
}

weft_err sim_eng_build_queue(sim_engine *e)
{
    if (!e->q_f.n)
        return WEFT_OK;
    e->q_next = weft__malloc(((size_t)e->n_flows + 1) * sizeof *e->q_next);
    e->f_nb = weft__calloc((size_t)e->n_flows + 1, sizeof *e->f_nb);
    e->f_rel = weft__calloc((size_t)e->n_flows + 1, sizeof *e->f_rel);
    if (!e->q_next || !e->f_nb || !e->f_rel)
        return WEFT_ENOMEM;
    for (uint32_t f = 0; f < e->n_flows; f++)
        e->q_next[f] = UINT32_MAX;
    for (size_t i = 0; i < e->q_f.n; i++) {
        if (e->q_next[e->q_on.v[i]] != UINT32_MAX)
            return WEFT_EINVAL; /* one flow queued behind each at most */
        e->q_next[e->q_on.v[i]] = e->q_f.v[i];
    }
    return WEFT_OK;
}

weft_err sim_eng_build_succ(sim_engine *e)
{
    e->succ_off = weft__calloc((size_t)e->n_flows + 1, sizeof *e->succ_off);
    e->succ = weft__malloc((e->dep_f.n ? e->dep_f.n : 1) * sizeof *e->succ);
    if (!e->succ_off || !e->succ)
        return WEFT_ENOMEM;
    for (size_t i = 0; i < e->dep_on.n; i++)
        e->succ_off[e->dep_on.v[i] + 1]++;
    for (uint32_t f = 0; f < e->n_flows; f++)
        e->succ_off[f + 1] += e->succ_off[f];
    uint32_t *fill = weft__malloc(((size_t)e->n_flows + 1) * sizeof *fill);
    if (!fill)
        return WEFT_ENOMEM;
    memcpy(fill, e->succ_off, ((size_t)e->n_flows + 1) * sizeof *fill);
    for (size_t i = 0; i < e->dep_on.n; i++)
        e->succ[fill[e->dep_on.v[i]]++] = e->dep_f.v[i];
    weft__free(fill);
    return WEFT_OK;
}

/* Edge lists of `key` (forwarder or dep of each edge) in CSR form. */
static weft_err csr(uint32_t n_flows, const vec32 *key, uint32_t **off_out, uint32_t **list_out)
{
    uint32_t *off = weft__calloc((size_t)n_flows + 1, sizeof *off);
    uint32_t *list = weft__malloc(key->n * sizeof *list);
    uint32_t *at = weft__malloc(((size_t)n_flows + 1) * sizeof *at);
    if (!off || !list || !at) {
        weft__free(off);
        weft__free(list);
        weft__free(at);
        return WEFT_ENOMEM;
    }
    for (size_t i = 0; i < key->n; i++)
        off[key->v[i] + 1]++;
    for (uint32_t f = 0; f < n_flows; f++)
        off[f + 1] += off[f];
    memcpy(at, off, ((size_t)n_flows + 1) * sizeof *at);
    for (size_t i = 0; i < key->n; i++)
        list[at[key->v[i]]++] = (uint32_t)i;
    weft__free(at);
    *off_out = off;
    *list_out = list;
    return WEFT_OK;
}

weft_err sim_eng_build_ct(sim_engine *e)
{
    if (!e->ct_f.n)
        return WEFT_OK;
    if ((uint64_t)e->n_flows * 2 >= UINT32_MAX)
        return WEFT_ELIMIT; /* catch-up events take ids n_flows + f */
    weft_err err;
    if ((err = csr(e->n_flows, &e->ct_f, &e->ctd_off, &e->ctd)) ||
        (err = csr(e->n_flows, &e->ct_on, &e->cts_off, &e->cts)))
        return err;
    e->ct_cu = weft__calloc(e->ct_f.n, sizeof *e->ct_cu);
    e->f_ctleft = weft__malloc((size_t)e->n_flows * sizeof *e->f_ctleft);
    e->f_ready = weft__calloc(e->n_flows, sizeof *e->f_ready);
    e->f_dirty = weft__calloc(e->n_flows, sizeof *e->f_dirty);
    if (!e->ct_cu || !e->f_ctleft || !e->f_ready || !e->f_dirty)
        return WEFT_ENOMEM;
    for (uint32_t f = 0; f < e->n_flows; f++)
        e->f_ctleft[f] = e->ctd_off[f + 1] - e->ctd_off[f];
    return WEFT_OK;
}

void sim_engine_set_plain(sim_engine *e, bool on)
{
    e->plain = on;
}

void sim_engine_set_above(sim_engine *e, bool on)
{
    e->above_ask = on;
}

void sim_engine_set_scan(sim_engine *e, uint32_t max_links)
{
    e->scan_max = max_links;
}

void sim_engine_set_prune(sim_engine *e, bool on)
{
    e->prune = on;
}

/* Position of link l in route r, or UINT32_MAX. */
static uint32_t route_pos(const sim_engine *e, uint32_t r, uint32_t l)
{
    for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++)
        if (e->r_link.v[k] == l)
            return k;
    return UINT32_MAX;
}

/* Does link m double link l (engine_internal.h): the same capacity, the
 * same (route, coefficient) list (lists by route id, from the incidence
 * in CSR form: off, rt, co), and after l in each of those routes? */
static bool doubles(const sim_engine *e, const uint32_t *off, const uint32_t *rt, const double *co,
                    uint32_t l, uint32_t m)
{
    if (e->cap[l] != e->cap[m] || off[l + 1] - off[l] != off[m + 1] - off[m])
        return false;
    for (uint32_t i = 0; i < off[l + 1] - off[l]; i++)
        if (rt[off[l] + i] != rt[off[m] + i] || co[off[l] + i] != co[off[m] + i])
            return false;
    for (uint32_t i = off[l]; i < off[l + 1]; i++)
        if (route_pos(e, rt[i], m) < route_pos(e, rt[i], l))
            return false;
    return true;
}

/* fl in fl_mem, a line longer than the records, from its first line
 * boundary: each record then lies in one line. */
weft_err sim_eng_build_flows(sim_engine *e)
{
    size_t n = e->n_flows ? e->n_flows : 1, line = sizeof *e->fl;
    e->fl_mem = weft__malloc(n * sizeof *e->fl + line - 1);
    if (!e->fl_mem)
        return WEFT_ENOMEM;
    e->fl = (sim_flow *)(((uintptr_t)e->fl_mem + line - 1) & ~(uintptr_t)(line - 1));
    for (uint32_t f = 0; f < e->n_flows; f++)
        e->fl[f] = (sim_flow){.route = e->f_route[f],
                              .bytes = e->f_bytes[f],
                              .rem = e->f_bytes[f],
                              .bn = SIM_NO_LINK};
    return WEFT_OK;
}

weft_err sim_eng_build_fill(sim_engine *e)
{
    size_t nl = e->n_links ? e->n_links : 1, nk = e->r_off[e->n_routes];
    e->fz_t = weft__malloc(nl * sizeof *e->fz_t);
    e->fz_seq = weft__malloc(nl * sizeof *e->fz_seq);
    e->fz_stale = weft__calloc(nl, sizeof *e->fz_stale);
    e->rf_off = e->r_off;
    e->rf_link = e->r_link.v;
    e->rf_coef = e->r_coef;
    if (!e->fz_t || !e->fz_seq || !e->fz_stale)
        return WEFT_ENOMEM;
    /* A bucket's link needs its own load (buckets_after). */
    if (e->plain || e->b_size || !nk)
        return WEFT_OK;
    /* Each link's (route, coefficient) list, by route id. */
    uint32_t *off = weft__calloc(nl + 1, sizeof *off);
    uint32_t *at = weft__malloc((nl + 1) * sizeof *at);
    uint32_t *rt = weft__malloc(nk * sizeof *rt);
    double *co = weft__malloc(nk * sizeof *co);
    e->l_twin = weft__calloc(nl, sizeof *e->l_twin);
    weft_err err = WEFT_ENOMEM;
    if (!off || !at || !rt || !co || !e->l_twin)
        goto done;
    for (size_t k = 0; k < nk; k++)
        off[e->r_link.v[k] + 1]++;
    for (uint32_t l = 0; l < e->n_links; l++)
        off[l + 1] += off[l];
    memcpy(at, off, (nl + 1) * sizeof *at);
    for (uint32_t r = 0; r < e->n_routes; r++)
        for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++) {
            uint32_t l = e->r_link.v[k];
            rt[at[l]] = r;
            co[at[l]++] = e->r_coef[k];
        }
    /* A twin of l lies on l's first route. */
    size_t twins = 0;
    for (uint32_t l = 0; l < e->n_links; l++) {
        if (off[l] == off[l + 1] || e->l_twin[l])
            continue;
        uint32_t r0 = rt[off[l]];
        for (uint32_t k = e->r_off[r0]; k < e->r_off[r0 + 1]; k++) {
            uint32_t m = e->r_link.v[k];
            if (m != l && !e->l_twin[m] && doubles(e, off, rt, co, l, m)) {
                e->l_twin[m] = 1;
                twins++;
            }
        }
    }
    err = WEFT_OK;
    e->st.twin_links = (uint32_t)twins;
    if (!twins)
        goto done;
    e->rf_off = weft__malloc(((size_t)e->n_routes + 1) * sizeof *e->rf_off);
    e->rf_link = weft__malloc(nk * sizeof *e->rf_link);
    e->rf_coef = weft__malloc(nk * sizeof *e->rf_coef);
    e->rf_own = true;
    if (!e->rf_off || !e->rf_link || !e->rf_coef) {
        err = WEFT_ENOMEM;
        goto done;
    }
    uint32_t n = 0;
    for (uint32_t r = 0; r < e->n_routes; r++) {
        e->rf_off[r] = n;
        for (uint32_t k = e->r_off[r]; k < e->r_off[r + 1]; k++)
            if (!e->l_twin[e->r_link.v[k]]) {
                e->rf_link[n] = e->r_link.v[k];
                e->rf_coef[n++] = e->r_coef[k];
            }
    }
    e->rf_off[e->n_routes] = n;
done:
    weft__free(off);
    weft__free(at);
    weft__free(rt);
    weft__free(co);
    return err;
}
