/* weft bound SPEC --coll alltoall [--traffic FILE] [--json]: the exact
 * all-to-all bound (weft_a2a_bound_compute) and the links that limit it,
 * grouped into classes a person recognises. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bound_a2a.h"
#include "cli/cli.h"
#include "cli/json.h"
#include "cli/traffic_file.h"
#include "weft/synth.h"
#include "weft/traffic.h"

/* ---- Classes of limiting links ------------------------------------------- */

/* Where a link runs relative to hosts. */
typedef enum scope { INSIDE, LEAVING, ENTERING, BETWEEN, OUTSIDE } scope;

static const char *const scope_words[] = {"inside", "leaving", "entering", "between hosts from",
                                          "outside hosts"};

/* One class: links of the same kinds, bandwidth and scope; per host when
 * the scope names one (hosts counts the hosts that have `per_host` each). */
typedef struct lclass {
    weft_node_kind ks, kd;
    weft_rat bw;
    scope sc;
    int32_t host;      /* the host (first one when hosts > 1); -1 outside */
    uint32_t per_host; /* links of the class in each host */
    uint32_t hosts;    /* hosts with exactly that many */
    uint32_t first;    /* index in b->limits of one link of the class */
    weft_node_id src;  /* the common source node, or none (v = UINT32_MAX) */
} lclass;

static scope link_scope(const weft_topo *t, weft_link_id l, int32_t *host)
{
    int32_t hs = weft_topo_node_host(t, weft_topo_link_src(t, l));
    int32_t hd = weft_topo_node_host(t, weft_topo_link_dst(t, l));
    *host = hs >= 0 ? hs : hd;
    if (hs >= 0 && hs == hd)
        return INSIDE;
    if (hs >= 0 && hd < 0)
        return LEAVING;
    if (hs < 0 && hd >= 0)
        return ENTERING;
    if (hs >= 0)
        return BETWEEN;
    return OUTSIDE;
}

static bool same_kind(const lclass *c, const lclass *x)
{
    return c->ks == x->ks && c->kd == x->kd && weft_rat_eq(c->bw, x->bw) && c->sc == x->sc;
}

/* Groups the limiting links: first per (kinds, bandwidth, scope, host),
 * then hosts with the same count merge into one class. Returns the number
 * of classes in *out (caller frees), 0 on allocation failure. */
static uint32_t group_limits(const weft_topo *t, const weft_a2a_bound *b, lclass **out)
{
    lclass *c = calloc((size_t)b->n_limits + 1, sizeof *c);
    uint32_t nc = 0;
    if (!c)
        return 0;
    for (uint32_t i = 0; i < b->n_limits; i++) {
        weft_link_id l = b->limits[i];
        lclass x = {.ks = weft_topo_node_kind(t, weft_topo_link_src(t, l)),
                    .kd = weft_topo_node_kind(t, weft_topo_link_dst(t, l)),
                    .bw = weft_topo_link_bw(t, l),
                    .per_host = 1,
                    .hosts = 1,
                    .first = i,
                    .src = weft_topo_link_src(t, l)};
        x.sc = link_scope(t, l, &x.host);
        if (x.sc == OUTSIDE)
            x.host = -1;
        uint32_t k = 0;
        while (k < nc && !(same_kind(&c[k], &x) && c[k].host == x.host))
            k++;
        if (k == nc) {
            c[nc++] = x;
        } else {
            c[k].per_host++;
            if (c[k].src.v != x.src.v)
                c[k].src.v = UINT32_MAX;
        }
    }
    /* Merge per-host classes of equal shape. */
    uint32_t m = 0;
    for (uint32_t k = 0; k < nc; k++) {
        uint32_t j = 0;
        while (j < m && !(c[k].host >= 0 && c[j].host >= 0 && same_kind(&c[j], &c[k]) &&
                          c[j].per_host == c[k].per_host))
            j++;
        if (j == m) {
            c[m++] = c[k];
        } else {
            c[j].hosts++;
            c[j].src.v = UINT32_MAX;
        }
    }
    *out = c;
    return m;
}

static void class_text(const weft_topo *t, const weft_a2a_bound *b, const lclass *c, char *buf,
                       size_t size)
{
    char bw[64];
    weft_rat_format(c->bw, bw, sizeof bw);
    const char *ks = weft_node_kind_name(c->ks), *kd = weft_node_kind_name(c->kd);
    uint32_t total = c->per_host * c->hosts;
    if (total == 1) {
        weft_link_id l = b->limits[c->first];
        snprintf(buf, size, "the link %s -> %s (%s GB/s)",
                 weft_topo_node_name(t, weft_topo_link_src(t, l)),
                 weft_topo_node_name(t, weft_topo_link_dst(t, l)), bw);
    } else if (c->sc == OUTSIDE) {
        if (c->src.v != UINT32_MAX)
            snprintf(buf, size, "the %u %s -> %s links out of %s (%s GB/s each)", total, ks, kd,
                     weft_topo_node_name(t, c->src), bw);
        else
            snprintf(buf, size, "the %u %s -> %s links outside hosts (%s GB/s each)", total, ks, kd,
                     bw);
    } else if (c->hosts == 1) {
        snprintf(buf, size, "the %u %s -> %s links %s host %s (%s GB/s each)", total, ks, kd,
                 scope_words[c->sc], weft_topo_host_name(t, c->host), bw);
    } else {
        snprintf(buf, size,
                 "the %s -> %s links %s each of %u hosts (%u per host, %u in all, %s "
                 "GB/s each)",
                 ks, kd, scope_words[c->sc], c->hosts, c->per_host, total, bw);
    }
}

/* ---- Output ------------------------------------------------------------------ */

