/* The real-data executor: every correct plan gives byte-for-byte the
 * reference result under many seeds and thread counts; a racy plan gives
 * seed-dependent results and the verifier rejects it. */
#include "base/alloc.h"
#include "base/testing.h"
#include "plan/testplans.h"
#include "weft/plan.h"

static weft_plan *parse(const char *text)
{
    weft_plan *p = NULL;
    weft_diag d;
    if (weft_plan_parse(text, strlen(text), "t.plan", &p, &d) != WEFT_OK)
        fprintf(stderr, "parse failed: %s\n", d.msg);
    return p;
}

/* Runs p and compares with the reference; true when equal. */
static bool run_matches(const weft_plan *p, uint64_t seed, uint32_t threads, uint32_t elems,
                        weft_diag *d)
{
    weft_exec_opts o;
    weft_exec_opts_init(&o);
    o.seed = seed;
    o.threads = threads;
    o.elems_per_chunk = elems;
    return weft_plan_exec_check(p, &o, d) == WEFT_OK;
}

static void test_good_plans(void)
{
    for (size_t i = 0; i < sizeof weft__good_plans / sizeof weft__good_plans[0]; i++) {
        weft_plan *p = parse(weft__good_plans[i].text);
        CHECK(p != NULL);
        if (!p)
            continue;
        for (uint64_t seed = 1; seed <= 20; seed++) {
            weft_diag d;
            weft_diag_clear(&d);
            bool ok = run_matches(p, seed, seed % 3 == 0 ? 3 : 1, 1 + (uint32_t)(seed % 5), &d);
            if (!ok)
                fprintf(stderr, "%s, seed %llu: %s\n", weft__good_plans[i].name,
                        (unsigned long long)seed, d.msg);
            CHECK(ok);
        }
        weft_plan_free(p);
    }
}

static void test_reference_values(void)
{
    /* The reference of an allreduce is the sum of every rank's input. */
    weft_plan_info info = {WEFT_COLL_ALLREDUCE, 3, {0}, 2, 0, true};
    weft_plan *p;
    CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
    weft_exec_result *want;
    CHECK_ERR(weft_exec_reference(p, 2, &want), WEFT_OK);
    size_t n;
    const int64_t *out = weft_exec_out(want, (weft_rank){2}, &n);
    CHECK_INT(n, 4);
    int64_t sum = weft_exec_input_value(0, 1, 1) + weft_exec_input_value(1, 1, 1) +
                  weft_exec_input_value(2, 1, 1);
    CHECK_INT(out[3], sum);
    /* Inputs are distinct across ranks, chunks and elements. */
    CHECK(weft_exec_input_value(0, 1, 1) != weft_exec_input_value(1, 1, 1));
    CHECK(weft_exec_input_value(0, 1, 1) != weft_exec_input_value(0, 2, 1));
    CHECK(weft_exec_input_value(0, 1, 1) != weft_exec_input_value(0, 1, 2));
    /* With no ops, the plan's result is its input: wrong for 3 ranks. */
    weft_exec_result *got;
    weft_exec_opts o;
    weft_exec_opts_init(&o);
    o.elems_per_chunk = 2;
    weft_diag d;
    CHECK_ERR(weft_plan_exec(p, &o, &got, &d), WEFT_OK);
    CHECK(!weft_exec_compare(got, want, &d));
    char msg[200];
    snprintf(msg, sizeof msg, "rank 0 out[0] element 0: got %lld, expected %lld",
             (long long)weft_exec_input_value(0, 0, 0),
             (long long)(weft_exec_input_value(0, 0, 0) + weft_exec_input_value(1, 0, 0) +
                         weft_exec_input_value(2, 0, 0)));
    CHECK_STR(d.msg, msg);
    /* weft_plan_exec_check says the same in one call. */
    weft_diag_clear(&d);
    CHECK_ERR(weft_plan_exec_check(p, &o, &d), WEFT_EVERIFY);
    CHECK_STR(d.msg, msg);
    weft_exec_result_free(got);
    weft_exec_result_free(want);
    weft_plan_free(p);
}

