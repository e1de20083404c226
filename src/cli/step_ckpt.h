/* weft step --idle and --checkpoint: the idle-time profile and the
 * checkpoint plan in the report (weft/work.h, "Idle time and checkpoints";
 * docs/step.md, "Checkpoints"). */
#ifndef WEFT_CLI_STEP_CKPT_H
#define WEFT_CLI_STEP_CKPT_H

#include "cli/json.h"
#include "weft/work.h"

/* --idle, --checkpoint: what to add to the report. */
typedef struct cli_ckpt_out {
    bool idle, ckpt;
    weft_idle_profile ip;
    weft_ckpt_spec spec;
    weft_ckpt_result cr;
    bool sim; /* gemini: cs holds the engine's replay (weft_ckpt_simulate) */
    weft_ckpt_sim cs;
    double F, restart;
    uint32_t boxes;
} cli_ckpt_out;

/* The "idle" and "checkpoint" members of the step's JSON object. */
void cli_step_ckpt_json(cli_json *j, const cli_ckpt_out *o);
/* The same as text lines after the step's breakdown. */
void cli_step_ckpt_print(const cli_ckpt_out *o);

#endif
