/* weft plans: the intermediate representation every part of weft exchanges.
 *
 * A plan is one collective (kind, number of ranks N, optional root) whose
 * data is cut into equal chunks, and a list of ops. Synthesis produces plans,
 * the verifier proves them correct, the simulator times them, the runtime
 * executes them, and MSCCL XML maps to and from them. docs/plan-format.md
 * is the full reference; this comment is the summary.
 *
 * Buffers. Every rank has three buffers of slots, each slot one chunk:
 *   in       the collective's input,
 *   out      its output,
 *   scratch  a private work area of `scratch` slots (MSCCL's "s" buffer).
 * Their sizes per rank follow from the collective and `chunks` (C):
 *
 *   coll           in      out     chunk ids   chunks the size S is cut into
 *   allgather      C       N*C     N*C         N*C (S = total output)
 *   reducescatter  N*C     C       N*C         N*C (S = total input)
 *   allreduce      C       C       C           C
 *   broadcast      C       C       C           C
 *   reduce         C       C       C           C
 *   alltoall       N*C     N*C     N*N*C       N*C (S = one rank's input)
 *
 * In an in-place plan (`inplace`, the default) in and out are one storage:
 * allgather's in[i] is out[r*C+i] on rank r, reducescatter's out[i] is
 * in[r*C+i], and for the others in[i] is out[i]. An out-of-place plan has
 * separate in and out storage (MSCCL "outofplace" programs).
 *
 * Values. Symbolically a slot holds nothing or one value: a chunk id and the
 * set of ranks whose contribution it sums. Initially (rank r):
 *   allgather      in[i] = chunk r*C+i from {r}
 *   reducescatter  in[c] = chunk c from {r}
 *   allreduce      in[c] = chunk c from {r}
 *   broadcast      in[c] = chunk c from {root} on the root only
 *   reduce         in[c] = chunk c from {r}
 *   alltoall       in[d*C+p] = chunk (r*N+d)*C+p from {r}
 * Out-of-place out slots and all scratch slots start empty. At the end:
 *   allgather      out[c] = chunk c from {c/C} on every rank
 *   reducescatter  out[i] = chunk r*C+i from all N ranks
 *   allreduce      out[c] = chunk c from all N ranks, every rank
 *   broadcast      out[c] = chunk c from {root}, every rank
 *   reduce         out[c] = chunk c from all N ranks on the root
 *   alltoall       out[s*C+p] = chunk (s*N+r)*C+p from {s}
 * Slots the postcondition does not name (scratch, non-root outputs of
 * reduce, inputs of out-of-place plans) may hold anything.
 *
 * Ops. An op reads `count` consecutive slots of one buffer on src_rank and
 * writes `count` consecutive slots of one buffer on dst_rank: a copy stores
 * the values, a reduce combines them into what the destination holds (the
 * destination is read too). A nop moves nothing; it only orders (MSCCL
 * "nop" steps). src_rank == dst_rank is a local copy or reduce. Ordering is
 * ONLY what `deps` say, transitively; channel is a hint for the runtime and
 * simulator. An op may carry a route: one or more paths through the
 * topology, each a list of node names from the source rank's node to the
 * destination rank's node, with an exact share of the op's bytes; the shares
 * sum to 1.
 *
 * Alltoallv (per-chunk sizes). An alltoall plan may carry a traffic matrix
 * M (weft/traffic.h; weft_plan_set_traffic): block (s, d), the C chunks
 * rank s sends rank d, then holds M(s, d) bytes instead of S/(N*C) each.
 * Chunk sizes are derived, exact in bytes: chunk p (0 <= p < C) of a block
 * of b bytes has floor(b/C) bytes, plus one for p < b mod C, so the C
 * chunks sum to b. Slots, values and ops are unchanged: the verifier checks
 * the same postcondition, except that an out slot whose chunk has 0 bytes
 * need not be filled (nothing to deliver), so every byte is delivered
 * exactly where it belongs. An op moves the sizes of the chunks its source
 * slots hold (weft_plan_op_bytes: a scratch slot holds whatever was copied
 * into it, found by running the plan symbolically). Such a plan has its own
 * size, weft_plan_traffic_size = total bytes / N (the mean bytes a rank
 * sends; for a uniform matrix nccl-tests' alltoall size): the cost model and
 * the simulator charge every op its real bytes at that size, and scale all
 * of them in proportion at another size. The text format has it as
 * `traffic ROW COL V...` lines (docs/plan-format.md).
 *
 * Storage. Ops live in parallel arrays; all deps share one array and all
 * route paths one table, so adding an op is amortized O(1 + deps) with no
 * per-op allocation. Op ids are dense, 0 .. num_ops-1, in order of
 * addition. A dep may name any op id, earlier or later; the verifier rejects
 * cycles. A weft_plan is not thread safe for writing; concurrent reads are
 * fine.
 */
#ifndef WEFT_PLAN_H
#define WEFT_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/err.h"
#include "weft/rat.h"
#include "weft/topo.h"
#include "weft/traffic.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_coll {
    WEFT_COLL_ALLGATHER = 0,
    WEFT_COLL_REDUCESCATTER,
    WEFT_COLL_ALLREDUCE,
    WEFT_COLL_BROADCAST,
    WEFT_COLL_REDUCE,
    WEFT_COLL_ALLTOALL,
    WEFT__COLL_COUNT
} weft_coll;

/* "allgather", "reducescatter", "allreduce", "broadcast", "reduce",
 * "alltoall" ("?" for an invalid value). */
WEFT_API const char *weft_coll_name(weft_coll coll);
/* Parses a collective name (len bytes); false when unknown. */
WEFT_API bool weft_coll_parse(const char *text, size_t len, weft_coll *out);
/* True for broadcast and reduce. */
WEFT_API bool weft_coll_has_root(weft_coll coll);

typedef enum weft_buf { WEFT_BUF_IN = 0, WEFT_BUF_OUT, WEFT_BUF_SCRATCH, WEFT__BUF_COUNT } weft_buf;

/* "in", "out", "scratch". */
WEFT_API const char *weft_buf_name(weft_buf buf);

typedef enum weft_op_kind {
    WEFT_OP_COPY = 0, /* dst = src */
    WEFT_OP_REDUCE,   /* dst = dst + src */
    WEFT_OP_NOP,      /* orders only; runs on src_rank (== dst_rank), count 0 */
    WEFT__OP_KIND_COUNT
} weft_op_kind;

/* "copy", "reduce", "nop". */
WEFT_API const char *weft_op_kind_name(weft_op_kind kind);

