/* MSCCL export: every hand-written plan of every collective and generated
 * rings round-trip (export, import, verify, execute to the reference
 * result); a small plan's XML is checked byte for byte (threadblocks, nop
 * expansion, hasdep); runtime limits, the profiles' spellings and plans
 * MSCCL cannot express give their exact messages; nothing is written on
 * failure; allocation failures are clean. */
#include <stdlib.h>

#include "base/testing.h"
#include "plan/testexec.h"
#include "plan/testplans.h"
#include "weft/plan.h"
#include "weft/topo.h"

static weft_plan *parse(const char *text)
{
    weft_plan *p = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_plan_parse(text, strlen(text), "t.plan", &p, &d) != WEFT_OK)
        fprintf(stderr, "parse failed: %s\n", d.msg);
    return p;
}

/* Exports p into a heap string (free with free()); NULL on error, d set. */
static char *export(const weft_plan *p, const weft_msccl_opts *o, weft_diag *d, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return NULL;
    weft_err e = weft_plan_write_msccl(p, o, f, d);
    fclose(f);
    if (e) {
        CHECK_INT(n, 0); /* nothing written on failure */
        free(buf);
        return NULL;
    }
    if (len)
        *len = n;
    return buf;
}

/* Exports p with the default options, which must succeed. */
static char *export_ok(const weft_plan *p)
{
    weft_diag d;
    weft_diag_clear(&d);
    char *xml = export(p, NULL, &d, NULL);
    if (!xml)
        fprintf(stderr, "export: %s\n", d.msg);
    CHECK(xml != NULL);
    return xml;
}

/* Export, import, verify, execute; the header survives. */
static void round_trip(const char *what, const weft_plan *p, weft_msccl_profile profile)
{
    weft_diag d;
    weft_diag_clear(&d);
    weft_msccl_opts o;
    weft_msccl_opts_init(&o);
    o.profile = profile;
    size_t len = 0;
    char *xml = export(p, &o, &d, &len);
    if (!xml) {
        fprintf(stderr, "%s: export: %s\n", what, d.msg);
        CHECK(xml != NULL);
        return;
    }
    weft_plan *q = NULL;
    weft_err e = weft_plan_msccl_parse(xml, len, what, &q, &d);
    if (e)
        fprintf(stderr, "%s: import: %s\n%s", what, d.msg, xml);
    CHECK_ERR(e, WEFT_OK);
    if (q) {
        const weft_plan_info *a = weft_plan_get_info(p), *b = weft_plan_get_info(q);
        CHECK_INT(b->coll, a->coll);
        CHECK_INT(b->nranks, a->nranks);
        CHECK_INT(b->chunks, a->chunks);
        CHECK_INT(b->root.v, a->root.v);
        CHECK_INT(b->inplace, a->inplace);
        e = weft_plan_verify(q, NULL, &d);
        if (e)
            fprintf(stderr, "%s: verify: %s\n%s", what, d.msg, xml);
        CHECK_ERR(e, WEFT_OK);
        CHECK(weft__test_exec_seeds(q, 3));
        weft_plan_free(q);
    }
    free(xml);
}

/* A ring allreduce on n ranks and `ch` channels, chunk c travelling on
 * channel c % ch: reduce-scatter then allgather, in place. */
static weft_plan *ring_allreduce(uint32_t n, uint32_t ch)
{
    weft_plan_info info = {WEFT_COLL_ALLREDUCE, n, {0}, n, 0, true};
    weft_plan *p = NULL;
    if (weft_plan_new(&info, &p))
        return NULL;
    for (uint32_t c = 0; c < n; c++) {
        uint32_t prev = WEFT_PLAN_NO_OP;
        for (uint32_t k = 0; k < 2 * (n - 1); k++) {
            uint32_t from = (c + k) % n, to = (c + k + 1) % n;
            weft_op op = {k < n - 1 ? WEFT_OP_REDUCE : WEFT_OP_COPY,
                          {from},
                          {to},
                          WEFT_BUF_IN,
                          WEFT_BUF_IN,
                          c,
                          c,
                          1,
                          c % ch};
            uint32_t id;
            if (weft_plan_add_op(p, &op, &prev, prev == WEFT_PLAN_NO_OP ? 0 : 1, &id)) {
                weft_plan_free(p);
                return NULL;
            }
            prev = id;
        }
    }
    return p;
}

