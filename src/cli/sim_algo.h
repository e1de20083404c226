/* What `weft sim` simulates for `--algo A`, built once and simulated at
 * every size: the classic ring as its rank order (weft_classic_ring_order,
 * simulated symmetry-reduced by weft_sim_ring_order; the same transfers as
 * the ring plan, see src/sim/ring_classic_test.c), the optimal plan
 * (weft_synth_optimal), or any other classic algorithm's plan. So
 * `weft sim --algo ring` and `weft plan --algo ring` are one schedule. */
#ifndef WEFT_CLI_SIM_ALGO_H
#define WEFT_CLI_SIM_ALGO_H

#include <stdbool.h>

#include "weft/sim.h"
#include "weft/synth.h"

typedef struct cli_sim_algo {
    const char *name; /* as given ("ring", "rings:4", "optimal", "plan") */
    weft_coll coll;
    uint32_t *ring;  /* the ring's rank order (owned), or NULL */
    weft_plan *plan; /* the plan (owned), or NULL for a ring */
    /* "nccl": NCCL's choice is made per size (weft_nccl_choose) and the
     * plan of the last choice kept, rebuilt when the choice changes. */
    bool nccl;
    weft_nccl_fabric fabric;
    /* An algorithm that reduces in the network ("nvls", "nvls_tree",
     * "collnet_direct", "collnet_chain", or nccl's choice at the size last
     * prepared): it has no plan and runs as weft_sim_innet. */
    bool innet;
    weft_sim_innet_algo innet_algo;
    char built[24]; /* the weft algorithm `plan` runs ("rings:16") */
    /* optimal with a traffic matrix on a fabric with an OCS: the plan is
     * the circuit schedule (docs/ocs.md) of `configs` configurations, and
     * the label says so. */
    bool circuits;
    uint32_t configs;
    uint32_t max_ops;
} cli_sim_algo;

/* The default of --max-ops: a plan's ops cost about 200 bytes and 1 us
 * to build and simulate, and a ring over N ranks has 2N(N-1) of them, so
 * this admits a ring allreduce on 1,024 ranks (2,095,104 ops) in seconds
 * and about 0.5 GB. */
#define CLI_SIM_MAX_OPS 2097152u

/* --max-ops of weft sim and weft plan: text (NULL: absent) into *out, the
 * default CLI_SIM_MAX_OPS when absent. False when it is not a decimal 1 ..
 * WEFT_PLAN_MAX_OPS (the caller reports the usage error). */
bool cli_max_ops_parse(const char *text, uint32_t *out);

/* Builds a plan of algorithm `name` (classic or "optimal") within max_ops
 * ops (0: no limit), with the one message both commands give: optimal is
 * refused before building when it cannot fit ("optimal allreduce on N
 * ranks has at least X ops, more than M (the limit, --max-ops)"), a
 * classic plan stops building at the limit ("ring allreduce on N ranks has
 * more than M ops (the limit, --max-ops)"). oo may be NULL (defaults);
 * opt, when not NULL, receives optimal's report. */
weft_err cli_build_limited(const weft_topo *t, const char *name, weft_coll coll, weft_rank root,
                           uint32_t max_ops, const weft_optimal_opts *oo, weft_plan **out,
                           weft_optimal *opt, weft_diag *d);

/* Builds the alltoallv plan of algorithm `name` for traffic matrix m: a
 * classic all-to-all (weft_synth_classic_traffic, which stops at max_ops
 * with the message cli_build_limited gives) or "optimal", the plan from the
 * matrix bound's flow (weft_synth_a2a_optimal_traffic; N^2 ops at most,
 * not limited). */
weft_err cli_build_traffic(const weft_topo *t, const char *name, const weft_traffic *m,
                           uint32_t max_ops, weft_plan **out, weft_diag *d);

/* Whether name is an in-network algorithm (nvls, nvls_tree,
 * collnet_direct, collnet_chain); *out its kind. */
bool cli_sim_innet_parse(const char *name, weft_sim_innet_algo *out);

/* Builds algorithm `name` for coll on t (broadcast and reduce rooted at
 * rank 0). need_plan forces a plan for the ring too (a trace is drawn per
 * op). A plan is limited to max_ops ops (WEFT_ELIMIT, d naming the
 * limit): classic plans stop building there; optimal is refused before
 * building when its plan cannot fit (every rank receives every other
 * rank's chunk at least once per phase: N(N-1) ops a phase). The ring's
 * rank order (no plan) has no limit. On failure nothing is kept and d says
 * why (unknown algorithm, a collective it does not build, a fabric it does
 * not fit, the limit). */
weft_err cli_sim_algo_build(cli_sim_algo *a, const weft_topo *t, const char *name, weft_coll coll,
                            bool need_plan, uint32_t max_ops, weft_diag *d);
/* Takes ownership of a loaded plan. */
void cli_sim_algo_from_plan(cli_sim_algo *a, weft_plan *p);
/* What cli_sim_algo_run simulates at `size`: for nccl, NCCL's plan at
 * that size is built here (a->plan) unless it is the last one, and *eff is
 * o with the protocol NCCL chose under the gpu model unless o names one;
 * for every other algorithm *eff is o and a->plan (or a->ring) stays. */
weft_err cli_sim_algo_prepare(cli_sim_algo *a, const weft_topo *t, uint64_t size,
                              const weft_sim_opts *o, weft_sim_opts *eff, weft_diag *d);
/* Simulates it at `size` bytes (nccl: NCCL's choice at that size, whose
 * plan is built here when it differs from the last one, run under the gpu
 * model with the protocol of that choice unless o names one). */
weft_err cli_sim_algo_run(cli_sim_algo *a, const weft_topo *t, uint64_t size,
                          const weft_sim_opts *o, weft_sim_result *out, weft_diag *d);
/* What runs at `size`: the name, or for nccl "nccl (ring, Simple, rings:16)". */
void cli_sim_algo_label(const cli_sim_algo *a, uint64_t size, char *buf, size_t len);
/* Whether settings o simulate plans only (cut-through; the runtime model,
 * whose streams queue their slices as the executor does): then the ring,
 * too, is built as a plan. */
bool cli_sim_needs_plan(const weft_sim_opts *o);
/* "model gpu (NCCL protocols)", "model runtime (weft's executor)", or for
 * fluid "model fluid, P slices per transfer, alpha A s[, cut through]"
 * (--slice-bytes: "slices of B bytes" instead of the count), into buf. */
void cli_sim_model_text(const weft_sim_opts *o, char *buf, size_t len);
/* Frees what it owns; safe on a zeroed struct and twice. */
void cli_sim_algo_fini(cli_sim_algo *a);

#endif
