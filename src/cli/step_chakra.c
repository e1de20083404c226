/* weft step --chakra PREFIX: Chakra execution traces replayed on a fabric
 * (weft/work.h, "Chakra"; docs/step.md). */
#include "cli/step_chakra.h"

#include <stdio.h>

#include "cli/cli.h"
#include "cli/fabric.h"
#include "cli/json.h"
#include "cli/outfile.h"
#include "cli/step_choices.h"
#include "cli/table.h"

static void json_chakra(cli_json *j, const weft_chakra_result *r)
{
    cli_json_kv_double(j, "total_s", r->total_s);
    cli_json_kv_double(j, "step_s", r->total_s);
    cli_json_key(j, "per_rank");
    cli_json_begin_array(j);
    for (uint32_t i = 0; i < r->ranks; i++) {
        const weft_chakra_rank *k = &r->rank[i];
        cli_json_begin_object(j);
        cli_json_kv_uint(j, "rank", i);
        cli_json_kv_uint(j, "nodes", k->nodes);
        cli_json_kv_double(j, "end_s", k->end_s);
        cli_json_kv_double(j, "compute_s", k->compute_s);
        cli_json_kv_double(j, "cpu_s", k->cpu_s);
        cli_json_kv_double(j, "comm_s", k->comm_s);
        cli_json_kv_double(j, "exposed_comm_s", k->exposed_s);
        cli_json_end_object(j);
    }
    cli_json_end_array(j);
    cli_json_key(j, "comm");
    cli_json_begin_object(j);
    for (int k = 0; k < WEFT__COLL_COUNT; k++) {
        if (k == WEFT_COLL_REDUCE)
            continue;
        cli_json_key(j, weft_coll_name((weft_coll)k));
        cli_json_begin_object(j);
        cli_json_kv_uint(j, "calls", r->coll_calls[k]);
        cli_json_kv_double(j, "time_s", r->coll_s[k]);
        cli_json_kv_uint(j, "bytes", r->coll_bytes[k]);
        cli_json_end_object(j);
    }
    cli_json_key(j, "p2p");
    cli_json_begin_object(j);
    cli_json_kv_uint(j, "calls", r->p2p_calls);
    cli_json_kv_double(j, "time_s", r->p2p_s);
    cli_json_kv_uint(j, "bytes", r->p2p_bytes);
    cli_json_end_object(j);
    cli_json_end_object(j);
    cli_json_kv_uint(j, "barriers", r->barriers);
    cli_json_kv_uint(j, "batches", r->batches);
    cli_json_kv_uint(j, "simulations", r->sims);
    cli_json_kv_uint(j, "simulation_cache_hits", r->sim_hits);
    cli_json_kv_uint(j, "joint_simulations", r->joint_sims);
    cli_json_kv_uint(j, "joint_batches", r->joint_jobs);
    cli_json_kv_uint(j, "joint_dropped", r->joint_dropped);
}

static void print_chakra(const char *prefix, const char *spec, const weft_chakra *w,
                         const weft_chakra_result *r)
{
    printf("chakra %s: %u ranks, %llu nodes, on %s\n", prefix, r->ranks,
           (unsigned long long)weft_chakra_nodes(w), spec);
    printf("total %.6f s (%u batches of concurrent communication, %u simulations", r->total_s,
           r->batches, r->sims);
    if (r->joint_sims)
        printf(", %u of overlapping batches together", r->joint_sims);
    printf(")\n");
    cli_table tb;
    cli_table_init(&tb, 6);
    for (size_t k = 0; k < 6; k++)
        cli_table_align_right(&tb, k);
    cli_table_cell(&tb, "rank");
    cli_table_cell(&tb, "nodes");
    cli_table_cell(&tb, "end s");
    cli_table_cell(&tb, "compute s");
    cli_table_cell(&tb, "comm s");
    cli_table_cell(&tb, "exposed comm s");
    for (uint32_t i = 0; i < r->ranks; i++) {
        const weft_chakra_rank *k = &r->rank[i];
        cli_table_cell(&tb, "%u", i);
        cli_table_cell(&tb, "%llu", (unsigned long long)k->nodes);
        cli_table_cell(&tb, "%.6f", k->end_s);
        cli_table_cell(&tb, "%.6f", k->compute_s);
        cli_table_cell(&tb, "%.6f", k->comm_s);
        cli_table_cell(&tb, "%.6f", k->exposed_s);
    }
    cli_table_print(&tb, stdout, "  ");
    cli_table_fini(&tb);
    cli_table_init(&tb, 4);
    for (size_t k = 1; k < 4; k++)
        cli_table_align_right(&tb, k);
    cli_table_cell(&tb, "communication");
    cli_table_cell(&tb, "calls");
    cli_table_cell(&tb, "time s");
    cli_table_cell(&tb, "MiB");
    for (int k = 0; k <= WEFT__COLL_COUNT; k++) {
        uint32_t calls = k < WEFT__COLL_COUNT ? r->coll_calls[k] : r->p2p_calls;
        if (!calls)
            continue;
        cli_table_cell(&tb, "%s",
                       k < WEFT__COLL_COUNT ? weft_coll_name((weft_coll)k) : "send/recv");
        cli_table_cell(&tb, "%u", calls);
        cli_table_cell(&tb, "%.6f", k < WEFT__COLL_COUNT ? r->coll_s[k] : r->p2p_s);
        cli_table_cell(&tb, "%.2f",
                       (k < WEFT__COLL_COUNT ? r->coll_bytes[k] : r->p2p_bytes) / 1048576.0);
    }
    if (r->barriers) {
        cli_table_cell(&tb, "barrier");
        cli_table_cell(&tb, "%u", r->barriers);
        cli_table_cell(&tb, "%.6f", 0.0);
        cli_table_cell(&tb, "-");
    }
    cli_table_print(&tb, stdout, "  ");
    cli_table_fini(&tb);
}

