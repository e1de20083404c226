/* weft sim SPEC --algo ring --coll C --size S [--json | --csv]: simulated
 * time, algbw and busbw of a collective (weft/sim.h computes; this file
 * reads flags and prints). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/fabric.h"
#include "cli/json.h"
#include "cli/outfile.h"
#include "cli/table.h"
#include "weft/sim.h"
#include "weft/synth.h"
#include "weft/topo.h"

static const cli_opt sim_opts[] = {
    {"plan", 0, "FILE", "simulate this plan (verified against the fabric first)"},
    {"algo", 0, "A",
     "or an algorithm: ring (rank-order ring, symmetric fast path) or any of weft plan --list"},
    {"coll", 0, "C", "with --algo: the collective (ring: allgather, reducescatter, allreduce)"},
    {"size", 0, "S", "bytes (K, M, G = 2^10, 2^20, 2^30), or a sweep MIN:MAX:xF (required)"},
    {"slices", 0, "P", "pipelining depth: slices per transfer (default 1)"},
    {"alpha", 0, "SEC", "per-transfer start overhead in seconds (default 0)"},
    {"no-symmetry", 0, NULL, "simulate every transfer instead of one per class (slower)"},
    {"trace", 0, "FILE", "with a plan: write a Chrome trace-event JSON of the last size"},
    {"json", 0, NULL, "print one JSON object instead of the table"},
    {"csv", 0, NULL, "print CSV rows instead of the table"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup sim_group = {"options", sim_opts};

static const cli_syntax sim_syntax = {
    .path = "weft sim",
    .args = "SPEC (--plan FILE | --algo A --coll C) --size S [--json | --csv] [--trace FILE]",
    .about = "Simulates a collective on a fabric, flow by flow: links are shared max-min\n"
             "fairly, every transfer pays alpha, its route's latency and its bytes at the\n"
             "rate it gets. Prints the time, algbw = size / time and busbw (nccl-tests\n"
             "factors) per size, and the five busiest links of the last size.\n"
             "--size 1K:1G:x4 sweeps sizes from 1K to 1G by factors of 4.\n",
    .groups = {&sim_group, &cli_fabric_options},
    .pos_names = {"SPEC"},
    .min_pos = 1,
    .max_pos = 1,
};

/* "4096", "64K", "1M", "2G" -> bytes; false when malformed or zero. */
static bool parse_size(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        if (v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (i == 0)
        return false;
    unsigned shift = 0;
    if (i < len) {
        switch (s[i]) {
        case 'K':
            shift = 10;
            break;
        case 'M':
            shift = 20;
            break;
        case 'G':
            shift = 30;
            break;
        default:
            return false;
        }
        i++;
    }
    if (i != len || v == 0 || v > (UINT64_MAX >> shift))
        return false;
    *out = v << shift;
    return true;
}

/* S or MIN:MAX:xF into lo, hi, factor (factor 0 for a single size). */
static bool parse_sweep(const char *s, uint64_t *lo, uint64_t *hi, uint64_t *factor)
{
    const char *c1 = strchr(s, ':');
    if (!c1) {
        *factor = 0;
        return parse_size(s, strlen(s), lo) && (*hi = *lo, true);
    }
    const char *c2 = strchr(c1 + 1, ':');
    if (!c2 || c2[1] != 'x' || !parse_size(s, (size_t)(c1 - s), lo) ||
        !parse_size(c1 + 1, (size_t)(c2 - c1 - 1), hi) ||
        !parse_size(c2 + 2, strlen(c2 + 2), factor) || *factor < 2 || *hi < *lo)
        return false;
    return true;
}

static void link_name(const weft_topo *t, const weft_sim_link_use *u, char *buf, size_t size)
{
    snprintf(buf, size, "%s -> %s", weft_topo_node_name(t, weft_topo_link_src(t, u->link)),
             weft_topo_node_name(t, weft_topo_link_dst(t, u->link)));
}

static void print_json(const weft_topo *t, const char *spec, const char *algo,
                       const weft_sim_result *rs, size_t n)
{
    cli_json j;
    cli_json_init(&j, stdout);
    const weft_sim_result *last = &rs[n - 1];
    cli_json_begin_object(&j);
    cli_json_kv_string(&j, "fabric", spec);
    cli_json_kv_uint(&j, "ranks", last->ranks);
    cli_json_kv_string(&j, "coll", weft_coll_name(last->coll));
    cli_json_kv_string(&j, "algo", algo);
    cli_json_kv_uint(&j, "size", last->size);
    cli_json_kv_double(&j, "time_s", last->time_s);
    cli_json_kv_double(&j, "algbw", last->algbw_gbps);
    cli_json_kv_double(&j, "busbw", last->busbw_gbps);
    cli_json_kv_uint(&j, "flow_classes", last->flow_classes);
    cli_json_kv_uint(&j, "events", last->events);
    cli_json_key(&j, "busiest");
    cli_json_begin_array(&j);
    for (uint32_t i = 0; i < last->n_busiest; i++) {
        char name[2 * WEFT_TOPO_NAME_MAX + 8];
        link_name(t, &last->busiest[i], name, sizeof name);
        cli_json_begin_object(&j);
        cli_json_kv_string(&j, "link", name);
        cli_json_kv_uint(&j, "alike", last->busiest[i].count);
        cli_json_kv_double(&j, "bytes", last->busiest[i].bytes);
        cli_json_kv_double(&j, "util", last->busiest[i].util);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_key(&j, "sweep");
    cli_json_begin_array(&j);
    for (size_t i = 0; i < n; i++) {
        cli_json_begin_object(&j);
        cli_json_kv_uint(&j, "size", rs[i].size);
        cli_json_kv_double(&j, "time_s", rs[i].time_s);
        cli_json_kv_double(&j, "algbw", rs[i].algbw_gbps);
        cli_json_kv_double(&j, "busbw", rs[i].busbw_gbps);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_end_object(&j);
    cli_json_finish(&j);
}

static void print_table(const weft_topo *t, const char *spec, const char *algo,
                        const weft_sim_result *rs, size_t n)
{
    const weft_sim_result *last = &rs[n - 1];
    printf("%s %s on %s: %u ranks\n", weft_coll_name(last->coll), algo, spec, last->ranks);
    cli_table tab;
    cli_table_init(&tab, 4);
    for (size_t c = 0; c < 4; c++)
        cli_table_align_right(&tab, c);
    cli_table_cell(&tab, "size");
    cli_table_cell(&tab, "time (us)");
    cli_table_cell(&tab, "algbw (GB/s)");
    cli_table_cell(&tab, "busbw (GB/s)");
    for (size_t i = 0; i < n; i++) {
        cli_table_cell(&tab, "%llu", (unsigned long long)rs[i].size);
        cli_table_cell(&tab, "%.3f", rs[i].time_s * 1e6);
        cli_table_cell(&tab, "%.3f", rs[i].algbw_gbps);
        cli_table_cell(&tab, "%.3f", rs[i].busbw_gbps);
    }
    cli_table_print(&tab, stdout, "  ");
    cli_table_fini(&tab);
    printf("busiest links at %llu bytes:\n", (unsigned long long)last->size);
    cli_table_init(&tab, 3);
    cli_table_align_right(&tab, 1);
    for (uint32_t i = 0; i < last->n_busiest; i++) {
        char name[2 * WEFT_TOPO_NAME_MAX + 8];
        link_name(t, &last->busiest[i], name, sizeof name);
        cli_table_cell(&tab, "%s", name);
        cli_table_cell(&tab, "%.1f%%", last->busiest[i].util * 100);
        if (last->busiest[i].count > 1)
            cli_table_cell(&tab, "(and %u alike)", last->busiest[i].count - 1);
        else
            cli_table_cell(&tab, "%s", "");
    }
    cli_table_print(&tab, stdout, "  ");
    cli_table_fini(&tab);
}

int cli_cmd_sim(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&sim_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    const char *algo = cli_args_get(&a, "algo"), *coll_s = cli_args_get(&a, "coll"),
               *size_s = cli_args_get(&a, "size"), *plan_path = cli_args_get(&a, "plan"),
               *trace_path = cli_args_get(&a, "trace");
    weft_coll coll = WEFT_COLL_ALLREDUCE;
    uint64_t lo, hi, factor;
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    weft_plan *plan = NULL;
    weft_topo *t = NULL;
    weft_sim_result *rs = NULL;
    cli_out trace = {NULL, NULL, NULL};
    bool trace_open = false;
    if (plan_path && (algo || coll_s)) {
        rc = cli_usage_error(&sim_syntax, "--plan and --algo/--coll exclude each other");
        goto free_args;
    }
    if (!plan_path && (!algo || !coll_s)) {
        rc = cli_usage_error(&sim_syntax, "missing %s", !algo ? "--plan or --algo" : "--coll");
        goto free_args;
    }
    if (!size_s) {
        rc = cli_usage_error(&sim_syntax, "missing --size");
        goto free_args;
    }
    /* --algo ring is the simulator's own rank-order ring (weft_sim_ring,
     * symmetry-reduced, fast at scale); any other algorithm is built as a
     * plan by the classic synthesiser and simulated op by op. */
    bool builtin_ring = algo && strcmp(algo, "ring") == 0;
    if (trace_path && builtin_ring) {
        rc = cli_usage_error(&sim_syntax, "--trace needs a plan (--plan or --algo other than ring)");
        goto free_args;
    }
    if (coll_s && !weft_coll_parse(coll_s, strlen(coll_s), &coll)) {
        rc = cli_usage_error(&sim_syntax, "unknown --coll '%s'", coll_s);
        goto free_args;
    }
    if (!parse_sweep(size_s, &lo, &hi, &factor)) {
        rc = cli_usage_error(&sim_syntax, "bad --size '%s' (expected e.g. 64M or 1K:1G:x4)",
                             size_s);
        goto free_args;
    }
    const char *sl = cli_args_get(&a, "slices"), *al = cli_args_get(&a, "alpha");
    if (sl) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(sl, &end, 10);
        if (*sl < '0' || *sl > '9' || *end || errno || v == 0 || v > 1000000) {
            rc = cli_usage_error(&sim_syntax, "bad --slices '%s' (expected 1 .. 1000000)", sl);
            goto free_args;
        }
        o.slices = (uint32_t)v;
    }
    if (al) {
        char *end;
        o.alpha_s = strtod(al, &end);
        if (!*al || *end || !(o.alpha_s >= 0) || o.alpha_s > 1e3) {
            rc = cli_usage_error(&sim_syntax, "bad --alpha '%s' (expected seconds >= 0)", al);
            goto free_args;
        }
    }
    o.symmetry = !cli_args_has(&a, "no-symmetry");

    weft_diag d;
    weft_diag_clear(&d);
    rc = cli_load_fabric(&a, a.pos[0], &t);
    if (rc)
        goto free_args;
    weft_err e;
    if (plan_path) {
        if ((e = weft_plan_load_file(plan_path, &plan, &d)) ||
            (e = weft_plan_verify(plan, t, &d))) {
            rc = cli_fail(e, &d);
            goto free_all;
        }
        algo = "plan";
    } else if (!builtin_ring) {
        if ((e = weft_synth_classic(t, algo, coll, (weft_rank){0}, &plan, &d))) {
            rc = cli_fail(e, &d);
            goto free_all;
        }
    }
    size_t n = 1;
    for (uint64_t s = lo; factor && s <= hi / factor; s *= factor)
        n++;
    rs = calloc(n, sizeof *rs);
    if (!rs) {
        rc = cli_fail(WEFT_ENOMEM, NULL);
        goto free_all;
    }
    if (trace_path) {
        if ((rc = cli_out_open(&trace, trace_path)) != CLI_EXIT_OK)
            goto free_all;
        trace_open = true;
    }
    uint64_t s = lo;
    for (size_t i = 0; i < n; i++, s *= factor ? factor : 1) {
        o.trace = trace_open && i + 1 == n ? trace.f : NULL;
        e = plan ? weft_sim_plan(t, plan, s, &o, &rs[i], &d)
                 : weft_sim_ring(t, coll, s, &o, &rs[i], &d);
        if (e) {
            rc = cli_fail(e, &d);
            goto free_all;
        }
    }
    if (trace_open) {
        trace_open = false;
        if ((rc = cli_out_close(&trace, true)) != CLI_EXIT_OK)
            goto free_all;
    }
    if (cli_args_has(&a, "json")) {
        print_json(t, a.pos[0], algo, rs, n);
    } else if (cli_args_has(&a, "csv")) {
        printf("size,time_s,algbw_gbps,busbw_gbps\n");
        for (size_t i = 0; i < n; i++)
            printf("%llu,%.17g,%.17g,%.17g\n", (unsigned long long)rs[i].size, rs[i].time_s,
                   rs[i].algbw_gbps, rs[i].busbw_gbps);
    } else {
        print_table(t, a.pos[0], algo, rs, n);
    }
    rc = CLI_EXIT_OK;
free_all:
    if (trace_open)
        cli_out_close(&trace, false);
    free(rs);
    weft_plan_free(plan);
    weft_topo_free(t);
free_args:
    cli_args_fini(&a);
    return rc;
}
