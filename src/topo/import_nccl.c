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
 * Every assumption is written into the fabric's note.
 *
 * Files: this one reads the dump into devices; import_nccl_bw.c holds
 * NCCL's bandwidth rules, import_nccl_build.c lays the boxes out,
 * import_nccl_notes.c writes the note, import_nccl_internal.h holds the
 * shared state. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "topo/import_nccl_internal.h"

#define NONE UINT32_MAX
/* NCCL dumps are at most a handful of levels deep (system/cpu/pci.../gpu/
 * nvlink); the limit only stops a hostile document from recursing. */
#define MAX_DEPTH 64
/* Limits on the replicated fabric: far beyond any real cluster built from
 * one box file, and small enough to stay well under a gigabyte. */
#define MAX_NODES ((uint64_t)1 << 22)
#define MAX_LINKS ((uint64_t)1 << 23)

void weft_nccl_import_opts_init(weft_nccl_import_opts *o)
{
    memset(o, 0, sizeof *o);
    o->nvlink_bw_gbps = weft_rat_int(0);
    o->nic_bw_gbps = weft_rat_int(0);
    o->cpu_bw_gbps = weft_rat_int(0);
    o->hosts = 1;
    o->network = NULL;
}

/* ---- Walking the document ----------------------------------------------- */

static void ignore(ctx *c, uint32_t e)
{
    if (c->ignored++ == 0)
        c->first_ignored = e;
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
        if (strcmp(elem_name(c, k), name) == 0)
            return k;
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
        if (enabled && strcmp(enabled, "0") == 0)
            continue;
        const char *speed = attr(c, k, "speed");
        long long mbps;
        if (!speed)
            continue;
        if (!parse_int(speed, &mbps))
            return weft_diag_set(c->d, WEFT_EPARSE,
                                 "%s:%u:%u: <net>: speed \"%s\" is not an integer (Mb/s)", AT(c, k),
                                 speed);
        if (mbps <= 0)
            continue;
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
    if (!busid)
        return weft_diag_set(c->d, WEFT_EPARSE, "%s:%u:%u: <pci> has no busid", AT(c, e));
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
    weft_err err = weft__nccl_pci_bw(c, e, busid, &bw);
    if (err)
        return err;
    uint32_t v;
    err = add_dev(c, kind, e, parent, cpu, &v);
    if (err)
        return err;
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
        if (err)
            return err;
    }
    return WEFT_OK;
}

static weft_err walk_cpu(ctx *c, uint32_t e)
{
    uint32_t v;
    weft_err err = add_dev(c, DEV_CPU, e, NONE, NONE, &v);
    if (err)
        return err;
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
        if (err)
            return err;
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
    if (x->has_busid != y->has_busid)
        return x->has_busid ? -1 : 1;
    if (x->has_busid && x->busid != y->busid)
        return x->busid < y->busid ? -1 : 1;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    return i < j ? -1 : i > j;
}

/* Orders each kind (GPUs and NICs by bus id, switches and CPUs in file
 * order), gives every device its index and its place in a box, and refuses
 * a bus id used twice. */
static weft_err name_devs(ctx *c)
{
    uint32_t *all = weft__malloc((c->n_devs + 1) * sizeof *all);
    if (!all)
        return weft_diag_code(c->d, WEFT_ENOMEM);
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
    if (err)
        return err;
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
        return weft_diag_set(d, WEFT_EINVAL, "hosts must be between 1 and %u (got %u)",
                             WEFT_NCCL_MAX_HOSTS, o->hosts);
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
    if (e)
        return e;
    ctx c;
    memset(&c, 0, sizeof c);
    c.name = name;
    c.o = o;
    c.d = d;
    c.first_ignored = NONE;
    weft_topo_builder *b = NULL;
    e = weft__xml_parse(text, len, name, MAX_DEPTH, &c.x, d);
    if (e)
        return e;
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
    if (e)
        goto fini;
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
    if ((e = name_devs(&c)) || (e = weft__nccl_resolve_nvlinks(&c)))
        goto fini;
    if (!c.n_nvls && weft_rat_sign(o->nvlink_bw_gbps) > 0)
        c.has_nvs = true;
    if (c.has_nvs)
        c.per_box++;
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
    if ((e = weft_topo_builder_new(&b)))
        goto fail;
    for (uint32_t box = 0; box < o->hosts && !e; box++)
        e = weft__nccl_add_box(&c, b, box);
    if (!e && o->hosts > 1)
        e = weft__nccl_add_network(&c, b);
    if (!e)
        e = weft__nccl_write_notes(&c, b);
    if (e)
        goto fail;
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
    if (e)
        return e;
    e = weft_topo_parse_nccl_xml(text, len, path, o, out, d);
    weft__free(text);
    return e;
}
