/* Classic data-centre and HPC networks with explicit switches and one link
 * per cable (unlike clos, which aggregates): fattree (Al-Fares et al.,
 * SIGCOMM 2008) and dragonfly (Kim et al., ISCA 2008). Terminals are ranks
 * rank0 .. rankN-1, added first, and belong to no host. O(nodes + links). */
#include "topo/preset_internal.h"

static weft_node_id node(uint64_t v)
{
    weft_node_id n = {(uint32_t)v};
    return n;
}

static weft_err add_ranks(weft_topo_builder *b, uint64_t n)
{
    weft_err e = WEFT_OK;
    for (uint64_t r = 0; !e && r < n; r++)
        e = weft__preset_node(b, WEFT_NODE_COMPUTE, NULL, NULL, "rank%u", (uint32_t)r);
    return e;
}

/* k-ary fat tree: k pods of k/2 edge and k/2 aggregation switches, (k/2)^2
 * cores, k^3/4 ranks. Edge e of pod p serves ranks (p*k/2 + e)*k/2 ..;
 * aggregation switch j of every pod reaches cores j*k/2 .. j*k/2 + k/2 - 1.
 * Node order: ranks, then per pod its edges and aggregation switches, then
 * cores. */
weft_err weft__preset_fattree(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    uint32_t k;
    weft_rat bw, lat;
    weft_err e = weft__preset_need(a, 0, d);
    if (!e)
        e = weft__preset_uint(a, 0, 0, 2, UINT32_MAX, &k, d);
    if (!e && k % 2)
        e = weft_diag_set(d, WEFT_EINVAL, "%s: k must be even", a->spec);
    if (!e)
        e = weft__preset_bw(a, 1, weft_rat_int(100), false, &bw, d);
    if (!e)
        e = weft__preset_lat(a, 2, weft_rat_int(0), &lat, d);
    if (e)
        return e;
    uint64_t half = k / 2, ranks = weft__sat_mul(weft__sat_mul(k, half), half);
    uint64_t cores = half * half;
    uint64_t nodes = weft__sat_add(weft__sat_add(ranks, weft__sat_mul(k, k)), cores);
    e = weft__preset_check_size(a, nodes, weft__sat_mul(ranks, 6), d);
    if (e)
        return e;
    e = add_ranks(b, ranks);
    for (uint64_t p = 0; !e && p < k; p++) {
        for (uint64_t s = 0; !e && s < half; s++)
            e = weft__preset_node(b, WEFT_NODE_SWITCH, NULL, NULL, "pod%u.edge%u", (uint32_t)p,
                                  (uint32_t)s);
        for (uint64_t s = 0; !e && s < half; s++)
            e = weft__preset_node(b, WEFT_NODE_SWITCH, NULL, NULL, "pod%u.agg%u", (uint32_t)p,
                                  (uint32_t)s);
    }
    for (uint64_t c = 0; !e && c < cores; c++)
        e = weft__preset_node(b, WEFT_NODE_SWITCH, NULL, NULL, "core%u", (uint32_t)c);
    uint64_t core0 = ranks + (uint64_t)k * k;
    for (uint64_t r = 0; !e && r < ranks; r++) {
        uint64_t edge = r / half; /* global edge index p*k/2 + e */
        uint64_t pod = edge / half;
        e = weft_topo_builder_add_duplex(b, node(r), node(ranks + pod * k + edge % half), bw, lat);
    }
    for (uint64_t p = 0; !e && p < k; p++) {
        uint64_t edge0 = ranks + p * k, agg0 = edge0 + half;
        for (uint64_t x = 0; !e && x < half; x++) {
            for (uint64_t y = 0; !e && y < half; y++) {
                e = weft_topo_builder_add_duplex(b, node(edge0 + x), node(agg0 + y), bw, lat);
                if (!e)
                    e = weft_topo_builder_add_duplex(b, node(agg0 + x), node(core0 + x * half + y),
                                                     bw, lat);
            }
        }
    }
    return e ? weft__preset_built(a, e, d) : WEFT_OK;
}

enum { DF_P, DF_A, DF_H, DF_G, DF_BW, DF_GBW, DF_LAT };

/* Dragonfly: g groups of a routers, p ranks per router, h global links per
 * router; routers of a group fully connected; one global link between
 * every two groups, g <= a*h + 1. Global port j (0 .. g-2) of group i leads
 * to group j (j < i) or j + 1 (j >= i) and sits on router j / h, so the
 * link between groups i < t joins router (t-1)/h of i and router i/h of t.
 * Node order: ranks ((group*a + router)*p + t), then routers gG.rR. */
weft_err weft__preset_dragonfly(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    uint32_t p, na, h, g;
    weft_rat bw, gbw, lat;
    weft_err e;
    if ((e = weft__preset_uint(a, DF_P, 2, 1, UINT32_MAX, &p, d)) ||
        (e = weft__preset_uint(a, DF_A, 4, 1, UINT32_MAX, &na, d)) ||
        (e = weft__preset_uint(a, DF_H, 2, 1, UINT32_MAX, &h, d)))
        return e;
    uint64_t gmax = weft__sat_add(weft__sat_mul(na, h), 1);
    uint32_t gdef = gmax > UINT32_MAX ? UINT32_MAX : (uint32_t)gmax;
    if ((e = weft__preset_uint(a, DF_G, gdef, 2, UINT32_MAX, &g, d)))
        return e;
    if (g > gmax)
        return weft_diag_set(d, WEFT_EINVAL, "%s: g must be <= a*h+1 (%llu)", a->spec,
                             (unsigned long long)gmax);
    if ((e = weft__preset_bw(a, DF_BW, weft_rat_int(100), false, &bw, d)) ||
        (e = weft__preset_bw(a, DF_GBW, bw, false, &gbw, d)) ||
        (e = weft__preset_lat(a, DF_LAT, weft_rat_int(0), &lat, d)))
        return e;
    uint64_t routers = weft__sat_mul(g, na), ranks = weft__sat_mul(routers, p);
    /* a(a-1)/2 and g(g-1)/2 fit in 64 bits since a, g < 2^32. */
    uint64_t local = weft__sat_mul(g, (uint64_t)na * (na - 1) / 2);
    uint64_t pairs = weft__sat_add(weft__sat_add(ranks, local), (uint64_t)g * (g - 1) / 2);
    e = weft__preset_check_size(a, weft__sat_add(ranks, routers), weft__sat_mul(pairs, 2), d);
    if (e)
        return e;
    e = add_ranks(b, ranks);
    for (uint64_t x = 0; !e && x < g; x++) {
        for (uint64_t r = 0; !e && r < na; r++)
            e = weft__preset_node(b, WEFT_NODE_SWITCH, NULL, NULL, "g%u.r%u", (uint32_t)x,
                                  (uint32_t)r);
    }
    for (uint64_t t = 0; !e && t < ranks; t++)
        e = weft_topo_builder_add_duplex(b, node(t), node(ranks + t / p), bw, lat);
    for (uint64_t x = 0; !e && x < g; x++) {
        uint64_t r0 = ranks + x * na;
        for (uint64_t i = 0; !e && i < na; i++) {
            for (uint64_t j = i + 1; !e && j < na; j++)
                e = weft_topo_builder_add_duplex(b, node(r0 + i), node(r0 + j), bw, lat);
        }
        for (uint64_t t = x + 1; !e && t < g; t++)
            e = weft_topo_builder_add_duplex(b, node(r0 + (t - 1) / h),
                                             node(ranks + t * na + x / h), gbw, lat);
    }
    return e ? weft__preset_built(a, e, d) : WEFT_OK;
}
