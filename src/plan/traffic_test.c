/* Traffic matrices: the reader's exact messages, round trips through the
 * writer, uniform and MoE generators (determinism, row sums, distinct
 * experts), the transpose, statistics and allocation failures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/testing.h"
#include "weft/traffic.h"

static void parse_ok(const char *text, uint32_t n, const uint64_t *want)
{
    weft_traffic t = {0};
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_traffic_parse(text, strlen(text), "ok.tm", &t, &d);
    if (e)
        fprintf(stderr, "unexpected: %s\n", d.msg);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        return;
    CHECK_INT(t.ranks, n);
    for (uint32_t k = 0; k < n * n; k++)
        CHECK_INT(t.bytes[k], want[k]);
    weft_traffic_free(&t);
    CHECK(t.bytes == NULL);
}

static void parse_bad(const char *text, weft_err err, const char *msg)
{
    weft_traffic t = {.ranks = 7, .bytes = NULL};
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_traffic_parse(text, strlen(text), "m.tm", &t, &d), err);
    CHECK_STR(d.msg, msg);
    CHECK_INT(t.ranks, 7); /* untouched */
    CHECK(t.bytes == NULL);
}

static void test_parse(void)
{
    parse_ok("1 2\n3 4\n", 2, (const uint64_t[]){1, 2, 3, 4});
    parse_ok("# a comment\n\n  5\t6 # tail\r\n\n7 8", 2, (const uint64_t[]){5, 6, 7, 8});
    parse_ok("42", 1, (const uint64_t[]){42});
    parse_ok("18446744073709551615 0\n0 0\n", 2, (const uint64_t[]){UINT64_MAX, 0, 0, 0});

    parse_bad("1 2\n3\n", WEFT_EPARSE,
              "m.tm:2:2: 1 numbers on this line, expected 2 (as on line 1)");
    parse_bad("1 2\n3 4 5\n", WEFT_EPARSE,
              "m.tm:2:5: more than 2 numbers on this line (line 1 has 2)");
    parse_bad("# c\n1 2\n3 4\n5 6\n", WEFT_EPARSE,
              "m.tm:4:1: more than 2 lines: line 2 has 2 numbers, so the matrix has 2 ranks and "
              "2 lines");
    parse_bad("1 2 3\n4 5 6\n", WEFT_EPARSE,
              "m.tm:3:1: only 2 lines of numbers: line 1 has 3 numbers, so the matrix needs 3 "
              "lines");
    parse_bad("1 2 3\n4 5 6", WEFT_EPARSE,
              "m.tm:2:6: only 2 lines of numbers: line 1 has 3 numbers, so the matrix needs 3 "
              "lines");
    parse_bad("1 -2\n3 4\n", WEFT_EPARSE, "m.tm:1:3: negative entry '-2': bytes must be >= 0");
    parse_bad("1 2\n3 1.5\n", WEFT_EPARSE, "m.tm:2:3: '1.5' is not a whole number of bytes");
    parse_bad("1 2\n3 1e3\n", WEFT_EPARSE, "m.tm:2:3: '1e3' is not a whole number of bytes");
    parse_bad("1 2\n3 4K\n", WEFT_EPARSE, "m.tm:2:3: '4K' is not a number of bytes");
    parse_bad("18446744073709551616\n", WEFT_EOVERFLOW,
              "m.tm:1:1: '18446744073709551616' is more than 2^64-1 bytes");
    parse_bad("18446744073709551615 1\n0 0\n", WEFT_EOVERFLOW,
              "m.tm:1:22: the matrix's entries sum to more than 2^64-1 bytes here");
    parse_bad("", WEFT_EPARSE, "m.tm:1:1: no matrix: the file has no numbers");
    parse_bad("# only\n\n", WEFT_EPARSE, "m.tm:3:1: no matrix: the file has no numbers");

    /* More numbers on a line than a matrix may have ranks. */
    size_t big = (size_t)(WEFT_TRAFFIC_MAX_RANKS + 1) * 2;
    char *text = malloc(big + 1);
    CHECK(text != NULL);
    if (text) {
        for (size_t i = 0; i < big; i += 2) {
            text[i] = '0';
            text[i + 1] = ' ';
        }
        text[big] = '\0';
        char want[200];
        snprintf(want, sizeof want,
                 "m.tm:1:%u: more than %u numbers on a line: a traffic matrix has at most %u "
                 "ranks",
                 2 * WEFT_TRAFFIC_MAX_RANKS + 1, WEFT_TRAFFIC_MAX_RANKS, WEFT_TRAFFIC_MAX_RANKS);
        parse_bad(text, WEFT_ELIMIT, want);
        free(text);
    }

    weft_traffic t;
    weft_diag d;
    CHECK_ERR(weft_traffic_load_file("/nonexistent/x.tm", &t, &d), WEFT_ENOENT);
    CHECK_CONTAINS(d.msg, "/nonexistent/x.tm: cannot open");
}

static char *write_text(const weft_traffic *t, const char *comment)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return NULL;
    CHECK_ERR(weft_traffic_write(f, t, comment, NULL), WEFT_OK);
    fclose(f);
    return buf;
}

