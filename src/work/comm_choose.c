/* A step's collectives chosen per group by weft_choose (weft/work.h,
 * WEFT_WORK_COLL_BEST; docs/step.md, "Choosing each group's collective"):
 * the step as a ranking path, ranking what `weft sim --compare` ranks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "weft/choose.h"
#include "work/work_internal.h"

/* A plan's most ops when a group's schedules are ranked: weft sim's
 * default --max-ops (src/cli/sim_algo.h, CLI_SIM_MAX_OPS: a ring
 * allreduce on 1,024 ranks, about 0.5 GB), so that the step and `weft sim
 * --compare` leave out the same plans. */
#define CHOOSE_MAX_OPS 2097152u

void weft_work_ctx_set_coll_algo(weft_work_ctx *c, weft_work_coll_algo a)
{
    c->coll_algo = a;
}

weft_err weft_work_ctx_set_a2a_algo(weft_work_ctx *c, const char *algo, weft_diag *d)
{
    if (!algo || !*algo) {
        c->a2a_algo[0] = 0;
        return WEFT_OK;
    }
    if (strlen(algo) >= sizeof c->a2a_algo ||
        !weft_sched_supports(algo, WEFT_COLL_ALLTOALL, true)) {
        char names[256] = "";
        size_t len = 0;
        weft_sched_info in;
        for (size_t i = 0; weft_sched_get(i, &in); i++)
            if (in.matrix && !in.composite && len + strlen(in.name) + 3 < sizeof names)
                len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "",
                                        in.name);
        return weft_diag_set(d, WEFT_EINVAL,
                             "'%.40s' builds no all-to-all of a traffic matrix (the schedules that "
                             "do: %s)",
                             algo, names);
    }
    snprintf(c->a2a_algo, sizeof c->a2a_algo, "%s", algo);
    return WEFT_OK;
}

const weft_work_choice *weft_work_choices(const weft_work_ctx *c, size_t *n)
{
    *n = c->choices_n;
    return c->choices;
}

bool weft__work_chooses(const weft_work_ctx *c, weft_coll coll, bool p2p)
{
    return c->coll_algo == WEFT_WORK_COLL_BEST && !p2p &&
           (coll == WEFT_COLL_ALLGATHER || coll == WEFT_COLL_REDUCESCATTER ||
            coll == WEFT_COLL_ALLREDUCE || coll == WEFT_COLL_ALLTOALL);
}

/* The fastest schedule of coll of `size` on the fabric of ranks g[0 ..
 * gs): its label and time. With a matrix m (coll alltoall, every rank of
 * the fabric), the fastest alltoallv plan of m at size, the matrix's
 * total / N (as `weft sim --compare --traffic`). */
static weft_err choose_group(const weft_work_ctx *c, weft_coll coll, const uint32_t *g, uint32_t gs,
                             uint64_t size, const weft_traffic *m, char *label, size_t len,
                             char *name, double *time_s, weft_diag *d)
{
    weft_topo *sub = NULL;
    const weft_topo *t = c->topo;
    if (gs < c->ranks) {
        weft_err e = weft_topo_subset(c->topo, g, gs, &sub, d);
        if (e)
            return e;
        t = sub;
    }
    weft_choose_opts o;
    weft_choose_opts_init(&o, t);
    o.sim = c->opts;
    o.innet = !m;
    o.matrix = m;
    o.max_ops = CHOOSE_MAX_OPS;
    weft_ranking r;
    weft_err e = weft_choose(t, coll, &size, 1, &o, &r, d);
    if (!e) {
        const weft_choice *best = weft_ranking_best(&r, 0);
        if (!best) {
            e = weft_diag_set(d, WEFT_EUNSUPPORTED,
                              "no schedule builds %s%s on a group of %u ranks (%s: %.400s)",
                              weft_coll_name(coll), m ? " of a traffic matrix" : "", gs,
                              r.n ? r.c[0].name : "none", r.n ? r.c[0].why : "no candidate");
        } else {
            snprintf(label, len, "%s", best->label[0]);
            snprintf(name, sizeof best->name, "%s", best->name);
            *time_s = best->res[0].time_s;
        }
        weft_ranking_fini(&r);
    }
    weft_topo_free(sub);
    return e;
}

/* Plan p of a group's fabric (its ranks the group's, g[0 .. gs) in the
 * fabric's order, as weft_topo_subset numbers them) as a plan on the
 * whole fabric: the same header but the rank count, each op's ranks
 * mapped, deps and routes kept (routes name nodes, which keep their
 * names). WEFT_EUNSUPPORTED for a plan with circuit epochs or op sizes,
 * which do not carry over. */
