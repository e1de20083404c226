/* The classic algorithms' shared context: one builder function per
 * algorithm family, registered in classic.c.
 *
 * File order, bottom up (a file calls only files listed before it;
 * tools/file_cycles.py checks it): classic_plan.c (a new plan, the main
 * buffer), classic_ring.c (also the ring phases hier reuses),
 * classic_tree.c, classic_hd.c, classic_a2a.c (also the runs helper the
 * box schedules use), classic_a2a_box.c (hier all-to-all and what the box
 * schedules share), classic_flash.c, classic_hier.c, classic_relay.c, and
 * classic.c, the registry and weft_synth_classic. */
#ifndef WEFT_SYNTH_CLASSIC_INTERNAL_H
#define WEFT_SYNTH_CLASSIC_INTERNAL_H

#include "synth/emit.h"
#include "synth/rankorder.h"
#include "weft/synth.h"

typedef struct synth_ctx {
    const weft_topo *topo;
    weft_coll coll;
    uint32_t n;       /* ranks */
    uint32_t root;    /* broadcast and reduce */
    uint32_t param;   /* K of rings:K */
    uint32_t max_ops; /* cap on the plan's ops (weft_plan_limit_ops), 0 none */
    double bytes;     /* nccl: the size whose choice is built */
    synth_hosts hosts;
    uint32_t *order; /* the ring order (synth_ring_order with shift 0) */
    /* alltoall with a traffic matrix (weft_synth_classic_traffic), else
     * NULL; weft_synth_classic_traffic puts it on the plan afterwards. */
    const weft_traffic *traffic;
    weft_diag *d;
} synth_ctx;

/* Builds the plan of one algorithm for c->coll (already known to be
 * supported). */
typedef weft_err (*synth_build_fn)(const synth_ctx *c, weft_plan **out);

weft_err synth_build_rings(const synth_ctx *c, weft_plan **out);
weft_err synth_build_dbtree(const synth_ctx *c, weft_plan **out);
weft_err synth_build_binomial(const synth_ctx *c, weft_plan **out);
weft_err synth_build_hd(const synth_ctx *c, weft_plan **out);
weft_err synth_build_rd(const synth_ctx *c, weft_plan **out);
weft_err synth_build_bruck(const synth_ctx *c, weft_plan **out);
weft_err synth_build_direct(const synth_ctx *c, weft_plan **out);
weft_err synth_build_pairwise(const synth_ctx *c, weft_plan **out);
weft_err synth_build_hier(const synth_ctx *c, weft_plan **out);
/* Broadcast and reduce relayed through c->param ranks of the root's host
 * (0: all), classic_relay.c. */
weft_err synth_build_relay(const synth_ctx *c, weft_plan **out);
/* All-to-all: Bruck's log-step exchange (classic_a2a.c), and on boxes the
 * hierarchical (PXN) and FLASH schedules (classic_a2a_box.c). */
weft_err synth_build_a2a_bruck(const synth_ctx *c, weft_plan **out);
weft_err synth_build_a2a_hier(const synth_ctx *c, weft_plan **out);
weft_err synth_build_flash(const synth_ctx *c, weft_plan **out);
/* flash:K: synth_flash_plan_split with split c->param (1..64). */
weft_err synth_build_flash_split(const synth_ctx *c, weft_plan **out);
/* Flash for the N x N byte matrix m (row-major, bytes rank s sends rank d;
 * NULL: every block equal). With m, blocks of 0 bytes get no op (an
 * alltoallv plan does not ask for them). */
weft_err synth_flash_plan(const synth_ctx *c, const uint64_t *m, weft_plan **out);
/* The same with every block cut into `split` chunks (the plan's C; chunk
 * p of a block of b bytes has floor(b/C) bytes, one more for p < b mod C,
 * as weft/plan.h sizes them), placed into the rounds one by one, so a
 * block may span rounds. split 1 is synth_flash_plan. */
weft_err synth_flash_plan_split(const synth_ctx *c, const uint64_t *m, uint32_t split,
                                weft_plan **out);
/* WEFT_ETOPO (with d naming why) unless the fabric has at least two hosts
 * of equal size with more than one rank each. */
weft_err synth_need_boxes(const synth_ctx *c, const char *algo);
/* The all-to-all blocks inside every box, each straight to its rank (a
 * local copy for a rank's own block); with m, blocks of 0 bytes are left
 * out. */
weft_err synth_a2a_intra(const synth_ctx *c, synth_emit *e, const uint64_t *m, uint32_t chunks);

/* Emits copies of slots sidx[k] of buffer sbuf on rank src to slots
 * didx[k] of dbuf on dst, k < cnt, as one op per maximal run where both
 * indices go up by one, each with the `extra` deps. The first op's id goes
 * to *first and the number of ops to *nops (either may be NULL); the ops'
 * ids are consecutive. */
weft_err synth_emit_runs(synth_emit *e, uint32_t src, weft_buf sbuf, const uint32_t *sidx,
                         uint32_t dst, weft_buf dbuf, const uint32_t *didx, uint32_t cnt,
                         uint32_t channel, const uint32_t *extra, uint32_t nextra, uint32_t *first,
                         uint32_t *nops);
/* NCCL's choice at c->bytes (weft_nccl_choose), built as the classic plan
 * that runs it. */
weft_err synth_build_nccl(const synth_ctx *c, weft_plan **out);
/* Marks p, NCCL's tree on fabric f, as forwarded per Simple step of
 * WEFT_NCCL_SIMPLE_STEP at one tree channel's rate (nccl.c). */
void synth_nccl_mark_tree(weft_plan *p, const weft_nccl_fabric *f);

/* Ring reduce-scatter over the n ranks order[0..n): the `count` slots from
 * slot[q] end fully reduced at position q. Ring allgather: the `count`
 * slots from slot[q] start at position q and reach every position. */
weft_err synth_ring_rs(synth_emit *e, const uint32_t *order, uint32_t n, const uint32_t *slot,
                       uint32_t count, weft_buf buf, uint32_t channel);
weft_err synth_ring_ag(synth_emit *e, const uint32_t *order, uint32_t n, const uint32_t *slot,
                       uint32_t count, weft_buf buf, uint32_t channel);

/* A new in-place plan for c->coll with `chunks` and `scratch`; out-of-place
 * for alltoall (in-place all-to-all would overwrite what it still sends). */
weft_err synth_plan_new(const synth_ctx *c, uint32_t chunks, uint32_t scratch, weft_plan **out);

/* The buffer every op of an in-place plan of c->coll names its slots in:
 * out for allgather, allreduce, broadcast and reduce; in for
 * reducescatter (whose outputs alias its inputs). */
weft_buf synth_main_buf(weft_coll coll);

#endif
