/* BFB schedules (bfb.c) against computations of their own:
 *  - plans verify; allgather takes exactly the diameter in dependent steps;
 *    reduce-scatter and allreduce build and verify;
 *  - the stepwise throughput equals an independent computation: from the
 *    plan's own ops, the load each link carries at each step (the step of
 *    an op is the distance from the shard's owner to the receiver, found
 *    here by Floyd-Warshall), an upper bound on the optimum; and from a
 *    brute force over every set of sources of every (receiver, step) of
 *    Hall's ratio |W| / bw(links W may use), a lower bound on any split.
 *    Both must equal weft_bfb_analyze's figure exactly;
 *  - it equals weft bound where BFB is bandwidth-optimal: complete graphs
 *    (one step, one shard per link), complete bipartite graphs and
 *    hypercubes (every source at distance t reaches v through the same
 *    number of in-neighbours, so the even split loads every link with
 *    |sources at distance t| / d and the steps add up to (N-1)/d);
 *  - errors: a switched fabric, broadcast, a disconnected fabric; and an
 *    allocation-failure sweep. */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "weft/synth.h"

static weft_topo *make(const char *spec)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_topo_from_spec(spec, NULL, &t, &d);
    if (e)
        fprintf(stderr, "%s: %s\n", spec, d.msg);
    CHECK_ERR(e, WEFT_OK);
    return t;
}

static weft_topo *parse(const char *text)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_topo_parse(text, strlen(text), "test.topo", &t, &d);
    if (e)
        fprintf(stderr, "%s\n", d.msg);
    CHECK_ERR(e, WEFT_OK);
    return t;
}

/* All-pairs distances (n <= 64) by Floyd-Warshall; dist[a*n+b] from a to b. */
static void floyd(const weft_topo *t, uint32_t *dist)
{
    uint32_t n = weft_topo_num_ranks(t);
    for (uint32_t i = 0; i < n * n; i++)
        dist[i] = i % (n + 1) == 0 ? 0 : 1000000;
    for (uint32_t l = 0; l < weft_topo_num_links(t); l++) {
        weft_link_id id = {l};
        dist[weft_topo_link_src(t, id).v * n + weft_topo_link_dst(t, id).v] = 1;
    }
    for (uint32_t k = 0; k < n; k++)
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < n; j++)
                if (dist[i * n + k] + dist[k * n + j] < dist[i * n + j])
                    dist[i * n + j] = dist[i * n + k] + dist[k * n + j];
}

/* Hall's lower bound for allgather on t (reversed: on the reversed fabric),
 * summed over steps: sum_t max_v max_W |W| / bw(N(W)), in ns per byte of
 * a shard (1 / GB/s). Sources at distance t from v are at most 16. */
static weft_rat hall_sum(const weft_topo *t, bool reversed, uint32_t *steps)
{
    uint32_t n = weft_topo_num_ranks(t), *dist = malloc((size_t)n * n * sizeof *dist);
    floyd(t, dist);
#define DIST(a, b) (reversed ? dist[(b)*n + (a)] : dist[(a)*n + (b)])
    uint32_t diam = 0;
    for (uint32_t i = 0; i < n * n; i++)
        if (dist[i] > diam)
            diam = dist[i];
    *steps = diam;
    weft_rat sum = weft_rat_int(0);
    for (uint32_t s = 1; s <= diam; s++) {
        weft_rat best = weft_rat_int(0);
        for (uint32_t v = 0; v < n; v++) {
            uint32_t src[16], ns = 0;
            for (uint32_t w = 0; w < n; w++)
                if (DIST(w, v) == s && ns < 16)
                    src[ns++] = w;
            /* The in-links of v (in the direction used). */
            uint32_t in[64], nin = 0;
            weft_rat inbw[64];
            for (uint32_t l = 0; l < weft_topo_num_links(t); l++) {
                weft_link_id id = {l};
                uint32_t a = weft_topo_link_src(t, id).v, b = weft_topo_link_dst(t, id).v;
                uint32_t from = reversed ? b : a, to = reversed ? a : b;
                if (to == v && nin < 64) {
                    in[nin] = from;
                    inbw[nin++] = weft_topo_link_bw(t, id);
                }
            }
            for (uint32_t set = 1; set < (1u << ns); set++) {
                weft_rat bw = weft_rat_int(0);
                for (uint32_t k = 0; k < nin; k++) {
                    bool used = false;
                    for (uint32_t i = 0; i < ns && !used; i++)
                        used = (set >> i & 1) && DIST(src[i], in[k]) == s - 1;
                    if (used)
                        weft_rat_add(bw, inbw[k], &bw);
                }
                weft_rat r;
                weft_rat_div(weft_rat_int(__builtin_popcount(set)), bw, &r);
                if (weft_rat_cmp(r, best) > 0)
                    best = r;
            }
        }
        weft_rat_add(sum, best, &sum);
    }
#undef DIST
    free(dist);
    return sum;
}

