/* The simulator's charge for compute ops (weft_sim_opts.compute_s_per_b):
 * exact on a hand-computed plan, and on a sparse plan the network-only
 * time plus the compute on its critical path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "weft/compress.h"
#include "weft/sim.h"
#include "weft/synth.h"

/* On switch:2: rank 0 hashes 1000 bytes (op 0) before its copy to rank 1
 * (op 1, 4000 bytes), which rank 1 aggregates (op 2, 500 bytes); rank 1's
 * copy to rank 0 (op 3) computes nothing. */
static const char small[] = "weft-plan 1\ncoll allgather\nranks 2\nchunks 1\nscratch 0\n"
                            "inplace yes\nsize 8000\n"
                            "op 0 nop 0 compute=hash bytes=1000\n"
                            "op 1 copy 0:out[0] 1:out[0] bytes=4000 deps=0\n"
                            "op 2 nop 1 compute=aggregate bytes=500 deps=1\n"
                            "op 3 copy 1:out[1] 0:out[1] bytes=4000\n";

/* Fluid model, alpha 5 us. Without rates the plan takes its wire time W
 * (both copies alike). With 1 ns a byte of hash and 4 ns of aggregate,
 * rank 0's hash (1000 bytes: 1 us) delays its copy and rank 1's aggregate
 * (500 bytes: 2 us) follows it, neither paying alpha (no message): W +
 * 3 us, while rank 1's copy still takes W. At twice the size every op's
 * bytes double: W' + 6 us. */
