/* `weft sim --algo ring` and `weft plan --algo ring` are one ring: the
 * classic ring plan (weft_synth_classic "ring") is checked op by op to be
 * exactly the ring over weft_classic_ring_order (every step moves one
 * chunk from each position to the next; step s of position p depends on
 * step s-1 of position p-1, and any other dep of it is an ancestor of that
 * one, so it never changes a release time), and simulating the plan op by
 * op gives the time of the symmetry-reduced weft_sim_ring_order, on every
 * fabric of the classic test matrix: in the fluid model (pipelined, with
 * alpha) and in the runtime model, whose streams queue a position's slices
 * FIFO (the ring path's queue deps against weft_sim_plan's stream_fifo),
 * at sizes of one slice and of several. */
#include <math.h>
#include <stdlib.h>

#include "base/testing.h"
#include "weft/sim.h"
#include "weft/synth.h"

static const char *const fabrics[] = {"ring:8", "switch:16", "torus:4x4", "a100:2",
                                      "dgx1",   "ring:7",    "switch:13", "switch:2",
                                      "ring:3", "h100:2",    "full:6"};

/* Is (s2, p2) an ancestor of (s, p) in the ring's dependency chain, which
 * goes (s, p) -> (s-1, p-1) -> ... ? */
static bool ring_ancestor(uint32_t s, uint32_t p, uint32_t s2, uint32_t p2, uint32_t n)
{
    return s2 < s && (p + n - p2) % n == (s - s2) % n;
}

/* NULL when plan p is the ring over order with `steps` steps; otherwise
 * what differs. */
static const char *ring_mismatch(const weft_plan *p, const uint32_t *order, uint32_t n,
                                 uint32_t steps)
{
    if (weft_plan_num_ops(p) != steps * n)
        return "op count";
    if (weft_plan_size_chunks(p) != n)
        return "chunk count (a ring moves size/N per step)";
    for (uint32_t s = 0; s < steps; s++) {
        for (uint32_t q = 0; q < n; q++) {
            uint32_t id = s * n + q;
            weft_op op = weft_plan_op(p, id);
            if (op.src_rank.v != order[q] || op.dst_rank.v != order[(q + 1) % n])
                return "op endpoints";
            if (op.count != 1 || op.kind == WEFT_OP_NOP || weft_plan_op_num_paths(p, id))
                return "op size, kind or route";
            uint32_t nd;
            const uint32_t *deps = weft_plan_op_deps(p, id, &nd);
            bool pred = false;
            for (uint32_t k = 0; k < nd; k++) {
                uint32_t s2 = deps[k] / n, q2 = deps[k] % n;
                if (s2 + 1 == s && q2 == (q + n - 1) % n)
                    pred = true;
                else if (!ring_ancestor(s, q, s2, q2, n))
                    return "a dep the ring does not imply";
            }
            if (pred != (s > 0))
                return "the dep on the previous position";
        }
    }
    return NULL;
}

static bool close_rel(double a, double b, double tol)
{
    return fabs(a - b) <= tol * fabs(b);
}