static weft_err remap(const weft_plan *p, const uint32_t *sorted, uint32_t nranks, weft_plan **out)
{
    *out = NULL;
    if (weft_plan_num_epochs(p) > 1 || weft_plan_sized(p) || weft_plan_traffic(p))
        return WEFT_EUNSUPPORTED;
    weft_plan_info info = *weft_plan_get_info(p);
    info.nranks = nranks;
    if (weft_coll_has_root(info.coll))
        info.root.v = sorted[info.root.v];
    weft_plan *q = NULL;
    weft_err e = weft_plan_new(&info, &q);
    const char *nodes[64];
    for (uint32_t i = 0; !e && i < weft_plan_num_ops(p); i++) {
        weft_op o = weft_plan_op(p, i);
        o.src_rank.v = sorted[o.src_rank.v];
        o.dst_rank.v = sorted[o.dst_rank.v];
        uint32_t nd;
        const uint32_t *deps = weft_plan_op_deps(p, i, &nd);
        e = weft_plan_add_op(q, &o, deps, nd, NULL);
        for (uint32_t k = 0; !e && k < weft_plan_op_num_paths(p, i); k++) {
            uint32_t len = weft_plan_path_len(p, i, k);
            if (len > 64) {
                e = WEFT_EUNSUPPORTED;
                break;
            }
            for (uint32_t v = 0; v < len; v++)
                nodes[v] = weft_plan_path_node(p, i, k, v);
            e = weft_plan_add_path(q, i, weft_plan_path_share(p, i, k), nodes, len);
        }
    }
    if (e) {
        weft_plan_free(q);
        return e;
    }
    *out = q;
    return WEFT_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The groups of pos all at once, each running its chosen candidate
 * names[g] (every one a plan, none nccl, whose plan and protocol change
 * with the size): the plans on the whole fabric side by side
 * (weft_sim_plans), the last group's end in *out. Any error (a plan that
 * does not carry over, weft_sim_plans refusing the mix) is returned and
 * the caller keeps the groups' times alone. */
static weft_err run_together(weft_work_ctx *c, weft_coll coll, const uint32_t *pos, uint32_t n,
                             uint32_t gs, uint64_t size, char (*names)[32], double *out)
{
    uint32_t ng = n / gs;
    weft_sim_job *jobs = weft__calloc(ng, sizeof *jobs);
    weft_plan **plans = weft__calloc(ng, sizeof *plans);
    uint32_t *sorted = weft__malloc(gs * sizeof *sorted);
    double *done = weft__calloc(ng, sizeof *done);
    weft_err e = jobs && plans && sorted && done ? WEFT_OK : WEFT_ENOMEM;
    for (uint32_t g = 0; g < ng && !e; g++) {
        memcpy(sorted, pos + (size_t)g * gs, gs * sizeof *sorted);
        qsort(sorted, gs, sizeof *sorted, cmp_u32);
        weft_topo *sub = NULL;
        weft_candidate a;
        memset(&a, 0, sizeof a);
        e = weft_topo_subset(c->topo, sorted, gs, &sub, NULL);
        if (!e)
            e = weft_candidate_build(&a, sub, names[g], coll, true, CHOOSE_MAX_OPS, NULL, NULL);
        if (!e && !a.plan)
            e = WEFT_EUNSUPPORTED;
        if (!e)
            e = remap(a.plan, sorted, c->ranks, &plans[g]);
        weft_candidate_fini(&a);
        weft_topo_free(sub);
        jobs[g].plan = plans[g];
        jobs[g].size = size;
    }
    if (!e)
        e = weft_sim_plans(c->topo, jobs, ng, &c->opts, done, NULL);
    if (!e) {
        *out = 0;
        for (uint32_t g = 0; g < ng; g++)
            *out = done[g] > *out ? done[g] : *out;
    }
    for (uint32_t g = 0; plans && g < ng; g++)
        weft_plan_free(plans[g]);
    weft__free(jobs);
    weft__free(plans);
    weft__free(sorted);
    weft__free(done);
    return e;
}

/* Records choice ch (weft_work_choices) unless an equal one is there. */
static weft_err record(weft_work_ctx *c, const weft_work_choice *ch, weft_diag *d)
{
    for (size_t i = 0; i < c->choices_n; i++) {
        const weft_work_choice *x = &c->choices[i];
        if (x->coll == ch->coll && x->matrix == ch->matrix && x->bytes == ch->bytes &&
            x->ranks == ch->ranks && x->groups == ch->groups && strcmp(x->algo, ch->algo) == 0 &&
            x->time_s == ch->time_s)
            return WEFT_OK;
    }
    if (weft__grow((void **)&c->choices, &c->choices_cap, c->choices_n + 1, sizeof *c->choices))
        return weft_diag_code(d, WEFT_ENOMEM);
    c->choices[c->choices_n++] = *ch;
    return WEFT_OK;
}

