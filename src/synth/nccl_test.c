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
    if (weft_topo_preset(spec, &t, &d))
        fprintf(stderr, "%s: %s\n", spec, d.msg);
    return t;
}

/* The fabric's channels: searched rings, their rate, the communicator's. */
static void check_channels(const char *spec, uint32_t search, double gbps, uint32_t channels,
                           uint32_t ports, bool hopper)
{
    weft_topo *t = preset(spec);
    CHECK(t != NULL);
    if (!t)
        return;
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
    if (!t)
        return;
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
    if (!t)
        return;
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

/* weft_nccl_cost_of: the parts of NCCL's estimate, and the pairs it
 * refuses; weft_nccl_choose takes the least of them. */
static void check_estimates(void)
{
    weft_topo *t = preset("a100:2");
    CHECK(t != NULL);
    if (!t)
        return;
    weft_nccl_fabric f;
    weft_nccl_cost c;
    weft_diag d;
    CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_OK);
    /* Tree, LL, 1 KiB: 6.8 + 2 x (7 x 0.6 + 1 x 5.0) = 25.2 us; bus
     * bandwidth 8 x 30 = 240 GB/s (the tree's bwIntra on 2 hosts), x 0.92
     * (allreduce) = 220.8, / 3.8 for LL capped at 39.0 (two hosts), halved
     * for the tree: 19.5 GB/s, then NCCL's tree correction at 1 KiB
     * (log2(1024 / 64) = 4: LL 0.9): 17.55 GB/s. */
    CHECK(f.tree_gbps == 30);
    CHECK(weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_TREE, WEFT_PROTO_LL, 1024, &c));
    CHECK(fabs(c.lat_s - 25.2e-6) < 1e-12);
    CHECK(fabs(c.busbw_gbps - 39.0) < 1e-12);
    CHECK(fabs(c.algbw_gbps - 17.55) < 1e-12);
    CHECK(fabs(c.time_s - (25.2e-6 + 1024 / 17.55e9)) < 1e-15);
    /* Tree, Simple: 8 channels x 30 x 0.92 = 220.8 GB/s, capped at 8 x
     * 23.6 (perChMaxTreeBws, Ampere, 2 hosts) = 188.8, halved: 94.4 GB/s
     * from 512 MiB (no correction from 64 B x 2^23 on); at 256 MiB x 0.9. */
    CHECK(weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_TREE, WEFT_PROTO_SIMPLE, 536870912.0,
                            &c));
    CHECK(fabs(c.algbw_gbps - 94.4) < 1e-12);
    CHECK(weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_TREE, WEFT_PROTO_SIMPLE, 536870911.0,
                            &c));
    CHECK(fabs(c.algbw_gbps - 94.4 * 0.9) < 1e-12);
    /* The ring's Simple plateau: x 1.4 from 64 B per channel and rank
     * (16 channels x 16 ranks x 64 = 16384 B) on. */
    weft_nccl_cost lo, hi;
    CHECK(
        weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_RING, WEFT_PROTO_SIMPLE, 16383, &lo));
    CHECK(
        weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_RING, WEFT_PROTO_SIMPLE, 16384, &hi));
    CHECK(fabs(hi.lat_s / lo.lat_s - 1.4) < 1e-12);
    CHECK(hi.algbw_gbps == lo.algbw_gbps);
    /* Refused: the tree outside allreduce, p2p, bad arguments. */
    c.time_s = -1;
    CHECK(!weft_nccl_cost_of(&f, WEFT_COLL_ALLGATHER, WEFT_NCCL_TREE, WEFT_PROTO_LL, 1024, &c));
    CHECK(!weft_nccl_cost_of(&f, WEFT_COLL_ALLTOALL, WEFT_NCCL_RING, WEFT_PROTO_LL, 1024, &c));
    CHECK(!weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_P2P, WEFT_PROTO_LL, 1024, &c));
    CHECK(!weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_RING, WEFT_PROTO_LL, -1, &c));
    CHECK(!weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_RING, (weft_proto)3, 1, &c));
    CHECK(c.time_s == -1);
    /* The choice is the least estimate at every size. */
    for (double bytes = 8; bytes <= 1073741824.0; bytes *= 4) {
        for (int coll = 0; coll < WEFT_COLL_ALLTOALL; coll++) {
            weft_nccl_choice ch;
            CHECK_ERR(weft_nccl_choose(&f, (weft_coll)coll, bytes, &ch, &d), WEFT_OK);
            double least = INFINITY;
            for (int a = 0; a < WEFT__NCCL_ALGO_COUNT; a++)
                for (int p = 0; p < WEFT_PROTO_COUNT; p++)
                    if (weft_nccl_cost_of(&f, (weft_coll)coll, (weft_nccl_algo)a, (weft_proto)p,
                                          bytes, &c))
                        least = fmin(least, c.time_s);
            CHECK(ch.time_s == least);
        }
    }
    weft_topo_free(t);
    /* 50 GB/s per GPU inside the box is no NVLink to NCCL: no LL128. */
    t = preset("a100:2,nvbw=50");
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_OK);
    CHECK(!weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_RING, WEFT_PROTO_LL128, 1, &c));
    CHECK(weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_RING, WEFT_PROTO_LL, 1, &c));
    weft_topo_free(t);
    /* In the switch: NVLS on one H100 box runs Simple only, and is NCCL's
     * choice at 1 GiB (its cost the least of every pair). */
    t = preset("h100:1");
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_OK);
    CHECK(!weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_NVLS, WEFT_PROTO_LL, 1, &c));
    CHECK(!weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_NVLS_TREE, WEFT_PROTO_SIMPLE, 1,
                             &c)); /* one host */
    CHECK(weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_NVLS, WEFT_PROTO_SIMPLE,
                            1073741824.0, &c));
    weft_nccl_choice ch;
    CHECK_ERR(weft_nccl_choose(&f, WEFT_COLL_ALLREDUCE, 1073741824.0, &ch, &d), WEFT_OK);
    CHECK_INT(ch.algo, WEFT_NCCL_NVLS);
    CHECK(ch.time_s == c.time_s);
    weft_topo_free(t);
}

