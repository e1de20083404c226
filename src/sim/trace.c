/* The trace writer. See trace.h. */
#include "sim/trace.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/json.h"
#include "weft/protocol.h"
#include "weft/sim.h"

/* One slice placed on a track: a rank (its sends) or a link. Times are
 * picoseconds. */
typedef struct span {
    int64_t start, end;
    uint32_t track; /* rank, or link id */
    uint32_t flow;
} span;

/* A span's end, for the sweep's second order. */
typedef struct span_end {
    int64_t end;
    uint32_t idx; /* into the track's spans */
} span_end;

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
 * characters dropped (base/json.h). */
static void json_str(FILE *f, const char *s)
{
    weft__json_string(f, s, WEFT__JSON_CTRL_DROP | WEFT__JSON_RAW_BYTES);
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

static int end_cmp(const void *a, const void *b)
{
    const span_end *x = a, *y = b;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* "reduce 3→4 chunk 12", "copy 0→1 chunks 4-7", "nop 3". */
static void op_name(char *buf, size_t len, weft_op o)
{
    if (o.kind == WEFT_OP_NOP || o.count == 0)
        snprintf(buf, len, "nop %u", o.src_rank.v);
    else if (o.count == 1)
        snprintf(buf, len, "%s %u\xe2\x86\x92%u chunk %u", weft_op_kind_name(o.kind), o.src_rank.v,
                 o.dst_rank.v, o.dst_index);
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

/* The bytes of one slice (one chunk's bytes per unit of count; see
 * plan_sim.c). */
static double slice_bytes(const weft_plan *p, const sim_engine *e, uint32_t slices, uint32_t flow)
{
    return sim_engine_flow_bytes(e, flow) * weft_plan_op(p, flow / slices).count;
}

/* The complete event of one slice alone on (pid, tid) from t0 to t1. */
static void slice_event(writer *w, const weft_plan *p, const sim_engine *e, uint32_t slices,
                        uint32_t flow, int64_t t0, int64_t t1, uint32_t pid, uint32_t tid)
{
    uint32_t op = flow / slices;
    weft_op o = weft_plan_op(p, op);
    char name[96];
    op_name(name, sizeof name, o);
    sep(w);
    fprintf(w->f,
            "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":", name,
            weft_op_kind_name(o.kind), pid, tid);
    put_us(w->f, t0);
    fputs(",\"dur\":", w->f);
    put_us(w->f, t1 - t0);
    fprintf(w->f,
            ",\"args\":{\"op\":%u,\"kind\":\"%s\",\"src\":%u,\"dst\":%u,\"chunk\":%u,"
            "\"count\":%u,\"slice\":%u,\"slices\":%u,\"bytes\":%.17g,"
            "\"src_buf\":\"%s\",\"src_slot\":%u,\"dst_buf\":\"%s\",\"dst_slot\":%u}}",
            op, weft_op_kind_name(o.kind), o.src_rank.v, o.dst_rank.v, o.dst_index, o.count,
            flow % slices, slices, slice_bytes(p, e, slices, flow), weft_buf_name(o.src_buf),
            o.src_index, weft_buf_name(o.dst_buf), o.dst_index);
}

/* The slices a segment names in its args: at most this many, the earliest
 * started first. */
enum { SEGMENT_LISTED = 8 };

/* The complete event of a segment [t0, t1) in which the k >= 2 slices
 * act[0..k) (indices into s) are all in flight: "K transfers", args
 * transfers (K), bytes (theirs together), ops (the first SEGMENT_LISTED by
 * start: "op N: NAME", "op N slice I: NAME" when ops are sliced) and more
 * (how many are not listed). */
static void segment_event(writer *w, const weft_plan *p, const sim_engine *e, uint32_t slices,
                          const span *s, const uint32_t *act, uint32_t k, int64_t t0, int64_t t1,
                          uint32_t pid, uint32_t tid)
{
    double bytes = 0;
    for (uint32_t i = 0; i < k; i++)
        bytes += slice_bytes(p, e, slices, s[act[i]].flow);
    /* The earliest SEGMENT_LISTED: spans are sorted by start, so the
     * smallest indices (a selection, k x SEGMENT_LISTED). */
    uint32_t pick[SEGMENT_LISTED], np = 0;
    for (uint32_t i = 0; i < k; i++) {
        uint32_t v = act[i], at = np;
        while (at > 0 && pick[at - 1] > v)
            at--;
        if (at >= SEGMENT_LISTED)
            continue;
        if (np < SEGMENT_LISTED)
            np++;
        memmove(pick + at + 1, pick + at, (np - 1 - at) * sizeof *pick);
        pick[at] = v;
    }
    sep(w);
    fprintf(w->f,
            "{\"name\":\"%u transfers\",\"cat\":\"transfers\",\"ph\":\"X\",\"pid\":%u,"
            "\"tid\":%u,\"ts\":",
            k, pid, tid);
    put_us(w->f, t0);
    fputs(",\"dur\":", w->f);
    put_us(w->f, t1 - t0);
    fprintf(w->f, ",\"args\":{\"transfers\":%u,\"bytes\":%.17g,\"ops\":[", k, bytes);
    for (uint32_t i = 0; i < np; i++) {
        uint32_t flow = s[pick[i]].flow;
        char name[96], item[160];
        op_name(name, sizeof name, weft_plan_op(p, flow / slices));
        if (slices > 1)
            snprintf(item, sizeof item, "op %u slice %u: %s", flow / slices, flow % slices, name);
        else
            snprintf(item, sizeof item, "op %u: %s", flow / slices, name);
        fputs(i ? "," : "", w->f);
        json_str(w->f, item);
    }
    fprintf(w->f, "],\"more\":%u}}", k - np);
}

/* One track's events, spans s[0..n) sorted by start: a slice of zero
 * length is an event of its own; the others are swept in time order and
 * every interval between consecutive starts and ends in which something is
 * in flight is one event: the slice itself when it is alone, else a
 * segment naming them all. The events are disjoint but for the zero-length
 * ones, which nest in the segment around them. Scratch: ends n, act n,
 * pos n. */
static void write_track(writer *w, const weft_plan *p, const sim_engine *e, uint32_t slices,
                        const span *s, uint32_t n, uint32_t pid, uint32_t tid, span_end *ends,
                        uint32_t *act, uint32_t *pos)
{
    uint32_t ne = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (s[i].end > s[i].start)
            ends[ne++] = (span_end){s[i].end, i};
        else
            slice_event(w, p, e, slices, s[i].flow, s[i].start, s[i].start, pid, tid);
    }
    qsort(ends, ne, sizeof *ends, end_cmp);
    uint32_t i = 0, j = 0, k = 0;
    int64_t t = 0;
    while (j < ne) {
        while (i < n && s[i].end <= s[i].start)
            i++;
        int64_t next = i < n && s[i].start < ends[j].end ? s[i].start : ends[j].end;
        if (k == 1 && next > t)
            slice_event(w, p, e, slices, s[act[0]].flow, t, next, pid, tid);
        else if (k > 1 && next > t)
            segment_event(w, p, e, slices, s, act, k, t, next, pid, tid);
        for (; j < ne && ends[j].end == next; j++) { /* swap-remove */
            uint32_t at = pos[ends[j].idx];
            act[at] = act[--k];
            pos[act[at]] = at;
        }
        for (; i < n && s[i].start == next; i++) {
            if (s[i].end > s[i].start) {
                pos[i] = k;
                act[k++] = i;
            }
        }
        t = next;
    }
}

/* The events of spans s[0..n) (sorted by track): one process per rank with
 * one track "sends" (links == false), or one process "links" with one
 * track per link that carried anything. */
static void write_tracks(writer *w, const weft_topo *t, const weft_plan *p, const sim_engine *e,
                         uint32_t slices, const span *s, uint32_t n, bool links, uint32_t base,
                         const char *label, span_end *ends, uint32_t *act, uint32_t *pos)
{
    char name[2 * WEFT_TOPO_NAME_MAX + 96];
    uint32_t tid = 0; /* links: the current link's track */
    for (uint32_t i = 0, j; i < n; i = j) {
        for (j = i; j < n && s[j].track == s[i].track; j++)
            ;
        uint32_t pid = links ? base + weft_plan_get_info(p)->nranks + 1 : base + 1 + s[i].track;
        if (links) {
            weft_link_id id = {s[i].track};
            snprintf(name, sizeof name, "%s -> %s",
                     weft_topo_node_name(t, weft_topo_link_src(t, id)),
                     weft_topo_node_name(t, weft_topo_link_dst(t, id)));
            meta(w, "thread", pid, tid, name, tid);
        } else {
            snprintf(name, sizeof name, "%s%srank %u", label ? label : "", label ? ": " : "",
                     s[i].track);
            meta(w, "process", pid, -1, name, pid);
            meta(w, "thread", pid, tid, "sends", tid);
        }
        write_track(w, p, e, slices, s + i, j - i, pid, tid, ends, act, pos);
        if (links)
            tid++;
    }
}

/* Whether op id is a compute op the run charged (trace.h): opb is NULL
 * when none is. */
static bool charged(const weft_plan *p, const weft_sim_opts *o, const double *opb, uint32_t id)
{
    weft_compute cp = weft_plan_op_compute(p, id);
    return opb && cp != WEFT_COMPUTE_NONE && o->compute_s_per_b[cp] > 0;
}

/* The complete event of compute op `op` from t0 to t1: named after its
 * kind, args op, rank, bytes, seconds (bytes x s_per_b, the product
 * plan_sim.c charged), s_per_b and source. */
static void compute_event(writer *w, const weft_plan *p, const weft_sim_opts *o, const double *opb,
                          uint32_t op, int64_t t0, int64_t t1, uint32_t pid, uint32_t tid)
{
    weft_compute cp = weft_plan_op_compute(p, op);
    double rate = o->compute_s_per_b[cp];
    sep(w);
    fprintf(w->f, "{\"name\":\"%s\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":",
            weft_compute_name(cp), pid, tid);
    put_us(w->f, t0);
    fputs(",\"dur\":", w->f);
    put_us(w->f, t1 - t0);
    fprintf(w->f,
            ",\"args\":{\"op\":%u,\"rank\":%u,\"bytes\":%.17g,\"seconds\":%.17g,"
            "\"s_per_b\":%.17g,\"source\":",
            op, weft_plan_op(p, op).src_rank.v, opb[op], opb[op] * rate, rate);
    if (o->compute_source)
        json_str(w->f, o->compute_source);
    else
        fputs("null", w->f);
    fputs("}}", w->f);
}

/* The compute tracks of spans c[0..n) (sorted by rank, then start; flow is
 * the op): a rank's slices go to the first of its threads "compute",
 * "compute 2", ... (tid 1, 2, ...) whose last slice has ended, so each
 * thread's slices are disjoint. A rank without sends gets its process
 * named here (sends[r] false). Scratch: lane_end n, lane n. */
static void write_compute(writer *w, const weft_plan *p, const weft_sim_opts *o, const double *opb,
                          const span *c, uint32_t n, const bool *sends, uint32_t base,
                          int64_t *lane_end, uint32_t *lane)
{
    char name[96];
    for (uint32_t i = 0, j; i < n; i = j) {
        uint32_t nl = 0, r = c[i].track, pid = base + 1 + r;
        for (j = i; j < n && c[j].track == r; j++) {
            uint32_t l = 0;
            while (l < nl && lane_end[l] > c[j].start)
                l++;
            if (l == nl)
                nl++;
            lane_end[l] = c[j].end;
            lane[j] = l;
        }
        if (!sends[r]) {
            snprintf(name, sizeof name, "%s%srank %u", o->trace_label ? o->trace_label : "",
                     o->trace_label ? ": " : "", r);
            meta(w, "process", pid, -1, name, pid);
        }
        for (uint32_t l = 0; l < nl; l++) {
            if (l)
                snprintf(name, sizeof name, "compute %u", l + 1);
            meta(w, "thread", pid, l + 1, l ? name : "compute", l + 1);
        }
        for (uint32_t k = i; k < j; k++)
            compute_event(w, p, o, opb, c[k].flow, c[k].start, c[k].end, pid, lane[k] + 1);
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
                        const weft_sim_opts *o, uint64_t size, weft_diag *d)
{
    uint32_t slices = o->slices, run = o->trace_run;
    const char *label = o->trace_label;
    uint32_t nranks = weft_plan_get_info(p)->nranks, nf = sim_engine_num_flows(e);
    uint32_t nops = weft_plan_num_ops(p);
    uint32_t base = run ? (run - 1) * (nranks + 1) : 0;
    /* The plan's slices are the engine's first flows (op x slices + slice);
     * a plan with circuits has more after them, its epochs' gates and drain
     * markers (plan_epochs.c), which carry no op and are not drawn. */
    uint64_t op_flows = (uint64_t)nops * slices;
    if (nf > op_flows)
        nf = (uint32_t)op_flows;
    /* The bytes of every op, as plan_sim.c charges compute ops: only a
     * sized plan's are, and only at a rate > 0. */
    double *opb = NULL;
    bool rated = false;
    for (int k = 0; k < WEFT__COMPUTE_COUNT; k++)
        rated = rated || (k != WEFT_COMPUTE_NONE && o->compute_s_per_b[k] > 0);
    if (rated && weft_plan_sized(p)) {
        opb = weft__malloc(((size_t)nops + 1) * sizeof *opb);
        if (!opb)
            return weft_diag_set(d, WEFT_ENOMEM, "sim: out of memory for the trace's op bytes");
        weft_err berr = weft_plan_op_bytes_at(p, (double)size, opb, d);
        if (berr) {
            weft__free(opb);
            return berr;
        }
    }
    /* Every flow on its source rank (a charged compute op's slice 0 on its
     * compute track instead, its other slices nowhere: they take no time),
     * and once per link of its route. */
    uint64_t total = nf;
    uint32_t ncomp = 0;
    for (uint32_t fl = 0; fl < nf; fl++) {
        uint32_t n;
        const uint32_t *route;
        sim_engine_flow_route(e, fl, &n, &route);
        total += n;
        if (fl % slices == 0 && charged(p, o, opb, fl / slices))
            ncomp++;
    }
    if (total >= UINT32_MAX / 3) {
        weft__free(opb);
        return weft_diag_set(d, WEFT_ELIMIT,
                             "sim: a trace of %llu slice placements is too "
                             "large",
                             (unsigned long long)total);
    }
    uint32_t ns = (uint32_t)total;
    span *s = weft__malloc((ns ? ns : 1) * sizeof *s);
    uint32_t *scratch = weft__malloc((ns ? 2 * (size_t)ns : 1) * sizeof *scratch);
    span_end *end = weft__malloc((ns ? ns : 1) * sizeof *end);
    int64_t *lane_end = weft__malloc((ncomp ? ncomp : 1) * sizeof *lane_end);
    bool *sends = weft__calloc(nranks ? nranks : 1, sizeof *sends);
    weft_err err = WEFT_ENOMEM;
    if (!s || !scratch || !end || !lane_end || !sends)
        goto free_all;
    uint32_t nrank_spans = 0, k = 0, nc = 0;
    span *comp = s + ns - ncomp; /* the tail: every flow placed below has a route */
    for (uint32_t fl = 0; fl < nf; fl++) {
        double start, drained, done;
        sim_engine_flow_times(e, fl, &start, &drained, &done);
        uint32_t op = fl / slices, r = weft_plan_op(p, op).src_rank.v;
        if (charged(p, o, opb, op)) {
            if (fl % slices == 0)
                comp[nc++] = (span){ps(start), ps(done), r, op};
            continue;
        }
        s[k++] = (span){ps(start), ps(done), r, fl};
        sends[r] = true;
    }
    nrank_spans = k;
    for (uint32_t fl = 0; fl < nf; fl++) {
        double start, drained, done;
        uint32_t n;
        const uint32_t *route;
        sim_engine_flow_times(e, fl, &start, &drained, &done);
        sim_engine_flow_route(e, fl, &n, &route);
        for (uint32_t i = 0; i < n; i++)
            s[k++] = (span){ps(start), ps(drained), route[i], fl};
    }
    uint32_t nlink_spans = k - nrank_spans;
    qsort(s, nrank_spans, sizeof *s, span_cmp);
    qsort(s + nrank_spans, nlink_spans, sizeof *s, span_cmp);
    qsort(comp, ncomp, sizeof *comp, span_cmp);
    writer w = {f, run <= 1};
    /* The first failed write sets errno and the stream's error flag;
     * nothing else here sets errno, so it still holds the reason at the
     * end (ENOSPC on a full disk). */
    errno = 0;
    if (run == 0)
        fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f);
    write_tracks(&w, t, p, e, slices, s, nrank_spans, false, base, label, end, scratch,
                 scratch + ns);
    write_compute(&w, p, o, opb, comp, ncomp, sends, base, lane_end, scratch);
    if (nlink_spans) {
        char name[128];
        snprintf(name, sizeof name, "%s%slinks", label ? label : "", label ? ": " : "");
        meta(&w, "process", base + nranks + 1, -1, name, base + nranks + 1);
        write_tracks(&w, t, p, e, slices, s + nrank_spans, nlink_spans, true, base, label, end,
                     scratch, scratch + ns);
    }
    if (run == 0)
        fputs("\n]}\n", f);
    err = WEFT_OK;
    if (fflush(f) || ferror(f))
        err = weft_diag_set(d, WEFT_EIO, "sim: writing the trace failed: %s",
                            strerror(errno ? errno : EIO));
free_all:
    weft__free(sends);
    weft__free(lane_end);
    weft__free(end);
    weft__free(scratch);
    weft__free(s);
    weft__free(opb);
    if (err == WEFT_ENOMEM)
        weft_diag_set(d, WEFT_ENOMEM, "sim: out of memory for the trace's %u slice placements", ns);
    return err;
}
