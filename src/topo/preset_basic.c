/* Abstract fabrics: ring, biring, full, switch, torus, hypercube. Every one
 * takes N (or the dimensions), then bw (default 100 GB/s) and lat (default
 * 0). Ranks are rank0 .. rankN-1, added first, so node id == rank. Each
 * builds in O(nodes + links). */
#include <string.h>

#include "topo/preset_internal.h"

enum { P_SIZE = 0, P_BW = 1, P_LAT = 2 };

#define TORUS_MAX_DIMS 8

/* bw and lat, shared by every preset of this file. */
static weft_err bw_lat(const weft__preset_args *a, weft_rat *bw, weft_rat *lat, weft_diag *d)
{
    weft_err e = weft__preset_bw(a, P_BW, weft_rat_int(100), false, bw, d);
    if (!e)
        e = weft__preset_lat(a, P_LAT, weft_rat_int(0), lat, d);
    return e;
}

/* N (required, >= min), bw and lat. */
static weft_err size_bw_lat(const weft__preset_args *a, uint32_t min, uint32_t *n, weft_rat *bw,
                            weft_rat *lat, weft_diag *d)
{
    weft_err e = weft__preset_need(a, P_SIZE, d);
    if (!e)
        e = weft__preset_uint(a, P_SIZE, 0, min, UINT32_MAX, n, d);
    if (!e)
        e = bw_lat(a, bw, lat, d);
    return e;
}

static weft_err add_ranks(weft_topo_builder *b, uint32_t n)
{
    for (uint32_t r = 0; r < n; r++) {
        weft_err e = weft__preset_node(b, WEFT_NODE_COMPUTE, NULL, NULL, "rank%u", r);
        if (e)
            return e;
    }
    return WEFT_OK;
}

static weft_node_id node(uint32_t v)
{
    weft_node_id n = {v};
    return n;
}

weft_err weft__preset_ring(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    uint32_t n;
    weft_rat bw, lat;
    weft_err e = size_bw_lat(a, 2, &n, &bw, &lat, d);
    if (!e)
        e = weft__preset_check_size(a, n, n, d);
    if (e)
        return e;
    e = add_ranks(b, n);
    for (uint32_t r = 0; !e && r < n; r++)
        e = weft_topo_builder_add_link(b, node(r), node((r + 1) % n), bw, lat);
    return e ? weft__preset_built(a, e, d) : WEFT_OK;
}

weft_err weft__preset_biring(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    uint32_t n;
    weft_rat bw, lat;
    weft_err e = size_bw_lat(a, 2, &n, &bw, &lat, d);
    if (!e)
        e = weft__preset_check_size(a, n, n == 2 ? 2 : 2 * (uint64_t)n, d);
    if (e)
        return e;
    e = add_ranks(b, n);
    /* With two ranks the "next" and "previous" links coincide: one pair. */
    uint32_t pairs = n == 2 ? 1 : n;
    for (uint32_t r = 0; !e && r < pairs; r++)
        e = weft_topo_builder_add_duplex(b, node(r), node((r + 1) % n), bw, lat);
    return e ? weft__preset_built(a, e, d) : WEFT_OK;
}

weft_err weft__preset_full(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    uint32_t n;
    weft_rat bw, lat;
    weft_err e = size_bw_lat(a, 2, &n, &bw, &lat, d);
    if (!e)
        e = weft__preset_check_size(a, n, weft__sat_mul(n, (uint64_t)n - 1), d);
    if (e)
        return e;
    e = add_ranks(b, n);
    for (uint32_t i = 0; !e && i < n; i++) {
        for (uint32_t j = i + 1; !e && j < n; j++)
            e = weft_topo_builder_add_duplex(b, node(i), node(j), bw, lat);
    }
    return e ? weft__preset_built(a, e, d) : WEFT_OK;
}

weft_err weft__preset_switch(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    uint32_t n;
    weft_rat bw, lat;
    weft_err e = size_bw_lat(a, 1, &n, &bw, &lat, d);
    if (!e)
        e = weft__preset_check_size(a, (uint64_t)n + 1, 2 * (uint64_t)n, d);
    if (e)
        return e;
    weft_node_id sw;
    e = add_ranks(b, n);
    if (!e)
        e = weft_topo_builder_add_node(b, "sw0", WEFT_NODE_SWITCH, NULL, &sw);
    for (uint32_t r = 0; !e && r < n; r++)
        e = weft_topo_builder_add_duplex(b, node(r), sw, bw, lat);
    return e ? weft__preset_built(a, e, d) : WEFT_OK;
}

