/* weft step --model dlrm | dlrm-mlperf (cli/step_dlrm.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/emb_tables.h"
#include "cli/fabric.h"
#include "cli/flagvals.h"
#include "cli/json.h"
#include "cli/outfile.h"
#include "cli/step_choices.h"
#include "cli/step_dlrm.h"
#include "cli/table.h"
#include "weft/dlrm.h"

static const cli_opt dlrm_opts[] = {
    {"tables", 0, "SPEC",
     "embedding tables, as weft traffic embedding --tables (docs/embedding.md)"},
    {"sharding", 0, "PLAN", "tw, rw, cw:K or dp for every table without /shard= (default tw)"},
    {"rw-dense", 0, NULL, "row-wise as TorchRec's dense reduce-scatter (B x D to every GPU)"},
    {"dense-features", 0, "N", "inputs of the bottom MLP (default 13, Criteo's)"},
    {"bottom-mlp", 0, "W-W-..", "bottom MLP widths; the last is the tables' dimension"},
    {"top-mlp", 0, "W-W-..", "top MLP widths"},
    {"interaction", 0, "dot|dcn:L:R", "dot products (default) or L DCNv2 cross layers of rank R"},
    {"bound", 0, NULL, "also the all-to-alls' exact bounds (weft bound --coll alltoall)"},
    {"emb-cache", 0, "ROWS|FRAC[,..]",
     "Herald's cache: ROWS rows a GPU, or FRAC (0.01) of the sharded tables' rows; "
     "policy=lru|lfu, staleness=S (steps, 0 never stale; default 1), warm=K (steps before "
     "the measured one; default 1)"},
    {"placement", 0, "random|herald",
     "samples to GPUs as drawn (default) or Herald's location-aware "
     "assignment"},
    {"overlap", 0, NULL,
     "overlap the embedding all-to-alls with the bottom MLP (TorchRec's "
     "lazily awaited output distribution)"},
    {"a2a-algo", 0, "NAME",
     "the embedding all-to-alls as schedule NAME's alltoallv plan of each "
     "matrix (direct, hier, pairwise, bruck, flash[:K], optimal; default "
     "NCCL's direct copies, or with --coll-algo best the fastest)"},
    {NULL, 0, NULL, NULL},
};

const cli_optgroup cli_dlrm_options = {
    "DLRM (--model dlrm or dlrm-mlperf; also --global-batch-size, "
    "--seed, --fp16, --json, --trace, --sweep)",
    dlrm_opts, false};

bool cli_step_is_dlrm(const char *model)
{
    return model && (!strcmp(model, "dlrm") || !strcmp(model, "dlrm-mlperf"));
}

const char *cli_step_dlrm_flag(const cli_args *a)
{
    for (const cli_opt *o = dlrm_opts; o->name; o++)
        if (cli_args_has(a, o->name))
            return o->name;
    return NULL;
}

#define MB 1e6
#define MS 1e3

static int widths(const cli_syntax *syn, const char *flag, const char *v, uint32_t *w, uint32_t *n)
{
    *n = 0;
    const char *p = v;
    for (;;) {
        char *end;
        errno = 0;
        unsigned long long x = strtoull(p, &end, 10);
        if (end == p || *p == '-' || *p == '+' || errno || x < 1 || x > 1000000 ||
            *n == WEFT_DLRM_MAX_LAYERS || (*end && *end != '-'))
            return cli_usage_error(syn,
                                   "bad --%s '%s': 1 to %u widths from 1 to 1000000 joined by '-' "
                                   "(512-256-128)",
                                   flag, v, WEFT_DLRM_MAX_LAYERS);
        w[(*n)++] = (uint32_t)x;
        if (!*end)
            return CLI_EXIT_OK;
        p = end + 1;
    }
}

/* --emb-cache ROWS|FRAC[,policy=lru|lfu][,staleness=S][,warm=K]. */
static int read_cache(const cli_syntax *syn, const char *v, const weft_emb_workload *w,
                      weft_emb_herald_params *p)
{
    char buf[256];
    if (strlen(v) >= sizeof buf)
        return cli_usage_error(syn, "bad --emb-cache: longer than %zu characters", sizeof buf - 1);
    strcpy(buf, v);
    char *save = NULL;
    char *tok = strtok_r(buf, ",", &save);
    if (!tok)
        return cli_usage_error(syn, "bad --emb-cache '%s': ROWS or FRACTION first", v);
    char *end;
    errno = 0;
    if (strchr(tok, '.')) {
        double f = strtod(tok, &end);
        if (*end || errno || !(f > 0 && f <= 1))
            return cli_usage_error(syn, "bad --emb-cache '%s': '%s' is not a fraction in (0, 1]", v,
                                   tok);
        uint64_t rows = 0;
        for (uint32_t t = 0; t < w->ntables; t++)
            if (w->tables[t].sharding != WEFT_EMB_DP)
                rows += w->tables[t].rows;
        double r = f * (double)rows;
        p->rows_per_gpu = r < 1 ? 1 : (uint64_t)(r + 0.5);
    } else {
        unsigned long long x = strtoull(tok, &end, 10);
        if (!*tok || *end || errno || *tok == '-' || *tok == '+' || x > (1ull << 32))
            return cli_usage_error(syn,
                                   "bad --emb-cache '%s': '%s' is not a number of rows (0 to 2^32) "
                                   "nor a fraction (0.01)",
                                   v, tok);
        p->rows_per_gpu = x;
    }
    while ((tok = strtok_r(NULL, ",", &save))) {
        unsigned long long x;
        int used = 0;
        if (!strcmp(tok, "policy=lru")) {
            p->policy = WEFT_EMB_LRU;
        } else if (!strcmp(tok, "policy=lfu")) {
            p->policy = WEFT_EMB_LFU;
        } else if (sscanf(tok, "staleness=%llu%n", &x, &used) == 1 && !tok[used] &&
                   tok[10] != '-' && tok[10] != '+' && x <= 1000000) {
            p->staleness = x;
        } else if (sscanf(tok, "warm=%llu%n", &x, &used) == 1 && !tok[used] && tok[5] != '-' &&
                   tok[5] != '+' && x <= 1000) {
            p->warm_steps = (uint32_t)x;
        } else {
            return cli_usage_error(syn,
                                   "bad --emb-cache '%s': '%s': expected policy=lru|lfu, "
                                   "staleness=S (0 to 1000000) or warm=K (0 to 1000)",
                                   v, tok);
        }
    }
    return CLI_EXIT_OK;
}

