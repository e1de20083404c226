/* NCCL's channels and choice (weft_nccl_fabric_get, weft_nccl_choose) on
 * the presets, worked out by hand from NCCL's search.cc and tuning.cc (the
 * figures are in src/synth/nccl.c), and the plans that run them. */
#include <math.h>
#include <string.h>

#include "base/testing.h"
#include "weft/synth.h"

static weft_topo *preset(const char *spec)
{
    weft_topo *t = NULL;
    weft_diag d;
    if (weft_topo_preset(spec, &t, &d)) fprintf(stderr, "%s: %s\n", spec, d.msg);
    return t;
}

/* The fabric's channels: searched rings, their rate, the communicator's. */
static void check_channels(const char *spec, uint32_t search, double gbps, uint32_t channels,
                           uint32_t ports, bool hopper)
{
    weft_topo *t = preset(spec);
    CHECK(t != NULL);
    if (!t) return;
    weft_nccl_fabric f;
    weft_diag d;
    CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_OK);
    CHECK_INT(f.search_channels, search);
    CHECK(f.channel_gbps == gbps);
    CHECK_INT(f.channels, channels);
    CHECK_INT(f.ports, ports);
    CHECK(f.hopper == hopper);
    weft_topo_free(t);
}

/* NCCL's choice for coll on spec at bytes. */
static void check_choice(const char *spec, weft_coll coll, double bytes, weft_nccl_algo algo,
                         weft_proto proto, const char *plan)
{
    weft_topo *t = preset(spec);
    CHECK(t != NULL);
    if (!t) return;
    weft_nccl_fabric f;
    weft_nccl_choice c;
    weft_diag d;
    CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_OK);
    CHECK_ERR(weft_nccl_choose(&f, coll, bytes, &c, &d), WEFT_OK);
    if (c.algo != algo || c.proto != proto || strcmp(c.plan, plan) != 0)
        fprintf(stderr, "%s %s at %.0f B: got %s %s %s\n", spec, weft_coll_name(coll), bytes,
                weft_nccl_algo_name(c.algo), weft_proto_name(c.proto), c.plan);
    CHECK_STR(weft_nccl_algo_name(c.algo), weft_nccl_algo_name(algo));
    CHECK_STR(weft_proto_name(c.proto), weft_proto_name(proto));
    CHECK_STR(c.plan, plan);
    weft_topo_free(t);
}

/* The plan of `algo` on spec verifies and has throughput limit num/den. */
static void check_plan(const char *spec, const char *algo, weft_coll coll, int64_t num, int64_t den)
{
    weft_topo *t = preset(spec);
    CHECK(t != NULL);
    if (!t) return;
    weft_plan *p = NULL;
    weft_plan_cost c;
    weft_diag d;
    CHECK_ERR(weft_synth_classic(t, algo, coll, (weft_rank){0}, &p, &d), WEFT_OK);
    if (p) {
        CHECK_ERR(weft_plan_verify(p, t, &d), WEFT_OK);
        CHECK_ERR(weft_plan_cost_get(p, t, &c, &d), WEFT_OK);
        CHECK_INT(c.algbw.num, num);
        CHECK_INT(c.algbw.den, den);
    }
    weft_plan_free(p);
    weft_topo_free(t);
}

/* weft_nccl_estimate: the parts of NCCL's estimate, and the pairs it
 * refuses; weft_nccl_choose takes the least of them. */