/* A forced algorithm (NCCL_ALGO, a tuner plugin): NCCL's ring or tree on
 * the communicator's channels. h100:2,nicbw=25 has 16 (8 NICs at 24 GB/s,
 * not duplicated, run twice): the tree is 16 double-binary-tree channels,
 * each reducing up the 15 edges of a 16-rank tree and broadcasting down
 * them (30 ops), 480 ops; the ring is rings:16. */
static void check_forced(void)
{
    weft_topo *t = preset("h100:2,nicbw=25");
    CHECK(t != NULL);
    if (!t)
        return;
    weft_diag d;
    weft_plan *tree = NULL, *ring = NULL, *ref = NULL, *two = NULL;
    CHECK_ERR(weft_synth_nccl_algo(t, WEFT_COLL_ALLREDUCE, WEFT_NCCL_TREE, 0, &tree, &d), WEFT_OK);
    CHECK_ERR(weft_synth_classic(t, "dbtree", WEFT_COLL_ALLREDUCE, (weft_rank){0}, &two, &d),
              WEFT_OK);
    if (tree && two) {
        CHECK_INT(weft_plan_num_ops(tree), 16 * 30);
        CHECK_INT(weft_plan_num_ops(two), 2 * 30);
    }
    CHECK_ERR(weft_synth_nccl_algo(t, WEFT_COLL_ALLGATHER, WEFT_NCCL_RING, 0, &ring, &d), WEFT_OK);
    CHECK_ERR(weft_synth_classic(t, "rings:16", WEFT_COLL_ALLGATHER, (weft_rank){0}, &ref, &d),
              WEFT_OK);
    CHECK(ring && ref && weft_plan_equal(ring, ref));
    weft_plan *none = NULL;
    CHECK_ERR(weft_synth_nccl_algo(t, WEFT_COLL_ALLREDUCE, WEFT_NCCL_NVLS_TREE, 0, &none, &d),
              WEFT_EUNSUPPORTED);
    CHECK_STR(d.msg, "nccl: nvls_tree has no rank-to-rank plan (ring and tree have)");
    CHECK_ERR(weft_synth_nccl_algo(t, WEFT_COLL_ALLGATHER, WEFT_NCCL_TREE, 0, &none, &d),
              WEFT_EUNSUPPORTED);
    CHECK_STR(d.msg, "nccl: NCCL's tree runs allreduce only, not allgather");
    CHECK_ERR(weft_synth_nccl_algo(t, WEFT_COLL_ALLREDUCE, WEFT_NCCL_TREE, 100, &none, &d),
              WEFT_ELIMIT);
    CHECK(none == NULL);
    weft_plan_free(tree);
    weft_plan_free(two);
    weft_plan_free(ring);
    weft_plan_free(ref);
    weft_topo_free(t);
}

/* weft_nccl_choose_forced: what NCCL_ALGO and NCCL_PROTO leave. On a100:1
 * at 2 MiB NCCL runs the ring with LL128 (the tree's LL128 estimate is
 * scaled down by treeCorrectionFactor there); with Simple forced the ring with
 * Simple (the least of every Simple estimate); with LL the ring with LL;
 * with both forced, exactly that pair's estimate; neither forced is
 * weft_nccl_choose. The errors name what is not run. */
