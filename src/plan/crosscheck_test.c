/* Cross-check of the verifier against real data: random single mutations
 * of correct plans (drop an op, drop a dep, swap source and destination,
 * move a slot index, turn copy into reduce and back). Every mutant the
 * verifier accepts must give exactly the reference result in the executor,
 * under several seeds and thread counts. */
#include "base/testing.h"
#include "plan/testplans.h"
#include "weft/plan.h"

static uint64_t rng_state = 42;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

/* Applies one random mutation; false when none applies. */
static bool mutate(weft_plan *p)
{
    uint32_t n = weft_plan_num_ops(p);
    if (n == 0)
        return false;
    uint32_t id = rnd(n);
    weft_op op = weft_plan_op(p, id);
    switch (rnd(5)) {
    case 0:
        return weft_plan_remove_op(p, id) == WEFT_OK;
    case 1: {
        uint32_t nd;
        weft_plan_op_deps(p, id, &nd);
        return nd && weft_plan_remove_dep(p, id, rnd(nd)) == WEFT_OK;
    }
    case 2: {
        if (op.kind == WEFT_OP_NOP)
            return false;
        weft_rank r = op.src_rank;
        weft_buf b = op.src_buf;
        uint32_t i = op.src_index;
        op.src_rank = op.dst_rank, op.src_buf = op.dst_buf, op.src_index = op.dst_index;
        op.dst_rank = r, op.dst_buf = b, op.dst_index = i;
        break;
    }
    case 3:
        if (op.kind == WEFT_OP_NOP)
            return false;
        if (rnd(2))
            op.src_index = rnd(2) ? op.src_index + 1 : op.src_index - (op.src_index > 0);
        else
            op.dst_index = rnd(2) ? op.dst_index + 1 : op.dst_index - (op.dst_index > 0);
        break;
    default:
        if (op.kind == WEFT_OP_NOP)
            return false;
        op.kind = op.kind == WEFT_OP_COPY ? WEFT_OP_REDUCE : WEFT_OP_COPY;
        break;
    }
    return weft_plan_set_op(p, id, &op) == WEFT_OK;
}

static bool matches(const weft_plan *p, uint64_t seed, uint32_t threads, weft_diag *d)
{
    weft_exec_opts o;
    weft_exec_opts_init(&o);
    o.seed = seed;
    o.threads = threads;
    o.elems_per_chunk = 3;
    return weft_plan_exec_check(p, &o, d) == WEFT_OK;
}

int main(void)
{
    size_t nplans = sizeof weft__good_plans / sizeof weft__good_plans[0];
    long accepted = 0, rejected = 0;
    for (size_t i = 0; i < nplans; i++) {
        const char *t = weft__good_plans[i].text;
        weft_plan *base = NULL;
        CHECK_ERR(weft_plan_parse(t, strlen(t), "x.plan", &base, NULL), WEFT_OK);
        if (!base)
            continue;
        for (int m = 0; m < 400; m++) {
            weft_plan *p;
            if (weft_plan_copy(base, &p))
                break;
            /* One mutation, sometimes two. */
            bool changed = mutate(p);
            if (rnd(4) == 0)
                changed |= mutate(p);
            weft_diag d;
            weft_diag_clear(&d);
            if (!changed || weft_plan_verify(p, NULL, &d) != WEFT_OK) {
                rejected += changed;
                weft_plan_free(p);
                continue;
            }
            accepted++;
            for (uint64_t seed = 1; seed <= 6; seed++) {
                bool ok = matches(p, seed * 7919 + (uint64_t)m, seed % 2 ? 1 : 2, &d);
                if (!ok) {
                    fprintf(stderr, "%s, mutant %d accepted but wrong (seed %llu): %s\n",
                            weft__good_plans[i].name, m, (unsigned long long)seed, d.msg);
                    weft_plan_write(p, stderr);
                }
                CHECK(ok);
                if (!ok)
                    break;
            }
            weft_plan_free(p);
        }
        weft_plan_free(base);
    }
    printf("mutants: %ld accepted (all exact), %ld rejected\n", accepted, rejected);
    CHECK(rejected > accepted);
    return weft_test_done();
}
