/* Forming the job again and restoring every rank's state (weft/ckpt.h,
 * "Rejoining").
 *
 * One attempt, collective over every rank of the job:
 *  1. stop the helper thread (a round in flight ends: its channel failed
 *     with the peer that died), free the old communicators, build the
 *     job's communicator (weft_comm_init: the rendezvous; survivors and
 *     restarted ranks meet there alike) and the checkpoint channel on its
 *     bootstrap (bootstrap/sub.c);
 *  2. allgather what each rank has: whether it is fresh (no join yet in
 *     this process: it lost its memory), its snapshot's version, the
 *     complete versions of the replicas it holds, and the bytes it
 *     registered;
 *  3. every rank computes alike the newest version V that every owner can
 *     restore (from its own snapshot, or a holder that is not fresh) and
 *     the source of each owner's copy; none while a version was committed
 *     (complete on every holder) is the lost-checkpoint error;
 *  4. K rounds of exchanges: in round j a holder whose j-th owner gets its
 *     copy from it sends the slot, and an owner whose source is its j-th
 *     holder receives it into its snapshot; each rank sends and receives at
 *     most one message per round, both at once, so no round deadlocks;
 *  5. the snapshot is copied into the registered buffers; replicas newer
 *     than V are dropped (they belong to a timeline that was abandoned);
 *     when a rank was fresh, one replication round of V gives the holders
 *     that lost their memory their replicas again, and an allreduce
 *     confirms it everywhere.
 * A peer failing in any step fails the attempt on every rank (their
 * communicators fail with it), and join tries again.
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "run/ckpt_internal.h"
#include "run/clock.h"
#include "run/comm_internal.h"
#include "run/comm_setup.h"
#include "run/p2p.h"

/* Per rank, words of the allgather in step 2. */
enum {
    W_FRESH,
    W_GENERATION,
    W_COMMITTED,
    W_SNAP, /* the versions of its own two snapshots */
    W_SNAP2,
    W_BYTES,
    W_REPLICAS,
    W_PLACEMENT,
    W_HELD, /* per replica j: owner, version and bytes of slot 0, of slot 1 */
    W_PER_HELD = 5,
    W_COUNT = W_HELD + W_PER_HELD * WEFT_CKPT_MAX_REPLICAS
};

#define NO_SOURCE UINT32_MAX

static const uint64_t *info_of(const uint64_t *all, uint32_t r)
{
    return all + (size_t)r * W_COUNT;
}

/* The bytes of owner o's copy of version v at rank `at` (o itself: its
 * snapshot), or false when `at` has none. */
static bool has_version(const struct weft_ckpt *k, const uint64_t *all, uint32_t o, uint32_t at,
                        uint64_t v, uint64_t *bytes)
{
    const uint64_t *w = info_of(all, at);
    if (w[W_FRESH] || !v)
        return false;
    if (at == o) {
        *bytes = w[W_BYTES];
        return w[W_SNAP] == v || w[W_SNAP2] == v;
    }
    for (uint32_t j = 1; j <= k->cfg.replicas; j++) {
        if (weft__ckpt_holder(k, o, j) != at)
            continue;
        const uint64_t *h = w + W_HELD + (size_t)(j - 1) * W_PER_HELD;
        if (h[0] != o)
            return false;
        for (int s = 0; s < 2; s++) {
            if (h[1 + 2 * s] == v) {
                *bytes = h[2 + 2 * s];
                return true;
            }
        }
    }
    return false;
}

/* Where owner o gets version v: itself, else its first holder with v. */
static uint32_t source_of(const struct weft_ckpt *k, const uint64_t *all, uint32_t o, uint64_t v,
                          uint64_t *bytes)
{
    if (has_version(k, all, o, o, v, bytes))
        return o;
    for (uint32_t j = 1; j <= k->cfg.replicas; j++) {
        uint32_t h = weft__ckpt_holder(k, o, j);
        if (has_version(k, all, o, h, v, bytes))
            return h;
    }
    return NO_SOURCE;
}

