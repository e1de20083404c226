/* All-to-all: direct (every pair at once), pairwise exchange and Bruck.
 *
 * Plans are out of place (in-place all-to-all would overwrite blocks it
 * still has to send). Rank s's block for d is in[d] on s and lands in
 * out[s] on d; the block a rank keeps is a local copy. Pairwise exchange
 * runs N-1 steps: at step k rank s sends to s+k and receives from s-k, and
 * step k starts only after the rank's step k-1 send and receive finished,
 * as MPI's pairwise algorithm does with one sendrecv per step.
 *
 * Bruck (Bruck et al., "Efficient algorithms for all-to-all communications
 * in multiport message-passing systems", IEEE TPDS 1997), for small
 * messages: ceil(log2 N) steps instead of N-1. Rank r first rotates its
 * blocks into scratch, tmp[i] = in[(r+i) mod N] (the block that must
 * travel i ranks on); at step k it packs the blocks tmp[i] whose bit k of i
 * is set into one message, sends it to r + 2^k and unpacks what r - 2^k
 * sent into the same positions; after the last step tmp[i] on r is the
 * block of rank r - i, copied to out[r - i]. Each block crosses one hop
 * per set bit of its distance, so about half of the data moves at every
 * step: log2(N)/2 times direct's bytes, in log2(N) messages per rank.
 * Scratch: tmp (N slots), the packed message and the received one (P
 * slots each, P the most blocks one step sends). Packing and unpacking are
 * local copies; only the packed message crosses links. With a traffic
 * matrix every block keeps its own size as it travels, so a step's
 * messages differ from rank to rank.
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
                deps[nd++] = prev[s];                     /* my last send */
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

weft_err synth_emit_runs(synth_emit *e, uint32_t src, weft_buf sbuf, const uint32_t *sidx,
                         uint32_t dst, weft_buf dbuf, const uint32_t *didx, uint32_t cnt,
                         uint32_t channel, const uint32_t *extra, uint32_t nextra, uint32_t *first,
                         uint32_t *nops)
{
    weft_err err = WEFT_OK;
    uint32_t made = 0, id = 0;
    for (uint32_t k = 0; k < cnt && !err;) {
        uint32_t len = 1;
        while (k + len < cnt && sidx[k + len] == sidx[k] + len && didx[k + len] == didx[k] + len)
            len++;
        err = synth_emit_op(e, WEFT_OP_COPY, src, sbuf, sidx[k], dst, dbuf, didx[k], len, channel,
                            extra, nextra, &id);
        if (!err && made++ == 0 && first)
            *first = id;
        k += len;
    }
    if (nops)
        *nops = made;
    return err;
}

weft_err synth_build_a2a_bruck(const synth_ctx *c, weft_plan **out)
{
    uint32_t n = c->n, P = 0;
    for (uint64_t bit = 1; bit < n; bit <<= 1) {
        uint32_t m = 0;
        for (uint32_t i = 0; i < n; i++)
            m += (i & bit) != 0;
        P = m > P ? m : P;
    }
    weft_plan *p = NULL;
    weft_err err = synth_plan_new(c, 1, n + 2 * P, &p);
    if (err)
        return err;
    uint32_t *a = weft__malloc((size_t)n * sizeof *a);
    uint32_t *b = weft__malloc((size_t)n * sizeof *b);
    synth_emit e;
    synth_emit_init(&e, p);
    if (!a || !b)
        err = WEFT_ENOMEM;
    const weft_buf S = WEFT_BUF_SCRATCH;
    /* Rotate: tmp[i] = in[(r+i) mod N]. */
    for (uint32_t r = 0; r < n && !err; r++) {
        for (uint32_t i = 0; i < n; i++) {
            a[i] = (r + i) % n;
            b[i] = i;
        }
        err = synth_emit_runs(&e, r, WEFT_BUF_IN, a, r, S, b, n, 0, NULL, 0, NULL, NULL);
    }
    for (uint64_t bit = 1; bit < n && !err; bit <<= 1) {
        uint32_t m = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (i & bit) {
                a[m] = i;     /* tmp positions */
                b[m] = n + m; /* the packed message */
                m++;
            }
        }
        for (uint32_t r = 0; r < n && !err; r++)
            err = synth_emit_runs(&e, r, S, a, r, S, b, m, 0, NULL, 0, NULL, NULL);
        for (uint32_t r = 0; r < n && !err; r++)
            err = synth_emit_op(&e, WEFT_OP_COPY, r, S, n, (uint32_t)((r + bit) % n), S, n + P, m,
                                0, NULL, 0, NULL);
        for (uint32_t q = 0; q < m; q++)
            b[q] = n + P + q; /* the received message */
        for (uint32_t r = 0; r < n && !err; r++)
            err = synth_emit_runs(&e, r, S, b, r, S, a, m, 0, NULL, 0, NULL, NULL);
    }
    /* Unrotate: out[(r-i) mod N] = tmp[i]. */
    for (uint32_t r = 0; r < n && !err; r++) {
        for (uint32_t i = 0; i < n; i++) {
            a[i] = i;
            b[i] = (r + n - i) % n;
        }
        err = synth_emit_runs(&e, r, S, a, r, WEFT_BUF_OUT, b, n, 0, NULL, 0, NULL, NULL);
    }
    weft__free(a);
    weft__free(b);
    return synth_finish(err, &e, p, out);
}