static void check_choose_forced(void)
{
    weft_topo *t = preset("a100:1");
    CHECK(t != NULL);
    if (!t)
        return;
    weft_nccl_fabric f;
    weft_nccl_choice c, own;
    weft_nccl_cost k;
    weft_diag d;
    double b = 2097152;
    CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_OK);
    CHECK_ERR(weft_nccl_choose(&f, WEFT_COLL_ALLREDUCE, b, &own, &d), WEFT_OK);
    CHECK(own.algo == WEFT_NCCL_RING && own.proto == WEFT_PROTO_LL128);
    CHECK_ERR(weft_nccl_choose_forced(&f, WEFT_COLL_ALLREDUCE, b, -1, -1, &c, &d), WEFT_OK);
    CHECK(c.algo == own.algo && c.proto == own.proto && c.time_s == own.time_s);
    CHECK_ERR(weft_nccl_choose_forced(&f, WEFT_COLL_ALLREDUCE, b, -1, WEFT_PROTO_SIMPLE, &c, &d),
              WEFT_OK);
    CHECK(c.algo == WEFT_NCCL_RING && c.proto == WEFT_PROTO_SIMPLE);
    CHECK_STR(c.plan, "rings:28");
    double least = INFINITY;
    for (int a = 0; a < WEFT__NCCL_ALGO_COUNT; a++)
        if (weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, (weft_nccl_algo)a, WEFT_PROTO_SIMPLE, b,
                              &k) &&
            k.time_s < least)
            least = k.time_s;
    CHECK(c.time_s == least);
    CHECK_ERR(weft_nccl_choose_forced(&f, WEFT_COLL_ALLREDUCE, b, -1, WEFT_PROTO_LL, &c, &d),
              WEFT_OK);
    CHECK(c.algo == WEFT_NCCL_RING && c.proto == WEFT_PROTO_LL);
    CHECK_ERR(
        weft_nccl_choose_forced(&f, WEFT_COLL_ALLREDUCE, b, WEFT_NCCL_TREE, WEFT_PROTO_LL, &c, &d),
        WEFT_OK);
    CHECK(weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_TREE, WEFT_PROTO_LL, b, &k));
    CHECK(c.algo == WEFT_NCCL_TREE && c.proto == WEFT_PROTO_LL && c.time_s == k.time_s);
    CHECK_STR(c.plan, "dbtree");
    CHECK_ERR(weft_nccl_choose_forced(&f, WEFT_COLL_ALLGATHER, b, WEFT_NCCL_TREE, -1, &c, &d),
              WEFT_EUNSUPPORTED);
    CHECK_STR(d.msg, "NCCL's tree runs allreduce only (allgather)");
    CHECK_ERR(weft_nccl_choose_forced(&f, WEFT_COLL_ALLREDUCE, b, WEFT_NCCL_NVLS, WEFT_PROTO_SIMPLE,
                                      &c, &d),
              WEFT_EUNSUPPORTED);
    CHECK_STR(d.msg, "nvls needs an NVSwitch that reduces (reduce=nvls) and sm90+ (allreduce)");
    CHECK_ERR(weft_nccl_choose_forced(&f, WEFT_COLL_ALLTOALL, b, -1, WEFT_PROTO_LL, &c, &d),
              WEFT_EUNSUPPORTED);
    CHECK_STR(d.msg, "nccl: NCCL does not tune all-to-all (p2p: every pair at once), so no "
                     "algorithm or protocol is forced there");
    weft_topo_free(t);
    /* LL128 needs NVLink hops: on switch:4 (no NVLink) nothing runs it. */
    t = preset("switch:4");
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_OK);
    CHECK_ERR(weft_nccl_choose_forced(&f, WEFT_COLL_ALLREDUCE, b, WEFT_NCCL_RING, WEFT_PROTO_LL128,
                                      &c, &d),
              WEFT_EUNSUPPORTED);
    CHECK_STR(d.msg, "nccl: NCCL does not run ring with LL128 for allreduce");
    CHECK_ERR(weft_nccl_choose_forced(&f, WEFT_COLL_ALLREDUCE, b, -1, WEFT_PROTO_LL128, &c, &d),
              WEFT_EUNSUPPORTED);
    CHECK_STR(d.msg, "nccl: no algorithm runs allreduce with LL128");
    weft_topo_free(t);
}

/* The dev set's two Oracle BM.GPU4.8 nodes (tests/fixtures/nccl-tests/
 * oci-bm-gpu4-8x2.topo), or NULL after a failed check. */
