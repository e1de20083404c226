/* `weft plan --algo optimal`: summary, JSON and DOT (cli/plan_optimal.h). */
#include "cli/plan_optimal.h"
#include "cli/sim_algo.h"
#include "cli/sim_compare.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/dot.h"

size_t cli_baseline_names(weft_coll coll, bool matrix, const char **names, size_t cap)
{
    const char *all[64];
    size_t n = 0, nall = weft_sched_candidates(coll, matrix, WEFT_SCHED_FOR_COMPARE, all, 64);
    for (size_t i = 0; i < nall && n < cap; i++)
        if (strcmp(all[i], "optimal") != 0)
            names[n++] = all[i];
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
    size_t nall = cli_baseline_names(coll, false, all, 64);
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
            (e = weft_synth_classic_limited(t, baselines[i], coll, (weft_rank){0}, CLI_PLAN_MAX_OPS,
                                            &q, &d)) ||
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
static bool nccl_baseline(const weft_topo *t, weft_coll coll, weft_rat *bw, char *what, size_t len)
{
    return best_of(t, coll, 1, bw, what, len, NULL, 0) == WEFT_OK;
}

static void rat_text(weft_rat r, char *buf, size_t size)
{
    weft_rat_format(r, buf, size);
}

/* "vs fastest" (cli_optimal_print): the optimal plan p and the fastest
 * baseline simulated at 1 GiB in the fabric's default model, the ranking
 * weft sim --compare makes there. */
static void print_fastest(FILE *f, const weft_topo *t, const weft_plan *p, weft_coll coll)
{
    weft_sim_opts so;
    weft_sim_opts_init(&so);
    so.model = weft_sim_model_default(t);
    uint64_t size = (uint64_t)WEFT_NCCL_PLAN_BYTES;
    cli_sim_best bb;
    weft_sim_result r;
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_topo_num_ranks(t) > CLI_PLAN_SIM_MAX_RANKS) {
        fprintf(f,
                "vs fastest   not simulated here (more than %u ranks): weft sim --compare "
                "--size 1G ranks the baselines\n",
                CLI_PLAN_SIM_MAX_RANKS);
        return;
    }
    cli_sim_best_baseline(t, coll, size, &so, CLI_SIM_MAX_OPS, &bb);
    if (!bb.have || weft_sim_plan(t, p, size, &so, &r, &d) || !(r.time_s > 0))
        return;
    fprintf(f,
            "vs fastest   at 1 GiB simulated (model %s): optimal %.3f us, %s %.3f us; "
            "optimal is %.2fx vs %s\n",
            weft_sim_model_name(so.model), r.time_s * 1e6, bb.algo, bb.res.time_s * 1e6,
            bb.res.time_s / r.time_s, bb.algo);
}

int cli_optimal_print(FILE *f, const weft_topo *t, const weft_optimal *o,
                      const weft_plan_cost *cost, const weft_plan *p)
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
        fprintf(f,
                "trees        %s: k = %u per rank, U = %s (a link of b GB/s carries b*U "
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
    print_fastest(f, t, p, o->coll);
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

/* Whether p exports under mo (written to memory, then dropped). */
static bool exports(const weft_plan *p, const weft_msccl_opts *mo)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return false;
    weft_diag d;
    weft_diag_clear(&d);
    bool ok = weft_plan_write_msccl(p, mo, f, &d) == WEFT_OK;
    fclose(f);
    free(buf);
    return ok;
}

