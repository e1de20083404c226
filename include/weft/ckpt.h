/* weft checkpoints in peers' memory, and rejoining after a rank restarts
 * (GEMINI, SOSP'23: checkpoints kept in the CPU memory of other machines,
 * sent while the training traffic leaves the network idle).
 *
 * A rank registers the buffers that make up its state. weft_ckpt_save
 * copies them into a private snapshot and replicates the snapshot into the
 * memory of `replicas` (K) peers, its holders, in the background: a helper
 * thread sends it in chunks over a communicator of its own (the same
 * transports as the job's: shared memory within a host, TCP between hosts),
 * so the job's collectives never wait behind checkpoint bytes.
 *
 * Placement. Ring: rank r's holders are r+1 .. r+K (mod size). Group: the
 * ranks form groups of K+1 consecutive ranks (size a multiple of K+1) and
 * each rank's holders are the other members of its group; a group loses a
 * checkpoint only when all its members fail, a ring when K+1 neighbours do
 * (`weft step --checkpoint` prints the probabilities; docs/step.md).
 *
 * Priority (the contract of the background sends). Checkpoint bytes move
 * only on the helper thread, which runs at the lowest CPU priority
 * (SCHED_IDLE, unless normal_priority) and, before each chunk (chunk_bytes), waits while the job's
 * communicator is inside a collective, at most max_defer_us; so a chunk
 * starts only between collectives unless the job has run collectives back
 * to back for max_defer_us, which bounds how long a checkpoint can be
 * starved. A chunk once started is not preempted: a collective that starts
 * meanwhile shares the transports with at most one chunk per peer.
 *
 * Versions and torn checkpoints. Each holder keeps two slots per rank it
 * holds: the newest complete version and the one being received. A slot is
 * marked incomplete before its first byte is written and complete only
 * after its last, so a failure in the middle of a replication leaves the
 * previous complete version in the other slot, and restore never uses a
 * torn one. weft_ckpt_save(v) is collective: it first waits until version
 * v-1 (the previous save) is complete on every holder of every rank, so at
 * any moment every live holder has the last version complete on all ranks.
 *
 * Rejoining (weft_ckpt_join). Every rank calls it to form the job: at the
 * start, and again after any call failed because a peer failed (WEFT_EPEER,
 * WEFT_ETIMEDOUT). A rank that died and was restarted (weft launch
 * --restart; weft_comm_config.restart) calls it with a fresh weft_ckpt. It
 * builds a new communicator with every rank (the survivors' old one is
 * freed), then every rank rolls back to the newest version that every rank
 * can restore: a survivor from its own snapshot, or any rank from a live
 * holder, byte-exact. A version is restorable for a rank when its own
 * snapshot is that version or a holder that did not restart has it
 * complete. When no holder of a restarted rank's last complete version
 * survived, join fails on every rank with WEFT_ENOENT naming the rank, the
 * version and the holders that restarted. After a restart the holders that
 * lost their memory get the restored version again before join returns, so
 * the job is protected again at once.
 *
 * Threads: a weft_ckpt and its communicator are used by one application
 * thread at a time, as a weft_comm is; the helper thread is the ckpt's own.
 * The architecture and a worked example are in docs/run.md ("Checkpoints in
 * peers' memory").
 */
#ifndef WEFT_CKPT_H
#define WEFT_CKPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/comm.h"
#include "weft/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_ckpt_placement {
    WEFT_CKPT_PLACE_RING = 0,
    WEFT_CKPT_PLACE_GROUP,
} weft_ckpt_placement;

#define WEFT_CKPT_MAX_REPLICAS 8u
#define WEFT_CKPT_MAX_BUFFERS 64u
/* Chunk of the background sends: 256 KiB, the slice of the runtime's plan
 * executor (weft_comm_run_plan above: slices of about 256 KiB), small
 * enough to fit a gap of a millisecond between collectives at the shared
 * memory copy rates bench/ckpt_interference.c measures (0.1-0.3 GB/s per
 * rank with 8 ranks on 2 CPUs; with 1 MiB chunks its 2 ms gaps were
 * overrun and the checkpoint took longer than the idle-time model says). */
#define WEFT_CKPT_DEFAULT_CHUNK (UINT64_C(256) << 10)
/* Longest wait of a chunk behind collectives: 20 ms, a fraction of a
 * training iteration (100 ms .. seconds, docs/step.md), so a checkpoint
 * always completes even in a job that never leaves the network idle. */
#define WEFT_CKPT_DEFAULT_MAX_DEFER_US 20000u

typedef struct weft_ckpt_config {
    uint32_t replicas;             /* K, 1 .. min(WEFT_CKPT_MAX_REPLICAS, size-1); 0 means 1 */
    weft_ckpt_placement placement; /* ring (default) or group */
    uint64_t chunk_bytes;          /* 0: WEFT_CKPT_DEFAULT_CHUNK */
    uint32_t max_defer_us;         /* 0: WEFT_CKPT_DEFAULT_MAX_DEFER_US */
    /* true: the helper thread keeps the priority of the thread that
     * joined instead of SCHED_IDLE (on a host whose CPUs other work keeps
     * busy, SCHED_IDLE may starve it; bench/ckpt_interference.c compares). */
    bool normal_priority;
    /* Attempts of weft_ckpt_join when a peer fails while the job forms
     * again (another rank dies meanwhile); 0 means 8. */
    uint32_t join_attempts;
} weft_ckpt_config;