static weft_topo *oci_a100_topo(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_load_file(WEFT_SOURCE_DIR "/tests/fixtures/nccl-tests/oci-bm-gpu4-8x2.topo",
                                  &t, &d),
              WEFT_OK);
    return t;
}

/* Two Oracle BM.GPU4.8 nodes as NCCL 2.19.3 counts them (the dev set's
 * tests/fixtures/nccl-tests/oci-bm-gpu4-8x2.topo: 16 ports of 12.5 GB/s a
 * node, two beside each GPU). The ring search: 16 rings at 12 GB/s (not
 * duplicated), 32 channels; ring Simple 16 x 12 = 192 GB/s x 16/30 =
 * 102.4 GB/s. The tree's bwIntra rises 12 -> 15 (16 x 18 > 240, the
 * A100's NVLink as NCCL counts it), so on 2 hosts its Simple bus
 * bandwidth is 16 x 15 x 0.92 = 220.8 (the per-channel cap, 16 x 23.6, is
 * above it), halved: 110.4 GB/s, which beats the ring from 512 MiB, where
 * NCCL's tree correction ends (0.9 below). In between the tree with LL128
 * (220.8 x 120/128 / 2 = 103.5 GB/s, its correction 1.0 from 128 MiB)
 * wins. The published table (oci-a100-2x8-40gb-allreduce.txt) changes
 * shape at 512 MiB and passes the ring's 200 GB/s bus bandwidth from
 * 1 GiB on.
 *
 * The hosts are AMD's (the XML's vendor="AuthenticAMD"; cpu=amd in the
 * .topo): NCCL's LL cap on 2 nodes is 22.5 GB/s, not Intel's 39.0, and a
 * network post costs 2 us, not 1 (tuning.cc @5067397c lines 180, 231,
 * 270). The ring with LL at 4 KiB: bus min(16 x 12 x 0.5, 22.5) = 22.5,
 * algbw 22.5 x 16/30 = 12.0 GB/s; latency 6.6 + 28 x max(0.6, 2.0) + 2 x
 * 2.7 = 68.0 us (Intel: min(96, 39) x 16/30 = 20.8 GB/s, 6.6 + 28 x 1.0
 * + 5.4 = 40.0 us). At 256 KiB the tree with LL128 now beats the ring
 * with LL (which won with Intel's cap). */
static void check_oci_a100(void)
{
    weft_diag d;
    weft_topo *t = oci_a100_topo();
    if (!t)
        return;
    weft_nccl_fabric f;
    weft_nccl_choice c;
    CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_OK);
    CHECK_INT(f.ports, 16);
    CHECK_INT(f.search_channels, 16);
    CHECK(f.channel_gbps == 12);
    CHECK(f.tree_gbps == 15);
    CHECK_INT(f.channels, 32);
    CHECK(f.amd);
    weft_nccl_cost ll;
    CHECK(weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_RING, WEFT_PROTO_LL, 4096, &ll));
    CHECK(fabs(ll.algbw_gbps - 12.0) < 1e-12 && fabs(ll.lat_s - 68.0e-6) < 1e-15);
    weft_nccl_fabric intel = f;
    intel.amd = false;
    CHECK(weft_nccl_cost_of(&intel, WEFT_COLL_ALLREDUCE, WEFT_NCCL_RING, WEFT_PROTO_LL, 4096, &ll));
    CHECK(fabs(ll.algbw_gbps - 20.8) < 1e-12 && fabs(ll.lat_s - 40.0e-6) < 1e-15);
    CHECK_ERR(weft_nccl_choose(&intel, WEFT_COLL_ALLREDUCE, 262144.0, &c, &d), WEFT_OK);
    CHECK_STR(weft_nccl_algo_name(c.algo), "ring");
    CHECK_STR(weft_proto_name(c.proto), "LL");
    static const struct {
        double bytes;
        weft_nccl_algo algo;
        weft_proto proto;
    } want[] = {
        {1024, WEFT_NCCL_TREE, WEFT_PROTO_LL},
        {262144.0, WEFT_NCCL_TREE, WEFT_PROTO_LL128},
        {134217728.0, WEFT_NCCL_TREE, WEFT_PROTO_LL128},
        {268435456.0, WEFT_NCCL_TREE, WEFT_PROTO_LL128},
        {536870912.0, WEFT_NCCL_TREE, WEFT_PROTO_SIMPLE},
        {8589934592.0, WEFT_NCCL_TREE, WEFT_PROTO_SIMPLE},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CHECK_ERR(weft_nccl_choose(&f, WEFT_COLL_ALLREDUCE, want[i].bytes, &c, &d), WEFT_OK);
        CHECK_STR(weft_nccl_algo_name(c.algo), weft_nccl_algo_name(want[i].algo));
        CHECK_STR(weft_proto_name(c.proto), weft_proto_name(want[i].proto));
    }
    weft_nccl_cost ring, tree;
    CHECK(weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_RING, WEFT_PROTO_SIMPLE, 536870912.0,
                            &ring));
    CHECK(weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_TREE, WEFT_PROTO_SIMPLE, 536870912.0,
                            &tree));
    CHECK(fabs(ring.algbw_gbps - 102.4) < 1e-12);
    CHECK(fabs(tree.algbw_gbps - 110.4) < 1e-12);
    weft_topo_free(t);
}

