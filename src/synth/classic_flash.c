/* FLASH all-to-all (FLASH/FAST, Lei et al., arXiv 2505.09764), on H boxes
 * of L ranks, for a byte matrix M (uniform without one).
 *
 * 1. Box matrix. T[A][B] = the bytes box A sends box B (A != B); what
 *    stays inside a box goes straight over the box's links.
 * 2. Rounds. The Birkhoff-von Neumann decomposition of T (weft/bvn.h)
 *    gives permutations sigma_k of weight w_k; pair (A, B) is in the
 *    rounds whose sigma_k(A) = B, and their weights sum to at least
 *    T[A][B]. The pair's blocks, largest first, fill its rounds in order
 *    (next fit: a round takes blocks until its weight is used up), so the
 *    bytes follow the decomposition as closely as whole blocks allow (a
 *    block is never cut; synth_flash_plan_split cuts every block into the
 *    plan's C chunks and places those, so a block may span rounds:
 *    docs/algorithms.md measures when that helps). Every round is a
 *    partial permutation of boxes: a
 *    box sends to one box and receives from one. A uniform matrix has one
 *    round per pair (H-1 rounds).
 * 3. Balance (FAST's intra-server rebalancing). The bytes of (A, B) in one
 *    round are spread over the L rails: a block of A_i stays on rail i
 *    while rail i carries at most 1/L of them; the blocks that do not fit
 *    go, largest first, to the least loaded rail (ties: the destination's
 *    rail, then the lowest). A uniform matrix moves nothing.
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
    uint32_t i, j;  /* source and destination local index */
    uint32_t piece; /* which of the block's C chunks (0 when C = 1) */
    uint32_t round; /* the BvN round that sends it */
    uint32_t rail;  /* the local index of the NICs it crosses */
    uint64_t bytes;
} flash_blk;

static int by_bytes_desc(const void *a, const void *b)
{
    const flash_blk *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    if (x->i != y->i)
        return x->i < y->i ? -1 : 1;
    if (x->j != y->j)
        return x->j < y->j ? -1 : 1;
    return x->piece < y->piece ? -1 : x->piece > y->piece;
}

static int by_round(const void *a, const void *b)
{
    const flash_blk *x = a, *y = b;
    if (x->round != y->round)
        return x->round < y->round ? -1 : 1;
    return by_bytes_desc(a, b);
}

typedef struct flash {
    const synth_ctx *c;
    const uint64_t *m;
    uint32_t H, L, n;
    uint32_t C; /* chunks per block: the pieces placed one by one */
    weft_bvn bvn;
    /* Pair q = A*H + B: its rounds pr[ps[q] .. ps[q+1]) in order, and its
     * non-empty blocks pb[q*L*L .. q*L*L + nb[q]), sorted by round. */
    uint32_t *ps, *pr, *nb;
    flash_blk *pb;
    uint32_t *gath, *recv; /* per rank: scratch slots gathered / received */
} flash;

/* A block's weight: its bytes, or without a matrix C (every block equal,
 * so each of its C pieces weighs 1 and none is empty). */
static uint64_t blk_bytes(const flash *f, uint32_t s, uint32_t d)
{
    return f->m ? f->m[(size_t)s * f->n + d] : f->C;
}

