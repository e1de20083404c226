/* What `weft sim` simulates for `--algo A`: a candidate of weft/choose.h
 * (the ring as its rank order, the optimal plan, any other registry
 * spelling's plan), built once and simulated at every size, so that
 * `weft sim --algo ring` and `weft plan --algo ring` are one schedule and
 * `weft sim --compare` ranks what `weft sim --algo` runs. */
#ifndef WEFT_CLI_SIM_ALGO_H
#define WEFT_CLI_SIM_ALGO_H

#include <stdbool.h>

#include "weft/choose.h"
#include "weft/sim.h"
#include "weft/synth.h"

/* One candidate (weft/choose.h), built with the limit named --max-ops. */
typedef weft_candidate cli_sim_algo;

/* The default of --max-ops: a plan's ops cost about 200 bytes and 1 us
 * to build and simulate, and a ring over N ranks has 2N(N-1) of them, so
 * this admits a ring allreduce on 1,024 ranks (2,095,104 ops) in seconds
 * and about 0.5 GB. */
#define CLI_SIM_MAX_OPS 2097152u

/* --max-ops of weft sim and weft plan: text (NULL: absent) into *out, the
 * default CLI_SIM_MAX_OPS when absent. False when it is not a decimal 1 ..
 * WEFT_PLAN_MAX_OPS (the caller reports the usage error). */
bool cli_max_ops_parse(const char *text, uint32_t *out);

/* weft_choose_build, weft_choose_build_traffic and weft_candidate_build
 * (weft/choose.h) with the limit named "--max-ops" in their messages. */
weft_err cli_build_limited(const weft_topo *t, const char *name, weft_coll coll, weft_rank root,
                           uint32_t max_ops, const weft_optimal_opts *oo, weft_plan **out,
                           weft_optimal *opt, weft_diag *d);
weft_err cli_build_traffic(const weft_topo *t, const char *name, const weft_traffic *m,
                           uint32_t max_ops, weft_plan **out, weft_diag *d);
weft_err cli_sim_algo_build(cli_sim_algo *a, const weft_topo *t, const char *name, weft_coll coll,
                            bool need_plan, uint32_t max_ops, weft_diag *d);
/* Whether settings o simulate plans only (cut-through; the runtime model,
 * whose streams queue their slices as the executor does): then the ring,
 * too, is built as a plan. */
bool cli_sim_needs_plan(const weft_sim_opts *o);
/* "model gpu (NCCL protocols)", "model runtime (weft's executor)", or for
 * fluid "model fluid, P slices per transfer, alpha A s[, cut through]"
 * (--slice-bytes: "slices of B bytes" instead of the count), into buf. */
void cli_sim_model_text(const weft_sim_opts *o, char *buf, size_t len);
#endif
