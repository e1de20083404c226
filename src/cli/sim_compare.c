/* weft sim --compare. See sim_compare.h. */
#include "cli/sim_compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/map.h"
#include "cli/cli.h"
#include "cli/fabric.h"
#include "cli/json.h"
#include "cli/sim_algo.h"
#include "cli/sim_plot.h"
#include "cli/table.h"
#include "weft/synth.h"

/* One candidate: an algorithm name, and either its results (one per size)
 * or why it was skipped. */
typedef struct candidate {
    char name[32];
    cli_sim_algo algo;
    weft_sim_result *res; /* nsizes results, or NULL when skipped */
    char (*label)[48];    /* nsizes: what ran ("nccl (ring, Simple, rings:16)") */
    char why[sizeof((weft_diag *)0)->msg];
    /* The digest of the plan it simulated (not nccl's, which changes with
     * the size), kept after the plan is freed, for same_run. */
    bool have_digest;
    uint64_t digest[2];
} candidate;

/* The bound: algbw in GB/s (exact and as a double), or why there is none. */
typedef struct bound_row {
    bool have;
    weft_rat algbw;
    double gbps;
    char why[sizeof((weft_diag *)0)->msg];
} bound_row;

void cli_sim_size_text(uint64_t size, char *buf, size_t len)
{
    static const char suffix[] = {'G', 'M', 'K'};
    for (int i = 0; i < 3; i++) {
        unsigned shift = 30 - 10 * (unsigned)i;
        if (size >= (1ull << shift) && size % (1ull << shift) == 0) {
            snprintf(buf, len, "%llu (%llu%c)", (unsigned long long)size,
                     (unsigned long long)(size >> shift), suffix[i]);
            return;
        }
    }
    snprintf(buf, len, "%llu", (unsigned long long)size);
}

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

/* The candidates for coll: the schedule registry's compare list
 * (weft_sched_candidates: every classic algorithm that builds it, rings:K
 * as rings:auto, NCCL's channel count, and rings:4, as weft plan --compare
 * does; nccl among them; then optimal, for all-to-all the plan of the
 * exact flow), with flash:auto after flash, then with t the in-network
 * algorithms NCCL runs for coll on t (nvls, ...: no plan,
 * weft_sim_innet). */
static size_t list_candidates(const weft_topo *t, weft_coll coll, bool matrix, candidate *c,
                              size_t cap)
{
    const char *names[64];
    size_t n = 0, nn = weft_sched_candidates(coll, matrix, WEFT_SCHED_FOR_COMPARE, names, 64);
    for (size_t i = 0; i < nn && n < cap; i++) {
        snprintf(c[n++].name, sizeof c->name, "%s", names[i]);
        /* flash:K's K chosen by simulation (run_flash_auto). */
        if (strcmp(names[i], "flash") == 0 && n < cap)
            snprintf(c[n++].name, sizeof c->name, "flash:auto");
    }
    weft_nccl_fabric f;
    weft_nccl_choice ch;
    for (int k = 0; t && k < WEFT__SIM_INNET_COUNT && n < cap; k++) {
        const char *name = weft_sim_innet_name((weft_sim_innet_algo)k);
        weft_sim_innet_algo a;
        static const weft_nccl_algo of[] = {WEFT_NCCL_NVLS, WEFT_NCCL_NVLS_TREE,
                                            WEFT_NCCL_COLLNET_DIRECT, WEFT_NCCL_COLLNET_CHAIN};
        if (cli_sim_innet_parse(name, &a) && !weft_nccl_fabric_get(t, &f, NULL) &&
            !weft_nccl_estimate(&f, coll, of[k], WEFT_NCCL_PLAN_BYTES, &ch, NULL))
            snprintf(c[n++].name, sizeof c->name, "%s", name);
    }
    return n;
}

/* Indices of the simulated candidates at size index s, fastest first (ties
 * keep the listing order). */
