/* weft choose: the schedule registry's candidates ranked by simulation.
 *
 * One ranking, served to every path that ranks schedules
 * (docs/architecture.md, "The schedule registry"): `weft plan --compare`
 * and `weft plan --algo optimal`'s "vs fastest", `weft sim --compare`,
 * `weft tune` and `weft step --coll-algo best`. For a fabric, a
 * collective, sizes and a simulator model, weft_choose lists the
 * registry's candidates (weft_sched_candidates), builds each once,
 * simulates it at every size and returns the times; weft_ranking_order
 * sorts them, fastest first. The module sits above `synth` (which builds)
 * and `sim` (which times), which do not call each other; the CLI only
 * prints what it returns.
 */
#ifndef WEFT_CHOOSE_H
#define WEFT_CHOOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/err.h"
#include "weft/plan.h"
#include "weft/sim.h"
#include "weft/synth.h"
#include "weft/topo.h"
#include "weft/traffic.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== One candidate =====================================================
 *
 * What is simulated for an algorithm's name, built once and simulated at
 * every size: the classic ring as its rank order (weft_classic_ring_order,
 * simulated symmetry-reduced by weft_sim_ring_order; the same transfers as
 * the ring plan, src/sim/ring_classic_test.c) unless a plan is needed, an
 * in-network algorithm (no plan: weft_sim_innet), nccl (NCCL's choice,
 * made per size), or any registry spelling's plan (weft_sched_build). */
typedef struct weft_candidate {
    const char *name; /* as given ("ring", "rings:4", "optimal", "plan") */
    weft_coll coll;
    uint32_t *ring;  /* the ring's rank order (owned), or NULL */
    weft_plan *plan; /* the plan (owned), or NULL for a ring or in the network */
    /* "nccl": NCCL's choice is made per size (weft_nccl_choose) and the
     * plan of the last choice kept, rebuilt when the choice changes. */
    bool nccl;
    weft_nccl_fabric fabric;
    /* Reduces in the network ("nvls", "nvls_tree", "collnet_direct",
     * "collnet_chain", or nccl's choice at the size last prepared): it has
     * no plan and runs as weft_sim_innet. */
    bool innet;
    weft_sim_innet_algo innet_algo;
    char built[24]; /* the weft algorithm nccl's plan runs ("rings:16") */
    /* nccl: what NCCL_ALGO, NCCL_PROTO and NCCL_BUFFSIZE force
     * (weft_candidate_force); unset, NCCL's own choice and 4 MiB. */
    bool force_algo_set, force_proto_set;
    weft_nccl_algo force_algo;
    weft_proto force_proto;
    uint64_t buffsize; /* 0: NCCL's default */
    /* optimal with a traffic matrix on a fabric with an OCS: the plan is
     * the circuit schedule (docs/ocs.md) of `configs` configurations. */
    bool circuits;
    uint32_t configs;
    uint32_t max_ops;
    const char *max_ops_flag; /* named in the limit's message, or NULL */
} weft_candidate;

/* Builds `name` for coll within max_ops ops (0: no limit), the message
 * naming the limit "(the limit, FLAG)" when max_ops_flag is not NULL
 * ("--max-ops"), "(the limit)" otherwise: a classic plan stops building
 * at the limit ("ring allreduce on N ranks has more than M ops (the
 * limit, --max-ops)"), optimal is refused before building when it cannot
 * fit. oo may be NULL (optimal's defaults); opt, when not NULL, receives
 * optimal's report. */
WEFT_API weft_err weft_choose_build(const weft_topo *t, const char *name, weft_coll coll,
                                    weft_rank root, uint32_t max_ops, const char *max_ops_flag,
                                    const weft_optimal_opts *oo, weft_plan **out, weft_optimal *opt,
                                    weft_diag *d);
/* The alltoallv plan of `name` for matrix m (weft_sched_build with the
 * matrix), the limit named as weft_choose_build names it. */