void cli_optimal_msccl_hint(const weft_topo *t, const weft_optimal *o, uint32_t forced,
                            const weft_msccl_opts *mo)
{
    const char *profile = weft_msccl_profile_name(mo->profile);
    uint32_t kmax = 0;
    for (uint32_t i = 0; i < o->n_phases; i++)
        kmax = o->phase[i].k > kmax ? o->phase[i].k : kmax;
    bool one_fits = false;
    if (kmax > 1 && forced == 0) {
        weft_optimal_opts oo;
        weft_optimal_opts_init(&oo);
        oo.trees_per_root = 1;
        weft_plan *p = NULL;
        weft_optimal one;
        memset(&one, 0, sizeof one);
        weft_diag d;
        weft_diag_clear(&d);
        if (weft_synth_optimal(t, o->coll, &oo, &p, &one, &d) == WEFT_OK && exports(p, mo)) {
            char a[64];
            weft_rat_format(one.algbw, a, sizeof a);
            double x = weft_rat_to_double(one.algbw), b = weft_rat_to_double(o->bound);
            fprintf(stderr,
                    "weft: the optimum needs %u trees per rank here; --trees-per-root 1 exports "
                    "(%u ops, algbw %.3f GB/s (%s), %.1f%% of the bound)\n",
                    kmax, weft_plan_num_ops(p), x, a, b > 0 ? 100 * x / b : 0.0);
            one_fits = true;
        }
        weft_plan_free(p);
        weft_optimal_fini(&one);
    }
    if (one_fits)
        return;
    const char *why = forced == 1 || kmax <= 1 ? "one tree per rank is already too long for"
                                               : "one tree per rank does not fit either in";
    if (mo->profile == WEFT_MSCCL_MSCCL)
        fprintf(stderr, "weft: %s the %s profile; try a classic algorithm (--algo ring)\n", why,
                profile);
    else
        fprintf(stderr,
                "weft: %s the %s profile; try --msccl-profile msccl (%u steps per threadblock) "
                "or a classic algorithm (--algo ring)\n",
                why, profile, weft_msccl_max_steps(WEFT_MSCCL_MSCCL));
}

static const char *const colours[] = {"red",   "blue",  "darkgreen", "orange", "purple",
                                      "brown", "cyan4", "magenta",   "gold3",  "navy"};
#define N_COLOURS (sizeof colours / sizeof *colours)

/* The fabric under the trees: hosts as frames (cluster_hostN) holding
 * their nodes, the other nodes after them, the root rank highlighted, and
 * every link in light grey (two opposite links once, with two heads). */
static bool optimal_fabric(FILE *f, const weft_topo *t, weft_rank root)
{
    uint32_t *order, *start, nh = weft_topo_num_hosts(t), nn = weft_topo_num_nodes(t);
    if (!cli_dot_group_by_host(t, &order, &start))
        return false;
    weft_node_id rn = weft_topo_rank_node(t, root);
    for (uint32_t h = 0; h <= nh; h++) {
        const char *indent = h < nh ? "    " : "  ";
        if (h < nh) {
            char label[300];
            snprintf(label, sizeof label, "host %s", weft_topo_host_name(t, (int32_t)h));
            fprintf(f, "  subgraph cluster_host%u {\n    label=", h);
            cli_dot_string(f, label);
            fputs(";\n    style=\"rounded,filled\"; fillcolor=\"#f5f5f5\"; color=\"#aaaaaa\";\n",
                  f);
        }
        for (uint32_t i = h < nh ? start[h] : 0; i < (h < nh ? start[h + 1] : nn); i++) {
            weft_node_id n = {h < nh ? order[i] : i};
            if (h == nh && weft_topo_node_host(t, n) != WEFT_NO_HOST)
                continue;
            fputs(indent, f);
            cli_dot_string(f, weft_topo_node_name(t, n));
            if (n.v == rn.v)
                fputs(
                    " [shape=box, style=\"rounded,filled,bold\", fillcolor=yellow, penwidth=2];\n",
                    f);
            else
                fprintf(f, " [%s];\n", cli_dot_kind_style(weft_topo_node_kind(t, n)));
        }
        if (h < nh)
            fputs("  }\n", f);
    }
    free(order);
    free(start);
    for (uint32_t l = 0; l < weft_topo_num_links(t); l++) {
        weft_link_id id = {l}, back;
        weft_node_id src = weft_topo_link_src(t, id), dst = weft_topo_link_dst(t, id);
        bool pair = weft_topo_find_link(t, dst, src, &back);
        if (pair && src.v > dst.v)
            continue;
        fputs("  ", f);
        cli_dot_string(f, weft_topo_node_name(t, src));
        fputs(" -> ", f);
        cli_dot_string(f, weft_topo_node_name(t, dst));
        fputs(pair ? " [color=grey80, dir=both];\n" : " [color=grey80];\n", f);
    }
    return true;
}

/* The legend: what the root, each colour, the labels and the line styles
 * mean; one row per group of identical trees drawn (colours repeat after
 * N_COLOURS groups, which the last row says). */
