/* The optimal all-to-all plan (weft_synth_a2a_optimal): it verifies against
 * the fabric (routes follow real links) and its exact throughput limit
 * (weft_plan_cost_get, the busiest link's load) equals the certified bound,
 * on switches, boxes with NICs, NVLink meshes (relays through other GPUs),
 * tori and one-way rings, both where the plan maps rank 0's flow to every
 * rank (one source: switch, a100, h100:2 and h100:16) and where every rank
 * is solved for. With a traffic matrix
 * (weft_synth_a2a_optimal_traffic): an alltoallv plan whose exact time at
 * its own size (total / N bytes over its limit) equals the bound's
 * time_exact, one op per pair with bytes, and whose fluid cut-through
 * simulation at 1 GiB per rank is within 1 % of that time (scaled), never
 * below it. */
#include <gmp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "weft/plan.h"
#include "weft/sim.h"
#include "weft/synth.h"
#include "weft/traffic.h"

/* sources: the program's (1 where the fabric's rank maps apply, orbits.h:
 * rank 0's flow mapped to every rank; otherwise one per rank). */
static void check(const char *spec, const char *want, uint32_t sources)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_preset(spec, &t, &d), WEFT_OK);
    if (!t)
        return;
    weft_plan *p = NULL;
    weft_a2a_bound b;
    weft_err e = weft_synth_a2a_optimal(t, &p, &b, &d);
    if (e)
        fprintf(stderr, "%s: %s\n", spec, d.msg);
    CHECK_ERR(e, WEFT_OK);
    if (!e) {
        CHECK_STR(b.algbw_exact, want);
        CHECK_INT(b.sources, sources);
        e = weft_plan_verify(p, t, &d);
        if (e)
            fprintf(stderr, "%s: verify: %s\n", spec, d.msg);
        CHECK_ERR(e, WEFT_OK);
        weft_plan_cost cost;
        CHECK_ERR(weft_plan_cost_get(p, t, &cost, &d), WEFT_OK);
        char got[64];
        weft_rat_format_exact(cost.algbw, got, sizeof got);
        CHECK_STR(got, want);
        uint32_t nr = weft_topo_num_ranks(t);
        CHECK_INT(weft_plan_num_ops(p), (uint64_t)nr * nr);
        weft_plan_free(p);
        weft_a2a_bound_fini(&b);
    }
    weft_topo_free(t);
}

/* The plan's exact time at its own size: total / (N algbw 1e9) s. */
static void plan_time(const weft_traffic *m, weft_rat algbw, char *out, size_t size)
{
    mpq_t q, r;
    mpq_inits(q, r, NULL);
    uint64_t total = 0;
    for (size_t i = 0; i < (size_t)m->ranks * m->ranks; i++)
        total += m->bytes[i];
    mpz_set_ui(mpq_numref(r), (unsigned long)algbw.num);
    mpz_mul_ui(mpq_numref(r), mpq_numref(r), (unsigned long)m->ranks * 1000000000ul);
    mpz_set_ui(mpq_denref(r), (unsigned long)algbw.den);
    mpq_canonicalize(r);
    mpq_set_ui(q, total, 1);
    mpq_div(q, q, r);
    char *text = mpq_get_str(NULL, 10, q);
    snprintf(out, size, "%s", text);
    void (*release)(void *, size_t);
    mp_get_memory_functions(NULL, NULL, &release);
    release(text, strlen(text) + 1);
    mpq_clears(q, r, NULL);
}

/* The exact time of plan p at the bytes of m: the largest over links of the
 * bytes its paths put there (share x bytes) over the bandwidth, in seconds,
 * summed in rationals (the plan's cost in 64-bit fractions can overflow on
 * 128 ranks). */