static void print_human(const char *spec, const char *traffic, const weft_topo *t,
                        const weft_a2a_bound *b)
{
    if (b->uniform) {
        printf("alltoall bound on %s: %u ranks, uniform (each rank sends size/N to every rank)\n",
               spec, b->ranks);
        printf("  algbw          %.6g GB/s (exact %s)\n", b->algbw, b->algbw_exact);
        printf("  busbw          %.6g GB/s (algbw x (N-1)/N)\n",
               b->algbw * (double)(b->ranks - 1) / (double)b->ranks);
        printf("  time per byte  %.6g ns; 1 GiB per rank takes %.6g ms\n", 1 / b->algbw,
               1073741824.0 / b->algbw / 1e6);
    } else {
        printf("alltoall bound on %s: %u ranks, traffic matrix %s\n", spec, b->ranks, traffic);
        printf("  time           %.6g s (exact %s s)\n", b->time_s, b->time_exact);
    }
    printf("  method         maximum concurrent flow: %u source%s, %u link class%s, LP %u x %u;\n"
           "                 optimum certified in exact rational arithmetic (%s)\n",
           b->sources, b->sources == 1 ? "" : "s", b->link_classes,
           b->link_classes == 1 ? "" : "es", b->lp_rows, b->lp_cols, weft_a2a_cert_name(b->cert));
    lclass *c = NULL;
    uint32_t nc = group_limits(t, b, &c);
    printf("  limited by     %u saturated link%s (positive length in the exact dual):\n",
           b->n_limits, b->n_limits == 1 ? "" : "s");
    for (uint32_t k = 0; k < nc; k++) {
        char text[512];
        class_text(t, b, &c[k], text, sizeof text);
        printf("    %s\n", text);
    }
    free(c);
}

static int print_json(const char *traffic, const weft_topo *t, const weft_a2a_bound *b)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_kv_uint(&j, "ranks", b->ranks);
    cli_json_kv_string(&j, "coll", "alltoall");
    cli_json_kv_bool(&j, "uniform", b->uniform);
    if (b->uniform) {
        cli_json_kv_double(&j, "algbw", b->algbw);
        cli_json_kv_string(&j, "algbw_exact", b->algbw_exact);
        cli_json_kv_double(&j, "busbw", b->algbw * (double)(b->ranks - 1) / (double)b->ranks);
        cli_json_kv_double(&j, "time_per_byte_ns", 1 / b->algbw);
    } else {
        cli_json_kv_string(&j, "traffic", traffic);
        cli_json_kv_double(&j, "time_s", b->time_s);
        cli_json_kv_string(&j, "time_exact", b->time_exact);
    }
    cli_json_kv_bool(&j, "certified", true);
    cli_json_kv_bool(&j, "refined", b->refined);
    cli_json_kv_string(&j, "certificate", weft_a2a_cert_name(b->cert));
    cli_json_kv_uint(&j, "sources", b->sources);
    cli_json_kv_uint(&j, "link_classes", b->link_classes);
    cli_json_kv_uint(&j, "lp_rows", b->lp_rows);
    cli_json_kv_uint(&j, "lp_cols", b->lp_cols);
    lclass *c = NULL;
    uint32_t nc = group_limits(t, b, &c);
    cli_json_key(&j, "limits");
    cli_json_begin_array(&j);
    for (uint32_t k = 0; k < nc; k++) {
        char text[512];
        class_text(t, b, &c[k], text, sizeof text);
        cli_json_begin_object(&j);
        cli_json_kv_string(&j, "class", text);
        cli_json_kv_uint(&j, "links", (uint64_t)c[k].per_host * c[k].hosts);
        cli_json_kv_uint(&j, "hosts", c[k].host >= 0 ? c[k].hosts : 0);
        cli_json_kv_double(&j, "bw", weft_rat_to_double(c[k].bw));
        cli_json_kv_rat(&j, "bw_exact", c[k].bw);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    free(c);
    cli_json_key(&j, "limit_links");
    cli_json_begin_array(&j);
    for (uint32_t i = 0; i < b->n_limits; i++) {
        weft_link_id l = b->limits[i];
        cli_json_begin_object(&j);
        cli_json_kv_string(&j, "src", weft_topo_node_name(t, weft_topo_link_src(t, l)));
        cli_json_kv_string(&j, "dst", weft_topo_node_name(t, weft_topo_link_dst(t, l)));
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_end_object(&j);
    return cli_json_finish(&j);
}

int cli_bound_a2a(const char *spec, const weft_topo *t, const char *traffic, bool symmetry,
                  bool json)
{
    weft_diag d;
    weft_diag_clear(&d);
    weft_traffic tm = {0, NULL};
    int rc;
    if (traffic && (rc = cli_traffic_load(traffic, spec, weft_topo_num_ranks(t), &tm)))
        return rc;
    weft_a2a_bound_opts opts;
    weft_a2a_bound_opts_init(&opts);
    opts.use_symmetry = symmetry;
    weft_a2a_bound b;
    cli_context_object("computing the all-to-all bound");
    weft_err e = weft_a2a_bound_compute(t, traffic ? &tm : NULL, &opts, &b, &d);
    if (e && traffic && (e == WEFT_EINVAL || e == WEFT_ETOPO)) {
        /* The matrix is what is wrong: name its file. */
        cli_error("%s: %s", traffic, d.msg);
        rc = CLI_EXIT_INPUT;
        goto free_traffic;
    }
    if (e) {
        rc = cli_fail(e, &d);
        goto free_traffic;
    }
    if (json) {
        rc = print_json(traffic, t, &b) ? CLI_EXIT_INPUT : CLI_EXIT_OK;
    } else {
        print_human(spec, traffic, t, &b);
        rc = CLI_EXIT_OK;
    }
    weft_a2a_bound_fini(&b);
free_traffic:
    weft_traffic_free(&tm);
    return rc;
}
