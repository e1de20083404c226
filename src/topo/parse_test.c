/* The .topo parser: exact values of every unit, comments, CRLF and tabs, the
 * table of malformed inputs with their exact messages, files, and the
 * allocation-failure sweeps. */
#include <stdlib.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/testing.h"
#include "weft/topo.h"

static weft_rat R(int64_t n, int64_t d)
{
    weft_rat r = {0, 1};
    weft_rat_make(n, d, &r);
    return r;
}

/* The link src -> dst of t, by name; checks it exists. */
static bool link_of(const weft_topo *t, const char *src, const char *dst, weft_rat *bw,
                    weft_rat *lat)
{
    weft_node_id a, b;
    weft_link_id l;
    if (!weft_topo_find_node(t, src, &a) || !weft_topo_find_node(t, dst, &b) ||
        !weft_topo_find_link(t, a, b, &l))
        return false;
    *bw = weft_topo_link_bw(t, l);
    *lat = weft_topo_link_lat(t, l);
    return true;
}

#define CHECK_LINK(t, src, dst, bw_n, bw_d, lat_n, lat_d)                                          \
    do {                                                                                           \
        weft_rat bw_ = {0, 0}, lat_ = {0, 0};                                                      \
        CHECK(link_of((t), (src), (dst), &bw_, &lat_));                                            \
        CHECK(weft_rat_eq(bw_, R((bw_n), (bw_d))));                                                \
        CHECK(weft_rat_eq(lat_, R((lat_n), (lat_d))));                                             \
    } while (0)

static const char valid_text[] =
    "\xef\xbb\xbf# A fabric using every unit.   \n"
    "node gpu0 compute host=h0 vendor=nv sku=\n"
    "node\tgpu1\tcompute  host=h0\r\n"
    "   node sw0 switch   # the switch\n"
    "node nic0 nic\n"
    "node ocs0 ocs\n"
    "node gpu2 compute host=h1 # caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n"
    "\n"
    "duplex gpu0 sw0 200Gbps 0.7us\n"
    "link gpu1 sw0 1GiB/s\n"
    "link sw0 gpu1 2400/7GB/s 5ns\r\n"
    "link sw0 gpu1 100/7GB/s 5ns#parallel: adds up\n"
    "duplex gpu0 nic0 1.5TB/s 1ms\n"
    "link nic0 ocs0 8Mbps 2s\n"
    "link ocs0 nic0 1MB/s 1e3ns\n" /* an OCS port carries one rate both ways */
    "link gpu1 nic0 12.5e3MB/s\n"
    "link nic0 gpu1 1Tbps 0ns\n"
    "link gpu0 gpu1 400Gb/s\n"
    "link gpu1 gpu0 8000Mb/s 2.5e-1us\n"
    "duplex gpu2 sw0 1GB/s\n"
    "\t# the last line has no newline\n"
    "link gpu2 gpu0 +3/4GB/s";

