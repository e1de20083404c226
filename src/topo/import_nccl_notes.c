/* NCCL topology import, the assumptions: every figure the dump does not
 * give (NVLink and NIC bandwidths, the inter-socket rule, the network
 * between boxes, the elements weft does not model) is said in the fabric's
 * note, as an "assumed:" line where it changes the answer, so that every
 * command can repeat it. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "topo/import_nccl_internal.h"

static weft_err note(weft_topo_builder *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static weft_err note(weft_topo_builder *b, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    return weft_topo_builder_note(b, line);
}

/* A note line that is an assumption (weft_topo_builder_assume): a figure
 * the file does not give, which a flag could change. */
static weft_err assume(weft_topo_builder *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static weft_err assume(weft_topo_builder *b, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    return weft_topo_builder_assume(b, line);
}

static void fmt_bw(weft_rat r, char *buf, size_t size)
{
    int n = weft_rat_format_exact(r, buf, size);
    if (n > 0 && (size_t)n + 5 < size)
        strcat(buf, " GB/s");
}

weft_err weft__nccl_write_notes(ctx *c, weft_topo_builder *b)
{
    char bw[64], bw2[64];
    weft_err e =
        note(b,
             "imported from NCCL topology XML %s; per box GPUs: %u (gpu0.. in PCI bus id "
             "order), NICs: %u (bus id order), PCIe switches: %u, CPUs: %u",
             c->name, c->count[DEV_GPU], c->count[DEV_NIC], c->count[DEV_PCISW], c->count[DEV_CPU]);
    if (!e)
        e = note(b, "PCIe links: NCCL's rule (src/graph/topo.cc, ncclTopoAddPci): link_width x "
                    "lane rate of link_speed (kvDictPciGen, 100 Mb/s units) / 80 GB/s each way; "
                    "16 GT/s x16 = 24 GB/s, 32 GT/s x16 = 48 GB/s");
    if (e)
        return e;
    if (c->n_nvls) {
        fmt_bw(c->nvl_link_bw, bw, sizeof bw);
        if (c->nvl_sm == -1)
            e = note(b, "NVLink: %zu <nvlink> elements, %s per link (--nvlink-bw)", c->n_nvls, bw);
        else if (c->nvl_sm == -3)
            e = assume(b,
                       "NVLink: %zu <nvlink> elements, per link NCCL's figure for each GPU's sm "
                       "(ncclTopoNVLinkBw); pass --nvlink-bw to override",
                       c->n_nvls);
        else
            e = assume(b,
                       "NVLink: %zu <nvlink> elements, %s per link (NCCL's figure for sm %d, "
                       "ncclTopoNVLinkBw); pass --nvlink-bw to override",
                       c->n_nvls, bw, c->nvl_sm);
    } else if (c->has_nvs) {
        fmt_bw(c->o->nvlink_bw_gbps, bw, sizeof bw);
        e = note(b,
                 "NVLink: the file has no <nvlink> elements; one NVSwitch nvsw0 per box, %s "
                 "each way per GPU (--nvlink-bw)",
                 bw);
    } else {
        e = assume(b, "no NVLink modelled: the file has no <nvlink> elements; pass the NVLink "
                      "bandwidth (--nvlink-bw)");
    }
    if (!e && c->count[DEV_CPU] > 1) {
        if (weft_rat_sign(c->o->cpu_bw_gbps) > 0) {
            fmt_bw(c->o->cpu_bw_gbps, bw, sizeof bw);
            e = note(b, "CPU to CPU: %s each way (--cpu-bw)", bw);
        } else {
            const char *why, *why_i;
            weft_rat first = weft__nccl_inter_cpu_bw(c, c->devs[c->order[DEV_CPU][0]].elem, &why);
            bool same = true;
            for (uint32_t i = 1; i < c->count[DEV_CPU]; i++)
                same &= weft_rat_eq(
                    first, weft__nccl_inter_cpu_bw(c, c->devs[c->order[DEV_CPU][i]].elem, &why_i));
            fmt_bw(first, bw, sizeof bw);
            if (same) {
                e = assume(b,
                           "CPU to CPU: %s each way (NCCL's figure for %s, "
                           "ncclTopoGetInterCpuBw); pass --cpu-bw to override",
                           bw, why);
            } else {
                /* Sockets of different kinds: list each one's figure. */
                char list[400];
                size_t n = 0;
                for (uint32_t i = 0; i < c->count[DEV_CPU] && n < sizeof list; i++) {
                    fmt_bw(weft__nccl_inter_cpu_bw(c, c->devs[c->order[DEV_CPU][i]].elem, &why_i),
                           bw, sizeof bw);
                    n += (size_t)snprintf(list + n, sizeof list - n, "%scpu%u %s (%s)",
                                          i ? ", " : "", i, bw, why_i);
                }
                e = assume(b,
                           "CPU to CPU: each direction at the sending socket's figure "
                           "(ncclTopoGetInterCpuBw): %s; pass --cpu-bw to override",
                           list);
            }
        }
    }
    if (!e && c->o->hosts == 1) {
        e = note(b, "1 host: no network beyond the NICs (pass --hosts N to model N boxes)");
    } else if (!e) {
        const char *why;
        fmt_bw(weft__nccl_nic_net_bw(c, c->order[DEV_NIC][0], &why), bw2, sizeof bw2);
        /* nic_net_bw says "pass --nic-bw" exactly when it fell back to a
         * figure the file does not give. */
        bool assumed = strstr(why, "pass --nic-bw") != NULL;
        if (weft__nccl_use_rail(c))
            e = (assumed ? assume : note)(
                b,
                "network: %u boxes b0..b%u, NIC i of every box to rail switch rail<i>; "
                "nic0 %s each way (%s)",
                c->o->hosts, c->o->hosts - 1, bw2, why);
        else
            e = (assumed ? assume : note)(
                b,
                "network: %u boxes b0..b%u, every NIC to one switch net0; nic0 %s each "
                "way (%s)",
                c->o->hosts, c->o->hosts - 1, bw2, why);
    }
    if (!e)
        e = assume(b, "latencies: 0 (the file gives none)");
    if (!e && c->ignored)
        e = assume(b, "not modelled: %u elements (the first: <%s> at line %u)", c->ignored,
                   elem_name(c, c->first_ignored), c->x.elems[c->first_ignored].line);
    return e;
}