weft_err weft__work_choose_s(weft_work_ctx *c, weft_coll coll, const uint32_t *pos, uint32_t n,
                             uint32_t gs, uint64_t size, double *out, weft_diag *d)
{
    weft_work_choice ch;
    memset(&ch, 0, sizeof ch);
    ch.coll = coll;
    ch.bytes = size;
    ch.ranks = gs;
    ch.groups = n / gs;
    char(*names)[32] = weft__calloc(ch.groups ? ch.groups : 1, sizeof *names);
    if (!names)
        return weft_diag_code(d, WEFT_ENOMEM);
    bool plans = true; /* every group's choice is a plan that carries over */
    weft_err e = WEFT_OK;
    for (uint32_t g = 0; g < ch.groups && !e; g++) {
        char label[sizeof ch.algo];
        double t = 0;
        e = choose_group(c, coll, pos + (size_t)g * gs, gs, size, NULL, label, sizeof label,
                         names[g], &t, d);
        weft_sim_innet_algo k;
        plans = plans && !weft_choose_innet_parse(names[g], &k) && strcmp(names[g], "nccl") != 0;
        if (!e && (g == 0 || t > ch.time_s)) {
            ch.time_s = t;
            snprintf(ch.algo, sizeof ch.algo, "%s", label);
        }
    }
    /* Several groups at once share the links they both cross: their plans
     * run side by side on the whole fabric, as NCCL's rings do in the
     * default mode. One group (the fabric itself) keeps weft_choose's time,
     * to the bit what `weft sim --compare` prints. */
    double together = 0;
    if (!e && ch.groups > 1 && plans &&
        run_together(c, coll, pos, n, gs, size, names, &together) == WEFT_OK) {
        ch.time_s = together;
        ch.together = true;
    }
    weft__free(names);
    if (e)
        return e;
    *out = ch.time_s;
    return record(c, &ch, d);
}

/* A choice for the alltoallv of matrix t over every rank: its bytes the
 * size `weft sim --traffic` simulates it at (weft_traffic_sim_size). */
static weft_work_choice matrix_choice(const weft_work_ctx *c, const weft_traffic *t)
{
    weft_work_choice ch;
    memset(&ch, 0, sizeof ch);
    ch.coll = WEFT_COLL_ALLTOALL;
    ch.bytes = weft_traffic_sim_size(t);
    ch.ranks = c->ranks;
    ch.groups = 1;
    ch.matrix = true;
    return ch;
}

/* The named schedule's plan of t, simulated: *ch's time and algo. */
static weft_err named_choice(const weft_work_ctx *c, const weft_traffic *t, weft_work_choice *ch,
                             weft_diag *d)
{
    weft_plan *p = NULL;
    weft_err e = weft_choose_build_traffic(c->topo, c->a2a_algo, t, CHOOSE_MAX_OPS, NULL, &p, d);
    if (e)
        return e;
    weft_sim_result r;
    e = weft_sim_plan(c->topo, p, ch->bytes, &c->opts, &r, d);
    weft_plan_free(p);
    if (e)
        return e;
    ch->time_s = r.time_s;
    snprintf(ch->algo, sizeof ch->algo, "%s", c->a2a_algo);
    return WEFT_OK;
}

/* The fastest alltoallv plan of t: *ch's time and algo. */
static weft_err best_choice(const weft_work_ctx *c, const weft_traffic *t, weft_work_choice *ch,
                            weft_diag *d)
{
    char name[32];
    return choose_group(c, WEFT_COLL_ALLTOALL, NULL, c->ranks, ch->bytes, t, ch->algo,
                        sizeof ch->algo, name, &ch->time_s, d);
}

weft_err weft__work_traffic_choice(const weft_work_ctx *c, const weft_traffic *t,
                                   weft_work_choice *out, weft_diag *d)
{
    *out = matrix_choice(c, t);
    return c->a2a_algo[0] ? named_choice(c, t, out, d) : best_choice(c, t, out, d);
}

weft_err weft__work_record(weft_work_ctx *c, const weft_work_choice *ch, weft_diag *d)
{
    return record(c, ch, d);
}

weft_err weft__work_choice_traffic_s(weft_work_ctx *c, const weft_traffic *t, double *out,
                                     weft_diag *d)
{
    weft_work_choice ch;
    weft_err e = weft__work_traffic_choice(c, t, &ch, d);
    if (e)
        return e;
    *out = ch.time_s;
    return record(c, &ch, d);
}
