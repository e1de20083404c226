/* Presets: the registry, exact structure of every preset (node counts by
 * kind, link counts, named links' bandwidths, hosts, rank order), the MI250
 * and DGX-1 link tables against their sources, parameter errors with their
 * exact messages, size limits, and allocation-failure sweeps. */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "topo/preset_internal.h"
#include "weft/topo.h"

static weft_rat R(int64_t n, int64_t d)
{
    weft_rat r = {0, 1};
    weft_rat_make(n, d, &r);
    return r;
}

static weft_topo *make(const char *spec)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_topo_preset(spec, &t, &d);
    if (e) {
        fprintf(stderr, "%s: %s: %s\n", spec, weft_err_name(e), d.msg);
        CHECK_ERR(e, WEFT_OK);
        return NULL;
    }
    return t;
}

/* Bandwidth of the link a -> b in GB/s, or -1/1 when there is none. */
static weft_rat bw(const weft_topo *t, const char *a, const char *b)
{
    weft_node_id na, nb;
    weft_link_id l;
    if (!weft_topo_find_node(t, a, &na) || !weft_topo_find_node(t, b, &nb) ||
        !weft_topo_find_link(t, na, nb, &l))
        return R(-1, 1);
    return weft_topo_link_bw(t, l);
}

static weft_rat lat(const weft_topo *t, const char *a, const char *b)
{
    weft_node_id na, nb;
    weft_link_id l;
    if (!weft_topo_find_node(t, a, &na) || !weft_topo_find_node(t, b, &nb) ||
        !weft_topo_find_link(t, na, nb, &l))
        return R(-1, 1);
    return weft_topo_link_lat(t, l);
}

#define CHECK_BW(t, a, b, n, d) CHECK(weft_rat_eq(bw(t, a, b), R(n, d)))
#define CHECK_NOLINK(t, a, b) CHECK(weft_rat_eq(bw(t, a, b), R(-1, 1)))

/* Host name of a node, "" for none, "?" for an unknown node. */
static const char *host_of(const weft_topo *t, const char *name)
{
    weft_node_id n;
    if (!weft_topo_find_node(t, name, &n))
        return "?";
    const char *h = weft_topo_host_name(t, weft_topo_node_host(t, n));
    return h ? h : "";
}

static const char *rank_name(const weft_topo *t, uint32_t r)
{
    return weft_topo_node_name(t, weft_topo_rank_node(t, (weft_rank){r}));
}

/* ranks, compute/switch/nic counts, links, hosts; balanced and connected. */
static void check_shape(const weft_topo *t, uint32_t ranks, uint32_t switches, uint32_t nics,
                        uint32_t links, uint32_t hosts)
{
    weft_topo_stats s;
    CHECK_ERR(weft_topo_get_stats(t, &s), WEFT_OK);
    CHECK_INT(s.ranks, ranks);
    CHECK_INT(s.nodes_by_kind[WEFT_NODE_COMPUTE], ranks);
    CHECK_INT(s.nodes_by_kind[WEFT_NODE_SWITCH], switches);
    CHECK_INT(s.nodes_by_kind[WEFT_NODE_NIC], nics);
    CHECK_INT(s.nodes_by_kind[WEFT_NODE_OCS], 0);
    CHECK_INT(s.nodes, ranks + switches + nics);
    CHECK_INT(s.links, links);
    CHECK_INT(s.hosts, hosts);
    CHECK(s.strongly_connected);
}

static void test_registry(void)
{
    CHECK_INT(weft_preset_count(), 20);
    CHECK(weft_preset_get(weft_preset_count()) == NULL);
    static const char *const names[] = {
        "ring",      "biring",   "full",      "switch",    "torus", "hypercube", "genkautz",
        "circulant", "debruijn", "bipartite", "a100",      "h100",  "h200",      "b200",
        "mi250",     "dgx1",     "fattree",   "dragonfly", "clos",  "mixnet"};
    for (size_t i = 0; i < weft_preset_count() && i < 20; i++) {
        const weft_preset_info *p = weft_preset_get(i);
        CHECK_STR(p->name, names[i]);
        CHECK(strncmp(p->usage, p->name, strlen(p->name)) == 0);
        CHECK(strlen(p->summary) > 80);
    }
}

