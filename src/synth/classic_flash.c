/* FLASH all-to-all (FLASH/FAST, Lei et al., arXiv 2505.09764), on H boxes
 * of L ranks, for a byte matrix M (uniform without one).
 *
 * 1. Box matrix. T[A][B] = the bytes box A sends box B (A != B); what
 *    stays inside a box goes straight over the box's links.
 * 2. Rounds. The Birkhoff-von Neumann decomposition of T (weft/bvn.h)
 *    gives permutations sigma_k of weight w_k. Each pair of boxes (A, B)
 *    is sent whole in its heaviest round (the first among equals), so
 *    every round is a partial permutation of boxes: a box sends to one box
 *    and receives from one. A uniform matrix has one round per pair
 *    exactly (H-1 rounds). Splitting a pair over all its rounds, as the
 *    exact decomposition would, needs blocks cut across rounds; not done.
 * 3. Balance (FAST's intra-server rebalancing). The bytes of (A, B) are
 *    spread over the L rails: a block of A_i stays on rail i while rail i
 *    carries at most T[A][B]/L; the blocks that do not fit go, largest
 *    first, to the least loaded rail (ties: the destination's rail, then
 *    the lowest). A uniform matrix moves nothing.
 * 4. Plan. A block of A_i for B_j on rail p: A_i hands it to A_p over the
 *    box's links (unless p == i), A_p sends every block of (A, B) on rail
 *    p as one message to B_p (one-to-one, so no NIC has incast), and B_p
 *    hands it to B_j (unless p == j). A rank's send of round k waits for
 *    its send of its previous round and for the previous round's send into
 *    it.
 *
 * Scratch: rank r holds the blocks it gathers to send first, then those
 * it receives, one slot each. Time O(N^2 + BvN(H)) to plan; the plan has
 * O(N^2) ops. */
#include <stdlib.h>

#include "base/alloc.h"
#include "synth/classic_internal.h"
#include "weft/bvn.h"

#define RANK(h, j) (hs->ranks[hs->start[(h)] + (j)])

typedef struct flash_blk {
    uint32_t i, j; /* source and destination local index */
    uint64_t bytes;
} flash_blk;

static int by_bytes_desc(const void *a, const void *b)
{
    const flash_blk *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    if (x->i != y->i)
        return x->i < y->i ? -1 : 1;
    return x->j < y->j ? -1 : x->j > y->j;
}

typedef struct flash {
    const synth_ctx *c;
    const uint64_t *m;
    uint32_t H, L, n;
    uint32_t *rail;      /* n x n: rail (local index) of block (s, d) across boxes */
    uint32_t *pair_round; /* H x H: the round of pair (A, B), UINT32_MAX none */
    uint32_t *gath, *recv; /* per rank: scratch slots gathered / received */
} flash;

static uint64_t blk_bytes(const flash *f, uint32_t s, uint32_t d)
{
    return f->m ? f->m[(size_t)s * f->n + d] : 1;
}

/* Steps 1 and 2: box matrix, BvN, each pair's round. */
static weft_err rounds(flash *f, weft_bvn *bvn)
{
    const synth_hosts *hs = &f->c->hosts;
    uint32_t H = f->H, L = f->L;
    uint64_t *T = weft__calloc((size_t)H * H, sizeof *T);
    uint64_t *best = weft__calloc((size_t)H * H, sizeof *best);
    weft_err err = WEFT_ENOMEM;
    if (!T || !best)
        goto free_t;
    for (uint32_t a = 0; a < H; a++)
        for (uint32_t b = 0; b < H; b++)
            for (uint32_t i = 0; i < L && a != b; i++)
                for (uint32_t j = 0; j < L; j++)
                    T[(size_t)a * H + b] += blk_bytes(f, RANK(a, i), RANK(b, j));
    if ((err = weft_bvn_decompose(T, H, bvn, f->c->d)))
        goto free_t;
    for (size_t q = 0; q < (size_t)H * H; q++)
        f->pair_round[q] = UINT32_MAX;
    for (uint32_t k = 0; k < bvn->rounds; k++) {
        for (uint32_t a = 0; a < H; a++) {
            uint32_t b = bvn->perm[(size_t)k * H + a];
            size_t q = (size_t)a * H + b;
            if (b != a && T[q] > 0 && bvn->weight[k] > best[q]) {
                best[q] = bvn->weight[k];
                f->pair_round[q] = k;
            }
        }
    }
free_t:
    weft__free(T);
    weft__free(best);
    return err;
}

/* Step 3 for the pair (a, b): fills f->rail for its blocks and counts the
 * scratch slots. blk and load are work arrays of L*L and L entries. */
