/* Compute ops (weft/plan.h, weft_compute): building, editing, the text and
 * JSON formats and the verifier's rule (the simulator's charge:
 * src/sim/compute_test.c). */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "weft/plan.h"

/* On switch:2, rank 0 hashes 1000 bytes, sends rank 1 a copy of 4000
 * bytes, rank 1 aggregates 500: ops 0 (compute), 1 (copy), 2 (compute). */

static weft_plan *small_plan(bool sized)
{
    weft_plan_info info = {WEFT_COLL_ALLGATHER, 2, {0}, 1, 0, true};
    weft_plan *p = NULL;
    CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
    uint32_t h, c, a;
    CHECK_ERR(weft_plan_add_compute(p, (weft_rank){0}, WEFT_COMPUTE_HASH, NULL, 0, &h), WEFT_OK);
    weft_op op = {WEFT_OP_COPY, {0}, {1}, WEFT_BUF_OUT, WEFT_BUF_OUT, 0, 0, 1, 0};
    CHECK_ERR(weft_plan_add_op(p, &op, &h, 1, &c), WEFT_OK);
    CHECK_ERR(weft_plan_add_compute(p, (weft_rank){1}, WEFT_COMPUTE_AGGREGATE, &c, 1, &a), WEFT_OK);
    /* Rank 1's own chunk to rank 0, free of compute. */
    weft_op back = {WEFT_OP_COPY, {1}, {0}, WEFT_BUF_OUT, WEFT_BUF_OUT, 1, 1, 1, 0};
    CHECK_ERR(weft_plan_add_op(p, &back, NULL, 0, NULL), WEFT_OK);
    uint64_t bytes[4] = {1000, 4000, 500, 4000};
    if (sized)
        CHECK_ERR(weft_plan_set_op_sizes(p, 8000, bytes, NULL), WEFT_OK);
    return p;
}

