/* The step as a Chrome trace-event document (chrome://tracing, Perfetto),
 * written as src/sim/trace.c writes plans: complete events ("ph":"X") in
 * microseconds, processes and threads named by metadata events, tracks
 * whose slices never overlap. The pipeline is scheduled here event by
 * event (1F1B over micro-batches x virtual stages, each stage's forward and
 * backward taking the busiest stage's time, each hop a pipeline send), so
 * the drawing shows the bubble where it is. Link-group tracks follow the
 * slices that load them; overlapping loads of several kinds are cut into
 * segments named by every kind active in them ("tp+pp"), so that each
 * track's slices are disjoint. Their times are whole nanoseconds, so that
 * segments that touch share their boundary exactly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "work/work_internal.h"

/* A time of ns nanoseconds in microseconds with three decimals. */
static void ns_ts(FILE *f, long long ns)
{
    fprintf(f, "%lld.%03lld", ns / 1000, ns % 1000);
}

/* Times are written as whole nanoseconds (ns_ts), the end rounded as the
 * start is, so that a slice that begins where another ends never overlaps
 * it in the file. */
static void slice(FILE *f, bool *first, uint32_t pid, uint32_t tid, const char *name, uint32_t mb,
                  double t0, double t1)
{
    long long a = llround(t0 * 1e9), b = llround(t1 * 1e9);
    fprintf(f,
            "%s\n{\"name\":\"%s %u\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":", *first ? "" : ",",
            name, mb, pid, tid);
    ns_ts(f, a);
    fprintf(f, ",\"dur\":");
    ns_ts(f, b - a);
    fprintf(f, "}");
    *first = false;
}

static void meta(FILE *f, bool *first, const char *what, uint32_t pid, uint32_t tid,
                 const char *name, uint32_t n)
{
    fprintf(f, "%s\n{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":\"%s",
            *first ? "" : ",", what, pid, tid, name);
    if (n != UINT32_MAX)
        fprintf(f, " %u", n);
    fprintf(f, "\"}}");
    *first = false;
}

enum { TID_COMPUTE = 1, TID_PP, TID_PPB, TID_DP, TID_OPT };

/* ---- link groups (weft__links, work_internal.h) ---- */

static int32_t rank_host(const weft_topo *t, uint32_t r)
{
    return weft_topo_node_host(t, weft_topo_rank_node(t, (weft_rank){r}));
}

static uint8_t *load_at(weft__links *L, uint32_t kind, uint32_t stage)
{
    return L->load + ((size_t)kind * L->stages + stage) * L->nlg;
}

void weft__links_mark(weft__links *L, uint32_t kind, uint32_t stage, uint32_t a, uint32_t b)
{
    uint8_t *l = load_at(L, kind, stage);
    uint32_t ba = L->box_of[a], bb = L->box_of[b];
    if (ba == bb)
        l[2 * ba] = 1;
    else
        l[2 * ba + 1] = l[2 * bb + 1] = 1;
}

void weft__links_clear(weft__links *L, uint32_t kind, uint32_t stage)
{
    memset(load_at(L, kind, stage), 0, L->nlg);
}

void weft__links_fini(weft__links *L)
{
    for (uint32_t i = 0; L->tr && i < L->nlg; i++)
        weft__free(L->tr[i].s);
    weft__free(L->tr);
    weft__free(L->box_host);
    weft__free(L->box_of);
    weft__free(L->load);
    memset(L, 0, sizeof *L);
}

weft_err weft__links_init(weft__links *L, const weft_topo *t, uint32_t kinds, uint32_t stages)
{
    uint32_t n = weft_topo_num_ranks(t);
    memset(L, 0, sizeof *L);
    L->kinds = kinds;
    L->stages = stages;
    L->box_host = weft__malloc((n ? n : 1) * sizeof *L->box_host);
    L->box_of = weft__malloc((n ? n : 1) * sizeof *L->box_of);
    if (!L->box_host || !L->box_of)
        return WEFT_ENOMEM;
    for (uint32_t q = 0; q < n; q++) {
        int32_t h = rank_host(t, q);
        uint32_t b = 0;
        while (b < L->nbox && L->box_host[b] != h)
            b++;
        if (b == L->nbox)
            L->box_host[L->nbox++] = h;
        L->box_of[q] = b;
    }
    L->nlg = 2 * L->nbox;
    L->load = weft__calloc((size_t)kinds * stages * L->nlg + 1, 1);
    L->tr = weft__calloc(L->nlg + 1, sizeof *L->tr);
    if (!L->load || !L->tr)
        return WEFT_ENOMEM;
    return WEFT_OK;
}

