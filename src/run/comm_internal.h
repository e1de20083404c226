/* The communicator's insides: struct weft_comm, the one type every file of
 * the runtime shares. It declares no function of its own (call_agree.h
 * comes in for the type of c->call), so a file that includes it for the
 * type depends on no other file's code; each function is declared in the
 * header of the file that defines it (comm_setup.h, comm_fail.h, p2p.h,
 * coll_ring.h, select.h, call_agree.h, ...).
 *
 * File order of the runtime, bottom up: a file calls only files on lines
 * above its own (tools/file_cycles.py SOURCE_DIR run finds any cycle; the
 * two it reports are the interposed MPI_* functions calling each other
 * through MPI itself: pmpi/state <-> pmpi/coll_*, and mpi/boot_mpi's
 * MPI_Comm_dup, which in libweft_mpi.so is pmpi/comm's, passing it on):
 *
 *   cause, copy_nt, dtype, hello, liveness, secret, sock, reduce_x86,
 *     transport/shm/bell, clock.h (no code of their own above them)
 *   hello_gate, reduce, tuning, transport/shm/leftovers, transport/shm/shm
 *   bootstrap/tcp, bootstrap/sub, transport/tcp/tcp, tuning_text, launch
 *   comm_fail     failing a communicator; tells the region through
 *                 c->region_abort, so that it needs no code of region.c
 *   p2p           posting requests, progress, waiting (p2p.h)
 *   comm_agree    barrier and agreement over the bootstrap
 *   transport/shm/region
 *   call_agree    the ranks agree on each call's arguments
 *   exec_plan, coll_direct, coll_shared_core
 *   select        which schedule a call runs (exec_plan, tuning, synth)
 *   coll_small, coll_shared_root, coll_shared_a2a, coll_cma (single copy)
 *   comm          setup and teardown (builds select, region, transports)
 *   coll_shared, config_env
 *   coll_ring     the public collectives (select, coll_small, coll_shared,
 *                 coll_cma, coll_direct)
 *   coll_alltoall
 *   coll_alltoallv  weft_alltoallv (weft_alltoall, weft_allgather, p2p)
 *   coll_sparse_xfer  every peer's message at once (p2p), for:
 *   coll_sparse   weft_allreduce_sparse (the hash partition of synth)
 *   compress_ef   top-k and int8 compressors with error feedback
 *   coll_quant    weft_allreduce_int8 (compress_ef, coll_sparse_xfer)
 *   ckpt_send     replicating checkpoints, the helper thread (p2p;
 *                 ckpt_internal.h has the checkpoints' own order)
 *   ckpt, ckpt_join  save and wait (weft_allreduce), forming the job again
 *                 and restoring (comm, bootstrap/sub, weft_allgather)
 *   mpi/, pmpi/
 */
#ifndef WEFT_RUN_COMM_INTERNAL_H
#define WEFT_RUN_COMM_INTERNAL_H

#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "run/bootstrap/boot.h"
#include "run/call_agree.h"
#include "run/transport/xport.h"
#include "weft/comm.h"

enum { WEFT__VIA_SELF = 0, WEFT__VIA_SHM = 1, WEFT__VIA_TCP = 2 };
#define WEFT__NO_PEER UINT32_MAX

struct weft_comm {
    uint32_t rank, size;
    int64_t timeout_ns;
    const weft__boot_ops *bops;
    weft__boot *boot;
    weft__xport *shm, *tcp;
    uint8_t *via; /* per peer: WEFT__VIA_* */
    /* Per rank: the lowest rank on its host (host identity and WEFT_HOST,
     * comm.c), the same on every rank; and config relay_min (select.c). */
    uint32_t *host_first;
    uint64_t relay_min;
    /* CPUs of this host (config cpus or weft__host_cpus_detect), alike on
     * the ranks of a host. */
    uint32_t host_cpus;
    struct weft__select *sel; /* which schedule runs (select.c) */
    bool failed;
    char fail_msg[WEFT_DIAG_MSG_SIZE]; /* why it failed, repeated by later calls */
    /* Working space of the built-in ring schedules' rounds (coll_ring.c),
     * kept between calls so that it stays mapped and cached. */
    unsigned char *scratch;
    size_t scratch_bytes;
    /* weft_comm_alloc's segments and control pages (transport/shm/region.c),
     * NULL before the first allocation; job_tag names their segments. */
    struct weft__region *region;
    /* weft__region_abort, set with region by region.c, so that failing the
     * communicator (comm_fail.c) tells the region's waiters without
     * depending on region.c, which itself fails the communicator. */
    void (*region_abort)(struct weft__region *region, const weft__cause *why);
    /* The region's state of the MPI library's ring of slots (coll_tiny.h,
     * transport/shm/region.h), set with region: read on every small call,
     * without a call into region.c. */
    struct weft__region_tiny_state *tiny;
    uint64_t job_tag;
    /* The collective call under way (call_agree.h) and whether the ranks
     * agreed on it yet. */
    weft__call call;
    uint32_t call_kind; /* its record word (call_agree.c) */
    bool call_agreed;
    /* Public collectives under way on this communicator (coll_busy.h),
     * read by the checkpoint helper thread (ckpt_send.c) of another
     * communicator to send only between collectives. */
    _Atomic uint32_t coll_depth;
    /* The job secret and the address the bootstrap used, kept so that a
     * second communicator of the same ranks can be formed on this one's
     * bootstrap (bootstrap/sub.c). */
    unsigned char secret[WEFT_SECRET_BYTES];
    struct in_addr boot_local;
};

/* Records the arguments of the call c starts (call_agree.h); op is a
 * weft_redop or WEFT__CALL_NO_OP, root 0 for collectives without one.
 * Inline: the ring's small calls take it on every call (a call cost 26
 * instructions, most of them the arguments kept across it; callgrind). */
static inline void weft__call_begin(weft_comm *c, weft_coll coll, size_t count, weft_dtype dtype,
                                    uint32_t op, uint32_t root)
{
    c->call = (weft__call){.coll = (uint32_t)coll,
                           .dtype = (uint32_t)dtype,
                           .op = op,
                           .root = root,
                           .count = (uint64_t)count};
    c->call_kind = weft__call_kind(&c->call);
    c->call_agreed = false;
}

#endif
