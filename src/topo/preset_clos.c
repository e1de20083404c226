/* clos: a two- or three-level leaf/spine(/core) fabric of GPU hosts, built
 * in O(nodes + links) so that 100,000+ rank instances are cheap.
 *
 * Model (the preset's summary in preset.c is the user documentation):
 * every host bX has G ranks, an optional host switch bX.nvsw0 and K NICs;
 * rank i of a host uses NIC i / (G/K). NICs attach to leaves, either
 * rail-optimised (NIC J of every host of a group of P hosts shares leaf
 * group*K + J) or packed in order. Links between switches are aggregated:
 * a leaf's uplink bandwidth U = P * nicbw / oversub is split evenly over the
 * S spines it reaches; with three levels a pod's spines split the pod's
 * uplink bandwidth L * U evenly over the C cores. Node order: hosts (ranks,
 * host switch, NICs), then leaves, spines, cores. */
#include <stdio.h>

#include "topo/preset_internal.h"

enum {
    P_HOSTS,
    P_GPUS,
    P_NICS,
    P_NICBW,
    P_NVBW,
    P_RAIL,
    P_LEAFPORTS,
    P_OVERSUB,
    P_SPINES,
    P_LEVELS,
    P_PODLEAVES,
    P_CORES,
    P_LAT,
};

typedef struct clos_cfg {
    uint32_t hosts, gpus, nics, rail, leafports, spines, levels, podleaves, cores;
    weft_rat nicbw, nvbw, oversub, lat;
    weft_rat leaf_spine_bw, spine_core_bw;
    bool host_switch;
    uint64_t leaves, pods;
} clos_cfg;

static weft_node_id node(uint64_t v)
{
    weft_node_id n = {(uint32_t)v};
    return n;
}

static uint64_t ceil_div(uint64_t x, uint64_t y)
{
    return x / y + (x % y != 0);
}