static void test_basic(void)
{
    weft_topo *t = make("ring:5");
    if (t) {
        check_shape(t, 5, 0, 0, 5, 0);
        CHECK_STR(rank_name(t, 3), "rank3");
        CHECK_BW(t, "rank3", "rank4", 100, 1);
        CHECK_BW(t, "rank4", "rank0", 100, 1);
        CHECK_NOLINK(t, "rank0", "rank4");
        CHECK(weft_rat_eq(lat(t, "rank0", "rank1"), R(0, 1)));
        CHECK_STR(host_of(t, "rank0"), "");
        CHECK_STR(weft_topo_note(t), "preset ring:5");
        weft_topo_free(t);
    }
    /* Positional and named bandwidth/latency with units. */
    t = make("ring:4:12.5Gbps:1.5us");
    if (t) {
        CHECK_BW(t, "rank1", "rank2", 25, 16);
        CHECK(weft_rat_eq(lat(t, "rank1", "rank2"), R(1500, 1)));
        weft_topo_free(t);
    }
    t = make("ring:N=3,lat=7,bw=2400/7");
    if (t) {
        CHECK_BW(t, "rank2", "rank0", 2400, 7);
        CHECK(weft_rat_eq(lat(t, "rank2", "rank0"), R(7, 1)));
        weft_topo_free(t);
    }
    t = make("biring:2");
    if (t) {
        check_shape(t, 2, 0, 0, 2, 0);
        CHECK_BW(t, "rank0", "rank1", 100, 1); /* one pair, not two */
        CHECK_BW(t, "rank1", "rank0", 100, 1);
        weft_topo_free(t);
    }
    t = make("biring:4,bw=50");
    if (t) {
        check_shape(t, 4, 0, 0, 8, 0);
        CHECK_BW(t, "rank0", "rank3", 50, 1);
        CHECK_BW(t, "rank3", "rank0", 50, 1);
        CHECK_NOLINK(t, "rank0", "rank2");
        weft_topo_free(t);
    }
    t = make("full:5");
    if (t) {
        check_shape(t, 5, 0, 0, 20, 0);
        CHECK_BW(t, "rank4", "rank1", 100, 1);
        weft_topo_free(t);
    }
    t = make("switch:3,bw=25");
    if (t) {
        check_shape(t, 3, 1, 0, 6, 0);
        CHECK_BW(t, "rank2", "sw0", 25, 1);
        CHECK_BW(t, "sw0", "rank0", 25, 1);
        weft_node_id sw;
        CHECK(weft_topo_find_node(t, "sw0", &sw) && sw.v == 3);
        weft_topo_free(t);
    }
    t = make("switch:1");
    if (t) {
        check_shape(t, 1, 1, 0, 2, 0);
        weft_topo_free(t);
    }
}

static void test_torus_hypercube(void)
{
    /* 4x3: rank = x + 4y; every rank has 4 neighbours. */
    weft_topo *t = make("torus:4x3");
    if (t) {
        check_shape(t, 12, 0, 0, 48, 0);
        CHECK_BW(t, "rank5", "rank6", 100, 1);
        CHECK_BW(t, "rank5", "rank4", 100, 1);
        CHECK_BW(t, "rank5", "rank9", 100, 1);
        CHECK_BW(t, "rank5", "rank1", 100, 1);
        CHECK_BW(t, "rank3", "rank0", 100, 1); /* wrap in x */
        CHECK_BW(t, "rank9", "rank1", 100, 1); /* wrap in y */
        CHECK_NOLINK(t, "rank5", "rank10");
        weft_topo_free(t);
    }
    /* A size-2 dimension has one duplex pair per two ranks. */
    t = make("torus:2x3");
    if (t) {
        check_shape(t, 6, 0, 0, 18, 0);
        CHECK_BW(t, "rank0", "rank1", 100, 1);
        CHECK_BW(t, "rank1", "rank0", 100, 1);
        CHECK_BW(t, "rank1", "rank5", 100, 1);
        weft_topo_free(t);
    }
    t = make("torus:2x2x2:bw=10");
    if (t) {
        check_shape(t, 8, 0, 0, 24, 0);
        CHECK_BW(t, "rank0", "rank4", 10, 1);
        CHECK_BW(t, "rank6", "rank7", 10, 1);
        weft_topo_free(t);
    }
    t = make("hypercube:4");
    if (t) {
        check_shape(t, 16, 0, 0, 64, 0);
        CHECK_BW(t, "rank5", "rank4", 100, 1);
        CHECK_BW(t, "rank5", "rank7", 100, 1);
        CHECK_BW(t, "rank5", "rank1", 100, 1);
        CHECK_BW(t, "rank5", "rank13", 100, 1);
        CHECK_NOLINK(t, "rank5", "rank6");
        weft_topo_free(t);
    }
}

