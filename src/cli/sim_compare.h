/* weft sim --compare: every algorithm that builds a collective on a fabric
 * (all of weft plan --list, plus the optimal plan for allgather,
 * reducescatter and allreduce), each simulated at every size, sorted by
 * time, under the exact bound (weft bound) as the first row. Algorithms
 * that do not build on the fabric, or whose simulation fails, are listed
 * as skipped with the reason. */
#ifndef WEFT_CLI_SIM_COMPARE_H
#define WEFT_CLI_SIM_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "cli/progress.h"
#include "weft/sim.h"
#include "weft/traffic.h"

typedef enum cli_sim_format { CLI_SIM_TABLE, CLI_SIM_JSON, CLI_SIM_CSV } cli_sim_format;

/* "1073741824 (1G)" style size text: bytes and, when exact, K/M/G. */
/* The exact all-to-all bound as an algbw in GB/s: uniform (m NULL), or
 * for matrix m the matrix's total / N over the least time. False with why
 * filled when there is none (the solver's message, or an exact value that
 * does not fit a 64-bit fraction). */
bool cli_a2a_bound_algbw(const weft_topo *t, const weft_traffic *m, weft_rat *algbw, char *why,
                         size_t len);

/* "src -> dst" of a link. */
void cli_sim_link_name(const weft_topo *t, weft_link_id l, char *buf, size_t len);

/* Runs the comparison and prints it on stdout in format fmt; pr shows
 * which algorithm and size is being simulated. With plot (a path, or
 * NULL) it also writes busbw against size of every simulated algorithm
 * and the bound (cli/sim_plot.h). Returns an exit code (1 when nothing at
 * all could be simulated, with the reasons on stderr, or when the plot
 * cannot be written). Plans over max_ops ops are skipped
 * (cli_sim_algo_build). */
int cli_sim_compare(const char *spec, const weft_topo *t, weft_coll coll, const uint64_t *sizes,
                    size_t nsizes, const weft_sim_opts *o, uint32_t max_ops, cli_sim_format fmt,
                    const char *plot, cli_progress *pr);
/* The same for an alltoallv: every classic all-to-all schedule built for
 * matrix m (weft_synth_classic_traffic) and simulated at its own size (the
 * matrix's total / N, sizes[0], nsizes 1); nccl and optimal are left out
 * (no alltoallv plan), and algbw is the exact own size over the time. */
int cli_sim_compare_traffic(const char *spec, const weft_topo *t, const weft_traffic *m,
                            const uint64_t *sizes, size_t nsizes, const weft_sim_opts *o,
                            uint32_t max_ops, cli_sim_format fmt, const char *plot,
                            cli_progress *pr);

/* The best plan weft has for coll on fabric t: the fastest of every
 * candidate --compare simulates (for matrix m, non-NULL, the alltoallv
 * plans of cli_sim_compare_traffic at size = the matrix's total / N), and
 * the exact bound. This is the one place weft sim --compare-fabrics asks
 * "how fast can this fabric do it"; a better schedule for a kind of fabric
 * (circuit schedules on OCS fabrics) becomes a candidate here. */
typedef struct cli_sim_best {
    bool have;             /* some candidate simulated */
    char algo[48];         /* what ran fastest ("nccl (ring, LL128, rings:16)") */
    char name[32];         /* its candidate's name ("nccl") */
    weft_sim_result res;   /* its result (busiest links dropped) */
    bool have_bound;       /* the exact bound, as an algbw */
    weft_rat bound_algbw;  /* GB/s */
    double bound_time_s;   /* size / bound algbw */
    size_t tried, skipped; /* candidates listed, and those that did not build or run */
    char why[512];         /* !have: the first candidate's reason */
    bool ocs_relaxed;      /* an OCS fabric, a collective with no circuit schedule: the
                            * plans crossed each OCS as a packet switch (optimistic) */
} cli_sim_best;
/* Fills *out (always; out->have false when nothing simulated). size is
 * the bytes (for m: its total / N, rounded). */
void cli_sim_best_plan(const weft_topo *t, weft_coll coll, const weft_traffic *m, uint64_t size,
                       const weft_sim_opts *o, uint32_t max_ops, cli_progress *pr,
                       cli_sim_best *out);
/* The fastest baseline of weft sim --compare (its plan candidates from
 * the schedule registry, weft_sched_candidates, but optimal) for coll at
 * `size` bytes with o: the one row `weft sim --compare`, `weft plan
 * --compare` and `weft plan --algo optimal` all name as the fastest
 * baseline at that size. */
void cli_sim_best_baseline(const weft_topo *t, weft_coll coll, uint64_t size,
                           const weft_sim_opts *o, uint32_t max_ops, cli_sim_best *out);
/* weft plan simulates its baselines (cli_sim_best_baseline) on fabrics of
 * at most this many ranks: on larger ones some plans take minutes op by
 * op (rings:auto on mi250:4), too long for a command that builds one
 * plan; weft sim --compare --size 1G ranks them there. */
#define CLI_PLAN_SIM_MAX_RANKS 32u

#endif
