/* The exact all-to-all bound (weft_a2a_bound_compute): closed forms, skewed
 * matrices, symmetry on and off, bad input, and a property test on random
 * small fabrics (switches, one-way links, rational bandwidths, random
 * matrices) against an INDEPENDENT linear program written here: the
 * per-pair edge formulation (one commodity per ordered pair, not
 * source-aggregated), solved by GLPK's exact rational simplex. */
#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "weft/synth.h"
#include "weft/traffic.h"

static weft_topo *preset(const char *spec)
{
    weft_topo *t = NULL;
    weft_diag d;
    if (weft_topo_preset(spec, &t, &d)) {
        fprintf(stderr, "preset %s: %s\n", spec, d.msg);
        return NULL;
    }
    return t;
}

/* algbw_exact of the uniform bound (symmetry on or off), or "error". */
static void uniform(const weft_topo *t, bool symmetry, char *out, size_t size)
{
    weft_a2a_bound_opts o;
    weft_a2a_bound_opts_init(&o);
    o.use_symmetry = symmetry;
    weft_a2a_bound b;
    weft_diag d;
    if (weft_a2a_bound_compute(t, NULL, &o, &b, &d)) {
        fprintf(stderr, "error: %s\n", d.msg);
        snprintf(out, size, "error");
        return;
    }
    snprintf(out, size, "%s", b.algbw_exact);
    weft_a2a_bound_fini(&b);
}

static void check_preset(const char *spec, const char *want)
{
    weft_topo *t = preset(spec);
    CHECK(t != NULL);
    if (!t)
        return;
    char a[256], b[256];
    uniform(t, true, a, sizeof a);
    CHECK_STR(a, want);
    if (weft_topo_num_ranks(t) <= 32) {
        uniform(t, false, b, sizeof b);
        CHECK_STR(b, want);
    }
    weft_topo_free(t);
}

/* A star of N ranks with links of B both ways: N B / (N - 1). */
static void test_closed_forms(void)
{
    for (int n = 2; n <= 7; n++) {
        char spec[64], want[64];
        snprintf(spec, sizeof spec, "switch:%d,bw=30", n);
        long num = (long)n * 30, den = n - 1, g = num, h = den;
        while (h) {
            long r = g % h;
            g = h;
            h = r;
        }
        if (den / g == 1)
            snprintf(want, sizeof want, "%ld", num / g);
        else
            snprintf(want, sizeof want, "%ld/%ld", num / g, den / g);
        check_preset(spec, want);
    }
    /* a100:2: 8 NICs of 25 GB/s per box carry the half of each rank's data
     * bound for the other box: 16 * 200 / (8 * 8) = 50. */
    check_preset("a100:2", "50");
    /* A one-way ring of 4 (100 GB/s): distances 1 + 2 + 3 per source,
     * 4 * 6 λ <= 4 * 100, algbw = 4 λ = 200/3. */
    check_preset("ring:4", "200/3");
    /* torus:4x4: distances sum to 32 per source over 64 links. */
    check_preset("torus:4x4", "200");
    /* h100:16: 120/128 of each rank's data leaves the box on 8 x 50 GB/s. */
    check_preset("h100:16", "160/3");
    check_preset("dgx1", "75");
    check_preset("mi250:2", "32");
}

/* The limiting links of a100:2 are one class of 16 links: 8 per box, all
 * on the NIC path (the dual may pick either side of the NIC). */
static void test_limits(void)
{
    weft_topo *t = preset("a100:2");
    weft_a2a_bound b;
    weft_diag d;
    CHECK_ERR(weft_a2a_bound_compute(t, NULL, NULL, &b, &d), WEFT_OK);
    CHECK_INT(b.n_limits, 16);
    for (uint32_t i = 0; i < b.n_limits; i++) {
        weft_node_kind ks = weft_topo_node_kind(t, weft_topo_link_src(t, b.limits[i]));
        weft_node_kind kd = weft_topo_node_kind(t, weft_topo_link_dst(t, b.limits[i]));
        CHECK(ks == WEFT_NODE_NIC || kd == WEFT_NODE_NIC);
        CHECK(weft_rat_eq(weft_topo_link_bw(t, b.limits[i]), weft_rat_int(25)));
    }
    CHECK_INT(b.sources, 1);
    weft_a2a_bound_fini(&b);
    weft_topo_free(t);
}

