/* Loading the fabric a command names (SPEC), with the fabric options.
 *
 * Every command that takes a SPEC adds &cli_fabric_options to its syntax
 * and calls cli_load_fabric. The options fill weft_spec_opts (weft/topo.h);
 * they apply only to NCCL topology XML imports, and giving one with any
 * other SPEC (a preset, a .topo file, an ASTRA-sim config, a host fabric)
 * is a usage error naming the option and what the SPEC is, as is --net
 * without --hosts 2 or more. Bandwidths are read by cli_flag_bandwidth
 * (weft_parse_quantity: "25" is 25 GB/s, as in presets). What the import
 * assumed (weft_topo_assumptions) is printed on stderr, one line each
 * ("weft: assumed: no NVLink modelled: ..."), since every answer from the
 * fabric depends on it. A SPEC of "-" reads standard input (as /dev/stdin,
 * format by content).
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

/* Prints weft_topo_assumptions(t) on stderr, one "weft: assumed: LINE"
 * each (cli_load_fabric does; for commands that load a fabric without the
 * fabric options, such as verify --topo). */
void cli_fabric_say_assumptions(const weft_topo *t);

#endif
