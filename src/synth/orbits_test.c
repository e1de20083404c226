/* The regular group of rank maps (weft__rank_maps_compute, orbits.h) that
 * the optimal all-to-all plan maps rank 0's flow with: on fabrics of
 * identical boxes every g_s is an automorphism (node kinds kept, every link
 * onto a link of the same bandwidth), takes rank 0 to s, and the maps are
 * closed under composition (g_s g_t = g_u with u = g_s(t)): a group acting
 * regularly on the ranks. Fabrics without such a group (no identical
 * boxes, a box whose ranks do not rotate, torus:4x4) get none. Allocation
 * failures give WEFT_ENOMEM and leak nothing. */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "synth/orbits.h"
#include "weft/topo.h"

static weft_topo *load(const char *spec_or_text)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_err e = strchr(spec_or_text, '\n')
                     ? weft_topo_parse(spec_or_text, strlen(spec_or_text), "test.topo", &t, &d)
                     : weft_topo_preset(spec_or_text, &t, &d);
    if (e)
        fprintf(stderr, "%s: %s\n", spec_or_text, d.msg);
    CHECK_ERR(e, WEFT_OK);
    return t;
}

/* Link weights: the bandwidth's numerator over a common scale is enough
 * here (every test fabric has integer GB/s). */
static int64_t *weights(const weft_topo *t)
{
    uint32_t m = weft_topo_num_links(t);
    int64_t *w = calloc((size_t)m + 1, sizeof *w);
    for (uint32_t l = 0; w && l < m; l++) {
        weft_rat bw = weft_topo_link_bw(t, (weft_link_id){l});
        w[l] = bw.num * 1000 / bw.den;
    }
    return w;
}

static uint32_t rank_of_node(const weft_topo *t, uint32_t v)
{
    weft_rank r = {UINT32_MAX};
    weft_topo_node_rank(t, (weft_node_id){v}, &r);
    return r.v;
}

/* found: whether a group is expected; links: its number of link orbits. */
static void check(const char *spec, bool want_found, uint32_t want_classes)
{
    weft_topo *t = load(spec);
    if (!t)
        return;
    int64_t *w = weights(t);
    weft__rank_maps rm;
    bool found = true;
    CHECK_ERR(weft__rank_maps_compute(t, w, &rm, &found), WEFT_OK);
    if (found != want_found)
        fprintf(stderr, "%s: found %d, expected %d\n", spec, found, want_found);
    CHECK(found == want_found);
    uint32_t n = weft_topo_num_nodes(t), nr = weft_topo_num_ranks(t), m = weft_topo_num_links(t);
    if (!found) {
        CHECK(rm.node_map == NULL && rm.link_of == NULL);
    } else {
        uint32_t v0 = weft_topo_rank_node(t, (weft_rank){0}).v, bad = 0;
        for (uint32_t s = 0; s < nr; s++) {
            const uint32_t *g = rm.node_map + (size_t)s * n;
            bad += g[v0] != weft_topo_rank_node(t, (weft_rank){s}).v;
            for (uint32_t v = 0; v < n; v++)
                bad += weft_topo_node_kind(t, (weft_node_id){v}) !=
                       weft_topo_node_kind(t, (weft_node_id){g[v]});
            for (uint32_t l = 0; l < m; l++) {
                weft_link_id img;
                bool has = weft_topo_find_link(
                    t, (weft_node_id){g[weft_topo_link_src(t, (weft_link_id){l}).v]},
                    (weft_node_id){g[weft_topo_link_dst(t, (weft_link_id){l}).v]}, &img);
                bad += !has || weft_rat_cmp(weft_topo_link_bw(t, img),
                                            weft_topo_link_bw(t, (weft_link_id){l})) != 0;
                /* A link and its image are in one orbit. */
                bad += has && rm.link_of[l] != rm.link_of[img.v];
            }
            /* Closure: g_s g_t = g_u, u = g_s(t). */
            for (uint32_t tt = 0; tt < nr; tt++) {
                const uint32_t *h = rm.node_map + (size_t)tt * n;
                uint32_t u = rank_of_node(t, g[h[v0]]);
                CHECK(u < nr);
                if (u >= nr)
                    break;
                const uint32_t *gu = rm.node_map + (size_t)u * n;
                for (uint32_t v = 0; v < n; v++)
                    bad += g[h[v]] != gu[v];
            }
        }
        CHECK_INT(bad, 0);
        uint32_t classes = 0;
        for (uint32_t l = 0; l < m; l++)
            classes += rm.link_of[l] == l;
        CHECK_INT(classes, want_classes);
    }
    weft__rank_maps_fini(&rm);
    free(w);
    weft_topo_free(t);
}

/* Two boxes of two GPUs joined by one switch, one box with slower links:
 * no map moves a box onto the other. */
static const char *unequal_boxes = "node a0 compute host=a\n"
                                   "node a1 compute host=a\n"
                                   "node b0 compute host=b\n"
                                   "node b1 compute host=b\n"
                                   "node sw switch\n"
                                   "duplex a0 sw 10GB/s\n"
                                   "duplex a1 sw 10GB/s\n"
                                   "duplex b0 sw 20GB/s\n"
                                   "duplex b1 sw 20GB/s\n";

/* Boxes of unequal size. */
static const char *uneven_boxes = "node a0 compute host=a\n"
                                  "node a1 compute host=a\n"
                                  "node a2 compute host=a\n"
                                  "node b0 compute host=b\n"
                                  "node sw switch\n"
                                  "duplex a0 sw 10GB/s\n"
                                  "duplex a1 sw 10GB/s\n"
                                  "duplex a2 sw 10GB/s\n"
                                  "duplex b0 sw 10GB/s\n";

typedef struct oom_arg {
    weft_topo *t;
    int64_t *w;
    weft__rank_maps rm;
} oom_arg;

static weft_err ctor_maps(void *arg)
{
    oom_arg *a = arg;
    bool found = false;
    weft_err e = weft__rank_maps_compute(a->t, a->w, &a->rm, &found);
    CHECK(e || found);
    return e;
}

static void dtor_maps(void *arg)
{
    oom_arg *a = arg;
    CHECK(a->rm.node_map != NULL);
    weft__rank_maps_fini(&a->rm);
}

int main(void)
{
    /* h100:B: 6 link orbits (GPU <-> NVSwitch, GPU <-> NIC, NIC <-> rail,
     * each way), each of 8 B links. */
    check("h100:2", true, 6);
    check("h100:4", true, 6);
    check("h100:1", true, 2);
    check("a100:2", true, 6);
    check("switch:4", true, 2);
    check("ring:4", true, 1); /* one-way */
    check("torus:4x4", false, 0);
    check("mi250:2", false, 0);
    check("dgx1", false, 0);
    check(unequal_boxes, false, 0);
    check(uneven_boxes, false, 0);
    oom_arg a = {load("h100:2"), NULL, {0}};
    if (a.t) {
        a.w = weights(a.t);
        CHECK(weft_test_oom_sweep("rank maps h100:2", ctor_maps, dtor_maps, &a) > 5);
        free(a.w);
        weft_topo_free(a.t);
    }
    return weft_test_done();
}
