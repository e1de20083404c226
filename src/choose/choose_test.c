/* weft_choose (weft/choose.h): on switch:4 at 1 MiB it ranks what
 * `weft sim --compare` prints (hd first at 195.729 us, hd, rabenseifner and
 * optimal equal), each time is weft_sim_plan's of the candidate's plan, the
 * baselines leave optimal out, an explicit list is kept in order with the
 * reasons of those that do not build (a list of any length); weft_topo_subset
 * keeps a group's ranks and refuses bad groups with the errors it names; and
 * a forced nccl candidate runs what a dev-set fixture's `nccl` line runs,
 * on the channels NCCL launches at the size (fewer at 256 KiB: slower). */
#include <stdio.h>
#include <string.h>

#include "base/testing.h"
#include "weft/choose.h"
#include "weft/threads.h"

static weft_topo *preset(const char *spec)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_preset(spec, &t, &d), WEFT_OK);
    return t;
}

static const weft_choice *find(const weft_ranking *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->c[i].name, name) == 0)
            return &r->c[i];
    return NULL;
}

static void test_rank(void)
{
    weft_topo *t = preset("switch:4");
    weft_choose_opts o;
    weft_choose_opts_init(&o, t);
    uint64_t size = 1048576;
    weft_ranking r;
    weft_diag d;
    CHECK_ERR(weft_choose(t, WEFT_COLL_ALLREDUCE, &size, 1, &o, &r, &d), WEFT_OK);
    const weft_choice *best = weft_ranking_best(&r, 0);
    CHECK(best != NULL);
    CHECK_STR(best->name, "hd");
    /* weft sim switch:4 --coll allreduce --compare --size 1M: 195.729 us. */
    CHECK_REL(best->res[0].time_s, 195.72864e-6, 1e-9); /* printed 195.729 us */
    const weft_choice *opt = find(&r, "optimal");
    CHECK(opt && opt->res && opt->res[0].time_s == best->res[0].time_s);
    size_t idx[64];
    size_t m = weft_ranking_order(&r, 0, idx);
    CHECK_INT(m, r.simulated);
    CHECK_STR(r.c[idx[0]].name, "hd");
    for (size_t k = 1; k < m; k++)
        CHECK(r.c[idx[k - 1]].res[0].time_s <= r.c[idx[k]].res[0].time_s);
    /* Each time is the simulator's for that plan. */
    weft_plan *p = NULL;
    CHECK_ERR(weft_choose_build(t, "dbtree", WEFT_COLL_ALLREDUCE, (weft_rank){0}, 0, NULL, NULL, &p,
                                NULL, &d),
              WEFT_OK);
    weft_sim_result sr;
    CHECK_ERR(weft_sim_plan(t, p, size, &o.sim, &sr, &d), WEFT_OK);
    const weft_choice *db = find(&r, "dbtree");
    CHECK(db && db->res && db->res[0].time_s == sr.time_s);
    weft_plan_free(p);
    weft_ranking_fini(&r);

    /* Baselines: no optimal. */
    o.baselines = true;
    CHECK_ERR(weft_choose(t, WEFT_COLL_ALLREDUCE, &size, 1, &o, &r, &d), WEFT_OK);
    CHECK(find(&r, "optimal") == NULL);
    CHECK_STR(weft_ranking_best(&r, 0)->name, "hd");
    weft_ranking_fini(&r);

    /* An explicit list, in order; hier needs boxes, with the builder's
     * reason kept. */
    static const char *const names[] = {"ring", "hier", "nope"};
    o.baselines = false;
    o.names = names;
    o.n_names = 3;
    CHECK_ERR(weft_choose(t, WEFT_COLL_ALLREDUCE, &size, 1, &o, &r, &d), WEFT_OK);
    CHECK_INT(r.n, 3);
    CHECK_INT(r.simulated, 1);
    CHECK_STR(r.c[0].name, "ring");
    CHECK(r.c[1].res == NULL && !r.c[1].built && r.c[1].why[0]);
    CHECK_STR(r.c[2].why, "unknown algorithm 'nope' (weft plan --list lists them)");
    weft_ranking_fini(&r);

    /* A list of more than 64 names is ranked whole (the 65th and 70th
     * too): 68 rings (one simulation, shared), then hd and dbtree. */
    const char *many[70];
    for (size_t i = 0; i < 70; i++)
        many[i] = i == 64 ? "hd" : i == 69 ? "dbtree" : "ring";
    o.names = many;
    o.n_names = 70;
    CHECK_ERR(weft_choose(t, WEFT_COLL_ALLREDUCE, &size, 1, &o, &r, &d), WEFT_OK);
    CHECK_INT(r.n, 70);
    CHECK_INT(r.simulated, 70);
    CHECK_STR(r.c[64].name, "hd");
    CHECK_STR(r.c[69].name, "dbtree");
    CHECK(r.c[64].res && r.c[69].res && r.c[63].res);
    CHECK(r.c[64].res[0].time_s != r.c[63].res[0].time_s);
    weft_ranking_fini(&r);
    /* A name too long for a choice is refused, not cut. */
    many[66] = "rings:1234567890123456789012345678";
    CHECK_ERR(weft_choose(t, WEFT_COLL_ALLREDUCE, &size, 1, &o, &r, &d), WEFT_EINVAL);
    CHECK_STR(d.msg,
              "choose: candidate 67, 'rings:1234567890123456789012345678', is longer than 31 "
              "characters");
    CHECK(r.c == NULL && r.n == 0);
    o.names = names;
    o.n_names = 3;

    CHECK_ERR(weft_choose(t, WEFT_COLL_ALLREDUCE, &size, 0, &o, &r, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "choose: no size to rank at");
    weft_topo_free(t);
}

static void test_subset(void)
{
    weft_topo *t = preset("a100:2");
    weft_topo *s = NULL;
    weft_diag d;
    uint32_t box1[] = {8, 9, 10, 11, 12, 13, 14, 15};
    CHECK_ERR(weft_topo_subset(t, box1, 8, &s, &d), WEFT_OK);
    CHECK_INT(weft_topo_num_ranks(s), 8);
    CHECK_STR(weft_topo_node_name(s, weft_topo_rank_node(s, (weft_rank){0})),
              weft_topo_node_name(t, weft_topo_rank_node(t, (weft_rank){8})));
    /* Every switch and NIC stays: 8 GPUs fewer, and their links. */
    CHECK_INT(weft_topo_num_nodes(s), weft_topo_num_nodes(t) - 8);
    weft_topo_free(s);
    uint32_t all[16];
    for (uint32_t i = 0; i < 16; i++)
        all[i] = i;
    CHECK_ERR(weft_topo_subset(t, all, 16, &s, &d), WEFT_OK);
    CHECK(weft_topo_equal(s, t));
    weft_topo_free(s);
    uint32_t twice[] = {1, 1};
    CHECK_ERR(weft_topo_subset(t, twice, 2, &s, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "subset: rank 1 given twice");
    uint32_t out[] = {16};
    CHECK_ERR(weft_topo_subset(t, out, 1, &s, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "subset: rank 16 of a fabric of 16 ranks");
    CHECK(s == NULL);
    weft_topo_free(t);

    /* On a torus the other ranks forward: ranks 0 and 2 of a row of
     * torus:4x4 are cut apart without ranks 1 and 3, so every other rank
     * stays, as a switch, and a ring runs between the two. */
    t = preset("torus:4x4");
    uint32_t apart[] = {0, 2};
    CHECK_ERR(weft_topo_subset(t, apart, 2, &s, &d), WEFT_OK);
    CHECK_INT(weft_topo_num_ranks(s), 2);
    CHECK_INT(weft_topo_num_nodes(s), weft_topo_num_nodes(t));
    CHECK_INT(weft_topo_num_links(s), weft_topo_num_links(t));
    CHECK_STR(weft_topo_node_name(s, weft_topo_rank_node(s, (weft_rank){1})),
              weft_topo_node_name(t, weft_topo_rank_node(t, (weft_rank){2})));
    weft_node_id one;
    CHECK(weft_topo_find_node(s, weft_topo_node_name(t, weft_topo_rank_node(t, (weft_rank){1})),
                              &one));
    CHECK_INT(weft_topo_node_kind(s, one), WEFT_NODE_SWITCH);
    weft_choose_opts o;
    weft_choose_opts_init(&o, s);
    static const char *const ring[] = {"ring"};
    o.names = ring;
    o.n_names = 1;
    uint64_t size = 1048576;
    weft_ranking r;
    CHECK_ERR(weft_choose(s, WEFT_COLL_ALLREDUCE, &size, 1, &o, &r, &d), WEFT_OK);
    CHECK(r.simulated == 1 && r.c[0].res && r.c[0].res[0].time_s > 0);
    weft_ranking_fini(&r);
    weft_topo_free(s);
    /* Neighbours need no other rank: the plain subset. */
    uint32_t row[] = {0, 1};
    CHECK_ERR(weft_topo_subset(t, row, 2, &s, &d), WEFT_OK);
    CHECK_INT(weft_topo_num_nodes(s), 2);
    weft_topo_free(s);
    weft_topo_free(t);
}

/* A forced nccl candidate (weft_candidate_force, weft sim --algo nccl
 * --nccl-algo tree --nccl-proto simple --nccl-buffsize 8388608) runs
 * exactly what the development set runs for a fixture's `nccl tree simple`
 * and `buffsize 8388608` lines (src/sim/devset_test.c): the tree of
 * weft_synth_nccl_algo, its step NCCL_BUFFSIZE / 8, simulated with Simple;
 * the same time to the bit. A forced ring with LL128 likewise. */
static void test_forced(void)
{
    static const struct {
        const char *spec;
        weft_nccl_algo algo;
        weft_proto proto;
        uint64_t buffsize, size;
    } cases[] = {
        {"h100:2,nicbw=25", WEFT_NCCL_TREE, WEFT_PROTO_SIMPLE, 8388608, 64ull << 20},
        {"h100:2,nicbw=25", WEFT_NCCL_TREE, WEFT_PROTO_SIMPLE, 0, 16ull << 20},
        {"a100:1", WEFT_NCCL_RING, WEFT_PROTO_LL128, 0, 2ull << 20},
        /* NCCL's tree with Simple at 256 KiB runs 8 of its 16 channels
         * (64 x 512 = 32 KiB a channel): half the bandwidth. */
        {"h100:2,nicbw=25", WEFT_NCCL_TREE, WEFT_PROTO_SIMPLE, 8388608, 256ull << 10},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        weft_topo *t = preset(cases[i].spec);
        if (!t)
            continue;
        weft_diag d;
        weft_sim_opts o;
        weft_sim_opts_init(&o);
        o.model = WEFT_SIM_GPU;
        weft_candidate a;
        weft_sim_result got, want;
        CHECK_ERR(weft_candidate_build(&a, t, "nccl", WEFT_COLL_ALLREDUCE, false, 0, NULL, &d),
                  WEFT_OK);
        CHECK_ERR(weft_candidate_force(&a, (int)cases[i].algo, (int)cases[i].proto,
                                       cases[i].buffsize, &d),
                  WEFT_OK);
        CHECK_ERR(weft_candidate_run(&a, t, cases[i].size, &o, &got, &d), WEFT_OK);
        char label[64];
        weft_candidate_label(&a, cases[i].size, label, sizeof label);
        CHECK_STR(label, cases[i].algo == WEFT_NCCL_TREE ? "nccl (tree, Simple, dbtree)"
                                                         : "nccl (ring, LL128, rings:28)");
        weft_candidate_fini(&a);
        /* The fixture line's path. */
        weft_plan *p = NULL;
        CHECK_ERR(weft_synth_nccl_algo(t, WEFT_COLL_ALLREDUCE, cases[i].algo, 0, &p, &d), WEFT_OK);
        if (p && cases[i].buffsize) {
            double gbps;
            CHECK(weft_plan_step_forward(p, &gbps) == WEFT_NCCL_SIMPLE_STEP);
            weft_plan_set_step_forward(p, WEFT_NCCL_STEP_OF(cases[i].buffsize), gbps);
        }
        o.proto = (int)cases[i].proto;
        weft_sim_result all;
        CHECK_ERR(weft_sim_plan(t, p, cases[i].size, &o, &all, &d), WEFT_OK);
        /* On the channels NCCL launches at the size, as devset_test. */
        weft_nccl_fabric f;
        CHECK_ERR(weft_nccl_fabric_get(t, &f, &d), WEFT_OK);
        o.chan_share = weft_nccl_channel_share(&f, WEFT_COLL_ALLREDUCE, cases[i].algo,
                                               cases[i].proto, (double)cases[i].size);
        CHECK(o.chan_share == (cases[i].size == 256ull << 10 ? 0.5 : 1.0));
        CHECK_ERR(weft_sim_plan(t, p, cases[i].size, &o, &want, &d), WEFT_OK);
        CHECK(got.time_s == want.time_s && got.time_s > 0);
        CHECK(o.chan_share == 1 ? all.time_s == got.time_s : all.time_s < got.time_s);
        CHECK_INT(got.proto, (int)cases[i].proto);
        printf("%s forced %s %s at %llu: %.9g s (fixture path %.9g s)\n", cases[i].spec,
               weft_nccl_algo_name(cases[i].algo), weft_proto_name(cases[i].proto),
               (unsigned long long)cases[i].size, got.time_s, want.time_s);
        weft_plan_free(p);
        weft_topo_free(t);
    }
    /* Only nccl is forced, and only to what weft models. */
    weft_topo *t = preset("switch:4");
    weft_candidate a;
    weft_diag d;
    CHECK_ERR(weft_candidate_build(&a, t, "hd", WEFT_COLL_ALLREDUCE, false, 0, NULL, &d), WEFT_OK);
    CHECK_ERR(weft_candidate_force(&a, WEFT_NCCL_RING, -1, 0, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "hd: only nccl's choice is forced");
    weft_candidate_fini(&a);
    CHECK_ERR(weft_candidate_build(&a, t, "nccl", WEFT_COLL_ALLREDUCE, false, 0, NULL, &d),
              WEFT_OK);
    CHECK_ERR(weft_candidate_force(&a, WEFT_NCCL_P2P, -1, 0, &d), WEFT_EINVAL);
    CHECK_ERR(weft_candidate_force(&a, -1, -1, 7, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "nccl: a buffer of 7 bytes has no 8 steps");
    weft_candidate_fini(&a);
    weft_topo_free(t);
}

/* A candidate that runs another's plan takes its result only under the
 * same settings: NCCL's allreduce on a100:1 at 64 KiB is the ring with LL
 * on rings:auto's plan (rings:28), but NCCL launches 2 of its 28 channels
 * there (weft_nccl_channel_share), so nccl is slower than rings:auto, and
 * exactly what the candidate runs alone (`weft sim --algo nccl`). Before,
 * nccl took rings:auto's result (23.493 us against 24.219). */
static void test_same_run_share(void)
{
    weft_topo *t = preset("a100:1");
    if (!t)
        return;
    weft_choose_opts o;
    weft_choose_opts_init(&o, t);
    static const char *const names[] = {"rings:auto", "nccl"};
    o.names = names;
    o.n_names = 2;
    uint64_t size = 65536;
    weft_ranking r;
    weft_diag d;
    CHECK_ERR(weft_choose(t, WEFT_COLL_ALLREDUCE, &size, 1, &o, &r, &d), WEFT_OK);
    const weft_choice *ra = find(&r, "rings:auto"), *nc = find(&r, "nccl");
    CHECK(ra && ra->res && nc && nc->res);
    weft_candidate a;
    weft_sim_result alone;
    CHECK_ERR(weft_candidate_build(&a, t, "nccl", WEFT_COLL_ALLREDUCE, false, 0, NULL, &d),
              WEFT_OK);
    CHECK_ERR(weft_candidate_run(&a, t, size, &o.sim, &alone, &d), WEFT_OK);
    weft_candidate_fini(&a);
    if (ra && ra->res && nc && nc->res) {
        CHECK(nc->res[0].time_s == alone.time_s);
        CHECK(nc->res[0].time_s > ra->res[0].time_s);
        CHECK_REL(nc->res[0].time_s, 24.219e-6, 1e-4); /* printed 24.219 us */
    }
    weft_ranking_fini(&r);
    weft_topo_free(t);
}

/* The progress lines that say a candidate took another's run, joined. */
typedef struct reuse_log {
    char text[1024];
} reuse_log;

static void log_reuse(void *arg, const char *what)
{
    reuse_log *l = arg;
    if (strstr(what, "is the run of"))
        snprintf(l->text + strlen(l->text), sizeof l->text - strlen(l->text), "%s;", what);
}

/* The same lines in a and b, in any order (threads print them as they
 * come); a's are distinct. */
static void same_reuse(const reuse_log *a, const reuse_log *b)
{
    CHECK_INT(strlen(a->text), strlen(b->text));
    for (const char *p = a->text; *p;) {
        const char *e = strchr(p, ';');
        char line[256];
        snprintf(line, sizeof line, "%.*s;", (int)(e - p), p);
        CHECK(strstr(b->text, line) != NULL);
        p = e + 1;
    }
}

/* The candidates run at once (weft_choose on threads): at 1, 3 and 8
 * threads the same ranking to the bit, the same labels and reasons, and
 * the same runs taken from earlier candidates (the allreduce of a100:2 at
 * 1 MiB and 1 GiB in the gpu model: rabenseifner is hd's run at both,
 * nccl rings:auto's at 1 GiB, as tests/cli/sim_progress.sh sees them one
 * after another); and an
 * alltoallv of a matrix on switch:4 likewise. */
static void test_threads(void)
{
    weft_topo *t = preset("a100:2");
    if (!t)
        return;
    uint64_t sizes[2] = {1048576, 1073741824};
    weft_traffic m;
    CHECK_ERR(weft_traffic_new(16, &m, NULL), WEFT_OK);
    for (uint32_t i = 0; i < 16; i++)
        for (uint32_t j = 0; j < 16; j++)
            m.bytes[i * 16 + j] = i == j ? 0 : 65536 * (1 + (3 * i + 5 * j) % 13);
    for (int mat = 0; mat < 2; mat++) {
        weft_ranking want;
        memset(&want, 0, sizeof want);
        reuse_log first;
        for (unsigned th = 1; th <= 8; th += th == 1 ? 2 : 5) {
            CHECK_ERR(weft_threads_set(th), WEFT_OK);
            weft_choose_opts o;
            weft_choose_opts_init(&o, t);
            reuse_log l;
            memset(&l, 0, sizeof l);
            o.progress = log_reuse;
            o.progress_arg = &l;
            o.matrix = mat ? &m : NULL;
            weft_ranking r;
            weft_diag d;
            CHECK_ERR(weft_choose(t, mat ? WEFT_COLL_ALLTOALL : WEFT_COLL_ALLREDUCE, sizes,
                                  mat ? 1 : 2, &o, &r, &d),
                      WEFT_OK);
            if (th == 1) {
                want = r;
                first = l;
                CHECK(r.n >= 5 && r.simulated >= 4);
                if (!mat)
                    CHECK_STR(l.text,
                              "rabenseifner at 1048576 (1M) (7 of 11) is the run of hd;"
                              "rabenseifner at 1073741824 (1G) (7 of 11) is the run of hd;"
                              "nccl at 1073741824 (1G) (10 of 11) is the run of rings:auto;");
                continue;
            }
            same_reuse(&l, &first);
            CHECK_INT(r.n, want.n);
            CHECK_INT(r.simulated, want.simulated);
            for (size_t i = 0; i < r.n && i < want.n; i++) {
                const weft_choice *x = &r.c[i], *y = &want.c[i];
                CHECK_STR(x->name, y->name);
                CHECK_STR(x->why, y->why);
                CHECK_INT(x->built, y->built);
                CHECK_INT(x->innet, y->innet);
                CHECK(!x->res == !y->res);
                for (size_t s = 0; x->res && y->res && s < r.nsizes; s++) {
                    CHECK(x->res[s].time_s == y->res[s].time_s);
                    CHECK(x->res[s].algbw_gbps == y->res[s].algbw_gbps);
                    CHECK_INT(x->res[s].events, y->res[s].events);
                    CHECK_INT(x->res[s].proto, y->res[s].proto);
                    CHECK_STR(x->label[s], y->label[s]);
                }
            }
            weft_ranking_fini(&r);
        }
        weft_ranking_fini(&want);
    }
    CHECK_ERR(weft_threads_set(0), WEFT_OK);
    weft_traffic_free(&m);
    weft_topo_free(t);
}

int main(void)
{
    test_threads();
    test_rank();
    test_same_run_share();
    test_subset();
    test_forced();
    return weft_test_done();
}
