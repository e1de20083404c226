/* Internals of the throughput-optimal schedule (docs/optimal.md).
 *
 * One phase (an allgather, or a reduce-scatter built as an allgather on the
 * reversed fabric) goes through three steps, each in its own file:
 *
 *   optimal_graph.c  integer capacities c_l = b_l k / r, the rooted
 *                    connectivity condition checked with max-flows, and
 *                    switch removal by edge splitting;
 *   optimal_pack.c   packing k spanning out-trees per rank on the
 *                    switch-free graph, in groups of identical trees;
 *   optimal.c        routes of tree edges over physical links, the plan,
 *                    and the public entry point.
 *
 * The working graph is a list of "entries": an entry is a directed edge
 * u -> v with an integer capacity that is either a fabric link or the
 * splice of two entries a (u -> w) and b (w -> v) made by splitting at w.
 * An entry therefore stands for exactly one physical path; an entry's
 * units are units of every link on that path. Entries are never removed;
 * a spent entry keeps cap 0 and stays as a parent of its splices.
 *
 * Everything is exact integer arithmetic; every max-flow is the integer
 * max-flow of weft/maxflow.h.
 *
 * File order (each file uses only the ones before it, through their
 * headers; only optimal.c includes this one; tools/file_cycles.py checks
 * the order):
 *
 *   optimal_cuts.{h,c}   the cut memory (needs nothing of the others);
 *   optimal_graph.{h,c}  the working graph (uses the cut memory);
 *   optimal_pack.{h,c}   the packing (uses the graph and the cut memory);
 *   optimal.c            the entry point (uses graph, pack and rail).
 *
 * optimal_rail.{h,c}, the rail-by-rail schedule, stands beside this order:
 * weft_synth_optimal tries it first, and it solves each box with
 * weft_synth_optimal itself: a recursion through the public entry point,
 * on the fabric of one box, where the box schedule is a star and does not
 * recurse again. tools/file_cycles.py reports this pair as its one cycle.
 */
#ifndef WEFT_SYNTH_OPTIMAL_INTERNAL_H
#define WEFT_SYNTH_OPTIMAL_INTERNAL_H

#include "synth/optimal_graph.h"
#include "synth/optimal_pack.h"

#endif
