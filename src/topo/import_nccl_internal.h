/* The NCCL topology importer's state, shared by its files: import_nccl.c
 * (reading the dump into devices, the entry points), import_nccl_bw.c
 * (NCCL's bandwidth rules), import_nccl_build.c (laying the boxes out into
 * a builder) and import_nccl_notes.c (the assumptions said in the fabric's
 * note).
 * import_nccl.c's opening comment describes the format and the sources of
 * the figures. Nothing outside src/topo includes this header.
 *
 * File order (docs/architecture.md): import_nccl_bw < import_nccl_build <
 * import_nccl_notes < import_nccl; a file calls only the files before it.
 * The attribute readers below are static inline so that every file can use
 * them without a place in that order.
 */
#ifndef WEFT_TOPO_IMPORT_NCCL_INTERNAL_H
#define WEFT_TOPO_IMPORT_NCCL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "topo/import_internal.h"
#include "topo/import_xml.h"
#include "weft/topo.h"

typedef enum dev_kind { DEV_GPU, DEV_NIC, DEV_PCISW, DEV_CPU, DEV_KINDS } dev_kind;

typedef struct dev {
    uint8_t kind;
    bool has_busid;
    bool has_net_bw;
    uint32_t elem;     /* the <pci>, <cpu> or <nic> element */
    uint32_t gpu_elem; /* the <gpu> child of a GPU, or NONE */
    uint32_t parent;   /* upstream dev (PCIe switch or CPU); NONE for a CPU */
    uint32_t cpu;      /* the CPU socket the device hangs from */
    uint32_t local;    /* node index inside one box */
    uint32_t index;    /* N in "gpuN", "nicN" ... */
    uint64_t busid;
    weft_rat up_bw;  /* to parent, each way */
    weft_rat net_bw; /* NIC: sum of its <net speed=> */
} dev;

typedef enum nvl_target { NVL_GPU, NVL_CPU, NVL_NVS } nvl_target;

typedef struct nvl {
    uint32_t gpu;  /* dev index of the GPU holding the <nvlink> */
    uint32_t elem; /* the <nvlink> element */
    uint32_t target_dev;
    uint8_t target;
    weft_rat bw; /* count * per-link bandwidth, GB/s */
} nvl;

typedef struct ctx {
    const char *name;
    const weft_nccl_import_opts *o;
    weft_diag *d;
    weft__xml x;
    dev *devs;
    size_t n_devs, devs_cap;
    nvl *nvls;
    size_t n_nvls, nvls_cap;
    uint32_t count[DEV_KINDS];
    uint32_t *order[DEV_KINDS]; /* dev indices of each kind in name order */
    uint32_t per_box;           /* nodes per box, NVSwitch included */
    bool has_nvs;               /* an NVSwitch node per box */
    uint32_t ignored;           /* elements weft does not model */
    uint32_t first_ignored;     /* the first of them, or NONE */
    weft_rat nvl_link_bw;       /* the per-link figure used, for the note */
    int nvl_sm;                 /* the sm it came from, or -1 for the option */
} ctx;

/* ---- Reading attributes (static inline: every file of the importer uses
 * them) ------------------------------------------------------------------ */

static inline const char *elem_name(const ctx *c, uint32_t e)
{
    return weft__xml_tag(&c->x, e);
}

static inline const char *attr(const ctx *c, uint32_t e, const char *key)
{
    return weft__xml_get(&c->x, e, key);
}

/* A decimal integer, optionally negative, nothing else. */
static inline bool parse_int(const char *s, long long *out)
{
    if (!s || !*s)
        return false;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end || end == s || v < -(1LL << 40) || v > (1LL << 40))
        return false;
    *out = v;
    return true;
}

/* A bus id as NCCL's busIdToInt64 reads it (hex digits, ':' and '.' are
 * skipped), but strict: any other character, no digit or more than 16
 * digits is an error. */
static inline bool parse_busid(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    int digits = 0;
    for (; *s; s++) {
        int h;
        if (*s == ':' || *s == '.')
            continue;
        if (*s >= '0' && *s <= '9')
            h = *s - '0';
        else if (*s >= 'a' && *s <= 'f')
            h = *s - 'a' + 10;
        else if (*s >= 'A' && *s <= 'F')
            h = *s - 'A' + 10;
        else
            return false;
        if (++digits > 16)
            return false;
        v = v << 4 | (uint64_t)h;
    }
    *out = v;
    return digits > 0;
}

/* "NAME:LINE:COL: " of element e is the prefix of every message about it. */
#define AT(c, e) (c)->name, (c)->x.elems[e].line, (c)->x.elems[e].col

/* NCCL's LOC_BW: the bandwidth NCCL gives links inside one device and, as
 * a fallback, between CPUs of an unknown kind. GB/s. */
#define NCCL_LOC_BW 5000

/* ---- import_nccl_bw.c ---- */

/* The PCIe bandwidth of element e (a <pci>) to its parent, GB/s:
 * link_width * rate / 80, a width of 0 counting as 16 (both as NCCL). */
weft_err weft__nccl_pci_bw(ctx *c, uint32_t e, const char *busid, weft_rat *out);
/* NCCL's ncclTopoGetInterCpuBw for the socket of <cpu> element e, with the
 * words for the note in *why. */
weft_rat weft__nccl_inter_cpu_bw(const ctx *c, uint32_t e, const char **why);
/* Resolves every <nvlink>: its target device and its bandwidth. */
weft_err weft__nccl_resolve_nvlinks(ctx *c);

/* ---- import_nccl_build.c ---- */

/* True when the boxes are joined rail-optimized (the default network). */
bool weft__nccl_use_rail(const ctx *c);
/* The bandwidth NIC v gets to the network, each way, and where it came
 * from. */
weft_rat weft__nccl_nic_net_bw(const ctx *c, uint32_t v, const char **why);
/* Adds box number `box`: its nodes and the links inside it. */
weft_err weft__nccl_add_box(ctx *c, weft_topo_builder *b, uint32_t box);
/* Joins the boxes' NICs by the network the options choose. */
weft_err weft__nccl_add_network(ctx *c, weft_topo_builder *b);

/* ---- import_nccl_notes.c ---- */

/* Writes the fabric's note: what was read, what was assumed and what was
 * left out. */
weft_err weft__nccl_write_notes(ctx *c, weft_topo_builder *b);

#endif
