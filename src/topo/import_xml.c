/* Reading XML into a weft__xml tree with expat. See import_xml.h. */
#include <expat.h>
#include <string.h>

#include "base/alloc.h"
#include "topo/import_xml.h"

typedef struct xml_state {
    XML_Parser parser;
    weft__xml *x;
    const char *name;
    uint32_t current; /* open element or WEFT__XML_NONE */
    uint32_t depth, max_depth;
    weft_err err;
    weft_diag *d;
} xml_state;

static weft_err add_string(weft__xml *x, const char *s, uint32_t *off)
{
    size_t n = strlen(s);
    if (x->strings_len + n + 1 > UINT32_MAX)
        return WEFT_ELIMIT;
    if (weft__grow((void **)&x->strings, &x->strings_cap, x->strings_len + n + 1, 1))
        return WEFT_ENOMEM;
    memcpy(x->strings + x->strings_len, s, n + 1);
    *off = (uint32_t)x->strings_len;
    x->strings_len += n + 1;
    return WEFT_OK;
}

/* Records the first failure and stops expat; later callbacks do nothing. */
static void fail(xml_state *st, weft_err e)
{
    if (st->err == WEFT_OK)
        st->err = e;
    XML_StopParser(st->parser, XML_FALSE);
}

static void XMLCALL on_start(void *arg, const XML_Char *el, const XML_Char **attrs)
{
    xml_state *st = arg;
    weft__xml *x = st->x;
    if (st->err)
        return;
    uint32_t line = (uint32_t)XML_GetCurrentLineNumber(st->parser);
    uint32_t col = (uint32_t)XML_GetCurrentColumnNumber(st->parser) + 1;
    if (st->depth >= st->max_depth) {
        weft_diag_set(st->d, WEFT_EPARSE, "%s:%u:%u: elements nested deeper than %u", st->name,
                      line, col, st->max_depth);
        fail(st, WEFT_EPARSE);
        return;
    }
    if (x->n_elems >= UINT32_MAX - 1) {
        fail(st, WEFT_ELIMIT);
        return;
    }
    if (weft__grow((void **)&x->elems, &x->elems_cap, x->n_elems + 1, sizeof *x->elems)) {
        fail(st, WEFT_ENOMEM);
        return;
    }
    weft__xml_elem e = {
        0,    st->current, WEFT__XML_NONE, WEFT__XML_NONE, WEFT__XML_NONE, (uint32_t)x->n_attrs, 0,
        line, col};
    weft_err err = add_string(x, el, &e.name);
    for (size_t i = 0; !err && attrs[i]; i += 2) {
        if (weft__grow((void **)&x->attrs, &x->attrs_cap, x->n_attrs + 1, sizeof *x->attrs)) {
            err = WEFT_ENOMEM;
            break;
        }
        weft__xml_attr a;
        err = add_string(x, attrs[i], &a.key);
        if (!err)
            err = add_string(x, attrs[i + 1], &a.value);
        if (!err) {
            x->attrs[x->n_attrs++] = a;
            e.n_attrs++;
        }
    }
    if (err) {
        fail(st, err);
        return;
    }
    uint32_t id = (uint32_t)x->n_elems++;
    x->elems[id] = e;
    if (st->current != WEFT__XML_NONE) {
        weft__xml_elem *p = &x->elems[st->current];
        if (p->last_child == WEFT__XML_NONE)
            p->first_child = id;
        else
            x->elems[p->last_child].next_sibling = id;
        p->last_child = id;
    }
    st->current = id;
    st->depth++;
}

static void XMLCALL on_end(void *arg, const XML_Char *el)
{
    xml_state *st = arg;
    (void)el;
    if (st->err || st->current == WEFT__XML_NONE)
        return;
    st->current = st->x->elems[st->current].parent;
    st->depth--;
}

static void XMLCALL on_entity_decl(void *arg, const XML_Char *entity, int is_param,
                                   const XML_Char *value, int value_len, const XML_Char *base,
                                   const XML_Char *system_id, const XML_Char *public_id,
                                   const XML_Char *notation)
{
    xml_state *st = arg;
    (void)entity, (void)is_param, (void)value, (void)value_len, (void)base, (void)system_id,
        (void)public_id, (void)notation;
    if (st->err)
        return;
    weft_diag_set(st->d, WEFT_EPARSE, "%s:%lu:%lu: entity declarations are not allowed", st->name,
                  (unsigned long)XML_GetCurrentLineNumber(st->parser),
                  (unsigned long)XML_GetCurrentColumnNumber(st->parser) + 1);
    fail(st, WEFT_EPARSE);
}

static void *xml_malloc(size_t n)
{
    return weft__malloc(n);
}

static void *xml_realloc(void *p, size_t n)
{
    return weft__realloc(p, n);
}

static void xml_free(void *p)
{
    weft__free(p);
}

void weft__xml_fini(weft__xml *x)
{
    weft__free(x->strings);
    weft__free(x->elems);
    weft__free(x->attrs);
    memset(x, 0, sizeof *x);
}

weft_err weft__xml_parse(const char *text, size_t len, const char *name, uint32_t max_depth,
                         weft__xml *x, weft_diag *d)
{
    memset(x, 0, sizeof *x);
    if (len > (size_t)INT32_MAX)
        return weft_diag_set(d, WEFT_ELIMIT, "%s: too large for the XML reader", name);
    static const XML_Memory_Handling_Suite mem = {xml_malloc, xml_realloc, xml_free};
    XML_Parser p = XML_ParserCreate_MM(NULL, &mem, NULL);
    if (!p)
        return weft_diag_code(d, WEFT_ENOMEM);
    xml_state st = {p, x, name, WEFT__XML_NONE, 0, max_depth, WEFT_OK, d};
    XML_SetUserData(p, &st);
    XML_SetElementHandler(p, on_start, on_end);
    XML_SetEntityDeclHandler(p, on_entity_decl);
    weft_err e = WEFT_OK;
    if (XML_Parse(p, text, (int)len, XML_TRUE) == XML_STATUS_ERROR) {
        if (st.err) {
            e = weft_diag_code(d, st.err);
        } else if (XML_GetErrorCode(p) == XML_ERROR_NO_MEMORY) {
            e = weft_diag_code(d, WEFT_ENOMEM);
        } else {
            e = weft_diag_set(d, WEFT_EPARSE, "%s:%lu:%lu: malformed XML: %s", name,
                              (unsigned long)XML_GetCurrentLineNumber(p),
                              (unsigned long)XML_GetCurrentColumnNumber(p) + 1,
                              XML_ErrorString(XML_GetErrorCode(p)));
        }
    } else if (st.err) {
        e = weft_diag_code(d, st.err);
    } else if (x->n_elems == 0) {
        e = weft_diag_set(d, WEFT_EPARSE, "%s:1:1: malformed XML: no element", name);
    }
    XML_ParserFree(p);
    if (e)
        weft__xml_fini(x);
    return e;
}

const char *weft__xml_tag(const weft__xml *x, uint32_t e)
{
    return x->strings + x->elems[e].name;
}

const char *weft__xml_get(const weft__xml *x, uint32_t e, const char *key)
{
    const weft__xml_elem *el = &x->elems[e];
    for (uint32_t i = el->first_attr; i < el->first_attr + el->n_attrs; i++) {
        if (strcmp(x->strings + x->attrs[i].key, key) == 0)
            return x->strings + x->attrs[i].value;
    }
    return NULL;
}
