/* Running Chakra execution traces on a fabric (weft/work.h,
 * weft_chakra_run; docs/step.md "Chakra traces").
 *
 * An event loop over simulated time. Each rank has a compute stream and a
 * communication stream that each run one node at a time in the order the
 * nodes became ready (ASTRA-sim's HardwareResource; receives hold no
 * stream). A collective instance (the k-th collective of a process group)
 * starts when its last member issues it; a send starts when issued. At each
 * instant, once every event of that instant has been handled, the instances
 * and sends that start then are simulated together, one simulation per
 * (kind, size, group size), through weft__work_groups_s, so that
 * concurrent groups share links and repeated batches hit its cache.
 * Events are ordered by (time, sequence number): the run is deterministic.
 * A traced run also draws the link groups each batch loads (trace.c's
 * weft__links: NVLink and NICs per box) while it runs.
 * Cost O(E log E + E x R) for E nodes over R ranks, besides simulations.
 * Loading is chakra_load.c, the event queue chakra_queue.c, the batches
 * and their simulations chakra_jobs.c, the trace file chakra_trace.c
 * (work/chakra_int.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "work/chakra_int.h"

/* ---- the run ---------------------------------------------------------- */

static weft_err push_pair(run *R, uint32_t **arr, size_t *n, size_t *cap, uint32_t a, uint32_t b)
{
    if (weft__grow((void **)arr, cap, *n + 2, sizeof **arr))
        return weft_diag_code(R->d, WEFT_ENOMEM);
    (*arr)[(*n)++] = a;
    (*arr)[(*n)++] = b;
    return WEFT_OK;
}

static uint32_t group_of(const run *R, const char *pg)
{
    if (!pg[0] || !strcmp(pg, "0"))
        return 0;
    for (uint32_t i = 1; i < R->ng; i++)
        if (!strcmp(R->g[i].name, pg))
            return i;
    return NONE;
}

static weft_err add_group(run *R, size_t *cap, const char *name)
{
    uint32_t n = R->w->n;
    if (weft__grow((void **)&R->g, cap, R->ng + 1, sizeof *R->g))
        return weft_diag_code(R->d, WEFT_ENOMEM);
    group *g = &R->g[R->ng++];
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", name);
    if (!(g->slot = weft__malloc((n ? n : 1) * sizeof *g->slot)) ||
        !(g->seq = weft__calloc(n ? n : 1, sizeof *g->seq)) ||
        !(g->member = weft__malloc((n ? n : 1) * sizeof *g->member)))
        return weft_diag_code(R->d, WEFT_ENOMEM);
    for (uint32_t q = 0; q < n; q++)
        g->slot[q] = R->ng == 1 ? 0 : NONE;
    return WEFT_OK;
}

/* Process groups: 0 is every rank; each other pg_name the ranks that use
 * it, in rank order. */
static weft_err build_groups(run *R)
{
    const weft_chakra *w = R->w;
    size_t cap = 0;
    weft_err err = add_group(R, &cap, "");
    for (uint32_t r = 0; r < w->n && !err; r++)
        for (size_t i = 0; i < w->r[r].t.n && !err; i++) {
            const weft_ck_node *nd = &w->r[r].t.nodes[i];
            if (nd->type != WEFT_CK_COLL)
                continue;
            uint32_t gi = group_of(R, weft_ck_pg_name(&w->r[r].t, nd));
            if (gi == NONE) {
                gi = R->ng;
                err = add_group(R, &cap, weft_ck_pg_name(&w->r[r].t, nd));
            }
            if (!err)
                R->g[gi].slot[r] = 0;
        }
    if (err)
        return err;
    for (uint32_t k = 0; k < R->ng; k++) {
        group *g = &R->g[k];
        for (uint32_t q = 0; q < w->n; q++)
            if (g->slot[q] != NONE) {
                g->slot[q] = g->gs;
                g->member[g->gs++] = q;
            }
    }
    return WEFT_OK;
}

static void groups_free(run *R)
{
    for (uint32_t k = 0; k < R->ng; k++) {
        group *g = &R->g[k];
        weft__free(g->member);
        weft__free(g->slot);
        weft__free(g->seq);
        weft__free(g->inode);
        weft__free(g->it);
        weft__free(g->arrived);
    }
    weft__free(R->g);
}

