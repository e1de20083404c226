/* Tuning tables: building, the exact text written, the round trip through
 * the parser, lookup by size, the fabric check, every malformed table's
 * message naming its line, the candidates, and allocation failures. */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "weft/synth.h"
#include "weft/tuning.h"

static char *to_text(const weft_tuning *tt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK_ERR(weft_tuning_write(tt, f), WEFT_OK);
    fclose(f);
    return buf;
}

static weft_tuning *sample(const weft_topo *t)
{
    weft_tuning *tt = NULL;
    CHECK_ERR(weft_tuning_new(t, "switch:4", "slices=1 alpha=0", &tt, NULL), WEFT_OK);
    const char *n1[] = {"ring", "rd", "hd"};
    const double t1[] = {3e-6, 1e-6, 2e-6};
    const char *n2[] = {"ring", "optimal"};
    const double t2[] = {5e-3, 5e-3};
    const char *n3[] = {"direct"};
    const double t3[] = {0.25};
    CHECK_ERR(weft_tuning_add(tt, WEFT_COLL_ALLREDUCE, 1024, 3, n1, t1, NULL), WEFT_OK);
    CHECK_ERR(weft_tuning_add(tt, WEFT_COLL_ALLTOALL, 4096, 1, n3, t3, NULL), WEFT_OK);
    CHECK_ERR(weft_tuning_add(tt, WEFT_COLL_ALLREDUCE, 1 << 20, 2, n2, t2, NULL), WEFT_OK);
    return tt;
}