static size_t sorted(const candidate *c, size_t n, size_t s, size_t *idx)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!c[i].res)
            continue;
        size_t at = m++;
        while (at > 0 && c[idx[at - 1]].res[s].time_s > c[i].res[s].time_s) {
            idx[at] = idx[at - 1];
            at--;
        }
        idx[at] = i;
    }
    return m;
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
        cli_sim_size_text(sizes[s], st, sizeof st);
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
                            (c[i].algo.innet || strncmp(c[i].label[s], "nccl (nvls", 10) == 0 ||
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

static uint64_t mix64(uint64_t x)
{
    return weft__mix64(x);
}

/* Two independent 64-bit chains over one value. */
static void digest_add(uint64_t h[2], uint64_t v)
{
    h[0] = mix64(h[0] ^ v);
    h[1] = mix64((h[1] + v) * 0xff51afd7ed558ccdull + 0x632be59bd9b4e8ull);
}

static void digest_text(uint64_t h[2], const char *text)
{
    for (; *text; text++)
        digest_add(h, (unsigned char)*text);
    digest_add(h, 0x100); /* ends the name */
}

/* A 128-bit digest of everything weft_plan_equal compares (the header, and
 * per op its fields, deps in order and paths with shares and node names),
 * in order: plans that weft_plan_equal calls equal have one digest, and
 * different plans share one with probability about 2^-128. O(plan). */
static void plan_digest(const weft_plan *p, uint64_t h[2])
{
    const weft_plan_info *in = weft_plan_get_info(p);
    h[0] = 0x243f6a8885a308d3ull;
    h[1] = 0x13198a2e03707344ull;
    uint32_t n = weft_plan_num_ops(p);
    uint64_t head[] = {(uint64_t)in->coll, in->nranks,  in->root.v, in->chunks,
                       in->scratch,        in->inplace, n};
    for (size_t i = 0; i < sizeof head / sizeof *head; i++)
        digest_add(h, head[i]);
    for (uint32_t i = 0; i < n; i++) {
        weft_op o = weft_plan_op(p, i);
        uint64_t f[] = {(uint64_t)o.kind,
                        o.src_rank.v,
                        o.dst_rank.v,
                        (uint64_t)o.src_buf,
                        (uint64_t)o.dst_buf,
                        o.src_index,
                        o.dst_index,
                        o.count,
                        o.channel};
        for (size_t k = 0; k < sizeof f / sizeof *f; k++)
            digest_add(h, f[k]);
        uint32_t nd;
        const uint32_t *deps = weft_plan_op_deps(p, i, &nd);
        digest_add(h, nd);
        for (uint32_t k = 0; k < nd; k++)
            digest_add(h, deps[k]);
        uint32_t np = weft_plan_op_num_paths(p, i);
        digest_add(h, np);
        for (uint32_t k = 0; k < np; k++) {
            weft_rat sh = weft_plan_path_share(p, i, k);
            uint32_t len = weft_plan_path_len(p, i, k);
            digest_add(h, (uint64_t)sh.num);
            digest_add(h, (uint64_t)sh.den);
            digest_add(h, len);
            for (uint32_t v = 0; v < len; v++)
                digest_text(h, weft_plan_path_node(p, i, k, v));
        }
    }
}

/* An earlier candidate j that ran exactly what candidate i runs at size
 * index s, whose result is then copied into i's; n when there is none.
 * Exactly: the same plan (equal 128-bit digests of everything
 * weft_plan_equal compares) under settings that resolve alike. Candidates
 * differ only in the protocol nccl forces (eff), so the settings resolve
 * alike when they resolve to j's protocol; j must not be nccl, whose plan
 * changes with the size. The simulator is deterministic, so running i
 * would give j's result bit for bit: on a100:2 at 1 GiB NCCL's choice is
 * rings:16, the plan that rings:auto has just run. Each candidate's plan
 * is freed once it is simulated (only its digest is kept), so the peak
 * memory is that of the largest plan, not of all plans together. */
static size_t same_run(candidate *c, size_t i, size_t s, size_t n, const weft_topo *t,
                       weft_coll coll, uint64_t size, const weft_sim_opts *eff)
{
    const weft_plan *p = c[i].algo.plan;
    weft_sim_opts r;
    if (!p || weft_sim_opts_resolve(eff, t, coll, size, size / weft_plan_size_chunks(p), &r, NULL))
        return n;
    uint64_t h[2];
    if (c[i].have_digest) {
        h[0] = c[i].digest[0];
        h[1] = c[i].digest[1];
    } else {
        plan_digest(p, h);
        if (!c[i].algo.nccl) {
            c[i].have_digest = true;
            c[i].digest[0] = h[0];
            c[i].digest[1] = h[1];
        }
    }
    for (size_t j = 0; j < i; j++) {
        if (!c[j].res || c[j].algo.nccl || !c[j].have_digest || c[j].res[s].proto != r.proto ||
            c[j].digest[0] != h[0] || c[j].digest[1] != h[1])
            continue;
        c[i].res[s] = c[j].res[s];
        return j;
    }
    return n;
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

/* Builds candidate c for matrix m: an alltoallv plan of a classic
 * schedule that is no composite (nccl), or optimal's (from the matrix
 * bound's flow). */
static weft_err build_traffic(candidate *c, const weft_topo *t, const weft_traffic *m,
                              uint32_t max_ops, weft_diag *d)
{
    for (size_t i = 0; i < weft_classic_count(); i++)
        if (strcmp(weft_classic_get(i)->name, c->name) == 0 && weft_classic_get(i)->composite)
            return weft_diag_set(d, WEFT_EUNSUPPORTED, "%s has no alltoallv plan", c->name);
    weft_plan *p = NULL;
    weft_err e = cli_build_traffic(t, c->name, m, max_ops, &p, d);
    if (e)
        return e;
    cli_sim_algo_from_plan(&c->algo, p);
    c->algo.name = c->name;
    if (strcmp(c->name, "optimal") == 0 && weft_topo_has_ocs(t)) {
        c->algo.circuits = true; /* cli_build_traffic built the circuit schedule */
        c->algo.configs = weft_plan_num_epochs(p);
    }
    return WEFT_OK;
}

/* Sets r's algbw and busbw from the matrix's exact total / N (as weft sim
 * --traffic gives it) when plan p carries one. */
static void traffic_rates(const weft_traffic *m, const weft_plan *p, weft_sim_result *r)
{
    if (!m || r->time_s <= 0)
        return;
    r->algbw_gbps = weft_plan_traffic_size(p) / r->time_s * 1e-9;
    r->busbw_gbps = r->algbw_gbps * weft_sim_busbw_factor(r->coll, r->ranks);
}

/* The candidate flash:auto: flash:K for K = 1, 2, 4 and 8 (blocks cut into
 * K chunks that may span rounds, docs/algorithms.md), each simulated at
 * every size; per size the fastest is kept, labelled "flash:auto (C=K)".
 * The best K differs per matrix (and the plans grow with K), so synth
 * builds whole blocks and the simulator chooses here. */
static void run_flash_auto(const weft_topo *t, weft_coll coll, const weft_traffic *m,
                           const uint64_t *sizes, size_t nsizes, const weft_sim_opts *o,
                           uint32_t max_ops, candidate *c)
{
    static const uint32_t ks[] = {1, 2, 4, 8};
    c->res = calloc(nsizes, sizeof *c->res);
    c->label = calloc(nsizes, sizeof *c->label);
    bool *have = calloc(nsizes, sizeof *have);
    if (!c->res || !c->label || !have) {
        free(c->res);
        c->res = NULL;
        free(have);
        snprintf(c->why, sizeof c->why, "out of memory");
        return;
    }
    for (size_t k = 0; k < sizeof ks / sizeof *ks; k++) {
        char name[16];
        snprintf(name, sizeof name, "flash:%u", ks[k]);
        weft_diag d;
        weft_diag_clear(&d);
        weft_plan *p = NULL;
        weft_err e =
            m ? cli_build_traffic(t, name, m, max_ops, &p, &d)
              : cli_build_limited(t, name, coll, (weft_rank){0}, max_ops, NULL, &p, NULL, &d);
        if (e) {
            if (!c->why[0])
                snprintf(c->why, sizeof c->why, "%s", d.msg);
            continue;
        }
        cli_sim_algo alg;
        cli_sim_algo_from_plan(&alg, p);
        for (size_t s = 0; s < nsizes && !e; s++) {
            weft_sim_opts eff;
            weft_sim_result r;
            e = cli_sim_algo_prepare(&alg, t, sizes[s], o, &eff, &d);
            if (!e)
                e = cli_sim_algo_run(&alg, t, sizes[s], o, &r, &d);
            if (e) {
                if (!c->why[0])
                    snprintf(c->why, sizeof c->why, "%s: %.900s", name, d.msg);
                break;
            }
            traffic_rates(m, alg.plan, &r);
            if (!have[s] || r.time_s < c->res[s].time_s) {
                c->res[s] = r;
                have[s] = true;
                snprintf(c->label[s], sizeof c->label[s], "flash:auto (C=%u)", ks[k]);
            }
        }
        cli_sim_algo_fini(&alg);
    }
    bool all = nsizes > 0;
    for (size_t s = 0; s < nsizes; s++)
        all = all && have[s];
    free(have);
    if (!all) {
        free(c->res);
        c->res = NULL;
        free(c->label);
        c->label = NULL;
    }
}

/* Builds and simulates every candidate c[0..n) at every size (c[i].res
 * filled, or c[i].why); returns how many simulated. */
static size_t run_candidates(const weft_topo *t, weft_coll coll, const weft_traffic *m,
                             const uint64_t *sizes, size_t nsizes, const weft_sim_opts *o,
                             uint32_t max_ops, cli_progress *pr, candidate *c, size_t n)
{
    size_t simulated = 0;
    char st[64];
    for (size_t i = 0; i < n; i++) {
        weft_diag d;
        weft_diag_clear(&d);
        cli_progress_set(pr, "sim --compare: building %s (%zu of %zu)", c[i].name, i + 1, n);
        if (strcmp(c[i].name, "flash:auto") == 0) {
            run_flash_auto(t, coll, m, sizes, nsizes, o, max_ops, &c[i]);
            simulated += c[i].res != NULL;
            continue;
        }
        if (m ? build_traffic(&c[i], t, m, max_ops, &d)
              : cli_sim_algo_build(&c[i].algo, t, c[i].name, coll, cli_sim_needs_plan(o), max_ops,
                                   &d)) {
            snprintf(c[i].why, sizeof c[i].why, "%s", d.msg);
            continue;
        }
        c[i].res = calloc(nsizes, sizeof *c[i].res);
        c[i].label = calloc(nsizes, sizeof *c[i].label);
        if (!c[i].res || !c[i].label) {
            free(c[i].res);
            c[i].res = NULL;
            snprintf(c[i].why, sizeof c[i].why, "out of memory");
            continue;
        }
        for (size_t s = 0; s < nsizes; s++) {
            cli_sim_size_text(sizes[s], st, sizeof st);
            cli_progress_set(pr, "sim --compare: %s at %s (%zu of %zu)", c[i].name, st, i + 1, n);
            cli_sim_algo_label(&c[i].algo, sizes[s], c[i].label[s], sizeof c[i].label[s]);
            weft_sim_opts eff;
            weft_err e = cli_sim_algo_prepare(&c[i].algo, t, sizes[s], o, &eff, &d);
            size_t j = e ? n : same_run(c, i, s, n, t, coll, sizes[s], &eff);
            if (j < n)
                cli_progress_set(pr, "sim --compare: %s at %s (%zu of %zu) is the run of %s",
                                 c[i].name, st, i + 1, n, c[j].name);
            else if (!e)
                e = cli_sim_algo_run(&c[i].algo, t, sizes[s], o, &c[i].res[s], &d);
            if (!e)
                traffic_rates(m, c[i].algo.plan, &c[i].res[s]);
            if (e) {
                snprintf(c[i].why, sizeof c[i].why, "simulation failed at %llu bytes: %.900s",
                         (unsigned long long)sizes[s], d.msg);
                free(c[i].res);
                c[i].res = NULL;
                break;
            }
        }
        /* Only the digest is kept for same_run: a later candidate whose
         * plan equals this one reuses its results. */
        if (c[i].res && !c[i].algo.nccl && c[i].algo.plan && !c[i].have_digest) {
            plan_digest(c[i].algo.plan, c[i].digest);
            c[i].have_digest = true;
        }
        cli_sim_algo_fini(&c[i].algo);
        simulated += c[i].res != NULL;
    }
    return simulated;
}

static int compare(const char *spec, const weft_topo *t, weft_coll coll, const weft_traffic *m,
                   const uint64_t *sizes, size_t nsizes, const weft_sim_opts *o, uint32_t max_ops,
                   cli_sim_format fmt, const char *plot, cli_progress *pr)
{
    enum { MAX_CANDIDATES = 32 };
    candidate *c = calloc(MAX_CANDIDATES, sizeof *c);
    size_t *idx = calloc(MAX_CANDIDATES, sizeof *idx);
    if (!c || !idx) {
        free(c);
        free(idx);
        return cli_fail(WEFT_ENOMEM, NULL);
    }
    size_t n = list_candidates(t, coll, m != NULL, c, MAX_CANDIDATES), simulated;
    bound_row b;
    cli_progress_set(pr, "sim --compare: the bound");
    compute_bound(t, coll, m, &b);
    simulated = run_candidates(t, coll, m, sizes, nsizes, o, max_ops, pr, c, n);
    cli_progress_stop(pr);
    int rc = CLI_EXIT_OK;
    if (simulated == 0) {
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
    for (size_t i = 0; i < n; i++) {
        cli_sim_algo_fini(&c[i].algo);
        free(c[i].res);
        free(c[i].label);
    }
    free(c);
    free(idx);
    return rc;
}

/* cli_sim_best_plan, or with baselines only, every plan candidate but
 * optimal (cli_sim_best_baseline). */
static void best_plan(const weft_topo *t, weft_coll coll, const weft_traffic *m, uint64_t size,
                      const weft_sim_opts *o, uint32_t max_ops, cli_progress *pr, bool baselines,
                      cli_sim_best *out)
{
    enum { MAX_CANDIDATES = 32 };
    memset(out, 0, sizeof *out);
    candidate *c = calloc(MAX_CANDIDATES, sizeof *c);
    if (!c) {
        snprintf(out->why, sizeof out->why, "out of memory");
        return;
    }
    size_t n = list_candidates(NULL, coll, m != NULL, c, MAX_CANDIDATES); /* plans only */
    if (baselines) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (strcmp(c[i].name, "optimal") != 0)
                c[k++] = c[i];
        n = k;
    }
    /* On a fabric with optical circuit switches a plan that carries no
     * circuits cannot run as simulated (it crosses each OCS as a packet
     * switch, which it is not): an all-to-all there runs the circuit
     * schedule only (docs/ocs.md), of the matrix or, given a size, of the
     * uniform one (size / N to every rank, size rounded down to a multiple
     * of N). Other collectives have no circuit schedule: their plans keep
     * the relaxation of `weft bound` and say so (out->ocs_relaxed). */
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
            snprintf(c[0].name, sizeof c->name, "optimal");
            n = 1;
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
    run_candidates(t, coll, m, &size, 1, o, max_ops, pr, c, n);
    out->tried = n;
    size_t best = n;
    for (size_t i = 0; i < n; i++) {
        if (!c[i].res) {
            out->skipped++;
            if (!out->why[0])
                snprintf(out->why, sizeof out->why, "%s: %.400s", c[i].name, c[i].why);
            continue;
        }
        if (best == n || c[i].res[0].time_s < c[best].res[0].time_s)
            best = i;
    }
    if (best < n) {
        out->have = true;
        out->res = c[best].res[0];
        out->res.n_busiest = 0;
        snprintf(out->algo, sizeof out->algo, "%s", c[best].label[0]);
        snprintf(out->name, sizeof out->name, "%s", c[best].name);
    }
    for (size_t i = 0; i < n; i++) {
        cli_sim_algo_fini(&c[i].algo);
        free(c[i].res);
        free(c[i].label);
    }
    free(c);
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
