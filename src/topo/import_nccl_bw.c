/* NCCL topology import, the bandwidth rules: NCCL's own conversions
 * (src/graph/topo.cc and topo.h in NVIDIA/nccl, read at commit 069a3d4) from
 * what a dump says to GB/s: PCIe link speed and width, the per-link NVLink
 * figure by compute capability, the inter-socket table, and the NVLink
 * targets resolved to devices. Where weft departs from NCCL the comment at
 * the rule says so. */
#include <stdlib.h>
#include <string.h>

#include "topo/import_nccl_internal.h"

#define NONE UINT32_MAX

/* An integer in C notation ("85", "0x55"), as NCCL's xmlGetAttrInt reads
 * CPU family and model ids (strtol with base 0). */
static bool parse_c_int(const char *s, long long *out)
{
    if (!s || !*s)
        return false;
    char *end;
    long long v = strtoll(s, &end, 0);
    if (*end || end == s)
        return false;
    *out = v;
    return true;
}

/* NCCL's kvDictPciGen: per-lane rate in units of 100 Mb/s, matched as a
 * prefix of link_speed in this order (kvConvertToInt). */
static const struct {
    const char *text;
    int rate;
} pci_gen[] = {
    {"2.5 GT/s", 15},        {"5 GT/s", 30},          {"8 GT/s", 60},
    {"16 GT/s", 120},        {"32 GT/s", 240},        {"2.5 GT/s PCIe", 15},
    {"5.0 GT/s PCIe", 30},   {"8.0 GT/s PCIe", 60},   {"16.0 GT/s PCIe", 120},
    {"32.0 GT/s PCIe", 240}, {"64.0 GT/s PCIe", 480},
};

/* The PCIe bandwidth of element e (a <pci>) to its parent, GB/s:
 * link_width * rate / 80, a width of 0 counting as 16 (both as NCCL). */
weft_err weft__nccl_pci_bw(ctx *c, uint32_t e, const char *busid, weft_rat *out)
{
    const char *speed = attr(c, e, "link_speed");
    const char *width = attr(c, e, "link_width");
    if (!speed || !*speed)
        return weft_diag_set(c->d, WEFT_EPARSE, "%s:%u:%u: <pci busid=\"%s\"> has no link_speed",
                             AT(c, e), busid);
    int rate = 0;
    for (size_t i = 0; i < sizeof pci_gen / sizeof pci_gen[0] && !rate; i++) {
        if (strncmp(speed, pci_gen[i].text, strlen(pci_gen[i].text)) == 0)
            rate = pci_gen[i].rate;
    }
    if (!rate)
        return weft_diag_set(
            c->d, WEFT_EPARSE,
            "%s:%u:%u: <pci busid=\"%s\">: unknown link_speed \"%s\" (NCCL knows "
            "2.5, 5, 8, 16, 32 GT/s and 2.5, 5.0, 8.0, 16.0, 32.0, 64.0 GT/s PCIe)",
            AT(c, e), busid, speed);
    long long w;
    if (!width || !parse_int(width, &w) || w < 0 || w > 64)
        return weft_diag_set(c->d, WEFT_EPARSE,
                             "%s:%u:%u: <pci busid=\"%s\">: link_width \"%s\" is not a lane count "
                             "(0 to 64)",
                             AT(c, e), busid, width ? width : "");
    if (w == 0)
        w = 16;
    return weft_rat_make(w * rate, 80, out);
}

/* NCCL's ncclTopoNVLinkBw: GB/s per NVLink for a compute capability
 * (sm 60: 18, 70 and 80: 20, 86: 12, 90: 20.6, 100 and later: 40.1; anything
 * else as sm 80). NCCL's newest figure for Rubin is not keyed by an sm value
 * weft can know, so later parts get the sm 100 figure. */
static weft_rat nvlink_bw_for_sm(long long sm)
{
    weft_rat r;
    if (sm >= 100)
        weft_rat_make(401, 10, &r);
    else if (sm >= 90)
        weft_rat_make(103, 5, &r);
    else if (sm == 86)
        r = weft_rat_int(12);
    else if (sm >= 70)
        r = weft_rat_int(20);
    else if (sm >= 60)
        r = weft_rat_int(18);
    else
        r = weft_rat_int(20);
    return r;
}

/* NCCL's ncclTopoGetInterCpuBw for one socket, with the words for the note.
 * Strings match as prefixes, as NCCL's kvConvertToInt does. */
