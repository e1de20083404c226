/* Host fabrics from hwloc: committed hwloc XML fixtures (this development
 * VM's own export, and a synthetic two-package machine with a NIC under
 * package 1) turned into exact, reviewed .topo files; the spec form; every
 * error; this machine read live. Skips when weft is built without hwloc,
 * after checking that message. */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "weft/host.h"
#include "weft/topo.h"

#define DIR WEFT_SOURCE_DIR "/tests/fixtures/hwloc/"

static char *topo_text(const weft_topo *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK_ERR(weft_topo_write(t, f), WEFT_OK);
    fclose(f);
    return buf;
}

/* The fabric of spec is exactly the .topo file `want`. */
static void expect_topo(const char *spec, const char *want)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_topo_from_spec(spec, NULL, &t, &d), WEFT_OK);
    if (!t) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        return;
    }
    char *got = topo_text(t);
    size_t len;
    char *exp = weft_test_read_file(want, &len);
    CHECK(exp != NULL);
    if (exp)
        CHECK_STR(got, exp);
    /* And the file parses back to the same graph. */
    weft_topo *back = NULL;
    CHECK_ERR(weft_topo_load_file(want, &back, NULL), WEFT_OK);
    CHECK(back && weft_topo_equal(t, back));
    weft_topo_free(back);
    free(exp);
    free(got);
    weft_topo_free(t);
}

static void expect_error(const char *spec, weft_err err, const char *msg)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_topo_from_spec(spec, NULL, &t, &d), err);
    CHECK(t == NULL);
    CHECK_STR(d.msg, msg);
}

int main(void)
{
    if (!weft_host_available()) {
        weft_topo *t = NULL;
        weft_diag d;
        weft_diag_clear(&d);
        CHECK_ERR(weft_topo_from_spec("host", NULL, &t, &d), WEFT_EUNSUPPORTED);
        CHECK_CONTAINS(d.msg, "host: weft was built without hwloc");
        weft_test_done();
        return WEFT_TEST_SKIP;
    }
    expect_topo("host:xml=" DIR "vm-2core.xml", DIR "vm-2core.topo");
    expect_topo("host:xml=" DIR "synth-2pkg-nic.xml,hosts=2", DIR "synth-2pkg-nic.rail2.topo");
    expect_topo("host:xml=" DIR "synth-2pkg-nic.xml,ranks=numa,hosts=3,net=switch,nic-bw=100Gbps",
                DIR "synth-2pkg-nic.numa3.topo");

    /* The same through the options, with every bandwidth given. */
    weft_host_opts o;
    weft_host_opts_init(&o);
    o.xml = DIR "synth-2pkg-nic.xml";
    o.unit = WEFT_HOST_PACKAGE;
    CHECK_ERR(weft_parse_bandwidth("25GB/s", &o.rank_bw_gbps), WEFT_OK);
    CHECK_ERR(weft_parse_bandwidth("64GB/s", &o.numa_bw_gbps), WEFT_OK);
    weft_topo *t = NULL;
    CHECK_ERR(weft_topo_host(&o, &t, NULL), WEFT_OK);
    if (t) {
        char *got = topo_text(t);
        CHECK_STR(got, "# host fabric from hwloc XML synth-2pkg-nic.xml: 2 NUMA nodes, 1 NIC per "
                       "box\n"
                       "# ranks are the 2 packages; each to its NUMA node's memory (mem<i>) 25 "
                       "GB/s each way (rank-bw)\n"
                       "# memories of one box joined pairwise by 64 GB/s each way (numa-bw)\n"
                       "# one box: its NICs carry nothing and are left out\n"
                       "node mem0     switch  host=0\n"
                       "node mem1     switch  host=0\n"
                       "node package0 compute host=0\n"
                       "node package1 compute host=0\n"
                       "duplex mem0     mem1     64GB/s\n"
                       "duplex mem0     package0 25GB/s\n"
                       "duplex mem1     package1 25GB/s\n");
        free(got);
        weft_topo_free(t);
    }
    o.unit = WEFT_HOST_PU;
    CHECK_ERR(weft_topo_host(&o, &t, NULL), WEFT_OK);
    CHECK_INT(t ? weft_topo_num_ranks(t) : 0, 6);
    weft_topo_free(t);

    /* Errors. */
    expect_error("host:xml=" DIR "vm-2core.xml,hosts=2", WEFT_ETOPO,
                 "host: hwloc does not know the speed of NIC eth0 of hwloc XML vm-2core.xml; "
                 "give the network bandwidth (nic-bw)");
    expect_error("host:xml=/nonexistent.xml", WEFT_EPARSE,
                 "host: hwloc cannot read the XML file /nonexistent.xml");
    expect_error("host:ranks=gpu", WEFT_EINVAL,
                 "host:ranks=gpu: bad ranks 'gpu' (expected core, numa, package or pu)");
    expect_error("host:hosts=0", WEFT_EINVAL, "host:hosts=0: bad hosts '0' (expected 1 .. 65536)");
    expect_error("host:net=ring", WEFT_EINVAL,
                 "host:net=ring: bad net 'ring' (expected rail or switch)");
    expect_error("host:nic-bw=fast", WEFT_EINVAL,
                 "host:nic-bw=fast: bad nic-bw 'fast' (expected a bandwidth such as 25 (GB/s) or "
                 "100Gbps)");
    expect_error("host:speed=1", WEFT_EINVAL,
                 "host:speed=1: unknown key 'speed' (expected xml, ranks, rank-bw, numa-bw, "
                 "nic-bw, hosts or net)");
    expect_error("host:ranks", WEFT_EINVAL, "host:ranks: expected KEY=VALUE, got 'ranks'");
    weft_host_opts_init(&o);
    o.network = "torus";
    weft_diag d;
    CHECK_ERR(weft_topo_host(&o, &t, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "host: network must be rail or switch, got 'torus'");
    /* "hostile" is not a host spec: the preset lookup answers. */
    expect_error("hostile", WEFT_ENOENT, "no such file or preset 'hostile' (see weft topo list)");

    /* This machine, live: at least one core, each a rank joined to memory. */
    CHECK_ERR(weft_topo_from_spec("host", NULL, &t, &d), WEFT_OK);
    CHECK(t && weft_topo_num_ranks(t) >= 1);
    CHECK(t && strstr(weft_topo_note(t), "host fabric from this machine (hwloc)") != NULL);
    weft_topo_free(t);
    return weft_test_done();
}
