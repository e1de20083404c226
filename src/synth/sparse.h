/* Compressed and sparse collectives (sparse.c), built for the schedule
 * registry's rows sparse-ag, quant-2shot, sparse-hash, sparse-range and
 * hier-quant. */
#ifndef WEFT_SYNTH_SPARSE_H
#define WEFT_SYNTH_SPARSE_H

#include "weft/synth.h"

/* Builds row `algo` for coll on t at dense size `bytes` (allreduce: one
 * rank's tensor; allgather: the total output), with args (NULL: defaults,
 * weft_sparse_args_init), as a sized plan (weft_plan_set_op_sizes).
 * max_ops 0: no limit. Errors: WEFT_ETOPO for fewer than 2 ranks,
 * WEFT_EINVAL for a compressor the row cannot use or a size that holds no
 * element, WEFT_ELIMIT past max_ops, WEFT_ENOMEM. */
weft_err weft__synth_sparse(const weft_topo *t, const char *algo, weft_coll coll, double bytes,
                            uint32_t max_ops, const weft_sparse_args *args, weft_plan **out,
                            weft_diag *d);

/* hier-quant (sparse_hier.c): the hierarchical compressed all-reduce of a
 * `size`-byte tensor of `elems` elements of a->elem_bytes, dense inside
 * each host and a->comp across hosts on every rail. a is checked already
 * (a dense quantizer). WEFT_ETOPO without two or more hosts of equal
 * size; WEFT_ELIMIT past max_ops (0: no limit); WEFT_ENOMEM. */
weft_err weft__synth_hier_quant(const weft_topo *t, uint64_t size, uint64_t elems, uint32_t max_ops,
                                const weft_sparse_args *a, weft_plan **out, weft_diag *d);

/* Records bytes as op id's size in the growing array *b (*cap entries).
 * WEFT_ENOMEM. */
weft_err weft__sparse_note(uint64_t **b, size_t *cap, uint32_t id, uint64_t bytes);

/* What sparse_compute.c needs to place a plan's compute. */
typedef struct weft__sparse_compute {
    bool quant;                  /* dense chunks, quantized; else (index, value) pairs */
    bool gather;                 /* sparse-ag's all-reduce: aggregates only */
    uint32_t lo, hi;             /* the two-shot's ops: ids [lo, hi) */
    uint32_t data_ops;           /* the plan's ops before any compute op */
    const uint64_t *chunk_dense; /* quant: the dense bytes of chunk c < nchunks */
    uint32_t nchunks;
    uint64_t dense_bytes; /* sparse two-shot: the dense output (fill) */
} weft__sparse_compute;

/* Appends the compute ops of the two-shot in ops [s->lo, s->hi) of p
 * (sparse_compute.c gives the chain of each rank), their bytes into *b,
 * and the deps that order them with the rank's sends. WEFT_ELIMIT past
 * the plan's op limit, WEFT_ENOMEM. */
weft_err weft__sparse_place_compute(weft_plan *p, const weft__sparse_compute *s, uint64_t **b,
                                    size_t *cap, weft_diag *d);

#endif
