/* Compressed and sparse collectives as sized plans (weft/synth.h,
 * "Compressed and sparse collectives"; docs/compression.md).
 *
 * Each plan is its dense collective's dataflow, written with the emitter
 * (so its deps are its data dependences and it verifies as that
 * collective), and it carries the exact bytes of every op at the dense size
 * (weft_plan_set_op_sizes): what a compressed chunk, a rank's (index,
 * value) pairs or an owner's union of them weighs. Local ops (decompress,
 * aggregate, recompress at an owner) carry the bytes they read; the
 * simulator charges them no time (weft/compress.h, compute not measured).
 *
 * Two-shot all-reduce (quant-2shot, sparse-hash, sparse-range): chunk j of
 * N is owned by rank j. Every rank s != j sends its chunk j to scratch slot
 * (s - j - 1) mod N of rank j; rank j reduces its N - 1 scratch slots into
 * its own chunk j, one after another; then rank j copies chunk j to every
 * other rank. Sparse all-gather (sparse-ag): every rank sends its pairs to
 * every other rank (allgather), and for allreduce each rank then sums the
 * N - 1 it received into its own tensor. */
#include <inttypes.h>
#include <string.h>

#include "base/alloc.h"
#include "synth/emit.h"
#include "synth/sparse.h"

void weft_sparse_args_init(weft_sparse_args *a)
{
    memset(a, 0, sizeof *a);
    a->comp.kind = WEFT_COMP_TOPK;
    a->comp.density_ppm = 10000; /* 0.01 */
    a->elem_bytes = 2;
}

/* Which builder: the spellings of sched.c's rows. */
typedef enum scheme { S_AG, S_QUANT, S_HASH, S_RANGE, S_HIER } scheme;

typedef struct build_ctx {
    const weft_topo *t;
    uint32_t n;
    const weft_sparse_args *a;
    uint64_t size;  /* the dense collective's bytes */
    uint64_t elems; /* the dense tensor's elements on one rank */
    weft_diag *d;
} build_ctx;

/* The bytes of one rank's sparse tensor: k (index, value) pairs. */
static weft_err pairs_bytes(const build_ctx *c, uint64_t nnz, uint64_t *out)
{
    uint64_t per = 4 + (uint64_t)c->a->elem_bytes;
    if (nnz > UINT64_MAX / per)
        return weft_diag_set(c->d, WEFT_EOVERFLOW, "%" PRIu64 " pairs: more than 2^64-1 bytes",
                             nnz);
    *out = nnz * per;
    return WEFT_OK;
}

/* Bytes of what rank s's op of phase `ph` (0: to the owner, 1: the
 * owner's reduce, 2: back from the owner) moves for chunk j. */
typedef struct chunk_bytes {
    uint64_t to_owner, reduce, from_owner;
} chunk_bytes;

static weft_err chunk_sizes(const build_ctx *c, scheme sc, uint32_t j, chunk_bytes *out)
{
    weft_err e;
    if (sc == S_QUANT) {
        /* Chunk j's elements: n / N, the first n mod N one more. */
        uint64_t el = c->elems / c->n + (j < c->elems % c->n);
        weft_tensor_shape sh = {el, c->a->elem_bytes, 0, 0};
        uint64_t q;
        if ((e = weft_compress_bytes(&c->a->comp, &sh, &q, c->d)))
            return e;
        out->to_owner = out->reduce = out->from_owner = q;
        return WEFT_OK;
    }
    weft_sparse_spec sp = {c->elems, c->a->elem_bytes, c->a->comp.density_ppm, c->a->zipf_milli,
                           sc == S_RANGE ? WEFT_SPARSE_RANGE : WEFT_SPARSE_HASH};
    weft_sparse_part_counts pc;
    if ((e = weft_sparse_part_get(&sp, c->n, j, &pc, c->d)) ||
        (e = pairs_bytes(c, pc.nnz, &out->to_owner)) ||
        (e = pairs_bytes(c, pc.uni, &out->from_owner)))
        return e;
    out->reduce = out->to_owner;
    return WEFT_OK;
}

