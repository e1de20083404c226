/* Chakra execution-trace decoding (see chakra.h). */
#include "work/chakra.h"

#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "work/pbwire.h"

/* Copies a string field as printable ASCII, cut to cap - 1 bytes. */
static void text(char *dst, size_t cap, const uint8_t *src, size_t len)
{
    size_t n = len < cap - 1 ? len : cap - 1;
    for (size_t i = 0; i < n; i++)
        dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? (char)src[i] : '?';
    dst[n] = '\0';
}

/* An attribute's integer value, whatever integer type it was written as;
 * a string value (string_val = 29) goes to str. */
static int attr_int(weft_pb *a, char *name, size_t namecap, int64_t *v, int *has, char *str,
                    size_t strcap)
{
    weft_pb_field f;
    int rc;
    name[0] = '\0';
    str[0] = '\0';
    *has = 0;
    while ((rc = weft_pb_next(a, &f)) == 1) {
        if (f.num == 1 && f.wire == WEFT_PB_LEN) {
            size_t n = f.len < namecap - 1 ? f.len : namecap - 1;
            memcpy(name, a->buf + f.off, n);
            name[n] = '\0';
        } else if (f.num == 29 && f.wire == WEFT_PB_LEN) {
            text(str, strcap, a->buf + f.off, f.len);
        } else if (f.wire == WEFT_PB_VARINT &&
                   (f.num == 7 || f.num == 9 || f.num == 11 || f.num == 13 || f.num == 27)) {
            *v = (int64_t)f.u;
            *has = 1;
        } else if (f.wire == WEFT_PB_VARINT && (f.num == 15 || f.num == 17)) {
            *v = weft_pb_zigzag(f.u);
            *has = 1;
        } else if (f.wire == WEFT_PB_I32 && (f.num == 19 || f.num == 23)) {
            *v = f.num == 23 ? (int64_t)(int32_t)(uint32_t)f.u : (int64_t)f.u;
            *has = 1;
        } else if (f.wire == WEFT_PB_I64 && (f.num == 21 || f.num == 25)) {
            *v = (int64_t)f.u;
            *has = 1;
        }
    }
    return rc;
}

/* Appends a string to t->strs as printable ASCII, cut to WEFT_CK_NAME_MAX
 * bytes; *off gets its offset (0, the shared "", for an empty one). */
static int add_str(weft_ck_trace *t, const uint8_t *src, size_t len, uint32_t *off)
{
    size_t n = len < WEFT_CK_NAME_MAX ? len : WEFT_CK_NAME_MAX;
    if (!n) {
        *off = 0;
        return 0;
    }
    if (weft__grow((void **)&t->strs, &t->capstrs, t->nstrs + n + 1, 1))
        return -1;
    *off = (uint32_t)t->nstrs;
    text(t->strs + t->nstrs, n + 1, src, n);
    t->nstrs += n + 1;
    return 0;
}

static int push_dep(weft_ck_trace *t, weft_ck_node *nd, uint64_t d)
{
    if (weft__grow((void **)&t->deps, &t->capdeps, t->ndeps + 1, sizeof *t->deps))
        return -1;
    t->deps[t->ndeps++] = d;
    nd->ndeps++;
    return 0;
}

/* The node's own attribute record, made from the defaults when it has none. */
static weft_ck_attrs *own_attrs(weft_ck_trace *t, weft_ck_node *nd)
{
    if (nd->attr)
        return &t->attrs[nd->attr];
    if (weft__grow((void **)&t->attrs, &t->capattrs, t->nattrs + 1, sizeof *t->attrs))
        return NULL;
    t->attrs[t->nattrs] = t->attrs[0];
    nd->attr = (uint32_t)t->nattrs++;
    return &t->attrs[nd->attr];
}