static void check_estimates(void)
{
    weft_topo *t = preset("a100:2");
    CHECK(t != NULL);
    if (!t) return;
    weft_nccl_fabric f;
    weft_nccl_cost c;
    weft_diag d;
    CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_OK);
    /* Tree, LL, 1 KiB: 6.8 + 2 x (7 x 0.6 + 1 x 5.0) = 25.2 us; bus
     * bandwidth 8 x 24 = 192 GB/s, x 0.92 (allreduce) = 176.64, / 3.8 for
     * LL capped at 39.0 (two hosts), halved for the tree: 19.5 GB/s. */
    CHECK(weft_nccl_estimate(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_TREE, WEFT_PROTO_LL, 1024, &c));
    CHECK(fabs(c.lat_s - 25.2e-6) < 1e-12);
    CHECK(fabs(c.busbw_gbps - 39.0) < 1e-12);
    CHECK(fabs(c.algbw_gbps - 19.5) < 1e-12);
    CHECK(fabs(c.time_s - (25.2e-6 + 1024 / 19.5e9)) < 1e-15);
    /* The ring's Simple plateau: x 1.4 from 64 B per channel and rank
     * (16 channels x 16 ranks x 64 = 16384 B) on. */
    weft_nccl_cost lo, hi;
    CHECK(weft_nccl_estimate(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_RING, WEFT_PROTO_SIMPLE, 16383, &lo));
    CHECK(weft_nccl_estimate(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_RING, WEFT_PROTO_SIMPLE, 16384, &hi));
    CHECK(fabs(hi.lat_s / lo.lat_s - 1.4) < 1e-12);
    CHECK(hi.algbw_gbps == lo.algbw_gbps);
    /* Refused: the tree outside allreduce, p2p, bad arguments. */
    c.time_s = -1;
    CHECK(!weft_nccl_estimate(&f, WEFT_COLL_ALLGATHER, WEFT_NCCL_TREE, WEFT_PROTO_LL, 1024, &c));
    CHECK(!weft_nccl_estimate(&f, WEFT_COLL_ALLTOALL, WEFT_NCCL_RING, WEFT_PROTO_LL, 1024, &c));
    CHECK(!weft_nccl_estimate(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_P2P, WEFT_PROTO_LL, 1024, &c));
    CHECK(!weft_nccl_estimate(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_RING, WEFT_PROTO_LL, -1, &c));
    CHECK(!weft_nccl_estimate(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_RING, (weft_proto)3, 1, &c));
    CHECK(c.time_s == -1);
    /* The choice is the least estimate at every size. */
    for (double bytes = 8; bytes <= 1073741824.0; bytes *= 4) {
        for (int coll = 0; coll < WEFT_COLL_ALLTOALL; coll++) {
            weft_nccl_choice ch;
            CHECK_ERR(weft_nccl_choose(&f, (weft_coll)coll, bytes, &ch, &d), WEFT_OK);
            double least = INFINITY;
            for (int a = 0; a < 2; a++)
                for (int p = 0; p < WEFT_PROTO_COUNT; p++)
                    if (weft_nccl_estimate(&f, (weft_coll)coll, (weft_nccl_algo)a, (weft_proto)p,
                                           bytes, &c))
                        least = fmin(least, c.time_s);
            CHECK(ch.time_s == least);
        }
    }
    weft_topo_free(t);
    /* 50 GB/s per GPU inside the box is no NVLink to NCCL: no LL128. */
    t = preset("a100:2,nvbw=50");
    CHECK(t != NULL);
    if (!t) return;
    CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_OK);
    CHECK(!weft_nccl_estimate(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_RING, WEFT_PROTO_LL128, 1, &c));
    CHECK(weft_nccl_estimate(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_RING, WEFT_PROTO_LL, 1, &c));
    weft_topo_free(t);
}

