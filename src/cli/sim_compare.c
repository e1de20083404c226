/* weft sim --compare. See sim_compare.h. */
#include "cli/sim_compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/size_text.h"
#include "cli/cli.h"
#include "cli/fabric.h"
#include "cli/json.h"
#include "cli/sim_algo.h"
#include "cli/sim_plot.h"
#include "cli/table.h"
#include "weft/choose.h"
#include "weft/synth.h"

typedef weft_choice candidate;

/* The bound: algbw in GB/s (exact and as a double), or why there is none. */
typedef struct bound_row {
    bool have;
    weft_rat algbw;
    double gbps;
    char why[sizeof((weft_diag *)0)->msg];
} bound_row;

void cli_sim_link_name(const weft_topo *t, weft_link_id l, char *buf, size_t len)
{
    snprintf(buf, len, "%s -> %s", weft_topo_node_name(t, weft_topo_link_src(t, l)),
             weft_topo_node_name(t, weft_topo_link_dst(t, l)));
}

bool cli_a2a_bound_algbw(const weft_topo *t, const weft_traffic *m, weft_rat *algbw, char *why,
                         size_t len)
{
    weft_a2a_bound ab;
    memset(&ab, 0, sizeof ab);
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_a2a_bound_compute(t, m, NULL, &ab, &d)) {
        snprintf(why, len, "%s", d.msg);
        weft_a2a_bound_fini(&ab);
        return false;
    }
    weft_err e = WEFT_OK;
    const char *text = m ? ab.time_exact : ab.algbw_exact;
    size_t used = 0;
    weft_rat v = {0, 1};
    if (!text || weft_rat_parse(text, strlen(text), &v, &used) || used != strlen(text))
        e = WEFT_EOVERFLOW;
    if (!e && m) {
        /* algbw = (total / N) / time, time in seconds, GB/s = 1e9 B/s. */
        uint64_t total = 0;
        for (size_t q = 0; q < (size_t)m->ranks * m->ranks; q++)
            total += m->bytes[q];
        weft_rat own, giga, t9;
        e = total > INT64_MAX ? WEFT_EOVERFLOW : weft_rat_make((int64_t)total, m->ranks, &own);
        if (!e)
            e = weft_rat_make(1000000000, 1, &giga);
        if (!e)
            e = weft_rat_mul(v, giga, &t9);
        if (!e)
            e = weft_rat_div(own, t9, &v);
    }
    if (e)
        snprintf(why, len, "the exact bound (%s) does not fit a 64-bit fraction",
                 text ? text : "?");
    else
        *algbw = v;
    weft_a2a_bound_fini(&ab);
    return !e;
}

static void compute_bound(const weft_topo *t, weft_coll coll, const weft_traffic *m, bound_row *b)
{
    weft_bound_coll bc;
    memset(b, 0, sizeof *b);
    if (coll == WEFT_COLL_ALLTOALL) {
        if (cli_a2a_bound_algbw(t, m, &b->algbw, b->why, sizeof b->why)) {
            b->have = true;
            b->gbps = weft_rat_to_double(b->algbw);
        }
        return;
    }
    if (!cli_sim_bound_coll(coll, &bc)) {
        snprintf(b->why, sizeof b->why,
                 "weft bound covers allgather, reducescatter and allreduce, not %s",
                 weft_coll_name(coll));
        return;
    }
    weft_bound bd;
    memset(&bd, 0, sizeof bd);
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_bound_compute(t, bc, NULL, &bd, &d)) {
        snprintf(b->why, sizeof b->why, "%s", d.msg);
        return;
    }
    b->have = true;
    b->algbw = bd.algbw;
    b->gbps = weft_rat_to_double(bd.algbw);
    weft_bound_fini(&bd);
}

/* Indices of the simulated candidates at size index s, fastest first. */
static size_t sorted(const candidate *c, size_t n, size_t s, size_t *idx)
{
    weft_ranking r = {WEFT_COLL_ALLREDUCE, s + 1, n, 0, (weft_choice *)c};
    return weft_ranking_order(&r, s, idx);
}

