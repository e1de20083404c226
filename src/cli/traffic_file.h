/* --traffic FILE: a traffic matrix for a command that also has a fabric
 * (plan, sim; bound and perf take the same flag). One message for every
 * command: the file's own errors (FILE:LINE:COL: reason, exit 1) and a size
 * that is not the fabric's ("weft: m.tm: the traffic matrix has 4 ranks, the
 * fabric switch:8 has 8", exit 1). */
#ifndef WEFT_CLI_TRAFFIC_FILE_H
#define WEFT_CLI_TRAFFIC_FILE_H

#include <stdint.h>

#include "weft/traffic.h"

/* Loads path into *out (free with weft_traffic_free) when its ranks are
 * `ranks`, the ranks of fabric `spec`. Returns CLI_EXIT_OK, or
 * CLI_EXIT_INPUT after printing why (*out untouched). */
int cli_traffic_load(const char *path, const char *spec, uint32_t ranks, weft_traffic *out);

/* Writes t with its comment line to path (stdout without one; see
 * cli_out_open), complete or not at all. A CLI exit code. */
int cli_traffic_write(const char *path, const weft_traffic *t, const char *comment);

#endif
