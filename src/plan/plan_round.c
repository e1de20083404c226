/* Route shares rounded to a common denominator (weft_plan_round_shares in
 * weft/plan.h): what a runtime of equal chunks (MSCCL) needs when a plan's
 * exact shares would cut every chunk into more pieces than it can take
 * (issue 14 allows at least 99.9 % of the limit there, the loss reported).
 *
 * For K = 1, 2, ... up to WEFT_ROUND_MAX_K (only divisors of `divides`
 * when that is set) every op split over several paths gets the shares
 * u_j / K of largest-remainder rounding: u_j = floor(s_j K), then the
 * units still missing (K - sum u_j, fewer than the paths) one each to the
 * paths of the largest remainders s_j K - u_j, the lower path first on a
 * tie, so the shares sum to exactly 1 and none moves by a whole 1/K. A path
 * rounded to 0 is dropped. The rounded plan's exact throughput limit
 * (weft_plan_cost_get) is compared with p's; the first K within 99.9 %
 * wins. Ops of one path, and every dep, slot and kind, are unchanged.
 *
 * Time O(K_max x (ops + path nodes)) in the worst case (a copy and a cost
 * per K tried); remainders are compared exactly in 128-bit integers. */
#include <inttypes.h>
#include <string.h>

#include "base/alloc.h"
#include "weft/plan.h"

__extension__ typedef unsigned __int128 u128;

/* The limit kept: at least KEEP_NUM / KEEP_DEN of the plan's. */
#define KEEP_NUM 999
#define KEEP_DEN 1000

typedef struct round_ctx {
    const weft_plan *p;
    uint32_t *units; /* per path of one op */
    bool *extra;
    const char **names;
    uint32_t cap, names_cap;
} round_ctx;

static weft_err grow_paths(round_ctx *c, uint32_t np)
{
    if (np <= c->cap)
        return WEFT_OK;
    uint32_t *u = weft__realloc_array(c->units, np, sizeof *u);
    if (u)
        c->units = u;
    bool *x = weft__realloc_array(c->extra, np, sizeof *x);
    if (x)
        c->extra = x;
    if (!u || !x)
        return WEFT_ENOMEM;
    c->cap = np;
    return WEFT_OK;
}

/* The units (of 1/K) of every path of op id into c->units. */
static weft_err round_op(round_ctx *c, uint32_t id, uint32_t K)
{
    uint32_t np = weft_plan_op_num_paths(c->p, id);
    if (grow_paths(c, np))
        return WEFT_ENOMEM;
    uint64_t sum = 0;
    for (uint32_t j = 0; j < np; j++) {
        weft_rat s = weft_plan_path_share(c->p, id, j);
        if (s.num <= 0 || s.den <= 0)
            return WEFT_EINVAL;
        u128 v = (u128)(uint64_t)s.num * K;
        c->units[j] = (uint32_t)(v / (uint64_t)s.den);
        c->extra[j] = false;
        sum += c->units[j];
    }
    if (sum > K)
        return WEFT_EINVAL; /* shares above 1 */
    for (uint64_t left = K - sum; left > 0; left--) {
        uint32_t best = UINT32_MAX;
        u128 bn = 0, bd = 1;
        for (uint32_t j = 0; j < np; j++) {
            if (c->extra[j])
                continue;
            weft_rat s = weft_plan_path_share(c->p, id, j);
            u128 rn = (u128)(uint64_t)s.num * K - (u128)c->units[j] * (uint64_t)s.den;
            u128 rd = (u128)(uint64_t)s.den;
            /* rn / rd > bn / bd; remainders are below 1, products fit. */
            if (best == UINT32_MAX || rn * bd > bn * rd)
                best = j, bn = rn, bd = rd;
        }
        if (best == UINT32_MAX)
            return WEFT_EINVAL; /* shares below 1 */
        c->extra[best] = true;
        c->units[best]++;
    }
    return WEFT_OK;
}

/* q (a copy of p) with op id's route replaced by the rounded shares. */
static weft_err apply_op(round_ctx *c, weft_plan *q, uint32_t id, uint32_t K)
{
    uint32_t np = weft_plan_op_num_paths(c->p, id);
    weft_plan_clear_route(q, id);
    for (uint32_t j = 0, k = 0; j < np; j++) {
        if (c->units[j] == 0)
            continue; /* rounded away */
        uint32_t n = weft_plan_path_len(c->p, id, j);
        if (n > c->names_cap) {
            const char **v = weft__realloc_array(c->names, n, sizeof *v);
            if (!v)
                return WEFT_ENOMEM;
            c->names = v, c->names_cap = n;
        }
        for (uint32_t i = 0; i < n; i++)
            c->names[i] = weft_plan_path_node(c->p, id, j, i);
        weft_rat s;
        weft_err e = weft_rat_make(c->units[j], K, &s);
        if (!e)
            e = weft_plan_add_path(q, id, s, c->names, n);
        uint32_t epoch = weft_plan_path_epoch(c->p, id, j);
        if (!e && epoch != WEFT_PLAN_NO_EPOCH)
            e = weft_plan_set_path_epoch(q, id, k, epoch);
        if (e)
            return e;
        k++;
    }
    return WEFT_OK;
}

