/* weft sim --compare-fabrics. See sim_fabrics.h. */
#include "cli/sim_fabrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/fabric.h"
#include "cli/fabric_cost.h"
#include "cli/json.h"
#include "cli/sim_compare.h"
#include "cli/table.h"
#include "cli/traffic_file.h"
#include "weft/cost.h"
#include "weft/topo.h"

static bool is_preset_name(const char *s)
{
    for (size_t i = 0; i < weft_preset_count(); i++)
        if (strcmp(weft_preset_get(i)->name, s) == 0)
            return true;
    return false;
}

static bool starts_spec(const char *piece)
{
    struct stat st;
    return strchr(piece, ':') || strchr(piece, '(') || is_preset_name(piece) ||
           stat(piece, &st) == 0;
}

size_t cli_split_fabrics(const char *list, char *buf, size_t buflen, const char **specs, size_t cap)
{
    size_t len = strlen(list);
    if (len == 0 || len >= buflen)
        return 0;
    memcpy(buf, list, len + 1);
    size_t n = 0;
    int depth = 0;
    char *piece = buf;
    for (char *p = buf;; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')' && depth > 0)
            depth--;
        if (*p != '\0' && !(*p == ',' && depth == 0))
            continue;
        bool end = *p == '\0';
        *p = '\0';
        if (n == 0 || starts_spec(piece)) {
            if (n == cap)
                return 0;
            specs[n++] = piece;
        } else {
            piece[-1] = ','; /* a parameter: rejoin it to the spec before */
        }
        if (end)
            break;
        piece = p + 1;
    }
    for (size_t i = 0; i < n; i++)
        if (!specs[i][0])
            return 0;
    return n;
}

/* One fabric's row. */
typedef struct fabric_row {
    const char *spec;
    weft_topo *t;
    weft_sim_model model;
    cli_sim_best best;
    weft_cost_bom bom;
    weft_cost_totals tot;
} fabric_row;

static int by_time(const void *pa, const void *pb)
{
    const fabric_row *a = pa, *b = pb;
    if (a->best.have != b->best.have)
        return a->best.have ? -1 : 1;
    if (a->best.have && a->best.res.time_s != b->best.res.time_s)
        return a->best.res.time_s < b->best.res.time_s ? -1 : 1;
    return 0; /* qsort is not stable: rows keep the index order below */
}

static void print_json(const fabric_row *r, size_t n, weft_coll coll, uint64_t size,
                       const char *traffic_path)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_kv_string(&j, "coll", weft_coll_name(coll));
    cli_json_kv_uint(&j, "ranks", weft_topo_num_ranks(r[0].t));
    cli_json_kv_uint(&j, "size", size);
    cli_json_kv_string(&j, "traffic", traffic_path);
    cli_json_key(&j, "fabrics");
    cli_json_begin_array(&j);
    for (size_t i = 0; i < n; i++) {
        const fabric_row *f = &r[i];
        cli_json_begin_object(&j);
        cli_json_kv_string(&j, "spec", f->spec);
        cli_json_kv_string(&j, "model", weft_sim_model_name(f->model));
        if (f->best.have) {
            cli_json_kv_string(&j, "algo", f->best.algo);
            cli_json_kv_bool(&j, "ocs_as_switch", f->best.ocs_relaxed);
            cli_json_kv_double(&j, "time_s", f->best.res.time_s);
            cli_json_kv_double(&j, "algbw", f->best.res.algbw_gbps);
            cli_json_kv_double(&j, "busbw", f->best.res.busbw_gbps);
        } else {
            cli_json_key(&j, "algo");
            cli_json_null(&j);
            cli_json_key(&j, "time_s");
            cli_json_null(&j);
            cli_json_kv_string(&j, "why", f->best.why);
        }
        if (f->best.have_bound) {
            cli_json_kv_double(&j, "bound_time_s", f->best.bound_time_s);
            cli_json_kv_rat(&j, "bound_algbw_exact", f->best.bound_algbw);
        } else {
            cli_json_key(&j, "bound_time_s");
            cli_json_null(&j);
        }
        cli_cost_totals_json(&j, &f->tot, f->bom.ranks);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_end_object(&j);
    cli_json_finish(&j);
}