static void make_matrix(weft_traffic *m, uint32_t n)
{
    m->ranks = n;
    m->bytes = calloc((size_t)n * n, sizeof *m->bytes);
}

/* Skewed matrices with times worked out by hand. */
static void test_matrices(void)
{
    weft_topo *t = preset("switch:4,bw=100");
    weft_traffic m;
    make_matrix(&m, 4);
    for (uint32_t i = 0; i < 4; i++)
        for (uint32_t j = 0; j < 4; j++)
            m.bytes[i * 4 + j] = i == j ? 7 : 100;
    m.bytes[0 * 4 + 1] = 300;
    /* rank0 -> switch carries 300 + 100 + 100 bytes at 100 GB/s: 5 ns; so
     * does switch -> rank1. */
    weft_a2a_bound b;
    weft_diag d;
    CHECK_ERR(weft_a2a_bound_compute(t, &m, NULL, &b, &d), WEFT_OK);
    CHECK_STR(b.time_exact, "1/200000000");
    CHECK(fabs(b.time_s - 5e-9) < 1e-20);
    CHECK(b.algbw_exact == NULL);
    CHECK_INT(b.sources, 4);
    weft_a2a_bound_fini(&b);
    /* One pair only, at 3 GiB: 3 * 2^30 bytes / 100 GB/s. */
    memset(m.bytes, 0, 16 * sizeof *m.bytes);
    m.bytes[2 * 4 + 3] = 3ull << 30;
    CHECK_ERR(weft_a2a_bound_compute(t, &m, NULL, &b, &d), WEFT_OK);
    CHECK_STR(b.time_exact, "1572864/48828125");
    CHECK_INT(b.sources, 1);
    CHECK_INT(b.n_limits > 0, 1);
    weft_a2a_bound_fini(&b);
    free(m.bytes);
    weft_topo_free(t);

    /* On a one-way ring of 3, rank 0 -> rank 2 takes two hops: a matrix
     * of only that pair and 2 -> 0 (one hop) at equal sizes loads link
     * 0->1, 1->2 with the first and 2->0 with the second: T = B/100. */
    t = preset("ring:3,bw=100");
    make_matrix(&m, 3);
    m.bytes[0 * 3 + 2] = 1000;
    m.bytes[2 * 3 + 0] = 1000;
    CHECK_ERR(weft_a2a_bound_compute(t, &m, NULL, &b, &d), WEFT_OK);
    CHECK_STR(b.time_exact, "1/100000000");
    weft_a2a_bound_fini(&b);
    free(m.bytes);
    weft_topo_free(t);
}