/* The step sum the allgather plan's ops load the links with: op of shard
 * w to v is at step dist(w, v); the step's time is the largest
 * load / bw over links. */
static weft_rat plan_sum(const weft_topo *t, const weft_plan *p, uint32_t K)
{
    uint32_t n = weft_topo_num_ranks(t), m = weft_topo_num_links(t);
    uint32_t *dist = malloc((size_t)n * n * sizeof *dist);
    floyd(t, dist);
    uint32_t diam = 0;
    for (uint32_t i = 0; i < n * n; i++)
        if (dist[i] > diam)
            diam = dist[i];
    int64_t *load = calloc((size_t)(diam + 1) * m, sizeof *load); /* chunks */
    for (uint32_t i = 0; i < weft_plan_num_ops(p); i++) {
        weft_op op = weft_plan_op(p, i);
        uint32_t w = op.src_index / K;
        CHECK(op.src_index / K == (op.src_index + op.count - 1) / K); /* one shard per op */
        weft_link_id l;
        CHECK(weft_topo_find_link(t, (weft_node_id){op.src_rank.v}, (weft_node_id){op.dst_rank.v},
                                  &l));
        uint32_t s = dist[w * n + op.dst_rank.v];
        CHECK(s >= 1 && s <= diam);
        CHECK_INT(dist[w * n + op.src_rank.v], s - 1);
        load[s * m + l.v] += op.count;
    }
    weft_rat sum = weft_rat_int(0);
    for (uint32_t s = 1; s <= diam; s++) {
        weft_rat best = weft_rat_int(0);
        for (uint32_t l = 0; l < m; l++) {
            weft_rat r;
            weft_rat_make(load[s * m + l], K, &r);
            weft_rat_div(r, weft_topo_link_bw(t, (weft_link_id){l}), &r);
            if (weft_rat_cmp(r, best) > 0)
                best = r;
        }
        weft_rat_add(sum, best, &sum);
    }
    free(load);
    free(dist);
    return sum;
}

static void check_one(const char *spec, weft_topo *t)
{
    uint32_t n = weft_topo_num_ranks(t);
    weft_diag d;
    weft_diag_clear(&d);
    /* Allgather: plan, steps, verification, loads. */
    weft_plan *p = NULL;
    weft_bfb info;
    weft_err e = weft_synth_bfb(t, WEFT_COLL_ALLGATHER, 0, &p, &info, &d);
    if (e)
        fprintf(stderr, "%s: %s\n", spec, d.msg);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        return;
    uint32_t diam;
    weft_rat hall = hall_sum(t, false, &diam);
    CHECK_INT(info.steps, diam);
    CHECK_ERR(weft_plan_verify(p, t, &d), WEFT_OK);
    weft_plan_cost cost;
    CHECK_ERR(weft_plan_cost_get(p, t, &cost, &d), WEFT_OK);
    CHECK_INT(cost.steps, diam); /* D dependent steps */
    weft_rat from_plan = plan_sum(t, p, info.chunks);
    weft_rat expect;
    weft_rat_div(weft_rat_int(n), hall, &expect);
    if (!weft_rat_eq(info.algbw_stepwise, expect) || !weft_rat_eq(from_plan, hall)) {
        char a[64], b[64], c[64];
        weft_rat_format_exact(info.algbw_stepwise, a, sizeof a);
        weft_rat_format_exact(expect, b, sizeof b);
        weft_rat_format_exact(from_plan, c, sizeof c);
        fprintf(stderr, "%s: bfb %s, N / Hall %s, plan's step sum %s\n", spec, a, b, c);
    }
    CHECK(weft_rat_eq(info.algbw_stepwise, expect));
    CHECK(weft_rat_eq(from_plan, hall));
    weft_bfb an;
    CHECK_ERR(weft_bfb_analyze(t, WEFT_COLL_ALLGATHER, &an, &d), WEFT_OK);
    CHECK(weft_rat_eq(an.algbw_stepwise, info.algbw_stepwise));
    CHECK_INT(an.steps, info.steps);
    weft_plan_free(p);
    /* Reduce-scatter is the reversed fabric's allgather; allreduce adds. */
    uint32_t rdiam;
    weft_rat rhall = hall_sum(t, true, &rdiam), both;
    weft_rat_add(hall, rhall, &both);
    static const weft_coll colls[] = {WEFT_COLL_REDUCESCATTER, WEFT_COLL_ALLREDUCE};
    for (int c = 0; c < 2; c++) {
        p = NULL;
        e = weft_synth_bfb(t, colls[c], 0, &p, &info, &d);
        CHECK_ERR(e, WEFT_OK);
        if (e)
            continue;
        CHECK_ERR(weft_plan_verify(p, t, &d), WEFT_OK);
        CHECK_INT(info.steps, c == 0 ? rdiam : rdiam + diam);
        weft_rat_div(weft_rat_int(n), c == 0 ? rhall : both, &expect);
        CHECK(weft_rat_eq(info.algbw_stepwise, expect));
        CHECK_ERR(weft_bfb_analyze(t, colls[c], &an, &d), WEFT_OK);
        CHECK(weft_rat_eq(an.algbw_stepwise, expect));
        weft_plan_free(p);
    }
}

