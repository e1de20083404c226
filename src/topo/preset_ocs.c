/* mixnet: hosts of GPUs whose NICs are split between optical circuit
 * switches and a packet rail fabric, after MixNet (Liao et al., SIGCOMM
 * 2025, "MixNet: A Runtime Reconfigurable Optical-Electrical Fabric for
 * Distributed Mixture-of-Experts Training"): each server connects part of
 * its NICs to a regional OCS and the rest to the electrical packet fabric.
 *
 * Host bX has G GPUs bX.gpuI on one NVSwitch bX.nvsw0 and G NICs bX.nicI
 * (GPU I <-> NIC I). NICs 0 .. G-K-1 go to the packet rails, NIC I to
 * switch railI shared by all hosts (as the h100 preset); NICs G-K .. G-1
 * are ports of the OCS of the host's region: hosts R*r .. R*r+R-1 share
 * ocsr, which has R*K ports. An OCS is passive optics: its ports add no
 * latency beyond the NIC's own. */
#include <stdio.h>
#include <string.h>

#include "topo/preset_internal.h"

static weft_node_id node(uint32_t v)
{
    weft_node_id n = {v};
    return n;
}

/* Parameter positions in p_mixnet (preset.c). */
enum { P_HOSTS, P_GPUS, P_OCSNICS, P_NICBW, P_NVBW, P_RECONFIG, P_REGION };

weft_err weft__preset_mixnet(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    uint32_t hosts, gpus, ocsnics, region;
    weft_rat nicbw, nvbw, delay;
    weft_err e = weft__preset_uint(a, P_HOSTS, 4, 2, UINT32_MAX, &hosts, d);
    if (!e)
        e = weft__preset_uint(a, P_GPUS, 8, 1, 1024, &gpus, d);
    if (!e)
        e = weft__preset_uint(a, P_OCSNICS, gpus / 2 ? gpus / 2 : 1, 1, gpus, &ocsnics, d);
    if (!e)
        e = weft__preset_bw(a, P_NICBW, weft_rat_int(50), false, &nicbw, d);
    if (!e)
        e = weft__preset_bw(a, P_NVBW, weft_rat_int(450), false, &nvbw, d);
    if (!e)
        e = weft__preset_delay(a, P_RECONFIG, weft_rat_int(25000), &delay, d);
    if (!e)
        e = weft__preset_uint(a, P_REGION, hosts, 2, hosts, &region, d);
    if (e)
        return e;
    if (hosts % region)
        return weft_diag_set(d, WEFT_EINVAL,
                             "%s: region=%u must divide hosts=%u (regions of equal size)", a->spec,
                             region, hosts);
    uint32_t rails = gpus - ocsnics, regions = hosts / region;
    if (rails == 0 && regions > 1)
        return weft_diag_set(d, WEFT_EINVAL,
                             "%s: with ocsnics=gpus=%u there is no packet fabric, so hosts of "
                             "different regions could not reach each other; lower ocsnics or "
                             "make region=%u",
                             a->spec, gpus, hosts);
    uint32_t per_host = 2 * gpus + 1;
    uint64_t nodes = weft__sat_add(weft__sat_mul(hosts, per_host), (uint64_t)rails + regions);
    uint64_t links = weft__sat_mul(weft__sat_mul(hosts, gpus), 6);
    e = weft__preset_check_size(a, nodes, links, d);
    if (e)
        return e;
    char host[16], reconfig[64];
    /* The delay as the spec gave it, or the default's spelling. */
    if (weft__preset_has(a, P_RECONFIG))
        snprintf(reconfig, sizeof reconfig, "%.*s", (int)a->val[P_RECONFIG].len,
                 a->val[P_RECONFIG].text);
    else
        strcpy(reconfig, "25us");
    for (uint32_t x = 0; !e && x < hosts; x++) {
        snprintf(host, sizeof host, "b%u", x);
        for (uint32_t g = 0; !e && g < gpus; g++) {
            weft_node_id v;
            e = weft__preset_node(b, WEFT_NODE_COMPUTE, host, &v, "b%u.gpu%u", x, g);
            if (!e)
                e = weft__preset_arch(b, v, "hopper");
        }
        if (!e)
            e = weft__preset_node(b, WEFT_NODE_SWITCH, host, NULL, "b%u.nvsw0", x);
        for (uint32_t g = 0; !e && g < gpus; g++)
            e = weft__preset_node(b, WEFT_NODE_NIC, host, NULL, "b%u.nic%u", x, g);
    }
    uint32_t rail0 = hosts * per_host, ocs0 = rail0 + rails;
    for (uint32_t r = 0; !e && r < rails; r++)
        e = weft__preset_node(b, WEFT_NODE_SWITCH, NULL, NULL, "rail%u", r);
    for (uint32_t r = 0; !e && r < regions; r++) {
        weft_node_id o;
        e = weft__preset_node(b, WEFT_NODE_OCS, NULL, &o, "ocs%u", r);
        if (!e)
            e = weft_topo_builder_set_attr(b, o, "reconfig", reconfig);
    }
    weft_rat nvlat = weft_rat_int(WEFT__LAT_NVLINK_HALF_NS),
             niclat = weft_rat_int(WEFT__LAT_NIC_HALF_NS),
             swlat = weft_rat_int(WEFT__LAT_IBSW_HALF_NS), ocslat = weft_rat_int(0);
    for (uint32_t x = 0; !e && x < hosts; x++) {
        uint32_t base = x * per_host, nvsw = base + gpus, nic0 = nvsw + 1;
        for (uint32_t g = 0; !e && g < gpus; g++) {
            e = weft_topo_builder_add_duplex(b, node(base + g), node(nvsw), nvbw, nvlat);
            if (!e)
                e = weft_topo_builder_add_duplex(b, node(base + g), node(nic0 + g), nicbw, niclat);
            if (!e && g < rails)
                e = weft_topo_builder_add_duplex(b, node(nic0 + g), node(rail0 + g), nicbw, swlat);
            else if (!e)
                e = weft_topo_builder_add_duplex(b, node(nic0 + g), node(ocs0 + x / region), nicbw,
                                                 ocslat);
        }
    }
    return e ? weft__preset_built(a, e, d) : WEFT_OK;
}
