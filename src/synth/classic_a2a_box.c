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
 * Plans have one chunk per pair (C = 1) and N scratch slots: hier gathers
 * into scratch[B*L + i] of A_j, flash receives into scratch[A*L + j] of
 * B_i. When a box's ranks are consecutive rank ids (every preset) the
 * exchange of a pair of boxes on one rail is one op of L slots; otherwise
 * it is cut into runs (synth_emit_runs). */
#include "base/alloc.h"
#include "synth/classic_internal.h"
#include "weft/bvn.h"

#define RANK(h, j) (hs->ranks[hs->start[(h)] + (j)])

/* Boxes are required: at least two hosts of equal size. */
static weft_err need_boxes(const synth_ctx *c, const char *algo)
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

/* Inside every box: A_i's block for A_j straight to A_j, its own block a
 * local copy. */
static weft_err intra(const synth_ctx *c, synth_emit *e)
{
    const synth_hosts *hs = &c->hosts;
    weft_err err = WEFT_OK;
    for (uint32_t a = 0; a < hs->nhosts && !err; a++)
        for (uint32_t i = 0; i < hs->per_host && !err; i++)
            for (uint32_t j = 0; j < hs->per_host && !err; j++)
                err = synth_emit_op(e, WEFT_OP_COPY, RANK(a, i), WEFT_BUF_IN, RANK(a, j),
                                    RANK(a, j), WEFT_BUF_OUT, RANK(a, i), 1, 0, NULL, 0, NULL);
    return err;
}

weft_err synth_build_a2a_hier(const synth_ctx *c, weft_plan **out)
{
    weft_err err = need_boxes(c, "hier");
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
        err = intra(c, &e);
    /* Gather: A_i's block for B_j into scratch[B*L + i] of A_j. */
    for (uint32_t a = 0; a < H && !err; a++)
        for (uint32_t b = 0; b < H && !err; b++)
            for (uint32_t i = 0; i < L && !err && b != a; i++)
                for (uint32_t j = 0; j < L && !err; j++)
                    err = synth_emit_op(&e, WEFT_OP_COPY, RANK(a, i), WEFT_BUF_IN, RANK(b, j),
                                        RANK(a, j), WEFT_BUF_SCRATCH, b * L + i, 1, 0, NULL, 0,
                                        NULL);
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

/* The box-to-box matrix of a uniform all-to-all, in blocks: L*L between
 * two boxes, nothing inside one (the box's own links carry that). */
static weft_err box_rounds(const synth_ctx *c, weft_bvn *bvn)
{
    uint32_t H = c->hosts.nhosts, L = c->hosts.per_host;
    uint64_t *m = weft__malloc((size_t)H * H * sizeof *m);
    if (!m)
        return WEFT_ENOMEM;
    for (uint32_t a = 0; a < H; a++)
        for (uint32_t b = 0; b < H; b++)
            m[(size_t)a * H + b] = a == b ? 0 : (uint64_t)L * L;
    weft_err err = weft_bvn_decompose(m, H, bvn, c->d);
    weft__free(m);
    return err;
}

weft_err synth_build_flash(const synth_ctx *c, weft_plan **out)
{
    weft_err err = need_boxes(c, "flash");
    if (err)
        return err;
    const synth_hosts *hs = &c->hosts;
    uint32_t H = hs->nhosts, L = hs->per_host, n = c->n;
    weft_bvn bvn = {0};
    if ((err = box_rounds(c, &bvn)))
        return err;
    weft_plan *p = NULL;
    if ((err = synth_plan_new(c, 1, n, &p))) {
        weft_bvn_fini(&bvn);
        return err;
    }
    uint32_t *sidx = weft__malloc((size_t)L * sizeof *sidx);
    uint32_t *didx = weft__malloc((size_t)L * sizeof *didx);
    /* Per rank, the ops of its last round's send: [first, first + count). */
    uint32_t *first = weft__malloc((size_t)n * 2 * sizeof *first);
    uint32_t *cnt = weft__calloc((size_t)n * 2, sizeof *cnt);
    uint32_t *deps = weft__malloc((size_t)4 * L * sizeof *deps);
    /* into[r]: the rank whose last-round send went to r (UINT32_MAX). */
    uint32_t *into = weft__malloc((size_t)n * 2 * sizeof *into);
    synth_emit e;
    synth_emit_init(&e, p);
    if (!sidx || !didx || !first || !cnt || !deps || !into)
        err = WEFT_ENOMEM;
    if (!err)
        err = intra(c, &e);
    for (uint32_t r = 0; r < 2 * n && !err; r++)
        into[r] = UINT32_MAX;
    /* cur/prev halves of first, cnt and into swap every round. */
    uint32_t *pf = first, *pc = cnt, *pi = into, *cf = first + n, *cc = cnt + n, *ci = into + n;
    for (uint32_t k = 0; k < bvn.rounds && !err; k++) {
        const uint32_t *sigma = bvn.perm + (size_t)k * H;
        for (uint32_t r = 0; r < n; r++) { /* an idle rank keeps its last round */
            cf[r] = pf[r];
            cc[r] = pc[r];
            ci[r] = pi[r];
        }
        for (uint32_t a = 0; a < H && !err; a++) {
            uint32_t b = sigma[a];
            if (b == a)
                continue; /* padding: box a idles this round */
            for (uint32_t i = 0; i < L && !err; i++) {
                uint32_t s = RANK(a, i), t = RANK(b, i), nd = 0;
                for (uint32_t q = 0; q < pc[s]; q++)
                    deps[nd++] = pf[s] + q;
                if (pi[s] != UINT32_MAX)
                    for (uint32_t q = 0; q < pc[pi[s]]; q++)
                        deps[nd++] = pf[pi[s]] + q;
                for (uint32_t j = 0; j < L; j++) {
                    sidx[j] = RANK(b, j);
                    didx[j] = a * L + j;
                }
                err = synth_emit_runs(&e, s, WEFT_BUF_IN, sidx, t, WEFT_BUF_SCRATCH, didx, L, 1,
                                      deps, nd, &cf[s], &cc[s]);
                ci[t] = s;
                /* B_i scatters the blocks over the box's links. */
                for (uint32_t j = 0; j < L && !err; j++)
                    err = synth_emit_op(&e, WEFT_OP_COPY, t, WEFT_BUF_SCRATCH, a * L + j,
                                        RANK(b, j), WEFT_BUF_OUT, s, 1, 0, NULL, 0, NULL);
            }
        }
        uint32_t *x = pf;
        pf = cf;
        cf = x;
        x = pc;
        pc = cc;
        cc = x;
        x = pi;
        pi = ci;
        ci = x;
    }
    weft__free(sidx);
    weft__free(didx);
    weft__free(first);
    weft__free(cnt);
    weft__free(deps);
    weft__free(into);
    weft_bvn_fini(&bvn);
    return synth_finish(err, &e, p, out);
}
