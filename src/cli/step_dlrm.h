/* weft step --model dlrm | dlrm-mlperf: a DLRM training step (weft/dlrm.h;
 * docs/step.md, "DLRM"). */
#ifndef WEFT_CLI_STEP_DLRM_H
#define WEFT_CLI_STEP_DLRM_H

#include "cli/args.h"

/* The DLRM flags, a group of weft step's --help. */
extern const cli_optgroup cli_dlrm_options;

/* Whether --model names a DLRM. */
bool cli_step_is_dlrm(const char *model);
/* The first DLRM flag given (its name), or NULL: they need a DLRM model. */
const char *cli_step_dlrm_flag(const cli_args *a);
/* Runs the step (or --sweep); syn for usage errors; `foreign` lists the
 * flags of weft step that do not apply to a DLRM (NULL-terminated groups). */
int cli_step_dlrm(const cli_args *a, const cli_syntax *syn, const cli_optgroup *const *foreign);

#endif