static int check_fabric(const char *spec)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_from_spec(spec, NULL, &t, &d), WEFT_OK);
    if (!t)
        return 0;
    uint32_t n = weft_topo_num_ranks(t);
    uint32_t *order = malloc(n * sizeof *order);
    CHECK_ERR(weft_classic_ring_order(t, order, &d), WEFT_OK);
    const weft_coll colls[] = {WEFT_COLL_ALLGATHER, WEFT_COLL_REDUCESCATTER, WEFT_COLL_ALLREDUCE};
    int cases = 0;
    for (size_t c = 0; c < 3; c++) {
        weft_plan *p = NULL;
        CHECK_ERR(weft_synth_classic(t, "ring", colls[c], (weft_rank){0}, &p, &d), WEFT_OK);
        if (!p)
            continue;
        uint32_t steps = colls[c] == WEFT_COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
        const char *why = ring_mismatch(p, order, n, steps);
        if (why)
            fprintf(stderr, "%s %s: the classic ring plan differs from the ring: %s\n", spec,
                    weft_coll_name(colls[c]), why);
        CHECK(why == NULL);
        /* Pipelined, with alpha and an uneven size, so that every part of
         * the model is exercised. */
        weft_sim_opts o;
        weft_sim_opts_init(&o);
        o.slices = 3;
        o.alpha_s = 2e-6;
        uint64_t size = (uint64_t)n * 1000003;
        weft_sim_result rp, rr;
        CHECK_ERR(weft_sim_plan(t, p, size, &o, &rp, &d), WEFT_OK);
        CHECK_ERR(weft_sim_ring_order(t, colls[c], order, size, &o, &rr, &d), WEFT_OK);
        if (!close_rel(rp.time_s, rr.time_s, 1e-12))
            fprintf(stderr, "%s %s: plan %.17g s, ring %.17g s\n", spec, weft_coll_name(colls[c]),
                    rp.time_s, rr.time_s);
        CHECK(close_rel(rp.time_s, rr.time_s, 1e-12));
        CHECK(rp.n_busiest > 0 && rr.n_busiest > 0);
        if (rp.n_busiest > 0 && rr.n_busiest > 0)
            CHECK(close_rel(rp.busiest[0].util, rr.busiest[0].util, 1e-9));
        CHECK_INT(rp.transfers, rr.transfers);
        /* The runtime model: 1 slice (64 KiB chunks) and 4 slices of 256
         * KiB (1 MiB chunks, plus 3 bytes a chunk: uneven). */
        weft_sim_opts_init(&o);
        o.model = WEFT_SIM_RUNTIME;
        const uint64_t chunk[] = {64 << 10, (1 << 20) + 3};
        for (size_t k = 0; k < 2; k++) {
            size = (uint64_t)n * chunk[k];
            CHECK_ERR(weft_sim_plan(t, p, size, &o, &rp, &d), WEFT_OK);
            CHECK_ERR(weft_sim_ring_order(t, colls[c], order, size, &o, &rr, &d), WEFT_OK);
            if (!close_rel(rp.time_s, rr.time_s, 1e-9))
                fprintf(stderr, "%s %s runtime, %llu bytes: plan %.17g s, ring %.17g s\n", spec,
                        weft_coll_name(colls[c]), (unsigned long long)size, rp.time_s, rr.time_s);
            CHECK(close_rel(rp.time_s, rr.time_s, 1e-9));
            CHECK_INT(rp.slices, k ? 4 : 1);
            CHECK_INT(rr.slices, rp.slices);
            CHECK_INT(rp.transfers, rr.transfers);
        }
        weft_plan_free(p);
        cases++;
    }
    free(order);
    weft_topo_free(t);
    return cases;
}

int main(void)
{
    int cases = 0;
    for (size_t f = 0; f < sizeof fabrics / sizeof *fabrics; f++)
        cases += check_fabric(fabrics[f]);
    CHECK_INT(cases, 3 * (int)(sizeof fabrics / sizeof *fabrics));

    /* The order a100:2's ring follows: box 0 in rank order, then box 1
     * entered on the rail box 0 left by (local 7), so one crossing stays
     * on rail 7. */
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_from_spec("a100:2", NULL, &t, &d), WEFT_OK);
    uint32_t order[16];
    CHECK_ERR(weft_classic_ring_order(t, order, &d), WEFT_OK);
    const uint32_t want[16] = {0, 1, 2, 3, 4, 5, 6, 7, 15, 8, 9, 10, 11, 12, 13, 14};
    for (int i = 0; i < 16; i++)
        CHECK_INT(order[i], want[i]);

    /* A bad order is refused, naming the position. */
    order[3] = 2;
    weft_sim_result r;
    CHECK_ERR(weft_sim_ring_order(t, WEFT_COLL_ALLREDUCE, order, 1 << 20, NULL, &r, &d),
              WEFT_EINVAL);
    CHECK_STR(d.msg, "sim: ring order position 3: rank 2 appears twice");
    order[3] = 16;
    CHECK_ERR(weft_sim_ring_order(t, WEFT_COLL_ALLREDUCE, order, 1 << 20, NULL, &r, &d),
              WEFT_EINVAL);
    CHECK_STR(d.msg, "sim: ring order position 3: rank 16 is not a rank");
    weft_topo_free(t);

    CHECK_ERR(weft_topo_from_spec("switch:1", NULL, &t, &d), WEFT_OK);
    CHECK_ERR(weft_classic_ring_order(t, order, &d), WEFT_ETOPO);
    CHECK_STR(d.msg, "ring needs at least 2 ranks, the fabric has 1");
    weft_topo_free(t);
    return weft_test_done();
}
