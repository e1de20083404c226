/* Filling a weft_sim_result from a finished engine run (shared by the ring
 * and plan drivers). */
#ifndef WEFT_SIM_RESULT_H
#define WEFT_SIM_RESULT_H

#include "sim/engine.h"
#include "sim/symm.h"
#include "weft/sim.h"

/* Fills time, bandwidths, counters and the busiest link classes. Engine link
 * i is link class i of cls; its representative physical link is named. */
void sim_result_fill(weft_sim_result *out, const sim_engine *e, const sim_classes *cls,
                     const double *class_cap, weft_coll coll, uint32_t ranks, uint64_t size);

#endif