static weft_err lost(const struct weft_ckpt *k, const uint64_t *all, uint32_t o, uint64_t v,
                     weft_diag *d)
{
    char who[160] = "";
    size_t len = 0;
    uint32_t dead = 0;
    for (uint32_t j = 1; j <= k->cfg.replicas; j++) {
        uint32_t h = weft__ckpt_holder(k, o, j);
        if (!info_of(all, h)[W_FRESH])
            continue;
        int n = snprintf(who + len, sizeof who - len, "%srank %u", dead ? ", " : "", h);
        if (n > 0 && (size_t)n < sizeof who - len)
            len += (size_t)n;
        dead++;
    }
    const char *place = k->cfg.placement == WEFT_CKPT_PLACE_GROUP ? "group" : "ring";
    if (info_of(all, o)[W_FRESH])
        return weft_diag_set(d, WEFT_ENOENT,
                             "ckpt: the checkpoint of rank %u (version %llu) is lost: rank %u "
                             "restarted and so did its %s %s (%u replica%s, %s placement)",
                             o, (unsigned long long)v, o, dead == 1 ? "holder" : "holders",
                             dead ? who : "(none restarted)", k->cfg.replicas,
                             k->cfg.replicas == 1 ? "" : "s", place);
    return weft_diag_set(d, WEFT_ENOENT,
                         "ckpt: the checkpoint of rank %u (version %llu) is lost: its own copies "
                         "are versions %llu and %llu and its %s %s restarted (%u replica%s, %s "
                         "placement)",
                         o, (unsigned long long)v, (unsigned long long)info_of(all, o)[W_SNAP],
                         (unsigned long long)info_of(all, o)[W_SNAP2],
                         dead == 1 ? "holder" : "holders", dead ? who : "(none)", k->cfg.replicas,
                         k->cfg.replicas == 1 ? "" : "s", place);
}

/* Step 3: the version every owner can restore, or 0 with nothing
 * committed; the lost-checkpoint error otherwise. */
static weft_err choose_version(const struct weft_ckpt *k, const uint64_t *all, uint64_t *out,
                               weft_diag *d)
{
    uint32_t n = k->size;
    uint64_t committed = 0;
    for (uint32_t r = 0; r < n; r++) {
        const uint64_t *w = info_of(all, r);
        if (!w[W_FRESH] && w[W_COMMITTED] > committed)
            committed = w[W_COMMITTED];
    }
    /* Candidates: every version anyone has, newest first. */
    uint64_t best = 0, bytes;
    for (uint32_t r = 0; r < n; r++) {
        const uint64_t *w = info_of(all, r);
        if (w[W_FRESH])
            continue;
        uint64_t cand[2 + 2 * WEFT_CKPT_MAX_REPLICAS];
        uint32_t nc = 0;
        cand[nc++] = w[W_SNAP];
        cand[nc++] = w[W_SNAP2];
        for (uint32_t j = 0; j < k->cfg.replicas; j++) {
            cand[nc++] = w[W_HELD + j * W_PER_HELD + 1];
            cand[nc++] = w[W_HELD + j * W_PER_HELD + 3];
        }
        for (uint32_t c = 0; c < nc; c++) {
            uint64_t v = cand[c];
            if (v <= best)
                continue;
            bool all_have = true;
            for (uint32_t o = 0; o < n && all_have; o++)
                all_have = source_of(k, all, o, v, &bytes) != NO_SOURCE;
            if (all_have)
                best = v;
        }
    }
    if (best < committed) {
        for (uint32_t o = 0; o < n; o++) {
            if (source_of(k, all, o, committed, &bytes) == NO_SOURCE)
                return lost(k, all, o, committed, d);
        }
    }
    for (uint32_t o = 0; best && o < n; o++) {
        source_of(k, all, o, best, &bytes);
        if (bytes != info_of(all, o)[W_BYTES])
            return weft_diag_set(d, WEFT_EINVAL,
                                 "ckpt: rank %u registered %llu bytes but its checkpoint "
                                 "(version %llu) holds %llu",
                                 o, (unsigned long long)info_of(all, o)[W_BYTES],
                                 (unsigned long long)best, (unsigned long long)bytes);
    }
    *out = best;
    return WEFT_OK;
}

static void describe(const struct weft_ckpt *k, uint64_t *w)
{
    memset(w, 0, W_COUNT * sizeof *w);
    w[W_FRESH] = k->generation == 0;
    w[W_GENERATION] = k->generation;
    w[W_COMMITTED] = k->committed;
    w[W_SNAP] = k->own[0].complete ? k->own[0].version : 0;
    w[W_SNAP2] = k->own[1].complete ? k->own[1].version : 0;
    w[W_BYTES] = k->total;
    w[W_REPLICAS] = k->cfg.replicas;
    w[W_PLACEMENT] = (uint64_t)k->cfg.placement;
    for (uint32_t j = 0; j < k->cfg.replicas; j++) {
        const weft__ckpt_held *h = &k->held[j];
        uint64_t *o = w + W_HELD + j * W_PER_HELD;
        o[0] = h->owner;
        for (int s = 0; s < 2; s++) {
            if (!h->slot[s].complete)
                continue;
            o[1 + 2 * s] = h->slot[s].version;
            o[2 + 2 * s] = h->slot[s].bytes;
        }
    }
}

