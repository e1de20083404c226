/* Circuit configurations in plans: the text format round-trips them (and
 * the epoch of each path), and the verifier accepts a correct two-epoch
 * all-to-all through one OCS and names exactly what is wrong in each
 * corrupted copy: a hop on a circuit its epoch lacks, a port in two
 * circuits, a path across the OCS without an epoch, a circuit whose end is
 * not a port of the OCS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "weft/plan.h"
#include "weft/topo.h"

static const char topo_text[] = "node a compute\n"
                                "node b compute\n"
                                "node c compute\n"
                                "node x switch\n"
                                "node o ocs reconfig=1ms\n"
                                "duplex a o 10GB/s\n"
                                "duplex b o 10GB/s\n"
                                "duplex c o 10GB/s\n"
                                "duplex a x 10GB/s\n";

/* Rank 0 = a, 1 = b, 2 = c. Epoch 0: a>b, b>c, c>a; epoch 1 the reverse. */
static const char plan_head[] = "weft-plan 1\ncoll alltoall\nranks 3\nchunks 1\ninplace no\n"
                                "op 0 copy 0:in[0] 0:out[0]\n"
                                "op 1 copy 1:in[1] 1:out[1]\n"
                                "op 2 copy 2:in[2] 2:out[2]\n"
                                "op 3 copy 0:in[1] 1:out[0] path=1@0:a,o,b\n"
                                "op 4 copy 1:in[2] 2:out[1] path=1@0:b,o,c\n"
                                "op 5 copy 2:in[0] 0:out[2] path=1@0:c,o,a\n"
                                "op 6 copy 0:in[2] 2:out[0] path=1/2@1:a,o,c path=1/2@1:a,o,c\n"
                                "op 7 copy 2:in[1] 1:out[2] path=1@1:c,o,b\n"
                                "op 8 copy 1:in[0] 0:out[1] path=1@1:b,o,a\n";
static const char circuits[] = "circuit 0 o a b\ncircuit 0 o b c\ncircuit 0 o c a\n"
                               "circuit 1 o a c\ncircuit 1 o c b\ncircuit 1 o b a\n";

static weft_plan *parse(const char *extra_ops, const char *circ)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s%s", plan_head, extra_ops, circ);
    weft_plan *p = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_plan_parse(text, strlen(text), "t.plan", &p, &d);
    if (e)
        fprintf(stderr, "parse: %s\n", d.msg);
    return p;
}

static void expect_verify(const weft_plan *p, const weft_topo *t, const char *msg)
{
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_plan_verify(p, t, &d);
    if (!msg) {
        CHECK_ERR(e, WEFT_OK);
        if (e)
            fprintf(stderr, "  %s\n", d.msg);
        return;
    }
    CHECK_ERR(e, WEFT_EVERIFY);
    CHECK_STR(d.msg, msg);
}

/* Allocation failures while parsing and copying a plan with circuits
 * unwind with WEFT_ENOMEM and leak nothing. */
static char oom_text[4096];
static weft_plan *oom_src;

static weft_err ctor_parse(void *arg)
{
    return weft_plan_parse(oom_text, strlen(oom_text), "o.plan", arg, NULL);
}

static weft_err ctor_copy(void *arg)
{
    return weft_plan_copy(oom_src, arg);
}

static void dtor_plan(void *arg)
{
    weft_plan **p = arg;
    weft_plan_free(*p);
    *p = NULL;
}

