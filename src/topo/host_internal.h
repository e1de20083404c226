/* Host fabrics (weft/host.h): what the hwloc reader (hwloc.c, or
 * hwloc_none.c when weft is built without hwloc) hands to the builder
 * (host.c). The reader only describes the machine; every modelling choice
 * (names, links, bandwidths) is the builder's. */
#ifndef WEFT_TOPO_HOST_INTERNAL_H
#define WEFT_TOPO_HOST_INTERNAL_H

#include "weft/host.h"

typedef struct weft__host_desc {
    uint32_t nnuma;      /* NUMA nodes (>= 1) */
    uint32_t nunits;     /* units of the kind asked for, in hwloc's logical order */
    uint32_t *unit_numa; /* per unit: the first NUMA node its cpuset meets */
    uint32_t nnics;      /* network and OpenFabrics devices, in hwloc order */
    uint32_t *nic_numa;  /* per NIC: the NUMA node of its locality */
    weft_rat *nic_link;  /* per NIC: PCIe link speed in GB/s, 0 when unknown */
    char **nic_name;     /* per NIC: the OS name ("eth0", "mlx5_0") */
    char source[288];    /* "this machine (hwloc)" or "hwloc XML NAME" (a base name) */
} weft__host_desc;

/* Reads this machine, or the XML file xml, counting units of kind unit.
 * On failure *out needs no release. */
weft_err weft__host_read(const char *xml, weft_host_unit unit, weft__host_desc *out, weft_diag *d);
void weft__host_desc_fini(weft__host_desc *h);

#endif