/* Rank r's comm stream issues collective node i at time t. */
static weft_err issue_coll(run *R, uint32_t r, uint32_t i, double t)
{
    const weft_ck_node *nd = weft__ck_node_at(R, r, i);
    uint32_t gi = group_of(R, weft_ck_pg_name(&R->w->r[r].t, nd));
    group *g = &R->g[gi];
    size_t k = g->seq[r]++;
    if (k >= g->ninst) {
        size_t need = (k + 1) * g->gs;
        if (weft__grow((void **)&g->inode, &g->cap_inode, need, sizeof *g->inode) ||
            weft__grow((void **)&g->it, &g->cap_it, need, sizeof *g->it) ||
            weft__grow((void **)&g->arrived, &g->cap_arr, k + 1, sizeof *g->arrived))
            return weft_diag_code(R->d, WEFT_ENOMEM);
        for (size_t q = g->ninst * g->gs; q < need; q++)
            g->inode[q] = NONE;
        for (size_t q = g->ninst; q <= k; q++)
            g->arrived[q] = 0;
        g->ninst = k + 1;
    }
    uint32_t s = g->slot[r];
    g->inode[k * g->gs + s] = i;
    g->it[k * g->gs + s] = t;
    R->rs[r].wait_g = gi;
    R->rs[r].wait_k = (uint32_t)k;
    if (++g->arrived[k] < g->gs)
        return WEFT_OK;
    /* Every member has issued it: they must agree. */
    uint32_t r0 = g->member[0];
    const weft_ck_node *a = weft__ck_node_at(R, r0, g->inode[k * g->gs]);
    const weft_ck_attrs *aa = weft_ck_attr(&R->w->r[r0].t, a);
    for (uint32_t q = 1; q < g->gs; q++) {
        uint32_t rq = g->member[q];
        const weft_ck_node *b = weft__ck_node_at(R, rq, g->inode[k * g->gs + q]);
        const weft_ck_attrs *ba = weft_ck_attr(&R->w->r[rq].t, b);
        if (weft__ck_coll_of(aa->comm_type) != weft__ck_coll_of(ba->comm_type) ||
            aa->comm_size != ba->comm_size)
            return weft_diag_set(
                R->d, WEFT_EINVAL,
                "%s: node %llu ('%s', %s of %llu bytes) and %s: node %llu ('%s', %s of %llu "
                "bytes) are both collective %zu of process group '%s': the ranks issue the "
                "group's collectives in another order",
                R->w->r[r0].file, (unsigned long long)a->id, weft_ck_name(&R->w->r[r0].t, a),
                weft__ck_coll_name(aa->comm_type), (unsigned long long)aa->comm_size,
                R->w->r[rq].file, (unsigned long long)b->id, weft_ck_name(&R->w->r[rq].t, b),
                weft__ck_coll_name(ba->comm_type), (unsigned long long)ba->comm_size, k,
                g->name[0] ? g->name : "0");
    }
    return push_pair(R, &R->pend, &R->npend, &R->cappend, gi, (uint32_t)k);
}

static bool msg_match(const msg *m, uint32_t src, uint32_t dst, int64_t tag)
{
    return m->src == src && m->dst == dst && m->tag == tag;
}

/* Receive node i of rank r is ready at t: it takes the first unclaimed
 * message of its (source, tag), or waits for one. */
static weft_err post_recv(run *R, uint32_t r, uint32_t i, double t)
{
    const weft_ck_node *nd = weft__ck_node_at(R, r, i);
    const weft_ck_attrs *at = weft_ck_attr(&R->w->r[r].t, nd);
    for (size_t k = 0; k < R->nm; k++) {
        msg *m = &R->m[k];
        if (m->recv_node == NONE && msg_match(m, (uint32_t)at->comm_src, r, at->comm_tag)) {
            m->recv_node = i;
            m->recv_t = t;
            if (m->arrive >= 0)
                return weft__ck_sched(R, fmax(t, m->arrive), r, i);
            return WEFT_OK;
        }
    }
    if (weft__grow((void **)&R->m, &R->capm, R->nm + 1, sizeof *R->m))
        return weft_diag_code(R->d, WEFT_ENOMEM);
    /* A receive posted before its send: a placeholder the send fills. */
    R->m[R->nm++] = (msg){(uint32_t)at->comm_src, r, NONE, i, at->comm_tag, 0, -1, -1, t};
    return WEFT_OK;
}

