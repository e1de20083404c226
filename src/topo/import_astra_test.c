/* ASTRA-sim analytical network config import: the fixtures (exact nodes,
 * links, bandwidths converted from 2^30-byte GB, hosts), the building blocks
 * (2-NPU ring, FullyConnected, block lists), every error with its exact
 * message, and an allocation-failure sweep. */
#include <string.h>

#include "base/testing.h"
#include "weft/topo.h"

#define FIX WEFT_SHARED_FIXTURES "/astra-sim/"

static weft_rat R(int64_t n, int64_t d)
{
    weft_rat r = {0, 1};
    weft_rat_make(n, d, &r);
    return r;
}

static weft_link_id link_of(const weft_topo *t, const char *a, const char *b, bool *found)
{
    weft_node_id x, y;
    weft_link_id l = {0};
    *found = weft_topo_find_node(t, a, &x) && weft_topo_find_node(t, b, &y) &&
             weft_topo_find_link(t, x, y, &l);
    return l;
}

/* Link a -> b exists with bandwidth n/d GB/s and latency ln/ld ns. */
static bool has_link(const weft_topo *t, const char *a, const char *b, weft_rat bw, weft_rat lat)
{
    bool found;
    weft_link_id l = link_of(t, a, b, &found);
    return found && weft_rat_eq(weft_topo_link_bw(t, l), bw) &&
           weft_rat_eq(weft_topo_link_lat(t, l), lat);
}

static bool no_link(const weft_topo *t, const char *a, const char *b)
{
    bool found;
    link_of(t, a, b, &found);
    return !found;
}

static const char *host_of(const weft_topo *t, const char *node)
{
    weft_node_id n;
    if (!weft_topo_find_node(t, node, &n))
        return NULL;
    return weft_topo_node_attr(t, n, "host");
}

static void test_hgx_32(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_topo_load_astra_yml(FIX "hgx_h100_32gpu.yml", &t, &d), WEFT_OK);
    if (!t)
        return;
    weft_topo_stats s;
    CHECK_ERR(weft_topo_get_stats(t, &s), WEFT_OK);
    CHECK_INT(s.ranks, 32);
    CHECK_INT(s.nodes_by_kind[WEFT_NODE_SWITCH], 4); /* one per group of 8 */
    CHECK_INT(s.nodes, 36);
    /* 32 NPU <-> switch duplex links, 8 rings of 4 with 4 duplex edges each. */
    CHECK_INT(s.links, 64 + 64);
    CHECK_INT(s.hosts, 4);
    CHECK(s.strongly_connected);
    /* 400 GB/s of 2^30 bytes = 400 * 1073741824 / 10^9 = 429.4967296 GB/s. */
    weft_rat b400 = R(4294967296LL, 10000000), b50 = R(536870912, 10000000);
    CHECK(weft_rat_eq(b400, R(400LL * 1073741824, 1000000000)));
    weft_rat lat0 = R(93625, 100), lat1 = R(1000, 1);
    CHECK(has_link(t, "npu0", "d0.sw0", b400, lat0));
    CHECK(has_link(t, "d0.sw0", "npu7", b400, lat0));
    CHECK(has_link(t, "npu15", "d0.sw1", b400, lat0));
    CHECK(no_link(t, "npu8", "d0.sw0"));
    /* Dimension 1 rings join npu i, i+8, i+16, i+24, both ways. */
    CHECK(has_link(t, "npu3", "npu11", b50, lat1));
    CHECK(has_link(t, "npu11", "npu3", b50, lat1));
    CHECK(has_link(t, "npu27", "npu3", b50, lat1));
    CHECK(has_link(t, "npu3", "npu27", b50, lat1));
    CHECK(no_link(t, "npu3", "npu19"));
    CHECK(no_link(t, "npu3", "npu4"));
    CHECK_STR(host_of(t, "npu7"), "0");
    CHECK_STR(host_of(t, "npu8"), "1");
    CHECK_STR(host_of(t, "npu31"), "3");
    CHECK_STR(host_of(t, "d0.sw2"), "2");
    CHECK_STR(weft_topo_node_name(t, weft_topo_rank_node(t, (weft_rank){17})), "npu17");
    const char *note = weft_topo_note(t);
    CHECK_CONTAINS(note, "hgx_h100_32gpu.yml: Switch x8, Ring x4 = 32 NPUs");
    CHECK_CONTAINS(note, "(1 GB = 2^30 bytes) converted exactly to GB/s (10^9 bytes): "
                         "400 -> 429.4967296, 50 -> 53.6870912");
    CHECK_CONTAINS(note, "host = the NPU's group in dimension 0 (npu id / 8)");
    weft_topo_free(t);
}