static void test_a100(void)
{
    weft_topo *t = make("a100");
    if (t) {
        check_shape(t, 8, 1, 0, 16, 1);
        CHECK_BW(t, "b0.gpu3", "b0.nvsw0", 300, 1);
        CHECK_BW(t, "b0.nvsw0", "b0.gpu7", 300, 1);
        CHECK_STR(host_of(t, "b0.nvsw0"), "b0");
        weft_topo_free(t);
    }
    t = make("a100:2");
    if (t) {
        /* 16 ranks; 2 NVSwitches + 2 IB switches; 16 NICs. Per box 8 GPU-NVSwitch,
         * 8 GPU-NIC and 8 NIC-IB duplex pairs. */
        check_shape(t, 16, 4, 16, 96, 2);
        CHECK_STR(weft_topo_note(t), "preset a100:2\nmodel: ForestColl's a100_topology "
                                     "(github.com/liangyuRain/ForestColl topologies.py)");
        for (uint32_t r = 0; r < 16; r++) {
            char want[32], nic[32], ib[8];
            snprintf(want, sizeof want, "b%u.gpu%u", r / 8, r % 8);
            snprintf(nic, sizeof nic, "b%u.nic%u", r / 8, r % 8);
            snprintf(ib, sizeof ib, "ib%u", r % 2);
            CHECK_STR(rank_name(t, r), want);
            CHECK_STR(host_of(t, want), r < 8 ? "b0" : "b1");
            CHECK_STR(host_of(t, nic), r < 8 ? "b0" : "b1");
            CHECK_BW(t, want, r < 8 ? "b0.nvsw0" : "b1.nvsw0", 300, 1);
            CHECK_BW(t, want, nic, 25, 1);
            CHECK_BW(t, nic, want, 25, 1);
            CHECK_BW(t, nic, ib, 25, 1);
            CHECK_BW(t, ib, nic, 25, 1);
            CHECK_NOLINK(t, nic, r % 2 ? "ib0" : "ib1");
        }
        CHECK_STR(host_of(t, "ib0"), "");
        CHECK_STR(host_of(t, "b1.nvsw0"), "b1");
        CHECK_NOLINK(t, "b0.gpu0", "b1.nvsw0");
        weft_node_id n;
        CHECK(weft_topo_find_node(t, "ib1", &n) && n.v == 35);
        CHECK(weft_topo_find_node(t, "b1.gpu0", &n) && n.v == 17);
        weft_topo_free(t);
    }
    t = make("a100:4,nvbw=250,nicbw=200Gbps");
    if (t) {
        check_shape(t, 32, 6, 32, 192, 4);
        CHECK_BW(t, "b3.gpu6", "b3.nvsw0", 250, 1);
        CHECK_BW(t, "b3.nic5", "ib1", 25, 1);
        weft_topo_free(t);
    }
}

static void test_h100(void)
{
    weft_topo *t = make("h100:1");
    if (t) {
        check_shape(t, 8, 1, 0, 16, 1);
        CHECK_BW(t, "b0.gpu0", "b0.nvsw0", 450, 1);
        weft_topo_free(t);
    }
    t = make("h100:2");
    if (t) {
        check_shape(t, 16, 2 + 8, 16, 96, 2);
        CHECK_BW(t, "b1.gpu5", "b1.nvsw0", 450, 1);
        CHECK_BW(t, "b1.gpu5", "b1.nic5", 50, 1);
        CHECK_BW(t, "b1.nic5", "rail5", 50, 1);
        CHECK_BW(t, "rail5", "b0.nic5", 50, 1);
        CHECK_NOLINK(t, "b1.nic5", "rail4");
        CHECK_STR(host_of(t, "rail7"), "");
        CHECK_STR(rank_name(t, 9), "b1.gpu1");
        weft_node_id sw = {0}, rail = {0};
        CHECK(weft_topo_find_node(t, "b1.nvsw0", &sw));
        CHECK(weft_topo_find_node(t, "rail5", &rail));
        CHECK_STR(weft_topo_node_attr(t, sw, "reduce"), "nvls");
        CHECK_INT(weft_topo_node_reduce(t, sw), WEFT_REDUCE_NVLS);
        CHECK_INT(weft_topo_node_reduce(t, rail), WEFT_REDUCE_NONE);
        weft_topo_free(t);
    }
    /* sharp=1: the rail switches are SHARP InfiniBand switches. */
    t = make("h100:2,sharp=1");
    if (t) {
        weft_node_id rail;
        CHECK(weft_topo_find_node(t, "rail5", &rail));
        CHECK_STR(weft_topo_node_attr(t, rail, "reduce"), "sharp");
        CHECK_INT(weft_topo_node_reduce(t, rail), WEFT_REDUCE_SHARP);
        weft_topo_free(t);
    }
    t = make("h200:1");
    if (t) {
        check_shape(t, 8, 1, 0, 16, 1);
        CHECK_BW(t, "b0.gpu0", "b0.nvsw0", 450, 1);
        CHECK_STR(weft_topo_node_attr(t, weft_topo_rank_node(t, (weft_rank){0}), "arch"), "hopper");
        weft_topo_free(t);
    }
    t = make("b200:1");
    if (t) {
        check_shape(t, 8, 1, 0, 16, 1);
        CHECK_BW(t, "b0.gpu0", "b0.nvsw0", 900, 1);
        CHECK_STR(weft_topo_node_attr(t, weft_topo_rank_node(t, (weft_rank){0}), "arch"),
                  "blackwell");
        weft_node_id sw;
        CHECK(weft_topo_find_node(t, "b0.nvsw0", &sw));
        CHECK_INT(weft_topo_node_reduce(t, sw), WEFT_REDUCE_NVLS);
        weft_topo_free(t);
    }
}

/* Reads the 16x16 matrix of the shared fixture; false if it is missing. */
static bool read_mi250_fixture(int m[16][16])
{
    char *text = weft_test_read_file(WEFT_SHARED_FIXTURES "/mi250-xgmi-links.txt", NULL);
    if (!text)
        return false;
    int k = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        for (char *p = line; *p;) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p)
                break;
            if (k < 256)
                m[k / 16][k % 16] = (int)v;
            k++;
            p = end;
        }
    }
    free(text);
    CHECK_INT(k, 256);
    return k == 256;
}

