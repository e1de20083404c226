/* The .topo writer: byte-exact output of a small fabric, write -> parse
 * round trips on hand-built fabrics, names the format cannot hold, notes
 * that need cleaning, and write errors. */
#include <stdlib.h>

#include "base/testing.h"
#include "weft/topo.h"

static weft_rat R(int64_t n, int64_t d)
{
    weft_rat r = {0, 1};
    weft_rat_make(n, d, &r);
    return r;
}

/* Writes t to a heap string (free with free()); NULL when writing fails. */
static char *write_str(const weft_topo *t, weft_err *err, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return NULL;
    *err = weft_topo_write(t, f);
    fclose(f);
    if (len)
        *len = n;
    return buf;
}

/* Writes t, parses the text back and checks the two are equal; returns the
 * text for further checks. */
static char *round_trip(const weft_topo *t, const char *what)
{
    weft_err e = WEFT_EIO;
    size_t n = 0;
    char *text = write_str(t, &e, &n);
    CHECK_ERR(e, WEFT_OK);
    if (!text || e)
        return text;
    weft_topo *back = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    e = weft_topo_parse(text, n, what, &back, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e) {
        fprintf(stderr, "%s: %s\n%s", what, d.msg, text);
        return text;
    }
    if (!weft_topo_equal(t, back)) {
        fprintf(stderr, "%s: not equal after the round trip:\n%s", what, text);
        weft__test_failed++;
    } else {
        weft__test_passed++;
    }
    weft_topo_free(back);
    return text;
}

static weft_topo *build_or_null(weft_topo_builder *b, weft_err e)
{
    weft_topo *t = NULL;
    if (e) {
        weft_topo_builder_free(b);
        CHECK_ERR(e, WEFT_OK);
        return NULL;
    }
    weft_diag d;
    CHECK_ERR(weft_topo_build(b, &t, &d), WEFT_OK);
    return t;
}

/* The DESIGN.md example with a NIC, an attribute and a note. */
static weft_topo *small(void)
{
    weft_topo_builder *b;
    if (weft_topo_builder_new(&b))
        return NULL;
    weft_node_id g0, g1, sw, nic;
    weft_err e;
    (void)((e = weft_topo_builder_note(b, "2 GPUs behind one switch")) ||
           (e = weft_topo_builder_note(b, "")) ||
           (e = weft_topo_builder_note(b, "made by write_test")) ||
           (e = weft_topo_builder_add_node(b, "gpu0", WEFT_NODE_COMPUTE, "0", &g0)) ||
           (e = weft_topo_builder_add_node(b, "gpu1", WEFT_NODE_COMPUTE, "0", &g1)) ||
           (e = weft_topo_builder_add_node(b, "sw0", WEFT_NODE_SWITCH, NULL, &sw)) ||
           (e = weft_topo_builder_add_node(b, "nic0", WEFT_NODE_NIC, "0", &nic)) ||
           (e = weft_topo_builder_set_attr(b, nic, "speed", "200Gbps")) ||
           (e = weft_topo_builder_set_attr(b, nic, "pci", "0000:3b:00.0")) ||
           (e = weft_topo_builder_add_duplex(b, g0, sw, R(300, 1), R(700, 1))) ||
           (e = weft_topo_builder_add_link(b, g1, sw, R(300, 1), R(0, 1))) ||
           (e = weft_topo_builder_add_link(b, sw, g1, R(2400, 7), R(0, 1))) ||
           (e = weft_topo_builder_add_link(b, sw, g1, R(100, 7), R(0, 1))) ||
           (e = weft_topo_builder_add_duplex(b, g0, nic, R(25, 1), R(1, 3))) ||
           (e = weft_topo_builder_add_link(b, nic, g1, R(1073741824, 1000000000), R(0, 1))));
    return build_or_null(b, e);
}

static const char small_text[] = "# 2 GPUs behind one switch\n"
                                 "#\n"
                                 "# made by write_test\n"
                                 "node gpu0 compute host=0\n"
                                 "node gpu1 compute host=0\n"
                                 "node sw0  switch\n"
                                 "node nic0 nic     host=0 speed=200Gbps pci=0000:3b:00.0\n"
                                 "duplex gpu0 sw0  300GB/s 700ns\n"
                                 "duplex gpu0 nic0 25GB/s 1/3ns\n"
                                 "link   gpu1 sw0  300GB/s\n"
                                 "link   sw0  gpu1 2500/7GB/s\n"
                                 "link   nic0 gpu1 1.073741824GB/s\n";

