/* Internals of running Chakra traces (weft_chakra_run): the loaded traces
 * and the run's state, shared by its files. File order: chakra_load
 * (decoding checks, dependency resolution) < chakra_trace (the Chrome
 * trace of a run); chakra_queue (events, spans) < chakra_jobs (batches
 * simulated) < chakra_run (the event loop). */
#ifndef WEFT_WORK_CHAKRA_INT_H
#define WEFT_WORK_CHAKRA_INT_H

#include <stdio.h>

#include "base/evheap.h"
#include "weft/paths.h"
#include "work/chakra.h"
#include "work/work_internal.h"

#define NONE UINT32_MAX

typedef struct ck_rank {
    char *file;
    weft_ck_trace t;
    uint32_t *dep;     /* resolved deps, node after node */
    uint32_t *dep_off; /* n + 1 */
} ck_rank;

struct weft_chakra {
    uint32_t n;
    ck_rank *r;
    uint64_t nodes;
};

/* A popped event: node `node` of rank `rank` ends at t. */
typedef struct ev {
    double t;
    uint32_t rank, node;
} ev;

typedef struct span {
    double t0, t1;
    uint32_t node;
} span;

typedef struct rstate {
    uint32_t *left, *succ_off, *succ;
    uint8_t *done;
    double *end;
    double *due;              /* when a communication node's scheduled end is (-1: none yet) */
    uint32_t *cq, cq_h, cq_t; /* compute queue */
    uint32_t *mq, mq_h, mq_t; /* communication queue */
    uint32_t *pq, pq_h, pq_t; /* host CPU queue (is_cpu_op) */
    bool comp_busy, comm_busy, cpu_busy;
    uint32_t wait_g, wait_k; /* the collective instance its comm stream waits in */
    span *comp, *comm, *cpu;
    size_t ncomp, ncomm, ncpu, capcomp, capcomm, capcpu;
} rstate;

typedef struct group {
    char name[WEFT_CK_NAME_MAX + 1];
    uint32_t gs;
    uint32_t *member; /* gs ranks, increasing */
    uint32_t *slot;   /* rank -> position in member, or NONE */
    uint32_t *seq;    /* rank -> collectives issued */
    uint32_t *inode;  /* instance k: gs node indices (NONE: not issued yet) */
    double *it;       /* instance k: gs issue times */
    uint32_t *arrived;
    size_t ninst, cap_inode, cap_it, cap_arr;
} group;

typedef struct msg {
    uint32_t src, dst, send_node, recv_node;
    int64_t tag;
    uint64_t size;
    double sent, arrive, recv_t; /* arrive < 0: in flight, not yet simulated */
} msg;

/* A batch of communication launched at one instant: one simulation's
 * worth (kind, the groups' positions, size), what it completes, and when it
 * runs. Jobs whose runs overlap in time form the running cluster. */
typedef struct cjob {
    int kind;            /* weft_coll, P2P, or -1 (barriers) */
    uint32_t off, n, gs; /* its positions: jpos[off .. off + n) */
    uint64_t size;
    double t0, t1;
    uint32_t mem_off, nmem; /* jmem: (group, instance) pairs, or message indices (P2P) */
    uint32_t comp;          /* its component: the id of a job of it */
    size_t link_off;        /* the links it may cross: jlink[link_off ..], nlink */
    uint32_t nlink;
    weft_plan *plan; /* while live: what its simulation runs, of size psize */
    uint64_t psize;
    uint32_t ring; /* its plan is rings of this many ranks (0: not) */
    bool planned;  /* plan and links are set (job_plan) */
} cjob;

typedef struct run {
    weft_work_ctx *c;
    const weft_chakra *w;
    weft_diag *d;
    rstate *rs;
    group *g;
    uint32_t ng;
    weft__evheap q; /* the events, by (time, order pushed); ids index evr */
    uint32_t *evr;  /* per event id: rank, node */
    size_t capevr;
    uint32_t nev;     /* event ids handed out */
    uint32_t *evfree; /* ids of popped events, for reuse */
    size_t nevfree, capevfree;
    uint32_t *ready; /* pairs (rank, node) ready now */
    size_t nready, capready;
    uint32_t *pend; /* pairs (group, instance) that start now */
    size_t npend, cappend;
    msg *m;
    size_t nm, capm;
    uint32_t *psend; /* messages that start now */
    size_t npsend, cappsend;
    uint32_t *pos;
    size_t cappos;
    cjob *job;
    size_t njob, capjob;
    uint32_t *jpos, *jmem;
    size_t njpos, capjpos, njmem, capjmem;
    uint32_t *clu; /* the live jobs: those of components still running */
    size_t nclu, capclu;
    uint8_t *cflag; /* per component id: 1 running, 2 joined, 4 to simulate again */
    size_t capcflag;
    uint32_t *jlink; /* the jobs' link sets */
    size_t njlink, capjlink;
    weft_paths *paths;
    bool joint; /* a job joined a running component at this instant */
    weft_chakra_result *res;
    bool traced;       /* link-group tracks are kept */
    weft__links links; /* kinds: weft_coll, then sends (P2P) */
} run;

#define P2P WEFT__COLL_COUNT

/* Node i of rank r. */
static inline const weft_ck_node *weft__ck_node_at(const run *R, uint32_t r, uint32_t i)
{
    return &R->w->r[r].t.nodes[i];
}

/* chakra_queue.c: node i of rank r ends at t, an event (push_ev); sched
 * pushes it only when t is not already the node's due time, and events
 * whose time is no longer the node's due time are skipped when popped. */
weft_err weft__ck_push_ev(run *R, double t, uint32_t rank, uint32_t node);
weft_err weft__ck_sched(run *R, double t, uint32_t r, uint32_t i);
/* The earliest event (the queue must not be empty). */
ev weft__ck_pop_ev(run *R);
/* Appends the span [t0, t1] of node to *s. */
weft_err weft__ck_add_span(run *R, span **s, size_t *n, size_t *cap, double t0, double t1,
                           uint32_t node);

/* chakra_jobs.c: launches what starts at t (pending collective instances
 * and sends) as jobs, joining running ones that share links; finish_jobs
 * records the spans and link loads of every job at the end of the run. */
weft_err weft__ck_launch(run *R, double t);
weft_err weft__ck_finish_jobs(run *R);

/* chakra_load.c: the weft collective of a Chakra one; -1 for a barrier,
 * -2 unsupported. */
int weft__ck_coll_of(uint64_t ct);
/* chakra_load.c: a Chakra collective's name ("?" when unknown). */
const char *weft__ck_coll_name(uint64_t ct);

/* chakra_trace.c: writes the run's Chrome trace (compute, comm and cpu
 * tracks per rank, then the link groups) to f; WEFT_EIO on a write error. */
weft_err weft__ck_write_trace(FILE *f, run *R, weft_diag *d);

#endif
