/* Protobuf wire-format reader (see pbwire.h). Wire format per
 * https://protobuf.dev/programming-guides/encoding/ . */
#include "work/pbwire.h"

#include <stdio.h>
#include <string.h>

static int fail(weft_pb *r, size_t off, const char *why)
{
    snprintf(r->err, sizeof r->err, "offset %zu: %s", off, why);
    return -1;
}

void weft_pb_init(weft_pb *r, const uint8_t *buf, size_t len)
{
    r->buf = buf;
    r->pos = 0;
    r->end = len;
    r->err[0] = '\0';
}

void weft_pb_sub(weft_pb *sub, const weft_pb *r, const weft_pb_field *f)
{
    sub->buf = r->buf;
    sub->pos = f->off;
    sub->end = f->off + f->len;
    sub->err[0] = '\0';
}

int weft_pb_varint(weft_pb *r, uint64_t *v)
{
    size_t start = r->pos;
    uint64_t x = 0;
    for (unsigned i = 0; i < 10; i++) {
        if (r->pos >= r->end)
            return fail(r, start, "truncated varint");
        uint8_t b = r->buf[r->pos++];
        if (i == 9 && b > 1)
            return fail(r, start, "varint longer than 64 bits");
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return fail(r, start, "varint longer than 10 bytes");
}

static int fixed(weft_pb *r, size_t n, uint64_t *v, size_t start)
{
    if (r->end - r->pos < n)
        return fail(r, start, n == 4 ? "truncated fixed32 field" : "truncated fixed64 field");
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++)
        x |= (uint64_t)r->buf[r->pos + i] << (8 * i);
    r->pos += n;
    *v = x;
    return 0;
}

int weft_pb_next(weft_pb *r, weft_pb_field *f)
{
    if (r->pos >= r->end)
        return 0;
    size_t start = r->pos;
    uint64_t key;
    if (weft_pb_varint(r, &key) < 0)
        return -1;
    uint64_t num = key >> 3;
    if (num == 0 || num > 0x1fffffff)
        return fail(r, start, "invalid field number");
    f->num = (uint32_t)num;
    f->wire = (uint32_t)(key & 7);
    f->u = 0;
    f->off = f->len = 0;
    switch (f->wire) {
    case WEFT_PB_VARINT:
        return weft_pb_varint(r, &f->u) < 0 ? -1 : 1;
    case WEFT_PB_I64:
        return fixed(r, 8, &f->u, start) < 0 ? -1 : 1;
    case WEFT_PB_I32:
        return fixed(r, 4, &f->u, start) < 0 ? -1 : 1;
    case WEFT_PB_LEN: {
        uint64_t n;
        if (weft_pb_varint(r, &n) < 0)
            return -1;
        if (n > r->end - r->pos)
            return fail(r, start, "length-delimited field runs past the end");
        f->off = r->pos;
        f->len = (size_t)n;
        r->pos += (size_t)n;
        return 1;
    }
    default: {
        char why[64];
        snprintf(why, sizeof why, "unsupported wire type %u", f->wire);
        return fail(r, start, why);
    }
    }
}

int weft_pb_next_delimited(weft_pb *r, weft_pb *sub)
{
    if (r->pos >= r->end)
        return 0;
    size_t start = r->pos;
    uint64_t n;
    if (weft_pb_varint(r, &n) < 0)
        return -1;
    if (n > r->end - r->pos)
        return fail(r, start, "message runs past the end of the file");
    sub->buf = r->buf;
    sub->pos = r->pos;
    sub->end = r->pos + (size_t)n;
    sub->err[0] = '\0';
    r->pos += (size_t)n;
    return 1;
}

double weft_pb_double(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

float weft_pb_float(uint64_t u)
{
    uint32_t w = (uint32_t)u;
    float x;
    memcpy(&x, &w, sizeof x);
    return x;
}
