/* The padded layout of skewed alltoallv plans for MSCCL (msccl_pad.c):
 * exact layouts, the XML written, read back with weft's MSCCL reader and
 * verified against the padded matrix, and run byte for byte as the
 * executor runs it (every buffer cut into nchunksperloop equal pieces):
 * every destination region exact and its padding untouched. The MoE
 * matrices of tests/cli/a2a_msccl.sh through optimal, direct and flash on
 * a100:2; flash on h100:4, whose pacing deps across GPUs are left out; the
 * limits with their messages. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/testing.h"
#include "weft/plan.h"
#include "weft/synth.h"
#include "weft/topo.h"
#include "weft/traffic.h"

/* The byte rank s puts at byte k of its block for rank d. */
static uint8_t data_byte(uint32_t s, uint32_t d, uint64_t k)
{
    return (uint8_t)(1 + (s * 131 + d * 31 + k * 7) % 251);
}

#define PAD_IN 0xEE  /* the send buffers' padding */
#define PAD_OUT 0xA5 /* what the receive buffers hold before the call */

/* Exports x (a padded plan, or any plan weft_plan_write_msccl pads) to
 * XML in memory. */
static char *export_xml(const weft_plan *x, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    CHECK(f != NULL);
    weft_diag d;
    CHECK_ERR(weft_plan_write_msccl(x, NULL, f, &d), WEFT_OK);
    fclose(f);
    return buf;
}

/* Reads the XML back, verifies it on t against the padded plan's matrix,
 * and runs it on bytes: rank s's send buffer holds block s -> d at offset
 * d * B (then PAD_IN up to (d + 1) * B), every receive buffer starts as
 * PAD_OUT, and each op of the program copies count pieces of piece bytes,
 * in one topological order, as the executor does with its equal chunks.
 * Then region s of rank d's receive buffer must hold block s -> d exactly
 * and PAD_OUT after it, and the send buffers must be unchanged. Returns the
 * program's ops. */
static uint32_t run_bytes(const char *xml, size_t len, const weft_topo *t, const weft_plan *x,
                          const weft_traffic *m, const weft_msccl_padding *pad)
{
    weft_plan *back = NULL;
    weft_diag d;
    CHECK_ERR(weft_plan_msccl_parse(xml, len, "pad.xml", &back, &d), WEFT_OK);
    CHECK_ERR(weft_plan_set_traffic(back, weft_plan_traffic(x), &d), WEFT_OK);
    CHECK_ERR(weft_plan_verify(back, t, &d), WEFT_OK);
    uint32_t n = m->ranks;
    uint64_t g = pad->piece_bytes, B = pad->block_bytes, per = (uint64_t)n * B;
    CHECK(weft_plan_size_chunks(back) * g == per);
    CHECK(pad->pieces_per_block * g == B);
    uint64_t nscr = (uint64_t)weft_plan_buf_slots(back, WEFT_BUF_SCRATCH) * g;
    uint8_t **buf[3];
    for (int b = 0; b < 3; b++)
        buf[b] = calloc(n, sizeof *buf[b]);
    for (uint32_t r = 0; r < n; r++) {
        buf[WEFT_BUF_IN][r] = malloc(per);
        buf[WEFT_BUF_OUT][r] = malloc(per);
        buf[WEFT_BUF_SCRATCH][r] = calloc(1, nscr + 1);
        memset(buf[WEFT_BUF_IN][r], PAD_IN, per);
        memset(buf[WEFT_BUF_OUT][r], PAD_OUT, per);
        for (uint32_t q = 0; q < n; q++)
            for (uint64_t k = 0; k < m->bytes[(size_t)r * n + q]; k++)
                buf[WEFT_BUF_IN][r][q * B + k] = data_byte(r, q, k);
    }
    uint32_t nops = weft_plan_num_ops(back);
    uint32_t *order = malloc(((size_t)nops + 1) * sizeof *order);
    CHECK_ERR(weft_plan_topo_order(back, order, &d), WEFT_OK);
    for (uint32_t i = 0; i < nops; i++) {
        weft_op o = weft_plan_op(back, order[i]);
        if (o.kind == WEFT_OP_NOP)
            continue;
        CHECK(o.kind == WEFT_OP_COPY);
        memmove(buf[o.dst_buf][o.dst_rank.v] + (uint64_t)o.dst_index * g,
                buf[o.src_buf][o.src_rank.v] + (uint64_t)o.src_index * g, (uint64_t)o.count * g);
    }
    uint64_t wrong = 0, pad_hit = 0, in_changed = 0;
    for (uint32_t r = 0; r < n; r++)
        for (uint32_t s = 0; s < n; s++) {
            uint64_t b = m->bytes[(size_t)s * n + r];
            const uint8_t *region = buf[WEFT_BUF_OUT][r] + s * B;
            for (uint64_t k = 0; k < B; k++) {
                if (k < b)
                    wrong += region[k] != data_byte(s, r, k);
                else
                    pad_hit += region[k] != PAD_OUT;
            }
            const uint8_t *sent = buf[WEFT_BUF_IN][r] + s * B;
            uint64_t bs = m->bytes[(size_t)r * n + s];
            for (uint64_t k = 0; k < B; k++)
                in_changed += sent[k] != (k < bs ? data_byte(r, s, k) : PAD_IN);
        }
    CHECK_INT(wrong, 0);
    CHECK_INT(pad_hit, 0);
    CHECK_INT(in_changed, 0);
    for (int b = 0; b < 3; b++) {
        for (uint32_t r = 0; r < n; r++)
            free(buf[b][r]);
        free(buf[b]);
    }
    free(order);
    weft_plan_free(back);
    return nops;
}