static void test_tpu_and_validated(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_topo_load_astra_yml(FIX "tpu_v3_32_2dtorus.yml", &t, &d), WEFT_OK);
    if (t) {
        weft_topo_stats s;
        CHECK_ERR(weft_topo_get_stats(t, &s), WEFT_OK);
        CHECK_INT(s.ranks, 32);
        CHECK_INT(s.nodes, 32);
        /* A 4 x 8 torus: every NPU has 4 neighbours, one link to each. */
        CHECK_INT(s.links, 32 * 4);
        CHECK_INT(s.hosts, 8);
        weft_rat b80 = R(8589934592LL, 100000000), lat = R(1000, 1);
        CHECK(weft_rat_eq(s.min_injection, R(4 * 8589934592LL, 100000000)));
        CHECK(weft_rat_eq(s.max_injection, s.min_injection));
        CHECK(has_link(t, "npu0", "npu3", b80, lat));  /* ring wrap in dimension 0 */
        CHECK(has_link(t, "npu0", "npu28", b80, lat)); /* ring wrap in dimension 1 */
        CHECK(has_link(t, "npu5", "npu9", b80, lat));
        CHECK(no_link(t, "npu0", "npu5"));
        weft_topo_free(t);
    }
    CHECK_ERR(weft_topo_load_astra_yml(FIX "HGX-H100-validated.yml", &t, &d), WEFT_OK);
    if (t) {
        CHECK_INT(weft_topo_num_ranks(t), 8);
        CHECK_INT(weft_topo_num_nodes(t), 9);
        CHECK_INT(weft_topo_num_links(t), 16);
        CHECK_INT(weft_topo_num_hosts(t), 1);
        CHECK(has_link(t, "npu5", "d0.sw0", R(4294967296LL, 10000000), R(93625, 100)));
        weft_topo_free(t);
    }
}

static void test_blocks(void)
{
    /* Block lists, quotes, comments, a leading '---', CRLF; a 2-NPU ring is
     * one duplex link; FullyConnected joins every pair of each group. */
    const char *yml = "---\r\n"
                      "# comment\n"
                      "topology:\n"
                      "  - Ring   # two NPUs\n"
                      "\n"
                      "  - \"FullyConnected\"\r\n"
                      "  - 'Switch'\n"
                      "npus_count: [2,\n"
                      "   3, 2]   # spans lines\n"
                      "bandwidth: [ 1, 0.5, 2.5e1 ]\n"
                      "latency: [0, 1.5, 10]\n";
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_topo_parse_astra_yml(yml, strlen(yml), "b.yml", &t, &d), WEFT_OK);
    if (!t) {
        fprintf(stderr, "%s\n", d.msg);
        return;
    }
    weft_topo_stats s;
    CHECK_ERR(weft_topo_get_stats(t, &s), WEFT_OK);
    CHECK_INT(s.ranks, 12);
    CHECK_INT(s.nodes_by_kind[WEFT_NODE_SWITCH], 6); /* dimension 2: 6 groups of 2 */
    /* Ring: 6 groups x 1 duplex; FC: 4 groups x 3 pairs x 2; Switch: 12 x 2. */
    CHECK_INT(s.links, 12 + 24 + 24);
    CHECK_INT(s.hosts, 6);
    weft_rat one = R(1073741824, 1000000000);
    CHECK(has_link(t, "npu0", "npu1", one, R(0, 1)));
    CHECK(has_link(t, "npu1", "npu0", one, R(0, 1)));
    weft_rat half = R(536870912, 1000000000);
    CHECK(has_link(t, "npu1", "npu5", half, R(3, 2)));
    CHECK(has_link(t, "npu5", "npu3", half, R(3, 2)));
    CHECK(no_link(t, "npu1", "npu7"));
    CHECK(has_link(t, "npu7", "d2.sw1", R(25LL * 1073741824, 1000000000), R(10, 1)));
    CHECK(has_link(t, "d2.sw5", "npu11", R(25LL * 1073741824, 1000000000), R(10, 1)));
    CHECK(has_link(t, "npu5", "d2.sw5", R(25LL * 1073741824, 1000000000), R(10, 1)));
    CHECK(host_of(t, "d2.sw0") == NULL);
    weft_topo_free(t);
}