/* Local compute a nop may carry (a compute op; docs/plan-format.md,
 * "Compute ops"): the kernel a rank runs between its sends and receives
 * in a compressed or sparse collective, over `bytes` (the op's size in a
 * sized plan, weft_plan_set_op_sizes). The plan says what runs where and
 * in what order (its deps); what it costs is the processor's: the
 * simulator charges bytes x a per-byte rate of the kind
 * (weft_sim_opts.compute_s_per_b), nothing when none is given. The
 * dataflow is the nop's: the verifier, the cost model and the runtime's
 * executor see an ordering point (the executor moves dense chunks and runs
 * no kernel), and the MSCCL export writes a nop step. */
typedef enum weft_compute {
    WEFT_COMPUTE_NONE = 0,   /* a plain nop */
    WEFT_COMPUTE_HASH,       /* hash-partition (index, value) pairs by owner, and pack them */
    WEFT_COMPUTE_COMPRESS,   /* quantize or select: dense values in */
    WEFT_COMPUTE_DECOMPRESS, /* dequantize, or scatter pairs into a dense tensor */
    WEFT_COMPUTE_AGGREGATE,  /* sum received data into an accumulator */
    WEFT_COMPUTE_FILL,       /* zero a dense output before pairs are scattered into it */
    WEFT__COMPUTE_COUNT
} weft_compute;

/* "none", "hash", "compress", "decompress", "aggregate", "fill" ("?" out
 * of range). */
WEFT_API const char *weft_compute_name(weft_compute c);
/* Parses one of those names (len bytes); false when unknown. */
WEFT_API bool weft_compute_parse(const char *text, size_t len, weft_compute *out);

/* The header of a plan. root is meaningful only for broadcast and reduce
 * (0 otherwise). */
typedef struct weft_plan_info {
    weft_coll coll;
    uint32_t nranks;  /* N >= 1 */
    weft_rank root;   /* < nranks */
    uint32_t chunks;  /* C >= 1 (see the table above) */
    uint32_t scratch; /* scratch slots per rank, >= 0 */
    bool inplace;
} weft_plan_info;

/* Limits that keep every per-rank slot index and every count in uint32 and
 * a text line short enough to read. WEFT_PLAN_MAX_TOTAL_SLOTS bounds what
 * a plan's header can make the verifier and the executor allocate: the
 * slots of every rank together, ranks x (in + out + scratch). The verifier
 * keeps about 16 bytes per slot (1 GiB at the limit), the executor 8 bytes
 * per slot and element; the header alone of a 70-byte file could otherwise
 * ask for tens of GB. The largest real plans fit: all-to-all over 4096
 * ranks with one chunk per pair is 2^25 slots. */
#define WEFT_PLAN_MAX_RANKS (1u << 20)
#define WEFT_PLAN_MAX_SLOTS (1u << 30)                /* per rank and buffer */
#define WEFT_PLAN_MAX_TOTAL_SLOTS (UINT64_C(1) << 26) /* 67,108,864, all ranks and buffers */
#define WEFT_PLAN_MAX_OPS (UINT32_MAX - 1)
#define WEFT_PLAN_NO_OP UINT32_MAX

/* One op. Ids of deps are separate (weft_plan_op_deps), and so is a nop's
 * compute (weft_plan_op_compute). For a nop, only src_rank, dst_rank
 * (equal) and channel matter; the other fields are 0. */
typedef struct weft_op {
    weft_op_kind kind;
    weft_rank src_rank, dst_rank;
    weft_buf src_buf, dst_buf;
    uint32_t src_index, dst_index; /* first slot of each range */
    uint32_t count;                /* slots moved (>= 1; 0 for a nop) */
    uint32_t channel;
} weft_op;

typedef struct weft_plan weft_plan;

/* ---- Building ---------------------------------------------------------- */

/* A new plan with no ops. WEFT_EINVAL when the header is not valid (nranks
 * 0 or above WEFT_PLAN_MAX_RANKS, chunks 0, root out of range or nonzero
 * for a collective without root); WEFT_ELIMIT when a buffer would exceed
 * WEFT_PLAN_MAX_SLOTS slots or all of them WEFT_PLAN_MAX_TOTAL_SLOTS
 * (weft_plan_info_total_slots), checked before anything is allocated. */
WEFT_API weft_err weft_plan_new(const weft_plan_info *info, weft_plan **out);
/* The slots a plan with this header holds over all ranks: nranks x (in +
 * out + scratch), per the table above. Any header may be asked, before
 * weft_plan_new checks it: a product that does not fit 64 bits gives
 * UINT64_MAX rather than wrapping. */
WEFT_API uint64_t weft_plan_info_total_slots(const weft_plan_info *info);
/* Frees a plan; NULL is allowed. */
WEFT_API void weft_plan_free(weft_plan *p);

/* Appends an op with its deps (ndeps ids; deps may be NULL when ndeps is
 * 0) and writes its id to *id (id may be NULL). The op's fields are
 * checked only for shape: a known kind and buffer, count >= 1 for copy and
 * reduce, and for a nop src_rank == dst_rank and count 0 (WEFT_EINVAL).
 * Ranks, slot ranges and dep ids are checked by the verifier, so that
 * broken plans can be built and reported. WEFT_ELIMIT when the plan
 * already has its maximum of ops (weft_plan_limit_ops). Amortized
 * O(1 + ndeps). */
/* Caps the plan at max_ops ops (at most WEFT_PLAN_MAX_OPS, the default):
 * a builder that would exceed it gets WEFT_ELIMIT from weft_plan_add_op,
 * having spent time and memory for max_ops ops only. A cap below the ops
 * already added refuses every further op; 0 restores the default. */
WEFT_API void weft_plan_limit_ops(weft_plan *p, uint32_t max_ops);
/* The cap weft_plan_limit_ops set (WEFT_PLAN_MAX_OPS by default). */
WEFT_API uint32_t weft_plan_max_ops(const weft_plan *p);

WEFT_API weft_err weft_plan_add_op(weft_plan *p, const weft_op *op, const uint32_t *deps,
                                   uint32_t ndeps, uint32_t *id);

/* Appends a route path to op `id`: nnodes >= 2 node names, from the source
 * rank's node to the destination rank's node, carrying `share` of the op's
 * bytes. Names must be non-empty, at most WEFT_TOPO_NAME_MAX bytes, without
 * blanks or ',' (the text format's separators): WEFT_EINVAL otherwise.
 * Shares are checked by the verifier (each > 0, summing to 1). Names are
 * interned, so a route costs a few integers per node. */
WEFT_API weft_err weft_plan_add_path(weft_plan *p, uint32_t id, weft_rat share,
                                     const char *const *nodes, uint32_t nnodes);

