/* `weft plan --algo optimal`: summary, JSON and DOT (cli/plan_optimal.h). */
#include "cli/plan_optimal.h"

#include <string.h>

#include "cli/cli.h"

size_t cli_baseline_names(const char **names, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < weft_classic_count() && n + 2 <= cap; i++) {
        const char *name = weft_classic_get(i)->name;
        if (strcmp(name, "rings:K") == 0) {
            names[n++] = "rings:auto";
            name = "rings:4";
        }
        names[n++] = name;
    }
    return n;
}

void cli_algo_label(const weft_topo *t, const char *algo, weft_coll coll, char *buf, size_t len)
{
    weft_nccl_fabric f;
    weft_nccl_choice ch;
    if (strcmp(algo, "nccl") == 0 && !weft_nccl_fabric_get(t, &f, NULL) &&
        !weft_nccl_choose(&f, coll, WEFT_NCCL_PLAN_BYTES, &ch, NULL))
        snprintf(buf, len, "nccl (%s, %s, %s)", weft_nccl_algo_name(ch.algo),
                 weft_proto_name(ch.proto), ch.plan);
    else if (strcmp(algo, "rings:auto") == 0 && !weft_nccl_fabric_get(t, &f, NULL))
        snprintf(buf, len, "rings:auto (%u)", f.channels);
    else
        snprintf(buf, len, "%s", algo);
}

/* The best of the first `count` of the baselines (nccl alone when 1). */
static weft_err best_of(const weft_topo *t, weft_coll coll, size_t count, weft_rat *best,
                        char *what, size_t len, char *over, size_t over_len)
{
    const char *all[64];
    size_t nall = cli_baseline_names(all, 64);
    const char *nccl_only[] = {"nccl"};
    const char *const *baselines = count == 1 ? nccl_only : all;
    count = count == 1 ? 1 : nall;
    bool found = false;
    size_t at = 0;
    if (over_len)
        over[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        weft_plan *q = NULL;
        weft_plan_cost c;
        weft_diag d;
        weft_err e = WEFT_EUNSUPPORTED;
        if (!weft_classic_supports(baselines[i], coll) ||
            (e = weft_synth_classic_limited(t, baselines[i], coll, (weft_rank){0},
                                            CLI_PLAN_MAX_OPS, &q, &d)) ||
            weft_plan_cost_get(q, t, &c, &d)) {
            if (e == WEFT_ELIMIT && at < over_len)
                at += (size_t)snprintf(over + at, over_len - at, "%s%s", at ? ", " : "",
                                       baselines[i]);
            weft_plan_free(q);
            continue;
        }
        weft_plan_free(q);
        if (found && weft_rat_cmp(c.algbw, *best) <= 0)
            continue;
        found = true;
        *best = c.algbw;
        cli_algo_label(t, baselines[i], coll, what, len);
    }
    return found ? WEFT_OK : WEFT_ENOENT;
}

weft_err cli_best_baseline(const weft_topo *t, weft_coll coll, weft_rat *best, char *what,
                           size_t len, char *over, size_t over_len)
{
    return best_of(t, coll, 0, best, what, len, over, over_len);
}

/* nccl alone (baselines[0]); false when it does not build. */
static bool nccl_baseline(const weft_topo *t, weft_coll coll, weft_rat *bw, char *what,
                          size_t len)
{
    return best_of(t, coll, 1, bw, what, len, NULL, 0) == WEFT_OK;
}

static void rat_text(weft_rat r, char *buf, size_t size)
{
    weft_rat_format(r, buf, size);
}

int cli_optimal_print(FILE *f, const weft_topo *t, const weft_optimal *o,
                      const weft_plan_cost *cost)
{
    char a[64], b[64];
    rat_text(o->bound, a, sizeof a);
    fprintf(f, "optimum      algbw %.3f GB/s (%s), the exact bound\n", weft_rat_to_double(o->bound),
            a);
    rat_text(o->algbw, b, sizeof b);
    fprintf(f, "reached      algbw %.3f GB/s (%s)%s\n", weft_rat_to_double(o->algbw), b,
            weft_rat_eq(o->algbw, o->bound) ? ", equal to the bound"
                                             : ", below the bound (trees per root forced)");
    if (o->method == WEFT_OPTIMAL_RAIL)
        fprintf(f, "method       %s (docs/optimal-scale.md)\n", o->structure_note);
    else
        fprintf(f, "method       packing: edge splitting and tree packing%s%s%s\n",
                o->structure_note[0] ? " (" : "", o->structure_note,
                o->structure_note[0] ? ")" : "");
    for (uint32_t i = 0; i < o->n_phases; i++) {
        const weft_optimal_phase *ph = &o->phase[i];
        rat_text(ph->U, a, sizeof a);
        fprintf(f, "trees        %s: k = %u per rank, U = %s (a link of b GB/s carries b*U "
                   "trees), %u distinct trees\n",
                weft_bound_coll_name(ph->coll), ph->k, a, ph->n_trees);
    }
    char what[96], over[128];
    weft_rat best;
    weft_err be = cli_best_baseline(t, o->coll, &best, what, sizeof what, over, sizeof over);
    if (over[0])
        fprintf(f, "baselines    %s left out: more than %u ops\n", over, CLI_PLAN_MAX_OPS);
    if (be != WEFT_OK) {
        fprintf(f, "vs baseline  none builds here\n");
    } else {
        rat_text(best, a, sizeof a);
        double x = weft_rat_to_double(best), y = weft_rat_to_double(cost->algbw);
        fprintf(f, "vs best      algbw %.3f GB/s (%s); optimal is %.2fx vs %s\n", x, a,
                x > 0 ? y / x : 0.0, what);
        if (strncmp(what, "nccl", 4) != 0 && nccl_baseline(t, o->coll, &best, what, sizeof what)) {
            rat_text(best, a, sizeof a);
            x = weft_rat_to_double(best);
            fprintf(f, "vs nccl      algbw %.3f GB/s (%s); optimal is %.2fx vs %s\n", x, a,
                    x > 0 ? y / x : 0.0, what);
        }
    }
    return CLI_EXIT_OK;
}