static void test_small(void)
{
    weft_topo *t = small();
    if (!t)
        return;
    char *text = round_trip(t, "small");
    CHECK_STR(text, small_text);
    free(text);
    weft_topo_free(t);
}

/* Shapers (burst= peak=) are written after the latency, fold into a duplex
 * only when both directions have the same one, and parse back equal; a
 * different shaper makes the graphs unequal. */
static void test_shaper(void)
{
    const char *in = "node a compute host=0\nnode s switch\nnode b compute host=1\n"
                     "duplex a s 1GB/s burst=16264 peak=1.3GB/s\n"
                     "link b s 1/8GB/s 1us burst=100B peak=2GB/s\n"
                     "link s b 1/8GB/s 1us burst=99 peak=2GB/s\n";
    weft_topo *t = NULL, *u = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_topo_parse(in, strlen(in), "shaped", &t, &d), WEFT_OK);
    if (!t)
        return;
    weft_link_id l = {0};
    weft_link_shaper sh;
    weft_node_id na = {0}, ns = {0};
    CHECK(weft_topo_find_node(t, "a", &na) && weft_topo_find_node(t, "s", &ns));
    CHECK(weft_topo_find_link(t, na, ns, &l));
    CHECK(weft_topo_link_shaper(t, l, &sh));
    CHECK(sh.burst_bytes == 16264 && weft_rat_eq(sh.peak_gbps, (weft_rat){13, 10}));
    char *text = round_trip(t, "shaped");
    CHECK(text && strstr(text, " 1GB/s burst=16264 peak=1.3GB/s\n"));
    CHECK(text && strstr(text, "link   b s 0.125GB/s 1000ns burst=100 peak=2GB/s\n"));
    CHECK(text && strstr(text, "link   s b 0.125GB/s 1000ns burst=99 peak=2GB/s\n"));
    free(text);
    const char *in2 = "node a compute host=0\nnode s switch\nnode b compute host=1\n"
                      "duplex a s 1GB/s burst=16264 peak=1.3GB/s\n"
                      "duplex b s 1/8GB/s 1us burst=100 peak=2GB/s\n";
    CHECK_ERR(weft_topo_parse(in2, strlen(in2), "shaped2", &u, &d), WEFT_OK);
    CHECK(u && !weft_topo_equal(t, u));
    weft_topo_free(u);
    weft_topo_free(t);
}

/* Opposite links fold into a duplex only when bandwidth and latency agree. */
static void test_pairs(void)
{
    weft_topo_builder *b;
    if (weft_topo_builder_new(&b))
        return;
    weft_node_id v[4];
    weft_err e;
    (void)((e = weft_topo_builder_add_node(b, "d", WEFT_NODE_COMPUTE, NULL, &v[0])) ||
           (e = weft_topo_builder_add_node(b, "c", WEFT_NODE_COMPUTE, NULL, &v[1])) ||
           (e = weft_topo_builder_add_node(b, "b", WEFT_NODE_OCS, NULL, &v[2])) ||
           (e = weft_topo_builder_add_node(b, "a", WEFT_NODE_NIC, NULL, &v[3])) ||
           /* the twin is added first and has the larger source id */
           (e = weft_topo_builder_add_link(b, v[3], v[0], R(1, 8), R(5, 2))) ||
           (e = weft_topo_builder_add_link(b, v[0], v[3], R(1, 8), R(5, 2))) ||
           /* same bandwidth, different latency */
           (e = weft_topo_builder_add_link(b, v[1], v[2], R(3, 1), R(0, 1))) ||
           (e = weft_topo_builder_add_link(b, v[2], v[1], R(3, 1), R(1, 1))) ||
           /* same latency, different bandwidth */
           (e = weft_topo_builder_add_link(b, v[0], v[1], R(3, 1), R(0, 1))) ||
           (e = weft_topo_builder_add_link(b, v[1], v[0], R(4, 1), R(0, 1))) ||
           /* one way only (not at the ocs: its ports are duplex) */
           (e = weft_topo_builder_add_link(b, v[3], v[1], R(1, 1000000), R(0, 1))));
    weft_topo *t = build_or_null(b, e);
    if (!t)
        return;
    char *text = round_trip(t, "pairs");
    CHECK_STR(text, "node d compute\n"
                    "node c compute\n"
                    "node b ocs\n"
                    "node a nic\n"
                    "link   d c 3GB/s\n"
                    "duplex d a 0.125GB/s 2.5ns\n"
                    "link   c d 4GB/s\n"
                    "link   c b 3GB/s\n"
                    "link   b c 3GB/s 1ns\n"
                    "link   a c 0.000001GB/s\n");
    free(text);
    weft_topo_free(t);
}

