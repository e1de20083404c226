/* All-to-all on boxes: the hierarchical schedule (NCCL's PXN) and FLASH.
 *
 * Both need H >= 2 boxes (host= groups) of L ranks each; box A's local
 * rank i is A_i. A rank's blocks for its own box go straight over the box's
 * fast links, and its own block is a local copy. Between boxes each byte
 * crosses the scale-out network once, on the rail of one local index:
 *
 *   hier   (PXN: gather, one exchange per rail, no scatter needed) A_i
 *          hands its block for B_j to A_j over the box's links; A_j then
 *          sends the L blocks of its box for B_j in one message on rail j,
 *          straight into B_j's output. All boxes send at once.
 *   flash  (FLASH/FAST, Lei et al., arXiv 2505.09764) the box-to-box
 *          demand is first balanced over the box's NICs (for a uniform
 *          matrix every A_i already holds 1/L of box A's bytes for B, so
 *          nothing moves), then sent box to box in the rounds of the
 *          Birkhoff-von Neumann decomposition of the H x H box matrix
 *          (weft/bvn.h): in round k box A sends to box sigma_k(A) only,
 *          A_i to B_i on rail i, so every NIC sends to one NIC and receives
 *          from one (no incast); a rank's round k starts after its round
 *          k-1 send and the round k-1 send into it. The receiver B_i then
 *          scatters the L blocks to B_j over the box's links.
 *
 * Plans have one chunk per pair (C = 1). hier gathers into scratch[B*L + i]
 * of A_j (N scratch slots); flash is in classic_flash.c. When a box's ranks
 * are consecutive rank ids (every preset) the exchange of a pair of boxes
 * on one rail is one op of L slots; otherwise it is cut into runs
 * (synth_emit_runs). */
#include "base/alloc.h"
#include "synth/classic_internal.h"

#define RANK(h, j) (hs->ranks[hs->start[(h)] + (j)])

weft_err synth_need_boxes(const synth_ctx *c, const char *algo)
{
    const synth_hosts *hs = &c->hosts;
    if (hs->per_host == 0 || hs->nhosts < 2 || hs->nhosts == c->n)
        return weft_diag_set(c->d, WEFT_ETOPO,
                             "%s all-to-all needs boxes: at least two hosts (host=) of equal size "
                             "with more than one rank each; this fabric has %u host group%s%s",
                             algo, hs->nhosts, hs->nhosts == 1 ? "" : "s",
                             hs->per_host ? (hs->nhosts == c->n ? " of one rank (no boxes)" : "")
                                          : " of different sizes");
    return WEFT_OK;
}

weft_err synth_a2a_intra(const synth_ctx *c, synth_emit *e, const uint64_t *m, uint32_t chunks)
{
    const synth_hosts *hs = &c->hosts;
    weft_err err = WEFT_OK;
    for (uint32_t a = 0; a < hs->nhosts && !err; a++)
        for (uint32_t i = 0; i < hs->per_host && !err; i++)
            for (uint32_t j = 0; j < hs->per_host && !err; j++) {
                uint32_t s = RANK(a, i), d = RANK(a, j);
                if (m && m[(size_t)s * c->n + d] == 0)
                    continue;
                err = synth_emit_op(e, WEFT_OP_COPY, s, WEFT_BUF_IN, d * chunks, d, WEFT_BUF_OUT,
                                    s * chunks, chunks, 0, NULL, 0, NULL);
            }
    return err;
}

weft_err synth_build_a2a_hier(const synth_ctx *c, weft_plan **out)
{
    weft_err err = synth_need_boxes(c, "hier");
    if (err)
        return err;
    const synth_hosts *hs = &c->hosts;
    uint32_t H = hs->nhosts, L = hs->per_host;
    weft_plan *p = NULL;
    if ((err = synth_plan_new(c, 1, c->n, &p)))
        return err;
    uint32_t *sidx = weft__malloc((size_t)L * sizeof *sidx);
    uint32_t *didx = weft__malloc((size_t)L * sizeof *didx);
    synth_emit e;
    synth_emit_init(&e, p);
    if (!sidx || !didx)
        err = WEFT_ENOMEM;
    if (!err)
        err = synth_a2a_intra(c, &e, NULL, 1);
    /* Gather: A_i's block for B_j into scratch[B*L + i] of A_j. */
    for (uint32_t a = 0; a < H && !err; a++)
        for (uint32_t b = 0; b < H && !err; b++)
            for (uint32_t i = 0; i < L && !err && b != a; i++)
                for (uint32_t j = 0; j < L && !err; j++)
                    err =
                        synth_emit_op(&e, WEFT_OP_COPY, RANK(a, i), WEFT_BUF_IN, RANK(b, j),
                                      RANK(a, j), WEFT_BUF_SCRATCH, b * L + i, 1, 0, NULL, 0, NULL);
    /* One message per pair of boxes and rail: A_j to B_j's out[A_*]. */
    for (uint32_t a = 0; a < H && !err; a++) {
        for (uint32_t b = 0; b < H && !err; b++) {
            for (uint32_t j = 0; j < L && !err && b != a; j++) {
                for (uint32_t i = 0; i < L; i++) {
                    sidx[i] = b * L + i;
                    didx[i] = RANK(a, i);
                }
                err = synth_emit_runs(&e, RANK(a, j), WEFT_BUF_SCRATCH, sidx, RANK(b, j),
                                      WEFT_BUF_OUT, didx, L, 1, NULL, 0, NULL, NULL);
            }
        }
    }
    weft__free(sidx);
    weft__free(didx);
    return synth_finish(err, &e, p, out);
}
