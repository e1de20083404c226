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
 * becomes '?'), cut to the size of their field. */
#ifndef WEFT_WORK_CHAKRA_H
#define WEFT_WORK_CHAKRA_H

#include <stddef.h>
#include <stdint.h>

/* NodeType enum of et_def.proto */
enum {
    WEFT_CK_INVALID = 0, WEFT_CK_METADATA = 1, WEFT_CK_MEM_LOAD = 2, WEFT_CK_MEM_STORE = 3,
    WEFT_CK_COMP = 4, WEFT_CK_SEND = 5, WEFT_CK_RECV = 6, WEFT_CK_COLL = 7
};
/* CollectiveCommType enum of et_def.proto */
enum {
    WEFT_CK_ALL_REDUCE = 0, WEFT_CK_REDUCE = 1, WEFT_CK_ALL_GATHER = 2, WEFT_CK_GATHER = 3,
    WEFT_CK_SCATTER = 4, WEFT_CK_BROADCAST = 5, WEFT_CK_ALL_TO_ALL = 6, WEFT_CK_REDUCE_SCATTER = 7,
    WEFT_CK_REDUCE_SCATTER_BLOCK = 8, WEFT_CK_BARRIER = 9
};

#define WEFT_CK_NAME_MAX 47

typedef struct weft_ck_node {
    char name[WEFT_CK_NAME_MAX + 1];    /* Node.name */
    char pg_name[WEFT_CK_NAME_MAX + 1]; /* attribute pg_name; "" when absent */
    uint64_t id, type, duration_us;
    uint64_t comm_type, comm_size, num_ops, tensor_size;
    int64_t comm_src, comm_dst, comm_tag;
    uint64_t is_cpu_op; /* attribute is_cpu_op: runs on the host CPU */
    uint64_t *deps; /* data deps then ctrl deps */
    size_t ndeps;
} weft_ck_node;

typedef struct weft_ck_trace {
    weft_ck_node *nodes;
    size_t n;
} weft_ck_trace;

/* Decodes one rank's trace. 0 on success; -1 with err ("offset N: why")
 * on a malformed file. */
int weft_ck_decode(const uint8_t *buf, size_t len, weft_ck_trace *t, char *err, size_t errlen);
void weft_ck_free(weft_ck_trace *t);

#endif
