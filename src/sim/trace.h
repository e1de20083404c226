/* Chrome trace-event JSON of a simulated plan (chrome://tracing, Perfetto).
 *
 * Process 1 "ranks" has one track per rank: every op slice is a complete
 * event ("ph":"X") on its source rank's track from its start (after alpha)
 * to its completion (drained plus route latency). Process 2 "links" has one
 * track per link that carried anything: the same slice appears on each link
 * of its route from its start until its bytes are drained. Times are in
 * microseconds. Output is deterministic (ops in id order, links in route
 * order).
 */
#ifndef WEFT_SIM_TRACE_H
#define WEFT_SIM_TRACE_H

#include <stdio.h>

#include "sim/engine.h"
#include "weft/plan.h"
#include "weft/sim.h"
#include "weft/topo.h"

/* Writes the trace of a finished run with resolved settings so, whose flow
 * op*so->slices+s is slice s of op; the top-level "metadata" names the model,
 * the protocol ("" outside the gpu model) and the slices. WEFT_EIO when
 * writing fails. */
weft_err sim_trace_plan(FILE *f, const weft_topo *t, const weft_plan *p, const sim_engine *e,
                        const weft_sim_opts *so, weft_diag *d);

#endif
