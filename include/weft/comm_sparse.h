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
 * weft_allreduce_sparse treats memory alike where it can: a rank that
 * cannot pack its pairs says so in its header (WEFT_ENOMEM on every rank,
 * "sparse allreduce: rank R: out of memory"; usable). Where its peers are
 * already in an exchange it cannot finish, it fails the communicator
 * (WEFT_ENOMEM, "comm: rank R: out of memory in sparse allreduce"), which
 * tells them (WEFT_EPEER naming it) at once rather than at the timeout;
 * once the last exchange is done (a sparse result's arrays) it returns
 * WEFT_ENOMEM alone, the others their results, the communicator usable.
 * weft_allreduce_int8 fails the communicator on any allocation failure
 * ("comm: rank R: out of memory in int8 allreduce"; the peers WEFT_EPEER).
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
 * every rank: the values of an index add up rank by rank in rank order,
 * each rank's in input order, the first one taken as it is: ((v_0a + v_0b)
 * + v_1a) + ... . Where no rank repeats an index (top-k's output never
 * does) that is bit for bit the sum a dense all-reduce of the densified
 * tensors computes in rank order (as weft's direct schedule does), since
 * adding +0 changes no value but -0: an index whose every value is -0
 * sums to -0 here and to +0 there.
 *
 * Wire: a rank sends owner j its pairs of part j (count_j positions in the
 * part, then count_j values: count_j (isz + 4) bytes, isz the index type's
 * size), and owner j sends its u_j summed pairs (indices and values) to
 * every rank, as the sparse-hash plan charges (docs/compression.md), plus
 * a header of 6 words per rank and one word per message carrying its
 * count. A rank's repeats of an index all travel (the plan counts distinct
 * non-zeros).
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
                                        const float *values, size_t count, uint64_t n, float *dense,
                                        weft_sparse_result *sparse, weft_diag *d);

/* Frees r's arrays and zeroes it; NULL and a zeroed result are allowed. */
WEFT_API void weft_sparse_result_free(weft_sparse_result *r);

/* ---- Compressors with error feedback --------------------------------------
 *
 * Error feedback (Seide et al., "1-bit SGD", Interspeech 2014; Karimireddy
 * et al., "Error Feedback Fixes SignSGD", ICML 2019): the compressor sends
 * C(g + e) and keeps e' = (g + e) - D(C(g + e)), what it did not send, for
 * the next step. The residual e lives in a weft_ef the caller owns, one per
 * tensor; a NULL weft_ef compresses g alone. */
typedef struct weft_ef {
    float *residual; /* n floats, zero at first */
    size_t n;
} weft_ef;

/* A zero residual of n floats (WEFT_ENOMEM). */
WEFT_API weft_err weft_ef_init(weft_ef *ef, size_t n);
/* Frees the residual; safe on a zeroed or finished weft_ef. */
WEFT_API void weft_ef_fini(weft_ef *ef);

/* Top-k (Aji & Heafield, EMNLP 2017): x = g + e; the k elements of largest
 * |x| (ties to the lower index; NaN counts as largest), written as
 * indices[0..k) ascending and values[i] = x[indices[i]]; the residual
 * becomes x with those k zeroed. k <= n < 2^32. WEFT_EINVAL for k > n, n
 * >= 2^32 or a residual of another length; WEFT_ENOMEM. */
WEFT_API weft_err weft_topk_compress(const float *g, size_t n, size_t k, weft_ef *ef,
                                     uint32_t *indices, float *values, weft_diag *d);

/* int8 with one fp32 scale per block of `block` elements (0: one block of
 * all n; the last block may be shorter): the scales weft_int8_compress
 * writes. */
WEFT_API size_t weft_int8_scales(size_t n, size_t block);

/* int8 quantization (per tensor or per block, as weft_compress_bytes'
 * int8:B; ZeRO++'s block quantization): x = g + e; for each block b, s_b =
 * max |x| / 127 in fp32 (1 when the block is all zero), q_i = x_i / s_b
 * rounded to nearest even (in double), clamped to [-127, 127]; the residual
 * becomes x - D(q). Bound, for a block of finite values: |x_i - s_b q_i| <=
 * s_b (1/2 + 2^-16) (the rounding of x / s_b, and s_b q_i in fp32).
 * WEFT_EINVAL for a residual of another length; NaN or infinite values
 * give unspecified codes. */
WEFT_API weft_err weft_int8_compress(const float *g, size_t n, size_t block, weft_ef *ef, int8_t *q,
                                     float *scales, weft_diag *d);
/* out[i] = scales[i / block] x q[i], in fp32. */
WEFT_API void weft_int8_decompress(const int8_t *q, const float *scales, size_t n, size_t block,
                                   float *out);

/* ---- Quantized all-reduce ------------------------------------------------ */

/* The int8 two-shot all-reduce of count floats (quant-2shot,
 * docs/compression.md): chunk j (count / size elements, the first count
 * mod size one more; chunks in rank order) is owned by rank j. Every rank
 * int8-compresses its chunk j (blocks of `block` from the chunk's start,
 * 0: one block a chunk) and sends it to rank j; the owner decompresses
 * the size chunks, sums them in rank order in double, rounds the sums to
 * fp32, compresses them again and sends them to every rank; every rank
 * decompresses into recvbuf (in place when sendbuf == recvbuf). Every rank
 * gets the same bytes. Wire: a chunk of c elements weighs c + 4
 * ceil(c / block) bytes (c + 4 for block 0), int8:B's
 * weft_compress_bytes.
 *
 * Bound: for element i in block b of its chunk, with y_i the exact sum
 * of the inputs and m_{r,b} the largest |x| of rank r in block b,
 *     |recvbuf_i - y_i| <= (1 + 2^-12) sum_r m_{r,b} / 127
 * (each rank's quantization error is at most m_{r,b} / 254 (1 + 2^-15),
 * the owner's at most max |sum| / 254 (1 + 2^-15) <= sum_r m_{r,b} / 254
 * (1 + 2^-14), the fp32 rounding of the sum 2^-24 of it), for finite
 * inputs. Every rank must pass the same count and block (checked: WEFT_EINVAL
 * on every rank otherwise, as the sparse all-reduce's errors); WEFT_ENOMEM. */
WEFT_API weft_err weft_allreduce_int8(weft_comm *c, const float *sendbuf, float *recvbuf,
                                      size_t count, size_t block, weft_diag *d);

#ifdef __cplusplus
}
#endif

#endif