/* weft step --chakra PREFIX: the traces on the fabric. */
int cli_step_chakra(const cli_args *a, const char *prefix, const cli_syntax *syn, const weft_gpu *g)
{
    static const char *const model_flags[] = {"model",
                                              "sweep",
                                              "top",
                                              "order",
                                              "list-models",
                                              "num-layers",
                                              "hidden-size",
                                              "tensor-model-parallel-size",
                                              "pipeline-model-parallel-size",
                                              "global-batch-size",
                                              NULL};
    for (size_t i = 0; model_flags[i]; i++)
        if (cli_args_has(a, model_flags[i]))
            return cli_usage_error(syn, "--chakra runs traces: --%s does not apply",
                                   model_flags[i]);
    const char *spec = cli_args_get(a, "fabric");
    if (!spec)
        return cli_usage_error(syn, "missing --fabric SPEC");
    int rc;
    weft_topo *t = NULL;
    if ((rc = cli_load_fabric(a, spec, &t)))
        return rc;
    weft_diag d;
    weft_diag_clear(&d);
    weft_chakra *w = NULL;
    weft_work_ctx *ctx = NULL;
    cli_context_object("reading the Chakra traces");
    weft_err err = weft_chakra_load(prefix, weft_topo_num_ranks(t), &w, &d);
    if (!err)
        err = weft_work_ctx_new(t, g, NULL, &ctx);
    if (err) {
        rc = cli_fail(err, &d);
        goto free_all;
    }
    if ((rc = cli_step_coll_algo(syn, a, ctx)))
        goto free_all;
    const char *trace_path = cli_args_get(a, "trace");
    cli_out out;
    if (trace_path && (rc = cli_out_open(&out, trace_path)))
        goto free_all;
    weft_chakra_result r;
    cli_context_object("running the Chakra traces");
    err = weft_chakra_run(ctx, w, trace_path ? out.f : NULL, &r, &d);
    if (trace_path) {
        int crc = cli_out_close(&out, err == WEFT_OK);
        if (!err && crc) {
            weft_chakra_result_fini(&r);
            rc = crc;
            goto free_all;
        }
    }
    if (err) {
        rc = cli_fail(err, &d);
        goto free_all;
    }
    if (cli_args_has(a, "json")) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_begin_object(&j);
        cli_json_kv_uint(&j, "ranks", weft_topo_num_ranks(t));
        cli_json_kv_string(&j, "chakra", prefix);
        cli_json_kv_uint(&j, "nodes", weft_chakra_nodes(w));
        json_chakra(&j, &r);
        cli_step_choices_json(&j, ctx);
        cli_json_end_object(&j);
        rc = cli_json_done(&j);
    } else {
        print_chakra(prefix, spec, w, &r);
        cli_step_choices_print(ctx, NULL);
        rc = CLI_EXIT_OK;
    }
    weft_chakra_result_fini(&r);
free_all:
    weft_work_ctx_free(ctx);
    weft_chakra_free(w);
    weft_topo_free(t);
    return rc;
}