/* Step 4: the copies move from their sources to their owners. */
static weft_err transfer(struct weft_ckpt *k, const uint64_t *all, uint64_t v, weft_diag *d)
{
    uint64_t bytes;
    uint32_t me = k->rank, mine = source_of(k, all, me, v, &bytes);
    weft__ckpt_slot *into = NULL;
    if (mine != me) {
        into = weft__ckpt_slot_to_fill(k->own);
        into->complete = false;
    }
    for (uint32_t j = 1; j <= k->cfg.replicas; j++) {
        uint32_t from = mine == weft__ckpt_holder(k, me, j) ? mine : WEFT__NO_PEER;
        uint32_t o = weft__ckpt_owner(k, me, j), to = WEFT__NO_PEER;
        const unsigned char *out = NULL;
        size_t out_bytes = 0;
        if (source_of(k, all, o, v, &bytes) == me && o != me) {
            const weft__ckpt_held *h = &k->held[j - 1];
            for (int s = 0; s < 2; s++) {
                if (h->slot[s].complete && h->slot[s].version == v) {
                    out = h->slot[s].buf;
                    out_bytes = h->slot[s].bytes;
                    break;
                }
            }
            to = o;
        }
        weft_err e = weft__comm_exchange(k->comm, out_bytes ? to : WEFT__NO_PEER, out, out_bytes,
                                         k->total ? from : WEFT__NO_PEER, into ? into->buf : NULL,
                                         from == WEFT__NO_PEER ? 0 : k->total, NULL, 1, d);
        if (e)
            return e;
    }
    if (into) {
        into->bytes = k->total;
        into->version = v;
        into->complete = true;
    }
    return WEFT_OK;
}

static weft_err join_once(struct weft_ckpt *k, const weft_comm_config *cfg, uint64_t *version,
                          weft_diag *d)
{
    int64_t t0 = weft__now_ns();
    weft_ckpt_join_info info = {.source = cfg->rank};
    weft__ckpt_helper_stop(k);
    weft_comm_free(k->chan);
    weft_comm_free(k->comm);
    k->chan = k->comm = NULL;
    weft_err e = weft_comm_init(cfg, &k->comm, d);
    if (e)
        return e;
    weft_comm_config cc = *cfg;
    cc.fabric = cc.algo = cc.plan_file = cc.tuning = NULL;
    cc.relay_min = 0;
    cc.listen_fd = -1;
    weft__boot_params bp = {.cfg = &cc, .parent = k->comm};
    e = weft__comm_setup(&cc, &weft__boot_sub, &bp, &k->chan, d);
    if (e)
        return e;
    int64_t t1 = weft__now_ns();
    info.form_s = (double)(t1 - t0) / 1e9;
    uint32_t n = k->size;
    uint64_t mine[W_COUNT];
    describe(k, mine);
    uint64_t *all = weft__malloc((size_t)n * W_COUNT * sizeof *all);
    if (!all)
        return weft_diag_code(d, WEFT_ENOMEM);
    e = weft_allgather(k->comm, mine, all, W_COUNT, WEFT_UINT64, d);
    if (e)
        goto free_all;
    uint64_t gen = 0;
    bool any_fresh = false;
    for (uint32_t r = 0; r < n; r++) {
        const uint64_t *w = info_of(all, r);
        if (w[W_REPLICAS] != mine[W_REPLICAS] || w[W_PLACEMENT] != mine[W_PLACEMENT]) {
            e = weft_diag_set(d, WEFT_EINVAL,
                              "ckpt: ranks disagree on the placement: rank %u has %llu replicas "
                              "(%s), rank %u %llu (%s)",
                              k->rank, (unsigned long long)mine[W_REPLICAS],
                              mine[W_PLACEMENT] ? "group" : "ring", r,
                              (unsigned long long)w[W_REPLICAS], w[W_PLACEMENT] ? "group" : "ring");
            goto free_all;
        }
        if (w[W_GENERATION] > gen)
            gen = w[W_GENERATION];
        any_fresh = any_fresh || w[W_FRESH];
    }
    uint64_t v = 0;
    e = choose_version(k, all, &v, d);
    if (e)
        goto free_all;
    if (v) {
        uint64_t bytes;
        info.source = source_of(k, all, k->rank, v, &bytes);
        if (info.source != k->rank)
            info.bytes = bytes;
        e = transfer(k, all, v, d);
        if (e)
            goto free_all;
        const weft__ckpt_slot *from = weft__ckpt_slot_of(k->own, v);
        size_t off = 0;
        for (uint32_t i = 0; from && i < k->nbufs; i++) {
            if (k->lens[i])
                memcpy(k->bufs[i], from->buf + off, k->lens[i]);
            off += k->lens[i];
        }
    }
    for (uint32_t j = 0; j < WEFT_CKPT_MAX_REPLICAS; j++) {
        for (int s = 0; s < 2; s++) {
            weft__ckpt_slot *sl = &k->held[j].slot[s];
            if (sl->complete && sl->version > v)
                sl->complete = false;
        }
    }
    for (int s = 0; s < 2; s++) {
        if (k->own[s].complete && k->own[s].version > v)
            k->own[s].complete = false;
    }
    k->generation = gen + 1;
    k->committed = k->last_version = v;
    int64_t t2 = weft__now_ns();
    info.restore_s = (double)(t2 - t1) / 1e9;
    if (v && any_fresh) {
        weft_diag mine_d;
        weft_diag_clear(&mine_d);
        weft_err r = weft__ckpt_replicate(k, v, &mine_d);
        uint64_t ok = r ? 0 : 1;
        e = weft_allreduce(k->comm, &ok, &ok, 1, WEFT_UINT64, WEFT_MIN, d);
        if (!e && r)
            e = weft_diag_set(d, r, "%s", mine_d.msg);
        if (!e && !ok)
            e = weft_diag_set(d, WEFT_EPEER,
                              "ckpt: giving restarted holders their replicas failed on another "
                              "rank");
        if (e)
            goto free_all;
        info.reprotect_s = (double)(weft__now_ns() - t2) / 1e9;
    }
    info.version = v;
    k->join = info;
    k->round_err = WEFT_OK;
    k->round_done = v;
    e = weft__ckpt_helper_start(k, d);
    if (e)
        goto free_all;
    *version = v;
free_all:
    weft__free(all);
    return e;
}

