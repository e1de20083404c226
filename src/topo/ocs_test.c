/* Optical circuit switches in the fabric: the port rules weft_topo_build
 * enforces (duplex, one rate both ways, never OCS to OCS), the reconfig=
 * attribute (parse errors with their exact messages, the delay read back by
 * weft_topo_ocs_reconfig_ns), and the mixnet preset's exact shape. */
#include <string.h>

#include "base/testing.h"
#include "weft/topo.h"

static weft_topo *parse(const char *text, weft_err want, const char *msg)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_topo_parse(text, strlen(text), "t.topo", &t, &d), want);
    if (msg)
        CHECK_STR(d.msg, msg);
    return t;
}

static weft_rat ns_of(const weft_topo *t, const char *name)
{
    weft_node_id n = {0};
    CHECK(weft_topo_find_node(t, name, &n));
    return weft_topo_ocs_reconfig_ns(t, n);
}

static void test_ports(void)
{
    const char *head = "node a compute\nnode b compute\nnode s switch\nnode o ocs\nnode p ocs\n";
    char text[512];
    snprintf(text, sizeof text, "%sduplex a o 10GB/s\nduplex b o 10GB/s\nduplex s o 5GB/s 2ns\n",
             head);
    weft_topo *t = parse(text, WEFT_OK, NULL);
    if (t) {
        CHECK(weft_rat_eq(ns_of(t, "o"), weft_rat_int(0))); /* no reconfig=: instant */
        CHECK(weft_rat_eq(ns_of(t, "a"), weft_rat_int(0))); /* not an ocs */
        weft_topo_free(t);
    }
    snprintf(text, sizeof text, "%sduplex a o 10GB/s\nlink o b 10GB/s\n", head);
    parse(text, WEFT_ETOPO,
          "t.topo: ocs 'o' has a link to 'b' but none back: an OCS port is a duplex pair (use "
          "duplex)");
    snprintf(text, sizeof text, "%sduplex a o 10GB/s\nlink b o 10GB/s\n", head);
    parse(text, WEFT_ETOPO,
          "t.topo: ocs 'o' has a link from 'b' but none to it: an OCS port is a duplex pair (use "
          "duplex)");
    snprintf(text, sizeof text, "%slink a o 10GB/s\nlink o a 20GB/s\n", head);
    parse(text, WEFT_ETOPO,
          "t.topo: ocs 'o' port to 'a' has 20 GB/s out and 10 GB/s in: a circuit carries one rate "
          "both "
          "ways");
    snprintf(text, sizeof text, "%sduplex a o 10GB/s\nduplex o p 10GB/s\n", head);
    parse(text, WEFT_ETOPO,
          "t.topo: ocs 'o' has a link to ocs 'p': an OCS port joins a compute, nic or switch node, "
          "not "
          "another OCS");
}

static void test_reconfig(void)
{
    weft_topo *t = parse("node a compute\nnode b compute\nnode o ocs reconfig=1.5ms\n"
                         "node q ocs reconfig=0\nduplex a o 1GB/s\nduplex b o 1GB/s\n"
                         "duplex a q 1GB/s\n",
                         WEFT_OK, NULL);
    if (t) {
        CHECK(weft_rat_eq(ns_of(t, "o"), weft_rat_int(1500000)));
        CHECK(weft_rat_eq(ns_of(t, "q"), weft_rat_int(0)));
        weft_topo_free(t);
    }
    parse("node a compute reconfig=1us\n", WEFT_EPARSE,
          "t.topo:1:16: attribute 'reconfig' is for ocs nodes; 'a' is a compute");
    parse("node a compute\nnode o ocs reconfig=25\n", WEFT_EPARSE,
          "t.topo:2:23: bad 'reconfig=25' on 'o': missing unit (a delay such as 25us; units "
          "ns, us, ms, s)");
    parse("node a compute\nnode o ocs reconfig=-1us\n", WEFT_EPARSE,
          "t.topo:2:21: bad 'reconfig=-1us' on 'o': must be >= 0 (a delay such as 25us; units "
          "ns, us, ms, s)");
}