/* Long names stop widening the columns at 24 bytes; names of the maximum
 * length, odd but legal bytes and attribute values survive. */
static void test_names(void)
{
    char longname[WEFT_TOPO_NAME_MAX + 1];
    memset(longname, 'x', WEFT_TOPO_NAME_MAX);
    longname[WEFT_TOPO_NAME_MAX] = '\0';
    weft_topo_builder *b;
    if (weft_topo_builder_new(&b))
        return;
    weft_node_id v[4];
    weft_err e;
    (void)((e = weft_topo_builder_add_node(b, longname, WEFT_NODE_COMPUTE, longname, &v[0])) ||
           (e = weft_topo_builder_add_node(b, "caf\xc3\xa9/\xe2\x82\xac", WEFT_NODE_COMPUTE, "h=1",
                                           &v[1])) ||
           (e = weft_topo_builder_add_node(b, "s", WEFT_NODE_SWITCH, NULL, &v[2])) ||
           (e = weft_topo_builder_add_node(b, "node", WEFT_NODE_SWITCH, NULL, &v[3])) ||
           (e = weft_topo_builder_set_attr(b, v[1], "k", "a=b=c")) ||
           (e = weft_topo_builder_set_attr(b, v[1], "empty", "")) ||
           (e = weft_topo_builder_set_attr(b, v[0], longname, longname)) ||
           (e = weft_topo_builder_add_duplex(b, v[0], v[1], R(2400, 7), R(0, 1))) ||
           (e = weft_topo_builder_add_duplex(b, v[1], v[3], R(INT64_MAX, 1), R(INT64_MAX, 3))) ||
           (e = weft_topo_builder_add_link(b, v[2], v[0], R(1, INT64_MAX), R(0, 1))));
    weft_topo *t = build_or_null(b, e);
    if (!t)
        return;
    char *text = round_trip(t, "names");
    CHECK_CONTAINS(text, "node caf\xc3\xa9/\xe2\x82\xac                compute host=h=1 k=a=b=c "
                         "empty=\n");
    CHECK_CONTAINS(text, "node s                        switch\n");
    CHECK_CONTAINS(text, "duplex caf\xc3\xa9/\xe2\x82\xac                node                     "
                         "9223372036854775807GB/s 9223372036854775807/3ns\n");
    free(text);
    weft_topo_free(t);
}

/* A ring of 64 ranks with a switch, hosts of 8 and fractional bandwidths:
 * a larger fabric, compared after the round trip. */
static void test_ring(void)
{
    weft_topo_builder *b;
    if (weft_topo_builder_new(&b))
        return;
    weft_err e = WEFT_OK;
    weft_node_id sw;
    char name[32], host[32];
    for (int i = 0; i < 64 && !e; i++) {
        snprintf(name, sizeof name, "r%d", i);
        snprintf(host, sizeof host, "box%d", i / 8);
        e = weft_topo_builder_add_node(b, name, WEFT_NODE_COMPUTE, host, NULL);
    }
    if (!e)
        e = weft_topo_builder_add_node(b, "sw", WEFT_NODE_SWITCH, NULL, &sw);
    for (uint32_t i = 0; i < 64 && !e; i++) {
        weft_node_id a = {i}, c = {(i + 1) % 64};
        e = weft_topo_builder_add_link(b, a, c, R(1000, i + 3), R(i, 10));
        if (!e)
            e = weft_topo_builder_add_duplex(b, a, sw, R(i + 1, 2), R(0, 1));
    }
    weft_topo *t = build_or_null(b, e);
    if (!t)
        return;
    char *text = round_trip(t, "ring");
    CHECK_CONTAINS(text, "link   r0  r1  1000/3GB/s\n");
    CHECK_CONTAINS(text, "link   r63 r0  500/33GB/s 6.3ns\n");
    CHECK_CONTAINS(text, "duplex r63 sw  32GB/s\n");
    free(text);
    weft_topo_free(t);
}