static void test_independent(void)
{
    static const char *const specs[] = {
        "full:5",
        "bipartite:6",
        "genkautz:8,2",
        "genkautz:11,3",
        "line(full:3)",
        "circulant:8,1,3",
        "debruijn:2,3",
        "hypercube:3",
        "torus:3x3",
        "product(ring:3;ring:4)",
        "expand(full:3;2)",
        "genkautz:12,3",
        "line(genkautz:5,2)",
        "circulant:10,2,5",
        "ring:5",
        /* In-degrees above 8: the max-flow path. */
        "full:11",
        "expand(full:4;3)",
    };
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        weft_topo *t = make(specs[i]);
        if (t)
            check_one(specs[i], t);
        weft_topo_free(t);
    }
    /* Unequal bandwidths: a directed 4-cycle with chords at other speeds,
     * so the optimum is not a multiple of one link's time. */
    weft_topo *t = parse("node a compute\nnode b compute\nnode c compute\nnode e compute\n"
                         "link a b 100GB/s\nlink b c 100GB/s\nlink c e 100GB/s\n"
                         "link e a 100GB/s\nlink a c 30GB/s\nlink b e 70GB/s\n"
                         "duplex c a 25GB/s\n");
    if (t)
        check_one("mixed", t);
    weft_topo_free(t);
}

/* Fabrics where BFB is bandwidth-optimal: equal to weft bound. */
static void test_optimal(void)
{
    static const char *const specs[] = {"full:4",           "full:7",      "bipartite:8",
                                        "bipartite:10",     "hypercube:3", "hypercube:5",
                                        "full:6,bw=2400/7", "full:12"};
    static const weft_coll colls[] = {WEFT_COLL_ALLGATHER, WEFT_COLL_REDUCESCATTER,
                                      WEFT_COLL_ALLREDUCE};
    static const weft_bound_coll bcolls[] = {WEFT_BOUND_ALLGATHER, WEFT_BOUND_REDUCESCATTER,
                                             WEFT_BOUND_ALLREDUCE};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        weft_topo *t = make(specs[i]);
        for (int c = 0; t && c < 3; c++) {
            weft_bfb b;
            weft_bound bd;
            weft_diag d;
            CHECK_ERR(weft_bfb_analyze(t, colls[c], &b, &d), WEFT_OK);
            CHECK_ERR(weft_bound_compute(t, bcolls[c], NULL, &bd, &d), WEFT_OK);
            if (!weft_rat_eq(b.algbw_stepwise, bd.algbw))
                fprintf(stderr, "%s %s: bfb differs from the bound\n", specs[i],
                        weft_coll_name(colls[c]));
            CHECK(weft_rat_eq(b.algbw_stepwise, bd.algbw));
            weft_bound_fini(&bd);
        }
        weft_topo_free(t);
    }
    /* Exact figures: full:4 allgather 4 * 3 * 100 / 3 = 400 GB/s in one
     * step; hypercube:3 allreduce 6 steps, 8 * 300 / 7 / 2 = 1200/7. */
    weft_topo *t = make("full:4");
    weft_bfb b;
    CHECK_ERR(weft_bfb_analyze(t, WEFT_COLL_ALLGATHER, &b, NULL), WEFT_OK);
    CHECK_INT(b.steps, 1);
    CHECK(weft_rat_eq(b.algbw_stepwise, weft_rat_int(400)));
    weft_topo_free(t);
    t = make("hypercube:3");
    CHECK_ERR(weft_bfb_analyze(t, WEFT_COLL_ALLREDUCE, &b, NULL), WEFT_OK);
    CHECK_INT(b.steps, 6);
    weft_rat r;
    weft_rat_make(1200, 7, &r);
    CHECK(weft_rat_eq(b.algbw_stepwise, r));
    weft_topo_free(t);
    /* Not optimal: the Kautz graph K(2,2) = line(full:3) takes 1 + 2 shard
     * times where the bound needs 5/2: 6 * 100 / 3 = 200 < 240 GB/s. */
    t = make("line(full:3)");
    CHECK_ERR(weft_bfb_analyze(t, WEFT_COLL_ALLGATHER, &b, NULL), WEFT_OK);
    CHECK(weft_rat_eq(b.algbw_stepwise, weft_rat_int(200)));
    weft_topo_free(t);
}

