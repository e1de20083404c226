/* MSCCL XML import: an <algo> program becomes a weft plan (see the MSCCL
 * section of weft/plan.h and docs/msccl.md for the mapping).
 *
 * The XML is read by expat as a stream; <gpu>, <tb> and <step> elements go
 * into three flat arrays that grow by doubling, so a program costs a few
 * allocations whatever its size. Building the plan from them is
 * msccl_build.c's part (two linear passes); this file reads the XML, checks
 * each element's attributes and holds the entry points.
 */
#include <errno.h>
#include <expat.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/file.h"
#include "plan/msccl_internal.h"

const char *const weft__msccl_step_names[WEFT__MSCCL_STEP_COUNT] = {
    "s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop"};

static void mx_fini(mx_state *st)
{
    weft__free(st->gpus);
    weft__free(st->tbs);
    weft__free(st->steps);
}

static mx_pos mx_here(mx_state *st)
{
    mx_pos p = {(uint32_t)XML_GetCurrentLineNumber(st->parser),
                (uint32_t)XML_GetCurrentColumnNumber(st->parser) + 1};
    return p;
}

/* Records the first failure (with its message) and stops expat. */
static void mx_fail(mx_state *st, weft_err e, mx_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void mx_fail(mx_state *st, weft_err e, mx_pos pos, const char *fmt, ...)
{
    if (st->err)
        return;
    st->err = e;
    if (st->d) {
        char reason[WEFT_DIAG_MSG_SIZE];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(reason, sizeof reason, fmt, ap);
        va_end(ap);
        weft_diag_set(st->d, e, "%s:%u:%u: %s", st->name, pos.line, pos.col, reason);
    }
    XML_StopParser(st->parser, XML_FALSE);
}

static const char *mx_attr(const XML_Char **atts, const char *key)
{
    for (size_t i = 0; atts[i]; i += 2)
        if (strcmp(atts[i], key) == 0)
            return atts[i + 1];
    return NULL;
}

/* A required attribute; fails naming it and its element when absent. */
static const char *mx_need(mx_state *st, const XML_Char **atts, const char *el, const char *key,
                           mx_pos pos)
{
    const char *v = mx_attr(atts, key);
    if (!v)
        mx_fail(st, WEFT_EPARSE, pos, "<%s> has no attribute '%s'", el, key);
    return v;
}

/* A decimal integer attribute in [lo, INT32_MAX]. When absent and dflt is
 * not NULL, *out = *dflt. */
static bool mx_int(mx_state *st, const XML_Char **atts, const char *el, const char *key, int32_t lo,
                   const int32_t *dflt, mx_pos pos, int32_t *out)
{
    const char *v = dflt ? mx_attr(atts, key) : mx_need(st, atts, el, key, pos);
    if (!v) {
        if (!dflt)
            return false;
        *out = *dflt;
        return true;
    }
    const char *s = v;
    bool neg = *s == '-';
    if (neg)
        s++;
    long long x = 0;
    bool ok = *s >= '0' && *s <= '9';
    for (; ok && *s; s++) {
        if (*s < '0' || *s > '9' || x > INT32_MAX) {
            ok = false;
            break;
        }
        x = x * 10 + (*s - '0');
    }
    if (neg)
        x = -x;
    if (!ok || x > INT32_MAX || x < lo) {
        mx_fail(st, WEFT_EPARSE, pos, "<%s %s=\"%s\">: expected an integer >= %d", el, key, v,
                (int)lo);
        return false;
    }
    *out = (int32_t)x;
    return true;
}

static bool mx_buf(mx_state *st, const XML_Char **atts, const char *key, mx_pos pos, uint8_t *out)
{
    const char *v = mx_need(st, atts, "step", key, pos);
    if (!v)
        return false;
    if (strcmp(v, "i") == 0)
        *out = WEFT_BUF_IN;
    else if (strcmp(v, "o") == 0)
        *out = WEFT_BUF_OUT;
    else if (strcmp(v, "s") == 0)
        *out = WEFT_BUF_SCRATCH;
    else {
        mx_fail(st, WEFT_EPARSE, pos, "<step %s=\"%s\">: expected a buffer i, o or s", key, v);
        return false;
    }
    return true;
}

static bool mx_coll(const char *v, weft_coll *out)
{
    if (strcmp(v, "reduce_scatter") == 0) {
        *out = WEFT_COLL_REDUCESCATTER;
        return true;
    }
    return weft_coll_parse(v, strlen(v), out);
}

static void mx_start_algo(mx_state *st, const XML_Char **atts, mx_pos pos)
{
    int32_t one = 1, zero = 0, inplace, outofplace;
    const char *coll = mx_need(st, atts, "algo", "coll", pos);
    if (!coll)
        return;
    if (!mx_coll(coll, &st->coll)) {
        mx_fail(st, WEFT_EUNSUPPORTED, pos,
                "<algo coll=\"%s\">: weft has no plans for this collective", coll);
        return;
    }
    if (!mx_int(st, atts, "algo", "ngpus", 1, NULL, pos, &st->ngpus) ||
        !mx_int(st, atts, "algo", "nchunksperloop", 1, NULL, pos, &st->nchunksperloop) ||
        !mx_int(st, atts, "algo", "nchannels", 0, &one, pos, &st->nchannels) ||
        !mx_int(st, atts, "algo", "root", 0, &zero, pos, &st->root))
        return;
    /* Checked here, before anything is sized by it (the build allocates a
     * word per gpu; ngpus="1000000000" asked for 4 GB). */
    if ((uint32_t)st->ngpus > WEFT_PLAN_MAX_RANKS) {
        mx_fail(st, WEFT_EPARSE, pos, "<algo ngpus=\"%d\">: more than %u gpus", (int)st->ngpus,
                WEFT_PLAN_MAX_RANKS);
        return;
    }
    /* Older files give only inplace, some only outofplace. */
    bool has_in = mx_attr(atts, "inplace") != NULL;
    if (!mx_int(st, atts, "algo", "inplace", 0, &one, pos, &inplace) ||
        !mx_int(st, atts, "algo", "outofplace", 0, &zero, pos, &outofplace))
        return;
    st->inplace = has_in ? inplace != 0 : outofplace == 0;
    st->algo_pos = pos;
}

static void mx_start_gpu(mx_state *st, const XML_Char **atts, mx_pos pos)
{
    mx_gpu g = {0};
    g.pos = pos;
    g.first_tb = (uint32_t)st->ntb;
    if (!mx_int(st, atts, "gpu", "id", 0, NULL, pos, &g.id) ||
        !mx_int(st, atts, "gpu", "i_chunks", 0, NULL, pos, &g.i_chunks) ||
        !mx_int(st, atts, "gpu", "o_chunks", 0, NULL, pos, &g.o_chunks) ||
        !mx_int(st, atts, "gpu", "s_chunks", 0, NULL, pos, &g.s_chunks))
        return;
    if (g.id >= st->ngpus) {
        mx_fail(st, WEFT_EPARSE, pos, "<gpu id=\"%d\">: the algo has %d gpus", (int)g.id,
                (int)st->ngpus);
        return;
    }
    if (weft__grow((void **)&st->gpus, &st->gpu_cap, st->ngpu + 1, sizeof *st->gpus)) {
        mx_fail(st, WEFT_ENOMEM, pos, "out of memory");
        return;
    }
    st->gpus[st->ngpu++] = g;
}

static void mx_start_tb(mx_state *st, const XML_Char **atts, mx_pos pos)
{
    mx_tb t = {0};
    t.pos = pos;
    t.gpu = (uint32_t)st->ngpu - 1;
    t.first_step = (uint32_t)st->nstep;
    if (!mx_int(st, atts, "tb", "id", 0, NULL, pos, &t.id) ||
        !mx_int(st, atts, "tb", "send", -1, NULL, pos, &t.send) ||
        !mx_int(st, atts, "tb", "recv", -1, NULL, pos, &t.recv) ||
        !mx_int(st, atts, "tb", "chan", 0, NULL, pos, &t.chan))
        return;
    if (t.send >= st->ngpus || t.recv >= st->ngpus) {
        mx_fail(st, WEFT_EPARSE, pos, "<tb id=\"%d\">: peer gpu %d does not exist (%d gpus)",
                (int)t.id, (int)(t.send >= st->ngpus ? t.send : t.recv), (int)st->ngpus);
        return;
    }
    if (st->ntb >= UINT32_MAX / 2 ||
        weft__grow((void **)&st->tbs, &st->tb_cap, st->ntb + 1, sizeof *st->tbs)) {
        mx_fail(st, WEFT_ENOMEM, pos, "out of memory");
        return;
    }
    st->tbs[st->ntb++] = t;
    st->gpus[st->ngpu - 1].ntb++;
}

static void mx_start_step(mx_state *st, const XML_Char **atts, mx_pos pos)
{
    mx_step s = {0};
    s.pos = pos;
    s.tb = (uint32_t)st->ntb - 1;
    mx_tb *tb = &st->tbs[s.tb];
    int32_t idx, minus1 = -1, zero = 0;
    const char *type = mx_need(st, atts, "step", "type", pos);
    if (!type)
        return;
    int t = 0;
    while (t < WEFT__MSCCL_STEP_COUNT && strcmp(weft__msccl_step_names[t], type) != 0)
        t++;
    if (t == WEFT__MSCCL_STEP_COUNT) {
        mx_fail(st, WEFT_EPARSE, pos, "unknown step type '%s'", type);
        return;
    }
    s.type = (uint8_t)t;
    if (!mx_int(st, atts, "step", "s", 0, NULL, pos, &idx) ||
        !mx_buf(st, atts, "srcbuf", pos, &s.srcbuf) ||
        !mx_int(st, atts, "step", "srcoff", -1, NULL, pos, &s.srcoff) ||
        !mx_buf(st, atts, "dstbuf", pos, &s.dstbuf) ||
        !mx_int(st, atts, "step", "dstoff", -1, NULL, pos, &s.dstoff) ||
        !mx_int(st, atts, "step", "cnt", 0, NULL, pos, &s.cnt) ||
        !mx_int(st, atts, "step", "depid", -1, &minus1, pos, &s.depid) ||
        !mx_int(st, atts, "step", "deps", -1, &minus1, pos, &s.deps) ||
        !mx_int(st, atts, "step", "hasdep", 0, &zero, pos, &zero))
        return;
    if ((uint32_t)idx != tb->nsteps) {
        mx_fail(st, WEFT_EPARSE, pos,
                "<step s=\"%d\">: expected s=\"%u\" (steps are numbered in order)", (int)idx,
                tb->nsteps);
        return;
    }
    if (weft__msccl_step_sends(t) && tb->send < 0) {
        mx_fail(st, WEFT_EPARSE, pos, "step type '%s' sends, but threadblock %d has send=\"-1\"",
                type, (int)tb->id);
        return;
    }
    if (weft__msccl_step_recvs(t) && tb->recv < 0) {
        mx_fail(st, WEFT_EPARSE, pos, "step type '%s' receives, but threadblock %d has recv=\"-1\"",
                type, (int)tb->id);
        return;
    }
    if (t != WEFT__MSCCL_NOP && s.cnt < 1) {
        mx_fail(st, WEFT_EPARSE, pos, "<step cnt=\"%d\">: a '%s' step moves at least 1 chunk",
                (int)s.cnt, type);
        return;
    }
    if (st->nstep >= UINT32_MAX / 4 ||
        weft__grow((void **)&st->steps, &st->step_cap, st->nstep + 1, sizeof *st->steps)) {
        mx_fail(st, WEFT_ENOMEM, pos, "out of memory");
        return;
    }
    st->steps[st->nstep++] = s;
    tb->nsteps++;
}

static void XMLCALL mx_on_start(void *arg, const XML_Char *el, const XML_Char **atts)
{
    mx_state *st = arg;
    if (st->err)
        return;
    mx_pos pos = mx_here(st);
    static const char *const expect[] = {"algo", "gpu", "tb", "step"};
    int want = st->where; /* IN_NONE expects algo, IN_ALGO gpu, ... */
    if (want > IN_TB || strcmp(el, expect[want]) != 0) {
        if (want == IN_NONE)
            mx_fail(st, WEFT_EPARSE, pos, "expected <algo>, found <%s>", el);
        else if (want == IN_DONE)
            mx_fail(st, WEFT_EPARSE, pos, "<%s> after the end of <algo>", el);
        else if (want == IN_STEP)
            mx_fail(st, WEFT_EPARSE, pos, "<step> cannot contain <%s>", el);
        else
            mx_fail(st, WEFT_EPARSE, pos, "unexpected <%s> inside <%s> (expected <%s>)", el,
                    expect[want - 1], expect[want]);
        return;
    }
    switch (want) {
    case IN_NONE:
        mx_start_algo(st, atts, pos);
        break;
    case IN_ALGO:
        mx_start_gpu(st, atts, pos);
        break;
    case IN_GPU:
        mx_start_tb(st, atts, pos);
        break;
    default:
        mx_start_step(st, atts, pos);
        break;
    }
    st->where++;
}

static void XMLCALL mx_on_end(void *arg, const XML_Char *el)
{
    mx_state *st = arg;
    (void)el;
    if (st->err)
        return;
    st->where = st->where == IN_ALGO ? IN_DONE : st->where - 1;
}

static void XMLCALL mx_on_entity(void *arg, const XML_Char *entity, int is_param,
                                 const XML_Char *value, int value_len, const XML_Char *base,
                                 const XML_Char *system_id, const XML_Char *public_id,
                                 const XML_Char *notation)
{
    mx_state *st = arg;
    (void)entity, (void)is_param, (void)value, (void)value_len, (void)base, (void)system_id,
        (void)public_id, (void)notation;
    mx_fail(st, WEFT_EPARSE, mx_here(st), "entity declarations are not allowed");
}

static void *mx_malloc(size_t n)
{
    return weft__malloc(n ? n : 1);
}
static void *mx_realloc(void *p, size_t n)
{
    return weft__realloc(p, n ? n : 1);
}
static const XML_Memory_Handling_Suite mx_mem = {mx_malloc, mx_realloc, weft__free};

/* ---- Entry points -------------------------------------------------------- */

/* Reads up to cap bytes; 0 at the end, (size_t)-1 on an error with errno
 * set by the failed read. */
typedef size_t (*mx_reader)(void *arg, char *buf, size_t cap);

/* Streams the document through expat in pieces from read, then builds. */
static weft_err mx_import(const char *name, mx_reader read, void *arg, weft_plan **out,
                          weft_diag *d)
{
    mx_state st = {0};
    st.name = name;
    st.d = d;
    st.parser = XML_ParserCreate_MM(NULL, &mx_mem, NULL);
    if (!st.parser)
        return mx_oom(d, name, "reading the XML");
    XML_SetUserData(st.parser, &st);
    XML_SetElementHandler(st.parser, mx_on_start, mx_on_end);
    XML_SetEntityDeclHandler(st.parser, mx_on_entity);
    weft_err e = WEFT_OK;
    size_t total = 0; /* bytes read so far, against WEFT_PLAN_MAX_FILE_BYTES */
    for (;;) {
        enum { PIECE = 1 << 16 };
        void *buf = XML_GetBuffer(st.parser, PIECE);
        if (!buf) {
            e = mx_oom(d, name, "reading the XML");
            goto free_parser;
        }
        size_t got = read(arg, buf, PIECE);
        if (got == (size_t)-1) {
            e = weft__file_read_error(name, errno, d);
            goto free_parser;
        }
        total += got;
        if (total > WEFT_PLAN_MAX_FILE_BYTES) {
            e = weft_diag_set(d, WEFT_ELIMIT,
                              "%s: larger than %zu MiB, the limit for an MSCCL XML file", name,
                              WEFT_PLAN_MAX_FILE_BYTES >> 20);
            goto free_parser;
        }
        if (XML_ParseBuffer(st.parser, (int)got, got == 0) == XML_STATUS_ERROR) {
            if (st.err) {
                e = st.err;
            } else if (XML_GetErrorCode(st.parser) == XML_ERROR_NO_MEMORY) {
                e = mx_oom(d, name, "reading the XML");
            } else {
                e = weft_diag_set(d, WEFT_EPARSE, "%s:%lu:%lu: malformed XML: %s", name,
                                  (unsigned long)XML_GetCurrentLineNumber(st.parser),
                                  (unsigned long)XML_GetCurrentColumnNumber(st.parser) + 1,
                                  XML_ErrorString(XML_GetErrorCode(st.parser)));
            }
            goto free_parser;
        }
        if (got == 0)
            break;
    }
    if (st.where == IN_NONE) {
        e = weft_diag_set(d, WEFT_EPARSE, "%s:1:1: no <algo> element", name);
        goto free_parser;
    }
    e = weft__msccl_build(&st, out);
free_parser:
    XML_ParserFree(st.parser);
    mx_fini(&st);
    return e;
}

typedef struct mx_text {
    const char *p;
    size_t left;
} mx_text;

static size_t mx_read_text(void *arg, char *buf, size_t cap)
{
    mx_text *t = arg;
    size_t n = t->left < cap ? t->left : cap;
    memcpy(buf, t->p, n);
    t->p += n;
    t->left -= n;
    return n;
}

static size_t mx_read_file(void *arg, char *buf, size_t cap)
{
    FILE *f = arg;
    size_t n = fread(buf, 1, cap, f);
    return n == 0 && ferror(f) ? (size_t)-1 : n;
}

weft_err weft_plan_msccl_parse(const char *text, size_t len, const char *name, weft_plan **out,
                               weft_diag *d)
{
    mx_text t = {text, len};
    return mx_import(name ? name : "<msccl>", mx_read_text, &t, out, d);
}

weft_err weft_plan_msccl_load_file(const char *path, weft_plan **out, weft_diag *d)
{
    FILE *f = NULL;
    weft_err e = weft__file_open(path, &f, d);
    if (e)
        return e;
    e = mx_import(path, mx_read_file, f, out, d);
    fclose(f);
    return e;
}