static void balance(flash *f, uint32_t a, uint32_t b, flash_blk *blk, uint64_t *load)
{
    const synth_hosts *hs = &f->c->hosts;
    uint32_t L = f->L, nb = 0;
    uint64_t total = 0;
    for (uint32_t i = 0; i < L; i++)
        for (uint32_t j = 0; j < L; j++)
            total += blk_bytes(f, RANK(a, i), RANK(b, j));
    for (uint32_t p = 0; p < L; p++)
        load[p] = 0;
    for (uint32_t i = 0; i < L; i++) {
        for (uint32_t j = 0; j < L; j++) {
            uint64_t x = blk_bytes(f, RANK(a, i), RANK(b, j));
            if (x == 0)
                continue;
            /* (load + x) * L <= total, without overflow: load + x <= total. */
            if (load[i] == 0 || (load[i] + x) <= total / L) {
                load[i] += x;
                f->rail[(size_t)RANK(a, i) * f->n + RANK(b, j)] = i;
            } else {
                blk[nb++] = (flash_blk){i, j, x};
            }
        }
    }
    qsort(blk, nb, sizeof *blk, by_bytes_desc);
    for (uint32_t q = 0; q < nb; q++) {
        uint32_t best = blk[q].j;
        for (uint32_t p = 0; p < L; p++)
            if (load[p] < load[best])
                best = p;
        load[best] += blk[q].bytes;
        f->rail[(size_t)RANK(a, blk[q].i) * f->n + RANK(b, blk[q].j)] = best;
    }
    for (uint32_t i = 0; i < L; i++) {
        for (uint32_t j = 0; j < L; j++) {
            uint32_t s = RANK(a, i), d = RANK(b, j);
            if (blk_bytes(f, s, d) == 0)
                continue;
            uint32_t p = f->rail[(size_t)s * f->n + d];
            if (p != i)
                f->gath[RANK(a, p)]++;
            f->recv[RANK(b, p)]++;
        }
    }
}

weft_err synth_build_flash(const synth_ctx *c, weft_plan **out)
{
    return synth_flash_plan(c, NULL, out);
}

