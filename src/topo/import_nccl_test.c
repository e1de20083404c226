/* NCCL topology XML import: the three Azure fixtures (exact counts and
 * bandwidths), how the options change the fabric, NCCL's rules for
 * <nvlink> and <net> elements, every error with its exact message, and an
 * allocation-failure sweep. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/testing.h"
#include "weft/topo.h"

#define FIX WEFT_SHARED_FIXTURES "/nccl-topo/azhpc-images_"

static weft_rat R(int64_t n, int64_t d)
{
    weft_rat r = {0, 1};
    weft_rat_make(n, d, &r);
    return r;
}

/* The bandwidth of link a -> b, or -1 when there is none. */
static weft_rat bw(const weft_topo *t, const char *a, const char *b)
{
    weft_node_id x, y;
    weft_link_id l;
    if (!weft_topo_find_node(t, a, &x) || !weft_topo_find_node(t, b, &y) ||
        !weft_topo_find_link(t, x, y, &l))
        return R(-1, 1);
    return weft_topo_link_bw(t, l);
}

#define CHECK_BW(t, a, b, n, d) CHECK(weft_rat_eq(bw(t, a, b), R(n, d)))

static const char *attr_of(const weft_topo *t, const char *node, const char *key)
{
    weft_node_id n;
    if (!weft_topo_find_node(t, node, &n))
        return NULL;
    return weft_topo_node_attr(t, n, key);
}

static uint32_t in_degree(const weft_topo *t, const char *node)
{
    weft_node_id n;
    uint32_t count = 0;
    if (weft_topo_find_node(t, node, &n))
        weft_topo_in_links(t, n, &count);
    return count;
}

static void test_ndv4_default(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_topo_load_nccl_xml(FIX "ndv4-topo.xml", NULL, &t, &d), WEFT_OK);
    if (!t)
        return;
    weft_topo_stats s;
    CHECK_ERR(weft_topo_get_stats(t, &s), WEFT_OK);
    CHECK_INT(s.ranks, 8);
    CHECK_INT(s.nodes_by_kind[WEFT_NODE_COMPUTE], 8);
    CHECK_INT(s.nodes_by_kind[WEFT_NODE_NIC], 8);
    CHECK_INT(s.nodes_by_kind[WEFT_NODE_SWITCH], 8); /* 4 PCIe switches + 4 CPUs */
    CHECK_INT(s.nodes, 24);
    /* 16 devices and 4 switches each duplex to their parent, 4 x 3 CPU pairs. */
    CHECK_INT(s.links, 2 * 20 + 12);
    CHECK_INT(s.hosts, 1);
    CHECK(s.ranks_connected);
    /* Bus id order: gpu0 is 0001:00:00.0 although the file lists 0003 first. */
    CHECK_STR(weft_topo_node_name(t, weft_topo_rank_node(t, (weft_rank){0})), "gpu0");
    CHECK_STR(attr_of(t, "gpu0", "busid"), "0001:00:00.0");
    CHECK_STR(attr_of(t, "gpu7", "busid"), "000e:00:00.0");
    CHECK_STR(attr_of(t, "nic0", "busid"), "0101:00:00.0");
    CHECK_STR(attr_of(t, "pcisw0", "busid"), "ffff:ff:01.0");
    CHECK_STR(attr_of(t, "cpu3", "numaid"), "3");
    CHECK_STR(attr_of(t, "gpu5", "host"), "0");
    /* The sockets are x86_64 AuthenticAMD: every GPU's host is AMD's
     * (cpu=amd, which NCCL's tuning reads); only GPUs carry it. */
    CHECK_STR(attr_of(t, "gpu0", "cpu"), "amd");
    CHECK_STR(attr_of(t, "gpu7", "cpu"), "amd");
    CHECK(attr_of(t, "nic0", "cpu") == NULL);
    /* 16 GT/s x16: 16 * 120 / 80 = 24 GB/s, each way. */
    CHECK_BW(t, "gpu0", "pcisw1", 24, 1);
    CHECK_BW(t, "pcisw1", "gpu0", 24, 1);
    CHECK_BW(t, "gpu2", "pcisw0", 24, 1);
    CHECK_BW(t, "nic0", "pcisw1", 24, 1);
    CHECK_BW(t, "pcisw1", "cpu1", 24, 1);
    /* AMD family 23 (Zen 1/2): NCCL's AMD_ZEN12_BW. */
    CHECK_BW(t, "cpu0", "cpu3", 16, 1);
    CHECK_BW(t, "cpu3", "cpu0", 16, 1);
    CHECK_BW(t, "gpu0", "gpu1", -1, 1);
    const char *note = weft_topo_note(t);
    CHECK_CONTAINS(note, "no NVLink modelled: the file has no <nvlink> elements; pass the "
                         "NVLink bandwidth");
    CHECK_CONTAINS(note, "16 GT/s x16 = 24 GB/s");
    CHECK_CONTAINS(note, "CPU to CPU: 16 GB/s each way (NCCL's figure for AMD Zen 1/2");
    CHECK_CONTAINS(note, "1 host: no network beyond the NICs");
    CHECK_CONTAINS(note, "GPUs: 8 (gpu0.. in PCI bus id order), NICs: 8");
    CHECK_CONTAINS(note, "latencies: 0");
    weft_topo_free(t);
}

