/* weft sim SPEC (--plan FILE | --algo A --coll C | --coll C --compare)
 * --size S [--json | --csv]: simulated time, algbw, busbw and busiest links
 * of a collective (weft/sim.h computes, sim_algo.c builds what is
 * simulated, sim_compare.c compares; this file reads flags and prints). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/size_text.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/fabric.h"
#include "cli/flagvals.h"
#include "cli/json.h"
#include "cli/nccl_force.h"
#include "cli/outfile.h"
#include "cli/plan_file.h"
#include "cli/progress.h"
#include "cli/sim_algo.h"
#include "cli/sim_compare.h"
#include "cli/sim_fabrics.h"
#include "cli/sim_plot.h"
#include "cli/sim_sequence.h"
#include "cli/sizes.h"
#include "cli/sparse_flags.h"
#include "cli/table.h"
#include "cli/traffic_file.h"
#include "weft/protocol.h"
#include "weft/sim.h"
#include "weft/synth.h"
#include "weft/topo.h"

static const cli_opt sim_opts[] = {
    {"plan", 0, "FILE", "simulate this plan, weft text or MSCCL XML (verified against the fabric)"},
    {"algo", 0, "A",
     "or an algorithm: any of weft plan --list (the schedule registry), or one\nthat reduces in "
     "the switch where NCCL runs it: nvls, nvls_tree,\ncollnet_direct, collnet_chain (docs/sim.md, "
     "\"In-network reduction\")"},
    {"coll", 0, "C", "with --algo or --compare: the collective"},
    {"compare", 0, NULL, "or every algorithm and optimal, ranked under the bound"},
    {"compare-fabrics", 0, "A,B,...",
     "instead of SPEC: the best plan on each fabric with the\n"
     "bound, $ and W of its network, sorted by time"},
    {"cost", 0, "FILE",
     "with --compare-fabrics: $ and W per part over the defaults (docs/cost.md)"},
    {"size", 0, "S",
     "bytes such as 64K, 1.5G, 1GiB, or a sweep MIN:MAX:xF (required, but for\n"
     "--traffic and alltoallv plans)"},
    {"traffic", 0, "FILE",
     "alltoall: simulate this traffic matrix (its bytes are the size); A,B,...: each in order"},
    {"model", 0, "M",
     "fluid, runtime or gpu: how the plan is executed (default: gpu when the\n"
     "fabric's GPUs name their arch=, else runtime; docs/sim.md)"},
    {"proto", 0, "P", "gpu model: LL, LL128 or Simple at every size instead of NCCL's choice"},
    CLI_NCCL_FORCE_OPTS,
    {"slice-bytes", 0, "B",
     "cut each chunk into slices of B bytes (1 to 32 of them) instead of\n"
     "the model's"},
    {"alpha", 0, "T",
     "fluid model: per-transfer start overhead, with a unit (5us,\n"
     "0.5ms; 0 needs none); default 0"},
    {"cut-through", 0, NULL, "fluid model: ops forward data as it arrives (infinite slices)"},
    {"slices", 0, "P", "deprecated (fluid model: P slices at every size); use --slice-bytes"},
    {"max-ops", 0, "N",
     "largest plan to build or simulate, in ops (an op of c chunks counts c; default 2097152)"},
    {"back-to-back", 0, NULL,
     "fabrics with shaped links (burst=): one of many calls run back to back\n"
     "(each token bucket as the call before left it), not after an idle moment"},
    {"no-symmetry", 0, NULL, "simulate every transfer instead of one per class (slower)"},
    {"trace", 0, "FILE",
     "write a Chrome/Perfetto trace of every size: a track per rank and link,\n"
     "and with --compute a rank's charged compute ops on its \"compute\" track"},
    {"plot", 0, "FILE", "write busbw against size as an SVG plot, the bound as a line"},
    {"json", 0, NULL, "print one JSON object instead of the table"},
    {"csv", 0, NULL, "print CSV rows instead of the table"},
    CLI_SPARSE_OPTS,
    {"compute", 0, "P",
     "quant-2shot, hier-quant, sparse-*: charge the compute ops the plan places\n"
     "(hash, aggregate, compress, decompress, fill) at processor P's rates:\n"
     "cpu (measured: weft's bench_sparse_kernels and bench_compress); volta,\n"
     "ampere, hopper, blackwell (model: roofline, the kernels' HBM bytes at\n"
     "the GPU's HBM bandwidth; quantizers only); or none (default: compute\n"
     "takes no time); docs/compression.md"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup sim_group = {"options", sim_opts, false};

static const cli_syntax sim_syntax = {
    .path = "weft sim",
    .args =
        "SPEC (--plan FILE | --algo A --coll C | --coll C --compare) (--size S | --traffic FILE)\n"
        "        | --compare-fabrics A,B,... --coll C (--size S | --traffic FILE) [--cost FILE]\n"
        "        [--model fluid|runtime|gpu] [--proto P] [--slice-bytes B] [--alpha T]\n"
        "        [--nccl-algo A] [--nccl-proto P] [--nccl-buffsize B]\n"
        "        [--cut-through] [--back-to-back] [--max-ops N] [--json | --csv] [--trace FILE]\n"
        "        [--plot FILE.svg] [--compress C] [--density D] [--skew zipf:S]\n"
        "        [--elem-bytes B] [--compute none|cpu|volta|ampere|hopper|blackwell]",
    .about = "Simulates a collective on a fabric, flow by flow: links are shared max-min\n"
             "fairly, every transfer pays its start overhead, its route's latency and its\n"
             "bytes at the rate it gets. Prints the time, algbw = size / time and busbw\n"
             "(nccl-tests factors) per size, and the five busiest links of the last size.\n"
             "The model says how the plan is executed, and every output names it:\n"
             "  gpu      as NCCL runs it: per size the fastest of the protocols NCCL\n"
             "           enables (LL, LL128, Simple, each simulated; --proto forces one;\n"
             "           --algo nccl runs the one NCCL's own estimate picks), tuned for\n"
             "           the communicator the plan spans (its ranks and hosts), its share\n"
             "           of link bandwidth, launch and per-hop latency, links inside a box\n"
             "           at NCCL's per-link figure (A100 NVLink: 20 of 25 GB/s), data\n"
             "           forwarded as it arrives (default on fabrics with arch=);\n"
             "  runtime  as weft's executor runs it: slices of 256 KiB (1 to 32 per chunk),\n"
             "           45 us per slice message, store and forward per slice (default\n"
             "           elsewhere); the compressed and sparse rows (quant-2shot,\n"
             "           hier-quant, sparse-*) move each message whole, as weft's\n"
             "           runtime runs them (one message per peer and phase): their\n"
             "           plans are marked so, also when saved and read with --plan;\n"
             "  fluid    the idealised flow model, with --alpha, --slices and --cut-through\n"
             "           as given (0, 1, off); any of those flags selects it. In an alltoallv\n"
             "           plan it shares links in proportion to bytes (a schedule pacing each\n"
             "           transfer at its planned rate); gpu and runtime share per flow.\n"
             "--size 1K:1G:x4 sweeps sizes from 1K to 1G by factors of 4. K, M, G (and\n"
             "KiB, MiB, GiB) are 2^10, 2^20, 2^30 as in nccl-tests, KB, MB, GB 10^3, 10^6,\n"
             "10^9; a fraction must give whole bytes (1.5G).\n"
             "--nccl-algo, --nccl-proto and --nccl-buffsize force --algo nccl's choice as\n"
             "NCCL_ALGO, NCCL_PROTO and NCCL_BUFFSIZE force NCCL's: per size NCCL's fastest\n"
             "algorithm and protocol among those left (a forced ring or tree runs NCCL's\n"
             "rings:C or dbtree on its C channels; docs/sim.md).\n"
             "--algo ring is the same ring as weft plan --algo ring (simulated on symmetry\n"
             "classes, fast at scale); --algo optimal the throughput-optimal plan.\n"
             "--compare simulates every algorithm that builds C on the fabric, and the\n"
             "optimal plan, at every size: one table per size, sorted by time, with the\n"
             "exact bound (weft bound) as the first row and skipped algorithms with the\n"
             "reason; for alltoall also flash:auto, the fastest of flash:1, 2, 4 and 8 at\n"
             "each size (blocks cut into that many chunks). In the fluid model tree plans need "
             "pipelining to approach the bound\n"
             "(--slice-bytes 64K), or --cut-through: an op that forwards or reduces what a\n"
             "dep delivered streams it as it arrives (plans only: --algo ring then\n"
             "simulates the ring plan op by op, as the gpu model always does).\n"
             "Links shaped by a token bucket (burst= peak= in the .topo, as tc-tbf) pass\n"
             "a full bucket at their peak: plans start with full buckets, or with\n"
             "--back-to-back as the previous of many calls in a row left them (as weft\n"
             "perf times its iterations); --algo ring then simulates the ring plan.\n"
             "Plans larger than --max-ops ops are not built (a ring over N ranks has\n"
             "2N(N-1)): --compare lists them as skipped; --algo ring alone needs no plan;\n"
             "a larger --plan FILE is refused with the same message.\n"
             "--plot FILE.svg draws busbw against size (log scale) for the algorithm, or\n"
             "for every algorithm with --compare, and the bound's busbw as a labelled\n"
             "dash-dotted line; FILE must end in .svg (weft writes SVG only).\n"
             "--traffic FILE (--coll alltoall with --algo or --compare, or an alltoall\n"
             "--plan) simulates an alltoallv: block (s, d) holds the matrix's bytes from\n"
             "rank s to rank d, so --size is not given (both are a usage error); the size\n"
             "reported, algbw's S, is the matrix's total / N (the mean bytes per rank),\n"
             "rounded to whole bytes.\n"
             "A --plan that carries a traffic matrix needs no --size either. --compare\n"
             "--traffic ranks every classic all-to-all schedule's alltoallv plan (not nccl,\n"
             "which has none) and optimal's (from the matrix bound's flow) at that one size;\n"
             "on a fabric with an OCS optimal is the circuit schedule (docs/ocs.md), shown as\n"
             "\"optimal (circuits: K configs)\", and the other plans cross each OCS as a\n"
             "switch.\n"
             "--compare-fabrics A,B,... takes fabric specs in place of SPEC (a comma inside a\n"
             "preset's parameters stays with it: a new spec starts at a piece with ':' or\n"
             "'(', a preset name or a file), all of the same number of ranks, and prints for\n"
             "each the fastest plan --compare finds (at one size, or the --traffic matrix\n"
             "for alltoall), the exact bound, and the $ and W of its network (weft topo\n"
             "cost; --cost FILE overrides the defaults of docs/cost.md), in total and per\n"
             "rank, sorted by time. On an OCS fabric an alltoall runs the circuit schedule\n"
             "only (\"optimal (circuits: K configs)\"), of the --traffic matrix or of the\n"
             "uniform one of --size (a plan without circuits cannot cross an OCS); other\n"
             "collectives have no circuit schedule, and their plans cross each OCS as a\n"
             "switch of its ports, as weft bound does (marked *, optimistic).\n"
             "--json gives ranks, coll, size and\n"
             "fabrics [{spec, model, algo, ocs_as_switch, time_s, algbw, busbw,\n"
             "bound_time_s, usd, w, usd_per_rank, w_per_rank (null when unknown),\n"
             "missing_usd, missing_w}].\n"
             "--traffic A,B,... (with --algo) runs the all-to-all of each matrix in order,\n"
             "one plan each, and prints each one's time and the reconfiguration before it\n"
             "and the total. On a fabric with an ocs node --algo optimal is the circuit\n"
             "schedule, and a plan with circuits waits the OCS's reconfig= delay whenever\n"
             "its circuits change, between epochs and between matrices (docs/ocs.md).\n"
             "On a terminal, runs longer than a second show progress on stderr.\n",
    .groups = {&sim_group, &cli_fabric_options},
    .pos_names = {"SPEC"},
    .min_pos = 0,
    .max_pos = 1,
};

static void json_busiest(cli_json *j, const weft_topo *t, const weft_sim_result *r)
{
    cli_json_key(j, "busiest");
    cli_json_begin_array(j);
    for (uint32_t i = 0; i < r->n_busiest; i++) {
        char name[2 * WEFT_TOPO_NAME_MAX + 8];
        cli_sim_link_name(t, r->busiest[i].link, name, sizeof name);
        cli_json_begin_object(j);
        cli_json_kv_string(j, "link", name);
        cli_json_kv_uint(j, "alike", r->busiest[i].count);
        cli_json_kv_double(j, "bytes", r->busiest[i].bytes);
        cli_json_kv_double(j, "util", r->busiest[i].util);
        cli_json_end_object(j);
    }
    cli_json_end_array(j);
}

/* The last size's figures at the top level (the keys every weft sim --json
 * has), then every size of the sweep with its own busiest links. */
