/* Internals of the work module (weft/work.h). Files, lowest first:
 *   gpu, model (counts and checks)  <  compute (kernel times)
 *   <  comm (placement, simulations, cache)  <  gcomp_search (the
 *   gradient compression plan's search)  <  gcomp  <  pipeline (the 1F1B
 *   schedule)  <  trace  <  step  <  sweep;  trace  <  idle (link
 *   groups' idle time)  <  ckpt (checkpoints in it);
 *   pbwire  <  chakra (Chakra trace decoding)  <  chakra_run (above comm
 *   and trace); dlrm (the DLRM step, above comm and the embedding
 *   workloads).
 */
#ifndef WEFT_WORK_INTERNAL_H
#define WEFT_WORK_INTERNAL_H

#include "weft/synth.h"
#include "weft/traffic.h"
#include "weft/work.h"

/* Parameters of one layer, whole (no parallelism). */
typedef struct weft__layer_params {
    uint64_t attn;       /* QKV and output projection, their biases (TP-split) */
    uint64_t dense_mlp;  /* dense MLP; for MoE the router and shared experts */
    uint64_t expert;     /* all routed experts */
    uint64_t expert_one; /* one routed expert */
    uint64_t norm;       /* the layer's norms, MLA's down projections (replicated over TP) */
} weft__layer_params;

const char *weft__work_dim_name(uint32_t dim);
uint64_t weft__work_vocab(const weft_model *m, uint32_t tp);
/* moe: the layer has experts (else its MLP is dense, ffn). */
void weft__work_layer_params(const weft_model *m, bool moe, weft__layer_params *lp);
void weft__work_layer_flops(const weft_model *m, bool moe, uint64_t b, uint64_t *total,
                            uint64_t *attn_core);
uint64_t weft__work_layer_act(const weft_model *m, bool moe, const weft_parallel *p,
                              weft_recompute r);
/* Whether layer i (0-based) has experts (weft_model's moe_first_dense,
 * moe_freq), and how many of a stage's layers (its virtual chunks
 * included) do and do not. */
bool weft__work_is_moe(const weft_model *m, uint32_t layer);
void weft__work_stage_layers(const weft_model *m, const weft_parallel *p, uint32_t stage,
                             uint32_t *moe, uint32_t *dense);
/* Layers of pipeline stage `stage` (uneven first and last stages
 * included) and the virtual stages per rank; valid after
 * weft__work_check. */
uint32_t weft__work_stage_nlayers(const weft_model *m, const weft_parallel *p, uint32_t stage);
uint32_t weft__work_vstages(const weft_model *m, const weft_parallel *p);
/* The data-parallel group the gradients and the optimizer state are
 * reduced and sharded over: DP x CP (Megatron's data-parallel group "with
 * context parallel"); its expert part: DP x CP / EP. */
uint32_t weft__work_grad_group(const weft_parallel *p, uint32_t dp);
weft_err weft__work_check(const weft_model *m, const weft_parallel *p, uint32_t ranks, uint32_t *dp,
                          weft_diag *d);
void weft__work_stage_params(const weft_model *m, const weft_parallel *p, uint32_t stage,
                             uint64_t *dense, uint64_t *expert);

/* ---- compute.c ---- */

/* One GEMM of batch x (M x K) . (K x N): the roofline of its FLOPs at the
 * shape's efficiency and its operand bytes at HBM bandwidth. */
double weft__work_gemm_s(const weft_gpu *g, weft_prec prec, uint64_t batch, uint64_t M, uint64_t N,
                         uint64_t K);
/* A kernel known only by its FLOPs and bytes (a Chakra compute node): the
 * roofline at the bf16 ceiling x WEFT_WORK_GEMM_EFF (a large, well-shaped
 * GEMM) and HBM bandwidth. */
double weft__work_roofline_s(const weft_gpu *g, double flops, double bytes);
/* The shape efficiency alone (WEFT_WORK_GEMM_EFF x quantization). */
double weft__work_gemm_eff(const weft_gpu *g, uint64_t batch, uint64_t M, uint64_t N, uint64_t K);