static void test_ndv4_options(void)
{
    weft_nccl_import_opts o;
    weft_nccl_import_opts_init(&o);
    CHECK_INT(o.hosts, 1);
    CHECK(o.network == NULL);
    o.nvlink_bw_gbps = R(300, 1);
    o.hosts = 2;
    o.network = "rail";
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_topo_load_nccl_xml(FIX "ndv4-topo.xml", &o, &t, &d), WEFT_OK);
    if (!t)
        return;
    weft_topo_stats s;
    CHECK_ERR(weft_topo_get_stats(t, &s), WEFT_OK);
    CHECK_INT(s.ranks, 16);
    CHECK_INT(s.hosts, 2);
    CHECK_INT(s.nodes_by_kind[WEFT_NODE_NIC], 16);
    /* Per box 4 PCIe switches, 4 CPUs, 1 NVSwitch; 8 rail switches. */
    CHECK_INT(s.nodes_by_kind[WEFT_NODE_SWITCH], 2 * 9 + 8);
    CHECK_INT(s.nodes, 2 * 25 + 8);
    CHECK_INT(s.links, 2 * (52 + 16) + 2 * 16);
    CHECK(s.strongly_connected);
    CHECK(s.switches_balanced);
    CHECK_STR(weft_topo_node_name(t, weft_topo_rank_node(t, (weft_rank){9})), "b1.gpu1");
    CHECK_STR(attr_of(t, "b1.gpu1", "host"), "1");
    CHECK_STR(attr_of(t, "b1.nvsw0", "host"), "1");
    CHECK(attr_of(t, "rail3", "host") == NULL);
    CHECK_BW(t, "b0.gpu3", "b0.nvsw0", 300, 1);
    CHECK_BW(t, "b1.nvsw0", "b1.gpu7", 300, 1);
    /* Rail i joins NIC i of both boxes, at the NIC's PCIe bandwidth. */
    for (int i = 0; i < 8; i++) {
        char rail[16];
        snprintf(rail, sizeof rail, "rail%d", i);
        CHECK_INT(in_degree(t, rail), 2);
    }
    CHECK_BW(t, "b1.nic3", "rail3", 24, 1);
    CHECK_BW(t, "rail3", "b0.nic3", 24, 1);
    CHECK_BW(t, "b1.nic3", "rail2", -1, 1);
    const char *note = weft_topo_note(t);
    CHECK_CONTAINS(note, "one NVSwitch nvsw0 per box, 300 GB/s each way per GPU (--nvlink-bw)");
    CHECK_CONTAINS(note, "network: 2 boxes b0..b1, NIC i of every box to rail switch rail<i>; "
                         "nic0 24 GB/s each way (its PCIe link: the file gives no NIC speed");
    weft_topo_free(t);

    /* One shared switch, a NIC bandwidth and a CPU bandwidth from options. */
    o.network = "switch";
    o.hosts = 3;
    o.nic_bw_gbps = R(25, 1);
    o.cpu_bw_gbps = R(75, 2);
    o.nvlink_bw_gbps = R(0, 1);
    CHECK_ERR(weft_topo_load_nccl_xml(FIX "ndv4-topo.xml", &o, &t, &d), WEFT_OK);
    if (!t)
        return;
    CHECK_INT(weft_topo_num_ranks(t), 24);
    CHECK_INT(in_degree(t, "net0"), 24);
    CHECK_BW(t, "b2.nic7", "net0", 25, 1);
    CHECK_BW(t, "b2.cpu1", "b2.cpu2", 75, 2);
    CHECK(!weft_topo_find_node(t, "b0.nvsw0", &(weft_node_id){0}));
    CHECK_CONTAINS(weft_topo_note(t), "every NIC to one switch net0; nic0 25 GB/s each way "
                                      "(--nic-bw)");
    CHECK_CONTAINS(weft_topo_note(t), "CPU to CPU: 37.5 GB/s each way (--cpu-bw)");
    weft_topo_free(t);
}

