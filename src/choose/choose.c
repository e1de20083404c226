/* The schedule registry's candidates ranked by simulation (weft/choose.h,
 * "The ranking"). Moved here from the CLI's `sim --compare`, whose ranking
 * `plan --compare`, `tune` and `step` now share. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/map.h"
#include "base/par.h"
#include "base/size_text.h"
#include "weft/choose.h"

void weft_choose_opts_init(weft_choose_opts *o, const weft_topo *t)
{
    memset(o, 0, sizeof *o);
    weft_sim_opts_init(&o->sim);
    if (t)
        o->sim.model = weft_sim_model_default(t);
    o->purpose = WEFT_SCHED_FOR_COMPARE;
}

/* ---- The candidates on threads -------------------------------------------
 *
 * weft_choose builds and simulates its candidates at once (weft__par_for,
 * one candidate an item) with the results of one after another, to the
 * bit: each candidate writes its own weft_choice, and the one shared
 * decision, whether candidate i takes an earlier candidate j's result
 * (same_run), waits for what it reads. Every candidate that has a digest
 * (a plan, not nccl's) publishes it as soon as its plan is built
 * (CAND_BUILT); i, its own plan built, waits for each j < i to be built,
 * and only for a j of an equal digest until j is done (CAND_DONE), then
 * applies the rule of the sequential loop to j's final result. An item
 * waits only on smaller items, which were taken before it and run to
 * their end, so the waits always end. The progress callback is called
 * under the same lock, one call at a time (from any of the threads). The
 * memory is up to one plan per thread instead of one. */

typedef enum cand_state { CAND_PENDING, CAND_BUILT, CAND_DONE } cand_state;

typedef struct choose_run {
    const weft_topo *t;
    weft_coll coll;
    const uint64_t *sizes;
    size_t nsizes;
    const weft_choose_opts *o;
    weft_choice *c;
    size_t n;
    cand_state *state; /* n, under lock */
    pthread_mutex_t lock;
    pthread_cond_t cond;
} choose_run;

static void progress(choose_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(choose_run *r, const char *fmt, ...)
{
    if (!r->o->progress)
        return;
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&r->lock);
    r->o->progress(r->o->progress_arg, buf);
    pthread_mutex_unlock(&r->lock);
}

/* Candidate i reached state st: what it wrote to r->c[i] before is
 * visible to whoever sees st. */
