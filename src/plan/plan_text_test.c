/* The .plan text format: exact round trips, canonical output, one exact
 * message per kind of malformed input, and an allocation-failure sweep. */
#include <math.h>
#include <stdlib.h>

#include "base/alloc.h"
#include "base/testing.h"
#include "plan/testplans.h"
#include "weft/plan.h"

/* Writes p to a string (free with free()). */
static char *write_text(const weft_plan *p, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return NULL;
    weft_err e = weft_plan_write(p, f);
    fclose(f);
    if (e) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

static void round_trip(const char *name, const weft_plan *p)
{
    size_t len;
    char *text = write_text(p, &len);
    CHECK(text != NULL);
    if (!text)
        return;
    weft_plan *q = NULL;
    weft_diag d;
    weft_err e = weft_plan_parse(text, len, name, &q, &d);
    if (e)
        fprintf(stderr, "%s: %s\n", name, d.msg);
    CHECK_ERR(e, WEFT_OK);
    if (q) {
        CHECK(weft_plan_equal(p, q));
        /* The writer is canonical: writing again gives the same bytes. */
        size_t len2;
        char *text2 = write_text(q, &len2);
        CHECK(text2 && len2 == len && memcmp(text, text2, len) == 0);
        free(text2);
    }
    weft_plan_free(q);
    free(text);
}

static void test_round_trips(void)
{
    for (size_t i = 0; i < sizeof weft__good_plans / sizeof weft__good_plans[0]; i++) {
        const char *t = weft__good_plans[i].text;
        weft_plan *p = NULL;
        CHECK_ERR(weft_plan_parse(t, strlen(t), "good.plan", &p, NULL), WEFT_OK);
        if (p)
            round_trip(weft__good_plans[i].name, p);
        weft_plan_free(p);
    }
    /* Every field, forward deps, routes with fractions and odd names. */
    const char *t = "# a comment\r\n"
                    "weft-plan 1   # trailing comment\n"
                    "coll reduce\nroot 2\nranks 3\nchunks 4\nscratch 5\ninplace no\n"
                    "\n"
                    "op 0 reduce 0:in[1] 1:scratch[4] n=1 ch=7 deps=2,1 "
                    "path=2/3:gpu0,b1.sw-x,gpu1 path=1/3:gpu0,gpu1\n"
                    "op 1\tnop 2\n"
                    "op 2 copy 2:out[0] 2:scratch[0] n=4\n";
    weft_plan *p = NULL;
    weft_diag d;
    CHECK_ERR(weft_plan_parse(t, strlen(t), "all.plan", &p, &d), WEFT_OK);
    if (!p)
        return;
    const weft_plan_info *info = weft_plan_get_info(p);
    CHECK(info->coll == WEFT_COLL_REDUCE && info->nranks == 3 && info->root.v == 2 &&
          info->chunks == 4 && info->scratch == 5 && !info->inplace);
    weft_op op = weft_plan_op(p, 0);
    CHECK(op.kind == WEFT_OP_REDUCE && op.src_rank.v == 0 && op.src_buf == WEFT_BUF_IN &&
          op.src_index == 1 && op.dst_rank.v == 1 && op.dst_buf == WEFT_BUF_SCRATCH &&
          op.dst_index == 4 && op.count == 1 && op.channel == 7);
    uint32_t nd;
    const uint32_t *deps = weft_plan_op_deps(p, 0, &nd);
    CHECK(nd == 2 && deps[0] == 2 && deps[1] == 1);
    CHECK_INT(weft_plan_op_num_paths(p, 0), 2);
    CHECK_STR(weft_plan_path_node(p, 0, 0, 1), "b1.sw-x");
    CHECK_INT(weft_plan_path_share(p, 0, 0).num, 2);
    CHECK_INT(weft_plan_path_share(p, 0, 0).den, 3);
    CHECK_INT(weft_plan_op(p, 1).kind, WEFT_OP_NOP);
    CHECK_INT(weft_plan_op(p, 2).count, 4);
    size_t len;
    char *out = write_text(p, &len);
    CHECK_STR(out, "weft-plan 1\ncoll reduce\nranks 3\nroot 2\nchunks 4\nscratch 5\ninplace no\n"
                   "op 0 reduce 0:in[1] 1:scratch[4] ch=7 deps=2,1 path=2/3:gpu0,b1.sw-x,gpu1 "
                   "path=1/3:gpu0,gpu1\n"
                   "op 1 nop 2\n"
                   "op 2 copy 2:out[0] 2:scratch[0] n=4\n");
    free(out);
    round_trip("all.plan", p);
    weft_plan_free(p);
}

#define H "weft-plan 1\ncoll allgather\nranks 2\nchunks 1\n"

static const struct {
    const char *text;
    const char *msg;
} bad[] = {
    {"", "t.plan:1: no 'weft-plan 1' line: empty file"},
    {"# nothing\n\n", "t.plan:2: no 'weft-plan 1' line: only comments"},
    {"coll allgather\n", "t.plan:1:1: expected 'weft-plan 1' before anything else, not 'coll'"},
    {"weft-plan 2\n", "t.plan:1:11: unsupported plan version '2' (this weft reads 1)"},
    {"weft-plan\n", "t.plan:1:1: 'weft-plan' takes one value, the version"},
    {"weft-plan 1\nweft-plan 1\n", "t.plan:2:1: 'weft-plan' given twice"},
    {"weft-plan 1\nfrob 3\n", "t.plan:2:1: unknown keyword 'frob'"},
    {"weft-plan 1\ncoll allsum\n",
     "t.plan:2:6: unknown collective 'allsum' (expected allgather, reducescatter, allreduce, "
     "broadcast, reduce or alltoall)"},
    {"weft-plan 1\nranks 4x\n", "t.plan:2:7: bad number '4x'"},
    {"weft-plan 1\nranks -4\n", "t.plan:2:7: bad number '-4'"},
    {"weft-plan 1\nranks 99999999999\n", "t.plan:2:7: number too large '99999999999'"},
    {"weft-plan 1\nranks 0\n", "t.plan:2:7: ranks must be between 1 and 1048576"},
    {"weft-plan 1\nchunks 0\n", "t.plan:2:8: chunks must be between 1 and 1073741824"},
    {"weft-plan 1\nranks 2\nranks 3\n", "t.plan:3:1: 'ranks' given twice"},
    {"weft-plan 1\nranks\n", "t.plan:2:1: 'ranks' takes one value"},
    {"weft-plan 1\nranks 2 3\n", "t.plan:2:9: 'ranks' takes one value"},
    {"weft-plan 1\ninplace maybe\n", "t.plan:2:9: inplace must be yes or no, not 'maybe'"},
    {"weft-plan 1\ncoll allgather\nranks 2\n", "t.plan:3: missing 'chunks' in the header"},
    {"weft-plan 1\ncoll allgather\nchunks 2\nop 0 nop 0\n",
     "t.plan:4:1: missing 'ranks' in the header"},
    {"weft-plan 1\ncoll reduce\nranks 2\nchunks 1\n",
     "t.plan:4: missing 'root' in the header (reduce has a root)"},
    {"weft-plan 1\ncoll broadcast\nranks 2\nroot 2\nchunks 1\n",
     "t.plan:5: root 2 is not a rank (the plan has 2 ranks)"},
    {H "root 0\n", "t.plan:5: 'root' given for allgather, which has no root"},
    {H "op 0 nop 0\nranks 3\n", "t.plan:6:1: 'ranks' must come before the first op"},
    {H "op 1 nop 0\n", "t.plan:5:4: op id 1 out of order (expected 0)"},
    {H "op 0 nop 0\nop 0 nop 1\n", "t.plan:6:4: op id 0 out of order (expected 1)"},
    {H "op\n", "t.plan:5:1: op line ends early: expected the op id"},
    {H "op 0\n", "t.plan:5:1: op line ends early: expected copy, reduce or nop"},
    {H "op 0 move 0:out[0] 1:out[0]\n",
     "t.plan:5:6: unknown op kind 'move' (expected copy, reduce or nop)"},
    {H "op 0 copy 0:out[0]\n", "t.plan:5:11: op line ends early: expected the destination slot"},
    {H "op 0 copy 0:out[0] 1-out[0]\n",
     "t.plan:5:20: bad slot '1-out[0]' (expected RANK:BUF[INDEX], e.g. 3:out[12])"},
    {H "op 0 copy 0:out[0] 1:output[0]\n",
     "t.plan:5:22: unknown buffer 'output' (expected in, out or scratch)"},
    {H "op 0 copy 0:out[x] 1:out[0]\n", "t.plan:5:17: bad number 'x'"},
    {H "op 0 copy 0:out[] 1:out[0]\n", "t.plan:5:17: expected a number"},
    {H "op 0 copy 0:out[0] 1:out[0] n=0\n", "t.plan:5:31: n must be at least 1"},
    {H "op 0 copy 0:out[0] 1:out[0] n=1 n=1\n", "t.plan:5:33: 'n' given twice"},
    {H "op 0 copy 0:out[0] 1:out[0] size=1\n",
     "t.plan:5:29: unknown op field 'size' (expected n=, ch=, bytes=, compute=, deps= or "
     "path=)"},
    {H "op 0 copy 0:out[0] 1:out[0] deps=\n", "t.plan:5:29: 'deps' needs a value"},
    {H "op 0 copy 0:out[0] 1:out[0] deps=1,,2\n", "t.plan:5:36: expected a number"},
    {H "op 0 copy 0:out[0] 1:out[0] deps=5\nop 1 nop 0\n",
     "t.plan:5:34: dep on op 5, which does not exist (the plan has 2 ops)"},
    {H "op 0 nop 0 n=2\n", "t.plan:5:12: a nop moves no slots (no n=)"},
    {H "op 0 nop 0 path=1:a,b\n", "t.plan:5:12: a nop has no route"},
    {H "op 0 copy 0:out[0] 1:out[0] path=1:a,b ch=1\n",
     "t.plan:5:40: 'ch' must come before the paths"},
    {H "op 0 copy 0:out[0] 1:out[0] path=1\n",
     "t.plan:5:34: bad path '1' (expected SHARE:NODE,NODE,...)"},
    {H "op 0 copy 0:out[0] 1:out[0] path=x:a,b\n", "t.plan:5:34: bad share 'x'"},
    {H "op 0 copy 0:out[0] 1:out[0] path=1/0:a,b\n", "t.plan:5:34: bad share '1/0'"},
    {H "op 0 copy 0:out[0] 1:out[0] path=1:a\n", "t.plan:5:34: a path needs at least two nodes"},
    {H "op 0 copy 0:out[0] 1:out[0] path=1:a,,b\n", "t.plan:5:38: empty node name in path"},
    {H "op 0 copy 0:out[0] 1:out[0] path\n",
     "t.plan:5:29: 'path' needs a value (path=SHARE:NODE,NODE,...)"},
    {H "forward\n",
     "t.plan:5:1: 'forward' takes the step's bytes and, optionally, its rate in GB/s"},
    {H "forward 0\n", "t.plan:5:9: the step must be at least 1 byte"},
    {H "forward 4096 -1\n",
     "t.plan:5:14: the step's rate must be a positive number of GB/s, not '-1'"},
    {H "forward 4096 0\n",
     "t.plan:5:14: the step's rate must be a positive number of GB/s, not '0'"},
    {H "forward 4096 1e\n",
     "t.plan:5:14: the step's rate must be a positive number of GB/s, not '1e'"},
    {H "forward 4096 inf\n",
     "t.plan:5:14: the step's rate must be a positive number of GB/s, not 'inf'"},
    {H "forward 4096 1e400\n",
     "t.plan:5:14: the step's rate must be a positive number of GB/s, not '1e400'"},
    {H "forward 4096 4e-324\n",
     "t.plan:5:14: the step's rate must be at least 1e-09 GB/s (a byte a second), not '4e-324'"},
    {H "forward 4096 1 2\n",
     "t.plan:5:1: 'forward' takes the step's bytes and, optionally, its rate in GB/s"},
    {H "forward 8 1\nforward 8\n", "t.plan:6:1: 'forward' given twice"},
    {H "op 0 nop 0\nforward 8\n", "t.plan:6:1: 'forward' must come before the first op"},
    {H "whole yes\n", "t.plan:5:7: 'whole' takes nothing, not 'yes'"},
    {H "whole\nwhole\n", "t.plan:6:1: 'whole' given twice"},
    {H "op 0 nop 0\nwhole\n", "t.plan:6:1: 'whole' must come before the first op"},
    {"weft-plan 1\n# caf\xc3\xa9 ok, then \xff\n", "t.plan:2:18: invalid UTF-8"},
    {"weft-plan 1\n# overlong \xc0\xaf\n", "t.plan:2:12: invalid UTF-8"},
    {"weft-plan 1\ncoll\x01 allgather\n", "t.plan:2:5: control character 0x01"},
    {"weft-plan 1\nco\rll allgather\n", "t.plan:2:3: control character 0x0d"},
};

static void test_errors(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        weft_plan *p = NULL;
        weft_diag d;
        weft_diag_clear(&d);
        weft_err e = weft_plan_parse(bad[i].text, strlen(bad[i].text), "t.plan", &p, &d);
        if (e != WEFT_EPARSE)
            fprintf(stderr, "row %zu: expected WEFT_EPARSE\n", i);
        CHECK_ERR(e, WEFT_EPARSE);
        CHECK(p == NULL);
        CHECK_STR(d.msg, bad[i].msg);
        weft_plan_free(p);
    }
    /* A NUL byte, which a C string cannot hold. */
    const char nul[] = "weft-plan 1\ncoll all\0gather\n";
    weft_plan *p = NULL;
    weft_diag d;
    CHECK_ERR(weft_plan_parse(nul, sizeof nul - 1, "t.plan", &p, &d), WEFT_EPARSE);
    CHECK_STR(d.msg, "t.plan:2:9: NUL byte (binary data, not text)");
    /* An overlong line. */
    size_t n = 16777216 + 10;
    char *big = malloc(n + 32);
    memcpy(big, "weft-plan 1\n#", 13);
    memset(big + 13, 'x', n);
    memcpy(big + 13 + n, "\n", 2);
    CHECK_ERR(weft_plan_parse(big, strlen(big), "t.plan", &p, &d), WEFT_EPARSE);
    CHECK_STR(d.msg, "t.plan:2:16777217: line longer than 16777216 bytes");
    /* Binary data longer than a line (a file of NUL bytes, /dev/zero) is
     * named as what it is, at its first bad byte, not as a long line. */
    memset(big, '\0', n);
    CHECK_ERR(weft_plan_parse(big, n, "t.plan", &p, &d), WEFT_EPARSE);
    CHECK_STR(d.msg, "t.plan:1:1: NUL byte (binary data, not text)");
    memcpy(big, "weft-plan 1\n#x\x01", 15);
    memset(big + 15, 'x', n - 15);
    CHECK_ERR(weft_plan_parse(big, n, "t.plan", &p, &d), WEFT_EPARSE);
    CHECK_STR(d.msg, "t.plan:2:3: control character 0x01");
    /* A header whose buffers would exceed WEFT_PLAN_MAX_TOTAL_SLOTS is
     * refused before anything is sized by it: 70 bytes once asked the
     * verifier for 3.1 GB (chunks 1e8) or 32 GB (chunks 1e9). */
    static const char *const huge[][2] = {
        {"weft-plan 1\ncoll allreduce\nranks 2\nchunks 100000000\nop 0 nop 0\n",
         "t.plan:5:1: 2 ranks with 100000000 chunks and 0 scratch slots hold 400000000 slots in "
         "all; the limit is 67108864"},
        {"weft-plan 1\ncoll allreduce\nranks 8\nchunks 1000000000\n",
         "t.plan:4: 8 ranks with 1000000000 chunks and 0 scratch slots hold 16000000000 slots in "
         "all; the limit is 67108864"},
        {"weft-plan 1\ncoll alltoall\nranks 1048576\nchunks 1\n",
         "t.plan:4: 1048576 ranks with 1 chunks and 0 scratch slots hold 2199023255552 slots in "
         "all; the limit is 67108864"},
        {"weft-plan 1\ncoll allgather\nranks 4\nchunks 1\nscratch 1073741824\n",
         "t.plan:5: 4 ranks with 1 chunks and 1073741824 scratch slots hold 4294967316 slots in "
         "all; the limit is 67108864"},
    };
    for (size_t i = 0; i < sizeof huge / sizeof *huge; i++) {
        p = NULL;
        CHECK_ERR(weft_plan_parse(huge[i][0], strlen(huge[i][0]), "t.plan", &p, &d), WEFT_EPARSE);
        CHECK_STR(d.msg, huge[i][1]);
        CHECK(p == NULL);
    }
    /* At the limit exactly, the plan is made. */
    static const char at_limit[] = "weft-plan 1\ncoll allreduce\nranks 1\nchunks 33554432\n";
    CHECK_ERR(weft_plan_parse(at_limit, sizeof at_limit - 1, "t.plan", &p, &d), WEFT_OK);
    weft_plan_free(p);
    p = NULL;
    free(big);
    /* Files. */
    CHECK_ERR(weft_plan_load_file("/nonexistent/x.plan", &p, &d), WEFT_ENOENT);
    CHECK_STR(d.msg, "/nonexistent/x.plan: cannot open: No such file or directory");
    p = NULL;
    CHECK_ERR(weft_plan_load_file(WEFT_BINARY_DIR, &p, &d), WEFT_EIO);
    CHECK_STR(d.msg, WEFT_BINARY_DIR ": is a directory");
    CHECK(p == NULL);
}

