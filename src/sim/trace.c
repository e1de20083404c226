/* The trace writer. See trace.h. */
#include "sim/trace.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "weft/protocol.h"
#include "weft/sim.h"

/* One slice placed on a track: a rank (its sends) or a link. Times are
 * picoseconds. */
typedef struct span {
    int64_t start, end;
    uint32_t track; /* rank, or link id */
    uint32_t flow;
    uint32_t lane; /* filled by assign_lanes */
} span;

/* The trace being written: where, and whether an event was written yet
 * (every event after the first is preceded by ",\n"). */
typedef struct writer {
    FILE *f;
    bool first;
} writer;

static void sep(writer *w)
{
    if (!w->first)
        fputs(",\n", w->f);
    w->first = false;
}

/* Writes s as a JSON string; node names and labels are printable by
 * construction, but quotes and backslashes are escaped anyway and control
 * characters dropped. */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
    fputc('"', f);
}

/* Seconds to whole picoseconds; the engine's times are finite and >= 0. */
static int64_t ps(double s)
{
    return (int64_t)llround(s * 1e12);
}

/* Picoseconds as an exact decimal number of microseconds. */
static void put_us(FILE *f, int64_t q)
{
    fprintf(f, "%lld.%06lld", (long long)(q / 1000000), (long long)(q % 1000000));
}

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->flow != y->flow)
        return x->flow < y->flow ? -1 : 1;
    return 0;
}

/* A binary min-heap of lane numbers, ordered by key[lane] then lane (key
 * NULL: by lane alone). */
typedef struct lane_heap {
    uint32_t *v;
    uint32_t n;
    const int64_t *key;
} lane_heap;

static bool lane_less(const lane_heap *h, uint32_t a, uint32_t b)
{
    if (h->key && h->key[a] != h->key[b])
        return h->key[a] < h->key[b];
    return a < b;
}

static void heap_push(lane_heap *h, uint32_t lane)
{
    uint32_t i = h->n++;
    while (i > 0 && lane_less(h, lane, h->v[(i - 1) / 2])) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = lane;
}

static uint32_t heap_pop(lane_heap *h)
{
    uint32_t top = h->v[0], last = h->v[--h->n], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && lane_less(h, h->v[c + 1], h->v[c]))
            c++;
        if (!lane_less(h, h->v[c], last))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
    return top;
}

/* Gives every span of one track (s[0..n), sorted by start) the lowest lane
 * free at its start: a lane is free once its last span ended at or before
 * that start. Returns the number of lanes. scratch holds 2n entries
 * (the two heaps), end n (each lane's last end). */
static uint32_t assign_lanes(span *s, uint32_t n, uint32_t *scratch, int64_t *end)
{
    lane_heap busy = {scratch, 0, end}, idle = {scratch + n, 0, NULL};
    uint32_t lanes = 0;
    for (uint32_t i = 0; i < n; i++) {
        while (busy.n && end[busy.v[0]] <= s[i].start)
            heap_push(&idle, heap_pop(&busy));
        uint32_t lane = idle.n ? heap_pop(&idle) : lanes++;
        s[i].lane = lane;
        end[lane] = s[i].end;
        heap_push(&busy, lane);
    }
    return lanes;
}

/* "reduce 3→4 chunk 12", "copy 0→1 chunks 4-7", "nop 3". */
static void op_name(char *buf, size_t len, weft_op o)
{
    if (o.kind == WEFT_OP_NOP || o.count == 0)
        snprintf(buf, len, "nop %u", o.src_rank.v);
    else if (o.count == 1)
        snprintf(buf, len, "%s %u\xe2\x86\x92%u chunk %u", weft_op_kind_name(o.kind),
                 o.src_rank.v, o.dst_rank.v, o.dst_index);
    else
        snprintf(buf, len, "%s %u\xe2\x86\x92%u chunks %u-%u", weft_op_kind_name(o.kind),
                 o.src_rank.v, o.dst_rank.v, o.dst_index, o.dst_index + o.count - 1);
}

