/* Building fabrics: the builder (nodes, hosts, attributes, links, the note)
 * and weft_topo_build, which freezes it into the compressed layout of
 * graph_internal.h. Reading a built fabric is graph_read.c, the name index
 * graph_names.c. See weft/topo.h for the contract. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "topo/graph_internal.h"

/* ---- A growable byte arena of NUL-terminated strings -------------------- */

typedef struct strbuf {
    char *data;
    size_t len, cap;
} strbuf;

/* Appends s[0..n) and a NUL; writes its offset. */
static weft_err strbuf_add(strbuf *sb, const char *s, size_t n, uint32_t *off)
{
    if (sb->len + n + 1 > UINT32_MAX)
        return WEFT_ELIMIT;
    if (weft__grow((void **)&sb->data, &sb->cap, sb->len + n + 1, 1))
        return WEFT_ENOMEM;
    memcpy(sb->data + sb->len, s, n);
    sb->data[sb->len + n] = '\0';
    *off = (uint32_t)sb->len;
    sb->len += n + 1;
    return WEFT_OK;
}

/* ---- Builder ------------------------------------------------------------- */

typedef struct pending_attr {
    uint32_t node, key, value; /* offsets into strings */
    uint32_t prev;             /* index+1 of the node's previous attribute, 0 if none */
} pending_attr;

struct weft_topo_builder {
    strbuf strings;
    uint32_t n_nodes;
    size_t node_cap;
    uint32_t *node_name;
    uint8_t *node_kind;
    int32_t *node_host;
    uint32_t *attr_last; /* index+1 of each node's last attribute, 0 if none */
    weft__name_index names;
    /* Hosts are interned by name through their own index. */
    uint32_t n_hosts;
    size_t host_cap;
    uint32_t *host_name;
    weft__name_index hosts;
    pending_attr *attrs;
    size_t n_attrs, attr_cap;
    size_t n_links, link_cap;
    uint32_t *link_src, *link_dst;
    weft_rat *link_bw, *link_lat;
    weft_link_shaper *link_shaper; /* allocated with the first shaper */
    strbuf note;
    strbuf assumed; /* the note's lines added by weft_topo_builder_assume */
};

static const char *const kind_names[WEFT__NODE_KIND_COUNT] = {"compute", "switch", "nic", "ocs"};

const char *weft_node_kind_name(weft_node_kind kind)
{
    return (unsigned)kind < WEFT__NODE_KIND_COUNT ? kind_names[kind] : "?";
}

bool weft_node_kind_parse(const char *text, size_t len, weft_node_kind *out)
{
    for (int k = 0; k < WEFT__NODE_KIND_COUNT; k++) {
        if (strlen(kind_names[k]) == len && memcmp(kind_names[k], text, len) == 0) {
            *out = (weft_node_kind)k;
            return true;
        }
    }
    return false;
}

weft_err weft_topo_builder_new(weft_topo_builder **out)
{
    weft_topo_builder *b = weft__calloc(1, sizeof *b);
    if (!b)
        return WEFT_ENOMEM;
    *out = b;
    return WEFT_OK;
}

void weft_topo_builder_free(weft_topo_builder *b)
{
    if (!b)
        return;
    weft__free(b->strings.data);
    weft__free(b->node_name);
    weft__free(b->node_kind);
    weft__free(b->node_host);
    weft__free(b->attr_last);
    weft__free(b->names.slots);
    weft__free(b->host_name);
    weft__free(b->hosts.slots);
    weft__free(b->attrs);
    weft__free(b->link_src);
    weft__free(b->link_dst);
    weft__free(b->link_bw);
    weft__free(b->link_lat);
    weft__free(b->link_shaper);
    weft__free(b->note.data);
    weft__free(b->assumed.data);
    weft__free(b);
}

uint32_t weft_topo_builder_num_nodes(const weft_topo_builder *b)
{
    return b->n_nodes;
}

bool weft_topo_builder_find(const weft_topo_builder *b, const char *name, size_t len,
                            weft_node_id *out)
{
    uint32_t v;
    if (!weft__name_index_find(&b->names, b->strings.data, b->node_name, name, len, &v))
        return false;
    out->v = v;
    return true;
}