int main(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_topo_parse(topo_text, strlen(topo_text), "t.topo", &t, &d), WEFT_OK);

    weft_plan *p = parse("", circuits);
    CHECK(p != NULL);
    CHECK_INT(weft_plan_num_circuits(p), 6);
    CHECK_INT(weft_plan_num_epochs(p), 2);
    CHECK_INT(weft_plan_path_epoch(p, 6, 1), 1);
    weft_plan_circuit c = weft_plan_get_circuit(p, 3);
    CHECK_INT(c.epoch, 1);
    CHECK_STR(c.ocs, "o");
    CHECK_STR(c.from, "a");
    CHECK_STR(c.to, "c");
    expect_verify(p, t, NULL);
    expect_verify(p, NULL, NULL);

    /* Round trip: write, parse, equal, the same bytes again. */
    char *buf1 = NULL, *buf2 = NULL;
    size_t len1 = 0, len2 = 0;
    FILE *f = open_memstream(&buf1, &len1);
    CHECK_ERR(weft_plan_write(p, f), WEFT_OK);
    fclose(f);
    CHECK_CONTAINS(buf1, "op 6 copy 0:in[2] 2:out[0] path=1/2@1:a,o,c path=1/2@1:a,o,c\n");
    CHECK_CONTAINS(buf1, "circuit 1 o c b\n");
    weft_plan *q = NULL;
    CHECK_ERR(weft_plan_parse(buf1, len1, "w.plan", &q, &d), WEFT_OK);
    CHECK(q && weft_plan_equal(p, q));
    f = open_memstream(&buf2, &len2);
    CHECK_ERR(weft_plan_write(q, f), WEFT_OK);
    fclose(f);
    CHECK(len1 == len2 && memcmp(buf1, buf2, len1) == 0);
    weft_plan *cp = NULL;
    CHECK_ERR(weft_plan_copy(p, &cp), WEFT_OK);
    CHECK(cp && weft_plan_equal(p, cp));
    weft_plan_set_path_epoch(cp, 3, 0, 1);
    CHECK(!weft_plan_equal(p, cp));
    free(buf1);
    free(buf2);
    char *json = NULL;
    size_t jlen = 0;
    f = open_memstream(&json, &jlen);
    CHECK_ERR(weft_plan_write_json(p, f), WEFT_OK);
    fclose(f);
    CHECK_CONTAINS(json, "{\"share\":\"1\",\"epoch\":0,\"nodes\":[\"a\",\"o\",\"b\"]}");
    CHECK_CONTAINS(json, "\"circuits\":[{\"epoch\":0,\"ocs\":\"o\",\"from\":\"a\",\"to\":\"b\"}");
    free(json);

    /* Op 6 runs in epoch 1, which lost its circuit a -> c. */
    weft_plan *bad = parse("", "circuit 0 o a b\ncircuit 0 o b c\ncircuit 0 o c a\n"
                               "circuit 1 o c b\ncircuit 1 o b a\n");
    expect_verify(bad, t,
                  "op 6 (rank 0 -> rank 2, in[2] -> out[0]): route path 1 crosses ocs 'o' "
                  "from a to c in epoch 1, which has no such circuit");
    weft_plan_free(bad);

    /* Port a sends on two circuits of epoch 0. */
    bad = parse("", "circuit 0 o a c\ncircuit 0 o a b\ncircuit 0 o b c\ncircuit 0 o c a\n"
                    "circuit 1 o a c\ncircuit 1 o c b\ncircuit 1 o b a\n");
    expect_verify(bad, NULL,
                  "epoch 0: port 'a' of ocs 'o' sends on two circuits (a -> c and a -> b); a "
                  "port is in at most one circuit each way");
    weft_plan_free(bad);

    /* Port b receives on two. */
    bad = parse("", "circuit 0 o c b\ncircuit 0 o a b\ncircuit 0 o b c\n"
                    "circuit 1 o a c\ncircuit 1 o c b\ncircuit 1 o b a\n");
    expect_verify(bad, NULL,
                  "epoch 0: port 'b' of ocs 'o' receives on two circuits (c -> b and a -> b); a "
                  "port is in at most one circuit each way");
    weft_plan_free(bad);

    /* A path across the OCS with no epoch, in a plan with circuits. */
    {
        char text[4096];
        snprintf(text, sizeof text, "%s%s", plan_head, circuits);
        char *at = strstr(text, "path=1@1:b,o,a");
        memmove(at + 6, at + 8, strlen(at + 8) + 1);
        CHECK_ERR(weft_plan_parse(text, strlen(text), "t.plan", &bad, &d), WEFT_OK);
        expect_verify(bad, t,
                      "op 8 (rank 1 -> rank 0, in[0] -> out[1]): route path 1 crosses ocs 'o' "
                      "(b -> a) but names no epoch, and the plan has circuits");
        weft_plan_free(bad);
    }

    /* With the fabric: a circuit to a node that is not a port of o. */
    bad = parse("", "circuit 0 o a b\ncircuit 0 o b c\ncircuit 0 o c a\ncircuit 1 o a c\n"
                    "circuit 1 o c b\ncircuit 1 o b a\ncircuit 1 o x x2\n");
    expect_verify(bad, t, "circuit x -> x2 of epoch 1: 'x' is not a port of ocs 'o'");
    weft_plan_free(bad);
    bad = parse("", "circuit 0 x a b\n");
    expect_verify(bad, t, "circuit a -> b of epoch 0: 'x' is not an ocs node of the topology");
    weft_plan_free(bad);

    /* Bad epochs in the text. */
    {
        char text[4096];
        snprintf(text, sizeof text, "%scircuit 1x o a b\n", plan_head);
        CHECK_ERR(weft_plan_parse(text, strlen(text), "t.plan", &bad, &d), WEFT_EPARSE);
        CHECK_STR(d.msg, "t.plan:15:9: bad epoch '1x' (0 to 16777215)");
        snprintf(text, sizeof text, "%sop 9 nop 0\nop 10 copy 0:in[0] 1:out[0] path=1@:a,o,b\n",
                 plan_head);
        CHECK_ERR(weft_plan_parse(text, strlen(text), "t.plan", &bad, &d), WEFT_EPARSE);
        CHECK_STR(d.msg, "t.plan:16:36: bad epoch '' (0 to 16777215)");
    }

    snprintf(oom_text, sizeof oom_text, "%s%s", plan_head, circuits);
    weft_plan *o = NULL;
    CHECK(weft_test_oom_sweep("parse with circuits", ctor_parse, dtor_plan, &o) > 3);
    oom_src = p;
    CHECK(weft_test_oom_sweep("copy with circuits", ctor_copy, dtor_plan, &o) > 3);

    weft_plan_free(cp);
    weft_plan_free(q);
    weft_plan_free(p);
    weft_topo_free(t);
    return weft_test_done();
}