static void test_write_uniform_transpose(void)
{
    weft_traffic t;
    weft_diag d;
    CHECK_ERR(weft_traffic_uniform(3, 1000, &t, &d), WEFT_EINVAL);
    CHECK_STR(
        d.msg,
        "size 1000 is not a multiple of 3 ranks (each rank sends size/3 bytes to every rank)");
    CHECK_ERR(weft_traffic_uniform(0, 0, &t, &d), WEFT_EINVAL);
    CHECK_ERR(weft_traffic_uniform(3, 999, &t, &d), WEFT_OK);
    char *s = write_text(&t, "uniform\nsecond line");
    CHECK_STR(s, "# uniform\n# second line\n333 333 333\n333 333 333\n333 333 333\n");
    free(s);
    weft_traffic_free(&t);

    const char *text = "0 1 2\n30 40 50\n600 700 18446744073709550000\n";
    weft_traffic m, tr;
    CHECK_ERR(weft_traffic_parse(text, strlen(text), "x", &m, NULL), WEFT_OK);
    s = write_text(&m, NULL);
    CHECK_STR(s, text);
    free(s);
    CHECK_ERR(weft_traffic_transpose(&m, &tr, NULL), WEFT_OK);
    s = write_text(&tr, NULL);
    CHECK_STR(s, "0 30 600\n1 40 700\n2 50 18446744073709550000\n");
    free(s);
    CHECK_INT(weft_traffic_send(&m, 1), 120);
    CHECK_INT(weft_traffic_recv(&m, 0), 630);
    weft_traffic_free(&tr);
    weft_traffic_free(&m);

    const char *sk = "0 10 10 0\n0 0 0 0\n40 0 0 0\n0 0 0 4\n";
    CHECK_ERR(weft_traffic_parse(sk, strlen(sk), "x", &m, NULL), WEFT_OK);
    weft_traffic_stats st;
    weft_traffic_get_stats(&m, &st);
    CHECK_INT(st.total, 64);
    CHECK_INT(st.offdiag, 60);
    CHECK_INT(st.max_entry, 40);
    CHECK_INT(st.max_send, 40);
    CHECK_INT(st.max_send_rank, 2);
    CHECK_INT(st.min_send, 0);
    CHECK_INT(st.max_recv, 40);
    CHECK_INT(st.max_recv_rank, 0);
    CHECK_INT(st.min_recv, 4);
    CHECK(st.send_skew == 2.5); /* 40 / (64/4) */
    CHECK(st.recv_skew == 2.5);
    CHECK_ERR(weft_traffic_check(&m, NULL), WEFT_OK);
    m.bytes[5] = UINT64_MAX;
    CHECK_ERR(weft_traffic_check(&m, &d), WEFT_EOVERFLOW);
    CHECK_STR(d.msg,
              "the traffic matrix's entries sum to more than 2^64-1 bytes (at rank 1 to rank 1)");
    weft_traffic_free(&m);
}

static weft_traffic_moe_params moe(uint32_t n, uint32_t e, uint32_t k, uint64_t tok, uint64_t h)
{
    return (weft_traffic_moe_params){
        .ranks = n, .experts = e, .topk = k, .tokens = tok, .hidden_bytes = h, .seed = 1};
}

