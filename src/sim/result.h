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

#endif
