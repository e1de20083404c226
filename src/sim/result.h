/* Filling a weft_sim_result from a finished engine run (shared by the ring
 * and plan drivers). */
#ifndef WEFT_SIM_RESULT_H
#define WEFT_SIM_RESULT_H

#include "sim/engine.h"
#include "sim/symm.h"
#include "weft/sim.h"

/* Fills time, bandwidths, counters and the busiest link classes. Engine link
 * i is link class i of cls; its representative physical link is named. Link
 * bytes are the engine's times bytes_scale; time_s < 0 takes the engine's
 * makespan, otherwise time_s is the collective's time. */
void sim_result_fill(weft_sim_result *out, const sim_engine *e, const sim_classes *cls,
                     const double *class_cap, weft_coll coll, uint32_t ranks, uint64_t size,
                     double bytes_scale, double time_s);

/* Replaces out->busiest by the busiest physical links, from the bytes each
 * carried over the whole run (bytes[l], 0 for unused links) and the
 * capacities (bytes/s), with out->time_s. Links with the same capacity and
 * bytes form one entry (count, represented by the smallest id); entries are
 * ordered by utilisation, ties by link id. O(n_links). */
void sim_result_busiest_links(weft_sim_result *out, uint32_t n_links, const double *bytes,
                              const double *cap);

/* Records the model that ran (r: the resolved settings) and adds its
 * launch latency to the time, the bandwidths and the utilisations. */
void sim_result_finish(weft_sim_result *out, const weft_sim_opts *r);

#endif