static void test_json(void)
{
    const char *t = "weft-plan 1\ncoll broadcast\nranks 2\nroot 1\nchunks 1\n"
                    "op 0 copy 1:out[0] 0:out[0] deps=0 path=1:g\"1,g\\0\nop 1 nop 0 ch=2\n";
    weft_plan *p = NULL;
    CHECK_ERR(weft_plan_parse(t, strlen(t), "j.plan", &p, NULL), WEFT_OK);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    CHECK_ERR(weft_plan_write_json(p, f), WEFT_OK);
    fclose(f);
    CHECK_STR(buf, "{\"format\":\"weft-plan\",\"version\":1,\"coll\":\"broadcast\",\"ranks\":2,"
                   "\"root\":1,\"chunks\":1,\"scratch\":0,\"inplace\":true,\"ops\":["
                   "{\"id\":0,\"kind\":\"copy\",\"src\":{\"rank\":1,\"buf\":\"out\",\"index\":0},"
                   "\"dst\":{\"rank\":0,\"buf\":\"out\",\"index\":0},\"count\":1,\"channel\":0,"
                   "\"deps\":[0],\"route\":[{\"share\":\"1\",\"nodes\":[\"g\\\"1\",\"g\\\\0\"]}]},"
                   "{\"id\":1,\"kind\":\"nop\",\"rank\":0,\"channel\":2,\"deps\":[]}]}\n");
    free(buf);
    weft_plan_free(p);
}

