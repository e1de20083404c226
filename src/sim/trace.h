/* Chrome trace-event JSON of a simulated plan (chrome://tracing, Perfetto).
 *
 * A timeline per rank and per link is what people read, so every rank has
 * one track and every link that carried anything has one. Perfetto draws
 * the complete events ("ph":"X") of one track as a stack: two slices on a
 * track must nest or be disjoint, or the later one is not drawn, and
 * transfers overlap freely (in the gpu model every slice of a rank is in
 * flight at once). So a track's slices are swept in time order and cut at
 * every start and end: each interval in which something is in flight is
 * one event, the slice itself when it is alone ("reduce 3→4 chunk 12",
 * args op, kind, src, dst, chunk, count, slice, slices, bytes and both
 * buffers and slots), else a segment "K transfers" (args transfers, bytes
 * of all K together, ops: the first 8 by start as "op N: NAME" or "op N
 * slice I: NAME", more: how many are not listed). Events on a track are
 * disjoint (one may begin where another ends); a slice of zero length is
 * an event of its own that nests in the segment around it.
 *
 * Layout of a run: process "rank R" (pid base+1+R) has one thread
 * "sends": the slices rank R sends, each from its start (after alpha) to
 * its completion (drained plus route latency). Process "links" (pid
 * base+N+1) has one thread per link that carried anything ("gpu0 -> sw0"),
 * each slice from its start until its bytes are drained. A slice is named
 * "reduce 3→4 chunk 12" (kind, source and destination rank, first slot
 * written at the destination; "chunks 12-15" when the op moves several),
 * "nop 3" for a nop of rank 3.
 *
 * A compute op the run charges (a rate > 0 for its kind in
 * o->compute_s_per_b, a sized plan) is not a send: it is drawn on its
 * rank's thread "compute" (tid 1), named after its kind ("hash"), from
 * its start to its end (the time plan_sim.c charged: bytes x rate), args
 * op, rank, bytes, seconds, s_per_b and source (o->compute_source). A
 * rank runs its compute ops one after another (the plans order them), so
 * they are disjoint; should a plan overlap two, the later goes to a
 * further thread "compute 2" (tid 2), and so on, the first whose last
 * slice has ended. Uncharged compute ops stay "nop R" sends.
 *
 * Times are microseconds rounded to whole picoseconds and written as exact
 * decimals ("12.345678"), and segments are cut on the rounded times, so a
 * reader that parses them exactly sees the same disjointness. Output is
 * deterministic (tracks in rank and link id order, slices by start then
 * op).
 *
 * Several runs (the sizes of a sweep) share one document: run k >= 1 uses
 * pids from base = (k-1)(N+1), and its process names start with its label
 * ("1M: rank 0"). Every run's times start at 0. Cost O(E log E + E A) in
 * the E slice placements (flows plus flow x route length) with at most A
 * in flight on a track at once, and O(E) memory.
 */
#ifndef WEFT_SIM_TRACE_H
#define WEFT_SIM_TRACE_H

#include <stdio.h>

#include "sim/engine.h"
#include "weft/plan.h"
#include "weft/sim.h"
#include "weft/topo.h"

/* Writes the trace of a finished run of p at `size` bytes under o, whose
 * flow op*o->slices+s is slice s of op. o->trace_run 0 writes a whole
 * document; run k >= 1 writes the events of the k-th run of a document
 * that weft_sim_trace_begin opened (o->trace_label names it, may be NULL).
 * WEFT_EIO when writing fails, WEFT_ENOMEM. */
weft_err sim_trace_plan(FILE *f, const weft_topo *t, const weft_plan *p, const sim_engine *e,
                        const weft_sim_opts *o, uint64_t size, weft_diag *d);

#endif
