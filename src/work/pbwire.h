/* A minimal protobuf wire-format reader (proto3 encoding, as written by
 * Chakra execution traces: mlcommons/chakra schema/protobuf/et_def.proto).
 * Varints, length-delimited fields, fixed32/fixed64; unknown fields are
 * skipped by their wire type. Every read is bounds-checked: nothing is read
 * past the buffer, and a malformed input gives the byte offset (from the
 * start of the outermost buffer) and the reason in `err`. */
#ifndef WEFT_WORK_PBWIRE_H
#define WEFT_WORK_PBWIRE_H

#include <stddef.h>
#include <stdint.h>

enum { WEFT_PB_VARINT = 0, WEFT_PB_I64 = 1, WEFT_PB_LEN = 2, WEFT_PB_I32 = 5 };

typedef struct weft_pb {
    const uint8_t *buf; /* outermost buffer (offsets are relative to it) */
    size_t pos, end;    /* this reader's window [pos, end) of buf */
    char err[128];      /* set on failure: "offset N: reason" */
} weft_pb;

/* One field. For VARINT/I64/I32 the value is in `u`; for LEN, [off, off+len)
 * of buf holds the bytes. */
typedef struct weft_pb_field {
    uint32_t num, wire;
    uint64_t u;
    size_t off, len;
} weft_pb_field;

void weft_pb_init(weft_pb *r, const uint8_t *buf, size_t len);
/* A reader over a LEN field's bytes (sub-message), sharing the outer buffer. */
void weft_pb_sub(weft_pb *sub, const weft_pb *r, const weft_pb_field *f);
/* Reads one varint at the current position. 0 on success, -1 with err set. */
int weft_pb_varint(weft_pb *r, uint64_t *v);
/* Next field: 1 when one was read, 0 at the window's end, -1 on error.
 * Groups (wire types 3, 4) and types 6, 7 are errors; field number 0 too. */
int weft_pb_next(weft_pb *r, weft_pb_field *f);
/* Next varint-length-delimited message of a stream (Chakra's framing):
 * 1 with *sub over its bytes, 0 at the end, -1 on error. */
int weft_pb_next_delimited(weft_pb *r, weft_pb *sub);

/* Decoding helpers for scalar values carried in `u`. */
static inline int64_t weft_pb_zigzag(uint64_t u)
{
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}
double weft_pb_double(uint64_t u);
float weft_pb_float(uint64_t u);

#endif