/* "optimal is 1.60x vs nccl (ring, Simple, rings:16)": the optimal plan's
 * time against the fastest other algorithm at size index s (idx[0..m)
 * sorted); nothing when either is missing. */
static void print_advantage(const candidate *c, const size_t *idx, size_t m, size_t s)
{
    size_t opt = m, base = m, nccl = m;
    for (size_t k = 0; k < m; k++) {
        if (strcmp(c[idx[k]].name, "optimal") == 0)
            opt = opt == m ? k : opt;
        else
            base = base == m ? k : base;
        if (strcmp(c[idx[k]].name, "nccl") == 0)
            nccl = k;
    }
    if (opt == m || base == m)
        return;
    const weft_sim_result *o = &c[idx[opt]].res[s], *b = &c[idx[base]].res[s];
    printf("optimal is %.2fx vs %s, the fastest baseline",
           o->time_s > 0 ? b->time_s / o->time_s : 0.0, c[idx[base]].label[s]);
    if (nccl != m && nccl != base)
        printf("; %.2fx vs %s", o->time_s > 0 ? c[idx[nccl]].res[s].time_s / o->time_s : 0.0,
               c[idx[nccl]].label[s]);
    printf("\n");
}

static void print_tables(const char *spec, const weft_topo *t, weft_coll coll,
                         const uint64_t *sizes, size_t nsizes, const weft_sim_opts *o,
                         const candidate *c, size_t n, const bound_row *b, size_t *idx)
{
    double factor = weft_sim_busbw_factor(coll, weft_topo_num_ranks(t));
    for (size_t s = 0; s < nsizes; s++) {
        char st[64];
        weft__size_text(sizes[s], st, sizeof st);
        char mt[160];
        cli_sim_model_text(o, mt, sizeof mt);
        printf("%s%s on %s (%u ranks), size %s, %s\n", s ? "\n" : "", weft_coll_name(coll), spec,
               weft_topo_num_ranks(t), st, mt);
        cli_table tab;
        cli_table_init(&tab, 7);
        for (size_t k = 0; k < 6; k++)
            if (k != 1) /* the algorithm's name reads left to right */
                cli_table_align_right(&tab, k);
        const char *heads[] = {
            "#",        "algorithm",   "time (us)", "algbw (GB/s)", "busbw (GB/s)",
            "of bound", "busiest link"};
        for (size_t k = 0; k < 7; k++)
            cli_table_cell(&tab, "%s", heads[k]);
        if (b->have) {
            double time = (double)sizes[s] / (b->gbps * 1e9);
            char ex[64];
            weft_rat_format(b->algbw, ex, sizeof ex);
            cli_table_cell(&tab, "%s", "");
            cli_table_cell(&tab, "%s", "bound");
            cli_table_cell(&tab, "%.3f", time * 1e6);
            cli_table_cell(&tab, "%.3f", b->gbps);
            cli_table_cell(&tab, "%.3f", b->gbps * factor);
            cli_table_cell(&tab, "%s", "100.0%");
            cli_table_cell(&tab, "(exact: algbw %s GB/s)", ex);
        }
        size_t m = sorted(c, n, s, idx);
        for (size_t k = 0; k < m; k++) {
            const weft_sim_result *r = &c[idx[k]].res[s];
            cli_table_cell(&tab, "%zu", k + 1);
            cli_table_cell(&tab, "%s", c[idx[k]].label[s]);
            cli_table_cell(&tab, "%.3f", r->time_s * 1e6);
            cli_table_cell(&tab, "%.3f", r->algbw_gbps);
            cli_table_cell(&tab, "%.3f", r->busbw_gbps);
            if (b->have)
                cli_table_cell(&tab, "%.1f%%", 100 * r->algbw_gbps / b->gbps);
            else
                cli_table_cell(&tab, "%s", "-");
            if (r->n_busiest > 0) {
                char ln[2 * WEFT_TOPO_NAME_MAX + 8];
                cli_sim_link_name(t, r->busiest[0].link, ln, sizeof ln);
                cli_table_cell(&tab, "%s %.1f%%", ln, 100 * r->busiest[0].util);
            } else {
                cli_table_cell(&tab, "%s", "-");
            }
        }
        cli_table_print(&tab, stdout, "  ");
        cli_table_fini(&tab);
        print_advantage(c, idx, m, s);
    }
    if (!b->have)
        printf("no bound: %s\n", b->why);
    bool over = false;
    for (size_t i = 0; b->have && i < n; i++)
        for (size_t s = 0; c[i].res && s < nsizes; s++)
            over = over || (c[i].res[s].algbw_gbps > b->gbps &&
                            (c[i].innet || strncmp(c[i].label[s], "nccl (nvls", 10) == 0 ||
                             strncmp(c[i].label[s], "nccl (collnet", 13) == 0));
    if (over)
        printf("rows over 100%% of the bound reduce in the switch: the bound counts the data "
               "ranks send one another, and a switch that reduces moves less (docs/sim.md, "
               "\"In-network reduction\")\n");
    if (weft_topo_has_ocs(t)) {
        bool circuits = false;
        for (size_t i = 0; i < n; i++)
            circuits = circuits || (c[i].res && strcmp(c[i].name, "optimal") == 0 &&
                                    strstr(c[i].label[0], "circuits"));
        printf(circuits ? "optimal runs the circuit schedule (docs/ocs.md); the other plans "
                          "carry no circuits and cross each OCS as a packet switch, as weft "
                          "bound does\n"
                        : "no plan carries circuits (a circuit schedule needs --coll alltoall "
                          "--traffic FILE): each crosses every OCS as a packet switch, as weft "
                          "bound does\n");
    }
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        if (c[i].res)
            continue;
        if (!any)
            printf("skipped:\n");
        any = true;
        printf("  %-12s %s\n", c[i].name, c[i].why);
    }
}

