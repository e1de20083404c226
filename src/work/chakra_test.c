/* Chakra trace decoding on hand-encoded traces (et_def.proto field numbers):
 * a compute node and an all-reduce node with packed and unpacked deps and
 * attributes of several integer types; unknown fields skipped; a truncated
 * trace's exact message. */
#include <stdio.h>
#include <string.h>

#include "base/testing.h"
#include "work/chakra.h"

typedef struct buf {
    uint8_t b[512];
    size_t n;
} buf;

static void vput(buf *o, uint64_t v)
{
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        o->b[o->n++] = (uint8_t)(c | (v ? 0x80 : 0));
    } while (v);
}
static void key(buf *o, uint32_t num, uint32_t wire)
{
    vput(o, (uint64_t)num << 3 | wire);
}
static void bytes(buf *o, uint32_t num, const void *p, size_t n)
{
    key(o, num, 2);
    vput(o, n);
    memcpy(o->b + o->n, p, n);
    o->n += n;
}
static void msg(buf *o, const buf *m) /* delimited framing */
{
    vput(o, m->n);
    memcpy(o->b + o->n, m->b, m->n);
    o->n += m->n;
}
static void attr_varint(buf *node, const char *name, uint32_t num, uint64_t v)
{
    buf a = {.n = 0};
    bytes(&a, 1, name, strlen(name));
    key(&a, num, 0);
    vput(&a, v);
    bytes(node, 10, a.b, a.n);
}

static size_t trace(buf *o)
{
    buf meta = {.n = 0}, n0 = {.n = 0}, n1 = {.n = 0};
    o->n = 0;
    bytes(&meta, 1, "0.0.4", 5);
    msg(o, &meta);
    key(&n0, 1, 0), vput(&n0, 0);
    bytes(&n0, 2, "gemm", 4);
    key(&n0, 3, 0), vput(&n0, 4);
    key(&n0, 7, 0), vput(&n0, 250);
    attr_varint(&n0, "num_ops", 13, 1000000);
    key(&n0, 99, 5), n0.b[n0.n++] = 1, n0.b[n0.n++] = 2, n0.b[n0.n++] = 3, n0.b[n0.n++] = 4;
    msg(o, &n0);
    key(&n1, 1, 0), vput(&n1, 1);
    key(&n1, 3, 0), vput(&n1, 7);
    uint8_t packed[] = {0x00};
    bytes(&n1, 5, packed, 1);
    key(&n1, 4, 0), vput(&n1, 0);
    attr_varint(&n1, "comm_type", 9, 0);
    attr_varint(&n1, "comm_size", 13, 1 << 20);
    attr_varint(&n1, "comm_src", 17, 3); /* sint64 -2 */
    msg(o, &n1);
    return o->n;
}

static void test_decode(void)
{
    buf o;
    trace(&o);
    weft_ck_trace t;
    char err[160];
    CHECK_INT(weft_ck_decode(o.b, o.n, &t, err, sizeof err), 0);
    CHECK_INT(t.n, 2);
    CHECK_INT(t.nodes[0].type, WEFT_CK_COMP);
    CHECK_INT(t.nodes[0].duration_us, 250);
    CHECK_INT(weft_ck_attr(&t, &t.nodes[0])->num_ops, 1000000);
    CHECK_INT(t.nodes[0].ndeps, 0);
    CHECK_INT(t.nodes[1].id, 1);
    CHECK_INT(t.nodes[1].type, WEFT_CK_COLL);
    CHECK_INT(weft_ck_attr(&t, &t.nodes[1])->comm_type, WEFT_CK_ALL_REDUCE);
    CHECK_INT(weft_ck_attr(&t, &t.nodes[1])->comm_size, 1 << 20);
    CHECK_INT(weft_ck_attr(&t, &t.nodes[1])->comm_src, -2);
    CHECK_INT(t.nodes[1].ndeps, 2);
    weft_ck_free(&t);
}

static void test_truncated(void)
{
    buf o;
    trace(&o);
    weft_ck_trace t;
    char err[160];
    CHECK_INT(weft_ck_decode(o.b, o.n - 1, &t, err, sizeof err), -1);
    /* 8 bytes of framed metadata, 35 of framed node 0 */
    CHECK_STR(err, "offset 43: message runs past the end of the file");
    CHECK_INT(weft_ck_decode(o.b, 0, &t, err, sizeof err), -1);
    CHECK_STR(err, "offset 0: empty trace (no GlobalMetadata message)");
}

/* ASTRA-sim's microbenchmark traces (tests/fixtures/chakra/README.md): one
 * COMM_COLL_NODE of 1 MiB each, of the collective the file names. */
static void test_astra_examples(void)
{
    static const struct {
        const char *file;
        uint64_t comm_type;
    } ex[] = {{"all_reduce", WEFT_CK_ALL_REDUCE},
              {"all_gather", WEFT_CK_ALL_GATHER},
              {"all_to_all", WEFT_CK_ALL_TO_ALL},
              {"reduce_scatter", WEFT_CK_REDUCE_SCATTER}};
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
        char path[512];
        uint8_t b[256];
        snprintf(path, sizeof path, "%s/tests/fixtures/chakra/%s.0.et", WEFT_SOURCE_DIR,
                 ex[i].file);
        FILE *f = fopen(path, "rb");
        CHECK(f != NULL);
        if (!f)
            continue;
        size_t n = fread(b, 1, sizeof b, f);
        fclose(f);
        weft_ck_trace t;
        char err[160];
        CHECK_INT(weft_ck_decode(b, n, &t, err, sizeof err), 0);
        CHECK_INT(t.n, 1);
        CHECK_INT(t.nodes[0].type, WEFT_CK_COLL);
        CHECK_INT(weft_ck_attr(&t, &t.nodes[0])->comm_type, ex[i].comm_type);
        CHECK_INT(weft_ck_attr(&t, &t.nodes[0])->comm_size, 1048576);
        CHECK_INT(t.nodes[0].ndeps, 0);
        weft_ck_free(&t);
    }
}

int main(void)
{
    test_astra_examples();
    test_decode();
    test_truncated();
    return weft_test_done();
}
