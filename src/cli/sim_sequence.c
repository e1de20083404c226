/* weft sim --traffic A,B,...: see sim_sequence.h. */
#include "cli/sim_sequence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "cli/sim_algo.h"
#include "cli/traffic_file.h"

typedef struct seq_row {
    char *path;
    double time_s, reconfig_s;
    uint32_t configs;
} seq_row;

/* Whether circuit (ocs, from, to) is in epoch ep of p. */
static bool plan_has(const weft_plan *p, uint32_t ep, const char *ocs, const char *from,
                     const char *to)
{
    for (uint32_t i = 0; i < weft_plan_num_circuits(p); i++) {
        weft_plan_circuit c = weft_plan_get_circuit(p, i);
        if (c.epoch == ep && !strcmp(c.ocs, ocs) && !strcmp(c.from, from) && !strcmp(c.to, to))
            return true;
    }
    return false;
}

/* Whether ocs's circuits of epoch ea of a and eb of b differ (one way). */
static bool differs(const weft_plan *a, uint32_t ea, const weft_plan *b, uint32_t eb,
                    const char *ocs)
{
    for (uint32_t i = 0; i < weft_plan_num_circuits(a); i++) {
        weft_plan_circuit c = weft_plan_get_circuit(a, i);
        if (c.epoch == ea && !strcmp(c.ocs, ocs) && !plan_has(b, eb, ocs, c.from, c.to))
            return true;
    }
    return false;
}

/* The wait between plan prev (NULL: the first) and next: the largest delay
 * of an OCS whose circuits change. */
static double transition(const weft_topo *t, const weft_plan *prev, const weft_plan *next)
{
    if (!prev || !weft_plan_num_circuits(prev) || !weft_plan_num_circuits(next))
        return 0;
    uint32_t last = weft_plan_num_epochs(prev) - 1;
    double wait = 0;
    for (uint32_t v = 0; v < weft_topo_num_nodes(t); v++) {
        weft_node_id n = {v};
        if (weft_topo_node_kind(t, n) != WEFT_NODE_OCS)
            continue;
        const char *name = weft_topo_node_name(t, n);
        if (!differs(prev, last, next, 0, name) && !differs(next, 0, prev, last, name))
            continue;
        double dl = weft_rat_to_double(weft_topo_ocs_reconfig_ns(t, n)) * 1e-9;
        if (dl > wait)
            wait = dl;
    }
    return wait;
}

int cli_sim_traffic_sequence(const char *spec, const weft_topo *t, const char *algo,
                             const char *paths, const weft_sim_opts *o, uint32_t max_ops, bool json)
{
    size_t n = 1;
    for (const char *s = paths; *s; s++)
        n += *s == ',';
    seq_row *rows = calloc(n, sizeof *rows);
    char *list = strdup(paths);
    weft_plan *prev = NULL;
    int rc = CLI_EXIT_OK;
    if (!rows || !list) {
        rc = cli_fail(WEFT_ENOMEM, NULL);
        goto done;
    }
    size_t k = 0;
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok && rc == CLI_EXIT_OK;
         tok = strtok_r(NULL, ",", &save), k++) {
        weft_traffic m = {0};
        weft_plan *p = NULL;
        weft_diag d;
        weft_diag_clear(&d);
        rows[k].path = tok;
        if ((rc = cli_traffic_load(tok, spec, weft_topo_num_ranks(t), &m)))
            break;
        weft_err e = cli_build_traffic(t, algo, &m, max_ops, &p, &d);
        uint64_t size = weft_traffic_sim_size(&m);
        weft_traffic_free(&m);
        if (!e && !size) {
            cli_error("%s: the traffic matrix moves no bytes", tok);
            rc = CLI_EXIT_INPUT;
            weft_plan_free(p);
            break;
        }
        weft_sim_result r;
        if (!e)
            e = weft_sim_plan(t, p, size, o, &r, &d);
        if (e) {
            rc = cli_fail(e, &d);
            weft_plan_free(p);
            break;
        }
        rows[k].time_s = r.time_s;
        rows[k].reconfig_s = transition(t, prev, p);
        rows[k].configs = weft_plan_num_epochs(p);
        weft_plan_free(prev);
        prev = p;
    }
    if (rc != CLI_EXIT_OK)
        goto done;
    n = k;
    double total = 0, waits = 0;
    for (size_t i = 0; i < n; i++) {
        total += rows[i].time_s + rows[i].reconfig_s;
        waits += rows[i].reconfig_s;
    }
    if (json) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_begin_object(&j);
        cli_json_kv_uint(&j, "ranks", weft_topo_num_ranks(t));
        cli_json_kv_string(&j, "coll", "alltoall");
        cli_json_kv_string(&j, "algo", algo);
        cli_json_kv_string(&j, "model", weft_sim_model_name(o->model));
        cli_json_key(&j, "matrices");
        cli_json_begin_array(&j);
        for (size_t i = 0; i < n; i++) {
            cli_json_begin_object(&j);
            cli_json_kv_string(&j, "traffic", rows[i].path);
            cli_json_kv_double(&j, "reconfig_s", rows[i].reconfig_s);
            cli_json_kv_double(&j, "time_s", rows[i].time_s);
            cli_json_kv_uint(&j, "configs", rows[i].configs);
            cli_json_end_object(&j);
        }
        cli_json_end_array(&j);
        cli_json_kv_double(&j, "reconfig_s", waits);
        cli_json_kv_double(&j, "time_s", total);
        cli_json_end_object(&j);
        rc = cli_json_finish(&j) ? CLI_EXIT_INPUT : CLI_EXIT_OK;
        goto done;
    }
    printf("alltoall sequence on %s: %u ranks, %s, model %s\n", spec, weft_topo_num_ranks(t), algo,
           weft_sim_model_name(o->model));
    printf("  %-24s %14s %12s %8s\n", "matrix", "reconfig (us)", "time (us)", "configs");
    for (size_t i = 0; i < n; i++)
        printf("  %-24s %14.3f %12.3f %8u\n", rows[i].path, rows[i].reconfig_s * 1e6,
               rows[i].time_s * 1e6, rows[i].configs);
    printf("total %.3f us: %zu all-to-alls, %.3f us of reconfiguration between them\n", total * 1e6,
           n, waits * 1e6);
done:
    weft_plan_free(prev);
    free(list);
    free(rows);
    return rc;
}
