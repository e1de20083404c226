/* The subcommands of `weft topo` (one file each) and what they share. */
#ifndef WEFT_CLI_TOPO_H
#define WEFT_CLI_TOPO_H

#include <stddef.h>

#include "weft/rat.h"

int cli_topo_list(int argc, char **argv);
int cli_topo_show(int argc, char **argv);
int cli_topo_stats(int argc, char **argv);
int cli_topo_dot(int argc, char **argv);

/* A bandwidth for people: "300 GB/s", "12.5 GB/s", and for values with no
 * finite decimal form the fraction and a rounded decimal:
 * "2400/7 GB/s (~342.857 GB/s)". */
void cli_format_bw(weft_rat gbps, char *buf, size_t size);

#endif
