/* Checkpoints in peers' memory (weft/ckpt.h): the state every file of it
 * shares. File order, bottom up: ckpt_place (who holds whom, in this
 * header), ckpt_send (replicating a snapshot; the helper thread), ckpt
 * (save, wait, the public setters), ckpt_join (forming the job again and
 * restoring). */
#ifndef WEFT_RUN_CKPT_INTERNAL_H
#define WEFT_RUN_CKPT_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/ckpt.h"

/* A replica on its holder: complete only once its last byte arrived. */
typedef struct weft__ckpt_slot {
    unsigned char *buf;
    size_t cap, bytes;
    uint64_t version;
    bool complete;
} weft__ckpt_slot;

/* The replicas of one owner on this rank (two versions, see weft/ckpt.h). */
typedef struct weft__ckpt_held {
    uint32_t owner;
    weft__ckpt_slot slot[2];
} weft__ckpt_held;

struct weft_ckpt {
    weft_ckpt_config cfg; /* defaults resolved */
    void *bufs[WEFT_CKPT_MAX_BUFFERS];
    size_t lens[WEFT_CKPT_MAX_BUFFERS];
    uint32_t nbufs;
    size_t total; /* bytes registered */
    uint32_t rank, size;
    weft_comm *comm; /* the job's (weft_ckpt_comm) */
    weft_comm *chan; /* the checkpoint channel, on comm's bootstrap */
    /* This rank's own snapshots, two versions as on a holder: the last
     * saved or restored one and the one before, so that a rank whose save
     * was in flight can still roll back to the version its peers have. */
    weft__ckpt_slot own[2];
    /* held[j]: the replicas of owner weft__ckpt_owner(k, rank, j + 1). */
    weft__ckpt_held held[WEFT_CKPT_MAX_REPLICAS];
    uint64_t committed;    /* complete on every holder of every rank */
    uint64_t last_version; /* last saved or restored */
    uint64_t generation;   /* weft_ckpt_generation */
    weft_ckpt_join_info join;
    /* The helper thread (ckpt_send.c). Under mu: job (a round to send),
     * job_version, stop, and the last round's result. */
    pthread_t thread;
    bool thread_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool job, stop;
    uint64_t job_version;
    weft_err round_err;
    char round_msg[WEFT_DIAG_MSG_SIZE];
    uint64_t round_done; /* last version this rank's round finished */
};

/* The slot of a pair that receives a new version: an incomplete one, else
 * the older. The other keeps the newest complete version. */
static inline weft__ckpt_slot *weft__ckpt_slot_to_fill(weft__ckpt_slot pair[2])
{
    if (!pair[0].complete)
        return &pair[0];
    if (!pair[1].complete)
        return &pair[1];
    return pair[0].version < pair[1].version ? &pair[0] : &pair[1];
}

/* The slot of a pair with version v complete, or NULL. */
static inline weft__ckpt_slot *weft__ckpt_slot_of(weft__ckpt_slot pair[2], uint64_t v)
{
    for (int i = 0; i < 2; i++) {
        if (pair[i].complete && pair[i].version == v)
            return &pair[i];
    }
    return NULL;
}

/* Rank r's j-th holder (j in 1 .. replicas) and the owner whose j-th
 * holder r is. */
static inline uint32_t weft__ckpt_holder(const struct weft_ckpt *k, uint32_t r, uint32_t j)
{
    if (k->cfg.placement == WEFT_CKPT_PLACE_GROUP) {
        uint32_t g = k->cfg.replicas + 1, base = r - r % g;
        return base + (r - base + j) % g;
    }
    return (r + j) % k->size;
}

static inline uint32_t weft__ckpt_owner(const struct weft_ckpt *k, uint32_t r, uint32_t j)
{
    if (k->cfg.placement == WEFT_CKPT_PLACE_GROUP) {
        uint32_t g = k->cfg.replicas + 1, base = r - r % g;
        return base + (r - base + g - j) % g;
    }
    return (r + k->size - j) % k->size;
}

/* ckpt_send.c. Sends this rank's snapshot (version v) to its holders and
 * receives the replicas it holds, on k->chan, chunk by chunk (each chunk
 * waits while k->comm runs a collective, up to max_defer_us). Every rank
 * runs the same round. Slots are marked incomplete before their first
 * byte and complete after their last. Blocking; on the calling thread. */
weft_err weft__ckpt_replicate(struct weft_ckpt *k, uint64_t v, weft_diag *d);
/* Starts the helper thread (once) / hands it a round / waits until it has
 * no round; the result of the last round. */
weft_err weft__ckpt_helper_start(struct weft_ckpt *k, weft_diag *d);
void weft__ckpt_helper_post(struct weft_ckpt *k, uint64_t v);
weft_err weft__ckpt_helper_wait(struct weft_ckpt *k, weft_diag *d);
/* Stops and joins the helper thread (it finishes the round in flight:
 * stop is looked at between rounds). */
void weft__ckpt_helper_stop(struct weft_ckpt *k);

#endif