/* Grows the parallel node arrays to hold `need` nodes. */
static weft_err reserve_nodes(weft_topo_builder *b, size_t need)
{
    if (need <= b->node_cap)
        return WEFT_OK;
    size_t ncap = b->node_cap ? b->node_cap * 2 : 64;
    while (ncap < need)
        ncap *= 2;
    uint32_t *name = weft__realloc_array(b->node_name, ncap, sizeof *name);
    if (!name)
        return WEFT_ENOMEM;
    b->node_name = name;
    uint8_t *kind = weft__realloc_array(b->node_kind, ncap, sizeof *kind);
    if (!kind)
        return WEFT_ENOMEM;
    b->node_kind = kind;
    int32_t *host = weft__realloc_array(b->node_host, ncap, sizeof *host);
    if (!host)
        return WEFT_ENOMEM;
    b->node_host = host;
    uint32_t *last = weft__realloc_array(b->attr_last, ncap, sizeof *last);
    if (!last)
        return WEFT_ENOMEM;
    b->attr_last = last;
    b->node_cap = ncap;
    return WEFT_OK;
}

static weft_err intern_host(weft_topo_builder *b, const char *host, int32_t *out)
{
    size_t len = strlen(host);
    uint32_t h;
    if (weft__name_index_find(&b->hosts, b->strings.data, b->host_name, host, len, &h)) {
        *out = (int32_t)h;
        return WEFT_OK;
    }
    if (b->n_hosts >= INT32_MAX)
        return WEFT_ELIMIT;
    if (weft__grow((void **)&b->host_name, &b->host_cap, b->n_hosts + 1, sizeof *b->host_name))
        return WEFT_ENOMEM;
    weft_err e = weft__name_index_reserve(&b->hosts, b->n_hosts, b->strings.data, b->host_name);
    if (e)
        return e;
    uint32_t off;
    e = strbuf_add(&b->strings, host, len, &off);
    if (e)
        return e;
    b->host_name[b->n_hosts] = off;
    weft__name_index_put(&b->hosts, weft__name_hash(host, len), b->n_hosts);
    *out = (int32_t)b->n_hosts++;
    return WEFT_OK;
}

weft_err weft_topo_builder_add_node(weft_topo_builder *b, const char *name, weft_node_kind kind,
                                    const char *host, weft_node_id *out)
{
    size_t len = strlen(name);
    if (len == 0 || len > WEFT_TOPO_NAME_MAX || (unsigned)kind >= WEFT__NODE_KIND_COUNT)
        return WEFT_EINVAL;
    if (host && (host[0] == '\0' || strlen(host) > WEFT_TOPO_NAME_MAX))
        return WEFT_EINVAL;
    uint32_t existing;
    if (weft__name_index_find(&b->names, b->strings.data, b->node_name, name, len, &existing))
        return WEFT_EEXIST;
    if (b->n_nodes >= UINT32_MAX - 1)
        return WEFT_ELIMIT;
    weft_err e = reserve_nodes(b, (size_t)b->n_nodes + 1);
    if (e)
        return e;
    e = weft__name_index_reserve(&b->names, b->n_nodes, b->strings.data, b->node_name);
    if (e)
        return e;
    int32_t host_ix = WEFT_NO_HOST;
    if (host) {
        e = intern_host(b, host, &host_ix);
        if (e)
            return e;
    }
    uint32_t off;
    e = strbuf_add(&b->strings, name, len, &off);
    if (e)
        return e;
    uint32_t v = b->n_nodes++;
    b->node_name[v] = off;
    b->node_kind[v] = (uint8_t)kind;
    b->node_host[v] = host_ix;
    b->attr_last[v] = 0;
    weft__name_index_put(&b->names, weft__name_hash(name, len), v);
    if (out)
        out->v = v;
    return WEFT_OK;
}

weft_err weft_topo_builder_set_attr(weft_topo_builder *b, weft_node_id node, const char *key,
                                    const char *value)
{
    if (node.v >= b->n_nodes || !key[0] || strcmp(key, "host") == 0 ||
        strlen(key) > WEFT_TOPO_NAME_MAX || strlen(value) > WEFT_TOPO_NAME_MAX)
        return WEFT_EINVAL;
    /* Only this node's attributes are compared (a chain through prev), so
     * adding many attributes to many nodes stays linear. */
    for (uint32_t i = b->attr_last[node.v]; i; i = b->attrs[i - 1].prev) {
        if (strcmp(b->strings.data + b->attrs[i - 1].key, key) == 0)
            return WEFT_EEXIST;
    }
    if (b->n_attrs >= UINT32_MAX - 1)
        return WEFT_ELIMIT;
    if (weft__grow((void **)&b->attrs, &b->attr_cap, b->n_attrs + 1, sizeof *b->attrs))
        return WEFT_ENOMEM;
    pending_attr a = {node.v, 0, 0, b->attr_last[node.v]};
    weft_err e = strbuf_add(&b->strings, key, strlen(key), &a.key);
    if (e)
        return e;
    e = strbuf_add(&b->strings, value, strlen(value), &a.value);
    if (e)
        return e;
    b->attrs[b->n_attrs++] = a;
    b->attr_last[node.v] = (uint32_t)b->n_attrs;
    return WEFT_OK;
}

