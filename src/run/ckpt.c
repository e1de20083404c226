/* Checkpoint state, registration, save and wait (weft/ckpt.h). Forming the
 * job and restoring are in ckpt_join.c, the replication in ckpt_send.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "run/ckpt_internal.h"
#include "run/comm_internal.h"

void weft_ckpt_config_init(weft_ckpt_config *cc)
{
    memset(cc, 0, sizeof *cc);
    cc->replicas = 1;
    cc->placement = WEFT_CKPT_PLACE_RING;
}

weft_err weft_ckpt_config_parse(const char *text, weft_ckpt_config *cc, weft_diag *d)
{
    weft_ckpt_config c;
    weft_ckpt_config_init(&c);
    const char *t = text ? text : "";
    size_t n = strcspn(t, ":");
    if (n == 4 && strncmp(t, "ring", 4) == 0)
        c.placement = WEFT_CKPT_PLACE_RING;
    else if (n == 5 && strncmp(t, "group", 5) == 0)
        c.placement = WEFT_CKPT_PLACE_GROUP;
    else
        return weft_diag_set(d, WEFT_EINVAL,
                             "ckpt: placement '%s': expected ring or group, optionally with "
                             ":REPLICAS (ring:2)",
                             t);
    if (t[n] == ':') {
        char *end;
        unsigned long r = strtoul(t + n + 1, &end, 10);
        if (t[n + 1] < '0' || t[n + 1] > '9' || *end || r < 1 || r > WEFT_CKPT_MAX_REPLICAS)
            return weft_diag_set(d, WEFT_EINVAL, "ckpt: replicas in '%s': expected 1 .. %u", t,
                                 WEFT_CKPT_MAX_REPLICAS);
        c.replicas = (uint32_t)r;
    }
    *cc = c;
    return WEFT_OK;
}

weft_err weft_ckpt_new(const weft_ckpt_config *cc, weft_ckpt **out, weft_diag *d)
{
    weft_ckpt_config c;
    if (cc)
        c = *cc;
    else
        weft_ckpt_config_init(&c);
    if (!c.replicas)
        c.replicas = 1;
    if (!c.chunk_bytes)
        c.chunk_bytes = WEFT_CKPT_DEFAULT_CHUNK;
    if (!c.max_defer_us)
        c.max_defer_us = WEFT_CKPT_DEFAULT_MAX_DEFER_US;
    if (!c.join_attempts)
        c.join_attempts = 8;
    if (c.replicas > WEFT_CKPT_MAX_REPLICAS)
        return weft_diag_set(d, WEFT_EINVAL, "ckpt: %u replicas (at most %u)", c.replicas,
                             WEFT_CKPT_MAX_REPLICAS);
    if ((unsigned)c.placement > WEFT_CKPT_PLACE_GROUP)
        return weft_diag_set(d, WEFT_EINVAL, "ckpt: unknown placement %d", (int)c.placement);
    weft_ckpt *k = weft__calloc(1, sizeof *k);
    if (!k)
        return weft_diag_code(d, WEFT_ENOMEM);
    k->cfg = c;
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    *out = k;
    return WEFT_OK;
}

weft_err weft_ckpt_register(weft_ckpt *k, void *buf, size_t bytes, weft_diag *d)
{
    if (k->generation)
        return weft_diag_set(d, WEFT_EINVAL, "ckpt: buffers are registered before the first join");
    if (k->nbufs == WEFT_CKPT_MAX_BUFFERS)
        return weft_diag_set(d, WEFT_ELIMIT, "ckpt: more than %u buffers", WEFT_CKPT_MAX_BUFFERS);
    if (!buf && bytes)
        return weft_diag_set(d, WEFT_EINVAL, "ckpt: a NULL buffer of %zu bytes", bytes);
    if (bytes > SIZE_MAX / 2 - k->total)
        return weft_diag_set(d, WEFT_EOVERFLOW, "ckpt: %zu more bytes overflow the state", bytes);
    k->bufs[k->nbufs] = buf;
    k->lens[k->nbufs++] = bytes;
    k->total += bytes;
    return WEFT_OK;
}

weft_comm *weft_ckpt_comm(const weft_ckpt *k)
{
    return k->comm;
}

uint64_t weft_ckpt_generation(const weft_ckpt *k)
{
    return k->generation;
}

void weft_ckpt_join_info_get(const weft_ckpt *k, weft_ckpt_join_info *out)
{
    *out = k->join;
}

uint64_t weft_ckpt_committed(const weft_ckpt *k)
{
    return k->committed;
}

bool weft_ckpt_busy(weft_ckpt *k)
{
    pthread_mutex_lock(&k->mu);
    bool busy = k->job;
    pthread_mutex_unlock(&k->mu);
    return busy;
}

/* Waits for this rank's round, then learns whether every rank's finished
 * (one allreduce on the job's communicator, which also compares the
 * versions `next` the ranks pass: 0 from weft_ckpt_wait). */
