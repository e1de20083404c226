/* weft verify PLAN [--topo SPEC]: proves a plan correct or names its first
 * error. All the work is weft_plan_verify (weft/plan.h); this file only
 * reads the arguments and prints. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "weft/plan.h"
#include "weft/topo.h"

static const cli_opt verify_opts[] = {
    {"topo", 't', "SPEC", "also check every route against this fabric (file or preset)"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup verify_group = {"options", verify_opts};

static const cli_syntax verify_syntax = {
    .path = "weft verify",
    .args = "PLAN [--topo SPEC]",
    .about = "Proves that PLAN (a .plan file, or an MSCCL program if it ends in .xml)\n"
             "computes its collective exactly, in every execution order its dependencies\n"
             "allow: every output slot filled, every contribution reduced exactly once,\n"
             "no op reading data before it has arrived or racing with another op on a\n"
             "slot, no dependency cycle, no op between ranks that do not exist. Route\n"
             "shares must sum to 1; with --topo every route must follow links of the\n"
             "fabric.\n"
             "\n"
             "Prints 'ok: COLL, N ranks, M ops verified' and exits 0, or prints the first\n"
             "error and exits 1.\n",
    .groups = {&verify_group},
    .pos_names = {"PLAN"},
    .min_pos = 1,
    .max_pos = 1,
};

/* Any spec weft_topo_from_spec takes: a .topo, NCCL XML or ASTRA-sim file,
 * or a preset. */
static weft_err load_topo(const char *spec, weft_topo **out, weft_diag *d)
{
    return weft_topo_from_spec(spec, NULL, out, d);
}

int cli_cmd_verify(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&verify_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    weft_diag d;
    weft_diag_clear(&d);
    weft_plan *p = NULL;
    weft_topo *t = NULL;
    const char *spec = cli_args_get(&a, "topo");
    size_t len = strlen(a.pos[0]);
    bool xml = len >= 4 && strcmp(a.pos[0] + len - 4, ".xml") == 0;
    cli_context_object("reading the plan");
    weft_err e = xml ? weft_plan_msccl_load_file(a.pos[0], &p, &d)
                     : weft_plan_load_file(a.pos[0], &p, &d);
    if (!e && spec)
        e = load_topo(spec, &t, &d);
    if (!e) {
        cli_context_object("verifying the plan");
        e = weft_plan_verify(p, t, &d);
    }
    if (e) {
        rc = cli_fail(e, &d);
    } else {
        const weft_plan_info *info = weft_plan_get_info(p);
        printf("ok: %s, %u ranks, %u ops verified\n", weft_coll_name(info->coll), info->nranks,
               weft_plan_num_ops(p));
        rc = CLI_EXIT_OK;
    }
    weft_topo_free(t);
    weft_plan_free(p);
    cli_args_fini(&a);
    return rc;
}