static void test_round_trip(void)
{
    weft_topo *t = NULL;
    CHECK_ERR(weft_topo_preset("switch:4", &t, NULL), WEFT_OK);
    uint64_t h;
    CHECK_ERR(weft_tuning_fabric_hash(t, &h, NULL), WEFT_OK);
    weft_tuning *tt = sample(t);
    char *text = to_text(tt);
    char want[1024];
    snprintf(want, sizeof want,
             "weft-tuning 1\n"
             "# The simulator's ranking of the plans the runtime can run, per collective and\n"
             "# size (weft tune; docs/run.md, \"Tuning tables\").\n"
             "fabric switch:4\n"
             "hash %016llx\n"
             "ranks 4\n"
             "sim slices=1 alpha=0\n"
             "entry allreduce 1024 rd=1e-06 hd=2e-06 ring=3e-06\n"
             "entry allreduce 1048576 ring=0.005 optimal=0.005\n"
             "entry alltoall 4096 direct=0.25\n",
             (unsigned long long)h);
    CHECK_STR(text, want);

    weft_tuning *back = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_tuning_parse(text, strlen(text), "t.tune", &back, &d), WEFT_OK);
    if (back) {
        char *again = to_text(back);
        CHECK_STR(again, text);
        free(again);
        const weft_tuning_info *info = weft_tuning_get_info(back);
        CHECK_INT(info->version, 1);
        CHECK_INT(info->ranks, 4);
        CHECK(info->fabric_hash == h);
        CHECK_STR(info->fabric, "switch:4");
        CHECK_STR(info->sim, "slices=1 alpha=0");
        CHECK_STR(info->name, "t.tune");
        CHECK_INT(info->entries, 3);
        const weft_tuning_entry *x = weft_tuning_entry_get(back, 1);
        CHECK_INT(x->line, 9);
        CHECK_INT(x->n, 2);
        CHECK_STR(x->names[1], "optimal");
        CHECK(x->times_s[0] == 0.005);
        CHECK(weft_tuning_entry_get(back, 3) == NULL);
        /* Lookup: the largest size <= bytes, else the smallest. */
        CHECK_INT(weft_tuning_lookup(back, WEFT_COLL_ALLREDUCE, 0)->bytes, 1024);
        CHECK_INT(weft_tuning_lookup(back, WEFT_COLL_ALLREDUCE, 1024)->bytes, 1024);
        CHECK_INT(weft_tuning_lookup(back, WEFT_COLL_ALLREDUCE, (1 << 20) - 1)->bytes, 1024);
        CHECK_INT(weft_tuning_lookup(back, WEFT_COLL_ALLREDUCE, 1ull << 40)->bytes, 1 << 20);
        CHECK_INT(weft_tuning_lookup(back, WEFT_COLL_ALLTOALL, 8)->line, 10);
        CHECK(weft_tuning_lookup(back, WEFT_COLL_ALLGATHER, 8) == NULL);
        /* The fabric check. */
        CHECK_ERR(weft_tuning_check(back, t, "switch:4", NULL), WEFT_OK);
        weft_topo *other = NULL;
        CHECK_ERR(weft_topo_preset("ring:4", &other, NULL), WEFT_OK);
        uint64_t ho;
        CHECK_ERR(weft_tuning_fabric_hash(other, &ho, NULL), WEFT_OK);
        CHECK(ho != h);
        weft_diag_clear(&d);
        CHECK_ERR(weft_tuning_check(back, other, "ring:4", &d), WEFT_EINVAL);
        char msg[512];
        snprintf(msg, sizeof msg,
                 "t.tune: the tuning table is for fabric switch:4 (hash %016llx, 4 ranks); "
                 "ring:4 has hash %016llx (4 ranks); run weft tune ring:4",
                 (unsigned long long)h, (unsigned long long)ho);
        CHECK_STR(d.msg, msg);
        weft_topo_free(other);
        CHECK_ERR(weft_topo_preset("switch:8", &other, NULL), WEFT_OK);
        weft_diag_clear(&d);
        CHECK_ERR(weft_tuning_check(back, other, NULL, &d), WEFT_EINVAL);
        CHECK_CONTAINS(d.msg, ", 4 ranks); the fabric has hash ");
        CHECK_CONTAINS(d.msg, " (8 ranks); run weft tune on it");
        weft_topo_free(other);
    }
    weft_tuning_free(back);
    free(text);

    /* Errors of weft_tuning_add. */
    const char *bad[] = {"ring"};
    const double tb[] = {1.0};
    weft_diag_clear(&d);
    CHECK_ERR(weft_tuning_add(tt, WEFT_COLL_ALLREDUCE, 1 << 20, 1, bad, tb, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "tuning: size 1048576 of allreduce is not above the previous one, 1048576");
    CHECK_ERR(weft_tuning_add(tt, WEFT_COLL_ALLGATHER, 3000, 1, bad, tb, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "tuning: size 3000 is not a power of two");
    const char *bruck[] = {"bruck"};
    CHECK_ERR(weft_tuning_add(tt, WEFT_COLL_REDUCE, 8, 1, bruck, tb, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "tuning: algorithm 'bruck' does not build reduce");
    const char *two[] = {"ring", "ring"};
    const double t2[] = {1, 2};
    CHECK_ERR(weft_tuning_add(tt, WEFT_COLL_ALLGATHER, 8, 2, two, t2, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "tuning: algorithm 'ring' appears twice");
    const double nan_t[] = {-1};
    CHECK_ERR(weft_tuning_add(tt, WEFT_COLL_ALLGATHER, 8, 1, bad, nan_t, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "tuning: time of 'ring' must be a finite number of seconds >= 0");
    CHECK_ERR(weft_tuning_new(t, "a\nb", NULL, &back, &d), WEFT_EINVAL);
    weft_tuning_free(tt);
    weft_topo_free(t);
}

#define HEAD "weft-tuning 1\nfabric switch:4\nhash 00000000000000ff\nranks 4\nsim \n"

static void expect_error(const char *text, const char *msg)
{
    weft_tuning *tt = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_tuning_parse(text, strlen(text), "bad.tune", &tt, &d), WEFT_EPARSE);
    CHECK(tt == NULL);
    CHECK_STR(d.msg, msg);
}

static void test_errors(void)
{
    expect_error("", "bad.tune: empty; expected 'weft-tuning 1' (a weft tuning table)");
    expect_error("# only a comment\n\n",
                 "bad.tune: empty; expected 'weft-tuning 1' (a weft tuning table)");
    expect_error("fabric x\n", "bad.tune:1: expected 'weft-tuning 1' (a weft tuning table)");
    expect_error("weft-tuning 2\n",
                 "bad.tune:1: unsupported tuning table version 2 (this weft reads version 1)");
    expect_error("weft-tuning one\n", "bad.tune:1: expected 'weft-tuning 1' (a weft tuning table)");
    expect_error("weft-tuning 1\nhash 00000000000000ff\n",
                 "bad.tune:2: expected the 'fabric' line, got 'hash'");
    expect_error("weft-tuning 1\nfabric x\nhash 12\n",
                 "bad.tune:3: expected 'hash' and 16 hex digits");
    expect_error("weft-tuning 1\nfabric x\nhash 00000000000000fg\n",
                 "bad.tune:3: expected 'hash' and 16 hex digits");
    expect_error("weft-tuning 1\nfabric x\nhash 00000000000000ff\nranks 0\n",
                 "bad.tune:4: expected 'ranks' and a rank count >= 1");
    expect_error("weft-tuning 1\nfabric x\nhash 00000000000000ff\nranks 4\n",
                 "bad.tune:4: the header ends before its 'sim' line");
    expect_error(HEAD "ranks 4\n", "bad.tune:6: expected an 'entry' line, got 'ranks'");
    expect_error(HEAD "entry allreduce 1024\n",
                 "bad.tune:6: expected 'entry COLL SIZE NAME=SECONDS ...'");
    expect_error(HEAD "entry allfoo 1024 ring=1\n", "bad.tune:6: unknown collective 'allfoo'");
    expect_error(HEAD "entry allreduce 1K ring=1\n",
                 "bad.tune:6: bad size '1K' (expected bytes, a power of two)");
    expect_error(HEAD "entry allreduce 1000 ring=1\n",
                 "bad.tune:6: size 1000 is not a power of two");
    expect_error(HEAD "# c\nentry allreduce 1024 ring=1\nentry allreduce 512 ring=1\n",
                 "bad.tune:8: size 512 of allreduce is not above the previous one, 1024");
    expect_error(HEAD "entry allreduce 1024 foo=1\n", "bad.tune:6: unknown algorithm 'foo'");
    expect_error(HEAD "entry allreduce 1024 rings:2=1\n",
                 "bad.tune:6: unknown algorithm 'rings:2'");
    expect_error(HEAD "entry broadcast 1024 optimal=1\n",
                 "bad.tune:6: algorithm 'optimal' does not build broadcast");
    expect_error(HEAD "entry allreduce 1024 ring=1 ring=2\n",
                 "bad.tune:6: algorithm 'ring' appears twice");
    expect_error(HEAD "entry allreduce 1024 ring\n",
                 "bad.tune:6: expected NAME=SECONDS, got 'ring'");
    expect_error(HEAD "entry allreduce 1024 ring=fast\n",
                 "bad.tune:6: bad time 'fast' of 'ring' (expected seconds)");
    expect_error(HEAD "entry allreduce 1024 ring=inf\n",
                 "bad.tune:6: time of 'ring' must be a finite number of seconds >= 0");
    expect_error(HEAD "entry allreduce 1024 ring=2e-6 hd=1e-6\n",
                 "bad.tune:6: 'hd' is listed after 'ring' but is faster: the ranking must be "
                 "fastest first");
    static const char nul[] = HEAD "entry allreduce 1024 ring=1\0\n";
    weft_tuning *tt = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_tuning_parse(nul, sizeof nul - 1, NULL, &tt, &d), WEFT_EPARSE);
    CHECK_STR(d.msg, "<table>:6: a NUL byte at column 28 (binary data, not text)");
    /* CRLF line ends and blanks are fine; fabric and sim keep inner blanks. */
    const char *crlf = "weft-tuning 1\r\nfabric  my fabric.topo \r\nhash 00000000000000FF\r\n"
                       "ranks 4\r\nsim slices=2 alpha=1e-6\r\nentry  allreduce 8\tring=1\r\n";
    CHECK_ERR(weft_tuning_parse(crlf, strlen(crlf), NULL, &tt, &d), WEFT_OK);
    if (tt) {
        CHECK_STR(weft_tuning_get_info(tt)->fabric, "my fabric.topo");
        CHECK_STR(weft_tuning_get_info(tt)->sim, "slices=2 alpha=1e-6");
        CHECK(weft_tuning_get_info(tt)->fabric_hash == 0xff);
    }
    weft_tuning_free(tt);
    weft_diag_clear(&d);
    CHECK_ERR(weft_tuning_load_file("/nonexistent/x.tune", &tt, &d), WEFT_ENOENT);
    CHECK_STR(d.msg, "/nonexistent/x.tune: cannot open: No such file or directory");
    tt = NULL;
    CHECK_ERR(weft_tuning_load_file("/", &tt, &d), WEFT_EIO);
    CHECK_STR(d.msg, "/: is a directory");
    CHECK(tt == NULL);
}

static void test_candidates(void)
{
    size_t n = weft_tuning_candidate_count();
    size_t plain = 0;
    for (size_t i = 0; i < weft_classic_count(); i++)
        plain += strchr(weft_classic_get(i)->name, ':') == NULL && !weft_classic_get(i)->composite;
    CHECK_INT(n, plain + 2); /* and rings:auto, and optimal */
    CHECK_STR(weft_tuning_candidate(n - 1), "optimal");
    CHECK(weft_tuning_candidate(n) == NULL);
    CHECK_STR(weft_tuning_candidate(0), weft_classic_get(0)->name);
    CHECK(weft_tuning_candidate_supports("optimal", WEFT_COLL_ALLREDUCE));
    CHECK(!weft_tuning_candidate_supports("optimal", WEFT_COLL_ALLTOALL));
    CHECK(weft_tuning_candidate_supports("ring", WEFT_COLL_ALLGATHER));
    CHECK(!weft_tuning_candidate_supports("rings:2", WEFT_COLL_ALLGATHER));
    CHECK(weft_tuning_candidate_supports("rings:auto", WEFT_COLL_ALLGATHER));
    weft_topo *t = NULL;
    CHECK_ERR(weft_topo_preset("switch:4", &t, NULL), WEFT_OK);
    weft_plan *p = NULL;
    CHECK_ERR(weft_tuning_build(t, "optimal", WEFT_COLL_ALLREDUCE, (weft_rank){0}, &p, NULL),
              WEFT_OK);
    CHECK(p && weft_plan_get_info(p)->coll == WEFT_COLL_ALLREDUCE);
    weft_plan_free(p);
    p = NULL;
    CHECK_ERR(weft_tuning_build(t, "binomial", WEFT_COLL_BROADCAST, (weft_rank){2}, &p, NULL),
              WEFT_OK);
    CHECK(p && weft_plan_get_info(p)->root.v == 2);
    weft_plan_free(p);
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_tuning_build(t, "x", WEFT_COLL_BROADCAST, (weft_rank){0}, &p, &d), WEFT_ENOENT);
    CHECK_STR(d.msg, "'x' is not a tuning candidate");
    weft_topo_free(t);
}

static const char *oom_text;
static weft_err ctor_parse(void *arg)
{
    return weft_tuning_parse(oom_text, strlen(oom_text), "oom.tune", arg, NULL);
}
static void dtor_parse(void *arg)
{
    weft_tuning_free(*(weft_tuning **)arg);
}

int main(void)
{
    test_round_trip();
    test_errors();
    test_candidates();
    oom_text = HEAD "entry allgather 8 ring=1 hd=2\nentry allreduce 8 rd=1\n"
                    "entry allgather 16 ring=1\n";
    weft_tuning *tt = NULL;
    CHECK(weft_test_oom_sweep("parse", ctor_parse, dtor_parse, &tt) > 10);
    return weft_test_done();
}