/* The model from --model and the flags; *tabs (free()) holds the tables. */
static int read_dlrm(const cli_args *a, const cli_syntax *syn, uint32_t ranks, weft_dlrm *m,
                     weft_emb_table **tabs)
{
    const char *name = cli_args_get(a, "model");
    bool mlperf = !strcmp(name, "dlrm-mlperf");
    weft_emb_table def = {.pooling = 1, .dtype_bytes = 4, .sharding = WEFT_EMB_TW, .col_shards = 1};
    const char *v = cli_args_get(a, "sharding");
    if (v && !cli_emb_sharding_parse(v, &def))
        return cli_usage_error(syn, "bad --sharding '%s': tw, rw, dp or cw:K", v);
    memset(m, 0, sizeof *m);
    uint32_t nt = 0;
    if (mlperf) {
        weft_emb_table pre[WEFT_DLRM_MLPERF_TABLES];
        weft_dlrm_mlperf(m, pre);
        *tabs = malloc(sizeof pre);
        if (!*tabs)
            return cli_fail(WEFT_ENOMEM, NULL);
        memcpy(*tabs, pre, sizeof pre);
        nt = WEFT_DLRM_MLPERF_TABLES;
        for (uint32_t t = 0; t < nt; t++) {
            (*tabs)[t].sharding = def.sharding;
            (*tabs)[t].col_shards = def.col_shards;
        }
    } else {
        snprintf(m->name, sizeof m->name, "dlrm");
        m->dense_features = 13;
    }
    if ((v = cli_args_get(a, "tables"))) {
        free(*tabs);
        *tabs = NULL;
        char why[256];
        if (!cli_emb_tables_parse(v, &def, tabs, &nt, why, sizeof why))
            return cli_usage_error(syn, "bad --tables '%s': %s", v, why);
    } else if (!mlperf) {
        return cli_usage_error(syn, "--model dlrm needs --tables SPEC");
    }
    int rc;
    if ((v = cli_args_get(a, "bottom-mlp")) &&
        (rc = widths(syn, "bottom-mlp", v, m->bottom, &m->nbottom)))
        return rc;
    if ((v = cli_args_get(a, "top-mlp")) && (rc = widths(syn, "top-mlp", v, m->top, &m->ntop)))
        return rc;
    if (!m->nbottom || !m->ntop)
        return cli_usage_error(syn, "--model dlrm needs --bottom-mlp and --top-mlp");
    uint64_t x = m->dense_features;
    if ((rc = cli_flag_whole(syn, a, "dense-features", 1, 1000000, &x)))
        return rc;
    m->dense_features = (uint32_t)x;
    if ((v = cli_args_get(a, "interaction"))) {
        unsigned l = 0, r = 0;
        int used = 0;
        if (!strcmp(v, "dot")) {
            m->interaction = WEFT_DLRM_DOT;
        } else if (sscanf(v, "dcn:%u:%u%n", &l, &r, &used) == 2 && !v[used] && l >= 1 && l <= 64 &&
                   r >= 1 && r <= 65536) {
            m->interaction = WEFT_DLRM_DCN;
            m->dcn_layers = l;
            m->dcn_rank = r;
        } else {
            return cli_usage_error(syn,
                                   "bad --interaction '%s': dot, or dcn:L:R (1 to 64 layers of "
                                   "rank 1 to 65536)",
                                   v);
        }
    }
    uint64_t gb = mlperf ? WEFT_DLRM_MLPERF_BATCH : 0;
    if ((rc = cli_flag_whole(syn, a, "global-batch-size", 1, 1ull << 40, &gb)))
        return rc;
    if (!gb)
        return cli_usage_error(syn, "--model dlrm needs --global-batch-size N (samples per step)");
    if (gb % ranks)
        return cli_usage_error(
            syn, "--global-batch-size %llu: must be a multiple of the fabric's %u GPUs",
            (unsigned long long)gb, ranks);
    uint64_t seed = 0;
    if ((rc = cli_flag_whole(syn, a, "seed", 0, UINT64_MAX, &seed)))
        return rc;
    m->emb = (weft_emb_workload){ranks, gb / ranks, nt, *tabs, seed, cli_args_has(a, "rw-dense")};
    m->prec = cli_args_has(a, "fp16") ? WEFT_PREC_FP16 : WEFT_PREC_BF16;
    m->bound = cli_args_has(a, "bound");
    m->overlap = cli_args_has(a, "overlap");
    m->herald = (weft_emb_herald_params){0, 1, WEFT_EMB_LRU, WEFT_EMB_PLACE_RANDOM, 1};
    if ((v = cli_args_get(a, "emb-cache")) && (rc = read_cache(syn, v, &m->emb, &m->herald)))
        return rc;
    if ((v = cli_args_get(a, "placement"))) {
        if (!strcmp(v, "herald"))
            m->herald.placement = WEFT_EMB_PLACE_HERALD;
        else if (strcmp(v, "random"))
            return cli_usage_error(syn, "bad --placement '%s': random or herald", v);
    }
    if ((m->herald.rows_per_gpu || m->herald.placement) && m->emb.rw_dense)
        return cli_usage_error(syn, "--emb-cache and --placement herald need the sparse row-wise "
                                    "exchange: drop --rw-dense");
    return CLI_EXIT_OK;
}

