/* The weft command: what every subcommand shares.
 *
 * The command is a tree. main() hands argv to the top-level group (the
 * table in commands.h); a group looks up its next word in a const table of
 * {name, summary, run} and calls run(argc, argv) with argv[0] set to that
 * word. A leaf command parses the rest with cli_args_parse (args.h), does
 * its work through the public weft headers only, writes through the output
 * helpers (json.h, table.h, outfile.h) and returns an exit code.
 *
 * Exit codes (DESIGN.md; scripts rely on them):
 *   0  success;
 *   1  the input is wrong (or cannot be read or written): one line
 *      "weft: MESSAGE" on stderr naming what and where;
 *   2  usage error (unknown command or flag, missing or malformed argument):
 *      "weft: MESSAGE", the usage line and a pointer to --help on stderr.
 * Nothing else ends the process: commands return, they never call exit().
 */
#ifndef WEFT_CLI_CLI_H
#define WEFT_CLI_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "weft/err.h"

/* The build defines it from the CMake project version. */
#ifndef WEFT_VERSION
#define WEFT_VERSION "unknown"
#endif

enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_INPUT = 1,
    CLI_EXIT_USAGE = 2,
};

/* Runs one command. argv[0] is the command's own word ("stats"); the
 * remaining argv are its arguments. Returns an exit code. */
typedef int (*cli_run_fn)(int argc, char **argv);

typedef struct cli_command {
    const char *name;    /* the word that selects it: "topo" */
    const char *summary; /* one line for the parent's help */
    cli_run_fn run;
} cli_command;

/* A command that only selects a subcommand ("weft", "weft topo"). */
typedef struct cli_group {
    const char *path;  /* the words that lead here: "weft topo" */
    const char *noun;  /* what its words are called in messages: "topo command" */
    const char *about; /* paragraph(s) for --help, lines ending in '\n' */
    const cli_command *commands;
    size_t count;
    /* Non-NULL only at the top: accept --version and print this. */
    const char *version;
} cli_group;

/* Handles the group's own flags (--help/-h, --log LEVEL, and --version at
 * the top) and runs the selected command with argv starting at its word.
 * argv[0] is the group's own word. Returns the exit code. */
int cli_group_run(const cli_group *g, int argc, char **argv);

/* The top-level group (commands.c). */
extern const cli_group cli_toplevel;

/* Prints "weft: MESSAGE\n" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

struct cli_json;
/* Ends a --json document (cli_json_finish): CLI_EXIT_OK, or, when the
 * writer was misused or the document is incomplete, CLI_EXIT_INPUT after
 * saying so. */
int cli_json_done(struct cli_json *j);

/* Reports a failed library call: prints "weft: " and the diagnostic's
 * message (or the code's message when the diagnostic is empty) and returns
 * CLI_EXIT_INPUT. A bare "out of memory" (an allocation that had no more
 * to say) is completed with the running command and what it works on:
 * "out of memory running 'weft plan ring:100000' (building the plan)" when
 * the caller named the object with cli_context_object. */
int cli_fail(weft_err err, const weft_diag *d);

/* What the running command is ("weft plan") and works on (its first
 * operand, "ring:100000", or NULL), for messages that have no place of
 * their own; cli_args_parse sets it for every command. The strings must
 * outlive the command (argv and static syntax text do). */
void cli_context_set(const char *command, const char *subject);
/* What the command is building now ("building the plan", "simulating"),
 * static text, or NULL; cli_fail adds it to a bare "out of memory". */
void cli_context_object(const char *what);

/* Sets the log level from its name ("debug"); false for an unknown name. */
bool cli_log_level_set(const char *text);
/* The names cli_log_level_set accepts, for messages. */
#define CLI_LOG_LEVELS "error, warn, info, debug, trace"

#endif