static void meta(writer *w, const char *what, uint32_t pid, int64_t tid, const char *name,
                 uint32_t sort)
{
    sep(w);
    fprintf(w->f, "{\"name\":\"%s_name\",\"ph\":\"M\",\"pid\":%u,", what, pid);
    if (tid >= 0)
        fprintf(w->f, "\"tid\":%lld,", (long long)tid);
    fputs("\"args\":{\"name\":", w->f);
    json_str(w->f, name);
    fprintf(w->f, "}},\n{\"name\":\"%s_sort_index\",\"ph\":\"M\",\"pid\":%u,", what, pid);
    if (tid >= 0)
        fprintf(w->f, "\"tid\":%lld,", (long long)tid);
    fprintf(w->f, "\"args\":{\"sort_index\":%u}}", sort);
}

/* The complete event of span s on (pid, tid). */
static void slice_event(writer *w, const weft_plan *p, const sim_engine *e, uint32_t slices,
                        const span *s, uint32_t pid, uint32_t tid)
{
    uint32_t op = s->flow / slices;
    weft_op o = weft_plan_op(p, op);
    char name[96];
    op_name(name, sizeof name, o);
    sep(w);
    fprintf(w->f, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":",
            name, weft_op_kind_name(o.kind), pid, tid);
    put_us(w->f, s->start);
    fputs(",\"dur\":", w->f);
    put_us(w->f, s->end - s->start);
    /* One chunk's bytes per unit of count (see plan_sim.c). */
    fprintf(w->f,
            ",\"args\":{\"op\":%u,\"kind\":\"%s\",\"src\":%u,\"dst\":%u,\"chunk\":%u,"
            "\"count\":%u,\"slice\":%u,\"slices\":%u,\"bytes\":%.17g,"
            "\"src_buf\":\"%s\",\"src_slot\":%u,\"dst_buf\":\"%s\",\"dst_slot\":%u}}",
            op, weft_op_kind_name(o.kind), o.src_rank.v, o.dst_rank.v, o.dst_index, o.count,
            s->flow % slices, slices, sim_engine_flow_bytes(e, s->flow) * o.count,
            weft_buf_name(o.src_buf), o.src_index, weft_buf_name(o.dst_buf), o.dst_index);
}

/* Lanes for spans s[0..n) (sorted by track), then the events: one process
 * per rank (links == false) or one process "links". */
static void write_tracks(writer *w, const weft_topo *t, const weft_plan *p,
                             const sim_engine *e, uint32_t slices, span *s, uint32_t n,
                             bool links, uint32_t base, const char *label, uint32_t *scratch,
                             int64_t *end)
{
    char name[2 * WEFT_TOPO_NAME_MAX + 96];
    uint32_t tid0 = 0; /* links: the first thread of the current link */
    for (uint32_t i = 0, j; i < n; i = j) {
        for (j = i; j < n && s[j].track == s[i].track; j++)
            ;
        uint32_t lanes = assign_lanes(s + i, j - i, scratch, end);
        uint32_t pid = links ? base + weft_plan_get_info(p)->nranks + 1 : base + 1 + s[i].track;
        if (!links) {
            snprintf(name, sizeof name, "%s%srank %u", label ? label : "", label ? ": " : "",
                     s[i].track);
            meta(w, "process", pid, -1, name, pid);
        }
        for (uint32_t k = 0; k < lanes; k++) {
            if (links) {
                weft_link_id id = {s[i].track};
                int m = snprintf(name, sizeof name, "%s -> %s",
                                 weft_topo_node_name(t, weft_topo_link_src(t, id)),
                                 weft_topo_node_name(t, weft_topo_link_dst(t, id)));
                if (k > 0 && m > 0 && (size_t)m < sizeof name)
                    snprintf(name + m, sizeof name - (size_t)m, " (%u)", k + 1);
            } else if (k == 0) {
                snprintf(name, sizeof name, "sends");
            } else {
                snprintf(name, sizeof name, "sends %u", k + 1);
            }
            meta(w, "thread", pid, tid0 + k, name, tid0 + k);
        }
        for (uint32_t k = i; k < j; k++)
            slice_event(w, p, e, slices, &s[k], pid, tid0 + s[k].lane);
        if (links)
            tid0 += lanes;
    }
}

weft_err weft_sim_trace_begin(FILE *f)
{
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f);
    return ferror(f) ? WEFT_EIO : WEFT_OK;
}

weft_err weft_sim_trace_end(FILE *f)
{
    fputs("\n]}\n", f);
    return fflush(f) || ferror(f) ? WEFT_EIO : WEFT_OK;
}

