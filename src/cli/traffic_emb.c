/* weft traffic embedding: the pooled-embedding all-to-all of a
 * recommendation model's tables (weft/embedding.h, docs/embedding.md).
 * This file reads the flags, writes the trace (--write-trace) and the
 * matrix through the atomic output, one after the other. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/emb_tables.h"
#include "cli/outfile.h"
#include "cli/traffic_emb.h"
#include "cli/traffic_file.h"
#include "weft/embedding.h"

static const cli_opt emb_opts[] = {
    {"gpus", 'n', "N", "number of GPUs (1 to 16384)"},
    {"batch", 0, "B", "samples per GPU (sample s is an input of GPU s/B)"},
    {"tables", 0, "TABLES", "the tables: [C*]ROWSxDIM{/KEY=VALUE}, comma-separated groups"},
    {"pooling", 0, "P", "rows each sample looks up in a table (default 1; key pool=)"},
    {"dtype", 0, "T", "fp32 (default), fp16, bf16, fp8, int8 or 1 to 8 bytes (key dtype=)"},
    {"skew", 0, "uniform|zipf:S", "row popularity (default uniform; key zipf=S)"},
    {"sharding", 0, "tw|rw|cw:K|dp", "default sharding (default tw; key shard=)"},
    {"rw-dense", 0, NULL, "row-wise as TorchRec's dense reduce-scatter: every block sends B*D*E"},
    {"seed", 0, "S", "seed of the generator (default 0)"},
    {"trace", 0, "FILE", "take the lookups from FILE (sample,table,row lines) instead"},
    {"write-trace", 0, "FILE", "also write the generator's lookups to FILE as a trace"},
    {"backward", 0, NULL, "write the backward (gradient) all-to-all: the transpose"},
    {"output", 'o', "FILE", "write the matrix to FILE (atomically) instead of stdout"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup emb_group = {"options", emb_opts, false};

static const cli_syntax emb_syntax = {
    .path = "weft traffic embedding",
    .args = "--gpus N --batch B --tables TABLES [--pooling P] [--dtype T] [--skew S] "
            "[--sharding SH] [--rw-dense] [--seed S | --trace FILE] [--write-trace FILE] "
            "[--backward] [-o FILE]",
    .about = "Writes the traffic matrix of the forward all-to-all of pooled embeddings (or,\n"
             "with --backward, of their gradients: the transpose) of a recommendation model's\n"
             "embedding tables sharded over N GPUs, B samples per GPU, as TorchRec shards them:\n"
             "  tw    the table on one GPU; it sends each sample's pooled vector (D*E bytes)\n"
             "        to the sample's GPU;\n"
             "  cw:K  K column shards, each on one GPU, each sending its slice of the vector;\n"
             "  rw    blocks of ceil(R/N) rows, block o on GPU o; the partial sums are\n"
             "        reduce-scattered: D*E bytes from block o's GPU for each sample whose bag\n"
             "        holds one of its rows (--rw-dense: from every GPU for every sample);\n"
             "  dp    a copy on every GPU: no all-to-all (the gradient all-reduce of R*D*E\n"
             "        bytes is written in the header).\n"
             "Table-wise tables and column shards go round-robin over the GPUs in table order.\n"
             "TABLES is groups [C*]ROWSxDIM{/KEY=VALUE}, keys pool, dtype, zipf and shard:\n"
             "'26*1Mx128/pool=20,2*10Kx64/shard=cw:4'. The lookups are drawn by a seeded\n"
             "generator (each table's rows uniform or zipf) or read from --trace FILE\n"
             "(docs/embedding.md). The same flags and seed give the same matrix everywhere.\n",
    .groups = {&emb_group},
};

/* A whole number in [lo, hi] from flag's value, or the usage error. */
static int flag_uint(const char *flag, const char *text, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (*text < '0' || *text > '9' || *end || errno || v < lo || v > hi)
        return cli_usage_error(&emb_syntax,
                               "bad %s '%s': expected a whole number from %" PRIu64 " to %" PRIu64,
                               flag, text, lo, hi);
    *out = v;
    return CLI_EXIT_OK;
}

/* The default table of the flags (--pooling, --dtype, --skew, --sharding). */
static int read_defaults(const cli_args *a, weft_emb_table *def)
{
    *def = (weft_emb_table){.pooling = 1, .dtype_bytes = 4, .sharding = WEFT_EMB_TW};
    const char *v;
    uint64_t n = 0;
    if ((v = cli_args_get(a, "pooling"))) {
        int rc = flag_uint("--pooling", v, 0, WEFT_EMB_MAX_POOLING, &n);
        if (rc)
            return rc;
        def->pooling = (uint32_t)n;
    }
    if ((v = cli_args_get(a, "dtype")) && !cli_emb_dtype_parse(v, &def->dtype_bytes))
        return cli_usage_error(&emb_syntax,
                               "bad --dtype '%s': expected fp32, fp16, bf16, fp8, "
                               "int8 or a number of bytes from 1 to 8",
                               v);
    if ((v = cli_args_get(a, "skew")) && strcmp(v, "uniform") != 0 &&
        (strncmp(v, "zipf:", 5) != 0 || !cli_emb_milli_parse(v + 5, &def->zipf_milli)))
        return cli_usage_error(&emb_syntax,
                               "bad --skew '%s': expected uniform or zipf:S with S "
                               "from 0 to 8 (at most 3 decimals, e.g. zipf:1.2)",
                               v);
    if ((v = cli_args_get(a, "sharding")) && !cli_emb_sharding_parse(v, def))
        return cli_usage_error(&emb_syntax,
                               "bad --sharding '%s': expected tw, rw, dp or cw:K (K column "
                               "shards, 1 to the dimension)",
                               v);
    return CLI_EXIT_OK;
}

