/* weft synthesis: exact throughput bounds and the schedules that reach them.
 *
 * This header has one section per part of the synth module. The bound
 * section comes first; schedule synthesis (classic algorithms, cost, tree
 * packing) adds its own sections below it.
 */
#ifndef WEFT_SYNTH_H
#define WEFT_SYNTH_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/compress.h"
#include "weft/err.h"
#include "weft/plan.h"
#include "weft/protocol.h"
#include "weft/rat.h"
#include "weft/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Bound: the exact optimum and its bottleneck cut ===================
 *
 * For a fabric with N >= 2 ranks and a collective of total size M
 * (allgather: total output; reduce-scatter: total input), the fastest any
 * schedule can be is given by the worst cut (docs/bound.md):
 *
 *   allgather:      T* = (M/N) * max_S |S ∩ ranks| / B+(S)
 *   reduce-scatter: T* = (M/N) * max_S |S ∩ ranks| / B-(S)
 *   allreduce:      T* = T*_rs + T*_ag      (reduce-scatter then allgather)
 *
 * where S ranges over node sets (switches and NICs included) that hold at
 * least one rank and leave out at least one, B+(S) is the total bandwidth of
 * the links leaving S and B-(S) of those entering S. The bound is reported
 * as algbw = M / T* in GB/s, exactly: so allreduce's algbw is
 * ab/(a+b) for reduce-scatter algbw a and allgather algbw b.
 *
 * The optimum is found by a Dinkelbach (Newton) iteration over cuts, each
 * step checking a candidate rate with integer max-flows from a super-source;
 * there is no floating point anywhere, and the reported cut is a true
 * minimiser. Bandwidths are scaled to integers by the least common multiple
 * of their denominators; when that does not fit in 64-bit integers the
 * computation fails with WEFT_EOVERFLOW rather than rounding.
 */

/* The collectives a bound is computed for. */
typedef enum weft_bound_coll {
    WEFT_BOUND_ALLGATHER = 0,
    WEFT_BOUND_REDUCESCATTER,
    WEFT_BOUND_ALLREDUCE,
    WEFT__BOUND_COLL_COUNT
} weft_bound_coll;

/* "allgather", "reducescatter", "allreduce". */
WEFT_API const char *weft_bound_coll_name(weft_bound_coll coll);
/* Parses one of those names; false when unknown. */
WEFT_API bool weft_bound_coll_parse(const char *text, weft_bound_coll *out);

/* Max-flow algorithm (both exact; the choice only changes speed). */
typedef enum weft_maxflow_algo {
    WEFT_MAXFLOW_DEFAULT = 0, /* the measured fastest: push-relabel (docs/bound.md) */
    WEFT_MAXFLOW_DINIC,
    WEFT_MAXFLOW_PUSH_RELABEL,
} weft_maxflow_algo;

typedef struct weft_bound_opts {
    weft_maxflow_algo algo;
    /* Use verified fabric automorphisms so that one max-flow stands for
     * every rank of an orbit (default true). Turning it off gives the plain
     * path, which checks every rank; the answer is the same either way. */
    bool use_symmetry;
} weft_bound_opts;

WEFT_API void weft_bound_opts_init(weft_bound_opts *o);

/* A bottleneck cut S. For allgather the links listed leave S; for
 * reduce-scatter they enter S (the cut of the reversed graph). */
typedef struct weft_bound_cut {
    uint32_t n_nodes;
    weft_node_id *nodes; /* S, ascending node ids */
    uint32_t n_links;
    weft_link_id *links; /* the links crossing the cut, ascending ids */
    bool inward;         /* true when the links enter S (reduce-scatter) */
    uint32_t ranks_in;   /* |S ∩ ranks| */
    weft_rat bw;         /* total bandwidth of the crossing links, GB/s */
} weft_bound_cut;

/* One phase: an allgather or a reduce-scatter bound. */
typedef struct weft_bound_phase {
    weft_bound_coll coll; /* WEFT_BOUND_ALLGATHER or WEFT_BOUND_REDUCESCATTER */
    weft_rat algbw;       /* N * bw / ranks_in, GB/s */
    weft_bound_cut cut;
    uint32_t iterations; /* Dinkelbach steps */
    uint64_t maxflows;   /* max-flow computations run */
} weft_bound_phase;

typedef struct weft_bound {
    weft_bound_coll coll;
    uint32_t ranks;
    /* algbw = M / T*, GB/s, exact. */
    weft_rat algbw;
    /* Allgather and reduce-scatter: one phase. Allreduce: two, [0] the
     * reduce-scatter and [1] the allgather; T*_ar = T*_rs + T*_ag. */
    uint32_t n_phases;
    weft_bound_phase phase[2];
    /* Rank orbits found (equal to ranks when no symmetry was used). */
    uint32_t rank_classes;
    /* Every switch/nic/ocs has equal in and out bandwidth. When false the
     * bound is still a valid upper bound on throughput, but a tree packing
     * that reaches it is not guaranteed (docs/bound.md);
     * unbalanced names one such node. */
    bool switches_balanced;
    weft_node_id unbalanced;
} weft_bound;

/* Computes the exact bound. opts may be NULL for defaults. On success *out
 * owns arrays released by weft_bound_fini. Errors (with d saying what and
 * where): WEFT_ETOPO for fewer than two ranks or a rank that cannot reach
 * another (both named), WEFT_EOVERFLOW when bandwidths cannot be scaled to
 * 64-bit integers, WEFT_EINVAL for a bad collective, WEFT_ENOMEM. */
WEFT_API weft_err weft_bound_compute(const weft_topo *t, weft_bound_coll coll,
                                     const weft_bound_opts *opts, weft_bound *out, weft_diag *d);
/* Releases what weft_bound_compute stored; safe on a zeroed struct. */
WEFT_API void weft_bound_fini(weft_bound *b);

/* ==== All-to-all bound: the exact maximum concurrent flow ===============
 *
 * The least time T* of an all-to-all (uniform, or a traffic matrix: the
 * bytes rank i sends to rank j) on a fabric, over every schedule: each
 * ordered pair (i, j) is a commodity that may be split over any paths
 * (switches, NICs and relays through other ranks), and the flows of all
 * pairs add up within each directed link, which carries at most its
 * bandwidth. T* = 1/θ* for the maximum concurrent flow θ*: the largest θ
 * such that every pair can be routed at the rate θ * bytes(i, j) at once
 * (Shahrokhi & Matula 1990). docs/bound.md gives the method:
 *
 * - The linear program is source-aggregated: all the commodities of one
 *   source are one single-source flow, so it has (sources x links) flow
 *   variables instead of (pairs x links).
 * - With the uniform matrix and use_symmetry, one source per rank orbit
 *   and one capacity row per link orbit of a group of verified fabric
 *   automorphisms (src/synth/orbits.c); h100:128 is one source.
 * - GLPK's floating simplex finds an optimal basis; the answer is then
 *   CERTIFIED in exact rational arithmetic (GMP): the dual link lengths,
 *   made rational, give an upper bound by LP duality (every feasible
 *   length function does), and the primal flow, made rational, is checked
 *   to be exactly feasible at that same value. Only a value proved both
 *   ways is returned; otherwise GLPK's exact simplex refines the basis and
 *   the check runs again, and failing that the call fails (WEFT_ELIMIT)
 *   rather than report a number it could not prove.
 */

