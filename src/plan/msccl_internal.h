/* What MSCCL import (msccl_import.c) and export (msccl_export.c) share: the
 * step types and the collective spellings; for import only, the elements
 * read (msccl_import.c) that msccl_build.c turns into a plan; for export
 * only, the steps assigned to threadblocks that msccl_write.c turns into
 * XML. docs/msccl.md describes the mapping between MSCCL programs and weft
 * plans. Nothing outside src/plan includes this header.
 */
#ifndef WEFT_PLAN_MSCCL_INTERNAL_H
#define WEFT_PLAN_MSCCL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* expat is a required dependency; the import state holds its parser. */
#include <expat.h>

#include "weft/plan.h"

/* The step types of the MSCCL interpreter, in the order of its opcodes. */
typedef enum weft__msccl_step_type {
    WEFT__MSCCL_S = 0, /* send src */
    WEFT__MSCCL_R,     /* receive into dst */
    WEFT__MSCCL_RCS,   /* receive into dst, send it on */
    WEFT__MSCCL_RRS,   /* receive, add src, send the sum on (not stored) */
    WEFT__MSCCL_RRC,   /* receive, add src, store in dst */
    WEFT__MSCCL_RRCS,  /* receive, add src, store in dst and send it on */
    WEFT__MSCCL_CPY,   /* dst = src, locally */
    WEFT__MSCCL_RE,    /* dst = dst + src, locally */
    WEFT__MSCCL_NOP,   /* only waits for its dependency */
    WEFT__MSCCL_STEP_COUNT
} weft__msccl_step_type;

/* "s", "r", "rcs", ... as written in the type attribute. */
extern const char *const weft__msccl_step_names[WEFT__MSCCL_STEP_COUNT];

/* True when a step of this type receives (sends) a message. */
static inline bool weft__msccl_step_recvs(int t)
{
    return t == WEFT__MSCCL_R || t == WEFT__MSCCL_RCS || t == WEFT__MSCCL_RRS ||
           t == WEFT__MSCCL_RRC || t == WEFT__MSCCL_RRCS;
}
static inline bool weft__msccl_step_sends(int t)
{
    return t == WEFT__MSCCL_S || t == WEFT__MSCCL_RCS || t == WEFT__MSCCL_RRS ||
           t == WEFT__MSCCL_RRCS;
}

/* Threadblocks per GPU a profile's parser accepts (ids below
 * MSCCL_MAX_NUM_THREAD_BLOCKS: 32 x MAXCHANNELS = 1024 in msccl-executor,
 * 108 x 2 = 216 in Microsoft MSCCL). */
uint32_t weft__msccl_max_tbs(weft_msccl_profile profile);

/* The coll attribute's spelling of a collective under a profile
 * (reducescatter is "reduce_scatter" for the msccl profile). */
const char *weft__msccl_coll_name(weft_coll coll, weft_msccl_profile profile);

/* ---- Export: the steps msccl_export.c assigns to threadblocks and
 * msccl_write.c writes as XML. NONE below is UINT32_MAX. ---------------- */

/* A threadblock's identity. kind: 0 sends to peer, 1 receives from peer,
 * 2 local (peer 0). */
enum { TB_SEND = 0, TB_RECV = 1, TB_LOCAL = 2 };
typedef struct xk {
    uint32_t rank, kind, peer, chan;
} xk;

typedef struct xstep {
    uint32_t tb;  /* index into the sorted keys */
    uint32_t dep; /* global step it waits for, or NONE */
    uint8_t type;
    bool hasdep;
    char srcbuf, dstbuf;
    int64_t srcoff, dstoff;
    uint32_t cnt;
} xstep;

typedef struct xout {
    char *buf;
    size_t len, cap;
    bool oom;
} xout;

typedef struct xctx {
    const weft_plan *p;
    const weft_plan_info *info;
    weft_diag *d;
    uint32_t nops;
    xk *keys;
    size_t nkeys;
    uint32_t *chan; /* per op: its channel in the program (plan channels spread) */
    xstep *steps;
    size_t nsteps, steps_cap;
    uint32_t *send_step, *recv_step; /* per op: its step on src / dst rank */
    uint32_t *alias;      /* per key: the threadblock it is merged into (itself if none) */
    uint32_t *pair_of;    /* per key: the key it is paired with, or NONE */
    uint32_t *fuse_next;  /* per op: the op whose send may fuse with its receive, or NONE */
    uint32_t *fused_from; /* per op: the op whose receive its send may fuse with, or NONE */
    uint32_t *tb_last;    /* per key: its threadblock's last step so far, or NONE */
    uint32_t *wait;       /* wire_deps' work list */
    uint32_t *last_wait;  /* per threadblock: the last step it waited for */
    size_t wait_cap;
} xctx;

/* Writes the <algo> document of the steps in x to out, checking the
 * profile's limits first (WEFT_ELIMIT, said on x->d); out->oom is reported
 * as WEFT_ENOMEM (msccl_write.c). */
weft_err weft__msccl_write_doc(xctx *x, const weft_msccl_opts *opts, xout *out);

/* ---- Import: the elements msccl_import.c reads from the XML and
 * msccl_build.c turns into a plan. ---------------------------------------- */

typedef struct mx_pos {
    uint32_t line, col;
} mx_pos;

typedef struct mx_gpu {
    int32_t id, i_chunks, o_chunks, s_chunks;
    uint32_t first_tb, ntb;
    mx_pos pos;
} mx_gpu;

typedef struct mx_tb {
    int32_t id, send, recv, chan;
    uint32_t gpu; /* index into gpus */
    uint32_t first_step, nsteps;
    mx_pos pos;
} mx_tb;

typedef struct mx_step {
    uint8_t type;
    uint8_t srcbuf, dstbuf; /* weft_buf */
    int32_t srcoff, dstoff, cnt, depid, deps;
    uint32_t tb; /* index into tbs */
    mx_pos pos;
} mx_step;

enum { IN_NONE, IN_ALGO, IN_GPU, IN_TB, IN_STEP, IN_DONE };

typedef struct mx_state {
    XML_Parser parser;
    const char *name;
    weft_diag *d;
    weft_err err;
    int where; /* the innermost open element */
    /* <algo> */
    int32_t ngpus, nchunksperloop, nchannels, root;
    weft_coll coll;
    bool inplace;
    mx_pos algo_pos;
    mx_gpu *gpus;
    size_t ngpu, gpu_cap;
    mx_tb *tbs;
    size_t ntb, tb_cap;
    mx_step *steps;
    size_t nstep, step_cap;
} mx_state;

/* "NAME: out of memory WHAT", WEFT_ENOMEM: a program too large for this
 * machine, named, rather than a bare "out of memory". */
static inline weft_err mx_oom(weft_diag *d, const char *name, const char *what)
{
    return weft_diag_set(d, WEFT_ENOMEM, "%s: out of memory %s", name, what);
}

/* Builds the plan of the elements read into st (the import's second half,
 * msccl_build.c); *out only on success, errors said on st->d. */
weft_err weft__msccl_build(mx_state *st, weft_plan **out);

#endif