/* Steps 1 and 2: box matrix, BvN, each pair's rounds. */
static weft_err rounds(flash *f)
{
    const synth_hosts *hs = &f->c->hosts;
    uint32_t H = f->H, L = f->L;
    uint64_t *T = weft__calloc((size_t)H * H, sizeof *T);
    if (!T)
        return WEFT_ENOMEM;
    for (uint32_t a = 0; a < H; a++)
        for (uint32_t b = 0; b < H; b++)
            for (uint32_t i = 0; i < L && a != b; i++)
                for (uint32_t j = 0; j < L; j++)
                    T[(size_t)a * H + b] += blk_bytes(f, RANK(a, i), RANK(b, j));
    weft_err err = weft_bvn_decompose(T, H, &f->bvn, f->c->d);
    if (err)
        goto free_t;
    const weft_bvn *v = &f->bvn;
    f->ps = weft__calloc((size_t)H * H + 1, sizeof *f->ps);
    if (!f->ps) {
        err = WEFT_ENOMEM;
        goto free_t;
    }
    for (uint32_t k = 0; k < v->rounds; k++)
        for (uint32_t a = 0; a < H; a++) {
            uint32_t b = v->perm[(size_t)k * H + a];
            if (b != a && T[(size_t)a * H + b] > 0)
                f->ps[(size_t)a * H + b + 1]++;
        }
    for (size_t q = 0; q < (size_t)H * H; q++)
        f->ps[q + 1] += f->ps[q];
    f->pr = weft__malloc(((size_t)f->ps[(size_t)H * H] + 1) * sizeof *f->pr);
    uint32_t *at = weft__malloc((size_t)H * H * sizeof *at);
    if (!f->pr || !at) {
        weft__free(at);
        err = WEFT_ENOMEM;
        goto free_t;
    }
    for (size_t q = 0; q < (size_t)H * H; q++)
        at[q] = f->ps[q];
    for (uint32_t k = 0; k < v->rounds; k++)
        for (uint32_t a = 0; a < H; a++) {
            uint32_t b = v->perm[(size_t)k * H + a];
            if (b != a && T[(size_t)a * H + b] > 0)
                f->pr[at[(size_t)a * H + b]++] = k;
        }
    weft__free(at);
free_t:
    weft__free(T);
    return err;
}

/* Step 3 for one round's blocks g[0 .. cnt) of pair (a, b); load has L
 * entries. */
static void balance(flash *f, uint32_t a, uint32_t b, flash_blk *g, uint32_t cnt, uint64_t *load)
{
    const synth_hosts *hs = &f->c->hosts;
    uint32_t L = f->L;
    uint64_t total = 0;
    for (uint32_t x = 0; x < cnt; x++)
        total += g[x].bytes;
    for (uint32_t p = 0; p < L; p++)
        load[p] = 0;
    for (uint32_t x = 0; x < cnt; x++) { /* largest first: g is sorted so */
        uint32_t i = g[x].i;
        if (load[i] == 0 || load[i] + g[x].bytes <= total / L) {
            load[i] += g[x].bytes;
            g[x].rail = i;
        } else {
            g[x].rail = UINT32_MAX;
        }
    }
    for (uint32_t x = 0; x < cnt; x++) {
        if (g[x].rail != UINT32_MAX)
            continue;
        uint32_t best = g[x].j;
        for (uint32_t p = 0; p < L; p++)
            if (load[p] < load[best])
                best = p;
        load[best] += g[x].bytes;
        g[x].rail = best;
    }
    for (uint32_t x = 0; x < cnt; x++) {
        if (g[x].rail != g[x].i)
            f->gath[RANK(a, g[x].rail)]++;
        f->recv[RANK(b, g[x].rail)]++;
    }
}

/* Steps 2 (blocks to rounds) and 3 for pair (a, b). */
static void place(flash *f, uint32_t a, uint32_t b, uint64_t *load)
{
    const synth_hosts *hs = &f->c->hosts;
    uint32_t L = f->L, H = f->H, q = a * H + b, cnt = 0;
    flash_blk *g = f->pb + (size_t)q * L * L * f->C;
    for (uint32_t i = 0; i < L; i++)
        for (uint32_t j = 0; j < L; j++) {
            uint64_t x = blk_bytes(f, RANK(a, i), RANK(b, j));
            for (uint32_t p = 0; p < f->C; p++) {
                uint64_t y = x / f->C + (p < x % f->C); /* weft/plan.h's chunk sizes */
                if (y)
                    g[cnt++] = (flash_blk){i, j, p, 0, 0, y};
            }
        }
    f->nb[q] = cnt;
    uint32_t r0 = f->ps[q], r1 = f->ps[q + 1];
    if (cnt == 0 || r0 == r1)
        return;
    qsort(g, cnt, sizeof *g, by_bytes_desc);
    uint32_t cur = r0, used = 0;
    uint64_t rem = f->bvn.weight[f->pr[cur]];
    for (uint32_t x = 0; x < cnt; x++) {
        if (used && rem < g[x].bytes && cur + 1 < r1) {
            cur++;
            rem = f->bvn.weight[f->pr[cur]];
            used = 0;
        }
        g[x].round = f->pr[cur];
        rem = rem > g[x].bytes ? rem - g[x].bytes : 0;
        used++;
    }
    qsort(g, cnt, sizeof *g, by_round);
    for (uint32_t x = 0; x < cnt;) {
        uint32_t y = x;
        while (y < cnt && g[y].round == g[x].round)
            y++;
        balance(f, a, b, g + x, y - x, load);
        x = y;
    }
}

