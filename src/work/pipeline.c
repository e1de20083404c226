/* The pipeline schedule of a step, event by event: the same schedule sets
 * the step's time (step.c) and is drawn by its trace (trace.c), so the
 * trace ends where the step does. */
#include "base/alloc.h"
#include "work/work_internal.h"

static double maxd(double a, double b)
{
    return a > b ? a : b;
}

weft_err weft__work_pipeline(uint32_t pp, uint32_t u, double fw, double bw, double send,
                             weft__pipe_cb cb, void *arg, double *clock)
{
    /* fend, bend [s][i]: end of F and B of unit i on stage s (0: not yet). */
    size_t cells = (size_t)pp * u;
    double *fend = weft__calloc(cells ? cells : 1, sizeof *fend);
    double *bend = weft__calloc(cells ? cells : 1, sizeof *bend);
    uint32_t *next = weft__calloc(pp, 3 * sizeof *next);
    weft_err err = WEFT_OK;
    if (!fend || !bend || !next) {
        err = WEFT_ENOMEM;
        goto free_all;
    }
    uint32_t *nf = next + pp, *nbk = next + 2 * (size_t)pp;
    for (uint32_t s = 0; s < pp; s++)
        clock[s] = 0;
    /* Stage s runs w = min(pp - s - 1, u) forwards, then alternates one
     * forward and one backward, then the w remaining backwards. Op k of
     * stage s is a forward of unit nf or a backward of unit nb. Every pass
     * runs each stage as far as its inputs allow. */
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
                    ready =
                        s + 1 < pp ? bend[(size_t)(s + 1) * u + i] + send : fend[(size_t)s * u + i];
                }
                weft__pipe_event e;
                e.stage = s;
                e.unit = i;
                e.fwd = fwd;
                e.t0 = maxd(ready, clock[s]);
                e.t1 = e.t0 + (fwd ? fw : bw);
                e.sent = ready > 0 && send > 0 && ((fwd && s > 0) || (!fwd && s + 1 < pp));
                e.send0 = ready - send;
                e.send1 = ready;
                if (cb)
                    cb(arg, &e);
                clock[s] = e.t1;
                (fwd ? fend : bend)[(size_t)s * u + i] = e.t1;
                (fwd ? nf : nbk)[s]++;
                next[s]++;
                progress = true;
            }
        }
    }
free_all:
    weft__free(fend);
    weft__free(bend);
    weft__free(next);
    return err;
}