typedef struct bad_case {
    const char *yml;
    weft_err err;
    const char *msg;
} bad_case;

#define OK4 "npus_count: [4]\nbandwidth: [1]\nlatency: [0]\n"

static const bad_case bad[] = {
    {"", WEFT_EPARSE, "a.yml:1:1: missing key 'topology'"},
    {"topology: [Ring]\n"
     "npus_count: [4]\nbandwidth: [1]\n",
     WEFT_EPARSE, "a.yml:1:1: missing key 'latency'"},
    {"topology: [Torus]\n" OK4, WEFT_EPARSE,
     "a.yml:1:12: unknown topology 'Torus' (expected Ring, Switch or FullyConnected)"},
    {"topology: [Ring]\nnpus: [4]\n", WEFT_EPARSE,
     "a.yml:2:1: unknown key 'npus' (expected topology, npus_count, bandwidth, latency)"},
    {"topology: [Ring]\ntopology: [Ring]\n", WEFT_EPARSE,
     "a.yml:2:1: duplicate key 'topology' (first at line 1)"},
    {"topology: [Ring, Switch]\n" OK4, WEFT_EPARSE,
     "a.yml:2:1: 'npus_count' has 1 entries but 'topology' has 2"},
    {"topology: []\n" OK4, WEFT_EPARSE, "a.yml:1:1: 'topology' is empty (one entry per dimension)"},
    {"topology: [Ring]\nnpus_count: [1]\nbandwidth: [1]\nlatency: [0]\n", WEFT_EPARSE,
     "a.yml:2:14: npus_count '1' must be an integer of at least 2 (as in ASTRA-sim)"},
    {"topology: [Ring]\nnpus_count: [2.5]\nbandwidth: [1]\nlatency: [0]\n", WEFT_EPARSE,
     "a.yml:2:14: npus_count '2.5' must be an integer of at least 2 (as in ASTRA-sim)"},
    {"topology: [Ring]\nnpus_count: [4]\nbandwidth: [0]\nlatency: [0]\n", WEFT_EPARSE,
     "a.yml:3:13: bandwidth '0' must be > 0"},
    {"topology: [Ring]\nnpus_count: [4]\nbandwidth: [-5]\nlatency: [0]\n", WEFT_EPARSE,
     "a.yml:3:13: bandwidth '-5' must be > 0"},
    {"topology: [Ring]\nnpus_count: [4]\nbandwidth: [fast]\nlatency: [0]\n", WEFT_EPARSE,
     "a.yml:3:13: bandwidth 'fast' is not a number"},
    {"topology: [Ring]\nnpus_count: [4]\nbandwidth: [1]\nlatency: [-1]\n", WEFT_EPARSE,
     "a.yml:4:11: latency '-1' must be >= 0 (ns)"},
    {"topology: Ring\n", WEFT_EPARSE, "a.yml:1:11: 'topology' must be a list such as [ a, b ]"},
    {"topology: [Ring\n", WEFT_EPARSE, "a.yml:1:11: unterminated list (no ']')"},
    {"topology: [Ring; Switch]\n", WEFT_EPARSE,
     "a.yml:1:18: expected ',' or ']' in a list, not 'S'"},
    {"topology: [Ring] x\n", WEFT_EPARSE, "a.yml:1:18: unexpected 'x' after the value"},
    {"topology: [[Ring]]\n", WEFT_EPARSE,
     "a.yml:1:12: expected a number or a name (nested lists, maps, anchors, tags and block "
     "scalars are not supported)"},
    {"topology: [\"Ring]\n", WEFT_EPARSE, "a.yml:1:12: unterminated quoted string"},
    {"topology:\n\t- Ring\n", WEFT_EPARSE,
     "a.yml:2:1: tab in indentation (YAML allows only spaces)"},
    {"topology:\n  -Ring\n", WEFT_EPARSE, "a.yml:2:4: expected a blank after '-'"},
    {"  topology: [Ring]\n", WEFT_EPARSE,
     "a.yml:1:3: unexpected indentation (keys start in column 1)"},
    {"topology [Ring]\n", WEFT_EPARSE, "a.yml:1:9: expected ':' after the key 'topology'"},
    {"[Ring]\n", WEFT_EPARSE, "a.yml:1:1: expected a key such as 'topology:'"},
    {"topology: [Ring]\nnpus_count: [4]\n\0", WEFT_EPARSE,
     "a.yml:3:1: NUL byte (binary data, not text)"},
    {"topology: [Ring]\nnpus_count: [4, 4, 4]\nbandwidth: [1]\nlatency: [0]\n", WEFT_EPARSE,
     "a.yml:2:1: 'npus_count' has 3 entries but 'topology' has 1"},
    {"topology: [Ring, Ring]\nnpus_count: [8192, 4096]\nbandwidth: [1, 1]\nlatency: [0, 0]\n",
     WEFT_ELIMIT, "a.yml:2:20: more than 1048576 NPUs"},
    {"topology: [FullyConnected, Ring]\nnpus_count: [1024, 512]\nbandwidth: [1, 1]\n"
     "latency: [0, 0]\n",
     WEFT_ELIMIT, "a.yml: 537395200 links exceed the limit of 8388608"},
};

