/* weft topo search: the direct-connect family for N ranks of degree d
 * scored by BFB (weft_dc_search_run in weft/synth.h), its Pareto frontier,
 * the best fabric for one size beside the ring and weft bound, and -o to
 * write that fabric. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/flagvals.h"
#include "cli/json.h"
#include "cli/outfile.h"
#include "cli/sizes.h"
#include "cli/table.h"
#include "cli/topo.h"
#include "weft/synth.h"

static const cli_opt search_opts[] = {
    {"ranks", 0, "N", "ranks (2 to 8192)"},
    {"degree", 0, "D", "links out of every rank (1 to N-1)"},
    {"coll", 0, "C", "allgather, reducescatter or allreduce"},
    {"size", 0, "S", "the collective's size the best fabric is chosen for (e.g. 1M, 1G)"},
    {"bw", 0, "B", "bandwidth of every link (default 100 GB/s)"},
    {"alpha", 0, "A", "latency of one step, with a unit: 1us, 500ns (default 1us)"},
    {"output", 'o', "FILE", "write the best fabric to FILE in .topo format"},
    {"json", 0, NULL, "print one JSON object instead of tables"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup search_group = {"options", search_opts, false};

static const cli_syntax search_syntax = {
    .path = "weft topo search",
    .args = "--ranks N --degree D --coll C --size S [--bw B] [--alpha A] [-o FILE] [--json]",
    .about = "Builds the direct-connect family of Zhao et al. (NSDI'25) for N ranks of\n"
             "degree D: base graphs (complete, complete bipartite, generalized Kautz,\n"
             "circulants, de Bruijn, hypercube), line graphs and degree expansions of\n"
             "smaller ones, and Cartesian products of two whose sizes multiply to N.\n"
             "Each is scored by its BFB schedule (weft plan --algo bfb): T_L steps and\n"
             "T_B, so that S bytes take T_L * alpha + T_B * S / bw. Prints the Pareto\n"
             "frontier on (T_L, T_B), the best fabric for --size, D parallel rings and\n"
             "weft bound of the best fabric beside it. -o writes the best fabric.\n",
    .groups = {&search_group},
};

static void fmt_time(double s, char *buf, size_t len)
{
    if (s < 1e-3)
        snprintf(buf, len, "%.2f us", s * 1e6);
    else if (s < 1)
        snprintf(buf, len, "%.3f ms", s * 1e3);
    else
        snprintf(buf, len, "%.3f s", s);
}

static bool parse_u32(const char *text, uint32_t *out)
{
    char *end;
    if (!text || text[0] < '0' || text[0] > '9')
        return false;
    unsigned long v = strtoul(text, &end, 10);
    if (*end || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

/* D parallel rings on the same ports: (N-1) steps per phase, each rank's
 * (N-1)/N of the data through D links. */
static void ring_point(uint32_t n, uint32_t deg, weft_coll coll, uint32_t *steps, weft_rat *tb)
{
    uint32_t phases = coll == WEFT_COLL_ALLREDUCE ? 2 : 1;
    *steps = phases * (n - 1);
    weft_rat_make((int64_t)phases * (n - 1), (int64_t)n * deg, tb);
}

