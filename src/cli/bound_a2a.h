/* The all-to-all part of `weft bound` (bound_a2a.c). */
#ifndef WEFT_CLI_BOUND_A2A_H
#define WEFT_CLI_BOUND_A2A_H

#include <stdbool.h>

#include "weft/topo.h"

/* Computes and prints the exact all-to-all bound of t (uniform, or the
 * matrix in the file `traffic` when not NULL); returns the exit code. */
int cli_bound_a2a(const char *spec, const weft_topo *t, const char *traffic, bool symmetry,
                  bool json);

#endif
