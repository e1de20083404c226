/* Command groups ("weft", "weft topo") and the messages every command
 * prints. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "weft/log.h"

/* One line, written at once: stderr is unbuffered, and the ranks of a job
 * share it (weft launch, mpirun), so a line written in three pieces came
 * out interleaved with other ranks' ("weft: weft: perf: rank 1: ..."). */
void cli_error(const char *fmt, ...)
{
    char line[WEFT_DIAG_MSG_SIZE + 64]; /* a diagnostic and more */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof line - 1 ? (size_t)n : sizeof line - 2;
    line[len] = '\n';
    fprintf(stderr, "weft: %.*s", (int)len + 1, line);
}

static const char *context_command, *context_subject, *context_object;

void cli_context_set(const char *command, const char *subject)
{
    context_command = command;
    context_subject = subject;
}

void cli_context_object(const char *what)
{
    context_object = what;
}

int cli_fail(weft_err err, const weft_diag *d)
{
    bool have_msg = d && d->err != WEFT_OK && d->msg[0];
    const char *msg = have_msg ? d->msg : weft_strerror(have_msg ? d->err : err);
    if ((have_msg ? d->err : err) == WEFT_ENOMEM && strcmp(msg, weft_strerror(WEFT_ENOMEM)) == 0 &&
        context_command) {
        cli_error("out of memory running '%s%s%s'%s%s%s", context_command,
                  context_subject ? " " : "", context_subject ? context_subject : "",
                  context_object ? " (" : "", context_object ? context_object : "",
                  context_object ? ")" : "");
    } else {
        cli_error("%s", msg);
    }
    return CLI_EXIT_INPUT;
}

bool cli_log_level_set(const char *text)
{
    weft_log_level level;
    if (weft_log_level_parse(text, &level) != WEFT_OK)
        return false;
    weft_log_set_level(level);
    return true;
}

static void group_usage(const cli_group *g, FILE *f)
{
    fprintf(f, "usage: %s %sCOMMAND [ARGS...]\n", g->path, g->version ? "[--log LEVEL] " : "");
}

static int group_usage_error(const cli_group *g, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int group_usage_error(const cli_group *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("weft: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    group_usage(g, stderr);
    fprintf(stderr, "run '%s --help' for the list of commands\n", g->path);
    return CLI_EXIT_USAGE;
}

static void group_help(const cli_group *g)
{
    group_usage(g, stdout);
    if (g->about)
        printf("\n%s", g->about);
    printf("\ncommands:\n");
    int width = 0;
    for (size_t i = 0; i < g->count; i++) {
        int n = (int)strlen(g->commands[i].name);
        if (n > width)
            width = n;
    }
    for (size_t i = 0; i < g->count; i++)
        printf("  %-*s  %s\n", width, g->commands[i].name, g->commands[i].summary);
    printf("\nrun '%s COMMAND --help' for a command's arguments and options\n\n", g->path);
    if (g->version) {
        static const cli_opt top_opts[] = {
            {"help", 'h', NULL, "print this help and exit"},
            {"version", 0, NULL, "print the version and exit"},
            {"log", 0, "LEVEL", "error, warn, info, debug or trace (default warn, or $WEFT_LOG)"},
            {NULL, 0, NULL, NULL},
        };
        const cli_optgroup top = {"options", top_opts, false};
        cli_print_optgroup(&top, 0);
    } else {
        cli_print_optgroup(&cli_common_options, 0);
    }
}

int cli_group_run(const cli_group *g, int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            group_help(g);
            return CLI_EXIT_OK;
        }
        if (g->version && strcmp(arg, "--version") == 0) {
            printf("%s\n", g->version);
            return CLI_EXIT_OK;
        }
        const char *level = NULL;
        if (strcmp(arg, "--log") == 0) {
            if (i + 1 >= argc)
                return group_usage_error(g, "flag --log needs a value (LEVEL)");
            level = argv[++i];
        } else if (strncmp(arg, "--log=", 6) == 0) {
            level = arg + 6;
        } else {
            /* Name only the flag, not a value glued to it with '='. */
            const char *eq = strchr(arg, '=');
            int len = eq ? (int)(eq - arg) : (int)strlen(arg);
            return group_usage_error(g, "unknown flag '%.*s'", len, arg);
        }
        if (!cli_log_level_set(level))
            return group_usage_error(g, "unknown log level '%s' for --log (%s)", level,
                                     CLI_LOG_LEVELS);
    }
    if (i >= argc)
        return group_usage_error(g, "missing %s", g->noun);
    for (size_t k = 0; k < g->count; k++) {
        if (strcmp(argv[i], g->commands[k].name) == 0)
            return g->commands[k].run(argc - i, argv + i);
    }
    return group_usage_error(g, "unknown %s '%s'", g->noun, argv[i]);
}