struct weft_traffic; /* weft/traffic.h */

typedef struct weft_a2a_bound_opts {
    /* Solve one source per rank orbit, link constraints per link orbit
     * (uniform matrix only; default true). Off: every rank a source. */
    bool use_symmetry;
    /* Skip the simplex's values made rational and prove the optimum with
     * the exact basic solution (default false; tests and benchmarks use it
     * to exercise that path). */
    bool exact_basis;
    /* A traffic matrix is solved by column generation (tree routings of
     * each source, docs/bound.md "Column generation"), falling back to
     * the edge program when that cannot certify its optimum. True: the
     * edge program only, as before (default false; the tests compare the
     * two). */
    bool edge_lp;
    /* The optimal plan of a matrix (weft_synth_a2a_optimal_opts) is routed
     * on column generation's trees where its edge program has more than
     * 32,768 flow variables (sources x links: 128 ranks on h100:16 has
     * 98,304; below that the edge program takes seconds at most and its
     * routes are kept, as before). True: the
     * trees at every size (default false; the tests compare the two). */
    bool plan_trees;
} weft_a2a_bound_opts;

/* How the optimum was proved (docs/bound.md, "Exact"). */
typedef enum weft_a2a_cert {
    WEFT_A2A_CERT_ROUNDED = 0, /* the simplex's values made rational */
    WEFT_A2A_CERT_BASIS,       /* the exact basic solution of its basis */
    WEFT_A2A_CERT_EXACT,       /* after GLPK's exact simplex */
} weft_a2a_cert;

/* "rounded simplex values", "exact basic solution", "exact simplex". */
WEFT_API const char *weft_a2a_cert_name(weft_a2a_cert c);

WEFT_API void weft_a2a_bound_opts_init(weft_a2a_bound_opts *o);

typedef struct weft_a2a_bound {
    uint32_t ranks;
    bool uniform; /* no matrix: every rank sends size/N to every rank */
    /* Uniform: algbw = per-rank input size / T*, GB/s. Exact values are
     * reduced fractions in decimal ("400/7", "50"); they can exceed 64
     * bits, so they are strings. */
    double algbw;
    char *algbw_exact;
    /* Matrix: T* in seconds (with a matrix algbw is 0 and algbw_exact
     * NULL; uniform: time_s is 0 and time_exact NULL). */
    double time_s;
    char *time_exact;
    /* The links that limit it: positive length in the certified dual
     * (every one of them is saturated by every optimal flow), ascending. */
    uint32_t n_limits;
    weft_link_id *limits;
    /* Problem size: sources solved, link classes, LP rows and columns. */
    uint32_t sources, link_classes, lp_rows, lp_cols;
    /* True when GLPK's exact simplex was needed to certify the optimum. */
    bool refined;
    weft_a2a_cert cert;
} weft_a2a_bound;

/* Computes the exact all-to-all bound; m NULL means uniform. opts may be
 * NULL for defaults. Errors (d says what): WEFT_ETOPO for fewer than two
 * ranks or a pair with traffic and no path (both ranks named), WEFT_EINVAL
 * for a matrix whose size is not the number of ranks or that has no
 * traffic between distinct ranks, WEFT_ELIMIT when the optimum could not
 * be certified exactly or the program would exceed 2,000,000 flow
 * variables (sources x links; h100:128 without symmetry), WEFT_ENOMEM. */
WEFT_API weft_err weft_a2a_bound_compute(const weft_topo *t, const struct weft_traffic *m,
                                         const weft_a2a_bound_opts *opts, weft_a2a_bound *out,
                                         weft_diag *d);
/* Releases what weft_a2a_bound_compute stored; safe on a zeroed struct. */
WEFT_API void weft_a2a_bound_fini(weft_a2a_bound *b);

/* The optimal uniform all-to-all plan, built from the certified flow: one
 * copy op per ordered pair (in[d] of rank s to out[s] of rank d, and the
 * rank's own share locally), whose route is the flow's path decomposition
 * for that pair with exact shares, so every link carries exactly the
 * optimal flow and the plan's throughput limit equals the bound. On a
 * fabric of identical boxes whose ranks rotate (h100:B, a100:B, switch:N)
 * the program has one source, rank 0, and its flow is mapped to every rank
 * by a regular group of verified automorphisms (bound->sources is 1;
 * h100:128, 1,024 GPUs, in about a second); otherwise every rank is a
 * source (the same size limit as the bound without symmetry). *bound
 * receives the bound (release it with
 * weft_a2a_bound_fini). WEFT_EOVERFLOW when a path's share does not fit a
 * 64-bit fraction; else the bound's errors. */
WEFT_API weft_err weft_synth_a2a_optimal(const weft_topo *t, weft_plan **out, weft_a2a_bound *bound,
                                         weft_diag *d);
/* The same for a traffic matrix m (NULL: uniform, as above): an alltoallv
 * plan (weft_plan_set_traffic) from the flow of the matrix's bound, one copy
 * op per pair with bytes (m(s, d) > 0, the diagonal a local copy), routed
 * by that pair's share of the flow (column generation's routing trees, or
 * the edge program's flow decomposed; weft_synth_a2a_optimal_opts), so the plan's time at its own
 * size (weft_plan_traffic_size / its throughput limit) equals the bound's
 * time_exact. Every rank that sends is a source (no symmetry). Errors: m
 * fails weft_traffic_check (WEFT_EINVAL), else as above and as
 * weft_a2a_bound_compute with m. */
WEFT_API weft_err weft_synth_a2a_optimal_traffic(const weft_topo *t, const struct weft_traffic *m,
                                                 weft_plan **out, weft_a2a_bound *bound,
                                                 weft_diag *d);
/* The same with the bound's options (opts NULL: the defaults). A large
 * matrix's routes (plan_trees above) come from column generation's routing
 * trees (docs/bound.md, "The plan from the trees"): pair (s, d)
 * takes the path to d in each of s's trees, with the tree's weight over θ
 * as its share, so no program of sources x links is solved (1,024 ranks);
 * where column generation cannot certify the optimum, with edge_lp or
 * exact_basis, and below that size, the edge program's flow is decomposed
 * as before. use_symmetry false: uniform
 * traffic is solved with every rank a source. */
WEFT_API weft_err weft_synth_a2a_optimal_opts(const weft_topo *t, const struct weft_traffic *m,
                                              const weft_a2a_bound_opts *opts, weft_plan **out,
                                              weft_a2a_bound *bound, weft_diag *d);

