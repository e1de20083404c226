/* One candidate built for simulation (weft/choose.h, "One candidate"):
 * what `weft sim --algo A` runs and what every ranking path simulates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/choose.h"

static bool ring_coll(weft_coll c)
{
    return c == WEFT_COLL_ALLGATHER || c == WEFT_COLL_REDUCESCATTER || c == WEFT_COLL_ALLREDUCE;
}

/* " (the limit, --max-ops)" or " (the limit)": how a message names max_ops. */
static void limit_text(const char *flag, char *buf, size_t len)
{
    if (flag)
        snprintf(buf, len, "(the limit, %s)", flag);
    else
        snprintf(buf, len, "(the limit)");
}

weft_err weft_choose_build(const weft_topo *t, const char *name, weft_coll coll, weft_rank root,
                           uint32_t max_ops, const char *max_ops_flag, const weft_optimal_opts *oo,
                           weft_plan **out, weft_optimal *opt, weft_diag *d)
{
    weft_sched_args a;
    weft_sched_args_init(&a, coll);
    a.root = root;
    a.max_ops = max_ops;
    a.optimal = oo;
    a.optimal_out = opt;
    weft_err e = weft_sched_build(t, name, &a, out, d);
    if (e != WEFT_ELIMIT || !max_ops)
        return e;
    static const char limit[] = "(the limit)";
    char lt[64];
    limit_text(max_ops_flag, lt, sizeof lt);
    size_t len = strlen(d->msg), ll = sizeof limit - 1;
    if (strcmp(name, "optimal") != 0)
        weft_diag_set(d, e, "%s %s on %u ranks has more than %u ops %s", name, weft_coll_name(coll),
                      weft_topo_num_ranks(t), max_ops, lt);
    else if (max_ops_flag && len >= ll && strcmp(d->msg + len - ll, limit) == 0)
        /* optimal's own count of its least ops (weft_sched_build): the
         * limit it names is the caller's flag. */
        snprintf(d->msg + len - 1, sizeof d->msg - (len - 1), ", %s)", max_ops_flag);
    return e;
}

weft_err weft_choose_build_traffic(const weft_topo *t, const char *name, const weft_traffic *m,
                                   uint32_t max_ops, const char *max_ops_flag, weft_plan **out,
                                   weft_diag *d)
{
    weft_sched_args a;
    weft_sched_args_init(&a, WEFT_COLL_ALLTOALL);
    a.max_ops = max_ops;
    a.matrix = m;
    weft_err e = weft_sched_build(t, name, &a, out, d);
    if (e == WEFT_ELIMIT && max_ops && strcmp(name, "optimal") != 0) {
        char lt[64];
        limit_text(max_ops_flag, lt, sizeof lt);
        weft_diag_set(d, e, "%s alltoall on %u ranks has more than %u ops %s", name,
                      weft_topo_num_ranks(t), max_ops, lt);
    }
    return e;
}

/* Whether a link of t has a shaper (burst=): token buckets are simulated
 * for plans only, so the ring is then simulated as its plan. */
static bool shaped(const weft_topo *t)
{
    weft_link_shaper sh;
    for (uint32_t l = 0; l < weft_topo_num_links(t); l++)
        if (weft_topo_link_shaper(t, (weft_link_id){l}, &sh))
            return true;
    return false;
}

bool weft_choose_innet_parse(const char *name, weft_sim_innet_algo *out)
{
    for (int k = 0; k < WEFT__SIM_INNET_COUNT; k++) {
        if (strcmp(name, weft_sim_innet_name((weft_sim_innet_algo)k)) == 0) {
            *out = (weft_sim_innet_algo)k;
            return true;
        }
    }
    return false;
}

/* NCCL's algorithm for an in-network kind, and back. */
static weft_nccl_algo nccl_of(weft_sim_innet_algo k)
{
    static const weft_nccl_algo m[] = {WEFT_NCCL_NVLS, WEFT_NCCL_NVLS_TREE,
                                       WEFT_NCCL_COLLNET_DIRECT, WEFT_NCCL_COLLNET_CHAIN};
    return m[k];
}

static weft_sim_innet_algo innet_of(weft_nccl_algo a)
{
    for (int k = 0; k < WEFT__SIM_INNET_COUNT; k++)
        if (nccl_of((weft_sim_innet_algo)k) == a)
            return (weft_sim_innet_algo)k;
    return WEFT_SIM_INNET_NVLS;
}

