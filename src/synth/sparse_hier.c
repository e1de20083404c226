/* Hierarchical compressed all-reduce (registry row hier-quant;
 * docs/compression.md, "Hierarchical").
 *
 * H hosts of L ranks each; the tensor is cut into L x H chunks, chunk
 * c = j H + g (block j of H chunks is local rank j's, as in classic hier):
 *
 *   1. inside every host, a dense ring reduce-scatter of the L blocks
 *      (NVLink), so local rank j holds its host's sum of block j;
 *   2. on every rail j (the H ranks of local index j), the compressed
 *      two-shot of quant-2shot over block j's H chunks: rank (h, j) sends
 *      its compressed chunk j H + g to (g, j)'s scratch slot
 *      (h - g - 1) mod H, (g, j) decompresses and sums its H - 1 slots into
 *      its own chunk (local ops), recompresses and sends it back to every
 *      other rank of the rail;
 *   3. inside every host, a dense ring all-gather of the L blocks.
 *
 * Only phase 2 crosses hosts and only it is compressed: the cross-host
 * bytes fall from H - 1 over H of the dense tensor's share per rank to its
 * compressed size, while NVLink carries the dense phases. Bytes: a phase
 * 1 or 3 op moves the dense bytes of the chunks it names (chunk c has
 * n / (L H) elements, the first n mod (L H) one more); a phase 2 op the
 * compressor's bytes for its chunk (weft_compress_bytes). */
#include <inttypes.h>

#include "base/alloc.h"
#include "synth/classic_internal.h"
#include "synth/sparse.h"

#define RANK(h, j) (hs.ranks[hs.start[(h)] + (j)])

/* Emits the three phases; *p1, *p2: the op counts after phases 1 and 2. */
static weft_err emit_phases(synth_emit *em, const synth_hosts *hsp, uint32_t *p1, uint32_t *p2)
{
    synth_hosts hs = *hsp;
    uint32_t H = hs.nhosts, L = hs.per_host, id;
    uint32_t big = H > L ? H : L;
    uint32_t *order = weft__malloc((size_t)big * sizeof *order);
    uint32_t *slot = weft__malloc((size_t)big * sizeof *slot);
    weft_err e = order && slot ? WEFT_OK : WEFT_ENOMEM;
    for (uint32_t j = 0; j < L; j++)
        if (slot)
            slot[j] = j * H;
    for (uint32_t h = 0; h < H && !e && L > 1; h++) {
        for (uint32_t j = 0; j < L; j++)
            order[j] = RANK(h, j);
        e = synth_ring_rs(em, order, L, slot, H, WEFT_BUF_IN, 0);
    }
    *p1 = weft_plan_num_ops(em->plan);
    for (uint32_t j = 0; j < L && !e; j++) {
        for (uint32_t g = 0; g < H && !e; g++)
            for (uint32_t h = 0; h < H && !e; h++)
                if (h != g)
                    e = synth_emit_op(em, WEFT_OP_COPY, RANK(h, j), WEFT_BUF_IN, j * H + g,
                                      RANK(g, j), WEFT_BUF_SCRATCH, (h + H - g - 1) % H, 1, 1, NULL,
                                      0, &id);
        for (uint32_t g = 0; g < H && !e; g++)
            for (uint32_t i = 0; i + 1 < H && !e; i++)
                e = synth_emit_op(em, WEFT_OP_REDUCE, RANK(g, j), WEFT_BUF_SCRATCH, i, RANK(g, j),
                                  WEFT_BUF_IN, j * H + g, 1, 1, NULL, 0, &id);
        for (uint32_t g = 0; g < H && !e; g++)
            for (uint32_t h = 0; h < H && !e; h++)
                if (h != g)
                    e = synth_emit_op(em, WEFT_OP_COPY, RANK(g, j), WEFT_BUF_IN, j * H + g,
                                      RANK(h, j), WEFT_BUF_IN, j * H + g, 1, 1, NULL, 0, &id);
    }
    *p2 = weft_plan_num_ops(em->plan);
    for (uint32_t h = 0; h < H && !e && L > 1; h++) {
        for (uint32_t j = 0; j < L; j++)
            order[j] = RANK(h, j);
        e = synth_ring_ag(em, order, L, slot, H, WEFT_BUF_IN, 0);
    }
    weft__free(order);
    weft__free(slot);
    return e;
}

