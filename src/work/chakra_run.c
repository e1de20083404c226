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
 * Loading is chakra_load.c, the trace file chakra_trace.c
 * (work/chakra_int.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "work/chakra_int.h"

/* ---- the run ---------------------------------------------------------- */

/* The link groups a batch loads (traced runs): n / gs groups in pos. */
static void batch_links(run *R, uint32_t kind, const uint32_t *pos, uint32_t n, uint32_t gs,
                        double t0, double t1)
{
    if (!R->traced || !(t1 > t0))
        return;
    weft__links *L = &R->links;
    weft__links_clear(L, kind, 0);
    for (uint32_t g = 0; g < n; g += gs)
        for (uint32_t i = 0; i < gs; i++) {
            if (kind == WEFT_COLL_ALLTOALL) {
                for (uint32_t j = 0; j < gs; j++)
                    if (j != i)
                        weft__links_mark(L, kind, 0, pos[g + i], pos[g + j]);
            } else if (kind == P2P || kind == WEFT_COLL_BROADCAST) {
                if (i + 1 < gs)
                    weft__links_mark(L, kind, 0, pos[g + i], pos[g + i + 1]);
            } else {
                weft__links_mark(L, kind, 0, pos[g + i], pos[g + (i + 1) % gs]);
            }
        }
    weft__links_load(L, kind, 0, t0, t1);
}

/* The event queue: base/evheap.h over event ids, which are reused once
 * popped; evr holds each id's (rank, node). Pushes get increasing sequence
 * numbers, so equal times pop in the order pushed. */
static weft_err push_ev(run *R, double t, uint32_t rank, uint32_t node)
{
    uint32_t id;
    if (R->nevfree) {
        id = R->evfree[--R->nevfree];
    } else {
        if (R->nev == UINT32_MAX)
            return weft_diag_set(R->d, WEFT_ELIMIT, "more than 2^32 pending events");
        id = R->nev;
        if (weft__grow((void **)&R->evr, &R->capevr, 2 * ((size_t)id + 1), sizeof *R->evr) ||
            weft__grow((void **)&R->evfree, &R->capevfree, (size_t)id + 1, sizeof *R->evfree) ||
            (id >= R->q.cap && weft__evheap_reserve(&R->q, R->q.cap > UINT32_MAX / 2
                                                               ? UINT32_MAX
                                                               : 2 * R->q.cap + 64)))
            return weft_diag_code(R->d, WEFT_ENOMEM);
        R->nev++;
    }
    R->evr[2 * (size_t)id] = rank;
    R->evr[2 * (size_t)id + 1] = node;
    weft__evheap_set(&R->q, id, t);
    return WEFT_OK;
}

/* Node i of rank r (a communication node) ends at t: an event, unless one
 * is already due then. An event whose time is no longer the node's due
 * time (its job was simulated again with others) is skipped. */
static weft_err sched(run *R, double t, uint32_t r, uint32_t i)
{
    double *due = &R->rs[r].due[i];
    if (*due == t)
        return WEFT_OK;
    *due = t;
    return push_ev(R, t, r, i);
}

static ev pop_ev(run *R)
{
    double t = weft__evheap_top(&R->q)->t;
    uint32_t id = weft__evheap_pop(&R->q);
    R->evfree[R->nevfree++] = id; /* room: one entry per id handed out */
    return (ev){t, R->evr[2 * (size_t)id], R->evr[2 * (size_t)id + 1]};
}

static weft_err push_pair(run *R, uint32_t **arr, size_t *n, size_t *cap, uint32_t a, uint32_t b)
{
    if (weft__grow((void **)arr, cap, *n + 2, sizeof **arr))
        return weft_diag_code(R->d, WEFT_ENOMEM);
    (*arr)[(*n)++] = a;
    (*arr)[(*n)++] = b;
    return WEFT_OK;
}


static weft_err add_span(run *R, span **s, size_t *n, size_t *cap, double t0, double t1,
                         uint32_t node)
{
    if (weft__grow((void **)s, cap, *n + 1, sizeof **s))
        return weft_diag_code(R->d, WEFT_ENOMEM);
    (*s)[(*n)++] = (span){t0, t1, node};
    return WEFT_OK;
}

/* The group of a collective of process group pg ("" or "0": every rank). */
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
        if (weft__ck_coll_of(aa->comm_type) != weft__ck_coll_of(ba->comm_type) || aa->comm_size != ba->comm_size)
            return weft_diag_set(
                R->d, WEFT_EINVAL,
                "%s: node %llu ('%s', %s of %llu bytes) and %s: node %llu ('%s', %s of %llu "
                "bytes) are both collective %zu of process group '%s': the ranks issue the "
                "group's collectives in another order",
                R->w->r[r0].file, (unsigned long long)a->id, weft_ck_name(&R->w->r[r0].t, a),
                weft__ck_coll_name(aa->comm_type), (unsigned long long)aa->comm_size, R->w->r[rq].file,
                (unsigned long long)b->id, weft_ck_name(&R->w->r[rq].t, b),
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
                return sched(R, fmax(t, m->arrive), r, i);
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
            (err = add_span(R, &s->comp, &s->ncomp, &s->capcomp, t, t + dur, i)) ||
            (err = push_ev(R, t + dur, r, i)))
            return err;
        s->comp_busy = true;
    }
    if (!s->cpu_busy && s->pq_h < s->pq_t) {
        uint32_t i = s->pq[s->pq_h++];
        double dur = (double)weft__ck_node_at(R, r, i)->duration_us * 1e-6;
        if ((err = add_span(R, &s->cpu, &s->ncpu, &s->capcpu, t, t + dur, i)) ||
            (err = push_ev(R, t + dur, r, i)))
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
        return push_ev(R, t, r, i);
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

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Job j's end is t1: its members' ends (collective nodes; sends and the
 * receives posted for them). */
static weft_err job_end(run *R, uint32_t j, double t1)
{
    cjob *J = &R->job[j];
    J->t1 = t1;
    weft_err err = WEFT_OK;
    if (J->kind == P2P) {
        for (uint32_t q = 0; q < J->nmem && !err; q++) {
            msg *m = &R->m[R->jmem[J->mem_off + q]];
            m->arrive = t1;
            if (!(err = sched(R, t1, m->src, m->send_node)) && m->recv_node != NONE)
                err = sched(R, fmax(t1, m->recv_t), m->dst, m->recv_node);
        }
        return err;
    }
    for (uint32_t q = 0; q < J->nmem && !err; q += 2) {
        const group *g = &R->g[R->jmem[J->mem_off + q]];
        size_t k = R->jmem[J->mem_off + q + 1];
        for (uint32_t m = 0; m < g->gs && !err; m++)
            err = sched(R, t1, g->member[m], g->inode[k * g->gs + m]);
    }
    return err;
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Job j's plan (weft__work_groups_plan: what its simulation runs) and the
 * links its transfers may cross (every link of their ECMP routes), sorted. */
static weft_err job_plan(run *R, uint32_t j)
{
    cjob *J = &R->job[j];
    if (J->planned)
        return WEFT_OK;
    J->planned = true;
    bool p2p = J->kind == P2P;
    weft_err err = weft__work_groups_plan(R->c, p2p ? WEFT_COLL_ALLTOALL : (weft_coll)J->kind,
                                          p2p, R->jpos + J->off, J->n, J->gs, J->size, &J->plan,
                                          &J->psize, &J->ring, R->d);
    if (err)
        return err;
    if (!R->paths && (err = weft_paths_new(R->c->topo, &R->paths)))
        return weft_diag_code(R->d, err);
    uint32_t nops = J->plan ? weft_plan_num_ops(J->plan) : 0, np = 0;
    uint64_t *pair = weft__malloc(((size_t)nops + 1) * sizeof *pair);
    if (!pair)
        return weft_diag_code(R->d, WEFT_ENOMEM);
    for (uint32_t id = 0; id < nops; id++) {
        weft_op op = weft_plan_op(J->plan, id);
        if (op.src_rank.v != op.dst_rank.v)
            pair[np++] = (uint64_t)op.src_rank.v << 32 | op.dst_rank.v;
    }
    if (np)
        qsort(pair, np, sizeof *pair, u64_cmp);
    size_t start = R->njlink;
    for (uint32_t q = 0; q < np && !err; q++) {
        if (q && pair[q] == pair[q - 1])
            continue;
        const weft_topo *t = R->c->topo;
        weft_paths_route rt;
        if ((err = weft_paths_route_get(
                 R->paths, weft_topo_rank_node(t, (weft_rank){(uint32_t)(pair[q] >> 32)}),
                 weft_topo_rank_node(t, (weft_rank){(uint32_t)pair[q]}), &rt, R->d)))
            break;
        if (weft__grow((void **)&R->jlink, &R->capjlink, R->njlink + rt.n, sizeof *R->jlink)) {
            err = weft_diag_code(R->d, WEFT_ENOMEM);
            break;
        }
        if (rt.n)
            memcpy(R->jlink + R->njlink, rt.link, rt.n * sizeof *rt.link);
        R->njlink += rt.n;
    }
    weft__free(pair);
    if (err)
        return err;
    uint32_t *l = R->jlink + start;
    size_t n = R->njlink - start, u = 0;
    if (n)
        qsort(l, n, sizeof *l, u32_cmp);
    for (size_t q = 0; q < n; q++)
        if (!u || l[q] != l[u - 1])
            l[u++] = l[q];
    R->njlink = start + u;
    J = &R->job[j];
    J->link_off = start;
    J->nlink = (uint32_t)u;
    return WEFT_OK;
}

static bool share_link(const run *R, const cjob *a, const cjob *b)
{
    const uint32_t *x = R->jlink + a->link_off, *y = R->jlink + b->link_off;
    uint32_t i = 0, k = 0;
    while (i < a->nlink && k < b->nlink) {
        if (x[i] == y[k])
            return true;
        if (x[i] < y[k])
            i++;
        else
            k++;
    }
    return false;
}

/* A new job at t of `dur` (its time alone). The live jobs (R->clu) form
 * components: jobs that ran at once on a common link, transitively. The
 * components with no job running at t are over and leave; a new job that
 * crosses a link of a running job joins (and merges) those components,
 * which are then simulated again together (joint); else it is a component
 * of its own, and its time alone stands. */
static weft_err add_job(run *R, int kind, const uint32_t *pos, uint32_t n, uint32_t gs,
                        uint64_t size, double t, double dur, const uint32_t *mem, uint32_t nmem)
{
    if (weft__grow((void **)&R->job, &R->capjob, R->njob + 1, sizeof *R->job) ||
        weft__grow((void **)&R->cflag, &R->capcflag, R->njob + 1, sizeof *R->cflag) ||
        weft__grow((void **)&R->jpos, &R->capjpos, R->njpos + n, sizeof *R->jpos) ||
        weft__grow((void **)&R->jmem, &R->capjmem, R->njmem + nmem, sizeof *R->jmem) ||
        weft__grow((void **)&R->clu, &R->capclu, R->nclu + 1, sizeof *R->clu))
        return weft_diag_code(R->d, WEFT_ENOMEM);
    uint32_t j = (uint32_t)R->njob++;
    R->job[j] = (cjob){kind, (uint32_t)R->njpos, n, gs, size, t, t, (uint32_t)R->njmem, nmem,
                       j, 0, 0, NULL, 0, 0, false};
    R->cflag[j] = 0;
    if (n)
        memcpy(R->jpos + R->njpos, pos, (size_t)n * sizeof *pos);
    if (nmem)
        memcpy(R->jmem + R->njmem, mem, (size_t)nmem * sizeof *mem);
    R->njpos += n;
    R->njmem += nmem;
    weft_err err;
    if (dur > 0) {
        const cjob *J = &R->job[j];
        /* Components still running (flag 1), those J joins (flag 2). */
        for (size_t q = 0; q < R->nclu; q++) {
            const cjob *X = &R->job[R->clu[q]];
            if (X->t1 > t)
                R->cflag[X->comp] |= 1;
        }
        size_t keep = 0;
        for (size_t q = 0; q < R->nclu; q++) {
            cjob *X = &R->job[R->clu[q]];
            if (!(R->cflag[X->comp] & 1)) {
                weft_plan_free(X->plan);
                X->plan = NULL;
                continue;
            }
            R->clu[keep++] = R->clu[q];
            /* Plans and link sets only where a job may share (not on the
             * fast path of a job that starts alone). */
            if (X->t1 > t && ((err = job_plan(R, j)) || (err = job_plan(R, R->clu[q]))))
                return err;
            if (X->t1 > t && share_link(R, X, J))
                R->cflag[X->comp] |= 2;
        }
        R->nclu = keep;
        bool joins = false, dirty = false;
        for (size_t q = 0; q < R->nclu; q++) {
            cjob *X = &R->job[R->clu[q]];
            if (R->cflag[X->comp] & 2) {
                joins = true;
                dirty |= (R->cflag[X->comp] & 4) != 0;
                X->comp = j;
            }
        }
        for (size_t q = 0; q < R->nclu; q++)
            R->cflag[R->job[R->clu[q]].comp] &= 4;
        R->clu[R->nclu++] = j;
        R->cflag[j] = joins || dirty ? 4 : 0;
        if (joins)
            R->joint = true;
    }
    return job_end(R, j, t + dur);
}

/* At most this many jobs are simulated together; past it the oldest that
 * have ended are left out (an approximation, counted in joint_dropped). */
#define JOINT_MAX 32

/* Jobs joined running components at t: simulates each such component's
 * jobs together, each from its own start (weft_sim_plans), and moves the
 * ends of those still running. Those that ended before t keep their ends:
 * the fluid engine is causal, so the jobs that start at t change nothing
 * before t. Only the jobs since the component's last cut run: the latest
 * time T with every job either over by T or started at or after it (the
 * component's links then carry nothing of it, so what came before changes
 * nothing after); the jobs over by T leave for good. */
static weft_err joint(run *R, double t)
{
    R->joint = false;
    size_t n = R->nclu;
    weft_sim_job *jobs = weft__calloc(n ? n : 1, sizeof *jobs);
    double *done = weft__calloc(n ? n : 1, sizeof *done);
    uint32_t *which = weft__calloc(n ? n : 1, sizeof *which);
    weft_err err = jobs && done && which ? WEFT_OK : weft_diag_code(R->d, WEFT_ENOMEM);
    for (size_t q0 = 0; q0 < n && !err; q0++) {
        uint32_t c = R->job[R->clu[q0]].comp;
        if (!(R->cflag[c] & 4))
            continue;
        R->cflag[c] = 0;
        /* The component's jobs, in start order (live jobs are). */
        uint32_t m = 0;
        for (size_t q = q0; q < n; q++)
            if (R->job[R->clu[q]].comp == c)
                which[m++] = R->clu[q];
        /* The cut: T from the running jobs' starts, lowered to the start of
         * every job still running after T, until none is. */
        double T = t;
        for (uint32_t q = 0; q < m; q++)
            if (R->job[which[q]].t1 > t && R->job[which[q]].t0 < T)
                T = R->job[which[q]].t0;
        for (bool moved = true; moved;) {
            moved = false;
            for (uint32_t q = 0; q < m; q++) {
                const cjob *J = &R->job[which[q]];
                if (J->t1 > T && J->t0 < T) {
                    T = J->t0;
                    moved = true;
                }
            }
        }
        uint32_t k = 0, over = 0;
        for (uint32_t q = 0; q < m; q++) {
            cjob *J = &R->job[which[q]];
            if (J->t1 > T || J->t0 >= T)
                which[k++] = which[q];
            else {
                J->comp = which[q]; /* alone, over: leaves the live jobs */
                R->cflag[which[q]] = 0;
            }
        }
        m = k;
        for (uint32_t q = 0; q < m; q++)
            over += R->job[which[q]].t1 <= t;
        /* Too many: the oldest that are over go (approximate). */
        k = 0;
        for (uint32_t q = 0; q < m; q++) {
            cjob *J = &R->job[which[q]];
            if (m - q + k > JOINT_MAX && J->t1 <= t && over) {
                over--;
                J->comp = which[q];
                R->cflag[which[q]] = 0;
                R->res->joint_dropped++;
            } else
                which[k++] = which[q];
        }
        m = k;
        for (uint32_t q = 0; q < m && !err; q++)
            err = job_plan(R, which[q]);
        if (err)
            break;
        double base = R->job[which[0]].t0;
        for (uint32_t q = 0; q < m; q++) {
            const cjob *J = &R->job[which[q]];
            jobs[q] = (weft_sim_job){J->plan, J->psize, J->t0 - base, J->ring,
                                     J->kind == P2P ? WEFT_COLL_ALLTOALL : (weft_coll)J->kind};
        }
        if ((err = weft_sim_plans(R->c->topo, jobs, m, &R->c->opts, done, R->d)))
            break;
        R->res->joint_sims++;
        R->res->joint_jobs += m;
        for (uint32_t q = 0; q < m && !err; q++)
            if (R->job[which[q]].t1 > t)
                err = job_end(R, which[q], fmax(t, base + done[q]));
    }
    weft__free(jobs);
    weft__free(done);
    weft__free(which);
    return err;
}

/* Simulates the instances and sends that start at t, batched by (kind,
 * size, group size), each batch alone (weft__work_groups_s, cached) and,
 * when a batch starts while others run, with them (joint). */
static weft_err launch(run *R, double t)
{
    weft_err err;
    weft_chakra_result *res = R->res;
    while (R->npend) {
        /* The first pending instance's class; every other of that class. */
        const group *g0 = &R->g[R->pend[0]];
        const weft_ck_node *a = weft__ck_node_at(R, g0->member[0], g0->inode[(size_t)R->pend[1] * g0->gs]);
        const weft_ck_attrs *aa = weft_ck_attr(&R->w->r[g0->member[0]].t, a);
        int coll = weft__ck_coll_of(aa->comm_type);
        uint64_t size = aa->comm_size;
        uint32_t gs = g0->gs, n = 0;
        size_t keep = 0;
        if (weft__grow((void **)&R->pos, &R->cappos, R->w->n + (size_t)gs, sizeof *R->pos))
            return weft_diag_code(R->d, WEFT_ENOMEM);
        uint32_t *batch = NULL;
        size_t nb = 0, capb = 0;
        for (size_t q = 0; q < R->npend; q += 2) {
            const group *g = &R->g[R->pend[q]];
            const weft_ck_node *b = weft__ck_node_at(R, g->member[0], g->inode[(size_t)R->pend[q + 1] * g->gs]);
            const weft_ck_attrs *ba = weft_ck_attr(&R->w->r[g->member[0]].t, b);
            if (g->gs == gs && weft__ck_coll_of(ba->comm_type) == coll && ba->comm_size == size) {
                if (weft__grow((void **)&R->pos, &R->cappos, (size_t)n + gs, sizeof *R->pos) ||
                    weft__grow((void **)&batch, &capb, nb + 2, sizeof *batch)) {
                    weft__free(batch);
                    return weft_diag_code(R->d, WEFT_ENOMEM);
                }
                memcpy(R->pos + n, g->member, gs * sizeof *R->pos);
                n += gs;
                batch[nb++] = R->pend[q];
                batch[nb++] = R->pend[q + 1];
            } else {
                R->pend[keep++] = R->pend[q];
                R->pend[keep++] = R->pend[q + 1];
            }
        }
        R->npend = keep;
        double dur = 0;
        err = coll < 0 ? WEFT_OK
                       : weft__work_groups_s(R->c, (weft_coll)coll, false, R->pos, n, gs, size,
                                             &dur, R->d);
        res->batches++;
        for (size_t q = 0; q < nb && !err; q += 2) {
            if (coll < 0)
                res->barriers++;
            else {
                res->coll_calls[coll]++;
                res->coll_bytes[coll] += size;
            }
        }
        if (!err)
            err = add_job(R, coll, R->pos, n, gs, size, t, dur, batch, (uint32_t)nb);
        weft__free(batch);
        if (err)
            return err;
    }
    while (R->npsend) {
        uint64_t size = R->m[R->psend[0]].size;
        uint32_t n = 0, nmem = 0;
        size_t keep = 0;
        uint32_t *mem = weft__malloc(R->npsend * sizeof *mem);
        if (!mem)
            return weft_diag_code(R->d, WEFT_ENOMEM);
        for (size_t q = 0; q < R->npsend; q++) {
            msg *m = &R->m[R->psend[q]];
            if (m->size != size) {
                R->psend[keep++] = R->psend[q];
                continue;
            }
            mem[nmem++] = R->psend[q];
        }
        /* Pairs and ends in message order. */
        if (nmem)
            qsort(mem, nmem, sizeof *mem, u32_cmp);
        if (weft__grow((void **)&R->pos, &R->cappos, (size_t)2 * nmem, sizeof *R->pos)) {
            weft__free(mem);
            return weft_diag_code(R->d, WEFT_ENOMEM);
        }
        for (uint32_t q = 0; q < nmem; q++) {
            R->pos[n++] = R->m[mem[q]].src;
            R->pos[n++] = R->m[mem[q]].dst;
        }
        double dur = 0;
        err = weft__work_groups_s(R->c, WEFT_COLL_ALLTOALL, true, R->pos, n, 2, size, &dur, R->d);
        res->batches++;
        for (uint32_t q = 0; q < nmem && !err; q++) {
            res->p2p_calls++;
            res->p2p_bytes += size;
        }
        if (!err)
            err = add_job(R, P2P, R->pos, n, 2, size, t, dur, mem, nmem);
        weft__free(mem);
        if (err)
            return err;
        R->npsend = keep;
    }
    return R->joint ? joint(R, t) : WEFT_OK;
}

/* The comm spans, simulated times and link loads of every job, at its
 * final times. */
static weft_err finish_jobs(run *R)
{
    weft_chakra_result *res = R->res;
    weft_err err = WEFT_OK;
    for (size_t j = 0; j < R->njob && !err; j++) {
        const cjob *J = &R->job[j];
        double dur = J->t1 - J->t0;
        if (J->kind == P2P) {
            for (uint32_t q = 0; q < J->nmem && !err; q++) {
                const msg *m = &R->m[R->jmem[J->mem_off + q]];
                rstate *s = &R->rs[m->src];
                res->p2p_s += dur;
                err = add_span(R, &s->comm, &s->ncomm, &s->capcomm, m->sent, m->arrive,
                               m->send_node);
            }
        } else {
            for (uint32_t q = 0; q < J->nmem && !err; q += 2) {
                const group *g = &R->g[R->jmem[J->mem_off + q]];
                size_t k = R->jmem[J->mem_off + q + 1];
                if (J->kind >= 0)
                    res->coll_s[J->kind] += dur;
                for (uint32_t m = 0; m < g->gs && !err; m++) {
                    rstate *s = &R->rs[g->member[m]];
                    err = add_span(R, &s->comm, &s->ncomm, &s->capcomm, g->it[k * g->gs + m],
                                   J->t1, g->inode[k * g->gs + m]);
                }
            }
        }
        if (J->kind >= 0)
            batch_links(R, (uint32_t)J->kind, R->jpos + J->off, J->n, J->gs, J->t0, J->t1);
    }
    return err;
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
                                 weft_ck_name(&w->r[m->dst].t, nd), m->src,
                                 (long long)m->tag);
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
                ev e = pop_ev(&R);
                err = complete(&R, &e);
            }
        }
        if (!err && (R.npend || R.npsend)) {
            err = launch(&R, t);
            continue;
        }
        if (err || !R.q.n)
            break;
        t = weft__evheap_top(&R.q)->t;
    }
    if (!err)
        err = deadlock(&R);
    if (!err)
        err = finish_jobs(&R);
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
