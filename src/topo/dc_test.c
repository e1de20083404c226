/* Direct-connect presets (preset_dc.c) and operators (dcops.c): node and
 * link counts, out-degrees and diameters, each derived by hand in the
 * comments; named links; bad specs with their exact messages; and
 * allocation-failure sweeps. */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "weft/topo.h"

static weft_topo *make(const char *spec)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_topo_from_spec(spec, NULL, &t, &d);
    if (e)
        fprintf(stderr, "%s: %s\n", spec, d.msg);
    CHECK_ERR(e, WEFT_OK);
    return t;
}

/* The largest shortest-path distance (UINT32_MAX when some node cannot
 * reach another), by a BFS from every node. */
static uint32_t diameter(const weft_topo *t)
{
    uint32_t n = weft_topo_num_nodes(t), diam = 0;
    uint32_t *dist = malloc(n * sizeof *dist), *queue = malloc(n * sizeof *queue);
    for (uint32_t s = 0; s < n; s++) {
        for (uint32_t v = 0; v < n; v++)
            dist[v] = UINT32_MAX;
        uint32_t head = 0, tail = 0;
        dist[s] = 0;
        queue[tail++] = s;
        while (head < tail) {
            uint32_t v = queue[head++], first, count;
            weft_topo_out_links(t, (weft_node_id){v}, &first, &count);
            for (uint32_t l = first; l < first + count; l++) {
                uint32_t w = weft_topo_link_dst(t, (weft_link_id){l}).v;
                if (dist[w] == UINT32_MAX) {
                    dist[w] = dist[v] + 1;
                    queue[tail++] = w;
                }
            }
        }
        for (uint32_t v = 0; v < n; v++)
            if (dist[v] > diam)
                diam = dist[v];
    }
    free(dist);
    free(queue);
    return diam;
}

static uint32_t outdeg(const weft_topo *t, uint32_t v)
{
    uint32_t first, count;
    weft_topo_out_links(t, (weft_node_id){v}, &first, &count);
    return count;
}

/* Checks nodes (all ranks), directed links, the largest and smallest
 * out-degree and the diameter. */
static void shape(const char *spec, uint32_t nodes, uint32_t links, uint32_t maxdeg,
                  uint32_t mindeg, uint32_t diam)
{
    weft_topo *t = make(spec);
    if (!t)
        return;
    uint32_t hi = 0, lo = UINT32_MAX;
    for (uint32_t v = 0; v < weft_topo_num_nodes(t); v++) {
        uint32_t k = outdeg(t, v);
        hi = k > hi ? k : hi;
        lo = k < lo ? k : lo;
    }
    uint32_t got[5] = {weft_topo_num_ranks(t), weft_topo_num_links(t), hi, lo, diameter(t)};
    uint32_t want[5] = {nodes, links, maxdeg, mindeg, diam};
    if (memcmp(got, want, sizeof got) != 0)
        fprintf(stderr, "%s: ranks %u links %u degree %u..%u diameter %u\n", spec, got[0], got[1],
                got[3], got[2], got[4]);
    CHECK_INT(weft_topo_num_nodes(t), nodes);
    CHECK_INT(got[0], nodes);
    CHECK_INT(got[1], links);
    CHECK_INT(got[2], maxdeg);
    CHECK_INT(got[3], mindeg);
    CHECK_INT(got[4], diam);
    weft_topo_free(t);
}

static bool has_link(const weft_topo *t, uint32_t a, uint32_t b)
{
    weft_link_id l;
    return weft_topo_find_link(t, (weft_node_id){a}, (weft_node_id){b}, &l);
}