/* ==== Circuit schedules on optical circuit switches ======================
 *
 * An all-to-all of a traffic matrix on a fabric with ocs nodes, as a plan
 * that carries circuit configurations (weft/plan.h, "Circuits";
 * docs/ocs.md). The method:
 *
 *  1. The optimal flow of the bound with every OCS relaxed to a switch
 *     (weft_synth_a2a_optimal_traffic): its paths, each hop across an OCS
 *     a (from port, to port) demand; the port demand of each OCS is a
 *     matrix (bytes, rounded up).
 *  2. Each OCS's port matrix is decomposed into weighted permutations
 *     twice: Birkhoff-von Neumann (weft/bvn.h), rounds sorted by weight,
 *     largest first; and Solstice-style (Liu et al., CoNEXT 2015: stuff
 *     the matrix to equal line sums, take perfect matchings of entries
 *     >= r, halving r when there is none). Round k is configuration k of
 *     that OCS, lasting weight / port bandwidth.
 *  3. Candidates, as Solstice-style schedulers trade configurations for
 *     delay: keep the first m configurations (m = 1, 2, 3, 4, 6, 9, 13,
 *     ... each half again the last, and all; then m = 0), each for a
 *     times its duration (a = 1/16, 1/8, 1/4,
 *     1/2, 1, 2, 4, 8); what a path's circuit cannot carry in that time, and
 *     every path that crosses OCSes twice, goes over the packet part
 *     (ECMP shortest paths of the fabric without its OCSes). A candidate's
 *     time is max(over OCSes: its configurations' time + (its
 *     configurations - 1) x its delay, over the other links: their bytes /
 *     bandwidth): the delay is counted per OCS, as MixNet's regional OCSes
 *     reconfigure independently. m = 0 is the schedule without circuits.
 *  4. The fastest candidate of both decompositions wins (ties: the one
 *     found first: BvN, then fewer configurations). Each candidate's time is c + (m - 1) d with
 *     c independent of the delay d, so the chosen time never falls as d
 *     grows, and past some delay a candidate with at most one
 *     configuration (which pays no delay) wins.
 *
 * With no delay and every path crossing at most one OCS, keeping every
 * configuration reproduces the relaxed flow: the time is the bound (up to
 * the rounding of port demands to whole bytes). */

typedef struct weft_circuit_opts {
    /* Reconfiguration delay in seconds for every OCS; < 0 (the default):
     * each OCS's own reconfig= (weft_topo_ocs_reconfig_ns). */
    double delay_s;
    /* Candidates keep at most this many configurations (0, the default:
     * every one the decomposition has). */
    uint32_t max_configs;
    /* Route the relaxation (step 1) by the edge program only
     * (weft_a2a_bound_opts.edge_lp), as before column generation's trees
     * routed large ones (weft_synth_a2a_optimal_opts); default false. */
    bool edge_lp;
} weft_circuit_opts;

WEFT_API void weft_circuit_opts_init(weft_circuit_opts *o);

typedef struct weft_circuit_sched {
    uint32_t configs;          /* configurations (epochs) kept: 0 .. rounds */
    uint32_t rounds;           /* the decomposition's largest number of rounds */
    const char *decomposition; /* the rounds kept: "bvn" (Birkhoff-von Neumann)
                                  or "solstice" (large-threshold matchings) */
    uint32_t candidates;       /* schedules compared */
    double fraction;           /* a: each round's duration is a x its weight / bw */
    double *duration_s;        /* configs: epoch k's duration (the longest of
                                  the OCSes' round k) */
    double ocs_s;              /* the busiest OCS: its epochs' time + delays */
    double packet_s;           /* the busiest other link: bytes / bandwidth */
    double delay_s;            /* the largest delay of an OCS */
    double time_s;             /* max(ocs_s, packet_s) */
    double bound_s;            /* the relaxation bound, T* */
    double circuit_bytes;      /* bytes that cross an OCS on a circuit */
    double rerouted_bytes;     /* bytes the relaxed flow sent across an OCS that go
                                  over the packet part instead */
    uint32_t multi_paths;      /* paths of the relaxed flow that cross OCSes twice */
} weft_circuit_sched;

/* The circuit schedule of matrix m on t (which must have an ocs node,
 * WEFT_EINVAL otherwise) as an alltoallv plan with circuits: every path
 * across an OCS names its epoch. o may be NULL (defaults). *sched receives
 * the schedule's figures (weft_circuit_sched_fini releases them). Errors
 * as weft_synth_a2a_optimal_traffic; WEFT_ETOPO when a pair's traffic must
 * leave the circuits and the fabric without OCSes cannot carry it. */
WEFT_API weft_err weft_synth_a2a_circuits(const weft_topo *t, const struct weft_traffic *m,
                                          const weft_circuit_opts *o, weft_plan **out,
                                          weft_circuit_sched *sched, weft_diag *d);
WEFT_API void weft_circuit_sched_fini(weft_circuit_sched *s);

/* ==== Classic algorithms ================================================
 *
 * The textbook schedules as plans, for any rank count: rings (one
 * direction, both, several), NCCL's double binary tree, recursive
 * halving-doubling and Rabenseifner, recursive doubling, Bruck, binomial
 * trees, direct and pairwise all-to-all, and two-level hierarchical rings.
 * docs/algorithms.md describes each, where it applies and how it places
 * ranks on the fabric (rings follow hosts and cross them on one rail).
 *
 * Every plan is written as a sequential program of transfers whose deps
 * are exactly its data dependences (src/synth/emit.h), so it verifies by
 * construction and independent transfers stay concurrent. Ops carry no
 * route: the cost model and the simulator route them on shortest paths.
 */

typedef struct weft_classic_info {
    const char *name;    /* as given to --algo: "ring", "rings:K", ... */
    const char *summary; /* one line */
    uint32_t colls;      /* bit (1 << weft_coll) per collective it builds */
    /* Builds another algorithm's plan (nccl: rings:C or dbtree, chosen
     * for the fabric), so it is no candidate of its own where plans are
     * ranked (the runtime, weft tune). */
    bool composite;
} weft_classic_info;

WEFT_API size_t weft_classic_count(void);
WEFT_API const weft_classic_info *weft_classic_get(size_t i);
/* True when algorithm `algo` (as spelled for weft_synth_classic) builds
 * collective coll; false for unknown names too. */
WEFT_API bool weft_classic_supports(const char *algo, weft_coll coll);

/* Builds algorithm `algo` ("ring", "biring", "rings:4", "dbtree", "hd",
 * "rd", "bruck", "binomial", "direct", "pairwise", "hier") for collective
 * coll on fabric t. root is used by broadcast and reduce only. Errors:
 * WEFT_ENOENT for an unknown algorithm, WEFT_EUNSUPPORTED when it does not
 * build coll (d lists what it builds), WEFT_ETOPO when the fabric does not
 * fit it (hier without equal hosts, fewer than 2 ranks), WEFT_EINVAL for a
 * bad parameter or root, WEFT_ENOMEM. */
WEFT_API weft_err weft_synth_classic(const weft_topo *t, const char *algo, weft_coll coll,
                                     weft_rank root, weft_plan **out, weft_diag *d);

/* weft_synth_classic with a budget: WEFT_ELIMIT, d naming the algorithm,
 * the rank count and the limit, as soon as the plan would have more than
 * max_ops ops, or its ops would move more than max_ops chunks in all (an
 * op's cost grows with its chunks), so time and memory stay those of
 * max_ops single-chunk ops (a ring over 100,000 ranks has 2 x 10^10 ops).
 * max_ops 0 means no limit. */
WEFT_API weft_err weft_synth_classic_limited(const weft_topo *t, const char *algo, weft_coll coll,
                                             weft_rank root, uint32_t max_ops, weft_plan **out,
                                             weft_diag *d);

/* weft_synth_classic_limited for a given collective size: only "nccl"
 * depends on it (NCCL's choice at `bytes`, weft_nccl_choose); every other
 * algorithm builds the same plan at every size. */
WEFT_API weft_err weft_synth_classic_at(const weft_topo *t, const char *algo, weft_coll coll,
                                        weft_rank root, uint32_t max_ops, double bytes,
                                        weft_plan **out, weft_diag *d);

