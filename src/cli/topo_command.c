/* The skeleton every `weft topo SUBCOMMAND SPEC [-o FILE]` shares. */
#include "cli/cli.h"
#include "cli/fabric.h"
#include "cli/outfile.h"
#include "cli/topo.h"

int cli_topo_command(const cli_syntax *syn, int argc, char **argv, cli_topo_writer write)
{
    cli_args a;
    int rc = cli_args_parse(syn, argc, argv, &a);
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
    rc = write(o.f, &a, a.pos[0], t);
    if (rc) {
        cli_out_close(&o, false);
        goto out_topo;
    }
    rc = cli_out_close(&o, true);
out_topo:
    weft_topo_free(t);
out_args:
    cli_args_fini(&a);
    return rc;
}
