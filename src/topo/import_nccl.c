/* Importing NCCL topology XML (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE dumps).
 *
 * The file describes one box: <system> holds <cpu> sockets, each holding a
 * tree of <pci> devices (bridges = PCIe switches, GPUs, NICs); GPUs may hold
 * <gpu><nvlink .../></gpu>, NICs <nic><net .../></nic>. The document is read
 * into a weft__xml tree, walked once into a flat list of devices (dev), then
 * the box is laid out `hosts` times into a builder and joined by the network
 * the options choose.
 *
 * Bandwidths follow NCCL's own conversions (src/graph/topo.cc and topo.h in
 * NVIDIA/nccl, read at commit 069a3d4) so that weft's model of the box agrees
 * with the graph NCCL searches: PCIe width * lane rate / 80, net speed / 8000,
 * the inter-socket table of ncclTopoGetInterCpuBw and the per-link NVLink
 * table of ncclTopoNVLinkBw. Where weft departs from NCCL (an unknown
 * link_speed is an error here, NCCL silently assumes Gen3) the comment says so.
 * Every assumption is written into the fabric's note. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "topo/import_internal.h"
#include "topo/import_xml.h"
#include "weft/topo.h"

#define NONE UINT32_MAX
/* NCCL dumps are at most a handful of levels deep (system/cpu/pci.../gpu/
 * nvlink); the limit only stops a hostile document from recursing. */
#define MAX_DEPTH 64
/* Limits on the replicated fabric: far beyond any real cluster built from
 * one box file, and small enough to stay well under a gigabyte. */
#define MAX_NODES ((uint64_t)1 << 22)
#define MAX_LINKS ((uint64_t)1 << 23)

/* NCCL's LOC_BW: the bandwidth NCCL gives links inside one device and, as
 * a fallback, between CPUs of an unknown kind. GB/s. */
#define NCCL_LOC_BW 5000

typedef enum dev_kind { DEV_GPU, DEV_NIC, DEV_PCISW, DEV_CPU, DEV_KINDS } dev_kind;

static const char *const kind_prefix[DEV_KINDS] = {"gpu", "nic", "pcisw", "cpu"};

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

void weft_nccl_import_opts_init(weft_nccl_import_opts *o)
{
    memset(o, 0, sizeof *o);
    o->nvlink_bw_gbps = weft_rat_int(0);
    o->nic_bw_gbps = weft_rat_int(0);
    o->cpu_bw_gbps = weft_rat_int(0);
    o->hosts = 1;
    o->network = NULL;
}

/* ---- Small parsers ------------------------------------------------------ */

static const char *elem_name(const ctx *c, uint32_t e)
{
    return weft__xml_tag(&c->x, e);
}

static const char *attr(const ctx *c, uint32_t e, const char *key)
{
    return weft__xml_get(&c->x, e, key);
}

/* "NAME:LINE:COL: " of element e is the prefix of every message about it. */
#define AT(c, e) (c)->name, (c)->x.elems[e].line, (c)->x.elems[e].col

/* A decimal integer, optionally negative, nothing else. */
static bool parse_int(const char *s, long long *out)
{
    if (!s || !*s) return false;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end || end == s || v < -(1LL << 40) || v > (1LL << 40)) return false;
    *out = v;
    return true;
}

/* An integer in C notation ("85", "0x55"), as NCCL's xmlGetAttrInt reads
 * CPU family and model ids (strtol with base 0). */
static bool parse_c_int(const char *s, long long *out)
{
    if (!s || !*s) return false;
    char *end;
    long long v = strtoll(s, &end, 0);
    if (*end || end == s) return false;
    *out = v;
    return true;
}

/* A bus id as NCCL's busIdToInt64 reads it (hex digits, ':' and '.' are
 * skipped), but strict: any other character, no digit or more than 16
 * digits is an error. */
