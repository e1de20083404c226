/* Compressed and sparse collectives (sparse.c), built for the schedule
 * registry's rows sparse-ag, quant-2shot, sparse-hash and sparse-range. */
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

#endif