static void test_presets(void)
{
    /* genkautz:8,2: i -> -2i-1, -2i-2 (mod 8); self-loops where 3i = -a
     * (mod 8): i = 5 (a = 1) and i = 2 (a = 2), so 16 - 2 links, out-degree
     * 1 at ranks 2 and 5; diameter 3 = ceil(log2 8). */
    shape("genkautz:8,2", 8, 14, 2, 1, 3);
    /* genkautz:12,3: 4i is 0, 4 or 8 mod 12, never -a: no self-loop; it is
     * the Kautz graph K(3,2): diameter 2. */
    shape("genkautz:12,3", 12, 36, 3, 3, 2);
    /* Offsets 1 and 3 of Z_8: 1 hop reaches 1, 3, 5, 7; 2 hops the rest. */
    shape("circulant:8,1,3", 8, 32, 4, 4, 2);
    /* 1 and 4 = N/2 (one pair per two ranks): 16 + 8 links, degree 3; 0
     * reaches 1, 7, 4, then 2, 3, 5, 6. */
    shape("circulant:8,1,4", 8, 24, 3, 3, 2);
    /* 2 and 5 of Z_10: 0 -> {2, 8, 5} -> {4, 6, 3, 7} -> {1, 9}. */
    shape("circulant:10,2,5", 10, 30, 3, 3, 3);
    /* de Bruijn: i -> 2i + a (mod 8); loops at 000 and 111. */
    shape("debruijn:2,3", 8, 14, 2, 1, 3);
    /* i -> 3i + a (mod 9); loops at 00, 11, 22 (i = 0, 4, 8). */
    shape("debruijn:3,2", 9, 24, 3, 2, 2);
    shape("bipartite:6", 6, 18, 3, 3, 2);
    shape("bipartite:2", 2, 2, 1, 1, 1);
    weft_topo *t = make("genkautz:8,2,bw=50,lat=1us");
    if (t) {
        /* rank 3 -> -6-1 = 1 and -6-2 = 0; rank 2's second link would be
         * itself. */
        CHECK(has_link(t, 3, 1) && has_link(t, 3, 0) && !has_link(t, 3, 2));
        CHECK(has_link(t, 2, 3) && !has_link(t, 2, 2) && outdeg(t, 2) == 1);
        CHECK(weft_rat_eq(weft_topo_link_bw(t, (weft_link_id){0}), weft_rat_int(50)));
        CHECK(weft_rat_eq(weft_topo_link_lat(t, (weft_link_id){0}), weft_rat_int(1000)));
        CHECK_STR(weft_topo_node_name(t, (weft_node_id){7}), "rank7");
    }
    weft_topo_free(t);
    t = make("bipartite:6");
    if (t)
        CHECK(has_link(t, 0, 3) && has_link(t, 5, 2) && !has_link(t, 0, 1) && !has_link(t, 4, 5));
    weft_topo_free(t);
}

static void test_operators(void)
{
    /* L(K3) = Kautz K(2,2): the 6 links of full:3 as nodes, each reaching
     * the 2 links out of its head; diameter 1 + 1. */
    shape("line(full:3)", 6, 12, 2, 2, 2);
    /* expand by 2: 3 * 2 ranks, 6 links * 4; two copies of one rank need
     * two hops (there and back). */
    shape("expand(full:3;2)", 6, 24, 4, 4, 2);
    /* Degrees and diameters add: 1 + 1 and 2 + 3. */
    shape("product(ring:3;ring:4)", 12, 24, 2, 2, 5);
    /* full:3 x circulant:8,1,3: 6 * 8 + 32 * 3 links, degree 2 + 4,
     * diameter 1 + 2. */
    shape("product(full:3;circulant:8,1,3)", 24, 144, 6, 6, 3);
    /* Nesting: the expansion of K(2,2), whose shortest cycles have length
     * 2, keeps diameter 2. */
    shape("expand(line(full:3);2)", 12, 48, 4, 4, 2);
    /* expand(ring:2;2) is 4 ranks of degree 2 and diameter 2 (there and
     * back between copies): 12 * 4 + 8 * 6 links, degree 4, diameter 4. */
    shape("product(line(full:3);expand(ring:2;2))", 24, 96, 4, 4, 4);
    weft_topo *t = make("product(ring:3,bw=10;ring:4,bw=20)");
    if (t) {
        /* (g,h) = g*4 + h: the G links carry 10, the H links 20. */
        weft_link_id l;
        CHECK(weft_topo_find_link(t, (weft_node_id){0}, (weft_node_id){4}, &l));
        CHECK(weft_rat_eq(weft_topo_link_bw(t, l), weft_rat_int(10)));
        CHECK(weft_topo_find_link(t, (weft_node_id){0}, (weft_node_id){1}, &l));
        CHECK(weft_rat_eq(weft_topo_link_bw(t, l), weft_rat_int(20)));
        CHECK(!has_link(t, 0, 5));
        CHECK_CONTAINS(weft_topo_note(t), "preset product(ring:3,bw=10;ring:4,bw=20)");
    }
    weft_topo_free(t);
    t = make("line(ring:3)");
    if (t) /* a ring's line graph is the ring again */
        CHECK(weft_topo_num_links(t) == 3 && diameter(t) == 2);
    weft_topo_free(t);
}