static void plan_text(const weft_dlrm *m, char *buf, size_t n)
{
    uint32_t cnt[4] = {0, 0, 0, 0};
    for (uint32_t t = 0; t < m->emb.ntables; t++)
        cnt[m->emb.tables[t].sharding]++;
    size_t k = 0;
    buf[0] = 0;
    for (uint32_t s = 0; s < 4; s++)
        if (cnt[s] && k < n)
            k += (size_t)snprintf(buf + k, n - k, "%s%s %u", k ? ", " : "",
                                  weft_emb_sharding_name((weft_emb_sharding)s), cnt[s]);
}

static void json_result(cli_json *j, const weft_dlrm_result *r)
{
    cli_json_kv_double(j, "step_s", r->step_s);
    cli_json_kv_double(j, "lookup_fwd_s", r->lookup_fwd_s);
    cli_json_kv_double(j, "a2a_fwd_s", r->a2a_fwd_s);
    cli_json_kv_double(j, "dense_fwd_s", r->dense_fwd_s);
    cli_json_kv_double(j, "dense_bwd_s", r->dense_bwd_s);
    cli_json_kv_double(j, "a2a_bwd_s", r->a2a_bwd_s);
    cli_json_kv_double(j, "lookup_bwd_s", r->lookup_bwd_s);
    cli_json_kv_double(j, "dense_allreduce_s", r->dense_ar_s);
    cli_json_kv_double(j, "emb_allreduce_s", r->emb_ar_s);
    cli_json_kv_double(j, "a2a_fwd_bound_s", r->a2a_fwd_bound_s);
    cli_json_kv_double(j, "a2a_bwd_bound_s", r->a2a_bwd_bound_s);
    cli_json_kv_uint(j, "dense_params", r->dense_params);
    cli_json_kv_uint(j, "dense_allreduce_bytes", r->dense_ar_bytes);
    cli_json_kv_uint(j, "emb_allreduce_bytes", r->emb_ar_bytes);
    cli_json_kv_uint(j, "a2a_bytes", r->a2a_bytes);
    cli_json_kv_uint(j, "a2a_max_send", r->a2a_max_send);
    cli_json_kv_uint(j, "lookups", r->lookups);
    cli_json_kv_uint(j, "busiest_gpu", r->busiest);
    cli_json_kv_uint(j, "lookup_fwd_bytes", r->lookup_fwd_bytes);
    cli_json_kv_uint(j, "lookup_bwd_bytes", r->lookup_bwd_bytes);
    cli_json_kv_uint(j, "table_bytes_max", r->table_bytes_max);
    cli_json_kv_uint(j, "cache_bytes", r->cache_bytes);
    cli_json_kv_bool(j, "fits", r->fits);
    cli_json_kv_bool(j, "overlap", r->overlap);
    cli_json_kv_double(j, "a2a_fwd_hidden_s", r->a2a_fwd_hidden_s);
    cli_json_kv_double(j, "a2a_bwd_hidden_s", r->a2a_bwd_hidden_s);
    if (!r->herald)
        return;
    cli_json_key(j, "herald");
    cli_json_begin_object(j);
    cli_json_kv_double(j, "step_base_s", r->step_base_s);
    cli_json_kv_double(j, "a2a_fwd_base_s", r->a2a_fwd_base_s);
    cli_json_kv_double(j, "a2a_bwd_base_s", r->a2a_bwd_base_s);
    cli_json_kv_uint(j, "a2a_bytes_base", r->a2a_bytes_base);
    cli_json_kv_uint(j, "a2a_bwd_bytes", r->a2a_bwd_bytes);
    cli_json_kv_uint(j, "transfers_base", r->transfers_base);
    cli_json_kv_uint(j, "transfers", r->transfers);
    cli_json_kv_double(j, "transfers_avoided", (double)r->transfers_base - (double)r->transfers);
    cli_json_kv_uint(j, "remote_lookups", r->remote);
    cli_json_kv_uint(j, "hits", r->hits);
    cli_json_kv_uint(j, "stale", r->stale);
    cli_json_kv_uint(j, "admitted", r->admitted);
    cli_json_kv_bool(j, "placed", r->placed);
    cli_json_kv_uint(j, "samples_moved", r->samples_moved);
    cli_json_end_object(j);
}