static void test_mi250(void)
{
    int m[16][16];
    if (read_mi250_fixture(m)) {
        for (int i = 0; i < 16; i++) {
            for (int j = 0; j < 16; j++)
                CHECK_INT(weft__mi250_xgmi[i][j], m[i][j]);
        }
    } else {
        fprintf(stderr, "note: shared fixture mi250-xgmi-links.txt not found, skipped\n");
    }
    weft_topo *t = make("mi250");
    if (t) {
        /* 28 linked GCD pairs, one duplex each. */
        check_shape(t, 16, 0, 0, 56, 1);
        for (int i = 0; i < 16; i++) {
            for (int j = 0; j < 16; j++) {
                char a[16], b[16];
                snprintf(a, sizeof a, "b0.gcd%d", i);
                snprintf(b, sizeof b, "b0.gcd%d", j);
                if (weft__mi250_xgmi[i][j])
                    CHECK_BW(t, a, b, 50 * weft__mi250_xgmi[i][j], 1);
                else
                    CHECK_NOLINK(t, a, b);
            }
        }
        CHECK_BW(t, "b0.gcd0", "b0.gcd1", 200, 1);
        CHECK_BW(t, "b0.gcd15", "b0.gcd11", 100, 1);
        CHECK_BW(t, "b0.gcd0", "b0.gcd8", 50, 1);
        weft_topo_free(t);
    }
    t = make("mi250:2");
    if (t) {
        check_shape(t, 32, 1, 0, 2 * 56 + 2 * 32, 2);
        CHECK_BW(t, "b1.gcd9", "ib0", 16, 1);
        CHECK_BW(t, "ib0", "b0.gcd0", 16, 1);
        CHECK_BW(t, "b1.gcd2", "b1.gcd3", 200, 1);
        CHECK_NOLINK(t, "b0.gcd2", "b1.gcd3");
        CHECK_STR(rank_name(t, 31), "b1.gcd15");
        weft_topo_free(t);
    }
}

static void test_dgx1(void)
{
    /* Hybrid cube-mesh: quads 0-3 and 4-7 fully connected, i <-> i+4, six
     * NVLinks per GPU. */
    int doubles = 0;
    for (int i = 0; i < 8; i++) {
        int sum = 0;
        for (int j = 0; j < 8; j++) {
            sum += weft__dgx1_nvlink[i][j];
            CHECK_INT(weft__dgx1_nvlink[i][j], weft__dgx1_nvlink[j][i]);
            bool linked = (i / 4 == j / 4 && i != j) || (i % 4 == j % 4 && i != j);
            CHECK_INT(weft__dgx1_nvlink[i][j] != 0, linked);
            doubles += weft__dgx1_nvlink[i][j] == 2;
        }
        CHECK_INT(sum, 6);
    }
    CHECK_INT(doubles, 16); /* 8 doubled pairs */
    weft_topo *t = make("dgx1");
    if (t) {
        check_shape(t, 8, 0, 0, 24 + 8, 1);
        CHECK_BW(t, "gpu0", "gpu1", 50, 1);
        CHECK_BW(t, "gpu0", "gpu2", 25, 1);
        CHECK_BW(t, "gpu0", "gpu4", 50, 1);
        CHECK_BW(t, "gpu3", "gpu7", 25, 1);
        CHECK_BW(t, "gpu6", "gpu2", 50, 1);
        CHECK_NOLINK(t, "gpu0", "gpu5");
        CHECK_STR(host_of(t, "gpu5"), "b0");
        weft_topo_stats s;
        CHECK_ERR(weft_topo_get_stats(t, &s), WEFT_OK);
        CHECK(weft_rat_eq(s.min_injection, R(150, 1)));
        CHECK(weft_rat_eq(s.max_injection, R(150, 1)));
        weft_topo_free(t);
    }
    t = make("dgx1:bw=20");
    if (t) {
        CHECK_BW(t, "gpu7", "gpu6", 40, 1);
        weft_topo_free(t);
    }
}

