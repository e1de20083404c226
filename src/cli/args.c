/* The shared argument parser. See args.h for the accepted syntax. */
#include "cli/args.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const cli_opt common_opts[] = {
    {"help", 'h', NULL, "print this help and exit"},
    {"log", 0, "LEVEL", "error, warn, info, debug or trace (default warn, or $WEFT_LOG)"},
    {NULL, 0, NULL, NULL},
};

const cli_optgroup cli_common_options = {"common options", common_opts, false};

/* The groups of a syntax followed by the common group; returns the count. */
static size_t all_groups(const cli_syntax *syn, const cli_optgroup **out)
{
    size_t n = 0;
    for (size_t i = 0; i < CLI_MAX_GROUPS && syn->groups[i]; i++)
        out[n++] = syn->groups[i];
    out[n++] = &cli_common_options;
    return n;
}

/* Finds an option by long name (name[0..len)) or, when len == 0, by its
 * short name; writes its flat index. */
static const cli_opt *find_opt(const cli_syntax *syn, const char *name, size_t len, char short_name,
                               size_t *index)
{
    const cli_optgroup *groups[CLI_MAX_GROUPS + 1];
    size_t ng = all_groups(syn, groups), k = 0;
    for (size_t g = 0; g < ng; g++) {
        for (const cli_opt *o = groups[g]->opts; o->name; o++, k++) {
            bool hit = len ? strlen(o->name) == len && memcmp(o->name, name, len) == 0
                           : short_name && o->short_name == short_name;
            if (hit) {
                *index = k;
                return o;
            }
        }
    }
    return NULL;
}

static size_t count_opts(const cli_syntax *syn)
{
    const cli_optgroup *groups[CLI_MAX_GROUPS + 1];
    size_t ng = all_groups(syn, groups), k = 0;
    for (size_t g = 0; g < ng; g++)
        for (const cli_opt *o = groups[g]->opts; o->name; o++)
            k++;
    return k;
}

int cli_usage_error(const cli_syntax *syn, const char *fmt, ...)
{
    /* One write (see cli_error): every rank of a job may say this at once. */
    char msg[WEFT_DIAG_MSG_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "weft: %s\nusage: %s %s\nrun '%s --help' for details\n", msg, syn->path,
            syn->args, syn->path);
    return CLI_EXIT_USAGE;
}

/* The text before the help column: "  -o, --output FILE". */
static int opt_label(const cli_opt *o, char *buf, size_t size)
{
    char shortpart[8] = "    ";
    if (o->short_name)
        snprintf(shortpart, sizeof shortpart, "-%c, ", o->short_name);
    return snprintf(buf, size, "  %s--%s%s%s", shortpart, o->name, o->metavar ? " " : "",
                    o->metavar ? o->metavar : "");
}

static int label_width(const cli_optgroup *g)
{
    int w = 0;
    char buf[256];
    for (const cli_opt *o = g->opts; o->name; o++) {
        int n = opt_label(o, buf, sizeof buf);
        if (n > w)
            w = n;
    }
    return w;
}

void cli_print_optgroup(const cli_optgroup *g, int width)
{
    if (!width)
        width = label_width(g);
    printf("%s:\n", g->title);
    char buf[256];
    if (g->names_only) {
        int col = 0;
        for (const cli_opt *o = g->opts; o->name; o++) {
            int len = (int)strlen(o->name) + 2 + (o[1].name ? 1 : 0);
            if (col && col + 1 + len > 78) {
                printf("\n");
                col = 0;
            }
            printf("%s--%s%s", col ? " " : "  ", o->name, o[1].name ? "," : "");
            col += (col ? 1 : 2) + len;
        }
        printf("\n");
        return;
    }
    for (const cli_opt *o = g->opts; o->name; o++) {
        opt_label(o, buf, sizeof buf);
        /* A help text's later lines start at its column too. */
        printf("%-*s  ", width, buf);
        for (const char *h = o->help; *h; h++)
            if (*h == '\n')
                printf("\n%-*s  ", width, "");
            else
                putchar(*h);
        putchar('\n');
    }
}

