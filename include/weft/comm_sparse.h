/* weft sparse and compressed all-reduce on CPU buffers: the runtime side
 * of docs/compression.md (the plans sparse-hash and quant-2shot, run for
 * real on a communicator of weft/comm.h).
 *
 *  - weft_allreduce_sparse: the all-reduce of COO tensors (indices and
 *    float values) by hash partitioning: every rank owns the indices
 *    weft_sparse_hash_owner (weft/compress.h) gives it, the same parts the
 *    simulator's sparse-hash plan sizes; a sparse reduce-scatter sends each
 *    owner the pairs it owns, the owner sums them, and an all-gather of the
 *    owners' sums gives every rank the whole result, densified or sparse.
 *  - Top-k and int8 compressors with error feedback (the residual kept in
 *    a context the caller owns), and weft_allreduce_int8, the two-shot
 *    quantized all-reduce (quant-2shot) with a stated error bound.
 *
 * These calls move their data with weft's point-to-point layer (the
 * transports of the communicator: shared memory, TCP); they do not go
 * through the schedule selection (WEFT_ALGO, WEFT_PLAN, WEFT_TUNING do not
 * apply). Like every collective they are called by every rank, one at a
 * time, and fail the communicator on a transport error. Bad arguments are
 * found before any payload moves and fail the call on every rank with the
 * same message, naming the rank; the communicator stays usable.
 */
#ifndef WEFT_COMM_SPARSE_H
#define WEFT_COMM_SPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "weft/comm.h"
#include "weft/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Sparse all-reduce --------------------------------------------------- */

/* A sparse result: count pairs, indices strictly ascending, in the index
 * type of the call; allocated by weft_allreduce_sparse, released by
 * weft_sparse_result_free. */
typedef struct weft_sparse_result {
    void *indices; /* uint32_t or uint64_t, as the call's index_type */
    float *values;
    size_t count;
} weft_sparse_result;

/* Sum over all ranks of the COO tensors (indices[i], values[i]), i < count,
 * each a tensor of n elements (absent indices are 0). index_type is
 * WEFT_UINT32 or WEFT_UINT64; every index must be < n; an index may repeat
 * within a rank's input (its values add up). Every rank passes the same n
 * and index_type; counts differ freely. Exactly one output: dense (n floats,
 * written whole: zeros where no rank has a non-zero) or sparse (filled in;
 * the union of all ranks' indices, each with its sum, even a sum of 0).
 *
 * Order of summation, so that the result is deterministic and the same on
 * every rank: a rank's repeats of an index add up in input order, and the
 * ranks' values of an index add up in rank order (((v_0 + v_1) + v_2) ...
 * over the ranks that hold it). That is bit for bit the sum a dense
 * all-reduce of the densified tensors computes in rank order (as weft's
 * direct schedule does: coll.h), since adding +0 changes no value but -0;
 * an index whose every value is -0 sums to -0 here and to +0 there.
 *
 * Wire: a rank sends owner j its coalesced pairs of part j (count_j
 * indices, then count_j values: count_j (isz + 4) bytes, isz the index
 * type's size), and owner j sends its u_j summed pairs to every rank, as
 * the sparse-hash plan charges (docs/compression.md), plus a header of 6
 * words per rank and one word per message carrying its count.
 *
 * Errors, on every rank with the same message (before any pair moves):
 * WEFT_EINVAL when a rank passed an index type other than uint32 or uint64,
 * both outputs or neither, NULL arrays with count > 0, an index >= n
 * ("sparse allreduce: rank 2: index 1000 at position 7 is >= n = 1000"), or
 * a count whose pairs overflow memory; when ranks disagree on n or the
 * index type; WEFT_EOVERFLOW when a dense n x 4 bytes or the counts summed
 * over ranks pass 2^64 - 1 bytes; WEFT_ENOMEM on any rank. Transport
 * errors as for every collective (weft/comm.h). */
WEFT_API weft_err weft_allreduce_sparse(weft_comm *c, const void *indices, weft_dtype index_type,
                                        const float *values, size_t count, uint64_t n,
                                        float *dense, weft_sparse_result *sparse, weft_diag *d);

/* Frees r's arrays and zeroes it; NULL and a zeroed result are allowed. */
WEFT_API void weft_sparse_result_free(weft_sparse_result *r);

#ifdef __cplusplus
}
#endif

#endif
