/* All-to-all: direct (every pair at once) and pairwise exchange.
 *
 * Plans are out of place (in-place all-to-all would overwrite blocks it
 * still has to send). Rank s's block for d is in[d] on s and lands in
 * out[s] on d; the block a rank keeps is a local copy. Pairwise exchange
 * runs N-1 steps: at step k rank s sends to s+k and receives from s-k, and
 * step k starts only after the rank's step k-1 send and receive finished,
 * as MPI's pairwise algorithm does with one sendrecv per step.
 *
 * With a traffic matrix (alltoallv), direct leaves out the pairs with
 * nothing to send (no op for a block of 0 bytes, whose out slot the
 * verifier then does not ask for); pairwise keeps every step, an empty
 * block's op moving 0 bytes, since its steps still synchronise (MPI's
 * sendrecv of 0 elements does too). */
#include "base/alloc.h"
#include "synth/classic_internal.h"

static weft_err a2a(const synth_ctx *c, bool pairwise, weft_plan **out)
{
    uint32_t n = c->n;
    weft_plan *p = NULL;
    weft_err err = synth_plan_new(c, 1, 0, &p);
    if (err)
        return err;
    /* prev[s]: rank s's op of the previous step (send), for pairwise. */
    uint32_t *prev = weft__malloc((size_t)n * sizeof *prev);
    uint32_t *cur = weft__malloc((size_t)n * sizeof *cur);
    synth_emit e;
    synth_emit_init(&e, p);
    if (!prev || !cur)
        err = WEFT_ENOMEM;
    for (uint32_t k = 0; k < n && !err; k++) {
        for (uint32_t s = 0; s < n && !err; s++) {
            uint32_t d = (s + k) % n;
            if (!pairwise && c->traffic && weft_traffic_at(c->traffic, s, d) == 0)
                continue;
            uint32_t deps[2], nd = 0;
            if (pairwise && k > 0) {
                deps[nd++] = prev[s];                   /* my last send */
                deps[nd++] = prev[(s + n - (k - 1)) % n]; /* what I last received */
            }
            err = synth_emit_op(&e, WEFT_OP_COPY, s, WEFT_BUF_IN, d, d, WEFT_BUF_OUT, s, 1, 0, deps,
                             nd, &cur[s]);
        }
        uint32_t *t = prev;
        prev = cur;
        cur = t;
    }
    weft__free(prev);
    weft__free(cur);
    return synth_finish(err, &e, p, out);
}

weft_err synth_build_direct(const synth_ctx *c, weft_plan **out)
{
    return a2a(c, false, out);
}

weft_err synth_build_pairwise(const synth_ctx *c, weft_plan **out)
{
    return a2a(c, true, out);
}