static void test_racy(void)
{
    /* The allgather ring with op 3's dep dropped: op 3 forwards out[0] from
     * rank 1 whether or not op 0 has delivered it. */
    weft_plan *p = parse(weft__good_plans[0].text);
    CHECK_ERR(weft_plan_remove_dep(p, 3, 0), WEFT_OK);
    weft_diag d;
    CHECK_ERR(weft_plan_verify(p, NULL, &d), WEFT_EVERIFY);
    CHECK_STR(d.msg,
              "op 3 (rank 1 -> rank 2, out[0]): rank 1 reads out[0] before op 0 has delivered it");
    int right = 0, wrong = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        if (run_matches(p, seed, 1, 4, &d))
            right++;
        else
            wrong++;
    }
    printf("racy allgather: %d of 40 seeds right, %d wrong\n", right, wrong);
    CHECK(right > 0);
    CHECK(wrong > 0);
    /* The same seed always gives the same order with one thread. */
    weft_exec_opts o;
    weft_exec_opts_init(&o);
    o.seed = 7;
    weft_exec_result *a, *b;
    CHECK_ERR(weft_plan_exec(p, &o, &a, &d), WEFT_OK);
    CHECK_ERR(weft_plan_exec(p, &o, &b, &d), WEFT_OK);
    CHECK(weft_exec_compare(a, b, &d));
    weft_exec_result_free(a);
    weft_exec_result_free(b);
    weft_plan_free(p);
}

static void test_bad_plans(void)
{
    weft_diag d;
    weft_exec_result *r = NULL;
    weft_plan *p =
        parse("weft-plan 1\ncoll allgather\nranks 2\nchunks 1\n"
              "op 0 copy 0:out[0] 1:out[0] deps=1\nop 1 copy 1:out[1] 0:out[1] deps=0\n");
    CHECK_ERR(weft_plan_exec(p, NULL, &r, &d), WEFT_EVERIFY);
    CHECK_STR(d.msg, "op 0 is on a dependency cycle and can never run");
    CHECK(r == NULL);
    weft_plan_free(p);
    p = parse("weft-plan 1\ncoll allgather\nranks 2\nchunks 1\nop 0 copy 0:out[0] 4:out[0]\n");
    CHECK_ERR(weft_plan_exec(p, NULL, &r, &d), WEFT_EVERIFY);
    CHECK_STR(d.msg, "op 0 (rank 0 -> rank 4, out[0]): destination rank 4 does not exist (the "
                     "plan has 2 ranks)");
    weft_exec_opts o;
    weft_exec_opts_init(&o);
    o.threads = 0;
    CHECK_ERR(weft_plan_exec(p, &o, &r, &d), WEFT_EINVAL);
    weft_plan_free(p);
}

/* A ring allreduce on n ranks (one dep per op: the op that delivered). */
static weft_plan *ring_allreduce(uint32_t n)
{
    weft_plan_info info = {WEFT_COLL_ALLREDUCE, n, {0}, n, 0, true};
    weft_plan *p;
    if (weft_plan_new(&info, &p))
        return NULL;
    for (uint32_t step = 0; step < 2 * (n - 1); step++) {
        bool copy = step >= n - 1;
        uint32_t k = copy ? step - (n - 1) : step;
        for (uint32_t r = 0; r < n; r++) {
            uint32_t chunk = copy ? (r + 1 + n - k) % n : (r + n - k) % n;
            weft_op op = {copy ? WEFT_OP_COPY : WEFT_OP_REDUCE,
                          {r},
                          {(r + 1) % n},
                          WEFT_BUF_OUT,
                          WEFT_BUF_OUT,
                          chunk,
                          chunk,
                          1,
                          0};
            uint32_t dep = (step - 1) * n + (r + n - 1) % n;
            weft_plan_add_op(p, &op, &dep, step ? 1 : 0, NULL);
        }
    }
    return p;
}

static weft_err ctor_exec(void *arg)
{
    weft_exec_result **out = arg;
    const char *text = weft__good_plans[4].text;
    weft_plan *p;
    weft_err e = weft_plan_parse(text, strlen(text), "t.plan", &p, NULL);
    if (e)
        return e;
    e = weft_plan_exec(p, NULL, out, NULL);
    weft_plan_free(p);
    return e;
}

static void dtor_exec(void *arg)
{
    weft_exec_result **r = arg;
    weft_exec_result_free(*r);
}

int main(void)
{
    test_good_plans();
    test_reference_values();
    test_racy();
    test_bad_plans();
    weft_plan *p = ring_allreduce(16);
    CHECK_ERR(weft_plan_verify(p, NULL, NULL), WEFT_OK);
    for (uint64_t seed = 1; seed <= 4; seed++) {
        weft_diag d;
        bool ok = run_matches(p, seed, seed == 1 ? 1 : 4, 8, &d);
        if (!ok)
            fprintf(stderr, "ring 16, seed %llu: %s\n", (unsigned long long)seed, d.msg);
        CHECK(ok);
    }
    weft_plan_free(p);
    /* Parsing and executing fail cleanly at every allocation. */
    weft_exec_result *r = NULL;
    CHECK(weft_test_oom_sweep("exec", ctor_exec, dtor_exec, &r) > 3);
    return weft_test_done();
}
