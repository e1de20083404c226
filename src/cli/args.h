/* The argument parser every weft command shares.
 *
 * A command describes its syntax in a const cli_syntax: the words that lead
 * to it, the positional arguments, and groups of options. Options are long
 * (--name) with an optional one-letter alias (-n); an option either takes a
 * value (--coll allgather, --coll=allgather, -o FILE, -oFILE) or is a flag
 * without one (--json). Arguments are read left to right; the last value of
 * a repeated option wins; "--" ends the options (later words are positional
 * even if they start with '-'); a lone "-" is positional. Every command
 * also accepts the common options --help/-h (print help, exit 0) and
 * --log LEVEL (set the log level at once).
 *
 * Errors are usage errors (exit 2): an unknown flag (named as written), a
 * value given to a flag that takes none, a missing value, a missing or an
 * unexpected positional argument. The message, the usage line and a pointer
 * to --help go to stderr.
 */
#ifndef WEFT_CLI_ARGS_H
#define WEFT_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cli_opt {
    const char *name;    /* long name without the dashes; NULL ends a list */
    char short_name;     /* one-letter alias, or 0 */
    const char *metavar; /* the value's placeholder ("FILE"); NULL: takes no value */
    const char *help;    /* one line for --help */
} cli_opt;

typedef struct cli_optgroup {
    const char *title; /* heading in --help: "options" */
    const cli_opt *opts;
    /* --help lists the names only, wrapped (a long list of accepted flags
     * whose help lives in the docs). */
    bool names_only;
} cli_optgroup;

#define CLI_MAX_GROUPS 6
#define CLI_MAX_POS 4
#define CLI_UNLIMITED ((unsigned)-1)

typedef struct cli_syntax {
    const char *path;  /* the words that lead here: "weft topo stats" */
    const char *args;  /* the rest of the usage line: "SPEC [--json] [-o FILE]" */
    const char *about; /* paragraph(s) for --help, lines ending in '\n'; may be NULL */
    /* Option groups, unused slots NULL. The common options are added. */
    const cli_optgroup *groups[CLI_MAX_GROUPS];
    /* Names of the positional arguments, for "missing SPEC". */
    const char *pos_names[CLI_MAX_POS];
    unsigned min_pos, max_pos; /* max_pos may be CLI_UNLIMITED */
    /* Options end at the first positional word, as if "--" stood before
     * it: the command's own options follow it (weft launch -n 2 CMD -x;
     * env and mpirun read their command lines the same way). */
    bool opts_end_at_pos;
} cli_syntax;

/* A parsed command line. Values point into argv. */
typedef struct cli_args {
    const cli_syntax *syn;
    const char **values; /* per option, in group order; "" for a given flag */
    size_t n_values;
    char **pos;
    size_t n_pos;
} cli_args;

/* Returned by cli_args_parse when the command should go on. */
#define CLI_CONTINUE (-1)

/* Parses argv[1..argc) (argv[0] is the command's word). Returns
 * CLI_CONTINUE with *a filled (release with cli_args_fini), or an exit code
 * after printing help (0) or a usage error (2), or 1 when out of memory;
 * then *a needs no release. */
int cli_args_parse(const cli_syntax *syn, int argc, char **argv, cli_args *a);
void cli_args_fini(cli_args *a);

/* The value of option `name` (long name), or NULL when not given. For a
 * flag without value, "" when given. The name must be one of the syntax's
 * options (a programming error otherwise: the process aborts). */
const char *cli_args_get(const cli_args *a, const char *name);
bool cli_args_has(const cli_args *a, const char *name);

/* Prints "weft: MESSAGE", the usage line and the pointer to --help on
 * stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const cli_syntax *syn, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prints the full help on stdout. */
void cli_print_help(const cli_syntax *syn);

/* The common options (--help, --log), shown by groups too. */
extern const cli_optgroup cli_common_options;
/* Prints one option group as an aligned list; width is the column of the
 * help text (0: computed from the group). */
void cli_print_optgroup(const cli_optgroup *g, int width);

#endif