/* Bytes one rank of cp moves in Transformer Engine's context-parallel
 * attention around its fused kernels (output merges, half-tensor copies,
 * gradient accumulation), forward (*f) and backward (*b), for the rank's
 * q query, o output and kv key-plus-value 16-bit elements; the rank with
 * the most (compute.c has the sources and the count). */
void weft__work_cp_attn_bytes(uint32_t cp, double q, double o, double kv, double *f, double *b);

/* Compute time of one micro-batch on one GPU. */
typedef struct weft__layer_time {
    double fwd, bwd;  /* one layer (an MoE one when the model has experts) */
    double recompute; /* one layer's recomputation (selective or full) */
    double fwd_dense, bwd_dense, recompute_dense; /* a dense layer of the same model */
    double attn_core;              /* the QK^T, softmax, AV part of fwd (CP overlaps with it) */
    double logits_fwd, logits_bwd; /* output layer and loss, last stage */
    double embed_fwd, embed_bwd;   /* input embedding, first stage */
    double optimizer;              /* one optimizer step of the busiest GPU */
    /* Forward GEMMs of a dense layer's QKV, output projection, FC1, FC2
     * (the TP-split Linears whose communication --tp-comm-overlap hides);
     * each one's data- and weight-gradient GEMMs take as long. */
    double lin[4];
} weft__layer_time;

/* routed: tokens the busiest EP rank's experts receive per micro-batch
 * (0: the balanced share, topk x EP x T / E per local expert). */
void weft__work_layer_time(const weft_gpu *g, const weft_model *m, const weft_parallel *p,
                           uint32_t dp, uint64_t routed, weft__layer_time *out);

/* ---- tp_overlap.c ---- */

/* Transformer Engine's userbuffers overlap of TP communication with the
 * Linear GEMMs (--tp-comm-overlap; the schedules and their sources are in
 * tp_overlap.c and docs/step.md, "TP overlap"). Spans in seconds of a GEMM
 * of `gemm` seconds (all SMs) with its communication: a ring exchange of
 * tp steps of `step` seconds each (copy engines); a pipeline of `splits`
 * GEMM chunks on sms - k SMs, each chunk's reduce-scatter (`chunk`
 * seconds) during the next one's GEMM; a bulk collective of `comm`
 * seconds on k SMs beside the whole GEMM. */
double weft__ub_ring_s(double gemm, double step, uint32_t tp);
double weft__ub_pipe_s(double gemm, double chunk, uint32_t splits, uint32_t sms, uint32_t k);
double weft__ub_bulk_s(double gemm, double comm, uint32_t sms, uint32_t k);
/* The pipeline's splits (4). */
uint32_t weft__ub_splits(void);

/* One layer's TP collectives, each over its TP group: the all-gather of
 * a layer input (FP8 bytes with FP8), the 16-bit reduce-scatter of a
 * Linear's output and of 1 / weft__ub_splits() of it. */
typedef struct weft__ub_comm {
    double ag, rs, rs_chunk;
} weft__ub_comm;
/* Exposed TP time of one layer (spans minus their GEMMs) of its attention
 * (QKV, output projection) and its MLP (FC1, FC2), forward and backward. */
typedef struct weft__ub_exposed {
    double attn_f, mlp_f, attn_b, mlp_b;
} weft__ub_exposed;
/* lin: forward GEMMs of QKV, projection, FC1, FC2 (weft__layer_time);
 * sms: the GPU's SMs (0: no contention). */
void weft__ub_layer(const double lin[4], const weft__ub_comm *c, uint32_t tp, uint32_t sms,
                    weft__ub_exposed *out);

/* ---- comm.c ---- */

/* The ranks of every group of the dimensions in `mask` (1 << weft_dim),
 * group after group, members in placement order: n = ranks positions. */
void weft__work_groups(const weft_parallel *p, uint32_t dp, uint32_t mask, uint32_t *pos);