static void print_json(const char *spec, const weft_topo *t, weft_coll coll, const uint64_t *sizes,
                       size_t nsizes, const weft_sim_opts *o, const candidate *c, size_t n,
                       const bound_row *b, size_t *idx)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_kv_string(&j, "fabric", spec);
    cli_json_kv_uint(&j, "ranks", weft_topo_num_ranks(t));
    cli_json_kv_string(&j, "coll", weft_coll_name(coll));
    cli_json_kv_string(&j, "model", weft_sim_model_name(o->model));
    cli_json_kv_uint(&j, "slices", o->slices);
    cli_json_kv_double(&j, "alpha_s", o->alpha_s);
    cli_json_kv_bool(&j, "cut_through", o->cut_through);
    /* The fastest algorithm at the last size, under the keys every weft
     * sim --json has. */
    size_t m = sorted(c, n, nsizes - 1, idx);
    if (m > 0) {
        const weft_sim_result *best = &c[idx[0]].res[nsizes - 1];
        cli_json_kv_string(&j, "algo", c[idx[0]].name);
        cli_json_kv_uint(&j, "size", best->size);
        cli_json_kv_double(&j, "time_s", best->time_s);
        cli_json_kv_double(&j, "algbw", best->algbw_gbps);
        cli_json_kv_double(&j, "busbw", best->busbw_gbps);
    }
    cli_json_key(&j, "bound");
    if (b->have) {
        cli_json_begin_object(&j);
        cli_json_kv_double(&j, "algbw", b->gbps);
        cli_json_kv_rat(&j, "algbw_exact", b->algbw);
        cli_json_kv_double(&j, "busbw",
                           b->gbps * weft_sim_busbw_factor(coll, weft_topo_num_ranks(t)));
        cli_json_end_object(&j);
    } else {
        cli_json_null(&j);
        cli_json_kv_string(&j, "bound_missing", b->why);
    }
    cli_json_key(&j, "sizes");
    cli_json_begin_array(&j);
    for (size_t s = 0; s < nsizes; s++) {
        cli_json_begin_object(&j);
        cli_json_kv_uint(&j, "size", sizes[s]);
        if (b->have)
            cli_json_kv_double(&j, "bound_time_s", (double)sizes[s] / (b->gbps * 1e9));
        cli_json_key(&j, "results");
        cli_json_begin_array(&j);
        m = sorted(c, n, s, idx);
        for (size_t k = 0; k < m; k++) {
            const weft_sim_result *r = &c[idx[k]].res[s];
            cli_json_begin_object(&j);
            cli_json_kv_string(&j, "algo", c[idx[k]].name);
            if (strcmp(c[idx[k]].name, c[idx[k]].label[s]) != 0)
                cli_json_kv_string(&j, "runs", c[idx[k]].label[s]);
            cli_json_kv_double(&j, "time_s", r->time_s);
            cli_json_kv_double(&j, "algbw", r->algbw_gbps);
            cli_json_kv_double(&j, "busbw", r->busbw_gbps);
            if (b->have)
                cli_json_kv_double(&j, "of_bound", r->algbw_gbps / b->gbps);
            cli_json_key(&j, "busiest");
            cli_json_begin_array(&j);
            for (uint32_t l = 0; l < r->n_busiest; l++) {
                char ln[2 * WEFT_TOPO_NAME_MAX + 8];
                cli_sim_link_name(t, r->busiest[l].link, ln, sizeof ln);
                cli_json_begin_object(&j);
                cli_json_kv_string(&j, "link", ln);
                cli_json_kv_uint(&j, "alike", r->busiest[l].count);
                cli_json_kv_double(&j, "bytes", r->busiest[l].bytes);
                cli_json_kv_double(&j, "util", r->busiest[l].util);
                cli_json_end_object(&j);
            }
            cli_json_end_array(&j);
            cli_json_end_object(&j);
        }
        cli_json_end_array(&j);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_key(&j, "skipped");
    cli_json_begin_array(&j);
    for (size_t i = 0; i < n; i++) {
        if (c[i].res)
            continue;
        cli_json_begin_object(&j);
        cli_json_kv_string(&j, "algo", c[i].name);
        cli_json_kv_string(&j, "reason", c[i].why);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_end_object(&j);
    cli_json_finish(&j);
}

/* One row per (size, algorithm), the bound first as rank 0. */
static void print_csv(const weft_topo *t, weft_coll coll, const uint64_t *sizes, size_t nsizes,
                      const candidate *c, size_t n, const bound_row *b, size_t *idx)
{
    double factor = weft_sim_busbw_factor(coll, weft_topo_num_ranks(t));
    printf("size,rank,algo,time_s,algbw_gbps,busbw_gbps,of_bound\n");
    for (size_t s = 0; s < nsizes; s++) {
        if (b->have)
            printf("%llu,0,bound,%.17g,%.17g,%.17g,1\n", (unsigned long long)sizes[s],
                   (double)sizes[s] / (b->gbps * 1e9), b->gbps, b->gbps * factor);
        size_t m = sorted(c, n, s, idx);
        for (size_t k = 0; k < m; k++) {
            const weft_sim_result *r = &c[idx[k]].res[s];
            printf("%llu,%zu,%s,%.17g,%.17g,%.17g,", (unsigned long long)sizes[s], k + 1,
                   c[idx[k]].name, r->time_s, r->algbw_gbps, r->busbw_gbps);
            if (b->have)
                printf("%.17g\n", r->algbw_gbps / b->gbps);
            else
                printf("\n");
        }
    }
}

/* The plot of every simulated candidate, in listing order. */
static int plot_candidates(const char *path, const char *spec, const weft_topo *t, weft_coll coll,
                           const uint64_t *sizes, size_t nsizes, const candidate *c, size_t n,
                           const bound_row *b)
{
    cli_sim_plot_algo *algos = calloc(n ? n : 1, sizeof *algos);
    if (!algos)
        return cli_fail(WEFT_ENOMEM, NULL);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (c[i].res)
            algos[m++] = (cli_sim_plot_algo){c[i].name, c[i].res};
    int rc = cli_sim_plot(path, spec, t, coll, sizes, nsizes, algos, m, b->have ? &b->gbps : NULL);
    free(algos);
    return rc;
}

static int compare(const char *spec, const weft_topo *t, weft_coll coll, const weft_traffic *m,
                   const uint64_t *sizes, size_t nsizes, const weft_sim_opts *o, uint32_t max_ops,
                   cli_sim_format fmt, const char *plot, cli_progress *pr);

int cli_sim_compare(const char *spec, const weft_topo *t, weft_coll coll, const uint64_t *sizes,
                    size_t nsizes, const weft_sim_opts *o, uint32_t max_ops, cli_sim_format fmt,
                    const char *plot, cli_progress *pr)
{
    return compare(spec, t, coll, NULL, sizes, nsizes, o, max_ops, fmt, plot, pr);
}

int cli_sim_compare_traffic(const char *spec, const weft_topo *t, const weft_traffic *m,
                            const uint64_t *sizes, size_t nsizes, const weft_sim_opts *o,
                            uint32_t max_ops, cli_sim_format fmt, const char *plot,
                            cli_progress *pr)
{
    return compare(spec, t, WEFT_COLL_ALLTOALL, m, sizes, nsizes, o, max_ops, fmt, plot, pr);
}

/* weft_choose's progress, on weft sim's progress line. */
static void on_progress(void *arg, const char *what)
{
    cli_progress_set((cli_progress *)arg, "sim --compare: %s", what);
}

/* The ranking of weft sim --compare (and of its best plan): weft_choose
 * with the --max-ops limit named. */
static weft_err rank(const weft_topo *t, weft_coll coll, const weft_traffic *m,
                     const uint64_t *sizes, size_t nsizes, const weft_sim_opts *o, uint32_t max_ops,
                     cli_progress *pr, bool innet, bool baselines, const char *const *names,
                     size_t n_names, weft_ranking *r, weft_diag *d)
{
    weft_choose_opts co;
    weft_choose_opts_init(&co, t);
    co.sim = *o;
    co.innet = innet;
    co.baselines = baselines;
    co.names = names;
    co.n_names = n_names;
    co.matrix = m;
    co.max_ops = max_ops;
    co.max_ops_flag = "--max-ops";
    co.progress = pr ? on_progress : NULL;
    co.progress_arg = pr;
    return weft_choose(t, coll, sizes, nsizes, &co, r, d);
}

static int compare(const char *spec, const weft_topo *t, weft_coll coll, const weft_traffic *m,
                   const uint64_t *sizes, size_t nsizes, const weft_sim_opts *o, uint32_t max_ops,
                   cli_sim_format fmt, const char *plot, cli_progress *pr)
{
    bound_row b;
    cli_progress_set(pr, "sim --compare: the bound");
    compute_bound(t, coll, m, &b);
    weft_ranking r;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = rank(t, coll, m, sizes, nsizes, o, max_ops, pr, true, false, NULL, 0, &r, &d);
    cli_progress_stop(pr);
    if (e)
        return cli_fail(e, &d);
    candidate *c = r.c;
    size_t n = r.n;
    size_t *idx = calloc(n ? n : 1, sizeof *idx);
    if (!idx) {
        weft_ranking_fini(&r);
        return cli_fail(WEFT_ENOMEM, NULL);
    }
    int rc = CLI_EXIT_OK;
    if (r.simulated == 0) {
        cli_error("sim --compare: no algorithm builds %s on %s", weft_coll_name(coll), spec);
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, "  %s: %s\n", c[i].name, c[i].why);
        rc = CLI_EXIT_INPUT;
    } else if (plot && (rc = plot_candidates(plot, spec, t, coll, sizes, nsizes, c, n, &b))) {
        /* the plot's failure is reported; nothing is printed */
    } else if (fmt == CLI_SIM_JSON) {
        print_json(spec, t, coll, sizes, nsizes, o, c, n, &b, idx);
    } else if (fmt == CLI_SIM_CSV) {
        print_csv(t, coll, sizes, nsizes, c, n, &b, idx);
    } else {
        print_tables(spec, t, coll, sizes, nsizes, o, c, n, &b, idx);
    }
    weft_ranking_fini(&r);
    free(idx);
    return rc;
}

