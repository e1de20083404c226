/* Loading the fabric a command names (SPEC), with the fabric options.
 *
 * Every command that takes a SPEC adds &cli_fabric_options to its syntax
 * and calls cli_load_fabric. The options fill weft_spec_opts (weft/topo.h);
 * they matter only to imports that need them (NCCL topology XML) and are
 * ignored by presets, .topo files and ASTRA-sim configs. Bandwidths are
 * parsed by weft_parse_bandwidth, exactly as in .topo files. A SPEC of "-"
 * reads standard input (as /dev/stdin, format by content).
 */
#ifndef WEFT_CLI_FABRIC_H
#define WEFT_CLI_FABRIC_H

#include "cli/args.h"
#include "weft/topo.h"

extern const cli_optgroup cli_fabric_options;

/* Loads spec with the fabric options given in a. Returns CLI_EXIT_OK and
 * *out (free with weft_topo_free), or, after printing why, CLI_EXIT_USAGE
 * for a malformed option value or CLI_EXIT_INPUT when the spec cannot be
 * loaded (the library's message: "fab.topo:3:12: unknown node 'gpu9'"). */
int cli_load_fabric(const cli_args *a, const char *spec, weft_topo **out);

#endif