static bool parse_busid(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    int digits = 0;
    for (; *s; s++) {
        int h;
        if (*s == ':' || *s == '.') continue;
        if (*s >= '0' && *s <= '9')
            h = *s - '0';
        else if (*s >= 'a' && *s <= 'f')
            h = *s - 'a' + 10;
        else if (*s >= 'A' && *s <= 'F')
            h = *s - 'A' + 10;
        else
            return false;
        if (++digits > 16) return false;
        v = v << 4 | (uint64_t)h;
    }
    *out = v;
    return digits > 0;
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
static weft_err pci_bw(ctx *c, uint32_t e, const char *busid, weft_rat *out)
{
    const char *speed = attr(c, e, "link_speed");
    const char *width = attr(c, e, "link_width");
    if (!speed || !*speed)
        return weft_diag_set(c->d, WEFT_EPARSE, "%s:%u:%u: <pci busid=\"%s\"> has no link_speed",
                             AT(c, e), busid);
    int rate = 0;
    for (size_t i = 0; i < sizeof pci_gen / sizeof pci_gen[0] && !rate; i++) {
        if (strncmp(speed, pci_gen[i].text, strlen(pci_gen[i].text)) == 0) rate = pci_gen[i].rate;
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
    if (w == 0) w = 16;
    return weft_rat_make(w * rate, 80, out);
}

/* ---- Walking the document ----------------------------------------------- */

static void ignore(ctx *c, uint32_t e)
{
    if (c->ignored++ == 0) c->first_ignored = e;
}

static weft_err add_dev(ctx *c, dev_kind kind, uint32_t elem, uint32_t parent, uint32_t cpu,
                        uint32_t *out)
{
    if (weft__grow((void **)&c->devs, &c->devs_cap, c->n_devs + 1, sizeof *c->devs))
        return weft_diag_code(c->d, WEFT_ENOMEM);
    dev v;
    memset(&v, 0, sizeof v);
    v.kind = (uint8_t)kind;
    v.elem = elem;
    v.gpu_elem = NONE;
    v.parent = parent;
    v.cpu = cpu;
    v.up_bw = weft_rat_int(0);
    v.net_bw = weft_rat_int(0);
    *out = (uint32_t)c->n_devs;
    c->devs[c->n_devs++] = v;
    c->count[kind]++;
    return WEFT_OK;
}

static uint32_t child_named(const ctx *c, uint32_t e, const char *name)
{
    for (uint32_t k = c->x.elems[e].first_child; k != NONE; k = c->x.elems[k].next_sibling) {
        if (strcmp(elem_name(c, k), name) == 0) return k;
    }
    return NONE;
}

/* Sums the speeds of the <net> children of a <nic> into NIC `v`. NCCL reads
 * speed in Mb/s as speed / 8000 GB/s and treats speed <= 0 as unknown;
 * net="0" marks a port fused into a virtual NIC, which NCCL skips. */
static weft_err add_nets(ctx *c, uint32_t v, uint32_t nic)
{
    for (uint32_t k = c->x.elems[nic].first_child; k != NONE; k = c->x.elems[k].next_sibling) {
        if (strcmp(elem_name(c, k), "net") != 0) {
            ignore(c, k);
            continue;
        }
        const char *enabled = attr(c, k, "net");
        if (enabled && strcmp(enabled, "0") == 0) continue;
        const char *speed = attr(c, k, "speed");
        long long mbps;
        if (!speed) continue;
        if (!parse_int(speed, &mbps))
            return weft_diag_set(c->d, WEFT_EPARSE,
                                 "%s:%u:%u: <net>: speed \"%s\" is not an integer (Mb/s)", AT(c, k),
                                 speed);
        if (mbps <= 0) continue;
        weft_rat bw, sum;
        if (weft_rat_make(mbps, 8000, &bw) || weft_rat_add(c->devs[v].net_bw, bw, &sum))
            return weft_diag_set(c->d, WEFT_EOVERFLOW, "%s:%u:%u: <net>: speed overflows",
                                 AT(c, k));
        c->devs[v].net_bw = sum;
        c->devs[v].has_net_bw = true;
    }
    return WEFT_OK;
}

/* Records the <nvlink> children of GPU v's <gpu> element; targets are
 * resolved once every GPU is known. */
static weft_err add_nvlinks(ctx *c, uint32_t v, uint32_t gpu)
{
    for (uint32_t k = c->x.elems[gpu].first_child; k != NONE; k = c->x.elems[k].next_sibling) {
        if (strcmp(elem_name(c, k), "nvlink") != 0) {
            ignore(c, k);
            continue;
        }
        if (weft__grow((void **)&c->nvls, &c->nvls_cap, c->n_nvls + 1, sizeof *c->nvls))
            return weft_diag_code(c->d, WEFT_ENOMEM);
        nvl n;
        memset(&n, 0, sizeof n);
        n.gpu = v;
        n.elem = k;
        n.target_dev = NONE;
        c->nvls[c->n_nvls++] = n;
    }
    return WEFT_OK;
}

static weft_err walk_pci(ctx *c, uint32_t e, uint32_t parent, uint32_t cpu)
{
    const char *busid = attr(c, e, "busid");
    const char *cls = attr(c, e, "class");
    uint64_t id;
    if (!busid) return weft_diag_set(c->d, WEFT_EPARSE, "%s:%u:%u: <pci> has no busid", AT(c, e));
    if (!parse_busid(busid, &id))
        return weft_diag_set(c->d, WEFT_EPARSE,
                             "%s:%u:%u: <pci>: busid \"%s\" is not a PCI bus id such as "
                             "0000:07:00.0",
                             AT(c, e), busid);
    if (!cls)
        return weft_diag_set(c->d, WEFT_EPARSE, "%s:%u:%u: <pci busid=\"%s\"> has no class",
                             AT(c, e), busid);
    uint32_t gpu = child_named(c, e, "gpu");
    uint32_t nic = child_named(c, e, "nic");
    bool has_pci_child = child_named(c, e, "pci") != NONE;
    dev_kind kind;
    /* NCCL's kvDictPciClass matches class prefixes; a <gpu> or <nic> child
     * (NCCL fills those in) settles it whatever the class says. */
    if (gpu != NONE || strncmp(cls, "0x03", 4) == 0)
        kind = DEV_GPU;
    else if (nic != NONE || strncmp(cls, "0x02", 4) == 0)
        kind = DEV_NIC;
    else if (strncmp(cls, "0x0604", 6) == 0 || has_pci_child)
        kind = DEV_PCISW;
    else {
        /* NVSwitch PCI functions (0x068000; their links come from <nvlink>
         * elements) and other leaf devices carry no traffic weft models. */
        ignore(c, e);
        return WEFT_OK;
    }
    weft_rat bw;
    weft_err err = pci_bw(c, e, busid, &bw);
    if (err) return err;
    uint32_t v;
    err = add_dev(c, kind, e, parent, cpu, &v);
    if (err) return err;
    c->devs[v].has_busid = true;
    c->devs[v].busid = id;
    c->devs[v].up_bw = bw;
    for (uint32_t k = c->x.elems[e].first_child; k != NONE; k = c->x.elems[k].next_sibling) {
        const char *n = elem_name(c, k);
        if (kind == DEV_PCISW && strcmp(n, "pci") == 0)
            err = walk_pci(c, k, v, cpu);
        else if (kind == DEV_GPU && k == gpu) {
            c->devs[v].gpu_elem = k;
            err = add_nvlinks(c, v, k);
        } else if (kind == DEV_NIC && k == nic)
            err = add_nets(c, v, k);
        else
            ignore(c, k);
        if (err) return err;
    }
    return WEFT_OK;
}

static weft_err walk_cpu(ctx *c, uint32_t e)
{
    uint32_t v;
    weft_err err = add_dev(c, DEV_CPU, e, NONE, NONE, &v);
    if (err) return err;
    c->devs[v].cpu = v;
    for (uint32_t k = c->x.elems[e].first_child; k != NONE; k = c->x.elems[k].next_sibling) {
        const char *n = elem_name(c, k);
        if (strcmp(n, "pci") == 0) {
            err = walk_pci(c, k, v, v);
        } else if (strcmp(n, "nic") == 0) {
            /* A NIC straight under a socket (no PCI path, e.g. a TCP
             * interface): NCCL joins it to the CPU at LOC_BW. */
            uint32_t nv;
            err = add_dev(c, DEV_NIC, k, v, v, &nv);
            if (!err) {
                c->devs[nv].up_bw = weft_rat_int(NCCL_LOC_BW);
                err = add_nets(c, nv, k);
            }
        } else {
            ignore(c, k);
        }
        if (err) return err;
    }
    return WEFT_OK;
}

/* ---- Naming ------------------------------------------------------------- */

/* Bus id order; devices without one (NICs under a <cpu>) after, in file
 * order. arg is the dev array. */
static int cmp_busid(const void *a, const void *b, void *arg)
{
    const dev *devs = arg;
    const dev *x = &devs[*(const uint32_t *)a], *y = &devs[*(const uint32_t *)b];
    if (x->has_busid != y->has_busid) return x->has_busid ? -1 : 1;
    if (x->has_busid && x->busid != y->busid) return x->busid < y->busid ? -1 : 1;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    return i < j ? -1 : i > j;
}

/* Orders each kind (GPUs and NICs by bus id, switches and CPUs in file
 * order), gives every device its index and its place in a box, and refuses
 * a bus id used twice. */
static weft_err name_devs(ctx *c)
{
    uint32_t *all = weft__malloc((c->n_devs + 1) * sizeof *all);
    if (!all) return weft_diag_code(c->d, WEFT_ENOMEM);
    for (int k = 0; k < DEV_KINDS; k++) {
        c->order[k] = weft__malloc(((size_t)c->count[k] + 1) * sizeof *c->order[k]);
        if (!c->order[k]) {
            weft__free(all);
            return weft_diag_code(c->d, WEFT_ENOMEM);
        }
    }
    uint32_t fill[DEV_KINDS] = {0};
    for (uint32_t v = 0; v < c->n_devs; v++) {
        all[v] = v;
        c->order[c->devs[v].kind][fill[c->devs[v].kind]++] = v;
    }
    qsort_r(all, c->n_devs, sizeof *all, cmp_busid, c->devs);
    qsort_r(c->order[DEV_GPU], c->count[DEV_GPU], sizeof(uint32_t), cmp_busid, c->devs);
    qsort_r(c->order[DEV_NIC], c->count[DEV_NIC], sizeof(uint32_t), cmp_busid, c->devs);
    weft_err err = WEFT_OK;
    for (size_t i = 1; i < c->n_devs; i++) {
        const dev *a = &c->devs[all[i - 1]], *b = &c->devs[all[i]];
        if (a->has_busid && b->has_busid && a->busid == b->busid) {
            const dev *later = all[i] > all[i - 1] ? b : a, *first = later == b ? a : b;
            err = weft_diag_set(
                c->d, WEFT_EPARSE, "%s:%u:%u: busid \"%s\" is used twice (first at line %u)",
                AT(c, later->elem), attr(c, later->elem, "busid"), c->x.elems[first->elem].line);
            break;
        }
    }
    weft__free(all);
    if (err) return err;
    uint32_t local = 0;
    for (int k = 0; k < DEV_KINDS; k++) {
        for (uint32_t i = 0; i < c->count[k]; i++) {
            c->devs[c->order[k][i]].index = i;
            c->devs[c->order[k][i]].local = local++;
        }
    }
    c->per_box = local;
    return WEFT_OK;
}

/* ---- Bandwidth rules ---------------------------------------------------- */

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
static weft_rat inter_cpu_bw(const ctx *c, uint32_t e, const char **why)
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
static weft_err resolve_nvlinks(ctx *c)
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
                if (c->devs[c->order[DEV_GPU][g]].busid == id) n->target_dev = c->order[DEV_GPU][g];
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

/* ---- Building ----------------------------------------------------------- */

static bool use_rail(const ctx *c)
{
    return !c->o->network || strcmp(c->o->network, "rail") == 0;
}

/* The bandwidth NIC v gets to the network, each way, and where it came
 * from. */
static weft_rat nic_net_bw(const ctx *c, uint32_t v, const char **why)
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

static weft_err add_box(ctx *c, weft_topo_builder *b, uint32_t box)
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
        }
    }
    if (!e && c->has_nvs) {
        e = node_name(c, box, "nvsw", 0, name, sizeof name);
        if (!e) e = weft_topo_builder_add_node(b, name, WEFT_NODE_SWITCH, host, NULL);
    }
    if (e) return e;
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
        weft_rat bw = weft_rat_sign(c->o->cpu_bw_gbps) > 0 ? c->o->cpu_bw_gbps
                                                           : inter_cpu_bw(c, c->devs[u].elem, &why);
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

