/* Over 900 lines on purpose: one command's flags and printers. Its ranking
 * by simulation ("fastest at 1 GiB simulated") is weft_choose's
 * (weft/choose.h, through cli_sim_best_baseline); compare() prints the
 * per-link limit table, a yardstick of its own. */
/* weft plan SPEC --coll C [--algo A]: build a schedule, write it, and say
 * what it costs on the fabric (weft/synth.h builds, weft/plan.h costs; this
 * file reads flags and prints). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/fabric.h"
#include "cli/flagvals.h"
#include "cli/json.h"
#include "cli/outfile.h"
#include "cli/plan_file.h"
#include "cli/plan_optimal.h"
#include "cli/sim_algo.h"
#include "cli/sim_compare.h"
#include "cli/sparse_flags.h"
#include "cli/table.h"
#include "cli/traffic_file.h"
#include "weft/synth.h"

static const cli_opt plan_opts[] = {
    {"coll", 0, "C", "allgather, reducescatter, allreduce, broadcast, reduce or alltoall"},
    {"algo", 0, "A", "algorithm (default ring; direct for alltoall); see --list"},
    {"root", 0, "R", "root rank of broadcast and reduce (default 0)"},
    {"output", 'o', "FILE",
     "write the plan to FILE ('-': stdout, the summary then goes to stderr)"},
    {"format", 0, "F",
     "weft, json or msccl; default from -o's extension (.plan, .json, .xml), weft for '-'"},
    {"msccl-profile", 0, "P",
     "with MSCCL XML: executor (msccl-executor, RCCL; default) or msccl (docs/msccl.md)"},
    {"json", 0, NULL, "print the summary (with --list: the algorithms) as one JSON object"},
    {"compare", 0, NULL, "build every classic algorithm for C and compare them in a table"},
    {"list", 0, NULL, "list the algorithms and the collectives they build"},
    {"trees-per-root", 0, "K", "optimal: force K trees per rank (1 for MSCCL), best rate with K"},
    {"dot", 0, NULL, "optimal: print the trees of rank --root over the fabric as DOT"},
    {"max-ops", 0, "N",
     "largest plan to build, in ops (an op of c chunks counts c; default 2097152)"},
    {"traffic", 0, "FILE",
     "alltoall: an alltoallv plan for this traffic matrix (docs/traffic-format.md)"},
    CLI_SPARSE_OPTS,
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup plan_group = {"options", plan_opts, false};

static const cli_syntax plan_syntax = {
    .path = "weft plan",
    .args = "SPEC --coll C [--algo A] [--root R] [-o FILE] [--format weft|json|msccl]\n"
            "        [--msccl-profile executor|msccl] [--json] [--trees-per-root K] [--dot]\n"
            "        [--max-ops N] [--traffic FILE]\n"
            "        [--compress C] [--density D] [--skew zipf:S] [--elem-bytes B]",
    .about = "Builds a schedule (a plan) for a collective on a fabric and reports what it\n"
             "costs there: its ops, the longest chain of transfers (steps), its throughput\n"
             "limit (algbw = 1 / max over links of load / bandwidth, exact, where a link's\n"
             "load is the bytes it carries per byte of the collective on shortest paths),\n"
             "the busiest link, and time estimates (the shared-link estimate the runtime\n"
             "ranks plans by: ops that run together share links, never faster than the\n"
             "busiest link, plus the latency chain). -o writes the plan in the format its\n"
             "extension names: .plan weft text, .xml MSCCL XML, .json JSON; --format must\n"
             "agree with the extension, a file with another extension needs --format, and\n"
             "-o - writes weft text unless --format says otherwise. weft verify and weft\n"
             "sim --plan read weft text and MSCCL XML (by content), the runtime weft text.\n"
             "MSCCL steps name only their peer GPU: routes through relay GPUs or over\n"
             "several paths (the optimal all-to-all) are written as rank-to-rank hops, with\n"
             "chunks cut into equal pieces where a path carries part of one (docs/msccl.md);\n"
             "where exact shares cannot be cut so, they are rounded to multiples of 1/K\n"
             "keeping 99.9% of the limit, the loss printed (\"Rounded shares\").\n"
             "A skewed alltoallv plan is written in a padded layout (MSCCL chunks are\n"
             "equal): every peer a region of the largest block, in pieces of the blocks'\n"
             "gcd, only the data moved; weft plan reads the XML back, verifies it, and\n"
             "prints the padding (docs/msccl.md, \"Skewed matrices\").\n"
             "--compare builds every classic algorithm for the collective (rings:K as\n"
             "rings:auto, NCCL's channel count, and rings:4; nccl, what NCCL runs) and\n"
             "lists them side by side, with the best limit.\n"
             "--algo optimal builds the throughput-optimal tree packing (allgather,\n"
             "reducescatter, allreduce; docs/optimal.md): its limit equals the exact bound\n"
             "of weft bound; it also prints k, U, the trees and how it compares with the\n"
             "best baseline of --compare and with nccl. For alltoall it is built from the\n"
             "certified maximum concurrent flow (docs/bound.md): one op per pair routed\n"
             "over the flow's paths with exact shares, so its limit is the bound of weft\n"
             "bound --coll alltoall; with --traffic, the flow of the matrix's bound, so its\n"
             "time_exact is the bound's. On a fabric with an ocs node, --algo optimal\n"
             "--traffic builds a circuit schedule instead (docs/ocs.md): configurations\n"
             "of circuits with durations, chosen for the OCS's reconfig= delay, and what\n"
             "goes over the packet part; the plan carries the circuits and the output (and\n"
             "the JSON object circuits) the schedule's time beside the bound. Plans larger\n"
             "than --max-ops ops\n"
             "are not built, as in weft sim (a ring over N ranks has 2N(N-1)); --compare\n"
             "leaves them out and names them.\n"
             "--traffic FILE (--coll alltoall, classic algorithms or optimal, also with\n"
             "--compare, which lists the classic ones)\n"
             "builds an alltoallv plan: block (s, d) holds the matrix's bytes from rank s\n"
             "to rank d (direct leaves out empty pairs). Its own size S is the matrix's\n"
             "total / N (the mean bytes per rank): the limit is algbw at S, time_s and\n"
             "time_exact (JSON) the time that limit allows for the whole matrix, and the\n"
             "estimate is also given at S.\n"
             "--algo bfb builds breadth-first broadcast (allgather, reducescatter, allreduce)\n"
             "on fabrics of ranks joined directly (docs/algorithms.md): it takes the\n"
             "diameter's steps (twice for allreduce) and also prints its step-synchronous\n"
             "throughput (--json: steps, algbw_stepwise_exact).\n",
    .groups = {&plan_group, &cli_fabric_options},
    .pos_names = {"SPEC"},
    .min_pos = 0,
    .max_pos = 1,
};

/* The sizes the time estimate is printed for. */
static const struct {
    const char *name;
    double bytes;
} ab_sizes[] = {{"1K", 1024.0}, {"1M", 1048576.0}, {"64M", 67108864.0}, {"1G", 1073741824.0}};
#define N_AB (sizeof ab_sizes / sizeof *ab_sizes)