/* Appends a compute op: a nop on `rank` carrying compute c (not NONE), with
 * its deps, as weft_plan_add_op. Its bytes are its op size
 * (weft_plan_set_op_sizes). WEFT_EINVAL for c NONE or out of range. */
WEFT_API weft_err weft_plan_add_compute(weft_plan *p, weft_rank rank, weft_compute c,
                                        const uint32_t *deps, uint32_t ndeps, uint32_t *id);
/* Sets op id's compute (NONE makes a compute op a plain nop). WEFT_EINVAL
 * for an id out of range, an unknown c, or compute on a copy or reduce;
 * WEFT_ENOMEM. weft_plan_set_op of a copy or reduce clears it. */
WEFT_API weft_err weft_plan_set_op_compute(weft_plan *p, uint32_t id, weft_compute c);
/* Op id's compute: WEFT_COMPUTE_NONE for every op but a compute op. */
WEFT_API weft_compute weft_plan_op_compute(const weft_plan *p, uint32_t id);

/* ---- Editing (for tools and mutation tests) ---------------------------- */

/* Replaces op id's fields (same shape checks as add_op); deps and route
 * are kept. */
WEFT_API weft_err weft_plan_set_op(weft_plan *p, uint32_t id, const weft_op *op);
/* Replaces op id's deps. */
WEFT_API weft_err weft_plan_set_deps(weft_plan *p, uint32_t id, const uint32_t *deps,
                                     uint32_t ndeps);
/* Removes the k-th dep of op id (k < ndeps, else WEFT_EINVAL). */
WEFT_API weft_err weft_plan_remove_dep(weft_plan *p, uint32_t id, uint32_t k);
/* Removes op id's route. */
WEFT_API void weft_plan_clear_route(weft_plan *p, uint32_t id);
/* Removes op id: later ops move down by one and every dep is renumbered;
 * deps on the removed op are dropped. O(ops + deps). WEFT_EINVAL when id
 * does not exist. */
WEFT_API weft_err weft_plan_remove_op(weft_plan *p, uint32_t id);
/* A deep copy of p (compacted: storage freed by edits is not copied). */
WEFT_API weft_err weft_plan_copy(const weft_plan *p, weft_plan **out);
/* True when a and b have the same header and the same ops in the same
 * order with the same fields, deps (in order) and routes (paths in order,
 * same shares, same node names). */
WEFT_API bool weft_plan_equal(const weft_plan *a, const weft_plan *b);

/* ---- Reading ----------------------------------------------------------- */

WEFT_API const weft_plan_info *weft_plan_get_info(const weft_plan *p);
WEFT_API uint32_t weft_plan_num_ops(const weft_plan *p);
/* Slots per rank of a buffer (the table above; scratch is info.scratch). */
WEFT_API uint32_t weft_plan_buf_slots(const weft_plan *p, weft_buf buf);
/* How many equal chunks the collective's size S is cut into (the last
 * column of the table above): one chunk is S / this many bytes. */
WEFT_API uint64_t weft_plan_size_chunks(const weft_plan *p);
/* Number of distinct chunk ids (N*N*C for alltoall, else size_chunks). */
WEFT_API uint64_t weft_plan_num_chunk_ids(const weft_plan *p);

/* Op id's fields; id must be < num_ops. */
WEFT_API weft_op weft_plan_op(const weft_plan *p, uint32_t id);
/* Op id's deps: *ndeps ids. The array (never NULL) belongs to p and is
 * valid until the next change to p. */
WEFT_API const uint32_t *weft_plan_op_deps(const weft_plan *p, uint32_t id, uint32_t *ndeps);
/* Number of route paths of op id (0: no route). */
WEFT_API uint32_t weft_plan_op_num_paths(const weft_plan *p, uint32_t id);
/* Path k of op id: its share, and its nodes (names belong to p). */
WEFT_API weft_rat weft_plan_path_share(const weft_plan *p, uint32_t id, uint32_t k);
WEFT_API uint32_t weft_plan_path_len(const weft_plan *p, uint32_t id, uint32_t k);
WEFT_API const char *weft_plan_path_node(const weft_plan *p, uint32_t id, uint32_t k, uint32_t i);

/* ---- Circuits: optical circuit switch configurations -------------------
 *
 * A plan for a fabric with optical circuit switches (ocs nodes, weft/topo.h)
 * may carry a schedule of circuit configurations, numbered epochs 0, 1, 2,
 * ... in the order they are set up. A circuit (epoch, ocs, from, to) joins
 * port `from` of the OCS (the node its link comes from) to port `to`: the
 * light that enters at `from` leaves at `to`, as a MEMS switch steers each
 * input fibre to one output fibre. A duplex circuit is two circuits. In one
 * epoch a port sends on at most one circuit and receives on at most one.
 * A route path may name the epoch it runs in (weft_plan_set_path_epoch):
 * every hop `from`, ocs, `to` of the path must then be a circuit of that
 * epoch. In a plan with circuits every path that crosses an OCS names its
 * epoch; a plan without circuits treats every OCS as a switch (what weft
 * bound assumes). The verifier checks all of this (with --topo also that
 * the OCS and its ports exist); the simulator starts epoch k after the
 * transfers of epoch k-1 on circuits that epoch k drops have finished, plus
 * the OCS's reconfig= delay (docs/ocs.md). */

#define WEFT_PLAN_NO_EPOCH UINT32_MAX
/* The most epochs a plan may have (ids 0 .. WEFT_PLAN_MAX_EPOCHS-1). */
#define WEFT_PLAN_MAX_EPOCHS (1u << 24)

typedef struct weft_plan_circuit {
    uint32_t epoch;
    const char *ocs, *from, *to; /* node names; belong to the plan */
} weft_plan_circuit;

/* Appends a circuit. WEFT_EINVAL for an epoch >= WEFT_PLAN_MAX_EPOCHS or a
 * name that weft_plan_add_path would refuse; WEFT_ENOMEM. Duplicates and
 * conflicts are the verifier's to report. */
WEFT_API weft_err weft_plan_add_circuit(weft_plan *p, uint32_t epoch, const char *ocs,
                                        const char *from, const char *to);
WEFT_API uint32_t weft_plan_num_circuits(const weft_plan *p);
/* Circuit i (< weft_plan_num_circuits), in order of addition. */
WEFT_API weft_plan_circuit weft_plan_get_circuit(const weft_plan *p, uint32_t i);
/* 1 + the largest epoch of a circuit; 0 for a plan without circuits. */
WEFT_API uint32_t weft_plan_num_epochs(const weft_plan *p);
/* Sets the epoch of path k of op id (WEFT_PLAN_NO_EPOCH clears it).
 * WEFT_EINVAL when the path does not exist or epoch is out of range. */