static weft_err reserve_links(weft_topo_builder *b, size_t need)
{
    if (need <= b->link_cap)
        return WEFT_OK;
    size_t ncap = b->link_cap ? b->link_cap * 2 : 64;
    while (ncap < need)
        ncap *= 2;
    uint32_t *src = weft__realloc_array(b->link_src, ncap, sizeof *src);
    if (!src)
        return WEFT_ENOMEM;
    b->link_src = src;
    uint32_t *dst = weft__realloc_array(b->link_dst, ncap, sizeof *dst);
    if (!dst)
        return WEFT_ENOMEM;
    b->link_dst = dst;
    weft_rat *bw = weft__realloc_array(b->link_bw, ncap, sizeof *bw);
    if (!bw)
        return WEFT_ENOMEM;
    b->link_bw = bw;
    weft_rat *lat = weft__realloc_array(b->link_lat, ncap, sizeof *lat);
    if (!lat)
        return WEFT_ENOMEM;
    b->link_lat = lat;
    if (b->link_shaper) {
        weft_link_shaper *sh = weft__realloc_array(b->link_shaper, ncap, sizeof *sh);
        if (!sh)
            return WEFT_ENOMEM;
        b->link_shaper = sh;
    }
    b->link_cap = ncap;
    return WEFT_OK;
}

weft_err weft_topo_builder_add_link(weft_topo_builder *b, weft_node_id src, weft_node_id dst,
                                    weft_rat bw_gbps, weft_rat lat_ns)
{
    if (src.v >= b->n_nodes || dst.v >= b->n_nodes || src.v == dst.v)
        return WEFT_EINVAL;
    if (bw_gbps.den <= 0 || bw_gbps.num <= 0 || lat_ns.den <= 0 || lat_ns.num < 0)
        return WEFT_EINVAL;
    if (b->n_links >= UINT32_MAX - 1)
        return WEFT_ELIMIT;
    weft_err e = reserve_links(b, b->n_links + 1);
    if (e)
        return e;
    size_t i = b->n_links++;
    b->link_src[i] = src.v;
    b->link_dst[i] = dst.v;
    b->link_bw[i] = bw_gbps;
    b->link_lat[i] = lat_ns;
    if (b->link_shaper)
        b->link_shaper[i] = (weft_link_shaper){0, {0, 1}};
    return WEFT_OK;
}

weft_err weft_topo_builder_shape_links(weft_topo_builder *b, uint32_t last, weft_link_shaper s)
{
    if (last == 0 || last > b->n_links || s.burst_bytes == 0 || s.peak_gbps.den <= 0)
        return WEFT_EINVAL;
    for (size_t i = b->n_links - last; i < b->n_links; i++)
        if (weft_rat_cmp(s.peak_gbps, b->link_bw[i]) <= 0)
            return WEFT_EINVAL;
    if (!b->link_shaper) {
        b->link_shaper = weft__calloc(b->link_cap, sizeof *b->link_shaper);
        if (!b->link_shaper)
            return WEFT_ENOMEM;
        for (size_t i = 0; i < b->link_cap; i++)
            b->link_shaper[i].peak_gbps = (weft_rat){0, 1};
    }
    for (size_t i = b->n_links - last; i < b->n_links; i++)
        b->link_shaper[i] = s;
    return WEFT_OK;
}

weft_err weft_topo_builder_add_duplex(weft_topo_builder *b, weft_node_id a, weft_node_id c,
                                      weft_rat bw_gbps, weft_rat lat_ns)
{
    weft_err e = weft_topo_builder_add_link(b, a, c, bw_gbps, lat_ns);
    if (e)
        return e;
    e = weft_topo_builder_add_link(b, c, a, bw_gbps, lat_ns);
    if (e)
        b->n_links--; /* keep the pair atomic */
    return e;
}

