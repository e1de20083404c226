/* The table of top-level commands: the one place a command is registered.
 *
 * To add a command NAME: write src/cli/cmd_NAME.c defining
 *     int cli_cmd_NAME(int argc, char **argv)
 * (include "cli/commands.h" there for its prototype) and add one line
 *     X(NAME, "one-line summary")
 * to the list below, above `help`. `weft --help` lists the commands in this
 * order. docs/cli.md has the details.
 */
#ifndef WEFT_CLI_COMMANDS_H
#define WEFT_CLI_COMMANDS_H

#define CLI_COMMANDS(X)                                                                            \
    X(topo, "inspect fabrics: list presets, print, summarise, draw (DOT)")                         \
    X(traffic, "traffic matrices (bytes rank i sends to j): moe, embedding, uniform, show")        \
    X(bound, "exact throughput optimum and bottleneck cut: weft bound SPEC --coll C")              \
    X(plan, "build a schedule and its cost on a fabric: weft plan SPEC --coll C --algo A")         \
    X(verify, "prove a plan correct in every order its deps allow: weft verify PLAN")              \
    X(sim, "simulated time, algbw and busbw of a collective: weft sim SPEC --algo ring --coll C")  \
    X(launch, "run N ranks of a command on this host: weft launch -n N -- CMD...")                 \
    X(perf, "measure a collective on the real runtime (nccl-tests table): weft perf allreduce")    \
    X(tune, "simulate every plan per collective and size: a tuning table for the runtime")         \
    X(step, "one training step of a model on a fabric: weft step --fabric a100:8 --gpu a100-80g")  \
    X(help, "print the help of a command: weft help [COMMAND [SUBCOMMAND]]")

#define CLI__DECLARE(name, summary) int cli_cmd_##name(int argc, char **argv);
CLI_COMMANDS(CLI__DECLARE)
#undef CLI__DECLARE

#endif