WEFT_API weft_err weft_plan_set_path_epoch(weft_plan *p, uint32_t id, uint32_t k, uint32_t epoch);
/* The epoch of path k of op id, or WEFT_PLAN_NO_EPOCH. */
WEFT_API uint32_t weft_plan_path_epoch(const weft_plan *p, uint32_t id, uint32_t k);

/* ---- Alltoallv: per-chunk sizes from a traffic matrix ------------------ */

/* Makes p an alltoallv plan of matrix t (copied; a later call replaces it).
 * WEFT_EINVAL unless p is an alltoall plan with t->ranks == its ranks
 * ("the traffic matrix has 4 ranks, the plan 8"); t must pass
 * weft_traffic_check; WEFT_ENOMEM. */
WEFT_API weft_err weft_plan_set_traffic(weft_plan *p, const weft_traffic *t, weft_diag *d);
/* The matrix of an alltoallv plan, or NULL for a plan of equal chunks. */
WEFT_API const weft_traffic *weft_plan_traffic(const weft_plan *p);
/* The bytes of chunk id `chunk` (< weft_plan_num_chunk_ids) of an alltoallv
 * plan, by the rule above; 0 for a plan without a matrix. */
WEFT_API uint64_t weft_plan_chunk_bytes(const weft_plan *p, uint64_t chunk);
/* An alltoallv plan's own size: the matrix's total / N bytes (not always
 * whole); 0 for a plan without a matrix. */
WEFT_API double weft_plan_traffic_size(const weft_plan *p);
/* The exact bytes every op of a sized plan (an alltoallv plan, or op sizes:
 * then the stated bytes) moves at its own size:
 * bytes[id] for id < num_ops (0 for a plain nop). The plan is run symbolically in
 * one topological order (for a verified plan every order gives the same
 * values); a slot that holds nothing yet moves 0 bytes. WEFT_EINVAL for a
 * plan of equal chunks, or op sizes set for another op count; WEFT_EVERIFY (as
 * weft_plan_check_structure and weft_plan_topo_order report) for a plan whose structure or deps are
 * broken; WEFT_ENOMEM. O(ops + deps + slots moved + slots). */
WEFT_API weft_err weft_plan_op_bytes(const weft_plan *p, uint64_t *bytes, weft_diag *d);
/* What each op moves in a collective of size_bytes, for any plan:
 * bytes[id] = count * size / weft_plan_size_chunks for equal chunks, and
 * weft_plan_op_bytes scaled by size / weft_plan_own_size for a sized
 * plan (so exactly its bytes at its own size, and at any size
 * within half a byte of it (inclusive): a whole number of bytes, as weft_sim_plan
 * takes, stands for a size that is not whole). Errors as
 * weft_plan_op_bytes (none for a plan without a matrix). */
WEFT_API weft_err weft_plan_op_bytes_at(const weft_plan *p, double size_bytes, double *bytes,
                                        weft_diag *d);

/* ---- Sized plans: the bytes of every op, stated by its builder ---------
 *
 * A compressed or sparse collective (weft/compress.h; docs/compression.md)
 * has the dataflow of its dense collective, which the verifier proves as
 * usual, but its ops move fewer bytes than their slots: a quantized chunk,
 * the (index, value) pairs of a partition, a union that grows as it is
 * reduced. Such a plan carries the exact bytes of every op at the dense
 * collective size `size` (what --size means for the plain collective);
 * at another size they scale in proportion, as an alltoallv plan's do. A
 * plan has a traffic matrix or op sizes, never both. */

/* Sets the bytes of every op of p (bytes[id] for id < weft_plan_num_ops,
 * 0 for a plain nop; for a compute op the bytes its kernel reads) at
 * collective size `size` > 0, copied. Ops added or removed afterwards make
 * weft_plan_op_bytes fail (WEFT_EINVAL) until this is called again.
 * WEFT_EINVAL for size 0, a plain nop with bytes or a plan with a traffic
 * matrix; WEFT_ENOMEM. Compute ops need op sizes: the verifier refuses
 * one in a plan without them. */
WEFT_API weft_err weft_plan_set_op_sizes(weft_plan *p, uint64_t size, const uint64_t *bytes,
                                         weft_diag *d);
/* Marks p as forwarded per step of step_bytes, store and forward: a rank
 * sends a step on only once all of it has arrived, as NCCL's tree does
 * with its Simple protocol (NCCL src/device/prims_simple.h waits for a
 * whole step before it posts it on; the step is NCCL_BUFFSIZE /
 * NCCL_STEPS). The gpu model of weft_sim_plan then adds to every route
 * the time to move one step (the op's bytes when fewer) at the rate of
 * its slowest link, at most chan_gbps GB/s when chan_gbps > 0 (one
 * channel's copy rate), when it runs p with Simple (weft/sim.h,
 * step_bytes, step_gbps); with every protocol the gpu model also moves
 * NCCL's tree factor 0.92 of the protocol's bandwidth (tuning.cc's
 * "busBw*.92" for the tree; src/sim/model.c). Other models ignore it. Only the
 * builders of NCCL's tree plans set it (weft_synth_nccl_algo, `--algo
 * nccl`); step_bytes 0 (the default) clears it. Copied by weft_plan_copy,
 * compared by weft_plan_equal, and carried by the text form (a `forward`
 * line) and the JSON form (docs/plan-format.md); MSCCL XML has no place
 * for it. A chan_gbps that is not finite is no cap (0); one below
 * WEFT_PLAN_STEP_GBPS_MIN is kept, and weft_sim_plan refuses it. */
WEFT_API void weft_plan_set_step_forward(weft_plan *p, uint64_t step_bytes, double chan_gbps);
/* The least step rate cap, GB/s, that the text reader (`forward`) and the
 * simulator take: a byte a second. Below it one step of up to 2^64 bytes
 * would take longer than the simulator's clock counts (the time overflows
 * to infinity). */
#define WEFT_PLAN_STEP_GBPS_MIN 1e-9
/* The step weft_plan_set_step_forward set, 0 for none, and (chan_gbps
 * not NULL) its rate cap, 0 for none. */
WEFT_API uint64_t weft_plan_step_forward(const weft_plan *p, double *chan_gbps);
/* Marks p as moved whole message by message: each op's bytes travel as
 * one message, and what depends on the op starts once all of it is in,
 * as weft runs its compressed and sparse all-reduces (src/run/coll_sparse.c,
 * coll_quant.c: one message per peer and phase, outside the plan
 * executor, which cuts every copy in slices). The runtime model of
 * weft_sim_plan then moves every copy of p in one slice (unless
 * weft_sim_opts.slice_bytes says otherwise), as weft_sim_opts.whole asks
 * of any plan; other models ignore it. The builders of the compressed and
 * sparse plans set it (sparse-ag, quant-2shot, sparse-hash, sparse-range,
 * hier-quant; docs/compression.md); false (the default) clears it. Copied
 * by weft_plan_copy, compared by weft_plan_equal, and carried by the text
 * form (a `whole` line) and the JSON form ("whole": true;
 * docs/plan-format.md); MSCCL XML has no place for it. */
