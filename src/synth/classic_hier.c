/* Two-level hierarchical rings: inside each host first, then across hosts
 * on each rail (the ranks of one local index), then inside hosts again.
 *
 *   allreduce      intra-host ring reduce-scatter of L blocks, inter-host
 *                  ring allreduce of each block on its rail, intra-host
 *                  ring allgather (L ranks per host, H hosts, L*H chunks)
 *   allgather      inter-host ring allgather on each rail, then intra-host
 *                  ring allgathers of what each rank gathered
 *   reducescatter  intra-host ring reduce-scatters towards the rank of each
 *                  local index, then inter-host rings on each rail
 *
 * Needs at least two hosts of equal size. */
#include "base/alloc.h"
#include "synth/classic_internal.h"

#define RANK(h, j) (hs->ranks[hs->start[(h)] + (j)])

weft_err synth_build_hier(const synth_ctx *c, weft_plan **out)
{
    const synth_hosts *hs = &c->hosts;
    if (hs->per_host == 0 || hs->nhosts < 2 || hs->nhosts == c->n)
        return weft_diag_set(c->d, WEFT_ETOPO,
                             "hier needs at least two hosts (host=) of equal size with more than "
                             "one rank each; this fabric has %u host groups%s",
                             hs->nhosts, hs->per_host ? "" : " of different sizes");
    uint32_t H = hs->nhosts, L = hs->per_host;
    bool ar = c->coll == WEFT_COLL_ALLREDUCE;
    weft_plan *p = NULL;
    weft_err err = synth_plan_new(c, ar ? L * H : 1, 0, &p);
    if (err)
        return err;
    uint32_t big = H > L ? H : L;
    uint32_t *order = weft__malloc((size_t)big * sizeof *order);
    uint32_t *slot = weft__malloc((size_t)big * sizeof *slot);
    synth_emit e;
    synth_emit_init(&e, p);
    if (!order || !slot)
        err = WEFT_ENOMEM;
    weft_buf buf = synth_main_buf(c->coll);
    /* Phase 1 (intra) for allreduce and reduce-scatter. */
    for (uint32_t h = 0; h < H && !err && c->coll != WEFT_COLL_ALLGATHER; h++) {
        for (uint32_t j = 0; j < L; j++)
            order[j] = RANK(h, j);
        if (ar) {
            for (uint32_t j = 0; j < L; j++)
                slot[j] = j * H;
            err = synth_ring_rs(&e, order, L, slot, H, buf, 0);
        } else {
            for (uint32_t g = 0; g < H && !err; g++) {
                for (uint32_t j = 0; j < L; j++)
                    slot[j] = RANK(g, j);
                err = synth_ring_rs(&e, order, L, slot, 1, buf, 0);
            }
        }
    }
    /* Phase 2 (inter, on each rail). */
    for (uint32_t j = 0; j < L && !err; j++) {
        for (uint32_t h = 0; h < H; h++) {
            order[h] = RANK(h, j);
            slot[h] = ar ? j * H + h : RANK(h, j);
        }
        if (c->coll != WEFT_COLL_ALLGATHER)
            err = synth_ring_rs(&e, order, H, slot, 1, buf, 1);
        if (!err && c->coll != WEFT_COLL_REDUCESCATTER)
            err = synth_ring_ag(&e, order, H, slot, 1, buf, 1);
    }
    /* Phase 3 (intra) for allreduce and allgather. */
    for (uint32_t h = 0; h < H && !err && c->coll != WEFT_COLL_REDUCESCATTER; h++) {
        for (uint32_t j = 0; j < L; j++)
            order[j] = RANK(h, j);
        if (ar) {
            for (uint32_t j = 0; j < L; j++)
                slot[j] = j * H;
            err = synth_ring_ag(&e, order, L, slot, H, buf, 0);
        } else {
            for (uint32_t g = 0; g < H && !err; g++) {
                for (uint32_t j = 0; j < L; j++)
                    slot[j] = RANK(g, j);
                err = synth_ring_ag(&e, order, L, slot, 1, buf, 0);
            }
        }
    }
    weft__free(order);
    weft__free(slot);
    return synth_finish(err, &e, p, out);
}