/* The plan p with every split op rounded to multiples of 1/K into *out;
 * *changed counts the ops whose shares moved. */
static weft_err round_plan(round_ctx *c, uint32_t K, weft_plan **out, uint32_t *changed)
{
    weft_plan *q = NULL;
    weft_err e = weft_plan_copy(c->p, &q);
    *changed = 0;
    for (uint32_t id = 0, n = weft_plan_num_ops(c->p); !e && id < n; id++) {
        uint32_t np = weft_plan_op_num_paths(c->p, id);
        if (np < 2)
            continue;
        if ((e = round_op(c, id, K)))
            break;
        bool same = true;
        for (uint32_t j = 0; j < np; j++) {
            weft_rat s = weft_plan_path_share(c->p, id, j), r;
            same = same && weft_rat_make(c->units[j], K, &r) == WEFT_OK && weft_rat_eq(s, r);
        }
        if (same)
            continue;
        ++*changed;
        e = apply_op(c, q, id, K);
    }
    if (e) {
        weft_plan_free(q);
        q = NULL;
    }
    *out = q;
    return e;
}

/* loss = 1 - b / a (a > 0). */
static weft_err loss_of(weft_rat a, weft_rat b, weft_rat *loss)
{
    weft_rat q;
    weft_err e = weft_rat_div(b, a, &q);
    return e ? e : weft_rat_sub(weft_rat_int(1), q, loss);
}

weft_err weft_plan_round_shares(const weft_plan *p, const weft_topo *t, uint64_t divides,
                                weft_plan **out, weft_share_rounding *r, weft_diag *d)
{
    *out = NULL;
    memset(r, 0, sizeof *r);
    bool split = false;
    for (uint32_t id = 0, n = weft_plan_num_ops(p); id < n && !split; id++)
        split = weft_plan_op_num_paths(p, id) > 1;
    if (!split)
        return weft_diag_set(d, WEFT_EINVAL,
                             "no op of the plan is split over several paths: no share to round");
    weft_plan_cost base;
    weft_err e = weft_plan_cost_get(p, t, &base, d);
    if (e)
        return e;
    if (weft_rat_sign(base.algbw) <= 0)
        return weft_diag_set(d, WEFT_EINVAL,
                             "the plan moves nothing over the fabric: no limit "
                             "to keep while rounding its shares");
    weft_rat keep; /* 99.9 % of the limit */
    if ((e = weft_rat_mul(base.algbw, (weft_rat){KEEP_NUM, KEEP_DEN}, &keep)))
        return weft_diag_code(d, e);
    round_ctx c = {.p = p};
    uint32_t best_k = 0;
    weft_rat best = {0, 1};
    for (uint32_t K = 1; K <= WEFT_ROUND_MAX_K && !*out; K++) {
        if (divides && divides % K)
            continue;
        weft_plan *q = NULL;
        uint32_t changed = 0;
        if ((e = round_plan(&c, K, &q, &changed))) {
            e = e == WEFT_EINVAL ? weft_diag_set(d, e,
                                                 "the route shares of an op do not sum "
                                                 "to 1: nothing to round")
                                 : weft_diag_code(d, e);
            break;
        }
        weft_plan_cost cq;
        if ((e = weft_plan_cost_get(q, t, &cq, d))) {
            weft_plan_free(q);
            break;
        }
        if (best_k == 0 || weft_rat_cmp(cq.algbw, best) > 0)
            best_k = K, best = cq.algbw;
        if (weft_rat_cmp(cq.algbw, keep) >= 0) {
            *out = q;
            r->k = K;
            r->ops = changed;
            r->limit = base.algbw;
            r->rounded_limit = cq.algbw;
            if ((e = loss_of(base.algbw, cq.algbw, &r->loss))) {
                weft_diag_code(d, e);
                weft_plan_free(q);
                *out = NULL;
            }
        } else {
            weft_plan_free(q);
        }
    }
    weft__free(c.units);
    weft__free(c.extra);
    weft__free(c.names);
    if (e || *out)
        return e;
    weft_rat loss = {0, 1};
    if (best_k)
        (void)loss_of(base.algbw, best, &loss);
    return weft_diag_set(d, WEFT_ELIMIT,
                         "rounding the route shares to multiples of 1/K keeps less than 99.9%% "
                         "of the plan's limit for every K up to %u%s: the best, K = %" PRIu32
                         ", loses %.3f%%",
                         WEFT_ROUND_MAX_K, divides ? " that divides the piece" : "", best_k,
                         100.0 * weft_rat_to_double(loss));
}