/* --format msccl: the options (the profile) and why writing failed. */
static weft_msccl_opts msccl_opts;
static weft_diag msccl_diag;

static weft_err write_msccl(const weft_plan *p, FILE *f)
{
    return weft_plan_write_msccl(p, &msccl_opts, f, &msccl_diag);
}

/* The writers of -o, indexed by cli_plan_format. Each writes a whole plan
 * to f. */
static weft_err (*const writers[])(const weft_plan *p, FILE *f) = {
    [CLI_PLAN_WEFT] = weft_plan_write,
    [CLI_PLAN_JSON] = weft_plan_write_json,
    [CLI_PLAN_MSCCL] = write_msccl,
};

static void print_time(FILE *f, double s)
{
    if (s < 1e-3)
        fprintf(f, "%.2f us", s * 1e6);
    else if (s < 1)
        fprintf(f, "%.2f ms", s * 1e3);
    else
        fprintf(f, "%.3f s", s);
}

/* --list --json: {"algorithms": [{"name", "colls": [...], "summary"}]},
 * every row of the schedule registry (weft_sched_get). */
static int list_algorithms_json(void)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_key(&j, "algorithms");
    cli_json_begin_array(&j);
    for (size_t i = 0; i < weft_sched_count(); i++) {
        weft_sched_info row;
        weft_sched_get(i, &row);
        const weft_sched_info *in = &row;
        cli_json_begin_object(&j);
        cli_json_kv_string(&j, "name", in->name);
        cli_json_key(&j, "colls");
        cli_json_begin_array(&j);
        for (int c = 0; c < WEFT__COLL_COUNT; c++)
            if (in->colls & (1u << c))
                cli_json_string(&j, weft_coll_name((weft_coll)c));
        cli_json_end_array(&j);
        cli_json_kv_string(&j, "summary", in->summary);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_end_object(&j);
    return cli_json_done(&j);
}

static int list_algorithms(void)
{
    cli_table tab;
    cli_table_init(&tab, 3);
    cli_table_cell(&tab, "algorithm");
    cli_table_cell(&tab, "collectives");
    cli_table_cell(&tab, "what it does");
    for (size_t i = 0; i < weft_sched_count(); i++) {
        weft_sched_info row;
        weft_sched_get(i, &row);
        const weft_sched_info *in = &row;
        char colls[128];
        size_t at = 0;
        colls[0] = '\0';
        for (int c = 0; c < WEFT__COLL_COUNT; c++) {
            if (in->colls & (1u << c))
                at += (size_t)snprintf(colls + at, sizeof colls - at, "%s%s", at ? "," : "",
                                       weft_coll_name((weft_coll)c));
        }
        cli_table_cell(&tab, "%s", in->name);
        cli_table_cell(&tab, "%s", colls);
        cli_table_cell(&tab, "%s", in->summary);
    }
    int rc = cli_table_print(&tab, stdout, "") ? CLI_EXIT_INPUT : CLI_EXIT_OK;
    cli_table_fini(&tab);
    return rc;
}

typedef struct plan_report {
    const char *algo;
    weft_plan_cost cost;
    double ab[N_AB];  /* the shared-link estimate (estimate()) */
    double ab0[N_AB]; /* the contention-free alpha-beta (JSON's alpha_beta_s) */
    double own;       /* an alltoallv plan's own size (0 otherwise) */
    double own_s;     /* the estimate at it */
} plan_report;

/* The time estimate of every column and line of weft plan: the
 * shared-link estimate (weft_plan_shared_time: links shared by the ops
 * that run together, never faster than the busiest link allows, plus the
 * latency chain) with the defaults below, the one the runtime ranks plans
 * by without a tuning table. The fabric's link latencies are its own. */
#define ESTIMATE_NOTE                                                                              \
    "links shared, busiest link, latency chain; the runtime's slices, as it ranks plans"

static weft_err estimate(const weft_plan *p, const weft_topo *t, double bytes, double *seconds,
                         weft_diag *d)
{
    weft_plan_shared_opts o;
    weft_plan_shared_opts_exec(&o, p, bytes);
    weft_plan_shared r;
    weft_err e = weft_plan_shared_time(p, t, bytes, &o, &r, d);
    if (!e)
        *seconds = r.seconds;
    return e;
}

static int measure(const weft_topo *t, const weft_plan *p, const char *algo, plan_report *r)
{
    weft_diag d;
    weft_diag_clear(&d);
    r->algo = algo;
    weft_err e = weft_plan_cost_get(p, t, &r->cost, &d);
    for (size_t i = 0; i < N_AB && !e; i++)
        if (!(e = estimate(p, t, ab_sizes[i].bytes, &r->ab[i], &d)))
            e = weft_plan_alpha_beta(p, t, ab_sizes[i].bytes, &r->ab0[i], &d);
    r->own = weft_plan_traffic_size(p);
    r->own_s = 0;
    if (!e && r->own > 0)
        e = estimate(p, t, r->own, &r->own_s, &d);
    return e ? cli_fail(e, &d) : CLI_EXIT_OK;
}

static void link_text(const weft_topo *t, weft_link_id l, char *buf, size_t size)
{
    snprintf(buf, size, "%s -> %s", weft_topo_node_name(t, weft_topo_link_src(t, l)),
             weft_topo_node_name(t, weft_topo_link_dst(t, l)));
}

/* The limit of a relayed plan x read back from its XML: no routes, every
 * hop on the fabric's shortest paths, as the runtime routes it. false when
 * it cannot be costed (no memory). */
static bool read_back_limit(const weft_topo *t, const weft_plan *x, weft_rat *algbw)
{
    weft_plan *bare = NULL;
    weft_plan_cost c;
    weft_diag d;
    bool ok = weft_plan_copy(x, &bare) == WEFT_OK;
    for (uint32_t i = 0; ok && i < weft_plan_num_ops(bare); i++)
        weft_plan_clear_route(bare, i);
    ok = ok && weft_plan_cost_get(bare, t, &c, &d) == WEFT_OK;
    if (ok)
        *algbw = c.algbw;
    weft_plan_free(bare);
    return ok;
}

/* Writes the padded program in memory, reads it back with weft's own
 * MSCCL reader and verifies it on the fabric against the padded matrix
 * (the padding is the matrix's 0-byte chunks, which need not arrive),
 * before anything is written: a program that does not verify is never
 * written (exit 1, the reason given). */
