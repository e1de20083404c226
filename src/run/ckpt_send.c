/* Replicating a snapshot into the holders' memory, and the helper thread
 * that does it in the background (weft/ckpt.h, "Priority").
 *
 * One round, on the checkpoint channel (a communicator of its own, so its
 * messages never mix with the job's): for j = 1 .. K, every rank sends
 * its snapshot to its j-th holder and receives the snapshot of the owner
 * whose j-th holder it is, at once (weft__comm_exchange, so the ring of
 * exchanges cannot deadlock): first a header (version, bytes, owner), then
 * the bytes in chunks. Ranks may hold states of different sizes: each side
 * sends its own chunk count and the exchange moves 0 bytes in a direction
 * that is done. Before each chunk the thread waits while the job's
 * communicator is inside a collective (coll_busy.h), at most max_defer_us.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "run/ckpt_internal.h"
#include "run/clock.h"
#include "run/coll_busy.h"
#include "run/comm_internal.h"
#include "run/p2p.h"

#define HDR_MAGIC UINT64_C(0x54504b4354464557) /* "WEFTCKPT" */

enum { HDR_WORDS = 4 };

/* Waits while the job runs a collective, up to max_defer_us. */
static void defer_to_collectives(struct weft_ckpt *k)
{
    weft_comm *job = k->comm;
    if (!job || !weft__coll_busy(job))
        return;
    int64_t until = weft__now_ns() + (int64_t)k->cfg.max_defer_us * 1000;
    while (weft__coll_busy(job) && weft__now_ns() < until) {
        struct timespec ts = {0, 20000}; /* 20 us: a small collective's time */
        nanosleep(&ts, NULL);
    }
}

static weft_err one_holder(struct weft_ckpt *k, uint32_t j, uint64_t v, weft_diag *d)
{
    weft_comm *ch = k->chan;
    uint32_t to = weft__ckpt_holder(k, k->rank, j), from = weft__ckpt_owner(k, k->rank, j);
    weft__ckpt_held *h = &k->held[j - 1];
    h->owner = from;
    weft__ckpt_slot *s = weft__ckpt_slot_to_fill(h->slot);
    const weft__ckpt_slot *own = weft__ckpt_slot_of(k->own, v);
    if (!own && k->total)
        return weft_diag_set(d, WEFT_EINVAL, "ckpt: rank %u has no snapshot of version %llu",
                             k->rank, (unsigned long long)v);
    s->complete = false; /* before any byte of the new version lands */
    uint64_t mine[HDR_WORDS] = {HDR_MAGIC, v, k->total, k->rank}, theirs[HDR_WORDS];
    weft_err e =
        weft__comm_exchange(ch, to, mine, sizeof mine, from, theirs, sizeof theirs, NULL, 1, d);
    if (e)
        return e;
    if (theirs[0] != HDR_MAGIC || theirs[1] != v || theirs[3] != from)
        return weft_diag_set(d, WEFT_EPARSE,
                             "ckpt: rank %u sent a malformed header for version %llu (got "
                             "version %llu, owner %llu)",
                             from, (unsigned long long)v, (unsigned long long)theirs[1],
                             (unsigned long long)theirs[3]);
    size_t bytes = (size_t)theirs[2];
    if (s->cap < bytes) {
        unsigned char *p = weft__malloc(bytes);
        if (!p)
            return weft_diag_set(d, WEFT_ENOMEM,
                                 "ckpt: rank %u cannot hold the %zu-byte checkpoint of rank %u",
                                 k->rank, bytes, from);
        weft__free(s->buf);
        s->buf = p;
        s->cap = bytes;
    }
    size_t ch_bytes = (size_t)k->cfg.chunk_bytes;
    size_t nout = (k->total + ch_bytes - 1) / ch_bytes, nin = (bytes + ch_bytes - 1) / ch_bytes;
    for (size_t i = 0; i < nout || i < nin; i++) {
        defer_to_collectives(k);
        size_t so = i * ch_bytes, ro = i * ch_bytes;
        size_t sn = i < nout ? (k->total - so < ch_bytes ? k->total - so : ch_bytes) : 0;
        size_t rn = i < nin ? (bytes - ro < ch_bytes ? bytes - ro : ch_bytes) : 0;
        e = weft__comm_exchange(ch, to, own->buf + (sn ? so : 0), sn, from, s->buf + (rn ? ro : 0),
                                rn, NULL, 1, d);
        if (e)
            return e;
    }
    s->bytes = bytes;
    s->version = v;
    s->complete = true;
    return WEFT_OK;
}

weft_err weft__ckpt_replicate(struct weft_ckpt *k, uint64_t v, weft_diag *d)
{
    for (uint32_t j = 1; j <= k->cfg.replicas; j++) {
        weft_err e = one_holder(k, j, v, d);
        if (e)
            return e;
    }
    return WEFT_OK;
}

static void *helper_main(void *arg)
{
    struct weft_ckpt *k = arg;
    /* The lowest CPU priority: the helper runs when the job's threads
     * leave a CPU idle (sched(7)); refused only where SCHED_IDLE is
     * unknown, and then the thread keeps its priority. */
    struct sched_param sp = {0};
    if (!k->cfg.normal_priority)
        (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
    pthread_mutex_lock(&k->mu);
    for (;;) {
        while (!k->job && !k->stop)
            pthread_cond_wait(&k->cv, &k->mu);
        if (k->stop)
            break;
        uint64_t v = k->job_version;
        pthread_mutex_unlock(&k->mu);
        weft_diag d;
        weft_diag_clear(&d);
        weft_err e = weft__ckpt_replicate(k, v, &d);
        pthread_mutex_lock(&k->mu);
        k->round_err = e;
        memcpy(k->round_msg, d.msg, sizeof k->round_msg);
        if (!e)
            k->round_done = v;
        k->job = false;
        pthread_cond_broadcast(&k->cv);
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

weft_err weft__ckpt_helper_start(struct weft_ckpt *k, weft_diag *d)
{
    if (k->thread_started)
        return WEFT_OK;
    k->stop = false;
    k->job = false;
    int rc = pthread_create(&k->thread, NULL, helper_main, k);
    if (rc)
        return weft_diag_set(d, WEFT_ENOMEM, "ckpt: cannot start the helper thread: %s",
                             strerror(rc));
    k->thread_started = true;
    return WEFT_OK;
}

void weft__ckpt_helper_post(struct weft_ckpt *k, uint64_t v)
{
    pthread_mutex_lock(&k->mu);
    k->job_version = v;
    k->job = true;
    k->round_err = WEFT_OK;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
}

weft_err weft__ckpt_helper_wait(struct weft_ckpt *k, weft_diag *d)
{
    pthread_mutex_lock(&k->mu);
    while (k->job)
        pthread_cond_wait(&k->cv, &k->mu);
    weft_err e = k->round_err;
    if (e)
        weft_diag_set(d, e, "%s", k->round_msg);
    pthread_mutex_unlock(&k->mu);
    return e;
}

void weft__ckpt_helper_stop(struct weft_ckpt *k)
{
    if (!k->thread_started)
        return;
    pthread_mutex_lock(&k->mu);
    k->stop = true;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
    pthread_join(k->thread, NULL);
    k->thread_started = false;
    k->job = false;
}
