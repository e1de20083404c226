/* The subcommands of `weft topo` (one file each) and what they share. */
#ifndef WEFT_CLI_TOPO_H
#define WEFT_CLI_TOPO_H

#include <stddef.h>
#include <stdio.h>

#include "cli/args.h"
#include "weft/rat.h"
#include "weft/topo.h"

int cli_topo_list(int argc, char **argv);
int cli_topo_show(int argc, char **argv);
int cli_topo_stats(int argc, char **argv);
int cli_topo_dot(int argc, char **argv);
int cli_topo_host(int argc, char **argv);
int cli_topo_search(int argc, char **argv);
int cli_topo_cost(int argc, char **argv);

/* Writes one view of fabric t (loaded from spec) to f. Returns
 * CLI_EXIT_OK, or an exit code after printing why with cli_error; what it
 * wrote is then discarded. */
typedef int (*cli_topo_writer)(FILE *f, const cli_args *a, const char *spec, const weft_topo *t);

/* The whole of a `weft topo SUBCOMMAND SPEC [-o FILE]` command: parses argv
 * by syn (whose option "output" names the file), loads the fabric, and
 * commits write's output to FILE or stdout only if write succeeds
 * (cli/outfile.h). Returns the process exit code. */
int cli_topo_command(const cli_syntax *syn, int argc, char **argv, cli_topo_writer write);

/* A bandwidth for people: "300 GB/s", "12.5 GB/s", and for values with no
 * finite decimal form the fraction and a rounded decimal:
 * "2400/7 GB/s (~342.857 GB/s)". */
void cli_format_bw(weft_rat gbps, char *buf, size_t size);

#endif