static int read_back_padded(const weft_topo *t, const weft_plan *padded,
                            const weft_msccl_opts *opts)
{
    weft_plan *back = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    char *xml = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&xml, &len);
    if (!f) {
        cli_error("cannot read the padded MSCCL program back: out of memory");
        return CLI_EXIT_INPUT;
    }
    weft_err e = weft_plan_write_msccl(padded, opts, f, &d);
    fclose(f);
    if (!e)
        e = weft_plan_msccl_parse(xml, len, "the padded MSCCL program", &back, &d);
    if (!e)
        e = weft_plan_set_traffic(back, weft_plan_traffic(padded), &d);
    if (!e)
        e = weft_plan_verify(back, t, &d);
    weft_plan_free(back);
    free(xml);
    return e ? cli_fail(e, &d) : CLI_EXIT_OK;
}

/* The padded layout of a skewed alltoallv plan (weft_plan_msccl_pad):
 * what the caller lays out and what the padding wastes. */
static void print_padded(FILE *f, const weft_plan *p, const weft_plan *x,
                         const weft_msccl_padding *pad)
{
    uint64_t waste = pad->padded_bytes - pad->data_bytes;
    fprintf(f,
            "msccl        padded layout (MSCCL chunks are equal): every peer a region of "
            "%llu bytes (the largest block) in pieces of %llu bytes%s; nchunksperloop %llu; "
            "%u ops became %u (runs of at most 71 pieces%s)\n",
            (unsigned long long)pad->block_bytes, (unsigned long long)pad->piece_bytes,
            pad->refine > 1 ? " (cut so that each path carries whole pieces)" : "",
            (unsigned long long)weft_plan_size_chunks(x), weft_plan_num_ops(p),
            weft_plan_num_ops(x), pad->relayed ? ", routes as rank-to-rank hops" : "");
    fprintf(f,
            "             buffers of %llu bytes per rank; padding %llu of %llu bytes "
            "(%.1f%%), never moved; the XML read back verifies against the padded matrix\n",
            (unsigned long long)(pad->padded_bytes / weft_plan_get_info(x)->nranks),
            (unsigned long long)waste, (unsigned long long)pad->padded_bytes,
            100.0 * (double)waste / (double)pad->padded_bytes);
}

/* The exact export of p hit a limit (d says which): where p splits ops
 * over paths, their shares are rounded to multiples of 1/K, keeping 99.9 %
 * of the limit (weft_plan_round_shares; K divides `divides` when it is not
 * 0), into *rounded. Otherwise d keeps its reason; when no K reaches
 * 99.9 %, d gets both reasons. */
static char exact_refused[WEFT_DIAG_MSG_SIZE]; /* why exact shares did not export */
static weft_err round_for_msccl(const weft_topo *t, const weft_plan *p, uint64_t divides,
                                weft_plan **rounded, weft_share_rounding *rs, weft_diag *d)
{
    bool split = false;
    for (uint32_t id = 0; id < weft_plan_num_ops(p) && !split; id++)
        split = weft_plan_op_num_paths(p, id) > 1;
    if (!split)
        return d->err;
    snprintf(exact_refused, sizeof exact_refused, "%s", d->msg);
    weft_diag d2;
    weft_diag_clear(&d2);
    weft_err e = weft_plan_round_shares(p, t, divides, rounded, rs, &d2);
    if (e) {
        char first[WEFT_DIAG_MSG_SIZE];
        snprintf(first, sizeof first, "%s", d->msg);
        weft_diag_set(d, e, "%.400s; %.500s", first, d2.msg);
    }
    return e;
}

/* An export of the rounded plan failed too: says so before its reason. */
static weft_err rounded_context(weft_err e, const weft_share_rounding *rs, weft_diag *d)
{
    if (e) {
        char why[WEFT_DIAG_MSG_SIZE];
        snprintf(why, sizeof why, "%s", d->msg);
        weft_diag_set(d, e,
                      "with the route shares rounded to multiples of 1/%u (%.4f%% of the "
                      "limit lost; exact shares: %.200s): %.400s",
                      rs->k, 100.0 * weft_rat_to_double(rs->loss), exact_refused, why);
    }
    return e;
}

/* The rounded route shares (round_for_msccl), when there are. */
static void print_rounded(FILE *f, const weft_share_rounding *rs)
{
    char a[64], b[64];
    weft_rat_format(rs->rounded_limit, a, sizeof a);
    weft_rat_format(rs->limit, b, sizeof b);
    fprintf(f,
            "msccl        route shares rounded to multiples of 1/%u in %u ops: limit %s GB/s "
            "of the plan's %s, %.4f%% lost (exact shares: %s)\n",
            rs->k, rs->ops, a, b, 100.0 * weft_rat_to_double(rs->loss), exact_refused);
}

/* What the MSCCL export changed of a plan: its routes as rank-to-rank hops
 * (relayed, weft_plan_relay_routes; may be NULL), the chunk refinement,
 * the padded layout (padded, when the blocks differ; may be NULL), and the
 * limit of x, the plan the XML reads back as. */
static void print_relayed(FILE *f, const weft_topo *t, const weft_plan *p, const weft_plan *relayed,
                          const weft_plan *x, const weft_msccl_padding *pad, const plan_report *r,
                          uint32_t refine)
{
    if (relayed) {
        fprintf(f,
                "msccl        routes as rank-to-rank hops (an MSCCL step names only its peer "
                "GPU): %u ops became %u",
                weft_plan_num_ops(p), weft_plan_num_ops(relayed));
        if (refine > 1)
            fprintf(f,
                    "; every chunk cut into %u equal pieces so that each path carries whole "
                    "chunks (MSCCL chunks are equal)",
                    refine);
        fprintf(f, "\n");
    }
    if (pad)
        print_padded(f, p, x, pad);
    weft_rat bw;
    if (read_back_limit(t, x, &bw)) {
        char ex[64];
        weft_rat_format(bw, ex, sizeof ex);
        fprintf(f,
                "             hops on shortest paths, as the XML reads back: algbw <= %s "
                "GB/s (%s)\n",
                ex,
                weft_rat_eq(bw, r->cost.algbw) ? "the same limit"
                                               : "below the plan's: the fabric's shortest "
                                                 "paths are not the flow's");
    }
}