static void test_clos(void)
{
    /* Rail-optimised: 3 hosts of 4 ranks and 2 NICs (2 ranks per NIC),
     * 2 hosts per leaf: host groups {0,1} {2}, leaves 0-1 (group 0) and
     * 2-3 (group 1); spines = ceil(2 / 1) = 2. */
    weft_topo *t = make("clos:hosts=3,gpus=4,nics=2,leafports=2");
    if (t) {
        /* 12 ranks; 3 host switches + 4 leaves + 2 spines; 6 NICs.
         * Pairs: 12 rank-switch, 12 rank-NIC, 6 NIC-leaf, 8 leaf-spine. */
        check_shape(t, 12, 3 + 4 + 2, 6, 2 * 38, 3);
        CHECK_BW(t, "b0.gpu3", "b0.nvsw0", 450, 1);
        CHECK_BW(t, "b0.gpu3", "b0.nic1", 50, 1);
        CHECK_BW(t, "b0.gpu1", "b0.nic0", 50, 1);
        CHECK_NOLINK(t, "b0.gpu1", "b0.nic1");
        CHECK_BW(t, "b0.nic1", "leaf1", 50, 1);
        CHECK_BW(t, "b1.nic0", "leaf0", 50, 1);
        CHECK_BW(t, "b2.nic1", "leaf3", 50, 1);
        CHECK_BW(t, "leaf3", "spine1", 50, 1);
        CHECK_BW(t, "spine0", "leaf2", 50, 1);
        CHECK_STR(host_of(t, "b2.nic1"), "b2");
        CHECK_STR(host_of(t, "b2.nvsw0"), "b2");
        CHECK_STR(host_of(t, "leaf0"), "");
        CHECK_STR(rank_name(t, 5), "b1.gpu1");
        weft_node_id n;
        CHECK(weft_topo_find_node(t, "leaf0", &n) && n.v == 21);
        weft_topo_free(t);
    }
    /* Packed NICs, oversubscribed 3:1 with an exact fraction, latency. */
    t = make("clos:hosts=3,gpus=4,nics=2,rail=0,leafports=4,oversub=3,lat=1us,nvbw=0");
    if (t) {
        /* Leaves ceil(6/4) = 2, spines ceil(4/3) = 2, no host switch. */
        check_shape(t, 12, 2 + 2, 6, 2 * (12 + 6 + 4), 3);
        CHECK_BW(t, "b1.nic1", "leaf0", 50, 1);
        CHECK_BW(t, "b2.nic0", "leaf1", 50, 1);
        CHECK_BW(t, "leaf1", "spine0", 100, 3); /* 4 * 50 / 3 / 2 */
        CHECK(weft_rat_eq(lat(t, "leaf1", "spine0"), R(1000, 1)));
        CHECK(weft_rat_eq(lat(t, "b2.nic0", "leaf1"), R(1000, 1)));
        /* In the host: half of a ConnectX-6's 600 ns (docs/presets.md). */
        CHECK(weft_rat_eq(lat(t, "b2.gpu0", "b2.nic0"), R(300, 1)));
        CHECK_NOLINK(t, "b0.gpu0", "b0.nvsw0");
        weft_topo_free(t);
    }
    /* Three levels: 4 leaves in 2 pods, 2 spines per pod, 3 cores. */
    t = make("clos:hosts=4,gpus=2,nics=2,leafports=2,levels=3,podleaves=2,spines=2,cores=3");
    if (t) {
        /* Pairs: 8 rank-switch, 8 rank-NIC, 8 NIC-leaf, 4*2 leaf-spine,
         * 4*3 spine-core. */
        check_shape(t, 8, 4 + 4 + 4 + 3, 8, 2 * 44, 4);
        CHECK_BW(t, "leaf2", "pod1.spine1", 50, 1);
        CHECK_NOLINK(t, "leaf2", "pod0.spine0");
        CHECK_BW(t, "pod0.spine1", "core2", 100, 3); /* 2 leaves * 100 / 2 spines / 3 */
        CHECK_BW(t, "core0", "pod1.spine0", 100, 3);
        CHECK_BW(t, "b3.nic1", "leaf3", 50, 1);
        weft_topo_free(t);
    }
    /* nvbw = 0 in any unit: no host switch. 1 host of 8 ranks, 8 rails. */
    t = make("clos:hosts=1,nvbw=0GB/s,nicbw=1GiB/s,spines=1");
    if (t) {
        check_shape(t, 8, 8 + 1, 8, 2 * (8 + 8 + 8), 1);
        CHECK_BW(t, "b0.nic7", "leaf7", 1073741824, 1000000000);
        CHECK_BW(t, "leaf7", "spine0", 32 * 1073741824LL, 1000000000); /* 32 ports */
        weft_topo_free(t);
    }
    /* One rank per host, one NIC: no host switch. */
    t = make("clos:hosts=5,gpus=1,nics=1,leafports=2,spines=1");
    if (t) {
        check_shape(t, 5, 3 + 1, 5, 2 * (5 + 5 + 3), 5);
        CHECK_BW(t, "leaf2", "spine0", 100, 1);
        weft_topo_free(t);
    }
    /* The 100,000-rank instance the simulator benchmark uses: 12,500 hosts;
     * 391 groups * 8 rails = 3128 leaves, 32 spines. */
    t = make("clos:hosts=12500");
    if (t) {
        check_shape(t, 100000, 12500 + 3128 + 32, 100000, 2 * (200000 + 100000 + 3128 * 32), 12500);
        CHECK_BW(t, "b12499.nic7", "leaf3127", 50, 1);
        CHECK_STR(rank_name(t, 99999), "b12499.gpu7");
        weft_topo_free(t);
    }
}

