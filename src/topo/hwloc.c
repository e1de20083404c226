/* Reading a machine with hwloc (built only when CMake finds libhwloc;
 * hwloc_none.c stands in otherwise). The live machine or an XML export
 * (hwloc_topology_set_xml) is loaded with I/O devices kept, and reduced to
 * the counts and localities host.c needs (host_internal.h). */
#include <hwloc.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "topo/host_internal.h"

bool weft_host_available(void)
{
    return true;
}

static hwloc_obj_type_t unit_type(weft_host_unit u)
{
    switch (u) {
    case WEFT_HOST_NUMA:
        return HWLOC_OBJ_NUMANODE;
    case WEFT_HOST_PACKAGE:
        return HWLOC_OBJ_PACKAGE;
    case WEFT_HOST_PU:
        return HWLOC_OBJ_PU;
    default:
        return HWLOC_OBJ_CORE;
    }
}

/* The first NUMA node (logical index) whose cpuset meets set; 0 when none
 * does (an object without CPUs). */
static uint32_t numa_of(hwloc_topology_t t, hwloc_const_cpuset_t set, uint32_t nnuma)
{
    for (uint32_t i = 0; set && i < nnuma; i++) {
        hwloc_obj_t n = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, i);
        if (n && n->cpuset && hwloc_bitmap_intersects(n->cpuset, set))
            return i;
    }
    return 0;
}

static bool is_nic(hwloc_obj_t o)
{
    return o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK ||
           o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
}

weft_err weft__host_read(const char *xml, weft_host_unit unit, weft__host_desc *out, weft_diag *d)
{
    weft__host_desc h;
    memset(&h, 0, sizeof h);
    weft_err e = WEFT_OK;
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0)
        return weft_diag_code(d, WEFT_ENOMEM);
    if (xml && hwloc_topology_set_xml(t, xml) != 0) {
        e = weft_diag_set(d, WEFT_EPARSE, "host: hwloc cannot read the XML file %s", xml);
        goto destroy;
    }
    /* PCI devices come from the Linux backend's sysfs walk (with their link
     * speed); the separate libpciaccess component adds nothing we read and
     * leaks at every load, so it is left out. */
    hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(t) != 0) {
        e = weft_diag_set(d, xml ? WEFT_EPARSE : WEFT_EIO, "host: hwloc cannot load %s",
                          xml ? xml : "this machine's topology");
        goto destroy;
    }
    /* The file's base name only: the note is part of the fabric's canonical
     * text, which must not depend on where the file was read from. */
    const char *base = xml ? strrchr(xml, '/') : NULL;
    snprintf(h.source, sizeof h.source, "%s%s", xml ? "hwloc XML " : "this machine (hwloc)",
             xml ? (base ? base + 1 : xml) : "");
    int nn = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    int nu = hwloc_get_nbobjs_by_type(t, unit_type(unit));
    h.nnuma = nn > 0 ? (uint32_t)nn : 1;
    h.nunits = nu > 0 ? (uint32_t)nu : 0;
    if (h.nunits && !(h.unit_numa = weft__calloc(h.nunits, sizeof *h.unit_numa)))
        goto nomem;
    for (uint32_t i = 0; i < h.nunits; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(t, unit_type(unit), i);
        h.unit_numa[i] = unit == WEFT_HOST_NUMA ? i : numa_of(t, o->cpuset, h.nnuma);
    }
    for (hwloc_obj_t o = hwloc_get_next_osdev(t, NULL); o; o = hwloc_get_next_osdev(t, o))
        h.nnics += is_nic(o);
    if (h.nnics) {
        h.nic_numa = weft__calloc(h.nnics, sizeof *h.nic_numa);
        h.nic_link = weft__calloc(h.nnics, sizeof *h.nic_link);
        h.nic_name = weft__calloc(h.nnics, sizeof *h.nic_name);
        if (!h.nic_numa || !h.nic_link || !h.nic_name)
            goto nomem;
    }
    uint32_t k = 0;
    for (hwloc_obj_t o = hwloc_get_next_osdev(t, NULL); o; o = hwloc_get_next_osdev(t, o)) {
        if (!is_nic(o))
            continue;
        hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t, o);
        h.nic_numa[k] = numa_of(t, anc ? anc->cpuset : NULL, h.nnuma);
        hwloc_obj_t pci = o->parent;
        while (pci && pci->type != HWLOC_OBJ_PCI_DEVICE && pci->type == HWLOC_OBJ_OS_DEVICE)
            pci = pci->parent;
        /* hwloc gives the link speed in GB/s as a float; six decimals is
         * what its XML keeps, so the exact value is that decimal. */
        if (pci && pci->type == HWLOC_OBJ_PCI_DEVICE && pci->attr->pcidev.linkspeed > 0) {
            char text[64];
            snprintf(text, sizeof text, "%.6fGB/s", (double)pci->attr->pcidev.linkspeed);
            if (weft_parse_bandwidth(text, &h.nic_link[k]) != WEFT_OK)
                h.nic_link[k] = (weft_rat){0, 1};
        }
        if (!(h.nic_name[k] = weft__strdup(o->name ? o->name : "?")))
            goto nomem;
        k++;
    }
    *out = h;
    goto destroy;
nomem:
    weft__host_desc_fini(&h);
    e = weft_diag_code(d, WEFT_ENOMEM);
destroy:
    hwloc_topology_destroy(t);
    return e;
}
