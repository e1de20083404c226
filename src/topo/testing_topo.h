/* Fabrics for the tests: load or parse one, printing why it failed. */
#ifndef WEFT_TOPO_TESTING_TOPO_H
#define WEFT_TOPO_TESTING_TOPO_H

#include <stdio.h>
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

#endif