typedef struct weft_ckpt weft_ckpt;

/* Sets the defaults (ring, 1 replica). */
WEFT_API void weft_ckpt_config_init(weft_ckpt_config *cc);
/* Parses "ring", "group", "ring:2", "group:3" (placement and replicas, the
 * spelling of WEFT_CKPT and of `weft step --checkpoint gemini:...`);
 * WEFT_EINVAL naming the text otherwise. */
WEFT_API weft_err weft_ckpt_config_parse(const char *text, weft_ckpt_config *cc, weft_diag *d);

/* A checkpoint state with no buffers and no communicator. Local. */
WEFT_API weft_err weft_ckpt_new(const weft_ckpt_config *cc, weft_ckpt **out, weft_diag *d);
/* Adds bytes at buf to this rank's state (before the first join; the
 * buffers are borrowed and must outlive k). Every launch of a rank must
 * register the same sizes in the same order. Local. */
WEFT_API weft_err weft_ckpt_register(weft_ckpt *k, void *buf, size_t bytes, weft_diag *d);

/* Forms the job (collective over every rank of cfg, see "Rejoining"
 * above): frees k's communicator if it has one, builds a new one from cfg
 * (weft_comm_init; cfg's strings are borrowed for the call), and restores
 * every rank's buffers to the newest version all ranks can restore,
 * written to *version (0 when there is none: nothing was saved yet, and
 * the buffers are left as they are). Retries up to join_attempts times
 * when a peer fails meanwhile. WEFT_ENOENT when a rank's checkpoint is lost
 * ("ckpt: the checkpoint of rank 1 (version 7) is lost: it restarted and so
 * did its holder rank 2"); WEFT_EINVAL when ranks registered other sizes
 * than their checkpoints hold, or disagree on the configuration. */
WEFT_API weft_err weft_ckpt_join(weft_ckpt *k, const weft_comm_config *cfg, uint64_t *version,
                                 weft_diag *d);
/* The communicator of the last successful join (NULL before it and after
 * a join that failed: save and wait then fail with WEFT_EINVAL, "ckpt: not
 * joined"); owned by k, freed by the next join and by weft_ckpt_free. */
WEFT_API weft_comm *weft_ckpt_comm(const weft_ckpt *k);
/* How many times the job was formed since this rank's ckpt was created,
 * counted alike on every rank (the largest count of any rank, plus one):
 * 1 after the first join, and one more per recovery. */
WEFT_API uint64_t weft_ckpt_generation(const weft_ckpt *k);

/* What the last successful join of this rank did, and how long it took
 * (CLOCK_MONOTONIC). */
typedef struct weft_ckpt_join_info {
    uint64_t version;   /* restored (0: none) */
    uint32_t source;    /* where this rank's copy came from: its own rank or a holder */
    uint32_t attempts;  /* 1 when the job formed at the first try */
    uint64_t bytes;     /* received from the source (0 when restored from its own copy) */
    double form_s;      /* building the communicators (rendezvous, transports) */
    double restore_s;   /* agreeing on the version and moving every rank's copy */
    double reprotect_s; /* giving holders that restarted their replicas again (0: none) */
} weft_ckpt_join_info;
WEFT_API void weft_ckpt_join_info_get(const weft_ckpt *k, weft_ckpt_join_info *out);

/* Collective: waits until the previous save is complete on every holder of
 * every rank (WEFT_EPEER when its replication failed: call join), then
 * copies the registered buffers into the snapshot (the buffers may change
 * as soon as this returns) and starts replicating it as `version` in the
 * background. version must be greater than the last saved or restored one
 * and the same on every rank (WEFT_EINVAL otherwise, on every rank). */
WEFT_API weft_err weft_ckpt_save(weft_ckpt *k, uint64_t version, weft_diag *d);
/* Collective: waits until the last save is complete on every holder. */
WEFT_API weft_err weft_ckpt_wait(weft_ckpt *k, weft_diag *d);
/* True while this rank's part of the last save (its sends and the
 * receives of the replicas it holds) is still moving. Local. */
WEFT_API bool weft_ckpt_busy(weft_ckpt *k);
/* The version every holder has complete (the last save that
 * weft_ckpt_save or weft_ckpt_wait found complete, or the version join
 * restored). Local. */
WEFT_API uint64_t weft_ckpt_committed(const weft_ckpt *k);

/* Stops the helper (waiting for the round in flight), frees the
 * communicator, the snapshot and the replicas held. NULL is allowed. */
WEFT_API void weft_ckpt_free(weft_ckpt *k);

#ifdef __cplusplus
}
#endif
#endif