/* Sizes past a size_t: the tree's correction ends at 2^29 bytes, so a
 * size of 1e30 bytes costs the tree what 2^40 does per byte, with no
 * conversion of a double that no integer holds (UBSan's
 * float-cast-overflow); an infinite or NaN size is refused. */
static void check_huge_sizes(void)
{
    weft_diag d;
    weft_topo *t = oci_a100_topo();
    if (!t)
        return;
    weft_nccl_fabric f;
    weft_nccl_choice c;
    weft_nccl_cost big, ref;
    CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_OK);
    CHECK(
        weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_TREE, WEFT_PROTO_SIMPLE, 1e30, &big));
    CHECK(weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_TREE, WEFT_PROTO_SIMPLE,
                            1099511627776.0, &ref));
    CHECK(big.algbw_gbps == ref.algbw_gbps);
    CHECK_ERR(weft_nccl_choose(&f, WEFT_COLL_ALLREDUCE, 1e30, &c, &d), WEFT_OK);
    CHECK_STR(weft_nccl_algo_name(c.algo), "tree");
    CHECK_ERR(weft_nccl_choose(&f, WEFT_COLL_ALLREDUCE, INFINITY, &c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "nccl: bad collective or size (inf B)");
    CHECK_ERR(weft_nccl_choose_forced(&f, WEFT_COLL_ALLREDUCE, NAN, WEFT_NCCL_TREE, -1, &c, &d),
              WEFT_EINVAL);
    CHECK_STR(d.msg, "nccl: bad collective or size (nan B)");
    CHECK(!weft_nccl_cost_of(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_TREE, WEFT_PROTO_SIMPLE, INFINITY,
                             &big));
    weft_topo_free(t);
}

/* The channels NCCL launches (enqueue.cc @5067397c lines 2092-2096: one
 * fewer while bytes < channels x threads x per-thread work) and the share
 * of its bus bandwidth they move, by hand:
 * - a100:1 (28 channels, 14 graph channels of 20 GB/s, 8 ranks), ring
 *   with LL: work 8 x 8 ranks x 512 threads = 32768 B a channel; 1 MiB
 *   keeps 28 (1048576 >= 28 x 32768 = 917504); 64 KiB runs 2; 1 KiB 1.
 *   Bus bandwidth with 2: min(87.7, 1 x 20 x 0.5) = 10 GB/s, with all:
 *   min(87.7, 14 x 20 x 0.5 = 140) = 87.7: share 10 / 87.7.
 * - a100:1, ring with LL128: 8 x 640 = 5120 B a channel: 64 KiB runs 12
 *   (65536 < 13 x 5120 = 66560); ring with Simple: 64 x 512 = 32768 B
 *   (14 x 20 = 280 GB/s > PCI_BW's 12: 512 threads): 64 KiB runs 2.
 * - the dev set's two BM.GPU4.8 nodes (32 channels, 16 graph channels;
 *   tree's rate 15 GB/s), tree with LL: 8 x 512 = 4096 B a channel, the
 *   tree's not times the ranks: 1 KiB runs 1, 64 KiB 16, 128 KiB all 32.
 *   Tree with Simple at 256 KiB: 64 x 512 = 32768: 8 channels, 4 graph
 *   channels: min(4 x 15 x 0.92, 4 x 23.6) / min(16 x 15 x 0.92, 16 x
 *   23.6) = 0.25.
 * - NVLS (h100:1's heads) keeps its channels: share 1. */
