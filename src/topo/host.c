/* Host fabrics: the machine hwloc describes (host_internal.h), plus the
 * network it cannot see, as a weft fabric. weft/host.h states the model;
 * every bandwidth that is assumed rather than read is said in the note. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "topo/host_internal.h"

#define MAX_HOSTS 65536u
#define MAX_NODES (1u << 22)

static const char *const unit_names[] = {"core", "numa", "package", "pu"};
static const char *const unit_plural[] = {"cores", "NUMA nodes", "packages", "hardware threads"};

void weft_host_opts_init(weft_host_opts *o)
{
    memset(o, 0, sizeof *o);
    o->hosts = 1;
}

bool weft_host_unit_parse(const char *text, weft_host_unit *out)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(text, unit_names[i]) == 0) {
            *out = (weft_host_unit)i;
            return true;
        }
    return false;
}

const char *weft_host_unit_name(weft_host_unit u)
{
    return (unsigned)u < 4 ? unit_names[u] : "?";
}

void weft__host_desc_fini(weft__host_desc *h)
{
    for (uint32_t i = 0; h->nic_name && i < h->nnics; i++)
        weft__free(h->nic_name[i]);
    weft__free(h->nic_name);
    weft__free(h->nic_numa);
    weft__free(h->nic_link);
    weft__free(h->unit_numa);
    memset(h, 0, sizeof *h);
}

static weft_rat bw_or(weft_rat v, int64_t dflt)
{
    return v.num > 0 && v.den > 0 ? v : (weft_rat){dflt, 1};
}

/* Builder calls whose only failure here is running out of memory (names
 * are unique and links valid by construction). */
typedef struct build {
    weft_topo_builder *b;
    weft_err e;
} build;

static weft_node_id add_node(build *x, weft_node_kind kind, const char *host, const char *fmt,
                             const char *prefix, uint32_t i)
{
    char name[64];
    snprintf(name, sizeof name, fmt, prefix, i);
    weft_node_id id = {0};
    if (!x->e)
        x->e = weft_topo_builder_add_node(x->b, name, kind, host, &id);
    return id;
}

static void duplex(build *x, weft_node_id a, weft_node_id b, weft_rat bw)
{
    if (!x->e)
        x->e = weft_topo_builder_add_duplex(x->b, a, b, bw, (weft_rat){0, 1});
}

/* A note line; `assumed` when it states a default a key could change
 * (weft_topo_builder_assume), which the command line then says on stderr. */