void cli_print_help(const cli_syntax *syn)
{
    printf("usage: %s %s\n", syn->path, syn->args);
    if (syn->about)
        printf("\n%s", syn->about);
    const cli_optgroup *groups[CLI_MAX_GROUPS + 1];
    size_t ng = all_groups(syn, groups);
    int width = 0;
    for (size_t g = 0; g < ng; g++) {
        int w = groups[g]->names_only ? 0 : label_width(groups[g]);
        if (w > width)
            width = w;
    }
    for (size_t g = 0; g < ng; g++) {
        printf("\n");
        cli_print_optgroup(groups[g], width);
    }
}

int cli_args_parse(const cli_syntax *syn, int argc, char **argv, cli_args *a)
{
    memset(a, 0, sizeof *a);
    a->syn = syn;
    a->n_values = count_opts(syn);
    a->values = calloc(a->n_values, sizeof *a->values);
    a->pos = calloc((size_t)(argc > 0 ? argc : 1), sizeof *a->pos);
    if (!a->values || !a->pos) {
        cli_args_fini(a);
        cli_error("out of memory reading the arguments of '%s'", syn->path);
        return CLI_EXIT_INPUT;
    }
    int rc = CLI_CONTINUE;
    bool only_pos = false;
    for (int i = 1; i < argc && rc == CLI_CONTINUE; i++) {
        const char *arg = argv[i];
        if (only_pos || arg[0] != '-' || arg[1] == '\0') {
            a->pos[a->n_pos++] = argv[i];
            only_pos = only_pos || syn->opts_end_at_pos;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_pos = true;
            continue;
        }
        const cli_opt *o;
        size_t k = 0;
        const char *value = NULL;
        if (arg[1] == '-') {
            const char *name = arg + 2, *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            o = len ? find_opt(syn, name, len, 0, &k) : NULL;
            if (!o) {
                rc = cli_usage_error(syn, "unknown flag '--%.*s'", (int)len, name);
                break;
            }
            if (!o->metavar && eq) {
                rc = cli_usage_error(syn, "flag --%s takes no value", o->name);
                break;
            }
            if (eq)
                value = eq + 1;
        } else {
            o = find_opt(syn, NULL, 0, arg[1], &k);
            /* Flags without value cannot be bundled ("-hx"). */
            if (!o || (!o->metavar && arg[2])) {
                rc = cli_usage_error(syn, "unknown flag '%s'", arg);
                break;
            }
            if (arg[2])
                value = arg + 2;
        }
        if (o->metavar && !value) {
            if (i + 1 >= argc) {
                rc = cli_usage_error(syn, "flag --%s needs a value (%s)", o->name, o->metavar);
                break;
            }
            value = argv[++i];
        }
        a->values[k] = o->metavar ? value : "";
        if (o == &common_opts[0]) {
            cli_print_help(syn);
            rc = CLI_EXIT_OK;
        } else if (o == &common_opts[1]) {
            if (!cli_log_level_set(value))
                rc = cli_usage_error(syn, "unknown log level '%s' for --log (%s)", value,
                                     CLI_LOG_LEVELS);
        }
    }
    if (rc == CLI_CONTINUE && a->n_pos < syn->min_pos) {
        const char *what = a->n_pos < CLI_MAX_POS ? syn->pos_names[a->n_pos] : NULL;
        rc = cli_usage_error(syn, "missing %s", what ? what : "argument");
    } else if (rc == CLI_CONTINUE && a->n_pos > syn->max_pos) {
        rc = cli_usage_error(syn, "unexpected argument '%s'", a->pos[syn->max_pos]);
    }
    if (rc != CLI_CONTINUE)
        cli_args_fini(a);
    else
        cli_context_set(syn->path, a->n_pos ? a->pos[0] : NULL);
    return rc;
}

void cli_args_fini(cli_args *a)
{
    free(a->values);
    free(a->pos);
    a->values = NULL;
    a->pos = NULL;
    a->n_values = a->n_pos = 0;
}

static size_t value_index(const cli_args *a, const char *name)
{
    size_t k;
    if (!find_opt(a->syn, name, strlen(name), 0, &k)) {
        fprintf(stderr, "weft: internal error: %s has no option --%s\n", a->syn->path, name);
        abort();
    }
    return k;
}

const char *cli_args_get(const cli_args *a, const char *name)
{
    return a->values[value_index(a, name)];
}

bool cli_args_has(const cli_args *a, const char *name)
{
    return cli_args_get(a, name) != NULL;
}