WEFT_API weft_err weft_choose_build_traffic(const weft_topo *t, const char *name,
                                            const weft_traffic *m, uint32_t max_ops,
                                            const char *max_ops_flag, weft_plan **out,
                                            weft_diag *d);

/* Whether name is an in-network algorithm (nvls, nvls_tree,
 * collnet_direct, collnet_chain); *out its kind. */
WEFT_API bool weft_choose_innet_parse(const char *name, weft_sim_innet_algo *out);

/* Builds candidate `name` for coll on t (broadcast and reduce rooted at
 * rank 0). need_plan forces a plan for the ring too. On failure nothing is
 * kept and d says why (unknown algorithm, a collective it does not build,
 * a fabric it does not fit, the limit). */
WEFT_API weft_err weft_candidate_build(weft_candidate *a, const weft_topo *t, const char *name,
                                       weft_coll coll, bool need_plan, uint32_t max_ops,
                                       const char *max_ops_flag, weft_diag *d);
/* For an nccl candidate: NCCL's choice per size among what NCCL_ALGO
 * (algo >= 0, a weft_nccl_algo) and NCCL_PROTO (proto >= 0, a weft_proto)
 * leave (weft_nccl_choose_forced), and NCCL_BUFFSIZE (buffsize > 0; its
 * step, WEFT_NCCL_STEP_OF, is a tree plan's forwarding step). A forced
 * ring or tree runs weft_synth_nccl_algo's plan (what a development-set
 * fixture's `nccl ALGO PROTO` line runs), PAT weft's bruck or hd, the
 * in-network algorithms weft_sim_innet. WEFT_EINVAL when a is not nccl,
 * for an algorithm without a weft model (p2p) or a bad protocol, or for
 * a buffsize under WEFT_NCCL_STEPS bytes; whether NCCL runs the choice on
 * the fabric is found per size (weft_candidate_prepare fails with
 * weft_nccl_choose_forced's reason). */
WEFT_API weft_err weft_candidate_force(weft_candidate *a, int algo, int proto, uint64_t buffsize,
                                       weft_diag *d);
/* NCCL's choice for an nccl candidate at `size`, as forced. */
WEFT_API weft_err weft_candidate_nccl_choice(const weft_candidate *a, uint64_t size,
                                             weft_nccl_choice *out, weft_diag *d);
/* Takes ownership of a plan built elsewhere (a loaded file). */
WEFT_API void weft_candidate_from_plan(weft_candidate *a, weft_plan *p);
/* What weft_candidate_run simulates at `size`: for nccl, NCCL's plan at
 * that size is built here unless it is the last one, and *eff is o with
 * the protocol NCCL chose under the gpu model unless o names one; for
 * every other candidate *eff is o. */
WEFT_API weft_err weft_candidate_prepare(weft_candidate *a, const weft_topo *t, uint64_t size,
                                         const weft_sim_opts *o, weft_sim_opts *eff, weft_diag *d);
/* Simulates it at `size` bytes. */
WEFT_API weft_err weft_candidate_run(weft_candidate *a, const weft_topo *t, uint64_t size,
                                     const weft_sim_opts *o, weft_sim_result *out, weft_diag *d);
/* What runs at `size`: the name, "rings:auto (16)", "optimal (circuits: 3
 * configs)", or for nccl "nccl (ring, Simple, rings:16)". */
WEFT_API void weft_candidate_label(const weft_candidate *a, uint64_t size, char *buf, size_t len);
/* Frees what it owns; safe on a zeroed struct and twice. */
WEFT_API void weft_candidate_fini(weft_candidate *a);

/* ==== The ranking ======================================================= */