/* A direct allgather on n ranks, out of place: local copy, then a copy to
 * every other rank from the output. */
static weft_plan *direct_allgather(uint32_t n)
{
    weft_plan_info info = {WEFT_COLL_ALLGATHER, n, {0}, 1, 0, false};
    weft_plan *p = NULL;
    if (weft_plan_new(&info, &p))
        return NULL;
    for (uint32_t r = 0; r < n; r++) {
        weft_op local = {WEFT_OP_COPY, {r}, {r}, WEFT_BUF_IN, WEFT_BUF_OUT, 0, r, 1, 0};
        uint32_t id;
        if (weft_plan_add_op(p, &local, NULL, 0, &id))
            goto fail;
        for (uint32_t q = 0; q < n; q++) {
            if (q == r)
                continue;
            weft_op op = {WEFT_OP_COPY, {r}, {q}, WEFT_BUF_OUT, WEFT_BUF_OUT, r, r, 1, 0};
            if (weft_plan_add_op(p, &op, &id, 1, NULL))
                goto fail;
        }
    }
    return p;
fail:
    weft_plan_free(p);
    return NULL;
}

static void test_round_trips(void)
{
    for (size_t i = 0; i < sizeof weft__good_plans / sizeof weft__good_plans[0]; i++) {
        weft_plan *p = parse(weft__good_plans[i].text);
        CHECK(p != NULL);
        if (!p)
            continue;
        CHECK_ERR(weft_plan_verify(p, NULL, NULL), WEFT_OK);
        round_trip(weft__good_plans[i].name, p, WEFT_MSCCL_EXECUTOR);
        round_trip(weft__good_plans[i].name, p, WEFT_MSCCL_MSCCL);
        weft_plan_free(p);
    }
    weft_plan *p = ring_allreduce(8, 2);
    CHECK(p && weft_plan_verify(p, NULL, NULL) == WEFT_OK);
    if (p)
        round_trip("ring allreduce 8x2", p, WEFT_MSCCL_EXECUTOR);
    weft_plan_free(p);
    p = direct_allgather(6);
    CHECK(p && weft_plan_verify(p, NULL, NULL) == WEFT_OK);
    if (p)
        round_trip("direct allgather 6", p, WEFT_MSCCL_EXECUTOR);
    weft_plan_free(p);
}

/* Op 4's send on rank 1 waits for steps in two other threadblocks there
 * (op 2's rrc and op 3's re): the first wait becomes a nop. Op 5's send
 * needs no wait (its threadblock already waited for op 3), op 3's re waits
 * only for the later of two steps of one threadblock. hasdep marks exactly
 * the steps waited for. */
static const char small_plan[] = "weft-plan 1\ncoll allreduce\nranks 2\nchunks 2\nscratch 1\n"
                                 "op 0 copy 0:in[0] 0:scratch[0]\n"
                                 "op 1 copy 0:in[1] 1:scratch[0]\n"
                                 "op 2 reduce 0:scratch[0] 1:in[0] deps=0\n"
                                 "op 3 reduce 1:scratch[0] 1:in[1] deps=1,2\n"
                                 "op 4 copy 1:in[0] 0:in[0] deps=2,3\n"
                                 "op 5 copy 1:in[1] 0:in[1] deps=3,4\n";

