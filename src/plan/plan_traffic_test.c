/* Alltoallv plans: chunk sizes from the matrix, the bytes of every op
 * (relays through scratch included), the verifier's postcondition without
 * 0-byte chunks, the text and JSON forms, exact link loads, the executor,
 * and MSCCL export (padded). */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/testing.h"
#include "weft/plan.h"
#include "weft/topo.h"

/* Rows s, columns d: the bytes rank s sends rank d. */
static const uint64_t M[9] = {4, 6, 5, /**/ 0, 3, 1, /**/ 2, 0, 8};

static weft_op copy(uint32_t s, weft_buf sb, uint32_t si, uint32_t d, weft_buf db, uint32_t di,
                    uint32_t n)
{
    weft_op op = {WEFT_OP_COPY, {s}, {d}, sb, db, si, di, n, 0};
    return op;
}

/* 3 ranks, C = 2, out of place, 2 scratch slots: every nonzero block
 * straight to its rank, except 0 -> 2 (relayed through rank 1's scratch)
 * and 1 -> 2 (1 byte: only its first chunk, the second has 0 bytes).
 * skip_diag2 leaves out rank 2's own block (8 bytes: then it is wrong). */
static weft_plan *build(bool skip_diag2)
{
    weft_plan_info info = {WEFT_COLL_ALLTOALL, 3, {0}, 2, 2, false};
    weft_plan *p = NULL;
    CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
    weft_traffic t = {3, (uint64_t *)M};
    CHECK_ERR(weft_plan_set_traffic(p, &t, NULL), WEFT_OK);
    uint32_t a;
    for (uint32_t s = 0; s < 3; s++)
        for (uint32_t d = 0; d < 3; d++) {
            if (M[s * 3 + d] == 0 || (s == 0 && d == 2) || (s == 1 && d == 2) ||
                (skip_diag2 && s == 2 && d == 2))
                continue;
            weft_op op = copy(s, WEFT_BUF_IN, d * 2, d, WEFT_BUF_OUT, s * 2, 2);
            CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, NULL), WEFT_OK);
        }
    weft_op op = copy(0, WEFT_BUF_IN, 4, 1, WEFT_BUF_SCRATCH, 0, 2);
    CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, &a), WEFT_OK);
    op = copy(1, WEFT_BUF_SCRATCH, 0, 2, WEFT_BUF_OUT, 0, 2);
    CHECK_ERR(weft_plan_add_op(p, &op, &a, 1, NULL), WEFT_OK);
    op = copy(1, WEFT_BUF_IN, 4, 2, WEFT_BUF_OUT, 2, 1);
    CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, NULL), WEFT_OK);
    return p;
}