static void check_enqueue_channels(void)
{
    weft_diag d;
    weft_nccl_fabric f;
    weft_topo *t = preset("a100:1");
    CHECK(t != NULL);
    if (t) {
        CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_OK);
        CHECK_INT(weft_nccl_channels(&f, WEFT_NCCL_RING, WEFT_PROTO_LL, 1048576), 28);
        CHECK_INT(weft_nccl_channels(&f, WEFT_NCCL_RING, WEFT_PROTO_LL, 917503), 27);
        CHECK_INT(weft_nccl_channels(&f, WEFT_NCCL_RING, WEFT_PROTO_LL, 65536), 2);
        CHECK_INT(weft_nccl_channels(&f, WEFT_NCCL_RING, WEFT_PROTO_LL, 1024), 1);
        CHECK_INT(weft_nccl_channels(&f, WEFT_NCCL_RING, WEFT_PROTO_LL128, 65536), 12);
        CHECK_INT(weft_nccl_channels(&f, WEFT_NCCL_RING, WEFT_PROTO_SIMPLE, 65536), 2);
        CHECK(fabs(weft_nccl_channel_share(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_RING, WEFT_PROTO_LL,
                                           65536) -
                   10.0 / 87.7) < 1e-12);
        CHECK(weft_nccl_channel_share(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_RING, WEFT_PROTO_LL,
                                      1048576) == 1);
        /* Not NCCL's to run, or not a ring or a tree: all of it. */
        CHECK(weft_nccl_channel_share(&f, WEFT_COLL_ALLGATHER, WEFT_NCCL_TREE, WEFT_PROTO_LL,
                                      1024) == 1);
        CHECK(weft_nccl_channel_share(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_NVLS, WEFT_PROTO_SIMPLE,
                                      1024) == 1);
        weft_topo_free(t);
    }
    t = oci_a100_topo();
    if (t) {
        CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_OK);
        CHECK_INT(weft_nccl_channels(&f, WEFT_NCCL_TREE, WEFT_PROTO_LL, 1024), 1);
        CHECK_INT(weft_nccl_channels(&f, WEFT_NCCL_TREE, WEFT_PROTO_LL, 65536), 16);
        CHECK_INT(weft_nccl_channels(&f, WEFT_NCCL_TREE, WEFT_PROTO_LL, 131072), 32);
        CHECK_INT(weft_nccl_channels(&f, WEFT_NCCL_TREE, WEFT_PROTO_SIMPLE, 262144), 8);
        CHECK(fabs(weft_nccl_channel_share(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_TREE,
                                           WEFT_PROTO_SIMPLE, 262144) -
                   0.25) < 1e-12);
        weft_topo_free(t);
    }
    t = preset("h100:1");
    CHECK(t != NULL);
    if (t) {
        CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_OK);
        CHECK_INT(weft_nccl_channels(&f, WEFT_NCCL_NVLS, WEFT_PROTO_SIMPLE, 1024), f.channels);
        weft_topo_free(t);
    }
}