/* Bandwidth of a -> b in GB/s, exact; -1 when there is no such link. */
static weft_rat bw(const weft_topo *t, const char *a, const char *b)
{
    weft_node_id na, nb;
    weft_link_id l;
    if (!weft_topo_find_node(t, a, &na) || !weft_topo_find_node(t, b, &nb) ||
        !weft_topo_find_link(t, na, nb, &l))
        return weft_rat_int(-1);
    return weft_topo_link_bw(t, l);
}

static void test_mixnet(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_preset("mixnet:hosts=4,gpus=4,ocsnics=1,nicbw=400Gbps,region=2", &t, &d),
              WEFT_OK);
    if (!t)
        return;
    /* 4 hosts x (4 GPUs + NVSwitch + 4 NICs) + 3 rails + 2 OCSes. */
    CHECK_INT(weft_topo_num_nodes(t), 4 * 9 + 3 + 2);
    CHECK(weft_topo_has_ocs(t));
    weft_topo *plain = NULL;
    CHECK_ERR(weft_topo_preset("a100:2", &plain, &d), WEFT_OK);
    CHECK(plain && !weft_topo_has_ocs(plain));
    weft_topo_free(plain);
    CHECK_INT(weft_topo_num_ranks(t), 16);
    CHECK_INT(weft_topo_num_links(t), 4 * 4 * 6);
    CHECK(weft_rat_eq(bw(t, "b0.nic0", "rail0"), weft_rat_int(50)));
    CHECK(weft_rat_eq(bw(t, "b0.nic2", "rail2"), weft_rat_int(50)));
    CHECK(weft_rat_eq(bw(t, "b0.nic3", "ocs0"), weft_rat_int(50)));
    CHECK(weft_rat_eq(bw(t, "b1.nic3", "ocs0"), weft_rat_int(50)));
    CHECK(weft_rat_eq(bw(t, "b2.nic3", "ocs1"), weft_rat_int(50)));
    CHECK(weft_rat_eq(bw(t, "b3.nic3", "ocs0"), weft_rat_int(-1)));
    CHECK(weft_rat_eq(bw(t, "b0.gpu3", "b0.nvsw0"), weft_rat_int(450)));
    CHECK(weft_rat_eq(ns_of(t, "ocs1"), weft_rat_int(25000)));
    weft_node_id o;
    CHECK(weft_topo_find_node(t, "ocs0", &o));
    CHECK_INT(weft_topo_node_kind(t, o), WEFT_NODE_OCS);
    CHECK_STR(weft_topo_node_attr(t, o, "reconfig"), "25us");
    weft_topo_free(t);

    static const struct {
        const char *spec, *msg;
    } bad[] = {
        {"mixnet:hosts=4,reconfig=25",
         "mixnet:hosts=4,reconfig=25: reconfig='25': missing unit (a delay such as 25us or 1ms; "
         "units ns, us, ms, s)"},
        {"mixnet:hosts=4,region=3",
         "mixnet:hosts=4,region=3: region=3 must divide hosts=4 (regions of equal size)"},
        {"mixnet:hosts=4,gpus=2,ocsnics=2,region=2",
         "mixnet:hosts=4,gpus=2,ocsnics=2,region=2: with ocsnics=gpus=2 there is no packet "
         "fabric, so hosts of different regions could not reach each other; lower ocsnics or "
         "make region=4"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        t = NULL;
        weft_diag_clear(&d);
        CHECK_ERR(weft_topo_preset(bad[i].spec, &t, &d), WEFT_EINVAL);
        CHECK_STR(d.msg, bad[i].msg);
        CHECK(t == NULL);
    }
    /* Every NIC on the OCS and one region: no packet fabric, still whole. */
    CHECK_ERR(weft_topo_preset("mixnet:hosts=2,gpus=2,ocsnics=2", &t, &d), WEFT_OK);
    weft_topo_free(t);
}

int main(void)
{
    test_ports();
    test_reconfig();
    test_mixnet();
    return weft_test_done();
}