WEFT_API void weft_plan_set_whole_messages(weft_plan *p, bool whole);
/* True when weft_plan_set_whole_messages marked p. */
WEFT_API bool weft_plan_whole_messages(const weft_plan *p);
/* True when p carries op sizes. */
WEFT_API bool weft_plan_has_op_sizes(const weft_plan *p);
/* True when p's ops move bytes of their own (a traffic matrix or op sizes)
 * rather than count x size / weft_plan_size_chunks. */
WEFT_API bool weft_plan_sized(const weft_plan *p);
/* The size at which a sized plan's bytes are exact: weft_plan_traffic_size
 * for an alltoallv plan, the op sizes' size, 0 for a plan of equal chunks. */
WEFT_API double weft_plan_own_size(const weft_plan *p);

/* ---- Text format (.plan) and JSON -------------------------------------- */

/* Parses .plan text (docs/plan-format.md). `name` is used in messages
 * ("ring.plan:7:12: reason"). On any error nothing is returned and d says
 * file:line:col and why: WEFT_EPARSE for malformed text, WEFT_ENOMEM. The
 * parser checks syntax and structure (ids in order, deps naming existing
 * ops, a valid header); whether the plan is correct is the verifier's job. */
WEFT_API weft_err weft_plan_parse(const char *text, size_t len, const char *name, weft_plan **out,
                                  weft_diag *d);
/* Reads and parses a file (WEFT_ENOENT / WEFT_EIO when it cannot be read;
 * WEFT_ELIMIT beyond WEFT_PLAN_MAX_FILE_BYTES, also for a pipe or
 * /dev/zero, which are read up to that point and no further). The cap
 * holds some 5 million ops, more than twice what `weft sim` and `weft plan`
 * build by default (--max-ops 2097152). */
#define WEFT_PLAN_MAX_FILE_BYTES ((size_t)256 << 20)
WEFT_API weft_err weft_plan_load_file(const char *path, weft_plan **out, weft_diag *d);
/* Writes p as canonical .plan text: parsing it gives a plan equal to p
 * (weft_plan_equal). WEFT_EIO when writing fails. */
WEFT_API weft_err weft_plan_write(const weft_plan *p, FILE *f);
/* Writes p as one JSON object (docs/plan-format.md gives the schema). */
WEFT_API weft_err weft_plan_write_json(const weft_plan *p, FILE *f);

/* ---- Verification ------------------------------------------------------ */

/* Proves p correct or reports the first error in d (WEFT_EVERIFY):
 * structure (ranks, slot ranges, deps, cycles), the collective's
 * postcondition by symbolic execution (every contribution reduced exactly
 * once, nothing missing or extra, every output slot filled), and hazards:
 * every pair of accesses to one slot where at least one writes must be
 * ordered by deps, so that the result is the same in every execution order
 * the deps allow. Routes: shares must be positive and sum to 1; when topo is
 * not NULL, its ranks must match the plan's and every path must follow
 * links of topo from the source rank's node to the destination rank's
 * node. Messages name the op, its ranks and slots, e.g.
 * "op 17 (rank 3 -> rank 5, chunk 12): rank 5 reads chunk 12 before op 9
 * has delivered it". WEFT_ENOMEM and WEFT_ELIMIT are possible too.
 * Time O((ops + deps + slots accessed) * K) worst case, K the number of
 * dependency chains; see docs/plan-format.md. */
WEFT_API weft_err weft_plan_verify(const weft_plan *p, const weft_topo *topo, weft_diag *d);

/* The verifier's structural checks alone (no postcondition, hazards or
 * routes): ranks exist, slot ranges lie inside their buffers, a local op's
 * ranges do not overlap, deps name existing ops. WEFT_EVERIFY with the
 * message weft_plan_verify gives; WEFT_ELIMIT when a rank's slots do not
 * fit in uint32. */
WEFT_API weft_err weft_plan_check_structure(const weft_plan *p, weft_diag *d);

/* Where slot `index` of buf on rank r is stored, as a number within rank
 * r: in, out and scratch one after another, except that an in-place plan's
 * in and out are one storage (as the table above aliases them). Two (buf,
 * index) pairs of a rank give the same number exactly when they are the
 * same storage. p must pass weft_plan_check_structure and index must lie
 * inside buf. */
WEFT_API uint32_t weft_plan_storage_slot(const weft_plan *p, weft_rank r, weft_buf buf,
                                         uint32_t index);

/* One topological order of p's ops (each op after all its deps) into
 * order[0 .. weft_plan_num_ops(p)). WEFT_EVERIFY when a dep names no op or
 * the deps form a cycle, with d saying which. O(ops + deps). */
WEFT_API weft_err weft_plan_topo_order(const weft_plan *p, uint32_t *order, weft_diag *d);

/* ---- Real-data execution ----------------------------------------------- */

/* Runs a plan on real int64 buffers inside this process, to cross-check the
 * verifier with data. Element e of chunk c contributed by rank r has a
 * pseudo-random value (weft_exec_input_value) so that every contribution is
 * distinct; reduce adds (wrapping modulo 2^64). Ops run on `threads` worker
 * threads in a random order among those the deps allow, chosen by `seed`:
 * with threads == 1 the order is a function of the seed alone, so a racy
 * plan gives seed-dependent results; with more threads ops also overlap in
 * time. */
typedef struct weft_exec_opts {
    uint32_t elems_per_chunk; /* >= 1 */
    uint64_t seed;
    uint32_t threads; /* >= 1 */
} weft_exec_opts;

/* elems_per_chunk 4, seed 1, threads 1. */
WEFT_API void weft_exec_opts_init(weft_exec_opts *o);

/* The final out buffers of every rank (or the expected ones). */
typedef struct weft_exec_result weft_exec_result;

/* The value rank r contributes to element e of chunk id c. */
WEFT_API int64_t weft_exec_input_value(uint32_t rank, uint64_t chunk, uint32_t elem);

/* Executes p. p should be verified first; an unverified plan still never
 * crashes or hangs: ranks or slots out of range and cycles give
 * WEFT_EVERIFY (named in d as the verifier names them), and reading an empty
 * slot reads a poison value. Running an unverified plan with threads > 1 may
 * race on the buffers; use threads == 1 for such plans. */