weft_rat weft__nccl_inter_cpu_bw(const ctx *c, uint32_t e, const char **why)
{
    const char *arch = attr(c, e, "arch"), *vendor = attr(c, e, "vendor");
    long long fam = -1, model = -1;
    parse_c_int(attr(c, e, "familyid"), &fam);
    parse_c_int(attr(c, e, "modelid"), &model);
    if (arch && strncmp(arch, "ppc64", 5) == 0) {
        *why = "POWER";
        return weft_rat_int(32);
    }
    if (arch && strncmp(arch, "arm64", 5) == 0) {
        *why = "ARM";
        return weft_rat_int(6);
    }
    if (arch && strncmp(arch, "x86_64", 6) == 0 && vendor) {
        if (strncmp(vendor, "GenuineIntel", 12) == 0) {
            if (fam == 6 && (model >= 0xCF || model == 0xAD || model == 0xAE || model == 0xAF)) {
                *why = "Intel Emerald Rapids and later";
                return weft_rat_int(40);
            }
            if (fam == 6 && model >= 0x8F) {
                *why = "Intel Sapphire Rapids";
                return weft_rat_int(22);
            }
            if (fam == 6 && model >= 0x55) {
                *why = "Intel Skylake";
                return weft_rat_int(10);
            }
            *why = "Intel Broadwell and earlier";
            return weft_rat_int(6);
        }
        if (strncmp(vendor, "AuthenticAMD", 12) == 0) {
            if (fam == 0xBF || fam == 26) {
                *why = "AMD Zen 5";
                return weft_rat_int(32);
            }
            if (fam == 0xAF || fam == 25) {
                *why = "AMD Zen 3/4";
                return weft_rat_int(24);
            }
            *why = "AMD Zen 1/2";
            return weft_rat_int(16);
        }
        if (strncmp(vendor, "CentaurHauls", 12) == 0 || strncmp(vendor, "  Shanghai  ", 12) == 0) {
            if (fam == 7 && model == 0x5B) {
                *why = "Zhaoxin Yongfeng";
                return weft_rat_int(9);
            }
            *why = "Zhaoxin";
            return weft_rat_int(6);
        }
    }
    *why = "an unknown CPU: NCCL's LOC_BW";
    return weft_rat_int(NCCL_LOC_BW);
}

/* Resolves every <nvlink>: its target and its bandwidth. */
weft_err weft__nccl_resolve_nvlinks(ctx *c)
{
    bool use_opt = weft_rat_sign(c->o->nvlink_bw_gbps) > 0;
    c->nvl_sm = -2;
    for (size_t i = 0; i < c->n_nvls; i++) {
        nvl *n = &c->nvls[i];
        uint32_t e = n->elem;
        const char *count = attr(c, e, "count"), *tclass = attr(c, e, "tclass");
        long long cnt;
        if (!count || !parse_int(count, &cnt) || cnt <= 0)
            return weft_diag_set(c->d, WEFT_EPARSE,
                                 "%s:%u:%u: <nvlink>: count \"%s\" is not a positive integer",
                                 AT(c, e), count ? count : "");
        if (!tclass)
            return weft_diag_set(c->d, WEFT_EPARSE, "%s:%u:%u: <nvlink> has no tclass", AT(c, e));
        /* As NCCL: a GPU class is a GPU, 0x068001 the local CPU, anything
         * else the (one) NVSwitch. */
        if (strncmp(tclass, "0x03", 4) == 0) {
            const char *target = attr(c, e, "target");
            uint64_t id;
            if (!target || !parse_busid(target, &id))
                return weft_diag_set(c->d, WEFT_EPARSE,
                                     "%s:%u:%u: <nvlink> to a GPU needs a target bus id", AT(c, e));
            for (uint32_t g = 0; g < c->count[DEV_GPU]; g++) {
                if (c->devs[c->order[DEV_GPU][g]].busid == id)
                    n->target_dev = c->order[DEV_GPU][g];
            }
            if (n->target_dev == NONE)
                return weft_diag_set(c->d, WEFT_EPARSE,
                                     "%s:%u:%u: <nvlink> target \"%s\" is not a GPU of this file",
                                     AT(c, e), target);
            if (n->target_dev == n->gpu)
                return weft_diag_set(c->d, WEFT_EPARSE, "%s:%u:%u: <nvlink> from a GPU to itself",
                                     AT(c, e));
            n->target = NVL_GPU;
        } else if (strncmp(tclass, "0x068001", 8) == 0) {
            n->target = NVL_CPU;
        } else {
            n->target = NVL_NVS;
            c->has_nvs = true;
        }
        weft_rat per_link = c->o->nvlink_bw_gbps;
        if (!use_opt) {
            uint32_t g = c->devs[n->gpu].gpu_elem;
            long long sm;
            if (!parse_int(attr(c, g, "sm"), &sm))
                return weft_diag_set(c->d, WEFT_EPARSE,
                                     "%s:%u:%u: <gpu> has no integer sm= for NCCL's NVLink "
                                     "bandwidth; pass the NVLink bandwidth (--nvlink-bw)",
                                     AT(c, g));
            per_link = nvlink_bw_for_sm(sm);
            if (c->nvl_sm == -2) {
                c->nvl_sm = (int)sm;
                c->nvl_link_bw = per_link;
            } else if (c->nvl_sm != (int)sm) {
                c->nvl_sm = -3; /* several */
            }
        } else {
            c->nvl_sm = -1;
            c->nvl_link_bw = per_link;
        }
        if (weft_rat_mul(per_link, weft_rat_int(cnt), &n->bw))
            return weft_diag_set(c->d, WEFT_EOVERFLOW, "%s:%u:%u: <nvlink>: bandwidth overflows",
                                 AT(c, e));
    }
    return WEFT_OK;
}
