/* weft topo show SPEC: the fabric in .topo format. */
#include <errno.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/fabric.h"
#include "cli/topo.h"

static const cli_opt show_opts[] = {
    {"output", 'o', "FILE", "write to FILE (atomically: all or nothing) instead of stdout"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup show_group = {"options", show_opts, false};

static const cli_syntax show_syntax = {
    .path = "weft topo show",
    .args = "SPEC [-o FILE] [fabric options]",
    .about = "Prints the fabric in .topo format: what an importer or preset assumed (its\n"
             "note) as leading '#' comments, then every node and link. Reading the output\n"
             "back gives the same fabric, so any preset or import can be saved and edited\n"
             "as a file.\n",
    .groups = {&show_group, &cli_fabric_options},
    .pos_names = {"SPEC"},
    .min_pos = 1,
    .max_pos = 1,
};

static int write_topo(FILE *f, const cli_args *a, const char *spec, const weft_topo *t)
{
    (void)spec;
    weft_err e = weft_topo_write(t, f);
    if (!e)
        return CLI_EXIT_OK;
    int err = errno;
    const char *where = cli_args_get(a, "output");
    cli_error("cannot write '%s': %s", where ? where : "standard output",
              e == WEFT_EIO && err ? strerror(err) : weft_strerror(e));
    return CLI_EXIT_INPUT;
}

int cli_topo_show(int argc, char **argv)
{
    return cli_topo_command(&show_syntax, argc, argv, write_topo);
}
