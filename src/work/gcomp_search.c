/* The search of a gradient compression plan (weft_work_grad_plan; docs/
 * step.md, "Gradient compression"): groups of consecutive gradient units
 * (tensors or buckets) and, for each, how it is reduced, minimising when
 * the last gradient is reduced. Plain data in, plain data out: the step's
 * costs come through prob->cost (gcomp.c).
 *
 * The timeline (weft__gc_apply). The backward produces unit i at ready[i]
 * (without compression), in order. Groups are reduced in order, as
 * Megatron and DDP issue their buckets. Four resources, each running its
 * work in group order: the compute stream, the communication stream, a
 * CPU thread compressing and one decompressing (D2H and H2D copies are
 * full duplex, so each thread drives its own). A group's job runs
 *   gpu       on the compute stream as soon as its last unit is produced:
 *             the stream is busy with the backward until then, so the
 *             kernel delays every later unit (and the backward's end) by
 *             its length: D, the delay so far, grows by it;
 *   cpu_pre   (D2H copy and compress) when the group is ready and the
 *             compressing thread is free;
 *   comm      (the collective, with the aggregation it does in flight,
 *             and a GPU decompression after it on the same stream) when
 *             its input is ready and the stream is free;
 *   cpu_post  (decompress and H2D copy) when comm ends and the
 *             decompressing thread is free.
 * The plan's end is max(window + D, comm, cpu_d): the backward's end and
 * the last reduction.
 *
 * The search is exact. A partial plan (groups covering units 0 .. i - 1)
 * leaves a state (D, comm, cpu_c, cpu_d); every later group's times are
 * sums and maxima of these and of constants, so they are nondecreasing in
 * each coordinate, and so is the end. A state no smaller in every
 * coordinate than another at the same boundary can therefore be completed
 * no better than that one: dropping it keeps an optimal plan. The search
 * keeps, at every boundary i, the states not dominated by another (the
 * Pareto set), extends each by every allowed group [i, j) and option, and
 * takes the least end at boundary n: every plan's state at each boundary
 * is dominated by a kept one, so the least end over the kept states is
 * the optimum over all plans (the dynamic program of Cupcake's fusion,
 * Wang et al., MLSys 2023, over consecutive tensors, joined with
 * Espresso's per-tensor decision, Wang et al., EuroSys 2023, of whether,
 * where and with which collective to compress). Only max_states, a cap on
 * a boundary's set, can make it inexact, and the result says so. */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "work/work_internal.h"

void weft__gc_apply(const weft__gc_state *s, double ready, const weft__gc_job *j, weft__gc_state *o,
                    double *start, double *end)
{
    *o = *s;
    double t = ready + s->D;
    if (j->gpu > 0) {
        o->D += j->gpu;
        t += j->gpu;
    }
    if (j->cpu_pre > 0) {
        o->cpu_c = fmax(t, s->cpu_c) + j->cpu_pre;
        t = o->cpu_c;
    }
    double c0 = fmax(t, s->comm);
    o->comm = c0 + j->comm;
    double e = o->comm;
    if (j->cpu_post > 0) {
        o->cpu_d = fmax(o->comm, s->cpu_d) + j->cpu_post;
        e = o->cpu_d;
    }
    if (start)
        *start = c0;
    if (end)
        *end = e;
}

double weft__gc_final(const weft__gc_state *s, double window)
{
    return fmax(fmax(window + s->D, s->comm), s->cpu_d);
}

weft_err weft__gc_eval(const weft__gc_prob *pr, const uint32_t *cut, const uint32_t *opt,
                       uint32_t ng, double *end, weft_diag *d)
{
    weft__gc_state s = {0, 0, 0, 0};
    for (uint32_t g = 0; g < ng; g++) {
        weft__gc_job j;
        weft_err err = pr->cost(pr->arg, cut[g], cut[g + 1], opt[g], &j, d);
        if (err)
            return err;
        weft__gc_state o;
        weft__gc_apply(&s, pr->ready[cut[g + 1] - 1], &j, &o, NULL, NULL);
        s = o;
    }
    *end = weft__gc_final(&s, pr->window);
    return WEFT_OK;
}

