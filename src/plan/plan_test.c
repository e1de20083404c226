/* The plan IR: building, reading, editing, copying, comparing. */
#include "base/alloc.h"
#include "base/testing.h"
#include "weft/plan.h"

static weft_op copy_op(uint32_t s, uint32_t d, uint32_t slot)
{
    weft_op op = {WEFT_OP_COPY, {s}, {d}, WEFT_BUF_OUT, WEFT_BUF_OUT, slot, slot, 1, 0};
    return op;
}

static void test_names(void)
{
    CHECK_STR(weft_coll_name(WEFT_COLL_REDUCESCATTER), "reducescatter");
    CHECK_STR(weft_coll_name((weft_coll)99), "?");
    weft_coll c;
    CHECK(weft_coll_parse("alltoall", 8, &c) && c == WEFT_COLL_ALLTOALL);
    CHECK(!weft_coll_parse("alltoal", 7, &c));
    CHECK(weft_coll_has_root(WEFT_COLL_BROADCAST) && !weft_coll_has_root(WEFT_COLL_ALLGATHER));
    CHECK_STR(weft_buf_name(WEFT_BUF_SCRATCH), "scratch");
    CHECK_STR(weft_op_kind_name(WEFT_OP_NOP), "nop");
}

static void test_sizes(void)
{
    static const struct {
        weft_coll coll;
        uint32_t in, out;
        uint64_t size, ids;
    } rows[] = {
        {WEFT_COLL_ALLGATHER, 3, 12, 12, 12}, {WEFT_COLL_REDUCESCATTER, 12, 3, 12, 12},
        {WEFT_COLL_ALLREDUCE, 3, 3, 3, 3},    {WEFT_COLL_BROADCAST, 3, 3, 3, 3},
        {WEFT_COLL_REDUCE, 3, 3, 3, 3},       {WEFT_COLL_ALLTOALL, 12, 12, 12, 48},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        weft_plan_info info = {rows[i].coll, 4, {0}, 3, 2, true};
        weft_plan *p = NULL;
        CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
        if (!p)
            continue;
        CHECK_INT(weft_plan_buf_slots(p, WEFT_BUF_IN), rows[i].in);
        CHECK_INT(weft_plan_buf_slots(p, WEFT_BUF_OUT), rows[i].out);
        CHECK_INT(weft_plan_buf_slots(p, WEFT_BUF_SCRATCH), 2);
        CHECK_INT(weft_plan_size_chunks(p), rows[i].size);
        CHECK_INT(weft_plan_num_chunk_ids(p), rows[i].ids);
        weft_plan_free(p);
    }
    weft_plan *p = NULL;
    weft_plan_info bad = {WEFT_COLL_ALLREDUCE, 0, {0}, 1, 0, true};
    CHECK_ERR(weft_plan_new(&bad, &p), WEFT_EINVAL);
    bad.nranks = 4;
    bad.root.v = 1; /* allreduce has no root */
    CHECK_ERR(weft_plan_new(&bad, &p), WEFT_EINVAL);
    bad.coll = WEFT_COLL_REDUCE;
    bad.root.v = 4;
    CHECK_ERR(weft_plan_new(&bad, &p), WEFT_EINVAL);
    bad.root.v = 3;
    bad.chunks = 0;
    CHECK_ERR(weft_plan_new(&bad, &p), WEFT_EINVAL);
    weft_plan_info big = {WEFT_COLL_ALLTOALL, 1u << 20, {0}, 1u << 12, 0, true};
    CHECK_ERR(weft_plan_new(&big, &p), WEFT_ELIMIT);
    CHECK(p == NULL);
    /* Slots over all ranks: 2^26 exactly is made, one more is not, before
     * any allocation; the total saturates instead of wrapping. */
    weft_plan_info edge = {WEFT_COLL_ALLREDUCE, 2, {0}, 1u << 24, 0, true};
    CHECK_INT(weft_plan_info_total_slots(&edge), WEFT_PLAN_MAX_TOTAL_SLOTS);
    CHECK_ERR(weft_plan_new(&edge, &p), WEFT_OK);
    weft_plan_free(p);
    p = NULL;
    edge.scratch = 1;
    CHECK_INT(weft_plan_info_total_slots(&edge), WEFT_PLAN_MAX_TOTAL_SLOTS + 2);
    CHECK_ERR(weft_plan_new(&edge, &p), WEFT_ELIMIT);
    CHECK(p == NULL);
    weft_plan_info wide = {WEFT_COLL_ALLTOALL, UINT32_MAX, {0}, UINT32_MAX, UINT32_MAX, true};
    CHECK(weft_plan_info_total_slots(&wide) == UINT64_MAX);
    wide.nranks = 8; /* 8 x (in 8C + out 8C + scratch C), C = 2^32 - 1 */
    CHECK(weft_plan_info_total_slots(&wide) == UINT64_C(136) * UINT32_MAX);
}