static void test_build(void)
{
    weft_plan *p = small_plan(true);
    weft_diag d = {0};
    CHECK_INT(weft_plan_op_compute(p, 0), WEFT_COMPUTE_HASH);
    CHECK_INT(weft_plan_op_compute(p, 1), WEFT_COMPUTE_NONE);
    CHECK_INT(weft_plan_op_compute(p, 2), WEFT_COMPUTE_AGGREGATE);
    CHECK_INT(weft_plan_op_compute(p, 99), WEFT_COMPUTE_NONE);
    CHECK_INT(weft_plan_op(p, 0).kind, WEFT_OP_NOP);
    CHECK_STR(weft_compute_name(WEFT_COMPUTE_FILL), "fill");
    CHECK_STR(weft_compute_name((weft_compute)77), "?");
    weft_compute c;
    CHECK(weft_compute_parse("decompress", 10, &c) && c == WEFT_COMPUTE_DECOMPRESS);
    CHECK(!weft_compute_parse("zip", 3, &c));
    /* Compute is a nop's; NONE is no compute op. */
    CHECK_ERR(weft_plan_set_op_compute(p, 1, WEFT_COMPUTE_HASH), WEFT_EINVAL);
    CHECK_ERR(weft_plan_set_op_compute(p, 4, WEFT_COMPUTE_HASH), WEFT_EINVAL);
    CHECK_ERR(weft_plan_set_op_compute(p, 0, (weft_compute)9), WEFT_EINVAL);
    CHECK_ERR(weft_plan_add_compute(p, (weft_rank){0}, WEFT_COMPUTE_NONE, NULL, 0, NULL),
              WEFT_EINVAL);
    CHECK_INT(weft_plan_num_ops(p), 4);
    /* The verifier proves it as the nops it orders like. */
    CHECK_ERR(weft_plan_verify(p, NULL, &d), WEFT_OK);
    uint64_t b[4];
    CHECK_ERR(weft_plan_op_bytes(p, b, &d), WEFT_OK);
    CHECK_INT(b[0], 1000);
    CHECK_INT(b[2], 500);
    /* Copies keep it, equality sees it, removal shifts it. */
    weft_plan *q = NULL;
    CHECK_ERR(weft_plan_copy(p, &q), WEFT_OK);
    CHECK(weft_plan_equal(p, q));
    CHECK_ERR(weft_plan_set_op_compute(q, 2, WEFT_COMPUTE_FILL), WEFT_OK);
    CHECK(!weft_plan_equal(p, q));
    CHECK_ERR(weft_plan_remove_op(q, 0), WEFT_OK);
    CHECK_INT(weft_plan_op_compute(q, 0), WEFT_COMPUTE_NONE);
    CHECK_INT(weft_plan_op_compute(q, 1), WEFT_COMPUTE_FILL);
    weft_plan_free(q);
    /* A plain nop carries no bytes; a compute op does. */
    uint64_t bad[4] = {1000, 4000, 500, 4000};
    CHECK_ERR(weft_plan_set_op_compute(p, 2, WEFT_COMPUTE_NONE), WEFT_OK);
    CHECK_ERR(weft_plan_set_op_sizes(p, 8000, bad, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "op 2 is a nop; it moves no bytes");
    weft_plan_free(p);
    /* Without op sizes a compute op has no bytes: refused. */
    p = small_plan(false);
    CHECK_ERR(weft_plan_verify(p, NULL, &d), WEFT_EVERIFY);
    CHECK_STR(d.msg, "op 0 (hash on rank 0): computes but the plan has no op sizes to give its "
                     "bytes");
    weft_plan_free(p);
}

static void test_text(void)
{
    weft_plan *p = small_plan(true);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK_ERR(weft_plan_write(p, f), WEFT_OK);
    fclose(f);
    CHECK(strstr(text, "op 0 nop 0 compute=hash bytes=1000\n") != NULL);
    CHECK(strstr(text, "op 2 nop 1 compute=aggregate bytes=500 deps=1\n") != NULL);
    weft_plan *q = NULL;
    weft_diag d = {0};
    CHECK_ERR(weft_plan_parse(text, len, "c.plan", &q, &d), WEFT_OK);
    CHECK(q && weft_plan_equal(p, q));
    weft_plan_free(q);
    free(text);
    text = NULL;
    f = open_memstream(&text, &len);
    CHECK_ERR(weft_plan_write_json(p, f), WEFT_OK);
    fclose(f);
    CHECK(strstr(text, "{\"id\":0,\"kind\":\"nop\",\"rank\":0,\"compute\":\"hash\",\"bytes\":1000,"
                       "\"channel\":0,\"deps\":[]}") != NULL);
    free(text);
    weft_plan_free(p);

    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"op 0 nop 0 compute=zip bytes=1\n",
         "b.plan:8:20: unknown compute 'zip' (expected hash, compress, decompress, aggregate or "
         "fill)"},
        {"op 0 nop 0 compute=none bytes=1\n",
         "b.plan:8:20: unknown compute 'none' (expected hash, compress, decompress, aggregate or "
         "fill)"},
        {"op 0 copy 0:out[0] 1:out[0] compute=hash bytes=1\n",
         "b.plan:8:29: a copy computes nothing (compute= is a nop's)"},
        {"op 0 nop 0 compute=hash\n",
         "b.plan:8:1: op 0 has no bytes= (the 'size' line gives every op its bytes)"},
        {"op 0 nop 0 bytes=5\n", "b.plan:8:1: a nop moves no bytes (no bytes=, unless it has "
                                 "compute=)"},
        {"op 0 nop 0 compute=hash compute=fill bytes=1\n", "b.plan:8:25: 'compute' given twice"},
    };
    const char *head = "weft-plan 1\ncoll allgather\nranks 2\nchunks 1\nscratch 0\ninplace "
                       "yes\nsize 8\n";
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s%s", head, bad[i].text);
        q = NULL;
        CHECK_ERR(weft_plan_parse(buf, strlen(buf), "b.plan", &q, &d), WEFT_EPARSE);
        CHECK_STR(d.msg, bad[i].msg);
        CHECK(q == NULL);
    }
    /* No size line: a compute op cannot state its bytes. */
    const char *nosize = "weft-plan 1\ncoll allgather\nranks 2\nchunks 1\nscratch 0\ninplace yes\n"
                         "op 0 nop 0 compute=hash\n";
    CHECK_ERR(weft_plan_parse(nosize, strlen(nosize), "b.plan", &q, &d), WEFT_EPARSE);
    CHECK_STR(d.msg, "b.plan:7:1: op 0 computes but the plan has no 'size' line (a compute op's "
                     "bytes= needs one)");
}

/* The other readers see the nops: the executor runs the dataflow, the
 * MSCCL export writes nop steps (read back, plain nops). */
static void test_readers(void)
{
    weft_plan *p = small_plan(true);
    weft_diag d = {0};
    CHECK_ERR(weft_plan_exec_check(p, NULL, &d), WEFT_OK);
    char *xml = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&xml, &len);
    weft_msccl_opts o;
    weft_msccl_opts_init(&o);
    CHECK_ERR(weft_plan_write_msccl(p, &o, f, &d), WEFT_OK);
    fclose(f);
    CHECK_CONTAINS(xml, "type=\"nop\"");
    weft_plan *q = NULL;
    CHECK_ERR(weft_plan_msccl_parse(xml, len, "c.xml", &q, &d), WEFT_OK);
    for (uint32_t i = 0; q && i < weft_plan_num_ops(q); i++)
        CHECK_INT(weft_plan_op_compute(q, i), WEFT_COMPUTE_NONE);
    CHECK(q && !weft_plan_has_op_sizes(q));
    weft_plan_free(q);
    free(xml);
    weft_plan_free(p);
}

int main(void)
{
    test_build();
    test_text();
    test_readers();
    return weft_test_done();
}
