/* Every preset is also a file: for a small instance of each (and variants
 * with latencies and fractional bandwidths), weft_topo_write then
 * weft_topo_parse gives an equal graph, and writing that again gives the
 * same bytes (but for the note, which is written as comments). The table must cover every
 * registered preset. */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "weft/topo.h"

static const char *const specs[] = {
    "ring:5",
    "ring:3,bw=2400/7,lat=1.5us",
    "biring:2",
    "biring:6,bw=12.5",
    "full:4,lat=3",
    "switch:3",
    "torus:4x2x3,bw=25",
    "torus:3x3,lat=100ns",
    "hypercube:3",
    "genkautz:10,3,bw=2400/7",
    "circulant:8,1,4,lat=1us",
    "debruijn:2,3",
    "bipartite:6,bw=50",
    "a100",
    "a100:2",
    "h100:2",
    "h100:2,sharp=1",
    "h200",
    "b200:2",
    "mi250:2",
    "dgx1",
    "fattree:4",
    "dragonfly:g=5,gbw=100/3",
    "clos",
    "clos:hosts=3,gpus=4,nics=2,rail=0,leafports=4,oversub=3,lat=1us",
    "clos:hosts=4,gpus=2,nics=2,leafports=2,levels=3,podleaves=2,spines=2,cores=3",
    "mixnet",
    "mixnet:hosts=4,gpus=4,ocsnics=1,nicbw=400Gbps,nvbw=900,reconfig=1.5ms,region=2",
};

/* Writes t into a heap buffer (free with free()); NULL on failure. */
static char *write_text(const weft_topo *t, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return NULL;
    weft_err e = weft_topo_write(t, f);
    if (fclose(f) != 0 || e != WEFT_OK) {
        CHECK_ERR(e, WEFT_OK);
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

static void roundtrip(const char *spec)
{
    weft_diag d;
    weft_diag_clear(&d);
    weft_topo *t = NULL, *back = NULL;
    weft_err e = weft_topo_preset(spec, &t, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        return;
    }
    size_t len = 0, len2 = 0;
    char *text = write_text(t, &len);
    CHECK(text != NULL);
    if (!text)
        goto free_topo;
    e = weft_topo_parse(text, len, spec, &back, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        goto free_text;
    }
    if (!weft_topo_equal(t, back))
        fprintf(stderr, "%s: the parsed text differs from the preset\n", spec);
    CHECK(weft_topo_equal(t, back));
    /* The note is written as leading comments, which the parser skips;
     * the rest is written again byte for byte. */
    size_t body = 0;
    while (body < len && text[body] == '#')
        body += strcspn(text + body, "\n") + 1;
    CHECK(body > 0);
    char *text2 = write_text(back, &len2);
    CHECK(text2 && len2 == len - body && memcmp(text + body, text2, len2) == 0);
    free(text2);
    weft_topo_free(back);
free_text:
    free(text);
free_topo:
    weft_topo_free(t);
}

int main(void)
{
    size_t n = sizeof specs / sizeof specs[0];
    for (size_t i = 0; i < n; i++)
        roundtrip(specs[i]);
    /* Every registered preset has at least one instance above. */
    for (size_t p = 0; p < weft_preset_count(); p++) {
        const char *name = weft_preset_get(p)->name;
        size_t len = strlen(name);
        bool covered = false;
        for (size_t i = 0; i < n; i++)
            covered |= strncmp(specs[i], name, len) == 0 &&
                       (specs[i][len] == ':' || specs[i][len] == '\0');
        if (!covered)
            fprintf(stderr, "preset %s has no round-trip case\n", name);
        CHECK(covered);
    }
    return weft_test_done();
}
