/* weft bound SPEC --coll C [--json]: the exact optimum and its bottleneck
 * cut (weft/synth.h computes; this file only reads flags and prints). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/bound_a2a.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/fabric.h"
#include "cli/json.h"
#include "weft/synth.h"
#include "weft/topo.h"

static const cli_opt bound_opts[] = {
    {"coll", 0, "C", "allgather, reducescatter, allreduce or alltoall (required)"},
    {"traffic", 0, "FILE", "alltoall: the bytes each rank sends to each rank (a matrix file)"},
    {"json", 0, NULL, "print one JSON object instead of the report"},
    {"maxflow", 0, "ALGO", "push-relabel (default, the measured fastest) or dinic"},
    {"no-symmetry", 0, NULL, "check every rank instead of one per automorphism orbit"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup bound_group = {"options", bound_opts, false};

static const cli_syntax bound_syntax = {
    .path = "weft bound",
    .args = "SPEC --coll C [--traffic FILE] [--json]",
    .about = "Prints the exact throughput optimum of a collective on a fabric: the best\n"
             "algbw any schedule can reach, as a decimal and an exact fraction (GB/s),\n"
             "the time per byte, and the bottleneck cut S that limits it (the nodes in S\n"
             "and the links crossing it). For allgather with N ranks,\n"
             "  algbw = N * min over S of B+(S) / |S ∩ ranks|,\n"
             "S ranging over node sets that hold some ranks and leave out at least one,\n"
             "B+(S) the bandwidth of the links leaving S. Reduce-scatter uses the links\n"
             "entering S. Allreduce is reduce-scatter then allgather at the same size:\n"
             "T_ar = T_rs + T_ag, so algbw_ar = a_rs * a_ag / (a_rs + a_ag).\n"
             "\n"
             "For alltoall the bound is the maximum concurrent flow: every ordered pair of\n"
             "ranks routed at once over any paths (switches, NICs, relays through other\n"
             "ranks), the flows adding up in each link; solved as a linear program (GLPK)\n"
             "and certified exactly in rational arithmetic (docs/bound.md). Uniform: algbw\n"
             "= per-rank input size / T*. With --traffic FILE: time_s and time_exact, the\n"
             "least time to deliver the matrix, solved by column generation (a tree\n"
             "routing of each source per column; 1,024 ranks in seconds) and certified the\n"
             "same way. It names the links that limit it.\n"
             "\n"
             "A fabric with fewer than two ranks, or a rank that cannot reach another, is\n"
             "an error (exit 1). A switch whose in and out bandwidth differ gets a note:\n"
             "the bound still holds, but tree packing may not reach it.\n",
    .groups = {&bound_group, &cli_fabric_options},
    .pos_names = {"SPEC"},
    .min_pos = 1,
    .max_pos = 1,
};

static char *rat_text(weft_rat r, char *buf, size_t size)
{
    weft_rat_format(r, buf, size);
    return buf;
}

/* ---- Summaries of a cut ------------------------------------------------ */

/* Counts of nodes by kind, as "8 compute, 1 switch". */
static void kinds_text(const uint32_t *by_kind, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < WEFT__NODE_KIND_COUNT; k++) {
        if (!by_kind[k])
            continue;
        len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%u %s", len ? ", " : "",
                                by_kind[k], weft_node_kind_name((weft_node_kind)k));
    }
}

/* Prints the nodes marked in[v] == want host by host: whole hosts
 * summarised (only the first three named when there are many), a few nodes
 * by name, larger parts of a host and the nodes of no host by counts. */
