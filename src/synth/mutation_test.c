/* Mutation test of the verifier against the real-data executor.
 *
 * For every classic algorithm x collective, at least 1,000 random single
 * mutations of its plans on several fabrics: drop an op, drop a
 * dependency, swap source and destination, change a chunk, turn copy into
 * reduce or back. Each mutant must be either rejected by the verifier or,
 * when accepted, give exactly the reference result in the executor under
 * several execution orders. A mutant that is accepted and wrong is a
 * verifier bug. */
#include <stdlib.h>

#include "base/testing.h"
#include "weft/synth.h"

#define MUTANTS_PER_COMBO 1000

static const char *const fabrics[] = {"switch:6", "ring:5", "a100:1", "clos:hosts=3,gpus=2,nics=2"};
static const char *const algos[] = {"ring",     "biring", "rings:3",      "dbtree",
                                    "binomial", "hd",     "rabenseifner", "rd",
                                    "bruck",    "direct", "pairwise",     "hier"};
static const char *const kinds[] = {"drop op", "drop dep", "swap src/dst", "change chunk",
                                    "copy<->reduce"};

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? (uint32_t)(rng % n) : 0;
}

/* Applies mutation `kind` to a random op of m; false when it does not
 * apply to this plan (the caller draws again). */
static bool mutate(weft_plan *m, int kind)
{
    uint32_t nops = weft_plan_num_ops(m);
    if (!nops)
        return false;
    uint32_t id = rnd(nops);
    weft_op op = weft_plan_op(m, id);
    switch (kind) {
    case 0:
        return weft_plan_remove_op(m, id) == WEFT_OK;
    case 1: {
        uint32_t nd;
        weft_plan_op_deps(m, id, &nd);
        return nd && weft_plan_remove_dep(m, id, rnd(nd)) == WEFT_OK;
    }
    case 2: {
        if (op.kind == WEFT_OP_NOP)
            return false;
        weft_op s = op;
        s.src_rank = op.dst_rank;
        s.dst_rank = op.src_rank;
        s.src_buf = op.dst_buf;
        s.dst_buf = op.src_buf;
        s.src_index = op.dst_index;
        s.dst_index = op.src_index;
        return weft_plan_set_op(m, id, &s) == WEFT_OK;
    }
    case 3: {
        if (op.kind == WEFT_OP_NOP)
            return false;
        uint32_t slots = weft_plan_buf_slots(m, op.dst_buf);
        uint32_t delta = 1 + rnd(slots > 1 ? slots - 1 : 1);
        switch (rnd(3)) {
        case 0:
            op.src_index = (op.src_index + delta) % weft_plan_buf_slots(m, op.src_buf);
            break;
        case 1:
            op.dst_index = (op.dst_index + delta) % slots;
            break;
        default:
            op.src_index = (op.src_index + delta) % weft_plan_buf_slots(m, op.src_buf);
            op.dst_index = (op.dst_index + delta) % slots;
            break;
        }
        return weft_plan_set_op(m, id, &op) == WEFT_OK;
    }
    default:
        if (op.kind == WEFT_OP_NOP)
            return false;
        op.kind = op.kind == WEFT_OP_COPY ? WEFT_OP_REDUCE : WEFT_OP_COPY;
        return weft_plan_set_op(m, id, &op) == WEFT_OK;
    }
}

/* True when the mutant gives the reference result in every order tried. */
static bool exec_matches(const weft_plan *m)
{
    weft_exec_result *want = NULL;
    weft_diag d;
    if (weft_exec_reference(m, 2, &want))
        return false;
    bool ok = true;
    for (uint64_t seed = 1; ok && seed <= 4; seed++) {
        weft_exec_opts o;
        weft_exec_opts_init(&o);
        o.elems_per_chunk = 2;
        o.seed = seed * 7919;
        weft_exec_result *got = NULL;
        ok = weft_plan_exec(m, &o, &got, &d) == WEFT_OK && weft_exec_compare(got, want, &d);
        weft_exec_result_free(got);
    }
    weft_exec_result_free(want);
    return ok;
}

int main(void)
{
    weft_topo *topos[sizeof fabrics / sizeof *fabrics];
    for (size_t f = 0; f < sizeof fabrics / sizeof *fabrics; f++) {
        weft_diag d;
        topos[f] = NULL;
        CHECK_ERR(weft_topo_from_spec(fabrics[f], NULL, &topos[f], &d), WEFT_OK);
        if (!topos[f])
            return weft_test_done();
    }
    long total = 0, rejected = 0, accepted_correct = 0, accepted_wrong = 0;
    long by_kind[5][2] = {{0}};
    for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
        for (int c = 0; c < WEFT__COLL_COUNT; c++) {
            if (!weft_classic_supports(algos[a], (weft_coll)c))
                continue;
            weft_plan *base[sizeof fabrics / sizeof *fabrics] = {NULL};
            size_t nbase = 0;
            for (size_t f = 0; f < sizeof fabrics / sizeof *fabrics; f++) {
                weft_diag d;
                weft_plan *p = NULL;
                if (weft_synth_classic(topos[f], algos[a], (weft_coll)c, (weft_rank){1}, &p, &d))
                    continue; /* hier on hostless fabrics */
                CHECK_ERR(weft_plan_verify(p, topos[f], &d), WEFT_OK);
                base[nbase++] = p;
            }
            CHECK(nbase > 0);
            long combo = 0, combo_rejected = 0;
            while (nbase && combo < MUTANTS_PER_COMBO) {
                weft_plan *m = NULL;
                if (weft_plan_copy(base[combo % nbase], &m))
                    break;
                int kind = (int)rnd(5);
                if (!mutate(m, kind)) {
                    weft_plan_free(m);
                    continue;
                }
                combo++;
                weft_diag d;
                if (weft_plan_verify(m, NULL, &d) != WEFT_OK) {
                    combo_rejected++;
                    by_kind[kind][0]++;
                } else if (exec_matches(m)) {
                    accepted_correct++;
                    by_kind[kind][1]++;
                } else {
                    accepted_wrong++;
                    fprintf(stderr, "%s %s: mutant (%s) accepted but wrong\n", algos[a],
                            weft_coll_name((weft_coll)c), kinds[kind]);
                    weft_plan_write(m, stderr);
                }
                weft_plan_free(m);
            }
            CHECK(combo >= MUTANTS_PER_COMBO);
            total += combo;
            rejected += combo_rejected;
            for (size_t i = 0; i < nbase; i++)
                weft_plan_free(base[i]);
        }
    }
    printf("mutants: %ld, rejected by the verifier: %ld, accepted and correct: %ld, accepted and "
           "wrong: %ld\n",
           total, rejected, accepted_correct, accepted_wrong);
    for (int k = 0; k < 5; k++)
        printf("  %-14s rejected %ld, accepted and correct %ld\n", kinds[k], by_kind[k][0],
               by_kind[k][1]);
    CHECK_INT(accepted_wrong, 0);
    CHECK(rejected > total / 2);
    for (size_t f = 0; f < sizeof fabrics / sizeof *fabrics; f++)
        weft_topo_free(topos[f]);
    return weft_test_done();
}