int main(void)
{
    check_estimates();
    /* 8 NICs of 25 GB/s per box: a ring per NIC at 24 GB/s (the fastest
     * of NCCL's Ampere inter-node rates not above 25), not duplicated
     * (below 25 GB/s), run twice: 16 channels, as NCCL logs on DGX A100. */
    check_channels("a100:2", 8, 24, 16, 8, false);
    /* 8 NICs of 50 GB/s, NVLink 450 GB/s (Hopper): 48 GB/s rings, not
     * duplicated (Hopper, below 50, more than 4), 16 channels. */
    check_channels("h100:16", 8, 48, 16, 8, true);
    check_channels("clos:hosts=32", 8, 48, 16, 8, true);
    /* One box: 300 GB/s per GPU holds 7 rings of 40 GB/s, duplicated to
     * 14 of 20 GB/s, run twice: 28 channels. */
    check_channels("a100:1", 14, 20, 28, 0, false);
    check_channels("h100:1", 14, 30, 28, 0, true);

    /* a100:2 allreduce: latency-bound sizes take the tree with LL (6.8 us
     * base + 2 x (7 x 0.6 + 1 x 5.0) = 25.2 us against the ring's 6.6 +
     * 28 x 0.6... + 2 x 2.7); 1 GiB takes the ring with Simple. */
    check_choice("a100:2", WEFT_COLL_ALLREDUCE, 1024, WEFT_NCCL_TREE, WEFT_PROTO_LL, "dbtree");
    check_choice("a100:2", WEFT_COLL_ALLREDUCE, 1073741824.0, WEFT_NCCL_RING, WEFT_PROTO_SIMPLE,
                 "rings:16");
    check_choice("a100:2", WEFT_COLL_ALLGATHER, 1024, WEFT_NCCL_RING, WEFT_PROTO_LL, "rings:16");
    check_choice("a100:2", WEFT_COLL_ALLGATHER, 1073741824.0, WEFT_NCCL_RING, WEFT_PROTO_SIMPLE,
                 "rings:16");
    check_choice("h100:16", WEFT_COLL_ALLREDUCE, 1073741824.0, WEFT_NCCL_RING, WEFT_PROTO_SIMPLE,
                 "rings:16");
    check_choice("a100:2", WEFT_COLL_ALLTOALL, 1024, WEFT_NCCL_P2P, WEFT_PROTO_SIMPLE, "direct");

    /* rings:auto is rings:16 on a100:2: each of the 16 NICs (both ways)
     * carries 2 x 15/16 of its rings' share: 320/3 GB/s, the issue's
     * 106.6 GB/s. nccl at 1 GiB builds the same plan. */
    check_plan("a100:2", "rings:auto", WEFT_COLL_ALLREDUCE, 320, 3);
    check_plan("a100:2", "rings:16", WEFT_COLL_ALLREDUCE, 320, 3);
    check_plan("a100:2", "nccl", WEFT_COLL_ALLREDUCE, 320, 3);
    check_plan("h100:16", "nccl", WEFT_COLL_ALLREDUCE, 25600, 127);

    /* Switches that reduce: the h100 box's NVSwitch (reduce=1), not the
     * a100's. NCCL's NVLS estimate on h100:1 at 1 GiB: 8 channels at 50
     * GB/s (8 x 60 would exceed 450), each 50 x 0.85 x 7/8 x 2 = 74.375,
     * algbw 8 x 74.375 x 8/14 = 340 GB/s: 25 us + 2^30 B / 340 GB/s. */
    {
        weft_topo *h = preset("h100:1"), *a = preset("a100:1");
        weft_nccl_fabric fh, fa;
        weft_nccl_choice c;
        weft_diag d;
        CHECK(h && a);
        if (h && a) {
            CHECK_ERR(weft_nccl_fabric_get(h, &fh, &d), WEFT_OK);
            CHECK_ERR(weft_nccl_fabric_get(a, &fa, &d), WEFT_OK);
            CHECK(fh.nvls && !fh.collnet);
            CHECK(!fa.nvls && !fa.collnet);
            CHECK_ERR(weft_nccl_choose(&fh, WEFT_COLL_ALLREDUCE, 1073741824.0, &c, &d), WEFT_OK);
            CHECK(fabs(c.nvls_s - (25e-6 + 1073741824.0 / 340e9)) < 1e-12);
            CHECK_STR(c.plan, "rings:28"); /* NVLS is reported, never chosen */
            CHECK_ERR(weft_nccl_choose(&fa, WEFT_COLL_ALLREDUCE, 1073741824.0, &c, &d), WEFT_OK);
            CHECK(c.nvls_s == 0);
        }
        weft_topo_free(h);
        weft_topo_free(a);
    }
    /* A network switch that reduces is flagged as CollNet. */
    {
        static const char sharp[] = "node a compute host=x\nnode b compute host=y\n"
                                    "node s switch reduce=1\n"
                                    "duplex a s 50GB/s\nduplex b s 50GB/s\n";
        weft_topo *t = NULL;
        weft_nccl_fabric f;
        weft_diag d;
        CHECK_ERR(weft_topo_parse(sharp, strlen(sharp), "sharp.topo", &t, &d), WEFT_OK);
        if (t) {
            CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_OK);
            CHECK(f.collnet && !f.nvls);
            CHECK_INT(f.hosts, 2);
            CHECK_INT(f.ports, 1);
        }
        weft_topo_free(t);
    }

    /* Errors. */
    static const char one[] = "node a compute\n";
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_parse(one, strlen(one), "one.topo", &t, &d), WEFT_OK);
    if (t) {
        weft_nccl_fabric f;
        CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_ETOPO);
        CHECK_STR(d.msg, "nccl needs at least 2 ranks, the fabric has 1");
        weft_topo_free(t);
    }
    CHECK_STR(weft_nccl_algo_name(WEFT__NCCL_ALGO_COUNT), "?");
    CHECK_STR(weft_proto_name(WEFT_PROTO_LL128), "LL128");
    return weft_test_done();
}
