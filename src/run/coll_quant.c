/* weft_allreduce_int8 (weft/comm_sparse.h): the two-shot quantized
 * all-reduce, the runtime's quant-2shot.
 *
 * A compressed chunk of c elements is [scales: 4 ns bytes][codes: c bytes]
 * (ns = weft_int8_scales(c, block)), c + 4 ns bytes as int8:B weighs.
 * The owner's own chunk is summed uncompressed (it never crosses a wire);
 * the others arrive compressed. Steps as coll_sparse.c's: a header of
 * three words a rank, then every chunk to its owner and every owner's sum
 * to every rank, each phase's messages posted at once. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "run/coll_busy.h"
#include "run/coll_ring.h"
#include "run/coll_sparse.h"
#include "run/comm_fail.h"
#include "run/comm_internal.h"
#include "weft/comm_sparse.h"

/* Chunk j of count over n ranks: its first element and length. */
static void chunk(size_t count, uint32_t n, uint32_t j, size_t *first, size_t *len)
{
    size_t q = count / n, r = count % n;
    *first = (size_t)j * q + (j < r ? j : r);
    *len = q + (j < r);
}

static size_t packed_bytes(size_t c, size_t block)
{
    return c + 4 * weft_int8_scales(c, block);
}

static void compress_into(unsigned char *out, const float *x, size_t c, size_t block)
{
    size_t ns = weft_int8_scales(c, block);
    float *scales = (float *)(void *)out;
    weft_int8_compress(x, c, block, NULL, (int8_t *)(out + 4 * ns), scales, NULL);
}

static void decompress_from(const unsigned char *in, size_t c, size_t block, float *out)
{
    size_t ns = weft_int8_scales(c, block);
    weft_int8_decompress((const int8_t *)(in + 4 * ns), (const float *)(const void *)in, c, block,
                         out);
}

static size_t align8(size_t x)
{
    return (x + 7) & ~(size_t)7;
}

