/* Compressors and the compressed and sparse collectives: exact output
 * bytes of every scheme, the sparse parts under hash and range
 * partitioning, the exact bytes of every op of each plan on 2 and 4
 * ranks (computed by hand in the comments), that the plans verify, run on
 * real data, round-trip through the text format and simulate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "weft/compress.h"
#include "weft/sim.h"
#include "weft/synth.h"

static uint64_t cbytes(const char *spec, uint64_t n, uint32_t b, uint64_t rows, uint64_t cols)
{
    weft_compressor c;
    weft_diag d = {0};
    CHECK_ERR(weft_compressor_parse(spec, &c, &d), WEFT_OK);
    weft_tensor_shape s = {n, b, rows, cols};
    uint64_t out = UINT64_MAX;
    CHECK_ERR(weft_compress_bytes(&c, &s, &out, &d), WEFT_OK);
    return out;
}

static void test_output_bytes(void)
{
    /* n = 1000 fp16 elements, b = 2. */
    CHECK_INT(cbytes("none", 1000, 2, 0, 0), 2000);
    CHECK_INT(cbytes("int8", 1000, 2, 0, 0), 1004); /* n + one fp32 scale */
    CHECK_INT(cbytes("fp8", 1000, 2, 0, 0), 1004);
    CHECK_INT(cbytes("int8:128", 1000, 2, 0, 0), 1032); /* n + 4 ceil(1000/128) = 4 x 8 */
    CHECK_INT(cbytes("qsgd:1", 1000, 2, 0, 0), 254);    /* 2 bits: 250 + 4 */
    CHECK_INT(cbytes("qsgd:15", 1000, 2, 0, 0), 629);   /* 1 + 4 bits: 625 + 4 */
    CHECK_INT(cbytes("qsgd:16", 1000, 2, 0, 0), 754);   /* 1 + 5 bits: 750 + 4 */
    CHECK_INT(cbytes("sign", 1000, 2, 0, 0), 129);      /* 125 + 4 */
    CHECK_INT(cbytes("sign", 1001, 2, 0, 0), 130);      /* 126 + 4 */
    CHECK_INT(cbytes("topk:0.01", 1000, 2, 0, 0), 60);  /* k = 10, 10 x (4 + 2) */
    CHECK_INT(cbytes("dgc:0.01", 1000, 2, 0, 0), 60);
    CHECK_INT(cbytes("hash:1%", 1000, 4, 0, 0), 80);        /* 10 x (4 + 4) */
    CHECK_INT(cbytes("topk:0.0015", 1000, 2, 0, 0), 12);    /* k = ceil(1.5) = 2 */
    CHECK_INT(cbytes("randk:0.01", 1000, 2, 0, 0), 28);     /* 10 x 2 + the 8-byte seed */
    CHECK_INT(cbytes("powersgd:4", 1000, 2, 100, 10), 880); /* (100 + 10) x 4 x 2 */
    CHECK_INT(cbytes("powersgd:1", 1000, 2, 0, 0), 2002);   /* 1000 x 1: (1000 + 1) x 2 */
    CHECK_INT(cbytes("topk:0.01", 0, 2, 0, 0), 0);
    CHECK_INT(weft_density_count(UINT64_C(3000000000000), 1), 3000000);
    CHECK_INT(weft_density_count(1000001, 1), 2);

    weft_compressor c;
    weft_diag d = {0};
    uint32_t ppm = 0;
    CHECK_ERR(weft_density_parse("0.01", &ppm, &d), WEFT_OK);
    CHECK_INT(ppm, 10000);
    CHECK_ERR(weft_density_parse("1%", &ppm, &d), WEFT_OK);
    CHECK_INT(ppm, 10000);
    CHECK_ERR(weft_density_parse("1", &ppm, &d), WEFT_OK);
    CHECK_INT(ppm, 1000000);
    CHECK_ERR(weft_density_parse("0.0000001", &ppm, &d), WEFT_EINVAL);
    CHECK_ERR(weft_density_parse("1.5", &ppm, &d), WEFT_EINVAL);
    CHECK_ERR(weft_density_parse("0", &ppm, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "density '0': expected a fraction in (0, 1] with at most 6 decimal places "
                     "(0.01) or a percentage with at most 4 (1%)");
    CHECK_ERR(weft_compressor_parse("qsgd", &c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "compressor 'qsgd': qsgd takes its levels, qsgd:S >= 1");
    CHECK_ERR(weft_compressor_parse("zip", &c, &d), WEFT_EINVAL);
    CHECK_ERR(weft_compressor_parse("sign:3", &c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "compressor 'sign:3': sign takes no parameter");
    weft_tensor_shape bad = {1000, 2, 30, 30};
    uint64_t out;
    CHECK_ERR(weft_compressor_parse("powersgd:2", &c, &d), WEFT_OK);
    CHECK_ERR(weft_compress_bytes(&c, &bad, &out, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "powersgd: a 30 x 30 matrix is not 1000 elements");

    char buf[32];
    const char *spells[] = {"topk:0.01",     "int8:128",   "qsgd:4", "sign", "randk:1",
                            "hash:0.000125", "powersgd:2", "fp8",    "none"};
    for (size_t i = 0; i < sizeof spells / sizeof *spells; i++) {
        CHECK_ERR(weft_compressor_parse(spells[i], &c, &d), WEFT_OK);
        weft_compressor_format(&c, buf, sizeof buf);
        CHECK_STR(buf, spells[i]);
    }
    weft_compress_cost cost;
    /* On a GPU, the roofline: int8 (one scale) of fp32 on hopper reads 4
     * bytes for the max, reads 4 and writes 1 to quantize: 9 bytes an
     * element, 9/4 per input byte, at H100 SXM5's 3350 GB/s; dequantize
     * reads 1 and writes 4. */
    CHECK_ERR(weft_compress_cost_get(WEFT_COMP_INT8, "hopper", &cost, &d), WEFT_OK);
    CHECK(!cost.measured && cost.roofline);
    CHECK(cost.compress_s_per_b == 9.0 / 4 / 3350e9);
    CHECK(cost.decompress_s_per_b == 5.0 / 4 / 3350e9);
    CHECK_CONTAINS(cost.source, "model: roofline");
    /* topk:0.01 of fp32 on ampere (2039 GB/s): abs 8, four 8-bit radix
     * passes 16, the select's gather pass 4, and 0.01 x (4 + 8 + 8 + 32 +
     * 4) for the k values and indices written and gathered: 28.56 bytes
     * an element; decompress: the zero fill 4 and 0.01 x (8 + 4 + 32). */
    CHECK_ERR(weft_compress_cost_get(WEFT_COMP_TOPK, "ampere", &cost, &d), WEFT_OK);
    CHECK(!cost.measured && cost.roofline);
    CHECK_REL(cost.compress_s_per_b, 28.56 / 4 / 2039e9, 1e-14);
    CHECK_REL(cost.decompress_s_per_b, 4.44 / 4 / 2039e9, 1e-14);
    CHECK_ERR(weft_compress_cost_get(WEFT_COMP_POWERSGD, "blackwell", &cost, &d), WEFT_OK);
    CHECK(!cost.measured && !cost.roofline && cost.compress_s_per_b == 0);
    CHECK_CONTAINS(cost.source, "not measured");
    CHECK_ERR(weft_compress_cost_get(WEFT_COMP_HASH, "volta", &cost, &d), WEFT_OK);
    CHECK(!cost.roofline);
    /* The traffic for other parameters, bf16 (b = 2): blockwise fp8:128
     * is one pass, 2 + 1 + 4/128 = 3.03125 bytes an element (torchao's
     * logical IO); qsgd:15 writes 5 bits; sign 1; dgc:0.01 and randk. */
    weft_compress_traffic tr;
    CHECK_ERR(weft_compressor_parse("fp8:128", &c, &d), WEFT_OK);
    CHECK_ERR(weft_compress_traffic_get(&c, 2, &tr, &d), WEFT_OK);
    CHECK(tr.known && tr.compress_b == 3.03125 && tr.decompress_b == 3.03125 && tr.scatter_b == 0);
    CHECK_ERR(weft_compressor_parse("qsgd:15", &c, &d), WEFT_OK);
    CHECK_ERR(weft_compress_traffic_get(&c, 2, &tr, &d), WEFT_OK);
    CHECK(tr.compress_b == 4.625 && tr.decompress_b == 2.625);
    CHECK_ERR(weft_compressor_parse("qsgd:16", &c, &d), WEFT_OK);
    CHECK_ERR(weft_compress_traffic_get(&c, 2, &tr, &d), WEFT_OK);
    CHECK(tr.compress_b == 4.75);
    CHECK_ERR(weft_compressor_parse("sign", &c, &d), WEFT_OK);
    CHECK_ERR(weft_compress_traffic_get(&c, 4, &tr, &d), WEFT_OK);
    CHECK(tr.compress_b == 8.125 && tr.decompress_b == 4.125);
    /* dgc:0.01, fp32: mask 13, sum 1, nonzero 2, the sample 0.01 x (8 +
     * 32 + 4 + 12 + 16) and the kept 0.01 x (8 + 8 + 32 + 4). */
    CHECK_ERR(weft_compressor_parse("dgc:0.01", &c, &d), WEFT_OK);
    CHECK_ERR(weft_compress_traffic_get(&c, 4, &tr, &d), WEFT_OK);
    CHECK_REL(tr.compress_b, 16 + 0.72 + 0.52, 1e-15);
    CHECK(tr.decompress_b == 4 && tr.scatter_b == 44);
    CHECK_ERR(weft_compressor_parse("randk:0.5", &c, &d), WEFT_OK);
    CHECK_ERR(weft_compress_traffic_get(&c, 2, &tr, &d), WEFT_OK);
    CHECK(tr.compress_b == 17 && tr.decompress_b == 2 && tr.scatter_b == 34);
    CHECK_ERR(weft_compressor_parse("powersgd:4", &c, &d), WEFT_OK);
    CHECK_ERR(weft_compress_traffic_get(&c, 2, &tr, &d), WEFT_OK);
    CHECK(!tr.known && tr.compress_b == 0);
    CHECK_ERR(weft_compress_traffic_get(&c, 0, &tr, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "GPU traffic: elements of 0 bytes (1 .. 16)");
    CHECK_ERR(weft_compressor_parse("none", &c, &d), WEFT_OK);
    CHECK_ERR(weft_compress_traffic_get(&c, 2, &tr, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "GPU traffic: no compressor (none)");
    CHECK(weft_gpu_arch_hbm_bw("volta") == 900e9 && weft_gpu_arch_hbm_bw("blackwell") == 7700e9);
    CHECK(weft_gpu_arch_hbm_bw("cpu") == 0 && weft_gpu_arch_hbm_bw(NULL) == 0);
    /* On the CPU, bench_compress's figures: int8 quantizes 1.48 GB/s of
     * fp32 input, so 1 / 1.48e9 s a byte; qsgd was not measured. */
    CHECK_ERR(weft_compress_cost_get(WEFT_COMP_INT8, "cpu", &cost, &d), WEFT_OK);
    CHECK(cost.measured && !cost.roofline);
    CHECK_CONTAINS(cost.source, "measured: bench_compress");
    CHECK(cost.compress_s_per_b == 1 / 1.48e9);
    CHECK(cost.decompress_s_per_b == 1 / 7.28e9);
    CHECK_ERR(weft_compress_cost_get(WEFT_COMP_QSGD, "cpu", &cost, &d), WEFT_OK);
    CHECK(!cost.measured);
    CHECK_ERR(weft_compress_cost_get(WEFT_COMP_TOPK, "tpu", &cost, &d), WEFT_EINVAL);
}

static void test_parts(void)
{
    weft_diag d = {0};
    weft_sparse_part_counts pc;
    /* n = 1000, k = 10, two ranks, hashed: 500 elements and 5 non-zeros a
     * part; union 500 (1 - 0.99^2) = 9.95 -> 10. */
    weft_sparse_spec s = {1000, 2, 10000, 0, WEFT_SPARSE_HASH};
    CHECK_ERR(weft_sparse_part_get(&s, 2, 1, &pc, &d), WEFT_OK);
    CHECK_INT(pc.elems, 500);
    CHECK_INT(pc.nnz, 5);
    CHECK_INT(pc.uni, 10);
    /* Skew zipf:1 is ignored by hashing ... */
    s.zipf_milli = 1000;
    CHECK_ERR(weft_sparse_part_get(&s, 2, 0, &pc, &d), WEFT_OK);
    CHECK_INT(pc.nnz, 5);
    /* ... and overloads range 0: weights 1 and 1/2 split 10 as 6.67 and
     * 3.33 -> 7 and 3; unions 500 (1 - (493/500)^2) = 13.902 -> 14 and
     * 500 (1 - (497/500)^2) = 5.982 -> 6. */
    s.part = WEFT_SPARSE_RANGE;
    CHECK_ERR(weft_sparse_part_get(&s, 2, 0, &pc, &d), WEFT_OK);
    CHECK_INT(pc.nnz, 7);
    CHECK_INT(pc.uni, 14);
    CHECK_ERR(weft_sparse_part_get(&s, 2, 1, &pc, &d), WEFT_OK);
    CHECK_INT(pc.nnz, 3);
    CHECK_INT(pc.uni, 6);
    /* Density 1: every element, the union is the part. */
    weft_sparse_spec full = {1001, 2, 1000000, 0, WEFT_SPARSE_HASH};
    CHECK_ERR(weft_sparse_part_get(&full, 2, 0, &pc, &d), WEFT_OK);
    CHECK_INT(pc.elems, 501);
    CHECK_INT(pc.nnz, 501);
    CHECK_INT(pc.uni, 501);
    CHECK_ERR(weft_sparse_part_get(&s, 2, 2, &pc, &d), WEFT_EINVAL);
}

/* Builds `algo` at `size` with compressor `comp`, checks it verifies, runs
 * on real data and survives the text format, and returns its op bytes
 * (caller frees) in *bytes and the op count. */
static weft_plan *build(const weft_topo *t, const char *algo, weft_coll coll, double size,
                        const char *comp, uint32_t zipf_milli, uint64_t **bytes)
{
    weft_diag d = {0};
    weft_sparse_args sa;
    weft_sparse_args_init(&sa);
    CHECK_ERR(weft_compressor_parse(comp, &sa.comp, &d), WEFT_OK);
    sa.zipf_milli = zipf_milli;
    weft_sched_args a;
    weft_sched_args_init(&a, coll);
    a.bytes = size;
    a.sparse = &sa;
    weft_plan *p = NULL;
    CHECK_ERR(weft_sched_build(t, algo, &a, &p, &d), WEFT_OK);
    if (!p) {
        fprintf(stderr, "%s: %s\n", algo, d.msg);
        return NULL;
    }
    CHECK(weft_plan_has_op_sizes(p));
    CHECK(weft_plan_own_size(p) == size);
    CHECK_ERR(weft_plan_verify(p, t, &d), WEFT_OK);
    CHECK_ERR(weft_plan_exec_check(p, NULL, &d), WEFT_OK);
    uint32_t n = weft_plan_num_ops(p);
    *bytes = calloc(n + 1, sizeof **bytes);
    CHECK_ERR(weft_plan_op_bytes(p, *bytes, &d), WEFT_OK);
    /* Text round trip keeps the sizes. */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK_ERR(weft_plan_write(p, f), WEFT_OK);
    fclose(f);
    weft_plan *q = NULL;
    CHECK_ERR(weft_plan_parse(text, len, "x.plan", &q, &d), WEFT_OK);
    CHECK(q && weft_plan_equal(p, q));
    weft_plan_free(q);
    free(text);
    return p;
}

/* Counts ops by kind and locality with their bytes: the sum of the bytes
 * of ops between ranks, and each op's bytes equal to one of want[]. */
static uint64_t wire_bytes(const weft_plan *p, const uint64_t *b)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < weft_plan_num_ops(p); i++) {
        weft_op op = weft_plan_op(p, i);
        if (op.src_rank.v != op.dst_rank.v)
            sum += b[i];
    }
    return sum;
}

static void test_plans(void)
{
    weft_topo *t4 = weft__test_topo_spec("switch:4"), *t2 = weft__test_topo_spec("switch:2");
    uint64_t *b = NULL;

    /* quant-2shot int8 on 4 ranks at 4004 bytes: 2002 fp16 elements,
     * chunks of 501, 501, 500, 500 -> 505, 505, 504, 504 bytes each way;
     * 12 sends to owners, 12 reduces, 12 sends back. */
    weft_plan *p = build(t4, "quant-2shot", WEFT_COLL_ALLREDUCE, 4004, "int8", 0, &b);
    /* and 13 compute ops a rank (test_compute). */
    CHECK_INT(weft_plan_num_ops(p), 36 + 4 * 13);
    for (uint32_t i = 0; i < 36; i++) {
        weft_op op = weft_plan_op(p, i);
        uint32_t owner = op.kind == WEFT_OP_REDUCE        ? op.dst_rank.v
                         : op.dst_buf == WEFT_BUF_SCRATCH ? op.dst_rank.v
                                                          : op.src_rank.v;
        CHECK_INT(b[i], owner < 2 ? 505 : 504);
    }
    CHECK_INT(wire_bytes(p, b), 12 * 505 + 12 * 504);
    weft_plan_free(p);
    free(b);

    /* sparse-hash on 4 ranks at 400,000 bytes: n = 200,000, k = 2,000,
     * 500 non-zeros a part: 3,000 bytes to each owner; the union
     * 50,000 (1 - 0.99^4) = 1,970.2 -> 1,971 pairs, 11,826 bytes back. */
    p = build(t4, "sparse-hash", WEFT_COLL_ALLREDUCE, 400000, "topk:0.01", 0, &b);
    CHECK_INT(weft_plan_num_ops(p), 36 + 4 * 11);
    for (uint32_t i = 0; i < 36; i++) {
        weft_op op = weft_plan_op(p, i);
        bool back = op.kind == WEFT_OP_COPY && op.dst_buf == WEFT_BUF_IN;
        CHECK_INT(b[i], back ? 11826 : 3000);
    }
    CHECK_INT(wire_bytes(p, b), 12 * 3000 + 12 * 11826);
    /* At twice the size every op moves twice the bytes. */
    double at[80];
    weft_diag d = {0};
    CHECK_ERR(weft_plan_op_bytes_at(p, 800000, at, &d), WEFT_OK);
    CHECK(at[0] == 6000);
    weft_plan_free(p);
    free(b);

    /* sparse-range on 2 ranks, n = 1000 (2000 bytes), topk:0.01, zipf:1:
     * the parts of test_parts: 7 and 3 pairs to the owners (42, 18
     * bytes), unions 14 and 6 back (84, 36). */
    p = build(t2, "sparse-range", WEFT_COLL_ALLREDUCE, 2000, "topk:0.01", 1000, &b);
    CHECK_INT(weft_plan_num_ops(p), 6 + 2 * 7);
    CHECK_INT(wire_bytes(p, b), 42 + 18 + 84 + 36);
    weft_plan_free(p);
    free(b);
    /* Hashed, the same tensors balance: 5 pairs each way, unions of 10. */
    p = build(t2, "sparse-hash", WEFT_COLL_ALLREDUCE, 2000, "topk:0.01", 1000, &b);
    CHECK_INT(wire_bytes(p, b), 30 + 30 + 60 + 60);
    weft_plan_free(p);
    free(b);

    /* sparse-ag allgather on 4 ranks, 8000 bytes of output: 2000 bytes a
     * rank, n = 1000, k = 10: 60 bytes to each of 3 others. */
    p = build(t4, "sparse-ag", WEFT_COLL_ALLGATHER, 8000, "topk:0.01", 0, &b);
    CHECK_INT(weft_plan_num_ops(p), 12);
    CHECK_INT(wire_bytes(p, b), 12 * 60);
    weft_plan_free(p);
    free(b);
    /* sparse-ag allreduce on 2 ranks at 4000 bytes: n = 2000, k = 20, 120
     * bytes each way and one local sum of 120 bytes on each rank. */
    p = build(t2, "sparse-ag", WEFT_COLL_ALLREDUCE, 4000, "randk:0.01", 0, &b);
    CHECK_INT(weft_plan_num_ops(p), 4 + 2);
    for (uint32_t i = 0; i < 6; i++)
        CHECK_INT(b[i], 48); /* randk: 20 x 2 + 8 */
    /* The two compute ops: each rank sums what it received. */
    CHECK_INT(weft_plan_op_compute(p, 4), WEFT_COMPUTE_AGGREGATE);
    CHECK_INT(weft_plan_op(p, 5).src_rank.v, 1);
    weft_plan_free(p);
    free(b);

    /* Errors name what is wrong. */
    weft_sparse_args sa;
    weft_sparse_args_init(&sa);
    weft_sched_args a;
    weft_sched_args_init(&a, WEFT_COLL_ALLREDUCE);
    a.sparse = &sa;
    p = NULL;
    CHECK_ERR(weft_sched_build(t4, "quant-2shot", &a, &p, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "quant-2shot aggregates dense chunks; topk is sparse (use sparse-hash or "
                     "sparse-ag)");
    CHECK_ERR(weft_compressor_parse("int8", &sa.comp, &d), WEFT_OK);
    CHECK_ERR(weft_sched_build(t4, "sparse-hash", &a, &p, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "sparse-hash needs a density (a sparse compressor: topk:D, dgc:D, randk:D or "
                     "hash:D), not int8");
    a.coll = WEFT_COLL_ALLGATHER;
    CHECK_ERR(weft_sched_build(t4, "sparse-hash", &a, &p, &d), WEFT_EUNSUPPORTED);
    CHECK(p == NULL);
    weft_topo_free(t4);
    weft_topo_free(t2);
}

/* Checks op id: compute c of `bytes` on rank r with deps exactly want[]. */
static void check_compute(const weft_plan *p, const uint64_t *b, uint32_t id, weft_compute c,
                          uint32_t r, uint64_t bytes, const uint32_t *want, uint32_t nwant)
{
    uint32_t nd;
    const uint32_t *deps = weft_plan_op_deps(p, id, &nd);
    CHECK_INT(weft_plan_op_compute(p, id), c);
    CHECK_INT(weft_plan_op(p, id).src_rank.v, r);
    CHECK_INT(b[id], bytes);
    CHECK_INT(nd, nwant);
    for (uint32_t k = 0; k < nd && k < nwant; k++)
        CHECK_INT(deps[k], want[k]);
}

/* True when op id has dep `dep`. */
static bool has_dep(const weft_plan *p, uint32_t id, uint32_t dep)
{
    uint32_t nd;
    const uint32_t *deps = weft_plan_op_deps(p, id, &nd);
    for (uint32_t k = 0; k < nd; k++)
        if (deps[k] == dep)
            return true;
    return false;
}

/* The compute each rank runs, placed after the data ops in the runtime's
 * order (sparse_compute.c). Data op ids of the two-shot on 4 ranks: phase
 * 1 by owner j then sender s (0..2: 1, 2, 3 -> 0; 3: 0 -> 1), 12 reduces,
 * phase 2 by owner then receiver (24..26: 0 -> 1, 2, 3; 27: 1 -> 0; 30:
 * 2 -> 0; 33: 3 -> 0). */
static void test_compute(void)
{
    weft_topo *t4 = weft__test_topo_spec("switch:4");
    uint64_t *b = NULL;
    /* sparse-hash at 400,000 bytes (test_plans: 3000 bytes a part, unions
     * of 11,826): rank 0 hashes its 4 parts' pairs, sums its own part then
     * each sender's as it arrives, packs its union, zeroes its 200,000
     * fp16 output and scatters its own union then each owner's. */
    weft_plan *p = build(t4, "sparse-hash", WEFT_COLL_ALLREDUCE, 400000, "topk:0.01", 0, &b);
    check_compute(p, b, 36, WEFT_COMPUTE_HASH, 0, 12000, NULL, 0);
    check_compute(p, b, 37, WEFT_COMPUTE_AGGREGATE, 0, 3000, (uint32_t[]){36}, 1);
    check_compute(p, b, 38, WEFT_COMPUTE_AGGREGATE, 0, 3000, (uint32_t[]){37, 0}, 2);
    check_compute(p, b, 40, WEFT_COMPUTE_AGGREGATE, 0, 3000, (uint32_t[]){39, 2}, 2);
    check_compute(p, b, 41, WEFT_COMPUTE_COMPRESS, 0, 11826, (uint32_t[]){40}, 1);
    check_compute(p, b, 42, WEFT_COMPUTE_FILL, 0, 400000, (uint32_t[]){41}, 1);
    check_compute(p, b, 43, WEFT_COMPUTE_DECOMPRESS, 0, 11826, (uint32_t[]){42}, 1);
    check_compute(p, b, 44, WEFT_COMPUTE_DECOMPRESS, 0, 11826, (uint32_t[]){43, 27}, 2);
    check_compute(p, b, 46, WEFT_COMPUTE_DECOMPRESS, 0, 11826, (uint32_t[]){45, 33}, 2);
    /* Rank 1 sums rank 0's pairs before its own; it zeroes its output and
     * scatters its own union right after packing it, then owner 0's once
     * it is in. */
    check_compute(p, b, 48, WEFT_COMPUTE_AGGREGATE, 1, 3000, (uint32_t[]){47, 3}, 2);
    check_compute(p, b, 49, WEFT_COMPUTE_AGGREGATE, 1, 3000, (uint32_t[]){48}, 1);
    check_compute(p, b, 53, WEFT_COMPUTE_FILL, 1, 400000, (uint32_t[]){52}, 1);
    check_compute(p, b, 54, WEFT_COMPUTE_DECOMPRESS, 1, 11826, (uint32_t[]){53}, 1);
    check_compute(p, b, 55, WEFT_COMPUTE_DECOMPRESS, 1, 11826, (uint32_t[]){54, 24}, 2);
    /* Sends wait for the kernels that prepare them. */
    CHECK(has_dep(p, 3, 36) && has_dep(p, 6, 36) && has_dep(p, 24, 41) && has_dep(p, 26, 41));
    CHECK(!has_dep(p, 0, 36));
    weft_plan_free(p);
    free(b);

    /* quant-2shot int8 at 4004 bytes (chunks of 501, 501, 500, 500 fp16:
     * 1002, 1002, 1000, 1000 dense bytes): rank 0 compresses the chunks
     * it sends, adds its own chunk, decompresses and adds each sender's,
     * compresses its sum and decompresses it (its own output), then
     * decompresses each chunk back. */
    p = build(t4, "quant-2shot", WEFT_COLL_ALLREDUCE, 4004, "int8", 0, &b);
    check_compute(p, b, 36, WEFT_COMPUTE_COMPRESS, 0, 3002, NULL, 0);
    check_compute(p, b, 37, WEFT_COMPUTE_AGGREGATE, 0, 1002, (uint32_t[]){36}, 1);
    check_compute(p, b, 38, WEFT_COMPUTE_DECOMPRESS, 0, 1002, (uint32_t[]){37, 0}, 2);
    check_compute(p, b, 39, WEFT_COMPUTE_AGGREGATE, 0, 1002, (uint32_t[]){38}, 1);
    check_compute(p, b, 44, WEFT_COMPUTE_COMPRESS, 0, 1002, (uint32_t[]){43}, 1);
    check_compute(p, b, 45, WEFT_COMPUTE_DECOMPRESS, 0, 1002, (uint32_t[]){44}, 1);
    check_compute(p, b, 46, WEFT_COMPUTE_DECOMPRESS, 0, 1002, (uint32_t[]){45, 27}, 2);
    check_compute(p, b, 48, WEFT_COMPUTE_DECOMPRESS, 0, 1000, (uint32_t[]){47, 33}, 2);
    CHECK(has_dep(p, 24, 45) && has_dep(p, 3, 36));
    weft_plan_free(p);
    free(b);

    /* sparse-ag all-gather: the compressed tensors are the output, no
     * compute. */
    p = build(t4, "sparse-ag", WEFT_COLL_ALLGATHER, 8000, "topk:0.01", 0, &b);
    for (uint32_t i = 0; i < weft_plan_num_ops(p); i++)
        CHECK_INT(weft_plan_op_compute(p, i), WEFT_COMPUTE_NONE);
    weft_plan_free(p);
    free(b);
    weft_topo_free(t4);
}

/* On a100:2 (16 ranks) the sparse plans simulate, and at 1% density the
 * hashed sparse all-reduce of 256 MiB beats the dense ring. */
static void test_sim(void)
{
    weft_topo *t = weft__test_topo_spec("a100:2");
    weft_diag d = {0};
    uint64_t size = 256u << 20;
    uint64_t *b = NULL;
    weft_plan *sp = build(t, "sparse-hash", WEFT_COLL_ALLREDUCE, (double)size, "topk:0.01", 0, &b);
    free(b);
    weft_plan *ring = NULL;
    CHECK_ERR(weft_synth_classic(t, "ring", WEFT_COLL_ALLREDUCE, (weft_rank){0}, &ring, &d),
              WEFT_OK);
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    weft_sim_result rs, rr;
    CHECK_ERR(weft_sim_plan(t, sp, size, &o, &rs, &d), WEFT_OK);
    CHECK_ERR(weft_sim_plan(t, ring, size, &o, &rr, &d), WEFT_OK);
    CHECK(rs.time_s > 0 && rs.time_s < rr.time_s);
    printf("a100:2 256 MiB allreduce: ring %.3f ms, sparse-hash topk:0.01 %.3f ms\n",
           rr.time_s * 1e3, rs.time_s * 1e3);
    weft_plan_free(sp);
    weft_plan_free(ring);
    weft_topo_free(t);
}

/* hier-quant int8 on 2 hosts of 2 ranks at 4004 bytes: n = 2002 fp16
 * elements in L x H = 4 chunks of 501, 501, 500, 500; block j (chunks
 * 2j, 2j + 1) is local rank j's. Phase 1: a 2-rank ring reduce-scatter in
 * each host, one op per rank moving the other's block: block 0 is 1002
 * elements (2004 bytes), block 1 1000 (2000). Phase 2, on rail j: one
 * compressed chunk to each owner (505 bytes on rail 0: 501 + one fp32
 * scale; 504 on rail 1), one local reduce of it, one back. Phase 3: the
 * ring all-gather, as phase 1. 4 + 12 + 4 ops; only phase 2's 8 copies
 * cross hosts: 4 x 505 + 4 x 504 = 4036 bytes, against 8016 for the dense
 * hier (the two rails' two chunks each way in 2 bytes an element). */
static void test_hier(void)
{
    weft_topo *t = weft__test_topo_spec("clos:hosts=2,gpus=2,nics=2,leafports=2");
    uint64_t *b = NULL;
    weft_plan *p = build(t, "hier-quant", WEFT_COLL_ALLREDUCE, 4004, "int8", 0, &b);
    /* and each rail rank's 7 compute ops (test_compute). */
    CHECK_INT(weft_plan_num_ops(p), 20 + 4 * 7);
    uint64_t cross = 0, local = 0, box = 0;
    uint32_t nbox = 0, ncross = 0, nlocal = 0;
    for (uint32_t i = 0; i < 20; i++) {
        weft_op op = weft_plan_op(p, i);
        if (op.count == 2) { /* a box phase: a whole block */
            CHECK_INT(b[i], op.src_index == 0 ? 2004 : 2000);
            CHECK(op.src_rank.v / 2 == op.dst_rank.v / 2);
            CHECK(i < 4 || i >= 16);
            box += b[i], nbox++;
            continue;
        }
        CHECK_INT(op.count, 1);
        CHECK(i >= 4 && i < 16);
        uint32_t chunk = op.src_buf == WEFT_BUF_SCRATCH ? op.dst_index : op.src_index;
        CHECK_INT(b[i], chunk < 2 ? 505 : 504);
        if (op.src_rank.v == op.dst_rank.v) {
            local += b[i], nlocal++;
        } else {
            CHECK(op.src_rank.v / 2 != op.dst_rank.v / 2); /* b0.gpu*, b1.gpu* */
            cross += b[i], ncross++;
        }
    }
    CHECK_INT(nbox, 8);
    CHECK_INT(box, 4 * 2004 + 4 * 2000);
    CHECK_INT(ncross, 8);
    CHECK_INT(cross, 4036);
    CHECK_INT(nlocal, 4);
    CHECK_INT(local, 2 * 505 + 2 * 504);
    weft_plan_free(p);
    free(b);

    /* sign: 1 bit an element and a scale: chunks of 501 -> 63 + 4 = 67
     * bytes, of 500 -> 63 + 4 = 67; the box phases stay dense. */
    p = build(t, "hier-quant", WEFT_COLL_ALLREDUCE, 4004, "sign", 0, &b);
    CHECK_INT(wire_bytes(p, b), 8 * 67 + 4 * 2004 + 4 * 2000);
    weft_plan_free(p);
    free(b);

    /* Errors: one host; a sparse compressor. */
    weft_topo *one = weft__test_topo_spec("a100:1");
    weft_sparse_args sa;
    weft_sparse_args_init(&sa);
    weft_sched_args a;
    weft_sched_args_init(&a, WEFT_COLL_ALLREDUCE);
    a.sparse = &sa;
    weft_diag d = {0};
    CHECK_ERR(weft_sched_build(t, "hier-quant", &a, &p, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "hier-quant aggregates dense chunks; topk is sparse (use sparse-hash or "
                     "sparse-ag)");
    CHECK_ERR(weft_compressor_parse("int8", &sa.comp, &d), WEFT_OK);
    CHECK_ERR(weft_sched_build(one, "hier-quant", &a, &p, &d), WEFT_ETOPO);
    CHECK_STR(d.msg, "hier-quant needs at least two hosts (host=) of equal size; this fabric "
                     "has 1 host group");
    weft_topo_free(one);
    weft_topo_free(t);
}

/* 256 MiB fp16 all-reduce, int8 across hosts. On a100:2 (8 x 25 GB/s NICs
 * a host) hier-quant beats the dense hier it is built from; on a100:2 with
 * 25 Gb/s a host (8 NICs of 3.125 Gb/s) the network is the bottleneck and
 * int8 halves its bytes: hier-quant beats the best dense plan (optimal)
 * by more than 1.8x. */
static void test_hier_sim(void)
{
    const char *fab[2] = {"a100:2", "a100:2,nicbw=3.125Gbps"};
    for (int f = 0; f < 2; f++) {
        weft_topo *t = weft__test_topo_spec(fab[f]);
        weft_diag d = {0};
        uint64_t size = 256u << 20, *b = NULL;
        weft_plan *hq = build(t, "hier-quant", WEFT_COLL_ALLREDUCE, (double)size, "int8", 0, &b);
        free(b);
        weft_plan *dense = NULL;
        weft_sched_args a;
        weft_sched_args_init(&a, WEFT_COLL_ALLREDUCE);
        CHECK_ERR(weft_sched_build(t, f ? "optimal" : "hier", &a, &dense, &d), WEFT_OK);
        weft_sim_opts o;
        weft_sim_opts_init(&o);
        weft_sim_result rq, rd;
        CHECK_ERR(weft_sim_plan(t, hq, size, &o, &rq, &d), WEFT_OK);
        CHECK_ERR(weft_sim_plan(t, dense, size, &o, &rd, &d), WEFT_OK);
        printf("%s 256 MiB allreduce: %s %.3f ms, hier-quant int8 %.3f ms\n", fab[f],
               f ? "optimal" : "hier", rd.time_s * 1e3, rq.time_s * 1e3);
        CHECK(rq.time_s < rd.time_s);
        if (f)
            CHECK(rq.time_s * 1.8 < rd.time_s);
        weft_plan_free(hq);
        weft_plan_free(dense);
        weft_topo_free(t);
    }
}

int main(void)
{
    test_output_bytes();
    test_parts();
    test_plans();
    test_compute();
    test_sim();
    test_hier();
    test_hier_sim();
    return weft_test_done();
}
