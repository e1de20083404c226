/* weft sim --traffic A,B,...: the all-to-alls of several matrices (one per
 * MoE layer or iteration) run one after another, each with its own plan;
 * on a fabric with optical circuit switches the circuits are reconfigured
 * between them (docs/ocs.md). */
#ifndef WEFT_CLI_SIM_SEQUENCE_H
#define WEFT_CLI_SIM_SEQUENCE_H

#include <stdbool.h>

#include "weft/sim.h"

/* Simulates algorithm `algo` (classic or optimal) for each matrix of the
 * comma-separated list `paths` in order, and prints per matrix its time
 * and the reconfiguration before it, then the total. Between matrices an
 * OCS whose circuits of the next plan's first epoch differ from those of
 * the previous plan's last epoch (a plan without circuits keeps them)
 * charges its reconfig= delay; the largest of those is the wait. Returns
 * a CLI exit code after printing. */
int cli_sim_traffic_sequence(const char *spec, const weft_topo *t, const char *algo,
                             const char *paths, const weft_sim_opts *o, uint32_t max_ops,
                             bool json);

#endif