static weft_err int8_call(weft_comm *c, const float *sendbuf, float *recvbuf, size_t count,
                          size_t block, weft_diag *d)
{
    weft_err e = weft__coll_check(c, WEFT_FLOAT, WEFT_SUM, false, d);
    if (e)
        return e;
    uint32_t n = c->size, me = c->rank;
    uint64_t mine[3] = {count, block, count && (!sendbuf || !recvbuf)};
    uint64_t *all = weft__malloc((size_t)n * 3 * sizeof *all);
    if (!all)
        return weft_diag_code(d, WEFT_ENOMEM);
    e = weft__sparse_gather_words(c, mine, all, 3, d);
    for (uint32_t r = 0; !e && r < n; r++)
        if (all[3 * r + 2])
            e = weft_diag_set(d, WEFT_EINVAL,
                              "int8 allreduce: rank %" PRIu32 ": %" PRIu64 " elements but no "
                              "buffer",
                              r, all[3 * r]);
    for (uint32_t r = 1; !e && r < n; r++)
        if (all[3 * r] != all[0] || all[3 * r + 1] != all[1])
            e = weft_diag_set(d, WEFT_EINVAL,
                              "int8 allreduce: ranks disagree on the %s: rank 0 has %" PRIu64
                              ", rank %" PRIu32 " has %" PRIu64,
                              all[3 * r] != all[0] ? "count" : "block",
                              all[3 * r] != all[0] ? all[0] : all[1], r,
                              all[3 * r] != all[0] ? all[3 * r] : all[3 * r + 1]);
    weft__free(all);
    if (e || count == 0)
        return e;

    size_t first, len, *off = weft__malloc(2 * (size_t)n * sizeof *off);
    if (!off)
        return weft_diag_code(d, WEFT_ENOMEM);
    size_t *roff = off + n, stotal = 0, rtotal = 0, mylen;
    size_t myfirst;
    chunk(count, n, me, &myfirst, &mylen);
    for (uint32_t j = 0; j < n; j++) {
        chunk(count, n, j, &first, &len);
        off[j] = stotal;
        stotal += align8(packed_bytes(len, block));
        roff[j] = rtotal;
        rtotal += align8(packed_bytes(mylen, block));
    }
    unsigned char *sbuf = weft__malloc(stotal ? stotal : 1);
    unsigned char *rbuf = weft__malloc(rtotal ? rtotal : 1);
    const unsigned char **sb = weft__malloc((size_t)n * sizeof *sb);
    unsigned char **rb = weft__malloc((size_t)n * sizeof *rb);
    size_t *sl = weft__malloc(2 * (size_t)n * sizeof *sl), *rl = sl ? sl + n : NULL;
    double *acc = weft__malloc((mylen ? mylen : 1) * sizeof *acc);
    float *tmp = weft__malloc((mylen ? mylen : 1) * sizeof *tmp);
    if (!sbuf || !rbuf || !acc || !tmp || !sb || !rb || !sl) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_all;
    }
    /* 1. Compress every chunk but this rank's own; send chunk j to j. */
    for (uint32_t j = 0; j < n; j++) {
        if (j == me)
            continue;
        chunk(count, n, j, &first, &len);
        compress_into(sbuf + off[j], sendbuf + first, len, block);
    }
    size_t mine_b = packed_bytes(mylen, block);
    for (uint32_t j = 0; j < n; j++) {
        chunk(count, n, j, &first, &len);
        sb[j] = sbuf + off[j];
        sl[j] = j == me ? 0 : packed_bytes(len, block);
        rb[j] = rbuf + roff[j];
        rl[j] = j == me ? 0 : mine_b;
    }
    if ((e = weft__sparse_post_all(c, sb, sl, rb, rl, NULL, NULL, false, d)))
        goto free_all;
    /* 2. The owner's sum in rank order, in double, rounded to fp32 and
     * compressed once more. */
    for (uint32_t r = 0; r < n; r++) {
        const float *x = sendbuf + myfirst;
        if (r != me) {
            decompress_from(rbuf + roff[r], mylen, block, tmp);
            x = tmp;
        }
        for (size_t i = 0; i < mylen; i++)
            acc[i] = r == 0 ? (double)x[i] : acc[i] + (double)x[i];
    }
    for (size_t i = 0; i < mylen; i++)
        tmp[i] = (float)acc[i];
    compress_into(sbuf + off[me], tmp, mylen, block);
    decompress_from(sbuf + off[me], mylen, block, recvbuf + myfirst);
    /* 3. Every owner's compressed sum to every rank (into sbuf's slots:
     * slot j is chunk j's size). */
    for (uint32_t j = 0; j < n; j++) {
        chunk(count, n, j, &first, &len);
        sb[j] = sbuf + off[me];
        sl[j] = j == me ? 0 : mine_b;
        rb[j] = sbuf + off[j];
        rl[j] = j == me ? 0 : packed_bytes(len, block);
    }
    if ((e = weft__sparse_post_all(c, sb, sl, rb, rl, NULL, NULL, false, d)))
        goto free_all;
    for (uint32_t j = 0; j < n; j++) {
        if (j == me)
            continue;
        chunk(count, n, j, &first, &len);
        decompress_from(sbuf + off[j], len, block, recvbuf + first);
    }
free_all:
    weft__free(sl);
    weft__free(rb);
    weft__free(sb);
    weft__free(tmp);
    weft__free(acc);
    weft__free(rbuf);
    weft__free(sbuf);
    weft__free(off);
    return e;
}

/* A rank out of memory anywhere in the call leaves its peers in an
 * exchange it cannot finish (the header's words, or a phase's messages):
 * the communicator fails on this rank, as alltoallv's (coll_alltoallv.c)
 * and the sparse all-reduce's do, which tells the peers, so that they
 * return WEFT_EPEER at once instead of at the timeout. One rank has
 * nobody waiting. */
static weft_err out_of_memory(weft_comm *c, weft_err e, weft_diag *d)
{
    return weft__comm_fail_oom(c, e, "int8 allreduce", d);
}

/* Marked busy like the dense collectives (coll_busy.h), so that a
 * checkpoint's helper thread defers to it too. */
weft_err weft_allreduce_int8(weft_comm *c, const float *sendbuf, float *recvbuf, size_t count,
                             size_t block, weft_diag *d)
{
    weft__coll_enter(c);
    return weft__coll_leave(c,
                            out_of_memory(c, int8_call(c, sendbuf, recvbuf, count, block, d), d));
}
