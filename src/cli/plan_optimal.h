/* The `optimal` parts of `weft plan` (docs/optimal.md): its summary
 * lines, its JSON keys and its DOT drawing. cmd_plan.c builds the plan
 * and calls these. */
#ifndef WEFT_CLI_PLAN_OPTIMAL_H
#define WEFT_CLI_PLAN_OPTIMAL_H

#include <stdio.h>

#include "cli/json.h"
#include "weft/plan.h"
#include "weft/synth.h"

/* Prints the optimum, k, U and tree counts of each phase, then how the
 * plan compares with the best baseline by per-link throughput limit ("vs
 * best", "vs nccl") and, simulated at 1 GiB in the fabric's default model,
 * with the fastest baseline ("vs fastest": the ranking of weft sim
 * --compare, cli_sim_best_baseline; p is the optimal plan). Returns a CLI
 * exit code. */
int cli_optimal_print(FILE *f, const weft_topo *t, const weft_optimal *o,
                      const weft_plan_cost *cost, const weft_plan *p);
/* The most ops a baseline plan may have in weft plan --compare and the
 * comparison of --algo optimal (weft_synth_classic_limited): 4,194,304
 * ops take about 0.8 GB and 4 s to build and cost. Larger ones (rings:16
 * on 1,024 ranks has 33.5 million) are left out and named. */
#define CLI_PLAN_MAX_OPS 4194304u

/* The baselines for coll (alltoall from a matrix when matrix), as weft
 * plan --compare lists them: the registry's compare list
 * (weft_sched_candidates, WEFT_SCHED_FOR_COMPARE) without optimal, so
 * rings:K as rings:auto (NCCL's channel count) and as rings:4, nccl among
 * them. Returns how many were written (at most cap). */
size_t cli_baseline_names(weft_coll coll, bool matrix, const char **names, size_t cap);
/* "nccl (ring, Simple, rings:16)" (its choice at WEFT_NCCL_PLAN_BYTES),
 * "rings:auto (16)", or the name. */
void cli_algo_label(const weft_topo *t, const char *algo, weft_coll coll, char *buf, size_t len);
/* The best baseline by plan limit (weft_plan_cost_get) among
 * cli_baseline_names, those that build coll on t within CLI_PLAN_MAX_OPS:
 * its algbw in *best and what it is in `what` ("nccl (ring, Simple,
 * rings:16)"); `over` lists those over the limit ("nccl, rings:auto"), ""
 * when none. WEFT_ENOENT when none builds. */
weft_err cli_best_baseline(const weft_topo *t, weft_coll coll, weft_rat *best, char *what,
                           size_t len, char *over, size_t over_len);
/* Adds "bound", "bound_exact" and "phases" (k, U, trees per phase) to an
 * open JSON object. */
void cli_optimal_json(cli_json *j, const weft_optimal *o);
/* After an MSCCL export of an optimal plan (o, built with trees_per_root
 * `forced`, 0 when not) failed on a limit of profile mo: prints on stderr
 * what works instead. When the plan has more than one tree per root and
 * none was forced, the plan with one tree per root is built and exported
 * to memory; the hint then gives its throughput, or says it does not fit
 * either and names the profile with more room and the classic ring. */
void cli_optimal_msccl_hint(const weft_topo *t, const weft_optimal *o, uint32_t forced,
                            const weft_msccl_opts *mo);
/* Writes a DOT graph: the fabric's nodes and links (grey) and, over them,
 * the physical routes of root's trees (of the allgather phase for
 * allreduce), one colour per group of identical trees. Returns a CLI exit
 * code (input error for a root out of range). */
int cli_optimal_dot(FILE *f, const weft_topo *t, const weft_plan *p, const weft_optimal *o,
                    weft_rank root);

#endif