static void bad(const char *spec, weft_err code, const char *msg)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_topo_from_spec(spec, NULL, &t, &d), code);
    CHECK_STR(d.msg, msg);
    CHECK(t == NULL);
}

static void test_errors(void)
{
    bad("genkautz:4,4", WEFT_EINVAL,
        "genkautz:4,4: degree 4 cannot be reached with 4 ranks (d must be < N)");
    bad("genkautz:8,1", WEFT_EINVAL,
        "genkautz:8,1: the generated graph is not strongly connected (some rank cannot reach "
        "another)");
    bad("genkautz:8", WEFT_EINVAL, "genkautz:8: missing d (usage: genkautz:N,d[,bw=BW][,lat=LAT])");
    bad("circulant:8,2", WEFT_EINVAL,
        "circulant:8,2: the generated graph is not strongly connected (some rank cannot reach "
        "another)");
    bad("circulant:8,5", WEFT_EINVAL, "circulant:8,5: j1 must be <= 4");
    bad("circulant:8,1,1", WEFT_EINVAL, "circulant:8,1,1: offset 1 given twice");
    bad("circulant:8", WEFT_EINVAL,
        "circulant:8: missing offsets (usage: circulant:N,J1[,J2...][,bw=BW][,lat=LAT])");
    bad("bipartite:5", WEFT_EINVAL, "bipartite:5: N must be even (two halves of N/2 ranks)");
    bad("debruijn:1,3", WEFT_EINVAL, "debruijn:1,3: d must be >= 2");
    bad("debruijn:2,30", WEFT_ELIMIT,
        "debruijn:2,30: too large: 1073741824 nodes (presets are limited to 8388608)");
    bad("line(switch:3)", WEFT_EINVAL,
        "line(switch:3): operand 'switch:3' has a switch node 'sw0' (line, expand and product "
        "take fabrics of ranks joined directly)");
    bad("expand(full:3)", WEFT_EINVAL,
        "expand(full:3): expand takes 2 operands separated by ';' (expand(SPEC;n))");
    bad("expand(full:3;0)", WEFT_EINVAL,
        "expand(full:3;0): n of expand(SPEC;n) must be an integer from 1 to 65536, not '0'");
    bad("product(ring:3)", WEFT_EINVAL,
        "product(ring:3): product takes 2 operands separated by ';' (product(SPEC;SPEC))");
    bad("product(ring:3;ring:4", WEFT_EINVAL, "product(ring:3;ring:4: missing ')' at the end");
    bad("product(ring:3;;ring:4)", WEFT_EINVAL,
        "product(ring:3;;ring:4): product takes 2 operands separated by ';' "
        "(product(SPEC;SPEC))");
    bad("line(genkautz:4,4)", WEFT_EINVAL,
        "genkautz:4,4: degree 4 cannot be reached with 4 ranks (d must be < N)");
    bad("line(nosuch:3)", WEFT_EINVAL, "no such file or preset 'nosuch:3' (see weft topo list)");
    bad("product(full:3000;full:3000)", WEFT_ELIMIT,
        "product(full:3000;full:3000): too large: 9000000 nodes (presets are limited to "
        "8388608)");
    bad("line(line(line(line(line(line(line(line(line(line(line(line(line(line(line(line("
        "line(line(ring:3))))))))))))))))))",
        WEFT_EINVAL, "line(ring:3): operators nested more than 16 deep");
}

static weft_err ctor(void *arg)
{
    weft_topo **t = arg;
    return weft_topo_from_spec("product(line(genkautz:6,2);circulant:5,1,2)", NULL, t, NULL);
}

static void dtor(void *arg)
{
    weft_topo **t = arg;
    weft_topo_free(*t);
    *t = NULL;
}

static weft_err ctor_preset(void *arg)
{
    weft_topo **t = arg;
    return weft_topo_from_spec("debruijn:2,4", NULL, t, NULL);
}

static void test_oom(void)
{
    weft_topo *t = NULL;
    CHECK(weft_test_oom_sweep("product(line(genkautz:6,2);circulant:5,1,2)", ctor, dtor, &t) > 10);
    CHECK(weft_test_oom_sweep("debruijn:2,4", ctor_preset, dtor, &t) > 5);
}

int main(void)
{
    test_presets();
    test_operators();
    test_errors();
    test_oom();
    return weft_test_done();
}
