/* weft_topo_from_spec: each format by extension, by content when the
 * extension says nothing, presets, options reaching the NCCL importer, and
 * the errors for a missing spec, a directory and an empty spec. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/testing.h"
#include "weft/topo.h"

#define FIX WEFT_SHARED_FIXTURES

static char tmpdir[512];

/* Writes text to tmpdir/name and returns the path (static storage). */
static const char *put(const char *name, const char *text)
{
    static char path[4][600];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, 600, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return p;
}

static uint32_t ranks_of(const char *spec, const weft_spec_opts *o, weft_err want)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_topo_from_spec(spec, o, &t, &d);
    CHECK_ERR(e, want);
    if (e != want)
        fprintf(stderr, "  %s: %s\n", spec, d.msg);
    uint32_t n = t ? weft_topo_num_ranks(t) : 0;
    weft_topo_free(t);
    return n;
}

/* Imported fabrics survive the .topo writer and parser unchanged (names
 * such as "b1.gpu3" and "d0.sw2", busid= values). */
static void roundtrip(const char *spec, const weft_spec_opts *o)
{
    weft_topo *t = NULL, *back = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_topo_from_spec(spec, o, &t, &d), WEFT_OK);
    if (!t)
        return;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f != NULL);
    if (f) {
        CHECK_ERR(weft_topo_write(t, f), WEFT_OK);
        fclose(f);
        CHECK_ERR(weft_topo_parse(text, len, "roundtrip.topo", &back, &d), WEFT_OK);
        CHECK(back && weft_topo_equal(t, back));
        if (back)
            CHECK_INT(weft_topo_num_ranks(back), weft_topo_num_ranks(t));
        weft_topo_free(back);
        free(text);
    }
    weft_topo_free(t);
}

static const char *note_of(const char *spec, char *buf, size_t size)
{
    weft_topo *t = NULL;
    buf[0] = '\0';
    if (weft_topo_from_spec(spec, NULL, &t, NULL) == WEFT_OK) {
        snprintf(buf, size, "%s", weft_topo_note(t));
        weft_topo_free(t);
    }
    return buf;
}

