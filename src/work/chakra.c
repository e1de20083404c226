/* Chakra execution-trace decoding (see chakra.h). */
#include "work/chakra.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        } else if (f.wire == WEFT_PB_VARINT && (f.num == 7 || f.num == 9 || f.num == 11 ||
                                                f.num == 13 || f.num == 27)) {
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

static int push_dep(weft_ck_node *nd, uint64_t d)
{
    uint64_t *p = realloc(nd->deps, (nd->ndeps + 1) * sizeof *p);
    if (!p)
        return -1;
    nd->deps = p;
    nd->deps[nd->ndeps++] = d;
    return 0;
}

static int decode_node(weft_pb *m, weft_ck_node *nd, char *err, size_t errlen)
{
    weft_pb_field f;
    int rc;
    memset(nd, 0, sizeof *nd);
    nd->comm_src = nd->comm_dst = -1;
    while ((rc = weft_pb_next(m, &f)) == 1) {
        if (f.num == 1 && f.wire == WEFT_PB_VARINT)
            nd->id = f.u;
        else if (f.num == 2 && f.wire == WEFT_PB_LEN)
            text(nd->name, sizeof nd->name, m->buf + f.off, f.len);
        else if (f.num == 3 && f.wire == WEFT_PB_VARINT)
            nd->type = f.u;
        else if (f.num == 7 && f.wire == WEFT_PB_VARINT)
            nd->duration_us = f.u;
        else if ((f.num == 4 || f.num == 5) && f.wire == WEFT_PB_VARINT) {
            if (push_dep(nd, f.u) < 0)
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
                if (push_dep(nd, d) < 0)
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
            if (!strcmp(name, "pg_name") && str[0])
                memcpy(nd->pg_name, str, sizeof str);
            if (!has)
                continue;
            if (!strcmp(name, "comm_type"))
                nd->comm_type = (uint64_t)v;
            else if (!strcmp(name, "comm_size"))
                nd->comm_size = (uint64_t)v;
            else if (!strcmp(name, "num_ops"))
                nd->num_ops = (uint64_t)v;
            else if (!strcmp(name, "tensor_size"))
                nd->tensor_size = (uint64_t)v;
            else if (!strcmp(name, "comm_src"))
                nd->comm_src = v;
            else if (!strcmp(name, "comm_dst"))
                nd->comm_dst = v;
            else if (!strcmp(name, "comm_tag"))
                nd->comm_tag = v;
            else if (!strcmp(name, "is_cpu_op"))
                nd->is_cpu_op = (uint64_t)v;
        }
    }
    if (rc < 0)
        snprintf(err, errlen, "%s", m->err);
    return rc;
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

int weft_ck_decode(const uint8_t *buf, size_t len, weft_ck_trace *t, char *err, size_t errlen)
{
    weft_pb r, m;
    weft_pb_init(&r, buf, len);
    t->nodes = NULL;
    t->n = 0;
    int rc = weft_pb_next_delimited(&r, &m); /* GlobalMetadata */
    if (rc == 0) {
        snprintf(err, errlen, "offset 0: empty trace (no GlobalMetadata message)");
        return -1;
    }
    while (rc == 1 && (rc = weft_pb_next_delimited(&r, &m)) == 1) {
        weft_ck_node *p = realloc(t->nodes, (t->n + 1) * sizeof *p);
        if (!p) {
            snprintf(err, errlen, "out of memory");
            weft_ck_free(t);
            return -1;
        }
        t->nodes = p;
        if (decode_node(&m, &t->nodes[t->n], err, errlen) < 0) {
            free(t->nodes[t->n].deps);
            weft_ck_free(t);
            return -1;
        }
        t->n++;
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s", r.err);
        weft_ck_free(t);
        return -1;
    }
    return 0;
}

void weft_ck_free(weft_ck_trace *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->nodes[i].deps);
    free(t->nodes);
    t->nodes = NULL;
    t->n = 0;
}