static void test_bad_input(void)
{
    weft_topo *t = preset("switch:4");
    weft_traffic m;
    make_matrix(&m, 3);
    m.bytes[1] = 5;
    weft_a2a_bound b;
    weft_diag d;
    CHECK_ERR(weft_a2a_bound_compute(t, &m, NULL, &b, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "the traffic matrix is 3 x 3 but the fabric has 4 ranks");
    free(m.bytes);
    make_matrix(&m, 4);
    m.bytes[0] = 9; /* the diagonal only */
    CHECK_ERR(weft_a2a_bound_compute(t, &m, NULL, &b, &d), WEFT_EINVAL);
    CHECK_CONTAINS(d.msg, "sends no bytes between distinct ranks");
    free(m.bytes);
    weft_topo_free(t);

    /* A one-way link r0 -> r1: 0 -> 1 is fine, 1 -> 0 has no route. */
    weft_topo_builder *tb;
    CHECK_ERR(weft_topo_builder_new(&tb), WEFT_OK);
    weft_node_id r0, r1;
    weft_topo_builder_add_node(tb, "r0", WEFT_NODE_COMPUTE, NULL, &r0);
    weft_topo_builder_add_node(tb, "r1", WEFT_NODE_COMPUTE, NULL, &r1);
    weft_topo_builder_add_link(tb, r0, r1, weft_rat_int(10), weft_rat_int(0));
    CHECK_ERR(weft_topo_build(tb, &t, &d), WEFT_OK);
    make_matrix(&m, 2);
    m.bytes[0 * 2 + 1] = 40;
    CHECK_ERR(weft_a2a_bound_compute(t, &m, NULL, &b, &d), WEFT_OK);
    CHECK_STR(b.time_exact, "1/250000000");
    weft_a2a_bound_fini(&b);
    m.bytes[1 * 2 + 0] = 8;
    CHECK_ERR(weft_a2a_bound_compute(t, &m, NULL, &b, &d), WEFT_ETOPO);
    CHECK_STR(d.msg, "rank 1 (r1) sends 8 bytes to rank 0 (r0), but no path of links leads "
                     "from one to the other");
    CHECK_ERR(weft_a2a_bound_compute(t, NULL, NULL, &b, &d), WEFT_ETOPO);
    CHECK_CONTAINS(d.msg, "rank 1 (r1) cannot reach rank 0 (r0)");
    free(m.bytes);
    weft_topo_free(t);
    /* One rank. */
    t = preset("switch:1");
    CHECK_ERR(weft_a2a_bound_compute(t, NULL, NULL, &b, &d), WEFT_ETOPO);
    weft_topo_free(t);
}

/* ---- Property test against the per-pair edge formulation ------------------ */

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

/* The optimum θ of: max θ, for every ordered pair (s, t) with demand D a
 * flow of D θ from s to t, summed over pairs within each link's bandwidth;
 * GLPK's exact simplex, so the double is the exact optimum rounded. */
static double pair_lp(const weft_topo *t, const uint64_t *dem)
{
    uint32_t n = weft_topo_num_nodes(t), m = weft_topo_num_links(t), nr = weft_topo_num_ranks(t);
    uint32_t np = 0, ps[256], pt[256];
    for (uint32_t i = 0; i < nr; i++)
        for (uint32_t j = 0; j < nr; j++)
            if (i != j && dem[i * nr + j]) {
                ps[np] = i;
                pt[np++] = j;
            }
    glp_prob *P = glp_create_prob();
    glp_set_obj_dir(P, GLP_MAX);
    int rows = (int)(np * n + m), cols = (int)(np * m + 1);
    glp_add_rows(P, rows);
    glp_add_cols(P, cols);
    int *ia = malloc(sizeof *ia * (size_t)(np * m * 3 + np * 2 + 2));
    int *ja = malloc(sizeof *ja * (size_t)(np * m * 3 + np * 2 + 2));
    double *ar = malloc(sizeof *ar * (size_t)(np * m * 3 + np * 2 + 2));
    int k = 0;
    for (uint32_t p = 0; p < np; p++) {
        for (uint32_t v = 0; v < n; v++)
            glp_set_row_bnds(P, (int)(p * n + v + 1), GLP_FX, 0, 0);
        for (uint32_t l = 0; l < m; l++) {
            int c = (int)(p * m + l + 1);
            glp_set_col_bnds(P, c, GLP_LO, 0, 0);
            uint32_t u = weft_topo_link_src(t, (weft_link_id){l}).v;
            uint32_t v = weft_topo_link_dst(t, (weft_link_id){l}).v;
            ++k, ia[k] = (int)(p * n + u + 1), ja[k] = c, ar[k] = 1;  /* out of u */
            ++k, ia[k] = (int)(p * n + v + 1), ja[k] = c, ar[k] = -1; /* into v */
            ++k, ia[k] = (int)(np * n + l + 1), ja[k] = c, ar[k] = 1;
        }
        /* out - in = D θ at the source, -D θ at the target. */
        double dd = (double)dem[ps[p] * nr + pt[p]];
        ++k, ia[k] = (int)(p * n + weft_topo_rank_node(t, (weft_rank){ps[p]}).v + 1);
        ja[k] = cols, ar[k] = -dd;
        ++k, ia[k] = (int)(p * n + weft_topo_rank_node(t, (weft_rank){pt[p]}).v + 1);
        ja[k] = cols, ar[k] = dd;
    }
    for (uint32_t l = 0; l < m; l++)
        glp_set_row_bnds(P, (int)(np * n + l + 1), GLP_UP, 0,
                         weft_rat_to_double(weft_topo_link_bw(t, (weft_link_id){l})));
    glp_set_col_bnds(P, cols, GLP_LO, 0, 0);
    glp_set_obj_coef(P, cols, 1);
    glp_load_matrix(P, k, ia, ja, ar);
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    glp_term_out(GLP_OFF);
    glp_adv_basis(P, 0);
    glp_simplex(P, &parm);
    glp_exact(P, &parm);
    double v = glp_get_status(P) == GLP_OPT ? glp_get_obj_val(P) : -1;
    glp_delete_prob(P);
    free(ia);
    free(ja);
    free(ar);
    return v;
}

static weft_topo *random_fabric(void)
{
    uint32_t nr = 2 + rnd(4), n = nr + rnd(4);
    weft_topo_builder *b;
    if (weft_topo_builder_new(&b))
        return NULL;
    for (uint32_t v = 0; v < n; v++) {
        char name[16];
        snprintf(name, sizeof name, "%s%u", v < nr ? "r" : "s", v);
        weft_topo_builder_add_node(b, name, v < nr ? WEFT_NODE_COMPUTE : WEFT_NODE_SWITCH, NULL,
                                   NULL);
    }
    /* A ring through every node first (so most fabrics are connected),
     * then random links, mostly duplex, some one-way. */
    for (uint32_t v = 0; v < n; v++) {
        weft_rat bw;
        weft_rat_make(1 + rnd(40), 1 + rnd(3), &bw);
        weft_topo_builder_add_link(b, (weft_node_id){v}, (weft_node_id){(v + 1) % n}, bw,
                                   weft_rat_int(0));
    }
    uint32_t extra = rnd(2 * n);
    for (uint32_t i = 0; i < extra; i++) {
        uint32_t u = rnd(n), v = rnd(n);
        if (u == v)
            continue;
        weft_rat bw;
        weft_rat_make(1 + rnd(40), 1 + rnd(3), &bw);
        weft_topo_builder_add_link(b, (weft_node_id){u}, (weft_node_id){v}, bw, weft_rat_int(0));
        if (rnd(3))
            weft_topo_builder_add_link(b, (weft_node_id){v}, (weft_node_id){u}, bw,
                                       weft_rat_int(0));
    }
    weft_topo *t = NULL;
    weft_diag d;
    if (weft_topo_build(b, &t, &d))
        return NULL;
    return t;
}

/* Identical boxes of k ranks (a random inner pattern, maybe a box switch)
 * joined by one shared switch through the first few ranks of each box,
 * with one-way bandwidths that differ up and down: fabrics where the
 * symmetry shortcut merges ranks and links. */
static weft_topo *random_boxes(void)
{
    uint32_t boxes = 2 + rnd(2), k = 2 + rnd(3), nr = boxes * k;
    bool box_switch = rnd(2);
    weft_topo_builder *b;
    if (weft_topo_builder_new(&b))
        return NULL;
    for (uint32_t v = 0; v < nr; v++) {
        char name[16], host[16];
        snprintf(name, sizeof name, "r%u", v);
        snprintf(host, sizeof host, "b%u", v / k);
        weft_topo_builder_add_node(b, name, WEFT_NODE_COMPUTE, host, NULL);
    }
    for (uint32_t x = 0; x < boxes && box_switch; x++) {
        char name[16], host[16];
        snprintf(name, sizeof name, "bs%u", x);
        snprintf(host, sizeof host, "b%u", x);
        weft_topo_builder_add_node(b, name, WEFT_NODE_SWITCH, host, NULL);
    }
    weft_node_id shared;
    weft_topo_builder_add_node(b, "shared", WEFT_NODE_SWITCH, NULL, &shared);
    uint32_t pu[8], pv[8], pn[8], np = 0;
    for (uint32_t i = 0; i < k + rnd(k + 1) && np < 8; i++) {
        uint32_t u = rnd(k), v = rnd(k);
        if (u != v)
            pu[np] = u, pv[np] = v, pn[np++] = 1 + rnd(30);
    }
    int64_t up = 1 + rnd(20), down = rnd(3) ? up : 1 + rnd(20), sw = 5 + rnd(30);
    uint32_t uplinks = 1 + rnd(k);
    for (uint32_t x = 0; x < boxes; x++) {
        for (uint32_t i = 0; i < np; i++)
            weft_topo_builder_add_link(b, (weft_node_id){x * k + pu[i]},
                                       (weft_node_id){x * k + pv[i]}, weft_rat_int(pn[i]),
                                       weft_rat_int(0));
        for (uint32_t i = 0; i < k && box_switch; i++)
            weft_topo_builder_add_duplex(b, (weft_node_id){x * k + i}, (weft_node_id){nr + x},
                                         weft_rat_int(sw), weft_rat_int(0));
        for (uint32_t i = 0; i < uplinks; i++) {
            weft_rat r;
            weft_rat_make(up, 2, &r);
            weft_topo_builder_add_link(b, (weft_node_id){x * k + i}, shared, r, weft_rat_int(0));
            weft_rat_make(down, 2, &r);
            weft_topo_builder_add_link(b, shared, (weft_node_id){x * k + i}, r, weft_rat_int(0));
        }
    }
    weft_topo *t = NULL;
    weft_diag d;
    if (weft_topo_build(b, &t, &d))
        return NULL;
    return t;
}

/* Parses "p/q" or "p" to a double. */
static double frac(const char *s)
{
    const char *slash = strchr(s, '/');
    return slash ? strtod(s, NULL) / strtod(slash + 1, NULL) : strtod(s, NULL);
}

static void test_property(void)
{
    int compared = 0, merged = 0, by_basis = 0;
    for (int iter = 0; iter < 160; iter++) {
        bool boxes = iter >= 100;
        weft_topo *t = boxes ? random_boxes() : random_fabric();
        CHECK(t != NULL);
        if (!t)
            continue;
        uint32_t nr = weft_topo_num_ranks(t);
        weft_traffic m;
        make_matrix(&m, nr);
        bool skew = !boxes && iter % 2;
        for (uint32_t i = 0; i < nr; i++)
            for (uint32_t j = 0; j < nr; j++)
                m.bytes[i * nr + j] = i == j ? 0 : skew ? rnd(4) * (1 + rnd(1000)) : 1;
        if (skew)
            m.bytes[0 * nr + 1] += 1;      /* never all zero */
        double want = pair_lp(t, m.bytes); /* θ: bytes per ns per byte of demand */
        weft_a2a_bound b;
        weft_diag d;
        weft_a2a_bound_opts o;
        weft_a2a_bound_opts_init(&o);
        o.use_symmetry = boxes || iter % 3 != 0;
        o.exact_basis = iter % 4 == 1; /* the refinement path on its own */
        weft_err e = weft_a2a_bound_compute(t, skew ? &m : NULL, &o, &b, &d);
        if (e) {
            /* Only a fabric where some pair with traffic has no route. */
            CHECK_ERR(e, WEFT_ETOPO);
            CHECK_CONTAINS(d.msg, "no path of links");
        } else {
            double got = skew ? 1e-9 / frac(b.time_exact) : frac(b.algbw_exact) / nr;
            if (!(fabs(got - want) <= 1e-9 * want)) {
                char nosym[256];
                uniform(t, false, nosym, sizeof nosym);
                fprintf(stderr,
                        "iteration %d: bound %.17g (sources %u, classes %u), pair LP %.17g, no "
                        "symmetry %s\n",
                        iter, got, b.sources, b.link_classes, want, nosym);
            }
            CHECK(fabs(got - want) <= 1e-9 * want);
            CHECK(fabs((skew ? b.time_s : b.algbw) -
                       (skew ? frac(b.time_exact) : frac(b.algbw_exact))) <=
                  1e-12 * (skew ? b.time_s : b.algbw));
            compared++;
            merged += b.sources < nr;
            by_basis += b.cert == WEFT_A2A_CERT_BASIS;
            CHECK(b.cert != WEFT_A2A_CERT_EXACT || !o.exact_basis);
            weft_a2a_bound_fini(&b);
        }
        free(m.bytes);
        weft_topo_free(t);
    }
    CHECK(compared >= 120);
    CHECK(merged >= 20);   /* the symmetric path really ran */
    CHECK(by_basis >= 20); /* and the exact basic solution */
    fprintf(stderr,
            "property: %d fabrics compared, %d with merged sources, %d by the exact basis\n",
            compared, merged, by_basis);
}

/* Column generation (a2a_colgen.c, the default for a matrix) gives the
 * same rational as the edge program (edge_lp, the method before it),
 * character for character: presets with MoE matrices and random fabrics
 * with random skewed matrices (zeros included). Its master has one row per
 * source and per link, which tells that it, not the fallback, answered. */
static void test_colgen_equals_edge(void)
{
    static const struct {
        const char *spec;
        uint32_t experts;
    } cases[] = {{"a100:2", 32},         {"h100:2", 16},    {"h100:4", 8},   {"dgx1", 8},
                 {"mixnet:hosts=2", 16}, {"torus:4x4", 16}, {"mi250:2", 64}, {"ring:5", 5}};
    int compared = 0, by_colgen = 0;
    for (int iter = 0; iter < 48; iter++) {
        bool pre = iter < 16;
        weft_topo *t = pre ? preset(cases[iter % 8].spec) : random_fabric();
        CHECK(t != NULL);
        if (!t)
            continue;
        uint32_t nr = weft_topo_num_ranks(t);
        weft_traffic m = {0, NULL};
        weft_diag d;
        if (pre) {
            weft_traffic_moe_params mp = {.ranks = nr,
                                          .experts = cases[iter % 8].experts,
                                          .topk = 2,
                                          .tokens = 64,
                                          .hidden_bytes = 4096,
                                          .skew = WEFT_TRAFFIC_SKEW_ZIPF,
                                          .zipf_milli = 1200,
                                          .seed = (uint64_t)iter};
            CHECK_ERR(weft_traffic_moe(&mp, &m, &d), WEFT_OK);
        } else {
            make_matrix(&m, nr);
            for (uint32_t i = 0; i < nr; i++)
                for (uint32_t j = 0; j < nr; j++)
                    m.bytes[i * nr + j] = i == j ? 0 : rnd(3) * (1 + rnd(5000));
            m.bytes[0 * nr + 1] += 1;
        }
        weft_a2a_bound_opts o;
        weft_a2a_bound_opts_init(&o);
        weft_a2a_bound a, b;
        weft_err ea = weft_a2a_bound_compute(t, &m, &o, &a, &d);
        o.edge_lp = true;
        weft_err eb = weft_a2a_bound_compute(t, &m, &o, &b, &d);
        CHECK_ERR(ea, eb);
        if (!ea && !eb) {
            CHECK_STR(a.time_exact, b.time_exact);
            compared++;
            by_colgen += a.lp_rows == a.sources + weft_topo_num_links(t);
            CHECK(b.lp_rows != b.sources + weft_topo_num_links(t));
        }
        if (!ea)
            weft_a2a_bound_fini(&a);
        if (!eb)
            weft_a2a_bound_fini(&b);
        if (pre)
            weft_traffic_free(&m);
        else
            free(m.bytes);
        weft_topo_free(t);
    }
    CHECK(compared >= 40);
    /* None falls back to the edge program (a100:2's seed 8, a degenerate
     * master whose exact basis misses the dual's bound, is proved by the
     * rounded values). */
    CHECK(by_colgen == compared);
    fprintf(stderr,
            "column generation = edge program: %d matrices, exact; %d by column "
            "generation\n",
            compared, by_colgen);
}

/* Every allocation of the library's own (weft__malloc) failing in turn:
 * WEFT_ENOMEM and nothing leaked, never a wrong or partial answer. (GMP's
 * and GLPK's own allocations abort on failure, as those libraries do.) */
typedef struct oom_arg {
    weft_topo *t;
    weft_traffic *m;
    weft_a2a_bound b;
    const weft_a2a_bound_opts *o;
} oom_arg;

static weft_err ctor_a2a(void *arg)
{
    oom_arg *a = arg;
    return weft_a2a_bound_compute(a->t, a->m, a->o, &a->b, NULL);
}

static void dtor_a2a(void *arg)
{
    oom_arg *a = arg;
    CHECK(a->b.algbw_exact || a->b.time_exact);
    weft_a2a_bound_fini(&a->b);
}

static void test_oom(void)
{
    oom_arg a = {preset("a100:2"), NULL, {0}, NULL};
    CHECK(weft_test_oom_sweep("a2a bound a100:2", ctor_a2a, dtor_a2a, &a) > 10);
    weft_topo_free(a.t);
    weft_traffic m;
    make_matrix(&m, 4);
    for (uint32_t i = 0; i < 16; i++)
        m.bytes[i] = 10 + i;
    a.t = preset("switch:4");
    a.m = &m;
    CHECK(weft_test_oom_sweep("a2a bound switch:4 matrix", ctor_a2a, dtor_a2a, &a) > 10);
    weft_a2a_bound_opts o;
    weft_a2a_bound_opts_init(&o);
    o.exact_basis = true;
    a.o = &o;
    CHECK(weft_test_oom_sweep("a2a bound switch:4 exact basis", ctor_a2a, dtor_a2a, &a) > 10);
    weft_topo_free(a.t);
    free(m.bytes);
}

int main(void)
{
    test_closed_forms();
    test_limits();
    test_matrices();
    test_bad_input();
    test_property();
    test_colgen_equals_edge();
    test_oom();
    return weft_test_done();
}