static weft_err parse_cfg(const weft__preset_args *a, clos_cfg *c, weft_diag *d)
{
    weft_err e;
    if ((e = weft__preset_uint(a, P_HOSTS, 4, 1, UINT32_MAX, &c->hosts, d)) ||
        (e = weft__preset_uint(a, P_GPUS, 8, 1, UINT32_MAX, &c->gpus, d)) ||
        (e = weft__preset_uint(a, P_NICS, 8, 1, UINT32_MAX, &c->nics, d)) ||
        (e = weft__preset_bw(a, P_NICBW, weft_rat_int(50), false, &c->nicbw, d)) ||
        (e = weft__preset_bw(a, P_NVBW, weft_rat_int(450), true, &c->nvbw, d)) ||
        (e = weft__preset_uint(a, P_RAIL, 1, 0, 1, &c->rail, d)) ||
        (e = weft__preset_uint(a, P_LEAFPORTS, 32, 1, UINT32_MAX, &c->leafports, d)) ||
        (e = weft__preset_ratio(a, P_OVERSUB, weft_rat_int(1), &c->oversub, d)) ||
        (e = weft__preset_uint(a, P_LEVELS, 2, 2, 3, &c->levels, d)) ||
        (e = weft__preset_lat(a, P_LAT, weft_rat_int(WEFT__LAT_IBSW_HALF_NS), &c->lat, d)))
        return e;
    if (c->gpus % c->nics != 0)
        return weft_diag_set(d, WEFT_EINVAL, "%s: nics must divide gpus (%u)", a->spec, c->gpus);
    /* Default spines: ceil(leafports / oversub), the uplink ports of a leaf
     * whose uplinks run at the NIC speed. */
    weft_rat q;
    uint32_t def_spines = 1;
    if (weft_rat_div(weft_rat_int(c->leafports), c->oversub, &q) == WEFT_OK) {
        uint64_t s = ceil_div((uint64_t)q.num, (uint64_t)q.den);
        def_spines = s == 0 ? 1 : s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
    }
    if ((e = weft__preset_uint(a, P_SPINES, def_spines, 1, UINT32_MAX, &c->spines, d)))
        return e;
    if (c->levels == 2) {
        if (weft__preset_has(a, P_PODLEAVES))
            return weft_diag_set(d, WEFT_EINVAL, "%s: podleaves needs levels=3", a->spec);
        if (weft__preset_has(a, P_CORES))
            return weft_diag_set(d, WEFT_EINVAL, "%s: cores needs levels=3", a->spec);
    }
    if ((e = weft__preset_uint(a, P_PODLEAVES, c->leafports, 1, UINT32_MAX, &c->podleaves, d)) ||
        (e = weft__preset_uint(a, P_CORES, c->spines, 1, UINT32_MAX, &c->cores, d)))
        return e;
    c->host_switch = c->gpus > 1 && !weft_rat_is_zero(c->nvbw);
    c->leaves = c->rail ? weft__sat_mul(ceil_div(c->hosts, c->leafports), c->nics)
                        : ceil_div(weft__sat_mul(c->hosts, c->nics), c->leafports);
    c->pods = c->levels == 3 ? ceil_div(c->leaves, c->podleaves) : 1;
    /* U = P * nicbw / oversub per leaf; U / S per leaf-spine link;
     * L * U / (S * C) per spine-core link. */
    weft_rat up;
    if (weft_rat_mul(c->nicbw, weft_rat_int(c->leafports), &up) ||
        weft_rat_div(up, c->oversub, &up) ||
        weft_rat_div(up, weft_rat_int(c->spines), &c->leaf_spine_bw) ||
        weft_rat_mul(c->leaf_spine_bw, weft_rat_int(c->podleaves), &c->spine_core_bw) ||
        weft_rat_div(c->spine_core_bw, weft_rat_int(c->cores), &c->spine_core_bw))
        return weft_diag_set(d, WEFT_EINVAL,
                             "%s: the switch link bandwidth (nicbw * leafports / oversub / "
                             "spines) does not fit in an exact fraction",
                             a->spec);
    return WEFT_OK;
}

static weft_err check_size(const weft__preset_args *a, const clos_cfg *c, weft_diag *d)
{
    uint64_t per_host = (uint64_t)c->gpus + c->host_switch + c->nics;
    uint64_t spines = weft__sat_mul(c->pods, c->spines);
    uint64_t nodes = weft__sat_mul(c->hosts, per_host);
    nodes = weft__sat_add(nodes, c->leaves);
    nodes = weft__sat_add(nodes, spines);
    if (c->levels == 3)
        nodes = weft__sat_add(nodes, c->cores);
    uint64_t ranks = weft__sat_mul(c->hosts, c->gpus);
    uint64_t pairs = weft__sat_mul(ranks, 1 + c->host_switch);
    pairs = weft__sat_add(pairs, weft__sat_mul(c->hosts, c->nics));
    if (c->levels == 3) {
        /* Every leaf reaches its pod's spines; every spine reaches every core. */
        pairs = weft__sat_add(pairs, weft__sat_mul(c->leaves, c->spines));
        pairs = weft__sat_add(pairs, weft__sat_mul(spines, c->cores));
    } else {
        pairs = weft__sat_add(pairs, weft__sat_mul(c->leaves, c->spines));
    }
    return weft__preset_check_size(a, nodes, weft__sat_mul(pairs, 2), d);
}

