/* Ring collectives against the alpha-beta closed forms, the symmetry
 * reduction against the unreduced simulation, pipelining, determinism and
 * errors. */
#include <math.h>
#include <stdlib.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "weft/sim.h"

/* steps x (alpha + hop latency + size/N/B). */
static double closed_form(weft_coll coll, uint32_t n, double size, double bw, double lat,
                          double alpha)
{
    double steps = coll == WEFT_COLL_ALLREDUCE ? 2.0 * (n - 1) : n - 1;
    return steps * (alpha + lat + size / n / bw);
}

static void test_closed_forms(void)
{
    const weft_coll colls[] = {WEFT_COLL_ALLREDUCE, WEFT_COLL_ALLGATHER, WEFT_COLL_REDUCESCATTER};
    const uint32_t sizes[] = {2, 5, 8, 64};
    const double bw = 25e9, lat = 1e-6, alpha = 2e-6;
    for (int kind = 0; kind < 2; kind++)
        for (size_t i = 0; i < 4; i++) {
            char spec[64];
            uint32_t n = sizes[i];
            snprintf(spec, sizeof spec, "%s:%u,bw=25,lat=1us", kind ? "switch" : "ring", n);
            weft_topo *t = weft__test_topo_spec(spec);
            CHECK(t != NULL);
            if (!t)
                continue;
            /* Through a switch a hop is two links, each with the latency. */
            double hop_lat = kind ? 2 * lat : lat;
            for (size_t c = 0; c < 3; c++) {
                weft_sim_opts o;
                weft_sim_opts_init(&o);
                o.alpha_s = alpha;
                weft_sim_result r;
                uint64_t size = 3u << 20;
                CHECK_ERR(weft_sim_ring(t, colls[c], size, &o, &r, NULL), WEFT_OK);
                double want = closed_form(colls[c], n, (double)size, bw, hop_lat, alpha);
                CHECK_REL(r.time_s, want, 1e-9);
                CHECK_REL(r.algbw_gbps, size / want / 1e9, 1e-9);
                CHECK_REL(r.busbw_gbps, r.algbw_gbps * weft_sim_busbw_factor(colls[c], n), 1e-15);
                /* Every rank and every used link behaves alike (through a
                 * switch, up and down links carry one transfer each). */
                CHECK_INT(r.flow_classes, 1);
                CHECK_INT(r.link_classes, 1);
                CHECK(r.conservation_err < 1e-12);
                /* Each link carries steps x size/N bytes. */
                double steps = colls[c] == WEFT_COLL_ALLREDUCE ? 2.0 * (n - 1) : n - 1;
                CHECK(r.n_busiest >= 1);
                CHECK_REL(r.busiest[0].bytes, steps * size / n, 1e-12);
                CHECK_INT(r.busiest[0].count, kind ? 2 * n : n);
                CHECK_INT(r.transfers, (uint64_t)steps * n);
                /* Unreduced (the general engine on every transfer): the
                 * same time up to rounding (the reduced ring runs on the
                 * server simulator, which divides where the engine sums). */
                o.symmetry = false;
                weft_sim_result u;
                CHECK_ERR(weft_sim_ring(t, colls[c], size, &o, &u, NULL), WEFT_OK);
                CHECK_REL(u.time_s, r.time_s, 1e-12);
                CHECK_INT(u.flow_classes, n);
                CHECK_INT(u.flows, (uint64_t)steps * n);
            }
            weft_topo_free(t);
        }
}

/* With P slices the ring advances in anti-diagonal wavefronts of
 * (step, slice) pairs that share each link fairly, so the link is never
 * idle: time = bytes per link / B + (steps + P - 1)(alpha + latency). */
static void test_pipelined(void)
{
    weft_topo *t = weft__test_topo_spec("ring:6,bw=50,lat=500ns");
    if (!t)
        return;
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    o.alpha_s = 1e-6;
    o.slices = 4;
    weft_sim_result r;
    uint64_t size = 6u << 20;
    CHECK_ERR(weft_sim_ring(t, WEFT_COLL_ALLREDUCE, size, &o, &r, NULL), WEFT_OK);
    double steps = 10, want = steps * size / 6 / 50e9 + (steps + 4 - 1) * (1e-6 + 500e-9);
    CHECK_REL(r.time_s, want, 1e-9);
    CHECK_INT(r.transfers, 10 * 6 * 4);
    CHECK_INT(r.flows, 10 * 4);
    weft_topo_free(t);
}

/* A two-level GPU fabric: NVLink inside a host, NICs between hosts. The
 * ring hops differ (7 of 8 stay in the host), so there are several classes,
 * and the reduced simulation must equal the full one. */
static void test_heterogeneous(void)
{
    weft_topo *t = weft__test_topo_spec("h100:4");
    if (!t)
        return;
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    o.alpha_s = 1e-6;
    o.slices = 2;
    weft_sim_result r, u, again;
    CHECK_ERR(weft_sim_ring(t, WEFT_COLL_ALLREDUCE, 64u << 20, &o, &r, NULL), WEFT_OK);
    CHECK(r.flow_classes > 1);
    CHECK(r.flow_classes < 32);
    o.symmetry = false;
    CHECK_ERR(weft_sim_ring(t, WEFT_COLL_ALLREDUCE, 64u << 20, &o, &u, NULL), WEFT_OK);
    CHECK_INT(u.flow_classes, 32);
    CHECK_REL(r.time_s, u.time_s, 1e-12);
    CHECK(r.conservation_err < 1e-9 && u.conservation_err < 1e-9);
    /* Determinism: two runs, bit-identical results. */
    CHECK_ERR(weft_sim_ring(t, WEFT_COLL_ALLREDUCE, 64u << 20, &o, &again, NULL), WEFT_OK);
    CHECK(memcmp(&again.time_s, &u.time_s, sizeof(double)) == 0);
    CHECK(memcmp(again.busiest, u.busiest, sizeof u.busiest) == 0);
    weft_topo_free(t);
}