WEFT_API weft_err weft_plan_exec(const weft_plan *p, const weft_exec_opts *o,
                                 weft_exec_result **out, weft_diag *d);
/* The expected result of p's collective (only p's header is used). */
WEFT_API weft_err weft_exec_reference(const weft_plan *p, uint32_t elems_per_chunk,
                                      weft_exec_result **out);
/* True when every slot named by the postcondition is byte-for-byte equal in
 * got and want; otherwise false and d (WEFT_EVERIFY) names the first
 * difference: "rank 2 out[5] element 3: got 17, expected 12". */
WEFT_API bool weft_exec_compare(const weft_exec_result *got, const weft_exec_result *want,
                                weft_diag *d);
/* Executes p with o (NULL: defaults) and compares with the reference (the
 * three calls above in one): WEFT_OK when every final slot is equal, otherwise the
 * executor's error or WEFT_EVERIFY with the first difference in d. */
WEFT_API weft_err weft_plan_exec_check(const weft_plan *p, const weft_exec_opts *o, weft_diag *d);
/* The out buffer of a rank: *nelems int64 values (out slots * elems per
 * chunk). Belongs to r. */
WEFT_API const int64_t *weft_exec_out(const weft_exec_result *r, weft_rank rank, size_t *nelems);
WEFT_API void weft_exec_result_free(weft_exec_result *r);

/* ---- Cost on a topology ------------------------------------------------
 *
 * What a plan asks of a fabric, without contention modelling (that is the
 * simulator's job). Every op that moves data between two ranks carries
 * count / weft_plan_size_chunks(p) bytes per byte of the collective's size
 * S (an alltoallv plan: its weft_plan_op_bytes over weft_plan_traffic_size,
 * exact), along its route, or, when it has none, along the shortest paths split
 * evenly per hop (src/topo/paths.h). A link's load is the sum over ops of
 * those bytes times the share of the op's traffic on the link: bytes per
 * byte of S, exact. The plan cannot run faster than its busiest link
 * allows, so its throughput limit is
 *
 *     algbw = 1 / max over links (load / bandwidth)      GB/s, exact.
 *
 * Local ops and nops use no link. The plan's ranks must be the topology's
 * ranks (same count). */

typedef struct weft_plan_cost {
    weft_rat algbw;        /* GB/s; 0 when no op crosses a link */
    bool has_busiest;      /* false when no op crosses a link */
    weft_link_id busiest;  /* the link that sets algbw (lowest id on ties) */
    weft_rat busiest_load; /* its load, bytes per byte of S */
    uint32_t steps;        /* ops on the longest dependency chain, counting
                              only ops between two ranks */
    uint64_t transfers;    /* ops between two ranks */
} weft_plan_cost;

/* The exact load of every link: load[l] for l < weft_topo_num_links(t),
 * bytes per byte of S. Errors (WEFT_ETOPO with d): rank counts differ, a
 * route names an unknown node or a missing link, ranks cannot reach each
 * other; WEFT_EOVERFLOW when a sum does not fit a weft_rat. */
WEFT_API weft_err weft_plan_link_loads(const weft_plan *p, const weft_topo *t, weft_rat *load,
                                       weft_diag *d);
/* The throughput limit, the busiest link and the step count. */
WEFT_API weft_err weft_plan_cost_get(const weft_plan *p, const weft_topo *t, weft_plan_cost *out,
                                     weft_diag *d);
/* Alpha-beta estimate of the plan's time for a collective of size_bytes:
 * every op takes its path latency plus its bytes over its path's
 * bottleneck bandwidth (the slowest of its paths when it has several), no
 * contention and no pipelining; an op starts when its deps finished. The
 * plan's deps must be acyclic (WEFT_EVERIFY otherwise). Seconds. */
WEFT_API weft_err weft_plan_alpha_beta(const weft_plan *p, const weft_topo *t, double size_bytes,
                                       double *seconds, weft_diag *d);

/* A time estimate that accounts for link sharing, still without
 * simulating: what the runtime ranks plans by when it has no tuning table.
 * The alpha-beta model above lets concurrent ops each have their whole
 * path, so it counts two rings that cross the same links as twice as fast
 * as one; this one does not. Two terms:
 *
 *   steps_s  ops are grouped in steps by their depth in the dependency
 *            graph (ops between two ranks only), and the ops of a step
 *            share the links, ending about together: an op's stage is
 *            alpha + its route latency + max(its bytes alone on its route,
 *            the step's bytes on its busiest link) / bandwidth / P, with P
 *            slices (each op cut in P pieces that follow each other, as
 *            weft_sim_plan and the plan executor pipeline them). steps_s is
 *            the pipelined critical path: the max over dependency paths of
 *            (sum of its stages + (P - 1) x its longest stage).
 *   link_s   the busiest link's bytes over the whole plan / its bandwidth
 *            (no schedule beats it; it sees ops of different steps
 *            overlapping, which the steps term does not), to which the
 *            pipelined path of alpha + latency alone (latency_s) is added.
 *
 * seconds = max(steps_s, link_s + latency_s); for a ring pipelined in P
 * slices this is the simulator's time exactly. Links are used as
 * weft_sim_plan uses them: an explicit route's paths at their shares, else
 * ECMP shortest paths split per hop (a flow alone is limited by max over
 * its links of share / bandwidth). Local ops and nops cost alpha only. It
 * approximates the simulator (docs/run.md, "Which schedule runs", gives
 * how often it picks the simulator's fastest plan); it is not a bound.
 * Time O(ops + deps + route entries + links), memory O(ops + links). */
typedef struct weft_plan_shared_opts {
    uint32_t slices; /* >= 1; default 1 */
    double alpha_s;  /* per-slice start overhead, seconds; default 0 */
} weft_plan_shared_opts;

/* slices 1, alpha 0. */
WEFT_API void weft_plan_shared_opts_init(weft_plan_shared_opts *o);
/* The settings of every estimate weft prints or ranks by (the runtime
 * without a tuning table, weft plan's t(S) columns): the slices weft's
 * executor cuts p's chunks into at size_bytes (weft_exec_slices,
 * weft/exec_model.h), alpha 0; the fabric's own link latencies (the
 * presets' physical ones) are the latency. */
WEFT_API void weft_plan_shared_opts_exec(weft_plan_shared_opts *o, const weft_plan *p,
                                         double size_bytes);