/* The `forward` line (weft_plan_set_step_forward): read, written back in
 * the same bytes (the rate in the fewest digits that read back exactly),
 * equal after a round trip, and in the JSON form. */
static void test_forward(void)
{
    static const char *const texts[] = {
        "weft-plan 1\ncoll allreduce\nranks 2\nchunks 1\nscratch 0\ninplace yes\n"
        "forward 1048576 20.7\nop 0 reduce 0:out[0] 1:out[0]\nop 1 copy 1:out[0] 0:out[0] "
        "deps=0\n",
        "weft-plan 1\ncoll allreduce\nranks 2\nchunks 1\nscratch 0\ninplace yes\n"
        "forward 524288\n",
        "weft-plan 1\ncoll allreduce\nranks 2\nchunks 1\nscratch 0\ninplace yes\n"
        "forward 1 0.30000000000000004\n",
        "weft-plan 1\ncoll allreduce\nranks 2\nchunks 1\nscratch 0\ninplace yes\n"
        "forward 8 1e+301\n",
        "weft-plan 1\ncoll allreduce\nranks 2\nchunks 1\nscratch 0\ninplace yes\n"
        "forward 8 1e-09\n",
    };
    static const uint64_t step[] = {1048576, 524288, 1, 8, 8};
    const double gbps[] = {20.7, 0, 0.1 + 0.2, 1e301, 1e-9};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        weft_plan *p = NULL;
        CHECK_ERR(weft_plan_parse(texts[i], strlen(texts[i]), "f.plan", &p, NULL), WEFT_OK);
        if (!p)
            continue;
        double g = -1;
        CHECK_INT(weft_plan_step_forward(p, &g), step[i]);
        CHECK(g == gbps[i]);
        size_t len;
        char *out = write_text(p, &len);
        CHECK_STR(out, texts[i]);
        free(out);
        round_trip("f.plan", p);
        weft_plan_free(p);
    }
    /* A plan without the mark writes no `forward` line. */
    weft_plan *p = NULL;
    CHECK_ERR(weft_plan_parse(texts[0], strlen(texts[0]), "f.plan", &p, NULL), WEFT_OK);
    if (!p)
        return;
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    CHECK_ERR(weft_plan_write_json(p, f), WEFT_OK);
    fclose(f);
    CHECK(buf && strstr(buf, ",\"inplace\":true,\"forward\":{\"step\":1048576,\"gbps\":20.7},"
                             "\"ops\":[") != NULL);
    free(buf);
    /* An infinite cap (weft_plan_set_step_forward) is no cap: a line
     * without a rate, valid JSON. */
    weft_plan_set_step_forward(p, 8, INFINITY);
    buf = NULL;
    f = open_memstream(&buf, &n);
    CHECK_ERR(weft_plan_write_json(p, f), WEFT_OK);
    fclose(f);
    CHECK(buf && strstr(buf, "\"forward\":{\"step\":8,\"gbps\":0}") != NULL);
    free(buf);
    size_t len;
    char *out = write_text(p, &len);
    CHECK(out && strstr(out, "\nforward 8\n") != NULL);
    free(out);
    weft_plan_set_step_forward(p, 0, 0);
    out = write_text(p, &len);
    CHECK(out && strstr(out, "forward") == NULL);
    free(out);
    weft_plan_free(p);
}