static weft_err add_network(ctx *c, weft_topo_builder *b)
{
    uint32_t n_nic = c->count[DEV_NIC];
    uint32_t first = c->o->hosts * c->per_box;
    weft_err e = WEFT_OK;
    char name[32];
    uint32_t n_sw = use_rail(c) ? n_nic : 1;
    for (uint32_t s = 0; s < n_sw && !e; s++) {
        if (use_rail(c))
            snprintf(name, sizeof name, "rail%u", s);
        else
            snprintf(name, sizeof name, "net0");
        e = weft_topo_builder_add_node(b, name, WEFT_NODE_SWITCH, NULL, NULL);
    }
    for (uint32_t box = 0; box < c->o->hosts && !e; box++) {
        for (uint32_t i = 0; i < n_nic && !e; i++) {
            uint32_t v = c->order[DEV_NIC][i];
            const char *why;
            weft_rat bw = nic_net_bw(c, v, &why);
            weft_node_id sw = {first + (use_rail(c) ? i : 0)};
            e = weft_topo_builder_add_duplex(b, (weft_node_id){box * c->per_box + c->devs[v].local},
                                             sw, bw, weft_rat_int(0));
        }
    }
    return e;
}

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
    if (n > 0 && (size_t)n + 5 < size) strcat(buf, " GB/s");
}

