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

#endif