static const char small_xml[] =
    "<algo name=\"weft_allreduce\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"2\" "
    "ngpus=\"2\" coll=\"allreduce\" inplace=\"1\" outofplace=\"0\" minBytes=\"0\" "
    "maxBytes=\"0\">\n"
    "  <gpu id=\"0\" i_chunks=\"2\" o_chunks=\"0\" s_chunks=\"1\">\n"
    "    <tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n"
    "      <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"1\" dstbuf=\"s\" dstoff=\"0\" cnt=\"1\" "
    "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
    "      <step s=\"1\" type=\"s\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" cnt=\"1\" "
    "depid=\"2\" deps=\"0\" hasdep=\"1\"/>\n"
    "    </tb>\n"
    "    <tb id=\"1\" send=\"-1\" recv=\"1\" chan=\"0\">\n"
    "      <step s=\"0\" type=\"r\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" cnt=\"1\" "
    "depid=\"0\" deps=\"1\" hasdep=\"0\"/>\n"
    "      <step s=\"1\" type=\"r\" srcbuf=\"i\" srcoff=\"1\" dstbuf=\"i\" dstoff=\"1\" cnt=\"1\" "
    "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
    "    </tb>\n"
    "    <tb id=\"2\" send=\"-1\" recv=\"-1\" chan=\"0\">\n"
    "      <step s=\"0\" type=\"cpy\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"s\" dstoff=\"0\" "
    "cnt=\"1\" "
    "depid=\"-1\" deps=\"-1\" hasdep=\"1\"/>\n"
    "    </tb>\n"
    "  </gpu>\n"
    "  <gpu id=\"1\" i_chunks=\"2\" o_chunks=\"0\" s_chunks=\"1\">\n"
    "    <tb id=\"0\" send=\"0\" recv=\"-1\" chan=\"0\">\n"
    "      <step s=\"0\" type=\"nop\" srcbuf=\"i\" srcoff=\"-1\" dstbuf=\"i\" dstoff=\"-1\" "
    "cnt=\"0\" depid=\"1\" deps=\"1\" hasdep=\"0\"/>\n"
    "      <step s=\"1\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" cnt=\"1\" "
    "depid=\"2\" deps=\"0\" hasdep=\"0\"/>\n"
    "      <step s=\"2\" type=\"s\" srcbuf=\"i\" srcoff=\"1\" dstbuf=\"i\" dstoff=\"1\" cnt=\"1\" "
    "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
    "    </tb>\n"
    "    <tb id=\"1\" send=\"-1\" recv=\"0\" chan=\"0\">\n"
    "      <step s=\"0\" type=\"r\" srcbuf=\"i\" srcoff=\"1\" dstbuf=\"s\" dstoff=\"0\" cnt=\"1\" "
    "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
    "      <step s=\"1\" type=\"rrc\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" "
    "cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"1\"/>\n"
    "    </tb>\n"
    "    <tb id=\"2\" send=\"-1\" recv=\"-1\" chan=\"0\">\n"
    "      <step s=\"0\" type=\"re\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"1\" cnt=\"1\" "
    "depid=\"1\" deps=\"1\" hasdep=\"1\"/>\n"
    "    </tb>\n"
    "  </gpu>\n"
    "</algo>\n";

static void test_small(void)
{
    weft_plan *p = parse(small_plan);
    CHECK(p != NULL);
    if (!p)
        return;
    CHECK_ERR(weft_plan_verify(p, NULL, NULL), WEFT_OK);
    weft_diag d;
    weft_diag_clear(&d);
    char *xml = export(p, NULL, &d, NULL);
    CHECK_STR(xml, small_xml);
    if (xml && strcmp(xml, small_xml) != 0)
        fprintf(stderr, "got:\n%s", xml);
    free(xml);
    round_trip("small", p, WEFT_MSCCL_EXECUTOR);
    weft_plan_free(p);
}

/* Counts the steps of a type in an exported program. */
static int count_type(const char *xml, const char *type)
{
    char pat[32];
    snprintf(pat, sizeof pat, "type=\"%s\"", type);
    int n = 0;
    for (const char *at = xml; (at = strstr(at, pat)); at += strlen(pat))
        n++;
    return n;
}

/* A ring where every transfer waits only for the one before it: each
 * receive that is forwarded fuses with the forwarding send, into rrcs
 * (reduce-scatter) and rcs (allgather), like msccl-tools' rings; each rank
 * then has one threadblock that receives from its left and sends right. */
static void test_fusion(void)
{
    weft_plan *p = ring_allreduce(4, 1);
    if (!p)
        return;
    char *xml = export_ok(p);
    if (xml) {
        CHECK_INT(count_type(xml, "s"), 4);
        CHECK_INT(count_type(xml, "rrcs"), 12);
        CHECK_INT(count_type(xml, "rcs"), 8);
        CHECK_INT(count_type(xml, "r"), 4);
        CHECK_INT(count_type(xml, "rrc"), 0);
        CHECK_CONTAINS(xml, "<tb id=\"0\" send=\"1\" recv=\"3\" chan=\"0\">");
        CHECK(strstr(xml, "<tb id=\"1\"") == NULL);
    }
    free(xml);
    round_trip("fused ring", p, WEFT_MSCCL_EXECUTOR);
    weft_plan_free(p);
}

/* A ring allreduce on n ranks whose op c moves `per` contiguous slots
 * [c per, (c+1) per), in place. */
