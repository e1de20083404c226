/* Chrome trace-event JSON of a simulated plan (chrome://tracing, Perfetto).
 *
 * Perfetto draws the complete events ("ph":"X") of one track as a stack:
 * two slices on a track must nest or be disjoint, or the later one is not
 * drawn. Transfers overlap freely, so they are never put on one track as
 * they come. Every slice of every op is placed on a *lane*: the slices of a
 * rank (or of a link) are sorted by start and each takes the lowest lane
 * that is free at its start (greedy interval partitioning, which uses as
 * few lanes as the largest number of slices in flight at once). Slices on
 * one lane are therefore disjoint (one may begin where another ends).
 *
 * Layout of a run: process "rank R" (pid base+1+R) has one thread per lane
 * of the slices rank R sends ("sends", "sends 2", ...), each slice from its
 * start (after alpha) to its completion (drained plus route latency).
 * Process "links" (pid base+N+1) has one thread per lane of every link that
 * carried anything ("gpu0 -> sw0", "gpu0 -> sw0 (2)", ...), each slice from
 * its start until its bytes are drained. A slice is named "reduce 3→4
 * chunk 12" (kind, source and destination rank, first slot written at the
 * destination; "chunks 12-15" when the op moves several), "nop 3" for a nop
 * of rank 3; its args give the op id, kind, src, dst, chunk, count, slice,
 * slices, bytes and both buffers and slots.
 *
 * Times are microseconds rounded to whole picoseconds and written as exact
 * decimals ("12.345678"), and lanes are computed on the rounded times, so a
 * reader that parses them exactly sees the same disjointness. Output is
 * deterministic (tracks in rank and link id order, slices by start then op).
 *
 * Several runs (the sizes of a sweep) share one document: run k >= 1 uses
 * pids from base = (k-1)(N+1), and its process names start with its label
 * ("1M: rank 0"). Every run's times start at 0. Cost O(E log E) in the E
 * slice placements (flows plus flow x route length), and O(E) memory.
 */
#ifndef WEFT_SIM_TRACE_H
#define WEFT_SIM_TRACE_H

#include <stdio.h>

#include "sim/engine.h"
#include "weft/plan.h"
#include "weft/topo.h"

/* Writes the trace of a finished run whose flow op*slices+s is slice s of
 * op. run 0 writes a whole document; run k >= 1 writes the events of the
 * k-th run of a document that weft_sim_trace_begin opened (label names it,
 * may be NULL). WEFT_EIO when writing fails, WEFT_ENOMEM. */
weft_err sim_trace_plan(FILE *f, const weft_topo *t, const weft_plan *p, const sim_engine *e,
                        uint32_t slices, uint32_t run, const char *label, weft_diag *d);

#endif