static void optimal_legend(FILE *f, const weft_topo *t, const weft_optimal_phase *P, weft_rank root,
                           bool dashed)
{
    fputs("  subgraph cluster_legend {\n    label=\"legend\"; style=\"rounded\"; "
          "color=\"#aaaaaa\";\n    \"@legend\" [shape=plaintext, label=<<table border=\"0\" "
          "cellborder=\"0\" cellspacing=\"2\">\n",
          f);
    fprintf(f,
            "      <tr><td bgcolor=\"yellow\" width=\"24\"> </td><td align=\"left\">root: "
            "rank %u (",
            root.v);
    for (const char *c = weft_topo_node_name(t, weft_topo_rank_node(t, root)); *c; c++) {
        if (*c == '<' || *c == '>' || *c == '&')
            fprintf(f, "&#%d;", *c);
        else
            fputc(*c, f);
    }
    fputs(")</td></tr>\n", f);
    uint32_t g = 0, drawn = 0;
    for (; g < P->n_trees; g++) {
        const weft_optimal_tree *tr = &P->trees[g];
        if (tr->root.v != root.v)
            continue;
        if (drawn == N_COLOURS)
            break;
        fprintf(f,
                "      <tr><td bgcolor=\"%s\" width=\"24\"> </td><td align=\"left\">tree "
                "group %u: %u edges, %u identical tree%s (edges labelled x%u)</td></tr>\n",
                colours[drawn], drawn + 1, tr->n_edges, tr->mult, tr->mult == 1 ? "" : "s",
                tr->mult);
        drawn++;
    }
    uint32_t more = 0;
    for (; g < P->n_trees; g++)
        more += P->trees[g].root.v == root.v;
    if (more)
        fprintf(f,
                "      <tr><td> </td><td align=\"left\">%u more groups, colours repeated in "
                "this order</td></tr>\n",
                more);
    fputs("      <tr><td bgcolor=\"grey80\" width=\"24\"> </td><td align=\"left\">a link of the "
          "fabric</td></tr>\n",
          f);
    if (dashed)
        fputs("      <tr><td>- - -</td><td align=\"left\">rank to rank, over the fabric's "
              "shortest paths</td></tr>\n",
              f);
    fputs("    </table>>];\n  }\n", f);
}

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
    fprintf(f,
            "digraph optimal {\n  graph [fontname=\"Helvetica\", fontsize=11, labelloc=t, "
            "label=\"%s trees of rank %u (k = %u)\", newrank=true, nodesep=0.3, ranksep=0.7];\n"
            "  node [fontname=\"Helvetica\", fontsize=10, margin=\"0.08,0.04\"];\n"
            "  edge [fontname=\"Helvetica\", fontsize=8, arrowsize=0.5];\n",
            weft_bound_coll_name(P->coll), root.v, P->k);
    if (!optimal_fabric(f, t, root)) {
        cli_error("out of memory");
        return CLI_EXIT_INPUT;
    }
    uint32_t drawn = 0;
    bool dashed = false;
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
            if (weft_plan_op_num_paths(p, op) == 0) {
                dashed = true;
                fprintf(f,
                        "  \"%s\" -> \"%s\" [color=%s, penwidth=2, style=dashed, label=\"x%u\"];\n",
                        weft_topo_node_name(t, weft_topo_rank_node(t, (weft_rank){tr->from[e]})),
                        weft_topo_node_name(t, weft_topo_rank_node(t, (weft_rank){tr->to[e]})), c,
                        tr->mult);
            }
            for (uint32_t k = 0; k < weft_plan_op_num_paths(p, op); k++) {
                uint32_t len = weft_plan_path_len(p, op, k);
                for (uint32_t i = 0; i + 1 < len; i++)
                    fprintf(f, "  \"%s\" -> \"%s\" [color=%s, penwidth=2, label=\"x%u\"];\n",
                            weft_plan_path_node(p, op, k, i), weft_plan_path_node(p, op, k, i + 1),
                            c, tr->mult);
            }
        }
    }
    optimal_legend(f, t, P, root, dashed);
    fprintf(f, "}\n");
    return CLI_EXIT_OK;
}