static void test_valid(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_topo_parse(valid_text, sizeof valid_text - 1, "v.topo", &t, &d), WEFT_OK);
    if (!t) {
        fprintf(stderr, "%s\n", d.msg);
        return;
    }
    CHECK_INT(weft_topo_num_nodes(t), 6);
    CHECK_INT(weft_topo_num_ranks(t), 3);
    CHECK_INT(weft_topo_num_hosts(t), 2);
    CHECK_INT(weft_topo_num_links(t), 15);
    weft_node_id n;
    CHECK(weft_topo_find_node(t, "gpu2", &n));
    CHECK_INT(n.v, 5);
    CHECK_STR(weft_topo_host_name(t, weft_topo_node_host(t, n)), "h1");
    weft_rank r;
    CHECK(weft_topo_node_rank(t, n, &r));
    CHECK_INT(r.v, 2);
    CHECK(weft_topo_find_node(t, "gpu0", &n));
    CHECK_STR(weft_topo_node_attrs(t, n), "vendor=nv sku=");
    CHECK_STR(weft_topo_node_attr(t, n, "host"), "h0");
    CHECK_STR(weft_topo_node_attr(t, n, "sku"), "");
    CHECK(weft_topo_find_node(t, "ocs0", &n));
    CHECK_INT(weft_topo_node_kind(t, n), WEFT_NODE_OCS);
    CHECK_INT(weft_topo_node_host(t, n), WEFT_NO_HOST);
    CHECK(weft_topo_find_node(t, "nic0", &n));
    CHECK_INT(weft_topo_node_kind(t, n), WEFT_NODE_NIC);
    CHECK(weft_topo_find_node(t, "sw0", &n));
    CHECK_INT(weft_topo_node_kind(t, n), WEFT_NODE_SWITCH);
    CHECK_LINK(t, "gpu0", "sw0", 25, 1, 700, 1);                /* 200Gbps, 0.7us */
    CHECK_LINK(t, "sw0", "gpu0", 25, 1, 700, 1);                /* the duplex's other half */
    CHECK_LINK(t, "gpu1", "sw0", 1073741824, 1000000000, 0, 1); /* 1GiB/s */
    CHECK_LINK(t, "sw0", "gpu1", 2500, 7, 5, 1);                /* 2400/7 + 100/7 */
    CHECK_LINK(t, "gpu0", "nic0", 1500, 1, 1000000, 1);         /* 1.5TB/s, 1ms */
    CHECK_LINK(t, "nic0", "gpu0", 1500, 1, 1000000, 1);
    CHECK_LINK(t, "nic0", "ocs0", 1, 1000, 2000000000, 1); /* 8Mbps, 2s */
    CHECK_LINK(t, "ocs0", "nic0", 1, 1000, 1000, 1);       /* 1MB/s, 1e3ns */
    CHECK_LINK(t, "gpu1", "nic0", 25, 2, 0, 1);            /* 12.5e3MB/s */
    CHECK_LINK(t, "nic0", "gpu1", 125, 1, 0, 1);           /* 1Tbps */
    CHECK_LINK(t, "gpu0", "gpu1", 50, 1, 0, 1);            /* 400Gb/s */
    CHECK_LINK(t, "gpu1", "gpu0", 1, 1, 250, 1);           /* 8000Mb/s, 0.25us */
    CHECK_LINK(t, "gpu2", "sw0", 1, 1, 0, 1);
    CHECK_LINK(t, "sw0", "gpu2", 1, 1, 0, 1);
    CHECK_LINK(t, "gpu2", "gpu0", 3, 4, 0, 1);
    weft_topo_free(t);
}

/* Lines of exactly the limit are fine; one byte more is not. */
static void test_line_limit(void)
{
    size_t n = 15 + 4096 + 1;
    char *text = malloc(n + 1);
    memcpy(text, "node a compute\n", 15);
    text[15] = '#';
    memset(text + 16, 'x', 4095);
    text[15 + 4096] = '\n';
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_parse(text, n, "l.topo", &t, &d), WEFT_OK);
    weft_topo_free(t);
    /* The "\r" of a CRLF does not count. */
    text[15 + 4096] = '\r';
    text[15 + 4097] = '\n';
    t = NULL;
    CHECK_ERR(weft_topo_parse(text, n + 1, "l.topo", &t, &d), WEFT_OK);
    weft_topo_free(t);
    text[15 + 4096] = 'x';
    t = NULL;
    CHECK_ERR(weft_topo_parse(text, n + 1, "l.topo", &t, &d), WEFT_EPARSE);
    CHECK_STR(d.msg, "l.topo:2:4097: line is longer than 4096 bytes");
    CHECK(t == NULL);
    /* Binary data with no newline for more than a line (a file of NUL
     * bytes) is named by what it holds, not as a long line. */
    memset(text, 0, n);
    CHECK_ERR(weft_topo_parse(text, n, "z.topo", &t, &d), WEFT_EPARSE);
    CHECK_STR(d.msg, "z.topo:1:1: NUL byte (binary data, not text)");
    memcpy(text, "node a compute\n\x7f", 16);
    memset(text + 16, 'x', n - 16);
    CHECK_ERR(weft_topo_parse(text, n, "z.topo", &t, &d), WEFT_EPARSE);
    CHECK_STR(d.msg, "z.topo:2:1: control character 0x7F");
    CHECK(t == NULL);
    free(text);
}

typedef struct bad_case {
    const char *text;
    size_t len; /* 0: strlen(text) */
    weft_err err;
    const char *msg;
} bad_case;

#define AB "node a compute\nnode b switch\n"
#define UNITS "GB/s, Gbps, Gb/s, GiB/s, MB/s, MiB/s, Mbps, Mb/s, TB/s, Tbps"
#define N40 "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
#define N256 N40 N40 N40 N40 N40 N40 "nnnnnnnnnnnnnnnn"