static int decode_node(weft_pb *m, weft_ck_trace *t, weft_ck_node *nd, char *err, size_t errlen)
{
    weft_pb_field f;
    int rc;
    memset(nd, 0, sizeof *nd);
    nd->dep = (uint32_t)t->ndeps;
    while ((rc = weft_pb_next(m, &f)) == 1) {
        if (f.num == 1 && f.wire == WEFT_PB_VARINT)
            nd->id = f.u;
        else if (f.num == 2 && f.wire == WEFT_PB_LEN) {
            if (add_str(t, m->buf + f.off, f.len, &nd->name) < 0)
                goto oom;
        } else if (f.num == 3 && f.wire == WEFT_PB_VARINT)
            nd->type = f.u;
        else if (f.num == 7 && f.wire == WEFT_PB_VARINT)
            nd->duration_us = f.u;
        else if ((f.num == 4 || f.num == 5) && f.wire == WEFT_PB_VARINT) {
            if (push_dep(t, nd, f.u) < 0)
                goto oom;
        } else if ((f.num == 4 || f.num == 5) && f.wire == WEFT_PB_LEN) { /* packed */
            weft_pb p;
            weft_pb_sub(&p, m, &f);
            while (p.pos < p.end) {
                uint64_t d;
                if (weft_pb_varint(&p, &d) < 0) {
                    snprintf(err, errlen, "%s", p.err);
                    return -1;
                }
                if (push_dep(t, nd, d) < 0)
                    goto oom;
            }
        } else if (f.num == 10 && f.wire == WEFT_PB_LEN) {
            weft_pb a;
            char name[32], str[WEFT_CK_NAME_MAX + 1];
            int64_t v = 0;
            int has;
            weft_pb_sub(&a, m, &f);
            if (attr_int(&a, name, sizeof name, &v, &has, str, sizeof str) < 0) {
                snprintf(err, errlen, "%s", a.err);
                return -1;
            }
            if (!strcmp(name, "pg_name") && str[0]) {
                weft_ck_attrs *at = own_attrs(t, nd);
                if (!at || add_str(t, (const uint8_t *)str, strlen(str), &at->pg_name) < 0)
                    goto oom;
            }
            if (!has)
                continue;
            static const char *const known[] = {"comm_type", "comm_size", "num_ops",  "tensor_size",
                                                "comm_src",  "comm_dst",  "comm_tag", "is_cpu_op"};
            size_t k = 0;
            while (k < sizeof known / sizeof *known && strcmp(name, known[k]))
                k++;
            if (k == sizeof known / sizeof *known)
                continue;
            weft_ck_attrs *at = own_attrs(t, nd);
            if (!at)
                goto oom;
            switch (k) {
            case 0:
                at->comm_type = (uint64_t)v;
                break;
            case 1:
                at->comm_size = (uint64_t)v;
                break;
            case 2:
                at->num_ops = (uint64_t)v;
                break;
            case 3:
                at->tensor_size = (uint64_t)v;
                break;
            case 4:
                at->comm_src = v;
                break;
            case 5:
                at->comm_dst = v;
                break;
            case 6:
                at->comm_tag = v;
                break;
            default:
                at->is_cpu_op = v != 0;
                break;
            }
        }
    }
    if (rc < 0)
        snprintf(err, errlen, "%s", m->err);
    return rc;
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* The first pass: checks the framing and counts the nodes, allocating
 * nothing. Refuses an empty Node message and more than WEFT_CK_NODES_MAX
 * nodes, at the node's index and offset. */
static int count_nodes(const uint8_t *buf, size_t len, size_t *count, char *err, size_t errlen)
{
    weft_pb r, m;
    weft_pb_init(&r, buf, len);
    int rc = weft_pb_next_delimited(&r, &m); /* GlobalMetadata */
    if (rc == 0) {
        snprintf(err, errlen, "offset 0: empty trace (no GlobalMetadata message)");
        return -1;
    }
    size_t n = 0, at = r.pos;
    while (rc == 1 && (rc = weft_pb_next_delimited(&r, &m)) == 1) {
        if (m.pos == m.end) {
            snprintf(err, errlen,
                     "offset %zu: node %zu is an empty message (no id, no type: et_def.proto's "
                     "defaults, which no Chakra converter writes)",
                     at, n);
            return -1;
        }
        if (n == WEFT_CK_NODES_MAX) {
            snprintf(err, errlen,
                     "offset %zu: node %zu: more than %zu nodes, weft's limit per rank", at, n,
                     WEFT_CK_NODES_MAX);
            return -1;
        }
        n++;
        at = r.pos;
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s", r.err);
        return -1;
    }
    *count = n;
    return 0;
}

int weft_ck_decode(const uint8_t *buf, size_t len, weft_ck_trace *t, char *err, size_t errlen)
{
    weft_pb r, m;
    size_t n;
    memset(t, 0, sizeof *t);
    if (len > UINT32_MAX) { /* offsets into strs and deps are 32 bits */
        snprintf(err, errlen, "offset 0: %zu bytes, more than 4 GiB", len);
        return -1;
    }
    if (count_nodes(buf, len, &n, err, errlen) < 0)
        return -1;
    if (!(t->nodes = weft__malloc((n ? n : 1) * sizeof *t->nodes)) ||
        weft__grow((void **)&t->attrs, &t->capattrs, 1, sizeof *t->attrs) ||
        weft__grow((void **)&t->strs, &t->capstrs, 1, 1))
        goto oom;
    t->attrs[0] = (weft_ck_attrs){.comm_src = -1, .comm_dst = -1};
    t->nattrs = 1;
    t->strs[0] = '\0';
    t->nstrs = 1;
    weft_pb_init(&r, buf, len);
    weft_pb_next_delimited(&r, &m); /* GlobalMetadata, checked by count_nodes */
    for (size_t i = 0; i < n; i++) {
        weft_pb_next_delimited(&r, &m);
        if (decode_node(&m, t, &t->nodes[i], err, errlen) < 0) {
            weft_ck_free(t);
            return -1;
        }
        t->n = i + 1;
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
    weft_ck_free(t);
    return -1;
}

void weft_ck_free(weft_ck_trace *t)
{
    weft__free(t->nodes);
    weft__free(t->deps);
    weft__free(t->attrs);
    weft__free(t->strs);
    memset(t, 0, sizeof *t);
}