/* cli_sim_best_plan, or with baselines only, every plan candidate but
 * optimal (cli_sim_best_baseline). */
static void best_plan(const weft_topo *t, weft_coll coll, const weft_traffic *m, uint64_t size,
                      const weft_sim_opts *o, uint32_t max_ops, cli_progress *pr, bool baselines,
                      cli_sim_best *out)
{
    memset(out, 0, sizeof *out);
    /* On a fabric with optical circuit switches a plan that carries no
     * circuits cannot run as simulated (it crosses each OCS as a packet
     * switch, which it is not): an all-to-all there runs the circuit
     * schedule only (docs/ocs.md), of the matrix or, given a size, of the
     * uniform one (size / N to every rank, size rounded down to a multiple
     * of N). Other collectives have no circuit schedule: their plans keep
     * the relaxation of `weft bound` and say so (out->ocs_relaxed). */
    static const char *const only_optimal[] = {"optimal"};
    const char *const *names = NULL;
    size_t n_names = 0;
    weft_traffic uniform = {0};
    bool own_matrix = false;
    if (weft_topo_has_ocs(t)) {
        if (coll == WEFT_COLL_ALLTOALL) {
            uint32_t ranks = weft_topo_num_ranks(t);
            if (!m && size >= ranks &&
                weft_traffic_uniform(ranks, size - size % ranks, &uniform, NULL) == WEFT_OK) {
                m = &uniform;
                own_matrix = true;
            }
            names = only_optimal;
            n_names = 1;
        } else {
            out->ocs_relaxed = true;
        }
    }
    bound_row b;
    /* The uniform all-to-all's bound from its symmetric flow, not the
     * matrix's per-source LP: the same optimum, far faster. */
    compute_bound(t, coll, own_matrix ? NULL : m, &b);
    if (b.have) {
        out->have_bound = true;
        out->bound_algbw = b.algbw;
        out->bound_time_s = b.gbps > 0 ? (double)size / (b.gbps * 1e9) : 0;
    }
    weft_ranking r;
    weft_diag d;
    weft_diag_clear(&d);
    /* Plans only: the in-network algorithms are NCCL's, not weft's plans. */
    if (rank(t, coll, m, &size, 1, o, max_ops, pr, false, baselines, names, n_names, &r, &d)) {
        snprintf(out->why, sizeof out->why, "%.500s", d.msg);
    } else {
        out->tried = r.n;
        for (size_t i = 0; i < r.n; i++) {
            if (r.c[i].res)
                continue;
            out->skipped++;
            if (!out->why[0])
                snprintf(out->why, sizeof out->why, "%s: %.400s", r.c[i].name, r.c[i].why);
        }
        const weft_choice *best = weft_ranking_best(&r, 0);
        if (best) {
            out->have = true;
            out->res = best->res[0];
            out->res.n_busiest = 0;
            snprintf(out->algo, sizeof out->algo, "%s", best->label[0]);
            snprintf(out->name, sizeof out->name, "%s", best->name);
        }
        weft_ranking_fini(&r);
    }
    if (own_matrix)
        weft_traffic_free(&uniform);
}

void cli_sim_best_plan(const weft_topo *t, weft_coll coll, const weft_traffic *m, uint64_t size,
                       const weft_sim_opts *o, uint32_t max_ops, cli_progress *pr,
                       cli_sim_best *out)
{
    best_plan(t, coll, m, size, o, max_ops, pr, false, out);
}

void cli_sim_best_baseline(const weft_topo *t, weft_coll coll, uint64_t size,
                           const weft_sim_opts *o, uint32_t max_ops, cli_sim_best *out)
{
    cli_progress quiet;
    memset(&quiet, 0, sizeof quiet);
    best_plan(t, coll, NULL, size, o, max_ops, &quiet, true, out);
}
