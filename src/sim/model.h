/* Internals of the execution models (model.c; weft_sim_model in
 * weft/sim.h). */
#ifndef WEFT_SIM_MODEL_H
#define WEFT_SIM_MODEL_H

#include <stdbool.h>

#include "weft/protocol.h"
#include "weft/sim.h"

/* The communicator NCCL tunes a collective for: NCCL chooses a protocol
 * per communicator, from its ranks and the hosts (nodes) they span, not
 * from the whole machine (src/graph/tuning.cc of NVIDIA/nccl @5067397:
 * ncclTopoTuneModel reads comm->nNodes and comm->nRanks). `first` is one
 * of its ranks, whose links stand for every rank's (the fabrics weft
 * models give the ranks of a box alike links). */
typedef struct sim_comm {
    uint32_t ranks; /* ranks in the communicator */
    uint32_t nodes; /* hosts they span, >= 1 (ranks of no host count none) */
    uint32_t first; /* its lowest rank */
} sim_comm;

/* Every rank of t (t's hosts, at least 1). */
void sim_comm_all(const weft_topo *t, sim_comm *out);
/* The n ranks ranks[0..n) of t. WEFT_ENOMEM only. */
weft_err sim_comm_of(const weft_topo *t, const uint32_t *ranks, uint32_t n, sim_comm *out,
                     weft_diag *d);
/* The communicator of plan p: its largest group of ranks connected by
 * transfers (of equal groups the one with the lowest rank); every rank of
 * t when no op moves data. O(ranks + ops). WEFT_ENOMEM only. */
weft_err sim_comm_of_plan(const weft_topo *t, const weft_plan *p, sim_comm *out, weft_diag *d);

/* weft_sim_opts_resolve for communicator c instead of all of t's ranks
 * (the gpu model's protocol, ceilings and latencies follow c). */
weft_err sim_model_resolve_comm(const weft_sim_opts *o, const weft_topo *t, const sim_comm *c,
                                weft_coll coll, uint64_t size, uint64_t chunk_bytes,
                                weft_sim_opts *out, weft_diag *d);

/* The protocols to simulate for settings o on communicator c, written to
 * protos[0..n), n returned. NCCL runs the protocol its estimate makes
 * fastest; weft's estimate is its simulation, so the gpu model with
 * o->proto -1 simulates every protocol NCCL enables for c
 * (weft_proto_enabled) and keeps the fastest (ties to the lower enum): the
 * time it reports is never above another protocol's at the same size, and
 * since each protocol's time grows with the size, neither does their
 * minimum. Otherwise the one protocol o->proto (-1 outside the gpu
 * model). */
uint32_t sim_model_protos(const weft_sim_opts *o, const weft_topo *t, const sim_comm *c,
                          weft_coll coll, int protos[WEFT_PROTO_COUNT]);

/* Runs protocol k (an index into sim_model_protos' list) for
 * sim_model_fastest with cutoff, the best time so far (INFINITY for none):
 * a run whose time is sure to exceed it may stop early and set *lost
 * (out then not filled); else it fills out. */
typedef weft_err (*sim_proto_run)(void *ctx, uint32_t k, double cutoff, bool *lost,
                                  weft_sim_result *out, weft_diag *d);

/* The fastest of np protocols, the first on a tie, as running every one
 * would give it: given lb[k], a lower bound on protocol k's time, they run
 * in the order of their bounds (stable), each with the best time so far as
 * its cutoff, and one whose bound is above that time does not run. *best
 * and *kb: its result and index. The first error of a run is returned. */
weft_err sim_model_fastest(uint32_t np, const double *lb, sim_proto_run run, void *ctx,
                           weft_sim_result *best, uint32_t *kb, weft_diag *d);

/* The latency resolved settings r add to the route from node a to node b
 * over links[0..n): hop_s inside one host (a and b on the same host, or
 * both on none), net_hop_s between hosts, and with step_bytes the time to
 * move min(step_bytes, slice_bytes) wire bytes over the slowest link. */
double sim_model_route_extra(const weft_sim_opts *r, const weft_topo *t, weft_node_id a,
                             weft_node_id b, const uint32_t *links, uint32_t n, double slice_bytes);

/* Resolved settings r for running plan p. The runtime model without
 * slice_bytes moves a plan marked whole (weft_plan_whole_messages: the
 * compressed and sparse all-reduces) in one slice a copy. The gpu model:
 * where p is forwarded per step (weft_plan_step_forward, NCCL's tree) and
 * r runs Simple, the store-and-forward step of p (r->step_bytes); every
 * other plan, protocol and model is left as resolved. LL and LL128 forward per line (8 and
 * 128 bytes), which the plan's cut-through already models. WEFT_EINVAL
 * (d naming the rate) for a step rate cap below WEFT_PLAN_STEP_GBPS_MIN,
 * whose steps would take longer than the engine's clock counts. */
weft_err sim_model_plan_step(weft_sim_opts *r, const weft_plan *p, weft_diag *d);

/* The capacity, bytes per second, that resolved settings r give link l of
 * t: its bandwidth, times r->intra_eff when both ends are on one host and
 * neither is a NIC. */
double sim_model_link_cap(const weft_sim_opts *r, const weft_topo *t, weft_link_id l);

/* The settings weft_sim_rings runs rings of g ranks of `size` bytes with:
 * sim_model_resolve_comm on communicator c (one ring) for chunks of size / g, and in the gpu model
 * no cut-through (nothing to cut through without a plan) and, unless o->slice_bytes, slices of one
 * NCCL pipeline step. */
weft_err sim_model_resolve_ring(const weft_sim_opts *o, const weft_topo *t, const sim_comm *c,
                                weft_coll coll, uint64_t size, uint32_t g, weft_sim_opts *out,
                                weft_diag *d);

#endif