static void test_ndv2_ndv5(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_topo_load_nccl_xml(FIX "ndv2-topo.xml", NULL, &t, &d), WEFT_OK);
    if (t) {
        weft_topo_stats s;
        CHECK_ERR(weft_topo_get_stats(t, &s), WEFT_OK);
        CHECK_INT(s.ranks, 8);
        CHECK_INT(s.nodes_by_kind[WEFT_NODE_NIC], 1);
        CHECK_INT(s.nodes_by_kind[WEFT_NODE_SWITCH], 2); /* no PCIe switch, 2 CPUs */
        CHECK_INT(s.nodes, 11);
        CHECK_INT(s.links, 2 * 9 + 2);
        /* 0005:00:00.0 hangs straight from the second socket. */
        CHECK_BW(t, "gpu4", "cpu1", 24, 1);
        CHECK_BW(t, "nic0", "cpu0", 24, 1);
        /* Intel family 6 model 85 (0x55): Skylake, NCCL's SKL_QPI_BW. */
        CHECK_BW(t, "cpu0", "cpu1", 10, 1);
        CHECK_CONTAINS(weft_topo_note(t), "NCCL's figure for Intel Skylake");
        CHECK_STR(attr_of(t, "gpu4", "cpu"), "intel"); /* x86_64 GenuineIntel */
        weft_topo_free(t);
    }
    CHECK_ERR(weft_topo_load_nccl_xml(FIX "ndv5-topo.xml", NULL, &t, &d), WEFT_OK);
    if (t) {
        weft_topo_stats s;
        CHECK_ERR(weft_topo_get_stats(t, &s), WEFT_OK);
        CHECK_INT(s.ranks, 8);
        CHECK_INT(s.nodes_by_kind[WEFT_NODE_NIC], 8);
        CHECK_INT(s.nodes_by_kind[WEFT_NODE_SWITCH], 10); /* 8 PCIe switches, 2 CPUs */
        CHECK_INT(s.nodes, 26);
        CHECK_INT(s.links, 2 * 24 + 2);
        /* "32.0 GT/s PCIe" x16: 16 * 240 / 80 = 48 GB/s. */
        CHECK_BW(t, "gpu7", "pcisw7", 48, 1);
        CHECK_BW(t, "pcisw7", "cpu1", 48, 1);
        CHECK_STR(attr_of(t, "gpu7", "busid"), "000c:00:00.0");
        /* Intel family 6 model 143 (0x8F): Sapphire Rapids, NCCL's SRP_QPI_BW. */
        CHECK_BW(t, "cpu1", "cpu0", 22, 1);
        weft_topo_free(t);
    }
}

