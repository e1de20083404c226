/* weft step --chakra PREFIX: replaying Chakra execution traces (weft/work.h,
 * "Chakra"; docs/step.md, "Chakra traces"). */
#ifndef WEFT_CLI_STEP_CHAKRA_H
#define WEFT_CLI_STEP_CHAKRA_H

#include "cli/args.h"
#include "weft/work.h"

/* Runs the traces of PREFIX on --fabric and prints (or --json) the result;
 * g is the GPU of --gpu/--gpu-file, or NULL (compute times from the traces
 * alone); syn for usage errors (a model flag given with --chakra). */
int cli_step_chakra(const cli_args *a, const char *prefix, const cli_syntax *syn,
                    const weft_gpu *g);

#endif