static void print_result(const char *spec, const weft_gpu *g, const weft_dlrm *m,
                         const weft_dlrm_result *r)
{
    char plan[128];
    plan_text(m, plan, sizeof plan);
    printf("%s on %u x %s (%s): batch %llu per GPU, %u tables (%s)\n", m->name, m->emb.gpus,
           g->name, spec, (unsigned long long)m->emb.batch, m->emb.ntables, plan);
    printf("step %.3f ms\n", r->step_s * MS);
    printf("  lookup fwd       %9.3f ms  GPU %u: %.1f MB of rows read, pooled vectors written\n",
           r->lookup_fwd_s * MS, r->busiest, r->lookup_fwd_bytes / MB);
    printf("  all-to-all fwd   %9.3f ms  %.1f MB between GPUs, the busiest sends %.1f MB",
           r->a2a_fwd_s * MS, r->a2a_bytes / MB, r->a2a_max_send / MB);
    if (m->bound && r->a2a_bytes)
        printf("; bound %.3f ms", r->a2a_fwd_bound_s * MS);
    if (r->herald)
        printf("; %.3f ms without cache and placement", r->a2a_fwd_base_s * MS);
    if (r->overlap)
        printf("; %.3f ms hidden behind the bottom MLP", r->a2a_fwd_hidden_s * MS);
    printf("\n  dense fwd        %9.3f ms  %llu parameters (bottom, interaction, top)\n",
           r->dense_fwd_s * MS, (unsigned long long)r->dense_params);
    printf("  dense bwd        %9.3f ms\n", r->dense_bwd_s * MS);
    printf("  all-to-all bwd   %9.3f ms", r->a2a_bwd_s * MS);
    if (r->herald)
        printf("  %.1f MB between GPUs", r->a2a_bwd_bytes / MB);
    if (m->bound && r->a2a_bytes)
        printf("  bound %.3f ms", r->a2a_bwd_bound_s * MS);
    if (r->herald)
        printf("; %.3f ms without cache and placement", r->a2a_bwd_base_s * MS);
    if (r->overlap)
        printf("; %.3f ms hidden behind the bottom MLP", r->a2a_bwd_hidden_s * MS);
    printf("\n  lookup bwd       %9.3f ms  %.1f MB (rows read and written)\n", r->lookup_bwd_s * MS,
           r->lookup_bwd_bytes / MB);
    printf("  dense all-reduce %9.3f ms  %.1f MB of fp32 gradients\n", r->dense_ar_s * MS,
           r->dense_ar_bytes / MB);
    printf("  table all-reduce %9.3f ms  %.1f MB of data-parallel tables' gradients\n",
           r->emb_ar_s * MS, r->emb_ar_bytes / MB);
    printf("tables: %.2f GiB on the fullest GPU", r->table_bytes_max / 1073741824.0);
    if (r->cache_bytes)
        printf(", %.2f GiB of cache", r->cache_bytes / 1073741824.0);
    printf(" (%s the %s's %.0f GiB); %llu lookups a step\n", r->fits ? "fits" : "does not fit",
           g->name, g->hbm_bytes / 1073741824.0, (unsigned long long)r->lookups);
    if (!r->herald)
        return;
    const weft_emb_herald_params *h = &m->herald;
    printf("herald: ");
    if (h->rows_per_gpu)
        printf("cache of %llu row%s a GPU (%s, staleness %llu, %u warm-up step%s)",
               (unsigned long long)h->rows_per_gpu, h->rows_per_gpu == 1 ? "" : "s",
               h->policy == WEFT_EMB_LFU ? "lfu" : "lru", (unsigned long long)h->staleness,
               h->warm_steps, h->warm_steps == 1 ? "" : "s");
    else
        printf("no cache");
    if (h->placement == WEFT_EMB_PLACE_HERALD)
        printf(", placement herald (%s, %llu samples moved)\n",
               r->placed ? "kept" : "no better than as drawn",
               (unsigned long long)r->samples_moved);
    else
        printf(", samples as drawn\n");
    double pct = r->transfers_base ? 100.0 * (double)(r->transfers_base - r->transfers) /
                                         (double)r->transfers_base
                                   : 0;
    printf("  forward vectors between GPUs %llu, without %llu: %lld avoided (%.1f %%); %.1f MB, "
           "without %.1f MB\n",
           (unsigned long long)r->transfers, (unsigned long long)r->transfers_base,
           (long long)(r->transfers_base - r->transfers), pct, r->a2a_bytes / MB,
           r->a2a_bytes_base / MB);
    printf("  remote lookups %llu: %llu hits, %llu stale, %llu rows admitted\n",
           (unsigned long long)r->remote, (unsigned long long)r->hits, (unsigned long long)r->stale,
           (unsigned long long)r->admitted);
    printf("  step %.3f ms, without cache and placement %.3f ms (%.3f ms saved)\n", r->step_s * MS,
           r->step_base_s * MS, (r->step_base_s - r->step_s) * MS);
}