static weft_plan *wide_ring_allreduce(uint32_t n, uint32_t per)
{
    weft_plan_info info = {WEFT_COLL_ALLREDUCE, n, {0}, n * per, 0, true};
    weft_plan *p = NULL;
    if (weft_plan_new(&info, &p))
        return NULL;
    for (uint32_t c = 0; c < n; c++) {
        uint32_t prev = WEFT_PLAN_NO_OP;
        for (uint32_t k = 0; k < 2 * (n - 1); k++) {
            weft_op op = {k < n - 1 ? WEFT_OP_REDUCE : WEFT_OP_COPY,
                          {(c + k) % n},
                          {(c + k + 1) % n},
                          WEFT_BUF_IN,
                          WEFT_BUF_IN,
                          c * per,
                          c * per,
                          per,
                          0};
            uint32_t id;
            if (weft_plan_add_op(p, &op, &prev, prev == WEFT_PLAN_NO_OP ? 0 : 1, &id)) {
                weft_plan_free(p);
                return NULL;
            }
            prev = id;
        }
    }
    return p;
}

/* The largest cnt="N" of a program, and how many steps it has. */
static long max_cnt(const char *xml, int *steps)
{
    long big = -1;
    *steps = 0;
    for (const char *at = xml; (at = strstr(at, " cnt=\"")); at += 6) {
        long v = strtol(at + 6, NULL, 10);
        big = v > big ? v : big;
        ++*steps;
    }
    return big;
}

/* An op of more than 71 chunks (the executors refuse cnt >= 72) becomes
 * consecutive steps of at most 71 on its threadblocks, cut alike on both
 * sides: 150 = 71 + 71 + 8. The program reads back to a plan that
 * verifies, executes right and has the same limit on the ring; one of 71
 * stays one step (and fuses as before). */
static void test_max_count(void)
{
    weft_plan *p = wide_ring_allreduce(4, 150);
    CHECK(p && weft_plan_verify(p, NULL, NULL) == WEFT_OK);
    if (!p)
        return;
    weft_diag d;
    weft_diag_clear(&d);
    size_t len = 0;
    char *xml = export(p, NULL, &d, &len);
    CHECK(xml != NULL);
    if (xml) {
        int steps;
        CHECK_INT(max_cnt(xml, &steps), 71);
        /* 24 ops, 3 steps on each of their 2 ranks; nothing fuses. */
        CHECK_INT(steps, 24 * 2 * 3);
        CHECK_INT(count_type(xml, "rrcs") + count_type(xml, "rcs"), 0);
        CHECK_CONTAINS(xml, "<step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" "
                            "dstoff=\"0\" cnt=\"71\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
                            "      <step s=\"1\" type=\"s\" srcbuf=\"i\" srcoff=\"71\" "
                            "dstbuf=\"i\" dstoff=\"71\" cnt=\"71\" depid=\"-1\" deps=\"-1\" "
                            "hasdep=\"0\"/>\n"
                            "      <step s=\"2\" type=\"s\" srcbuf=\"i\" srcoff=\"142\" "
                            "dstbuf=\"i\" dstoff=\"142\" cnt=\"8\"");
        weft_plan *q = NULL;
        CHECK_ERR(weft_plan_msccl_parse(xml, len, "wide", &q, &d), WEFT_OK);
        if (q) {
            /* 72 messages, each a send and a receive op there. */
            CHECK_INT(weft_plan_num_ops(q), 24 * 3 * 2);
            CHECK_ERR(weft_plan_verify(q, NULL, &d), WEFT_OK);
            CHECK(weft__test_exec_seeds(q, 2));
            weft_topo *t = NULL;
            CHECK_ERR(weft_topo_preset("ring:4", &t, &d), WEFT_OK);
            weft_plan_cost cp, cq;
            CHECK_ERR(weft_plan_cost_get(p, t, &cp, &d), WEFT_OK);
            CHECK_ERR(weft_plan_cost_get(q, t, &cq, &d), WEFT_OK);
            CHECK(weft_rat_eq(cp.algbw, cq.algbw));
            CHECK(weft_rat_sign(cp.algbw) > 0);
            weft_topo_free(t);
            weft_plan_free(q);
        }
    }
    free(xml);
    round_trip("wide ring allreduce", p, WEFT_MSCCL_EXECUTOR);
    weft_plan_free(p);
    /* 71 chunks an op: one step each, fused as in test_fusion. */
    p = wide_ring_allreduce(4, 71);
    xml = p ? export(p, NULL, &d, NULL) : NULL;
    CHECK(xml != NULL);
    if (xml) {
        int steps;
        CHECK_INT(max_cnt(xml, &steps), 71);
        CHECK_INT(count_type(xml, "rrcs"), 12);
        CHECK_INT(count_type(xml, "rcs"), 8);
    }
    free(xml);
    weft_plan_free(p);
}