static void exact_plan_time(const weft_topo *t, const weft_plan *p, const weft_traffic *m,
                            char *out, size_t size)
{
    uint32_t nl = weft_topo_num_links(t);
    mpq_t *load = calloc((size_t)nl + 1, sizeof *load);
    for (uint32_t l = 0; l < nl; l++)
        mpq_init(load[l]);
    mpq_t q, best;
    mpq_inits(q, best, NULL);
    for (uint32_t id = 0; id < weft_plan_num_ops(p); id++) {
        weft_op op = weft_plan_op(p, id);
        uint64_t bytes = weft_traffic_at(m, op.src_rank.v, op.dst_rank.v);
        for (uint32_t k = 0; k < weft_plan_op_num_paths(p, id); k++) {
            weft_rat sh = weft_plan_path_share(p, id, k);
            mpq_set_si(q, sh.num, (unsigned long)sh.den);
            mpq_canonicalize(q);
            mpz_mul_ui(mpq_numref(q), mpq_numref(q), bytes);
            mpq_canonicalize(q);
            weft_node_id u = {0}, v = {0};
            for (uint32_t i = 0; i < weft_plan_path_len(p, id, k); i++, u = v) {
                weft_link_id l;
                if (!weft_topo_find_node(t, weft_plan_path_node(p, id, k, i), &v))
                    CHECK(!"a path node is not the fabric's");
                if (i > 0 && weft_topo_find_link(t, u, v, &l))
                    mpq_add(load[l.v], load[l.v], q);
            }
        }
    }
    for (uint32_t l = 0; l < nl; l++) {
        weft_rat bw = weft_topo_link_bw(t, (weft_link_id){l});
        mpq_set_si(q, bw.num, (unsigned long)bw.den);
        mpq_canonicalize(q);
        mpz_mul_ui(mpq_numref(q), mpq_numref(q), 1000000000ul);
        mpq_canonicalize(q);
        mpq_div(q, load[l], q);
        if (mpq_cmp(q, best) > 0)
            mpq_set(best, q);
        mpq_clear(load[l]);
    }
    free(load);
    char *text = mpq_get_str(NULL, 10, best);
    snprintf(out, size, "%s", text);
    void (*release)(void *, size_t);
    mp_get_memory_functions(NULL, NULL, &release);
    release(text, strlen(text) + 1);
    mpq_clears(q, best, NULL);
}

/* The same matrix's plan by the edge program (edge_lp: its flow
 * decomposed, the path before column generation): verified, and its
 * exact time the same string as the default plan's bound. */
static void check_edge_plan(const char *what, weft_topo *t, const weft_traffic *m,
                            const char *time_exact)
{
    weft_a2a_bound_opts o;
    weft_a2a_bound_opts_init(&o);
    o.edge_lp = true;
    weft_diag d;
    weft_plan *p = NULL;
    weft_a2a_bound b;
    weft_err e = weft_synth_a2a_optimal_opts(t, m, &o, &p, &b, &d);
    if (e)
        fprintf(stderr, "%s (edge program): %s\n", what, d.msg);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        return;
    CHECK_STR(b.time_exact, time_exact);
    CHECK_INT(b.lp_rows, b.sources * weft_topo_num_nodes(t) + weft_topo_num_links(t));
    CHECK_ERR(weft_plan_verify(p, t, &d), WEFT_OK);
    char got[128];
    exact_plan_time(t, p, m, got, sizeof got);
    CHECK_STR(got, time_exact);
    weft_a2a_bound_fini(&b);
    weft_plan_free(p);
}

/* Optimal plan of matrix m on t: verified, one op per pair with bytes, its
 * exact time the bound's time_exact (want, when not NULL), and the
 * cut-through simulation at its own size within 1 % of it. The plan is
 * routed on column generation's trees (plan_trees: these fabrics are
 * below the size where that is the default); the edge program's plan
 * (check_edge_plan) has the same exact time. */