static void test_moe(void)
{
    weft_traffic t, u;
    weft_diag d;
    /* Every row sums to T*K*H. */
    weft_traffic_moe_params p = moe(8, 32, 4, 1000, 7);
    p.skew = WEFT_TRAFFIC_SKEW_ZIPF;
    p.zipf_milli = 1200;
    CHECK_ERR(weft_traffic_moe(&p, &t, &d), WEFT_OK);
    for (uint32_t i = 0; i < 8; i++)
        CHECK_INT(weft_traffic_send(&t, i), 1000 * 4 * 7);
    /* Zipf: expert 0 is the hottest, on rank 0; the last rank gets least. */
    weft_traffic_stats st;
    weft_traffic_get_stats(&t, &st);
    CHECK_INT(st.max_recv_rank, 0);
    CHECK_INT(st.min_recv, weft_traffic_recv(&t, 7));
    CHECK(st.recv_skew > 2.0);
    CHECK(st.send_skew == 1.0);
    /* Deterministic: the same parameters give the same matrix, and the
     * golden values pin it across platforms (fixed point, own PRNG). */
    CHECK_ERR(weft_traffic_moe(&p, &u, NULL), WEFT_OK);
    CHECK(memcmp(t.bytes, u.bytes, 64 * sizeof *t.bytes) == 0);
    weft_traffic_free(&u);
    static const uint64_t golden_row0[8] = {13944, 4970, 2912, 1918, 1463, 1148, 945, 700};
    for (uint32_t j = 0; j < 8; j++)
        CHECK_INT(weft_traffic_at(&t, 0, j), golden_row0[j]);
    /* Another seed, another matrix. */
    p.seed = 2;
    CHECK_ERR(weft_traffic_moe(&p, &u, NULL), WEFT_OK);
    CHECK(memcmp(t.bytes, u.bytes, 64 * sizeof *t.bytes) != 0);
    weft_traffic_free(&u);
    weft_traffic_free(&t);

    /* K distinct experts: with one expert per rank a token adds H at most
     * once per rank, so no entry exceeds T*H; with K == E every entry is
     * exactly T*H. */
    p = moe(6, 6, 5, 500, 3);
    p.skew = WEFT_TRAFFIC_SKEW_ZIPF;
    p.zipf_milli = 3000;
    CHECK_ERR(weft_traffic_moe(&p, &t, NULL), WEFT_OK);
    for (uint32_t i = 0; i < 36; i++)
        CHECK(t.bytes[i] <= 500 * 3);
    CHECK_INT(weft_traffic_at(&t, 3, 0), 500 * 3); /* the hottest expert: always picked */
    weft_traffic_free(&t);
    p = moe(4, 4, 4, 100, 2);
    CHECK_ERR(weft_traffic_moe(&p, &t, NULL), WEFT_OK);
    for (uint32_t i = 0; i < 16; i++)
        CHECK_INT(t.bytes[i], 200);
    weft_traffic_free(&t);

    /* Uniform skew spreads evenly: each of 4 ranks holds 2 of 8 experts and
     * gets about a quarter of 40,000 pairs. */
    p = moe(4, 8, 2, 20000, 1);
    CHECK_ERR(weft_traffic_moe(&p, &t, NULL), WEFT_OK);
    weft_traffic_get_stats(&t, &st);
    CHECK(st.recv_skew < 1.02);
    weft_traffic_free(&t);

    /* Blocks when N does not divide E, and E < N: expert e on rank e*N/E. */
    p = moe(4, 2, 2, 10, 1);
    CHECK_ERR(weft_traffic_moe(&p, &t, NULL), WEFT_OK);
    for (uint32_t i = 0; i < 4; i++) {
        CHECK_INT(weft_traffic_at(&t, i, 0), 10);
        CHECK_INT(weft_traffic_at(&t, i, 1), 0);
        CHECK_INT(weft_traffic_at(&t, i, 2), 10);
        CHECK_INT(weft_traffic_at(&t, i, 3), 0);
    }
    weft_traffic_free(&t);

    p = moe(4, 8, 9, 1, 1);
    CHECK_ERR(weft_traffic_moe(&p, &t, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "--topk 9 is more than the 8 experts (a token goes to K distinct experts)");
    p = moe(4, 8, 0, 1, 1);
    CHECK_ERR(weft_traffic_moe(&p, &t, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "--topk 0: every token goes to at least 1 expert");
    p = moe(0, 8, 1, 1, 1);
    CHECK_ERR(weft_traffic_moe(&p, &t, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "--ranks 0: must be 1 to 16384");
    p = moe(4, 8, 2, 1ull << 40, 1ull << 30);
    CHECK_ERR(weft_traffic_moe(&p, &t, &d), WEFT_EOVERFLOW);
    CHECK_STR(d.msg, "4 ranks x 1099511627776 tokens x 2 experts x 1073741824 bytes are more "
                     "than 2^64-1 bytes");
    p = moe(4, 8, 2, 1, 1);
    p.skew = WEFT_TRAFFIC_SKEW_ZIPF;
    p.zipf_milli = 8001;
    CHECK_ERR(weft_traffic_moe(&p, &t, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "zipf exponent 8.001: must be at most 8");
}

static weft_err ctor_parse(void *arg)
{
    const char *text = "# x\n1 2 3\n4 5 6\n7 8 9\n";
    return weft_traffic_parse(text, strlen(text), "oom.tm", arg, NULL);
}

static weft_err ctor_moe(void *arg)
{
    weft_traffic_moe_params p = moe(4, 8, 2, 3, 1);
    return weft_traffic_moe(&p, arg, NULL);
}

static void dtor(void *arg)
{
    weft_traffic_free(arg);
}

/* The size an alltoallv is simulated at: total / N rounded (halves up),
 * at least 1, 0 for no bytes. */
static void test_sim_size(void)
{
    weft_diag d;
    weft_traffic t;
    CHECK_ERR(weft_traffic_new(4, &t, &d), WEFT_OK);
    CHECK_INT(weft_traffic_sim_size(&t), 0);
    t.bytes[1] = 1; /* 0.25 a rank */
    CHECK_INT(weft_traffic_sim_size(&t), 1);
    t.bytes[6] = 9; /* 2.5 */
    CHECK_INT(weft_traffic_sim_size(&t), 3);
    t.bytes[11] = 12499990; /* 12,500,000 / 4 */
    CHECK_INT(weft_traffic_sim_size(&t), 3125000);
    weft_traffic_free(&t);
}

int main(void)
{
    test_parse();
    test_sim_size();
    test_write_uniform_transpose();
    test_moe();
    weft_traffic t;
    CHECK(weft_test_oom_sweep("parse", ctor_parse, dtor, &t) >= 2);
    CHECK(weft_test_oom_sweep("moe", ctor_moe, dtor, &t) >= 4);
    return weft_test_done();
}
