/* The step as a Chrome trace-event document (chrome://tracing, Perfetto),
 * written as src/sim/trace.c writes plans: complete events ("ph":"X") in
 * microseconds, processes and threads named by metadata events, tracks
 * whose slices never overlap. The pipeline is scheduled here event by
 * event (1F1B over micro-batches x virtual stages, each stage's forward and
 * backward taking the busiest stage's time, each hop a pipeline send), so
 * the drawing shows the bubble where it is. */
#include <math.h>

#include "base/alloc.h"
#include "work/work_internal.h"

static void slice(FILE *f, bool *first, uint32_t pid, uint32_t tid, const char *name, uint32_t mb,
                  double t0, double t1)
{
    fprintf(f, "%s\n{\"name\":\"%s %u\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,"
               "\"dur\":%.3f}",
            *first ? "" : ",", name, mb, pid, tid, t0 * 1e6, (t1 - t0) * 1e6);
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

weft_err weft__work_trace(FILE *f, const weft_parallel *p, const weft_step_result *r,
                          weft_diag *d)
{
    uint32_t pp = p->pp, v = r->counts.vstages, u = r->counts.microbatches * v;
    double fw = r->fwd_s / v, bw = r->bwd_s / v, send = r->pp_send_s;
    /* done[s][i]: end of F (0) and B (1) of unit i on stage s. */
    size_t cells = (size_t)pp * u;
    double *fend = weft__calloc(cells, sizeof *fend), *bend = weft__calloc(cells, sizeof *bend);
    uint32_t *next = weft__calloc(pp, sizeof *next);
    double *clock = weft__calloc(pp, sizeof *clock);
    weft_err err = WEFT_OK;
    if (!fend || !bend || !next || !clock) {
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
    /* Stage s runs w = min(pp - s - 1, u) forwards, then alternates one
     * forward and one backward, then the w remaining backwards. Op k of
     * stage s is a forward of unit nf or a backward of unit nb. */
    uint32_t *nf = weft__calloc(pp, sizeof *nf), *nbk = weft__calloc(pp, sizeof *nbk);
    if (!nf || !nbk) {
        weft__free(nf);
        weft__free(nbk);
        err = weft_diag_code(d, WEFT_ENOMEM);
        goto free_all;
    }
    bool progress = true;
    while (progress) {
        progress = false;
        for (uint32_t s = 0; s < pp; s++) {
            for (;;) {
                uint32_t w = pp - s - 1 < u ? pp - s - 1 : u, k = next[s];
                if (k >= 2 * u)
                    break;
                bool fwd = k < w ? true : k >= 2 * u - w ? false : (k - w) % 2 == 0;
                uint32_t i = fwd ? nf[s] : nbk[s];
                double ready;
                if (fwd) {
                    if (s > 0 && fend[(size_t)(s - 1) * u + i] == 0)
                        break;
                    ready = s > 0 ? fend[(size_t)(s - 1) * u + i] + send : 0;
                } else {
                    if (s + 1 < pp && bend[(size_t)(s + 1) * u + i] == 0)
                        break;
                    if (fend[(size_t)s * u + i] == 0)
                        break;
                    ready = s + 1 < pp ? bend[(size_t)(s + 1) * u + i] + send
                                       : fend[(size_t)s * u + i];
                }
                double t0 = fmax(ready, clock[s]), t1 = t0 + (fwd ? fw : bw);
                if (ready > 0 && ready - send >= 0 && send > 0 &&
                    ((fwd && s > 0) || (!fwd && s + 1 < pp)))
                    slice(f, &first, fwd ? s - 1 : s + 1, fwd ? TID_PP : TID_PPB,
                          fwd ? "send F" : "send B", i,
                          ready - send, ready);
                slice(f, &first, s, TID_COMPUTE, fwd ? "F" : "B", i, t0, t1);
                clock[s] = t1;
                (fwd ? fend : bend)[(size_t)s * u + i] = t1;
                (fwd ? nf : nbk)[s]++;
                next[s]++;
                progress = true;
            }
        }
    }
    weft__free(nf);
    weft__free(nbk);
    double dp = r->exposed_s[WEFT_COMM_DP];
    for (uint32_t s = 0; s < pp; s++) {
        double t = clock[s];
        if (dp > 0)
            slice(f, &first, s, TID_DP, "dp", 0, t, t + dp);
        slice(f, &first, s, TID_OPT, "adam", 0, t + dp, t + dp + r->optimizer_s);
    }
    fprintf(f, "\n]}\n");
    if (fflush(f) || ferror(f))
        err = weft_diag_set(d, WEFT_EIO, "trace: write error");
free_all:
    weft__free(fend);
    weft__free(bend);
    weft__free(next);
    weft__free(clock);
    return err;
}