static void test_fattree_dragonfly(void)
{
    /* k = 4: 16 ranks, 8 edge + 8 aggregation + 4 core switches; 3 * 16 pairs. */
    weft_topo *t = make("fattree:4");
    if (t) {
        check_shape(t, 16, 20, 0, 96, 0);
        CHECK_BW(t, "rank5", "pod1.edge0", 100, 1);
        CHECK_BW(t, "rank15", "pod3.edge1", 100, 1);
        CHECK_BW(t, "pod1.edge0", "pod1.agg1", 100, 1);
        CHECK_NOLINK(t, "pod1.edge0", "pod2.agg1");
        CHECK_BW(t, "pod1.agg1", "core2", 100, 1);
        CHECK_BW(t, "core3", "pod2.agg1", 100, 1);
        CHECK_NOLINK(t, "pod1.agg1", "core1");
        weft_node_id n;
        CHECK(weft_topo_find_node(t, "core0", &n) && n.v == 32);
        weft_topo_free(t);
    }
    /* Default: p=2, a=4, h=2, g=9: 72 ranks, 36 routers; pairs 72 + 9*6 + 36. */
    t = make("dragonfly");
    if (t) {
        check_shape(t, 72, 36, 0, 2 * (72 + 54 + 36), 0);
        CHECK_BW(t, "rank13", "g1.r2", 100, 1);
        CHECK_BW(t, "g0.r3", "g8.r0", 100, 1);
        CHECK_BW(t, "g3.r2", "g5.r1", 100, 1);
        CHECK_BW(t, "g4.r0", "g4.r3", 100, 1);
        CHECK_NOLINK(t, "g3.r2", "g5.r0");
        /* Every router: p ranks + (a-1) local + h global links. */
        for (uint32_t v = 72; v < 108; v++) {
            uint32_t first, count;
            weft_topo_out_links(t, (weft_node_id){v}, &first, &count);
            CHECK_INT(count, 2 + 3 + 2);
        }
        weft_topo_free(t);
    }
    t = make("dragonfly:g=3,gbw=25,lat=2us");
    if (t) {
        check_shape(t, 24, 12, 0, 2 * (24 + 18 + 3), 0);
        CHECK_BW(t, "g0.r0", "g1.r0", 25, 1);
        CHECK_BW(t, "g2.r0", "g0.r0", 25, 1);
        CHECK_BW(t, "g1.r0", "g2.r0", 25, 1);
        CHECK_BW(t, "g1.r0", "g1.r1", 100, 1);
        CHECK(weft_rat_eq(lat(t, "g1.r0", "g2.r0"), R(2000, 1)));
        weft_topo_free(t);
    }
}

typedef struct bad_case {
    const char *spec;
    weft_err err;
    const char *msg;
} bad_case;