int main(void)
{
    FILE *f = fopen(FIX "/nccl-topo/azhpc-images_ndv4-topo.xml", "r");
    if (!f)
        return WEFT_TEST_SKIP;
    fclose(f);
    snprintf(tmpdir, sizeof tmpdir, "%s/spec_test.%ld", WEFT_BINARY_DIR, (long)getpid());
    if (mkdir(tmpdir, 0700) != 0)
        return WEFT_TEST_SKIP;

    weft_spec_opts o;
    weft_spec_opts_init(&o);
    CHECK_INT(o.nccl.hosts, 1);
    /* By extension, with the options passed down to the NCCL importer. */
    CHECK_INT(ranks_of(FIX "/nccl-topo/azhpc-images_ndv4-topo.xml", NULL, WEFT_OK), 8);
    o.nccl.hosts = 2;
    o.nccl.network = "rail";
    CHECK_INT(ranks_of(FIX "/nccl-topo/azhpc-images_ndv4-topo.xml", &o, WEFT_OK), 16);
    CHECK_INT(ranks_of(FIX "/astra-sim/hgx_h100_32gpu.yml", &o, WEFT_OK), 32);
    const char *topo = "node a compute\nnode b compute\nduplex a b 10GB/s\n";
    CHECK_INT(ranks_of(put("two.topo", topo), NULL, WEFT_OK), 2);
    const char *yml = "topology: [ Ring ]\nnpus_count: [ 5 ]\nbandwidth: [ 1 ]\nlatency: [ 0 ]\n";
    CHECK_INT(ranks_of(put("ring.yaml", yml), NULL, WEFT_OK), 5);

    /* By content when the extension says nothing. */
    char note[4096];
    const char *xml = "\xEF\xBB\xBF <system><cpu><pci busid=\"1:0:0.0\" class=\"0x030200\" "
                      "link_speed=\"16 GT/s\" link_width=\"16\"/></cpu></system>";
    CHECK_INT(ranks_of(put("dump.txt", xml), NULL, WEFT_OK), 1);
    CHECK_CONTAINS(note_of(put("dump.txt", xml), note, sizeof note), "NCCL topology XML");
    CHECK_INT(ranks_of(put("network", "# ASTRA-sim\n"
                                      "---\n"
                                      "topology: [ Switch ]\nnpus_count: [ 3 ]\n"
                                      "bandwidth: [ 1 ]\nlatency: [ 0 ]\n"),
                       NULL, WEFT_OK),
              3);
    CHECK_INT(ranks_of(put("fabric.txt", topo), NULL, WEFT_OK), 2);
    /* A .topo error comes from the .topo parser, naming the file. */
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    const char *badtopo = put("bad.txt", "node a compute\nlink a zz 1GB/s\n");
    CHECK_ERR(weft_topo_from_spec(badtopo, NULL, &t, &d), WEFT_EPARSE);
    CHECK_CONTAINS(d.msg, "bad.txt:2:");
    /* So does an XML error under a .xml name. */
    const char *badxml = put("bad.xml", "<system>");
    CHECK_ERR(weft_topo_from_spec(badxml, NULL, &t, &d), WEFT_EPARSE);
    CHECK_CONTAINS(d.msg, "bad.xml:1:9: malformed XML: no element found");

    /* weft_spec_kind_of decides as weft_topo_from_spec does: by extension,
     * else by content; a name that is no file is a preset or host. */
    CHECK_INT(weft_spec_kind_of(FIX "/nccl-topo/azhpc-images_ndv4-topo.xml"), WEFT_SPEC_NCCL_XML);
    CHECK_INT(weft_spec_kind_of(FIX "/astra-sim/hgx_h100_32gpu.yml"), WEFT_SPEC_ASTRA_YML);
    CHECK_INT(weft_spec_kind_of(put("two.topo", topo)), WEFT_SPEC_TOPO);
    CHECK_INT(weft_spec_kind_of(put("dump.txt", xml)), WEFT_SPEC_NCCL_XML);
    CHECK_INT(weft_spec_kind_of(put("fabric.txt", topo)), WEFT_SPEC_TOPO);
    CHECK_INT(weft_spec_kind_of(tmpdir), WEFT_SPEC_TOPO);
    CHECK_INT(weft_spec_kind_of("a100:2"), WEFT_SPEC_PRESET);
    CHECK_INT(weft_spec_kind_of("nosuchthing"), WEFT_SPEC_PRESET);
    CHECK_INT(weft_spec_kind_of("host"), WEFT_SPEC_HOST);
    CHECK_INT(weft_spec_kind_of("host:ranks=numa"), WEFT_SPEC_HOST);
    CHECK_INT(weft_spec_kind_of("hostile:2"), WEFT_SPEC_PRESET);
    CHECK_STR(weft_spec_kind_name(WEFT_SPEC_NCCL_XML), "an NCCL topology XML");
    CHECK_STR(weft_spec_kind_name(WEFT_SPEC_TOPO), "a .topo file");

    /* The NCCL importer's defaults are assumptions, listed apart from the
     * rest of the note; what the options told is not. */
    weft_spec_opts ao;
    weft_spec_opts_init(&ao);
    CHECK_ERR(weft_topo_from_spec(FIX "/nccl-topo/azhpc-images_ndv4-topo.xml", &ao, &t, &d),
              WEFT_OK);
    if (t) {
        CHECK_STR(weft_topo_assumptions(t),
                  "no NVLink modelled: the file has no <nvlink> elements; pass the NVLink "
                  "bandwidth (--nvlink-bw)\n"
                  "CPU to CPU: 16 GB/s each way (NCCL's figure for AMD Zen 1/2, "
                  "ncclTopoGetInterCpuBw); pass --cpu-bw to override\n"
                  "latencies: 0 (the file gives none)");
        CHECK_CONTAINS(weft_topo_note(t), "no NVLink modelled");
        CHECK_CONTAINS(weft_topo_note(t), "PCIe links: NCCL's rule");
        weft_topo_free(t);
        t = NULL;
    }
    ao.nccl.nvlink_bw_gbps = weft_rat_int(300);
    ao.nccl.cpu_bw_gbps = weft_rat_int(16);
    CHECK_ERR(weft_topo_from_spec(FIX "/nccl-topo/azhpc-images_ndv4-topo.xml", &ao, &t, &d),
              WEFT_OK);
    if (t) {
        CHECK_STR(weft_topo_assumptions(t), "latencies: 0 (the file gives none)");
        weft_topo_free(t);
        t = NULL;
    }
    CHECK_ERR(weft_topo_from_spec("a100:2", NULL, &t, &d), WEFT_OK);
    if (t) {
        CHECK_STR(weft_topo_assumptions(t), "");
        weft_topo_free(t);
        t = NULL;
    }

    /* Presets. */
    CHECK_INT(ranks_of("ring:4", NULL, WEFT_OK), 4);
    CHECK_INT(ranks_of("a100:2", NULL, WEFT_OK), 16);
    CHECK_ERR(weft_topo_from_spec("ring:abc", NULL, &t, &d), WEFT_EINVAL);
    CHECK(t == NULL);

    /* Neither a file nor a preset. */
    CHECK_ERR(weft_topo_from_spec("nosuchthing", NULL, &t, &d), WEFT_ENOENT);
    CHECK_STR(d.msg, "no such file or preset 'nosuchthing' (see weft topo list)");
    CHECK_ERR(weft_topo_from_spec("/nonexistent/f.topo", NULL, &t, &d), WEFT_ENOENT);
    CHECK_STR(d.msg, "no such file or preset '/nonexistent/f.topo' (see weft topo list)");
    CHECK_ERR(weft_topo_from_spec(tmpdir, NULL, &t, &d), WEFT_EIO);
    CHECK_CONTAINS(d.msg, ": is a directory");
    CHECK_ERR(weft_topo_from_spec("", NULL, &t, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "empty spec (a file or a preset; see weft topo list)");
    /* Bad options are reported whatever the file. */
    o.nccl.network = "mesh";
    CHECK_ERR(weft_topo_from_spec(FIX "/nccl-topo/azhpc-images_ndv2-topo.xml", &o, &t, &d),
              WEFT_EINVAL);
    CHECK_STR(d.msg, "unknown network 'mesh' (expected rail or switch)");

    weft_spec_opts_init(&o);
    roundtrip(FIX "/nccl-topo/azhpc-images_ndv2-topo.xml", &o);
    o.nccl.hosts = 3;
    o.nccl.nvlink_bw_gbps = weft_rat_int(450);
    o.nccl.network = "switch";
    roundtrip(FIX "/nccl-topo/azhpc-images_ndv5-topo.xml", &o);
    o.nccl.network = "rail";
    roundtrip(FIX "/nccl-topo/azhpc-images_ndv4-topo.xml", &o);
    roundtrip(FIX "/astra-sim/hgx_h100_32gpu.yml", NULL);
    roundtrip(FIX "/astra-sim/tpu_v3_32_2dtorus.yml", NULL);

    const char *names[] = {"two.topo",   "ring.yaml", "dump.txt", "network",
                           "fabric.txt", "bad.txt",   "bad.xml"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", tmpdir, names[i]);
        unlink(p);
    }
    rmdir(tmpdir);
    return weft_test_done();
}