/* The `whole` line (weft_plan_set_whole_messages): read, written back in
 * the same bytes after `forward`, equal after a round trip (and unequal to
 * the plan without it), and in the JSON form. */
static void test_whole(void)
{
    const char *t = "weft-plan 1\ncoll allreduce\nranks 2\nchunks 1\nscratch 0\ninplace yes\n"
                    "forward 8\nwhole\nop 0 reduce 0:out[0] 1:out[0]\nop 1 copy 1:out[0] 0:out[0] "
                    "deps=0\n";
    weft_plan *p = NULL;
    CHECK_ERR(weft_plan_parse(t, strlen(t), "w.plan", &p, NULL), WEFT_OK);
    if (!p)
        return;
    CHECK(weft_plan_whole_messages(p));
    size_t len;
    char *out = write_text(p, &len);
    CHECK_STR(out, t);
    free(out);
    round_trip("w.plan", p);
    weft_plan *q = NULL;
    CHECK_ERR(weft_plan_copy(p, &q), WEFT_OK);
    CHECK(q && weft_plan_whole_messages(q) && weft_plan_equal(p, q));
    if (q) {
        weft_plan_set_whole_messages(q, false);
        CHECK(!weft_plan_equal(p, q));
        out = write_text(q, &len);
        CHECK(out && strstr(out, "whole") == NULL);
        free(out);
        weft_plan_free(q);
    }
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    CHECK_ERR(weft_plan_write_json(p, f), WEFT_OK);
    fclose(f);
    CHECK(buf &&
          strstr(buf, "\"forward\":{\"step\":8,\"gbps\":0},\"whole\":true,\"ops\":[") != NULL);
    free(buf);
    weft_plan_free(p);
}