void weft__links_load(weft__links *L, uint32_t kind, uint32_t stage, double t0, double t1)
{
    if (!(t1 > t0))
        return;
    const uint8_t *l = load_at(L, kind, stage);
    for (uint32_t g = 0; g < L->nlg; g++) {
        if (!l[g])
            continue;
        weft__ltrack *tr = &L->tr[g];
        if (weft__grow((void **)&tr->s, &tr->cap, tr->n + 2, sizeof *tr->s)) {
            L->oom = true;
            return;
        }
        tr->s[tr->n++] = (weft__lspan){t0, 1, kind};
        tr->s[tr->n++] = (weft__lspan){t1, -1, kind};
    }
}

static int lspan_cmp(const void *a, const void *b)
{
    const weft__lspan *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t ? 1 : x->delta - y->delta;
}

/* An "idle" slice of a link-group track, when it lasts. */
static void idle_slice(FILE *f, uint32_t pid, uint32_t tid, long long a, long long b)
{
    if (b <= a)
        return;
    fprintf(f, ",\n{\"name\":\"idle\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":", pid, tid);
    ns_ts(f, a);
    fprintf(f, ",\"dur\":");
    ns_ts(f, b - a);
    fprintf(f, "}");
}

void weft__links_write(FILE *f, bool *first, weft__links *L, uint32_t pid, const char *const *names)
{
    bool named = false;
    for (uint32_t g = 0; g < L->nlg; g++) {
        weft__ltrack *tr = &L->tr[g];
        if (!tr->n && !(L->idle_end > 0))
            continue;
        if (!named) {
            fprintf(f,
                    "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":0,"
                    "\"args\":{\"name\":\"links\"}}",
                    *first ? "" : ",", pid);
            *first = false;
            named = true;
        }
        int32_t h = L->box_host[g / 2];
        fprintf(f,
                ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
                "\"args\":{\"name\":\"%s of box b%d\"}}",
                pid, g + 1, g % 2 ? "NICs" : "NVLink", h);
        qsort(tr->s, tr->n, sizeof *tr->s, lspan_cmp);
        uint32_t count[WEFT__LINKS_MAX_KINDS] = {0}, mask = 0;
        long long start = 0, idle_from = 0, idle_end = llround(L->idle_end * 1e9);
        for (size_t i = 0; i < tr->n;) {
            long long now = llround(tr->s[i].t * 1e9);
            /* Everything that changes at this nanosecond. */
            while (i < tr->n && llround(tr->s[i].t * 1e9) == now) {
                count[tr->s[i].kind] += (uint32_t)tr->s[i].delta;
                i++;
            }
            uint32_t m = 0;
            for (uint32_t k = 0; k < L->kinds; k++)
                if (count[k])
                    m |= 1u << k;
            if (m == mask)
                continue;
            if (!mask && idle_end > 0) /* busy from now: the idle time before it */
                idle_slice(f, pid, g + 1, idle_from, now < idle_end ? now : idle_end);
            if (!m)
                idle_from = now;
            if (mask && now > start) {
                fprintf(f, ",\n{\"name\":\"");
                const char *sep = "";
                for (uint32_t k = 0; k < L->kinds; k++)
                    if (mask >> k & 1) {
                        fprintf(f, "%s%s", sep, names[k]);
                        sep = "+";
                    }
                fprintf(f, "\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":", pid, g + 1);
                ns_ts(f, start);
                fprintf(f, ",\"dur\":");
                ns_ts(f, now - start);
                fprintf(f, "}");
            }
            mask = m;
            start = now;
        }
        if (idle_end > 0)
            idle_slice(f, pid, g + 1, idle_from, idle_end);
    }
}

/* Which link groups each kind of collective of the step loads, per stage. */
static weft_err step_links(weft__links *L, weft_work_ctx *c, const weft_parallel *p, uint32_t dp,
                           const weft_step_result *r)
{
    uint32_t n = c->ranks;
    weft_err err = weft__links_init(L, c->topo, WEFT__COMM_COUNT, p->pp);
    if (err)
        return err;
    uint32_t *pos = weft__malloc((n ? n : 1) * sizeof *pos);
    uint32_t *stage = weft__malloc((n ? n : 1) * sizeof *stage);
    if (!pos || !stage) {
        weft__free(pos);
        weft__free(stage);
        return WEFT_ENOMEM;
    }
    weft__work_groups(p, dp, 1u << WEFT_DIM_PP, pos);
    for (uint32_t g = 0; g < n; g += p->pp)
        for (uint32_t s = 0; s < p->pp; s++) {
            stage[pos[g + s]] = s;
            if (s + 1 < p->pp)
                weft__links_mark(L, WEFT_COMM_PP, s, pos[g + s], pos[g + s + 1]);
        }
    static const struct {
        uint32_t kind, mask;
    } kinds[] = {
        {WEFT_COMM_TP, 1u << WEFT_DIM_TP},
        {WEFT_COMM_CP, 1u << WEFT_DIM_CP},
        {WEFT_COMM_EP, 1u << WEFT_DIM_EP},
        {WEFT_COMM_DP, 1u << WEFT_DIM_DP | 1u << WEFT_DIM_EP},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        uint32_t kind = kinds[k].kind;
        uint32_t gs = kind == WEFT_COMM_TP   ? p->tp
                      : kind == WEFT_COMM_CP ? p->cp
                      : kind == WEFT_COMM_EP ? p->ep
                                             : dp;
        if (gs < 2 || !(r->comm_s[kind] > 0))
            continue;
        weft__work_groups(p, dp, kinds[k].mask, pos);
        for (uint32_t g = 0; g < n; g += gs)
            for (uint32_t i = 0; i < gs; i++) {
                if (kind == WEFT_COMM_EP) { /* all-to-all: every pair */
                    for (uint32_t j = 0; j < gs; j++)
                        if (j != i)
                            weft__links_mark(L, kind, stage[pos[g + i]], pos[g + i], pos[g + j]);
                } else { /* a ring */
                    weft__links_mark(L, kind, stage[pos[g + i]], pos[g + i], pos[g + (i + 1) % gs]);
                }
            }
    }
    weft__free(pos);
    weft__free(stage);
    return WEFT_OK;
}

/* What the schedule's callback draws into. */
typedef struct draw {
    FILE *f;
    bool *first;
    weft__links *L;
} draw;

/* A forward or backward on its stage's compute track, the send that
 * brought its input on the sender's track, and the links they load. */
static void draw_event(void *arg, const weft__pipe_event *e)
{
    draw *w = arg;
    uint32_t s = e->stage;
    if (e->sent) {
        uint32_t from = e->fwd ? s - 1 : s + 1;
        slice(w->f, w->first, from, e->fwd ? TID_PP : TID_PPB, e->fwd ? "send F" : "send B",
              e->unit, e->send0, e->send1);
        weft__links_load(w->L, WEFT_COMM_PP, e->fwd ? s - 1 : s, e->send0, e->send1);
    }
    slice(w->f, w->first, s, TID_COMPUTE, e->fwd ? "F" : "B", e->unit, e->t0, e->t1);
    weft__links_load(w->L, WEFT_COMM_TP, s, e->t0, e->t1);
    weft__links_load(w->L, WEFT_COMM_CP, s, e->t0, e->t1);
    weft__links_load(w->L, WEFT_COMM_EP, s, e->t0, e->t1);
}

/* The loads of draw_event without the drawing. */
static void load_event(void *arg, const weft__pipe_event *e)
{
    weft__links *L = arg;
    uint32_t s = e->stage;
    if (e->sent)
        weft__links_load(L, WEFT_COMM_PP, e->fwd ? s - 1 : s, e->send0, e->send1);
    weft__links_load(L, WEFT_COMM_TP, s, e->t0, e->t1);
    weft__links_load(L, WEFT_COMM_CP, s, e->t0, e->t1);
    weft__links_load(L, WEFT_COMM_EP, s, e->t0, e->t1);
}

weft_err weft__work_step_links(weft_work_ctx *c, const weft_parallel *p, uint32_t dpn,
                               const weft_step_result *r, weft__links *L)
{
    weft_err err = step_links(L, c, p, dpn, r);
    if (err)
        return err;
    uint32_t pp = p->pp, v = r->counts.vstages, u = r->counts.microbatches * v;
    double *clock = weft__calloc(pp, sizeof *clock);
    if (!clock)
        return WEFT_ENOMEM;
    err =
        weft__work_pipeline(pp, u, r->fwd_s / v, r->bwd_s / v, r->pp_send_s, load_event, L, clock);
    /* As weft__work_trace: the exposed gradient reduction after each
     * stage's flush. */
    double dp = r->exposed_s[WEFT_COMM_DP];
    for (uint32_t s = 0; !err && s < pp && dp > 0; s++)
        weft__links_load(L, WEFT_COMM_DP, s, clock[s], clock[s] + dp);
    weft__free(clock);
    return err ? err : L->oom ? WEFT_ENOMEM : WEFT_OK;
}

weft_err weft__work_trace(FILE *f, weft_work_ctx *c, const weft_parallel *p, uint32_t dpn,
                          const weft_step_result *r, weft_diag *d)
{
    weft__links L;
    if (step_links(&L, c, p, dpn, r)) {
        weft__links_fini(&L);
        return weft_diag_code(d, WEFT_ENOMEM);
    }
    uint32_t pp = p->pp, v = r->counts.vstages, u = r->counts.microbatches * v;
    double fw = r->fwd_s / v, bw = r->bwd_s / v, send = r->pp_send_s;
    double *clock = weft__calloc(pp, sizeof *clock);
    weft_err err = WEFT_OK;
    if (!clock) {
        err = weft_diag_code(d, WEFT_ENOMEM);
        goto free_all;
    }
    bool first = true;
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
    for (uint32_t s = 0; s < pp; s++) {
        meta(f, &first, "process_name", s, 0, "stage", s);
        meta(f, &first, "thread_name", s, TID_COMPUTE, "compute", UINT32_MAX);
        meta(f, &first, "thread_name", s, TID_PP, "pp sends forward", UINT32_MAX);
        meta(f, &first, "thread_name", s, TID_PPB, "pp sends backward", UINT32_MAX);
        meta(f, &first, "thread_name", s, TID_DP, "dp gradients", UINT32_MAX);
        meta(f, &first, "thread_name", s, TID_OPT, "optimizer", UINT32_MAX);
    }
    draw w = {f, &first, &L};
    if (weft__work_pipeline(pp, u, fw, bw, send, draw_event, &w, clock)) {
        err = weft_diag_code(d, WEFT_ENOMEM);
        goto free_all;
    }
    /* After the flush: the exposed gradient reduction, the tied
     * embedding's all-reduce on the first and last stage (every stage
     * waits for it: the optimizer step follows the gradients' clipping
     * norm over the whole model), then the optimizer. */
    double dp = r->exposed_s[WEFT_COMM_DP], tied = r->tied_s;
    for (uint32_t s = 0; s < pp; s++) {
        double t = clock[s];
        if (dp > 0) {
            slice(f, &first, s, TID_DP, "dp", 0, t, t + dp);
            weft__links_load(&L, WEFT_COMM_DP, s, t, t + dp);
        }
        if (tied > 0 && (s == 0 || s == pp - 1))
            slice(f, &first, s, TID_DP, "tied embedding", 0, t + dp, t + dp + tied);
        slice(f, &first, s, TID_OPT, "adam", 0, t + dp + tied, t + dp + tied + r->optimizer_s);
    }
    if (L.oom) {
        err = weft_diag_code(d, WEFT_ENOMEM);
        goto free_all;
    }
    if (c->trace_idle)
        L.idle_end = r->step_s;
    const char *names[WEFT__COMM_COUNT];
    for (int k = 0; k < WEFT__COMM_COUNT; k++)
        names[k] = weft_comm_kind_name((weft_comm_kind)k);
    weft__links_write(f, &first, &L, pp, names);
    fprintf(f, "\n]}\n");
    if (fflush(f) || ferror(f))
        err = weft_diag_set(d, WEFT_EIO, "trace: write error");
free_all:
    weft__links_fini(&L);
    weft__free(clock);
    return err;
}