static void print_table(const fabric_row *r, size_t n, weft_coll coll, uint64_t size,
                        const char *traffic_path)
{
    if (traffic_path)
        printf("%s of %s on %u ranks (%llu bytes per rank on average), best plan per fabric\n",
               weft_coll_name(coll), traffic_path, weft_topo_num_ranks(r[0].t),
               (unsigned long long)size);
    else
        printf("%s of %llu bytes on %u ranks, best plan per fabric\n", weft_coll_name(coll),
               (unsigned long long)size, weft_topo_num_ranks(r[0].t));
    cli_table tb;
    cli_table_init(&tb, 10);
    for (size_t k = 3; k < 10; k++)
        cli_table_align_right(&tb, k);
    const char *head[] = {
        "#",      "fabric", "best plan (model)", "time (us)", "bound (us)", "of bound", "$", "W",
        "$/rank", "W/rank"};
    for (size_t k = 0; k < 10; k++)
        cli_table_cell(&tb, "%s", head[k]);
    char v[4][64];
    for (size_t i = 0; i < n; i++) {
        const fabric_row *f = &r[i];
        cli_table_cell(&tb, "%zu", i + 1);
        cli_table_cell(&tb, "%s", f->spec);
        if (f->best.have) {
            cli_table_cell(&tb, "%s (%s)%s", f->best.algo, weft_sim_model_name(f->model),
                           f->best.ocs_relaxed ? " *" : "");
            cli_table_cell(&tb, "%.3f", f->best.res.time_s * 1e6);
        } else {
            cli_table_cell(&tb, "none builds");
            cli_table_cell(&tb, "-");
        }
        if (f->best.have_bound)
            cli_table_cell(&tb, "%.3f", f->best.bound_time_s * 1e6);
        else
            cli_table_cell(&tb, "-");
        if (f->best.have && f->best.have_bound && f->best.res.time_s > 0)
            cli_table_cell(&tb, "%.1f%%", 100.0 * f->best.bound_time_s / f->best.res.time_s);
        else
            cli_table_cell(&tb, "-");
        cli_cost_text(f->tot.usd, 0, v[0], sizeof v[0]);
        cli_cost_text(f->tot.watt, 0, v[1], sizeof v[1]);
        cli_cost_text(f->tot.usd, f->bom.ranks, v[2], sizeof v[2]);
        cli_cost_text(f->tot.watt, f->bom.ranks, v[3], sizeof v[3]);
        for (int k = 0; k < 4; k++)
            cli_table_cell(&tb, "%s", v[k]);
    }
    cli_table_print(&tb, stdout, "");
    cli_table_fini(&tb);
    bool relaxed = false;
    for (size_t i = 0; i < n; i++)
        relaxed = relaxed || (r[i].best.have && r[i].best.ocs_relaxed);
    if (relaxed)
        printf("* %s has no circuit schedule: the plan crossed each OCS as a packet switch, as "
               "weft bound relaxes them (optimistic; docs/ocs.md)\n",
               weft_coll_name(coll));
    for (size_t i = 0; i < n; i++) {
        const fabric_row *f = &r[i];
        if (!f->best.have)
            printf("%s: no plan simulated (%s)\n", f->spec, f->best.why);
        if (f->tot.missing_usd[0])
            printf("%s: price ($) unknown: give %s in --cost FILE (docs/cost.md)\n", f->spec,
                   f->tot.missing_usd);
        if (f->tot.missing_watt[0])
            printf("%s: power (W) unknown: give %s in --cost FILE (docs/cost.md)\n", f->spec,
                   f->tot.missing_watt);
    }
}