/* plan_traffic_test's matrix (rows s, columns d: the bytes rank s sends
 * rank d): 4 6 5 / 0 3 1 / 2 0 8. 3 ranks, C = 2, 2 scratch slots: every non-zero block straight to
 * its rank, except 0 -> 2 (through rank 1's scratch). Chunks of 2+2, 3+3, 3+2, 2+1, 1+0, 1+1, 4+4
 * bytes: pieces of 1 byte, regions of 8. */
static const char SMALL[] = "weft-plan 1\ncoll alltoall\nranks 3\nchunks 2\nscratch 2\n"
                            "inplace no\ntraffic 0 0 4 6 5\ntraffic 1 0 0 3 1\n"
                            "traffic 2 0 2 0 8\n"
                            "op 0 copy 0:in[0] 0:out[0] n=2\n"
                            "op 1 copy 0:in[2] 1:out[0] n=2\n"
                            "op 2 copy 0:in[4] 1:scratch[0] n=2\n"
                            "op 3 copy 1:scratch[0] 2:out[0] n=2 deps=2\n"
                            "op 4 copy 1:in[2] 1:out[2] n=2\n"
                            "op 5 copy 1:in[4] 2:out[2] n=2\n"
                            "op 6 copy 2:in[0] 0:out[4] n=2\n"
                            "op 7 copy 2:in[4] 2:out[4] n=2\n";

static void test_small(void)
{
    weft_topo *t = NULL;
    weft_plan *p = NULL, *x = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_from_spec("switch:3", NULL, &t, &d), WEFT_OK);
    CHECK_ERR(weft_plan_parse(SMALL, strlen(SMALL), "small.plan", &p, &d), WEFT_OK);
    CHECK_ERR(weft_plan_verify(p, t, &d), WEFT_OK);
    CHECK(weft_plan_msccl_needs_padding(p));
    weft_msccl_padding pad;
    CHECK_ERR(weft_plan_msccl_pad(p, NULL, &x, &pad, &d), WEFT_OK);
    CHECK_INT(pad.piece_bytes, 1);
    CHECK_INT(pad.block_bytes, 8);
    CHECK_INT(pad.pieces_per_block, 8);
    CHECK_INT(pad.data_bytes, 29);
    CHECK_INT(pad.padded_bytes, 72);
    CHECK_INT(pad.refine, 1);
    CHECK(!weft_plan_msccl_needs_padding(x)); /* padding it again changes nothing */
    /* 8 chunks per block; scratch: the 3- and 2-byte chunks of 0 -> 2.
     * Ops in one topological order: 1 -> 2 (1 byte and a 0-byte chunk)
     * moves one piece; the relay's second hop comes last. */
    CHECK_INT(weft_plan_get_info(x)->chunks, 8);
    CHECK_INT(weft_plan_get_info(x)->scratch, 5);
    CHECK_INT(weft_plan_num_ops(x), 8);
    weft_op o = weft_plan_op(x, 4);
    CHECK(o.src_buf == WEFT_BUF_IN && o.src_index == 16 && o.dst_index == 8 && o.count == 1);
    o = weft_plan_op(x, 7); /* scratch[0..5) of rank 1 -> out region 0 of rank 2 */
    CHECK(o.src_buf == WEFT_BUF_SCRATCH && o.src_index == 0 && o.dst_index == 0 && o.count == 5);
    CHECK_ERR(weft_plan_verify(x, t, &d), WEFT_OK);
    /* The original plan exports the same program as its padded plan. */
    size_t la, lb;
    char *a = export_xml(p, &la), *b = export_xml(x, &lb);
    CHECK(la == lb && memcmp(a, b, la) == 0);
    CHECK(strstr(a, "nchunksperloop=\"24\" ngpus=\"3\" coll=\"alltoall\"") != NULL);
    CHECK(strstr(a, "<gpu id=\"0\" i_chunks=\"24\" o_chunks=\"24\" s_chunks=\"5\">") != NULL);
    /* Read back: 3 local copies, and a send and a receive per message. */
    CHECK_INT(run_bytes(a, la, t, x, weft_plan_traffic(p), &pad), 13);
    free(a);
    free(b);
    weft_plan_free(x);
    weft_plan_free(p);
    weft_topo_free(t);
}