int cli_topo_search(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&search_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    weft_dc_search s;
    memset(&s, 0, sizeof s);
    weft_topo *best_t = NULL;
    weft_bound bound;
    memset(&bound, 0, sizeof bound);
    uint32_t n, deg;
    weft_coll coll;
    uint64_t size;
    weft_rat bw = weft_rat_int(100);
    double alpha = 1e-6;
    const char *need[] = {"ranks", "degree", "coll", "size"};
    for (size_t i = 0; i < 4; i++) {
        if (!cli_args_get(&a, need[i])) {
            rc = cli_usage_error(&search_syntax, "missing --%s", need[i]);
            goto done;
        }
    }
    if (!parse_u32(cli_args_get(&a, "ranks"), &n)) {
        rc = cli_usage_error(&search_syntax, "bad --ranks '%s': expected an integer",
                             cli_args_get(&a, "ranks"));
        goto done;
    }
    if (!parse_u32(cli_args_get(&a, "degree"), &deg)) {
        rc = cli_usage_error(&search_syntax, "bad --degree '%s': expected an integer",
                             cli_args_get(&a, "degree"));
        goto done;
    }
    if ((rc = cli_flag_coll(&search_syntax, "--coll", cli_args_get(&a, "coll"), &coll)) ||
        (rc = cli_flag_size(&search_syntax, "--size", cli_args_get(&a, "size"), UINT64_MAX, &size)))
        goto done;
    if (cli_args_get(&a, "bw") &&
        (rc = cli_flag_bandwidth(&search_syntax, "--bw", cli_args_get(&a, "bw"), &bw)))
        goto done;
    if (cli_args_get(&a, "alpha") &&
        (rc = cli_flag_time(&search_syntax, "--alpha", cli_args_get(&a, "alpha"), 1e3, &alpha)))
        goto done;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_dc_search_run(n, deg, coll, bw, &s, &d);
    if (e) {
        rc = cli_fail(e, &d);
        goto done;
    }
    size_t best = weft_dc_search_best(&s, (double)size, alpha);
    const weft_dc_candidate *b = &s.cand[best];
    e = weft_topo_from_spec(b->spec, NULL, &best_t, &d);
    weft_bound_coll bc = coll == WEFT_COLL_ALLGATHER       ? WEFT_BOUND_ALLGATHER
                         : coll == WEFT_COLL_REDUCESCATTER ? WEFT_BOUND_REDUCESCATTER
                                                           : WEFT_BOUND_ALLREDUCE;
    if (!e)
        e = weft_bound_compute(best_t, bc, NULL, &bound, &d);
    if (e) {
        rc = cli_fail(e, &d);
        goto done;
    }
    uint32_t ring_steps;
    weft_rat ring_tb;
    ring_point(n, deg, coll, &ring_steps, &ring_tb);
    double bwd = weft_rat_to_double(bw) * 1e9;
    double ring_time = ring_steps * alpha + weft_rat_to_double(ring_tb) * (double)size / bwd;
    double bound_time = (double)size / (weft_rat_to_double(bound.algbw) * 1e9);
    char label[32], tbuf[64], ex[64];
    cli_size_label(size, label, sizeof label);
    if (cli_args_has(&a, "json")) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_begin_object(&j);
        cli_json_kv_uint(&j, "ranks", n);
        cli_json_kv_uint(&j, "degree", deg);
        cli_json_kv_string(&j, "coll", weft_coll_name(coll));
        cli_json_kv_uint(&j, "size", size);
        cli_json_kv_rat(&j, "bw", bw);
        cli_json_kv_double(&j, "alpha_s", alpha);
        cli_json_kv_uint(&j, "considered", s.considered);
        cli_json_key(&j, "candidates");
        cli_json_begin_array(&j);
        for (size_t i = 0; i < s.count; i++) {
            const weft_dc_candidate *c = &s.cand[i];
            cli_json_begin_object(&j);
            cli_json_kv_string(&j, "spec", c->spec);
            cli_json_kv_uint(&j, "steps", c->steps);
            cli_json_kv_rat(&j, "tb_exact", c->tb);
            cli_json_kv_rat(&j, "algbw_stepwise_exact", c->algbw_stepwise);
            cli_json_kv_bool(&j, "pareto", c->pareto);
            cli_json_kv_double(&j, "time_s", weft_dc_time(c, (double)size, alpha));
            cli_json_end_object(&j);
        }
        cli_json_end_array(&j);
        cli_json_kv_string(&j, "best", b->spec);
        cli_json_kv_double(&j, "time_s", weft_dc_time(b, (double)size, alpha));
        cli_json_key(&j, "ring");
        cli_json_begin_object(&j);
        cli_json_kv_uint(&j, "steps", ring_steps);
        cli_json_kv_rat(&j, "tb_exact", ring_tb);
        cli_json_kv_double(&j, "time_s", ring_time);
        cli_json_end_object(&j);
        cli_json_key(&j, "bound");
        cli_json_begin_object(&j);
        cli_json_kv_rat(&j, "algbw_exact", bound.algbw);
        cli_json_kv_double(&j, "time_s", bound_time);
        cli_json_end_object(&j);
        cli_json_end_object(&j);
        rc = cli_json_done(&j);
    } else {
        size_t on = 0;
        for (size_t i = 0; i < s.count; i++)
            on += s.cand[i].pareto;
        weft_rat_format_exact(bw, ex, sizeof ex);
        fmt_time(alpha, tbuf, sizeof tbuf);
        printf("%s on %u ranks of degree %u, links %s GB/s, alpha %s: %zu fabrics scored (%zu "
               "generated), %zu on the Pareto frontier\n",
               weft_coll_name(coll), n, deg, ex, tbuf, s.count, s.considered, on);
        cli_table tab;
        cli_table_init(&tab, 5);
        for (size_t c = 1; c < 5; c++)
            cli_table_align_right(&tab, c);
        cli_table_cell(&tab, "fabric");
        cli_table_cell(&tab, "T_L");
        cli_table_cell(&tab, "T_B");
        cli_table_cell(&tab, "algbw GB/s");
        cli_table_cell(&tab, "time(%s)", label);
        /* The frontier by increasing T_L. */
        for (uint32_t steps = 0, left = (uint32_t)on; left > 0; steps++) {
            for (size_t i = 0; i < s.count; i++) {
                const weft_dc_candidate *c = &s.cand[i];
                if (!c->pareto || c->steps != steps)
                    continue;
                left--;
                weft_rat_format(c->tb, ex, sizeof ex);
                fmt_time(weft_dc_time(c, (double)size, alpha), tbuf, sizeof tbuf);
                cli_table_cell(&tab, "%s", c->spec);
                cli_table_cell(&tab, "%u", c->steps);
                cli_table_cell(&tab, "%s", ex);
                cli_table_cell(&tab, "%.3f", weft_rat_to_double(c->algbw_stepwise));
                cli_table_cell(&tab, "%s", tbuf);
            }
        }
        printf("Pareto frontier (T_L steps; S bytes take T_L * alpha + T_B * S / bw):\n");
        if (cli_table_print(&tab, stdout, "  "))
            rc = CLI_EXIT_INPUT;
        cli_table_fini(&tab);
        fmt_time(weft_dc_time(b, (double)size, alpha), tbuf, sizeof tbuf);
        weft_rat_format(b->tb, ex, sizeof ex);
        printf("best for %s: %s, %s (T_L %u, T_B %s)\n", label, b->spec, tbuf, b->steps, ex);
        fmt_time(ring_time, tbuf, sizeof tbuf);
        weft_rat_format(ring_tb, ex, sizeof ex);
        printf("ring:        %u parallel rings, %s (T_L %u, T_B %s)\n", deg, tbuf, ring_steps, ex);
        fmt_time(bound_time, tbuf, sizeof tbuf);
        weft_rat_format(bound.algbw, ex, sizeof ex);
        printf("bound:       weft bound of the best fabric: algbw %.3f GB/s (%s), %s of "
               "bandwidth time at least\n",
               weft_rat_to_double(bound.algbw), ex, tbuf);
    }
    const char *path = cli_args_get(&a, "output");
    if (rc == CLI_EXIT_OK && path) {
        cli_out o;
        rc = cli_out_open(&o, path);
        if (rc == CLI_EXIT_OK) {
            bool ok = weft_topo_write(best_t, o.f) == WEFT_OK;
            rc = cli_out_close(&o, ok);
            if (rc == CLI_EXIT_OK && !ok) {
                cli_error("cannot write '%s'", path);
                rc = CLI_EXIT_INPUT;
            }
        }
    }
done:
    weft_bound_fini(&bound);
    weft_topo_free(best_t);
    weft_dc_search_fini(&s);
    cli_args_fini(&a);
    return rc;
}
