/* Real-data checks shared by the plan module's tests. */
#ifndef WEFT_PLAN_TESTEXEC_H
#define WEFT_PLAN_TESTEXEC_H

#include <stdbool.h>
#include <stdio.h>

#include "weft/plan.h"

/* Runs p on real data with seeds 1 .. seeds (default options otherwise)
 * and compares each run with the reference; prints the first difference. */
static inline bool weft__test_exec_seeds(const weft_plan *p, uint64_t seeds)
{
    for (uint64_t seed = 1; seed <= seeds; seed++) {
        weft_exec_opts o;
        weft_exec_opts_init(&o);
        o.seed = seed;
        weft_diag d;
        weft_diag_clear(&d);
        if (weft_plan_exec_check(p, &o, &d)) {
            fprintf(stderr, "exec: %s\n", d.msg);
            return false;
        }
    }
    return true;
}

#endif
