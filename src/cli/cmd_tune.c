/* weft tune SPEC [--colls C,...] [--sizes MIN:MAX:xF] [--model M]
 * [--slice-bytes B] [--slices P] [--alpha T] [-o FILE]: the tuning table
 * the runtime follows (weft/tuning.h). For each collective and size it
 * records the ranking weft_choose (weft/choose.h) makes of the runtime's
 * candidates (the registry's WEFT_SCHED_FOR_RUNTIME list, what
 * weft_tuning_build builds). The ranking happens outside the run module,
 * which must not call the simulator (docs/architecture.md). The model is weft sim's: the fabric's
 * default (weft_sim_model_default: gpu where the GPUs name their arch=, else runtime, weft's own
 * executor, which is what follows the table), or
 * --model; --slices and --alpha select the fluid model, as in weft sim. */
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
#include "cli/sizes.h"
#include "cli/table.h"
#include "weft/choose.h"
#include "weft/log.h"
#include "weft/sim.h"
#include "weft/synth.h"
#include "weft/tuning.h"

static const cli_opt tune_opts[] = {
    {"colls", 0, "C,...", "collectives to tune (default: all six)"},
    {"sizes", 0, "MIN:MAX:xF", "sizes as weft sim --size, powers of two (default 1K:256M:x2)"},
    {"model", 0, "M",
     "fluid, runtime or gpu: how the plans are executed (default as weft sim:\n"
     "gpu when the fabric's GPUs name their arch=, else runtime)"},
    {"slice-bytes", 0, "B",
     "cut each chunk into slices of B bytes (1 to 32 of them) instead of\n"
     "the model's"},
    {"alpha", 0, "T",
     "fluid model: per-transfer start overhead, with a unit (5us,\n"
     "0.5ms; 0 needs none); default 0"},
    {"slices", 0, "P", "deprecated (fluid model: P slices at every size); use --slice-bytes"},
    {"output", 'o', "FILE", "write the table here (default: standard output)"},
    {"json", 0, NULL, "print the rankings as one JSON object (the table only goes to -o FILE)"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup tune_group = {"options", tune_opts, false};

static const cli_syntax tune_syntax = {
    .path = "weft tune",
    .args = "SPEC [--colls C,...] [--sizes MIN:MAX:xF] [--model fluid|runtime|gpu]\n"
            "        [--slice-bytes B] [--alpha T] [-o FILE] [--json]",
    .about = "Writes a tuning table for the runtime: for each collective and size, every\n"
             "plan the runtime can build on the fabric (the schedule registry's runtime\n"
             "candidates: each classic algorithm without parameters, rings:auto, and the\n"
             "optimal plan where it builds) is simulated, and the\n"
             "ranking, fastest first, is recorded with the simulated times and the\n"
             "fabric's canonical hash. Give the table to the runtime with WEFT_TUNING=FILE\n"
             "(and WEFT_FABRIC=SPEC): each call then runs the table's fastest plan for its\n"
             "collective and size class instead of the alpha-beta ranking, and a table made\n"
             "for another fabric is refused at init. Rooted collectives (broadcast, reduce)\n"
             "are ranked at root 0. With -o FILE a summary goes to standard output.\n"
             "The plans are simulated as weft sim does, in the fabric's default model:\n"
             "gpu (NCCL's protocols) where its GPUs name their arch=, otherwise runtime\n"
             "(weft's own executor, the one that follows the table); --model picks\n"
             "another, --alpha and --slices (deprecated) select fluid. The table's sim\n"
             "line and the summary name the model (\"model=runtime\").\n"
             "The format is described in docs/run.md (\"Tuning tables\").\n"
             "With --json, standard output gets one object instead of the table or the\n"
             "summary: spec, ranks, fabric_hash, sim ({model, slice_bytes, slices,\n"
             "alpha_s}: slices and alpha_s as given to the fluid model; the others derive\n"
             "them per size), output (the -o FILE, or null when no table is written),\n"
             "entries: [{coll, bytes, ranking: [{algo, time_s}]}].\n",
    .groups = {&tune_group, &cli_fabric_options},
    .pos_names = {"SPEC"},
    .min_pos = 1,
    .max_pos = 1,
};

static bool pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

/* MIN:MAX:xF or one size, every size a power of two. */
static int parse_sizes(const char *s, uint64_t *lo, uint64_t *hi, uint64_t *factor)
{
    int rc = cli_flag_sweep(&tune_syntax, "--sizes", s, lo, hi, factor);
    if (rc)
        return rc;
    if (*factor == 0)
        *factor = 2; /* a single size: any factor gives one entry */
    if (!pow2(*lo) || !pow2(*factor))
        return cli_usage_error(&tune_syntax,
                               "bad --sizes '%s': MIN and F must be powers of two (the runtime "
                               "decides per power-of-two size class)",
                               s);
    return CLI_EXIT_OK;
}

/* "allreduce,allgather" -> a bit per collective. */
static int parse_colls(const char *s, unsigned *mask)
{
    *mask = 0;
    for (const char *p = s;;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        weft_coll c;
        if (!weft_coll_parse(p, n, &c))
            return cli_usage_error(&tune_syntax,
                                   "bad --colls: unknown collective '%.*s' "
                                   "(expected %s, separated by commas)",
                                   (int)n, p, CLI_COLLS);
        *mask |= 1u << c;
        if (!end)
            break;
        p = end + 1;
    }
    return CLI_EXIT_OK;
}

/* --model, --slice-bytes, --slices, --alpha into o, as weft sim reads
 * them: --alpha and --slices are the fluid model's knobs and select it;
 * *model_set says whether the model is decided (else the fabric's default
 * applies once it is loaded). A usage error's exit code, or CLI_CONTINUE. */
static int parse_model(cli_args *a, weft_sim_opts *o, bool *model_set)
{
    const char *mod = cli_args_get(a, "model"), *sb = cli_args_get(a, "slice-bytes");
    const char *sl = cli_args_get(a, "slices"), *al = cli_args_get(a, "alpha");
    *model_set = mod || sl || al;
    if (mod && !weft_sim_model_parse(mod, &o->model))
        return cli_usage_error(&tune_syntax,
                               "unknown --model '%s' (expected fluid, runtime or gpu)", mod);
    if (mod && (sl || al) && o->model != WEFT_SIM_FLUID)
        return cli_usage_error(&tune_syntax,
                               "--alpha and --slices set the fluid model; they do "
                               "not go with --model %s",
                               mod);
    if (!mod && (sl || al))
        o->model = WEFT_SIM_FLUID;
    if (sb && sl)
        return cli_usage_error(&tune_syntax, "--slice-bytes replaces --slices; give one");
    if (sb && cli_flag_size(&tune_syntax, "--slice-bytes", sb, UINT64_MAX, &o->slice_bytes))
        return CLI_EXIT_USAGE;
    if (sl) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(sl, &end, 10);
        if (*sl < '0' || *sl > '9' || *end || errno || v == 0 || v > 1000)
            return cli_usage_error(&tune_syntax, "bad --slices '%s' (expected 1 .. 1000)", sl);
        o->slices = (uint32_t)v;
        fprintf(stderr, "weft tune: --slices is deprecated: it fixes the slice count at every "
                        "size (fluid model); use --slice-bytes B\n");
    }
    if (al && cli_flag_time(&tune_syntax, "--alpha", al, 1e3, &o->alpha_s))
        return CLI_EXIT_USAGE;
    return CLI_CONTINUE;
}

/* The table's sim line: "model=gpu", "model=runtime slice_bytes=65536",
 * "model=fluid slices=1 alpha=5e-06". */
static void sim_note_text(const weft_sim_opts *o, char *buf, size_t len)
{
    int n = snprintf(buf, len, "model=%s", weft_sim_model_name(o->model));
    if (n > 0 && (size_t)n < len && o->slice_bytes)
        n += snprintf(buf + n, len - (size_t)n, " slice_bytes=%llu",
                      (unsigned long long)o->slice_bytes);
    if (n > 0 && (size_t)n < len && o->model == WEFT_SIM_FLUID && !o->slice_bytes)
        n += snprintf(buf + n, len - (size_t)n, " slices=%u", o->slices);
    if (n > 0 && (size_t)n < len && o->model == WEFT_SIM_FLUID)
        snprintf(buf + n, len - (size_t)n, " alpha=%.9g", o->alpha_s);
}

/* NCCL's in-network algorithms are no candidates (weft's runtime sends
 * rank to rank), but where NCCL would run one the summary says so: per
 * collective, the smallest size of the table from which NCCL's choice
 * reduces in the switch, and at the largest size its simulated time
 * (weft_sim_innet) beside the table's fastest plan. */
static void print_innet(const weft_topo *t, const weft_tuning *tt, const weft_sim_opts *o)
{
    weft_nccl_fabric f;
    if (weft_nccl_fabric_get(t, &f, NULL) || (!f.nvls && !f.collnet))
        return;
    static const weft_sim_innet_algo of[] = {0,
                                             0,
                                             0,
                                             WEFT_SIM_INNET_NVLS,
                                             WEFT_SIM_INNET_NVLS_TREE,
                                             WEFT_SIM_INNET_COLLNET_DIRECT,
                                             WEFT_SIM_INNET_COLLNET_CHAIN};
    for (int c = 0; c < WEFT__COLL_COUNT; c++) {
        uint64_t from = 0;
        const weft_tuning_entry *last = NULL;
        weft_nccl_choice ch, lastch;
        memset(&lastch, 0, sizeof lastch);
        for (uint32_t i = 0; i < weft_tuning_get_info(tt)->entries; i++) {
            const weft_tuning_entry *x = weft_tuning_entry_get(tt, i);
            if ((int)x->coll != c || weft_nccl_choose(&f, x->coll, (double)x->bytes, &ch, NULL))
                continue;
            if (weft_nccl_algo_innet(ch.algo) && !from)
                from = x->bytes;
            last = x;
            lastch = ch;
        }
        if (!from || !last || !weft_nccl_algo_innet(lastch.algo))
            continue;
        weft_sim_result r;
        weft_diag d;
        if (weft_sim_innet(t, last->coll, of[lastch.algo], NULL, 0, 0, last->bytes, o, &r, &d))
            continue;
        printf("%s: NCCL reduces in the switch from %llu B (%s at %llu B: %.3f us simulated, "
               "%s %.3f us; not a runtime candidate)\n",
               weft_coll_name(last->coll), (unsigned long long)from,
               weft_nccl_algo_name(lastch.algo), (unsigned long long)last->bytes, r.time_s * 1e6,
               last->names[0], last->times_s[0] * 1e6);
    }
}

/* --json: the whole table as one object on stdout. */
static int print_json(const char *spec, const char *out_path, const weft_tuning *tt,
                      const weft_sim_opts *o)
{
    const weft_tuning_info *in = weft_tuning_get_info(tt);
    char hash[24];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)in->fabric_hash);
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_kv_string(&j, "spec", spec);
    cli_json_kv_uint(&j, "ranks", in->ranks);
    cli_json_kv_string(&j, "fabric_hash", hash);
    cli_json_key(&j, "sim");
    cli_json_begin_object(&j);
    cli_json_kv_string(&j, "model", weft_sim_model_name(o->model));
    cli_json_kv_uint(&j, "slice_bytes", o->slice_bytes);
    cli_json_kv_uint(&j, "slices", o->slices);
    cli_json_kv_double(&j, "alpha_s", o->alpha_s);
    cli_json_end_object(&j);
    cli_json_kv_string(&j, "output", out_path);
    cli_json_key(&j, "entries");
    cli_json_begin_array(&j);
    for (uint32_t i = 0; i < in->entries; i++) {
        const weft_tuning_entry *x = weft_tuning_entry_get(tt, i);
        cli_json_begin_object(&j);
        cli_json_kv_string(&j, "coll", weft_coll_name(x->coll));
        cli_json_kv_uint(&j, "bytes", x->bytes);
        cli_json_key(&j, "ranking");
        cli_json_begin_array(&j);
        for (uint32_t k = 0; k < x->n; k++) {
            cli_json_begin_object(&j);
            cli_json_kv_string(&j, "algo", x->names[k]);
            cli_json_kv_double(&j, "time_s", x->times_s[k]);
            cli_json_end_object(&j);
        }
        cli_json_end_array(&j);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_end_object(&j);
    return cli_json_done(&j);
}