struct weft_work_ctx {
    const weft_topo *topo;
    const weft_gpu *gpu;
    weft_sim_opts opts;
    uint32_t ranks;
    struct weft__cache_entry *cache;
    size_t cache_n, cache_cap;
    struct weft__gcache_entry *gcache; /* weft__work_groups_s */
    size_t gcache_n, gcache_cap;
    struct weft__moe_entry *moe; /* weft__work_moe_s */
    size_t moe_n, moe_cap;
    uint32_t sims, hits;
    uint32_t *scratch; /* 2 x ranks x channels */
    size_t scratch_cap;
    /* NCCL's view of the fabric (weft_nccl_fabric_get), made on first use
     * by the gpu model: 0 not yet, 1 made, -1 none (fewer than 2 ranks). */
    bool trace_idle;           /* weft_work_ctx_set_trace_idle */
    weft_gc_report *gc_report; /* weft_work_grad_plan: the step fills it */
    int nccl_state;
    weft_nccl_fabric nccl;
    weft_work_coll_algo coll_algo; /* weft_work_ctx_set_coll_algo */
    char a2a_algo[32];             /* weft_work_ctx_set_a2a_algo ("": none) */
    weft_work_choice *choices;     /* weft_work_choices */
    size_t choices_n, choices_cap;
    /* The last traffic matrix simulated (weft__work_traffic_s), its time
     * and the settings it ran with; rev: whether the fabric is reversible
     * (comm.c, "Transposed matrices"), 0 not yet known, 1 yes, -1 no. */
    uint64_t *last_bytes;
    uint32_t last_ranks;
    double last_s;
    weft_sim_opts last_opts;
    int rev;
};

/* Time of one collective of `size` bytes (its nccl-tests size) run by every
 * group of `mask` at once: rings for allreduce, allgather, reducescatter
 * (several channels, rotated inside each host, when a group has several
 * ranks in more than one host, as NCCL's rings use every NIC), a direct
 * uniform all-to-all plan for alltoall. pairs (PP): the groups are pairs of
 * consecutive stages, exchanging `size` bytes each way. Cached. */
weft_err weft__work_coll_s(weft_work_ctx *c, const weft_parallel *p, uint32_t dp, uint32_t mask,
                           weft_coll coll, bool pairs, uint64_t size, double *out, weft_diag *d);

/* Time of `coll` of `size` bytes (its nccl-tests size) run at once by the
 * n / gs groups of gs consecutive positions of pos (members in ring
 * order), as weft__work_coll_s runs a kind: rings for allreduce, allgather
 * and reducescatter, a direct uniform all-to-all, a chain from the first
 * member for broadcast (every hop a copy of `size` bytes after the hop
 * before it). p2p (gs 2): one transfer of `size` bytes from pos[2i] to
 * pos[2i + 1] per pair. Cached on (coll, p2p, size, pos). Chakra traces
 * (chakra_run.c) run their collectives through it. */
weft_err weft__work_groups_s(weft_work_ctx *c, weft_coll coll, bool p2p, const uint32_t *pos,
                             uint32_t n, uint32_t gs, uint64_t size, double *out, weft_diag *d);
/* The plan weft__work_groups_s's simulation runs, for running it beside
 * others (weft_sim_plans): *out (NULL when nothing moves: gs < 2, size or
 * n 0; the caller frees it) and its size *psize; for rings, *ring = gs and
 * the plan holds the transfers weft_sim_rings simulates (a weft_sim_job
 * with ring = gs, ring_coll = coll), else *ring = 0. */
weft_err weft__work_groups_plan(weft_work_ctx *c, weft_coll coll, bool p2p, const uint32_t *pos,
                                uint32_t n, uint32_t gs, uint64_t size, weft_plan **out,
                                uint64_t *psize, uint32_t *ring, weft_diag *d);
/* Releases that cache (weft_work_ctx_free). */
void weft__work_gcache_free(weft_work_ctx *c);

/* ---- comm_choose.c ---- */

/* Whether weft__work_groups_s times coll by weft__work_choose_s on c. */
bool weft__work_chooses(const weft_work_ctx *c, weft_coll coll, bool p2p);
/* The time of the alltoallv of matrix t over every rank, recorded
 * (weft_work_choices, matrix set): as the registry schedule
 * weft_work_ctx_set_a2a_algo named (its plan of t) when one is, else
 * (under WEFT_WORK_COLL_BEST) the fastest of its alltoallv plans by
 * weft_choose (`weft sim --compare --traffic`). */
weft_err weft__work_choice_traffic_s(weft_work_ctx *c, const weft_traffic *t, double *out,
                                     weft_diag *d);