/* The MoE dispatch matrix of tests/cli/a2a_msccl.sh on a100:2 (16 ranks,
 * zipf 1.2: blocks of 3 to 228 tokens of 4 KiB) through optimal, direct and
 * flash: padded (the optimal's routes relayed in pieces), exported, read
 * back, verified, and run byte for byte. */
static void test_moe(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_from_spec("a100:2", NULL, &t, &d), WEFT_OK);
    weft_traffic_moe_params mp = {16, 32, 2, 256, 4096, WEFT_TRAFFIC_SKEW_ZIPF, 1200, 1};
    weft_traffic m;
    CHECK_ERR(weft_traffic_moe(&mp, &m, &d), WEFT_OK);
    CHECK_INT(m.bytes[0], 774144);
    CHECK_INT(m.bytes[1], 327680);
    static const struct {
        const char *algo;
        uint64_t piece;
        uint32_t refine, ops;
    } want[] = {{"optimal", 512, 8, 1407}, {"direct", 4096, 1, 310}, {"flash", 4096, 1, 472}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        weft_plan *p = NULL, *x = NULL;
        if (strcmp(want[i].algo, "optimal") == 0) {
            weft_a2a_bound b;
            CHECK_ERR(weft_synth_a2a_optimal_traffic(t, &m, &p, &b, &d), WEFT_OK);
            weft_a2a_bound_fini(&b);
        } else {
            CHECK_ERR(weft_synth_classic_traffic(t, want[i].algo, &m, 0, &p, &d), WEFT_OK);
        }
        weft_msccl_padding pad;
        CHECK_ERR(weft_plan_msccl_pad(p, t, &x, &pad, &d), WEFT_OK);
        CHECK_INT(pad.block_bytes, 933888); /* 228 tokens of 4096 bytes */
        CHECK_INT(pad.piece_bytes, want[i].piece);
        CHECK_INT(pad.refine, want[i].refine);
        CHECK_INT(pad.data_bytes, 33554432);
        CHECK_INT(pad.padded_bytes, 16ull * 16 * 933888);
        CHECK_INT(weft_plan_num_ops(x), want[i].ops);
        CHECK_INT(weft_plan_size_chunks(x), 16ull * 933888 / want[i].piece);
        /* The padded plan has the plan's limit on the fabric. */
        weft_plan_cost cp, cx;
        CHECK_ERR(weft_plan_cost_get(p, t, &cp, &d), WEFT_OK);
        CHECK_ERR(weft_plan_cost_get(x, t, &cx, &d), WEFT_OK);
        CHECK(weft_rat_eq(cp.algbw, cx.algbw));
        size_t len;
        char *xml = export_xml(x, &len);
        uint32_t back_ops = run_bytes(xml, len, t, x, &m, &pad);
        CHECK(back_ops >= want[i].ops);
        free(xml);
        weft_plan_free(x);
        weft_plan_free(p);
    }
    weft_traffic_free(&m);
    weft_topo_free(t);
}