/* Parses "AxBxC" into dims; *count dimensions. */
static weft_err parse_dims(const weft__preset_args *a, uint32_t *dims, unsigned *count,
                           weft_diag *d)
{
    const char *s = a->val[P_SIZE].text;
    size_t len = a->val[P_SIZE].len;
    unsigned k = 0;
    for (size_t i = 0;;) {
        size_t j = i;
        uint64_t v = 0;
        for (; j < len && s[j] >= '0' && s[j] <= '9'; j++) {
            if (v <= UINT32_MAX) /* beyond that it is too big anyway */
                v = v * 10 + (uint64_t)(s[j] - '0');
        }
        if (k == TORUS_MAX_DIMS)
            return weft_diag_set(d, WEFT_EINVAL, "%s: at most %d dimensions", a->spec,
                                 TORUS_MAX_DIMS);
        if (j == i || (j < len && s[j] != 'x'))
            return weft_diag_set(d, WEFT_EINVAL,
                                 "%s: dimension %u must be an integer (dims look like 4x4x4)",
                                 a->spec, k + 1);
        if (v < 2)
            return weft_diag_set(d, WEFT_EINVAL, "%s: dimension %u must be >= 2", a->spec, k + 1);
        if (v > UINT32_MAX)
            return weft_diag_set(d, WEFT_EINVAL, "%s: dimension %u must be <= %u", a->spec, k + 1,
                                 UINT32_MAX);
        dims[k++] = (uint32_t)v;
        if (j == len)
            break;
        i = j + 1;
    }
    *count = k;
    return WEFT_OK;
}

weft_err weft__preset_torus(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    uint32_t dims[TORUS_MAX_DIMS];
    unsigned nd = 0;
    weft_rat bw, lat;
    weft_err e = weft__preset_need(a, P_SIZE, d);
    if (!e)
        e = parse_dims(a, dims, &nd, d);
    if (!e)
        e = bw_lat(a, &bw, &lat, d);
    if (e)
        return e;
    uint64_t n = 1, links = 0;
    for (unsigned k = 0; k < nd; k++)
        n = weft__sat_mul(n, dims[k]);
    for (unsigned k = 0; k < nd; k++)
        links = weft__sat_add(links, weft__sat_mul(n, dims[k] == 2 ? 1 : 2));
    e = weft__preset_check_size(a, n, links, d);
    if (e)
        return e;
    e = add_ranks(b, (uint32_t)n);
    for (uint32_t r = 0; !e && r < n; r++) {
        uint32_t stride = 1;
        for (unsigned k = 0; !e && k < nd; k++) {
            uint32_t c = (r / stride) % dims[k];
            uint32_t next = r - c * stride + ((c + 1) % dims[k]) * stride;
            /* A size-2 dimension has one pair per two ranks: add it once. */
            if (dims[k] > 2 || c == 0)
                e = weft_topo_builder_add_duplex(b, node(r), node(next), bw, lat);
            stride *= dims[k];
        }
    }
    return e ? weft__preset_built(a, e, d) : WEFT_OK;
}

weft_err weft__preset_hypercube(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    uint32_t dim;
    weft_rat bw, lat;
    weft_err e = weft__preset_need(a, P_SIZE, d);
    if (!e)
        e = weft__preset_uint(a, P_SIZE, 0, 1, 20, &dim, d);
    if (!e)
        e = bw_lat(a, &bw, &lat, d);
    if (e)
        return e;
    uint32_t n = UINT32_C(1) << dim;
    e = weft__preset_check_size(a, n, (uint64_t)n * dim, d);
    if (e)
        return e;
    e = add_ranks(b, n);
    for (uint32_t r = 0; !e && r < n; r++) {
        for (unsigned k = 0; !e && k < dim; k++) {
            uint32_t peer = r ^ (UINT32_C(1) << k);
            if (r < peer)
                e = weft_topo_builder_add_duplex(b, node(r), node(peer), bw, lat);
        }
    }
    return e ? weft__preset_built(a, e, d) : WEFT_OK;
}
