/* The protobuf wire reader on hand-crafted bytes: every wire type, zigzag,
 * doubles and floats, unknown fields skipped, nested messages, the
 * delimited stream framing of Chakra traces, and every malformed case with
 * its exact message. */
#include <string.h>

#include "base/testing.h"
#include "work/pbwire.h"

static void test_wire_types(void)
{
    /* field 1 varint 150 (08 96 01); field 2 fixed64 double 1.5;
     * field 3 fixed32 float 2.0; field 4 LEN "hi"; field 5 sint64 -3 (zigzag 5). */
    static const uint8_t b[] = {0x08, 0x96, 0x01, 0x11, 0,    0,    0, 0,   0,   0,    0xf8, 0x3f,
                                0x1d, 0,    0,    0,    0x40, 0x22, 2, 'h', 'i', 0x28, 0x05};
    weft_pb r;
    weft_pb_field f;
    weft_pb_init(&r, b, sizeof b);
    CHECK_INT(weft_pb_next(&r, &f), 1);
    CHECK_INT(f.num, 1);
    CHECK_INT(f.wire, WEFT_PB_VARINT);
    CHECK_INT(f.u, 150);
    CHECK_INT(weft_pb_next(&r, &f), 1);
    CHECK_INT(f.num, 2);
    CHECK(weft_pb_double(f.u) == 1.5);
    CHECK_INT(weft_pb_next(&r, &f), 1);
    CHECK_INT(f.num, 3);
    CHECK(weft_pb_float(f.u) == 2.0f);
    CHECK_INT(weft_pb_next(&r, &f), 1);
    CHECK_INT(f.num, 4);
    CHECK_INT(f.len, 2);
    CHECK(memcmp(b + f.off, "hi", 2) == 0);
    CHECK_INT(weft_pb_next(&r, &f), 1);
    CHECK_INT(weft_pb_zigzag(f.u), -3);
    CHECK_INT(weft_pb_next(&r, &f), 0);
}

static void test_max_varint_and_nested(void)
{
    /* field 1 = UINT64_MAX (10 bytes); field 7 nested { field 1 = 1 }. */
    static const uint8_t b[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                0xff, 0xff, 0x01, 0x3a, 0x02, 0x08, 0x01};
    weft_pb r, s;
    weft_pb_field f;
    weft_pb_init(&r, b, sizeof b);
    CHECK_INT(weft_pb_next(&r, &f), 1);
    CHECK(f.u == UINT64_MAX);
    CHECK_INT(weft_pb_next(&r, &f), 1);
    CHECK_INT(f.num, 7);
    weft_pb_sub(&s, &r, &f);
    CHECK_INT(weft_pb_next(&s, &f), 1);
    CHECK_INT(f.num, 1);
    CHECK_INT(f.u, 1);
    CHECK_INT(weft_pb_next(&s, &f), 0);
    CHECK_INT(weft_pb_next(&r, &f), 0);
}

static void test_delimited_stream(void)
{
    /* two messages: {1: 5} and {} */
    static const uint8_t b[] = {0x02, 0x08, 0x05, 0x00};
    weft_pb r, s;
    weft_pb_field f;
    weft_pb_init(&r, b, sizeof b);
    CHECK_INT(weft_pb_next_delimited(&r, &s), 1);
    CHECK_INT(weft_pb_next(&s, &f), 1);
    CHECK_INT(f.u, 5);
    CHECK_INT(weft_pb_next_delimited(&r, &s), 1);
    CHECK_INT(weft_pb_next(&s, &f), 0);
    CHECK_INT(weft_pb_next_delimited(&r, &s), 0);
}

static void expect_err(const uint8_t *b, size_t n, const char *msg)
{
    weft_pb r;
    weft_pb_field f;
    weft_pb_init(&r, b, n);
    int rc;
    while ((rc = weft_pb_next(&r, &f)) == 1) {
    }
    CHECK_INT(rc, -1);
    CHECK_STR(r.err, msg);
}

static void test_malformed(void)
{
    static const uint8_t trunc_varint[] = {0x08, 0x01, 0x08, 0x80};
    expect_err(trunc_varint, sizeof trunc_varint, "offset 3: truncated varint");
    static const uint8_t long_varint[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
                                          0xff, 0xff, 0xff, 0xff, 0x02};
    expect_err(long_varint, sizeof long_varint, "offset 1: varint longer than 64 bits");
    static const uint8_t f64[] = {0x09, 1, 2, 3};
    expect_err(f64, sizeof f64, "offset 0: truncated fixed64 field");
    static const uint8_t f32[] = {0x08, 0x00, 0x0d, 1, 2, 3};
    expect_err(f32, sizeof f32, "offset 2: truncated fixed32 field");
    static const uint8_t len[] = {0x12, 0x05, 'a', 'b'};
    expect_err(len, sizeof len, "offset 0: length-delimited field runs past the end");
    static const uint8_t group[] = {0x0b};
    expect_err(group, sizeof group, "offset 0: unsupported wire type 3");
    static const uint8_t zero[] = {0x00, 0x01};
    expect_err(zero, sizeof zero, "offset 0: invalid field number");

    /* a sub-reader never reads past its window: the nested message claims
     * 3 bytes but its window is 1 byte */
    static const uint8_t nest[] = {0x0a, 0x01, 0x12, 0x03, 0x00};
    weft_pb r, s;
    weft_pb_field f;
    weft_pb_init(&r, nest, sizeof nest);
    CHECK_INT(weft_pb_next(&r, &f), 1);
    weft_pb_sub(&s, &r, &f);
    CHECK_INT(weft_pb_next(&s, &f), -1);
    CHECK_STR(s.err, "offset 3: truncated varint");

    static const uint8_t stream[] = {0x02, 0x08, 0x05, 0x04, 0x08};
    weft_pb_init(&r, stream, sizeof stream);
    CHECK_INT(weft_pb_next_delimited(&r, &s), 1);
    CHECK_INT(weft_pb_next_delimited(&r, &s), -1);
    CHECK_STR(r.err, "offset 3: message runs past the end of the file");
}

int main(void)
{
    test_wire_types();
    test_max_varint_and_nested();
    test_delimited_stream();
    test_malformed();
    return weft_test_done();
}