static weft_err issue_send(run *R, uint32_t r, uint32_t i, double t)
{
    const weft_ck_node *nd = weft__ck_node_at(R, r, i);
    const weft_ck_attrs *at = weft_ck_attr(&R->w->r[r].t, nd);
    size_t k;
    for (k = 0; k < R->nm; k++)
        if (R->m[k].send_node == NONE &&
            msg_match(&R->m[k], r, (uint32_t)at->comm_dst, at->comm_tag))
            break;
    if (k == R->nm) {
        if (weft__grow((void **)&R->m, &R->capm, R->nm + 1, sizeof *R->m))
            return weft_diag_code(R->d, WEFT_ENOMEM);
        R->m[R->nm++] = (msg){r, (uint32_t)at->comm_dst, NONE, NONE, at->comm_tag, 0, -1, -1, -1};
    }
    msg *m = &R->m[k];
    m->send_node = i;
    m->size = at->comm_size;
    m->sent = t;
    if (weft__grow((void **)&R->psend, &R->cappsend, R->npsend + 1, sizeof *R->psend))
        return weft_diag_code(R->d, WEFT_ENOMEM);
    R->psend[R->npsend++] = (uint32_t)k;
    return WEFT_OK;
}

static weft_err compute_s(run *R, uint32_t r, const weft_ck_node *nd, double *out)
{
    const weft_gpu *g = R->c->gpu;
    const weft_ck_attrs *at = weft_ck_attr(&R->w->r[r].t, nd);
    if (nd->duration_us || (!at->num_ops && !at->tensor_size)) {
        *out = (double)nd->duration_us * 1e-6;
        return WEFT_OK;
    }
    if (!g)
        return weft_diag_set(R->d, WEFT_EINVAL,
                             "%s: node %llu ('%s') has no duration_micros: its num_ops (%llu) and "
                             "tensor_size (%llu) need a GPU (--gpu)",
                             R->w->r[r].file, (unsigned long long)nd->id,
                             weft_ck_name(&R->w->r[r].t, nd), (unsigned long long)at->num_ops,
                             (unsigned long long)at->tensor_size);
    *out = weft__work_roofline_s(g, (double)at->num_ops, (double)at->tensor_size);
    return WEFT_OK;
}

/* Starts what rank r's idle streams can start at t. */
static weft_err dispatch(run *R, uint32_t r, double t)
{
    rstate *s = &R->rs[r];
    weft_err err;
    if (!s->comp_busy && s->cq_h < s->cq_t) {
        uint32_t i = s->cq[s->cq_h++];
        double dur = 0;
        if ((err = compute_s(R, r, weft__ck_node_at(R, r, i), &dur)) ||
            (err = weft__ck_add_span(R, &s->comp, &s->ncomp, &s->capcomp, t, t + dur, i)) ||
            (err = weft__ck_push_ev(R, t + dur, r, i)))
            return err;
        s->comp_busy = true;
    }
    if (!s->cpu_busy && s->pq_h < s->pq_t) {
        uint32_t i = s->pq[s->pq_h++];
        double dur = (double)weft__ck_node_at(R, r, i)->duration_us * 1e-6;
        if ((err = weft__ck_add_span(R, &s->cpu, &s->ncpu, &s->capcpu, t, t + dur, i)) ||
            (err = weft__ck_push_ev(R, t + dur, r, i)))
            return err;
        s->cpu_busy = true;
    }
    if (!s->comm_busy && s->mq_h < s->mq_t) {
        uint32_t i = s->mq[s->mq_h++];
        s->comm_busy = true;
        if (weft__ck_node_at(R, r, i)->type == WEFT_CK_COLL)
            return issue_coll(R, r, i, t);
        return issue_send(R, r, i, t);
    }
    return WEFT_OK;
}