static void test_sizes_and_verify(void)
{
    weft_plan *p = build(false);
    CHECK(weft_plan_traffic(p) != NULL);
    /* Block (0, 2) = 5 bytes in 2 chunks: 3 and 2; block (1, 2) = 1: 1, 0. */
    CHECK_INT(weft_plan_chunk_bytes(p, (0 * 3 + 2) * 2 + 0), 3);
    CHECK_INT(weft_plan_chunk_bytes(p, (0 * 3 + 2) * 2 + 1), 2);
    CHECK_INT(weft_plan_chunk_bytes(p, (1 * 3 + 2) * 2 + 0), 1);
    CHECK_INT(weft_plan_chunk_bytes(p, (1 * 3 + 2) * 2 + 1), 0);
    CHECK_INT(weft_plan_chunk_bytes(p, 18), 0); /* no such chunk */
    CHECK(weft_plan_traffic_size(p) == 29.0 / 3);
    weft_diag d;
    CHECK_ERR(weft_plan_verify(p, NULL, &d), WEFT_OK);
    /* Every op's bytes, the relay's two hops included. */
    uint32_t n = weft_plan_num_ops(p);
    CHECK_INT(n, 8);
    uint64_t bytes[8];
    CHECK_ERR(weft_plan_op_bytes(p, bytes, &d), WEFT_OK);
    static const uint64_t want[8] = {4, 6, 3, 2, 8, 5, 5, 1};
    for (uint32_t i = 0; i < 8; i++)
        CHECK_INT(bytes[i], want[i]);
    double at[8];
    CHECK_ERR(weft_plan_op_bytes_at(p, 29.0 / 3 * 2, at, &d), WEFT_OK);
    CHECK(at[5] == 10.0 && at[7] == 2.0);
    CHECK_ERR(weft_plan_exec_check(p, NULL, &d), WEFT_OK);
    weft_plan_free(p);

    /* Rank 2's own 8 bytes are never placed: wrong. */
    p = build(true);
    CHECK_ERR(weft_plan_verify(p, NULL, &d), WEFT_EVERIFY);
    CHECK_CONTAINS(d.msg, "rank 2 out[4]");
    CHECK_ERR(weft_plan_exec_check(p, NULL, &d), WEFT_EVERIFY);
    weft_plan_free(p);

    weft_plan_info ag = {WEFT_COLL_ALLGATHER, 3, {0}, 1, 0, true};
    CHECK_ERR(weft_plan_new(&ag, &p), WEFT_OK);
    weft_traffic t = {3, (uint64_t *)M};
    CHECK_ERR(weft_plan_set_traffic(p, &t, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "a traffic matrix gives the sizes of an alltoall plan, not allgather");
    CHECK_ERR(weft_plan_op_bytes(p, bytes, &d), WEFT_EINVAL);
    weft_plan_free(p);
    weft_plan_info a4 = {WEFT_COLL_ALLTOALL, 4, {0}, 1, 0, false};
    CHECK_ERR(weft_plan_new(&a4, &p), WEFT_OK);
    CHECK_ERR(weft_plan_set_traffic(p, &t, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "the traffic matrix has 3 ranks, the plan 4");
    weft_plan_free(p);
}

static char *text_of(const weft_plan *p, bool json)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return NULL;
    CHECK_ERR(json ? weft_plan_write_json(p, f) : weft_plan_write(p, f), WEFT_OK);
    fclose(f);
    return buf;
}

static void test_text(void)
{
    weft_plan *p = build(false), *q = NULL, *c = NULL;
    char *s = text_of(p, false);
    CHECK_CONTAINS(s, "inplace no\ntraffic 0 0 4 6 5\ntraffic 1 0 0 3 1\ntraffic 2 0 2 0 8\nop 0 ");
    weft_diag d;
    CHECK_ERR(weft_plan_parse(s, strlen(s), "v.plan", &q, &d), WEFT_OK);
    CHECK(q && weft_plan_equal(p, q));
    char *s2 = q ? text_of(q, false) : NULL;
    CHECK_STR(s2, s);
    free(s2);
    CHECK_ERR(weft_plan_copy(p, &c), WEFT_OK);
    CHECK(weft_plan_equal(p, c));
    weft_traffic t = {3, (uint64_t *)M};
    weft_traffic u;
    CHECK_ERR(weft_traffic_transpose(&t, &u, NULL), WEFT_OK);
    CHECK_ERR(weft_plan_set_traffic(c, &u, NULL), WEFT_OK);
    CHECK(!weft_plan_equal(p, c));
    weft_traffic_free(&u);
    char *j = text_of(p, true);
    CHECK_CONTAINS(j, "\"inplace\":false,\"traffic\":[[4,6,5],[0,3,1],[2,0,8]],\"ops\":[");
    free(j);
    free(s);
    weft_plan_free(c);
    weft_plan_free(q);
    weft_plan_free(p);

    /* A row longer than 256 entries is split over lines. */
    weft_plan_info info = {WEFT_COLL_ALLTOALL, 300, {0}, 1, 0, false};
    CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
    CHECK_ERR(weft_traffic_uniform(300, 300 * 7, &u, NULL), WEFT_OK);
    CHECK_ERR(weft_plan_set_traffic(p, &u, NULL), WEFT_OK);
    weft_traffic_free(&u);
    s = text_of(p, false);
    CHECK_CONTAINS(s, "\ntraffic 0 256 7 7 ");
    CHECK_ERR(weft_plan_parse(s, strlen(s), "big.plan", &q, &d), WEFT_OK);
    CHECK(q && weft_plan_equal(p, q));
    free(s);
    weft_plan_free(q);
    weft_plan_free(p);
}

static void parse_bad(const char *body, const char *msg)
{
    char text[512];
    snprintf(text, sizeof text, "weft-plan 1\n%s", body);
    weft_plan *p = NULL;
    weft_diag d;
    CHECK_ERR(weft_plan_parse(text, strlen(text), "t.plan", &p, &d), WEFT_EPARSE);
    CHECK_STR(d.msg, msg);
    CHECK(p == NULL);
}

static void test_parse_errors(void)
{
    parse_bad("coll alltoall\ntraffic 0 0 1 2\nranks 2\n",
              "t.plan:3:1: 'traffic' needs 'ranks' before it");
    parse_bad("coll alltoall\nranks 2\nchunks 1\ntraffic 0 0 1 2\ntraffic 1 1 3\n",
              "t.plan:6:9: traffic entries come in order: expected row 1 column 0 here, not row "
              "1 column 1");
    parse_bad("coll alltoall\nranks 2\nchunks 1\ntraffic 0 0 1 2 3\n",
              "t.plan:5:17: row 0 has 2 entries; this line goes past its end");
    parse_bad("coll alltoall\nranks 2\nchunks 1\ntraffic 0 0 1 2\ntraffic 1 0 3\nop 0 nop 0\n",
              "t.plan:7:1: the traffic matrix is incomplete: 3 of its 2 x 2 entries given");
    parse_bad("coll alltoall\nranks 2\nchunks 1\ntraffic 0 0 1 -2\n",
              "t.plan:5:15: bad traffic entry '-2' (bytes: a whole number >= 0)");
    parse_bad("coll alltoall\nranks 2\nchunks 1\ntraffic 0 0\n",
              "t.plan:5:1: 'traffic' takes a row, a column and at least one entry");
    parse_bad("coll alltoall\nranks 1\nchunks 1\ntraffic 0 0 18446744073709551616\n",
              "t.plan:5:13: traffic entry '18446744073709551616' is more than 2^64-1 bytes");
    parse_bad("coll allgather\nranks 1\nchunks 1\ntraffic 0 0 5\nop 0 nop 0\n",
              "t.plan:5:1: 'traffic' gives the sizes of an alltoall plan, not allgather");
    parse_bad("coll alltoall\nranks 1\nchunks 1\ntraffic 0 0 5\ntraffic 0 0 5\n",
              "t.plan:6:1: more 'traffic' lines than the 1 x 1 matrix has entries");
    parse_bad("coll alltoall\nranks 1\nchunks 1\nop 0 nop 0\ntraffic 0 0 5\n",
              "t.plan:6:1: 'traffic' must come before the first op");
}

static void test_cost_and_msccl(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_from_spec("switch:3", NULL, &t, &d), WEFT_OK);
    weft_plan *p = build(false);
    /* S = 29/3 bytes; rank 0 -> sw0 carries 6 + 5 bytes, as does sw0 ->
     * rank 1: 11 / (29/3) = 33/29 bytes per byte of S, at 100 GB/s. */
    weft_plan_cost c;
    CHECK_ERR(weft_plan_cost_get(p, t, &c, &d), WEFT_OK);
    CHECK(c.has_busiest);
    CHECK_INT(c.busiest_load.num, 33);
    CHECK_INT(c.busiest_load.den, 29);
    CHECK_INT(c.algbw.num, 2900);
    CHECK_INT(c.algbw.den, 33);
    /* Alpha-beta at S: the relay's two hops of 5 bytes at 100 GB/s. */
    double sec;
    CHECK_ERR(weft_plan_alpha_beta(p, t, 29.0 / 3, &sec, &d), WEFT_OK);
    CHECK(sec > 0.0999e-9 && sec < 0.1001e-9);

    /* MSCCL export pads the blocks to the largest (msccl_pad_test checks
     * the program byte for byte): regions of 8 pieces of 1 byte. */
    char *xml = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&xml, &len);
    CHECK_ERR(weft_plan_write_msccl(p, NULL, f, &d), WEFT_OK);
    fclose(f);
    CHECK(strstr(xml, "nchunksperloop=\"24\" ngpus=\"3\" coll=\"alltoall\"") != NULL);
    free(xml);
    weft_plan_free(p);
    weft_topo_free(t);
}