int cli_cmd_tune(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&tune_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    const char *spec = a.pos[0], *out_path = cli_args_get(&a, "output");
    uint64_t lo = 1024, hi = 256ull << 20, factor = 2;
    unsigned mask = (1u << WEFT__COLL_COUNT) - 1;
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    weft_topo *t = NULL;
    weft_tuning *tt = NULL;
    cli_out out = {0};
    bool out_open = false, json = cli_args_has(&a, "json"), model_set = false;
    if (json && out_path && strcmp(out_path, "-") == 0) {
        rc = cli_usage_error(&tune_syntax, "--json and -o - would both write to standard output");
        goto free_args;
    }
    if (cli_args_get(&a, "sizes") &&
        (rc = parse_sizes(cli_args_get(&a, "sizes"), &lo, &hi, &factor)))
        goto free_args;
    if (cli_args_get(&a, "colls") && (rc = parse_colls(cli_args_get(&a, "colls"), &mask)))
        goto free_args;
    if ((rc = parse_model(&a, &o, &model_set)) != CLI_CONTINUE)
        goto free_args;
    if ((rc = cli_load_fabric(&a, spec, &t)))
        goto free_args;
    if (!model_set)
        o.model = weft_sim_model_default(t);
    weft_diag d;
    weft_diag_clear(&d);
    char sim_note[128];
    sim_note_text(&o, sim_note, sizeof sim_note);
    weft_err e = weft_tuning_new(t, spec, sim_note, &tt, &d);
    /* The runtime's candidates (the registry's FOR_RUNTIME list, what
     * weft_tuning_build builds) ranked by weft_choose at every size, each
     * simulated as its plan, as the runtime runs it; one that does not
     * build on this fabric is left out and logged. */
    uint64_t sizes[64];
    size_t nsizes = 0;
    for (uint64_t s = lo;
         s <= hi && nsizes<64; s = s> UINT64_MAX / factor ? UINT64_MAX : s * factor) {
        sizes[nsizes++] = s;
        if (s == UINT64_MAX)
            break;
    }
    weft_choose_opts co;
    weft_choose_opts_init(&co, t);
    co.sim = o;
    co.purpose = WEFT_SCHED_FOR_RUNTIME;
    co.need_plan = true;
    co.fail_on_sim = true;
    for (int c = 0; c < WEFT__COLL_COUNT && !e; c++) {
        if (!(mask & (1u << c)))
            continue;
        weft_ranking r;
        weft_diag ld;
        weft_diag_clear(&ld);
        e = weft_choose(t, (weft_coll)c, sizes, nsizes, &co, &r, &ld);
        if (e) {
            e = weft_diag_set(&d, e, "tune: simulating %s", ld.msg);
            break;
        }
        const char *names[64];
        double times[64];
        uint32_t n = 0;
        for (size_t k = 0; k < r.n; k++)
            if (!r.c[k].built)
                weft_log(WEFT_LOG_INFO, "cli", "tune: %s %s left out: %s",
                         weft_coll_name((weft_coll)c), r.c[k].name, r.c[k].why);
        for (size_t s = 0; s < nsizes && !e; s++) {
            n = 0;
            for (size_t k = 0; k < r.n && n < 64; k++) {
                if (!r.c[k].res)
                    continue;
                names[n] = r.c[k].name;
                times[n++] = r.c[k].res[s].time_s;
            }
            if (n)
                e = weft_tuning_add(tt, (weft_coll)c, sizes[s], n, names, times, &d);
        }
        weft_ranking_fini(&r);
    }
    if (e) {
        rc = cli_fail(e, &d);
        goto free_all;
    }
    if (weft_tuning_get_info(tt)->entries == 0) {
        cli_error("tune: no candidate builds any of the collectives asked for on %s", spec);
        rc = CLI_EXIT_INPUT;
        goto free_all;
    }
    if (!json || out_path) {
        if ((rc = cli_out_open(&out, out_path)))
            goto free_all;
        out_open = true;
        errno = 0; /* a failed write leaves its reason (ENOSPC) here */
        e = weft_tuning_write(tt, out.f);
        int write_err = e == WEFT_EIO ? (errno ? errno : EIO) : 0;
        out_open = false;
        if ((rc = cli_out_close(&out, e == WEFT_OK)))
            goto free_all;
        if (write_err) {
            cli_error("cannot write the tuning table to '%s': %s", out_path ? out_path : "-",
                      strerror(write_err));
            rc = CLI_EXIT_INPUT;
            goto free_all;
        }
        if (e) {
            rc = cli_fail(e, NULL);
            goto free_all;
        }
    }
    if (json) {
        rc = print_json(spec, out_path, tt, &o);
        goto free_all;
    }
    if (out_path && strcmp(out_path, "-") != 0) {
        printf("tuning table for %s (%u ranks, %s) written to %s\n", spec, weft_topo_num_ranks(t),
               sim_note, out_path);
        cli_table tab;
        cli_table_init(&tab, 5);
        cli_table_align_right(&tab, 1);
        cli_table_align_right(&tab, 3);
        cli_table_cell(&tab, "coll");
        cli_table_cell(&tab, "size");
        cli_table_cell(&tab, "fastest");
        cli_table_cell(&tab, "time (us)");
        cli_table_cell(&tab, "of");
        for (uint32_t i = 0; i < weft_tuning_get_info(tt)->entries; i++) {
            const weft_tuning_entry *x = weft_tuning_entry_get(tt, i);
            cli_table_cell(&tab, "%s", weft_coll_name(x->coll));
            cli_table_cell(&tab, "%llu", (unsigned long long)x->bytes);
            cli_table_cell(&tab, "%s", x->names[0]);
            cli_table_cell(&tab, "%.3f", x->times_s[0] * 1e6);
            cli_table_cell(&tab, "%u", x->n);
        }
        cli_table_print(&tab, stdout, "  ");
        cli_table_fini(&tab);
        print_innet(t, tt, &o);
    }
    rc = CLI_EXIT_OK;
free_all:
    if (out_open)
        cli_out_close(&out, false);
    weft_tuning_free(tt);
    weft_topo_free(t);
free_args:
    cli_args_fini(&a);
    return rc;
}