weft_err weft_candidate_build(weft_candidate *a, const weft_topo *t, const char *name,
                              weft_coll coll, bool need_plan, uint32_t max_ops,
                              const char *max_ops_flag, weft_diag *d)
{
    memset(a, 0, sizeof *a);
    a->name = name;
    a->coll = coll;
    weft_sim_innet_algo k;
    if (weft_choose_innet_parse(name, &k)) {
        /* Runs where NCCL runs it (weft_nccl_estimate says why not). */
        weft_nccl_choice ch;
        weft_err e = weft_nccl_fabric_get(t, &a->fabric, d);
        if (!e)
            e = weft_nccl_estimate(&a->fabric, coll, nccl_of(k), WEFT_NCCL_PLAN_BYTES, &ch, d);
        if (e)
            return e;
        memset(&a->fabric, 0, sizeof a->fabric);
        a->innet = true;
        a->innet_algo = k;
        return WEFT_OK;
    }
    if (strcmp(name, "nccl") == 0) {
        if (!weft_classic_supports(name, coll))
            return weft_diag_set(d, WEFT_EUNSUPPORTED, "nccl does not build %s",
                                 weft_coll_name(coll));
        a->nccl = true;
        a->max_ops = max_ops;
        a->max_ops_flag = max_ops_flag;
        return weft_nccl_fabric_get(t, &a->fabric, d);
    }
    if (strcmp(name, "rings:auto") == 0 && weft_nccl_fabric_get(t, &a->fabric, NULL))
        memset(&a->fabric, 0, sizeof a->fabric); /* the build below says why */
    if (strcmp(name, "ring") == 0 && ring_coll(coll) && !need_plan && !shaped(t)) {
        uint32_t n = weft_topo_num_ranks(t);
        uint32_t *order = malloc((n ? n : 1) * sizeof *order);
        if (!order)
            return weft_diag_code(d, WEFT_ENOMEM);
        weft_err e = weft_classic_ring_order(t, order, d);
        if (e) {
            free(order);
            return e;
        }
        a->ring = order;
        return WEFT_OK;
    }
    return weft_choose_build(t, name, coll, (weft_rank){0}, max_ops, max_ops_flag, NULL, &a->plan,
                             NULL, d);
}

void weft_candidate_from_plan(weft_candidate *a, weft_plan *p)
{
    memset(a, 0, sizeof *a);
    a->name = "plan";
    a->coll = weft_plan_get_info(p)->coll;
    a->plan = p;
}

weft_err weft_candidate_force(weft_candidate *a, int algo, int proto, uint64_t buffsize,
                              weft_diag *d)
{
    if (!a->nccl)
        return weft_diag_set(d, WEFT_EINVAL, "%s: only nccl's choice is forced", a->name);
    if (algo >= WEFT__NCCL_ALGO_COUNT || algo == WEFT_NCCL_P2P)
        return weft_diag_set(d, WEFT_EINVAL, "nccl: no forced algorithm %d", algo);
    if (proto >= WEFT_PROTO_COUNT)
        return weft_diag_set(d, WEFT_EINVAL, "nccl: no protocol %d", proto);
    if (buffsize && buffsize < WEFT_NCCL_STEPS)
        return weft_diag_set(d, WEFT_EINVAL, "nccl: a buffer of %llu bytes has no %u steps",
                             (unsigned long long)buffsize, WEFT_NCCL_STEPS);
    a->force_algo_set = algo >= 0;
    a->force_algo = algo >= 0 ? (weft_nccl_algo)algo : WEFT_NCCL_RING;
    a->force_proto_set = proto >= 0;
    a->force_proto = proto >= 0 ? (weft_proto)proto : WEFT_PROTO_SIMPLE;
    a->buffsize = buffsize;
    return WEFT_OK;
}

weft_err weft_candidate_nccl_choice(const weft_candidate *a, uint64_t size, weft_nccl_choice *out,
                                    weft_diag *d)
{
    return weft_nccl_choose_forced(&a->fabric, a->coll, (double)size,
                                   a->force_algo_set ? (int)a->force_algo : -1,
                                   a->force_proto_set ? (int)a->force_proto : -1, out, d);
}

/* The plan of choice ch: NCCL's own (weft_synth_classic "nccl" at size),
 * or with something forced the forced ring's or tree's
 * (weft_synth_nccl_algo), PAT's bruck or hd. */
static weft_err build_choice(const weft_candidate *a, const weft_topo *t, uint64_t size,
                             const weft_nccl_choice *ch, weft_plan **p, weft_diag *d)
{
    if (!a->force_algo_set && !a->force_proto_set)
        return weft_synth_classic_at(t, "nccl", a->coll, (weft_rank){0}, a->max_ops, (double)size,
                                     p, d);
    if (ch->algo == WEFT_NCCL_RING || ch->algo == WEFT_NCCL_TREE)
        return weft_synth_nccl_algo(t, a->coll, ch->algo, a->max_ops, p, d);
    return weft_synth_classic_at(t, ch->plan, a->coll, (weft_rank){0}, a->max_ops, (double)size, p,
                                 d);
}

/* NCCL's plan at `size`, built unless the last one is the same; an
 * in-network choice has none (a->innet). */
