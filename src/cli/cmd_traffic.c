/* weft traffic moe | uniform | show (embedding: traffic_emb.c): traffic matrices (weft/traffic.h).
 * The generators and statistics are the library's; this file reads flags,
 * writes the matrix through the atomic output (-o) and prints. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/flagvals.h"
#include "cli/json.h"
#include "cli/outfile.h"
#include "cli/sizes.h"
#include "cli/table.h"
#include "cli/traffic_emb.h"
#include "cli/traffic_file.h"
#include "weft/traffic.h"

/* A whole number in [lo, hi] from flag's value, or the usage error. */
static int flag_uint(const cli_syntax *syn, const char *flag, const char *text, uint64_t lo,
                     uint64_t hi, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (*text < '0' || *text > '9' || *end || errno || v < lo || v > hi)
        return cli_usage_error(syn,
                               "bad %s '%s': expected a whole number from %" PRIu64 " to %" PRIu64,
                               flag, text, lo, hi);
    *out = v;
    return CLI_EXIT_OK;
}

/* A required whole-number flag. */
static int need_uint(const cli_syntax *syn, const cli_args *a, const char *name, uint64_t lo,
                     uint64_t hi, uint64_t *out)
{
    const char *v = cli_args_get(a, name);
    char flag[40];
    snprintf(flag, sizeof flag, "--%s", name);
    if (!v)
        return cli_usage_error(syn, "missing %s", flag);
    return flag_uint(syn, flag, v, lo, hi, out);
}

/* ---- weft traffic uniform ------------------------------------------------ */