static void check_matrix(const char *what, weft_topo *t, const weft_traffic *m, const char *want,
                         bool sim, bool slow_rt)
{
    CHECK(t != NULL);
    if (!t)
        return;
    weft_diag d;
    weft_plan *p = NULL;
    weft_a2a_bound b;
    weft_a2a_bound_opts bo;
    weft_a2a_bound_opts_init(&bo);
    bo.plan_trees = true;
    weft_err e = weft_synth_a2a_optimal_opts(t, m, &bo, &p, &b, &d);
    if (e)
        fprintf(stderr, "%s: %s\n", what, d.msg);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        return;
    weft_a2a_bound ref;
    CHECK_ERR(weft_a2a_bound_compute(t, m, NULL, &ref, &d), WEFT_OK);
    CHECK_STR(b.time_exact, ref.time_exact);
    /* Column generation's master (sources + links rows) routed it. */
    CHECK_INT(b.lp_rows, b.sources + weft_topo_num_links(t));
    if (want)
        CHECK_STR(b.time_exact, want);
    e = weft_plan_verify(p, t, &d);
    if (e)
        fprintf(stderr, "%s: verify: %s\n", what, d.msg);
    CHECK_ERR(e, WEFT_OK);
    CHECK(weft_plan_traffic(p) != NULL);
    uint64_t pairs = 0, total = 0;
    for (size_t i = 0; i < (size_t)m->ranks * m->ranks; i++) {
        pairs += m->bytes[i] > 0;
        total += m->bytes[i];
    }
    CHECK_INT(weft_plan_num_ops(p), pairs);
    weft_plan_cost cost;
    CHECK_ERR(weft_plan_cost_get(p, t, &cost, &d), WEFT_OK);
    char got[128];
    plan_time(m, cost.algbw, got, sizeof got);
    if (strcmp(got, b.time_exact) != 0)
        fprintf(stderr, "%s: plan time %s, bound %s\n", what, got, b.time_exact);
    CHECK_STR(got, b.time_exact);
    exact_plan_time(t, p, m, got, sizeof got);
    CHECK_STR(got, b.time_exact);
    check_edge_plan(what, t, m, b.time_exact);
    CHECK(total % m->ranks == 0);
    if (!sim)
        goto done;
    /* Scaled to 1 GiB per rank (S = 1 GiB: every op's bytes times
     * 2^30 / (total / N)), the bound's time scales alike. The fluid model
     * shares links in proportion to bytes in an alltoallv plan, so the
     * plan's pairs drain together at the flow's rates: the simulation is
     * the bound plus route latency, never below the bound. */
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    o.cut_through = true;
    weft_sim_result r;
    const uint64_t gib = 1ull << 30;
    double want_s = b.time_s * (double)gib / (double)(total / m->ranks);
    CHECK_ERR(weft_sim_plan(t, p, gib, &o, &r, &d), WEFT_OK);
    if (!(r.time_s <= 1.01 * want_s && r.time_s >= want_s * (1 - 1e-9)))
        fprintf(stderr, "%s: simulated %.9g s at 1 GiB, bound %.9g s\n", what, r.time_s, want_s);
    CHECK(r.time_s <= 1.01 * want_s);
    CHECK(r.time_s >= want_s * (1 - 1e-9));
    /* The runtime model shares per flow, as TCP does: no weights, and on
     * this matrix the big pairs trail (checked where it shows). */
    if (slow_rt) {
        o.cut_through = false;
        o.model = WEFT_SIM_RUNTIME;
        CHECK_ERR(weft_sim_plan(t, p, gib, &o, &r, &d), WEFT_OK);
        if (!(r.time_s > 1.05 * want_s))
            fprintf(stderr, "%s: runtime model %.9g s at 1 GiB, bound %.9g s\n", what, r.time_s,
                    want_s);
        CHECK(r.time_s > 1.05 * want_s);
    }
done:
    weft_a2a_bound_fini(&ref);
    weft_a2a_bound_fini(&b);
    weft_plan_free(p);
}

static weft_topo *preset(const char *spec)
{
    weft_topo *t = NULL;
    weft_diag d;
    if (weft_topo_preset(spec, &t, &d))
        return NULL;
    return t;
}

/* A star of 5 ranks whose rank links differ (rank i: 10 (i + 1) GB/s both
 * ways) plus a one-way link rank 4 -> rank 0 of 5 GB/s. */