static void print_human(FILE *f, const char *spec, const weft_topo *t, const weft_plan *p,
                        const plan_report *r)
{
    const weft_plan_info *in = weft_plan_get_info(p);
    char ex[64], load[64], bw[64], lt[300];
    fprintf(f, "plan         %s %s on %s (%u ranks", r->algo, weft_coll_name(in->coll), spec,
            in->nranks);
    if (weft_coll_has_root(in->coll))
        fprintf(f, ", root %u", in->root.v);
    fprintf(f, ")\n");
    fprintf(f, "ops          %u (%llu transfers between ranks), longest chain %u steps\n",
            weft_plan_num_ops(p), (unsigned long long)r->cost.transfers, r->cost.steps);
    const weft_traffic *tm = weft_plan_traffic(p);
    if (tm) {
        weft_traffic_stats st;
        weft_traffic_get_stats(tm, &st);
        char own[64];
        if (st.total % tm->ranks == 0)
            snprintf(own, sizeof own, "%llu", (unsigned long long)(st.total / tm->ranks));
        else
            snprintf(own, sizeof own, "%llu/%u", (unsigned long long)st.total, tm->ranks);
        fprintf(f,
                "chunks       alltoallv: %u x %u blocks of the traffic matrix, %u chunk%s "
                "each; size S = %s bytes per rank (total / N)\n",
                tm->ranks, tm->ranks, in->chunks, in->chunks == 1 ? "" : "s", own);
    } else
        fprintf(f, "chunks       the data is cut into %llu equal chunks\n",
                (unsigned long long)weft_plan_size_chunks(p));
    if (r->cost.has_busiest) {
        weft_rat_format(r->cost.algbw, ex, sizeof ex);
        weft_rat_format(r->cost.busiest_load, load, sizeof load);
        weft_rat_format_exact(weft_topo_link_bw(t, r->cost.busiest), bw, sizeof bw);
        link_text(t, r->cost.busiest, lt, sizeof lt);
        fprintf(f, "limit        algbw <= %.3f GB/s (%s)\n", weft_rat_to_double(r->cost.algbw), ex);
        fprintf(f, "busiest link %s (%s GB/s) carries %s of the data\n", lt, bw, load);
        if (tm)
            fprintf(f, "matrix time  >= %.6g us: S / algbw, the whole matrix at the limit\n",
                    r->own / weft_rat_to_double(r->cost.algbw) * 1e-3);
    } else {
        fprintf(f, "limit        no op crosses a link\n");
    }
    fprintf(f, "estimate    ");
    for (size_t i = 0; i < N_AB; i++) {
        fprintf(f, " %s: ", ab_sizes[i].name);
        print_time(f, r->ab[i]);
        fprintf(f, i + 1 < N_AB ? "," : " (" ESTIMATE_NOTE ")\n");
    }
    if (tm) {
        fprintf(f, "             at S (the matrix itself): ");
        print_time(f, r->own_s);
        fprintf(f, "\n");
    }
}

/* time_s and time_exact of an alltoallv plan: its own size over the limit,
 * S / algbw = total / (N * algbw) seconds (algbw in GB/s). */
static void json_matrix_time(cli_json *j, const weft_plan *p, const plan_report *r)
{
    const weft_traffic *tm = weft_plan_traffic(p);
    weft_traffic_stats st;
    weft_traffic_get_stats(tm, &st);
    cli_json_kv_double(j, "size", r->own);
    cli_json_kv_uint(j, "traffic_bytes", st.total);
    bool have = r->cost.has_busiest;
    weft_rat tx = weft_rat_int(0);
    bool exact =
        !have || (st.total <= INT64_MAX &&
                  !weft_rat_make((int64_t)st.total, (int64_t)tm->ranks * 1000000000, &tx) &&
                  !weft_rat_div(tx, r->cost.algbw, &tx));
    cli_json_kv_double(j, "time_s",
                       exact ? weft_rat_to_double(tx)
                             : r->own / weft_rat_to_double(r->cost.algbw) * 1e-9);
    cli_json_key(j, "time_exact");
    if (exact)
        cli_json_rat(j, tx);
    else
        cli_json_null(j);
    cli_json_kv_double(j, "estimate_at_size_s", r->own_s);
}

/* The circuit schedule of an OCS fabric (weft_synth_a2a_circuits). */
static void json_circuits(cli_json *j, const weft_circuit_sched *cs)
{
    cli_json_key(j, "circuits");
    cli_json_begin_object(j);
    cli_json_kv_uint(j, "configs", cs->configs);
    cli_json_kv_uint(j, "rounds", cs->rounds);
    cli_json_kv_string(j, "decomposition", cs->decomposition);
    cli_json_kv_uint(j, "candidates", cs->candidates);
    cli_json_kv_double(j, "fraction", cs->fraction);
    cli_json_key(j, "durations_s");
    cli_json_begin_array(j);
    for (uint32_t k = 0; k < cs->configs; k++)
        cli_json_double(j, cs->duration_s[k]);
    cli_json_end_array(j);
    cli_json_kv_double(j, "delay_s", cs->delay_s);
    cli_json_kv_double(j, "ocs_s", cs->ocs_s);
    cli_json_kv_double(j, "packet_s", cs->packet_s);
    cli_json_kv_double(j, "time_s", cs->time_s);
    cli_json_kv_double(j, "bound_s", cs->bound_s);
    cli_json_kv_double(j, "circuit_bytes", cs->circuit_bytes);
    cli_json_kv_double(j, "rerouted_bytes", cs->rerouted_bytes);
    cli_json_kv_uint(j, "multi_ocs_paths", cs->multi_paths);
    cli_json_end_object(j);
}

static void print_circuits(FILE *f, const weft_circuit_sched *cs)
{
    fprintf(f,
            "circuits     %u configuration%s of %u (%s rounds), %u schedules compared; "
            "reconfiguration delay %.6g s\n",
            cs->configs, cs->configs == 1 ? "" : "s", cs->rounds,
            strcmp(cs->decomposition, "bvn") == 0 ? "Birkhoff-von Neumann" : "Solstice threshold",
            cs->candidates, cs->delay_s);
    if (cs->configs) {
        fprintf(f, "durations   ");
        for (uint32_t k = 0; k < cs->configs && k < 8; k++)
            fprintf(f, " %.3f us", cs->duration_s[k] * 1e6);
        fprintf(f, "%s\n", cs->configs > 8 ? " ..." : "");
    }
    fprintf(f,
            "schedule     %.3f us: circuits %.3f us (with delays), packet part %.3f us; bound "
            "%.3f us (every OCS a switch)\n",
            cs->time_s * 1e6, cs->ocs_s * 1e6, cs->packet_s * 1e6, cs->bound_s * 1e6);
    fprintf(f, "bytes        %.0f on circuits, %.0f moved to the packet part\n", cs->circuit_bytes,
            cs->rerouted_bytes);
}