static weft_err write_notes(ctx *c, weft_topo_builder *b)
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
    if (e) return e;
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
            weft_rat first = inter_cpu_bw(c, c->devs[c->order[DEV_CPU][0]].elem, &why);
            bool same = true;
            for (uint32_t i = 1; i < c->count[DEV_CPU]; i++)
                same &=
                    weft_rat_eq(first, inter_cpu_bw(c, c->devs[c->order[DEV_CPU][i]].elem, &why_i));
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
                    fmt_bw(inter_cpu_bw(c, c->devs[c->order[DEV_CPU][i]].elem, &why_i), bw,
                           sizeof bw);
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
        fmt_bw(nic_net_bw(c, c->order[DEV_NIC][0], &why), bw2, sizeof bw2);
        /* nic_net_bw says "pass --nic-bw" exactly when it fell back to a
         * figure the file does not give. */
        bool assumed = strstr(why, "pass --nic-bw") != NULL;
        if (use_rail(c))
            e = (assumed ? assume : note)(b,
                     "network: %u boxes b0..b%u, NIC i of every box to rail switch rail<i>; "
                     "nic0 %s each way (%s)",
                     c->o->hosts, c->o->hosts - 1, bw2, why);
        else
            e = (assumed ? assume : note)(b,
                     "network: %u boxes b0..b%u, every NIC to one switch net0; nic0 %s each "
                     "way (%s)",
                     c->o->hosts, c->o->hosts - 1, bw2, why);
    }
    if (!e) e = assume(b, "latencies: 0 (the file gives none)");
    if (!e && c->ignored)
        e = assume(b, "not modelled: %u elements (the first: <%s> at line %u)", c->ignored,
                 elem_name(c, c->first_ignored), c->x.elems[c->first_ignored].line);
    return e;
}