static weft_topo *uneven_switch(void)
{
    weft_topo_builder *b;
    if (weft_topo_builder_new(&b))
        return NULL;
    for (uint32_t v = 0; v < 5; v++) {
        char name[8];
        snprintf(name, sizeof name, "r%u", v);
        weft_topo_builder_add_node(b, name, WEFT_NODE_COMPUTE, NULL, NULL);
    }
    weft_topo_builder_add_node(b, "sw", WEFT_NODE_SWITCH, NULL, NULL);
    for (uint32_t v = 0; v < 5; v++) {
        weft_rat bw = weft_rat_int(10 * (v + 1));
        weft_topo_builder_add_link(b, (weft_node_id){v}, (weft_node_id){5}, bw, weft_rat_int(0));
        weft_topo_builder_add_link(b, (weft_node_id){5}, (weft_node_id){v}, bw, weft_rat_int(0));
    }
    weft_topo_builder_add_link(b, (weft_node_id){4}, (weft_node_id){0}, weft_rat_int(5),
                               weft_rat_int(0));
    weft_topo *t = NULL;
    weft_diag d;
    if (weft_topo_build(b, &t, &d))
        return NULL;
    return t;
}

/* A skewed matrix with zeros: entry (i, j) from a fixed pattern, every
 * third pair empty, the diagonal kept on some ranks (local copies), rows
 * padded so the total is a multiple of n. */
static void skewed(weft_traffic *m, uint32_t n)
{
    m->ranks = n;
    m->bytes = calloc((size_t)n * n, sizeof *m->bytes);
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            uint64_t v = (i * 7 + j * 3) % 3 == 0 ? 0 : 1000000u * (1 + (i * 5 + j * 11) % 13);
            if (i == j)
                v = i % 2 ? 4096000 : 0;
            if (i == 0)
                v *= 6; /* a hot sender */
            m->bytes[(size_t)i * n + j] = v;
            total += v;
        }
    m->bytes[1] += (n - total % n) % n;
}

static void test_matrices(void)
{
    weft_traffic m;
    /* switch:4 at 100 GB/s: rank0 -> switch carries 300 + 100 + 100 bytes
     * (a2a_bound_test's hand-worked case): 5 ns. */
    weft_topo *t = preset("switch:4,bw=100");
    m.ranks = 4;
    m.bytes = calloc(16, sizeof *m.bytes);
    for (uint32_t i = 0; i < 4; i++)
        for (uint32_t j = 0; j < 4; j++)
            m.bytes[i * 4 + j] = i == j ? 7 : 100;
    m.bytes[0 * 4 + 1] = 300;
    m.bytes[2 * 4 + 3] = 0;
    check_matrix("switch:4", t, &m, "1/200000000", true, false);
    free(m.bytes);
    weft_topo_free(t);

    static const char *const specs[] = {"a100:2", "torus:4x4", "ring:4"};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        t = preset(specs[k]);
        if (t) {
            skewed(&m, weft_topo_num_ranks(t));
            check_matrix(specs[k], t, &m, NULL, true, k < 2);
            free(m.bytes);
        }
        weft_topo_free(t);
    }
    t = uneven_switch();
    skewed(&m, 5);
    check_matrix("uneven switch:5", t, &m, NULL, true, false);
    free(m.bytes);
    weft_topo_free(t);
}

/* 128 ranks (h100:16) with the MoE dispatch matrices of
 * bench_a2a_optimal_skew (zipf 1.2, top-2 of 128 and of 256 experts, 4,096
 * tokens of 8 KiB per rank, seed 1): the edge program took 8-10 s of CPU
 * for each plan; the trees take a tenth of a second. The plan verifies,
 * has one op per pair with bytes and meets the bound exactly (its time
 * summed in rationals is time_exact, the string docs/bound.md shows). On
 * the 256-expert matrix some sources' tree shares pass 64 bits, so they
 * are rerouted by the restricted edge program (a2a_bound.c). */