static int print_json(const weft_topo *t, const weft_plan *p, const plan_report *r,
                      const weft_optimal *opt, const char *traffic_path, const weft_bfb *bfb,
                      const weft_plan *xml, uint32_t refine, const weft_msccl_padding *pad,
                      const weft_share_rounding *rs, const weft_circuit_sched *cs)
{
    const weft_plan_info *in = weft_plan_get_info(p);
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_kv_uint(&j, "ranks", in->nranks);
    cli_json_kv_string(&j, "coll", weft_coll_name(in->coll));
    cli_json_kv_string(&j, "algo", r->algo);
    if (weft_coll_has_root(in->coll))
        cli_json_kv_uint(&j, "root", in->root.v);
    cli_json_kv_uint(&j, "ops", weft_plan_num_ops(p));
    cli_json_kv_uint(&j, "transfers", r->cost.transfers);
    /* bfb: the paper's T_L (D, 2D for allreduce), not the longest chain,
     * which serialised reduces into one slot lengthen. */
    cli_json_kv_uint(&j, "steps", bfb ? bfb->steps : r->cost.steps);
    cli_json_kv_uint(&j, "chunks", weft_plan_size_chunks(p));
    cli_json_kv_double(&j, "algbw", weft_rat_to_double(r->cost.algbw));
    cli_json_kv_rat(&j, "algbw_exact", r->cost.algbw);
    if (traffic_path) {
        cli_json_kv_string(&j, "traffic", traffic_path);
        json_matrix_time(&j, p, r);
    }
    if (bfb) {
        cli_json_kv_uint(&j, "chain_steps", r->cost.steps);
        cli_json_kv_uint(&j, "chunks_per_shard", bfb->chunks);
        cli_json_kv_double(&j, "algbw_stepwise", weft_rat_to_double(bfb->algbw_stepwise));
        cli_json_kv_rat(&j, "algbw_stepwise_exact", bfb->algbw_stepwise);
    }
    if (opt)
        cli_optimal_json(&j, opt);
    weft_rat back;
    if (xml && read_back_limit(t, xml, &back)) {
        /* The MSCCL export's relayed plan (print_relayed). */
        cli_json_key(&j, "msccl");
        cli_json_begin_object(&j);
        cli_json_kv_uint(&j, "ops", weft_plan_num_ops(xml));
        cli_json_kv_uint(&j, "chunk_pieces", refine);
        cli_json_kv_uint(&j, "nchunksperloop", weft_plan_size_chunks(xml));
        cli_json_kv_rat(&j, "algbw_read_back_exact", back);
        if (rs) {
            /* Shares rounded (print_rounded): K, the ops, both limits. */
            cli_json_key(&j, "rounded_shares");
            cli_json_begin_object(&j);
            cli_json_kv_uint(&j, "k", rs->k);
            cli_json_kv_uint(&j, "ops", rs->ops);
            cli_json_kv_rat(&j, "algbw_exact", rs->limit);
            cli_json_kv_rat(&j, "algbw_rounded_exact", rs->rounded_limit);
            cli_json_kv_rat(&j, "limit_loss_exact", rs->loss);
            cli_json_kv_string(&j, "exact_refused", exact_refused);
            cli_json_end_object(&j);
            cli_json_kv_double(&j, "limit_loss", weft_rat_to_double(rs->loss));
        }
        if (pad) {
            /* The padded layout (print_padded); the XML was read back and
             * verified before this is printed. */
            cli_json_key(&j, "padding");
            cli_json_begin_object(&j);
            cli_json_kv_uint(&j, "piece_bytes", pad->piece_bytes);
            cli_json_kv_uint(&j, "block_bytes", pad->block_bytes);
            cli_json_kv_uint(&j, "pieces_per_block", pad->pieces_per_block);
            cli_json_kv_uint(&j, "data_bytes", pad->data_bytes);
            cli_json_kv_uint(&j, "buffer_bytes", pad->padded_bytes);
            cli_json_kv_double(&j, "fraction",
                               (double)(pad->padded_bytes - pad->data_bytes) /
                                   (double)pad->padded_bytes);
            cli_json_kv_bool(&j, "read_back_verified", true);
            cli_json_end_object(&j);
        }
        cli_json_end_object(&j);
    }
    if (cs)
        json_circuits(&j, cs);
    cli_json_key(&j, "busiest_link");
    if (r->cost.has_busiest) {
        cli_json_begin_object(&j);
        cli_json_kv_string(&j, "src",
                           weft_topo_node_name(t, weft_topo_link_src(t, r->cost.busiest)));
        cli_json_kv_string(&j, "dst",
                           weft_topo_node_name(t, weft_topo_link_dst(t, r->cost.busiest)));
        cli_json_kv_rat(&j, "load", r->cost.busiest_load);
        cli_json_kv_rat(&j, "bw", weft_topo_link_bw(t, r->cost.busiest));
        cli_json_end_object(&j);
    } else {
        cli_json_null(&j);
    }
    cli_json_key(&j, "alpha_beta_s");
    cli_json_begin_object(&j);
    for (size_t i = 0; i < N_AB; i++)
        cli_json_kv_double(&j, ab_sizes[i].name, r->ab0[i]);
    cli_json_end_object(&j);
    cli_json_key(&j, "estimate_s"); /* what the human output prints */
    cli_json_begin_object(&j);
    for (size_t i = 0; i < N_AB; i++)
        cli_json_kv_double(&j, ab_sizes[i].name, r->ab[i]);
    cli_json_end_object(&j);
    cli_json_end_object(&j);
    return cli_json_finish(&j) ? CLI_EXIT_INPUT : CLI_EXIT_OK;
}

