/* weft verify PLAN [--topo SPEC]: proves a plan correct or names its first
 * error. All the work is weft_plan_verify (weft/plan.h); this file only
 * reads the arguments and prints. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/fabric.h"
#include "cli/json.h"
#include "cli/plan_file.h"
#include "weft/plan.h"
#include "weft/topo.h"
#include "weft/traffic.h"

static const cli_opt verify_opts[] = {
    {"topo", 't', "SPEC", "also check every route against this fabric (file or preset)"},
    {"traffic", 0, "FILE", "the matrix of an alltoallv MSCCL program (weft plan --traffic)"},
    {"json", 0, NULL, "print the verdict as one JSON object (also when the plan is wrong)"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup verify_group = {"options", verify_opts, false};

static const cli_syntax verify_syntax = {
    .path = "weft verify",
    .args = "PLAN [--topo SPEC] [--traffic FILE] [--json]",
    .about = "Proves that PLAN (weft plan text or an MSCCL XML program, told apart by\n"
             "content; a warning says when the extension disagrees) computes its\n"
             "collective exactly, in every execution order its dependencies\n"
             "allow: every output slot filled, every contribution reduced exactly once,\n"
             "no op reading data before it has arrived or racing with another op on a\n"
             "slot, no dependency cycle, no op between ranks that do not exist. Route\n"
             "shares must sum to 1; with --topo every route must follow links of the\n"
             "fabric.\n"
             "\n"
             "An MSCCL program of a skewed all-to-all (weft plan --traffic FILE\n"
             "--format msccl) holds equal chunks, each block padded to the largest, and\n"
             "not the matrix: --traffic FILE gives it, so that the padding (the chunks\n"
             "that carry no data) need not arrive. Without it every chunk must.\n"
             "\n"
             "Prints 'ok: COLL, N ranks, M ops verified' and exits 0, or prints the first\n"
             "error and exits 1. With --json, one object on stdout: ok (true or false),\n"
             "plan, topo (null without --topo), coll, ranks, ops, and error (the message,\n"
             "null when ok); a plan or fabric that cannot be read prints no object.\n",
    .groups = {&verify_group},
    .pos_names = {"PLAN"},
    .min_pos = 1,
    .max_pos = 1,
};

/* Any spec weft_topo_from_spec takes: a .topo, NCCL XML or ASTRA-sim file,
 * or a preset. What an import assumed (an NCCL dump without NVLink has no
 * NVSwitch for a route to cross) is said on stderr, as by every command. */
static weft_err load_topo(const char *spec, weft_topo **out, weft_diag *d)
{
    weft_err e = weft_topo_from_spec(spec, NULL, out, d);
    if (!e)
        cli_fabric_say_assumptions(*out);
    return e;
}

/* The --json verdict of a plan that was read (error NULL: it verified). */
static int print_json(const char *path, const char *spec, const weft_plan *p, const char *error)
{
    const weft_plan_info *info = weft_plan_get_info(p);
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_kv_bool(&j, "ok", error == NULL);
    cli_json_kv_string(&j, "plan", path);
    cli_json_kv_string(&j, "topo", spec);
    cli_json_kv_string(&j, "coll", weft_coll_name(info->coll));
    cli_json_kv_uint(&j, "ranks", info->nranks);
    cli_json_kv_uint(&j, "ops", weft_plan_num_ops(p));
    cli_json_kv_string(&j, "error", error);
    cli_json_end_object(&j);
    if (cli_json_done(&j) != CLI_EXIT_OK)
        return CLI_EXIT_INPUT;
    return error ? CLI_EXIT_INPUT : CLI_EXIT_OK;
}

/* A circuit error names the line it is about: the op of a hop with no
 * circuit ("op 10 (...): route path 1 crosses ocs ..."), or the second of
 * two circuits that share a port ("epoch 0: port 'p' of ocs 'o' sends on two
 * circuits (a -> b and c -> d)"). Finds that line of a .plan text file and
 * puts "PATH:LINE: " before the message in d; other messages are kept. */