typedef struct gc_node {
    weft__gc_state s;
    uint32_t from_b, from_i, opt;
} gc_node;

typedef struct gc_set {
    gc_node *v;
    size_t n, cap;
} gc_set;

static bool dominates(const weft__gc_state *a, const weft__gc_state *b)
{
    return a->D <= b->D && a->comm <= b->comm && a->cpu_c <= b->cpu_c && a->cpu_d <= b->cpu_d;
}

/* Adds x to set unless a kept state dominates it; drops the states it
 * dominates. Over cap: the state of the largest coordinate sum goes (the
 * search is then no longer exact). */
static weft_err insert(gc_set *set, const gc_node *x, size_t cap, bool *exact)
{
    for (size_t k = 0; k < set->n; k++)
        if (dominates(&set->v[k].s, &x->s))
            return WEFT_OK;
    size_t w = 0;
    for (size_t k = 0; k < set->n; k++)
        if (!dominates(&x->s, &set->v[k].s))
            set->v[w++] = set->v[k];
    set->n = w;
    if (cap && set->n >= cap) {
        size_t worst = 0;
        double ws = -1;
        for (size_t k = 0; k < set->n; k++) {
            const weft__gc_state *s = &set->v[k].s;
            double sum = s->D + s->comm + s->cpu_c + s->cpu_d;
            if (sum > ws) {
                ws = sum;
                worst = k;
            }
        }
        set->v[worst] = set->v[--set->n];
        *exact = false;
    }
    if (weft__grow((void **)&set->v, &set->cap, set->n + 1, sizeof *set->v))
        return WEFT_ENOMEM;
    set->v[set->n++] = *x;
    return WEFT_OK;
}

void weft__gc_sol_fini(weft__gc_sol *s)
{
    weft__free(s->cut);
    weft__free(s->opt);
    memset(s, 0, sizeof *s);
}

