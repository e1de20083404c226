/* Chakra execution-trace decoding (mlcommons/chakra schema/protobuf/
 * et_def.proto, package ChakraProtoMsg): one rank's file is a stream of
 * varint-length-delimited messages, a GlobalMetadata first, then Nodes.
 * Only the fields ASTRA-sim uses are kept: Node id=1, name=2, type=3,
 * ctrl_deps=4, data_deps=5, duration_micros=7, attr=10; attributes by name
 * (comm_type, comm_size, num_ops, tensor_size, comm_src, comm_dst,
 * comm_tag, is_cpu_op) with any integer value type (int32/int64/uint32/uint64 varint,
 * sint32/sint64 zigzag, fixed32/fixed64/sfixed32/sfixed64, bool), and
 * pg_name (string_val = 29, the process group ASTRA-sim matches
 * collectives in). Names are kept as printable ASCII (any other byte
 * becomes '?'), cut to WEFT_CK_NAME_MAX bytes. */
#ifndef WEFT_WORK_CHAKRA_H
#define WEFT_WORK_CHAKRA_H

#include <stddef.h>
#include <stdint.h>

/* NodeType enum of et_def.proto */
enum {
    WEFT_CK_INVALID = 0,
    WEFT_CK_METADATA = 1,
    WEFT_CK_MEM_LOAD = 2,
    WEFT_CK_MEM_STORE = 3,
    WEFT_CK_COMP = 4,
    WEFT_CK_SEND = 5,
    WEFT_CK_RECV = 6,
    WEFT_CK_COLL = 7
};
/* CollectiveCommType enum of et_def.proto */
enum {
    WEFT_CK_ALL_REDUCE = 0,
    WEFT_CK_REDUCE = 1,
    WEFT_CK_ALL_GATHER = 2,
    WEFT_CK_GATHER = 3,
    WEFT_CK_SCATTER = 4,
    WEFT_CK_BROADCAST = 5,
    WEFT_CK_ALL_TO_ALL = 6,
    WEFT_CK_REDUCE_SCATTER = 7,
    WEFT_CK_REDUCE_SCATTER_BLOCK = 8,
    WEFT_CK_BARRIER = 9
};

#define WEFT_CK_NAME_MAX 47

/* At most this many nodes per rank's trace. A node costs about 40 bytes
 * decoded and about 100 more while a run holds it (chakra_run.c's per-node
 * arrays and events), so 2^24 nodes bound one rank's memory near 2.5 GiB;
 * Chakra's PyTorch converter writes one node per operator, and a training
 * step's trace has some 10^4 to 10^6 of them per rank, well inside. */
#define WEFT_CK_NODES_MAX ((size_t)1 << 24)

/* A node's attributes (AttributeProto entries of et_def.proto). Nodes
 * without any share record 0 of weft_ck_trace.attrs, which holds the
 * defaults: everything 0, comm_src and comm_dst -1, pg_name "". */
typedef struct weft_ck_attrs {
    uint64_t comm_type, comm_size, num_ops, tensor_size;
    int64_t comm_src, comm_dst, comm_tag;
    uint32_t pg_name;   /* attribute pg_name: offset in weft_ck_trace.strs */
    uint32_t is_cpu_op; /* attribute is_cpu_op: runs on the host CPU */
} weft_ck_attrs;

/* One node: 40 bytes whatever it holds. Its name, deps and attributes
 * live in the trace's shared arrays, each sized by what the file holds,
 * so a trace takes memory in proportion to its bytes (a few tens of bytes
 * per byte at worst: a node is framed in at least 3 bytes, a dep at least
 * 1, an attribute weft keeps at least 13). */
typedef struct weft_ck_node {
    uint64_t id, type, duration_us;
    uint32_t name; /* Node.name: offset in weft_ck_trace.strs ("" at 0) */
    uint32_t dep;  /* its deps, data then ctrl: deps[dep .. dep + ndeps) */
    uint32_t ndeps;
    uint32_t attr; /* index in weft_ck_trace.attrs; 0 when it has none */
} weft_ck_node;

typedef struct weft_ck_trace {
    weft_ck_node *nodes;
    size_t n;
    uint64_t *deps;       /* every node's deps, node after node */
    weft_ck_attrs *attrs; /* attrs[0]: the defaults */
    char *strs;           /* NUL-terminated names; strs[0] is "" */
    size_t ndeps, nattrs, nstrs, capdeps, capattrs, capstrs;
} weft_ck_trace;

static inline const char *weft_ck_name(const weft_ck_trace *t, const weft_ck_node *nd)
{
    return t->strs + nd->name;
}
static inline const weft_ck_attrs *weft_ck_attr(const weft_ck_trace *t, const weft_ck_node *nd)
{
    return &t->attrs[nd->attr];
}
static inline const char *weft_ck_pg_name(const weft_ck_trace *t, const weft_ck_node *nd)
{
    return t->strs + t->attrs[nd->attr].pg_name;
}

/* Decodes one rank's trace. 0 on success; -1 with err ("offset N: why")
 * on a malformed file. A first pass over the framing, which allocates
 * nothing, refuses an empty Node message (no id, no type: et_def.proto
 * defaults every field, so it says nothing; Chakra's converters never
 * write one) and more than WEFT_CK_NODES_MAX nodes, naming the node's
 * index and offset; then the nodes are decoded into arrays sized once.
 * O(len) time; memory O(len). *t is left empty on failure. */
int weft_ck_decode(const uint8_t *buf, size_t len, weft_ck_trace *t, char *err, size_t errlen);
void weft_ck_free(weft_ck_trace *t);

#endif