static void print_node_set(const weft_topo *t, const uint8_t *in, uint8_t want)
{
    uint32_t n = weft_topo_num_nodes(t), nh = weft_topo_num_hosts(t);
    uint32_t *host_total = calloc((size_t)nh + 1, sizeof *host_total);
    uint32_t *host_in = calloc((size_t)nh + 1, sizeof *host_in);
    if (!host_total || !host_in) {
        printf(" (out of memory)");
        goto done;
    }
    for (uint32_t v = 0; v < n; v++) {
        int32_t h = weft_topo_node_host(t, (weft_node_id){v});
        uint32_t slot = h < 0 ? nh : (uint32_t)h;
        host_total[slot]++;
        host_in[slot] += in[v] == want;
    }
    uint32_t whole = 0, shown = 0;
    for (uint32_t h = 0; h < nh; h++)
        whole += host_in[h] && host_in[h] == host_total[h];
    const char *sep = " ";
    for (uint32_t h = 0; h <= nh; h++) {
        if (!host_in[h])
            continue;
        uint32_t by_kind[WEFT__NODE_KIND_COUNT] = {0};
        for (uint32_t v = 0; v < n; v++) {
            int32_t vh = weft_topo_node_host(t, (weft_node_id){v});
            if (in[v] == want && (vh < 0 ? nh : (uint32_t)vh) == h)
                by_kind[weft_topo_node_kind(t, (weft_node_id){v})]++;
        }
        char kinds[128];
        kinds_text(by_kind, kinds, sizeof kinds);
        bool is_whole = h < nh && host_in[h] == host_total[h];
        if (is_whole && whole > 4) {
            if (shown < 3)
                printf("%shost %s (%s)", sep, weft_topo_host_name(t, (int32_t)h), kinds);
            else if (shown == 3)
                printf("%s... %u whole hosts in all", sep, whole);
            shown++;
            sep = ", ";
            continue;
        }
        if (host_in[h] <= 4) {
            for (uint32_t v = 0; v < n; v++) {
                int32_t vh = weft_topo_node_host(t, (weft_node_id){v});
                if (in[v] == want && (vh < 0 ? nh : (uint32_t)vh) == h) {
                    printf("%s%s", sep, weft_topo_node_name(t, (weft_node_id){v}));
                    sep = ", ";
                }
            }
            continue;
        }
        if (h == nh)
            printf("%s%u nodes of no host (%s)", sep, host_in[h], kinds);
        else if (is_whole)
            printf("%shost %s (%s)", sep, weft_topo_host_name(t, (int32_t)h), kinds);
        else
            printf("%s%u of the %u nodes of host %s (%s)", sep, host_in[h], host_total[h],
                   weft_topo_host_name(t, (int32_t)h), kinds);
        sep = ", ";
    }
done:
    free(host_total);
    free(host_in);
}

/* Prints S, or "every node except" its complement when that is smaller. */
static void print_cut_nodes(const weft_topo *t, const weft_bound_cut *c)
{
    uint32_t n = weft_topo_num_nodes(t);
    uint8_t *in = calloc(n, 1);
    if (!in) {
        printf("  S: %u nodes\n", c->n_nodes);
        return;
    }
    for (uint32_t i = 0; i < c->n_nodes; i++)
        in[c->nodes[i].v] = 1;
    if (n - c->n_nodes < c->n_nodes) {
        printf("  S = every node except");
        print_node_set(t, in, 0);
    } else {
        printf("  S =");
        print_node_set(t, in, 1);
    }
    printf("\n");
    free(in);
}

#define MAX_LINKS_SHOWN 16

static void print_phase(const weft_topo *t, const weft_bound *b, const weft_bound_phase *p,
                        const char *indent)
{
    char x[64], y[64];
    const weft_bound_cut *c = &p->cut;
    printf("%sbottleneck cut: %u of %u nodes, %u of %u ranks in S\n", indent, c->n_nodes,
           weft_topo_num_nodes(t), c->ranks_in, b->ranks);
    printf("%s", indent);
    print_cut_nodes(t, c);
    printf("%slinks %s S: %u, %s GB/s in all (%g)\n", indent, c->inward ? "entering" : "leaving",
           c->n_links, rat_text(c->bw, x, sizeof x), weft_rat_to_double(c->bw));
    for (uint32_t i = 0; i < c->n_links && i < MAX_LINKS_SHOWN; i++) {
        weft_link_id l = c->links[i];
        printf("%s  %s -> %s  %s GB/s\n", indent, weft_topo_node_name(t, weft_topo_link_src(t, l)),
               weft_topo_node_name(t, weft_topo_link_dst(t, l)),
               rat_text(weft_topo_link_bw(t, l), x, sizeof x));
    }
    if (c->n_links > MAX_LINKS_SHOWN)
        printf("%s  ... and %u more\n", indent, c->n_links - MAX_LINKS_SHOWN);
    printf("%salgbw = N * B%s(S) / |S ∩ ranks| = %u * %s / %u = %s GB/s\n", indent,
           c->inward ? "-" : "+", b->ranks, rat_text(c->bw, x, sizeof x), c->ranks_in,
           rat_text(p->algbw, y, sizeof y));
}