/* NCCL's rules for the elements the Azure files lack: <gpu sm=> with
 * <nvlink> (GPU peers one way, NVSwitch both ways, count times the per-link
 * figure), <nic><net speed=> in Mb/s, a NIC straight under a <cpu>. */
static const char nvlink_xml[] =
    "<system version=\"1\">\n"
    "  <cpu numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\" familyid=\"25\">\n"
    "    <pci busid=\"0000:0a:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" "
    "link_width=\"0\">\n"
    "      <gpu dev=\"1\" sm=\"80\" rank=\"1\">\n"
    "        <nvlink target=\"0000:07:00.0\" count=\"2\" tclass=\"0x030200\"/>\n"
    "        <nvlink target=\"0000:c7:00.0\" count=\"4\" tclass=\"0x068000\"/>\n"
    "      </gpu>\n"
    "    </pci>\n"
    "    <pci busid=\"0000:07:00.0\" class=\"0x030200\" link_speed=\"8 GT/s\" link_width=\"8\">\n"
    "      <gpu dev=\"0\" sm=\"80\" rank=\"0\">\n"
    "        <nvlink target=\"0000:0a:00.0\" count=\"1\" tclass=\"0x030200\"/>\n"
    "        <c2c count=\"1\" bw=\"100\"/>\n"
    "      </gpu>\n"
    "    </pci>\n"
    "    <pci busid=\"0000:0c:00.0\" class=\"0x020700\" link_speed=\"16 GT/s\" link_width=\"16\">\n"
    "      <nic><net name=\"mlx5_0\" dev=\"0\" speed=\"200000\"/><net name=\"mlx5_1\" dev=\"1\" "
    "speed=\"-1\"/></nic>\n"
    "    </pci>\n"
    "    <nic><net name=\"eth0\" dev=\"2\" speed=\"100000\"/></nic>\n"
    "  </cpu>\n"
    "  <cpu numaid=\"1\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" "
    "modelid=\"0x8F\"/>\n"
    "</system>\n";