static void test_build_edit(void)
{
    weft_plan_info info = {WEFT_COLL_ALLGATHER, 3, {0}, 1, 0, true};
    weft_plan *p;
    CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
    uint32_t id;
    weft_op op = copy_op(0, 1, 0);
    CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, &id), WEFT_OK);
    CHECK_INT(id, 0);
    op = copy_op(1, 2, 0);
    uint32_t d0[] = {0};
    CHECK_ERR(weft_plan_add_op(p, &op, d0, 1, &id), WEFT_OK);
    CHECK_INT(id, 1);
    op = copy_op(2, 0, 2);
    uint32_t d01[] = {0, 1};
    CHECK_ERR(weft_plan_add_op(p, &op, d01, 2, &id), WEFT_OK);
    const char *path[] = {"gpu2", "sw0", "gpu0"};
    weft_rat half = {1, 2};
    CHECK_ERR(weft_plan_add_path(p, 2, half, path, 3), WEFT_OK);
    CHECK_ERR(weft_plan_add_path(p, 1, half, path, 2), WEFT_OK);
    CHECK_ERR(weft_plan_add_path(p, 2, half, path + 1, 2), WEFT_OK); /* moves op 2's paths */
    const char *bad_names[] = {"a,b", "c"};
    CHECK_ERR(weft_plan_add_path(p, 2, half, bad_names, 2), WEFT_EINVAL);
    CHECK_ERR(weft_plan_add_path(p, 3, half, path, 2), WEFT_EINVAL);
    CHECK_INT(weft_plan_num_ops(p), 3);
    CHECK_INT(weft_plan_op_num_paths(p, 0), 0);
    CHECK_INT(weft_plan_op_num_paths(p, 1), 1);
    CHECK_INT(weft_plan_op_num_paths(p, 2), 2);
    CHECK_INT(weft_plan_path_len(p, 2, 0), 3);
    CHECK_STR(weft_plan_path_node(p, 2, 0, 1), "sw0");
    CHECK_STR(weft_plan_path_node(p, 2, 1, 1), "gpu0");
    CHECK_INT(weft_plan_path_share(p, 2, 1).den, 2);

    /* Bad shapes. */
    weft_op nop = {WEFT_OP_NOP, {1}, {2}, 0, 0, 0, 0, 0, 0};
    CHECK_ERR(weft_plan_add_op(p, &nop, NULL, 0, NULL), WEFT_EINVAL);
    op = copy_op(0, 1, 0);
    op.count = 0;
    CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, NULL), WEFT_EINVAL);

    weft_plan *q;
    CHECK_ERR(weft_plan_copy(p, &q), WEFT_OK);
    CHECK(weft_plan_equal(p, q));
    uint32_t n;
    const uint32_t *d = weft_plan_op_deps(q, 2, &n);
    CHECK(n == 2 && d[0] == 0 && d[1] == 1);

    /* Each edit makes the copy differ; undoing it makes them equal again. */
    CHECK_ERR(weft_plan_remove_dep(q, 2, 0), WEFT_OK);
    CHECK(!weft_plan_equal(p, q));
    d = weft_plan_op_deps(q, 2, &n);
    CHECK(n == 1 && d[0] == 1);
    CHECK_ERR(weft_plan_set_deps(q, 2, d01, 2), WEFT_OK);
    CHECK(weft_plan_equal(p, q));
    CHECK_ERR(weft_plan_remove_dep(q, 2, 2), WEFT_EINVAL);
    op = copy_op(2, 0, 2);
    op.kind = WEFT_OP_REDUCE;
    CHECK_ERR(weft_plan_set_op(q, 2, &op), WEFT_OK);
    CHECK(!weft_plan_equal(p, q));
    op.kind = WEFT_OP_COPY;
    CHECK_ERR(weft_plan_set_op(q, 2, &op), WEFT_OK);
    CHECK(weft_plan_equal(p, q));
    weft_plan_clear_route(q, 1);
    CHECK(!weft_plan_equal(p, q));
    weft_plan_free(q);

    /* Removing op 0 renumbers: op 1 loses its dep, op 2 keeps only 0 (was 1). */
    CHECK_ERR(weft_plan_remove_op(p, 0), WEFT_OK);
    CHECK_INT(weft_plan_num_ops(p), 2);
    d = weft_plan_op_deps(p, 0, &n);
    CHECK_INT(n, 0);
    d = weft_plan_op_deps(p, 1, &n);
    CHECK(n == 1 && d[0] == 0);
    CHECK_INT(weft_plan_op(p, 1).src_rank.v, 2);
    CHECK_INT(weft_plan_op_num_paths(p, 1), 2);
    CHECK_ERR(weft_plan_remove_op(p, 2), WEFT_EINVAL);
    weft_plan_free(p);
}