static weft_err build(const clos_cfg *c, weft_topo_builder *b)
{
    weft_rat nvlat = weft_rat_int(WEFT__LAT_NVLINK_HALF_NS),
             niclat = weft_rat_int(WEFT__LAT_NIC_HALF_NS);
    uint64_t per_host = (uint64_t)c->gpus + c->host_switch + c->nics;
    uint32_t share = c->gpus / c->nics; /* ranks per NIC */
    weft_err e = WEFT_OK;
    char host[16];
    for (uint32_t x = 0; !e && x < c->hosts; x++) {
        snprintf(host, sizeof host, "b%u", x);
        for (uint32_t g = 0; !e && g < c->gpus; g++) {
            weft_node_id v;
            e = weft__preset_node(b, WEFT_NODE_COMPUTE, host, &v, "b%u.gpu%u", x, g);
            /* Ranks behind an NVSwitch are H100-class GPUs (the nvbw default
             * is H100's 450 GB/s). */
            if (!e && c->host_switch)
                e = weft__preset_arch(b, v, "hopper");
        }
        if (!e && c->host_switch)
            e = weft__preset_node(b, WEFT_NODE_SWITCH, host, NULL, "b%u.nvsw0", x);
        for (uint32_t j = 0; !e && j < c->nics; j++)
            e = weft__preset_node(b, WEFT_NODE_NIC, host, NULL, "b%u.nic%u", x, j);
    }
    uint64_t leaf0 = c->hosts * per_host, spine0 = leaf0 + c->leaves;
    uint64_t core0 = spine0 + c->pods * c->spines;
    for (uint64_t l = 0; !e && l < c->leaves; l++)
        e = weft__preset_node(b, WEFT_NODE_SWITCH, NULL, NULL, "leaf%u", (uint32_t)l);
    for (uint64_t p = 0; !e && p < c->pods; p++) {
        for (uint32_t s = 0; !e && s < c->spines; s++) {
            if (c->levels == 3)
                e = weft__preset_node(b, WEFT_NODE_SWITCH, NULL, NULL, "pod%u.spine%u", (uint32_t)p,
                                      s);
            else
                e = weft__preset_node(b, WEFT_NODE_SWITCH, NULL, NULL, "spine%u", s);
        }
    }
    for (uint32_t k = 0; !e && c->levels == 3 && k < c->cores; k++)
        e = weft__preset_node(b, WEFT_NODE_SWITCH, NULL, NULL, "core%u", k);

    for (uint32_t x = 0; !e && x < c->hosts; x++) {
        uint64_t base = x * per_host, sw = base + c->gpus, nic0 = sw + c->host_switch;
        for (uint32_t g = 0; !e && g < c->gpus; g++) {
            if (c->host_switch)
                e = weft_topo_builder_add_duplex(b, node(base + g), node(sw), c->nvbw, nvlat);
            if (!e)
                e = weft_topo_builder_add_duplex(b, node(base + g), node(nic0 + g / share),
                                                 c->nicbw, niclat);
        }
        for (uint32_t j = 0; !e && j < c->nics; j++) {
            uint64_t leaf = c->rail ? (uint64_t)(x / c->leafports) * c->nics + j
                                    : ((uint64_t)x * c->nics + j) / c->leafports;
            e = weft_topo_builder_add_duplex(b, node(nic0 + j), node(leaf0 + leaf), c->nicbw,
                                             c->lat);
        }
    }
    for (uint64_t l = 0; !e && l < c->leaves; l++) {
        uint64_t first = spine0 + (c->levels == 3 ? l / c->podleaves * c->spines : 0);
        for (uint32_t s = 0; !e && s < c->spines; s++)
            e = weft_topo_builder_add_duplex(b, node(leaf0 + l), node(first + s), c->leaf_spine_bw,
                                             c->lat);
    }
    for (uint64_t s = spine0; !e && c->levels == 3 && s < core0; s++) {
        for (uint32_t k = 0; !e && k < c->cores; k++)
            e = weft_topo_builder_add_duplex(b, node(s), node(core0 + k), c->spine_core_bw, c->lat);
    }
    return e;
}

weft_err weft__preset_clos(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    clos_cfg c;
    weft_err e = parse_cfg(a, &c, d);
    if (!e)
        e = check_size(a, &c, d);
    if (e)
        return e;
    e = build(&c, b);
    return e ? weft__preset_built(a, e, d) : WEFT_OK;
}
