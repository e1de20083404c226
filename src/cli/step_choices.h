/* weft step --coll-algo: how each group's collectives run (weft/work.h,
 * weft_work_coll_algo) and, with best, the report's list of what
 * weft_choose chose (docs/step.md, "Choosing each group's collective"). */
#ifndef WEFT_CLI_STEP_CHOICES_H
#define WEFT_CLI_STEP_CHOICES_H

#include "cli/args.h"
#include "cli/json.h"
#include "weft/work.h"

/* --coll-algo nccl|best onto c (nccl when absent). A usage error's exit
 * code, or CLI_EXIT_OK. */
int cli_step_coll_algo(const cli_syntax *syn, const cli_args *a, weft_work_ctx *c);
/* "collectives chosen ..." and a table of weft_work_choices, when any;
 * a2a_algo: the schedule --a2a-algo named for the all-to-alls of
 * matrices (said in the heading), or NULL. */
void cli_step_choices_print(const weft_work_ctx *c, const char *a2a_algo);
/* The "chosen" member of the step's JSON object (an empty array under
 * nccl). */
void cli_step_choices_json(cli_json *j, const weft_work_ctx *c);

#endif