/* Names the format cannot hold give WEFT_EINVAL and no output at all. */
static void test_unwritable(void)
{
    static const struct {
        const char *name, *host, *key, *value;
    } cases[] = {
        {"a b", NULL, NULL, NULL},  {"a#b", NULL, NULL, NULL},     {"a\tb", NULL, NULL, NULL},
        {"a\rb", NULL, NULL, NULL}, {"caf\xe9", NULL, NULL, NULL}, {"a", "h 1", NULL, NULL},
        {"a", NULL, "k=", "v"},     {"a", NULL, "k", "v w"},       {"a", NULL, "k", "v#"},
        {"a", NULL, "#k", "v"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        weft_topo_builder *b;
        if (weft_topo_builder_new(&b))
            return;
        weft_node_id v;
        weft_err e;
        (void)((e = weft_topo_builder_note(b, "a note that must not be written either")) ||
               (e = weft_topo_builder_add_node(b, cases[i].name, WEFT_NODE_COMPUTE, cases[i].host,
                                               &v)) ||
               (cases[i].key &&
                (e = weft_topo_builder_set_attr(b, v, cases[i].key, cases[i].value))));
        weft_topo *t = build_or_null(b, e);
        if (!t)
            continue;
        size_t n = 99;
        char *text = write_str(t, &e, &n);
        CHECK_ERR(e, WEFT_EINVAL);
        CHECK_INT(n, 0);
        free(text);
        weft_topo_free(t);
    }
    /* A node line over the limit (the builder allows 64 KiB of attributes). */
    weft_topo_builder *b;
    if (weft_topo_builder_new(&b))
        return;
    weft_node_id v;
    weft_err e = weft_topo_builder_add_node(b, "a", WEFT_NODE_COMPUTE, NULL, &v);
    char key[16], value[200];
    memset(value, 'v', sizeof value - 1);
    value[sizeof value - 1] = '\0';
    for (int i = 0; i < 21 && !e; i++) {
        snprintf(key, sizeof key, "k%d", i);
        e = weft_topo_builder_set_attr(b, v, key, value);
    }
    weft_topo *t = build_or_null(b, e);
    if (!t)
        return;
    size_t n = 99;
    char *text = write_str(t, &e, &n);
    CHECK_ERR(e, WEFT_EINVAL);
    CHECK_INT(n, 0);
    free(text);
    weft_topo_free(t);
}

/* The note is for people: bytes a line may not hold become '?', and long
 * lines continue on the next comment line. */
static void test_note(void)
{
    char note[2600];
    memset(note, 'n', sizeof note - 1);
    note[sizeof note - 1] = '\0';
    /* a 3-byte character across the 1000-byte cut of the first line */
    memcpy(note + 997, "\xe2\x82\xac", 3);
    weft_topo_builder *b;
    if (weft_topo_builder_new(&b))
        return;
    weft_err e;
    (void)((e = weft_topo_builder_note(b, "tab\there, cr\rthere, bad \xff\xfe, nul-free")) ||
           (e = weft_topo_builder_note(b, note)) ||
           (e = weft_topo_builder_add_node(b, "a", WEFT_NODE_COMPUTE, NULL, NULL)));
    weft_topo *t = build_or_null(b, e);
    if (!t)
        return;
    char *text = round_trip(t, "note");
    char want[3000];
    int o = snprintf(want, sizeof want, "# tab\there, cr?there, bad ??, nul-free\n# ");
    memcpy(want + o, note, 997);
    o += 997;
    o += snprintf(want + o, sizeof want - (size_t)o, "\n# \xe2\x82\xac");
    memcpy(want + o, note + 1000, 995);
    o += 995;
    o += snprintf(want + o, sizeof want - (size_t)o, "\n# ");
    memcpy(want + o, note + 1995, 604);
    o += 604;
    snprintf(want + o, sizeof want - (size_t)o, "\nnode a compute\n");
    CHECK_STR(text, want);
    free(text);
    weft_topo_free(t);
}

static void test_eio(void)
{
    FILE *f = fopen("/dev/full", "w");
    if (!f)
        return;
    weft_topo *t = small();
    if (t) {
        CHECK_ERR(weft_topo_write(t, f), WEFT_EIO);
        weft_topo_free(t);
    }
    fclose(f);
}

int main(void)
{
    test_small();
    test_shaper();
    test_pairs();
    test_names();
    test_ring();
    test_unwritable();
    test_note();
    test_eio();
    return weft_test_done();
}