/* The choice that one makes for matrix t (under a named schedule
 * that one's, else the fastest plan), without recording it: reads c
 * alone, so that several run at once (weft__work_traffics_s). */
weft_err weft__work_traffic_choice(const weft_work_ctx *c, const weft_traffic *t,
                                   weft_work_choice *out, weft_diag *d);
/* Records choice ch (weft_work_choices) unless an equal one is there. */
weft_err weft__work_record(weft_work_ctx *c, const weft_work_choice *ch, weft_diag *d);
/* The time of coll of `size` bytes run by the n / gs groups of pos under
 * WEFT_WORK_COLL_BEST: each group's fastest schedule by weft_choose on its
 * fabric (weft_topo_subset), the slowest group's time; the choice is
 * recorded (weft_work_choices). */
weft_err weft__work_choose_s(weft_work_ctx *c, weft_coll coll, const uint32_t *pos, uint32_t n,
                             uint32_t gs, uint64_t size, double *out, weft_diag *d);

/* A skewed EP all-to-all (p->moe_zipf): every EP group's dispatch matrix
 * drawn by weft_traffic_moe (p->ep ranks, m's experts and topk, `tokens`
 * per rank, `hbytes` per token and expert, zipf p->moe_zipf_milli, group
 * g seeded p->moe_seed + g), all groups in one fabric-wide alltoallv plan
 * of direct copies; combine is the transpose. Gives both times, the
 * largest column sum over hbytes (tokens the busiest rank receives) and
 * the mean bytes a rank sends to the others. Cached per context. */
typedef struct weft__moe_cost {
    double dispatch_s, combine_s;
    uint64_t max_recv_tokens;
    double mean_offdiag;
} weft__moe_cost;
weft_err weft__work_moe_s(weft_work_ctx *c, const weft_parallel *p, uint32_t dp,
                          const weft_model *m, uint64_t tokens, uint64_t hbytes,
                          weft__moe_cost *out, weft_diag *d);
void weft__work_moe_free(weft_work_ctx *c);
/* An alltoallv of matrix t (the fabric's ranks) as one direct copy per
 * nonzero off-diagonal entry, simulated (not cached); 0 when nothing
 * leaves a rank. WEFT_EINVAL when t is not of the fabric's ranks. */
weft_err weft__work_traffic_s(weft_work_ctx *c, const weft_traffic *t, double *out, weft_diag *d);
/* weft__work_traffic_s of t[0], t[1], .. t[n - 1] in turn, their
 * simulations (and rankings) run at once on weft_threads_get() threads
 * (base/par.h): out[i] and what the context keeps (its counters, choices
 * recorded in matrix order, the last matrix) are those of the calls one
 * after another, to the bit at any thread count. A matrix that is the
 * transpose of an earlier one (comm.c, "Transposed matrices") takes its
 * time. On an error, the calls before the failing matrix have taken
 * effect, as they would have one after another. */
weft_err weft__work_traffics_s(weft_work_ctx *c, const weft_traffic *const *t, size_t n,
                               double *out, weft_diag *d);
/* weft__work_traffics_s(c, t, nt, at, d), then weft__work_groups_s(c, coll,
 * false, pos, n, gs, size[i], &ar[i], d) for i in 0 .. ns - 1: the same
 * times, counters, memo and caches, with the simulations of all of them
 * on threads at once (the sizes of a ring collective not timed by
 * weft__work_choose_s, the cache lacks; other collectives' one after
 * another, after the matrices): a sweep of DLRM steps (weft_dlrm_steps)
 * whose all-to-alls and all-reduces each take seconds. The first error as
 * the calls would give it (a matrix's before any all-reduce's); the items
 * before it done and cached, as the calls would have left them. */
weft_err weft__work_traffics_groups_s(weft_work_ctx *c, const weft_traffic *const *t, size_t nt,
                                      double *at, weft_coll coll, const uint32_t *pos, uint32_t n,
                                      uint32_t gs, const uint64_t *size, size_t ns, double *ar,
                                      weft_diag *d);

/* ---- gcomp_search.c: the gradient compression plan's search ---- */