typedef struct weft_choose_opts {
    weft_sim_opts sim; /* the ranking model (weft sim's settings) */
    /* Which registry list (weft_sched_candidates); FOR_COMPARE also ranks
     * flash:auto after flash (flash:K for K = 1, 2, 4, 8, the fastest per
     * size). */
    weft_sched_purpose purpose;
    bool innet;       /* also NCCL's in-network algorithms where NCCL runs them
                         for coll on the fabric (nvls, ...: no plan) */
    bool baselines;   /* leave optimal out (the baselines optimal is measured by) */
    bool need_plan;   /* simulate the ring as its plan, not its rank order */
    bool fail_on_sim; /* a candidate that builds but fails to simulate is an
                         error (weft tune), not a skipped row */
    /* The candidates instead of the registry's list when names is not NULL:
     * all n_names of them, each shorter than weft_choice's name (32). */
    const char *const *names;
    size_t n_names;
    const weft_traffic *matrix; /* alltoallv of this matrix (coll alltoall), or NULL */
    uint32_t max_ops;           /* a plan's most ops (0: no limit) */
    const char *max_ops_flag;   /* named in the limit's message (weft_choose_build) */
    /* Called before each build and simulation with what is done
     * ("building ring (1 of 9)", "ring at 1048576 (1M) (1 of 9)"); may be
     * NULL. The candidates run at once: it is called from any of
     * weft_choose's threads, one call at a time. */
    void (*progress)(void *arg, const char *what);
    void *progress_arg;
} weft_choose_opts;

/* The registry's compare list, the fabric's default model (weft sim's:
 * weft_sim_model_default), plans of any size, no progress. */
WEFT_API void weft_choose_opts_init(weft_choose_opts *o, const weft_topo *t);

/* One candidate's results. */
typedef struct weft_choice {
    char name[32];
    bool built;                   /* it built (res NULL then: its simulation failed) */
    bool innet;                   /* it reduces in the network (weft_sim_innet) */
    bool circuits;                /* it runs a circuit schedule (optimal on an OCS) */
    weft_sim_result *res;         /* per size, or NULL when skipped */
    char (*label)[48];            /* per size: what ran ("nccl (ring, Simple, rings:16)") */
    char why[WEFT_DIAG_MSG_SIZE]; /* !res: why it was skipped */
    bool have_digest;             /* internal: the plan's digest, to share equal runs */
    uint64_t digest[2];
} weft_choice;

typedef struct weft_ranking {
    weft_coll coll;
    size_t nsizes;
    size_t n;         /* candidates listed */
    size_t simulated; /* of them, simulated at every size */
    weft_choice *c;   /* in listing order */
} weft_ranking;

/* Builds and simulates every candidate of coll on t at sizes[0 .. nsizes)
 * (for a matrix: its alltoallv plans, simulated at sizes[0], the matrix's
 * total / N, algbw from its exact total). Candidates that do not build or
 * simulate are kept with the reason (unless fail_on_sim). Candidates that
 * would run exactly what an earlier one ran (the same plan and protocol:
 * nccl's choice is often rings:auto's plan) take its result without
 * simulating again. The candidates are built and simulated at once on
 * weft_threads_get() threads (weft/threads.h), the ranking the same to the
 * bit at any count. WEFT_ENOMEM, WEFT_EINVAL for no size or for a name in
 * o->names of 32 characters or more (naming it); *out is released with
 * weft_ranking_fini. */
WEFT_API weft_err weft_choose(const weft_topo *t, weft_coll coll, const uint64_t *sizes,
                              size_t nsizes, const weft_choose_opts *o, weft_ranking *out,
                              weft_diag *d);
/* Indices of the candidates simulated at size index s, fastest first (ties
 * keep the listing order), into idx (r->n entries); returns how many. */
WEFT_API size_t weft_ranking_order(const weft_ranking *r, size_t s, size_t *idx);
/* The fastest at size index s, or NULL when none simulated. */
WEFT_API const weft_choice *weft_ranking_best(const weft_ranking *r, size_t s);
WEFT_API void weft_ranking_fini(weft_ranking *r);

#ifdef __cplusplus
}
#endif
#endif