static const bad_case bad_cases[] = {
    {AB "link a c 1GB/s\n", 0, WEFT_EPARSE,
     "t.topo:3:8: unknown node 'c' (declare it with 'node' before a link uses it)"},
    {"link a b 1GB/s\nnode a compute\nnode b switch\n", 0, WEFT_EPARSE,
     "t.topo:1:6: unknown node 'a' (declare it with 'node' before a link uses it)"},
    {"node a gpu\n", 0, WEFT_EPARSE,
     "t.topo:1:8: unknown node kind 'gpu' (expected compute, switch, nic or ocs)"},
    {"node a Compute\n", 0, WEFT_EPARSE,
     "t.topo:1:8: unknown node kind 'Compute' (expected compute, switch, nic or ocs)"},
    {"node a compute\n  lnk a a 1GB/s\n", 0, WEFT_EPARSE,
     "t.topo:2:3: unknown statement 'lnk' (expected node, link or duplex)"},
    {AB "link a b fastGB/s\n", 0, WEFT_EPARSE,
     "t.topo:3:10: bad bandwidth 'fastGB/s': expected a number followed by a unit (e.g. "
     "300GB/s)"},
    {AB "link a b 1/0GB/s\n", 0, WEFT_EPARSE,
     "t.topo:3:10: bad bandwidth '1/0GB/s': expected a number followed by a unit (e.g. "
     "300GB/s)"},
    {AB "link a b 300\n", 0, WEFT_EPARSE,
     "t.topo:3:10: bandwidth '300' has no unit (expected one of " UNITS ")"},
    {AB "link a b 300GB\n", 0, WEFT_EPARSE,
     "t.topo:3:10: unknown bandwidth unit 'GB' in '300GB' (expected one of " UNITS ")"},
    {AB "link a b 300gbps\n", 0, WEFT_EPARSE,
     "t.topo:3:10: unknown bandwidth unit 'gbps' in '300gbps' (expected one of " UNITS ")"},
    {AB "link a b 0GB/s\n", 0, WEFT_EPARSE, "t.topo:3:10: bandwidth '0GB/s' must be > 0"},
    {AB "link a b -5GB/s\n", 0, WEFT_EPARSE, "t.topo:3:10: bandwidth '-5GB/s' must be > 0"},
    {AB "link a b 5GB/s -1us\n", 0, WEFT_EPARSE, "t.topo:3:16: latency '-1us' must be >= 0"},
    {AB "link a b 5GB/s 3\n", 0, WEFT_EPARSE,
     "t.topo:3:16: latency '3' has no unit (expected one of ns, us, ms, s)"},
    {AB "link a b 5GB/s 3sec\n", 0, WEFT_EPARSE,
     "t.topo:3:16: unknown latency unit 'sec' in '3sec' (expected one of ns, us, ms, s)"},
    {AB "link a b 5GB/s soon\n", 0, WEFT_EPARSE,
     "t.topo:3:16: bad latency 'soon': expected a number followed by a unit (e.g. 0.7us)"},
    {"node a compute\nnode a switch\n", 0, WEFT_EPARSE,
     "t.topo:2:6: duplicate node 'a' (first declared on line 1)"},
    {"node a compute\r\n\r\nnode b compute\r\n node a switch\r\n", 0, WEFT_EPARSE,
     "t.topo:4:7: duplicate node 'a' (first declared on line 1)"},
    {"node a compute\nlink a a 1GB/s\n", 0, WEFT_EPARSE,
     "t.topo:2:8: link from 'a' to itself (self-loops are not allowed)"},
    {"node a compute\nduplex a a 1GB/s\n", 0, WEFT_EPARSE,
     "t.topo:2:10: duplex from 'a' to itself (self-loops are not allowed)"},
    {AB "duplex a b\n", 0, WEFT_EPARSE,
     "t.topo:3:11: duplex: missing BW (bandwidth) (expected: duplex A B BW [LAT] [burst=BYTES "
     "peak=BW])"},
    {AB "link a   # b 1GB/s\n", 0, WEFT_EPARSE,
     "t.topo:3:7: link: missing B (destination node) (expected: link A B BW [LAT] [burst=BYTES "
     "peak=BW])"},
    {AB "link\n", 0, WEFT_EPARSE,
     "t.topo:3:5: link: missing A (source node) (expected: link A B BW [LAT] [burst=BYTES "
     "peak=BW])"},
    {"node a\n", 0, WEFT_EPARSE,
     "t.topo:1:7: node: missing KIND (expected: node NAME KIND [key=value ...])"},
    {"node\t \n", 0, WEFT_EPARSE,
     "t.topo:1:5: node: missing NAME (expected: node NAME KIND [key=value ...])"},
    {"node a#b compute\n", 0, WEFT_EPARSE,
     "t.topo:1:7: node: missing KIND (expected: node NAME KIND [key=value ...])"},
    {AB "link a b 1GB/s 1ns x\n", 0, WEFT_EPARSE,
     "t.topo:3:20: too many arguments: unexpected 'x' (expected: link A B BW [LAT] [burst=BYTES "
     "peak=BW])"},
    {AB "duplex a b 1GB/s 1ns 2ns\n", 0, WEFT_EPARSE,
     "t.topo:3:22: too many arguments: unexpected '2ns' (expected: duplex A B BW [LAT] "
     "[burst=BYTES peak=BW])"},
    {AB "link a b 1GB/s burst=16\n", 0, WEFT_EPARSE,
     "t.topo:3:16: burst= needs peak=: a shaper's bucket passes its bytes at the peak rate of "
     "the wire under it (tc-tbf(8))"},
    {AB "link a b 1GB/s peak=2GB/s\n", 0, WEFT_EPARSE,
     "t.topo:3:16: peak= needs burst=: a shaper's bucket passes its bytes at the peak rate of "
     "the wire under it (tc-tbf(8))"},
    {AB "link a b 1GB/s burst=0 peak=2GB/s\n", 0, WEFT_EPARSE,
     "t.topo:3:22: bad burst=0: expected a whole number of bytes > 0 (e.g. burst=16384)"},
    {AB "link a b 1GB/s burst=16K peak=2GB/s\n", 0, WEFT_EPARSE,
     "t.topo:3:22: bad burst=16K: expected a whole number of bytes > 0 (e.g. burst=16384)"},
    {AB "duplex a b 1GB/s burst=16 peak=1GB/s\n", 0, WEFT_EPARSE,
     "t.topo:3:27: peak=1GB/s must exceed the link's bandwidth '1GB/s'"},
    {AB "link a b 1GB/s burst=16 burst=16 peak=2GB/s\n", 0, WEFT_EPARSE,
     "t.topo:3:25: unknown or repeated link attribute 'burst=16' (a link takes burst=BYTES and "
     "peak=BW once each: a token-bucket shaper)"},
    {AB "link a b 1GB/s burst=16 peak=2GB/s 1ns\n", 0, WEFT_EPARSE,
     "t.topo:3:36: too many arguments: unexpected '1ns' (expected: link A B BW [LAT] "
     "[burst=BYTES peak=BW])"},
    {AB "link a b 1GB/s burst=16 peak=2GB/s\nlink a b 1GB/s\n", 0, WEFT_ETOPO,
     "t.topo: parallel links a -> b: a link with a shaper (burst=) cannot have a parallel twin; "
     "give "
     "them one link"},
    {"node a compute # caf\xe9\n", 0, WEFT_EPARSE, "t.topo:1:21: invalid UTF-8 (byte 0xE9)"},
    {"# \xc0\xaf overlong\nnode a compute\n", 0, WEFT_EPARSE,
     "t.topo:1:3: invalid UTF-8 (byte 0xC0)"},
    {"node a compute\n# \xed\xa0\x80 surrogate\n", 0, WEFT_EPARSE,
     "t.topo:2:3: invalid UTF-8 (byte 0xED)"},
    {"node a compute\nnode \xf4\x90\x80\x80 nic\n", 0, WEFT_EPARSE,
     "t.topo:2:6: invalid UTF-8 (byte 0xF4)"},
    {"node a compute # cut \xe2\x82\n", 0, WEFT_EPARSE, "t.topo:1:22: invalid UTF-8 (byte 0xE2)"},
    {"node a compute\nnode \x80 nic\n", 0, WEFT_EPARSE, "t.topo:2:6: invalid UTF-8 (byte 0x80)"},
    {"node a\0 compute\n", 16, WEFT_EPARSE, "t.topo:1:7: NUL byte (binary data, not text)"},
    {"node a compute\n#\0\n", 18, WEFT_EPARSE, "t.topo:2:2: NUL byte (binary data, not text)"},
    {"node a\x01 compute\n", 0, WEFT_EPARSE, "t.topo:1:7: control character 0x01"},
    {"node a compute # \x7f\n", 0, WEFT_EPARSE, "t.topo:1:18: control character 0x7F"},
    {"node a\rcompute\n", 0, WEFT_EPARSE, "t.topo:1:7: carriage return inside a line"},
    {"", 0, WEFT_EPARSE, "t.topo: empty file (no statements)"},
    {"\n  \n\t\r\n", 0, WEFT_EPARSE, "t.topo: empty file (no statements)"},
    {"\xef\xbb\xbf", 0, WEFT_EPARSE, "t.topo: empty file (no statements)"},
    {"# a comment\n\n   # another\n", 0, WEFT_EPARSE,
     "t.topo: no statements, only comments and blank lines"},
    {"node s switch\nnode n nic\nduplex s n 1GB/s\n", 0, WEFT_ETOPO,
     "t.topo: the fabric has no compute node (declare ranks with 'node NAME compute')"},
    {"node a compute fast\n", 0, WEFT_EPARSE,
     "t.topo:1:16: bad attribute 'fast': expected key=value"},
    {"node a compute x=1 y=2 x=3\n", 0, WEFT_EPARSE,
     "t.topo:1:24: duplicate attribute 'x' on node 'a'"},
    {"node a compute host=1 host=2\n", 0, WEFT_EPARSE,
     "t.topo:1:23: duplicate attribute 'host' on node 'a' (first at column 16)"},
    {"node a compute host=\n", 0, WEFT_EPARSE, "t.topo:1:16: empty host name in 'host='"},
    {"node a compute reduce=1\n", 0, WEFT_EPARSE,
     "t.topo:1:16: attribute 'reduce' is for switch nodes; 'a' is a compute"},
    {"node s switch reduce=yes\n", 0, WEFT_EPARSE,
     "t.topo:1:15: bad 'reduce=yes' on 's': expected nvls, sharp, 0 or 1"},
    {"node a compute\nnode s switch reduce=NVLS\n", 0, WEFT_EPARSE,
     "t.topo:2:15: bad 'reduce=NVLS' on 's': expected nvls, sharp, 0 or 1"},
    {"node a compute host=0 cpu=amdx\n", 0, WEFT_EPARSE,
     "t.topo:1:23: bad 'cpu=amdx' on 'a': expected amd or intel"},
    {"node a compute\nnode b compute cpu=AMD\n", 0, WEFT_EPARSE,
     "t.topo:2:16: bad 'cpu=AMD' on 'b': expected amd or intel"},
    {"node a compute cpu=\n", 0, WEFT_EPARSE,
     "t.topo:1:16: bad 'cpu=' on 'a': expected amd or intel"},
    {"node a compute\nnode s switch cpu=amd\n", 0, WEFT_EPARSE,
     "t.topo:2:15: attribute 'cpu' is for compute nodes; 's' is a switch"},
    {"node a compute =v\n", 0, WEFT_EPARSE, "t.topo:1:16: attribute '=v' has an empty key"},
    {"node " N256 " compute\n", 0, WEFT_EPARSE,
     "t.topo:1:6: node name '" N40 "...' is 256 bytes long; the limit is 255"},
    {"node a compute k=" N256 "\n", 0, WEFT_EPARSE,
     "t.topo:1:16: attribute value '" N40 "...' is 256 bytes long; the limit is 255"},
    {"node a compute " N256 "=1\n", 0, WEFT_EPARSE,
     "t.topo:1:16: attribute key '" N40 "...' is 256 bytes long; the limit is 255"},
    {"node a compute host=" N256 "\n", 0, WEFT_EPARSE,
     "t.topo:1:16: attribute value '" N40 "...' is 256 bytes long; the limit is 255"},
    {AB "link a b 1e30TB/s\n", 0, WEFT_EPARSE, "t.topo:3:10: bandwidth '1e30TB/s' is too large"},
    {AB "link a b 9223372036854775807TB/s\n", 0, WEFT_EPARSE,
     "t.topo:3:10: bandwidth '9223372036854775807TB/s' is too large"},
    {AB "link a b 1GB/s 1e300s\n", 0, WEFT_EPARSE, "t.topo:3:16: latency '1e300s' is too large"},
    {AB "link a b 1GB/s 1ns\nlink a b 2GB/s 2ns\n", 0, WEFT_ETOPO,
     "t.topo:4:16: parallel links a -> b have different latencies: 2ns here, 1ns on line 3 "
     "(parallel links add their bandwidths and must share one latency)"},
    {AB "duplex a b 1GB/s 0.5us\nnode c compute\nlink b a 1GB/s\n", 0, WEFT_ETOPO,
     "t.topo:5:1: parallel links b -> a have different latencies: 0ns here, 500ns on line 3 "
     "(parallel links add their bandwidths and must share one latency)"},
    {AB "link a b 9223372036854775807GB/s\n link a b 1GB/s\n", 0, WEFT_ETOPO,
     "t.topo:4:2: parallel links a -> b add up to a bandwidth too large to represent (first "
     "on line 3)"},
};

