/* NCCL topology import, building: the devices read from one box's dump
 * (import_nccl.c) are laid out `hosts` times into a topology builder, each
 * box with its GPUs, NICs, PCIe switches, CPUs and NVSwitch and the links
 * NCCL's bandwidth rules give them, then the boxes are joined by the network
 * the options choose (rail-optimized or one switch). Node names carry the
 * box index when there is more than one box. */
#include <stdio.h>
#include <string.h>

#include "topo/import_nccl_internal.h"

#define NONE UINT32_MAX

static const char *const kind_prefix[DEV_KINDS] = {"gpu", "nic", "pcisw", "cpu"};

bool weft__nccl_use_rail(const ctx *c)
{
    return !c->o->network || strcmp(c->o->network, "rail") == 0;
}

/* The bandwidth NIC v gets to the network, each way, and where it came
 * from. */
weft_rat weft__nccl_nic_net_bw(const ctx *c, uint32_t v, const char **why)
{
    if (weft_rat_sign(c->o->nic_bw_gbps) > 0) {
        *why = "--nic-bw";
        return c->o->nic_bw_gbps;
    }
    if (c->devs[v].has_net_bw) {
        *why = "the NIC's <net speed=>, Mb/s / 8000";
        return c->devs[v].net_bw;
    }
    if (c->devs[v].has_busid) {
        *why = "its PCIe link: the file gives no NIC speed; pass --nic-bw";
        return c->devs[v].up_bw;
    }
    /* A NIC under a <cpu> has no PCIe link to bound it: NCCL's own
     * fallback for a NIC without a speed, 10000 Mb/s. */
    *why = "no speed and no PCIe link: NCCL's default of 10000 Mb/s; pass --nic-bw";
    weft_rat r;
    weft_rat_make(10000, 8000, &r);
    return r;
}

static weft_err node_name(const ctx *c, uint32_t box, const char *base, uint32_t index, char *buf,
                          size_t size)
{
    int n = c->o->hosts > 1 ? snprintf(buf, size, "b%u.%s%u", box, base, index)
                            : snprintf(buf, size, "%s%u", base, index);
    return n > 0 && (size_t)n < size ? WEFT_OK : WEFT_ELIMIT;
}

/* "amd" or "intel" for an x86_64 <cpu> element e of AMD's or Intel's
 * (NCCL's ncclTopoCpuType: vendor "AuthenticAMD", "GenuineIntel"); NULL
 * for any other. */
static const char *cpu_vendor(const ctx *c, uint32_t e)
{
    const char *arch = attr(c, e, "arch"), *vendor = attr(c, e, "vendor");
    if (!arch || strncmp(arch, "x86_64", 6) != 0 || !vendor)
        return NULL;
    if (strncmp(vendor, "AuthenticAMD", 12) == 0)
        return "amd";
    if (strncmp(vendor, "GenuineIntel", 12) == 0)
        return "intel";
    return NULL;
}

