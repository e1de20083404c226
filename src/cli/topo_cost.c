/* weft topo cost SPEC [--cost FILE]: the network bill of materials of a
 * fabric (weft/cost.h) with $ and W per part, in total and per rank. */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/fabric.h"
#include "cli/fabric_cost.h"
#include "cli/json.h"
#include "cli/table.h"
#include "cli/topo.h"

static const cli_opt cost_opts[] = {
    {"cost", 0, "FILE", "$ and W per part as KEY = VALUE lines over the defaults (docs/cost.md)"},
    {"json", 0, NULL, "print one JSON object instead of a table"},
    {"output", 'o', "FILE", "write to FILE (atomically: all or nothing) instead of stdout"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup cost_group = {"options", cost_opts, false};

static const cli_syntax cost_syntax = {
    .path = "weft topo cost",
    .args = "SPEC [--cost FILE] [--json] [-o FILE] [fabric options]",
    .about = "The network bill of materials of a fabric: NIC ports, packet-switch ports,\n"
             "OCS ports, optical transceivers, copper DACs and fibers by rate class (100g,\n"
             "200g, 400g, 800g per direction), and GPU-side links (NVLink), counted from\n"
             "the fabric's nodes and links (docs/cost.md gives the rules), each with its\n"
             "$ and W and the totals, also per rank. Figures come from the defaults of\n"
             "docs/cost.md, each with its public source, and --cost FILE (lines such as\n"
             "nic.400g.usd = 1250, ocs_port.w = 0.5). A figure with no public source has\n"
             "no default: a total that needs it prints '-' and the keys to give.\n"
             "\n"
             "JSON keys: spec, ranks, parts [{part, rate (null: any rate), count, usd, w}]\n"
             "(per unit, null when unknown), usd, w, usd_per_rank, w_per_rank (numbers or\n"
             "null) with *_exact twins, missing_usd, missing_w (the keys a total lacks, \"\").\n",
    .groups = {&cost_group, &cli_fabric_options},
    .pos_names = {"SPEC"},
    .min_pos = 1,
    .max_pos = 1,
};

static int print_json(FILE *f, const char *spec, const weft_cost_bom *b, const weft_cost_table *c,
                      const weft_cost_totals *tot)
{
    cli_json j;
    cli_json_init(&j, f);
    cli_json_begin_object(&j);
    cli_json_kv_string(&j, "spec", spec);
    cli_json_kv_uint(&j, "ranks", b->ranks);
    cli_json_key(&j, "parts");
    cli_json_begin_array(&j);
    for (int p = 0; p < WEFT_COST_PARTS; p++) {
        for (int r = 0; r < WEFT_COST_RATES; r++) {
            if (!b->count[p][r])
                continue;
            cli_json_begin_object(&j);
            cli_json_kv_string(&j, "part", weft_cost_part_name((weft_cost_part)p));
            if (r == WEFT_COST_ANY) {
                cli_json_key(&j, "rate");
                cli_json_null(&j);
            } else {
                cli_json_kv_string(&j, "rate", weft_cost_rate_name((weft_cost_rate)r));
            }
            cli_json_kv_uint(&j, "count", b->count[p][r]);
            cli_cost_json(&j, "usd", c->usd[p][r], 0);
            cli_cost_json(&j, "w", c->watt[p][r], 0);
            cli_json_end_object(&j);
        }
    }
    cli_json_end_array(&j);
    cli_cost_totals_json(&j, tot, b->ranks);
    cli_json_end_object(&j);
    return cli_json_finish(&j);
}

static void line_total(weft_cost_value unit, uint64_t n, char *buf, size_t len)
{
    weft_cost_value v = unit;
    if (v.known && (n > INT64_MAX || weft_rat_mul(unit.v, weft_rat_int((int64_t)n), &v.v)))
        v.known = false;
    cli_cost_text(v, 0, buf, len);
}

static int print_table(FILE *f, const char *spec, const weft_cost_bom *b, const weft_cost_table *c,
                       const weft_cost_totals *tot)
{
    fprintf(f, "network of %s (%u ranks)\n", spec, b->ranks);
    cli_table tb;
    cli_table_init(&tb, 7);
    for (size_t k = 2; k < 7; k++)
        cli_table_align_right(&tb, k);
    const char *head[] = {"part", "rate", "count", "$ each", "W each", "$", "W"};
    for (size_t k = 0; k < 7; k++)
        cli_table_cell(&tb, "%s", head[k]);
    char buf[4][64];
    for (int p = 0; p < WEFT_COST_PARTS; p++) {
        for (int r = 0; r < WEFT_COST_RATES; r++) {
            uint64_t n = b->count[p][r];
            if (!n)
                continue;
            cli_cost_text(c->usd[p][r], 0, buf[0], sizeof buf[0]);
            cli_cost_text(c->watt[p][r], 0, buf[1], sizeof buf[1]);
            line_total(c->usd[p][r], n, buf[2], sizeof buf[2]);
            line_total(c->watt[p][r], n, buf[3], sizeof buf[3]);
            cli_table_cell(&tb, "%s", weft_cost_part_name((weft_cost_part)p));
            cli_table_cell(&tb, "%s",
                           r == WEFT_COST_ANY ? "-" : weft_cost_rate_name((weft_cost_rate)r));
            cli_table_cell(&tb, "%llu", (unsigned long long)n);
            for (int k = 0; k < 4; k++)
                cli_table_cell(&tb, "%s", buf[k]);
        }
    }
    cli_cost_text(tot->usd, 0, buf[0], sizeof buf[0]);
    cli_cost_text(tot->watt, 0, buf[1], sizeof buf[1]);
    cli_table_cell(&tb, "total");
    for (int k = 0; k < 4; k++)
        cli_table_cell(&tb, "%s", "");
    cli_table_cell(&tb, "%s", buf[0]);
    cli_table_cell(&tb, "%s", buf[1]);
    cli_cost_text(tot->usd, b->ranks, buf[0], sizeof buf[0]);
    cli_cost_text(tot->watt, b->ranks, buf[1], sizeof buf[1]);
    cli_table_cell(&tb, "per rank");
    for (int k = 0; k < 4; k++)
        cli_table_cell(&tb, "%s", "");
    cli_table_cell(&tb, "%s", buf[0]);
    cli_table_cell(&tb, "%s", buf[1]);
    int rc = cli_table_print(&tb, f, "  ");
    cli_table_fini(&tb);
    /* ">=" totals are the priced parts' sum: the total is at least that. */
    if (tot->missing_usd[0])
        fprintf(f,
                "price ($) unknown, at least the priced parts' sum: no public figure for %s "
                "(give them in --cost FILE)\n",
                tot->missing_usd);
    if (tot->missing_watt[0])
        fprintf(f,
                "power (W) unknown, at least the priced parts' sum: no public figure for %s "
                "(give them in --cost FILE)\n",
                tot->missing_watt);
    return rc;
}

static int write_cost(FILE *f, const cli_args *a, const char *spec, const weft_topo *t)
{
    weft_cost_table c;
    weft_cost_bom b;
    weft_cost_totals tot;
    int rc = cli_cost_table(cli_args_get(a, "cost"), &c);
    if (!rc)
        rc = cli_cost_of(t, &c, &b, &tot);
    if (rc)
        return rc;
    if (cli_args_has(a, "json"))
        return print_json(f, spec, &b, &c, &tot);
    return print_table(f, spec, &b, &c, &tot);
}

int cli_topo_cost(int argc, char **argv)
{
    return cli_topo_command(&cost_syntax, argc, argv, write_cost);
}
