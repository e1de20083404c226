/* Names of the plan IR's enums (collectives, buffers, op kinds) and the
 * reverse lookup of a collective's name. Out-of-range values name "?" so
 * that messages never index past a table. See weft/plan.h. */
#include <string.h>

#include "plan/plan_internal.h"

static const char *const coll_names[WEFT__COLL_COUNT] = {"allgather", "reducescatter", "allreduce",
                                                         "broadcast", "reduce",        "alltoall"};
static const char *const buf_names[WEFT__BUF_COUNT] = {"in", "out", "scratch"};
static const char *const kind_names[WEFT__OP_KIND_COUNT] = {"copy", "reduce", "nop"};
static const char *const compute_names[WEFT__COMPUTE_COUNT] = {
    "none", "hash", "compress", "decompress", "aggregate", "fill"};

const char *weft_coll_name(weft_coll coll)
{
    return (unsigned)coll < WEFT__COLL_COUNT ? coll_names[coll] : "?";
}

bool weft_coll_parse(const char *text, size_t len, weft_coll *out)
{
    for (int c = 0; c < WEFT__COLL_COUNT; c++) {
        if (strlen(coll_names[c]) == len && memcmp(coll_names[c], text, len) == 0) {
            *out = (weft_coll)c;
            return true;
        }
    }
    return false;
}

bool weft_coll_has_root(weft_coll coll)
{
    return coll == WEFT_COLL_BROADCAST || coll == WEFT_COLL_REDUCE;
}

const char *weft_buf_name(weft_buf buf)
{
    return (unsigned)buf < WEFT__BUF_COUNT ? buf_names[buf] : "?";
}

const char *weft_op_kind_name(weft_op_kind kind)
{
    return (unsigned)kind < WEFT__OP_KIND_COUNT ? kind_names[kind] : "?";
}

const char *weft_compute_name(weft_compute c)
{
    return (unsigned)c < WEFT__COMPUTE_COUNT ? compute_names[c] : "?";
}

bool weft_compute_parse(const char *text, size_t len, weft_compute *out)
{
    for (int c = 0; c < WEFT__COMPUTE_COUNT; c++) {
        if (strlen(compute_names[c]) == len && memcmp(compute_names[c], text, len) == 0) {
            *out = (weft_compute)c;
            return true;
        }
    }
    return false;
}
