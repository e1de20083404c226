/* libFuzzer target for the .topo parser and writer.
 *
 * Any input must parse or fail cleanly (ASan and UBSan watch for the rest).
 * When it parses, the fabric is written to memory, parsed again, and must be
 * the same graph: the writer emits only what the parser reads back, and the
 * parser reads it back exactly. Any difference aborts, which libFuzzer
 * reports as a crash. See docs/fuzzing.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "weft/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_topo_parse((const char *)data, size, "fuzz.topo", &t, &d);
    if (e) {
        /* A failure must say where and why, and return nothing. */
        if (t || d.err != e || d.msg[0] == '\0')
            abort();
        return 0;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        abort();
    e = weft_topo_write(t, f);
    if (fclose(f) != 0 || e) {
        fprintf(stderr, "weft_topo_write failed: %s\n", weft_strerror(e));
        abort();
    }
    weft_topo *back = NULL;
    e = weft_topo_parse(text, len, "written.topo", &back, &d);
    if (e) {
        fprintf(stderr, "the written text does not parse: %s\n%s", d.msg, text);
        abort();
    }
    if (!weft_topo_equal(t, back)) {
        fprintf(stderr, "the written text parses to another graph:\n%s", text);
        abort();
    }
    weft_topo_free(back);
    weft_topo_free(t);
    free(text);
    return 0;
}