static void expect_fail(const weft_plan *p, weft_msccl_profile profile, weft_err want,
                        const char *msg)
{
    weft_msccl_opts o;
    weft_msccl_opts_init(&o);
    o.profile = profile;
    weft_diag d;
    weft_diag_clear(&d);
    char *xml = export(p, &o, &d, NULL);
    CHECK(xml == NULL);
    free(xml);
    CHECK_ERR(d.err, want);
    CHECK_STR(d.msg, msg);
}

static void test_limits(void)
{
    /* 65 sends from rank 0 to rank 1 on channel 0, chained: over the
     * executor's 64 steps, within msccl's 256. */
    weft_plan_info info = {WEFT_COLL_ALLGATHER, 2, {0}, 65, 0, false};
    weft_plan *p = NULL;
    CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
    for (uint32_t i = 0; i < 65 && p; i++) {
        weft_op op = {WEFT_OP_COPY, {0}, {1}, WEFT_BUF_IN, WEFT_BUF_OUT, i, i, 1, 0};
        CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, NULL), WEFT_OK);
    }
    if (p) {
        expect_fail(p, WEFT_MSCCL_EXECUTOR, WEFT_ELIMIT,
                    "rank 0 threadblock for sends to rank 1 on channel 0 has 65 steps; the "
                    "executor profile allows 64 per threadblock (MSCCL_MAX_NUM_STEPS)");
        weft_msccl_opts o;
        weft_msccl_opts_init(&o);
        o.profile = WEFT_MSCCL_MSCCL;
        weft_diag d;
        char *xml = export(p, &o, &d, NULL);
        CHECK(xml != NULL);
        CHECK_CONTAINS(xml, "<step s=\"64\" type=\"s\"");
        free(xml);
        /* Channel 32 does not exist on any runtime. */
        weft_op op = {WEFT_OP_COPY, {1}, {0}, WEFT_BUF_IN, WEFT_BUF_OUT, 0, 65, 1, 32};
        CHECK_ERR(weft_plan_set_op(p, 0, &op), WEFT_OK);
        expect_fail(p, WEFT_MSCCL_MSCCL, WEFT_ELIMIT,
                    "op 0 uses channel 32; MSCCL runtimes have at most 32 channels");
        weft_plan_free(p);
    }
    /* 33 peers on one channel: more send connections than a channel has
     * (the executor's parser counts them per channel), so the peers are
     * spread over two channels. Plan channel 16 would need channels 32, 33. */
    weft_plan_info big = {WEFT_COLL_ALLGATHER, 34, {0}, 1, 0, false};
    p = NULL;
    CHECK_ERR(weft_plan_new(&big, &p), WEFT_OK);
    for (uint32_t q = 1; q < 34 && p; q++) {
        weft_op op = {WEFT_OP_COPY, {0}, {q}, WEFT_BUF_IN, WEFT_BUF_OUT, 0, 0, 1, 0};
        CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, NULL), WEFT_OK);
    }
    if (p) {
        char *xml = export_ok(p);
        if (xml) {
            CHECK_CONTAINS(xml, "nchannels=\"2\"");
            CHECK_CONTAINS(xml, "<tb id=\"31\" send=\"32\" recv=\"-1\" chan=\"0\">");
            CHECK_CONTAINS(xml, "<tb id=\"32\" send=\"33\" recv=\"-1\" chan=\"1\">");
        }
        free(xml);
        for (uint32_t i = 0; i < 33; i++) {
            weft_op op = {WEFT_OP_COPY, {0}, {i + 1}, WEFT_BUF_IN, WEFT_BUF_OUT, 0, 0, 1, 16};
            CHECK_ERR(weft_plan_set_op(p, i, &op), WEFT_OK);
        }
        expect_fail(p, WEFT_MSCCL_EXECUTOR, WEFT_ELIMIT,
                    "op 0 (rank 0 -> rank 1, channel 16) needs channel 32: 34 ranks spread "
                    "over 2 channels per plan channel, so that no rank has more than 32 peers on "
                    "a channel, and MSCCL runtimes have at most 32 channels");
        weft_plan_free(p);
    }
}