/* Builds a plan with deps and routes under allocation failures. */
static weft_err ctor_build(void *arg)
{
    weft_plan **out = arg;
    weft_plan_info info = {WEFT_COLL_ALLREDUCE, 4, {0}, 4, 1, true};
    weft_plan *p;
    weft_err e = weft_plan_new(&info, &p);
    if (e)
        return e;
    for (uint32_t i = 0; i < 200 && !e; i++) {
        weft_op op = copy_op(i % 4, (i + 1) % 4, i % 4);
        uint32_t dep = i ? i - 1 : 0;
        e = weft_plan_add_op(p, &op, &dep, i ? 1 : 0, NULL);
        if (!e && i % 10 == 0) {
            char a[16], b[16];
            snprintf(a, sizeof a, "gpu%u", i % 4);
            snprintf(b, sizeof b, "n%u", i);
            const char *nodes[] = {a, b};
            e = weft_plan_add_path(p, i, weft_rat_int(1), nodes, 2);
        }
    }
    weft_plan *q = NULL;
    if (!e)
        e = weft_plan_copy(p, &q);
    weft_plan_free(p);
    if (e)
        return e;
    *out = q;
    return WEFT_OK;
}

/* The op cap: the op after the cap is refused and the plan keeps what it
 * had; a cap below the ops held refuses every op; 0 restores the default. */
static void test_limit(void)
{
    weft_plan_info info = {WEFT_COLL_ALLGATHER, 4, {0}, 1, 0, true};
    weft_plan *p = NULL;
    CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
    if (!p)
        return;
    CHECK_INT(weft_plan_max_ops(p), WEFT_PLAN_MAX_OPS);
    weft_plan_limit_ops(p, 2);
    CHECK_INT(weft_plan_max_ops(p), 2);
    weft_op op = copy_op(0, 1, 0);
    CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, NULL), WEFT_OK);
    CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, NULL), WEFT_OK);
    CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, NULL), WEFT_ELIMIT);
    CHECK_INT(weft_plan_num_ops(p), 2);
    weft_plan_limit_ops(p, 1);
    CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, NULL), WEFT_ELIMIT);
    weft_plan_limit_ops(p, 0);
    CHECK_INT(weft_plan_max_ops(p), WEFT_PLAN_MAX_OPS);
    CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, NULL), WEFT_OK);
    weft_plan_limit_ops(p, UINT32_MAX);
    CHECK_INT(weft_plan_max_ops(p), WEFT_PLAN_MAX_OPS);
    weft_plan_free(p);
}

static void dtor_build(void *arg)
{
    weft_plan **p = arg;
    weft_plan_free(*p);
}

