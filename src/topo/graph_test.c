/* Builder, CSR layout, merging of parallel links, lookups, stats, and the
 * allocation-failure sweep of the builder. */
#include "base/alloc.h"
#include "base/testing.h"
#include "weft/topo.h"

static weft_rat R(int64_t n, int64_t d)
{
    weft_rat r = {0, 1};
    weft_rat_make(n, d, &r);
    return r;
}

/* Two GPUs behind a switch (the DESIGN.md example) plus a NIC. */
static weft_err build_small(weft_topo **out, weft_diag *d)
{
    weft_topo_builder *b;
    weft_err e = weft_topo_builder_new(&b);
    if (e)
        return e;
    weft_node_id g0, g1, sw, nic;
    if ((e = weft_topo_builder_add_node(b, "gpu0", WEFT_NODE_COMPUTE, "0", &g0)) ||
        (e = weft_topo_builder_add_node(b, "gpu1", WEFT_NODE_COMPUTE, "0", &g1)) ||
        (e = weft_topo_builder_add_node(b, "sw0", WEFT_NODE_SWITCH, NULL, &sw)) ||
        (e = weft_topo_builder_add_node(b, "nic0", WEFT_NODE_NIC, "0", &nic)) ||
        (e = weft_topo_builder_set_attr(b, nic, "speed", "200Gbps")) ||
        (e = weft_topo_builder_add_duplex(b, g0, sw, R(300, 1), R(7, 10))) ||
        (e = weft_topo_builder_add_link(b, g1, sw, R(300, 1), R(0, 1))) ||
        (e = weft_topo_builder_add_link(b, sw, g1, R(100, 1), R(0, 1))) ||
        (e = weft_topo_builder_add_link(b, sw, g1, R(50, 1), R(0, 1))) ||
        (e = weft_topo_builder_add_duplex(b, g0, nic, R(25, 1), R(0, 1))) ||
        (e = weft_topo_builder_note(b, "made by graph_test")) ||
        (e = weft_topo_builder_note(b, "second line")) ||
        (e = weft_topo_builder_assume(b, "an assumption"))) {
        weft_topo_builder_free(b);
        return e;
    }
    return weft_topo_build(b, out, d);
}

static weft_err ctor_small(void *arg)
{
    return build_small((weft_topo **)arg, NULL);
}

static void dtor_small(void *arg)
{
    weft_topo_free(*(weft_topo **)arg);
}