static void test_nvlink_and_net(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    weft_nccl_import_opts o;
    weft_nccl_import_opts_init(&o);
    o.hosts = 2;
    CHECK_ERR(weft_topo_parse_nccl_xml(nvlink_xml, strlen(nvlink_xml), "nv.xml", &o, &t, &d),
              WEFT_OK);
    if (!t) {
        fprintf(stderr, "%s\n", d.msg);
        return;
    }
    CHECK_INT(weft_topo_num_ranks(t), 4);
    CHECK_STR(attr_of(t, "b0.gpu0", "busid"), "0000:07:00.0");
    /* sm 80: 20 GB/s per NVLink; one direction per element. */
    CHECK_BW(t, "b0.gpu0", "b0.gpu1", 20, 1);
    CHECK_BW(t, "b0.gpu1", "b0.gpu0", 40, 1);
    CHECK_BW(t, "b0.gpu1", "b0.nvsw0", 80, 1);
    CHECK_BW(t, "b0.nvsw0", "b0.gpu1", 80, 1);
    CHECK_BW(t, "b0.gpu0", "b0.nvsw0", -1, 1);
    /* link_width 0 counts as 16: 16 * 120 / 80; 8 GT/s x8: 8 * 60 / 80. */
    CHECK_BW(t, "b0.gpu1", "b0.cpu0", 24, 1);
    CHECK_BW(t, "b0.gpu0", "b0.cpu0", 6, 1);
    /* 200000 Mb/s / 8000 = 25 GB/s; speed -1 is unknown and adds nothing. */
    CHECK_BW(t, "b1.nic0", "rail0", 25, 1);
    /* The NIC under the socket: NCCL's LOC_BW to the CPU; 100000 Mb/s out. */
    CHECK_BW(t, "b1.nic1", "b1.cpu0", 5000, 1);
    CHECK_BW(t, "b1.nic1", "rail1", 25, 2);
    /* The same NIC without a speed: NCCL's 10000 Mb/s, not its LOC_BW. */
    weft_topo *t2 = NULL;
    char *text = strdup(nvlink_xml);
    char *sp = strstr(text, "speed=\"100000\"");
    if (sp) {
        memcpy(sp, "sleep", 5);
        CHECK_ERR(weft_topo_parse_nccl_xml(text, strlen(text), "nv.xml", &o, &t2, &d), WEFT_OK);
        if (t2)
            CHECK_BW(t2, "b1.nic1", "rail1", 5, 4);
        weft_topo_free(t2);
    }
    free(text);
    /* AMD family 25: Zen 3/4; Intel model 0x8F: Sapphire Rapids. Each
     * direction at the sending socket's figure. */
    CHECK_BW(t, "b0.cpu0", "b0.cpu1", 24, 1);
    CHECK_BW(t, "b0.cpu1", "b0.cpu0", 22, 1);
    CHECK_CONTAINS(weft_topo_note(t), "CPU to CPU: each direction at the sending socket's figure "
                                      "(ncclTopoGetInterCpuBw): cpu0 24 GB/s (AMD Zen 3/4), cpu1 "
                                      "22 GB/s (Intel Sapphire Rapids)");
    const char *note = weft_topo_note(t);
    CHECK_CONTAINS(note, "NVLink: 3 <nvlink> elements, 20 GB/s per link (NCCL's figure for sm 80");
    CHECK_CONTAINS(note, "nic0 25 GB/s each way (the NIC's <net speed=>, Mb/s / 8000)");
    CHECK_CONTAINS(note, "not modelled: 1 elements (the first: <c2c> at line 12)");
    weft_topo_free(t);

    /* The option sets the per-link figure. */
    o.hosts = 1;
    o.nvlink_bw_gbps = R(25, 1);
    CHECK_ERR(weft_topo_parse_nccl_xml(nvlink_xml, strlen(nvlink_xml), "nv.xml", &o, &t, &d),
              WEFT_OK);
    if (t) {
        CHECK_BW(t, "gpu1", "nvsw0", 100, 1);
        CHECK_BW(t, "gpu1", "gpu0", 50, 1);
        CHECK_CONTAINS(weft_topo_note(t), "NVLink: 3 <nvlink> elements, 25 GB/s per link "
                                          "(--nvlink-bw)");
        weft_topo_free(t);
    }
}

typedef struct bad_case {
    const char *xml;
    weft_err err;
    const char *msg;
} bad_case;

#define CPU0 "<system><cpu numaid=\"0\">"
#define END "</cpu></system>"
#define GPU(bus)                                                                                   \
    "<pci busid=\"" bus "\" class=\"0x030200\" link_speed=\"16 GT/s\" link_width=\"16\"/>"