static weft_err settle(weft_ckpt *k, uint64_t next, weft_diag *d)
{
    if (!k->comm)
        return weft_diag_set(d, WEFT_EINVAL, "ckpt: not joined (call weft_ckpt_join)");
    weft_diag mine;
    weft_diag_clear(&mine);
    weft_err round = weft__ckpt_helper_wait(k, &mine);
    uint64_t w[3] = {round ? 0 : 1, next, ~next};
    weft_err e = weft_allreduce(k->comm, w, w, 3, WEFT_UINT64, WEFT_MIN, d);
    if (e)
        return e;
    if (w[0] == 0) {
        if (round)
            return weft_diag_set(d, round, "ckpt: replicating version %llu failed: %s",
                                 (unsigned long long)k->last_version, mine.msg);
        return weft_diag_set(d, WEFT_EPEER, "ckpt: replicating version %llu failed on another rank",
                             (unsigned long long)k->last_version);
    }
    if (w[1] != ~w[2])
        return weft_diag_set(d, WEFT_EINVAL,
                             "ckpt: ranks disagree on the version to save: %llu .. %llu",
                             (unsigned long long)w[1], (unsigned long long)~w[2]);
    k->committed = k->last_version;
    return WEFT_OK;
}

weft_err weft_ckpt_save(weft_ckpt *k, uint64_t version, weft_diag *d)
{
    /* The version is judged after settle's allreduce, which every rank
     * enters: a rank refusing alone before it left the others waiting
     * there; ranks passing different versions fail there alike. */
    weft_err e = settle(k, version, d);
    if (e)
        return e;
    if (version <= k->last_version)
        return weft_diag_set(d, WEFT_EINVAL,
                             "ckpt: version %llu is not greater than the last one, %llu",
                             (unsigned long long)version, (unsigned long long)k->last_version);
    weft__ckpt_slot *s = weft__ckpt_slot_to_fill(k->own);
    s->complete = false;
    size_t off = 0;
    for (uint32_t i = 0; i < k->nbufs; i++) {
        if (k->lens[i])
            memcpy(s->buf + off, k->bufs[i], k->lens[i]);
        off += k->lens[i];
    }
    s->bytes = k->total;
    s->version = version;
    s->complete = true;
    k->last_version = version;
    if (k->size > 1)
        weft__ckpt_helper_post(k, version);
    return WEFT_OK;
}

weft_err weft_ckpt_wait(weft_ckpt *k, weft_diag *d)
{
    return settle(k, 0, d);
}

void weft_ckpt_free(weft_ckpt *k)
{
    if (!k)
        return;
    weft__ckpt_helper_stop(k);
    weft_comm_free(k->chan);
    weft_comm_free(k->comm);
    weft__free(k->own[0].buf);
    weft__free(k->own[1].buf);
    for (uint32_t j = 0; j < WEFT_CKPT_MAX_REPLICAS; j++) {
        weft__free(k->held[j].slot[0].buf);
        weft__free(k->held[j].slot[1].buf);
    }
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
    weft__free(k);
}