/* An alltoallv plan: algorithm `algo` for alltoall on t, carrying the
 * traffic matrix m (weft_plan_set_traffic: block (s, d) holds m(s, d)
 * bytes). "direct" has no op for a pair with 0 bytes; "pairwise" keeps
 * all its steps (an empty block's op moves 0 bytes); any other algorithm
 * that builds alltoall builds its plan for equal blocks, which m then
 * sizes. Errors as weft_synth_classic_limited, and WEFT_EINVAL when m's
 * ranks differ from t's ("the traffic matrix has 4 ranks, the fabric 8")
 * or m fails weft_traffic_check. */
WEFT_API weft_err weft_synth_classic_traffic(const weft_topo *t, const char *algo,
                                             const weft_traffic *m, uint32_t max_ops,
                                             weft_plan **out, weft_diag *d);

/* An alltoallv of matrix m with no fabric to choose routes for: one direct
 * copy per nonzero off-diagonal entry (s, d) (in order of s, then d), then
 * a local copy per nonzero diagonal entry, no deps, carrying m
 * (weft_plan_set_traffic): every pair at once, as NCCL's all-to-all of
 * sends and receives. WEFT_EINVAL for no
 * matrix, one with nothing between distinct ranks, or one that fails
 * weft_plan_set_traffic; WEFT_ENOMEM. */
WEFT_API weft_err weft_synth_a2a_matrix(const weft_traffic *m, weft_plan **out, weft_diag *d);

/* The rank order of the ring that weft_synth_classic(t, "ring", ...) builds
 * for allgather, reducescatter and allreduce (n = the fabric's ranks
 * entries): the rank at position p sends to the one at p+1 (mod n). Every
 * step of the plan moves one chunk from every position to the next, and
 * step s of position p depends (directly, or through deps that imply it)
 * on step s-1 of position p-1 only; so simulating this order as a ring
 * (weft_sim_ring_order) simulates exactly the plan's transfers
 * (src/sim/ring_classic_test.c checks both). WEFT_ETOPO for fewer than 2
 * ranks, WEFT_ENOMEM. */
WEFT_API weft_err weft_classic_ring_order(const weft_topo *t, uint32_t *order, weft_diag *d);

/* ==== BFB: breadth-first broadcast on direct-connect fabrics ============
 *
 * Zhao et al., NSDI'25 ("Efficient Direct-Connect Topologies for
 * Collective Communications", arXiv 2202.03356): on a fabric whose nodes
 * are all ranks, allgather runs in D steps (D the diameter): at step t
 * every rank receives the shards of the ranks at distance exactly t, through
 * its in-neighbours at distance t-1, each shard split over them so that the
 * step's busiest-link time is the least possible (an exact per-receiver
 * transportation problem; src/synth/bfb.c). Reduce-scatter is the
 * allgather of the reversed fabric run backwards; allreduce is
 * reduce-scatter then allgather. docs/algorithms.md ("bfb").
 *
 * Steps are counted as the paper counts them, not overlapped: the
 * step-synchronous time of a collective of `size` bytes is
 * steps * alpha + size / algbw_stepwise. */
typedef struct weft_bfb {
    uint32_t steps;          /* T_L: D (allgather, reduce-scatter), 2D (allreduce) */
    weft_rat algbw_stepwise; /* GB/s: N / step_sum */
    /* Sum over steps of the step's busiest-link time for shards of one
     * byte, in ns (= s per GB): size / N * step_sum is the bandwidth time. */
    weft_rat step_sum;
    uint32_t chunks; /* K: chunks per shard in the plan (0 from analyze) */
} weft_bfb;

/* The step count and exact stepwise throughput of BFB for coll on t,
 * without building a plan: O(N^2) memory (a distance table), at most
 * 8,192 ranks. Errors: WEFT_EUNSUPPORTED for a collective other than
 * allgather, reducescatter and allreduce; WEFT_ETOPO for a fabric with a
 * switch, NIC or OCS node (named), fewer than 2 ranks, or a rank that
 * cannot reach another; WEFT_ELIMIT beyond 8,192 ranks; WEFT_EOVERFLOW;
 * WEFT_ENOMEM. */
WEFT_API weft_err weft_bfb_analyze(const weft_topo *t, weft_coll coll, weft_bfb *out, weft_diag *d);
/* Builds the BFB plan: every shard cut into K chunks (K the least common
 * multiple of the per-step optima's denominators, at most 65,536), each
 * (step, receiver) split by an integral max-flow of the exact optimum. The
 * plan verifies; its allgather takes D dependent steps. max_ops as in
 * weft_synth_classic_limited (0: no limit). Errors as weft_bfb_analyze,
 * and WEFT_ELIMIT when K or the op count is over its limit. info (may be
 * NULL) gets the analysis and K. */
WEFT_API weft_err weft_synth_bfb(const weft_topo *t, weft_coll coll, uint32_t max_ops,
                                 weft_plan **out, weft_bfb *info, weft_diag *d);

/* ==== Direct-connect topology search ====================================
 *
 * The family of Zhao et al. (NSDI'25, section 5) for N ranks of degree d:
 * base graphs (complete, complete bipartite, generalized Kautz, circulants,
 * de Bruijn, hypercube), line graphs and degree expansions of smaller
 * bases, and Cartesian products of two bases whose sizes multiply to N and
 * whose degrees add to d (src/synth/dcsearch.c lists it exactly). Each is
 * built as a spec (weft_topo_from_spec builds it again) with every link of
 * bandwidth bw, and scored by its BFB schedule: T_L = steps and
 * T_B = bw / algbw_stepwise, so that a collective of S bytes takes
 * T_L * alpha + T_B * S / bw. Cost: one weft_bfb_analyze per candidate
 * (O(N^2)); N = 4,096 with d = 4 takes seconds (bench/topo_search.c). */
#define WEFT_DC_SPEC_MAX 192

typedef struct weft_dc_candidate {
    char spec[WEFT_DC_SPEC_MAX];
    uint32_t steps;          /* T_L */
    weft_rat tb;             /* T_B (dimensionless: time = T_B * size / bw) */
    weft_rat algbw_stepwise; /* GB/s */
    bool pareto;             /* on the (T_L, T_B) Pareto frontier */
} weft_dc_candidate;

typedef struct weft_dc_search {
    weft_dc_candidate *cand; /* count entries, in the family's order */
    size_t count;
    size_t considered; /* specs generated, connected or not */
} weft_dc_search;

/* Builds and scores the family. Errors: WEFT_EINVAL for N outside 2 ..
 * 8,192, a degree outside 1 .. N-1, or when no graph of the family has
 * that size and degree (d names it); WEFT_EUNSUPPORTED for a collective
 * other than allgather, reducescatter, allreduce; WEFT_ENOMEM. */
WEFT_API weft_err weft_dc_search_run(uint32_t n, uint32_t degree, weft_coll coll, weft_rat bw,
                                     weft_dc_search *out, weft_diag *d);
WEFT_API void weft_dc_search_fini(weft_dc_search *s);
/* T_L * alpha_s + S / algbw_stepwise, seconds. */
WEFT_API double weft_dc_time(const weft_dc_candidate *c, double bytes, double alpha_s);
/* The candidate with the least weft_dc_time (ties: fewer steps, then the
 * first). s must have candidates. */
WEFT_API size_t weft_dc_search_best(const weft_dc_search *s, double bytes, double alpha_s);

