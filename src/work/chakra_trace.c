/* The Chrome trace of a Chakra run (weft_chakra_run's trace file): per
 * rank a compute, a comm and (host CPU ops) a cpu track of the nodes'
 * spans, then the link groups each batch loaded (trace.c's weft__links).
 * File order: chakra_load < chakra_trace < chakra_run (work/chakra_int.h). */
#include <math.h>
#include <stdio.h>

#include "base/json.h"
#include "work/chakra_int.h"

static void ts(FILE *f, double t)
{
    long long ns = llround(t * 1e9);
    fprintf(f, "%lld.%03lld", ns / 1000, ns % 1000);
}

static void trace_spans(FILE *f, const run *R, uint32_t r, uint32_t tid, const span *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const weft_ck_node *nd = weft__ck_node_at(R, r, s[i].node);
        const char *name = weft_ck_name(&R->w->r[r].t, nd);
        const weft_ck_attrs *at = weft_ck_attr(&R->w->r[r].t, nd);
        long long a = llround(s[i].t0 * 1e9), b = llround(s[i].t1 * 1e9);
        fprintf(f, ",\n{\"name\":\"");
        if (name[0])
            weft__json_escape(f, name, WEFT__JSON_STRICT);
        else if (nd->type == WEFT_CK_COLL)
            fprintf(f, "%s", weft__ck_coll_name(at->comm_type));
        else
            fprintf(f, "node %llu", (unsigned long long)nd->id);
        fprintf(f, "\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":", r, tid);
        ts(f, (double)a * 1e-9);
        fprintf(f, ",\"dur\":%lld.%03lld,\"args\":{\"node\":%llu", (b - a) / 1000, (b - a) % 1000,
                (unsigned long long)nd->id);
        if (nd->type == WEFT_CK_COLL || nd->type == WEFT_CK_SEND)
            fprintf(f, ",\"bytes\":%llu", (unsigned long long)at->comm_size);
        fprintf(f, "}}");
    }
}

weft_err weft__ck_write_trace(FILE *f, run *R, weft_diag *d)
{
    const char *names[P2P + 1];
    for (int k = 0; k < P2P; k++)
        names[k] = weft_coll_name((weft_coll)k);
    names[P2P] = "send";
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n{\"name\":\"process_name\","
               "\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"rank 0\"}}");
    for (uint32_t r = 0; r < R->w->n; r++) {
        if (r)
            fprintf(f,
                    ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":0,"
                    "\"args\":{\"name\":\"rank %u\"}}",
                    r, r);
        fprintf(f,
                ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":1,\"args\":"
                "{\"name\":\"compute\"}},\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,"
                "\"tid\":2,\"args\":{\"name\":\"comm\"}}",
                r, r);
        if (R->rs[r].ncpu)
            fprintf(f,
                    ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":3,"
                    "\"args\":{\"name\":\"cpu\"}}",
                    r);
        trace_spans(f, R, r, 1, R->rs[r].comp, R->rs[r].ncomp);
        trace_spans(f, R, r, 2, R->rs[r].comm, R->rs[r].ncomm);
        trace_spans(f, R, r, 3, R->rs[r].cpu, R->rs[r].ncpu);
    }
    bool first = false;
    weft__links_write(f, &first, &R->links, R->w->n, names);
    fprintf(f, "\n]}\n");
    if (fflush(f) || ferror(f))
        return weft_diag_set(d, WEFT_EIO, "trace: write error");
    return WEFT_OK;
}