int main(void)
{
    weft_diag d;
    weft_diag_clear(&d);
    weft_topo *t = NULL;
    CHECK_ERR(build_small(&t, &d), WEFT_OK);
    if (!t)
        return weft_test_done();
    CHECK_INT(weft_topo_num_nodes(t), 4);
    CHECK_INT(weft_topo_num_ranks(t), 2);
    CHECK_INT(weft_topo_num_hosts(t), 1);
    /* 2 (duplex) + 1 + merged 2 -> 1 + 2 (duplex) */
    CHECK_INT(weft_topo_num_links(t), 6);
    weft_node_id g0, g1, sw, nic;
    CHECK(weft_topo_find_node(t, "gpu0", &g0));
    CHECK(weft_topo_find_node(t, "gpu1", &g1));
    CHECK(weft_topo_find_node(t, "sw0", &sw));
    CHECK(weft_topo_find_node(t, "nic0", &nic));
    CHECK(!weft_topo_find_node(t, "gpu", &g0) || g0.v == 0);
    CHECK_INT(g0.v, 0);
    CHECK_INT(nic.v, 3);
    weft_link_id l;
    CHECK(weft_topo_find_link(t, sw, g1, &l));
    CHECK(weft_rat_eq(weft_topo_link_bw(t, l), R(150, 1)));
    CHECK(weft_topo_find_link(t, g0, sw, &l));
    CHECK(weft_rat_eq(weft_topo_link_lat(t, l), R(7, 10)));
    CHECK(!weft_topo_find_link(t, g1, g0, &l));
    uint32_t first, count;
    weft_topo_out_links(t, g0, &first, &count);
    CHECK_INT(count, 2);
    CHECK_INT(weft_topo_link_dst(t, (weft_link_id){first}).v, sw.v);
    CHECK_INT(weft_topo_link_dst(t, (weft_link_id){first + 1}).v, nic.v);
    const uint32_t *in = weft_topo_in_links(t, sw, &count);
    CHECK_INT(count, 2);
    CHECK_INT(weft_topo_link_src(t, (weft_link_id){in[0]}).v, g0.v);
    CHECK_INT(weft_topo_link_src(t, (weft_link_id){in[1]}).v, g1.v);
    weft_rank r;
    CHECK(weft_topo_node_rank(t, g1, &r) && r.v == 1);
    CHECK(!weft_topo_node_rank(t, sw, &r));
    CHECK_INT(weft_topo_rank_node(t, (weft_rank){1}).v, g1.v);
    CHECK_STR(weft_topo_host_name(t, weft_topo_node_host(t, nic)), "0");
    CHECK_INT(weft_topo_node_host(t, sw), WEFT_NO_HOST);
    CHECK_STR(weft_topo_node_attrs(t, nic), "speed=200Gbps");
    CHECK_STR(weft_topo_node_attr(t, nic, "speed"), "200Gbps");
    CHECK_STR(weft_topo_node_attr(t, nic, "host"), "0");
    CHECK(weft_topo_node_attr(t, nic, "spee") == NULL);
    CHECK_STR(weft_topo_node_attrs(t, sw), "");
    /* An assumption is part of the note and also listed on its own. */
    CHECK_STR(weft_topo_note(t), "made by graph_test\nsecond line\nan assumption");
    CHECK_STR(weft_topo_assumptions(t), "an assumption");

    weft_topo_stats s;
    CHECK_ERR(weft_topo_get_stats(t, &s), WEFT_OK);
    CHECK_INT(s.nodes_by_kind[WEFT_NODE_COMPUTE], 2);
    CHECK_INT(s.nodes_by_kind[WEFT_NODE_SWITCH], 1);
    CHECK_INT(s.nodes_by_kind[WEFT_NODE_NIC], 1);
    CHECK(weft_rat_eq(s.max_injection, R(325, 1)));
    CHECK(weft_rat_eq(s.min_injection, R(300, 1)));
    CHECK(weft_rat_eq(s.min_ejection, R(150, 1)));
    CHECK(!s.switches_balanced); /* sw0: in 600, out 450 */
    CHECK_STR(s.first_unbalanced, "sw0");
    CHECK(s.strongly_connected);
    CHECK(s.ranks_connected);

    weft_topo *t2 = NULL;
    CHECK_ERR(build_small(&t2, NULL), WEFT_OK);
    CHECK(t2 && weft_topo_equal(t, t2));
    weft_topo_free(t2);

    /* Builder errors. */
    weft_topo_builder *b;
    CHECK_ERR(weft_topo_builder_new(&b), WEFT_OK);
    weft_node_id a, c;
    CHECK_ERR(weft_topo_builder_add_node(b, "a", WEFT_NODE_SWITCH, NULL, &a), WEFT_OK);
    CHECK_ERR(weft_topo_builder_add_node(b, "a", WEFT_NODE_SWITCH, NULL, &c), WEFT_EEXIST);
    CHECK_ERR(weft_topo_builder_add_node(b, "", WEFT_NODE_SWITCH, NULL, &c), WEFT_EINVAL);
    CHECK_ERR(weft_topo_builder_add_node(b, "c", WEFT_NODE_SWITCH, NULL, &c), WEFT_OK);
    CHECK_ERR(weft_topo_builder_add_link(b, a, a, R(1, 1), R(0, 1)), WEFT_EINVAL);
    CHECK_ERR(weft_topo_builder_add_link(b, a, c, R(0, 1), R(0, 1)), WEFT_EINVAL);
    CHECK_ERR(weft_topo_builder_add_link(b, a, c, R(-1, 1), R(0, 1)), WEFT_EINVAL);
    CHECK_ERR(weft_topo_builder_set_attr(b, a, "host", "x"), WEFT_EINVAL);
    CHECK_ERR(weft_topo_build(b, &t2, &d), WEFT_ETOPO);
    CHECK_CONTAINS(d.msg, "no compute node");

    CHECK_ERR(weft_topo_builder_new(&b), WEFT_OK);
    CHECK_ERR(weft_topo_builder_add_node(b, "a", WEFT_NODE_COMPUTE, NULL, &a), WEFT_OK);
    CHECK_ERR(weft_topo_builder_add_node(b, "c", WEFT_NODE_COMPUTE, NULL, &c), WEFT_OK);
    CHECK_ERR(weft_topo_builder_add_link(b, a, c, R(1, 1), R(1, 1)), WEFT_OK);
    CHECK_ERR(weft_topo_builder_add_link(b, a, c, R(1, 1), R(2, 1)), WEFT_OK);
    CHECK_ERR(weft_topo_build(b, &t2, &d), WEFT_ETOPO);
    CHECK_CONTAINS(d.msg, "parallel links a -> c have different latencies (1ns and 2ns)");

    /* A fabric where ranks cannot reach each other. */
    CHECK_ERR(weft_topo_builder_new(&b), WEFT_OK);
    CHECK_ERR(weft_topo_builder_add_node(b, "a", WEFT_NODE_COMPUTE, NULL, &a), WEFT_OK);
    CHECK_ERR(weft_topo_builder_add_node(b, "c", WEFT_NODE_COMPUTE, NULL, &c), WEFT_OK);
    CHECK_ERR(weft_topo_builder_add_link(b, a, c, R(1, 1), R(0, 1)), WEFT_OK);
    CHECK_ERR(weft_topo_build(b, &t2, &d), WEFT_OK);
    CHECK_ERR(weft_topo_get_stats(t2, &s), WEFT_OK);
    CHECK(!s.strongly_connected);
    CHECK(!s.ranks_connected);
    weft_topo_free(t2);

    weft_topo_free(t);

    /* Every allocation of building fails in turn: WEFT_ENOMEM, no leak. */
    weft_topo *oom = NULL;
    long n = weft_test_oom_sweep("build_small", ctor_small, dtor_small, &oom);
    CHECK(n > 10);
    return weft_test_done();
}
