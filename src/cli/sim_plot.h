/* weft sim --plot and weft sim --compare --plot: busbw against size, one
 * series per simulated algorithm, and the exact bound's busbw (weft bound)
 * as a dashed line where weft bound covers the collective. Drawn by
 * cli/svg_plot.h, written atomically. */
#ifndef WEFT_CLI_SIM_PLOT_H
#define WEFT_CLI_SIM_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/sim.h"
#include "weft/synth.h"

typedef struct cli_sim_plot_algo {
    const char *name;
    const weft_sim_result *res; /* one per size */
} cli_sim_plot_algo;

/* The bound problem of collective c: false for the collectives weft bound
 * does not cover (broadcast, reduce, all-to-all). */
bool cli_sim_bound_coll(weft_coll c, weft_bound_coll *out);

/* The exact bound's algbw in GB/s for coll on t; false when weft bound does
 * not cover coll or the bound cannot be computed. */
bool cli_sim_bound_gbps(const weft_topo *t, weft_coll coll, double *gbps);

/* Writes the plot of nalgos algorithms over nsizes sizes to path; bound_gbps
 * is the bound's algbw (NULL: no bound line). Returns an exit code
 * (CLI_EXIT_INPUT after printing why the file could not be written). */
int cli_sim_plot(const char *path, const char *spec, const weft_topo *t, weft_coll coll,
                 const uint64_t *sizes, size_t nsizes, const cli_sim_plot_algo *algos,
                 size_t nalgos, const double *bound_gbps);

#endif