static void test_moe128(void)
{
    weft_topo *t = preset("h100:16");
    CHECK(t != NULL);
    if (!t)
        return;
    static const struct {
        uint32_t experts;
        const char *time;
        uint32_t ops;
    } cases[] = {{128, "596513/48828125", 16380}, {256, "666091/48828125", 16377}};
    for (size_t k = 0; k < 2; k++) {
        weft_traffic_moe_params mp = {.ranks = 128,
                                      .experts = cases[k].experts,
                                      .topk = 2,
                                      .tokens = 4096,
                                      .hidden_bytes = 8192,
                                      .skew = WEFT_TRAFFIC_SKEW_ZIPF,
                                      .zipf_milli = 1200,
                                      .seed = 1};
        weft_traffic m = {0, NULL};
        weft_diag d;
        CHECK_ERR(weft_traffic_moe(&mp, &m, &d), WEFT_OK);
        weft_plan *p = NULL;
        weft_a2a_bound b;
        weft_err e = weft_synth_a2a_optimal_traffic(t, &m, &p, &b, &d);
        if (e)
            fprintf(stderr, "moe %u experts: %s\n", cases[k].experts, d.msg);
        CHECK_ERR(e, WEFT_OK);
        if (!e) {
            CHECK_STR(b.time_exact, cases[k].time);
            CHECK_INT(b.lp_rows, 128 + weft_topo_num_links(t)); /* the master's */
            CHECK_INT(weft_plan_num_ops(p), cases[k].ops);
            e = weft_plan_verify(p, t, &d);
            if (e)
                fprintf(stderr, "moe %u experts: verify: %s\n", cases[k].experts, d.msg);
            CHECK_ERR(e, WEFT_OK);
            char got[128];
            exact_plan_time(t, p, &m, got, sizeof got);
            CHECK_STR(got, cases[k].time);
            weft_plan_free(p);
            weft_a2a_bound_fini(&b);
        }
        weft_traffic_free(&m);
    }
    weft_topo_free(t);
}

/* Errors: the bound's (a matrix without traffic between distinct ranks, the
 * wrong size), the same with the edge program. */