static void publish(choose_run *r, size_t i, cand_state st)
{
    pthread_mutex_lock(&r->lock);
    r->state[i] = st;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

static void await(choose_run *r, size_t j, cand_state st)
{
    pthread_mutex_lock(&r->lock);
    while (r->state[j] < st)
        pthread_cond_wait(&r->cond, &r->lock);
    pthread_mutex_unlock(&r->lock);
}

/* NCCL's algorithm for an in-network kind. */
static weft_nccl_algo nccl_of(weft_sim_innet_algo k)
{
    static const weft_nccl_algo m[] = {WEFT_NCCL_NVLS, WEFT_NCCL_NVLS_TREE,
                                       WEFT_NCCL_COLLNET_DIRECT, WEFT_NCCL_COLLNET_CHAIN};
    return m[k];
}

/* The most the registry lists (weft_sched_candidates' cap), then flash:auto
 * and the in-network algorithms: the candidates without o->names. */
#define REGISTRY_MAX 64
#define LISTED_MAX (REGISTRY_MAX + 1 + WEFT__SIM_INNET_COUNT)

static bool add(weft_choice *c, size_t *n, size_t cap, const char *name)
{
    if (*n >= cap)
        return false;
    snprintf(c[(*n)++].name, sizeof c->name, "%s", name);
    return true;
}

/* The candidates: o->names, or the registry's list for o->purpose
 * (weft_sched_candidates), with flash:auto after flash for FOR_COMPARE,
 * optimal left out for baselines, then with o->innet the in-network
 * algorithms NCCL runs for coll on t (weft_nccl_estimate at 1 GiB). */
static size_t list_candidates(const weft_topo *t, weft_coll coll, const weft_choose_opts *o,
                              weft_choice *c, size_t cap)
{
    const char *names[REGISTRY_MAX];
    size_t n = 0, nn;
    if (o->names) {
        for (size_t i = 0; i < o->n_names; i++)
            add(c, &n, cap, o->names[i]);
        return n;
    }
    nn = weft_sched_candidates(coll, o->matrix != NULL, o->purpose, names, REGISTRY_MAX);
    for (size_t i = 0; i < nn; i++) {
        if (o->baselines && strcmp(names[i], "optimal") == 0)
            continue;
        add(c, &n, cap, names[i]);
        /* flash:K's K chosen by simulation (run_flash_auto). */
        if (o->purpose == WEFT_SCHED_FOR_COMPARE && strcmp(names[i], "flash") == 0)
            add(c, &n, cap, "flash:auto");
    }
    weft_nccl_fabric f;
    weft_nccl_choice ch;
    for (int k = 0; o->innet && k < WEFT__SIM_INNET_COUNT; k++) {
        weft_sim_innet_algo a = (weft_sim_innet_algo)k;
        if (!weft_nccl_fabric_get(t, &f, NULL) &&
            !weft_nccl_estimate(&f, coll, nccl_of(a), WEFT_NCCL_PLAN_BYTES, &ch, NULL))
            add(c, &n, cap, weft_sim_innet_name(a));
    }
    return n;
}

/* ---- Equal runs --------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
    return weft__mix64(x);
}

/* Two independent 64-bit chains over one value. */
static void digest_add(uint64_t h[2], uint64_t v)
{
    h[0] = mix64(h[0] ^ v);
    h[1] = mix64((h[1] + v) * 0xff51afd7ed558ccdull + 0x632be59bd9b4e8ull);
}

static void digest_text(uint64_t h[2], const char *text)
{
    for (; *text; text++)
        digest_add(h, (unsigned char)*text);
    digest_add(h, 0x100); /* ends the name */
}

/* A 128-bit digest of everything that decides a plan's simulation (the
 * header; per op its fields, compute kind, deps in order and paths with
 * shares, epochs and node names; the circuits; the step it is forwarded
 * per and its rate, weft_plan_step_forward; whether it moves whole
 * messages, weft_plan_whole_messages; a sized plan's size and the
 * bytes of every op), in order: plans that weft_plan_equal calls equal
 * have one digest, and different plans share one with probability about
 * 2^-128. A sized plan whose op bytes cannot be read digests its own
 * address, so that it shares with no other. O(plan). */
static void plan_digest(const weft_plan *p, uint64_t h[2])
{
    const weft_plan_info *in = weft_plan_get_info(p);
    h[0] = 0x243f6a8885a308d3ull;
    h[1] = 0x13198a2e03707344ull;
    uint32_t n = weft_plan_num_ops(p);
    uint64_t head[] = {(uint64_t)in->coll, in->nranks,  in->root.v, in->chunks,
                       in->scratch,        in->inplace, n};
    for (size_t i = 0; i < sizeof head / sizeof *head; i++)
        digest_add(h, head[i]);
    for (uint32_t i = 0; i < n; i++) {
        weft_op o = weft_plan_op(p, i);
        uint64_t f[] = {(uint64_t)o.kind,
                        o.src_rank.v,
                        o.dst_rank.v,
                        (uint64_t)o.src_buf,
                        (uint64_t)o.dst_buf,
                        o.src_index,
                        o.dst_index,
                        o.count,
                        o.channel};
        for (size_t k = 0; k < sizeof f / sizeof *f; k++)
            digest_add(h, f[k]);
        uint32_t nd;
        const uint32_t *deps = weft_plan_op_deps(p, i, &nd);
        digest_add(h, nd);
        for (uint32_t k = 0; k < nd; k++)
            digest_add(h, deps[k]);
        uint32_t np = weft_plan_op_num_paths(p, i);
        digest_add(h, np);
        for (uint32_t k = 0; k < np; k++) {
            weft_rat sh = weft_plan_path_share(p, i, k);
            uint32_t len = weft_plan_path_len(p, i, k);
            digest_add(h, (uint64_t)sh.num);
            digest_add(h, (uint64_t)sh.den);
            digest_add(h, len);
            digest_add(h, weft_plan_path_epoch(p, i, k));
            for (uint32_t v = 0; v < len; v++)
                digest_text(h, weft_plan_path_node(p, i, k, v));
        }
        if (o.kind == WEFT_OP_NOP)
            digest_add(h, (uint64_t)weft_plan_op_compute(p, i));
    }
    uint32_t nc = weft_plan_num_circuits(p);
    digest_add(h, nc);
    for (uint32_t i = 0; i < nc; i++) {
        weft_plan_circuit c = weft_plan_get_circuit(p, i);
        digest_add(h, c.epoch);
        digest_text(h, c.ocs);
        digest_text(h, c.from);
        digest_text(h, c.to);
    }
    double gbps;
    digest_add(h, weft_plan_step_forward(p, &gbps));
    uint64_t gbits;
    memcpy(&gbits, &gbps, sizeof gbits);
    digest_add(h, gbits);
    digest_add(h, weft_plan_whole_messages(p));
    digest_add(h, weft_plan_sized(p));
    if (!weft_plan_sized(p))
        return;
    double own = weft_plan_own_size(p);
    uint64_t bits;
    memcpy(&bits, &own, sizeof bits);
    digest_add(h, bits);
    uint64_t *bytes = n ? weft__calloc(n, sizeof *bytes) : NULL;
    if (n && (!bytes || weft_plan_op_bytes(p, bytes, NULL))) {
        digest_add(h, (uint64_t)(uintptr_t)p);
    } else {
        for (uint32_t i = 0; i < n; i++)
            digest_add(h, bytes[i]);
    }
    weft__free(bytes);
}

/* An earlier candidate j that ran exactly what candidate i (built as a)
 * runs at size index s, whose result is then copied into i's; n when
 * there is none. Exactly: the same plan (equal 128-bit digests of
 * everything weft_plan_equal compares) under settings that resolve alike.
 * Candidates differ only in what nccl sets in eff (its protocol and the
 * share of its bandwidth its channels move, weft_sim_opts.chan_share), so
 * the settings resolve alike when they resolve to j's protocol and i's
 * share is the ranking's own (base, what j ran with); j must not be
 * nccl, whose plan changes with the size. The simulator is deterministic,
 * so running i would give j's result bit for bit: on a100:2 at 1 GiB
 * NCCL's choice is rings:16, the plan that rings:auto has just run. Each
 * candidate's plan is freed once it is simulated (only its digest is
 * kept), so the peak memory is that of the largest plan a thread, not of
 * all plans together. On threads, j is waited for (above, "The
 * candidates on threads"): built for its digest, done for its result. */
static size_t same_run(choose_run *run, const weft_candidate *a, size_t i, size_t s, uint64_t size,
                       const weft_sim_opts *eff)
{
    weft_choice *c = run->c;
    const weft_topo *t = run->t;
    const weft_sim_opts *base = &run->o->sim;
    weft_coll coll = run->coll;
    size_t n = run->n;
    const weft_plan *p = a->plan;
    weft_sim_opts r;
    if (!p || eff->chan_share != base->chan_share ||
        weft_sim_opts_resolve(eff, t, coll, size, size / weft_plan_size_chunks(p), &r, NULL))
        return n;
    uint64_t h[2];
    if (c[i].have_digest) {
        h[0] = c[i].digest[0];
        h[1] = c[i].digest[1];
    } else {
        plan_digest(p, h); /* nccl's plan at this size, never kept (run_one) */
    }
    for (size_t j = 0; j < i; j++) {
        await(run, j, CAND_BUILT); /* its digest, if it has one, is known */
        if (!c[j].have_digest || c[j].digest[0] != h[0] || c[j].digest[1] != h[1])
            continue;
        await(run, j, CAND_DONE);
        if (!c[j].res || c[j].res[s].proto != r.proto)
            continue;
        c[i].res[s] = c[j].res[s];
        return j;
    }
    return n;
}

/* ---- Building and simulating -------------------------------------------- */

/* Builds candidate `name` for matrix m: an alltoallv plan of a registry
 * spelling that is no composite (nccl), or optimal's. */
static weft_err build_traffic(weft_candidate *a, const char *name, const weft_topo *t,
                              const weft_traffic *m, const weft_choose_opts *o, weft_diag *d)
{
    for (size_t i = 0; i < weft_classic_count(); i++)
        if (strcmp(weft_classic_get(i)->name, name) == 0 && weft_classic_get(i)->composite)
            return weft_diag_set(d, WEFT_EUNSUPPORTED, "%s has no alltoallv plan", name);
    weft_plan *p = NULL;
    weft_err e = weft_choose_build_traffic(t, name, m, o->max_ops, o->max_ops_flag, &p, d);
    if (e)
        return e;
    weft_candidate_from_plan(a, p);
    a->name = name;
    if (strcmp(name, "optimal") == 0 && weft_topo_has_ocs(t)) {
        a->circuits = true; /* weft_sched_build built the circuit schedule */
        a->configs = weft_plan_num_epochs(p);
    }
    return WEFT_OK;
}

/* Sets r's algbw and busbw from the matrix's exact total / N when plan p
 * carries one. */
static void traffic_rates(const weft_traffic *m, const weft_plan *p, weft_sim_result *r)
{
    if (!m || !p || r->time_s <= 0)
        return;
    r->algbw_gbps = weft_plan_traffic_size(p) / r->time_s * 1e-9;
    r->busbw_gbps = r->algbw_gbps * weft_sim_busbw_factor(r->coll, r->ranks);
}

static bool alloc_results(weft_choice *c, size_t nsizes)
{
    c->res = calloc(nsizes, sizeof *c->res);
    c->label = calloc(nsizes, sizeof *c->label);
    if (c->res && c->label)
        return true;
    free(c->res);
    free(c->label);
    c->res = NULL;
    c->label = NULL;
    snprintf(c->why, sizeof c->why, "out of memory");
    return false;
}

static void drop_results(weft_choice *c)
{
    free(c->res);
    free(c->label);
    c->res = NULL;
    c->label = NULL;
}

/* The candidate flash:auto: flash:K for K = 1, 2, 4 and 8 (blocks cut into
 * K chunks that may span rounds, docs/algorithms.md), each simulated at
 * every size; per size the fastest is kept, labelled "flash:auto (C=K)".
 * The best K differs per matrix (and the plans grow with K), so synth
 * builds whole blocks and the simulator chooses here. */
static void run_flash_auto(const weft_topo *t, weft_coll coll, const uint64_t *sizes, size_t nsizes,
                           const weft_choose_opts *o, weft_choice *c)
{
    static const uint32_t ks[] = {1, 2, 4, 8};
    const weft_traffic *m = o->matrix;
    bool *have = calloc(nsizes, sizeof *have);
    if (!have || !alloc_results(c, nsizes)) {
        free(have);
        snprintf(c->why, sizeof c->why, "out of memory");
        return;
    }
    for (size_t k = 0; k < sizeof ks / sizeof *ks; k++) {
        char name[16];
        snprintf(name, sizeof name, "flash:%u", ks[k]);
        weft_diag d;
        weft_diag_clear(&d);
        weft_plan *p = NULL;
        weft_err e = m ? weft_choose_build_traffic(t, name, m, o->max_ops, o->max_ops_flag, &p, &d)
                       : weft_choose_build(t, name, coll, (weft_rank){0}, o->max_ops,
                                           o->max_ops_flag, NULL, &p, NULL, &d);
        if (e) {
            if (!c->why[0])
                snprintf(c->why, sizeof c->why, "%s", d.msg);
            continue;
        }
        c->built = true;
        weft_candidate alg;
        weft_candidate_from_plan(&alg, p);
        for (size_t s = 0; s < nsizes && !e; s++) {
            weft_sim_result r;
            e = weft_candidate_run(&alg, t, sizes[s], &o->sim, &r, &d);
            if (e) {
                if (!c->why[0])
                    snprintf(c->why, sizeof c->why, "%s: %.900s", name, d.msg);
                break;
            }
            traffic_rates(m, alg.plan, &r);
            if (!have[s] || r.time_s < c->res[s].time_s) {
                c->res[s] = r;
                have[s] = true;
                snprintf(c->label[s], sizeof c->label[s], "flash:auto (C=%u)", ks[k]);
            }
        }
        weft_candidate_fini(&alg);
    }
    bool all = nsizes > 0;
    for (size_t s = 0; s < nsizes; s++)
        all = all && have[s];
    free(have);
    if (!all)
        drop_results(c);
}

/* Builds and simulates candidate i at every size (c[i].res filled, or
 * c[i].why), publishing its digest once built. */
static void run_one(choose_run *run, size_t i)
{
    const weft_topo *t = run->t;
    const weft_choose_opts *o = run->o;
    const uint64_t *sizes = run->sizes;
    size_t nsizes = run->nsizes, n = run->n;
    weft_choice *c = run->c;
    weft_diag d;
    weft_diag_clear(&d);
    char st[64];
    progress(run, "building %s (%zu of %zu)", c[i].name, i + 1, n);
    if (strcmp(c[i].name, "flash:auto") == 0) {
        run_flash_auto(t, run->coll, sizes, nsizes, o, &c[i]);
        return;
    }
    weft_candidate a;
    memset(&a, 0, sizeof a);
    if (o->matrix
            ? build_traffic(&a, c[i].name, t, o->matrix, o, &d)
            : weft_candidate_build(&a, t, c[i].name, run->coll, o->need_plan || o->sim.cut_through,
                                   o->max_ops, o->max_ops_flag, &d)) {
        snprintf(c[i].why, sizeof c[i].why, "%s", d.msg);
        return;
    }
    /* Only the digest is kept for same_run: a later candidate whose plan
     * equals this one reuses its results. */
    if (!a.nccl && a.plan) {
        plan_digest(a.plan, c[i].digest);
        c[i].have_digest = true;
    }
    publish(run, i, CAND_BUILT);
    c[i].built = true;
    c[i].circuits = a.circuits;
    if (!alloc_results(&c[i], nsizes)) {
        weft_candidate_fini(&a);
        return;
    }
    for (size_t s = 0; s < nsizes; s++) {
        weft__size_text(sizes[s], st, sizeof st);
        progress(run, "%s at %s (%zu of %zu)", c[i].name, st, i + 1, n);
        weft_sim_opts eff;
        weft_err e = weft_candidate_prepare(&a, t, sizes[s], &o->sim, &eff, &d);
        weft_candidate_label(&a, sizes[s], c[i].label[s], sizeof c[i].label[s]);
        size_t j = e ? n : same_run(run, &a, i, s, sizes[s], &eff);
        if (j < n)
            progress(run, "%s at %s (%zu of %zu) is the run of %s", c[i].name, st, i + 1, n,
                     c[j].name);
        else if (!e)
            e = weft_candidate_run(&a, t, sizes[s], &o->sim, &c[i].res[s], &d);
        if (!e)
            traffic_rates(o->matrix, a.plan, &c[i].res[s]);
        if (e) {
            snprintf(c[i].why, sizeof c[i].why, "simulation failed at %llu bytes: %.900s",
                     (unsigned long long)sizes[s], d.msg);
            drop_results(&c[i]);
            break;
        }
    }
    c[i].innet = a.innet; /* nccl: its choice at the last size */
    weft_candidate_fini(&a);
}

/* Candidate `item` (a weft__par_for item), done whatever happens; fails
 * (stopping the loop) where o->fail_on_sim makes its failure the call's. */
static weft_err run_item(void *ctx, size_t item, unsigned worker)
{
    (void)worker;
    choose_run *run = ctx;
    run_one(run, item);
    publish(run, item, CAND_DONE);
    weft_choice *c = &run->c[item];
    return run->o->fail_on_sim && c->built && !c->res ? WEFT_EINVAL : WEFT_OK;
}

weft_err weft_choose(const weft_topo *t, weft_coll coll, const uint64_t *sizes, size_t nsizes,
                     const weft_choose_opts *o, weft_ranking *out, weft_diag *d)
{
    memset(out, 0, sizeof *out);
    if (nsizes == 0)
        return weft_diag_set(d, WEFT_EINVAL, "choose: no size to rank at");
    if ((unsigned)coll >= WEFT__COLL_COUNT)
        return weft_diag_set(d, WEFT_EINVAL, "choose: unknown collective");
    /* An explicit list is ranked whole, however long; a name is kept
     * whole too, so one longer than a choice's name is refused. */
    size_t cap = o->names ? o->n_names : LISTED_MAX;
    for (size_t i = 0; o->names && i < o->n_names; i++)
        if (strlen(o->names[i]) >= sizeof out->c->name)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "choose: candidate %zu, '%.64s', is longer than %zu characters",
                                 i + 1, o->names[i], sizeof out->c->name - 1);
    weft_choice *c = calloc(cap ? cap : 1, sizeof *c);
    if (!c)
        return weft_diag_code(d, WEFT_ENOMEM);
    out->coll = coll;
    out->nsizes = nsizes;
    out->c = c;
    out->n = list_candidates(t, coll, o, c, cap);
    choose_run run;
    memset(&run, 0, sizeof run);
    run.t = t;
    run.coll = coll;
    run.sizes = sizes;
    run.nsizes = nsizes;
    run.o = o;
    run.c = c;
    run.n = out->n;
    run.state = weft__calloc(out->n ? out->n : 1, sizeof *run.state);
    if (!run.state) {
        weft_ranking_fini(out);
        return weft_diag_code(d, WEFT_ENOMEM);
    }
    pthread_mutex_init(&run.lock, NULL);
    pthread_cond_init(&run.cond, NULL);
    weft__par_for(out->n, weft__par_workers(out->n), run_item, &run);
    pthread_cond_destroy(&run.cond);
    pthread_mutex_destroy(&run.lock);
    weft__free(run.state);
    /* In listing order, as one after another: the first failure is the
     * call's (the candidates after it may not have run). */
    for (size_t i = 0; i < out->n; i++) {
        if (o->fail_on_sim && c[i].built && !c[i].res) {
            weft_err e = weft_diag_set(d, WEFT_EINVAL, "%s %s: %s", c[i].name, weft_coll_name(coll),
                                       c[i].why);
            weft_ranking_fini(out);
            return e;
        }
        out->simulated += c[i].res != NULL;
    }
    return WEFT_OK;
}

size_t weft_ranking_order(const weft_ranking *r, size_t s, size_t *idx)
{
    size_t m = 0;
    if (s >= r->nsizes)
        return 0;
    for (size_t i = 0; i < r->n; i++) {
        if (!r->c[i].res)
            continue;
        size_t at = m++;
        while (at > 0 && r->c[idx[at - 1]].res[s].time_s > r->c[i].res[s].time_s) {
            idx[at] = idx[at - 1];
            at--;
        }
        idx[at] = i;
    }
    return m;
}

const weft_choice *weft_ranking_best(const weft_ranking *r, size_t s)
{
    const weft_choice *best = NULL;
    for (size_t i = 0; s < r->nsizes && i < r->n; i++)
        if (r->c[i].res && (!best || r->c[i].res[s].time_s < best->res[s].time_s))
            best = &r->c[i];
    return best;
}

void weft_ranking_fini(weft_ranking *r)
{
    for (size_t i = 0; r->c && i < r->n; i++)
        drop_results(&r->c[i]);
    free(r->c);
    memset(r, 0, sizeof *r);
}
