/* Plan files: the format a name or a file's content says, for the commands
 * that write plans (weft plan -o) and read them (weft verify, weft sim
 * --plan), so that all of them agree.
 *
 * Writing: the extension names the format: .plan is weft text, .xml MSCCL
 * XML, .json JSON. --format, when given, must agree with it; a name with
 * any other extension (or none) needs --format; "-" (standard output) is
 * weft text unless --format says otherwise.
 *
 * Reading: a regular file's content decides, never its name alone: the
 * first byte that is not blank (after a UTF-8 byte order mark) is '<' for
 * MSCCL XML, '{' for JSON (which weft writes but does not read), anything
 * else is weft text, whose parser then says precisely what is wrong. When
 * the content contradicts the extension (weft text in x.xml, XML in
 * x.plan) the file is read by its content and a warning on stderr says so.
 * A pipe (not a regular file) cannot be read twice: its extension decides
 * (.xml: MSCCL XML, else weft text). */
#ifndef WEFT_CLI_PLAN_FILE_H
#define WEFT_CLI_PLAN_FILE_H

#include "cli/args.h"
#include "weft/plan.h"

typedef enum cli_plan_format {
    CLI_PLAN_WEFT,
    CLI_PLAN_JSON,
    CLI_PLAN_MSCCL,
    CLI_PLAN_UNKNOWN, /* an extension that names no format */
} cli_plan_format;

/* "weft", "json", "msccl". */
const char *cli_plan_format_name(cli_plan_format f);

/* The format to write to path (NULL or "-" for standard output) given the
 * --format value (NULL when not given). Returns CLI_EXIT_OK and *out, or
 * prints the usage error of syn and returns CLI_EXIT_USAGE: an unknown
 * --format, one that contradicts the extension ("--format weft, but x.xml
 * names MSCCL XML"), or an extension that names no format without
 * --format. */
int cli_plan_output_format(const cli_syntax *syn, const char *path, const char *format,
                           cli_plan_format *out);

/* Reads the plan at path in the format its content says (see above).
 * Returns CLI_EXIT_OK and *out (free with weft_plan_free), or prints why
 * ("weft: x.json holds a JSON plan: ...", the parser's "x.plan:3:1: ...")
 * and returns CLI_EXIT_INPUT. */
int cli_plan_load(const char *path, weft_plan **out);

#endif
