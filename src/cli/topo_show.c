/* weft topo show SPEC: the fabric in .topo format. */
#include <errno.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/fabric.h"
#include "cli/outfile.h"
#include "cli/topo.h"

static const cli_opt show_opts[] = {
    {"output", 'o', "FILE", "write to FILE (atomically: all or nothing) instead of stdout"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup show_group = {"options", show_opts};

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

int cli_topo_show(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&show_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    weft_topo *t = NULL;
    cli_out o;
    rc = cli_load_fabric(&a, a.pos[0], &t);
    if (rc)
        goto out_args;
    rc = cli_out_open(&o, cli_args_get(&a, "output"));
    if (rc)
        goto out_topo;
    weft_err e = weft_topo_write(t, o.f);
    if (e) {
        int err = errno;
        cli_out_close(&o, false);
        const char *where = cli_args_get(&a, "output");
        cli_error("cannot write '%s': %s", where ? where : "standard output",
                  e == WEFT_EIO && err ? strerror(err) : weft_strerror(e));
        rc = CLI_EXIT_INPUT;
        goto out_topo;
    }
    rc = cli_out_close(&o, true);
out_topo:
    weft_topo_free(t);
out_args:
    cli_args_fini(&a);
    return rc;
}
