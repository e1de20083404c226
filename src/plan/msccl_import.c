/* MSCCL XML import: an <algo> program becomes a weft plan (see the MSCCL
 * section of weft/plan.h and docs/msccl.md for the mapping).
 *
 * The XML is read by expat as a stream; <gpu>, <tb> and <step> elements go
 * into three flat arrays that grow by doubling, so a program costs a few
 * allocations whatever its size. Building the plan then takes two linear
 * passes: the first matches sends with receives per connection and gives
 * every step its first op id (a step becomes a fixed number of ops), so that
 * a dependency on a step of another threadblock, earlier or later in the
 * file, is known before its ops are added; the second adds the ops.
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

typedef struct mx_pos {
    uint32_t line, col;
} mx_pos;

typedef struct mx_gpu {
    int32_t id, i_chunks, o_chunks, s_chunks;
    uint32_t first_tb, ntb;
    mx_pos pos;
} mx_gpu;

typedef struct mx_tb {
    int32_t id, send, recv, chan;
    uint32_t gpu; /* index into gpus */
    uint32_t first_step, nsteps;
    mx_pos pos;
} mx_tb;

typedef struct mx_step {
    uint8_t type;
    uint8_t srcbuf, dstbuf; /* weft_buf */
    int32_t srcoff, dstoff, cnt, depid, deps;
    uint32_t tb; /* index into tbs */
    mx_pos pos;
} mx_step;

enum { IN_NONE, IN_ALGO, IN_GPU, IN_TB, IN_STEP, IN_DONE };

typedef struct mx_state {
    XML_Parser parser;
    const char *name;
    weft_diag *d;
    weft_err err;
    int where; /* the innermost open element */
    /* <algo> */
    int32_t ngpus, nchunksperloop, nchannels, root;
    weft_coll coll;
    bool inplace;
    mx_pos algo_pos;
    mx_gpu *gpus;
    size_t ngpu, gpu_cap;
    mx_tb *tbs;
    size_t ntb, tb_cap;
    mx_step *steps;
    size_t nstep, step_cap;
} mx_state;

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
        char reason[768];
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
static bool mx_int(mx_state *st, const XML_Char **atts, const char *el, const char *key,
                   int32_t lo, const int32_t *dflt, mx_pos pos, int32_t *out)
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

static bool mx_buf(mx_state *st, const XML_Char **atts, const char *key, mx_pos pos,
                   uint8_t *out)
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
        mx_fail(st, WEFT_EPARSE, pos, "<step s=\"%d\">: expected s=\"%u\" (steps are numbered in order)",
                (int)idx, tb->nsteps);
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

/* ---- Building the plan -------------------------------------------------- */

/* Per step, filled by the first pass. */
typedef struct mx_link {
    uint32_t first_op; /* id of the step's first op */
    uint32_t nops;
    uint32_t match;    /* for a receiving step: the matching sending step */
    uint32_t msg_slot; /* for a sending step: first scratch slot of its message */
} mx_link;