static int compare(const char *spec, const weft_topo *t, weft_coll coll, weft_rank root,
                   uint32_t max_ops, bool json, const weft_traffic *m, const char *traffic_path)
{
    cli_table tab;
    cli_json j;
    if (json) {
        cli_json_init(&j, stdout);
        cli_json_begin_object(&j);
        cli_json_kv_uint(&j, "ranks", weft_topo_num_ranks(t));
        cli_json_kv_string(&j, "coll", weft_coll_name(coll));
        if (traffic_path)
            cli_json_kv_string(&j, "traffic", traffic_path);
        cli_json_key(&j, "plans");
        cli_json_begin_array(&j);
    } else {
        printf("%s on %s (%u ranks)%s%s: classic algorithms\n", weft_coll_name(coll), spec,
               weft_topo_num_ranks(t), traffic_path ? ", traffic " : "",
               traffic_path ? traffic_path : "");
        cli_table_init(&tab, 6 + N_AB);
        for (size_t c = 1; c < 6 + N_AB; c++)
            cli_table_align_right(&tab, c);
        const char *heads[] = {"algorithm", "limit GB/s", "exact", "steps", "transfers", "ops"};
        for (size_t c = 0; c < 6; c++)
            cli_table_cell(&tab, "%s", heads[c]);
        for (size_t i = 0; i < N_AB; i++)
            cli_table_cell(&tab, "t(%s)", ab_sizes[i].name);
    }
    int rc = CLI_EXIT_OK;
    /* rings:K appears twice: as rings:auto (NCCL's channel count) and as
     * rings:4. */
    const char *names[64];
    size_t nn = cli_baseline_names(coll, m != NULL, names, 64), n_over = 0;
    char over[256] = "", best_label[64] = "";
    weft_rat best = weft_rat_int(0);
    bool have_best = false;
    for (size_t i = 0; i < nn && rc == CLI_EXIT_OK; i++) {
        const char *algo = names[i];
        weft_plan *p = NULL;
        weft_diag d;
        weft_err be = WEFT_EUNSUPPORTED;
        if (!weft_classic_supports(algo, coll) ||
            (be = m ? weft_synth_classic_traffic(t, algo, m, max_ops, &p, &d)
                    : cli_build_limited(t, algo, coll, root, max_ops, NULL, &p, NULL, &d))) {
            if (be == WEFT_ELIMIT && !json)
                n_over +=
                    (size_t)snprintf(over + n_over, n_over < sizeof over ? sizeof over - n_over : 0,
                                     "%s%s", n_over ? ", " : "", algo);
            continue; /* not for this collective or fabric (hier without hosts), or too big */
        }
        plan_report r;
        rc = measure(t, p, algo, &r);
        if (rc == CLI_EXIT_OK && (!have_best || weft_rat_cmp(r.cost.algbw, best) > 0)) {
            have_best = true;
            best = r.cost.algbw;
            cli_algo_label(t, algo, coll, best_label, sizeof best_label);
        }
        if (rc == CLI_EXIT_OK && json) {
            cli_json_begin_object(&j);
            cli_json_kv_string(&j, "algo", algo);
            cli_json_kv_double(&j, "algbw", weft_rat_to_double(r.cost.algbw));
            cli_json_kv_rat(&j, "algbw_exact", r.cost.algbw);
            cli_json_kv_uint(&j, "steps", r.cost.steps);
            cli_json_kv_uint(&j, "ops", weft_plan_num_ops(p));
            if (m)
                json_matrix_time(&j, p, &r);
            cli_json_end_object(&j);
        } else if (rc == CLI_EXIT_OK) {
            char ex[64], tbuf[32];
            weft_rat_format(r.cost.algbw, ex, sizeof ex);
            char label[64];
            cli_algo_label(t, algo, coll, label, sizeof label);
            cli_table_cell(&tab, "%s", label);
            cli_table_cell(&tab, "%.3f", weft_rat_to_double(r.cost.algbw));
            cli_table_cell(&tab, "%s", ex);
            cli_table_cell(&tab, "%u", r.cost.steps);
            cli_table_cell(&tab, "%llu", (unsigned long long)r.cost.transfers);
            cli_table_cell(&tab, "%u", weft_plan_num_ops(p));
            for (size_t k = 0; k < N_AB; k++) {
                double s = r.ab[k];
                if (s < 1e-3)
                    snprintf(tbuf, sizeof tbuf, "%.2f us", s * 1e6);
                else if (s < 1)
                    snprintf(tbuf, sizeof tbuf, "%.2f ms", s * 1e3);
                else
                    snprintf(tbuf, sizeof tbuf, "%.3f s", s);
                cli_table_cell(&tab, "%s", tbuf);
            }
        }
        weft_plan_free(p);
    }
    /* All-to-all is ranked against the exact bound (maximum concurrent
     * flow, weft bound --coll alltoall), or says why there is none. */
    bool a2a = coll == WEFT_COLL_ALLTOALL, have_bound = false;
    weft_rat bound = {0, 1};
    char why[sizeof((weft_diag *)0)->msg] = "";
    if (a2a && rc == CLI_EXIT_OK)
        have_bound = cli_a2a_bound_algbw(t, m, &bound, why, sizeof why);
    /* The fastest baseline simulated at 1 GiB in the fabric's default
     * model: the row weft sim --compare ranks first among the baselines
     * there, and weft plan --algo optimal's "vs fastest" (one ranking,
     * cli_sim_best_baseline). Sizes come from a matrix's own bytes, so
     * alltoallv is left to weft sim --compare --traffic. */
    cli_sim_best fastest;
    memset(&fastest, 0, sizeof fastest);
    weft_sim_opts so;
    weft_sim_opts_init(&so);
    so.model = weft_sim_model_default(t);
    if (!m && rc == CLI_EXIT_OK && weft_topo_num_ranks(t) <= CLI_PLAN_SIM_MAX_RANKS)
        cli_sim_best_baseline(t, coll, (uint64_t)WEFT_NCCL_PLAN_BYTES, &so, max_ops, &fastest);
    if (json) {
        cli_json_end_array(&j);
        if (fastest.have) {
            cli_json_key(&j, "fastest_simulated");
            cli_json_begin_object(&j);
            cli_json_kv_string(&j, "algo", fastest.name);
            cli_json_kv_string(&j, "label", fastest.algo);
            cli_json_kv_uint(&j, "size", (uint64_t)WEFT_NCCL_PLAN_BYTES);
            cli_json_kv_string(&j, "model", weft_sim_model_name(so.model));
            cli_json_kv_double(&j, "time_s", fastest.res.time_s);
            cli_json_end_object(&j);
        }
        if (a2a) {
            cli_json_key(&j, "bound");
            if (have_bound) {
                cli_json_begin_object(&j);
                cli_json_kv_double(&j, "algbw", weft_rat_to_double(bound));
                cli_json_kv_rat(&j, "algbw_exact", bound);
                if (have_best)
                    cli_json_kv_double(&j, "best_of_bound",
                                       weft_rat_to_double(best) / weft_rat_to_double(bound));
                cli_json_end_object(&j);
            } else {
                cli_json_null(&j);
                cli_json_kv_string(&j, "no_bound", why);
            }
        }
        cli_json_end_object(&j);
        return rc == CLI_EXIT_OK && cli_json_finish(&j) ? CLI_EXIT_INPUT : rc;
    }
    if (rc == CLI_EXIT_OK && cli_table_print(&tab, stdout, "  "))
        rc = CLI_EXIT_INPUT;
    cli_table_fini(&tab);
    if (rc == CLI_EXIT_OK && over[0])
        printf("left out: %s (more than %u ops, --max-ops)\n", over, max_ops);
    if (rc == CLI_EXIT_OK && have_best)
        printf("best limit: %s, algbw %.3f GB/s (the baseline weft plan --algo optimal is "
               "measured against)\n",
               best_label, weft_rat_to_double(best));
    if (rc == CLI_EXIT_OK && fastest.have)
        printf("fastest at 1 GiB simulated (model %s): %s, %.3f us (weft sim --compare ranks "
               "it first of the baselines)\n",
               weft_sim_model_name(so.model), fastest.algo, fastest.res.time_s * 1e6);
    if (rc == CLI_EXIT_OK && a2a && have_bound) {
        char ex[64];
        weft_rat_format(bound, ex, sizeof ex);
        printf("bound: algbw %.3f GB/s (%s, weft bound: maximum concurrent flow)",
               weft_rat_to_double(bound), ex);
        if (have_best)
            printf("; the best limit is %.1f%% of it",
                   100 * weft_rat_to_double(best) / weft_rat_to_double(bound));
        printf("\n");
    } else if (rc == CLI_EXIT_OK && a2a) {
        printf("bound: not available (%s)\n", why);
    }
    if (rc == CLI_EXIT_OK)
        printf("limit: throughput bound of the plan on shortest paths; t(S): shared-link "
               "estimate at size S (%s)\n",
               ESTIMATE_NOTE);
    return rc;
}

