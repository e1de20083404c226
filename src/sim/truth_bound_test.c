/* Truth: the simulator is never faster than physics, and conserves bytes.
 *
 * For every plan of the classic test matrix (the algorithms x collectives x
 * fabrics of src/synth/classic_test.c), for the classic ring through the
 * symmetric path, and for the optimal plans (allgather, reducescatter,
 * allreduce, on every matrix fabric where they build), the simulated time
 * at 64 MiB, without and with pipelining, is at least the exact lower
 * bound at that size:
 *
 *   - allgather, reducescatter, allreduce: the exact bound of weft bound
 *     (T* = S / algbw*);
 *   - broadcast, reduce, alltoall (weft bound does not cover them): the
 *     single-rank cut bounds. Broadcast: the root sends S and every other
 *     rank receives S; reduce: the root receives S and every other rank
 *     sends S (its contribution to every chunk must leave it); alltoall:
 *     every rank sends and receives S (N-1)/N (S is one rank's input).
 *     Each is bytes over the rank's injection or ejection bandwidth.
 *
 * Plans are also simulated cut through (weft_sim_opts.cut_through, 1 and
 * 4 slices): streaming data through ops must not beat the bound either.
 *
 * "At least" allows 1e-9 relative for double rounding (the ring on a
 * switch meets its bound exactly). Every run also checks conservation:
 * each link carried (rates integrated over time) what the routes put on
 * it, to 1e-9.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "weft/sim.h"
#include "weft/synth.h"

static const char *const fabrics[] = {"ring:8", "switch:16", "torus:4x4", "a100:2",
                                      "dgx1",   "ring:7",    "switch:13", "switch:2",
                                      "ring:3", "h100:2",    "full:6"};
static const char *const algos[] = {"ring",     "biring", "rings:3",      "dbtree",
                                    "binomial", "hd",     "rabenseifner", "rd",
                                    "bruck",    "direct", "pairwise",     "hier"};

#define SIZE (64ull << 20)

static double node_bw(const weft_topo *t, weft_rank r, bool out)
{
    weft_node_id v = weft_topo_rank_node(t, r);
    double bw = 0;
    uint32_t first, count;
    if (out) {
        weft_topo_out_links(t, v, &first, &count);
        for (uint32_t k = 0; k < count; k++)
            bw += weft_rat_to_double(weft_topo_link_bw(t, (weft_link_id){first + k}));
    } else {
        const uint32_t *in = weft_topo_in_links(t, v, &count);
        for (uint32_t k = 0; k < count; k++)
            bw += weft_rat_to_double(weft_topo_link_bw(t, (weft_link_id){in[k]}));
    }
    return bw * 1e9;
}

/* The single-rank cut bound of a rooted collective or alltoall, seconds. */
static double trivial_bound(const weft_topo *t, weft_coll coll, uint32_t root)
{
    uint32_t n = weft_topo_num_ranks(t);
    double worst = 0;
    for (uint32_t r = 0; r < n; r++) {
        double tr = 0;
        weft_rank rk = {r};
        if (coll == WEFT_COLL_ALLTOALL) {
            double bytes = (double)SIZE * (n - 1) / n;
            tr = fmax(bytes / node_bw(t, rk, true), bytes / node_bw(t, rk, false));
        } else {
            /* broadcast: the root sends, the others receive; reduce: the
             * reverse. */
            bool sends = (coll == WEFT_COLL_BROADCAST) == (r == root);
            tr = (double)SIZE / node_bw(t, rk, sends);
        }
        worst = fmax(worst, tr);
    }
    return worst;
}

/* The lower bound on the time of coll at SIZE, seconds; 0 on failure. */
static double lower_bound(const weft_topo *t, weft_coll coll, uint32_t root)
{
    weft_bound_coll bc;
    switch (coll) {
    case WEFT_COLL_ALLGATHER:
        bc = WEFT_BOUND_ALLGATHER;
        break;
    case WEFT_COLL_REDUCESCATTER:
        bc = WEFT_BOUND_REDUCESCATTER;
        break;
    case WEFT_COLL_ALLREDUCE:
        bc = WEFT_BOUND_ALLREDUCE;
        break;
    default:
        return trivial_bound(t, coll, root);
    }
    weft_bound b;
    memset(&b, 0, sizeof b);
    weft_diag d;
    if (weft_bound_compute(t, bc, NULL, &b, &d) != WEFT_OK) {
        fprintf(stderr, "bound: %s\n", d.msg);
        return 0;
    }
    double time = (double)SIZE / (weft_rat_to_double(b.algbw) * 1e9);
    weft_bound_fini(&b);
    return time;
}

static int runs;

