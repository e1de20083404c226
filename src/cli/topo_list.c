/* weft topo list: every preset with its usage and summary. */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/json.h"
#include "cli/topo.h"
#include "weft/topo.h"

static const cli_opt list_opts[] = {
    {"names", 0, NULL, "print only the preset names, one per line"},
    {"json", 0, NULL, "print one JSON object: presets, each with name, usage and summary"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup list_group = {"options", list_opts, false};

static const cli_syntax list_syntax = {
    .path = "weft topo list",
    .args = "[--names] [--json]",
    .about =
        "Lists every fabric preset: how to spell it with its parameters, and what it\n"
        "models. A preset can be used wherever a SPEC is taken (weft topo stats\n"
        "a100:2), and 'weft topo show SPEC' prints it as a .topo file. With --json:\n"
        "{\"presets\": [{\"name\", \"usage\", \"summary\"}, ...]} (only \"name\" with --names).\n",
    .groups = {&list_group},
};

/* Prints text word-wrapped to `width` columns, each line after `indent`. */
static void print_wrapped(const char *text, const char *indent, size_t width)
{
    size_t col = 0, ind = strlen(indent);
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        size_t len = strcspn(p, " ");
        if (col > 0 && col + 1 + len > width) {
            putchar('\n');
            col = 0;
        }
        if (col == 0) {
            fputs(indent, stdout);
            col = ind;
        } else {
            putchar(' ');
            col++;
        }
        fwrite(p, 1, len, stdout);
        col += len;
        p += len;
    }
    if (col)
        putchar('\n');
}

static int print_json(bool names)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_key(&j, "presets");
    cli_json_begin_array(&j);
    for (size_t i = 0; i < weft_preset_count(); i++) {
        const weft_preset_info *p = weft_preset_get(i);
        cli_json_begin_object(&j);
        cli_json_kv_string(&j, "name", p->name);
        if (!names) {
            cli_json_kv_string(&j, "usage", p->usage);
            cli_json_kv_string(&j, "summary", p->summary);
        }
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_end_object(&j);
    return cli_json_done(&j);
}

int cli_topo_list(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&list_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    bool names = cli_args_has(&a, "names"), json = cli_args_has(&a, "json");
    cli_args_fini(&a);
    if (json)
        return print_json(names);
    size_t n = weft_preset_count();
    for (size_t i = 0; i < n; i++) {
        const weft_preset_info *p = weft_preset_get(i);
        if (names) {
            printf("%s\n", p->name);
            continue;
        }
        if (i)
            putchar('\n');
        printf("%s\n", p->usage);
        print_wrapped(p->summary, "    ", 78);
    }
    return CLI_EXIT_OK;
}