static const bad_case bad[] = {
    {"<system><cpu></system>", WEFT_EPARSE, "x.xml:1:16: malformed XML: mismatched tag"},
    {"", WEFT_EPARSE, "x.xml:1:1: malformed XML: no element found"},
    {"<system>\n  <cpu>\n</system", WEFT_EPARSE, "x.xml:3:1: malformed XML: unclosed token"},
    {"<system/><x/>", WEFT_EPARSE, "x.xml:1:10: malformed XML: junk after document element"},
    {"<!DOCTYPE s [<!ENTITY a \"aaaa\">]><system/>", WEFT_EPARSE,
     "x.xml:1:25: entity declarations are not allowed"},
    {"<topology/>", WEFT_EPARSE,
     "x.xml:1:1: the root element is <topology>, expected <system> (an NCCL topology dump)"},
    {"<system version=\"1\">\n<cpu numaid=\"0\"/>\n</system>", WEFT_ETOPO,
     "x.xml:1:1: no GPU in the file (no <pci> of class 0x03xxxx or with a <gpu> child inside a "
     "<cpu>)"},
    {CPU0 "\n<pci busid=\"0001:00:00.0\" class=\"0x030200\" link_speed=\"17 GT/s\" "
          "link_width=\"16\"/>" END,
     WEFT_EPARSE,
     "x.xml:2:1: <pci busid=\"0001:00:00.0\">: unknown link_speed \"17 GT/s\" (NCCL knows 2.5, 5, "
     "8, 16, 32 GT/s and 2.5, 5.0, 8.0, 16.0, 32.0, 64.0 GT/s PCIe)"},
    {CPU0 "<pci busid=\"0001:00:00.0\" class=\"0x030200\" link_width=\"16\"/>" END, WEFT_EPARSE,
     "x.xml:1:25: <pci busid=\"0001:00:00.0\"> has no link_speed"},
    {CPU0 "<pci busid=\"0001:00:00.0\" class=\"0x030200\" link_speed=\"16 GT/s\" "
          "link_width=\"x16\"/>" END,
     WEFT_EPARSE,
     "x.xml:1:25: <pci busid=\"0001:00:00.0\">: link_width \"x16\" is not a lane count (0 to 64)"},
    {CPU0 "<pci class=\"0x030200\"/>" END, WEFT_EPARSE, "x.xml:1:25: <pci> has no busid"},
    {CPU0 "<pci busid=\"00 01\" class=\"0x030200\"/>" END, WEFT_EPARSE,
     "x.xml:1:25: <pci>: busid \"00 01\" is not a PCI bus id such as 0000:07:00.0"},
    {CPU0 "<pci busid=\"0001:00:00.0\"/>" END, WEFT_EPARSE,
     "x.xml:1:25: <pci busid=\"0001:00:00.0\"> has no class"},
    {CPU0 GPU("0001:00:00.0") "\n" GPU("0001:00:00.0") END, WEFT_EPARSE,
     "x.xml:2:1: busid \"0001:00:00.0\" is used twice (first at line 1)"},
    {CPU0 "<pci busid=\"0001:00:00.0\" class=\"0x030200\" link_speed=\"16 GT/s\" "
          "link_width=\"16\"><gpu sm=\"80\"><nvlink target=\"0009:00:00.0\" count=\"2\" "
          "tclass=\"0x030200\"/></gpu></pci>" END,
     WEFT_EPARSE, "x.xml:1:118: <nvlink> target \"0009:00:00.0\" is not a GPU of this file"},
    {CPU0
     "<pci busid=\"0001:00:00.0\" class=\"0x030200\" link_speed=\"16 GT/s\" "
     "link_width=\"16\"><gpu sm=\"80\"><nvlink count=\"0\" tclass=\"0x068000\"/></gpu></pci>" END,
     WEFT_EPARSE, "x.xml:1:118: <nvlink>: count \"0\" is not a positive integer"},
    {CPU0 "<pci busid=\"0001:00:00.0\" class=\"0x030200\" link_speed=\"16 GT/s\" "
          "link_width=\"16\"><gpu><nvlink count=\"1\" tclass=\"0x068000\"/></gpu></pci>" END,
     WEFT_EPARSE,
     "x.xml:1:105: <gpu> has no integer sm= for NCCL's NVLink bandwidth; pass the NVLink "
     "bandwidth (--nvlink-bw)"},
    {CPU0 GPU("0001:00:00.0") "<pci busid=\"0101:00:00.0\" class=\"0x020700\" link_speed=\"16 "
                              "GT/s\" link_width=\"16\"><nic><net speed=\"fast\"/></nic></pci>" END,
     WEFT_EPARSE, "x.xml:1:191: <net>: speed \"fast\" is not an integer (Mb/s)"},
};

