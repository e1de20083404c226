/* Relayed broadcast and reduce (relay:K): one rank's bytes leave its host
 * (or, for reduce, reach it) through the NICs of K ranks of the host, as FuseLink (OSDI'25) relays
 * a GPU's inter-host traffic through the NICs of other GPUs of its server.
 *
 * Where each rank owns one NIC (GPU-NIC affinity; in the runtime a rank's
 * own WEFT_SOCKET_IFNAME), a transfer from rank a of host A to rank b of
 * host B gets one NIC's rate however many NICs A has. Here the data is cut
 * into K chunks; chunk j leaves A through rank a_j, the j-th rank of A
 * counted from the root (a_0 is the root itself):
 *
 *   root -> a_j            inside A (shared memory), when a_j is not the root
 *   a_j  -> b_j            across, b_j the rank of B with a_j's local index
 *                          (modulo B's size): NIC i to NIC i, one rail
 *   b_j  -> every other rank of B (shared memory)
 *   a_j  -> every other rank of A (shared memory)
 *
 * Chunk j travels on channel j, so the K crossings are independent streams
 * of the executor and leave through K different ranks' NICs at once. The
 * relay is nothing but ordinary ops through the host-mates: the verifier
 * checks it like any plan, and the cost model, the simulator and the
 * runtime see each hop on the route it takes (the crossing a_j -> b_j goes
 * through a_j's NIC on a fabric that gives each rank its own NIC).
 *
 * Each relaying rank also hands its chunk to the rest of its host, so the
 * root sends each byte once to a host-mate and its own chunk 0 to the
 * others, not every chunk to every host-mate (on a100:2 that is 1.75 of
 * the data over the root's NVLink instead of 7).
 *
 * Reduce runs the same hops backwards, each combining: every rank of B
 * into b_j, b_j into a_j across, the rest of A into a_j, a_j into the root.
 *
 * relay:1 is the same schedule without the relay (every chunk leaves
 * through the root's NIC): the baseline. K is capped at the root's host
 * size; relay:auto takes the whole host. On a fabric without hosts every
 * rank is its own host and the plan is a flat broadcast straight from the
 * root (a flat reduce straight into it). O(K x N) ops.
 */
#include "synth/classic_internal.h"

weft_err synth_build_relay(const synth_ctx *c, weft_plan **out)
{
    const synth_hosts *h = &c->hosts;
    uint32_t root = c->root;
    uint32_t ha = h->host_of[root];
    uint32_t na = h->start[ha + 1] - h->start[ha];
    const uint32_t *A = h->ranks + h->start[ha];
    uint32_t lroot = h->local[root];
    uint32_t k = c->param == 0 || c->param > na ? na : c->param;
    weft_buf buf = synth_main_buf(c->coll);
    weft_plan *p = NULL;
    weft_err e = synth_plan_new(c, k, 0, &p);
    if (e)
        return e;
    synth_emit em;
    synth_emit_init(&em, p);
    for (uint32_t j = 0; j < k && !e && c->coll == WEFT_COLL_REDUCE; j++) {
        /* Reduce: the broadcast's hops reversed, each combining. */
        uint32_t la = (lroot + j) % na;
        uint32_t aj = A[la];
        for (uint32_t hb = 0; hb < h->nhosts && !e; hb++) {
            if (hb == ha)
                continue;
            uint32_t nb = h->start[hb + 1] - h->start[hb];
            const uint32_t *B = h->ranks + h->start[hb];
            uint32_t bj = B[la % nb];
            for (uint32_t i = 0; i < nb && !e; i++)
                if (B[i] != bj)
                    e = synth_reduce(&em, B[i], bj, buf, j, 1, j, NULL);
            if (!e)
                e = synth_reduce(&em, bj, aj, buf, j, 1, j, NULL);
        }
        for (uint32_t i = 0; i < na && !e; i++)
            if (A[i] != root && A[i] != aj)
                e = synth_reduce(&em, A[i], aj, buf, j, 1, j, NULL);
        if (!e && aj != root)
            e = synth_reduce(&em, aj, root, buf, j, 1, j, NULL);
    }
    for (uint32_t j = 0; j < k && !e && c->coll == WEFT_COLL_BROADCAST; j++) {
        uint32_t la = (lroot + j) % na;
        uint32_t aj = A[la];
        if (aj != root)
            e = synth_copy(&em, root, aj, buf, j, 1, j, NULL);
        for (uint32_t hb = 0; hb < h->nhosts && !e; hb++) {
            if (hb == ha)
                continue;
            uint32_t nb = h->start[hb + 1] - h->start[hb];
            const uint32_t *B = h->ranks + h->start[hb];
            uint32_t bj = B[la % nb];
            e = synth_copy(&em, aj, bj, buf, j, 1, j, NULL);
            for (uint32_t i = 0; i < nb && !e; i++)
                if (B[i] != bj)
                    e = synth_copy(&em, bj, B[i], buf, j, 1, j, NULL);
        }
        for (uint32_t i = 0; i < na && !e; i++)
            if (A[i] != root && A[i] != aj)
                e = synth_copy(&em, aj, A[i], buf, j, 1, j, NULL);
    }
    return synth_finish(e, &em, p, out);
}