static bool worth_retrying(weft_err e)
{
    return e == WEFT_EPEER || e == WEFT_ETIMEDOUT || e == WEFT_EPARSE || e == WEFT_EIO ||
           e == WEFT_EAUTH;
}

weft_err weft_ckpt_join(weft_ckpt *k, const weft_comm_config *cfg, uint64_t *version, weft_diag *d)
{
    if (!cfg)
        return weft_diag_set(d, WEFT_EINVAL, "ckpt: no configuration");
    uint32_t n = cfg->size, rep = k->cfg.replicas;
    if (n < 2 || rep > n - 1)
        return weft_diag_set(d, WEFT_EINVAL, "ckpt: %u replicas need at least %u ranks, not %u",
                             rep, rep + 1 > 2 ? rep + 1 : 2, n);
    if (k->cfg.placement == WEFT_CKPT_PLACE_GROUP && n % (rep + 1))
        return weft_diag_set(d, WEFT_EINVAL,
                             "ckpt: group placement with %u replicas needs a multiple of %u "
                             "ranks, not %u",
                             rep, rep + 1, n);
    if (k->generation && (cfg->rank != k->rank || n != k->size))
        return weft_diag_set(d, WEFT_EINVAL, "ckpt: rank %u of %u cannot rejoin as rank %u of %u",
                             k->rank, k->size, cfg->rank, n);
    /* Before any field of k changes: the helper thread of the last join
     * reads them (ThreadSanitizer: k->rank and k->size written here while
     * its round read them in weft__ckpt_holder). */
    weft__ckpt_helper_stop(k);
    k->rank = cfg->rank;
    k->size = n;
    /* The snapshots grow with the state: buffers may still be registered
     * after a first join that failed (generation 0), and save copies
     * k->total bytes into them. */
    for (int s = 0; s < 2; s++) {
        if (k->own[s].cap >= k->total)
            continue;
        unsigned char *p = weft__malloc(k->total);
        if (!p)
            return weft_diag_set(d, WEFT_ENOMEM, "ckpt: no memory for the %zu-byte snapshots",
                                 k->total);
        weft__free(k->own[s].buf);
        k->own[s] = (weft__ckpt_slot){.buf = p, .cap = k->total};
    }
    weft_err e = WEFT_OK;
    for (uint32_t a = 0; a < k->cfg.join_attempts; a++) {
        e = join_once(k, cfg, version, d);
        if (!e) {
            k->join.attempts = a + 1;
            return WEFT_OK;
        }
        if (!worth_retrying(e))
            break;
    }
    /* A failed join leaves no communicator (weft_ckpt_comm: the last
     * successful join's; the helper thread is stopped), so that save and
     * wait refuse ("not joined") instead of handing a round to no thread. */
    weft_comm_free(k->chan);
    weft_comm_free(k->comm);
    k->chan = k->comm = NULL;
    return e;
}
