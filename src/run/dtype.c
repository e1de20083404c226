/* Names and sizes of element types and reduction operators. */
#include <stdint.h>
#include <string.h>

#include "run/half.h"
#include "weft/comm.h"

static const struct {
    const char *name;
    const char *alias;
    size_t size;
} dtypes[WEFT__DTYPE_COUNT] = {
    [WEFT_INT8] = {"int8", NULL, 1},     [WEFT_UINT8] = {"uint8", NULL, 1},
    [WEFT_INT16] = {"int16", NULL, 2},   [WEFT_UINT16] = {"uint16", NULL, 2},
    [WEFT_INT32] = {"int32", NULL, 4},   [WEFT_UINT32] = {"uint32", NULL, 4},
    [WEFT_INT64] = {"int64", NULL, 8},   [WEFT_UINT64] = {"uint64", NULL, 8},
    [WEFT_HALF] = {"half", "fp16", 2},   [WEFT_BFLOAT16] = {"bfloat16", "bf16", 2},
    [WEFT_FLOAT] = {"float", "fp32", 4}, [WEFT_DOUBLE] = {"double", "fp64", 8},
};

static const char *const redops[WEFT__REDOP_COUNT] = {
    [WEFT_SUM] = "sum", [WEFT_PROD] = "prod", [WEFT_MIN] = "min", [WEFT_MAX] = "max"};

size_t weft_dtype_size(weft_dtype t)
{
    return (unsigned)t < WEFT__DTYPE_COUNT ? dtypes[t].size : 0;
}

const char *weft_dtype_name(weft_dtype t)
{
    return (unsigned)t < WEFT__DTYPE_COUNT ? dtypes[t].name : "?";
}

bool weft_dtype_parse(const char *text, weft_dtype *out)
{
    for (unsigned i = 0; i < WEFT__DTYPE_COUNT; i++) {
        if (strcmp(text, dtypes[i].name) == 0 ||
            (dtypes[i].alias && strcmp(text, dtypes[i].alias) == 0)) {
            *out = (weft_dtype)i;
            return true;
        }
    }
    return false;
}

const char *weft_redop_name(weft_redop op)
{
    return (unsigned)op < WEFT__REDOP_COUNT ? redops[op] : "?";
}

bool weft_redop_parse(const char *text, weft_redop *out)
{
    for (unsigned i = 0; i < WEFT__REDOP_COUNT; i++) {
        if (strcmp(text, redops[i]) == 0) {
            *out = (weft_redop)i;
            return true;
        }
    }
    return false;
}

double weft_dtype_load(weft_dtype t, const void *buf, size_t i)
{
    const unsigned char *p = (const unsigned char *)buf + i * weft_dtype_size(t);
    union {
        int8_t i8;
        uint8_t u8;
        int16_t i16;
        uint16_t u16;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
        float f;
        double d;
    } v;
    memcpy(&v, p, weft_dtype_size(t));
    switch (t) {
    case WEFT_INT8:
        return v.i8;
    case WEFT_UINT8:
        return v.u8;
    case WEFT_INT16:
        return v.i16;
    case WEFT_UINT16:
        return v.u16;
    case WEFT_INT32:
        return v.i32;
    case WEFT_UINT32:
        return v.u32;
    case WEFT_INT64:
        return (double)v.i64;
    case WEFT_UINT64:
        return (double)v.u64;
    case WEFT_HALF:
        return weft__half_to_float(v.u16);
    case WEFT_BFLOAT16:
        return weft__bf16_to_float(v.u16);
    case WEFT_FLOAT:
        return v.f;
    case WEFT_DOUBLE:
        return v.d;
    default:
        return 0;
    }
}

void weft_dtype_store(weft_dtype t, void *buf, size_t i, double v)
{
    unsigned char *p = (unsigned char *)buf + i * weft_dtype_size(t);
    uint64_t bits = (uint64_t)(int64_t)(t == WEFT_FLOAT || t == WEFT_DOUBLE ? 0 : v);
    if (t == WEFT_UINT64 && v >= 9223372036854775808.0)
        bits = (uint64_t)v;
    uint16_t h;
    float f;
    switch (t) {
    case WEFT_INT8:
    case WEFT_UINT8:
        *p = (uint8_t)bits;
        break;
    case WEFT_INT16:
    case WEFT_UINT16:
        h = (uint16_t)bits;
        memcpy(p, &h, 2);
        break;
    case WEFT_INT32:
    case WEFT_UINT32: {
        uint32_t w = (uint32_t)bits;
        memcpy(p, &w, 4);
        break;
    }
    case WEFT_INT64:
    case WEFT_UINT64:
        memcpy(p, &bits, 8);
        break;
    case WEFT_HALF:
        h = weft__float_to_half((float)v);
        memcpy(p, &h, 2);
        break;
    case WEFT_BFLOAT16:
        h = weft__float_to_bf16((float)v);
        memcpy(p, &h, 2);
        break;
    case WEFT_FLOAT:
        f = (float)v;
        memcpy(p, &f, 4);
        break;
    case WEFT_DOUBLE:
        memcpy(p, &v, 8);
        break;
    default:
        break;
    }
}