/* The sum of a node's in- or out-link bandwidths (false on overflow). */
static bool node_bw(const weft_topo *t, weft_node_id v, bool out, weft_rat *sum)
{
    weft_rat s = weft_rat_int(0);
    uint32_t first, count;
    const uint32_t *in = NULL;
    if (out)
        weft_topo_out_links(t, v, &first, &count);
    else
        in = weft_topo_in_links(t, v, &count);
    for (uint32_t i = 0; i < count; i++) {
        weft_link_id l = {out ? first + i : in[i]};
        if (weft_rat_add(s, weft_topo_link_bw(t, l), &s))
            return false;
    }
    *sum = s;
    return true;
}

/* The phase whose cut limits the collective most (the slower one). */
static const weft_bound_phase *main_phase(const weft_bound *b)
{
    if (b->n_phases == 2 && weft_rat_cmp(b->phase[0].algbw, b->phase[1].algbw) < 0)
        return &b->phase[0];
    return &b->phase[b->n_phases - 1];
}

/* busbw and the time per byte. 1/algbw always fits; busbw (algbw times
 * 2(n-1)/n or (n-1)/n) may not, and is then only given as a double. */
typedef struct derived_vals {
    weft_rat busbw, per_byte;
    bool busbw_exact;
    double busbw_f;
} derived_vals;

static derived_vals derive(const weft_bound *b)
{
    derived_vals v;
    int64_t f = b->coll == WEFT_BOUND_ALLREDUCE ? 2 : 1;
    weft_rat factor = {0, 1};
    weft_rat_make(f * (int64_t)(b->ranks - 1), b->ranks, &factor);
    v.busbw_exact = weft_rat_mul(b->algbw, factor, &v.busbw) == WEFT_OK;
    v.busbw_f = weft_rat_to_double(b->algbw) * weft_rat_to_double(factor);
    /* GB/s is bytes per ns, so 1/algbw is ns per byte. */
    v.per_byte = weft_rat_int(0);
    weft_rat_div(weft_rat_int(1), b->algbw, &v.per_byte);
    return v;
}

static void print_human(const char *spec, const weft_topo *t, const weft_bound *b)
{
    char x[64], y[64];
    derived_vals dv = derive(b);
    weft_rat per_byte = dv.per_byte;
    printf("%s bound on %s: %u ranks%s\n", weft_bound_coll_name(b->coll), spec, b->ranks,
           b->coll == WEFT_BOUND_ALLREDUCE ? ", reduce-scatter then allgather" : "");
    printf("  algbw          %.6g GB/s (exact %s)\n", weft_rat_to_double(b->algbw),
           rat_text(b->algbw, x, sizeof x));
    printf("  busbw          %.6g GB/s (exact %s)\n", dv.busbw_f,
           dv.busbw_exact ? rat_text(dv.busbw, x, sizeof x) : "does not fit 64 bits");
    printf("  time per byte  %.6g ns (exact %s ns); 1 GiB takes %.6g ms\n",
           weft_rat_to_double(per_byte), rat_text(per_byte, x, sizeof x),
           weft_rat_to_double(per_byte) * 1073741824.0 / 1e6);
    if (b->coll == WEFT_BOUND_ALLREDUCE) {
        printf("  composition    T_ar = T_rs + T_ag at the same size, so\n"
               "                 algbw_ar = a_rs * a_ag / (a_rs + a_ag) = %s * %s / (%s + %s)\n",
               rat_text(b->phase[0].algbw, x, sizeof x), rat_text(b->phase[1].algbw, y, sizeof y),
               x, y);
        for (uint32_t i = 0; i < 2; i++) {
            printf("  %s phase: algbw %.6g GB/s (exact %s)\n",
                   weft_bound_coll_name(b->phase[i].coll), weft_rat_to_double(b->phase[i].algbw),
                   rat_text(b->phase[i].algbw, x, sizeof x));
            print_phase(t, b, &b->phase[i], "    ");
        }
    } else {
        print_phase(t, b, &b->phase[0], "  ");
    }
    if (!b->switches_balanced) {
        weft_rat in = {0, 1}, out = {0, 1};
        node_bw(t, b->unbalanced, false, &in);
        node_bw(t, b->unbalanced, true, &out);
        printf("note: %s %s takes in %s GB/s but sends out %s GB/s; the bound is still a valid\n"
               "      upper bound on throughput, but tree packing is only guaranteed to reach\n"
               "      it when every switch is balanced\n",
               weft_node_kind_name(weft_topo_node_kind(t, b->unbalanced)),
               weft_topo_node_name(t, b->unbalanced), rat_text(in, x, sizeof x),
               rat_text(out, y, sizeof y));
    }
}