static weft_err check_opts(const weft_nccl_import_opts *o, weft_diag *d)
{
    const struct {
        weft_rat v;
        const char *what;
    } bws[] = {{o->nvlink_bw_gbps, "NVLink"}, {o->nic_bw_gbps, "NIC"}, {o->cpu_bw_gbps, "CPU"}};
    for (size_t i = 0; i < sizeof bws / sizeof bws[0]; i++) {
        if (bws[i].v.den <= 0 || bws[i].v.num < 0)
            return weft_diag_set(d, WEFT_EINVAL, "the %s bandwidth must be >= 0 (0: default)",
                                 bws[i].what);
    }
    if (o->hosts < 1 || o->hosts > WEFT_NCCL_MAX_HOSTS)
        return weft_diag_set(d, WEFT_EINVAL, "hosts must be between 1 and %u (got %u)", WEFT_NCCL_MAX_HOSTS,
                             o->hosts);
    if (o->network && strcmp(o->network, "rail") != 0 && strcmp(o->network, "switch") != 0)
        return weft_diag_set(d, WEFT_EINVAL, "unknown network '%s' (expected rail or switch)",
                             o->network);
    return WEFT_OK;
}

static void ctx_fini(ctx *c)
{
    weft__xml_fini(&c->x);
    weft__free(c->devs);
    weft__free(c->nvls);
    for (int k = 0; k < DEV_KINDS; k++)
        weft__free(c->order[k]);
}

