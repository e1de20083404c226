/* The ring collectives, simulated on flow classes. See weft/sim.h.
 *
 * One step of a ring moves size/N bytes from every rank r to rank r+1; the
 * N transfers of a step and their "waits for rank r-1" map are reduced to
 * classes by symm.c, then each class runs every step and slice as one
 * engine flow. Step k, slice s of class C waits for step k-1, slice s of
 * the class of C's predecessor, and for step k, slice s-1 of C itself
 * (slices of one step leave a rank in order).
 */
#include <string.h>

#include "base/alloc.h"
#include "sim/result.h"
#include "topo/paths.h"

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

/* Routes every ring hop. */
static weft_err route_ring(const weft_topo *t, uint32_t n, xfers *x, weft_diag *d)
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
        weft_node_id a = weft_topo_rank_node(t, (weft_rank){r});
        weft_node_id b = weft_topo_rank_node(t, (weft_rank){(r + 1) % n});
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
        x->pred[r] = (r + n - 1) % n;
    }
free_paths:
    weft_paths_free(p);
    return err;
}

weft_err weft_sim_ring(const weft_topo *t, weft_coll coll, uint64_t size, const weft_sim_opts *o,
                       weft_sim_result *out, weft_diag *d)
{
    weft_sim_opts defaults;
    if (!o) {
        weft_sim_opts_init(&defaults);
        o = &defaults;
    }
    uint32_t n = weft_topo_num_ranks(t);
    if (coll != WEFT_COLL_ALLGATHER && coll != WEFT_COLL_REDUCESCATTER &&
        coll != WEFT_COLL_ALLREDUCE)
        return weft_diag_set(d, WEFT_EINVAL, "sim: the ring algorithm does not do %s",
                             weft_coll_name(coll));
    if (n < 2)
        return weft_diag_set(d, WEFT_EINVAL, "sim: a ring needs at least 2 ranks, the fabric has %u",
                             n);
    if (size == 0 || o->slices == 0 || !(o->alpha_s >= 0))
        return weft_diag_set(d, WEFT_EINVAL, "sim: size and slices must be > 0, alpha >= 0");
    uint64_t steps = coll == WEFT_COLL_ALLREDUCE ? 2 * (uint64_t)(n - 1) : n - 1;

    weft_err err;
    xfers x;
    memset(&x, 0, sizeof x);
    sim_classes cls;
    memset(&cls, 0, sizeof cls);
    sim_engine *e = NULL;
    double *cap = NULL, *ccap = NULL, *cmult = NULL, *acc = NULL, *rcoef = NULL;
    uint32_t *rlink = NULL, *croute = NULL;

    if ((err = route_ring(t, n, &x, d)))
        goto free_all;
    uint32_t nl = weft_topo_num_links(t);
    cap = weft__malloc((size_t)(nl ? nl : 1) * sizeof *cap);
    if (!cap)
        goto nomem;
    for (uint32_t l = 0; l < nl; l++)
        cap[l] = weft_rat_to_double(weft_topo_link_bw(t, (weft_link_id){l})) * 1e9;
    sim_xfer_set xs = {n, x.r_off, x.link, x.coef, x.lat, x.pred, nl, cap};
    if ((err = sim_classes_compute(&xs, o->symmetry, &cls)))
        goto fail;
    uint64_t nflows = (uint64_t)cls.nf * steps * o->slices;
    if (nflows >= UINT32_MAX) {
        err = weft_diag_set(d, WEFT_ELIMIT,
                            "sim: %llu flows to simulate (%u classes x %llu steps x %u slices) "
                            "exceed the engine's limit",
                            (unsigned long long)nflows, cls.nf, (unsigned long long)steps,
                            o->slices);
        goto free_all;
    }

    /* Engine links are link classes. */
    ccap = weft__malloc((size_t)(cls.nl ? cls.nl : 1) * sizeof *ccap);
    cmult = weft__malloc((size_t)(cls.nl ? cls.nl : 1) * sizeof *cmult);
    acc = weft__calloc((size_t)(cls.nl ? cls.nl : 1), sizeof *acc);
    croute = weft__malloc((size_t)(cls.nf ? cls.nf : 1) * sizeof *croute);
    size_t maxlen = 1;
    for (uint32_t r = 0; r < n; r++)
        if (x.r_off[r + 1] - x.r_off[r] > maxlen)
            maxlen = x.r_off[r + 1] - x.r_off[r];
    rlink = weft__malloc(maxlen * sizeof *rlink);
    rcoef = weft__malloc(maxlen * sizeof *rcoef);
    if (!ccap || !cmult || !acc || !croute || !rlink || !rcoef)
        goto nomem;
    for (uint32_t c = 0; c < cls.nl; c++) {
        ccap[c] = cap[cls.lrep[c]];
        cmult[c] = cls.lcount[c];
    }
    if ((err = sim_engine_new(cls.nl, ccap, cmult, &e)))
        goto fail;
    /* A class's route: per link class, the class's total load spread over
     * the class's links. */
    for (uint32_t c = 0; c < cls.nf; c++) {
        uint32_t rep = cls.frep[c], len = 0;
        for (uint32_t k = x.r_off[rep]; k < x.r_off[rep + 1]; k++) {
            uint32_t lc = cls.lcls[x.link[k]];
            if (acc[lc] == 0)
                rlink[len++] = lc;
            acc[lc] += x.coef[k];
        }
        for (uint32_t i = 0; i < len; i++) {
            rcoef[i] = (double)cls.fcount[c] * acc[rlink[i]] / cls.lcount[rlink[i]];
            acc[rlink[i]] = 0;
        }
        if ((err = sim_engine_add_route(e, len, rlink, rcoef, x.lat[rep], &croute[c])))
            goto fail;
    }
    double bytes = (double)size / n / o->slices;
    for (uint64_t k = 0; k < steps; k++)
        for (uint32_t s = 0; s < o->slices; s++)
            for (uint32_t c = 0; c < cls.nf; c++) {
                uint32_t f;
                if ((err = sim_engine_add_flow(e, croute[c], bytes, cls.fcount[c], &f)))
                    goto fail;
                uint32_t base = (uint32_t)((k * o->slices + s) * cls.nf);
                if (k > 0) {
                    uint32_t pc = cls.fcls[x.pred[cls.frep[c]]];
                    if ((err = sim_engine_add_dep(e, f, base - o->slices * cls.nf + pc)))
                        goto fail;
                }
                if (s > 0 && (err = sim_engine_add_dep(e, f, base - cls.nf + c)))
                    goto fail;
            }
    if ((err = sim_engine_run(e, o->alpha_s, d)))
        goto free_all;
    memset(out, 0, sizeof *out);
    sim_result_fill(out, e, &cls, ccap, coll, n, size);
    out->transfers = (uint64_t)n * steps * o->slices;
    err = WEFT_OK;
    goto free_all;
nomem:
    err = WEFT_ENOMEM;
fail:
    weft_diag_code(d, err);
free_all:
    sim_engine_free(e);
    weft__free(cap);
    weft__free(ccap);
    weft__free(cmult);
    weft__free(acc);
    weft__free(croute);
    weft__free(rlink);
    weft__free(rcoef);
    sim_classes_fini(&cls);
    xfers_fini(&x);
    return err;
}