/* The protocol a gpu-model result ran with, or "" (JSON: no key). */
static const char *proto_text(const weft_sim_result *r)
{
    return r->proto >= 0 ? weft_proto_name((weft_proto)r->proto) : "";
}

static void print_json(const weft_topo *t, const char *spec, const char *algo,
                       const weft_sim_result *rs, size_t n, const char *traffic,
                       const cli_nccl_force *f)
{
    cli_json j;
    cli_json_init(&j, stdout);
    const weft_sim_result *last = &rs[n - 1];
    cli_json_begin_object(&j);
    cli_json_kv_string(&j, "fabric", spec);
    cli_json_kv_uint(&j, "ranks", last->ranks);
    cli_json_kv_string(&j, "coll", weft_coll_name(last->coll));
    cli_json_kv_string(&j, "algo", algo);
    cli_json_kv_string(&j, "model", weft_sim_model_name(last->model));
    cli_json_kv_uint(&j, "size", last->size);
    if (traffic) /* an alltoallv: the matrix (its path, or the plan's) gave the size */
        cli_json_kv_string(&j, "traffic", traffic);
    if (cli_nccl_forced(f)) { /* as the table's "forced:" line: the variables given */
        cli_json_key(&j, "forced");
        cli_json_begin_object(&j);
        if (f->algo >= 0)
            cli_json_kv_string(&j, "NCCL_ALGO", weft_nccl_algo_name((weft_nccl_algo)f->algo));
        if (f->proto >= 0)
            cli_json_kv_string(&j, "NCCL_PROTO", weft_proto_name((weft_proto)f->proto));
        if (f->buffsize)
            cli_json_kv_uint(&j, "NCCL_BUFFSIZE", f->buffsize);
        cli_json_end_object(&j);
    }
    cli_json_kv_double(&j, "time_s", last->time_s);
    cli_json_kv_double(&j, "algbw", last->algbw_gbps);
    cli_json_kv_double(&j, "busbw", last->busbw_gbps);
    cli_json_kv_uint(&j, "flow_classes", last->flow_classes);
    cli_json_kv_uint(&j, "events", last->events);
    /* How the last size was computed (docs/sim.md): exact unless the ring
     * was approximated by its periodic quotient or extrapolated. */
    cli_json_kv_bool(&j, "approximated", last->period > 0);
    cli_json_kv_uint(&j, "period", last->period);
    cli_json_kv_uint(&j, "defects", last->defects);
    cli_json_kv_bool(&j, "extrapolated", last->extrapolated);
    json_busiest(&j, t, last);
    cli_json_key(&j, "sweep");
    cli_json_begin_array(&j);
    for (size_t i = 0; i < n; i++) {
        cli_json_begin_object(&j);
        cli_json_kv_uint(&j, "size", rs[i].size);
        cli_json_kv_double(&j, "time_s", rs[i].time_s);
        cli_json_kv_double(&j, "algbw", rs[i].algbw_gbps);
        cli_json_kv_double(&j, "busbw", rs[i].busbw_gbps);
        if (rs[i].proto >= 0)
            cli_json_kv_string(&j, "proto", proto_text(&rs[i]));
        cli_json_kv_uint(&j, "slices", rs[i].slices);
        json_busiest(&j, t, &rs[i]);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_end_object(&j);
    cli_json_finish(&j);
}

/* One row per size: the figures, then the five busiest links, their
 * utilisation and how many other links behave exactly alike (empty cells
 * when fewer link classes carried anything). */
static void print_csv(const weft_topo *t, const weft_sim_result *rs, size_t n)
{
    printf("size,time_s,algbw_gbps,busbw_gbps");
    for (int k = 1; k <= WEFT_SIM_BUSIEST; k++)
        printf(",link%d,util%d,alike%d", k, k, k);
    printf(",model,proto,slices\n");
    for (size_t i = 0; i < n; i++) {
        printf("%llu,%.17g,%.17g,%.17g", (unsigned long long)rs[i].size, rs[i].time_s,
               rs[i].algbw_gbps, rs[i].busbw_gbps);
        for (uint32_t k = 0; k < WEFT_SIM_BUSIEST; k++) {
            if (k < rs[i].n_busiest) {
                char name[2 * WEFT_TOPO_NAME_MAX + 8];
                cli_sim_link_name(t, rs[i].busiest[k].link, name, sizeof name);
                printf(",%s,%.17g,%u", name, rs[i].busiest[k].util, rs[i].busiest[k].count - 1);
            } else {
                printf(",,,");
            }
        }
        printf(",%s,%s,%u\n", weft_sim_model_name(rs[i].model), proto_text(&rs[i]), rs[i].slices);
    }
}

/* Says which sizes were not simulated exactly, so an approximation is
 * never shown as a plain figure. Prints nothing when all were exact. */
static void print_model_notes(const weft_sim_result *rs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (rs[i].period > 0)
            printf("note: %llu bytes approximated by the ring's periodic quotient of %u "
                   "positions (%u defects); docs/sim.md gives its measured error\n",
                   (unsigned long long)rs[i].size, rs[i].period, rs[i].defects);
        if (rs[i].extrapolated)
            printf("note: %llu bytes extrapolated from a steady state (%llu steps simulated)\n",
                   (unsigned long long)rs[i].size, (unsigned long long)rs[i].simulated_steps);
    }
}