weft_err weft__nccl_add_box(ctx *c, weft_topo_builder *b, uint32_t box)
{
    char name[64], host[16];
    snprintf(host, sizeof host, "%u", box);
    weft_err e = WEFT_OK;
    for (int k = 0; k < DEV_KINDS && !e; k++) {
        for (uint32_t i = 0; i < c->count[k] && !e; i++) {
            uint32_t v = c->order[k][i];
            weft_node_id id;
            e = node_name(c, box, kind_prefix[k], i, name, sizeof name);
            if (!e)
                e = weft_topo_builder_add_node(b, name,
                                               k == DEV_GPU   ? WEFT_NODE_COMPUTE
                                               : k == DEV_NIC ? WEFT_NODE_NIC
                                                              : WEFT_NODE_SWITCH,
                                               host, &id);
            /* Bus ids were checked to be hex digits, ':' and '.', so they
             * are safe as .topo attribute values; numaid only when it is a
             * plain integer. */
            long long numa;
            if (!e && c->devs[v].has_busid)
                e = weft_topo_builder_set_attr(b, id, "busid", attr(c, c->devs[v].elem, "busid"));
            if (!e && k == DEV_CPU && parse_int(attr(c, c->devs[v].elem, "numaid"), &numa) &&
                numa >= 0)
                e = weft_topo_builder_set_attr(b, id, "numaid", attr(c, c->devs[v].elem, "numaid"));
            /* A GPU's host CPU vendor, which NCCL tunes by (cpu=,
             * docs/topo-format.md): its socket's, as ncclTopoCpuType reads
             * it (x86_64 and the vendor string's prefix). */
            const char *vendor = k == DEV_GPU ? cpu_vendor(c, c->devs[c->devs[v].cpu].elem) : NULL;
            if (!e && vendor)
                e = weft_topo_builder_set_attr(b, id, "cpu", vendor);
        }
    }
    if (!e && c->has_nvs) {
        e = node_name(c, box, "nvsw", 0, name, sizeof name);
        if (!e)
            e = weft_topo_builder_add_node(b, name, WEFT_NODE_SWITCH, host, NULL);
    }
    if (e)
        return e;
    uint32_t base = box * c->per_box;
    weft_rat zero = weft_rat_int(0);
    /* The PCIe tree (and NICs under a socket). */
    for (uint32_t v = 0; v < c->n_devs && !e; v++) {
        if (c->devs[v].parent != NONE)
            e = weft_topo_builder_add_duplex(
                b, (weft_node_id){base + c->devs[v].local},
                (weft_node_id){base + c->devs[c->devs[v].parent].local}, c->devs[v].up_bw, zero);
    }
    /* Every socket to every other, each direction at the sending socket's
     * figure (ncclTopoConnectCpus). */
    for (uint32_t i = 0; i < c->count[DEV_CPU] && !e; i++) {
        uint32_t u = c->order[DEV_CPU][i];
        const char *why;
        weft_rat bw = weft_rat_sign(c->o->cpu_bw_gbps) > 0
                          ? c->o->cpu_bw_gbps
                          : weft__nccl_inter_cpu_bw(c, c->devs[u].elem, &why);
        for (uint32_t j = 0; j < c->count[DEV_CPU] && !e; j++) {
            uint32_t w = c->order[DEV_CPU][j];
            if (u != w)
                e = weft_topo_builder_add_link(b, (weft_node_id){base + c->devs[u].local},
                                               (weft_node_id){base + c->devs[w].local}, bw, zero);
        }
    }
    weft_node_id nvsw = {base + c->per_box - 1};
    if (c->n_nvls) {
        /* A GPU-to-GPU element gives one direction (its peer lists the
         * other); links to the NVSwitch or the CPU go both ways (as NCCL's
         * ncclTopoAddNvLinks). Repeated elements add up in the builder. */
        for (size_t i = 0; i < c->n_nvls && !e; i++) {
            const nvl *n = &c->nvls[i];
            weft_node_id g = {base + c->devs[n->gpu].local};
            if (n->target == NVL_GPU)
                e = weft_topo_builder_add_link(
                    b, g, (weft_node_id){base + c->devs[n->target_dev].local}, n->bw, zero);
            else if (n->target == NVL_CPU)
                e = weft_topo_builder_add_duplex(
                    b, g, (weft_node_id){base + c->devs[c->devs[n->gpu].cpu].local}, n->bw, zero);
            else
                e = weft_topo_builder_add_duplex(b, g, nvsw, n->bw, zero);
        }
    } else if (c->has_nvs) {
        for (uint32_t i = 0; i < c->count[DEV_GPU] && !e; i++)
            e = weft_topo_builder_add_duplex(
                b, (weft_node_id){base + c->devs[c->order[DEV_GPU][i]].local}, nvsw,
                c->o->nvlink_bw_gbps, zero);
    }
    return e;
}

weft_err weft__nccl_add_network(ctx *c, weft_topo_builder *b)
{
    uint32_t n_nic = c->count[DEV_NIC];
    uint32_t first = c->o->hosts * c->per_box;
    weft_err e = WEFT_OK;
    char name[32];
    uint32_t n_sw = weft__nccl_use_rail(c) ? n_nic : 1;
    for (uint32_t s = 0; s < n_sw && !e; s++) {
        if (weft__nccl_use_rail(c))
            snprintf(name, sizeof name, "rail%u", s);
        else
            snprintf(name, sizeof name, "net0");
        e = weft_topo_builder_add_node(b, name, WEFT_NODE_SWITCH, NULL, NULL);
    }
    for (uint32_t box = 0; box < c->o->hosts && !e; box++) {
        for (uint32_t i = 0; i < n_nic && !e; i++) {
            uint32_t v = c->order[DEV_NIC][i];
            const char *why;
            weft_rat bw = weft__nccl_nic_net_bw(c, v, &why);
            weft_node_id sw = {first + (weft__nccl_use_rail(c) ? i : 0)};
            e = weft_topo_builder_add_duplex(b, (weft_node_id){box * c->per_box + c->devs[v].local},
                                             sw, bw, weft_rat_int(0));
        }
    }
    return e;
}
