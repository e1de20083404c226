/* weft help [COMMAND [SUBCOMMAND ...]]: the same text as COMMAND --help. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"

static const cli_syntax help_syntax = {
    .path = "weft help",
    .args = "[COMMAND [SUBCOMMAND ...]]",
    .about = "Prints the help of a command, exactly as 'weft COMMAND SUBCOMMAND --help'\n"
             "does; without a command, the list of commands.\n",
    .max_pos = CLI_UNLIMITED,
};

int cli_cmd_help(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&help_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    /* Re-enter the top level with "weft WORDS... --help". */
    char **args = calloc(a.n_pos + 2, sizeof *args);
    if (!args) {
        cli_args_fini(&a);
        cli_error("out of memory building the arguments of weft help");
        return CLI_EXIT_INPUT;
    }
    static char weft[] = "weft", help[] = "--help";
    args[0] = weft;
    for (size_t i = 0; i < a.n_pos; i++)
        args[i + 1] = a.pos[i];
    args[a.n_pos + 1] = help;
    rc = cli_group_run(&cli_toplevel, (int)a.n_pos + 2, args);
    free(args);
    cli_args_fini(&a);
    return rc;
}