/* Wide all-to-all-like traffic: 18 ranks each send to and receive from 17
 * peers (35 threadblocks with the local one), so three threadblocks send
 * to and receive from one peer (an exchange) and 32 remain; 40 ranks
 * spread their 39 peers over two channels, where channel 0 then pairs
 * exchanges first, the rest in peer order, and takes the local steps into
 * its first threadblock. Both round-trip and execute. */
static void test_wide(void)
{
    weft_plan *p = direct_allgather(18);
    if (p) {
        char *xml = export_ok(p);
        if (xml) {
            CHECK_CONTAINS(xml, "nchannels=\"1\"");
            CHECK_CONTAINS(xml, "<tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">\n"
                                "      <step s=\"0\" type=\"s\"");
            CHECK_CONTAINS(xml, "<tb id=\"2\" send=\"3\" recv=\"3\" chan=\"0\">");
            CHECK_CONTAINS(xml, "<tb id=\"3\" send=\"4\" recv=\"-1\" chan=\"0\">");
            CHECK_CONTAINS(xml, "<tb id=\"31\" send=\"-1\" recv=\"-1\" chan=\"0\">");
            CHECK(strstr(xml, "<tb id=\"32\"") == NULL);
        }
        free(xml);
        round_trip("direct allgather 18", p, WEFT_MSCCL_EXECUTOR);
    }
    weft_plan_free(p);
    p = direct_allgather(40);
    if (p) {
        char *xml = export_ok(p);
        if (xml) {
            CHECK_CONTAINS(xml, "nchannels=\"2\"");
            /* Rank 0 sends to peers 1..32 on channel 0 and receives from
             * 8..39 there (offsets 1..32 either way): 25 exchanges, then
             * sends to 1..7 with receives from 33..39, and the local steps
             * in the first; channel 1 (7 + 7) stays unpaired. */
            CHECK_CONTAINS(xml, "<tb id=\"0\" send=\"1\" recv=\"33\" chan=\"0\">\n"
                                "      <step s=\"0\" type=\"cpy\"");
            CHECK_CONTAINS(xml, "<tb id=\"7\" send=\"8\" recv=\"8\" chan=\"0\">");
            CHECK_CONTAINS(xml, "<tb id=\"38\" send=\"39\" recv=\"-1\" chan=\"1\">");
            CHECK_CONTAINS(xml, "<tb id=\"45\" send=\"-1\" recv=\"7\" chan=\"1\">");
            CHECK(strstr(xml, "<tb id=\"46\"") == NULL);
        }
        free(xml);
        round_trip("direct allgather 40", p, WEFT_MSCCL_EXECUTOR);
        round_trip("direct allgather 40", p, WEFT_MSCCL_MSCCL);
    }
    weft_plan_free(p);
    /* 218 ranks: 217 peers on 7 channels of 32 threadblocks each, 224 in
     * all: the executor takes them, Microsoft MSCCL's 216 do not. */
    p = direct_allgather(218);
    if (p) {
        char *xml = export_ok(p);
        if (xml)
            CHECK_CONTAINS(xml, "nchannels=\"7\"");
        free(xml);
        expect_fail(p, WEFT_MSCCL_MSCCL, WEFT_ELIMIT,
                    "rank 0 needs more than 216 threadblocks; the msccl profile allows 216 per "
                    "GPU (MSCCL_MAX_NUM_THREAD_BLOCKS)");
    }
    weft_plan_free(p);
}