/* reduce=nvls|sharp, and the kind reduce=1 implies by the switch's place. */
static void test_reduce(void)
{
    static const char text[] = "node a compute host=h\nnode b compute host=h\n"
                               "node s switch host=h reduce=1\nnode n switch reduce=1\n"
                               "node v switch reduce=nvls\nnode w switch host=h reduce=sharp\n"
                               "node z switch reduce=0\nlink a s 1GB/s\nlink b s 1GB/s\n";
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_parse(text, sizeof text - 1, "r.topo", &t, &d), WEFT_OK);
    if (!t)
        return;
    static const char *const names[] = {"a", "s", "n", "v", "w", "z"};
    static const weft_reduce_kind want[] = {WEFT_REDUCE_NONE, WEFT_REDUCE_NVLS,  WEFT_REDUCE_SHARP,
                                            WEFT_REDUCE_NVLS, WEFT_REDUCE_SHARP, WEFT_REDUCE_NONE};
    for (size_t i = 0; i < 6; i++) {
        weft_node_id v;
        CHECK(weft_topo_find_node(t, names[i], &v));
        CHECK_INT(weft_topo_node_reduce(t, v), want[i]);
    }
    weft_topo_free(t);
}

/* cpu=amd and cpu=intel are read and kept verbatim (NCCL's tuning by host
 * CPU vendor, weft_proto_cpu_amd); other values fail in test_bad. */