static void test_exact(void)
{
    weft_topo *t = weft__test_topo_spec("switch:2");
    weft_plan *p = NULL;
    weft_diag d = {0};
    CHECK_ERR(weft_plan_parse(small, strlen(small), "small.plan", &p, &d), WEFT_OK);
    weft_sim_opts none, o;
    weft_sim_opts_init(&none);
    none.alpha_s = 5e-6;
    o = none;
    o.compute_s_per_b[WEFT_COMPUTE_HASH] = 1e-9;
    o.compute_s_per_b[WEFT_COMPUTE_AGGREGATE] = 4e-9;
    weft_sim_result r0, r1, r2, r3;
    CHECK_ERR(weft_sim_plan(t, p, 8000, &none, &r0, &d), WEFT_OK);
    CHECK_ERR(weft_sim_plan(t, p, 8000, &o, &r1, &d), WEFT_OK);
    CHECK_ERR(weft_sim_plan(t, p, 16000, &none, &r2, &d), WEFT_OK);
    CHECK_ERR(weft_sim_plan(t, p, 16000, &o, &r3, &d), WEFT_OK);
    /* W: alpha, 4000 bytes at switch:2's link rate, the route's latency. */
    CHECK(r0.time_s > 5e-6 && r2.time_s > r0.time_s);
    CHECK(fabs(r1.time_s - (r0.time_s + 3e-6)) < 1e-15);
    CHECK(fabs(r3.time_s - (r2.time_s + 6e-6)) < 1e-15);
    /* A rate that is not a time. */
    o.compute_s_per_b[WEFT_COMPUTE_AGGREGATE] = -1;
    CHECK_ERR(weft_sim_plan(t, p, 8000, &o, &r1, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "sim: op 2 (aggregate on rank 1): a compute time of -500 s (the rate of "
                     "aggregate must be finite and >= 0)");
    o.compute_s_per_b[WEFT_COMPUTE_AGGREGATE] = NAN;
    CHECK_ERR(weft_sim_plan(t, p, 8000, &o, &r1, &d), WEFT_EINVAL);
    weft_plan_free(p);
    weft_topo_free(t);
}

/* sparse-hash on switch:2 at 400,000 bytes (n = 200,000 fp16, topk:0.01:
 * 2000 pairs a rank, 1000 a part, 6 bytes a pair; the union of a part of
 * 100,000 elements is 100,000 (1 - 0.99^2) = 1990 -> 1991 pairs). Each
 * rank hashes its 2000 pairs (12,000 bytes) before its copy to the owner
 * and packs its union (compress: 1991 x 6 = 11,946 bytes) before the copy
 * back; the two ranks are alike, so with only those charged (h s a byte)
 * the plan takes its network-only time plus h x 23,946, exactly. Then every kind
 * charged: never less, and the rank's whole chain is an upper bound. */
static void test_sparse(void)
{
    weft_topo *t = weft__test_topo_spec("switch:2");
    weft_sparse_args sa;
    weft_sparse_args_init(&sa);
    weft_sched_args a;
    weft_sched_args_init(&a, WEFT_COLL_ALLREDUCE);
    a.bytes = 400000;
    a.sparse = &sa;
    weft_plan *p = NULL;
    weft_diag d = {0};
    CHECK_ERR(weft_sched_build(t, "sparse-hash", &a, &p, &d), WEFT_OK);
    uint32_t n = weft_plan_num_ops(p);
    CHECK_INT(n, 20);
    uint64_t b[20];
    CHECK_ERR(weft_plan_op_bytes(p, b, &d), WEFT_OK);
    CHECK_INT(weft_plan_op_compute(p, 6), WEFT_COMPUTE_HASH);
    CHECK_INT(b[6], 12000);
    CHECK_INT(weft_plan_op_compute(p, 9), WEFT_COMPUTE_COMPRESS);
    CHECK_INT(b[9], 11946);
    weft_sim_opts none, o;
    weft_sim_opts_init(&none);
    o = none;
    const double h = 1e-8;
    o.compute_s_per_b[WEFT_COMPUTE_HASH] = h;
    o.compute_s_per_b[WEFT_COMPUTE_COMPRESS] = h;
    weft_sim_result r0, r1, r2;
    CHECK_ERR(weft_sim_plan(t, p, 400000, &none, &r0, &d), WEFT_OK);
    CHECK_ERR(weft_sim_plan(t, p, 400000, &o, &r1, &d), WEFT_OK);
    CHECK(fabs(r1.time_s - (r0.time_s + h * 23946)) < 1e-15);
    weft_compute_rates cr;
    CHECK_ERR(weft_compute_rates_get(&sa.comp, 2, "cpu", &cr, &d), WEFT_OK);
    memcpy(o.compute_s_per_b, cr.s_per_b, sizeof o.compute_s_per_b);
    CHECK_ERR(weft_sim_plan(t, p, 400000, &o, &r2, &d), WEFT_OK);
    double chain = 0;
    for (uint32_t id = 0; id < n; id++) {
        weft_op op = weft_plan_op(p, id);
        if (op.src_rank.v == 0 && weft_plan_op_compute(p, id) != WEFT_COMPUTE_NONE)
            chain += (double)b[id] * cr.s_per_b[weft_plan_op_compute(p, id)];
    }
    CHECK(r2.time_s > r0.time_s && r2.time_s <= r0.time_s + chain + 1e-15);
    weft_plan_free(p);
    weft_topo_free(t);
}

/* What the rates are and where they come from; what is refused. */
static void test_rates(void)
{
    weft_compute_rates cr;
    weft_diag d = {0};
    weft_compressor c;
    CHECK_ERR(weft_compressor_parse("topk:0.01", &c, &d), WEFT_OK);
    CHECK_ERR(weft_compute_rates_get(&c, 4, "cpu", &cr, &d), WEFT_OK);
    CHECK(cr.s_per_b[WEFT_COMPUTE_HASH] == 1.6645e-9);
    CHECK(cr.s_per_b[WEFT_COMPUTE_FILL] == 4.1954e-11);
    CHECK_CONTAINS(cr.source, "bench_sparse_kernels");
    CHECK_ERR(weft_compressor_parse("int8", &c, &d), WEFT_OK);
    CHECK_ERR(weft_compute_rates_get(&c, 4, "cpu", &cr, &d), WEFT_OK);
    CHECK(cr.s_per_b[WEFT_COMPUTE_COMPRESS] == 1 / 1.48e9);
    CHECK(cr.s_per_b[WEFT_COMPUTE_HASH] == 0);
    /* Per element: fp16 states half the bytes of the fp32 the kernels
     * read, pairs 6 bytes of their 8. */
    CHECK_ERR(weft_compute_rates_get(&c, 2, "cpu", &cr, &d), WEFT_OK);
    CHECK(cr.s_per_b[WEFT_COMPUTE_COMPRESS] == 1 / 1.48e9 * 2);
    CHECK_ERR(weft_compressor_parse("topk:0.01", &c, &d), WEFT_OK);
    CHECK_ERR(weft_compute_rates_get(&c, 2, "cpu", &cr, &d), WEFT_OK);
    CHECK(cr.s_per_b[WEFT_COMPUTE_HASH] == 1.6645e-9 * (8.0 / 6.0));
    CHECK(cr.s_per_b[WEFT_COMPUTE_FILL] == 4.1954e-11 * 2);
    CHECK_ERR(weft_compute_rates_get(&c, 0, "cpu", &cr, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "compute rates: elements of 0 bytes (1 .. 16)");
    CHECK_ERR(weft_compressor_parse("int8", &c, &d), WEFT_OK);
    /* On a GPU, a quantizer's ops at the roofline: int8 of fp16 on
     * hopper, per byte of the op's elements: compress 2 x 2 + 1 = 5 bytes
     * an element, 2.5 a byte; decompress 3, 1.5; aggregate 3. */
    CHECK_ERR(weft_compute_rates_get(&c, 2, "hopper", &cr, &d), WEFT_OK);
    CHECK(cr.s_per_b[WEFT_COMPUTE_COMPRESS] == 2.5 / 3350e9);
    CHECK(cr.s_per_b[WEFT_COMPUTE_DECOMPRESS] == 1.5 / 3350e9);
    CHECK(cr.s_per_b[WEFT_COMPUTE_AGGREGATE] == 3 / 3350e9);
    CHECK(cr.s_per_b[WEFT_COMPUTE_HASH] == 0 && cr.s_per_b[WEFT_COMPUTE_FILL] == 0);
    CHECK_CONTAINS(cr.source, "model: roofline");
    CHECK_ERR(weft_compute_rates_get(&c, 0, "hopper", &cr, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "GPU traffic: elements of 0 bytes (1 .. 16)");
    CHECK_ERR(weft_compressor_parse("topk:0.01", &c, &d), WEFT_OK);
    CHECK_ERR(weft_compute_rates_get(&c, 4, "volta", &cr, &d), WEFT_EUNSUPPORTED);
    CHECK_STR(d.msg, "no GPU rate for the topk plans' hash, aggregate and pack kernels is cited "
                     "in weft (docs/compression.md, \"Compute cost\"); on volta only the "
                     "quantizers (int8, fp8, qsgd, sign) have the roofline model");
    CHECK_ERR(weft_compressor_parse("int8", &c, &d), WEFT_OK);
    CHECK_ERR(weft_compute_rates_get(&c, 4, "tpu", &cr, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "unknown processor 'tpu' (cpu, or a GPU: volta, ampere, hopper, blackwell)");
    CHECK_ERR(weft_compressor_parse("qsgd:15", &c, &d), WEFT_OK);
    CHECK_ERR(weft_compute_rates_get(&c, 4, "cpu", &cr, &d), WEFT_EUNSUPPORTED);
    CHECK_STR(d.msg, "the compute of qsgd on cpu is not measured (docs/compression.md, \"Compute "
                     "cost\": int8 and sign are)");
}

/* The trace (trace.h): rank 0 hashes 1000 bytes (op 0) and fills 2000
 * (op 1), both with no deps, so they overlap from 0: the hash (1 us at 1
 * ns a byte) on thread "compute", the fill (2 us) on "compute 2"; rank
 * 0's copy (op 2) waits for both on "sends". Uncharged, no compute is
 * drawn and the nops are zero-length sends. */
static const char two[] = "weft-plan 1\ncoll allgather\nranks 2\nchunks 1\nscratch 0\n"
                          "inplace yes\nsize 8000\n"
                          "op 0 nop 0 compute=hash bytes=1000\n"
                          "op 1 nop 0 compute=fill bytes=2000\n"
                          "op 2 copy 0:out[0] 1:out[0] bytes=4000 deps=0,1\n"
                          "op 3 copy 1:out[1] 0:out[1] bytes=4000\n";

static char *traced(const weft_topo *t, const weft_plan *p, weft_sim_opts *o)
{
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (!f)
        return NULL;
    o->trace = f;
    weft_sim_result r;
    weft_diag d = {0};
    CHECK_ERR(weft_sim_plan(t, p, 8000, o, &r, &d), WEFT_OK);
    long len = ftell(f);
    rewind(f);
    char *text = calloc(1, (size_t)len + 1);
    CHECK(text && fread(text, 1, (size_t)len, f) == (size_t)len);
    fclose(f);
    return text;
}

static void test_trace(void)
{
    weft_topo *t = weft__test_topo_spec("switch:2");
    weft_plan *p = NULL;
    weft_diag d = {0};
    CHECK_ERR(weft_plan_parse(two, strlen(two), "two.plan", &p, &d), WEFT_OK);
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    o.compute_s_per_b[WEFT_COMPUTE_HASH] = 1e-9;
    o.compute_s_per_b[WEFT_COMPUTE_FILL] = 1e-9;
    o.compute_source = "test \"rates\"";
    char *text = traced(t, p, &o);
    if (text) {
        CHECK_CONTAINS(text, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,"
                             "\"args\":{\"name\":\"compute\"}}");
        CHECK_CONTAINS(text, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,"
                             "\"args\":{\"name\":\"compute 2\"}}");
        CHECK_CONTAINS(text, "{\"name\":\"hash\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":1,"
                             "\"tid\":1,\"ts\":0.000000,\"dur\":1.000000,\"args\":{\"op\":0,"
                             "\"rank\":0,\"bytes\":1000,\"seconds\":1.0000000000000002e-06,"
                             "\"s_per_b\":1.0000000000000001e-09,\"source\":\"test "
                             "\\\"rates\\\"\"}}");
        CHECK_CONTAINS(text, "{\"name\":\"fill\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":1,"
                             "\"tid\":2,\"ts\":0.000000,\"dur\":2.000000,\"args\":{\"op\":1,");
        CHECK(strstr(text, "\"name\":\"nop 0\"") == NULL);
        CHECK(strstr(text, "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,\"tid\":1") == NULL);
    }
    free(text);
    weft_sim_opts_init(&o);
    text = traced(t, p, &o);
    if (text) {
        CHECK(strstr(text, "compute") == NULL);
        CHECK_CONTAINS(text, "{\"name\":\"nop 0\",\"cat\":\"nop\",\"ph\":\"X\",\"pid\":1,"
                             "\"tid\":0,\"ts\":0.000000,\"dur\":0.000000,");
    }
    free(text);
    weft_plan_free(p);
    weft_topo_free(t);
}

int main(void)
{
    test_trace();
    test_exact();
    test_sparse();
    test_rates();
    return weft_test_done();
}