/* The bytes of every op: dense for the box phases, compressed across. */
static weft_err op_sizes(const weft_plan *p, uint32_t p1, uint32_t p2, uint64_t elems,
                         uint32_t chunks, const weft_sparse_args *a, uint64_t *b, weft_diag *d)
{
    uint64_t base = elems / chunks, extra = elems % chunks;
    for (uint32_t i = 0; i < weft_plan_num_ops(p); i++) {
        weft_op op = weft_plan_op(p, i);
        uint64_t sum = 0;
        for (uint32_t c = op.src_index; c < op.src_index + op.count; c++) {
            /* A scratch slot holds the chunk the owner reduces into. */
            uint32_t chunk = op.src_buf == WEFT_BUF_SCRATCH ? op.dst_index : c;
            uint64_t el = base + (chunk < extra);
            if (i >= p1 && i < p2) {
                weft_tensor_shape sh = {el, a->elem_bytes, 0, 0};
                uint64_t q;
                weft_err e = weft_compress_bytes(&a->comp, &sh, &q, d);
                if (e)
                    return e;
                sum += q;
            } else {
                sum += el * a->elem_bytes;
            }
        }
        b[i] = sum;
    }
    return WEFT_OK;
}

weft_err weft__synth_hier_quant(const weft_topo *t, uint64_t size, uint64_t elems, uint32_t max_ops,
                                const weft_sparse_args *a, weft_plan **out, weft_diag *d)
{
    synth_hosts hs;
    weft_err e = synth_hosts_init(&hs, t);
    if (e)
        return weft_diag_code(d, e);
    if (hs.per_host == 0 || hs.nhosts < 2) {
        e = weft_diag_set(d, WEFT_ETOPO,
                          "hier-quant needs at least two hosts (host=) of equal size; this "
                          "fabric has %" PRIu32 " host group%s%s",
                          hs.nhosts, hs.nhosts == 1 ? "" : "s",
                          hs.per_host ? "" : " of different sizes");
        synth_hosts_fini(&hs);
        return e;
    }
    uint32_t n = weft_topo_num_ranks(t), chunks = hs.nhosts * hs.per_host;
    weft_plan_info info = {WEFT_COLL_ALLREDUCE, n, {0}, chunks, hs.nhosts - 1, true};
    weft_plan *p = NULL;
    if ((e = weft_plan_new(&info, &p))) {
        synth_hosts_fini(&hs);
        return weft_diag_set(d, e, "hier-quant on %" PRIu32 " ranks: %s", n,
                             e == WEFT_ENOMEM ? "out of memory" : "too many slots");
    }
    if (max_ops)
        weft_plan_limit_ops(p, max_ops);
    synth_emit em;
    synth_emit_init(&em, p);
    uint32_t p1 = 0, p2 = 0;
    e = emit_phases(&em, &hs, &p1, &p2);
    synth_hosts_fini(&hs);
    uint64_t *b = NULL, *dense = NULL;
    size_t cap = (size_t)weft_plan_num_ops(p) + 1;
    if (e == WEFT_ELIMIT)
        e = weft_diag_set(
            d, e, "hier-quant on %" PRIu32 " ranks has more than %" PRIu32 " ops (the limit)", n,
            max_ops);
    else if (e)
        weft_diag_code(d, e);
    else if (!(b = weft__malloc(((size_t)weft_plan_num_ops(p) + 1) * sizeof *b)))
        e = weft_diag_code(d, WEFT_ENOMEM);
    if (!e)
        e = op_sizes(p, p1, p2, elems, chunks, a, b, d);
    /* The rails' compute (sparse_compute.c): quant-2shot's on the dense
     * bytes of each chunk. */
    if (!e && !(dense = weft__malloc((size_t)chunks * sizeof *dense)))
        e = weft_diag_code(d, WEFT_ENOMEM);
    for (uint32_t c = 0; !e && c < chunks; c++)
        dense[c] = (elems / chunks + (c < elems % chunks)) * a->elem_bytes;
    weft__sparse_compute sc = {true, false, p1, p2, weft_plan_num_ops(p), dense, chunks, 0};
    if (!e && (e = weft__sparse_place_compute(p, &sc, &b, &cap, d)) == WEFT_ELIMIT)
        e = weft_diag_set(
            d, e, "hier-quant on %" PRIu32 " ranks has more than %" PRIu32 " ops (the limit)", n,
            max_ops);
    if (!e)
        e = weft_plan_set_op_sizes(p, size, b, d);
    weft_plan_set_whole_messages(p, true); /* as sparse.c's */
    weft__free(dense);
    weft__free(b);
    return synth_finish(e, &em, p, out);
}