typedef struct weft_plan_shared {
    double seconds;       /* the estimate: max(steps_s, link_s + latency_s) */
    double steps_s;       /* the pipelined steps term */
    double link_s;        /* the busiest link's bytes / its bandwidth */
    double latency_s;     /* the pipelined path of alpha + latency alone */
    uint32_t steps;       /* steps (the longest dependency chain of ops
                             between two ranks) */
    bool has_busiest;     /* false when no bytes cross a link (size 0, or no
                             op between two ranks) */
    weft_link_id busiest; /* the link of link_s (lowest id on ties) */
} weft_plan_shared;

/* The estimate for a collective of size_bytes (o NULL: defaults). Errors:
 * WEFT_EINVAL for slices 0 or a negative or NaN alpha or size; those of
 * weft_plan_alpha_beta (WEFT_ETOPO for ranks or routes that do not fit t,
 * WEFT_EVERIFY for cyclic deps); WEFT_ENOMEM. */
WEFT_API weft_err weft_plan_shared_time(const weft_plan *p, const weft_topo *t, double size_bytes,
                                        const weft_plan_shared_opts *o, weft_plan_shared *out,
                                        weft_diag *d);
/* The ranking order of two estimates: true when a goes before b, i.e. a is
 * faster by more than a relative 1e-9, or as fast within that and has
 * fewer steps. Fewer steps break ties because on fabrics whose links
 * differ in speed the fast ranks of a long chain run ahead and crowd the
 * slow link, which the estimate does not see (on tests/netns/fabric.topo
 * the simulator has the 2-step allgathers 18% ahead of the 3-step rings
 * that the estimate ties with them). */
WEFT_API bool weft_plan_shared_before(const weft_plan_shared *a, const weft_plan_shared *b);

/* ---- MSCCL (MSCCL XML import and export; docs/msccl.md) ---------------- */

/* An MSCCL XML program (<algo> <gpu> <tb> <step>, as msccl-tools writes and
 * the MSCCL / RCCL executors read) maps to a plan as follows. Buffer i is
 * in, o is out, s is scratch; gpu g is rank g. Every message (the k-th send
 * and the k-th receive on one (sender, receiver, channel) connection) first
 * lands in fresh scratch slots of the sender (after the program's own
 * s_chunks), written by the sending step, so that a sender may reuse its
 * source as soon as its step is done, as on the real runtime; the receiving
 * step is one copy or reduce op from those slots to the receiver. Steps of a
 * threadblock run in order, and depid/deps become deps. The plan's scratch
 * is therefore larger than the program's; the verifier then checks the real
 * collective. */

/* The runtime whose parser an exported file must satisfy. */
typedef enum weft_msccl_profile {
    WEFT_MSCCL_EXECUTOR = 0, /* msccl-executor / RCCL: 64 steps per threadblock,
                                coll "reducescatter" */
    WEFT_MSCCL_MSCCL,        /* Microsoft MSCCL: 256 steps, "reduce_scatter" */
    WEFT__MSCCL_PROFILE_COUNT
} weft_msccl_profile;

/* "executor", "msccl". */
WEFT_API const char *weft_msccl_profile_name(weft_msccl_profile profile);
/* Parses a profile name; false when unknown. */
WEFT_API bool weft_msccl_profile_parse(const char *text, weft_msccl_profile *out);

/* Limits of the runtimes (MSCCL_MAX_NUM_STEPS and friends). */
#define WEFT_MSCCL_MAX_CHANNELS 32
#define WEFT_MSCCL_MAX_TBS_PER_CHANNEL 32
/* Steps per threadblock: 64 (executor) or 256 (msccl). */
WEFT_API uint32_t weft_msccl_max_steps(weft_msccl_profile profile);

/* Imports an MSCCL XML program (len bytes; name is used in messages). On
 * error nothing is returned and d says "NAME:LINE:COL: reason": WEFT_EPARSE
 * for malformed XML, a missing or bad attribute, an unknown step type, a
 * receive without a matching send (or the reverse), a dependency on a step
 * that does not exist, a slot range outside its buffer; WEFT_EUNSUPPORTED
 * for a collective weft has no plan for; WEFT_ENOMEM, WEFT_ELIMIT. The XML
 * is read as a stream into flat arrays: time and memory are linear in the
 * number of steps. broadcast and reduce read their root from a weft
 * extension attribute root="R" on <algo> (default 0). */
WEFT_API weft_err weft_plan_msccl_parse(const char *text, size_t len, const char *name,
                                        weft_plan **out, weft_diag *d);
/* Reads and imports a file (WEFT_ENOENT / WEFT_EIO when it cannot be read;
 * WEFT_ELIMIT beyond WEFT_PLAN_MAX_FILE_BYTES, counted as it streams). */
WEFT_API weft_err weft_plan_msccl_load_file(const char *path, weft_plan **out, weft_diag *d);

typedef struct weft_msccl_opts {
    weft_msccl_profile profile;
    const char *name;   /* the algo name attribute; NULL: "weft_COLL" */
    const char *proto;  /* "Simple" (default), "LL" or "LL128" */
    uint64_t min_bytes; /* minBytes, maxBytes: the sizes the runtime may */
    uint64_t max_bytes; /* pick this program for; 0 and 0 by default */
} weft_msccl_opts;

/* Executor profile, NULL name, "Simple", 0, 0. */
WEFT_API void weft_msccl_opts_init(weft_msccl_opts *o);

/* The plan p with its routes made explicit as rank-to-rank hops, for a
 * runtime that routes by peer only (MSCCL: a step names the GPU it sends
 * to, not the links). Every op with several paths, or a path through
 * another rank (a relay, as the optimal all-to-all's flow uses), becomes
 * one piece per path, each moving its share of the op's slots, and each
 * piece one op per stretch of its path between ranks: copies through
 * fresh scratch slots of the relay ranks (appended after the scratch),
 * the last hop the op's own kind into its destination. Each hop keeps
 * its stretch as its route, so the links carry what they carried and
 * the cost (weft_plan_cost_get) is the same. MSCCL's chunks are equal, so
 * when a share is not a whole number of slots every chunk is cut into
 * *refine equal pieces (the least common multiple of the shares'
 * denominators, at most 1,024): chunks, every slot index and count, and
 * the scratch are multiplied by it, which leaves the collective the same
 * (slot i*K+q is piece q of slot i). The first hop of a piece waits for
 * the last hops of the op's deps, each later hop for the one before it;
 * ops without such a route are copied with their indices refined. A
 * traffic matrix is kept. *out is NULL (and *refine 1) when no op needs
 * relaying: p itself is the plan to export. WEFT_ETOPO for a path node
 * the fabric lacks, WEFT_EINVAL for shares that do not sum to 1 or ranks
 * that are not the fabric's, WEFT_ELIMIT past the refinement or slot
 * limits, WEFT_ENOMEM. */
WEFT_API weft_err weft_plan_relay_routes(const weft_plan *p, const weft_topo *t, weft_plan **out,
                                         uint32_t *refine, weft_diag *d);