int cli_cmd_plan(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&plan_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    weft_topo *t = NULL;
    weft_plan *p = NULL, *xml_plan = NULL; /* xml_plan: p relayed for MSCCL */
    weft_plan *padded = NULL; /* xml_plan (or p) in the padded layout, for a skewed matrix */
    weft_msccl_padding pad;
    weft_plan *rounded = NULL; /* p with its shares rounded, where exact ones hit a limit */
    weft_share_rounding rounding = {0};
    weft_optimal opt;
    memset(&opt, 0, sizeof opt);
    weft_traffic matrix = {0};
    weft_circuit_sched csched;
    memset(&csched, 0, sizeof csched);
    bool is_circuits = false;
    if (cli_args_has(&a, "list")) {
        rc = cli_args_has(&a, "json") ? list_algorithms_json() : list_algorithms();
        goto done;
    }
    if (a.n_pos == 0) {
        rc = cli_usage_error(&plan_syntax, "missing SPEC");
        goto done;
    }
    const char *coll_text = cli_args_get(&a, "coll");
    weft_coll coll;
    if (!coll_text) {
        rc = cli_usage_error(&plan_syntax, "missing --coll");
        goto done;
    }
    if ((rc = cli_flag_coll(&plan_syntax, "--coll", coll_text, &coll)))
        goto done;
    const char *algo = cli_args_get(&a, "algo");
    if (algo && (rc = cli_flag_algo(&plan_syntax, "--algo", algo, true)))
        goto done;
    if (!algo)
        algo = coll == WEFT_COLL_ALLTOALL ? "direct" : "ring";
    weft_rank root = {0};
    const char *root_text = cli_args_get(&a, "root");
    if (root_text) {
        char *end;
        unsigned long v = strtoul(root_text, &end, 10);
        if (root_text[0] < '0' || root_text[0] > '9' || *end || v > UINT32_MAX) {
            rc = cli_usage_error(&plan_syntax,
                                 "bad --root '%s': expected a rank number (0 to ranks - 1)",
                                 root_text);
            goto done;
        }
        /* A root the collective has no use for would be silently ignored. */
        if (!weft_coll_has_root(coll) && !cli_args_has(&a, "dot")) {
            rc = cli_usage_error(&plan_syntax,
                                 "--root applies only to broadcast and reduce (and to --dot), not "
                                 "to %s",
                                 weft_coll_name(coll));
            goto done;
        }
        root.v = (uint32_t)v;
    }
    const char *fmt = cli_args_get(&a, "format");
    cli_plan_format fi = CLI_PLAN_WEFT;
    if (fmt && !cli_args_has(&a, "output")) {
        rc = cli_usage_error(&plan_syntax, "--format says how -o FILE is written; give -o FILE "
                                           "(or -o - for standard output)");
        goto done;
    }
    if ((rc = cli_plan_output_format(&plan_syntax, cli_args_get(&a, "output"), fmt, &fi)))
        goto done;
    uint32_t max_ops;
    const char *max_ops_text = cli_args_get(&a, "max-ops");
    if (!cli_max_ops_parse(max_ops_text, &max_ops)) {
        rc = cli_usage_error(&plan_syntax, "bad --max-ops '%s' (expected 1 .. %u)", max_ops_text,
                             WEFT_PLAN_MAX_OPS);
        goto done;
    }
    weft_msccl_opts_init(&msccl_opts);
    weft_diag_clear(&msccl_diag);
    const char *profile = cli_args_get(&a, "msccl-profile");
    if (profile && !weft_msccl_profile_parse(profile, &msccl_opts.profile)) {
        rc = cli_usage_error(&plan_syntax, "bad --msccl-profile '%s': expected executor or msccl",
                             profile);
        goto done;
    }
    if (profile && (!cli_args_has(&a, "output") || fi != CLI_PLAN_MSCCL)) {
        rc = cli_usage_error(&plan_syntax, "--msccl-profile applies only to MSCCL XML output "
                                           "(-o FILE.xml or --format msccl)");
        goto done;
    }
    weft_sparse_args sparse;
    if ((rc = cli_sparse_flags(&plan_syntax, &a, algo, &sparse)) != CLI_CONTINUE)
        goto done;
    rc = CLI_EXIT_OK;
    const char *traffic_path = cli_args_get(&a, "traffic");
    if (traffic_path && coll != WEFT_COLL_ALLTOALL) {
        rc = cli_usage_error(&plan_syntax,
                             "--traffic gives the bytes of an all-to-all; it needs "
                             "--coll alltoall, not %s",
                             weft_coll_name(coll));
        goto done;
    }
    rc = cli_load_fabric(&a, a.pos[0], &t);
    if (rc != CLI_EXIT_OK)
        goto done;
    if (traffic_path &&
        (rc = cli_traffic_load(traffic_path, a.pos[0], weft_topo_num_ranks(t), &matrix)))
        goto done;
    if (cli_args_has(&a, "compare")) {
        rc = compare(a.pos[0], t, coll, root, max_ops, cli_args_has(&a, "json"),
                     traffic_path ? &matrix : NULL, traffic_path);
        goto done;
    }
    weft_diag d;
    weft_diag_clear(&d);
    cli_context_object("building the plan");
    /* The tree-packing optimal (its report and options); alltoall's
     * optimal comes from the flow (cli_build_limited builds it). */
    bool is_optimal = strcmp(algo, "optimal") == 0 && coll != WEFT_COLL_ALLTOALL;
    bool is_bfb = strcmp(algo, "bfb") == 0;
    weft_bfb bfb;
    memset(&bfb, 0, sizeof bfb);
    uint32_t opt_forced = 0; /* --trees-per-root, 0 when not given */
    weft_err e;
    if (is_optimal) {
        weft_optimal_opts oo;
        weft_optimal_opts_init(&oo);
        const char *k_text = cli_args_get(&a, "trees-per-root");
        if (k_text) {
            char *end;
            unsigned long v = strtoul(k_text, &end, 10);
            if (!*k_text || *end || v == 0 || v > (1ul << 20)) {
                rc = cli_usage_error(
                    &plan_syntax,
                    "bad --trees-per-root '%s': expected an integer from 1 to 1048576", k_text);
                goto done;
            }
            oo.trees_per_root = (uint32_t)v;
        }
        opt_forced = oo.trees_per_root;
        e = cli_build_limited(t, algo, coll, root, max_ops, &oo, &p, &opt, &d);
    } else if (cli_args_has(&a, "trees-per-root") || cli_args_has(&a, "dot")) {
        rc = cli_usage_error(&plan_syntax, "--trees-per-root and --dot need --algo optimal");
        goto done;
    } else if (traffic_path && strcmp(algo, "optimal") == 0 && weft_topo_has_ocs(t)) {
        /* Optical circuit switches: the circuit schedule (docs/ocs.md). */
        is_circuits = true;
        e = weft_synth_a2a_circuits(t, &matrix, NULL, &p, &csched, &d);
    } else if (traffic_path) {
        e = cli_build_traffic(t, algo, &matrix, max_ops, &p, &d);
    } else if (cli_sparse_algo(algo)) {
        /* Built at 1 GiB; its op bytes scale with the size (weft/plan.h,
         * "Sized plans"). */
        e = cli_build_sparse(t, algo, coll, WEFT_NCCL_PLAN_BYTES, max_ops, &sparse, &p, &d);
    } else if (is_bfb) {
        weft_sched_args sa;
        weft_sched_args_init(&sa, coll);
        sa.max_ops = max_ops;
        sa.bfb_out = &bfb;
        e = weft_sched_build(t, algo, &sa, &p, &d);
    } else {
        e = cli_build_limited(t, algo, coll, root, max_ops, NULL, &p, NULL, &d);
    }
    if (e) {
        rc = cli_fail(e, &d);
        goto done;
    }
    if (is_optimal && cli_args_has(&a, "dot")) {
        rc = cli_optimal_dot(stdout, t, p, &opt, root);
        goto done;
    }
    plan_report r;
    cli_context_object("costing the plan");
    rc = measure(t, p, algo, &r);
    if (rc != CLI_EXIT_OK)
        goto done;
    cli_context_object("writing the plan");
    const char *path = cli_args_get(&a, "output");
    bool plan_to_stdout = path && strcmp(path, "-") == 0;
    /* MSCCL steps name a peer GPU, not links: a plan routed over several
     * paths or through relay GPUs (the optimal all-to-all) is exported
     * with its routes as rank-to-rank hops (weft_plan_relay_routes), its
     * chunks refined where a path's share is not whole. */
    uint32_t refine = 1;
    if (path && fi == CLI_PLAN_MSCCL && weft_plan_msccl_needs_padding(p)) {
        /* A skewed matrix: MSCCL's chunks are equal, so the blocks are
         * padded to the largest and relayed in pieces (docs/msccl.md); a
         * limit is said here, before anything is written. */
        e = weft_plan_msccl_pad(p, t, &padded, &pad, &d);
        if (e == WEFT_ELIMIT && pad.piece_bytes &&
            (e = round_for_msccl(t, p, pad.piece_bytes, &rounded, &rounding, &d)) == WEFT_OK)
            e = rounded_context(weft_plan_msccl_pad(rounded, t, &padded, &pad, &d), &rounding, &d);
        if (e) {
            rc = cli_fail(e, &d);
            goto done;
        }
        refine = pad.refine;
        if ((rc = read_back_padded(t, padded, &msccl_opts)) != CLI_EXIT_OK)
            goto done;
    } else if (path && fi == CLI_PLAN_MSCCL) {
        weft_plan *relayed = NULL;
        e = weft_plan_relay_routes(p, t, &relayed, &refine, &d);
        if (e == WEFT_ELIMIT && (e = round_for_msccl(t, p, 0, &rounded, &rounding, &d)) == WEFT_OK)
            e = rounded_context(weft_plan_relay_routes(rounded, t, &relayed, &refine, &d),
                                &rounding, &d);
        if (e) {
            rc = cli_fail(e, &d);
            goto done;
        }
        xml_plan = relayed; /* NULL: nothing to relay, p is exported as it is */
        if (!relayed && rounded)
            xml_plan = rounded, rounded = NULL;
    }
    if (path) {
        cli_out o;
        rc = cli_out_open(&o, plan_to_stdout ? NULL : path);
        if (rc != CLI_EXIT_OK)
            goto done;
        /* A failed write leaves its errno (ENOSPC) with the stream's error
         * flag; it is taken before closing, which may set errno again. */
        errno = 0;
        bool ok = writers[fi](padded ? padded : xml_plan ? xml_plan : p, o.f) == WEFT_OK;
        int write_err = !ok && ferror(o.f) ? (errno ? errno : EIO) : 0;
        rc = cli_out_close(&o, ok);
        if (rc == CLI_EXIT_OK && !ok) {
            if (msccl_diag.err) {
                rc = cli_fail(msccl_diag.err, &msccl_diag); /* a limit or inexpressible dep */
                if (is_optimal && msccl_diag.err == WEFT_ELIMIT)
                    cli_optimal_msccl_hint(t, &opt, opt_forced, &msccl_opts);
            } else {
                if (write_err)
                    cli_error("cannot write the plan to '%s': %s", path, strerror(write_err));
                else
                    cli_error("cannot write the plan to '%s'", path);
                rc = CLI_EXIT_INPUT;
            }
        }
        if (rc != CLI_EXIT_OK)
            goto done;
    }
    if (cli_args_has(&a, "json") && !plan_to_stdout)
        rc = print_json(t, p, &r, is_optimal ? &opt : NULL, traffic_path, is_bfb ? &bfb : NULL,
                        padded ? padded : xml_plan, refine, padded ? &pad : NULL,
                        rounding.k ? &rounding : NULL, is_circuits ? &csched : NULL);
    else {
        FILE *f = plan_to_stdout ? stderr : stdout;
        print_human(f, a.pos[0], t, p, &r);
        if (rounding.k)
            print_rounded(f, &rounding);
        if (xml_plan || padded)
            print_relayed(f, t, p, xml_plan, padded ? padded : xml_plan, padded ? &pad : NULL, &r,
                          refine);
        if (is_optimal)
            rc = cli_optimal_print(f, t, &opt, &r.cost, p);
        if (is_circuits)
            print_circuits(f, &csched);
        if (is_bfb) {
            char ex[64];
            weft_rat_format(bfb.algbw_stepwise, ex, sizeof ex);
            fprintf(f,
                    "bfb          %u steps (T_L), %u chunks per shard; steps not overlapped: "
                    "algbw %.3f GB/s (%s)\n",
                    bfb.steps, bfb.chunks, weft_rat_to_double(bfb.algbw_stepwise), ex);
        }
    }
done:
    weft_circuit_sched_fini(&csched);
    weft_traffic_free(&matrix);
    weft_optimal_fini(&opt);
    weft_plan_free(padded);
    weft_plan_free(xml_plan);
    weft_plan_free(rounded);
    weft_plan_free(p);
    weft_topo_free(t);
    cli_args_fini(&a);
    return rc;
}
