/* The batches of a Chakra run (work/chakra_int.h): what starts at one
 * instant is grouped into jobs, one simulation per (kind, size, group
 * size) through weft__work_groups_s; jobs whose runs overlap in time and
 * share links are simulated again together (joint), and their ends are
 * scheduled as events. File order: chakra_queue < chakra_jobs < chakra_run. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "work/chakra_int.h"

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
            if (!(err = weft__ck_sched(R, t1, m->src, m->send_node)) && m->recv_node != NONE)
                err = weft__ck_sched(R, fmax(t1, m->recv_t), m->dst, m->recv_node);
        }
        return err;
    }
    for (uint32_t q = 0; q < J->nmem && !err; q += 2) {
        const group *g = &R->g[R->jmem[J->mem_off + q]];
        size_t k = R->jmem[J->mem_off + q + 1];
        for (uint32_t m = 0; m < g->gs && !err; m++)
            err = weft__ck_sched(R, t1, g->member[m], g->inode[k * g->gs + m]);
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
    weft_err err = weft__work_groups_plan(R->c, p2p ? WEFT_COLL_ALLTOALL : (weft_coll)J->kind, p2p,
                                          R->jpos + J->off, J->n, J->gs, J->size, &J->plan,
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
    R->job[j] = (cjob){
        kind, (uint32_t)R->njpos, n, gs, size, t, t, (uint32_t)R->njmem, nmem, j, 0, 0, NULL, 0, 0,
        false};
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
weft_err weft__ck_launch(run *R, double t)
{
    weft_err err;
    weft_chakra_result *res = R->res;
    while (R->npend) {
        /* The first pending instance's class; every other of that class. */
        const group *g0 = &R->g[R->pend[0]];
        const weft_ck_node *a =
            weft__ck_node_at(R, g0->member[0], g0->inode[(size_t)R->pend[1] * g0->gs]);
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
            const weft_ck_node *b =
                weft__ck_node_at(R, g->member[0], g->inode[(size_t)R->pend[q + 1] * g->gs]);
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
weft_err weft__ck_finish_jobs(run *R)
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
                err = weft__ck_add_span(R, &s->comm, &s->ncomm, &s->capcomm, m->sent, m->arrive,
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
                    err = weft__ck_add_span(R, &s->comm, &s->ncomm, &s->capcomm,
                                            g->it[k * g->gs + m], J->t1, g->inode[k * g->gs + m]);
                }
            }
        }
        if (J->kind >= 0)
            batch_links(R, (uint32_t)J->kind, R->jpos + J->off, J->n, J->gs, J->t0, J->t1);
    }
    return err;
}