static weft_err two_shot(build_ctx *c, scheme sc, synth_emit *em, uint64_t **b, size_t *cap)
{
    uint32_t n = c->n, id;
    weft_err e = WEFT_OK;
    chunk_bytes *cb = weft__malloc((size_t)n * sizeof *cb);
    if (!cb)
        return weft_diag_code(c->d, WEFT_ENOMEM);
    for (uint32_t j = 0; j < n && !e; j++)
        e = chunk_sizes(c, sc, j, &cb[j]);
    for (uint32_t j = 0; j < n && !e; j++)
        for (uint32_t s = 0; s < n && !e; s++) {
            if (s == j)
                continue;
            e = synth_emit_op(em, WEFT_OP_COPY, s, WEFT_BUF_IN, j, j, WEFT_BUF_SCRATCH,
                              (s + n - j - 1) % n, 1, 0, NULL, 0, &id);
            if (!e)
                e = weft__sparse_note(b, cap, id, cb[j].to_owner);
        }
    for (uint32_t j = 0; j < n && !e; j++)
        for (uint32_t i = 0; i + 1 < n && !e; i++) {
            e = synth_emit_op(em, WEFT_OP_REDUCE, j, WEFT_BUF_SCRATCH, i, j, WEFT_BUF_IN, j, 1, 0,
                              NULL, 0, &id);
            if (!e)
                e = weft__sparse_note(b, cap, id, cb[j].reduce);
        }
    for (uint32_t j = 0; j < n && !e; j++)
        for (uint32_t s = 0; s < n && !e; s++) {
            if (s == j)
                continue;
            e = synth_emit_op(em, WEFT_OP_COPY, j, WEFT_BUF_IN, j, s, WEFT_BUF_IN, j, 1, 0, NULL, 0,
                              &id);
            if (!e)
                e = weft__sparse_note(b, cap, id, cb[j].from_owner);
        }
    weft__free(cb);
    return e;
}

static weft_err sparse_gather(build_ctx *c, weft_coll coll, synth_emit *em, uint64_t **b,
                              size_t *cap)
{
    uint32_t n = c->n, id;
    /* What the compressor writes for one rank's tensor: k pairs, or for
     * randk k values and the seed. */
    uint64_t pairs = 0;
    weft_tensor_shape sh = {c->elems, c->a->elem_bytes, 0, 0};
    weft_err e = weft_compress_bytes(&c->a->comp, &sh, &pairs, c->d);
    for (uint32_t s = 0; s < n && !e; s++)
        for (uint32_t dst = 0; dst < n && !e; dst++) {
            if (s == dst)
                continue;
            if (coll == WEFT_COLL_ALLGATHER)
                e = synth_emit_op(em, WEFT_OP_COPY, s, WEFT_BUF_OUT, s, dst, WEFT_BUF_OUT, s, 1, 0,
                                  NULL, 0, &id);
            else
                e = synth_emit_op(em, WEFT_OP_COPY, s, WEFT_BUF_IN, 0, dst, WEFT_BUF_SCRATCH,
                                  (s + n - dst - 1) % n, 1, 0, NULL, 0, &id);
            if (!e)
                e = weft__sparse_note(b, cap, id, pairs);
        }
    for (uint32_t r = 0; r < n && !e && coll == WEFT_COLL_ALLREDUCE; r++)
        for (uint32_t i = 0; i + 1 < n && !e; i++) {
            e = synth_emit_op(em, WEFT_OP_REDUCE, r, WEFT_BUF_SCRATCH, i, r, WEFT_BUF_IN, 0, 1, 0,
                              NULL, 0, &id);
            if (!e)
                e = weft__sparse_note(b, cap, id, pairs);
        }
    return e;
}