static void test_errors(void)
{
    weft_diag d;
    weft_plan *p = NULL;
    weft_bfb b;
    weft_topo *t = make("switch:4");
    CHECK_ERR(weft_synth_bfb(t, WEFT_COLL_ALLGATHER, 0, &p, &b, &d), WEFT_ETOPO);
    CHECK_STR(d.msg, "bfb needs ranks joined directly, but 'sw0' is a switch (BFB schedules "
                     "direct-connect fabrics: no switches)");
    weft_topo_free(t);
    t = make("full:4");
    CHECK_ERR(weft_synth_bfb(t, WEFT_COLL_BROADCAST, 0, &p, &b, &d), WEFT_EUNSUPPORTED);
    CHECK_STR(d.msg, "algorithm 'bfb' does not build broadcast (it builds: allgather, "
                     "reducescatter, allreduce)");
    /* The op limit. */
    CHECK_ERR(weft_synth_bfb(t, WEFT_COLL_ALLGATHER, 5, &p, &b, &d), WEFT_ELIMIT);
    CHECK_STR(d.msg, "bfb allgather on 4 ranks has more than 5 ops (the limit)");
    weft_topo_free(t);
    t = parse("node a compute\nnode b compute\nnode c compute\nlink a b 1GB/s\n"
              "link b a 1GB/s\nlink b c 1GB/s\n");
    if (t) {
        CHECK_ERR(weft_bfb_analyze(t, WEFT_COLL_ALLGATHER, &b, &d), WEFT_ETOPO);
        CHECK_STR(d.msg, "bfb: rank 2 cannot reach rank 0 on this fabric");
    }
    weft_topo_free(t);
    CHECK(p == NULL);
}

typedef struct oom_arg {
    weft_topo *t;
    weft_plan *p;
} oom_arg;

static weft_err ctor(void *arg)
{
    oom_arg *a = arg;
    weft_bfb b;
    return weft_synth_bfb(a->t, WEFT_COLL_ALLREDUCE, 0, &a->p, &b, NULL);
}

static void dtor(void *arg)
{
    oom_arg *a = arg;
    weft_plan_free(a->p);
    a->p = NULL;
}

static weft_err ctor_analyze(void *arg)
{
    oom_arg *a = arg;
    weft_bfb b;
    return weft_bfb_analyze(a->t, WEFT_COLL_ALLREDUCE, &b, NULL);
}

static void dtor_none(void *arg)
{
    (void)arg;
}

static void test_oom(void)
{
    oom_arg a = {make("genkautz:8,3"), NULL};
    CHECK(weft_test_oom_sweep("bfb allreduce genkautz:8,3", ctor, dtor, &a) > 10);
    CHECK(weft_test_oom_sweep("bfb analyze genkautz:8,3", ctor_analyze, dtor_none, &a) > 5);
    weft_topo_free(a.t);
}

int main(void)
{
    test_independent();
    test_optimal();
    test_errors();
    test_oom();
    return weft_test_done();
}