static weft_err make_ready(run *R, uint32_t r, uint32_t i, double t)
{
    rstate *s = &R->rs[r];
    const weft_ck_node *nd = weft__ck_node_at(R, r, i);
    if (nd->type == WEFT_CK_COMP && weft_ck_attr(&R->w->r[r].t, nd)->is_cpu_op) {
        s->pq[s->pq_t++] = i;
        return WEFT_OK;
    }
    switch (nd->type) {
    case WEFT_CK_COMP:
    case WEFT_CK_MEM_LOAD:
    case WEFT_CK_MEM_STORE:
        s->cq[s->cq_t++] = i;
        return WEFT_OK;
    case WEFT_CK_COLL:
    case WEFT_CK_SEND:
        s->mq[s->mq_t++] = i;
        return WEFT_OK;
    case WEFT_CK_RECV:
        return post_recv(R, r, i, t);
    default: /* metadata, invalid: no time (ASTRA-sim skips them) */
        return weft__ck_push_ev(R, t, r, i);
    }
}

static weft_err complete(run *R, const ev *e)
{
    rstate *s = &R->rs[e->rank];
    const weft_ck_node *nd = weft__ck_node_at(R, e->rank, e->node);
    /* Rescheduled (an end moved, perhaps back to an earlier time, so an
     * event may also repeat one already handled). */
    if (s->done[e->node] || (s->due[e->node] >= 0 && e->t != s->due[e->node]))
        return WEFT_OK;
    s->done[e->node] = 1;
    s->end[e->node] = e->t;
    if (nd->type == WEFT_CK_COMP && weft_ck_attr(&R->w->r[e->rank].t, nd)->is_cpu_op)
        s->cpu_busy = false;
    else if (nd->type == WEFT_CK_COMP || nd->type == WEFT_CK_MEM_LOAD ||
             nd->type == WEFT_CK_MEM_STORE)
        s->comp_busy = false;
    else if (nd->type == WEFT_CK_COLL || nd->type == WEFT_CK_SEND) {
        s->comm_busy = false;
        s->wait_g = NONE;
    }
    for (uint32_t k = s->succ_off[e->node]; k < s->succ_off[e->node + 1]; k++) {
        uint32_t j = s->succ[k];
        if (--s->left[j] == 0) {
            weft_err err = push_pair(R, &R->ready, &R->nready, &R->capready, e->rank, j);
            if (err)
                return err;
        }
    }
    return WEFT_OK;
}

/* Why the run stopped with nodes left: the first waiting collective, else
 * the first waiting receive, else the first node that never became ready. */
static weft_err deadlock(run *R)
{
    const weft_chakra *w = R->w;
    for (uint32_t r = 0; r < w->n; r++) {
        const rstate *s = &R->rs[r];
        if (s->wait_g == NONE)
            continue;
        const group *g = &R->g[s->wait_g];
        size_t k = s->wait_k;
        const weft_ck_node *nd = weft__ck_node_at(R, r, g->inode[k * g->gs + g->slot[r]]);
        uint32_t miss = NONE;
        for (uint32_t m = 0; m < g->gs && miss == NONE; m++)
            if (g->inode[k * g->gs + m] == NONE)
                miss = g->member[m];
        return weft_diag_set(R->d, WEFT_EINVAL,
                             "%s: node %llu ('%s'): %s of %llu bytes (collective %zu of process "
                             "group '%s') is never issued by rank %u (%s): deadlock",
                             w->r[r].file, (unsigned long long)nd->id, weft_ck_name(&w->r[r].t, nd),
                             weft__ck_coll_name(weft_ck_attr(&w->r[r].t, nd)->comm_type),
                             (unsigned long long)weft_ck_attr(&w->r[r].t, nd)->comm_size, k,
                             g->name[0] ? g->name : "0", miss, w->r[miss].file);
    }
    for (size_t k = 0; k < R->nm; k++) {
        const msg *m = &R->m[k];
        if (m->send_node == NONE) {
            const weft_ck_node *nd = weft__ck_node_at(R, m->dst, m->recv_node);
            return weft_diag_set(R->d, WEFT_EINVAL,
                                 "%s: node %llu ('%s'): recv from rank %u (tag %lld) that rank "
                                 "never sends: deadlock",
                                 w->r[m->dst].file, (unsigned long long)nd->id,
                                 weft_ck_name(&w->r[m->dst].t, nd), m->src, (long long)m->tag);
        }
    }
    for (uint32_t r = 0; r < w->n; r++)
        for (size_t i = 0; i < w->r[r].t.n; i++)
            if (!R->rs[r].done[i]) {
                const weft_ck_node *nd = weft__ck_node_at(R, r, (uint32_t)i);
                return weft_diag_set(R->d, WEFT_EINVAL,
                                     "%s: node %llu ('%s') never runs: its dependencies wait on "
                                     "each other (a cycle): deadlock",
                                     w->r[r].file, (unsigned long long)nd->id,
                                     weft_ck_name(&w->r[r].t, nd));
            }
    return WEFT_OK;
}

