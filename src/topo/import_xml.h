/* A small XML element tree read with expat, for the importers.
 *
 * Elements and attributes are kept in flat arrays with their strings in one
 * arena, so a whole document costs a handful of allocations (all through
 * base/alloc.h, including expat's own, so OOM sweeps cover the parser).
 * Character data is ignored: the formats read here (NCCL topology XML) keep
 * everything in attributes. Entity declarations are refused, so a document
 * cannot expand beyond its own size. */
#ifndef WEFT_TOPO_IMPORT_XML_H
#define WEFT_TOPO_IMPORT_XML_H

#include <stddef.h>
#include <stdint.h>

#include "weft/err.h"

#define WEFT__XML_NONE UINT32_MAX

typedef struct weft__xml_elem {
    uint32_t name;                    /* offset into strings */
    uint32_t parent;                  /* element index or WEFT__XML_NONE */
    uint32_t first_child, last_child; /* WEFT__XML_NONE when none */
    uint32_t next_sibling;            /* in document order */
    uint32_t first_attr, n_attrs;     /* range in attrs */
    uint32_t line, col;               /* of the start tag, both 1-based */
} weft__xml_elem;

typedef struct weft__xml_attr {
    uint32_t key, value; /* offsets into strings */
} weft__xml_attr;

/* Element 0 is the root. */
typedef struct weft__xml {
    char *strings;
    size_t strings_len, strings_cap;
    weft__xml_elem *elems;
    size_t n_elems, elems_cap;
    weft__xml_attr *attrs;
    size_t n_attrs, attrs_cap;
} weft__xml;

/* Parses text[0..len). Errors: WEFT_EPARSE with "NAME:LINE:COL: malformed
 * XML: reason" (or the depth limit), WEFT_ENOMEM, WEFT_ELIMIT. On failure *x
 * is left empty (safe to fini). */
weft_err weft__xml_parse(const char *text, size_t len, const char *name, uint32_t max_depth,
                         weft__xml *x, weft_diag *d);
/* Frees what parse allocated; safe on a zeroed or failed tree. */
void weft__xml_fini(weft__xml *x);

const char *weft__xml_tag(const weft__xml *x, uint32_t e);
/* The value of attribute key on element e, or NULL when absent. */
const char *weft__xml_get(const weft__xml *x, uint32_t e, const char *key);

#endif
