/* weft topo stats SPEC: the summary of a fabric (weft_topo_get_stats). */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/fabric.h"
#include "cli/json.h"
#include "cli/table.h"
#include "cli/topo.h"

static const cli_opt stats_opts[] = {
    {"json", 0, NULL, "print one JSON object instead of a table"},
    {"output", 'o', "FILE", "write to FILE (atomically: all or nothing) instead of stdout"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup stats_group = {"options", stats_opts, false};

static const cli_syntax stats_syntax = {
    .path = "weft topo stats",
    .args = "SPEC [--json] [-o FILE] [fabric options]",
    .about = "Summarises a fabric: ranks (compute nodes), hosts, nodes by kind, directed\n"
             "links, the smallest and largest bandwidth a rank can send (injection: the sum\n"
             "of its out-links) and receive (ejection: the sum of its in-links), exact and\n"
             "in decimal, whether every switch, NIC and OCS forwards as much as it receives\n"
             "(balanced; if not, one that is not), and whether every node reaches every\n"
             "other (strongly connected) or at least every rank every other rank.\n"
             "\n"
             "JSON keys: spec, ranks, nodes, links, hosts, nodes_by_kind {compute, switch,\n"
             "nic, ocs}, min_injection, max_injection, min_ejection, max_ejection (GB/s,\n"
             "numbers) with *_exact twins (strings such as \"2400/7\"), switches_balanced,\n"
             "first_unbalanced (a node name or null), strongly_connected, ranks_connected,\n"
             "note (what an import assumed; \"\" if nothing).\n",
    .groups = {&stats_group, &cli_fabric_options},
    .pos_names = {"SPEC"},
    .min_pos = 1,
    .max_pos = 1,
};

/* The bandwidth a node receives and sends; sums of exact rationals. */
static weft_err node_io(const weft_topo *t, weft_node_id n, weft_rat *in, weft_rat *out)
{
    weft_rat s = weft_rat_int(0);
    uint32_t first, count;
    weft_topo_out_links(t, n, &first, &count);
    for (uint32_t i = 0; i < count; i++) {
        weft_link_id l = {first + i};
        weft_err e = weft_rat_add(s, weft_topo_link_bw(t, l), &s);
        if (e)
            return e;
    }
    *out = s;
    s = weft_rat_int(0);
    const uint32_t *ins = weft_topo_in_links(t, n, &count);
    for (uint32_t i = 0; i < count; i++) {
        weft_link_id l = {ins[i]};
        weft_err e = weft_rat_add(s, weft_topo_link_bw(t, l), &s);
        if (e)
            return e;
    }
    *in = s;
    return WEFT_OK;
}

static void json_bw(cli_json *j, const char *key, weft_rat v)
{
    char exact_key[64];
    snprintf(exact_key, sizeof exact_key, "%s_exact", key);
    cli_json_kv_double(j, key, weft_rat_to_double(v));
    cli_json_kv_rat(j, exact_key, v);
}

static int print_json(FILE *f, const char *spec, const weft_topo *t, const weft_topo_stats *s)
{
    cli_json j;
    cli_json_init(&j, f);
    cli_json_begin_object(&j);
    cli_json_kv_string(&j, "spec", spec);
    cli_json_kv_uint(&j, "ranks", s->ranks);
    cli_json_kv_uint(&j, "nodes", s->nodes);
    cli_json_kv_uint(&j, "links", s->links);
    cli_json_kv_uint(&j, "hosts", s->hosts);
    cli_json_key(&j, "nodes_by_kind");
    cli_json_begin_object(&j);
    for (int k = 0; k < WEFT__NODE_KIND_COUNT; k++)
        cli_json_kv_uint(&j, weft_node_kind_name((weft_node_kind)k), s->nodes_by_kind[k]);
    cli_json_end_object(&j);
    json_bw(&j, "min_injection", s->min_injection);
    json_bw(&j, "max_injection", s->max_injection);
    json_bw(&j, "min_ejection", s->min_ejection);
    json_bw(&j, "max_ejection", s->max_ejection);
    cli_json_kv_bool(&j, "switches_balanced", s->switches_balanced);
    cli_json_kv_string(&j, "first_unbalanced", s->first_unbalanced);
    cli_json_kv_bool(&j, "strongly_connected", s->strongly_connected);
    cli_json_kv_bool(&j, "ranks_connected", s->ranks_connected);
    cli_json_kv_string(&j, "note", weft_topo_note(t));
    cli_json_end_object(&j);
    return cli_json_finish(&j);
}

/* "325 GB/s" when min == max, else "25 GB/s to 325 GB/s". */
static void range_text(weft_rat lo, weft_rat hi, char *buf, size_t size)
{
    char a[128], b[128];
    cli_format_bw(lo, a, sizeof a);
    if (weft_rat_eq(lo, hi)) {
        snprintf(buf, size, "%s per rank (every rank)", a);
        return;
    }
    cli_format_bw(hi, b, sizeof b);
    snprintf(buf, size, "%s to %s per rank (min to max)", a, b);
}

static int print_table(FILE *f, const char *spec, const weft_topo *t, const weft_topo_stats *s)
{
    cli_table tb;
    cli_table_init(&tb, 2);
    char buf[400];
    cli_table_cell(&tb, "fabric");
    cli_table_cell(&tb, "%s", spec);
    cli_table_cell(&tb, "ranks");
    cli_table_cell(&tb, "%u", s->ranks);
    cli_table_cell(&tb, "hosts");
    cli_table_cell(&tb, "%u", s->hosts);
    cli_table_cell(&tb, "nodes");
    cli_table_cell(&tb, "%u", s->nodes);
    for (int k = 0; k < WEFT__NODE_KIND_COUNT; k++) {
        cli_table_cell(&tb, "  %s", weft_node_kind_name((weft_node_kind)k));
        cli_table_cell(&tb, "%u", s->nodes_by_kind[k]);
    }
    cli_table_cell(&tb, "links");
    cli_table_cell(&tb, "%u (directed)", s->links);
    range_text(s->min_injection, s->max_injection, buf, sizeof buf);
    cli_table_cell(&tb, "injection");
    cli_table_cell(&tb, "%s", buf);
    range_text(s->min_ejection, s->max_ejection, buf, sizeof buf);
    cli_table_cell(&tb, "ejection");
    cli_table_cell(&tb, "%s", buf);
    cli_table_cell(&tb, "switches");
    if (s->nodes == s->ranks) {
        cli_table_cell(&tb, "none (every node is a rank)");
    } else if (s->switches_balanced) {
        cli_table_cell(&tb, "balanced (every switch, nic, ocs sends what it receives)");
    } else {
        weft_node_id n;
        weft_rat in, out;
        char a[128], b[128];
        if (weft_topo_find_node(t, s->first_unbalanced, &n) && !node_io(t, n, &in, &out)) {
            cli_format_bw(in, a, sizeof a);
            cli_format_bw(out, b, sizeof b);
            cli_table_cell(&tb, "NOT balanced: %s receives %s but sends %s", s->first_unbalanced, a,
                           b);
        } else {
            cli_table_cell(&tb, "NOT balanced: %s", s->first_unbalanced);
        }
    }
    cli_table_cell(&tb, "connectivity");
    if (s->strongly_connected)
        cli_table_cell(&tb, "strongly connected (every node reaches every node)");
    else if (s->ranks_connected)
        cli_table_cell(&tb, "every rank reaches every rank, but not every node every node");
    else
        cli_table_cell(&tb, "NOT connected: some rank cannot reach another");
    int rc = cli_table_print(&tb, f, NULL);
    cli_table_fini(&tb);
    /* The note says what an import or preset assumed; show it as is. */
    const char *note = weft_topo_note(t);
    if (rc == 0 && note[0]) {
        fputs("\nnote:\n", f);
        for (const char *p = note; *p;) {
            size_t len = strcspn(p, "\n");
            fprintf(f, "  %.*s\n", (int)len, p);
            p += len;
            if (*p)
                p++;
        }
    }
    return rc;
}

static int write_stats(FILE *f, const cli_args *a, const char *spec, const weft_topo *t)
{
    weft_topo_stats s;
    weft_err e = weft_topo_get_stats(t, &s);
    if (e) {
        cli_error("%s: cannot sum the bandwidth of a node: %s", spec, weft_strerror(e));
        return CLI_EXIT_INPUT;
    }
    bool json = cli_args_has(a, "json");
    if ((json ? print_json(f, spec, t, &s) : print_table(f, spec, t, &s)) != 0) {
        if (json)
            cli_error("internal error: incomplete JSON document");
        else
            cli_error("out of memory printing the statistics of '%s'", spec);
        return CLI_EXIT_INPUT;
    }
    return CLI_EXIT_OK;
}

int cli_topo_stats(int argc, char **argv)
{
    return cli_topo_command(&stats_syntax, argc, argv, write_stats);
}