/* Flash on h100:4 (4 boxes of 8) with a skewed matrix: its rounds pace a
 * rank's send after the last send of the rank that last sent into it,
 * which may since have sent elsewhere, a dep on two other GPUs. No data
 * hangs on those deps, so the export leaves them out (the plan verifies
 * without them): the program is read back, verified and run byte for
 * byte. */
static void test_flash_paced(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_from_spec("h100:4", NULL, &t, &d), WEFT_OK);
    weft_traffic_moe_params mp = {32, 64, 2, 16, 4096, WEFT_TRAFFIC_SKEW_ZIPF, 1200, 1};
    weft_traffic m;
    CHECK_ERR(weft_traffic_moe(&mp, &m, &d), WEFT_OK);
    weft_plan *p = NULL, *x = NULL;
    CHECK_ERR(weft_synth_classic_traffic(t, "flash", &m, 0, &p, &d), WEFT_OK);
    if (!p)
        goto done;
    /* Deps on ops with no step on either rank: the pacing. */
    uint32_t remote = 0;
    for (uint32_t i = 0; i < weft_plan_num_ops(p); i++) {
        weft_op o = weft_plan_op(p, i);
        uint32_t nd;
        const uint32_t *deps = weft_plan_op_deps(p, i, &nd);
        for (uint32_t k = 0; k < nd; k++) {
            weft_op y = weft_plan_op(p, deps[k]);
            remote += y.src_rank.v != o.src_rank.v && y.src_rank.v != o.dst_rank.v &&
                      y.dst_rank.v != o.src_rank.v && y.dst_rank.v != o.dst_rank.v;
        }
    }
    CHECK(remote > 0);
    weft_msccl_padding pad;
    CHECK_ERR(weft_plan_msccl_pad(p, t, &x, &pad, &d), WEFT_OK);
    if (x) {
        CHECK_INT(pad.piece_bytes, 4096);
        CHECK_INT(weft_plan_num_ops(x), 744);
        size_t len;
        char *xml = export_xml(x, &len);
        CHECK(xml != NULL);
        if (xml)
            CHECK(run_bytes(xml, len, t, x, &m, &pad) >= 744);
        free(xml);
    }
done:
    weft_plan_free(x);
    weft_plan_free(p);
    weft_traffic_free(&m);
    weft_topo_free(t);
}

/* A direct plan of a 2-rank matrix. */
static weft_plan *direct2(uint64_t a, uint64_t b)
{
    weft_plan_info info = {WEFT_COLL_ALLTOALL, 2, {0}, 1, 0, false};
    weft_plan *p = NULL;
    CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
    uint64_t v[4] = {a, b, b, a};
    weft_traffic t = {2, v};
    CHECK_ERR(weft_plan_set_traffic(p, &t, NULL), WEFT_OK);
    for (uint32_t s = 0; s < 2; s++)
        for (uint32_t d = 0; d < 2; d++) {
            weft_op op = {WEFT_OP_COPY, {s}, {d}, WEFT_BUF_IN, WEFT_BUF_OUT, d, s, 1, 0};
            CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, NULL), WEFT_OK);
        }
    return p;
}