static void circuit_line(const char *path, weft_diag *d)
{
    char want[400];
    unsigned op, ep;
    char ocs[130], a[130], b[130];
    if (strstr(d->msg, "crosses ocs '") && sscanf(d->msg, "op %u (", &op) == 1)
        snprintf(want, sizeof want, "op %u ", op);
    else if (sscanf(d->msg,
                    "epoch %u: port '%*[^']' of ocs '%129[^']' %*s on two circuits "
                    "(%*s -> %*s and %129s -> %129[^)])",
                    &ep, ocs, a, b) == 4)
        snprintf(want, sizeof want, "circuit %u %s %s %s", ep, ocs, a, b);
    else
        return;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[512];
    unsigned long n = 0;
    size_t wl = strlen(want);
    bool found = false, whole = true;
    while (fgets(line, sizeof line, f)) {
        bool start = whole;
        whole = strchr(line, '\n') != NULL;
        if (!start)
            continue;
        n++;
        if (strncmp(line, want, wl) == 0 &&
            (want[wl - 1] == ' ' || line[wl] == '\n' || line[wl] == ' ' || line[wl] == '#' ||
             line[wl] == '\r' || line[wl] == '\0')) {
            found = true;
            break;
        }
    }
    fclose(f);
    if (found) {
        char head[64 + 4096];
        int hl = snprintf(head, sizeof head, "%s:%lu: ", path, n);
        size_t ml = strlen(d->msg);
        if (hl > 0 && (size_t)hl + ml < sizeof d->msg) {
            memmove(d->msg + hl, d->msg, ml + 1);
            memcpy(d->msg, head, (size_t)hl);
        }
    }
}

/* --traffic FILE: p's blocks in pieces of the matrix FILE (an MSCCL program
 * written padded; weft_plan_msccl_padded_traffic). A plan that carries its
 * own matrix (text `traffic` lines) is refused: two matrices would
 * disagree. */
static weft_err set_traffic(weft_plan *p, const char *path, weft_diag *d)
{
    if (weft_plan_traffic(p))
        return weft_diag_set(d, WEFT_EINVAL,
                             "--traffic %s: the plan carries its own traffic matrix; drop "
                             "--traffic",
                             path);
    weft_traffic m = {0}, pieces = {0};
    cli_context_object("reading the traffic matrix");
    weft_err e = weft_traffic_load_file(path, &m, d);
    if (!e && (e = weft_plan_msccl_padded_traffic(p, &m, &pieces, d))) {
        char why[sizeof d->msg];
        snprintf(why, sizeof why, "%s", d->msg);
        weft_diag_set(d, e, "--traffic %s: %s", path, why);
    }
    if (!e)
        e = weft_plan_set_traffic(p, &pieces, d);
    weft_traffic_free(&pieces);
    weft_traffic_free(&m);
    return e;
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
    cli_context_object("reading the plan");
    rc = cli_plan_load(a.pos[0], &p);
    if (rc != CLI_EXIT_OK)
        goto free_args;
    weft_err e = WEFT_OK;
    if (spec)
        e = load_topo(spec, &t, &d);
    const char *traffic = cli_args_get(&a, "traffic");
    if (!e && traffic)
        e = set_traffic(p, traffic, &d);
    bool read = !e;
    if (!e) {
        cli_context_object("verifying the plan");
        e = weft_plan_verify(p, t, &d);
        if (e == WEFT_EVERIFY && weft_plan_num_circuits(p))
            circuit_line(a.pos[0], &d);
        if (e == WEFT_EVERIFY && !traffic && weft_plan_get_info(p)->coll == WEFT_COLL_ALLTOALL &&
            !weft_plan_traffic(p) && strstr(d.msg, "holds no data at the end")) {
            size_t ml = strlen(d.msg);
            snprintf(d.msg + ml, sizeof d.msg - ml,
                     " (an MSCCL all-to-all of a traffic matrix is padded: give the matrix "
                     "with --traffic FILE)");
        }
    }
    if (cli_args_has(&a, "json") && read) {
        if (e)
            cli_fail(e, &d);
        rc = print_json(a.pos[0], spec, p, e ? (d.msg[0] ? d.msg : weft_strerror(e)) : NULL);
    } else if (e) {
        rc = cli_fail(e, &d);
    } else {
        const weft_plan_info *info = weft_plan_get_info(p);
        printf("ok: %s, %u ranks, %u ops verified\n", weft_coll_name(info->coll), info->nranks,
               weft_plan_num_ops(p));
        rc = CLI_EXIT_OK;
    }
    weft_topo_free(t);
    weft_plan_free(p);
free_args:
    cli_args_fini(&a);
    return rc;
}