/* ==== Optimal schedules =================================================
 *
 * The throughput-optimal schedule (ForestColl, Zhao et al. 2024;
 * docs/optimal.md): with the exact bound's per-rank rate r = algbw / N,
 * every rank roots k spanning trees, each carrying 1/k of its data, and a
 * link of b GB/s carries at most floor(b k / r) of them (k the fewest
 * trees that reach r: 1, 2, ... are tried before the exact k that makes
 * every b k / r an integer; U = k / r). Switches are removed by edge
 * splitting that keeps the rooted connectivity, k out-trees per rank are
 * packed with max-flow checks, and every tree edge is mapped back onto the
 * physical paths it stands for. Allgather broadcasts down each tree;
 * reduce-scatter reduces up trees built on the reversed fabric; allreduce
 * is reduce-scatter then allgather. The plan verifies, and its per-link
 * throughput (weft_plan_cost_get) equals the bound exactly.
 *
 * With trees_per_root K the number of trees is forced (K = 1 is what an
 * MSCCL export wants): capacities become floor(b K / r') for the largest
 * r' (found among the breakpoints b K / m) at which the trees still exist,
 * and algbw reports the throughput the packed trees reach (at least r').
 *
 * Limits: every switch/nic/ocs must have equal in- and out-bandwidth
 * (WEFT_ETOPO names one that does not); the work is many small max-flows,
 * fine for fabrics of a few dozen ranks (docs/optimal.md has timings).
 *
 * At scale: before packing, a structured construction is tried when the
 * ranks form equal boxes (hosts): a ring along each rail between boxes and
 * direct sends inside each box (docs/optimal-scale.md). Its plan is kept
 * only when its exact cost-model throughput equals the bound; otherwise
 * the general path runs. weft_optimal.method says which path built the
 * plan. This reaches thousands of ranks (h100:512) where packing cannot.
 */

typedef struct weft_optimal_opts {
    uint32_t trees_per_root; /* 0: the smallest k that reaches the bound */
    weft_maxflow_algo algo;
    /* Try the structured constructions first (default true): on a fabric
     * of equal boxes with rails they build the plan directly, and the plan
     * is kept only when its exact cost-model throughput equals the bound
     * (docs/optimal-scale.md). Off: always the general tree packing. */
    bool use_structure;
} weft_optimal_opts;

/* trees_per_root 0, default max-flow, use_structure true. */
WEFT_API void weft_optimal_opts_init(weft_optimal_opts *o);

/* A group of `mult` identical trees of one root: n_edges = ranks - 1
 * edges, from[i] -> to[i] in the direction data moves, listed so that
 * every rank appears as a parent only after the edge that reaches it
 * (allgather), or the reverse (reduce-scatter: children before parents). */
typedef struct weft_optimal_tree {
    weft_rank root;
    uint32_t mult;
    uint32_t n_edges;
    uint32_t *from, *to; /* ranks */
} weft_optimal_tree;

typedef struct weft_optimal_phase {
    weft_bound_coll coll; /* WEFT_BOUND_ALLGATHER or WEFT_BOUND_REDUCESCATTER */
    weft_rat algbw;       /* the phase's throughput, GB/s */
    weft_rat bound;       /* the phase's exact bound, GB/s */
    uint32_t k;           /* trees per root */
    weft_rat U;           /* k / r: a link of b GB/s carries floor(b U) trees */
    uint32_t n_trees;     /* groups of identical trees */
    weft_optimal_tree *trees;
    uint64_t maxflows; /* max-flow runs (a statistic) */
} weft_optimal_phase;

/* How an optimal plan was built. */
typedef enum weft_optimal_method {
    WEFT_OPTIMAL_PACKING = 0, /* the general path: edge splitting and tree packing */
    WEFT_OPTIMAL_RAIL,        /* the structured rail-hierarchical construction */
} weft_optimal_method;

/* "packing", "rail" ("?" for an invalid value). */
WEFT_API const char *weft_optimal_method_name(weft_optimal_method m);

typedef struct weft_optimal {
    weft_optimal_method method;
    /* One line: with method RAIL the structure used ("rail: 16 boxes of 8
     * ranks"); with PACKING why no structured construction was used (""
     * when none was tried). */
    char structure_note[192];
    weft_coll coll;
    uint32_t ranks;
    weft_rat algbw; /* the plan's throughput, GB/s (allreduce: ab/(a+b)) */
    weft_rat bound; /* the exact bound, GB/s */
    /* Allgather, reduce-scatter: one phase; allreduce: [0] reduce-scatter,
     * [1] allgather. */
    uint32_t n_phases;
    weft_optimal_phase phase[2];
} weft_optimal;

/* Builds the optimal plan of coll (allgather, reducescatter or allreduce)
 * on t. opts may be NULL. On success *plan is the plan and, when info is
 * not NULL, *info describes it (release with weft_optimal_fini). Errors
 * (d says what and where): WEFT_EUNSUPPORTED for another collective,
 * WEFT_ETOPO for fewer than two ranks, an unreachable rank or an
 * unbalanced switch, WEFT_EOVERFLOW when the integers do not fit,
 * WEFT_ELIMIT when the plan would exceed the plan limits, WEFT_ENOMEM. */
WEFT_API weft_err weft_synth_optimal(const weft_topo *t, weft_coll coll,
                                     const weft_optimal_opts *opts, weft_plan **plan,
                                     weft_optimal *info, weft_diag *d);
/* Releases what weft_synth_optimal stored in info; safe on a zeroed struct. */
WEFT_API void weft_optimal_fini(weft_optimal *info);

/* ==== The schedule registry ==============================================
 *
 * Every schedule builder weft has, in one table: the classic algorithms
 * above (weft_classic_get, in that order), then optimal and bfb. Each row
 * says what it builds (collectives from a size, all-to-all from a traffic
 * matrix) and what the fabric must have; weft_sched_build builds any row,
 * and weft_sched_candidates lists the rows a ranking path compares, so
 * that `weft plan --compare`, `weft sim --compare`, `weft tune`, the
 * runtime's tuning candidates and the registry's tests all draw from this
 * one list (docs/architecture.md, "The schedule registry"). A new schedule
 * is its builder's file in src/synth and one row: in classic.c when it
 * builds through the classic context, in sched.c otherwise.
 */

/* What a row needs of the fabric, beyond ranks (weft_sched_info.needs). */
enum {
    WEFT_SCHED_NEEDS_BOXES = 1u << 0,  /* at least two equal hosts of several ranks */
    WEFT_SCHED_NEEDS_DIRECT = 1u << 1, /* no switch, NIC or OCS node (direct-connect) */
};

typedef struct weft_sched_info {
    const char *name;    /* as given to --algo ("rings:K" stands for rings:1..64 and
                            rings:auto) */
    const char *summary; /* one line */
    uint32_t colls;      /* bit (1 << weft_coll) per collective it builds from a size */
    bool matrix;         /* builds all-to-all from a traffic matrix (alltoallv) */
    uint32_t needs;      /* WEFT_SCHED_NEEDS_* */
    bool takes_k;        /* spelled NAME:K */
    bool composite;      /* builds another row's plan (nccl) */
    bool ranked;         /* a candidate of its own where plans are ranked */
} weft_sched_info;