weft_err weft__synth_sparse(const weft_topo *t, const char *algo, weft_coll coll, double bytes,
                            uint32_t max_ops, const weft_sparse_args *args, weft_plan **out,
                            weft_diag *d)
{
    weft_sparse_args defaults;
    if (!args) {
        weft_sparse_args_init(&defaults);
        args = &defaults;
    }
    scheme sc = strcmp(algo, "sparse-ag") == 0      ? S_AG
                : strcmp(algo, "quant-2shot") == 0  ? S_QUANT
                : strcmp(algo, "sparse-range") == 0 ? S_RANGE
                : strcmp(algo, "hier-quant") == 0   ? S_HIER
                                                    : S_HASH;
    /* hier-quant quantizes as quant-2shot does, on the rails only. */
    bool quant = sc == S_QUANT || sc == S_HIER;
    uint32_t n = weft_topo_num_ranks(t);
    if (n < 2)
        return weft_diag_set(d, WEFT_ETOPO, "%s needs at least 2 ranks, the fabric has %" PRIu32,
                             algo, n);
    if (args->elem_bytes == 0)
        return weft_diag_set(d, WEFT_EINVAL, "%s: elements of 0 bytes", algo);
    if (quant && weft_comp_is_sparse(args->comp.kind))
        return weft_diag_set(d, WEFT_EINVAL,
                             "%s aggregates dense chunks; %s is sparse (use "
                             "sparse-hash or sparse-ag)",
                             algo, weft_comp_kind_name(args->comp.kind));
    if (quant && args->comp.kind == WEFT_COMP_POWERSGD)
        return weft_diag_set(d, WEFT_EINVAL,
                             "%s cuts the tensor into chunks; powersgd factors the whole "
                             "matrix",
                             algo);
    if (!quant && !weft_comp_is_sparse(args->comp.kind))
        return weft_diag_set(d, WEFT_EINVAL,
                             "%s needs a density (a sparse compressor: topk:D, "
                             "dgc:D, randk:D or hash:D), not %s",
                             algo, weft_comp_kind_name(args->comp.kind));
    if (!(bytes >= 1 && bytes < 1.8e19))
        return weft_diag_set(d, WEFT_EINVAL, "%s: a size of %g bytes", algo, bytes);
    build_ctx c = {t, n, args, (uint64_t)bytes, 0, d};
    /* The dense tensor of one rank: allreduce's size, allgather's share. */
    uint64_t per_rank = coll == WEFT_COLL_ALLGATHER ? c.size / n : c.size;
    c.elems = per_rank / args->elem_bytes;
    if (c.elems == 0)
        return weft_diag_set(d, WEFT_EINVAL,
                             "%s: %" PRIu64 " bytes hold no element of %" PRIu32 " bytes per rank",
                             algo, c.size, args->elem_bytes);
    if (sc == S_HIER)
        return weft__synth_hier_quant(t, c.size, c.elems, max_ops, args, out, d);
    weft_plan_info info = {coll, n, {0}, sc == S_AG ? 1 : n, n - 1, true};
    if (coll == WEFT_COLL_ALLGATHER)
        info.scratch = 0;
    weft_plan *p = NULL;
    weft_err e = weft_plan_new(&info, &p);
    if (e)
        return weft_diag_set(d, e, "%s on %" PRIu32 " ranks: %s", algo, n,
                             e == WEFT_ENOMEM ? "out of memory" : "too many slots");
    if (max_ops)
        weft_plan_limit_ops(p, max_ops);
    synth_emit em;
    synth_emit_init(&em, p);
    uint64_t *b = NULL;
    size_t cap = 0;
    e = sc == S_AG ? sparse_gather(&c, coll, &em, &b, &cap) : two_shot(&c, sc, &em, &b, &cap);
    /* The compute each rank runs (sparse_compute.c); an all-gather of
     * compressed tensors has none. */
    uint64_t *dense = NULL;
    uint32_t data_ops = weft_plan_num_ops(p);
    if (!e && sc == S_QUANT && !(dense = weft__malloc((size_t)n * sizeof *dense)))
        e = weft_diag_code(d, WEFT_ENOMEM);
    for (uint32_t j = 0; dense && j < n; j++)
        dense[j] = (c.elems / n + (j < c.elems % n)) * args->elem_bytes;
    weft__sparse_compute sc_info = {sc == S_QUANT, sc == S_AG, 0, data_ops,
                                    data_ops,      dense,      n, c.elems * args->elem_bytes};
    if (!e && coll == WEFT_COLL_ALLREDUCE)
        e = weft__sparse_place_compute(p, &sc_info, &b, &cap, d);
    weft__free(dense);
    if (e == WEFT_ELIMIT)
        e = weft_diag_set(d, e, "%s on %" PRIu32 " ranks has more than %" PRIu32 " ops (the limit)",
                          algo, n, max_ops);
    else if (e == WEFT_ENOMEM)
        weft_diag_code(d, e);
    if (!e)
        e = weft_plan_set_op_sizes(p, c.size, b ? b : &c.size, d);
    /* The runtime moves these messages whole (weft/comm_sparse.h). */
    weft_plan_set_whole_messages(p, true);
    weft__free(b);
    return synth_finish(e, &em, p, out);
}