static const bad_case bad[] = {
    {"ring:abc", WEFT_EINVAL, "ring:abc: N must be an integer"},
    {"ring:-3", WEFT_EINVAL, "ring:-3: N must be an integer"},
    {"ring:1", WEFT_EINVAL, "ring:1: N must be >= 2"},
    {"ring:99999999999", WEFT_EINVAL, "ring:99999999999: N must be <= 4294967295"},
    {"ring", WEFT_EINVAL, "ring: missing N (usage: ring:N[,bw=BW][,lat=LAT])"},
    {"ring:", WEFT_EINVAL, "ring:: empty parameter list (usage: ring:N[,bw=BW][,lat=LAT])"},
    {"ring:4,,bw=1", WEFT_EINVAL,
     "ring:4,,bw=1: empty parameter (usage: ring:N[,bw=BW][,lat=LAT])"},
    {"ring:4:1:2:3", WEFT_EINVAL,
     "ring:4:1:2:3: too many parameters (usage: ring:N[,bw=BW][,lat=LAT])"},
    {"ring:4,speed=3", WEFT_EINVAL,
     "ring:4,speed=3: unknown parameter 'speed' (ring takes N, bw, lat)"},
    {"ring:4,N=5", WEFT_EINVAL, "ring:4,N=5: parameter 'N' given twice"},
    {"ring:4,bw=0", WEFT_EINVAL, "ring:4,bw=0: bw must be > 0"},
    {"ring:4,bw=-5", WEFT_EINVAL, "ring:4,bw=-5: bw must be > 0"},
    {"ring:4,bw=fast", WEFT_EINVAL,
     "ring:4,bw=fast: bw must be a bandwidth such as 100, 12.5 or 400Gbps (GB/s unless a unit is "
     "given: GB/s, Gbps, Gb/s, GiB/s, MB/s, MiB/s, Mbps, Mb/s, TB/s, Tbps)"},
    {"ring:4,bw=5furlongs", WEFT_EINVAL,
     "ring:4,bw=5furlongs: bw must be a bandwidth such as 100, 12.5 or 400Gbps (GB/s unless a unit "
     "is given: GB/s, Gbps, Gb/s, GiB/s, MB/s, MiB/s, Mbps, Mb/s, TB/s, Tbps)"},
    {"ring:4,lat=-1", WEFT_EINVAL, "ring:4,lat=-1: lat must be >= 0"},
    {"ring:4,lat=-1us", WEFT_EINVAL, "ring:4,lat=-1us: lat must be >= 0"},
    {"ring:4,bw=0Gbps", WEFT_EINVAL, "ring:4,bw=0Gbps: bw must be > 0"},
    {"clos:nvbw=-1GB/s", WEFT_EINVAL, "clos:nvbw=-1GB/s: nvbw must be >= 0"},
    {"ring:4,lat=3parsecs", WEFT_EINVAL,
     "ring:4,lat=3parsecs: lat must be a latency such as 500 or 1.5us (ns unless a unit is given: "
     "ns, us, ms, s)"},
    {"biring:1", WEFT_EINVAL, "biring:1: N must be >= 2"},
    {"switch:0", WEFT_EINVAL, "switch:0: N must be >= 1"},
    {"torus:4x0", WEFT_EINVAL, "torus:4x0: dimension 2 must be >= 2"},
    {"torus:1x4", WEFT_EINVAL, "torus:1x4: dimension 1 must be >= 2"},
    {"torus:4x", WEFT_EINVAL, "torus:4x: dimension 2 must be an integer (dims look like 4x4x4)"},
    {"torus:4by4", WEFT_EINVAL,
     "torus:4by4: dimension 1 must be an integer (dims look like 4x4x4)"},
    {"torus:2x2x2x2x2x2x2x2x2", WEFT_EINVAL, "torus:2x2x2x2x2x2x2x2x2: at most 8 dimensions"},
    {"torus:99999999999x2", WEFT_EINVAL, "torus:99999999999x2: dimension 1 must be <= 4294967295"},
    {"torus", WEFT_EINVAL, "torus: missing dims (usage: torus:AxB[xC...][,bw=BW][,lat=LAT])"},
    {"hypercube:0", WEFT_EINVAL, "hypercube:0: D must be >= 1"},
    {"hypercube:21", WEFT_EINVAL, "hypercube:21: D must be <= 20"},
    {"a100:0", WEFT_EINVAL, "a100:0: boxes must be >= 1"},
    {"a100:2,nicbw=0", WEFT_EINVAL, "a100:2,nicbw=0: nicbw must be > 0"},
    {"h100:x", WEFT_EINVAL, "h100:x: boxes must be an integer"},
    {"h100:2,sharp=2", WEFT_EINVAL, "h100:2,sharp=2: sharp must be <= 1"},
    {"mi250:2,xgmibw=9223372036854775807", WEFT_EINVAL,
     "mi250:2,xgmibw=9223372036854775807: xgmibw is too large"},
    {"dgx1:bw=0", WEFT_EINVAL, "dgx1:bw=0: bw must be > 0"},
    {"dgx1:25:2", WEFT_EINVAL, "dgx1:25:2: too many parameters (usage: dgx1[:bw=BW])"},
    {"clos:nics=3", WEFT_EINVAL, "clos:nics=3: nics must divide gpus (8)"},
    {"clos:levels=4", WEFT_EINVAL, "clos:levels=4: levels must be <= 3"},
    {"clos:rail=2", WEFT_EINVAL, "clos:rail=2: rail must be <= 1"},
    {"clos:oversub=0", WEFT_EINVAL, "clos:oversub=0: oversub must be > 0"},
    {"clos:oversub=2:1", WEFT_EINVAL,
     "clos:oversub=2:1: unnamed value '1' after named parameters (usage: "
     "clos[:hosts=H,gpus=G,nics=K,nicbw=BW,nvbw=BW,rail=0|1,leafports=P,oversub=R,spines=S,levels="
     "2|3,podleaves=L,cores=C,lat=LAT])"},
    {"clos:cores=4", WEFT_EINVAL, "clos:cores=4: cores needs levels=3"},
    {"clos:nvbw=-1", WEFT_EINVAL, "clos:nvbw=-1: nvbw must be >= 0"},
    {"full:100000", WEFT_ELIMIT,
     "full:100000: too large: 9999900000 links (presets are limited to 33554432)"},
    {"torus:65536x65536x65536", WEFT_ELIMIT,
     "torus:65536x65536x65536: too large: 281474976710656 nodes (presets are limited to 8388608)"},
    {"ring:4294967295", WEFT_ELIMIT,
     "ring:4294967295: too large: 4294967295 nodes (presets are limited to 8388608)"},
    {"clos:hosts=4294967295,gpus=4294967295,nics=1", WEFT_ELIMIT,
     "clos:hosts=4294967295,gpus=4294967295,nics=1: too large: more than 8388608 nodes (presets "
     "are limited to 8388608)"},
    {"a100:1000000", WEFT_ELIMIT,
     "a100:1000000: too large: 17000002 nodes (presets are limited to 8388608)"},
    {"fattree:3", WEFT_EINVAL, "fattree:3: k must be even"},
    {"fattree", WEFT_EINVAL, "fattree: missing k (usage: fattree:K[,bw=BW][,lat=LAT])"},
    {"fattree:1024", WEFT_ELIMIT,
     "fattree:1024: too large: 269746176 nodes (presets are limited to 8388608)"},
    {"dragonfly:g=10", WEFT_EINVAL, "dragonfly:g=10: g must be <= a*h+1 (9)"},
    {"dragonfly:g=1", WEFT_EINVAL, "dragonfly:g=1: g must be >= 2"},
    {"dragonfly:a=0", WEFT_EINVAL, "dragonfly:a=0: a must be >= 1"},
    {"dragonfly:gbw=0", WEFT_EINVAL, "dragonfly:gbw=0: gbw must be > 0"},
    {"nosuch:4", WEFT_ENOENT,
     "unknown preset 'nosuch' (presets: ring, biring, full, switch, torus, hypercube, genkautz, "
     "circulant, debruijn, bipartite, a100, h100, h200, b200, mi250, dgx1, fattree, dragonfly, "
     "clos, mixnet)"},
    {"", WEFT_ENOENT,
     "unknown preset '' (presets: ring, biring, full, switch, torus, hypercube, genkautz, "
     "circulant, debruijn, bipartite, a100, h100, h200, b200, mi250, dgx1, fattree, dragonfly, "
     "clos, mixnet)"},
    {"Ring:4", WEFT_ENOENT,
     "unknown preset 'Ring' (presets: ring, biring, full, switch, torus, hypercube, genkautz, "
     "circulant, debruijn, bipartite, a100, h100, h200, b200, mi250, dgx1, fattree, dragonfly, "
     "clos, mixnet)"},
};