static weft_err nccl_plan(weft_candidate *a, const weft_topo *t, uint64_t size, weft_proto *proto,
                          double *share, weft_diag *d)
{
    weft_nccl_choice ch;
    weft_err e = weft_candidate_nccl_choice(a, size, &ch, d);
    *proto = ch.proto;
    *share = 1;
    if (e)
        return e;
    /* NCCL launches fewer channels for a small allreduce (its nBytes is
     * the buffer's size; other collectives' are not modelled). */
    if (a->coll == WEFT_COLL_ALLREDUCE)
        *share = weft_nccl_channel_share(&a->fabric, a->coll, ch.algo, ch.proto, (double)size);
    a->innet = weft_nccl_algo_innet(ch.algo);
    if (a->innet) {
        a->innet_algo = innet_of(ch.algo);
        return WEFT_OK;
    }
    if (a->plan && strcmp(ch.plan, a->built) == 0)
        return WEFT_OK;
    weft_plan *p = NULL;
    e = build_choice(a, t, size, &ch, &p, d);
    /* NCCL_BUFFSIZE sets the step of a tree plan forwarded per step. */
    double gbps;
    if (!e && a->buffsize && weft_plan_step_forward(p, &gbps))
        weft_plan_set_step_forward(p, WEFT_NCCL_STEP_OF(a->buffsize), gbps);
    if (e == WEFT_ELIMIT && a->max_ops) {
        char lt[64];
        limit_text(a->max_ops_flag, lt, sizeof lt);
        weft_diag_set(d, e, "nccl (%s) %s on %u ranks has more than %u ops %s", ch.plan,
                      weft_coll_name(a->coll), weft_topo_num_ranks(t), a->max_ops, lt);
    }
    if (e)
        return e;
    weft_plan_free(a->plan);
    a->plan = p;
    snprintf(a->built, sizeof a->built, "%s", ch.plan);
    return WEFT_OK;
}

void weft_candidate_label(const weft_candidate *a, uint64_t size, char *buf, size_t len)
{
    weft_nccl_choice ch;
    if (a->circuits) {
        snprintf(buf, len, "%s (circuits: %u configs)", a->name, a->configs);
        return;
    }
    if (!a->nccl && a->fabric.channels > 0) {
        snprintf(buf, len, "%s (%u)", a->name, a->fabric.channels); /* rings:auto */
        return;
    }
    if (!a->nccl || weft_candidate_nccl_choice(a, size, &ch, NULL)) {
        snprintf(buf, len, "%s", a->name);
        return;
    }
    if (weft_nccl_algo_innet(ch.algo))
        snprintf(buf, len, "nccl (%s, %s)", weft_nccl_algo_name(ch.algo),
                 weft_proto_name(ch.proto));
    else
        snprintf(buf, len, "nccl (%s, %s, %s)", weft_nccl_algo_name(ch.algo),
                 weft_proto_name(ch.proto), ch.plan);
}

weft_err weft_candidate_prepare(weft_candidate *a, const weft_topo *t, uint64_t size,
                                const weft_sim_opts *o, weft_sim_opts *eff, weft_diag *d)
{
    *eff = *o;
    if (!a->nccl)
        return WEFT_OK;
    weft_proto proto;
    double share;
    weft_err e = nccl_plan(a, t, size, &proto, &share, d);
    if (e)
        return e;
    /* The gpu model runs the protocol NCCL chose, unless one is set, on
     * the channels NCCL launches at this size. */
    if (o->model == WEFT_SIM_GPU && o->proto < 0)
        eff->proto = (int)proto;
    if (o->model == WEFT_SIM_GPU && o->proto < 0)
        eff->chan_share = share;
    return WEFT_OK;
}

weft_err weft_candidate_run(weft_candidate *a, const weft_topo *t, uint64_t size,
                            const weft_sim_opts *o, weft_sim_result *out, weft_diag *d)
{
    weft_sim_opts eff;
    weft_err e = weft_candidate_prepare(a, t, size, o, &eff, d);
    if (e)
        return e;
    if (a->innet) {
        if (o->trace)
            return weft_diag_set(d, WEFT_EUNSUPPORTED,
                                 "sim: a trace draws a plan's ops; %s reduces in the switch and "
                                 "has none",
                                 weft_sim_innet_name(a->innet_algo));
        return weft_sim_innet(t, a->coll, a->innet_algo, NULL, 0, 0, size, o, out, d);
    }
    if (a->ring)
        return weft_sim_ring_order(t, a->coll, a->ring, size, &eff, out, d);
    return weft_sim_plan(t, a->plan, size, &eff, out, d);
}

void weft_candidate_fini(weft_candidate *a)
{
    free(a->ring);
    weft_plan_free(a->plan);
    a->ring = NULL;
    a->plan = NULL;
}