weft_err synth_flash_plan(const synth_ctx *c, const uint64_t *m, weft_plan **out)
{
    weft_err err = synth_need_boxes(c, "flash");
    if (err)
        return err;
    const synth_hosts *hs = &c->hosts;
    flash f = {.c = c, .m = m, .H = hs->nhosts, .L = hs->per_host, .n = c->n};
    uint32_t H = f.H, L = f.L, n = f.n;
    weft_bvn bvn = {0};
    weft_plan *p = NULL;
    synth_emit e;
    synth_emit_init(&e, NULL);
    f.rail = weft__malloc((size_t)n * n * sizeof *f.rail);
    f.pair_round = weft__malloc((size_t)H * H * sizeof *f.pair_round);
    f.gath = weft__calloc((size_t)n * 2, sizeof *f.gath);
    flash_blk *blk = weft__malloc((size_t)L * L * sizeof *blk);
    uint64_t *load = weft__malloc((size_t)L * sizeof *load);
    /* Per pair and rail: the blocks of the message (source, dest ranks). */
    uint32_t *ms = weft__malloc((size_t)L * L * sizeof *ms);
    uint32_t *md = weft__malloc((size_t)L * L * sizeof *md);
    uint32_t *sidx = weft__malloc((size_t)L * L * sizeof *sidx);
    uint32_t *didx = weft__malloc((size_t)L * L * sizeof *didx);
    uint32_t *deps = weft__malloc((size_t)4 * L * L * sizeof *deps);
    /* Per rank: its last round's send ops [first, first + count) and the
     * rank whose last send came into it; prev and cur halves. */
    uint32_t *first = weft__malloc((size_t)n * 2 * sizeof *first);
    uint32_t *cnt = weft__calloc((size_t)n * 2, sizeof *cnt);
    uint32_t *into = weft__malloc((size_t)n * 2 * sizeof *into);
    uint32_t *gpos = weft__calloc((size_t)n * 2, sizeof *gpos); /* next free slots */
    if (!f.rail || !f.pair_round || !f.gath || !blk || !load || !ms || !md || !sidx || !didx ||
        !deps || !first || !cnt || !into || !gpos) {
        err = WEFT_ENOMEM;
        goto done;
    }
    f.recv = f.gath + n;
    if ((err = rounds(&f, &bvn)))
        goto done;
    for (uint32_t a = 0; a < H; a++)
        for (uint32_t b = 0; b < H; b++)
            if (a != b && f.pair_round[(size_t)a * H + b] != UINT32_MAX)
                balance(&f, a, b, blk, load);
    uint32_t scratch = 0;
    for (uint32_t r = 0; r < n; r++) {
        if (f.gath[r] + f.recv[r] > scratch)
            scratch = f.gath[r] + f.recv[r];
        gpos[r] = 0;             /* gathered blocks from slot 0 */
        gpos[n + r] = f.gath[r]; /* received ones after them */
    }
    if ((err = synth_plan_new(c, 1, scratch ? scratch : 1, &p)))
        goto done;
    synth_emit_init(&e, p);
    if ((err = synth_a2a_intra(c, &e, m)))
        goto done;
    for (uint32_t r = 0; r < 2 * n; r++)
        into[r] = UINT32_MAX;
    uint32_t *pf = first, *pc = cnt, *pi = into, *cf = first + n, *cc = cnt + n, *ci = into + n;
    const weft_buf S = WEFT_BUF_SCRATCH;
    for (uint32_t k = 0; k < bvn.rounds && !err; k++) {
        for (uint32_t r = 0; r < n; r++) { /* an idle rank keeps its last round */
            cf[r] = pf[r];
            cc[r] = pc[r];
            ci[r] = pi[r];
        }
        for (uint32_t a = 0; a < H && !err; a++) {
            uint32_t b = bvn.perm[(size_t)k * H + a];
            if (b == a || f.pair_round[(size_t)a * H + b] != k)
                continue;
            for (uint32_t q = 0; q < L && !err; q++) {
                uint32_t src = RANK(a, q), dst = RANK(b, q);
                /* The message on rail q: src's own blocks (from in), then
                 * the gathered ones (from scratch). */
                uint32_t nown = 0, ng = 0;
                for (uint32_t j = 0; j < L; j++) {
                    uint32_t d = RANK(b, j);
                    if (blk_bytes(&f, src, d) && f.rail[(size_t)src * n + d] == q) {
                        ms[nown] = src;
                        md[nown++] = d;
                    }
                }
                for (uint32_t i = 0; i < L; i++) {
                    for (uint32_t j = 0; j < L && i != q; j++) {
                        uint32_t s = RANK(a, i), d = RANK(b, j);
                        if (blk_bytes(&f, s, d) && f.rail[(size_t)s * n + d] == q) {
                            ms[nown + ng] = s;
                            md[nown + ng++] = d;
                        }
                    }
                }
                uint32_t tot = nown + ng;
                if (tot == 0)
                    continue;
                uint32_t g0 = gpos[src];
                for (uint32_t x = 0; x < ng && !err; x++) /* gather into src */
                    err = synth_emit_op(&e, WEFT_OP_COPY, ms[nown + x], WEFT_BUF_IN,
                                        md[nown + x], src, S, g0 + x, 1, 0, NULL, 0, NULL);
                gpos[src] += ng;
                uint32_t nd = 0;
                for (uint32_t x = 0; x < pc[src]; x++)
                    deps[nd++] = pf[src] + x;
                if (pi[src] != UINT32_MAX)
                    for (uint32_t x = 0; x < pc[pi[src]]; x++)
                        deps[nd++] = pf[pi[src]] + x;
                uint32_t y0 = gpos[n + dst], f1 = 0, n1 = 0, f2 = 0, n2 = 0;
                gpos[n + dst] += tot;
                for (uint32_t x = 0; x < tot; x++)
                    didx[x] = y0 + x;
                if (!err && nown)
                    err = synth_emit_runs(&e, src, WEFT_BUF_IN, md, dst, S, didx, nown, 1, deps,
                                          nd, &f1, &n1);
                for (uint32_t x = 0; x < ng; x++)
                    sidx[x] = g0 + x;
                if (!err && ng)
                    err = synth_emit_runs(&e, src, S, sidx, dst, S, didx + nown, ng, 1, deps, nd,
                                          &f2, &n2);
                cf[src] = nown ? f1 : f2;
                cc[src] = n1 + n2;
                ci[dst] = src;
                for (uint32_t x = 0; x < tot && !err; x++) /* scatter from dst */
                    err = synth_emit_op(&e, WEFT_OP_COPY, dst, S, y0 + x, md[x], WEFT_BUF_OUT,
                                        ms[x], 1, 0, NULL, 0, NULL);
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
done:
    weft__free(f.rail);
    weft__free(f.pair_round);
    weft__free(f.gath);
    weft__free(blk);
    weft__free(load);
    weft__free(ms);
    weft__free(md);
    weft__free(sidx);
    weft__free(didx);
    weft__free(deps);
    weft__free(first);
    weft__free(cnt);
    weft__free(into);
    weft__free(gpos);
    weft_bvn_fini(&bvn);
    if (!p) {
        synth_emit_fini(&e);
        return err;
    }
    return synth_finish(err, &e, p, out);
}