static weft_err ctor_parse(void *arg)
{
    weft_plan **out = arg;
    const char *t = "weft-plan 1\ncoll allreduce\nranks 4\nchunks 4\n"
                    "op 0 copy 0:out[0] 1:out[0] deps=3 path=1/2:a,b,c path=1/2:a,d,c\n"
                    "op 1 reduce 1:out[1] 2:out[1] deps=0\n"
                    "op 2 nop 2 deps=0,1\n"
                    "op 3 copy 2:out[2] 3:out[2] path=1:x,y\n";
    return weft_plan_parse(t, strlen(t), "oom.plan", out, NULL);
}

static void dtor_parse(void *arg)
{
    weft_plan **p = arg;
    weft_plan_free(*p);
}

/* An op with paths in many circuit epochs is one long line (a 128-rank
 * mixnet circuit plan writes 83,016 bytes; the reader once stopped at
 * 65,536): 20,000 paths, 420 KB, parse and round-trip. */
static void test_long_line(void)
{
    const unsigned npaths = 20000;
    size_t cap = 64 + (size_t)npaths * 32;
    char *text = malloc(cap);
    CHECK(text != NULL);
    if (!text)
        return;
    size_t n = (size_t)snprintf(text, cap,
                                "weft-plan 1\ncoll allgather\nranks 2\nchunks 1\n"
                                "op 0 copy 0:in[0] 1:out[0]");
    for (unsigned i = 0; i < npaths; i++)
        n += (size_t)snprintf(text + n, cap - n, " path=1/%u:r0,s,r1", npaths);
    n += (size_t)snprintf(text + n, cap - n, "\nop 1 copy 1:in[0] 0:out[1]\n");
    CHECK(n > 400000);
    weft_plan *p = NULL;
    weft_diag d;
    weft_err e = weft_plan_parse(text, n, "long.plan", &p, &d);
    if (e)
        fprintf(stderr, "long.plan: %s\n", d.msg);
    CHECK_ERR(e, WEFT_OK);
    if (p) {
        CHECK_INT(weft_plan_num_ops(p), 2);
        round_trip("long.plan", p);
        weft_plan_free(p);
    }
    free(text);
}

int main(void)
{
    test_round_trips();
    test_errors();
    test_json();
    test_forward();
    test_whole();
    test_long_line();
    weft_plan *p = NULL;
    CHECK(weft_test_oom_sweep("parse", ctor_parse, dtor_parse, &p) > 5);
    return weft_test_done();
}
