/* weft exec model: the constants of how weft's own executor runs a plan,
 * shared by the executor (src/run/exec_plan.c) and the simulator's runtime
 * model (weft_sim_opts_model, weft/sim.h), so that the two cannot drift.
 *
 * The executor cuts every chunk into slices of about WEFT_EXEC_SLICE_BYTES
 * (1 to WEFT_EXEC_MAX_SLICES per chunk); slice s of an op waits for slice s
 * of each op it depends on and for its own slice s-1, so a rank forwards a
 * chunk slice by slice as it arrives, storing and forwarding each slice.
 * Every slice is one message and costs about WEFT_EXEC_OP_OVERHEAD_S of
 * per-message work beyond its bytes (framing, a poll round, a wake-up). */
#ifndef WEFT_EXEC_MODEL_H
#define WEFT_EXEC_MODEL_H

#include <stdint.h>

#include "weft/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Slices of about this many bytes: large enough that per-message costs
 * vanish, small enough that a forwarding rank starts early. */
#define WEFT_EXEC_SLICE_BYTES (256u * 1024u)
/* At most this many slices per chunk. */
#define WEFT_EXEC_MAX_SLICES 32u
/* Per-message overhead of the executor, seconds: the low end of the 45-75 us
 * per dependent step measured for a 32-byte allreduce over TCP loopback,
 * 4 ranks, on the 2-core development machine (docs/netns.md, "per-message
 * cost"). */
#define WEFT_EXEC_OP_OVERHEAD_S 45e-6
/* Streams per peer pair between hosts: the executor sends an op on lane
 * (channel mod the TCP connections per peer), and each lane's messages go
 * FIFO over one connection; ranks of one host (shared memory) have one
 * lane. This is WEFT_DEFAULT_TCP_CONNS of weft/comm.h (exec_plan.c checks
 * that they agree); a job run with another WEFT_TCP_CONNS has that many. */
#define WEFT_EXEC_TCP_LANES 2u

/* The slices the executor cuts a chunk of chunk_bytes into: chunk_bytes /
 * WEFT_EXEC_SLICE_BYTES, clamped to 1 .. WEFT_EXEC_MAX_SLICES (a run also
 * caps it at the elements per chunk). */
WEFT_API uint32_t weft_exec_slices(uint64_t chunk_bytes);

#ifdef __cplusplus
}
#endif
#endif
