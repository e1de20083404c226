/* The top-level group: the table generated from commands.h. */
#include "cli/commands.h"
#include "cli/cli.h"

#define CLI__ENTRY(name, summary) {#name, summary, cli_cmd_##name},
static const cli_command commands[] = {CLI_COMMANDS(CLI__ENTRY)};
#undef CLI__ENTRY

const cli_group cli_toplevel = {
    .path = "weft",
    .noun = "command",
    .about = "weft: collective communication on real network fabrics: exact throughput\n"
             "bounds, schedule synthesis, flow simulation and real execution.\n"
             "\n"
             "A fabric (SPEC) is a .topo file, an NCCL topology XML, an ASTRA-sim network\n"
             "config (.yml) or a preset such as a100:2 (see 'weft topo list').\n"
             "\n"
             "exit status: 0 success, 1 the input is wrong (the message says what and\n"
             "where), 2 usage error.\n",
    .commands = commands,
    .count = sizeof commands / sizeof *commands,
    .version = "weft " WEFT_VERSION,
};