static void test_cpu(void)
{
    static const char text[] = "node a compute host=h cpu=amd\nnode b compute host=g cpu=intel\n"
                               "link a b 1GB/s\n";
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_parse(text, sizeof text - 1, "c.topo", &t, &d), WEFT_OK);
    if (!t)
        return;
    CHECK_STR(weft_topo_node_attr(t, weft_topo_rank_node(t, (weft_rank){0}), "cpu"), "amd");
    CHECK_STR(weft_topo_node_attr(t, weft_topo_rank_node(t, (weft_rank){1}), "cpu"), "intel");
    weft_topo_free(t);
}

static void test_bad(void)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++) {
        const bad_case *c = &bad_cases[i];
        size_t len = c->len ? c->len : strlen(c->text);
        weft_topo *t = NULL;
        weft_diag d;
        weft_diag_clear(&d);
        long live = weft__alloc_live();
        weft_err e = weft_topo_parse(c->text, len, "t.topo", &t, &d);
        if (e != c->err || strcmp(d.msg, c->msg) != 0 || t != NULL || d.err != c->err) {
            fprintf(stderr, "bad case %zu: got %s \"%s\"\n  expected %s \"%s\"\n", i,
                    weft_err_name(e), d.msg, weft_err_name(c->err), c->msg);
            weft__test_failed++;
        } else {
            weft__test_passed++;
        }
        CHECK_INT(weft__alloc_live(), live); /* nothing half-loaded stays behind */
    }
}

