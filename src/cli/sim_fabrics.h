/* weft sim --compare-fabrics A,B,... --coll C (--size S | --traffic F)
 * [--cost FILE] [--json]: for each fabric the simulated time of the best
 * plan weft has for it (cli_sim_best_plan), the exact bound, and the $ and
 * W of its network (weft/cost.h), in total and per rank, sorted by time. */
#ifndef WEFT_CLI_SIM_FABRICS_H
#define WEFT_CLI_SIM_FABRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/args.h"
#include "cli/progress.h"
#include "weft/sim.h"

/* Splits a --compare-fabrics list into specs. A comma inside a preset's
 * parameters stays with it: a new spec starts at a piece that has ':' or
 * '(', names a preset, or names an existing file; any other piece
 * ("gpus=4", "100GB/s") continues the spec before it. Writes up to cap
 * pointers into buf (the text, copied and cut) and returns how many, or 0
 * when the list is empty or has more than cap specs. */
size_t cli_split_fabrics(const char *list, char *buf, size_t buflen, const char **specs,
                         size_t cap);

/* The whole comparison: a holds the fabric options (applied to every
 * fabric); o the simulation options, whose model is each fabric's default
 * unless model_set. size is the bytes (traffic_path NULL) or ignored.
 * Returns the exit code: 1 with a message when a fabric or the cost file
 * cannot be loaded, the fabrics' rank counts differ, or no fabric
 * simulates. */
int cli_sim_compare_fabrics(const cli_args *a, const char *list, weft_coll coll, uint64_t size,
                            const char *traffic_path, const char *cost_path, const weft_sim_opts *o,
                            bool model_set, uint32_t max_ops, bool json, cli_progress *pr);

#endif