static void note(build *x, bool assumed, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(build *x, bool assumed, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (!x->e)
        x->e = assumed ? weft_topo_builder_assume(x->b, line) : weft_topo_builder_note(x->b, line);
}

static void bw_text(weft_rat v, char *buf, size_t cap)
{
    weft_rat_format_exact(v, buf, cap);
}

weft_err weft_topo_host(const weft_host_opts *opts, weft_topo **out, weft_diag *d)
{
    weft_host_opts o;
    if (opts)
        o = *opts;
    else
        weft_host_opts_init(&o);
    if (o.hosts == 0)
        o.hosts = 1;
    if (o.hosts > MAX_HOSTS)
        return weft_diag_set(d, WEFT_EINVAL, "host: hosts must be 1 .. %u, got %u", MAX_HOSTS,
                             o.hosts);
    if ((unsigned)o.unit > WEFT_HOST_PU)
        return weft_diag_set(d, WEFT_EINVAL, "host: invalid rank unit %d", (int)o.unit);
    bool rail = !o.network || strcmp(o.network, "rail") == 0;
    if (!rail && strcmp(o.network, "switch") != 0)
        return weft_diag_set(d, WEFT_EINVAL, "host: network must be rail or switch, got '%s'",
                             o.network);
    weft__host_desc h;
    weft_err e = weft__host_read(o.xml, o.unit, &h, d);
    if (e)
        return e;
    const char *unit = unit_names[o.unit];
    if (h.nunits == 0) {
        e = weft_diag_set(d, WEFT_ETOPO, "host: %s has no %s to be a rank", h.source, unit);
        goto free_desc;
    }
    if (o.hosts > 1 && h.nnics == 0) {
        e = weft_diag_set(d, WEFT_ETOPO,
                          "host: %s has no network interface hwloc can see; a fabric of %u hosts "
                          "needs one",
                          h.source, o.hosts);
        goto free_desc;
    }
    bool nic_bw_given = o.nic_bw_gbps.num > 0 && o.nic_bw_gbps.den > 0;
    for (uint32_t i = 0; o.hosts > 1 && i < h.nnics && !nic_bw_given; i++)
        if (h.nic_link[i].num <= 0) {
            e = weft_diag_set(d, WEFT_ETOPO,
                              "host: hwloc does not know the speed of NIC %s of %s; give the "
                              "network bandwidth (nic-bw)",
                              h.nic_name[i], h.source);
            goto free_desc;
        }
    uint64_t nodes = (uint64_t)o.hosts * (h.nnuma + h.nunits + (o.hosts > 1 ? h.nnics : 0)) +
                     (rail ? h.nnics : 1);
    if (nodes > MAX_NODES) {
        e = weft_diag_set(d, WEFT_ELIMIT, "host: %u hosts of %u nodes exceed %u nodes", o.hosts,
                          h.nnuma + h.nunits + h.nnics, MAX_NODES);
        goto free_desc;
    }
    weft_rat rank_bw = bw_or(o.rank_bw_gbps, 10), numa_bw = bw_or(o.numa_bw_gbps, 20);
    build x = {NULL, WEFT_OK};
    if ((x.e = weft_topo_builder_new(&x.b)))
        goto fail;
    char t1[48], t2[48];
    note(&x, false, "host fabric from %s: %u NUMA node%s, %u NIC%s per box", h.source, h.nnuma,
         h.nnuma == 1 ? "" : "s", h.nnics, h.nnics == 1 ? "" : "s");
    bw_text(rank_bw, t1, sizeof t1);
    bw_text(numa_bw, t2, sizeof t2);
    note(&x, o.rank_bw_gbps.num <= 0,
         "ranks are the %u %s; each to its NUMA node's memory (mem<i>) %s GB/s each way (%s)",
         h.nunits, unit_plural[o.unit], t1,
         o.rank_bw_gbps.num > 0 ? "rank-bw" : "assumed; set rank-bw");
    if (h.nnuma > 1)
        note(&x, o.numa_bw_gbps.num <= 0,
             "memories of one box joined pairwise by %s GB/s each way (%s)", t2,
             o.numa_bw_gbps.num > 0 ? "numa-bw" : "assumed; set numa-bw");
    if (o.hosts > 1) {
        if (nic_bw_given)
            bw_text(o.nic_bw_gbps, t1, sizeof t1);
        note(&x, !nic_bw_given, "%u boxes joined by %s; each NIC to the network %s%s", o.hosts,
             rail ? "one switch per NIC index (rail<i>)" : "one switch (net0)",
             nic_bw_given ? t1 : "at its PCIe link speed",
             nic_bw_given ? " GB/s each way (nic-bw)" : " each way");
    } else if (h.nnics) {
        note(&x, false, "one box: its NICs carry nothing and are left out");
    }
    weft_node_id *mem = weft__calloc(h.nnuma, sizeof *mem);
    weft_node_id *nic = weft__calloc(h.nnics ? h.nnics : 1, sizeof *nic);
    weft_node_id *sw = weft__calloc(h.nnics ? h.nnics : 1, sizeof *sw);
    if (!mem || !nic || !sw)
        x.e = WEFT_ENOMEM;
    if (o.hosts > 1 && !x.e) {
        for (uint32_t i = 0; i < (rail ? h.nnics : 1); i++)
            sw[i] = add_node(&x, WEFT_NODE_SWITCH, NULL, rail ? "%srail%u" : "%snet%u", "", i);
    }
    for (uint32_t b = 0; b < o.hosts && !x.e; b++) {
        char prefix[24], host[16];
        prefix[0] = '\0';
        if (o.hosts > 1)
            snprintf(prefix, sizeof prefix, "b%u.", b);
        snprintf(host, sizeof host, "%u", b);
        for (uint32_t i = 0; i < h.nnuma; i++)
            mem[i] = add_node(&x, WEFT_NODE_SWITCH, host, "%smem%u", prefix, i);
        char fmt[24];
        snprintf(fmt, sizeof fmt, "%%s%s%%u", unit);
        for (uint32_t i = 0; i < h.nunits; i++) {
            weft_node_id r = add_node(&x, WEFT_NODE_COMPUTE, host, fmt, prefix, i);
            duplex(&x, r, mem[h.unit_numa[i]], rank_bw);
        }
        for (uint32_t i = 0; i < h.nnuma; i++)
            for (uint32_t j = i + 1; j < h.nnuma; j++)
                duplex(&x, mem[i], mem[j], numa_bw);
        for (uint32_t i = 0; o.hosts > 1 && i < h.nnics; i++) {
            nic[i] = add_node(&x, WEFT_NODE_NIC, host, "%snic%u", prefix, i);
            weft_rat link = h.nic_link[i].num > 0 ? h.nic_link[i] : o.nic_bw_gbps;
            duplex(&x, nic[i], mem[h.nic_numa[i]], link);
            duplex(&x, nic[i], sw[rail ? i : 0], nic_bw_given ? o.nic_bw_gbps : h.nic_link[i]);
        }
    }
    weft__free(mem);
    weft__free(nic);
    weft__free(sw);
    if (x.e)
        goto fail;
    weft__host_desc_fini(&h);
    return weft_topo_build(x.b, out, d);
fail:
    weft_topo_builder_free(x.b);
    e = weft_diag_code(d, x.e);
free_desc:
    weft__host_desc_fini(&h);
    return e;
}

/* One KEY=VALUE of a host spec into o. */
static weft_err spec_item(const char *spec, char *item, weft_host_opts *o, weft_diag *d)
{
    char *eq = strchr(item, '=');
    if (!eq)
        return weft_diag_set(d, WEFT_EINVAL, "%s: expected KEY=VALUE, got '%s'", spec, item);
    *eq = '\0';
    const char *k = item, *v = eq + 1;
    weft_rat *bw = strcmp(k, "rank-bw") == 0   ? &o->rank_bw_gbps
                   : strcmp(k, "numa-bw") == 0 ? &o->numa_bw_gbps
                   : strcmp(k, "nic-bw") == 0  ? &o->nic_bw_gbps
                                               : NULL;
    if (bw) {
        /* Read as every flag reads a bandwidth: a bare number is GB/s. */
        if (weft_parse_quantity(WEFT_QTY_BANDWIDTH, v, "GB/s", bw, NULL) != WEFT_OK)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "%s: bad %s '%s' (expected a bandwidth such as 25 (GB/s) or "
                                 "100Gbps)",
                                 spec, k, v);
    } else if (strcmp(k, "ranks") == 0) {
        if (!weft_host_unit_parse(v, &o->unit))
            return weft_diag_set(
                d, WEFT_EINVAL, "%s: bad ranks '%s' (expected core, numa, package or pu)", spec, v);
    } else if (strcmp(k, "hosts") == 0) {
        char *end;
        errno = 0;
        unsigned long n = strtoul(v, &end, 10);
        if (*v < '0' || *v > '9' || *end || errno || n < 1 || n > MAX_HOSTS)
            return weft_diag_set(d, WEFT_EINVAL, "%s: bad hosts '%s' (expected 1 .. %u)", spec, v,
                                 MAX_HOSTS);
        o->hosts = (uint32_t)n;
    } else if (strcmp(k, "net") == 0) {
        if (strcmp(v, "rail") != 0 && strcmp(v, "switch") != 0)
            return weft_diag_set(d, WEFT_EINVAL, "%s: bad net '%s' (expected rail or switch)", spec,
                                 v);
        o->network = strcmp(v, "rail") == 0 ? "rail" : "switch";
    } else if (strcmp(k, "xml") == 0) {
        o->xml = v;
    } else {
        return weft_diag_set(d, WEFT_EINVAL,
                             "%s: unknown key '%s' (expected xml, ranks, rank-bw, numa-bw, "
                             "nic-bw, hosts or net)",
                             spec, k);
    }
    return WEFT_OK;
}

bool weft_topo_host_spec(const char *spec, weft_topo **out, weft_err *err, weft_diag *d)
{
    if (strcmp(spec, "host") != 0 && strncmp(spec, "host:", 5) != 0)
        return false;
    weft_host_opts o;
    weft_host_opts_init(&o);
    char *copy = weft__strdup(spec);
    if (!copy) {
        *err = weft_diag_code(d, WEFT_ENOMEM);
        return true;
    }
    weft_err e = WEFT_OK;
    if (spec[4] == ':') {
        char *save = NULL;
        for (char *item = strtok_r(copy + 5, ",", &save); item && !e;
             item = strtok_r(NULL, ",", &save))
            e = spec_item(spec, item, &o, d);
    }
    if (!e)
        e = weft_topo_host(&o, out, d); /* o.xml points into copy */
    weft__free(copy);
    *err = e;
    return true;
}
