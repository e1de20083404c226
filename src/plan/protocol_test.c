/* NCCL's protocol model: names, the tables, the ring estimate and the
 * per-size choice, against values worked by hand from NCCL's figures. */
#include <math.h>

#include "base/testing.h"
#include "weft/protocol.h"

static bool close_rel(double a, double b)
{
    return fabs(a - b) <= 1e-12 * fabs(b);
}

int main(void)
{
    weft_proto p;
    CHECK_STR(weft_proto_name(WEFT_PROTO_LL128), "LL128");
    CHECK(weft_proto_parse("simple", &p) && p == WEFT_PROTO_SIMPLE);
    CHECK(!weft_proto_parse("LL64", &p));
    CHECK_STR(weft_proto_name((weft_proto)7), "?");
    weft_gpu_arch a;
    CHECK(weft_gpu_arch_parse("Hopper", &a) && a == WEFT_ARCH_HOPPER);
    CHECK(weft_gpu_arch_parse("cdna2", &a) && a == WEFT_ARCH_AMPERE);
    CHECK(!weft_gpu_arch_parse("kepler", &a));
    CHECK_STR(weft_hop_class_name(WEFT_HOP_NET), "net");

    /* Link efficiency: NCCL's per-link figure over the line rate. */
    double eff = 0;
    CHECK(weft_proto_link_eff("ampere", WEFT_HOP_NVLINK, &eff) && eff == 20.0 / 25.0);
    CHECK(weft_proto_link_eff("Hopper", WEFT_HOP_NVLINK, &eff) && eff == 20.6 / 25.0);
    CHECK(weft_proto_link_eff("blackwell", WEFT_HOP_NVLINK, &eff) && eff == 40.1 / 50.0);
    CHECK(weft_proto_link_eff("volta", WEFT_HOP_NVLINK, &eff) && eff == 0.8);
    CHECK(weft_proto_link_eff("cdna2", WEFT_HOP_NVLINK, &eff) && eff == 36.0 / 50.0);
    CHECK(weft_proto_link_eff("cdna3", WEFT_HOP_NVLINK, &eff) && eff == 0.75);
    CHECK(weft_proto_link_eff("ampere", WEFT_HOP_PCI, &eff) && fabs(eff - 0.76171875) < 1e-15);
    CHECK(weft_proto_link_eff("hopper", WEFT_HOP_NET, &eff) && eff == 1.0);
    eff = 0.5;
    CHECK(!weft_proto_link_eff("kepler", WEFT_HOP_NVLINK, &eff) && eff == 0.5);
    CHECK(!weft_proto_link_eff(NULL, WEFT_HOP_NVLINK, &eff));
    CHECK(!weft_proto_link_eff("ampere", (weft_hop_class)3, &eff) && eff == 0.5);

    /* The tables: Simple over the network on hopper; LL's ceilings. */
    weft_proto_model m = weft_proto_model_get(WEFT_ARCH_HOPPER, WEFT_HOP_NET, 2, WEFT_PROTO_SIMPLE);
    CHECK(close_rel(m.base_s, 8.4e-6) && close_rel(m.hop_s, 14.0e-6));
    CHECK(m.bw_frac == 1.0 && m.chan_max_gbps == 0 && m.total_max_gbps == 0);
    CHECK_INT(m.step_bytes, 524288);
    m = weft_proto_model_get(WEFT_ARCH_AMPERE, WEFT_HOP_NVLINK, 1, WEFT_PROTO_LL);
    CHECK(m.bw_frac == 0.5 && m.total_max_gbps == 87.7 && close_rel(m.hop_s, 0.6e-6));
    CHECK_INT(m.step_bytes, 32768);
    CHECK(weft_proto_model_get(WEFT_ARCH_AMPERE, WEFT_HOP_NET, 4, WEFT_PROTO_LL).total_max_gbps ==
          20.4);
    /* On AMD hosts NCCL's row "AMD-N2/AMD-N4" (tuning.cc llMaxBws at
     * 5067397c lines 179-180): 22.5 GB/s on 2 boxes, 19.0 beyond, whatever
     * the GPU; one box keeps the GPU's row; posting a send costs 2 us. */
    CHECK(weft_proto_model_host(WEFT_ARCH_AMPERE, WEFT_HOP_NET, 2, WEFT_PROTO_LL, true)
              .total_max_gbps == 22.5);
    CHECK(weft_proto_model_host(WEFT_ARCH_HOPPER, WEFT_HOP_NVLINK, 4, WEFT_PROTO_LL, true)
              .total_max_gbps == 19.0);
    CHECK(weft_proto_model_host(WEFT_ARCH_AMPERE, WEFT_HOP_NVLINK, 1, WEFT_PROTO_LL, true)
              .total_max_gbps == 87.7);
    CHECK(weft_proto_model_host(WEFT_ARCH_AMPERE, WEFT_HOP_NET, 2, WEFT_PROTO_LL, false)
              .total_max_gbps == 39.0);
    CHECK(weft_proto_net_post_us(true) == 2.0 && weft_proto_net_post_us(false) == 1.0);
    /* NCCL's ring estimate on two AMD boxes (16 ranks, 16 channels of 12
     * GB/s): LL's bus min(16 x 12 x 0.5, 22.5) = 22.5, algbw 22.5 x 16/30
     * = 12 GB/s, latency 6.6 + 28 x max(0.6, 2.0) + 2 x 2.7 = 68 us
     * (Intel's: 20.8 GB/s, 6.6 + 28 x 1.0 + 5.4 = 40 us). */
    weft_proto_ring two = {WEFT_COLL_ALLREDUCE, 16,  2, 16, 12.0, WEFT_ARCH_AMPERE,
                           WEFT_HOP_NVLINK,     true};
    CHECK(close_rel(weft_proto_ring_time(&two, WEFT_PROTO_LL, 4096), 68e-6 + 4096 / 12.0e9));
    two.amd_hosts = false;
    CHECK(close_rel(weft_proto_ring_time(&two, WEFT_PROTO_LL, 4096), 40e-6 + 4096 / 20.8e9));
    CHECK(weft_proto_cpu_amd("amd") && weft_proto_cpu_amd("AMD"));
    CHECK(!weft_proto_cpu_amd("intel") && !weft_proto_cpu_amd("amdx") && !weft_proto_cpu_amd(NULL));
    m = weft_proto_model_get(WEFT_ARCH_HOPPER, WEFT_HOP_NVLINK, 1, WEFT_PROTO_LL128);
    CHECK(m.bw_frac == 0.92 && m.chan_max_gbps == 36.7 && close_rel(m.base_s, 14.0e-6));

    /* One box of 8 ampere GPUs, 8 channels of 20 GB/s, allreduce (14 steps):
     *   LL      bus min(80, 87.7) = 80,     lat 6.6 + 14 x 0.6 = 15.0 us
     *   LL128   bus min(147.2, 160) = 147.2, lat 14 + 14 x 1.9 = 40.6 us
     *   Simple  bus 160,                    lat 8.4 + 14 x 3.4 = 56.0 us
     * and algbw = bus x 8/14. LL wins to 2.56 MB, LL128 to 16.2 MB. */
    weft_proto_ring r = {WEFT_COLL_ALLREDUCE, 8,    1, 8, 20.0, WEFT_ARCH_AMPERE,
                         WEFT_HOP_NVLINK,     false};
    CHECK(close_rel(weft_proto_ring_time(&r, WEFT_PROTO_LL, 1024),
                    15.0e-6 + 1024 / (80.0 * 8 / 14 * 1e9)));
    CHECK(close_rel(weft_proto_ring_time(&r, WEFT_PROTO_LL128, 1 << 20),
                    40.6e-6 + (1 << 20) / (147.2 * 8 / 14 * 1e9)));
    CHECK(close_rel(weft_proto_ring_time(&r, WEFT_PROTO_SIMPLE, 1 << 30),
                    56.0e-6 + (1 << 30) / (160.0 * 8 / 14 * 1e9)));
    double t = 0;
    CHECK_INT(weft_proto_choose(&r, 1024, &t), WEFT_PROTO_LL);
    CHECK(close_rel(t, 15.0e-6 + 1024 / (80.0 * 8 / 14 * 1e9)));
    CHECK_INT(weft_proto_choose(&r, 1 << 20, NULL), WEFT_PROTO_LL);
    CHECK_INT(weft_proto_choose(&r, 4 << 20, NULL), WEFT_PROTO_LL128);
    CHECK_INT(weft_proto_choose(&r, 64 << 20, NULL), WEFT_PROTO_SIMPLE);

    /* Over PCIe LL128 is off: never chosen, its time infinite. */
    r.intra = WEFT_HOP_PCI;
    CHECK(!weft_proto_enabled(&r, WEFT_PROTO_LL128));
    CHECK(isinf(weft_proto_ring_time(&r, WEFT_PROTO_LL128, 4 << 20)));
    CHECK(weft_proto_choose(&r, 4 << 20, NULL) != WEFT_PROTO_LL128);

    /* Two boxes of 8 (16 ranks, 30 steps, 2 of them on the network):
     * Simple's intra steps cost at least 3 us of posting (3.4 here), the
     * network steps 14 us, and the plateau factor 1.4 applies:
     * (8.4 + 28 x 3.4 + 2 x 14) x 1.4 us. */
    weft_proto_ring r2 = {WEFT_COLL_ALLREDUCE, 16,   2, 8, 20.0, WEFT_ARCH_AMPERE,
                          WEFT_HOP_NVLINK,     false};
    CHECK(close_rel(weft_proto_ring_time(&r2, WEFT_PROTO_SIMPLE, 1 << 30),
                    (8.4 + 28 * 3.4 + 2 * 14.0) * 1.4e-6 + (1 << 30) / (160.0 * 16 / 30 * 1e9)));
    /* LL across two boxes: ceiling 39 GB/s, intra steps at least 1 us. */
    CHECK(close_rel(weft_proto_ring_time(&r2, WEFT_PROTO_LL, 4096),
                    (6.6 + 28 * 1.0 + 2 * 2.7) * 1e-6 + 4096 / (39.0 * 16 / 30 * 1e9)));
    return weft_test_done();
}
