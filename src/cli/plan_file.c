/* Plan file formats by name and by content. See plan_file.h. */
#include "cli/plan_file.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli/cli.h"

static const struct {
    const char *name, *ext, *what;
} formats[] = {
    [CLI_PLAN_WEFT] = {"weft", ".plan", "weft plan text"},
    [CLI_PLAN_JSON] = {"json", ".json", "a JSON plan"},
    [CLI_PLAN_MSCCL] = {"msccl", ".xml", "MSCCL XML"},
};
#define N_FORMATS 3

const char *cli_plan_format_name(cli_plan_format f)
{
    return f < N_FORMATS ? formats[f].name : "unknown";
}

/* The format the extension of path names (case-insensitive). */
static cli_plan_format format_of_name(const char *path)
{
    size_t n = strlen(path);
    for (int f = 0; f < N_FORMATS; f++) {
        size_t e = strlen(formats[f].ext);
        if (n > e && strcasecmp(path + n - e, formats[f].ext) == 0)
            return (cli_plan_format)f;
    }
    return CLI_PLAN_UNKNOWN;
}

int cli_plan_output_format(const cli_syntax *syn, const char *path, const char *format,
                           cli_plan_format *out)
{
    cli_plan_format given = CLI_PLAN_UNKNOWN;
    if (format) {
        for (int f = 0; f < N_FORMATS; f++)
            if (strcmp(format, formats[f].name) == 0)
                given = (cli_plan_format)f;
        if (given == CLI_PLAN_UNKNOWN)
            return cli_usage_error(syn, "bad --format '%s': expected weft, json or msccl", format);
    }
    bool to_stdout = !path || strcmp(path, "-") == 0;
    cli_plan_format named = to_stdout ? CLI_PLAN_UNKNOWN : format_of_name(path);
    if (given != CLI_PLAN_UNKNOWN && named != CLI_PLAN_UNKNOWN && given != named)
        return cli_usage_error(syn,
                               "--format %s contradicts -o '%s', whose extension %s names %s "
                               "(drop --format, or name the file %s)",
                               formats[given].name, path, formats[named].ext, formats[named].what,
                               formats[given].ext);
    /* A name without an extension (/dev/stdout, a FIFO, "plan") is written
     * as weft text, as '-' is; an extension weft does not know is refused,
     * since the user evidently meant some format. */
    const char *base = to_stdout ? NULL : strrchr(path, '/');
    base = base ? base + 1 : path;
    bool no_ext = !to_stdout && strchr(base, '.') == NULL;
    if (given == CLI_PLAN_UNKNOWN && named == CLI_PLAN_UNKNOWN && !to_stdout && !no_ext)
        return cli_usage_error(syn,
                               "cannot tell the format of -o '%s' from its name: end it in .plan "
                               "(weft text), .xml (MSCCL XML) or .json, or give --format "
                               "weft|json|msccl",
                               path);
    *out = given != CLI_PLAN_UNKNOWN ? given : named != CLI_PLAN_UNKNOWN ? named : CLI_PLAN_WEFT;
    return CLI_EXIT_OK;
}

/* The format a regular file's first bytes say; CLI_PLAN_UNKNOWN when it
 * cannot be opened (the loader then names the reason). */
static cli_plan_format format_of_content(const char *path)
{
    char buf[512];
    FILE *f = fopen(path, "rb");
    if (!f)
        return CLI_PLAN_UNKNOWN;
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    size_t i = n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (i < n && isspace((unsigned char)buf[i]))
        i++;
    if (i < n && buf[i] == '<')
        return CLI_PLAN_MSCCL;
    if (i < n && buf[i] == '{')
        return CLI_PLAN_JSON;
    return CLI_PLAN_WEFT;
}

int cli_plan_load(const char *path, weft_plan **out)
{
    cli_plan_format named = format_of_name(path), fmt = named;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        cli_plan_format seen = format_of_content(path);
        if (seen != CLI_PLAN_UNKNOWN)
            fmt = seen;
        if (seen != CLI_PLAN_UNKNOWN && named != CLI_PLAN_UNKNOWN && seen != named &&
            seen != CLI_PLAN_JSON)
            fprintf(stderr,
                    "weft: warning: '%s' holds %s, not %s as its extension %s says; "
                    "read as %s\n",
                    path, formats[seen].what, formats[named].what, formats[named].ext,
                    formats[seen].what);
    }
    if (fmt == CLI_PLAN_JSON) {
        cli_error("'%s' holds a JSON plan, which weft writes but does not read; write the plan "
                  "with --format weft (.plan) or msccl (.xml) to verify or simulate it",
                  path);
        return CLI_EXIT_INPUT;
    }
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = fmt == CLI_PLAN_MSCCL ? weft_plan_msccl_load_file(path, out, &d)
                                       : weft_plan_load_file(path, out, &d);
    return e ? cli_fail(e, &d) : CLI_EXIT_OK;
}