weft_err weft_sim_trace_end_results(FILE *f, const weft_sim_result *rs, size_t n)
{
    fprintf(f, "\n],\"metadata\":{\"model\":\"%s\",\"runs\":[",
            n ? weft_sim_model_name(rs[n - 1].model) : "");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s{\"size\":%llu,\"model\":\"%s\",\"proto\":", i ? "," : "",
                (unsigned long long)rs[i].size, weft_sim_model_name(rs[i].model));
        if (rs[i].proto >= 0)
            fprintf(f, "\"%s\"", weft_proto_name((weft_proto)rs[i].proto));
        else
            fputs("null", f);
        fprintf(f, ",\"slices\":%u}", rs[i].slices);
    }
    fputs("]}}\n", f);
    return fflush(f) || ferror(f) ? WEFT_EIO : WEFT_OK;
}

weft_err sim_trace_plan(FILE *f, const weft_topo *t, const weft_plan *p, const sim_engine *e,
                        uint32_t slices, uint32_t run, const char *label, weft_diag *d)
{
    uint32_t nranks = weft_plan_get_info(p)->nranks, nf = sim_engine_num_flows(e);
    uint32_t base = run ? (run - 1) * (nranks + 1) : 0;
    /* Every flow on its source rank, and once per link of its route. */
    uint64_t total = nf;
    for (uint32_t fl = 0; fl < nf; fl++) {
        uint32_t n;
        const uint32_t *route;
        sim_engine_flow_route(e, fl, &n, &route);
        total += n;
    }
    if (total >= UINT32_MAX / 3)
        return weft_diag_set(d, WEFT_ELIMIT, "sim: a trace of %llu slice placements is too "
                             "large", (unsigned long long)total);
    uint32_t ns = (uint32_t)total;
    span *s = weft__malloc((ns ? ns : 1) * sizeof *s);
    uint32_t *scratch = weft__malloc((ns ? 2 * (size_t)ns : 1) * sizeof *scratch);
    int64_t *end = weft__malloc((ns ? ns : 1) * sizeof *end);
    weft_err err = WEFT_ENOMEM;
    if (!s || !scratch || !end)
        goto free_all;
    uint32_t nrank_spans = 0, k = 0;
    for (uint32_t fl = 0; fl < nf; fl++) {
        double start, drained, done;
        sim_engine_flow_times(e, fl, &start, &drained, &done);
        s[k++] = (span){ps(start), ps(done), weft_plan_op(p, fl / slices).src_rank.v, fl, 0};
    }
    nrank_spans = k;
    for (uint32_t fl = 0; fl < nf; fl++) {
        double start, drained, done;
        uint32_t n;
        const uint32_t *route;
        sim_engine_flow_times(e, fl, &start, &drained, &done);
        sim_engine_flow_route(e, fl, &n, &route);
        for (uint32_t i = 0; i < n; i++)
            s[k++] = (span){ps(start), ps(drained), route[i], fl, 0};
    }
    qsort(s, nrank_spans, sizeof *s, span_cmp);
    qsort(s + nrank_spans, ns - nrank_spans, sizeof *s, span_cmp);
    writer w = {f, run <= 1};
    /* The first failed write sets errno and the stream's error flag;
     * nothing else here sets errno, so it still holds the reason at the
     * end (ENOSPC on a full disk). */
    errno = 0;
    if (run == 0)
        fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f);
    write_tracks(&w, t, p, e, slices, s, nrank_spans, false, base, label, scratch, end);
    if (ns > nrank_spans) {
        char name[128];
        snprintf(name, sizeof name, "%s%slinks", label ? label : "", label ? ": " : "");
        meta(&w, "process", base + nranks + 1, -1, name, base + nranks + 1);
        write_tracks(&w, t, p, e, slices, s + nrank_spans, ns - nrank_spans, true, base, label,
                     scratch, end);
    }
    if (run == 0)
        fputs("\n]}\n", f);
    err = WEFT_OK;
    if (fflush(f) || ferror(f))
        err = weft_diag_set(d, WEFT_EIO, "sim: writing the trace failed: %s",
                            strerror(errno ? errno : EIO));
free_all:
    weft__free(end);
    weft__free(scratch);
    weft__free(s);
    if (err == WEFT_ENOMEM)
        weft_diag_set(d, WEFT_ENOMEM, "sim: out of memory for the trace's %u slice placements",
                      ns);
    return err;
}