weft_err weft_topo_parse_nccl_xml(const char *text, size_t len, const char *name,
                                  const weft_nccl_import_opts *o, weft_topo **out, weft_diag *d)
{
    weft_nccl_import_opts defaults;
    if (!o) {
        weft_nccl_import_opts_init(&defaults);
        o = &defaults;
    }
    weft_err e = check_opts(o, d);
    if (e) return e;
    ctx c;
    memset(&c, 0, sizeof c);
    c.name = name;
    c.o = o;
    c.d = d;
    c.first_ignored = NONE;
    weft_topo_builder *b = NULL;
    e = weft__xml_parse(text, len, name, MAX_DEPTH, &c.x, d);
    if (e) return e;
    if (strcmp(elem_name(&c, 0), "system") != 0) {
        e = weft_diag_set(d, WEFT_EPARSE,
                          "%s:%u:%u: the root element is <%s>, expected <system> (an NCCL "
                          "topology dump)",
                          AT(&c, 0), elem_name(&c, 0));
        goto fini;
    }
    for (uint32_t k = c.x.elems[0].first_child; k != NONE && !e; k = c.x.elems[k].next_sibling) {
        if (strcmp(elem_name(&c, k), "cpu") == 0)
            e = walk_cpu(&c, k);
        else
            ignore(&c, k);
    }
    if (e) goto fini;
    if (c.count[DEV_GPU] == 0) {
        e = weft_diag_set(d, WEFT_ETOPO,
                          "%s:%u:%u: no GPU in the file (no <pci> of class 0x03xxxx or with a "
                          "<gpu> child inside a <cpu>)",
                          AT(&c, 0));
        goto fini;
    }
    if (o->hosts > 1 && c.count[DEV_NIC] == 0) {
        e = weft_diag_set(d, WEFT_EINVAL,
                          "%s: %u hosts need NICs to join them, but the file has no NIC", name,
                          o->hosts);
        goto fini;
    }
    if ((e = name_devs(&c)) || (e = resolve_nvlinks(&c))) goto fini;
    if (!c.n_nvls && weft_rat_sign(o->nvlink_bw_gbps) > 0) c.has_nvs = true;
    if (c.has_nvs) c.per_box++;
    /* Directed links per box (an upper bound: repeated NVLinks merge). */
    uint64_t box_links = 2 * ((uint64_t)c.n_devs - c.count[DEV_CPU]) +
                         (uint64_t)c.count[DEV_CPU] * (c.count[DEV_CPU] - (c.count[DEV_CPU] > 0)) +
                         2 * (uint64_t)c.n_nvls +
                         (c.has_nvs && !c.n_nvls ? 2 * (uint64_t)c.count[DEV_GPU] : 0);
    uint64_t nodes = (uint64_t)c.per_box * o->hosts + (o->hosts > 1 ? c.count[DEV_NIC] : 0);
    uint64_t links =
        box_links * o->hosts + (o->hosts > 1 ? 2 * (uint64_t)c.count[DEV_NIC] * o->hosts : 0);
    if (nodes > MAX_NODES || links > MAX_LINKS) {
        e = weft_diag_set(d, WEFT_ELIMIT,
                          "%s: %u hosts give %llu nodes and %llu links, over the limits of %llu "
                          "and %llu",
                          name, o->hosts, (unsigned long long)nodes, (unsigned long long)links,
                          (unsigned long long)MAX_NODES, (unsigned long long)MAX_LINKS);
        goto fini;
    }
    if ((e = weft_topo_builder_new(&b))) goto fail;
    for (uint32_t box = 0; box < o->hosts && !e; box++)
        e = add_box(&c, b, box);
    if (!e && o->hosts > 1) e = add_network(&c, b);
    if (!e) e = write_notes(&c, b);
    if (e) goto fail;
    e = weft_topo_build(b, out, d);
    b = NULL;
    goto fini;
fail:
    weft_topo_builder_free(b);
    weft_diag_code(d, e);
fini:
    ctx_fini(&c);
    return e;
}

weft_err weft_topo_load_nccl_xml(const char *path, const weft_nccl_import_opts *o, weft_topo **out,
                                 weft_diag *d)
{
    char *text;
    size_t len;
    weft_err e = weft__read_whole_file(path, &text, &len, d);
    if (e) return e;
    e = weft_topo_parse_nccl_xml(text, len, path, o, out, d);
    weft__free(text);
    return e;
}