static void json_cut(cli_json *j, const weft_topo *t, const weft_bound_cut *c)
{
    cli_json_begin_object(j);
    cli_json_kv_string(j, "direction", c->inward ? "in" : "out");
    cli_json_kv_uint(j, "ranks_in", c->ranks_in);
    cli_json_kv_double(j, "bw", weft_rat_to_double(c->bw));
    cli_json_kv_rat(j, "bw_exact", c->bw);
    cli_json_key(j, "nodes");
    cli_json_begin_array(j);
    for (uint32_t i = 0; i < c->n_nodes; i++)
        cli_json_string(j, weft_topo_node_name(t, c->nodes[i]));
    cli_json_end_array(j);
    cli_json_key(j, "links");
    cli_json_begin_array(j);
    for (uint32_t i = 0; i < c->n_links; i++) {
        weft_link_id l = c->links[i];
        cli_json_begin_object(j);
        cli_json_kv_string(j, "src", weft_topo_node_name(t, weft_topo_link_src(t, l)));
        cli_json_kv_string(j, "dst", weft_topo_node_name(t, weft_topo_link_dst(t, l)));
        cli_json_kv_double(j, "bw", weft_rat_to_double(weft_topo_link_bw(t, l)));
        cli_json_kv_rat(j, "bw_exact", weft_topo_link_bw(t, l));
        cli_json_end_object(j);
    }
    cli_json_end_array(j);
    cli_json_end_object(j);
}