/* What weft_plan_round_shares did. */
typedef struct weft_share_rounding {
    uint32_t k;             /* every share a multiple of 1/k */
    uint32_t ops;           /* ops whose shares changed */
    weft_rat limit;         /* the plan's exact throughput limit (algbw, GB/s) */
    weft_rat rounded_limit; /* the rounded plan's */
    weft_rat loss;          /* 1 - rounded_limit / limit */
} weft_share_rounding;

/* The largest K weft_plan_round_shares tries (weft_plan_relay_routes'
 * refinement limit). */
#define WEFT_ROUND_MAX_K 1024u

/* For a runtime of equal chunks when exact shares would cut every chunk
 * into more than WEFT_ROUND_MAX_K pieces: p with the path shares of every
 * op split over several paths rounded to multiples of 1/K, for the least
 * K <= WEFT_ROUND_MAX_K (a divisor of `divides` unless 0: the bytes of a
 * piece that must stay whole) whose exact throughput limit on t is at
 * least 99.9 % of p's. Per op, largest-remainder rounding: floor(s K)
 * units of 1/K each, the missing units one each to the largest remainders
 * (lower path first on ties), so the shares sum to exactly 1; a path
 * rounded to 0 is dropped. Deps, slots and ops of one path are kept. *r
 * says K, the ops changed, both limits and the loss. WEFT_ELIMIT when no
 * K reaches 99.9 % (the message names the best K and its loss),
 * WEFT_EINVAL for a plan without split ops or shares that do not sum to
 * 1, cost errors as weft_plan_cost_get, WEFT_ENOMEM. */
WEFT_API weft_err weft_plan_round_shares(const weft_plan *p, const weft_topo *t, uint64_t divides,
                                         weft_plan **out, weft_share_rounding *r, weft_diag *d);

/* The padded layout of a skewed alltoallv plan (docs/msccl.md, "Skewed
 * matrices: the padded layout"). */
typedef struct weft_msccl_padding {
    uint64_t piece_bytes;      /* g: the gcd of the plan's non-zero chunks */
    uint64_t block_bytes;      /* B: the largest block, every peer's region */
    uint64_t pieces_per_block; /* B / g: the padded plan's chunks per block */
    uint64_t data_bytes;       /* the matrix's total */
    uint64_t padded_bytes;     /* N x N x B: every rank's send buffer together */
    uint32_t refine;           /* K: pieces cut K-fold for the routes (1: not) */
    bool relayed;              /* routes were made rank-to-rank hops */
} weft_msccl_padding;

/* The alltoallv plan p (alltoall with a traffic matrix, out of place) in
 * MSCCL's equal chunks: every peer's block sits in a region of B bytes cut
 * into pieces of g bytes (block s -> d in the first M(s, d) / g pieces of
 * region d of rank s's in buffer, and of region s of rank d's out buffer;
 * padding after). *out is an alltoall plan of B / g chunks per block with
 * the matrix M / g (in pieces, so its 0-byte chunks are the padding) that
 * moves only the pieces that carry data: every op becomes one op per run
 * of pieces contiguous on both sides, at most 71 pieces each (MSCCL's
 * cnt < 72); an op that moves no bytes is left out, its dependents waiting
 * for its deps. Routes are kept; scratch slot j gets as many pieces as the
 * largest chunk it holds. *pad says what it costs. WEFT_EINVAL for a plan
 * that is not an out-of-place alltoallv plan or moves a chunk into a slot
 * too small for it; WEFT_ELIMIT (naming the limit and by how much) when
 * nchunksperloop N B / g would exceed an int (msccl-executor) or the
 * padded plan WEFT_PLAN_MAX_TOTAL_SLOTS; WEFT_EVERIFY for a broken
 * structure or a cycle; WEFT_ENOMEM. p should be verified first.
 * With a fabric t (NULL: routes are ignored, as the runtime would), the
 * padded plan's routes are then made rank-to-rank hops as
 * weft_plan_relay_routes does, on pieces rather than whole blocks, and
 * where a path carries part of a piece every piece is cut into
 * pad->refine = K parts (piece_bytes is then g / K: WEFT_ELIMIT when K
 * does not divide g), errors as weft_plan_relay_routes. */
WEFT_API weft_err weft_plan_msccl_pad(const weft_plan *p, const weft_topo *t, weft_plan **out,
                                      weft_msccl_padding *pad, weft_diag *d);
/* The matrix that the padded program x of the byte matrix m moves, for
 * verifying x as read back from its MSCCL XML (which holds equal chunks
 * and no matrix; `weft verify FILE.xml --traffic M`): x is an alltoall
 * plan of P chunks per block, so the unit is u = B / P with B the largest
 * block of m, and *out (free with weft_traffic_free) is m / u, the pieces
 * of every block (its 0-unit chunks are the padding). A program that is
 * not padded (a uniform m whose blocks are P units) gives every block P.
 * WEFT_EINVAL, naming what does not fit, when x is not an alltoall of m's
 * ranks, m moves no bytes, or B / P or a block / u is not whole (x is not
 * the program of m); WEFT_ENOMEM. */
WEFT_API weft_err weft_plan_msccl_padded_traffic(const weft_plan *x, const weft_traffic *m,
                                                 weft_traffic *out, weft_diag *d);
/* True when weft_plan_write_msccl pads p first: an alltoallv plan whose
 * chunks differ (not a uniform matrix whose entries C divides) and that
 * is not already padded (every chunk 0 or 1 unit and some block full, as
 * weft_plan_msccl_pad makes it). */
WEFT_API bool weft_plan_msccl_needs_padding(const weft_plan *p);

/* Writes p as an MSCCL XML program for o's profile. Each op becomes steps
 * of threadblocks keyed by (peer, direction, channel) on each rank, in one
 * topological order of the plan, so sends and receives match in order on
 * every connection; a step waits for at most one step, more deps become nop
 * steps before it, and hasdep marks exactly the steps others wait for.
 * Everything is built in memory first, so on error nothing is written.
 * Errors (WEFT_EINVAL for a plan MSCCL cannot express, WEFT_ELIMIT for a
 * runtime limit, both naming what; WEFT_EVERIFY for a dependency cycle;
 * WEFT_EIO; WEFT_ENOMEM) are described in d. p should be verified first.
 * A compute op becomes the nop step it orders like (MSCCL has no compute
 * step), as op sizes are not written either. */
WEFT_API weft_err weft_plan_write_msccl(const weft_plan *p, const weft_msccl_opts *o, FILE *f,
                                        weft_diag *d);

#ifdef __cplusplus
}
#endif
#endif
