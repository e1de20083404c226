/* Megatron-LM's (and Megatron-DeepSpeed's) flags that `weft step` accepts
 * so that a launch line can be pasted, without them changing the
 * prediction: training-only flags (learning rate, iterations, data,
 * logging, checkpoints), which do not change a step's time or memory, and
 * flags that would change it but that weft does not model, which get a
 * warning. A value is checked as Megatron's argparse checks it (an integer,
 * a float, one of its choices), so a value Megatron rejects is still a
 * usage error. */
#ifndef WEFT_CLI_MEGATRON_FLAGS_H
#define WEFT_CLI_MEGATRON_FLAGS_H

#include "cli/args.h"

/* The flags, for a command's syntax (--help lists the names only). */
extern const cli_optgroup cli_megatron_other;

/* The flags of cli_megatron_other that a command line gave. */
typedef struct cli_megatron_seen {
    const char *ignored[64]; /* training-only */
    size_t n_ignored;
    const char *unmodelled[32]; /* would change the step; weft ignores them */
    size_t n_unmodelled;
} cli_megatron_seen;

/* Checks the values of the given flags (usage error, exit 2, naming the
 * flag and what Megatron expects) and fills *seen. CLI_EXIT_OK otherwise. */
int cli_megatron_check(const cli_syntax *syn, const cli_args *a, cli_megatron_seen *seen);

/* "weft: ignored (training only, no effect on the step): --lr, ..." and
 * "weft: warning: not modelled ...: --overlap-param-gather (why), ..." on
 * stderr, when there are any. */
void cli_megatron_report(const cli_megatron_seen *seen);

#endif