/* A line longer than the limit is refused before its bytes are looked at. */
static void test_long_line_first(void)
{
    char text[5000];
    memset(text, ' ', sizeof text);
    memcpy(text, "node a compute", 14);
    text[4500] = '\xff';
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_parse(text, sizeof text, "w.topo", &t, &d), WEFT_EPARSE);
    CHECK_STR(d.msg, "w.topo:1:4097: line is longer than 4096 bytes");
}

static void test_files(void)
{
    const char *path = WEFT_BINARY_DIR "/parse_test.topo";
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("node g0 compute\nnode g1 compute\nduplex g0 g1 100GB/s\nlink g1 g0 1Gbps\n", f);
    fclose(f);
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_topo_load_file(path, &t, &d), WEFT_OK);
    if (t) {
        CHECK_INT(weft_topo_num_links(t), 2);
        CHECK_LINK(t, "g0", "g1", 100, 1, 0, 1);
        CHECK_LINK(t, "g1", "g0", 801, 8, 0, 1);
        weft_topo_free(t);
    }
    /* The latency conflict is reported against the file's path. */
    t = NULL;
    CHECK_ERR(weft_topo_load_file(path, &t, &d), WEFT_OK);
    weft_topo_free(t);
    f = fopen(path, "ab");
    fputs("link g1 g0 1GB/s 3us\n", f);
    fclose(f);
    t = NULL;
    CHECK_ERR(weft_topo_load_file(path, &t, &d), WEFT_ETOPO);
    CHECK_STR(d.msg, WEFT_BINARY_DIR "/parse_test.topo:5:18: parallel links g1 -> g0 have "
                                     "different latencies: 3000ns here, 0ns on line 3 (parallel "
                                     "links add their bandwidths and must share one latency)");
    CHECK(t == NULL);
    unlink(path);
    CHECK_ERR(weft_topo_load_file(path, &t, &d), WEFT_ENOENT);
    CHECK_STR(d.msg, WEFT_BINARY_DIR "/parse_test.topo: cannot open: No such file or directory");
    CHECK_ERR(weft_topo_load_file(WEFT_BINARY_DIR, &t, &d), WEFT_EIO);
    CHECK_STR(d.msg, WEFT_BINARY_DIR ": is a directory");
    CHECK(t == NULL);
}