/* What reducing one group costs on each resource (gcomp_search.c gives
 * the timeline): seconds on the compute stream (delaying the backward),
 * on the compressing CPU thread, on the communication stream, on the
 * decompressing CPU thread; 0: not used. */
typedef struct weft__gc_job {
    double gpu, cpu_pre, comm, cpu_post;
} weft__gc_job;

/* When each resource is next free, D the compute stream's delay so far. */
typedef struct weft__gc_state {
    double D, comm, cpu_c, cpu_d;
} weft__gc_state;

/* The cost of group [i, j) (units i .. j - 1) with option opt. */
typedef weft_err (*weft__gc_cost_fn)(void *arg, uint32_t i, uint32_t j, uint32_t opt,
                                     weft__gc_job *out, weft_diag *d);

typedef struct weft__gc_prob {
    uint32_t n;          /* units, in the order the backward produces them */
    const double *ready; /* n: when each is produced, without compression compute */
    double window;       /* the backward's end without it */
    uint32_t nopt;       /* options 0 .. nopt - 1 (<= 32) */
    uint32_t opt_mask;   /* the allowed ones */
    bool fuse;           /* groups of any consecutive units; else one unit each */
    size_t max_states;   /* per boundary; 0: no cap (exact) */
    weft__gc_cost_fn cost;
    void *arg;
} weft__gc_prob;

/* The plan: groups [cut[g], cut[g + 1]) with options opt[g]. */
typedef struct weft__gc_sol {
    uint32_t ng;
    uint32_t *cut, *opt;
    double end;
    size_t states;
    bool exact;
} weft__gc_sol;

/* One group on the timeline: from state s, its last unit produced at
 * ready; the state after it, when its collective starts and when it is
 * done (either may be NULL). */
void weft__gc_apply(const weft__gc_state *s, double ready, const weft__gc_job *j, weft__gc_state *o,
                    double *start, double *end);
/* The end of a plan whose last state is s. */
double weft__gc_final(const weft__gc_state *s, double window);
/* The end of the plan of ng groups cut, opt. */
weft_err weft__gc_eval(const weft__gc_prob *pr, const uint32_t *cut, const uint32_t *opt,
                       uint32_t ng, double *end, weft_diag *d);
/* The plan of least end (exact unless max_states cut a Pareto set:
 * out->exact). WEFT_ENOMEM, the cost's errors. */
weft_err weft__gc_search(const weft__gc_prob *pr, weft__gc_sol *out, weft_diag *d);
void weft__gc_sol_fini(weft__gc_sol *s);

/* ---- gcomp.c: the step's gradient compression ---- */

/* The dense DP gradients of stage `stage` (`params` of them, n ranks per
 * group of mask) under p->grad_comp, the last micro-batch's backward
 * ending at window, Megatron's buckets of `bucket`: when the last is
 * reduced (*end, >= window), the collectives' time, the bytes and calls
 * of one GPU, and the report's figures. rep (may be NULL) receives the
 * plan. */
typedef struct weft__gc_out {
    double end, comm, bytes, compute, gpu, cpu, saved;
    uint32_t calls, groups, compressed, on_cpu;
    double never_end, always_end;
    bool exact;
} weft__gc_out;
weft_err weft__work_gc(weft_work_ctx *c, const weft_model *m, const weft_parallel *p, uint32_t dp,
                       uint32_t mask, uint32_t n, uint32_t stage, uint64_t params, double window,
                       uint64_t bucket, weft__gc_out *out, weft_gc_report *rep, weft_diag *d);

/* ---- pipeline.c ---- */

/* One forward (fwd) or backward of unit `unit` (micro-batch x virtual
 * stage) on stage `stage`, from t0 to t1; when sent, its input arrived by
 * a pipeline send from send0 to send1. */
typedef struct weft__pipe_event {
    uint32_t stage, unit;
    bool fwd, sent;
    double t0, t1, send0, send1;
} weft__pipe_event;
typedef void (*weft__pipe_cb)(void *arg, const weft__pipe_event *e);

/* Schedules 1F1B over u units on pp stages, each forward fw and backward
 * bw seconds, each hop between stages a send of `send` seconds, event by
 * event: cb (may be NULL) sees every forward and backward in the order
 * they are placed; clock[s] (pp entries) receives when stage s ends.
 * O(pp u) memory; WEFT_ENOMEM. */
