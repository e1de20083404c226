/* libFuzzer target: the traffic matrix reader. Any input must parse or fail
 * with a message and no matrix; a parsed matrix keeps its sum within 64
 * bits (weft_traffic_check) and survives a write/parse round trip. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/traffic.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft_traffic t = {0};
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_traffic_parse((const char *)data, size, "fuzz.tm", &t, &d) != WEFT_OK) {
        if (!d.msg[0] || t.bytes)
            abort();
        return 0;
    }
    if (weft_traffic_check(&t, &d) != WEFT_OK)
        abort();
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f || weft_traffic_write(f, &t, "round trip", &d) != WEFT_OK)
        abort();
    fclose(f);
    weft_traffic u = {0};
    if (weft_traffic_parse(buf, len, "rt.tm", &u, &d) != WEFT_OK || u.ranks != t.ranks ||
        memcmp(u.bytes, t.bytes, (size_t)t.ranks * t.ranks * sizeof *t.bytes) != 0)
        abort();
    free(buf);
    weft_traffic_free(&u);
    weft_traffic_free(&t);
    return 0;
}