/* Appends line to the '\n'-joined text in sb. */
static weft_err strbuf_add_line(strbuf *sb, const char *line)
{
    size_t n = strlen(line);
    /* Lines are joined with '\n'; the arena's trailing NUL is overwritten. */
    size_t need = sb->len + n + 2;
    if (weft__grow((void **)&sb->data, &sb->cap, need, 1))
        return WEFT_ENOMEM;
    if (sb->len)
        sb->data[sb->len++] = '\n';
    memcpy(sb->data + sb->len, line, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
    return WEFT_OK;
}

weft_err weft_topo_builder_note(weft_topo_builder *b, const char *line)
{
    return strbuf_add_line(&b->note, line);
}

weft_err weft_topo_builder_assume(weft_topo_builder *b, const char *line)
{
    /* The assumption list first: on ENOMEM the note has not grown either. */
    weft_err e = strbuf_add_line(&b->assumed, line);
    if (e)
        return e;
    return strbuf_add_line(&b->note, line);
}

/* ---- Build --------------------------------------------------------------- */

void weft_topo_free(weft_topo *t)
{
    if (!t)
        return;
    weft__free(t->strings);
    weft__free(t->node_name);
    weft__free(t->node_kind);
    weft__free(t->node_host);
    weft__free(t->node_attrs);
    weft__free(t->node_rank);
    weft__free(t->rank_node);
    weft__free(t->host_name);
    weft__free(t->out_start);
    weft__free(t->link_src);
    weft__free(t->link_dst);
    weft__free(t->link_bw);
    weft__free(t->link_lat);
    weft__free(t->link_shaper);
    weft__free(t->in_start);
    weft__free(t->in_links);
    weft__free(t->note);
    weft__free(t->assumed);
    weft__free(t->names.slots);
    weft__free(t->attr_start);
    weft__free(t->attr_key);
    weft__free(t->attr_val);
    weft__free(t);
}

/* Stable counting sort of perm[0..n) by key[perm[i]] in [0, range). */
static weft_err counting_sort(uint32_t *perm, size_t n, const uint32_t *key, uint32_t range)
{
    uint32_t *count = weft__calloc((size_t)range + 1, sizeof *count);
    uint32_t *tmp = weft__malloc((n ? n : 1) * sizeof *tmp);
    if (!count || !tmp) {
        weft__free(count);
        weft__free(tmp);
        return WEFT_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        count[key[perm[i]] + 1]++;
    for (uint32_t k = 0; k < range; k++)
        count[k + 1] += count[k];
    for (size_t i = 0; i < n; i++)
        tmp[count[key[perm[i]]]++] = perm[i];
    memcpy(perm, tmp, n * sizeof *perm);
    weft__free(count);
    weft__free(tmp);
    return WEFT_OK;
}

/* Lays out the node attributes as "k=v k=v" strings in the arena. */
static weft_err build_attrs(weft_topo_builder *b, weft_topo *t)
{
    t->node_attrs = weft__malloc(((size_t)b->n_nodes + 1) * sizeof *t->node_attrs);
    if (!t->node_attrs)
        return WEFT_ENOMEM;
    uint32_t empty;
    weft_err e = strbuf_add(&b->strings, "", 0, &empty);
    if (e)
        return e;
    for (uint32_t v = 0; v < b->n_nodes; v++)
        t->node_attrs[v] = empty;
    t->attr_start = weft__calloc((size_t)b->n_nodes + 1, sizeof *t->attr_start);
    t->attr_key = weft__malloc((b->n_attrs + 1) * sizeof *t->attr_key);
    t->attr_val = weft__malloc((b->n_attrs + 1) * sizeof *t->attr_val);
    if (!t->attr_start || !t->attr_key || !t->attr_val)
        return WEFT_ENOMEM;
    if (!b->n_attrs)
        return WEFT_OK;
    /* Group attributes by node (stable, so the order added is kept). */
    uint32_t *perm = weft__malloc(b->n_attrs * sizeof *perm);
    uint32_t *key = weft__malloc(b->n_attrs * sizeof *key);
    char *line = weft__malloc(64 * 1024);
    if (!perm || !key || !line) {
        e = WEFT_ENOMEM;
        goto free_scratch;
    }
    for (size_t i = 0; i < b->n_attrs; i++) {
        perm[i] = (uint32_t)i;
        key[i] = b->attrs[i].node;
    }
    e = counting_sort(perm, b->n_attrs, key, b->n_nodes);
    if (e)
        goto free_scratch;
    for (size_t i = 0; i < b->n_attrs; i++) {
        t->attr_key[i] = b->attrs[perm[i]].key;
        t->attr_val[i] = b->attrs[perm[i]].value;
        t->attr_start[b->attrs[perm[i]].node + 1]++;
    }
    for (uint32_t v = 0; v < b->n_nodes; v++)
        t->attr_start[v + 1] += t->attr_start[v];
    for (size_t i = 0; i < b->n_attrs;) {
        uint32_t node = b->attrs[perm[i]].node;
        size_t len = 0;
        for (; i < b->n_attrs && b->attrs[perm[i]].node == node; i++) {
            const pending_attr *a = &b->attrs[perm[i]];
            const char *k = b->strings.data + a->key, *v = b->strings.data + a->value;
            size_t kl = strlen(k), vl = strlen(v);
            if (len + kl + vl + 3 > 64 * 1024) {
                e = WEFT_ELIMIT;
                goto free_scratch;
            }
            if (len)
                line[len++] = ' ';
            memcpy(line + len, k, kl);
            len += kl;
            line[len++] = '=';
            memcpy(line + len, v, vl);
            len += vl;
        }
        e = strbuf_add(&b->strings, line, len, &t->node_attrs[node]);
        if (e)
            goto free_scratch;
    }
free_scratch:
    weft__free(perm);
    weft__free(key);
    weft__free(line);
    return e;
}

/* Sorts links by (src, dst) and merges parallel ones into t. */
static weft_err build_links(weft_topo_builder *b, weft_topo *t, weft_diag *d)
{
    size_t n = b->n_links;
    weft_err e = WEFT_OK;
    uint32_t *perm = weft__malloc((n ? n : 1) * sizeof *perm);
    if (!perm)
        return WEFT_ENOMEM;
    for (size_t i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    /* LSD radix: by destination, then stably by source. */
    e = counting_sort(perm, n, b->link_dst, b->n_nodes);
    if (!e)
        e = counting_sort(perm, n, b->link_src, b->n_nodes);
    if (e)
        goto free_perm;
    size_t alloc = n ? n : 1;
    t->link_src = weft__malloc(alloc * sizeof *t->link_src);
    t->link_dst = weft__malloc(alloc * sizeof *t->link_dst);
    t->link_bw = weft__malloc(alloc * sizeof *t->link_bw);
    t->link_lat = weft__malloc(alloc * sizeof *t->link_lat);
    t->out_start = weft__calloc((size_t)b->n_nodes + 1, sizeof *t->out_start);
    t->in_start = weft__calloc((size_t)b->n_nodes + 1, sizeof *t->in_start);
    if (b->link_shaper)
        t->link_shaper = weft__malloc(alloc * sizeof *t->link_shaper);
    if (!t->link_src || !t->link_dst || !t->link_bw || !t->link_lat || !t->out_start ||
        !t->in_start || (b->link_shaper && !t->link_shaper)) {
        e = WEFT_ENOMEM;
        goto free_perm;
    }
    uint32_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t l = perm[i];
        if (m && t->link_src[m - 1] == b->link_src[l] && t->link_dst[m - 1] == b->link_dst[l]) {
            if (t->link_shaper &&
                (t->link_shaper[m - 1].burst_bytes || b->link_shaper[l].burst_bytes)) {
                e = weft_diag_set(d, WEFT_ETOPO,
                                  "parallel links %s -> %s: a link with a shaper (burst=) "
                                  "cannot have a parallel twin; give them one link",
                                  b->strings.data + b->node_name[b->link_src[l]],
                                  b->strings.data + b->node_name[b->link_dst[l]]);
                goto free_perm;
            }
            if (!weft_rat_eq(t->link_lat[m - 1], b->link_lat[l])) {
                char l1[48], l2[48];
                weft_rat_format_exact(t->link_lat[m - 1], l1, sizeof l1);
                weft_rat_format_exact(b->link_lat[l], l2, sizeof l2);
                e = weft_diag_set(d, WEFT_ETOPO,
                                  "parallel links %s -> %s have different latencies (%sns and "
                                  "%sns); give them one latency or one link",
                                  b->strings.data + b->node_name[b->link_src[l]],
                                  b->strings.data + b->node_name[b->link_dst[l]], l1, l2);
                goto free_perm;
            }
            weft_rat sum;
            if (weft_rat_add(t->link_bw[m - 1], b->link_bw[l], &sum)) {
                e = weft_diag_set(d, WEFT_EOVERFLOW,
                                  "the bandwidths of parallel links %s -> %s overflow",
                                  b->strings.data + b->node_name[b->link_src[l]],
                                  b->strings.data + b->node_name[b->link_dst[l]]);
                goto free_perm;
            }
            t->link_bw[m - 1] = sum;
            continue;
        }
        t->link_src[m] = b->link_src[l];
        t->link_dst[m] = b->link_dst[l];
        t->link_bw[m] = b->link_bw[l];
        t->link_lat[m] = b->link_lat[l];
        if (t->link_shaper)
            t->link_shaper[m] = b->link_shaper[l];
        m++;
    }
    t->n_links = m;
    for (uint32_t l = 0; l < m; l++) {
        t->out_start[t->link_src[l] + 1]++;
        t->in_start[t->link_dst[l] + 1]++;
    }
    for (uint32_t v = 0; v < b->n_nodes; v++) {
        t->out_start[v + 1] += t->out_start[v];
        t->in_start[v + 1] += t->in_start[v];
    }
    t->in_links = weft__malloc((m ? m : 1) * sizeof *t->in_links);
    if (!t->in_links) {
        e = WEFT_ENOMEM;
        goto free_perm;
    }
    /* Links are in source order, so filling by destination keeps each
     * node's in-links sorted by source. */
    uint32_t *cursor = weft__malloc(((size_t)b->n_nodes + 1) * sizeof *cursor);
    if (!cursor) {
        e = WEFT_ENOMEM;
        goto free_perm;
    }
    memcpy(cursor, t->in_start, ((size_t)b->n_nodes + 1) * sizeof *cursor);
    for (uint32_t l = 0; l < m; l++)
        t->in_links[cursor[t->link_dst[l]]++] = l;
    weft__free(cursor);
free_perm:
    weft__free(perm);
    return e;
}

weft_err weft_topo_build(weft_topo_builder *b, weft_topo **out, weft_diag *d)
{
    weft_err e = WEFT_OK;
    weft_topo *t = weft__calloc(1, sizeof *t);
    if (!t) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_builder;
    }
    uint32_t n_ranks = 0;
    for (uint32_t v = 0; v < b->n_nodes; v++)
        n_ranks += b->node_kind[v] == WEFT_NODE_COMPUTE;
    if (n_ranks == 0) {
        e = weft_diag_set(d, WEFT_ETOPO, "the fabric has no compute node (no rank)");
        goto free_topo;
    }
    t->n_nodes = b->n_nodes;
    t->n_ranks = n_ranks;
    t->n_hosts = b->n_hosts;
    e = build_links(b, t, d);
    if (e)
        goto fail;
    e = build_attrs(b, t);
    if (e)
        goto fail;
    t->node_rank = weft__malloc((size_t)b->n_nodes * sizeof *t->node_rank);
    t->rank_node = weft__malloc((size_t)n_ranks * sizeof *t->rank_node);
    if (b->note.data) {
        t->note = b->note.data;
        b->note.data = NULL;
    } else {
        t->note = weft__strdup("");
    }
    if (b->assumed.data) {
        t->assumed = b->assumed.data;
        b->assumed.data = NULL;
    } else {
        t->assumed = weft__strdup("");
    }
    if (!t->node_rank || !t->rank_node || !t->note || !t->assumed) {
        e = WEFT_ENOMEM;
        goto fail;
    }
    uint32_t r = 0;
    for (uint32_t v = 0; v < b->n_nodes; v++) {
        if (b->node_kind[v] == WEFT_NODE_COMPUTE) {
            t->rank_node[r] = v;
            t->node_rank[v] = r++;
        } else {
            t->node_rank[v] = UINT32_MAX;
        }
    }
    /* Move the arrays the built graph shares with the builder (build_attrs
     * has put at least the empty string into the arena). */
    t->strings = b->strings.data;
    b->strings.data = NULL;
    t->node_name = b->node_name;
    b->node_name = NULL;
    t->node_kind = b->node_kind;
    b->node_kind = NULL;
    t->node_host = b->node_host;
    b->node_host = NULL;
    t->host_name = b->host_name;
    b->host_name = NULL;
    t->names = b->names;
    b->names.slots = NULL;
    e = weft__topo_check_ocs(t, d);
    if (e)
        goto free_topo;
    *out = t;
    weft_topo_builder_free(b);
    return WEFT_OK;
fail:
    weft_diag_code(d, e);
free_topo:
    weft_topo_free(t);
free_builder:
    weft_topo_builder_free(b);
    return e;
}