static void test_errors(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        weft_topo *t = NULL;
        weft_diag d;
        weft_diag_clear(&d);
        size_t len = strlen(bad[i].yml);
        if (strstr(bad[i].msg, "NUL"))
            len++;
        CHECK_ERR(weft_topo_parse_astra_yml(bad[i].yml, len, "a.yml", &t, &d), bad[i].err);
        CHECK_STR(d.msg, bad[i].msg);
        CHECK(t == NULL);
    }
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_load_astra_yml(FIX "missing.yml", &t, &d), WEFT_ENOENT);
    CHECK_STR(d.msg, FIX "missing.yml: cannot open: No such file or directory");
    CHECK_ERR(weft_topo_load_astra_yml(FIX, &t, &d), WEFT_EIO);
    CHECK_STR(d.msg, FIX ": is a directory");
    CHECK(t == NULL);
}

static weft_err ctor_hgx(void *arg)
{
    return weft_topo_load_astra_yml(FIX "hgx_h100_32gpu.yml", (weft_topo **)arg, NULL);
}

static void dtor_topo(void *arg)
{
    weft_topo_free(*(weft_topo **)arg);
}

int main(void)
{
    FILE *f = fopen(FIX "hgx_h100_32gpu.yml", "r");
    if (!f)
        return WEFT_TEST_SKIP;
    fclose(f);
    test_hgx_32();
    test_tpu_and_validated();
    test_blocks();
    test_errors();
    weft_topo *t = NULL;
    long n = weft_test_oom_sweep("astra hgx_h100_32gpu", ctor_hgx, dtor_topo, &t);
    printf("allocation failures injected: %ld (hgx_h100_32gpu)\n", n);
    CHECK(n > 10);
    return weft_test_done();
}
