/* weft host fabrics: this machine (or a saved hwloc topology) as a fabric.
 *
 * hwloc (the Portable Hardware Locality library, Debian libhwloc-dev)
 * describes a machine: packages, NUMA nodes, cores, hardware threads, PCI
 * devices and NICs. weft_topo_host turns that description, plus a
 * description of the network hwloc cannot see, into a weft fabric. weft is
 * built with hwloc when CMake finds it; otherwise every call here fails with
 * WEFT_EUNSUPPORTED ("host: weft was built without hwloc ...").
 *
 * The model (docs/run.md, "Host fabrics"): this machine has no GPUs, so the
 * ranks are CPU units, one rank process each: by default the cores
 * ("core0", ... in hwloc's logical order), or the NUMA nodes ("numa0", ...),
 * packages ("package0", ...) or hardware threads ("pu0", ...). Each NUMA
 * node's memory is a switch "mem<i>"; each rank is joined to the memory of
 * the NUMA node that holds it by rank_bw each way (a rank process copies
 * through memory); the memories of a box are joined pairwise by numa_bw
 * each way. hwloc knows no memory bandwidth, so both are assumptions,
 * written into the fabric's note. With hosts > 1 the box is copied (names
 * get a "bH." prefix, host=H on every node), and its NICs (hwloc network
 * and OpenFabrics devices, "nic0", ... in hwloc order) join the memory of
 * their NUMA node by their PCIe link speed (or nic_bw) and the network by
 * nic_bw: a switch per NIC index ("rail<i>") or one switch ("net0"). With
 * one host the NICs carry nothing and are left out.
 */
#ifndef WEFT_HOST_H
#define WEFT_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/err.h"
#include "weft/rat.h"
#include "weft/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_host_unit {
    WEFT_HOST_CORE = 0, /* one rank per core (the default) */
    WEFT_HOST_NUMA,     /* one rank per NUMA node */
    WEFT_HOST_PACKAGE,  /* one rank per package (socket) */
    WEFT_HOST_PU,       /* one rank per hardware thread */
} weft_host_unit;

/* Zero rationals and NULL mean "the documented default". */
typedef struct weft_host_opts {
    const char *xml;       /* an hwloc XML file to read instead of this machine */
    weft_host_unit unit;   /* what a rank is */
    weft_rat rank_bw_gbps; /* each rank to its NUMA node's memory, each way; 0: 10 GB/s */
    weft_rat numa_bw_gbps; /* between two NUMA nodes of a box, each way; 0: 20 GB/s */
    /* Each NIC to the network, each way (and to its memory when hwloc does
     * not know its PCIe link speed). Required when hosts > 1 and a NIC's
     * speed is unknown. */
    weft_rat nic_bw_gbps;
    uint32_t hosts;      /* copies of the box, 1 .. 65536 (default 1) */
    const char *network; /* "rail" (default) or "switch", when hosts > 1 */
} weft_host_opts;

WEFT_API void weft_host_opts_init(weft_host_opts *o);
/* "core", "numa", "package", "pu"; false when unknown. */
WEFT_API bool weft_host_unit_parse(const char *text, weft_host_unit *out);
WEFT_API const char *weft_host_unit_name(weft_host_unit u);
/* True when weft was built with hwloc. */
WEFT_API bool weft_host_available(void);

/* Builds the fabric of this machine (or o->xml). Errors: WEFT_EUNSUPPORTED
 * without hwloc; WEFT_EIO / WEFT_EPARSE when hwloc cannot read the machine
 * or the XML (naming it); WEFT_EINVAL for bad options; WEFT_ETOPO when the
 * machine has no unit of the kind asked for, or hosts > 1 and it has no
 * NIC, or a NIC's speed is unknown and nic_bw is not given. */
WEFT_API weft_err weft_topo_host(const weft_host_opts *o, weft_topo **out, weft_diag *d);

/* The spec form, for WEFT_FABRIC and every command that takes a SPEC:
 * "host" or "host:KEY=VALUE,..." with keys xml, ranks (core|numa|package|pu),
 * rank-bw, numa-bw, nic-bw (bandwidths as in .topo files), hosts, net
 * (rail|switch). False (nothing written to d) when spec is not of this
 * form; otherwise *err is the result of building it. */
WEFT_API bool weft_topo_host_spec(const char *spec, weft_topo **out, weft_err *err, weft_diag *d);

#ifdef __cplusplus
}
#endif
#endif
