/* In-network reduction on the flow engine (weft_sim_innet): the flows NVLS
 * moves on h100:1, against the hand-computed time. */
#include <math.h>
#include <string.h>

#include "base/testing.h"
#include "weft/sim.h"

static weft_topo *preset(const char *spec)
{
    weft_topo *t = NULL;
    weft_diag d;
    if (weft_topo_preset(spec, &t, &d))
        fprintf(stderr, "%s: %s\n", spec, d.msg);
    return t;
}

static double run(const char *spec, weft_coll coll, weft_sim_innet_algo a, uint64_t size,
                  weft_sim_model model, weft_sim_result *r)
{
    weft_topo *t = preset(spec);
    weft_sim_opts o;
    weft_diag d;
    weft_sim_opts_init(&o);
    o.model = model;
    memset(r, 0, sizeof *r);
    weft_err e = t ? weft_sim_innet(t, coll, a, NULL, 0, 0, size, &o, r, &d) : WEFT_EINVAL;
    if (e)
        fprintf(stderr, "%s: %s\n", spec, d.msg);
    CHECK_ERR(e, WEFT_OK);
    weft_topo_free(t);
    return r->time_s;
}

int main(void)
{
    weft_sim_result r;
    const double S = 1073741824.0, L = 300e-9, B = 450e9;
    /* NVLS allreduce on h100:1, fluid: every GPU <-> NVSwitch link carries
     * S x 9/8 each way (8 pieces read by ld_reduce and one st up; one
     * reduced piece and 8 multicast down), all 16 alike; four stages of
     * 300 ns links pipelined, so the time is 9S / 8B plus between 3 and 4
     * link latencies (the stages cut through). 144 flows: 64 reads, 8
     * sums, 8 stores, 64 multicasts. */
    double t =
        run("h100:1", WEFT_COLL_ALLREDUCE, WEFT_SIM_INNET_NVLS, (uint64_t)S, WEFT_SIM_FLUID, &r);
    double bw_time = S * 9 / 8 / B;
    CHECK(t >= bw_time + 3 * L && t <= bw_time + 4 * L);
    printf("h100:1 nvls allreduce 1 GiB, fluid: %.9f s (9S/8B = %.9f), busbw %.3f GB/s\n", t,
           bw_time, r.busbw_gbps);
    CHECK_INT(r.flows, 144);
    CHECK_INT(r.n_busiest, 1);
    CHECK_INT(r.busiest[0].count, 16);
    CHECK(r.busiest[0].bytes == S * 9 / 8);
    CHECK(r.conservation_err < 1e-9);
    /* Allgather and reducescatter: one stage each side, S on the busy
     * direction: exactly S / B + 2 L. */
    t = run("h100:1", WEFT_COLL_ALLGATHER, WEFT_SIM_INNET_NVLS, (uint64_t)S, WEFT_SIM_FLUID, &r);
    CHECK(fabs(t - (S / B + 2 * L)) < 1e-15);
    t = run("h100:1", WEFT_COLL_REDUCESCATTER, WEFT_SIM_INNET_NVLS, (uint64_t)S, WEFT_SIM_FLUID,
            &r);
    CHECK(fabs(t - (S / B + 2 * L)) < 1e-15);
    /* The gpu model: links at NCCL's 0.824 (18 x 20.6 / 450) and NVLS's
     * 0.85, NCCL's 25 us NVLS latency, and each route's NVLink hop. */
    {
        weft_topo *h = preset("h100:1");
        weft_sim_opts o, res;
        weft_diag d;
        weft_sim_opts_init(&o);
        o.model = WEFT_SIM_GPU;
        CHECK_ERR(weft_sim_opts_resolve(&o, h, WEFT_COLL_ALLREDUCE, (uint64_t)S, (uint64_t)S / 8,
                                        &res, &d),
                  WEFT_OK);
        weft_topo_free(h);
        double Bg = 450e9 * res.intra_eff * 0.85, hop = L + res.hop_s;
        t = run("h100:1", WEFT_COLL_ALLREDUCE, WEFT_SIM_INNET_NVLS, (uint64_t)S, WEFT_SIM_GPU, &r);
        double base = S * 9 / 8 / Bg + 25e-6;
        CHECK(fabs(res.intra_eff - 20.6 / 25) < 1e-12);
        CHECK(t >= base + 3 * hop && t <= base + 4 * hop);
        CHECK_INT(r.proto, 2);
        printf("h100:1 nvls allreduce 1 GiB, gpu: busbw %.3f GB/s (bound 2 x 7/9 x %.2f = %.3f)\n",
               r.busbw_gbps, Bg / 1e9, 14.0 / 9 * Bg / 1e9);
        CHECK(r.busbw_gbps < 14.0 / 9 * Bg / 1e9 && r.busbw_gbps > 0.985 * 14.0 / 9 * Bg / 1e9);
    }
    /* Across hosts: NVLS-tree on h100:2. The NICs carry S/8 each way at
     * 50 GB/s (2.7 ms), NVLink S x 9/8 at 450 x 0.824 x 0.85 GB/s (3.8
     * ms); in the gpu model NCCL's per-channel ceiling (57.7 GB/s of bus
     * bandwidth on 2 Hopper hosts, data x 30/16) holds each head's S/8 to
     * 57.7 x 16/30 = 30.77 GB/s: 4.36 ms, the bound there. The fluid model
     * has no ceiling: NVLink bound. CollNet with sharp=1. Every kind
     * conserves bytes and ends. */
    t = run("h100:2", WEFT_COLL_ALLREDUCE, WEFT_SIM_INNET_NVLS_TREE, (uint64_t)S, WEFT_SIM_GPU, &r);
    printf("h100:2 nvls_tree: %.6f s, busbw %.3f\n", t, r.busbw_gbps);
    double head = S / 8 / (57.7e9 * 16 / 30);
    CHECK(t > head && t < 1.02 * head);
    CHECK(r.conservation_err < 1e-9);
    t = run("h100:2", WEFT_COLL_ALLREDUCE, WEFT_SIM_INNET_NVLS_TREE, (uint64_t)S, WEFT_SIM_FLUID,
            &r);
    CHECK(t >= S * 9 / 8 / B && t < 1.02 * S * 9 / 8 / B);
    CHECK(r.conservation_err < 1e-9);
    t = run("h100:4", WEFT_COLL_ALLREDUCE, WEFT_SIM_INNET_NVLS_TREE, (uint64_t)S, WEFT_SIM_GPU, &r);
    CHECK(r.conservation_err < 1e-9 && t > 0);
    t = run("h100:2,sharp=1", WEFT_COLL_ALLREDUCE, WEFT_SIM_INNET_COLLNET_DIRECT, (uint64_t)S,
            WEFT_SIM_FLUID, &r);
    /* Direct: a GPU sends 7/8 S to the heads and its head 7/8 S back over
     * NVLink each way: 7S/4 at 450 GB/s (the NIC's S/8 at 50 is less). */
    CHECK(t >= S * 7 / 4 / B && t < S * 7 / 4 / B + 1e-5);
    t = run("h100:2,sharp=1", WEFT_COLL_ALLREDUCE, WEFT_SIM_INNET_COLLNET_CHAIN, (uint64_t)S,
            WEFT_SIM_FLUID, &r);
    CHECK(r.conservation_err < 1e-9 && t > 0);
    t = run("h100:4,sharp=1", WEFT_COLL_ALLREDUCE, WEFT_SIM_INNET_NVLS, (uint64_t)S, WEFT_SIM_FLUID,
            &r);
    CHECK(t >= bw_time && t < bw_time + 1e-5);

    /* Errors. */
    {
        weft_topo *a = preset("a100:1"), *h2 = preset("h100:2");
        weft_sim_opts o;
        weft_diag d;
        weft_sim_opts_init(&o);
        CHECK_ERR(weft_sim_innet(a, WEFT_COLL_ALLREDUCE, WEFT_SIM_INNET_NVLS, NULL, 0, 0, 1024, &o,
                                 &r, &d),
                  WEFT_ETOPO);
        CHECK_STR(d.msg, "sim: 'b0.gpu0' has no link to its host's NVSwitch that reduces "
                         "(reduce=nvls)");
        CHECK_ERR(weft_sim_innet(h2, WEFT_COLL_ALLREDUCE, WEFT_SIM_INNET_COLLNET_DIRECT, NULL, 0, 0,
                                 1024, &o, &r, &d),
                  WEFT_ETOPO);
        CHECK_STR(d.msg, "sim: no switch that reduces (reduce=sharp) reachable from 'b0.gpu0'");
        CHECK_ERR(weft_sim_innet(h2, WEFT_COLL_ALLGATHER, WEFT_SIM_INNET_NVLS, NULL, 0, 0, 1024, &o,
                                 &r, &d),
                  WEFT_EINVAL);
        CHECK_STR(d.msg, "sim: nvls runs allgather inside one host only");
        CHECK_ERR(weft_sim_innet(h2, WEFT_COLL_BROADCAST, WEFT_SIM_INNET_NVLS, NULL, 0, 0, 1024, &o,
                                 &r, &d),
                  WEFT_EINVAL);
        CHECK_STR(d.msg, "sim: nvls does not run broadcast");
        /* Groups: the 8 GPUs of each box of h100:2 apart, at once. */
        uint32_t order[16];
        for (uint32_t i = 0; i < 16; i++)
            order[i] = i;
        CHECK_ERR(weft_sim_innet(h2, WEFT_COLL_ALLREDUCE, WEFT_SIM_INNET_NVLS, order, 16, 8,
                                 (uint64_t)S, &o, &r, &d),
                  WEFT_OK);
        CHECK(r.time_s >= bw_time + 3 * L && r.time_s <= bw_time + 4 * L);
        CHECK_INT(r.ranks, 8);
        weft_topo_free(a);
        weft_topo_free(h2);
    }
    CHECK_STR(weft_sim_innet_name(WEFT_SIM_INNET_COLLNET_CHAIN), "collnet_chain");
    CHECK_STR(weft_sim_innet_name(WEFT__SIM_INNET_COUNT), "?");
    return weft_test_done();
}