static int print_json(const weft_topo *t, const weft_bound *b)
{
    derived_vals dv = derive(b);
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_kv_uint(&j, "ranks", b->ranks);
    cli_json_kv_string(&j, "coll", weft_bound_coll_name(b->coll));
    cli_json_kv_double(&j, "algbw", weft_rat_to_double(b->algbw));
    cli_json_kv_rat(&j, "algbw_exact", b->algbw);
    cli_json_kv_double(&j, "busbw", dv.busbw_f);
    cli_json_key(&j, "busbw_exact"); /* null when it does not fit 64 bits */
    if (dv.busbw_exact)
        cli_json_rat(&j, dv.busbw);
    else
        cli_json_null(&j);
    cli_json_kv_double(&j, "time_per_byte_ns", weft_rat_to_double(dv.per_byte));
    cli_json_kv_rat(&j, "time_per_byte_ns_exact", dv.per_byte);
    if (b->coll == WEFT_BOUND_ALLREDUCE)
        cli_json_kv_string(&j, "composition",
                           "reduce-scatter then allgather: T_ar = T_rs + T_ag, "
                           "algbw = a_rs * a_ag / (a_rs + a_ag)");
    cli_json_key(&j, "cut");
    json_cut(&j, t, &main_phase(b)->cut);
    cli_json_key(&j, "phases");
    cli_json_begin_array(&j);
    for (uint32_t i = 0; i < b->n_phases; i++) {
        const weft_bound_phase *p = &b->phase[i];
        cli_json_begin_object(&j);
        cli_json_kv_string(&j, "coll", weft_bound_coll_name(p->coll));
        cli_json_kv_double(&j, "algbw", weft_rat_to_double(p->algbw));
        cli_json_kv_rat(&j, "algbw_exact", p->algbw);
        cli_json_kv_uint(&j, "iterations", p->iterations);
        cli_json_kv_uint(&j, "maxflows", p->maxflows);
        cli_json_key(&j, "cut");
        json_cut(&j, t, &p->cut);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_kv_uint(&j, "rank_classes", b->rank_classes);
    cli_json_kv_bool(&j, "switches_balanced", b->switches_balanced);
    cli_json_key(&j, "unbalanced_node");
    cli_json_string(&j, b->switches_balanced ? NULL : weft_topo_node_name(t, b->unbalanced));
    cli_json_end_object(&j);
    return cli_json_finish(&j);
}

int cli_cmd_bound(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&bound_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    weft_bound_opts opts;
    weft_bound_opts_init(&opts);
    weft_bound_coll coll;
    const char *coll_text = cli_args_get(&a, "coll");
    const char *algo = cli_args_get(&a, "maxflow");
    if (!coll_text) {
        rc = cli_usage_error(&bound_syntax, "missing --coll (allgather, reducescatter, "
                                            "allreduce or alltoall)");
        goto free_args;
    }
    bool a2a = strcmp(coll_text, "alltoall") == 0;
    if (cli_args_get(&a, "traffic") && !a2a) {
        rc = cli_usage_error(&bound_syntax, "--traffic is for --coll alltoall");
        goto free_args;
    }
    if (a2a) {
        coll = WEFT_BOUND_ALLGATHER; /* unused */
    } else if (!weft_bound_coll_parse(coll_text, &coll)) {
        rc = cli_usage_error(&bound_syntax,
                             "bad --coll '%s': the bound is computed for allgather, "
                             "reducescatter, allreduce or alltoall",
                             coll_text);
        goto free_args;
    }
    if (algo && strcmp(algo, "dinic") == 0) {
        opts.algo = WEFT_MAXFLOW_DINIC;
    } else if (algo && strcmp(algo, "push-relabel") == 0) {
        opts.algo = WEFT_MAXFLOW_PUSH_RELABEL;
    } else if (algo) {
        rc = cli_usage_error(&bound_syntax, "bad --maxflow '%s': push-relabel or dinic", algo);
        goto free_args;
    }
    opts.use_symmetry = !cli_args_has(&a, "no-symmetry");
    weft_topo *t = NULL;
    rc = cli_load_fabric(&a, a.pos[0], &t);
    if (rc != CLI_EXIT_OK)
        goto free_args;
    if (a2a) {
        rc = cli_bound_a2a(a.pos[0], t, cli_args_get(&a, "traffic"),
                           !cli_args_has(&a, "no-symmetry"), cli_args_has(&a, "json"));
        if (rc == CLI_EXIT_OK && (fflush(stdout) != 0 || ferror(stdout))) {
            cli_error("cannot write to standard output");
            rc = CLI_EXIT_INPUT;
        }
        goto free_topo;
    }
    weft_diag d;
    weft_diag_clear(&d);
    weft_bound b;
    cli_context_object("computing the bound");
    weft_err e = weft_bound_compute(t, coll, &opts, &b, &d);
    if (e) {
        rc = cli_fail(e, &d);
        goto free_topo;
    }
    if (cli_args_has(&a, "json")) {
        rc = print_json(t, &b) ? CLI_EXIT_INPUT : CLI_EXIT_OK;
    } else {
        print_human(a.pos[0], t, &b);
        rc = CLI_EXIT_OK;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("cannot write to standard output");
        rc = CLI_EXIT_INPUT;
    }
    weft_bound_fini(&b);
free_topo:
    weft_topo_free(t);
free_args:
    cli_args_fini(&a);
    return rc;
}