static void test_bad(void)
{
    weft_topo *t = preset("switch:4");
    weft_traffic m;
    weft_diag d;
    weft_plan *p = NULL;
    weft_a2a_bound b;
    CHECK_ERR(weft_traffic_new(4, &m, &d), WEFT_OK);
    m.bytes[5] = 9;
    CHECK_ERR(weft_synth_a2a_optimal_traffic(t, &m, &p, &b, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "the traffic matrix sends no bytes between distinct ranks; there is nothing "
                     "to bound");
    weft_traffic_free(&m);
    CHECK_ERR(weft_traffic_new(3, &m, &d), WEFT_OK);
    m.bytes[1] = 9;
    CHECK_ERR(weft_synth_a2a_optimal_traffic(t, &m, &p, &b, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "the traffic matrix is 3 x 3 but the fabric has 4 ranks");
    CHECK(p == NULL);
    weft_a2a_bound_opts o;
    weft_a2a_bound_opts_init(&o);
    o.edge_lp = true;
    CHECK_ERR(weft_synth_a2a_optimal_opts(t, &m, &o, &p, &b, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "the traffic matrix is 3 x 3 but the fabric has 4 ranks");
    CHECK(p == NULL);
    weft_traffic_free(&m);
    weft_topo_free(t);
}

/* Random fabrics of identical boxes that rotate (rank maps apply): B boxes
 * of k ranks, one-way circulant links inside a box (rank i to i + o, a
 * bandwidth per offset o), maybe a box switch, maybe a NIC per rank to one
 * shared switch or to k rails, with unequal bandwidths up and down. The
 * plan has one source, verifies, and its exact limit equals the bound
 * solved without symmetry (every rank a source, no orbit code involved). */
static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

static uint32_t rnd(uint32_t n)
{
    return (uint32_t)(weft_test_rng(&rng_state) % n);
}

static weft_topo *rotating_boxes(void)
{
    uint32_t boxes = 1 + rnd(4), k = 2 + rnd(4);
    bool box_switch = rnd(2), nics = boxes > 1 && rnd(3);
    uint32_t rails = nics && rnd(2) ? k : 1;
    if (boxes > 1 && !nics)
        box_switch = true, nics = true; /* the boxes must be joined */
    weft_topo_builder *b;
    if (weft_topo_builder_new(&b))
        return NULL;
    uint32_t per = k + box_switch + (nics ? k : 0);
    for (uint32_t x = 0; x < boxes; x++) {
        char name[32], host[16];
        snprintf(host, sizeof host, "b%u", x);
        for (uint32_t i = 0; i < k; i++) {
            snprintf(name, sizeof name, "b%u.g%u", x, i);
            weft_topo_builder_add_node(b, name, WEFT_NODE_COMPUTE, host, NULL);
        }
        if (box_switch) {
            snprintf(name, sizeof name, "b%u.sw", x);
            weft_topo_builder_add_node(b, name, WEFT_NODE_SWITCH, host, NULL);
        }
        for (uint32_t i = 0; nics && i < k; i++) {
            snprintf(name, sizeof name, "b%u.nic%u", x, i);
            weft_topo_builder_add_node(b, name, WEFT_NODE_NIC, host, NULL);
        }
    }
    for (uint32_t r = 0; nics && r < rails; r++) {
        char name[16];
        snprintf(name, sizeof name, "rail%u", r);
        weft_topo_builder_add_node(b, name, WEFT_NODE_SWITCH, NULL, NULL);
    }
    uint32_t off_bw[8] = {0};
    for (uint32_t o = 1; o < k; o++)
        off_bw[o] = rnd(2) ? 1 + rnd(40) : 0;
    if (!box_switch && !off_bw[1])
        off_bw[1] = 1 + rnd(40); /* a one-way ring at least: connected */
    int64_t sw = 5 + rnd(30), nic = 1 + rnd(20), up = 1 + rnd(20), down = rnd(2) ? up : 1 + rnd(20);
    uint32_t rail0 = boxes * per;
    for (uint32_t x = 0; x < boxes; x++) {
        uint32_t base = x * per;
        for (uint32_t i = 0; i < k; i++) {
            for (uint32_t o = 1; o < k; o++)
                if (off_bw[o])
                    weft_topo_builder_add_link(b, (weft_node_id){base + i},
                                               (weft_node_id){base + (i + o) % k},
                                               weft_rat_int(off_bw[o]), weft_rat_int(0));
            if (box_switch)
                weft_topo_builder_add_duplex(b, (weft_node_id){base + i}, (weft_node_id){base + k},
                                             weft_rat_int(sw), weft_rat_int(0));
            if (!nics)
                continue;
            weft_node_id nv = {base + k + box_switch + i}, rail = {rail0 + i % rails};
            weft_topo_builder_add_duplex(b, (weft_node_id){base + i}, nv, weft_rat_int(nic),
                                         weft_rat_int(0));
            weft_topo_builder_add_link(b, nv, rail, weft_rat_int(up), weft_rat_int(0));
            weft_topo_builder_add_link(b, rail, nv, weft_rat_int(down), weft_rat_int(0));
        }
    }
    weft_topo *t = NULL;
    weft_diag d;
    if (weft_topo_build(b, &t, &d)) {
        fprintf(stderr, "rotating_boxes: %s\n", d.msg);
        return NULL;
    }
    return t;
}

static void test_rotating_boxes(void)
{
    uint32_t mapped = 0;
    for (int it = 0; it < 40; it++) {
        weft_topo *t = rotating_boxes();
        CHECK(t != NULL);
        if (!t)
            continue;
        weft_diag d;
        weft_plan *p = NULL;
        weft_a2a_bound b, full;
        weft_a2a_bound_opts o;
        weft_a2a_bound_opts_init(&o);
        o.use_symmetry = false;
        weft_err e = weft_synth_a2a_optimal(t, &p, &b, &d);
        if (e)
            fprintf(stderr, "rotating boxes %d: %s\n", it, d.msg);
        CHECK_ERR(e, WEFT_OK);
        weft_err fe = weft_a2a_bound_compute(t, NULL, &o, &full, &d);
        CHECK_ERR(fe, WEFT_OK);
        if (!e && !fe) {
            CHECK_INT(full.sources, weft_topo_num_ranks(t));
            mapped += b.sources == 1;
            CHECK_STR(b.algbw_exact, full.algbw_exact);
            CHECK_ERR(weft_plan_verify(p, t, &d), WEFT_OK);
            weft_plan_cost cost;
            CHECK_ERR(weft_plan_cost_get(p, t, &cost, &d), WEFT_OK);
            mpq_t want, got;
            mpq_inits(want, got, NULL);
            CHECK(mpq_set_str(want, full.algbw_exact, 10) == 0);
            mpq_set_si(got, cost.algbw.num, (unsigned long)cost.algbw.den);
            mpq_canonicalize(got);
            if (!mpq_equal(got, want))
                fprintf(stderr, "rotating boxes %d: limit %lld/%lld, bound %s\n", it,
                        (long long)cost.algbw.num, (long long)cost.algbw.den, full.algbw_exact);
            CHECK(mpq_equal(got, want));
            mpq_clears(want, got, NULL);
        }
        if (!e) {
            weft_plan_free(p);
            weft_a2a_bound_fini(&b);
        }
        if (!fe)
            weft_a2a_bound_fini(&full);
        weft_topo_free(t);
    }
    /* Every one of them rotates: the rank maps are found each time. */
    CHECK_INT(mapped, 40);
}

/* Allocation failures on the mapped path (h100:2: rank maps, one source,
 * rank 0's decomposition mapped): WEFT_ENOMEM and nothing leaked at every
 * failing allocation of the library's own. */
typedef struct oom_arg {
    weft_topo *t;
    weft_plan *p;
    weft_a2a_bound b;
} oom_arg;

static weft_err ctor_optimal(void *arg)
{
    oom_arg *a = arg;
    return weft_synth_a2a_optimal(a->t, &a->p, &a->b, NULL);
}

static void dtor_optimal(void *arg)
{
    oom_arg *a = arg;
    CHECK_INT(a->b.sources, 1);
    CHECK_INT(weft_plan_num_ops(a->p), 256);
    weft_plan_free(a->p);
    weft_a2a_bound_fini(&a->b);
}

/* The same on a matrix routed by column generation's trees, where some
 * sources are rerouted by the restricted edge program (torus:4x4 with the
 * skewed matrix: its tree shares pass 64 bits). */
typedef struct oom_matrix {
    weft_topo *t;
    weft_traffic m;
    weft_plan *p;
    weft_a2a_bound b;
} oom_matrix;

static weft_err ctor_matrix(void *arg)
{
    oom_matrix *a = arg;
    weft_a2a_bound_opts o;
    weft_a2a_bound_opts_init(&o);
    o.plan_trees = true;
    return weft_synth_a2a_optimal_opts(a->t, &a->m, &o, &a->p, &a->b, NULL);
}

static void dtor_matrix(void *arg)
{
    oom_matrix *a = arg;
    CHECK_INT(a->b.lp_rows, a->b.sources + weft_topo_num_links(a->t));
    weft_plan_free(a->p);
    weft_a2a_bound_fini(&a->b);
}

static void test_oom(void)
{
    oom_matrix om;
    memset(&om, 0, sizeof om);
    om.t = preset("torus:4x4");
    if (om.t) {
        skewed(&om.m, 16);
        CHECK(weft_test_oom_sweep("a2a optimal trees torus:4x4", ctor_matrix, dtor_matrix, &om) >
              50);
        free(om.m.bytes);
    }
    weft_topo_free(om.t);

    oom_arg a = {NULL, NULL, {0}};
    weft_diag d;
    CHECK_ERR(weft_topo_preset("h100:2", &a.t, &d), WEFT_OK);
    if (a.t)
        CHECK(weft_test_oom_sweep("a2a optimal h100:2", ctor_optimal, dtor_optimal, &a) > 20);
    weft_topo_free(a.t);
}

int main(void)
{
    test_rotating_boxes();
    test_oom();
    test_matrices();
    test_moe128();
    test_bad();
    check("switch:4,bw=30", "40", 1);
    check("a100:2", "50", 1);
    check("dgx1", "75", 8);
    check("torus:4x4", "200", 16);
    check("ring:4", "200/3", 1);
    check("mi250:2", "32", 32);
    check("h100:2", "100", 1);
    check("h100:16", "160/3", 1);
    return weft_test_done();
}