/* Rows 0 .. weft_sched_count() - 1; false past the end. */
WEFT_API size_t weft_sched_count(void);
WEFT_API bool weft_sched_get(size_t i, weft_sched_info *out);
/* True when `algo` is a spelling of some row ("rings:4", "optimal"). */
WEFT_API bool weft_sched_known(const char *algo);
/* True when spelling `algo` builds coll (with a traffic matrix: alltoall
 * from the matrix). False for unknown spellings. */
WEFT_API bool weft_sched_supports(const char *algo, weft_coll coll, bool matrix);

/* ==== Compressed and sparse collectives ==================================
 *
 * Registry rows whose plans carry op sizes (weft/plan.h, "Sized plans"):
 * the dataflow of the dense collective, which verifies as usual, and the
 * exact bytes each op moves when the gradients are compressed or sparse
 * (weft/compress.h; docs/compression.md):
 *   sparse-ag     allgather, allreduce: every rank sends its k (index,
 *                 value) pairs to every rank (allreduce: then sums them);
 *   quant-2shot   allreduce: reduce-scatter of compressed chunks,
 *                 decompress-aggregate-recompress at the owner, all-gather
 *                 of the compressed aggregate (fp8, int8, qsgd, sign);
 *   sparse-hash   allreduce: each rank owns a hashed share of the index
 *                 space; sparse reduce-scatter of the pairs, then the
 *                 owners all-gather their unions (balanced whatever the
 *                 skew, Zen);
 *   sparse-range  the same with contiguous ranges: skewed non-zeros
 *                 overload the first owners (Zen's observation);
 *   hier-quant    allreduce on two or more hosts of equal size: dense ring
 *                 reduce-scatter inside each host, quant-2shot across hosts
 *                 between the ranks of one local index (rails), dense ring
 *                 all-gather inside each host (sparse_hier.c).
 * The bytes depend on the dense size: the plan is built at
 * weft_sched_args.bytes and scales in proportion elsewhere. Every
 * all-reduce plan also places its compute as compute ops (weft/plan.h,
 * weft_compute), appended after the data ops in the order the runtime
 * runs them on each rank (hash, aggregate, compress, fill, decompress;
 * docs/compression.md, "Compute in the plans"), which the simulator
 * charges at weft_compute_rates_get's rates. */
typedef struct weft_sparse_args {
    /* quant-2shot: the quantizer; the sparse rows: the density of each
     * rank's non-zeros, comp.density_ppm (topk, dgc, randk, hash). */
    weft_compressor comp;
    uint32_t elem_bytes; /* of the dense tensor: 2 (fp16, bf16) */
    uint32_t zipf_milli; /* skew of the non-zeros over the index space, S x 1000 */
} weft_sparse_args;

/* topk:0.01, 2-byte elements, no skew. */
WEFT_API void weft_sparse_args_init(weft_sparse_args *a);

/* What weft_sched_build builds. */
typedef struct weft_sched_args {
    weft_coll coll;
    weft_rank root;                   /* broadcast and reduce */
    uint32_t max_ops;                 /* as weft_synth_classic_limited; 0: no limit */
    double bytes;                     /* the collective's size: nccl builds its choice there
                                         (default WEFT_NCCL_PLAN_BYTES) */
    const weft_traffic *matrix;       /* alltoall from this matrix (the plan carries it), or
                                         NULL */
    const weft_optimal_opts *optimal; /* optimal's options (NULL: defaults) */
    weft_optimal *optimal_out;        /* optimal's report (may be NULL) */
    weft_bfb *bfb_out;                /* bfb's analysis (may be NULL) */
    const weft_sparse_args *sparse;   /* the compressed and sparse rows (NULL: defaults); they
                                         build at `bytes` */
} weft_sched_args;

/* coll, root 0, no limit, WEFT_NCCL_PLAN_BYTES, no matrix, no options. */
WEFT_API void weft_sched_args_init(weft_sched_args *a, weft_coll coll);

/* Builds spelling `algo` on t. The errors of the row's builder
 * (weft_synth_classic_at / weft_synth_classic_traffic, weft_synth_optimal,
 * weft_synth_a2a_optimal(_traffic), weft_synth_a2a_circuits on a fabric
 * with an OCS and a matrix, weft_synth_bfb); WEFT_ENOENT for an unknown
 * spelling; WEFT_EUNSUPPORTED, naming the collective, for one the row does
 * not build. */
WEFT_API weft_err weft_sched_build(const weft_topo *t, const char *algo, const weft_sched_args *a,
                                   weft_plan **out, weft_diag *d);

/* Which list weft_sched_candidates gives. */
typedef enum weft_sched_purpose {
    /* Every plan compared by --compare: each ranked row, rings:K as
     * rings:auto (NCCL's channel count) and rings:4, nccl (its plan at the
     * size), optimal; flash:K's K is the caller's (flash:auto). */
    WEFT_SCHED_FOR_COMPARE = 0,
    /* The runtime's candidates (weft tune's table, weft_tuning_candidate):
     * rows with no parameter to guess (rings:K as rings:auto, whose K the
     * fabric decides) and no composite, and optimal for allgather,
     * reducescatter and allreduce. */
    WEFT_SCHED_FOR_RUNTIME,
} weft_sched_purpose;

/* The spellings (static strings) compared for coll (with a traffic matrix
 * when matrix) for `purpose`, in registry order, at most cap; returns how
 * many. They may still fail to build on a fabric (hier without boxes). */
WEFT_API size_t weft_sched_candidates(weft_coll coll, bool matrix, weft_sched_purpose purpose,
                                      const char **names, size_t cap);

/* ==== NCCL's choice ======================================================
 *
 * What NCCL would run on a fabric (docs/algorithms.md, "nccl"): the
 * baseline every "optimal is Nx" line is measured against. Learnt from
 * NCCL's src/graph/search.cc and src/graph/tuning.cc (github:NVIDIA/nccl
 * @5067397c), restated on weft's fabric model, not copied:
 *
 * - Channels (search.cc). Across hosts the ring search finds one ring per
 *   network port of a host at the fastest rate of NCCL's speed list not
 *   above the port's bandwidth, then duplicates them when each is fast
 *   (ncclTopoDupChannels), and the communicator runs twice the searched
 *   channels, at most 32 (ncclTopoPostset). Inside one host the rings share
 *   a rank's links: as many as its bandwidth holds at the fastest intra
 *   speed. So a100:2 (8 x 25 GB/s NICs) gets 8 rings at 24 GB/s and 16
 *   channels, as NCCL logs on DGX A100.
 * - Choice (tuning.cc). For each algorithm (ring; double binary tree for
 *   allreduce) and protocol (LL, LL128, Simple), a bus bandwidth (channels x
 *   per-channel rate, capped per protocol) and a latency (a base per
 *   algorithm and protocol plus per-hop latencies by link kind times the
 *   ring's steps or the tree's depth); NCCL runs the least latency +
 *   bytes / bandwidth. Hopper's tables apply when a rank has >= 450 GB/s
 *   inside its host (NVLink 4), Ampere's otherwise; links of >= 100 GB/s
 *   per rank count as NVLink, slower ones as PCIe. A rank's arch= (the
 *   presets set it) names the generation instead when present. The ring's
 *   protocol figures are weft/protocol.h's (weft_proto_model_get).
 * - Plans. A ring choice runs as weft's rings:C (C the channels), a tree
 *   as dbtree, all-to-all as direct (NCCL sends every pair at once).
 *
 * In-network reduction (reduce=nvls|sharp, docs/topo-format.md), also from
 * tuning.cc and search.cc: NVLS (NVLink SHARP) inside one host whose
 * NVSwitch reduces, and, with a SHARP network, across hosts; NVLS-tree
 * (NVLS inside the hosts, a tree between them) for allreduce across hosts
 * whose NVSwitches reduce; CollNet direct and chain (allreduce through a
 * SHARP network switch, hosts with NVSwitch for direct); PAT (allgather and
 * reducescatter with one rank per host, hosts > 1). Each has NCCL's
 * bandwidth (channels x per-channel rate x its efficiency and ratios) and
 * latency; the least estimate of every enabled algorithm and protocol is
 * NCCL's choice. In-network algorithms have no rank-to-rank plan: the
 * simulator runs them as flows to and from the reducing switch
 * (weft_sim_innet, weft/sim.h); PAT runs as weft's bruck plan (the same
 * bytes in log2 steps). NCCL_ALGO/NCCL_PROTO overrides are
 * weft_nccl_choose_forced (weft_synth_nccl_algo builds a forced ring or
 * tree). The tree's rate: the tree search keeps the ring's channels and
 * raises its intra-host rate (bwIntra, tree_gbps) while below twice the
 * ring's and the GPUs' NVLink holds it; the tuning takes it on up to 2
 * hosts; the tree's allreduce bandwidth is scaled by NCCL's
 * treeCorrectionFactor below 512 MiB. Not modelled: CollNet's allgather
 * and reducescatter (NCCL needs a CollNet plugin's iallgather for them). */