static weft_err rank_init(run *R, uint32_t r)
{
    const ck_rank *k = &R->w->r[r];
    rstate *s = &R->rs[r];
    size_t n = k->t.n, m = k->dep_off[n];
    s->wait_g = NONE;
    if (!(s->left = weft__calloc(n + 1, sizeof *s->left)) ||
        !(s->succ_off = weft__calloc(n + 2, sizeof *s->succ_off)) ||
        !(s->succ = weft__malloc((m + 1) * sizeof *s->succ)) ||
        !(s->done = weft__calloc(n + 1, 1)) || !(s->end = weft__calloc(n + 1, sizeof *s->end)) ||
        !(s->due = weft__malloc((n + 1) * sizeof *s->due)) ||
        !(s->cq = weft__malloc((n + 1) * sizeof *s->cq)) ||
        !(s->mq = weft__malloc((n + 1) * sizeof *s->mq)) ||
        !(s->pq = weft__malloc((n + 1) * sizeof *s->pq)))
        return weft_diag_code(R->d, WEFT_ENOMEM);
    for (size_t i = 0; i < n; i++) {
        s->due[i] = -1;
        s->left[i] = k->dep_off[i + 1] - k->dep_off[i];
        for (uint32_t q = k->dep_off[i]; q < k->dep_off[i + 1]; q++)
            s->succ_off[k->dep[q] + 1]++;
    }
    for (size_t i = 0; i < n; i++)
        s->succ_off[i + 1] += s->succ_off[i];
    uint32_t *fill = weft__malloc((n + 1) * sizeof *fill);
    if (!fill)
        return weft_diag_code(R->d, WEFT_ENOMEM);
    memcpy(fill, s->succ_off, (n + 1) * sizeof *fill);
    for (size_t i = 0; i < n; i++)
        for (uint32_t q = k->dep_off[i]; q < k->dep_off[i + 1]; q++)
            s->succ[fill[k->dep[q]]++] = (uint32_t)i;
    weft__free(fill);
    return WEFT_OK;
}

static void rank_free(rstate *s)
{
    weft__free(s->left);
    weft__free(s->succ_off);
    weft__free(s->succ);
    weft__free(s->done);
    weft__free(s->end);
    weft__free(s->due);
    weft__free(s->cq);
    weft__free(s->mq);
    weft__free(s->pq);
    weft__free(s->cpu);
    weft__free(s->comp);
    weft__free(s->comm);
}

/* Time the two sorted lists of disjoint spans overlap. */
static double overlap(const span *a, size_t na, const span *b, size_t nb)
{
    double o = 0;
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        double lo = fmax(a[i].t0, b[j].t0), hi = fmin(a[i].t1, b[j].t1);
        if (hi > lo)
            o += hi - lo;
        if (a[i].t1 < b[j].t1)
            i++;
        else
            j++;
    }
    return o;
}

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0 ? 1 : x->t1 < y->t1 ? -1 : x->t1 > y->t1;
}

