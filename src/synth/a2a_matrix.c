/* weft_synth_a2a_matrix (weft/synth.h): an alltoallv as one direct copy per
 * nonzero off-diagonal entry of its matrix, sender by sender and within a
 * sender receiver by receiver (ascending), then a local copy for each rank
 * that keeps bytes, no deps: every pair's bytes at once over the fabric, as
 * the step's embedding and MoE all-to-alls run. Moved here from work/comm.c
 * (issue 29: the step asks synth for its plans), which left the local
 * blocks out (the plan did not verify with a nonzero diagonal); the remote
 * ops keep their order, and a local copy crosses no link, so the step's
 * simulated times are the same to the bit (checked on DLRM and MoE steps). */
#include "weft/synth.h"
#include "weft/traffic.h"

weft_err weft_synth_a2a_matrix(const weft_traffic *m, weft_plan **out, weft_diag *d)
{
    *out = NULL;
    if (!m || !m->ranks)
        return weft_diag_set(d, WEFT_EINVAL, "a2a matrix: no traffic matrix");
    weft_plan_info info = {WEFT_COLL_ALLTOALL, m->ranks, {0}, 1, 0, false};
    weft_plan *p = NULL;
    weft_err err = weft_plan_new(&info, &p);
    if (err)
        return weft_diag_code(d, err);
    bool any = false;
    for (uint32_t a = 0; a < m->ranks && !err; a++)
        for (uint32_t b = 0; b < m->ranks && !err; b++) {
            if (a == b || !weft_traffic_at(m, a, b))
                continue;
            any = true;
            weft_op op = {WEFT_OP_COPY, {a}, {b}, WEFT_BUF_IN, WEFT_BUF_OUT, b, a, 1, 0};
            err = weft_plan_add_op(p, &op, NULL, 0, NULL);
        }
    /* What stays on a rank: a local copy each, after the others (a plan
     * delivers every block; the copies cross no link). */
    for (uint32_t a = 0; a < m->ranks && !err && any; a++)
        if (weft_traffic_at(m, a, a)) {
            weft_op op = {WEFT_OP_COPY, {a}, {a}, WEFT_BUF_IN, WEFT_BUF_OUT, a, a, 1, 0};
            err = weft_plan_add_op(p, &op, NULL, 0, NULL);
        }
    if (err)
        weft_diag_code(d, err);
    else if (!any)
        err = weft_diag_set(d, WEFT_EINVAL, "a2a matrix: nothing to send between distinct ranks");
    else
        err = weft_plan_set_traffic(p, m, d);
    if (err) {
        weft_plan_free(p);
        return err;
    }
    *out = p;
    return WEFT_OK;
}