static void test_inexpressible(void)
{
    /* Op 2 (rank 1 -> 3) reads what op 0 (rank 0 -> 1) wrote, ordered
     * only through op 1 (rank 0 -> 2), on neither of its GPUs: without
     * that dep it could read too early, so it is data order MSCCL cannot
     * say. */
    weft_plan *p = parse("weft-plan 1\ncoll broadcast\nranks 4\nroot 0\nchunks 1\n"
                         "op 0 copy 0:out[0] 1:out[0]\n"
                         "op 1 copy 0:out[0] 2:out[0] deps=0\n"
                         "op 2 copy 1:out[0] 3:out[0] deps=1\n");
    if (p) {
        CHECK_ERR(weft_plan_verify(p, NULL, NULL), WEFT_OK);
        expect_fail(p, WEFT_MSCCL_EXECUTOR, WEFT_EINVAL,
                    "op 2 depends on op 1 (rank 0 -> rank 2), which has no step on rank 1 or "
                    "rank 3: MSCCL orders steps only within a GPU");
        weft_plan_free(p);
    }
    /* The same with op 2 also waiting for op 0 itself: the dep on op 1
     * only paces (as flash's rounds do), the plan verifies without it, so
     * it is left out: op 2's send on rank 1 waits for op 0's receive
     * there and for nothing else. */
    p = parse("weft-plan 1\ncoll broadcast\nranks 4\nroot 0\nchunks 1\n"
              "op 0 copy 0:out[0] 1:out[0]\n"
              "op 1 copy 0:out[0] 2:out[0] deps=0\n"
              "op 2 copy 1:out[0] 3:out[0] deps=0,1\n");
    if (p) {
        char *xml = export_ok(p);
        if (xml) {
            CHECK_CONTAINS(xml, "<gpu id=\"1\" i_chunks=\"1\" o_chunks=\"0\" s_chunks=\"0\">\n"
                                "    <tb id=\"0\" send=\"3\" recv=\"0\" chan=\"0\">\n"
                                "      <step s=\"0\" type=\"rcs\" srcbuf=\"i\" srcoff=\"0\" "
                                "dstbuf=\"i\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\"");
            CHECK_INT(count_type(xml, "nop"), 0);
        }
        free(xml);
        round_trip("paced broadcast", p, WEFT_MSCCL_EXECUTOR);
        weft_plan_free(p);
    }
    p = parse("weft-plan 1\ncoll allgather\nranks 2\nchunks 1\n"
              "op 0 copy 0:out[0] 1:out[0] deps=1\n"
              "op 1 copy 1:out[1] 0:out[1] deps=0\n");
    if (p) {
        expect_fail(p, WEFT_MSCCL_EXECUTOR, WEFT_EVERIFY,
                    "op 0 is on a dependency cycle (or waits for one), so it has no place in an "
                    "MSCCL program");
        weft_plan_free(p);
    }
}

static void test_profiles(void)
{
    weft_msccl_profile pr;
    CHECK(weft_msccl_profile_parse("executor", &pr) && pr == WEFT_MSCCL_EXECUTOR);
    CHECK(weft_msccl_profile_parse("msccl", &pr) && pr == WEFT_MSCCL_MSCCL);
    CHECK(!weft_msccl_profile_parse("rccl", &pr));
    CHECK_INT(weft_msccl_max_steps(WEFT_MSCCL_EXECUTOR), 64);
    CHECK_INT(weft_msccl_max_steps(WEFT_MSCCL_MSCCL), 256);
    weft_plan *p = parse(weft__good_plans[2].text); /* reducescatter ring */
    if (!p)
        return;
    weft_msccl_opts o;
    weft_msccl_opts_init(&o);
    weft_diag d;
    char *xml = export(p, &o, &d, NULL);
    CHECK_CONTAINS(xml, " coll=\"reducescatter\" ");
    free(xml);
    o.profile = WEFT_MSCCL_MSCCL;
    o.name = "rs3";
    o.proto = "LL128";
    o.min_bytes = 1024;
    o.max_bytes = 1 << 20;
    xml = export(p, &o, &d, NULL);
    CHECK_CONTAINS(xml, "<algo name=\"rs3\" proto=\"LL128\" nchannels=\"1\" nchunksperloop=\"3\" "
                        "ngpus=\"3\" coll=\"reduce_scatter\" inplace=\"1\" outofplace=\"0\" "
                        "minBytes=\"1024\" maxBytes=\"1048576\">");
    free(xml);
    weft_plan_free(p);
}

typedef struct oom_arg {
    weft_plan *p;
    FILE *f;
} oom_arg;

static weft_err ctor_export(void *arg)
{
    oom_arg *a = arg;
    rewind(a->f);
    return weft_plan_write_msccl(a->p, NULL, a->f, NULL);
}

static void dtor_export(void *arg)
{
    (void)arg;
}

int main(void)
{
    test_round_trips();
    test_small();
    test_fusion();
    test_max_count();
    test_limits();
    test_wide();
    test_inexpressible();
    test_profiles();
    oom_arg a = {ring_allreduce(4, 2), tmpfile()};
    if (a.p && a.f)
        CHECK(weft_test_oom_sweep("msccl export", ctor_export, dtor_export, &a) > 5);
    if (a.f)
        fclose(a.f);
    weft_plan_free(a.p);
    return weft_test_done();
}