weft_err weft_chakra_run(weft_work_ctx *c, const weft_chakra *w, FILE *trace,
                         weft_chakra_result *out, weft_diag *d)
{
    if (w->n != c->ranks)
        return weft_diag_set(d, WEFT_EINVAL, "the traces have %u ranks, the fabric %u", w->n,
                             c->ranks);
    weft_chakra_result res;
    memset(&res, 0, sizeof res);
    res.ranks = w->n;
    run R;
    memset(&R, 0, sizeof R);
    R.c = c;
    R.w = w;
    R.d = d;
    R.res = &res;
    uint32_t sims0 = c->sims, hits0 = c->hits;
    weft_err err = WEFT_OK;
    if (!(R.rs = weft__calloc(w->n ? w->n : 1, sizeof *R.rs)) ||
        !(res.rank = weft__calloc(w->n ? w->n : 1, sizeof *res.rank))) {
        err = weft_diag_code(d, WEFT_ENOMEM);
        goto free_all;
    }
    if (trace) {
        R.traced = true;
        if (weft__links_init(&R.links, c->topo, P2P + 1, 1))
            err = weft_diag_code(d, WEFT_ENOMEM);
    }
    for (uint32_t r = 0; r < w->n && !err; r++)
        err = rank_init(&R, r);
    if (!err)
        err = build_groups(&R);
    for (uint32_t r = 0; r < w->n && !err; r++)
        for (uint32_t i = 0; i < w->r[r].t.n && !err; i++)
            if (R.rs[r].left[i] == 0)
                err = push_pair(&R, &R.ready, &R.nready, &R.capready, r, i);
    double t = 0;
    while (!err) {
        /* Everything at t: ready nodes, events, what the streams start. */
        for (;;) {
            for (size_t q = 0; q < R.nready && !err; q += 2)
                err = make_ready(&R, R.ready[q], R.ready[q + 1], t);
            R.nready = 0;
            for (uint32_t r = 0; r < w->n && !err; r++)
                err = dispatch(&R, r, t);
            if (err || !R.q.n || weft__evheap_top(&R.q)->t > t)
                break;
            while (!err && R.q.n && weft__evheap_top(&R.q)->t == t) {
                ev e = weft__ck_pop_ev(&R);
                err = complete(&R, &e);
            }
        }
        if (!err && (R.npend || R.npsend)) {
            err = weft__ck_launch(&R, t);
            continue;
        }
        if (err || !R.q.n)
            break;
        t = weft__evheap_top(&R.q)->t;
    }
    if (!err)
        err = deadlock(&R);
    if (!err)
        err = weft__ck_finish_jobs(&R);
    if (!err && R.links.oom)
        err = weft_diag_code(d, WEFT_ENOMEM);
    if (err)
        goto free_all;
    for (uint32_t r = 0; r < w->n; r++) {
        rstate *s = &R.rs[r];
        weft_chakra_rank *o = &res.rank[r];
        o->nodes = w->r[r].t.n;
        for (size_t i = 0; i < w->r[r].t.n; i++)
            o->end_s = fmax(o->end_s, s->end[i]);
        if (s->ncomm)
            qsort(s->comm, s->ncomm, sizeof *s->comm, span_cmp);
        for (size_t i = 0; i < s->ncomp; i++)
            o->compute_s += s->comp[i].t1 - s->comp[i].t0;
        for (size_t i = 0; i < s->ncomm; i++)
            o->comm_s += s->comm[i].t1 - s->comm[i].t0;
        for (size_t i = 0; i < s->ncpu; i++)
            o->cpu_s += s->cpu[i].t1 - s->cpu[i].t0;
        o->exposed_s = o->comm_s - overlap(s->comp, s->ncomp, s->comm, s->ncomm);
        res.total_s = fmax(res.total_s, o->end_s);
    }
    res.sims = c->sims - sims0;
    res.sim_hits = c->hits - hits0;
    if (trace && (err = weft__ck_write_trace(trace, &R, d)))
        goto free_all;
    *out = res;
    res.rank = NULL;
free_all:
    for (uint32_t r = 0; R.rs && r < w->n; r++)
        rank_free(&R.rs[r]);
    weft__free(R.rs);
    groups_free(&R);
    weft__evheap_fini(&R.q);
    weft__free(R.evr);
    weft__free(R.evfree);
    weft__free(R.ready);
    weft__free(R.pend);
    weft__free(R.m);
    weft__free(R.psend);
    weft__free(R.pos);
    weft__free(R.jpos);
    weft__free(R.jmem);
    weft__free(R.clu);
    for (size_t j = 0; j < R.njob; j++)
        weft_plan_free(R.job[j].plan);
    weft__free(R.job);
    weft__free(R.cflag);
    weft__free(R.jlink);
    weft_paths_free(R.paths);
    weft__free(res.rank);
    weft__links_fini(&R.links);
    return err;
}

void weft_chakra_result_fini(weft_chakra_result *r)
{
    weft__free(r->rank);
    r->rank = NULL;
}