/* --sweep: every table under one plan (tw, rw, cw:2, cw:4, dp), then per
 * table: the tables whose gradient is at most the dense gradient
 * data-parallel, the others tw or rw. */
typedef struct swept {
    char name[32];
    weft_dlrm_result r;
} swept;

static int cmp_swept(const void *x, const void *y)
{
    const swept *a = x, *b = y;
    if (a->r.fits != b->r.fits)
        return a->r.fits ? -1 : 1;
    return (a->r.step_s > b->r.step_s) - (a->r.step_s < b->r.step_s);
}

/* The plans of the sweep after tw: every table under one plan, then "dp
 * small" (dense: tw's step, for its dense gradient's bytes). */
enum { SWEEP_PLANS = 7 };

static bool sweep_plan(int plan, uint32_t mind, const weft_emb_table *orig, uint32_t nt,
                       const weft_dlrm_result *dense, weft_emb_table *tb)
{
    if ((plan == 2 && mind < 2) || (plan == 3 && mind < 4))
        return false;
    static const weft_emb_sharding s[] = {WEFT_EMB_TW, WEFT_EMB_RW, WEFT_EMB_CW, WEFT_EMB_CW,
                                          WEFT_EMB_DP, WEFT_EMB_TW, WEFT_EMB_RW};
    for (uint32_t t = 0; t < nt; t++) {
        tb[t] = orig[t];
        tb[t].col_shards = plan == 3 ? 4 : 2;
        tb[t].sharding = s[plan];
        if (plan >= 5 && tb[t].rows * tb[t].dim * tb[t].dtype_bytes <= dense->dense_ar_bytes)
            tb[t].sharding = WEFT_EMB_DP;
    }
    return true;
}