typedef enum weft_nccl_algo {
    WEFT_NCCL_RING = 0,
    WEFT_NCCL_TREE,
    WEFT_NCCL_P2P,            /* all-to-all: direct sends, not tuned by NCCL */
    WEFT_NCCL_NVLS,           /* in the NVSwitch (and a SHARP network across hosts) */
    WEFT_NCCL_NVLS_TREE,      /* NVLS in each host, a tree between hosts */
    WEFT_NCCL_COLLNET_DIRECT, /* through a SHARP switch, every GPU to its host's heads */
    WEFT_NCCL_COLLNET_CHAIN,  /* through a SHARP switch, a chain inside each host */
    WEFT_NCCL_PAT,            /* allgather, reducescatter: one rank per host */
    WEFT__NCCL_ALGO_COUNT
} weft_nccl_algo;

/* "ring", "tree", "p2p", "nvls", "nvls_tree", "collnet_direct",
 * "collnet_chain", "pat" ("?" when invalid). Protocols are weft_proto
 * (weft/protocol.h), whose ring figures the model uses. */
WEFT_API const char *weft_nccl_algo_name(weft_nccl_algo a);

/* The fabric as NCCL's search sees it. */
typedef struct weft_nccl_fabric {
    uint32_t ranks, hosts;
    uint32_t per_host;        /* ranks per host (the largest host) */
    uint32_t ports;           /* network ports of a host (nodes with links out of it) */
    double port_gbps;         /* the slowest port's bandwidth out, GB/s */
    double rank_gbps;         /* a rank's bandwidth inside its host, GB/s */
    bool nvlink;              /* rank_gbps >= 100: NVLink latencies, LL128 on */
    weft_gpu_arch arch;       /* the first arch= of a rank; without one, hopper
                                 when rank_gbps >= 450, else ampere */
    bool hopper;              /* arch hopper or later: Hopper's search and tree
                                 tables (NCCL's Blackwell rows are not kept) */
    uint32_t search_channels; /* rings the search finds, after duplication */
    double channel_gbps;      /* the rate of each, GB/s */
    double tree_gbps;         /* the tree search's intra-host rate per channel
                                 (bwIntra of NCCL's tree graph), GB/s: the
                                 ring's rate raised while below twice it and
                                 the GPU's NVLink holds every channel at it */
    uint32_t channels;        /* the communicator's channels: rings:channels */
    bool nvls;                /* a switch inside rank 0's host reduces (reduce=nvls)
                                 and the GPUs are hopper or later: NVLS runs */
    bool collnet;             /* a switch outside the hosts reduces (reduce=sharp) */
    bool nvswitch;            /* rank 0 reaches a switch inside its host */
    uint32_t nvls_channels;   /* NVLS channels (heads): per_host inside one
                                 host, the host's network ports across hosts
                                 (at most per_host); 0 when NVLS is off */
    double nvls_bw_intra;     /* the NVLS search's rates, GB/s per channel: */
    double nvls_bw_inter;     /* GPU <-> NVSwitch, and network (one host: the
                                 search raises it to its top, < 2 x intra) */
    bool nvls_switch;         /* the switch reduces (nvls also needs sm90+ and
                                 2 heads) */
    bool amd;                 /* the first rank names AMD hosts (cpu=amd,
                                 weft_proto_cpu_amd): NCCL's LL cap across
                                 hosts and network overhead for AMD CPUs */
} weft_nccl_fabric;

/* Describes t (ranks are grouped by their host= attribute; a fabric
 * without hosts has one rank per host). WEFT_ETOPO for fewer than 2 ranks,
 * WEFT_ENOMEM. */
WEFT_API weft_err weft_nccl_fabric_get(const weft_topo *t, weft_nccl_fabric *out, weft_diag *d);

/* The fabric as a communicator of `ranks` ranks spread evenly over `hosts`
 * hosts of full sees it (a training step's TP or DP group): full's links
 * and switches, ranks per host ceil(ranks / hosts), the network ports in
 * proportion to the ranks it has per host (at least 1), and both searches
 * redone. WEFT_EINVAL for fewer than 2 ranks or hosts not in 1 .. ranks. */
WEFT_API weft_err weft_nccl_fabric_group(const weft_nccl_fabric *full, uint32_t ranks,
                                         uint32_t hosts, weft_nccl_fabric *out, weft_diag *d);

typedef struct weft_nccl_choice {
    weft_nccl_algo algo;
    weft_proto proto;
    double time_s;     /* NCCL's own estimate (0 for p2p, which it does not tune) */
    double busbw_gbps; /* the bus bandwidth it assumed */
    char plan[24];     /* what runs it: the weft algorithm ("rings:16",
                          "dbtree", "direct", "bruck") or, in the network,
                          the algorithm's name ("nvls", "nvls_tree",
                          "collnet_direct", "collnet_chain") */
    /* NCCL's estimate for NVLS (one host; across hosts with CollNet) when
     * it runs coll; 0 otherwise. */
    double nvls_s;
    /* The best choice among ring and tree alone (rank-to-rank plans): what
     * a plan (weft plan --algo nccl) builds when `algo` runs in the
     * network, equal to algo/proto/plan otherwise. */
    weft_nccl_algo rank_algo;
    weft_proto rank_proto;
    double rank_time_s;
    char rank_plan[24];
} weft_nccl_choice;

/* NCCL's estimate of one algorithm with one protocol, split the way NCCL's
 * ncclTopoGetAlgoTime splits it (src/graph/tuning.cc @5067397c): a fixed
 * latency (per operation of a group) plus bytes over an algorithm
 * bandwidth. */