static void test_errors(void)
{
    weft_topo *t = weft__test_topo_spec("ring:4");
    if (!t)
        return;
    weft_sim_result r;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_sim_ring(t, WEFT_COLL_BROADCAST, 1024, NULL, &r, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "sim: the ring algorithm does not do broadcast");
    CHECK_ERR(weft_sim_ring(t, WEFT_COLL_ALLREDUCE, 0, NULL, &r, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "sim: size and slices must be > 0, alpha >= 0");
    weft_topo_free(t);
    /* A fabric where one ring hop has no path. */
    weft_topo_builder *b;
    CHECK_ERR(weft_topo_builder_new(&b), WEFT_OK);
    weft_node_id g0, g1, g2;
    weft_rat bw = weft_rat_int(10), z = weft_rat_int(0);
    weft_topo_builder_add_node(b, "g0", WEFT_NODE_COMPUTE, NULL, &g0);
    weft_topo_builder_add_node(b, "g1", WEFT_NODE_COMPUTE, NULL, &g1);
    weft_topo_builder_add_node(b, "g2", WEFT_NODE_COMPUTE, NULL, &g2);
    weft_topo_builder_add_link(b, g0, g1, bw, z);
    weft_topo_builder_add_link(b, g1, g2, bw, z);
    CHECK_ERR(weft_topo_build(b, &t, NULL), WEFT_OK);
    CHECK_ERR(weft_sim_ring(t, WEFT_COLL_ALLGATHER, 1024, NULL, &r, &d), WEFT_ETOPO);
    CHECK_STR(d.msg, "no path from g2 to g0");
    weft_topo_free(t);
}

/* Two 2-rank rings whose every hop crosses one spine (two leaf switches, 4
 * GB/s between them, 100 GB/s to the ranks): alone, a ring's allreduce is
 * two steps of S/2 at 4 GB/s; together the two share the spine and each
 * step takes twice as long. A ring whose hops stay under one leaf does not
 * slow the others down. Errors name the position. */
static void test_concurrent(void)
{
    weft_topo *t = weft__test_topo_text("node g0 compute\nnode g1 compute\n"
                                        "node g2 compute\nnode g3 compute\n"
                                        "node a switch\nnode b switch\n"
                                        "duplex g0 a 100GB/s\nduplex g1 a 100GB/s\n"
                                        "duplex g2 b 100GB/s\nduplex g3 b 100GB/s\n"
                                        "duplex a b 4GB/s\n");
    CHECK(t != NULL);
    if (!t)
        return;
    const uint64_t size = 8u << 20;
    const double hop = (double)size / 2 / 4e9 + (double)size / 2 / 100e9;
    weft_sim_result r;
    const uint32_t one[2] = {0, 2}, two[4] = {0, 2, 1, 3}, local[4] = {0, 1, 2, 3};
    CHECK_ERR(weft_sim_rings(t, WEFT_COLL_ALLREDUCE, one, 2, 2, size, NULL, &r, NULL), WEFT_OK);
    double alone = r.time_s;
    CHECK_REL(alone, 2 * ((double)size / 2 / 4e9), 1e-9);
    CHECK(alone < 2 * hop);
    CHECK_ERR(weft_sim_rings(t, WEFT_COLL_ALLREDUCE, two, 4, 2, size, NULL, &r, NULL), WEFT_OK);
    CHECK_REL(r.time_s, 2 * alone, 1e-9);
    CHECK_INT(r.ranks, 2);
    CHECK_INT(r.transfers, 4 * 2);
    CHECK_ERR(weft_sim_rings(t, WEFT_COLL_ALLREDUCE, local, 4, 2, size, NULL, &r, NULL), WEFT_OK);
    CHECK_REL(r.time_s, 2 * ((double)size / 2 / 100e9), 1e-9);
    weft_diag d;
    const uint32_t twice[4] = {0, 0, 1, 3}, far[2] = {0, 9};
    CHECK_ERR(weft_sim_rings(t, WEFT_COLL_ALLREDUCE, twice, 4, 2, size, NULL, &r, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "sim: ring order position 1: rank 0 appears twice");
    CHECK_ERR(weft_sim_rings(t, WEFT_COLL_ALLREDUCE, far, 2, 2, size, NULL, &r, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "sim: ring order position 1: rank 9 is not a rank");
    CHECK_ERR(weft_sim_rings(t, WEFT_COLL_ALLREDUCE, two, 3, 2, size, NULL, &r, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "sim: 3 positions are not rings of 2");
    weft_topo_free(t);
}

int main(void)
{
    test_concurrent();
    test_closed_forms();
    test_pipelined();
    test_heterogeneous();
    test_errors();
    return weft_test_done();
}