static void test_errors(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        weft_topo *t = NULL;
        weft_diag d;
        weft_diag_clear(&d);
        CHECK_ERR(weft_topo_parse_nccl_xml(bad[i].xml, strlen(bad[i].xml), "x.xml", NULL, &t, &d),
                  bad[i].err);
        CHECK_STR(d.msg, bad[i].msg);
        CHECK(t == NULL);
    }
    /* Nesting deeper than 64 levels. */
    char deep[64 * 5 + 64 * 6 + 64];
    size_t n = 0;
    for (int i = 0; i < 70; i++)
        n += (size_t)sprintf(deep + n, "<a>");
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_parse_nccl_xml(deep, n, "deep.xml", NULL, &t, &d), WEFT_EPARSE);
    CHECK_STR(d.msg, "deep.xml:1:193: elements nested deeper than 64");

    /* Options. */
    weft_nccl_import_opts o;
    weft_nccl_import_opts_init(&o);
    o.hosts = 0;
    CHECK_ERR(weft_topo_load_nccl_xml(FIX "ndv4-topo.xml", &o, &t, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "hosts must be between 1 and 1000000 (got 0)");
    o.hosts = 2;
    o.network = "torus";
    CHECK_ERR(weft_topo_load_nccl_xml(FIX "ndv4-topo.xml", &o, &t, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "unknown network 'torus' (expected rail or switch)");
    o.network = NULL;
    o.nic_bw_gbps = R(-1, 1);
    CHECK_ERR(weft_topo_load_nccl_xml(FIX "ndv4-topo.xml", &o, &t, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "the NIC bandwidth must be >= 0 (0: default)");
    o.nic_bw_gbps = R(0, 1);
    o.hosts = 1000000;
    CHECK_ERR(weft_topo_load_nccl_xml(FIX "ndv4-topo.xml", &o, &t, &d), WEFT_ELIMIT);
    CHECK_STR(d.msg, FIX "ndv4-topo.xml: 1000000 hosts give 24000008 nodes and 68000000 links, "
                         "over the limits of 4194304 and 8388608");
    o.hosts = 2;
    const char *no_nic = CPU0 GPU("0001:00:00.0") END;
    CHECK_ERR(weft_topo_parse_nccl_xml(no_nic, strlen(no_nic), "x.xml", &o, &t, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "x.xml: 2 hosts need NICs to join them, but the file has no NIC");

    /* Files. */
    CHECK_ERR(weft_topo_load_nccl_xml("/nonexistent/t.xml", NULL, &t, &d), WEFT_ENOENT);
    CHECK_STR(d.msg, "/nonexistent/t.xml: cannot open: No such file or directory");
    CHECK_ERR(weft_topo_load_nccl_xml(WEFT_SOURCE_DIR, NULL, &t, &d), WEFT_EIO);
    CHECK_STR(d.msg, WEFT_SOURCE_DIR ": is a directory");
}

static weft_err ctor_ndv4(void *arg)
{
    weft_nccl_import_opts o;
    weft_nccl_import_opts_init(&o);
    o.hosts = 2;
    o.nvlink_bw_gbps = R(300, 1);
    return weft_topo_load_nccl_xml(FIX "ndv4-topo.xml", &o, (weft_topo **)arg, NULL);
}

static weft_err ctor_nvlink(void *arg)
{
    return weft_topo_parse_nccl_xml(nvlink_xml, strlen(nvlink_xml), "nv.xml", NULL,
                                    (weft_topo **)arg, NULL);
}

static void dtor_topo(void *arg)
{
    weft_topo_free(*(weft_topo **)arg);
}

int main(void)
{
    FILE *f = fopen(FIX "ndv4-topo.xml", "r");
    if (!f)
        return WEFT_TEST_SKIP;
    fclose(f);
    test_ndv4_default();
    test_ndv4_options();
    test_ndv2_ndv5();
    test_nvlink_and_net();
    test_errors();
    weft_topo *t = NULL;
    long n1 = weft_test_oom_sweep("nccl ndv4 hosts=2", ctor_ndv4, dtor_topo, &t);
    long n2 = weft_test_oom_sweep("nccl nvlink", ctor_nvlink, dtor_topo, &t);
    printf("allocation failures injected: %ld (ndv4, 2 hosts), %ld (nvlink sample)\n", n1, n2);
    CHECK(n1 > 20);
    CHECK(n2 > 20);
    return weft_test_done();
}
