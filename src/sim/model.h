/* Internals of the execution models (model.c; weft_sim_model in
 * weft/sim.h). */
#ifndef WEFT_SIM_MODEL_H
#define WEFT_SIM_MODEL_H

#include "weft/sim.h"

/* The latency resolved settings r add to the route from node a to node b
 * over links[0..n): hop_s inside one host (a and b on the same host, or
 * both on none), net_hop_s between hosts, and with step_bytes the time to
 * move min(step_bytes, slice_bytes) wire bytes over the slowest link. */
double sim_model_route_extra(const weft_sim_opts *r, const weft_topo *t, weft_node_id a,
                             weft_node_id b, const uint32_t *links, uint32_t n,
                             double slice_bytes);

/* The capacity, bytes per second, that resolved settings r give link l of
 * t: its bandwidth, times r->intra_eff when both ends are on one host and
 * neither is a NIC. */
double sim_model_link_cap(const weft_sim_opts *r, const weft_topo *t, weft_link_id l);

/* The settings weft_sim_rings runs rings of g ranks of `size` bytes with:
 * weft_sim_opts_resolve for chunks of size / g, and in the gpu model no
 * cut-through (nothing to cut through without a plan) and, unless
 * o->slice_bytes, slices of one NCCL pipeline step. */
weft_err sim_model_resolve_ring(const weft_sim_opts *o, const weft_topo *t, weft_coll coll,
                                uint64_t size, uint32_t g, weft_sim_opts *out, weft_diag *d);

#endif