/* Simulates p (or, when p is NULL, the classic ring through the symmetric
 * path) with 1 and 4 slices, a plan also cut through, and checks both
 * properties. */
static void check_runs(const weft_topo *t, const char *what, const weft_plan *p, weft_coll coll,
                       const uint32_t *ring, double bound)
{
    static const uint32_t slices[] = {1, 4, 1, 4};
    for (size_t k = 0; k < (p ? 4u : 2u); k++) {
        weft_sim_opts o;
        weft_sim_opts_init(&o);
        o.slices = slices[k];
        o.cut_through = k >= 2;
        weft_sim_result r;
        weft_diag d;
        weft_err e = p ? weft_sim_plan(t, p, SIZE, &o, &r, &d)
                       : weft_sim_ring_order(t, coll, ring, SIZE, &o, &r, &d);
        CHECK_ERR(e, WEFT_OK);
        if (e) {
            fprintf(stderr, "%s: %s\n", what, d.msg);
            continue;
        }
        runs++;
        if (!(r.time_s >= bound * (1 - 1e-9)))
            fprintf(stderr, "%s, %u slices%s: simulated %.9g s is faster than the bound %.9g s\n",
                    what, slices[k], o.cut_through ? ", cut through" : "", r.time_s, bound);
        CHECK(r.time_s >= bound * (1 - 1e-9));
        if (!(r.conservation_err <= 1e-9))
            fprintf(stderr, "%s: conservation error %g\n", what, r.conservation_err);
        CHECK(r.conservation_err <= 1e-9);
    }
}

int main(void)
{
    int plans = 0, optimal = 0;
    for (size_t f = 0; f < sizeof fabrics / sizeof *fabrics; f++) {
        weft_topo *t = NULL;
        weft_diag d;
        CHECK_ERR(weft_topo_from_spec(fabrics[f], NULL, &t, &d), WEFT_OK);
        if (!t)
            continue;
        uint32_t n = weft_topo_num_ranks(t);
        char what[160];
        for (int c = 0; c < WEFT__COLL_COUNT; c++) {
            uint32_t root = weft_coll_has_root((weft_coll)c) ? n / 2 + 1 : 0;
            root %= n;
            double bound = lower_bound(t, (weft_coll)c, root);
            CHECK(bound > 0);
            for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
                if (!weft_classic_supports(algos[a], (weft_coll)c))
                    continue;
                weft_plan *p = NULL;
                weft_err e =
                    weft_synth_classic(t, algos[a], (weft_coll)c, (weft_rank){root}, &p, &d);
                if (e == WEFT_ETOPO)
                    continue; /* hier on a fabric without equal hosts */
                CHECK_ERR(e, WEFT_OK);
                if (e)
                    continue;
                snprintf(what, sizeof what, "%s %s %s", fabrics[f], algos[a],
                         weft_coll_name((weft_coll)c));
                check_runs(t, what, p, (weft_coll)c, NULL, bound);
                weft_plan_free(p);
                plans++;
            }
            if (c == WEFT_COLL_ALLGATHER || c == WEFT_COLL_REDUCESCATTER ||
                c == WEFT_COLL_ALLREDUCE) {
                uint32_t *order = malloc(n * sizeof *order);
                CHECK_ERR(weft_classic_ring_order(t, order, &d), WEFT_OK);
                snprintf(what, sizeof what, "%s ring (symmetric path) %s", fabrics[f],
                         weft_coll_name((weft_coll)c));
                check_runs(t, what, NULL, (weft_coll)c, order, bound);
                free(order);
                weft_plan *p = NULL;
                weft_err e = weft_synth_optimal(t, (weft_coll)c, NULL, &p, NULL, &d);
                if (e == WEFT_OK) {
                    snprintf(what, sizeof what, "%s optimal %s", fabrics[f],
                             weft_coll_name((weft_coll)c));
                    check_runs(t, what, p, (weft_coll)c, NULL, bound);
                    weft_plan_free(p);
                    optimal++;
                } else {
                    /* Only an unbalanced switch may stop it (dgx1 has
                     * none, so every matrix fabric should build). */
                    fprintf(stderr, "%s optimal %s not built: %s\n", fabrics[f],
                            weft_coll_name((weft_coll)c), d.msg);
                    CHECK_ERR(e, WEFT_ETOPO);
                }
            }
        }
        weft_topo_free(t);
    }
    printf("truth_bound: %d classic plans, %d optimal plans, %d runs\n", plans, optimal, runs);
    CHECK(plans > 300);
    CHECK_INT(optimal, 3 * (int)(sizeof fabrics / sizeof *fabrics));
    return weft_test_done();
}