static void test_errors(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        weft_diag d;
        weft_diag_clear(&d);
        weft_topo *t = (weft_topo *)&d; /* must stay untouched */
        weft_err e = weft_topo_preset(bad[i].spec, &t, &d);
        if (e != bad[i].err)
            fprintf(stderr, "spec '%s'\n", bad[i].spec);
        CHECK_ERR(e, bad[i].err);
        CHECK_INT(d.err, bad[i].err);
        CHECK_STR(d.msg, bad[i].msg);
        CHECK(t == (weft_topo *)&d);
    }
    weft_topo *t;
    CHECK_ERR(weft_topo_preset(NULL, &t, NULL), WEFT_EINVAL);
    CHECK_ERR(weft_topo_preset("ring:x", &t, NULL), WEFT_EINVAL);
}

static weft_err ctor_preset(void *arg)
{
    void **io = arg;
    return weft_topo_preset((const char *)io[0], (weft_topo **)&io[1], NULL);
}

static void dtor_preset(void *arg)
{
    void **io = arg;
    weft_topo_free(io[1]);
}

static void test_oom(void)
{
    static const char *const specs[] = {"a100:2",
                                        "mi250:2",
                                        "dgx1",
                                        "torus:3x2",
                                        "clos:hosts=3,gpus=4,nics=2,leafports=2,levels=3",
                                        "fattree:4",
                                        "dragonfly:g=3"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        void *io[2] = {(void *)specs[i], NULL};
        CHECK(weft_test_oom_sweep(specs[i], ctor_preset, dtor_preset, io) > 5);
    }
}

/* The physical latencies and GPU generations of the hardware presets
 * (docs/presets.md gives the sources). */
static void test_latencies(void)
{
    weft_topo *t = make("a100:2");
    if (t) {
        CHECK(weft_rat_eq(lat(t, "b0.gpu0", "b0.nvsw0"), R(300, 1)));
        CHECK(weft_rat_eq(lat(t, "b1.nvsw0", "b1.gpu7"), R(300, 1)));
        CHECK(weft_rat_eq(lat(t, "b0.gpu3", "b0.nic3"), R(300, 1)));
        CHECK(weft_rat_eq(lat(t, "b0.nic3", "ib1"), R(65, 1)));
        weft_node_id n;
        CHECK(weft_topo_find_node(t, "b1.gpu2", &n));
        CHECK_STR(weft_topo_node_attr(t, n, "arch"), "ampere");
        CHECK(weft_topo_find_node(t, "b1.nvsw0", &n));
        CHECK(weft_topo_node_attr(t, n, "arch") == NULL);
        weft_topo_free(t);
    }
    t = make("h100:2");
    if (t) {
        CHECK(weft_rat_eq(lat(t, "b1.nic5", "rail5"), R(65, 1)));
        weft_node_id n;
        CHECK(weft_topo_find_node(t, "b0.gpu0", &n));
        CHECK_STR(weft_topo_node_attr(t, n, "arch"), "hopper");
        weft_topo_free(t);
    }
    t = make("dgx1");
    if (t) {
        CHECK(weft_rat_eq(lat(t, "gpu0", "gpu1"), R(600, 1)));
        weft_node_id n;
        CHECK(weft_topo_find_node(t, "gpu5", &n));
        CHECK_STR(weft_topo_node_attr(t, n, "arch"), "volta");
        weft_topo_free(t);
    }
    t = make("mi250:2");
    if (t) {
        CHECK(weft_rat_eq(lat(t, "b0.gcd0", "b0.gcd1"), R(600, 1)));
        CHECK(weft_rat_eq(lat(t, "b1.gcd3", "ib0"), R(365, 1)));
        weft_node_id n;
        CHECK(weft_topo_find_node(t, "b1.gcd3", &n));
        CHECK_STR(weft_topo_node_attr(t, n, "arch"), "cdna2");
        weft_topo_free(t);
    }
    t = make("clos:hosts=2");
    if (t) {
        CHECK(weft_rat_eq(lat(t, "b0.gpu0", "b0.nvsw0"), R(300, 1)));
        CHECK(weft_rat_eq(lat(t, "b1.nic2", "leaf2"), R(65, 1)));
        weft_node_id n;
        CHECK(weft_topo_find_node(t, "b1.gpu6", &n));
        CHECK_STR(weft_topo_node_attr(t, n, "arch"), "hopper");
        weft_topo_free(t);
    }
}

int main(void)
{
    test_registry();
    test_basic();
    test_torus_hypercube();
    test_a100();
    test_h100();
    test_mi250();
    test_dgx1();
    test_clos();
    test_latencies();
    test_fattree_dragonfly();
    test_errors();
    test_oom();
    return weft_test_done();
}
