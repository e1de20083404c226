/* Rings: ring, biring and rings:K for allgather, reduce-scatter and
 * allreduce, and pipelined chains for broadcast and reduce.
 *
 * Ring j of K: on a fabric with hosts, the host-following ring order
 * (rankorder.h) with every host entered j/2 local positions later, so
 * different rings cross hosts on different rails; on a hostless fabric the
 * rank order walked with the (j/2)-th stride coprime to N. Odd rings run in
 * the opposite direction. Ring j carries its own share of the chunks on
 * channel j. */
#include <string.h>

#include "base/alloc.h"
#include "synth/classic_internal.h"

static uint32_t gcd_u32(uint32_t a, uint32_t b)
{
    while (b) {
        uint32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The order of ring j (n entries). */
static void ring_order(const synth_ctx *c, uint32_t j, uint32_t *order)
{
    uint32_t n = c->n;
    if (c->hosts.per_host > 1 || c->hosts.nhosts < n) {
        synth_ring_order(&c->hosts, j / 2, order);
    } else {
        /* Strides s and n-s give the same ring reversed, so only
         * 1 .. n/2 are used, cycling when K asks for more rings. */
        uint32_t ncoprime = 0, stride = 1;
        for (uint32_t s = 1; s <= (n > 2 ? n / 2 : 1); s++)
            ncoprime += gcd_u32(s, n) == 1;
        for (uint32_t s = 1, want = (j / 2) % ncoprime;; s++) {
            if (gcd_u32(s, n) == 1 && want-- == 0) {
                stride = s;
                break;
            }
        }
        for (uint32_t p = 0; p < n; p++)
            order[p] = (uint32_t)(((uint64_t)p * stride) % n);
    }
    if (j % 2) {
        for (uint32_t a = 0, b = n - 1; a < b; a++, b--) {
            uint32_t t = order[a];
            order[a] = order[b];
            order[b] = t;
        }
    }
}

weft_err synth_ring_rs(synth_emit *e, const uint32_t *order, uint32_t n, const uint32_t *slot,
                       uint32_t count, weft_buf buf, uint32_t channel)
{
    for (uint32_t s = 0; s + 1 < n; s++) {
        for (uint32_t p = 0; p < n; p++) {
            uint32_t q = (p + 2 * n - s - 1) % n;
            weft_err err =
                synth_reduce(e, order[p], order[(p + 1) % n], buf, slot[q], count, channel, NULL);
            if (err)
                return err;
        }
    }
    return WEFT_OK;
}

weft_err synth_ring_ag(synth_emit *e, const uint32_t *order, uint32_t n, const uint32_t *slot,
                       uint32_t count, weft_buf buf, uint32_t channel)
{
    for (uint32_t s = 0; s + 1 < n; s++) {
        for (uint32_t p = 0; p < n; p++) {
            uint32_t q = (p + n - s) % n;
            weft_err err =
                synth_copy(e, order[p], order[(p + 1) % n], buf, slot[q], count, channel, NULL);
            if (err)
                return err;
        }
    }
    return WEFT_OK;
}

/* A chain through order rotated to start (broadcast) or end (reduce) at
 * the root, moving slot `index`. */
static weft_err chain(synth_emit *e, const synth_ctx *c, const uint32_t *order, uint32_t index,
                      uint32_t channel)
{
    uint32_t n = c->n, at = 0;
    while (order[at] != c->root)
        at++;
    bool bcast = c->coll == WEFT_COLL_BROADCAST;
    for (uint32_t h = 0; h + 1 < n; h++) {
        /* Broadcast: root, root+1, ...; reduce: root+1, ..., root. */
        uint32_t from = order[(at + h + (bcast ? 0 : 1)) % n];
        uint32_t to = order[(at + h + 1 + (bcast ? 0 : 1)) % n];
        weft_err err = bcast ? synth_copy(e, from, to, WEFT_BUF_OUT, index, 1, channel, NULL)
                             : synth_reduce(e, from, to, WEFT_BUF_OUT, index, 1, channel, NULL);
        if (err)
            return err;
    }
    return WEFT_OK;
}

weft_err synth_build_rings(const synth_ctx *c, weft_plan **out)
{
    uint32_t n = c->n, k = c->param;
    uint32_t chunks = c->coll == WEFT_COLL_ALLREDUCE ? k * n : k;
    weft_plan *p = NULL;
    weft_err err = synth_plan_new(c, chunks, 0, &p);
    if (err)
        return err;
    uint32_t *order = weft__malloc((size_t)n * sizeof *order);
    uint32_t *slot = weft__malloc((size_t)n * sizeof *slot);
    synth_emit e;
    synth_emit_init(&e, p);
    if (!order || !slot) {
        err = WEFT_ENOMEM;
        goto done;
    }
    weft_buf buf = synth_main_buf(c->coll);
    for (uint32_t j = 0; j < k && !err; j++) {
        ring_order(c, j, order);
        switch (c->coll) {
        case WEFT_COLL_ALLGATHER:
        case WEFT_COLL_REDUCESCATTER:
            for (uint32_t q = 0; q < n; q++)
                slot[q] = order[q] * k + j;
            err = c->coll == WEFT_COLL_ALLGATHER ? synth_ring_ag(&e, order, n, slot, 1, buf, j)
                                                 : synth_ring_rs(&e, order, n, slot, 1, buf, j);
            break;
        case WEFT_COLL_ALLREDUCE:
            for (uint32_t q = 0; q < n; q++)
                slot[q] = j * n + q;
            err = synth_ring_rs(&e, order, n, slot, 1, buf, j);
            if (!err)
                err = synth_ring_ag(&e, order, n, slot, 1, buf, j);
            break;
        default: /* broadcast, reduce */
            err = chain(&e, c, order, j, j);
            break;
        }
    }
done:
    weft__free(order);
    weft__free(slot);
    return synth_finish(err, &e, p, out);
}

weft_err weft_classic_ring_order(const weft_topo *t, uint32_t *order, weft_diag *d)
{
    uint32_t n = weft_topo_num_ranks(t);
    if (n < 2)
        return weft_diag_set(d, WEFT_ETOPO, "ring needs at least 2 ranks, the fabric has %u", n);
    synth_ctx c = {.topo = t, .n = n, .d = d};
    weft_err e = synth_hosts_init(&c.hosts, t);
    if (e)
        return weft_diag_code(d, e);
    ring_order(&c, 0, order);
    synth_hosts_fini(&c.hosts);
    return WEFT_OK;
}