int main(void)
{
    check_oci_a100();
    check_enqueue_channels();
    check_huge_sizes();
    check_estimates();
    check_forced();
    check_choose_forced();
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
    /* h100:16 at 1 GiB: NVLS-tree (8 heads, min(40 x 0.85 x 7/8 x 2, 48,
     * 45.5) = 45.5 GB/s each: algbw 364 x 128/254 = 183.4 GB/s, latency 25
     * + 2 x 4 x 20.9 us: 6,047 us) beats the ring (384 x 128/254 GB/s and
     * 1.4 x (8.4 + 224 x 3.4 + 30 x 14) us: 7,215 us). */
    check_choice("h100:16", WEFT_COLL_ALLREDUCE, 1073741824.0, WEFT_NCCL_NVLS_TREE,
                 WEFT_PROTO_SIMPLE, "nvls_tree");
    check_choice("a100:2", WEFT_COLL_ALLTOALL, 1024, WEFT_NCCL_P2P, WEFT_PROTO_SIMPLE, "direct");

    /* rings:auto is rings:16 on a100:2: each of the 16 NICs (both ways)
     * carries 2 x 15/16 of its rings' share: 320/3 GB/s, the issue's
     * 106.6 GB/s. nccl at 1 GiB builds the same plan. */
    check_plan("a100:2", "rings:auto", WEFT_COLL_ALLREDUCE, 320, 3);
    check_plan("a100:2", "rings:16", WEFT_COLL_ALLREDUCE, 320, 3);
    check_plan("a100:2", "nccl", WEFT_COLL_ALLREDUCE, 320, 3);
    check_plan("h100:16", "nccl", WEFT_COLL_ALLREDUCE, 25600, 127);

    /* Switches that reduce: the h100 box's NVSwitch (reduce=nvls), not the
     * a100's. NVLS on h100:1: 8 heads; a GPU's link carries 9 channels' rate
     * and NCCL counts it at 18 x 20.6 = 370.8 GB/s, so bwIntra is 40 (60
     * and 50 exceed 370.8 / 9 = 41.2); bwInter rises to 60. Per channel
     * min(40 x 0.85 x 7/8 x 2, 60) = 59.5: busbw 476 GB/s (the published
     * nccl-tests figure on DGX H100 is ~480), algbw 476 x 8/14 = 272 GB/s,
     * 25 us + 2^30 B / 272 GB/s. */
    {
        weft_topo *h = preset("h100:1"), *a = preset("a100:1");
        weft_nccl_fabric fh, fa;
        weft_nccl_choice c;
        weft_diag d;
        CHECK(h && a);
        if (h && a) {
            CHECK_ERR(weft_nccl_fabric_get(h, &fh, &d), WEFT_OK);
            CHECK_ERR(weft_nccl_fabric_get(a, &fa, &d), WEFT_OK);
            CHECK(fh.nvls && !fh.collnet && fh.nvswitch);
            CHECK(!fa.nvls && !fa.collnet && fa.nvswitch);
            CHECK_INT(fh.nvls_channels, 8);
            CHECK(fh.nvls_bw_intra == 40 && fh.nvls_bw_inter == 60);
            CHECK_ERR(weft_nccl_choose(&fh, WEFT_COLL_ALLREDUCE, 1073741824.0, &c, &d), WEFT_OK);
            CHECK(fabs(c.nvls_s - (25e-6 + 1073741824.0 / 272e9)) < 1e-12);
            CHECK(fabs(c.time_s - c.nvls_s) < 1e-15);
            CHECK(fabs(c.busbw_gbps - 476) < 1e-9);
            CHECK_STR(weft_nccl_algo_name(c.algo), "nvls");
            CHECK_STR(c.plan, "nvls");
            CHECK_STR(c.rank_plan, "rings:28"); /* what weft plan --algo nccl builds */
            CHECK(weft_nccl_algo_innet(c.algo) && !weft_nccl_algo_innet(c.rank_algo));
            /* Small sizes: the ring with LL (6.6 + 14 x 0.6 = 15 us, min(141,
             * 420 x 0.5) x 8/14 = 80.57 GB/s). The choice switches where 15
             * + S / 80.57 = 25 + S / 272 (us, S in kB): S = 1,144,840 B. */
            check_choice("h100:1", WEFT_COLL_ALLREDUCE, 1048576, WEFT_NCCL_RING, WEFT_PROTO_LL,
                         "rings:28");
            check_choice("h100:1", WEFT_COLL_ALLREDUCE, 1310720, WEFT_NCCL_NVLS, WEFT_PROTO_SIMPLE,
                         "nvls");
            double lo = 1048576, hi = 1310720;
            for (int i = 0; i < 60; i++) {
                double mid = (lo + hi) / 2;
                CHECK_ERR(weft_nccl_choose(&fh, WEFT_COLL_ALLREDUCE, mid, &c, &d), WEFT_OK);
                *(c.algo == WEFT_NCCL_NVLS ? &hi : &lo) = mid;
            }
            double want = 10.0 / (14.0 / 1128e3 - 1.0 / 272e3);
            CHECK(fabs(hi - want) < 1e-3 * want);
            /* Allgather: per channel min(40 x 0.85 x 7/8 x 7/8, 60) =
             * 26.03 GB/s, 8 of them, not converted: 25 us + S / 208.25. */
            weft_nccl_choice g;
            CHECK_ERR(
                weft_nccl_estimate(&fh, WEFT_COLL_ALLGATHER, WEFT_NCCL_NVLS, 1073741824.0, &g, &d),
                WEFT_OK);
            CHECK(fabs(g.time_s - (25e-6 + 1073741824.0 / 208.25e9)) < 1e-12);
            CHECK_ERR(
                weft_nccl_estimate(&fh, WEFT_COLL_ALLREDUCE, WEFT_NCCL_NVLS_TREE, 1e6, &g, &d),
                WEFT_EUNSUPPORTED);
            CHECK_STR(d.msg, "nvls_tree needs several hosts (allreduce)");
            CHECK_ERR(weft_nccl_choose(&fa, WEFT_COLL_ALLREDUCE, 1073741824.0, &c, &d), WEFT_OK);
            CHECK(c.nvls_s == 0);
            CHECK_ERR(weft_nccl_estimate(&fa, WEFT_COLL_ALLREDUCE, WEFT_NCCL_NVLS, 1e6, &g, &d),
                      WEFT_EUNSUPPORTED);
            CHECK_STR(d.msg, "nvls needs an NVSwitch that reduces (reduce=nvls) and sm90+ "
                             "(allreduce)");
        }
        weft_topo_free(h);
        weft_topo_free(a);
    }
    /* b200:1: 18 x 40.1 = 721.8 GB/s per GPU, / 9 = 80.2: bwIntra 80
     * (Blackwell's list), bwInter 90; min(80 x 0.74 x 7/8 x 2 = 103.6,
     * 90) = 90 per channel: busbw 720 GB/s. */
    {
        weft_topo *b = preset("b200:1");
        weft_nccl_fabric f;
        weft_nccl_choice c;
        weft_diag d;
        if (b) {
            CHECK_ERR(weft_nccl_fabric_get(b, &f, &d), WEFT_OK);
            CHECK(f.nvls_bw_intra == 80 && f.nvls_bw_inter == 90);
            CHECK_ERR(weft_nccl_choose(&f, WEFT_COLL_ALLREDUCE, 1073741824.0, &c, &d), WEFT_OK);
            CHECK_STR(c.plan, "nvls");
            CHECK(fabs(c.busbw_gbps - 720) < 1e-9);
        }
        weft_topo_free(b);
    }
    /* h100:2: NVLS-tree with 2 hosts doubles bwInter: min(59.5, 96, 57.7)
     * = 57.7 per head, busbw 461.6. With sharp=1 CollNet and NVLS across
     * hosts run too: NVLS min(59.5, 48) = 48 x 8 = 384; CollNet direct
     * 8 x 48 x 0.85 = 326.4 (algbw half of it). */
    {
        weft_topo *h = preset("h100:2"), *s = preset("h100:2,sharp=1");
        weft_nccl_fabric f, fs;
        weft_nccl_choice c;
        weft_diag d;
        if (h && s) {
            CHECK_ERR(weft_nccl_fabric_get(h, &f, &d), WEFT_OK);
            CHECK_ERR(weft_nccl_fabric_get(s, &fs, &d), WEFT_OK);
            CHECK(!f.collnet && fs.collnet);
            CHECK_ERR(weft_nccl_choose(&f, WEFT_COLL_ALLREDUCE, 1073741824.0, &c, &d), WEFT_OK);
            CHECK_STR(c.plan, "nvls_tree");
            CHECK(fabs(c.busbw_gbps - 461.6) < 1e-9);
            CHECK_STR(c.rank_plan, "rings:16");
            CHECK_ERR(
                weft_nccl_estimate(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_COLLNET_DIRECT, 1e6, &c, &d),
                WEFT_EUNSUPPORTED);
            CHECK_STR(d.msg, "collnet needs a network switch that reduces (reduce=sharp) "
                             "(allreduce)");
            CHECK_ERR(
                weft_nccl_estimate(&fs, WEFT_COLL_ALLREDUCE, WEFT_NCCL_NVLS, 1073741824.0, &c, &d),
                WEFT_OK);
            CHECK(fabs(c.busbw_gbps - 384) < 1e-9);
            CHECK_ERR(weft_nccl_estimate(&fs, WEFT_COLL_ALLREDUCE, WEFT_NCCL_COLLNET_DIRECT,
                                         1073741824.0, &c, &d),
                      WEFT_OK);
            CHECK(fabs(c.busbw_gbps - 326.4) < 1e-9);
            /* 2 x (3.7 + 7 x 0.4) + 31 = 44 us, algbw 163.2 GB/s. */
            CHECK(fabs(c.time_s - (44e-6 + 1073741824.0 / 163.2e9)) < 1e-12);
        }
        weft_topo_free(h);
        weft_topo_free(s);
    }
    /* PAT: one rank per host (clos with one GPU each), allgather. */
    {
        weft_topo *t = preset("clos:hosts=8,gpus=1,nics=1");
        weft_nccl_fabric f;
        weft_nccl_choice c;
        weft_diag d;
        if (t) {
            CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_OK);
            CHECK_ERR(weft_nccl_estimate(&f, WEFT_COLL_ALLGATHER, WEFT_NCCL_PAT, 0, &c, &d),
                      WEFT_OK);
            /* 8 + log2(8) x 14 / 3.5 + 8 x 2.8 = 42.4 us */
            CHECK(fabs(c.time_s - 42.4e-6) < 1e-12);
            CHECK_STR(c.plan, "bruck");
            CHECK_ERR(weft_nccl_estimate(&f, WEFT_COLL_ALLREDUCE, WEFT_NCCL_PAT, 0, &c, &d),
                      WEFT_EUNSUPPORTED);
        }
        weft_topo_free(t);
    }
    /* A network switch that reduces is flagged as CollNet. */
    {
        static const char sharp[] = "node a compute host=x\nnode b compute host=y\n"
                                    "node s switch reduce=sharp\n"
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