static const cli_opt uniform_opts[] = {
    {"ranks", 'n', "N", "number of ranks (1 to 16384)"},
    {"size", 's', "SIZE",
     "bytes each rank sends in all (nccl-tests' alltoall size), a multiple of N"},
    {"output", 'o', "FILE", "write the matrix to FILE (atomically) instead of stdout"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup uniform_group = {"options", uniform_opts, false};

static const cli_syntax uniform_syntax = {
    .path = "weft traffic uniform",
    .args = "--ranks N --size SIZE [-o FILE]",
    .about = "Writes the matrix of a uniform all-to-all: every rank sends SIZE/N bytes to\n"
             "every rank, itself included (nccl-tests' alltoall with SIZE bytes per rank).\n"
             "SIZE must be a multiple of N so that every entry is a whole number of bytes.\n"
             "The format is in docs/traffic-format.md.\n",
    .groups = {&uniform_group},
};

static int cmd_uniform(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&uniform_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    uint64_t n, size;
    const char *st = cli_args_get(&a, "size");
    rc = need_uint(&uniform_syntax, &a, "ranks", 1, WEFT_TRAFFIC_MAX_RANKS, &n);
    if (!rc && !st)
        rc = cli_usage_error(&uniform_syntax, "missing --size");
    if (!rc)
        rc = cli_flag_size(&uniform_syntax, "--size", st, UINT64_MAX, &size);
    if (rc)
        goto free_args;
    weft_diag d;
    weft_diag_clear(&d);
    weft_traffic t;
    weft_err e = weft_traffic_uniform((uint32_t)n, size, &t, &d);
    if (e) {
        rc = cli_fail(e, &d);
        goto free_args;
    }
    char comment[128];
    snprintf(comment, sizeof comment,
             "uniform all-to-all: %" PRIu64 " ranks, %" PRIu64 " bytes per rank", n, size);
    rc = cli_traffic_write(cli_args_get(&a, "output"), &t, comment);
    weft_traffic_free(&t);
free_args:
    cli_args_fini(&a);
    return rc;
}

/* ---- weft traffic moe ---------------------------------------------------- */

static const cli_opt moe_opts[] = {
    {"ranks", 'n', "N", "number of ranks (1 to 16384)"},
    {"experts", 0, "E", "number of experts, spread over the ranks in blocks"},
    {"topk", 0, "K", "distinct experts each token goes to (1 to E)"},
    {"tokens", 0, "T", "tokens per rank"},
    {"hidden-bytes", 0, "H", "bytes per token sent to one expert (a size: 8K, 14336)"},
    {"skew", 0, "uniform|zipf:S",
     "expert popularity: uniform (default) or zipf with exponent S (0 to 8, 3 decimals)"},
    {"seed", 0, "S", "seed of the random routing (default 0)"},
    {"combine", 0, NULL, "write the combine matrix (the transpose: experts send back)"},
    {"output", 'o', "FILE", "write the matrix to FILE (atomically) instead of stdout"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup moe_group = {"options", moe_opts, false};

static const cli_syntax moe_syntax = {
    .path = "weft traffic moe",
    .args = "--ranks N --experts E --topk K --tokens T --hidden-bytes H [--skew uniform|zipf:S] "
            "[--seed S] [--combine] [-o FILE]",
    .about = "Writes the traffic matrix of one expert-parallel MoE dispatch: expert e lives on\n"
             "rank floor(e*N/E) (blocks of E/N experts); each of the T tokens of each rank is\n"
             "routed to K distinct experts drawn by popularity (zipf:S: expert e has weight\n"
             "1/(e+1)^S, so the first ranks are hot); each (token, expert) pair sends H bytes.\n"
             "Every row sums to T*K*H. The same flags and seed give the same matrix on every\n"
             "machine. --combine writes the way back (the transpose). The format and the\n"
             "generator are in docs/traffic-format.md.\n",
    .groups = {&moe_group},
};

/* "uniform" or "zipf:S" (cli_flag_skew). */
static int parse_skew(const char *text, weft_traffic_moe_params *p)
{
    bool zipf = false;
    uint32_t milli = 0;
    int rc = text ? cli_flag_skew(&moe_syntax, "--skew", text, &zipf, &milli) : CLI_EXIT_OK;
    p->skew = zipf ? WEFT_TRAFFIC_SKEW_ZIPF : WEFT_TRAFFIC_SKEW_UNIFORM;
    p->zipf_milli = milli;
    return rc;
}

static int cmd_moe(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&moe_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    uint64_t n = 0, ne = 0, k = 0, tok = 0, h = 0, seed = 0;
    const char *ht = cli_args_get(&a, "hidden-bytes"), *sd = cli_args_get(&a, "seed");
    weft_traffic_moe_params p = {0};
    rc = need_uint(&moe_syntax, &a, "ranks", 1, WEFT_TRAFFIC_MAX_RANKS, &n);
    if (!rc)
        rc = need_uint(&moe_syntax, &a, "experts", 1, WEFT_TRAFFIC_MAX_EXPERTS, &ne);
    if (!rc)
        rc = need_uint(&moe_syntax, &a, "topk", 1, WEFT_TRAFFIC_MAX_EXPERTS, &k);
    if (!rc)
        rc = need_uint(&moe_syntax, &a, "tokens", 0, UINT64_MAX, &tok);
    if (!rc && !ht)
        rc = cli_usage_error(&moe_syntax, "missing --hidden-bytes");
    if (!rc)
        rc = cli_flag_size(&moe_syntax, "--hidden-bytes", ht, UINT64_MAX, &h);
    if (!rc && sd)
        rc = flag_uint(&moe_syntax, "--seed", sd, 0, UINT64_MAX, &seed);
    if (!rc)
        rc = parse_skew(cli_args_get(&a, "skew"), &p);
    if (!rc && k > ne)
        rc = cli_usage_error(&moe_syntax,
                             "--topk %" PRIu64 " is more than the %" PRIu64
                             " experts (a token goes to K distinct experts)",
                             k, ne);
    if (rc)
        goto free_args;
    p.ranks = (uint32_t)n;
    p.experts = (uint32_t)ne;
    p.topk = (uint32_t)k;
    p.tokens = tok;
    p.hidden_bytes = h;
    p.seed = seed;
    weft_diag d;
    weft_diag_clear(&d);
    weft_traffic t, tr;
    cli_context_object("generating the matrix");
    weft_err e = weft_traffic_moe(&p, &t, &d);
    if (e) {
        rc = cli_fail(e, &d);
        goto free_args;
    }
    bool combine = cli_args_has(&a, "combine");
    if (combine) {
        e = weft_traffic_transpose(&t, &tr, &d);
        weft_traffic_free(&t);
        if (e) {
            rc = cli_fail(e, &d);
            goto free_args;
        }
        t = tr;
    }
    char skew[32] = "uniform";
    if (p.skew == WEFT_TRAFFIC_SKEW_ZIPF)
        snprintf(skew, sizeof skew, "zipf:%" PRIu32 ".%03" PRIu32, p.zipf_milli / 1000,
                 p.zipf_milli % 1000);
    char comment[512];
    snprintf(comment, sizeof comment,
             "MoE %s: %" PRIu64 " ranks, %" PRIu64 " experts, top-%" PRIu64 ", %" PRIu64
             " tokens per rank, %" PRIu64 " bytes per token and expert\n"
             "skew %s, seed %" PRIu64 " (weft traffic moe)",
             combine ? "combine (experts to tokens)" : "dispatch (tokens to experts)", n, ne, k,
             tok, h, skew, seed);
    rc = cli_traffic_write(cli_args_get(&a, "output"), &t, comment);
    weft_traffic_free(&t);
free_args:
    cli_args_fini(&a);
    return rc;
}

/* ---- weft traffic show --------------------------------------------------- */

static const cli_opt show_opts[] = {
    {"json", 0, NULL, "print one JSON object instead of the table"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup show_group = {"options", show_opts, false};

static const cli_syntax show_syntax = {
    .path = "weft traffic show",
    .args = "FILE [--json]",
    .about = "Prints what each rank of a traffic matrix sends and receives, the total, and\n"
             "the skew: the largest per-rank total divided by the mean (1 when balanced).\n"
             "--json: ranks, total, offdiag (bytes that cross ranks), max_entry, send and\n"
             "recv (each an object: max, max_rank, min, mean, skew), and send_bytes and\n"
             "recv_bytes (arrays, one per rank).\n",
    .groups = {&show_group},
    .pos_names = {"FILE"},
    .min_pos = 1,
    .max_pos = 1,
};

static void json_side(cli_json *j, const char *key, uint64_t max, uint32_t max_rank, uint64_t min,
                      double mean, double skew)
{
    cli_json_key(j, key);
    cli_json_begin_object(j);
    cli_json_kv_uint(j, "max", max);
    cli_json_kv_uint(j, "max_rank", max_rank);
    cli_json_kv_uint(j, "min", min);
    cli_json_kv_double(j, "mean", mean);
    cli_json_kv_double(j, "skew", skew);
    cli_json_end_object(j);
}

static int show_json(const weft_traffic *t, const weft_traffic_stats *s)
{
    double mean = (double)s->total / t->ranks;
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_kv_uint(&j, "ranks", t->ranks);
    cli_json_kv_uint(&j, "total", s->total);
    cli_json_kv_uint(&j, "offdiag", s->offdiag);
    cli_json_kv_uint(&j, "max_entry", s->max_entry);
    json_side(&j, "send", s->max_send, s->max_send_rank, s->min_send, mean, s->send_skew);
    json_side(&j, "recv", s->max_recv, s->max_recv_rank, s->min_recv, mean, s->recv_skew);
    cli_json_key(&j, "send_bytes");
    cli_json_begin_array(&j);
    for (uint32_t i = 0; i < t->ranks; i++)
        cli_json_uint(&j, weft_traffic_send(t, i));
    cli_json_end_array(&j);
    cli_json_key(&j, "recv_bytes");
    cli_json_begin_array(&j);
    for (uint32_t i = 0; i < t->ranks; i++)
        cli_json_uint(&j, weft_traffic_recv(t, i));
    cli_json_end_array(&j);
    cli_json_end_object(&j);
    return cli_json_done(&j);
}

static int show_table(const char *path, const weft_traffic *t, const weft_traffic_stats *s)
{
    printf("%s: %" PRIu32 " ranks, %" PRIu64 " bytes in all (%" PRIu64
           " cross ranks), largest entry %" PRIu64 "\n",
           path, t->ranks, s->total, s->offdiag, s->max_entry);
    double mean = (double)s->total / t->ranks;
    printf("send: max %" PRIu64 " (rank %" PRIu32 "), min %" PRIu64 ", mean %.6g, skew %.4f\n",
           s->max_send, s->max_send_rank, s->min_send, mean, s->send_skew);
    printf("recv: max %" PRIu64 " (rank %" PRIu32 "), min %" PRIu64 ", mean %.6g, skew %.4f\n\n",
           s->max_recv, s->max_recv_rank, s->min_recv, mean, s->recv_skew);
    cli_table tab;
    cli_table_init(&tab, 4);
    for (size_t c = 0; c < 4; c++)
        cli_table_align_right(&tab, c);
    cli_table_cell(&tab, "rank");
    cli_table_cell(&tab, "send_bytes");
    cli_table_cell(&tab, "recv_bytes");
    cli_table_cell(&tab, "self_bytes");
    for (uint32_t i = 0; i < t->ranks; i++) {
        cli_table_cell(&tab, "%" PRIu32, i);
        cli_table_cell(&tab, "%" PRIu64, weft_traffic_send(t, i));
        cli_table_cell(&tab, "%" PRIu64, weft_traffic_recv(t, i));
        cli_table_cell(&tab, "%" PRIu64, weft_traffic_at(t, i, i));
    }
    int rc = cli_table_print(&tab, stdout, "");
    cli_table_fini(&tab);
    if (rc) {
        cli_error("out of memory printing the table");
        return CLI_EXIT_INPUT;
    }
    return CLI_EXIT_OK;
}

static int cmd_show(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&show_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    weft_diag d;
    weft_diag_clear(&d);
    weft_traffic t;
    cli_context_object("reading the matrix");
    weft_err e = weft_traffic_load_file(a.pos[0], &t, &d);
    if (e) {
        rc = cli_fail(e, &d);
        goto free_args;
    }
    weft_traffic_stats s;
    weft_traffic_get_stats(&t, &s);
    rc = cli_args_has(&a, "json") ? show_json(&t, &s) : show_table(a.pos[0], &t, &s);
    weft_traffic_free(&t);
free_args:
    cli_args_fini(&a);
    return rc;
}

/* ---- the group ------------------------------------------------------------ */

static const cli_command traffic_commands[] = {
    {"embedding", "write the pooled-embedding all-to-all of sharded tables (DLRM)",
     cli_traffic_embedding},
    {"moe", "write a seeded MoE dispatch (or --combine) matrix", cmd_moe},
    {"uniform", "write the matrix of a uniform all-to-all", cmd_uniform},
    {"show", "per-rank send and receive totals and the skew of a matrix file", cmd_show},
};

static const cli_group traffic_group = {
    .path = "weft traffic",
    .noun = "traffic command",
    .about = "Traffic matrices: the bytes each rank sends to each rank in one all-to-all\n"
             "(alltoallv). A matrix file has N lines of N whole numbers; '#' starts a\n"
             "comment (docs/traffic-format.md). Commands that take --traffic FILE (with\n"
             "--coll alltoall) read this format.\n",
    .commands = traffic_commands,
    .count = sizeof traffic_commands / sizeof *traffic_commands,
};

int cli_cmd_traffic(int argc, char **argv)
{
    return cli_group_run(&traffic_group, argc, argv);
}
