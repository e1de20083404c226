/* Names and sizes of element types and reduction operators. */
#include <string.h>

#include "weft/comm.h"

static const struct {
    const char *name;
    const char *alias;
    size_t size;
} dtypes[WEFT__DTYPE_COUNT] = {
    [WEFT_INT8] = {"int8", NULL, 1},       [WEFT_UINT8] = {"uint8", NULL, 1},
    [WEFT_INT16] = {"int16", NULL, 2},     [WEFT_UINT16] = {"uint16", NULL, 2},
    [WEFT_INT32] = {"int32", NULL, 4},     [WEFT_UINT32] = {"uint32", NULL, 4},
    [WEFT_INT64] = {"int64", NULL, 8},     [WEFT_UINT64] = {"uint64", NULL, 8},
    [WEFT_HALF] = {"half", "fp16", 2},     [WEFT_BFLOAT16] = {"bfloat16", "bf16", 2},
    [WEFT_FLOAT] = {"float", "fp32", 4},   [WEFT_DOUBLE] = {"double", "fp64", 8},
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