static int run_sweep(weft_work_ctx *ctx, const cli_args *a, const char *spec, const weft_gpu *g,
                     weft_dlrm *m)
{
    static const char *const names[SWEEP_PLANS + 1] = {
        "tw", "rw", "cw:2", "cw:4", "dp", "dp small, tw", "dp small, rw", "planner"};
    uint32_t nt = m->emb.ntables;
    const weft_emb_table *orig = m->emb.tables;
    /* A table array and a model per plan, the planner's last. */
    weft_emb_table *tb = malloc((size_t)(SWEEP_PLANS + 1) * nt * sizeof *tb);
    weft_dlrm *ms = malloc((SWEEP_PLANS + 1) * sizeof *ms);
    const weft_dlrm *mp[SWEEP_PLANS + 1];
    weft_dlrm_result res[SWEEP_PLANS + 1];
    swept out[SWEEP_PLANS + 1];
    size_t n = 0, nb = 0;
    const char *which[SWEEP_PLANS + 1];
    weft_dlrm_plan_info pinfo;
    memset(&pinfo, 0, sizeof pinfo);
    char pmix[128] = "";
    if (!tb || !ms) {
        free(tb);
        free(ms);
        return cli_fail(WEFT_ENOMEM, NULL);
    }
    uint32_t mind = UINT32_MAX;
    for (uint32_t t = 0; t < nt; t++)
        mind = orig[t].dim < mind ? orig[t].dim : mind;
    weft_diag d;
    weft_diag_clear(&d);
    /* tw first (the "dp small" plans need its dense gradient's bytes),
     * then the other plans at once (weft_dlrm_steps: their simulations on
     * threads), then the planner's search and its plan, in the order the
     * steps ran one by one (a ranked all-to-all records its choices in
     * it). */
    weft_dlrm_result dense;
    memset(&dense, 0, sizeof dense);
    sweep_plan(0, mind, orig, nt, &dense, tb);
    ms[0] = *m;
    ms[0].emb.tables = tb;
    weft_err err = weft_dlrm_step(ctx, &ms[0], &dense, &d);
    if (!err) {
        out[n].r = dense;
        snprintf(out[n].name, sizeof out[n].name, "%s", names[0]);
        n++;
        for (int plan = 1; plan < SWEEP_PLANS; plan++) {
            weft_emb_table *pt = tb + (size_t)plan * nt;
            if (!sweep_plan(plan, mind, orig, nt, &dense, pt))
                continue;
            ms[plan] = *m;
            ms[plan].emb.tables = pt;
            which[nb] = names[plan];
            mp[nb++] = &ms[plan];
        }
        err = weft_dlrm_steps(ctx, mp, nb, res, &d);
    }
    /* The planner's per-table plan (weft_dlrm_plan), simulated as the
     * others. */
    weft_emb_table *pt = tb + (size_t)SWEEP_PLANS * nt;
    ms[SWEEP_PLANS] = *m;
    ms[SWEEP_PLANS].emb.tables = pt;
    if (!err && !(err = weft_dlrm_plan(ctx, m, pt, &pinfo, &d)))
        err = weft_dlrm_step(ctx, &ms[SWEEP_PLANS], &res[nb], &d);
    if (!err) {
        which[nb++] = names[SWEEP_PLANS];
        for (size_t i = 0; i < nb; i++) {
            out[n].r = res[i];
            snprintf(out[n].name, sizeof out[n].name, "%s", which[i]);
            n++;
        }
        plan_text(&ms[SWEEP_PLANS], pmix, sizeof pmix);
    }
    free(ms);
    free(tb);
    if (err)
        return cli_fail(err, &d);
    qsort(out, n, sizeof *out, cmp_swept);
    if (cli_args_has(a, "json")) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_begin_object(&j);
        cli_json_kv_string(&j, "model", m->name);
        cli_json_kv_uint(&j, "ranks", m->emb.gpus);
        cli_json_kv_string(&j, "gpu", g->name);
        cli_json_key(&j, "ranked");
        cli_json_begin_array(&j);
        for (size_t i = 0; i < n; i++) {
            cli_json_begin_object(&j);
            cli_json_kv_string(&j, "plan", out[i].name);
            json_result(&j, &out[i].r);
            cli_json_end_object(&j);
        }
        cli_json_end_array(&j);
        cli_json_key(&j, "planner");
        cli_json_begin_object(&j);
        cli_json_kv_string(&j, "tables", pmix);
        cli_json_kv_string(&j, "search", pinfo.exhaustive ? "exhaustive" : "coordinate descent");
        cli_json_kv_uint(&j, "plans_costed", pinfo.evaluated);
        cli_json_kv_double(&j, "cost_s", pinfo.cost_s);
        cli_json_kv_double(&j, "uniform_cost_s", pinfo.uniform_s);
        cli_json_end_object(&j);
        cli_step_choices_json(&j, ctx);
        cli_json_end_object(&j);
        return cli_json_done(&j);
    }
    printf("%s on %u x %s (%s), batch %llu per GPU: sharding plans by step time\n", m->name,
           m->emb.gpus, g->name, spec, (unsigned long long)m->emb.batch);
    bool her = out[0].r.herald;
    size_t cols = her ? 10 : 9;
    cli_table tab;
    cli_table_init(&tab, cols);
    for (size_t k = 1; k < cols; k++)
        cli_table_align_right(&tab, k);
    const char *head[] = {"plan",    "step ms",   "lookup",  "a2a fwd", "dense",
                          "a2a bwd", "allreduce", "GiB/GPU", "fits",    "no cache ms"};
    for (size_t k = 0; k < cols; k++)
        cli_table_cell(&tab, "%s", head[k]);
    for (size_t i = 0; i < n; i++) {
        const weft_dlrm_result *r = &out[i].r;
        cli_table_cell(&tab, "%s", out[i].name);
        cli_table_cell(&tab, "%.3f", r->step_s * MS);
        cli_table_cell(&tab, "%.3f", (r->lookup_fwd_s + r->lookup_bwd_s) * MS);
        cli_table_cell(&tab, "%.3f", r->a2a_fwd_s * MS);
        cli_table_cell(&tab, "%.3f", (r->dense_fwd_s + r->dense_bwd_s) * MS);
        cli_table_cell(&tab, "%.3f", r->a2a_bwd_s * MS);
        cli_table_cell(&tab, "%.3f", (r->dense_ar_s + r->emb_ar_s) * MS);
        cli_table_cell(&tab, "%.2f", (r->table_bytes_max + r->cache_bytes) / 1073741824.0);
        cli_table_cell(&tab, "%s", r->fits ? "yes" : "no");
        if (her)
            cli_table_cell(&tab, "%.3f", r->step_base_s * MS);
    }
    cli_table_print(&tab, stdout, "  ");
    cli_table_fini(&tab);
    printf("planner: %s (%s over %llu plans), its model's embedding time %.3f ms, the best "
           "uniform plan's %.3f ms\n",
           pmix, pinfo.exhaustive ? "exhaustive" : "coordinate descent",
           (unsigned long long)pinfo.evaluated, pinfo.cost_s * MS, pinfo.uniform_s * MS);
    cli_step_choices_print(ctx, cli_args_get(a, "a2a-algo"));
    return CLI_EXIT_OK;
}

