/* weft step --coll-algo. See step_choices.h. */
#include "cli/step_choices.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/table.h"

int cli_step_coll_algo(const cli_syntax *syn, const cli_args *a, weft_work_ctx *c)
{
    const char *v = cli_args_get(a, "coll-algo");
    if (!v || strcmp(v, "nccl") == 0) {
        weft_work_ctx_set_coll_algo(c, WEFT_WORK_COLL_NCCL);
        return CLI_EXIT_OK;
    }
    if (strcmp(v, "best") == 0) {
        weft_work_ctx_set_coll_algo(c, WEFT_WORK_COLL_BEST);
        return CLI_EXIT_OK;
    }
    return cli_usage_error(syn, "unknown --coll-algo '%s' (expected nccl or best)", v);
}

void cli_step_choices_print(const weft_work_ctx *c, const char *a2a_algo)
{
    size_t n;
    const weft_work_choice *ch = weft_work_choices(c, &n);
    if (!n)
        return;
    bool best = false;
    for (size_t i = 0; i < n; i++)
        best |= !ch[i].matrix || !a2a_algo;
    if (best && a2a_algo)
        printf("collectives chosen (--coll-algo best: the fastest of weft sim --compare's ranking "
               "on each group's fabric; the all-to-alls of matrices: --a2a-algo %s):\n",
               a2a_algo);
    else if (best)
        printf("collectives chosen (--coll-algo best: the fastest of weft sim --compare's ranking "
               "on each group's fabric):\n");
    else
        printf("collectives run (the all-to-alls of matrices: --a2a-algo %s):\n", a2a_algo);
    cli_table tab;
    cli_table_init(&tab, 7);
    for (size_t k = 1; k < 4; k++)
        cli_table_align_right(&tab, k);
    cli_table_align_right(&tab, 5);
    const char *heads[] = {"coll",      "bytes",     "ranks",     "groups",
                           "algorithm", "time (us)", "groups run"};
    for (size_t k = 0; k < 7; k++)
        cli_table_cell(&tab, "%s", heads[k]);
    for (size_t i = 0; i < n; i++) {
        cli_table_cell(&tab, "%s%s", weft_coll_name(ch[i].coll), ch[i].matrix ? "v" : "");
        cli_table_cell(&tab, "%llu", (unsigned long long)ch[i].bytes);
        cli_table_cell(&tab, "%u", ch[i].ranks);
        cli_table_cell(&tab, "%u", ch[i].groups);
        cli_table_cell(&tab, "%s", ch[i].algo);
        cli_table_cell(&tab, "%.3f", ch[i].time_s * 1e6);
        cli_table_cell(&tab, "%s", ch[i].groups == 1 ? "-" : ch[i].together ? "together" : "alone");
    }
    cli_table_print(&tab, stdout, "  ");
    cli_table_fini(&tab);
}

void cli_step_choices_json(cli_json *j, const weft_work_ctx *c)
{
    size_t n;
    const weft_work_choice *ch = weft_work_choices(c, &n);
    cli_json_key(j, "chosen");
    cli_json_begin_array(j);
    for (size_t i = 0; i < n; i++) {
        cli_json_begin_object(j);
        cli_json_kv_string(j, "coll", weft_coll_name(ch[i].coll));
        cli_json_kv_bool(j, "matrix", ch[i].matrix);
        cli_json_kv_uint(j, "bytes", ch[i].bytes);
        cli_json_kv_uint(j, "ranks", ch[i].ranks);
        cli_json_kv_uint(j, "groups", ch[i].groups);
        cli_json_kv_string(j, "algo", ch[i].algo);
        cli_json_kv_double(j, "time_s", ch[i].time_s);
        cli_json_kv_bool(j, "together", ch[i].together);
        cli_json_end_object(j);
    }
    cli_json_end_array(j);
}