static const char OOM_TEXT[] = "weft-plan 1\ncoll alltoall\nranks 2\nchunks 2\nscratch 2\n"
                               "inplace no\ntraffic 0 0 3 5\ntraffic 1 0 1 0\n"
                               "op 0 copy 0:in[2] 1:scratch[0] n=2\n"
                               "op 1 copy 1:scratch[0] 1:out[0] n=2 deps=0\n";

static weft_err ctor_parse(void *arg)
{
    return weft_plan_parse(OOM_TEXT, strlen(OOM_TEXT), "oom.plan", arg, NULL);
}

static void dtor_plan(void *arg)
{
    weft_plan_free(*(weft_plan **)arg);
}

/* weft_plan_op_bytes and weft_plan_copy of an alltoallv plan under
 * allocation failures: WEFT_ENOMEM and nothing leaked. */
static weft_plan *oom_plan;
static uint64_t oom_bytes[2];

static weft_err ctor_op_bytes(void *arg)
{
    (void)arg;
    return weft_plan_op_bytes(oom_plan, oom_bytes, NULL);
}

static void dtor_none(void *arg)
{
    (void)arg;
}

static weft_err ctor_copy(void *arg)
{
    return weft_plan_copy(oom_plan, arg);
}

static void test_oom(void)
{
    weft_plan *p = NULL;
    CHECK(weft_test_oom_sweep("parse", ctor_parse, dtor_plan, &p) > 3);
    CHECK_ERR(weft_plan_parse(OOM_TEXT, strlen(OOM_TEXT), "oom.plan", &oom_plan, NULL), WEFT_OK);
    if (!oom_plan)
        return;
    CHECK(weft_test_oom_sweep("op_bytes", ctor_op_bytes, dtor_none, NULL) >= 2);
    CHECK_INT(oom_bytes[0], 5);
    CHECK_INT(oom_bytes[1], 5);
    CHECK(weft_test_oom_sweep("copy", ctor_copy, dtor_plan, &p) >= 2);
    weft_plan_free(oom_plan);
}

int main(void)
{
    test_oom();
    test_sizes_and_verify();
    test_text();
    test_parse_errors();
    test_cost_and_msccl();
    return weft_test_done();
}