void cli_optimal_json(cli_json *j, const weft_optimal *o)
{
    cli_json_kv_double(j, "bound", weft_rat_to_double(o->bound));
    cli_json_kv_rat(j, "bound_exact", o->bound);
    cli_json_kv_string(j, "method", weft_optimal_method_name(o->method));
    if (o->structure_note[0])
        cli_json_kv_string(j, "structure_note", o->structure_note);
    cli_json_key(j, "phases");
    cli_json_begin_array(j);
    for (uint32_t i = 0; i < o->n_phases; i++) {
        const weft_optimal_phase *ph = &o->phase[i];
        cli_json_begin_object(j);
        cli_json_kv_string(j, "coll", weft_bound_coll_name(ph->coll));
        cli_json_kv_rat(j, "algbw_exact", ph->algbw);
        cli_json_kv_uint(j, "k", ph->k);
        cli_json_kv_rat(j, "U", ph->U);
        cli_json_kv_uint(j, "trees", ph->n_trees);
        cli_json_end_object(j);
    }
    cli_json_end_array(j);
}

static const char *const colours[] = {"red",    "blue",   "darkgreen", "orange", "purple",
                                      "brown",  "cyan4",  "magenta",   "gold3",  "navy"};
#define N_COLOURS (sizeof colours / sizeof *colours)

int cli_optimal_dot(FILE *f, const weft_topo *t, const weft_plan *p, const weft_optimal *o,
                    weft_rank root)
{
    if (root.v >= o->ranks) {
        cli_error("--root %u: the fabric has %u ranks", root.v, o->ranks);
        return CLI_EXIT_INPUT;
    }
    /* The drawn phase: the allgather one (the last), whose ops follow the
     * earlier phases' ops, group by group, edge by edge. */
    uint32_t ph = o->n_phases - 1, op = 0;
    for (uint32_t i = 0; i < ph; i++)
        for (uint32_t g = 0; g < o->phase[i].n_trees; g++)
            op += o->phase[i].trees[g].n_edges;
    const weft_optimal_phase *P = &o->phase[ph];
    fprintf(f, "digraph optimal {\n  label=\"%s trees of rank %u (k = %u)\";\n",
            weft_bound_coll_name(P->coll), root.v, P->k);
    for (uint32_t n = 0; n < weft_topo_num_nodes(t); n++) {
        weft_node_id id = {n};
        bool rank = weft_topo_node_kind(t, id) == WEFT_NODE_COMPUTE;
        fprintf(f, "  \"%s\" [shape=%s%s];\n", weft_topo_node_name(t, id), rank ? "ellipse" : "box",
                n == weft_topo_rank_node(t, root).v ? ",style=filled,fillcolor=yellow" : "");
    }
    for (uint32_t l = 0; l < weft_topo_num_links(t); l++) {
        weft_link_id id = {l};
        fprintf(f, "  \"%s\" -> \"%s\" [color=grey80];\n",
                weft_topo_node_name(t, weft_topo_link_src(t, id)),
                weft_topo_node_name(t, weft_topo_link_dst(t, id)));
    }
    uint32_t drawn = 0;
    for (uint32_t g = 0; g < P->n_trees; g++) {
        const weft_optimal_tree *tr = &P->trees[g];
        if (tr->root.v != root.v) {
            op += tr->n_edges;
            continue;
        }
        const char *c = colours[drawn++ % N_COLOURS];
        for (uint32_t e = 0; e < tr->n_edges; e++, op++) {
            /* An op without a route (the rail construction) is drawn rank
             * to rank; it takes the fabric's shortest paths. */
            if (weft_plan_op_num_paths(p, op) == 0)
                fprintf(f, "  \"%s\" -> \"%s\" [color=%s,penwidth=2,style=dashed];\n",
                        weft_topo_node_name(t, weft_topo_rank_node(t, (weft_rank){tr->from[e]})),
                        weft_topo_node_name(t, weft_topo_rank_node(t, (weft_rank){tr->to[e]})), c);
            for (uint32_t k = 0; k < weft_plan_op_num_paths(p, op); k++) {
                uint32_t len = weft_plan_path_len(p, op, k);
                for (uint32_t i = 0; i + 1 < len; i++)
                    fprintf(f, "  \"%s\" -> \"%s\" [color=%s,penwidth=2,label=\"x%u\"];\n",
                            weft_plan_path_node(p, op, k, i), weft_plan_path_node(p, op, k, i + 1),
                            c, tr->mult);
            }
        }
    }
    fprintf(f, "}\n");
    return CLI_EXIT_OK;
}