weft_err weft__work_pipeline(uint32_t pp, uint32_t u, double fw, double bw, double send,
                             weft__pipe_cb cb, void *arg, double *clock);

/* ---- trace.c ---- */

/* Link-group tracks of a trace. A fabric's link groups are, per box (host),
 * its NVLink (2 x box: links between ranks of the box) and its NICs
 * (2 x box + 1: its ranks' way out). weft__links_mark records that a
 * transfer of kind k at stage s from rank a to rank b loads the group(s)
 * it crosses; weft__links_load that kind k of stage s runs from t0 to t1,
 * on every group marked for (k, s); weft__links_write draws a "links"
 * process with a track per loaded group, cut into disjoint segments named
 * by the kinds active in each ("tp+pp"), in whole nanoseconds. */
#define WEFT__LINKS_MAX_KINDS 8

typedef struct weft__lspan {
    double t;
    int32_t delta; /* +1 a load begins, -1 it ends */
    uint32_t kind;
} weft__lspan;

typedef struct weft__ltrack {
    weft__lspan *s;
    size_t n, cap;
} weft__ltrack;

typedef struct weft__links {
    uint32_t nbox, nlg, kinds, stages;
    int32_t *box_host; /* box index -> the fabric's host id */
    uint32_t *box_of;  /* rank -> box index */
    uint8_t *load;     /* [kind][stage][link group] */
    weft__ltrack *tr;
    bool oom;        /* a load was lost for want of memory */
    double idle_end; /* > 0: weft__links_write also draws "idle" slices in the
                        gaps of [0, idle_end] on every group's track */
} weft__links;

/* kinds <= WEFT__LINKS_MAX_KINDS. WEFT_ENOMEM (then weft__links_fini). */
weft_err weft__links_init(weft__links *L, const weft_topo *t, uint32_t kinds, uint32_t stages);
void weft__links_mark(weft__links *L, uint32_t kind, uint32_t stage, uint32_t a, uint32_t b);
void weft__links_clear(weft__links *L, uint32_t kind, uint32_t stage);
void weft__links_load(weft__links *L, uint32_t kind, uint32_t stage, double t0, double t1);
void weft__links_write(FILE *f, bool *first, weft__links *L, uint32_t pid,
                       const char *const *names);
void weft__links_fini(weft__links *L);

/* The link loads weft__work_trace draws, without a trace: L (initialized
 * here; weft__links_fini it whatever the result) holds every load of the
 * step r under p. WEFT_ENOMEM. */
weft_err weft__work_step_links(weft_work_ctx *c, const weft_parallel *p, uint32_t dp,
                               const weft_step_result *r, weft__links *L);

/* Writes the step r under p as a Chrome/Perfetto trace: one process per
 * pipeline stage, a "compute" track with the forward and backward of every
 * micro-batch (virtual stage) in 1F1B order, "pp sends forward" and "pp
 * sends backward" tracks, "dp gradients" and "optimizer"; then a "links"
 * process with a track per busy link group of c's fabric ("NVLink of box
 * bH": links between ranks of one box; "NICs of box bH": its ranks' way
 * out) showing when the step's collectives load it: TP, CP and EP during
 * the forwards and backwards of the stages whose groups cross it, PP
 * during the sends between the stages it joins, DP during the gradient
 * reduction; docs/step.md describes it. WEFT_EIO when writing fails,
 * WEFT_ENOMEM. */
weft_err weft__work_trace(FILE *f, weft_work_ctx *c, const weft_parallel *p, uint32_t dp,
                          const weft_step_result *r, weft_diag *d);

/* Whether the GPU has tensor cores of precision prec (FP32 always runs). */
static inline bool weft__work_prec_ok(const weft_gpu *g, weft_prec prec)
{
    return prec == WEFT_PREC_FP32 || g->peak[prec] > 0;
}

/* Whether counts' memory per GPU fits g's HBM. */
static inline bool weft__work_fits(const weft_gpu *g, const weft_counts *c)
{
    return (double)c->mem_total <= g->hbm_bytes;
}

#endif