/* The plan module's public view of its layout and order (weft_plan_storage_slot,
 * weft_plan_check_structure, weft_plan_topo_order): what sim and run use
 * instead of the module's internal headers. */
static void test_storage_order(void)
{
    static const struct {
        weft_coll coll;
        bool inplace;
        uint32_t rank;
        weft_buf buf;
        uint32_t index, slot;
    } rows[] = {
        /* 4 ranks, C = 3, 2 scratch slots. */
        {WEFT_COLL_ALLGATHER, true, 2, WEFT_BUF_IN, 1, 7}, /* in[1] is out[2*3+1] */
        {WEFT_COLL_ALLGATHER, true, 2, WEFT_BUF_OUT, 7, 7},
        {WEFT_COLL_ALLGATHER, true, 2, WEFT_BUF_SCRATCH, 1, 13}, /* after 12 out slots */
        {WEFT_COLL_REDUCESCATTER, true, 1, WEFT_BUF_OUT, 2, 5},  /* out[2] is in[1*3+2] */
        {WEFT_COLL_ALLREDUCE, true, 3, WEFT_BUF_OUT, 2, 2},
        {WEFT_COLL_ALLREDUCE, false, 3, WEFT_BUF_IN, 2, 2},
        {WEFT_COLL_ALLREDUCE, false, 3, WEFT_BUF_OUT, 2, 5}, /* after 3 in slots */
        {WEFT_COLL_ALLREDUCE, false, 3, WEFT_BUF_SCRATCH, 0, 6},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        weft_plan_info info = {rows[i].coll, 4, {0}, 3, 2, rows[i].inplace};
        weft_plan *p = NULL;
        CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
        if (!p)
            continue;
        CHECK_ERR(weft_plan_check_structure(p, NULL), WEFT_OK);
        weft_rank r = {rows[i].rank};
        CHECK_INT(weft_plan_storage_slot(p, r, rows[i].buf, rows[i].index), rows[i].slot);
        weft_plan_free(p);
    }

    weft_plan_info info = {WEFT_COLL_ALLGATHER, 3, {0}, 1, 0, true};
    weft_plan *p;
    CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
    uint32_t id, order[3], d1[] = {1}, d2[] = {2}, d0[] = {0};
    weft_op op = copy_op(0, 1, 0);
    CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, &id), WEFT_OK);
    op = copy_op(1, 2, 0);
    CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, &id), WEFT_OK);
    op = copy_op(2, 0, 2);
    CHECK_ERR(weft_plan_add_op(p, &op, NULL, 0, &id), WEFT_OK);
    CHECK_ERR(weft_plan_set_deps(p, 0, d1, 1), WEFT_OK); /* 2, then 1, then 0 */
    CHECK_ERR(weft_plan_set_deps(p, 1, d2, 1), WEFT_OK);
    weft_diag d;
    CHECK_ERR(weft_plan_topo_order(p, order, &d), WEFT_OK);
    CHECK_INT(order[0], 2);
    CHECK_INT(order[1], 1);
    CHECK_INT(order[2], 0);
    CHECK_ERR(weft_plan_check_structure(p, &d), WEFT_OK);
    CHECK_ERR(weft_plan_set_deps(p, 2, d0, 1), WEFT_OK);
    CHECK_ERR(weft_plan_topo_order(p, order, &d), WEFT_EVERIFY);
    CHECK_STR(d.msg, "the plan's dependencies form a cycle");
    op = copy_op(2, 0, 3); /* out has 3 slots on each rank */
    CHECK_ERR(weft_plan_set_op(p, 2, &op), WEFT_OK);
    CHECK_ERR(weft_plan_check_structure(p, &d), WEFT_EVERIFY);
    CHECK_STR(d.msg, "op 2 (rank 2 -> rank 0, out[3]): source out[3] is outside rank 2's "
                     "out buffer (3 slots)");
    weft_plan_free(p);
}

int main(void)
{
    test_names();
    test_sizes();
    test_build_edit();
    test_limit();
    test_storage_order();
    weft_plan *p = NULL;
    CHECK(weft_test_oom_sweep("plan build", ctor_build, dtor_build, &p) > 10);
    return weft_test_done();
}