/* "tw 3, rw 2, cw 1" for the header. */
static void sharding_counts(const weft_emb_workload *w, char *buf, size_t len)
{
    uint32_t c[4] = {0};
    for (uint32_t t = 0; t < w->ntables; t++)
        c[w->tables[t].sharding]++;
    size_t used = 0;
    buf[0] = 0;
    for (int s = 0; s < 4; s++)
        if (c[s] && used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s %" PRIu32, used ? ", " : "",
                                     weft_emb_sharding_name((weft_emb_sharding)s), c[s]);
}

static int write_trace(const char *path, const weft_emb_workload *w)
{
    cli_out o;
    int rc = cli_out_open(&o, path);
    if (rc)
        return rc;
    char comment[256];
    snprintf(comment, sizeof comment,
             "embedding lookups: %" PRIu32 " GPUs x %" PRIu64 " samples, %" PRIu32
             " tables, seed %" PRIu64 " (weft traffic embedding)",
             w->gpus, w->batch, w->ntables, w->seed);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_emb_trace_write(o.f, w, comment, &d);
    if (e) {
        cli_out_close(&o, false);
        return cli_fail(e, &d);
    }
    return cli_out_close(&o, true);
}

/* The matrix of w from the generator or the trace at path. */
static weft_err build(const weft_emb_workload *w, const char *trace, weft_emb_result *r,
                      weft_diag *d)
{
    if (!trace)
        return weft_emb_forward(w, r, d);
    weft_emb_acc *a;
    weft_err e = weft_emb_acc_new(w, &a, d);
    if (e)
        return e;
    e = weft_emb_trace_load_file(trace, a, d);
    if (!e)
        e = weft_emb_acc_finish(a, r, d);
    weft_emb_acc_free(a);
    return e;
}

int cli_traffic_embedding(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&emb_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    weft_emb_table *tabs = NULL, def;
    uint64_t n = 0, b = 0, seed = 0;
    const char *v, *trace = cli_args_get(&a, "trace"), *wtrace = cli_args_get(&a, "write-trace");
    if (!(v = cli_args_get(&a, "gpus")))
        rc = cli_usage_error(&emb_syntax, "missing --gpus");
    else
        rc = flag_uint("--gpus", v, 1, WEFT_TRAFFIC_MAX_RANKS, &n);
    if (!rc && !(v = cli_args_get(&a, "batch")))
        rc = cli_usage_error(&emb_syntax, "missing --batch");
    else if (!rc)
        rc = flag_uint("--batch", v, 1, UINT64_MAX / 2, &b);
    if (!rc && (v = cli_args_get(&a, "seed")))
        rc = flag_uint("--seed", v, 0, UINT64_MAX, &seed);
    if (!rc)
        rc = read_defaults(&a, &def);
    if (!rc && trace && (cli_args_has(&a, "seed") || wtrace))
        rc = cli_usage_error(&emb_syntax,
                             "--trace takes the lookups from a file: %s means the "
                             "generator",
                             wtrace ? "--write-trace" : "--seed");
    uint32_t nt = 0;
    if (!rc && !(v = cli_args_get(&a, "tables")))
        rc = cli_usage_error(&emb_syntax, "missing --tables");
    else if (!rc) {
        char why[512];
        if (!cli_emb_tables_parse(v, &def, &tabs, &nt, why, sizeof why))
            rc = cli_usage_error(&emb_syntax, "bad --tables '%s': %s", v, why);
    }
    if (rc)
        goto free_args;
    weft_emb_workload w = {.gpus = (uint32_t)n,
                           .batch = b,
                           .ntables = nt,
                           .tables = tabs,
                           .seed = seed,
                           .rw_dense = cli_args_has(&a, "rw-dense")};
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_emb_check(&w, &d);
    if (e) {
        rc = cli_fail(e, &d);
        goto free_args;
    }
    if (wtrace && (rc = write_trace(wtrace, &w)))
        goto free_args;
    weft_emb_result r;
    cli_context_object(trace ? "reading the trace" : "generating the lookups");
    e = build(&w, trace, &r, &d);
    if (e) {
        rc = cli_fail(e, &d);
        goto free_args;
    }
    bool back = cli_args_has(&a, "backward");
    if (back) {
        weft_traffic tr;
        e = weft_traffic_transpose(&r.forward, &tr, &d);
        if (e) {
            rc = cli_fail(e, &d);
            weft_emb_result_free(&r);
            goto free_args;
        }
        weft_traffic_free(&r.forward);
        r.forward = tr;
    }
    char shards[128], source[600], comment[1024];
    sharding_counts(&w, shards, sizeof shards);
    if (trace)
        snprintf(source, sizeof source, "trace %s", trace);
    else
        snprintf(source, sizeof source, "seed %" PRIu64, seed);
    snprintf(comment, sizeof comment,
             "embedding %s: %" PRIu64 " GPUs, %" PRIu64 " samples per GPU, %" PRIu32
             " tables (%s%s)\n"
             "%" PRIu64 " lookups (%s); data-parallel gradient all-reduce %" PRIu64
             " bytes (weft traffic embedding)",
             back ? "backward (pooled gradients to the shards)"
                  : "forward (pooled embeddings to the samples' GPUs)",
             n, b, nt, shards, w.rw_dense ? ", row-wise dense" : "", r.lookups, source,
             r.allreduce_bytes);
    rc = cli_traffic_write(cli_args_get(&a, "output"), &r.forward, comment);
    weft_emb_result_free(&r);
free_args:
    free(tabs);
    cli_args_fini(&a);
    return rc;
}
