/* Segment names: the exact text of both kinds, and the parse leftovers.c
 * relies on (each kind read back, nothing else taken for one). */
#include "base/testing.h"
#include "run/transport/shm/segname.h"

static void check_parse(const char *name, weft__seg_kind want, uint64_t want_id)
{
    uint64_t id = 12345;
    weft__seg_kind k = weft__seg_name_parse(name, &id);
    if (k != want)
        fprintf(stderr, "parse '%s': kind %d, expected %d\n", name, k, want);
    CHECK_INT(k, want);
    CHECK_INT(id, want == WEFT__SEG_OTHER ? 12345 : want_id);
}

int main(void)
{
    char b[WEFT__SEG_NAME_MAX];
    weft__seg_name_xport(b, sizeof b, 4194304, 0xfedcba9876543210u);
    CHECK_STR(b, "/weft-4194304-fedcba9876543210");
    check_parse(b + 1, WEFT__SEG_XPORT, 4194304);
    weft__seg_name_xport(b, sizeof b, 7, 0xab);
    CHECK_STR(b, "/weft-7-00000000000000ab");
    check_parse(b + 1, WEFT__SEG_XPORT, 7);
    weft__seg_name_region(b, sizeof b, 0xffffffffffffffffu, 4095, 4294967295u);
    CHECK_STR(b, "/weft-ffffffffffffffff-4095-4294967295");
    CHECK(strlen(b) < WEFT__SEG_NAME_MAX);
    check_parse(b + 1, WEFT__SEG_REGION, 0xffffffffffffffffu);
    /* A tag of decimal digits only is still a tag (16 digits), never a pid. */
    weft__seg_name_region(b, sizeof b, 0x1234, 2, 5);
    CHECK_STR(b, "/weft-0000000000001234-2-5");
    check_parse(b + 1, WEFT__SEG_REGION, 0x1234);
    check_parse("weft-0123-00000000000000ab", WEFT__SEG_OTHER, 0); /* leading zero */
    check_parse("weft--1-2", WEFT__SEG_OTHER, 0);                  /* no digits */
    check_parse("weft-12345678901-0", WEFT__SEG_OTHER, 0);         /* 11 digits */
    check_parse("weft-00000000000012AB-1-1", WEFT__SEG_OTHER, 0);  /* upper case */
    check_parse("weft-000000000000001-1-1", WEFT__SEG_OTHER, 0);   /* 15 digits, '0' first */
    check_parse("weft-42", WEFT__SEG_OTHER, 0);                    /* no '-' after */
    check_parse("wefty-42-1", WEFT__SEG_OTHER, 0);
    check_parse("sem.weft-42-1", WEFT__SEG_OTHER, 0);
    return weft_test_done();
}