int cli_sim_compare_fabrics(const cli_args *a, const char *list, weft_coll coll, uint64_t size,
                            const char *traffic_path, const char *cost_path, const weft_sim_opts *o,
                            bool model_set, uint32_t max_ops, bool json, cli_progress *pr)
{
    enum { MAX_FABRICS = 64 };
    size_t buflen = strlen(list) + 1;
    char *buf = malloc(buflen);
    const char *specs[MAX_FABRICS];
    fabric_row *rows = calloc(MAX_FABRICS, sizeof *rows);
    weft_traffic matrix = {0};
    bool have_matrix = false;
    int rc = CLI_EXIT_OK;
    size_t n = 0;
    if (!buf || !rows) {
        rc = cli_fail(WEFT_ENOMEM, NULL);
        goto out;
    }
    n = cli_split_fabrics(list, buf, buflen, specs, MAX_FABRICS);
    if (n == 0) {
        cli_error("--compare-fabrics '%s': expected 1 to %d fabric specs separated by commas", list,
                  MAX_FABRICS);
        rc = CLI_EXIT_USAGE;
        goto out;
    }
    weft_cost_table table;
    if ((rc = cli_cost_table(cost_path, &table)))
        goto out;
    for (size_t i = 0; i < n; i++) {
        rows[i].spec = specs[i];
        if ((rc = cli_load_fabric(a, specs[i], &rows[i].t)))
            goto out;
        uint32_t r0 = weft_topo_num_ranks(rows[0].t), ri = weft_topo_num_ranks(rows[i].t);
        if (ri != r0) {
            cli_error("--compare-fabrics needs fabrics of the same number of ranks: %s has %u, "
                      "%s has %u",
                      specs[0], r0, specs[i], ri);
            rc = CLI_EXIT_INPUT;
            goto out;
        }
        if ((rc = cli_cost_of(rows[i].t, &table, &rows[i].bom, &rows[i].tot)))
            goto out;
    }
    if (traffic_path) {
        if ((rc =
                 cli_traffic_load(traffic_path, specs[0], weft_topo_num_ranks(rows[0].t), &matrix)))
            goto out;
        have_matrix = true;
        uint64_t total = 0;
        for (size_t q = 0; q < (size_t)matrix.ranks * matrix.ranks; q++)
            total += matrix.bytes[q];
        if (total == 0) {
            cli_error("%s: the traffic matrix moves no bytes", traffic_path);
            rc = CLI_EXIT_INPUT;
            goto out;
        }
        size = (total + matrix.ranks / 2) / matrix.ranks;
        if (size == 0)
            size = 1;
    }
    size_t simulated = 0;
    for (size_t i = 0; i < n; i++) {
        weft_sim_opts oi = *o;
        if (!model_set)
            oi.model = weft_sim_model_default(rows[i].t);
        rows[i].model = oi.model;
        cli_progress_set(pr, "sim --compare-fabrics: %s (%zu of %zu)", specs[i], i + 1, n);
        cli_sim_best_plan(rows[i].t, coll, have_matrix ? &matrix : NULL, size, &oi, max_ops, pr,
                          &rows[i].best);
        simulated += rows[i].best.have;
    }
    cli_progress_stop(pr);
    if (simulated == 0) {
        cli_error("--compare-fabrics: no plan for %s simulated on any of the fabrics",
                  weft_coll_name(coll));
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, "  %s: %s\n", specs[i], rows[i].best.why);
        rc = CLI_EXIT_INPUT;
        goto out;
    }
    /* Sorted by time; equal times keep the order given (insertion sort). */
    for (size_t i = 1; i < n; i++) {
        fabric_row cur = rows[i];
        size_t k = i;
        while (k > 0 && by_time(&rows[k - 1], &cur) > 0) {
            rows[k] = rows[k - 1];
            k--;
        }
        rows[k] = cur;
    }
    if (json)
        print_json(rows, n, coll, size, traffic_path);
    else
        print_table(rows, n, coll, size, traffic_path);
out:
    for (size_t i = 0; rows && i < n; i++)
        weft_topo_free(rows[i].t);
    if (have_matrix)
        weft_traffic_free(&matrix);
    free(rows);
    free(buf);
    return rc;
}