static void test_limits(void)
{
    weft_diag d;
    weft_plan *x = (weft_plan *)1;
    weft_msccl_padding pad;
    /* Pieces of 1 byte, regions of 2^31 bytes: nchunksperloop 2^32. */
    weft_plan *p = direct2(1, UINT64_C(1) << 31);
    CHECK_ERR(weft_plan_msccl_pad(p, NULL, &x, &pad, &d), WEFT_ELIMIT);
    CHECK(x == NULL);
    CHECK_STR(d.msg, "MSCCL XML cannot express this alltoallv plan: its padded layout (blocks "
                     "padded to 2147483648 bytes, cut into pieces of 1 bytes, the gcd of its "
                     "chunks) needs nchunksperloop = 2 x 2147483648 = 4294967296, and "
                     "msccl-executor reads nchunksperloop as an int (at most 2147483647): 2.0 "
                     "times too many");
    /* Nothing is written when the writer pads. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK_ERR(weft_plan_write_msccl(p, NULL, f, &d), WEFT_ELIMIT);
    fclose(f);
    CHECK_INT(len, 0);
    free(buf);
    weft_plan_free(p);
    /* Regions of 2^24 pieces: 2 x (2 x 2^25) slots, 2 times the plan limit. */
    p = direct2(1, UINT64_C(1) << 24);
    CHECK_ERR(weft_plan_msccl_pad(p, NULL, &x, &pad, &d), WEFT_ELIMIT);
    CHECK_STR(d.msg, "MSCCL XML cannot express this alltoallv plan within weft's limits: its "
                     "padded layout (blocks padded to 16777216 bytes, cut into pieces of 1 "
                     "bytes, the gcd of its chunks: nchunksperloop 33554432, 0 scratch pieces) "
                     "holds 134217728 slots over its 2 ranks, 2.0 times the 67108864 a plan may "
                     "hold (WEFT_PLAN_MAX_TOTAL_SLOTS), so the XML could not be read back");
    weft_plan_free(p);
    /* In place, and not an alltoallv plan. */
    weft_plan_info info = {WEFT_COLL_ALLTOALL, 2, {0}, 1, 0, true};
    CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
    uint64_t v[4] = {1, 2, 3, 4};
    weft_traffic t = {2, v};
    CHECK_ERR(weft_plan_set_traffic(p, &t, NULL), WEFT_OK);
    CHECK_ERR(weft_plan_msccl_pad(p, NULL, &x, &pad, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "MSCCL XML cannot express this in-place alltoallv plan: a padded block of "
                     "one peer would share its region with a block of another size; build it "
                     "out of place");
    weft_plan_free(p);
    info.inplace = false;
    CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
    CHECK(!weft_plan_msccl_needs_padding(p));
    CHECK_ERR(weft_plan_msccl_pad(p, NULL, &x, &pad, &d), WEFT_EINVAL);
    weft_plan_free(p);
}

/* A uniform matrix whose entries C divides is not padded: the program is
 * the plain alltoall's, byte for byte. */
static void test_uniform_unchanged(void)
{
    weft_plan *p = direct2(8, 8), *q = direct2(8, 8);
    CHECK(!weft_plan_msccl_needs_padding(p));
    weft_plan_info info = *weft_plan_get_info(q);
    weft_plan *bare = NULL;
    CHECK_ERR(weft_plan_new(&info, &bare), WEFT_OK);
    for (uint32_t i = 0; i < weft_plan_num_ops(q); i++) {
        weft_op o = weft_plan_op(q, i);
        CHECK_ERR(weft_plan_add_op(bare, &o, NULL, 0, NULL), WEFT_OK);
    }
    size_t la, lb;
    char *a = export_xml(p, &la), *b = export_xml(bare, &lb);
    CHECK(la == lb && memcmp(a, b, la) == 0);
    free(a);
    free(b);
    weft_plan_free(bare);
    weft_plan_free(q);
    weft_plan_free(p);
}

/* weft_plan_msccl_pad (with the relays) under allocation failures:
 * WEFT_ENOMEM and nothing leaked. */
static weft_plan *oom_plan;
static weft_topo *oom_topo;
static weft_msccl_padding oom_pad;

static weft_err oom_ctor(void *arg)
{
    return weft_plan_msccl_pad(oom_plan, oom_topo, arg, &oom_pad, NULL);
}

static void oom_dtor(void *arg)
{
    weft_plan_free(*(weft_plan **)arg);
    *(weft_plan **)arg = NULL;
}

static void test_oom(void)
{
    weft_diag d;
    CHECK_ERR(weft_topo_from_spec("a100:2", NULL, &oom_topo, &d), WEFT_OK);
    weft_traffic_moe_params mp = {16, 32, 2, 64, 4096, WEFT_TRAFFIC_SKEW_ZIPF, 1200, 3};
    weft_traffic m;
    CHECK_ERR(weft_traffic_moe(&mp, &m, &d), WEFT_OK);
    weft_a2a_bound b;
    CHECK_ERR(weft_synth_a2a_optimal_traffic(oom_topo, &m, &oom_plan, &b, &d), WEFT_OK);
    weft_a2a_bound_fini(&b);
    weft_plan *x = NULL;
    CHECK(weft_test_oom_sweep("msccl_pad", oom_ctor, oom_dtor, &x) > 0);
    weft_plan_free(oom_plan);
    weft_traffic_free(&m);
    weft_topo_free(oom_topo);
}

int main(void)
{
    test_small();
    test_moe();
    test_flash_paced();
    test_limits();
    test_uniform_unchanged();
    test_oom();
    return weft_test_done();
}