/* Text that is null with a zero length is an empty file, and a NULL name
 * is replaced in messages. */
static void test_null(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_parse(NULL, 0, NULL, &t, &d), WEFT_EPARSE);
    CHECK_STR(d.msg, "<text>: empty file (no statements)");
    CHECK_ERR(weft_topo_parse("node a compute\nnode a nic\n", 26, NULL, &t, NULL), WEFT_EPARSE);
    CHECK(t == NULL);
}

static const char oom_text[] = "# small\n"
                               "node g0 compute host=0 a=1 b=2\n"
                               "node g1 compute host=0\n"
                               "node g2 compute host=1\n"
                               "node sw switch\n"
                               "duplex g0 sw 300GB/s 0.7us\n"
                               "duplex g1 sw 300GB/s 0.7us\n"
                               "duplex g2 sw 1GiB/s\n"
                               "link g0 g1 2400/7GB/s\n"
                               "link g0 g1 100/7GB/s\n";

static weft_err ctor_parse(void *arg)
{
    return weft_topo_parse(oom_text, sizeof oom_text - 1, "oom.topo", (weft_topo **)arg, NULL);
}

static void dtor_parse(void *arg)
{
    weft_topo_free(*(weft_topo **)arg);
}

/* The locate pass under allocation failure: every run ends in WEFT_ENOMEM
 * or the located WEFT_ETOPO, leaking nothing. */
static void test_oom_conflict(void)
{
    static const char text[] = "node a compute\nnode b compute\nduplex a b 1GB/s\n"
                               "node c compute\nlink a c 1GB/s\nlink b a 1GB/s 1ns\n";
    long base = weft__alloc_live();
    long n;
    for (n = 0; n < 100000; n++) {
        weft_topo *t = NULL;
        weft_diag d;
        weft__alloc_fail_after(n);
        weft_err e = weft_topo_parse(text, sizeof text - 1, "c.topo", &t, &d);
        weft__alloc_fail_after(-1);
        CHECK_INT(weft__alloc_live(), base);
        CHECK(t == NULL);
        if (e == WEFT_ETOPO) {
            CHECK_STR(d.msg, "c.topo:6:16: parallel links b -> a have different latencies: 1ns "
                             "here, 0ns on line 3 (parallel links add their bandwidths and must "
                             "share one latency)");
            break;
        }
        CHECK_ERR(e, WEFT_ENOMEM);
        if (e != WEFT_ENOMEM)
            break;
    }
    CHECK(n > 5);
}

int main(void)
{
    test_reduce();
    test_cpu();
    test_valid();
    test_line_limit();
    test_bad();
    test_long_line_first();
    test_files();
    test_null();
    weft_topo *t = NULL;
    CHECK(weft_test_oom_sweep("parse", ctor_parse, dtor_parse, &t) > 10);
    test_oom_conflict();
    return weft_test_done();
}