typedef struct weft_nccl_cost {
    double lat_s;      /* base and per-hop latencies; the ring's plateau
                          factor (Simple, allreduce across hosts) is in it
                          when it applies at the size asked */
    double algbw_gbps; /* algorithm bandwidth: bytes / (1e9 algbw) s */
    double busbw_gbps; /* the bus bandwidth it came from */
    double time_s;     /* lat_s + bytes / (1e9 algbw_gbps) */
} weft_nccl_cost;

/* NCCL's estimate of algorithm a with protocol p for coll at `bytes` on f:
 * the figures weft_nccl_choose compares. False, *out untouched, when NCCL
 * does not run that pair there: an algorithm disabled for coll on f
 * (weft_nccl_estimate says why), the tree outside allreduce, LL128 where
 * the hops are not NVLink, the in-network algorithms and PAT with another
 * protocol than Simple, p2p (all-to-all is not tuned), an unknown
 * collective, algorithm or protocol, a negative size. */
WEFT_API bool weft_nccl_cost_of(const weft_nccl_fabric *f, weft_coll coll, weft_nccl_algo a,
                                weft_proto p, double bytes, weft_nccl_cost *out);

/* The channels NCCL launches for a ring or a tree with protocol p on a
 * collective of `bytes` (NCCL's nBytes: for allreduce the buffer's size):
 * from the communicator's f->channels down, one at a time, while bytes <
 * channels x threads x the per-thread work (src/enqueue.cc @5067397c,
 * topoGetAlgoInfo, lines 2092-2096; LL 8 bytes a thread, times the ranks
 * for the ring, LL128 8, Simple 64; 512 threads, LL128 640), at least 1.
 * f->channels for the other algorithms, which this does not model: NVLS
 * and NVLS tree run nvlsChannels, CollNet direct has a loop of its own,
 * and CollNet chain and PAT take the same loop with their own thread
 * figures (CollNet chain's Simple threshold is 512). Threads are never fewer than NCCL's maximum
 * here (NCCL halves them below one channel's work too; the count of
 * channels does not depend on it). */
WEFT_API uint32_t weft_nccl_channels(const weft_nccl_fabric *f, weft_nccl_algo a, weft_proto p,
                                     double bytes);
/* The share of NCCL's bus bandwidth for ring or tree a with protocol p
 * that the channels weft_nccl_channels gives at `bytes` move: NCCL's
 * model (weft_nccl_cost_of's bus bandwidth, its per-channel rate and
 * ceilings) for those channels over that for all of the communicator's,
 * in (0, 1]; 1 for every other algorithm, an unknown or disabled pair, or
 * a negative size. The gpu model scales its bandwidth by it
 * (weft_sim_opts.chan_share). */
WEFT_API double weft_nccl_channel_share(const weft_nccl_fabric *f, weft_coll coll, weft_nccl_algo a,
                                        weft_proto p, double bytes);

/* NCCL's estimate for one algorithm (its best protocol) for coll at
 * `bytes`: *out as weft_nccl_choose fills it, but for `algo` alone
 * (rank_* as in weft_nccl_choose). WEFT_EUNSUPPORTED when NCCL does not run
 * algo for coll on f (d says why: "nvls needs an NVSwitch that reduces
 * (reduce=nvls)", ...). */
WEFT_API weft_err weft_nccl_estimate(const weft_nccl_fabric *f, weft_coll coll, weft_nccl_algo algo,
                                     double bytes, weft_nccl_choice *out, weft_diag *d);
/* The rank-to-rank plan NCCL runs for coll on t when it runs `algo`, as
 * NCCL_ALGO or a tuner plugin can make it do at every size whatever its
 * own estimate prefers: ring as rings:C, tree (allreduce only) as dbtree
 * on C channels, C the communicator's channels (weft_nccl_fabric_get;
 * synth_build_nccl builds the same plans for its own choice). max_ops as
 * weft_synth_classic_limited. WEFT_EUNSUPPORTED for the algorithms that
 * have no such plan (p2p, the in-network ones and PAT: weft_synth_classic
 * "nccl" and weft_sim_innet run those) and the tree outside allreduce,
 * WEFT_EINVAL for an unknown collective; weft_nccl_fabric_get's errors.
 * The tree plan is marked forwarded per step of WEFT_NCCL_SIMPLE_STEP
 * (weft_plan_set_step_forward; a run with another NCCL_BUFFSIZE sets its
 * own, WEFT_NCCL_STEP_OF). */
WEFT_API weft_err weft_synth_nccl_algo(const weft_topo *t, weft_coll coll, weft_nccl_algo algo,
                                       uint32_t max_ops, weft_plan **out, weft_diag *d);
/* Whether algo reduces in the network (nvls, nvls_tree, collnet_*). */
WEFT_API bool weft_nccl_algo_innet(weft_nccl_algo algo);

/* NCCL's choice for coll at `bytes` (allgather: total output,
 * reducescatter: total input, as everywhere in weft): the least
 * weft_nccl_cost_of, trying the algorithms in NCCL's order (tree, ring,
 * collnet direct, collnet chain, nvls, nvls tree, pat) and LL, LL128,
 * Simple (the first of equal times wins, as in NCCL). WEFT_EINVAL for an
 * unknown collective or a negative size. */
WEFT_API weft_err weft_nccl_choose(const weft_nccl_fabric *f, weft_coll coll, double bytes,
                                   weft_nccl_choice *out, weft_diag *d);

/* NCCL's choice with NCCL_ALGO and NCCL_PROTO forcing one algorithm
 * (algo >= 0, a weft_nccl_algo) and one protocol (proto >= 0, a
 * weft_proto): weft_nccl_choose over what is left, as NCCL's tuner
 * chooses among the algorithms and protocols those variables enable
 * (src/graph/tuning.cc @5067397c, ncclTopoTuneModel: a disabled pair
 * gets no bandwidth). Both -1: weft_nccl_choose. WEFT_EUNSUPPORTED when
 * nothing is left: a forced algorithm NCCL does not run for coll on f
 * (weft_nccl_estimate's reason), a pair it does not run ("nccl: NCCL does
 * not run tree with LL128 for allgather"), all-to-all (not tuned);
 * WEFT_EINVAL for a bad collective, size, algorithm or protocol. */
WEFT_API weft_err weft_nccl_choose_forced(const weft_nccl_fabric *f, weft_coll coll, double bytes,
                                          int algo, int proto, weft_nccl_choice *out, weft_diag *d);

/* NCCL's Simple step: NCCL_BUFFSIZE / NCCL_STEPS bytes per channel and
 * peer. NCCL v2.21.5 src/include/device.h: NCCL_STEPS 8; src/init.cc:
 * DEFAULT_BUFFSIZE (1 << 22), 4 MiB, set by the NCCL_BUFFSIZE variable;
 * src/enqueue.cc computeCollChunkInfo makes a tree's chunk one step. */
#define WEFT_NCCL_STEPS 8u
#define WEFT_NCCL_STEP_OF(buffsize) ((uint64_t)(buffsize) / WEFT_NCCL_STEPS)
#define WEFT_NCCL_SIMPLE_STEP WEFT_NCCL_STEP_OF(UINT64_C(4194304))

/* The size at which `weft plan --algo nccl` shows NCCL's choice: 1 GiB,
 * where every fabric is bandwidth bound. */
#define WEFT_NCCL_PLAN_BYTES 1073741824.0

/* ==== (schedule synthesis sections follow) ============================== */

#ifdef __cplusplus
}
#endif
#endif