weft_err synth_build_flash(const synth_ctx *c, weft_plan **out)
{
    return synth_flash_plan(c, c->traffic ? c->traffic->bytes : NULL, out);
}

weft_err synth_build_flash_split(const synth_ctx *c, weft_plan **out)
{
    if (c->param == 0)
        return weft_diag_set(c->d, WEFT_EINVAL,
                             "flash:auto: flash takes the chunks per block, flash:1 to flash:64 "
                             "(none is chosen automatically)");
    return synth_flash_plan_split(c, c->traffic ? c->traffic->bytes : NULL, c->param, out);
}

weft_err synth_flash_plan(const synth_ctx *c, const uint64_t *m, weft_plan **out)
{
    return synth_flash_plan_split(c, m, 1, out);
}

weft_err synth_flash_plan_split(const synth_ctx *c, const uint64_t *m, uint32_t split,
                                weft_plan **out)
{
    weft_err err = synth_need_boxes(c, "flash");
    if (err)
        return err;
    const synth_hosts *hs = &c->hosts;
    flash f = {.c = c, .m = m, .H = hs->nhosts, .L = hs->per_host, .n = c->n, .C = split};
    uint32_t H = f.H, L = f.L, n = f.n, C = split;
    weft_plan *p = NULL;
    synth_emit e;
    synth_emit_init(&e, NULL);
    f.pb = weft__malloc((size_t)H * H * L * L * C * sizeof *f.pb);
    f.nb = weft__calloc((size_t)H * H, sizeof *f.nb);
    f.gath = weft__calloc((size_t)n * 2, sizeof *f.gath);
    uint32_t *cur = weft__calloc((size_t)H * H, sizeof *cur); /* next block per pair */
    uint64_t *load = weft__malloc((size_t)L * sizeof *load);
    /* The blocks of one message (source, dest ranks) and slot lists. */
    uint32_t *ms = weft__malloc((size_t)L * L * C * sizeof *ms);
    uint32_t *md = weft__malloc((size_t)L * L * C * sizeof *md);
    uint32_t *mp = weft__malloc((size_t)L * L * C * sizeof *mp); /* pieces */
    uint32_t *mi = weft__malloc((size_t)L * L * C * sizeof *mi); /* in slots */
    uint32_t *sidx = weft__malloc((size_t)L * L * C * sizeof *sidx);
    uint32_t *didx = weft__malloc((size_t)L * L * C * sizeof *didx);
    uint32_t *deps = weft__malloc((size_t)4 * L * L * C * sizeof *deps);
    /* Per rank: its last round's send ops [first, first + count) and the
     * rank whose last send came into it; prev and cur halves. */
    uint32_t *first = weft__malloc((size_t)n * 2 * sizeof *first);
    uint32_t *cnt = weft__calloc((size_t)n * 2, sizeof *cnt);
    uint32_t *into = weft__malloc((size_t)n * 2 * sizeof *into);
    uint32_t *gpos = weft__calloc((size_t)n * 2, sizeof *gpos); /* next free slots */
    if (!f.pb || !f.nb || !f.gath || !cur || !load || !ms || !md || !mp || !mi || !sidx || !didx ||
        !deps || !first || !cnt || !into || !gpos) {
        err = WEFT_ENOMEM;
        goto done;
    }
    f.recv = f.gath + n;
    if ((err = rounds(&f)))
        goto done;
    for (uint32_t a = 0; a < H; a++)
        for (uint32_t b = 0; b < H; b++)
            if (a != b)
                place(&f, a, b, load);
    uint32_t scratch = 0;
    for (uint32_t r = 0; r < n; r++) {
        if (f.gath[r] + f.recv[r] > scratch)
            scratch = f.gath[r] + f.recv[r];
        gpos[r] = 0;             /* gathered blocks from slot 0 */
        gpos[n + r] = f.gath[r]; /* received ones after them */
    }
    if ((err = synth_plan_new(c, C, scratch ? scratch : 1, &p)))
        goto done;
    synth_emit_init(&e, p);
    if ((err = synth_a2a_intra(c, &e, m, C)))
        goto done;
    for (uint32_t r = 0; r < 2 * n; r++)
        into[r] = UINT32_MAX;
    uint32_t *pf = first, *pc = cnt, *pi = into, *cf = first + n, *cc = cnt + n, *ci = into + n;
    const weft_buf S = WEFT_BUF_SCRATCH;
    for (uint32_t k = 0; k < f.bvn.rounds && !err; k++) {
        for (uint32_t r = 0; r < n; r++) { /* an idle rank keeps its last round */
            cf[r] = pf[r];
            cc[r] = pc[r];
            ci[r] = pi[r];
        }
        for (uint32_t a = 0; a < H && !err; a++) {
            uint32_t b = f.bvn.perm[(size_t)k * H + a], q = a * H + b;
            if (b == a)
                continue;
            const flash_blk *g = f.pb + (size_t)q * L * L * C + cur[q];
            uint32_t gn = 0;
            while (cur[q] + gn < f.nb[q] && g[gn].round == k)
                gn++;
            cur[q] += gn;
            for (uint32_t rail = 0; rail < L && gn && !err; rail++) {
                uint32_t src = RANK(a, rail), dst = RANK(b, rail);
                /* The message on this rail: src's own blocks (from in),
                 * then the gathered ones (from scratch). */
                uint32_t nown = 0, ng = 0;
                for (uint32_t x = 0; x < gn; x++)
                    if (g[x].rail == rail && g[x].i == rail) {
                        ms[nown] = src;
                        mp[nown] = g[x].piece;
                        md[nown++] = RANK(b, g[x].j);
                    }
                for (uint32_t x = 0; x < gn; x++)
                    if (g[x].rail == rail && g[x].i != rail) {
                        ms[nown + ng] = RANK(a, g[x].i);
                        mp[nown + ng] = g[x].piece;
                        md[nown + ng++] = RANK(b, g[x].j);
                    }
                uint32_t tot = nown + ng;
                if (tot == 0)
                    continue;
                for (uint32_t x = 0; x < tot; x++)
                    mi[x] = md[x] * C + mp[x];
                uint32_t g0 = gpos[src];
                for (uint32_t x = 0; x < ng && !err; x++) /* gather into src */
                    err = synth_emit_op(&e, WEFT_OP_COPY, ms[nown + x], WEFT_BUF_IN, mi[nown + x],
                                        src, S, g0 + x, 1, 0, NULL, 0, NULL);
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
                    err = synth_emit_runs(&e, src, WEFT_BUF_IN, mi, dst, S, didx, nown, 1, deps, nd,
                                          &f1, &n1);
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
                                        ms[x] * C + mp[x], 1, 0, NULL, 0, NULL);
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
    weft__free(f.pb);
    weft__free(f.nb);
    weft__free(f.ps);
    weft__free(f.pr);
    weft__free(f.gath);
    weft__free(cur);
    weft__free(load);
    weft__free(ms);
    weft__free(md);
    weft__free(mp);
    weft__free(mi);
    weft__free(sidx);
    weft__free(didx);
    weft__free(deps);
    weft__free(first);
    weft__free(cnt);
    weft__free(into);
    weft__free(gpos);
    weft_bvn_fini(&f.bvn);
    if (!p) {
        synth_emit_fini(&e);
        return err;
    }
    return synth_finish(err, &e, p, out);
}