int cli_step_dlrm(const cli_args *a, const cli_syntax *syn, const cli_optgroup *const *foreign)
{
    static const char *const allowed[] = {"model", "global-batch-size", "seed", "fp16", "bf16",
                                          NULL};
    for (size_t g = 0; foreign[g]; g++)
        for (const cli_opt *o = foreign[g]->opts; o->name; o++) {
            bool ok = false;
            for (size_t k = 0; allowed[k]; k++)
                ok |= !strcmp(allowed[k], o->name);
            if (!ok && cli_args_has(a, o->name))
                return cli_usage_error(syn, "--%s does not apply to --model %s", o->name,
                                       cli_args_get(a, "model"));
        }
    const char *spec = cli_args_get(a, "fabric");
    if (!spec)
        return cli_usage_error(syn, "missing --fabric SPEC");
    weft_gpu g;
    const char *gname = cli_args_get(a, "gpu");
    if (!gname)
        return cli_usage_error(syn, "--model %s needs --gpu NAME", cli_args_get(a, "model"));
    if (!weft_gpu_find(gname, &g))
        return cli_usage_error(syn, "unknown --gpu '%s'", gname);
    weft_topo *t = NULL;
    int rc = cli_load_fabric(a, spec, &t);
    if (rc)
        return rc;
    weft_dlrm m;
    weft_emb_table *tabs = NULL;
    weft_work_ctx *ctx = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    if ((rc = read_dlrm(a, syn, weft_topo_num_ranks(t), &m, &tabs)))
        goto done;
    weft_err err = weft_work_ctx_new(t, &g, NULL, &ctx);
    if (err) {
        rc = cli_fail(err, &d);
        goto done;
    }
    if ((rc = cli_step_coll_algo(syn, a, ctx)))
        goto done;
    if (weft_work_ctx_set_a2a_algo(ctx, cli_args_get(a, "a2a-algo"), &d)) {
        rc = cli_usage_error(syn, "--a2a-algo: %s", d.msg);
        goto done;
    }
    if (cli_args_has(a, "sweep")) {
        rc = run_sweep(ctx, a, spec, &g, &m);
        goto done;
    }
    weft_dlrm_result r;
    cli_context_object("predicting the DLRM step");
    if ((err = weft_dlrm_step(ctx, &m, &r, &d))) {
        rc = cli_fail(err, &d);
        goto done;
    }
    const char *tp = cli_args_get(a, "trace");
    if (tp) {
        cli_out out;
        if ((rc = cli_out_open(&out, tp)))
            goto done;
        err = weft_dlrm_trace(out.f, &r, &d);
        if ((rc = cli_out_close(&out, err == WEFT_OK)) || err) {
            rc = err ? cli_fail(err, &d) : rc;
            goto done;
        }
    }
    if (cli_args_has(a, "json")) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_begin_object(&j);
        cli_json_kv_string(&j, "model", m.name);
        cli_json_kv_uint(&j, "ranks", m.emb.gpus);
        cli_json_kv_string(&j, "gpu", g.name);
        cli_json_kv_uint(&j, "batch_per_gpu", m.emb.batch);
        cli_json_kv_uint(&j, "tables", m.emb.ntables);
        json_result(&j, &r);
        cli_step_choices_json(&j, ctx);
        cli_json_end_object(&j);
        rc = cli_json_done(&j);
    } else {
        print_result(spec, &g, &m, &r);
        cli_step_choices_print(ctx, cli_args_get(a, "a2a-algo"));
        rc = CLI_EXIT_OK;
    }
done:
    weft_work_ctx_free(ctx);
    free(tabs);
    weft_topo_free(t);
    return rc;
}