static void print_table(const weft_topo *t, const char *spec, const char *algo,
                        const weft_sim_opts *o, const weft_sim_result *rs, size_t n)
{
    const weft_sim_result *last = &rs[n - 1];
    char mt[160];
    cli_sim_model_text(o, mt, sizeof mt);
    printf("%s %s on %s: %u ranks, %s\n", weft_coll_name(last->coll), algo, spec, last->ranks, mt);
    /* The gpu model says which protocol each size ran with, the runtime
     * model how many slices. */
    bool gpu = last->model == WEFT_SIM_GPU, rt = last->model == WEFT_SIM_RUNTIME;
    size_t cols = gpu || rt ? 5 : 4;
    cli_table tab;
    cli_table_init(&tab, cols);
    for (size_t c = 0; c < cols; c++)
        cli_table_align_right(&tab, c);
    cli_table_cell(&tab, "size");
    cli_table_cell(&tab, "time (us)");
    cli_table_cell(&tab, "algbw (GB/s)");
    cli_table_cell(&tab, "busbw (GB/s)");
    if (gpu)
        cli_table_cell(&tab, "proto");
    else if (rt)
        cli_table_cell(&tab, "slices");
    for (size_t i = 0; i < n; i++) {
        cli_table_cell(&tab, "%llu", (unsigned long long)rs[i].size);
        cli_table_cell(&tab, "%.3f", rs[i].time_s * 1e6);
        cli_table_cell(&tab, "%.3f", rs[i].algbw_gbps);
        cli_table_cell(&tab, "%.3f", rs[i].busbw_gbps);
        if (gpu)
            cli_table_cell(&tab, "%s", proto_text(&rs[i]));
        else if (rt)
            cli_table_cell(&tab, "%u", rs[i].slices);
    }
    cli_table_print(&tab, stdout, "  ");
    cli_table_fini(&tab);
    print_model_notes(rs, n);
    printf("busiest links at %llu bytes:\n", (unsigned long long)last->size);
    cli_table_init(&tab, 3);
    cli_table_align_right(&tab, 1);
    for (uint32_t i = 0; i < last->n_busiest; i++) {
        char name[2 * WEFT_TOPO_NAME_MAX + 8];
        cli_sim_link_name(t, last->busiest[i].link, name, sizeof name);
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

/* "forced: NCCL_ALGO=tree NCCL_PROTO=Simple NCCL_BUFFSIZE=8388608", the
 * variables given. */
static void print_forced(const cli_nccl_force *f)
{
    printf("forced:");
    if (f->algo >= 0)
        printf(" NCCL_ALGO=%s", weft_nccl_algo_name((weft_nccl_algo)f->algo));
    if (f->proto >= 0)
        printf(" NCCL_PROTO=%s", weft_proto_name((weft_proto)f->proto));
    if (f->buffsize)
        printf(" NCCL_BUFFSIZE=%llu", (unsigned long long)f->buffsize);
    printf("\n");
}

/* --model, --slice-bytes, --slices, --alpha, ... into o (*model_set: the
 * model is decided, else the fabric's default applies once it is loaded)
 * and --max-ops into *max_ops; a usage error's exit code, or
 * CLI_CONTINUE. --alpha, --slices and --cut-through are the fluid model's
 * knobs: they select it, and refuse another. */
static int parse_opts(cli_args *a, weft_sim_opts *o, uint32_t *max_ops, bool *model_set)
{
    weft_sim_opts_init(o);
    const char *mod = cli_args_get(a, "model"), *sb = cli_args_get(a, "slice-bytes");
    bool fluid_knob =
        cli_args_has(a, "slices") || cli_args_has(a, "alpha") || cli_args_has(a, "cut-through");
    *model_set = mod != NULL || fluid_knob;
    if (mod && !weft_sim_model_parse(mod, &o->model))
        return cli_usage_error(&sim_syntax, "unknown --model '%s' (expected fluid, runtime or gpu)",
                               mod);
    if (mod && fluid_knob && o->model != WEFT_SIM_FLUID)
        return cli_usage_error(&sim_syntax,
                               "--alpha, --slices and --cut-through set the fluid "
                               "model; they do not go with --model %s",
                               mod);
    if (sb && cli_flag_size(&sim_syntax, "--slice-bytes", sb, UINT64_MAX, &o->slice_bytes))
        return CLI_EXIT_USAGE;
    const char *pr = cli_args_get(a, "proto");
    if (pr) {
        weft_proto p;
        if (!weft_proto_parse(pr, &p))
            return cli_usage_error(&sim_syntax,
                                   "unknown --proto '%s' (expected LL, LL128 or "
                                   "Simple)",
                                   pr);
        if (mod && o->model != WEFT_SIM_GPU)
            return cli_usage_error(&sim_syntax,
                                   "--proto is the gpu model's; it does not go "
                                   "with --model %s",
                                   mod);
        o->proto = (int)p;
    }
    if (sb && cli_args_has(a, "slices"))
        return cli_usage_error(&sim_syntax, "--slice-bytes replaces --slices; give one");
    if (cli_args_has(a, "slices"))
        fprintf(stderr, "weft sim: --slices is deprecated: it fixes the slice count at every size "
                        "(fluid model); use --slice-bytes B\n");
    const char *mo = cli_args_get(a, "max-ops");
    if (!cli_max_ops_parse(mo, max_ops))
        return cli_usage_error(&sim_syntax, "bad --max-ops '%s' (expected 1 .. %u)", mo,
                               WEFT_PLAN_MAX_OPS);
    const char *sl = cli_args_get(a, "slices"), *al = cli_args_get(a, "alpha");
    if (sl) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(sl, &end, 10);
        if (*sl < '0' || *sl > '9' || *end || errno || v == 0 || v > 1000000)
            return cli_usage_error(&sim_syntax, "bad --slices '%s' (expected 1 .. 1000000)", sl);
        o->slices = (uint32_t)v;
    }
    if (al && cli_flag_time(&sim_syntax, "--alpha", al, 1e3, &o->alpha_s))
        return CLI_EXIT_USAGE;
    o->symmetry = !cli_args_has(a, "no-symmetry");
    o->cut_through = cli_args_has(a, "cut-through");
    o->back_to_back = cli_args_has(a, "back-to-back");
    return CLI_CONTINUE;
}

/* The sizes of a sweep from lo by factor (n of them; factor 0: lo alone)
 * and a zeroed result per size in *rs; NULL when out of memory. */
static uint64_t *size_list(uint64_t lo, uint64_t factor, size_t n, weft_sim_result **rs)
{
    uint64_t *sizes = calloc(n, sizeof *sizes);
    *rs = calloc(n, sizeof **rs);
    if (!sizes || !*rs) {
        free(sizes);
        free(*rs);
        *rs = NULL;
        return NULL;
    }
    sizes[0] = lo;
    for (size_t i = 1; i < n; i++)
        sizes[i] = sizes[i - 1] * factor;
    return sizes;
}

/* weft sim --compare-fabrics A,B,...: its flags checked, then the
 * comparison (cli/sim_fabrics.h). */
static int compare_fabrics(cli_args *a, const char *fabrics, const char *cost_path,
                           cli_progress *pr)
{
    static const char *const excluded[] = {"plan",      "algo",       "compare",
                                           "trace",     "plot",       "csv",
                                           "nccl-algo", "nccl-proto", "nccl-buffsize"};
    if (a->n_pos)
        return cli_usage_error(&sim_syntax, "--compare-fabrics names the fabrics; drop SPEC '%s'",
                               a->pos[0]);
    for (size_t i = 0; i < sizeof excluded / sizeof *excluded; i++)
        if (cli_args_has(a, excluded[i]))
            return cli_usage_error(&sim_syntax, "--%s does not go with --compare-fabrics",
                                   excluded[i]);
    const char *coll_s = cli_args_get(a, "coll"), *size_s = cli_args_get(a, "size"),
               *traffic_path = cli_args_get(a, "traffic");
    if (!coll_s)
        return cli_usage_error(&sim_syntax, "missing --coll");
    weft_coll coll;
    int rc = cli_flag_coll(&sim_syntax, "--coll", coll_s, &coll);
    if (rc)
        return rc;
    if (!size_s == !traffic_path)
        return cli_usage_error(&sim_syntax, "--compare-fabrics needs one of --size and --traffic");
    if (traffic_path && coll != WEFT_COLL_ALLTOALL)
        return cli_usage_error(&sim_syntax,
                               "--traffic gives the bytes of an all-to-all; it needs "
                               "--coll alltoall, not %s",
                               weft_coll_name(coll));
    uint64_t lo = 1, hi = 1, factor = 0;
    if (size_s && (rc = cli_flag_sweep(&sim_syntax, "--size", size_s, &lo, &hi, &factor)))
        return rc;
    if (factor)
        return cli_usage_error(&sim_syntax,
                               "--compare-fabrics compares at one size, not the "
                               "sweep '%s'",
                               size_s);
    weft_sim_opts o;
    uint32_t max_ops = CLI_SIM_MAX_OPS;
    bool model_set = false;
    if ((rc = parse_opts(a, &o, &max_ops, &model_set)) != CLI_CONTINUE)
        return rc;
    double delay;
    if (!cli_progress_delay(&delay))
        return cli_usage_error(&sim_syntax, "bad WEFT_PROGRESS_AFTER '%s' (expected seconds >= 0)",
                               getenv("WEFT_PROGRESS_AFTER"));
    cli_progress_start(pr, stderr, isatty(fileno(stderr)) == 1, delay);
    return cli_sim_compare_fabrics(a, fabrics, coll, lo, traffic_path, cost_path, &o, model_set,
                                   max_ops, cli_args_has(a, "json"), pr);
}

int cli_cmd_sim(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&sim_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    const char *algo = cli_args_get(&a, "algo"), *coll_s = cli_args_get(&a, "coll"),
               *size_s = cli_args_get(&a, "size"), *plan_path = cli_args_get(&a, "plan"),
               *trace_path = cli_args_get(&a, "trace"), *plot_path = cli_args_get(&a, "plot"),
               *traffic_path = cli_args_get(&a, "traffic");
    bool compare = cli_args_has(&a, "compare");
    cli_sim_format fmt = cli_args_has(&a, "json")  ? CLI_SIM_JSON
                         : cli_args_has(&a, "csv") ? CLI_SIM_CSV
                                                   : CLI_SIM_TABLE;
    weft_coll coll = WEFT_COLL_ALLREDUCE;
    uint64_t lo, hi, factor;
    weft_sim_opts o;
    cli_sim_algo subject;
    memset(&subject, 0, sizeof subject);
    weft_topo *t = NULL;
    weft_sim_result *rs = NULL;
    uint64_t *sizes = NULL;
    cli_out trace = {0};
    bool trace_open = false;
    weft_traffic matrix = {0};
    cli_progress pr;
    cli_progress_start(&pr, stderr, false, 0);
    double delay;
    const char *fabrics = cli_args_get(&a, "compare-fabrics"),
               *cost_path = cli_args_get(&a, "cost");
    if (fabrics) {
        rc = compare_fabrics(&a, fabrics, cost_path, &pr);
        goto free_args;
    }
    if (cost_path) {
        rc = cli_usage_error(&sim_syntax, "--cost prices the fabrics of --compare-fabrics");
        goto free_args;
    }
    if (a.n_pos == 0) {
        rc = cli_usage_error(&sim_syntax, "missing SPEC");
        goto free_args;
    }
    if (plan_path && (algo || coll_s || compare)) {
        rc = cli_usage_error(&sim_syntax, "--plan excludes --algo, --coll and --compare");
        goto free_args;
    }
    if (compare && algo) {
        rc = cli_usage_error(&sim_syntax, "--compare simulates every algorithm; drop --algo");
        goto free_args;
    }
    if (plot_path && (rc = cli_flag_svg(&sim_syntax, "--plot", plot_path)))
        goto free_args;
    if (compare && trace_path) {
        rc = cli_usage_error(&sim_syntax, "--trace draws one schedule; it does not go with "
                                          "--compare");
        goto free_args;
    }
    if (!plan_path && (!(algo || compare) || !coll_s)) {
        rc = cli_usage_error(&sim_syntax, "missing %s",
                             !(algo || compare) ? "--plan, --algo or --compare" : "--coll");
        goto free_args;
    }
    if (traffic_path && size_s) {
        rc = cli_usage_error(&sim_syntax, "--size and --traffic both give the size: the traffic "
                                          "matrix gives every pair's bytes (drop --size)");
        goto free_args;
    }
    if (!size_s && !traffic_path && !plan_path) {
        rc = cli_usage_error(&sim_syntax, "missing --size");
        goto free_args;
    }
    if (coll_s && (rc = cli_flag_coll(&sim_syntax, "--coll", coll_s, &coll)))
        goto free_args;
    if (traffic_path && !plan_path && coll != WEFT_COLL_ALLTOALL) {
        rc = cli_usage_error(&sim_syntax,
                             "--traffic gives the bytes of an all-to-all; it needs "
                             "--coll alltoall, not %s",
                             weft_coll_name(coll));
        goto free_args;
    }
    weft_sim_innet_algo innet_kind;
    if (algo && !weft_choose_innet_parse(algo, &innet_kind) &&
        (rc = cli_flag_algo(&sim_syntax, "--algo", algo, true)))
        goto free_args;
    lo = hi = 1;
    factor = 0;
    if (size_s && (rc = cli_flag_sweep(&sim_syntax, "--size", size_s, &lo, &hi, &factor)))
        goto free_args;
    weft_sparse_args sparse;
    if ((rc = cli_sparse_flags(&sim_syntax, &a, algo, &sparse)) != CLI_CONTINUE)
        goto free_args;
    cli_nccl_force force;
    if ((rc = cli_nccl_force_flags(&sim_syntax, &a, algo, &force)) != CLI_CONTINUE)
        goto free_args;
    uint32_t max_ops = CLI_SIM_MAX_OPS;
    bool model_set = false;
    if ((rc = parse_opts(&a, &o, &max_ops, &model_set)) != CLI_CONTINUE)
        goto free_args;
    const char *compute = cli_args_get(&a, "compute");
    if (compute && strcmp(compute, "none") != 0 && !cli_sparse_algo(algo)) {
        rc = cli_usage_error(&sim_syntax,
                             "--compute cpu charges the compute ops of a compressed or sparse "
                             "plan, at the rates of its compressor: it needs --algo "
                             "quant-2shot, hier-quant, sparse-ag, sparse-hash or sparse-range");
        goto free_args;
    }
    if (compute && strcmp(compute, "none") != 0) {
        weft_compute_rates cr;
        weft_diag cd = {0};
        if (weft_compute_rates_get(&sparse.comp, sparse.elem_bytes, compute, &cr, &cd)) {
            rc = cli_usage_error(&sim_syntax, "bad --compute: %s", cd.msg);
            goto free_args;
        }
        memcpy(o.compute_s_per_b, cr.s_per_b, sizeof o.compute_s_per_b);
        o.compute_source = cr.source;
    }
    if (!cli_progress_delay(&delay)) {
        rc = cli_usage_error(&sim_syntax, "bad WEFT_PROGRESS_AFTER '%s' (expected seconds >= 0)",
                             getenv("WEFT_PROGRESS_AFTER"));
        goto free_args;
    }

    size_t n = 1;
    for (uint64_t s = lo; factor && s <= hi / factor; s *= factor)
        n++;

    weft_diag d;
    weft_diag_clear(&d);
    rc = cli_load_fabric(&a, a.pos[0], &t);
    if (rc)
        goto free_args;
    if (!model_set)
        o.model = weft_sim_model_default(t);
    if (o.proto >= 0 && o.model != WEFT_SIM_GPU) {
        rc = cli_usage_error(&sim_syntax, "--proto is the gpu model's; this runs the %s model",
                             weft_sim_model_name(o.model));
        goto free_all;
    }
    /* The progress line appears only on a terminal and only after a
     * second (WEFT_PROGRESS_AFTER), so short runs and redirected output
     * never see it. */
    cli_progress_start(&pr, stderr, isatty(fileno(stderr)) == 1, delay);
    if (traffic_path && strchr(traffic_path, ',')) {
        /* Several matrices in order (docs/ocs.md). */
        if (plan_path || compare || trace_path || plot_path || fmt == CLI_SIM_CSV) {
            rc = cli_usage_error(&sim_syntax, "--traffic A,B,... runs --algo on each matrix in "
                                              "order; it does not go with --plan, --compare, "
                                              "--trace, --plot or --csv");
            goto free_all;
        }
        rc = cli_sim_traffic_sequence(a.pos[0], t, algo, traffic_path, &o, max_ops,
                                      fmt == CLI_SIM_JSON);
        goto free_all;
    }
    if (traffic_path &&
        (rc = cli_traffic_load(traffic_path, a.pos[0], weft_topo_num_ranks(t), &matrix)))
        goto free_all;
    if (compare && traffic_path) { /* one size: the matrix's total / N */
        lo = weft_traffic_sim_size(&matrix);
        if (!lo) {
            cli_error("%s: the traffic matrix moves no bytes", traffic_path);
            rc = CLI_EXIT_INPUT;
            goto free_all;
        }
        factor = 0;
        n = 1;
    }
    if (compare) {
        if (!(sizes = size_list(lo, factor, n, &rs))) {
            rc = cli_fail(WEFT_ENOMEM, NULL);
            goto free_all;
        }
        if (traffic_path)
            rc = cli_sim_compare_traffic(a.pos[0], t, &matrix, sizes, n, &o, max_ops, fmt,
                                         plot_path, &pr);
        else
            rc = cli_sim_compare(a.pos[0], t, coll, sizes, n, &o, max_ops, fmt, plot_path, &pr);
        goto free_all;
    }
    weft_err e;
    if (plan_path) {
        weft_plan *plan = NULL;
        if ((rc = cli_plan_load(plan_path, &plan)))
            goto free_all;
        if (traffic_path && (e = weft_plan_set_traffic(plan, &matrix, &d))) {
            weft_plan_free(plan);
            cli_error("%s: %s", plan_path, d.msg);
            rc = CLI_EXIT_INPUT;
            goto free_all;
        }
        /* --max-ops counts a plan read as one built: an op of c chunks
         * counts c, and the message is --algo's. */
        uint64_t touched = 0;
        for (uint32_t i = 0; i < weft_plan_num_ops(plan); i++)
            touched += weft_plan_op(plan, i).count;
        if (touched > max_ops) {
            const weft_plan_info *pi = weft_plan_get_info(plan);
            cli_error("%s %s on %u ranks has more than %u ops (the limit, --max-ops)", plan_path,
                      weft_coll_name(pi->coll), pi->nranks, max_ops);
            weft_plan_free(plan);
            rc = CLI_EXIT_INPUT;
            goto free_all;
        }
        if ((e = weft_plan_verify(plan, t, &d))) {
            weft_plan_free(plan);
            rc = cli_fail(e, &d);
            goto free_all;
        }
        weft_candidate_from_plan(&subject, plan);
        algo = "plan";
    } else if (traffic_path) {
        cli_progress_set(&pr, "sim: building %s", algo);
        cli_context_object("building the plan");
        weft_plan *plan = NULL;
        if ((e = cli_build_traffic(t, algo, &matrix, max_ops, &plan, &d))) {
            rc = cli_fail(e, &d);
            goto free_all;
        }
        weft_candidate_from_plan(&subject, plan);
        subject.name = algo;
    } else if (cli_sparse_algo(algo)) {
        /* Built at the smallest --size; its op bytes scale with the size
         * (weft/plan.h, "Sized plans"). */
        cli_progress_set(&pr, "sim: building %s", algo);
        cli_context_object("building the plan");
        weft_plan *plan = NULL;
        if ((e = cli_build_sparse(t, algo, coll, (double)lo, max_ops, &sparse, &plan, &d))) {
            rc = cli_fail(e, &d);
            goto free_all;
        }
        weft_candidate_from_plan(&subject, plan);
        subject.name = algo;
    } else {
        cli_progress_set(&pr, "sim: building %s", algo);
        cli_context_object("building the plan");
        if ((e = cli_sim_algo_build(&subject, t, algo, coll,
                                    trace_path != NULL || cli_sim_needs_plan(&o), max_ops, &d)) ||
            (cli_nccl_forced(&force) && (e = cli_nccl_force_apply(&force, &subject, &d)))) {
            rc = cli_fail(e, &d);
            goto free_all;
        }
    }
    /* The runtime runs the compressed and sparse all-reduces outside the
     * executor: their plans say so (weft_plan_whole_messages, also when
     * read with --plan), and the runtime model moves their messages whole
     * (the simulator reads the plan's mark; o.whole for the header). */
    o.whole = subject.plan && weft_plan_whole_messages(subject.plan);
    /* An alltoallv plan is simulated at its own size (the matrix's bytes). */
    const weft_traffic *tm = subject.plan ? weft_plan_traffic(subject.plan) : NULL;
    if (tm && size_s) {
        rc = cli_usage_error(&sim_syntax,
                             "--size: the plan '%s' carries a traffic matrix, which "
                             "gives every pair's bytes (drop --size)",
                             plan_path);
        goto free_all;
    }
    if (!tm && !size_s) {
        rc = cli_usage_error(&sim_syntax,
                             "missing --size (the plan '%s' has no traffic "
                             "matrix to give it)",
                             plan_path);
        goto free_all;
    }
    if (tm) {
        lo = weft_traffic_sim_size(tm);
        if (!lo) {
            cli_error("%s: the traffic matrix moves no bytes",
                      traffic_path ? traffic_path : plan_path);
            rc = CLI_EXIT_INPUT;
            goto free_all;
        }
        factor = 0;
        n = 1;
    }
    if (!(sizes = size_list(lo, factor, n, &rs))) {
        rc = cli_fail(WEFT_ENOMEM, NULL);
        goto free_all;
    }
    if (trace_path) {
        if ((rc = cli_out_open(&trace, trace_path)) != CLI_EXIT_OK)
            goto free_all;
        trace_open = true;
        errno = 0;
        if ((e = weft_sim_trace_begin(trace.f))) {
            cli_error("%s: writing the trace failed: %s", trace_path,
                      strerror(errno ? errno : EIO));
            rc = CLI_EXIT_INPUT;
            goto free_all;
        }
    }
    cli_context_object("simulating");
    for (size_t i = 0; i < n; i++) {
        char st[64];
        weft__size_text(sizes[i], st, sizeof st);
        cli_progress_set(&pr, "sim: %s at %s (%zu of %zu)", algo, st, i + 1, n);
        /* Every size on its own processes of one trace, named by size. */
        char label[32];
        cli_size_label(sizes[i], label, sizeof label);
        o.trace = trace_open ? trace.f : NULL;
        o.trace_run = (uint32_t)i + 1;
        o.trace_label = label;
        e = weft_candidate_run(&subject, t, sizes[i], &o, &rs[i], &d);
        if (!e && tm && rs[i].time_s > 0) {
            /* algbw = S / time with S the matrix's exact total / N, not
             * the whole bytes the size is shown as. */
            rs[i].algbw_gbps = weft_plan_traffic_size(subject.plan) / rs[i].time_s * 1e-9;
            rs[i].busbw_gbps = rs[i].algbw_gbps * weft_sim_busbw_factor(rs[i].coll, rs[i].ranks);
        }
        if (e) {
            if (e == WEFT_EIO && o.trace) {
                /* The simulator does not know the file's name. */
                cli_error("%s: %s", trace_path, d.msg);
                rc = CLI_EXIT_INPUT;
            } else {
                rc = cli_fail(e, &d);
            }
            goto free_all;
        }
    }
    cli_progress_stop(&pr);
    if (trace_open) {
        trace_open = false;
        errno = 0;
        if ((e = weft_sim_trace_end_results(trace.f, rs, n))) {
            int err = errno ? errno : EIO;
            cli_out_close(&trace, false);
            cli_error("%s: writing the trace failed: %s", trace_path, strerror(err));
            rc = CLI_EXIT_INPUT;
            goto free_all;
        }
        if ((rc = cli_out_close(&trace, true)) != CLI_EXIT_OK)
            goto free_all;
    }
    if (plot_path) {
        double bound;
        bool have = cli_sim_bound_gbps(t, rs[0].coll, &bound);
        cli_sim_plot_algo one = {algo, rs};
        if ((rc = cli_sim_plot(plot_path, a.pos[0], t, rs[0].coll, sizes, n, &one, 1,
                               have ? &bound : NULL)) != CLI_EXIT_OK)
            goto free_all;
    }
    if (fmt == CLI_SIM_JSON)
        print_json(t, a.pos[0], algo, rs, n, tm ? (traffic_path ? traffic_path : plan_path) : NULL,
                   &force);
    else if (fmt == CLI_SIM_CSV)
        print_csv(t, rs, n);
    else {
        print_table(t, a.pos[0], algo, &o, rs, n);
        if (cli_nccl_forced(&force))
            print_forced(&force);
        for (size_t i = 0; subject.nccl && i < n; i++) {
            char st[64], label[64];
            weft__size_text(sizes[i], st, sizeof st);
            weft_candidate_label(&subject, sizes[i], label, sizeof label);
            printf("%s at %s: %s", i ? "          " : "NCCL runs", st, label);
            weft_nccl_choice ch;
            if (!weft_candidate_nccl_choice(&subject, sizes[i], &ch, NULL) &&
                weft_nccl_algo_innet(ch.algo))
                printf(" in the switch (%.1f us by NCCL's model)", ch.time_s * 1e6);
            printf("\n");
        }
    }
    rc = CLI_EXIT_OK;
free_all:
    weft_traffic_free(&matrix);
    cli_progress_stop(&pr);
    if (trace_open)
        cli_out_close(&trace, false);
    weft_candidate_fini(&subject);
    weft_topo_free(t);
free_args:
    free(rs);
    free(sizes);
    cli_args_fini(&a);
    return rc;
}
