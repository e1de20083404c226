/* Fabrics for the tests: load or parse one, printing why it failed. */
#ifndef WEFT_TOPO_TESTING_TOPO_H
#define WEFT_TOPO_TESTING_TOPO_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/topo.h"

/* The fabric spec names (preset or file), or NULL after printing why. */
static inline weft_topo *weft__test_topo_spec(const char *spec)
{
    weft_topo *t = NULL;
    weft_diag d;
    if (weft_topo_from_spec(spec, NULL, &t, &d)) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        return NULL;
    }
    return t;
}

/* The fabric of .topo text (named "t.topo" in messages), or NULL after
 * printing why. */
static inline weft_topo *weft__test_topo_text(const char *text)
{
    weft_topo *t = NULL;
    weft_diag d;
    if (weft_topo_parse(text, strlen(text), "t.topo", &t, &d)) {
        fprintf(stderr, "parse: %s\n", d.msg);
        return NULL;
    }
    return t;
}

/* Drops the LAT column (the fifth token) of the link and duplex lines of
 * .topo text into strip (as long as text at most); returns strip's length. */
static inline size_t weft__test_strip_lat(const char *text, char *strip)
{
    size_t o = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) + 1 : strlen(line);
        int tok = 0, keep = 1;
        bool is_link = strncmp(line, "link ", 5) == 0 || strncmp(line, "duplex ", 7) == 0;
        for (size_t i = 0; i < n; i++) {
            bool blank = line[i] == ' ' || line[i] == '\t';
            if (is_link && !blank && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t'))
                tok++;
            keep = !(is_link && tok == 5 && line[i] != '\n');
            if (keep)
                strip[o++] = line[i];
        }
        line += n;
    }
    return o;
}

/* Drops the shaper attributes (burst= peak=) of .topo text into strip
 * (as long as text at most); returns strip's length. */
static inline size_t weft__test_strip_shapers(const char *text, char *strip)
{
    size_t o = 0;
    for (const char *p = text; *p;) {
        if (*p == ' ' && (strncmp(p + 1, "burst=", 6) == 0 || strncmp(p + 1, "peak=", 5) == 0)) {
            p++;
            while (*p && *p != ' ' && *p != '\n')
                p++;
            continue;
        }
        strip[o++] = *p++;
    }
    return o;
}

/* The fabric spec names, written as .topo text, passed through strip
 * (which writes at most the text's length) and parsed back; NULL after
 * printing why. */
static inline weft_topo *weft__test_topo_spec_rewritten(const char *spec,
                                                        size_t (*strip_fn)(const char *, char *))
{
    weft_topo *t = weft__test_topo_spec(spec), *out = NULL;
    char *text = NULL, *strip = NULL;
    size_t len = 0;
    FILE *f = t ? open_memstream(&text, &len) : NULL;
    if (!f || weft_topo_write(t, f) != WEFT_OK) {
        if (f)
            fclose(f);
        goto done;
    }
    fclose(f);
    strip = (char *)malloc(len + 1);
    if (!strip)
        goto done;
    strip[strip_fn(text, strip)] = 0;
    out = weft__test_topo_text(strip);
done:
    free(strip);
    free(text);
    weft_topo_free(t);
    return out;
}

/* The fabric spec names with every link's latency set to 0 (for tests
 * whose expected figures describe a latency-free fabric, such as the
 * symmetry classes of the hardware presets before they had latencies), or
 * NULL after printing why. Written as .topo text and parsed back without
 * the LAT column. */
static inline weft_topo *weft__test_topo_spec_nolat(const char *spec)
{
    return weft__test_topo_spec_rewritten(spec, weft__test_strip_lat);
}

/* The fabric spec names without its links' shapers (burst= peak=): the
 * links at their rates only, for tests of estimates that do not model
 * token buckets; NULL after printing why. */
static inline weft_topo *weft__test_topo_spec_unshaped(const char *spec)
{
    return weft__test_topo_spec_rewritten(spec, weft__test_strip_shapers);
}

#endif