weft_err weft__gc_search(const weft__gc_prob *pr, weft__gc_sol *out, weft_diag *d)
{
    memset(out, 0, sizeof *out);
    uint32_t n = pr->n;
    if (n == 0)
        return weft_diag_set(d, WEFT_EINVAL, "gradient compression: no gradients to plan");
    gc_set *set = weft__calloc((size_t)n + 1, sizeof *set);
    if (!set)
        return weft_diag_code(d, WEFT_ENOMEM);
    weft_err err = WEFT_OK;
    bool exact = true;
    /* Bounds: lbc[i], the least communication-stream time of any plan of
     * units i .. n - 1 (each group's comm summed: the stream runs them one
     * after another); ub, the end of the plan of every unit alone with
     * the option that ends it soonest, greedily. A state whose end cannot
     * be below max(comm + lbc, window + D, cpu_d) > ub is dropped: that
     * bound holds for all its completions, so an optimal plan survives. */
    double *lbc = weft__malloc(((size_t)n + 1) * sizeof *lbc), ub = INFINITY;
    if (!lbc) {
        weft__free(set);
        return weft_diag_code(d, WEFT_ENOMEM);
    }
    lbc[n] = 0;
    for (uint32_t i = n; i-- > 0 && !err;) {
        lbc[i] = INFINITY;
        uint32_t jmax = pr->fuse ? n : i + 1;
        for (uint32_t j = i + 1; j <= jmax && !err; j++)
            for (uint32_t o = 0; o < pr->nopt && !err; o++) {
                weft__gc_job job;
                if (!(pr->opt_mask >> o & 1) || (err = pr->cost(pr->arg, i, j, o, &job, d)))
                    continue;
                lbc[i] = fmin(lbc[i], job.comm + lbc[j]);
            }
    }
    if (!err) {
        weft__gc_state g = {0, 0, 0, 0};
        for (uint32_t i = 0; i < n && !err; i++) {
            weft__gc_state best = g;
            double be = INFINITY;
            for (uint32_t o = 0; o < pr->nopt && !err; o++) {
                weft__gc_job job;
                weft__gc_state x;
                if (!(pr->opt_mask >> o & 1) || (err = pr->cost(pr->arg, i, i + 1, o, &job, d)))
                    continue;
                weft__gc_apply(&g, pr->ready[i], &job, &x, NULL, NULL);
                double e = fmax(weft__gc_final(&x, pr->window), x.comm + lbc[i + 1]);
                if (e < be) {
                    be = e;
                    best = x;
                }
            }
            g = best;
        }
        ub = weft__gc_final(&g, pr->window);
    }
    gc_node root = {{0, 0, 0, 0}, 0, 0, 0};
    if (insert(&set[0], &root, 0, &exact))
        err = weft_diag_code(d, WEFT_ENOMEM);
    for (uint32_t i = 0; i < n && !err; i++) {
        if (!set[i].n)
            continue;
        uint32_t jmax = pr->fuse ? n : i + 1;
        for (uint32_t j = i + 1; j <= jmax && !err; j++)
            for (uint32_t o = 0; o < pr->nopt && !err; o++) {
                if (!(pr->opt_mask >> o & 1))
                    continue;
                weft__gc_job job;
                if ((err = pr->cost(pr->arg, i, j, o, &job, d)))
                    break;
                /* Normalised: a later group starts no earlier than
                 * t0 = ready[j] + D, so a free time below t0 acts as t0
                 * (cpu_c, comm), and cpu_d below comm as comm; the ends
                 * of all completions are unchanged and more states
                 * compare. */
                double r0 = j < n ? pr->ready[j] : pr->window;
                for (size_t k = 0; k < set[i].n && !err; k++) {
                    gc_node x = {{0, 0, 0, 0}, i, (uint32_t)k, o};
                    weft__gc_apply(&set[i].v[k].s, pr->ready[j - 1], &job, &x.s, NULL, NULL);
                    double t0 = r0 + x.s.D;
                    x.s.comm = fmax(x.s.comm, t0);
                    x.s.cpu_c = fmax(x.s.cpu_c, t0);
                    x.s.cpu_d = fmax(x.s.cpu_d, x.s.comm);
                    double lb = fmax(fmax(x.s.comm + lbc[j], pr->window + x.s.D), x.s.cpu_d);
                    if (lb > ub * (1 + 1e-12))
                        continue;
                    if (insert(&set[j], &x, pr->max_states, &exact))
                        err = weft_diag_code(d, WEFT_ENOMEM);
                }
            }
        out->states += set[i].n;
    }
    if (!err && !set[n].n)
        err = weft_diag_set(d, WEFT_EINVAL, "gradient compression: no option is allowed");
    if (!err) {
        out->states += set[n].n;
        size_t best = 0;
        double be = INFINITY;
        for (size_t k = 0; k < set[n].n; k++) {
            double e = weft__gc_final(&set[n].v[k].s, pr->window);
            if (e < be) {
                be = e;
                best = k;
            }
        }
        uint32_t ng = 0;
        for (uint32_t b = n, k = (uint32_t)best; b > 0; ng++) {
            const gc_node *x = &set[b].v[k];
            b = x->from_b;
            k = x->from_i;
        }
        out->cut = weft__malloc(((size_t)ng + 1) * sizeof *out->cut);
        out->opt = weft__malloc(((size_t)ng + 1) * sizeof *out->opt);
        if (!out->cut || !out->opt) {
            err = weft_diag_code(d, WEFT_ENOMEM);
        } else {
            out->ng = ng;
            out->cut[ng] = n;
            uint32_t g = ng, b = n, k = (uint32_t)best;
            while (b > 0) {
                const gc_node *x = &set[b].v[k];
                g--;
                out->opt[g] = x->opt;
                out->cut[g] = x->from_b;
                b = x->from_b;
                k = x->from_i;
            }
            out->end = be;
            out->exact = exact;
        }
    }
    for (uint32_t i = 0; i <= n; i++)
        weft__free(set[i].v);
    weft__free(set);
    weft__free(lbc);
    if (err)
        weft__gc_sol_fini(out);
    return err;
}