static weft_err mx_at(mx_state *st, weft_err e, mx_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static weft_err mx_at(mx_state *st, weft_err e, mx_pos pos, const char *fmt, ...)
{
    char reason[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return weft_diag_set(st->d, e, "%s:%u:%u: %s", st->name, pos.line, pos.col, reason);
}

/* "NAME: out of memory WHAT", WEFT_ENOMEM: a program too large for this
 * machine, named, rather than a bare "out of memory". */
static weft_err mx_oom(weft_diag *d, const char *name, const char *what)
{
    return weft_diag_set(d, WEFT_ENOMEM, "%s: out of memory %s", name, what);
}

/* Sort keys for threadblocks: (gpu, peer, chan) of their send or receive
 * side, so the two ends of a connection meet. */
typedef struct mx_key {
    int32_t from, to, chan;
    uint32_t tb;
} mx_key;

static int mx_key_cmp(const void *a, const void *b)
{
    const mx_key *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    if (x->to != y->to)
        return x->to < y->to ? -1 : 1;
    if (x->chan != y->chan)
        return x->chan < y->chan ? -1 : 1;
    return x->tb < y->tb ? -1 : x->tb > y->tb;
}

static uint32_t mx_step_nops(const mx_step *s)
{
    bool same = s->srcbuf == s->dstbuf && s->srcoff == s->dstoff;
    switch (s->type) {
    case WEFT__MSCCL_RCS:
    case WEFT__MSCCL_RRS:
        return 2;
    case WEFT__MSCCL_RRC:
        return same ? 1 : 2;
    case WEFT__MSCCL_RRCS:
        return same ? 2 : 3;
    default:
        return 1;
    }
}

static const char *mx_bufname(uint8_t b)
{
    return b == WEFT_BUF_IN ? "i" : b == WEFT_BUF_OUT ? "o" : "s";
}

/* Checks that [off, off+cnt) lies in buffer b of gpu g. */
static weft_err mx_check_range(mx_state *st, const weft_plan *p, const mx_step *s, bool src)
{
    uint8_t b = src ? s->srcbuf : s->dstbuf;
    int32_t off = src ? s->srcoff : s->dstoff;
    const mx_gpu *g = &st->gpus[st->tbs[s->tb].gpu];
    int64_t size = b == WEFT_BUF_SCRATCH ? (int64_t)g->s_chunks
                                         : (int64_t)weft_plan_buf_slots(p, (weft_buf)b);
    if (off < 0 || (int64_t)off + s->cnt > size)
        return mx_at(st, WEFT_EPARSE, s->pos,
                     "%s chunks [%d, %lld) are outside buffer %s, which has %lld chunks on gpu %d",
                     src ? "source" : "destination", (int)off, (long long)off + s->cnt,
                     mx_bufname(b), (long long)size, (int)g->id);
    return WEFT_OK;
}

/* Sorts the tbs of one side and checks each connection end is one tb. */
static weft_err mx_sort_side(mx_state *st, mx_key *keys, size_t *nkeys, bool send)
{
    size_t n = 0;
    for (size_t i = 0; i < st->ntb; i++) {
        const mx_tb *t = &st->tbs[i];
        int32_t peer = send ? t->send : t->recv;
        if (peer < 0)
            continue;
        int32_t me = st->gpus[t->gpu].id;
        mx_key k = {send ? me : peer, send ? peer : me, t->chan, (uint32_t)i};
        keys[n++] = k;
    }
    qsort(keys, n, sizeof *keys, mx_key_cmp);
    for (size_t i = 1; i < n; i++) {
        if (mx_key_cmp(&keys[i - 1], &keys[i]) == 0 ||
            (keys[i - 1].from == keys[i].from && keys[i - 1].to == keys[i].to &&
             keys[i - 1].chan == keys[i].chan)) {
            const mx_tb *a = &st->tbs[keys[i - 1].tb], *b = &st->tbs[keys[i].tb];
            const mx_tb *later = a->pos.line > b->pos.line ? a : b;
            const mx_tb *first = later == a ? b : a;
            return mx_at(st, WEFT_EPARSE, later->pos,
                         "threadblocks %d and %d of gpu %d both %s gpu %d on channel %d, so "
                         "their messages cannot be matched",
                         (int)first->id, (int)later->id, (int)st->gpus[later->gpu].id,
                         send ? "send to" : "receive from", (int)(send ? keys[i].to : keys[i].from),
                         (int)keys[i].chan);
        }
    }
    *nkeys = n;
    return WEFT_OK;
}

/* The next step of tb t at or after *k that sends (or receives). */
static bool mx_next(const mx_state *st, const mx_tb *t, uint32_t *k, bool send)
{
    for (; *k < t->nsteps; (*k)++) {
        int ty = st->steps[t->first_step + *k].type;
        if (send ? weft__msccl_step_sends(ty) : weft__msccl_step_recvs(ty))
            return true;
    }
    return false;
}

/* Pairs the k-th send with the k-th receive on every connection. */
static weft_err mx_match(mx_state *st, mx_link *link)
{
    weft_err e = WEFT_OK;
    mx_key *sk = weft__malloc((st->ntb ? st->ntb : 1) * sizeof *sk);
    mx_key *rk = weft__malloc((st->ntb ? st->ntb : 1) * sizeof *rk);
    if (!sk || !rk) {
        e = mx_oom(st->d, st->name, "building the plan");
        goto free_keys;
    }
    size_t ns, nr;
    if ((e = mx_sort_side(st, sk, &ns, true)) || (e = mx_sort_side(st, rk, &nr, false)))
        goto free_keys;
    size_t i = 0, j = 0;
    while (i < ns || j < nr) {
        int c = i == ns ? 1 : j == nr ? -1 : 0;
        if (c == 0) {
            mx_key a = sk[i], b = rk[j];
            a.tb = b.tb = 0;
            c = mx_key_cmp(&a, &b);
        }
        const mx_tb *s = c <= 0 ? &st->tbs[sk[i].tb] : NULL;
        const mx_tb *r = c >= 0 ? &st->tbs[rk[j].tb] : NULL;
        uint32_t a = 0, b = 0;
        for (;;) {
            bool has_s = s && mx_next(st, s, &a, true);
            bool has_r = r && mx_next(st, r, &b, false);
            if (!has_s && !has_r)
                break;
            if (!has_r) {
                const mx_step *x = &st->steps[s->first_step + a];
                e = mx_at(st, WEFT_EPARSE, x->pos,
                          "send to gpu %d on channel %d has no matching receive",
                          (int)s->send, (int)s->chan);
                goto free_keys;
            }
            const mx_step *y = &st->steps[r->first_step + b];
            if (!has_s) {
                e = mx_at(st, WEFT_EPARSE, y->pos,
                          "receive from gpu %d on channel %d has no matching send", (int)r->recv,
                          (int)r->chan);
                goto free_keys;
            }
            const mx_step *x = &st->steps[s->first_step + a];
            if (x->cnt != y->cnt) {
                e = mx_at(st, WEFT_EPARSE, y->pos,
                          "receives %d chunks, but the matching send (line %u) sends %d",
                          (int)y->cnt, x->pos.line, (int)x->cnt);
                goto free_keys;
            }
            link[r->first_step + b].match = s->first_step + a;
            a++, b++;
        }
        if (c <= 0)
            i++;
        if (c >= 0)
            j++;
    }
free_keys:
    weft__free(sk);
    weft__free(rk);
    return e;
}

/* The op a dependency on step k waits for: the step's last op. */
static uint32_t mx_done(const mx_link *link, uint32_t k)
{
    return link[k].first_op + link[k].nops - 1;
}

/* Adds the ops of step k (ids link[k].first_op ...). */
static weft_err mx_add_step(mx_state *st, weft_plan *p, const mx_link *link, const uint32_t *tbmap,
                            const uint32_t *tbmap_start, uint32_t k)
{
    const mx_step *s = &st->steps[k];
    const mx_tb *t = &st->tbs[s->tb];
    const mx_gpu *g = &st->gpus[t->gpu];
    weft_rank me = {(uint32_t)g->id};
    uint32_t deps[3], nd = 0;
    if (k > t->first_step)
        deps[nd++] = mx_done(link, k - 1);
    if (s->depid >= 0 && s->deps >= 0) {
        uint32_t nmap = tbmap_start[t->gpu + 1] - tbmap_start[t->gpu];
        uint32_t o = (uint32_t)s->depid < nmap ? tbmap[tbmap_start[t->gpu] + (uint32_t)s->depid]
                                               : UINT32_MAX;
        if (o == UINT32_MAX)
            return mx_at(st, WEFT_EPARSE, s->pos,
                         "depends on threadblock %d, which gpu %d does not have", (int)s->depid,
                         (int)g->id);
        const mx_tb *dt = &st->tbs[o];
        if ((uint32_t)s->deps >= dt->nsteps)
            return mx_at(st, WEFT_EPARSE, s->pos,
                         "depends on step %d of threadblock %d, which has %u steps", (int)s->deps,
                         (int)s->depid, dt->nsteps);
        deps[nd++] = mx_done(link, dt->first_step + (uint32_t)s->deps);
    }
    weft_op op = {0};
    op.channel = (uint32_t)t->chan;
    op.src_rank = op.dst_rank = me;
    op.count = (uint32_t)s->cnt;
    weft_err e;
    bool same = s->srcbuf == s->dstbuf && s->srcoff == s->dstoff;
    bool has_src = s->type != WEFT__MSCCL_R && s->type != WEFT__MSCCL_RCS &&
                   s->type != WEFT__MSCCL_NOP;
    bool has_dst = s->type != WEFT__MSCCL_S && s->type != WEFT__MSCCL_RRS &&
                   s->type != WEFT__MSCCL_NOP;
    if ((has_src && (e = mx_check_range(st, p, s, true))) ||
        (has_dst && (e = mx_check_range(st, p, s, false))))
        return e;
    if (s->type == WEFT__MSCCL_NOP) {
        op.kind = WEFT_OP_NOP;
        op.count = 0;
        return weft_plan_add_op(p, &op, deps, nd, NULL);
    }
    if (s->type == WEFT__MSCCL_S || s->type == WEFT__MSCCL_CPY || s->type == WEFT__MSCCL_RE) {
        op.kind = s->type == WEFT__MSCCL_RE ? WEFT_OP_REDUCE : WEFT_OP_COPY;
        op.src_buf = (weft_buf)s->srcbuf;
        op.src_index = (uint32_t)s->srcoff;
        if (s->type == WEFT__MSCCL_S) {
            op.dst_buf = WEFT_BUF_SCRATCH;
            op.dst_index = link[k].msg_slot;
        } else {
            op.dst_buf = (weft_buf)s->dstbuf;
            op.dst_index = (uint32_t)s->dstoff;
        }
        return weft_plan_add_op(p, &op, deps, nd, NULL);
    }
    /* A receiving step. rrs sums into its own message slots; the others
     * store into dst, first copying src there when the sum's other operand
     * is elsewhere. */
    bool reduce = s->type == WEFT__MSCCL_RRS || s->type == WEFT__MSCCL_RRC ||
                  s->type == WEFT__MSCCL_RRCS;
    weft_buf into = s->type == WEFT__MSCCL_RRS ? WEFT_BUF_SCRATCH : (weft_buf)s->dstbuf;
    uint32_t into_index =
        s->type == WEFT__MSCCL_RRS ? link[k].msg_slot : (uint32_t)s->dstoff;
    uint32_t next = link[k].first_op;
    if (reduce && (s->type == WEFT__MSCCL_RRS || !same)) {
        op.kind = WEFT_OP_COPY;
        op.src_buf = (weft_buf)s->srcbuf;
        op.src_index = (uint32_t)s->srcoff;
        op.dst_buf = into;
        op.dst_index = into_index;
        if ((e = weft_plan_add_op(p, &op, deps, nd, NULL)))
            return e;
        nd = 0;
        deps[nd++] = next++;
    }
    uint32_t from = link[k].match;
    const mx_tb *ft = &st->tbs[st->steps[from].tb];
    deps[nd++] = mx_done(link, from);
    op.kind = reduce ? WEFT_OP_REDUCE : WEFT_OP_COPY;
    op.src_rank.v = (uint32_t)st->gpus[ft->gpu].id;
    op.src_buf = WEFT_BUF_SCRATCH;
    op.src_index = link[from].msg_slot;
    op.dst_buf = into;
    op.dst_index = into_index;
    if ((e = weft_plan_add_op(p, &op, deps, nd, NULL)))
        return e;
    if (s->type == WEFT__MSCCL_RCS || s->type == WEFT__MSCCL_RRCS) {
        /* What was stored is sent on: it becomes this step's message. */
        deps[0] = next;
        op.kind = WEFT_OP_COPY;
        op.src_rank = me;
        op.src_buf = (weft_buf)s->dstbuf;
        op.src_index = (uint32_t)s->dstoff;
        op.dst_buf = WEFT_BUF_SCRATCH;
        op.dst_index = link[k].msg_slot;
        return weft_plan_add_op(p, &op, deps, 1, NULL);
    }
    return WEFT_OK;
}

static weft_err mx_build(mx_state *st, weft_plan **out)
{
    weft_err e = WEFT_OK;
    weft_diag *d = st->d;
    uint32_t n = (uint32_t)st->ngpus;
    /* Every gpu exactly once. */
    uint32_t *gpu_at = weft__malloc((size_t)n * sizeof *gpu_at);
    if (!gpu_at)
        return mx_oom(d, st->name, "building the plan");
    for (uint32_t r = 0; r < n; r++)
        gpu_at[r] = UINT32_MAX;
    for (size_t i = 0; i < st->ngpu; i++) {
        uint32_t id = (uint32_t)st->gpus[i].id;
        if (gpu_at[id] != UINT32_MAX) {
            e = mx_at(st, WEFT_EPARSE, st->gpus[i].pos, "gpu %u appears twice", id);
            goto free_gpu_at;
        }
        gpu_at[id] = (uint32_t)i;
    }
    for (uint32_t r = 0; r < n; r++)
        if (gpu_at[r] == UINT32_MAX) {
            e = mx_at(st, WEFT_EPARSE, st->algo_pos, "ngpus is %u, but there is no <gpu id=\"%u\">",
                      n, r);
            goto free_gpu_at;
        }

    weft_plan_info info = {0};
    info.coll = st->coll;
    info.nranks = n;
    info.inplace = st->inplace;
    uint32_t per = st->coll == WEFT_COLL_ALLGATHER || st->coll == WEFT_COLL_REDUCESCATTER ||
                           st->coll == WEFT_COLL_ALLTOALL
                       ? n
                       : 1;
    if ((uint32_t)st->nchunksperloop % per != 0) {
        e = mx_at(st, WEFT_EPARSE, st->algo_pos,
                  "nchunksperloop %d is not a multiple of ngpus %u, as %s needs",
                  (int)st->nchunksperloop, n, weft_coll_name(st->coll));
        goto free_gpu_at;
    }
    info.chunks = (uint32_t)st->nchunksperloop / per;
    if (weft_coll_has_root(st->coll)) {
        if ((uint32_t)st->root >= n) {
            e = mx_at(st, WEFT_EPARSE, st->algo_pos, "root %d is not a gpu (ngpus %u)",
                      (int)st->root, n);
            goto free_gpu_at;
        }
        info.root.v = (uint32_t)st->root;
    }

    /* tb id -> tb index, per gpu. */
    uint32_t *tbmap_start = weft__calloc((size_t)st->ngpu + 1, sizeof *tbmap_start);
    if (!tbmap_start) {
        e = mx_oom(d, st->name, "building the plan");
        goto free_gpu_at;
    }
    for (size_t i = 0; i < st->ngpu; i++) {
        int32_t top = -1;
        const mx_gpu *g = &st->gpus[i];
        for (uint32_t j = 0; j < g->ntb; j++)
            if (st->tbs[g->first_tb + j].id > top)
                top = st->tbs[g->first_tb + j].id;
        if ((uint64_t)top + 1 > 4 * (uint64_t)g->ntb + 1024) {
            e = mx_at(st, WEFT_ELIMIT, g->pos, "threadblock ids up to %d for %u threadblocks",
                      (int)top, g->ntb);
            goto free_tbmap_start;
        }
        tbmap_start[i + 1] = tbmap_start[i] + (uint32_t)(top + 1);
    }
    uint32_t *tbmap = weft__malloc(((size_t)tbmap_start[st->ngpu] + 1) * sizeof *tbmap);
    mx_link *link = weft__calloc(st->nstep ? st->nstep : 1, sizeof *link);
    if (!tbmap || !link) {
        e = mx_oom(d, st->name, "building the plan");
        goto free_link;
    }
    for (uint32_t i = 0; i < tbmap_start[st->ngpu]; i++)
        tbmap[i] = UINT32_MAX;
    for (size_t i = 0; i < st->ntb; i++) {
        const mx_tb *t = &st->tbs[i];
        uint32_t *slot = &tbmap[tbmap_start[t->gpu] + (uint32_t)t->id];
        if (*slot != UINT32_MAX) {
            e = mx_at(st, WEFT_EPARSE, t->pos, "gpu %d has two threadblocks with id %d",
                      (int)st->gpus[t->gpu].id, (int)t->id);
            goto free_link;
        }
        *slot = (uint32_t)i;
    }
    if ((e = mx_match(st, link)))
        goto free_link;

    /* Op ids and message slots. */
    uint64_t nops = 0, scratch = 0;
    for (size_t i = 0; i < st->ngpu; i++)
        if ((uint64_t)st->gpus[i].s_chunks > scratch)
            scratch = (uint64_t)st->gpus[i].s_chunks;
    uint64_t base = scratch;
    for (size_t i = 0; i < st->ngpu; i++) {
        const mx_gpu *g = &st->gpus[i];
        uint64_t next = base;
        for (uint32_t j = 0; j < g->ntb; j++) {
            const mx_tb *t = &st->tbs[g->first_tb + j];
            for (uint32_t k = t->first_step; k < t->first_step + t->nsteps; k++) {
                const mx_step *s = &st->steps[k];
                link[k].first_op = (uint32_t)nops;
                link[k].nops = mx_step_nops(s);
                nops += link[k].nops;
                if (weft__msccl_step_sends(s->type)) {
                    link[k].msg_slot = (uint32_t)next;
                    next += (uint64_t)s->cnt;
                }
                if (nops > WEFT_PLAN_MAX_OPS || next > WEFT_PLAN_MAX_SLOTS) {
                    e = mx_at(st, WEFT_ELIMIT, s->pos, "the program is too large for a plan");
                    goto free_link;
                }
            }
        }
        if (next > scratch)
            scratch = next;
    }
    info.scratch = (uint32_t)scratch;
    weft_plan *p = NULL;
    uint64_t total = weft_plan_info_total_slots(&info);
    if (total > WEFT_PLAN_MAX_TOTAL_SLOTS) {
        e = mx_at(st, WEFT_ELIMIT, st->algo_pos,
                  "%u gpus with %u chunks and %u scratch slots hold %llu slots in all; the limit "
                  "is %llu",
                  n, info.chunks, info.scratch, (unsigned long long)total,
                  (unsigned long long)WEFT_PLAN_MAX_TOTAL_SLOTS);
        goto free_link;
    }
    if ((e = weft_plan_new(&info, &p))) {
        e = weft_diag_set(d, e, "%s: cannot make a plan: %s", st->name, weft_strerror(e));
        goto free_link;
    }
    for (uint32_t k = 0; k < st->nstep; k++)
        if ((e = mx_add_step(st, p, link, tbmap, tbmap_start, k))) {
            if (e == WEFT_ENOMEM)
                mx_oom(d, st->name, "building the plan");
            weft_plan_free(p);
            goto free_link;
        }
    *out = p;
free_link:
    weft__free(link);
    weft__free(tbmap);
free_tbmap_start:
    weft__free(tbmap_start);
free_gpu_at:
    weft__free(gpu_at);
    return e;
}

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
            e = weft_diag_set(d, WEFT_ELIMIT, "%s: larger than %zu MiB, the limit for an MSCCL XML file",
                              name, WEFT_PLAN_MAX_FILE_BYTES >> 20);
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
    e = mx_build(&st, out);
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
    if (e) return e;
    e = mx_import(path, mx_read_file, f, out, d);
    fclose(f);
    return e;
}
