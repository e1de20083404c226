/* The layout of a plan, shared by the files of the plan module (plan.c
 * builds and edits it; plan_text.c, plan_json.c, verify.c and exec.c read
 * it). Nothing outside src/plan includes this header.
 *
 * Ops are an array of weft_op. Deps of op i are deps[dep_start[i] ..
 * dep_start[i] + dep_count[i]); ranges of different ops never overlap but
 * need not be in op order (set_deps appends a fresh range). Route paths
 * live in one table the same way (path_start/path_count, allocated on the
 * first path); a path's nodes are name ids in path_nodes, names interned
 * once in `names`.
 */
#ifndef WEFT_PLAN_INTERNAL_H
#define WEFT_PLAN_INTERNAL_H

#include "base/name_index.h"
#include "weft/plan.h"
#include "weft/traffic.h"

typedef struct weft__plan_path {
    weft_rat share;
    uint32_t node_start; /* into path_nodes */
    uint32_t nnodes;
    uint32_t epoch; /* WEFT_PLAN_NO_EPOCH unless set */
} weft__plan_path;

/* A circuit: name ids of the OCS and its two ports. */
typedef struct weft__plan_circuit {
    uint32_t epoch, ocs, from, to;
} weft__plan_circuit;

struct weft_plan {
    weft_plan_info info;
    uint32_t nin, nout; /* slots per rank of in and out */
    uint32_t nops;
    uint32_t max_ops; /* weft_plan_limit_ops; 0 means WEFT_PLAN_MAX_OPS */
    size_t op_cap;
    weft_op *ops;
    uint64_t *dep_start;
    uint32_t *dep_count;
    uint32_t *deps;
    size_t ndeps, dep_cap;
    uint32_t *path_start, *path_count; /* NULL until a path is added */
    weft__plan_path *paths;
    size_t npaths, path_cap;
    uint32_t *path_nodes;
    size_t path_nodes_len, path_nodes_cap;
    char *names; /* NUL-separated interned node names */
    size_t names_len, names_cap;
    uint32_t *name_off;
    size_t name_off_cap;
    uint32_t nnames;
    weft__name_index name_index; /* name ids by name (base/name_index.h) */
    /* An alltoallv plan's matrix (weft_plan_set_traffic); bytes NULL for a
     * plan of equal chunks. */
    weft_traffic traffic;
    /* A sized plan's bytes per op (weft_plan_set_op_sizes): op_bytes[id]
     * for id < op_bytes_n, at the collective size op_size; NULL otherwise.
     * op_bytes_n is the op count when they were set: ops added or removed
     * later make weft_plan_op_bytes fail rather than guess. */
    uint64_t *op_bytes;
    uint32_t op_bytes_n;
    uint64_t op_size;
    /* Each op's compute (weft_compute; plan.c): NULL until a nop
     * gets one, then op_cap entries, 0 (none) for every other op. */
    uint8_t *compute;
    /* weft_plan_set_step_forward: 0, or the bytes of one store-and-forward
     * step (NCCL's tree with Simple). */
    uint64_t step_forward;
    double step_gbps;
    /* weft_plan_set_whole_messages: its messages move whole. */
    bool whole;
    /* Circuit configurations (plan_circuit.c), in order of addition. */
    weft__plan_circuit *circuits;
    size_t ncircuits, circuit_cap;
};

/* The most chunks one MSCCL step moves: msccl-executor-nccl
 * src/misc/msccl/msccl_parser.cc refuses a step whose cnt is not below
 * MSCCL_MAX_COUNT (72, src/include/msccl/msccl_struct.h; the same in
 * Microsoft MSCCL). The export cuts larger ops into steps of at most this
 * (msccl_export.c), the padded layout its runs (msccl_pad.c). */
#define WEFT__MSCCL_MAX_CNT 71u

/* The bytes of chunk id `chunk` of an alltoall plan of C chunks per block
 * under matrix t: block (s, d) = chunk / C of b = t(s, d) bytes is cut into
 * C chunks, the first b mod C of them one byte larger (layout.c, with the
 * collective's other semantics). */
uint64_t weft__traffic_chunk_bytes(const weft_traffic *t, uint32_t c, uint64_t chunk);

/* The deps of op i (NULL when the plan has no deps at all, so that no
 * arithmetic is done on a null pointer). */
static inline const uint32_t *weft__plan_deps(const weft_plan *p, uint32_t i)
{
    return p->deps ? p->deps + p->dep_start[i] : NULL;
}

/* One topological order of p's ops (deps first) into order[0 .. nops).
 * WEFT_EVERIFY when a dep names no op (d says which) or the deps form a
 * cycle (d says so; *stuck, if not NULL, receives an op that is on the cycle
 * or waits for it). O(ops + deps). */
weft_err weft__plan_topo_order(const weft_plan *p, uint32_t *order, uint32_t *stuck, weft_diag *d);

/* The interned name with id `name`. */
const char *weft__plan_name(const weft_plan *p, uint32_t name);
/* v in the fewest significant digits (at most 17) that strtod reads back
 * as v: the `forward` rate of the text and JSON forms. */
void weft__plan_format_double(double v, char *buf, size_t n);

/* Interns s[0..len) in p's name table and writes its name id; an existing
 * name keeps its id. WEFT_ENOMEM, or WEFT_ELIMIT past 2^32 bytes of names
 * (plan_names.c). */
weft_err weft__plan_name_intern(weft_plan *p, const char *s, size_t len, uint32_t *out);

/* True for a name a route or circuit may use: 1 .. WEFT_TOPO_NAME_MAX
 * bytes, no blank, control byte, ',' or '#' (plan_route.c). */
bool weft__plan_node_name_ok(const char *s);

#endif
